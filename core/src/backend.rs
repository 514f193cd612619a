//! The contract every backend implements: target and limits, compile a config, allocate a
//! workspace for a problem, time launches, read outputs back.
//!
//! Threading: `compile` is called from a pool of worker threads at the same time as the tuner's
//! thread times other configs, so a backend must be `Sync` and compilation must not disturb
//! timing (CUDA's NVRTC and module loading, wgpu's pipeline creation and the fake all qualify).
//! Everything that touches a [`Backend::Workspace`] happens on the tuner's thread.

use crate::error::BackendError;
use crate::limits::Limits;
use crate::measure::timing::TimeRequest;
use crate::measure::timing::TimingMethod;
use crate::measure::verify::VerifyRequest;
use crate::plan::prepare::Launch;
use crate::plan::prune::ResourceUsage;
use crate::space::config::Config;
use crate::spec::problem::{HostBuffer, ProblemData};
use crate::spec::settings::L2Flush;
use crate::spec::source::KernelSource;
use crate::target::Target;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// What the backend is asked to compile.
#[derive(Clone, Debug)]
pub struct CompileRequest<'a> {
    /// The source (name, language, options, and the file's text).
    pub source: &'a KernelSource,
    /// The text to compile for this config: the source's text, or a config-specific rewrite of
    /// it (see [`crate::plan::Prepared::code`]). Backends compile this, not `source.code`.
    pub code: &'a str,
    /// The config.
    pub config: &'a Config,
    /// Name/value pairs to define: the config's parameters, then any problem constants the
    /// spec asks to pass. CUDA and HIP pass them as `-D`; WGSL injects `const` declarations
    /// (or pipeline overrides where declared).
    pub defines: &'a [(String, String)],
    /// The launch this config will use (block size for launch bounds, workgroup size).
    pub launch: &'a Launch,
    /// By-value scalar arguments with their values. CUDA and HIP pass these at launch and
    /// ignore them here; WGSL has no by-value kernel arguments, so the wgpu backend injects
    /// them as `const` declarations.
    pub scalars: &'a [(String, crate::spec::value::Value)],
    /// How each buffer argument is used, in argument order (binding layouts need it).
    pub buffers: &'a [crate::spec::problem::Access],
    /// Set by the tuner when it stops waiting for this compile (it ran far longer than the
    /// others, past the compile timeout, or the tune reached its time limit or was interrupted).
    /// A backend whose compile can take long runs it through [`abandonable`], which returns as
    /// soon as it is set and lets the tuner read the compile's CPU time; `None` (an application
    /// compiling for its own launch) waits for the compile.
    pub abandon: Option<&'a CompileWatch>,
}

/// What the tuner and a compile running through [`abandonable`] share: the order to stop
/// waiting for it, and the thread it runs on, whose CPU time tells how much compiling it did
/// (compiles running beside it share the cores, so its wall time also counts their load).
#[derive(Debug, Default)]
pub struct CompileWatch {
    abandon: AtomicBool,
    /// The compile's thread id (Linux), 0 until it starts.
    thread: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// The CPU seconds (as `f64` bits, plus one so that 0 is none) that thread used, kept as it
    /// ends: read after it (the answer not yet taken), its time would be gone.
    thread_used: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// Whether the tuner wants the compile in a compiler process it can kill (`Some(true)`), on
    /// a thread (`Some(false)`), or as the backend compiles by default (`None`); see
    /// [`crate::compiler`].
    in_process: Option<bool>,
    /// The compiler process's id while it compiles this, 0 otherwise.
    process: std::sync::atomic::AtomicU32,
    /// That process's CPU seconds (as `f64` bits) when it was given this compile.
    process_base: std::sync::atomic::AtomicU64,
    /// The CPU seconds (as `f64` bits, plus one so that 0 is none) the compiler process used on
    /// this compile, once it answered or was stopped.
    process_used: std::sync::atomic::AtomicU64,
    /// Whether its CPU time will be told (see [`CompileWatch::track`]).
    tracked: AtomicBool,
}

