//! Honest benchmarking: warm-up until stable, adaptive repetitions until the confidence
//! interval is tight, and racing against the best config so far.
//!
//! The loop is written against a closure that launches the kernel `n` times and returns each
//! launch's time, so it is backend-agnostic and tested with synthetic timings.

use crate::error::BackendError;
use crate::spec::settings::BenchOptions;
use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Timing statistics of one config, in seconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// Measured launches (warm-up excluded).
    pub samples: u32,
    /// Mean time.
    pub mean: f64,
    /// Median time.
    pub median: f64,
    /// Fastest launch.
    pub min: f64,
    /// Slowest launch.
    pub max: f64,
    /// Sample standard deviation.
    pub stddev: f64,
    /// Half-width of the 95 % confidence interval of the mean (infinite for a single sample;
    /// stored as `null` in JSON, which has no infinity).
    #[serde(with = "finite_or_null")]
    pub ci_half: f64,
    /// Measuring stopped early because the config was clearly slower than the best.
    pub raced: bool,
}

impl Stats {
    /// Statistics of a sample.
    pub fn from_samples(times: &[f64], raced: bool) -> Stats {
        let n = times.len();
        assert!(n > 0, "statistics of an empty sample");
        let mean = times.iter().sum::<f64>() / n as f64;
        let mut sorted = times.to_vec();
        sorted.sort_by(f64::total_cmp);
        let median = if n % 2 == 1 { sorted[n / 2] } else { 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]) };
        let var = if n > 1 { times.iter().map(|t| (t - mean).powi(2)).sum::<f64>() / (n - 1) as f64 } else { 0.0 };
        let stddev = var.sqrt();
        let ci_half = if n > 1 { t_quantile_975(n - 1) * stddev / (n as f64).sqrt() } else { f64::INFINITY };
        Stats { samples: n as u32, mean, median, min: sorted[0], max: sorted[n - 1], stddev, ci_half, raced }
    }

    /// The same statistics with the interval widened by a run-to-run part `floor` (a
    /// fraction of the mean, added in quadrature; see `BenchOptions::run_to_run`). A single
    /// sample keeps its infinite interval.
    pub fn widened(self, floor: f64) -> Stats {
        let ci_half = if self.ci_half.is_finite() { self.ci_half.hypot(floor * self.mean) } else { self.ci_half };
        Stats { ci_half, ..self }
    }

    /// Upper end of the confidence interval.
    pub fn upper(&self) -> f64 {
        self.mean + finite_or(self.ci_half, self.mean)
    }

    /// Lower end of the confidence interval.
    pub fn lower(&self) -> f64 {
        self.mean - finite_or(self.ci_half, self.mean)
    }

    /// Whether this config is clearly slower than `best`.
    pub fn clearly_slower_than(&self, best: &Stats, margin: f64) -> bool {
        self.lower() > best.upper() * (1.0 + margin)
    }
}

fn finite_or(x: f64, alt: f64) -> f64 {
    if x.is_finite() {
        x
    } else {
        alt
    }
}

/// The 97.5 % quantile of Student's t with `df` degrees of freedom (two-sided 95 %).
pub fn t_quantile_975(df: usize) -> f64 {
    StudentsT::new(0.0, 1.0, df.max(1) as f64).map(|t| t.inverse_cdf(0.975)).unwrap_or(1.96)
}

/// What measuring a config cost.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeasureCost {
    /// Warm-up launches.
    pub warmup_launches: u32,
    /// Measured launches.
    pub launches: u32,
}

/// Launches of a config that ran before it is measured (its verification launch), and what the
/// tune has learned of such launches on this device.
#[derive(Clone, Copy, Debug, Default)]
pub struct PriorLaunches<'a> {
    /// Each prior launch's time, in seconds.
    pub launches: &'a [f64],
    /// Whether enough configs were seen on this device ([`VerifyExcess::settled`]) for the
    /// settled bound to race a verification launch alone.
    pub settled: bool,
    /// The most a verification launch exceeded its config's later launches on this device so
    /// far, however few configs were seen ([`VerifyExcess::largest`]): whether the launches
    /// above may race the config alone ([`trusted`]).
    pub largest: Option<f64>,
}

