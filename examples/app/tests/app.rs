//! The example application run as a user runs it: the first run tunes (CUDA or HIP when present,
//! else wgpu, software Vulkan in CI), the second finds the stored winner, `KERNTUNE_TUNE=0` on an
//! unseen size runs the default config with a log line and stores nothing; every run checks its
//! own results. The winners file `kerntune db export --rust` writes compiles as the program's
//! embedded list.

use kerntune::store::db::Status;
use std::path::Path;
use std::process::{Command, Output};

fn app(cache: &Path, args: &[&str], env: &[(&str, &str)]) -> (bool, String, String) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_kerntune-app"));
    c.args(args).env("KERNTUNE_CACHE_DIR", cache).env_remove("KERNTUNE_LOG").env_remove("KERNTUNE_TUNE").env_remove("KERNTUNE_DISABLE");
    for (k, v) in env {
        c.env(k, v);
    }
    let o: Output = c.output().expect("the app runs");
    (o.status.success(), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn tunes_once_then_launches_the_stored_winner() {
    let d = tempfile::tempdir().unwrap();
    let (ok, out, err) = app(d.path(), &["--n", "65536", "--iters", "20"], &[]);
    if !ok && err.contains("no wgpu adapter") && std::env::var("KERNTUNE_REQUIRE_DEVICE").is_err() {
        eprintln!("SKIPPED: no device for the example app");
        return;
    }
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("(tuned now)") && out.contains("20 launches: verified"), "{out}");
    let winner = out.lines().find(|l| l.starts_with("triad N=65536:")).unwrap().to_string();
    let (ok, out, err) = app(d.path(), &["--n", "65536", "--iters", "3"], &[]);
    assert!(ok, "{err}");
    let again = out.lines().find(|l| l.starts_with("triad N=65536:")).unwrap();
    assert_eq!(again, winner.replace("(tuned now)", "(stored winner)"), "{out}");
    // Never tune: an unseen size runs the default config, says so, and stores nothing new.
    let stored = || kerntune::Database::at(d.path().join("db.sqlite")).load().unwrap();
    let db = stored();
    let (ok, out, err) = app(d.path(), &["--n", "4000", "--iters", "3"], &[("KERNTUNE_TUNE", "0")]);
    assert!(ok, "{err}");
    assert!(out.contains("triad N=4000: WG_SIZE=64,PER_THREAD=1 (default config)") && out.contains("verified"), "{out}");
    assert!(err.contains("no stored or embedded winner for this problem; using the default config"), "{err}");
    assert_eq!(stored(), db);
}

/// A program that meets a second, larger size tunes it on that size's buffers: the worker process
/// the handle's tunes run in (the program called `kerntune::hook()`) is sent each problem.
#[test]
fn a_second_size_in_one_run_is_tuned_on_its_own_buffers() {
    let d = tempfile::tempdir().unwrap();
    let (ok, out, err) = app(d.path(), &["--n", "4096,65536", "--iters", "4"], &[]);
    if !ok && err.contains("no wgpu adapter") && std::env::var("KERNTUNE_REQUIRE_DEVICE").is_err() {
        eprintln!("SKIPPED: no device for the example app");
        return;
    }
    assert!(ok, "{out}\n{err}");
    for n in [4096, 65536] {
        assert!(out.lines().any(|l| l.starts_with(&format!("triad N={n}:")) && l.ends_with("(tuned now)")), "{out}");
    }
    assert_eq!(out.matches("4 launches: verified").count(), 2, "{out}");
    let db = kerntune::Database::at(d.path().join("db.sqlite")).load().unwrap();
    assert_eq!(db.entries.values().filter(|e| e.winner.is_some()).count(), 2, "a winner per size");
}

/// A kernel whose configs include some that never end (tests/data/hang.toml: HANG = 1 loops
/// forever), tuned through the wgpu launch API: the program called `kerntune::hook()`, so the
/// tune's kernels run in a worker process, which is killed with each such config, and the
/// program goes on with a config that ends. (In the program's own process a dispatch that never
/// ends cannot be stopped: the tune ended with "device lost" and the program with it.)
#[test]
fn a_shader_that_never_ends_costs_its_configs_not_the_program() {
    let d = tempfile::tempdir().unwrap();
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/hang.toml");
    let (ok, out, err) = app(d.path(), &["--backend", "wgpu", "--spec", spec.to_str().unwrap(), "--n", "65536", "--iters", "3"], &[]);
    if !ok && err.contains("no wgpu adapter") && std::env::var("KERNTUNE_REQUIRE_DEVICE").is_err() {
        eprintln!("SKIPPED: no device for the example app");
        return;
    }
    assert!(ok, "{out}\n{err}");
    let line = out.lines().find(|l| l.starts_with("triad N=65536:")).unwrap_or_else(|| panic!("{out}"));
    assert!(line.contains("HANG=0") && line.ends_with("(tuned now)"), "{out}");
    assert!(out.contains("3 launches: verified"), "{out}");
    // Every config was measured or failed for its own reason, and kept: the two that never
    // ended as timed out, the two others measured (each on a fresh worker after one was killed).
    let db = kerntune::Database::at(d.path().join("db.sqlite")).load().unwrap();
    let entry = db.entries.values().next().unwrap();
    assert!(entry.winner.is_some());
    assert_eq!(entry.measurements.len(), 4, "{:?}", entry.measurements.keys());
    for (key, m) in &entry.measurements {
        match &m.status {
            Status::Failed { failure, .. } => assert!(key.contains("HANG=1") && *failure == kerntune::FailureKind::TimedOut, "{key}: {m:?}"),
            Status::Ok { .. } => assert!(key.contains("HANG=0"), "{key}"),
        }
    }
}

#[test]
fn bad_flags_get_one_line() {
    let d = tempfile::tempdir().unwrap();
    let (ok, _, err) = app(d.path(), &["--spec", "/nonexistent/triad.toml"], &[("KERNTUNE_DISABLE", "1")]);
    assert!(!ok && err.contains("/nonexistent/triad.toml"), "{err}");
    let (ok, _, err) = app(d.path(), &["--policy", "sometimes"], &[]);
    assert!(!ok && err.contains("not tune, stored, background or default"), "{err}");
}

/// What `kerntune db export --rust` writes (tests/data/winners.rs is its output for
/// tests/data/db/triad-llvmpipe.json; tests/cli.rs checks they still agree) is a valid list.
static SHIPPED: &[kerntune::EmbeddedWinner] = include!("data/winners.rs");

#[test]
fn exported_winners_compile_as_an_embedded_list() {
    assert_eq!(SHIPPED.len(), 1);
    assert_eq!((SHIPPED[0].kernel, SHIPPED[0].problem), ("triad", "N=1048576"));
    assert!(SHIPPED[0].config.starts_with("WG_SIZE="), "{:?}", SHIPPED[0]);
}
