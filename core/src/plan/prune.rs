//! Pruning: drop configs that cannot run (or cannot run well) before compiling them, and again
//! after compiling from the compiler's real resource report. Every dropped config keeps its
//! reason, and reasons are counted by category for the report.

use crate::limits::{LimitViolation, Limits};
use crate::spec::settings::PruneOptions;
use serde::{Deserialize, Serialize};
use std::fmt;

/// What pruning knows about a config before compiling it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Estimate {
    /// Block (work-group) shape.
    pub block: [u32; 3],
    /// Grid shape in blocks.
    pub grid: [u32; 3],
    /// Shared memory per block, bytes (static estimate plus dynamic, stages included).
    pub shared_bytes: u64,
    /// Of it, the dynamic shared memory the launch asks for (`[launch] shared_mem`): after
    /// compiling, the compiler's static figure replaces the rest, the spec's estimate of it.
    pub dynamic_shared_bytes: u64,
    /// Registers per thread, if a formula gives them.
    pub regs_per_thread: Option<u32>,
    /// Output tile per block along (m, n) and the problem's (m, n), for shape rules.
    pub tile: Option<([u64; 2], [u64; 2])>,
}

/// Why a config was dropped.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "reason")]
pub enum PruneReason {
    /// Block shape over the thread limits.
    Threads {
        /// Which limit.
        violation: LimitViolation,
    },
    /// Grid over the grid limits.
    Grid {
        /// Which limit.
        violation: LimitViolation,
    },
    /// Shared memory over the per-block maximum.
    SharedMemory {
        /// Which limit.
        violation: LimitViolation,
    },
    /// Registers over the per-thread or per-block maximum.
    Registers {
        /// Which limit.
        violation: LimitViolation,
    },
    /// Fewer resident blocks per SM than the floor.
    Occupancy {
        /// Blocks per SM reached.
        blocks_per_sm: u32,
        /// The floor.
        floor: u32,
        /// The binding resource.
        limited_by: String,
    },
    /// A tile much larger than the problem.
    Shape {
        /// Tile extent.
        tile: u64,
        /// Problem extent.
        dim: u64,
        /// `m` or `n`.
        axis: String,
    },
    /// A problem-shape heuristic (small M → small tiles, near-square problems → near-square
    /// tiles).
    ShapeRule {
        /// The rule, in words.
        rule: String,
    },
    /// The compiled kernel spills more than allowed.
    Spills {
        /// Spilled bytes per thread.
        bytes: u64,
        /// The threshold.
        max: u64,
    },
    /// The compiled kernel cannot be launched with this block size.
    CannotLaunch {
        /// What the compiler/driver reports.
        violation: LimitViolation,
    },
    /// Launch geometry or a resource formula could not be evaluated.
    Geometry {
        /// The evaluation error.
        message: String,
    },
}

impl PruneReason {
    /// Category used for counting: `threads`, `grid`, `shared_memory`, `registers`,
    /// `occupancy`, `shape`, `spills`, `cannot_launch`, `geometry`.
    pub fn category(&self) -> &'static str {
        match self {
            PruneReason::Threads { .. } => "threads",
            PruneReason::Grid { .. } => "grid",
            PruneReason::SharedMemory { .. } => "shared_memory",
            PruneReason::Registers { .. } => "registers",
            PruneReason::Occupancy { .. } => "occupancy",
            PruneReason::Shape { .. } | PruneReason::ShapeRule { .. } => "shape",
            PruneReason::Spills { .. } => "spills",
            PruneReason::CannotLaunch { .. } => "cannot_launch",
            PruneReason::Geometry { .. } => "geometry",
        }
    }
}

impl fmt::Display for PruneReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PruneReason::Threads { violation }
            | PruneReason::Grid { violation }
            | PruneReason::SharedMemory { violation }
            | PruneReason::Registers { violation }
            | PruneReason::CannotLaunch { violation } => {
                // The violation names its resource in words (`LimitViolation::described`).
                write!(f, "{violation}")
            }
            PruneReason::Occupancy { blocks_per_sm, floor, limited_by } => {
                write!(f, "occupancy: {blocks_per_sm} blocks/SM (limited by {limited_by}) < floor {floor}")
            }
            PruneReason::Shape { tile, dim, axis } => write!(f, "shape: tile {axis}={tile} larger than problem {axis}={dim} allows"),
            PruneReason::ShapeRule { rule } => write!(f, "shape: {rule}"),
            PruneReason::Spills { bytes, max } => write!(f, "spills: {bytes} B/thread > {max} B"),
            PruneReason::Geometry { message } => write!(f, "geometry: {message}"),
        }
    }
}

