//! Compiler processes ([`kerntune_core::compiler`]), proven on a CPU: the fake backend's compiles
//! run in this test program started again, where they spin on the CPU for as long as asked or
//! crash on purpose.
//!
//! A custom `main` (harness = false) because a compiler process is this very program started
//! again: the hook must run before anything else, as in a host program.

use kerntune_core::fake::{self, Behavior, FakeBackend};
use kerntune_core::{Config, FailureKind, Limits, ResultOutcome, TuneOptions, TuneReport, Tuner};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn job() -> kerntune_core::spec::TuneJob {
    fake::xy_job(&[32, 64, 128, 256, 512, 1024], &[1, 2, 4], 1024)
}

/// Fastest at bx=256, vec=4; then bx=256, vec=2.
fn time(c: &Config) -> f64 {
    let (bx, vec) = (c.get_i64("bx").unwrap() as f64, c.get_i64("vec").unwrap() as f64);
    1e-3 * (1.0 + 0.3 * (bx / 256.0).log2().abs()) * (1.0 + 0.2 * (4.0 / vec).log2())
}

fn limits() -> Limits {
    Limits::preset("h100").unwrap().1
}

fn exhaustive(compile_timeout: Option<Duration>) -> TuneOptions {
    TuneOptions { strategy: "exhaustive".into(), compile_threads: Some(2), compile_timeout, ..Default::default() }
}

fn failed(r: &TuneReport) -> Vec<(String, FailureKind, String)> {
    r.results
        .iter()
        .filter_map(|x| match &x.outcome {
            ResultOutcome::Failed { kind, message } => Some((x.config.key(), *kind, message.clone())),
            _ => None,
        })
        .collect()
}

/// The processes this one started that are still there, with their CPU seconds (Linux; `None`
/// where the system does not list a process's children).
fn children() -> Option<Vec<(u32, f64)>> {
    let mut pids = Vec::new();
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let list = std::fs::read_to_string(task.ok()?.path().join("children")).ok()?;
        pids.extend(list.split_whitespace().filter_map(|p| p.parse::<u32>().ok()));
    }
    Some(pids.into_iter().filter_map(|p| Some((p, kerntune_core::compiler::process_cpu_seconds(p)?))).collect())
}

/// In compiler processes, a tune starts one per compile thread as soon as it knows it will
/// compile, so that they load their compiler while the search starts: they are there before
/// the first compile is asked for (the observer holds the tuner at `Planned`, before any
/// compile thread runs), and no other is started for the tune. Each has asked the
/// out-of-memory killer to take it before the tuner, and is named as this program is (started
/// from its file, not through `/proc/PID/exe`, while that file is the program running).
fn compilers_start_ahead_one_per_compile_thread() {
    let started = fake::COMPILER.started();
    let ahead: Arc<Mutex<Option<(usize, bool)>>> = Arc::default();
    let seen = ahead.clone();
    let observer: kerntune_core::run::Observer = Arc::new(move |e: &kerntune_core::run::Event<'_>| {
        if let kerntune_core::run::Event::Planned { .. } = e {
            // The compilers there, and whether each has asked the out-of-memory killer to take
            // it before the tuner (it does so as it starts).
            let look = || {
                children().map(|c| {
                    let adj = |pid: u32| std::fs::read_to_string(format!("/proc/{pid}/oom_score_adj")).unwrap_or_default().trim() == "1000";
                    let comm = |pid: String| std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
                    (c.len(), c.iter().all(|&(pid, _)| adj(pid) && comm(pid.to_string()) == comm("self".into())))
                })
            };
            let t = Instant::now();
            let mut n = look();
            while n.is_some_and(|(n, adj)| n < 3 || !adj) && t.elapsed() < Duration::from_secs(5) {
                std::thread::sleep(Duration::from_millis(10));
                n = look();
            }
            *seen.lock().unwrap() = n;
        }
    });
    let fake = FakeBackend::new(limits(), time).with_compile_times(|_| Duration::from_millis(5));
    let opts = TuneOptions { compile_threads: Some(3), observer: Some(observer), ..exhaustive(None) };
    // This program runs one test at a time: no other thread reads the environment now.
    std::env::set_var(kerntune_core::compiler::ISOLATION_VAR, "1");
    let r = Tuner::new(fake).tune(&job(), &opts);
    std::env::remove_var(kerntune_core::compiler::ISOLATION_VAR);
    let r = r.unwrap();
    assert!(r.results.iter().all(|x| x.stats().is_some()) && r.results.len() == 18);
    if let Some((n, adj)) = *ahead.lock().unwrap() {
        assert_eq!(n, 3, "compiler processes when the tune was planned");
        assert!(adj, "a compiler's oom_score_adj is not 1000, or its name is not this program's");
    }
    assert_eq!(fake::COMPILER.started() - started, 3, "one per compile thread");
}

