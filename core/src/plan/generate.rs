//! Per-vendor config generators: candidate configs derived from the target's limits and the
//! problem shape, instead of lists typed by hand.
//!
//! Three generators, dispatched with `enum_dispatch` (trait and enum live here, in core):
//! - [`NvidiaMultiStage`]: tiles × warps × software-pipeline stages 2–5 (× clusters on sm_90);
//!   shared memory = stages × (BM·BK + BK·BN) × element bytes.
//! - [`AmdGenerator`]: 64-wide wavefronts (32 on RDNA), `num_stages` 0/1 by default, the
//!   AMD-only knobs `waves_per_eu` and, on CDNA, `matrix_instr_nonkdim`; LDS holds only the B
//!   tile when `num_stages` is 0 (the A tile lives in registers), else both, per stage.
//! - [`OccupancyOnly`]: for memory-bound kernels on every vendor and on wgpu: tiles fixed, vary
//!   threads, elements per thread and resident blocks per SM (grid = SMs × occupancy).
//! - [`PortableTiled`]: compute-bound classes on wgpu: the portable tile set, no pipelining.
//!
//! The value ranges are data in `configs/{nvidia,amd,portable}/<class>.toml` (compiled in;
//! `KERNTUNE_CONFIGS` points at a directory to override them), with per-architecture
//! overrides and a default config per class that is always a candidate.
//!
//! Every candidate is pruned before compiling, keeping its reason: threads and warps, shared
//! memory with stages, an estimated register count, the occupancy floor, and shape rules (a
//! tile at most twice the dimension, small M → small BM, near-square problems → tiles at most
//! 4:1). The perf model then orders the survivors.

use crate::limits::Limits;
use crate::plan::model;
use crate::plan::model::ModelInput;
use crate::plan::prune::{prune_before, Estimate, PruneReason};
use crate::space::config::{Config, Knobs};
use crate::spec::job::Class;
use crate::spec::settings::PruneOptions;
use crate::spec::value::Value;
use crate::target::{Target, Vendor};
use enum_dispatch::enum_dispatch;
use serde::Serialize;
use std::collections::BTreeMap;

/// The problem a set is generated for: `m`, `n`, `k` (elementwise and reduction use `n` as the
/// element count; attention uses `m` = query length, `n` = key length, `k` = head dimension).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Shape {
    /// Rows (M).
    pub m: u64,
    /// Columns (N) or elements.
    pub n: u64,
    /// Reduction length (K) or head dimension.
    pub k: u64,
}

impl Shape {
    /// Parses `4096x4096x4096`, `MxN` or `N`.
    pub fn parse(s: &str) -> Option<Shape> {
        Shape::from_sizes(&Shape::sizes(s)?)
    }

    /// The sizes `s` gives (`4096x4096` → 4096, 4096), each at least 1.
    pub fn sizes(s: &str) -> Option<Vec<u64>> {
        s.split(['x', 'X', ',']).map(|p| p.trim().parse().ok().filter(|&d: &u64| d > 0)).collect()
    }

    /// The shape of one to three sizes (N, MxN, MxNxK).
    pub fn from_sizes(v: &[u64]) -> Option<Shape> {
        Some(match v {
            [n] => Shape { m: 1, n: *n, k: 1 },
            [m, n] => Shape { m: *m, n: *n, k: 1 },
            [m, n, k] => Shape { m: *m, n: *n, k: *k },
            _ => return None,
        })
    }
}

/// What a generator works from.
#[derive(Clone, Debug)]
pub struct GenContext<'a> {
    /// The device.
    pub target: &'a Target,
    /// Its limits.
    pub limits: &'a Limits,
    /// The kernel class.
    pub class: Class,
    /// The problem.
    pub shape: Shape,
    /// Bytes per element (4 for f32, 2 for f16).
    pub elem_bytes: u64,
    /// Pruning thresholds.
    pub prune: PruneOptions,
}

/// A generated set: the candidates (best-first by the perf model), the pruned ones with
/// reasons, and the class default.
#[derive(Clone, Debug, Serialize)]
pub struct Generated {
    /// Which generator made it.
    pub generator: String,
    /// Candidates with their model estimate (seconds, when the device reports peak rates).
    pub candidates: Vec<(Config, Option<f64>)>,
    /// Pruned configs with the reason.
    pub pruned: Vec<(Config, PruneReason)>,
    /// The class default (always among the candidates unless it cannot fit the device).
    pub default: Config,
    /// Whether the default survived pruning.
    pub default_included: bool,
}

