//! Few-shot tuning from other devices' measurements, on the fake backend: priors from the
//! database and from files, the line that says what was learned from, and every kind of bad
//! prior reported and left out while the tune goes on.

use kerntune_core::fake::FakeBackend;
use kerntune_core::store::db::Database;
use kerntune_core::*;

fn job() -> TuneJob {
    kerntune_core::fake::xy_job(&[32, 64, 128, 256, 512, 1024], &[1, 2, 4, 8], 4096)
}

/// Device A is fastest at bx=128, vec=8; device B (a sibling) at bx=256, vec=8.
fn time_on(best_bx: f64) -> impl Fn(&Config) -> f64 + Send + Sync + 'static {
    move |c: &Config| {
        let (bx, vec) = (c.get_i64("bx").unwrap() as f64, c.get_i64("vec").unwrap() as f64);
        1e-3 * (1.0 + 0.3 * (bx / best_bx).log2().abs()) * (1.0 + 0.2 * (8.0 / vec).log2())
    }
}

fn device(name: &str, best_bx: f64) -> FakeBackend {
    FakeBackend::new(Limits::preset("h100").unwrap().1, time_on(best_bx)).with_target(Target::new("fake", Vendor::Nvidia, name, name))
}

fn opts(db: &Database) -> TuneOptions {
    TuneOptions { db: Some(db.clone()), compile_threads: Some(2), strategy: "auto".into(), ..Default::default() }
}

#[test]
fn a_new_device_learns_from_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::at(dir.path().join("db.sqlite"));
    // Device A tuned whole (no priors yet: exhaustive).
    let a = Tuner::new(device("gpu_a", 128.0)).tune(&job(), &opts(&db)).unwrap();
    assert_eq!((a.strategy.as_str(), a.prior.is_none()), ("exhaustive", true));
    // Device B, never seen, with 6 evaluations (the default config, the reference, is one of
    // them): the transfer search, and the line says so.
    let b = Tuner::new(device("gpu_b", 256.0)).tune(&job(), &TuneOptions { budget: Budget::parse("6").unwrap(), ..opts(&db) }).unwrap();
    assert_eq!(b.strategy, "transfer");
    let p = b.prior.as_ref().expect("priors from the database");
    assert_eq!(p.line, "prior: 1 target, 24 measurements (db)");
    assert!(p.seconds < 5.0);
    assert_eq!((b.winner.get_i64("bx"), b.winner.get_i64("vec")), (Some(256), Some(8)), "found in 6 evaluations: {}", b.winner);
    // Each result says who proposed it, and the database keeps that with what the run learned
    // from, for the report.
    let tags: Vec<Option<&str>> = b.results.iter().map(|r| r.proposed_by.as_deref()).collect();
    assert_eq!(tags.iter().filter(|t| t.is_some()).count(), 5, "all but the reference config: {tags:?}");
    assert!(tags.iter().flatten().filter(|t| **t == "sources").count() >= 3, "the first picks are the sources': {tags:?}");
    let entry = db.entry(&b.entry).unwrap().expect("stored");
    for r in &b.results {
        let stored = entry.measurements[&r.config.key()].trace.as_ref().expect("a trace");
        assert_eq!(stored.by, r.proposed_by, "{}", r.config);
    }
    let note = &entry.runs[..];
    assert_eq!(note.len(), 1, "{note:?}");
    assert_eq!((note[0].strategy.as_str(), note[0].prior.as_deref()), ("transfer", Some(p.line.as_str())));
    let search = note[0].search.as_deref().unwrap_or_default();
    assert!(search.starts_with("transfer: ") && b.notes.iter().any(|n| n == search), "{search}");
    let view = kerntune_core::analysis::EntryView::new(&entry, &Default::default());
    let run = &view.runs[0];
    assert_eq!(run.note.as_ref(), Some(&note[0]));
    let (first, last) = (&run.proposed[0], run.proposed.last().unwrap());
    assert!(first.from_priors && first.by.as_deref() == Some("sources"), "{:?}", run.proposed);
    assert_eq!((last.by.as_ref(), last.evaluations), (None, 1), "the reference config, proposed by no search: {:?}", run.proposed);
    assert_eq!(run.proposed.iter().map(|p| p.evaluations).sum::<usize>(), 6);
    let b_winner = b.winner.key();
    let found = |p: &&kerntune_core::analysis::Proposed| p.best.as_ref().is_some_and(|b| b.2 == b_winner);
    assert_eq!(run.proposed.iter().filter(found).count(), 1, "one proposer found the winner: {:?}", run.proposed);
    // --no-prior: the default strategy is exhaustive again.
    let c = Tuner::new(device("gpu_c", 256.0)).tune(&job(), &TuneOptions { prior: PriorSetting::Off, ..opts(&db) }).unwrap();
    assert_eq!((c.strategy.as_str(), c.prior.is_none()), ("exhaustive", true));
    // The transfer search asked for without priors says what runs instead.
    let transfer = |prior, with_db: bool| TuneOptions {
        strategy: "transfer".into(),
        prior,
        db: with_db.then(|| db.clone()),
        budget: Budget::parse("4").unwrap(),
        ..opts(&db)
    };
    for (o, why) in [(transfer(PriorSetting::Off, true), "--no-prior"), (transfer(PriorSetting::Database, false), "no database to learn from (--no-db)")] {
        let r = Tuner::new(device("gpu_d", 256.0)).tune(&job(), &o).unwrap();
        let note = format!("{why}: the transfer search is its fallback, the hybrid search");
        assert!(r.notes.contains(&note), "{:?}", r.notes);
    }
}

