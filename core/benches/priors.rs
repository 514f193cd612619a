//! Loading and ranking priors at scale: a database holding one kernel's measurements on 10
//! other GPUs, 20,000 configs each (200,000 measurements), then what a tune on an eleventh GPU
//! does before its first evaluation: read those entries (`Database::times_elsewhere`, which reads
//! the `time` column and each record's compile seconds), line them up with its 20,000 candidates
//! (`PriorBuilder`), and rank the candidates (the transfer search's first proposal).
//! The database also holds 100,000 entries of the same kernel for other problems (a library that
//! ships tuned kernels for many shapes), which the lookup must not read.
//! Goal: ≤ 100 ms. The read, the line-up and the first proposal are also timed alone.
//!
//! Run: `cargo bench -p kerntune-core --bench priors` (building the database takes a while).

use criterion::{criterion_group, criterion_main, Criterion};
use kerntune_core::search::{Candidates, PriorBuilder, Strategy, Transfer};
use kerntune_core::store::db::{Entry, EntryId, Environment, Measurement, Span, SpanKind, Trace};
use kerntune_core::*;
use std::hint::black_box;
use std::time::Instant;

const GPUS: usize = 10;
/// Entries of the same kernel for other problems beside them.
const OTHER_ENTRIES: usize = 100_000;
/// 5 parameters: 8 × 5 × 5 × 4 × 25 = 20,000 configs.
fn params() -> Vec<Param> {
    vec![
        Param::new("bx", [16, 32, 64, 128, 256, 512, 768, 1024]),
        Param::new("by", [1, 2, 4, 8, 16]),
        Param::new("tx", [1, 2, 3, 4, 5]),
        Param::new("ty", [1, 2, 4, 8]),
        Param::new("u", 0..25),
    ]
}

fn coords() -> Vec<Vec<u32>> {
    let mut out = Vec::new();
    for a in 0..8 {
        for b in 0..5 {
            for c in 0..5 {
                for d in 0..4 {
                    for e in 0..25 {
                        out.push(vec![a, b, c, d, e]);
                    }
                }
            }
        }
    }
    out
}

