//! The winner database at scale: 100,000 entries (each with 6 measured configs and a winner,
//! about the size of a database that has collected a year of tunes), then
//! - a database hit: `Database::entry` of one key, and a whole `Tuner::tune` that finds its
//!   stored winner (goal: under 50 ms);
//! - a flush: recording 8 measurements into one entry (a tune's periodic write), which must not
//!   rewrite the database.
//!
//! Run: `cargo bench -p kerntune-core --bench db` (building the database takes a few seconds).

use criterion::{criterion_group, criterion_main, Criterion};
use kerntune_core::fake::example;
use kerntune_core::store::db::{Entry, EntryId, Environment, Measurement, Winner};
use kerntune_core::*;
use std::hint::black_box;
use std::time::Instant;

const ENTRIES: usize = 100_000;

fn measurement(bx: i64, t: f64) -> Measurement {
    let stats = kerntune_core::Stats::from_samples(&[t, t * 1.01, t * 0.99, t, t * 1.02], false);
    Measurement::timed(Config::new([("bx", bx), ("vec", 4)]), stats, 1_763_683_200)
}

fn entry(i: usize) -> Entry {
    let id = EntryId {
        kernel: format!("kernel{}", i % 97),
        kernel_hash: format!("{:016x}", i * 7919),
        target: "cuda-sm_90-nvidia-h100".into(),
        toolchain: "nvrtc 13.0".into(),
        problem: format!("n={i}"),
    };
    let mut e = Entry::new(
        id,
        "NVIDIA H100 80GB HBM3".into(),
        Environment { kerntune: "0.1.0".into(), host: "bench".into(), timing: "events".into(), details: Default::default() },
    );
    for (k, bx) in [32, 64, 128, 256, 512, 1024].into_iter().enumerate() {
        let m = measurement(bx, 1e-3 * (1.0 + k as f64 / 10.0));
        e.measurements.insert(m.config.key(), m);
    }
    let best = e.measurements.values().next().unwrap().clone();
    e.winner = Some(Winner {
        config: best.config.key(),
        stats: best.stats().unwrap().clone(),
        space: "s".into(),
        verify: "v".into(),
        tie_band: vec![best.config.key()],
        at: 1,
        default: None,
        partial: false,
    });
    e
}

fn db_at_scale(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::at(dir.path().join("db.sqlite"));
    let t = Instant::now();
    db.update(|f| {
        for i in 0..ENTRIES {
            let e = entry(i);
            f.entries.insert(e.id.key(), e);
        }
    })
    .unwrap();
    // The example kernel tuned once into the same database: the entry a hit finds.
    let (tuner, job) = example();
    let opts = TuneOptions { db: Some(db.clone()), ..Default::default() };
    tuner.tune(&job, &opts).unwrap();
    let size = std::fs::metadata(db.path()).unwrap().len() + std::fs::metadata(format!("{}-wal", db.path().display())).map(|m| m.len()).unwrap_or(0);
    println!("built {ENTRIES} entries in {:.1} s: {:.1} MB", t.elapsed().as_secs_f64(), size as f64 / 1e6);
    let id = entry(ENTRIES / 2).id;
    let mut g = c.benchmark_group(format!("db with {ENTRIES} entries"));
    g.sample_size(20);
    g.bench_function("hit: Database::entry", |b| b.iter(|| db.entry(black_box(&id)).unwrap().unwrap()));
    g.bench_function("hit: Tuner::tune finds the stored winner", |b| {
        b.iter(|| {
            let r = tuner.tune(black_box(&job), &opts).unwrap();
            assert!(r.db_hit);
        })
    });
    let mut n = 0i64;
    g.bench_function("flush: record 8 measurements into one entry", |b| {
        b.iter(|| {
            n += 1;
            // A different entry each time, so that entries stay their usual size.
            let id = entry((n as usize * 7_919) % ENTRIES).id;
            db.update_entry(&id, |e| {
                let e = e.as_mut().unwrap();
                for k in 0..8 {
                    let m = measurement(10_000 + n * 8 + k, 2e-3);
                    e.record(m.config.key(), m);
                }
            })
            .unwrap()
        })
    });
    g.finish();
}

criterion_group!(benches, db_at_scale);
criterion_main!(benches);
