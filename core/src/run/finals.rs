//! Stage 5: the final round. Before the winner is picked, its contenders are made comparable
//! and trustworthy:
//!
//! - **verified**: a contender the verification sample skipped is verified now (a winner is
//!   never stored unverified);
//! - **measured in full**: a contender a time limit (or a wrap-up) left on the shortlist with its
//!   verification launch alone (one launch; the warm-up and timed repetitions never ran) is
//!   measured now, so that a winner is stored from repeated launches with an interval, as in a
//!   tune that ran to its end; so is a database record of one launch that an earlier run left so
//!   (an interrupt records the shortlist and ends the tune without this round);
//! - **measured on one device**: when several devices measured, two GPUs of one model differ by
//!   a few percent, so every config within [`MARGIN`] of the best (on the judging device's
//!   scale, at most [`FINALISTS`]) is measured again on the judging device and only those
//!   measurements decide. The winner is then the one a one-device tune would pick, or tied with
//!   it within the band.
//!
//! A contender that fails now (wrong output, a fault) is recorded as failed and the pick moves
//! on; the round repeats until the winner and its band are settled (at most [`ROUNDS`] times).

use crate::backend::Backend;
use crate::run::device::{Done, Job, Purpose};
use crate::run::error::Error;
use crate::run::ledger::Ledger;
use crate::run::persist::{select, Selected};
use crate::run::report::{ConfigResult, ResultOutcome};
use crate::run::search_loop::Coordinator;
use std::collections::HashSet;

/// Configs within this fraction of the best are re-measured on the judging device.
pub const MARGIN: f64 = 0.05;
/// The most configs re-measured (in a round, of those a stop left with one launch).
pub const FINALISTS: usize = 16;
/// The most rounds.
const ROUNDS: usize = 4;

