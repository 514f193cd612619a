//! The kernel a job tunes: its source text, language, entry point (optionally a C++ template
//! with arguments) and the compiler options that shape its binary.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// Reads a text file the user wrote (a spec, a kernel, a header, a T1 file), saying what is wrong
/// when it is not UTF-8 text: a file saved as UTF-16 (Windows' "Unicode") or in a code page
/// (Latin-1's `é`) got only "stream did not contain valid UTF-8", which says neither where nor
/// what to do.
pub fn read_text(path: &Path) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    if bytes.starts_with(&[0xff, 0xfe]) || bytes.starts_with(&[0xfe, 0xff]) {
        return Err("it is UTF-16 text (it starts with a UTF-16 byte-order mark); save it as UTF-8".into());
    }
    String::from_utf8(bytes).map_err(|e| {
        let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
        let start = good.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let column = String::from_utf8_lossy(&good[start..]).chars().count() + 1;
        let byte = e.as_bytes()[good.len()];
        format!("it is not UTF-8 text: byte 0x{byte:02x} at line {line}, column {column} is not UTF-8 (a file saved in Latin-1 or another code page?); save it as UTF-8")
    })
}

/// A kernel's source and the options that shape its binary.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct KernelSource {
    /// Entry-point name. CUDA and HIP kernels may be templates, named with their template
    /// arguments as in Kernel Tuner (`matmul<BM, BN, float>`): see [`KernelSource::instance`].
    pub name: String,
    /// Source language: `cuda`, `hip`, `wgsl` (or `fake`).
    pub language: String,
    /// The source text.
    pub code: String,
    /// Where it came from, for messages.
    pub path: Option<String>,
    /// Extra compiler options (e.g. `-use_fast_math`).
    pub options: Vec<String>,
    /// An architecture override, e.g. `sm_90a` (defaults to the device's).
    pub arch: Option<String>,
    /// The user's own headers the source includes (CUDA and HIP), read when the source is and
    /// handed to the compiler in memory: a header's contents are part of the kernel's identity,
    /// so an edited header is a new kernel to the database and the compile cache, and the
    /// source compiles the same wherever it is compiled (a worker, another machine). See
    /// [`local_headers`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<Header>,
}

/// A header file a kernel includes, found beside it or in a folder its options name (`-I`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Header {
    /// The name the source includes it by (`"tile.h"`, `<mylib/ops.cuh>`: `tile.h`,
    /// `mylib/ops.cuh`): what the compiler is told the contents' name is.
    pub name: String,
    /// Where it was read from, for messages and listings.
    pub path: String,
    /// Its text.
    pub code: String,
}

impl KernelSource {
    /// A source with no extra options.
    pub fn new(name: &str, language: &str, code: &str) -> KernelSource {
        KernelSource { name: name.into(), language: language.into(), code: code.into(), path: None, options: vec![], arch: None, headers: vec![] }
    }

    /// The entry point's name without a template argument list (`matmul` for
    /// `matmul<BM, BN, float>`): what a WGSL entry point is called, and the CUDA/HIP program
    /// name. Reports show the whole name, template arguments included.
    pub fn entry(&self) -> &str {
        self.name.split_once('<').map_or(self.name.as_str(), |(base, _)| base.trim_end())
    }

