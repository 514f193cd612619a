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
use crate::measure::stats::{measure, PriorLaunches, Stats};
use crate::search::pipeline::{capacity, spent_or_expected, Spent};
use crate::search::prior::{Prior, PriorBuilder, Record};
use crate::search::strategy::{by_name, Candidates, Outcome, Strategy};
use crate::sim::recorded::RecordedSpace;
use crate::spec::settings::BenchOptions;
use crate::FailureKind;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use serde::Serialize;

/// How many proposals a simulated search keeps in flight (asked, not yet told).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flight {
    /// This many; 1 is a strictly sequential search. (A `usize` converts to this.)
    Fixed(usize),
    /// As many as a tune with this many compile threads keeps
    /// ([`crate::search::pipeline::capacity`]): as many as keep the slower of compiling and
    /// measuring busy, by the recorded compile and evaluation seconds (Kernel Tuner's
    /// `compile_time`, and `benchmark_time` plus `verification_time`) of the configs told so
    /// far; before an outcome is in, by the seconds the strategy expects from its priors
    /// ([`Strategy::expected_seconds`]), else one and a half per thread; never fewer than 2. A
    /// space without recorded seconds keeps one and a half per thread after the first outcome
    /// (and before it, where the strategy expects no seconds).
    Jobs(usize),
}

impl From<usize> for Flight {
    fn from(n: usize) -> Flight {
        Flight::Fixed(n)
    }
}

impl std::str::FromStr for Flight {
    type Err = String;
    /// `N` for [`Flight::Fixed`], `jN` for [`Flight::Jobs`] (the examples' `IN_FLIGHT` argument).
    fn from_str(s: &str) -> Result<Flight, String> {
        let bad = || format!("`{s}` is neither a count of proposals in flight (`6`) nor compile threads (`j4`)");
        match s.strip_prefix('j') {
            Some(n) => n.parse().map(Flight::Jobs).map_err(|_| bad()),
            None => s.parse().map(Flight::Fixed).map_err(|_| bad()),
        }
    }
}

impl std::fmt::Display for Flight {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Flight::Fixed(n) => write!(f, "{n} in flight"),
            Flight::Jobs(n) => write!(f, "in flight as a tune with -j {n} keeps them"),
        }
    }
}

impl Flight {
    /// How many an adaptive search without priors' seconds keeps in flight before any outcome
    /// is in.
    pub fn first(self) -> usize {
        self.now((0.0, 0), (0.0, 0), None, true)
    }

    /// How many to keep in flight, given the seconds spent on the configs told so far, those
    /// the strategy expects before any are ([`Strategy::expected_seconds`]) and whether it
    /// adapts to outcomes (a tune queues all of a non-adaptive one's).
    fn now(self, compile: Spent, eval: Spent, expected: Option<(f64, f64)>, adaptive: bool) -> usize {
        match self {
            Flight::Fixed(n) => n.max(1),
            Flight::Jobs(threads) => {
                let (compile, eval) = spent_or_expected(compile, eval, expected);
                capacity(compile, eval, threads.max(1), adaptive).max(2)
            }
        }
    }
}

/// Fraction of optimum after each of `budget` evaluations (padded with the last value when the
/// strategy stops early). `parallel` emulates the tuner's pipeline: up to that many proposals
/// are in flight (asked, not yet told), and outcomes come back oldest first; 1 is a strictly
/// sequential search.
pub fn trace(space: &RecordedSpace, strategy: &str, budget: usize, seed: u64, noise: bool, parallel: impl Into<Flight>) -> Result<Vec<f64>, String> {
    trace_with(space, by_name(strategy, seed)?, budget, seed, noise, parallel)
}

/// [`trace`] of a strategy already made (one with priors, say).
pub fn trace_with(
    space: &RecordedSpace,
    strat: Box<dyn Strategy>,
    budget: usize,
    seed: u64,
    noise: bool,
    parallel: impl Into<Flight>,
) -> Result<Vec<f64>, String> {
    trace_counted(space, strat, budget, seed, noise, parallel).map(|t| t.trace)
}

