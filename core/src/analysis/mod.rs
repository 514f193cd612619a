//! What a tune's records say, as numbers a report draws: the distribution of times, each
//! parameter's effect, the search trace, compile times, failures by cause, every config's place
//! on the roofline, and how one device's winner does on another.
//!
//! Everything here reads database entries only, so a report needs no GPU and works on entries
//! merged from a fleet. The HTML page of `kerntune report` renders these views; nothing here
//! draws.
//!
//! # Large entries
//! An entry can hold 100,000 measurements. The summaries (histogram, per-value quartiles, the
//! best-so-far curve, failure causes) use every measurement. Charts that draw one mark per
//! config take [`sample`]: every config when there are few, else a fixed number evenly spaced
//! by rank in time (so the spread of times is kept) plus the winner, its tie band and the
//! default, which are always drawn.

pub mod portability;
/// Where a config stands on the roofline (in `plan`, since a tune's summary states it too).
pub use crate::plan::roofline;

use crate::error::FailureKind;
use crate::run::diagnose::{group_failures, Cause};
use crate::run::timeline::{Spanned, Timeline};
use crate::search::proposer;
use crate::space::config::Config;
use crate::store::db::{Entry, RunNote, Status, Trace};
use roofline::{Peaks, Position};
use serde::Serialize;
use std::collections::BTreeMap;

/// FLOPs and bytes of one config's launch, from the spec's formulas (`None` where it has none).
pub type Metrics<'a> = &'a dyn Fn(&Config) -> (Option<f64>, Option<f64>);

/// What the spec adds to an entry when the report is given one: the default config and the
/// FLOP and byte formulas (for records made before measurements stored them).
#[derive(Default)]
pub struct Hints<'a> {
    /// The spec's default config key.
    pub default: Option<String>,
    /// FLOPs and bytes of a config's launch.
    pub metrics: Option<Metrics<'a>>,
}

/// One measured config.
#[derive(Clone, Debug, Serialize)]
pub struct Point {
    /// Its key.
    pub key: String,
    /// The config.
    pub config: Config,
    /// Mean time, seconds.
    pub time: f64,
    /// Half-width of the 95 % interval, seconds (infinite for one sample).
    pub ci_half: f64,
    /// Launches timed.
    pub samples: u32,
    /// Stopped early as clearly slower than the best.
    pub raced: bool,
    /// Its place on the roofline.
    pub position: Position,
    /// Seconds its compile took, where recorded.
    pub compile_s: Option<f64>,
    /// Where it stands in the tune that measured it, where recorded.
    pub trace: Option<Trace>,
}

/// The times of the configs that share one value of a parameter.
#[derive(Clone, Debug, Serialize)]
pub struct ValueTimes {
    /// The value as written in config keys.
    pub value: String,
    /// Configs measured with it.
    pub count: usize,
    /// Fastest, lower quartile, median, upper quartile, slowest (seconds).
    pub quartiles: [f64; 5],
}

/// One parameter's effect on time.
#[derive(Clone, Debug, Serialize)]
pub struct Effect {
    /// The parameter (`@threads` etc. for knobs).
    pub name: String,
    /// Times per value, values in their natural order.
    pub values: Vec<ValueTimes>,
    /// Share of the variance of log(time) this parameter explains on its own (η², from 0 to
    /// 1): between-value sum of squares ÷ total.
    pub explained: f64,
}

/// One tune (run) of the entry, in the order its results came in.
#[derive(Clone, Debug, Serialize)]
pub struct Run {
    /// When it started (seconds since the Unix epoch).
    pub started: u64,
    /// Its results in the order the run met them ([`Run::met`]): evaluation number (from 0, in
    /// that order), seconds since the run started to the result, time (seconds; `None` for a
    /// failure).
    pub evals: Vec<(usize, f64, Option<f64>)>,
    /// When the run met each of `evals`, in seconds since it started: the end of its first
    /// launch on a device, else when its result came. They differ for a config that waited on
    /// the shortlist after its verification launch (an exhaustive or random search measures
    /// those in full at its end), so that a trace by time drawn at the results' seconds was
    /// empty for most of such a run.
    pub met: Vec<f64>,
    /// Who proposed each of `evals` (a tag of [`proposer`]), where the run's search learned
    /// from priors; `None` for the others.
    pub by: Vec<Option<String>>,
    /// What the run said of its search (strategy, priors, proposals), where it was recorded.
    pub note: Option<RunNote>,
    /// Its evaluations by who proposed them, the sources' ranking first (empty unless some
    /// were tagged).
    pub proposed: Vec<Proposed>,
    /// Evaluations per device (position in the run's device list), for a run over several
    /// devices (empty for one): the device that measured each kept record.
    pub devices: BTreeMap<usize, usize>,
    /// Where its time went, from its records' spans: for the newest [`TIMELINES`] runs that
    /// recorded any (those the report draws); `None` for the others, and for records of older
    /// kerntunes. A config measured again by a later run keeps that run's spans only.
    pub timeline: Option<Timeline>,
}

/// The evaluations one proposer made in a run (see [`proposer`]) and the best it found.
#[derive(Clone, Debug, Serialize)]
pub struct Proposed {
    /// The tag (`sources`, `favourite:A100`, `search:yardstick`); `None`: configs no search
    /// proposed (the reference config, one measured again).
    pub by: Option<String>,
    /// Who, in words.
    pub words: String,
    /// Whether the sources' ranking chose them ([`proposer::from_priors`]).
    pub from_priors: bool,
    /// Evaluations it made.
    pub evaluations: usize,
    /// Of those, the ones that failed.
    pub failed: usize,
    /// The fastest it found: evaluation number, time (seconds) and config key.
    pub best: Option<(usize, f64, String)>,
}

impl Proposed {
    /// `results` (evaluation number, time, key, tag) grouped by tag: the sources' ranking's
    /// first, then the contrast, the search's and the untagged, each by most evaluations; empty
    /// when none is tagged.
    fn group(results: &[(usize, Option<f64>, &str, Option<&str>)]) -> Vec<Proposed> {
        if results.iter().all(|r| r.3.is_none()) {
            return Vec::new();
        }
        let mut by: BTreeMap<Option<&str>, Proposed> = BTreeMap::new();
        for &(seq, time, key, tag) in results {
            let p = by.entry(tag).or_insert_with(|| Proposed {
                by: tag.map(str::to_string),
                words: tag.map_or_else(|| "the tuner itself (the reference config, or a config measured again)".into(), proposer::words),
                from_priors: tag.is_some_and(proposer::from_priors),
                evaluations: 0,
                failed: 0,
                best: None,
            });
            p.evaluations += 1;
            match time {
                Some(t) if p.best.as_ref().is_none_or(|b| t < b.1) => p.best = Some((seq, t, key.to_string())),
                Some(_) => {}
                None => p.failed += 1,
            }
        }
        let mut out: Vec<Proposed> = by.into_values().collect();
        out.sort_by(|a, b| {
            let rank = |p: &Proposed| match &p.by {
                _ if p.from_priors => 0,
                Some(tag) if tag == proposer::CONTRAST => 1,
                Some(_) => 2,
                None => 3,
            };
            rank(a).cmp(&rank(b)).then(b.evaluations.cmp(&a.evaluations)).then(a.words.cmp(&b.words))
        });
        out
    }
}

