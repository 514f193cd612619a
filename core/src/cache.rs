//! Persistent caches of compiled binaries (CUBIN, HIP code objects), shared by the backends.
//!
//! Entries are whole files named by a content hash. They are written to a temporary name and
//! renamed, so a reader never sees a partial file. A failed write only costs a recompile next
//! time, so writes are best effort.

use std::path::Path;

/// The cached bytes under `dir/<key>.<ext>`, if present and non-empty.
pub fn load(dir: &Path, key: &str, ext: &str) -> Option<Vec<u8>> {
    std::fs::read(dir.join(format!("{key}.{ext}"))).ok().filter(|b| !b.is_empty())
}

/// Stores `bytes` under `dir/<key>.<ext>` atomically (temporary file, then rename).
pub fn store(dir: &Path, key: &str, ext: &str, bytes: &[u8]) {
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let tmp = dir.join(format!(".{key}.{ext}.{}.{:?}", std::process::id(), std::thread::current().id()));
    if std::fs::write(&tmp, bytes).is_ok() && std::fs::rename(&tmp, dir.join(format!("{key}.{ext}"))).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn stores_and_loads() {
        let d = tempfile::tempdir().unwrap();
        assert_eq!(super::load(d.path(), "k", "bin"), None);
        super::store(d.path(), "k", "bin", b"abc");
        assert_eq!(super::load(d.path(), "k", "bin"), Some(b"abc".to_vec()));
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1, "no temporary file left behind");
    }
}
