//! A fake backend that is a real [`Backend`]: deterministic time tables with configurable
//! noise, and configs that fail on purpose (compile errors, launch failures, hangs, wrong or
//! missing output, a lost device). The tuner, pruning, racing, verification and the database
//! are proven against it on a CPU.
//!
//! Its "kernel" computes, for every written buffer `out`, `out[i] = (out[i] if read-write) +
//! Σ inputs[i]` over the read-only buffers (indices wrap), and [`FakeBackend::reference`]
//! computes the same on the host.
//!
//! Several fakes make a tune over several devices ([`FakeBackend::with_speed`] makes one
//! slower, as GPUs of one model differ by a few percent). With [`FakeBackend::isolated`] the
//! kernels run in a worker process of [`WORKER`], through the same protocol and fault policy as
//! CUDA and HIP, so that a worker killed mid-tune, a hang and a crash are real on a CPU; the
//! host program calls [`hook`] first thing in `main`.

use crate::backend::{Backend, CompileRequest, Compiled};
use crate::error::BackendError;
use crate::limits::{LimitViolation, Limits};
use crate::measure::timing::{TimeRequest, TimingMethod};
use crate::plan::prepare::Launch;
use crate::plan::prune::ResourceUsage;
use crate::space::config::Config;
use crate::spec::problem::{Access, ArgData, HostBuffer, ProblemData};
use crate::target::{Target, Vendor};
use rand::{Rng, SeedableRng};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How a fake config behaves.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Behavior {
    /// Compiles, runs, correct.
    Ok,
    /// Fails to compile with this log.
    CompileError(String),
    /// Fails at launch.
    LaunchError,
    /// Never finishes (reported as timed out after the request's timeout).
    Hang,
    /// Writes wrong values.
    WrongOutput,
    /// Writes NaN to the first element of each output (a 0/0), the rest right.
    NonFinite,
    /// Writes outputs that vary from launch to launch (a race between threads, a missing
    /// barrier): each launch adds the count of racy launches before it.
    Racy,
    /// Leaves the last quarter of each output unwritten.
    SkipWrites,
    /// Kills the device (a sticky error); the backend must recover.
    DeviceLost,
    /// Compiles but needs more registers than the device has (reported in usage).
    TooManyRegisters,
    /// Ends the process that runs it (a crash below the driver): in a worker the worker dies
    /// without a word; in the tuner's process it reports [`BackendError::WorkerDied`].
    Crash,
    /// Crashes the compiler on this config's code: a compiler process ends (SIGABRT); on a
    /// thread the fake reports it as an error (a real compiler's crash would end the tuner).
    CompilerCrash,
    /// Its compiler process is killed by the "out-of-memory killer" on this config's first `n`
    /// compiles: SIGKILL, with the count the tuner reads (see
    /// [`crate::worker::oom_kills`]) raised first, in a file of the fake's; on a thread it
    /// compiles.
    CompilerKilled(u32),
    /// Its compiler process is killed by SIGKILL on this config's first `n` compiles, the
    /// out-of-memory killer's count unchanged (a user, a job scheduler); on a thread it compiles.
    CompilerKilledByHand(u32),
    /// The worker process that runs it is killed by the "out-of-memory killer" on this config's
    /// first `n` launch requests (measurements, verifications, reference launches; `u32::MAX`:
    /// every one): SIGKILL, with the count the tuner reads raised first, in a file of the
    /// fake's (as when a cgroup's memory runs out while the worker runs it). Otherwise, and on
    /// a thread, it runs as [`Behavior::Ok`].
    WorkerKilled(u32),
    /// As [`Behavior::WorkerKilled`], on this config's launch requests `from` (1 the first) to
    /// `from + times - 1` to the worker of device `device` (any, when `None`; requests are
    /// counted per device): a config measured well that is killed later (the final round,
    /// `--recheck`, a calibration). [`FakeBackend::worker_requests`] counts its requests.
    WorkerKilledFrom {
        /// The first request killed (1: the config's first).
        from: u32,
        /// How many in a row (`u32::MAX`: every one from `from` on).
        times: u32,
        /// Only on this device's worker (its ordinal, [`FakeBackend::isolated`]).
        device: Option<usize>,
    },
    /// Runs as [`Behavior::Ok`], but each verification of it (a verification launch against the
    /// reference outputs) ends as though the out-of-memory killer ended its worker: in a worker
    /// as [`Behavior::WorkerKilled`] does; on a thread it reports [`BackendError::WorkerDied`]
    /// killed, the count moved.
    WorkerKilledVerifying,
    /// Right outputs, but it reads past a buffer's end where that never faults (wgpu): the
    /// fake's [`Backend::bounds`] says so, as wgpu's guard words do.
    ReadsPast,
    /// Right outputs, but its launches write past a buffer's end where that never faults
    /// (wgpu): the fake's [`Backend::bounds`] and [`Backend::wrote_past`] say so.
    WritesPast,
    /// Right outputs, and each launch prints a line to standard output (device `printf`): in
    /// a worker, to the worker's standard output; in the tuner's process it prints nothing.
    Prints,
    /// A device-side assertion fails: in a worker, three lines on standard error as CUDA prints
    /// them, then a lost device.
    Asserts,
}

/// What the fake's checks say of [`Behavior::ReadsPast`] and [`Behavior::WritesPast`].
const READ_PAST: &str = "out-of-bounds read past the end of `x` (fake)";
const WROTE_PAST: &str = "out-of-bounds write past the end of `y` (fake)";

/// The fake's compiler processes (see [`crate::compiler`]): its compiles, which spin, sleep or
/// crash as a config asks, run in them.
pub static COMPILER: crate::compiler::CompilerKind = crate::compiler::CompilerKind::new("FAKE", "KERNTUNE_FAKE_COMPILER", fake_compile);