/// A new problem size on a device already tuned at others learns from the nearest of them
/// (this target's own measurements), with a budget; without one every config is measured and
/// the other sizes only order the compiles.
#[test]
fn a_new_problem_size_learns_from_the_sizes_tuned_on_this_target() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::at(dir.path().join("db.sqlite"));
    let sized = |n: i64| kerntune_core::fake::xy_job(&[32, 64, 128, 256, 512, 1024], &[1, 2, 4, 8], n);
    // The best block size grows with the problem on this device.
    let first = Tuner::new(device("gpu_a", 128.0)).tune(&sized(4096), &opts(&db)).unwrap();
    assert_eq!((first.strategy.as_str(), first.prior.is_none()), ("exhaustive", true));
    // A second size with no budget: exhaustive still, and a note says what the other size is
    // used for and how to tune from it.
    let second = Tuner::new(device("gpu_a", 512.0)).tune(&sized(1 << 20), &opts(&db)).unwrap();
    assert_eq!(second.strategy, "exhaustive");
    assert_eq!(second.results.len(), 24, "every config measured");
    let p = second.prior.as_ref().expect("the other size is a prior");
    assert_eq!(p.line, "prior: 1 other problem on this target, 24 measurements (db)");
    assert_eq!((p.targets, p.problems_here), (0, 1));
    assert!(
        second.notes.iter().any(|n| n.starts_with("with no budget every config is measured: this target's other problems only order the compiles")),
        "{:?}",
        second.notes
    );
    // Five more sizes, then a new one between them with a budget: the transfer search, from
    // the six nearest (n = 2^14 to 2^20; not 2^12, five doublings away), found in 6
    // evaluations.
    for (n, best) in [(1 << 14, 256.0), (1 << 15, 256.0), (1 << 16, 256.0), (1 << 18, 512.0), (1 << 19, 512.0)] {
        Tuner::new(device("gpu_a", best)).tune(&sized(n), &opts(&db)).unwrap();
    }
    let o = TuneOptions { budget: Budget::parse("6").unwrap(), ..opts(&db) };
    let new = Tuner::new(device("gpu_a", 512.0)).tune(&sized(1 << 17), &o).unwrap();
    assert_eq!(new.strategy, "transfer");
    let p = new.prior.as_ref().expect("priors from this target's other sizes");
    assert_eq!(p.line, "prior: 6 other problems on this target, 144 measurements (db)");
    let entry = db.entry(&new.entry).unwrap().expect("stored");
    let learned = entry.runs[0].prior.as_deref().unwrap_or_default();
    assert!(learned.starts_with("prior: 6 other problems"), "{learned}");
    assert!(new.notes.iter().any(|n| n.contains("at n=")), "a source is named by its problem: {:?}", new.notes);
    assert_eq!((new.winner.get_i64("bx"), new.winner.get_i64("vec")), (Some(512), Some(8)), "found in 6 evaluations: {}", new.winner);
    // Another device's results at this very size join them; the line counts both.
    Tuner::new(device("gpu_b", 512.0)).tune(&sized(1 << 17), &opts(&db)).unwrap();
    let again = Tuner::new(device("gpu_a", 512.0)).tune(&sized(1 << 17), &TuneOptions { force: true, ..o.clone() }).unwrap();
    assert_eq!(again.prior.as_ref().map(|p| p.line.as_str()), Some("prior: 1 target, 6 other problems on this target, 168 measurements (db)"));
    // --no-prior: none of it; the budget gets the search without priors (not the first six
    // configs in the space's order).
    let off = Tuner::new(device("gpu_a", 512.0)).tune(&sized(1 << 21), &TuneOptions { prior: PriorSetting::Off, ..o }).unwrap();
    assert_eq!((off.prior.is_none(), off.strategy.as_str()), (true, "hybrid"));
}

/// A tune stopped part-way keeps, with what it measured, what it learned from and who proposed
/// each config: the report of an interrupted tune says as much as a finished one's.
#[test]
fn a_stopped_tune_keeps_what_it_learned_from() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let db = Database::at(dir.path().join("db.sqlite"));
    Tuner::new(device("gpu_a", 128.0)).tune(&job(), &opts(&db)).unwrap();
    let cancel = Arc::new(AtomicBool::new(false));
    let (c, seen) = (cancel.clone(), Arc::new(AtomicUsize::new(0)));
    let observer: kerntune_core::run::Observer = Arc::new(move |e: &Event<'_>| {
        if matches!(e, Event::Result { .. }) && seen.fetch_add(1, Ordering::SeqCst) + 1 == 4 {
            c.store(true, Ordering::SeqCst);
        }
    });
    let o = TuneOptions { budget: Budget::parse("12").unwrap(), cancel: Some(cancel), observer: Some(observer), ..opts(&db) };
    let b = device("gpu_b", 256.0);
    let e = Tuner::new(b).tune(&job(), &o).unwrap_err();
    assert!(matches!(e, Error::Interrupted { saved: true, .. }), "{e}");
    let entry = db.load().unwrap().entries.into_values().find(|e| e.target_name == "gpu_b").expect("what it measured is kept");
    assert!(entry.winner.is_none());
    let note = entry.runs.first().unwrap_or_else(|| panic!("no run note: {entry:?}"));
    assert_eq!((note.strategy.as_str(), note.prior.as_deref()), ("transfer", Some("prior: 1 target, 24 measurements (db)")));
    assert!(note.search.as_deref().is_some_and(|s| s.starts_with("transfer: ")), "{note:?}");
    let tagged = entry.measurements.values().filter(|m| m.trace.as_ref().is_some_and(|t| t.by.as_deref() == Some("sources"))).count();
    assert!(tagged >= 1, "{entry:?}");
}