impl<'a> PriorLaunches<'a> {
    /// Prior launches, with nothing learned about them.
    pub fn of(launches: &'a [f64]) -> PriorLaunches<'a> {
        PriorLaunches { launches, settled: false, largest: None }
    }

    /// With what the device's verification launches showed so far.
    pub fn learned(launches: &'a [f64], seen: &VerifyExcess) -> PriorLaunches<'a> {
        PriorLaunches { launches, settled: seen.settled(), largest: seen.largest() }
    }
}

/// What a device's verification launches say about the time of the launches after them: each
/// config measured after its verification launch adds the ratio of that launch to the fastest
/// later one. A verification launch runs right after the buffers are restored, with the
/// kernel's code not yet run, so it may be slower (or, with L2 still holding the restored
/// buffers, faster) than a warm, flushed launch; how much is a property of the kernel and the
/// device, which the configs measured near the best keep showing.
#[derive(Clone, Debug, Default)]
pub struct VerifyExcess {
    seen: u32,
    max: f64,
}

impl VerifyExcess {
    /// Observations needed before the excess is [`settled`](Self::settled).
    pub const MIN_SEEN: u32 = 10;

    /// Adds a config whose verification launch took `verify` and whose later launches took at
    /// least `later` seconds.
    pub fn observe(&mut self, verify: f64, later: f64) {
        if verify.is_finite() && later.is_finite() && verify > 0.0 && later > 0.0 {
            self.seen += 1;
            self.max = self.max.max(verify / later);
        }
    }

    /// Whether [`MIN_SEEN`](Self::MIN_SEEN) configs were seen.
    pub fn settled(&self) -> bool {
        self.seen >= Self::MIN_SEEN
    }

    /// The largest ratio seen (at least 1), once one config was (see [`trusted`]).
    pub fn largest(&self) -> Option<f64> {
        (self.seen > 0).then_some(self.max.max(1.0))
    }
}

/// How much slower than the launches after it a single verification launch may run by chance,
/// beyond what a device shows as a rule: on the H100, in six warm SGEMM tunes (~400 configs with
/// both a verification launch and later launches), the usual excess was under 2 %, but 5 launches
/// at random configs ran 5–17 % slow (docs/benchmarks.md, "Racing on the verification launch").
/// A verification launch alone races a config only when it exceeds the settled bound by more
/// than this (or than the device's largest observed excess, when larger), so that such a
/// hiccup cannot race out a config as fast as the best.
pub const VERIFY_HICCUP: f64 = 0.25;

/// Measures one config. `run(n)` launches the kernel `n` times and returns each launch's time
/// in seconds. `best` is the best config so far, for racing. `prior` holds the times of launches
/// that already ran (the verification launch): on a device whose verification launches were seen
/// to run like the launches after them ([`trusted`]), a config whose fastest prior launch is far
/// slower than the best (1.5×) is raced out at once, without launching it again, and so is one
/// whose verification launch is slower than the settled bound below by more than
/// [`VERIFY_HICCUP`] once [`VerifyExcess::MIN_SEEN`] configs were seen (`prior.settled`). One
/// whose warm-up then settles (two successive launches within
/// `warmup_stable`) with every launch slower than the best's upper end by more than
/// `race_margin` and `warmup_stable` together is raced out before its timed launches. Without
/// prior launches (a tune with no reference, and the simulator, whose recorded scores were
/// made so) only the far race applies during warm-up. The interval returned is widened by
/// `opts.run_to_run`; the stopping and racing rules use the samples' own.
pub fn measure(
    opts: &BenchOptions,
    best: Option<&Stats>,
    prior: PriorLaunches<'_>,
    run: impl FnMut(u32) -> Result<Vec<f64>, BackendError>,
) -> Result<(Stats, MeasureCost), BackendError> {
    let (stats, cost) = sample(opts, best, prior, run)?;
    Ok((stats.widened(opts.run_to_run), cost))
}

/// [`measure`] before the run-to-run widening.
fn sample(
    opts: &BenchOptions,
    best: Option<&Stats>,
    prior: PriorLaunches<'_>,
    mut run: impl FnMut(u32) -> Result<Vec<f64>, BackendError>,
) -> Result<(Stats, MeasureCost), BackendError> {
    let mut cost = MeasureCost::default();
    if races_on_prior(opts, best, prior) {
        return Ok((Stats::from_samples(prior.launches, true), cost));
    }
    let PriorLaunches { launches: prior, .. } = prior;
    // Warm-up: single launches until two successive ones agree, or the cap.
    // The last prior launch (the verification run) counts as the previous warm-up sample.
    let mut prev: Option<f64> = prior.last().copied();
    let mut warm_min = prior.iter().copied().fold(f64::INFINITY, f64::min);
    let prior_launches = prior.len() as u32;
    let mut warm = Vec::new();
    for i in 0..opts.warmup_max.max(1) {
        let t = one(run(1)?)?;
        cost.warmup_launches += 1;
        warm.push(t);
        warm_min = warm_min.min(t);
        if let Some(b) = best.filter(|_| opts.racing) {
            // Even its fastest warm-up launch is far slower than the best's mean: stop now.
            if i + 1 + prior_launches >= 2 && warm_min > b.upper() * 1.5 {
                return Ok((Stats::from_samples(&warm, true), cost));
            }
        }
        let settled = i + 1 >= opts.warmup_min && prev.is_some_and(|p| (t - p).abs() <= opts.warmup_stable * p.max(t));
        if settled {
            // Settled after a verification launch: the kernel's time is known within
            // `warmup_stable`, so a config slower than the best by more than that and the
            // racing margin is raced without timed launches.
            if best.is_some_and(|b| opts.racing && prior_launches > 0 && warm_min > settled_race_bound(b, opts)) {
                return Ok((Stats::from_samples(&warm, true), cost));
            }
            break;
        }
        prev = Some(t);
    }
    let mut times: Vec<f64> = Vec::with_capacity(opts.min_reps as usize * 2);
    let mut batch = opts.min_reps.max(2);
    loop {
        let got = run(batch)?;
        if got.is_empty() {
            return Err(BackendError::LaunchFailed("backend returned no timings".into()));
        }
        cost.launches += got.len() as u32;
        times.extend(got);
        let s = Stats::from_samples(&times, false);
        if s.ci_half <= opts.target_rel_ci * s.mean {
            return Ok((s, cost));
        }
        if let Some(b) = best.filter(|_| opts.racing) {
            if s.clearly_slower_than(b, opts.race_margin) {
                return Ok((Stats { raced: true, ..s }, cost));
            }
        }
        let spent: f64 = times.iter().sum();
        if times.len() as u32 >= opts.max_reps || spent >= opts.max_seconds {
            return Ok((s, cost));
        }
        // Grow the batch geometrically, bounded by the caps (by count and by time).
        let left_reps = opts.max_reps - times.len() as u32;
        let left_time = ((opts.max_seconds - spent) / s.mean.max(1e-9)).ceil().max(1.0) as u32;
        batch = (times.len() as u32).max(opts.min_reps).min(left_reps).min(left_time).max(1);
    }
}

/// Whether a config's prior launches alone (its verification launch) race it out against
/// `best`: on a device whose verification launches were seen to run like the launches after
/// them ([`trusted`]), when the fastest is slower than the best's upper end by half, or slower
/// than the settled bound by more than [`VERIFY_HICCUP`] once enough configs were seen (see
/// [`measure`]).
pub fn races_on_prior(opts: &BenchOptions, best: Option<&Stats>, prior: PriorLaunches<'_>) -> bool {
    let Some(b) = best.filter(|_| opts.racing && !prior.launches.is_empty() && trusted(prior.largest)) else { return false };
    let fastest = prior.launches.iter().copied().fold(f64::INFINITY, f64::min);
    // On a trusted device every ratio seen is within the hiccup, which is the allowance.
    fastest > b.upper() * 1.5 || (prior.settled && fastest > settled_race_bound(b, opts) * (1.0 + VERIFY_HICCUP))
}

/// Whether a device's verification launches may race a config alone: once a config measured
/// after its verification launch showed how much that launch exceeded the launches after it
/// (`largest`, the most seen: [`VerifyExcess::largest`]), and while that is no more than
/// [`VERIFY_HICCUP`]. Where a driver compiles each kernel at its first launch (Mesa's lavapipe
/// from 23.x with a cold shader cache: 18–44 ms on launches of 2.5 ms, longest for the most
/// unrolled kernels, which were the fastest), a verification launch is mostly the compile, by
/// an amount that differs between configs, and says nothing about the kernel's time: no
/// allowance for it can be right for every config, so such a device races only on warm
/// launches.
pub fn trusted(largest: Option<f64>) -> bool {
    largest.is_some_and(|x| x <= 1.0 + VERIFY_HICCUP)
}

/// Whether an observation moved a device's largest verification excess from `was` to `now`
/// across the line [`trusted`] draws: the moment to report it (once; a device never seen
/// before counts as trusted until then).
pub fn became_distrusted(was: Option<f64>, now: Option<f64>) -> bool {
    now.is_some() && !trusted(now) && (was.is_none() || trusted(was))
}

/// Whether a verification launch of `verify` seconds races its config out against the fastest
/// verification launch seen in the same tune, `fastest` seconds on this device's scale (one
/// made on another device is scaled by the devices' calibration ratio): slower by more than the
/// racing margin, the settled warm-up's spread and [`VERIFY_HICCUP`] together. Both are
/// verification launches, so how much such launches exceed warm ones on a device cancels out;
/// what is left is the chance hiccup of one launch. (`fastest` is itself a single launch; on the
/// H100 verification launches were never more than 1 % faster than their config's later
/// launches, which the bound allows for twice.) That the excess cancels out holds only where it
/// is small for every config: the rule applies on a [`trusted`] device only.
pub fn races_on_fastest_verification(opts: &BenchOptions, verify: f64, fastest: f64, largest: Option<f64>) -> bool {
    opts.racing && trusted(largest) && verify > fastest * 1.02 * (1.0 + opts.race_margin) * (1.0 + opts.warmup_stable) * (1.0 + VERIFY_HICCUP)
}

/// The time above which a settled warm-up races a config out: the best's upper end, widened by
/// the racing margin and by how far two launches of a settled warm-up may still differ.
fn settled_race_bound(best: &Stats, opts: &BenchOptions) -> f64 {
    best.upper() * (1.0 + opts.race_margin) * (1.0 + opts.warmup_stable)
}

fn one(v: Vec<f64>) -> Result<f64, BackendError> {
    v.first().copied().ok_or_else(|| BackendError::LaunchFailed("backend returned no timing".into()))
}

mod finite_or_null {
    use serde::{Deserialize, Deserializer, Serializer};
    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        if v.is_finite() {
            s.serialize_f64(*v)
        } else {
            s.serialize_none()
        }
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::INFINITY))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn synthetic(base: f64, jitter: f64) -> impl FnMut(u32) -> Result<Vec<f64>, BackendError> {
        let mut k = 0u64;
        move |n| {
            Ok((0..n)
                .map(|_| {
                    k += 1;
                    // A deterministic pseudo-noise in [-1, 1].
                    let u = ((k.wrapping_mul(2654435761) % 1000) as f64 / 500.0) - 1.0;
                    base * (1.0 + jitter * u)
                })
                .collect())
        }
    }

