//! Worker processes that run kernels, so that a fault cannot take the tuner down — shared by the
//! CUDA, HIP and wgpu backends.
//!
//! Why: after a sticky fault (an illegal address, a kernel that never ends) a GPU runtime
//! poisons the whole process — on CUDA 13 even creating a new context fails — and a hung kernel
//! cannot be stopped from the host. A process can be killed. So the parent (the tuner)
//! compiles and decides, and a worker process owns the device state that runs kernels. When the
//! worker reports a lost device, dies, or does not answer within the launch timeout, the parent
//! kills it and starts a fresh one on next use (re-sending the problem data and, lazily, the
//! kernels).
//!
//! The worker is the host program itself, started again with the backend's worker variable set
//! (`KERNTUNE_CUDA_WORKER=1`, `KERNTUNE_HIP_WORKER=1`, `KERNTUNE_WGPU_WORKER=1`): a host program opts in by calling its
//! backend's hook first thing in `main` (`kerntune::hook()` calls every compiled-in one; the
//! CLI does). Messages are a JSON header and raw byte blobs, length-prefixed, over the worker's
//! stdin/stdout; on Linux, blobs of a mebibyte or more (the problem's buffers, the reference's
//! outputs) travel through a shared-memory file the worker inherits ([`shm`]), and only their
//! place in it through the pipe, which through a pipe took seconds for a few hundred
//! megabytes while the CPU reference kept every core busy. The problem's large buffers go
//! into one more file, shared by every worker started for the problem at the same time (a
//! tune over N devices writes them once, not N times). Verification happens in the worker against a reference it keeps, so outputs
//! are not shipped back for every config.
//!
//! A backend implements [`WorkerBackend`] (open the device in-process, load a shipped binary),
//! and [`BackendExecutor`] serves the worker's side with the backend's own [`Backend`] calls;
//! anything else can implement [`Executor`] directly. The parent's side is a [`WorkerSlot`].

use crate::backend::{Backend, Printed};
use crate::error::BackendError;
use crate::measure::timing::TimeRequest;
use crate::measure::verify::VerifyRequest;
use crate::plan::prepare::Launch;
use crate::spec::problem::{Access, ArgData, DType, HostBuffer, Memory, ProblemData};
use crate::spec::settings::L2Flush;
use crate::spec::value::Value;
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod printed;

/// The worker side of a backend: what a worker process does with the parent's requests. Every
/// method runs in the worker process, on its one thread.
pub trait Executor {
    /// Opens device `ordinal` and uploads the problem; called again with another problem, it
    /// replaces the one it holds (keeping the device and the loaded kernels).
    fn init(&mut self, ordinal: usize, problem: &Arc<ProblemData>) -> Result<(), BackendError>;
    /// Called as the worker starts, before the problem arrives, with the device it will be
    /// given: an executor may open it now, while the parent is still sending the problem.
    fn prepare(&mut self, _ordinal: usize) {}
    /// Loads a compiled kernel (`binary` from [`KernelImage`]) under `id`.
    fn load(&mut self, id: u64, name: &str, binary: Vec<u8>) -> Result<(), BackendError>;
    /// Unloads a kernel the parent dropped.
    fn unload(&mut self, id: u64);
    /// [`Backend::reset`].
    fn reset(&mut self, poison: bool) -> Result<(), BackendError>;
    /// [`Backend::time`] of kernel `id`.
    fn time(&mut self, id: u64, launch: &Launch, req: &TimeRequest) -> Result<Vec<f64>, BackendError>;
    /// [`Backend::verify`] of kernel `id`.
    fn verify(&mut self, id: u64, launch: &Launch, req: &VerifyRequest<'_>) -> Result<Vec<f64>, BackendError>;
    /// [`Backend::read_outputs`].
    fn read_outputs(&mut self, wanted: &[bool]) -> Result<Vec<HostBuffer>, BackendError>;
    /// [`Backend::bounds`] of kernel `id`.
    fn bounds(&mut self, id: u64, launch: &Launch, timeout: Duration) -> Result<Option<crate::backend::Memcheck>, BackendError> {
        let _ = (id, launch, timeout);
        Ok(None)
    }
    /// [`Backend::wrote_past`].
    fn wrote_past(&mut self) -> Result<Option<String>, BackendError> {
        Ok(None)
    }
    /// [`Backend::take_notes`]: what the device's side had to do to measure honestly.
    fn take_notes(&mut self) -> Vec<String> {
        Vec::new()
    }
}

/// A backend whose kernels can be loaded from the binaries the parent ships. For such a
/// backend, [`BackendExecutor`] is the worker's side, through the [`Backend`] trait itself.
pub trait WorkerBackend: Backend + Sized {
    /// Opens device `ordinal` with kernels running in this process (in the worker).
    fn open_for_worker(ordinal: usize) -> Result<Self, BackendError>;
    /// Loads a kernel from a binary that [`KernelImage`] carried.
    fn load_binary(&self, name: &str, binary: Vec<u8>) -> Result<Self::Kernel, BackendError>;
}

/// The worker's state for a [`WorkerBackend`]: the device, the problem's workspace and the
/// loaded kernels; each request is the backend's own [`Backend`] call.
pub struct BackendExecutor<B: WorkerBackend> {
    backend: Option<B>,
    ws: Option<B::Workspace>,
    kernels: HashMap<u64, B::Kernel>,
    /// The device opened as the worker started (see [`Executor::prepare`]), or why not: an
    /// error is met again, and reported, by `init`.
    opened: Option<(usize, Result<B, BackendError>)>,
}

impl<B: WorkerBackend> Default for BackendExecutor<B> {
    fn default() -> Self {
        BackendExecutor { backend: None, ws: None, kernels: HashMap::new(), opened: None }
    }
}

impl<B: WorkerBackend> BackendExecutor<B> {
    fn parts(&mut self) -> Result<(&B, &mut B::Workspace), BackendError> {
        match (&self.backend, &mut self.ws) {
            (Some(b), Some(ws)) => Ok((b, ws)),
            _ => Err(BackendError::other("worker: not initialised")),
        }
    }

    fn with_kernel<T>(&mut self, id: u64, f: impl FnOnce(&B, &mut B::Workspace, &B::Kernel) -> Result<T, BackendError>) -> Result<T, BackendError> {
        let k = self.kernels.get(&id).ok_or_else(|| BackendError::other("worker: kernel not loaded"))?;
        match (&self.backend, &mut self.ws) {
            (Some(b), Some(ws)) => f(b, ws, k),
            _ => Err(BackendError::other("worker: not initialised")),
        }
    }
}

impl<B: WorkerBackend> Executor for BackendExecutor<B> {
    fn init(&mut self, ordinal: usize, problem: &Arc<ProblemData>) -> Result<(), BackendError> {
        // Another problem for a worker already serving one: the same device (the kernels
        // loaded on it stay valid), a new workspace, the old one freed first.
        let b = match (self.backend.take(), self.opened.take()) {
            (Some(b), _) => b,
            (None, Some((o, Ok(b)))) if o == ordinal => b,
            _ => B::open_for_worker(ordinal)?,
        };
        self.ws = None;
        let t = std::time::Instant::now();
        self.ws = Some(b.workspace(problem)?);
        tracing::debug!(seconds = t.elapsed().as_secs_f64(), "worker: workspace made");
        self.backend = Some(b);
        Ok(())
    }
    fn prepare(&mut self, ordinal: usize) {
        let t = std::time::Instant::now();
        let b = B::open_for_worker(ordinal);
        tracing::debug!(seconds = t.elapsed().as_secs_f64(), ok = b.is_ok(), "worker: device opened");
        self.opened = Some((ordinal, b));
    }
    fn load(&mut self, id: u64, name: &str, binary: Vec<u8>) -> Result<(), BackendError> {
        let b = self.backend.as_ref().ok_or_else(|| BackendError::other("worker: not initialised"))?;
        self.kernels.insert(id, b.load_binary(name, binary)?);
        Ok(())
    }
    fn unload(&mut self, id: u64) {
        self.kernels.remove(&id);
    }
    fn reset(&mut self, poison: bool) -> Result<(), BackendError> {
        let (b, ws) = self.parts()?;
        b.reset(ws, poison)
    }
    fn time(&mut self, id: u64, launch: &Launch, req: &TimeRequest) -> Result<Vec<f64>, BackendError> {
        self.with_kernel(id, |b, ws, k| b.time(ws, k, launch, req))
    }
    fn verify(&mut self, id: u64, launch: &Launch, req: &VerifyRequest<'_>) -> Result<Vec<f64>, BackendError> {
        self.with_kernel(id, |b, ws, k| b.verify(ws, k, launch, req))
    }
    fn read_outputs(&mut self, wanted: &[bool]) -> Result<Vec<HostBuffer>, BackendError> {
        let (b, ws) = self.parts()?;
        b.read_outputs(ws, wanted)
    }
    fn bounds(&mut self, id: u64, launch: &Launch, timeout: Duration) -> Result<Option<crate::backend::Memcheck>, BackendError> {
        self.with_kernel(id, |b, ws, k| b.bounds(ws, k, launch, timeout))
    }
    fn wrote_past(&mut self) -> Result<Option<String>, BackendError> {
        let (b, ws) = self.parts()?;
        b.wrote_past(ws)
    }
    fn take_notes(&mut self) -> Vec<String> {
        self.backend.as_ref().map(B::take_notes).unwrap_or_default()
    }
}

/// What the parent ships for a kernel: an id unique in this process, its entry point and its
/// compiled binary (a CUBIN, an AMDGPU code object, the recipe a wgpu worker builds its
/// pipeline from).
#[derive(Clone, Copy, Debug)]
pub struct KernelImage<'a> {
    /// Unique per compiled kernel in the parent.
    pub id: u64,
    /// Entry point.
    pub name: &'a str,
    /// Loadable binary.
    pub binary: &'a [u8],
}

/// One backend's kind of worker: its label for messages and its environment variables.
#[derive(Debug)]
pub struct WorkerKind {
    /// `CUDA`, `HIP`: used in messages.
    pub label: &'static str,
    /// Set (to `1`) in a worker process.
    pub worker_env: &'static str,
    /// `0` keeps kernels in the tuner's process.
    pub isolation_env: &'static str,
    enabled: AtomicBool,
}

impl WorkerKind {
    /// A kind; isolation is off until [`WorkerKind::hook`] runs.
    pub const fn new(label: &'static str, worker_env: &'static str, isolation_env: &'static str) -> WorkerKind {
        WorkerKind { label, worker_env, isolation_env, enabled: AtomicBool::new(false) }
    }

    /// Call first thing in `main` (through the backend's `hook`). In a worker process of this
    /// kind it serves requests with the executor `make` returns, then exits; otherwise it
    /// enables worker processes for this program, unless the isolation variable is `0`.
    pub fn hook<E: Executor>(&self, make: impl FnOnce() -> E) {
        if std::env::var_os(self.worker_env).is_some() {
            // The worker ends when the parent closes its input.
            name_after_argv0();
            ignore_interrupts();
            // Losing a worker costs a restart of its device's work, losing the tuner its tune;
            // losing a compiler (1000) costs one compile. Low, because the kernel adds
            // `oom_score_adj` thousandths of the memory limit to a process's pages: at 500, in a
            // cgroup of 0.64 GB an H200's CUDA worker outranked the compilers beside it (6 of 9
            // kills were the worker's); at 100 it must hold 0.9 of the limit more than a
            // compiler to be taken first, and still goes before the tuner.
            oom_before_the_tuner(100);
            std::process::exit(serve(&mut make()));
        }
        self.enabled.store(std::env::var(self.isolation_env).map_or(true, |v| v != "0"), Ordering::SeqCst);
    }

