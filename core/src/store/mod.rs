//! # Stage 5: what persists
//!
//! The winner database ([`db`]: every measurement with its reason, the winner per kernel ×
//! target × toolchain × problem key, atomic locked writes, merge) and the compile cache of
//! binaries the backends share ([`cache`]), and other tools' result files read as recorded
//! spaces ([`recorded`]: Kernel Tuner caches, T4 files), which simulation scores strategies on
//! and tunes learn from as priors, and which the report draws as entries ([`foreign`]).
//!
//! **May import:** `spec`, `space`, `plan`, `measure`, `search` and the vocabulary.

pub mod cache;
pub mod db;
pub mod export;
pub mod foreign;
pub mod recorded;

pub use db::{Database, DbError};
