//! Persistent caches of compiled binaries (CUBIN, HIP code objects), shared by the backends.
//!
//! Entries are whole files named by a content hash. They are written to a temporary name and
//! renamed, so a reader never sees a partial file. A failed write only costs a recompile next
//! time, so writes are best effort; a folder that cannot be written (read-only, full, another
//! user's) is named in one warning per process, since every later tune would pay its compiles
//! again without a word.
//!
//! The compiler's refusals are kept too (`<key>.err`, the log and options): a config that did
//! not compile, tuned again (another verification, `--remeasure`, a new database), fails at
//! once instead of spending the compile again (seconds each for NVRTC). A key names the
//! source, the headers it includes from the user's folders, the options and the compiler's
//! version, so the same key fails the same way — except where the log says an included file
//! was not found: the toolkit's or the system's headers are not in the key, and installing the
//! missing one must be seen, so such a failure is compiled again.
//!
//! The caches are bounded together ([`max_bytes`]: 2 GiB unless `KERNTUNE_COMPILE_CACHE_MAX`
//! says otherwise): a tune that added to them removes the least recently used entries once they
//! hold more ([`prune`], down to 80 % of the bound, as ccache does, so that the next tunes do not
//! prune again at once). A served entry's file is touched, so its modification time is its last
//! use (access times are often not kept: `noatime`, `relatime`). `kerntune cache` shows, prunes
//! and clears them.

use crate::error::BackendError;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The backends that keep a compile cache, each in a folder of that name under kerntune's cache
/// directory ([`crate::store::db::cache_dir`]).
pub const BACKENDS: [&str; 2] = ["cuda", "hip"];

/// The environment variable that bounds the compile caches ([`max_bytes`]).
pub const MAX_VAR: &str = "KERNTUNE_COMPILE_CACHE_MAX";

/// The bound of the compile caches together where [`MAX_VAR`] sets none: 2 GiB (a 1,650-config
/// convolution space compiles to about 40 MB of CUBINs).
pub const DEFAULT_MAX_BYTES: u64 = 2 << 30;

/// Files of an entry being written (a temporary name, see [`store`]) older than this were left
/// by a process that ended before renaming them, and are removed by [`prune`].
const STALE_TEMPORARY: Duration = Duration::from_secs(3600);

/// Whether `KERNTUNE_NO_COMPILE_CACHE` is set: no compile cache is read, kept or pruned.
pub fn disabled() -> bool {
    std::env::var_os("KERNTUNE_NO_COMPILE_CACHE").is_some()
}

/// The compile cache folder of `backend` (one of [`BACKENDS`]), or `None` when the caches are
/// [`disabled`] (nothing read or kept).
pub fn folder(backend: &str) -> Option<PathBuf> {
    (!disabled()).then(|| crate::store::db::cache_dir().join(backend))
}

/// The bound [`MAX_VAR`] sets ([`parse_max`]), [`DEFAULT_MAX_BYTES`] where it is unset; `None`:
/// never pruned. The error is one line naming the variable.
pub fn max_bytes() -> Result<Option<u64>, String> {
    match std::env::var(MAX_VAR) {
        Err(std::env::VarError::NotPresent) => Ok(Some(DEFAULT_MAX_BYTES)),
        Err(std::env::VarError::NotUnicode(v)) => Err(format!("{MAX_VAR}: {v:?} is not a size: write one such as `2GiB`, `500MB`, or `off`")),
        Ok(v) => parse_max(&v).map_err(|m| format!("{MAX_VAR}: {m}")),
    }
}

/// A bound of the compile caches: a size (`2GiB`, `500 MB`, `1.5G`, bytes as a plain number) or
/// `off` (never pruned); `None` for `off`. Zero is refused: it would remove every binary after
/// each tune (`KERNTUNE_NO_COMPILE_CACHE=1` keeps none).
pub fn parse_max(v: &str) -> Result<Option<u64>, String> {
    let t = v.trim();
    if ["off", "none", "unlimited"].iter().any(|w| t.eq_ignore_ascii_case(w)) {
        return Ok(None);
    }
    match t.parse::<bytesize::ByteSize>() {
        Ok(b) if b.as_u64() > 0 => Ok(Some(b.as_u64())),
        Ok(_) => Err(format!("`{v}` would remove every binary after each tune: give a size such as `2GiB`, or set KERNTUNE_NO_COMPILE_CACHE=1 to keep none")),
        Err(_) => Err(format!("`{v}` is not a size: write one such as `2GiB`, `500MB`, or `off` (never pruned)")),
    }
}