    /// Whether [`WorkerKind::hook`] enabled worker processes.
    pub fn enabled(&self) -> bool {
        self.enabled.load(Ordering::SeqCst)
    }

    /// Enables or disables worker processes directly (tests; a host program that starts
    /// workers some other way).
    pub fn set_enabled(&self, on: bool) {
        self.enabled.store(on, Ordering::SeqCst);
    }
}

#[derive(Serialize, Deserialize, Debug)]
struct ArgMeta {
    name: String,
    dtype: DType,
    access: Option<Access>,
    #[serde(default)]
    memory: Memory,
    scalar: Option<Value>,
}

#[derive(Serialize, Deserialize, Debug)]
#[serde(tag = "op", rename_all = "snake_case")]
enum Req {
    Init {
        ordinal: usize,
        args: Vec<ArgMeta>,
    },
    Load {
        id: u64,
        name: String,
    },
    Unload {
        ids: Vec<u64>,
    },
    Reset {
        poison: bool,
    },
    Time {
        id: u64,
        launch: Launch,
        n: u32,
        flush: L2Flush,
        timeout: f64,
    },
    Verify {
        id: u64,
        launch: Launch,
        timeout: f64,
        ref_id: u64,
        send_ref: bool,
        outputs: Vec<String>,
        atol: f64,
        rtol: f64,
        #[serde(default)]
        per_output: Vec<(String, crate::spec::job::Tolerance)>,
        #[serde(default)]
        compare: Vec<(String, crate::spec::job::Compare)>,
        #[serde(default)]
        mismatches: Vec<(String, crate::spec::job::Allowance)>,
    },
    /// The buffers `wanted` selects, read back (the others travel empty).
    Read {
        wanted: Vec<bool>,
    },
    /// [`Backend::bounds`] of kernel `id`: its answer travels as one JSON blob.
    Bounds {
        id: u64,
        launch: Launch,
        timeout: f64,
    },
    /// [`Backend::wrote_past`]: its answer travels as one JSON blob.
    WrotePast,
    /// The worker's [`Executor::take_notes`], one blob per note.
    Notes,
}

impl Req {
    /// The request's name, for trace logs.
    fn kind(&self) -> &'static str {
        match self {
            Req::Init { .. } => "init",
            Req::Load { .. } => "load",
            Req::Unload { .. } => "unload",
            Req::Reset { .. } => "reset",
            Req::Time { .. } => "time",
            Req::Verify { .. } => "verify",
            Req::Read { .. } => "read",
            Req::Bounds { .. } => "bounds",
            Req::WrotePast => "wrote_past",
            Req::Notes => "notes",
        }
    }
}

#[derive(Serialize, Deserialize, Debug)]
#[serde(tag = "status", rename_all = "snake_case")]
enum Rep {
    Ok {
        times: Vec<f64>,
        /// What kernels printed while the request ran (see [`printed`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        printed: Option<Printed>,
    },
    Err {
        kind: String,
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        printed: Option<Printed>,
    },
}

fn to_wire(e: &BackendError) -> Rep {
    let kind = match e {
        BackendError::CompileFailed { .. } => "compile_failed",
        BackendError::LaunchFailed(_) => "launch_failed",
        BackendError::OutOfResources(_) => "out_of_resources",
        BackendError::ProblemTooLarge(_) => "problem_too_large",
        BackendError::WorkerStart(_) => "worker_start",
        BackendError::TimedOut(_) => "timed_out",
        BackendError::WrongOutput(_) => "wrong_output",
        BackendError::DeviceLost(_) => "device_lost",
        BackendError::WorkerDied { .. } => "worker_died",
        BackendError::Abandoned(_) | BackendError::CompilerDied { .. } | BackendError::Other(_) => "other",
    };
    let message = match e {
        BackendError::LaunchFailed(m)
        | BackendError::WrongOutput(m)
        | BackendError::DeviceLost(m)
        | BackendError::WorkerDied { message: m, .. }
        | BackendError::ProblemTooLarge(m)
        | BackendError::WorkerStart(m) => m.clone(),
        other => other.to_string(),
    };
    Rep::Err { kind: kind.into(), message, printed: None }
}

fn from_wire(kind: &str, message: String, timeout: Duration) -> BackendError {
    match kind {
        "compile_failed" => BackendError::CompileFailed { log: message, options: vec![] },
        // A limit violation found at launch travels as its message.
        "launch_failed" | "out_of_resources" => BackendError::LaunchFailed(message),
        "problem_too_large" => BackendError::ProblemTooLarge(message),
        "worker_start" => BackendError::WorkerStart(message),
        "timed_out" => BackendError::TimedOut(timeout),
        "wrong_output" => BackendError::WrongOutput(message),
        "device_lost" => BackendError::DeviceLost(message),
        "worker_died" => BackendError::worker_died(message),
        _ => BackendError::other(message),
    }
}

/// How a failure's message goes on when the kernel printed before it failed (device printf):
/// the rest says what it printed. Always last in the message; [`crate::run::diagnose`] groups
/// failures by what comes before it, as the printing is read before the failure or not by
/// timing alone.
pub const PRINTED_BEFORE: &str = "; before it failed, the kernel printed ";

/// The device a worker will be given, told at its start (see [`Executor::prepare`]).
const ORDINAL_VAR: &str = "KERNTUNE_WORKER_ORDINAL";

/// A blob's length with this bit set means the blob is in the shared-memory file, at the offset
/// that follows.
const IN_SHM: u64 = 1 << 63;
/// A blob's length with this bit set means the blob is in the problem's file (see
/// [`ProblemFile`]), at the offset that follows.
const IN_PROBLEM: u64 = 1 << 62;
/// Blobs this large or larger go through the shared-memory file when there is one.
const SHM_MIN: usize = 1 << 20;

/// A blob of a message: bytes, or a place in the problem's file that the receiver reads itself.
#[derive(Clone, Copy)]
enum Blob<'a> {
    Bytes(&'a [u8]),
    InProblem { offset: u64, len: u64 },
}

pub(crate) fn write_msg(w: &mut impl Write, header: &impl Serialize, blobs: &[&[u8]], shm: Option<&std::fs::File>) -> io::Result<()> {
    let blobs: Vec<Blob> = blobs.iter().map(|b| Blob::Bytes(b)).collect();
    write_blobs(w, header, &blobs, shm)
}

fn write_blobs(w: &mut impl Write, header: &impl Serialize, blobs: &[Blob<'_>], shm: Option<&std::fs::File>) -> io::Result<()> {
    let h = serde_json::to_vec(header).map_err(io::Error::other)?;
    w.write_all(&(h.len() as u64).to_le_bytes())?;
    w.write_all(&h)?;
    w.write_all(&(blobs.len() as u64).to_le_bytes())?;
    let mut offset = 0u64;
    for b in blobs {
        match *b {
            Blob::InProblem { offset, len } => {
                w.write_all(&(len | IN_PROBLEM).to_le_bytes())?;
                w.write_all(&offset.to_le_bytes())?;
            }
            Blob::Bytes(b) => match shm.filter(|_| b.len() >= SHM_MIN) {
                Some(file) => {
                    // The reader has emptied the file after the previous message: messages
                    // alternate, so each one starts at offset 0.
                    shm::write_at(file, b, offset)?;
                    w.write_all(&(b.len() as u64 | IN_SHM).to_le_bytes())?;
                    w.write_all(&offset.to_le_bytes())?;
                    offset += b.len() as u64;
                }
                None => {
                    w.write_all(&(b.len() as u64).to_le_bytes())?;
                    w.write_all(b)?;
                }
            },
        }
    }
    w.flush()
}

fn read_u64(r: &mut impl Read) -> io::Result<u64> {
    let mut b = [0u8; 8];
    r.read_exact(&mut b)?;
    Ok(u64::from_le_bytes(b))
}

/// This program, to be started again as a worker or a compiler (or under a checker): the file
/// to execute, and its path for messages. That is the path [`std::env::current_exe`] gives while
/// it still holds the program running; on Linux, once that file has been replaced or removed (a
/// `cargo build` or an upgrade while it tunes: a child started from the new file would speak
/// another version of the messages, or not start), `/proc/PID/exe` of this process, which is
/// the very program running (a child started through it, which the kernel names `exe`, names
/// itself again after its path as it starts).
pub fn this_program() -> io::Result<(std::path::PathBuf, std::path::PathBuf)> {
    let path = std::env::current_exe();
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::MetadataExt;
        let proc = std::path::PathBuf::from(format!("/proc/{}/exe", std::process::id()));
        if let Ok(running) = std::fs::metadata(&proc) {
            let same = |p: &std::path::Path| std::fs::metadata(p).is_ok_and(|m| (m.dev(), m.ino()) == (running.dev(), running.ino()));
            return Ok(match path {
                Ok(p) if same(&p) => (p.clone(), p),
                Ok(p) => (proc, p),
                Err(_) => (proc.clone(), proc),
            });
        }
    }
    path.map(|p| (p.clone(), p))
}

/// Where [`oom_kills`] reads the count instead (see [`count_oom_kills_in`]).
static OOM_KILLS_IN: Mutex<Option<std::path::PathBuf>> = Mutex::new(None);

/// The file [`oom_kills`] reads when no test set one: found once per process.
static OOM_COUNT_FILE: std::sync::OnceLock<Option<std::path::PathBuf>> = std::sync::OnceLock::new();

/// How many of this process's cgroup's processes the system's out-of-memory killer has ended
/// (Linux 4.13 and later), cgroup limits and the whole machine's memory alike; `None` where the
/// system does not say. The count is the tuner's own memory cgroup's where it has one
/// (`oom_kill` in `memory.events` under cgroup v2, `memory.oom_control` under v1: a Slurm job's,
/// a Kubernetes container's, a systemd unit's), so that another job's process killed meanwhile
/// is not counted; else the machine's (`/proc/vmstat`). Compilers and workers are the tuner's
/// children, in its cgroup. Read when a compile starts and again when its compiler was killed,
/// so that the tuner can tell the out-of-memory killer from a user or a job scheduler (see
/// [`crate::BackendError::CompilerDied`]); a worker's likewise, at most a second before each
/// request. [`oom_count_file`] says which file.
pub fn oom_kills() -> Option<u64> {
    parse_oom_kills(&std::fs::read_to_string(oom_count_file()?).ok()?)
}

/// The file [`oom_kills`] reads, if any: the one a test set, else the first file of this
/// process's memory cgroup that holds the count (`memory.events` under cgroup v2,
/// `memory.oom_control` under v1, found through `/proc/self/cgroup` and
/// `/proc/self/mountinfo`), else `/proc/vmstat` where it does. Found once per process.
pub fn oom_count_file() -> Option<std::path::PathBuf> {
    if let Some(p) = oom_kills_file() {
        return Some(p);
    }
    OOM_COUNT_FILE
        .get_or_init(|| {
            let counts = |p: &std::path::Path| std::fs::read_to_string(p).ok().and_then(|t| parse_oom_kills(&t)).is_some();
            let found = own_memory_cgroups().iter().map(MemoryCgroup::oom_count_file).find(|p| counts(p));
            let found = found.or_else(|| Some("/proc/vmstat".into()).filter(|p: &std::path::PathBuf| counts(p)));
            tracing::debug!(file = ?found, "the out-of-memory killer's count");
            found
        })
        .clone()
}

