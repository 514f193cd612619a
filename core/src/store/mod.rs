//! # Stage 5: what persists
//!
//! The winner database ([`db`]: every measurement with its reason, the winner per kernel ×
//! target × toolchain × problem key, atomic locked writes, merge) and the compile cache of
//! binaries the backends share ([`cache`]), and other tools' result files read as recorded
//! spaces ([`recorded`]: Kernel Tuner caches, T4 files), which simulation scores strategies on
//! and tunes learn from as priors, and which the report draws as entries ([`foreign`]).
//!
//! **May import:** `spec`, `space`, `plan`, `measure`, `search` and the vocabulary.

pub mod cache;
pub mod db;
pub mod export;
pub mod foreign;
pub mod recorded;

pub use db::{Database, DbError};

/// Writes `bytes` to `path` whole or not at all: to a temporary file beside it, then renamed
/// over it. A write that fails (a full disk) leaves neither a cut-off file nor a damaged earlier
/// one at `path` (a report, an export, a plot the user had), and removes its temporary file.
pub fn write_whole(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = path.file_name().map_or_else(|| "output".into(), |n| n.to_string_lossy().into_owned());
    // Named by process and thread: several may write the same file at once (compile threads
    // storing one binary), each renaming a whole file of its own.
    let tmp = path.with_file_name(format!(".{name}.partial-{}-{:?}", std::process::id(), std::thread::current().id()));
    let written = std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_write_is_whole_or_leaves_what_was_there() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("report.html");
        super::write_whole(&p, b"first").unwrap();
        super::write_whole(&p, b"second").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"second");
        // A write that cannot finish (here: its target is a folder, so the rename fails) keeps
        // what was there and leaves no temporary file.
        let folder = d.path().join("plots");
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(folder.join("kept"), b"x").unwrap();
        assert!(super::write_whole(&folder, b"third").is_err());
        assert_eq!(std::fs::read(folder.join("kept")).unwrap(), b"x");
        let names: Vec<String> = std::fs::read_dir(d.path()).unwrap().map(|f| f.unwrap().file_name().into_string().unwrap()).collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }
}
