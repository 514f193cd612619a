//! The winner database: every measured config, failures with reasons, and the winner, per
//! kernel × target × toolchain × problem key.
//!
//! # Format (schema version 1)
//! One JSON file (`db.json`; see [`Database::default_path`]):
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
//! A failed measurement has `"status": "failed"` with `failure` (kind) and `message`.
//!
//! # Concurrency and durability
//! Every write takes an exclusive lock on `<file>.lock`, re-reads the file, merges its change
//! into what is there, writes a temporary file in the same directory, fsyncs it, renames it over
//! the database and fsyncs the directory. Concurrent processes therefore never lose each
//! other's entries, and a crash leaves either the old or the new file, never a torn one.
//! A file that does not parse is reported and left untouched.

use crate::error::FailureKind;
use crate::measure::stats::Stats;
use crate::plan::prune::ResourceUsage;
use crate::space::config::Config;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Schema version written by this build; older versions are refused with a message.
pub const SCHEMA_VERSION: u32 = 1;
const SCHEMA_NAME: &str = "kerntune-db";

/// Database errors.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// Reading, writing or locking failed.
    #[error("database {path}: {action} failed: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What was being done.
        action: &'static str,
        /// The OS error.
        source: std::io::Error,
    },
    /// The file is not a valid database. It is left untouched.
    #[error("database {path} is corrupt ({detail}); it was left untouched — move it aside or run `kerntune db clear --db {path}` to start over")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What the parser said.
        detail: String,
    },
    /// The file has a schema this build does not read.
    #[error("database {path} has schema version {found}, this kerntune reads version {SCHEMA_VERSION}; use a matching kerntune or export and clear it")]
    Version {
        /// The file.
        path: PathBuf,
        /// The version found.
        found: u32,
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
    /// The map key: fields joined by `|`.
    pub fn key(&self) -> String {
        format!("{}|{}|{}|{}|{}", self.kernel, self.kernel_hash, self.target, self.toolchain, self.problem)
    }
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
}

impl Measurement {
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
}

impl Entry {
    /// An empty entry.
    pub fn new(id: EntryId, target_name: String, env: Environment) -> Entry {
        Entry { id, target_name, env, measurements: BTreeMap::new(), winner: None }
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
            (Some(a), Some(b)) => {
                let a_first = a.stats.mean.total_cmp(&b.stats.mean).then(a.config.cmp(&b.config)).then(a.at.cmp(&b.at)).is_le();
                Some(if a_first { a } else { b })
            }
            (a, b) => a.or(b),
        };
        if self.env.host.is_empty() || (other.env.host < self.env.host && !other.env.host.is_empty()) {
            self.env = other.env.clone();
        }
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

    /// Parses a database file's text.
    pub fn parse(text: &str, path: &Path) -> Result<DbFile, DbError> {
        let v: serde_json::Value = serde_json::from_str(text).map_err(|e| DbError::Corrupt { path: path.into(), detail: e.to_string() })?;
        if v.get("schema").and_then(|s| s.as_str()) != Some(SCHEMA_NAME) {
            return Err(DbError::Corrupt { path: path.into(), detail: format!("missing \"schema\": \"{SCHEMA_NAME}\"") });
        }
        let found = v.get("version").and_then(|s| s.as_u64()).unwrap_or(0) as u32;
        if found != SCHEMA_VERSION {
            return Err(DbError::Version { path: path.into(), found });
        }
        serde_json::from_value(v).map_err(|e| DbError::Corrupt { path: path.into(), detail: e.to_string() })
    }
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

    /// `$KERNTUNE_CACHE_DIR/db.json`, else the platform cache directory
    /// (`~/.cache/kerntune/db.json` on Linux), else `./.kerntune/db.json`.
    pub fn default_path() -> PathBuf {
        cache_dir().join("db.json")
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the database; a missing file is an empty database.
    pub fn load(&self) -> Result<DbFile, DbError> {
        match fs::read_to_string(&self.path) {
            Ok(text) => DbFile::parse(&text, &self.path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(DbFile::default()),
            Err(source) => Err(DbError::Io { path: self.path.clone(), action: "reading", source }),
        }
    }

    /// One entry, if present.
    pub fn entry(&self, id: &EntryId) -> Result<Option<Entry>, DbError> {
        Ok(self.load()?.entries.remove(&id.key()))
    }

    /// Applies `change` to the current contents under the lock and writes atomically.
    pub fn update<T>(&self, change: impl FnOnce(&mut DbFile) -> T) -> Result<T, DbError> {
        let io = |action: &'static str| {
            let path = self.path.clone();
            move |source| DbError::Io { path, action, source }
        };
        let dir = self.path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf();
        fs::create_dir_all(&dir).map_err(io("creating its directory"))?;
        let lock_path = lock_path(&self.path);
        let lock = OpenOptions::new().create(true).truncate(false).write(true).open(&lock_path).map_err(io("opening the lock file"))?;
        lock.lock().map_err(io("locking"))?;
        let mut file = self.load()?;
        let out = change(&mut file);
        let text = serde_json::to_string_pretty(&file).expect("database serializes");
        let tmp = dir.join(format!(
            ".{}.tmp.{}.{:?}",
            self.path.file_name().and_then(|n| n.to_str()).unwrap_or("db"),
            std::process::id(),
            std::thread::current().id()
        ));
        {
            let mut f = File::create(&tmp).map_err(io("creating a temporary file"))?;
            f.write_all(text.as_bytes()).map_err(io("writing"))?;
            f.sync_all().map_err(io("syncing"))?;
        }
        fs::rename(&tmp, &self.path).map_err(io("renaming the temporary file"))?;
        if let Ok(d) = File::open(&dir) {
            let _ = d.sync_all();
        }
        drop(lock);
        Ok(out)
    }

    /// Removes the file (under the lock).
    pub fn clear(&self) -> Result<bool, DbError> {
        let lock_path = lock_path(&self.path);
        if let Some(dir) = self.path.parent().filter(|p| !p.as_os_str().is_empty()) {
            let _ = fs::create_dir_all(dir);
        }
        let lock = OpenOptions::new().create(true).truncate(false).write(true).open(&lock_path);
        if let Ok(l) = &lock {
            let _ = l.lock();
        }
        match fs::remove_file(&self.path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(source) => Err(DbError::Io { path: self.path.clone(), action: "removing", source }),
        }
    }
}

fn lock_path(p: &Path) -> PathBuf {
    let mut s = p.as_os_str().to_owned();
    s.push(".lock");
    PathBuf::from(s)
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
