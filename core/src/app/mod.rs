//! # Stage 7: programs that use tuned kernels
//!
//! What an application holds once kernels are tuned: the runtime handle ([`handle`]: tune once
//! or find the stored or embedded winner, compile it, swap it in lock-free) and the typed
//! argument tuples its launches are checked against ([`args`]). The backend crates' `launch`
//! modules build their application-side APIs on these.
//!
//! **May import:** every stage below, `run` included (the handle tunes through
//! [`crate::Tuner`]); nothing imports it but the fake backend's application examples.

pub mod args;
pub mod handle;

pub use args::{Arg, ArgType, Args, LaunchError, Lens, Signature, MAX_ARGS};
pub use handle::{Autotuned, EmbeddedWinner, Origin, Policy, Slot, Tuned};
