//! The compile tail's policy: compiles that run far longer than the others must not decide
//! when a tune ends. The search loop (`run/search_loop.rs`) and the simulated pipeline
//! (`sim/schedule.rs`) both follow it.
//!
//! Three things are done about them. Compiles predicted to be slow start first, while the
//! search is compile-bound (the compile queue, [`crate::search::pipeline`]). When
//! nothing else is left to do but wait for compiles that have all run past `factor` × the
//! median compile of this tune, and the budget counts evaluations and the strategy does not
//! need every config, the tune waits as long as a new compile takes on average
//! (`Tail::patience`) and then stops waiting for them: each is told to the strategy as timed
//! out (not stored in the database: a later tune tries it again), and its evaluation goes to
//! another config. An exhaustive search waits, and the report says how long. At the time
//! limit, or when interrupted, the compiles still running are abandoned at once. A compile
//! that is abandoned finishes in the background (a compiler call cannot be stopped safely;
//! see [`crate::backend::abandonable`]) and fills the compile cache for the next tune.

use serde::Serialize;
use std::collections::HashSet;
use std::time::Instant;

/// The tail factor used unless the options say otherwise.
pub const DEFAULT_FACTOR: f64 = 3.0;
/// Finished compiles before the median means anything.
const MIN_COMPILES: usize = 5;
/// A compile shorter than this is never abandoned, whatever the median.
const FLOOR_S: f64 = 0.5;
/// Abandoned compiles whose evaluation goes to another config; beyond these, an abandoned
/// compile uses up its evaluation (so that a region of slow compiles cannot hold the tune in
/// a loop of replacements).
const MAX_REPLACED: usize = 8;

/// The tail's limit for `factor` and a median compile of `median` seconds.
fn limit_of(factor: f64, median: f64) -> f64 {
    (factor * median).max(FLOOR_S)
}

/// What the tune did about its slowest compiles (in the report as `compile_tail`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CompileTail {
    /// A compile is in the tail when it runs longer than this many times the median.
    pub factor: f64,
    /// The median of this tune's compiles (compile-cache hits left out), seconds.
    pub median_s: Option<f64>,
    /// The limit past which a compile is in the tail: `factor` × the median, and at least
    /// 0.5 s (shorter compiles never hold a tune).
    pub limit_s: Option<f64>,
    /// Compiles that finished beyond `factor` × the median.
    pub slow: usize,
    /// Of those, how many started while other compiles still waited in the queue.
    pub slow_started_early: usize,
    /// Compiles the tune stopped waiting for.
    pub abandoned: Vec<Abandoned>,
    /// Seconds the tune waited at its end with nothing else to do but compiles past the limit
    /// (for good where the search needs every config; else at most as long as a new compile
    /// takes on average before stopping waiting).
    pub waited_s: f64,
}

/// A compile the tune stopped waiting for.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Abandoned {
    /// The config's key.
    pub config: String,
    /// How long it had been compiling.
    pub seconds: f64,
    /// `tail` (past the limit at the end of the search), `time limit`, `ended early` (see
    /// [`crate::TuneOptions::wrap_up`]) or `interrupted`.
    pub why: String,
    /// Whether its evaluation went to another config.
    pub replaced: bool,
}

impl CompileTail {
    /// One line for the report, or none when nothing was slow.
    pub fn line(&self) -> Option<String> {
        let mut parts = Vec::new();
        if let (Some(median), Some(limit), true) = (self.median_s, self.limit_s, self.slow > 0) {
            let why = if limit > self.factor * median { format!("at least {FLOOR_S} s") } else { format!("{}× the median, {median:.2} s", self.factor) };
            parts.push(format!(
                "{} compile{} took over {limit:.2} s ({why}), {} of them started while others waited",
                self.slow,
                if self.slow == 1 { "" } else { "s" },
                self.slow_started_early
            ));
        }
        let by = |why: &str| self.abandoned.iter().filter(|a| a.why == why).collect::<Vec<_>>();
        let tail = by("tail");
        if !tail.is_empty() {
            let replaced = tail.iter().filter(|a| a.replaced).count();
            let longest = tail.iter().max_by(|a, b| a.seconds.total_cmp(&b.seconds)).expect("not empty");
            parts.push(format!(
                "stopped waiting for {} still compiling past the limit at the end (longest {} after {:.1} s); {replaced} of their evaluations went to other configs",
                tail.len(),
                longest.config,
                longest.seconds
            ));
        }
        for (why, when) in
            [("time limit", "at the time limit"), ("ended early", "when the tune was ended early"), ("interrupted", "when the tune was interrupted")]
        {
            let n = by(why).len();
            if n > 0 {
                parts.push(format!("{n} compile{} still running {when} abandoned", if n == 1 { "" } else { "s" }));
            }
        }
        if self.waited_s > 0.0 {
            parts.push(format!("waited {:.1} s at the end for compiles past the limit", self.waited_s));
        }
        (!parts.is_empty()).then(|| format!("compile tail: {}", parts.join("; ")))
    }
}