/// Compiler processes left idle after a tune (they serve the next one) and killed meanwhile
/// (the out-of-memory killer, a user) cost the next tune nothing: each config is compiled and
/// measured, none fails or is compiled again, and the dead compilers are replaced.
#[cfg(target_os = "linux")]
fn idle_compilers_killed_between_tunes_cost_nothing() {
    let fake = || FakeBackend::new(limits(), time).with_compile_times(|_| Duration::from_millis(5));
    let opts = TuneOptions { compile_threads: Some(3), ..exhaustive(None) };
    std::env::set_var(kerntune_core::compiler::ISOLATION_VAR, "1");
    let first = Tuner::new(fake()).tune(&job(), &opts);
    let idle = children().unwrap_or_default();
    for (pid, _) in &idle {
        let _ = std::process::Command::new("kill").args(["-KILL", &pid.to_string()]).status();
    }
    std::thread::sleep(Duration::from_millis(100));
    let started = fake::COMPILER.started();
    // The fake keeps no compile cache: every config is compiled again.
    let r = Tuner::new(fake()).tune(&job(), &opts);
    std::env::remove_var(kerntune_core::compiler::ISOLATION_VAR);
    assert_eq!(first.unwrap().results.len(), 18);
    assert!(idle.len() >= 3, "idle compilers after the first tune: {idle:?}");
    let r = r.unwrap();
    assert!(failed(&r).is_empty() && r.results.len() == 18, "{:?}", failed(&r));
    assert!(fake::COMPILER.started() > started, "no compiler started in place of the dead ones");
    // Found dead before a compile was sent: none was even compiled again.
    assert!(!r.notes.iter().any(|n| n.contains("compiled again")), "{:?}", r.notes);
}

/// A tune in compiler processes as in a program of its own, for the memory tests: no compiler
/// process left from an earlier test, nothing measured or remembered, a compile cache of its own
/// (the footprint it leaves is not the other tests' business) and, with `limit`, that much memory
/// for the compilers. Undone when dropped.
struct AloneInMemory {
    _cache: tempfile::TempDir,
    before: Option<std::ffi::OsString>,
}

impl AloneInMemory {
    fn new(limit: Option<u64>) -> AloneInMemory {
        for (pid, _) in children().unwrap_or_default() {
            let _ = std::process::Command::new("kill").args(["-KILL", &pid.to_string()]).status();
        }
        std::thread::sleep(Duration::from_millis(100));
        let cache = tempfile::tempdir().unwrap();
        let before = std::env::var_os("KERNTUNE_CACHE_DIR");
        // This program runs one test at a time: no other thread reads the environment now.
        std::env::set_var("KERNTUNE_CACHE_DIR", cache.path());
        std::env::set_var(kerntune_core::compiler::ISOLATION_VAR, "1");
        kerntune_core::compiler::memory::forget();
        kerntune_core::compiler::memory::assume_limit(limit);
        AloneInMemory { _cache: cache, before }
    }
}

impl Drop for AloneInMemory {
    fn drop(&mut self) {
        std::env::remove_var(kerntune_core::compiler::ISOLATION_VAR);
        match self.before.take() {
            Some(d) => std::env::set_var("KERNTUNE_CACHE_DIR", d),
            None => std::env::remove_var("KERNTUNE_CACHE_DIR"),
        }
        kerntune_core::compiler::memory::assume_limit(None);
    }
}

/// An idle compiler process gives back the memory its compiles took (to the system, not only to
/// its allocator): in a job with a memory limit, sixteen idle compilers each keeping their last
/// compile's heap would hold most of it. Each compile here takes 60 MiB, every page touched; once
/// the tune has ended, no compiler process holds half of that of its own.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn idle_compilers_give_back_the_memory_their_compiles_took() {
    let own = |pid: u32| -> Option<u64> {
        let t = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let kb = |key: &str| t.lines().find_map(|l| l.strip_prefix(key))?.trim().trim_end_matches("kB").trim().parse::<u64>().ok();
        Some((kb("RssAnon:")? + kb("RssShmem:").unwrap_or(0)) << 10)
    };
    let alone = AloneInMemory::new(None);
    let fake = FakeBackend::new(limits(), time).with_compile_times(|_| Duration::from_millis(50)).with_compile_memory(|_| 60);
    let r = Tuner::new(fake).tune(&job(), &TuneOptions { compile_threads: Some(2), ..exhaustive(None) });
    drop(alone);
    let r = r.unwrap();
    assert!(failed(&r).is_empty() && r.results.len() == 18, "{:?}", failed(&r));
    assert!(kerntune_core::compiler::memory::footprint() >= 60 << 20, "the compiles took their memory");
    let held: Vec<(u32, u64)> = children().unwrap_or_default().into_iter().filter_map(|(pid, _)| Some((pid, own(pid)?))).collect();
    assert!(!held.is_empty(), "no idle compiler left");
    assert!(held.iter().all(|&(_, b)| b < 30 << 20), "idle compilers' own memory (pid, bytes): {held:?}");
}

/// A space whose first candidate is in the compile cache (a tune run again) starts no compiler
/// ahead: here every compile is a hit, and with compiler processes wanted none is started.
fn a_compiled_space_starts_no_compiler() {
    let started = fake::COMPILER.started();
    let fake = FakeBackend::new(limits(), time).with_compile_times(|_| Duration::from_millis(5)).with_compile_cache(|_| true);
    // A fresh number of compile threads: a prestart would top the pool up to it.
    let opts = TuneOptions { compile_threads: Some(7), ..exhaustive(None) };
    std::env::set_var(kerntune_core::compiler::ISOLATION_VAR, "1");
    let r = Tuner::new(fake).tune(&job(), &opts);
    std::env::remove_var(kerntune_core::compiler::ISOLATION_VAR);
    assert_eq!(r.unwrap().results.len(), 18);
    assert_eq!(fake::COMPILER.started() - started, 0, "compiler processes started for a compiled space");
}