    #[test]
    fn a_device_becomes_distrusted_once_when_its_excess_crosses_the_line() {
        assert!(became_distrusted(None, Some(1.4)), "the first excess seen, over the line");
        assert!(became_distrusted(Some(1.1), Some(1.4)), "a trusted device crossing it");
        assert!(!became_distrusted(Some(1.4), Some(1.6)), "already distrusted: said once");
        assert!(!became_distrusted(None, Some(1.2)) && !became_distrusted(Some(1.1), Some(1.2)), "within the hiccup");
        assert!(!became_distrusted(None, None));
    }

    #[test]
    fn the_reported_interval_holds_the_run_to_run_floor_but_stopping_does_not_wait_for_it() {
        // Samples within 0.1 %: the samples' interval alone is far below 1 %, so measuring
        // stops at min_reps; the reported interval is widened to the 1 % floor.
        let (s, c) = measure(&BenchOptions::default(), None, PriorLaunches::default(), synthetic(1e-3, 0.001)).unwrap();
        assert_eq!((s.samples, c.launches), (5, 5));
        assert!(s.ci_half >= 0.01 * s.mean && s.ci_half < 0.0101 * s.mean, "{s:?}");
        let (raw, _) = measure(&BenchOptions { run_to_run: 0.0, ..Default::default() }, None, PriorLaunches::default(), synthetic(1e-3, 0.001)).unwrap();
        assert!(raw.ci_half < 0.002 * raw.mean, "{raw:?}");
        assert!(Stats::from_samples(&[1e-3], true).widened(0.01).ci_half.is_infinite());
        let bad = BenchOptions { run_to_run: -0.1, ..Default::default() };
        assert_eq!(bad.check().unwrap_err().0, "run_to_run");
    }

