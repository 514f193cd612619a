//! The one conversion from HIP device attributes to kerntune's `Limits`.

use kerntune_core::Limits;

/// Attribute values this conversion reads (names follow `hipDeviceAttribute_t`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Attributes {
    /// `MaxThreadsPerBlock`.
    pub max_threads_per_block: i64,
    /// `MaxBlockDimX/Y/Z`.
    pub max_block_dim: [i64; 3],
    /// `MaxGridDimX/Y/Z`.
    pub max_grid_dim: [i64; 3],
    /// `WarpSize` (wavefront: 64 on CDNA, 32 on RDNA).
    pub warp_size: i64,
    /// `MaxSharedMemoryPerBlock` (LDS per workgroup).
    pub shared_per_block: i64,
    /// `MaxSharedMemoryPerMultiprocessor`.
    pub shared_per_cu: i64,
    /// `MaxRegistersPerBlock`.
    pub registers_per_block: i64,
    /// `MaxThreadsPerMultiProcessor`.
    pub max_threads_per_cu: i64,
    /// `MultiprocessorCount` (compute units).
    pub cu_count: i64,
    /// `L2CacheSize`.
    pub l2_bytes: i64,
    /// `MemoryClockRate` (kHz).
    pub memory_clock_khz: i64,
    /// `MemoryBusWidth` (bits).
    pub bus_width_bits: i64,
    /// `ClockRate` (kHz).
    pub clock_khz: i64,
    /// `gcnArchName`, e.g. `gfx942:sramecc+:xnack-`.
    pub arch_name: String,
    /// `hipDeviceTotalMem`, bytes (0 when not reported).
    pub total_mem_bytes: i64,
}

/// The architecture without feature flags: `gfx942:sramecc+:xnack-` → `gfx942`.
pub fn arch(name: &str) -> String {
    name.split(':').next().unwrap_or(name).to_string()
}

/// Fills [`Limits`] from HIP attributes. Registers per CU are 512 VGPRs × lanes per SIMD × 4
/// SIMDs on CDNA (2 SIMD32 × 1536 on RDNA3); HIP does not report them, so they come from the
/// architecture. Peak FP32 = CUs × 64 lanes × 2 (FMA) × clock (× 2 dual-issue on RDNA3).
pub fn limits_from_attributes(a: &Attributes) -> Limits {
    let arch = arch(&a.arch_name);
    let rdna = arch.starts_with("gfx11") || arch.starts_with("gfx10");
    let warp = a.warp_size.max(1) as u32;
    let regs_per_cu: u32 = if rdna { 2 * 1536 * 32 } else { 4 * 512 * 64 };
    let bw = (a.memory_clock_khz > 0 && a.bus_width_bits > 0).then_some(2.0 * a.memory_clock_khz as f64 * 1e3 * a.bus_width_bits as f64 / 8.0);
    let f32 = (a.clock_khz > 0).then_some(a.cu_count as f64 * 64.0 * 2.0 * a.clock_khz as f64 * 1e3 * if rdna { 2.0 } else { 1.0 });
    let lds = a.shared_per_block.max(0) as u64;
    Limits {
        max_threads_per_block: a.max_threads_per_block as u32,
        max_block_dim: a.max_block_dim.map(|v| v as u32),
        max_grid_dim: a.max_grid_dim.map(|v| v.clamp(0, u32::MAX as i64) as u32),
        warp_size: warp,
        shared_mem_per_block: lds,
        shared_mem_per_block_optin: lds,
        shared_mem_per_sm: if a.shared_per_cu > 0 { a.shared_per_cu as u64 } else { lds },
        registers_per_sm: Some(regs_per_cu),
        registers_per_block: (a.registers_per_block > 0).then_some(a.registers_per_block as u32),
        max_registers_per_thread: Some(if rdna { 256 } else { 512 }),
        max_blocks_per_sm: Some(32),
        max_warps_per_sm: (a.max_threads_per_cu > 0).then(|| a.max_threads_per_cu as u32 / warp),
        sm_count: a.cu_count.max(1) as u32,
        l2_bytes: (a.l2_bytes > 0).then_some(a.l2_bytes as u64),
        memory_bandwidth: bw,
        peak_flops_f32: f32,
        peak_flops_f16: None,
        global_mem_bytes: (a.total_mem_bytes > 0).then_some(a.total_mem_bytes as u64),
        max_buffer_bytes: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(arch: &str, cus: i64, warp: i64, l2: i64, mclk: i64, bus: i64, clk: i64) -> Attributes {
        Attributes {
            max_threads_per_block: 1024,
            max_block_dim: [1024, 1024, 1024],
            max_grid_dim: [2147483647, 2147483647, 2147483647],
            warp_size: warp,
            shared_per_block: 65536,
            shared_per_cu: 65536,
            registers_per_block: 65536,
            max_threads_per_cu: 2048,
            cu_count: cus,
            l2_bytes: l2,
            memory_clock_khz: mclk,
            bus_width_bits: bus,
            clock_khz: clk,
            arch_name: arch.into(),
            total_mem_bytes: 64 << 30,
        }
    }

    /// Attribute values as `rocminfo`/`hipDeviceGetAttribute` report them on these parts
    /// (MI250X per GCD, MI300X, RX 7900 XTX).
    #[test]
    fn recorded_tables_map_to_limits() {
        let mi250x = limits_from_attributes(&table("gfx90a:sramecc+:xnack-", 110, 64, 8388608, 1600000, 4096, 1700000));
        assert_eq!(mi250x.warp_size, 64);
        assert_eq!(mi250x.sm_count, 110);
        assert_eq!(mi250x.shared_mem_per_block_optin, 65536);
        assert_eq!(mi250x.max_warps_per_sm, Some(32));
        assert!((mi250x.memory_bandwidth.unwrap() - 1.6384e12).abs() < 1e10);
        assert!((mi250x.peak_flops_f32.unwrap() - 23.9e12).abs() < 0.1e12);
        let mi300x = limits_from_attributes(&table("gfx942:sramecc+:xnack-", 304, 64, 4194304, 2600000, 8192, 2100000));
        assert_eq!(mi300x.sm_count, 304);
        assert_eq!(mi300x.registers_per_sm, Some(131072));
        assert!((mi300x.memory_bandwidth.unwrap() - 5.3248e12).abs() < 1e10);
        assert!((mi300x.peak_flops_f32.unwrap() - 81.7e12).abs() < 0.1e12, "vector FP32, no packed math");
        let rdna3 = limits_from_attributes(&table("gfx1100", 96, 32, 6291456, 1250000, 384, 2500000));
        assert_eq!(rdna3.warp_size, 32);
        assert_eq!(rdna3.max_warps_per_sm, Some(64));
        assert_eq!(rdna3.registers_per_sm, Some(98304));
        // GDDR6 parts report their memory clock differently across ROCm releases, so only the
        // presence of a bandwidth figure is checked here.
        assert!(rdna3.memory_bandwidth.is_some());
        assert_eq!(arch("gfx942:sramecc+:xnack-"), "gfx942");
    }
}