/// A compile past the timeout is killed, not left to run: the tune ends without waiting for
/// the 60-second compiles, each fails saying its compiler process was killed, and afterwards no
/// compiler uses the CPU (on threads, the three would spin on for a minute).
fn a_compile_past_the_timeout_is_killed_and_uses_no_more_cpu() {
    let (started, killed) = (fake::COMPILER.started(), fake::COMPILER.killed());
    let fake = FakeBackend::new(limits(), time)
        .with_compile_times(|c| Duration::from_secs_f64(if c.get_i64("bx") == Some(32) { 60.0 } else { 0.05 }))
        .spinning_compiles();
    let t0 = Instant::now();
    let r = Tuner::new(fake).tune(&job(), &exhaustive(Some(Duration::from_millis(500)))).unwrap();
    let wall = t0.elapsed().as_secs_f64();
    assert!(wall < 30.0, "the tune waited for a 60 s compile: {wall:.1} s");
    let f = failed(&r);
    assert_eq!(f.iter().map(|x| x.0.as_str()).collect::<Vec<_>>(), ["bx=32,vec=1", "bx=32,vec=2", "bx=32,vec=4"], "{f:?}");
    for (_, kind, message) in &f {
        assert_eq!(*kind, FailureKind::TimedOut);
        assert!(
            message.contains("s of its own CPU time (")
                && message.contains("past the compile timeout of 0.5 s ([tune] compile_timeout, --compile-timeout) (its compiler process was killed); stored"),
            "{message}"
        );
    }
    assert_eq!(r.results.len(), 18);
    assert_eq!(fake::COMPILER.killed() - killed, 3);
    // One compiler per compile thread, and one more for each killed.
    assert!(fake::COMPILER.started() - started <= 2 + 3, "{} started", fake::COMPILER.started() - started);
    if let Some(before) = children() {
        std::thread::sleep(Duration::from_millis(500));
        let after = children().unwrap_or_default();
        let busy: Vec<_> = after.iter().filter(|(p, cpu)| before.iter().any(|(q, c)| p == q && cpu - c > 0.2)).collect();
        assert!(busy.is_empty(), "a compiler still computing after the tune: {busy:?} (children {after:?})");
        assert!(after.len() <= 2, "only the idle compilers are left: {after:?}");
    }
}

/// A tune of the fake with compiler processes, compiles of 50 ms on 4 threads, storing into a
/// fresh database: the report, the tuner (its fake's counts) and what the database holds.
fn tune_stored(behavior: fn(&Config) -> Behavior) -> (TuneReport, Tuner<FakeBackend>, kerntune_core::store::db::Entry) {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let db = kerntune_core::store::db::Database::at(dir.path().join("db.sqlite"));
    let fake = FakeBackend::new(limits(), time).with_compile_times(|_| Duration::from_millis(50)).with_behavior(behavior);
    let opts = TuneOptions { compile_threads: Some(4), db: Some(db.clone()), ..exhaustive(Some(Duration::from_secs(60))) };
    let tuner = Tuner::new(fake);
    let r = tuner.tune(&job(), &opts).unwrap();
    let stored = db.entry(&r.entry).unwrap().unwrap();
    (r, tuner, stored)
}

/// The compiles of `key` the fake saw: how many compiles ran at each, counting it.
fn compiles_of(t: &Tuner<FakeBackend>, key: &str) -> Vec<usize> {
    t.backend().compiled.lock().unwrap().get(key).cloned().unwrap_or_default()
}

/// A compiler that crashes on one config's code (its process aborted) is started again for it
/// at once (not alone: a crash is not the machine's memory), crashes again, and then fails that
/// config with what happened and what the compiler wrote last on its stderr (the words of that
/// compile only: the compilers compiled other configs before, which said nothing), stored (a later tune does not compile it again); the tune
/// measures the rest and picks its winner.
fn a_compiler_that_crashes_costs_its_config() {
    let (r, tuner, stored) = tune_stored(|c| if c.key() == "bx=256,vec=4" { Behavior::CompilerCrash } else { Behavior::Ok });
    let f = failed(&r);
    let [(config, kind, message)] = &f[..] else { panic!("{f:?}") };
    assert_eq!((config.as_str(), *kind), ("bx=256,vec=4", FailureKind::Other), "{message}");
    assert_eq!(
        message,
        "the FAKE compiler ended twice while compiling this config (killed by signal 6 (SIGABRT), both times): a crash of the compiler on this config's code; the tune goes on without it; its last words on stderr: fake-compiler: internal error: assertion `nodes.is_sorted()` failed on this config's code"
    );
    assert_eq!(compiles_of(&tuner, "bx=256,vec=4").len(), 2, "compiled twice");
    assert!(stored.measurements.contains_key("bx=256,vec=4"), "a crash is stored");
    assert!(
        r.notes.iter().any(
            |n| n == "config compiled again after its compiler process ended while compiling (bx=256,vec=4: killed by signal 6 (SIGABRT)): it failed again"
        ),
        "{:?}",
        r.notes
    );
    assert_eq!(r.winner.key(), "bx=256,vec=2", "the fastest that compiled");
    assert_eq!(r.results.len(), 18);
}

