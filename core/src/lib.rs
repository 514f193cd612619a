//! # kerntune-core
//!
//! The tuner every kerntune backend shares, with no GPU or FFI dependency so that every line of
//! it is tested on a CPU.
//!
//! The folders follow the data through a tune; each stage may import only the stages before
//! it (a test, `tests/layers.rs`, enforces this):
//!
//! | stage | owns |
//! | --- | --- |
//! | vocabulary (`error`, `hash`, `target`, `limits`) | [`Target`], [`Limits`], backend errors |
//! | [`spec`] | the job description: TOML and T1 loaders, expressions, problem data, keys, settings |
//! | [`space`] | [`Config`]s and the [`SearchSpace`] with lazy, restriction-pruned enumeration |
//! | [`plan`] | the prepared job (launch geometry, estimates), vendor generators, pruning, the roofline model |
//! | [`search`] · [`measure`] | strategies · timing loop, statistics, verification, winner selection |
//! | [`backend`] | the contract a vendor backend implements |
//! | [`store`] | the winner database and the compile cache |
//! | [`run`] · [`sim`] | the tuner pipeline, worker processes, the runtime handle · simulation mode |
//!
//! The pipeline lives in [`Tuner::tune`]: database lookup, candidates (enumeration, pruning with
//! reasons, optional roofline ordering), a search loop that compiles in parallel, verifies
//! against a reference with poisoned outputs and benchmarks adaptively with racing, a
//! noise-aware deterministic winner, and persistence. [`Autotuned`] is the runtime handle:
//! tune once, cache, launch. [`fake::FakeBackend`] is a complete backend over host memory that
//! fails on purpose, which the tests use to prove all of this.
//!
//! Contracts: core never names a vendor type or touches hardware; a cache key holds everything
//! a winner's validity depends on (kernel source and options hash, target fingerprint,
//! toolchain, problem key, search-space hash, verification hash); a failing config never ends a
//! tune.

#![warn(missing_docs)]

pub mod error;
pub mod hash;
pub mod hint;
pub mod limits;
pub mod target;
pub mod testing;

pub mod spec;

pub mod space;

pub mod plan;

pub mod measure;
pub mod search;

pub mod backend;
pub mod compiler;

#[cfg(feature = "nvml")]
pub mod sharing;
pub mod store;
pub mod worker;

pub mod analysis;
pub mod run;
pub mod sim;

pub mod app;

pub mod fake;

pub use app::{Autotuned, EmbeddedWinner, LaunchError, Origin, Policy, Tuned};
pub use backend::{Backend, CompileInputs, CompileRequest, CompileWatch, Compiled, Memcheck, Printed};
pub use error::{BackendError, FailureKind, OpenError};
/// The `half` crate whose `f16` and `bf16` are the launch APIs' half-precision element and
/// scalar types (the same version as kerntune's, so that its types match).
pub use half;
pub use limits::{LimitViolation, Limits, PRESETS};
pub use measure::{Stats, TimeRequest, TimingMethod, VerifyRequest};
pub use plan::{Launch, Prepared, PruneReason, ResourceUsage};
pub use run::{ConfigResult, Error, Event, PriorSetting, ResultOutcome, TuneOptions, TuneReport, Tuner};
pub use search::Strategy;
pub use space::{Config, Knobs, SearchSpace};
pub use spec::{
    Access, ArgData, ArgKind, ArgSpec, BenchOptions, Bucket, Budget, Compat, DType, Header, HostBuffer, Init, KernelSource, L2Flush, Memory, Param,
    ProblemData, ProblemKey, PruneOptions, Reference, Spec, SpecError, TuneJob, Value, Verification, VerifySample,
};
pub use store::{Database, DbError};
pub use target::{Target, Vendor};