#[test]
fn priors_from_files_and_every_kind_of_bad_prior() {
    let dir = tempfile::tempdir().unwrap();
    // A Kernel Tuner cache from another GPU: good entries, a failure string, NaN (as Python
    // writes it), a negative time, and a config outside this space (bx=2048).
    let kt = dir.path().join("other_gpu.json");
    let mut cache = String::new();
    for bx in [32, 64, 128, 256, 512, 1024, 2048] {
        for vec in [1, 2, 4, 8] {
            let t = 1.0 + ((bx as f64) / 256.0).log2().abs() * 0.3 + (8.0 / vec as f64).log2() * 0.2;
            let time = match (bx, vec) {
                (32, 1) => "\"RuntimeFailedConfig\"".to_string(),
                (64, 1) => "NaN".to_string(),
                (64, 2) => "-1.0".to_string(),
                _ => format!("{t}"),
            };
            cache.push_str(&format!("\"{bx},{vec}\": {{\"bx\": {bx}, \"vec\": {vec}, \"time\": {time}}},"));
        }
    }
    let text = format!("{{\"device_name\": \"Other GPU\", \"tune_params_keys\": [\"bx\", \"vec\"], \"tune_params\": {{\"bx\": [32, 64, 128, 256, 512, 1024, 2048], \"vec\": [1, 2, 4, 8]}}, \"cache\": {{{}}}}}", cache.trim_end_matches(','));
    std::fs::write(&kt, text).unwrap();
    // A cache of another parameter space.
    let other = dir.path().join("other_space.json");
    std::fs::write(
        &other,
        r#"{"tune_params_keys": ["block_size_x"], "tune_params": {"block_size_x": [32]}, "cache": {"32": {"block_size_x": 32, "time": 1.0}}}"#,
    )
    .unwrap();
    // A file that is not a prior at all.
    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, "[1, 2, 3]").unwrap();
    // Text named like a database (a copy that went wrong): named as none of the three kinds read.
    let text_db = dir.path().join("fleet.sqlite");
    std::fs::write(&text_db, "version https://git-lfs.github.com/spec/v1").unwrap();
    // A T4 file whose `results` is not a list.
    let not_list = dir.path().join("not_list.json");
    std::fs::write(&not_list, r#"{"results": "none yet"}"#).unwrap();
    let db = Database::at(dir.path().join("db.sqlite"));
    let o = TuneOptions { prior: PriorSetting::Files(vec![kt, other, junk, text_db, not_list]), budget: Budget::parse("5").unwrap(), ..opts(&db) };
    let r = Tuner::new(device("gpu_new", 256.0)).tune(&job(), &o).unwrap();
    assert_eq!(r.strategy, "transfer");
    let p = r.prior.as_ref().unwrap();
    assert_eq!((p.targets, p.measurements), (1, 21));
    assert_eq!(p.skipped["failed"], 1);
    assert_eq!(p.skipped["not times (NaN, zero or negative)"], 2);
    assert_eq!(p.skipped["not candidates here (outside the space, or pruned on this device)"], 4, "bx=2048 is not in this space");
    assert!(
        p.refused.iter().any(|x| x.contains("another parameter space: it lacks `bx`, `vec`; it has `block_size_x` this space does not")),
        "{:?}",
        p.refused
    );
    assert!(p.notes.iter().any(|x| x.contains("junk.json") && x.contains("nor a kerntune database") && x.contains("tuning without it")), "{:?}", p.notes);
    assert!(
        p.notes
            .iter()
            .any(|x| x.contains("fleet.sqlite: not a Kernel Tuner cache, T4 file or kerntune database (no SQLite header)") && x.contains("tuning without it")),
        "{:?}",
        p.notes
    );
    assert!(p.notes.iter().any(|x| x.contains("not_list.json: `results` is") && x.contains("not a list of results (a T4 file)")), "{:?}", p.notes);
    assert!(p.notes.iter().any(|x| x.contains("bx = 2048")), "{:?}", p.notes);
    assert!(p.line.starts_with("prior: 1 target, 21 measurements"), "{}", p.line);
    assert_eq!(r.evaluated, 5);
}

#[test]
fn another_source_hash_is_used_only_when_named() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::at(dir.path().join("db.sqlite"));
    let mut old = job();
    old.source.code = "// an older version of the kernel".into();
    Tuner::new(device("gpu_a", 256.0)).tune(&old, &opts(&db)).unwrap();
    // From the database: not used, and the note says how to use it.
    let r = Tuner::new(device("gpu_b", 256.0)).tune(&job(), &TuneOptions { budget: Budget::parse("4").unwrap(), ..opts(&db) }).unwrap();
    let p = r.prior.as_ref().expect("a report even when nothing is usable");
    assert_eq!(p.targets, 0);
    assert!(p.notes[0].contains("1 entry of kernel `k` on other targets measured another source") && p.notes[0].contains("--prior"), "{:?}", p.notes);
    assert_eq!(r.strategy, "hybrid", "a budget under the space, no usable prior: the search without priors");
    // Named with --prior: used, with a note.
    let named = TuneOptions { prior: PriorSetting::Files(vec![db.path().to_path_buf()]), budget: Budget::parse("4").unwrap(), db: None, ..opts(&db) };
    let r = Tuner::new(device("gpu_c", 256.0)).tune(&job(), &named).unwrap();
    let p = r.prior.as_ref().unwrap();
    assert_eq!(p.targets, 2, "gpu_a (the older source) and gpu_b");
    assert!(p.notes.iter().any(|n| n.contains("another source hash") && n.contains("used because --prior names it")), "{:?}", p.notes);
    assert_eq!(r.strategy, "transfer");
}

/// A database of the previous layout (no `time` column) is upgraded in place on first use,
/// its measurements kept, and serves priors.
#[test]
fn a_layout_2_database_is_upgraded_and_serves_priors() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::at(dir.path().join("db.sqlite"));
    let a = Tuner::new(device("gpu_a", 128.0)).tune(&job(), &opts(&db)).unwrap();
    {
        let c = rusqlite::Connection::open(db.path()).unwrap();
        // Layout 2 had no `time` column, nor the `compile_s` one, nor their index.
        c.execute_batch(
            "DROP INDEX measurements_prior_times; ALTER TABLE measurements DROP COLUMN compile_s;
             ALTER TABLE measurements DROP COLUMN time; UPDATE meta SET value = '2' WHERE name = 'layout';",
        )
        .unwrap();
    }
    let rows = db.times_elsewhere("k", &a.entry.problem, "gpu_b", false).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].2.len(), 24);
    assert!(rows[0].2.iter().all(|(_, t, _)| t.is_some_and(|t| t > 0.0)));
    let c = rusqlite::Connection::open(db.path()).unwrap();
    let layout: String = c.query_row("SELECT value FROM meta WHERE name = 'layout'", [], |r| r.get(0)).unwrap();
    assert_eq!(layout, "3");
    let index: i64 = c.query_row("SELECT count(*) FROM sqlite_master WHERE name = 'measurements_prior_times'", [], |r| r.get(0)).unwrap();
    assert_eq!(index, 1, "the upgrade indexes the new columns");
    assert_eq!(db.entry(&a.entry).unwrap().unwrap().measurements.len(), 24, "nothing lost");
}

