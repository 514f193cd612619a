//! A genetic algorithm over parameter coordinates.

use super::{cost, random_fresh, Neighbourhood};
use crate::search::strategy::{Candidates, Outcome, Strategy};
use rand::{Rng, SeedableRng};

/// A steady-state genetic algorithm: the population is the 16 best configs evaluated so far,
/// and every `ask` breeds as many children as are asked for from it at once (tournament-selected
/// parents, uniform crossover, then each parameter mutates one step with probability
/// 1/#params), so that the tuner's compile threads never wait for a generation to finish. Until
/// two configs are evaluated, and whenever a child breaks a restriction or was seen before too
/// often, it proposes random fresh configs.
pub struct Genetic {
    rng: rand_chacha::ChaCha8Rng,
    nb: Option<Neighbourhood>,
    taken: Vec<bool>,
    scores: Vec<Option<f64>>,
    /// The best evaluated configs, at most [`POP`], best first.
    population: Vec<usize>,
}

const POP: usize = 16;

impl Genetic {
    /// With a seed.
    pub fn new(seed: u64) -> Genetic {
        Genetic { rng: rand_chacha::ChaCha8Rng::seed_from_u64(seed), nb: None, taken: vec![], scores: vec![], population: vec![] }
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

    /// A fresh child of two tournament winners, or `None` after a few tries.
    fn child(&mut self, cands: &Candidates<'_>) -> Option<usize> {
        let nb = self.nb.as_ref()?;
        let sizes = nb.sizes().to_vec();
        let nparams = cands.params.len().max(1);
        for _ in 0..30 {
            let (a, b) = (self.tournament(), self.tournament());
            let (ca, cb) = (&cands.coords[a], &cands.coords[b]);
            let mut child: Vec<u32> = ca.iter().zip(cb).map(|(x, y)| if self.rng.random_bool(0.5) { *x } else { *y }).collect();
            for (p, v) in child.iter_mut().enumerate() {
                if sizes[p] > 1 && self.rng.random_bool(1.0 / nparams as f64) {
                    *v = if self.rng.random_bool(0.5) { v.saturating_sub(1) } else { (*v + 1).min(sizes[p] - 1) };
                }
            }
            match self.nb.as_ref()?.find(&child) {
                Some(i) if !self.taken[i] => return Some(i),
                _ => {}
            }
        }
        None
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
        let mut out = Vec::with_capacity(max);
        while out.len() < max {
            let bred = if self.population.len() >= 2 { self.child(cands) } else { None };
            match bred.or_else(|| random_fresh(&mut self.rng, cands.len(), &self.taken)) {
                Some(i) => {
                    self.taken[i] = true;
                    out.push(i);
                }
                None => break,
            }
        }
        out
    }

    fn tell(&mut self, index: usize, outcome: &Outcome) {
        if index < self.scores.len() {
            self.scores[index] = Some(cost(outcome));
            self.taken[index] = true;
            if !self.population.contains(&index) {
                let mut pop = std::mem::take(&mut self.population);
                pop.push(index);
                pop.sort_by(|&a, &b| self.score(a).total_cmp(&self.score(b)));
                pop.truncate(POP);
                self.population = pop;
            }
        }
    }
}
