//! Few-shot tuning on a device never seen, from what other devices measured of the same kernel.
//!
//! [`Transfer`] predicts each candidate's log time on this device as
//!
//! ```text
//! predicted(c) = a + b · Σ_s w_s · score_s(c) + Σ_p g[p, value of p in c]
//! ```
//!
//! - `score_s(c)` is source `s`'s log time of `c` over its best ([`Source::scores`]);
//! - `w_s` weighs each source by how well its ranking agrees with what has been measured here
//!   (Kendall's τ on the measured configs, softmax over sources): a source that ranks this
//!   device's configs as it measures them leads, one that does not fades;
//! - `a`, `b` calibrate the weighted ranking to this device's times (least squares, `b ≥ 0`);
//! - `g` corrects it per parameter value (ridge regression of the residuals on one-hot
//!   parameter values), so that a value this device likes more or less than the sources do
//!   (a tile shape, a memory space) moves the ranking.
//!
//! It measures the best predicted candidate not yet measured. Beside it runs the search a tune
//! without priors would run (the fallback, told every outcome), and the turns are shared by
//! what has been measured:
//! - the model makes the first [`FIRST`] picks (the sources' favourites by their mean); then,
//!   when a source ranks every one of them [`SURPRISE_GAP`] or more below its own favourite
//!   (1.65× slower), that source's favourite, once, for the source they serve worst (the mean
//!   favours what most sources favour, and the one GPU in the fleet like this device would be
//!   outvoted: an H200 from six GPUs and an H100 was at 0.54 of its optimum after 5
//!   evaluations and 0.98 after 20, and is at 1.00 after 5 now; never withdrawn); then
//!   [`YARDSTICK`] picks of the fallback (what the same search finds without priors, to hold
//!   the model to), the last of them the config the sources rank last (the contrast: a
//!   ranking that holds at its top should hold at its bottom; on recorded convolution spaces
//!   one GPU's slowest config is often faster on another than its fastest);
//! - in a batch asked before the model's first picks are told (a tune with many configs in
//!   flight asks most of a short budget so), the model shares its turns with the fallback:
//!   nothing has checked the sources yet, however many they are, and their weights stay even
//!   until three of the model's outcomes are in (with 16 in flight, two sources that both
//!   mislead left the batch to the model's picks: the convolution MI250X from the A100 and the
//!   H100 reached 0.334 of its optimum after 20 evaluations against 0.468 without priors, and
//!   reaches 0.536);
//! - with a single source, which no other source checks (or sources that rank alike, one GPU
//!   measured twice: Spearman's ρ ≥ [`ALIKE`] over the configs both measured), the model
//!   keeps sharing its turns after the yardstick too, wherever no rule below gives the
//!   fallback more (three random picks are too few to hold one source to where most configs
//!   are slow and a few fast: the convolution W6600 from the H100 alone, whose favourites beat
//!   most of its configs at 0.04 of its optimum, was at 0.483 after 20 evaluations against
//!   0.698 without priors, and is at 0.661);
//! - when the sources rank what was measured here worse than chance (τ < [`DISTRUST`] over
//!   every measured config), or the fallback's proposals have found a better config than the
//!   model's and the sources do not rank it well (τ < [`TRUST`]), the fallback takes every turn;
//!   with [`FRESH_RUNWAY`] evaluations or more of the budget left (or no count of them; under a
//!   time limit, no more than the tuner's estimate of what the time left allows:
//!   [`Strategy::evaluations_left_in_time`]), the fresh
//!   copy of the fallback described below takes them (the fallback told the sources' first picks
//!   climbs from the best of them, and inverted sources' picks gave the convolution A100 0.68 of
//!   its optimum, a basin it then stayed in: 0.740 at 100 evaluations against 0.844 without
//!   priors, and 0.847 with the fresh copy);
//! - when the contrast beats every config the model has found, the sources' ranking runs the
//!   wrong way where it matters: the two take turns until the model's picks beat it;
//! - when even the model's own picks are ranked poorly by the best source (τ <
//!   [`HAND_OVER`]), the two take turns, and the fallback takes them all once the model has
//!   gone [`STALL`] outcomes without a better config;
//! - when a config the fallback proposed, one the sources rank far below the model's best
//!   ([`SURPRISE_GAP`]: 1.65× slower), comes within 10 % of it here or beats it, the sources
//!   rank this device's configs in the right order but see one basin where it has another (an
//!   H100 from the six recorded GPUs: their favourites all read the input from global memory,
//!   while configs they rank 2–10× slower run as fast here): the two take turns (checked after
//!   the stall rule below, which hands over more);
//! - when the model's own last [`STALL`] picks found nothing better than the best so far (by
//!   [`MODEL_GAIN`], 2 %: a plateau of the sources' favourites keeps finding configs a fraction
//!   of a percent faster), the sources' ranking has stopped paying here, however well it ranks
//!   what was measured: the
//!   fallback takes all turns but one in [`STALLED_MODEL_TURN`] (the model keeps looking, and
//!   takes its turns back when one of its picks improves), and all of them once the fallback's
//!   proposals have found a config 2 % faster than any of the model's (the convolution A100, whose
//!   sources' favourites give it 0.68 of its optimum at once and nothing better after, gained
//!   0.010 at 100 evaluations; no other case moved). If the caller gave a fresh copy of
//!   the fallback ([`Transfer::with_fresh_base`]), that copy takes over then, told only the
//!   outcomes of what it asks for (a config measured already is answered at no cost): the
//!   fallback told every outcome climbs in the basin the model dug, and a search without
//!   priors started afresh is what keeps a long tune from ending worse than one without priors.
//!   Only with [`RUNWAY`] evaluations of the budget left ([`Transfer::with_budget`]): a fresh
//!   search needs room to get going, and near the end the model's next favourites are the
//!   better bet;
//! - otherwise the model keeps its turns.
//!
//! **Picks in flight.** A tune keeps one and a half proposals per compile thread in flight while
//! compiling bounds it (24 with 16 threads, and never fewer than two), so most of a short budget
//! is asked before any outcome is in. Just before one of the model's picks is
//! measured, the tuner asks whether it is still wanted ([`Strategy::still_wanted`]): once the
//! model's first picks are told, a pick is withdrawn unmeasured (not counted against the budget,
//! free to be proposed again) when the fallback now takes every turn (the sources distrusted or
//! beaten, or handed over and stalled), or when the model, refitted on the outcomes told since,
//! ranks at least as many unmeasured candidates above it as it has picks in flight (half as many
//! while a surprise shares the turns, so that the fallback gets its share of the flight). The tuner
//! asks for another in its place; so the evaluations spent follow what was learnt, as in a
//! search one at a time, at the cost of the withdrawn picks' compiles (never more withdrawn
//! than outcomes told). Asked one at a time, a pick is always still wanted when it is measured.
//!
//! The calibration and corrections are fitted on the model's own picks only, and not on the pick
//! made for one source (it is there to weigh the sources). On the recorded six-GPU spaces this
//! reaches 0.98 of the optimum in 20 evaluations in 11 of 12 leave-one-out cases one at a time (10
//! with the 2 or 3 in flight of a tune on one or two compile threads, 9 with the 6 of four and the
//! 24 of sixteen), and in all 12 at least as good as the search without priors; with sources made
//! to mislead (inverted or shuffled times, or only the other vendor's GPUs) it stays within 0.05
//! of the search without priors on 36 of 36 cases one at a time and 35 of 36 with the flight of
//! four compile threads (200 seeds); the exception is sources that tell nothing (shuffled times,
//! twenty permutations): on the convolution MI250X 0.077 below with that flight (0.029 one at a
//! time), the probe picks and the picks of a source that agrees with the first outcomes by
//! chance; from a single source GPU (each of the fourteen recorded spaces from each other of its
//! kernel), within 0.05 in 80 of 86 pairs, worst 0.094 below; and at 100 evaluations the
//! convolution A100, which the sources' ranking leads astray, reaches 0.798 (0.839 without
//! priors, 200 seeds) where it stayed at 0.680 before the stall rule (docs/benchmarks.md, `cargo run
//! --release -p kerntune-core --example misleading_priors`, `… --example few_sources`).
//!
//! [`PlainTransfer`] is the rule it improves on: each source's best, then each one's second
//! best, and so on.

use crate::search::prior::{Prior, Source};
use crate::search::proposer;
use crate::search::ridge;
use crate::search::strategy::{Candidates, Outcome, Strategy};
use std::sync::Arc;

