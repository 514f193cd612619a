//! The error a tune reports to its caller: each stage's own error, composed.

use crate::error::BackendError;

/// Errors a tuning job reports.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The spec is invalid.
    #[error(transparent)]
    Spec(#[from] crate::spec::error::SpecError),
    /// The search space is invalid.
    #[error("search space: {0}")]
    Space(#[from] crate::space::error::SpaceError),
    /// The database could not be read or written.
    #[error(transparent)]
    Db(#[from] crate::store::db::DbError),
    /// Every config was pruned or failed.
    #[error("no valid config left: {0}")]
    NoValidConfig(String),
    /// The reference output could not be produced.
    #[error("could not compute the reference output: {0}")]
    Reference(String),
    /// A backend error outside any single config (allocating buffers, device lost for good).
    /// A problem too large for the device says so in its own words (it names the buffers).
    #[error("{}", match .0 { BackendError::ProblemTooLarge(m) => m.clone(), e => format!("backend: {e}") })]
    Backend(#[from] BackendError),
    /// An expression in the job failed to evaluate.
    #[error("{0}")]
    Eval(String),
    /// The tune was stopped ([`crate::TuneOptions::cancel`]): what was measured is in the
    /// database, and running it again resumes.
    #[error("interrupted: {kept} config(s) measured by this run were kept{}; run the same tune again to resume", if *.saved { " in the database" } else { " (no database: they are lost)" })]
    Interrupted {
        /// Configs this run measured (all written to the database, when there is one).
        kept: usize,
        /// Whether they were written to a database.
        saved: bool,
    },
    /// The devices given cannot be tuned together (different models, or a backend whose
    /// kernels cannot move between devices).
    #[error("{0}")]
    Devices(String),
    /// A runtime handle was asked for a kernel with the wrong number of problem sizes.
    #[error("kernel `{kernel}` takes {expected} problem size(s) ({names}), {given} were given")]
    Sizes {
        /// The kernel.
        kernel: String,
        /// How many sizes its template names.
        expected: usize,
        /// Their names.
        names: String,
        /// How many were given.
        given: usize,
    },
}

impl From<crate::plan::error::PlanError> for Error {
    fn from(e: crate::plan::error::PlanError) -> Error {
        match e {
            crate::plan::error::PlanError::Spec(s) => Error::Spec(s),
            crate::plan::error::PlanError::NoValidConfig(m) => Error::NoValidConfig(m),
        }
    }
}
