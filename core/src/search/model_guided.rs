//! Model-guided search: a random-forest surrogate proposes configs by expected improvement.

use super::{cost, random_fresh, Forest, Neighbourhood};
use crate::search::strategy::{Candidates, Outcome, Strategy};
use rand::{Rng, SeedableRng};
use statrs::distribution::{Continuous, ContinuousCDF, Normal};

/// Features are each parameter's value index and log2 value, plus the sum of log2 values of
/// every pair of parameters (their product: kernel times depend on products such as threads ×
/// per-thread tile). After an initial random design, each step fits a random forest on
/// log(time) of everything
/// measured (failures count as twice the slowest time seen, so the model learns to avoid their
/// region), scores a pool of unevaluated candidates (all of them in small spaces; a random
/// sample plus the neighbours of the best configs in large ones) by expected improvement, and
/// proposes the best. One step in ten explores at random instead. With `stop_within = X` it
/// stops once the model predicts no unevaluated config beats the best by more than the fraction
/// X and expects no improvement.
pub struct ModelGuided {
    rng: rand_chacha::ChaCha8Rng,
    nb: Option<Neighbourhood>,
    taken: Vec<bool>,
    obs: Vec<(usize, f64)>,
    /// Proposed and not told yet (in flight): fitted with a lie (constant liar), so that the
    /// next proposals of a batch go elsewhere.
    pending: Vec<usize>,
    features: std::sync::Arc<Vec<Vec<f64>>>,
    forest: Option<std::sync::Arc<Forest>>,
    /// Stop when within this fraction of the model's predicted optimum.
    pub stop_within: Option<f64>,
    /// Whether the `stop_within` rule ended the search.
    stopped: bool,
    asks: u64,
}

const INITIAL: usize = 12;
const POOL: usize = 4000;
const TREES: usize = 24;
/// One proposal in this many takes the lowest predicted mean instead of the highest expected
/// improvement (a portfolio of two acquisition functions: EI alone over-explores rugged spaces).
const EXPLOIT_EVERY: u64 = 3;
/// Proposals per model fit: one gives the best sample efficiency. A tuner that keeps several
/// configs in flight asks again before their outcomes are in; those are fitted with a lie
/// (constant liar), so consecutive proposals spread out instead of repeating one guess.
const BATCH: usize = 1;

impl ModelGuided {
    /// With a seed.
    pub fn new(seed: u64) -> ModelGuided {
        ModelGuided {
            rng: rand_chacha::ChaCha8Rng::seed_from_u64(seed),
            nb: None,
            taken: vec![],
            obs: vec![],
            pending: vec![],
            features: Default::default(),
            forest: None,
            stop_within: None,
            stopped: false,
            asks: 0,
        }
    }

    /// Builds the per-space state once (see [`LocalSearch::init`](super::LocalSearch)).
    pub(crate) fn init(&mut self, cands: &Candidates<'_>) {
        if self.nb.is_some() {
            return;
        }
        self.nb = Some(Neighbourhood::new(cands));
        self.taken = vec![false; cands.len()];
        self.features = std::sync::Arc::new(cands.coords.iter().map(|c| super::features::encode(cands.params, c)).collect());
    }

    /// Whether the `stop_within` rule ended the search.
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// The latest surrogate as a function of a candidate index (predicted log time).
    pub fn predictor(&self) -> Option<super::local::Ranker> {
        let (forest, features) = (self.forest.clone()?, self.features.clone());
        Some(Box::new(move |i: usize| forest.predict(&features[i]).0))
    }

    /// Marks candidates another strategy proposed (the hybrid's local half), so that this one
    /// does not propose them while they are in flight.
    pub(crate) fn mark_taken(&mut self, proposed: &[usize]) {
        for &i in proposed {
            if let Some(t) = self.taken.get_mut(i) {
                *t = true;
            }
        }
    }

    /// Up to `k` fresh configs at random.
    fn random(&mut self, n: usize, k: usize) -> Vec<usize> {
        let mut out = Vec::with_capacity(k);
        while out.len() < k {
            let Some(i) = random_fresh(&mut self.rng, n, &self.taken) else { break };
            self.taken[i] = true;
            out.push(i);
        }
        out
    }

