//! # Stage 3: the plan
//!
//! Everything decided before a kernel compiles: the prepared job ([`Prepared`]: launch
//! geometry, resource estimates, metrics and defines per config), the per-vendor config
//! generators ([`generate`]) and their expansion into an explicit candidate list ([`expand`]),
//! pruning before and after compiling with reasons ([`prune`]), and the roofline model that
//! orders candidates ([`model`]).
//!
//! **May import:** `spec`, `space` and the vocabulary.

pub mod error;
pub mod expand;
pub mod generate;
pub mod model;
pub mod prepare;
pub mod prune;
pub mod roofline;
pub mod summary;

pub use error::PlanError;
pub use expand::Expanded;
pub use prepare::{Launch, Prepared};
pub use prune::{Estimate, PruneReason, ResourceUsage};
