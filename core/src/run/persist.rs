//! Stages 5 and 6: select the winner among the measured configs with the noise-aware,
//! deterministic rule of [`crate::measure::select`], persist it with the last measurements, and
//! assemble the report.

use crate::backend::Backend;
use crate::measure::select::{select as select_rule, Entrant};
use crate::measure::stats::Stats;
use crate::run::candidates::Plan;
use crate::run::error::Error;
use crate::run::evaluate::Run;
use crate::run::report::{failure_counts, sorted, ConfigResult, ResultOutcome, TuneReport};
use crate::space::config::Config;
use crate::store::db::{self, Entry};
use std::time::Instant;

/// The winner and its tie band.
pub(crate) struct Selected {
    pub winner: Config,
    pub stats: Stats,
    pub tie_band: Vec<Config>,
}

/// Picks the winner; when nothing was measured successfully, flushes what was recorded and
/// reports why.
pub(crate) fn select<B: Backend>(run: &mut Run<'_, B>, plan: &Plan) -> Result<Selected, Error> {
    let measured: Vec<(usize, &ConfigResult)> =
        plan.cands.iter().enumerate().filter_map(|(i, c)| run.results.get(&c.config.key()).map(|r| (i, r))).filter(|(_, r)| r.stats().is_some()).collect();
    let entrants: Vec<Entrant<'_>> = measured
        .iter()
        .map(|&(i, r)| {
            let c = &plan.cands[i];
            Entrant {
                order: c.order,
                is_default: c.is_default,
                resource_score: r.usage.as_ref().and_then(|u| u.score(c.launch.threads())),
                stats: r.stats().expect("filtered"),
            }
        })
        .collect();
    if let Some(sel) = select_rule(&entrants, run.opts.bench.tie_tolerance) {
        let (wi, wr) = measured[sel.winner];
        return Ok(Selected {
            winner: plan.cands[wi].config.clone(),
            stats: wr.stats().expect("measured").clone(),
            tie_band: sel.tie_band.iter().map(|&k| plan.cands[measured[k].0].config.clone()).collect(),
        });
    }
    run.flush()?;
    Err(Error::NoValidConfig(nothing_passed(run)))
}

/// Why no config passed: the failure counts and the first failure's message.
fn nothing_passed<B: Backend>(run: &Run<'_, B>) -> String {
    let failures = failure_counts(run.results.values());
    let first = run.results.values().find_map(|r| match &r.outcome {
        ResultOutcome::Failed { message, .. } => {
            Some(format!("{}: {}", r.config, message.lines().filter(|l| !l.trim().is_empty()).take(3).collect::<Vec<_>>().join(" | ")))
        }
        _ => None,
    });
    format!(
        "none of the {} evaluated configs passed ({}){}",
        run.results.len(),
        failures.iter().map(|(k, v)| format!("{k}: {v}")).collect::<Vec<_>>().join(", "),
        first.map(|f| format!("; e.g. {f}")).unwrap_or_default()
    )
}

/// Writes the pending measurements and the winner to the database (if the tune has one).
pub(crate) fn winner<B: Backend>(run: &mut Run<'_, B>, sel: &Selected) -> Result<(), Error> {
    let Some(d) = &run.opts.db else { return Ok(()) };
    let pending = std::mem::take(&mut run.pending);
    let w = db::Winner {
        config: sel.winner.key(),
        stats: sel.stats.clone(),
        space: run.ctx.space_hash.clone(),
        verify: run.ctx.verify_hash.clone(),
        tie_band: sel.tie_band.iter().map(Config::key).collect(),
        at: db::now(),
    };
    let env = run.environment();
    let id = run.ctx.id.clone();
    let tname = run.backend().target().name.clone();
    d.update_entry(&id, |e| {
        let e = e.get_or_insert_with(|| Entry::new(id.clone(), tname, env));
        for (k, m) in pending {
            e.record(k, m);
        }
        e.winner = Some(w);
    })?;
    Ok(())
}