/// Evaluations made by the model alone before it may hand turns to the fallback.
const FIRST: usize = 3;
/// Softmax temperature of the source weights (on Kendall's τ).
const TEMPERATURE: f64 = 0.15;
/// Ridge penalty of the per-value corrections.
const LAMBDA: f64 = 1.5;
/// Outcomes in a row without a 0.5 % improvement that count as a stall.
const STALL: usize = 8;
/// How much faster than the best so far (2 %) one of the model's own outcomes must be to reset
/// its stall count: the sources' favourites on a plateau here (within a few percent of each
/// other) find configs a fraction of a percent faster, and are stalled all the same.
const MODEL_GAIN: f64 = 0.02;
/// Below this agreement of the best source on the model's picks, the model shares its turns
/// with the fallback (and hands them all over when stalled).
const HAND_OVER: f64 = 0.2;
/// Fallback proposals made after the model's first picks: the yardstick it is held to.
const YARDSTICK: usize = 3;
/// The sources' ranking of every config measured here (Kendall's τ) at or above which the
/// model keeps its turns even when the fallback has found a better config.
const TRUST: f64 = 0.3;
/// Below this ranking of every config measured here, the fallback takes every turn whoever leads.
const DISTRUST: f64 = 0.0;
/// Once the model's picks stall, it keeps one turn in this many.
const STALLED_MODEL_TURN: u64 = 4;
/// The fewest evaluations a budget must have left for a stall to hand the turns over: a
/// search without priors started with fewer would spend them on its first, random picks (its
/// model's initial design alone is 12), and the model's next favourites are the better bet.
const RUNWAY: usize = 2 * STALL;
/// The fewest evaluations a budget must have left for sources that are distrusted (or beaten,
/// [`Handed::Distrust`], [`Handed::Beaten`]) to hand the turns to a fresh search without priors
/// instead of the fallback told every outcome so far. The fallback told the sources' first picks
/// climbs from the best of them, which near the start is the better bet (at 20 evaluations the
/// fresh search lowered the misleading cases' mean and their worst, −0.053 → −0.075); a long
/// tune that climbs from a basin the sources led it into stays there (the convolution A100 with
/// inverted sources ended at 0.740 of its optimum at 100 evaluations, against 0.844 without
/// priors; with the fresh search 0.847). Measured crossover: at 40 evaluations the two are
/// level, at 50 and 100 the fresh search is ahead on the worst case (docs/benchmarks.md).
const FRESH_RUNWAY: usize = 5 * STALL;
/// How far below the model's best config (log time over their best) the sources must rank a
/// config of the fallback's for its coming close here to be a surprise: 1.65× slower.
const SURPRISE_GAP: f64 = 0.5;
/// How close (log time, about 10 %) to the model's best config a surprise comes.
const SURPRISE_NEAR: f64 = 0.1;
/// Spearman's ρ over the configs two sources both measured at or above which they count as one
/// source measured twice (our H100 and H200 rank the hub convolution's configs at 0.998; the
/// next closest pair of the recorded GPUs, the A4000 and A6000 on dedispersion, at 0.970).
const ALIKE: f64 = 0.99;

/// The adaptive transfer search of the module docs.
pub struct Transfer {
    prior: Arc<Prior>,
    base: Box<dyn Strategy>,
    scores: Vec<Vec<f32>>,
    offsets: Vec<usize>,
    features: usize,
    /// Successful outcomes: candidate and log time.
    obs: Vec<(usize, f64)>,
    taken: Vec<bool>,
    failed: Vec<bool>,
    best: f64,
    since_improvement: usize,
    /// The model's own outcomes since one of its picks last found a config [`MODEL_GAIN`] better.
    model_since: usize,
    /// Kendall's τ of the weighted sources against every config measured here.
    overall: f64,
    turn: u64,
    pred: Vec<f64>,
    /// The weighted sources' score of every candidate, as of the last refit.
    ensemble: Vec<f64>,
    dirty: bool,
    /// Proposals made by the model and by the fallback.
    pub proposals: (usize, usize),
    /// Which candidates the fallback proposed.
    from_base: std::collections::HashSet<usize>,
    /// Outcomes (log time; infinity for a failure) of the model's and the fallback's proposals
    /// (the contrast left out).
    outcomes: (Vec<f64>, Vec<f64>),
    /// The contrast (the config the sources rank last) once proposed, and its outcome (log
    /// time) once told.
    contrast: Option<(usize, Option<f64>)>,
    /// The source that agrees best with the model's picks here, and its τ (the agreement
    /// [`HAND_OVER`] is compared with); `None` until the model has three outcomes.
    lead: Option<(usize, f64)>,
    /// The fallback's proposals, by why the turn was its.
    handed: std::collections::BTreeMap<Handed, usize>,
    /// A fresh copy of the fallback, to take over once the model stalls.
    fresh: Option<Box<dyn Strategy>>,
    /// Whether the fallback is told only the outcomes of what it asked for (the fresh copy).
    independent: bool,
    /// What the fallback asked for (the fresh copy, once it took over).
    base_asked: std::collections::HashSet<usize>,
    /// Every outcome told, to answer the fresh copy's asks for configs measured already.
    told: std::collections::HashMap<usize, Outcome>,
    /// Most evaluations the tune makes, when it counts them ([`Transfer::with_budget`]).
    budget: Option<usize>,
    /// The tuner's last estimate of the evaluations its time limit leaves
    /// ([`Strategy::evaluations_left_in_time`]).
    in_time: Option<usize>,
    /// When the fresh copy took over.
    fresh_from: Option<FreshStart>,
    /// The model's proposals asked and not told yet (in flight).
    pending: Vec<bool>,
    /// Outcomes told, and the model's proposals withdrawn before they were measured.
    heard: usize,
    withdrawn: usize,
    /// The pick made for the source the first picks served worst, and that source.
    for_a_source: Option<(usize, usize)>,
    /// Whether the sources are one (a single source, or sources that rank alike, [`ALIKE`]).
    one_voice: bool,
    /// Who proposed each candidate asked for, as last asked ([`proposer`]).
    proposed: std::collections::HashMap<usize, String>,
}

/// Why a turn went to the fallback search.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Handed {
    /// No prior to learn from.
    NoPrior,
    /// The yardstick after the model's first picks.
    Yardstick,
    /// A batch asked before the model's first picks were told, which nothing had checked: turns
    /// shared.
    Blind,
    /// One source (or sources ranking alike, [`ALIKE`]), which no other source checks: turns
    /// shared.
    OneSource,
    /// The sources rank what was measured here worse than chance.
    Distrust,
    /// The fallback found better configs than the model, and the sources rank poorly.
    Beaten,
    /// The sources' least favourite beat their favourites: turns shared.
    Contrast,
    /// A config the sources rank far below their favourites came close to them: turns shared.
    Surprise,
    /// The best source ranks the model's own picks poorly: turns shared, or all once stalled.
    HandOver,
    /// The model's last picks found nothing better: all turns but one in [`STALLED_MODEL_TURN`],
    /// or all once the fallback's picks have found a config 2 % faster.
    Stalled,
}

impl Handed {
    /// Its word in a proposal's tag ([`proposer::REASONS`]).
    fn tag(self) -> &'static str {
        match self {
            Handed::NoPrior => "no-prior",
            Handed::Yardstick => "yardstick",
            Handed::Blind => "blind",
            Handed::OneSource => "one-source",
            Handed::Distrust => "distrust",
            Handed::Beaten => "beaten",
            Handed::Contrast => "contrast",
            Handed::Surprise => "surprise",
            Handed::HandOver => "hand-over",
            Handed::Stalled => "stalled",
        }
    }

    /// Why, for the report.
    fn said(self) -> &'static str {
        match self {
            Handed::NoPrior => "with no prior to learn from",
            Handed::Yardstick => "as the yardstick, the last of them the sources' least favourite",
            Handed::Blind => "in turns shared in a batch asked before the sources' first picks were measured",
            Handed::OneSource => "in turns shared with one source (or sources ranking alike), which no other source checks",
            Handed::Distrust => "with the sources ranking the configs measured here worse than chance",
            Handed::Beaten => "with it ahead of the sources' favourites and the sources ranking poorly",
            Handed::Contrast => "in turns shared after the sources' least favourite beat their favourites",
            Handed::Surprise => "in turns shared after a config the sources rank far below their favourites came within 10 % of them",
            Handed::HandOver => "with even the best source ranking the sources' own picks poorly",
            Handed::Stalled => "with the sources' last picks finding nothing better",
        }
    }
}

/// When the fresh copy of the fallback took over, for the summary.
#[derive(Clone, Copy, Debug)]
struct FreshStart {
    /// Proposals made before.
    after: usize,
    why: Handed,
    /// The evaluations left then, where anything counted them, and whether the time limit's
    /// estimate was the lesser count.
    left: Option<(usize, bool)>,
}

impl Transfer {
    /// Learns from `prior`, falling back to `base`.
    pub fn new(prior: Arc<Prior>, base: Box<dyn Strategy>) -> Transfer {
        Transfer {
            prior,
            base,
            scores: Vec::new(),
            offsets: Vec::new(),
            features: 0,
            obs: Vec::new(),
            taken: Vec::new(),
            failed: Vec::new(),
            best: f64::INFINITY,
            since_improvement: 0,
            model_since: 0,
            overall: 0.0,
            turn: 0,
            pred: Vec::new(),
            ensemble: Vec::new(),
            dirty: true,
            proposals: (0, 0),
            from_base: Default::default(),
            outcomes: (Vec::new(), Vec::new()),
            contrast: None,
            lead: None,
            handed: Default::default(),
            fresh: None,
            independent: false,
            base_asked: Default::default(),
            told: Default::default(),
            budget: None,
            in_time: None,
            fresh_from: None,
            pending: Vec::new(),
            heard: 0,
            withdrawn: 0,
            for_a_source: None,
            one_voice: false,
            proposed: Default::default(),
        }
    }

    /// The search a tune with priors runs: learns from `prior`, falls back to what `base` makes
    /// (the search without priors), and hands a fresh one of those over once the model stalls
    /// ([`Transfer::with_fresh_base`]), within a tune of at most `evaluations`
    /// ([`Transfer::with_budget`]).
    pub fn adaptive<E>(prior: Arc<Prior>, base: impl Fn() -> Result<Box<dyn Strategy>, E>, evaluations: Option<usize>) -> Result<Transfer, E> {
        Ok(Transfer::new(prior, base()?).with_fresh_base(base()?).with_budget(evaluations))
    }

    /// With the most evaluations the tune makes (`None` when it does not count them): with
    /// fewer than 16 left, a stalled model keeps its turns, as a fresh search would
    /// have no room to get going.
    pub fn with_budget(mut self, evaluations: Option<usize>) -> Transfer {
        self.budget = evaluations;
        self
    }