/// One simulated run, counted: its trace and what its proposals were.
#[derive(Clone, Debug, PartialEq)]
pub struct Counted {
    /// The fraction of optimum after each evaluation ([`trace_with`]).
    pub trace: Vec<f64>,
    /// Proposals the strategy withdrew before they were measured ([`Strategy::still_wanted`]:
    /// in a tune, each a compile that was not measured).
    pub withdrawn: usize,
    /// Evaluations the sources' ranking proposed ([`Strategy::proposed_by`],
    /// [`crate::search::proposer::from_priors`]; 0 for a strategy without priors).
    pub from_sources: usize,
    /// Whether the sources' ranking proposed the run's final pick.
    pub pick_from_sources: bool,
}

/// [`trace_with`], counted ([`Counted`]).
pub fn trace_counted(
    space: &RecordedSpace,
    mut strat: Box<dyn Strategy>,
    budget: usize,
    seed: u64,
    noise: bool,
    parallel: impl Into<Flight>,
) -> Result<Counted, String> {
    let strategy = strat.name();
    let cands = Candidates { params: &space.params, coords: &space.coords };
    let mut st = Oracle::new(space, seed, noise);
    let flight: Flight = parallel.into();
    // The recorded compile and evaluation seconds of the configs told so far (for `Flight::Jobs`).
    let (mut compile, mut eval): (Spent, Spent) = ((0.0, 0), (0.0, 0));
    let timed = space.eval_s.iter().any(Option::is_some);
    let mut in_flight: std::collections::VecDeque<usize> = Default::default();
    let mut queued = vec![false; space.len()];
    let mut idle = 0;
    let mut withdrawn = 0;
    // The evaluations the sources' ranking proposed.
    let mut by_sources = vec![false; space.len()];
    while st.out.len() < budget {
        // Keep `parallel` proposals in flight, within the budget.
        // The strategy's expected seconds stand in for a tune's own until it has timed an
        // evaluation; a space that recorded none never does, so there they stand in only until
        // the first outcome (a tune would time its own then).
        let expected = strat.expected_seconds().filter(|_| timed || st.out.is_empty());
        let parallel = flight.now(compile, eval, expected, strat.adaptive());
        while in_flight.len() < parallel && st.out.len() + in_flight.len() < budget && idle < 1000 {
            let free = (parallel - in_flight.len()).min(budget - st.out.len() - in_flight.len());
            let asked = strat.ask(&cands, free);
            if asked.is_empty() {
                break;
            }
            let mut fresh = 0;
            for i in asked {
                if i >= space.len() {
                    return Err(format!("strategy `{strategy}` proposed index {i} outside the space"));
                }
                if st.seen[i] {
                    let o = st.outcome(i)?;
                    strat.tell(i, &o);
                } else if !queued[i] && st.out.len() + in_flight.len() < budget {
                    queued[i] = true;
                    in_flight.push_back(i);
                    fresh += 1;
                }
            }
            idle = if fresh == 0 { idle + 1 } else { 0 };
        }
        let Some(i) = in_flight.pop_front() else { break };
        // About to be measured: a strategy that has learnt since may withdraw it.
        if !st.seen[i] && !strat.still_wanted(&cands, i) {
            queued[i] = false;
            withdrawn += 1;
            continue;
        }
        let o = st.outcome(i)?;
        st.seen[i] = true;
        by_sources[i] = strat.proposed_by(i).is_some_and(|tag| crate::search::proposer::from_priors(&tag));
        st.out.push(f64::NAN);
        if let Some(c) = space.compile_s[i] {
            compile = (compile.0 + c, compile.1 + 1);
        }
        if let (Some(e), Some(_)) = (space.eval_s[i], space.times[i]) {
            eval = (eval.0 + e, eval.1 + 1);
        }
        strat.tell(i, &o);
        st.score_pick();
    }
    let current = st.current;
    let pick_from_sources = st.pick.is_some_and(|p| by_sources[p]);
    let mut out = st.out;
    out.resize(budget, current);
    Ok(Counted { trace: out, withdrawn, from_sources: by_sources.iter().filter(|&&b| b).count(), pick_from_sources })
}