/// Checks a config before compiling.
pub fn prune_before(limits: &Limits, est: &Estimate, opts: &PruneOptions) -> Result<(), PruneReason> {
    limits.check_block(est.block).map_err(|violation| PruneReason::Threads { violation })?;
    limits.check_grid(est.grid).map_err(|violation| PruneReason::Grid { violation })?;
    limits.check_shared(est.shared_bytes).map_err(|violation| PruneReason::SharedMemory { violation })?;
    let threads = est.block.iter().product::<u32>();
    if let Some(r) = est.regs_per_thread {
        limits.check_registers(r, threads).map_err(|violation| PruneReason::Registers { violation })?;
    }
    let occ = limits.occupancy(threads, est.regs_per_thread, est.shared_bytes);
    if occ.blocks_per_sm < opts.min_occupancy {
        return Err(PruneReason::Occupancy { blocks_per_sm: occ.blocks_per_sm, floor: opts.min_occupancy, limited_by: occ.limited_by });
    }
    if let Some((tile, dims)) = est.tile {
        for (i, axis) in ["m", "n"].iter().enumerate() {
            if dims[i] > 0 && tile[i] as f64 > opts.max_tile_ratio * dims[i] as f64 {
                return Err(PruneReason::Shape { tile: tile[i], dim: dims[i], axis: axis.to_string() });
            }
        }
    }
    Ok(())
}

/// Checks a compiled config against the compiler's resource report.
pub fn prune_after(limits: &Limits, est: &Estimate, usage: &ResourceUsage, opts: &PruneOptions) -> Result<(), PruneReason> {
    let threads = est.block.iter().product::<u32>();
    if let Some(max) = usage.max_threads_per_block {
        if threads > max {
            return Err(PruneReason::CannotLaunch {
                violation: LimitViolation { limit: "max_threads_per_block (compiled)".into(), requested: threads as u64, allowed: max as u64 },
            });
        }
    }
    if let Some(r) = usage.registers {
        limits.check_registers(r, threads).map_err(|violation| PruneReason::Registers { violation })?;
    }
    // The compiler's static shared memory, where it reports it, in place of the spec's estimate
    // of it (`[resources] shared_mem`, counted in `shared_bytes`): both made the matmul's tiles
    // count twice (40 KiB for 20 KiB declared).
    let shared = match usage.static_shared_bytes {
        Some(s) => s + est.dynamic_shared_bytes,
        None => est.shared_bytes,
    };
    if usage.static_shared_bytes.is_some() {
        limits.check_shared(shared).map_err(|violation| PruneReason::SharedMemory { violation })?;
    }
    if let (Some(bytes), Some(max)) = (usage.local_bytes, opts.max_spill_bytes) {
        if bytes > max {
            return Err(PruneReason::Spills { bytes, max });
        }
    }
    let blocks = usage.active_blocks_per_sm.unwrap_or_else(|| limits.occupancy(threads, usage.registers, shared).blocks_per_sm);
    if blocks < opts.min_occupancy {
        return Err(PruneReason::Occupancy { blocks_per_sm: blocks, floor: opts.min_occupancy, limited_by: "compiled resources".into() });
    }
    Ok(())
}

/// Resources the compiler reports for a compiled kernel.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceUsage {
    /// Registers per thread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registers: Option<u32>,
    /// Static shared memory per block, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub static_shared_bytes: Option<u64>,
    /// Local memory (spills) per thread, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_bytes: Option<u64>,
    /// Most threads per block this binary can be launched with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_threads_per_block: Option<u32>,
    /// Resident blocks per SM for the config's block size (the occupancy API, or the CUDA
    /// backend's reading of the CUBIN by the same rules).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_blocks_per_sm: Option<u32>,
}

