//! Search strategies: which configs to evaluate, in which order, within a budget.
//!
//! The tuner owns the loop; a strategy only answers `ask` (which candidates next) and learns
//! from `tell` (what a candidate measured). Strategies see candidates as coordinates into the
//! parameter value lists, so neighbourhood-based searches (annealing, local search, genetic
//! crossover) need nothing else. A strategy is deterministic for a given seed.

use crate::error::FailureKind;
use crate::spec::job::Param;
use crate::spec::settings::{check_strategy, strategy_named, Budget};
use rand::seq::SliceRandom;
use rand::SeedableRng;

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
    /// Up to `max` candidate indices to evaluate next. Indices already evaluated may be
    /// returned; the tuner answers those from its records.
    ///
    /// The tuner keeps several candidates in flight (compiling on every core, then measured one
    /// by one), so `ask` is called again before earlier proposals are told. An empty answer
    /// while proposals are in flight means "wait for their outcomes"; an empty answer with
    /// nothing in flight ends the search.
    fn ask(&mut self, cands: &Candidates<'_>, max: usize) -> Vec<usize>;
    /// The outcome of a candidate this strategy asked for (or that was known beforehand).
    fn tell(&mut self, index: usize, outcome: &Outcome);
    /// Asked just before a proposal that was asked and not told yet is measured (compiled, and
    /// with the outcomes told since it was asked): whether it is still wanted. One declined is
    /// not measured and does not count against the budget (its compile was the only cost); the
    /// strategy may propose it again, and the tuner asks for another in its place. A strategy
    /// that keeps many proposals in flight so gets the feedback of a sequential search for the
    /// evaluations it spends. Bounding how many it declines is the strategy's own business.
    fn still_wanted(&mut self, cands: &Candidates<'_>, index: usize) -> bool {
        let _ = (cands, index);
        true
    }
    /// Asks the strategy to end the search once its model predicts that no unevaluated config
    /// beats the best so far by more than `fraction` (0.02 = 2 %). Returns false when the
    /// strategy has no model to predict with (only `model` and `hybrid` have one).
    fn stop_within(&mut self, fraction: f64) -> bool {
        let _ = fraction;
        false
    }
    /// Whether proposals depend on outcomes. A strategy that does not (exhaustive, random)
    /// may have its whole budget queued at once, so that the tuner can order compiles
    /// longest-first; an adaptive one is asked for as many as keep the compile threads and
    /// devices busy (one and a half per compile thread while compiling bounds the tune, at
    /// least two: [`crate::search::pipeline::capacity`]).
    fn adaptive(&self) -> bool {
        true
    }
    /// The seconds a config is expected to take to compile and to evaluate before the tune has
    /// timed any of its own: a strategy that learns from other devices' results knows them from
    /// its sources ([`crate::search::Prior::seconds`]). The tuner sizes its first flight by
    /// them ([`crate::search::pipeline::spent_or_expected`]): sources that say measuring bounds
    /// the tune keep it from asking one and a half proposals per compile thread before any
    /// outcome is in.
    fn expected_seconds(&self) -> Option<(f64, f64)> {
        None
    }
    /// The tuner's estimate of how many more evaluations a time limit leaves beyond those in
    /// flight: the seconds left over the wall seconds per config timed since the first was
    /// (compiles and several devices are counted in), told before each ask of a tune with a time
    /// limit once two configs are timed. A strategy that plans by the evaluations left
    /// (the transfer search: whether a fresh search has room to get going) goes by the lesser of
    /// this and its count; a tune limited by time alone otherwise looks endless to it.
    fn evaluations_left_in_time(&mut self, left: usize) {
        let _ = left;
    }
    /// Whether a proposal the tuner gave up on (a compile far slower than the others, at the
    /// end of the search) may have its evaluation go to another config. Exhaustive search
    /// needs every config, so it may not.
    fn replaceable(&self) -> bool {
        true
    }
    /// Who proposed candidate `index` (as it was last asked for), for the report and the
    /// database's trace: a tag of [`crate::search::proposer`]. Only a strategy that learns from
    /// priors tells (the transfer searches); others answer `None`, their name says it all.
    fn proposed_by(&self, index: usize) -> Option<String> {
        let _ = index;
        None
    }
    /// One line for the report on how the search went, where it has more to say than its
    /// name (the transfer search: how many proposals came from the priors, and why the rest
    /// did not).
    fn summary(&self) -> Option<String> {
        None
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
        let end = self.next.saturating_add(max).min(cands.len());
        let out = (self.next..end).collect();
        self.next = end;
        out
    }
    fn tell(&mut self, _: usize, _: &Outcome) {}
    fn adaptive(&self) -> bool {
        false
    }
    fn replaceable(&self) -> bool {
        false
    }
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
        let end = self.next.saturating_add(max).min(order.len());
        let out = order[self.next..end].to_vec();
        self.next = end;
        out
    }
    fn tell(&mut self, _: usize, _: &Outcome) {}
    fn adaptive(&self) -> bool {
        false
    }
}

/// Makes a strategy from its name and applies the budget's `within` rule (an error when the
/// strategy has no model to apply it with; see [`check_strategy`]).
pub fn for_budget(name: &str, seed: u64, budget: &Budget) -> Result<Box<dyn Strategy>, String> {
    check_strategy(name, budget)?;
    let mut s = by_name(name, seed)?;
    if let Some(x) = budget.within {
        let applied = s.stop_within(x);
        debug_assert!(applied, "the catalogue says `{name}` has a model");
    }
    Ok(s)
}

/// Makes a strategy from its name (any spelling [`strategy_named`] accepts): `exhaustive`,
/// `random`, `annealing`, `genetic`, `local` (greedy local search with restarts), `model`
/// (random-forest surrogate with expected improvement), `hybrid` (model-guided and local
/// search interleaved), `transfer` (learns from other devices' measurements; see
/// [`crate::search::Transfer`] — made here without any, it is the hybrid).
pub fn by_name(name: &str, seed: u64) -> Result<Box<dyn Strategy>, String> {
    use crate::search::*;
    Ok(match strategy_named(name)?.name {
        "exhaustive" => Box::new(Exhaustive::default()),
        "random" => Box::new(RandomSampling::new(seed)),
        "annealing" => Box::new(Annealing::new(seed)),
        "genetic" => Box::new(Genetic::new(seed)),
        "local" => Box::new(LocalSearch::new(seed)),
        "model" => Box::new(ModelGuided::new(seed)),
        "hybrid" => Box::new(Hybrid::new(seed)),
        // Without priors to learn from, the transfer search is its fallback: the hybrid.
        "transfer" => Box::new(Transfer::new(Default::default(), Box::new(Hybrid::new(seed)))),
        other => return Err(format!("the strategy `{other}` is in the catalogue but not built here")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_model_strategies_stop_within_a_percentage() {
        assert!(!by_name("annealing", 0).unwrap().stop_within(0.02));
        assert!(by_name("hybrid", 0).unwrap().stop_within(0.02));
        assert!(for_budget("genetic", 0, &Budget::parse("2%").unwrap()).err().unwrap().contains("needs a strategy with a model"));
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
        assert_eq!(by_name("Simulated_Annealing", 0).unwrap().name(), "annealing");
    }

    #[test]
    fn the_catalogue_matches_the_strategies() {
        for s in crate::spec::settings::STRATEGIES {
            let mut built = by_name(s.name, 0).unwrap();
            assert_eq!(built.stop_within(0.02), s.has_model, "{}", s.name);
            for a in s.aliases {
                assert!(by_name(a, 0).is_ok(), "{a}");
            }
        }
    }
}