    /// With `fresh`, a copy of the fallback that has been told nothing (the search a tune
    /// without priors runs, with the same seed), to take over once the model's picks stall.
    pub fn with_fresh_base(mut self, fresh: Box<dyn Strategy>) -> Transfer {
        self.fresh = Some(fresh);
        self
    }

    fn init(&mut self, cands: &Candidates<'_>) {
        if self.taken.len() == cands.len() {
            return;
        }
        self.taken = vec![false; cands.len()];
        self.failed = vec![false; cands.len()];
        self.pending = vec![false; cands.len()];
        self.scores = self.prior.sources.iter().map(Source::scores).collect();
        self.one_voice = one_voice(&self.prior.sources);
        self.offsets.clear();
        self.features = 0;
        for p in cands.params {
            self.offsets.push(self.features);
            self.features += if p.values.len() > 1 { p.values.len() } else { 0 };
        }
        self.dirty = true;
    }

    /// The one-hot feature indices of candidate `i`.
    fn features_of<'c>(&'c self, cands: &'c Candidates<'_>, i: usize) -> impl Iterator<Item = usize> + 'c {
        cands.coords[i].iter().enumerate().filter(|(p, _)| cands.params[*p].values.len() > 1).map(|(p, &v)| self.offsets[p] + v as usize)
    }

    /// The successful outcomes of the model's own proposals: candidate and log time.
    fn own(&self) -> Vec<(usize, f64)> {
        self.obs.iter().filter(|o| !self.from_base.contains(&o.0)).copied().collect()
    }

    /// The sources' weights, fitted on the model's own outcomes `own` (uniform before three):
    /// the source that agrees best with them and its τ, and the weighted sources' score of each
    /// of the `n` candidates.
    fn weigh(&self, own: &[(usize, f64)], n: usize) -> (Option<(usize, f64)>, Vec<f64>) {
        let s = self.scores.len();
        let mut w = vec![1.0 / s.max(1) as f64; s];
        let mut lead = None;
        // The sources are weighed on the model's own proposals: near the configs they favour,
        // where the choice is made (the fallback's picks, spread over the space, would reward
        // agreeing on the slow configs nobody wants).
        if own.len() >= 3 && s > 0 {
            let y: Vec<f64> = own.iter().map(|o| o.1).collect();
            let taus: Vec<f64> = self.scores.iter().map(|sc| kendall(&own.iter().map(|o| sc[o.0] as f64).collect::<Vec<_>>(), &y)).collect();
            let (best, top) = taus.iter().copied().enumerate().fold((0, f64::NEG_INFINITY), |b, (i, t)| if t > b.1 { (i, t) } else { b });
            lead = Some((best, top));
            w = taus.iter().map(|t| ((t - top) / TEMPERATURE).exp()).collect();
            let total: f64 = w.iter().sum();
            w.iter_mut().for_each(|x| *x /= total);
        }
        (lead, (0..n).map(|i| self.scores.iter().zip(&w).map(|(sc, w)| w * sc[i] as f64).sum()).collect())
    }

    /// Kendall's τ of the weighted sources' scores against every config measured here.
    fn agreement(&self, ensemble: &[f64]) -> f64 {
        kendall(&self.obs.iter().map(|o| ensemble[o.0]).collect::<Vec<_>>(), &self.obs.iter().map(|o| o.1).collect::<Vec<_>>())
    }

    /// Refits the weights, the calibration and the corrections, and predicts every candidate.
    fn refit(&mut self, cands: &Candidates<'_>) {
        let n = cands.len();
        // The model is calibrated on its own proposals too (the fallback's picks would pull the
        // calibration toward the slow configs).
        let mut own = self.own();
        let (lead, ensemble) = self.weigh(&own, n);
        if lead.is_some() {
            self.lead = lead;
        }
        self.pred = ensemble.clone();
        // Whether the sources rank what has been measured here, everywhere it was measured.
        self.overall = self.agreement(&ensemble);
        // The pick made for one source is there to weigh the sources, and is left out of the
        // calibration and corrections: where the outcome weighs that source down, it lies far
        // from the configs the model chooses among, and would pull the corrections toward its
        // parameter values.
        if let Some((p, _)) = self.for_a_source {
            let rest: Vec<(usize, f64)> = own.iter().copied().filter(|o| o.0 != p).collect();
            if rest.len() >= 3 {
                own = rest;
            }
        }
        let m = own.len();
        if m >= 3 {
            let e: Vec<f64> = own.iter().map(|o| ensemble[o.0]).collect();
            let y: Vec<f64> = own.iter().map(|o| o.1).collect();
            let (a, b) = calibrate(&e, &y);
            let residual: Vec<f64> = e.iter().zip(&y).map(|(e, y)| y - (a + b * e)).collect();
            let rows: Vec<Vec<usize>> = own.iter().map(|o| self.features_of(cands, o.0).collect()).collect();
            let g = ridge_onehot(&rows, &residual, self.features, LAMBDA);
            self.pred = (0..n).map(|i| a + b * ensemble[i] + self.features_of(cands, i).map(|f| g[f]).sum::<f64>()).collect();
        }
        self.ensemble = ensemble;
        self.dirty = false;
    }

    /// The fallback's next candidate not taken yet (it may propose what the model took: a few
    /// tries), `None` when it has none. A fresh fallback that asks for a config measured
    /// already is told its outcome at once (one still in flight, when it arrives).
    fn base_pick(&mut self, cands: &Candidates<'_>) -> Option<usize> {
        for _ in 0..8 {
            let i = self.base.ask(cands, 1).first().copied()?;
            if self.independent {
                self.base_asked.insert(i);
            }
            if i < cands.len() && !self.taken[i] {
                return Some(i);
            }
            if let Some(o) = self.told.get(&i).filter(|_| self.independent) {
                self.base.tell(i, o);
            }
        }
        None
    }

    /// The model's next candidate: the best predicted one not taken.
    /// (`ask` refits before every turn.)
    fn model_pick(&self, cands: &Candidates<'_>) -> Option<usize> {
        (0..cands.len()).filter(|&i| !self.taken[i] && !self.failed[i]).min_by(|&a, &b| self.pred[a].total_cmp(&self.pred[b]).then(a.cmp(&b)))
    }

    /// A pick for one source, made once after the model's first picks: the favourite of the
    /// source those picks serve worst, when that source ranks every one of them
    /// [`SURPRISE_GAP`] or more below its favourite (1.65× slower), and that source; `None`
    /// when every source has a first pick near its favourite, or there is one source. The
    /// first picks are the sources' mean favourites, which are what most of them favour; a
    /// source unlike the rest (the one GPU in the fleet like this device, or one unlike it)
    /// gets its favourite measured too, so that the weights fitted on the first outcomes can
    /// tell the sources apart.
    fn pick_for_a_source(&self, cands: &Candidates<'_>) -> Option<(usize, usize)> {
        let mine: Vec<usize> = (0..cands.len()).filter(|&i| self.taken[i] && !self.from_base.contains(&i)).collect();
        if self.scores.len() < 2 || mine.is_empty() {
            return None;
        }
        let served = |sc: &Vec<f32>| mine.iter().map(|&i| f64::from(sc[i])).fold(f64::INFINITY, f64::min);
        let (s, gap) = self.scores.iter().map(served).enumerate().max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))?;
        if gap < SURPRISE_GAP {
            return None;
        }
        let sc = &self.scores[s];
        (0..cands.len())
            .filter(|&i| !self.taken[i] && !self.failed[i])
            .min_by(|&a, &b| sc[a].total_cmp(&sc[b]).then(self.pred[a].total_cmp(&self.pred[b])).then(a.cmp(&b)))
            .map(|i| (i, s))
    }

    /// Whether the model, ranking the candidates as it does now, would still pick `index` for
    /// one of its proposals in flight: fewer candidates not measured rank above it than it has
    /// proposals in flight (half of them, rounded up, when the turns are `shared` with the
    /// fallback).
    fn among_next_picks(&self, index: usize, shared: bool) -> bool {
        let flying = self.pending.iter().filter(|&&p| p).count();
        let flying = if shared { flying.div_ceil(2) } else { flying };
        let at = |j: usize| self.pred[j].total_cmp(&self.pred[index]).then(j.cmp(&index));
        let above = (0..self.pred.len()).filter(|&j| !self.failed[j] && (!self.taken[j] || self.pending[j]) && at(j).is_lt()).count();
        above < flying
    }

    /// Whether the model's proposals have found a config at least as fast as the fallback's,
    /// give or take `slack` (log time: the fallback's best must be that much faster to lead);
    /// `None` until the model has made its first picks and the fallback has proposed some.
    fn model_leads(&self, slack: f64) -> Option<bool> {
        let (m, b) = (&self.outcomes.0, &self.outcomes.1);
        (m.len() >= FIRST && !b.is_empty()).then(|| best_of(m) <= best_of(b) + slack)
    }

    /// Whether the fallback's proposals have found a config [`MODEL_GAIN`] (2 %) faster than
    /// any the model's found: less would be a plateau the two share.
    fn model_outdone(&self) -> bool {
        self.model_leads(-(1.0 - MODEL_GAIN).ln()) == Some(false)
    }

    /// The config the sources rank last (by their mean score over the sources that measured
    /// it), not taken yet.
    fn least_favourite(&self, cands: &Candidates<'_>) -> Option<usize> {
        (0..cands.len())
            .filter(|&i| !self.taken[i])
            .filter_map(|i| {
                let (sum, n) = self.scores.iter().map(|sc| f64::from(sc[i])).filter(|x| x.is_finite()).fold((0.0, 0), |(s, n), x| (s + x, n + 1));
                (n > 0).then(|| (sum / f64::from(n), i))
            })
            .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)))
            .map(|(_, i)| i)
    }

    /// Whether this turn's fallback pick is the contrast: the yardstick's last.
    fn contrast_turn(&self) -> bool {
        self.contrast.is_none() && !self.prior.is_empty() && self.proposals.0 >= FIRST && self.proposals.1 + 1 == YARDSTICK
    }

    /// Whether the contrast has beaten every config the model's picks found.
    fn contrast_leads(&self) -> bool {
        matches!(self.contrast, Some((_, Some(c))) if c < best_of(&self.outcomes.0))
    }

    /// Whether one of the fallback's configs that the sources rank far below the model's best
    /// ([`SURPRISE_GAP`]) came within [`SURPRISE_NEAR`] of it here (or beat it): the sources see
    /// one basin where this device has another. On the recorded convolution spaces, with the
    /// other five GPUs as the sources (their mean), 0–1.5 % of the configs ranked so far
    /// below come so close, and 3.4 % on the A100, which they lead astray; on an H100 outside
    /// the fleet about half of those measured there did.
    fn surprised(&self) -> bool {
        if self.ensemble.is_empty() || self.outcomes.0.len() < FIRST {
            return false;
        }
        let Some(&(b, y)) = self.obs.iter().filter(|o| !self.from_base.contains(&o.0)).min_by(|p, q| p.1.total_cmp(&q.1)) else {
            return false;
        };
        self.obs.iter().filter(|o| self.from_base.contains(&o.0)).any(|&(i, t)| self.ensemble[i] - self.ensemble[b] >= SURPRISE_GAP && t - y < SURPRISE_NEAR)
    }

    /// Evaluations the budget has left: every config proposed or told spends one; under a time
    /// limit, no more than the tuner's estimate of what the time left allows (as many as can be
    /// counted without either).
    fn left(&self) -> usize {
        let counted = self.budget.map_or(usize::MAX, |b| b.saturating_sub(self.taken.iter().filter(|&&t| t).count()));
        counted.min(self.in_time.unwrap_or(usize::MAX))
    }

    /// Whether this turn goes to the fallback search, and why.
    fn fallback_turn(&self) -> Option<Handed> {
        if self.prior.is_empty() {
            return Some(Handed::NoPrior);
        }
        // The first picks and the yardstick are counted in proposals, not outcomes: a tuner that
        // keeps many configs in flight asks for them before any outcome is in, and would
        // otherwise fill its first batch with the model's picks alone.
        if self.proposals.0 < FIRST {
            return None;
        }
        // After the model's first picks, as many fallback proposals: the yardstick it is held to.
        if self.proposals.1 < YARDSTICK {
            return Some(Handed::Yardstick);
        }
        // A batch asked before the first picks are told (a tune with many configs in flight asks
        // most of a short budget so): nothing has checked the sources yet, however many they
        // are (their weights stay even until three of the model's outcomes are in), so the turns
        // are shared. (One source keeps them shared after the yardstick: the last rule below.)
        if self.outcomes.0.len() < FIRST {
            return self.turn.is_multiple_of(2).then_some(Handed::Blind);
        }
        match (self.model_leads(0.0), self.lead.map(|(_, tau)| tau)) {
            // The sources rank what was measured here worse than chance: whoever leads, they
            // are not this device's.
            _ if self.overall < DISTRUST => Some(Handed::Distrust),
            // The fallback found better configs than the sources' favourites, and the sources
            // do not rank what was measured here: they are not this device's. The fallback
            // takes every turn.
            (Some(false), _) if self.overall < TRUST => Some(Handed::Beaten),
            // The sources' least favourite beats their favourites here: their ranking runs the
            // wrong way somewhere that matters. The two take turns until the model's picks beat it.
            _ if self.contrast_leads() => self.turn.is_multiple_of(2).then_some(Handed::Contrast),
            // The sources rank even the model's own picks poorly: the model stopped finding
            // better configs, and the fallback takes every turn until something improves; or
            // it has not, and the two take turns.
            (_, Some(a)) if a < HAND_OVER => (self.since_improvement >= STALL || self.turn.is_multiple_of(2)).then_some(Handed::HandOver),
            // The model's last picks found nothing 2 % better: its ranking stopped paying here. Once
            // the fresh search took over it keeps its turns; before, it needs room to get going.
            // The model keeps one turn in four, and none once the fallback's picks have found a
            // config 2 % better than any of its own.
            _ if self.model_since >= STALL && (self.independent || self.left() >= RUNWAY) => {
                (self.model_outdone() || !self.turn.is_multiple_of(STALLED_MODEL_TURN)).then_some(Handed::Stalled)
            }
            // A config of the fallback's that the sources rank far below their favourites came
            // close to the best of them: the sources see one basin where this device has
            // another. The two take turns.
            _ if self.surprised() => self.turn.is_multiple_of(2).then_some(Handed::Surprise),
            // One source (or sources ranking alike): nothing but the fallback's picks checks its
            // ranking, and the yardstick's three are too few where most configs are slow and a
            // few fast (its favourites can beat three random configs here and still be 25×
            // slower than the best). The two take turns.
            _ if self.one_voice => self.turn.is_multiple_of(2).then_some(Handed::OneSource),
            _ => None,
        }
    }
}