/// The database lookup reads the entries of this kernel and problem on other targets only: not
/// the kernel's other problems (however their keys end), nor this target's own entry, and a
/// problem written with non-ASCII characters is matched whole.
#[test]
fn only_this_problem_on_other_targets_is_read() {
    use kerntune_core::store::db::{Entry, EntryId, Environment, Measurement};
    let dir = tempfile::tempdir().unwrap();
    let db = Database::at(dir.path().join("db.sqlite"));
    let put = |target: &str, problem: &str, t: f64| {
        db.update(|f| {
            let id = EntryId { kernel: "k".into(), kernel_hash: "h".into(), target: target.into(), toolchain: "t".into(), problem: problem.into() };
            let mut e = Entry::new(id.clone(), target.to_uppercase(), Environment::default());
            let m = Measurement::timed(Config::new([("bx".to_string(), Value::Int(64))]), Stats::from_samples(&[t, t], false), 1);
            e.measurements.insert(m.config.key(), m);
            f.entries.insert(id.key(), e);
        })
        .unwrap();
    };
    for (target, problem, t) in [
        ("gpu_a", "n=1", 1.0),
        ("gpu_b", "n=1", 2.0),
        ("gpu_new", "n=1", 3.0),
        ("gpu_a", "n=11", 4.0),
        ("gpu_a", "m=2,n=1", 5.0),
        ("gpu_b", "größe=1", 6.0),
        ("gpu_a", "xgröße=1", 7.0),
    ] {
        put(target, problem, t);
    }
    let found = |problem: &str| {
        let mut v: Vec<(String, f64)> = db
            .times_elsewhere("k", problem, "gpu_new", false)
            .unwrap()
            .into_iter()
            .map(|(id, _, t)| (id.target, t.iter().next().unwrap().1.unwrap()))
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    };
    let check = || {
        assert_eq!(found("n=1"), vec![("gpu_a".to_string(), 1.0), ("gpu_b".to_string(), 2.0)]);
        assert_eq!(found("größe=1"), vec![("gpu_b".to_string(), 6.0)]);
        assert_eq!(found("n=2"), vec![]);
    };
    let indexes = || index_names(&db);
    assert_eq!(indexes(), ["entries_problem", "measurements_prior_times"], "the indexes the priors read uses");
    check();
    // A database made before those indexes existed is read the same (reads add none).
    rusqlite::Connection::open(db.path()).unwrap().execute_batch("DROP INDEX entries_problem; DROP INDEX measurements_prior_times;").unwrap();
    check();
    assert!(indexes().is_empty(), "a read writes nothing");
    put("gpu_c", "n=3", 8.0);
    assert_eq!(indexes(), ["entries_problem", "measurements_prior_times"], "the first write adds them");
    check();
}

/// Compile times follow the code, not the device: the compile seconds another device's tune
/// recorded order this tune's compiles longest first from the very first one, when the
/// strategy queues its budget ahead (exhaustive here). Without the prior the first compiles go
/// in proposal order, and the report says which order was used.
#[test]
fn another_devices_compile_times_order_the_first_compiles() {
    use std::sync::{Arc, Mutex};
    use std::time::Duration;
    let dir = tempfile::tempdir().unwrap();
    let db = Database::at(dir.path().join("db.sqlite"));
    // Compiles take longer with a wider vector: 1, 4, 16, 250 ms for vec 1, 2, 4, 8. The
    // measured compile seconds include starting a compiler process, which a loaded machine
    // stretches by tens of milliseconds: the vec=8 compiles stand well clear of the rest.
    let delay = |c: &Config| {
        Duration::from_millis(match c.get_i64("vec").unwrap() as u64 {
            8 => 250,
            v => v * v,
        })
    };
    let recorded = |name: &str, order: Arc<Mutex<Vec<i64>>>| {
        device(name, 128.0).with_compile_times(move |c| {
            order.lock().unwrap().push(c.get_i64("vec").unwrap());
            delay(c)
        })
    };
    let a_order = Arc::new(Mutex::new(Vec::new()));
    let single = TuneOptions { compile_threads: Some(1), strategy: "exhaustive".into(), ..opts(&db) };
    Tuner::new(recorded("gpu_a", a_order.clone())).tune(&job(), &single).unwrap();
    let times = db.times_elsewhere("k", &job_problem(), "gpu_b", true).unwrap();
    assert!(times[0].2.iter().all(|(_, _, c)| c.is_some_and(|c| c > 0.0)), "the database keeps each config's compile seconds");
    // Proposal order: the first compiles (after the default config, the reference) are not the
    // slow ones.
    let first = |o: &Arc<Mutex<Vec<i64>>>| o.lock().unwrap()[1..7].to_vec();
    assert_ne!(first(&a_order), vec![8; 6]);
    // With gpu_a's database named as a prior: every vec=8 config first.
    let b_order = Arc::new(Mutex::new(Vec::new()));
    let named = TuneOptions { prior: PriorSetting::Files(vec![db.path().to_path_buf()]), db: None, ..single.clone() };
    let b = Tuner::new(recorded("gpu_b", b_order.clone())).tune(&job(), &named).unwrap();
    assert_eq!(first(&b_order), vec![8; 6], "{:?}", b_order.lock().unwrap());
    assert_eq!(b.strategy, "exhaustive");
    assert!(
        b.notes.iter().any(|n| n.starts_with("compile order: longest first by the compile times the prior's devices recorded (24 of 24 candidates)")),
        "{:?}",
        b.notes
    );
    assert_eq!(b.prior.as_ref().unwrap().targets, 1);
}

