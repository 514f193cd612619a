//! Device limits as plain data, with presets for known devices.
//!
//! Each backend fills a [`Limits`] in exactly one conversion function from its device
//! attributes; everything that prunes or generates configs reads only this struct, so pruning is
//! tested on presets without hardware. Fields that a device does not report are `None` and the
//! checks that need them are skipped (and say so in [`Limits::unknown_fields`]).

use serde::{Deserialize, Serialize};
use std::fmt;

/// What a device can hold and how fast it is. Units are in each field's name or doc.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    /// Most threads (work-items) in one block (work-group). Higher is more permissive.
    pub max_threads_per_block: u32,
    /// Most threads per block along x, y, z.
    pub max_block_dim: [u32; 3],
    /// Most blocks in a grid along x, y, z.
    pub max_grid_dim: [u32; 3],
    /// SIMD width: warp (NVIDIA, 32), wavefront (AMD, 64 or 32), subgroup (wgpu; the minimum).
    pub warp_size: u32,
    /// Shared memory (LDS, workgroup storage) one block may use without opting in, bytes.
    pub shared_mem_per_block: u64,
    /// Shared memory one block may use after opting in (CUDA's
    /// `MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`), bytes; equal to the default elsewhere.
    pub shared_mem_per_block_optin: u64,
    /// Shared memory per multiprocessor (SM/CU), bytes.
    pub shared_mem_per_sm: u64,
    /// 32-bit registers per multiprocessor.
    pub registers_per_sm: Option<u32>,
    /// 32-bit registers one block may use.
    pub registers_per_block: Option<u32>,
    /// Most registers one thread may use.
    pub max_registers_per_thread: Option<u32>,
    /// Most resident blocks per multiprocessor.
    pub max_blocks_per_sm: Option<u32>,
    /// Most resident warps (wavefronts) per multiprocessor.
    pub max_warps_per_sm: Option<u32>,
    /// Multiprocessors (SMs, CUs, or CPU cores for software devices).
    pub sm_count: u32,
    /// Last-level GPU cache, bytes.
    pub l2_bytes: Option<u64>,
    /// Peak DRAM bandwidth, bytes per second.
    pub memory_bandwidth: Option<f64>,
    /// Peak FP32 throughput, FLOP per second (non-tensor).
    pub peak_flops_f32: Option<f64>,
    /// Peak FP16 throughput, FLOP per second (tensor/matrix cores where present).
    pub peak_flops_f16: Option<f64>,
    /// Device memory, bytes.
    #[serde(default)]
    pub global_mem_bytes: Option<u64>,
    /// The largest single buffer the device (or API) allows, bytes.
    #[serde(default)]
    pub max_buffer_bytes: Option<u64>,
}

/// Which limit a request broke, what was asked and what is allowed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LimitViolation {
    /// The limit's name, e.g. `shared_mem_per_block_optin`.
    pub limit: String,
    /// What the config needs.
    pub requested: u64,
    /// What the device allows.
    pub allowed: u64,
}

impl LimitViolation {
    /// The limit in words a user of any backend reads (a block is CUDA's and HIP's word, a
    /// workgroup wgpu's), and whether its amounts are bytes. A limit named in words already
    /// (a backend's own, e.g. static shared memory) is itself.
    pub fn described(&self) -> (String, bool) {
        let axis = |prefix: &str| self.limit.strip_prefix(prefix).filter(|a| ["x", "y", "z"].contains(a));
        if let Some(a) = axis("max_block_dim.") {
            return (format!("threads per block (workgroup) along {a}"), false);
        }
        if let Some(a) = axis("max_grid_dim.") {
            return (format!("blocks (workgroups) in the grid along {a}"), false);
        }
        if let Some(name) = self.limit.strip_prefix("max_storage_buffer_binding_size (").and_then(|r| r.strip_suffix(')')) {
            return (format!("one storage buffer's binding ({name})"), true);
        }
        match self.limit.as_str() {
            "max_threads_per_block" => ("threads per block (workgroup)".into(), false),
            "shared_mem_per_block_optin" => ("shared memory per block (workgroup storage)".into(), true),
            "max_registers_per_thread" => ("registers per thread".into(), false),
            "registers_per_block" => ("registers per block".into(), false),
            "max_threads_per_block (compiled)" => ("threads per block the compiled kernel can launch with".into(), false),
            other => (other.into(), other.starts_with("static shared memory")),
        }
    }
}