impl Strategy for Transfer {
    fn name(&self) -> String {
        "transfer".into()
    }

    fn ask(&mut self, cands: &Candidates<'_>, max: usize) -> Vec<usize> {
        self.init(cands);
        let mut out = Vec::new();
        for _ in 0..max {
            self.turn += 1;
            if self.dirty {
                self.refit(cands);
            }
            let mut pick = None;
            // After the first picks, before the yardstick: the favourite of a source they serve
            // poorly, if any (once); a model's turn.
            let for_a_source =
                if self.proposals.0 >= FIRST && self.proposals.1 == 0 && self.for_a_source.is_none() { self.pick_for_a_source(cands) } else { None };
            let why = if for_a_source.is_some() { None } else { self.fallback_turn() };
            // The fallback told everything climbs from the sources' basin; a search without priors
            // takes over once the model stalls, or once the sources are distrusted (or beaten)
            // with a long way to go.
            let fresh_start = why == Some(Handed::Stalled) || (matches!(why, Some(Handed::Distrust | Handed::Beaten)) && self.left() >= FRESH_RUNWAY);
            if fresh_start {
                if let Some(fresh) = self.fresh.take() {
                    // The search without priors, started afresh: told only what it asks for.
                    self.base = fresh;
                    self.independent = true;
                    let left = Some(self.left()).filter(|&n| n != usize::MAX).map(|n| (n, self.in_time == Some(n)));
                    self.fresh_from = why.map(|why| FreshStart { after: self.proposals.0 + self.proposals.1, why, left });
                }
            }
            if let Some(why) = why {
                let contrast = if self.contrast_turn() { self.least_favourite(cands) } else { None };
                if let Some(i) = contrast {
                    self.contrast = Some((i, None));
                }
                pick = contrast.or_else(|| self.base_pick(cands));
                if let Some(i) = pick {
                    self.proposals.1 += 1;
                    self.from_base.insert(i);
                    *self.handed.entry(why).or_default() += 1;
                    let by = if contrast.is_some() { proposer::CONTRAST.into() } else { proposer::search(why.tag()) };
                    self.proposed.insert(i, by);
                }
            }
            if pick.is_none() {
                if for_a_source.is_some() {
                    self.for_a_source = for_a_source;
                }
                pick = for_a_source.map(|(i, _)| i).or_else(|| self.model_pick(cands));
                if let Some(i) = pick {
                    self.proposals.0 += 1;
                    self.pending[i] = true;
                    let by = match for_a_source {
                        Some((_, s)) => proposer::favourite(&self.prior.sources[s].name),
                        None => proposer::SOURCES.into(),
                    };
                    self.proposed.insert(i, by);
                }
            }
            let Some(i) = pick else { break };
            self.taken[i] = true;
            out.push(i);
        }
        out
    }

    fn still_wanted(&mut self, cands: &Candidates<'_>, index: usize) -> bool {
        // Only the model's own picks, once its first picks are told (nothing before could change
        // its mind), and never more withdrawn than outcomes heard: each one cost a compile.
        if index >= self.pending.len()
            || !self.pending[index]
            || self.outcomes.0.len() < FIRST
            || self.withdrawn >= self.heard
            || self.for_a_source.is_some_and(|(i, _)| i == index)
        {
            return true;
        }
        if self.dirty {
            self.refit(cands);
        }
        let why = self.fallback_turn();
        let elsewhere = matches!(why, Some(Handed::Distrust | Handed::Beaten)) || (why == Some(Handed::HandOver) && self.since_improvement >= STALL);
        // While a surprise or a single source shares the turns, the model keeps half the picks
        // in flight. (On the model's turns of the shared ones the rule answers none, and the
        // reason is asked again: which turn it is must not decide what is withdrawn.)
        let shared = matches!(why, Some(Handed::Surprise | Handed::OneSource)) || (why.is_none() && (self.surprised() || self.one_voice));
        let wanted = !elsewhere && self.among_next_picks(index, shared);
        if !wanted {
            self.pending[index] = false;
            self.taken[index] = false;
            self.proposals.0 -= 1;
            self.withdrawn += 1;
        }
        wanted
    }

    fn expected_seconds(&self) -> Option<(f64, f64)> {
        self.prior.seconds
    }

    fn evaluations_left_in_time(&mut self, left: usize) {
        self.in_time = Some(left);
    }