    #[test]
    fn quiet_kernel_stops_at_min_reps() {
        let (s, c) = measure(&BenchOptions::default(), None, PriorLaunches::default(), synthetic(1e-3, 0.001)).unwrap();
        assert_eq!(s.samples, 5);
        assert!(c.warmup_launches <= 2, "{c:?}");
        assert!((s.mean - 1e-3).abs() < 1e-5);
        assert!(!s.raced);
    }

    #[test]
    fn noisy_kernel_gets_more_reps_up_to_the_cap() {
        let opts = BenchOptions { max_reps: 40, ..Default::default() };
        let (s, _) = measure(&opts, None, PriorLaunches::default(), synthetic(1e-3, 0.2)).unwrap();
        assert!(s.samples > 5 && s.samples <= 40, "{}", s.samples);
    }

    #[test]
    fn slow_config_is_raced_out() {
        let best = Stats::from_samples(&[1e-3, 1.001e-3, 0.999e-3, 1e-3, 1e-3], false);
        let (s, c) = measure(&BenchOptions::default(), Some(&best), PriorLaunches::default(), synthetic(3e-3, 0.001)).unwrap();
        assert!(s.raced);
        assert!(c.launches == 0, "raced during warm-up: {c:?}");
        let (s, _) = measure(&BenchOptions::default(), Some(&best), PriorLaunches::default(), synthetic(1.1e-3, 0.05)).unwrap();
        assert!(s.raced, "{s:?}");
        assert!(s.samples < 100);
        // A verification launch far slower than the best decides the race with no launch at
        // all, once a config showed how much this device's verification launches exceed the
        // launches after them (here: not at all)…
        let seen = |largest: f64, launches: &'static [f64]| PriorLaunches { launches, settled: false, largest: Some(largest) };
        let (s, c) = measure(&BenchOptions::default(), Some(&best), seen(1.0, &[3e-3]), synthetic(3e-3, 0.001)).unwrap();
        assert!(s.raced && c.warmup_launches == 0 && c.launches == 0, "{c:?}");
        assert_eq!(s.samples, 1);
        // …before that, after one warm launch…
        let (s, c) = measure(&BenchOptions::default(), Some(&best), PriorLaunches::of(&[3e-3]), synthetic(3e-3, 0.001)).unwrap();
        assert!(s.raced && c.warmup_launches == 1 && c.launches == 0, "{c:?}");
        // …and where verification launches ran 9× the launches after them (a driver compiling
        // each kernel at its first launch), a 9× one says nothing: the config is measured, and a
        // slow one is raced on its warm launches.
        let (s, c) = measure(&BenchOptions::default(), Some(&best), seen(9.0, &[9e-3]), synthetic(1.0e-3, 0.001)).unwrap();
        assert!(!s.raced && c.launches == 5, "{s:?} {c:?}");
        let (s, c) = measure(&BenchOptions::default(), Some(&best), seen(9.0, &[9e-3]), synthetic(3e-3, 0.001)).unwrap();
        assert!(s.raced && c.warmup_launches == 1 && c.launches == 0, "a slow one still races after a warm launch: {c:?}");
        // A close one is measured normally.
        let (s, _) = measure(&BenchOptions::default(), Some(&best), PriorLaunches::of(&[1.05e-3]), synthetic(1.0e-3, 0.001)).unwrap();
        assert!(!s.raced);
        let (s, c) = measure(&BenchOptions::default(), Some(&best), PriorLaunches::of(&[1.05e-3]), synthetic(1.05e-3, 0.001)).unwrap();
        assert!(!s.raced && c.launches == 5, "within the settled bound (1.02 × 1.05 of the best's upper end): {s:?} {c:?}");
        // 1.2× the best: once the verification launch and one warm launch agree, raced with no
        // timed launch; without a verification launch it gets its timed launches first.
        let (s, c) = measure(&BenchOptions::default(), Some(&best), PriorLaunches::of(&[1.21e-3]), synthetic(1.2e-3, 0.001)).unwrap();
        assert!(s.raced && c.warmup_launches == 1 && c.launches == 0, "{s:?} {c:?}");
        assert_eq!(s.samples, 1);
        let (s, c) = measure(&BenchOptions::default(), Some(&best), PriorLaunches::default(), synthetic(1.2e-3, 0.001)).unwrap();
        assert!(c.launches > 0 && (s.mean - 1.2e-3).abs() < 1e-5, "{s:?} {c:?}");
        // A cold verification launch that the warm launch does not confirm: warm-up goes on,
        // and the settled pair decides (here: close to the best, so measured).
        let (s, c) = measure(&BenchOptions::default(), Some(&best), PriorLaunches::of(&[1.4e-3]), synthetic(1.0e-3, 0.001)).unwrap();
        assert!(!s.raced && c.warmup_launches == 2 && c.launches == 5, "{s:?} {c:?}");
        // Racing off: every config gets its timed launches.
        let off = BenchOptions { racing: false, ..Default::default() };
        let (s, c) = measure(&off, Some(&best), PriorLaunches::of(&[1.21e-3]), synthetic(1.2e-3, 0.001)).unwrap();
        assert!(!s.raced && c.launches == 5, "{c:?}");
        let (s, _) = measure(&BenchOptions::default(), Some(&best), PriorLaunches::default(), synthetic(0.9e-3, 0.001)).unwrap();
        assert!(!s.raced);
    }

