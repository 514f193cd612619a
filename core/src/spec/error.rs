//! Errors of the spec stage: a problem in a spec, named by file and field.

/// A problem in a spec: file, field, message.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}: {field}: {message}")]
pub struct SpecError {
    /// The spec file (or `<job>` for jobs built in code).
    pub file: String,
    /// The field, e.g. `restrictions[2]` or `kernel.source.wgsl`.
    pub field: String,
    /// What is wrong and what to do.
    pub message: String,
}

/// The most characters of offending input an error message quotes.
pub const QUOTE_LIMIT: usize = 200;

/// `text` as an error message quotes it: whole when short, else its first [`QUOTE_LIMIT`]
/// characters and how many more there were.
pub fn quote(text: &str) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(QUOTE_LIMIT) {
        None => std::borrow::Cow::Borrowed(text),
        Some((cut, _)) => std::borrow::Cow::Owned(format!("{}… ({} more characters)", &text[..cut], text[cut..].chars().count())),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn long_input_is_quoted_short() {
        assert_eq!(super::quote("abc"), "abc");
        let long = "x".repeat(1000);
        let q = super::quote(&long);
        assert!(q.starts_with(&"x".repeat(200)) && q.ends_with("… (800 more characters)"), "{q}");
        let wide = "é".repeat(300);
        assert!(super::quote(&wide).ends_with("(100 more characters)"));
    }
}
