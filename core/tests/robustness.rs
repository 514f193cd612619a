//! Bad input and huge spaces on the fake backend: restrictions that cannot be evaluated are
//! errors naming the config, a default outside its values and contradictory settings are
//! refused, and a space of billions of configs is searched within a budget by sampling, with
//! memory bounded by the budget (the candidates held), not by the space.

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
