//! A kernel's resources read from its CUBIN, without loading it on the GPU.
//!
//! Loading a module into the tuner's own CUDA context to ask the driver for its attributes puts
//! work on a second context of the GPU the worker is timing, and the worker's kernels ran 1–3 %
//! slow while those loads went on (docs/benchmarks.md, "Cold tunes: the parent's module loads
//! slow the worker's kernels"). The same numbers are in the CUBIN's ELF sections, where ptxas
//! writes them:
//! - `.nv.info` holds, per function symbol, `EIATTR_REGCOUNT` (registers per thread) and
//!   `EIATTR_FRAME_SIZE` (the stack frame: local memory per thread, spills included);
//! - `.nv.info.<kernel>` holds `EIATTR_MAX_THREADS` (`__launch_bounds__`) or `EIATTR_REQNTID`;
//! - `.nv.shared.<kernel>` is the kernel's static shared memory; from sm_90 on, where the CUBIN
//!   has `.nv.shared.reserved.*` sections, it also counts the 1 KiB the hardware reserves per
//!   block, which the driver's `CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES` does not.
//!
//! Occupancy follows the driver's rules: registers are allocated per warp in units of 256,
//! warps limited by registers are rounded down to a multiple of 4 (the SM's sub-partitions), and
//! each block's shared memory is its static and dynamic memory plus the reserved 1 KiB (compute
//! capability 8.0 and later), rounded up to 128 bytes.
//!
//! Checked against the driver: for all 409 SGEMM configs (`benches/sgemm`) compiled for sm_90
//! by NVRTC 12.9, registers, local memory, static shared memory, the most threads per block and
//! resident blocks per SM equal what `cuFuncGetAttribute` and
//! `cuOccupancyMaxActiveBlocksPerMultiprocessor` reported for the same configs on an H100
//! (NVRTC 13); registers, frame and shared memory also agree with ptxas's own report (`-v`)
//! from sm_70 to sm_120. `KERNTUNE_CUDA_USAGE=driver` asks the driver instead.

use kerntune_core::{Limits, ResourceUsage};
use object::{Object, ObjectSection, ObjectSymbol};

const EIFMT_SVAL: u8 = 4;
const EIATTR_MAX_THREADS: u8 = 0x05;
const EIATTR_REQNTID: u8 = 0x10;
const EIATTR_FRAME_SIZE: u8 = 0x11;
const EIATTR_REGCOUNT: u8 = 0x2f;
/// Shared memory the hardware reserves per block from compute capability 8.0 on.
const RESERVED_SHARED: u64 = 1024;

/// What the CUBIN says about one kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CubinUsage {
    /// Registers per thread.
    pub registers: u32,
    /// Local memory (stack frame, spills included) per thread, bytes.
    pub local_bytes: u64,
    /// Static shared memory per block, bytes (without the reserved 1 KiB).
    pub static_shared_bytes: u64,
    /// The block size `__launch_bounds__` or `.reqntid` allows at most, if given.
    pub launch_bound: Option<u32>,
}

/// The attributes of `.nv.info` sections: (attribute, payload) of each value-carrying entry.
fn entries(data: &[u8]) -> Result<Vec<(u8, &[u8])>, String> {
    let mut out = Vec::new();
    let mut at = 0;
    while at + 4 <= data.len() {
        let (format, attr) = (data[at], data[at + 1]);
        if format == EIFMT_SVAL {
            let size = u16::from_le_bytes([data[at + 2], data[at + 3]]) as usize;
            let payload = data.get(at + 4..at + 4 + size).ok_or_else(|| format!("an .nv.info entry at byte {at} runs past its section"))?;
            out.push((attr, payload));
            at += 4 + size;
        } else {
            // EIFMT_NVAL, EIFMT_BVAL and EIFMT_HVAL: the value, if any, fits in the 4 bytes.
            at += 4;
        }
    }
    Ok(out)
}

fn u32_at(b: &[u8], i: usize) -> Option<u32> {
    b.get(i * 4..i * 4 + 4).map(|x| u32::from_le_bytes([x[0], x[1], x[2], x[3]]))
}

/// Reads `kernel`'s resources from a CUBIN. An error says what is missing; the caller can then
/// ask the driver instead.
/// Whether `cubin` is an ELF CUBIN holding the symbol `kernel`: what the compile cache checks
/// before it serves one (see [`kerntune_core::store::cache::binary`]).
pub fn readable(cubin: &[u8], kernel: &str) -> Result<(), String> {
    let file = object::File::parse(cubin).map_err(|e| format!("not an ELF CUBIN: {e}"))?;
    file.symbols().any(|s| s.name() == Ok(kernel)).then_some(()).ok_or_else(|| format!("no symbol `{kernel}` in the CUBIN"))
}

