//! What a tune reports: progress events while it runs, each config's result, and the final
//! [`TuneReport`].

use crate::error::FailureKind;
use crate::measure::stats::Stats;
use crate::measure::timing::TimingMethod;
use crate::plan::prune::{PruneReason, ResourceUsage};
use crate::space::config::Config;
use crate::store::db::{EntryId, Measurement, Status, Trace};
use crate::target::Target;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// A progress event.
#[derive(Debug)]
pub enum Event<'a> {
    /// Planning finished.
    Planned {
        /// Valid configs in the space.
        valid: usize,
        /// Pruned before compiling.
        pruned: usize,
        /// Candidates the strategy may pick from.
        candidates: usize,
        /// Evaluation budget, if any.
        budget: Option<usize>,
        /// Time budget, if any.
        seconds: Option<f64>,
    },
    /// A config compiled.
    Compiled {
        /// The config.
        config: &'a Config,
        /// Compile seconds.
        seconds: f64,
    },
    /// The tune was asked to stop ([`crate::TuneOptions::cancel`]) and everything measured so
    /// far is written: a program may exit now, or wait for the compiles still running
    /// (`compiling`) to finish and the tune to return [`crate::Error::Interrupted`].
    Interrupted {
        /// Configs measured by this run (in the database, when there is one).
        kept: usize,
        /// Of them, those timed by their verification launch alone: they waited on the
        /// shortlist to be measured in full (the same tune run again measures the contenders
        /// among them in full before it picks).
        timed_once: usize,
        /// Compiles still running.
        compiling: usize,
        /// Whether the database holds them all; false where it could not be written (a full
        /// disk: a warning said where they were kept instead, [`crate::run::Unsaved`]).
        saved: bool,
    },
    /// Something the user should know while the tune goes on, in a line: the first configs
    /// compiled all failed with one error, which every config may share (a program may stop the
    /// tune, [`crate::TuneOptions::cancel`], and keep what was measured).
    Warning {
        /// What to say.
        message: &'a str,
    },
    /// A config ran once and its outputs were checked, and it waits on the shortlist to be
    /// measured in full (exhaustive and random search with racing): its [`Event::Result`] comes
    /// when it is measured, or when the tune stops. A progress display counts it as evaluated
    /// once.
    Verified {
        /// The config.
        config: &'a Config,
        /// Its verification launch, seconds.
        seconds: f64,
    },
    /// A config's result is final (measured, failed, pruned after compiling, or from the db).
    Result {
        /// The result.
        result: &'a ConfigResult,
        /// Best mean so far, seconds.
        best: Option<f64>,
    },
}

/// A progress callback.
pub type Observer = Arc<dyn Fn(&Event<'_>) + Send + Sync>;

/// What happened to one config.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum ResultOutcome {
    /// Verified and timed.
    Measured {
        /// Timing.
        stats: Stats,
    },
    /// Failed.
    Failed {
        /// Class.
        kind: FailureKind,
        /// Detail.
        message: String,
    },
    /// Pruned after compiling.
    Pruned {
        /// Why.
        reason: PruneReason,
    },
}

/// One config's result (read back from a `kerntune tune --json` report by
/// [`crate::store::foreign::entry`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConfigResult {
    /// The config.
    pub config: Config,
    /// Its outcome.
    #[serde(flatten)]
    pub outcome: ResultOutcome,
    /// Compiler resource report.
    pub usage: Option<ResourceUsage>,
    /// Taken from the database, not measured now.
    #[serde(default)]
    pub from_db: bool,
    /// FLOPs of one launch (from the job's formula).
    pub flops: Option<f64>,
    /// Bytes of one launch (from the job's formula).
    pub bytes: Option<f64>,
    /// Seconds its compile took on its compile thread (`None` for database records and
    /// compile-cache hits).
    pub compile_seconds: Option<f64>,
    /// Seconds a device spent evaluating it (verifying and measuring, or failing to) for the
    /// search (`None` for database records and configs no device ran).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eval_seconds: Option<f64>,
    /// The device (position in the tuner's list) that measured it, for a tune over several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<usize>,
    /// Its place in the order results came in (from 0), for this run's results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<usize>,
    /// Seconds from the start of the tune to its result, for this run's results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elapsed_s: Option<f64>,
    /// Whether its outputs were checked against the reference (`false`: the sample skipped it,
    /// or nothing is verified).
    #[serde(default)]
    pub verified: bool,
    /// Who proposed it, in a search that learns from priors: a tag of
    /// [`crate::search::proposer`] (`sources`, `favourite:A100`, `search:yardstick`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposed_by: Option<String>,
    /// Its compiles and device jobs in this run, in order (seconds from the tune's start): see
    /// [`crate::run::timeline`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spans: Vec<crate::store::db::Span>,
}