impl Run {
    /// The best time so far against when the run met each config ([`Run::met`]): (seconds,
    /// time) at each improvement.
    pub fn best_so_far_met(&self) -> Vec<(f64, f64)> {
        // `evals` are in the order met, numbered by their place.
        self.best_so_far().into_iter().map(|(n, _, t)| (self.met_s(n), t)).collect()
    }

    /// When the run met its `i`-th evaluation (its result's seconds where not recorded).
    pub fn met_s(&self, i: usize) -> f64 {
        self.met.get(i).copied().unwrap_or(self.evals[i].1)
    }

    /// The best time so far after each evaluation that improved it: (evaluation number,
    /// seconds, best).
    pub fn best_so_far(&self) -> Vec<(usize, f64, f64)> {
        let mut best = f64::INFINITY;
        let mut out = Vec::new();
        for &(i, s, t) in &self.evals {
            if let Some(t) = t.filter(|t| *t < best) {
                best = t;
                out.push((i, s, t));
            }
        }
        out
    }
}

/// What one database entry says.
#[derive(Clone, Debug, Serialize)]
pub struct EntryView {
    /// Kernel name.
    pub kernel: String,
    /// Device name.
    pub target_name: String,
    /// Target fingerprint.
    pub target: String,
    /// The kernel's source hash (an edited source is another entry).
    pub source: String,
    /// The compiler and driver it was tuned with.
    pub toolchain: String,
    /// Problem key text.
    pub problem: String,
    /// Measured configs, fastest first.
    pub points: Vec<Point>,
    /// Failed configs grouped by cause, most frequent first.
    pub causes: Vec<Cause>,
    /// What the newest tune that noted any found out about its failures (its summary's lines
    /// under each cause, after their kind: [`RunNote::findings`]).
    pub findings: Vec<String>,
    /// Failed configs per kind.
    pub failures: BTreeMap<String, usize>,
    /// Measured and failed configs per value of the parameter that best tells them apart, where
    /// one does.
    pub failure_split: Option<FailureSplit>,
    /// Each failed config's kind, by key.
    #[serde(skip)]
    pub failed: BTreeMap<String, String>,
    /// The failed configs that compiled: each one's place in its run (the evaluation, from 1)
    /// and its compile seconds, where recorded (a wrong output or a fault after compiling).
    #[serde(skip)]
    pub failed_compiles: Vec<(usize, f64)>,
    /// The winner's key, once a tune finished.
    pub winner: Option<String>,
    /// Keys tied with the fastest.
    pub tie_band: Vec<String>,
    /// The default config's key, where known.
    pub default: Option<String>,
    /// Parameters' effects, most explaining first.
    pub effects: Vec<Effect>,
    /// The pair of parameters that interact most, where a pair does.
    pub interaction: Option<Interaction>,
    /// The runs that measured the entry, oldest first.
    pub runs: Vec<Run>,
    /// Measurements without a trace (recorded by an older kerntune).
    pub untraced: usize,
    /// Runs whose records hold spans (the newest [`TIMELINES`] of them have a timeline).
    pub timed_runs: usize,
    /// The device's peaks, where known.
    pub peaks: Option<Peaks>,
    /// Things the reader should know about these numbers.
    pub notes: Vec<String>,
    /// The file it was read from, where it was no database's (another tool's results, a
    /// tune's `--json` report).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

/// Measured and failed configs per value of one parameter: the one whose values best tell the
/// configs that failed from those measured (the largest spread of the failed share between its
/// values; at least half, so that the picture says something the kinds alone do not).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FailureSplit {
    /// The parameter.
    pub param: String,
    /// The kinds of failure, most frequent first.
    pub kinds: Vec<String>,
    /// Each value in order: the value, configs measured with it, and configs failed with it per
    /// kind (in `kinds`' order).
    pub values: Vec<(String, usize, Vec<usize>)>,
}

/// Values of a parameter a [`FailureSplit`] draws, at most (one bar each).
pub const SPLIT_VALUES: usize = 32;

impl FailureSplit {
    /// The split of `failed` (with their kinds) from `measured` by one of `names`, where one
    /// tells them apart.
    pub fn of(measured: &[&Config], failed: &[(&Config, FailureKind)], names: &[&str]) -> Option<FailureSplit> {
        if failed.is_empty() || measured.is_empty() {
            return None;
        }
        // The kinds, most frequent first (then by name).
        let mut counted: BTreeMap<FailureKind, usize> = BTreeMap::new();
        for (_, k) in failed {
            *counted.entry(*k).or_default() += 1;
        }
        let mut kinds: Vec<(FailureKind, usize)> = counted.into_iter().collect();
        kinds.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.to_string().cmp(&b.0.to_string())));
        let kinds: Vec<FailureKind> = kinds.into_iter().map(|k| k.0).collect();
        let mut best: Option<(f64, FailureSplit)> = None;
        for &name in names {
            type Counts = Vec<(crate::spec::value::Value, usize, Vec<usize>)>;
            let mut values: Counts = Vec::new();
            let slot = |values: &mut Counts, v: &crate::spec::value::Value| -> usize {
                match values.iter().position(|x| &x.0 == v) {
                    Some(i) => i,
                    None => {
                        values.push((v.clone(), 0, vec![0; kinds.len()]));
                        values.len() - 1
                    }
                }
            };
            for c in measured {
                if let Some(v) = c.get(name) {
                    let i = slot(&mut values, v);
                    values[i].1 += 1;
                }
            }
            for (c, k) in failed {
                if let Some(v) = c.get(name) {
                    let i = slot(&mut values, v);
                    let kind = kinds.iter().position(|n| n == k).unwrap_or(0);
                    values[i].2[kind] += 1;
                }
            }
            if values.len() < 2 || values.len() > SPLIT_VALUES {
                continue;
            }
            let share = |(_, ok, bad): &(crate::spec::value::Value, usize, Vec<usize>)| -> f64 {
                let bad: usize = bad.iter().sum();
                bad as f64 / (ok + bad).max(1) as f64
            };
            let (lo, hi) = values.iter().map(share).fold((f64::INFINITY, 0.0f64), |(a, b), x| (a.min(x), b.max(x)));
            let spread = hi - lo;
            if spread < 0.5 || best.as_ref().is_some_and(|(b, s)| spread < *b || (spread == *b && values.len() >= s.values.len())) {
                continue;
            }
            // Numbers in order, other values by their text.
            values.sort_by(|a, b| match (a.0.as_f64(), b.0.as_f64()) {
                (Some(x), Some(y)) => x.total_cmp(&y),
                _ => a.0.to_string().cmp(&b.0.to_string()),
            });
            let split = FailureSplit {
                param: name.to_string(),
                kinds: kinds.iter().map(FailureKind::to_string).collect(),
                values: values.into_iter().map(|(v, ok, bad)| (v.to_string(), ok, bad)).collect(),
            };
            best = Some((spread, split));
        }
        best.map(|b| b.1)
    }
}

