//! Error types. Backend errors are what a backend reports about one config or the device;
//! [`crate::run::Error`] is what a tuning job reports to its caller.

use crate::limits::LimitViolation;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// What went wrong in a backend. Backend-specific details are carried as text (and, for
/// [`BackendError::Other`], boxed), so core never names a vendor type.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// The compiler rejected the kernel for this config.
    #[error("compile failed (options: {}):\n{log}", options.join(" "))]
    CompileFailed {
        /// The compiler's log.
        log: String,
        /// The options it was given.
        options: Vec<String>,
    },
    /// The launch was refused or the kernel faulted without killing the device.
    #[error("launch failed: {0}")]
    LaunchFailed(String),
    /// The config needs more of a resource than the device has.
    #[error("out of resources: {0}")]
    OutOfResources(LimitViolation),
    /// The problem's buffers cannot be placed on the device (not enough free memory now): no
    /// config can run there, so the device leaves the tune (its configs go to the others)
    /// instead of each config failing. The message says what they need and what is free.
    #[error("{0}")]
    ProblemTooLarge(String),
    /// The device's worker process (see [`crate::worker`]) could not be started, or started and
    /// could not take the problem, twice in a row: no config can run on the device, so it
    /// leaves the tune (its configs go to the others) instead of each config failing, and
    /// nothing is stored for the config it was to run. The message says what failed and what
    /// to do.
    #[error("{0}")]
    WorkerStart(String),
    /// The kernel did not finish in time.
    #[error("timed out after {:.3} s", .0.as_secs_f64())]
    TimedOut(Duration),
    /// The outputs differ from the reference.
    #[error("wrong output: {0}")]
    WrongOutput(String),
    /// The device or its context is unusable (a sticky fault, a reset); the backend must
    /// [`recover`](crate::Backend::recover) before further use.
    #[error("device lost: {0}")]
    DeviceLost(String),
    /// The process that ran kernels for this device (a worker) ended without reporting an
    /// error: killed from outside, out of memory, or a crash below the driver. Unlike
    /// [`BackendError::DeviceLost`], nothing says the config caused it, so the tuner runs the
    /// config again (on another device when it has several) before blaming it; and not at all
    /// when the system's out-of-memory killer ended it ([`BackendError::oom_killed_worker`]).
    #[error("worker died: {message}")]
    WorkerDied {
        /// What happened, in words: how the request failed, how the worker ended, its last
        /// words on standard error.
        message: String,
        /// Whether it was killed by SIGKILL, which the tuner had not sent.
        killed: bool,
        /// When killed: whether the system's out-of-memory killer ended a process of the
        /// tuner's cgroup meanwhile (see [`crate::worker::oom_kills`]); `None` where the system
        /// does not count them, or the worker was not killed.
        oom: Option<bool>,
    },
    /// The tuner stopped waiting for a compile (see [`crate::backend::abandonable`]): it ran
    /// far longer than the others, or the tune reached its time limit or was interrupted.
    #[error("compile abandoned after {:.1} s", .0.as_secs_f64())]
    Abandoned(Duration),
    /// A compiler process (see [`crate::compiler`]) ended without answering while it compiled
    /// this config: a crash of the compiler on the config's code (SIGSEGV, SIGABRT), or killed
    /// from outside (SIGKILL: most often the system's out-of-memory killer, when many large
    /// compiles run at once). Like [`BackendError::WorkerDied`], nothing yet says the config
    /// caused it: the tuner compiles the config again before blaming it (after the
    /// out-of-memory killer's SIGKILL with fewer compiles beside it).
    #[error("the {label} compiler ended while compiling this config ({status}{}){}", match (.killed, .oom) {
        (true, Some(true)) => ", by the out-of-memory killer",
        (true, Some(false)) => ", not by the out-of-memory killer",
        _ => "",
    }, .words.as_ref().map_or(String::new(), |w| format!("; its last words on stderr: {w}")))]
    CompilerDied {
        /// The compiler's label (`CUDA`, `HIP`).
        label: String,
        /// How it ended, in words (`killed by signal 9 (SIGKILL)`).
        status: String,
        /// Whether it was killed by SIGKILL, which the tuner had not sent (the system's
        /// out-of-memory killer, or a user): the machine's doing more likely than the config's.
        killed: bool,
        /// When killed: whether the system's out-of-memory killer ended a process of the
        /// tuner's cgroup while it compiled (Linux's count, see [`crate::worker::oom_kills`];
        /// compilers are its first choice), so that it most likely was the one; `None` where the
        /// system does not count them.
        oom: Option<bool>,
        /// The last lines it wrote to its standard error while compiling this config (a failed
        /// assertion, a library it could not load), in one line; `None`: nothing.
        words: Option<String>,
    },
    /// Anything else, with the backend's own error inside.
    #[error("{0}")]
    Other(Box<dyn std::error::Error + Send + Sync>),
}