/// `bytes` for a person: `1.5 GiB`.
pub fn size_text(bytes: u64) -> String {
    bytesize::ByteSize::b(bytes).display().iec().to_string()
}

/// One entry of a compile cache: the files of one key (image, symbol, refusal).
#[derive(Debug)]
struct Entry {
    backend: &'static str,
    files: Vec<PathBuf>,
    bytes: u64,
    /// The latest modification time of its files: its last use.
    used: SystemTime,
    refusal: bool,
}

/// The entries of the compile cache folders under `root`, and the temporary files left by
/// writes that never finished (older than [`STALE_TEMPORARY`]) with their sizes.
fn scan(root: &Path) -> (Vec<Entry>, Vec<(PathBuf, u64)>) {
    let (mut entries, mut stale) = (Vec::new(), Vec::new());
    let now = SystemTime::now();
    for backend in BACKENDS {
        let Ok(dir) = std::fs::read_dir(root.join(backend)) else { continue };
        let mut by_key: std::collections::BTreeMap<String, Entry> = Default::default();
        for f in dir.flatten() {
            let (Ok(meta), Some(name)) = (f.metadata(), f.file_name().to_str().map(str::to_string)) else { continue };
            if !meta.is_file() {
                continue;
            }
            let modified = meta.modified().unwrap_or(now);
            if name.starts_with('.') {
                if now.duration_since(modified).is_ok_and(|age| age > STALE_TEMPORARY) {
                    stale.push((f.path(), meta.len()));
                }
                continue;
            }
            let Some((key, ext)) = name.rsplit_once('.') else { continue };
            // A kernel's remembered compile footprint: a few bytes beside the entries, not one.
            if ext == FOOTPRINT {
                continue;
            }
            let e = by_key.entry(key.to_string()).or_insert(Entry { backend, files: Vec::new(), bytes: 0, used: SystemTime::UNIX_EPOCH, refusal: false });
            e.files.push(f.path());
            e.bytes += meta.len();
            e.used = e.used.max(modified);
            e.refusal |= ext == REFUSED;
        }
        entries.extend(by_key.into_values());
    }
    (entries, stale)
}

/// What one backend's compile cache holds ([`usage`]).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct FolderUsage {
    /// The backend (`cuda`, `hip`).
    pub backend: String,
    /// Its folder.
    pub folder: PathBuf,
    /// Compiled kernels (an image, with its symbol for a template instance).
    pub binaries: usize,
    /// Kept refusals of the compiler.
    pub refusals: usize,
    /// Bytes of every file.
    pub bytes: u64,
    /// The least recent last use of an entry, in seconds since the Unix epoch.
    pub oldest_use: Option<u64>,
    /// The most recent.
    pub newest_use: Option<u64>,
}

/// What the compile caches under `root` (kerntune's cache directory) hold, one line per backend
/// folder that exists.
pub fn usage(root: &Path) -> Vec<FolderUsage> {
    let (entries, stale) = scan(root);
    let secs = |t: SystemTime| t.duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    BACKENDS
        .iter()
        .filter(|b| root.join(b).is_dir())
        .map(|&backend| {
            let folder = root.join(backend);
            let mine: Vec<&Entry> = entries.iter().filter(|e| e.backend == backend).collect();
            let left: u64 = stale.iter().filter(|(p, _)| p.starts_with(&folder)).map(|(_, n)| n).sum();
            FolderUsage {
                backend: backend.into(),
                binaries: mine.iter().filter(|e| !e.refusal).count(),
                refusals: mine.iter().filter(|e| e.refusal).count(),
                bytes: mine.iter().map(|e| e.bytes).sum::<u64>() + left,
                oldest_use: mine.iter().map(|e| secs(e.used)).min(),
                newest_use: mine.iter().map(|e| secs(e.used)).max(),
                folder,
            }
        })
        .collect()
}

