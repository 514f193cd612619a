//! The compile tail in whole tunes: the policy is [`crate::search::tail`]; the search loop
//! (`run/search_loop.rs`) follows it, and what it did is in the report
//! ([`TuneReport::compile_tail`](crate::run::TuneReport::compile_tail)).

pub use crate::search::tail::{Abandoned, CompileTail, DEFAULT_FACTOR};

/// The tail in whole tunes on the fake backend, whose compiles sleep as long as asked.
#[cfg(test)]
mod tuned {
    use crate::fake::FakeBackend;
    use crate::limits::Limits;
    use crate::run::fixture::{is, job, opts, time};
    use crate::run::{TuneOptions, TuneReport, Tuner};
    use crate::space::config::Config;
    use crate::spec::settings::Budget;
    use std::time::{Duration, Instant};

    /// A tune where `slow` configs compile for `secs` and the others for 20 ms; its database is
    /// in a temporary folder that goes with the returned guard.
    fn tune(slow: fn(&Config) -> bool, secs: f64, o: TuneOptions) -> (TuneReport, f64, crate::store::db::Database, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let db = crate::store::db::Database::at(dir.path().join("db.sqlite"));
        let fake =
            FakeBackend::new(Limits::preset("h100").unwrap().1, time).with_compile_times(move |c| Duration::from_secs_f64(if slow(c) { secs } else { 0.02 }));
        let t0 = Instant::now();
        let r = Tuner::new(fake).tune(&job(), &TuneOptions { db: Some(db.clone()), ..o }).unwrap();
        (r, t0.elapsed().as_secs_f64(), db, dir)
    }

    fn slow32(c: &Config) -> bool {
        c.get_i64("bx") == Some(32) && c.get_i64("vec") != Some(4)
    }

    fn slow3(c: &Config) -> bool {
        slow32(c) || is(c, 64, 1)
    }

    #[test]
    fn compiles_in_the_tail_are_abandoned_and_replaced_when_the_budget_counts_evaluations() {
        // 12 of the 18 candidates (3 of them slow), on 4 compile threads.
        let o = TuneOptions { strategy: "random".into(), budget: Budget { max_evals: Some(12), ..Default::default() }, compile_threads: Some(4), ..opts() };
        let (r, wall, db, _dir) = tune(slow3, 60.0, o);
        assert!(wall < 20.0, "the tune waited for the 60 s compiles: {wall:.1} s");
        let tail = r.compile_tail.clone().expect("a tail report");
        assert!(!tail.abandoned.is_empty(), "seed 0 proposes a slow config: {tail:?}");
        for a in &tail.abandoned {
            assert_eq!((a.why.as_str(), a.replaced), ("tail", true), "{a:?}");
            assert!((a.config.starts_with("bx=32,") || a.config == "bx=64,vec=1") && a.seconds >= 0.5, "{a:?}");
            assert!(r.results.iter().all(|x| x.config.key() != a.config), "an abandoned config is not a result");
        }
        // Each abandoned config's evaluation went to another: the budget is measured in full.
        assert_eq!(r.results.len(), 12, "{r:?}");
        let line = r.notes.iter().find(|n| n.starts_with("compile tail:")).expect("a note");
        assert!(line.contains("stopped waiting for") && line.contains("went to other configs"), "{line}");
        // Nothing about them is stored: a later tune tries them again.
        let stored = db.entry(&r.entry).unwrap().unwrap();
        assert!(stored.measurements.keys().all(|k| !tail.abandoned.iter().any(|a| &a.config == k)), "{:?}", stored.measurements.keys());
    }

    #[test]
    fn adaptive_strategies_get_the_evaluations_back_too() {
        for strategy in ["hybrid", "annealing", "genetic", "local", "model"] {
            let o = TuneOptions { strategy: strategy.into(), budget: Budget { max_evals: Some(12), ..Default::default() }, compile_threads: Some(4), ..opts() };
            let (r, wall, _, _dir) = tune(slow3, 60.0, o);
            let tail = r.compile_tail.clone().expect("a tail report");
            assert!(wall < 20.0, "{strategy}: {wall:.1} s");
            assert_eq!(r.results.len() + tail.abandoned.iter().filter(|a| !a.replaced).count(), 12, "{strategy}: {tail:?}");
        }
    }

