//! Simulated annealing over neighbouring configs.

use super::{cost, random_fresh, Neighbourhood};
use crate::search::strategy::{Candidates, Outcome, Strategy};
use rand::{Rng, SeedableRng};

/// Simulated annealing: from the current config, try a random neighbour (one parameter one
/// step, sometimes any value); move there if it is faster, or with probability
/// `exp(-relative slowdown / T)`. `T` decays geometrically and reheats when it runs cold.
pub struct Annealing {
    rng: rand_chacha::ChaCha8Rng,
    nb: Option<Neighbourhood>,
    taken: Vec<bool>,
    current: Option<(usize, f64)>,
    temperature: f64,
}

const T0: f64 = 0.3;
const ALPHA: f64 = 0.93;
const T_MIN: f64 = 0.005;

impl Annealing {
    /// With a seed.
    pub fn new(seed: u64) -> Annealing {
        Annealing { rng: rand_chacha::ChaCha8Rng::seed_from_u64(seed), nb: None, taken: Vec::new(), current: None, temperature: T0 }
    }

    fn propose(&mut self, cands: &Candidates<'_>) -> Option<usize> {
        let nb = self.nb.as_ref().expect("initialised");
        if let Some((cur, _)) = self.current {
            let coords = &cands.coords[cur];
            for _ in 0..64 {
                let mut c = coords.clone();
                let p = self.rng.random_range(0..c.len());
                let size = nb.sizes()[p];
                if size < 2 {
                    continue;
                }
                c[p] = if self.rng.random_bool(0.8) {
                    if self.rng.random_bool(0.5) {
                        c[p].saturating_sub(1)
                    } else {
                        (c[p] + 1).min(size - 1)
                    }
                } else {
                    self.rng.random_range(0..size)
                };
                if let Some(i) = nb.find(&c) {
                    if !self.taken[i] {
                        return Some(i);
                    }
                }
            }
        }
        random_fresh(&mut self.rng, cands.len(), &self.taken)
    }
}

impl Strategy for Annealing {
    fn name(&self) -> String {
        "annealing".into()
    }

    fn ask(&mut self, cands: &Candidates<'_>, _max: usize) -> Vec<usize> {
        if self.nb.is_none() {
            self.nb = Some(Neighbourhood::new(cands));
            self.taken = vec![false; cands.len()];
        }
        match self.propose(cands) {
            Some(i) => {
                self.taken[i] = true;
                vec![i]
            }
            None => vec![],
        }
    }

    fn tell(&mut self, index: usize, outcome: &Outcome) {
        if let Some(t) = self.taken.get_mut(index) {
            *t = true;
        }
        let c = cost(outcome);
        let accept = match self.current {
            None => c.is_finite(),
            Some((_, cur)) if c <= cur => true,
            Some((_, cur)) => c.is_finite() && self.rng.random_bool((-((c - cur) / cur) / self.temperature).exp().clamp(0.0, 1.0)),
        };
        if accept {
            self.current = Some((index, c));
        }
        self.temperature *= ALPHA;
        if self.temperature < T_MIN {
            self.temperature = T0;
        }
    }
}
