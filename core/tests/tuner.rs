//! The tuner proven on the fake backend: fast correct winner, every failure recorded and
//! survived, racing, agreement across noisy runs, database round trip, resume, concurrency.

use kerntune_core::fake::{Behavior, FakeBackend};
use kerntune_core::store::db::{Database, DbFile};
use kerntune_core::*;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn limits() -> Limits {
    Limits::preset("h100").unwrap().1
}

/// bx in 32..2048 (2048 exceeds the thread limit), vec in 1,2,4; default bx=256, vec=1.
fn job() -> TuneJob {
    let mut j = TuneJob::new(
        KernelSource::new("k", "fake", "// fake kernel"),
        vec![Param::new("bx", [32, 64, 128, 256, 512, 1024, 2048]), Param::new("vec", [1, 2, 4])],
    );
    j.sizes = vec![("n".into(), Value::Int(4096))];
    j.args = vec![
        ArgSpec {
            name: "x".into(),
            kind: ArgKind::Buffer { dtype: DType::F32, len: "n".into(), init: Init::Random { seed: 1 }, access: Access::Read, memory: Memory::Global },
        },
        ArgSpec {
            name: "y".into(),
            kind: ArgKind::Buffer { dtype: DType::F32, len: "n".into(), init: Init::Zeros, access: Access::Write, memory: Memory::Global },
        },
        ArgSpec {
            name: "z".into(),
            kind: ArgKind::Buffer { dtype: DType::F32, len: "n".into(), init: Init::Sequence, access: Access::ReadWrite, memory: Memory::Global },
        },
    ];
    j.grid = ["div_ceil(n, bx*vec)".into(), "1".into(), "1".into()];
    j.block = ["bx".into(), "1".into(), "1".into()];
    j.default = Some(vec![("bx".into(), Value::Int(256)), ("vec".into(), Value::Int(1))]);
    j.bytes = Some("12*n".into());
    j
}

/// Fastest at bx=128, vec=4 (1.0 ms); every step away costs 10 %.
fn time(c: &Config) -> f64 {
    let bx = c.get_i64("bx").unwrap() as f64;
    let vec = c.get_i64("vec").unwrap() as f64;
    1e-3 * (1.0 + 0.1 * (bx / 128.0).log2().abs()) * (1.0 + 0.1 * (4.0 / vec).log2())
}

fn is(c: &Config, bx: i64, vec: i64) -> bool {
    c.get_i64("bx") == Some(bx) && c.get_i64("vec") == Some(vec)
}

fn opts() -> TuneOptions {
    TuneOptions { compile_threads: Some(2), ..Default::default() }
}

fn result_of(r: &TuneReport, bx: i64, vec: i64) -> &ConfigResult {
    r.results.iter().find(|x| is(&x.config, bx, vec)).unwrap_or_else(|| panic!("no result for bx={bx} vec={vec}"))
}

#[test]
fn picks_the_fastest_correct_config() {
    let fake = FakeBackend::new(limits(), time).with_behavior(|c| if is(c, 128, 4) { Behavior::WrongOutput } else { Behavior::Ok });
    let r = Tuner::new(fake).tune(&job(), &opts()).unwrap();
    // bx=128 vec=4 is fastest but wrong; the next are bx=64/256 with vec=4 (1.1 ms) and bx=128 vec=2.
    assert!(matches!(result_of(&r, 128, 4).outcome, ResultOutcome::Failed { kind: FailureKind::WrongOutput, .. }));
    assert!(is(&r.winner, 64, 4) || is(&r.winner, 256, 4) || is(&r.winner, 128, 2), "winner {}", r.winner);
    assert!((r.winner_stats.mean - 1.1e-3).abs() < 1e-9);
    assert_eq!(r.valid, 21);
    assert_eq!(r.pruned_before.get("threads"), Some(&3), "bx=2048 exceeds 1024 threads");
    assert_eq!(r.candidates, 18);
    assert_eq!(r.failures.get("wrong output"), Some(&1));
    assert!(r.default_included);
    assert_eq!(r.timing, TimingMethod::Simulated);
    // Ties: bx=64,vec=4 / bx=256,vec=4 / bx=128,vec=2 all take 1.1 ms; the band holds them and the
    // rule (default first, then resources, then declaration order) picks bx=64 (declared first).
    assert_eq!(r.tie_band.len(), 3, "{:?}", r.tie_band.iter().map(|c| c.key()).collect::<Vec<_>>());
    assert!(is(&r.winner, 64, 4));
}

#[test]
fn every_failure_is_recorded_and_the_tune_survives() {
    let fake = FakeBackend::new(limits(), time).with_behavior(|c| {
        let (bx, v) = (c.get_i64("bx").unwrap(), c.get_i64("vec").unwrap());
        match (bx, v) {
            (32, 1) => Behavior::CompileError("error: expected ';' at line 3".into()),
            (32, 2) => Behavior::LaunchError,
            (32, 4) => Behavior::Hang,
            (64, 1) => Behavior::WrongOutput,
            (64, 2) => Behavior::SkipWrites,
            (128, 4) => Behavior::DeviceLost,
            (1024, 4) => Behavior::TooManyRegisters,
            _ => Behavior::Ok,
        }
    });
    let mut o = opts();
    o.bench.timeout = Duration::from_millis(20);
    let tuner = Tuner::new(fake);
    let r = tuner.tune(&job(), &o).unwrap();
    let kind = |bx, v| match &result_of(&r, bx, v).outcome {
        ResultOutcome::Failed { kind, message } => (Some(*kind), message.clone()),
        ResultOutcome::Pruned { reason } => (None, reason.to_string()),
        ResultOutcome::Measured { .. } => panic!("bx={bx} vec={v} should have failed"),
    };
    let (k, msg) = kind(32, 1);
    assert_eq!(k, Some(FailureKind::CompileFailed));
    assert!(msg.contains("expected ';'") && msg.contains("-Dbx=32"), "the compile log and options are kept: {msg}");
    assert_eq!(kind(32, 2).0, Some(FailureKind::LaunchFailed));
    assert_eq!(kind(32, 4).0, Some(FailureKind::TimedOut));
    assert_eq!(kind(64, 1).0, Some(FailureKind::WrongOutput));
    let (k, msg) = kind(64, 2);
    assert_eq!(k, Some(FailureKind::WrongOutput));
    assert!(msg.contains("never written"), "poisoning catches skipped writes: {msg}");
    assert_eq!(kind(128, 4).0, Some(FailureKind::DeviceLost));
    let (k, msg) = kind(1024, 4);
    assert_eq!(k, None, "pruned after compiling from the real register count");
    assert!(msg.starts_with("registers"), "{msg}");
    assert_eq!(r.pruned_after.get("registers"), Some(&1));
    assert_eq!(tuner.backend().recoveries.load(Ordering::SeqCst), 2, "one recovery after the hang, one after the lost device");
    // The tune went on after the lost device: configs measured after it exist and a winner was picked.
    assert!(r.results.iter().filter(|x| x.stats().is_some()).count() >= 10);
    assert!(is(&r.winner, 64, 4) || is(&r.winner, 256, 4) || is(&r.winner, 128, 2));
}

#[test]
fn slow_configs_are_raced_out_early() {
    let fake = FakeBackend::new(limits(), time).with_noise(0.02, 5);
    let mut o = opts();
    o.compile_threads = Some(1);
    let tuner = Tuner::new(fake);
    let r = tuner.tune(&job(), &o).unwrap();
    let fake = tuner.backend();
    let slowest = result_of(&r, 1024, 1).stats().unwrap().clone();
    assert!(slowest.raced, "{slowest:?}");
    assert!(
        fake.launches_of(&r.winner.key()) > fake.launches_of("bx=1024,vec=1"),
        "winner {} launches vs slowest {}",
        fake.launches_of(&r.winner.key()),
        fake.launches_of("bx=1024,vec=1")
    );
    let raced = r.results.iter().filter(|x| x.stats().is_some_and(|s| s.raced)).count();
    assert!(raced >= 5, "only {raced} raced");
}

/// A driver that compiles each kernel at its first launch (Mesa's lavapipe from 23.x with a
/// cold shader cache: first launches of 18–44 ms on 2.5 ms kernels, longest for the most unrolled
/// kernels, which were the fastest) makes every verification launch far slower than the
/// launches after it, and by how much differs between configs. The first config measured shows
/// that, and no config is raced on its verification launch alone, neither against the best nor
/// against another verification launch: the fastest config wins, not the first one measured.
#[test]
fn a_slow_first_launch_of_every_kernel_races_nothing_out() {
    for strategy in ["exhaustive", "random", "hybrid"] {
        // The more a config does per thread, the longer its first launch: 8, 12 or 20 ms.
        let compile_at_launch = |c: &Config| [8e-3, 12e-3, 20e-3][c.get_i64("vec").unwrap().trailing_zeros() as usize];
        let fake = FakeBackend::new(limits(), time).with_first_launch(compile_at_launch).with_noise(0.01, 3);
        let o = TuneOptions { strategy: strategy.into(), compile_threads: Some(1), ..opts() };
        let r = Tuner::new(fake).tune(&job(), &o).unwrap();
        assert_eq!(r.winner.key(), "bx=128,vec=4", "{strategy}: {}", r.winner);
        assert!((r.winner_stats.mean - 1e-3).abs() < 5e-5, "{strategy}: {:?}", r.winner_stats);
        // Slow configs are still raced, after a warm launch rather than on the verification one.
        let raced: Vec<_> = r.results.iter().filter_map(|x| x.stats().filter(|s| s.raced)).collect();
        assert!(!raced.is_empty() && raced.iter().all(|s| s.mean < 5e-3), "{strategy}: {raced:?}");
        // The report says why.
        let said: Vec<&String> = r.notes.iter().filter(|n| n.starts_with("racing: a verification launch on device 0 took")).collect();
        assert!(said.len() == 1 && said[0].contains("raced on warm launches only"), "{strategy}: {:?}", r.notes);
    }
    // Where verification launches run like the later ones, they race, and nothing is said. A
    // config races on its verification launch alone once ten were seen on the device, so the
    // slow ones must come last: each launch takes a millisecond of wall time, which keeps the
    // device the bottleneck, every config verified and shortlisted as it comes and then taken
    // fastest first. (With launches as fast as the compiles, which configs wait on the
    // shortlist depends on the threads' pace: in a release build the slow ones came early.)
    let tuner = Tuner::new(FakeBackend::new(limits(), time).with_noise(0.01, 3).with_launch_delay(Duration::from_millis(1)));
    let r = tuner.tune(&job(), &TuneOptions { compile_threads: Some(1), ..opts() }).unwrap();
    assert!(r.notes.iter().all(|n| !n.starts_with("racing:")), "{:?}", r.notes);
    let alone = r.results.iter().filter(|x| x.stats().is_some_and(|s| s.raced) && tuner.backend().launches_of(&x.config.key()) == 1).count();
    assert!(alone > 0, "none raced on its verification launch alone");
}

/// The default config is the baseline the winner's speed-up is said against: it is never raced
/// on its verification launch alone, though the other configs' first launches ran like their
/// later ones. On the H100, CUDA's lazy module loading made the triad default's first launch
/// 1.8× its time, and confirm said "the winner is about 2.58× as fast" where it was 1.44×.
#[test]
fn the_default_is_not_raced_on_its_first_launch_alone() {
    // The default (bx=256, vec=1: 1.32 ms) takes twice its time at its first launch.
    let first = |c: &Config| if is(c, 256, 1) { 1.32e-3 } else { 0.0 };
    for strategy in ["exhaustive", "random"] {
        let fake = FakeBackend::new(limits(), time).with_first_launch(first).with_noise(0.01, 3).with_launch_delay(Duration::from_millis(1));
        let mut j = job();
        j.verify.reference = Reference::Host("fake".into(), Arc::new(|p| Ok(FakeBackend::reference(p))));
        let tuner = Tuner::new(fake);
        let r = tuner.tune(&j, &TuneOptions { strategy: strategy.into(), compile_threads: Some(1), ..opts() }).unwrap();
        let d = result_of(&r, 256, 1).stats().unwrap().clone();
        assert!(tuner.backend().launches_of("bx=256,vec=1") > 1, "{strategy}: {d:?}");
        assert!((d.mean - 1.32e-3).abs() < 0.1e-3, "{strategy}: the default's time is its warm launches': {d:?}");
    }
}

