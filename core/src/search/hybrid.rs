//! Model-guided search interleaved with local search.

use super::{LocalSearch, ModelGuided};
use crate::search::strategy::{Candidates, Outcome, Strategy};

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
        Hybrid { model: ModelGuided::new(seed), local: LocalSearch::new(seed.wrapping_add(0x5bd1_e995)).with_climbs(1), turn: 0 }
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
        let local_turn = self.turn % 3 != 1;
        let out = if local_turn { self.local.ask(cands, max) } else { self.model.ask(cands, max) };
        // Each half skips what the other has in flight.
        if local_turn {
            self.model.mark_taken(&out);
        } else {
            self.local.mark_taken(&out);
        }
        if self.model.stopped() {
            // The model predicts nothing left beats the best by the asked margin.
            return vec![];
        }
        if !out.is_empty() {
            return out;
        }
        // This turn's half has nothing (or waits for outcomes in flight): the other half.
        let other = if local_turn { self.model.ask(cands, max) } else { self.local.ask(cands, max) };
        if local_turn {
            self.local.mark_taken(&other);
        } else {
            self.model.mark_taken(&other);
        }
        if self.model.stopped() {
            return vec![];
        }
        other
    }

    fn stop_within(&mut self, fraction: f64) -> bool {
        self.model.stop_within(fraction)
    }

    fn tell(&mut self, index: usize, outcome: &Outcome) {
        self.model.tell(index, outcome);
        self.local.tell(index, outcome);
    }
}
