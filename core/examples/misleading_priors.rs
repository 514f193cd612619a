//! How the adaptive transfer search fares when its sources mislead: each recorded GPU space of
//! a kernel is held out in turn and tuned for 20 evaluations from four kinds of priors — the
//! other GPUs (leave one out), only the other vendor's GPUs, the other GPUs with their times
//! inverted (their fastest config is this one's slowest), and the other GPUs with their times
//! shuffled over the configs (no information at all) — against the same search without
//! priors. The numbers are in docs/benchmarks.md.
//!
//! ```text
//! cargo run --release -p kerntune-core --example misleading_priors [SPACES_DIR] [SEEDS]
//! ```
//!
//! `SPACES_DIR` (default `../shared/spaces/gpus`) holds `KERNEL_GPU.json.gz` files; devices
//! whose name starts with "NVIDIA" are one vendor, every other device the other.

use kerntune_core::search::{by_name, Prior, Transfer};
use kerntune_core::sim::recorded::RecordedSpace;
use kerntune_core::sim::simulate::{prior_for, score, score_with};
use kerntune_core::testing;
use std::collections::BTreeMap;
use std::sync::Arc;

const BUDGET: usize = 20;
const BASE: &str = "hybrid";

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let dir = args.next().unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/spaces/gpus").into());
    let seeds: usize = args.next().map(|s| s.parse().map_err(|e| format!("SEEDS: {e}"))).transpose()?.unwrap_or(50);
    let mut kernels: BTreeMap<String, Vec<RecordedSpace>> = BTreeMap::new();
    let mut files: Vec<_> = std::fs::read_dir(&dir).map_err(|e| format!("{dir}: {e}"))?.filter_map(|e| e.ok().map(|e| e.path())).collect();
    files.sort();
    for f in files.iter().filter(|f| f.to_string_lossy().ends_with(".json.gz") || f.extension().is_some_and(|e| e == "json")) {
        let kernel = f.file_name().unwrap_or_default().to_string_lossy().split('_').next().unwrap_or_default().to_string();
        kernels.entry(kernel).or_default().push(RecordedSpace::load(f).map_err(|e| format!("{}: {e}", f.display()))?);
    }
    let nvidia = |s: &RecordedSpace| s.device.starts_with("NVIDIA");
    println!("fraction of the optimum after {BUDGET} evaluations, mean over {seeds} seeds; Δ = adaptive − without priors");
    println!("{:<22} {:>8} | {:>15} | {:>15} | {:>15} | {:>15}", "held out", "no prior", "other GPUs", "other vendor", "inverted", "shuffled");
    let (mut deltas, mut reached, mut cases) = (Vec::new(), 0, 0);
    for spaces in kernels.values().filter(|s| s.len() > 1) {
        for (h, held) in spaces.iter().enumerate() {
            let others: Vec<&RecordedSpace> = spaces.iter().enumerate().filter(|(o, _)| *o != h).map(|(_, s)| s).collect();
            let inverted: Vec<RecordedSpace> = others.iter().map(|s| testing::inverted(s)).collect();
            let shuffled: Vec<RecordedSpace> = others.iter().enumerate().map(|(j, s)| testing::shuffled(s, (h * 97 + j) as u64)).collect();
            let vendor: Vec<&RecordedSpace> = others.iter().copied().filter(|s| nvidia(s) != nvidia(held)).collect();
            let none = score(held, BASE, BUDGET, seeds, 1, false, 1)?.at(BUDGET).0;
            let mut line = format!("{:<22} {none:>8.3}", held.name);
            let scenarios: [Vec<&RecordedSpace>; 4] = [others.clone(), vendor, inverted.iter().collect(), shuffled.iter().collect()];
            for (k, sources) in scenarios.iter().enumerate() {
                if sources.is_empty() {
                    line += &format!(" | {:>15}", "—");
                    continue;
                }
                let prior: Arc<Prior> = Arc::new(prior_for(held, sources));
                let adaptive = score_with(
                    held,
                    "transfer",
                    |s| Box::new(Transfer::new(prior.clone(), by_name(BASE, s).expect("a known strategy"))),
                    BUDGET,
                    seeds,
                    1,
                    false,
                    1,
                )?
                .at(BUDGET)
                .0;
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
        "leave one out: ≥ 0.98 in {reached} of {cases}; misleading priors: Δ mean {mean:+.3}, worst {worst:+.3}, within 0.05 in {within} of {}",
        deltas.len()
    );
    Ok(())
}