impl ConfigResult {
    /// One line for logs: the time with its interval, or the failure or pruning reason.
    pub fn summary_line(&self) -> String {
        match &self.outcome {
            ResultOutcome::Measured { stats } if stats.ci_half.is_finite() => {
                format!("{:.4} ms ± {:.4} ({} runs{})", stats.mean * 1e3, stats.ci_half * 1e3, stats.samples, if stats.raced { ", raced" } else { "" })
            }
            ResultOutcome::Measured { stats } => {
                format!(
                    "{:.4} ms ({} sample{}{})",
                    stats.mean * 1e3,
                    stats.samples,
                    if stats.samples == 1 { "" } else { "s" },
                    if stats.raced { ", raced" } else { "" }
                )
            }
            ResultOutcome::Failed { kind, message } => {
                // A message that names its kind already (`device lost: …`) is not prefixed twice.
                let first = message.lines().next().unwrap_or("");
                if first.starts_with(&format!("{kind}:")) {
                    first.to_string()
                } else {
                    format!("{kind}: {first}")
                }
            }
            ResultOutcome::Pruned { reason } => format!("pruned after compiling: {reason}"),
        }
    }

    /// The stats if measured.
    pub fn stats(&self) -> Option<&Stats> {
        match &self.outcome {
            ResultOutcome::Measured { stats } => Some(stats),
            _ => None,
        }
    }

    /// Its database record, as the tune that made it stores it: `run` the tune's start, `at`
    /// when it is stored, `device` as the record names it. `None` for a config pruned after
    /// compiling, which the database does not keep.
    pub fn measurement(&self, run: u64, at: u64, device: Option<usize>) -> Option<Measurement> {
        let status = match &self.outcome {
            ResultOutcome::Measured { stats } => Status::Ok { stats: stats.clone() },
            ResultOutcome::Failed { kind, message } => Status::Failed { failure: *kind, message: message.clone() },
            ResultOutcome::Pruned { .. } => return None,
        };
        let trace = Trace {
            run,
            seq: self.seq.unwrap_or(0),
            elapsed_s: self.elapsed_s.unwrap_or(0.0),
            compile_s: self.compile_seconds,
            eval_s: self.eval_seconds,
            device,
            by: self.proposed_by.clone(),
            spans: self.spans.clone(),
            shard: None,
        };
        let verified = Some(self.verified || !matches!(self.outcome, ResultOutcome::Measured { .. }));
        Some(Measurement {
            config: self.config.clone(),
            status,
            usage: self.usage.clone(),
            at,
            verified,
            trace: Some(trace),
            flops: self.flops,
            bytes: self.bytes,
        })
    }
}

pub use crate::store::db::WinnerMemcheck;

