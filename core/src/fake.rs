//! A fake backend that is a real [`Backend`]: deterministic time tables with configurable
//! noise, and configs that fail on purpose (compile errors, launch failures, hangs, wrong or
//! missing output, a lost device). The tuner, pruning, racing, verification and the database
//! are proven against it on a CPU.
//!
//! Its "kernel" computes, for every written buffer `out`, `out[i] = (out[i] if read-write) +
//! Σ inputs[i]` over the read-only buffers (indices wrap), and [`FakeBackend::reference`]
//! computes the same on the host.

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
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How a fake config behaves.
#[derive(Clone, Debug, PartialEq)]
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
    /// Leaves the last quarter of each output unwritten.
    SkipWrites,
    /// Kills the device (a sticky error); the backend must recover.
    DeviceLost,
    /// Compiles but needs more registers than the device has (reported in usage).
    TooManyRegisters,
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
    compile_delay: Duration,
    lost: AtomicBool,
    /// Number of `compile` calls.
    pub compiles: AtomicUsize,
    /// Timed launches per config key.
    pub launches: Mutex<HashMap<String, u32>>,
    /// Number of `recover` calls.
    pub recoveries: AtomicUsize,
}

/// A fake kernel: the config it was compiled for.
#[derive(Debug)]
pub struct FakeKernel {
    key: String,
    behavior: Behavior,
    base_time: f64,
}

/// The fake's device memory: the problem's buffers on the host.
#[derive(Debug)]
pub struct FakeWorkspace {
    initial: ProblemData,
    current: Vec<HostBuffer>,
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
            compile_delay: Duration::ZERO,
            lost: AtomicBool::new(false),
            compiles: AtomicUsize::new(0),
            launches: Mutex::new(HashMap::new()),
            recoveries: AtomicUsize::new(0),
        }
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

    /// Simulated compile time per config.
    pub fn with_compile_delay(mut self, d: Duration) -> Self {
        self.compile_delay = d;
        self
    }

    /// Overrides the target (e.g. to test fingerprint namespacing).
    pub fn with_target(mut self, t: Target) -> Self {
        self.target = t;
        self
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

fn compute(bufs: &mut [HostBuffer], behavior: Option<&Behavior>) {
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
        if !self.compile_delay.is_zero() {
            std::thread::sleep(self.compile_delay);
        }
        let behavior = (self.behavior)(req.config);
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
        Ok(Compiled { kernel: FakeKernel { key: req.config.key(), behavior, base_time: (self.time)(req.config) }, usage, cached: false })
    }

    fn workspace(&self, problem: &ProblemData) -> Result<FakeWorkspace, BackendError> {
        self.check_alive()?;
        Ok(FakeWorkspace { initial: problem.clone(), current: problem.buffers().cloned().collect() })
    }

    fn reset(&self, ws: &mut FakeWorkspace, poison: bool) -> Result<(), BackendError> {
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
        self.check_alive()?;
        if let Err(v) = self.limits.check_block(launch.block) {
            return Err(BackendError::OutOfResources(v));
        }
        match &k.behavior {
            Behavior::LaunchError => return Err(BackendError::LaunchFailed("fake launch failure (invalid argument)".into())),
            Behavior::Hang => {
                std::thread::sleep(req.timeout);
                return Err(BackendError::TimedOut(req.timeout));
            }
            Behavior::DeviceLost => {
                self.lost.store(true, Ordering::SeqCst);
                return Err(BackendError::DeviceLost("fake illegal address; context is unusable".into()));
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
        let mut rng = self.rng.lock().unwrap();
        for _ in 0..req.launches {
            compute(&mut ws.current, Some(&k.behavior));
            // Box-Muller normal noise, clamped so times stay positive.
            let (u1, u2): (f64, f64) = (rng.random::<f64>().max(1e-12), rng.random::<f64>());
            let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
            times.push(k.base_time * (1.0 + self.noise * z).max(0.05));
        }
        *self.launches.lock().unwrap().entry(k.key.clone()).or_default() += req.launches;
        Ok(times)
    }

    fn read_outputs(&self, ws: &mut FakeWorkspace) -> Result<Vec<HostBuffer>, BackendError> {
        self.check_alive()?;
        Ok(ws.current.clone())
    }

    fn recover(&self) -> Result<(), BackendError> {
        self.recoveries.fetch_add(1, Ordering::SeqCst);
        self.lost.store(false, Ordering::SeqCst);
        Ok(())
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