impl<B: Backend> Coordinator<'_, B> {
    /// Settles the winner's contenders (see the module docs) and picks the winner.
    pub fn finals(&mut self, ledger: &mut Ledger<'_>) -> Result<Selected, Error> {
        let plan = self.plan();
        let (_, opts, devices) = self.parts();
        let several = devices > 1 && ledger.devices.iter().filter(|d| d.measured > 0).count() > 1;
        let mut judged: HashSet<usize> = HashSet::new();
        let mut samples: Vec<Vec<f64>> = vec![Vec::new(); devices];
        let mut in_full = 0;
        for _ in 0..ROUNDS {
            let sel = select(ledger, plan)?;
            let Some(judge) = self.judge_device() else {
                return Ok(sel);
            };
            // Of the contenders a stop left with one launch, the first FINALISTS of the band (the
            // winner first): configs of one time can tie by the hundred.
            // A record from the database timed by one launch (a run interrupted or stopped with
            // it on the shortlist) is such a contender too.
            let one_launch = |r: &ConfigResult| r.from_db && r.stats().is_some_and(|s| !s.raced && s.samples < opts.bench.min_reps.max(2));
            let mut unmeasured_left = if opts.cancelled() { 0 } else { FINALISTS };
            let todo: Vec<usize> = contenders(ledger, plan, &sel, several)
                .into_iter()
                .filter(|&i| !judged.contains(&i))
                .filter(|&i| {
                    let r = &ledger.results[&plan.cands[i].config.key()];
                    let unmeasured = unmeasured_left > 0 && (self.settled_unmeasured.contains(&i) || one_launch(r));
                    unmeasured_left -= usize::from(unmeasured);
                    (!r.from_db && ((several && r.device.is_some_and(|d| d != judge)) || (!r.verified && ledger.reference.is_some()))) || unmeasured
                })
                .collect();
            if todo.is_empty() {
                break;
            }
            for i in todo {
                judged.insert(i);
                let key = plan.cands[i].config.key();
                let before = ledger.results[&key].clone();
                let kernel = match self.kernel_of(i) {
                    Ok(k) => k,
                    Err(e) => {
                        ledger.replace(ConfigResult { outcome: ResultOutcome::Failed { kind: e.kind(), message: e.to_string() }, ..before });
                        continue;
                    }
                };
                // Verified before on the judge (a config left on the shortlist): its times are
                // what is wanted, not its outputs again.
                let again = before.verified && !(several && before.device.is_some_and(|d| d != judge));
                let reference = if again { None } else { ledger.reference.clone() };
                let verified = before.verified || reference.is_some();
                in_full += usize::from(self.settled_unmeasured.remove(&i) || one_launch(&before));
                // Killed for memory twice (see `Coordinator::run_one_past_oom_kill`), the times
                // measured before stand.
                let job = || Job::in_full(i, kernel.clone(), plan.cands[i].launch, reference.clone(), Purpose::Final);
                let Some(answer) = self.run_one_past_oom_kill(ledger, judge, i, job) else { break };
                let Done::Measured { result, .. } = answer.done else { continue };
                if let Some(e) = result.as_ref().err().filter(|e| e.oom_killed_worker()) {
                    let unverified = if verified && !before.verified { ", still unverified" } else { "" };
                    ledger.notes.push(format!(
                        "the final round could not measure {} on device {judge}: the system's out-of-memory killer ended the worker twice ({e}); the times measured before stand{unverified}",
                        plan.cands[i].config
                    ));
                    continue;
                }
                if let Some(e) = result.as_ref().err().filter(|e| e.device_unusable()) {
                    // No config can run there now: the times measured before stand.
                    let why = e.to_string();
                    self.lose(ledger, judge, why.clone());
                    ledger.notes.push(format!("the final round stopped on device {judge}: {why}; the pick uses the times measured before"));
                    break;
                }
                let outcome = match result {
                    Ok(stats) => {
                        if let (Some(d), Some(old)) = (before.device, before.stats()) {
                            if d != judge && stats.mean > 0.0 {
                                samples[d].push(old.mean / stats.mean);
                            }
                        }
                        ResultOutcome::Measured { stats }
                    }
                    Err(e) => ResultOutcome::Failed { kind: e.kind(), message: format!("in the final round: {e}") },
                };
                ledger.devices[judge].measured += 1;
                let device = before.device.map(|_| judge);
                // Measured by this run now (a database record measured again is written back).
                ledger.replace(ConfigResult { outcome, device, verified, usage: Some(kernel.usage.clone()), from_db: false, ..before });
            }
            if opts.cancelled() {
                break;
            }
        }
        if in_full > 0 {
            ledger.notes.push(format!(
                "final round: {in_full} contender(s) timed by one verification launch each (left so when the search stopped, here or in an earlier run), measured in full before the pick"
            ));
        }
        self.ratio_report(ledger, &samples);
        select(ledger, plan)
    }

    /// Each device's time ratio to the judge: the median over the configs both measured (the
    /// calibration config and the re-measured finalists).
    fn ratio_report(&self, ledger: &mut Ledger<'_>, samples: &[Vec<f64>]) {
        for (d, s) in samples.iter().enumerate() {
            let mut all = s.clone();
            if let Some((r, 1)) = ledger.devices[d].ratio {
                all.push(r);
            }
            if all.is_empty() {
                continue;
            }
            all.sort_by(f64::total_cmp);
            ledger.devices[d].ratio = Some((all[all.len() / 2], all.len()));
        }
    }
}

/// The configs whose standing the final round settles: the tie band, and with several devices
/// every config within [`MARGIN`] of the best (on the judge's scale), best first.
fn contenders(ledger: &Ledger<'_>, plan: &crate::run::candidates::Plan, sel: &Selected, several: bool) -> Vec<usize> {
    let index = |k: &str| plan.cands.iter().position(|c| c.config.key() == k);
    let mut out: Vec<usize> = sel.tie_band.iter().filter_map(|c| index(&c.key())).collect();
    if several {
        let best = sel.best_mean;
        let mut near: Vec<(f64, usize)> = plan
            .cands
            .iter()
            .enumerate()
            .filter_map(|(i, c)| {
                let r = ledger.results.get(&c.config.key())?;
                let s = ledger.normalized(r)?;
                (!s.raced && s.mean <= best * (1.0 + MARGIN)).then_some((s.mean, i))
            })
            .collect();
        near.sort_by(|a, b| a.0.total_cmp(&b.0));
        for (_, i) in near.into_iter().take(FINALISTS) {
            if !out.contains(&i) {
                out.push(i);
            }
        }
    }
    out
}