/// A `%` budget ("stop once the model predicts nothing beats the best by 2 %") with no strategy
/// named and no priors: the tune takes the hybrid search, which has a model, instead of the
/// exhaustive one, which has none and refused the budget after the device was open.
#[test]
fn a_percentage_budget_without_a_strategy_takes_the_hybrid_search() {
    let o = TuneOptions { strategy: "auto".into(), budget: Budget::parse("2%").unwrap(), compile_threads: Some(1), prior: PriorSetting::Off, ..opts() };
    let r = Tuner::new(FakeBackend::new(limits(), time)).tune(&job(), &o).unwrap();
    assert_eq!(r.strategy, "hybrid");
    assert_eq!(r.winner.key(), "bx=128,vec=4");
    // Without a `%` budget the same tune is exhaustive, as before.
    let o = TuneOptions { budget: Budget::default(), ..o };
    let r = Tuner::new(FakeBackend::new(limits(), time)).tune(&job(), &o).unwrap();
    assert_eq!(r.strategy, "exhaustive");
}

/// How many configs finished compiling before the first result was final, for a hybrid
/// search with a budget of 10 on 8 compile threads; and the report.
fn compiled_before_an_outcome(dev: FakeBackend) -> (usize, TuneReport) {
    compiled_before_an_outcome_on(vec![dev])
}

/// The same over several devices.
fn compiled_before_an_outcome_on(devs: Vec<FakeBackend>) -> (usize, TuneReport) {
    let seen = Arc::new(Mutex::new((0, false)));
    let s = seen.clone();
    let observer: kerntune_core::run::Observer = Arc::new(move |e: &kerntune_core::run::Event<'_>| {
        let mut s = s.lock().unwrap();
        match e {
            kerntune_core::run::Event::Compiled { .. } if !s.1 => s.0 += 1,
            kerntune_core::run::Event::Result { .. } => s.1 = true,
            _ => {}
        }
    });
    let o = TuneOptions { strategy: "hybrid".into(), budget: Budget::parse("10").unwrap(), compile_threads: Some(8), observer: Some(observer), ..opts() };
    let devs = devs.into_iter().map(|d| d.with_launch_delay(Duration::from_millis(2))).collect();
    let r = Tuner::with_devices(devs).unwrap().tune(&job(), &o).unwrap();
    let n = seen.lock().unwrap().0;
    (n, r)
}

/// A tune whose first proposals were compiled before (a size tuned again, a library's next
/// problem, a re-tune) keeps few configs in flight: compiling does not bound it, so an
/// adaptive search chooses each after the outcomes before it are in. Before, 8 compile
/// threads had it ask for 12 at once: the whole budget of 10, blind.
#[test]
fn a_warm_compile_cache_keeps_an_adaptive_search_choosing_after_outcomes() {
    let (n, warm) = compiled_before_an_outcome(FakeBackend::new(limits(), time).with_compile_cache(|_| true));
    assert!(n <= 2, "{n} compiled before the first outcome");
    assert_eq!((warm.evaluated, warm.compile_cache_hits), (10, 10));
    assert!(
        warm.notes.iter().any(|x| x.starts_with("compile cache: the first config asked for was compiled before, so 2 were kept in flight (not 12)")),
        "{:?}",
        warm.notes
    );
    // Over three devices: one measuring on each and one more.
    let three = (0..3).map(|_| FakeBackend::new(limits(), time).with_compile_cache(|_| true)).collect();
    let (n, warm) = compiled_before_an_outcome_on(three);
    assert!(n <= 4, "{n} compiled before the first outcome");
    assert!(warm.notes.iter().any(|x| x.starts_with("compile cache: ") && x.contains("so 4 were kept in flight (not 12)")), "{:?}", warm.notes);
    // A backend whose compiles are quick (wgpu) keeps as few from the start.
    let (n, quick) = compiled_before_an_outcome(FakeBackend::new(limits(), time).with_quick_compiles());
    assert!(n <= 2, "{n} compiled before the first outcome");
    assert!(
        quick.notes.iter().any(|x| x.starts_with("compiling a config takes a fraction of measuring it on this backend, so 2 were kept in flight (not 12)")),
        "{:?}",
        quick.notes
    );
    // A cache that holds none of them, and a backend that cannot tell: the first flight keeps
    // every compile thread busy, as before, and nothing is said.
    for dev in [FakeBackend::new(limits(), time).with_compile_cache(|_| false), FakeBackend::new(limits(), time)] {
        let (n, cold) = compiled_before_an_outcome(dev);
        assert!(n >= 8, "{n} compiled before the first outcome");
        assert!(!cold.notes.iter().any(|x| x.starts_with("compile cache")), "{:?}", cold.notes);
    }
}

/// What a spec's `[bench]` and `[tune]` tables say reaches a tune made outside the command
/// line (the launch APIs' `from_spec` and `kerntune confirm` build their options so), as it
/// does `kerntune tune`: before, an application's first launch ignored `[tune]` and tuned the
/// whole space exhaustively whatever budget the spec gave.
#[test]
fn a_spec_s_settings_reach_the_tune_options() {
    let d = tempfile::tempdir().unwrap();
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/triad");
    for f in ["triad.wgsl", "triad.cu"] {
        std::fs::copy(src.join(f), d.path().join(f)).unwrap();
    }
    let spec_file = d.path().join("triad.toml");
    let shipped = std::fs::read_to_string(src.join("triad.toml")).unwrap();
    std::fs::write(&spec_file, &shipped).unwrap();
    let o = TuneOptions::for_spec(&kerntune_core::plan::prepare::load(&spec_file).unwrap()).unwrap();
    assert_eq!(o.strategy, "auto", "no strategy named: the transfer search where priors exist, else exhaustive");
    assert_eq!(o.budget, Budget::default());
    assert_eq!((o.bench.max_reps, o.bench.max_seconds), (50, 0.5), "the shipped spec's [bench]");
    assert_eq!(o.compile_tail, TuneOptions::default().compile_tail);
    std::fs::write(
        &spec_file,
        format!("{shipped}\n[tune]\nstrategy = \"random\"\nbudget = \"5,30s\"\nseed = 7\ncompile_tail = \"off\"\nmodel = true\ntop_k = 4\n"),
    )
    .unwrap();
    let o = TuneOptions::for_spec(&kerntune_core::plan::prepare::load(&spec_file).unwrap()).unwrap();
    assert_eq!((o.strategy.as_str(), o.budget.max_evals, o.budget.max_seconds, o.seed), ("random", Some(5), Some(30.0), 7));
    assert_eq!((o.compile_tail, o.model, o.top_k), (None, true, Some(4)));
    assert!(o.db.is_none(), "the caller names the database");
}

#[test]
fn noisy_runs_agree_on_the_winner() {
    let mut winners = Vec::new();
    for seed in 1..=5 {
        let fake = FakeBackend::new(limits(), time).with_noise(0.01, seed);
        let mut o = opts();
        o.compile_threads = Some(1);
        let r = Tuner::new(fake).tune(&job(), &o).unwrap();
        winners.push(r.winner.key());
    }
    assert!(winners.iter().all(|w| w == &winners[0]), "{winners:?}");
    assert_eq!(winners[0], "bx=128,vec=4");
}

fn temp_db() -> (tempfile::TempDir, Database) {
    let d = tempfile::tempdir().unwrap();
    let db = Database::at(d.path().join("db.sqlite"));
    (d, db)
}

