//! Plain settings a spec file (or code) sets for the later stages: benchmarking (`[bench]`),
//! pruning (`[prune]`), the search budget and the catalogue of strategy names. They are data
//! only; the stages that use them own the behaviour.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// How to measure one config. Defaults suit kernels from microseconds to tens of milliseconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BenchOptions {
    /// Fewest warm-up launches.
    pub warmup_min: u32,
    /// Most warm-up launches.
    pub warmup_max: u32,
    /// Warm-up ends once two successive launches differ by less than this fraction.
    pub warmup_stable: f64,
    /// Launches in the first measured batch (and the least any config gets, unless raced).
    pub min_reps: u32,
    /// Most measured launches per config.
    pub max_reps: u32,
    /// Stop once the 95 % confidence half-width is within this fraction of the mean.
    pub target_rel_ci: f64,
    /// Stop once this much kernel time (seconds) was spent measuring one config.
    pub max_seconds: f64,
    /// Flush the L2 cache before each timed launch.
    pub flush_l2: bool,
    /// Empty L2 by rotating copies of the arguments instead of a 2×L2 memset (CUDA, HIP; see
    /// docs/benchmarks.md, "Flushing L2"). Only with `flush_l2`.
    pub rotate_inputs: bool,
    /// The part of a config's time that changes from one measurement to the next beyond what
    /// one measurement's samples show (clock and memory state, the kernels before it), as a
    /// fraction of the mean. The reported 95 % interval is the samples' Student-t interval
    /// widened by it (added in quadrature); the stopping rule (`target_rel_ci`) uses the
    /// samples' interval alone, so it costs no launches.
    pub run_to_run: f64,
    /// Stop measuring a config once it is clearly slower than the best so far (see
    /// `measure::stats::measure` for the three points where a race is decided).
    pub racing: bool,
    /// Racing margin: a config is clearly slower when its interval's lower end exceeds the
    /// best's upper end by this fraction.
    pub race_margin: f64,
    /// Time limit for one launch; a kernel that takes longer is recorded as timed out.
    #[serde(with = "secs")]
    pub timeout: Duration,
    /// Configs within this fraction of the best (or within the combined confidence interval)
    /// are statistically tied; the tie is broken by a stable rule.
    pub tie_tolerance: f64,
}

mod secs {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;
    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let v = f64::deserialize(d)?;
        if !(v > 0.0 && v <= super::MAX_TIMEOUT_SECONDS) {
            return Err(serde::de::Error::custom(format!("timeout must be a number of seconds above 0 and at most {} (a day)", super::MAX_TIMEOUT_SECONDS)));
        }
        Ok(Duration::from_secs_f64(v))
    }
}

impl Default for BenchOptions {
    fn default() -> Self {
        BenchOptions {
            warmup_min: 1,
            warmup_max: 10,
            warmup_stable: 0.05,
            min_reps: 5,
            max_reps: 100,
            target_rel_ci: 0.01,
            max_seconds: 1.0,
            flush_l2: true,
            rotate_inputs: false,
            run_to_run: 0.01,
            racing: true,
            race_margin: 0.02,
            timeout: Duration::from_secs(5),
            tie_tolerance: 0.005,
        }
    }
}

/// The longest launch timeout accepted, in seconds (a day).
pub const MAX_TIMEOUT_SECONDS: f64 = 86_400.0;

