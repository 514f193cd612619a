//! The [`Backend`] implementation: opening a device for tuning, compiling through the cache,
//! and running kernels in this process or in a worker process.

use crate::bench::{CudaKernel, LocalWorkspace};
use crate::compile::{nvrtc_version, CompileCache, CompileOptions};
use crate::device::{init, summary, DeviceSummary, Shared};
use cudarc::driver::result;
use cudarc::driver::sys;
use kerntune_core::compiler::CompilerKind;
use kerntune_core::worker::{WorkerKind, WorkerSlot};
use kerntune_core::{
    Backend, BackendError, CompileRequest, Compiled, HostBuffer, Launch, Limits, Memcheck, OpenError, ProblemData, ResourceUsage, Target, TimeRequest,
    TimingMethod,
};
use std::sync::Arc;

/// The CUDA backend's kind of worker process (see [`crate::worker`]).
pub static KIND: WorkerKind = WorkerKind::new("CUDA", "KERNTUNE_CUDA_WORKER", "KERNTUNE_CUDA_ISOLATION");

/// The CUDA backend's compiler processes (NVRTC; see [`kerntune_core::compiler`]): used by
/// default, each loading NVRTC as it starts.
pub static COMPILER: CompilerKind =
    CompilerKind::new("CUDA", "KERNTUNE_CUDA_COMPILER", crate::compile::nvrtc_job).with_warm(crate::compile::nvrtc_warm).by_default();

/// A problem's device memory: in this process, or in the worker process.
pub enum CudaWorkspace {
    /// Kernels run in this process.
    Local(Box<LocalWorkspace>),
    /// Kernels run in the worker process (see [`crate::worker`]); the parent keeps the problem
    /// to start a fresh worker after a fault.
    Remote(Arc<ProblemData>),
}

/// An NVIDIA GPU opened for tuning.
pub struct CudaBackend {
    shared: Arc<Shared>,
    summary: DeviceSummary,
    nvrtc: (i32, i32),
    driver: i32,
    cache: CompileCache,
    ordinal: usize,
    /// `Some` when kernels run in a worker process (the default where the host program enabled
    /// it, see [`crate::worker::hook`]); the worker is started on first use.
    worker: Option<WorkerSlot>,
    /// Other processes seen on the GPU while configs were timed (the tuner's backend only).
    sharing: kerntune_core::sharing::Sharing,
}

impl CudaBackend {
    /// Opens device `ordinal` (default 0). Errors distinguish "CUDA driver library not found",
    /// "no CUDA device" and a missing NVRTC.
    pub fn open(ordinal: Option<usize>) -> Result<CudaBackend, OpenError> {
        let mut b = Self::open_in_process(ordinal)?;
        // The tuner's backend (not a worker's, which opens in process) watches who else uses
        // the GPU.
        b.sharing = kerntune_core::sharing::Sharing::new(crate::device::uuid_of(b.ordinal).map(kerntune_core::sharing::GpuId::Uuid));
        if KIND.enabled() {
            b.worker = Some(WorkerSlot::new(&KIND, b.ordinal));
        }
        Ok(b)
    }

