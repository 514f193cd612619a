//! Bad input and huge spaces on the fake backend: restrictions that cannot be evaluated are
//! errors naming the config, a default outside its values and contradictory settings are
//! refused, and a space of billions of configs is searched within a budget by sampling, with
//! memory bounded by the budget (the candidates held), not by the space; and every shipped spec,
//! mutated line by line, is accepted or refused with a message, never a panic.

use kerntune_core::fake::example;
use kerntune_core::*;

fn huge() -> TuneJob {
    let (_, mut job) = example();
    // 4 × 3 × 16^8 ≈ 5.2e10 combinations.
    for i in 0..8 {
        job.params.push(Param::new(format!("p{i}"), (1..=16).collect::<Vec<i64>>()));
    }
    job.restrictions = vec!["p0 + p1 <= 24".into(), "p2 * p3 % 2 == 0".into()];
    job
}

#[test]
fn a_space_of_billions_is_sampled_within_the_budget() {
    let (tuner, _) = example();
    for strategy in ["random", "hybrid", "annealing"] {
        let o = TuneOptions {
            strategy: strategy.into(),
            budget: Budget { max_evals: Some(20), ..Default::default() },
            compile_threads: Some(2),
            ..Default::default()
        };
        let r = tuner.tune(&huge(), &o).unwrap();
        assert!(r.sampled, "{strategy}");
        assert!(r.cartesian > 50_000_000_000);
        assert_eq!(r.evaluated, 20, "{strategy}");
        // The pool: 64 per evaluation, at least 2048, plus the default.
        assert!(r.candidates <= 2_049, "{strategy}: {} candidates held", r.candidates);
        // 220/256 × 3/4 ≈ 0.645 of the space is valid; the estimate is close.
        let share = r.valid as f64 / r.cartesian as f64;
        assert!((0.60..0.70).contains(&share), "{share}");
    }
    // An exhaustive search with a count takes the first configs in order, lazily.
    let o = TuneOptions { budget: Budget { max_evals: Some(10), ..Default::default() }, compile_threads: Some(2), ..Default::default() };
    let r = tuner.tune(&huge(), &o).unwrap();
    assert_eq!((r.evaluated, r.sampled), (10, false));
    assert!(r.candidates <= 11);
    // Without a budget it would hold billions: refused before enumerating, with what to do.
    let e = tuner.tune(&huge(), &TuneOptions::default()).unwrap_err().to_string();
    assert!(e.contains("--budget") && e.contains("too many"), "{e}");
}

#[test]
fn a_restriction_that_cannot_be_evaluated_names_the_config() {
    let (tuner, mut job) = example();
    job.restrictions = vec!["n // (bx - 32) > 1".into()];
    let e = tuner.tune(&job, &TuneOptions::default()).unwrap_err().to_string();
    assert!(e.contains("restriction 0") && e.contains("n // (bx - 32) > 1") && e.contains("bx=32") && e.contains("division by zero"), "{e}");
    // Overflow is an error too, not "false".
    job.restrictions = vec!["(-2**63) % -1 == 0".into()];
    let e = tuner.tune(&job, &TuneOptions::default()).unwrap_err().to_string();
    assert!(e.contains("restriction 0") && e.contains("overflow"), "{e}");
}

#[test]
fn a_default_outside_its_values_is_refused() {
    let (tuner, mut job) = example();
    job.default = Some(vec![("bx".into(), Value::Int(48))]);
    let e = tuner.tune(&job, &TuneOptions::default()).unwrap_err().to_string();
    assert!(e.contains("default") && e.contains("`bx = 48` is not among its values [32, 64, 128, 256]"), "{e}");
}

