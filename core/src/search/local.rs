//! Greedy local search with restarts (iterated local search).

use super::{cost, random_fresh, Neighbourhood};
use crate::search::strategy::{Candidates, Outcome, Strategy};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

/// First-improvement hill climbing over adjacent configs (one parameter, one step), in a random
/// order. At a local optimum it widens to every value of each parameter once; when that also
/// fails it perturbs the best config found so far by a short random walk (iterated local search)
/// or, one time in four, restarts from a random config.
///
/// A climb has moments when it can only wait (its start, alone; the end of a neighbourhood,
/// until the outcomes in flight say where to go), and a tuner compiling on every core would
/// idle then. So while every climb waits and more proposals are asked for, another climb starts
/// (up to one per three proposals the first `ask` wants, or [`LocalSearch::with_climbs`]). The
/// outcome of a config goes to the climb that proposed it, and one nobody proposed to the
/// first climb.
pub struct LocalSearch {
    rng: rand_chacha::ChaCha8Rng,
    nb: Option<Neighbourhood>,
    taken: Vec<bool>,
    scores: Vec<Option<f64>>,
    best: Option<usize>,
    ranker: Option<Ranker>,
    climbs: Vec<Climb>,
    /// Climbs at once; unset, it follows the first `ask`.
    max_climbs: Option<usize>,
}

/// One hill climb's state.
#[derive(Default)]
struct Climb {
    current: Option<usize>,
    queue: Vec<usize>,
    widened: bool,
    widened_left: usize,
    start: Option<usize>,
    /// Proposals not told yet (in flight in a tuner that compiles several at once).
    pending: Vec<usize>,
}

/// Widened neighbours tried at a local optimum when a ranker orders them (all of them without).
const RANKED_WIDE: usize = 8;