    #[test]
    fn a_verification_launch_alone_races_once_the_device_showed_its_excess() {
        let best = Stats::from_samples(&[1e-3, 1.001e-3, 0.999e-3, 1e-3, 1e-3], false);
        let opts = BenchOptions::default();
        let learned = |x: f64, launches: &'static [f64]| PriorLaunches { launches, settled: true, largest: Some(x) };
        // Nothing learned: 1.4× the best gets one warm launch before its race.
        let (s, c) = measure(&opts, Some(&best), PriorLaunches::of(&[1.4e-3]), synthetic(1.4e-3, 0.001)).unwrap();
        assert!(s.raced && c.warmup_launches == 1, "{c:?}");
        // Verification launches seen no slower than later ones: the bound is the settled one
        // times 1 + VERIFY_HICCUP (≈ 1.34× here), and 1.4× is raced with no launch.
        let (s, c) = measure(&opts, Some(&best), learned(1.0, &[1.4e-3]), synthetic(1.4e-3, 0.001)).unwrap();
        assert!(s.raced && c.warmup_launches == 0 && c.launches == 0 && s.samples == 1, "{s:?} {c:?}");
        // Within the allowance a warm launch still decides: 1.21× is raced once it confirms…
        let (s, c) = measure(&opts, Some(&best), learned(1.0, &[1.21e-3]), synthetic(1.2e-3, 0.001)).unwrap();
        assert!(s.raced && c.warmup_launches == 1, "{s:?} {c:?}");
        // …and a 21 % hiccup on a config as fast as the best does not race it.
        let (s, c) = measure(&opts, Some(&best), learned(1.0, &[1.21e-3]), synthetic(1.0e-3, 0.001)).unwrap();
        assert!(!s.raced && c.launches == 5, "{s:?} {c:?}");
        // A device whose verification launches ran up to 40 % slow races on none alone: a
        // config as fast as the best behind a slow verification launch is measured, and a slow
        // one raced after a warm launch.
        let (s, c) = measure(&opts, Some(&best), learned(1.4, &[1.4e-3]), synthetic(1.0e-3, 0.001)).unwrap();
        assert!(!s.raced && c.launches == 5, "{s:?} {c:?}");
        let (s, c) = measure(&opts, Some(&best), learned(1.4, &[1.6e-3]), synthetic(1.6e-3, 0.001)).unwrap();
        assert!(s.raced && c.warmup_launches == 1 && c.launches == 0, "{c:?}");
        // Racing off turns it off.
        let off = BenchOptions { racing: false, ..Default::default() };
        let (s, c) = measure(&off, Some(&best), learned(1.0, &[1.4e-3]), synthetic(1.4e-3, 0.001)).unwrap();
        assert!(!s.raced && c.launches == 5, "{c:?}");
    }