impl CompileWatch {
    /// A watch for a compile not yet started.
    pub fn new() -> CompileWatch {
        CompileWatch::default()
    }

    /// A watch for a compile the tuner wants run in a compiler process, so that giving up on it
    /// stops it (see [`crate::compiler`]); a backend without compiler processes runs it on a
    /// thread as [`CompileWatch::new`]'s.
    pub fn in_process() -> CompileWatch {
        CompileWatch::wanting(Some(true))
    }

    /// A watch for a compile that runs in a compiler process (`Some(true)`), on a thread
    /// (`Some(false)`), or as the backend compiles by default (`None`): what
    /// [`crate::compiler::wanted`] says.
    pub fn wanting(process: Option<bool>) -> CompileWatch {
        CompileWatch { in_process: process, ..CompileWatch::default() }
    }

    /// Whether the tuner asked for a compiler process (`Some(true)`), a thread (`Some(false)`)
    /// or left it to the backend (`None`, as [`CompileWatch::new`]'s).
    pub fn wants_process(&self) -> Option<bool> {
        self.in_process
    }

    /// The compiler process compiling this, if one is.
    pub fn process(&self) -> Option<u32> {
        Some(self.process.load(Ordering::Relaxed)).filter(|&p| p != 0)
    }

    /// Records that process `pid` compiles this from now (`None`: no longer; what it used is
    /// kept for [`CompileWatch::cpu_seconds`]). Call with `None` while the process is still
    /// there to read.
    pub(crate) fn set_process(&self, pid: Option<u32>) {
        match pid {
            Some(pid) => {
                let base = process_cpu_seconds(pid).unwrap_or(0.0);
                self.process_base.store(base.to_bits(), Ordering::Relaxed);
                self.process.store(pid, Ordering::Relaxed);
            }
            None => {
                if let Some(used) = self.cpu_seconds().filter(|_| self.process().is_some()) {
                    store_seconds(&self.process_used, used);
                }
                self.process.store(0, Ordering::Relaxed);
            }
        }
    }

    /// Marks a compile whose CPU time will be told (it runs through [`abandonable`] or in a
    /// compiler process, where the system tells a thread's CPU time): until its thread or process
    /// is known it has used none, so that a compile whose thread has not yet run (a loaded
    /// machine) is not given up on by the wall clock as one whose time cannot be told.
    pub(crate) fn track(&self) {
        if !self.tracked.load(Ordering::Relaxed) && this_thread_cpu_seconds().is_some() {
            self.tracked.store(true, Ordering::Relaxed);
        }
    }

    /// Stops waiting for the compile; whether this was already asked.
    pub fn abandon(&self) -> bool {
        self.abandon.swap(true, Ordering::Relaxed)
    }

    /// Whether [`CompileWatch::abandon`] was asked.
    pub fn abandoned(&self) -> bool {
        self.abandon.load(Ordering::Relaxed)
    }

    /// The CPU seconds the compile's thread (or compiler process) has used on it so far (0 once
    /// it runs through [`abandonable`] or a compiler process, before its thread or process is
    /// known); `None` before that, for a compile that runs neither way, or where the system
    /// does not say (outside Linux).
    pub fn cpu_seconds(&self) -> Option<f64> {
        if let Some(pid) = self.process() {
            let base = f64::from_bits(self.process_base.load(Ordering::Relaxed));
            return process_cpu_seconds(pid).map(|s| (s - base).max(0.0));
        }
        if let Some(used) = stored_seconds(&self.process_used) {
            return Some(used);
        }
        match self.thread.load(Ordering::Relaxed) {
            0 => self.tracked.load(Ordering::Relaxed).then_some(0.0),
            tid => thread_cpu_seconds(tid).or_else(|| stored_seconds(&self.thread_used)),
        }
    }
}

/// Keeps `seconds` in `slot` (as `f64` bits, plus one so that 0 is none; see
/// [`stored_seconds`]).
fn store_seconds(slot: &std::sync::atomic::AtomicU64, seconds: f64) {
    slot.store(seconds.to_bits().wrapping_add(1), Ordering::Relaxed);
}

