//! The CUDA side of kerntune's worker processes (see [`kerntune_core::worker`] for why and
//! how): a worker owns a CUDA context and serves the parent's requests with it, through core's
//! [`BackendExecutor`] over an in-process [`CudaBackend`].
//!
//! Host programs call [`hook`] first thing in `main` (or `kerntune::hook()`, which calls every
//! compiled-in backend's hook). `KERNTUNE_CUDA_ISOLATION=0` keeps kernels in-process.

use crate::backend::CudaBackend;
use crate::bench::CudaKernel;
use kerntune_core::worker::{BackendExecutor, KernelImage, WorkerBackend};
use kerntune_core::BackendError;

pub use crate::backend::KIND;

/// Call first thing in `main`. In a CUDA worker or compiler process this serves requests and
/// exits; otherwise it enables running kernels in workers, and compiling in compiler processes
/// (see [`kerntune_core::compiler`]), for this program.
pub fn hook() {
    crate::backend::COMPILER.hook();
    KIND.hook(BackendExecutor::<CudaBackend>::default);
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

impl WorkerBackend for CudaBackend {
    fn open_for_worker(ordinal: usize) -> Result<CudaBackend, BackendError> {
        let b = CudaBackend::open_in_process(Some(ordinal)).map_err(|e| BackendError::DeviceLost(e.to_string()))?;
        // The context now, while the parent writes the problem (it is otherwise made at first use).
        b.shared().bind()?;
        Ok(b)
    }

    fn load_binary(&self, name: &str, binary: Vec<u8>) -> Result<CudaKernel, BackendError> {
        let cname = std::ffi::CString::new(name).map_err(|_| BackendError::other("kernel name contains a NUL byte"))?;
        let k = CudaKernel::new(self.shared().clone(), cname, binary);
        // Load now, so that a bad binary fails at load and not at the first launch.
        k.function(self.shared().bind()?.gen)?;
        Ok(k)
    }
}