    /// Opens the device with kernels running in this process (what the worker itself uses).
    pub fn open_in_process(ordinal: Option<usize>) -> Result<CudaBackend, OpenError> {
        let t = std::time::Instant::now();
        let n = init()?;
        let init_s = t.elapsed().as_secs_f64();
        let ordinal = ordinal.unwrap_or(0);
        if ordinal >= n as usize {
            return Err(OpenError::NoDevice {
                backend: "cuda".into(),
                message: format!("no CUDA device #{ordinal}: this machine has {} (see `kerntune devices`)", kerntune_core::hint::ordinals(n as usize)),
            });
        }
        // SAFETY: only tries to load the library.
        if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
            return Err(OpenError::LibraryNotFound {
                backend: "cuda".into(),
                library: "NVRTC library".into(),
                detail: "libnvrtc.so could not be loaded; add the CUDA toolkit's lib directory to LD_LIBRARY_PATH".into(),
            });
        }
        let nvrtc = nvrtc_version().map_err(|m| OpenError::Other { backend: "cuda".into(), message: m })?;
        let summary = summary(ordinal)?;
        let shared = Arc::new(Shared::open(ordinal, summary.target.arch.clone())?);
        let mut driver = 0;
        // SAFETY: valid out-pointer.
        unsafe {
            let _ = sys::cuDriverGetVersion(&mut driver);
        }
        let cache = CompileCache::new(kerntune_core::store::cache::folder("cuda"), format!("nvrtc {}.{}", nvrtc.0, nvrtc.1));
        tracing::debug!(ordinal, init_s, seconds = t.elapsed().as_secs_f64(), "CUDA device opened");
        Ok(CudaBackend { shared, summary, nvrtc, driver, cache, ordinal, worker: None, sharing: Default::default() })
    }

    /// Whether kernels run in a worker process.
    pub fn isolated(&self) -> bool {
        self.worker.is_some()
    }

    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// Runs `f` on the worker for `problem` (see [`WorkerSlot::with`]).
    fn with_worker<T>(
        &self,
        problem: &Arc<ProblemData>,
        f: impl FnOnce(&mut kerntune_core::worker::Worker) -> Result<T, BackendError>,
    ) -> Result<T, BackendError> {
        self.worker.as_ref().expect("isolated mode").with(problem, f)
    }

    /// The CUBIN of a request and the symbol to launch in it, from the compile cache or NVRTC
    /// (what [`crate::launch`] loads into an application's context).
    pub fn binary(&self, req: &CompileRequest<'_>) -> Result<kerntune_core::store::cache::Binary, BackendError> {
        let opts = CompileOptions::for_request(req, &self.summary.target.arch);
        let instance = req.source.instance(req.defines);
        let (cache, name, code, headers) = (self.cache.clone(), req.source.entry().to_string(), req.code.to_string(), req.source.headers.clone());
        // NVRTC cannot be interrupted: the tuner may stop waiting, or kill a compiler process
        // (see `kerntune_core::compiler`).
        COMPILER.compile(req.abandon, move |run| cache.compile_with(&name, instance.as_deref(), &code, &headers, &opts, run))
    }

    /// The device's CUDA ordinal.
    pub fn ordinal(&self) -> usize {
        self.ordinal
    }

    /// Raw device attributes (for recording tables and `kerntune devices --json`).
    pub fn attributes(&self) -> &[(String, i64)] {
        &self.summary.attributes
    }

    /// The compute capability's major number (`sm_90` → 9).
    fn major(&self) -> u32 {
        self.summary.target.arch.trim_start_matches("sm_").parse::<u32>().map_or(0, |n| n / 10)
    }

    fn usage(&self, func: sys::CUfunction, launch: &Launch) -> ResourceUsage {
        use sys::CUfunction_attribute as F;
        // SAFETY: a valid function in the current context.
        let get = |a: F| unsafe { result::function::get_function_attribute(func, a) }.ok();
        // SAFETY: as above.
        let occ = unsafe { result::occupancy::max_active_block_per_multiprocessor(func, launch.threads() as i32, launch.shared_mem_bytes as usize) }.ok();
        ResourceUsage {
            registers: get(F::CU_FUNC_ATTRIBUTE_NUM_REGS).map(|v| v as u32),
            static_shared_bytes: get(F::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES).map(|v| v as u64),
            local_bytes: get(F::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES).map(|v| v as u64),
            max_threads_per_block: get(F::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK).map(|v| v as u32),
            active_blocks_per_sm: occ.map(|v| v.max(0) as u32),
        }
    }
}

/// `KERNTUNE_CUDA_USAGE=driver`: read compiled kernels' resources from the driver (loading each
/// into this process's context) instead of from the CUBIN.
fn driver_usage() -> bool {
    static DRIVER: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *DRIVER.get_or_init(|| std::env::var("KERNTUNE_CUDA_USAGE").is_ok_and(|v| v == "driver"))
}

impl Backend for CudaBackend {
    type Kernel = CudaKernel;
    type Workspace = CudaWorkspace;

