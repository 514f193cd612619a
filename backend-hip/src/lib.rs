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
//! - **Faults never end a tune** when the host program calls [`worker::hook`] first thing in
//!   `main` (the `kerntune` CLI does): kernels then run in a worker process through the same
//!   protocol and fault policy as CUDA ([`kerntune_core::worker`]). Without the hook they run
//!   in-process, and a fault that poisons the process ends the tune (measurements so far kept).
//! - **Verification runs on the device**: the same comparison kernel as CUDA
//!   ([`kerntune_core::measure::verify::DEVICE_COMPARE_SRC`]), compiled with hipRTC, against a
//!   reference uploaded once per tune.
//!
//! Files mirror the CUDA backend: `backend.rs`, `limits.rs`, `compile.rs` (+ `hiprtc.rs`),
//! `bench.rs`, `error.rs`, `worker.rs`.

mod backend;
mod bench;
mod compile;
mod device;
mod error;
pub mod hiprtc;
pub mod launch;
mod limits;
pub mod worker;

pub use backend::{HipBackend, HipWorkspace};
pub use bench::{HipKernel, LocalWorkspace};
pub use compile::CompileOptions;
pub use device::{devices, DeviceSummary};
pub use error::{is_sticky, map as map_error};
/// The `hip-sys` this crate was built with, for the application's allocations and streams.
pub use hip_sys;
pub use limits::{arch, limits_from_attributes, Attributes};