/// What [`prune`] removed and kept.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Pruned {
    /// Entries removed (a compiled kernel or a refusal, with all its files).
    pub removed: usize,
    /// Their bytes, and those of temporary files left by writes that never finished.
    pub removed_bytes: u64,
    /// Entries kept.
    pub kept: usize,
    /// Their bytes.
    pub kept_bytes: u64,
    /// How long before the prune the most recently used entry removed was last used.
    pub unused_for_s: Option<u64>,
}

impl Pruned {
    /// One line for a tune's notes or `kerntune cache prune`: what was removed and why (`max`,
    /// set by `whence`); `None` when nothing was.
    pub fn line(&self, max: u64, whence: &str) -> Option<String> {
        if self.removed == 0 {
            return (self.removed_bytes > 0).then(|| {
                format!(
                    "compile cache: removed {} of files left by compiles whose process ended while storing them; {} entr{} kept ({})",
                    size_text(self.removed_bytes),
                    self.kept,
                    if self.kept == 1 { "y" } else { "ies" },
                    size_text(self.kept_bytes)
                )
            });
        }
        Some({
            // Entries used a minute ago were this tune's own neighbours: nothing worth saying.
            let unused = self.unused_for_s.filter(|&s| s >= 120).map(|s| format!(", none used in the last {}", ago(s))).unwrap_or_default();
            format!(
                "compile cache: removed the {} least recently used entr{} ({}{unused}) to stay within {} ({whence}); {} kept ({})",
                self.removed,
                if self.removed == 1 { "y" } else { "ies" },
                size_text(self.removed_bytes),
                size_text(max),
                self.kept,
                size_text(self.kept_bytes)
            )
        })
    }
}

/// `seconds` for a person, in its largest whole unit: `3 days`, `5 h`, `12 min`, `a minute`.
pub fn ago(seconds: u64) -> String {
    match seconds {
        s if s >= 2 * 86_400 => format!("{} days", s / 86_400),
        s if s >= 3_600 => format!("{} h", s / 3_600),
        s if s >= 120 => format!("{} min", s / 60),
        _ => "a minute".into(),
    }
}

/// Bounds the compile caches under `root` (kerntune's cache directory) to `max` bytes together:
/// when they hold more, removes whole entries, least recently used first, until they hold at
/// most 80 % of it; and removes temporary files left by writes that never finished. Files that
/// another process removed first, or that cannot be removed, are skipped: pruning never fails.
pub fn prune(root: &Path, max: u64) -> Pruned {
    let (mut entries, stale) = scan(root);
    let mut out = Pruned::default();
    for (path, bytes) in stale {
        if std::fs::remove_file(&path).is_ok() {
            out.removed_bytes += bytes;
        }
    }
    let mut total: u64 = entries.iter().map(|e| e.bytes).sum();
    if total > max {
        let low = max / 10 * 8;
        entries.sort_by_key(|e| e.used);
        let now = SystemTime::now();
        let mut cut = 0;
        while cut < entries.len() && total > low {
            let e = &entries[cut];
            for f in &e.files {
                let _ = std::fs::remove_file(f);
            }
            total -= e.bytes;
            out.removed += 1;
            out.removed_bytes += e.bytes;
            out.unused_for_s = Some(now.duration_since(e.used).map(|d| d.as_secs()).unwrap_or(0));
            cut += 1;
        }
        entries.drain(..cut);
    }
    out.kept = entries.len();
    out.kept_bytes = entries.iter().map(|e| e.bytes).sum();
    out
}

/// After a tune that compiled: bounds the compile caches ([`max_bytes`], [`prune`]), unless they
/// are [`disabled`]; the line for the tune's notes when it removed anything, or when the bound is
/// not a size (then nothing is removed).
pub fn prune_after_tune() -> Option<String> {
    if disabled() {
        return None;
    }
    match max_bytes() {
        Ok(Some(max)) => {
            let t = std::time::Instant::now();
            let p = prune(&crate::store::db::cache_dir(), max);
            tracing::debug!(seconds = t.elapsed().as_secs_f64(), removed = p.removed, kept = p.kept, "compile cache pruned");
            p.line(max, MAX_VAR)
        }
        Ok(None) => None,
        Err(m) => Some(format!("compile cache not pruned: {m}")),
    }
}

/// The cached bytes under `dir/<key>.<ext>`, if present and non-empty.
pub fn load(dir: &Path, key: &str, ext: &str) -> Option<Vec<u8>> {
    std::fs::read(dir.join(format!("{key}.{ext}"))).ok().filter(|b| !b.is_empty())
}

