//! hipRTC compilation: options, a persistent cache of code objects, parallel-safe.

use crate::hiprtc::Program;
use kerntune_core::compiler::{CompileJob, CompileOutput};
use kerntune_core::store::cache::Binary;
use kerntune_core::{BackendError, CompileRequest, Header};
use std::path::PathBuf;

/// Typed compile options; [`CompileOptions::to_args`] is the one place they become hipRTC
/// arguments.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompileOptions {
    /// `--offload-arch`, e.g. `gfx942`.
    pub arch: String,
    /// `-DNAME=VALUE`, in order.
    pub defines: Vec<(String, String)>,
    /// The C++ standard (`-std=c++17`), unless the spec's options give their own.
    pub std: Option<String>,
    /// Extra options from the spec.
    pub extra: Vec<String>,
}

impl CompileOptions {
    /// The options for a request on a device of architecture `device_arch`.
    pub fn for_request(req: &CompileRequest<'_>, device_arch: &str) -> CompileOptions {
        CompileOptions {
            arch: req.source.arch.clone().unwrap_or_else(|| device_arch.to_string()),
            defines: req.defines.to_vec(),
            std: (!req.source.options.iter().any(|o| o.starts_with("-std=") || o.starts_with("--std="))).then(|| "c++17".into()),
            extra: req.source.options.clone(),
        }
    }

    /// hipRTC arguments.
    pub fn to_args(&self) -> Vec<String> {
        let mut v = vec![format!("--offload-arch={}", self.arch), "-O3".to_string()];
        v.extend(self.std.iter().map(|s| format!("-std={s}")));
        v.extend(self.defines.iter().map(|(k, x)| format!("-D{k}={x}")));
        v.extend(self.extra.iter().cloned());
        v
    }
}

/// Compiles kernel `name` (the entry point; `instance`: the template instantiation to compile,
/// for a templated kernel, see [`kerntune_core::KernelSource::instance`]) with the user's
/// `headers` (given to hipRTC in memory), or serves the code object and its symbol from
/// `cache_dir` (keyed by source, headers, options and hipRTC version; hipRTC's refusal too, see
/// [`kerntune_core::store::cache`]). Every kernel is named by a name expression, so a C++
/// kernel (no `extern "C"`) launches by its mangled symbol. On a miss hipRTC is called through
/// `run`: [`hiprtc_job`] in this process, or a compiler process (see
/// [`kerntune_core::compiler`]).
#[allow(clippy::too_many_arguments)]
pub fn compile(
    name: &str,
    instance: Option<&str>,
    code: &str,
    headers: &[Header],
    opts: &CompileOptions,
    cache_dir: Option<&PathBuf>,
    version: &str,
    run: &dyn Fn(&CompileJob) -> Result<CompileOutput, BackendError>,
) -> Result<Binary, BackendError> {
    let args = opts.to_args();
    let expr = instance.unwrap_or(name);
    let key = cache_key(expr, code, headers, &args, version);
    let job = || CompileJob { name: name.into(), expr: Some(expr.into()), code: code.into(), headers: headers.to_vec(), args: args.clone() };
    kerntune_core::store::cache::binary(cache_dir.map(PathBuf::as_path), &key, "hsaco", name, true, &kerntune_core::store::cache::checksum_only, || run(&job()))
}

/// hipRTC's compile of a job, in this process: what a compiler process runs (see
/// [`crate::backend::COMPILER`]).
pub fn hiprtc_job(job: &CompileJob) -> Result<CompileOutput, BackendError> {
    let failed = |e: crate::hiprtc::HiprtcError| BackendError::CompileFailed { log: e.0, options: job.args.clone() };
    let machine = |e: crate::hiprtc::HiprtcError| BackendError::other(e.0);
    let expr = job.expr.as_deref().unwrap_or(&job.name);
    let prog = Program::new(&job.code, &format!("{}.hip", job.name), &job.headers).map_err(machine)?;
    prog.add_name_expression(expr).map_err(failed)?;
    crate::hiprtc::require_gpu().map_err(machine)?;
    prog.compile(&job.args).map_err(failed)?;
    let lowered = Some(prog.lowered_name(expr).map_err(failed)?);
    Ok((prog.code().map_err(machine)?, lowered))
}

/// The compile cache's key of a compilation (the name expression, the source, the user's
/// headers it includes — none: the key as it always was —, the options and the hipRTC
/// version).
fn cache_key(expr: &str, code: &str, headers: &[Header], args: &[String], version: &str) -> String {
    let a = args.join("\u{1}");
    kerntune_core::spec::source::hash_with_headers([expr.as_bytes(), code.as_bytes(), a.as_bytes(), version.as_bytes()], headers)
}

