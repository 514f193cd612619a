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
    /// Compiles running now, and the most that ever ran at once.
    pub compiling: AtomicUsize,
    /// The most compiles that ran at once.
    pub max_compiling: AtomicUsize,
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
            compiling: AtomicUsize::new(0),
            max_compiling: AtomicUsize::new(0),
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
        let now = self.compiling.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_compiling.fetch_max(now, Ordering::SeqCst);
        if !self.compile_delay.is_zero() {
            std::thread::sleep(self.compile_delay);
        }
        self.compiling.fetch_sub(1, Ordering::SeqCst);
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
    use crate::spec::value::Value;
    use crate::spec::{ArgKind, ArgSpec, DType, Init, KernelSource, Memory, Param, TuneJob};
    let mut j = TuneJob::new(KernelSource::new("k", "fake", "// fake"), vec![Param::new("bx", [32, 64, 128, 256]), Param::new("vec", [1, 2, 4])]);
    j.sizes = vec![("n".into(), Value::Int(1024))];
    j.args = vec![
        ArgSpec {
            name: "x".into(),
            kind: ArgKind::Buffer { dtype: DType::F32, len: "n".into(), init: Init::Sequence, access: Access::Read, memory: Memory::Global },
        },
        ArgSpec {
            name: "y".into(),
            kind: ArgKind::Buffer { dtype: DType::F32, len: "n".into(), init: Init::Zeros, access: Access::Write, memory: Memory::Global },
        },
    ];
    j.grid = ["div_ceil(n, bx*vec)".into(), "1".into(), "1".into()];
    j.block = ["bx".into(), "1".into(), "1".into()];
    j.default = Some(vec![("bx".into(), Value::Int(256)), ("vec".into(), Value::Int(1))]);
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
