//! The HIP side of kerntune's worker processes (see [`kerntune_core::worker`] for why and
//! how): a worker owns the HIP device state and serves the parent's requests with it — the
//! same protocol, parent-side slot and fault policy the CUDA backend uses.
//!
//! Host programs call [`hook`] first thing in `main` (or `kerntune::hook()`, which calls every
//! compiled-in backend's hook). `KERNTUNE_HIP_ISOLATION=0` keeps kernels in-process.

use crate::backend::HipBackend;
use crate::bench::{HipKernel, LocalWorkspace};
use kerntune_core::worker::{Executor, WorkerKind};
use kerntune_core::{Backend, BackendError, HostBuffer, Launch, ProblemData, TimeRequest, VerifyRequest};
use std::collections::HashMap;

/// The HIP backend's kind of worker process.
pub static KIND: WorkerKind = WorkerKind::new("HIP", "KERNTUNE_HIP_WORKER", "KERNTUNE_HIP_ISOLATION");

/// Call first thing in `main`. In a HIP worker process this serves requests and exits;
/// otherwise it enables running kernels in workers for this program.
pub fn hook() {
    KIND.hook(HipExecutor::default);
}

/// Whether [`hook`] enabled worker processes.
pub fn isolation_enabled() -> bool {
    KIND.enabled()
}

/// A worker's HIP state: the device, the problem's buffers, the loaded kernels.
#[derive(Default)]
pub struct HipExecutor {
    backend: Option<HipBackend>,
    ws: Option<LocalWorkspace>,
    kernels: HashMap<u64, HipKernel>,
}

fn missing(what: &str) -> BackendError {
    BackendError::other(format!("HIP worker: {what}"))
}

impl HipExecutor {
    fn parts(&mut self, id: u64) -> Result<(&HipKernel, &mut LocalWorkspace), BackendError> {
        let k = self.kernels.get(&id).ok_or_else(|| missing("kernel not loaded"))?;
        let ws = self.ws.as_mut().ok_or_else(|| missing("not initialised"))?;
        Ok((k, ws))
    }
}

impl Executor for HipExecutor {
    fn init(&mut self, ordinal: usize, problem: &ProblemData, flush_bytes: usize) -> Result<(), BackendError> {
        let b = HipBackend::open_in_process(Some(ordinal)).map_err(|e| BackendError::DeviceLost(e.to_string()))?;
        self.ws = Some(LocalWorkspace::new(problem, flush_bytes, &b.target().arch)?);
        self.backend = Some(b);
        Ok(())
    }

    fn load(&mut self, id: u64, name: &str, binary: Vec<u8>) -> Result<(), BackendError> {
        if self.backend.is_none() {
            return Err(missing("not initialised"));
        }
        self.kernels.insert(id, HipKernel::load(binary, name, None)?);
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