impl Generated {
    /// Pruned counts by category.
    pub fn pruned_counts(&self) -> BTreeMap<String, usize> {
        let mut m = BTreeMap::new();
        for (_, r) in &self.pruned {
            *m.entry(r.category().to_string()).or_default() += 1;
        }
        m
    }
}

/// A generator.
#[enum_dispatch]
pub trait Generate {
    /// Its name.
    fn name(&self) -> &'static str;
    /// The config-set file family (`nvidia`, `amd`, `portable`).
    fn family(&self) -> &'static str;
    /// Estimates for one role assignment: block, grid, shared memory, registers, tile.
    fn estimate(&self, ctx: &GenContext<'_>, r: &Roles) -> Estimate;
    /// Whether a role assignment makes sense at all (e.g. warps vs tile area).
    fn compatible(&self, ctx: &GenContext<'_>, r: &Roles) -> Result<(), PruneReason>;
}

/// The generators.
#[enum_dispatch(Generate)]
#[derive(Clone, Debug)]
pub enum Generator {
    /// NVIDIA multi-stage.
    NvidiaMultiStage,
    /// AMD.
    AmdGenerator,
    /// Occupancy-only.
    OccupancyOnly,
    /// Portable tiled (compute-bound classes on wgpu).
    PortableTiled,
}

impl Generator {
    /// The generator for a target and class: memory-bound classes and portable targets get
    /// occupancy-only (portable matmul/attention use the portable tiled set); NVIDIA and AMD
    /// compute-bound classes get their vendor's.
    pub fn for_target(target: &Target, class: Class) -> Generator {
        match (class, target.vendor) {
            (Class::Elementwise | Class::Reduction, _) => Generator::OccupancyOnly(OccupancyOnly),
            (_, Vendor::Nvidia) => Generator::NvidiaMultiStage(NvidiaMultiStage),
            (_, Vendor::Amd) => Generator::AmdGenerator(AmdGenerator),
            (_, Vendor::Portable) => Generator::PortableTiled(PortableTiled),
        }
    }
}

/// Role values of one candidate (`tile_m`, `num_warps`, ...).
pub type Roles = BTreeMap<String, i64>;

fn role(r: &Roles, k: &str, default: i64) -> i64 {
    r.get(k).copied().unwrap_or(default)
}

fn matmul_regs(ctx: &GenContext<'_>, r: &Roles, threads: i64) -> u32 {
    let (bm, bn, bk) = (role(r, "tile_m", 64), role(r, "tile_n", 64), role(r, "tile_k", 32));
    // fp32 accumulators, one k-slice of A and B fragments, and addressing overhead.
    let acc = bm * bn / threads.max(1);
    let frag = ((bm + bn) * bk / threads.max(1)) * ctx.elem_bytes as i64 / 4;
    (acc + frag / 4 + 32).clamp(16, 1 << 16) as u32
}

fn div_ceil(a: u64, b: i64) -> u32 {
    a.div_ceil(b.max(1) as u64).min(u32::MAX as u64) as u32
}

/// NVIDIA multi-stage pipelines.
#[derive(Clone, Copy, Debug, Default)]
pub struct NvidiaMultiStage;

impl Generate for NvidiaMultiStage {
    fn name(&self) -> &'static str {
        "nvidia-multistage"
    }
    fn family(&self) -> &'static str {
        "nvidia"
    }
    fn estimate(&self, ctx: &GenContext<'_>, r: &Roles) -> Estimate {
        let threads = role(r, "num_warps", 4) * ctx.limits.warp_size as i64;
        let (bm, bn, bk, stages) = (role(r, "tile_m", 64), role(r, "tile_n", 64), role(r, "tile_k", 32), role(r, "num_stages", 1).max(1));
        let smem = match ctx.class {
            Class::Attention => (stages * bn * ctx.shape.k as i64 * 2 + bm * ctx.shape.k as i64) as u64 * ctx.elem_bytes,
            _ => (stages * (bm * bk + bk * bn)) as u64 * ctx.elem_bytes,
        };
        Estimate {
            block: [threads.max(1) as u32, 1, 1],
            grid: [div_ceil(ctx.shape.n, bn), div_ceil(ctx.shape.m, bm), 1],
            shared_bytes: smem,
            // The generator's estimate, pruning before compiling only.
            dynamic_shared_bytes: 0,
            regs_per_thread: Some(matmul_regs(ctx, r, threads)),
            tile: Some(([bm as u64, bn as u64], [ctx.shape.m, ctx.shape.n])),
        }
    }
    fn compatible(&self, ctx: &GenContext<'_>, r: &Roles) -> Result<(), PruneReason> {
        mma_compatible(ctx, r, 32)
    }
}