/// Whether the count [`oom_kills`] reads moved, in words for a verdict, naming its file (a
/// test's file in `/proc/vmstat`'s form is named so): `its count in /sys/fs/cgroup/…/memory.events
/// did not move`.
pub(crate) fn oom_count_words(moved: bool) -> String {
    let place = match (oom_kills_file(), oom_count_file()) {
        (None, Some(p)) => p.display().to_string(),
        _ => "/proc/vmstat".into(),
    };
    format!("its count in {place} {}", if moved { "moved" } else { "did not move" })
}

/// A memory cgroup's folder as mounted here, the mount point of its hierarchy, and whether it
/// is cgroup v2.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct MemoryCgroup {
    pub dir: std::path::PathBuf,
    pub mount: std::path::PathBuf,
    pub v2: bool,
}

impl MemoryCgroup {
    /// The file that holds the out-of-memory killer's count for it: `memory.events` (cgroup v2)
    /// or `memory.oom_control` (v1).
    fn oom_count_file(&self) -> std::path::PathBuf {
        self.dir.join(if self.v2 { "memory.events" } else { "memory.oom_control" })
    }
}

/// This process's [`memory_cgroups`], from its `/proc/self/cgroup` and `/proc/self/mountinfo`
/// (read once per process).
pub(crate) fn own_memory_cgroups() -> &'static [MemoryCgroup] {
    static FOUND: std::sync::OnceLock<Vec<MemoryCgroup>> = std::sync::OnceLock::new();
    FOUND.get_or_init(|| {
        let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
        memory_cgroups(&read("/proc/self/cgroup"), &read("/proc/self/mountinfo"))
    })
}

/// The folders that may be this process's memory cgroup, from `/proc/self/cgroup` (`cgroup`)
/// and `/proc/self/mountinfo` (`mountinfo`): under cgroup v2 (`0::PATH`) below each `cgroup2`
/// mount, under v1 (`N:…memory…:PATH`, not the root) below each `cgroup` mount with the memory
/// controller; `/sys/fs/cgroup` and `/sys/fs/cgroup/memory` where `mountinfo` names none. A
/// mount of a cgroup below the hierarchy's root (a container's) takes the paths below it.
pub(crate) fn memory_cgroups(cgroup: &str, mountinfo: &str) -> Vec<MemoryCgroup> {
    // (root within the hierarchy, mount point, version 2, has the memory controller)
    let mounts: Vec<(&str, &str, bool, bool)> = mountinfo
        .lines()
        .filter_map(|l| {
            let (left, right) = l.split_once(" - ")?;
            let left: Vec<&str> = left.split(' ').collect();
            let right: Vec<&str> = right.split(' ').collect();
            let (root, point) = (*left.get(3)?, *left.get(4)?);
            match *right.first()? {
                "cgroup2" => Some((root, point, true, true)),
                "cgroup" => Some((root, point, false, right.get(2)?.split(',').any(|o| o == "memory"))),
                _ => None,
            }
        })
        .collect();
    let defaults = [("/", "/sys/fs/cgroup", true, true), ("/", "/sys/fs/cgroup/memory", false, true)];
    let mounts = if mounts.is_empty() { &defaults[..] } else { &mounts[..] };
    let mut out = Vec::new();
    for line in cgroup.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next()) else { continue };
        let v2 = id == "0" && controllers.is_empty();
        if !v2 && (!controllers.split(',').any(|c| c == "memory") || path == "/") {
            continue;
        }
        for &(root, point, version2, memory) in mounts {
            if version2 != v2 || !memory {
                continue;
            }
            let below = if root == "/" { Some(path) } else { path.strip_prefix(root).filter(|r| r.is_empty() || r.starts_with('/')) };
            if let Some(below) = below {
                out.push(MemoryCgroup { dir: std::path::Path::new(point).join(below.trim_start_matches('/')), mount: point.into(), v2 });
            }
        }
    }
    out
}

/// Whether the out-of-memory killer has ended a process since its count was `before` (read
/// with [`oom_kills`]); `None` where the system does not say.
pub(crate) fn oom_killed_since(before: Option<u64>) -> Option<bool> {
    Some(oom_kills()? > before?)
}

/// The `oom_kill` count of a `/proc/vmstat`, `memory.events` or `memory.oom_control` text (or
/// of the fake's file in that form).
pub(crate) fn parse_oom_kills(vmstat: &str) -> Option<u64> {
    vmstat.lines().find_map(|l| l.strip_prefix("oom_kill ")).and_then(|v| v.trim().parse().ok())
}

/// Reads [`oom_kills`] from `path` (a file in `/proc/vmstat`'s form) instead, or from
/// the process's own file again with `None`: for tests, whose fake compilers count their own
/// "out-of-memory" kills there.
#[doc(hidden)]
pub fn count_oom_kills_in(path: Option<std::path::PathBuf>) {
    *OOM_KILLS_IN.lock().unwrap_or_else(|p| p.into_inner()) = path;
}

/// The file [`count_oom_kills_in`] set, if any.
#[doc(hidden)]
pub fn oom_kills_file() -> Option<std::path::PathBuf> {
    OOM_KILLS_IN.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// Whether a process was ended by SIGKILL.
pub(crate) fn killed_by_sigkill(status: std::process::ExitStatus) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        status.signal() == Some(signal_hook::consts::SIGKILL)
    }
    #[cfg(not(unix))]
    {
        let _ = status;
        false
    }
}

/// In a child started through `/proc/PID/exe` (see [`this_program`]) the kernel names the
/// process `exe`: named again here after its `argv[0]`, the program's path (without the
/// ` (deleted)` Linux adds to a replaced file's), as `top`, `pkill` and `killall` expect. Called
/// first thing in a worker or compiler process; nothing elsewhere, or where the name is not `exe`.
pub(crate) fn name_after_argv0() {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::ffi::OsStrExt;
        if std::fs::read_to_string("/proc/self/comm").unwrap_or_default().trim_end() != "exe" {
            return;
        }
        let Some(arg0) = std::env::args_os().next() else { return };
        let path = arg0.as_bytes();
        let path = path.strip_suffix(b" (deleted)").unwrap_or(path);
        let name = path.rsplit(|&b| b == b'/').next().unwrap_or(path);
        // The kernel keeps 15 bytes.
        if let Ok(name) = std::ffi::CString::new(name.iter().copied().take(15).collect::<Vec<u8>>()) {
            let _ = rustix::thread::set_name(&name);
        }
    }
}

/// A command that starts [`this_program`] again, named by its path (`argv[0]`, what `ps`
/// shows); the path for messages.
pub(crate) fn this_program_again() -> io::Result<(Command, std::path::PathBuf)> {
    let (exe, shown) = this_program()?;
    #[allow(unused_mut)]
    let mut cmd = Command::new(exe);
    #[cfg(unix)]
    std::os::unix::process::CommandExt::arg0(&mut cmd, &shown);
    Ok((cmd, shown))
}

/// The program a command starts, for messages: its `argv[0]` where that names it (see
/// [`this_program_again`]), else the file it executes.
fn shown(cmd: &Command) -> String {
    #[cfg(unix)]
    if cmd.get_program().to_string_lossy().starts_with("/proc/") {
        if let Ok((_, shown)) = this_program() {
            return shown.display().to_string();
        }
    }
    std::path::Path::new(cmd.get_program()).display().to_string()
}

/// In a child process (a worker, a compiler): Ctrl-C in a terminal reaches the whole process
/// group, and the parent decides what to do (finish the config in progress, save, exit; stop
/// waiting for a compile and kill its compiler), so the child ignores it. So with SIGUSR1 and
/// SIGUSR2, which end the tune early with a winner (`kerntune tune`): a scheduler warning a job
/// before its time limit signals every process of it (Slurm's `--signal=USR1@120` without `B:`),
/// and their default action killed the worker in the config it measured (restarted, the config
/// measured again) and the compiles running.
pub(crate) fn ignore_interrupts() {
    #[cfg(unix)]
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGUSR1, signal_hook::consts::SIGUSR2] {
        let _ = signal_hook::flag::register(sig, Arc::new(AtomicBool::new(false)));
    }
}

/// In a child process (a worker, a compiler), on Linux: asks the kernel's out-of-memory killer to
/// end this process before the tuner, which holds what was measured (`score`: this process's
/// `oom_score_adj`, up to 1000; any process may raise its own). A machine that runs out of
/// memory then costs a compile or a worker's restart, not the tune.
pub(crate) fn oom_before_the_tuner(score: u16) {
    #[cfg(target_os = "linux")]
    let _ = std::fs::write("/proc/self/oom_score_adj", score.min(1000).to_string());
    #[cfg(not(target_os = "linux"))]
    let _ = score;
}

/// A child process's messages as [`read_on_thread`] delivers them.
pub(crate) type Replies<T> = Receiver<io::Result<(T, Vec<Vec<u8>>)>>;

/// The messages a child process (a worker, a compiler) writes on `stdout`, read on a thread of
/// its own named `name`, so that the parent can wait for each with a deadline; the channel ends
/// after the first error (the child closed its output, or wrote something unreadable). `shm`:
/// the shared-memory file large blobs arrive through, when the child has one.
pub(crate) fn read_on_thread<T: DeserializeOwned + Send + 'static>(
    name: String,
    mut stdout: impl Read + Send + 'static,
    shm: Option<std::fs::File>,
) -> Result<Replies<T>, BackendError> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name(name)
        .spawn(move || loop {
            let m = read_msg::<T>(&mut stdout, shm.as_ref(), None);
            let end = m.is_err();
            if tx.send(m).is_err() || end {
                break;
            }
        })
        .map_err(|e| BackendError::other(format!("starting a reader thread: {e}")))?;
    Ok(rx)
}

/// Largest header or blob accepted: a corrupted length fails cleanly instead of allocating.
const MAX_PART: u64 = 1 << 40;

/// Reads a message; `problem` is the problem's file, when the worker inherited one.
pub(crate) fn read_msg<T: DeserializeOwned>(r: &mut impl Read, shm: Option<&std::fs::File>, problem: Option<&std::fs::File>) -> io::Result<(T, Vec<Vec<u8>>)> {
    let n = read_u64(r)?;
    if n > MAX_PART {
        return Err(io::Error::other(format!("malformed message: header length {n}")));
    }
    let mut h = vec![0u8; n as usize];
    r.read_exact(&mut h)?;
    let header = serde_json::from_slice(&h).map_err(io::Error::other)?;
    let count = read_u64(r)?;
    if count > 1 << 20 {
        return Err(io::Error::other(format!("malformed message: {count} blobs")));
    }
    let mut blobs = Vec::with_capacity(count as usize);
    let mut shared = false;
    for _ in 0..count {
        let len = read_u64(r)?;
        let (in_shm, in_problem) = (len & IN_SHM != 0, len & IN_PROBLEM != 0);
        let len = len & !(IN_SHM | IN_PROBLEM);
        if len > MAX_PART {
            return Err(io::Error::other(format!("malformed message: blob length {len}")));
        }
        let mut b = vec![0u8; len as usize];
        if in_problem || in_shm {
            // The problem's file is shared by every worker of the problem: read, never emptied
            // here; the worker's own file is emptied once the message is read.
            let (file, missing) = if in_problem {
                (problem, "malformed message: a blob in the problem's file, and no such file")
            } else {
                (shm, "malformed message: a blob in shared memory, and no shared memory")
            };
            let offset = read_u64(r)?;
            shm::read_at(file.ok_or_else(|| io::Error::other(missing))?, &mut b, offset)?;
            shared |= !in_problem;
        } else {
            r.read_exact(&mut b)?;
        }
        blobs.push(b);
    }
    if let (true, Some(file)) = (shared, shm) {
        // Read: the memory goes back, and the next message starts at offset 0.
        file.set_len(0)?;
    }
    Ok((header, blobs))
}