/// The fake's compiler, wherever it runs: its arguments say what to do — `sleep=S` (seconds of
/// wall time), `spin=S` (seconds of the CPU: of this thread's, or where the system does not
/// tell, of wall time), `crash`, `oom=FILE` (raises the `oom_kill` count in FILE, in a compiler
/// process), `kill` (SIGKILL to its own process, in a compiler process), `mem=MIB` (takes that
/// much memory, every page touched, until the compile ends).
fn fake_compile(job: &crate::compiler::CompileJob) -> Result<crate::compiler::CompileOutput, BackendError> {
    // Taken in ten steps through a sleep (a compiler's memory grows as it works), else at once.
    let mut held: Vec<Vec<u8>> = Vec::new();
    let mut memory = 0;
    for a in &job.args {
        match a.split_once('=') {
            Some(("mem", mib)) => memory = mib.parse::<usize>().unwrap_or(0) << 20,
            Some(("sleep", s)) if memory > 0 => {
                for _ in 0..10 {
                    held.push(vec![1u8; memory / 10]);
                    std::thread::sleep(Duration::from_secs_f64(s.parse::<f64>().unwrap_or(0.0) / 10.0));
                }
            }
            Some(("sleep", s)) => std::thread::sleep(Duration::from_secs_f64(s.parse().unwrap_or(0.0))),
            Some(("spin", s)) => {
                if memory > 0 {
                    held.push(vec![1u8; memory]);
                }
                let delay = s.parse().unwrap_or(0.0);
                let (t0, start) = (std::time::Instant::now(), crate::backend::this_thread_cpu_seconds());
                let mut x = 0u64;
                while match (start, crate::backend::this_thread_cpu_seconds()) {
                    (Some(a), Some(b)) => b - a < delay,
                    _ => t0.elapsed().as_secs_f64() < delay,
                } {
                    for i in 0..100_000u64 {
                        x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
                    }
                }
            }
            None if a == "crash" && std::env::var_os(COMPILER.env).is_some() => {
                // As a real compiler's failed assertion says where before it aborts.
                eprintln!("fake-compiler: internal error: assertion `nodes.is_sorted()` failed on this config's code");
                std::process::abort()
            }
            Some(("oom", file)) if std::env::var_os(COMPILER.env).is_some() => raise_oom_count(std::path::Path::new(file)),
            #[cfg(unix)]
            None if a == "kill" && std::env::var_os(COMPILER.env).is_some() => {
                let _ = signal_hook::low_level::raise(signal_hook::consts::SIGKILL);
            }
            None if a == "crash" => return Err(BackendError::other("the fake compiler crashed (on a thread; a real compiler's crash would end the tuner)")),
            _ => {}
        }
    }
    drop(std::hint::black_box(held));
    Ok((b"fake".to_vec(), None))
}

/// Raises the `oom_kill` count in `file` (the fake's "out-of-memory killer" acting). The new
/// count is written beside it and renamed over it: written in place, the file is empty for a
/// moment, and a tuner reading the count then (a compile starting, a death being told) read no
/// count, so a kill read as "not known to be the out-of-memory killer's" (one run in many of
/// `a_compiler_killed_from_outside_compiles_again_with_fewer_beside_it`, on a loaded machine).
fn raise_oom_count(file: &std::path::Path) {
    let n = std::fs::read_to_string(file).ok().and_then(|t| crate::worker::parse_oom_kills(&t)).unwrap_or(0);
    let next = file.with_extension(format!("next-{}", std::process::id()));
    if std::fs::write(&next, format!("oom_kill {}\n", n + 1)).is_ok() {
        let _ = std::fs::rename(&next, file);
    }
}

/// How the fake's out-of-memory count files are named, before the owning process's id.
const OOM_FILE: &str = "kerntune-fake-oom-";

