//! The winner database: every measured config, failures with reasons, and the winner, per
//! kernel × target × toolchain × problem key.
//!
//! # Storage
//! One SQLite file (`db.sqlite`; see [`Database::default_path`]), chosen over a JSON file and
//! over an append-only log: a tune's flush writes only its own rows (a 74 MB database is not
//! rewritten every few seconds), a database hit reads one entry through the primary key (a
//! hit stays in milliseconds at 100k entries), and SQLite's locking and journal make
//! concurrent writers and crashes safe without code of our own. Tables:
//! `meta(name, value)` (`schema` = `kerntune-db`, `layout` = [`SQLITE_LAYOUT`]),
//! `entries(key, header)` (the entry's JSON without its measurements) and
//! `measurements(entry, config, record, time)` (one JSON record per measured config, and its
//! mean time in seconds as a number, NULL for a failure: what priors read, without parsing a
//! record). A layout-2 file (before `time`) is upgraded in place on first open.
//!
//! # Interchange format (schema version 1)
//! `kerntune db export` and `db show --json` write, and `db merge` reads, the JSON form:
//! ```json
//! { "schema": "kerntune-db", "version": 1,
//!   "entries": { "<entry id>": {
//!       "kernel": "triad", "kernel_hash": "…", "target": "cuda-sm_90-nvidia-h200",
//!       "target_name": "NVIDIA H200", "toolchain": "nvrtc 12.8, driver 13.0",
//!       "problem": "n=268435456", "env": { … },
//!       "measurements": { "<config key>": { "config": …, "status": "ok", "stats": …,
//!                                          "usage": …, "at": 1763683200 } , … },
//!       "winner": { "config": "<config key>", "stats": …, "space": "<space hash>",
//!                   "verify": "<verification hash>", "tie_band": [ … ], "at": … } } } }
//! ```
//! A failed measurement has `"status": "failed"` with `failure` (kind) and `message`. A
//! database file in this JSON form (what earlier versions wrote) is read as it is and converted
//! to SQLite, atomically, on its first write.
//!
//! # Concurrency and durability
//! Every write is one immediate transaction that reads what is there and merges its change
//! into it: a measurement of a config already recorded keeps the better-sampled record
//! ([`Measurement`]'s preference), so concurrent processes never lose or degrade each other's
//! measurements. Processes tuning the same entry take a per-entry lock first
//! ([`Database::lock_entry`]): the second waits for the first and then finds its winner, so
//! they agree. The shards of a split tune measure different parts of the space and each takes
//! its own lock, so that one database can serve them all at once; their winners add up
//! ([`Entry::set_winner`]). A file that is neither SQLite nor a database in JSON is reported
//! and left untouched.

use crate::error::FailureKind;
use crate::measure::stats::Stats;
use crate::plan::prune::ResourceUsage;
use crate::space::config::Config;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::path::{Path, PathBuf};

/// How SQLite keeps a database's transactions safe ([`Database::journal`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Journal {
    /// The write-ahead log (`PRAGMA journal_mode=WAL`): readers do not wait for the writer, but
    /// every process must be on one host (its index is memory the processes share).
    Wal,
    /// The rollback journal (`PRAGMA journal_mode=DELETE`), which needs only the file system's
    /// locks: for a folder other hosts may share, where a write-ahead log's shared index is not
    /// shared and processes on two nodes can corrupt the database.
    Rollback,
}

impl Journal {
    fn mode(self) -> &'static str {
        match self {
            Journal::Wal => "WAL",
            Journal::Rollback => "DELETE",
        }
    }
}

/// The name of the file system `dir` is on when other hosts may share it (network and cluster
/// file systems, and FUSE, which many of them use); `None` for a local one, or where it cannot
/// be told (not Linux).
pub fn shared_file_system(dir: &Path) -> Option<&'static str> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
        // SAFETY: statfs writes into the zeroed struct of the right type; the path is a valid C string.
        let mut st: libc::statfs = unsafe { std::mem::zeroed() };
        if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
            return None;
        }
        // `f_type` is a C long: a magic number above 2^31 reads negative where a long is 32 bits.
        shared_by_magic((st.f_type as u64) & 0xFFFF_FFFF)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = dir;
        None
    }
}

/// [`shared_file_system`] by the file system's magic number (`statfs`'s `f_type`, linux/magic.h
/// and the file systems' own headers).
fn shared_by_magic(magic: u64) -> Option<&'static str> {
    Some(match magic {
        0x6969 => "NFS",
        0xFF53_4D42 | 0xFE53_4D42 | 0x517B => "SMB",
        0x0BD0_0BD0 => "Lustre",
        0x4750_4653 => "GPFS",
        0x1983_0326 => "BeeGFS",
        0x00C3_6400 => "CephFS",
        0x5346_414F => "AFS",
        0x0102_1997 => "9p",
        0x7461_636F => "OCFS2",
        0x0116_1970 => "GFS2",
        0xAAD7_AAEA => "PanFS",
        0x6573_5546 => "FUSE",
        _ => return None,
    })
}

/// Schema version written by this build; older versions are refused with a message.
pub const SCHEMA_VERSION: u32 = 1;
const SCHEMA_NAME: &str = "kerntune-db";

/// Database errors.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// Reading, writing or locking failed.
    #[error("database {path}: {action} failed: {error}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What was being done.
        action: &'static str,
        /// The OS error (in this error's text, so not its `source()`).
        error: std::io::Error,
    },
    /// The file is not a valid database. It is left untouched.
    #[error("database {path} is corrupt ({detail}); it was left untouched — move it aside or run `kerntune db clear --db {path}` to start over")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What the parser said.
        detail: String,
    },
    /// The file is no kerntune database (JSON of something else, or no JSON), nor another
    /// tuner's results: it is left untouched, and never called a damaged database to clear (it
    /// may be any file of the user's).
    #[error("{path} is not a kerntune database ({detail}); it was left untouched: give --db a kerntune database file, or a path where one is to be made")]
    NotOurs {
        /// The file.
        path: PathBuf,
        /// What it is.
        detail: String,
    },
    /// The path is a folder (`--db results/`): a database is a file.
    #[error("{path} is a folder; name a database file in it (such as {})", path.join("db.sqlite").display())]
    Folder {
        /// The folder.
        path: PathBuf,
    },
    /// The file is another tuner's results (a Kernel Tuner cache, a T4 file), not a database.
    /// It is left untouched.
    #[error("{path} is {kind}, not a kerntune database; it was left untouched: {}, and give --db a kerntune database file", foreign_uses(path))]
    Foreign {
        /// The file.
        path: PathBuf,
        /// What it is: `a Kernel Tuner cache`, `a T4 results file`.
        kind: &'static str,
    },
    /// The file has a schema this build does not read.
    #[error("database {path} has format version {found}, this kerntune reads version {expected}; use a matching kerntune, or export the entries with it and clear the file")]
    Version {
        /// The file.
        path: PathBuf,
        /// The version found.
        found: u32,
        /// The version this build reads.
        expected: u32,
    },
}

/// Identity of a database entry: everything a winner's validity depends on.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct EntryId {
    /// Kernel entry-point name.
    pub kernel: String,
    /// Hash of the source and of every option that changes the binary.
    pub kernel_hash: String,
    /// Target fingerprint.
    pub target: String,
    /// Compiler and driver versions.
    pub toolchain: String,
    /// Problem key text.
    pub problem: String,
}

impl EntryId {
    /// The kernel and its problem, as messages name them: `triad (N=1048576)`, or the kernel
    /// alone where the problem has no sizes (a T1 spec's).
    pub fn label(&self) -> String {
        if self.problem.is_empty() {
            self.kernel.clone()
        } else {
            format!("{} ({})", self.kernel, self.problem)
        }
    }

    /// The map key: fields joined by `|`.
    pub fn key(&self) -> String {
        format!("{}|{}|{}|{}|{}", self.kernel, self.kernel_hash, self.target, self.toolchain, self.problem)
    }

    /// The order entries are listed in (`db show`, a report's entries): by kernel, target and
    /// problem, sizes in numeric order (`n=65536` before `n=1048576`; the map's key order put
    /// them the other way, and a source's hash before its target), then source and toolchain.
    pub fn listed_cmp(&self, other: &EntryId) -> std::cmp::Ordering {
        (self.kernel.as_str(), self.target.as_str())
            .cmp(&(other.kernel.as_str(), other.target.as_str()))
            .then_with(|| problem_cmp(&self.problem, &other.problem))
            .then_with(|| (self.kernel_hash.as_str(), self.toolchain.as_str()).cmp(&(other.kernel_hash.as_str(), other.toolchain.as_str())))
    }
}

/// Problem keys (`M=1024,N=4096`) compared size by size: names as text, values as numbers where
/// both are.
pub fn problem_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    fn fields(k: &str) -> Vec<(&str, &str)> {
        k.split(',').map(|f| f.split_once('=').unwrap_or((f, ""))).collect()
    }
    let (x, y) = (fields(a), fields(b));
    for ((na, va), (nb, vb)) in x.iter().zip(&y) {
        let o = na.cmp(nb).then_with(|| crate::spec::value::natural_cmp(va, vb));
        if o.is_ne() {
            return o;
        }
    }
    x.len().cmp(&y.len()).then_with(|| a.cmp(b))
}

/// Whether a measurement succeeded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Status {
    /// Verified and timed.
    Ok {
        /// Timing statistics.
        stats: Stats,
    },
    /// Failed; never retried unless the entry is cleared.
    Failed {
        /// Failure class.
        failure: FailureKind,
        /// The backend's message (compiler log, verification detail, ...).
        message: String,
    },
}

/// One config's record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// The config.
    pub config: Config,
    /// What happened.
    #[serde(flatten)]
    pub status: Status,
    /// Resources the compiler reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<ResourceUsage>,
    /// Seconds since the Unix epoch.
    pub at: u64,
    /// Whether its outputs were checked (absent in older records: they always were).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified: Option<bool>,
    /// Where it stands in the tune that measured it (for reports: the search trace, compile
    /// times, devices). Absent in older records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<Trace>,
    /// FLOPs of one launch, by the spec's formula (absent without one, and in older records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flops: Option<f64>,
    /// DRAM bytes of one launch, by the spec's formula (absent without one, and in older records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<f64>,
}

/// Where a measurement stands in the tune that made it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    /// When that tune started (seconds since the Unix epoch): measurements of one run share it.
    pub run: u64,
    /// Its place among that run's results, from 0.
    pub seq: usize,
    /// Seconds from the start of the run to this result.
    pub elapsed_s: f64,
    /// Seconds its compile took, where it was compiled in that run (not read from the compile
    /// cache).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compile_s: Option<f64>,
    /// Seconds a device spent evaluating it (verifying and measuring, or failing to) in that
    /// run. Absent in older records, and for failures in those before 2026-12-06.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eval_s: Option<f64>,
    /// The device that measured it, when the run had several (position in its list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<usize>,
    /// Who proposed it, where the run's search learned from priors (a tag of
    /// [`crate::search::proposer`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// When it was compiled and when a device worked on it in that run, in order: where the
    /// run's time went ([`crate::run::timeline`]). Absent in older records.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spans: Vec<Span>,
    /// The shard of a split tune that made it (`--shard K/N`): the shards of a job array start
    /// in the same second, so `run` alone does not tell their runs apart once merged. Absent
    /// for a run of the whole space (and in older records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::spec::settings::Shard>,
}

/// A stretch of a tune's time spent on one config: its compile on a compile thread, or a job a
/// device ran for it. Seconds from the start of the run, to the millisecond.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Span {
    /// What it was.
    pub what: SpanKind,
    /// The device (position in the run's device list) for a device's job; absent for a compile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<usize>,
    /// When it began.
    pub from_s: f64,
    /// When it ended.
    pub to_s: f64,
}

/// What a [`Span`] was.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum SpanKind {
    /// Compiled (or failed to) on a compile thread.
    Compile,
    /// Read from the compile cache (the binary, or the compiler's earlier refusal).
    Cached,
    /// Launched once to make the expected outputs (a reference config).
    Reference,
    /// Verified and measured for the search (or raced, or failed there).
    Measure,
    /// Verified only: its verification launch, shortlisted, or a deferred verification.
    Verify,
    /// Timed on another device to learn that device's speed.
    Calibrate,
    /// Measured again in the final round.
    Final,
    /// Run under the backend's memory checker.
    Memcheck,
    /// Measured again after the final round, to check its interval (`--recheck`).
    Recheck,
    /// A kind a newer kerntune wrote, read by this one.
    #[serde(other)]
    Other,
}

impl SpanKind {
    /// Whether a device ran it (not a compile thread).
    pub fn on_device(self) -> bool {
        !matches!(self, SpanKind::Compile | SpanKind::Cached)
    }
}

impl Span {
    /// A span of `seconds` that began at `from_s`, both rounded to the millisecond (what the
    /// database keeps).
    pub fn new(what: SpanKind, device: Option<usize>, from_s: f64, seconds: f64) -> Span {
        let ms = |s: f64| (s.max(0.0) * 1e3).round() / 1e3;
        Span { what, device, from_s: ms(from_s), to_s: ms(from_s + seconds.max(0.0)) }
    }

    /// Its length in seconds.
    pub fn seconds(&self) -> f64 {
        (self.to_s - self.from_s).max(0.0)
    }
}

impl Measurement {
    /// A success measured at `at` (seconds since the Unix epoch), with nothing else recorded
    /// (no resource usage, trace or work formulas): what benches and tests that fill a database
    /// need.
    pub fn timed(config: Config, stats: Stats, at: u64) -> Measurement {
        Measurement { config, status: Status::Ok { stats }, usage: None, at, verified: None, trace: None, flops: None, bytes: None }
    }

