//! Errors of the space stage.

use crate::spec::expr::ExprError;

/// A search space definition error.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum SpaceError {
    /// A restriction does not compile.
    #[error("restriction {index} is invalid: {error}")]
    Restriction {
        /// Position of the restriction in the list (0-based).
        index: usize,
        /// The expression error (in this error's text, so not its `source()`).
        error: ExprError,
    },
    /// A parameter has no values.
    #[error("parameter `{0}` has no values; give it at least one")]
    EmptyParam(String),
    /// Two parameters share a name.
    #[error("parameter `{0}` is declared twice")]
    DuplicateParam(String),
    /// A restriction could not be evaluated for a config (a division by zero, an overflow, a
    /// comparison of incompatible values): an error, never "not valid".
    #[error("restriction {index} (`{text}`) cannot be evaluated for {config}: {message}; make it well-defined for every value (e.g. guard a division: `B > 0 and A % B == 0`)")]
    RestrictionFailed {
        /// Position of the restriction in the list (0-based).
        index: usize,
        /// Its text (quoted up to 200 characters).
        text: String,
        /// The config (the parameters bound when it was checked).
        config: String,
        /// What went wrong.
        message: String,
    },
}
