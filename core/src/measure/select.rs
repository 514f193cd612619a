//! Picking the winner: noise-aware and deterministic.
//!
//! Configs whose mean is within the combined 95 % interval of the best, or within
//! `tie_tolerance` of it, form the tie band. The band is ordered by a stable rule so that
//! independent processes, measuring the same configs with different noise, pick the same winner:
//!
//! 1. the declared default config first (tuning never moves away from the default for noise);
//! 2. then lower resource use (registers × threads + shared memory in 32-bit words), which
//!    leaves more room for neighbouring kernels;
//! 3. then declaration order (enumeration index).
//!
//! Configs stopped early by racing were clearly slower and never join the band.

use crate::measure::stats::Stats;
use serde::Serialize;

/// A measured candidate for selection.
#[derive(Clone, Debug)]
pub struct Entrant<'a> {
    /// Declaration order (enumeration index in the space, default = its own index).
    pub order: usize,
    /// Whether this is the declared default config.
    pub is_default: bool,
    /// Resource use, lower is better; `None` when unknown (sorts as 0).
    pub resource_score: Option<u64>,
    /// Its timings.
    pub stats: &'a Stats,
}

/// The winner and the tie band, as indices into the input slice.
#[derive(Clone, Debug, PartialEq)]
pub struct Selection {
    /// Index of the winner.
    pub winner: usize,
    /// Indices of every entrant tied with the fastest, in tie-break order.
    pub tie_band: Vec<usize>,
    /// Index of the fastest by mean.
    pub fastest: usize,
    /// The rule that put the winner first in its tie band; `None` when it stands alone.
    pub tie_break: Option<TieBreak>,
}

/// Which rule of the tie-break order put the winner first among the configs tied with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TieBreak {
    /// The winner is the spec's default config.
    Default,
    /// It uses fewer resources than the next in the band.
    Resources,
    /// It comes first in the space's declaration order (resource use equal or unknown).
    Declaration,
}

impl TieBreak {
    /// The rule in words, for a summary line: "the tie-break took {words}".
    pub fn words(self) -> &'static str {
        match self {
            TieBreak::Default => "the spec's default config",
            TieBreak::Resources => "the one using the fewest resources (registers × threads + shared memory)",
            TieBreak::Declaration => "the first in the space's declaration order",
        }
    }
}

/// Picks the winner; `None` when there is no entrant.
pub fn select(entrants: &[Entrant<'_>], tie_tolerance: f64) -> Option<Selection> {
    let fastest = (0..entrants.len())
        .filter(|&i| !entrants[i].stats.raced)
        .min_by(|&a, &b| entrants[a].stats.mean.total_cmp(&entrants[b].stats.mean).then(entrants[a].order.cmp(&entrants[b].order)))
        .or_else(|| (0..entrants.len()).min_by(|&a, &b| entrants[a].stats.mean.total_cmp(&entrants[b].stats.mean)))?;
    let best = entrants[fastest].stats;
    let finite = |x: f64| if x.is_finite() { x } else { 0.0 };
    let mut band: Vec<usize> = (0..entrants.len())
        .filter(|&i| {
            let s = entrants[i].stats;
            if i == fastest {
                return true;
            }
            if s.raced {
                return false;
            }
            let combined = (finite(s.ci_half).powi(2) + finite(best.ci_half).powi(2)).sqrt();
            s.mean - best.mean <= combined.max(tie_tolerance * best.mean)
        })
        .collect();
    band.sort_by(|&a, &b| {
        let (ea, eb) = (&entrants[a], &entrants[b]);
        eb.is_default.cmp(&ea.is_default).then(ea.resource_score.unwrap_or(0).cmp(&eb.resource_score.unwrap_or(0))).then(ea.order.cmp(&eb.order))
    });
    let tie_break = band.get(1).map(|&next| {
        let (w, n) = (&entrants[band[0]], &entrants[next]);
        if w.is_default {
            TieBreak::Default
        } else if w.resource_score.unwrap_or(0) < n.resource_score.unwrap_or(0) {
            TieBreak::Resources
        } else {
            TieBreak::Declaration
        }
    });
    Some(Selection { winner: band[0], tie_band: band, fastest, tie_break })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(mean: f64, ci: f64) -> Stats {
        Stats { samples: 10, mean, median: mean, min: mean, max: mean, stddev: 0.0, ci_half: ci, raced: false }
    }

    #[test]
    fn fastest_wins_when_clear() {
        let s = [st(2.0, 0.01), st(1.0, 0.01), st(1.5, 0.01)];
        let e: Vec<_> = s.iter().enumerate().map(|(i, s)| Entrant { order: i, is_default: false, resource_score: None, stats: s }).collect();
        let sel = select(&e, 0.005).unwrap();
        assert_eq!(sel.winner, 1);
        assert_eq!(sel.tie_band, vec![1]);
        // A winner alone needs no tie-break.
        assert_eq!(sel.tie_break, None);
    }

    #[test]
    fn ties_break_by_default_then_resources_then_order() {
        let s = [st(1.002, 0.004), st(1.0, 0.004), st(1.001, 0.004), st(1.3, 0.001)];
        let mk = |def: usize, res: [u64; 4]| -> Vec<Entrant<'_>> {
            s.iter().enumerate().map(|(i, s)| Entrant { order: i, is_default: i == def, resource_score: Some(res[i]), stats: s }).collect()
        };
        let sel = select(&mk(0, [5, 5, 5, 0]), 0.005).unwrap();
        assert_eq!((sel.winner, sel.tie_break), (0, Some(TieBreak::Default)));
        let sel = select(&mk(9, [5, 6, 4, 0]), 0.005).unwrap();
        assert_eq!((sel.winner, sel.tie_break), (2, Some(TieBreak::Resources)));
        let sel = select(&mk(9, [5, 5, 5, 0]), 0.005).unwrap();
        assert_eq!((sel.winner, sel.tie_break), (0, Some(TieBreak::Declaration)));
        assert_eq!(sel.tie_band, vec![0, 1, 2]);
        assert_eq!(sel.fastest, 1);
    }

    #[test]
    fn raced_configs_never_tie() {
        let mut slow = st(1.001, 0.5);
        slow.raced = true;
        let s = [slow, st(1.0, 0.001)];
        let e: Vec<_> = s.iter().enumerate().map(|(i, s)| Entrant { order: i, is_default: i == 0, resource_score: None, stats: s }).collect();
        assert_eq!(select(&e, 0.005).unwrap().winner, 1);
    }
}
