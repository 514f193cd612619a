//! Measuring configs twice in one tune (`--recheck N`, [`TuneOptions::recheck`]): after the
//! final round, the winner's tie band and `N` other configs measured in this tune (chosen by the
//! seed) are measured again on the judging device, without racing, and the report says whether
//! each second mean fell inside the first measurement's reported 95 % interval. It is the
//! check of what a reported interval promises; the measurements the winner was picked by are
//! left as they were.
//!
//! [`TuneOptions::recheck`]: crate::run::TuneOptions::recheck

use crate::backend::Backend;
use crate::measure::Stats;
use crate::run::device::{Done, Job, Purpose};
use crate::run::ledger::Ledger;
use crate::run::persist::Selected;
use crate::run::search_loop::Coordinator;
use crate::space::Config;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde::Serialize;

/// One config measured twice.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RecheckRow {
    /// The config.
    pub config: Config,
    /// In the winner's tie band.
    pub tie_band: bool,
    /// Its place in the order the tune measured configs (0 first), when known.
    pub seq: Option<usize>,
    /// The measurement the tune used.
    pub first: Stats,
    /// The measurement at the end.
    pub second: Stats,
    /// `|second.mean - first.mean| <= first.ci_half`.
    pub inside: bool,
}

/// What measuring twice found.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Recheck {
    /// Every config measured twice, tie band first.
    pub rows: Vec<RecheckRow>,
    /// How many second means fell inside the first's interval.
    pub inside: usize,
    /// Configs that could not be measured again (a failure now), by config.
    pub failed: Vec<String>,
    /// Configs not measured again because the system's out-of-memory killer ended the worker
    /// each of the two times it ran one (the machine's memory, not the config: not a failure).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub killed: Vec<String>,
}

impl Recheck {
    /// The one line the report prints.
    pub fn line(&self) -> String {
        let n = self.rows.len();
        let killed = match self.killed.len() {
            0 => String::new(),
            k => format!(
                "; {k} not measured again: the system's out-of-memory killer ended the worker each of the two times it ran {} ({}), the machine's memory and not the config's doing",
                if k == 1 { "it" } else { "each" },
                self.killed.join(", ")
            ),
        };
        if n == 0 {
            return format!("recheck: no config with an interval measured again{killed}");
        }
        let tie: Vec<&RecheckRow> = self.rows.iter().filter(|r| r.tie_band).collect();
        let shifts: Vec<f64> = self.rows.iter().map(|r| (r.second.mean / r.first.mean - 1.0).abs()).collect();
        let mut sorted = shifts.clone();
        sorted.sort_by(f64::total_cmp);
        let (worst, at) = shifts.iter().zip(&self.rows).max_by(|a, b| a.0.total_cmp(b.0)).map(|(s, r)| (*s, r.config.to_string())).unwrap_or_default();
        let mut line = format!(
            "recheck: {n} configs measured again at the end; the second mean fell inside the first's 95 % interval for {} ({:.0} %; tie band {} of {}); median shift {:.2} %, largest {:.1} % ({at})",
            self.inside,
            100.0 * self.inside as f64 / n as f64,
            tie.iter().filter(|r| r.inside).count(),
            tie.len(),
            100.0 * sorted[n / 2],
            100.0 * worst,
        );
        if !self.failed.is_empty() {
            line.push_str(&format!("; {} failed when measured again ({})", self.failed.len(), self.failed.join(", ")));
        }
        line.push_str(&killed);
        line
    }
}

impl<B: Backend> Coordinator<'_, B> {
    /// Measures the tie band and `n` other configs again (see the module docs).
    pub fn recheck(&mut self, ledger: &mut Ledger<'_>, sel: &Selected, n: usize, seed: u64) -> Option<Recheck> {
        let plan = self.plan();
        let judge = self.judge_device()?;
        // Configs this tune measured, with an interval (not raced out, two samples or more).
        let first = |i: usize| {
            let r = ledger.results.get(&plan.cands[i].config.key())?;
            let s = r.stats()?;
            (!r.from_db && !s.raced && s.ci_half.is_finite()).then(|| (s.clone(), r.seq))
        };
        let firsts: Vec<Option<(Stats, Option<usize>)>> = (0..plan.cands.len()).map(first).collect();
        let tie: Vec<usize> =
            sel.tie_band.iter().filter_map(|c| plan.cands.iter().position(|p| p.config.key() == c.key())).filter(|&i| firsts[i].is_some()).collect();
        let mut others: Vec<usize> = (0..plan.cands.len()).filter(|i| !tie.contains(i) && firsts[*i].is_some()).collect();
        others.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0x7265_6368_6563_6b21));
        others.truncate(n);
        let mut out = Recheck::default();
        for (i, in_band) in tie.iter().map(|&i| (i, true)).chain(others.iter().map(|&i| (i, false))) {
            let (before, seq) = firsts[i].clone().expect("chosen with a first measurement");
            let config = plan.cands[i].config.clone();
            let kernel = match self.kernel_of(i) {
                Ok(k) => k,
                Err(e) => {
                    out.failed.push(format!("{config}: {e}"));
                    continue;
                }
            };
            // Killed for memory twice (see `Coordinator::run_one_past_oom_kill`): not measured
            // again, and not a failure.
            let job = || Job::in_full(i, kernel.clone(), plan.cands[i].launch, None, Purpose::Recheck);
            let answer = self.run_one_past_oom_kill(ledger, judge, i, job)?;
            if matches!(&answer.done, Done::Measured { result: Err(e), .. } if e.oom_killed_worker()) {
                out.killed.push(config.to_string());
            } else {
                ledger.devices[judge].measured += 1;
            }
            match answer.done {
                Done::Measured { result: Ok(second), .. } => {
                    let inside = (second.mean - before.mean).abs() <= before.ci_half;
                    out.inside += usize::from(inside);
                    out.rows.push(RecheckRow { config, tie_band: in_band, seq, first: before, second, inside });
                }
                Done::Measured { result: Err(e), .. } if !e.oom_killed_worker() => out.failed.push(format!("{config}: {e}")),
                _ => {}
            }
            if self.parts().1.cancelled() {
                break;
            }
        }
        Some(out)
    }
}