impl fmt::Display for LimitViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (what, bytes) = self.described();
        let unit = if bytes { " B" } else { "" };
        write!(f, "{what}: needs {}{unit}, device allows {}{unit}", self.requested, self.allowed)
    }
}

fn check(limit: &str, requested: u64, allowed: u64) -> Result<(), LimitViolation> {
    if requested > allowed {
        Err(LimitViolation { limit: limit.into(), requested, allowed })
    } else {
        Ok(())
    }
}

/// Resident blocks per multiprocessor and what bounds it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Occupancy {
    /// Blocks that fit on one multiprocessor at once.
    pub blocks_per_sm: u32,
    /// The binding resource: `blocks`, `warps`, `registers` or `shared_memory`.
    pub limited_by: String,
}

impl Limits {
    /// Bytes to write before a timed launch so that nothing of the previous launch stays in L2:
    /// twice the L2 size, or 64 MiB where the size is unknown.
    pub fn l2_flush_bytes(&self) -> usize {
        self.l2_bytes.map(|l| 2 * l as usize).unwrap_or(64 << 20)
    }

    /// Checks a block shape.
    pub fn check_block(&self, block: [u32; 3]) -> Result<(), LimitViolation> {
        let threads = block.iter().map(|&b| b as u64).product::<u64>();
        check("max_threads_per_block", threads, self.max_threads_per_block as u64)?;
        for (i, axis) in ["x", "y", "z"].iter().enumerate() {
            check(&format!("max_block_dim.{axis}"), block[i] as u64, self.max_block_dim[i] as u64)?;
        }
        Ok(())
    }

    /// Checks a grid shape.
    pub fn check_grid(&self, grid: [u32; 3]) -> Result<(), LimitViolation> {
        for (i, axis) in ["x", "y", "z"].iter().enumerate() {
            check(&format!("max_grid_dim.{axis}"), grid[i] as u64, self.max_grid_dim[i] as u64)?;
        }
        Ok(())
    }

    /// Checks shared memory per block against the opt-in maximum (backends opt in as needed).
    pub fn check_shared(&self, bytes: u64) -> Result<(), LimitViolation> {
        check("shared_mem_per_block_optin", bytes, self.shared_mem_per_block_optin)
    }

    /// Checks registers: per thread, and per block for `threads` threads.
    pub fn check_registers(&self, regs_per_thread: u32, threads: u32) -> Result<(), LimitViolation> {
        if let Some(max) = self.max_registers_per_thread {
            check("max_registers_per_thread", regs_per_thread as u64, max as u64)?;
        }
        if let Some(max) = self.registers_per_block {
            check("registers_per_block", regs_per_thread as u64 * threads as u64, max as u64)?;
        }
        Ok(())
    }