/// The recorded space answering a simulated search, and the score of its current pick.
struct Oracle<'s> {
    space: &'s RecordedSpace,
    noise: bool,
    rng: rand_chacha::ChaCha8Rng,
    seen: Vec<bool>,
    measured: Vec<(usize, Stats)>,
    best_obs: Option<Stats>,
    opts: BenchOptions,
    opt: f64,
    current: f64,
    /// The current pick (a candidate), once one was measured.
    pick: Option<usize>,
    out: Vec<f64>,
}

impl<'s> Oracle<'s> {
    fn new(space: &'s RecordedSpace, seed: u64, noise: bool) -> Oracle<'s> {
        Oracle {
            space,
            noise,
            rng: rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0x9e37_79b9_7f4a_7c15),
            seen: vec![false; space.len()],
            measured: Vec::new(),
            best_obs: None,
            // Samples are drawn from one recorded measurement's repetitions, which hold no
            // run-to-run part: no floor on the intervals racing compares.
            opts: BenchOptions { max_reps: 32, max_seconds: f64::INFINITY, run_to_run: 0.0, ..Default::default() },
            opt: space.optimum(),
            current: f64::INFINITY,
            pick: None,
            out: Vec::new(),
        }
    }

    /// Config `i` as the tuner would see it: its recorded time, or with noise a measurement
    /// drawn from its recorded repetitions (raced against the best so far).
    fn outcome(&mut self, i: usize) -> Result<Outcome, String> {
        let space = self.space;
        Ok(match space.times[i] {
            None => Outcome::Failed(FailureKind::Other),
            Some(t) if !self.noise || space.samples[i].is_empty() => {
                let s = Stats::from_samples(&[t], false);
                if self.best_obs.as_ref().is_none_or(|b| t < b.mean) {
                    self.best_obs = Some(s.clone());
                }
                self.measured.push((i, s));
                Outcome::Time(t)
            }
            Some(_) => {
                let samples = &space.samples[i];
                let rng = &mut self.rng;
                let (s, _) = measure(&self.opts, self.best_obs.as_ref(), PriorLaunches::default(), |n| {
                    Ok((0..n).map(|_| samples[rng.random_range(0..samples.len())]).collect())
                })
                .map_err(|e| e.to_string())?;
                if !s.raced && self.best_obs.as_ref().is_none_or(|b| s.mean < b.mean) {
                    self.best_obs = Some(s.clone());
                }
                let mean = s.mean;
                self.measured.push((i, s));
                Outcome::Time(mean)
            }
        })
    }

    /// Scores the current pick after an evaluation: the fastest seen, or with noise the
    /// tuner's tie-band rule; its true (recorded) time against the optimum.
    fn score_pick(&mut self) {
        let pick = if self.noise {
            let entrants: Vec<Entrant<'_>> =
                self.measured.iter().map(|(ci, s)| Entrant { order: *ci, is_default: false, resource_score: None, stats: s }).collect();
            select(&entrants, self.opts.tie_tolerance).map(|sel| self.measured[sel.winner].0)
        } else {
            self.measured.iter().min_by(|a, b| a.1.mean.total_cmp(&b.1.mean)).map(|m| m.0)
        };
        self.pick = pick;
        self.current = pick.and_then(|p| self.space.times[p]).map_or(0.0, |t| self.opt / t);
        if let Some(last) = self.out.last_mut() {
            *last = self.current;
        }
    }
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
    /// The 5th percentile over seeds (the unlucky seeds), after each evaluation.
    pub p5: Vec<f64>,
    /// Seeds run.
    pub repeats: usize,
    /// Proposals withdrawn before they were measured, on the mean over seeds (only with
    /// proposals in flight; in a tune, each is a compile that was not measured).
    #[serde(skip_serializing_if = "crate::store::db::is_zero")]
    pub withdrawn: f64,
    /// Evaluations the sources' ranking proposed, on the mean over seeds (a search that learns
    /// from priors; 0 otherwise).
    #[serde(skip_serializing_if = "crate::store::db::is_zero")]
    pub from_sources: f64,
    /// The share of seeds whose final pick the sources' ranking proposed.
    #[serde(skip_serializing_if = "crate::store::db::is_zero")]
    pub pick_from_sources: f64,
}