/// The seconds [`store_seconds`] kept in `slot`, if any.
fn stored_seconds(slot: &std::sync::atomic::AtomicU64) -> Option<f64> {
    let bits = slot.load(Ordering::Relaxed);
    (bits != 0).then(|| f64::from_bits(bits.wrapping_sub(1)))
}

/// The CPU seconds the calling thread has used (see [`CompileWatch::cpu_seconds`]); `None` where
/// the system does not say.
pub fn this_thread_cpu_seconds() -> Option<f64> {
    match this_thread_id() {
        0 => None,
        tid => thread_cpu_seconds(tid),
    }
}

/// The CPU seconds a thread of this process has used (Linux: the scheduler's nanoseconds, else
/// its user and system ticks).
fn thread_cpu_seconds(tid: u64) -> Option<f64> {
    let task = format!("/proc/self/task/{tid}");
    if let Some(ns) = std::fs::read_to_string(format!("{task}/schedstat")).ok().and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok()) {
        return Some(ns as f64 * 1e-9);
    }
    stat_cpu_seconds(&std::fs::read_to_string(format!("{task}/stat")).ok()?)
}

/// The CPU seconds process `pid` has used, all its threads together (Linux: `/proc/PID/stat`'s
/// user and system ticks); `None` where the system does not say. A compiler process's (see
/// [`crate::compiler`]).
pub fn process_cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat_cpu_seconds(&stat)
}

/// The parent of process `pid` (Linux: `/proc/PID/stat`); `None` where the system does not say.
pub fn process_parent(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat_fields(&stat)?.get(1)?.parse().ok()
}

/// The fields of a `/proc/…/stat` line after the command's name: `pid (comm) state ppid …`
/// gives `state`, `ppid`, … (the name, in parentheses, may hold spaces and parentheses).
fn stat_fields(stat: &str) -> Option<Vec<&str>> {
    Some(stat.rsplit_once(')')?.1.split_whitespace().collect())
}

/// The user and system ticks of a `/proc/…/stat` line, in seconds.
fn stat_cpu_seconds(stat: &str) -> Option<f64> {
    let f = stat_fields(stat)?;
    let ticks = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    // USER_HZ, which Linux fixes at 100 for what /proc reports.
    Some(ticks as f64 / 100.0)
}

/// This thread's id, where the system says (Linux: `/proc/thread-self` links to
/// `PID/task/TID`).
fn this_thread_id() -> u64 {
    std::fs::read_link("/proc/thread-self").ok().and_then(|p| p.file_name()?.to_str()?.parse().ok()).unwrap_or(0)
}

/// Runs `work` (a compile that owns what it needs) so that the caller can stop waiting for it:
/// with `abandon`, on a thread of its own, checked every 20 ms; once `abandon` is set this
/// returns [`BackendError::Abandoned`] and `work` finishes unobserved in the background (a
/// compiler call cannot be interrupted safely, and what it writes to a compile cache is then
/// there for the next tune). Without `abandon`, `work` runs on this thread.
pub fn abandonable<T, F>(abandon: Option<&CompileWatch>, work: F) -> Result<T, BackendError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, BackendError> + Send + 'static,
{
    let Some(watch) = abandon else { return work() };
    watch.track();
    let t0 = std::time::Instant::now();
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    let (thread, used) = (watch.thread.clone(), watch.thread_used.clone());
    std::thread::Builder::new()
        .name("kerntune-compile-job".into())
        .spawn(move || {
            thread.store(this_thread_id(), Ordering::Relaxed);
            let r = work();
            if let Some(s) = this_thread_cpu_seconds() {
                store_seconds(&used, s);
            }
            let _ = tx.send(r);
        })
        .map_err(|e| BackendError::other(format!("starting a compile thread: {e}")))?;
    loop {
        if watch.abandoned() {
            return Err(BackendError::Abandoned(t0.elapsed()));
        }
        match rx.recv_timeout(std::time::Duration::from_millis(20)) {
            Ok(r) => return r,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return Err(BackendError::other("the compile panicked")),
        }
    }
}