    #[test]
    fn an_exhaustive_search_waits_for_its_slow_compile_and_says_how_long() {
        let (r, wall, _, _dir) = tune(|c| is(c, 32, 1), 1.5, opts());
        assert!(wall >= 1.5);
        let tail = r.compile_tail.expect("a tail report");
        assert!(tail.abandoned.is_empty(), "{tail:?}");
        assert!(tail.waited_s > 0.3 && tail.slow == 1, "{tail:?}");
        assert!(r.results.iter().any(|x| is(&x.config, 32, 1) && x.stats().is_some()), "the slow config is measured");
        // The median compile is 20 ms: the limit is the 0.5 s floor.
        assert!(r.notes.iter().any(|n| n.starts_with("compile tail: 1 compile took over 0.50 s (at least 0.5 s)") && n.contains("waited")), "{:?}", r.notes);
    }

    #[test]
    fn compiles_still_running_at_the_time_limit_are_abandoned_at_once() {
        let o = TuneOptions { budget: Budget { max_seconds: Some(1.5), ..Default::default() }, ..opts() };
        let (r, wall, _, _dir) = tune(slow32, 60.0, o);
        assert!(wall < 10.0, "{wall:.1} s");
        let tail = r.compile_tail.expect("a tail report");
        assert!(!tail.abandoned.is_empty() && tail.abandoned.iter().all(|a| a.why == "time limit" && !a.replaced), "{tail:?}");
        assert!(r.notes.iter().any(|n| n.contains("still running at the time limit abandoned")), "{:?}", r.notes);
    }