impl ResourceUsage {
    /// Lower is better: registers × threads + shared memory in 32-bit words.
    pub fn score(&self, threads: u32) -> Option<u64> {
        if self.registers.is_none() && self.static_shared_bytes.is_none() {
            return None;
        }
        Some(self.registers.unwrap_or(0) as u64 * threads as u64 + self.static_shared_bytes.unwrap_or(0) / 4)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h100() -> Limits {
        Limits::preset("h100").unwrap().1
    }

    fn est(block: [u32; 3], shared: u64) -> Estimate {
        Estimate { block, grid: [1, 1, 1], shared_bytes: shared, ..Default::default() }
    }

    #[test]
    fn before_compile_reasons() {
        let o = PruneOptions::default();
        let l = h100();
        assert!(prune_before(&l, &est([256, 1, 1], 0), &o).is_ok());
        assert_eq!(prune_before(&l, &est([64, 32, 1], 0), &o).unwrap_err().category(), "threads");
        assert_eq!(prune_before(&l, &est([128, 1, 1], 240 * 1024), &o).unwrap_err().category(), "shared_memory");
        let mut e = est([512, 1, 1], 0);
        e.regs_per_thread = Some(255);
        assert_eq!(prune_before(&l, &e, &o).unwrap_err().category(), "registers");
        let o2 = PruneOptions { min_occupancy: 2, ..o.clone() };
        let r = prune_before(&l, &est([128, 1, 1], 120 * 1024), &o2).unwrap_err();
        assert!(matches!(r, PruneReason::Occupancy { blocks_per_sm: 1, floor: 2, .. }), "{r}");
        let mut e = est([128, 1, 1], 0);
        e.tile = Some(([256, 64], [100, 4096]));
        assert!(matches!(prune_before(&l, &e, &o).unwrap_err(), PruneReason::Shape { tile: 256, dim: 100, .. }));
        e.grid = [1, 70000, 1];
        assert_eq!(prune_before(&l, &e, &o).unwrap_err().category(), "grid");
    }

    #[test]
    fn after_compile_reasons() {
        let o = PruneOptions::default();
        let l = h100();
        let e = est([1024, 1, 1], 0);
        let u = ResourceUsage { registers: Some(128), ..Default::default() };
        assert_eq!(prune_after(&l, &e, &u, &o).unwrap_err().category(), "registers");
        let u = ResourceUsage { registers: Some(32), local_bytes: Some(4096), ..Default::default() };
        assert_eq!(prune_after(&l, &e, &u, &o).unwrap_err().category(), "spills");
        let u = ResourceUsage { max_threads_per_block: Some(512), ..Default::default() };
        assert_eq!(prune_after(&l, &e, &u, &o).unwrap_err().category(), "cannot_launch");
        let u = ResourceUsage { registers: Some(32), local_bytes: Some(0), ..Default::default() };
        assert!(prune_after(&l, &e, &u, &o).is_ok());
    }

    /// After compiling, the compiler's static shared memory replaces the spec's estimate of it
    /// (`[resources] shared_mem`); the launch's dynamic shared memory is added to it.
    #[test]
    fn the_compiled_static_shared_memory_replaces_the_estimate_of_it() {
        let o = PruneOptions::default();
        let mut l = h100();
        l.shared_mem_per_block_optin = 32 * 1024;
        l.shared_mem_per_sm = 32 * 1024;
        // 20 KiB of tiles, estimated and compiled alike: fits (it counted 40 KiB).
        let e = est([256, 1, 1], 20 * 1024);
        let u = ResourceUsage { static_shared_bytes: Some(20 * 1024), ..Default::default() };
        assert!(prune_after(&l, &e, &u, &o).is_ok());
        // With 16 KiB asked at launch on top: 36 KiB does not.
        let e = Estimate { shared_bytes: 36 * 1024, dynamic_shared_bytes: 16 * 1024, ..e };
        assert_eq!(prune_after(&l, &e, &u, &o).unwrap_err().category(), "shared_memory");
        // No compiler figure: the estimate stands (its 36 KiB leave no block room on an SM of 32).
        assert_eq!(prune_after(&l, &e, &ResourceUsage::default(), &o).unwrap_err().category(), "occupancy");
    }
}