    fn target(&self) -> &Target {
        &self.summary.target
    }
    fn limits(&self) -> &Limits {
        &self.summary.limits
    }
    fn toolchain(&self) -> String {
        format!("nvrtc {}.{}, driver {}.{}", self.nvrtc.0, self.nvrtc.1, self.driver / 1000, (self.driver % 1000) / 10)
    }
    fn language(&self) -> &'static str {
        "cuda"
    }
    fn timing_method(&self) -> TimingMethod {
        TimingMethod::DeviceEvents
    }
    fn environment(&self) -> Vec<(String, String)> {
        vec![("device".into(), self.summary.target.name.clone()), ("toolchain".into(), self.toolchain())]
    }

    fn compile(&self, req: &CompileRequest<'_>) -> Result<Compiled<CudaKernel>, BackendError> {
        let cubin = self.binary(req)?;
        let read = if driver_usage() { Err("KERNTUNE_CUDA_USAGE=driver".to_string()) } else { crate::cubin::usage(&cubin.bytes, &cubin.entry) };
        let name =
            std::ffi::CString::new(cubin.entry).map_err(|_| BackendError::CompileFailed { log: "kernel name contains a NUL byte".into(), options: vec![] })?;
        // The usage from the CUBIN: loading it here to ask the driver would put work on a second
        // context of the GPU a worker may be timing (see `cubin`). The driver is asked only when
        // the CUBIN cannot be read, or when `KERNTUNE_CUDA_USAGE=driver` says so.
        let kernel = CudaKernel::new(self.shared.clone(), name, cubin.bytes);
        let usage = match read {
            Ok(u) => crate::cubin::resource_usage(&u, req.launch.threads(), req.launch.shared_mem_bytes as u64, self.major(), &self.summary.limits),
            Err(why) => {
                tracing::debug!(why, "resource usage from the driver");
                let bound = self.shared.bind()?;
                let func = kernel.function(bound.gen)?;
                self.usage(func, req.launch)
            }
        };
        Ok(Compiled { kernel, usage, cached: cubin.cached })
    }

    fn prestart_compilers(&self, threads: usize, wanted: Option<bool>) {
        COMPILER.prestart(threads, wanted);
    }

    fn in_compile_cache(&self, req: &CompileRequest<'_>) -> Option<bool> {
        let opts = CompileOptions::for_request(req, &self.summary.target.arch);
        Some(self.cache.holds(req.source.entry(), req.source.instance(req.defines).as_deref(), req.code, &req.source.headers, &opts))
    }

    fn workspace(&self, problem: &Arc<ProblemData>) -> Result<CudaWorkspace, BackendError> {
        if self.worker.is_some() {
            // Start the worker now, so that a worker that cannot start fails before measuring.
            self.with_worker(problem, |_| Ok(()))?;
            return Ok(CudaWorkspace::Remote(problem.clone()));
        }
        LocalWorkspace::new(self.shared.clone(), problem, self.summary.limits.l2_flush_bytes()).map(|w| CudaWorkspace::Local(Box::new(w)))
    }

    fn reset(&self, ws: &mut CudaWorkspace, poison: bool) -> Result<(), BackendError> {
        match ws {
            CudaWorkspace::Local(l) => l.reset(poison),
            CudaWorkspace::Remote(p) => self.with_worker(p, |w| w.reset(poison)),
        }
    }

    fn time(&self, ws: &mut CudaWorkspace, kernel: &CudaKernel, launch: &Launch, req: &TimeRequest) -> Result<Vec<f64>, BackendError> {
        self.sharing.sample();
        match ws {
            CudaWorkspace::Local(l) => l.time(kernel, launch, req),
            CudaWorkspace::Remote(p) => self.with_worker(p, |w| w.time(kernel.image(), launch, req)),
        }
    }

    fn verify(&self, ws: &mut CudaWorkspace, kernel: &CudaKernel, launch: &Launch, req: &kerntune_core::VerifyRequest<'_>) -> Result<Vec<f64>, BackendError> {
        match ws {
            CudaWorkspace::Local(l) => l.verify_on_device(kernel, launch, req),
            CudaWorkspace::Remote(p) => self.with_worker(p, |w| w.verify(kernel.image(), launch, req)),
        }
    }

    fn printed(&self, _ws: &mut CudaWorkspace) -> Option<kerntune_core::Printed> {
        // In a worker, kernels print to its standard output, which it reads apart; in this
        // process, to the tuner's own.
        self.worker.as_ref()?.take_printed()
    }

    fn read_outputs(&self, ws: &mut CudaWorkspace, wanted: &[bool]) -> Result<Vec<HostBuffer>, BackendError> {
        match ws {
            CudaWorkspace::Local(l) => l.read_masked(wanted),
            CudaWorkspace::Remote(p) => self.with_worker(p, |w| w.read_outputs(p, wanted)),
        }
    }

    fn shares_kernels(&self) -> bool {
        // Workers load kernels from the CUBIN the parent ships, on whichever device they own.
        self.worker.is_some()
    }

    fn memcheck(&self, problem: &std::sync::Arc<ProblemData>, kernel: &CudaKernel, launch: &Launch) -> Option<Memcheck> {
        let sanitizer = sanitizer()?;
        // The running program, even if its file has been replaced since it started.
        let (exe, _) = kerntune_core::worker::this_program().ok()?;
        let log = std::env::temp_dir().join(format!("kerntune-sanitizer-{}-{}.log", std::process::id(), kernel.image().id));
        let mut cmd = std::process::Command::new(&sanitizer);
        // Padding after every allocation: a read past one buffer's end would otherwise land in
        // the next allocation, which memcheck cannot tell from a valid access (seen on an H200,
        // where the same read past a stencil's input was reported on an H100).
        cmd.args(["--tool", "memcheck", "--padding", PADDING, "--print-limit", "1", "--show-backtrace", "no", "--log-file"]).arg(&log).arg(exe);
        // Buffers of their exact size, for the checker to see an access past one's end (a
        // guarded buffer is mapped in 2 MiB steps: see `bench::plain_buffers`).
        cmd.env(crate::bench::PLAIN_BUFFERS, "1");
        let timeout = std::time::Duration::from_secs(120);
        let r = kerntune_core::worker::run_once(&KIND, (cmd, self.ordinal), problem, kernel.image(), launch, (timeout, std::time::Duration::from_secs(30)));
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let _ = std::fs::remove_file(&log);
        let first = first_sanitizer_report(&text);
        tracing::info!(launch = ?r.as_ref().err().map(|e| e.to_string()), report = ?first, "compute-sanitizer run");
        Some(match first {
            Some(report) => Memcheck::Reported { tool: "compute-sanitizer (memcheck)".into(), report },
            None if r.is_ok() && text.contains("ERROR SUMMARY: 0 errors") => {
                Memcheck::Clean { tool: format!("compute-sanitizer (memcheck, {PADDING} bytes of padding after each allocation)") }
            }
            None => {
                // Why there is nothing to quote: the checker's own words, or that it wrote none.
                let said: String = text.lines().filter(|l| !l.trim_matches('=').trim().is_empty()).take(6).collect::<Vec<_>>().join(" | ");
                let launch = r.err().map(|e| format!("; the launch under it: {e}")).unwrap_or_default();
                Memcheck::Inconclusive(if said.is_empty() {
                    format!("{} wrote no log{launch}", sanitizer.display())
                } else {
                    format!("{}'s log: {said}{launch}", sanitizer.display())
                })
            }
        })
    }

    fn take_notes(&self) -> Vec<String> {
        let mut notes = match &self.worker {
            // The worker's workspace is the one that measured; a worker that died took its notes
            // with it.
            Some(slot) => slot.if_running(|w| w.take_notes()).and_then(Result::ok).unwrap_or_default(),
            None => self.shared.notes.take(),
        };
        notes.extend(self.sharing.take_note());
        notes
    }

    fn recover(&self) -> Result<(), BackendError> {
        match &self.worker {
            // The faulted worker was already killed; the next call starts a fresh one.
            Some(slot) => {
                slot.recover();
                Ok(())
            }
            None => self.shared.recover(),
        }
    }
}