    /// The stats, when it succeeded.
    pub fn stats(&self) -> Option<&Stats> {
        match &self.status {
            Status::Ok { stats } => Some(stats),
            Status::Failed { .. } => None,
        }
    }

    /// Deterministic preference between two records of one config (used by merge): success
    /// over failure, then more samples, then lower mean, then newer, then text order.
    fn preferred<'a>(a: &'a Measurement, b: &'a Measurement) -> &'a Measurement {
        use std::cmp::Ordering;
        let rank = |m: &Measurement| match &m.status {
            Status::Ok { stats } => (1, stats.samples),
            Status::Failed { .. } => (0, 0),
        };
        let ord = rank(a)
            .cmp(&rank(b))
            .then_with(|| match (a.stats(), b.stats()) {
                (Some(x), Some(y)) => y.mean.total_cmp(&x.mean),
                _ => Ordering::Equal,
            })
            .then(a.at.cmp(&b.at))
            .then_with(|| serde_json::to_string(b).unwrap_or_default().cmp(&serde_json::to_string(a).unwrap_or_default()));
        if ord == Ordering::Less {
            b
        } else {
            a
        }
    }
}

/// The chosen config of an entry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Winner {
    /// The winner's config key (as in `measurements`).
    pub config: String,
    /// Its timing.
    pub stats: Stats,
    /// Hash of the search space it was chosen from; a different space re-selects.
    pub space: String,
    /// Hash of the verification settings it passed.
    pub verify: String,
    /// Config keys tied with the fastest, in tie-break order.
    pub tie_band: Vec<String>,
    /// Seconds since the Unix epoch.
    pub at: u64,
    /// The spec's default config key, where it was a candidate (for reports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Chosen by a tune that was ended early (SIGUSR1/SIGUSR2, [`crate::TuneOptions::wrap_up`]):
    /// launches use it, but it answers no tune, which goes on from the measurements instead.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
}

impl Winner {
    /// The faster of two winners (by mean; ties by config, then by time of choosing): the same
    /// whichever is `a`.
    pub fn better(a: Winner, b: Winner) -> Winner {
        let a_first = a.stats.mean.total_cmp(&b.stats.mean).then(a.config.cmp(&b.config)).then(a.at.cmp(&b.at)).is_le();
        if a_first {
            a
        } else {
            b
        }
    }
}

/// Facts about where the entry was measured.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    /// kerntune version.
    pub kerntune: String,
    /// Host name.
    pub host: String,
    /// Timing method.
    pub timing: String,
    /// Free-form backend facts (driver, adapter).
    #[serde(default)]
    pub details: BTreeMap<String, String>,
}

/// One kernel × target × toolchain × problem.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// Its identity.
    #[serde(flatten)]
    pub id: EntryId,
    /// Human target name.
    pub target_name: String,
    /// Environment.
    pub env: Environment,
    /// Every measured config by key.
    pub measurements: BTreeMap<String, Measurement>,
    /// The winner, once a tune finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub winner: Option<Winner>,
    /// What the measurements were made for: the search space and verification they belong to,
    /// and the shard of a split tune. Merging shards of different spaces is refused by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<Origin>,
    /// What the tunes that measured the entry said about their search, oldest first (the
    /// newest [`RUN_NOTES`]). Absent in older records.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<RunNote>,
}

/// Run notes an entry keeps (the newest).
pub const RUN_NOTES: usize = 64;

/// What one tune of an entry said about its search, for reports: the strategy, what it learned
/// from and how its proposals went. Its measurements' traces carry the same `run`.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct RunNote {
    /// When the tune started (seconds since the Unix epoch; [`Trace::run`]).
    pub run: u64,
    /// The strategy it ran.
    pub strategy: String,
    /// What it learned from (`prior: 5 targets, 21,780 measurements (db)`), when it had priors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prior: Option<String>,
    /// The search's own line on how it went (the transfer search: its proposals, by who made
    /// them and why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<String>,
    /// What the tune found out about its failures, one finding per line, each after its kind
    /// (`device lost: the launch runs … past \`in\` …`, the memory checker's report, the
    /// launch limit against the times measured): what its summary said under each cause, for
    /// the report (a tune whose every config failed leaves nothing else).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<String>,
    /// How it verified outputs, in a line ([`crate::spec::job::Verification::in_full`], with
    /// the config whose outputs were the reference): `default config (bx=256); partial by its
    /// sum; atol 1e-2, rtol 1e-5`, or `none`. Absent in notes of older kerntunes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification: Option<String>,
    /// What the memory checker said of the run's winner (`--memcheck`); absent where it was
    /// not asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memcheck: Option<WinnerMemcheck>,
    /// How long the run took and what it ran on, for the account of where its time went
    /// ([`crate::run::timeline`]). Absent in notes of older kerntunes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<RunTime>,
    /// Why the run stored no winner, where it withheld one (its reference the likelier culprit
    /// of most configs' wrong outputs): what `db show` and the report say in its place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub winner_withheld: Option<String>,
    /// The time limit (`--budget 30s`), in milliseconds, that stopped the run's search with
    /// configs and evaluations left: a later tune given more time searches on from its
    /// measurements rather than answering from its winner. Absent where the run ended
    /// otherwise (and in notes of older kerntunes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_limit_ms: Option<u64>,
    /// The shard of a split tune the run was (`--shard K/N`): what tells a merged entry's runs
    /// apart in the report. Absent for a run of the whole space (and in older notes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::spec::settings::Shard>,
}

/// A run's length and what it ran on, in milliseconds: with its measurements' [`Span`]s, where
/// its time went.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct RunTime {
    /// From its start to its end (or to its last write, for a run that did not finish).
    pub wall_ms: u64,
    /// Compile threads it ran.
    pub compile_threads: u32,
    /// Devices it measured on.
    pub devices: u32,
    /// When the expected outputs were computed on the CPU, where they were (from, to).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_ms: Option<(u64, u64)>,
    /// Compiles of configs it kept no record of (pruned after compiling, compiles given up on or
    /// stopped), and their milliseconds summed: time the spans do not show.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unrecorded_compiles: u32,
    /// Their milliseconds summed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unrecorded_compile_ms: u64,
    /// When they ran (from, to), merged where they overlap: a device that waited then waited
    /// for them (a compile still running at the time limit, say, was given up on unrecorded).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unrecorded_spans_ms: Vec<(u64, u64)>,
    /// Compiler processes the out-of-memory killer ended while compiling (each config compiled
    /// again, with fewer beside it).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub compiles_killed_for_memory: u32,
    /// Milliseconds compile starts were held for memory (see [`crate::compiler::memory`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub memory_held_ms: u64,
}

/// Whether `x` is its type's default (zero): for `skip_serializing_if`.
pub(crate) fn is_zero<T: Default + PartialEq>(x: &T) -> bool {
    *x == T::default()
}

/// What the memory checker said of a tune's winner ([`crate::run::TuneOptions::memcheck`]):
/// in the tune's report, and kept with its run ([`RunNote::memcheck`]).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct WinnerMemcheck {
    /// The config it ran, the winner, by its key (as [`Winner::config`]).
    pub config: String,
    /// `clean`, `out of bounds` (it reported an access), `inconclusive` (it could not tell),
    /// or `unavailable` (the backend has no memory checker).
    pub verdict: String,
    /// What it said, as the summary prints it.
    pub line: String,
}

impl WinnerMemcheck {
    /// Whether the checker reported an access the winner should not make.
    pub fn out_of_bounds(&self) -> bool {
        self.verdict == "out of bounds"
    }
}

/// [`RunNote::strategy`] of a run that measured listed configs and searched nothing
/// ([`crate::run::TuneOptions::only`]: `kerntune confirm`'s).
pub const LISTED: &str = "listed";

impl RunNote {
    /// Whether the run measured listed configs and searched nothing ([`LISTED`]).
    pub fn listed(&self) -> bool {
        self.strategy == LISTED
    }

    /// Whether the memory checker reported the run's winner reading or writing past its
    /// buffers (see [`RunNote::memcheck`]).
    pub fn winner_out_of_bounds(&self) -> bool {
        self.memcheck.as_ref().is_some_and(WinnerMemcheck::out_of_bounds)
    }

    /// Whether the run checked no output (tuned with reference `none`), as its
    /// [`RunNote::verification`] line says; `false` where it says nothing (older notes).
    pub fn unverified(&self) -> bool {
        self.verification.as_deref() == Some(crate::spec::job::Reference::None.describe().as_str())
    }
}

/// The parts of an [`Origin::setup`] compared by hash (the tune's words for one that changed,
/// and `db merge`'s for shards that differ in it); the launch timeout ([`SETUP_TIMEOUT`]) and
/// the compile timeout ([`SETUP_COMPILE_TIMEOUT`]) are compared by value.
pub const SETUP_PARTS: &[(&str, &str, &str)] = &[
    ("args", "the arguments", "arguments"),
    ("launch", "the launch geometry", "launch geometries"),
    ("defines", "the defines (size_defines, compat)", "defines (size_defines, compat)"),
    ("verify", "the verification", "verifications"),
    ("flush", "the L2 flushing", "L2 flushing settings"),
];

/// The key of the launch timeout in an [`Origin::setup`]: its value in seconds.
pub const SETUP_TIMEOUT: &str = "timeout";

/// The key of the compile timeout in an [`Origin::setup`]: its value in seconds, or `off`.
pub const SETUP_COMPILE_TIMEOUT: &str = "compile_timeout";

/// What an entry's measurements were made for (see [`Entry::origin`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Origin {
    /// Hash of the search space.
    pub space: String,
    /// Hash of the verification.
    pub verify: String,
    /// The shard that measured them, for a split tune; for an entry merged from some but not
    /// all shards of one, the first of them (the others in `merged`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::spec::settings::Shard>,
    /// The other shards of the same split merged into this entry (their indices), when it holds
    /// some but not all of them. Merging every shard makes the entry whole (`shard` empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged: Vec<usize>,
    /// What the measurements depend on beyond the entry's id, part by part (a hash of the
    /// arguments, of the launch geometry, of the verification …, and the launch timeout): a
    /// later tune whose parts differ measures again (`run::stale`). Empty in entries stored
    /// before it was recorded.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub setup: BTreeMap<String, String>,
}

/// Which of a split's `count` shards `have` holds and which are missing (`shard 0/3 only; 1/3,
/// 2/3 not merged`), or `None` when it holds every one.
/// With many shards each list is cut short: its first six, `…`, its last, and how many in all
/// (`0/400, 3/400, 4/400, 5/400, 6/400, 7/400, …, 399/400 (398 in all)`).
pub fn shards_part(have: &std::collections::BTreeSet<usize>, count: usize) -> Option<String> {
    let listed = |ks: Vec<usize>| -> String {
        let name = |k: &usize| format!("{k}/{count}");
        match ks.len() {
            n if n <= 8 => ks.iter().map(name).collect::<Vec<_>>().join(", "),
            n => format!("{}, …, {} ({n} in all)", ks[..6].iter().map(name).collect::<Vec<_>>().join(", "), name(&ks[n - 1])),
        }
    };
    let missing: Vec<usize> = (0..count).filter(|k| !have.contains(k)).collect();
    (!missing.is_empty()).then(|| format!("shard {} only; {} not merged", listed(have.iter().copied().collect()), listed(missing)))
}

impl Origin {
    /// The shards of a split tune this entry's measurements come from (their indices, and how
    /// many shards the split has), or `None` when they come from a whole tune.
    pub fn shards(&self) -> Option<(std::collections::BTreeSet<usize>, usize)> {
        let first = self.shard?;
        Some((std::iter::once(first.index).chain(self.merged.iter().copied()).collect(), first.count))
    }

    /// Which shards these measurements come from and which are missing, when they are part of
    /// a split tune: `shard 0/3 only; 1/3, 2/3 not merged`.
    pub fn part(&self) -> Option<String> {
        let (have, count) = self.shards()?;
        shards_part(&have, count)
    }

    /// Whether these measurements are exactly those of `shard`'s tune (`None`: a whole tune).
    pub fn is_of(&self, shard: Option<crate::spec::settings::Shard>) -> bool {
        self.shard == shard && self.merged.is_empty()
    }

    /// Marks these measurements as those of shards `have` of a split into `count` (whole when
    /// `have` holds every shard).
    pub fn set_shards(&mut self, have: &std::collections::BTreeSet<usize>, count: usize) {
        let mut all = have.iter().copied().filter(|&k| k < count);
        let whole = (0..count).all(|k| have.contains(&k));
        self.shard = all.next().filter(|_| !whole).map(|index| crate::spec::settings::Shard { index, count });
        self.merged = if self.shard.is_some() { all.collect() } else { Vec::new() };
    }

    /// Whether the tune of shard `other` adds to these measurements rather than replacing
    /// them: both from one spec (space and verification), and these the whole space's or
    /// other shards of the same split (not exactly `other`'s own).
    fn takes_in(&self, other: &Origin) -> bool {
        let Some((_, count)) = other.shards() else { return false };
        self.space == other.space
            && self.verify == other.verify
            && self.same_setup(other)
            && match self.shards() {
                None => true,
                Some((_, n)) => n == count && !self.is_of(other.shard),
            }
    }

    /// Whether both were measured with the same arguments, launch, defines, verification and
    /// L2 flushing, as far as both record them (the launch timeout may differ).
    pub fn same_setup(&self, other: &Origin) -> bool {
        self.setup_difference(other).is_none()
    }