    /// The template instantiation a config compiles, for a templated name: each identifier in
    /// the argument list that names one of `defines` becomes its value, so
    /// `matmul<BM, BN, float>` with `BM = 64`, `BN = 32` is `matmul<64, 32, float>`. CUDA and
    /// HIP hand this to the compiler as a name expression and launch the symbol it lowers to.
    /// `None` for a plain name.
    pub fn instance(&self, defines: &[(String, String)]) -> Option<String> {
        let (base, args) = self.name.split_once('<')?;
        let mut out = format!("{}<", base.trim_end());
        let mut chars = args.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if c.is_ascii_alphabetic() || c == '_' {
                let mut end = i + c.len_utf8();
                while let Some(&(j, d)) = chars.peek() {
                    if !(d.is_ascii_alphanumeric() || d == '_') {
                        break;
                    }
                    end = j + d.len_utf8();
                    chars.next();
                }
                let word = &args[i..end];
                out.push_str(defines.iter().find(|(k, _)| k == word).map_or(word, |(_, v)| v.as_str()));
            } else {
                out.push(c);
            }
        }
        Some(out)
    }

    /// Checks a kernel name: an identifier, optionally followed by one template argument list
    /// (`matmul<BM, BN, float>`). The error says what is wrong.
    pub fn check_name(name: &str) -> Result<(), String> {
        let (base, args) = match name.split_once('<') {
            Some((b, a)) => (b.trim_end(), Some(a)),
            None => (name, None),
        };
        let ident = |s: &str| s.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_') && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ident(base) {
            return Err(format!(
                "`{}` is not a kernel name: use the entry point's identifier, optionally with template arguments (`matmul<BM, BN, float>`)",
                crate::spec::error::quote(name)
            ));
        }
        if let Some(args) = args {
            let mut depth = 1i32;
            for (i, c) in args.char_indices() {
                match c {
                    '<' => depth += 1,
                    '>' => depth -= 1,
                    _ => {}
                }
                if depth == 0 && !args[i + 1..].trim().is_empty() {
                    return Err(format!("`{name}` has text after its template argument list"));
                }
            }
            if depth != 0 {
                return Err(format!("`{name}`: the template argument list is not closed with `>`"));
            }
            if args.trim_end().trim_end_matches('>').trim().is_empty() {
                return Err(format!("`{name}`: the template argument list is empty"));
            }
        }
        Ok(())
    }

    /// Hash of everything here that changes the binary.
    pub fn identity_hash(&self) -> String {
        let opts = self.options.join("\u{1}");
        let arch = self.arch.clone().unwrap_or_default();
        hash_with_headers([self.name.as_bytes(), self.language.as_bytes(), self.code.as_bytes(), opts.as_bytes(), arch.as_bytes()], &self.headers)
    }
}

/// The hash of `parts` ([`crate::hash::hash_parts`]) and of `headers`, each header by its name
/// and contents (not where it was read, so the same files elsewhere hash alike): the kernel's
/// identity and the compile caches' keys. Without headers, the hash of `parts` alone, as it
/// always was, so that entries and binaries of sources without headers stand.
pub fn hash_with_headers<'a>(parts: impl IntoIterator<Item = &'a [u8]>, headers: &[Header]) -> String {
    if headers.is_empty() {
        return crate::hash::hash_parts(parts);
    }
    let text: String = headers.iter().map(|h| format!("{}\u{1}{}\u{2}", h.name, h.code)).collect();
    let mut all: Vec<&[u8]> = parts.into_iter().collect();
    all.push(text.as_bytes());
    crate::hash::hash_parts(all)
}

/// At most this many headers are read for one source.
const MAX_HEADERS: usize = 1024;
/// At most this many bytes of them.
const MAX_HEADER_BYTES: usize = 32 << 20;

/// The user's own headers that CUDA or HIP source `code` includes, and those they include in
/// turn: a quoted include (`#include "tile.h"`) is looked for beside the file that includes it,
/// then beside the source (`source_dir`), then in the folders the compiler options name (`-I
/// dir`, `-Idir`, `--include-path=dir`; a relative one from `base`, the spec's folder, else the
/// working folder, where the compiler would look); an include in angle brackets only in those
/// folders. A header is the user's when the file found is inside the spec's folder or the
/// source's (or below); one elsewhere (the toolkit's, a library's such as CUTLASS, however it
/// is included) and one found nowhere are left to the compiler, as the options say. Each of
/// the user's is kept under the name it is included by, which is how the compiler is given
/// it; two files included by one name are an error, as are more than 1,024 headers or 32 MiB
/// of them, and a header that cannot be read.
pub fn local_headers(code: &str, source_dir: &Path, base: &Path, options: &[String]) -> Result<Vec<Header>, String> {
    let dirs = include_dirs(options, base);
    let roots: Vec<std::path::PathBuf> = [source_dir, base].iter().filter_map(|d| d.canonicalize().ok()).collect();
    let mut found: Vec<(Header, std::path::PathBuf)> = Vec::new();
    let mut queue: std::collections::VecDeque<(String, std::path::PathBuf)> = std::collections::VecDeque::from([(code.to_string(), source_dir.to_path_buf())]);
    let mut bytes = 0usize;
    while let Some((text, dir)) = queue.pop_front() {
        for (name, quoted) in includes(&text) {
            let beside = if quoted { vec![dir.join(&name), source_dir.join(&name)] } else { Vec::new() };
            let Some(path) = beside.into_iter().chain(dirs.iter().map(|d| d.join(&name))).find(|p| p.is_file()) else { continue };
            let Ok(real) = path.canonicalize() else { continue };
            if !roots.iter().any(|r| real.starts_with(r)) {
                continue;
            }
            if let Some((h, was)) = found.iter().find(|(h, _)| h.name == name) {
                if *was == real {
                    continue;
                }
                return Err(format!(
                    "two files are included as `{name}`: {} and {}; the compiler is given headers by the names they are included by, so rename one (or include it by a path that tells them apart)",
                    h.path,
                    path.display()
                ));
            }
            if found.len() == MAX_HEADERS {
                return Err(format!("the source includes more than {MAX_HEADERS} headers from its own folders; include fewer, or keep a library's headers outside the spec's folder (they are then the compiler's to find)"));
            }
            let text = read_text(&path).map_err(|e| format!("cannot read header {} (included as `{name}`): {e}", path.display()))?;
            bytes += text.len();
            if bytes > MAX_HEADER_BYTES {
                return Err(format!(
                    "the headers the source includes from its own folders exceed {} MiB; include fewer, or keep a library's headers outside the spec's folder (they are then the compiler's to find)",
                    MAX_HEADER_BYTES >> 20
                ));
            }
            let parent = path.parent().map(Path::to_path_buf).unwrap_or_default();
            found.push((Header { name, path: path.display().to_string(), code: text.clone() }, real));
            queue.push_back((text, parent));
        }
    }
    Ok(found.into_iter().map(|(h, _)| h).collect())
}

