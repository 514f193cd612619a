//! # Stage 1: the job description
//!
//! What to tune, as plain data: the kernel source ([`KernelSource`]), its tunable parameters
//! and restrictions, problem sizes and arguments with their host data ([`problem`]), how to
//! verify outputs, and the settings of the later stages ([`settings`]). A [`TuneJob`] is built
//! from a TOML spec file ([`Spec`]), a T1 problem description ([`t1`]) or code; every loader
//! names the file and field of anything it rejects ([`SpecError`]).
//!
//! The expression language lives here too: [`expr`] compiles Python-syntax expressions over
//! named slots (restrictions, launch geometry, formulas) and [`pyvalues`] evaluates the
//! list-valued constant expressions T1 files write (`[2**i for i in range(6)]`), both within
//! limits that no input can exceed.
//!
//! **May import:** the vocabulary (`error`, `hash`, `limits`, `target`) only. Every later
//! stage builds on this one.

pub mod error;
pub mod expr;
pub mod file;
pub mod geometry;
pub mod job;
pub mod key;
pub mod problem;
pub mod pyvalues;
pub mod reference;
pub mod settings;
pub mod source;
pub mod t1;
pub mod value;

pub use error::SpecError;
pub use file::{LoadOptions, Spec};
pub use job::{ArgKind, ArgSpec, Class, Compat, GenerateSpec, Param, Reference, Resources, Tolerance, TuneJob, Verification, VerifySample};
pub use key::{Bucket, ProblemKey};
pub use problem::{Access, ArgData, DType, HostBuffer, Init, Memory, ProblemData};
pub use settings::{BenchOptions, Budget, L2Flush, PruneOptions};
pub use source::{Header, KernelSource};
pub use value::Value;
