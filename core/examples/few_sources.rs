//! How the adaptive transfer search fares with a small fleet: each recorded GPU space of a
//! kernel is held out in turn and tuned for 20 evaluations (or `BUDGET`) from every set of `K` of the other
//! GPUs (one source: every other GPU alone; two: every pair), against the same search without
//! priors. A library that ships tuned kernels may hold only one or two other GPUs' results when
//! a new one arrives. The numbers are in docs/benchmarks.md.
//!
//! ```text
//! cargo run --release -p kerntune-core --example few_sources [SPACES_DIR] [K] [SEEDS] [IN_FLIGHT] [BUDGET]
//! ```
//!
//! `IN_FLIGHT` (default 1) proposals are kept in flight; `jN` keeps what a tune with N compile
//! threads keeps as it goes ([`Flight::Jobs`]). `BUDGET` (default 20) evaluations per search.
//!
//! `SPACES_DIR` (default `../shared/spaces/gpus`) holds `KERNEL_GPU.json.gz` files.

use kerntune_core::search::Prior;
use kerntune_core::sim::recorded::RecordedSpace;
use kerntune_core::sim::simulate::{prior_for, score, score_transfer, spaces_by_kernel, Flight};
use kerntune_core::testing;
use std::sync::Arc;

/// Evaluations per search unless the command line says otherwise.
const BUDGET: usize = 20;
const BASE: &str = "hybrid";

/// Every subset of `k` of `items`, in order.
fn subsets(items: &[usize], k: usize) -> Vec<Vec<usize>> {
    if k == 0 {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for (i, &first) in items.iter().enumerate() {
        for mut rest in subsets(&items[i + 1..], k - 1) {
            rest.insert(0, first);
            out.push(rest);
        }
    }
    out
}

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let dir: String = testing::arg(&mut args, "SPACES_DIR", testing::SHARED_GPU_SPACES.into())?;
    let k: usize = testing::arg(&mut args, "K", 1)?;
    let seeds: usize = testing::arg(&mut args, "SEEDS", 50)?;
    let parallel: Flight = testing::arg(&mut args, "IN_FLIGHT", Flight::Fixed(1))?;
    let budget: usize = testing::arg(&mut args, "BUDGET", BUDGET)?.max(1);
    let kernels = spaces_by_kernel(std::path::Path::new(&dir))?;
    // A GPU's short name: what follows the kernel in the file name (`convolution_A100` → `A100`).
    let short = |s: &RecordedSpace| s.name.split_once('_').map_or(s.name.clone(), |(_, g)| g.to_string());
    println!("fraction of the optimum after {budget} evaluations, mean over {seeds} seeds, from every set of {k} other GPU(s), {parallel}");
    let (mut cases, mut reached, mut within) = (0, 0, 0);
    let mut deltas = Vec::new();
    let mut worst = (f64::INFINITY, String::new());
    for spaces in kernels.values().filter(|s| s.len() > k) {
        for (h, held) in spaces.iter().enumerate() {
            let none = score(held, BASE, budget, seeds, 1, false, parallel)?.at(budget).0;
            let others: Vec<usize> = (0..spaces.len()).filter(|&o| o != h).collect();
            let mut line = format!("{:<22} no prior {none:.3} |", held.name);
            for set in subsets(&others, k) {
                let sources: Vec<&RecordedSpace> = set.iter().map(|&i| &spaces[i]).collect();
                let prior: Arc<Prior> = Arc::new(prior_for(held, &sources));
                let adaptive = score_transfer(held, &prior, BASE, budget, seeds, 1, parallel)?.at(budget).0;
                let names: Vec<String> = sources.iter().map(|s| short(s)).collect();
                line += &format!(" {} {adaptive:.3}", names.join("+"));
                let delta = adaptive - none;
                cases += 1;
                reached += usize::from(adaptive >= 0.98);
                within += usize::from(delta >= -0.05);
                deltas.push(delta);
                if delta < worst.0 {
                    worst = (delta, format!("{} from {}", held.name, names.join("+")));
                }
            }
            println!("{line}");
        }
    }
    let mean = deltas.iter().sum::<f64>() / deltas.len().max(1) as f64;
    println!(
        "{cases} cases: ≥ 0.98 in {reached}; within 0.05 of no priors or better in {within}; Δ (adaptive − no prior) mean {mean:+.3}, worst {:+.3} ({})",
        worst.0, worst.1
    );
    Ok(())
}
