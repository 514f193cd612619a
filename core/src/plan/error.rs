//! Errors of the plan stage.

use crate::spec::error::SpecError;

/// Why a job could not be planned for a device.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// A field of the job is invalid for this device (a generator shape or role expression).
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// The generator's configs all fail the job's role mapping or restrictions.
    #[error("no valid config left: {0}")]
    NoValidConfig(String),
}