/// Removes the count files (and any half-renamed `.next-…` beside them) of processes that have
/// ended: nothing removes a process's own at its exit, and test runs left hundreds in the
/// temporary directory. Linux only (a process is alive while `/proc/PID` is there).
fn remove_ended_oom_files() {
    if !std::path::Path::new("/proc/self").exists() {
        return;
    }
    let Ok(dir) = std::fs::read_dir(std::env::temp_dir()) else { return };
    for entry in dir.flatten() {
        let name = entry.file_name();
        let owner = name.to_str().and_then(|n| n.strip_prefix(OOM_FILE)).and_then(|rest| rest.split('.').next()?.parse::<u32>().ok());
        if owner.is_some_and(|pid| !std::path::Path::new(&format!("/proc/{pid}")).exists()) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The file the fake's "out-of-memory killer" counts in (see [`Behavior::CompilerKilled`]): the
/// one the tuner reads, made and set for this process on first use.
fn oom_file() -> std::path::PathBuf {
    static MADE: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    MADE.get_or_init(|| {
        let file = crate::worker::oom_kills_file().unwrap_or_else(|| {
            remove_ended_oom_files();
            let file = std::env::temp_dir().join(format!("{OOM_FILE}{}", std::process::id()));
            let _ = std::fs::write(&file, "oom_kill 0\n");
            crate::worker::count_oom_kills_in(Some(file.clone()));
            file
        });
        file
    })
    .clone()
}

/// The fake's kind of worker process (see [`FakeBackend::isolated`]).
pub static WORKER: crate::worker::WorkerKind = crate::worker::WorkerKind::new("FAKE", "KERNTUNE_FAKE_WORKER", "KERNTUNE_FAKE_ISOLATION");

/// Call first thing in `main` of a program that tunes on isolated fakes: in a fake worker
/// process this serves the parent and exits.
pub fn hook() {
    COMPILER.hook();
    WORKER.hook(crate::worker::BackendExecutor::<FakeBackend>::default);
}

type TimeFn = Arc<dyn Fn(&Config) -> f64 + Send + Sync>;
type BehaviorFn = Arc<dyn Fn(&Config) -> Behavior + Send + Sync>;

/// The fake backend. Build with [`FakeBackend::new`] and the `with_*` methods.
pub struct FakeBackend {
    target: Target,
    limits: Limits,
    time: TimeFn,
    behavior: BehaviorFn,
    noise: f64,
    rng: Mutex<rand_chacha::ChaCha8Rng>,
    compile_delay: Arc<dyn Fn(&Config) -> Duration + Send + Sync>,
    /// Memory each compile takes and holds until it ends, in MiB (see
    /// [`FakeBackend::with_compile_memory`]).
    compile_memory: Arc<dyn Fn(&Config) -> usize + Send + Sync>,
    /// Compiles use the CPU for their time (`spinning_compiles`) instead of sleeping through it.
    spin: bool,
    lost: AtomicBool,
    /// Number of `compile` calls.
    pub compiles: AtomicUsize,
    /// Per config key, each `compile` call that was not a compile-cache hit: how many compiles
    /// ran then, counting itself.
    pub compiled: Mutex<HashMap<String, Vec<usize>>>,
    /// Timed launches per config key.
    pub launches: Mutex<HashMap<String, u32>>,
    /// Requests to a worker per config key of [`Behavior::WorkerKilled`] and
    /// [`Behavior::WorkerKilledFrom`].
    worker_runs: Mutex<HashMap<String, u32>>,
    /// Timed launches of every config, shared with whoever asked ([`FakeBackend::launch_counter`]).
    timed: Arc<AtomicUsize>,
    /// Number of `recover` calls.
    pub recoveries: AtomicUsize,
    /// Compiles running now, and the most that ever ran at once.
    pub compiling: AtomicUsize,
    /// The most compiles that ran at once.
    pub max_compiling: AtomicUsize,
    /// Times this device reports are the config's time times this.
    speed: f64,
    /// Each timed launch takes this long in wall time (in whichever process runs it).
    launch_delay: Duration,
    /// Which configs' compiles are compile-cache hits (they take no compile delay), when the
    /// fake has a compile cache: [`FakeBackend::with_compile_cache`].
    cached: Option<Held>,
    /// Says it compiles quickly ([`Backend::compiles_quickly`], as wgpu does).
    quick: bool,
    /// Wall time making a workspace takes (a worker process starting, say).
    workspace_delay: Duration,
    /// Device memory free for a problem's buffers (`None`: any problem fits).
    free_memory: Option<u64>,
    /// Wall time each verification launch takes besides its timed launch.
    verify_delay: Duration,
    /// Reported on top of each kernel's first launch.
    first_launch: Arc<dyn Fn(&Config) -> f64 + Send + Sync>,
    /// Kernels launched at least once (for `first_launch`).
    launched: Mutex<std::collections::HashSet<String>>,
    /// Timed launches before the first verification (`usize::MAX` until one happens).
    first_verify: Arc<AtomicUsize>,
    /// Set in isolated mode: kernels run in worker processes.
    worker: Option<crate::worker::WorkerSlot>,
    /// Set in a worker process: hangs hang for good and crashes end the process.
    in_worker: bool,
}

/// Which configs a fake compile cache holds.
type Held = Arc<dyn Fn(&Config) -> bool + Send + Sync>;

/// A fake kernel: the config it was compiled for.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct FakeKernel {
    key: String,
    behavior: Behavior,
    base_time: f64,
    delay_ms: f64,
    /// Reported on top of its first launch.
    first_launch: f64,
    /// Unique in the process, for worker processes.
    #[serde(skip)]
    id: u64,
    /// Whether workers may have loaded it (they are told when it is dropped).
    #[serde(skip)]
    shipped: bool,
    /// Set for a request its worker is killed on ([`Behavior::WorkerKilled`]): the file of
    /// the "out-of-memory killer's" count, raised first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    oom_kill: Option<std::path::PathBuf>,
}

/// Fake kernels' ids, unique in the process.
static NEXT_KERNEL: AtomicU64 = AtomicU64::new(1);

impl FakeKernel {
    fn binary(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a fake kernel serializes")
    }
}

impl Drop for FakeKernel {
    fn drop(&mut self) {
        if self.shipped {
            crate::worker::kernel_dropped(self.id);
        }
    }
}

/// The fake's device memory: the problem's buffers on the host, or, in isolated mode, in the
/// worker (the parent keeps the problem to start a fresh worker after a fault).
#[derive(Debug)]
pub struct FakeWorkspace {
    initial: Arc<ProblemData>,
    current: Vec<HostBuffer>,
    /// Whether a launch since the last look wrote past a buffer ([`Behavior::WritesPast`]).
    wrote_past: bool,
}

impl FakeBackend {
    /// A fake device with `limits`, timing each config by `time` (seconds).
    pub fn new(limits: Limits, time: impl Fn(&Config) -> f64 + Send + Sync + 'static) -> FakeBackend {
        FakeBackend {
            target: Target::new("fake", Vendor::Portable, "fake", "fake device"),
            limits,
            time: Arc::new(time),
            behavior: Arc::new(|_| Behavior::Ok),
            noise: 0.0,
            rng: Mutex::new(rand_chacha::ChaCha8Rng::seed_from_u64(0)),
            compile_delay: Arc::new(|_| Duration::ZERO),
            compile_memory: Arc::new(|_| 0),
            spin: false,
            lost: AtomicBool::new(false),
            compiles: AtomicUsize::new(0),
            compiled: Mutex::new(HashMap::new()),
            launches: Mutex::new(HashMap::new()),
            worker_runs: Mutex::new(HashMap::new()),
            timed: Arc::new(AtomicUsize::new(0)),
            recoveries: AtomicUsize::new(0),
            compiling: AtomicUsize::new(0),
            max_compiling: AtomicUsize::new(0),
            speed: 1.0,
            launch_delay: Duration::ZERO,
            cached: None,
            quick: false,
            workspace_delay: Duration::ZERO,
            free_memory: None,
            verify_delay: Duration::ZERO,
            first_launch: Arc::new(|_| 0.0),
            launched: Mutex::new(std::collections::HashSet::new()),
            first_verify: Arc::new(AtomicUsize::new(usize::MAX)),
            worker: None,
            in_worker: false,
        }
    }

    /// This device reports every time multiplied by `factor` (a slower or faster GPU of the
    /// same model).
    pub fn with_speed(mut self, factor: f64) -> Self {
        self.speed = factor;
        self
    }

    /// Each kernel's first launch (its verification launch, when there is a reference) reports
    /// `f(config)` seconds more than the kernel takes: a driver that compiles a kernel when it
    /// is first launched (Mesa's lavapipe from 23.x with a cold shader cache).
    pub fn with_first_launch(mut self, f: impl Fn(&Config) -> f64 + Send + Sync + 'static) -> Self {
        self.first_launch = Arc::new(f);
        self
    }

    /// Every timed launch takes `d` of wall time (where it runs: here or in the worker).
    pub fn with_launch_delay(mut self, d: Duration) -> Self {
        self.launch_delay = d;
        self
    }

    /// Every compile is reported as read from a compile cache (as a real backend's second
    /// compile of the same code is).
    pub fn with_cached_compiles(self) -> Self {
        self.with_compile_cache(|_| true)
    }

    /// A compile cache that holds the configs `held` says it does: their compiles are served
    /// from it (no compile delay, reported as cache hits) and [`Backend::in_compile_cache`]
    /// says so before they compile; the others compile as usual. Without one, the fake cannot
    /// tell (`None`).
    pub fn with_compile_cache(mut self, held: impl Fn(&Config) -> bool + Send + Sync + 'static) -> Self {
        self.cached = Some(Arc::new(held));
        self
    }

    /// Says its compiles take a fraction of a measurement ([`Backend::compiles_quickly`]).
    pub fn with_quick_compiles(mut self) -> Self {
        self.quick = true;
        self
    }

    fn cache_hit(&self, config: &Config) -> bool {
        self.cached.as_ref().is_some_and(|held| held(config))
    }

    /// Making a workspace takes `d` of wall time.
    pub fn with_workspace_delay(mut self, d: Duration) -> Self {
        self.workspace_delay = d;
        self
    }

    /// The device has `bytes` of memory free: a problem whose buffers need more cannot be
    /// placed there ([`BackendError::ProblemTooLarge`], as a GPU another job shares).
    pub fn with_free_memory(mut self, bytes: u64) -> Self {
        self.free_memory = Some(bytes);
        self
    }

    /// Every verification takes `d` of wall time besides its launch (reading and comparing a
    /// large output, say), on the device's thread.
    pub fn with_verify_delay(mut self, d: Duration) -> Self {
        self.verify_delay = d;
        self
    }

    /// How many timed launches ran before the first verification began (`usize::MAX` while
    /// none has), readable after the backend went into a tuner.
    pub fn first_verification(&self) -> Arc<AtomicUsize> {
        self.first_verify.clone()
    }

    /// Kernels run in worker processes of [`WORKER`] on "device" `ordinal`: this program
    /// started again (it must call [`hook`] first in `main`), or `command` when given.
    pub fn isolated(mut self, ordinal: usize, command: Option<Box<dyn Fn() -> std::process::Command + Send + Sync>>) -> Self {
        let slot = crate::worker::WorkerSlot::new(&WORKER, ordinal);
        // The tuner reads the fake's count from the first request on (see
        // `Behavior::WorkerKilled`): the machine's own kills do not move it.
        oom_file();
        self.worker = Some(match command {
            Some(c) => slot.with_command(c),
            None => slot,
        });
        self
    }

    /// The process id of this device's worker, while one runs.
    pub fn worker_pid(&self) -> Option<u32> {
        self.worker.as_ref().and_then(|w| w.pid())
    }

    /// How many worker processes this device has started (0 unless [`FakeBackend::isolated`]).
    pub fn worker_starts(&self) -> usize {
        self.worker.as_ref().map_or(0, |w| w.starts())
    }

    /// Launch requests to a worker so far of the config `key`, when its behaviour is
    /// [`Behavior::WorkerKilled`] or [`Behavior::WorkerKilledFrom`] (others are not counted).
    pub fn worker_requests(&self, key: &str) -> u32 {
        self.worker_runs.lock().unwrap_or_else(|p| p.into_inner()).get(key).copied().unwrap_or(0)
    }

    /// Counts a launch request of `key` to a worker; its number, 1 the first.
    fn worker_request(&self, key: &str) -> u32 {
        let mut runs = self.worker_runs.lock().unwrap_or_else(|p| p.into_inner());
        let run = runs.entry(key.to_string()).or_default();
        *run += 1;
        *run
    }

    /// Sets per-config behaviour.
    pub fn with_behavior(mut self, f: impl Fn(&Config) -> Behavior + Send + Sync + 'static) -> Self {
        self.behavior = Arc::new(f);
        self
    }

    /// Relative noise (standard deviation as a fraction of the time) from a seed.
    pub fn with_noise(mut self, noise: f64, seed: u64) -> Self {
        self.noise = noise;
        self.rng = Mutex::new(rand_chacha::ChaCha8Rng::seed_from_u64(seed));
        self
    }

    /// Simulated compile time, the same for every config.
    pub fn with_compile_delay(self, d: Duration) -> Self {
        self.with_compile_times(move |_| d)
    }

    /// Simulated compile time per config. The compile sleeps through
    /// [`abandonable`](crate::backend::abandonable), as a real compiler call runs, so that a
    /// tune can stop waiting for it.
    pub fn with_compile_times(mut self, f: impl Fn(&Config) -> Duration + Send + Sync + 'static) -> Self {
        self.compile_delay = Arc::new(f);
        self
    }

    /// Memory each compile takes (in MiB, every page touched) as it starts and holds until it
    /// ends: in a compiler process, that process's; on a thread, the tuner's.
    pub fn with_compile_memory(mut self, f: impl Fn(&Config) -> usize + Send + Sync + 'static) -> Self {
        self.compile_memory = Arc::new(f);
        self
    }

    /// Each compile's time ([`FakeBackend::with_compile_times`]) is CPU time its thread spends
    /// (as a compiler's is), not a sleep: compiles running together share the cores, and a
    /// compile takes longer in wall time the more run beside it.
    pub fn spinning_compiles(mut self) -> Self {
        self.spin = true;
        self
    }

    /// Overrides the target (e.g. to test fingerprint namespacing).
    pub fn with_target(mut self, t: Target) -> Self {
        self.target = t;
        self
    }

    /// A counter of every timed launch, readable while the backend is in a tuner (by a CPU
    /// reference, say).
    pub fn launch_counter(&self) -> Arc<AtomicUsize> {
        self.timed.clone()
    }

    /// Total timed launches of one config.
    pub fn launches_of(&self, key: &str) -> u32 {
        self.launches.lock().unwrap().get(key).copied().unwrap_or(0)
    }

    /// The host reference of the fake kernel's computation.
    pub fn reference(problem: &ProblemData) -> Vec<HostBuffer> {
        let mut bufs: Vec<HostBuffer> = problem.buffers().cloned().collect();
        compute(&mut bufs, None);
        bufs
    }

    fn check_alive(&self) -> Result<(), BackendError> {
        if self.lost.load(Ordering::SeqCst) {
            Err(BackendError::DeviceLost("the fake device was lost earlier and not recovered".into()))
        } else {
            Ok(())
        }
    }
}

/// Racy launches so far ([`Behavior::Racy`]).
static RACES: AtomicU64 = AtomicU64::new(0);

fn compute(bufs: &mut [HostBuffer], behavior: Option<&Behavior>) {
    let race = if behavior == Some(&Behavior::Racy) { RACES.fetch_add(1, Ordering::SeqCst) as f64 + 1.0 } else { 0.0 };
    let inputs: Vec<HostBuffer> = bufs.iter().filter(|b| b.access == Access::Read).cloned().collect();
    for b in bufs.iter_mut().filter(|b| b.access != Access::Read) {
        let n = b.len();
        let limit = if behavior == Some(&Behavior::SkipWrites) { n - n / 4 } else { n };
        for i in 0..limit {
            let mut v = if b.access == Access::ReadWrite { b.get_f64(i) } else { 0.0 };
            for inp in &inputs {
                if !inp.is_empty() {
                    v += inp.get_f64(i % inp.len());
                }
            }
            if behavior == Some(&Behavior::WrongOutput) {
                v += 1.0;
            }
            v += race;
            if behavior == Some(&Behavior::NonFinite) && i == 0 {
                v = f64::NAN;
            }
            b.set_f64(i, v);
        }
    }
}

impl Backend for FakeBackend {
    type Kernel = FakeKernel;
    type Workspace = FakeWorkspace;

    fn target(&self) -> &Target {
        &self.target
    }
    fn limits(&self) -> &Limits {
        &self.limits
    }
    fn toolchain(&self) -> String {
        "fake 1".into()
    }
    fn language(&self) -> &'static str {
        "fake"
    }
    fn timing_method(&self) -> TimingMethod {
        TimingMethod::Simulated
    }

    fn compile(&self, req: &CompileRequest<'_>) -> Result<Compiled<FakeKernel>, BackendError> {
        self.compiles.fetch_add(1, Ordering::SeqCst);
        let now = self.compiling.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_compiling.fetch_max(now, Ordering::SeqCst);
        let hit = self.cache_hit(req.config);
        let delay = if hit { Duration::ZERO } else { (self.compile_delay)(req.config) };
        let behavior = (self.behavior)(req.config);
        let crash = behavior == Behavior::CompilerCrash;
        let attempt = if hit {
            0
        } else {
            let mut compiled = self.compiled.lock().unwrap_or_else(|p| p.into_inner());
            let calls = compiled.entry(req.config.key()).or_default();
            calls.push(now);
            calls.len()
        };
        let kill = matches!(behavior, Behavior::CompilerKilled(n) | Behavior::CompilerKilledByHand(n) if attempt <= n as usize);
        let oom = kill && matches!(behavior, Behavior::CompilerKilled(_));
        if kill {
            // The tuner reads the fake's count, whichever kill: the machine's own kills do not
            // move it.
            oom_file();
        }
        let memory = if hit { 0 } else { (self.compile_memory)(req.config) };
        let slept = if delay.is_zero() && !crash && !kill && memory == 0 {
            Ok(())
        } else {
            let mut args: Vec<String> = (memory > 0).then(|| format!("mem={memory}")).into_iter().collect();
            args.push(format!("{}={}", if self.spin { "spin" } else { "sleep" }, delay.as_secs_f64()));
            args.extend(crash.then(|| "crash".to_string()));
            args.extend(oom.then(|| format!("oom={}", oom_file().display())));
            args.extend(kill.then(|| "kill".to_string()));
            let job = crate::compiler::CompileJob { name: "fake".into(), expr: None, code: String::new(), headers: Vec::new(), args };
            COMPILER.compile(req.abandon, move |compile| compile(&job).map(|_| ()))
        };
        self.compiling.fetch_sub(1, Ordering::SeqCst);
        slept?;
        if let Behavior::CompileError(log) = &behavior {
            let options = req.defines.iter().map(|(k, v)| format!("-D{k}={v}")).collect();
            return Err(BackendError::CompileFailed { log: log.clone(), options });
        }
        let usage = ResourceUsage {
            registers: Some(if behavior == Behavior::TooManyRegisters { 1000 } else { 32 }),
            static_shared_bytes: Some(0),
            local_bytes: Some(0),
            max_threads_per_block: Some(self.limits.max_threads_per_block),
            active_blocks_per_sm: None,
        };
        let kernel = FakeKernel {
            key: req.config.key(),
            behavior,
            base_time: (self.time)(req.config),
            delay_ms: self.launch_delay.as_secs_f64() * 1e3,
            first_launch: (self.first_launch)(req.config),
            id: NEXT_KERNEL.fetch_add(1, Ordering::Relaxed),
            shipped: self.worker.is_some(),
            oom_kill: None,
        };
        Ok(Compiled { kernel, usage, cached: hit })
    }

    fn in_compile_cache(&self, req: &CompileRequest<'_>) -> Option<bool> {
        self.cached.as_ref().map(|held| held(req.config))
    }

    fn compiles_quickly(&self) -> bool {
        self.quick
    }

    fn prestart_compilers(&self, threads: usize, wanted: Option<bool>) {
        COMPILER.prestart(threads, wanted);
    }

    fn shares_kernels(&self) -> bool {
        // A fake kernel is data: any fake can run it, here or in its worker.
        true
    }

    fn workspace(&self, problem: &Arc<ProblemData>) -> Result<FakeWorkspace, BackendError> {
        self.check_alive()?;
        std::thread::sleep(self.workspace_delay);
        if let Some(free) = self.free_memory {
            let sizes = problem.buffer_sizes();
            if sizes.iter().map(|b| b.1 as u64).sum::<u64>() > free {
                let total = self.limits.global_mem_bytes.unwrap_or(free) as usize;
                return Err(BackendError::ProblemTooLarge(crate::measure::memory::does_not_fit(&sizes, free as usize, total)));
            }
        }
        if let Some(slot) = &self.worker {
            // Start the worker now, so that a worker that cannot start fails before measuring.
            slot.with(problem, |_| Ok(()))?;
        }
        Ok(FakeWorkspace { initial: problem.clone(), current: problem.buffers().cloned().collect(), wrote_past: false })
    }

    fn reset(&self, ws: &mut FakeWorkspace, poison: bool) -> Result<(), BackendError> {
        if let Some(slot) = &self.worker {
            return slot.with(&ws.initial, |w| w.reset(poison));
        }
        self.check_alive()?;
        ws.current = ws.initial.buffers().cloned().collect();
        if poison {
            for b in ws.current.iter_mut().filter(|b| b.access == Access::Write) {
                b.data = b.poisoned();
            }
        }
        Ok(())
    }

    fn time(&self, ws: &mut FakeWorkspace, k: &FakeKernel, launch: &Launch, req: &TimeRequest) -> Result<Vec<f64>, BackendError> {
        let base = match &self.worker {
            Some(slot) => {
                let doomed = self.doomed(k, false);
                let sent = doomed.as_ref().unwrap_or(k);
                let binary = sent.binary();
                slot.with(&ws.initial, |w| w.time(crate::worker::KernelImage { id: sent.id, name: "fake", binary: &binary }, launch, req))?
            }
            None => self.run_here(ws, k, launch, req)?,
        };
        *self.launches.lock().unwrap().entry(k.key.clone()).or_default() += req.launches;
        self.timed.fetch_add(req.launches as usize, Ordering::SeqCst);
        Ok(self.first_launch_of(k, self.observed(base)))
    }

    fn verify(
        &self,
        ws: &mut FakeWorkspace,
        k: &FakeKernel,
        launch: &Launch,
        req: &crate::measure::verify::VerifyRequest<'_>,
    ) -> Result<Vec<f64>, BackendError> {
        let _ = self.first_verify.compare_exchange(usize::MAX, self.timed.load(Ordering::SeqCst), Ordering::SeqCst, Ordering::SeqCst);
        std::thread::sleep(self.verify_delay);
        if k.behavior == Behavior::WorkerKilledVerifying && self.worker.is_none() {
            return Err(BackendError::WorkerDied {
                message: "the fake's worker was killed while verifying (on a thread: as the out-of-memory killer would)".into(),
                killed: true,
                oom: Some(true),
            });
        }
        let Some(slot) = &self.worker else {
            self.reset(ws, true)?;
            let t = self.time(ws, k, launch, &TimeRequest { launches: 1, flush: crate::spec::settings::L2Flush::Off, timeout: req.timeout })?;
            // As wgpu's guard words find them: a write past a buffer after the launch, a read
            // past one by outputs that change with what lies there.
            if let Some(wrote) = self.wrote_past(ws)? {
                return Err(BackendError::LaunchFailed(wrote));
            }
            if k.behavior == Behavior::ReadsPast {
                return Err(BackendError::LaunchFailed(READ_PAST.into()));
            }
            req.check(&self.read_outputs(ws, &req.wanted())?)?;
            self.reset(ws, false)?;
            return Ok(t);
        };
        let doomed = self.doomed(k, true);
        let sent = doomed.as_ref().unwrap_or(k);
        let binary = sent.binary();
        let t = slot.with(&ws.initial, |w| w.verify(crate::worker::KernelImage { id: sent.id, name: "fake", binary: &binary }, launch, req))?;
        Ok(self.first_launch_of(k, self.observed(t)))
    }

    fn printed(&self, _ws: &mut FakeWorkspace) -> Option<crate::backend::Printed> {
        // In a worker, kernels print to its standard output, which it reads apart; in this
        // process, to the tuner's own.
        self.worker.as_ref()?.take_printed()
    }

    fn read_outputs(&self, ws: &mut FakeWorkspace, wanted: &[bool]) -> Result<Vec<HostBuffer>, BackendError> {
        if let Some(slot) = &self.worker {
            return slot.with(&ws.initial, |w| w.read_outputs(&ws.initial, wanted));
        }
        self.check_alive()?;
        Ok(ws.current.iter().enumerate().map(|(i, b)| if wanted.get(i).copied().unwrap_or(false) { b.clone() } else { b.described() }).collect())
    }

    fn bounds(&self, ws: &mut FakeWorkspace, k: &FakeKernel, launch: &Launch, timeout: Duration) -> Result<Option<crate::backend::Memcheck>, BackendError> {
        if let Some(slot) = &self.worker {
            let binary = k.binary();
            return slot.with(&ws.initial, |w| w.bounds(crate::worker::KernelImage { id: k.id, name: "fake", binary: &binary }, launch, timeout));
        }
        let tool = "the fake's guard".to_string();
        Ok(Some(match k.behavior {
            Behavior::ReadsPast => crate::backend::Memcheck::Reported { tool, report: READ_PAST.into() },
            Behavior::WritesPast => crate::backend::Memcheck::Reported { tool, report: WROTE_PAST.into() },
            _ => crate::backend::Memcheck::Clean { tool },
        }))
    }

    fn wrote_past(&self, ws: &mut FakeWorkspace) -> Result<Option<String>, BackendError> {
        if let Some(slot) = &self.worker {
            return slot.with(&ws.initial, |w| w.wrote_past());
        }
        Ok(std::mem::take(&mut ws.wrote_past).then(|| WROTE_PAST.into()))
    }

    fn recover(&self) -> Result<(), BackendError> {
        self.recoveries.fetch_add(1, Ordering::SeqCst);
        self.lost.store(false, Ordering::SeqCst);
        if let Some(slot) = &self.worker {
            slot.recover();
        }
        Ok(())
    }
}