/// The compile seconds are read from their own column, not from each measurement's record
/// (which the priors read would otherwise parse, several times slower): a writable open adds
/// the column to a database an older kerntune made and fills it from the records; a row a
/// writer that does not know the column inserts (an older kerntune) is read from its record;
/// and a database not yet upgraded (a read writes nothing) gives the same compile seconds.
#[test]
fn compile_seconds_come_from_their_column_whoever_wrote_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::at(dir.path().join("db.sqlite"));
    let slow = device("gpu_a", 128.0).with_compile_times(|c| std::time::Duration::from_millis(c.get_i64("vec").unwrap() as u64));
    let a = Tuner::new(slow).tune(&job(), &TuneOptions { strategy: "exhaustive".into(), ..opts(&db) }).unwrap();
    let problem = a.entry.problem.clone();
    let read = || -> Vec<(String, Option<f64>)> {
        let mut v: Vec<(String, Option<f64>)> =
            db.times_elsewhere("k", &problem, "gpu_b", true).unwrap()[0].2.iter().map(|(k, _, c)| (k.to_string(), c)).collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    };
    let sql = || rusqlite::Connection::open(db.path()).unwrap();
    // Every row's column holds its record's compile seconds (-1: none).
    let mismatched = || -> i64 {
        sql()
            .query_row("SELECT count(*) FROM measurements WHERE compile_s IS NOT coalesce(json_extract(record, '$.trace.compile_s'), -1)", [], |r| r.get(0))
            .unwrap()
    };
    let recorded = read();
    assert_eq!(recorded.len(), 24);
    assert!(recorded.iter().all(|(_, c)| c.is_some_and(|c| c > 0.0)), "{recorded:?}");
    assert_eq!(mismatched(), 0);
    // The read takes the column: a value set there (not in the record) is what it returns.
    let key = recorded[0].0.clone();
    sql().execute("UPDATE measurements SET compile_s = 123.0 WHERE config = ?1", [&key]).unwrap();
    assert_eq!(read()[0].1, Some(123.0));
    sql().execute("UPDATE measurements SET compile_s = json_extract(record, '$.trace.compile_s') WHERE config = ?1", [&key]).unwrap();
    // A measurement whose record has no compile seconds (-1 in the column) has none.
    let last = recorded[23].0.clone();
    sql().execute("UPDATE measurements SET record = json_remove(record, '$.trace.compile_s'), compile_s = -1 WHERE config = ?1", [&last]).unwrap();
    assert_eq!(read()[23].1, None);
    let mut recorded = recorded;
    recorded[23].1 = None;
    assert_eq!(mismatched(), 0);
    // A database as an older kerntune left it: no column, nor its index. A read (which writes
    // nothing) gives the same seconds, from the records.
    sql().execute_batch("DROP INDEX measurements_prior_times; ALTER TABLE measurements DROP COLUMN compile_s;").unwrap();
    assert_eq!(read(), recorded);
    let columns = || -> i64 { sql().query_row("SELECT count(*) FROM pragma_table_info('measurements') WHERE name = 'compile_s'", [], |r| r.get(0)).unwrap() };
    assert_eq!(columns(), 0, "a read writes nothing");
    // The first writable open adds and fills the column.
    db.update(|_| {}).unwrap();
    assert_eq!(columns(), 1);
    assert_eq!(mismatched(), 0);
    assert_eq!(read(), recorded);
    // A writer that does not know the column (an older kerntune: these four columns) leaves it
    // empty; the read takes that row from its record, and the others as before.
    let entry: String = sql().query_row("SELECT entry FROM measurements LIMIT 1", [], |r| r.get(0)).unwrap();
    sql()
        .execute(
            "INSERT OR REPLACE INTO measurements(entry, config, record, time) SELECT entry, config, json_set(record, '$.trace.compile_s', 7.5), time FROM measurements WHERE entry = ?1 AND config = ?2",
            [&entry, &key],
        )
        .unwrap();
    assert_eq!(mismatched(), 1, "the older writer's row has no compile_s in its column");
    let mut expected = recorded.clone();
    expected[0].1 = Some(7.5);
    assert_eq!(read(), expected);
    // An older kerntune opening the file for writing makes its own index again; the next
    // writable open of this version drops it (one index to keep up, not two).
    sql().execute_batch("CREATE INDEX measurements_priors ON measurements(entry, config, time);").unwrap();
    db.update(|_| {}).unwrap();
    assert_eq!(index_names(&db), ["entries_problem", "measurements_prior_times"]);
    assert_eq!(read(), expected);
}

/// The database's own indexes, by name.
fn index_names(db: &Database) -> Vec<String> {
    let c = rusqlite::Connection::open(db.path()).unwrap();
    let mut st = c.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%' ORDER BY name").unwrap();
    st.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
}

fn job_problem() -> String {
    let r = Tuner::new(device("gpu_x", 128.0))
        .tune(&job(), &TuneOptions { budget: Budget::parse("1").unwrap(), db: None, prior: PriorSetting::Off, ..Default::default() })
        .unwrap();
    r.entry.problem
}