impl BenchOptions {
    /// Checks that the settings make sense together: an error names the field (as in
    /// `[bench]`) and says what to do. Non-finite numbers, negative fractions and
    /// `min_reps > max_reps` are errors, never silently clamped.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        let fraction = |name: &'static str, v: f64, most: f64| {
            if v.is_finite() && (0.0..=most).contains(&v) {
                Ok(())
            } else {
                Err((name, format!("{v} is not a number between 0 and {most}")))
            }
        };
        fraction("warmup_stable", self.warmup_stable, 1.0)?;
        fraction("target_rel_ci", self.target_rel_ci, 1.0)?;
        fraction("race_margin", self.race_margin, 10.0)?;
        fraction("tie_tolerance", self.tie_tolerance, 1.0)?;
        fraction("run_to_run", self.run_to_run, 1.0)?;
        if !(self.max_seconds > 0.0 && self.max_seconds <= MAX_TIMEOUT_SECONDS) {
            return Err(("max_seconds", format!("{} is not a number of seconds above 0 and at most {MAX_TIMEOUT_SECONDS}", self.max_seconds)));
        }
        if self.min_reps == 0 {
            return Err(("min_reps", "must be at least 1".into()));
        }
        if self.min_reps > self.max_reps {
            return Err(("min_reps", format!("{} is more than max_reps ({}); make min_reps <= max_reps", self.min_reps, self.max_reps)));
        }
        if self.warmup_min > self.warmup_max {
            return Err(("warmup_min", format!("{} is more than warmup_max ({}); make warmup_min <= warmup_max", self.warmup_min, self.warmup_max)));
        }
        if self.timeout.is_zero() || self.timeout.as_secs_f64() > MAX_TIMEOUT_SECONDS {
            return Err(("timeout", format!("{:?} is not above 0 and at most a day", self.timeout)));
        }
        Ok(())
    }

    /// How timed launches empty L2.
    pub fn l2_flush(&self) -> crate::spec::settings::L2Flush {
        use crate::spec::settings::L2Flush;
        match (self.flush_l2, self.rotate_inputs) {
            (false, _) => L2Flush::Off,
            (true, false) => L2Flush::Memset,
            (true, true) => L2Flush::Rotate,
        }
    }
}

/// How a backend keeps the previous launch's data out of L2 before a timed launch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum L2Flush {
    /// Nothing: the launch may find its data in L2 (warm).
    Off,
    /// Write a buffer of twice the L2 size first (what Triton and nvbench do).
    #[default]
    Memset,
    /// Launch on the next of enough copies of the arguments to span twice the L2 size, so that
    /// nothing runs between launches (the copies start as the arguments' pristine data).
    Rotate,
}

/// Pruning thresholds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PruneOptions {
    /// Least resident blocks per SM a config must reach.
    pub min_occupancy: u32,
    /// A tile may be at most this many times the problem dimension.
    pub max_tile_ratio: f64,
    /// Most spilled (local-memory) bytes per thread a compiled config may have; `None` keeps
    /// every config regardless of spills.
    pub max_spill_bytes: Option<u64>,
}

impl PruneOptions {
    /// Checks the settings: an error names the field (as in `[prune]`).
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if !(self.max_tile_ratio.is_finite() && self.max_tile_ratio > 0.0) {
            return Err(("max_tile_ratio", format!("{} is not a positive number", self.max_tile_ratio)));
        }
        Ok(())
    }
}

impl Default for PruneOptions {
    fn default() -> Self {
        PruneOptions { min_occupancy: 1, max_tile_ratio: 2.0, max_spill_bytes: Some(1024) }
    }
}

/// The longest time budget accepted, in seconds (a year): beyond it a typo is likelier than
/// intent, and durations must stay representable.
pub const MAX_BUDGET_SECONDS: f64 = 365.0 * 24.0 * 3600.0;

/// Limits on a search. Any may be set; the first reached ends the search.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    /// Most configs evaluated (records from the database count).
    pub max_evals: Option<usize>,
    /// Most wall-clock seconds spent searching (finite, positive, at most
    /// [`MAX_BUDGET_SECONDS`]).
    pub max_seconds: Option<f64>,
    /// Stop once the strategy's model predicts nothing unevaluated beats the best so far by
    /// more than this fraction (model-guided strategies only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within: Option<f64>,
    /// Evaluate at most this fraction of the valid configs (T1's `ConfigurationFraction`),
    /// resolved once the space is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fraction: Option<f64>,
}