/// What a config's compile request borrows: its defines, its source text, and the problem's
/// scalars and buffer uses. The tuner and the backends' launch APIs build requests with it, so
/// an application compiles a resolved config exactly as the tune did.
pub struct CompileInputs<'a> {
    defines: Vec<(String, String)>,
    code: std::borrow::Cow<'a, str>,
    scalars: Vec<(String, crate::spec::value::Value)>,
    access: Vec<crate::spec::problem::Access>,
}

impl<'a> CompileInputs<'a> {
    /// The inputs of `config` launched as `launch`, for the job `prep` was prepared from, whose
    /// source is `source`.
    pub fn new(prep: &crate::plan::prepare::Prepared, source: &'a KernelSource, config: &Config, launch: &Launch) -> CompileInputs<'a> {
        CompileInputs { defines: prep.defines(config, launch), code: prep.code(config, &source.code), scalars: prep.scalars(), access: prep.buffer_access() }
    }

    /// The compile request (borrowing these inputs).
    pub fn request<'r>(&'r self, source: &'r KernelSource, config: &'r Config, launch: &'r Launch) -> CompileRequest<'r> {
        CompileRequest { source, code: &self.code, config, defines: &self.defines, launch, scalars: &self.scalars, buffers: &self.access, abandon: None }
    }
}

/// What a memory checker said of one launch ([`Backend::memcheck`], [`Backend::bounds`]).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Memcheck {
    /// It ran the launch to the end and saw no out-of-bounds or other memory access error;
    /// `tool`: what ran, with the settings that bound what it can see (e.g. `compute-sanitizer
    /// (memcheck, 4194304 bytes of padding after each allocation)`).
    Clean {
        /// The checker and its settings.
        tool: String,
    },
    /// Its first report, whole (what was accessed, where, by which thread, which allocation).
    Reported {
        /// The checker (e.g. `compute-sanitizer (memcheck)`).
        tool: String,
        /// The report.
        report: String,
    },
    /// It could not tell (it wrote no log, or the launch failed under it without a report):
    /// why, in the checker's words where it gave some.
    Inconclusive(String),
}

/// What kernels printed to standard output (device `printf`, a failed device-side assertion's
/// line) where the backend kept it out of the tuner's own output: a worker process's standard
/// output is its pipe to the tuner, so there it is read, counted and kept in part
/// ([`Backend::printed`]).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Printed {
    /// Bytes printed.
    pub bytes: u64,
    /// Lines printed (ended by a newline).
    pub lines: u64,
    /// The first lines, each cut to [`Printed::WIDTH`] characters.
    pub first: Vec<String>,
    /// The last line, cut alike, where there were more than [`Printed::FIRST`].
    pub last: Option<String>,
}

impl Printed {
    /// How many of the first lines are kept.
    pub const FIRST: usize = 3;
    /// How much of a kept line.
    pub const WIDTH: usize = 200;

    /// Whether nothing was printed.
    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }

    /// A line as it is kept: without a carriage return at its end, cut to [`Printed::WIDTH`]
    /// characters.
    pub fn cut(line: &str) -> String {
        line.trim_end_matches('\r').chars().take(Self::WIDTH).collect()
    }

    /// Counts one line (its newline excluded from `line`, counted in `bytes` by the caller).
    pub fn line(&mut self, line: &str) {
        self.lines += 1;
        let cut = Self::cut(line);
        if self.first.len() < Self::FIRST {
            self.first.push(cut);
        } else {
            self.last = Some(cut);
        }
    }

    /// `other`, printed after this.
    pub fn add(&mut self, other: Printed) {
        self.bytes += other.bytes;
        self.lines += other.lines;
        let mut rest = other.first.into_iter().chain(other.last);
        while self.first.len() < Self::FIRST {
            match rest.next() {
                Some(l) => self.first.push(l),
                None => break,
            }
        }
        if let Some(l) = rest.last() {
            self.last = Some(l);
        }
    }

    /// The lines kept, quoted: the first ones, then `…` and the last where lines were left out.
    pub fn quoted(&self) -> String {
        let mut q: Vec<String> = self.first.iter().map(|l| format!("`{l}`")).collect();
        if let Some(l) = &self.last {
            if self.lines > self.first.len() as u64 + 1 {
                q.push("…".into());
            }
            q.push(format!("`{l}`"));
        }
        q.join(", ")
    }

    /// "3 lines (120 bytes)", or the bytes alone where no line ended.
    pub fn size(&self) -> String {
        let bytes = bytesize::ByteSize(self.bytes).display().si().to_string();
        match self.lines {
            0 => bytes,
            1 => format!("1 line ({bytes})"),
            n => format!("{n} lines ({bytes})"),
        }
    }
}