impl FakeBackend {
    /// Launches `k` in this process (the tuner's, or a worker's), returning each launch's
    /// recorded time.
    fn run_here(&self, ws: &mut FakeWorkspace, k: &FakeKernel, launch: &Launch, req: &TimeRequest) -> Result<Vec<f64>, BackendError> {
        self.check_alive()?;
        if let Err(v) = self.limits.check_block(launch.block) {
            return Err(BackendError::OutOfResources(v));
        }
        match &k.behavior {
            Behavior::LaunchError => return Err(BackendError::LaunchFailed("fake launch failure (invalid argument)".into())),
            Behavior::Hang if self.in_worker => loop {
                // A kernel that never ends: only killing the process stops it.
                std::thread::sleep(Duration::from_secs(1));
            },
            Behavior::Hang => {
                std::thread::sleep(req.timeout);
                return Err(BackendError::TimedOut(req.timeout));
            }
            Behavior::Crash if self.in_worker => std::process::abort(),
            #[cfg(unix)]
            Behavior::WorkerKilled(_) | Behavior::WorkerKilledFrom { .. } | Behavior::WorkerKilledVerifying if self.in_worker => {
                // Sent to be killed on this request (see `FakeBackend::doomed`); else it runs.
                if let Some(file) = &k.oom_kill {
                    raise_oom_count(file);
                    let _ = signal_hook::low_level::raise(signal_hook::consts::SIGKILL);
                }
            }
            Behavior::Crash => return Err(BackendError::worker_died("the fake kernel crashed its process")),
            Behavior::DeviceLost => {
                self.lost.store(true, Ordering::SeqCst);
                return Err(BackendError::DeviceLost("fake illegal address; context is unusable".into()));
            }
            Behavior::Asserts => {
                if self.in_worker {
                    for t in 0..3 {
                        eprintln!("fake.cu:26: fake: block: [0,0,0], thread: [{t},0,0] Assertion `bx <= 512` failed.");
                    }
                }
                self.lost.store(true, Ordering::SeqCst);
                return Err(BackendError::DeviceLost("CUDA_ERROR_ASSERT: device-side assert triggered (fake)".into()));
            }
            Behavior::TooManyRegisters => {
                return Err(BackendError::OutOfResources(LimitViolation {
                    limit: "registers_per_block".into(),
                    requested: 1000 * launch.threads() as u64,
                    allowed: 65536,
                }))
            }
            _ => {}
        }
        let mut times = Vec::with_capacity(req.launches as usize);
        for _ in 0..req.launches {
            if k.delay_ms > 0.0 {
                std::thread::sleep(Duration::from_secs_f64(k.delay_ms / 1e3));
            }
            compute(&mut ws.current, Some(&k.behavior));
            ws.wrote_past |= k.behavior == Behavior::WritesPast;
            if k.behavior == Behavior::Prints && self.in_worker {
                println!("fake kernel: n = {}, block {}", ws.current.len(), launch.block[0]);
            }
            times.push(k.base_time);
        }
        Ok(times)
    }