    /// Resident blocks per SM: the minimum over blocks, warps, registers and shared memory.
    pub fn occupancy(&self, threads: u32, regs_per_thread: Option<u32>, shared_bytes: u64) -> Occupancy {
        let mut best = (u32::MAX, "blocks");
        let mut consider = |v: u64, why: &'static str| {
            let v = v.min(u32::MAX as u64) as u32;
            if v < best.0 {
                best = (v, why);
            }
        };
        if let Some(b) = self.max_blocks_per_sm {
            consider(b as u64, "blocks");
        }
        let warps = threads.div_ceil(self.warp_size.max(1)).max(1) as u64;
        if let Some(w) = self.max_warps_per_sm {
            consider(w as u64 / warps, "warps");
        }
        if let (Some(r), Some(per)) = (self.registers_per_sm, regs_per_thread) {
            if per > 0 {
                consider(r as u64 / (per as u64 * threads.max(1) as u64), "registers");
            }
        }
        if let Some(blocks) = self.shared_mem_per_sm.checked_div(shared_bytes) {
            consider(blocks, "shared_memory");
        }
        if best.0 == u32::MAX {
            best.0 = 1;
        }
        Occupancy { blocks_per_sm: best.0, limited_by: best.1.to_string() }
    }

    /// The same limits with `bytes` of device memory.
    pub fn with_memory(mut self, bytes: u64) -> Limits {
        self.global_mem_bytes = Some(bytes);
        self
    }

    /// Checks a problem's buffers (name, bytes) against the largest buffer and the device
    /// memory, before anything is allocated: an error says what needs how much and what the
    /// device has. Unknown limits are not checked.
    pub fn check_memory(&self, buffers: &[(&str, u64)]) -> Result<(), String> {
        let human = human_bytes;
        if let Some(most) = self.max_buffer_bytes {
            if let Some((name, b)) = buffers.iter().find(|(_, b)| *b > most) {
                return Err(format!(
                    "argument `{name}` needs {}, more than the {} one buffer may have on this device; choose a smaller problem",
                    human(*b),
                    human(most)
                ));
            }
        }
        let total: u64 = buffers.iter().map(|(_, b)| *b).fold(0u64, u64::saturating_add);
        if let Some(mem) = self.global_mem_bytes {
            if total > mem {
                let mut big: Vec<&(&str, u64)> = buffers.iter().collect();
                big.sort_by_key(|b| std::cmp::Reverse(b.1));
                let list = big.iter().take(4).map(|(n, b)| format!("{n} {}", human(*b))).collect::<Vec<_>>().join(", ");
                return Err(format!("the arguments need {} ({list}), more than the device's {} of memory; choose a smaller problem", human(total), human(mem)));
            }
        }
        Ok(())
    }

    /// Names of optional fields this device does not report.
    pub fn unknown_fields(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        let opts: [(&str, bool); 9] = [
            ("registers_per_sm", self.registers_per_sm.is_none()),
            ("registers_per_block", self.registers_per_block.is_none()),
            ("max_registers_per_thread", self.max_registers_per_thread.is_none()),
            ("max_blocks_per_sm", self.max_blocks_per_sm.is_none()),
            ("max_warps_per_sm", self.max_warps_per_sm.is_none()),
            ("l2_bytes", self.l2_bytes.is_none()),
            ("memory_bandwidth", self.memory_bandwidth.is_none()),
            ("peak_flops_f32", self.peak_flops_f32.is_none()),
            ("peak_flops_f16", self.peak_flops_f16.is_none()),
        ];
        for (n, missing) in opts {
            if missing {
                v.push(n);
            }
        }
        v
    }

    /// A preset by name (see [`PRESETS`]).
    pub fn preset(name: &str) -> Option<(crate::Target, Limits)> {
        PRESETS.iter().find(|p| p.name.eq_ignore_ascii_case(name) || p.arch.eq_ignore_ascii_case(name)).map(|p| (p.target(), (p.limits)()))
    }
}

/// A known device: name, architecture and its limits.
pub struct Preset {
    /// Short name: `a100`, `h100`, `h200`, `mi250x`, `mi300x`, `rx7900xtx`, `llvmpipe`.
    pub name: &'static str,
    /// Architecture (also accepted as a preset name; the first preset with it wins).
    pub arch: &'static str,
    /// Marketing name.
    pub device: &'static str,
    /// Vendor.
    pub vendor: crate::Vendor,
    /// Backend that reaches it.
    pub backend: &'static str,
    /// The limits.
    pub limits: fn() -> Limits,
}

impl Preset {
    /// The preset's target.
    pub fn target(&self) -> crate::Target {
        crate::Target::new(self.backend, self.vendor, self.arch, self.device)
    }
}

const KIB: u64 = 1024;
const MIB: u64 = 1024 * 1024;
const GIB: u64 = 1024 * MIB;

fn nvidia(sms: u32, smem_optin: u64, smem_sm: u64, l2: u64, bw: f64, f32: f64, f16: f64) -> Limits {
    Limits {
        max_threads_per_block: 1024,
        max_block_dim: [1024, 1024, 64],
        max_grid_dim: [2_147_483_647, 65535, 65535],
        warp_size: 32,
        shared_mem_per_block: 48 * KIB,
        shared_mem_per_block_optin: smem_optin,
        shared_mem_per_sm: smem_sm,
        registers_per_sm: Some(65536),
        registers_per_block: Some(65536),
        max_registers_per_thread: Some(255),
        max_blocks_per_sm: Some(32),
        max_warps_per_sm: Some(64),
        sm_count: sms,
        l2_bytes: Some(l2),
        memory_bandwidth: Some(bw),
        peak_flops_f32: Some(f32),
        peak_flops_f16: Some(f16),
        global_mem_bytes: None,
        max_buffer_bytes: None,
    }
}