    /// The first part of the setup both record and that differs ([`SETUP_PARTS`]: `args`,
    /// `launch`, …), leaving out the launch timeout.
    pub fn setup_difference(&self, other: &Origin) -> Option<&'static (&'static str, &'static str, &'static str)> {
        self.setup.iter().filter(|(k, v)| other.setup.get(*k).is_some_and(|w| w != *v)).find_map(|(k, _)| SETUP_PARTS.iter().find(|p| p.0 == k))
    }

    /// Adds `other`'s shards to these: the union of two parts of one split, whole once every
    /// shard is in (or when either is whole, or they are parts of splits into different counts,
    /// which do not add up to parts of one).
    fn join(&mut self, other: &Origin) {
        match (self.shards(), other.shards()) {
            (Some((mut mine, n)), Some((theirs, m))) if n == m => {
                mine.extend(theirs);
                self.set_shards(&mine, n);
            }
            _ => self.set_shards(&Default::default(), 0),
        }
    }
}

impl Entry {
    /// An empty entry.
    pub fn new(id: EntryId, target_name: String, env: Environment) -> Entry {
        Entry { id, target_name, env, measurements: BTreeMap::new(), winner: None, origin: None, runs: Vec::new() }
    }

    /// Adds the notes of `runs` to the entry's, one per run, oldest first, keeping the newest
    /// [`RUN_NOTES`]. Of two notes of one run (a note written with the run's measurements, and
    /// again with its findings) the greater is kept, so that merging gives the same whichever
    /// side is merged into the other.
    pub fn note_runs<'n>(&mut self, runs: impl IntoIterator<Item = &'n RunNote>) {
        self.runs.extend(runs.into_iter().cloned());
        self.runs.sort();
        self.runs.reverse();
        // One note per run; the shards of a split started in the same second are runs apart.
        self.runs.dedup_by(|later, kept| (later.run, later.shard) == (kept.run, kept.shard));
        self.runs.reverse();
        let extra = self.runs.len().saturating_sub(RUN_NOTES);
        self.runs.drain(..extra);
    }

    /// Records a measurement, keeping the better-sampled record when the config was measured
    /// before (another process, an earlier run): a measurement is never replaced by a worse one.
    pub fn record(&mut self, key: String, m: Measurement) {
        let keep = match self.measurements.get(&key) {
            Some(mine) => Measurement::preferred(mine, &m).clone(),
            None => m,
        };
        self.measurements.insert(key, keep);
    }

    /// Merges `other` into `self` deterministically (commutative for the measurements and the
    /// winner: the result does not depend on which side is `self`).
    pub fn merge(&mut self, other: &Entry) {
        for (k, m) in &other.measurements {
            let keep = match self.measurements.get(k) {
                Some(mine) => Measurement::preferred(mine, m).clone(),
                None => m.clone(),
            };
            self.measurements.insert(k.clone(), keep);
        }
        self.winner = match (self.winner.take(), other.winner.clone()) {
            (Some(a), Some(b)) => Some(Winner::better(a, b)),
            (a, b) => a.or(b),
        };
        if self.env.host.is_empty() || (other.env.host < self.env.host && !other.env.host.is_empty()) {
            self.env = other.env.clone();
        }
        // Merged shards stand for the union of their parts, and every shard makes a whole.
        self.origin = match (self.origin.take(), &other.origin) {
            (Some(mut a), Some(b)) => {
                a.join(b);
                if a.setup.is_empty() {
                    a.setup = b.setup.clone();
                }
                Some(a)
            }
            (a, b) => a.or_else(|| b.clone()),
        };
        self.note_runs(&other.runs);
    }

    /// Stores the winner of a tune of `origin`, and `origin` with it. A shard's tune into an
    /// entry whose winner another shard of the same split chose (one database shared by a
    /// split's shards) adds its part, as `kerntune db merge` of the two shards' files would:
    /// the entry holds both shards (whole once it holds every one) and its winner is the
    /// better of the two. A shard finishing after a tune of the whole space (which ran beside
    /// it) leaves the entry whole, its winner the better of the two. Any other tune's winner
    /// replaces the entry's.
    pub fn set_winner(&mut self, mut origin: Origin, mut winner: Winner) {
        if let (Some(old), Some(w)) = (&self.origin, self.winner.take()) {
            if w.space == winner.space && w.verify == winner.verify && old.takes_in(&origin) {
                // The union of the parts; a whole space joined with a part stays whole.
                let mut joined = old.clone();
                joined.join(&origin);
                origin = joined;
                // A part that ended early leaves the whole ended early.
                let partial = w.partial || winner.partial;
                winner = Winner::better(w, winner);
                winner.partial = partial;
            }
        }
        self.origin = Some(origin);
        self.winner = Some(winner);
    }

    /// A tune of `origin` that measured but stores no winner (its reference is the likelier
    /// culprit of most configs' wrong outputs): the entry keeps its measurements and no winner,
    /// so that no later tune or launch takes the one it would have stored, or an earlier one.
    pub fn withhold_winner(&mut self, origin: Origin) {
        self.origin = Some(origin);
        self.winner = None;
    }

    /// Why the entry has no winner, where its last tune withheld it: `no winner: the last tune
    /// withheld it (…)`, as `db show` and the report say it.
    pub fn withheld_line(&self) -> Option<String> {
        let why = self.runs.last()?.winner_withheld.as_deref()?;
        Some(format!("no winner: the last tune withheld it ({why})"))
    }

    /// Records what a tune of `origin` has measured so far (a flush before its winner): the
    /// entry's origin becomes the tune's, unless the entry holds a winner, whose origin stays
    /// with it until the tune stores its own ([`Entry::set_winner`]).
    pub fn record_all(&mut self, origin: Origin, measurements: impl IntoIterator<Item = (String, Measurement)>) {
        if self.winner.is_none() {
            self.origin = Some(origin);
        }
        for (k, m) in measurements {
            self.record(k, m);
        }
    }

    /// Why shard `other` cannot be merged with `self`, when both are shards of one kernel,
    /// target and problem but were tuned from different sources, spaces or verifications.
    pub fn conflict(&self, other: &Entry) -> Option<String> {
        let (Some(a), Some(b)) = (&self.origin, &other.origin) else { return None };
        if a.shard.is_none() && b.shard.is_none() {
            return None;
        }
        let same = self.id.kernel == other.id.kernel && self.id.target == other.id.target && self.id.problem == other.id.problem;
        if !same {
            return None;
        }
        let which = if self.id.kernel_hash != other.id.kernel_hash {
            format!("the kernel source or its options differ (source hash {} and {})", self.id.kernel_hash, other.id.kernel_hash)
        } else if a.space != b.space {
            format!("the search spaces differ (space hash {} and {})", a.space, b.space)
        } else if a.verify != b.verify {
            format!("the verification differs (hash {} and {})", a.verify, b.verify)
        } else if let Some((part, _, differ)) = a.setup_difference(b) {
            format!("the {differ} differ (hash {} and {})", a.setup[*part], b.setup[*part])
        } else {
            return None;
        };
        Some(format!("kernel `{}`, {} on {}: {which}; shards must be tuned from one spec", self.id.kernel, self.id.problem, self.id.target))
    }
}

/// The whole file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DbFile {
    /// Always `kerntune-db`.
    pub schema: String,
    /// [`SCHEMA_VERSION`].
    pub version: u32,
    /// Entries by [`EntryId::key`].
    pub entries: BTreeMap<String, Entry>,
}

impl Default for DbFile {
    fn default() -> Self {
        DbFile { schema: SCHEMA_NAME.into(), version: SCHEMA_VERSION, entries: BTreeMap::new() }
    }
}

impl DbFile {
    /// Why `other` cannot be merged into this file: the first entry that is a shard of the
    /// same kernel, target and problem as one here but of another spec ([`Entry::conflict`]).
    pub fn conflict(&self, other: &DbFile) -> Option<String> {
        other.entries.values().find_map(|o| self.entries.values().find_map(|e| e.conflict(o)))
    }

    /// Merges every entry of `other` into this file.
    pub fn merge(&mut self, other: &DbFile) {
        for (k, e) in &other.entries {
            match self.entries.get_mut(k) {
                Some(mine) => mine.merge(e),
                None => {
                    self.entries.insert(k.clone(), e.clone());
                }
            }
        }
    }

    /// Parses a database file's text. A record it cannot decode (an entry's header or one
    /// measurement, edited by hand or damaged) is skipped with a warning, as the SQLite
    /// database's are, and the rest is read: one damaged record must not cost every other
    /// measurement in the file.
    pub fn parse(text: &str, path: &Path) -> Result<DbFile, DbError> {
        Self::parse_counting(text, path).map(|(f, _)| f)
    }

    /// [`DbFile::parse`], with how many records were skipped.
    fn parse_counting(text: &str, path: &Path) -> Result<(DbFile, usize), DbError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        // A number edited by hand in Python (`NaN`) costs only its record, as any damage does.
        let v: serde_json::Value = match serde_json::from_str(&crate::store::recorded::python_numbers(text)) {
            Ok(v) => v,
            // Another tuner's file that is no strict JSON (Python's NaN, a Kernel Tuner cache
            // still being written) is that file, not a damaged database to clear.
            Err(e) => {
                // Damaged is said of a file that names kerntune's schema; any other (a TOML
                // file, a list of something) is the user's, never one to clear.
                return Err(match crate::store::foreign::kind_of_text(text) {
                    Some(kind) => DbError::Foreign { path: path.into(), kind },
                    None if text.contains(&format!("\"{SCHEMA_NAME}\"")) => DbError::Corrupt { path: path.into(), detail: e.to_string() },
                    None => DbError::NotOurs { path: path.into(), detail: format!("not JSON: {e}") },
                });
            }
        };
        if v.get("schema").and_then(|s| s.as_str()) != Some(SCHEMA_NAME) {
            if let Some(kind) = crate::store::foreign::kind_of(&v).or_else(|| crate::store::foreign::kind_of_damaged(&v)) {
                return Err(DbError::Foreign { path: path.into(), kind });
            }
            return Err(DbError::NotOurs { path: path.into(), detail: format!("JSON without \"schema\": \"{SCHEMA_NAME}\"") });
        }
        let found = v.get("version").and_then(|s| s.as_u64()).unwrap_or(0) as u32;
        if found != SCHEMA_VERSION {
            return Err(DbError::Version { path: path.into(), found, expected: SCHEMA_VERSION });
        }
        let entries = match v.get("entries") {
            Some(serde_json::Value::Object(m)) => m,
            other => {
                let found = other.map_or("missing".to_string(), |o| format!("{}, not an object of entries", crate::spec::error::quote(&o.to_string())));
                return Err(DbError::Corrupt { path: path.into(), detail: format!("`entries` is {found}") });
            }
        };
        let (mut file, mut skipped) = (DbFile::default(), 0);
        for (key, record) in entries {
            let mut header = record.clone();
            let measurements = header.as_object_mut().and_then(|o| o.insert("measurements".into(), serde_json::json!({})));
            let Some((mut e, partial)) = read_header(path, key, Ok(header)) else {
                skipped += 1;
                continue;
            };
            skipped += usize::from(partial);
            let ms = match measurements {
                Some(serde_json::Value::Object(ms)) => ms,
                other => {
                    let found = other.map_or("missing".to_string(), |o| crate::spec::error::quote(&o.to_string()).into_owned());
                    unreadable(
                        path,
                        format!("the measurements of entry {} are {found}, not an object of configs", crate::spec::error::quote(key)),
                        "measuring its configs again replaces them",
                    );
                    skipped += 1;
                    serde_json::Map::new()
                }
            };
            for (config, m) in ms {
                match read_measurement(path, key, &config, serde_json::from_value(m)) {
                    Some(m) => {
                        e.measurements.insert(config, m);
                    }
                    None => skipped += 1,
                }
            }
            file.entries.insert(key.clone(), e);
        }
        Ok((file, skipped))
    }
}

/// The `compile_s` column's value for a measurement whose record has no compile seconds (NULL
/// there means not filled: a row a writer that does not know the column inserted).
const NO_COMPILE_S: f64 = -1.0;

/// The SQLite layout version this build writes and reads.
pub const SQLITE_LAYOUT: u32 = 3;

/// How long a write waits for another process's transaction before giving up.
const BUSY: std::time::Duration = std::time::Duration::from_secs(120);

/// What tells an entry from the others of its kernel, target and problem, each given by its
/// source hash and toolchain (an edited kernel, another compiler or driver): `source
/// 4cd2bf2dc052`, `toolchain nvrtc-13.1`, where some other differs; as `db show` and `report`
/// name such entries.
pub fn told_apart<'a>(source: &str, toolchain: &str, others: impl IntoIterator<Item = (&'a str, &'a str)>) -> Vec<String> {
    let (mut by_source, mut by_toolchain) = (false, false);
    for (s, t) in others {
        by_source |= s != source;
        by_toolchain |= t != toolchain;
    }
    let mut parts = Vec::new();
    if by_source {
        parts.push(format!("source {}", source.get(..12).unwrap_or(source)));
    }
    if by_toolchain {
        parts.push(format!("toolchain {toolchain}"));
    }
    parts
}

/// What kerntune does with another tuner's results file at `path` ([`DbError::Foreign`]):
/// "draw it with …, learn from it in a tune with …", for messages to end as they need.
pub fn foreign_uses(path: &Path) -> String {
    format!("draw it with `kerntune report --db {p}`, learn from it in a tune with `--prior {p}`", p = path.display())
}

/// What is at a database path.
enum Kind {
    Missing,
    Sqlite,
    Json,
}