/// Watches the compiles of one search.
pub(crate) struct Tail {
    factor: Option<f64>,
    /// Finished uncached compiles: seconds, and compiles still queued when each started.
    fresh: Vec<(f64, usize)>,
    median: Option<f64>,
    abandoned: HashSet<usize>,
    report: CompileTail,
    replaced: usize,
    waiting_since: Option<Instant>,
}

impl Tail {
    /// A watch with `factor` (`None`: never stop waiting, except at the time limit).
    pub fn new(factor: Option<f64>) -> Tail {
        Tail {
            factor,
            fresh: Vec::new(),
            median: None,
            abandoned: HashSet::new(),
            report: CompileTail { factor: factor.unwrap_or(DEFAULT_FACTOR), ..Default::default() },
            replaced: 0,
            waiting_since: None,
        }
    }

    /// A compile finished in `seconds`, with `behind` others queued when it started.
    pub fn finished(&mut self, seconds: f64, cached: bool, behind: usize) {
        if !cached && seconds.is_finite() && seconds > 0.0 {
            self.fresh.push((seconds, behind));
            self.median = None;
        }
    }

    fn median(&mut self) -> Option<f64> {
        if self.fresh.len() < MIN_COMPILES {
            return None;
        }
        if self.median.is_none() {
            let mut s: Vec<f64> = self.fresh.iter().map(|f| f.0).collect();
            s.sort_by(f64::total_cmp);
            self.median = Some(s[s.len() / 2]);
        }
        self.median
    }

    /// Seconds past which a running compile is in the tail, once enough compiles finished.
    pub fn limit(&mut self) -> Option<f64> {
        let factor = self.factor?;
        self.median().map(|m| limit_of(factor, m))
    }

    /// How long the tune waits, with nothing else left to do, for compiles in the tail before
    /// it stops waiting: as long as a new compile takes on average (the mean of this tune's
    /// compiles), the price of the replacement. Waiting that long and then replacing costs at
    /// most twice what knowing the compile's end in advance would (the ski-rental bound), and
    /// a compile nearly done when the wait begins is kept.
    pub fn patience(&self) -> f64 {
        if self.fresh.is_empty() {
            return f64::INFINITY;
        }
        self.fresh.iter().map(|f| f.0).sum::<f64>() / self.fresh.len() as f64
    }

    /// Seconds the tune has been waiting for compiles in the tail, this time.
    pub fn waited(&self) -> f64 {
        self.waiting_since.map_or(0.0, |t| t.elapsed().as_secs_f64())
    }

    /// Whether candidate `i`'s compile was abandoned (its late answer is dropped).
    pub fn is_abandoned(&self, i: usize) -> bool {
        self.abandoned.contains(&i)
    }

    /// Records that the compile of `config`, running for `seconds`, is abandoned (`why`);
    /// returns whether its evaluation may go to another config.
    pub fn record(&mut self, config: String, seconds: f64, why: &str, replaceable: bool) -> bool {
        let replaced = replaceable && self.replaced < MAX_REPLACED;
        self.replaced += usize::from(replaced);
        self.report.abandoned.push(Abandoned { config, seconds, why: why.into(), replaced });
        replaced
    }

    /// [`Tail::record`]s candidate `i`'s compile as abandoned in the tail and remembers `i`, so
    /// that its late answer is dropped ([`Tail::is_abandoned`]).
    pub fn abandon(&mut self, i: usize, config: String, seconds: f64) -> bool {
        self.abandoned.insert(i);
        self.record(config, seconds, "tail", true)
    }

