//! Benchmarks of the core's hot paths: the runtime handle's lookup (goal ≤ 50 ns) and search-space
//! enumeration (goal: the 663,552-point GEMM space well under a second).
//! Run: `cargo bench -p kerntune-core --bench core`.

use kerntune_core::fake::FakeBackend;
use kerntune_core::*;
use std::sync::Arc;

#[path = "../tests/common/spaces.rs"]
mod fixtures;

fn main() {
    divan::main();
}

/// Enumerates all 116,928 valid points of the 663,552-point space.
#[divan::bench(sample_count = 10)]
fn enumerate_large_gemm(b: divan::Bencher) {
    let s = fixtures::large_gemm();
    b.bench(|| {
        let n = s.iter_coords().count();
        assert_eq!(n, 116_928);
        n
    });
}

/// The runtime handle's cached lookup for one size (after the first call tuned).
#[divan::bench]
fn handle_lookup(b: divan::Bencher) {
    let limits = Limits::preset("h100").unwrap().1;
    let tuner = Arc::new(Tuner::new(FakeBackend::new(limits, |c: &Config| 1e-3 / c.get_i64("bx").unwrap() as f64)));
    let mut job = TuneJob::new(KernelSource::new("k", "fake", ""), vec![Param::new("bx", [64, 128, 256])]);
    job.sizes = vec![("n".into(), Value::Int(4096))];
    job.bucket = Bucket::Pow2;
    job.verify.reference = Reference::None;
    job.block = ["bx".into(), "1".into(), "1".into()];
    let h = Autotuned::new(tuner, job, TuneOptions::default());
    h.get(&[4096]).unwrap();
    b.bench(|| h.get(divan::black_box(&[4000])).unwrap());
}
