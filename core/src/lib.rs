//! # kerntune-core
//!
//! The tuner every kerntune backend shares, with no GPU or FFI dependency so that every line of
//! it is tested on a CPU.
//!
//! The vocabulary: a [`Target`] is a device with a stable fingerprint that namespaces every
//! cache; [`Limits`] are its capabilities as plain data; a [`Config`] is one value per tunable
//! parameter plus the standard [`Knobs`]; a [`SearchSpace`] is parameters with value lists and
//! restrictions (Python expressions, see [`expr`]); a [`ProblemKey`] decides when a winner is
//! reused. A [`Backend`] turns one vendor API into this vocabulary: it compiles a config,
//! reports resource usage, and times launches.
//!
//! The pipeline lives in [`Tuner::tune`]: database lookup, pruning with reasons, optional
//! roofline ordering, a [`Strategy`], parallel compilation, verification against a reference
//! with poisoned outputs, adaptive benchmarking with racing, a noise-aware deterministic winner
//! ([`select`]), and the [`Database`]. [`Autotuned`] is the runtime handle: tune once, cache,
//! launch. [`fake::FakeBackend`] is a complete backend over host memory that fails on purpose,
//! which the tests use to prove all of this.
//!
//! Contracts: core never names a vendor type or touches hardware; a cache key holds everything
//! a winner's validity depends on (kernel source and options hash, target fingerprint,
//! toolchain, problem key, search-space hash, verification hash); a failing config never ends a
//! tune.

#![warn(missing_docs)]

pub mod backend;
pub mod cache;
pub mod config;
pub mod db;
pub mod error;
pub mod expr;
pub mod fake;
pub mod generate;
pub mod handle;
pub mod hash;
pub mod job;
pub mod key;
pub mod launch;
pub mod limits;
pub mod measure;
pub mod model;
pub mod problem;
pub mod prune;
pub mod recorded;
pub mod reference;
pub mod select;
pub mod simulate;
pub mod space;
pub mod spec;
pub mod strategies;
pub mod strategy;
pub mod t1;
pub mod target;
pub mod testing;
pub mod tuner;
pub mod value;
pub mod verify;
pub mod worker;

pub use backend::{Backend, CompileRequest, Compiled, KernelSource, L2Flush, Launch, ResourceUsage, TimeRequest, TimingMethod, VerifyRequest};
pub use config::{Config, Knobs};
pub use db::{Database, DbError};
pub use error::{BackendError, Error, FailureKind, OpenError};
pub use handle::{Autotuned, Tuned};
pub use job::{ArgKind, ArgSpec, Prepared, Reference, TuneJob, Verification};
pub use key::{Bucket, ProblemKey};
pub use limits::{LimitViolation, Limits, PRESETS};
pub use measure::{BenchOptions, Stats};
pub use problem::{Access, ArgData, DType, HostBuffer, Init, ProblemData};
pub use prune::{PruneOptions, PruneReason};
pub use space::{Param, SearchSpace};
pub use spec::{Spec, SpecError};
pub use strategy::{Budget, Strategy};
pub use target::{Target, Vendor};
pub use tuner::{ConfigResult, Event, ResultOutcome, TuneOptions, TuneReport, Tuner};
pub use value::Value;