impl Score {
    /// Mean and std after `n` evaluations.
    pub fn at(&self, n: usize) -> (f64, f64) {
        let i = n.clamp(1, self.mean.len()) - 1;
        (self.mean[i], self.std[i])
    }

    /// The 5th percentile after `n` evaluations.
    pub fn p5_at(&self, n: usize) -> f64 {
        self.p5[n.clamp(1, self.p5.len()) - 1]
    }
}

/// Simulated runs (one seed of one strategy on one space, in [`score`], [`score_transfer`],
/// [`leave_one_out`] and [`crate::sim::schedule::compare`]) finished in this process so far:
/// a count a progress display can read while the seeds run in parallel.
pub fn runs_finished() -> usize {
    RUNS_FINISHED.load(std::sync::atomic::Ordering::Relaxed)
}

static RUNS_FINISHED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Counts one more finished run (see [`runs_finished`]).
pub(crate) fn run_finished() {
    RUNS_FINISHED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

/// Runs `repeats` seeds (in parallel) and summarises.
pub fn score(
    space: &RecordedSpace,
    strategy: &str,
    budget: usize,
    repeats: usize,
    seed: u64,
    noise: bool,
    parallel: impl Into<Flight>,
) -> Result<Score, String> {
    by_name(strategy, seed)?;
    score_with(space, strategy, |s| by_name(strategy, s).expect("checked above"), budget, repeats, seed, noise, parallel)
}

/// [`score`] of strategies `make` builds for each seed, reported as `label`.
#[allow(clippy::too_many_arguments)]
pub fn score_with(
    space: &RecordedSpace,
    label: &str,
    make: impl Fn(u64) -> Box<dyn Strategy> + Sync,
    budget: usize,
    repeats: usize,
    seed: u64,
    noise: bool,
    parallel: impl Into<Flight>,
) -> Result<Score, String> {
    let parallel: Flight = parallel.into();
    let counted: Vec<Counted> = (0..repeats as u64)
        .into_par_iter()
        .map(|r| {
            let s = seed.wrapping_add(r * 7919);
            let run = trace_counted(space, make(s), budget, s, noise, parallel);
            run_finished();
            run
        })
        .collect::<Result<_, _>>()?;
    let n = counted.len().max(1) as f64;
    let withdrawn = counted.iter().map(|t| t.withdrawn as f64).sum::<f64>() / n;
    let from_sources = counted.iter().map(|t| t.from_sources as f64).sum::<f64>() / n;
    let pick_from_sources = counted.iter().filter(|t| t.pick_from_sources).count() as f64 / n;
    let traces: Vec<Vec<f64>> = counted.into_iter().map(|t| t.trace).collect();
    let (mean, std, p5) = over_seeds(&traces, budget);
    Ok(Score { strategy: label.into(), space: space.name.clone(), mean, std, p5, repeats, withdrawn, from_sources, pick_from_sources })
}

/// The mean, standard deviation and 5th percentile over the seeds' `curves` at each of their
/// first `points` points.
pub(crate) fn over_seeds(curves: &[Vec<f64>], points: usize) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let n = curves.len().max(1) as f64;
    let mean: Vec<f64> = (0..points).map(|k| curves.iter().map(|t| t[k]).sum::<f64>() / n).collect();
    let std: Vec<f64> = (0..points).map(|k| (curves.iter().map(|t| (t[k] - mean[k]).powi(2)).sum::<f64>() / n).sqrt()).collect();
    let p5: Vec<f64> = (0..points)
        .map(|k| {
            let mut v: Vec<f64> = curves.iter().map(|t| t[k]).collect();
            v.sort_by(f64::total_cmp);
            // The nearest rank: the value below which about 5 % of the seeds fall.
            v.get(((0.05 * v.len() as f64).ceil() as usize).saturating_sub(1).min(v.len().saturating_sub(1))).copied().unwrap_or(0.0)
        })
        .collect();
    (mean, std, p5)
}