/// The folders compiler options name for includes, a relative one from `base` where it is
/// there, else as given (from the working folder).
fn include_dirs(options: &[String], base: &Path) -> Vec<std::path::PathBuf> {
    let mut dirs = Vec::new();
    let mut it = options.iter();
    while let Some(o) = it.next() {
        let dir = match o.as_str() {
            "-I" | "--include-path" => it.next().cloned(),
            _ => o.strip_prefix("--include-path=").or_else(|| o.strip_prefix("-I")).map(str::to_string),
        };
        if let Some(d) = dir.filter(|d| !d.is_empty()) {
            let d = Path::new(&d);
            dirs.push(if d.is_relative() && base.join(d).is_dir() { base.join(d) } else { d.to_path_buf() });
        }
    }
    dirs
}

/// The names `text` includes (`#include "tile.h"`, `#include <cub/cub.cuh>`), in order.
pub fn included(text: &str) -> impl Iterator<Item = String> {
    includes(text).into_iter().map(|(name, _)| name)
}

/// The names `text` includes, each with whether it is quoted (`"…"`) rather than in angle
/// brackets, in order. Directives commented out with `//` are skipped; a block comment or an
/// `#if 0` is not understood (a header included there is read, which costs nothing but its
/// place in the kernel's identity).
fn includes(text: &str) -> Vec<(String, bool)> {
    text.lines()
        .filter_map(|l| {
            let rest = l.trim_start().strip_prefix('#')?.trim_start().strip_prefix("include")?.trim_start();
            let (close, quoted) = match rest.chars().next()? {
                '"' => ('"', true),
                '<' => ('>', false),
                _ => return None,
            };
            let name = &rest[1..][..rest[1..].find(close)?];
            (!name.is_empty()).then(|| (name.to_string(), quoted))
        })
        .collect()
}

/// Headers that only one of CUDA and HIP has: a source that includes one of the other
/// language's is in the wrong language (HIP's `hip/...`; CUDA's runtime, cooperative groups,
/// fp16, CUB and WMMA headers).
const HIP_ONLY: &[&str] = &["hip/"];
const CUDA_ONLY: &[&str] =
    &["cuda_runtime.h", "cuda_runtime_api.h", "cuda.h", "device_launch_parameters.h", "cooperative_groups.h", "cuda_fp16.h", "cuda_bf16.h", "cub/", "mma.h"];

/// The compiler options a WGSL source may carry (`[kernel] options = { wgsl = [...] }`), each
/// turning off one of the runtime checks that wgpu's shader translator (naga) adds to every
/// shader, and what it turns off. The wgpu backend maps them to `wgpu::ShaderRuntimeChecks`.
pub const WGSL_OPTIONS: &[(&str, &str)] = &[
    ("no-loop-bounding", "the guard naga adds to every loop against infinite loops (it can keep drivers from unrolling)"),
    (
        "no-bounds-checks",
        "naga's clamps on array and buffer indices (buffer accesses stay checked by the driver where Vulkan's robust buffer access is on, which wgpu enables)",
    ),
    ("no-int-div-checks", "the guards around integer division and remainder by zero"),
    ("unchecked", "all three"),
];

/// Checks a source's options for its language: WGSL takes only [`WGSL_OPTIONS`]; CUDA and HIP
/// options go to their compilers, which judge them.
pub fn check_options(language: &str, options: &[String]) -> Result<(), String> {
    if language != "wgsl" {
        return Ok(());
    }
    for o in options {
        if !WGSL_OPTIONS.iter().any(|(name, _)| name == o) {
            let names: Vec<&str> = WGSL_OPTIONS.iter().map(|(n, _)| *n).collect();
            return Err(format!("`{o}` is not a WGSL option; use one of {}", names.join(", ")));
        }
    }
    Ok(())
}