    /// For a request to a worker (a verification with `verifying`): a copy of `k` that gets the
    /// worker killed, on the first `n` requests of a config of [`Behavior::WorkerKilled`]`(n)`,
    /// on the requests a [`Behavior::WorkerKilledFrom`] names, and on every verification of one of [`Behavior::WorkerKilledVerifying`] (a fresh id: no
    /// worker has it).
    fn doomed(&self, k: &FakeKernel, verifying: bool) -> Option<FakeKernel> {
        let doomed = match k.behavior {
            Behavior::WorkerKilled(n) => self.worker_request(&k.key) <= n,
            Behavior::WorkerKilledFrom { from, times, device } => {
                let run = self.worker_request(&k.key);
                let here = device.is_none() || device == self.worker.as_ref().map(|w| w.ordinal());
                here && run >= from && run - from < times
            }
            Behavior::WorkerKilledVerifying => verifying,
            _ => false,
        };
        doomed.then(|| FakeKernel {
            key: k.key.clone(),
            behavior: k.behavior.clone(),
            base_time: k.base_time,
            delay_ms: k.delay_ms,
            first_launch: k.first_launch,
            id: NEXT_KERNEL.fetch_add(1, Ordering::Relaxed),
            shipped: false,
            oom_kill: Some(oom_file()),
        })
    }

