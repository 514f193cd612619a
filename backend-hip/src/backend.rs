//! Opening an AMD GPU and the [`Backend`] implementation.

use crate::bench::{HipKernel, LocalWorkspace};
use crate::compile::{compile, CompileOptions};
use crate::error::{check, describe};
use crate::limits::{arch, limits_from_attributes, Attributes};
use hip_sys::hiprt::{self as hip, hipDeviceAttribute_t as A, hipError_t};
use kerntune_core::worker::{Worker, WorkerSlot};
use kerntune_core::{
    Backend, BackendError, CompileRequest, Compiled, HostBuffer, Launch, Limits, OpenError, ProblemData, ResourceUsage, Target, TimeRequest, TimingMethod,
    Vendor,
};
use std::path::PathBuf;
use std::sync::Arc;

/// A device found by [`devices`].
#[derive(Clone, Debug)]
pub struct DeviceSummary {
    /// HIP ordinal.
    pub ordinal: usize,
    /// The target (`gfx942`, ...).
    pub target: Target,
    /// Its limits.
    pub limits: Limits,
    /// The raw attributes.
    pub attributes: Attributes,
}

fn no_device(message: String) -> OpenError {
    OpenError::NoDevice { backend: "hip".into(), message }
}

/// Initialises the runtime: "no AMD GPU found" when it has none.
fn init() -> Result<i32, OpenError> {
    // SAFETY: plain runtime initialisation.
    match unsafe { hip::hipInit(0) } {
        hipError_t::hipSuccess => {}
        hipError_t::hipErrorNoDevice | hipError_t::hipErrorInvalidDevice => return Err(no_device("no AMD GPU found".into())),
        e => return Err(no_device(format!("no AMD GPU found (hipInit: {})", describe(e)))),
    }
    let mut n = 0;
    // SAFETY: valid out-pointer.
    let r = unsafe { hip::hipGetDeviceCount(&mut n) };
    if r != hipError_t::hipSuccess || n == 0 {
        return Err(no_device("no AMD GPU found".into()));
    }
    Ok(n)
}

fn attr(dev: i32, a: A) -> i64 {
    let mut v = 0;
    // SAFETY: valid out-pointer and device ordinal.
    if unsafe { hip::hipDeviceGetAttribute(&mut v, a, dev) } == hipError_t::hipSuccess {
        v as i64
    } else {
        0
    }
}

/// `gcnArchName`, found by scanning the properties record: the record's layout differs
/// between ROCm releases (and from the bindings' own), so the call writes into a generously
/// sized buffer and the `gfx...` string is searched for instead of read at a fixed offset.
fn arch_name(dev: i32) -> String {
    let mut buf = vec![0u64; 2048]; // 16 KiB, zeroed, 8-byte aligned: larger than any release's record.
                                    // SAFETY: the buffer is larger than hipDeviceProp_t in every ROCm release.
    let ok = unsafe { hip::hipGetDeviceProperties(buf.as_mut_ptr() as *mut hip::hipDeviceProp_t, dev) } == hipError_t::hipSuccess;
    if !ok {
        return "gfx".into();
    }
    // SAFETY: reinterpreting our own u64 buffer as bytes.
    let bytes = unsafe { std::slice::from_raw_parts(buf.as_ptr() as *const u8, buf.len() * 8) };
    bytes
        .windows(4)
        .position(|w| w[..3] == *b"gfx" && w[3].is_ascii_alphanumeric())
        .map(|i| bytes[i..].iter().take_while(|&&c| c != 0 && c.is_ascii_graphic()).map(|&c| c as char).collect())
        .unwrap_or_else(|| "gfx".into())
}

