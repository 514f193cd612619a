//! The runtime handle as an application uses it, on the fake backend: the policies (tune now,
//! stored only, default now and tune in the background, default only), embedded winners, the
//! environment switches, and launches whose arguments are wrong (refused, never run).

use kerntune_core::fake::app::{FakeTunable, In, Out};
use kerntune_core::fake::FakeBackend;
use kerntune_core::store::db::Database;
use kerntune_core::*;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Counts this thread's allocations, to show that a seen key's lookup allocates nothing.
struct Counting;

thread_local! {
    static ALLOCS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator; the counter is a const-initialised thread-local
// without a destructor, so counting allocates nothing itself.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.with(|c| c.set(c.get() + 1));
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations<R>(f: impl FnOnce() -> R) -> usize {
    let before = ALLOCS.with(Cell::get);
    std::hint::black_box(f());
    ALLOCS.with(Cell::get) - before
}

fn job() -> TuneJob {
    kerntune_core::fake::example().1
}

fn tuner() -> Arc<Tuner<FakeBackend>> {
    kerntune_core::fake::example().0
}

fn opts(db: Option<Database>) -> TuneOptions {
    TuneOptions { db, compile_threads: Some(2), ..Default::default() }
}

fn winner(c: &Config) -> bool {
    c.get_i64("bx") == Some(64) && c.get_i64("vec") == Some(4)
}

#[test]
fn tune_now_then_launch_on_application_buffers() {
    let t = tuner();
    let app = FakeTunable::new(t.clone(), job(), opts(None), Policy::Tune, &[]);
    let k = app.kernel(&[1024]).unwrap();
    let (cfg, origin) = k.current();
    assert!(winner(&cfg) && origin == Origin::Tuned, "{cfg} {origin:?}");
    let x: Vec<f32> = (0..1024).map(|i| i as f32).collect();
    let mut y = vec![0f32; 1024];
    for _ in 0..3 {
        k.launch((In(&x), Out(&mut y))).unwrap();
    }
    assert_eq!((y[0], y[5], y[1023]), (0.0, 15.0, 3069.0), "y += x, three times");
    // A second lookup of the same key compiles and tunes nothing more, and allocates nothing;
    // neither does checking a launch's arguments.
    let compiles = t.backend().compiles.load(Ordering::SeqCst);
    app.kernel(&[1024]).unwrap();
    assert_eq!(t.backend().compiles.load(Ordering::SeqCst), compiles);
    assert_eq!(allocations(|| app.handle().slot(&[1024]).unwrap()), 0);
    assert_eq!(allocations(|| app.handle().get(&[1024]).unwrap()), 0);
    assert_eq!(allocations(|| k.check(&(In(&x), Out(&mut y))).unwrap()), 0);
}

#[test]
fn wrong_arguments_are_refused_and_nothing_runs() {
    let app = FakeTunable::new(tuner(), job(), opts(None), Policy::Default, &[]);
    let k = app.kernel(&[1024]).unwrap();
    let x = vec![1f32; 1024];
    let mut y = vec![0f32; 1024];
    let short = vec![1f32; 1000];
    let e = k.launch((In(&x),)).unwrap_err().to_string();
    assert_eq!(e, "kernel `k` takes 2 arguments (x, y), 1 were given");
    let e = k.launch((In(&x), In(&x))).unwrap_err().to_string();
    assert_eq!(e, "kernel `k`, argument 1 (`y`): expected a writable buffer of float, got a buffer of float");
    let e = k.launch((In(&short), Out(&mut y))).unwrap_err().to_string();
    assert_eq!(e, "kernel `k`, argument 0 (`x`): the buffer holds 1000 elements, the problem needs 1024");
    let e = k.launch((In(&x), In(&x), Out(&mut y))).unwrap_err().to_string();
    assert!(e.contains("takes 2 arguments"), "{e}");
    assert!(y.iter().all(|v| *v == 0.0), "nothing ran");
    let e = app.kernel(&[1024, 7]).err().expect("two sizes for one").to_string();
    assert_eq!(e, "kernel `k` takes 1 problem size(s) (n), 2 were given");
}

#[test]
fn stored_only_uses_the_database_or_the_default_and_never_tunes() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::at(dir.path().join("db.sqlite"));
    let t = tuner();
    let app = FakeTunable::new(t.clone(), job(), opts(Some(db.clone())), Policy::Stored, &[]);
    let (cfg, origin) = app.kernel(&[1024]).unwrap().current();
    assert_eq!((cfg.get_i64("bx"), origin), (Some(256), Origin::Default), "nothing stored: the default");
    assert_eq!(t.backend().compiles.load(Ordering::SeqCst), 0, "no tuning compile (the app compiler is the handle's)");
    // Once a tune stored a winner, a new handle (a new process) finds it.
    t.tune(&job(), &opts(Some(db.clone()))).unwrap();
    let app = FakeTunable::new(tuner(), job(), opts(Some(db)), Policy::Stored, &[]);
    let (cfg, origin) = app.kernel(&[1024]).unwrap().current();
    assert!(winner(&cfg) && origin == Origin::Database, "{cfg} {origin:?}");
}