    /// `times` with [`FakeBackend::with_first_launch`]'s cost added to the first, when they are
    /// `k`'s first launches.
    fn first_launch_of(&self, k: &FakeKernel, mut times: Vec<f64>) -> Vec<f64> {
        if k.first_launch > 0.0 && !times.is_empty() && self.launched.lock().unwrap().insert(k.key.clone()) {
            times[0] += k.first_launch;
        }
        times
    }

    /// Recorded times as this device reports them: its speed, and noise.
    fn observed(&self, base: Vec<f64>) -> Vec<f64> {
        let mut rng = self.rng.lock().unwrap();
        base.into_iter()
            .map(|t| {
                // Box-Muller normal noise, clamped so times stay positive.
                let (u1, u2): (f64, f64) = (rng.random::<f64>().max(1e-12), rng.random::<f64>());
                let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
                t * self.speed * (1.0 + self.noise * z).max(0.05)
            })
            .collect()
    }
}

impl crate::worker::WorkerBackend for FakeBackend {
    fn open_for_worker(_ordinal: usize) -> Result<Self, BackendError> {
        let limits = Limits::preset("h100").ok_or_else(|| BackendError::other("the h100 preset is missing"))?.1;
        Ok(FakeBackend { in_worker: true, ..FakeBackend::new(limits, |_| 1e-3) })
    }
    fn load_binary(&self, _name: &str, binary: Vec<u8>) -> Result<FakeKernel, BackendError> {
        serde_json::from_slice(&binary).map_err(|e| BackendError::other(format!("not a fake kernel: {e}")))
    }
}