/// The report of a tune that ran.
pub(crate) fn report<B: Backend>(run: &Run<'_, B>, plan: &Plan, sel: Selected, strategy: String, t0: Instant) -> TuneReport {
    let failures = failure_counts(run.results.values());
    let results: Vec<ConfigResult> = run.results.values().cloned().collect();
    let from_db = results.iter().filter(|r| r.from_db).count();
    let prep = &run.ctx.prep;
    let wall = t0.elapsed().as_secs_f64();
    TuneReport {
        target: run.backend().target().clone(),
        entry: run.ctx.id.clone(),
        db_hit: false,
        winner_metrics: prep.metrics(&sel.winner),
        winner: sel.winner,
        winner_stats: sel.stats,
        tie_band: sel.tie_band,
        evaluated: results.len(),
        from_db,
        results: sorted(results),
        pruned_before: plan.pruned_before.clone(),
        pruned_after: run.pruned_after.clone(),
        prune_examples: plan.prune_examples.clone(),
        failures,
        cartesian: prep.space.cartesian_size(),
        valid: plan.valid,
        sampled: plan.sampled,
        candidates: plan.cands.len(),
        compiled: run.compiled,
        compile_cache_hits: run.cache_hits,
        compile_seconds: run.compile_seconds,
        compile_threads: run.compile_threads,
        compile_efficiency: efficiency(run.compile_seconds, wall, run.compile_threads),
        timing: run.backend().timing_method(),
        strategy,
        reference: run.ctx.job.verify.reference.describe(),
        wall_seconds: wall,
        default_included: plan.default_included,
    }
}

/// Compile seconds summed over threads ÷ (wall × threads); `None` when nothing was compiled.
fn efficiency(compile_seconds: f64, wall: f64, threads: usize) -> Option<f64> {
    (compile_seconds > 0.0 && wall > 0.0).then(|| compile_seconds / (wall * threads.max(1) as f64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake::{Behavior, FakeBackend};
    use crate::limits::Limits;
    use crate::run::candidates::plan;
    use crate::run::fixture::{is, job, opts, time, tuner};
    use crate::run::tuner::{TuneOptions, Tuner};
    use crate::store::db::Database;

    fn measured_run(t: &Tuner<FakeBackend>, o: &TuneOptions, f: impl FnOnce(&mut Run<'_, FakeBackend>, &Plan)) {
        let ctx = t.prepare(&job()).unwrap();
        let p = plan(&ctx, t.backend().limits(), o).unwrap();
        let mut run = Run::new(t, &ctx, o, None);
        crate::run::search_loop::run(&mut run, &p, Instant::now()).unwrap();
        f(&mut run, &p);
    }

    #[test]
    fn selects_the_fastest_and_persists_it_with_every_measurement() {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::at(dir.path().join("db.json"));
        let o = TuneOptions { db: Some(db.clone()), flush_every: std::time::Duration::from_secs(3600), ..opts() };
        let t = tuner();
        measured_run(&t, &o, |run, p| {
            let sel = select(run, p).unwrap();
            assert!(is(&sel.winner, 128, 4), "{}", sel.winner);
            assert!((sel.stats.mean - 1e-3).abs() < 1e-12);
            assert!(!run.pending.is_empty(), "nothing flushed yet (flush_every is an hour)");
            winner(run, &sel).unwrap();
            assert!(run.pending.is_empty());
            let e = db.entry(&run.ctx.id).unwrap().unwrap();
            assert_eq!(e.winner.unwrap().config, sel.winner.key());
            assert_eq!(e.measurements.len(), 18);
            let r = report(run, p, sel, "exhaustive".into(), Instant::now());
            assert_eq!((r.evaluated, r.candidates, r.valid), (18, 18, 21));
            assert!(r.results[0].stats().unwrap().mean <= r.results[1].stats().map_or(f64::INFINITY, |s| s.mean));
        });
    }

    #[test]
    fn nothing_passed_names_the_failures() {
        let fake =
            FakeBackend::new(Limits::preset("h100").unwrap().1, time).with_behavior(|c| if is(c, 256, 1) { Behavior::Ok } else { Behavior::WrongOutput });
        let t = Tuner::new(fake);
        let o = TuneOptions { ..opts() };
        measured_run(&t, &o, |run, p| {
            // Only the default (the reference itself) passed; without it nothing did.
            run.results.retain(|_, r| r.stats().is_none());
            let e = select(run, p).err().unwrap().to_string();
            assert!(e.contains("none of the 17 evaluated configs passed (wrong output: 17)"), "{e}");
            assert!(e.contains("; e.g. bx="), "{e}");
        });
    }
}
