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
                "`{name}` is not a kernel name: use the entry point's identifier, optionally with template arguments (`matmul<BM, BN, float>`)"
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
