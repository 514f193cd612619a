//! The compile pipeline's policy, shared by the tuner's search loop and the offline simulation
//! of it (`sim::schedule`): how many proposals to keep in flight ([`capacity`]), whether
//! compiling is the bottleneck ([`compile_bound`]), the order queued compiles start in
//! ([`CompileOrder`]), the model that predicts each config's compile seconds so that they
//! run longest first ([`CompileTimes`]), and what a time limit leaves
//! ([`evaluations_left_in_time`]).

use crate::search::features::encode;
use crate::search::{Candidates, Forest};
use rand::SeedableRng;
use std::collections::BinaryHeap;

/// Seconds summed over a stage, with how many items they cover.
pub type Spent = (f64, usize);

/// How many more evaluations a time limit allows beyond the `flying` in flight, at the pace of
/// the search since its first config was timed: `elapsed` seconds since then over the configs
/// timed since (`timed` in all, the first not counted), `left` seconds to the limit (none when
/// past it); `None` before two configs are timed. Before the first one, the reference, the first
/// compiles and the pipeline's filling make a config look several times slower than the tune
/// then runs. The tuner tells the strategy this before each ask
/// ([`crate::search::Strategy::evaluations_left_in_time`]); the simulation of a time budget too.
pub fn evaluations_left_in_time(elapsed: f64, timed: usize, left: f64, flying: usize) -> Option<usize> {
    let since = timed.checked_sub(1).filter(|&n| n > 0)?;
    let pace = elapsed / since as f64;
    let left = left.max(0.0) / pace.max(1e-9);
    // A float cast to an integer saturates; the estimate is rounded down.
    Some((left as usize).saturating_sub(flying))
}

/// How many candidates to keep in flight. Non-adaptive strategies: all of the budget.
/// Adaptive ones: as many as keep the pipeline's slower stage busy and no more (every config in
/// flight is one the strategy proposes without knowing its outcome). By Little's law that is
/// about compile time ÷ evaluation time when measuring is the bottleneck, and every compile
/// thread plus half as many again (so that a thread finishing a compile finds the next one
/// queued) when compiling is.
pub fn capacity(compile: Spent, eval: Spent, threads: usize, adaptive: bool) -> usize {
    if !adaptive {
        return usize::MAX;
    }
    let most = threads + threads.div_ceil(2);
    match (compile, eval) {
        ((c, nc), (e, ne)) if nc > 0 && ne > 0 && e > 0.0 => {
            let ratio = (c / nc as f64) / (e / ne as f64);
            (ratio.ceil().min(most as f64) as usize + 2).clamp(2, most.max(2))
        }
        _ => most,
    }
}

/// How many proposals keep `devices` busy when compiling takes no time (every one a
/// compile-cache hit): one measuring on each device and one more waiting, at least 2, so that
/// an adaptive search chooses each after nearly every outcome before it is in.
pub fn warm_capacity(devices: usize) -> usize {
    (devices + 1).max(2)
}

/// The seconds to size the pipeline by: what this tune has spent, or, until it has timed an
/// evaluation, what it expects a config to cost (`expected`: compile and evaluation seconds of
/// one config, from the sources of a prior: [`crate::search::Strategy::expected_seconds`]) as
/// one config each. Without an expectation, what it has spent (so [`capacity`] keeps one and a
/// half per thread until both stages are timed).
pub fn spent_or_expected(compile: Spent, eval: Spent, expected: Option<(f64, f64)>) -> (Spent, Spent) {
    match expected {
        Some((c, e)) if eval.1 == 0 => ((c, 1), (e, 1)),
        _ => (compile, eval),
    }
}

/// Whether compiling is the bottleneck: a config's compile, spread over the threads, takes
/// longer than measuring one (true until both have been seen).
pub fn compile_bound(compile: Spent, eval: Spent, threads: usize) -> bool {
    match (compile, eval) {
        ((c, nc), (e, ne)) if nc > 0 && ne > 0 => c / nc as f64 / threads.max(1) as f64 > e / ne as f64,
        _ => true,
    }
}

#[derive(Debug, PartialEq)]
struct Job {
    /// Predicted compile seconds (0 before there is a model: then first in, first out).
    priority: f64,
    seq: u64,
    index: usize,
}

impl Eq for Job {}

impl Ord for Job {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.priority.total_cmp(&o.priority).then(o.seq.cmp(&self.seq))
    }
}

impl PartialOrd for Job {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

/// Candidates waiting to compile: the highest priority (predicted compile seconds) first and,
/// among equals, the first queued.
#[derive(Debug, Default)]
pub struct CompileOrder {
    heap: BinaryHeap<Job>,
    seq: u64,
}

impl CompileOrder {
    /// Queues candidate `index` with its predicted compile seconds.
    pub fn push(&mut self, index: usize, priority: f64) {
        self.seq += 1;
        self.heap.push(Job { priority, seq: self.seq, index });
    }