/// Whose an SQLite database is ([`Database::owner`]).
enum Owner {
    /// kerntune's: its `meta` table names kerntune's schema.
    Ours,
    /// Neither tables of another program nor a schema row: empty, or being made by another
    /// kerntune process (its tables appear one by one, its schema row last).
    Unmarked,
    /// Another program's, and why it is said to be.
    Other(String),
}

/// A database file on disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Database {
    path: PathBuf,
}

impl Database {
    /// A database at `path` (nothing is read until used).
    pub fn at(path: impl Into<PathBuf>) -> Database {
        Database { path: path.into() }
    }

    /// `$KERNTUNE_CACHE_DIR/db.sqlite`, else the platform cache directory
    /// (`~/.cache/kerntune/db.sqlite` on Linux), else `./.kerntune/db.sqlite`. A `db.json` an
    /// earlier version left there, with no `db.sqlite` yet, is used (and converted on the first
    /// write).
    pub fn default_path() -> PathBuf {
        let dir = cache_dir();
        let (sqlite, json) = (dir.join("db.sqlite"), dir.join("db.json"));
        if !sqlite.exists() && json.exists() {
            return json;
        }
        sqlite
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn io(&self, action: &'static str) -> impl FnOnce(std::io::Error) -> DbError + '_ {
        move |error| {
            use std::io::ErrorKind::*;
            // A place the database cannot be: say where else it can go.
            let error = match error.kind() {
                NotADirectory | NotFound | PermissionDenied | ReadOnlyFilesystem if matches!(action, "opening" | "creating its directory") => {
                    std::io::Error::new(error.kind(), format!("{error}; {}", self.elsewhere()))
                }
                _ => error,
            };
            DbError::Io { path: self.path.clone(), action, error }
        }
    }

    fn sql(&self, action: &'static str) -> impl Fn(rusqlite::Error) -> DbError + '_ {
        move |e| match e {
            rusqlite::Error::SqliteFailure(f, _) if matches!(f.code, rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt) => {
                DbError::Corrupt { path: self.path.clone(), detail: e.to_string() }
            }
            rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::CannotOpen => {
                DbError::Io { path: self.path.clone(), action, error: std::io::Error::other(format!("{e}; {}", self.elsewhere())) }
            }
            // SQLite says "disk I/O error" where its shared-memory file cannot grow on a full
            // disk: say how much is free there.
            rusqlite::Error::SqliteFailure(f, _) if matches!(f.code, rusqlite::ErrorCode::DiskFull | rusqlite::ErrorCode::SystemIoFailure) => {
                let full = self.free_space().map(|(folder, free)| {
                    format!(
                        "; the disk holding {folder} has {} free: free space there, name a database elsewhere with --db FILE, or tune with --no-db",
                        crate::store::cache::size_text(free)
                    )
                });
                DbError::Io { path: self.path.clone(), action, error: std::io::Error::other(format!("{e}{}", full.unwrap_or_default())) }
            }
            other => DbError::Io { path: self.path.clone(), action, error: std::io::Error::other(other.to_string()) },
        }
    }

    /// The database's folder and the bytes free to this process on its disk, where it is low
    /// (under 16 MiB: what a database write that failed for want of room would see); `None`
    /// where plenty is free or it cannot be told.
    fn free_space(&self) -> Option<(String, u64)> {
        let folder = self.path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        #[cfg(target_os = "linux")]
        let free = rustix::fs::statvfs(folder).ok().map(|s| s.f_bavail.saturating_mul(s.f_frsize));
        #[cfg(not(target_os = "linux"))]
        let free: Option<u64> = None;
        free.filter(|&b| b < 16 << 20).map(|b| (folder.display().to_string(), b))
    }

    /// Where else a database that cannot be made here can go: its folder named, and whether
    /// `KERNTUNE_CACHE_DIR` chose it.
    fn elsewhere(&self) -> String {
        let folder = self.path.parent().map_or_else(|| ".".to_string(), |p| p.display().to_string());
        let chosen = match std::env::var_os("KERNTUNE_CACHE_DIR").filter(|d| !d.is_empty()) {
            Some(d) if self.path.starts_with(&d) => format!(" (KERNTUNE_CACHE_DIR={} chose it)", Path::new(&d).display()),
            _ => String::new(),
        };
        format!("{folder} is no folder this process can write{chosen}: name a database in one with --db FILE (or set KERNTUNE_CACHE_DIR to one), or tune with --no-db")
    }

    /// Whether the file is a kerntune database in JSON (`db export`'s form, which names its
    /// schema first): read as it is, and converted to SQLite by the first write. False for a
    /// missing or SQLite file, and for another tool's JSON (a Kernel Tuner cache, a T4 file).
    pub fn is_json(&self) -> bool {
        if !matches!(self.kind(), Ok(Kind::Json)) {
            return false;
        }
        let mut head = [0u8; 256];
        let Ok(n) = File::open(&self.path).and_then(|mut f| std::io::Read::read(&mut f, &mut head)) else { return false };
        String::from_utf8_lossy(&head[..n]).contains(&format!("\"{SCHEMA_NAME}\""))
    }

    fn kind(&self) -> Result<Kind, DbError> {
        if self.path.is_dir() {
            return Err(DbError::Folder { path: self.path.clone() });
        }
        let mut head = [0u8; 16];
        let n = match File::open(&self.path) {
            Ok(mut f) => std::io::Read::read(&mut f, &mut head).map_err(self.io("reading"))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Kind::Missing),
            Err(e) => return Err(self.io("opening")(e)),
        };
        if n == 0 {
            return Ok(Kind::Missing);
        }
        if head.starts_with(b"SQLite format 3\0") {
            return Ok(Kind::Sqlite);
        }
        // JSON, after a byte-order mark where an editor wrote one.
        let body = head[..n].strip_prefix(b"\xef\xbb\xbf").unwrap_or(&head[..n]);
        // (A list is no database, but may be a kerntune tune report, which the JSON reader
        // tells apart from a damaged database to clear.)
        if matches!(body.iter().find(|b| !b.is_ascii_whitespace()), Some(b'{' | b'[')) {
            return Ok(Kind::Json);
        }
        // A gzipped Kernel Tuner cache or T4 file.
        if head.starts_with(&[0x1f, 0x8b]) {
            let kind = crate::store::recorded::read_text(&self.path).ok().and_then(|t| crate::store::foreign::kind_of_text(&t));
            if let Some(kind) = kind {
                return Err(DbError::Foreign { path: self.path.clone(), kind });
            }
        }
        Err(DbError::NotOurs { path: self.path.clone(), detail: "neither an SQLite database nor JSON".into() })
    }

    /// The journal a writable open sets ([`Journal`]): `KERNTUNE_DB_JOURNAL` (`wal` or
    /// `delete`) where set, else by the file system the database's folder is on.
    fn journal(&self) -> Result<Journal, DbError> {
        match std::env::var("KERNTUNE_DB_JOURNAL") {
            Ok(v) if v.eq_ignore_ascii_case("wal") => Ok(Journal::Wal),
            Ok(v) if v.eq_ignore_ascii_case("delete") => Ok(Journal::Rollback),
            Ok(v) => Err(DbError::Io {
                path: self.path.clone(),
                action: "opening",
                error: std::io::Error::other(format!(
                    "KERNTUNE_DB_JOURNAL={v:?} is neither `wal` (SQLite's write-ahead log, for a database one host writes) nor `delete` (its \
                     rollback journal, for a database on a file system several hosts share); set one, or unset it to choose by the file system"
                )),
            }),
            Err(_) => {
                let dir = self.path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
                Ok(match shared_file_system(dir) {
                    Some(fs) => {
                        tracing::debug!(path = %self.path.display(), file_system = fs, "database on a shared file system: rollback journal");
                        Journal::Rollback
                    }
                    None => Journal::Wal,
                })
            }
        }
    }

    /// Opens (creating when asked) the SQLite database, converting a JSON one first.
    fn open(&self, create: bool) -> Result<Option<rusqlite::Connection>, DbError> {
        let kind = self.kind()?;
        match kind {
            Kind::Missing if !create => return Ok(None),
            Kind::Json if create => self.convert()?,
            Kind::Json => return Err(DbError::Corrupt { path: self.path.clone(), detail: "a JSON database cannot be opened as SQLite".into() }),
            Kind::Sqlite if !create => {
                if let Some(c) = self.open_for_reading() {
                    return Ok(Some(c));
                }
            }
            _ => {}
        }
        if let Some(dir) = self.path.parent().filter(|p| !p.as_os_str().is_empty()) {
            fs::create_dir_all(dir).map_err(self.io("creating its directory"))?;
        }
        let journal = self.journal()?;
        let c = rusqlite::Connection::open(&self.path).map_err(self.sql("opening"))?;
        c.busy_timeout(BUSY).map_err(self.sql("configuring"))?;
        // Another program's SQLite database (`--db app.db`) is left as it is: kerntune's tables
        // were added to it. (A JSON database converted above is kerntune's own.)
        if matches!(kind, Kind::Sqlite) {
            match self.owner(&c) {
                Ok(Owner::Other(detail)) => return Err(DbError::NotOurs { path: self.path.clone(), detail }),
                // Unmarked: being made by another kerntune process (its schema row comes last).
                // Unreadable (a read-only WAL database, whose reads need its `-shm` file): judged
                // by the read-only path, which reads it otherwise.
                Ok(Owner::Ours | Owner::Unmarked) | Err(_) => {}
            }
        }
        let set_up = || {
            let mode: String = c.query_row(&format!("PRAGMA journal_mode={}", journal.mode()), [], |r| r.get(0))?;
            if !mode.eq_ignore_ascii_case(journal.mode()) {
                // Another process holds the file open in the other mode, which SQLite then keeps.
                tracing::debug!(path = %self.path.display(), wanted = journal.mode(), kept = %mode, "database journal mode not changed");
            }
            c.execute_batch(
                "PRAGMA synchronous=NORMAL;
             CREATE TABLE IF NOT EXISTS meta(name TEXT PRIMARY KEY, value TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS entries(key TEXT PRIMARY KEY, header TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS measurements(entry TEXT NOT NULL, config TEXT NOT NULL, record TEXT NOT NULL, time REAL, PRIMARY KEY(entry, config)) WITHOUT ROWID;",
            )
            .and_then(|()| c.execute("INSERT OR IGNORE INTO meta(name, value) VALUES ('schema', ?1), ('layout', ?2)", rusqlite::params![SCHEMA_NAME, SQLITE_LAYOUT.to_string()]))
        };
        // While another connection creates the file, SQLite answers "database is locked" at
        // once for a lock it cannot wait for without risking a deadlock (the busy timeout does
        // not apply): tunes or shards started together on a new database then failed here.
        // The set-up is idempotent, so it is tried again until the busy timeout.
        let since = std::time::Instant::now();
        let mut tries = 0u64;
        let init = loop {
            match set_up() {
                Err(e) if is_busy(&e) && since.elapsed() < BUSY => {
                    tries += 1;
                    // 2–17 ms, different per process and try, so that processes retrying do not meet again.
                    std::thread::sleep(std::time::Duration::from_millis(2 + (u64::from(std::process::id()) + tries * 7) % 16));
                }
                r => break r,
            }
        };
        match init {
            Ok(_) => {}
            // A database this process may not write (a shipped or shared file, a read-only
            // mount) is still read: `db show`, lookups and priors need no write.
            Err(e) if !create && is_read_only(&e) => {
                drop(c);
                return self.open_read_only().map(Some);
            }
            Err(e) if is_read_only(&e) => {
                return Err(DbError::Io {
                    path: self.path.clone(),
                    action: "writing",
                    error: std::io::Error::other(
                        "the file or its folder is read-only to this process; name a writable database with --db (or KERNTUNE_CACHE_DIR), or tune with --no-db",
                    ),
                })
            }
            Err(e) => return Err(self.sql("initialising")(e)),
        }
        self.check_layout(&c, true)?;
        self.prepare_for_priors(&c);
        Ok(Some(c))
    }

    /// Makes what keeps the priors read fast (`times_elsewhere`), once, at a writable open:
    /// - a `compile_s` column beside `time`: each measurement's compile seconds as its record's
    ///   trace has them, [`NO_COMPILE_S`] where it has none, NULL where a writer that does not
    ///   know the column (an older kerntune of this layout) inserted the row; filled from the
    ///   records when added;
    /// - an index `measurements_prior_times (entry, config, time, compile_s)`, which holds all
    ///   the read needs, so that the records (each measurement's whole JSON) are not read;
    /// - an index on the header's problem, which finds one problem's entries without walking
    ///   the kernel's others.
    ///
    /// In one transaction; a failure is a warning (the database works without them, only the
    /// priors read is slower). The index an earlier version made on the first three columns is
    /// dropped.
    fn prepare_for_priors(&self, c: &rusqlite::Connection) {
        let column = has_compile_column(c);
        // The two indexes, and not the one an older version makes (which it makes again when it
        // opens the file for writing: two indexes to keep up on every write).
        let indexed = c
            .query_row(
                "SELECT count(*) = 2 AND sum(name IN ('measurements_priors', 'measurements_times')) = 0 FROM sqlite_master
                 WHERE type = 'index' AND name IN ('measurements_prior_times', 'entries_problem', 'measurements_priors', 'measurements_times')",
                [],
                |r| r.get::<_, bool>(0),
            )
            .unwrap_or(false);
        if column && indexed {
            return;
        }
        let t = std::time::Instant::now();
        let add = if column {
            String::new()
        } else {
            format!(
                "ALTER TABLE measurements ADD COLUMN compile_s REAL;
                 UPDATE measurements SET compile_s = coalesce(json_extract(record, '$.trace.compile_s'), {NO_COMPILE_S});"
            )
        };
        let made = c
            .execute_batch(&format!(
                "BEGIN IMMEDIATE;
                 {add}
                 DROP INDEX IF EXISTS measurements_priors;
                 DROP INDEX IF EXISTS measurements_times;
                 CREATE INDEX IF NOT EXISTS measurements_prior_times ON measurements(entry, config, time, compile_s);
                 CREATE INDEX IF NOT EXISTS entries_problem ON entries(json_extract(header, '$.problem'), key);
                 COMMIT;"
            ))
            .inspect_err(|_| {
                let _ = c.execute_batch("ROLLBACK;");
            });
        match made {
            // Seconds on a large database made by an older version (every row gets its
            // compile seconds): said where it is noticed.
            Ok(()) if t.elapsed().as_secs_f64() > 1.0 => {
                tracing::info!(path = %self.path.display(), seconds = t.elapsed().as_secs_f64(), "prepared the database for reading priors (once)")
            }
            Ok(()) => tracing::debug!(path = %self.path.display(), seconds = t.elapsed().as_secs_f64(), "prepared the database for reading priors (once)"),
            Err(e) => {
                tracing::warn!(path = %self.path.display(), "could not index the database for reading priors ({e}); it works without, reading priors more slowly")
            }
        }
    }

    /// An existing database of this layout, opened for reading without a write: a lookup, `db
    /// show` or the priors read take no write lock, so they neither wait for another process's
    /// write transaction (a tune storing its results, a `db merge`) nor make one wait. `None`
    /// where anything is unusual (no kerntune tables, another layout, a file this process cannot
    /// write): [`Database::open`] then takes its full path, which creates, upgrades or falls
    /// back to read-only mode as before.
    fn open_for_reading(&self) -> Option<rusqlite::Connection> {
        let c = rusqlite::Connection::open(&self.path).ok()?;
        c.busy_timeout(BUSY).ok()?;
        // A write would fail later with a less clear message: such files take the read-only path.
        if c.is_readonly(rusqlite::MAIN_DB).unwrap_or(true) {
            return None;
        }
        // Not writable for the check: it only reads, and refuses layout 2 (which the full path
        // upgrades) as it refuses anything else not of this layout.
        self.check_layout(&c, false).is_ok().then_some(c)
    }

    /// Opens the database for reading only: through SQLite's read-only mode, or, where that
    /// cannot work either (a WAL database in a folder where its `-shm` file cannot be made),
    /// as an immutable file.
    fn open_read_only(&self) -> Result<rusqlite::Connection, DbError> {
        use rusqlite::OpenFlags;
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        // Read for the check: another program's database, without `meta`, is then told apart.
        let readable = |c: rusqlite::Connection| c.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(())).map(|()| c);
        let c = rusqlite::Connection::open_with_flags(&self.path, flags).and_then(readable).or_else(|_| {
            // URI syntax: `%`, `?` and `#` in the path escaped.
            let path = self.path.display().to_string().replace('%', "%25").replace('?', "%3f").replace('#', "%23");
            rusqlite::Connection::open_with_flags(format!("file:{path}?immutable=1"), flags).and_then(readable)
        });
        let c = c.map_err(self.sql("opening read-only"))?;
        tracing::debug!(path = %self.path.display(), "database opened read-only");
        self.check_layout(&c, false)?;
        Ok(c)
    }

    /// Checks that a kerntune database (its `meta` table read already) has its other tables: one
    /// dropped by hand or by another program failed every read with SQLite's words ("no such
    /// table"). Now a read of a file that can be written falls back to the writable path
    /// ([`Database::open`]), which makes it again (empty: what it held is gone already), and a
    /// read-only file is called corrupt, naming the table. (A check before the writable path's
    /// set-up would race with another process creating the file: its tables appear one by one.)
    fn check_tables(&self, c: &rusqlite::Connection) -> Result<(), DbError> {
        for table in ["entries", "measurements"] {
            let n: i64 =
                c.query_row("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1", [table], |r| r.get(0)).map_err(self.sql("reading"))?;
            if n == 0 {
                return Err(DbError::Corrupt { path: self.path.clone(), detail: format!("a kerntune database without its `{table}` table") });
            }
        }
        Ok(())
    }

    /// Whose SQLite database `c` is, by its tables: the one place that tells kerntune's from
    /// another program's, for every way of opening it.
    fn owner(&self, c: &rusqlite::Connection) -> rusqlite::Result<Owner> {
        use rusqlite::OptionalExtension;
        let other: Vec<String> = c
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT IN ('meta', 'entries', 'measurements') AND name NOT LIKE 'sqlite_%' ORDER BY name")?
            .query_map([], |r| r.get::<_, String>(0))?
            .collect::<rusqlite::Result<_>>()?;
        if !other.is_empty() {
            let shown: Vec<String> = other.iter().take(3).map(|t| format!("`{t}`")).collect();
            let more = if other.len() > 3 { ", …" } else { "" };
            return Ok(Owner::Other(format!("an SQLite database of another program: its tables {}{more}", shown.join(", "))));
        }
        let has_meta: i64 = c.query_row("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'", [], |r| r.get(0))?;
        if has_meta == 0 {
            return Ok(Owner::Unmarked);
        }
        Ok(match c.query_row("SELECT value FROM meta WHERE name = 'schema'", [], |r| r.get::<_, String>(0)).optional()? {
            Some(s) if s == SCHEMA_NAME => Owner::Ours,
            Some(other) => Owner::Other(format!("an SQLite database of schema `{other}`, not `{SCHEMA_NAME}`")),
            None => Owner::Unmarked,
        })
    }

    /// Checks that `c` is a kerntune database of this layout, upgrading layout 2 when `writable`.
    fn check_layout(&self, c: &rusqlite::Connection, writable: bool) -> Result<(), DbError> {
        let meta = |name: &str| -> Result<Option<String>, DbError> {
            use rusqlite::OptionalExtension;
            c.query_row("SELECT value FROM meta WHERE name = ?1", [name], |r| r.get(0)).optional().map_err(self.sql("reading"))
        };
        match self.owner(c).map_err(self.sql("reading"))? {
            Owner::Ours => {}
            Owner::Other(detail) => return Err(DbError::NotOurs { path: self.path.clone(), detail }),
            Owner::Unmarked => return Err(DbError::NotOurs { path: self.path.clone(), detail: "an SQLite database without kerntune's schema row".into() }),
        }
        self.check_tables(c)?;
        let mut layout = meta("layout")?.and_then(|v| v.parse::<u32>().ok()).unwrap_or(0);
        if layout == 2 && writable {
            // Layout 2 had no `time` column: add it, filled from the records, in one transaction.
            c.execute_batch(
                "BEGIN IMMEDIATE;
                 ALTER TABLE measurements ADD COLUMN time REAL;
                 UPDATE measurements SET time = json_extract(record, '$.stats.mean') WHERE json_extract(record, '$.status') = 'ok';
                 UPDATE meta SET value = '3' WHERE name = 'layout';
                 COMMIT;",
            )
            .map_err(self.sql("upgrading the layout"))?;
            tracing::info!(path = %self.path.display(), "upgraded the database's layout from 2 to 3");
            layout = 3;
        }
        if layout == 2 {
            return Err(DbError::Io {
                path: self.path.clone(),
                action: "reading",
                error: std::io::Error::other("it has an older layout (2) and cannot be written to upgrade it; open it once where it can be written (`kerntune db show --db FILE` on a copy)"),
            });
        }
        if layout != SQLITE_LAYOUT {
            return Err(DbError::Version { path: self.path.clone(), found: layout, expected: SQLITE_LAYOUT });
        }
        Ok(())
    }

    /// Replaces a JSON database by the same contents in SQLite (under the file's lock, through
    /// a temporary file renamed over it, so a crash leaves one or the other).
    fn convert(&self) -> Result<(), DbError> {
        let lock = self.legacy_lock()?;
        if !matches!(self.kind()?, Kind::Json) {
            return Ok(()); // another process converted it meanwhile
        }
        let text = fs::read_to_string(&self.path).map_err(self.io("reading"))?;
        let (file, skipped) = DbFile::parse_counting(&text, &self.path)?;
        // The records the SQLite database will lack stay in a copy of the JSON file.
        if skipped > 0 {
            let copy = self.path.with_file_name(format!("{}.unreadable-records.json", self.path.file_name().and_then(|n| n.to_str()).unwrap_or("db")));
            fs::copy(&self.path, &copy).map_err(self.io("keeping a copy of the JSON database"))?;
            tracing::warn!(
                "database {}: converted to SQLite without {skipped} record{} it could not read; the JSON file as it was is kept as {}",
                self.path.display(),
                if skipped == 1 { "" } else { "s" },
                copy.display()
            );
        }
        let tmp = Database::at(self.path.with_file_name(format!(
            ".{}.converting.{}",
            self.path.file_name().and_then(|n| n.to_str()).unwrap_or("db"),
            std::process::id()
        )));
        let _ = tmp.clear();
        tmp.update(|f| *f = file)?;
        fs::rename(&tmp.path, &self.path).map_err(self.io("replacing the JSON database"))?;
        for suffix in ["-wal", "-shm"] {
            let _ = fs::remove_file(with_suffix(&tmp.path, suffix));
        }
        tracing::info!(path = %self.path.display(), "converted the database from JSON to SQLite");
        drop(lock);
        Ok(())
    }

    fn legacy_lock(&self) -> Result<File, DbError> {
        let lock = OpenOptions::new().create(true).truncate(false).write(true).open(lock_path(&self.path)).map_err(self.io("opening the lock file"))?;
        lock.lock().map_err(self.io("locking"))?;
        Ok(lock)
    }

    /// Whether the file can serve as this database, found without a write: missing (the first
    /// write makes it), or a kerntune database this build reads. What a command that opens a
    /// device asks before it does, so that a file of another program's, another tuner's or
    /// another version's is said at once. (A layout this build upgrades is upgraded, as the
    /// first write would; a JSON database is read whole.)
    pub fn check(&self) -> Result<(), DbError> {
        match self.kind()? {
            Kind::Missing => Ok(()),
            Kind::Json => self.load().map(drop),
            Kind::Sqlite => self.open(false).map(drop),
        }
    }

    /// Reads the whole database; a missing file is an empty database.
    pub fn load(&self) -> Result<DbFile, DbError> {
        if let Kind::Json = self.kind()? {
            let text = fs::read_to_string(&self.path).map_err(self.io("reading"))?;
            return DbFile::parse(&text, &self.path);
        }
        let Some(c) = self.open(false)? else { return Ok(DbFile::default()) };
        read_all(&c, &self.path).map_err(self.sql("reading"))
    }

    /// One entry, if present: a lookup by key, whatever the database's size.
    pub fn entry(&self, id: &EntryId) -> Result<Option<Entry>, DbError> {
        if let Kind::Json = self.kind()? {
            return Ok(self.load()?.entries.remove(&id.key()));
        }
        let Some(c) = self.open(false)? else { return Ok(None) };
        read_entry(&c, &self.path, &id.key()).map_err(self.sql("reading"))
    }

    /// Applies `change` to one entry (absent: `None`) in a transaction that re-reads it first,
    /// and writes back what changed.
    pub fn update_entry<T>(&self, id: &EntryId, change: impl FnOnce(&mut Option<Entry>) -> T) -> Result<T, DbError> {
        let mut c = self.open(true)?.expect("created");
        let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate).map_err(self.sql("locking"))?;
        let key = id.key();
        let before = read_entry(&tx, &self.path, &key).map_err(self.sql("reading"))?;
        let mut after = before.clone();
        let out = change(&mut after);
        write_entry(&tx, has_compile_column(&tx), &key, before.as_ref(), after.as_ref()).map_err(self.sql("writing"))?;
        tx.commit().map_err(self.sql("committing"))?;
        Ok(out)
    }

    /// Applies `change` to the whole database in one transaction (merging files, tests); a
    /// tune's own writes use [`Database::update_entry`].
    pub fn update<T>(&self, change: impl FnOnce(&mut DbFile) -> T) -> Result<T, DbError> {
        let mut c = self.open(true)?.expect("created");
        let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate).map_err(self.sql("locking"))?;
        let before = read_all(&tx, &self.path).map_err(self.sql("reading"))?;
        let mut after = before.clone();
        let out = change(&mut after);
        let column = has_compile_column(&tx);
        for (key, e) in &after.entries {
            write_entry(&tx, column, key, before.entries.get(key), Some(e)).map_err(self.sql("writing"))?;
        }
        for (key, e) in &before.entries {
            if !after.entries.contains_key(key) {
                write_entry(&tx, column, key, Some(e), None).map_err(self.sql("writing"))?;
            }
        }
        tx.commit().map_err(self.sql("committing"))?;
        Ok(out)
    }

    /// Removes the database (and SQLite's side files).
    pub fn clear(&self) -> Result<bool, DbError> {
        let existed = match fs::remove_file(&self.path) {
            Ok(()) => true,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(error) => return Err(DbError::Io { path: self.path.clone(), action: "removing", error }),
        };
        for suffix in ["-wal", "-shm", "-journal", ".lock"] {
            let _ = fs::remove_file(with_suffix(&self.path, suffix));
        }
        Ok(existed)
    }

    /// The same kernel's measurements on other targets, for priors: every entry of kernel
    /// `kernel` and problem `problem` whose target is not `target`, each with its id, target
    /// name and every measured config's mean time (seconds; `None` for a failure) and, when
    /// `compile` is asked for, compile seconds (where the tune that measured it compiled it).
    /// Reads the `time` and `compile_s` columns (through an index that holds both), not the
    /// records, so that it stays fast with many entries and configs; in a database no writable
    /// open of this version has prepared yet, the compile seconds are parsed from each record
    /// (the priors bench: 246–264 ms for 200,000 records, against 43–52 ms from the column), so
    /// only a tune that uses them asks.
    pub fn times_elsewhere(&self, kernel: &str, problem: &str, target: &str, compile: bool) -> Result<Vec<Elsewhere>, DbError> {
        if let Kind::Json = self.kind()? {
            let f = self.load()?;
            return Ok(f
                .entries
                .into_values()
                .filter(|e| e.id.kernel == kernel && e.id.problem == problem && e.id.target != target)
                .map(|e| {
                    let t = measured_times(&e, compile);
                    (e.id.clone(), e.target_name.clone(), t)
                })
                .collect());
        }
        let Some(c) = self.open(false)? else { return Ok(Vec::new()) };
        // Keys start with the kernel name and a `|` (a range of the primary key) and end with a
        // `|` and the problem: only those entries' headers are read, not those of the kernel's
        // other problems (a library's database may hold thousands). The index on the header's
        // problem finds them without visiting the others; a database made before it existed
        // (until its first write adds it) is scanned over the kernel's keys, the problem
        // compared at the key's end first. The header decides.
        let (lo, hi) = (format!("{kernel}|"), format!("{kernel}}}"));
        let tail = format!("|{problem}");
        let mut st = c
            .prepare_cached("SELECT key, header FROM entries WHERE key >= ?1 AND key < ?2 AND substr(key, -?3) = ?4 AND json_extract(header, '$.problem') = ?5")
            .map_err(self.sql("reading"))?;
        let rows: Vec<(String, String)> = st
            .query_map(rusqlite::params![lo, hi, tail.chars().count() as i64, tail, problem], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(self.sql("reading"))?
            .collect::<Result<_, _>>()
            .map_err(self.sql("reading"))?;
        let wanted = self.headers(rows, |e| e.id.kernel == kernel && e.id.problem == problem && e.id.target != target)?;
        drop(st);
        self.times_of(c, wanted, compile)
    }

    /// The entries of `rows` (key, header JSON) that `keep` keeps; a header that does not parse
    /// is the database's corruption, named by its key.
    fn headers(&self, rows: Vec<(String, String)>, keep: impl Fn(&Entry) -> bool) -> Result<Vec<(String, Entry)>, DbError> {
        let mut out = Vec::new();
        for (key, header) in rows {
            let e: Entry = serde_json::from_str(&header)
                .map_err(|err| DbError::Corrupt { path: self.path.clone(), detail: format!("entry {}: {err}", crate::spec::error::quote(&key)) })?;
            if keep(&e) {
                out.push((key, e));
            }
        }
        Ok(out)
    }

    /// The headers of kernel `kernel`'s entries of source hash `kernel_hash` on target
    /// `target`, except that of problem `problem` under toolchain `toolchain` (a range of the
    /// primary key: the kernel's entries on other targets or of other hashes are not read), for
    /// priors from the problem sizes already tuned on this target (and this problem measured
    /// under another compiler or driver); [`Database::times_for`] reads the measurements of
    /// those chosen.
    pub fn problems_here(&self, kernel: &str, kernel_hash: &str, target: &str, problem: &str, toolchain: &str) -> Result<Vec<(String, Entry)>, DbError> {
        let keep = |e: &Entry| {
            e.id.kernel == kernel && e.id.kernel_hash == kernel_hash && e.id.target == target && (e.id.problem != problem || e.id.toolchain != toolchain)
        };
        if let Kind::Json = self.kind()? {
            let f = self.load()?;
            return Ok(f
                .entries
                .into_iter()
                .filter(|(_, e)| keep(e))
                .map(|(k, mut e)| {
                    e.measurements.clear();
                    (k, e)
                })
                .collect());
        }
        let Some(c) = self.open(false)? else { return Ok(Vec::new()) };
        // `|` sorts just below `}`: every key that starts with the prefix lies in [lo, hi).
        let prefix = format!("{kernel}|{kernel_hash}|{target}");
        let (lo, hi) = (format!("{prefix}|"), format!("{prefix}}}"));
        let mut st = c.prepare_cached("SELECT key, header FROM entries WHERE key >= ?1 AND key < ?2").map_err(self.sql("reading"))?;
        let rows: Vec<(String, String)> = st
            .query_map(rusqlite::params![lo, hi], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(self.sql("reading"))?
            .collect::<Result<_, _>>()
            .map_err(self.sql("reading"))?;
        self.headers(rows, keep)
    }

    /// The measured times of `entries` (keys and headers, as [`Database::problems_here`] gives
    /// them), as [`Database::times_elsewhere`] reads them.
    pub fn times_for(&self, entries: Vec<(String, Entry)>, compile: bool) -> Result<Vec<Elsewhere>, DbError> {
        if entries.is_empty() {
            return Ok(Vec::new());
        }
        if let Kind::Json = self.kind()? {
            let mut f = self.load()?;
            return Ok(entries
                .into_iter()
                .filter_map(|(k, _)| f.entries.remove(&k))
                .map(|e| {
                    let t = measured_times(&e, compile);
                    (e.id.clone(), e.target_name.clone(), t)
                })
                .collect());
        }
        let Some(c) = self.open(false)? else { return Ok(Vec::new()) };
        self.times_of(c, entries, compile)
    }

    /// Reads the times of the `wanted` entries (key, header) over connection `c` (and others
    /// opened alongside).
    fn times_of(&self, c: rusqlite::Connection, wanted: Vec<(String, Entry)>, compile: bool) -> Result<Vec<Elsewhere>, DbError> {
        // The compile seconds a tune recorded in the trace (they order another device's compiles
        // longest first before any has finished) come from their column where it exists (see
        // `prepare_for_priors`), else from each record; an entry in which a writer that does not
        // know the column left it empty is read again, those rows from their records.
        let column = compile && has_compile_column(&c);
        let sql = match (compile, column) {
            (false, _) => "SELECT config, time FROM measurements WHERE entry = ?1",
            (true, true) => "SELECT config, time, compile_s FROM measurements WHERE entry = ?1",
            (true, false) => "SELECT config, time, json_extract(record, '$.trace.compile_s') FROM measurements WHERE entry = ?1",
        };
        const PATCHED: &str =
            "SELECT config, time, CASE WHEN compile_s IS NULL THEN json_extract(record, '$.trace.compile_s') ELSE compile_s END FROM measurements WHERE entry = ?1";
        // Rows borrowed from SQLite into one packed list per entry: 20,000 configs make one
        // string, not 20,000. Entries are read in parallel, each reader on its own connection
        // (the first one's is reused): SQLite's per-row work is most of the cost.
        let read_with = |c: &rusqlite::Connection, sql: &str, key: &str| -> Result<(MeasuredTimes, bool), DbError> {
            let mut times = c.prepare_cached(sql).map_err(self.sql("reading"))?;
            let mut t = MeasuredTimes::default();
            let mut unfilled = false;
            let mut rows = times.query([key]).map_err(self.sql("reading"))?;
            while let Some(r) = rows.next().map_err(self.sql("reading"))? {
                let config = r.get_ref(0).and_then(|v| v.as_str().map_err(Into::into)).map_err(self.sql("reading"))?;
                let compile_s = if compile {
                    let v = r.get::<_, Option<f64>>(2).ok().flatten();
                    unfilled |= v.is_none();
                    v.filter(|s| *s >= 0.0)
                } else {
                    None
                };
                t.push(config, r.get(1).map_err(self.sql("reading"))?, compile_s);
            }
            Ok((t, unfilled))
        };
        let read = |c: &rusqlite::Connection, key: &str| -> Result<MeasuredTimes, DbError> {
            let mut t = match read_with(c, sql, key)? {
                (_, true) if column => read_with(c, PATCHED, key)?.0,
                (t, _) => t,
            };
            // What a config cost that tune (compile and evaluation seconds) is read from the
            // records of a sample spread over the successful configs: only its mean is used,
            // and reading every record would cost more than the times.
            let ok: Vec<&str> = t.iter().filter(|r| r.1.is_some()).map(|r| r.0).collect();
            let step = ok.len().div_ceil(SECONDS_SAMPLE).max(1);
            let mut cost = c
                .prepare_cached("SELECT json_extract(record, '$.trace.compile_s'), json_extract(record, '$.trace.eval_s') FROM measurements WHERE entry = ?1 AND config = ?2")
                .map_err(self.sql("reading"))?;
            let mut seconds = Vec::with_capacity(SECONDS_SAMPLE);
            for config in ok.iter().step_by(step) {
                // A row that cannot be read is left out of the sample: the times were read.
                if let Ok(pair) = cost.query_row([key, config], |r| Ok((r.get::<_, Option<f64>>(0)?, r.get::<_, Option<f64>>(1)?))) {
                    seconds.push(pair);
                }
            }
            t.seconds = seconds;
            Ok(t)
        };
        let first = std::sync::Mutex::new(Some(c));
        let connection = || -> Result<rusqlite::Connection, DbError> {
            match first.lock().unwrap_or_else(|p| p.into_inner()).take() {
                Some(c) => Ok(c),
                None => self.open(false)?.ok_or_else(|| DbError::Corrupt { path: self.path.clone(), detail: "removed while it was read".into() }),
            }
        };
        use rayon::prelude::*;
        let read: Vec<Result<MeasuredTimes, DbError>> = wanted
            .par_iter()
            .map_init(
                || None,
                |slot: &mut Option<rusqlite::Connection>, (key, _)| {
                    let c = match slot {
                        Some(c) => c,
                        None => slot.insert(connection()?),
                    };
                    read(c, key)
                },
            )
            .collect();
        let mut out = Vec::with_capacity(wanted.len());
        for ((_, e), t) in wanted.into_iter().zip(read) {
            out.push((e.id, e.target_name, t?));
        }
        Ok(out)
    }

    /// Takes the per-entry tuning lock (a lock file beside the database, released when the
    /// guard drops or the process dies): a second process tuning the same kernel and problem
    /// waits here, then finds the first one's winner. `None` when the lock file cannot be
    /// made (a read-only cache): tuning goes on unlocked. A shard of a split tune locks its
    /// own part of the entry: the other shards measure other configs and need not wait.
    pub fn lock_entry(&self, id: &EntryId, shard: Option<crate::spec::settings::Shard>) -> Option<EntryLock> {
        let dir = with_suffix(&self.path, ".locks");
        fs::create_dir_all(&dir).ok()?;
        let key = match shard {
            Some(s) => format!("{} shard {}/{}", id.key(), s.index, s.count),
            None => id.key(),
        };
        let path = dir.join(format!("{}.lock", crate::hash::short_hash(key.as_bytes())));
        let file = OpenOptions::new().create(true).truncate(false).write(true).open(&path).ok()?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                tracing::warn!(kernel = %id.kernel, problem = %id.problem, "another process is tuning this kernel and problem; waiting for it to finish");
                file.lock().ok()?;
            }
            Err(std::fs::TryLockError::Error(_)) => return None,
        }
        Some(EntryLock { _file: file })
    }
}

/// One entry's measurements for priors: its id, the target's name, and its measured configs.
pub type Elsewhere = (EntryId, String, MeasuredTimes);

/// An entry's measured times (from a JSON database, where the records are at hand).
fn measured_times(e: &Entry, compile: bool) -> MeasuredTimes {
    let mut t = MeasuredTimes::default();
    for (k, m) in &e.measurements {
        t.push(k, m.stats().map(|s| s.mean), m.trace.as_ref().and_then(|t| t.compile_s).filter(|_| compile));
        if let (Some(_), Some(tr)) = (m.stats(), &m.trace) {
            t.seconds.push((tr.compile_s, tr.eval_s));
        }
    }
    t
}

/// One entry's measured configs as priors read them: each config's key, mean time (`None`: it
/// failed) and compile seconds (`None`: not compiled in the run that measured it). The keys are
/// packed into one string, so reading 20,000 configs grows two buffers instead of allocating
/// 20,000 strings.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeasuredTimes {
    keys: String,
    /// Per config: where its key ends in `keys`, its time and its compile seconds.
    rows: Vec<(usize, Option<f64>, Option<f64>)>,
    /// Compile and evaluation seconds of successful configs as the tune that measured them
    /// recorded them (`None` where it did not: older records, compile-cache hits), for a sample
    /// of the configs (up to [`SECONDS_SAMPLE`], spread over them in key order) or all of them.
    pub seconds: Vec<(Option<f64>, Option<f64>)>,
}