/// Problem data for fake-backend tests: `x` (read), `y` (write), `z` (read-write), `n` elements.
pub fn sample_problem(n: usize) -> ProblemData {
    use crate::spec::problem::{DType, Init};
    ProblemData {
        args: vec![
            ArgData::Buffer(HostBuffer::new("x", DType::F32, n, &Init::Random { seed: 1 }, Access::Read)),
            ArgData::Buffer(HostBuffer::new("y", DType::F32, n, &Init::Zeros, Access::Write)),
            ArgData::Buffer(HostBuffer::new("z", DType::F32, n, &Init::Sequence, Access::ReadWrite)),
        ],
    }
}

/// A job for fake-backend tests and examples: kernel `k` reading `x` (`0, 1, 2, …`) and writing
/// `y` (zeros), both of `n` elements, over parameters `bx` and `vec` with the given values, one
/// block of `bx` threads per `bx·vec` elements, default bx=256, vec=1.
pub fn xy_job(bx: &[i64], vec: &[i64], n: i64) -> crate::spec::TuneJob {
    use crate::spec::value::Value;
    use crate::spec::{ArgKind, ArgSpec, DType, Init, KernelSource, Memory, Param, TuneJob};
    let mut j = TuneJob::new(KernelSource::new("k", "fake", "// fake"), vec![Param::new("bx", bx.iter().copied()), Param::new("vec", vec.iter().copied())]);
    j.sizes = vec![("n".into(), Value::Int(n))];
    let buffer = |name: &str, init: Init, access: Access| ArgSpec {
        name: name.into(),
        kind: ArgKind::Buffer { dtype: DType::F32, len: "n".into(), init, access, memory: Memory::Global },
    };
    j.args = vec![buffer("x", Init::Sequence, Access::Read), buffer("y", Init::Zeros, Access::Write)];
    j.grid = ["div_ceil(n, bx*vec)".into(), "1".into(), "1".into()];
    j.block = ["bx".into(), "1".into(), "1".into()];
    j.default = Some(vec![("bx".into(), Value::Int(256)), ("vec".into(), Value::Int(1))]);
    j
}

/// The small tunable kernel the runtime-handle examples and tests use: `k` with `bx` in 32, 64,
/// 128, 256 and `vec` in 1, 2, 4 (default bx=256, vec=1), reading `x` and writing `y`, both of
/// `n` elements (n = 1024 in the template), on a fake H100 where bx=64, vec=4 is fastest.
///
/// ```
/// let (tuner, job) = kerntune_core::fake::example();
/// let report = tuner.tune(&job, &Default::default())?;
/// assert_eq!(report.winner.key(), "bx=64,vec=4");
/// # Ok::<(), kerntune_core::Error>(())
/// ```
pub fn example() -> (Arc<crate::run::Tuner<FakeBackend>>, crate::spec::TuneJob) {
    let j = xy_job(&[32, 64, 128, 256], &[1, 2, 4], 1024);
    let time = |c: &Config| {
        let (bx, vec) = (c.get_i64("bx").unwrap_or(1) as f64, c.get_i64("vec").unwrap_or(1) as f64);
        1e-3 * (1.0 + (bx / 64.0).log2().abs() / 10.0) * (1.0 + (4.0 / vec).log2() / 10.0)
    };
    let limits = Limits::preset("h100").expect("the built-in h100 preset").1;
    (Arc::new(crate::run::Tuner::new(FakeBackend::new(limits, time))), j)
}