/// Compiles wait for the memory they need (`compiler::memory`): each takes 60 MiB more in its
/// compiler process, and 170 MiB is left to all of them (a limit assumed for the test), so once
/// the first compiles have shown what they take, no more than two compile at once (four threads:
/// without the check every wave is four); every config compiles, and the report says how often
/// a compile waited.
fn compiles_wait_for_the_memory_they_need() {
    kerntune_core::compiler::memory::assume_limit(Some(170 << 20));
    let fake = FakeBackend::new(limits(), time).with_compile_times(|_| Duration::from_millis(300)).with_compile_memory(|_| 60);
    let tuner = Tuner::new(fake);
    std::env::set_var(kerntune_core::compiler::ISOLATION_VAR, "1");
    let r = tuner.tune(&job(), &TuneOptions { compile_threads: Some(4), ..exhaustive(None) });
    std::env::remove_var(kerntune_core::compiler::ISOLATION_VAR);
    kerntune_core::compiler::memory::assume_limit(None);
    let r = r.unwrap();
    assert!(failed(&r).is_empty(), "{:?}", failed(&r));
    assert_eq!(r.results.len(), 18);
    // How many compiles ran as each started, itself included: more than two only in the first
    // wave (four threads start at once, before any compile has taken memory).
    let counts: Vec<usize> = tuner.backend().compiled.lock().unwrap().values().flatten().copied().collect();
    assert_eq!(counts.len(), 18, "{counts:?}");
    assert!(counts.iter().filter(|&&n| n > 2).count() <= 2, "{counts:?}");
    assert!(kerntune_core::compiler::memory::footprint() >= 60 << 20);
    let note = r.notes.iter().find(|n| n.starts_with("compile memory: ")).unwrap_or_else(|| panic!("{:?}", r.notes));
    assert!(note.contains("left to a test's limit"), "{note}");
    // How long the compile starts waited: in the note, and in the tune's account of its time
    // (two of four threads compiling, the device idle for them).
    let held: f64 = note.split("for memory (").nth(1).and_then(|t| t.split(' ').next()).and_then(|t| t.parse().ok()).unwrap_or_else(|| panic!("{note}"));
    let time = r.time.as_ref().expect("the account of its time");
    assert!(held > 0.5 && (time.memory_held_s - held).abs() < 0.2, "{held} s in the note, {} s in the account", time.memory_held_s);
    println!("{}", time.line());
}

/// The memory check goes by what most compiles take, not by the largest: one config whose
/// compile takes four times the others' (here the reference, 120 MiB against 30, compiled
/// first) does not hold every later compile start to it. Four threads, memory for about four
/// of the others at once: once eight compiles are measured, compiles again run three or more at
/// once (held to one at a time by the largest, only the first wave did).
fn the_memory_check_goes_by_what_most_compiles_take() {
    let alone = AloneInMemory::new(Some(160 << 20));
    let fake = FakeBackend::new(limits(), time).with_compile_times(|_| Duration::from_millis(200)).with_compile_memory(|c| {
        if c.key() == "bx=256,vec=1" {
            120
        } else {
            30
        }
    });
    let tuner = Tuner::new(fake);
    // 36 configs: the first eight measured go by the largest, the rest by the nine in ten.
    let job = fake::xy_job(&[32, 64, 128, 256, 512, 1024], &[1, 2, 4, 8, 16, 32], 1024);
    let r = tuner.tune(&job, &TuneOptions { compile_threads: Some(4), ..exhaustive(None) });
    drop(alone);
    let r = r.unwrap();
    assert!(failed(&r).is_empty() && r.results.len() == 36, "{:?}", failed(&r));
    assert!(
        kerntune_core::compiler::memory::footprint() >= 100 << 20,
        "the large compile was measured: {}",
        kerntune_core::compiler::memory::footprint() >> 20
    );
    let counts: Vec<usize> = tuner.backend().compiled.lock().unwrap().values().flatten().copied().collect();
    assert!(counts.iter().filter(|&&n| n >= 3).count() >= 12, "compiles running as each started: {counts:?}");
    let note = r.notes.iter().find(|n| n.starts_with("compile memory: ")).unwrap_or_else(|| panic!("{:?}", r.notes));
    assert!(note.contains("nine compiles in ten up to"), "{note}");
}

/// While compile starts wait for memory, the idle compiler processes but one are closed: they
/// hold memory a compile could use. Eight threads where memory lets two compile at once: after
/// the tune, no more compiler processes are left than compiled at once at its end and one more
/// (without closing them, all eight prestarted stay), and every config compiled.
#[cfg(target_os = "linux")]
fn idle_compilers_are_closed_while_compiles_wait_for_memory() {
    let alone = AloneInMemory::new(Some(170 << 20));
    let fake = FakeBackend::new(limits(), time).with_compile_times(|_| Duration::from_millis(200)).with_compile_memory(|_| 60);
    let tuner = Tuner::new(fake);
    let r = tuner.tune(&job(), &TuneOptions { compile_threads: Some(8), ..exhaustive(None) });
    drop(alone);
    let r = r.unwrap();
    assert!(failed(&r).is_empty() && r.results.len() == 18, "{:?}", failed(&r));
    assert!(r.notes.iter().any(|n| n.starts_with("compile memory: ")), "no compile start waited: {:?}", r.notes);
    let left = children().unwrap_or_default().len();
    assert!((1..=3).contains(&left), "{left} compiler processes left after the tune");
}

