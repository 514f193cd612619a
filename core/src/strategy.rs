//! Search strategies: which configs to evaluate, in which order, within a budget.
//!
//! The tuner owns the loop; a strategy only answers `ask` (which candidates next) and learns
//! from `tell` (what a candidate measured). Strategies see candidates as coordinates into the
//! parameter value lists, so neighbourhood-based searches (annealing, local search, genetic
//! crossover) need nothing else. A strategy is deterministic for a given seed.

use crate::error::FailureKind;
use crate::space::Param;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde::{Deserialize, Serialize};

/// The candidates a strategy chooses from, after pruning (and ordering by the model, if on).
#[derive(Clone, Copy, Debug)]
pub struct Candidates<'a> {
    /// The parameters, for value lists.
    pub params: &'a [Param],
    /// Each candidate's value indices, one per parameter.
    pub coords: &'a [Vec<u32>],
}

impl Candidates<'_> {
    /// Number of candidates.
    pub fn len(&self) -> usize {
        self.coords.len()
    }
    /// True when there is none.
    pub fn is_empty(&self) -> bool {
        self.coords.is_empty()
    }
}

/// What evaluating a candidate gave.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Mean time in seconds.
    Time(f64),
    /// It failed (compile, launch, verification, ...), or was pruned after compiling.
    Failed(FailureKind),
}

/// A search strategy.
pub trait Strategy: Send {
    /// Short name, for reports.
    fn name(&self) -> String;
    /// Up to `max` candidate indices to evaluate next. An empty answer ends the search.
    /// Indices already evaluated may be returned; the tuner answers those from its records.
    fn ask(&mut self, cands: &Candidates<'_>, max: usize) -> Vec<usize>;
    /// The outcome of a candidate this strategy asked for (or that was known beforehand).
    fn tell(&mut self, index: usize, outcome: &Outcome);
    /// Asks the strategy to end the search once its model predicts that no unevaluated config
    /// beats the best so far by more than `fraction` (0.02 = 2 %). Returns false when the
    /// strategy has no model to predict with (only `model` and `hybrid` have one).
    fn stop_within(&mut self, fraction: f64) -> bool {
        let _ = fraction;
        false
    }
}

/// Limits on a search. Any may be set; the first reached ends the search.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    /// Most configs evaluated (records from the database count).
    pub max_evals: Option<usize>,
    /// Most wall-clock seconds spent searching.
    pub max_seconds: Option<f64>,
    /// Stop once the strategy's model predicts nothing unevaluated beats the best so far by
    /// more than this fraction (model-guided strategies only; see [`Strategy::stop_within`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within: Option<f64>,
}

impl Budget {
    /// Parses `200` (evaluations), `30s`, `5m`, `2%` (stop within 2 % of the model's predicted
    /// optimum), or several of them: `400,5m,2%`.
    pub fn parse(text: &str) -> Result<Budget, String> {
        let mut b = Budget::default();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            if let Some(p) = part.strip_suffix('%') {
                let x = p.trim().parse::<f64>().map_err(|_| format!("`{part}` is not a percentage"))?;
                if !(x > 0.0 && x < 100.0) {
                    return Err(format!("`{part}`: the percentage must be between 0 and 100 (exclusive)"));
                }
                b.within = Some(x / 100.0);
            } else if let Some(s) = part.strip_suffix('s') {
                b.max_seconds = Some(s.parse::<f64>().map_err(|_| format!("`{part}` is not a number of seconds"))?);
            } else if let Some(m) = part.strip_suffix('m') {
                b.max_seconds = Some(60.0 * m.parse::<f64>().map_err(|_| format!("`{part}` is not a number of minutes"))?);
            } else {
                b.max_evals =
                    Some(part.parse::<usize>().map_err(|_| format!("`{part}` is neither a count (200), a duration (30s, 5m) nor a percentage (2%)"))?);
            }
        }
        Ok(b)
    }
}

/// Every candidate, in order.
#[derive(Debug, Default)]
pub struct Exhaustive {
    next: usize,
}

impl Strategy for Exhaustive {
    fn name(&self) -> String {
        "exhaustive".into()
    }
    fn ask(&mut self, cands: &Candidates<'_>, max: usize) -> Vec<usize> {
        let end = (self.next + max).min(cands.len());
        let out = (self.next..end).collect();
        self.next = end;
        out
    }
    fn tell(&mut self, _: usize, _: &Outcome) {}
}

/// Uniform random sampling without replacement.
#[derive(Debug)]
pub struct RandomSampling {
    seed: u64,
    order: Option<Vec<usize>>,
    next: usize,
}