impl WinnerMemcheck {
    /// What the memory checker of backend `backend` said of `winner` (`None`: it has none),
    /// the allocation it names given by its buffer's name.
    pub(crate) fn of(winner: &Config, backend: &str, seen: Option<crate::backend::Memcheck>, prep: &crate::plan::Prepared) -> WinnerMemcheck {
        use crate::backend::Memcheck;
        let (verdict, line) = match seen {
            None => ("unavailable", format!("not run: the {backend} backend has no memory checker (kerntune runs CUDA's compute-sanitizer, and on wgpu its own guard words)")),
            Some(Memcheck::Clean { tool }) => ("clean", format!("{tool} ran the winner ({winner}) and saw no out-of-bounds access")),
            Some(Memcheck::Reported { tool, report }) => (
                "out of bounds",
                format!(
                    "the winner ({winner}) passed verification, but {}: it reads or writes memory past its buffers; fix the kernel or the buffers' sizes before relying on it",
                    crate::run::diagnose::name_allocation(&format!("{tool} reported: {report}"), prep)
                ),
            ),
            Some(Memcheck::Inconclusive(why)) => ("inconclusive", format!("the memory checker could not tell for the winner ({winner}): {why}")),
        };
        WinnerMemcheck { config: winner.key(), verdict: verdict.into(), line }
    }
}

/// The result of a tune.
#[derive(Clone, Debug, Serialize)]
pub struct TuneReport {
    /// The device.
    pub target: Target,
    /// The database entry.
    pub entry: EntryId,
    /// The winner came from the database; nothing was benchmarked.
    pub db_hit: bool,
    /// The winner.
    pub winner: Config,
    /// Its timing.
    pub winner_stats: Stats,
    /// Its FLOPs and bytes per launch, where known.
    pub winner_metrics: (Option<f64>, Option<f64>),
    /// Configs tied with the fastest, in tie-break order.
    pub tie_band: Vec<Config>,
    /// The rule of the tie-break order that picked the winner among them (`None` when it stands
    /// alone, and for a database hit: the entry does not keep it).
    pub tie_break: Option<crate::measure::select::TieBreak>,
    /// Every evaluated config (measured, failed, pruned after compiling), best first.
    pub results: Vec<ConfigResult>,
    /// Configs pruned before compiling, by category.
    pub pruned_before: BTreeMap<String, usize>,
    /// Configs pruned after compiling, by category.
    pub pruned_after: BTreeMap<String, usize>,
    /// Examples of pruning reasons (first per category), for reports.
    pub prune_examples: BTreeMap<String, String>,
    /// Failures by kind.
    pub failures: BTreeMap<String, usize>,
    /// Cartesian size of the space.
    pub cartesian: u128,
    /// Valid configs (restrictions satisfied); an estimate when `sampled`.
    pub valid: usize,
    /// The space was too large to enumerate: the candidates are a random sample sized by the
    /// budget, and `valid` is estimated from random draws.
    pub sampled: bool,
    /// Candidates after pruning (and top-k).
    pub candidates: usize,
    /// Configs evaluated (database records included).
    pub evaluated: usize,
    /// Configs taken from the database.
    pub from_db: usize,
    /// Compilations performed.
    pub compiled: usize,
    /// Compilations served by a persistent compile cache.
    pub compile_cache_hits: usize,
    /// Configs whose compile the compile cache answered with the compiler's earlier refusal
    /// (failed without compiling; not in `compiled`).
    pub compile_cache_refusals: usize,
    /// Seconds spent compiling, summed over threads.
    pub compile_seconds: f64,
    /// Compile threads.
    pub compile_threads: usize,
    /// Compile-parallel efficiency: compile seconds summed over threads ÷ (the tune's wall
    /// time × compile threads). 1.0 would mean every thread compiled for the whole tune.
    pub compile_efficiency: Option<f64>,
    /// Where the tune's time went: how busy each device was, why it waited, how full the
    /// compile threads were and what bound the tune (`None` for a database hit).
    pub time: Option<crate::run::timeline::Account>,
    /// Timing method.
    pub timing: TimingMethod,
    /// Strategy name.
    pub strategy: String,
    /// Where expected outputs came from.
    pub reference: String,
    /// When the tune started, in seconds since the Unix epoch: the run its records carry in the
    /// database (`kerntune report` draws a report's run from it). For a database hit, when the
    /// stored winner's tune ran.
    pub started: u64,
    /// What the measurements were made for (the space, the verification and the setup hashes a
    /// database entry keeps), so that `kerntune db merge REPORT.json` takes them in as the tune
    /// would have stored them. `None` in reports of earlier builds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<crate::store::db::Origin>,
    /// Where they were measured (kerntune's version, the host, the timing method, the backend's
    /// facts), as a database entry keeps it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub environment: Option<crate::store::db::Environment>,
    /// Wall-clock seconds of the whole tune.
    pub wall_seconds: f64,
    /// The tune was told to end early (SIGUSR1 or SIGUSR2, a scheduler's warning before its time
    /// limit; [`crate::run::TuneOptions::wrap_up`]) with configs and budget left: the winner is the
    /// best of what was measured, and is stored as partial (launches use it; the same tune goes
    /// on). For a database hit: the stored winner's tune ended so.
    pub ended_early: bool,
    /// Whether the default config was part of the candidates.
    pub default_included: bool,
    /// With `--shard`, where the default config is a candidate of the space but in another
    /// shard's part (so this one did not measure it): that shard's index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_in_shard: Option<usize>,
    /// The spec's default config (its `default` values, else each parameter's first), which the
    /// summary compares the winner with where this tune has its result.
    pub default: Config,
    /// The devices measured on, with what each did (one entry for a one-device tune).
    pub devices: Vec<DeviceReport>,
    /// Failures grouped by cause, most frequent first, each diagnosed once.
    pub causes: Vec<crate::run::diagnose::Cause>,
    /// Set when more than half of the verified configs disagreed with the reference: which
    /// parameter best tells agreeing from disagreeing configs, and what to do.
    pub disagreement: Option<crate::run::diagnose::Disagreement>,
    /// Why the tune stored its measurements but not its winner (the database's entry keeps no
    /// winner, so the next tune or launch does not take it): the reference is the likelier
    /// culprit of most configs' wrong outputs ([`crate::run::diagnose::Disagreement`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub winner_withheld: Option<String>,
    /// Set when the database could not be written at the tune's end (a full disk, say): why,
    /// and where its measurements and winner were kept instead.
    pub unsaved: Option<Unsaved>,
    /// What the plan and the search noted for the reader (an invalid default that was not run,
    /// the config the reference came from, a shard's part).
    pub notes: Vec<String>,
    /// This tune's part of a sharded one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::spec::settings::Shard>,
    /// What the tune learned from other devices' measurements, when it had any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prior: Option<PriorReport>,
    /// What the memory checker said of the winner (`--memcheck`), when asked for.
    pub memcheck: Option<WinnerMemcheck>,
    /// Configs measured twice in this tune (`--recheck`), when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recheck: Option<crate::run::Recheck>,
    /// What the search did about compiles far slower than the others (none when nothing was
    /// compiled).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compile_tail: Option<crate::run::CompileTail>,
    /// The device's peak rates, where known.
    pub peaks: Option<crate::plan::roofline::Peaks>,
    /// The winner's place on the roofline (needs the spec's `flops`/`bytes` formulas).
    pub roofline: Option<crate::plan::roofline::Position>,
}