#[test]
fn contradictory_or_non_finite_settings_are_refused() {
    let (tuner, job) = example();
    let bad = |b: BenchOptions| tuner.tune(&job, &TuneOptions { bench: b, ..Default::default() }).unwrap_err().to_string();
    let e = bad(BenchOptions { min_reps: 10, max_reps: 3, ..Default::default() });
    assert!(e.contains("bench.min_reps") && e.contains("more than max_reps"), "{e}");
    let e = bad(BenchOptions { max_seconds: f64::NAN, ..Default::default() });
    assert!(e.contains("bench.max_seconds"), "{e}");
    let e = bad(BenchOptions { tie_tolerance: -0.1, ..Default::default() });
    assert!(e.contains("bench.tie_tolerance"), "{e}");
    let e = tuner
        .tune(&job, &TuneOptions { prune: PruneOptions { max_tile_ratio: f64::INFINITY, ..Default::default() }, ..Default::default() })
        .unwrap_err()
        .to_string();
    assert!(e.contains("prune.max_tile_ratio"), "{e}");
}

#[test]
fn buffers_larger_than_the_device_are_refused_before_anything_is_allocated() {
    let (tuner, mut job) = example();
    // Two buffers of 2^35 floats: 128 GiB each, on an 80 GiB H100. Allocating them on the host
    // first would exhaust this machine; the check comes before.
    job.sizes = vec![("n".into(), Value::Int(1 << 35))];
    let e = tuner.tune(&job, &TuneOptions::default()).unwrap_err().to_string();
    assert!(e.contains("problems") && e.contains("need 256.0 GiB") && e.contains("80.0 GiB"), "{e}");
    // One buffer above the largest a device allows.
    let small = Limits { max_buffer_bytes: Some(1 << 20), ..Limits::preset("h100").unwrap().1 };
    let e = small.check_memory(&[("x", 4 << 20), ("y", 16)]).unwrap_err();
    assert!(e.contains("`x` needs 4.0 MiB, more than the 1.0 MiB one buffer may have"), "{e}");
}

#[test]
fn a_cancelled_tune_writes_what_it_measured_and_says_so() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Arc;
    let (tuner, job) = example();
    let dir = tempfile::tempdir().unwrap();
    let db = Database::at(dir.path().join("db.sqlite"));
    let cancel = Arc::new(AtomicBool::new(false));
    let (c, seen) = (cancel.clone(), Arc::new(AtomicUsize::new(0)));
    let s = seen.clone();
    let observer: kerntune_core::run::Observer = Arc::new(move |e: &Event<'_>| {
        if let Event::Result { .. } = e {
            if s.fetch_add(1, Ordering::SeqCst) + 1 == 4 {
                c.store(true, Ordering::SeqCst);
            }
        }
    });
    let o = TuneOptions { db: Some(db.clone()), cancel: Some(cancel), observer: Some(observer), compile_threads: Some(1), ..Default::default() };
    let e = tuner.tune(&job, &o).unwrap_err();
    let Error::Interrupted { kept, saved: true } = e else { panic!("{e}") };
    // What was timed, plus the shortlist (verified, waiting to be timed), kept with its
    // verification launch: at most the whole space of 12.
    assert!((4..=12).contains(&kept), "{kept}");
    let entry = db.load().unwrap().entries.into_values().next().unwrap();
    assert_eq!((entry.measurements.len(), entry.winner.is_none()), (kept, true));
    assert!(e_text(kept).contains("run the same tune again to resume"));
}

fn e_text(kept: usize) -> String {
    Error::Interrupted { kept, saved: true }.to_string()
}

