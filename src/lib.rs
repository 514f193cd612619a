//! # kerntune
//!
//! The facade: re-exports [`kerntune_core`] and picks backends by cargo feature. `wgpu` is on by
//! default, so a plain build tunes on any Vulkan/Metal/DX12 adapter or on software Vulkan.
//!
//! [`AnyBackend`] holds whichever backend was opened; because each backend has its own kernel
//! and workspace types, code that tunes is generic over [`Backend`] and [`with_backend!`]
//! dispatches to it with a hand-written `match` (enum_dispatch cannot span crates).

pub use kerntune_core as core;
pub use kerntune_core::spec::LoadOptions;
pub use kerntune_core::*;

#[cfg(feature = "wgpu")]
pub use kerntune_wgpu as wgpu_backend;

#[cfg(feature = "cuda")]
pub use kerntune_cuda as cuda_backend;

#[cfg(feature = "hip")]
pub use kerntune_hip as hip_backend;

/// Call first thing in `main`. A worker process started by the CUDA or HIP backend serves its
/// tuner here and exits; in any other process this lets those backends run kernels in worker
/// processes, so that a faulting or hung kernel cannot end a tune (see
/// [`kerntune_core::worker`]). Without it kernels run in the tuning process. A no-op for
/// wgpu-only builds.
pub fn hook() {
    #[cfg(feature = "cuda")]
    kerntune_cuda::worker::hook();
    #[cfg(feature = "hip")]
    kerntune_hip::worker::hook();
}

/// Which backend to open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendChoice {
    /// CUDA, then HIP, then a hardware wgpu adapter, then software Vulkan.
    Auto,
    /// NVIDIA through CUDA.
    Cuda,
    /// AMD through HIP.
    Hip,
    /// Any wgpu adapter.
    Wgpu,
}

impl std::str::FromStr for BackendChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(BackendChoice::Auto),
            "cuda" => Ok(BackendChoice::Cuda),
            "hip" => Ok(BackendChoice::Hip),
            "wgpu" => Ok(BackendChoice::Wgpu),
            other => Err(format!("unknown backend `{other}`; use auto, cuda, hip or wgpu")),
        }
    }
}

/// An opened backend of any compiled-in kind.
// One per process, so the variants' size difference costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
pub enum AnyBackend {
    /// A wgpu adapter.
    #[cfg(feature = "wgpu")]
    Wgpu(kerntune_wgpu::WgpuBackend),
    /// An NVIDIA GPU through CUDA.
    #[cfg(feature = "cuda")]
    Cuda(kerntune_cuda::CudaBackend),
    /// An AMD GPU through HIP.
    #[cfg(feature = "hip")]
    Hip(kerntune_hip::HipBackend),
    /// A build without any backend: no value of this variant exists (`open` reports "not
    /// compiled in" for every choice), it only keeps the dispatch `match` well-formed.
    #[cfg(not(any(feature = "wgpu", feature = "cuda", feature = "hip")))]
    Nothing(std::convert::Infallible),
}

/// Runs `$body` with `$b` bound to the concrete backend inside an [`AnyBackend`].
#[macro_export]
macro_rules! with_backend {
    ($any:expr, $b:ident => $body:expr) => {
        match $any {
            #[cfg(feature = "wgpu")]
            $crate::AnyBackend::Wgpu($b) => $body,
            #[cfg(feature = "cuda")]
            $crate::AnyBackend::Cuda($b) => $body,
            #[cfg(feature = "hip")]
            $crate::AnyBackend::Hip($b) => $body,
            #[cfg(not(any(feature = "wgpu", feature = "cuda", feature = "hip")))]
            $crate::AnyBackend::Nothing(never) => $crate::unreachable_backend(never),
        }
    };
}

/// The arm of [`with_backend!`] for a build without backends, where no `AnyBackend` exists.
#[doc(hidden)]
pub fn unreachable_backend<T>(never: impl std::borrow::Borrow<std::convert::Infallible>) -> T {
    match *never.borrow() {}
}

impl AnyBackend {
    /// The device.
    pub fn target(&self) -> &Target {
        with_backend!(self, b => b.target())
    }
    /// Its limits.
    pub fn limits(&self) -> &Limits {
        with_backend!(self, b => b.limits())
    }
    /// Source language.
    pub fn language(&self) -> &'static str {
        with_backend!(self, b => b.language())
    }
}

fn not_compiled(backend: &str) -> OpenError {
    OpenError::NotCompiledIn { backend: backend.into() }
}

/// Opens a backend. `device` selects among several devices of that backend (see
/// `kerntune devices`). With `Auto`, a backend that is not compiled in, has no driver library or
/// no device is skipped; the last reason is returned when nothing opens.
pub fn open(choice: BackendChoice, device: Option<usize>) -> Result<AnyBackend, OpenError> {
    match choice {
        BackendChoice::Cuda => open_cuda(device),
        BackendChoice::Hip => open_hip(device),
        BackendChoice::Wgpu => open_wgpu(device),
        BackendChoice::Auto => {
            let mut last = None;
            for f in [open_cuda, open_hip, open_wgpu] {
                match f(device) {
                    Ok(b) => return Ok(b),
                    Err(e) => {
                        tracing::debug!("auto: {e}");
                        last = Some(e);
                    }
                }
            }
            Err(last.unwrap_or_else(|| not_compiled("wgpu")))
        }
    }
}

#[cfg(feature = "wgpu")]
fn open_wgpu(device: Option<usize>) -> Result<AnyBackend, OpenError> {
    kerntune_wgpu::WgpuBackend::open(device).map(AnyBackend::Wgpu)
}

#[cfg(not(feature = "wgpu"))]
fn open_wgpu(_device: Option<usize>) -> Result<AnyBackend, OpenError> {
    Err(not_compiled("wgpu"))
}

#[cfg(feature = "hip")]
fn open_hip(device: Option<usize>) -> Result<AnyBackend, OpenError> {
    kerntune_hip::HipBackend::open(device).map(AnyBackend::Hip)
}

#[cfg(not(feature = "hip"))]
fn open_hip(_device: Option<usize>) -> Result<AnyBackend, OpenError> {
    Err(not_compiled("hip"))
}

#[cfg(feature = "cuda")]
fn open_cuda(device: Option<usize>) -> Result<AnyBackend, OpenError> {
    kerntune_cuda::CudaBackend::open(device).map(AnyBackend::Cuda)
}

#[cfg(not(feature = "cuda"))]
fn open_cuda(_device: Option<usize>) -> Result<AnyBackend, OpenError> {
    Err(not_compiled("cuda"))
}
