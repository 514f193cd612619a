//! Stages 5 and 6: select the winner among the measured configs with the noise-aware,
//! deterministic rule of [`crate::measure::select`], persist it with the last measurements, and
//! assemble the report.

use crate::measure::select::{select as select_rule, Entrant};
use crate::measure::stats::Stats;
use crate::plan::roofline::Position;
use crate::run::candidates::Plan;
use crate::run::error::Error;
use crate::run::ledger::Ledger;
use crate::run::report::{failure_counts, sorted, ConfigResult, ResultOutcome, TuneReport};
use crate::space::config::Config;
use crate::store::db::{self, Entry, Span};
use std::time::Instant;

/// The winner and its tie band.
pub(crate) struct Selected {
    pub winner: Config,
    pub stats: Stats,
    pub tie_band: Vec<Config>,
    /// The rule that picked the winner in its tie band (`None`: it stands alone).
    pub tie_break: Option<crate::measure::select::TieBreak>,
    /// The fastest mean, on the judging device's scale.
    pub best_mean: f64,
}

/// Picks the winner by the measurements on the judging device's scale; when nothing was
/// measured successfully, flushes what was recorded and reports why, one line per cause.
pub(crate) fn select(ledger: &mut Ledger<'_>, plan: &Plan) -> Result<Selected, Error> {
    let measured: Vec<(usize, Stats, &ConfigResult)> =
        plan.cands.iter().enumerate().filter_map(|(i, c)| ledger.results.get(&c.config.key()).and_then(|r| ledger.normalized(r).map(|s| (i, s, r)))).collect();
    let entrants: Vec<Entrant<'_>> = measured
        .iter()
        .map(|(i, s, r)| {
            let c = &plan.cands[*i];
            Entrant { order: c.order, is_default: c.is_default, resource_score: r.usage.as_ref().and_then(|u| u.score(c.launch.threads())), stats: s }
        })
        .collect();
    if let Some(sel) = select_rule(&entrants, ledger.opts.bench.tie_tolerance) {
        let (wi, _, wr) = &measured[sel.winner];
        return Ok(Selected {
            winner: plan.cands[*wi].config.clone(),
            stats: wr.stats().expect("measured").clone(),
            tie_band: sel.tie_band.iter().map(|&k| plan.cands[measured[k].0].config.clone()).collect(),
            tie_break: sel.tie_break,
            best_mean: measured[sel.fastest].1.mean,
        });
    }
    ledger.flush_or_keep();
    // Nothing measured at all: not a failure of the configs, but the tune's end coming first
    // (said as "none of the 0 evaluated configs passed: ").
    if ledger.results.is_empty() {
        let opts = ledger.opts;
        let why = match opts.budget.max_seconds {
            _ if opts.wrapped_up() => {
                "no config was measured: the tune was ended early (SIGUSR1 or SIGUSR2, a scheduler's warning before its time limit) before its first one was; run it again with more time".to_string()
            }
            Some(s) => format!("no config was measured: the time budget of {s} s ended before the first one was; give the tune more time (--budget 1m, say)"),
            None => "no config was measured".to_string(),
        };
        return Err(Error::NoValidConfig(why));
    }
    Err(Error::NoValidConfig(crate::run::diagnose::nothing_passed(ledger.results.values(), &ledger.causes)))
}

/// Why the winner is not stored, if it is not: the reference (a config's outputs, by
/// `reference`) is the likelier culprit of most configs' wrong outputs, so the winner is one of
/// the few that agree with a reference that is probably wrong, and a later tune or launch must
/// not take it from the database.
pub(crate) fn withheld(disagreement: Option<&crate::run::diagnose::Disagreement>, reference: &crate::spec::job::Reference) -> Option<String> {
    let d = disagreement.filter(|d| d.reference_suspect)?;
    let (n, agree) = (d.disagreed, d.verified - d.disagreed);
    let head = format!("{n} of the {} verified configs differ from the reference alike", d.verified);
    let winner = format!("the winner {}", crate::run::diagnose::agreeing(agree));
    // `--reference first-valid` is no other reference when it is the one in doubt.
    let trusted = if crate::run::diagnose::another_config_helps(reference) {
        "a CPU reference, expected outputs, --reference first-valid"
    } else {
        "a CPU reference or expected outputs"
    };
    // A parameter that tells them apart without an exception may change the output by design
    // (a radius, a number of time steps): the data cannot tell that from a wrong reference.
    if let Some((p, _, differ, _)) = d.parameter.as_ref().filter(|p| p.3 == d.verified) {
        return Some(format!(
            "{head}, all with `{p}` = {}: either `{p}` changes the output by design (verify against expected outputs or without a reference: --reference none) or the reference is wrong and {winner} (give a reference you trust: {trusted}); then tune again",
            differ.join(", ")
        ));
    }
    Some(format!("{head}, so the reference is more likely wrong and {winner}; give a reference you trust ({trusted}) and tune again"))
}