/// Every shipped spec, mutated one line at a time (deleted, cut in half, a value or a quoted
/// expression replaced by a bad one), loads and is checked as `kerntune check` does it: each
/// mutation is either accepted or refused with a message, never a panic. The mutations are
/// drawn by a fixed seed, so a failure names one that repeats.
#[test]
fn mutated_specs_are_refused_with_a_message_never_a_panic() {
    use rand::{Rng, SeedableRng};
    const VALUES: &[&str] = &[
        "-1",
        "0",
        "1e308",
        "nan",
        "inf",
        "\"x\"",
        "[]",
        "{}",
        "[1, 1]",
        "\"\"",
        "true",
        "9223372036854775807",
        "-9223372036854775808",
        "[[1]]",
        "{ values = [] }",
        "\"cpu:nope\"",
        "\"../../x\"",
        "0.5",
        "[0, -4, 2]",
    ];
    const EXPRS: &[&str] = &[
        "1/0",
        "x//0",
        "2**63",
        "a if",
        "max()",
        "log(0)",
        "sqrt(-1)",
        "int(\"x\")",
        "10**400",
        "-2**63 // -1",
        "((((",
        "N % 0",
        "1 if 2",
        "0**-1",
        "",
        "min(1)",
        "[1, 2][5]",
    ];
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let specs: Vec<std::path::PathBuf> = ["examples", "benches"]
        .iter()
        .flat_map(|d| std::fs::read_dir(root.join(d)).unwrap().flatten())
        .flat_map(|e| std::fs::read_dir(e.path()).into_iter().flatten().flatten())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml") && p.file_name().is_some_and(|n| n != "Cargo.toml"))
        .collect();
    assert!(specs.len() >= 10, "the shipped specs: {specs:?}");
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(26);
    let (mut refused, mut tried) = (0, 0);
    for spec in &specs {
        // A copy of the spec's folder (its sources), where the mutated spec is written.
        let dir = tempfile::tempdir().unwrap();
        for f in std::fs::read_dir(spec.parent().unwrap()).unwrap().flatten().filter(|f| f.path().is_file()) {
            std::fs::copy(f.path(), dir.path().join(f.file_name())).unwrap();
        }
        let text = std::fs::read_to_string(spec).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for _ in 0..120 {
            let mut mutated: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
            let at = rng.random_range(0..mutated.len());
            let line = mutated[at].clone();
            match rng.random_range(0..4) {
                0 => {
                    mutated.remove(at);
                }
                1 => mutated[at] = line[..line.len() / 2].to_string(),
                2 if line.contains('=') => {
                    let key = line.split('=').next().unwrap_or_default();
                    mutated[at] = format!("{key}= {}", VALUES[rng.random_range(0..VALUES.len())]);
                }
                _ if line.matches('"').count() >= 2 => {
                    let parts: Vec<&str> = line.split('"').collect();
                    let k = 1 + 2 * rng.random_range(0..parts.len() / 2);
                    let mut parts: Vec<String> = parts.iter().map(|p| p.to_string()).collect();
                    parts[k] = EXPRS[rng.random_range(0..EXPRS.len())].to_string();
                    mutated[at] = parts.join("\"");
                }
                _ => mutated.insert(at, line),
            }
            let file = dir.path().join(spec.file_name().unwrap());
            std::fs::write(&file, mutated.join("\n")).unwrap();
            tried += 1;
            let checked = std::panic::catch_unwind(|| check_as_the_cli_does(&file));
            match checked {
                Ok(Ok(())) => {}
                Ok(Err(message)) => {
                    refused += 1;
                    assert!(!message.trim().is_empty(), "{}: an empty message for line {} mutated to {:?}", spec.display(), at + 1, mutated.get(at));
                }
                Err(_) => panic!("{}: line {} mutated to {:?} panicked", spec.display(), at + 1, mutated.get(at)),
            }
        }
    }
    // Most mutations break the spec; some (a value within range, a duplicated line the parser
    // rejects or not) leave it valid: both happen, or the test would not be telling them apart.
    assert!(refused > tried / 4 && refused < tried, "{refused} of {tried} refused");
}

/// What `kerntune check SPEC --launches 3` does before printing: load, check, make each
/// problem's job for the spec's first language, expand it for an H100 and summarize it.
fn check_as_the_cli_does(file: &std::path::Path) -> Result<(), String> {
    let spec = Spec::load_with(file, kerntune_core::spec::LoadOptions::default()).map_err(|e| e.to_string())?;
    kerntune_core::plan::prepare::check(&spec).map_err(|e| e.to_string())?;
    let language = spec.sources.keys().next().cloned().unwrap_or_else(|| "cuda".into());
    for i in 0..spec.problems.len() {
        let job = spec.job(&language, i).map_err(|e| e.to_string())?;
        let (target, limits) = Limits::preset("h100").expect("a preset");
        let expanded = kerntune_core::plan::expand::expand(&job, &target, &limits).map_err(|e| e.to_string())?;
        kerntune_core::plan::summary::summarize(&expanded, std::time::Duration::from_secs(5), 3).map_err(|e| e.to_string())?;
    }
    Ok(())
}