    fn proposed_by(&self, index: usize) -> Option<String> {
        self.proposed.get(&index).cloned()
    }

    fn summary(&self) -> Option<String> {
        let (model, fallback) = self.proposals;
        let mut line = format!("transfer: {model} of {} proposals from the sources' ranking", model + fallback);
        // As of every outcome told: the last refit came before the last proposal, and a tune
        // with many configs in flight tells most outcomes after it.
        let (lead, ensemble) = self.weigh(&self.own(), self.taken.len());
        if let Some((s, tau)) = lead.filter(|_| self.prior.sources.len() > 1) {
            line += &format!(" ({} agreed best with this device, τ {tau:.2})", self.prior.sources[s].name);
        }
        line += &format!(", {fallback} from the {} search", self.base.name());
        let whys: Vec<String> = self.handed.iter().map(|(why, n)| format!("{n} {}", why.said())).collect();
        if !whys.is_empty() {
            line += &format!(" ({})", whys.join("; "));
        }
        if let Some(FreshStart { after, why, left }) = self.fresh_from {
            let room = match left {
                Some((left, true)) => format!(" (about {left} evaluations left at this tune's pace within its time limit)"),
                Some((left, false)) => format!(" ({left} evaluations of the budget left)"),
                None => String::new(),
            };
            line += &format!(
                "; from proposal {} on, a fresh {} search, told none of the sources' picks, took the fallback's turns {}{room}",
                after + 1,
                self.base.name(),
                why.said()
            );
        }
        if self.withdrawn > 0 {
            line +=
                &format!("; {} of the sources' picks compiled and withdrawn before being measured, the outcomes told since ranking them lower", self.withdrawn);
        }
        if let Some((_, s)) = self.for_a_source {
            line += &format!("; {}'s favourite was measured after the first picks, which it ranks far below it", self.prior.sources[s].name);
        }
        if self.obs.len() >= 3 && !self.prior.is_empty() {
            line += &format!("; at the end the sources rank every config measured here at τ {:.2}", self.agreement(&ensemble));
        }
        Some(line)
    }

    fn tell(&mut self, index: usize, outcome: &Outcome) {
        if index < self.taken.len() {
            self.taken[index] = true;
            self.pending[index] = false;
            self.heard += 1;
            let log = match outcome {
                Outcome::Time(t) if t.is_finite() && *t > 0.0 => t.ln(),
                _ => f64::INFINITY,
            };
            // Whether the outcome is faster than the best so far times `factor`.
            let below = |factor: f64| matches!(outcome, Outcome::Time(t) if t.is_finite() && *t > 0.0 && *t < self.best * factor);
            // A config 0.5 % faster than the best so far.
            self.since_improvement = if below(0.995) { 0 } else { self.since_improvement + 1 };
            let own = !self.from_base.contains(&index);
            if own {
                self.model_since = if below(1.0 - MODEL_GAIN) { 0 } else { self.model_since + 1 };
            }
            if let Some((_, told)) = self.contrast.as_mut().filter(|(i, _)| *i == index) {
                // Held apart: the yardstick compares the model with the fallback's own picks.
                told.get_or_insert(log);
            } else if own {
                self.outcomes.0.push(log);
            } else {
                self.outcomes.1.push(log);
            }
            match outcome {
                Outcome::Time(t) if t.is_finite() && *t > 0.0 => {
                    self.best = self.best.min(*t);
                    self.obs.push((index, t.ln()));
                }
                _ => self.failed[index] = true,
            }
            self.dirty = true;
        }
        // The fresh copy, once it took over, hears only what it asked for.
        if !self.independent || self.base_asked.contains(&index) {
            self.base.tell(index, outcome);
        }
        // Kept only while a fresh copy may need answers from it.
        if self.fresh.is_some() || self.independent {
            self.told.insert(index, outcome.clone());
        }
    }
}

/// The best (lowest) of some outcomes; infinity for none.
fn best_of(outcomes: &[f64]) -> f64 {
    outcomes.iter().copied().fold(f64::INFINITY, f64::min)
}

/// Whether `sources` speak with one voice: there is one, or every other ranks the configs it
/// and the first both measured alike (Spearman's ρ ≥ [`ALIKE`]): one GPU measured twice (or the
/// same kind of GPU in two machines) is not a second opinion. Compares with the first source
/// only, and stops at the first that differs.
fn one_voice(sources: &[Source]) -> bool {
    let Some((first, rest)) = sources.split_first() else { return false };
    rest.iter().all(|other| {
        let both: Vec<(f64, f64)> = first
            .times
            .iter()
            .zip(&other.times)
            .filter(|(a, b)| a.is_finite() && **a > 0.0 && b.is_finite() && **b > 0.0)
            .map(|(&a, &b)| (f64::from(a), f64::from(b)))
            .collect();
        both.len() >= 3 && spearman(&both) >= ALIKE
    })
}

/// Spearman's ρ of pairs (ties ranked in order).
fn spearman(pairs: &[(f64, f64)]) -> f64 {
    let ranks = |key: &dyn Fn(&(f64, f64)) -> f64| {
        let mut order: Vec<usize> = (0..pairs.len()).collect();
        order.sort_by(|&i, &j| key(&pairs[i]).total_cmp(&key(&pairs[j])));
        let mut rank = vec![0.0; pairs.len()];
        for (r, &i) in order.iter().enumerate() {
            rank[i] = r as f64;
        }
        rank
    };
    let (a, b) = (ranks(&|p| p.0), ranks(&|p| p.1));
    // Both rank vectors are a permutation of 0..n: the same mean and spread.
    let n = pairs.len() as f64;
    let d2: f64 = a.iter().zip(&b).map(|(x, y)| (x - y) * (x - y)).sum();
    1.0 - 6.0 * d2 / (n * (n * n - 1.0))
}

/// Kendall's τ-b of two samples (ties counted in neither).
fn kendall(a: &[f64], b: &[f64]) -> f64 {
    let (mut c, mut d) = (0.0f64, 0.0f64);
    for i in 0..a.len() {
        for j in i + 1..a.len() {
            let s = (a[i] - a[j]) * (b[i] - b[j]);
            if s > 0.0 {
                c += 1.0;
            } else if s < 0.0 {
                d += 1.0;
            }
        }
    }
    if c + d == 0.0 {
        0.0
    } else {
        (c - d) / (c + d)
    }
}

/// `y ≈ a + b·e` by least squares, with `b ≥ 0` (a ranking is not turned upside down), and
/// flat (`b = 0`) where `e` has no spread.
fn calibrate(e: &[f64], y: &[f64]) -> (f64, f64) {
    ridge::line_fit(e.iter().copied().zip(y.iter().copied()), |sxy, sxx| if sxx > 1e-12 { (sxy / sxx).max(0.0) } else { 0.0 })
}

/// Ridge regression of `r` on one-hot rows (each row the indices of its ones) with penalty
/// `lambda`: the coefficients, `features` of them.
fn ridge_onehot(rows: &[Vec<usize>], r: &[f64], features: usize, lambda: f64) -> Vec<f64> {
    if features == 0 {
        return Vec::new();
    }
    let mut a = vec![0.0; features * features];
    let mut rhs = vec![0.0; features];
    for (row, &y) in rows.iter().zip(r) {
        for &i in row {
            rhs[i] += y;
            for &j in row {
                a[i * features + j] += 1.0;
            }
        }
    }
    for i in 0..features {
        a[i * features + i] += lambda;
    }
    // The penalty keeps the matrix positive definite; a NaN residual would not.
    match ridge::cholesky(&a, features) {
        Some(l) => ridge::solve(&l, features, &rhs),
        None => vec![0.0; features],
    }
}

/// Each source's best, then each one's second best, and so on (sources in order); the
/// candidates no source measured come last, in order.
pub struct PlainTransfer {
    prior: Arc<Prior>,
    order: Option<Vec<usize>>,
    next: usize,
    /// Whether some source measured each candidate (those are the sources' proposals).
    ranked: Vec<bool>,
}

impl PlainTransfer {
    /// Over `prior`.
    pub fn new(prior: Arc<Prior>) -> PlainTransfer {
        PlainTransfer { prior, order: None, next: 0, ranked: Vec::new() }
    }
}

impl Strategy for PlainTransfer {
    fn name(&self) -> String {
        "plain transfer".into()
    }

    fn ask(&mut self, cands: &Candidates<'_>, max: usize) -> Vec<usize> {
        let prior = &self.prior;
        let order = self.order.get_or_insert_with(|| {
            let ranks: Vec<Vec<usize>> = prior
                .sources
                .iter()
                .map(|s| {
                    let mut r: Vec<usize> = (0..cands.len()).filter(|&i| s.times[i].is_finite()).collect();
                    r.sort_by(|&a, &b| s.times[a].total_cmp(&s.times[b]).then(a.cmp(&b)));
                    r
                })
                .collect();
            let mut seen = vec![false; cands.len()];
            let mut order = Vec::with_capacity(cands.len());
            let longest = ranks.iter().map(Vec::len).max().unwrap_or(0);
            for k in 0..longest {
                for r in &ranks {
                    if let Some(&i) = r.get(k) {
                        if !seen[i] {
                            seen[i] = true;
                            order.push(i);
                        }
                    }
                }
            }
            order.extend((0..cands.len()).filter(|&i| !seen[i]));
            self.ranked = seen;
            order
        });
        let end = (self.next + max).min(order.len());
        let out = order[self.next..end].to_vec();
        self.next = end;
        out
    }

    fn tell(&mut self, _: usize, _: &Outcome) {}

    fn adaptive(&self) -> bool {
        false
    }