/// The first compiles of a tune, every thread starting one at once, are held too where an
/// earlier tune of the kernel measured what its compiles take: kept in the compile cache folder
/// (a tuning farm's shards start knowing it). Without it they all start at once.
fn a_later_tune_of_a_kernel_knows_what_its_compiles_take() {
    let dir = tempfile::tempdir().unwrap();
    std::env::set_var("KERNTUNE_CACHE_DIR", dir.path());
    kerntune_core::compiler::memory::assume_limit(Some(170 << 20));
    std::env::set_var(kerntune_core::compiler::ISOLATION_VAR, "1");
    // Each tune as a program of its own: nothing measured or read before it, and no compiler
    // process left from an earlier one.
    let tune = || {
        for (pid, _) in children().unwrap_or_default() {
            let _ = std::process::Command::new("kill").args(["-KILL", &pid.to_string()]).status();
        }
        std::thread::sleep(Duration::from_millis(100));
        kerntune_core::compiler::memory::forget();
        let fake = FakeBackend::new(limits(), time).with_compile_times(|_| Duration::from_millis(300)).with_compile_memory(|_| 60);
        let tuner = Tuner::new(fake);
        let r = tuner.tune(&job(), &TuneOptions { compile_threads: Some(4), ..exhaustive(None) }).unwrap();
        assert!(failed(&r).is_empty(), "{:?}", failed(&r));
        // The most compiles that ran at once: more than two only in a first wave started
        // before any compile has shown what it takes (see `compiles_wait_for_the_memory_they_need`).
        (tuner.backend().max_compiling.load(std::sync::atomic::Ordering::SeqCst), r.notes)
    };
    let (first, _) = tune();
    let kept: Vec<_> = std::fs::read_dir(dir.path().join("fake")).map(|d| d.flatten().map(|e| e.file_name()).collect()).unwrap_or_default();
    let (second, notes) = tune();
    // A footprint no compile on this machine took (a damaged file: a petabyte) is not
    // remembered: the first wave starts at once, and what the tune measures replaces it.
    let mem = kept.iter().find(|f| f.to_string_lossy().ends_with(".mem")).map(|f| dir.path().join("fake").join(f));
    if let Some(mem) = &mem {
        std::fs::write(mem, (1u64 << 50).to_string()).unwrap();
    }
    let (third, _) = tune();
    let rewritten: u64 = mem.as_ref().and_then(|m| std::fs::read_to_string(m).ok()).and_then(|t| t.trim().parse().ok()).unwrap_or(0);
    std::env::remove_var(kerntune_core::compiler::ISOLATION_VAR);
    kerntune_core::compiler::memory::assume_limit(None);
    std::env::remove_var("KERNTUNE_CACHE_DIR");
    assert!(first > 2, "the first tune knows nothing: its first wave starts at once ({first} compiling)");
    assert!(kept.iter().any(|f| f.to_string_lossy().ends_with(".mem")), "the footprint kept: {kept:?}");
    assert!(second <= 2, "the second tune holds its first wave ({second} compiling)");
    assert!(third > 2 && rewritten > 0 && rewritten < 1 << 40, "a petabyte remembered holds nothing ({third} compiling) and is written over ({rewritten})");
    let note = notes.iter().find(|n| n.starts_with("compile memory: ")).unwrap_or_else(|| panic!("{notes:?}"));
    assert!(note.contains("the first compiles held by what an earlier tune of this kernel measured"), "{note}");
}

/// A compiler process the out-of-memory killer ends (SIGKILL, its count raised: when many large
/// compiles run at once) does not cost its config: the config is compiled again with at most
/// half the compile threads compiling (2 of 4), itself included, and measured; the report says
/// so, naming the killer. Killed again, it compiles a third time, alone; killed then too, it
/// fails saying why, and is not stored: a later tune compiles it again.
fn a_compiler_killed_from_outside_compiles_again_with_fewer_beside_it() {
    let (r, tuner, stored) = tune_stored(|c| match c.key().as_str() {
        "bx=256,vec=4" => Behavior::CompilerKilled(1),
        "bx=64,vec=1" => Behavior::CompilerKilled(1),
        _ => Behavior::Ok,
    });
    assert!(failed(&r).is_empty(), "{:?}", failed(&r));
    assert_eq!((r.results.len(), r.winner.key().as_str()), (18, "bx=256,vec=4"));
    for key in ["bx=256,vec=4", "bx=64,vec=1"] {
        let again = compiles_of(&tuner, key);
        assert!(again.len() == 2 && again[1] <= 2, "{key}: compiled twice, the second time with at most one beside it: {again:?}");
    }
    // The other 16 compiled once, some side by side (4 threads).
    assert!(
        tuner.backend().compiled.lock().unwrap().values().all(|v| v.len() <= 2) && tuner.backend().max_compiling.load(std::sync::atomic::Ordering::SeqCst) > 1
    );
    assert!(
        r.notes.iter().any(|n| n
            == "2 configs compiled again, with at most 2 compiles at once, after their compiler process ended while compiling (killed by the system's out-of-memory killer (SIGKILL)): each compiled the second time; fewer compile threads (`-j`) leave each compile more memory"),
        "{:?}",
        r.notes
    );
    assert_eq!(stored.measurements.len(), 18);
    // The run's note counts the compiles the killer ended, for the `time:` line.
    let killed = |e: &kerntune_core::store::db::Entry| e.runs.last().and_then(|n| n.time.as_ref()).map(|t| t.compiles_killed_for_memory);
    assert_eq!(killed(&stored), Some(2));
    assert_eq!(r.time.as_ref().map(|a| a.killed_for_memory), Some(2));

    // Killed again with one beside it: a third time, alone, and measured.
    let (r, tuner, stored) = tune_stored(|c| if c.key() == "bx=256,vec=4" { Behavior::CompilerKilled(2) } else { Behavior::Ok });
    assert!(failed(&r).is_empty(), "{:?}", failed(&r));
    let again = compiles_of(&tuner, "bx=256,vec=4");
    assert!(again.len() == 3 && again[1] <= 2 && again[2] == 1, "compiled three times, the last alone: {again:?}");
    assert!(
        r.notes.iter().any(|n| n
            == "config compiled again, with at most 2 compiles at once, after its compiler process ended while compiling (killed by the system's out-of-memory killer (SIGKILL)): it was killed again and compiled the third time, alone; fewer compile threads (`-j`) leave each compile more memory"),
        "{:?}",
        r.notes
    );
    assert_eq!((stored.measurements.len(), r.winner.key().as_str()), (18, "bx=256,vec=4"));
    assert_eq!(killed(&stored), Some(2));

    // Killed the third time too: it fails, saying why, not stored.
    let (r, tuner, stored) = tune_stored(|c| if c.key() == "bx=256,vec=4" { Behavior::CompilerKilled(3) } else { Behavior::Ok });
    let f = failed(&r);
    let [(config, kind, message)] = &f[..] else { panic!("{f:?}") };
    assert_eq!((config.as_str(), *kind), ("bx=256,vec=4", FailureKind::Other));
    assert_eq!(
        message,
        "the FAKE compiler ended three times while compiling this config, the second time with at most 2 compiles at once, the third alone (killed by signal 9 (SIGKILL), each time): killed by the system's out-of-memory killer; not stored: a later tune compiles it again (fewer compile threads, `-j`, leave each compile more memory)"
    );
    assert_eq!(compiles_of(&tuner, "bx=256,vec=4").len(), 3);
    assert!(!stored.measurements.contains_key("bx=256,vec=4") && stored.measurements.len() == 17, "not stored");
    assert_eq!(killed(&stored), Some(3));
    assert_eq!(r.winner.key(), "bx=256,vec=2");
    assert!(
        r.notes.iter().any(|n| n.ends_with("it was killed again, and the third time, alone, too; fewer compile threads (`-j`) leave each compile more memory")),
        "{:?}",
        r.notes
    );
}