/// Runs of an entry whose timelines are made (the newest that recorded spans): a timeline of a
/// long tune holds thousands of bars, and a report of a kernel tuned many times would draw them
/// all.
pub const TIMELINES: usize = 3;

impl EntryView {
    /// The view of an entry.
    pub fn new(entry: &Entry, hints: &Hints<'_>) -> EntryView {
        let mut peaks = Peaks::of_entry(&entry.env.details, &entry.target_name);
        let mut points = Vec::new();
        // Each point's FLOPs and bytes, to place it again under the FP16 peak (below).
        let mut metrics: Vec<(Option<f64>, Option<f64>)> = Vec::new();
        let mut failed: Vec<(&Config, FailureKind, &str)> = Vec::new();
        let mut failures: BTreeMap<String, usize> = BTreeMap::new();
        let mut failed_keys: BTreeMap<String, String> = BTreeMap::new();
        let mut failed_compiles = Vec::new();
        let mut untraced = 0;
        // Per run: evaluation number, seconds, time, key, who proposed it, the device, and when
        // the run met it.
        type Eval<'e> = (usize, f64, Option<f64>, &'e str, Option<&'e str>, Option<usize>, f64);
        // A run is its start and its shard (the shards of a job array start in the same second).
        type RunId = (u64, Option<crate::spec::settings::Shard>);
        let mut by_run: BTreeMap<RunId, Vec<Eval<'_>>> = BTreeMap::new();
        // Per run: each config's key, spans and whether it failed.
        let mut spans: BTreeMap<RunId, Vec<Spanned<'_>>> = BTreeMap::new();
        let mut from_spec = 0usize;
        for (key, m) in &entry.measurements {
            match &m.trace {
                Some(t) => {
                    // Met at the end of its first launch (a verification launch, for a config
                    // that then waited on the shortlist and was measured in full at the end).
                    let met = t.spans.iter().filter(|s| s.what.on_device() && s.to_s.is_finite() && s.to_s >= 0.0).map(|s| s.to_s).fold(t.elapsed_s, f64::min);
                    by_run.entry((t.run, t.shard)).or_default().push((t.seq, t.elapsed_s, m.stats().map(|s| s.mean), key, t.by.as_deref(), t.device, met));
                    if !t.spans.is_empty() {
                        spans.entry((t.run, t.shard)).or_default().push((key, &t.spans, matches!(m.status, Status::Failed { .. })));
                    }
                }
                None => untraced += 1,
            }
            match &m.status {
                Status::Ok { stats } => {
                    let (mut flops, mut bytes) = (m.flops, m.bytes);
                    if let (None, None, Some(f)) = (flops, bytes, hints.metrics) {
                        (flops, bytes) = f(&m.config);
                        from_spec += usize::from(flops.is_some() || bytes.is_some());
                    }
                    metrics.push((flops, bytes));
                    points.push(Point {
                        key: key.clone(),
                        config: m.config.clone(),
                        time: stats.mean,
                        ci_half: stats.ci_half,
                        samples: stats.samples,
                        raced: stats.raced,
                        position: Position::of(flops, bytes, stats.mean, peaks.as_ref()),
                        // A compile time no compile could take (a damaged record) is none.
                        compile_s: m.trace.as_ref().and_then(|t| t.compile_s).filter(|&c| crate::run::timeline::plausible(0.0, c)),
                        trace: m.trace.clone(),
                    });
                }
                Status::Failed { failure, message } => {
                    *failures.entry(failure.to_string()).or_default() += 1;
                    failed_keys.insert(key.clone(), failure.to_string());
                    failed.push((&m.config, *failure, message));
                    if let Some((seq, c)) = m.trace.as_ref().and_then(|t| Some((t.seq, t.compile_s?))).filter(|&(_, c)| crate::run::timeline::plausible(0.0, c))
                    {
                        failed_compiles.push((seq + 1, c));
                    }
                }
            }
        }
        // An entry stored before its precision was (a kernel on tensor or matrix cores whose
        // spec did not say so) is half precision where any config beat the FP32 peak: every
        // config is then put against the FP16 one, not only those above the FP32 peak (the
        // table read 7 % for the winner and 90 % for a slower config).
        if let Some(p) = peaks.as_mut().filter(|p| !p.half && p.flops_f16.is_some()) {
            let f32_peak = p.flops_f32.unwrap_or(f64::INFINITY);
            if points.iter().any(|q: &Point| q.position.flops_per_s.is_some_and(|r| r > f32_peak)) {
                p.half = true;
                for (q, &(flops, bytes)) in points.iter_mut().zip(&metrics) {
                    q.position = Position::of(flops, bytes, q.time, Some(p));
                }
            }
        }
        points.sort_by(|a, b| a.time.total_cmp(&b.time).then_with(|| a.key.cmp(&b.key)));
        // Only the newest runs with spans are drawn: the others' lanes are not made.
        let timed_runs = spans.len();
        let drawn: Vec<RunId> = spans.keys().rev().take(TIMELINES).copied().collect();
        let runs: Vec<Run> = by_run
            .into_iter()
            .map(|(id, mut evals)| {
                let (started, shard) = id;
                // In the order the run met them, numbered so: with a shortlist (exhaustive and
                // random search), results come in another order (the raced at once, the rest at
                // the end), and a trace by result order put a winner met first near the middle.
                evals.sort_by(|a, b| a.6.total_cmp(&b.6).then(a.0.cmp(&b.0)));
                for (n, e) in evals.iter_mut().enumerate() {
                    e.0 = n;
                }
                let proposed = Proposed::group(&evals.iter().map(|e| (e.0, e.2, e.3, e.4)).collect::<Vec<_>>());
                let note = entry.runs.iter().rev().find(|n| (n.run, n.shard) == (started, shard)).cloned();
                let timeline = match spans.remove(&id) {
                    Some(s) if drawn.contains(&id) => Timeline::new(s, note.as_ref().and_then(|n| n.time.as_ref())),
                    _ => None,
                };
                Run {
                    started,
                    timeline,
                    by: evals.iter().map(|e| e.4.map(str::to_string)).collect(),
                    evals: evals.iter().map(|e| (e.0, e.1, e.2)).collect(),
                    met: evals.iter().map(|e| e.6).collect(),
                    note,
                    proposed,
                    devices: evals.iter().filter_map(|e| e.5).fold(BTreeMap::new(), |mut m, d| {
                        *m.entry(d).or_default() += 1;
                        m
                    }),
                }
            })
            .collect();
        let mut notes = Vec::new();
        let implausible: usize = runs.iter().filter_map(|r| r.timeline.as_ref()).map(|t| t.implausible).sum();
        if implausible > 0 {
            notes.push(format!(
                "{implausible} recorded span(s) or run time(s) no tune could have recorded (reversed, negative, past {:.0} days, or on a device past {}) are not drawn: a damaged record",
                crate::run::timeline::HORIZON_S / 86_400.0,
                crate::run::timeline::MAX_LANES
            ));
        }
        if from_spec > 0 {
            notes.push(format!("FLOPs and bytes of {from_spec} config(s) were computed from the spec's formulas: their records predate storing them"));
        }
        if let Some(part) = entry.origin.as_ref().and_then(|o| o.part()) {
            notes.push(format!("a split tune's {part}: the winner is the best of their part of the space"));
        }
        if entry.winner.as_ref().is_some_and(|w| w.partial) {
            notes.push(
                "its tune was ended early (SIGUSR1 or SIGUSR2, a scheduler's warning before a job's time limit): the winner is the best of the configs it measured, and the same tune command goes on from them"
                    .into(),
            );
        }
        let (winner, tie_band) = match &entry.winner {
            Some(w) => (Some(w.config.clone()), w.tie_band.clone()),
            None => {
                notes.push(if points.is_empty() && !failed.is_empty() {
                    format!("no winner: every config measured failed ({}; see Failures)", failed.len())
                } else {
                    entry.withheld_line().unwrap_or_else(|| "no winner yet: the tune that made these measurements did not finish".into())
                });
                (None, Vec::new())
            }
        };
        let default = hints.default.clone().or_else(|| entry.winner.as_ref().and_then(|w| w.default.clone()));
        // What each kind of failure shares that the configs measured lack.
        let mut causes = group_failures(failed.iter().copied());
        let measured: Vec<&Config> = points.iter().map(|p| &p.config).collect();
        let kinds: Vec<(&Config, FailureKind)> = failed.iter().map(|f| (f.0, f.1)).collect();
        let every: Vec<&Config> = measured.iter().copied().chain(kinds.iter().map(|f| f.0)).collect();
        crate::run::diagnose::add_shared_findings(&mut causes, &kinds, &measured, &crate::run::diagnose::varying(&every));
        let (effects, interaction) = effects(&points, winner.as_deref());
        let failure_split = FailureSplit::of(&measured, &kinds, &crate::run::diagnose::varying(&every));
        EntryView {
            kernel: entry.id.kernel.clone(),
            target_name: entry.target_name.clone(),
            target: entry.id.target.clone(),
            source: entry.id.kernel_hash.clone(),
            toolchain: entry.id.toolchain.clone(),
            file: entry.env.details.get("file").cloned(),
            problem: entry.id.problem.clone(),
            effects,
            interaction,
            causes,
            findings: entry.runs.iter().rev().find(|r| !r.findings.is_empty()).map(|r| r.findings.clone()).unwrap_or_default(),
            failures,
            failure_split,
            failed: failed_keys,
            failed_compiles,
            winner,
            tie_band,
            default,
            runs,
            untraced,
            timed_runs,
            peaks,
            notes,
            points,
        }
    }