fn mma_compatible(ctx: &GenContext<'_>, r: &Roles, max_warps: i64) -> Result<(), PruneReason> {
    let (bm, bn, warps) = (role(r, "tile_m", 64), role(r, "tile_n", 64), role(r, "num_warps", 4));
    // Each warp needs at least one 16×16 MMA tile of the block's output tile.
    if bm * bn / (16 * 16) < warps || warps > max_warps {
        return Err(PruneReason::Threads {
            violation: crate::limits::LimitViolation {
                limit: "warps per block for this tile (BM·BN/256)".into(),
                requested: warps as u64,
                allowed: (bm * bn / 256).min(max_warps) as u64,
            },
        });
    }
    if r.get("num_ctas").is_some_and(|&c| c > 1) && ctx.target.arch.as_str() < "sm_90" {
        return Err(PruneReason::Geometry { message: "thread-block clusters need sm_90 or newer".into() });
    }
    Ok(())
}

/// AMD (HIP): wavefronts of 64 (32 on RDNA), `num_stages` 0/1.
#[derive(Clone, Copy, Debug, Default)]
pub struct AmdGenerator;

impl Generate for AmdGenerator {
    fn name(&self) -> &'static str {
        "amd"
    }
    fn family(&self) -> &'static str {
        "amd"
    }
    fn estimate(&self, ctx: &GenContext<'_>, r: &Roles) -> Estimate {
        let threads = role(r, "num_warps", 4) * ctx.limits.warp_size as i64;
        let (bm, bn, bk, stages) = (role(r, "tile_m", 64), role(r, "tile_n", 64), role(r, "tile_k", 32), role(r, "num_stages", 0));
        let lds = match ctx.class {
            Class::Attention => ((bn * ctx.shape.k as i64 * 2) * stages.max(1)) as u64 * ctx.elem_bytes,
            // num_stages 0: the A tile stays in registers, LDS holds the B tile.
            _ if stages == 0 => (bk * bn) as u64 * ctx.elem_bytes,
            _ => (stages * (bm * bk + bk * bn)) as u64 * ctx.elem_bytes,
        };
        Estimate {
            block: [threads.max(1) as u32, 1, 1],
            grid: [div_ceil(ctx.shape.n, bn), div_ceil(ctx.shape.m, bm), 1],
            shared_bytes: lds,
            dynamic_shared_bytes: 0,
            regs_per_thread: Some(matmul_regs(ctx, r, threads) + if stages == 0 { (bm * bk / threads.max(1)) as u32 } else { 0 }),
            tile: Some(([bm as u64, bn as u64], [ctx.shape.m, ctx.shape.n])),
        }
    }
    fn compatible(&self, ctx: &GenContext<'_>, r: &Roles) -> Result<(), PruneReason> {
        mma_compatible(ctx, r, 16)
    }
}

/// Compute-bound classes on portable (wgpu) targets: tiles and workgroup size from the portable
/// set, no pipelining, sized against the adapter's (often small) workgroup storage.
#[derive(Clone, Copy, Debug, Default)]
pub struct PortableTiled;

impl Generate for PortableTiled {
    fn name(&self) -> &'static str {
        "portable-tiled"
    }
    fn family(&self) -> &'static str {
        "portable"
    }
    fn estimate(&self, ctx: &GenContext<'_>, r: &Roles) -> Estimate {
        // Portable "warps" are groups of 32 invocations, whatever the subgroup width.
        let mut l = ctx.limits.clone();
        l.warp_size = 32;
        NvidiaMultiStage.estimate(&GenContext { limits: &l, ..ctx.clone() }, r)
    }
    fn compatible(&self, ctx: &GenContext<'_>, r: &Roles) -> Result<(), PruneReason> {
        mma_compatible(ctx, r, (ctx.limits.max_threads_per_block / ctx.limits.warp_size.max(1)) as i64)
    }
}