/// Runs `n` copies of the ignored test `child` at once (each with `KT_TEST_DB` and its index in
/// `KT_TEST_N`), asserts that each succeeded, and returns their standard outputs in order.
fn children(child: &str, db: &Database, n: usize) -> Vec<String> {
    let exe = std::env::current_exe().unwrap();
    let running: Vec<_> = (0..n)
        .map(|k| {
            std::process::Command::new(&exe)
                .args(["--exact", child, "--ignored", "--test-threads=1", "--nocapture"])
                .env("KT_TEST_DB", db.path())
                .env("KT_TEST_N", k.to_string())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    running
        .into_iter()
        .map(|c| {
            let out = c.wait_with_output().unwrap();
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            assert!(out.status.success(), "{child} failed:\n{text}\n{}", String::from_utf8_lossy(&out.stderr));
            text
        })
        .collect()
}

#[test]
fn database_round_trip_and_hit() {
    let (_d, db) = temp_db();
    let mut o = opts();
    o.db = Some(db.clone());
    let t1 = Tuner::new(FakeBackend::new(limits(), time));
    let r1 = t1.tune(&job(), &o).unwrap();
    assert!(!r1.db_hit);
    let t2 = Tuner::new(FakeBackend::new(limits(), time));
    let r2 = t2.tune(&job(), &o).unwrap();
    assert!(r2.db_hit);
    assert_eq!(t2.backend().compiles.load(Ordering::SeqCst), 0, "a hit compiles nothing");
    assert_eq!(r2.winner, r1.winner);
    assert_eq!(r2.winner_stats, r1.winner_stats);
    // The file parses back to the same content and records every evaluated config.
    let f = db.load().unwrap();
    let text = serde_json::to_string_pretty(&f).unwrap();
    assert_eq!(DbFile::parse(&text, db.path()).unwrap(), f);
    let e = f.entries.values().next().unwrap();
    assert_eq!(e.measurements.len(), r1.evaluated);
    assert_eq!(e.winner.as_ref().unwrap().config, r1.winner.key());
    // A different problem size is a different entry: it tunes.
    let mut j = job();
    j.sizes[0].1 = Value::Int(8192);
    assert!(!Tuner::new(FakeBackend::new(limits(), time)).tune(&j, &o).unwrap().db_hit);
    // A different target fingerprint too.
    let other = FakeBackend::new(limits(), time).with_target(Target::new("fake", Vendor::Portable, "fake2", "another device"));
    assert!(!Tuner::new(other).tune(&job(), &o).unwrap().db_hit);
    assert_eq!(db.load().unwrap().entries.len(), 3);
}

#[test]
fn a_changed_space_measures_only_the_new_configs() {
    let (_d, db) = temp_db();
    let mut o = opts();
    o.db = Some(db.clone());
    let mut small = job();
    small.params[1] = Param::new("vec", [1, 2]);
    let r1 = Tuner::new(FakeBackend::new(limits(), time)).tune(&small, &o).unwrap();
    assert_eq!(r1.evaluated, 12);
    let t = Tuner::new(FakeBackend::new(limits(), time));
    let r2 = t.tune(&job(), &o).unwrap();
    assert!(!r2.db_hit, "a different space re-selects");
    assert_eq!(r2.from_db, 12);
    // The 6 vec=4 configs are new; the default's compile for the reference is one more.
    assert_eq!(t.backend().compiles.load(Ordering::SeqCst), 6 + 1);
    assert!(is(&r2.winner, 128, 4));
}

/// A spec fixed after a tune (a buffer's length, the launch, the verification) or a timeout
/// raised as a timeout's diagnosis suggests: the stored records made for the old setup are not
/// reused, the entry keeps only the new tune's, and a note says why. Configs that measured
/// stand when only the timeout changed.
#[test]
fn records_made_for_another_setup_are_measured_again() {
    let (_d, db) = temp_db();
    let hang = |c: &Config| if c.get_i64("bx") == Some(32) { Behavior::Hang } else { Behavior::Ok };
    let fake = || FakeBackend::new(limits(), time).with_behavior(hang);
    let mut o = opts();
    o.db = Some(db.clone());
    o.bench.timeout = Duration::from_millis(10);
    let first = Tuner::new(fake()).tune(&job(), &o).unwrap();
    assert_eq!((first.evaluated, first.from_db, first.failures.get("timed out")), (18, 0, Some(&3)));
    let database = |r: &TuneReport| r.notes.iter().filter(|n| n.starts_with("database: ")).cloned().collect::<Vec<_>>();
    // The same setup: a hit.
    assert!(Tuner::new(fake()).tune(&job(), &o).unwrap().db_hit);
    // A longer timeout: the three that timed out run again (and time out again here), the rest stand.
    o.bench.timeout = Duration::from_millis(30);
    let t = Tuner::new(fake());
    let longer = t.tune(&job(), &o).unwrap();
    assert!(!longer.db_hit, "the stored winner was chosen without the configs that timed out");
    assert_eq!((longer.evaluated, longer.from_db), (18, 15));
    assert_eq!(database(&longer), ["database: 3 configs that timed out under the 0.01 s limit are measured again under 0.03 s ([bench] timeout or --timeout)"]);
    assert!(Tuner::new(fake()).tune(&job(), &o).unwrap().db_hit, "and then a hit again");
    // A buffer of another length, and another tolerance: every record is stale. A search of
    // six configs leaves the entry with its six alone.
    let mut fixed = job();
    if let ArgKind::Buffer { len, .. } = &mut fixed.args[1].kind {
        *len = "n + 64".into();
    }
    fixed.verify.tolerance.atol = 1e-3;
    let six = TuneOptions { strategy: "random".into(), budget: Budget::parse("6").unwrap(), ..o.clone() };
    let again = Tuner::new(fake()).tune(&fixed, &six).unwrap();
    assert_eq!((again.evaluated, again.from_db), (6, 0));
    assert_eq!(
        database(&again),
        ["database: the arguments and the verification changed since the 18 stored measurements of this entry were made: they are not reused, and this tune's measurements replace them"]
    );
    let f = db.load().unwrap();
    assert_eq!(f.entries.values().next().unwrap().measurements.len(), 6, "the entry holds the last tune's records alone");
    assert!(Tuner::new(fake()).tune(&fixed, &six).unwrap().db_hit);
    // The old spec again: the fixed spec's records are stale for it in turn.
    assert_eq!(Tuner::new(fake()).tune(&job(), &o).unwrap().from_db, 0);
}

/// An input read from a file named by another path to the same file (the spec given from
/// another working folder) is the same setup: a hit, not a tune measured again; other data
/// under the same name is another setup.
#[test]
fn a_file_named_by_another_path_is_the_same_setup() {
    let (d, db) = temp_db();
    std::fs::create_dir(d.path().join("sub")).unwrap();
    let data: Vec<u8> = (0..4096u32).flat_map(|i| (i as f32).to_le_bytes()).collect();
    std::fs::write(d.path().join("x.bin"), data).unwrap();
    let with_input = |path: std::path::PathBuf| {
        let mut j = job();
        if let ArgKind::Buffer { init, .. } = &mut j.args[0].kind {
            *init = Init::File { path };
        }
        j
    };
    let o = TuneOptions { db: Some(db.clone()), ..opts() };
    let first = Tuner::new(FakeBackend::new(limits(), time)).tune(&with_input(d.path().join("x.bin")), &o).unwrap();
    assert!(!first.db_hit);
    let again = Tuner::new(FakeBackend::new(limits(), time)).tune(&with_input(d.path().join("sub/../x.bin")), &o).unwrap();
    assert!(again.db_hit, "{:?}", again.notes);
    // Other data under the same name: another setup.
    let data: Vec<u8> = (0..4096u32).flat_map(|i| (i as f32 + 0.5).to_le_bytes()).collect();
    std::fs::write(d.path().join("x.bin"), data).unwrap();
    let other = Tuner::new(FakeBackend::new(limits(), time)).tune(&with_input(d.path().join("x.bin")), &o).unwrap();
    assert_eq!((other.db_hit, other.from_db), (false, 0));
    assert!(other.notes.iter().any(|n| n.starts_with("database: the arguments changed")), "{:?}", other.notes);
}

/// An adaptive search run again on an entry it measured (resumed, or with a larger budget)
/// starts from what is stored: the records count toward the budget and take part in the pick,
/// and only the rest of the budget is measured.
#[test]
fn an_adaptive_search_goes_on_from_the_stored_records() {
    let (_d, db) = temp_db();
    // Another seed the second time: its own proposals would not be the stored ones.
    let o = |budget: &str, force: bool, seed: u64| TuneOptions {
        db: Some(db.clone()),
        strategy: "hybrid".into(),
        budget: Budget::parse(budget).unwrap(),
        force,
        seed,
        ..opts()
    };
    let first = Tuner::new(FakeBackend::new(limits(), time)).tune(&job(), &o("6", false, 1)).unwrap();
    assert_eq!((first.evaluated, first.from_db), (6, 0));
    let t = Tuner::new(FakeBackend::new(limits(), time));
    let again = t.tune(&job(), &o("10", true, 2)).unwrap();
    assert_eq!((again.evaluated, again.from_db), (10, 6), "the six stored count; four more are measured");
    // Four new configs compiled, and the default once more for the reference outputs.
    assert!(t.backend().compiles.load(Ordering::SeqCst) <= 4 + 1);
    assert!(again.winner_stats.mean <= first.winner_stats.mean, "the pick includes the stored records");
    // A smaller budget than the records: the fastest of them are told first, so the winner is
    // the best stored (before, the first in the space's order: bx=32 first).
    let small = Tuner::new(FakeBackend::new(limits(), time)).tune(&job(), &o("3", true, 3)).unwrap();
    assert_eq!((small.evaluated, small.from_db), (3, 3));
    assert_eq!(small.winner, again.winner, "the best of the ten stored");
}

#[test]
fn an_interrupted_tune_resumes_without_remeasuring() {
    let (_d, db) = temp_db();
    let seen = Arc::new(Mutex::new(0usize));
    let mut o = opts();
    o.db = Some(db.clone());
    o.flush_every = Duration::ZERO;
    o.compile_threads = Some(1);
    let s2 = seen.clone();
    o.observer = Some(Arc::new(move |e| {
        if let Event::Result { .. } = e {
            let mut n = s2.lock().unwrap();
            *n += 1;
            if *n == 7 {
                panic!("simulated crash");
            }
        }
    }));
    let crashed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| Tuner::new(FakeBackend::new(limits(), time)).tune(&job(), &o)));
    assert!(crashed.is_err());
    let stored = db.load().unwrap().entries.values().next().unwrap().measurements.len();
    assert_eq!(stored, 6, "each finished config was flushed before the crash");
    let mut o2 = opts();
    o2.db = Some(db.clone());
    let t = Tuner::new(FakeBackend::new(limits(), time));
    let r = t.tune(&job(), &o2).unwrap();
    assert_eq!(r.from_db, 6);
    assert_eq!(r.evaluated, 18);
    // 12 remaining configs compiled, plus the default once more for the reference output.
    assert_eq!(t.backend().compiles.load(Ordering::SeqCst), 12 + 1);
}

/// A database that cannot be written mid-tune (a full disk; here its folder taken away, a file
/// in its place) neither stops the tune nor loses a measurement: the tune goes on, and at its
/// end keeps what the database could not take, with the winner, in a file `kerntune db merge`
/// reads, and says where. Where the database can be written again before the end, what a
/// failed write kept goes into it and the file is removed.
#[test]
fn a_database_that_cannot_be_written_loses_nothing() {
    for recovers in [false, true] {
        let d = tempfile::tempdir().unwrap();
        let (folder, away) = (d.path().join("db"), d.path().join("db.away"));
        let db = Database::at(folder.join("db.sqlite"));
        let mut o = opts();
        o.db = Some(db.clone());
        o.flush_every = Duration::ZERO;
        o.compile_threads = Some(1);
        let seen = Arc::new(Mutex::new(0usize));
        let (s2, f2, a2) = (seen.clone(), folder.clone(), away.clone());
        o.observer = Some(Arc::new(move |e| {
            if let Event::Result { .. } = e {
                let mut n = s2.lock().unwrap();
                *n += 1;
                if *n == 6 {
                    std::fs::rename(&f2, &a2).unwrap();
                    std::fs::write(&f2, b"not a folder").unwrap();
                }
                if recovers && *n == 12 {
                    std::fs::remove_file(&f2).unwrap();
                    std::fs::rename(&a2, &f2).unwrap();
                }
            }
        }));
        // This process's files kept for a database, as the tune names them: any left in the
        // temporary folder by another process of the same PID (an earlier run's) are not this
        // tune's (one such stale file failed the check below once).
        let unsaved = || -> Vec<std::path::PathBuf> {
            std::fs::read_dir(std::env::temp_dir())
                .unwrap()
                .flatten()
                .filter(|f| f.file_name().to_string_lossy().contains(&format!("-{}.json", std::process::id())))
                .filter(|f| f.file_name().to_string_lossy().starts_with("kerntune-unsaved-"))
                .map(|f| f.path())
                .collect()
        };
        let before = unsaved();
        let r = Tuner::new(FakeBackend::new(limits(), time)).tune(&job(), &o).unwrap();
        assert_eq!((r.evaluated, r.results.len()), (18, 18));
        if recovers {
            assert_eq!(r.unsaved, None);
            let e = db.load().unwrap().entries.into_values().next().unwrap();
            assert_eq!(e.measurements.len(), 18, "the measurements a failed write kept went in");
            assert_eq!(e.winner.map(|w| w.config), Some(r.winner.key()));
            let left: Vec<_> = unsaved().into_iter().filter(|f| !before.contains(f)).collect();
            assert!(left.is_empty(), "the file is removed once the database holds it: {left:?}");
            continue;
        }
        let u = r.unsaved.clone().expect("the database could not be written at the end");
        let kept = u.kept_in.clone().expect("kept in a file");
        assert!(u.winner && u.measurements >= 12 && u.measurements < 18, "{u:?}");
        assert!(u.line().contains(&format!("`kerntune db merge {} --db {}` adds them", kept.display(), db.path().display())), "{}", u.line());
        assert!(u.error.contains("is no folder this process can write") || u.error.contains("Not a directory"), "{}", u.error);
        // Once the folder is back, the file merges into the database: every measurement, and
        // the winner.
        std::fs::remove_file(&folder).unwrap();
        std::fs::rename(&away, &folder).unwrap();
        let in_file = Database::at(&kept).load().unwrap();
        std::fs::remove_file(&kept).unwrap();
        db.update(|f| f.merge(&in_file)).unwrap();
        let e = db.load().unwrap().entries.into_values().next().unwrap();
        assert_eq!(e.measurements.len(), 18);
        assert_eq!(e.winner.map(|w| w.config), Some(r.winner.key()));
    }
}

#[test]
fn concurrent_threads_lose_no_entry() {
    let (_d, db) = temp_db();
    std::thread::scope(|s| {
        for n in 0..8 {
            let db = db.clone();
            s.spawn(move || {
                let mut j = job();
                j.sizes[0].1 = Value::Int(1024 * (n + 1));
                let mut o = opts();
                o.db = Some(db);
                o.flush_every = Duration::ZERO;
                Tuner::new(FakeBackend::new(limits(), time)).tune(&j, &o).unwrap();
            });
        }
    });
    let f = db.load().unwrap();
    assert_eq!(f.entries.len(), 8);
    assert!(f.entries.values().all(|e| e.winner.is_some() && e.measurements.len() == 18));
}

/// Child half of `concurrent_processes_lose_no_entry`: runs only when spawned by it.
#[test]
#[ignore = "spawned by concurrent_processes_lose_no_entry"]
fn child_writer() {
    let (Ok(path), Ok(n)) = (std::env::var("KT_TEST_DB"), std::env::var("KT_TEST_N")) else {
        return;
    };
    let n: i64 = n.parse().unwrap();
    for k in 0..3 {
        let mut j = job();
        j.sizes[0].1 = Value::Int(1000 * (n + 1) + k);
        let mut o = opts();
        o.db = Some(Database::at(&path));
        o.flush_every = Duration::ZERO;
        Tuner::new(FakeBackend::new(limits(), time)).tune(&j, &o).unwrap();
    }
}