/// A problem's large buffers in one shared-memory file that every worker started for the
/// problem inherits (Linux), so that a tune over N devices writes them once, not once per
/// worker. Written by the first worker to start and emptied when the last of those starting
/// with it has read it; a worker started later (after a fault) fills it again.
struct ProblemFile {
    file: std::fs::File,
    /// Each argument's place in the file: `Some(offset)` for a buffer of [`SHM_MIN`] or more.
    offsets: Vec<Option<u64>>,
    /// Workers starting from it now: the file holds the problem while there are some.
    readers: usize,
    /// Whether the problem is written in it.
    filled: bool,
}

/// Every problem with a file, by the problem's identity (its `Arc`), pruned as problems end.
type ProblemFiles = Vec<(std::sync::Weak<ProblemData>, Arc<Mutex<ProblemFile>>)>;
static PROBLEM_FILES: Mutex<ProblemFiles> = Mutex::new(Vec::new());

/// A worker's hold on its problem's file while it starts (see [`ProblemFile::starting`]).
struct Placed {
    entry: Arc<Mutex<ProblemFile>>,
    file: std::fs::File,
    offsets: Vec<Option<u64>>,
}

impl ProblemFile {
    /// The problem's file, with this worker counted as starting from it; `None` (every buffer
    /// through the worker's own channel) when there is no shared memory or nothing large. The
    /// file may still be empty: the worker process inherits it, and [`Placed::fill`] writes
    /// the problem while that process opens its device.
    fn starting(problem: &Arc<ProblemData>) -> Option<Placed> {
        if !shm::enabled() {
            return None;
        }
        let entry = {
            let mut files = PROBLEM_FILES.lock().unwrap_or_else(|p| p.into_inner());
            files.retain(|(p, _)| p.strong_count() > 0);
            match files.iter().find(|(p, _)| std::ptr::eq(p.as_ptr(), Arc::as_ptr(problem))) {
                Some((_, e)) => e.clone(),
                None => {
                    let mut offsets = Vec::with_capacity(problem.args.len());
                    let mut end = 0u64;
                    for a in &problem.args {
                        offsets.push(match a {
                            ArgData::Buffer(b) if b.data.len() >= SHM_MIN => {
                                end += b.data.len() as u64;
                                Some(end - b.data.len() as u64)
                            }
                            _ => None,
                        });
                    }
                    if end == 0 {
                        return None;
                    }
                    let file = shm::memfd("kerntune-problem")?;
                    let e = Arc::new(Mutex::new(ProblemFile { file, offsets, readers: 0, filled: false }));
                    files.push((Arc::downgrade(problem), e.clone()));
                    e
                }
            }
        };
        let mut pf = entry.lock().unwrap_or_else(|p| p.into_inner());
        let file = pf.file.try_clone().ok()?;
        pf.readers += 1;
        let offsets = pf.offsets.clone();
        drop(pf);
        Some(Placed { entry, file, offsets })
    }
}

impl Placed {
    /// Writes the problem into the file unless a worker starting with this one did; `false`
    /// when it cannot be written (the buffers then go through the worker's own channel).
    fn fill(&self, problem: &ProblemData) -> bool {
        // Workers starting at the same time wait here while the first writes.
        let mut pf = self.entry.lock().unwrap_or_else(|p| p.into_inner());
        if !pf.filled {
            let t = std::time::Instant::now();
            let written = problem.args.iter().zip(&pf.offsets).try_for_each(|(a, o)| match (a, o) {
                (ArgData::Buffer(b), Some(offset)) => shm::write_at(&pf.file, &b.data, *offset),
                _ => Ok(()),
            });
            if let Err(e) = written {
                tracing::debug!("the problem's shared file could not be written ({e}); sending it to each worker");
                let _ = pf.file.set_len(0);
                return false;
            }
            pf.filled = true;
            tracing::debug!(seconds = t.elapsed().as_secs_f64(), "problem written to its shared file");
        }
        true
    }
}

impl Drop for Placed {
    fn drop(&mut self) {
        let mut pf = self.entry.lock().unwrap_or_else(|p| p.into_inner());
        pf.readers -= 1;
        if pf.readers == 0 {
            // Every worker that started from it has read it (or failed): give the memory back.
            let _ = pf.file.set_len(0);
            pf.filled = false;
        }
    }
}

/// A running worker process (the parent's handle).
pub struct Worker {
    label: &'static str,
    /// The process; taken when the handle is dropped (see [`Drop`] below).
    child: Option<Child>,
    /// `None` once closed (the worker then ends its loop).
    stdin: Option<BufWriter<ChildStdin>>,
    replies: Replies<Rep>,
    loaded: HashSet<u64>,
    ref_id: Option<u64>,
    /// The shared-memory file large blobs travel through, when the platform has one.
    shm: Option<std::fs::File>,
    /// Requests sent whose replies are read before the next call's (see [`Worker::post`]).
    unanswered: Vec<Posted>,
    /// The problem the worker holds (a weak handle: the parent's workspace owns it; its
    /// allocation outlives it, so that another problem is never taken for this one).
    problem: std::sync::Weak<ProblemData>,
    /// The out-of-memory killer's count (see [`oom_kills`]) read at most a second before the
    /// last request was sent, and when: to tell whether it ended a worker killed by SIGKILL.
    /// Not read for every request: that is some 30 µs of the kernel's, a config sends several.
    oom_at_send: (Option<u64>, Instant),
    /// The last lines it wrote to its standard error, for its death note.
    words: LastWords,
    /// What kernels printed in replies not yet taken ([`Worker::take_printed`]).
    printed: Printed,
}

/// The last lines a child process wrote to its standard error: passed on to the tuner's own as
/// they come (what the user saw before), and kept, so that a worker that ends says why in its
/// note and the tune's error (a device it cannot open, a library it cannot load), not only on a
/// terminal that a job scheduler's log may not hold. A failed device-side assertion's lines
/// (CUDA prints one for every thread that failed it) are counted apart and the first kept:
/// only the first is passed on, and the worker's error says it ([`LastWords::assertion`]).
#[derive(Clone, Default)]
pub(crate) struct LastWords(Arc<Mutex<Said>>);

#[derive(Default)]
struct Said {
    lines: std::collections::VecDeque<String>,
    ended: bool,
    /// Lines of failed device-side assertions not yet told, and the first of them.
    assertions: u64,
    assertion: Option<String>,
}

/// Whether a line of standard error is a failed device-side assertion's: CUDA's `FILE:LINE:
/// FUNCTION: block: [x,y,z], thread: [x,y,z] Assertion `EXPR` failed.`, HIP's `…: Device-side
/// assertion `EXPR' failed.`
pub(crate) fn is_assertion(line: &str) -> bool {
    (line.contains("block: [") && line.contains("thread: [") && line.contains("Assertion `") && line.ends_with("failed."))
        || line.contains("Device-side assertion `")
}

impl LastWords {
    /// How many lines are kept, and how much of each.
    const LINES: usize = 4;
    const WIDTH: usize = 300;

    fn lock(&self) -> std::sync::MutexGuard<'_, Said> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Reads `stderr` on a thread named `name` until it ends.
    pub(crate) fn follow(name: String, stderr: impl Read + Send + 'static) -> LastWords {
        let words = LastWords::default();
        let kept = words.clone();
        let read = move || {
            let mut input = BufReader::new(stderr);
            let mut line = Vec::new();
            let mut assertions = 0u64;
            while matches!(io::BufRead::read_until(&mut input, b'\n', &mut line), Ok(n) if n > 0) {
                let text = strip_ansi(&String::from_utf8_lossy(&line));
                let text = text.trim();
                if is_assertion(text) {
                    assertions += 1;
                    if assertions == 1 {
                        let _ = io::stderr().write_all(&line);
                    }
                    let mut g = kept.lock();
                    g.assertions += 1;
                    g.assertion.get_or_insert_with(|| text.chars().take(Self::WIDTH).collect());
                } else {
                    let _ = io::stderr().write_all(&line);
                    if !text.is_empty() {
                        let mut g = kept.lock();
                        if g.lines.len() == Self::LINES {
                            g.lines.pop_front();
                        }
                        g.lines.push_back(text.chars().take(Self::WIDTH).collect());
                    }
                }
                line.clear();
            }
            kept.lock().ended = true;
        };
        if std::thread::Builder::new().name(name).spawn(read).is_err() {
            words.lock().ended = true;
        }
        words
    }

    /// Forgets the lines kept so far: what a compiler process wrote before the compile it is
    /// sent next is not that compile's.
    pub(crate) fn forget(&self) {
        self.lock().lines.clear();
    }