/// Whether [`compile`] would serve these arguments from the cache in `cache_dir`.
pub fn cached(name: &str, instance: Option<&str>, code: &str, headers: &[Header], opts: &CompileOptions, cache_dir: Option<&PathBuf>, version: &str) -> bool {
    let key = cache_key(instance.unwrap_or(name), code, headers, &opts.to_args(), version);
    kerntune_core::store::cache::holds(cache_dir.map(PathBuf::as_path), &key, "hsaco", true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kerntune_core::{Config, KernelSource, Launch};

    #[test]
    fn the_cache_holds_what_compile_serves_without_hiprtc() {
        let dir = tempfile::tempdir().unwrap();
        let d = Some(dir.path().to_path_buf());
        let src = KernelSource::new("k", "hip", "");
        let (cfg, defines, launch) = (Config::new([("B", 1)]), vec![("B".to_string(), "1".to_string())], Launch::default());
        let req = CompileRequest { source: &src, code: "code", config: &cfg, defines: &defines, launch: &launch, scalars: &[], buffers: &[], abandon: None };
        let opts = CompileOptions::for_request(&req, "gfx942");
        assert!(!cached("k", None, "code", &[], &opts, d.as_ref(), "6.1"));
        let key = cache_key("k", "code", &[], &opts.to_args(), "6.1");
        kerntune_core::store::cache::store(dir.path(), &key, "hsaco", b"object");
        kerntune_core::store::cache::store(dir.path(), &key, "sym", b"k");
        assert!(cached("k", None, "code", &[], &opts, d.as_ref(), "6.1"));
        assert!(!cached("k", None, "code", &[], &opts, d.as_ref(), "6.2"), "another hipRTC is another compile");
        assert!(!cached("k", None, "code", &[], &opts, None, "6.1"), "no cache directory, nothing cached");
        // What it holds, compile serves (hipRTC is never called: compiling needs an AMD GPU).
        let b = compile("k", None, "code", &[], &opts, d.as_ref(), "6.1", &hiprtc_job).unwrap();
        assert!(b.cached && b.bytes == b"object" && b.entry == "k", "{b:?}");
        // A code object whose bytes changed since it was stored is compiled again (by the
        // compiler `run` stands for here), not served.
        let run = |_: &CompileJob| -> Result<CompileOutput, BackendError> { Ok((b"object 2".to_vec(), Some("k".into()))) };
        assert!(!compile("k", None, "code 2", &[], &opts, d.as_ref(), "6.1", &run).unwrap().cached);
        assert!(compile("k", None, "code 2", &[], &opts, d.as_ref(), "6.1", &run).unwrap().cached);
        let key2 = cache_key("k", "code 2", &[], &opts.to_args(), "6.1");
        std::fs::write(dir.path().join(format!("{key2}.hsaco")), b"object 3").unwrap();
        let again = compile("k", None, "code 2", &[], &opts, d.as_ref(), "6.1", &run).unwrap();
        assert!(!again.cached && again.bytes == b"object 2", "{again:?}");
        // The user's headers are in the key by their contents.
        let h = |code: &str| vec![Header { name: "tile.h".into(), path: "./tile.h".into(), code: code.into() }];
        assert!(!cached("k", None, "code", &h("#define T 4"), &opts, d.as_ref(), "6.1"), "another header is another compile");
        assert_ne!(cache_key("k", "code", &h("#define T 4"), &opts.to_args(), "6.1"), cache_key("k", "code", &h("#define T 8"), &opts.to_args(), "6.1"));
    }

    #[test]
    fn each_option_maps_to_its_hiprtc_argument() {
        let mut src = KernelSource::new("k", "hip", "");
        src.options = vec!["-ffast-math".into()];
        let cfg = Config::new([("BK", 16)]);
        let defines = vec![("BK".to_string(), "16".to_string())];
        let launch = Launch::default();
        let req = CompileRequest { source: &src, code: "", config: &cfg, defines: &defines, launch: &launch, scalars: &[], buffers: &[], abandon: None };
        let o = CompileOptions::for_request(&req, "gfx942");
        assert_eq!(o.to_args(), vec!["--offload-arch=gfx942", "-O3", "-std=c++17", "-DBK=16", "-ffast-math"]);
        let mut s2 = src.clone();
        s2.arch = Some("gfx90a:xnack-".into());
        let req2 = CompileRequest { source: &s2, ..req };
        assert_eq!(CompileOptions::for_request(&req2, "gfx942").arch, "gfx90a:xnack-");
    }
}