/// Occupancy-only.
#[derive(Clone, Copy, Debug, Default)]
pub struct OccupancyOnly;

impl Generate for OccupancyOnly {
    fn name(&self) -> &'static str {
        "occupancy-only"
    }
    fn family(&self) -> &'static str {
        "portable"
    }
    fn estimate(&self, ctx: &GenContext<'_>, r: &Roles) -> Estimate {
        let threads = role(r, "threads", 256);
        let occ = role(r, "occupancy", 1).max(1) as u64;
        // A persistent grid: SMs × occupancy blocks, capped by the work available.
        let work_blocks = ctx.shape.n.div_ceil((threads * role(r, "vec", 1)).max(1) as u64).max(1);
        let blocks = (ctx.limits.sm_count as u64 * occ).min(work_blocks);
        Estimate {
            block: [threads.max(1) as u32, 1, 1],
            grid: [blocks as u32, 1, 1],
            shared_bytes: 0,
            dynamic_shared_bytes: 0,
            regs_per_thread: Some(32),
            tile: None,
        }
    }
    fn compatible(&self, _ctx: &GenContext<'_>, _r: &Roles) -> Result<(), PruneReason> {
        Ok(())
    }
}

/// A config set: ranges per role, per-arch overrides, the default.
#[derive(Clone, Debug, Default)]
pub struct ConfigSet {
    /// Role → values.
    pub ranges: BTreeMap<String, Vec<i64>>,
    /// The default.
    pub default: Roles,
}

const BUILTIN: &[(&str, &str)] = &[
    ("nvidia/matmul", include_str!("../../../configs/nvidia/matmul.toml")),
    ("nvidia/attention", include_str!("../../../configs/nvidia/attention.toml")),
    ("amd/matmul", include_str!("../../../configs/amd/matmul.toml")),
    ("amd/attention", include_str!("../../../configs/amd/attention.toml")),
    ("portable/elementwise", include_str!("../../../configs/portable/elementwise.toml")),
    ("portable/reduction", include_str!("../../../configs/portable/reduction.toml")),
    ("portable/matmul", include_str!("../../../configs/portable/matmul.toml")),
    ("portable/attention", include_str!("../../../configs/portable/attention.toml")),
];

fn ints(v: &toml::Value) -> Option<Vec<i64>> {
    match v {
        toml::Value::Array(a) => a.iter().map(|x| x.as_integer()).collect(),
        toml::Value::Integer(i) => Some(vec![*i]),
        _ => None,
    }
}

impl ConfigSet {
    /// Parses a set, applying the `[arch.<arch>]` overrides for `arch`.
    pub fn parse(text: &str, arch: &str, origin: &str) -> Result<ConfigSet, String> {
        let t: toml::Table = toml::from_str(text).map_err(|e| format!("{origin}: {e}"))?;
        let mut set = ConfigSet::default();
        let ranges = t.get("ranges").and_then(|r| r.as_table()).ok_or(format!("{origin}: missing [ranges]"))?;
        for (k, v) in ranges {
            set.ranges.insert(k.clone(), ints(v).ok_or(format!("{origin}: ranges.{k}: expected a list of integers"))?);
        }
        if let Some(over) = t.get("arch").and_then(|a| a.get(arch)).and_then(|a| a.as_table()) {
            for (k, v) in over {
                set.ranges.insert(k.clone(), ints(v).ok_or(format!("{origin}: arch.{arch}.{k}: expected a list of integers"))?);
            }
        }
        let d = t.get("default").and_then(|r| r.as_table()).ok_or(format!("{origin}: missing [default]"))?;
        for (k, v) in d {
            set.default.insert(k.clone(), v.as_integer().ok_or(format!("{origin}: default.{k}: expected an integer"))?);
        }
        // A default value the arch override removed is replaced by the range's first value.
        for (k, vals) in &set.ranges {
            if let Some(dv) = set.default.get_mut(k) {
                if !vals.contains(dv) {
                    *dv = vals[0];
                }
            }
        }
        Ok(set)
    }

