//! Benchmarks of the core's hot paths: the runtime handle's lookup (goal ≤ 50 ns) and search-space
//! enumeration (goal: the 663,552-point GEMM space well under a second).
//! Run: `cargo bench -p kerntune-core --bench core`.

use kerntune_core::fake::FakeBackend;
use kerntune_core::*;
use std::sync::Arc;

fn main() {
    divan::main();
}

fn p(name: &str, v: &[i64]) -> Param {
    Param::new(name, v.iter().copied())
}

fn large_gemm() -> SearchSpace {
    let params = vec![
        p("GEMMK", &[0]),
        p("MWG", &[16, 32, 64, 128]),
        p("NWG", &[16, 32, 64, 128]),
        p("KWG", &[16, 32]),
        p("MDIMC", &[8, 16, 32]),
        p("NDIMC", &[8, 16, 32]),
        p("MDIMA", &[8, 16, 32]),
        p("NDIMB", &[8, 16, 32]),
        p("KWI", &[2]),
        p("VWM", &[1, 2, 4, 8]),
        p("VWN", &[1, 2, 4, 8]),
        p("STRM", &[0, 1]),
        p("STRN", &[0, 1]),
        p("SA", &[0, 1]),
        p("SB", &[0, 1]),
        p("KREG", &[1]),
        p("PRECISION", &[32]),
    ];
    let r = [
        "KWG % KWI == 0",
        "MWG % (MDIMC * VWM) == 0",
        "NWG % (NDIMC * VWN) == 0",
        "MWG % (MDIMA * VWM) == 0",
        "NWG % (NDIMB * VWN) == 0",
        "KWG % ((MDIMC * NDIMC)/MDIMA) == 0",
        "KWG % ((MDIMC * NDIMC)/NDIMB) == 0",
        "not (MWG == 128 and NWG == 128 and MDIMC == 8 and NDIMC == 8)",
    ];
    SearchSpace::new(params, &r, vec![]).unwrap()
}

/// Enumerates all 116,928 valid points of the 663,552-point space.
#[divan::bench(sample_count = 10)]
fn enumerate_large_gemm(b: divan::Bencher) {
    let s = large_gemm();
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
