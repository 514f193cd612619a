//! The clock guard's real path on a real adapter (software Vulkan in CI, where it is forced on:
//! llvmpipe has no clock to guard, but the reference kernel is built, calibrated and timed the
//! same way): a tune with the guard on completes, verifies, and its report carries no "guard
//! off" note. Its own file, because the guard is switched by an environment variable.

use kerntune_core::testing::skipped_without_device;
use kerntune_core::{TuneOptions, Tuner};
use kerntune_wgpu::WgpuBackend;
use std::path::Path;

#[test]
fn a_tune_with_the_clock_guard_on_completes_and_reports_no_failure() {
    // SAFETY (of set_var): this test binary has this one test, so no other thread reads the
    // environment while it is set.
    unsafe { std::env::set_var("KERNTUNE_WGPU_CLOCK_GUARD", "on") };
    let backend = match WgpuBackend::open(None) {
        Ok(b) => b,
        Err(e) => {
            skipped_without_device("wgpu", "clock guard: no adapter", &e);
            return;
        }
    };
    let spec = kerntune_core::plan::prepare::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/triad/triad.toml")).unwrap();
    let mut job = spec.job("wgsl", 0).unwrap();
    job.sizes = vec![("N".into(), kerntune_core::Value::Int(1 << 16))];
    let report = Tuner::new(backend).tune(&job, &TuneOptions::default()).unwrap();
    assert!(report.winner_stats.mean > 0.0);
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    assert!(!report.notes.iter().any(|n| n.contains("clock guard: off")), "{:?}", report.notes);
}
