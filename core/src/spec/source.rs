//! The kernel a job tunes: its source text, language, entry point (optionally a C++ template
//! with arguments) and the compiler options that shape its binary.

use serde::{Deserialize, Serialize};

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
}

impl KernelSource {
    /// A source with no extra options.
    pub fn new(name: &str, language: &str, code: &str) -> KernelSource {
        KernelSource { name: name.into(), language: language.into(), code: code.into(), path: None, options: vec![], arch: None }
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
        crate::hash::hash_parts([self.name.as_bytes(), self.language.as_bytes(), self.code.as_bytes(), opts.as_bytes(), arch.as_bytes()])
    }
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
}
