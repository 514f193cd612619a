//! # Stage 2: the search space
//!
//! Configs ([`Config`]: one value per parameter plus the standard [`Knobs`]) and the space
//! they come from ([`SearchSpace`]: parameters, restrictions, the problem's constants), with
//! lazy, restriction-pruned enumeration ([`enumerate`]).
//!
//! **May import:** `spec` and the vocabulary.

pub mod config;
pub mod enumerate;
pub mod error;
pub mod restrict;

pub use config::{Config, Knobs};
pub use enumerate::CoordIter;
pub use error::SpaceError;
pub use restrict::SearchSpace;
