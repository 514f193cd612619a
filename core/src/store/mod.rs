//! # Stage 5: what persists
//!
//! The winner database ([`db`]: every measurement with its reason, the winner per kernel ×
//! target × toolchain × problem key, atomic locked writes, merge) and the compile cache of
//! binaries the backends share ([`cache`]).
//!
//! **May import:** `spec`, `space`, `plan`, `measure` and the vocabulary.

pub mod cache;
pub mod db;
pub mod export;

pub use db::{Database, DbError};