/// How many of an entry's configs [`Database::times_elsewhere`] reads the compile and evaluation
/// seconds of (from their records).
pub const SECONDS_SAMPLE: usize = 64;

impl MeasuredTimes {
    /// Appends a config.
    pub fn push(&mut self, key: &str, time: Option<f64>, compile_s: Option<f64>) {
        self.keys.push_str(key);
        self.rows.push((self.keys.len(), time, compile_s));
    }

    /// How many configs.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Each config's key, time and compile seconds, in the order they were read.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, Option<f64>, Option<f64>)> + '_ {
        (0..self.rows.len()).map(|i| {
            let (end, time, compile_s) = self.rows[i];
            let start = if i == 0 { 0 } else { self.rows[i - 1].0 };
            (&self.keys[start..end], time, compile_s)
        })
    }
}

/// Held while a process tunes one entry (see [`Database::lock_entry`]).
#[derive(Debug)]
pub struct EntryLock {
    _file: File,
}

/// Warns, once per process for each, of a record the database at `path` holds but this build
/// cannot decode (`what`: which, and why): it is skipped, and left in the file as it is (a
/// config measured again, or an entry tuned again, replaces it). One damaged record (edited by
/// hand, written by a build with a bug) must not cost every other measurement in the file.
fn unreadable(path: &Path, what: String, then: &str) {
    static SEEN: std::sync::Mutex<std::collections::BTreeSet<String>> = std::sync::Mutex::new(std::collections::BTreeSet::new());
    let id = format!("{}\u{0}{what}", path.display());
    if SEEN.lock().unwrap_or_else(|e| e.into_inner()).insert(id) {
        tracing::warn!("database {}: {what}; skipped, and left in the file as it is ({then})", path.display());
    }
}