#[allow(clippy::too_many_arguments)] // one argument per published spec-sheet figure
fn amd(cus: u32, wave: u32, lds: u64, regs_per_cu: u32, waves_per_cu: u32, l2: u64, bw: f64, f32: f64, f16: f64) -> Limits {
    Limits {
        max_threads_per_block: 1024,
        max_block_dim: [1024, 1024, 1024],
        max_grid_dim: [2_147_483_647, 2_147_483_647, 2_147_483_647],
        warp_size: wave,
        shared_mem_per_block: lds,
        shared_mem_per_block_optin: lds,
        shared_mem_per_sm: lds,
        registers_per_sm: Some(regs_per_cu),
        registers_per_block: Some(regs_per_cu / 2),
        max_registers_per_thread: Some(512),
        max_blocks_per_sm: Some(32),
        max_warps_per_sm: Some(waves_per_cu),
        sm_count: cus,
        l2_bytes: Some(l2),
        memory_bandwidth: Some(bw),
        peak_flops_f32: Some(f32),
        peak_flops_f16: Some(f16),
        global_mem_bytes: None,
        max_buffer_bytes: None,
    }
}

/// Presets for devices everything is tested against. Figures are the vendors' published
/// specifications (SXM parts for NVIDIA, one GCD for MI250X as the runtime enumerates it).
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "a100",
        arch: "sm_80",
        device: "NVIDIA A100-SXM4-80GB",
        vendor: crate::Vendor::Nvidia,
        backend: "cuda",
        limits: || nvidia(108, 163 * KIB, 164 * KIB, 40 * MIB, 2.039e12, 19.5e12, 312e12).with_memory(80 * GIB),
    },
    Preset {
        name: "h100",
        arch: "sm_90",
        device: "NVIDIA H100 80GB HBM3",
        vendor: crate::Vendor::Nvidia,
        backend: "cuda",
        limits: || nvidia(132, 227 * KIB, 228 * KIB, 50 * MIB, 3.35e12, 67e12, 989e12).with_memory(80 * GIB),
    },
    Preset {
        name: "h200",
        arch: "sm_90",
        device: "NVIDIA H200",
        vendor: crate::Vendor::Nvidia,
        backend: "cuda",
        limits: || nvidia(132, 227 * KIB, 228 * KIB, 60 * MIB, 4.8e12, 67e12, 989e12).with_memory(141 * GIB),
    },
    Preset {
        name: "mi250x",
        arch: "gfx90a",
        device: "AMD Instinct MI250X (one GCD)",
        vendor: crate::Vendor::Amd,
        backend: "hip",
        limits: || amd(110, 64, 64 * KIB, 131072, 32, 8 * MIB, 1.6e12, 23.9e12, 191.5e12).with_memory(64 * GIB),
    },
    Preset {
        name: "mi300x",
        arch: "gfx942",
        device: "AMD Instinct MI300X",
        vendor: crate::Vendor::Amd,
        backend: "hip",
        limits: || amd(304, 64, 64 * KIB, 131072, 32, 4 * MIB, 5.3e12, 163.4e12, 1307e12).with_memory(192 * GIB),
    },
    Preset {
        name: "rx7900xtx",
        arch: "gfx1100",
        device: "AMD Radeon RX 7900 XTX",
        vendor: crate::Vendor::Amd,
        backend: "hip",
        limits: || amd(96, 32, 64 * KIB, 98304, 32, 6 * MIB, 0.96e12, 61.4e12, 122.8e12).with_memory(24 * GIB),
    },
    Preset {
        name: "llvmpipe",
        arch: "vulkan-10005-0",
        device: "llvmpipe (software Vulkan)",
        vendor: crate::Vendor::Portable,
        backend: "wgpu",
        limits: || Limits {
            max_threads_per_block: 1024,
            max_block_dim: [1024, 1024, 64],
            max_grid_dim: [65535, 65535, 65535],
            warp_size: 8,
            shared_mem_per_block: 32 * KIB,
            shared_mem_per_block_optin: 32 * KIB,
            shared_mem_per_sm: 32 * KIB,
            registers_per_sm: None,
            registers_per_block: None,
            max_registers_per_thread: None,
            max_blocks_per_sm: None,
            max_warps_per_sm: None,
            sm_count: 2,
            l2_bytes: None,
            memory_bandwidth: None,
            peak_flops_f32: None,
            peak_flops_f16: None,
            global_mem_bytes: None,
            max_buffer_bytes: Some(2 * 1024 * MIB),
        },
    },
];

