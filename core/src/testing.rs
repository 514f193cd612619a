//! Helpers for kerntune's own tests, shared by every crate's test suite.

/// Records a test that skipped part of its work because this machine lacks something (a GPU, a
/// compiler): on stderr, and appended to the file `KERNTUNE_SKIP_LOG` names, which `make test`
/// prints at the end (libtest hides a passing test's output).
pub fn skipped(what: &str) {
    eprintln!("SKIPPED {what}");
    if let Some(p) = std::env::var_os("KERNTUNE_SKIP_LOG") {
        use std::io::Write;
        // One write of the whole line: appends from tests running at once do not interleave.
        if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(p) {
            let _ = f.write_all(format!("SKIPPED {what}\n").as_bytes());
        }
    }
}