    /// Waits at most `wait` for standard error to end (the process has exited; a child of its
    /// may hold the pipe).
    fn await_end(&self, wait: Duration) {
        let t = Instant::now();
        while !self.lock().ended && t.elapsed() < wait {
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// What it wrote last, in one line (`a | b`), once its standard error has ended (waiting at
    /// most 200 ms for that).
    pub(crate) fn said(&self) -> Option<String> {
        self.await_end(Duration::from_millis(200));
        let g = self.lock();
        (!g.lines.is_empty()).then(|| g.lines.iter().map(String::as_str).collect::<Vec<_>>().join(" | "))
    }

    /// The failed device-side assertion it reported since the last call, once its standard error
    /// has ended (waiting at most `wait`: a worker exits after a lost device): how many lines
    /// said one failed, and the first.
    pub(crate) fn assertion(&self, wait: Duration) -> Option<(u64, String)> {
        self.await_end(wait);
        let mut g = self.lock();
        let n = std::mem::take(&mut g.assertions);
        g.assertion.take().map(|a| (n, a))
    }
}

/// `text` without its terminal escape sequences (a colored log line).
fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.next() == Some('[') {
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A request sent without waiting for its reply: unloads and loads go out with the request that
/// follows them, so the worker reads them back to back instead of waiting a round trip each.
enum Posted {
    /// An unload: its reply carries nothing.
    Unload,
    /// A load of kernel `id`: an error in its reply is the next call's error.
    Load(u64),
}

impl Worker {
    /// Starts this program again as a worker of `kind` and initialises it with the problem.
    pub fn spawn(kind: &WorkerKind, ordinal: usize, problem: &Arc<ProblemData>) -> Result<Worker, BackendError> {
        let (cmd, _) = this_program_again().map_err(|e| BackendError::other(format!("locating this program to start a {} worker: {e}", kind.label)))?;
        Self::spawn_command(kind, cmd, ordinal, problem)
    }

    /// Like [`Worker::spawn`], with the program to start given (it must serve requests when the
    /// kind's worker variable is set).
    pub fn spawn_command(kind: &WorkerKind, cmd: Command, ordinal: usize, problem: &Arc<ProblemData>) -> Result<Worker, BackendError> {
        // The problem's large buffers, written once for every worker started for it at this time.
        let mut w = Self::start(kind, cmd, ordinal, problem, ProblemFile::starting(problem))?;
        w.problem = Arc::downgrade(problem);
        Ok(w)
    }

    /// Whether the worker holds `problem` (the very one, not an equal one).
    pub fn holds(&self, problem: &Arc<ProblemData>) -> bool {
        std::ptr::eq(self.problem.as_ptr(), Arc::as_ptr(problem))
    }

    /// Sends the worker another problem (the next problem of a spec with several, or the next
    /// size a program tunes): it replaces its workspace, keeping its device and the kernels it
    /// loaded, and is sent the next reference whole.
    pub fn reinit(&mut self, ordinal: usize, problem: &Arc<ProblemData>) -> Result<(), BackendError> {
        let (args, blobs) = Self::init_message(problem, None);
        self.call_blobs(&Req::Init { ordinal, args }, &blobs, Duration::from_secs(120))?;
        self.ref_id = None;
        self.problem = Arc::downgrade(problem);
        tracing::debug!(label = self.label, "worker: another problem sent");
        Ok(())
    }

    /// The `Init` request for `problem`: its arguments, and its buffers' bytes (those `placed`
    /// holds as offsets into the shared problem file).
    fn init_message<'p>(problem: &'p ProblemData, placed: Option<&Placed>) -> (Vec<ArgMeta>, Vec<Blob<'p>>) {
        let mut args = Vec::new();
        let mut blobs: Vec<Blob> = Vec::new();
        for (i, a) in problem.args.iter().enumerate() {
            match a {
                ArgData::Buffer(b) => {
                    args.push(ArgMeta { name: b.name.clone(), dtype: b.dtype, access: Some(b.access), memory: b.memory, scalar: None });
                    blobs.push(match placed.and_then(|p| p.offsets.get(i).copied().flatten()) {
                        Some(offset) => Blob::InProblem { offset, len: b.data.len() as u64 },
                        None => Blob::Bytes(&b.data),
                    });
                }
                ArgData::Scalar { name, dtype, value } => {
                    args.push(ArgMeta { name: name.clone(), dtype: *dtype, access: None, memory: Memory::Global, scalar: Some(value.clone()) })
                }
            }
        }
        (args, blobs)
    }

    /// Starts a worker and sends it `problem`, its large buffers through `placed` when given.
    fn start(kind: &WorkerKind, mut cmd: Command, ordinal: usize, problem: &ProblemData, placed: Option<Placed>) -> Result<Worker, BackendError> {
        let label = kind.label;
        await_exiting();
        let t = std::time::Instant::now();
        let shm = shm::share_with(&mut cmd, placed.as_ref().map(|p| &p.file));
        let mut child = cmd
            .env(kind.worker_env, "1")
            .env(ORDINAL_VAR, ordinal.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| BackendError::other(format!("starting a {label} worker process ({}): {e}", shown(&cmd))))?;
        let words = LastWords::follow(format!("kerntune-{}-worker-stderr", label.to_lowercase()), child.stderr.take().expect("piped"));
        let stdin = BufWriter::with_capacity(1 << 20, child.stdin.take().expect("piped"));
        let stdout = BufReader::with_capacity(1 << 20, child.stdout.take().expect("piped"));
        let rx = read_on_thread(format!("kerntune-{}-worker-reader", label.to_lowercase()), stdout, shm.as_ref().and_then(|f| f.try_clone().ok()))?;
        let mut w = Worker {
            label,
            child: Some(child),
            stdin: Some(stdin),
            replies: rx,
            loaded: HashSet::new(),
            ref_id: None,
            shm,
            unanswered: Vec::new(),
            problem: std::sync::Weak::new(),
            oom_at_send: (oom_kills(), Instant::now()),
            words,
            printed: Printed::default(),
        };
        // The process opens its device (see `Executor::prepare`) while the problem is written.
        let placed = placed.filter(|p| p.fill(problem));
        let (args, blobs) = Self::init_message(problem, placed.as_ref());
        tracing::debug!(seconds = t.elapsed().as_secs_f64(), pid = w.pid(), "{label} worker started; sending the problem");
        w.call_blobs(&Req::Init { ordinal, args }, &blobs, Duration::from_secs(120))?;
        drop(placed); // read: the last worker starting from the file empties it
        tracing::debug!(seconds = t.elapsed().as_secs_f64(), "{label} worker initialised");
        Ok(w)
    }

    fn call(&mut self, req: &Req, blobs: &[&[u8]], deadline: Duration) -> Result<(Vec<f64>, Vec<Vec<u8>>), BackendError> {
        let blobs: Vec<Blob> = blobs.iter().map(|b| Blob::Bytes(b)).collect();
        self.call_blobs(req, &blobs, deadline)
    }

    fn call_blobs(&mut self, req: &Req, blobs: &[Blob<'_>], deadline: Duration) -> Result<(Vec<f64>, Vec<Vec<u8>>), BackendError> {
        self.send(req, blobs)?;
        // The replies of requests posted before this one come first, in order.
        let mut failed_load = None;
        for posted in std::mem::take(&mut self.unanswered) {
            match (self.reply(deadline), posted) {
                // The worker is killed after such an error: its replies no longer matter.
                (Err(e), _) if e.needs_recovery() => return Err(e),
                (Err(e), Posted::Load(id)) => {
                    self.loaded.remove(&id);
                    failed_load.get_or_insert(e);
                }
                _ => {}
            }
        }
        let r = self.reply(deadline);
        match failed_load {
            // The request met a kernel that did not load: the load's error is the one to report.
            Some(e) if !r.as_ref().is_err_and(BackendError::needs_recovery) => Err(e),
            _ => r,
        }
    }

    /// Sends a request without reading its reply; the next call reads it first. Only for
    /// requests whose blobs go through the pipe: the shared-memory file holds one message's
    /// blobs at a time.
    fn post(&mut self, req: &Req, blobs: &[&[u8]], posted: Posted) -> Result<(), BackendError> {
        let blobs: Vec<Blob> = blobs.iter().map(|b| Blob::Bytes(b)).collect();
        self.send(req, &blobs)?;
        self.unanswered.push(posted);
        Ok(())
    }

    /// Whether `blobs` would travel through the pipe (not the shared-memory file).
    fn through_pipe(&self, blobs: &[&[u8]]) -> bool {
        self.shm.is_none() || blobs.iter().all(|b| b.len() < SHM_MIN)
    }

    fn send(&mut self, req: &Req, blobs: &[Blob<'_>]) -> Result<(), BackendError> {
        let label = self.label;
        if self.oom_at_send.1.elapsed() >= Duration::from_secs(1) {
            self.oom_at_send = (oom_kills(), Instant::now());
        }
        let written = match self.stdin.as_mut() {
            Some(stdin) => write_blobs(stdin, req, blobs, self.shm.as_ref()),
            None => Err(io::Error::other("its input was closed")),
        };
        if let Err(e) = written {
            return Err(self.died(format!("the {label} worker stopped ({e})")));
        }
        Ok(())
    }

    /// The next reply, within `deadline` (the worker is killed when it does not come).
    fn reply(&mut self, deadline: Duration) -> Result<(Vec<f64>, Vec<Vec<u8>>), BackendError> {
        let label = self.label;
        // The time awake: a worker stopped with the tuner (Ctrl-Z, a suspended job) is no hung kernel.
        match crate::measure::awake::recv_timeout(&self.replies, deadline) {
            Ok(Ok((Rep::Ok { times, printed }, blobs))) => {
                if let Some(p) = printed {
                    self.printed.add(p);
                }
                Ok((times, blobs))
            }
            Ok(Ok((Rep::Err { kind, mut message, printed }, _))) => {
                // After a lost device the worker exits: its standard error ends once a failed
                // device-side assertion's lines, which the driver prints as the context goes,
                // are all there.
                if kind == "device_lost" {
                    if let Some((n, first)) = self.words.assertion(Duration::from_secs(2)) {
                        let lines = if n == 1 { "1 line".to_string() } else { format!("{n} lines") };
                        message = format!("{message}; a device-side assertion in the kernel failed ({lines} on standard error), the first: `{first}`");
                    }
                }
                // Last: whether the kernel's printing was read before the failure is a matter
                // of timing, so the failure's cause is grouped by what comes before it
                // ([`PRINTED_BEFORE`]).
                if let Some(p) = printed {
                    message = format!("{message}{PRINTED_BEFORE}{} to standard output (kept out of kerntune's): {}", p.size(), p.quoted());
                }
                Err(from_wire(&kind, message, deadline))
            }
            Ok(Err(e)) => Err(self.died(format!("the {label} worker ended without a reply ({e})"))),
            Err(RecvTimeoutError::Timeout) => {
                self.kill();
                Err(BackendError::TimedOut(deadline))
            }
            Err(RecvTimeoutError::Disconnected) => Err(self.died(format!("the {label} worker ended without a reply"))),
        }
    }

    /// The worker's death, `what` failed, with how it ended (see [`Self::exit_note`]).
    fn died(&mut self, what: String) -> BackendError {
        let (note, killed, oom) = self.exit_note();
        BackendError::WorkerDied { message: format!("{what}{note}"), killed, oom }
    }

    /// How the worker ended, in words (empty when its status is not known yet), whether by
    /// SIGKILL, and then whether the out-of-memory killer's count moved.
    fn exit_note(&mut self) -> (String, bool, Option<bool>) {
        // Its pipe closed, it is exiting; a process of gigabytes (a CUDA context, its buffers)
        // takes longer than a moment to be torn down, and without its exit status the tune
        // could not say who ended it (an H200's worker killed by its cgroup's out-of-memory
        // killer was told only as `failed to fill whole buffer`). So it is given up to a second.
        let waited = Instant::now();
        let status = loop {
            std::thread::sleep(Duration::from_millis(20));
            match self.child.as_mut().map(Child::try_wait) {
                Some(Ok(None)) if waited.elapsed() < Duration::from_secs(1) => continue,
                other => break other,
            }
        };
        match status {
            Some(Ok(Some(s))) => {
                // SIGKILL: whether the out-of-memory killer's count moved since it was read, at most a
                // second before the request.
                let killed = killed_by_sigkill(s);
                let oom = killed.then(|| oom_killed_since(self.oom_at_send.0)).flatten();
                let who = match oom {
                    Some(moved) => format!(", {}by the out-of-memory killer ({})", if moved { "" } else { "not " }, oom_count_words(moved)),
                    None => String::new(),
                };
                let said = self.words.said().map_or(String::new(), |w| format!("; its last words on stderr: {w}"));
                (format!("; it exited with {s}{who}{said}"), killed, oom)
            }
            _ => (String::new(), false, None),
        }
    }

    /// What kernels printed to the worker's standard output since the last call, in the
    /// replies of requests that did not fail (a failure's message says what was printed before
    /// it).
    pub fn take_printed(&mut self) -> Option<Printed> {
        let p = std::mem::take(&mut self.printed);
        (!p.is_empty()).then_some(p)
    }

    /// Kills the process (a hung kernel goes with it).
    pub fn kill(&mut self) {
        if let Some(c) = self.child.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// The worker's process id.
    fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Tells the worker to unload kernels the parent dropped (with the next request; a worker
    /// that stopped meanwhile is reported by that request).
    pub fn forget(&mut self, ids: &[u64]) {
        let ids: Vec<u64> = ids.iter().copied().filter(|id| self.loaded.remove(id)).collect();
        if !ids.is_empty() {
            let _ = self.post(&Req::Unload { ids }, &[], Posted::Unload);
        }
    }

    /// Loads `k` unless loaded: posted with the request that uses it when its binary goes
    /// through the pipe (the usual case: a few hundred kilobytes at most), a call otherwise.
    fn ensure_loaded(&mut self, k: KernelImage<'_>) -> Result<(), BackendError> {
        if !self.loaded.contains(&k.id) {
            let req = Req::Load { id: k.id, name: k.name.to_string() };
            if self.through_pipe(&[k.binary]) {
                self.post(&req, &[k.binary], Posted::Load(k.id))?;
            } else {
                self.call(&req, &[k.binary], Duration::from_secs(60))?;
            }
            self.loaded.insert(k.id);
        }
        Ok(())
    }

    /// [`Backend::reset`] in the worker.
    pub fn reset(&mut self, poison: bool) -> Result<(), BackendError> {
        self.call(&Req::Reset { poison }, &[], Duration::from_secs(60)).map(|_| ())
    }

    /// [`Backend::time`] in the worker.
    pub fn time(&mut self, k: KernelImage<'_>, launch: &Launch, req: &TimeRequest) -> Result<Vec<f64>, BackendError> {
        self.ensure_loaded(k)?;
        let r = Req::Time { id: k.id, launch: *launch, n: req.launches, flush: req.flush, timeout: req.timeout.as_secs_f64() };
        // The worker enforces the per-launch timeout itself; the margin covers process overhead.
        let deadline = req.timeout * req.launches.max(1) + Duration::from_secs(5);
        match self.call(&r, &[], deadline) {
            Err(BackendError::TimedOut(_)) => Err(BackendError::TimedOut(req.timeout)),
            other => other.map(|(t, _)| t),
        }
    }

    /// [`Backend::verify`] in the worker; the reference is shipped
    /// once per `reference_id`.
    pub fn verify(&mut self, k: KernelImage<'_>, launch: &Launch, req: &VerifyRequest<'_>) -> Result<Vec<f64>, BackendError> {
        self.ensure_loaded(k)?;
        let send_ref = self.ref_id != Some(req.reference_id);
        // Only the buffers compared travel (the inputs of a GEMM's reference are two thirds of it).
        let blobs: Vec<&[u8]> = if send_ref { req.reference.iter().map(|b| if req.selects(b) { b.data.as_slice() } else { &[] }).collect() } else { vec![] };
        let r = Req::Verify {
            id: k.id,
            launch: *launch,
            timeout: req.timeout.as_secs_f64(),
            ref_id: req.reference_id,
            send_ref,
            outputs: req.outputs.to_vec(),
            atol: req.tolerance.atol,
            rtol: req.tolerance.rtol,
            per_output: req.per_output.to_vec(),
            compare: req.compare.to_vec(),
            mismatches: req.mismatches.to_vec(),
        };
        // The worker enforces the launch's timeout itself; the margin covers the process and
        // shipping the reference (at a conservative 1 GB/s) the first time.
        let shipped: usize = blobs.iter().map(|b| b.len()).sum();
        let out = self.call(&r, &blobs, req.timeout + Duration::from_secs(5) + Duration::from_secs_f64(shipped as f64 / 1e9));
        if send_ref && !out.as_ref().is_err_and(BackendError::needs_recovery) {
            self.ref_id = Some(req.reference_id);
        }
        match out {
            Err(BackendError::TimedOut(_)) => Err(BackendError::TimedOut(req.timeout)),
            other => other.map(|(t, _)| t),
        }
    }

    /// [`Backend::read_outputs`] from the worker: only the buffers `wanted` selects travel.
    pub fn read_outputs(&mut self, problem: &ProblemData, wanted: &[bool]) -> Result<Vec<HostBuffer>, BackendError> {
        let (_, blobs) = self.call(&Req::Read { wanted: wanted.to_vec() }, &[], Duration::from_secs(120))?;
        Ok(problem.buffers().zip(blobs).map(|(b, data)| HostBuffer { data, ..b.described() }).collect())
    }

    /// [`Backend::bounds`] in the worker: a handful of launches of `k`, each within
    /// `timeout`.
    pub fn bounds(&mut self, k: KernelImage<'_>, launch: &Launch, timeout: Duration) -> Result<Option<crate::backend::Memcheck>, BackendError> {
        self.ensure_loaded(k)?;
        let r = Req::Bounds { id: k.id, launch: *launch, timeout: timeout.as_secs_f64() };
        // At most 3 launches and one per buffer more, each with a reset and a read-back.
        let launches = 3 + self.problem.upgrade().map_or(8, |p| p.buffers().count()) as u32;
        let (_, blobs) = match self.call(&r, &[], (timeout + Duration::from_secs(5)) * launches) {
            Err(BackendError::TimedOut(_)) => return Err(BackendError::TimedOut(timeout)),
            other => other?,
        };
        let blob = blobs.into_iter().next().unwrap_or_default();
        serde_json::from_slice(&blob).map_err(|e| BackendError::other(format!("worker: a bounds answer did not read: {e}")))
    }

    /// [`Backend::wrote_past`] in the worker.
    pub fn wrote_past(&mut self) -> Result<Option<String>, BackendError> {
        let (_, blobs) = self.call(&Req::WrotePast, &[], Duration::from_secs(60))?;
        let blob = blobs.into_iter().next().unwrap_or_default();
        serde_json::from_slice(&blob).map_err(|e| BackendError::other(format!("worker: a wrote-past answer did not read: {e}")))
    }

    /// [`Backend::take_notes`] from the worker.
    pub fn take_notes(&mut self) -> Result<Vec<String>, BackendError> {
        let (_, blobs) = self.call(&Req::Notes, &[], Duration::from_secs(60))?;
        Ok(blobs.into_iter().map(|b| String::from_utf8_lossy(&b).into_owned()).collect())
    }
}

/// Workers being reaped after their handles were dropped (see [`Drop`] for [`Worker`]).
static EXITING: Mutex<Vec<std::thread::JoinHandle<()>>> = Mutex::new(Vec::new());

/// Waits until every worker whose handle was dropped has exited (its device memory is free).
/// The list stays locked while it waits, so that workers starting at the same time all wait.
fn await_exiting() {
    let mut exiting = EXITING.lock().unwrap_or_else(|p| p.into_inner());
    for h in exiting.drain(..) {
        let _ = h.join();
    }
}

impl Drop for Worker {
    /// Kills the process without waiting for its exit, which takes tens of milliseconds (the
    /// driver tears down its context): a thread reaps it, and the next worker to start waits
    /// for it first, so that two never hold a device's memory at once. A program that ends
    /// after a tune does not wait.
    fn drop(&mut self) {
        let Some(mut child) = self.child.take() else { return };
        let _ = child.kill();
        let reaper = std::thread::Builder::new().name("kerntune-worker-reaper".into()).spawn(move || {
            let _ = child.wait();
        });
        // Without a thread the child, killed, is reaped when this process ends.
        if let Ok(h) = reaper {
            EXITING.lock().unwrap_or_else(|p| p.into_inner()).push(h);
        }
    }
}

/// Runs kernel `k` once in a worker started with `command` (e.g. the worker under a memory
/// checker), then lets the worker end on its own (its stdin closed) within `wait`, so that a
/// tool wrapping it can finish its report; kills it after that. Returns the launch's result.
pub fn run_once(
    kind: &WorkerKind,
    (command, ordinal): (Command, usize),
    problem: &ProblemData,
    k: KernelImage<'_>,
    launch: &Launch,
    (timeout, wait): (Duration, Duration),
) -> Result<(), BackendError> {
    let mut w = Worker::start(kind, command, ordinal, problem, None)?;
    let r = w.time(k, launch, &TimeRequest { launches: 1, flush: L2Flush::Off, timeout }).map(|_| ());
    // Closing stdin ends the worker's loop (it has exited already after a fault).
    drop(w.stdin.take());
    let t0 = std::time::Instant::now();
    while t0.elapsed() < wait {
        if let Some(Ok(Some(_))) = w.child.as_mut().map(Child::try_wait) {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    r
}

/// The parent's side of a backend in isolated mode: one worker, started on first use, killed
/// after a fault and started afresh on the next call.
pub struct WorkerSlot {
    kind: &'static WorkerKind,
    ordinal: usize,
    command: Option<Box<dyn Fn() -> Command + Send + Sync>>,
    worker: Mutex<Option<Worker>>,
    /// How much of [`DROPPED`] this slot's workers have been told about.
    dropped_seen: std::sync::atomic::AtomicUsize,
    starts: std::sync::atomic::AtomicUsize,
}

/// Every kernel id dropped in this process, in order. A kernel compiled once may be loaded into
/// the workers of several devices (a tune over several GPUs), so a drop is announced to all of
/// them: each slot reads on from where it stopped and its workers unload what they hold.
static DROPPED: Mutex<Vec<u64>> = Mutex::new(Vec::new());

/// Notes that kernel `id` was dropped in the parent: the workers that loaded it unload it on
/// their next call.
pub fn kernel_dropped(id: u64) {
    DROPPED.lock().unwrap_or_else(|p| p.into_inner()).push(id);
}

impl WorkerSlot {
    /// A slot for device `ordinal`.
    pub fn new(kind: &'static WorkerKind, ordinal: usize) -> WorkerSlot {
        let seen = DROPPED.lock().unwrap_or_else(|p| p.into_inner()).len();
        WorkerSlot { kind, ordinal, command: None, worker: Mutex::new(None), dropped_seen: seen.into(), starts: Default::default() }
    }

    /// Starts workers with `command` instead of this program (tests).
    pub fn with_command(mut self, command: impl Fn() -> Command + Send + Sync + 'static) -> WorkerSlot {
        self.command = Some(Box::new(command));
        self
    }

    /// The device ordinal its workers open.
    pub fn ordinal(&self) -> usize {
        self.ordinal
    }

    /// The process id of the worker running now, if one is.
    pub fn pid(&self) -> Option<u32> {
        self.worker.lock().unwrap_or_else(|p| p.into_inner()).as_ref().and_then(Worker::pid)
    }

    /// How many worker processes were started so far.
    pub fn starts(&self) -> usize {
        self.starts.load(Ordering::SeqCst)
    }

    /// Runs `f` on the worker for `problem`, starting it if needed. A worker that timed out,
    /// died or lost its device is killed; the next call starts a fresh one.
    pub fn with<T>(&self, problem: &Arc<ProblemData>, f: impl FnOnce(&mut Worker) -> Result<T, BackendError>) -> Result<T, BackendError> {
        let mut guard = self.worker.lock().unwrap_or_else(|p| p.into_inner());
        if guard.is_none() {
            *guard = Some(self.start(problem)?);
        }
        let w = guard.as_mut().expect("just started");
        // A worker started for another problem (the slot outlives a tune: a spec's next
        // problem, a program's next size) is sent this one before anything runs on it.
        if !w.holds(problem) {
            if let Err(e) = w.reinit(self.ordinal, problem) {
                // Its workspace is gone or half made: the next call starts a fresh one.
                if let Some(mut w) = guard.take() {
                    w.kill();
                }
                return Err(e);
            }
        }
        let w = guard.as_mut().expect("still running");
        let dropped: Vec<u64> = {
            let all = DROPPED.lock().unwrap_or_else(|p| p.into_inner());
            let from = self.dropped_seen.swap(all.len(), Ordering::SeqCst).min(all.len());
            all[from..].to_vec()
        };
        w.forget(&dropped);
        let r = f(w);
        kill_after_fault(&mut guard, &r);
        r
    }

    /// Starts a worker for `problem`, and once more when that fails (a process limit or memory
    /// short for a moment, a worker killed while it opened the device). Failing twice is
    /// [`BackendError::WorkerStart`], which takes the device out of the tune: no config could
    /// run there, and none is blamed. A problem too large for the device is said as such.
    fn start(&self, problem: &Arc<ProblemData>) -> Result<Worker, BackendError> {
        let once = || match &self.command {
            Some(c) => Worker::spawn_command(self.kind, c(), self.ordinal, problem),
            None => Worker::spawn(self.kind, self.ordinal, problem),
        };
        let (label, ordinal) = (self.kind.label, self.ordinal);
        let mut first: Option<String> = None;
        loop {
            let second = match once() {
                Ok(w) => {
                    self.starts.fetch_add(1, Ordering::SeqCst);
                    return Ok(w);
                }
                Err(e @ BackendError::ProblemTooLarge(_)) => return Err(e),
                Err(e) => e.to_string(),
            };
            let Some(first) = &first else {
                tracing::debug!(ordinal, "the {label} worker did not start ({second}); starting it once more");
                std::thread::sleep(Duration::from_millis(200));
                first = Some(second);
                continue;
            };
            let both = if *first == second { format!("{second}; the same the first time") } else { format!("{second}; the first time: {first}") };
            return Err(BackendError::WorkerStart(format!(
                "the {label} worker process of device {ordinal} failed to start twice ({both}); kernels run in a worker process so that one that faults or hangs costs its config, not the tune: fix what failed, or set {}=0 to run them in the tuner's process",
                self.kind.isolation_env
            )));
        }
    }

    /// Runs `f` on the worker running now, without starting one; `None` when none runs (never
    /// started, or killed after a fault).
    pub fn if_running<T>(&self, f: impl FnOnce(&mut Worker) -> Result<T, BackendError>) -> Option<Result<T, BackendError>> {
        let mut guard = self.worker.lock().unwrap_or_else(|p| p.into_inner());
        let r = f(guard.as_mut()?);
        kill_after_fault(&mut guard, &r);
        Some(r)
    }

    /// [`Backend::printed`]: what kernels printed in the running worker since the last call.
    pub fn take_printed(&self) -> Option<Printed> {
        self.if_running(|w| Ok(w.take_printed())).and_then(Result::ok).flatten()
    }

    /// [`Backend::recover`]: the faulted worker is gone (or killed
    /// now); the next call starts a fresh one.
    pub fn recover(&self) {
        if let Some(mut w) = self.worker.lock().unwrap_or_else(|p| p.into_inner()).take() {
            w.kill();
        }
    }
}

/// Kills the worker after an error that leaves its device unusable (a timeout, a lost device);
/// the slot's next call starts a fresh one.
fn kill_after_fault<T>(worker: &mut Option<Worker>, r: &Result<T, BackendError>) {
    if r.as_ref().is_err_and(BackendError::needs_recovery) {
        if let Some(mut w) = worker.take() {
            w.kill();
        }
    }
}

struct Served {
    problem: Arc<ProblemData>,
    reference: Vec<HostBuffer>,
    loaded: HashMap<u64, ()>,
}

fn handle(exec: &mut impl Executor, st: &mut Served, req: Req, blobs: Vec<Vec<u8>>) -> Result<(Vec<f64>, Vec<Vec<u8>>), BackendError> {
    match req {
        Req::Init { ordinal, args } => {
            tracing::debug!(bytes = blobs.iter().map(Vec::len).sum::<usize>(), "worker: problem received");
            let mut data = blobs.into_iter();
            let mut problem = ProblemData::default();
            for a in args {
                match (a.access, a.scalar) {
                    (Some(access), _) => problem.args.push(ArgData::Buffer(HostBuffer {
                        name: a.name,
                        dtype: a.dtype,
                        data: data.next().unwrap_or_default(),
                        access,
                        memory: a.memory,
                    })),
                    (None, Some(value)) => problem.args.push(ArgData::Scalar { name: a.name, dtype: a.dtype, value }),
                    (None, None) => return Err(BackendError::other("malformed init message")),
                }
            }
            let problem = Arc::new(problem);
            exec.init(ordinal, &problem)?;
            st.problem = problem;
            Ok((vec![], vec![]))
        }
        Req::Load { id, name } => {
            exec.load(id, &name, blobs.into_iter().next().unwrap_or_default())?;
            st.loaded.insert(id, ());
            Ok((vec![], vec![]))
        }
        Req::Unload { ids } => {
            for id in ids {
                if st.loaded.remove(&id).is_some() {
                    exec.unload(id);
                }
            }
            Ok((vec![], vec![]))
        }
        Req::Reset { poison } => exec.reset(poison).map(|_| (vec![], vec![])),
        Req::Time { id, launch, n, flush, timeout } => {
            if !st.loaded.contains_key(&id) {
                return Err(BackendError::other("kernel not loaded"));
            }
            Ok((exec.time(id, &launch, &TimeRequest { launches: n, flush, timeout: Duration::from_secs_f64(timeout) })?, vec![]))
        }
        Req::Verify { id, launch, timeout, ref_id, send_ref, outputs, atol, rtol, per_output, compare, mismatches } => {
            if send_ref {
                st.reference = st.problem.buffers().zip(blobs).map(|(b, data)| HostBuffer { data, ..b.described() }).collect();
            }
            if !st.loaded.contains_key(&id) {
                return Err(BackendError::other("kernel not loaded"));
            }
            let req = VerifyRequest {
                reference: &st.reference,
                reference_id: ref_id,
                outputs: &outputs,
                tolerance: crate::spec::job::Tolerance { atol, rtol },
                per_output: &per_output,
                compare: &compare,
                mismatches: &mismatches,
                timeout: Duration::from_secs_f64(timeout),
            };
            Ok((exec.verify(id, &launch, &req)?, vec![]))
        }
        Req::Read { wanted } => Ok((vec![], exec.read_outputs(&wanted)?.into_iter().map(|b| b.data).collect())),
        Req::Bounds { id, launch, timeout } => {
            if !st.loaded.contains_key(&id) {
                return Err(BackendError::other("kernel not loaded"));
            }
            let found = exec.bounds(id, &launch, Duration::from_secs_f64(timeout))?;
            Ok((vec![], vec![serde_json::to_vec(&found).map_err(BackendError::other)?]))
        }
        Req::WrotePast => Ok((vec![], vec![serde_json::to_vec(&exec.wrote_past()?).map_err(BackendError::other)?])),
        Req::Notes => Ok((vec![], exec.take_notes().into_iter().map(String::into_bytes).collect())),
    }
}

/// The worker's loop: serves requests on stdin/stdout until stdin closes (exit status 0) or the
/// device is lost (status 3: this process's device state is unusable; the parent starts a
/// fresh worker).
pub fn serve(exec: &mut impl Executor) -> i32 {
    let mut input = BufReader::with_capacity(1 << 20, io::stdin().lock());
    // Kernels print to standard output: the tuner is spoken to on a copy of it.
    let (capture, proto) = match printed::Capture::start() {
        Some((c, proto)) => (Some(c), Box::new(proto) as Box<dyn Write>),
        None => (None, Box::new(io::stdout()) as Box<dyn Write>),
    };
    let mut output = BufWriter::with_capacity(1 << 20, proto);
    let shm = shm::inherited();
    let shm = shm.as_ref();
    let problem_file = shm::inherited_problem();
    tracing::debug!(shared_memory = shm.is_some(), problem_file = problem_file.is_some(), "worker: serving");
    if let Some(ordinal) = std::env::var(ORDINAL_VAR).ok().and_then(|v| v.parse().ok()) {
        exec.prepare(ordinal);
    }
    let mut st = Served { problem: Default::default(), reference: Vec::new(), loaded: HashMap::new() };
    loop {
        let waited = std::time::Instant::now();
        let (req, blobs) = match read_msg::<Req>(&mut input, shm, problem_file.as_ref()) {
            Ok(m) => m,
            Err(_) => return 0,
        };
        let t = std::time::Instant::now();
        let kind = req.kind();
        let handled = handle(exec, &mut st, req, blobs);
        let times: &[f64] = handled.as_ref().map_or(&[], |(t, _)| t);
        tracing::trace!(request = kind, waited = (t - waited).as_secs_f64(), seconds = t.elapsed().as_secs_f64(), ?times, "worker: request served");
        let printed = capture.as_ref().and_then(printed::Capture::take);
        match handled {
            Ok((times, out)) => {
                let refs: Vec<&[u8]> = out.iter().map(|b| b.as_slice()).collect();
                if write_msg(&mut output, &Rep::Ok { times, printed }, &refs, shm).is_err() {
                    return 0;
                }
            }
            Err(e) => {
                let lost = e.needs_recovery();
                let mut rep = to_wire(&e);
                if let Rep::Err { printed: p, .. } = &mut rep {
                    *p = printed;
                }
                let _ = write_msg(&mut output, &rep, &[], shm);
                if lost {
                    return 3;
                }
            }
        }
    }
}

/// The shared-memory file a worker inherits (Linux: a memfd, mapped to a fixed descriptor in
/// the worker); elsewhere there is none and every blob goes through the pipe.
pub mod shm {
    use std::fs::File;
    use std::io;

    /// The parent's switch: `KERNTUNE_WORKER_SHARED_MEMORY=0` sends every blob through the pipe.
    pub const SWITCH: &str = "KERNTUNE_WORKER_SHARED_MEMORY";
    /// The variable that tells the worker which descriptor is the file.
    const FD_VAR: &str = "KERNTUNE_WORKER_SHM_FD";
    /// The descriptor the file has in the worker.
    #[cfg(target_os = "linux")]
    const CHILD_FD: i32 = 3;
    /// The variable that tells the worker which descriptor is the problem's file.
    const PROBLEM_FD_VAR: &str = "KERNTUNE_WORKER_PROBLEM_FD";
    /// The descriptor the problem's file has in the worker.
    #[cfg(target_os = "linux")]
    const CHILD_PROBLEM_FD: i32 = 4;

    /// Whether shared memory is switched on (it is unless [`SWITCH`] is `0`).
    pub(super) fn enabled() -> bool {
        !std::env::var(SWITCH).is_ok_and(|v| v == "0")
    }

    /// A new shared-memory file, unless switched off or unsupported.
    #[cfg(target_os = "linux")]
    pub(super) fn memfd(name: &str) -> Option<File> {
        if !enabled() {
            return None;
        }
        rustix::fs::memfd_create(name, rustix::fs::MemfdFlags::CLOEXEC).ok().map(File::from)
    }

    /// See the Linux version: no shared memory here.
    #[cfg(not(target_os = "linux"))]
    pub(super) fn memfd(_name: &str) -> Option<File> {
        None
    }

    /// Makes a shared-memory file and arranges for `cmd`'s process to inherit it, and the
    /// problem's file when there is one; `None` (and the pipe for everything but the problem's
    /// file) when it cannot, or when switched off.
    #[cfg(target_os = "linux")]
    pub fn share_with(cmd: &mut std::process::Command, problem: Option<&File>) -> Option<File> {
        use command_fds::{CommandFdExt, FdMapping};
        let mut mappings = vec![];
        if let Some(theirs) = problem.and_then(|f| f.try_clone().ok()) {
            mappings.push(FdMapping { parent_fd: theirs.into(), child_fd: CHILD_PROBLEM_FD });
            cmd.env(PROBLEM_FD_VAR, CHILD_PROBLEM_FD.to_string());
        }
        let file = memfd("kerntune-worker");
        if let Some(theirs) = file.as_ref().and_then(|f| f.try_clone().ok()) {
            mappings.push(FdMapping { parent_fd: theirs.into(), child_fd: CHILD_FD });
            cmd.env(FD_VAR, CHILD_FD.to_string());
        }
        if cmd.fd_mappings(mappings).is_err() {
            cmd.env_remove(FD_VAR).env_remove(PROBLEM_FD_VAR);
            return None;
        }
        file
    }

    /// See the Linux version: no shared memory here.
    #[cfg(not(target_os = "linux"))]
    pub fn share_with(_cmd: &mut std::process::Command, _problem: Option<&File>) -> Option<File> {
        None
    }

    /// In the worker: the file the parent shared, if any (opened again through `/proc`, so that
    /// no descriptor is taken on trust).
    pub fn inherited() -> Option<File> {
        reopen(FD_VAR, true)
    }

    /// In the worker: the problem's file the parent shared, if any (read only).
    pub fn inherited_problem() -> Option<File> {
        reopen(PROBLEM_FD_VAR, false)
    }

    /// The descriptor named by variable `var`, opened again through `/proc`.
    fn reopen(var: &str, write: bool) -> Option<File> {
        let fd: i32 = std::env::var(var).ok()?.parse().ok()?;
        std::fs::OpenOptions::new().read(true).write(write).open(format!("/proc/self/fd/{fd}")).ok()
    }

    /// Threads that copy into or out of shared memory: such a copy is bound by page faults and
    /// page allocation, which several threads do at once when they copy through a mapping (a
    /// write through the file takes its lock: 2 GiB took 0.82–0.95 s with 1, 8 or 16 writing
    /// threads on an H200 host, and 0.54–0.56 s with 8 threads copying into a mapping;
    /// docs/benchmarks.md, "A wgpu workspace without a copy of the problem"). Plain threads,
    /// not rayon's pool, which a CPU reference may be keeping busy at that very moment.
    #[cfg(unix)]
    const THREADS: usize = 8;
    /// Below this, one thread copies.
    #[cfg(unix)]
    const PIECE: usize = 16 << 20;

    /// Writes `data` at `offset`: through the file below `PIECE`, else through a mapping by
    /// `THREADS` threads. (Where the host has no memory left for the file's pages, a copy
    /// through a mapping ends the process with SIGBUS where a write would have failed; the
    /// host holds the problem a second time either way, and a memfd has no size limit of its
    /// own to run into first.)
    #[cfg(unix)]
    pub fn write_at(file: &File, data: &[u8], offset: u64) -> io::Result<()> {
        use std::os::unix::fs::FileExt;
        if data.len() < PIECE {
            return file.write_all_at(data, offset);
        }
        let end = offset + data.len() as u64;
        if file.metadata()?.len() < end {
            file.set_len(end)?;
        }
        // SAFETY: the file is this tune's own shared-memory file (a memfd the parent made, or
        // inherited from it), now at least `end` bytes long. The range mapped is written here
        // only, and its reader is told of it only after this returns (the message naming it is
        // sent, or the problem marked filled, afterwards), so nothing else touches the mapping
        // while it lives.
        let mut map = unsafe { memmap2::MmapOptions::new().offset(offset).len(data.len()).map_mut(file)? };
        let size = data.len().div_ceil(THREADS).max(PIECE);
        std::thread::scope(|s| {
            for (from, to) in data.chunks(size).zip(map.chunks_mut(size)) {
                s.spawn(move || to.copy_from_slice(from));
            }
        });
        Ok(())
    }

    /// Reads `buf.len()` bytes at `offset`.
    #[cfg(unix)]
    pub fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
        use std::os::unix::fs::FileExt;
        let size = buf.len().div_ceil(THREADS).max(PIECE);
        std::thread::scope(|s| {
            let parts: Vec<_> =
                buf.chunks_mut(size).enumerate().map(|(k, piece)| s.spawn(move || file.read_exact_at(piece, offset + (k * size) as u64))).collect();
            parts.into_iter().try_for_each(|h| h.join().unwrap_or_else(|_| Err(io::Error::other("a copying thread panicked"))))
        })
    }

    /// See the Unix version: never called without a file.
    #[cfg(not(unix))]
    pub fn write_at(_file: &File, _data: &[u8], _offset: u64) -> io::Result<()> {
        Err(io::Error::other("no shared memory on this platform"))
    }

    /// See the Unix version: never called without a file.
    #[cfg(not(unix))]
    pub fn read_at(_file: &File, _buf: &mut [u8], _offset: u64) -> io::Result<()> {
        Err(io::Error::other("no shared memory on this platform"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The files that may hold the out-of-memory killer's count for a process whose
    /// `/proc/self/cgroup` and `/proc/self/mountinfo` are these.
    fn oom_count_candidates(cgroup: &str, mountinfo: &str) -> Vec<std::path::PathBuf> {
        memory_cgroups(cgroup, mountinfo).iter().map(MemoryCgroup::oom_count_file).collect()
    }

    /// Blobs large enough to be copied through a mapping by several threads land where the
    /// reader looks for them, after a small one written through the file, at an offset that is
    /// no multiple of a page.
    #[cfg(target_os = "linux")]
    #[test]
    fn large_blobs_copied_through_a_mapping_read_back_the_same() {
        let Some(file) = rustix::fs::memfd_create("kerntune-test", rustix::fs::MemfdFlags::CLOEXEC).ok().map(std::fs::File::from) else {
            return;
        };
        let small: Vec<u8> = (0..1000u32).map(|i| (i % 251) as u8).collect();
        let large: Vec<u8> = (0..(40u32 << 20) + 12_345).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
        shm::write_at(&file, &small, 0).unwrap();
        shm::write_at(&file, &large, small.len() as u64).unwrap();
        assert_eq!(file.metadata().unwrap().len(), (small.len() + large.len()) as u64);
        let (mut a, mut b) = (vec![0u8; small.len()], vec![0u8; large.len()]);
        shm::read_at(&file, &mut a, 0).unwrap();
        shm::read_at(&file, &mut b, small.len() as u64).unwrap();
        assert!(a == small && b == large);
    }

    #[test]
    fn messages_round_trip_with_blobs() {
        let mut buf = Vec::new();
        let req = Req::Time { id: 7, launch: Launch { grid: [2, 1, 1], block: [64, 1, 1], shared_mem_bytes: 0 }, n: 5, flush: L2Flush::Rotate, timeout: 1.5 };
        write_msg(&mut buf, &req, &[b"abc", b""], None).unwrap();
        let (back, blobs): (Req, _) = read_msg(&mut buf.as_slice(), None, None).unwrap();
        assert!(matches!(back, Req::Time { id: 7, n: 5, flush: L2Flush::Rotate, .. }));
        assert_eq!(blobs, vec![b"abc".to_vec(), vec![]]);
    }

    #[test]
    fn errors_keep_their_kind_across_the_pipe() {
        for e in [
            BackendError::DeviceLost("x".into()),
            BackendError::WrongOutput("y".into()),
            BackendError::LaunchFailed("z".into()),
            BackendError::TimedOut(Duration::from_secs(1)),
            BackendError::ProblemTooLarge("w".into()),
            BackendError::WorkerStart("v".into()),
        ] {
            let Rep::Err { kind, message, .. } = to_wire(&e) else { panic!() };
            let back = from_wire(&kind, message, Duration::from_secs(1));
            assert_eq!(back.kind(), e.kind());
            assert_eq!(back.to_string(), e.to_string());
        }
        // A problem too large for the device stays that, so that the tuner takes the device out.
        let Rep::Err { kind, message, .. } = to_wire(&BackendError::ProblemTooLarge("w".into())) else { panic!() };
        assert!(matches!(from_wire(&kind, message, Duration::ZERO), BackendError::ProblemTooLarge(m) if m == "w"));
    }

    #[test]
    fn a_corrupt_length_is_an_error_not_an_allocation() {
        let mut buf = Vec::new();
        buf.extend_from_slice(&u64::MAX.to_le_bytes());
        assert!(read_msg::<Req>(&mut buf.as_slice(), None, None).is_err());
        assert!(read_msg::<Req>(&mut [1u8, 2].as_slice(), None, None).is_err());
    }

    #[test]
    fn a_childs_last_words_are_kept_without_their_colors() {
        let text = b"first\n\x1b[2m2026-12-03\x1b[0m \x1b[33m WARN\x1b[0m no device\n\n  \nc\nd\ne without a newline";
        let words = LastWords::follow("test-stderr".into(), std::io::Cursor::new(text.to_vec()));
        assert_eq!(words.said().as_deref(), Some("2026-12-03  WARN no device | c | d | e without a newline"));
        assert_eq!(LastWords::follow("test-stderr".into(), std::io::empty()).said(), None);
        let long = LastWords::follow("test-stderr".into(), std::io::Cursor::new("x".repeat(1000)));
        assert_eq!(long.said().map(|s| s.len()), Some(LastWords::WIDTH));
    }

    #[test]
    fn the_out_of_memory_killers_count_is_the_cgroups() {
        use std::path::PathBuf;
        let paths = |v: Vec<PathBuf>| v.into_iter().map(|p| p.display().to_string()).collect::<Vec<_>>();
        // cgroup v2 alone (a systemd machine, a Slurm job's step).
        let v2 = "25 1 0:22 / /sys/fs/cgroup rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate\n30 1 8:1 / / rw - ext4 /dev/sda1 rw\n";
        assert_eq!(
            paths(oom_count_candidates("0::/system.slice/slurmstepd.scope/job_12/step_0\n", v2)),
            ["/sys/fs/cgroup/system.slice/slurmstepd.scope/job_12/step_0/memory.events"]
        );
        // A container's namespace: its cgroup is the root it sees, and has the file.
        assert_eq!(paths(oom_count_candidates("0::/\n", v2)), ["/sys/fs/cgroup/memory.events"]);
        // cgroup v1, hybrid (this kind of machine): the memory hierarchy's memory.oom_control, not
        // the unified hierarchy's (no memory controller there); the root's is the machine's.
        let hybrid = "33 25 0:28 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n\
                      40 25 0:35 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n\
                      41 25 0:36 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n";
        let cg = "9:name=systemd:/\n4:memory:/process_api/203f\n1:cpu,cpuacct:/\n0::/\n";
        assert_eq!(
            paths(oom_count_candidates(cg, hybrid)),
            ["/sys/fs/cgroup/memory/process_api/203f/memory.oom_control", "/sys/fs/cgroup/unified/memory.events"]
        );
        assert!(oom_count_candidates("4:memory:/\n", hybrid).is_empty());
        // A mount of a cgroup below its hierarchy's root takes the paths below it, and no other.
        let below = "40 25 0:35 /kubepods/pod1 /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory\n";
        assert_eq!(paths(oom_count_candidates("4:memory:/kubepods/pod1/c2\n", below)), ["/sys/fs/cgroup/memory/c2/memory.oom_control"]);
        assert!(oom_count_candidates("4:memory:/kubepods/pod10\n", below).is_empty());
        // No mountinfo: the usual mount points.
        assert_eq!(paths(oom_count_candidates("4:memory:/a\n0::/b\n", "")), ["/sys/fs/cgroup/memory/a/memory.oom_control", "/sys/fs/cgroup/b/memory.events"]);
        // This process's: a file that holds the count, or none where the system does not say.
        if std::path::Path::new("/proc/vmstat").exists() {
            let file = oom_count_file().expect("Linux 4.13 and later count");
            assert!(parse_oom_kills(&std::fs::read_to_string(&file).unwrap()).is_some(), "{file:?}");
        }
    }

    #[test]
    fn the_out_of_memory_killers_count_is_read_from_vmstat() {
        assert_eq!(parse_oom_kills("pgfault 12\noom_kill 3\nnr_free_pages 9\n"), Some(3));
        assert_eq!(parse_oom_kills("pgfault 12\n"), None);
        assert_eq!(parse_oom_kills("oom_kill x\n"), None);
        // cgroup v2's memory.events (oom_group_kill is another count) and v1's memory.oom_control.
        assert_eq!(parse_oom_kills("low 0\nhigh 0\nmax 12\noom 2\noom_kill 2\noom_group_kill 0\n"), Some(2));
        assert_eq!(parse_oom_kills("oom_group_kill 5\n"), None);
        assert_eq!(parse_oom_kills("oom_kill_disable 0\nunder_oom 0\noom_kill 7\n"), Some(7));
        // On Linux 4.13 and later the machine's own count reads.
        if std::path::Path::new("/proc/vmstat").exists() {
            assert!(oom_kills().is_some(), "{:?}", std::fs::read_to_string("/proc/vmstat").map(|t| t.len()));
        }
    }
}