    /// The set for a generator family, class and architecture: `$KERNTUNE_CONFIGS/<family>/<class>.toml`
    /// if present, else the compiled-in `configs/`. Memory-bound classes use the portable sets.
    pub fn load(family: &str, class: Class, arch: &str) -> Result<ConfigSet, String> {
        let family = if matches!(class, Class::Elementwise | Class::Reduction) { "portable" } else { family };
        let key = format!("{family}/{}", class.file());
        if let Some(dir) = std::env::var_os("KERNTUNE_CONFIGS") {
            let p = std::path::Path::new(&dir).join(format!("{key}.toml"));
            if let Ok(text) = std::fs::read_to_string(&p) {
                return ConfigSet::parse(&text, arch, &p.display().to_string());
            }
        }
        let text = BUILTIN.iter().find(|(k, _)| *k == key).map(|(_, t)| *t).ok_or(format!("no config set for {key}"))?;
        ConfigSet::parse(text, arch, &format!("configs/{key}.toml"))
    }
}

fn to_config(r: &Roles) -> Config {
    let mut c = Config { params: r.iter().map(|(k, v)| (k.clone(), Value::Int(*v))).collect(), knobs: Knobs::default() };
    let g = |k: &str| r.get(k).map(|&v| v as u32);
    c.knobs = Knobs {
        threads: g("threads"),
        num_warps: g("num_warps"),
        num_stages: g("num_stages"),
        occupancy: g("occupancy"),
        num_ctas: g("num_ctas"),
        maxnreg: None,
    };
    c
}

fn shape_rules(ctx: &GenContext<'_>, r: &Roles) -> Result<(), PruneReason> {
    if !matches!(ctx.class, Class::Matmul) {
        return Ok(());
    }
    let (bm, bn, bk) = (role(r, "tile_m", 64) as u64, role(r, "tile_n", 64) as u64, role(r, "tile_k", 32) as u64);
    let s = ctx.shape;
    if s.k > 0 && bk as f64 > ctx.prune.max_tile_ratio * s.k as f64 {
        return Err(PruneReason::Shape { tile: bk, dim: s.k, axis: "k".into() });
    }
    // Small M: a large BM wastes most of every block.
    if s.m <= 64 && bm > s.m.next_power_of_two().max(16) {
        return Err(PruneReason::ShapeRule {
            rule: format!("M = {} is small, so BM = {bm} wastes most of each block (BM ≤ {})", s.m, s.m.next_power_of_two().max(16)),
        });
    }
    // Near-square problems want near-square tiles.
    let (ratio_p, ratio_t) = (s.m as f64 / s.n.max(1) as f64, bm as f64 / bn as f64);
    if (0.5..=2.0).contains(&ratio_p) && !(0.25..=4.0).contains(&ratio_t) {
        return Err(PruneReason::ShapeRule { rule: format!("the problem is near-square ({}×{}) but the tile {bm}×{bn} is more than 4:1", s.m, s.n) });
    }
    Ok(())
}