impl TuneReport {
    /// The default config's result in this tune (measured, failed, or pruned after compiling),
    /// where the search evaluated it.
    pub fn default_result(&self) -> Option<&ConfigResult> {
        self.results.iter().find(|r| r.config == self.default)
    }
}

/// A tune's measurements that its database could not take (see [`TuneReport::unsaved`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Unsaved {
    /// The database.
    pub database: std::path::PathBuf,
    /// Why it could not be written.
    pub error: String,
    /// The measurements of this run it does not hold.
    pub measurements: usize,
    /// Whether the tune's winner is among what it does not hold (a tune stopped, or where
    /// nothing passed, has none; nor is one withheld stored).
    pub winner: bool,
    /// A kerntune database (JSON) holding them, and the winner, which `kerntune db merge` adds
    /// to the database once it can be written; `None` where no file could be written either.
    pub kept_in: Option<std::path::PathBuf>,
    /// Why they could not be kept in a file either.
    pub kept_error: Option<String>,
}

impl Unsaved {
    /// One line for a person: what was not written, where it went, and what to do.
    pub fn line(&self) -> String {
        let db = self.database.display();
        let n = self.measurements;
        let measured = if n == 1 { "measurement".to_string() } else { format!("{n} measurements") };
        let (them, are) = match (self.winner, n) {
            (true, _) => (format!("this tune's winner and its {measured}"), "are"),
            (false, 1) => (format!("this tune's {measured}"), "is"),
            (false, _) => (format!("this tune's {measured}"), "are"),
        };
        match (&self.kept_in, &self.kept_error) {
            (Some(f), _) => format!(
                "database {db} could not be written ({}): {them} {are} kept in {} instead; once the database can be written (free space where it is, say), `kerntune db merge {} --db {db}` adds them",
                self.error,
                f.display(),
                f.display()
            ),
            (None, why) => format!(
                "database {db} could not be written ({}), nor could {them} be kept in a file ({}): what is printed here is all that is left of them",
                self.error,
                why.as_deref().unwrap_or("no folder to write to")
            ),
        }
    }
}

