//! Greedy local search with restarts (iterated local search).

use super::{cost, random_fresh, Neighbourhood};
use crate::search::strategy::{Candidates, Outcome, Strategy};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

/// First-improvement hill climbing over adjacent configs (one parameter, one step), in a random
/// order. At a local optimum it widens to every value of each parameter once; when that also
/// fails it perturbs the best config found so far by a short random walk (iterated local search)
/// or, one time in four, restarts from a random config.
pub struct LocalSearch {
    rng: rand_chacha::ChaCha8Rng,
    nb: Option<Neighbourhood>,
    taken: Vec<bool>,
    scores: Vec<Option<f64>>,
    current: Option<usize>,
    best: Option<usize>,
    queue: Vec<usize>,
    widened: bool,
    widened_left: usize,
    start: Option<usize>,
    ranker: Option<Ranker>,
    /// Proposals not told yet (in flight in a tuner that compiles several at once).
    pending: Vec<usize>,
}

/// Widened neighbours tried at a local optimum when a ranker orders them (all of them without).
const RANKED_WIDE: usize = 8;

/// Orders neighbours best-first (lower is better), e.g. by a surrogate model's prediction.
pub type Ranker = Box<dyn Fn(usize) -> f64 + Send>;

impl LocalSearch {
    /// With a seed.
    pub fn new(seed: u64) -> LocalSearch {
        LocalSearch {
            rng: rand_chacha::ChaCha8Rng::seed_from_u64(seed),
            nb: None,
            taken: vec![],
            scores: vec![],
            current: None,
            best: None,
            queue: vec![],
            widened: false,
            widened_left: usize::MAX,
            start: None,
            ranker: None,
            pending: vec![],
        }
    }

    fn score(&self, i: usize) -> f64 {
        self.scores[i].unwrap_or(f64::INFINITY)
    }

    fn fill_queue(&mut self, cands: &Candidates<'_>) {
        let nb = self.nb.as_ref().expect("initialised");
        let Some(cur) = self.current else { return };
        let mut q: Vec<usize> = if self.widened { nb.hamming(&cands.coords[cur]) } else { nb.adjacent(&cands.coords[cur]) };
        q.retain(|&i| !self.taken[i]);
        q.shuffle(&mut self.rng);
        if let Some(rank) = &self.ranker {
            let mut keyed: Vec<(f64, usize)> = q.iter().map(|&i| (rank(i), i)).collect();
            keyed.sort_by(|a, b| a.0.total_cmp(&b.0));
            q = keyed.into_iter().map(|k| k.1).collect();
        }
        self.queue = q;
    }

    fn restart(&mut self, cands: &Candidates<'_>) -> Option<usize> {
        let n = cands.len();
        if let (Some(b), false) = (self.best, self.rng.random_bool(0.25)) {
            // Perturb the best: a random walk of three steps through valid neighbours.
            let nb = self.nb.as_ref().expect("initialised");
            let mut at = b;
            for _ in 0..3 {
                let adj = nb.hamming(&cands.coords[at]);
                if adj.is_empty() {
                    break;
                }
                at = adj[self.rng.random_range(0..adj.len())];
            }
            if !self.taken[at] {
                return Some(at);
            }
        }
        random_fresh(&mut self.rng, n, &self.taken)
    }
}

impl LocalSearch {
    /// Builds the per-space state once (also called by strategies that share this one, so that
    /// outcomes told before its first `ask` are not lost).
    pub(crate) fn init(&mut self, cands: &Candidates<'_>) {
        if self.nb.is_none() {
            self.nb = Some(Neighbourhood::new(cands));
            self.taken = vec![false; cands.len()];
            self.scores = vec![None; cands.len()];
        }
    }

    /// The next proposals: the start (alone: everything else depends on it), then up to `max`
    /// neighbours of the current config at once (first improvement over a batch: a tuner
    /// compiles them in parallel). With proposals in flight it neither widens the neighbourhood
    /// nor restarts (their outcomes may move the climb): it answers nothing, "wait".
    fn next_batch(&mut self, cands: &Candidates<'_>, max: usize) -> Vec<usize> {
        loop {
            if self.current.is_none() {
                if !self.pending.is_empty() {
                    return vec![];
                }
                let Some(s) = self.restart(cands) else { return vec![] };
                self.taken[s] = true;
                self.start = Some(s);
                self.widened = false;
                self.widened_left = usize::MAX;
                return vec![s];
            }
            // Another strategy sharing this one (the hybrid) may have taken queued configs.
            let taken = &self.taken;
            self.queue.retain(|&i| !taken[i]);
            if self.queue.is_empty() && self.widened_left > 0 && self.pending.is_empty() {
                self.fill_queue(cands);
            }
            if self.queue.is_empty() || self.widened_left == 0 {
                if !self.pending.is_empty() {
                    return vec![];
                }
                self.queue.clear();
                if !self.widened {
                    self.widened = true;
                    // With a surrogate to rank them, only its favourites among the widened
                    // neighbours are tried: the budget goes to perturbing instead of proving a
                    // local optimum.
                    self.widened_left = if self.ranker.is_some() { RANKED_WIDE } else { usize::MAX };
                    continue;
                }
                // A local optimum of the widened neighbourhood: restart.
                self.current = None;
                continue;
            }
            let k = max.max(1).min(self.queue.len()).min(self.widened_left);
            let out: Vec<usize> = self.queue.drain(..k).collect();
            if self.widened {
                self.widened_left = self.widened_left.saturating_sub(out.len());
            }
            for &i in &out {
                self.taken[i] = true;
            }
            return out;
        }
    }

    /// Marks candidates another strategy proposed (the hybrid's model half) as taken.
    pub(crate) fn mark_taken(&mut self, proposed: &[usize]) {
        for &i in proposed {
            if let Some(t) = self.taken.get_mut(i) {
                *t = true;
            }
        }
    }

    /// Visits neighbours in `ranker` order (best first) instead of a random order; the current
    /// neighbour queue is re-ordered too.
    pub fn set_ranker(&mut self, ranker: Option<Ranker>) {
        self.ranker = ranker;
        if let Some(rank) = &self.ranker {
            let mut keyed: Vec<(f64, usize)> = self.queue.iter().map(|&i| (rank(i), i)).collect();
            keyed.sort_by(|a, b| a.0.total_cmp(&b.0));
            self.queue = keyed.into_iter().map(|k| k.1).collect();
        }
    }
}

impl Strategy for LocalSearch {
    fn name(&self) -> String {
        "local".into()
    }

    fn ask(&mut self, cands: &Candidates<'_>, max: usize) -> Vec<usize> {
        self.init(cands);
        let out = self.next_batch(cands, max);
        self.pending.extend(&out);
        out
    }

    fn tell(&mut self, index: usize, outcome: &Outcome) {
        if index >= self.scores.len() {
            return;
        }
        self.pending.retain(|&p| p != index);
        self.taken[index] = true;
        let c = cost(outcome);
        self.scores[index] = Some(c);
        if self.best.is_none_or(|b| c < self.score(b)) && c.is_finite() {
            self.best = Some(index);
        }
        if Some(index) == self.start {
            self.start = None;
            if c.is_finite() {
                self.current = Some(index);
                self.queue.clear();
            } else {
                self.current = None;
            }
            return;
        }
        if let Some(cur) = self.current {
            if c < self.score(cur) {
                // First improvement: move and look around the new place.
                self.current = Some(index);
                self.queue.clear();
                self.widened = false;
                self.widened_left = usize::MAX;
            }
        }
    }
}
