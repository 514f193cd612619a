//! Benchmarks of the core's hot paths (criterion):
//! - the runtime handle's lookup of an already-seen problem key (goal ≤ 50 ns: no lock, no
//!   allocation, no string hashing), and what a launch adds on top of it (loading the key's
//!   current kernel and checking the argument tuple against the spec);
//! - search-space enumeration (goal: the 663,552-point GEMM space well under a second).
//!
//! Run: `cargo bench -p kerntune-core --bench core`.

use criterion::{criterion_group, criterion_main, Criterion};
use kerntune_core::fake::app::{FakeTunable, In, Out};
use kerntune_core::fake::FakeBackend;
use kerntune_core::*;
use std::hint::black_box;
use std::sync::Arc;

#[path = "../tests/common/spaces.rs"]
mod fixtures;

fn job() -> TuneJob {
    let mut job = TuneJob::new(KernelSource::new("k", "fake", ""), vec![Param::new("bx", [64, 128, 256])]);
    job.sizes = vec![("n".into(), Value::Int(4096))];
    job.bucket = Bucket::Pow2;
    job.verify.reference = Reference::None;
    job.block = ["bx".into(), "1".into(), "1".into()];
    job.args = vec![
        ArgSpec {
            name: "x".into(),
            kind: ArgKind::Buffer { dtype: DType::F32, len: "n".into(), init: Init::Sequence, access: Access::Read, memory: Memory::Global },
        },
        ArgSpec {
            name: "y".into(),
            kind: ArgKind::Buffer { dtype: DType::F32, len: "n".into(), init: Init::Zeros, access: Access::Write, memory: Memory::Global },
        },
    ];
    job
}

fn tuner() -> Arc<Tuner<FakeBackend>> {
    let limits = Limits::preset("h100").unwrap().1;
    Arc::new(Tuner::new(FakeBackend::new(limits, |c: &Config| 1e-3 / c.get_i64("bx").unwrap() as f64)))
}

fn lookup(c: &mut Criterion) {
    let h = Autotuned::new(tuner(), job(), TuneOptions::default()).policy(Policy::Tune);
    h.get(&[4096]).unwrap();
    // 4000 buckets to 4096: a seen key.
    c.bench_function("lookup/get (seen key, pow2 bucket)", |b| b.iter(|| h.get(black_box(&[4000])).unwrap()));
    c.bench_function("lookup/slot (seen key, pow2 bucket)", |b| b.iter(|| h.slot(black_box(&[4000])).unwrap()));
    let slot = h.slot(&[4096]).unwrap();
    c.bench_function("lookup/slot load (what each launch reads)", |b| b.iter(|| black_box(&slot).load().launch.grid[0]));
}

fn launch_checks(c: &mut Criterion) {
    // What every launch does before its driver call: load the key's current kernel and check
    // the tuple's types (cached per tuple type) and buffer lengths against the spec. The driver
    // call itself is measured on the GPU (docs/benchmarks.md).
    let app = FakeTunable::new(tuner(), job(), TuneOptions::default(), Policy::Default, &[]);
    let k = app.kernel(&[4096]).unwrap();
    let x = vec![1f32; 4096];
    let mut y = vec![0f32; 4096];
    c.bench_function("launch/slot load + argument checks (2 buffers)", |b| b.iter(|| k.check(black_box(&(In(&x), Out(&mut y)))).unwrap()));
}

fn enumerate(c: &mut Criterion) {
    let s = fixtures::large_gemm();
    let mut g = c.benchmark_group("space");
    g.sample_size(10);
    g.bench_function("enumerate 663,552-point GEMM (116,928 valid)", |b| {
        b.iter(|| {
            let n = s.iter_coords().count();
            assert_eq!(n, 116_928);
            n
        })
    });
    g.finish();
}

criterion_group!(benches, lookup, launch_checks, enumerate);
criterion_main!(benches);