/// A compiler killed by SIGKILL while the out-of-memory killer's count stays (a user, a job
/// scheduler: not the machine's memory) is compiled again at once, with the threads it had, not
/// spared; the report says who did not kill it. Killed so twice, the config fails, not stored.
fn a_compiler_killed_by_hand_compiles_again_at_once() {
    let (r, tuner, stored) = tune_stored(|c| if c.key() == "bx=64,vec=1" { Behavior::CompilerKilledByHand(1) } else { Behavior::Ok });
    assert!(failed(&r).is_empty() && r.results.len() == 18, "{:?}", failed(&r));
    assert_eq!(compiles_of(&tuner, "bx=64,vec=1").len(), 2);
    assert!(
        r.notes.iter().any(|n| n
            == "config compiled again after its compiler process ended while compiling (killed from outside (SIGKILL), not by the out-of-memory killer (its count in /proc/vmstat did not move): a user or a job scheduler): it compiled the second time"),
        "{:?}",
        r.notes
    );
    assert_eq!(stored.measurements.len(), 18);
    let (r, _, stored) = tune_stored(|c| if c.key() == "bx=64,vec=1" { Behavior::CompilerKilledByHand(2) } else { Behavior::Ok });
    let f = failed(&r);
    let [(config, _, message)] = &f[..] else { panic!("{f:?}") };
    assert_eq!(config, "bx=64,vec=1");
    assert_eq!(
        message,
        "the FAKE compiler ended twice while compiling this config (killed by signal 9 (SIGKILL), both times): killed from outside both times, not by the out-of-memory killer (its count in /proc/vmstat did not move): a user or a job scheduler; not stored: a later tune compiles it again"
    );
    assert!(!stored.measurements.contains_key("bx=64,vec=1") && stored.measurements.len() == 17, "not stored");
}

/// A config killed from outside while a long compile runs (the default config's, 1.5 s, started
/// first) compiles again beside it, as soon as fewer than half the threads compile, instead of
/// waiting for it to end; with one compile thread, alone.
fn a_killed_compile_does_not_wait_for_a_long_one() {
    for (threads, beside) in [(4, 2), (1, 1)] {
        let fake = FakeBackend::new(limits(), time)
            .with_compile_times(|c| Duration::from_millis(if c.key() == "bx=256,vec=1" { 1500 } else { 50 }))
            .with_behavior(|c| if c.key() == "bx=64,vec=2" { Behavior::CompilerKilled(1) } else { Behavior::Ok });
        let opts = TuneOptions { compile_threads: Some(threads), ..exhaustive(Some(Duration::from_secs(60))) };
        let tuner = Tuner::new(fake);
        let r = tuner.tune(&job(), &opts).unwrap();
        assert!(failed(&r).is_empty() && r.results.len() == 18, "{:?}", failed(&r));
        let again = compiles_of(&tuner, "bx=64,vec=2");
        assert_eq!(again.len(), 2);
        assert_eq!(again[1], beside, "{threads} threads: compiles running at its second start, itself included");
        let how = if threads == 1 { "alone" } else { "with at most 2 compiles at once" };
        assert!(r.notes.iter().any(|n| n.starts_with(&format!("config compiled again, {how}, after"))), "{:?}", r.notes);
    }
}

