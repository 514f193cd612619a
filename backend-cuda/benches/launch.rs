//! Launch overhead on a GPU: the triad tuned by kerntune and launched through
//! `TunedKernel::launch` (slot load, argument checks, then cudarc's launch) next to a raw cudarc
//! launch of the same loaded function with the same configuration. Goal: within 1 µs.
//!
//! Host time per launch, launches queued in batches of 256 with the stream drained between
//! batches (untimed), so that a full launch queue never blocks the host.
//!
//! Run on a CUDA machine: `cargo bench -p kerntune-cuda --bench launch` (or the bench binary
//! that `cargo bench --no-run` builds, with `--bench`). Without a CUDA device it says so and
//! measures nothing.

use criterion::{criterion_group, criterion_main, Criterion};
use cudarc::driver::{CudaContext, PushKernelArg};
use kerntune_core::{Database, Policy, TuneOptions, Value};
use kerntune_cuda::launch::CudaTunable;
use std::path::PathBuf;
use std::time::{Duration, Instant};

const BATCH: u64 = 256;

fn spec() -> PathBuf {
    let here = PathBuf::from("examples/triad/triad.toml");
    if here.exists() {
        here
    } else {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/triad/triad.toml")
    }
}

fn launches(c: &mut Criterion) {
    if let Err(e) = kerntune_cuda::devices() {
        println!("SKIPPED: launch bench needs a CUDA device ({e})");
        return;
    }
    let ctx = CudaContext::new(0).expect("CUDA device 0");
    let stream = ctx.default_stream();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let n: u32 = 4096;
    let mut job = kerntune_core::plan::prepare::load(&spec()).expect("the triad spec").job("cuda", 0).expect("its CUDA job");
    job.sizes = vec![("N".into(), Value::Int(n as i64))];
    let opts = TuneOptions { db: Some(Database::at(dir.path().join("db.json"))), ..Default::default() };
    let triad = CudaTunable::new(ctx.clone(), job, opts).expect("the tunable triad").policy(Policy::Tune);
    let k = triad.kernel(&[n as i64]).expect("tuned");
    println!("triad N={n}: {} ({:?}), grid {:?} block {:?}", k.config(), k.origin(), k.geometry().grid, k.geometry().block);
    let x = stream.clone_htod(&vec![1.0f32; n as usize]).unwrap();
    let mut y = stream.alloc_zeros::<f32>(n as usize).unwrap();
    let a = 2.0f32;
    let (func, cfg) = k.raw();

    let mut g = c.benchmark_group("launch (host time per launch, triad N=4096)");
    // Host time of `iters` launches, queued BATCH at a time with the stream drained between
    // batches (untimed), so that a full launch queue never blocks the host.
    let batches = |iters: u64, launch: &mut dyn FnMut()| {
        let mut spent = Duration::ZERO;
        let mut left = iters;
        while left > 0 {
            let m = left.min(BATCH);
            let t = Instant::now();
            for _ in 0..m {
                launch();
            }
            spent += t.elapsed();
            stream.synchronize().unwrap();
            left -= m;
        }
        spent
    };
    g.bench_function("raw cudarc launch_builder", |b| {
        b.iter_custom(|iters| {
            batches(iters, &mut || {
                let mut l = stream.launch_builder(&func);
                l.arg(&x).arg(&mut y).arg(&a).arg(&n);
                // SAFETY: the triad's parameters; both buffers hold n floats.
                unsafe { l.launch(cfg) }.unwrap();
            })
        })
    });
    g.bench_function("kerntune TunedKernel::launch", |b| b.iter_custom(|iters| batches(iters, &mut || k.launch(&stream, (&x, &mut y, a, n)).unwrap())));
    g.bench_function("kerntune lookup + launch (triad.kernel(&[n])?.launch)", |b| {
        b.iter_custom(|iters| batches(iters, &mut || triad.kernel(&[n as i64]).unwrap().launch(&stream, (&x, &mut y, a, n)).unwrap()))
    });
    g.finish();
}

criterion_group!(benches, launches);
criterion_main!(benches);