/// A compiled kernel with its resource report.
#[derive(Debug)]
pub struct Compiled<K> {
    /// The backend's loaded kernel.
    pub kernel: K,
    /// What the compiler reported.
    pub usage: ResourceUsage,
    /// Whether it came from a persistent compile cache.
    pub cached: bool,
}

/// A GPU (or GPU-like) backend. See the module docs for the threading contract.
pub trait Backend: Send + Sync {
    /// A compiled, loaded kernel.
    type Kernel: Send + Sync + 'static;
    /// Device memory for one problem instance.
    type Workspace: Send;

    /// The device.
    fn target(&self) -> &Target;
    /// Its limits.
    fn limits(&self) -> &Limits;
    /// Compiler and driver versions; part of every cache key.
    fn toolchain(&self) -> String;
    /// The source language this backend compiles (`cuda`, `hip`, `wgsl`).
    fn language(&self) -> &'static str;
    /// How [`Backend::time`] measures.
    fn timing_method(&self) -> TimingMethod;
    /// Facts for the database's environment record (driver, adapter, ...).
    fn environment(&self) -> Vec<(String, String)> {
        Vec::new()
    }

    /// Compiles one config. Called concurrently from worker threads.
    fn compile(&self, req: &CompileRequest<'_>) -> Result<Compiled<Self::Kernel>, BackendError>;

    /// Whether [`Backend::compile`] would serve `req` from a persistent compile cache (a lookup
    /// of its cache key: nothing is compiled); `None` where the backend cannot tell cheaply.
    /// The tuner asks it of an adaptive search's first proposals: when they were compiled
    /// before, compiling does not bound the tune, and it keeps few configs in flight so that
    /// the search chooses each after outcomes are in.
    fn in_compile_cache(&self, req: &CompileRequest<'_>) -> Option<bool> {
        let _ = req;
        None
    }

    /// Starts, ahead of a tune's first compiles, the compiler processes that `threads` compile
    /// threads will use (see [`crate::compiler::CompilerKind::prestart`]), where this backend
    /// compiles in such processes and the tune uses them (`wanted`: what
    /// [`crate::compiler::wanted`] says); nothing by default. The tuner calls it once it knows
    /// it will compile.
    fn prestart_compilers(&self, threads: usize, wanted: Option<bool>) {
        let _ = (threads, wanted);
    }

    /// Whether a compile here takes a small part of what measuring a config takes, from the
    /// first (wgpu builds a pipeline in tens of milliseconds, where an offline compiler such as
    /// NVRTC takes seconds). The tuner then keeps few configs in flight for an adaptive search
    /// until it has timed an evaluation, as when the first proposals are in the compile cache.
    fn compiles_quickly(&self) -> bool {
        false
    }

    /// Allocates device memory for a problem and uploads its initial data.
    fn workspace(&self, problem: &std::sync::Arc<ProblemData>) -> Result<Self::Workspace, BackendError>;

    /// Restores every input and read-write buffer to its initial data; with `poison`, fills
    /// write-only outputs with the poison pattern (all bits set).
    fn reset(&self, ws: &mut Self::Workspace, poison: bool) -> Result<(), BackendError>;

    /// Launches `req.launches` times and returns each launch's time in seconds.
    fn time(&self, ws: &mut Self::Workspace, kernel: &Self::Kernel, launch: &Launch, req: &TimeRequest) -> Result<Vec<f64>, BackendError>;

    /// Reads back the buffers `wanted` selects (by position among the problem's buffers), in
    /// argument order; the others come back without their data (a verification reads only what
    /// it compares, not the inputs: two thirds of a GEMM's buffers).
    fn read_outputs(&self, ws: &mut Self::Workspace, wanted: &[bool]) -> Result<Vec<HostBuffer>, BackendError>;

    /// Compares the outputs `req` selects with its reference, after a launch; `Err(WrongOutput)`
    /// in [`crate::measure::verify::compare`]'s words on a mismatch. Reads every buffer back and
    /// compares on the host; a backend that can compare on the device overrides this (the rest
    /// of [`verify_on_host`] stays as it is).
    fn check_outputs(&self, ws: &mut Self::Workspace, req: &VerifyRequest<'_>) -> Result<(), BackendError> {
        req.check(&self.read_outputs(ws, &req.wanted())?)
    }

    /// Poisons write-only outputs and restores the inputs, launches once, reads back and compares
    /// with the reference; returns the times of the launches it made (the tuner uses them to
    /// race clearly slow configs out without further launches). A backend that runs kernels
    /// elsewhere, or can compare on the device, overrides this to avoid shipping every output
    /// back to the host.
    fn verify(&self, ws: &mut Self::Workspace, kernel: &Self::Kernel, launch: &Launch, req: &VerifyRequest<'_>) -> Result<Vec<f64>, BackendError> {
        verify_on_host(self, ws, kernel, launch, req)
    }

    /// Whether a kernel this backend compiled can be timed on another instance of the same
    /// backend type opened on another device of the same target (a tune over several GPUs
    /// compiles once and measures anywhere). True where kernels travel as binaries (the CUDA
    /// and HIP worker processes load them); false where a kernel belongs to the device that
    /// compiled it (wgpu pipelines, kernels loaded into one CUDA context).
    fn shares_kernels(&self) -> bool {
        false
    }

    /// Runs `kernel` once under the platform's memory checker (e.g. NVIDIA's
    /// `compute-sanitizer`, or the backend's own [`Backend::bounds`] in a workspace of its
    /// own) and says what it saw; `None` where there is no such tool. Called for one config of
    /// each cause of a memory fault, and for the winner when asked (`--memcheck`), never while
    /// timing.
    fn memcheck(&self, problem: &Arc<ProblemData>, kernel: &Self::Kernel, launch: &Launch) -> Option<Memcheck> {
        let _ = (problem, kernel, launch);
        None
    }

    /// Launches `kernel` again in `ws` to find whether it reads or writes past a buffer's end,
    /// where the backend can tell without a tool: wgpu, whose accesses past a buffer never
    /// fault (they are clamped or dropped), keeps guard words after each buffer and launches
    /// the config with them filled three ways. `None` where it cannot (the default: CUDA's
    /// buffers end before an unmapped range, so such a launch faults, and
    /// [`Backend::memcheck`] runs `compute-sanitizer`). The tuner asks it of each reference
    /// candidate, whose outputs every other config is held to, before taking its outputs; the
    /// workspace is left as [`Backend::reset`] leaves it.
    fn bounds(&self, ws: &mut Self::Workspace, kernel: &Self::Kernel, launch: &Launch, timeout: std::time::Duration) -> Result<Option<Memcheck>, BackendError> {
        let _ = (ws, kernel, launch, timeout);
        Ok(None)
    }

    /// After launches no verification looked at (`--reference none`, a config outside
    /// `--verify-sample`), whether one wrote past a buffer's end, where the backend can tell
    /// without a tool (wgpu's guard words, filled again for the launches after): the failure's
    /// message. `None` where nothing did, or the backend cannot tell (the default: on CUDA such
    /// a launch faults).
    fn wrote_past(&self, ws: &mut Self::Workspace) -> Result<Option<String>, BackendError> {
        let _ = ws;
        Ok(None)
    }

    /// What the kernels launched in `ws` printed since the last call (device `printf`), where
    /// the backend kept it out of the tuner's output (a worker process's standard output).
    /// `None` where nothing was printed, or where printing goes to this process's standard
    /// output (kernels run in it; the default).
    fn printed(&self, ws: &mut Self::Workspace) -> Option<Printed> {
        let _ = ws;
        None
    }

    /// What the backend had to do to measure honestly since the last call (e.g. bringing a
    /// GPU's clock back up after it idled), as lines for the tune's report; the tuner calls
    /// it once at the end of every tune, so each tune reports only its own.
    fn take_notes(&self) -> Vec<String> {
        Vec::new()
    }

    /// After [`BackendError::DeviceLost`]: make the device usable again (a fresh context),
    /// so that a new workspace can be allocated and kernels launched. Kernels compiled before
    /// must stay usable (the backend reloads them as needed).
    fn recover(&self) -> Result<(), BackendError> {
        Err(BackendError::DeviceLost("this backend cannot recover a lost device".into()))
    }
}

/// Lines a backend keeps for the tune's report until [`Backend::take_notes`], each said once.
#[derive(Debug, Default)]
pub struct Notes(std::sync::Mutex<Vec<String>>);

impl Notes {
    /// Adds a line, unless it is already there.
    pub fn note(&self, line: String) {
        let mut notes = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if !notes.contains(&line) {
            notes.push(line);
        }
    }