fn priors(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::at(dir.path().join("db.sqlite"));
    let params = params();
    let coords = coords();
    let t = Instant::now();
    db.update(|f| {
        for g in 0..GPUS {
            let id = EntryId { kernel: "conv".into(), kernel_hash: "h".into(), target: format!("gpu{g}"), toolchain: "t".into(), problem: "n=1".into() };
            let mut e = Entry::new(id.clone(), format!("GPU {g}"), Environment::default());
            for (i, cs) in coords.iter().enumerate() {
                let cfg = Config::new(params.iter().zip(cs).map(|(p, &v)| (p.name.clone(), p.values[v as usize].clone())));
                let time = 1e-3 * (1.0 + ((i * 7919 + g * 104729) % 1000) as f64 / 1000.0);
                let mut m = Measurement::timed(cfg, Stats::from_samples(&[time, time], false), 1);
                // Where the tune stood, as a real tune records it (with the config's compile
                // seconds, which the lookup reads too).
                m.trace = Some(Trace {
                    run: 1,
                    seq: i,
                    elapsed_s: i as f64 * 0.01,
                    compile_s: Some(0.5 + (i % 100) as f64 / 50.0),
                    eval_s: Some(0.05 + (i % 10) as f64 / 100.0),
                    device: None,
                    by: None,
                    // Its compile, verification and measurement.
                    spans: vec![
                        Span::new(SpanKind::Compile, None, i as f64 * 0.01, 0.5),
                        Span::new(SpanKind::Verify, Some(0), i as f64 * 0.01 + 0.5, 0.01),
                        Span::new(SpanKind::Measure, Some(0), i as f64 * 0.01 + 0.51, 0.05),
                    ],
                    shard: None,
                });
                e.measurements.insert(m.config.key(), m);
            }
            f.entries.insert(id.key(), e);
        }
    })
    .unwrap();
    eprintln!("built {GPUS} × {} measurements in {:.1} s", coords.len(), t.elapsed().as_secs_f64());
    // The same kernel tuned for many other problems on the same GPUs (a library's database):
    // 100,000 more entries of 6 measurements each, none of them this problem's.
    let t = Instant::now();
    db.update(|f| {
        for k in 0..OTHER_ENTRIES {
            let (g, n) = (k % GPUS, 2 + k / GPUS);
            let id = EntryId { kernel: "conv".into(), kernel_hash: "h".into(), target: format!("gpu{g}"), toolchain: "t".into(), problem: format!("n={n}") };
            let mut e = Entry::new(id.clone(), format!("GPU {g}"), Environment::default());
            for cs in coords.iter().skip(k % 1000).take(6) {
                let cfg = Config::new(params.iter().zip(cs).map(|(p, &v)| (p.name.clone(), p.values[v as usize].clone())));
                let m = Measurement::timed(cfg, Stats::from_samples(&[1e-3, 1e-3], false), 1);
                e.measurements.insert(m.config.key(), m);
            }
            f.entries.insert(id.key(), e);
        }
    })
    .unwrap();
    eprintln!("built {OTHER_ENTRIES} entries of other problems in {:.1} s", t.elapsed().as_secs_f64());
    c.bench_function("priors: read 10 × 20,000 from the database (times_elsewhere alone)", |b| {
        b.iter(|| black_box(db.times_elsewhere("conv", "n=1", "gpu_new", false).unwrap().len()))
    });
    // With each config's compile seconds too (what an exhaustive or random tune reads).
    c.bench_function("priors: read 10 × 20,000 with compile seconds (times_elsewhere alone)", |b| {
        b.iter(|| black_box(db.times_elsewhere("conv", "n=1", "gpu_new", true).unwrap().len()))
    });
    let names: Vec<String> = params.iter().map(|p| p.name.clone()).collect();
    let read = db.times_elsewhere("conv", "n=1", "gpu_new", false).unwrap();
    c.bench_function("priors: line up 10 × 20,000 (PriorBuilder alone)", |b| {
        b.iter(|| {
            let cands = Candidates { params: &params, coords: &coords };
            let mut pb = PriorBuilder::new(&cands);
            for (id, name, times) in &read {
                pb.add_keyed(&format!("{name} {}", id.target), &names, times.iter().map(|(k, t, _)| (k, t.ok_or_else(String::new))));
            }
            black_box(pb.build().sources.len())
        })
    });
    let built = {
        let cands = Candidates { params: &params, coords: &coords };
        let mut pb = PriorBuilder::new(&cands);
        for (id, name, times) in &read {
            pb.add_keyed(&format!("{name} {}", id.target), &names, times.iter().map(|(k, t, _)| (k, t.ok_or_else(String::new))));
        }
        std::sync::Arc::new(pb.build())
    };
    c.bench_function("priors: first proposal from a built prior (Transfer alone)", |b| {
        b.iter(|| {
            let cands = Candidates { params: &params, coords: &coords };
            let mut t = Transfer::new(built.clone(), kerntune_core::search::by_name("hybrid", 1).unwrap());
            black_box(t.ask(&cands, 1))
        })
    });
    c.bench_function("priors: read 10 × 20,000 from the database, line up, first proposal", |b| {
        b.iter(|| {
            let cands = Candidates { params: &params, coords: &coords };
            let mut pb = PriorBuilder::new(&cands);
            for (id, name, times) in db.times_elsewhere("conv", "n=1", "gpu_new", false).unwrap() {
                pb.add_keyed(&format!("{name} {}", id.target), &names, times.iter().map(|(k, t, _)| (k, t.ok_or_else(String::new))));
            }
            let prior = std::sync::Arc::new(pb.build());
            assert_eq!(prior.sources.len(), GPUS);
            let mut t = Transfer::new(prior, kerntune_core::search::by_name("hybrid", 1).unwrap());
            black_box(t.ask(&cands, 1))
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = priors
}
criterion_main!(benches);
