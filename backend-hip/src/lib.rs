//! # kerntune-hip
//!
//! kerntune's AMD backend. HIP kernels are compiled at run time with hipRTC for the device's
//! `--offload-arch`, in parallel, with a persistent compile cache. Launches are timed with HIP
//! events, with the L2 flushed between timed launches; the compiler's resource report
//! (registers, LDS, scratch) and the occupancy API feed pruning.
//!
//! Contracts and layers:
//! - The runtime API comes from `hip-sys`, which links `libamdhip64` at build time. Debian's
//!   `libamdhip64-dev` (ROCm 5.2) provides it with `HIP_PATH=/usr`; elsewhere set `HIP_PATH`
//!   or `ROCM_PATH` to a ROCm install.
//! - hipRTC has no bindings in hip-sys, so [`hiprtc`] is a small FFI layer of its own (sys →
//!   result → safe). It loads `libhiprtc` (ROCm 6) or `libamdhip64` (ROCm 5) at run time.
//! - "no AMD GPU found" and "HIP runtime compiler not found" are distinct errors.
//! - Tunable parameters are `-D` defines, as for CUDA; kernels are `extern "C" __global__`.
//!
//! What is not here yet: running kernels in a worker process, as the CUDA backend does, so that
//! a fault cannot end a tune. A HIP fault currently ends the tune; the measurements so far are
//! kept, and a re-run resumes after the faulting config. Verification compares on the host.
//!
//! Files mirror the CUDA backend: `backend.rs`, `limits.rs`, `compile.rs` (+ `hiprtc.rs`),
//! `bench.rs`, `error.rs`.

mod backend;
mod bench;
mod compile;
mod error;
pub mod hiprtc;
mod limits;

pub use backend::{devices, DeviceSummary, HipBackend};
pub use bench::{HipKernel, HipWorkspace};
pub use compile::CompileOptions;
pub use error::{is_sticky, map as map_error};
pub use limits::{arch, limits_from_attributes, Attributes};