    #[test]
    fn verification_launches_race_each_other_only_where_they_exceed_later_ones_alike() {
        let opts = BenchOptions::default();
        // 1.02 × 1.02 × 1.05 × 1.25 ≈ 1.366× the fastest verification launch.
        assert!(races_on_fastest_verification(&opts, 1.4e-3, 1e-3, Some(1.0)));
        assert!(races_on_fastest_verification(&opts, 1.4e-3, 1e-3, Some(1.2)));
        assert!(!races_on_fastest_verification(&opts, 1.3e-3, 1e-3, Some(1.0)));
        // Nothing seen yet, or a device whose verification launches ran 2× and more the later
        // ones (a driver compiling at the first launch): no race on them.
        assert!(!races_on_fastest_verification(&opts, 1.4e-3, 1e-3, None));
        assert!(!races_on_fastest_verification(&opts, 40e-3, 1e-3, Some(2.0)));
        let off = BenchOptions { racing: false, ..Default::default() };
        assert!(!races_on_fastest_verification(&off, 1.4e-3, 1e-3, Some(1.0)));
        let mut seen = VerifyExcess::default();
        assert_eq!(seen.largest(), None);
        seen.observe(0.9e-3, 1e-3);
        assert_eq!(seen.largest(), Some(1.0), "a faster verification launch counts as 1");
        seen.observe(20e-3, 2.5e-3);
        assert_eq!(seen.largest(), Some(8.0));
    }