/// The config the tune waits on for its reference outputs (the default), whose compiler is
/// killed after a second, while the other 17 compiled meanwhile fill the compile threads'
/// allowance of configs waiting for a device (only the reference's config runs until it has
/// run): its second compile, alone, still starts, and the tune ends with every config measured
/// and the default's outputs as the reference.
fn the_reference_config_killed_while_the_rest_wait_compiled_compiles_again() {
    let fake = FakeBackend::new(limits(), time)
        .with_compile_times(|c| Duration::from_millis(if c.key() == "bx=256,vec=1" { 1000 } else { 20 }))
        .with_behavior(|c| if c.key() == "bx=256,vec=1" { Behavior::CompilerKilled(1) } else { Behavior::Ok });
    let opts = TuneOptions { compile_threads: Some(2), ..exhaustive(Some(Duration::from_secs(60))) };
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(Tuner::new(fake).tune(&job(), &opts));
    });
    // Not a speed goal: a bound on a hang (the tune takes about two seconds).
    let r = rx.recv_timeout(Duration::from_secs(120)).expect("the tune did not end").unwrap();
    assert!(failed(&r).is_empty() && r.results.len() == 18, "{:?}", failed(&r));
    assert!(r.notes.iter().any(|n| n.starts_with("reference: the outputs of bx=256,vec=1 (the default config)")), "{:?}", r.notes);
    assert!(r.notes.iter().any(|n| n.starts_with("config compiled again, alone")), "{:?}", r.notes);
    // Two compile threads: half of them is one.
}

/// Without a compile timeout the compiles stay on threads; `KERNTUNE_COMPILE_ISOLATION=1` puts
/// them in compiler processes all the same, which are reused from one tune to the next, and `0`
/// keeps them on threads with a timeout; a value that is neither is ignored.
fn compiler_processes_are_used_where_wanted_and_reused() {
    let started = fake::COMPILER.started();
    let fake = || FakeBackend::new(limits(), time).with_compile_times(|_| Duration::from_millis(5));
    let r = Tuner::new(fake()).tune(&job(), &exhaustive(None)).unwrap();
    assert_eq!((r.results.len(), fake::COMPILER.started()), (18, started), "no compiler process without a timeout");
    // This program runs one test at a time: no other thread reads the environment now.
    std::env::set_var(kerntune_core::compiler::ISOLATION_VAR, "1");
    let r = Tuner::new(fake()).tune(&job(), &exhaustive(None));
    let again = Tuner::new(fake()).tune(&job(), &exhaustive(None));
    std::env::set_var(kerntune_core::compiler::ISOLATION_VAR, "0");
    let off = Tuner::new(fake()).tune(&job(), &exhaustive(Some(Duration::from_secs(60))));
    use kerntune_core::compiler::wanted;
    for (value, with_timeout, without) in
        [("on", Some(true), Some(true)), ("false", Some(false), Some(false)), ("maybe", Some(true), None), ("", Some(true), None)]
    {
        std::env::set_var(kerntune_core::compiler::ISOLATION_VAR, value);
        assert_eq!((wanted(true), wanted(false)), (with_timeout, without), "{value:?}");
    }
    std::env::remove_var(kerntune_core::compiler::ISOLATION_VAR);
    let (r, again, off) = (r.unwrap(), again.unwrap(), off.unwrap());
    assert!(r.results.iter().chain(&again.results).chain(&off.results).all(|x| x.stats().is_some()));
    assert_eq!(r.winner.key(), "bx=256,vec=4");
    // Idle compilers from the earlier tests, then at most one per compile thread.
    assert!(fake::COMPILER.started() - started <= 2, "{} started for two tunes", fake::COMPILER.started() - started);
}

/// Runs a copy of this program that does `what` to its own file (see [`tune_after`]) and then
/// tunes in compiler processes; what it printed.
fn copy_that(what: &str) -> String {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let copy = dir.path().join("compilers-copy");
    std::fs::copy(std::env::current_exe().unwrap(), &copy).unwrap();
    let o = std::process::Command::new(&copy).env(CHANGE_MY_FILE, what).output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{text}");
    text
}

/// Where no compiler process can be started — here this program's file can no longer be
/// executed (its permissions changed while it tunes; even root needs an execute bit) — the
/// compiles run on threads instead of failing: every config is measured, no compiler process
/// started, compiler processes are not tried again in this run, and the report's notes say why.
#[cfg(unix)]
fn a_compiler_that_cannot_start_leaves_the_compiles_on_threads() {
    let text = copy_that("chmod");
    assert!(text.contains("18 measured, 0 compiler processes started, compiler processes used: false"), "{text}");
    // The report says why, naming the program and what failed.
    assert!(
        text.contains("note: \"starting a FAKE compiler process (")
            && text.contains("compilers-copy): Permission denied")
            && text.contains("; the FAKE compiles of this run go on on the tuner's threads, where one given up on runs on until it ends"),
        "{text}"
    );
    // A worker that cannot start says which program it could not start.
    assert!(
        text.contains("isolated: Err(") && text.contains("starting a FAKE worker process (") && text.contains("compilers-copy): Permission denied"),
        "{text}"
    );
}

/// A program whose file is replaced while it tunes (a `cargo build`, an upgrade) starts its
/// compiler and worker processes from the program running, not from the new file (here a shell
/// script that would exit with status 3): every config compiles in a compiler process, nothing
/// falls back to threads, and a kernel that crashes its worker costs its config, not the
/// device: the worker is started again twice (the config runs twice before it is blamed, then
/// the next config needs a fresh worker). Started through `/proc/PID/exe`, they are named after
/// the program's path, not `exe`.
#[cfg(target_os = "linux")]
fn compilers_and_workers_start_from_the_running_program_when_its_file_is_replaced() {
    let text = copy_that("replace");
    assert!(
        text.contains(
            "17 measured, 2 compiler processes started, compiler processes used: true; note: \"\"; 3 workers started; failed: [(\"bx=32,vec=1\", DeviceLost"
        ),
        "{text}"
    );
    // Started through /proc/PID/exe, named again after the program's path (`exe` otherwise).
    assert!(text.contains("; children named {\"compilers-copy\"}"), "{text}");
}