    /// A short label: `triad on NVIDIA H200 (n=1024)`.
    pub fn label(&self) -> String {
        if self.problem.is_empty() {
            format!("{} on {}", self.kernel, self.target_name)
        } else {
            format!("{} on {} ({})", self.kernel, self.target_name, self.problem)
        }
    }

    /// The winner's point, where it was measured.
    pub fn winner_point(&self) -> Option<&Point> {
        self.winner.as_ref().and_then(|w| self.points.iter().find(|p| &p.key == w))
    }

    /// The default config's point, where it was measured.
    pub fn default_point(&self) -> Option<&Point> {
        self.default.as_ref().and_then(|d| self.points.iter().find(|p| &p.key == d))
    }

    /// Positions in `points` of the configs a chart must always draw: winner, tie band, default.
    pub fn marked(&self) -> Vec<usize> {
        let mut keys: Vec<&String> = self.tie_band.iter().collect();
        keys.extend(self.winner.iter());
        keys.extend(self.default.iter());
        self.points.iter().enumerate().filter(|(_, p)| keys.contains(&&p.key)).map(|(i, _)| i).collect()
    }
}

/// Which of `n` points (sorted by time) a chart of at most about `k` marks draws: all when
/// `n ≤ k`, else `k` evenly spaced by rank — the fastest and slowest included — plus `keep`.
/// Sorted, without repeats.
pub fn sample(n: usize, k: usize, keep: &[usize]) -> Vec<usize> {
    let mut v: Vec<usize> =
        if n <= k || k < 2 { (0..n).collect() } else { (0..k).map(|i| ((i as f64) * (n - 1) as f64 / (k - 1) as f64).round() as usize).collect() };
    v.extend(keep.iter().copied().filter(|&i| i < n));
    v.sort_unstable();
    v.dedup();
    v
}

/// The five-number summary of sorted times.
fn quartiles(sorted: &[f64]) -> [f64; 5] {
    let q = |p: f64| {
        let x = p * (sorted.len() - 1) as f64;
        let (lo, hi) = (x.floor() as usize, x.ceil() as usize);
        sorted[lo] + (sorted[hi] - sorted[lo]) * (x - lo as f64)
    };
    [sorted[0], q(0.25), q(0.5), q(0.75), sorted[sorted.len() - 1]]
}

/// One parameter's value in every point, as codes into its distinct values.
struct Coded {
    /// The parameter (`@threads` etc. for knobs).
    name: String,
    /// Its distinct values as written in config keys (`(unset)` where a config lacks it), in
    /// their natural order (4 before 16).
    values: Vec<String>,
    /// Each point's value: a position in `values`.
    codes: Vec<u32>,
}