    /// Fits the forest on log(time) of everything measured (failures count as twice the
    /// slowest time seen) and of everything in flight (the mean of the measured: a constant
    /// lie), and scores the pool: (expected improvement, predicted log time, index).
    fn score(&mut self, cands: &Candidates<'_>, finite: &[f64]) -> Option<Vec<(f64, f64, usize)>> {
        let worst = finite.iter().copied().fold(f64::MIN, f64::max);
        let mut ys: Vec<f64> = self.obs.iter().map(|o| if o.1.is_finite() { o.1.ln() } else { (2.0 * worst).ln() }).collect();
        let lie = finite.iter().map(|c| c.ln()).sum::<f64>() / finite.len().max(1) as f64;
        let mut xs: Vec<Vec<f64>> = self.obs.iter().map(|o| self.features[o.0].clone()).collect();
        for &p in &self.pending {
            xs.push(self.features[p].clone());
            ys.push(lie);
        }
        let forest = std::sync::Arc::new(Forest::fit(&xs, &ys, TREES, &mut self.rng));
        self.forest = Some(forest.clone());
        let best = finite.iter().copied().fold(f64::INFINITY, f64::min).ln();
        let pool = self.pool(cands);
        let unit = Normal::new(0.0, 1.0).ok()?;
        let rows: Vec<&[f64]> = pool.iter().map(|&i| self.features[i].as_slice()).collect();
        let predicted = forest.predict_many(&rows);
        Some(
            pool.iter()
                .zip(predicted)
                .map(|(&i, (m, s))| {
                    let ei = if s > 1e-12 {
                        let z = (best - m) / s;
                        (best - m) * unit.cdf(z) + s * unit.pdf(z)
                    } else {
                        (best - m).max(0.0)
                    };
                    (ei, m, i)
                })
                .collect(),
        )
    }

    /// The best of the scored pool by expected improvement, or every third time by predicted
    /// time; a random fresh config when the pool is empty.
    fn pick(&mut self, mut scored: Vec<(f64, f64, usize)>, max: usize) -> Vec<usize> {
        self.asks += 1;
        if self.asks.is_multiple_of(EXPLOIT_EVERY) {
            for s in scored.iter_mut() {
                s.0 = -s.1;
            }
        }
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.2.cmp(&b.2)));
        let k = max.clamp(1, BATCH).min(scored.len());
        let out: Vec<usize> = scored.iter().take(k).map(|s| s.2).collect();
        for &i in &out {
            self.taken[i] = true;
        }
        if out.is_empty() {
            return self.random(self.taken.len(), 1);
        }
        out
    }

    fn pool(&mut self, cands: &Candidates<'_>) -> Vec<usize> {
        let n = cands.len();
        let fresh = self.taken.iter().filter(|t| !**t).count();
        if fresh <= POOL {
            return (0..n).filter(|&i| !self.taken[i]).collect();
        }
        let mut pool = Vec::with_capacity(POOL + 64);
        let mut ranked = self.obs.clone();
        ranked.sort_by(|a, b| a.1.total_cmp(&b.1));
        let nb = self.nb.as_ref().expect("initialised");
        for &(i, _) in ranked.iter().take(5) {
            pool.extend(nb.hamming(&cands.coords[i]).into_iter().filter(|&j| !self.taken[j]));
        }
        let mut seen = vec![false; n];
        for &i in &pool {
            seen[i] = true;
        }
        while pool.len() < POOL {
            let i = self.rng.random_range(0..n);
            if !self.taken[i] && !seen[i] {
                seen[i] = true;
                pool.push(i);
            }
        }
        pool
    }
}

impl Strategy for ModelGuided {
    fn name(&self) -> String {
        "model".into()
    }

    fn ask(&mut self, cands: &Candidates<'_>, max: usize) -> Vec<usize> {
        self.init(cands);
        let n = cands.len();
        let finite: Vec<f64> = self.obs.iter().map(|o| o.1).filter(|c| c.is_finite()).collect();
        let busy = self.obs.len() + self.pending.len();
        if busy < INITIAL || finite.len() < 3 || self.rng.random_bool(0.1) {
            // The initial design (as much of it as asked for at once), or an exploring step.
            let k = if busy < INITIAL { (INITIAL - busy).min(max).max(1) } else { 1 };
            let out = self.random(n, k);
            self.pending.extend(&out);
            return out;
        }
        let Some(scored) = self.score(cands, &finite) else { return vec![] };
        if let (Some(x), Some(min_pred)) = (self.stop_within, scored.iter().map(|s| s.1).reduce(f64::min)) {
            let best = finite.iter().copied().fold(f64::INFINITY, f64::min);
            let max_ei = scored.iter().map(|s| s.0).fold(0.0, f64::max);
            if min_pred.exp() >= best * (1.0 - x) && max_ei < x * 0.1 {
                self.stopped = true;
                return vec![];
            }
        }
        let out = self.pick(scored, max);
        self.pending.extend(&out);
        out
    }

    fn stop_within(&mut self, fraction: f64) -> bool {
        self.stop_within = Some(fraction);
        true
    }

    fn tell(&mut self, index: usize, outcome: &Outcome) {
        if index < self.taken.len() {
            self.taken[index] = true;
            self.pending.retain(|&p| p != index);
            self.obs.push((index, cost(outcome)));
        }
    }
}