/// Child half of `eight_processes_tuning_one_entry_agree_on_its_winner`.
#[test]
#[ignore = "spawned by eight_processes_tuning_one_entry_agree_on_its_winner"]
fn child_same_entry() {
    let Ok(path) = std::env::var("KT_TEST_DB") else { return };
    let mut o = opts();
    o.db = Some(Database::at(&path));
    o.flush_every = Duration::ZERO;
    // Noisy timings: without agreement, each process could pick another config of the tie.
    let seed: u64 = std::env::var("KT_TEST_N").unwrap().parse().unwrap();
    let t = Tuner::new(FakeBackend::new(limits(), time).with_noise(0.05, seed).with_compile_delay(Duration::from_millis(20)));
    let r = t.tune(&job(), &o).unwrap();
    println!("WINNER {} COMPILED {} HIT {}", r.winner.key(), t.backend().compiles.load(Ordering::SeqCst), r.db_hit);
}

#[test]
fn eight_processes_tuning_one_entry_agree_on_its_winner() {
    let (_d, db) = temp_db();
    let mut lines = Vec::new();
    for text in children("child_same_entry", &db, 8) {
        let at = text.find("WINNER").unwrap_or_else(|| panic!("no WINNER line in:\n{text}"));
        lines.push(text[at..].lines().next().unwrap().to_string());
    }
    let winners: std::collections::BTreeSet<&str> = lines.iter().map(|l| l.split(' ').nth(1).unwrap()).collect();
    assert_eq!(winners.len(), 1, "every process reports the same winner: {lines:#?}");
    // One process tuned; the seven others waited for it and found its winner.
    assert_eq!(lines.iter().filter(|l| l.ends_with("HIT true")).count(), 7, "{lines:#?}");
    let f = db.load().unwrap();
    assert_eq!(f.entries.len(), 1);
    let e = f.entries.values().next().unwrap();
    assert_eq!(e.winner.as_ref().unwrap().config, *winners.iter().next().unwrap());
    assert_eq!(e.measurements.len(), 18);
}

/// Child half of `the_shards_of_a_split_tune_one_database_at_once`: tunes shard `KT_TEST_N`
/// of four and, at its first result, waits until every shard has measured something (so that
/// shards that wait for each other's locks fail here instead of passing one after another).
#[test]
#[ignore = "spawned by the_shards_of_a_split_tune_one_database_at_once"]
fn child_shard() {
    let Ok(path) = std::env::var("KT_TEST_DB") else { return };
    let k: usize = std::env::var("KT_TEST_N").unwrap().parse().unwrap();
    let dir = std::path::Path::new(&path).parent().unwrap().to_path_buf();
    let mut o = opts();
    o.db = Some(Database::at(&path));
    o.flush_every = Duration::ZERO;
    o.shard = Some(kerntune_core::spec::settings::Shard { index: k, count: 4 });
    let met = Arc::new(std::sync::Once::new());
    o.observer = Some(Arc::new(move |e: &Event<'_>| {
        if matches!(e, Event::Result { .. }) {
            met.call_once(|| {
                std::fs::write(dir.join(format!("started-{k}")), "").unwrap();
                let (t0, limit) = (std::time::Instant::now(), Duration::from_secs(120));
                while (0..4).any(|j| !dir.join(format!("started-{j}")).exists()) {
                    assert!(t0.elapsed() < limit, "shard {k}/4 measured alone for {limit:?}: the other shards waited for it");
                    std::thread::sleep(Duration::from_millis(20));
                }
            });
        }
    }));
    let t = Tuner::new(FakeBackend::new(limits(), time).with_compile_delay(Duration::from_millis(20)));
    let r = t.tune(&job(), &o).unwrap();
    println!("WINNER {} HIT {}", r.winner.key(), r.db_hit);
}

/// The shards of a split (say one per GPU of a node) tune into one database at once: none
/// waits for another's lock, and the entry they leave is the whole space's, as merging their
/// own files would make it.
#[test]
fn the_shards_of_a_split_tune_one_database_at_once() {
    let (_d, db) = temp_db();
    for text in children("child_shard", &db, 4) {
        assert!(text.contains("WINNER"), "{text}");
    }
    let f = db.load().unwrap();
    let e = f.entries.values().next().unwrap();
    assert_eq!(e.measurements.len(), 18, "every candidate, each measured by one shard");
    assert_eq!(e.origin.as_ref().unwrap().shards(), None, "every shard in: the whole space");
    let mut o = opts();
    o.db = Some(db.clone());
    let whole = Tuner::new(FakeBackend::new(limits(), time)).tune(&job(), &o).unwrap();
    assert!(whole.db_hit, "the shards' entry answers a tune of the whole space");
    assert!(is(&whole.winner, 128, 4), "{}", whole.winner);
}

/// Measurements of one config from two writers merge: the better-sampled record stays,
/// whichever is written last.
#[test]
fn a_measurement_is_never_replaced_by_a_worse_sampled_one() {
    let (_d, db) = temp_db();
    let t = Tuner::new(FakeBackend::new(limits(), time));
    let mut o = opts();
    o.db = Some(db.clone());
    let id = t.tune(&job(), &o).unwrap().entry;
    let before = db.entry(&id).unwrap().unwrap();
    let (key, m) = before.measurements.iter().find(|(_, m)| m.stats().is_some_and(|s| s.samples > 1)).map(|(k, m)| (k.clone(), m.clone())).unwrap();
    let mut worse = m.clone();
    if let kerntune_core::store::db::Status::Ok { stats } = &mut worse.status {
        stats.samples = 1;
        stats.mean *= 3.0;
    }
    db.update_entry(&id, |e| e.as_mut().unwrap().record(key.clone(), worse)).unwrap();
    assert_eq!(db.entry(&id).unwrap().unwrap().measurements[&key], m);
}

#[test]
fn concurrent_processes_lose_no_entry() {
    let (_d, db) = temp_db();
    children("child_writer", &db, 4);
    let f = db.load().unwrap();
    assert_eq!(f.entries.len(), 12, "4 processes x 3 problems");
}

#[test]
fn merge_keeps_everything_and_is_order_independent() {
    let (_d1, a) = temp_db();
    let (_d2, b) = temp_db();
    let mut o = opts();
    o.db = Some(a.clone());
    Tuner::new(FakeBackend::new(limits(), time)).tune(&job(), &o).unwrap();
    o.db = Some(b.clone());
    let other = FakeBackend::new(limits(), time).with_noise(0.01, 9).with_target(Target::new("fake", Vendor::Portable, "fake2", "another device"));
    Tuner::new(other).tune(&job(), &o).unwrap();
    Tuner::new(FakeBackend::new(limits(), time).with_noise(0.01, 3)).tune(&job(), &TuneOptions { force: true, remeasure: true, ..o.clone() }).unwrap();
    let (fa, fb) = (a.load().unwrap(), b.load().unwrap());
    let mut ab = fa.clone();
    ab.merge(&fb);
    let mut ba = fb.clone();
    ba.merge(&fa);
    assert_eq!(ab.entries.len(), 2);
    assert_eq!(serde_json::to_string(&ab).unwrap(), serde_json::to_string(&ba).unwrap());
}

#[test]
fn a_corrupt_database_is_reported_and_left_untouched() {
    let (_d, db) = temp_db();
    std::fs::write(db.path(), "{ this is not json").unwrap();
    let mut o = opts();
    o.db = Some(db.clone());
    let t = Tuner::new(FakeBackend::new(limits(), time));
    let e = t.tune(&job(), &o).unwrap_err();
    // It names no kerntune schema: it may be any file of the user's, so it is not called a
    // damaged database to clear.
    let msg = e.to_string();
    assert!(
        msg.contains("is not a kerntune database (not JSON") && msg.contains("db.sqlite") && msg.contains("left untouched") && !msg.contains("db clear"),
        "{msg}"
    );
    assert_eq!(std::fs::read_to_string(db.path()).unwrap(), "{ this is not json");
    assert_eq!(t.backend().compiles.load(Ordering::SeqCst), 0, "nothing measured, nothing lost");
    // Neither SQLite nor JSON: the same.
    std::fs::write(db.path(), b"\x00\x01garbage").unwrap();
    let msg = t.tune(&job(), &o).unwrap_err().to_string();
    assert!(msg.contains("neither an SQLite database nor JSON") && msg.contains("left untouched"), "{msg}");
    assert_eq!(std::fs::read(db.path()).unwrap(), b"\x00\x01garbage");
    // A kerntune database in JSON, cut short: damaged, and said so.
    std::fs::write(db.path(), "{\"schema\": \"kerntune-db\", \"version\": 1, \"entries\": {").unwrap();
    let msg = t.tune(&job(), &o).unwrap_err().to_string();
    assert!(msg.contains("corrupt") && msg.contains("left untouched"), "{msg}");
    assert_eq!(t.backend().compiles.load(Ordering::SeqCst), 0, "nothing measured, nothing lost");
}

/// A database damaged one field at a time (another program's write, a disk error): each column
/// of each table set to a value of the wrong kind in every row. Reading it (entries, the priors
/// read, `db export`'s document) and tuning on it either work or end in a message, never a
/// panic, and a read or a tune that fails leaves every row as it was.
#[test]
fn a_database_damaged_field_by_field_never_panics() {
    let (d, db) = temp_db();
    let mut o = opts();
    o.db = Some(db.clone());
    Tuner::new(FakeBackend::new(limits(), time)).tune(&job(), &o).unwrap();
    let pristine = d.path().join("pristine.sqlite");
    {
        let c = rusqlite::Connection::open(db.path()).unwrap();
        c.execute_batch(&format!("VACUUM INTO '{}'", pristine.display())).unwrap();
    }
    let columns: Vec<(String, String)> = {
        let c = rusqlite::Connection::open(&pristine).unwrap();
        tables(&c)
            .iter()
            .flat_map(|t| {
                let cols: Vec<String> =
                    c.prepare(&format!("PRAGMA table_info({t})")).unwrap().query_map([], |r| r.get(1)).unwrap().map(Result::unwrap).collect();
                cols.into_iter().map(move |col| (t.clone(), col))
            })
            .collect()
    };
    assert!(columns.len() >= 8, "{columns:?}");
    let bad = ["NULL", "-1", "'x'", "'{\"a\":'", "'[]'", "X'00FF'", "1e308", "'{}'"];
    let (mut damaged, mut refused) = (0, 0);
    for (table, column) in &columns {
        for value in bad {
            for f in [db.path().to_path_buf(), db.path().with_extension("sqlite-wal"), db.path().with_extension("sqlite-shm")] {
                let _ = std::fs::remove_file(f);
            }
            std::fs::copy(&pristine, db.path()).unwrap();
            let c = rusqlite::Connection::open(db.path()).unwrap();
            // A value the schema refuses (a unique key made equal in every row) is no damage.
            if c.execute(&format!("UPDATE {table} SET {column} = {value}"), []).is_err() {
                continue;
            }
            drop(c);
            damaged += 1;
            let before = rows(db.path());
            let read = std::panic::catch_unwind(|| {
                let loaded = db.load().map(|f| serde_json::to_string(&f).map(|_| f.entries.len()));
                let elsewhere = db.times_elsewhere("k", "n=1", "t", true).map(|v| v.len());
                (loaded.is_err(), elsewhere.is_err())
            });
            let Ok((load_failed, _)) = read else { panic!("{table}.{column} = {value}: reading panicked") };
            if load_failed {
                refused += 1;
                assert!(rows(db.path()) == before, "{table}.{column} = {value}: a failed read changed what the file holds");
            }
            let tuned = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                Tuner::new(FakeBackend::new(limits(), time)).tune(&job(), &o).map(|r| r.winner.key())
            }));
            match tuned {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => {
                    assert!(!e.to_string().trim().is_empty(), "{table}.{column} = {value}: an empty message");
                    assert!(rows(db.path()) == before, "{table}.{column} = {value}: a failed tune changed what the file holds ({e})");
                }
                Err(_) => panic!("{table}.{column} = {value}: tuning panicked"),
            }
        }
    }
    assert!(damaged > 40 && refused > 0, "{damaged} damaged, {refused} refused on reading");
}

/// The names of the database's tables, in order.
fn tables(c: &rusqlite::Connection) -> Vec<String> {
    c.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").unwrap().query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
}