/// Marks `dir/<key>.<ext>` used now (its modification time: what [`prune`] orders by). Best
/// effort: a cache that may not be written (shared read-only) is never pruned by this process
/// either.
fn touch(dir: &Path, key: &str, ext: &str) {
    if let Ok(f) = std::fs::File::options().append(true).open(dir.join(format!("{key}.{ext}"))) {
        let _ = f.set_modified(SystemTime::now());
    }
}

/// Whether [`binary`] would serve `key` from `dir` (a plain kernel's image; a template
/// instance's also with its symbol; or the compiler's refusal), without reading them.
pub fn holds(dir: Option<&Path>, key: &str, ext: &str, templated: bool) -> bool {
    let present = |ext: &str| dir.is_some_and(|d| std::fs::metadata(d.join(format!("{key}.{ext}"))).is_ok_and(|m| m.len() > 0));
    (present(ext) && (!templated || present("sym"))) || present(REFUSED)
}

/// The extension of a kept refusal.
const REFUSED: &str = "err";

/// The extension of a kernel's remembered compile footprint (`<kernel hash>.mem`, the bytes as
/// text; see [`crate::compiler::memory`]): kept beside the entries, neither counted, pruned nor
/// served as one (`kerntune cache clear` removes it with its folder).
pub const FOOTPRINT: &str = "mem";

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

/// Stores `bytes` under `dir/<key>.<ext>` atomically (temporary file, then rename). A write
/// that fails (a full disk) leaves nothing behind, not even its temporary file. Best effort:
/// [`binary`] says once when its entries cannot be kept.
pub fn store(dir: &Path, key: &str, ext: &str, bytes: &[u8]) {
    let _ = try_store(dir, key, ext, bytes);
}

fn try_store(dir: &Path, key: &str, ext: &str, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    crate::store::write_whole(&dir.join(format!("{key}.{ext}")), bytes)
}

/// The compile cache folders this process could not write to, each warned of once.
static UNWRITABLE: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Whether the entry [`binary`] stored under `key` was kept (its image, symbol and checksum): a
/// cache that cannot be written (a read-only or full disk, a folder of another user's) costs
/// every later tune its compiles, silently until this said so, once per folder and process.
fn kept(dir: &Path, key: &str, files: &[(&str, &[u8])]) -> bool {
    let Err(e) = files.iter().try_for_each(|(ext, bytes)| try_store(dir, key, ext, bytes)) else { return true };
    let mut warned = UNWRITABLE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if !warned.iter().any(|d| d == dir) {
        warned.push(dir.to_path_buf());
        tracing::warn!("{}", unwritable(dir, &e));
    }
    false
}

/// What [`kept`] says of a compile cache folder it cannot write to.
fn unwritable(dir: &Path, e: &std::io::Error) -> String {
    format!(
        "compile cache: {} cannot be written ({e}): the binaries compiled are not kept, so the next tune compiles them again; set KERNTUNE_CACHE_DIR to a folder this user can write (the default database moves with it), or KERNTUNE_NO_COMPILE_CACHE=1 to keep none",
        dir.display()
    )
}

/// A backend's reading of a cached image and the symbol to launch in it: `Err` says why it is
/// not one the backend could load ([`binary`]).
pub type Readable = dyn Fn(&[u8], &str) -> Result<(), String>;

/// The extension of an image's checksum (`<key>.sum`: [`crate::hash::short_hash`] of the
/// image), stored beside it so that an image whose bytes changed on disk is told from the one
/// the compiler made.
const CHECKSUM: &str = "sum";

/// Why the cached image `bytes` (stored under `dir/<key>.<ext>`) is not the one the compiler
/// made: it differs from the checksum stored with it (an entry an older kerntune stored has
/// none), or `readable` refuses it (the backend's own reading: an ELF with the kernel's symbol
/// in it); `None` when it may be served.
fn damage(dir: &Path, key: &str, bytes: &[u8], entry: &str, readable: &Readable) -> Option<String> {
    if let Some(sum) = load(dir, key, CHECKSUM) {
        let (kept, now) = (String::from_utf8_lossy(&sum).trim().to_string(), crate::hash::short_hash(bytes));
        if kept != now {
            let stored =
                if kept.len() == now.len() && kept.bytes().all(|b| b.is_ascii_hexdigit()) { format!("the {kept}") } else { "the unreadable one".into() };
            return Some(format!("its checksum is {now}, not {stored} stored with it"));
        }
    }
    readable(bytes, entry).err()
}

