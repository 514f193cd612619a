//! How the adaptive transfer search fares when its sources mislead: each recorded GPU space of
//! a kernel is held out in turn and tuned for 20 evaluations (or `BUDGET`) from four kinds of priors — the
//! other GPUs (leave one out), only the other vendor's GPUs, the other GPUs with their times
//! inverted (their fastest config is this one's slowest), and the other GPUs with their times
//! shuffled over the configs (no information at all) — against the same search without
//! priors. The numbers are in docs/benchmarks.md.
//!
//! ```text
//! cargo run --release -p kerntune-core --example misleading_priors [SPACES_DIR] [SEEDS] [IN_FLIGHT] [BUDGET] [SHUFFLES]
//! ```
//!
//! The shuffled column is the mean over `SHUFFLES` (default 20) permutations of the sources'
//! times, each drawn from the names of the held-out space and the source (so a space added to
//! the folder changes no other case's draws); the summary says how far the worst single
//! permutation fell. One permutation's result moves by a quarter of the optimum from draw to
//! draw on the convolution MI250X, so the mean needs many: over 5 that case read −0.095 one at
//! a time and −0.196 with 16 in flight, over 20 −0.062 and −0.118.
//!
//! `IN_FLIGHT` (default 1) proposals are kept in flight: a batch is asked before the outcomes of
//! the last are in; `jN` keeps what a tune with N compile threads keeps as it goes
//! ([`Flight::Jobs`]). `BUDGET` (default
//! 20) evaluations per search.
//!
//! `SPACES_DIR` (default `../shared/spaces/gpus`) holds `KERNEL_GPU.json.gz` files; devices
//! whose name starts with "NVIDIA" are one vendor, every other device the other.

use kerntune_core::search::Prior;
use kerntune_core::sim::recorded::RecordedSpace;
use kerntune_core::sim::simulate::{prior_for, score, score_transfer, spaces_by_kernel, Flight};
use kerntune_core::testing;
use std::sync::Arc;

/// Evaluations per search unless the command line says otherwise.
const BUDGET: usize = 20;
const BASE: &str = "hybrid";

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let dir: String = testing::arg(&mut args, "SPACES_DIR", testing::SHARED_GPU_SPACES.into())?;
    let seeds: usize = testing::arg(&mut args, "SEEDS", 50)?;
    let parallel: Flight = testing::arg(&mut args, "IN_FLIGHT", Flight::Fixed(1))?;
    let budget: usize = testing::arg(&mut args, "BUDGET", BUDGET)?.max(1);
    let draws: u64 = testing::arg(&mut args, "SHUFFLES", 20)?.max(1);
    let kernels = spaces_by_kernel(std::path::Path::new(&dir))?;
    let nvidia = |s: &RecordedSpace| s.device.starts_with("NVIDIA");
    println!(
        "fraction of the optimum after {budget} evaluations, mean over {seeds} seeds, {parallel}; shuffled: mean over {draws} permutations; Δ = adaptive − without priors"
    );
    println!("{:<22} {:>8} | {:>15} | {:>15} | {:>15} | {:>15}", "held out", "no prior", "other GPUs", "other vendor", "inverted", "shuffled");
    let (mut deltas, mut reached, mut cases) = (Vec::new(), 0, 0);
    // The worst single permutation of the shuffled sources: Δ and the case.
    let mut worst_draw = (f64::INFINITY, String::new());
    for spaces in kernels.values().filter(|s| s.len() > 1) {
        for (h, held) in spaces.iter().enumerate() {
            let others: Vec<&RecordedSpace> = spaces.iter().enumerate().filter(|(o, _)| *o != h).map(|(_, s)| s).collect();
            let inverted: Vec<RecordedSpace> = others.iter().map(|s| testing::inverted(s)).collect();
            let vendor: Vec<&RecordedSpace> = others.iter().copied().filter(|s| nvidia(s) != nvidia(held)).collect();
            let none = score(held, BASE, budget, seeds, 1, false, parallel)?.at(budget).0;
            let mut line = format!("{:<22} {none:>8.3}", held.name);
            let scenarios: [Vec<&RecordedSpace>; 3] = [others.clone(), vendor, inverted.iter().collect()];
            let adapt = |sources: &[&RecordedSpace]| -> Result<f64, String> {
                let prior: Arc<Prior> = Arc::new(prior_for(held, sources));
                Ok(score_transfer(held, &prior, BASE, budget, seeds, 1, parallel)?.at(budget).0)
            };
            // The four columns: the three kinds of sources above, then the shuffled ones.
            for k in 0..4 {
                let adaptive = if let Some(sources) = scenarios.get(k) {
                    if sources.is_empty() {
                        line += &format!(" | {:>15}", "—");
                        continue;
                    }
                    adapt(sources)?
                } else {
                    // Several permutations: one draw says little of what shuffled sources do.
                    let mut sum = 0.0;
                    for d in 0..draws {
                        let shuffled = testing::shuffled_for(held, &others, d);
                        let a = adapt(&shuffled.iter().collect::<Vec<_>>())?;
                        if a - none < worst_draw.0 {
                            worst_draw = (a - none, format!("{}, permutation {d}", held.name));
                        }
                        sum += a;
                    }
                    sum / draws as f64
                };
                line += &format!(" | {adaptive:.3} (Δ {:+.3})", adaptive - none);
                if k == 0 {
                    reached += usize::from(adaptive >= 0.98);
                    cases += 1;
                } else {
                    deltas.push(adaptive - none);
                }
            }
            println!("{line}");
        }
    }
    let worst = deltas.iter().copied().fold(f64::INFINITY, f64::min);
    let mean = deltas.iter().sum::<f64>() / deltas.len().max(1) as f64;
    let within = deltas.iter().filter(|d| **d >= -0.05).count();
    println!(
        "leave one out: ≥ 0.98 in {reached} of {cases}; misleading priors: Δ mean {mean:+.3}, worst {worst:+.3}, within 0.05 in {within} of {}; worst single permutation Δ {:+.3} ({})",
        deltas.len(),
        worst_draw.0,
        worst_draw.1
    );
    Ok(())
}
