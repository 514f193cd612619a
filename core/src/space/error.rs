//! Errors of the space stage.

use crate::spec::expr::ExprError;

/// A search space definition error.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum SpaceError {
    /// A restriction does not compile.
    #[error("restriction {index} is invalid: {source}")]
    Restriction {
        /// Position of the restriction in the list (0-based).
        index: usize,
        /// The expression error.
        source: ExprError,
    },
    /// A parameter has no values.
    #[error("parameter `{0}` has no values; give it at least one")]
    EmptyParam(String),
    /// Two parameters share a name.
    #[error("parameter `{0}` is declared twice")]
    DuplicateParam(String),
}
