//! `kerntune report` at scale: one entry of 100,000 measurements (a five-parameter space,
//! failures, compile times, two runs' traces) read from a SQLite database, analysed and rendered
//! into one HTML page. Goals: under 2 s, a page under 5 MB.
//!
//! Run: `cargo bench --bench report`. It prints the page's size and each stage's time, then
//! criterion's estimate of read + analyse + render.

use criterion::{criterion_group, criterion_main, Criterion};
use kerntune::analysis::{EntryView, Hints};
use kerntune::html::{page, Source};
use kerntune::store::db::Database;
use kerntune::testing::synthetic_entry;
use std::hint::black_box;
use std::time::Instant;

const CONFIGS: usize = 100_000;

fn report(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::at(dir.path().join("db.sqlite"));
    let entry = synthetic_entry("NVIDIA H100 80GB HBM3", "cuda-sm_90-h100", "n=16777216", CONFIGS, 1.0, 1);
    let id = entry.id.clone();
    db.update_entry(&id, |e| *e = Some(entry)).unwrap();
    let source = Source { database: db.path().display().to_string(), selection: "kernel triad".into() };
    let t = Instant::now();
    let e = db.entry(&id).unwrap().unwrap();
    let read = t.elapsed();
    let t = Instant::now();
    let view = EntryView::new(&e, &Hints::default());
    let analysed = t.elapsed();
    let t = Instant::now();
    let html = page(std::slice::from_ref(&view), &source).unwrap();
    let rendered = t.elapsed();
    println!(
        "{} measurements ({} measured, {} failed): read {:.0} ms, analysed {:.0} ms, rendered {:.0} ms; page {:.2} MB",
        e.measurements.len(),
        view.points.len(),
        view.failures.values().sum::<usize>(),
        read.as_secs_f64() * 1e3,
        analysed.as_secs_f64() * 1e3,
        rendered.as_secs_f64() * 1e3,
        html.len() as f64 / 1e6
    );
    let mut g = c.benchmark_group("report");
    g.sample_size(10);
    g.bench_function("read, analyse and render 100k measurements", |b| {
        b.iter(|| {
            let e = db.entry(&id).unwrap().unwrap();
            let v = EntryView::new(&e, &Hints::default());
            black_box(page(std::slice::from_ref(&v), &source).unwrap().len())
        })
    });
    g.finish();
}

criterion_group!(benches, report);
criterion_main!(benches);
