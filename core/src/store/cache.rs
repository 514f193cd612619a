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

/// Whether [`binary`] would serve `key` from `dir` (a plain kernel's image; a template
/// instance's also with its symbol), without reading either.
pub fn holds(dir: Option<&Path>, key: &str, ext: &str, templated: bool) -> bool {
    let present = |ext: &str| dir.is_some_and(|d| std::fs::metadata(d.join(format!("{key}.{ext}"))).is_ok_and(|m| m.len() > 0));
    present(ext) && (!templated || present("sym"))
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

/// A kernel binary, the symbol to launch in it, and whether it came from the cache.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Binary {
    /// The image (CUBIN, HIP code object).
    pub bytes: Vec<u8>,
    /// The kernel's symbol: its name, or for a template instance the mangled name the
    /// compiler lowered it to.
    pub entry: String,
    /// Served from the cache.
    pub cached: bool,
}

/// Serves a kernel binary from `dir` (`None`: no cache) under `key`, or compiles and stores it.
/// `compile` returns the image and, for a template instance, the symbol it was lowered to
/// (stored beside the image, extension `sym`); a plain kernel's symbol is `name`.
pub fn binary<E>(
    dir: Option<&Path>,
    key: &str,
    ext: &str,
    name: &str,
    templated: bool,
    compile: impl FnOnce() -> Result<(Vec<u8>, Option<String>), E>,
) -> Result<Binary, E> {
    if let Some(d) = dir {
        let entry = if templated { load(d, key, "sym").and_then(|b| String::from_utf8(b).ok()) } else { Some(name.to_string()) };
        if let (Some(entry), Some(bytes)) = (entry, load(d, key, ext)) {
            return Ok(Binary { bytes, entry, cached: true });
        }
    }
    let (bytes, lowered) = compile()?;
    if let Some(d) = dir {
        store(d, key, ext, &bytes);
        if let Some(sym) = &lowered {
            store(d, key, "sym", sym.as_bytes());
        }
    }
    Ok(Binary { bytes, entry: lowered.unwrap_or_else(|| name.to_string()), cached: false })
}

#[cfg(test)]
mod tests {
    use super::binary;

    #[test]
    fn binaries_and_their_symbols_are_served_from_the_cache() {
        let d = tempfile::tempdir().unwrap();
        let compiled = || Ok::<_, String>((b"image".to_vec(), Some("_Z1kILi4EEvv".to_string())));
        let first = binary(Some(d.path()), "key", "bin", "k", true, compiled).unwrap();
        assert_eq!((first.entry.as_str(), first.cached), ("_Z1kILi4EEvv", false));
        let again = binary(Some(d.path()), "key", "bin", "k", true, || Err("must not compile again".to_string())).unwrap();
        assert_eq!((again.bytes.as_slice(), again.entry.as_str(), again.cached), (&b"image"[..], "_Z1kILi4EEvv", true));
        // A template instance whose symbol is missing is compiled again, not launched by the wrong name.
        std::fs::remove_file(d.path().join("key.sym")).unwrap();
        assert!(!binary(Some(d.path()), "key", "bin", "k", true, compiled).unwrap().cached);
        let plain = binary(Some(d.path()), "plain", "bin", "triad", false, || Ok::<_, String>((b"x".to_vec(), None))).unwrap();
        assert_eq!(plain.entry, "triad");
        assert!(binary(Some(d.path()), "plain", "bin", "triad", false, || Err("cached".to_string())).unwrap().cached);
        let uncached = binary(None, "plain", "bin", "triad", false, || Ok::<_, String>((b"y".to_vec(), None))).unwrap();
        assert!(!uncached.cached);
    }

    #[test]
    fn holds_says_what_binary_would_serve() {
        let d = tempfile::tempdir().unwrap();
        assert!(!super::holds(Some(d.path()), "k", "cubin", false));
        super::store(d.path(), "k", "cubin", b"image");
        assert!(super::holds(Some(d.path()), "k", "cubin", false));
        assert!(!super::holds(Some(d.path()), "k", "cubin", true), "a template instance also needs its symbol");
        super::store(d.path(), "k", "sym", b"_Z1kv");
        assert!(super::holds(Some(d.path()), "k", "cubin", true));
        assert!(!super::holds(None, "k", "cubin", false), "no cache holds nothing");
        super::store(d.path(), "e", "cubin", b"");
        assert!(!super::holds(Some(d.path()), "e", "cubin", false), "an empty file is not served");
    }

    #[test]
    fn stores_and_loads() {
        let d = tempfile::tempdir().unwrap();
        assert_eq!(super::load(d.path(), "k", "bin"), None);
        super::store(d.path(), "k", "bin", b"abc");
        assert_eq!(super::load(d.path(), "k", "bin"), Some(b"abc".to_vec()));
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1, "no temporary file left behind");
    }
}
