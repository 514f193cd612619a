//! The wgpu side of kerntune's worker processes (see [`kerntune_core::worker`] for why and
//! how): a worker opens the adapter itself and runs the kernels, so that a shader that never
//! ends costs that process, not the tune. wgpu cannot stop a dispatch once submitted, and a
//! hung one keeps the device busy for every later launch; a process can be killed.
//!
//! A pipeline cannot travel between processes, so the parent ships each config's recipe (the
//! source with its constants, the pipeline constants, the entry point and the bindings) and the
//! worker builds the same pipeline on its own device. The parent builds it too, as it always
//! did, so that compile errors are found in parallel on the compile threads and read the same.
//!
//! Host programs call [`hook`] first thing in `main` (or `kerntune::hook()`, which calls every
//! compiled-in backend's hook). `KERNTUNE_WGPU_ISOLATION=0` keeps kernels in-process.

use crate::backend::WgpuBackend;
use crate::compile::{Recipe, WgpuKernel};
use kerntune_core::worker::{BackendExecutor, KernelImage, WorkerBackend};
use kerntune_core::BackendError;

pub use crate::backend::KIND;

/// Call first thing in `main`. In a wgpu worker process this serves requests and exits;
/// otherwise it enables running kernels in workers for this program.
pub fn hook() {
    KIND.hook(BackendExecutor::<WgpuBackend>::default);
}

/// Whether [`hook`] enabled worker processes.
pub fn isolation_enabled() -> bool {
    KIND.enabled()
}

impl WgpuKernel {
    pub(crate) fn image(&self) -> KernelImage<'_> {
        KernelImage { id: self.id, name: "", binary: &self.image }
    }
}

impl WorkerBackend for WgpuBackend {
    fn open_for_worker(ordinal: usize) -> Result<WgpuBackend, BackendError> {
        WgpuBackend::open_in_process(Some(ordinal)).map_err(|e| BackendError::DeviceLost(e.to_string()))
    }

    fn load_binary(&self, _name: &str, binary: Vec<u8>) -> Result<WgpuKernel, BackendError> {
        let recipe: Recipe = serde_json::from_slice(&binary).map_err(|e| BackendError::other(format!("worker: a kernel's recipe did not read: {e}")))?;
        let pipeline = crate::compile::build(self.device(), &self.layout(&recipe.access), &recipe)?;
        Ok(WgpuKernel::new(pipeline, Vec::new()))
    }
}