impl Budget {
    /// Parses `200` (evaluations), `30s`, `5m`, `2%` (stop within 2 % of the model's predicted
    /// optimum), `10%space` (a tenth of the valid configs), or several of them: `400,5m,2%`.
    pub fn parse(text: &str) -> Result<Budget, String> {
        let mut b = Budget::default();
        if text.split(',').all(|p| p.trim().is_empty()) {
            return Err(format!(
                "`{}` names no limit; give a count (200), a duration (30s, 5m), a percentage (2%) or a fraction of the space (10%space)",
                crate::spec::error::quote(text)
            ));
        }
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let shown = crate::spec::error::quote(part);
            let number = |s: &str, what: &str| -> Result<f64, String> {
                let x = s.trim().parse::<f64>().map_err(|_| {
                    // `5m30s`, `1h`: one unit only.
                    let hint = if what.ends_with("seconds") || what.ends_with("minutes") { "; give a duration in one unit, such as 330s or 5.5m" } else { "" };
                    format!("`{shown}` is not {what}{hint}")
                })?;
                if x.is_finite() && x > 0.0 {
                    Ok(x)
                } else {
                    Err(format!("`{shown}`: {what} must be a positive, finite number"))
                }
            };
            if let Some(p) = part.strip_suffix("%space") {
                let x = number(p, "a percentage of the space")?;
                if x > 100.0 {
                    return Err(format!("`{shown}`: a fraction of the space is at most 100%space"));
                }
                b.fraction = Some(x / 100.0);
            } else if let Some(p) = part.strip_suffix('%') {
                let x = number(p, "a percentage")?;
                if x >= 100.0 {
                    return Err(format!("`{shown}`: the percentage must be between 0 and 100 (exclusive)"));
                }
                b.within = Some(x / 100.0);
            } else if let Some(s) = part.strip_suffix('s') {
                b.max_seconds = Some(seconds(number(s, "a number of seconds")?, &shown)?);
            } else if let Some(m) = part.strip_suffix('m') {
                b.max_seconds = Some(seconds(60.0 * number(m, "a number of minutes")?, &shown)?);
            } else {
                let n = part.parse::<usize>().map_err(|_| {
                    format!("`{shown}` is neither a count (200), a duration (30s, 5m), a percentage (2%) nor a fraction of the space (10%space)")
                })?;
                if n == 0 {
                    return Err("a budget of 0 evaluations measures nothing; give at least 1".into());
                }
                b.max_evals = Some(n);
            }
        }
        Ok(b)
    }

    /// The evaluation limit for a space of `valid` configs: the count, the fraction, or both.
    pub fn max_evals_for(&self, valid: usize) -> Option<usize> {
        // The epsilon absorbs the rounding of percentages (0.1 × 290 = 29.000000000000004).
        let by_fraction = self.fraction.map(|f| ((f * valid as f64 - 1e-9).ceil() as usize).max(1));
        match (self.max_evals, by_fraction) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

fn seconds(x: f64, shown: &str) -> Result<f64, String> {
    if x > MAX_BUDGET_SECONDS {
        return Err(format!("`{shown}` is longer than a year; give a shorter time budget"));
    }
    Ok(x)
}

/// A search strategy kerntune has: its name, the other names it answers to (Kernel Tuner's
/// and T1's), and whether it has a model that can predict the optimum (which a `2%` budget
/// needs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StrategyName {
    /// The canonical name.
    pub name: &'static str,
    /// Other accepted spellings, compared after lower-casing and dropping `_`, `-` and spaces.
    pub aliases: &'static [&'static str],
    /// Whether it has a model to predict the optimum with.
    pub has_model: bool,
}

