//! # Simulation: strategies scored offline
//!
//! Recorded search spaces (Kernel Tuner caches, T4 results) as oracles ([`recorded`]) and the
//! simulation mode that scores a strategy against them ([`simulate`]).
//!
//! **May import:** `spec`, `space`, `search`, `measure`, `store` and the vocabulary; never
//! `run`.

/// Recorded spaces live in the store (priors read them too); re-exported here, where
/// simulation uses them.
pub use crate::store::recorded;
pub mod schedule;
pub mod simulate;
