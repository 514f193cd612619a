//! Writing to standard output without panicking: `println!` panics when stdout is a closed
//! pipe (`kerntune db show | head -1`) or a full device (`> /dev/full`). Every command writes
//! through here instead; a closed pipe ends the command quietly with exit status 0 (the reader
//! has what it wanted), any other write error is one `error:` line and exit status 1.

use std::io::Write;

/// Standard output could not be written.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The reader went away (a closed pipe): not an error worth reporting.
    #[error("standard output was closed")]
    Closed,
    /// Writing failed otherwise (a full disk, ...).
    #[error("cannot write the output: {0}")]
    Failed(std::io::Error),
}

/// Writes `text` to standard output and flushes.
pub fn print(text: &str) -> Result<(), OutputError> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes()).and_then(|()| out.flush()).map_err(|e| match e.kind() {
        std::io::ErrorKind::BrokenPipe => OutputError::Closed,
        _ => OutputError::Failed(e),
    })
}

/// Writes a file the user named (`--out`, `--svg`) whole ([`kerntune::store::write_whole`]). A
/// closed pipe (`--out /dev/stdout | head -c 100`) ends the command as a closed standard output
/// does, quietly; any other failure says `{what}writing PATH: …`.
pub fn write_named(path: &std::path::Path, bytes: &[u8], what: &str) -> anyhow::Result<()> {
    kerntune::store::write_whole(path, bytes).map_err(|e| match e.kind() {
        std::io::ErrorKind::BrokenPipe => OutputError::Closed.into(),
        // The folder, not the file, is what is missing: say so (it read `writing
        // /no/such/x.html: No such file or directory`, which sounds like the file).
        std::io::ErrorKind::NotFound if path.parent().is_some_and(|d| !d.as_os_str().is_empty() && !d.is_dir()) => anyhow::anyhow!(
            "{what}cannot write {}: the folder {} does not exist; create it first (`mkdir -p`) or name a file in another",
            path.display(),
            path.parent().expect("checked").display()
        ),
        _ if path.is_dir() => anyhow::anyhow!("{what}{} is a folder; name a file in it", path.display()),
        _ => anyhow::anyhow!("{what}writing {}: {e}", path.display()),
    })
}

/// Writes `text` and a newline.
pub fn println(text: &str) -> Result<(), OutputError> {
    print(&format!("{text}\n"))
}

/// `println!` that returns an error instead of panicking (see the module docs).
macro_rules! outln {
    () => { $crate::cli::out::println("")? };
    ($($t:tt)*) => { $crate::cli::out::println(&format!($($t)*))? };
}
pub(crate) use outln;

/// One line on standard error; a closed standard error is ignored.
pub fn eprint_line(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}