    fn proposed_by(&self, index: usize) -> Option<String> {
        self.ranked.get(index).copied().unwrap_or(false).then(|| proposer::SOURCES.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::job::Param;

    /// `times` (growing with the config, as every source here does) with its middle third
    /// reversed, so ranked the other way round: a second source that favours what the first
    /// favours and ranks its least favourites alike, and is a second opinion rather than the
    /// first measured twice ([`ALIKE`]).
    fn second_opinion(mut times: Vec<f32>) -> Vec<f32> {
        assert!(times.is_sorted(), "a source whose times grow with the config");
        let n = times.len();
        times[n / 3..2 * n / 3].reverse();
        times
    }

    /// A search that records what it asks for and what it is told: (asked, told).
    struct Recorded(Box<dyn Strategy>, Arc<std::sync::Mutex<(Vec<usize>, Vec<usize>)>>);

    impl Strategy for Recorded {
        fn name(&self) -> String {
            "recorded".into()
        }
        fn ask(&mut self, cands: &Candidates<'_>, max: usize) -> Vec<usize> {
            let out = self.0.ask(cands, max);
            self.1.lock().unwrap().0.extend(&out);
            out
        }
        fn tell(&mut self, index: usize, outcome: &Outcome) {
            self.1.lock().unwrap().1.push(index);
            self.0.tell(index, outcome);
        }
    }

    /// The model's own picks among `picks` (a batch asked blind shares its turns with the
    /// fallback's).
    fn models_picks(t: &Transfer, picks: &[usize]) -> Vec<usize> {
        picks.iter().copied().filter(|i| !t.from_base.contains(i)).collect()
    }

    #[test]
    fn the_linear_algebra_is_right() {
        assert!((kendall(&[1.0, 2.0, 3.0], &[10.0, 20.0, 30.0]) - 1.0).abs() < 1e-12);
        assert!((kendall(&[1.0, 2.0, 3.0], &[30.0, 20.0, 10.0]) + 1.0).abs() < 1e-12);
        let (a, b) = calibrate(&[0.0, 1.0, 2.0], &[1.0, 3.0, 5.0]);
        assert!((a - 1.0).abs() < 1e-12 && (b - 2.0).abs() < 1e-12);
        assert_eq!(calibrate(&[0.0, 1.0], &[5.0, 1.0]).1, 0.0, "never upside down");
        assert_eq!(spearman(&[(1.0, 10.0), (2.0, 20.0), (3.0, 30.0), (4.0, 40.0)]), 1.0);
        assert_eq!(spearman(&[(1.0, 40.0), (2.0, 30.0), (3.0, 20.0), (4.0, 10.0)]), -1.0);
        // One pair of neighbours swapped among four: 1 − 6·2 / (4·15).
        assert!((spearman(&[(1.0, 1.0), (2.0, 3.0), (3.0, 2.0), (4.0, 4.0)]) - 0.8).abs() < 1e-12);
        // Two one-hot features, both seen: the ridge shrinks toward 0.
        let g = ridge_onehot(&[vec![0], vec![1]], &[1.0, -1.0], 2, 1.0);
        assert!((g[0] - 0.5).abs() < 1e-12 && (g[1] + 0.5).abs() < 1e-12, "{g:?}");
    }

    /// Each proposal says who made it ([`proposer`]): the sources' ranking for the first picks,
    /// the fallback for the yardstick (the contrast, its last, the sources' least favourite)
    /// and a blind batch's shared turns; plain transfer tags what a source measured.
    #[test]
    fn every_proposal_says_who_made_it() {
        let params = vec![Param::new("a", 0..20)];
        let coords: Vec<Vec<u32>> = (0..20).map(|i| vec![i]).collect();
        let cands = Candidates { params: &params, coords: &coords };
        let source = Source { name: "s".into(), times: (0..20).map(|i| if i < 15 { 1.0 + i as f32 } else { f32::NAN }).collect() };
        let prior = Arc::new(Prior { sources: vec![source.clone()], ..Default::default() });
        let mut t = Transfer::new(prior.clone(), crate::search::by_name("random", 1).unwrap());
        let batch = t.ask(&cands, 8);
        let by: Vec<String> = batch.iter().map(|&i| t.proposed_by(i).expect("every proposal is tagged")).collect();
        assert_eq!(&by[..FIRST + YARDSTICK], ["sources", "sources", "sources", "search:yardstick", "search:yardstick", "contrast"], "{batch:?}");
        let mut rest = by[FIRST + YARDSTICK..].to_vec();
        rest.sort();
        assert_eq!(rest, ["search:blind", "sources"]);
        assert_eq!(t.proposed_by(batch.iter().map(|&i| i + 1).find(|i| !batch.contains(i) && *i < 20).unwrap()), None, "not asked for");
        // Plain transfer: the source's ranking, then what no source measured (untagged).
        let mut plain = PlainTransfer::new(prior);
        let all = plain.ask(&cands, 20);
        assert_eq!(all.iter().filter(|&&i| plain.proposed_by(i).as_deref() == Some(proposer::SOURCES)).count(), 15);
        assert!(all[15..].iter().all(|&i| plain.proposed_by(i).is_none()), "{all:?}");
    }

    /// A tuner that asks for a batch before any outcome gets the same order as one that asks
    /// one at a time: the sources' first favourites, then the yardstick (ending with the
    /// sources' least favourite); the rest of the batch, asked before anything has checked the
    /// sources (one or several), the model shares with the fallback.
    #[test]
    fn a_batch_asked_at_once_holds_the_yardstick() {
        let params = vec![Param::new("a", 0..20)];
        let coords: Vec<Vec<u32>> = (0..20).map(|i| vec![i]).collect();
        let cands = Candidates { params: &params, coords: &coords };
        let source = Source { name: "s".into(), times: (0..20).map(|i| 1.0 + i as f32).collect() };
        let prior = Arc::new(Prior { sources: vec![source], ..Default::default() });
        let mut t = Transfer::new(prior, crate::search::by_name("random", 1).unwrap());
        let batch = t.ask(&cands, 8);
        assert_eq!(batch.len(), 8);
        assert_eq!(&batch[..FIRST], &[0, 1, 2], "the source's favourites first");
        assert_eq!(batch[FIRST + YARDSTICK - 1], 19, "the yardstick ends with the source's least favourite: {batch:?}");
        // One source and nothing told: the rest of the batch is shared.
        assert_eq!(t.proposals, (4, 4));
        assert!(t.summary().unwrap().contains("1 in turns shared in a batch asked before"), "{}", t.summary().unwrap());
        // Two sources that rank differently: their weights need outcomes too, so the same.
        let other = Source { name: "t".into(), times: second_opinion((0..20).map(|i| 2.0 + i as f32).collect()) };
        let prior = Arc::new(Prior { sources: vec![t.prior.sources[0].clone(), other], ..Default::default() });
        let mut two = Transfer::new(prior, crate::search::by_name("random", 1).unwrap());
        let batch = two.ask(&cands, 8);
        assert_eq!(two.proposals, (4, 4));
        // Told after the batch was asked (no refit since), on a device that ranks the other way:
        // the summary speaks of the outcomes, not of the last refit's.
        for &i in &batch {
            two.tell(i, &Outcome::Time(100.0 - i as f64));
        }
        let said = two.summary().unwrap();
        assert!(said.ends_with("at τ -1.00") && said.contains("agreed best with this device, τ -1.00"), "{said}");
    }

    /// With one source, which no other source checks, the fallback keeps every other turn after
    /// the yardstick, even where the source ranks this device right, and so with two sources
    /// that rank alike (one GPU measured twice); two sources that rank differently keep the
    /// model's turns.
    #[test]
    fn a_single_source_shares_its_turns() {
        let params = vec![Param::new("a", 0..40)];
        let coords: Vec<Vec<u32>> = (0..40).map(|i| vec![i]).collect();
        let cands = Candidates { params: &params, coords: &coords };
        let source = |k: f32| Source { name: format!("s{k}"), times: (0..40).map(|i| k + i as f32).collect() };
        let run = |sources: Vec<Source>| {
            let prior = Arc::new(Prior { sources, ..Default::default() });
            // With a budget of 20, the stall rule waits (no room for a fresh search).
            let mut t = Transfer::new(prior, crate::search::by_name("random", 1).unwrap()).with_budget(Some(20));
            for _ in 0..20 {
                let i = t.ask(&cands, 1)[0];
                t.tell(i, &Outcome::Time(1.0 + i as f64));
            }
            (t.proposals, t.summary().unwrap())
        };
        let (proposals, said) = run(vec![source(1.0)]);
        assert_eq!(proposals, (10, 10), "{said}");
        assert!(said.contains("7 in turns shared with one source"), "{said}");
        assert_eq!(run(vec![source(1.0), source(2.0)]).0, (10, 10), "alike: one source measured twice");
        let other = Source { name: "t".into(), times: second_opinion(source(1.0).times) };
        assert!(!one_voice(&[source(1.0), other.clone()]) && one_voice(&[source(1.0), source(3.0)]));
        let (proposals, said) = run(vec![source(1.0), other]);
        assert_eq!(proposals, (20 - YARDSTICK, YARDSTICK), "{said}");
    }

    /// Picks asked in a batch and not told yet are withdrawn once the outcomes told since rank
    /// them lower (here: sources that rank this device backwards); asked one at a time, a pick
    /// is always still wanted when it is measured, so a sequential search is unchanged.
    #[test]
    fn picks_in_flight_are_withdrawn_when_the_outcomes_rank_them_lower() {
        let params = vec![Param::new("a", 0..40)];
        let coords: Vec<Vec<u32>> = (0..40).map(|i| vec![i]).collect();
        let cands = Candidates { params: &params, coords: &coords };
        let truth = |i: usize| 40.0 - i as f64;
        let backwards = |k: f32| Source { name: format!("s{k}"), times: (0..40).map(|i| k + i as f32).collect() };
        let opinion = Source { times: second_opinion(backwards(2.0).times), ..backwards(2.0) };
        let prior = Arc::new(Prior { sources: vec![backwards(1.0), opinion], ..Default::default() });
        let mut t = Transfer::new(prior.clone(), crate::search::by_name("random", 1).unwrap());
        let batch = t.ask(&cands, 18);
        // The model's first picks and the yardstick, told in the order asked.
        for &i in &batch[..FIRST + YARDSTICK] {
            assert!(t.still_wanted(&cands, i), "nothing told yet changes its mind about {i}");
            t.tell(i, &Outcome::Time(truth(i)));
        }
        // The rest of the batch was shared (asked before anything checked the sources): the
        // model's half of it.
        let mine = models_picks(&t, &batch[FIRST + YARDSTICK..]);
        assert_eq!(mine.len(), 6, "{batch:?}");
        let rest: Vec<bool> = mine.iter().map(|&i| t.still_wanted(&cands, i)).collect();
        assert!(rest.iter().all(|&w| !w), "the sources' picks in flight are withdrawn: {rest:?}");
        assert_eq!(t.proposals.0, FIRST, "withdrawn picks are not counted as proposed");
        assert!(mine.iter().all(|&i| !t.taken[i]), "and may be proposed again");
        assert!(t.summary().unwrap().contains("6 of the sources' picks compiled and withdrawn"), "{}", t.summary().unwrap());
        // One at a time: every pick still wanted, the same run as without the question.
        let mut asked = Transfer::new(prior.clone(), crate::search::by_name("random", 1).unwrap());
        let mut plain = Transfer::new(prior, crate::search::by_name("random", 1).unwrap());
        for _ in 0..20 {
            let (i, j) = (asked.ask(&cands, 1)[0], plain.ask(&cands, 1)[0]);
            assert!(asked.still_wanted(&cands, i));
            assert_eq!(i, j);
            asked.tell(i, &Outcome::Time(truth(i)));
            plain.tell(j, &Outcome::Time(truth(j)));
        }
    }

    /// Sources that rank this device's configs in the right order but see one basin where it
    /// has two: once a fallback config that the sources rank e-fold below their favourites
    /// comes within 10 % of them, the two searches take turns (and the model keeps its turns
    /// on a device where the rest of the space is as slow as the sources say).
    #[test]
    fn a_config_ranked_far_below_that_comes_close_shares_the_turns() {
        let params = vec![Param::new("a", 0..60)];
        let coords: Vec<Vec<u32>> = (0..60).map(|i| vec![i]).collect();
        let cands = Candidates { params: &params, coords: &coords };
        // The sources: configs 0..10 their favourites, the rest at least e-fold slower.
        let times = |k: f32| (0..60).map(|i| if i < 10 { k * (1.0 + 0.01 * i as f32) } else { k * (5.0 + 0.01 * i as f32) }).collect();
        let prior = Arc::new(Prior {
            sources: vec![Source { name: "s".into(), times: times(1.0) }, Source { name: "t".into(), times: second_opinion(times(2.0)) }],
            ..Default::default()
        });
        // Both devices rank every config as the sources do; on the first the rest of the space
        // comes within 5 % of the favourites.
        let near = |i: usize| if i < 10 { 1.0 + 0.001 * i as f64 } else { 1.05 + 0.0001 * i as f64 };
        let far = |i: usize| if i < 10 { 1.0 + 0.001 * i as f64 } else { 6.0 + 0.01 * i as f64 };
        let run = |truth: &dyn Fn(usize) -> f64| {
            // With a budget of 20, the stall rule waits (no room for a fresh search).
            let mut t = Transfer::new(prior.clone(), crate::search::by_name("random", 1).unwrap()).with_budget(Some(20));
            for _ in 0..20 {
                let i = t.ask(&cands, 1)[0];
                t.tell(i, &Outcome::Time(truth(i)));
            }
            (t.proposals, t.summary().unwrap())
        };
        let ((model, fallback), said) = run(&near);
        assert!(fallback >= 8 && model <= 12, "turns shared: {model} against {fallback}: {said}");
        assert!(said.contains("far below their favourites came within 10 %"), "{said}");
        let ((model, fallback), said) = run(&far);
        assert_eq!((model, fallback), (20 - YARDSTICK, YARDSTICK), "{said}");
        // A batch in flight: once the yardstick is told, the model keeps half of its picks still
        // in flight (the ones it ranks first) while the surprise shares the turns, and all of them
        // where there is no surprise.
        let wanted = |truth: &dyn Fn(usize) -> f64, asked: usize| {
            let mut t = Transfer::new(prior.clone(), crate::search::by_name("random", 1).unwrap()).with_budget(Some(20));
            let batch = t.ask(&cands, asked);
            for &i in &batch[..FIRST + YARDSTICK] {
                t.tell(i, &Outcome::Time(truth(i)));
            }
            // The model's picks in the rest of the batch (shared with the fallback's).
            let mine = models_picks(&t, &batch[FIRST + YARDSTICK..]);
            mine.iter().map(|&i| t.still_wanted(&cands, i)).collect::<Vec<_>>()
        };
        assert_eq!(wanted(&near, 16), [vec![true; 3], vec![false; 2]].concat());
        assert_eq!(wanted(&far, 16), vec![true; 5]);
        // Whichever turn the shared ones are at (an odd number asked).
        assert_eq!(wanted(&near, 17), [vec![true; 3], vec![false; 3]].concat());
    }

    /// A source that ranks like this device leads; one ranking the other way fades.
    #[test]
    fn the_agreeing_source_leads() {
        let params = vec![Param::new("a", 0..20)];
        let coords: Vec<Vec<u32>> = (0..20).map(|i| vec![i]).collect();
        let cands = Candidates { params: &params, coords: &coords };
        // The device: fastest at 17. The good source agrees; the bad one says 0 is fastest.
        let truth = |i: usize| 1.0 + ((i as f64) - 17.0).abs();
        let good = Source { name: "good".into(), times: (0..20).map(|i| truth(i) as f32 * 3.0).collect() };
        let bad = Source { name: "bad".into(), times: (0..20).map(|i| 1.0 + i as f32).collect() };
        let prior = Arc::new(Prior { sources: vec![bad, good], ..Default::default() });
        let mut t = Transfer::new(prior, crate::search::by_name("random", 1).unwrap());
        let mut found = f64::INFINITY;
        for _ in 0..6 {
            let i = t.ask(&cands, 1)[0];
            found = found.min(truth(i));
            t.tell(i, &Outcome::Time(truth(i)));
        }
        assert_eq!(found, 1.0, "the optimum within six evaluations");
        let mut p = PlainTransfer::new(t.prior.clone());
        assert_eq!(p.ask(&cands, 2), vec![0, 17], "each source's best in turn");
        let said = t.summary().unwrap();
        assert!(said.contains("good agreed best with this device") && said.contains("3 as the yardstick"), "{said}");
    }

    /// Sources that rank this device well everywhere but where its optimum is: the model's
    /// picks stop finding better configs, the fallback takes most turns, and the fresh copy
    /// that takes over is told only what it asks for (a config measured already at no cost).
    #[test]
    fn a_stalled_model_hands_its_turns_to_a_fresh_search() {
        let params = vec![Param::new("a", 0..60)];
        let coords: Vec<Vec<u32>> = (0..60).map(|i| vec![i]).collect();
        let cands = Candidates { params: &params, coords: &coords };
        let truth = |i: usize| if i == 45 { 0.5 } else { 1.0 + i as f64 };
        let source = Source { name: "s".into(), times: (0..60).map(|i| 1.0 + i as f32).collect() };
        let other = Source { name: "t".into(), times: second_opinion((0..60).map(|i| 2.0 + i as f32).collect()) };
        let prior = Arc::new(Prior { sources: vec![source, other], ..Default::default() });
        let seen = Arc::new(std::sync::Mutex::new((Vec::new(), Vec::new())));
        let fresh = Recorded(crate::search::by_name("random", 2).unwrap(), seen.clone());
        let mut t = Transfer::new(prior.clone(), crate::search::by_name("random", 1).unwrap()).with_fresh_base(Box::new(fresh));
        for _ in 0..40 {
            let i = t.ask(&cands, 1)[0];
            t.tell(i, &Outcome::Time(truth(i)));
        }
        let (model, fallback) = t.proposals;
        assert!(fallback > model, "the fallback takes most turns once the model stalls: {model} against {fallback}");
        let said = t.summary().unwrap();
        assert!(said.contains("with the sources' last picks finding nothing better"), "{said}");
        let (asked, told) = &*seen.lock().unwrap();
        assert!(!asked.is_empty(), "the fresh copy took over");
        assert!(told.iter().all(|i| asked.contains(i)), "the fresh copy is told only what it asked for: asked {asked:?}, told {told:?}");
        // Without a fresh copy the fallback is the one told every outcome, and still takes the turns.
        let mut plain = Transfer::new(prior.clone(), crate::search::by_name("random", 1).unwrap());
        for _ in 0..40 {
            let i = plain.ask(&cands, 1)[0];
            plain.tell(i, &Outcome::Time(truth(i)));
        }
        assert!(plain.proposals.1 > plain.proposals.0, "{:?}", plain.proposals);
        // The stall comes within 20 evaluations; with a budget of 20 the fresh search would have
        // no room, and the model keeps its turns (with 40, the fresh copy takes over as above).
        for (budget, takes_over) in [(Some(20), false), (None, true), (Some(40), true)] {
            let seen = Arc::new(std::sync::Mutex::new((Vec::new(), Vec::new())));
            let fresh = Recorded(crate::search::by_name("random", 2).unwrap(), seen.clone());
            let mut t = Transfer::new(prior.clone(), crate::search::by_name("random", 1).unwrap()).with_fresh_base(Box::new(fresh)).with_budget(budget);
            for _ in 0..20 {
                let i = t.ask(&cands, 1)[0];
                t.tell(i, &Outcome::Time(truth(i)));
            }
            let said = t.summary().unwrap();
            assert_eq!(!seen.lock().unwrap().0.is_empty(), takes_over, "budget {budget:?}: {said}");
            assert_eq!(said.contains("finding nothing better"), takes_over, "budget {budget:?}: {said}");
        }
    }

    /// Sources whose ranking runs backwards here (inverted times): the fallback takes every turn
    /// (distrust). With a long way to go it is the fresh copy, told only what it asks for, not
    /// the fallback told the sources' first picks, that takes them; with a short one the
    /// fallback told everything keeps them.
    #[test]
    fn distrusted_sources_with_a_long_way_to_go_hand_over_to_a_fresh_search() {
        let params = vec![Param::new("a", 0..120)];
        let coords: Vec<Vec<u32>> = (0..120).map(|i| vec![i]).collect();
        let cands = Candidates { params: &params, coords: &coords };
        let truth = |i: usize| 1.0 + i as f64;
        // Both sources rank the configs the other way round.
        let source = Source { name: "s".into(), times: (0..120).map(|i| 200.0 - i as f32).collect() };
        let mut backwards = second_opinion((0..120).map(|i| 2.0 + i as f32).collect());
        backwards.reverse();
        let other = Source { name: "t".into(), times: backwards };
        let prior = Arc::new(Prior { sources: vec![source, other], ..Default::default() });
        // A time limit alone counts nothing: the tuner's estimate of what its time left allows
        // (told before each ask) decides as a count would.
        for (budget, in_time, fresh_takes_over) in [
            (Some(100), None, true),
            (None, None, true),
            (Some(30), None, false),
            (None, Some(20), false),
            (None, Some(100), true),
            (Some(100), Some(20), false),
        ] {
            let seen = Arc::new(std::sync::Mutex::new((Vec::new(), Vec::new())));
            let fresh = Recorded(crate::search::by_name("random", 2).unwrap(), seen.clone());
            let mut t = Transfer::new(prior.clone(), crate::search::by_name("random", 1).unwrap()).with_fresh_base(Box::new(fresh)).with_budget(budget);
            for k in 0..30 {
                if let Some(n) = in_time {
                    t.evaluations_left_in_time(usize::saturating_sub(n, k));
                }
                let i = t.ask(&cands, 1)[0];
                t.tell(i, &Outcome::Time(truth(i)));
            }
            let said = t.summary().unwrap();
            assert!(said.contains("with the sources ranking the configs measured here worse than chance"), "{said}");
            let (asked, told) = &*seen.lock().unwrap();
            assert_eq!(!asked.is_empty(), fresh_takes_over, "budget {budget:?}, {in_time:?} in time: {said}");
            // The summary says when the fresh search took over, and with what room.
            assert_eq!(
                said.contains("a fresh recorded search, told none of the sources' picks, took the fallback's turns with the sources ranking"),
                fresh_takes_over,
                "{said}"
            );
            let room = match (budget, in_time) {
                (_, Some(_)) => Some("evaluations left at this tune's pace within its time limit)"),
                (Some(_), None) => Some("evaluations of the budget left)"),
                (None, None) => None,
            };
            assert_eq!(room.is_some_and(|r| said.contains(r)), fresh_takes_over && room.is_some(), "{said}");
            assert!(room.is_some() || !said.contains("evaluations"), "{said}");
            assert!(told.iter().all(|i| asked.contains(i)), "the fresh copy is told only what it asked for: asked {asked:?}, told {told:?}");
        }
    }

    /// Once the model has stalled and the fallback's picks have found a config 2 % faster than
    /// any of the model's, the model's one turn in four goes to the fallback too; before that, it
    /// kept it.
    #[test]
    fn a_stalled_model_beaten_by_the_fallback_keeps_no_turn() {
        let params = vec![Param::new("a", 0..120)];
        let coords: Vec<Vec<u32>> = (0..120).map(|i| vec![i]).collect();
        let cands = Candidates { params: &params, coords: &coords };
        // The sources' ranking holds, but this device's best config is one they rank far down.
        let truth = |i: usize| if i == 90 { 0.5 } else { 1.0 + i as f64 };
        let source = Source { name: "s".into(), times: (0..120).map(|i| 1.0 + i as f32).collect() };
        let other = Source { name: "t".into(), times: second_opinion((0..120).map(|i| 2.0 + i as f32).collect()) };
        let prior = Arc::new(Prior { sources: vec![source, other], ..Default::default() });
        let mut t = Transfer::new(prior, crate::search::by_name("random", 1).unwrap());
        let (mut stalled_model_turns, mut beaten_model_turns, mut beaten_turns) = (0, 0, 0);
        for _ in 0..100 {
            let stalled = t.model_since >= STALL;
            let beaten = t.model_outdone();
            let before = t.proposals.0;
            let Some(&i) = t.ask(&cands, 1).first() else { break };
            let by_model = t.proposals.0 > before;
            if stalled && !beaten {
                stalled_model_turns += usize::from(by_model);
            } else if stalled && beaten {
                beaten_turns += 1;
                beaten_model_turns += usize::from(by_model);
            }
            t.tell(i, &Outcome::Time(truth(i)));
        }
        assert!(stalled_model_turns > 0, "stalled and not beaten, the model keeps one turn in four");
        assert!(beaten_turns >= 8, "the fallback found config 90 with turns to spare: {beaten_turns}");
        assert_eq!(beaten_model_turns, 0, "stalled and beaten, the model gets no turn");
    }

    /// The sources' favourites on a plateau here, ranked about right (τ ≈ 0.5 on the model's
    /// picks): every fourth of the model's picks is 1 % faster than the best so far, the others a
    /// few percent slower. Those gains are too small to count (2 %): the model stalls, and the
    /// fresh search takes most turns.
    #[test]
    fn a_plateau_of_the_sources_favourites_stalls_the_model() {
        let params = vec![Param::new("a", 0..60)];
        let coords: Vec<Vec<u32>> = (0..60).map(|i| vec![i]).collect();
        let cands = Candidates { params: &params, coords: &coords };
        let truth = |i: usize| match i {
            i if i < 30 && i % 4 == 0 => 10.0 * 0.99f64.powi((i / 4) as i32),
            i if i < 30 => 10.0 * (1.0 + 0.01 * i as f64),
            i => 20.0 + i as f64,
        };
        let source = Source { name: "s".into(), times: (0..60).map(|i| 1.0 + i as f32).collect() };
        let other = Source { name: "t".into(), times: (0..60).map(|i| 1.0 + i as f32 + if i % 2 == 0 { 0.5 } else { 0.0 }).collect() };
        let prior = Arc::new(Prior { sources: vec![source, other], ..Default::default() });
        let fresh = crate::search::by_name("random", 2).unwrap();
        let mut t = Transfer::new(prior, crate::search::by_name("random", 1).unwrap()).with_fresh_base(fresh).with_budget(Some(60));
        let mut model = Vec::new();
        for _ in 0..40 {
            let before = t.proposals.0;
            let i = t.ask(&cands, 1)[0];
            if t.proposals.0 > before {
                model.push(i);
            }
            t.tell(i, &Outcome::Time(truth(i)));
        }
        let said = t.summary().unwrap();
        // Stalled after eight of its picks, the model kept one turn in four and found 8 and 12,
        // until the random search's picks found a config of the plateau 2 % faster than those
        // (24 or 28, an outcome the model's own picks would have reached later): then none.
        let gains = model.iter().filter(|&&i| i > 0 && i < 30 && i % 4 == 0).count();
        assert!(gains >= 3, "the model's picks keep finding 1 % gains: {model:?}; {said}");
        assert!(t.model_outdone(), "{said}");
        assert!(said.contains("with the sources' last picks finding nothing better"), "{said}");
        assert!(t.proposals.1 >= 15, "{said}");
    }

    /// The report says how many proposals came from the sources and why the others did not:
    /// from a source that ranks this device backwards, that it ranks worse than chance.
    #[test]
    fn the_summary_says_why_the_sources_were_left() {
        let params = vec![Param::new("a", 0..40)];
        let coords: Vec<Vec<u32>> = (0..40).map(|i| vec![i]).collect();
        let cands = Candidates { params: &params, coords: &coords };
        let truth = |i: usize| 40.0 - i as f64;
        let backwards = Source { name: "backwards".into(), times: (0..40).map(|i| 1.0 + i as f32).collect() };
        let prior = Arc::new(Prior { sources: vec![backwards], ..Default::default() });
        let mut t = Transfer::new(prior, crate::search::by_name("random", 1).unwrap());
        for _ in 0..20 {
            let i = t.ask(&cands, 1)[0];
            t.tell(i, &Outcome::Time(truth(i)));
        }
        let (model, fallback) = t.proposals;
        let said = t.summary().unwrap();
        assert!(
            fallback > model && said.starts_with(&format!("transfer: {model} of 20 proposals from the sources' ranking, {fallback} from the random search (")),
            "{said}"
        );
        assert!(said.contains("worse than chance") && said.contains("τ -"), "{said}");
    }
}
