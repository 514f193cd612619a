//! Model-guided search interleaved with local search.

use super::{LocalSearch, ModelGuided};
use crate::strategy::{Candidates, Outcome, Strategy};

/// Interleaves one model-guided proposal (in model-predicted order) (global: the surrogate's expected improvement) with two
/// first-improvement local steps around the current config (local: exhausts neighbours the
/// surrogate cannot tell apart, which finds isolated optima that depend on two parameters at
/// once). Both halves are told every outcome, so the local search starts from — and moves to —
/// whatever the model finds.
pub struct Hybrid {
    model: ModelGuided,
    local: LocalSearch,
    turn: u64,
}

impl Hybrid {
    /// With a seed.
    pub fn new(seed: u64) -> Hybrid {
        Hybrid { model: ModelGuided::new(seed), local: LocalSearch::new(seed.wrapping_add(0x5bd1_e995)), turn: 0 }
    }
}

impl Strategy for Hybrid {
    fn name(&self) -> String {
        "hybrid".into()
    }

    fn ask(&mut self, cands: &Candidates<'_>, max: usize) -> Vec<usize> {
        self.model.init(cands);
        self.local.init(cands);
        self.turn += 1;
        // Local steps try the neighbours the surrogate likes best first.
        self.local.set_ranker(self.model.predictor());
        let first = if self.turn % 3 != 1 { self.local.ask(cands, max) } else { self.model.ask(cands, max) };
        if !first.is_empty() {
            return first;
        }
        if self.turn % 3 != 1 {
            self.model.ask(cands, max)
        } else {
            self.local.ask(cands, max)
        }
    }

    fn tell(&mut self, index: usize, outcome: &Outcome) {
        self.model.tell(index, outcome);
        self.local.tell(index, outcome);
    }
}
