//! The one conversion from CUDA device attributes to kerntune's `Limits`.

use kerntune_core::Limits;

/// The device attributes the conversion reads (a subset of `CUdevice_attribute`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Attr {
    /// `MAX_THREADS_PER_BLOCK`
    MaxThreadsPerBlock,
    /// `MAX_BLOCK_DIM_X`
    MaxBlockDimX,
    /// `MAX_BLOCK_DIM_Y`
    MaxBlockDimY,
    /// `MAX_BLOCK_DIM_Z`
    MaxBlockDimZ,
    /// `MAX_GRID_DIM_X`
    MaxGridDimX,
    /// `MAX_GRID_DIM_Y`
    MaxGridDimY,
    /// `MAX_GRID_DIM_Z`
    MaxGridDimZ,
    /// `WARP_SIZE`
    WarpSize,
    /// `MAX_SHARED_MEMORY_PER_BLOCK`
    SharedPerBlock,
    /// `MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`
    SharedPerBlockOptin,
    /// `MAX_SHARED_MEMORY_PER_MULTIPROCESSOR`
    SharedPerSm,
    /// `MAX_REGISTERS_PER_MULTIPROCESSOR`
    RegistersPerSm,
    /// `MAX_REGISTERS_PER_BLOCK`
    RegistersPerBlock,
    /// `MAX_BLOCKS_PER_MULTIPROCESSOR`
    MaxBlocksPerSm,
    /// `MAX_THREADS_PER_MULTIPROCESSOR`
    MaxThreadsPerSm,
    /// `MULTIPROCESSOR_COUNT`
    SmCount,
    /// `L2_CACHE_SIZE` (bytes)
    L2Bytes,
    /// `MEMORY_CLOCK_RATE` (kHz)
    MemoryClockKhz,
    /// `GLOBAL_MEMORY_BUS_WIDTH` (bits)
    BusWidthBits,
    /// `CLOCK_RATE` (kHz)
    ClockKhz,
    /// `COMPUTE_CAPABILITY_MAJOR`
    CcMajor,
    /// `COMPUTE_CAPABILITY_MINOR`
    CcMinor,
}

/// Every attribute read, in a stable order (for recording tables).
pub const ATTRS: &[Attr] = &[
    Attr::MaxThreadsPerBlock,
    Attr::MaxBlockDimX,
    Attr::MaxBlockDimY,
    Attr::MaxBlockDimZ,
    Attr::MaxGridDimX,
    Attr::MaxGridDimY,
    Attr::MaxGridDimZ,
    Attr::WarpSize,
    Attr::SharedPerBlock,
    Attr::SharedPerBlockOptin,
    Attr::SharedPerSm,
    Attr::RegistersPerSm,
    Attr::RegistersPerBlock,
    Attr::MaxBlocksPerSm,
    Attr::MaxThreadsPerSm,
    Attr::SmCount,
    Attr::L2Bytes,
    Attr::MemoryClockKhz,
    Attr::BusWidthBits,
    Attr::ClockKhz,
    Attr::CcMajor,
    Attr::CcMinor,
];

/// FP32 lanes per SM by compute capability (the CUDA programming guide's throughput table).
fn fp32_lanes(major: i32, minor: i32) -> Option<f64> {
    Some(match (major, minor) {
        (7, _) => 64.0,
        (8, 0) => 64.0,
        (8, _) => 128.0,
        (9, 0) => 128.0,
        (10, _) | (12, _) => 128.0,
        _ => return None,
    })
}

/// Dense FP16 tensor-core FLOP per SM per clock by compute capability (the architecture
/// whitepapers' figures divided by SMs and boost clock: V100 125 TFLOP/s, A100 312, H100 989,
/// B200 2,250; Turing, GA10x, Ada and consumer Blackwell 1,024): the peak a half-precision
/// kernel on tensor cores is held to, where one at the FP32 peak would read as over 100 %.
fn tensor_f16_flops(major: i32, minor: i32) -> Option<f64> {
    Some(match (major, minor) {
        (7, _) | (8, 6..=9) | (12, _) => 1024.0,
        (8, 0) => 2048.0,
        (9, 0) => 4096.0,
        (10, _) => 8192.0,
        _ => return None,
    })
}

/// `sm_XY` for a compute capability.
pub fn arch_name(major: i32, minor: i32) -> String {
    format!("sm_{major}{minor}")
}

