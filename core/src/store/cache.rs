//! Persistent caches of compiled binaries (CUBIN, HIP code objects), shared by the backends.
//!
//! Entries are whole files named by a content hash. They are written to a temporary name and
//! renamed, so a reader never sees a partial file. A failed write only costs a recompile next
//! time, so writes are best effort.
//!
//! The compiler's refusals are kept too (`<key>.err`, the log and options): a config that did
//! not compile, tuned again (another verification, `--remeasure`, a new database), fails at
//! once instead of spending the compile again (seconds each for NVRTC). A key names the
//! source, the headers it includes from the user's folders, the options and the compiler's
//! version, so the same key fails the same way — except where the log says an included file
//! was not found: the toolkit's or the system's headers are not in the key, and installing the
//! missing one must be seen, so such a failure is compiled again.

use crate::error::BackendError;
use std::path::Path;

/// The cached bytes under `dir/<key>.<ext>`, if present and non-empty.
pub fn load(dir: &Path, key: &str, ext: &str) -> Option<Vec<u8>> {
    std::fs::read(dir.join(format!("{key}.{ext}"))).ok().filter(|b| !b.is_empty())
}

/// Whether [`binary`] would serve `key` from `dir` (a plain kernel's image; a template
/// instance's also with its symbol; or the compiler's refusal), without reading them.
pub fn holds(dir: Option<&Path>, key: &str, ext: &str, templated: bool) -> bool {
    let present = |ext: &str| dir.is_some_and(|d| std::fs::metadata(d.join(format!("{key}.{ext}"))).is_ok_and(|m| m.len() > 0));
    (present(ext) && (!templated || present("sym"))) || present(REFUSED)
}

/// The extension of a kept refusal.
const REFUSED: &str = "err";

/// What compile logs say when an included file was not found (NVRTC; hipRTC's clang).
const MISSING_FILE: [&str; 2] = ["cannot open source file", "file not found"];

/// The refusal to keep of a compile's error: the compiler's own verdict on the code, not one
/// that a missing header (below) or the machine (out of memory, no device: not
/// [`BackendError::CompileFailed`]) caused.
fn lasting(e: &BackendError) -> Option<String> {
    match e {
        BackendError::CompileFailed { log, options, .. } if !MISSING_FILE.iter().any(|m| log.contains(m)) => {
            Some(serde_json::json!({ "log": log, "options": options }).to_string())
        }
        _ => None,
    }
}

