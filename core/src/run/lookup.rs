//! Stage 2: database lookup. A stored winner for the same entry (kernel, source and options,
//! target, toolchain, problem key) that was chosen from the same space and passed the same
//! verification is the answer: nothing is compiled or benchmarked.

use crate::backend::Backend;
use crate::plan::roofline::{Peaks, Position};
use crate::run::error::Error;
use crate::run::report::{sorted, to_result, ConfigResult, TuneReport};
use crate::run::Context;
use crate::store::db::{Database, Entry, EntryId};
use std::collections::BTreeMap;
use std::time::Instant;

/// The stored entry, if the tune has a database and the entry exists.
pub(crate) fn stored_entry(db: Option<&Database>, id: &EntryId) -> Result<Option<Entry>, Error> {
    Ok(match db {
        Some(d) => d.entry(id)?,
        None => None,
    })
}

/// The report of a database hit, when `entry` holds a winner that is still valid for `ctx`.
/// A shard's winner (the best of its part of the space) answers only that shard's tune.
pub(crate) fn stored_winner<B: Backend>(backend: &B, ctx: &Context, entry: Option<&Entry>, opts: &crate::run::TuneOptions, t0: Instant) -> Option<TuneReport> {
    let shard = opts.shard;
    let entry = entry?;
    // An entry of shards (one, or some merged) answers only the tune of exactly that shard.
    if entry.origin.as_ref().is_some_and(|o| o.shard.is_some() && !o.is_of(shard)) {
        return None;
    }
    // Measurements made for another setup (see `stale`) choose no winner for this one; a
    // longer compile timeout alone leaves it (`Stale::keeps_the_winner`).
    if crate::run::stale::stale(entry, &crate::run::stale::setup(ctx, opts)).is_some_and(|s| !s.keeps_the_winner()) {
        return None;
    }
    let w = entry.winner.as_ref().filter(|w| w.space == ctx.space_hash && w.verify == ctx.verify_hash)?;
    let m = entry.measurements.get(&w.config)?;
    let prep = &ctx.prep;
    let results: Vec<ConfigResult> = entry.measurements.values().map(|m| to_result(m, true, prep.metrics(&m.config))).collect();
    let peaks = Peaks::of_device(backend.limits(), &backend.target().backend, &backend.target().name).map(|p| p.for_precision(ctx.job.half_precision()));
    let (flops, bytes) = prep.metrics(&m.config);
    let roofline = Some(Position::of(flops, bytes, w.stats.mean, peaks.as_ref()));
    let tie_band = w.tie_band.iter().filter_map(|k| entry.measurements.get(k).map(|m| m.config.clone())).collect();
    Some(TuneReport {
        target: backend.target().clone(),
        entry: ctx.id.clone(),
        db_hit: true,
        winner: m.config.clone(),
        winner_stats: w.stats.clone(),
        winner_metrics: prep.metrics(&m.config),
        tie_band,
        tie_break: None,
        evaluated: results.len(),
        from_db: results.len(),
        results: sorted(results),
        pruned_before: BTreeMap::new(),
        pruned_after: BTreeMap::new(),
        prune_examples: BTreeMap::new(),
        failures: BTreeMap::new(),
        cartesian: prep.space.cartesian_size(),
        valid: 0,
        sampled: false,
        candidates: 0,
        compiled: 0,
        compile_cache_hits: 0,
        compile_cache_refusals: 0,
        compile_seconds: 0.0,
        compile_threads: 0,
        compile_efficiency: None,
        time: None,
        timing: backend.timing_method(),
        strategy: "database".into(),
        reference: ctx.job.verify.describe(),
        started: w.at,
        origin: entry.origin.clone(),
        environment: Some(entry.env.clone()),
        wall_seconds: t0.elapsed().as_secs_f64(),
        ended_early: w.partial,
        default_included: true,
        default_in_shard: None,
        default: prep.default.clone(),
        devices: Vec::new(),
        causes: Vec::new(),
        disagreement: None,
        winner_withheld: None,
        unsaved: None,
        notes: Vec::new(),
        shard: None,
        prior: None,
        compile_tail: None,
        recheck: None,
        memcheck: None,
        peaks,
        roofline,
    })
}