/// The reading of a backend that cannot tell a readable image from its bytes (hipRTC's output
/// may be a code object or a bundle of them): its checksum alone says whether it is damaged.
pub fn checksum_only(_: &[u8], _: &str) -> Result<(), String> {
    Ok(())
}

/// Removes the files of a cached image (the image, its symbol and checksum), best effort; a
/// kept refusal of the same key stays.
fn evict(dir: &Path, key: &str, ext: &str) {
    for e in [ext, "sym", CHECKSUM] {
        let _ = std::fs::remove_file(dir.join(format!("{key}.{e}")));
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
///
/// A cached image is served only when it is the one the compiler made: its checksum (stored
/// with it) matches and `readable` (the backend's reading of an image and its symbol) accepts
/// it. One that is not — cut short, overwritten, another kernel's — is removed with a warning
/// naming its file, and the config compiled again: a damaged cache costs a compile, never a
/// config.
pub fn binary(
    dir: Option<&Path>,
    key: &str,
    ext: &str,
    name: &str,
    templated: bool,
    readable: &Readable,
    compile: impl FnOnce() -> Result<(Vec<u8>, Option<String>), BackendError>,
) -> Result<Binary, BackendError> {
    if let Some(d) = dir {
        let entry = if templated { load(d, key, "sym").and_then(|b| String::from_utf8(b).ok()) } else { Some(name.to_string()) };
        if let (Some(entry), Some(bytes)) = (entry, load(d, key, ext)) {
            match damage(d, key, &bytes, &entry, readable) {
                None => {
                    touch(d, key, ext);
                    return Ok(Binary { bytes, entry, cached: true });
                }
                Some(why) => {
                    tracing::warn!("compile cache: {} is damaged ({why}); removed, and the config compiled again", d.join(format!("{key}.{ext}")).display());
                    evict(d, key, ext);
                }
            }
        }
        if let Some(refused) = load(d, key, REFUSED).as_deref().and_then(refusal) {
            touch(d, key, REFUSED);
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
        let sum = crate::hash::short_hash(&bytes);
        let mut files = vec![(ext, &bytes[..])];
        files.extend(lowered.as_ref().map(|sym| ("sym", sym.as_bytes())));
        files.push((CHECKSUM, sum.as_bytes()));
        if !kept(d, key, &files) {
            evict(d, key, ext);
        }
    }
    Ok(Binary { bytes, entry: lowered.unwrap_or_else(|| name.to_string()), cached: false })
}

#[cfg(test)]
mod tests {
    use super::binary;
    use super::checksum_only as any;
    use crate::error::BackendError;

    #[test]
    fn binaries_and_their_symbols_are_served_from_the_cache() {
        let d = tempfile::tempdir().unwrap();
        let compiled = || Ok((b"image".to_vec(), Some("_Z1kILi4EEvv".to_string())));
        let first = binary(Some(d.path()), "key", "bin", "k", true, &any, compiled).unwrap();
        assert_eq!((first.entry.as_str(), first.cached), ("_Z1kILi4EEvv", false));
        let again = binary(Some(d.path()), "key", "bin", "k", true, &any, || Err(BackendError::other("must not compile again"))).unwrap();
        assert_eq!((again.bytes.as_slice(), again.entry.as_str(), again.cached), (&b"image"[..], "_Z1kILi4EEvv", true));
        // A template instance whose symbol is missing is compiled again, not launched by the wrong name.
        std::fs::remove_file(d.path().join("key.sym")).unwrap();
        assert!(!binary(Some(d.path()), "key", "bin", "k", true, &any, compiled).unwrap().cached);
        let plain = binary(Some(d.path()), "plain", "bin", "triad", false, &any, || Ok((b"x".to_vec(), None))).unwrap();
        assert_eq!(plain.entry, "triad");
        assert!(binary(Some(d.path()), "plain", "bin", "triad", false, &any, || Err(BackendError::other("cached"))).unwrap().cached);
        let uncached = binary(None, "plain", "bin", "triad", false, &any, || Ok((b"y".to_vec(), None))).unwrap();
        assert!(!uncached.cached);
    }

    #[test]
    fn a_damaged_image_is_compiled_again_not_served() {
        let d = tempfile::tempdir().unwrap();
        let compiles = std::cell::Cell::new(0);
        let compile = || {
            compiles.set(compiles.get() + 1);
            Ok((b"IMG: the image of k".to_vec(), Some("k".to_string())))
        };
        // The backend's reading: an image starts with `IMG`, and holds its symbol.
        let readable = |b: &[u8], sym: &str| -> Result<(), String> {
            if !b.starts_with(b"IMG") {
                return Err("not an image".into());
            }
            String::from_utf8_lossy(b).contains(sym).then_some(()).ok_or_else(|| format!("no symbol `{sym}`"))
        };
        let serve = || binary(Some(d.path()), "key", "bin", "k", true, &readable, compile).unwrap();
        assert!(!serve().cached);
        assert!(serve().cached, "served from the cache");
        assert_eq!(compiles.get(), 1);
        let image = d.path().join("key.bin");
        // Damage the backend's reading cannot see (a byte changed in the code): the checksum does.
        std::fs::write(&image, b"IMG: the imagE of k").unwrap();
        let again = serve();
        assert!(!again.cached && again.bytes == b"IMG: the image of k", "compiled again: {again:?}");
        assert_eq!(compiles.get(), 2);
        assert!(serve().cached, "and stored again");
        // Cut short, or another file: the backend's reading refuses it (an older kerntune's
        // entry, without a checksum, is read the same way).
        for (damaged, checksum) in [(&b"IMG: the im"[..], true), (b"\x7fELF...", false), (b"\x7fELF...", true)] {
            std::fs::write(&image, damaged).unwrap();
            if !checksum {
                std::fs::remove_file(d.path().join("key.sum")).unwrap();
            }
            assert!(!serve().cached, "{damaged:?}");
        }
        assert_eq!(compiles.get(), 5);
        // A symbol file naming another kernel.
        std::fs::write(d.path().join("key.sym"), b"other").unwrap();
        assert!(!serve().cached);
        assert_eq!(compiles.get(), 6);
        // An older kerntune's entry the reading accepts is served as it was.
        std::fs::remove_file(d.path().join("key.sum")).unwrap();
        assert!(serve().cached);
        assert_eq!(compiles.get(), 6);
        // What the warning says.
        super::store(d.path(), "w", "bin", b"IMG k");
        super::store(d.path(), "w", "sum", crate::hash::short_hash(b"IMG k 2").as_bytes());
        let now = crate::hash::short_hash(b"IMG k");
        let said = super::damage(d.path(), "w", b"IMG k", "k", &readable).unwrap();
        assert_eq!(said, format!("its checksum is {now}, not the {} stored with it", crate::hash::short_hash(b"IMG k 2")));
        super::store(d.path(), "w", "sum", b"\x00\xff");
        assert_eq!(super::damage(d.path(), "w", b"IMG k", "k", &readable).unwrap(), format!("its checksum is {now}, not the unreadable one stored with it"));
        super::store(d.path(), "w", "sum", now.as_bytes());
        assert_eq!(super::damage(d.path(), "w", b"IMG k", "j", &readable).unwrap(), "no symbol `j`");
        assert_eq!(super::damage(d.path(), "w", b"IMG k", "k", &readable), None);
        for f in ["w.bin", "w.sum"] {
            std::fs::remove_file(d.path().join(f)).unwrap();
        }
        // Nothing but the entry's image and symbol (its checksum removed above), and no
        // temporary file.
        let files: std::collections::BTreeSet<String> = std::fs::read_dir(d.path()).unwrap().map(|f| f.unwrap().file_name().into_string().unwrap()).collect();
        assert_eq!(files, ["key.bin", "key.sym"].map(String::from).into());
    }

    #[test]
    fn a_cache_that_cannot_be_written_says_so_once_and_still_compiles() {
        let d = tempfile::tempdir().unwrap();
        // A file where the cache's folder should be: nothing can be created in it.
        let dir = d.path().join("cuda");
        std::fs::write(&dir, b"not a folder").unwrap();
        let compiles = std::cell::Cell::new(0);
        let compile = || {
            compiles.set(compiles.get() + 1);
            Ok((b"IMG k".to_vec(), None))
        };
        for _ in 0..3 {
            let b = binary(Some(&dir), "key", "bin", "k", false, &any, compile).unwrap();
            assert!(!b.cached && b.bytes == b"IMG k");
        }
        assert_eq!(compiles.get(), 3);
        assert_eq!(super::UNWRITABLE.lock().unwrap().iter().filter(|p| **p == dir).count(), 1, "warned of once");
        let e = std::fs::create_dir_all(dir.join("x")).unwrap_err();
        let said = super::unwritable(&dir, &e);
        assert!(said.starts_with(&format!("compile cache: {} cannot be written (", dir.display())) && said.contains("set KERNTUNE_CACHE_DIR"), "{said}");
        // A folder that takes the image but not its checksum (here a folder stands where the
        // checksum goes) keeps neither: an image without one would be served unchecked.
        let ok = d.path().join("hip");
        std::fs::create_dir_all(ok.join("key.sum")).unwrap();
        assert!(!binary(Some(&ok), "key", "bin", "k", false, &any, compile).unwrap().cached);
        assert!(!ok.join("key.bin").exists());
        std::fs::remove_dir(ok.join("key.sum")).unwrap();
        assert!(!binary(Some(&ok), "key", "bin", "k", false, &any, compile).unwrap().cached);
        assert!(binary(Some(&ok), "key", "bin", "k", false, &any, compile).unwrap().cached, "kept once it can be");
        assert_eq!(compiles.get(), 5);
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

    /// Sets `dir/name`'s modification time to `days` days ago.
    fn used_days_ago(dir: &std::path::Path, name: &str, days: u64) {
        let f = std::fs::File::options().append(true).open(dir.join(name)).unwrap();
        f.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(days * 86_400)).unwrap();
    }

    #[test]
    fn bounds_parse_and_bad_ones_say_what_to_write() {
        assert_eq!(super::parse_max("2GiB"), Ok(Some(2 << 30)));
        assert_eq!(super::parse_max(" 500 MB "), Ok(Some(500_000_000)));
        assert_eq!(super::parse_max("1048576"), Ok(Some(1 << 20)));
        assert_eq!(super::parse_max("OFF"), Ok(None));
        let zero = super::parse_max("0").unwrap_err();
        assert!(zero.contains("KERNTUNE_NO_COMPILE_CACHE=1"), "{zero}");
        let bad = super::parse_max("two gigs").unwrap_err();
        assert!(bad.contains("`two gigs` is not a size") && bad.contains("2GiB"), "{bad}");
        assert_eq!(super::size_text(3 << 29), "1.5 GiB");
    }

    #[test]
    fn pruning_removes_the_least_recently_used_entries_whole() {
        let root = tempfile::tempdir().unwrap();
        let (cuda, hip) = (root.path().join("cuda"), root.path().join("hip"));
        // Five entries of 1,000 bytes: used 50, 40, 30, 20 and 10 days ago; one is a template
        // instance (image and symbol), one a kept refusal, one in the HIP folder.
        for (key, days) in [("a", 50), ("b", 40), ("c", 30), ("d", 20)] {
            super::store(&cuda, key, "cubin", &[0; 1000]);
            used_days_ago(&cuda, &format!("{key}.cubin"), days);
        }
        super::store(&cuda, "b", "sym", b"_Z1bv");
        used_days_ago(&cuda, "b.sym", 40);
        super::store(&hip, "e", "err", &[b' '; 1000]);
        used_days_ago(&hip, "e.err", 10);
        // A write that never finished, two hours ago, and one under way.
        super::store(&cuda, "x", "cubin", b"");
        std::fs::write(cuda.join(".f.cubin.1.ThreadId(2)"), [0; 100]).unwrap();
        used_days_ago(&cuda, ".f.cubin.1.ThreadId(2)", 1);
        std::fs::write(cuda.join(".g.cubin.1.ThreadId(3)"), [0; 100]).unwrap();
        // `a` is served now: its use is today.
        let served = super::binary(Some(&cuda), "a", "cubin", "a", false, &any, || panic!("compiled")).unwrap();
        assert!(served.cached);

        let u = super::usage(root.path());
        assert_eq!(u.iter().map(|f| (f.backend.as_str(), f.binaries, f.refusals)).collect::<Vec<_>>(), [("cuda", 5, 0), ("hip", 0, 1)]);
        assert_eq!(u[0].bytes, 4005 + 100, "the entries' bytes and the stale temporary's (not one being written)");

        // Within the bound: only the stale temporary goes.
        let p = super::prune(root.path(), 10_000);
        assert_eq!((p.removed, p.removed_bytes, p.kept), (0, 100, 6));
        assert_eq!(
            p.line(10_000, super::MAX_VAR).as_deref(),
            Some("compile cache: removed 100 B of files left by compiles whose process ended while storing them; 6 entries kept (4.9 KiB)")
        );
        assert!(!cuda.join(".f.cubin.1.ThreadId(2)").exists() && cuda.join(".g.cubin.1.ThreadId(3)").exists());

        // Over a bound of 4,000 bytes (5,105 held): down to 3,200, the oldest first — `b`
        // (with its symbol) and `c`; `a`, served today, stays.
        let p = super::prune(root.path(), 4_000);
        assert_eq!((p.removed, p.removed_bytes, p.kept, p.kept_bytes), (2, 2005, 4, 3000));
        assert_eq!(p.unused_for_s.map(|s| s / 86_400), Some(30), "the most recently used entry removed");
        assert!(
            p.line(4_000, super::MAX_VAR).unwrap().contains("removed the 2 least recently used entries (2.0 KiB, none used in the last 30 days)"),
            "{:?}",
            p.line(4_000, super::MAX_VAR)
        );
        let left: std::collections::BTreeSet<String> = std::fs::read_dir(&cuda).unwrap().map(|f| f.unwrap().file_name().into_string().unwrap()).collect();
        assert_eq!(left, ["a.cubin", "d.cubin", "x.cubin", ".g.cubin.1.ThreadId(3)"].map(String::from).into(), "whole entries go");
        assert!(hip.join("e.err").exists());
        assert_eq!(super::prune(root.path(), 4_000).line(4_000, super::MAX_VAR), None, "nothing more to do");
        // A missing root prunes nothing and fails nothing.
        assert_eq!(super::prune(&root.path().join("none"), 1), super::Pruned::default());
    }

    #[test]
    fn a_kernels_remembered_footprint_is_no_entry() {
        let root = tempfile::tempdir().unwrap();
        let cuda = root.path().join("cuda");
        super::store(&cuda, "k1", "cubin", &[0u8; 1000]);
        super::store(&cuda, "kernelhash", super::FOOTPRINT, b"146812928");
        let u = super::usage(root.path());
        assert_eq!((u[0].binaries, u[0].refusals, u[0].bytes), (1, 0, 1000), "{u:?}");
        // Pruned to nothing, it stays: the next tune of the kernel still reads it.
        let p = super::prune(root.path(), 1);
        assert_eq!(p.removed, 1, "{p:?}");
        assert_eq!(super::load(&cuda, "kernelhash", super::FOOTPRINT).as_deref(), Some(&b"146812928"[..]));
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
        let first = binary(Some(d.path()), "bad", "bin", "k", true, &any, refused).unwrap_err();
        assert!(matches!(first, BackendError::CompileFailed { .. }), "{first:?}");
        assert!(super::holds(Some(d.path()), "bad", "bin", true), "a kept refusal is served without compiling");
        let again = binary(Some(d.path()), "bad", "bin", "k", true, &any, || panic!("compiled again")).unwrap_err();
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
            let _ = binary(Some(d.path()), key, "bin", "k", false, &any, || Err(e));
            assert!(!super::holds(Some(d.path()), key, "bin", false), "{key}");
            assert!(binary(Some(d.path()), key, "bin", "k", false, &any, || Ok((b"x".to_vec(), None))).is_ok(), "{key} compiles again");
        }
        // A damaged refusal is compiled again.
        super::store(d.path(), "torn", "err", b"{\"log\": ");
        assert!(binary(Some(d.path()), "torn", "bin", "k", false, &any, || Ok((b"x".to_vec(), None))).is_ok());
        // A later success wins over an older refusal.
        super::store(d.path(), "bad", "bin", b"image");
        super::store(d.path(), "bad", "sym", b"k");
        assert!(binary(Some(d.path()), "bad", "bin", "k", true, &any, || panic!("compiled")).unwrap().cached);
    }
}