/// A kept refusal, as the error the compile gave; `None` for a file that is not one (then the
/// config is compiled again).
fn refusal(bytes: &[u8]) -> Option<BackendError> {
    let v: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    let log = v.get("log")?.as_str()?.to_string();
    let options = v.get("options")?.as_array()?.iter().map(|o| o.as_str().map(str::to_string)).collect::<Option<Vec<_>>>()?;
    Some(BackendError::CompileFailed { log, options })
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
/// (stored beside the image, extension `sym`); a plain kernel's symbol is `name`. A compile
/// the compiler refused is kept as well (see the module's docs) and served as that refusal, the
/// [`BackendError::CompileFailed`] it was ([`holds`] says so before).
pub fn binary(
    dir: Option<&Path>,
    key: &str,
    ext: &str,
    name: &str,
    templated: bool,
    compile: impl FnOnce() -> Result<(Vec<u8>, Option<String>), BackendError>,
) -> Result<Binary, BackendError> {
    if let Some(d) = dir {
        let entry = if templated { load(d, key, "sym").and_then(|b| String::from_utf8(b).ok()) } else { Some(name.to_string()) };
        if let (Some(entry), Some(bytes)) = (entry, load(d, key, ext)) {
            return Ok(Binary { bytes, entry, cached: true });
        }
        if let Some(refused) = load(d, key, REFUSED).as_deref().and_then(refusal) {
            return Err(refused);
        }
    }
    let (bytes, lowered) = match compile() {
        Ok(built) => built,
        Err(e) => {
            if let (Some(d), Some(kept)) = (dir, lasting(&e)) {
                store(d, key, REFUSED, kept.as_bytes());
            }
            return Err(e);
        }
    };
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
    use crate::error::BackendError;

    #[test]
    fn binaries_and_their_symbols_are_served_from_the_cache() {
        let d = tempfile::tempdir().unwrap();
        let compiled = || Ok((b"image".to_vec(), Some("_Z1kILi4EEvv".to_string())));
        let first = binary(Some(d.path()), "key", "bin", "k", true, compiled).unwrap();
        assert_eq!((first.entry.as_str(), first.cached), ("_Z1kILi4EEvv", false));
        let again = binary(Some(d.path()), "key", "bin", "k", true, || Err(BackendError::other("must not compile again"))).unwrap();
        assert_eq!((again.bytes.as_slice(), again.entry.as_str(), again.cached), (&b"image"[..], "_Z1kILi4EEvv", true));
        // A template instance whose symbol is missing is compiled again, not launched by the wrong name.
        std::fs::remove_file(d.path().join("key.sym")).unwrap();
        assert!(!binary(Some(d.path()), "key", "bin", "k", true, compiled).unwrap().cached);
        let plain = binary(Some(d.path()), "plain", "bin", "triad", false, || Ok((b"x".to_vec(), None))).unwrap();
        assert_eq!(plain.entry, "triad");
        assert!(binary(Some(d.path()), "plain", "bin", "triad", false, || Err(BackendError::other("cached"))).unwrap().cached);
        let uncached = binary(None, "plain", "bin", "triad", false, || Ok((b"y".to_vec(), None))).unwrap();
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

    #[test]
    fn the_compilers_refusals_are_kept_but_not_a_missing_header_nor_the_machines() {
        let d = tempfile::tempdir().unwrap();
        let refused = || Err(BackendError::CompileFailed { log: "k.cu(3): error: identifier \"x\" is undefined".into(), options: vec!["-DA=1".into()] });
        let first = binary(Some(d.path()), "bad", "bin", "k", true, refused).unwrap_err();
        assert!(matches!(first, BackendError::CompileFailed { .. }), "{first:?}");
        assert!(super::holds(Some(d.path()), "bad", "bin", true), "a kept refusal is served without compiling");
        let again = binary(Some(d.path()), "bad", "bin", "k", true, || panic!("compiled again")).unwrap_err();
        match again {
            BackendError::CompileFailed { log, options } => {
                assert_eq!((log.as_str(), options), ("k.cu(3): error: identifier \"x\" is undefined", vec!["-DA=1".to_string()]));
            }
            other => panic!("{other:?}"),
        }
        // Not kept: a missing header (NVRTC's and clang's words), and what is not the compiler's verdict.
        for (key, e) in [
            ("nvrtc", BackendError::CompileFailed { log: "catastrophic error: cannot open source file \"cub/cub.cuh\"".into(), options: vec![] }),
            ("clang", BackendError::CompileFailed { log: "fatal error: 'tile.h' file not found".into(), options: vec![] }),
            ("machine", BackendError::other("NVRTC_ERROR_OUT_OF_MEMORY")),
        ] {
            let _ = binary(Some(d.path()), key, "bin", "k", false, || Err(e));
            assert!(!super::holds(Some(d.path()), key, "bin", false), "{key}");
            assert!(binary(Some(d.path()), key, "bin", "k", false, || Ok((b"x".to_vec(), None))).is_ok(), "{key} compiles again");
        }
        // A damaged refusal is compiled again.
        super::store(d.path(), "torn", "err", b"{\"log\": ");
        assert!(binary(Some(d.path()), "torn", "bin", "k", false, || Ok((b"x".to_vec(), None))).is_ok());
        // A later success wins over an older refusal.
        super::store(d.path(), "bad", "bin", b"image");
        super::store(d.path(), "bad", "sym", b"k");
        assert!(binary(Some(d.path()), "bad", "bin", "k", true, || panic!("compiled")).unwrap().cached);
    }
}