/// Every strategy, in the order reports and help texts list them.
pub const STRATEGIES: &[StrategyName] = &[
    StrategyName { name: "exhaustive", aliases: &["full", "fullsearch", "bruteforce"], has_model: false },
    StrategyName { name: "random", aliases: &["randomsample", "randomsearch"], has_model: false },
    StrategyName { name: "annealing", aliases: &["simulatedannealing"], has_model: false },
    StrategyName { name: "genetic", aliases: &["geneticalgorithm"], has_model: false },
    StrategyName { name: "local", aliases: &["localsearch", "greedy", "greedyils"], has_model: false },
    StrategyName { name: "model", aliases: &["modelguided", "bayes", "bayesian", "bayesianoptimization", "bayesopt"], has_model: true },
    StrategyName { name: "hybrid", aliases: &[], has_model: true },
    StrategyName { name: "transfer", aliases: &["fewshot", "prior", "priors"], has_model: false },
];

/// The strategy `name` means (any accepted spelling).
pub fn strategy_named(name: &str) -> Result<&'static StrategyName, String> {
    let norm: String = name.to_ascii_lowercase().chars().filter(|c| !matches!(c, '_' | '-' | ' ')).collect();
    STRATEGIES.iter().find(|s| s.name == norm || s.aliases.contains(&norm.as_str())).ok_or_else(|| {
        format!("unknown strategy `{}`; choose one of: {}", crate::spec::error::quote(name), STRATEGIES.iter().map(|s| s.name).collect::<Vec<_>>().join(", "))
    })
}

/// Reads a compile-tail setting (`[tune] compile_tail`, `--compile-tail`): a factor over the
/// median compile (greater than 1), or `off`. See [`crate::run::tail`].
pub fn parse_compile_tail(text: &str) -> Result<Option<f64>, String> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("off") {
        return Ok(None);
    }
    match t.parse::<f64>() {
        Ok(k) if k.is_finite() && k > 1.0 && k <= 1e6 => Ok(Some(k)),
        _ => Err(format!("`{}` is not a factor over the median compile greater than 1 (such as 3) or `off`", crate::spec::error::quote(t))),
    }
}

/// Reads a compile timeout (`[tune] compile_timeout`, `--compile-timeout`): a duration in
/// seconds (`120`, `120s`) or minutes (`2m`), or `off`. A compile still running after it is given
/// up on and its config counted as a failure of this tune (see [`crate::run::TuneOptions::compile_timeout`]).
pub fn parse_compile_timeout(text: &str) -> Result<Option<std::time::Duration>, String> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("off") {
        return Ok(None);
    }
    let (number, scale) = match (t.strip_suffix('s'), t.strip_suffix('m')) {
        (Some(s), _) => (s, 1.0),
        (None, Some(m)) => (m, 60.0),
        (None, None) => (t, 1.0),
    };
    match number.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 && x * scale <= MAX_TIMEOUT_SECONDS => Ok(Some(std::time::Duration::from_secs_f64(x * scale))),
        _ => Err(format!("`{}` is not a duration of at most a day (such as 120s or 2m) or `off`", crate::spec::error::quote(t))),
    }
}

/// Checks a strategy name against a budget: a `%` budget needs a strategy with a model.
pub fn check_strategy(name: &str, budget: &Budget) -> Result<&'static StrategyName, String> {
    let s = strategy_named(name)?;
    if let (Some(x), false) = (budget.within, s.has_model) {
        return Err(format!("a budget of {}% needs a strategy with a model to predict the optimum: `model` or `hybrid` (`{name}` has none)", x * 100.0));
    }
    Ok(s)
}

/// One part of a tune split over several processes or machines (`--shard K/N`, a Slurm array
/// task, a Kubernetes indexed job): shard `index` of `count`, from 0.
///
/// Problems are dealt out first: with at least as many problems as shards, shard K tunes the
/// problems K, K+N, K+2N, ... whole. With fewer, every problem gets a group of shards (shard K
/// works on problem K mod P) and the group splits that problem's configs
/// ([`Shard::assign`]); within a problem, exhaustive and random searches take a partition of
/// the candidates (by enumeration order, so the parts are disjoint and cover the space; the
/// default config joins every part as its reference, on top of its share of a budget), and
/// adaptive strategies run as a portfolio with a seed each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Shard {
    /// This shard, from 0.
    pub index: usize,
    /// How many shards there are.
    pub count: usize,
}

