//! The roofline performance model: an estimate used to order configs, never to pick a winner.
//!
//! `time ≈ max(FLOPs ÷ peak, bytes ÷ bandwidth) ÷ wave efficiency`, where the wave efficiency
//! `blocks ÷ (waves × SMs × occupancy)` charges the partially filled last wave. This is
//! `waves × max(FLOPs_per_wave ÷ peak, bytes_per_wave ÷ bandwidth)` for full waves.

use crate::limits::Limits;

/// Inputs of the estimate for one config.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelInput {
    /// Floating-point operations of the whole launch.
    pub flops: f64,
    /// DRAM bytes moved by the whole launch (re-reads included where the formula models them).
    pub bytes: f64,
    /// Blocks in the grid.
    pub blocks: u64,
    /// Resident blocks per SM.
    pub occupancy: u32,
}

/// Estimated seconds, or `None` when the device reports neither peak nor bandwidth.
pub fn estimate(limits: &Limits, input: &ModelInput, half: bool) -> Option<f64> {
    let peak = if half { limits.peak_flops_f16 } else { limits.peak_flops_f32 };
    let compute = peak.map(|p| input.flops / p);
    let memory = limits.memory_bandwidth.map(|b| input.bytes / b);
    let t = match (compute, memory) {
        (Some(c), Some(m)) => c.max(m),
        (Some(c), None) => c,
        (None, Some(m)) => m,
        (None, None) => return None,
    };
    let concurrent = (limits.sm_count as u64 * input.occupancy.max(1) as u64).max(1);
    let blocks = input.blocks.max(1);
    let waves = blocks.div_ceil(concurrent);
    let efficiency = blocks as f64 / (waves * concurrent) as f64;
    Some(t / efficiency.max(1e-9))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roofline_and_waves() {
        let (_, h100) = Limits::preset("h100").unwrap();
        let full = ModelInput { flops: 0.0, bytes: 3.35e9, blocks: 132 * 4, occupancy: 4 };
        assert!((estimate(&h100, &full, false).unwrap() - 1e-3).abs() < 1e-9);
        // One block more than a full wave: the second wave is nearly empty.
        let tail = ModelInput { blocks: 132 * 4 + 1, ..full.clone() };
        assert!(estimate(&h100, &tail, false).unwrap() > 1.9e-3);
        let compute = ModelInput { flops: 67e9, bytes: 1.0, blocks: 132, occupancy: 1 };
        assert!((estimate(&h100, &compute, false).unwrap() - 1e-3).abs() < 1e-9);
        let (_, sw) = Limits::preset("llvmpipe").unwrap();
        assert_eq!(estimate(&sw, &full, false), None);
    }
}
