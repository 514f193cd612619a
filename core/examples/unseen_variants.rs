//! How the adaptive transfer search fares on devices made unlike its sources by changing the
//! held-out space itself, not the sources: each recorded GPU space of a kernel is held out in
//! turn with the other GPUs as priors (as in leave one out), and tuned for 20 evaluations (or `BUDGET`) in
//! four variants of it, against the same search without priors on the same variant:
//! - as recorded (leave one out);
//! - without the sources' favourites: every config some source ranks among its best 2 % is
//!   gone, as on a device whose limits rule out the region the fleet likes (less shared
//!   memory, fewer registers);
//! - without the held-out optimum's value of its most decisive parameter (the one whose
//!   removal costs the optimum most): the best config must be found elsewhere;
//! - a random half of the configs (two halves): the optimum and the favourites may be gone.
//!
//! Scores are fractions of each variant's own optimum. The numbers are in docs/benchmarks.md.
//!
//! `IN_FLIGHT` (default 1) proposals are kept in flight; `BUDGET` (default 20) evaluations per
//! search.
//!
//! ```text
//! cargo run --release -p kerntune-core --example unseen_variants [SPACES_DIR] [SEEDS] [IN_FLIGHT] [BUDGET]
//! ```

use kerntune_core::search::Prior;
use kerntune_core::sim::recorded::RecordedSpace;
use kerntune_core::sim::simulate::{prior_for, score, score_transfer, spaces_by_kernel};
use kerntune_core::testing;
use std::sync::Arc;

/// Evaluations per search unless the command line says otherwise.
const BUDGET: usize = 20;
const BASE: &str = "hybrid";
/// The share of each source's ranking counted as its favourites.
const FAVOURITES: f64 = 0.02;

/// `space` with only the configs `keep` says.
fn subset(space: &RecordedSpace, suffix: &str, keep: impl Fn(usize) -> bool) -> RecordedSpace {
    let idx: Vec<usize> = (0..space.len()).filter(|&i| keep(i)).collect();
    RecordedSpace {
        name: format!("{} {suffix}", space.name),
        coords: pick(&space.coords, &idx),
        times: pick(&space.times, &idx),
        samples: pick(&space.samples, &idx),
        failures: pick(&space.failures, &idx),
        compile_s: pick(&space.compile_s, &idx),
        eval_s: pick(&space.eval_s, &idx),
        ..space.clone()
    }
}

/// The entries of `v` at `idx` (all of `v` where it is not one per config).
fn pick<T: Clone>(v: &[T], idx: &[usize]) -> Vec<T> {
    if idx.iter().all(|&i| i < v.len()) {
        idx.iter().map(|&i| v[i].clone()).collect()
    } else {
        v.to_vec()
    }
}

/// The configs' keys (parameter values joined by commas), to find one space's configs in another.
fn keys(space: &RecordedSpace) -> Vec<String> {
    space.coords.iter().map(|c| space.params.iter().zip(c).map(|(p, &v)| p.values[v as usize].to_string()).collect::<Vec<_>>().join(",")).collect()
}

/// The configs some source ranks among its best [`FAVOURITES`].
fn favourites(sources: &[&RecordedSpace]) -> std::collections::HashSet<String> {
    let mut out = std::collections::HashSet::new();
    for s in sources {
        let k = keys(s);
        let mut ok: Vec<(f64, usize)> = s.times.iter().enumerate().filter_map(|(i, t)| t.filter(|t| t.is_finite() && *t > 0.0).map(|t| (t, i))).collect();
        ok.sort_by(|a, b| a.0.total_cmp(&b.0));
        let n = ((ok.len() as f64 * FAVOURITES).ceil() as usize).max(1);
        out.extend(ok[..n].iter().map(|&(_, i)| k[i].clone()));
    }
    out
}

/// The held-out space without its optimum's value of the parameter whose removal costs the
/// optimum most.
fn without_decisive(space: &RecordedSpace) -> RecordedSpace {
    let best = |keep: &dyn Fn(usize) -> bool| (0..space.len()).filter(|&i| keep(i)).filter_map(|i| space.times[i]).fold(f64::INFINITY, f64::min);
    let opt = (0..space.len())
        .filter(|&i| space.times[i].is_some())
        .min_by(|&a, &b| space.times[a].unwrap().total_cmp(&space.times[b].unwrap()))
        .expect("a measured config");
    let (p, _) = (0..space.params.len())
        .filter(|&p| space.params[p].values.len() > 1)
        .map(|p| (p, best(&|i| space.coords[i][p] != space.coords[opt][p])))
        .filter(|(_, b)| b.is_finite())
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .expect("a parameter with two values");
    let v = space.coords[opt][p];
    subset(space, &format!("w/o {}={}", space.params[p].name, space.params[p].values[v as usize]), |i| space.coords[i][p] != v)
}

/// A random half (xorshift, seeded).
fn half(space: &RecordedSpace, seed: u64) -> RecordedSpace {
    let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ seed.wrapping_mul(0x2545_F491_4F6C_DD1D);
    let keep: Vec<bool> = (0..space.len())
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x & 1 == 1
        })
        .collect();
    subset(space, &format!("half {seed}"), |i| keep[i])
}

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let dir: String = testing::arg(&mut args, "SPACES_DIR", testing::SHARED_GPU_SPACES.into())?;
    let seeds: usize = testing::arg(&mut args, "SEEDS", 50)?;
    let parallel: usize = testing::arg(&mut args, "IN_FLIGHT", 1)?.max(1);
    let budget: usize = testing::arg(&mut args, "BUDGET", BUDGET)?.max(1);
    let kernels = spaces_by_kernel(std::path::Path::new(&dir))?;
    println!("fraction of each variant's optimum after {budget} evaluations, mean over {seeds} seeds, {parallel} in flight: without priors → adaptive (Δ)");
    let (mut deltas, mut reached, mut cases) = (Vec::new(), 0, 0);
    for spaces in kernels.values().filter(|s| s.len() > 1) {
        for (h, held) in spaces.iter().enumerate() {
            let others: Vec<&RecordedSpace> = spaces.iter().enumerate().filter(|(o, _)| *o != h).map(|(_, s)| s).collect();
            let fav = favourites(&others);
            let k = keys(held);
            let variants = [
                subset(held, "as recorded", |_| true),
                subset(held, "w/o the sources' favourites", |i| !fav.contains(&k[i])),
                without_decisive(held),
                half(held, 1),
                half(held, 2),
            ];
            for v in &variants {
                let none = score(v, BASE, budget, seeds, 1, false, parallel)?.at(budget).0;
                let prior: Arc<Prior> = Arc::new(prior_for(v, &others));
                let adaptive = score_transfer(v, &prior, BASE, budget, seeds, 1, parallel)?.at(budget).0;
                println!("{:<58} {:>5} configs  {none:.3} → {adaptive:.3} ({:+.3})", v.name, v.len(), adaptive - none);
                deltas.push(adaptive - none);
                reached += usize::from(adaptive >= 0.98);
                cases += 1;
            }
        }
    }
    let worst = deltas.iter().copied().fold(f64::INFINITY, f64::min);
    let below = deltas.iter().filter(|d| **d < 0.0).count();
    let within = deltas.iter().filter(|d| **d >= -0.05).count();
    println!("{cases} cases: ≥ 0.98 in {reached}; below no prior in {below}; within 0.05 in {within}; worst Δ {worst:+.3}");
    Ok(())
}