/// Set in a copy of this program: what it does to its own file before it tunes (`chmod`: no
/// execute bit; `replace`: another file in its place).
const CHANGE_MY_FILE: &str = "COMPILERS_TEST_CHANGE_MY_FILE";

/// In a copy of this program: changes its own file as [`CHANGE_MY_FILE`] says, tunes in
/// compiler processes and prints what came of it.
#[cfg(unix)]
fn tune_after(what: &str) {
    use std::os::unix::fs::PermissionsExt;
    let me = std::env::current_exe().unwrap();
    match what {
        "chmod" => std::fs::set_permissions(&me, std::fs::Permissions::from_mode(0o644)).unwrap(),
        "replace" => {
            let new = me.with_extension("new");
            std::fs::write(&new, "#!/bin/sh\nexit 3\n").unwrap();
            std::fs::set_permissions(&new, std::fs::Permissions::from_mode(0o755)).unwrap();
            std::fs::rename(&new, &me).unwrap();
        }
        other => panic!("{other}"),
    }
    let mut fake = FakeBackend::new(limits(), time).with_compile_times(|_| Duration::from_millis(5));
    if what == "replace" {
        // Kernels in worker processes, one of which crashes its worker.
        fake = fake.with_behavior(|c| if c.key() == "bx=32,vec=1" { Behavior::Crash } else { Behavior::Ok }).isolated(0, None);
    }
    std::env::set_var(kerntune_core::compiler::ISOLATION_VAR, "1");
    let tuner = Tuner::new(fake);
    let r = tuner.tune(&job(), &exhaustive(Some(Duration::from_secs(60)))).unwrap();
    let measured = r.results.iter().filter(|x| x.stats().is_some()).count();
    let note = r.notes.iter().find(|n| n.contains("compiler process")).cloned().unwrap_or_default();
    // What `top` and `pkill` see the processes this one started as (`exe`, the kernel's name
    // for a program started through `/proc/PID/exe`, unless named again).
    let names: std::collections::BTreeSet<String> = children()
        .unwrap_or_default()
        .iter()
        .map(|(pid, _)| std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default().trim_end().to_string())
        .collect();
    println!(
        "{measured} measured, {} compiler processes started, compiler processes used: {}; note: {note:?}; {} workers started; failed: {:?}; children named {names:?}",
        fake::COMPILER.started(),
        fake::COMPILER.used(Some(true)),
        tuner.backend().worker_starts(),
        failed(&r)
    );
    if what == "chmod" {
        // Kernels in worker processes, which cannot start either: the error names the program.
        let isolated = FakeBackend::new(limits(), time).isolated(0, None);
        println!("isolated: {:?}", Tuner::new(isolated).tune(&job(), &exhaustive(None)).map(|r| r.results.len()));
    }
}

fn main() {
    fake::hook();
    #[cfg(unix)]
    if let Ok(what) = std::env::var(CHANGE_MY_FILE) {
        tune_after(&what);
        return;
    }
    let tests: &[(&str, fn())] = &[
        ("compilers_start_ahead_one_per_compile_thread", compilers_start_ahead_one_per_compile_thread),
        ("a_compiled_space_starts_no_compiler", a_compiled_space_starts_no_compiler),
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        ("idle_compilers_give_back_the_memory_their_compiles_took", idle_compilers_give_back_the_memory_their_compiles_took),
        #[cfg(target_os = "linux")]
        ("idle_compilers_killed_between_tunes_cost_nothing", idle_compilers_killed_between_tunes_cost_nothing),
        ("a_compile_past_the_timeout_is_killed_and_uses_no_more_cpu", a_compile_past_the_timeout_is_killed_and_uses_no_more_cpu),
        ("a_compiler_that_crashes_costs_its_config", a_compiler_that_crashes_costs_its_config),
        ("compiles_wait_for_the_memory_they_need", compiles_wait_for_the_memory_they_need),
        ("the_memory_check_goes_by_what_most_compiles_take", the_memory_check_goes_by_what_most_compiles_take),
        #[cfg(target_os = "linux")]
        ("idle_compilers_are_closed_while_compiles_wait_for_memory", idle_compilers_are_closed_while_compiles_wait_for_memory),
        ("a_later_tune_of_a_kernel_knows_what_its_compiles_take", a_later_tune_of_a_kernel_knows_what_its_compiles_take),
        ("a_compiler_killed_from_outside_compiles_again_with_fewer_beside_it", a_compiler_killed_from_outside_compiles_again_with_fewer_beside_it),
        ("a_killed_compile_does_not_wait_for_a_long_one", a_killed_compile_does_not_wait_for_a_long_one),
        ("a_compiler_killed_by_hand_compiles_again_at_once", a_compiler_killed_by_hand_compiles_again_at_once),
        ("the_reference_config_killed_while_the_rest_wait_compiled_compiles_again", the_reference_config_killed_while_the_rest_wait_compiled_compiles_again),
        ("compiler_processes_are_used_where_wanted_and_reused", compiler_processes_are_used_where_wanted_and_reused),
        #[cfg(unix)]
        ("a_compiler_that_cannot_start_leaves_the_compiles_on_threads", a_compiler_that_cannot_start_leaves_the_compiles_on_threads),
        #[cfg(target_os = "linux")]
        (
            "compilers_and_workers_start_from_the_running_program_when_its_file_is_replaced",
            compilers_and_workers_start_from_the_running_program_when_its_file_is_replaced,
        ),
    ];
    kerntune_core::testing::run_tests(tests);
}