/// The prior a held-out space's tune would have: every other space's measurements, lined up
/// with the held-out space's configs by parameter values.
pub fn prior_for(held: &RecordedSpace, others: &[&RecordedSpace]) -> Prior {
    let cands = Candidates { params: &held.params, coords: &held.coords };
    let mut b = PriorBuilder::new(&cands);
    for o in others {
        let names: Vec<String> = o.params.iter().map(|p| p.name.clone()).collect();
        let records = (0..o.len()).map(|i| -> Record {
            let values = o.params.iter().zip(&o.coords[i]).map(|(p, &c)| (p.name.clone(), p.values[c as usize].clone())).collect();
            (values, o.times[i].ok_or_else(|| o.failures[i].clone().unwrap_or_default()))
        });
        let name = if o.device.is_empty() { o.name.clone() } else { o.device.clone() };
        if b.add(&name, &names, records) {
            let values = |i: usize| o.params.iter().zip(&o.coords[i]).map(|(p, &c)| (p.name.clone(), p.values[c as usize].clone())).collect();
            b.add_compile((0..o.len()).filter_map(|i| o.compile_s[i].map(|c| (values(i), c))));
            b.add_seconds((0..o.len()).filter(|&i| o.times[i].is_some()).map(|i| (o.compile_s[i], o.eval_s[i])));
        }
    }
    b.build()
}

/// [`score`] of the adaptive transfer search ([`crate::search::Transfer`]) learning from
/// `prior`, falling back to the search `base` (reported as `transfer`), with `parallel`
/// proposals in flight (see [`trace`]).
pub fn score_transfer(
    held: &RecordedSpace,
    prior: &std::sync::Arc<Prior>,
    base: &str,
    budget: usize,
    repeats: usize,
    seed: u64,
    parallel: impl Into<Flight>,
) -> Result<Score, String> {
    by_name(base, seed)?;
    let adaptive =
        |s: u64| -> Box<dyn Strategy> { Box::new(crate::search::Transfer::adaptive(prior.clone(), || by_name(base, s), Some(budget)).expect("checked above")) };
    score_with(held, "transfer", adaptive, budget, repeats, seed, false, parallel)
}

/// The recorded spaces in `dir` (`.json`, `.json.gz`), grouped by kernel: the part of the file
/// name before its first `_` (`convolution_A100.json.gz` is the convolution on an A100), in
/// file name order.
pub fn spaces_by_kernel(dir: &std::path::Path) -> Result<std::collections::BTreeMap<String, Vec<RecordedSpace>>, String> {
    let mut files: Vec<_> = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?.filter_map(|e| e.ok().map(|e| e.path())).collect();
    files.sort();
    let mut kernels: std::collections::BTreeMap<String, Vec<RecordedSpace>> = Default::default();
    for f in files.iter().filter(|f| f.to_string_lossy().ends_with(".json.gz") || f.extension().is_some_and(|e| e == "json")) {
        let kernel = f.file_name().unwrap_or_default().to_string_lossy().split('_').next().unwrap_or_default().to_string();
        kernels.entry(kernel).or_default().push(RecordedSpace::load(f).map_err(|e| format!("{}: {e}", f.display()))?);
    }
    Ok(kernels)
}

/// How a held-out space is searched in [`leave_one_out`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PriorKind {
    /// The search without priors.
    None,
    /// Plain transfer: each source's best in turn.
    Plain,
    /// The adaptive transfer search ([`crate::search::Transfer`]) over the search without priors.
    Adaptive,
}