    /// The lines noted since the last call.
    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

/// [`Backend::verify`] as every backend can do it: poisons write-only outputs and restores the
/// inputs, launches once, compares the outputs with the reference ([`Backend::check_outputs`]:
/// on the host unless the backend compares on the device), then restores the buffers. Returns
/// the launch's time.
pub fn verify_on_host<B: Backend + ?Sized>(
    b: &B,
    ws: &mut B::Workspace,
    kernel: &B::Kernel,
    launch: &Launch,
    req: &VerifyRequest<'_>,
) -> Result<Vec<f64>, BackendError> {
    b.reset(ws, true)?;
    let t = b.time(ws, kernel, launch, &TimeRequest { launches: 1, flush: L2Flush::Off, timeout: req.timeout })?;
    b.check_outputs(ws, req)?;
    b.reset(ws, false)?;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A compile that runs through `abandonable` has used no CPU before its thread has run (a
    /// loaded machine may not run it for a while), and what its thread used once that thread
    /// has ended: not "cannot tell", which the compile timeout would take for a wall-clock limit
    /// and give the compile up on (a race the CI met: a 0.25 s compile, done but its answer not
    /// yet taken, given up on as "still compiling after 0.5 s").
    #[test]
    fn a_tracked_compile_has_used_no_cpu_before_its_thread_runs() {
        let watch = CompileWatch::new();
        assert_eq!(watch.cpu_seconds(), None, "not started");
        watch.track();
        let tells = this_thread_cpu_seconds().is_some();
        assert_eq!(watch.cpu_seconds(), tells.then_some(0.0));
        // While its thread runs, that thread's time.
        let watch = std::sync::Arc::new(watch);
        let w = watch.clone();
        // It spins for 0.3 s of its own CPU time (a loaded machine gives it less than the wall
        // time it takes: the test failed once so, spinning 0.3 s of wall time for 0.04 s of CPU).
        let spinning = std::thread::spawn(move || {
            abandonable(Some(&w), || {
                let (t, used) = (std::time::Instant::now(), this_thread_cpu_seconds().unwrap_or(0.0));
                while this_thread_cpu_seconds().is_some_and(|c| c < used + 0.3) && t.elapsed() < std::time::Duration::from_secs(30) {
                    std::hint::spin_loop();
                }
                Ok(())
            })
        });
        if tells {
            let t = std::time::Instant::now();
            while watch.cpu_seconds().is_none_or(|s| s <= 0.0) && t.elapsed() < std::time::Duration::from_secs(30) {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            assert!(watch.cpu_seconds().is_some_and(|s| s > 0.0), "{:?}", watch.cpu_seconds());
        }
        assert!(spinning.join().unwrap().is_ok());
        // And once it ended (its thread gone before the tuner took the answer), what it used.
        if tells {
            assert!(watch.cpu_seconds().is_some_and(|s| s > 0.1), "{:?}", watch.cpu_seconds());
        }
    }
}