    /// The next candidate to compile, if any.
    pub fn pop(&mut self) -> Option<usize> {
        self.heap.pop().map(|j| j.index)
    }

    /// Re-keys every queued candidate by `predict` (their order of queueing still breaks ties).
    pub fn reprioritize(&mut self, predict: impl Fn(usize) -> f64) {
        let jobs = std::mem::take(&mut self.heap).into_vec();
        self.heap = jobs.into_iter().map(|j| Job { priority: predict(j.index), ..j }).collect();
    }

    /// Takes candidate `index` out of the queue; whether it was there.
    pub fn remove(&mut self, index: usize) -> bool {
        let before = self.heap.len();
        self.heap.retain(|j| j.index != index);
        self.heap.len() < before
    }

    /// Drops everything queued.
    pub fn clear(&mut self) {
        self.heap.clear();
    }

    /// Candidates queued.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// True when nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

/// Compile seconds predicted from parameter values: the mean of a random forest (it captures
/// thresholds and interactions) and a ridge regression (it extrapolates) on log(seconds).
///
/// It learns from finished compiles (persistent-cache hits left out) and from the compiles
/// still running, which are at least as slow as their elapsed time: without those, the first
/// fits would see only the quickest compiles (they finish first) and could not tell which of
/// the queued configs are slow. A running compile counts as its elapsed time once that exceeds
/// the slowest finished one, the only point from which it says something the finished ones do
/// not. The model is first fitted at 4 compiles, refitted every second compile up to 64, then
/// each time their number doubles (so a long tune refits a handful of times).
pub struct CompileTimes {
    obs: Vec<(usize, f64)>,
    forest: Option<Forest>,
    ridge: Option<crate::search::Ridge>,
    next_fit: usize,
    rng: rand_chacha::ChaCha8Rng,
    /// Per candidate: log of the compile seconds other devices' tunes recorded (NaN where none
    /// did); empty without such a prior.
    prior: Vec<f64>,
    /// The prior's median, for candidates it lacks before the first fit.
    prior_median: f64,
    /// `log seconds here ≈ a + b · prior`, fitted on this tune's compiles.
    calibration: (f64, f64),
}

/// Finished compiles before the first fit.
const FIRST_FIT: usize = 4;
/// Refit after this many new compiles while fewer than [`DENSE_UNTIL`] are known.
const REFIT_EVERY: usize = 2;
const DENSE_UNTIL: usize = 64;
const TREES: usize = 16;

impl CompileTimes {
    /// An empty model; `seed` makes its fits reproducible.
    pub fn new(seed: u64) -> CompileTimes {
        CompileTimes {
            obs: Vec::new(),
            forest: None,
            ridge: None,
            next_fit: FIRST_FIT,
            rng: rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0xc0de),
            prior: Vec::new(),
            prior_median: 0.0,
            calibration: (0.0, 1.0),
        }
    }

    /// With the compile seconds other devices' tunes recorded per candidate (NaN where none
    /// did; see [`crate::search::Prior::compile_s`]). Compile times follow the code and the
    /// compiler, not the device, so the prior orders the first compiles longest first, before
    /// any has finished; once some have, it is rescaled to this machine (a least-squares line
    /// on the logs) and predicts every candidate it covers, the model the others.
    pub fn with_prior(mut self, secs: &[f32]) -> CompileTimes {
        let logs: Vec<f64> = secs.iter().map(|&s| if s.is_finite() && s > 0.0 { f64::from(s).ln() } else { f64::NAN }).collect();
        let mut known: Vec<f64> = logs.iter().copied().filter(|l| l.is_finite()).collect();
        if known.is_empty() {
            return self;
        }
        known.sort_by(f64::total_cmp);
        self.prior_median = known[known.len() / 2];
        self.prior = logs;
        self
    }

    /// Whether a prior of compile times is in use.
    pub fn has_prior(&self) -> bool {
        !self.prior.is_empty()
    }

    fn prior_of(&self, index: usize) -> Option<f64> {
        self.prior.get(index).copied().filter(|p| p.is_finite())
    }

    /// Records a compile of candidate `index` that took `seconds`; true when a refit is due
    /// (call [`CompileTimes::refit`], then re-key queued work).
    pub fn observe(&mut self, index: usize, seconds: f64, cached: bool) -> bool {
        if cached || !seconds.is_finite() || seconds <= 0.0 {
            return false;
        }
        self.obs.push((index, seconds));
        self.obs.len() >= self.next_fit
    }

