//! [`Neighbourhood`]: maps value-index coordinates back to candidates, so a strategy can move
//! "one step" along a parameter and land only on configs that satisfy the restrictions; and
//! the small helpers every strategy shares.
use crate::search::strategy::{Candidates, Outcome};
use rand::Rng;
use std::collections::HashMap;

/// Coordinates → candidate index, and the neighbours of a candidate.
#[derive(Debug, Default)]
pub struct Neighbourhood {
    index: HashMap<Vec<u32>, usize>,
    sizes: Vec<u32>,
}

impl Neighbourhood {
    /// Builds the index for `cands`.
    pub fn new(cands: &Candidates<'_>) -> Neighbourhood {
        let index = cands.coords.iter().enumerate().map(|(i, c)| (c.clone(), i)).collect();
        Neighbourhood { index, sizes: cands.params.iter().map(|p| p.values.len() as u32).collect() }
    }

    /// The candidate at these coordinates, if it is one.
    pub fn find(&self, coords: &[u32]) -> Option<usize> {
        self.index.get(coords).copied()
    }

    /// Candidates that differ from `coords` by one step (±1 value index) in one parameter.
    pub fn adjacent(&self, coords: &[u32]) -> Vec<usize> {
        let mut out = Vec::new();
        let mut c = coords.to_vec();
        for p in 0..c.len() {
            let v = c[p];
            for nv in [v.wrapping_sub(1), v + 1] {
                if nv < self.sizes[p] {
                    c[p] = nv;
                    if let Some(i) = self.find(&c) {
                        out.push(i);
                    }
                }
            }
            c[p] = v;
        }
        out
    }

    /// Candidates that differ from `coords` in exactly one parameter (any other value).
    pub fn hamming(&self, coords: &[u32]) -> Vec<usize> {
        let mut out = Vec::new();
        let mut c = coords.to_vec();
        for p in 0..c.len() {
            let v = c[p];
            for nv in 0..self.sizes[p] {
                if nv != v {
                    c[p] = nv;
                    if let Some(i) = self.find(&c) {
                        out.push(i);
                    }
                }
            }
            c[p] = v;
        }
        out
    }

    /// Number of values of each parameter.
    pub fn sizes(&self) -> &[u32] {
        &self.sizes
    }
}

/// Cost of an outcome: the time, or infinity for a failure.
pub(crate) fn cost(o: &Outcome) -> f64 {
    match o {
        Outcome::Time(t) => *t,
        Outcome::Failed(_) => f64::INFINITY,
    }
}

/// A random candidate not yet evaluated (or asked), if any is left.
pub(crate) fn random_fresh(rng: &mut impl Rng, n: usize, taken: &[bool]) -> Option<usize> {
    let left = taken.iter().filter(|t| !**t).count();
    if left == 0 {
        return None;
    }
    // Rejection sampling while most are free; a scan when few are left.
    if left * 4 > n {
        loop {
            let i = rng.random_range(0..n);
            if !taken[i] {
                return Some(i);
            }
        }
    }
    let k = rng.random_range(0..left);
    (0..n).filter(|&i| !taken[i]).nth(k)
}