fn summary(dev: i32) -> DeviceSummary {
    let a = Attributes {
        max_threads_per_block: attr(dev, A::hipDeviceAttributeMaxThreadsPerBlock),
        max_block_dim: [
            attr(dev, A::hipDeviceAttributeMaxBlockDimX),
            attr(dev, A::hipDeviceAttributeMaxBlockDimY),
            attr(dev, A::hipDeviceAttributeMaxBlockDimZ),
        ],
        max_grid_dim: [attr(dev, A::hipDeviceAttributeMaxGridDimX), attr(dev, A::hipDeviceAttributeMaxGridDimY), attr(dev, A::hipDeviceAttributeMaxGridDimZ)],
        warp_size: attr(dev, A::hipDeviceAttributeWarpSize),
        shared_per_block: attr(dev, A::hipDeviceAttributeMaxSharedMemoryPerBlock),
        shared_per_cu: attr(dev, A::hipDeviceAttributeMaxSharedMemoryPerMultiprocessor),
        registers_per_block: attr(dev, A::hipDeviceAttributeMaxRegistersPerBlock),
        max_threads_per_cu: attr(dev, A::hipDeviceAttributeMaxThreadsPerMultiProcessor),
        cu_count: attr(dev, A::hipDeviceAttributeMultiprocessorCount),
        l2_bytes: attr(dev, A::hipDeviceAttributeL2CacheSize),
        memory_clock_khz: attr(dev, A::hipDeviceAttributeMemoryClockRate),
        bus_width_bits: attr(dev, A::hipDeviceAttributeMemoryBusWidth),
        clock_khz: attr(dev, A::hipDeviceAttributeClockRate),
        arch_name: arch_name(dev),
    };
    let mut name = [0i8; 256];
    // SAFETY: buffer of the given length.
    let named = unsafe { hip::hipDeviceGetName(name.as_mut_ptr(), name.len() as i32, dev) } == hipError_t::hipSuccess;
    // SAFETY: NUL-terminated by the runtime (zero-initialised otherwise).
    let display = if named { unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) }.to_string_lossy().into_owned() } else { "AMD GPU".into() };
    let target = Target::new("hip", Vendor::Amd, &arch(&a.arch_name), &display);
    DeviceSummary { ordinal: dev as usize, limits: limits_from_attributes(&a), target, attributes: a }
}

/// Every AMD GPU.
pub fn devices() -> Result<Vec<DeviceSummary>, OpenError> {
    let n = init()?;
    Ok((0..n).map(summary).collect())
}

/// A problem's device memory: in this process, or in the worker process.
pub enum HipWorkspace {
    /// Kernels run in this process.
    Local(Box<LocalWorkspace>),
    /// Kernels run in the worker process (see [`crate::worker`]); the parent keeps the problem
    /// to start a fresh worker after a fault.
    Remote(ProblemData),
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
}

impl HipBackend {
    /// Opens device `ordinal` (default 0): "no AMD GPU found" without one, "HIP runtime
    /// compiler (hipRTC) not found" when hipRTC cannot be loaded. Kernels run in a worker
    /// process when the host program enabled it.
    pub fn open(ordinal: Option<usize>) -> Result<HipBackend, OpenError> {
        let mut b = Self::open_in_process(ordinal)?;
        if crate::worker::isolation_enabled() {
            b.worker = Some(Arc::new(WorkerSlot::new(&crate::worker::KIND, b.summary.ordinal)));
        }
        Ok(b)
    }

    /// Whether kernels run in a worker process.
    pub fn isolated(&self) -> bool {
        self.worker.is_some()
    }

    fn with_worker<T>(&self, problem: &ProblemData, f: impl FnOnce(&mut Worker) -> Result<T, BackendError>) -> Result<T, BackendError> {
        self.worker.as_ref().expect("isolated mode").with(problem, f)
    }

    /// Opens the device with kernels running in this process (what the worker itself uses).
    pub fn open_in_process(ordinal: Option<usize>) -> Result<HipBackend, OpenError> {
        let n = init()?;
        let o = ordinal.unwrap_or(0);
        if o >= n as usize {
            return Err(no_device(format!("no AMD GPU #{o}; there are {n}")));
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
        let cache = std::env::var_os("KERNTUNE_NO_COMPILE_CACHE").is_none().then(|| kerntune_core::db::cache_dir().join("hip"));
        Ok(HipBackend { summary: summary(o as i32), hiprtc, runtime, cache, worker: None })
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
        let opts = CompileOptions::for_request(req, &self.summary.target.arch);
        let instance = req.source.instance(req.defines);
        let bin = compile(req.source.entry(), instance.as_deref(), &req.source.code, &opts, self.cache.as_ref(), &self.version())?;
        let cached = bin.cached;
        let kernel = HipKernel::load(bin.bytes, &bin.entry, self.worker.clone())?;
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

    fn workspace(&self, problem: &ProblemData) -> Result<HipWorkspace, BackendError> {
        if self.worker.is_some() {
            // Start the worker now, so that a worker that cannot start fails before measuring.
            self.with_worker(problem, |_| Ok(()))?;
            return Ok(HipWorkspace::Remote(problem.clone()));
        }
        LocalWorkspace::new(problem, self.summary.limits.l2_flush_bytes(), &self.summary.target.arch).map(|w| HipWorkspace::Local(Box::new(w)))
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

    fn read_outputs(&self, ws: &mut HipWorkspace) -> Result<Vec<HostBuffer>, BackendError> {
        match ws {
            HipWorkspace::Local(l) => l.read_outputs(),
            HipWorkspace::Remote(p) => self.with_worker(p, |w| w.read_outputs(p)),
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