    /// Refits the model on the finished compiles and on `running` ones (candidate, seconds
    /// elapsed so far); false when there is nothing to learn (nothing varies).
    pub fn refit(&mut self, cands: &Candidates<'_>, running: &[(usize, f64)]) -> bool {
        let n = self.obs.len();
        self.next_fit = if n < DENSE_UNTIL { n + REFIT_EVERY } else { n * 2 };
        let slowest = self.obs.iter().map(|o| o.1).fold(0.0, f64::max);
        let points: Vec<(usize, f64)> =
            self.obs.iter().copied().chain(running.iter().copied().filter(|r| r.1 > slowest)).filter(|p| p.0 < cands.len()).collect();
        let xs: Vec<Vec<f64>> = points.iter().map(|p| encode(cands.params, &cands.coords[p.0])).collect();
        if xs.first().is_none_or(|x| x.is_empty()) {
            return false; // nothing varies: no order to learn
        }
        let ys: Vec<f64> = points.iter().map(|p| p.1.ln()).collect();
        self.forest = Some(Forest::fit(&xs, &ys, TREES, &mut self.rng));
        self.ridge = crate::search::Ridge::fit(&xs, &ys);
        if self.has_prior() {
            let pairs: Vec<(f64, f64)> = points.iter().zip(&ys).filter_map(|(p, &y)| self.prior_of(p.0).map(|x| (x, y))).collect();
            self.calibration = calibrate(&pairs);
        }
        true
    }

    /// Predicted compile seconds of candidate `index` (0 before the first fit, without a prior).
    pub fn predict(&self, cands: &Candidates<'_>, index: usize) -> f64 {
        if self.has_prior() {
            let fitted = self.forest.is_some();
            return match (self.prior_of(index), fitted) {
                (Some(p), false) => p.exp(),
                (Some(p), true) => (self.calibration.0 + self.calibration.1 * p).clamp(-30.0, 30.0).exp(),
                (None, false) => self.prior_median.exp(),
                (None, true) => self.model(cands, index),
            };
        }
        self.model(cands, index)
    }