/// Bytes of padding the memory checker puts after every allocation (`--padding`), so that a
/// read or write up to this far past a buffer's end is reported as out of bounds.
const PADDING: &str = "4194304";

/// NVIDIA's memory checker: `$KERNTUNE_SANITIZER` (a path, or `0` for none), else
/// `compute-sanitizer` on the `PATH`, in `$CUDA_HOME/bin` or in `/usr/local/cuda/bin`.
fn sanitizer() -> Option<std::path::PathBuf> {
    if let Some(v) = std::env::var_os("KERNTUNE_SANITIZER") {
        return (v != "0" && !v.is_empty()).then(|| v.into());
    }
    let mut dirs: Vec<std::path::PathBuf> = std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
    if let Some(home) = std::env::var_os("CUDA_HOME") {
        dirs.push(std::path::Path::new(&home).join("bin"));
    }
    dirs.push("/usr/local/cuda/bin".into());
    dirs.into_iter().map(|d| d.join("compute-sanitizer")).find(|p| p.is_file())
}

/// The first error of a compute-sanitizer log, its lines joined: what was accessed, where, by
/// which thread and block, and the address relative to the nearest allocation.
pub(crate) fn first_sanitizer_report(log: &str) -> Option<String> {
    let lines: Vec<&str> = log.lines().map(|l| l.trim_start_matches('=').trim()).collect();
    let start = lines.iter().position(|l| l.starts_with("Invalid") || l.contains("out of bounds") || l.starts_with("Misaligned"))?;
    let block: Vec<&str> = lines[start..].iter().copied().take_while(|l| !l.is_empty()).take(8).filter(|l| !l.starts_with("Saved host backtrace")).collect();
    Some(block.join("; "))
}

#[cfg(test)]
mod tests {
    use super::first_sanitizer_report;

    #[test]
    fn the_first_sanitizer_error_is_quoted_whole() {
        let log = "========= COMPUTE-SANITIZER\n========= Invalid __global__ read of size 4 bytes\n=========     at stencil+0x2d0\n=========     by thread (31,7,0) in block (127,0,0)\n=========     Address 0x7f3e1c400000 is out of bounds\n=========     and is 1 bytes after the nearest allocation at 0x7f3e18400000 of size 67108864 bytes\n=========\n========= Invalid __global__ read of size 4 bytes\n";
        let r = first_sanitizer_report(log).unwrap();
        assert_eq!(
            r,
            "Invalid __global__ read of size 4 bytes; at stencil+0x2d0; by thread (31,7,0) in block (127,0,0); Address 0x7f3e1c400000 is out of bounds; and is 1 bytes after the nearest allocation at 0x7f3e18400000 of size 67108864 bytes"
        );
        assert!(first_sanitizer_report("========= ERROR SUMMARY: 0 errors").is_none());
    }
}