/// Whether a CUDA or HIP source includes the other language's headers: `Err` says which header,
/// and names a file beside it whose name suggests the right language, if there is one.
pub fn check_language(language: &str, path: &std::path::Path, code: &str) -> Result<(), String> {
    let (other, foreign) = match language {
        "cuda" => ("HIP", HIP_ONLY),
        "hip" => ("CUDA", CUDA_ONLY),
        _ => return Ok(()),
    };
    let include = code.lines().map(str::trim).filter(|l| l.starts_with("#include") || l.starts_with("# include")).find_map(|l| {
        let name = l.trim_start_matches('#').trim_start().trim_start_matches("include").trim().trim_matches(|c| c == '<' || c == '>' || c == '"');
        foreign.iter().any(|f| if f.ends_with('/') { name.starts_with(f) } else { name == *f || name.ends_with(&format!("/{f}")) }).then(|| name.to_string())
    });
    let Some(header) = include else { return Ok(()) };
    let wanted = if language == "cuda" { "CUDA" } else { "HIP" };
    let sibling = sibling_in(language, path).map(|s| format!("; {} beside it looks like the {wanted} version", s.display())).unwrap_or_default();
    Err(format!(
        "{} includes `{header}`, a {other} header, but the kernel is declared as {wanted}: point the spec at the {wanted} source, or declare the language as {other}{sibling}",
        path.display()
    ))
}

/// A file beside `path` with the same base name whose name suggests `language` (`conv.cu` for
/// `conv.cu.hip` in CUDA; `conv.hip`, `conv.cu.hip`, `conv_hip.cpp` for `conv.cu` in HIP).
fn sibling_in(language: &str, path: &std::path::Path) -> Option<std::path::PathBuf> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    let name = path.file_name()?.to_str()?;
    let base = name.split('.').next()?.trim_end_matches("_hip").trim_end_matches("_cuda").to_string();
    let mut found: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.file_name().and_then(|n| n.to_str()) != Some(name))
        .filter(|p| {
            let Some(n) = p.file_name().and_then(|n| n.to_str()) else { return false };
            let stem = n.split('.').next().unwrap_or("");
            let same = stem == base || stem == format!("{base}_hip") || stem == format!("{base}_cuda");
            let hip = n.contains(".hip") || stem.ends_with("_hip");
            same && match language {
                "cuda" => !hip && (n.ends_with(".cu") || n.ends_with(".cuh") || stem.ends_with("_cuda")),
                _ => hip,
            }
        })
        .collect();
    found.sort();
    found.into_iter().next()
}

#[cfg(test)]
mod tests {
    use super::KernelSource;

