//! Simulation mode: a strategy searches a recorded space, the record answers.
//!
//! Each evaluation asks the strategy for a config and answers with its recorded time (or
//! failure). With noise, an answer is measured like a real config: the core's
//! [`measure`] draws launches from the config's recorded repetitions,
//! races against the best so far, and the current pick is the tuner's tie-band
//! [`select`]; its *true* (recorded mean) time is what is scored. The
//! score after each evaluation is the fraction of optimum: recorded optimum ÷ true time of the
//! current pick (1.0 = the best config of the space found).

use crate::measure::select::{select, Entrant};
use crate::measure::stats::{measure, Stats};
use crate::search::strategy::{by_name, Candidates, Outcome};
use crate::sim::recorded::RecordedSpace;
use crate::spec::settings::BenchOptions;
use crate::FailureKind;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use serde::Serialize;

/// Fraction of optimum after each of `budget` evaluations (padded with the last value when the
/// strategy stops early).
pub fn trace(space: &RecordedSpace, strategy: &str, budget: usize, seed: u64, noise: bool) -> Result<Vec<f64>, String> {
    let mut strat = by_name(strategy, seed)?;
    let cands = Candidates { params: &space.params, coords: &space.coords };
    let opt = space.optimum();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0x9e37_79b9_7f4a_7c15);
    let mut seen = vec![false; space.len()];
    let mut measured: Vec<(usize, Stats)> = Vec::new();
    let mut best_obs: Option<Stats> = None;
    let mut out = Vec::with_capacity(budget);
    let opts = BenchOptions { max_reps: 32, max_seconds: f64::INFINITY, ..Default::default() };
    let mut current = f64::INFINITY;
    while out.len() < budget {
        let asked = strat.ask(&cands, budget - out.len());
        if asked.is_empty() {
            break;
        }
        for i in asked {
            if i >= space.len() {
                return Err(format!("strategy `{strategy}` proposed index {i} outside the space"));
            }
            let outcome = match space.times[i] {
                None => Outcome::Failed(FailureKind::Other),
                Some(t) if !noise || space.samples[i].is_empty() => {
                    let s = Stats::from_samples(&[t], false);
                    if best_obs.as_ref().is_none_or(|b| t < b.mean) {
                        best_obs = Some(s.clone());
                    }
                    measured.push((i, s));
                    Outcome::Time(t)
                }
                Some(_) => {
                    let samples = &space.samples[i];
                    let (s, _) = measure(&opts, best_obs.as_ref(), &[], |n| Ok((0..n).map(|_| samples[rng.random_range(0..samples.len())]).collect()))
                        .map_err(|e| e.to_string())?;
                    if !s.raced && best_obs.as_ref().is_none_or(|b| s.mean < b.mean) {
                        best_obs = Some(s.clone());
                    }
                    let mean = s.mean;
                    measured.push((i, s));
                    Outcome::Time(mean)
                }
            };
            if !seen[i] {
                seen[i] = true;
                out.push(f64::NAN);
            }
            strat.tell(i, &outcome);
            // The current pick: the fastest seen, or with noise the tuner's tie-band rule.
            let pick = if noise {
                let entrants: Vec<Entrant<'_>> =
                    measured.iter().map(|(ci, s)| Entrant { order: *ci, is_default: false, resource_score: None, stats: s }).collect();
                select(&entrants, opts.tie_tolerance).map(|sel| measured[sel.winner].0)
            } else {
                measured.iter().min_by(|a, b| a.1.mean.total_cmp(&b.1.mean)).map(|m| m.0)
            };
            current = pick.and_then(|p| space.times[p]).map_or(0.0, |t| opt / t);
            if let Some(last) = out.last_mut() {
                *last = current;
            }
            if out.len() >= budget {
                break;
            }
        }
    }
    out.resize(budget, current);
    Ok(out)
}

/// Mean and spread of the fraction of optimum over `repeats` seeds.
#[derive(Clone, Debug, Serialize)]
pub struct Score {
    /// Strategy name.
    pub strategy: String,
    /// Space name.
    pub space: String,
    /// Mean fraction of optimum after each evaluation (index 0 = after the first).
    pub mean: Vec<f64>,
    /// Standard deviation over seeds, after each evaluation.
    pub std: Vec<f64>,
    /// Seeds run.
    pub repeats: usize,
}

impl Score {
    /// Mean and std after `n` evaluations.
    pub fn at(&self, n: usize) -> (f64, f64) {
        let i = n.clamp(1, self.mean.len()) - 1;
        (self.mean[i], self.std[i])
    }
}

/// Runs `repeats` seeds (in parallel) and summarises.
pub fn score(space: &RecordedSpace, strategy: &str, budget: usize, repeats: usize, seed: u64, noise: bool) -> Result<Score, String> {
    let traces: Vec<Vec<f64>> =
        (0..repeats as u64).into_par_iter().map(|r| trace(space, strategy, budget, seed.wrapping_add(r * 7919), noise)).collect::<Result<_, _>>()?;
    let n = traces.len().max(1) as f64;
    let mean: Vec<f64> = (0..budget).map(|k| traces.iter().map(|t| t[k]).sum::<f64>() / n).collect();
    let std: Vec<f64> = (0..budget).map(|k| (traces.iter().map(|t| (t[k] - mean[k]).powi(2)).sum::<f64>() / n).sqrt()).collect();
    Ok(Score { strategy: strategy.into(), space: space.name.clone(), mean, std, repeats })
}
