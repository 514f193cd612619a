//! # Stage 4a: search strategies
//!
//! Which configs to evaluate, in which order, within a budget. The tuner owns the loop; a
//! [`Strategy`] answers `ask` and learns from `tell`. Strategies see candidates as coordinates
//! into the parameters' value lists. Each is deterministic for a seed, only ever proposes valid
//! candidates, never proposes one twice, and treats failed configs as infinitely slow so that
//! failures steer the search away. [`Neighbourhood`] is the shared index for moving one step
//! along a parameter.
//!
//! **May import:** `spec`, `space`, `plan` and the vocabulary; never `measure` (its sibling).

mod anneal;
pub mod features;
mod forest;
mod genetic;
mod hybrid;
pub(crate) mod local;
mod model_guided;
mod neighbourhood;
pub mod pipeline;
pub mod prior;
pub mod proposer;
mod ridge;
pub mod strategy;
pub mod tail;
mod transfer;

pub use anneal::Annealing;
pub use forest::Forest;
pub use genetic::Genetic;
pub use hybrid::Hybrid;
pub use local::LocalSearch;
pub use model_guided::ModelGuided;
pub use neighbourhood::Neighbourhood;
pub(crate) use neighbourhood::{cost, random_fresh};
pub use prior::{Prior, PriorBuilder, Source};
pub use ridge::Ridge;
pub use strategy::{by_name, for_budget, Candidates, Exhaustive, Outcome, RandomSampling, Strategy};
pub use transfer::{PlainTransfer, Transfer};