/// The fake backend's launch API: what the CUDA, HIP and wgpu launch APIs do on a device, done
/// on host slices, so that policies, embedded winners and argument checking are tested on a
/// CPU. [`app::FakeTunable`] is the application's handle; its kernels run the fake computation.
pub mod app {
    use super::{compute, FakeBackend};
    use crate::app::args::{Arg, ArgType, Args, LaunchError, Signature};
    use crate::app::handle::{Autotuned, EmbeddedWinner, Origin, Policy, Slot};
    use crate::run::{TuneOptions, Tuner};
    use crate::space::config::Config;
    use crate::spec::job::TuneJob;
    use crate::spec::problem::{DType, HostBuffer};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// A read-only host slice standing in for a device buffer.
    pub struct In<'a>(pub &'a [f32]);
    /// A writable host slice standing in for a device buffer.
    pub struct Out<'a>(pub &'a mut [f32]);

    impl Arg for In<'_> {
        const TYPE: ArgType = ArgType::Buffer { dtype: Some(DType::F32), writable: false };
        fn size(&self) -> Option<u64> {
            Some(self.0.len() as u64)
        }
    }
    impl Arg for Out<'_> {
        const TYPE: ArgType = ArgType::Buffer { dtype: Some(DType::F32), writable: true };
        fn size(&self) -> Option<u64> {
            Some(self.0.len() as u64)
        }
    }

    /// A kernel "loaded" for the application: the config it runs and its signature.
    pub struct AppKernel {
        /// The config.
        pub config: Config,
        signature: Signature,
        launches: AtomicUsize,
    }

    impl AppKernel {
        /// Launches made.
        pub fn launches(&self) -> usize {
            self.launches.load(Ordering::Relaxed)
        }
    }

    /// A tunable kernel for the application (see [`Autotuned`]).
    pub struct FakeTunable {
        auto: Autotuned<FakeBackend, AppKernel>,
    }

    impl FakeTunable {
        /// A handle over `job` on `tuner`, with `policy`.
        pub fn new(tuner: Arc<Tuner<FakeBackend>>, job: TuneJob, opts: TuneOptions, policy: Policy, embedded: &'static [EmbeddedWinner]) -> FakeTunable {
            let auto = Autotuned::with_compiler(tuner, job, opts, |job, prep, cfg, _| {
                Ok(AppKernel { config: cfg.clone(), signature: Signature::new(&job.source.name, &prep.layout, true, true), launches: AtomicUsize::new(0) })
            })
            .policy(policy)
            .embedded(embedded);
            FakeTunable { auto }
        }

        /// The kernel for these problem sizes.
        pub fn kernel(&self, sizes: &[i64]) -> Result<FakeKernelHandle, crate::run::error::Error> {
            Ok(FakeKernelHandle { slot: self.auto.slot(sizes)? })
        }

        /// The handle underneath.
        pub fn handle(&self) -> &Autotuned<FakeBackend, AppKernel> {
            &self.auto
        }
    }

    /// What the application launches.
    pub struct FakeKernelHandle {
        slot: Arc<Slot<AppKernel>>,
    }

    impl FakeKernelHandle {
        /// Checks the arguments (count, types, lengths) and runs the fake computation on the
        /// written buffers; nothing runs when a check fails.
        pub fn launch<A: Args + HostArgs>(&self, mut args: A) -> Result<(), LaunchError> {
            let t = self.slot.load();
            t.kernel.signature.check(&args)?;
            args.run();
            t.kernel.launches.fetch_add(1, Ordering::Relaxed);
            Ok(())
        }

        /// What [`FakeKernelHandle::launch`] checks before running anything (the current
        /// kernel's signature against the tuple), without running.
        pub fn check<A: Args>(&self, args: &A) -> Result<(), LaunchError> {
            self.slot.load().kernel.signature.check(args)
        }

        /// The config running now, and where it came from.
        pub fn current(&self) -> (Config, Origin) {
            let t = self.slot.load();
            (t.config.clone(), t.origin)
        }
    }

    /// Runs the fake computation over a tuple of [`In`] and [`Out`].
    pub trait HostArgs {
        /// Computes every [`Out`] from the [`In`]s.
        fn run(&mut self);
    }

    fn buffers(ins: &[&[f32]], outs: &mut [&mut [f32]]) {
        let mut bufs: Vec<HostBuffer> = ins
            .iter()
            .map(|x| HostBuffer {
                name: String::new(),
                dtype: DType::F32,
                data: x.iter().flat_map(|v| v.to_le_bytes()).collect(),
                access: crate::Access::Read,
                memory: Default::default(),
            })
            .chain(outs.iter().map(|x| HostBuffer {
                name: String::new(),
                dtype: DType::F32,
                data: x.iter().flat_map(|v| v.to_le_bytes()).collect(),
                access: crate::Access::ReadWrite,
                memory: Default::default(),
            }))
            .collect();
        compute(&mut bufs, None);
        for (o, b) in outs.iter_mut().zip(&bufs[ins.len()..]) {
            for (i, v) in o.iter_mut().enumerate() {
                *v = b.get_f64(i) as f32;
            }
        }
    }

    impl HostArgs for (In<'_>, Out<'_>) {
        fn run(&mut self) {
            buffers(&[self.0 .0], &mut [&mut *self.1 .0]);
        }
    }
    impl HostArgs for (In<'_>, In<'_>, Out<'_>) {
        fn run(&mut self) {
            buffers(&[self.0 .0, self.1 .0], &mut [&mut *self.2 .0]);
        }
    }
    impl HostArgs for (In<'_>,) {
        fn run(&mut self) {}
    }
    impl HostArgs for (In<'_>, In<'_>) {
        fn run(&mut self) {}
    }
    impl HostArgs for (Out<'_>, Out<'_>) {
        fn run(&mut self) {
            buffers(&[], &mut [&mut *self.0 .0, &mut *self.1 .0]);
        }
    }
}

#[cfg(test)]
mod tests {
    /// The count files of ended processes go; a live process's stays.
    #[test]
    #[cfg(target_os = "linux")]
    fn count_files_of_ended_processes_are_removed() {
        let tmp = std::env::temp_dir();
        // No process has this id (Linux's largest is 4194304).
        let ended = tmp.join(format!("{}4000000000", super::OOM_FILE));
        let ended_next = tmp.join(format!("{}4000000000.next-4000000001", super::OOM_FILE));
        // The parent's (cargo's, or the shell's), not this process's, which a test beside this
        // one may be counting in.
        let alive = tmp.join(format!("{}{}", super::OOM_FILE, std::os::unix::process::parent_id()));
        let was = std::fs::read(&alive).ok();
        for f in [&ended, &ended_next, &alive] {
            std::fs::write(f, "oom_kill 0\n").unwrap();
        }
        super::remove_ended_oom_files();
        assert!(!ended.exists() && !ended_next.exists(), "an ended process's files stay");
        assert!(alive.exists(), "a live process's file went");
        match was {
            Some(text) => std::fs::write(alive, text).unwrap(),
            None => std::fs::remove_file(alive).unwrap(),
        }
    }
}