/// Each space in turn as the device never seen, with the others as its priors: the scores of
/// the search without priors (`base`), of plain transfer and of the adaptive transfer search.
/// A space no other one can be a prior of (another parameter space) is not held out: it is
/// returned second, with the reason its would-be sources were refused. `parallel` proposals
/// are kept in flight (see [`trace`]), as a tune with that many compile threads does.
#[allow(clippy::type_complexity)]
pub fn leave_one_out(
    spaces: &[RecordedSpace],
    base: &str,
    budget: usize,
    repeats: usize,
    seed: u64,
    parallel: impl Into<Flight>,
) -> Result<(Vec<(PriorKind, Score)>, Vec<(String, String)>), String> {
    by_name(base, seed)?;
    let parallel: Flight = parallel.into();
    let mut out = Vec::new();
    let mut alone = Vec::new();
    for (h, held) in spaces.iter().enumerate() {
        let others: Vec<&RecordedSpace> = spaces.iter().enumerate().filter(|(o, _)| *o != h).map(|(_, s)| s).collect();
        let prior = std::sync::Arc::new(prior_for(held, &others));
        if prior.is_empty() {
            alone.push((held.name.clone(), prior.refused.first().cloned().unwrap_or_else(|| "no other space".into())));
            continue;
        }
        out.push((PriorKind::None, score(held, base, budget, repeats, seed, false, parallel)?));
        let p = prior.clone();
        out.push((
            PriorKind::Plain,
            score_with(held, "plain transfer", move |_| Box::new(crate::search::PlainTransfer::new(p.clone())), budget, repeats, seed, false, parallel)?,
        ));
        out.push((PriorKind::Adaptive, score_transfer(held, &prior, base, budget, repeats, seed, parallel)?));
    }
    Ok((out, alone))
}

#[cfg(test)]
mod tests {
    use super::Flight;

    #[test]
    fn a_flight_of_jobs_follows_the_tunes_count() {
        let none = (0.0, 0);
        assert_eq!(Flight::from(3).now(none, none, None, true), 3);
        assert_eq!(Flight::Fixed(0).now(none, none, None, true), 1);
        // One and a half per compile thread before anything is timed, never fewer than 2.
        assert_eq!(Flight::Jobs(16).now(none, none, None, true), 24);
        assert_eq!(Flight::Jobs(4).now(none, none, None, true), 6);
        assert_eq!(Flight::Jobs(1).now(none, none, None, true), 2);
        assert_eq!(Flight::Jobs(16).first(), 24);
        // Compiling bounds a tune (2.3 s a compile, 0.06 s an evaluation): all of them.
        assert_eq!(Flight::Jobs(16).now((2.3, 1), (0.06, 1), None, true), 24);
        // Measuring bounds it (0.3 s against 6 s): one compiling ahead of one measured, and one
        // spare.
        assert_eq!(Flight::Jobs(16).now((0.3, 1), (6.0, 1), None, true), 3);
        // Between the two: compile ÷ evaluation, rounded up, plus 2 (1.06 s ÷ 0.21 s).
        assert_eq!(Flight::Jobs(16).now((1.06, 1), (0.21, 1), None, true), 8);
        // A strategy that does not adapt has its whole budget queued.
        assert_eq!(Flight::Jobs(4).now(none, none, None, false), usize::MAX);
        // A strategy whose priors say measuring bounds the tune (0.3 s against 6 s): 3 before
        // any outcome, then by what was told; a fixed count ignores them.
        assert_eq!(Flight::Jobs(16).now(none, none, Some((0.3, 6.0)), true), 3);
        assert_eq!(Flight::Jobs(16).now((2.3, 1), (0.06, 1), Some((0.3, 6.0)), true), 24);
        assert_eq!(Flight::Fixed(24).now(none, none, Some((0.3, 6.0)), true), 24);
        assert_eq!("j16".parse::<Flight>(), Ok(Flight::Jobs(16)));
        assert_eq!("3".parse::<Flight>(), Ok(Flight::Fixed(3)));
        assert!("x".parse::<Flight>().unwrap_err().contains("`x` is neither"));
    }
}
