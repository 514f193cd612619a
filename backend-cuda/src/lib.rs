//! # kerntune-cuda
//!
//! kerntune's NVIDIA backend. CUDA C++ kernels are compiled at run time with NVRTC, to a CUBIN
//! for the device's architecture. The compiles run in parallel, and a persistent cache means a
//! second run compiles nothing. Launches are timed with CUDA events on a stream, with the L2
//! flushed before each timed launch.
//!
//! Contracts:
//! - **Loads at run time** (cudarc's `dynamic-loading`): the same binary builds and starts on any
//!   machine. "CUDA driver library not found", "no CUDA device" and "NVRTC library not found" are
//!   distinct [`kerntune_core::OpenError`]s.
//! - Tunable parameters arrive as `-DNAME=VALUE` (the Kernel Tuner convention). Kernels must be
//!   `extern "C" __global__`. Arguments are passed in the spec's order: buffers as device
//!   pointers, scalars by value.
//! - **Faults never end a tune.** A sticky error (illegal address, misaligned access, ...) poisons
//!   the whole process on current drivers (measured on an H100 with driver 580: after
//!   `CUDA_ERROR_ILLEGAL_ADDRESS` even a new context cannot be created), and a kernel that never
//!   ends cannot be stopped from the host. So kernels run in a worker process ([`worker`], on
//!   core's shared [`kerntune_core::worker`] machinery): the parent compiles, loads modules only
//!   to read their resource report, and drives the worker over a pipe; a faulted or hung worker
//!   is killed and a fresh one started. Host programs opt in by calling [`worker::hook`] (or
//!   `kerntune::hook()`) first thing in `main` (the `kerntune` CLI does);
//!   without it kernels run in-process and a fault is recovered with a fresh context where the
//!   driver allows.
//! - The compiler's resource report (registers, static shared memory, spills, max threads per
//!   block) and the occupancy API feed post-compile pruning and the database.
//!
//! Layering follows cudarc's: `cudarc::driver::{sys, result}` and `cudarc::nvrtc::sys` below;
//! this crate's small RAII types (`Shared` context, `CudaKernel`, `CudaWorkspace`) above. Every
//! `unsafe` block says why it is sound.

mod backend;
mod bench;
mod compile;
pub mod cubin;
mod device;
mod error;
pub mod launch;
mod limits;
pub mod worker;

pub use backend::{CudaBackend, CudaWorkspace};
pub use bench::{CudaKernel, LocalWorkspace};
pub use compile::{CompileCache, CompileOptions};
/// The `cudarc` this crate was built with, for the application's contexts, streams and buffers.
pub use cudarc;
pub use device::{devices, DeviceSummary};
pub use error::{is_sticky, launch_error};
pub use limits::{arch_name, limits_from_attributes, Attr, ATTRS};