impl Shard {
    /// Parses `K/N` (0 ≤ K < N).
    pub fn parse(text: &str) -> Result<Shard, String> {
        let shown = crate::spec::error::quote(text);
        let (k, n) = text.split_once('/').ok_or_else(|| format!("`{shown}` is not K/N (e.g. 0/4: the first of four shards)"))?;
        let k: usize = k.trim().parse().map_err(|_| format!("`{shown}`: K is not a shard number"))?;
        let n: usize = n.trim().parse().map_err(|_| format!("`{shown}`: N is not a number of shards"))?;
        if n == 0 {
            return Err(format!("`{shown}`: there must be at least one shard (N ≥ 1)"));
        }
        if k >= n {
            return Err(format!("`{shown}`: shards are numbered from 0 to {} (K < N)", n - 1));
        }
        Ok(Shard { index: k, count: n })
    }

    /// What this shard does with `problems` problems: each problem it works on, with the part
    /// of that problem's configs it takes (`None`: all of them).
    pub fn assign(&self, problems: usize) -> Vec<(usize, Option<Shard>)> {
        if problems == 0 {
            return Vec::new();
        }
        if problems >= self.count {
            return (self.index..problems).step_by(self.count).map(|p| (p, None)).collect();
        }
        let p = self.index % problems;
        let parts = (self.count - p).div_ceil(problems);
        let part = self.index / problems;
        vec![(p, (parts > 1).then_some(Shard { index: part, count: parts }))]
    }

    /// Whether the candidate at enumeration position `order` belongs to this part.
    pub fn takes(&self, order: usize) -> bool {
        order % self.count == self.index
    }

    /// This part's share of an evaluation budget of `n` (the shares add up to `n`).
    pub fn share(&self, n: usize) -> usize {
        n / self.count + usize::from(self.index < n % self.count)
    }
}