/// Every row of every table of the database at `path`, as text (what the file holds, whatever
/// SQLite's own bookkeeping in its header).
fn rows(path: &std::path::Path) -> Vec<String> {
    let c = rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let mut out = Vec::new();
    for t in tables(&c) {
        let mut q = c.prepare(&format!("SELECT * FROM {t}")).unwrap();
        let n = q.column_count();
        let found: Vec<String> = q
            .query_map([], |r| Ok(format!("{:?}", (0..n).map(|i| r.get::<_, rusqlite::types::Value>(i).ok()).collect::<Vec<_>>())))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        out.push(format!("{t}: {found:?}"));
    }
    out
}

/// Reading the database takes no write lock: while another process holds a write transaction
/// on it (a tune storing its results, a `db merge` of a large file), a database hit, `db show`
/// and the priors read answer at once instead of queueing behind it for up to two minutes.
#[test]
fn a_lookup_does_not_wait_for_a_writer() {
    let (_d, db) = temp_db();
    let mut o = opts();
    o.db = Some(db.clone());
    Tuner::new(FakeBackend::new(limits(), time)).tune(&job(), &o).unwrap();
    let writer = rusqlite::Connection::open(db.path()).unwrap();
    writer.execute_batch("BEGIN IMMEDIATE; INSERT INTO meta(name, value) VALUES ('held', 'by a writer');").unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let t = Tuner::new(FakeBackend::new(limits(), time));
        let hit = t.tune(&job(), &o).map(|r| r.db_hit).map_err(|e| e.to_string());
        let entries = o.db.as_ref().unwrap().load().map(|f| f.entries.len()).map_err(|e| e.to_string());
        let elsewhere = o.db.as_ref().unwrap().times_elsewhere("k", "n=1", "t", false).map(|v| v.len()).map_err(|e| e.to_string());
        tx.send((hit, entries, elsewhere, t.backend().compiles.load(Ordering::SeqCst))).unwrap();
    });
    let got = rx.recv_timeout(Duration::from_secs(30));
    writer.execute_batch("ROLLBACK").unwrap();
    let (hit, entries, elsewhere, compiles) = got.expect("the lookup waited for the writer's transaction");
    reader.join().unwrap();
    assert_eq!(hit, Ok(true), "a database hit");
    assert_eq!(compiles, 0);
    assert_eq!(entries, Ok(1));
    assert_eq!(elsewhere, Ok(0));
}

/// A database an earlier version wrote as JSON is read as it is, and converted to SQLite
/// (keeping every entry) on the first write.
#[test]
fn a_json_database_is_read_and_converted_on_write() {
    let (_d, db) = temp_db();
    let t = Tuner::new(FakeBackend::new(limits(), time));
    let mut o = opts();
    o.db = Some(db.clone());
    t.tune(&job(), &o).unwrap();
    let json = serde_json::to_string(&db.load().unwrap()).unwrap();
    db.clear().unwrap();
    std::fs::write(db.path(), &json).unwrap();
    // Read as JSON: a database hit, nothing compiled.
    let t2 = Tuner::new(FakeBackend::new(limits(), time));
    assert!(t2.tune(&job(), &o).unwrap().db_hit);
    assert_eq!(t2.backend().compiles.load(Ordering::SeqCst), 0);
    // A write (another problem) converts it, keeping the first entry.
    let mut j = job();
    j.sizes[0].1 = Value::Int(8192);
    t2.tune(&j, &o).unwrap();
    assert!(std::fs::read(db.path()).unwrap().starts_with(b"SQLite format 3"));
    assert_eq!(db.load().unwrap().entries.len(), 2);
}

#[test]
fn a_default_that_breaks_the_restrictions_is_never_run() {
    let mut j = job();
    j.restrictions = vec!["vec > 1".into()];
    // The default would fault if it ran (it breaks the file's own restrictions).
    let fake = FakeBackend::new(limits(), |c: &Config| if is(c, 256, 1) { 0.5e-3 } else { time(c) }).with_behavior(|c| {
        if is(c, 256, 1) {
            Behavior::DeviceLost
        } else {
            Behavior::Ok
        }
    });
    let r = Tuner::new(fake).tune(&j, &opts()).unwrap();
    assert!(!r.default_included);
    assert!(r.results.iter().all(|x| !is(&x.config, 256, 1)), "never run");
    assert!(r.failures.is_empty(), "{:?}", r.failures);
    assert!(r.notes[0].starts_with("the default config (bx=256,vec=1) violates restriction 1 (`vec > 1`): it was not run"), "{:?}", r.notes);
    // The reference is the first valid config that ran.
    assert!(r.notes.iter().any(|n| n.starts_with("reference: the outputs of bx=32,vec=2 (the first valid config that ran)")), "{:?}", r.notes);
    // Restrictions that exclude every config are an error, default or not.
    j.restrictions = vec!["vec > 4".into()];
    let e = Tuner::new(FakeBackend::new(limits(), time)).tune(&j, &opts()).unwrap_err().to_string();
    assert!(e.contains("the restrictions leave no valid config"), "{e}");
}

/// A reference whose outputs vary from launch to launch (a race between threads) is no
/// reference: it is launched twice, and where its two launches disagree it is a wrong output
/// that says so, and the next config is tried. The racy default used to be the reference, call
/// every config that disagreed with it wrong, and win; a kernel racy in every config has no
/// winner, and the error says why.
#[test]
fn a_reference_whose_outputs_vary_from_launch_to_launch_is_no_reference() {
    let fake = FakeBackend::new(limits(), time).with_behavior(|c| if is(c, 256, 1) { Behavior::Racy } else { Behavior::Ok });
    let r = Tuner::new(fake).tune(&job(), &opts()).unwrap();
    match &result_of(&r, 256, 1).outcome {
        ResultOutcome::Failed { kind: FailureKind::WrongOutput, message } => {
            assert!(message.contains("its outputs differ between two launches on the same inputs, so no output can be checked against it"), "{message}")
        }
        other => panic!("the racy default: {other:?}"),
    }
    assert!(is(&r.winner, 128, 4), "{:?}", r.winner);
    assert!(r.notes.iter().any(|n| n.contains("the first valid config that ran (the default config failed)")), "{:?}", r.notes);
    let racy = FakeBackend::new(limits(), time).with_behavior(|_| Behavior::Racy);
    let e = Tuner::new(racy).tune(&job(), &opts()).unwrap_err().to_string();
    assert!(e.contains("no valid config left") && e.contains("its outputs differ between two launches on the same inputs"), "{e}");
}

#[test]
fn a_cpu_reference_checks_every_config() {
    let mut j = job();
    j.verify.reference = Reference::Host("fake".into(), Arc::new(|p| Ok(FakeBackend::reference(p))));
    let fake = FakeBackend::new(limits(), time).with_behavior(|c| if is(c, 256, 1) { Behavior::WrongOutput } else { Behavior::Ok });
    let r = Tuner::new(fake).tune(&j, &opts()).unwrap();
    assert!(matches!(result_of(&r, 256, 1).outcome, ResultOutcome::Failed { kind: FailureKind::WrongOutput, .. }), "even the default is verified");
    assert_eq!(r.reference, "cpu:fake");
}

/// A CPU reference made only once `fake` has timed 10 launches (or after 20 s, when the devices
/// wait for it and the test fails), and whether it waited for them.
fn reference_after_launches(fake: &FakeBackend) -> (Reference, Arc<std::sync::atomic::AtomicBool>) {
    let launched = fake.launch_counter();
    let waited = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = waited.clone();
    let reference = Reference::Host(
        "slow".into(),
        Arc::new(move |p| {
            let t = std::time::Instant::now();
            while launched.load(Ordering::SeqCst) < 10 && t.elapsed() < Duration::from_secs(20) {
                std::thread::sleep(Duration::from_millis(5));
            }
            flag.store(launched.load(Ordering::SeqCst) >= 10, Ordering::SeqCst);
            Ok(FakeBackend::reference(p))
        }),
    );
    (reference, waited)
}

/// A CPU reference that does not return every buffer argument, in order, is refused with one
/// message naming both lists (its outputs would be compared with another buffer's contents, or
/// not at all); one that does is verified against, with the inputs it returned dropped.
#[test]
fn a_cpu_reference_that_returns_other_buffers_is_refused_by_name() {
    let mut j = job();
    j.verify.reference = Reference::Host("outputs only".into(), Arc::new(|p| Ok(FakeBackend::reference(p).into_iter().filter(|b| b.name != "x").collect())));
    let e = Tuner::new(FakeBackend::new(limits(), time)).tune(&j, &opts()).unwrap_err().to_string();
    assert!(
        e.contains("cpu reference `outputs only` returned the buffers (y, z), where the problem's are (x, y, z): it must return every buffer argument, in argument order"),
        "{e}"
    );
    j.verify.reference = Reference::Host("fake".into(), Arc::new(|p| Ok(FakeBackend::reference(p))));
    let r = Tuner::new(FakeBackend::new(limits(), time)).tune(&j, &opts()).unwrap();
    assert!(r.results.iter().all(|x| x.verified), "{:?}", r.results.iter().filter(|x| !x.verified).collect::<Vec<_>>());
}

/// A slow CPU reference does not hold the devices: configs are measured while it is computed
/// and verified once it is made, a wrong one included.
#[test]
fn configs_are_measured_while_the_cpu_reference_is_computed() {
    let fake = FakeBackend::new(limits(), time).with_behavior(|c| if is(c, 64, 2) { Behavior::WrongOutput } else { Behavior::Ok });
    let mut j = job();
    let waited_for_launches;
    (j.verify.reference, waited_for_launches) = reference_after_launches(&fake);
    let r = Tuner::new(fake).tune(&j, &opts()).unwrap();
    assert!(waited_for_launches.load(Ordering::SeqCst), "configs were measured before the reference was made");
    assert!(matches!(result_of(&r, 64, 2).outcome, ResultOutcome::Failed { kind: FailureKind::WrongOutput, .. }), "{:?}", result_of(&r, 64, 2));
    let measured: Vec<_> = r.results.iter().filter(|x| matches!(x.outcome, ResultOutcome::Measured { .. })).collect();
    assert_eq!(measured.len() + 1, r.evaluated, "every other config measured");
    assert!(measured.iter().all(|x| x.verified), "each verified once the reference was made");
    assert!(!is(&r.winner, 64, 2));
}

/// A config measured before the CPU reference was made is verified later by a launch of its
/// own; that launch is part of what evaluating it cost, so its `eval_seconds` (which a tune
/// sizes its flight by, and a database passes on as priors) holds it, as a config verified with
/// its measurement does.
#[test]
fn a_late_verification_counts_in_the_configs_evaluation_seconds() {
    let verify = Duration::from_millis(60);
    let fake = FakeBackend::new(limits(), time).with_verify_delay(verify);
    let first = fake.first_verification();
    let mut j = job();
    let held;
    (j.verify.reference, held) = reference_after_launches(&fake);
    let r = Tuner::new(fake).tune(&j, &opts()).unwrap();
    assert!(held.load(Ordering::SeqCst), "configs were measured before the reference was made");
    assert!(first.load(Ordering::SeqCst) >= 10, "and verified after it: {} timed launches first", first.load(Ordering::SeqCst));
    let measured: Vec<_> = r.results.iter().filter(|x| matches!(x.outcome, ResultOutcome::Measured { .. })).collect();
    assert_eq!(measured.len(), r.evaluated);
    for x in &measured {
        assert!(x.verified, "{}", x.config);
        let s = x.eval_seconds.unwrap_or(0.0);
        assert!(s >= verify.as_secs_f64(), "{}: {s} s evaluating, its verification took {} s", x.config, verify.as_secs_f64());
    }
}

/// A job sent while the CPU reference is computed, taken by its device once it is made (here
/// the device is still making its workspace, as a worker process starts), is verified with its
/// measurement: its verification launch comes first and warms it up, as for any later config.
#[test]
fn a_job_sent_while_the_cpu_reference_is_computed_is_verified_if_it_is_made_by_then() {
    let fake = FakeBackend::new(limits(), time).with_workspace_delay(Duration::from_millis(400));
    let first = fake.first_verification();
    let launched = fake.launch_counter();
    let mut j = job();
    j.verify.reference = Reference::Host(
        "after the first job".into(),
        Arc::new(move |p| {
            std::thread::sleep(Duration::from_millis(50));
            Ok(FakeBackend::reference(p))
        }),
    );
    let r = Tuner::new(fake).tune(&j, &opts()).unwrap();
    assert_eq!(first.load(std::sync::atomic::Ordering::SeqCst), 0, "the first verification came before any timed launch");
    assert!(launched.load(std::sync::atomic::Ordering::SeqCst) > 0);
    assert!(r.results.iter().all(|x| x.verified), "{:?}", r.results.iter().filter(|x| !x.verified).collect::<Vec<_>>());
}