impl BackendError {
    /// The failure class recorded in the database.
    pub fn kind(&self) -> FailureKind {
        match self {
            BackendError::CompileFailed { .. } => FailureKind::CompileFailed,
            BackendError::LaunchFailed(_) => FailureKind::LaunchFailed,
            BackendError::OutOfResources(_) | BackendError::ProblemTooLarge(_) => FailureKind::OutOfResources,
            BackendError::TimedOut(_) | BackendError::Abandoned(_) => FailureKind::TimedOut,
            BackendError::WrongOutput(_) => FailureKind::WrongOutput,
            BackendError::DeviceLost(_) | BackendError::WorkerDied { .. } | BackendError::WorkerStart(_) => FailureKind::DeviceLost,
            BackendError::CompilerDied { .. } | BackendError::Other(_) => FailureKind::Other,
        }
    }

    /// Whether the device's state is gone with this error (a lost device, a dead worker, a
    /// launch that never ended): the backend must [`recover`](crate::Backend::recover) before
    /// the device is used again.
    pub fn needs_recovery(&self) -> bool {
        matches!(self, BackendError::DeviceLost(_) | BackendError::WorkerDied { .. } | BackendError::TimedOut(_))
    }

    /// Whether this error says no config can run on the device that reported it — its problem
    /// does not fit ([`BackendError::ProblemTooLarge`]) or its worker cannot start
    /// ([`BackendError::WorkerStart`]) — so that the device leaves the tune and the config is
    /// not blamed.
    pub fn device_unusable(&self) -> bool {
        matches!(self, BackendError::ProblemTooLarge(_) | BackendError::WorkerStart(_))
    }

    /// A worker that died for what it was told, not for what the system did to it: killed by
    /// nobody, or by a crash (a config's doing, perhaps).
    pub fn worker_died(message: impl Into<String>) -> BackendError {
        BackendError::WorkerDied { message: message.into(), killed: false, oom: None }
    }

    /// Whether this is a worker the system's out-of-memory killer ended (SIGKILL, with its count
    /// moved meanwhile): the machine ran short of memory — most often for the compiles beside
    /// the worker — which says nothing of the config it ran.
    pub fn oom_killed_worker(&self) -> bool {
        matches!(self, BackendError::WorkerDied { killed: true, oom: Some(true), .. })
    }

    /// Wraps any error as [`BackendError::Other`].
    pub fn other(e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> BackendError {
        BackendError::Other(e.into())
    }
}

/// Failure classes, as recorded per config and counted in reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// See [`BackendError::CompileFailed`].
    CompileFailed,
    /// See [`BackendError::LaunchFailed`].
    LaunchFailed,
    /// See [`BackendError::OutOfResources`].
    OutOfResources,
    /// See [`BackendError::TimedOut`].
    TimedOut,
    /// See [`BackendError::WrongOutput`].
    WrongOutput,
    /// See [`BackendError::DeviceLost`].
    DeviceLost,
    /// Anything else.
    Other,
}

impl std::fmt::Display for FailureKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FailureKind::CompileFailed => "compile failed",
            FailureKind::LaunchFailed => "launch failed",
            FailureKind::OutOfResources => "out of resources",
            FailureKind::TimedOut => "timed out",
            FailureKind::WrongOutput => "wrong output",
            FailureKind::DeviceLost => "device lost",
            FailureKind::Other => "other",
        })
    }
}

/// Why a backend could not be opened. The three cases are distinct on purpose: each asks the
/// user to do something different.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The binary was built without this backend's cargo feature.
    #[error("the {backend} backend is not compiled in; rebuild with `--features {backend}`")]
    NotCompiledIn {
        /// `cuda`, `hip` or `wgpu`.
        backend: String,
    },
    /// The driver/runtime library could not be loaded.
    #[error("{library} not found ({detail}); install the {backend} driver/runtime or pick another backend with --backend")]
    LibraryNotFound {
        /// Backend name.
        backend: String,
        /// The library's human name, e.g. "CUDA driver library".
        library: String,
        /// Loader detail.
        detail: String,
    },
    /// The library loaded but found no device.
    #[error("{message}")]
    NoDevice {
        /// Backend name.
        backend: String,
        /// e.g. "no CUDA device".
        message: String,
    },
    /// Opening failed otherwise.
    #[error("{backend}: {message}")]
    Other {
        /// Backend name.
        backend: String,
        /// What happened.
        message: String,
    },
}