/// Why a stored winner does not answer this tune although it could (`None`: it does): the tune
/// asks for more search than the winner's came from — a budget of more evaluations than the
/// entry holds (`max_evals`: the tune's, or once planned, this shard's share of it), or
/// `exhaustive`, or, where it sets no number of evaluations, more time than the time limit
/// that stopped the last run with configs left (or no time limit). The tune then goes on from
/// the stored measurements, which its budget counts, and its summary says why in this line —
/// unless they hold every candidate (the caller's check, once the candidates are planned: after
/// a search that measured all of them, every tune is a hit).
pub(crate) fn searches_on(entry: &Entry, opts: &crate::run::TuneOptions, max_evals: Option<usize>) -> Option<String> {
    // Whether the stored measurements hold every candidate is the caller's check, once planned:
    // a run's strategy does not tell (an exhaustive run with a budget of evaluations, or one its
    // time limit stopped, measured part of the space; so did `confirm`'s).
    // The newest run's note, where the entry has one (a database of an older kerntune, or one
    // merged from files without notes, has none: the evaluations alone then decide).
    let last = entry.runs.iter().max_by_key(|r| r.run);
    let held = entry.measurements.len();
    let stopped = last.and_then(|r| r.time_limit_ms).map(|ms| ms as f64 / 1000.0);
    let asked = match max_evals {
        Some(n) if n > held => format!("this tune's budget is {n} evaluations"),
        Some(_) => return None,
        None if opts.strategy == "exhaustive" => "this tune is exhaustive".to_string(),
        None => match (stopped, opts.budget.max_seconds) {
            (Some(_), None) => "this tune has no time limit".to_string(),
            (Some(was), Some(now)) if now > was => format!("this tune's time limit is {}", seconds(now)),
            _ => return None,
        },
    };
    Some(format!(
        "the stored winner came from {} that measured {held} config{}{}; {asked}: searching on from the stored measurements",
        last.map_or("searches".to_string(), |r| format!("a `{}` search", r.strategy)),
        if held == 1 { "" } else { "s" },
        stopped.map_or(String::new(), |s| format!(" and stopped at its time limit of {}", seconds(s))),
    ))
}