/// A time limit that ends the search before the CPU reference is made: what was measured is
/// kept, unverified, and the winner is verified in the final round all the same.
#[test]
fn a_time_limit_before_the_cpu_reference_keeps_what_was_measured() {
    use std::sync::atomic::Ordering;
    let fake = FakeBackend::new(limits(), time).with_launch_delay(Duration::from_millis(2));
    let launched = fake.launch_counter();
    let mut j = job();
    j.verify.reference = Reference::Host(
        "slow".into(),
        Arc::new(move |p| {
            while launched.load(Ordering::SeqCst) < 10 {
                std::thread::sleep(Duration::from_millis(5));
            }
            std::thread::sleep(Duration::from_millis(600));
            Ok(FakeBackend::reference(p))
        }),
    );
    let mut o = opts();
    o.budget = Budget { max_seconds: Some(0.3), ..Default::default() };
    let r = Tuner::new(fake).tune(&j, &o).unwrap();
    let measured: Vec<_> = r.results.iter().filter(|x| matches!(x.outcome, ResultOutcome::Measured { .. })).collect();
    assert!(measured.len() >= 3, "{} measured", measured.len());
    assert!(measured.iter().any(|x| !x.verified), "measured before the reference and not verified after");
    assert!(result_of(&r, r.winner.get("bx").unwrap().as_i64().unwrap(), r.winner.get("vec").unwrap().as_i64().unwrap()).verified, "the winner is verified");
}

#[test]
fn no_valid_config_says_why() {
    let mut j = job();
    j.block = ["bx*64".into(), "1".into(), "1".into()];
    let e = Tuner::new(FakeBackend::new(limits(), time)).tune(&j, &opts()).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("all 21 valid configs were pruned") && msg.contains("threads: 21"), "{msg}");
    let mut j = job();
    j.restrictions = vec!["bx > 100000".into()];
    j.default = None;
    let msg = Tuner::new(FakeBackend::new(limits(), time)).tune(&j, &opts()).unwrap_err().to_string();
    assert!(msg.contains("restrictions leave no valid config"), "{msg}");
    let fake = FakeBackend::new(limits(), time).with_behavior(|c| if is(c, 256, 1) { Behavior::Ok } else { Behavior::LaunchError });
    let mut j = job();
    j.verify.reference = Reference::None;
    let r = Tuner::new(fake).tune(&j, &opts()).unwrap();
    assert!(is(&r.winner, 256, 1));
}

#[test]
fn budgets_limit_evaluations() {
    let mut o = opts();
    o.strategy = "random".into();
    o.seed = 11;
    o.budget = Budget { max_evals: Some(5), ..Default::default() };
    let t = Tuner::new(FakeBackend::new(limits(), time));
    let r = t.tune(&job(), &o).unwrap();
    assert_eq!(r.evaluated, 5);
    let again = Tuner::new(FakeBackend::new(limits(), time)).tune(&job(), &o).unwrap();
    let keys = |r: &TuneReport| {
        let mut v: Vec<String> = r.results.iter().map(|x| x.config.key()).collect();
        v.sort();
        v
    };
    assert_eq!(keys(&r), keys(&again), "same seed, same sample");
}

#[test]
fn the_model_orders_and_top_k_keeps_the_default() {
    let mut j = job();
    j.bytes = Some("12*n".into());
    j.flops = Some("2*n".into());
    let mut o = opts();
    o.model = true;
    o.top_k = Some(4);
    let r = Tuner::new(FakeBackend::new(limits(), time)).tune(&j, &o).unwrap();
    assert_eq!(r.candidates, 5, "top 4 plus the default");
    assert_eq!(r.pruned_before.get("model_top_k"), Some(&13));
}

#[test]
fn the_runtime_handle_tunes_once_and_caches() {
    let (_d, db) = temp_db();
    let mut o = opts();
    o.db = Some(db.clone());
    let tuner = Arc::new(Tuner::new(FakeBackend::new(limits(), time)));
    let h = Arc::new(Autotuned::new(tuner.clone(), job(), o.clone()));
    std::thread::scope(|s| {
        for _ in 0..8 {
            let h = h.clone();
            s.spawn(move || h.get(&[4096]).unwrap());
        }
    });
    let compiles = tuner.backend().compiles.load(Ordering::SeqCst);
    // One tune: 18 candidates (the default's compile serves the reference too) + the winner.
    assert_eq!(compiles, 18 + 1, "concurrent first calls tune once");
    let a = h.get(&[4096]).unwrap();
    let b = h.get(&[4096]).unwrap();
    assert!(Arc::ptr_eq(&a, &b));
    assert!(is(&a.config, 128, 4));
    assert_eq!(tuner.backend().compiles.load(Ordering::SeqCst), compiles);
    // A new handle (a new process) loads the winner from the database: one compile, no bench.
    let t2 = Arc::new(Tuner::new(FakeBackend::new(limits(), time)));
    let h2 = Autotuned::new(t2.clone(), job(), o);
    let w = h2.get(&[4096]).unwrap();
    assert!(w.report.as_ref().unwrap().db_hit);
    assert_eq!(t2.backend().compiles.load(Ordering::SeqCst), 1);
}

#[test]
fn merge_combines_databases_from_two_backends() {
    // Databases as a CUDA machine and a wgpu machine would write them for one spec: entries are
    // keyed by target fingerprint, so a merge keeps both, and a deployment finds the winner for
    // whichever device it runs on.
    let (_d1, cuda_db) = temp_db();
    let (_d2, wgpu_db) = temp_db();
    let mut o = opts();
    o.db = Some(cuda_db.clone());
    let cuda = FakeBackend::new(limits(), time).with_target(Target::new("cuda", Vendor::Nvidia, "sm_90", "NVIDIA H100 80GB HBM3"));
    let rc = Tuner::new(cuda).tune(&job(), &o).unwrap();
    o.db = Some(wgpu_db.clone());
    let wgpu = FakeBackend::new(limits(), |c: &Config| if is(c, 64, 2) { 0.5e-3 } else { time(c) }).with_target(Target::new(
        "wgpu",
        Vendor::Portable,
        "vulkan-10005-0",
        "llvmpipe",
    ));
    let rw = Tuner::new(wgpu).tune(&job(), &o).unwrap();
    let mut merged = cuda_db.load().unwrap();
    merged.merge(&wgpu_db.load().unwrap());
    assert_eq!(merged.entries.len(), 2);
    let winner_of = |backend: &str| merged.entries.values().find(|e| e.id.target.starts_with(backend)).and_then(|e| e.winner.clone()).unwrap().config;
    assert_eq!(winner_of("cuda"), rc.winner.key());
    assert_eq!(winner_of("wgpu"), rw.winner.key());
    assert_ne!(rc.winner, rw.winner, "each device keeps its own winner");
}

/// Every strategy keeps every compile thread busy: adaptive ones are asked again while earlier
/// proposals compile (the model with lies for those in flight), and measuring overlaps the
/// next compiles. Each compile takes 120 ms on the fake, so four threads overlap for sure when
/// four compiles are queued (with 30 ms, a loaded 2-core machine sometimes fed the fourth only
/// after the first had finished: 1 run in 8 with two busy loops beside the tests).
#[test]
fn every_strategy_keeps_every_compile_thread_busy() {
    for strategy in ["exhaustive", "random", "annealing", "genetic", "local", "model", "hybrid"] {
        let fake = FakeBackend::new(limits(), time).with_compile_delay(Duration::from_millis(120));
        let t = Tuner::new(fake);
        let o = TuneOptions {
            compile_threads: Some(4),
            strategy: strategy.into(),
            budget: Budget { max_evals: Some(12), ..Default::default() },
            ..Default::default()
        };
        let r = t.tune(&job(), &o).unwrap();
        assert_eq!(r.evaluated, 12, "{strategy}: the budget holds with compiles in flight");
        assert_eq!(t.backend().compiles.load(Ordering::SeqCst), 12, "{strategy}: nothing compiled twice or beyond the budget");
        assert_eq!(t.backend().max_compiling.load(Ordering::SeqCst), 4, "{strategy}: all four threads compiled at once");
        assert_eq!(r.compile_threads, 4);
        assert!(r.compile_efficiency.is_some_and(|e| e > 0.0 && e <= 1.0), "{strategy}: {:?}", r.compile_efficiency);
        let timed = r.results.iter().filter(|x| x.compile_seconds.is_some()).count();
        assert_eq!(timed, 12, "{strategy}: every compile is timed per config, the default's (compiled first, for the reference) too");
    }
}