/// Generates, prunes and orders the set for `ctx` with its vendor's generator.
pub fn generate(ctx: &GenContext<'_>) -> Result<Generated, String> {
    let gen = Generator::for_target(ctx.target, ctx.class);
    let set = ConfigSet::load(gen.family(), ctx.class, &ctx.target.arch)?;
    let keys: Vec<&String> = set.ranges.keys().collect();
    let mut idx = vec![0usize; keys.len()];
    let mut all: Vec<Roles> = Vec::new();
    'outer: loop {
        let mut r: Roles = keys.iter().zip(&idx).map(|(k, &i)| ((*k).clone(), set.ranges[*k][i])).collect();
        if r.contains_key("num_warps") && !r.contains_key("threads") {
            let warp = if gen.family() == "portable" { 32 } else { ctx.limits.warp_size as i64 };
            r.insert("threads".into(), role(&r, "num_warps", 4) * warp);
        }
        if matches!(ctx.class, Class::Matmul) {
            // L2 swizzle group: GROUP_SIZE_M ≈ √(N ÷ BN), a power of two in [1, 16].
            let g = ((ctx.shape.n as f64 / role(&r, "tile_n", 64) as f64).sqrt().max(1.0) as u64).next_power_of_two().min(16);
            r.insert("group_m".into(), g as i64);
        }
        all.push(r);
        for p in (0..keys.len()).rev() {
            idx[p] += 1;
            if idx[p] < set.ranges[keys[p]].len() {
                continue 'outer;
            }
            idx[p] = 0;
        }
        break;
    }
    let mut default = set.default.clone();
    if default.contains_key("num_warps") && !default.contains_key("threads") {
        let warp = if gen.family() == "portable" { 32 } else { ctx.limits.warp_size as i64 };
        default.insert("threads".into(), role(&default, "num_warps", 4) * warp);
    }
    if matches!(ctx.class, Class::Matmul) {
        let g = ((ctx.shape.n as f64 / role(&default, "tile_n", 64) as f64).sqrt().max(1.0) as u64).next_power_of_two().min(16);
        default.insert("group_m".into(), g as i64);
    }
    if !all.contains(&default) {
        all.push(default.clone());
    }
    let mut candidates = Vec::new();
    let mut pruned = Vec::new();
    for r in all {
        let mut est = gen.estimate(ctx, &r);
        if r == default {
            est.tile = None;
        }
        // Shape rules are heuristics: the default is exempt (tuning never ends slower than it),
        // only hard limits can drop it.
        let shape = if r == default { Ok(()) } else { shape_rules(ctx, &r) };
        let check = gen.compatible(ctx, &r).and(shape).and_then(|_| prune_before(ctx.limits, &est, &ctx.prune));
        let cfg = to_config(&r);
        match check {
            Ok(()) => {
                let threads = est.block[0];
                let occ = ctx.limits.occupancy(threads, est.regs_per_thread, est.shared_bytes).blocks_per_sm;
                let (flops, bytes) = work(ctx, &r);
                let input = ModelInput { flops, bytes, blocks: est.grid.iter().map(|&g| g as u64).product(), occupancy: occ };
                candidates.push((cfg, model::estimate(ctx.limits, &input, ctx.elem_bytes == 2)));
            }
            Err(reason) => pruned.push((cfg, reason)),
        }
    }
    candidates.sort_by(|a, b| a.1.unwrap_or(f64::INFINITY).total_cmp(&b.1.unwrap_or(f64::INFINITY)).then_with(|| a.0.key().cmp(&b.0.key())));
    let dcfg = to_config(&default);
    let default_included = candidates.iter().any(|c| c.0 == dcfg);
    Ok(Generated { generator: gen.name().into(), candidates, pruned, default: dcfg, default_included })
}

