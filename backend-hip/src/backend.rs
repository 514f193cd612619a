//! The [`Backend`] implementation: opening an AMD GPU for tuning, compiling through the
//! cache, and running kernels in this process or in a worker process.

use crate::bench::{HipKernel, LocalWorkspace};
use crate::compile::{cached, compile, CompileOptions};
use crate::device::{init, no_device, summary, DeviceSummary};
use crate::error::check;
use hip_sys::hiprt::{self as hip, hipError_t};
use kerntune_core::worker::{Worker, WorkerKind, WorkerSlot};
use kerntune_core::{
    Backend, BackendError, CompileRequest, Compiled, HostBuffer, Launch, Limits, OpenError, ProblemData, ResourceUsage, Target, TimeRequest, TimingMethod,
};
use std::path::PathBuf;
use std::sync::Arc;

/// The HIP backend's kind of worker process (see [`crate::worker`]).
pub static KIND: WorkerKind = WorkerKind::new("HIP", "KERNTUNE_HIP_WORKER", "KERNTUNE_HIP_ISOLATION");

/// The HIP backend's compiler processes (hipRTC; see [`kerntune_core::compiler`]).
pub static COMPILER: kerntune_core::compiler::CompilerKind =
    kerntune_core::compiler::CompilerKind::new("HIP", "KERNTUNE_HIP_COMPILER", crate::compile::hiprtc_job);

/// A problem's device memory: in this process, or in the worker process.
pub enum HipWorkspace {
    /// Kernels run in this process.
    Local(Box<LocalWorkspace>),
    /// Kernels run in the worker process (see [`crate::worker`]); the parent keeps the problem
    /// to start a fresh worker after a fault.
    Remote(Arc<ProblemData>),
}

/// An AMD GPU opened for tuning. With isolation on (the host program called
/// [`crate::worker::hook`]), kernels run in a worker process, as on CUDA: a fault (an illegal
/// address, a kernel that never ends) kills the worker, the config is recorded as failed, and a
/// fresh worker carries on. Without it, kernels run in this process and such a fault ends the
/// tune — its measurements so far are kept and a re-run resumes after the faulting config.
pub struct HipBackend {
    summary: DeviceSummary,
    hiprtc: (i32, i32),
    runtime: i32,
    cache: Option<PathBuf>,
    worker: Option<Arc<WorkerSlot>>,
    /// What this process's workspaces had to do, for the tune's report.
    notes: Arc<kerntune_core::backend::Notes>,
}

impl HipBackend {
    /// Opens device `ordinal` (default 0): "no AMD GPU found" without one, "HIP runtime
    /// compiler (hipRTC) not found" when hipRTC cannot be loaded. Kernels run in a worker
    /// process when the host program enabled it.
    pub fn open(ordinal: Option<usize>) -> Result<HipBackend, OpenError> {
        let mut b = Self::open_in_process(ordinal)?;
        if KIND.enabled() {
            b.worker = Some(Arc::new(WorkerSlot::new(&KIND, b.summary.ordinal)));
        }
        Ok(b)
    }

    /// Whether kernels run in a worker process.
    pub fn isolated(&self) -> bool {
        self.worker.is_some()
    }

    fn with_worker<T>(&self, problem: &Arc<ProblemData>, f: impl FnOnce(&mut Worker) -> Result<T, BackendError>) -> Result<T, BackendError> {
        self.worker.as_ref().expect("isolated mode").with(problem, f)
    }

    /// Opens the device with kernels running in this process (what the worker itself uses).
    pub fn open_in_process(ordinal: Option<usize>) -> Result<HipBackend, OpenError> {
        let n = init()?;
        let o = ordinal.unwrap_or(0);
        if o >= n as usize {
            return Err(no_device(format!("no AMD GPU #{o}: this machine has {} (see `kerntune devices`)", kerntune_core::hint::ordinals(n as usize))));
        }
        // SAFETY: valid ordinal.
        check(unsafe { hip::hipSetDevice(o as i32) }, "selecting the device")
            .map_err(|e| OpenError::Other { backend: "hip".into(), message: e.to_string() })?;
        let hiprtc = crate::hiprtc::version().map_err(|e| OpenError::LibraryNotFound {
            backend: "hip".into(),
            library: "HIP runtime compiler (hipRTC)".into(),
            detail: e.0,
        })?;
        let mut runtime = 0;
        // SAFETY: valid out-pointer.
        unsafe { hip::hipRuntimeGetVersion(&mut runtime) };
        let cache = kerntune_core::store::cache::folder("hip");
        Ok(HipBackend { summary: summary(o as i32), hiprtc, runtime, cache, worker: None, notes: Default::default() })
    }

    /// The code object of a request and the symbol to launch in it, from the compile cache or
    /// hipRTC (what [`crate::launch`] loads for an application).
    pub fn binary(&self, req: &CompileRequest<'_>) -> Result<kerntune_core::store::cache::Binary, BackendError> {
        let opts = CompileOptions::for_request(req, &self.summary.target.arch);
        let instance = req.source.instance(req.defines);
        let (cache, name, code, version, headers) =
            (self.cache.clone(), req.source.entry().to_string(), req.code.to_string(), self.version(), req.source.headers.clone());
        // hipRTC cannot be interrupted: the tuner may stop waiting, or kill a compiler process
        // (see `kerntune_core::compiler`).
        COMPILER.compile(req.abandon, move |run| compile(&name, instance.as_deref(), &code, &headers, &opts, cache.as_ref(), &version, run))
    }

    /// The device's HIP ordinal.
    pub fn ordinal(&self) -> usize {
        self.summary.ordinal
    }