pub fn usage(cubin: &[u8], kernel: &str) -> Result<CubinUsage, String> {
    let file = object::File::parse(cubin).map_err(|e| format!("not an ELF CUBIN: {e}"))?;
    let symbol = file.symbols().find(|s| s.name() == Ok(kernel)).ok_or_else(|| format!("no symbol `{kernel}` in the CUBIN"))?.index().0 as u32;
    // A section's bytes, borrowed from `cubin`; none when the section is absent.
    let data = |name: &str| file.section_by_name(name).map_or(Ok(&[][..]), |s| s.data().map_err(|e| format!("reading {name}: {e}")));
    let (mut registers, mut frame) = (None, None);
    for (attr, p) in entries(data(".nv.info")?)? {
        if u32_at(p, 0) != Some(symbol) {
            continue;
        }
        match attr {
            EIATTR_REGCOUNT => registers = u32_at(p, 1),
            EIATTR_FRAME_SIZE => frame = u32_at(p, 1),
            _ => {}
        }
    }
    let registers = registers.ok_or_else(|| format!("no register count for `{kernel}` in .nv.info"))?;
    let launch_bound = entries(data(&format!(".nv.info.{kernel}"))?)?
        .into_iter()
        .filter(|(a, _)| matches!(*a, EIATTR_MAX_THREADS | EIATTR_REQNTID))
        .filter_map(|(_, p)| Some(u32_at(p, 0)?.saturating_mul(u32_at(p, 1)?).saturating_mul(u32_at(p, 2)?)))
        .min();
    let mut shared = file.section_by_name(&format!(".nv.shared.{kernel}")).map_or(0, |s| s.size());
    if file.sections().any(|s| s.name().is_ok_and(|n| n.starts_with(".nv.shared.reserved."))) {
        shared = shared.saturating_sub(RESERVED_SHARED);
    }
    Ok(CubinUsage { registers, local_bytes: frame.unwrap_or(0) as u64, static_shared_bytes: shared, launch_bound })
}

/// Resident blocks per SM for a block of `threads` threads with `dynamic_shared` bytes of dynamic
/// shared memory, on a device of compute capability `major`.x with `limits`, by the rules the
/// driver's occupancy calculator follows (see the module's documentation).
pub fn active_blocks_per_sm(u: &CubinUsage, threads: u32, dynamic_shared: u64, major: u32, limits: &Limits) -> Option<u32> {
    let warp = limits.warp_size.max(1);
    let warps = threads.div_ceil(warp).max(1);
    let mut blocks = limits.max_blocks_per_sm?;
    blocks = blocks.min(limits.max_warps_per_sm? / warps);
    if u.registers > 0 {
        let per_warp = (u.registers * warp).div_ceil(256) * 256;
        let warps_by_registers = (limits.registers_per_sm? / per_warp) / 4 * 4;
        blocks = blocks.min(warps_by_registers / warps);
    }
    let reserved = if major >= 8 { RESERVED_SHARED } else { 0 };
    let shared = (u.static_shared_bytes + dynamic_shared + reserved).div_ceil(128) * 128;
    if shared > 0 && limits.shared_mem_per_sm > 0 {
        blocks = blocks.min((limits.shared_mem_per_sm / shared).min(u32::MAX as u64) as u32);
    }
    Some(blocks)
}

/// [`ResourceUsage`] from the CUBIN: the launch bound as the most threads per block (a block
/// too large for the registers is caught by the registers check), occupancy by
/// [`active_blocks_per_sm`].
pub fn resource_usage(u: &CubinUsage, threads: u32, dynamic_shared: u64, major: u32, limits: &Limits) -> ResourceUsage {
    ResourceUsage {
        registers: Some(u.registers),
        static_shared_bytes: Some(u.static_shared_bytes),
        local_bytes: Some(u.local_bytes),
        max_threads_per_block: u.launch_bound.map(|b| b.min(limits.max_threads_per_block.max(1))),
        active_blocks_per_sm: active_blocks_per_sm(u, threads, dynamic_shared, major, limits),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_walk_values_and_stop_at_a_truncated_one() {
        // REGCOUNT for symbol 8 = 96, an HVAL, FRAME_SIZE for symbol 8 = 16.
        let mut d = vec![4, 0x2f, 8, 0, 8, 0, 0, 0, 96, 0, 0, 0, 3, 0x1b, 255, 0, 4, 0x11, 8, 0, 8, 0, 0, 0, 16, 0, 0, 0];
        let e = entries(&d).unwrap();
        assert_eq!(e.len(), 2);
        assert_eq!((e[0].0, u32_at(e[0].1, 1)), (0x2f, Some(96)));
        assert_eq!((e[1].0, u32_at(e[1].1, 1)), (0x11, Some(16)));
        d.extend([4, 0x2f, 8, 0, 1]);
        assert!(entries(&d).unwrap_err().contains("runs past"));
    }

    #[test]
    fn not_a_cubin_is_an_error() {
        assert!(usage(b"not an ELF file", "k").unwrap_err().contains("not an ELF CUBIN"));
    }
}