/// Every config faults: the tune ends with one message for the one cause, not one per config,
/// and says which buffer the launch could read past (here `x` holds a quarter of the problem).
#[test]
fn when_every_config_faults_one_message_names_the_cause_and_the_buffer() {
    let mut j = job();
    if let ArgKind::Buffer { len, .. } = &mut j.args[0].kind {
        *len = "n / 4".into();
    }
    let fake = FakeBackend::new(limits(), time).with_behavior(|_| Behavior::DeviceLost);
    let d = tempfile::tempdir().unwrap();
    let db = Database::at(d.path().join("db.sqlite"));
    let o = TuneOptions { strategy: "random".into(), budget: Budget::parse("5").unwrap(), db: Some(db.clone()), ..opts() };
    let e = Tuner::new(fake).tune(&j, &o).unwrap_err().to_string();
    assert!(e.starts_with("no valid config left: all 5 configs faulted: fake illegal address"), "{e}");
    assert!(e.contains("the launch runs") && e.contains("`x` holds 1024 elements"), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
    // The database keeps what was found out, for the report: the entry has nothing else to show.
    let f = db.load().unwrap();
    let entry = f.entries.values().next().unwrap();
    assert!(entry.winner.is_none() && entry.measurements.len() == 5);
    let findings = &entry.runs.last().expect("the run's note").findings;
    assert!(findings.iter().any(|l| l.starts_with("device lost: ") && l.contains("`x` holds 1024 elements")), "{findings:?}");
    assert_eq!(entry.runs.len(), 1, "one note for the run, with its findings");
    // Buffers of one length short of the launch are named together, in one finding.
    for a in &mut j.args[1..] {
        if let ArgKind::Buffer { len, .. } = &mut a.kind {
            *len = "n / 4".into();
        }
    }
    let fake = FakeBackend::new(limits(), time).with_behavior(|_| Behavior::DeviceLost);
    let o = TuneOptions { strategy: "random".into(), budget: Budget::parse("5").unwrap(), ..opts() };
    let e = Tuner::new(fake).tune(&j, &o).unwrap_err().to_string();
    assert!(e.contains("`x`, `y` and `z` each hold 1024 elements: threads past 1024 index out of them"), "{e}");
    assert_eq!(e.matches("the launch runs").count(), 1, "{e}");
}

/// Where a read or write past a buffer never faults (wgpu), the backend's own checks
/// (`Backend::bounds`, `Backend::wrote_past`, as wgpu's guard words) fail the config: a first
/// reference candidate that reads past a buffer is replaced by the next, a config that reads or
/// writes past one never wins, and one that writes past one fails without verification too.
/// (In a worker process: core/tests/devices.rs.)
#[test]
fn a_config_that_reads_or_writes_past_a_buffer_fails_where_that_never_faults() {
    let fake = || {
        FakeBackend::new(limits(), time).with_behavior(|c| match c.get_i64("vec") {
            Some(1) => Behavior::ReadsPast,
            _ if is(c, 128, 4) => Behavior::WritesPast,
            _ => Behavior::Ok,
        })
    };
    let r = Tuner::new(fake()).tune(&job(), &TuneOptions { strategy: "exhaustive".into(), ..opts() }).unwrap();
    let failed = |r: &TuneReport, bx: i64, vec: i64| match &result_of(r, bx, vec).outcome {
        ResultOutcome::Failed { kind: FailureKind::LaunchFailed, message } => message.clone(),
        other => panic!("bx={bx} vec={vec}: {other:?}"),
    };
    assert!(failed(&r, 32, 1).contains("out-of-bounds read past the end of `x`"), "the first reference candidate");
    assert!(failed(&r, 512, 1).contains("out-of-bounds read past the end of `x`"), "a config verified against the reference");
    assert!(failed(&r, 128, 4).contains("out-of-bounds write past the end of `y`"));
    assert!(r.winner.get_i64("vec") != Some(1) && !is(&r.winner, 128, 4), "winner {}", r.winner);
    assert!(r.notes.iter().any(|n| n.starts_with("reference: the outputs of ") && !n.contains("bx=32,vec=1")), "{:?}", r.notes);
    // No verification: the write past `y` still fails its config; a read cannot be told.
    let mut j = job();
    j.verify.reference = Reference::None;
    let r = Tuner::new(fake()).tune(&j, &TuneOptions { strategy: "exhaustive".into(), ..opts() }).unwrap();
    assert!(failed(&r, 128, 4).contains("out-of-bounds write past the end of `y`"));
    assert!(matches!(result_of(&r, 32, 1).outcome, ResultOutcome::Measured { .. }));
    assert_eq!(r.results.iter().filter(|x| matches!(x.outcome, ResultOutcome::Failed { .. })).count(), 1);
}

/// Some configs fault, one cause: grouped once in the report, diagnosed once, with the value
/// they share.
#[test]
fn failures_are_grouped_by_cause_in_the_report() {
    let fake = FakeBackend::new(limits(), time).with_behavior(|c| match c.get_i64("vec") {
        Some(2) => Behavior::DeviceLost,
        Some(4) if c.get_i64("bx") == Some(32) => Behavior::CompileError("error: too many resources".into()),
        _ => Behavior::Ok,
    });
    let r = Tuner::new(fake).tune(&job(), &opts()).unwrap();
    assert_eq!(r.causes.len(), 2, "{:?}", r.causes);
    assert_eq!((r.causes[0].kind, r.causes[0].count), (FailureKind::DeviceLost, 6));
    assert!(r.causes[0].is_memory_fault(), "{:?}", r.causes[0]);
    assert_eq!((r.causes[1].kind, r.causes[1].count), (FailureKind::CompileFailed, 1));
    // What the faulting configs share, and no config measured has (after the buffers the
    // launch could read past); one config that failed to compile: any of its values would do.
    assert_eq!(r.causes[0].diagnosis.last().unwrap(), "every config that lost the device has vec = 2 (6 configs), and no config measured has it");
    assert!(r.causes[1].diagnosis.is_empty(), "{:?}", r.causes[1]);
}

/// A parameter that changes the output by design: most configs disagree with the default's
/// output; the report names the parameter and says what to do; the winner is a config that
/// agrees.
#[test]
fn a_parameter_that_changes_the_output_is_named() {
    let fake = FakeBackend::new(limits(), time).with_behavior(|c| if c.get_i64("vec") == Some(1) { Behavior::Ok } else { Behavior::WrongOutput });
    let r = Tuner::new(fake).tune(&job(), &opts()).unwrap();
    let d = r.disagreement.as_ref().expect("12 of 18 disagree");
    assert_eq!((d.verified, d.disagreed), (18, 12));
    assert_eq!(d.parameter.as_ref().map(|p| p.0.as_str()), Some("vec"));
    assert!(d.advice.contains("--reference none"), "{}", d.advice);
    assert_eq!(r.winner.get_i64("vec"), Some(1));
}

/// A verification sample verifies the first configs, and the winner and its band always.
#[test]
fn a_verification_sample_still_verifies_the_winner() {
    let mut j = job();
    j.verify.sample = VerifySample::First(3);
    // The fastest config is wrong: the sample skips it, the final round catches it.
    let fake = FakeBackend::new(limits(), time).with_behavior(|c| if is(c, 128, 4) { Behavior::WrongOutput } else { Behavior::Ok });
    let r = Tuner::new(fake).tune(&j, &TuneOptions { strategy: "exhaustive".into(), ..opts() }).unwrap();
    assert!(!is(&r.winner, 128, 4), "a wrong config never wins: {}", r.winner);
    assert!(matches!(result_of(&r, 128, 4).outcome, ResultOutcome::Failed { kind: FailureKind::WrongOutput, .. }));
    let verified = r.results.iter().filter(|x| x.verified).count();
    assert!(verified < r.results.len() && result_of(&r, r.winner.get_i64("bx").unwrap(), r.winner.get_i64("vec").unwrap()).verified, "{verified}");
}

/// A worker the out-of-memory killer ends while the final round verifies the winner (left
/// unverified by the sample) does not fail the winner: the job runs again, and killed again,
/// the times measured before stand and the note says so.
#[test]
fn a_worker_killed_for_memory_in_the_final_round_leaves_the_times_measured_before() {
    let mut j = job();
    j.verify.sample = VerifySample::First(3);
    let fake = FakeBackend::new(limits(), time).with_behavior(|c| if is(c, 128, 4) { Behavior::WorkerKilledVerifying } else { Behavior::Ok });
    let r = Tuner::new(fake).tune(&j, &TuneOptions { strategy: "exhaustive".into(), ..opts() }).unwrap();
    assert!(is(&r.winner, 128, 4), "the fastest still wins: {}", r.winner);
    let w = result_of(&r, 128, 4);
    assert!(w.stats().is_some() && !w.verified, "{:?}", w.outcome);
    let note = r.notes.iter().find(|n| n.starts_with("the final round could not measure bx=128")).unwrap_or_else(|| panic!("{:?}", r.notes));
    assert!(note.contains("out-of-memory killer ended the worker twice") && note.contains("the times measured before stand, still unverified"), "{note}");
}

/// One parameter `p` in 1..=40, each config 10 % faster than the one declared before it (the
/// last, p=40, takes 1 ms): in the enumeration's order every config beats all before it.
fn ever_faster_job() -> TuneJob {
    let mut j = job();
    j.params = vec![Param::new("p", 1..=40i64)];
    j.grid = ["1".into(), "1".into(), "1".into()];
    j.block = ["32".into(), "1".into(), "1".into()];
    j.default = None;
    j.verify.reference = Reference::Host("fake".into(), Arc::new(|p| Ok(FakeBackend::reference(p))));
    j
}

fn ever_faster(c: &Config) -> f64 {
    1e-3 * (1.0 + 0.1 * (40 - c.get_i64("p").unwrap()) as f64)
}

/// Exhaustive search meets the configs slowest first, so racing against the best so far would
/// measure each in full as the best so far. Verified and near the fastest verification launch,
/// each waits on the shortlist instead, which is measured fastest first: the fastest in full,
/// the others raced against it on their verification launch or after one more launch.
#[test]
fn configs_near_the_best_on_their_verification_launch_are_measured_last_fastest_first() {
    // Launches slower than the (instant) compiles, as on a GPU with warm caches: the shortlist
    // fills while the device is busy. With nothing compiled and waiting, the device would take
    // from the shortlist rather than idle, before the fastest config has been met.
    let fake = FakeBackend::new(limits(), ever_faster).with_launch_delay(Duration::from_millis(5));
    let tuner = Tuner::new(fake);
    let o = TuneOptions { strategy: "exhaustive".into(), compile_threads: Some(1), ..Default::default() };
    let r = tuner.tune(&ever_faster_job(), &o).unwrap();
    assert_eq!(r.winner.get_i64("p"), Some(40));
    assert!(r.results.iter().all(|x| x.verified && x.stats().is_some()));
    // Every config but the fastest raced. The device takes from the shortlist rather than idle
    // when nothing compiled waits (as before the second config is compiled, or when the compile
    // thread is held up on a loaded machine): allow two such configs, measured in full.
    let full: Vec<i64> = r.results.iter().filter(|x| x.stats().is_some_and(|s| !s.raced)).filter_map(|x| x.config.get_i64("p")).collect();
    assert!(full.contains(&40) && full.len() <= 3, "measured in full: {full:?}");
    // One verification launch each (40), the winner's warm-up and timed launches, at most one
    // more launch for each of the few within 1.5× of it (p = 36..39), and the two allowed above.
    // Measured as they came, every config would have had a warm-up and five timed launches or
    // more (over 280 in all).
    let launches: u32 = (1..=40).map(|p| tuner.backend().launches_of(&format!("p={p}"))).sum();
    assert!(launches <= 40 + 4 + 12 + 12, "{launches} launches");
    // The winner was measured before any other config of the shortlist, though enumerated last.
    let first = r.results.iter().filter(|x| x.seq.is_some() && x.config.get_i64("p").is_some_and(|p| !full.contains(&p) || p == 40));
    let first = first.min_by_key(|x| x.seq).unwrap();
    assert_eq!(first.config.get_i64("p"), Some(40), "first recorded: {}", first.config);
}

/// A time limit that ends the search while configs wait on the shortlist: each is recorded with
/// its verification launch (one sample, verified), and the winner's contenders among them are
/// measured in full by the final round before the pick (a winner stored from one launch, with no
/// interval, was what a time-budgeted tune stored when compiled configs never stopped coming).
#[test]
fn a_time_limit_records_the_shortlist_with_its_verification_launches() {
    let fake = FakeBackend::new(limits(), ever_faster).with_launch_delay(Duration::from_millis(20));
    // The progress events: a config on the shortlist is said verified as it joins it (a progress
    // bar that waited for results showed nothing until the time limit), and final once recorded.
    let events: Arc<std::sync::Mutex<Vec<(bool, String)>>> = Default::default();
    let seen = events.clone();
    let o = TuneOptions {
        strategy: "exhaustive".into(),
        compile_threads: Some(1),
        budget: Budget { max_seconds: Some(0.4), ..Default::default() },
        observer: Some(Arc::new(move |e: &Event<'_>| match e {
            Event::Verified { config, seconds } => {
                assert!(*seconds > 0.0);
                seen.lock().unwrap().push((false, config.key()));
            }
            Event::Result { result, .. } => seen.lock().unwrap().push((true, result.config.key())),
            _ => {}
        })),
        ..Default::default()
    };
    let r = Tuner::new(fake).tune(&ever_faster_job(), &o).unwrap();
    let events = events.lock().unwrap().clone();
    let verified: Vec<&String> = events.iter().filter(|e| !e.0).map(|e| &e.1).collect();
    assert!(verified.len() >= 4, "{events:?}");
    for key in &verified {
        let at = events.iter().position(|e| !e.0 && &e.1 == *key).unwrap();
        assert_eq!(events.iter().filter(|e| !e.0 && &e.1 == *key).count(), 1, "{key} said verified once");
        assert!(events[at..].iter().any(|e| e.0 && &e.1 == *key), "{key}: its result after it was said verified: {events:?}");
    }
    let measured: Vec<_> = r.results.iter().filter_map(|x| x.stats().map(|s| (x, s))).collect();
    assert!(measured.len() >= 5 && measured.len() < 40, "{} measured", measured.len());
    assert!(measured.iter().all(|(x, _)| x.verified));
    let one = measured.iter().filter(|(_, s)| s.samples == 1 && !s.raced).count();
    assert!(one >= 4, "{one} recorded with their verification launch alone");
    let (w, ws) = measured.iter().find(|(x, _)| x.config == r.winner).expect("the winner measured");
    assert!(ws.samples >= 2 && !ws.raced, "the winner measured in full: {ws:?}");
    assert!(w.spans.iter().any(|s| s.what == store::db::SpanKind::Final), "its final-round job: {:?}", w.spans);
    assert_eq!(r.winner_stats.samples, ws.samples);
    let note = r.notes.iter().find(|n| n.starts_with("final round: ")).expect("the note");
    assert!(note.contains("timed by one verification launch each (left so when the search stopped, here or in an earlier run), measured in full"), "{note}");
}