/// Every parameter's (and set knob's) values in `points`, coded: parameter names in
/// declaration order, knobs after. Each distinct value is written out once.
fn coded(points: &[Point]) -> Vec<Coded> {
    use crate::spec::value::Value;
    use rustc_hash::FxHashMap;
    let mut names: Vec<String> = Vec::new();
    for p in points {
        for (k, _) in &p.config.params {
            if !names.contains(k) {
                names.push(k.clone());
            }
        }
    }
    // Codes in order of first appearance, then renumbered in the values' natural order.
    fn finish(name: String, mut values: Vec<String>, mut codes: Vec<u32>) -> Coded {
        let mut order: Vec<usize> = (0..values.len()).collect();
        order.sort_by(|&a, &b| crate::spec::value::natural_cmp(&values[a], &values[b]));
        let mut rank = vec![0u32; values.len()];
        for (r, &i) in order.iter().enumerate() {
            rank[i] = r as u32;
        }
        for c in &mut codes {
            *c = rank[*c as usize];
        }
        let mut sorted: Vec<String> = order.iter().map(|&i| std::mem::take(&mut values[i])).collect();
        sorted.shrink_to_fit();
        Coded { name, values: sorted, codes }
    }
    let mut out = Vec::new();
    for name in names {
        let mut seen: FxHashMap<Option<&Value>, u32> = FxHashMap::default();
        let mut values = Vec::new();
        let codes = points
            .iter()
            .map(|p| {
                let v = p.config.get(&name);
                *seen.entry(v).or_insert_with(|| {
                    values.push(v.map_or_else(|| "(unset)".to_string(), Value::to_string));
                    values.len() as u32 - 1
                })
            })
            .collect();
        out.push(finish(name, values, codes));
    }
    type Knob = (&'static str, fn(&Config) -> Option<u32>);
    let knobs: [Knob; 6] = [
        ("threads", |c| c.knobs.threads),
        ("num_warps", |c| c.knobs.num_warps),
        ("num_stages", |c| c.knobs.num_stages),
        ("occupancy", |c| c.knobs.occupancy),
        ("num_ctas", |c| c.knobs.num_ctas),
        ("maxnreg", |c| c.knobs.maxnreg),
    ];
    for (knob, of) in knobs {
        if points.iter().all(|p| of(&p.config).is_none()) {
            continue;
        }
        let mut seen: FxHashMap<Option<u32>, u32> = FxHashMap::default();
        let mut values = Vec::new();
        let codes = points
            .iter()
            .map(|p| {
                let v = of(&p.config);
                *seen.entry(v).or_insert_with(|| {
                    values.push(v.map_or_else(|| "(unset)".to_string(), |v| v.to_string()));
                    values.len() as u32 - 1
                })
            })
            .collect();
        out.push(finish(format!("@{knob}"), values, codes));
    }
    out
}

/// Every parameter's effect: times per value and the share of log-time variance it explains;
/// and the pair of parameters that interact most ([`Interaction`]), where one stands out.
pub fn effects(points: &[Point], winner: Option<&str>) -> (Vec<Effect>, Option<Interaction>) {
    if points.is_empty() {
        return (Vec::new(), None);
    }
    let logs: Vec<f64> = points.iter().map(|p| p.time.max(1e-300).ln()).collect();
    let mean = logs.iter().sum::<f64>() / logs.len() as f64;
    let total: f64 = logs.iter().map(|l| (l - mean).powi(2)).sum();
    let coded = coded(points);
    let mut out = Vec::new();
    for c in &coded {
        let mut groups: Vec<Vec<usize>> = vec![Vec::new(); c.values.len()];
        for (i, &k) in c.codes.iter().enumerate() {
            groups[k as usize].push(i);
        }
        let between: f64 = groups
            .iter()
            .map(|ix| {
                let m = ix.iter().map(|&i| logs[i]).sum::<f64>() / ix.len() as f64;
                ix.len() as f64 * (m - mean).powi(2)
            })
            .sum();
        let values: Vec<ValueTimes> = groups
            .iter()
            .zip(&c.values)
            .map(|(ix, value)| {
                let mut times: Vec<f64> = ix.iter().map(|&i| points[i].time).collect();
                times.sort_by(f64::total_cmp);
                ValueTimes { value: value.clone(), count: times.len(), quartiles: quartiles(&times) }
            })
            .collect();
        let explained = if total > 0.0 { (between / total).clamp(0.0, 1.0) } else { 0.0 };
        out.push(Effect { name: c.name.clone(), values, explained });
    }
    let pair = interaction(points, &logs, total, &coded, &out, winner);
    out.sort_by(|a, b| b.explained.total_cmp(&a.explained));
    (out, pair)
}

/// Two parameters' joint effect: the fastest time of each pair of their values, and how much
/// of the variance of log(time) the pair explains beyond what each does alone — the part
/// where the best value of one depends on the other, so that tuning them one at a time misses
/// the optimum.
#[derive(Clone, Debug, Serialize)]
pub struct Interaction {
    /// The parameter of the rows: of the two, the one declared first.
    pub rows: String,
    /// The parameter of the columns.
    pub columns: String,
    /// The rows' values, in their natural order.
    pub row_values: Vec<String>,
    /// The columns' values.
    pub column_values: Vec<String>,
    /// The fastest time (seconds) measured with each pair of values, row by row; `None` where
    /// no config with both was measured.
    pub fastest: Vec<Option<f64>>,
    /// Configs measured with each pair of values, row by row.
    pub counts: Vec<usize>,
    /// Share of the variance of log(time) the pair explains together (η² of its cells).
    pub explained: f64,
    /// Of that, the interaction's share: the pair's sum of squares less each one's alone and
    /// less what chance gives its extra cells (ω²-like, from the spread within cells); the
    /// pair is shown only where this is at least [`Interaction::SHOWN`].
    pub interaction: f64,
    /// Each parameter's share alone (rows', columns').
    pub alone: (f64, f64),
    /// The winner's cell (row, column), where the winner was measured.
    pub winner: Option<(usize, usize)>,
}

impl Interaction {
    /// The interaction share below which no pair is shown: the parameters act about
    /// independently, and the one-parameter charts say it all.
    pub const SHOWN: f64 = 0.02;
    /// A side longer than this many values is not drawn as a grid.
    pub const SIDE: usize = 24;

    /// The fastest time of the cell at `row`, `column`.
    pub fn at(&self, row: usize, column: usize) -> Option<f64> {
        self.fastest[row * self.column_values.len() + column]
    }
}

/// The pair of parameters (each of 2 to [`Interaction::SIDE`] values) whose interaction
/// explains most, where it explains at least [`Interaction::SHOWN`] and its cells hold on
/// average two configs or more (so the spread within them can be told from the pair's effect).
fn interaction(points: &[Point], logs: &[f64], total: f64, coded: &[Coded], effects: &[Effect], winner: Option<&str>) -> Option<Interaction> {
    let n = points.len();
    if total <= 0.0 || n < 8 {
        return None;
    }
    let mean = logs.iter().sum::<f64>() / n as f64;
    let usable: Vec<usize> = (0..coded.len()).filter(|&i| (2..=Interaction::SIDE).contains(&coded[i].values.len())).collect();
    let mut best: Option<(f64, usize, usize, f64)> = None;
    for (x, &a) in usable.iter().enumerate() {
        for &b in &usable[x + 1..] {
            let (na, nb) = (coded[a].values.len(), coded[b].values.len());
            let mut sum = vec![0.0f64; na * nb];
            let mut count = vec![0usize; na * nb];
            for ((&x, &y), l) in coded[a].codes.iter().zip(&coded[b].codes).zip(logs) {
                let c = x as usize * nb + y as usize;
                sum[c] += l;
                count[c] += 1;
            }
            let cells = count.iter().filter(|&&k| k > 0).count();
            if cells < 4 || n < 2 * cells {
                continue;
            }
            let joint: f64 = sum.iter().zip(&count).filter(|(_, &k)| k > 0).map(|(s, &k)| k as f64 * (s / k as f64 - mean).powi(2)).sum();
            // What chance adds: each cell beyond the two parameters' own values explains the
            // within-cell variance once.
            let within = (total - joint).max(0.0) / (n - cells) as f64;
            let extra_cells = cells.saturating_sub(na + nb - 1) as f64;
            let ss = joint - (effects[a].explained + effects[b].explained) * total - extra_cells * within;
            let share = ss / total;
            if best.is_none_or(|(s, ..)| share > s) {
                best = Some((share, a, b, joint / total));
            }
        }
    }
    let (share, a, b, joint) = best?;
    if share < Interaction::SHOWN {
        return None;
    }
    // Rows: the one declared first (the spec's order).
    let (r, c) = (a, b);
    let (nr, nc) = (coded[r].values.len(), coded[c].values.len());
    let mut fastest: Vec<Option<f64>> = vec![None; nr * nc];
    let mut counts = vec![0usize; nr * nc];
    let mut winner_cell = None;
    for (i, p) in points.iter().enumerate() {
        let (x, y) = (coded[r].codes[i] as usize, coded[c].codes[i] as usize);
        let k = x * nc + y;
        if Some(p.key.as_str()) == winner {
            winner_cell = Some((x, y));
        }
        counts[k] += 1;
        fastest[k] = Some(fastest[k].map_or(p.time, |t: f64| t.min(p.time)));
    }
    Some(Interaction {
        rows: coded[r].name.clone(),
        columns: coded[c].name.clone(),
        row_values: coded[r].values.clone(),
        column_values: coded[c].values.clone(),
        fastest,
        counts,
        explained: joint.clamp(0.0, 1.0),
        interaction: share.min(1.0),
        alone: (effects[r].explained, effects[c].explained),
        winner: winner_cell,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::stats::Stats;
    use crate::store::db::{EntryId, Environment, Measurement, Span, SpanKind, Winner};

    fn stats(t: f64) -> Stats {
        Stats::from_samples(&[t, t * 1.01, t * 0.99], false)
    }

    /// bx decides the time (×2 per step), vec barely matters; one config failed.
    fn entry() -> Entry {
        let id = EntryId { kernel: "k".into(), kernel_hash: "h".into(), target: "t".into(), toolchain: "tc".into(), problem: "n=1".into() };
        let mut e = Entry::new(id, "NVIDIA H100 80GB HBM3".into(), Environment::default());
        let mut seq = 0;
        for bx in [32i64, 64, 128, 256] {
            for vec in [1i64, 2] {
                let c = Config::new([("bx", bx), ("vec", vec)]);
                let t = 1e-3 * (256 / bx) as f64 * if vec == 2 { 1.01 } else { 1.0 };
                let trace =
                    Trace { run: 7, seq, elapsed_s: seq as f64, compile_s: Some(0.5), eval_s: None, device: None, by: None, spans: Vec::new(), shard: None };
                seq += 1;
                let status = if bx == 32 && vec == 2 {
                    Status::Failed { failure: FailureKind::LaunchFailed, message: "launch failed: an illegal memory access at 0x7f00".into() }
                } else {
                    Status::Ok { stats: stats(t) }
                };
                e.record(
                    c.key(),
                    Measurement { config: c, status, usage: None, at: 1, verified: Some(true), trace: Some(trace), flops: Some(1e9), bytes: Some(3.35e9) },
                );
            }
        }
        e.winner = Some(Winner {
            config: "bx=256,vec=1".into(),
            stats: stats(1e-3),
            space: "s".into(),
            verify: "v".into(),
            tie_band: vec!["bx=256,vec=1".into(), "bx=256,vec=2".into()],
            at: 1,
            default: Some("bx=64,vec=1".into()),
            partial: false,
        });
        e
    }

    /// The parameter whose values tell failed configs from measured ones is the one split on,
    /// its values in order with each kind counted; a parameter that tells them apart less, or
    /// failures spread over every value, make no split.
    #[test]
    fn failures_are_split_by_the_parameter_that_tells_them_from_the_measured() {
        let c = |p: i64, w: i64| Config::new([("w", w), ("p", p)]);
        let configs: Vec<Config> = [8i64, 1, 4, 2].iter().flat_map(|&p| [32i64, 64, 128].map(move |w| c(p, w))).collect();
        let kind = |cfg: &Config| match (cfg.get_i64("p"), cfg.get_i64("w")) {
            (Some(2), _) => Some(FailureKind::WrongOutput),
            (Some(8), Some(32)) => Some(FailureKind::LaunchFailed),
            (Some(8), _) => Some(FailureKind::WrongOutput),
            _ => None,
        };
        let measured: Vec<&Config> = configs.iter().filter(|c| kind(c).is_none()).collect();
        let failed: Vec<(&Config, FailureKind)> = configs.iter().filter_map(|c| Some((c, kind(c)?))).collect();
        let s = FailureSplit::of(&measured, &failed, &["w", "p"]).expect("p tells them apart");
        assert_eq!(s.param, "p");
        assert_eq!(s.kinds, ["wrong output", "launch failed"]);
        let values: Vec<(&str, usize, Vec<usize>)> = s.values.iter().map(|(v, ok, bad)| (v.as_str(), *ok, bad.clone())).collect();
        assert_eq!(values, [("1", 3, vec![0, 0]), ("2", 0, vec![3, 0]), ("4", 3, vec![0, 0]), ("8", 0, vec![2, 1])]);
        // One config of each `p` failed: no value tells them apart.
        let failed: Vec<(&Config, FailureKind)> = configs.iter().filter(|c| c.get_i64("w") == Some(32)).map(|c| (c, FailureKind::WrongOutput)).collect();
        let measured: Vec<&Config> = configs.iter().filter(|c| c.get_i64("w") != Some(32)).collect();
        assert_eq!(FailureSplit::of(&measured, &failed, &["p"]), None);
        assert_eq!(FailureSplit::of(&measured, &failed, &["w", "p"]).map(|s| s.param), Some("w".to_string()));
        assert_eq!(FailureSplit::of(&measured, &[], &["w", "p"]), None, "nothing failed");
    }

    /// A run's evaluations are in the order it met them (the end of a config's first launch),
    /// numbered so, and the best so far follows that order: with a shortlist the results come
    /// in another (here the fastest config, met first, measured in full last).
    #[test]
    fn a_runs_evaluations_are_in_the_order_it_met_them() {
        let mut e = entry();
        // The results' order (seq) reversed against the order met: seq 0 met last, ...
        let n = e.measurements.len();
        for m in e.measurements.values_mut() {
            let t = m.trace.as_mut().unwrap();
            let met = (n - 1 - t.seq) as f64 * 0.1;
            t.spans = vec![Span::new(SpanKind::Verify, Some(0), met, 0.05), Span::new(SpanKind::Measure, Some(0), 5.0 + t.seq as f64, 0.5)];
            t.elapsed_s = 6.0 + t.seq as f64;
        }
        let v = EntryView::new(&e, &Hints::default());
        let r = &v.runs[0];
        let numbers: Vec<usize> = r.evals.iter().map(|x| x.0).collect();
        assert_eq!(numbers, (0..n).collect::<Vec<_>>());
        assert!(r.met.windows(2).all(|w| w[0] <= w[1]) && (r.met[0] - 0.05).abs() < 1e-9, "{:?}", r.met);
        // The fastest (bx=256: vec=2 at seq 7, vec=1 at seq 6) were met first, at 0.05 and
        // 0.15 s: the best so far is theirs from there on.
        let best = r.best_so_far_met();
        assert_eq!(best.len(), 2, "{best:?}");
        assert!((best[0].0 - 0.05).abs() < 1e-9 && (best[0].1 - 1.01e-3).abs() < 1e-6, "{best:?}");
        assert!((best[1].0 - 0.15).abs() < 1e-9 && (best[1].1 - 1e-3).abs() < 1e-6, "{best:?}");
        let by_number: Vec<usize> = r.best_so_far().iter().map(|b| b.0).collect();
        assert_eq!(by_number, [0, 1]);
        // A record without spans is met when its result came.
        let mut e = entry();
        e.measurements.values_mut().for_each(|m| m.trace.as_mut().unwrap().spans.clear());
        let v = EntryView::new(&e, &Hints::default());
        let r = &v.runs[0];
        assert!(r.evals.iter().zip(&r.met).all(|(x, m)| x.1 == *m), "{:?}", r.met);
    }

    /// An entry of `a`, `b` (1, 2, 4, 8 each) and `u` (0, 1: nothing) timed by `time`.
    fn entry_of(time: impl Fn(i64, i64) -> f64) -> Entry {
        let id = EntryId { kernel: "k".into(), kernel_hash: "h".into(), target: "t".into(), toolchain: "tc".into(), problem: "n=1".into() };
        let mut e = Entry::new(id, "NVIDIA H100 80GB HBM3".into(), Environment::default());
        for a in [1i64, 2, 4, 8] {
            for b in [1i64, 2, 4, 8] {
                for u in [0i64, 1] {
                    let c = Config::new([("a", a), ("b", b), ("u", u)]);
                    // A little noise, the same for both `u`, so that `u` explains nothing.
                    let t = time(a, b) * (1.0 + 0.003 * ((a * 3 + b * 5 + u) % 7) as f64);
                    e.record(
                        c.key(),
                        Measurement {
                            config: c,
                            status: Status::Ok { stats: stats(t) },
                            usage: None,
                            at: 1,
                            verified: Some(true),
                            trace: None,
                            flops: None,
                            bytes: None,
                        },
                    );
                }
            }
        }
        e
    }

    #[test]
    fn the_pair_of_parameters_that_interact_is_found_and_a_pair_that_does_not_is_not_shown() {
        // The best `b` depends on `a`: fastest where a × b = 8 (a tile split two ways).
        let v = EntryView::new(&entry_of(|a, b| 1e-3 * (1.0 + ((a * b) as f64 / 8.0).log2().abs())), &Hints::default());
        let i = v.interaction.as_ref().expect("a and b interact");
        assert_eq!((i.rows.as_str(), i.columns.as_str()), ("a", "b"), "{i:?}");
        assert_eq!(i.row_values, ["1", "2", "4", "8"]);
        assert!(i.interaction > 0.5 && i.explained > 0.95, "{i:?}");
        // Each row's fastest column is a × b = 8.
        for (r, a) in [1usize, 2, 4, 8].iter().enumerate() {
            let fastest = (0..4).min_by(|&x, &y| i.at(r, x).unwrap().total_cmp(&i.at(r, y).unwrap())).unwrap();
            assert_eq!(i.column_values[fastest], (8 / a).to_string(), "row a={a}: {i:?}");
        }
        assert_eq!(i.counts.iter().sum::<usize>(), 32);
        // Each alone: the same time whatever `b` for a given `a`, so neither tells much.
        assert!(i.alone.0 < 0.3 && i.alone.1 < 0.3, "{i:?}");
        // Times that multiply (log-additive): each parameter acts on its own; nothing to show.
        let v = EntryView::new(&entry_of(|a, b| 1e-3 * (a * b) as f64), &Hints::default());
        assert!(v.interaction.is_none(), "{:?}", v.interaction);
        assert!(v.effects[0].explained > 0.45 && v.effects[1].explained > 0.45, "{:?}", v.effects);
    }

    #[test]
    fn an_entry_is_read_into_points_effects_runs_and_causes() {
        let v = EntryView::new(&entry(), &Hints::default());
        assert_eq!(v.points.len(), 7);
        assert_eq!(v.points[0].key, "bx=256,vec=1", "fastest first");
        assert_eq!(v.winner_point().unwrap().key, "bx=256,vec=1");
        assert_eq!(v.default_point().unwrap().key, "bx=64,vec=1", "the default stored with the winner");
        assert_eq!(v.effects[0].name, "bx");
        assert!(v.effects[0].explained > 0.99, "{}", v.effects[0].explained);
        // vec alone explains a little: the failed config leaves bx=32 (the slowest) only with
        // vec=1, so the two are confounded — what η² of an uneven sample shows.
        assert!(v.effects[1].explained < 0.1, "{}", v.effects[1].explained);
        assert_eq!(v.effects[0].values.iter().map(|x| x.value.as_str()).collect::<Vec<_>>(), ["32", "64", "128", "256"], "numeric order");
        assert_eq!(v.effects[0].values[0].count, 1);
        assert_eq!(v.causes.len(), 1);
        assert_eq!(v.failures["launch failed"], 1);
        assert_eq!(v.runs.len(), 1);
        assert!(v.runs[0].devices.is_empty(), "one device: none named");
        let best = v.runs[0].best_so_far();
        assert_eq!(best.first().unwrap().0, 0);
        assert!((best.last().unwrap().2 - 1e-3).abs() < 1e-9);
        // H100 by the preset (an estimate, the entry stored none): 3.35 GB in 1 ms is 100 %.
        let w = v.winner_point().unwrap();
        assert!(v.peaks.as_ref().unwrap().estimated);
        assert_eq!(w.position.words().unwrap(), "100 % of peak bandwidth (memory-bound)");
        assert_eq!(v.marked().len(), 3);
    }

    /// Failed configs that share a value no measured config has: the cause says so (a report
    /// reads this from the database records, where a tune said it from its results).
    #[test]
    fn a_cause_names_the_value_its_configs_share() {
        let mut e = entry();
        for bx in [64i64, 128] {
            let c = Config::new([("bx", bx), ("vec", 4i64)]);
            let status = Status::Failed { failure: FailureKind::TimedOut, message: "timed out after 1.000 s".into() };
            e.record(c.key(), Measurement { config: c, status, usage: None, at: 1, verified: None, trace: None, flops: None, bytes: None });
        }
        let v = EntryView::new(&e, &Hints::default());
        let late = v.causes.iter().find(|c| c.kind == FailureKind::TimedOut).unwrap();
        assert_eq!(late.diagnosis, ["every config that timed out has vec = 4 (2 configs), and no config measured has it"]);
        let fault = v.causes.iter().find(|c| c.kind == FailureKind::LaunchFailed).unwrap();
        assert!(fault.diagnosis.is_empty(), "one config: {:?}", fault.diagnosis);
    }

    /// An entry stored before its precision was: where one config beats the FP32 peak (tensor
    /// cores), every config is put against the FP16 peak, not only that one.
    #[test]
    fn an_entry_above_the_fp32_peak_is_put_against_the_fp16_peak_throughout() {
        let flops_only = |mut e: Entry| {
            for m in e.measurements.values_mut() {
                m.bytes = None;
            }
            e
        };
        let mut e = flops_only(entry());
        let fast = e.measurements.get_mut("bx=256,vec=1").unwrap();
        fast.flops = Some(1e11); // 100 TFLOP/s in 1 ms: above the H100's FP32 peak
        let v = EntryView::new(&e, &Hints::default());
        let p = v.peaks.as_ref().unwrap();
        assert!(p.half, "taken for half precision");
        assert!(v.points.iter().all(|q| q.position.of == Some("FP16 tensor")), "{:?}", v.points.iter().map(|q| q.position.of).collect::<Vec<_>>());
        // Without such a config the FP32 peak stays.
        let v = EntryView::new(&flops_only(entry()), &Hints::default());
        assert!(!v.peaks.as_ref().unwrap().half);
        assert!(v.points.iter().all(|q| q.position.of == Some("FP32")));
    }

    /// An entry whose every config failed has no winner because of that, not because its tune
    /// did not finish.
    #[test]
    fn an_entry_of_failures_says_why_it_has_no_winner() {
        let mut e = entry();
        e.winner = None;
        let v = EntryView::new(&e, &Hints::default());
        assert_eq!(v.notes, ["no winner yet: the tune that made these measurements did not finish"]);
        for m in e.measurements.values_mut() {
            m.status = Status::Failed { failure: FailureKind::LaunchFailed, message: "an illegal memory access".into() };
        }
        let v = EntryView::new(&e, &Hints::default());
        assert_eq!(v.notes, ["no winner: every config measured failed (8; see Failures)"]);
    }

    /// A run over two devices counts each one's evaluations.
    #[test]
    fn the_newest_runs_with_spans_get_timelines() {
        // Eight records over four runs (two each), each with a compile and a measurement.
        let mut e = entry();
        for (k, m) in e.measurements.values_mut().enumerate() {
            let t = m.trace.as_mut().unwrap();
            t.run = 10 + (k / 2) as u64;
            t.spans = vec![Span::new(SpanKind::Compile, None, 0.0, 0.5), Span::new(SpanKind::Measure, Some(0), 0.5, 0.1)];
        }
        let v = EntryView::new(&e, &Hints::default());
        assert_eq!((v.runs.len(), v.timed_runs), (4, 4));
        let drawn: Vec<bool> = v.runs.iter().map(|r| r.timeline.is_some()).collect();
        assert_eq!(drawn, [false, true, true, true], "the newest {TIMELINES}, oldest run first");
    }

    #[test]
    fn a_run_over_several_devices_counts_each_ones_evaluations() {
        let mut e = entry();
        for (k, m) in e.measurements.values_mut().enumerate() {
            m.trace.as_mut().unwrap().device = Some(usize::from(k % 4 == 0));
        }
        let v = EntryView::new(&e, &Hints::default());
        assert_eq!(v.runs[0].devices.iter().map(|(d, n)| (*d, *n)).collect::<Vec<_>>(), [(0, 6), (1, 2)]);
    }

    #[test]
    fn the_spec_fills_what_older_records_lack() {
        let mut e = entry();
        for m in e.measurements.values_mut() {
            (m.flops, m.bytes) = (None, None);
        }
        let none = EntryView::new(&e, &Hints::default());
        assert_eq!(none.points[0].position.words(), None);
        let f = |c: &Config| (None, Some(c.get_i64("bx").unwrap() as f64 * 1e6));
        let v = EntryView::new(&e, &Hints { default: Some("bx=128,vec=1".into()), metrics: Some(&f) });
        assert!(v.points[0].position.bytes_per_s.is_some());
        assert_eq!(v.default.as_deref(), Some("bx=128,vec=1"), "the spec's default wins");
        assert!(v.notes.iter().any(|n| n.contains("7 config(s)")), "{:?}", v.notes);
    }

    #[test]
    fn some_shards_of_a_split_are_said() {
        let mut e = entry();
        assert!(EntryView::new(&e, &Hints::default()).notes.is_empty());
        let mut o = crate::store::db::Origin { space: "s".into(), verify: "v".into(), shard: None, merged: Vec::new(), setup: Default::default() };
        o.set_shards(&[0, 2].into(), 4);
        e.origin = Some(o);
        let v = EntryView::new(&e, &Hints::default());
        assert_eq!(v.notes, ["a split tune's shard 0/4, 2/4 only; 1/4, 3/4 not merged: the winner is the best of their part of the space"]);
    }

    #[test]
    fn a_winner_whose_tune_ended_early_is_said() {
        let mut e = entry();
        e.winner.as_mut().unwrap().partial = true;
        let v = EntryView::new(&e, &Hints::default());
        assert_eq!(v.winner.as_deref(), Some("bx=256,vec=1"));
        assert!(v.notes.len() == 1 && v.notes[0].starts_with("its tune was ended early (SIGUSR1 or SIGUSR2"), "{:?}", v.notes);
    }

    /// The shards of a job array start in the same second: merged, their runs are told apart
    /// by shard (each with its own note and its own order), not drawn as one run.
    #[test]
    fn shards_started_in_the_same_second_are_runs_apart() {
        use crate::spec::settings::Shard;
        use crate::store::db::RunNote;
        let mut e = entry();
        let shard = |k: usize| Some(Shard { index: k, count: 2 });
        for (n, m) in e.measurements.values_mut().enumerate() {
            if let Some(t) = m.trace.as_mut() {
                t.shard = shard(n % 2);
                t.seq = n / 2;
            }
        }
        let note = |k: usize| RunNote { run: 7, strategy: format!("random {k}"), shard: shard(k), ..RunNote::default() };
        e.note_runs([&note(0), &note(1)]);
        assert_eq!(e.runs.len(), 2, "both shards' notes kept");
        let v = EntryView::new(&e, &Hints::default());
        assert_eq!(v.runs.len(), 2, "{:?}", v.runs.iter().map(|r| r.note.clone()).collect::<Vec<_>>());
        for (k, r) in v.runs.iter().enumerate() {
            assert_eq!(r.evals.len(), 4);
            assert_eq!(r.note.as_ref().map(|n| (n.strategy.clone(), n.shard)), Some((format!("random {k}"), shard(k))));
        }
    }

    #[test]
    fn a_sample_keeps_the_ends_the_marked_and_the_spread() {
        assert_eq!(sample(5, 10, &[]), vec![0, 1, 2, 3, 4]);
        let s = sample(100_000, 2000, &[12_345]);
        assert_eq!(s.len(), 2001);
        assert_eq!((s[0], *s.last().unwrap()), (0, 99_999));
        assert!(s.contains(&12_345));
    }
}