/// An entry's header decoded. Where it cannot be, it is decoded again without the optional
/// parts that cannot be read alone (the winner, the origin, the run notes: a tune writes them
/// anew), and the second value says which were left out and why; only a header whose other
/// fields are damaged is an error.
fn decode_header(mut v: serde_json::Value) -> Result<(Entry, Option<String>), serde_json::Error> {
    let err = match serde_json::from_value::<Entry>(v.clone()) {
        Ok(e) => return Ok((e, None)),
        Err(err) => err,
    };
    let Some(o) = v.as_object_mut() else { return Err(err) };
    let readable = |k: &str, x: &serde_json::Value| match k {
        "winner" => serde_json::from_value::<Option<Winner>>(x.clone()).is_ok(),
        "origin" => serde_json::from_value::<Option<Origin>>(x.clone()).is_ok(),
        _ => serde_json::from_value::<Vec<RunNote>>(x.clone()).is_ok(),
    };
    let dropped: Vec<&str> = ["winner", "origin", "runs"].into_iter().filter(|k| o.get(*k).is_some_and(|x| !readable(k, x))).collect();
    if dropped.is_empty() {
        return Err(err);
    }
    for k in &dropped {
        o.remove(*k);
    }
    let what = dropped.iter().map(|k| if *k == "runs" { "run notes" } else { k }).collect::<Vec<_>>().join(" and ");
    let them = if dropped.len() == 1 { "it" } else { "them" };
    serde_json::from_value(v).map(|e| (e, Some(format!("its {what} cannot be read ({err}); the entry is read without {them}")))).map_err(|_| err)
}