/// A source that ranks this device backwards, and a batch asked at once (8 compile threads
/// ask for 12 configs before any outcome is in): once the first picks and the yardstick are
/// told, the source's picks still in flight are withdrawn unmeasured, the budget still counts
/// the configs measured, and the report says how many were withdrawn.
#[test]
fn picks_in_flight_that_the_outcomes_rank_lower_are_withdrawn() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::at(dir.path().join("db.sqlite"));
    let here = time_on(1024.0);
    let backwards = FakeBackend::new(Limits::preset("h100").unwrap().1, move |c: &Config| 1e-6 / here(c)).with_target(Target::new(
        "fake",
        Vendor::Nvidia,
        "gpu_a",
        "gpu_a",
    ));
    Tuner::new(backwards).tune(&job(), &opts(&db)).unwrap();
    let o = TuneOptions { budget: Budget::parse("12").unwrap(), compile_threads: Some(8), ..opts(&db) };
    let r = Tuner::new(device("gpu_b", 1024.0)).tune(&job(), &o).unwrap();
    assert_eq!(r.strategy, "transfer");
    assert_eq!((r.evaluated, r.results.len()), (12, 12), "withdrawn configs are not counted");
    let note = r.notes.iter().find(|n| n.starts_with("transfer:") && n.contains(" proposals from ")).expect("the transfer search's note");
    let withdrawn: usize = note
        .split("; ")
        .find_map(|part| part.strip_suffix(" of the sources' picks compiled and withdrawn before being measured, the outcomes told since ranking them lower"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no withdrawal in {note}"));
    assert!(withdrawn > 0 && r.compiled >= 12 + withdrawn, "{withdrawn} withdrawn, {} compiled: {note}", r.compiled);
}

/// A Kernel Tuner cache of this space from another GPU, each config recorded with `extra`
/// fields (its compile and benchmark milliseconds, say).
fn kt_cache(path: &std::path::Path, extra: &str) {
    let mut cache = String::new();
    for bx in [32, 64, 128, 256, 512, 1024] {
        for vec in [1, 2, 4, 8] {
            let t = 1.0 + ((bx as f64) / 256.0).log2().abs() * 0.3 + (8.0 / vec as f64).log2() * 0.2;
            cache.push_str(&format!("\"{bx},{vec}\": {{\"bx\": {bx}, \"vec\": {vec}, \"time\": {t}{extra}}},"));
        }
    }
    let text = format!(
        "{{\"device_name\": \"Other GPU\", \"tune_params_keys\": [\"bx\", \"vec\"], \"tune_params\": {{\"bx\": [32, 64, 128, 256, 512, 1024], \"vec\": [1, 2, 4, 8]}}, \"cache\": {{{}}}}}",
        cache.trim_end_matches(',')
    );
    std::fs::write(path, text).unwrap();
}

/// A T4 file of this space from another GPU, written by `tuner`, each config 10 ms to compile
/// and 5 s to evaluate.
fn t4_file(path: &std::path::Path, tuner: &str) {
    let mut results = Vec::new();
    for bx in [32, 64, 128, 256, 512, 1024] {
        for vec in [1, 2, 4, 8] {
            let t = 1.0 + ((bx as f64) / 256.0).log2().abs() * 0.3 + (8.0 / vec as f64).log2() * 0.2;
            results.push(format!(
                r#"{{"configuration": {{"bx": {bx}, "vec": {vec}}}, "times": {{"compilation": 10.0, "benchmark": 4980.0, "validation": 20.0}}, "invalidity": "correct", "measurements": [{{"name": "time", "value": {t}, "unit": "ms"}}]}}"#
            ));
        }
    }
    let text = format!(r#"{{"metadata": {{"tuner": "{tuner}", "hardware": {{"name": "Other GPU"}}}}, "results": [{}]}}"#, results.join(","));
    std::fs::write(path, text).unwrap();
}

/// Sources whose recorded seconds say measuring bounds the tune (10 ms to compile a config,
/// 5 s to evaluate it, in a T4 file kerntune wrote): until this device has timed an evaluation,
/// the tune keeps 3 proposals in flight, not one and a half per compile thread, so fewer are
/// chosen blind; the note says so. The same seconds in a Kernel Tuner cache (whose evaluation
/// seconds are not on kerntune's scale), or in a T4 file another tool wrote, are not used:
/// every compile thread starts at once, as before.
#[test]
fn sources_that_say_measuring_bounds_the_tune_keep_the_first_flight_small() {
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let (timed, kt, other) = (dir.path().join("timed.json"), dir.path().join("kt.json"), dir.path().join("other.json"));
    t4_file(&timed, "kerntune 0.1.0");
    kt_cache(&kt, ", \"compile_time\": 10.0, \"benchmark_time\": 4990.0, \"verification_time\": 10.0");
    t4_file(&other, "kernel_tuner 1.5.0");
    let compile = Duration::from_millis(300);
    // How many compiles started before the first one could have finished.
    let first_round = |prior: &std::path::Path| -> (usize, TuneReport) {
        let starts = Arc::new(Mutex::new(Vec::<Instant>::new()));
        let s = starts.clone();
        let dev = device("gpu_new", 256.0).with_compile_times(move |_| {
            s.lock().unwrap().push(Instant::now());
            compile
        });
        let o = TuneOptions {
            prior: PriorSetting::Files(vec![prior.to_path_buf()]),
            compile_threads: Some(4),
            budget: Budget::parse("8").unwrap(),
            db: None,
            strategy: "auto".into(),
            ..Default::default()
        };
        let r = Tuner::new(dev).tune(&job(), &o).unwrap();
        let starts = starts.lock().unwrap();
        (starts.iter().filter(|&&t| t < starts[0] + compile).count(), r)
    };
    let (early, r) = first_round(&timed);
    assert_eq!(r.strategy, "transfer");
    assert!(early <= 3, "{early} compiles started in the first round: {:?}", r.notes);
    let note = "transfer: the sources spent 0.010 s compiling and 5.000 s evaluating a config, so 3 proposals are kept in flight until this device \
                has timed an evaluation (not 6): fewer are chosen before any outcome is in";
    assert!(r.notes.iter().any(|n| n == note), "{:?}", r.notes);
    assert_eq!(r.evaluated, 8);
    for file in [kt, other] {
        let (early, r) = first_round(&file);
        assert_eq!(r.strategy, "transfer");
        assert_eq!(early, 4, "without the sources' seconds, every compile thread starts at once");
        assert!(!r.notes.iter().any(|n| n.contains("kept in flight until")), "{:?}", r.notes);
    }
}

/// A tune records the seconds it spent evaluating each config beside its compile seconds; the
/// priors read from a database take a sample of both per entry, and a compile read from the
/// compile cache is not recorded as a compile's seconds.
#[test]
fn a_database_keeps_what_each_config_cost_and_priors_read_a_sample_of_it() {
    use std::time::Duration;
    let dir = tempfile::tempdir().unwrap();
    let db = Database::at(dir.path().join("db.sqlite"));
    // Measuring bounds this device's tune: 1 ms a compile, 5 ms a timed launch.
    let dev = device("gpu_a", 128.0).with_compile_delay(Duration::from_millis(1)).with_launch_delay(Duration::from_millis(5));
    let few = TuneOptions { compile_threads: Some(1), strategy: "random".into(), budget: Budget::parse("6").unwrap(), ..opts(&db) };
    let r = Tuner::new(dev).tune(&job(), &few).unwrap();
    let measured: Vec<&ConfigResult> = r.results.iter().filter(|x| matches!(x.outcome, ResultOutcome::Measured { .. })).collect();
    assert_eq!(measured.len(), 6);
    assert!(measured.iter().all(|x| x.eval_seconds.is_some_and(|s| s >= 0.005)), "every measured config's evaluation is timed");
    let times = db.times_elsewhere("k", &job_problem(), "gpu_b", false).unwrap();
    let seconds = &times[0].2.seconds;
    assert_eq!(seconds.len(), 6, "all 6 configs: fewer than the sample's 64");
    assert!(seconds.iter().all(|(c, e)| c.is_some_and(|c| c >= 0.001) && e.is_some_and(|e| e >= 0.005)), "{seconds:?}");
    // As a prior: the tune on another device knows that measuring bounds it.
    let o = TuneOptions { budget: Budget::parse("4").unwrap(), compile_threads: Some(4), ..opts(&db) };
    let b = Tuner::new(device("gpu_b", 256.0)).tune(&job(), &o).unwrap();
    assert_eq!(b.strategy, "transfer");
    assert!(b.notes.iter().any(|n| n.starts_with("transfer: the sources spent ") && n.contains(" proposals are kept in flight until")), "{:?}", b.notes);
    // Where this device's compile cache holds the picks (a size tuned again, say), the first
    // flight is sized by that instead, and the note says so.
    let warm = Tuner::new(device("gpu_d", 256.0).with_compile_cache(|_| true)).tune(&job(), &o).unwrap();
    assert_eq!(warm.strategy, "transfer");
    assert!(!warm.notes.iter().any(|n| n.starts_with("transfer: the sources spent ")), "{:?}", warm.notes);
    assert!(warm.notes.iter().any(|n| n.starts_with("compile cache: ") && n.contains("so 2 were kept in flight (not 6)")), "{:?}", warm.notes);
    // A compile read from the compile cache is not a compile's seconds.
    let cached = TuneOptions { db: None, prior: PriorSetting::Off, ..few.clone() };
    let again = Tuner::new(device("gpu_c", 128.0).with_cached_compiles()).tune(&job(), &cached).unwrap();
    assert_eq!(again.compile_cache_hits, 6);
    assert!(again.results.iter().all(|x| x.compile_seconds.is_none() && x.eval_seconds.is_some()), "compile-cache hits have no compile seconds");
}

/// A tune's own report (what `kerntune tune --json` prints: a list of reports) is read as a
/// recorded space, as a prior and as a database entry to draw: every config with its time or
/// failure, and the compile and evaluation seconds the tune spent on it, which a time budget
/// replays; given as a database it is left untouched.
#[test]
fn a_tune_report_reads_as_a_recorded_space_a_prior_and_an_entry() {
    use kerntune_core::fake::Behavior;
    use kerntune_core::store::recorded::{PriorFile, RecordedSpace};
    let dir = tempfile::tempdir().unwrap();
    let wrong = |c: &Config| c.get_i64("bx") == Some(1024) && c.get_i64("vec") == Some(8);
    let dev = device("gpu_a", 128.0).with_compile_delay(std::time::Duration::from_millis(1)).with_behavior(move |c| {
        if wrong(c) {
            Behavior::WrongOutput
        } else {
            Behavior::Ok
        }
    });
    let o = TuneOptions { db: None, prior: PriorSetting::Off, compile_threads: Some(2), strategy: "exhaustive".into(), ..Default::default() };
    let r = Tuner::new(dev).tune(&job(), &o).unwrap();
    assert_eq!(r.results.len(), 24);
    // The wrong output's seconds too: the device verified it (a time budget replays them).
    assert!(r.results.iter().all(|x| x.eval_seconds.is_some_and(|s| s > 0.0)), "{:?}", r.results);
    let path = dir.path().join("report.json");
    std::fs::write(&path, serde_json::to_string_pretty(&vec![&r]).unwrap()).unwrap();
    let s = RecordedSpace::load(&path).unwrap();
    assert_eq!((s.len(), s.device.as_str()), (24, "gpu_a"));
    for x in &r.results {
        let text = x.config.params.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", ");
        let i = (0..s.len()).find(|&i| s.config_text(i) == text).unwrap_or_else(|| panic!("{text} is not in the space"));
        match &x.outcome {
            ResultOutcome::Measured { stats } => assert!((s.times[i].unwrap() - stats.mean * 1e3).abs() < 1e-9, "{text}"),
            _ => assert_eq!((s.times[i], s.failures[i].as_deref()), (None, Some("correctness")), "{text}"),
        }
        // Written as T4 milliseconds and read back as seconds.
        let near = |a: Option<f64>, b: Option<f64>| a.is_some() == b.is_some() && a.zip(b).is_none_or(|(a, b)| (a - b).abs() < 1e-12);
        assert!(near(s.compile_s[i], x.compile_seconds) && near(s.eval_s[i], x.eval_seconds), "{text}: {:?} {:?}", (s.compile_s[i], s.eval_s[i]), x);
    }
    assert!(s.compile_s.iter().all(|c| c.is_some_and(|c| c >= 0.001)));
    assert_eq!(s.note, None, "the whole space");
    assert_eq!(s.optimum(), r.winner_stats.mean * 1e3);
    // A prior with this device's evaluation seconds (a kerntune tune's own), for another device.
    let p = PriorFile::load(&path).unwrap();
    assert_eq!((p.records.len(), p.records.iter().filter(|r| r.1.is_err()).count()), (24, 1));
    assert_eq!(p.seconds().filter(|(c, e)| c.is_some() && e.is_some()).count(), 23, "every measured config's seconds");
    let db = Database::at(dir.path().join("db.sqlite"));
    let b = Tuner::new(device("gpu_b", 256.0))
        .tune(&job(), &TuneOptions { prior: PriorSetting::Files(vec![path.clone()]), budget: Budget::parse("5").unwrap(), ..opts(&db) })
        .unwrap();
    assert_eq!(b.strategy, "transfer");
    let line = &b.prior.as_ref().unwrap().line;
    assert!(line.starts_with("prior: 1 target, 23 measurements (") && line.ends_with("report.json); skipped 1 failed"), "{line}");
    // As the entry `kerntune report` draws: what the tune's database would hold.
    let (e, note) = kerntune_core::store::foreign::entry(&path).unwrap();
    assert!(note.is_none());
    assert_eq!((e.id.clone(), e.target_name.as_str(), e.measurements.len()), (r.entry.clone(), "gpu_a", 24));
    let w = e.winner.as_ref().unwrap();
    assert_eq!(w.config, r.winner.key());
    assert!((w.stats.mean - r.winner_stats.mean).abs() < 1e-15);
    assert_eq!(w.tie_band, r.tie_band.iter().map(Config::key).collect::<Vec<_>>());
    for x in &r.results {
        let m = &e.measurements[&x.config.key()];
        let t = m.trace.as_ref().unwrap();
        // (serde_json reads a float back to within its last bit.)
        let near = |a: Option<f64>, b: Option<f64>| a.is_some() == b.is_some() && a.zip(b).is_none_or(|(a, b)| (a - b).abs() <= 1e-15 * a.abs().max(1.0));
        assert_eq!((Some(t.seq), t.spans.len(), t.run, m.at), (x.seq, x.spans.len(), r.started, r.started));
        assert!(near(t.compile_s, x.compile_seconds) && near(t.eval_s, x.eval_seconds), "{:?} {x:?}", t);
        assert!(near(m.stats().map(|s| s.mean), x.stats().map(|s| s.mean)), "{m:?}");
    }
    assert_eq!(e.measurements.values().filter(|m| m.stats().is_none()).count(), 1, "the wrong output");
    // The run is the tune's: when it started.
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    assert!(r.started + 600 > now && r.started <= now, "{} {now}", r.started);
    assert_eq!((e.runs[0].strategy.as_str(), e.runs[0].run, w.at), ("exhaustive", r.started, r.started));
    // Given as a database it is said to be a report, and left as it was (no advice to clear it).
    let before = std::fs::read(&path).unwrap();
    match Database::at(&path).load() {
        Err(kerntune_core::store::db::DbError::Foreign { kind, .. }) => assert_eq!(kind, kerntune_core::store::foreign::REPORT),
        other => panic!("{:?}", other.map(|_| ())),
    }
    let t = Tuner::new(device("gpu_b", 256.0)).tune(&job(), &TuneOptions { db: Some(Database::at(&path)), ..opts(&db) });
    let why = t.err().unwrap().to_string();
    assert!(why.contains("is a kerntune tune report (`kerntune tune --json`), not a kerntune database; it was left untouched"), "{why}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
    // Several tunes' reports in one list: read one at a time, one message naming them; read
    // whole, a space, an entry and a prior each.
    let two = dir.path().join("two.json");
    std::fs::write(&two, serde_json::to_string(&vec![&r, &b]).unwrap()).unwrap();
    let e = RecordedSpace::load(&two).unwrap_err();
    assert!(e.starts_with(&format!("{}: a kerntune report of 2 tunes ([0] k ", two.display())) && e.contains("[1] k ") && e.contains("jq '.[0]'"), "{e}");
    let e = kerntune_core::store::foreign::entry(&two).err().unwrap();
    assert!(e.starts_with(&format!("{}: a kerntune report of 2 tunes", two.display())), "{e}");
    assert_eq!(RecordedSpace::load_all(&two).unwrap().len(), 2);
    assert_eq!(kerntune_core::store::foreign::entries(&two).unwrap().0.len(), 2);
    let c = Tuner::new(device("gpu_c", 256.0))
        .tune(&job(), &TuneOptions { prior: PriorSetting::Files(vec![two]), budget: Budget::parse("3").unwrap(), ..opts(&db) })
        .unwrap();
    let p = c.prior.as_ref().unwrap();
    assert!(p.targets == 2 && p.notes.is_empty(), "both tunes, of this kernel and problem on gpu_a and gpu_b: {p:?}");
    // A budgeted tune's report holds part of the space, and says so.
    let part = dir.path().join("part.json");
    let few = TuneOptions { db: None, prior: PriorSetting::Off, strategy: "random".into(), budget: Budget::parse("5").unwrap(), ..Default::default() };
    let five = Tuner::new(device("gpu_a", 128.0)).tune(&job(), &few).unwrap();
    std::fs::write(&part, serde_json::to_string(&vec![&five]).unwrap()).unwrap();
    let s = RecordedSpace::load(&part).unwrap();
    assert_eq!(s.len(), 5);
    let note = s.note.unwrap();
    assert!(note.ends_with("part.json: a tune's report of 5 of the 24 configs it had to choose from (a budget): scores are fractions of the fastest of those 5, not of the space's optimum"), "{note}");
    // A report whose config is not kerntune's [name, value] pairs says where.
    let bad = dir.path().join("bad.json");
    let mut v = serde_json::to_value(vec![&r]).unwrap();
    v[0]["results"][3]["config"]["params"][1] = serde_json::json!({"vec": 2});
    std::fs::write(&bad, v.to_string()).unwrap();
    let e = RecordedSpace::load(&bad).unwrap_err();
    assert!(e.contains("bad.json: results[3]: `config.params` holds {\"vec\":2}, not a [name, value] pair"), "{e}");
}