/// What a tune's priors held (see [`crate::run::priors`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PriorReport {
    /// One line: `prior: 5 targets, 21,780 measurements (db)`.
    pub line: String,
    /// Devices learned from (other targets).
    pub targets: usize,
    /// This target's other problem sizes learned from (or this problem under another
    /// toolchain).
    pub problems_here: usize,
    /// Their measurements used.
    pub measurements: usize,
    /// Where they came from: `db`, or the files.
    pub from: String,
    /// What was left out, by reason.
    pub skipped: std::collections::BTreeMap<String, usize>,
    /// Sources refused whole, with why.
    pub refused: Vec<String>,
    /// Notes (another source hash, values outside the space, a file that could not be read).
    pub notes: Vec<String>,
    /// Seconds spent loading and lining them up.
    pub seconds: f64,
}

/// What one device did in a tune.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DeviceReport {
    /// Position in the tuner's device list.
    pub index: usize,
    /// The device's name (and its ordinal in the backend).
    pub name: String,
    /// Configs this device measured (final re-measurements included).
    pub measured: usize,
    /// Why the device was taken out of the tune, if it was.
    pub lost: Option<String>,
    /// Its times divided by the judging device's on the configs timed on both, and how many.
    pub ratio: Option<(f64, usize)>,
}

/// Failed configs counted by failure kind.
pub(crate) fn failure_counts<'a>(results: impl Iterator<Item = &'a ConfigResult>) -> BTreeMap<String, usize> {
    let mut failures = BTreeMap::new();
    for r in results {
        if let ResultOutcome::Failed { kind, .. } = &r.outcome {
            *failures.entry(kind.to_string()).or_default() += 1;
        }
    }
    failures
}

pub(crate) fn sorted(mut v: Vec<ConfigResult>) -> Vec<ConfigResult> {
    v.sort_by(|a, b| {
        let ka = a.stats().map(|s| s.mean).unwrap_or(f64::INFINITY);
        let kb = b.stats().map(|s| s.mean).unwrap_or(f64::INFINITY);
        ka.total_cmp(&kb).then_with(|| a.config.key().cmp(&b.config.key()))
    });
    v
}

pub(crate) fn to_result(m: &Measurement, from_db: bool, metrics: (Option<f64>, Option<f64>)) -> ConfigResult {
    let outcome = match &m.status {
        Status::Ok { stats } => ResultOutcome::Measured { stats: stats.clone() },
        Status::Failed { failure, message } => ResultOutcome::Failed { kind: *failure, message: message.clone() },
    };
    ConfigResult {
        config: m.config.clone(),
        outcome,
        usage: m.usage.clone(),
        from_db,
        flops: metrics.0,
        bytes: metrics.1,
        compile_seconds: None,
        eval_seconds: None,
        device: None,
        seq: None,
        elapsed_s: None,
        verified: m.verified.unwrap_or(true),
        proposed_by: None,
        spans: Vec::new(),
    }
}