/// A winner stored by a tune that was ended early (SIGUSR1, a scheduler's warning) runs where
/// the policy only launches; where it tunes, the tune goes on from its measurements (and stores
/// a whole winner), as `kerntune tune` does; in the background, it runs meanwhile.
#[test]
fn a_winner_whose_tune_ended_early_runs_while_the_tune_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::at(dir.path().join("db.sqlite"));
    let t = tuner();
    let whole = t.tune(&job(), &opts(Some(db.clone()))).unwrap();
    let id = whole.entry.clone();
    let entry = || db.load().unwrap().entries.into_values().next().unwrap();
    // Stored as that tune would have: another measured config, marked partial.
    let partial = || {
        let mut w = entry().winner.unwrap();
        w.config = entry().measurements.keys().find(|k| **k != w.config).unwrap().clone();
        w.partial = true;
        let origin = entry().origin.unwrap();
        db.update_entry(&id, |e| e.as_mut().unwrap().set_winner(origin, w.clone())).unwrap();
        w.config
    };
    let stored = partial();
    let app = FakeTunable::new(tuner(), job(), opts(Some(db.clone())), Policy::Stored, &[]);
    let (cfg, origin) = app.kernel(&[1024]).unwrap().current();
    assert_eq!((cfg.key(), origin), (stored.clone(), Origin::Database));
    assert!(entry().winner.unwrap().partial, "a stored-only handle tunes nothing");
    let app = FakeTunable::new(tuner(), job(), opts(Some(db.clone())), Policy::Tune, &[]);
    let (cfg, origin) = app.kernel(&[1024]).unwrap().current();
    assert!(winner(&cfg) && origin == Origin::Tuned, "{cfg} {origin:?}");
    assert!(!entry().winner.unwrap().partial, "the tune went on and stored a whole winner");
    let stored = partial();
    let app = FakeTunable::new(tuner(), job(), opts(Some(db.clone())), Policy::Background, &[]);
    let k = app.kernel(&[1024]).unwrap();
    assert_eq!(k.current().0.key(), stored);
    app.handle().settle();
    let (cfg, origin) = k.current();
    assert!(winner(&cfg) && origin == Origin::Tuned, "{cfg} {origin:?}");
    assert!(!entry().winner.unwrap().partial);
}

/// A program whose tuner cannot measure here (the kernel worker process does not start: a
/// process limit, the program's file gone) runs the default config instead of failing, stores
/// nothing, and the next process tunes; a tune that fails for the kernel's sake (no config
/// compiles) is still the program's error.
#[test]
fn tune_now_runs_the_default_where_the_tuner_cannot_measure() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::at(dir.path().join("db.sqlite"));
    let limits = Limits::preset("h100").unwrap().1;
    let time = |_: &Config| 1e-3;
    let no_worker = FakeBackend::new(limits.clone(), time).isolated(0, Some(Box::new(|| std::process::Command::new("/nonexistent/kerntune-worker"))));
    let app = FakeTunable::new(Arc::new(Tuner::new(no_worker)), job(), opts(Some(db.clone())), Policy::Tune, &[]);
    let k = app.kernel(&[1024]).expect("the default config, not the tune's error");
    let (cfg, origin) = k.current();
    assert_eq!((cfg.get_i64("bx"), cfg.get_i64("vec"), origin), (Some(256), Some(1), Origin::Default));
    let x = vec![1f32; 1024];
    let mut y = vec![0f32; 1024];
    k.launch((In(&x), Out(&mut y))).unwrap();
    assert_eq!(y[7], 1.0);
    assert!(db.load().unwrap().entries.values().all(|e| e.measurements.is_empty()), "nothing stored");
    // The next process, able to measure, tunes.
    let app = FakeTunable::new(tuner(), job(), opts(Some(db)), Policy::Tune, &[]);
    let (cfg, origin) = app.kernel(&[1024]).unwrap().current();
    assert!(winner(&cfg) && origin == Origin::Tuned, "{cfg} {origin:?}");

    let broken = FakeBackend::new(limits, time).with_behavior(|_| kerntune_core::fake::Behavior::CompileError("error: expected ';'".into()));
    let app = FakeTunable::new(Arc::new(Tuner::new(broken)), job(), opts(None), Policy::Tune, &[]);
    let e = app.kernel(&[1024]).err().expect("no config compiles: the tune's error");
    assert!(matches!(e, Error::NoValidConfig(_)), "{e}");
}