impl std::str::FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Shard, String> {
        Shard::parse(s)
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compile_timeouts_parse() {
        use std::time::Duration;
        assert_eq!(parse_compile_timeout("120"), Ok(Some(Duration::from_secs(120))));
        assert_eq!(parse_compile_timeout("90s"), Ok(Some(Duration::from_secs(90))));
        assert_eq!(parse_compile_timeout(" 2m "), Ok(Some(Duration::from_secs(120))));
        assert_eq!(parse_compile_timeout("OFF"), Ok(None));
        for bad in ["0", "-3s", "2h", "ten", "2d", "nan"] {
            assert!(parse_compile_timeout(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn compile_tails_parse() {
        assert_eq!(parse_compile_tail("3"), Ok(Some(3.0)));
        assert_eq!(parse_compile_tail(" 2.5 "), Ok(Some(2.5)));
        assert_eq!(parse_compile_tail("OFF"), Ok(None));
        for bad in ["1", "0.5", "-3", "inf", "NaN", "", "three"] {
            let e = parse_compile_tail(bad).unwrap_err();
            assert!(e.contains("greater than 1") && e.contains("`off`"), "{bad}: {e}");
        }
    }

    #[test]
    fn budgets_parse() {
        assert_eq!(Budget::parse("200").unwrap(), Budget { max_evals: Some(200), ..Default::default() });
        assert_eq!(Budget::parse("30s").unwrap().max_seconds, Some(30.0));
        assert_eq!(Budget::parse("2m,50").unwrap(), Budget { max_evals: Some(50), max_seconds: Some(120.0), ..Default::default() });
        assert_eq!(Budget::parse("400, 2.5%").unwrap(), Budget { max_evals: Some(400), within: Some(0.025), ..Default::default() });
        assert_eq!(Budget::parse("10%space").unwrap().fraction, Some(0.1));
        assert_eq!(Budget::parse("10%space,20").unwrap().max_evals_for(1000), Some(20));
        assert_eq!(Budget::parse("10%space").unwrap().max_evals_for(290), Some(29));
        assert_eq!(Budget::parse("10%space").unwrap().max_evals_for(3), Some(1));
        for (bad, says) in [
            ("fast", "`fast`"),
            ("0%", "positive"),
            ("100%", "between 0 and 100"),
            ("x%", "not a percentage"),
            ("1e300s", "longer than a year"),
            ("infs", "positive, finite"),
            ("nans", "positive, finite"),
            ("-5s", "positive"),
            ("1e20m", "longer than a year"),
            ("150%space", "at most 100%space"),
        ] {
            let e = Budget::parse(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
        assert!(Budget::parse(&"9".repeat(5000)).unwrap_err().len() < 400, "long input is quoted short");
    }

    #[test]
    fn strategy_names() {
        assert_eq!(strategy_named("Simulated Annealing").unwrap().name, "annealing");
        assert_eq!(strategy_named("brute_force").unwrap().name, "exhaustive");
        assert!(strategy_named("quantum").unwrap_err().contains("choose one of: exhaustive, random"));
        assert!(check_strategy("genetic", &Budget::parse("2%").unwrap()).is_err());
        assert!(check_strategy("hybrid", &Budget::parse("2%").unwrap()).is_ok());
    }

    #[test]
    fn shards_partition_problems_and_configs() {
        let all = |n: usize, problems: usize| -> Vec<Vec<(usize, Option<Shard>)>> { (0..n).map(|k| Shard { index: k, count: n }.assign(problems)).collect() };
        // 50 shapes on 50 tasks: one each.
        assert!(all(50, 50).iter().enumerate().all(|(k, a)| *a == vec![(k, None)]));
        // 5 problems on 2 shards: dealt out whole.
        assert_eq!(all(2, 5), vec![vec![(0, None), (2, None), (4, None)], vec![(1, None), (3, None)]]);
        // 1 problem on 4 shards: each takes a quarter of its configs, and the quarters cover it once.
        let parts = all(4, 1);
        for (k, a) in parts.iter().enumerate() {
            assert_eq!(a, &vec![(0, Some(Shard { index: k, count: 4 }))]);
        }
        let taken: Vec<usize> = (0..103).map(|o| parts.iter().filter(|a| a[0].1.unwrap().takes(o)).count()).collect();
        assert!(taken.iter().all(|&c| c == 1));
        // 2 problems on 5 shards: problem 0 gets shards 0, 2, 4 (thirds), problem 1 shards 1, 3 (halves).
        assert_eq!(all(5, 2)[4], vec![(0, Some(Shard { index: 2, count: 3 }))]);
        assert_eq!(all(5, 2)[3], vec![(1, Some(Shard { index: 1, count: 2 }))]);
        // Budget shares add up.
        assert_eq!((0..3).map(|k| Shard { index: k, count: 3 }.share(100)).sum::<usize>(), 100);
        for bad in ["5/4", "0/0", "4/4", "x/2", "1", "-1/2"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(Shard::parse(" 3/4 ").unwrap(), Shard { index: 3, count: 4 });
    }

    #[test]
    fn budgets_that_name_nothing_are_refused() {
        for bad in [",,,", "", " , ", "0"] {
            assert!(Budget::parse(bad).is_err(), "{bad:?}");
        }
        // Two units in one duration: the message shows how to write it.
        let e = Budget::parse("5m30s").unwrap_err();
        assert_eq!(e, "`5m30s` is not a number of seconds; give a duration in one unit, such as 330s or 5.5m");
    }
}
