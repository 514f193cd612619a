//! Identical seeds give identical scores, today and after every speed-up: the traces of every
//! strategy on recorded spaces, as recorded in `tests/data/recorded_scores.json` (fraction of
//! the optimum after each evaluation, to 1e-12). A change that alters a search on purpose records
//! them again with `KERNTUNE_RECORD_SCORES=1 cargo test -p kerntune-core --test recorded_scores`
//! and says so in its commit.

use kerntune_core::sim::simulate::trace;
use kerntune_core::spec::settings::STRATEGIES;
use std::collections::BTreeMap;
use std::path::Path;

/// (space under ../shared/spaces, budget, noise, proposals in flight)
const RUNS: &[(&str, usize, bool, usize)] = &[
    ("h200_sgemm_410.json", 80, false, 1),
    ("h200_sgemm_410.json", 60, true, 4),
    ("convolution_A100.json.gz", 60, false, 1),
    ("gpus/dedispersion_W7800.json.gz", 40, false, 1),
];
const SEEDS: [u64; 2] = [1, 8];

#[test]
fn identical_seeds_give_the_recorded_scores() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/recorded_scores.json");
    let mut now: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for &(name, budget, noise, parallel) in RUNS {
        let Some(space) = kerntune_core::testing::shared_space(name) else { return };
        for st in STRATEGIES.iter().map(|s| s.name).filter(|s| *s != "exhaustive") {
            for seed in SEEDS {
                let t = trace(&space, st, budget, seed, noise, parallel).unwrap();
                now.insert(format!("{name} {st} seed={seed} noise={noise} parallel={parallel}"), t);
            }
        }
    }
    if std::env::var("KERNTUNE_RECORD_SCORES").is_ok() {
        std::fs::write(&file, serde_json::to_string_pretty(&now).unwrap() + "\n").unwrap();
        return;
    }
    let recorded: BTreeMap<String, Vec<f64>> = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(recorded.keys().collect::<Vec<_>>(), now.keys().collect::<Vec<_>>(), "the same runs");
    for (k, v) in &recorded {
        // Exact but for the last digit JSON may lose (serde_json parses floats to within an ulp).
        let same = v.len() == now[k].len() && v.iter().zip(&now[k]).all(|(a, b)| (a - b).abs() <= 1e-12 * a.abs().max(1.0));
        assert!(same, "{k}: the trace differs from the recorded one:\n recorded {v:?}\n now      {:?}", now[k]);
    }
}
