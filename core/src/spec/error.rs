//! Errors of the spec stage: a problem in a spec, named by file and field.

/// A problem in a spec: file, field, message. A problem with the file as a whole (it cannot be
/// read, it is too large) has the field `(file)`, which the message leaves out
/// (`spec.toml: cannot read the spec: …`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}: {}{message}", if field == WHOLE_FILE { String::new() } else { format!("{field}: ") })]
pub struct SpecError {
    /// The spec file (or `<job>` for jobs built in code).
    pub file: String,
    /// The field, e.g. `restrictions[2]` or `kernel.source.wgsl`.
    pub field: String,
    /// What is wrong and what to do.
    pub message: String,
}

/// The field of a problem with the file as a whole.
pub const WHOLE_FILE: &str = "(file)";

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

    #[test]
    fn a_problem_with_the_whole_file_names_no_field() {
        let e = |field: &str| super::SpecError { file: "s.toml".into(), field: field.into(), message: "cannot read".into() }.to_string();
        assert_eq!(e(super::WHOLE_FILE), "s.toml: cannot read");
        assert_eq!(e("kernel.name"), "s.toml: kernel.name: cannot read");
    }
}