impl RandomSampling {
    /// A sampler with a seed.
    pub fn new(seed: u64) -> RandomSampling {
        RandomSampling { seed, order: None, next: 0 }
    }
}

impl Strategy for RandomSampling {
    fn name(&self) -> String {
        "random".into()
    }
    fn ask(&mut self, cands: &Candidates<'_>, max: usize) -> Vec<usize> {
        let seed = self.seed;
        let order = self.order.get_or_insert_with(|| {
            let mut v: Vec<usize> = (0..cands.len()).collect();
            v.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(seed));
            v
        });
        let end = (self.next + max).min(order.len());
        let out = order[self.next..end].to_vec();
        self.next = end;
        out
    }
    fn tell(&mut self, _: usize, _: &Outcome) {}
}

/// Names accepted by [`by_name`].
pub const STRATEGIES: &[&str] = &["exhaustive", "random", "annealing", "genetic", "local", "model", "hybrid"];

/// Makes a strategy from its name and applies the budget's `within` rule (an error when the
/// strategy has no model to apply it with).
pub fn for_budget(name: &str, seed: u64, budget: &Budget) -> Result<Box<dyn Strategy>, String> {
    let mut s = by_name(name, seed)?;
    if let Some(x) = budget.within {
        if !s.stop_within(x) {
            return Err(format!("a budget of {}% needs a strategy with a model to predict the optimum: `model` or `hybrid` (`{name}` has none)", x * 100.0));
        }
    }
    Ok(s)
}

/// Makes a strategy from its name: `exhaustive` (or `brute_force`), `random`, `annealing`,
/// `genetic`, `local` (greedy local search with restarts), `model` (random-forest surrogate
/// with expected improvement), `hybrid` (model-guided and local search interleaved).
pub fn by_name(name: &str, seed: u64) -> Result<Box<dyn Strategy>, String> {
    use crate::strategies::*;
    match name {
        "exhaustive" | "brute_force" | "brute-force" => Ok(Box::new(Exhaustive::default())),
        "random" | "random_sample" => Ok(Box::new(RandomSampling::new(seed))),
        "annealing" | "simulated_annealing" => Ok(Box::new(Annealing::new(seed))),
        "genetic" | "genetic_algorithm" => Ok(Box::new(Genetic::new(seed))),
        "local" | "local_search" | "greedy_ils" => Ok(Box::new(LocalSearch::new(seed))),
        "model" | "model_guided" | "bayes" => Ok(Box::new(ModelGuided::new(seed))),
        "hybrid" => Ok(Box::new(Hybrid::new(seed))),
        other => Err(format!("unknown strategy `{other}`; choose one of: {}", STRATEGIES.join(", "))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_parse() {
        assert_eq!(Budget::parse("200").unwrap(), Budget { max_evals: Some(200), ..Default::default() });
        assert_eq!(Budget::parse("30s").unwrap().max_seconds, Some(30.0));
        assert_eq!(Budget::parse("2m,50").unwrap(), Budget { max_evals: Some(50), max_seconds: Some(120.0), within: None });
        assert_eq!(Budget::parse("400, 2.5%").unwrap(), Budget { max_evals: Some(400), max_seconds: None, within: Some(0.025) });
        assert!(Budget::parse("fast").unwrap_err().contains("`fast`"));
        assert!(Budget::parse("0%").unwrap_err().contains("between 0 and 100"));
        assert!(Budget::parse("x%").unwrap_err().contains("not a percentage"));
        assert!(!by_name("annealing", 0).unwrap().stop_within(0.02));
        assert!(by_name("hybrid", 0).unwrap().stop_within(0.02));
    }

    #[test]
    fn random_is_a_seeded_permutation() {
        let params = [Param::new("a", 0..10)];
        let coords: Vec<Vec<u32>> = (0..10).map(|i| vec![i]).collect();
        let c = Candidates { params: &params, coords: &coords };
        let mut a = RandomSampling::new(3);
        let mut b = RandomSampling::new(3);
        let (mut xa, mut xb) = (a.ask(&c, 4), b.ask(&c, 4));
        xa.extend(a.ask(&c, 100));
        xb.extend(b.ask(&c, 100));
        assert_eq!(xa, xb);
        let mut sorted = xa.clone();
        sorted.sort();
        assert_eq!(sorted, (0..10).collect::<Vec<_>>());
        assert!(a.ask(&c, 5).is_empty());
        assert_ne!(RandomSampling::new(4).ask(&c, 10), xa);
        assert!(by_name("annealing-x", 0).is_err());
    }
}