    /// The model's prediction (0 before the first fit).
    fn model(&self, cands: &Candidates<'_>, index: usize) -> f64 {
        match (&self.forest, cands.coords.get(index)) {
            (Some(f), Some(c)) => {
                let x = encode(cands.params, c);
                let forest = f.predict(&x).0;
                let line = self.ridge.as_ref().map_or(forest, |r| r.predict(&x));
                // Clamped: a linear model far outside what it saw must not overflow.
                ((forest + line) / 2.0).clamp(-30.0, 30.0).exp()
            }
            _ => 0.0,
        }
    }
}

/// `y ≈ a + b·x` by least squares over `(x, y)` pairs, with `b` kept in [0.25, 4] (another
/// machine's compiles may run faster or slower, but longer code compiles longer); with fewer
/// than three pairs, or no spread in `x`, the slope is 1 and only the offset is fitted.
fn calibrate(pairs: &[(f64, f64)]) -> (f64, f64) {
    if pairs.is_empty() {
        return (0.0, 1.0);
    }
    crate::search::ridge::line_fit(pairs.iter().copied(), |sxy, sxx| if pairs.len() >= 3 && sxx > 1e-9 { (sxy / sxx).clamp(0.25, 4.0) } else { 1.0 })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::job::Param;

    #[test]
    fn in_flight_follows_the_slower_stage() {
        // Nothing measured yet: every thread and half as many again.
        assert_eq!(capacity((0.0, 0), (0.0, 0), 16, true), 24);
        // Compiles of 3 s, measurements of 10 ms: compile-bound, the same.
        assert_eq!(capacity((30.0, 10), (0.1, 10), 16, true), 24);
        assert!(compile_bound((30.0, 10), (0.1, 10), 16));
        // Compiles of 0.2 s, measurements of 0.1 s: four in flight keep the measuring busy.
        assert_eq!(capacity((2.0, 10), (1.0, 10), 16, true), 4);
        assert!(!compile_bound((2.0, 10), (1.0, 10), 16));
        // Exhaustive and random: everything.
        assert_eq!(capacity((2.0, 10), (1.0, 10), 16, false), usize::MAX);
        assert_eq!(capacity((2.0, 10), (100.0, 10), 1, true), 2);
        assert!(compile_bound((0.0, 0), (0.0, 0), 16), "compile-bound until both were seen");
        // Sources that say measuring bounds the tune (0.3 s a compile against 6 s an
        // evaluation) size it before anything is timed here, and until an evaluation is.
        let (c, e) = spent_or_expected((0.0, 0), (0.0, 0), Some((0.3, 6.0)));
        assert_eq!(capacity(c, e, 16, true), 3);
        assert!(!compile_bound(c, e, 16));
        assert_eq!(spent_or_expected((0.5, 2), (0.0, 0), Some((0.3, 6.0))), ((0.3, 1), (6.0, 1)));
        // This tune's own seconds, once it has timed an evaluation.
        assert_eq!(spent_or_expected((30.0, 10), (0.1, 1), Some((0.3, 6.0))), ((30.0, 10), (0.1, 1)));
        assert_eq!(spent_or_expected((0.0, 0), (0.0, 0), None), ((0.0, 0), (0.0, 0)));
    }

    #[test]
    fn learns_that_bigger_tiles_compile_longer() {
        let params = [Param::new("tile", [1, 2, 4, 8]), Param::new("unroll", [1, 2, 4, 8])];
        let coords: Vec<Vec<u32>> = (0..4).flat_map(|a| (0..4).map(move |b| vec![a, b])).collect();
        let cands = Candidates { params: &params, coords: &coords };
        let secs = |c: &[u32]| 0.5 * f64::from(1u32 << c[0]) * f64::from(1u32 << c[1]);
        let mut t = CompileTimes::new(1);
        assert_eq!(t.predict(&cands, 15), 0.0);
        let mut refits = 0;
        for (i, c) in coords.iter().enumerate().filter(|(i, _)| i % 2 == 0) {
            if t.observe(i, secs(c), false) {
                refits += t.refit(&cands, &[]) as usize;
            }
        }
        assert!(!t.observe(1, 99.0, true), "cache hits teach nothing");
        assert_eq!(refits, 3, "fitted at 4 compiles, then every 2nd");
        // Unseen candidates: (8, 8) is predicted slower than (1, 2).
        let (slow, fast) = (t.predict(&cands, 15), t.predict(&cands, 1));
        assert!(slow > 4.0 * fast, "{slow} {fast}");
    }

    #[test]
    fn running_compiles_teach_that_their_kind_is_slow() {
        // Only quick compiles finished (tile 1); the tile-8 ones are still running at 6 s.
        let params = [Param::new("tile", [1, 8]), Param::new("block", [32, 64, 128, 256])];
        let coords: Vec<Vec<u32>> = (0..2).flat_map(|a| (0..4).map(move |b| vec![a, b])).collect();
        let cands = Candidates { params: &params, coords: &coords };
        let mut t = CompileTimes::new(3);
        for i in 0..3 {
            t.observe(i, 1.0 + 0.1 * i as f64, false);
        }
        assert!(t.observe(3, 1.05, false));
        // Without the running ones the model cannot rank tile 8 above tile 1.
        t.refit(&cands, &[]);
        let blind = t.predict(&cands, 7) / t.predict(&cands, 0);
        t.refit(&cands, &[(4, 6.0), (5, 6.0)]);
        let seen = t.predict(&cands, 7) / t.predict(&cands, 0);
        assert!(blind < 1.2 && seen > 1.5, "{blind} {seen}");
    }

    /// Another device's compile times order the candidates before anything has compiled here,
    /// and are rescaled to this machine once compiles finish; candidates they lack get their
    /// median until the first fit, then the model's prediction.
    #[test]
    fn a_prior_orders_before_the_first_compile_and_is_rescaled() {
        let params = [Param::new("tile", [1, 2, 4, 8])];
        let coords: Vec<Vec<u32>> = (0..4).map(|t| vec![t]).collect();
        let cands = Candidates { params: &params, coords: &coords };
        let mut t = CompileTimes::new(1).with_prior(&[1.0, 2.0, 4.0, f32::NAN]);
        assert!(t.has_prior());
        assert_eq!(t.predict(&cands, 2), 4.0);
        assert_eq!(t.predict(&cands, 0), 1.0);
        assert_eq!(t.predict(&cands, 3), 2.0, "the prior's median where it has nothing");
        // This machine compiles 3× slower than the prior's.
        for (i, secs) in [(0, 3.0), (1, 6.0), (2, 12.0)] {
            t.observe(i, secs, false);
        }
        t.observe(3, 20.0, false);
        assert!(t.refit(&cands, &[]));
        let rescaled = t.predict(&cands, 2);
        assert!((rescaled - 12.0).abs() < 1e-6, "{rescaled}");
        assert!(t.predict(&cands, 3) > 0.0, "the model where the prior has nothing");
        assert!(!CompileTimes::new(1).with_prior(&[f32::NAN, 0.0]).has_prior(), "nothing usable: no prior");
        assert_eq!(calibrate(&[(0.0, 1.0)]), (1.0, 1.0), "one point: the offset only");
    }
}
