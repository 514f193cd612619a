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
use crate::compile::{Image, WgpuKernel};
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
        let image = Image::decode(&binary).map_err(|e| BackendError::other(format!("worker: a kernel's image did not read: {e}")))?;
        let cache = (!image.pipeline_cache.is_empty() && self.pipeline_caches()).then(|| {
            // SAFETY: the data is what `PipelineCache::get_data` returned in the tuner, on a
            // device of this model (a tune's devices are of one target) and this machine's
            // driver; wgpu checks its header against this adapter and, with `fallback`, makes
            // an empty cache when it does not match.
            unsafe {
                self.device().create_pipeline_cache(&wgpu::PipelineCacheDescriptor {
                    label: Some("kerntune"),
                    data: Some(image.pipeline_cache),
                    fallback: true,
                })
            }
        });
        let pipeline = crate::compile::build(self.device(), &self.layout(&image.recipe.access), &image.recipe, cache.as_ref())?;
        Ok(WgpuKernel::new(pipeline, Vec::new(), crate::compile::lengths_asked(&image.recipe.code, image.recipe.access.len())))
    }
}