/// Fills [`Limits`] from device attributes. `get` returns `None` for an attribute the driver
/// does not report (CUDA 13 dropped the clock-rate attributes on some builds); the fields that
/// need it are then `None`.
pub fn limits_from_attributes(get: &dyn Fn(Attr) -> Option<i64>) -> Limits {
    let g = |a: Attr, default: i64| get(a).unwrap_or(default);
    let u = |a: Attr| get(a).map(|v| v.max(0) as u32);
    let warp = g(Attr::WarpSize, 32).max(1) as u32;
    let sms = g(Attr::SmCount, 1).max(1) as u32;
    let bandwidth = match (get(Attr::MemoryClockKhz), get(Attr::BusWidthBits)) {
        // Double data rate: two transfers per clock.
        (Some(khz), Some(bits)) if khz > 0 && bits > 0 => Some(2.0 * khz as f64 * 1e3 * bits as f64 / 8.0),
        _ => None,
    };
    let per_clock = |per_sm: fn(i32, i32) -> Option<f64>| match (get(Attr::ClockKhz), get(Attr::CcMajor), get(Attr::CcMinor)) {
        (Some(khz), Some(ma), Some(mi)) if khz > 0 => per_sm(ma as i32, mi as i32).map(|f| f * sms as f64 * khz as f64 * 1e3),
        _ => None,
    };
    // Two FLOP (a fused multiply-add) per lane per clock.
    let peak_f32 = per_clock(|ma, mi| fp32_lanes(ma, mi).map(|l| 2.0 * l));
    let peak_f16 = per_clock(tensor_f16_flops);
    let shared_default = g(Attr::SharedPerBlock, 48 * 1024) as u64;
    Limits {
        max_threads_per_block: g(Attr::MaxThreadsPerBlock, 1024) as u32,
        max_block_dim: [g(Attr::MaxBlockDimX, 1024) as u32, g(Attr::MaxBlockDimY, 1024) as u32, g(Attr::MaxBlockDimZ, 64) as u32],
        max_grid_dim: [g(Attr::MaxGridDimX, i32::MAX as i64) as u32, g(Attr::MaxGridDimY, 65535) as u32, g(Attr::MaxGridDimZ, 65535) as u32],
        warp_size: warp,
        shared_mem_per_block: shared_default,
        shared_mem_per_block_optin: get(Attr::SharedPerBlockOptin).map(|v| v as u64).unwrap_or(shared_default),
        shared_mem_per_sm: get(Attr::SharedPerSm).map(|v| v as u64).unwrap_or(shared_default),
        registers_per_sm: u(Attr::RegistersPerSm),
        registers_per_block: u(Attr::RegistersPerBlock),
        max_registers_per_thread: Some(255),
        max_blocks_per_sm: u(Attr::MaxBlocksPerSm),
        max_warps_per_sm: get(Attr::MaxThreadsPerSm).map(|t| (t as u32) / warp),
        sm_count: sms,
        l2_bytes: get(Attr::L2Bytes).map(|v| v as u64),
        memory_bandwidth: bandwidth,
        peak_flops_f32: peak_f32,
        peak_flops_f16: peak_f16,
        // Filled from cuDeviceTotalMem by the device query (not an attribute).
        global_mem_bytes: None,
        max_buffer_bytes: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Attribute values read from an NVIDIA H100 80GB HBM3 (driver 580, CUDA 13).
    fn h100() -> HashMap<Attr, i64> {
        use Attr::*;
        [
            (MaxThreadsPerBlock, 1024),
            (MaxBlockDimX, 1024),
            (MaxBlockDimY, 1024),
            (MaxBlockDimZ, 64),
            (MaxGridDimX, 2147483647),
            (MaxGridDimY, 65535),
            (MaxGridDimZ, 65535),
            (WarpSize, 32),
            (SharedPerBlock, 49152),
            (SharedPerBlockOptin, 232448),
            (SharedPerSm, 233472),
            (RegistersPerSm, 65536),
            (RegistersPerBlock, 65536),
            (MaxBlocksPerSm, 32),
            (MaxThreadsPerSm, 2048),
            (SmCount, 132),
            (L2Bytes, 52428800),
            (MemoryClockKhz, 2619000),
            (BusWidthBits, 5120),
            (ClockKhz, 1980000),
            (CcMajor, 9),
            (CcMinor, 0),
        ]
        .into_iter()
        .collect()
    }

    #[test]
    fn h100_attributes_map_to_limits() {
        let t = h100();
        let l = limits_from_attributes(&|a| t.get(&a).copied());
        assert_eq!(l.max_threads_per_block, 1024);
        assert_eq!(l.max_block_dim, [1024, 1024, 64]);
        assert_eq!(l.warp_size, 32);
        assert_eq!(l.shared_mem_per_block, 49152);
        assert_eq!(l.shared_mem_per_block_optin, 232448);
        assert_eq!(l.shared_mem_per_sm, 233472);
        assert_eq!(l.registers_per_sm, Some(65536));
        assert_eq!(l.max_blocks_per_sm, Some(32));
        assert_eq!(l.max_warps_per_sm, Some(64));
        assert_eq!(l.sm_count, 132);
        assert_eq!(l.l2_bytes, Some(52428800));
        // 2 × 2.619 GHz × 640 B = 3.35 TB/s, the H100 SXM's published bandwidth.
        assert!((l.memory_bandwidth.unwrap() - 3.352e12).abs() < 1e10);
        // 132 SMs × 128 lanes × 2 × 1.98 GHz = 66.9 TFLOP/s.
        assert!((l.peak_flops_f32.unwrap() - 66.9e12).abs() < 0.1e12);
        // 132 SMs × 4096 × 1.98 GHz = 1,070 TFLOP/s (989 published, at the tensor boost clock).
        assert!((l.peak_flops_f16.unwrap() - 1070.5e12).abs() < 0.1e12);
        assert_eq!(arch_name(9, 0), "sm_90");
    }

    #[test]
    fn missing_clock_attributes_leave_rates_unknown() {
        let mut t = h100();
        t.remove(&Attr::MemoryClockKhz);
        t.remove(&Attr::ClockKhz);
        let l = limits_from_attributes(&|a| t.get(&a).copied());
        assert_eq!(l.memory_bandwidth, None);
        assert_eq!((l.peak_flops_f32, l.peak_flops_f16), (None, None));
        assert_eq!(l.sm_count, 132);
    }
}