/// An interrupt (Ctrl-C in `kerntune tune`, which exits as soon as the tune says it stopped)
/// keeps what waits on the shortlist with its verification launch, as a time limit does (an
/// interrupted exhaustive tune on llvmpipe kept 0 configs after 10 s of verification launches:
/// the shortlist was dropped with the process); the same tune run again measures the
/// contenders among those records in full before it picks and stores a winner.
#[test]
fn an_interrupt_keeps_the_shortlist_and_the_next_run_measures_its_contenders_in_full() {
    let (_d, db) = temp_db();
    let cancel = Arc::new(std::sync::atomic::AtomicBool::new(false));
    // Told to stop as the fastest config (met last) is said verified: the others wait on the
    // shortlist then. What the Interrupted event finds in the database is what a `kerntune tune`
    // interrupted there would leave.
    let (c, in_db, db2) = (cancel.clone(), Arc::new(Mutex::new(None::<DbFile>)), db.clone());
    let seen = in_db.clone();
    let o = TuneOptions {
        strategy: "exhaustive".into(),
        compile_threads: Some(1),
        db: Some(db.clone()),
        cancel: Some(cancel),
        observer: Some(Arc::new(move |e: &Event<'_>| match e {
            Event::Verified { config, .. } if config.get_i64("p") == Some(40) => c.store(true, Ordering::SeqCst),
            Event::Interrupted { saved, .. } => {
                assert!(*saved);
                *seen.lock().unwrap() = Some(db2.load().unwrap());
            }
            _ => {}
        })),
        ..Default::default()
    };
    let fake = FakeBackend::new(limits(), ever_faster).with_launch_delay(Duration::from_millis(5));
    let e = Tuner::new(fake).tune(&ever_faster_job(), &o).unwrap_err();
    assert!(matches!(e, Error::Interrupted { saved: true, .. }), "{e}");
    let file = in_db.lock().unwrap().take().expect("the Interrupted event");
    let entry = file.entries.into_values().next().expect("an entry");
    let one = |m: &store::db::Measurement| matches!(&m.status, store::db::Status::Ok { stats } if stats.samples == 1 && !stats.raced);
    let kept: Vec<String> = entry.measurements.values().filter(|m| one(m)).map(|m| m.config.to_string()).collect();
    assert!(kept.len() >= 30 && kept.contains(&"p=39".to_string()), "kept with their verification launch: {kept:?}");
    // p=40 was being measured in full then: a tune in a library finishes that job before it
    // returns, `kerntune tune` exits without it. As the command would leave it:
    db.update(|f| f.entries.values_mut().for_each(|e| e.measurements.retain(|_, m| m.config.get_i64("p") != Some(40)))).unwrap();
    // Run again, where p=40 now fails to compile: the fastest left is p=39, recorded with one
    // launch; the final round measures it in full before it is picked and stored.
    let fake = FakeBackend::new(limits(), ever_faster).with_launch_delay(Duration::from_millis(5)).with_behavior(|c| {
        if c.get_i64("p") == Some(40) {
            Behavior::CompileError("no".into())
        } else {
            Behavior::Ok
        }
    });
    let o = TuneOptions { strategy: "exhaustive".into(), compile_threads: Some(1), db: Some(db.clone()), ..Default::default() };
    let r = Tuner::new(fake).tune(&ever_faster_job(), &o).unwrap();
    assert_eq!(r.winner.get_i64("p"), Some(39));
    assert!(r.winner_stats.samples >= 2 && !r.winner_stats.raced, "{:?}", r.winner_stats);
    let note = r.notes.iter().find(|n| n.starts_with("final round: ")).expect("the final round's note");
    assert!(note.contains("(left so when the search stopped, here or in an earlier run)"), "{note}");
    // Written back: the database's record of the winner is the full measurement, this run's.
    let entry = db.load().unwrap().entries.into_values().next().unwrap();
    let stored = entry.measurements.values().find(|m| m.config.get_i64("p") == Some(39)).unwrap();
    assert!(!one(stored) && entry.winner.as_ref().is_some_and(|w| w.config == "p=39"), "{:?}", stored.status);
    assert_eq!(stored.trace.as_ref().map(|t| t.run), Some(r.started), "the record is this run's");
}

/// A time limit keeps time for the final round: the search stops early enough that the
/// winner's contenders, measured in full, start before the limit (they started at the limit
/// and ended past it: 0.7–1.0 s past a 4-second tune on llvmpipe).
#[test]
fn a_time_limit_keeps_time_for_the_final_round() {
    // Launches of 50 ms that report what they take (50–70 ms, the later configs faster): the
    // reserve, twelve launches of each contender, is then more than a fifth of the 1-second
    // limit, and the search stops at 0.8 s.
    let o = TuneOptions {
        strategy: "exhaustive".into(),
        compile_threads: Some(1),
        budget: Budget { max_seconds: Some(1.0), ..Default::default() },
        ..Default::default()
    };
    let slow = |c: &Config| 0.05 * (1.0 + 0.01 * (40 - c.get_i64("p").unwrap()) as f64);
    // The reserve is kept while configs wait on the shortlist, as they do while compiles
    // outpace the device; on a machine loaded far beyond its cores the compile thread can fall
    // behind and the device empty the shortlist near the limit: up to three tries for a tune
    // whose shortlist waited. Without the reserve, no final round starts before the limit.
    let mut starts = Vec::new();
    for _ in 0..3 {
        let fake = FakeBackend::new(limits(), slow).with_launch_delay(Duration::from_millis(50));
        let r = Tuner::new(fake).tune(&ever_faster_job(), &o).unwrap();
        // The first job of the final round, of whichever contender.
        let first = r.results.iter().flat_map(|x| &x.spans).filter(|s| s.what == store::db::SpanKind::Final).map(|s| s.from_s).min_by(f64::total_cmp);
        starts.push(first);
        if first.is_some_and(|f| f < 0.95) {
            return;
        }
    }
    panic!("no final round started before the limit less its reserve; first final-round job of each try (s): {starts:?}");
}

/// Where a tune's time went: every config compiled has its compile's span, every config
/// measured its device jobs after its compile, a device's jobs never overlap, the database
/// keeps the spans and the run's length, and the account says the device waited for compiles
/// (compiles of 40 ms against jobs of a millisecond); a config pruned after compiling is no
/// record's, and counted apart.
#[test]
fn device_jobs_after_a_configs_record_are_kept_with_it() {
    // `--recheck` measures configs again after the final round, long after their records were
    // made: the summary's account counted those jobs, while the database and `--json` lacked
    // them (the report's lanes showed the device idle then).
    let d = tempfile::tempdir().unwrap();
    let db = Database::at(d.path().join("db.sqlite"));
    let o = TuneOptions { strategy: "exhaustive".into(), db: Some(db.clone()), recheck: 4, ..opts() };
    let r = Tuner::new(FakeBackend::new(limits(), time)).tune(&job(), &o).unwrap();
    let rechecked = r.recheck.as_ref().expect("the recheck");
    assert!(rechecked.rows.len() >= 2, "{rechecked:?}");
    let f = db.load().unwrap();
    let entry = f.entries.values().next().unwrap();
    for row in &rechecked.rows {
        let x = r.results.iter().find(|x| x.config == row.config).unwrap();
        let again: Vec<&store::db::Span> = x.spans.iter().filter(|s| s.what == store::db::SpanKind::Recheck).collect();
        assert_eq!(again.len(), 1, "{}: {:?}", x.config, x.spans);
        // After everything else the config ran.
        assert!(x.spans.iter().filter(|s| s.what != store::db::SpanKind::Recheck).all(|s| s.to_s <= again[0].from_s + 0.0015), "{}: {:?}", x.config, x.spans);
        let kept = entry.measurements[&x.config.key()].trace.as_ref().map(|t| &t.spans);
        assert_eq!(kept, Some(&x.spans), "{}: the database keeps every span; {:?}", x.config, entry.measurements[&x.config.key()].trace);
    }
    // The summary's account and the report's, from the database, agree on the device's work.
    let summary = r.time.as_ref().expect("the account");
    let view = analysis::EntryView::new(entry, &analysis::Hints::default());
    let report = view.runs.last().and_then(|r| r.timeline.as_ref()).expect("the run's timeline").account();
    assert!((summary.devices[0].busy_s - report.devices[0].busy_s).abs() < 0.01, "summary {summary:?}\nreport {report:?}");
}

#[test]
fn where_the_time_went_is_recorded_and_accounted_for() {
    let fake = FakeBackend::new(limits(), time)
        .with_behavior(|c| if is(c, 1024, 4) { Behavior::TooManyRegisters } else { Behavior::Ok })
        .with_compile_delay(Duration::from_millis(40));
    let d = tempfile::tempdir().unwrap();
    let db = Database::at(d.path().join("db.sqlite"));
    let o = TuneOptions { strategy: "exhaustive".into(), db: Some(db.clone()), ..opts() };
    let r = Tuner::new(fake).tune(&job(), &o).unwrap();
    let wall = r.wall_seconds + 0.002;
    let mut jobs: Vec<(f64, f64)> = Vec::new();
    for x in r.results.iter().filter(|x| !matches!(x.outcome, ResultOutcome::Pruned { .. })) {
        let compiles: Vec<&store::db::Span> = x.spans.iter().filter(|s| !s.what.on_device()).collect();
        assert_eq!(compiles.len(), 1, "{}: {:?}", x.config, x.spans);
        let c = compiles[0];
        assert!(c.seconds() >= 0.039 && c.to_s <= wall, "{}: {c:?}", x.config);
        let on_device: Vec<&store::db::Span> = x.spans.iter().filter(|s| s.what.on_device()).collect();
        assert!(!on_device.is_empty() || !matches!(x.outcome, ResultOutcome::Measured { .. }), "{}: {:?}", x.config, x.spans);
        for s in on_device {
            assert_eq!(s.device, Some(0));
            assert!(s.from_s >= c.to_s - 0.002 && s.to_s <= wall, "{}: a job before its compile ended: {:?}", x.config, x.spans);
            jobs.push((s.from_s, s.to_s));
        }
    }
    // Spans are kept to the millisecond: of two jobs that start in the same one, the shorter
    // (a verification of a few microseconds) went first.
    jobs.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    assert!(jobs.windows(2).all(|w| w[1].0 >= w[0].1 - 0.0015), "one device's jobs overlap: {jobs:?}");
    let a = r.time.as_ref().expect("the account of the tune's time");
    assert_eq!((a.compile_threads, a.devices.len()), (2, 1));
    // 18 compiles of 40 ms, the pruned one's included.
    assert!(a.compile_s >= 18.0 * 0.039, "{a:?}");
    assert_eq!(a.bound, run::timeline::Bound::Compiling, "{a:?}: {}", a.line());
    assert!(a.devices[0].compiles_s > a.devices[0].busy_s, "{a:?}");
    assert!(a.line().starts_with("time: the device was busy "), "{}", a.line());
    // The database: the same spans with each record, and the run's length and threads.
    let f = db.load().unwrap();
    let entry = f.entries.values().next().unwrap();
    for x in r.results.iter().filter(|x| !matches!(x.outcome, ResultOutcome::Pruned { .. })) {
        let m = &entry.measurements[&x.config.key()];
        assert_eq!(m.trace.as_ref().map(|t| &t.spans), Some(&x.spans), "{}", x.config);
    }
    let time = entry.runs.last().and_then(|n| n.time.clone()).expect("the run's time in its note");
    assert_eq!((time.compile_threads, time.devices, time.unrecorded_compiles), (2, 1, 1));
    assert!(time.wall_ms > 0 && time.unrecorded_compile_ms >= 39, "{time:?}");
    // When it ran: a device idle then waited for it.
    assert!(matches!(time.unrecorded_spans_ms[..], [(a, b)] if b - a >= 39 && b <= time.wall_ms), "{time:?}");
    // What the report draws: the run's timeline, with the same account.
    let view = analysis::EntryView::new(entry, &analysis::Hints::default());
    let t = view.runs.last().and_then(|r| r.timeline.as_ref()).expect("the run's timeline");
    assert_eq!(t.compile_threads, 2);
    assert_eq!(t.unrecorded_spans.len(), 1, "{t:?}");
    assert!(t.compile_lanes <= 2, "two compile threads fill at most two lanes: {}", t.compile_lanes);
    assert_eq!(t.account().bound, run::timeline::Bound::Compiling);
}