    #[test]
    fn the_verification_excess_is_the_largest_ratio_seen_and_settles_once_enough_were() {
        let mut x = VerifyExcess::default();
        for i in 0..VerifyExcess::MIN_SEEN - 1 {
            x.observe(1.0e-3 + i as f64 * 1e-6, 1.0e-3);
            assert!(!x.settled());
        }
        x.observe(f64::NAN, 1.0);
        x.observe(1.0, 0.0);
        assert!(!x.settled(), "unusable pairs are not observations");
        x.observe(1.1e-3, 1.0e-3);
        assert!(x.settled());
        assert!((x.largest().unwrap() - 1.1).abs() < 1e-12);
        let mut faster = VerifyExcess::default();
        (0..VerifyExcess::MIN_SEEN).for_each(|_| faster.observe(0.9, 1.0));
        assert_eq!(faster.largest(), Some(1.0), "a verification launch faster than later ones counts as no excess");
    }

    #[test]
    fn a_single_sample_round_trips_through_json() {
        let s = Stats::from_samples(&[1e-3], true);
        assert!(s.ci_half.is_infinite());
        let text = serde_json::to_string(&s).unwrap();
        assert!(text.contains("\"ci_half\":null"), "{text}");
        let back: Stats = serde_json::from_str(&text).unwrap();
        assert_eq!(back, s);
    }

    #[test]
    fn t_quantiles() {
        assert!((t_quantile_975(4) - 2.776).abs() < 1e-3);
        assert!((t_quantile_975(1000) - 1.962).abs() < 1e-3);
    }
}
