//! # Simulation: strategies scored offline
//!
//! Recorded search spaces (Kernel Tuner caches, T4 results) as oracles ([`recorded`]) and the
//! simulation mode that scores a strategy against them by evaluations ([`simulate`]), by
//! simulated seconds of a tune with a time budget ([`timed`]), and the compile pipeline's wall
//! time ([`schedule`]).
//!
//! **May import:** `spec`, `space`, `search`, `measure`, `store` and the vocabulary; never
//! `run`.

/// Recorded spaces live in the store (priors read them too); re-exported here, where
/// simulation uses them.
pub use crate::store::recorded;
pub mod schedule;
pub mod simulate;
pub mod timed;