    fn defines(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn a_templated_name_instantiates_with_the_configs_values() {
        let k = KernelSource::new("matmul <BM, BN,float, Tile<BK>, BM_X>", "cuda", "");
        assert_eq!(k.entry(), "matmul");
        let d = defines(&[("BM", "64"), ("BN", "32"), ("BK", "16")]);
        // Whole identifiers only: BM_X and float are left alone.
        assert_eq!(k.instance(&d).unwrap(), "matmul<64, 32,float, Tile<16>, BM_X>");
        let plain = KernelSource::new("triad", "cuda", "");
        assert_eq!(plain.entry(), "triad");
        assert_eq!(plain.instance(&d), None);
    }

    #[test]
    fn kernel_names_are_checked() {
        for ok in ["triad", "_k2", "matmul<BM, BN, float>", "k<Tile<8>, 4>", "k <A> "] {
            assert_eq!(KernelSource::check_name(ok), Ok(()), "{ok}");
        }
        for (bad, says) in [
            ("", "not a kernel name"),
            ("2fast", "not a kernel name"),
            ("my kernel", "not a kernel name"),
            ("k<A", "not closed"),
            ("k<A>>", "text after"),
            ("k<A> x", "text after"),
            ("k<>", "empty"),
        ] {
            let e = KernelSource::check_name(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn the_users_headers_are_found_beside_the_source_and_in_its_include_folders() {
        use super::local_headers;
        let d = tempfile::tempdir().unwrap();
        let w = |p: &str, text: &str| {
            let p = d.path().join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        w("kernels/tile.h", "#pragma once\n#include \"detail/load.h\"\n#define TILE 4\n");
        w("kernels/detail/load.h", "#include \"util.h\"  // beside load.h\n");
        w("kernels/detail/util.h", "// util\n");
        w("include/mylib/ops.cuh", "#include <cuda_fp16.h>\n#include \"tile.h\"\n");
        let code = "#include <cuda_fp16.h>\n#include \"tile.h\"\n  #  include <mylib/ops.cuh>\n// #include \"commented.h\"\n#include \"missing.h\"\n";
        let src = d.path().join("kernels");
        let hs = local_headers(code, &src, d.path(), &["-I".into(), "include".into()]).unwrap();
        let names: Vec<&str> = hs.iter().map(|h| h.name.as_str()).collect();
        // The toolkit's and the missing one are left to the compiler; tile.h is read once.
        assert_eq!(names, ["tile.h", "mylib/ops.cuh", "detail/load.h", "util.h"]);
        assert_eq!(hs[0].code, "#pragma once\n#include \"detail/load.h\"\n#define TILE 4\n");
        // `-Idir` and `--include-path=dir`, relative to the spec's folder, and absolute.
        for opt in ["-Iinclude".to_string(), "--include-path=include".into(), format!("-I{}", d.path().join("include").display())] {
            let hs = local_headers("#include <mylib/ops.cuh>\n", &src, d.path(), std::slice::from_ref(&opt)).unwrap();
            assert_eq!(hs.len(), 4, "{opt}: ops.cuh, then tile.h beside the source and the two it includes");
        }
        // A library's folder outside the spec's (here a toolkit-like one): left to the compiler.
        let lib = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(lib.path().join("cutlass")).unwrap();
        std::fs::write(lib.path().join("cutlass/gemm.h"), "#include \"cutlass/cutlass.h\"\n").unwrap();
        std::fs::write(lib.path().join("cutlass/cutlass.h"), "\n").unwrap();
        let opts = [format!("-I{}", lib.path().display())];
        assert!(local_headers("#include <cutlass/gemm.h>\n#include \"cutlass/cutlass.h\"\n", &src, d.path(), &opts).unwrap().is_empty());
        // Angle brackets are not looked for beside the source; no includes, no headers.
        assert!(local_headers("#include <tile.h>\n", &src, d.path(), &[]).unwrap().is_empty());
        assert!(local_headers("__global__ void k() {}\n", &src, d.path(), &[]).unwrap().is_empty());
        // Two files by one name cannot both be given to the compiler.
        w("kernels/detail/tile.h", "// another\n");
        w("kernels/a.h", "#include \"detail/b.h\"\n");
        w("kernels/detail/b.h", "#include \"tile.h\"\n");
        let e = local_headers("#include \"tile.h\"\n#include \"a.h\"\n", &src, d.path(), &[]).unwrap_err();
        assert!(e.contains("two files are included as `tile.h`") && e.contains("rename one"), "{e}");
    }

    #[test]
    fn a_headers_contents_are_part_of_the_kernels_identity() {
        let mut k = KernelSource::new("k", "cuda", "#include \"tile.h\"\n");
        let plain = k.identity_hash();
        let h = |code: &str, path: &str| super::Header { name: "tile.h".into(), path: path.into(), code: code.into() };
        k.headers = vec![h("#define TILE 4", "/a/tile.h")];
        let four = k.identity_hash();
        assert_ne!(plain, four);
        k.headers = vec![h("#define TILE 8", "/a/tile.h")];
        assert_ne!(four, k.identity_hash(), "an edited header is another kernel");
        k.headers = vec![h("#define TILE 4", "/elsewhere/tile.h")];
        assert_eq!(four, k.identity_hash(), "the same header read elsewhere is the same kernel");
        // A source without headers hashes as it did before headers were read (stored entries stand).
        let bare = KernelSource::new("triad", "cuda", "code");
        assert_eq!(bare.identity_hash(), crate::hash::hash_parts([&b"triad"[..], b"cuda", b"code", b"", b""]));
    }

    #[test]
    fn text_that_is_not_utf8_is_told_where_and_what_to_do() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("k.wgsl");
        std::fs::write(&p, b"// ok\n// caf\xe9\n").unwrap();
        let e = super::read_text(&p).unwrap_err();
        assert!(e.contains("byte 0xe9 at line 2, column 7") && e.contains("save it as UTF-8"), "{e}");
        std::fs::write(&p, b"\xff\xfe/\x00/\x00").unwrap();
        let e = super::read_text(&p).unwrap_err();
        assert!(e.contains("UTF-16") && e.contains("save it as UTF-8"), "{e}");
        std::fs::write(&p, "// caf\u{e9}\n").unwrap();
        assert_eq!(super::read_text(&p).unwrap(), "// caf\u{e9}\n");
        assert!(super::read_text(&d.path().join("none")).unwrap_err().contains("No such file"));
    }
}