#[test]
fn background_starts_with_the_default_and_swaps_the_winner_in() {
    let t = tuner();
    let app = FakeTunable::new(t.clone(), job(), opts(None), Policy::Background, &[]);
    let k = app.kernel(&[1024]).unwrap();
    let (cfg, origin) = k.current();
    assert_eq!((cfg.get_i64("bx"), origin), (Some(256), Origin::Default));
    let x = vec![1f32; 1024];
    let mut y = vec![0f32; 1024];
    k.launch((In(&x), Out(&mut y))).unwrap();
    app.handle().settle();
    // The same kernel handle now launches the winner.
    let (cfg, origin) = k.current();
    assert!(winner(&cfg) && origin == Origin::Tuned, "{cfg} {origin:?}");
    k.launch((In(&x), Out(&mut y))).unwrap();
    assert_eq!(y[0], 2.0);
}

#[test]
fn embedded_winners_need_neither_tuning_nor_a_database() {
    // What `kerntune db export --rust` writes, for this kernel on the fake device.
    let t = tuner();
    let report = t.tune(&job(), &opts(None)).unwrap();
    let mut file = kerntune_core::store::db::DbFile::default();
    let dir = tempfile::tempdir().unwrap();
    let db = Database::at(dir.path().join("db.sqlite"));
    t.tune(&job(), &opts(Some(db.clone()))).unwrap();
    file.entries = db.load().unwrap().entries;
    let src = kerntune_core::store::export::rust_source(&file, None, "kerntune");
    assert!(src.contains(&format!("config: {:?}", report.winner.key())), "{src}");
    assert!(src.starts_with("// Generated by kerntune") && src.trim_end().ends_with(']'), "{src}");
    // The same winner as a static, as `include!` gives it to a program.
    let e = &file.entries.values().next().unwrap().id;
    let leak = |s: &str| -> &'static str { Box::leak(s.to_string().into_boxed_str()) };
    let winners: &'static [EmbeddedWinner] = Box::leak(Box::new([EmbeddedWinner {
        kernel: leak(&e.kernel),
        kernel_hash: leak(&e.kernel_hash),
        target: leak(&e.target),
        toolchain: "some other toolchain",
        problem: leak(&e.problem),
        config: leak(&report.winner.key()),
    }]));
    let fresh = tuner();
    let app = FakeTunable::new(fresh.clone(), job(), opts(None), Policy::Tune, winners);
    let (cfg, origin) = app.kernel(&[1024]).unwrap().current();
    assert!(winner(&cfg) && origin == Origin::Embedded, "{cfg} {origin:?}");
    assert_eq!(fresh.backend().compiles.load(Ordering::SeqCst), 0, "nothing tuned");
    // Another problem size has no embedded winner: the default (stored-only policy).
    let app = FakeTunable::new(tuner(), job(), opts(None), Policy::Stored, winners);
    let (cfg, origin) = app.kernel(&[2048]).unwrap().current();
    assert_eq!((cfg.get_i64("bx"), origin), (Some(256), Origin::Default));
}

#[test]
fn the_environment_switches_policies() {
    assert_eq!(Policy::from_vars(Policy::Tune, None, Some("0")), Policy::Stored);
    assert_eq!(Policy::from_vars(Policy::Background, None, Some("off")), Policy::Stored);
    assert_eq!(Policy::from_vars(Policy::Tune, None, Some("1")), Policy::Tune);
    assert_eq!(Policy::from_vars(Policy::Stored, Some("1"), None), Policy::Default);
    assert_eq!(Policy::from_vars(Policy::Tune, None, None), Policy::Tune);
}
