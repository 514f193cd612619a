//! The CUDA side of kerntune's worker processes (see [`kerntune_core::worker`] for why and
//! how): a worker owns a CUDA context and serves the parent's requests with it.
//!
//! Host programs call [`hook`] first thing in `main` (or `kerntune::hook()`, which calls every
//! compiled-in backend's hook). `KERNTUNE_CUDA_ISOLATION=0` keeps kernels in-process.

use crate::backend::CudaBackend;
use crate::bench::{CudaKernel, LocalWorkspace};
use kerntune_core::worker::{Executor, KernelImage, WorkerKind};
use kerntune_core::{BackendError, HostBuffer, Launch, ProblemData, TimeRequest, VerifyRequest};
use std::collections::HashMap;

/// The CUDA backend's kind of worker process.
pub static KIND: WorkerKind = WorkerKind::new("CUDA", "KERNTUNE_CUDA_WORKER", "KERNTUNE_CUDA_ISOLATION");

/// Call first thing in `main`. In a CUDA worker process this serves requests and exits;
/// otherwise it enables running kernels in workers for this program.
pub fn hook() {
    KIND.hook(CudaExecutor::default);
}

/// Whether [`hook`] enabled worker processes.
pub fn isolation_enabled() -> bool {
    KIND.enabled()
}

impl CudaKernel {
    pub(crate) fn image(&self) -> KernelImage<'_> {
        KernelImage { id: self.id, name: self.name.to_str().unwrap_or(""), binary: &self.cubin }
    }
}

/// A worker's CUDA state: the device, the problem's buffers, the loaded kernels.
#[derive(Default)]
pub struct CudaExecutor {
    backend: Option<CudaBackend>,
    ws: Option<LocalWorkspace>,
    kernels: HashMap<u64, CudaKernel>,
}

fn missing(what: &str) -> BackendError {
    BackendError::other(format!("CUDA worker: {what}"))
}

impl CudaExecutor {
    fn parts(&mut self, id: u64) -> Result<(&CudaKernel, &mut LocalWorkspace), BackendError> {
        let k = self.kernels.get(&id).ok_or_else(|| missing("kernel not loaded"))?;
        let ws = self.ws.as_mut().ok_or_else(|| missing("not initialised"))?;
        Ok((k, ws))
    }
}

impl Executor for CudaExecutor {
    fn init(&mut self, ordinal: usize, problem: &ProblemData, flush_bytes: usize) -> Result<(), BackendError> {
        let b = CudaBackend::open_in_process(Some(ordinal)).map_err(|e| BackendError::DeviceLost(e.to_string()))?;
        self.ws = Some(LocalWorkspace::new(b.shared().clone(), problem, flush_bytes)?);
        self.backend = Some(b);
        Ok(())
    }

    fn load(&mut self, id: u64, name: &str, binary: Vec<u8>) -> Result<(), BackendError> {
        let b = self.backend.as_ref().ok_or_else(|| missing("not initialised"))?;
        let cname = std::ffi::CString::new(name).map_err(|_| BackendError::other("kernel name contains a NUL byte"))?;
        let k = CudaKernel::new(b.shared().clone(), cname, binary);
        let gen = b.shared().bind()?.gen;
        k.function(gen)?;
        self.kernels.insert(id, k);
        Ok(())
    }

    fn unload(&mut self, id: u64) {
        self.kernels.remove(&id);
    }

    fn reset(&mut self, poison: bool) -> Result<(), BackendError> {
        self.ws.as_mut().ok_or_else(|| missing("not initialised"))?.reset(poison)
    }

    fn time(&mut self, id: u64, launch: &Launch, req: &TimeRequest) -> Result<Vec<f64>, BackendError> {
        let (k, ws) = self.parts(id)?;
        ws.time(k, launch, req)
    }

    fn verify(&mut self, id: u64, launch: &Launch, req: &VerifyRequest<'_>) -> Result<Vec<f64>, BackendError> {
        let (k, ws) = self.parts(id)?;
        ws.verify_on_device(k, launch, req)
    }

    fn read_outputs(&mut self) -> Result<Vec<HostBuffer>, BackendError> {
        self.ws.as_mut().ok_or_else(|| missing("not initialised"))?.read_outputs()
    }
}