/// Proposals asked for at once per climb, by default: a tuner that asks for 24 at once (16
/// compile threads) runs 8 climbs; one that asks for 2 (one thread) runs one, as a sequential
/// local search does. Measured on recorded spaces (`kerntune simulate --compile-threads`): 8
/// climbs keep 16 threads compiling 81 % of the time where one climb managed 26 %.
const PER_CLIMB: usize = 3;
const MOST_CLIMBS: usize = 16;

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
            best: None,
            ranker: None,
            climbs: vec![],
            max_climbs: None,
        }
    }

    /// At most `n` climbs at once (1: one climb that waits for its outcomes, for a strategy
    /// that fills those moments itself, like the hybrid). Without it: one per three proposals
    /// of the first `ask`.
    pub fn with_climbs(mut self, n: usize) -> LocalSearch {
        self.max_climbs = Some(n.max(1));
        self
    }

    fn score(&self, i: usize) -> f64 {
        self.scores[i].unwrap_or(f64::INFINITY)
    }

    fn ranked(&self, mut q: Vec<usize>) -> Vec<usize> {
        if let Some(rank) = &self.ranker {
            let mut keyed: Vec<(f64, usize)> = q.iter().map(|&i| (rank(i), i)).collect();
            keyed.sort_by(|a, b| a.0.total_cmp(&b.0));
            q = keyed.into_iter().map(|k| k.1).collect();
        }
        q
    }

    fn fill_queue(&mut self, cands: &Candidates<'_>, c: usize) {
        let nb = self.nb.as_ref().expect("initialised");
        let Some(cur) = self.climbs[c].current else { return };
        let mut q: Vec<usize> = if self.climbs[c].widened { nb.hamming(&cands.coords[cur]) } else { nb.adjacent(&cands.coords[cur]) };
        q.retain(|&i| !self.taken[i]);
        q.shuffle(&mut self.rng);
        self.climbs[c].queue = self.ranked(q);
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
        if self.climbs.is_empty() {
            self.climbs.push(Climb::default());
        }
    }

    /// The next proposals of climb `c`: its start (alone: everything else depends on it), then
    /// up to `max` neighbours of its current config at once (first improvement over a batch: a
    /// tuner compiles them in parallel). With proposals in flight it neither widens the
    /// neighbourhood nor restarts (their outcomes may move the climb): it answers nothing,
    /// "wait".
    fn climb_batch(&mut self, cands: &Candidates<'_>, c: usize, max: usize) -> Vec<usize> {
        loop {
            if self.climbs[c].current.is_none() {
                if !self.climbs[c].pending.is_empty() {
                    return vec![];
                }
                let Some(s) = self.restart(cands) else { return vec![] };
                self.taken[s] = true;
                self.climbs[c] = Climb { start: Some(s), widened_left: usize::MAX, ..Climb::default() };
                return vec![s];
            }
            // Another climb, or a strategy sharing this one (the hybrid), may have taken queued
            // configs.
            let taken = &self.taken;
            self.climbs[c].queue.retain(|&i| !taken[i]);
            let cl = &self.climbs[c];
            if cl.queue.is_empty() && cl.widened_left > 0 && cl.pending.is_empty() {
                self.fill_queue(cands, c);
            }
            let cl = &mut self.climbs[c];
            if cl.queue.is_empty() || cl.widened_left == 0 {
                if !cl.pending.is_empty() {
                    return vec![];
                }
                cl.queue.clear();
                if !cl.widened {
                    cl.widened = true;
                    // With a surrogate to rank them, only its favourites among the widened
                    // neighbours are tried: the budget goes to perturbing instead of proving a
                    // local optimum.
                    cl.widened_left = if self.ranker.is_some() { RANKED_WIDE } else { usize::MAX };
                    continue;
                }
                // A local optimum of the widened neighbourhood: restart.
                cl.current = None;
                continue;
            }
            let k = max.max(1).min(cl.queue.len()).min(cl.widened_left);
            let out: Vec<usize> = cl.queue.drain(..k).collect();
            if cl.widened {
                cl.widened_left = cl.widened_left.saturating_sub(out.len());
            }
            for &i in &out {
                self.taken[i] = true;
            }
            return out;
        }
    }

    /// Up to `max` proposals from the climbs in turn, starting another climb while every climb
    /// waits and more are asked for.
    fn next_batch(&mut self, cands: &Candidates<'_>, max: usize) -> Vec<usize> {
        let most = *self.max_climbs.get_or_insert((max / PER_CLIMB).clamp(1, MOST_CLIMBS));
        let mut out = Vec::new();
        let mut c = 0;
        while out.len() < max.max(1) {
            if c == self.climbs.len() {
                if self.climbs.len() >= most || self.taken.iter().all(|&t| t) {
                    break;
                }
                self.climbs.push(Climb::default());
            }
            let got = self.climb_batch(cands, c, max.max(1) - out.len());
            self.climbs[c].pending.extend(&got);
            out.extend(got);
            c += 1;
        }
        out
    }

    /// Marks candidates another strategy proposed (the hybrid's model half) as taken.
    pub(crate) fn mark_taken(&mut self, proposed: &[usize]) {
        for &i in proposed {
            if let Some(t) = self.taken.get_mut(i) {
                *t = true;
            }
        }
    }

    /// Visits neighbours in `ranker` order (best first) instead of a random order; the queued
    /// neighbours are re-ordered too.
    pub fn set_ranker(&mut self, ranker: Option<Ranker>) {
        self.ranker = ranker;
        for c in 0..self.climbs.len() {
            let q = std::mem::take(&mut self.climbs[c].queue);
            self.climbs[c].queue = self.ranked(q);
        }
    }
}

impl Strategy for LocalSearch {
    fn name(&self) -> String {
        "local".into()
    }

    fn ask(&mut self, cands: &Candidates<'_>, max: usize) -> Vec<usize> {
        self.init(cands);
        self.next_batch(cands, max)
    }

    fn tell(&mut self, index: usize, outcome: &Outcome) {
        if index >= self.scores.len() {
            return;
        }
        self.taken[index] = true;
        let c = cost(outcome);
        self.scores[index] = Some(c);
        if self.best.is_none_or(|b| c < self.score(b)) && c.is_finite() {
            self.best = Some(index);
        }
        // The climb that proposed it; one nobody proposed (known beforehand, or the hybrid's
        // model half) goes to the first.
        let k = self.climbs.iter().position(|cl| cl.pending.contains(&index)).unwrap_or(0);
        let improves = self.climbs.get(k).and_then(|cl| cl.current).is_some_and(|cur| c < self.score(cur));
        let Some(cl) = self.climbs.get_mut(k) else { return };
        cl.pending.retain(|&p| p != index);
        if Some(index) == cl.start {
            cl.start = None;
            if c.is_finite() {
                cl.current = Some(index);
                cl.queue.clear();
            } else {
                cl.current = None;
            }
            return;
        }
        if improves {
            // First improvement: move and look around the new place.
            cl.current = Some(index);
            cl.queue.clear();
            cl.widened = false;
            cl.widened_left = usize::MAX;
        }
    }
}