/// Writes the pending measurements, the winner and what the run says of its search to the
/// database (if the tune has one). With `withheld` (see [`withheld`]), the measurements
/// without the winner: the entry keeps no winner, and an earlier one of the same verification
/// goes. Returns why the winner was withheld from a database (`None` without one), and, where
/// the database could not be written (a full disk), where the measurements and the winner were
/// kept instead ([`Ledger::keep_unsaved`]).
pub(crate) fn winner(ledger: &mut Ledger<'_>, plan: &Plan, sel: &Selected, withheld: Option<String>) -> (Option<String>, Option<crate::run::Unsaved>) {
    let late = ledger.spans_to_write();
    let Some(d) = &ledger.opts.db else { return (None, None) };
    let pending = ledger.to_write();
    let run = ledger.run;
    let w = db::Winner {
        config: sel.winner.key(),
        stats: sel.stats.clone(),
        space: ledger.ctx.space_hash.clone(),
        verify: ledger.ctx.verify_hash.clone(),
        tie_band: sel.tie_band.iter().map(Config::key).collect(),
        at: db::now(),
        default: plan.cands.iter().find(|c| c.is_default).map(|c| c.config.key()),
        partial: ledger.ended_early,
    };
    let (env, tname) = ledger.environment();
    let (env, tname, origin) = (env.clone(), tname.to_string(), ledger.origin());
    let id = ledger.ctx.id.clone();
    ledger.note_time();
    if let Some(n) = ledger.note.as_mut() {
        n.winner_withheld = withheld.clone();
    }
    let note = ledger.note.clone();
    let stale = ledger.stale.clone();
    let written = d.update_entry(&id, |e| {
        let e = e.get_or_insert_with(|| Entry::new(id.clone(), tname, env));
        if let Some(s) = &stale {
            s.clean(e);
        }
        e.record_all(origin.clone(), pending);
        crate::run::ledger::keep_late(e, run, &late);
        if withheld.is_some() {
            e.withhold_winner(origin);
        } else {
            e.set_winner(origin, w.clone());
        }
        e.note_runs(note.as_ref());
    });
    match written {
        Ok(()) => {
            ledger.written();
            (withheld, None)
        }
        Err(e) => {
            ledger.unwritten_spans = late;
            let unsaved = ledger.keep_unsaved(&e.into(), Some((w, withheld.clone())));
            (withheld, unsaved)
        }
    }
}

/// The report of a tune that ran.
pub(crate) fn report(
    ledger: &Ledger<'_>,
    plan: &Plan,
    sel: Selected,
    strategy: String,
    recheck: Option<crate::run::Recheck>,
    disagreement: Option<crate::run::diagnose::Disagreement>,
    t0: Instant,
) -> TuneReport {
    let failures = failure_counts(ledger.results.values());
    let results: Vec<ConfigResult> = ledger.results.values().cloned().collect();
    let time = timeline(ledger, &results);
    let from_db = results.iter().filter(|r| r.from_db).count();
    let ctx = ledger.ctx;
    let prep = &ctx.prep;
    let wall = t0.elapsed().as_secs_f64();
    let mut notes = plan.notes.clone();
    notes.extend(ledger.notes.iter().cloned());
    let (flops, bytes) = prep.metrics(&sel.winner);
    let roofline = Some(Position::of(flops, bytes, sel.stats.mean, ledger.peaks.as_ref()));
    TuneReport {
        target: ledger.target().clone(),
        entry: ctx.id.clone(),
        db_hit: false,
        winner_metrics: prep.metrics(&sel.winner),
        winner: sel.winner,
        winner_stats: sel.stats,
        tie_band: sel.tie_band,
        tie_break: sel.tie_break,
        evaluated: results.len(),
        from_db,
        results: sorted(results),
        pruned_before: plan.pruned_before.clone(),
        pruned_after: ledger.pruned_after.clone(),
        prune_examples: plan.prune_examples.clone(),
        failures,
        cartesian: prep.space.cartesian_size(),
        valid: plan.valid,
        sampled: plan.sampled,
        candidates: plan.cands.len(),
        compiled: ledger.compiled,
        compile_cache_hits: ledger.cache_hits,
        compile_cache_refusals: ledger.cached_refusals,
        compile_seconds: ledger.compile_seconds,
        compile_threads: ledger.compile_threads,
        compile_efficiency: efficiency(ledger.compile_seconds, wall, ledger.compile_threads),
        time,
        timing: ledger.timing(),
        strategy,
        reference: ctx.job.verify.describe(),
        started: ledger.run,
        origin: Some(ledger.origin()),
        environment: Some(ledger.environment().0.clone()),
        wall_seconds: wall,
        ended_early: ledger.ended_early,
        default_included: plan.default_included,
        default_in_shard: plan.default_in_shard,
        default: prep.default.clone(),
        devices: ledger.devices.clone(),
        causes: ledger.causes.clone(),
        // What `winner` stored: the caller sets it.
        winner_withheld: None,
        unsaved: None,
        disagreement,
        notes,
        shard: ledger.opts.shard,
        prior: ledger.prior.clone(),
        recheck,
        memcheck: ledger.note.as_ref().and_then(|n| n.memcheck.clone()),
        compile_tail: ledger.compile_tail.clone().filter(|t| t.median_s.is_some() || !t.abandoned.is_empty()),
        peaks: ledger.peaks.clone(),
        roofline,
    }
}