/// Entry `key`'s header as read from `path` (`Err`: it is no JSON), decoded by
/// [`decode_header`]; what cannot be read is warned of ([`unreadable`]). `None` where the
/// entry cannot be read at all; with it, whether a part of it was left out.
fn read_header(path: &Path, key: &str, header: serde_json::Result<serde_json::Value>) -> Option<(Entry, bool)> {
    let quoted = crate::spec::error::quote(key);
    match header.and_then(decode_header) {
        Ok((e, partial)) => {
            if let Some(partial) = &partial {
                unreadable(path, format!("in entry {quoted}, {partial}"), "tuning its kernel and problem again writes them anew");
            }
            Some((e, partial.is_some()))
        }
        Err(err) => {
            unreadable(path, format!("entry {quoted} cannot be read ({err})"), "tuning its kernel and problem again writes it anew");
            None
        }
    }
}

/// A measurement of `config` in entry `key` as read from `path`; `None`, warned of
/// ([`unreadable`]), where it cannot be decoded.
fn read_measurement(path: &Path, key: &str, config: &str, record: serde_json::Result<Measurement>) -> Option<Measurement> {
    record
        .map_err(|err| {
            unreadable(
                path,
                format!("the measurement of {} in entry {} cannot be read ({err})", crate::spec::error::quote(config), crate::spec::error::quote(key)),
                "measuring that config again replaces it",
            )
        })
        .ok()
}

/// Entry `key`, if present; records that cannot be decoded are skipped ([`unreadable`]): a
/// header's winner, origin or run notes, as if it had none ([`decode_header`]); the rest of a
/// header, as if the entry were absent (its measurements stay in the file, and come back once a
/// tune writes the header again); a measurement, as if that config were not measured.
fn read_entry(c: &rusqlite::Connection, path: &Path, key: &str) -> rusqlite::Result<Option<Entry>> {
    use rusqlite::OptionalExtension;
    let Some(header): Option<String> = c.query_row("SELECT header FROM entries WHERE key = ?1", [key], |r| r.get(0)).optional()? else {
        return Ok(None);
    };
    let Some((mut e, _)) = read_header(path, key, serde_json::from_str(&header)) else { return Ok(None) };
    let mut st = c.prepare_cached("SELECT config, record FROM measurements WHERE entry = ?1")?;
    let rows = st.query_map([key], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
    for row in rows {
        let (config, record) = row?;
        if let Some(m) = read_measurement(path, key, &config, serde_json::from_str(&record)) {
            e.measurements.insert(config, m);
        }
    }
    Ok(Some(e))
}

fn read_all(c: &rusqlite::Connection, path: &Path) -> rusqlite::Result<DbFile> {
    let mut file = DbFile::default();
    let keys: Vec<String> = c.prepare("SELECT key FROM entries ORDER BY key")?.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
    for key in keys {
        if let Some(e) = read_entry(c, path, &key)? {
            file.entries.insert(key, e);
        }
    }
    Ok(file)
}

/// Writes what changed between `before` and `after` (`None`: absent) for entry `key`; with
/// `compile_column`, each measurement's compile seconds into their column too
/// ([`NO_COMPILE_S`] where it has none; without the column, a database not prepared for priors,
/// they are only in the record).
fn write_entry(c: &rusqlite::Connection, compile_column: bool, key: &str, before: Option<&Entry>, after: Option<&Entry>) -> rusqlite::Result<()> {
    let Some(after) = after else {
        c.execute("DELETE FROM measurements WHERE entry = ?1", [key])?;
        c.execute("DELETE FROM entries WHERE key = ?1", [key])?;
        return Ok(());
    };
    let header = |e: &Entry| serde_json::to_string(&Entry { measurements: BTreeMap::new(), ..e.clone() }).expect("an entry serializes");
    let new_header = header(after);
    if before.map(header).as_ref() != Some(&new_header) {
        c.execute("INSERT OR REPLACE INTO entries(key, header) VALUES (?1, ?2)", rusqlite::params![key, new_header])?;
    }
    let mut put = c.prepare_cached(if compile_column {
        "INSERT OR REPLACE INTO measurements(entry, config, record, time, compile_s) VALUES (?1, ?2, ?3, ?4, ?5)"
    } else {
        "INSERT OR REPLACE INTO measurements(entry, config, record, time) VALUES (?1, ?2, ?3, ?4)"
    })?;
    for (k, m) in &after.measurements {
        if before.and_then(|b| b.measurements.get(k)) != Some(m) {
            let record = serde_json::to_string(m).expect("a measurement serializes");
            let time = m.stats().map(|s| s.mean);
            if compile_column {
                put.execute(rusqlite::params![key, k, record, time, m.trace.as_ref().and_then(|t| t.compile_s).unwrap_or(NO_COMPILE_S)])?;
            } else {
                put.execute(rusqlite::params![key, k, record, time])?;
            }
        }
    }
    if let Some(b) = before {
        let mut del = c.prepare_cached("DELETE FROM measurements WHERE entry = ?1 AND config = ?2")?;
        for k in b.measurements.keys().filter(|k| !after.measurements.contains_key(*k)) {
            del.execute(rusqlite::params![key, k])?;
        }
    }
    Ok(())
}

/// Whether the measurements table has the `compile_s` column.
fn has_compile_column(c: &rusqlite::Connection) -> bool {
    c.query_row("SELECT count(*) FROM pragma_table_info('measurements') WHERE name = 'compile_s'", [], |r| r.get::<_, i64>(0)).is_ok_and(|n| n == 1)
}

/// Whether an SQLite error is "database is locked" (or a table of it).
fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _) if matches!(f.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked))
}

/// Whether an SQLite error says the file (or its folder) cannot be written.
fn is_read_only(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _) if matches!(f.code, rusqlite::ErrorCode::ReadOnly | rusqlite::ErrorCode::CannotOpen))
}