/// A time limit in words: `30 s`, `1.5 s`.
fn seconds(s: f64) -> String {
    format!("{} s", (s * 1000.0).round() / 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::fixture::{job, opts, tuner};
    use crate::run::TuneOptions;

    #[test]
    fn a_stored_winner_is_a_hit_only_for_the_same_space_and_verification() {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::at(dir.path().join("db.json"));
        let t = tuner();
        let o = TuneOptions { db: Some(db.clone()), ..opts() };
        let first = t.tune(&job(), &o).unwrap();
        let ctx = t.prepare(&job()).unwrap();
        let entry = stored_entry(Some(&db), &ctx.id).unwrap();
        let hit = stored_winner(t.backend(), &ctx, entry.as_ref(), &TuneOptions::default(), Instant::now()).expect("hit");
        assert!(hit.db_hit && hit.compiled == 0);
        assert_eq!((hit.winner, hit.evaluated), (first.winner, first.evaluated));
        // Another space (one more value) or another tolerance: no hit.
        let mut wider = job();
        wider.params[1].values.push(crate::spec::value::Value::Int(8));
        let ctx = t.prepare(&wider).unwrap();
        assert!(stored_winner(t.backend(), &ctx, entry.as_ref(), &TuneOptions::default(), Instant::now()).is_none());
        let mut stricter = job();
        stricter.verify.tolerance.atol /= 10.0;
        let ctx = t.prepare(&stricter).unwrap();
        assert!(stored_winner(t.backend(), &ctx, entry.as_ref(), &TuneOptions::default(), Instant::now()).is_none());
        assert!(stored_entry(None, &ctx.id).unwrap().is_none());
    }

    /// A tune that asks for more search than the stored winner came from (a larger evaluation
    /// budget, or exhaustive, after a partial search) goes on from its measurements and says
    /// why; one that asks for as much or less, or follows an exhaustive search, is a hit.
    #[test]
    fn a_larger_budget_searches_on_from_the_stored_winner() {
        use crate::spec::settings::Budget;
        let dir = tempfile::tempdir().unwrap();
        let db = Database::at(dir.path().join("db.sqlite"));
        let t = tuner();
        let tune = |strategy: &str, evals: Option<usize>| {
            let budget = Budget { max_evals: evals, ..Default::default() };
            t.tune(&job(), &TuneOptions { db: Some(db.clone()), strategy: strategy.into(), budget, ..opts() }).unwrap()
        };
        let first = tune("random", Some(3));
        assert!(!first.db_hit && first.evaluated == 3);
        let more = tune("random", Some(5));
        assert!(!more.db_hit && more.evaluated == 5 && more.from_db == 3, "{} evaluated, {} from the database", more.evaluated, more.from_db);
        let why = more.notes.iter().find(|n| n.contains("searching on")).expect("said why");
        assert!(why.contains("a `random` search that measured 3 configs; this tune's budget is 5 evaluations"), "{why}");
        for evals in [5, 4] {
            assert!(tune("random", Some(evals)).db_hit, "{evals} evaluations: no more than stored");
        }
        let all = tune("exhaustive", None);
        assert!(!all.db_hit && all.from_db == 5 && all.evaluated > 5);
        assert!(all.notes.iter().any(|n| n.contains("this tune is exhaustive")), "{:?}", all.notes);
        // After an exhaustive search, every budget is answered.
        for (strategy, evals) in [("exhaustive", None), ("random", Some(1000))] {
            assert!(tune(strategy, evals).db_hit, "{strategy} {evals:?}");
        }
        // So is a budget larger than the space, once a search measured every candidate.
        let _ = db.clear();
        let (few, whole) = (tune("random", Some(2)), tune("random", Some(1000)));
        assert!(!few.db_hit && !whole.db_hit && whole.from_db == 2);
        assert!(tune("random", Some(1000)).db_hit, "every candidate measured: nothing to search on");
        // An exhaustive search with a budget measured part of the space: a larger budget goes on.
        let _ = db.clear();
        let part = tune("exhaustive", Some(4));
        assert!(!part.db_hit && part.evaluated == 4);
        let on = tune("exhaustive", Some(8));
        assert!(!on.db_hit && on.from_db == 4 && on.evaluated == 8, "{} evaluated, {} from the database", on.evaluated, on.from_db);
        assert!(tune("exhaustive", Some(8)).db_hit, "as many again");
        // So did a run of listed configs (`kerntune confirm`'s) after a partial search.
        let _ = db.clear();
        let few = tune("random", Some(3));
        let keys: Vec<String> = few.results.iter().map(|r| r.config.key()).collect();
        let o = TuneOptions { db: Some(db.clone()), only: Some(keys), force: true, ..opts() };
        assert!(!t.tune(&job(), &o).unwrap().db_hit);
        let more = tune("random", Some(6));
        assert!(!more.db_hit && more.evaluated == 6, "{} evaluated", more.evaluated);
        // After a random split, a larger budget counts every shard's records, though its own
        // sample is drawn by another seed than theirs (60 after a split of 40 measured 54 more
        // on the H100, not 20).
        let _ = db.clear();
        for index in 0..2 {
            let budget = Budget { max_evals: Some(6), ..Default::default() };
            let shard = Some(crate::spec::settings::Shard { index, count: 2 });
            t.tune(&job(), &TuneOptions { db: Some(db.clone()), strategy: "random".into(), budget, shard, seed: 7, ..opts() }).unwrap();
        }
        let ctx = t.prepare(&job()).unwrap();
        let stored = db.entry(&ctx.id).unwrap().unwrap().measurements.len();
        let whole = tune("random", Some(stored + 3));
        assert!(
            !whole.db_hit && whole.from_db == stored && whole.evaluated == stored + 3,
            "{} evaluated, {} of {stored} from the database",
            whole.evaluated,
            whole.from_db
        );
        // An entry without run notes (an older kerntune's): the evaluations alone decide.
        let _ = db.clear();
        let few = tune("random", Some(3));
        db.update_entry(&few.entry, |e| e.as_mut().expect("stored").runs.clear()).unwrap();
        assert!(db.entry(&few.entry).unwrap().unwrap().runs.is_empty());
        let more = tune("random", Some(5));
        assert!(!more.db_hit && more.evaluated == 5, "{} evaluated", more.evaluated);
        assert!(more.notes.iter().any(|n| n.contains("came from searches that measured 3 configs; this tune's budget is 5")), "{:?}", more.notes);
        // A shard's budget is its share: the same shard of the same split again is a hit.
        let _ = db.clear();
        let shard = |evals: usize| {
            let budget = Budget { max_evals: Some(evals), ..Default::default() };
            let shard = Some(crate::spec::settings::Shard { index: 0, count: 2 });
            t.tune(&job(), &TuneOptions { db: Some(db.clone()), strategy: "random".into(), budget, shard, ..opts() }).unwrap()
        };
        assert!(!shard(6).db_hit);
        assert!(shard(6).db_hit, "its share again");
        assert!(!shard(10).db_hit, "a larger share");
    }

    /// A run stopped by its time limit with configs left is kept as such: a later tune given
    /// more time (or none) searches on from its measurements; one given as much, or a number
    /// of evaluations no larger than those stored, is a hit, and so is any tune after a run
    /// that ended otherwise.
    #[test]
    fn more_time_searches_on_after_a_run_its_time_limit_stopped() {
        use crate::spec::settings::Budget;
        use std::time::Duration;
        let dir = tempfile::tempdir().unwrap();
        let db = Database::at(dir.path().join("db.sqlite"));
        // 18 configs that fit compiled in 0.2 s each on two threads: about 1.8 s for all of them.
        let fake = crate::fake::FakeBackend::new(crate::limits::Limits::preset("h100").unwrap().1, crate::run::fixture::time)
            .with_compile_times(|_| Duration::from_millis(200));
        let t = crate::run::Tuner::new(fake);
        let tune = |seconds: Option<f64>, evals: Option<usize>| {
            let budget = Budget { max_seconds: seconds, max_evals: evals, ..Default::default() };
            t.tune(&job(), &TuneOptions { db: Some(db.clone()), strategy: "random".into(), budget, ..opts() }).unwrap()
        };
        let first = tune(Some(1.0), None);
        assert!(!first.db_hit && first.evaluated < first.candidates, "{} evaluated", first.evaluated);
        let run = db.entry(&first.entry).unwrap().unwrap().runs.into_iter().max_by_key(|r| r.run).unwrap();
        assert_eq!(run.time_limit_ms, Some(1000), "the time limit stopped it");
        let held = first.evaluated;
        assert!(tune(Some(1.0), None).db_hit, "as much time again");
        assert!(tune(Some(30.0), Some(held)).db_hit, "more time, but no more evaluations than stored");
        let more = tune(Some(30.0), None);
        assert!(
            !more.db_hit && more.from_db == held && more.evaluated == more.candidates,
            "{} of {} evaluated, {} from the database",
            more.evaluated,
            more.candidates,
            more.from_db
        );
        let why = more.notes.iter().find(|n| n.contains("searching on")).expect("said why");
        assert!(why.contains(&format!("measured {held} configs and stopped at its time limit of 1 s; this tune's time limit is 30 s")), "{why}");
        // That run measured every config: not stopped by its limit, and nothing is left.
        let run = db.entry(&first.entry).unwrap().unwrap().runs.into_iter().max_by_key(|r| r.run).unwrap();
        assert_eq!(run.time_limit_ms, None);
        assert!(tune(Some(60.0), None).db_hit);
        // No time limit after a run its limit stopped: searches on.
        let _ = db.clear();
        let first = tune(Some(1.0), None);
        let whole = tune(None, None);
        assert!(!whole.db_hit && whole.from_db == first.evaluated, "{} from the database", whole.from_db);
        assert!(whole.notes.iter().any(|n| n.contains("; this tune has no time limit: searching on")), "{:?}", whole.notes);
    }

    /// A shard's winner is the best of its part of the space: it answers that shard's tune
    /// again, not a tune of the whole space, which selects again (reusing what is measured).
    #[test]
    fn a_shards_winner_is_not_the_spaces() {
        use crate::spec::settings::Shard;
        let dir = tempfile::tempdir().unwrap();
        let db = Database::at(dir.path().join("db.sqlite"));
        let t = tuner();
        let half = Some(Shard { index: 0, count: 2 });
        let part = t.tune(&job(), &TuneOptions { db: Some(db.clone()), shard: half, ..opts() }).unwrap();
        assert!(!part.db_hit);
        let again = t.tune(&job(), &TuneOptions { db: Some(db.clone()), shard: half, ..opts() }).unwrap();
        assert!(again.db_hit, "the same shard again: its own winner");
        let whole = t.tune(&job(), &TuneOptions { db: Some(db.clone()), ..opts() }).unwrap();
        assert!(!whole.db_hit, "a shard's winner is not the space's");
        assert!(whole.evaluated > part.evaluated && whole.from_db == part.evaluated, "{} {} {}", whole.evaluated, whole.from_db, part.evaluated);
    }

    /// The shards of a split tuned into one database (one that a node's GPUs share) add up as
    /// merging their own files would: some shards stand for their part, every shard for the
    /// space; a shard still measuring leaves the shards before it as they are.
    #[test]
    fn shards_into_one_database_add_up() {
        use crate::spec::settings::Shard;
        let dir = tempfile::tempdir().unwrap();
        let t = tuner();
        let db = Database::at(dir.path().join("shared.sqlite"));
        let shard = |k: usize| Some(Shard { index: k, count: 3 });
        let ctx = t.prepare(&job()).unwrap();
        let entry = || stored_entry(Some(&db), &ctx.id).unwrap().unwrap();
        let tune = |k: usize| t.tune(&job(), &TuneOptions { db: Some(db.clone()), shard: shard(k), ..opts() }).unwrap();
        let two = tune(2);
        // Shard 0 flushing what it has measured so far: shard 2's winner keeps its origin.
        let mut measuring = entry().origin.unwrap();
        measuring.shard = shard(0);
        db.update_entry(&ctx.id, |e| e.as_mut().unwrap().record_all(measuring, [])).unwrap();
        assert_eq!(entry().origin.unwrap().shards(), Some(([2].into(), 3)));
        let zero = tune(0);
        assert_eq!(entry().origin.unwrap().shards(), Some(([0, 2].into(), 3)), "both shards, not the last one's alone");
        let faster = if zero.winner_stats.mean <= two.winner_stats.mean { &zero } else { &two };
        assert_eq!(entry().winner.unwrap().config, faster.winner.key(), "the better of the two shards' winners");
        for asked in [None, shard(0), shard(2)] {
            assert!(
                stored_winner(t.backend(), &ctx, Some(&entry()), &TuneOptions { shard: asked, ..Default::default() }, Instant::now()).is_none(),
                "{asked:?}"
            );
        }
        tune(1);
        assert_eq!(entry().origin.unwrap().shards(), None, "every shard: the whole space");
        let hit = t.tune(&job(), &TuneOptions { db: Some(db.clone()), ..opts() }).unwrap();
        let whole = t.tune(&job(), &TuneOptions { db: None, ..opts() }).unwrap();
        assert!(hit.db_hit);
        assert_eq!(hit.winner, whole.winner);
        // A shard that ran beside a tune of the whole space and finishes after it: still whole.
        let mut late = entry().origin.unwrap();
        late.shard = shard(1);
        let mut w = entry().winner.unwrap();
        w.config = entry().measurements.keys().find(|k| **k != w.config).unwrap().clone();
        w.stats.mean *= 2.0;
        db.update_entry(&ctx.id, |e| e.as_mut().unwrap().set_winner(late, w)).unwrap();
        assert_eq!(entry().origin.unwrap().shards(), None, "a late shard leaves the space whole");
        assert_eq!(entry().winner.unwrap().config, whole.winner.key());
        // A shard that was ended early leaves the joined winner partial: it answers no tune,
        // which goes on (and, whole, stores a winner that answers the next).
        let mut late = entry().origin.unwrap();
        late.shard = shard(2);
        let mut w = entry().winner.unwrap();
        (w.partial, w.stats.mean) = (true, w.stats.mean * 3.0);
        db.update_entry(&ctx.id, |e| e.as_mut().unwrap().set_winner(late, w)).unwrap();
        assert!(entry().winner.unwrap().partial && entry().winner.unwrap().config == whole.winner.key());
        let again = t.tune(&job(), &TuneOptions { db: Some(db.clone()), ..opts() }).unwrap();
        assert!(!again.db_hit && again.from_db == again.evaluated, "{} of {} from the database", again.from_db, again.evaluated);
        assert!(!entry().winner.unwrap().partial);
        assert!(t.tune(&job(), &TuneOptions { db: Some(db.clone()), ..opts() }).unwrap().db_hit);
    }

    /// Some shards of a split merged stand for their part of the space, not for the whole:
    /// their winner answers no tune; every shard merged is the whole space.
    #[test]
    fn some_shards_merged_are_not_the_space() {
        use crate::spec::settings::Shard;
        let dir = tempfile::tempdir().unwrap();
        let t = tuner();
        let shards: Vec<Database> = (0..3)
            .map(|k| {
                let db = Database::at(dir.path().join(format!("shard-{k}.sqlite")));
                t.tune(&job(), &TuneOptions { db: Some(db.clone()), shard: Some(Shard { index: k, count: 3 }), ..opts() }).unwrap();
                db
            })
            .collect();
        let merged = Database::at(dir.path().join("merged.sqlite"));
        let merge = |k: usize| {
            let f = shards[k].load().unwrap();
            merged.update(|m| m.merge(&f)).unwrap();
        };
        let ctx = t.prepare(&job()).unwrap();
        let entry = || stored_entry(Some(&merged), &ctx.id).unwrap().unwrap();
        merge(2);
        merge(0);
        let two = entry().origin.unwrap();
        assert_eq!(two.shards(), Some(([0, 2].into(), 3)), "{two:?}");
        for asked in [None, Some(Shard { index: 0, count: 3 }), Some(Shard { index: 2, count: 3 })] {
            assert!(
                stored_winner(t.backend(), &ctx, Some(&entry()), &TuneOptions { shard: asked, ..Default::default() }, Instant::now()).is_none(),
                "{asked:?}"
            );
        }
        merge(2);
        assert_eq!(entry().origin.unwrap().shards(), Some(([0, 2].into(), 3)), "a shard merged twice counts once");
        merge(1);
        assert_eq!(entry().origin.unwrap().shards(), None, "every shard: the whole space");
        let hit = stored_winner(t.backend(), &ctx, Some(&entry()), &TuneOptions::default(), Instant::now()).expect("the space's winner");
        let whole = t.tune(&job(), &TuneOptions { db: None, ..opts() }).unwrap();
        assert_eq!(hit.winner, whole.winner);
    }
}