    fn version(&self) -> String {
        format!("hiprtc {}.{}", self.hiprtc.0, self.hiprtc.1)
    }
}

impl Backend for HipBackend {
    type Kernel = HipKernel;
    type Workspace = HipWorkspace;

    fn target(&self) -> &Target {
        &self.summary.target
    }
    fn limits(&self) -> &Limits {
        &self.summary.limits
    }
    fn toolchain(&self) -> String {
        format!("{}, hip runtime {}", self.version(), self.runtime)
    }
    fn language(&self) -> &'static str {
        "hip"
    }
    fn timing_method(&self) -> TimingMethod {
        TimingMethod::DeviceEvents
    }

    fn compile(&self, req: &CompileRequest<'_>) -> Result<Compiled<HipKernel>, BackendError> {
        let bin = self.binary(req)?;
        let cached = bin.cached;
        let kernel = HipKernel::load(bin.bytes, &bin.entry, self.worker.is_some())?;
        use hip::hipFunction_attribute as F;
        let mut occ = 0;
        // SAFETY: valid function.
        let occ_ok = unsafe {
            hip::hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(&mut occ, kernel.func, req.launch.threads() as i32, req.launch.shared_mem_bytes as usize)
        } == hipError_t::hipSuccess;
        let usage = ResourceUsage {
            registers: kernel.attribute(F::HIP_FUNC_ATTRIBUTE_NUM_REGS).map(|v| v as u32),
            static_shared_bytes: kernel.attribute(F::HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES).map(|v| v as u64),
            local_bytes: kernel.attribute(F::HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES).map(|v| v as u64),
            max_threads_per_block: kernel.attribute(F::HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK).map(|v| v as u32),
            active_blocks_per_sm: occ_ok.then_some(occ.max(0) as u32),
        };
        Ok(Compiled { kernel, usage, cached })
    }

    fn prestart_compilers(&self, threads: usize, wanted: Option<bool>) {
        COMPILER.prestart(threads, wanted);
    }

    fn in_compile_cache(&self, req: &CompileRequest<'_>) -> Option<bool> {
        let opts = CompileOptions::for_request(req, &self.summary.target.arch);
        Some(cached(
            req.source.entry(),
            req.source.instance(req.defines).as_deref(),
            req.code,
            &req.source.headers,
            &opts,
            self.cache.as_ref(),
            &self.version(),
        ))
    }

    fn workspace(&self, problem: &Arc<ProblemData>) -> Result<HipWorkspace, BackendError> {
        if self.worker.is_some() {
            // Start the worker now, so that a worker that cannot start fails before measuring.
            self.with_worker(problem, |_| Ok(()))?;
            return Ok(HipWorkspace::Remote(problem.clone()));
        }
        LocalWorkspace::new(problem, self.summary.limits.l2_flush_bytes(), &self.summary.target.arch, self.notes.clone())
            .map(|w| HipWorkspace::Local(Box::new(w)))
    }

    fn reset(&self, ws: &mut HipWorkspace, poison: bool) -> Result<(), BackendError> {
        match ws {
            HipWorkspace::Local(l) => l.reset(poison),
            HipWorkspace::Remote(p) => self.with_worker(p, |w| w.reset(poison)),
        }
    }

    fn time(&self, ws: &mut HipWorkspace, kernel: &HipKernel, launch: &Launch, req: &TimeRequest) -> Result<Vec<f64>, BackendError> {
        match ws {
            HipWorkspace::Local(l) => l.time(kernel, launch, req),
            HipWorkspace::Remote(p) => self.with_worker(p, |w| w.time(kernel.image(), launch, req)),
        }
    }

    fn verify(&self, ws: &mut HipWorkspace, kernel: &HipKernel, launch: &Launch, req: &kerntune_core::VerifyRequest<'_>) -> Result<Vec<f64>, BackendError> {
        match ws {
            HipWorkspace::Local(l) => l.verify_on_device(kernel, launch, req),
            HipWorkspace::Remote(p) => self.with_worker(p, |w| w.verify(kernel.image(), launch, req)),
        }
    }

    fn printed(&self, _ws: &mut HipWorkspace) -> Option<kerntune_core::Printed> {
        // In a worker, kernels print to its standard output, which it reads apart; in this
        // process, to the tuner's own.
        self.worker.as_ref()?.take_printed()
    }

    fn read_outputs(&self, ws: &mut HipWorkspace, wanted: &[bool]) -> Result<Vec<HostBuffer>, BackendError> {
        match ws {
            HipWorkspace::Local(l) => l.read_masked(wanted),
            HipWorkspace::Remote(p) => self.with_worker(p, |w| w.read_outputs(p, wanted)),
        }
    }

    fn shares_kernels(&self) -> bool {
        // Workers load kernels from the code object the parent ships, on whichever GPU they own.
        self.worker.is_some()
    }

    fn take_notes(&self) -> Vec<String> {
        match &self.worker {
            // The worker's workspace is the one that measured; a worker that died took its notes
            // with it.
            Some(slot) => slot.if_running(|w| w.take_notes()).and_then(Result::ok).unwrap_or_default(),
            None => self.notes.take(),
        }
    }

    fn recover(&self) -> Result<(), BackendError> {
        match &self.worker {
            // The faulted worker was already killed; the next call starts a fresh one.
            Some(slot) => {
                slot.recover();
                Ok(())
            }
            None => Err(BackendError::DeviceLost(
                "a HIP fault poisons this process and kernels run in it; call kerntune_hip::worker::hook() (or kerntune::hook()) first thing in main to run them in a worker process".into(),
            )),
        }
    }
}