fn with_suffix(p: &Path, suffix: &str) -> PathBuf {
    let mut s = p.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

fn lock_path(p: &Path) -> PathBuf {
    with_suffix(p, ".lock")
}

/// kerntune's cache directory (database, compile caches): `$KERNTUNE_CACHE_DIR`, else the
/// platform cache directory's `kerntune`, else `./.kerntune`.
pub fn cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("KERNTUNE_CACHE_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    dirs::cache_dir().map(|d| d.join("kerntune")).unwrap_or_else(|| PathBuf::from(".kerntune"))
}

/// Seconds since the Unix epoch.
pub fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problems_are_listed_in_numeric_order() {
        use std::cmp::Ordering::*;
        assert_eq!(problem_cmp("n=65536", "n=1048576"), Less);
        assert_eq!(problem_cmp("M=2048,N=64", "M=1024,N=4096"), Greater);
        assert_eq!(problem_cmp("M=1024,N=64", "M=1024,N=4096"), Less);
        assert_eq!(problem_cmp("mode=b", "mode=a"), Greater);
        assert_eq!(problem_cmp("n=1", "n=1"), Equal);
    }

    /// File systems other hosts may share read as such by their magic numbers, and as the
    /// 32-bit value a C long holds where it is 32 bits; local ones do not.
    #[test]
    fn shared_file_systems_are_told_by_their_magic_numbers() {
        for (magic, name) in
            [(0x6969, "NFS"), (0xFF53_4D42, "SMB"), (0xFE53_4D42, "SMB"), (0x0BD0_0BD0, "Lustre"), (0x4750_4653, "GPFS"), (0x6573_5546, "FUSE")]
        {
            assert_eq!(shared_by_magic(magic), Some(name), "{magic:#x}");
        }
        // ext4, XFS, Btrfs, tmpfs, overlayfs, ZFS.
        for magic in [0xEF53, 0x5846_5342, 0x9123_683E, 0x0102_1994, 0x794C_7630, 0x2FC1_2FC1] {
            assert_eq!(shared_by_magic(magic), None, "{magic:#x}");
        }
        assert_eq!(shared_by_magic((0xFF53_4D42u32 as i32 as i64 as u64) & 0xFFFF_FFFF), Some("SMB"));
        assert_eq!(Journal::Rollback.mode(), "DELETE");
        assert_eq!(Journal::Wal.mode(), "WAL");
    }

    /// A span of a kind a newer kerntune writes still reads (a fleet's database is shared
    /// between versions); the kinds this one writes read back as written.
    #[test]
    fn a_span_of_a_kind_unknown_here_still_reads() {
        let s: Span = serde_json::from_str(r#"{"what":"warm_up","device":0,"from_s":1.5,"to_s":2.0}"#).unwrap();
        assert_eq!((s.what, s.device, s.seconds()), (SpanKind::Other, Some(0), 0.5));
        let r = Span::new(SpanKind::Recheck, Some(1), 3.0, 0.25);
        let text = serde_json::to_string(&r).unwrap();
        assert!(text.contains(r#""what":"recheck""#), "{text}");
        assert_eq!(serde_json::from_str::<Span>(&text).unwrap(), r);
    }

    /// Many connections opening a database that does not exist yet, all at once (shards or
    /// tunes started together on a fresh cache): each gets in. SQLite answers some of them
    /// "database is locked" at once, without waiting, while another is creating the file (a
    /// lock it cannot wait for without risking a deadlock), so the set-up is retried.
    #[test]
    fn connections_opening_a_new_database_at_once_all_get_in() {
        let dir = tempfile::tempdir().unwrap();
        for round in 0..32 {
            let path = dir.path().join(format!("db-{round}.sqlite"));
            let start = std::sync::Barrier::new(16);
            let opened: Vec<Result<(), String>> = std::thread::scope(|s| {
                let handles: Vec<_> = (0..16)
                    .map(|_| {
                        s.spawn(|| {
                            start.wait();
                            Database::at(&path).open(true).map(|c| assert!(c.is_some())).map_err(|e| e.to_string())
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            let failed: Vec<&String> = opened.iter().filter_map(|r| r.as_ref().err()).collect();
            assert!(failed.is_empty(), "round {round}: {} of 16 failed: {:?}", failed.len(), failed.first());
        }
    }

    /// A record this build cannot decode (a measurement, or an entry's header) is skipped on
    /// reading, not the whole file refused, and stays in the file as it is: a write of the entry
    /// leaves it; measuring that config again replaces it; tuning the entry again writes its
    /// header anew, and its measurements read again.
    #[test]
    fn a_record_that_cannot_be_read_costs_only_itself() {
        use crate::measure::stats::Stats;
        use crate::space::config::Config;
        let dir = tempfile::tempdir().unwrap();
        let db = Database::at(dir.path().join("db.sqlite"));
        let id = |k: &str| EntryId { kernel: k.into(), kernel_hash: "h".into(), target: "t".into(), toolchain: "c".into(), problem: "n=1".into() };
        let m = |x: i64, t: f64| {
            let c = Config::new([("x", crate::spec::value::Value::Int(x))]);
            (c.key(), Measurement::timed(c, Stats::from_samples(&[t, t], false), 1))
        };
        for k in ["a", "b"] {
            db.update_entry(&id(k), |e| {
                let mut n = Entry::new(id(k), "T".into(), Environment::default());
                for x in 1..=3 {
                    let (key, v) = m(x, x as f64);
                    n.measurements.insert(key, v);
                }
                *e = Some(n);
            })
            .unwrap();
        }
        let sql = rusqlite::Connection::open(dir.path().join("db.sqlite")).unwrap();
        let x2 = m(2, 0.0).0;
        sql.execute("UPDATE measurements SET record = '{\"config\": 7}' WHERE entry = ?1 AND config = ?2", [id("a").key(), x2.clone()]).unwrap();
        sql.execute("UPDATE entries SET header = '{\"kernel\": 7}' WHERE key = ?1", [id("b").key()]).unwrap();
        let read = db.load().unwrap();
        assert_eq!(read.entries.len(), 1, "the entry whose header cannot be read is skipped");
        let a = &read.entries[&id("a").key()];
        assert_eq!(a.measurements.len(), 2, "the measurement that cannot be read is skipped");
        assert!(db.entry(&id("b")).unwrap().is_none());
        let rows = |e: &str| -> i64 { sql.query_row("SELECT count(*) FROM measurements WHERE entry = ?1", [e], |r| r.get(0)).unwrap() };
        // A write of the entry (a fourth config) leaves the damaged record in the file.
        db.update_entry(&id("a"), |e| {
            let (key, v) = m(4, 4.0);
            e.as_mut().unwrap().measurements.insert(key, v);
        })
        .unwrap();
        assert_eq!(rows(&id("a").key()), 4);
        assert_eq!(db.entry(&id("a")).unwrap().unwrap().measurements.len(), 3);
        // Measuring that config again replaces it.
        db.update_entry(&id("a"), |e| {
            let (key, v) = m(2, 2.5);
            e.as_mut().unwrap().measurements.insert(key, v);
        })
        .unwrap();
        let a = db.entry(&id("a")).unwrap().unwrap();
        assert_eq!((a.measurements.len(), a.measurements[&x2].stats().map(|s| s.mean)), (4, Some(2.5)));
        // Tuning `b` again writes its header; its three measurements read again beside the new one.
        db.update_entry(&id("b"), |e| {
            assert!(e.is_none());
            let mut n = Entry::new(id("b"), "T".into(), Environment::default());
            let (key, v) = m(9, 9.0);
            n.measurements.insert(key, v);
            *e = Some(n);
        })
        .unwrap();
        assert_eq!(db.entry(&id("b")).unwrap().unwrap().measurements.len(), 4);
        assert_eq!(db.load().unwrap().entries.len(), 2);
        // A table dropped by hand is made again (empty) where the file can be written, not
        // SQLite's "no such table" on every read; the entries are kept.
        sql.execute_batch("DROP TABLE measurements").unwrap();
        let read = db.load().unwrap();
        assert_eq!(read.entries.len(), 2);
        assert!(read.entries.values().all(|e| e.measurements.is_empty()));
    }

    /// A database where none can be (under a file, say from a mistyped KERNTUNE_CACHE_DIR): the
    /// error names the folder and says where else it can go (it said only `Not a directory`).
    #[test]
    fn a_database_where_none_can_be_says_where_else_it_can_go() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a-file");
        std::fs::write(&file, "x").unwrap();
        let id = EntryId { kernel: "k".into(), kernel_hash: "h".into(), target: "t".into(), toolchain: "c".into(), problem: "n=1".into() };
        for path in [file.join("db.sqlite"), file.join("sub").join("db.sqlite")] {
            let e = Database::at(&path).update_entry(&id, |e| *e = Some(Entry::new(id.clone(), "T".into(), Environment::default()))).unwrap_err().to_string();
            let folder = path.parent().unwrap().display().to_string();
            assert!(e.contains(&format!("{folder} is no folder this process can write")) && e.contains("--db FILE") && e.contains("--no-db"), "{e}");
        }
    }

    /// The same for a database in JSON (kerntune's export, or a database from before SQLite):
    /// a damaged measurement, a winner that cannot be read and a `NaN` written by hand cost
    /// only their records (the whole file was refused as corrupt); converting such a file to
    /// SQLite for a tune keeps the JSON as it was beside it, since the SQLite lacks them.
    #[test]
    fn a_json_database_s_damaged_records_cost_only_themselves() {
        use crate::measure::stats::Stats;
        use crate::space::config::Config;
        let dir = tempfile::tempdir().unwrap();
        let id = |k: &str| EntryId { kernel: k.into(), kernel_hash: "h".into(), target: "t".into(), toolchain: "c".into(), problem: "n=1".into() };
        let m = |x: i64| {
            let c = Config::new([("x", crate::spec::value::Value::Int(x))]);
            (c.key(), Measurement::timed(c, Stats::from_samples(&[x as f64, x as f64], false), 1))
        };
        let mut file = DbFile::default();
        for k in ["a", "b"] {
            let mut n = Entry::new(id(k), "T".into(), Environment::default());
            for x in 1..=3 {
                let (key, v) = m(x);
                n.measurements.insert(key, v);
            }
            file.entries.insert(id(k).key(), n);
        }
        let mut v = serde_json::to_value(&file).unwrap();
        let (x2, x3) = (m(2).0, m(3).0);
        v["entries"][id("a").key()]["measurements"][&x2] = serde_json::json!({"config": 7});
        v["entries"][id("a").key()]["measurements"][&x3] = serde_json::json!({"config": "__nan__"});
        v["entries"][id("b").key()]["winner"] = serde_json::json!({"config": 7});
        let text = v.to_string().replace("\"__nan__\"", "NaN");
        assert!(text.contains(":NaN"));
        let path = dir.path().join("db.json");
        // With a byte-order mark, as a Windows editor saves it.
        std::fs::write(&path, format!("\u{feff}{text}")).unwrap();
        assert_eq!(Database::at(&path).load().unwrap().entries.len(), 2);
        std::fs::write(&path, &text).unwrap();
        let db = Database::at(&path);
        let read = db.load().unwrap();
        assert_eq!(read.entries.len(), 2, "both entries read");
        assert_eq!(read.entries[&id("a").key()].measurements.len(), 1, "the two damaged measurements skipped");
        let b = &read.entries[&id("b").key()];
        assert_eq!((b.measurements.len(), b.winner.is_none()), (3, true), "the damaged winner left out, the measurements kept");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "reading leaves the file as it is");
        // A tune's write converts it to SQLite; the JSON as it was is kept beside it.
        db.update_entry(&id("a"), |e| {
            let (key, v) = m(4);
            e.as_mut().unwrap().measurements.insert(key, v);
        })
        .unwrap();
        assert_eq!(std::fs::read_to_string(dir.path().join("db.json.unreadable-records.json")).unwrap(), text);
        assert_eq!(db.entry(&id("a")).unwrap().unwrap().measurements.len(), 2);
        assert_eq!(db.entry(&id("b")).unwrap().unwrap().measurements.len(), 3);
        // Entries that are no object of entries: the file is refused, naming the field.
        std::fs::write(&path, r#"{"schema": "kerntune-db", "version": 1, "entries": [1]}"#).unwrap();
        let e = Database::at(&path).load().unwrap_err().to_string();
        assert!(e.contains("`entries` is [1], not an object of entries"), "{e}");
        // JSON that is no kerntune database (a file of the user's named by mistake): said so,
        // and never the advice to clear it; a damaged T4 file is read as one, to say where.
        std::fs::write(&path, r#"{"name": "my settings"}"#).unwrap();
        let e = Database::at(&path).load().unwrap_err().to_string();
        assert!(e.contains("is not a kerntune database (JSON without") && !e.contains("db clear"), "{e}");
        std::fs::write(&path, r#"{"results": 7}"#).unwrap();
        assert!(matches!(Database::at(&path).load(), Err(DbError::Foreign { kind: "a T4 results file", .. })));
        // Nor is a file that is no JSON at all (a TOML file, whose table headers start like a
        // JSON list; a text file), however it starts; one that names kerntune's schema and
        // does not parse is a damaged database.
        for text in ["[package]\nname = \"x\"\n", "plain text\n"] {
            std::fs::write(&path, text).unwrap();
            let e = Database::at(&path).load().unwrap_err();
            assert!(matches!(e, DbError::NotOurs { .. }) && !e.to_string().contains("db clear"), "{text:?}: {e}");
        }
        std::fs::write(&path, r#"{"schema": "kerntune-db", "version": 1, "entries": {"#).unwrap();
        assert!(matches!(Database::at(&path).load(), Err(DbError::Corrupt { .. })));
        // Another program's SQLite database is not ours either, and is left as it was: no
        // kerntune table is added to it, by a read or by a write.
        let app = dir.path().join("app.db");
        let c = rusqlite::Connection::open(&app).unwrap();
        c.execute_batch("CREATE TABLE users(id INTEGER); INSERT INTO users VALUES (1);").unwrap();
        drop(c);
        let before = std::fs::read(&app).unwrap();
        let e = Database::at(&app).load().unwrap_err();
        assert!(matches!(e, DbError::NotOurs { .. }) && e.to_string().contains("its tables `users`"), "{e}");
        assert!(Database::at(&app).update(|_| ()).is_err());
        assert_eq!(std::fs::read(&app).unwrap(), before, "left as it was");
        // The read-only path (a file this process cannot write) says the same, not "corrupt";
        // so does it for a `meta` table of another schema, and one naming none.
        let e = Database::at(&app).open_read_only().unwrap_err();
        assert!(matches!(e, DbError::NotOurs { .. }) && e.to_string().contains("its tables `users`"), "{e}");
        for (rows, says) in [("INSERT INTO meta VALUES ('schema', 'app')", "of schema `app`"), ("", "without kerntune's schema row")] {
            let other = dir.path().join("other.db");
            let _ = std::fs::remove_file(&other);
            let c = rusqlite::Connection::open(&other).unwrap();
            c.execute_batch(&format!("CREATE TABLE meta(name TEXT PRIMARY KEY, value TEXT NOT NULL); {rows};")).unwrap();
            drop(c);
            let e = Database::at(&other).open_read_only().unwrap_err();
            assert!(matches!(e, DbError::NotOurs { .. }) && e.to_string().contains(says), "{e}");
        }
        // A folder is said to be one.
        let e = Database::at(dir.path()).load().unwrap_err().to_string();
        assert!(e.ends_with(&format!("is a folder; name a database file in it (such as {})", dir.path().join("db.sqlite").display())), "{e}");
    }

    /// An entry is named by its kernel and problem, or its kernel alone where the problem has
    /// no sizes.
    #[test]
    fn an_entry_is_named_by_its_kernel_and_problem() {
        let mut id = EntryId { kernel: "triad".into(), kernel_hash: "h".into(), target: "t".into(), toolchain: "c".into(), problem: "N=1024".into() };
        assert_eq!(id.label(), "triad (N=1024)");
        id.problem.clear();
        assert_eq!(id.label(), "triad");
    }

    /// Run notes merge as the measurements do: the union, the same whichever side is merged
    /// into the other, the newest kept; a header written before they existed reads without them.
    #[test]
    fn run_notes_merge_both_ways_alike() {
        let id = EntryId { kernel: "k".into(), kernel_hash: "h".into(), target: "t".into(), toolchain: "c".into(), problem: "n=1".into() };
        let note = |run: u64, prior: Option<&str>| RunNote {
            run,
            strategy: "transfer".into(),
            prior: prior.map(Into::into),
            search: None,
            findings: Vec::new(),
            verification: None,
            memcheck: None,
            time: None,
            winner_withheld: None,
            time_limit_ms: None,
            shard: None,
        };
        let mut a = Entry::new(id.clone(), "A".into(), Environment::default());
        let mut b = a.clone();
        a.note_runs(&[note(3, Some("prior: 1 target, 9 measurements (db)")), note(1, None)]);
        b.note_runs(&[note(2, None), note(1, None)]);
        let (mut ab, mut ba) = (a.clone(), b.clone());
        ab.merge(&b);
        ba.merge(&a);
        assert_eq!(ab, ba);
        assert_eq!(ab.runs.iter().map(|r| r.run).collect::<Vec<_>>(), [1, 2, 3]);
        let many: Vec<RunNote> = (0..100).map(|r| note(r, None)).collect();
        ab.note_runs(&many);
        assert_eq!((ab.runs.len(), ab.runs[0].run, ab.runs.last().map(|r| r.run)), (RUN_NOTES, 100 - RUN_NOTES as u64, Some(99)));
        let old = r#"{"kernel":"k","kernel_hash":"h","target":"t","toolchain":"c","problem":"n=1","target_name":"A","env":{"kerntune":"0.1","host":"","timing":"events"},"measurements":{}}"#;
        assert!(serde_json::from_str::<Entry>(old).unwrap().runs.is_empty());
        // A run noted again with its findings keeps one note, the one with them, either way.
        let found = RunNote { findings: vec!["device lost: `x` holds 1024 elements".into()], ..note(99, None) };
        let (mut c, mut d) = (ab.clone(), ab.clone());
        c.note_runs([&found]);
        d.note_runs(&[note(99, None)]);
        d.note_runs([&found]);
        assert_eq!(c.runs.iter().filter(|r| r.run == 99).collect::<Vec<_>>(), [&found]);
        assert_eq!(c.runs, d.runs);
        let mut e = Entry::new(id.clone(), "A".into(), Environment::default());
        e.note_runs([&found]);
        e.note_runs(&[note(99, None)]);
        assert_eq!(e.runs, [found], "the note without findings does not replace the one with them");
    }

    /// A few shards are named one by one; hundreds are cut short, each list with its count.
    #[test]
    fn the_shards_of_a_part_are_listed_short() {
        let have = |ks: &[usize]| ks.iter().copied().collect::<std::collections::BTreeSet<usize>>();
        assert_eq!(shards_part(&have(&[0]), 3).as_deref(), Some("shard 0/3 only; 1/3, 2/3 not merged"));
        assert_eq!(shards_part(&have(&[0, 1, 2]), 3), None);
        assert_eq!(
            shards_part(&have(&[1, 2]), 400).as_deref(),
            Some("shard 1/400, 2/400 only; 0/400, 3/400, 4/400, 5/400, 6/400, 7/400, …, 399/400 (398 in all) not merged")
        );
    }
}