/// FLOPs and DRAM bytes of the whole problem for a role assignment (tiles re-read A and B).
fn work(ctx: &GenContext<'_>, r: &Roles) -> (f64, f64) {
    let s = ctx.shape;
    let e = ctx.elem_bytes as f64;
    match ctx.class {
        Class::Matmul => {
            let (bm, bn) = (role(r, "tile_m", 64) as f64, role(r, "tile_n", 64) as f64);
            let (m, n, k) = (s.m as f64, s.n as f64, s.k as f64);
            (2.0 * m * n * k, e * (m * k * (n / bn).ceil() + k * n * (m / bm).ceil() + m * n))
        }
        Class::Attention => {
            let (m, n, d) = (s.m as f64, s.n as f64, s.k as f64);
            let bm = role(r, "tile_m", 64) as f64;
            (4.0 * m * n * d, e * (m * d * 2.0 + n * d * 2.0 * (m / bm).ceil()))
        }
        Class::Elementwise | Class::Reduction => (s.n as f64, 3.0 * e * s.n as f64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::PRESETS;

    fn ctx<'a>(t: &'a Target, l: &'a Limits, class: Class, shape: Shape) -> GenContext<'a> {
        GenContext { target: t, limits: l, class, shape, elem_bytes: 2, prune: PruneOptions::default() }
    }

    #[test]
    fn every_generated_config_fits_and_the_default_is_included() {
        let shape = Shape { m: 4096, n: 4096, k: 4096 };
        for p in PRESETS {
            let (t, l) = (p.target(), (p.limits)());
            for class in [Class::Elementwise, Class::Reduction, Class::Matmul, Class::Attention] {
                let s = if class == Class::Attention { Shape { m: 4096, n: 4096, k: 128 } } else { shape };
                let g = generate(&ctx(&t, &l, class, s)).unwrap();
                assert!(!g.candidates.is_empty(), "{} {class:?}", p.name);
                assert!(g.default_included, "{} {class:?}: default pruned: {:?}", p.name, g.pruned.iter().find(|x| x.0 == g.default));
                let gen = Generator::for_target(&t, class);
                for (c, _) in &g.candidates {
                    let r: Roles = c.params.iter().map(|(k, v)| (k.clone(), v.as_i64().unwrap())).collect();
                    let est = gen.estimate(&ctx(&t, &l, class, s), &r);
                    assert!(l.check_block(est.block).is_ok() && l.check_shared(est.shared_bytes).is_ok(), "{} {class:?} {c}", p.name);
                }
            }
        }
    }

    #[test]
    fn amd_sets_hold_only_stages_0_or_1() {
        for name in ["mi250x", "mi300x", "rx7900xtx"] {
            let (t, l) = Limits::preset(name).unwrap();
            for class in [Class::Matmul, Class::Attention] {
                let g = generate(&ctx(&t, &l, class, Shape { m: 4096, n: 4096, k: 128 })).unwrap();
                assert_eq!(g.generator, "amd");
                assert!(g.candidates.iter().all(|(c, _)| matches!(c.knobs.num_stages, Some(0) | Some(1))), "{name} {class:?}");
            }
        }
        let (t, l) = Limits::preset("rx7900xtx").unwrap();
        let g = generate(&ctx(&t, &l, Class::Matmul, Shape { m: 4096, n: 4096, k: 4096 })).unwrap();
        assert!(g.candidates.iter().all(|(c, _)| c.get_i64("matrix_instr_nonkdim") == Some(0)), "RDNA has no MFMA");
        assert!(g.candidates.iter().all(|(c, _)| c.get_i64("num_warps").unwrap() <= 16));
    }

    #[test]
    fn counts_are_stable() {
        // Snapshot: a change to configs/ or the rules shows up here on purpose.
        let mut got = Vec::new();
        for name in ["a100", "h100", "mi300x", "rx7900xtx", "llvmpipe"] {
            let (t, l) = Limits::preset(name).unwrap();
            let g = generate(&ctx(&t, &l, Class::Matmul, Shape { m: 4096, n: 4096, k: 4096 })).unwrap();
            got.push(format!("{name}:{}+{}", g.candidates.len(), g.pruned.len()));
        }
        assert_eq!(got.join(" "), "a100:277+155 h100:740+412 mi300x:904+248 rx7900xtx:412+164 llvmpipe:138+54");
    }

    #[test]
    fn pruning_reasons_on_edge_cases() {
        let (t, l) = Limits::preset("h100").unwrap();
        let c = ctx(&t, &l, Class::Matmul, Shape { m: 16, n: 4096, k: 4096 });
        let g = generate(&c).unwrap();
        assert!(g.candidates.iter().all(|(c, _)| c.get_i64("tile_m").unwrap() <= 16 || c == &g.default), "small M → small BM");
        assert!(g.pruned.iter().any(|(_, r)| matches!(r, PruneReason::ShapeRule { rule } if rule.contains("small"))));
        assert!(g.default_included, "the default is exempt from shape heuristics");
        let r: Roles = [("tile_m", 256), ("tile_n", 256), ("tile_k", 64), ("num_warps", 4), ("num_stages", 5), ("num_ctas", 1)]
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect();
        let big = ctx(&t, &l, Class::Matmul, Shape { m: 4096, n: 4096, k: 4096 });
        let est = NvidiaMultiStage.estimate(&big, &r);
        assert_eq!(est.shared_bytes, 5 * (256 * 64 + 64 * 256) * 2);
        assert_eq!(prune_before(&l, &est, &big.prune).unwrap_err().category(), "shared_memory");
        let few: Roles = [("tile_m", 32), ("tile_n", 32), ("num_warps", 8)].iter().map(|(k, v)| (k.to_string(), *v)).collect();
        assert_eq!(NvidiaMultiStage.compatible(&big, &few).unwrap_err().category(), "threads");
        let (ta, la) = Limits::preset("a100").unwrap();
        let cl: Roles = [("tile_m", 128), ("tile_n", 128), ("num_warps", 4), ("num_ctas", 2)].iter().map(|(k, v)| (k.to_string(), *v)).collect();
        assert!(NvidiaMultiStage.compatible(&ctx(&ta, &la, Class::Matmul, Shape { m: 4096, n: 4096, k: 4096 }), &cl).is_err(), "clusters need sm_90");
        assert_eq!(Shape::parse("4096x2048x512"), Some(Shape { m: 4096, n: 2048, k: 512 }));
    }
}
