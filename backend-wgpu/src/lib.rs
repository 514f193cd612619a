//! # kerntune-wgpu
//!
//! kerntune's portable backend: WGSL compute kernels on any wgpu adapter — Vulkan, Metal, DX12,
//! and software Vulkan (Mesa's llvmpipe) on machines without a GPU.
//!
//! Contracts:
//! - Tunable parameters declared in the shader as `override NAME: T;` are set as pipeline
//!   constants (the only way WGSL lets a workgroup size vary without recompiling the text);
//!   every other parameter, problem size passed as a define, and by-value scalar argument is
//!   injected as an untyped `const NAME = VALUE;` before the source, so it takes the type its use
//!   needs (an abstract int works as `i32` and `u32`).
//! - Buffer arguments are bound in argument order at `@group(0) @binding(i)`; read-only buffers
//!   must be declared `var<storage, read>`, the others `var<storage, read_write>`.
//! - Each config becomes its own compute pipeline, built on the compile workers in parallel.
//! - Launches are timed with GPU timestamp queries when the adapter supports them, otherwise with
//!   the host clock around submit and wait; reports say which.
//! - wgpu reports no L2 size, so there is no L2 flush between timed launches on this backend.
//! - Timing waits for a GPU that lowered its clock while idle to bring it back (`clock.rs`): a
//!   tuner cannot pin clocks, and Vulkan drivers manage them as for graphics.
//!
//! Files, as in every backend crate (imports point down the list): `backend.rs` opens an
//! adapter and implements [`kerntune_core::Backend`]; `compile.rs` turns a config into a
//! pipeline; `bench.rs` owns buffers and timing; `memory.rs` reads the adapter's free memory
//! (Vulkan's budget) and catches allocations that find none; `clock.rs` keeps timing at a busy GPU's clock; `device.rs` enumerates adapters; `limits.rs`
//! is the one conversion from wgpu limits to [`kerntune_core::Limits`]; `error.rs` maps wgpu's
//! errors; `worker.rs` runs kernels in a worker process (where the host program called
//! [`worker::hook`]), so that a shader that never ends is killed with its process instead of
//! keeping the adapter busy for the rest of the tune.

mod backend;
mod bench;
mod clock;
mod compile;
mod device;
mod error;
mod guard;
pub mod launch;
mod limits;
mod memory;
pub mod worker;

pub use backend::{WgpuBackend, WgpuWorkspace};
pub use compile::{inject_constants, WgpuKernel};
pub use device::{adapters, best_adapter, launch_never_ended, AdapterSummary};
pub use limits::{limits_from_wgpu, target_from_info};
/// The `wgpu` this crate was built with, for the application's devices, queues and buffers.
pub use wgpu;