    /// Abandoned compiles whose evaluations went to other configs.
    pub fn replaced(&self) -> usize {
        self.replaced
    }

    /// The tune waits (or stops waiting) for compiles past the limit that it cannot replace.
    pub fn waiting(&mut self, now: bool) {
        match (now, self.waiting_since) {
            (true, None) => self.waiting_since = Some(Instant::now()),
            (false, Some(t)) => {
                self.report.waited_s += t.elapsed().as_secs_f64();
                self.waiting_since = None;
            }
            _ => {}
        }
    }

    /// The report, at the end of the search.
    pub fn finish(mut self) -> CompileTail {
        self.waiting(false);
        self.report.median_s = self.median();
        if let Some(m) = self.report.median_s {
            let limit = limit_of(self.report.factor, m);
            self.report.limit_s = Some(limit);
            let slow: Vec<&(f64, usize)> = self.fresh.iter().filter(|f| f.0 > limit).collect();
            self.report.slow = slow.len();
            self.report.slow_started_early = slow.iter().filter(|f| f.1 > 0).count();
        }
        self.report
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_is_the_factor_times_the_median_with_a_floor() {
        let mut t = Tail::new(Some(3.0));
        for s in [1.0, 2.0, 3.0, 4.0] {
            t.finished(s, false, 0);
        }
        assert_eq!(t.limit(), None, "too few compiles");
        t.finished(0.001, true, 0);
        assert_eq!(t.limit(), None, "cache hits do not count");
        t.finished(5.0, false, 0);
        assert_eq!(t.limit(), Some(9.0));
        let mut quick = Tail::new(Some(3.0));
        (0..9).for_each(|_| quick.finished(0.01, false, 0));
        assert_eq!(quick.limit(), Some(FLOOR_S));
        assert_eq!(Tail::new(None).limit(), None);
    }

    #[test]
    fn replacements_are_bounded_and_the_report_says_what_was_done() {
        let mut t = Tail::new(Some(3.0));
        for (s, behind) in [(1.0, 9), (1.0, 9), (1.0, 9), (1.0, 9), (1.0, 9), (4.0, 3), (5.0, 0)] {
            t.finished(s, false, behind);
        }
        let replaced: Vec<bool> = (0..10).map(|i| t.abandon(100 + i, format!("x={i}"), 7.0 + i as f64)).collect();
        assert_eq!(replaced.iter().filter(|&&r| r).count(), MAX_REPLACED);
        assert_eq!(t.replaced(), MAX_REPLACED);
        assert!(t.is_abandoned(100) && !t.is_abandoned(99));
        assert!(!t.record("y=1".into(), 2.0, "time limit", true), "no replacement beyond the bound");
        assert!(!t.is_abandoned(200), "a recorded compile's answer is not dropped by the tail");
        let r = t.finish();
        assert_eq!((r.slow, r.slow_started_early, r.median_s), (2, 1, Some(1.0)));
        let line = r.line().unwrap();
        assert!(line.starts_with("compile tail: 2 compiles took over 3.00 s (3× the median, 1.00 s), 1 of them started while others waited"), "{line}");
        assert!(
            line.contains(
                "stopped waiting for 10 still compiling past the limit at the end (longest x=9 after 16.0 s); 8 of their evaluations went to other configs"
            ),
            "{line}"
        );
        assert!(line.contains("1 compile still running at the time limit abandoned"), "{line}");
    }

    #[test]
    fn patience_is_the_mean_compile() {
        let mut t = Tail::new(Some(3.0));
        assert_eq!(t.patience(), f64::INFINITY, "nothing known yet");
        for s in [1.0, 2.0, 3.0, 4.0, 15.0] {
            t.finished(s, false, 0);
        }
        t.finished(0.01, true, 0);
        assert_eq!(t.patience(), 5.0);
        assert_eq!(t.waited(), 0.0);
        t.waiting(true);
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(t.waited() >= 0.02);
        t.waiting(false);
        assert_eq!(t.waited(), 0.0);
        assert!(t.finish().waited_s >= 0.02);
    }

    #[test]
    fn nothing_slow_says_nothing() {
        let mut t = Tail::new(Some(3.0));
        (0..6).for_each(|_| t.finished(1.0, false, 0));
        assert_eq!(t.finish().line(), None);
        assert_eq!(Tail::new(Some(3.0)).finish().line(), None);
    }
}