    #[test]
    fn an_interrupted_tune_does_not_wait_for_its_compiles() {
        let cancel = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let fake = FakeBackend::new(Limits::preset("h100").unwrap().1, time).with_compile_times(|c| Duration::from_secs(if is(c, 256, 1) { 0 } else { 60 }));
        let o = TuneOptions { cancel: Some(cancel.clone()), ..opts() };
        let stop = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            cancel.store(true, std::sync::atomic::Ordering::Relaxed);
        });
        let t0 = Instant::now();
        let r = Tuner::new(fake).tune(&job(), &o);
        stop.join().unwrap();
        assert!(matches!(r, Err(crate::run::Error::Interrupted { .. })), "{r:?}");
        assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
    }

    /// Told to end early ([`TuneOptions::wrap_up`]), a tune ends as at its time limit: no wait
    /// for its compiles, a winner from what was measured, and a note that says so.
    #[test]
    fn a_tune_told_to_end_early_ends_with_a_winner() {
        let wrap = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let fake = FakeBackend::new(Limits::preset("h100").unwrap().1, time).with_compile_times(|c| Duration::from_secs(if is(c, 256, 1) { 0 } else { 60 }));
        let o = TuneOptions { wrap_up: Some(wrap.clone()), budget: Budget { max_evals: Some(40), ..Default::default() }, ..opts() };
        let end = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            wrap.store(true, std::sync::atomic::Ordering::Relaxed);
        });
        let t0 = Instant::now();
        let r = Tuner::new(fake).tune(&job(), &o).expect("a winner");
        end.join().unwrap();
        assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
        assert!(is(&r.winner, 256, 1), "{}", r.winner);
        assert!(r.compile_tail.as_ref().is_some_and(|t| !t.abandoned.is_empty() && t.abandoned.iter().all(|a| a.why == "ended early")), "{:?}", r.compile_tail);
        assert!(r.notes.iter().any(|n| n.contains("still running when the tune was ended early abandoned")), "{:?}", r.notes);
        assert!(r.notes.iter().any(|n| n.starts_with("ended early, as asked") && n.contains("after 1 evaluation of its budget of 40")), "{:?}", r.notes);
    }

    /// A tune whose end comes before its first measurement (told to end early at once, or a time
    /// budget too short for one config) says so, not "none of the 0 evaluated configs passed".
    #[test]
    fn a_tune_ended_before_its_first_measurement_says_so() {
        let wrap = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
        let o = TuneOptions { wrap_up: Some(wrap), ..opts() };
        let fake = || FakeBackend::new(Limits::preset("h100").unwrap().1, time);
        let e = Tuner::new(fake()).tune(&job(), &o).unwrap_err().to_string();
        assert!(e.contains("no config was measured: the tune was ended early (SIGUSR1 or SIGUSR2"), "{e}");
        let o = TuneOptions { budget: Budget { max_seconds: Some(1e-9), ..Default::default() }, ..opts() };
        let e = Tuner::new(fake()).tune(&job(), &o).unwrap_err().to_string();
        assert!(e.contains("no config was measured: the time budget of 0.000000001 s ended before the first one was"), "{e}");
    }

    #[test]
    fn off_waits_for_every_compile() {
        let o = TuneOptions { strategy: "random".into(), budget: Budget { max_evals: Some(18), ..Default::default() }, compile_tail: None, ..opts() };
        let (r, wall, _, _dir) = tune(|c| is(c, 32, 1), 1.0, o);
        assert!(wall >= 1.0);
        assert!(r.compile_tail.is_none_or(|t| t.abandoned.is_empty()));
        assert_eq!(r.results.len(), 18);
    }

    /// A compile still running after the compile timeout fails its config in this tune, even
    /// in an exhaustive search (which the tail always waits for), with a message saying what
    /// to change; one that waited (by the wall clock: the fake's compile sleeps) is not stored,
    /// so a tune without the timeout compiles and measures it.
    #[test]
    fn a_compile_past_the_timeout_fails_its_config_and_is_not_stored() {
        let o = TuneOptions { strategy: "exhaustive".into(), compile_timeout: Some(Duration::from_millis(400)), ..opts() };
        let (r, wall, db, _dir) = tune(|c| is(c, 32, 1), 60.0, o);
        assert!(wall < 20.0, "the tune waited for the 60 s compile: {wall:.1} s");
        let failed: Vec<_> = r.results.iter().filter(|x| x.stats().is_none()).collect();
        assert_eq!(failed.len(), 1, "{:?}", r.results);
        assert_eq!(failed[0].config.key(), "bx=32,vec=1");
        let crate::run::report::ResultOutcome::Failed { kind, message } = &failed[0].outcome else { panic!("{:?}", failed[0]) };
        assert_eq!(*kind, crate::error::FailureKind::TimedOut);
        // The fake compile sleeps: it uses no CPU, so it is given up on as a compile that waits,
        // after three times the timeout (where the system tells a thread's CPU time).
        // (The loop looks at running compiles between its other work: a busy machine sees it a
        // little later.)
        let (after, rest) = message.strip_prefix("compile timed out: still compiling after ").and_then(|m| m.split_once(" s")).expect(message);
        let after: f64 = after.parse().expect(message);
        let (least, said) = if crate::backend::this_thread_cpu_seconds().is_some() {
            (1.2, " of wall time having used 0.0 s of CPU time (waiting, not compiling), past the compile timeout of 0.4 s ([tune] compile_timeout, --compile-timeout)")
        } else {
            (0.4, ", past the compile timeout of 0.4 s ([tune] compile_timeout, --compile-timeout)")
        };
        assert!(after >= least && rest.starts_with(said), "{message}");
        assert_eq!(r.results.len(), 18, "every other config measured");
        assert!(failed[0].compile_seconds.is_none(), "not a compile's seconds: {:?}", failed[0]);
        // One cause, without the launch timeout's findings (no launch ran past [bench] timeout).
        let [cause] = &r.causes[..] else { panic!("{:?}", r.causes) };
        assert!(cause.message.starts_with("compile timed out") && cause.diagnosis.iter().all(|d| !d.contains("[bench] timeout")), "{cause:?}");
        let stored = db.entry(&r.entry).unwrap().unwrap();
        assert!(!stored.measurements.contains_key("bx=32,vec=1"), "not stored");
        assert_eq!(stored.measurements.len(), 17);
        // Without the timeout, a tune that selects again (`--force`) compiles it (1 s) and
        // measures it, and reads the rest from the database.
        let fake = crate::fake::FakeBackend::new(Limits::preset("h100").unwrap().1, time)
            .with_compile_times(|c| Duration::from_secs_f64(if is(c, 32, 1) { 1.0 } else { 0.02 }));
        let r = Tuner::new(fake).tune(&job(), &TuneOptions { db: Some(db.clone()), strategy: "exhaustive".into(), force: true, ..opts() }).unwrap();
        assert!(r.results.iter().any(|x| x.config.key() == "bx=32,vec=1" && x.stats().is_some() && !x.from_db), "{:?}", r.results);
        assert_eq!(r.results.iter().filter(|x| x.from_db).count(), 17);
    }

    /// The compile timeout bounds a compile's own CPU time: eight compiles at once on this
    /// machine's cores (two in CI) each take several times their CPU time in wall time, and the
    /// short ones (0.25 s of CPU) pass a 0.4 s timeout they would exceed by the wall clock, while
    /// the long ones (4 s) are given up on once they have used 0.4 s of CPU.
    #[test]
    fn a_compile_timeout_bounds_the_compiles_own_cpu_time_not_the_load_beside_it() {
        if crate::backend::this_thread_cpu_seconds().is_none() {
            return; // the wall clock rule, tested above
        }
        let fake = FakeBackend::new(Limits::preset("h100").unwrap().1, time)
            .with_compile_times(|c| Duration::from_secs_f64(if c.get_i64("bx") == Some(32) { 4.0 } else { 0.25 }))
            .spinning_compiles();
        let o = TuneOptions { strategy: "exhaustive".into(), compile_timeout: Some(Duration::from_millis(400)), compile_threads: Some(8), ..opts() };
        let r = Tuner::new(fake).tune(&job(), &o).unwrap();
        let failed: Vec<String> = r.results.iter().filter(|x| x.stats().is_none()).map(|x| x.config.key()).collect();
        assert_eq!(failed, ["bx=32,vec=1", "bx=32,vec=2", "bx=32,vec=4"], "{:?}", r.results);
        for x in r.results.iter().filter(|x| x.stats().is_none()) {
            let crate::run::report::ResultOutcome::Failed { message, .. } = &x.outcome else { unreachable!() };
            assert!(message.contains("s of its own CPU time (") && message.contains("past the compile timeout of 0.4 s"), "{message}");
        }
        // The short compiles ran longer than the timeout by the wall clock (shared cores).
        let slowest = r.results.iter().filter_map(|x| x.compile_seconds).fold(0.0, f64::max);
        assert!(slowest > 0.4 || std::thread::available_parallelism().map_or(0, |n| n.get()) >= 8, "{slowest}");
    }

    /// A compile that used more CPU time than the compile timeout is stored: a tune with the
    /// same timeout that selects again (`--force`) reads it and does not wait for it again; a
    /// program's lookup without a timeout still finds the winner; a tune that selects again
    /// with no timeout compiles it, says why, and measures it.
    #[test]
    fn a_compile_past_the_timeout_by_its_cpu_time_is_stored_until_the_timeout_is_longer() {
        if crate::backend::this_thread_cpu_seconds().is_none() {
            return; // the wall clock rule does not store (the first test)
        }
        let dir = tempfile::tempdir().unwrap();
        let db = crate::store::db::Database::at(dir.path().join("db.sqlite"));
        let slow = |secs: f64| {
            Tuner::new(
                FakeBackend::new(Limits::preset("h100").unwrap().1, time)
                    .with_compile_times(move |c| Duration::from_secs_f64(if is(c, 32, 1) { secs } else { 0.02 }))
                    .spinning_compiles(),
            )
        };
        let o = |timeout: Option<f64>, force: bool| TuneOptions {
            db: Some(db.clone()),
            strategy: "exhaustive".into(),
            compile_timeout: timeout.map(Duration::from_secs_f64),
            force,
            ..opts()
        };
        let key = "bx=32,vec=1";
        let compiled = |t: &Tuner<FakeBackend>| t.backend().compiled.lock().unwrap().contains_key(key);
        let t = slow(1.5);
        let r = t.tune(&job(), &o(Some(0.4), false)).unwrap();
        let failed = r.results.iter().find(|x| x.config.key() == key).expect("a result");
        let crate::run::report::ResultOutcome::Failed { message, .. } = &failed.outcome else { panic!("{failed:?}") };
        assert!(message.contains("s of its own CPU time (") && message.contains("; stored: a tune with a longer timeout"), "{message}");
        let stored = db.entry(&r.entry).unwrap().unwrap();
        assert_eq!(stored.measurements.len(), 18, "stored with the 17 measured");
        assert_eq!(stored.origin.as_ref().unwrap().setup.get("compile_timeout").map(String::as_str), Some("0.4"));

        // The same timeout, selecting again: read back, not compiled, no note.
        let t = slow(1.5);
        let r = t.tune(&job(), &o(Some(0.4), true)).unwrap();
        assert!(!compiled(&t), "compiled again under the same timeout");
        assert!(r.results.iter().any(|x| x.config.key() == key && x.from_db && x.stats().is_none()), "{:?}", r.results);
        assert!(r.notes.iter().all(|n| !n.contains("compiled again")), "{:?}", r.notes);

        // A program's lookup sets no timeout: the stored winner stands.
        let r = slow(1.5).tune(&job(), &o(None, false)).unwrap();
        assert!(r.db_hit, "a longer compile timeout alone does not tune again");

        // Selecting again without a timeout: compiled, measured, and said.
        let t = slow(0.3);
        let r = t.tune(&job(), &o(None, true)).unwrap();
        assert!(compiled(&t));
        assert!(r.results.iter().any(|x| x.config.key() == key && !x.from_db && x.stats().is_some()), "{:?}", r.results);
        assert!(
            r.notes.contains(
                &"database: 1 config whose compile timed out under the 0.4 s compile timeout is compiled again with no timeout ([tune] compile_timeout, --compile-timeout)"
                    .to_string()
            ),
            "{:?}",
            r.notes
        );
        let stored = db.entry(&r.entry).unwrap().unwrap();
        assert!(matches!(stored.measurements[key].status, crate::store::db::Status::Ok { .. }));
        assert_eq!(stored.origin.as_ref().unwrap().setup.get("compile_timeout").map(String::as_str), Some("off"));
    }
}
