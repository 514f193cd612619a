//! The HIP side of kerntune's worker processes (see [`kerntune_core::worker`] for why and
//! how): a worker owns the HIP device state and serves the parent's requests with it, through
//! core's [`BackendExecutor`] over an in-process [`HipBackend`] — the same protocol,
//! parent-side slot and fault policy the CUDA backend uses.
//!
//! Host programs call [`hook`] first thing in `main` (or `kerntune::hook()`, which calls every
//! compiled-in backend's hook). `KERNTUNE_HIP_ISOLATION=0` keeps kernels in-process.

use crate::backend::HipBackend;
use crate::bench::HipKernel;
use kerntune_core::worker::{BackendExecutor, WorkerBackend};
use kerntune_core::BackendError;

pub use crate::backend::KIND;

/// Call first thing in `main`. In a HIP worker or compiler process this serves requests and
/// exits; otherwise it enables running kernels in workers, and compiling in compiler processes
/// (see [`kerntune_core::compiler`]), for this program.
pub fn hook() {
    crate::backend::COMPILER.hook();
    KIND.hook(BackendExecutor::<HipBackend>::default);
}

/// Whether [`hook`] enabled worker processes.
pub fn isolation_enabled() -> bool {
    KIND.enabled()
}

impl WorkerBackend for HipBackend {
    fn open_for_worker(ordinal: usize) -> Result<HipBackend, BackendError> {
        HipBackend::open_in_process(Some(ordinal)).map_err(|e| BackendError::DeviceLost(e.to_string()))
    }

    fn load_binary(&self, name: &str, binary: Vec<u8>) -> Result<HipKernel, BackendError> {
        HipKernel::load(binary, name, false)
    }
}