/// Where this run's time went, from its configs' spans (all of them: the device jobs after a
/// config's record, `--recheck`'s and the memory checker's, are the run's time too, and
/// [`winner`] gave them to the results, as to their records).
fn timeline(ledger: &Ledger<'_>, results: &[ConfigResult]) -> Option<crate::run::timeline::Account> {
    // As the database keeps them: a config pruned after compiling is counted in the run's
    // time, not among the spans (counted twice, the summary's share of the threads read 93 %
    // where the report's read 80 %, on an H200).
    let kept: Vec<(String, &[Span], bool)> = results
        .iter()
        .filter(|r| !r.from_db && !matches!(r.outcome, ResultOutcome::Pruned { .. }))
        .map(|r| (r.config.key(), r.spans.as_slice(), matches!(r.outcome, ResultOutcome::Failed { .. })))
        .collect();
    let configs = kept.iter().map(|(key, spans, failed)| (key.as_str(), *spans, *failed));
    crate::run::timeline::Timeline::new(configs, Some(&ledger.run_time())).map(|t| t.account())
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
    use crate::run::fixture::{is, job, opts, searched, time, tuner};
    use crate::run::{TuneOptions, Tuner};
    use crate::store::db::Database;

    #[test]
    fn selects_the_fastest_and_persists_it_with_every_measurement() {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::at(dir.path().join("db.json"));
        let o = TuneOptions { db: Some(db.clone()), flush_every: std::time::Duration::from_secs(3600), ..opts() };
        let t = tuner();
        searched(&t, &job(), &o, None, |ledger, p, _, r| {
            r.unwrap();
            let sel = select(ledger, p).unwrap();
            assert!(is(&sel.winner, 128, 4), "{}", sel.winner);
            assert!((sel.stats.mean - 1e-3).abs() < 1e-12);
            assert!(!ledger.pending.is_empty(), "nothing flushed yet (flush_every is an hour)");
            assert_eq!(winner(ledger, p, &sel, None), (None, None), "written");
            assert!(ledger.pending.is_empty());
            let e = db.entry(&ledger.ctx.id).unwrap().unwrap();
            assert_eq!(e.winner.unwrap().config, sel.winner.key());
            assert_eq!(e.measurements.len(), 18);
            // Each record says where it stands in the run.
            let seqs: std::collections::BTreeSet<usize> = e.measurements.values().map(|m| m.trace.as_ref().unwrap().seq).collect();
            assert_eq!(seqs, (0..18).collect());
            let r = report(ledger, p, sel, "exhaustive".into(), None, None, Instant::now());
            assert_eq!((r.evaluated, r.candidates, r.valid), (18, 18, 21));
            assert!(r.results[0].stats().unwrap().mean <= r.results[1].stats().map_or(f64::INFINITY, |s| s.mean));
        });
    }

    #[test]
    fn the_winner_is_placed_on_the_roofline_and_its_records_keep_what_a_report_needs() {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::at(dir.path().join("db.sqlite"));
        let mut j = job();
        // 8 bytes per element (read x, write y), 1 FLOP; the fake times the best config at 1 ms.
        j.bytes = Some("8 * n * 1e5".into());
        j.flops = Some("n".into());
        let r = tuner().tune(&j, &TuneOptions { db: Some(db.clone()), ..opts() }).unwrap();
        let pos = r.roofline.as_ref().unwrap();
        let expect = 8.0 * 4096.0 * 1e5 / r.winner_stats.mean / 3.35e12;
        assert!((pos.fraction.unwrap() - expect).abs() < 1e-9, "{pos:?}");
        assert_eq!(pos.words().unwrap(), format!("{:.0} % of peak bandwidth (memory-bound)", expect * 100.0));
        assert!(!r.peaks.as_ref().unwrap().estimated, "the fake device's limits carry peaks");
        let e = db.entry(&r.entry).unwrap().unwrap();
        assert_eq!(e.winner.as_ref().unwrap().default.as_deref(), Some("bx=256,vec=1"));
        let m = &e.measurements[&r.winner.key()];
        assert_eq!((m.flops, m.bytes), (Some(4096.0), Some(8.0 * 4096.0 * 1e5)));
        assert!(e.env.details.contains_key("peak_bandwidth"), "{:?}", e.env.details);
        let view = crate::analysis::EntryView::new(&e, &Default::default());
        assert_eq!(view.peaks.as_ref().unwrap().bandwidth, Some(3.35e12));
        assert_eq!(view.winner_point().unwrap().position.words(), pos.words());
    }

    #[test]
    fn a_half_precision_kernel_is_placed_against_the_fp16_peak_and_its_report_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::at(dir.path().join("db.sqlite"));
        let mut j = job();
        for a in &mut j.args {
            if let crate::spec::ArgKind::Buffer { dtype, .. } = &mut a.kind {
                *dtype = crate::spec::DType::F16;
            }
        }
        // 1e10 FLOP in about a millisecond: 10 TFLOP/s, under the FP32 peak, so that only the
        // kernel's precision puts it against the tensor peak.
        j.flops = Some("1e10".into());
        j.bytes = Some("n".into());
        let r = tuner().tune(&j, &TuneOptions { db: Some(db.clone()), ..opts() }).unwrap();
        let pos = r.roofline.as_ref().unwrap();
        assert_eq!(pos.of, Some("FP16 tensor"), "{pos:?}");
        assert!(r.peaks.as_ref().unwrap().half);
        let e = db.entry(&r.entry).unwrap().unwrap();
        let view = crate::analysis::EntryView::new(&e, &Default::default());
        assert_eq!(view.winner_point().unwrap().position.words(), pos.words());
    }

    #[test]
    fn the_report_has_the_default_configs_result_for_the_winner_to_be_compared_with() {
        let r = tuner().tune(&job(), &opts()).unwrap();
        assert!(is(&r.default, 256, 1), "{}", r.default);
        let d = r.default_result().expect("an exhaustive search measures the default");
        assert!(is(&d.config, 256, 1));
        assert!((d.stats().unwrap().mean - time(&d.config)).abs() < 1e-12);
        // A default that fails (a published kernel's wrong default) is there with its failure.
        let fake =
            FakeBackend::new(Limits::preset("h100").unwrap().1, time).with_behavior(|c| if is(c, 256, 1) { Behavior::LaunchError } else { Behavior::Ok });
        let r = Tuner::new(fake).tune(&job(), &opts()).unwrap();
        let d = r.default_result().unwrap();
        assert!(matches!(d.outcome, crate::run::ResultOutcome::Failed { .. }), "{}", d.summary_line());
        // Its line names the kind once, whether or not the message begins with it.
        let line = d.summary_line();
        let kind = line.split(':').next().unwrap();
        assert_eq!(line.matches(&format!("{kind}:")).count(), 1, "{line}");
        let doubled = crate::run::ConfigResult {
            outcome: crate::run::ResultOutcome::Failed {
                kind: crate::error::FailureKind::DeviceLost,
                message: "device lost: CUDA_ERROR_ILLEGAL_ADDRESS".into(),
            },
            ..d.clone()
        };
        assert_eq!(doubled.summary_line(), "device lost: CUDA_ERROR_ILLEGAL_ADDRESS");
        assert!(is(&r.winner, 128, 4));
    }

    #[test]
    fn nothing_passed_names_the_failures() {
        let fake =
            FakeBackend::new(Limits::preset("h100").unwrap().1, time).with_behavior(|c| if is(c, 256, 1) { Behavior::Ok } else { Behavior::WrongOutput });
        let t = Tuner::new(fake);
        searched(&t, &job(), &opts(), None, |ledger, p, _, r| {
            r.unwrap();
            // Only the default (the reference itself) passed; without it nothing did.
            ledger.results.retain(|_, r| r.stats().is_none());
            let e = select(ledger, p).err().unwrap().to_string();
            assert!(e.contains("all 17 configs gave the wrong output: `y`: 4096 of 4096 elements differ"), "{e}");
            assert!(e.contains("(e.g. bx="), "{e}");
        });
    }
}