/// A byte count as people read it: `64.0 MiB`, `1.5 GiB`, `900 B`.
pub fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if b < 1024 {
        return format!("{b} B");
    }
    let mut x = b as f64 / 1024.0;
    let mut u = 0;
    while x >= 1024.0 && u + 1 < UNITS.len() {
        x /= 1024.0;
        u += 1;
    }
    format!("{x:.1} {}", UNITS[u])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_exist_and_are_consistent() {
        for p in PRESETS {
            let l = (p.limits)();
            assert!(l.shared_mem_per_block <= l.shared_mem_per_block_optin, "{}", p.name);
            assert!(l.shared_mem_per_block_optin <= l.shared_mem_per_sm, "{}", p.name);
            assert!(l.max_block_dim[0] <= l.max_threads_per_block, "{}", p.name);
            assert!(l.sm_count > 0);
            assert_eq!(Limits::preset(p.name).unwrap().1, l);
        }
        assert_eq!(Limits::preset("gfx942").unwrap().0.arch, "gfx942");
    }

    #[test]
    fn violations_say_which_and_how_much() {
        let (_, h100) = Limits::preset("h100").unwrap();
        let v = h100.check_shared(300 * 1024).unwrap_err();
        assert_eq!(v.limit, "shared_mem_per_block_optin");
        assert_eq!((v.requested, v.allowed), (307200, 232448));
        let v = h100.check_block([64, 32, 1]).unwrap_err();
        assert_eq!((v.limit.as_str(), v.requested, v.allowed), ("max_threads_per_block", 2048, 1024));
        let v = h100.check_registers(300, 32).unwrap_err();
        assert_eq!(v.limit, "max_registers_per_thread");
        let v = h100.check_registers(128, 1024).unwrap_err();
        assert_eq!((v.limit.as_str(), v.requested), ("registers_per_block", 131072));
        // Said in words, in bytes where the amounts are bytes.
        assert_eq!(
            h100.check_shared(300 * 1024).unwrap_err().to_string(),
            "shared memory per block (workgroup storage): needs 307200 B, device allows 232448 B"
        );
        assert_eq!(h100.check_block([64, 32, 1]).unwrap_err().to_string(), "threads per block (workgroup): needs 2048, device allows 1024");
        assert_eq!(h100.check_block([1, 1, 128]).unwrap_err().to_string(), "threads per block (workgroup) along z: needs 128, device allows 64");
        assert_eq!(h100.check_grid([1, 1 << 20, 1]).unwrap_err().to_string(), "blocks (workgroups) in the grid along y: needs 1048576, device allows 65535");
        let named = |limit: &str| LimitViolation { limit: limit.into(), requested: 2, allowed: 1 }.to_string();
        assert_eq!(named("max_storage_buffer_binding_size (x)"), "one storage buffer's binding (x): needs 2 B, device allows 1 B");
        assert_eq!(named("a backend's own words"), "a backend's own words: needs 2, device allows 1");
    }

    #[test]
    fn occupancy_picks_the_binding_limit() {
        let (_, h100) = Limits::preset("h100").unwrap();
        // 256 threads, 32 regs: warps allow 8, registers allow 8, blocks 32 -> 8 (warps first found).
        let o = h100.occupancy(256, Some(32), 0);
        assert_eq!(o.blocks_per_sm, 8);
        let o = h100.occupancy(128, Some(128), 0);
        assert_eq!((o.blocks_per_sm, o.limited_by.as_str()), (4, "registers"));
        let o = h100.occupancy(128, Some(32), 100 * 1024);
        assert_eq!((o.blocks_per_sm, o.limited_by.as_str()), (2, "shared_memory"));
        let o = h100.occupancy(32, Some(16), 0);
        assert_eq!((o.blocks_per_sm, o.limited_by.as_str()), (32, "blocks"));
    }
}
