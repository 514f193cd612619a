//! # Stage 4b: measuring honestly
//!
//! The timing loop CUDA and HIP share ([`timing`]: L2 flush, device events, deadline, input
//! rotation; [`memory`]: which buffers get device copies), the statistics of one config ([`stats`]: warm-up until stable, adaptive
//! repetitions, racing), output verification on the host and on the device ([`verify`]), and
//! the noise-aware, deterministic choice of a winner ([`select`]). Backends are driven through
//! the small traits defined here ([`timing::StreamOps`], [`verify::DeviceCompare`]), so all of
//! it is tested on the host.
//!
//! **May import:** `spec`, `space`, `plan` and the vocabulary; never `search` (its sibling).

pub mod awake;
pub mod memory;
pub mod select;
pub mod stats;
pub mod timing;
pub mod verify;

pub use stats::{measure, Stats};
pub use timing::{TimeRequest, TimingMethod};
pub use verify::VerifyRequest;
