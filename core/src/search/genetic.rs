//! A genetic algorithm over parameter coordinates.

use super::{cost, random_fresh, Neighbourhood};
use crate::search::strategy::{Candidates, Outcome, Strategy};
use rand::{Rng, SeedableRng};

/// Generations of 16: two elites survive, the rest are children of tournament-selected parents
/// (uniform crossover, then each parameter mutates one step with probability 1/#params).
/// Children that break a restriction or were seen before are re-drawn; a generation that
/// cannot be filled so is topped up with random fresh configs.
pub struct Genetic {
    rng: rand_chacha::ChaCha8Rng,
    nb: Option<Neighbourhood>,
    taken: Vec<bool>,
    scores: Vec<Option<f64>>,
    pending: Vec<usize>,
    population: Vec<usize>,
}

const POP: usize = 16;
const ELITE: usize = 2;

impl Genetic {
    /// With a seed.
    pub fn new(seed: u64) -> Genetic {
        Genetic { rng: rand_chacha::ChaCha8Rng::seed_from_u64(seed), nb: None, taken: vec![], scores: vec![], pending: vec![], population: vec![] }
    }

    fn tournament(&mut self) -> usize {
        let mut best = self.population[self.rng.random_range(0..self.population.len())];
        for _ in 0..2 {
            let c = self.population[self.rng.random_range(0..self.population.len())];
            if self.score(c) < self.score(best) {
                best = c;
            }
        }
        best
    }

    fn score(&self, i: usize) -> f64 {
        self.scores[i].unwrap_or(f64::INFINITY)
    }

    fn next_generation(&mut self, cands: &Candidates<'_>) -> Vec<usize> {
        let n = cands.len();
        let mut next = Vec::with_capacity(POP);
        if self.population.is_empty() {
            while next.len() < POP {
                match random_fresh(&mut self.rng, n, &self.taken) {
                    Some(i) => {
                        self.taken[i] = true;
                        next.push(i);
                    }
                    None => break,
                }
            }
            return next;
        }
        let mut ranked = self.population.clone();
        ranked.sort_by(|&a, &b| self.score(a).total_cmp(&self.score(b)));
        let elites: Vec<usize> = ranked.iter().copied().take(ELITE).collect();
        let nparams = cands.params.len().max(1);
        let mut children = Vec::new();
        let mut tries = 0;
        while children.len() + ELITE < POP && tries < POP * 30 {
            tries += 1;
            let (a, b) = (self.tournament(), self.tournament());
            let (ca, cb) = (&cands.coords[a], &cands.coords[b]);
            let mut child: Vec<u32> = ca.iter().zip(cb).map(|(x, y)| if self.rng.random_bool(0.5) { *x } else { *y }).collect();
            let sizes = self.nb.as_ref().expect("initialised").sizes().to_vec();
            for (p, v) in child.iter_mut().enumerate() {
                if sizes[p] > 1 && self.rng.random_bool(1.0 / nparams as f64) {
                    *v = if self.rng.random_bool(0.5) { v.saturating_sub(1) } else { (*v + 1).min(sizes[p] - 1) };
                }
            }
            if let Some(i) = self.nb.as_ref().expect("initialised").find(&child) {
                if !self.taken[i] {
                    self.taken[i] = true;
                    children.push(i);
                }
            }
        }
        while children.len() + ELITE < POP {
            match random_fresh(&mut self.rng, n, &self.taken) {
                Some(i) => {
                    self.taken[i] = true;
                    children.push(i);
                }
                None => break,
            }
        }
        self.population = elites;
        children
    }
}

impl Strategy for Genetic {
    fn name(&self) -> String {
        "genetic".into()
    }

    fn ask(&mut self, cands: &Candidates<'_>, max: usize) -> Vec<usize> {
        if self.nb.is_none() {
            self.nb = Some(Neighbourhood::new(cands));
            self.taken = vec![false; cands.len()];
            self.scores = vec![None; cands.len()];
        }
        if self.pending.is_empty() {
            // The next generation is bred from this one's outcomes: wait for those in flight.
            if self.population.iter().any(|&i| self.scores[i].is_none()) {
                return vec![];
            }
            let gen = self.next_generation(cands);
            self.population.extend(gen.iter().copied());
            self.pending = gen;
        }
        let k = max.min(self.pending.len());
        self.pending.drain(..k).collect()
    }

    fn tell(&mut self, index: usize, outcome: &Outcome) {
        if index < self.scores.len() {
            self.scores[index] = Some(cost(outcome));
            self.taken[index] = true;
        }
    }
}
