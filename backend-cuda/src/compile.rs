//! NVRTC compilation to CUBIN, in parallel, with a persistent compile cache.
//!
//! NVRTC is thread-safe, so the tuner's worker pool compiles many configs at once. Compiling for
//! the device's real architecture (`--gpu-architecture=sm_90`) yields a CUBIN, which the driver
//! loads without a JIT step. Each CUBIN (with its symbol, for a template instance) is cached on
//! disk under a key that hashes the source, the user's headers it includes, every option, the
//! architecture and the NVRTC version, so a second run compiles nothing; so is NVRTC's refusal
//! of a config (see [`kerntune_core::store::cache`]). The user's headers are given to NVRTC in
//! memory, by the names the source includes them by.

use cudarc::nvrtc::sys as nvrtc;
use kerntune_core::compiler::{CompileJob, CompileOutput};
use kerntune_core::store::cache::Binary;
use kerntune_core::{BackendError, CompileRequest, Header};
use std::ffi::{c_char, CStr, CString};
use std::path::PathBuf;

/// Typed compile options; [`CompileOptions::to_args`] is the single place they become NVRTC
/// arguments.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompileOptions {
    /// Target architecture, e.g. `sm_90` or `sm_90a`.
    pub arch: String,
    /// `-DNAME=VALUE` defines, in order.
    pub defines: Vec<(String, String)>,
    /// `--maxrregcount`.
    pub maxrregcount: Option<u32>,
    /// The C++ standard (`--std=c++17`).
    pub std: Option<String>,
    /// Extra options from the spec, passed through.
    pub extra: Vec<String>,
    /// The CUDA toolkit's header folders, for a source that includes headers (see
    /// `toolkit_includes`).
    pub include: Vec<String>,
}

/// The CUDA toolkit's header folder, where `cuda_fp16.h`, `cuda_bf16.h` and `mma.h` are: NVRTC
/// searches none of its own for them, so a kernel that includes one compiles with this folder
/// on its include path, as under nvcc (and Kernel Tuner, whose CuPy does the same). The first
/// of `$CUDA_PATH/include`, `$CUDA_HOME/include`, `/usr/local/cuda/include` and `/usr/include`
/// (Debian's `nvidia-cuda-dev`) that holds `cuda_fp16.h`.
pub fn toolkit_include() -> Option<&'static str> {
    static DIR: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let env = ["CUDA_PATH", "CUDA_HOME"].into_iter().filter_map(std::env::var_os).map(|d| PathBuf::from(d).join("include"));
        env.chain(["/usr/local/cuda/include", "/usr/include"].map(PathBuf::from)).find(|d| d.join("cuda_fp16.h").is_file()).map(|d| d.display().to_string())
    })
    .as_deref()
}

/// The folders a source that includes headers compiles with: the toolkit's (`toolkit_include`)
/// and, where the toolkit has one, its `cccl` folder — CUDA 13 moved CUB, Thrust and libcu++
/// there (`#include <cub/cub.cuh>`), which nvcc searches by itself and NVRTC does not.
pub fn toolkit_includes() -> &'static [String] {
    static DIRS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    DIRS.get_or_init(|| {
        let Some(dir) = toolkit_include() else { return Vec::new() };
        let cccl = PathBuf::from(dir).join("cccl");
        let mut v = vec![dir.to_string()];
        if cccl.is_dir() {
            v.push(cccl.display().to_string());
        }
        v
    })
}

impl CompileOptions {
    /// The options for one request on a device of architecture `device_arch`.
    pub fn for_request(req: &CompileRequest<'_>, device_arch: &str) -> CompileOptions {
        CompileOptions {
            arch: req.source.arch.clone().unwrap_or_else(|| device_arch.to_string()),
            defines: req.defines.to_vec(),
            maxrregcount: req.config.knobs.maxnreg,
            // The user's own `-std=` (T1 files often give `-std=c++11`) replaces the default.
            std: (!req.source.options.iter().any(|o| o.starts_with("-std=") || o.starts_with("--std="))).then(|| "c++17".into()),
            extra: req.source.options.clone(),
            // Only for a source that includes something, so that the options (and the compile
            // cache's keys) of every other kernel stay as they were.
            include: if req.code.contains("#include") { toolkit_includes().to_vec() } else { Vec::new() },
        }
    }

    /// NVRTC arguments.
    pub fn to_args(&self) -> Vec<String> {
        let mut v = vec![format!("--gpu-architecture={}", self.arch)];
        if let Some(s) = &self.std {
            v.push(format!("--std={s}"));
        }
        if let Some(r) = self.maxrregcount {
            v.push(format!("--maxrregcount={r}"));
        }
        for (k, val) in &self.defines {
            v.push(format!("-D{k}={val}"));
        }
        v.extend(self.extra.iter().cloned());
        // After the user's own, so that their `-I` folders are searched first.
        v.extend(self.include.iter().map(|dir| format!("--include-path={dir}")));
        v
    }
}

/// The NVRTC version, `major.minor`.
pub fn nvrtc_version() -> Result<(i32, i32), String> {
    let (mut ma, mut mi) = (0, 0);
    // SAFETY: two valid out-pointers; the library is loaded (or this panics inside cudarc,
    // which callers prevent by probing `is_culib_present` first).
    let r = unsafe { nvrtc::nvrtcVersion(&mut ma, &mut mi) };
    if r == nvrtc::nvrtcResult::NVRTC_SUCCESS {
        Ok((ma, mi))
    } else {
        Err(format!("nvrtcVersion failed: {r:?}"))
    }
}

/// The compile cache.
#[derive(Clone)]
pub struct CompileCache {
    dir: Option<PathBuf>,
    version: String,
}

impl CompileCache {
    /// A cache in `dir` (`None` disables caching) for NVRTC `version`.
    pub fn new(dir: Option<PathBuf>, version: String) -> CompileCache {
        CompileCache { dir, version }
    }

    /// The cache key of a compilation: the name expression, the source, the headers it
    /// includes from the user's folders (none: the key as it always was), the arguments and the
    /// NVRTC version.
    pub fn key(&self, name: &str, code: &str, headers: &[Header], args: &[String]) -> String {
        let a = args.join("\u{1}");
        kerntune_core::spec::source::hash_with_headers([name.as_bytes(), code.as_bytes(), a.as_bytes(), self.version.as_bytes()], headers)
    }

    /// Whether [`CompileCache::compile`] would serve these arguments from the cache (a CUBIN, or
    /// NVRTC's refusal).
    pub fn holds(&self, name: &str, instance: Option<&str>, code: &str, headers: &[Header], opts: &CompileOptions) -> bool {
        let headers = &with_assert_h(code, headers);
        let key = self.key(instance.unwrap_or(name), code, headers, &opts.to_args());
        kerntune_core::store::cache::holds(self.dir.as_deref(), &key, "cubin", true)
    }

    /// Compiles kernel `name` (the entry point; `instance`: the template instantiation to
    /// compile, for a templated kernel, see [`kerntune_core::KernelSource::instance`]) with the
    /// user's `headers`, or returns the cached CUBIN and symbol (or NVRTC's cached refusal).
    /// Every kernel is named to NVRTC by a name expression, so a C++ kernel (a mangled name: no
    /// `extern "C"`) launches like any other. A config whose `__shared__` arrays exceed what a
    /// kernel may have statically is [`BackendError::OutOfResources`], from the cache too.
    pub fn compile(&self, name: &str, instance: Option<&str>, code: &str, headers: &[Header], opts: &CompileOptions) -> Result<Binary, BackendError> {
        self.compile_with(name, instance, code, headers, opts, &nvrtc_job)
    }

    /// [`CompileCache::compile`] with NVRTC called through `run` on a miss (in this process, or
    /// in a compiler process: see [`kerntune_core::compiler`]).
    pub fn compile_with(
        &self,
        name: &str,
        instance: Option<&str>,
        code: &str,
        headers: &[Header],
        opts: &CompileOptions,
        run: &dyn Fn(&CompileJob) -> Result<CompileOutput, BackendError>,
    ) -> Result<Binary, BackendError> {
        let headers = &with_assert_h(code, headers)[..];
        let args = opts.to_args();
        let expr = instance.unwrap_or(name);
        let key = self.key(expr, code, headers, &args);
        let job = || CompileJob { name: name.into(), expr: Some(expr.into()), code: code.into(), headers: headers.to_vec(), args: args.clone() };
        kerntune_core::store::cache::binary(self.dir.as_deref(), &key, "cubin", name, true, &crate::cubin::readable, || run(&job())).map_err(|e| match &e {
            BackendError::CompileFailed { log, .. } => static_shared_overflow(log).map_or(e, BackendError::OutOfResources),
            _ => e,
        })
    }
}

/// `assert.h` as NVRTC lacks it: the device-side assertion as CUDA's own headers declare it
/// (a failed one prints `FILE:LINE: FUNCTION: block: […], thread: […] Assertion `EXPR` failed.`
/// and stops the kernel with `CUDA_ERROR_ASSERT`).
const ASSERT_H: &str = r#"// kerntune's assert.h for NVRTC, which has none: the device-side assert as CUDA's headers declare it.
#pragma once
#ifdef NDEBUG
#define assert(e) ((void)0)
#else
extern "C" __device__ void __assertfail(const char* message, const char* file, unsigned int line, const char* function, size_t charSize);
#define assert(e) ((e) ? (void)0 : __assertfail(#e, __FILE__, __LINE__, __func__, sizeof(char)))
#endif
"#;

/// `headers` with kerntune's `assert.h` (and `cassert`) added where the source or one of them
/// includes it and the user gave none by that name: NVRTC has none of the C library's headers,
/// and a kernel written for nvcc that asserts includes one (without it, every config fails to
/// compile with `cannot open source file "assert.h"`).
fn with_assert_h<'h>(code: &str, headers: &'h [Header]) -> std::borrow::Cow<'h, [Header]> {
    let includes = |text: &str, name: &str| {
        text.lines().any(|l| {
            let l = l.trim_start();
            l.strip_prefix('#').map(str::trim_start).and_then(|l| l.strip_prefix("include")).is_some_and(|l| {
                let l = l.trim();
                l == format!("<{name}>") || l == format!("\"{name}\"")
            })
        })
    };
    let mut added = Vec::new();
    for name in ["assert.h", "cassert"] {
        if !headers.iter().any(|h| h.name == name) && (includes(code, name) || headers.iter().any(|h| includes(&h.code, name))) {
            added.push(Header { name: name.into(), path: format!("kerntune's {name} for NVRTC"), code: ASSERT_H.into() });
        }
    }
    if added.is_empty() {
        std::borrow::Cow::Borrowed(headers)
    } else {
        std::borrow::Cow::Owned(headers.iter().cloned().chain(added).collect())
    }
}

/// NVRTC's compile of a job: what a compiler process runs (see [`crate::backend::COMPILER`]).
pub(crate) fn nvrtc_job(job: &CompileJob) -> Result<CompileOutput, BackendError> {
    nvrtc_compile(&job.name, job.expr.as_deref(), &job.code, &job.headers, &job.args)
}

/// What a compiler process does as it starts, before its first compile: an empty kernel
/// compiled (and forgotten), which loads NVRTC and its builtins.
pub(crate) fn nvrtc_warm() {
    let empty = "extern \"C\" __global__ void kerntune_warm() {}";
    let _ = std::panic::catch_unwind(|| nvrtc_compile("kerntune_warm", None, empty, &[], &["--gpu-architecture=sm_75".to_string()]));
}

/// Owns an `nvrtcProgram`.
struct Program(nvrtc::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: the program was created by nvrtcCreateProgram and is destroyed once.
        unsafe {
            nvrtc::nvrtcDestroyProgram(&mut self.0);
        }
    }
}

fn check(r: nvrtc::nvrtcResult, what: &str) -> Result<(), BackendError> {
    if r == nvrtc::nvrtcResult::NVRTC_SUCCESS {
        Ok(())
    } else {
        Err(BackendError::other(format!("{what} failed: {r:?}")))
    }
}

/// Compiles `code` (program `name`, the entry point) to a CUBIN; with a name expression
/// `instance` (the kernel's name, or a template instance such as `matmul<64, 32, float>`), also
/// returns the symbol NVRTC lowered it to (mangled for a C++ kernel).
pub(crate) fn nvrtc_compile(
    name: &str,
    instance: Option<&str>,
    code: &str,
    headers: &[Header],
    args: &[String],
) -> Result<(Vec<u8>, Option<String>), BackendError> {
    let failed = |log: String| BackendError::CompileFailed { log, options: args.to_vec() };
    let src = CString::new(code).map_err(|_| failed("the source contains a NUL byte".into()))?;
    let pname = CString::new(format!("{name}.cu")).unwrap_or_default();
    let texts = headers.iter().map(|h| CString::new(h.code.as_str())).collect::<Result<Vec<_>, _>>();
    let names = headers.iter().map(|h| CString::new(h.name.as_str())).collect::<Result<Vec<_>, _>>();
    let (Ok(texts), Ok(names)) = (texts, names) else { return Err(failed("a header the source includes contains a NUL byte".into())) };
    let (text_ptrs, name_ptrs): (Vec<*const c_char>, Vec<*const c_char>) =
        (texts.iter().map(|t| t.as_ptr()).collect(), names.iter().map(|n| n.as_ptr()).collect());
    let (hp, np) = if headers.is_empty() { (std::ptr::null(), std::ptr::null()) } else { (text_ptrs.as_ptr(), name_ptrs.as_ptr()) };
    let mut prog: nvrtc::nvrtcProgram = std::ptr::null_mut();
    // SAFETY: valid C strings (and arrays of as many, `headers.len()`) that outlive the call;
    // NVRTC copies them.
    check(unsafe { nvrtc::nvrtcCreateProgram(&mut prog, src.as_ptr(), pname.as_ptr(), headers.len() as i32, hp, np) }, "nvrtcCreateProgram")?;
    let prog = Program(prog);
    let expr = instance.map(|i| CString::new(i).map_err(|_| failed("the kernel name contains a NUL byte".into()))).transpose()?;
    if let Some(e) = &expr {
        // SAFETY: valid program; NVRTC copies the expression.
        check(unsafe { nvrtc::nvrtcAddNameExpression(prog.0, e.as_ptr()) }, "nvrtcAddNameExpression")?;
    }
    let cargs: Vec<CString> = args.iter().map(|a| CString::new(a.as_str()).unwrap_or_default()).collect();
    let ptrs: Vec<*const c_char> = cargs.iter().map(|a| a.as_ptr()).collect();
    // SAFETY: `ptrs` holds valid C strings that outlive the call.
    let r = unsafe { nvrtc::nvrtcCompileProgram(prog.0, ptrs.len() as i32, ptrs.as_ptr()) };
    if r != nvrtc::nvrtcResult::NVRTC_SUCCESS {
        let log = failure_log(program_log(&prog), r);
        // NVRTC's verdict on the code and options (kept by the compile cache), or the machine's
        // (out of memory, an internal error: compiled again next time).
        return Err(match r {
            nvrtc::nvrtcResult::NVRTC_ERROR_COMPILATION | nvrtc::nvrtcResult::NVRTC_ERROR_INVALID_OPTION => failed(log),
            _ => BackendError::other(format!("NVRTC failed ({r:?}): {log}")),
        });
    }
    let mut size = 0usize;
    // SAFETY: valid program and out-pointer.
    check(unsafe { nvrtc::nvrtcGetCUBINSize(prog.0, &mut size) }, "nvrtcGetCUBINSize")?;
    if size == 0 {
        return Err(failed("NVRTC produced no CUBIN; compile for a real architecture (sm_XY), not a virtual one (compute_XY)".into()));
    }
    let mut buf = vec![0u8; size];
    // SAFETY: `buf` has the size NVRTC reported.
    check(unsafe { nvrtc::nvrtcGetCUBIN(prog.0, buf.as_mut_ptr() as *mut c_char) }, "nvrtcGetCUBIN")?;
    let lowered = match &expr {
        None => None,
        Some(e) => {
            let mut out: *const c_char = std::ptr::null();
            // SAFETY: the expression was added before compiling; NVRTC owns the returned string
            // until the program is destroyed, and it is copied before that.
            let r = unsafe { nvrtc::nvrtcGetLoweredName(prog.0, e.as_ptr(), &mut out) };
            if r != nvrtc::nvrtcResult::NVRTC_SUCCESS || out.is_null() {
                return Err(failed(format!("`{}` does not name a kernel in this source ({r:?})", e.to_string_lossy())));
            }
            // SAFETY: a NUL-terminated string owned by the live program.
            Some(unsafe { CStr::from_ptr(out) }.to_string_lossy().into_owned())
        }
    };
    Ok((buf, lowered))
}

/// ptxas's "uses too much shared data (0xcc00 bytes, 0xc000 max)": the config's static
/// (`__shared__`) arrays exceed the 48 KiB a kernel's static shared memory may have (beyond it,
/// only dynamic shared memory, opted into at launch), which no launch can change: a config that
/// does not fit, not a compiler error.
fn static_shared_overflow(log: &str) -> Option<kerntune_core::LimitViolation> {
    let rest = &log[log.find("uses too much shared data (")? + "uses too much shared data (".len()..];
    let hex = |t: &str| u64::from_str_radix(t.trim().trim_start_matches("0x"), 16).ok();
    let (used, rest) = rest.split_once(" bytes, ")?;
    let max = rest.split_once(" max)")?.0;
    Some(kerntune_core::LimitViolation {
        limit: "static shared memory (__shared__ arrays; more needs dynamic shared memory and [launch] shared_mem)".into(),
        requested: hex(used)?,
        allowed: hex(max)?,
    })
}

/// The log a failed compile reports: NVRTC's own, or when NVRTC wrote none (an invalid
/// option, an internal error, running out of memory) what it returned, so that a failure never
/// carries an empty log; a missing header's log also says where the toolkit's were looked for.
fn failure_log(log: Option<String>, r: nvrtc::nvrtcResult) -> String {
    match log.filter(|l| !l.trim().is_empty()) {
        Some(l) if l.contains("cannot open source file") && toolkit_include().is_none() => format!(
            "{l}\nkerntune found no CUDA toolkit headers (cuda_fp16.h) in $CUDA_PATH/include, $CUDA_HOME/include, /usr/local/cuda/include or /usr/include: set CUDA_PATH to the toolkit, or add `-I/path/to/include` to [kernel] options.cuda"
        ),
        Some(l) => l,
        None => format!("NVRTC returned {r:?} and wrote no log (an invalid option, or an internal error of the compiler)"),
    }
}

fn program_log(prog: &Program) -> Option<String> {
    let mut size = 0usize;
    // SAFETY: valid program and out-pointer.
    if unsafe { nvrtc::nvrtcGetProgramLogSize(prog.0, &mut size) } != nvrtc::nvrtcResult::NVRTC_SUCCESS || size == 0 {
        return None;
    }
    let mut buf = vec![0u8; size];
    // SAFETY: `buf` has the size NVRTC reported, including the terminating NUL.
    if unsafe { nvrtc::nvrtcGetProgramLog(prog.0, buf.as_mut_ptr() as *mut c_char) } != nvrtc::nvrtcResult::NVRTC_SUCCESS {
        return None;
    }
    CStr::from_bytes_until_nul(&buf).ok().map(|c| c.to_string_lossy().trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use kerntune_core::{Config, KernelSource, Launch};

    #[test]
    fn a_failed_compile_never_has_an_empty_log() {
        let r = nvrtc::nvrtcResult::NVRTC_ERROR_INVALID_OPTION;
        assert!(failure_log(None, r).contains("NVRTC_ERROR_INVALID_OPTION"));
        assert!(failure_log(Some("  \n".into()), r).contains("wrote no log"));
        assert_eq!(failure_log(Some("x.cu(3): error: y".into()), r), "x.cu(3): error: y");
        let missing = failure_log(Some("x.cu(1): catastrophic error: cannot open source file \"cuda_fp16.h\"".into()), r);
        assert_eq!(missing.contains("set CUDA_PATH"), toolkit_include().is_none(), "{missing}");
    }

    /// A kernel that includes `assert.h` or `cassert` (itself or through a header of the user's)
    /// is given kerntune's, unless the user has one by that name; others are left as they are.
    #[test]
    fn a_kernel_that_includes_assert_h_is_given_one() {
        let h = |name: &str, code: &str| Header { name: name.into(), path: name.into(), code: code.into() };
        let names = |v: &[Header]| v.iter().map(|h| h.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&with_assert_h("#include <assert.h>\n__global__ void k() { assert(1); }", &[])), ["assert.h"]);
        assert_eq!(names(&with_assert_h("  #  include \"cassert\"\n", &[])), ["cassert"]);
        assert_eq!(names(&with_assert_h("#include \"tile.h\"\n", &[h("tile.h", "#include <cassert>\n")])), ["tile.h", "cassert"]);
        assert_eq!(names(&with_assert_h("#include <assert.h>\n", &[h("assert.h", "// mine")])), ["assert.h"]);
        assert!(matches!(with_assert_h("// #include <assert.h> is not needed\n__global__ void k() {}", &[]), std::borrow::Cow::Borrowed(v) if v.is_empty()));
        assert!(with_assert_h("#include <assert.h>", &[])[0].code.contains("__assertfail(#e, __FILE__, __LINE__"));
    }

    #[test]
    fn too_much_static_shared_memory_is_a_config_that_does_not_fit() {
        let log = "ptxas error   : Entry function 'hgemm' uses too much shared data (0xcc00 bytes, 0xc000 max)";
        let v = static_shared_overflow(log).unwrap();
        assert_eq!((v.requested, v.allowed), (52224, 49152));
        assert!(v.to_string().contains("static shared memory") && v.to_string().contains("needs 52224 B, device allows 49152 B"), "{v}");
        assert!(static_shared_overflow("x.cu(3): error: identifier \"y\" is undefined").is_none());
    }

    #[test]
    fn each_option_maps_to_its_nvrtc_argument() {
        let mut src = KernelSource::new("sgemm", "cuda", "");
        src.options = vec!["-use_fast_math".into()];
        let mut cfg = Config::new([("BK", 16)]);
        cfg.knobs.maxnreg = Some(128);
        let defines = vec![("BK".to_string(), "16".to_string()), ("block_size_x".to_string(), "32".to_string())];
        let launch = Launch::default();
        let req = CompileRequest { source: &src, code: "", config: &cfg, defines: &defines, launch: &launch, scalars: &[], buffers: &[], abandon: None };
        let o = CompileOptions::for_request(&req, "sm_90");
        assert_eq!(o.to_args(), vec!["--gpu-architecture=sm_90", "--std=c++17", "--maxrregcount=128", "-DBK=16", "-Dblock_size_x=32", "-use_fast_math"]);
        let mut std11 = src.clone();
        std11.options = vec!["-std=c++11".into()];
        let req11 = CompileRequest { source: &std11, ..req.clone() };
        assert_eq!(
            CompileOptions::for_request(&req11, "sm_90").to_args()[1..3],
            ["--maxrregcount=128".to_string(), "-DBK=16".into()],
            "the spec's -std replaces the default"
        );
        let mut src90a = src.clone();
        src90a.arch = Some("sm_90a".into());
        let req = CompileRequest { source: &src90a, ..req };
        assert_eq!(CompileOptions::for_request(&req, "sm_90").arch, "sm_90a");
        assert!(CompileOptions::for_request(&req, "sm_90").include.is_empty(), "a source without #include gets no include path");
        let with_header = CompileRequest { code: "#include <cuda_fp16.h>\n", ..req };
        assert_eq!(CompileOptions::for_request(&with_header, "sm_90").include, toolkit_includes());
        assert_eq!(toolkit_includes().first().map(String::as_str), toolkit_include());
        let o =
            CompileOptions { include: vec!["/opt/cuda/include".into(), "/opt/cuda/include/cccl".into()], ..CompileOptions::for_request(&with_header, "sm_90") };
        let args = o.to_args();
        assert_eq!(args[args.len() - 2..], ["--include-path=/opt/cuda/include", "--include-path=/opt/cuda/include/cccl"], "after the user's own options");
    }

    #[test]
    fn the_cache_holds_what_compile_serves_without_nvrtc() {
        let dir = tempfile::tempdir().unwrap();
        let c = CompileCache::new(Some(dir.path().to_path_buf()), "13.0".into());
        let src = KernelSource::new("k", "cuda", "");
        let (cfg, defines, launch) = (Config::new([("B", 1)]), vec![("B".to_string(), "1".to_string())], Launch::default());
        let req = CompileRequest { source: &src, code: "code", config: &cfg, defines: &defines, launch: &launch, scalars: &[], buffers: &[], abandon: None };
        let opts = CompileOptions::for_request(&req, "sm_90");
        assert!(!c.holds("k", None, "code", &[], &opts));
        let key = c.key("k", "code", &[], &opts.to_args());
        // A CUBIN NVRTC made, whose kernel is `sgemm`.
        let image = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/cubin/sgemm_16_8_8_8_16.sm_90.cubin")).unwrap();
        kerntune_core::store::cache::store(dir.path(), &key, "cubin", &image);
        kerntune_core::store::cache::store(dir.path(), &key, "sym", b"sgemm");
        assert!(c.holds("k", None, "code", &[], &opts));
        assert!(!c.holds("k", Some("k<2>"), "code", &[], &opts), "another instance is another compile");
        assert!(!c.holds("k", None, "code2", &[], &opts));
        // What it holds, compile serves (NVRTC is never called: this machine may have none).
        let b = c.compile("k", None, "code", &[], &opts).unwrap();
        assert!(b.cached && b.bytes == image && b.entry == "sgemm", "{:?}", (b.cached, &b.entry));
        // A damaged CUBIN is not served: compiled again, by the compiler `run` stands for here.
        let compiled = |_: &CompileJob| -> Result<CompileOutput, BackendError> { Ok((image.clone(), Some("sgemm".into()))) };
        for damaged in [&image[..image.len() / 2], b"image"] {
            kerntune_core::store::cache::store(dir.path(), &key, "cubin", damaged);
            let b = c.compile_with("k", None, "code", &[], &opts, &compiled).unwrap();
            assert!(!b.cached && b.bytes == image, "{}", damaged.len());
        }
        // Nor one whose symbol file names another kernel.
        kerntune_core::store::cache::store(dir.path(), &key, "sym", b"other");
        assert!(!c.compile_with("k", None, "code", &[], &opts, &compiled).unwrap().cached);
        assert!(c.compile("k", None, "code", &[], &opts).unwrap().cached, "stored again");
        // A kept refusal is served as one; ptxas's static shared overflow as the limit it is.
        let refused = |log: &str| format!("{{\"log\": {log:?}, \"options\": []}}");
        let bad = c.key("k", "bad", &[], &opts.to_args());
        kerntune_core::store::cache::store(dir.path(), &bad, "err", refused("bad(1): error: expected a \";\"").as_bytes());
        assert!(c.holds("k", None, "bad", &[], &opts));
        assert!(matches!(c.compile("k", None, "bad", &[], &opts), Err(BackendError::CompileFailed { .. })));
        let big = c.key("k", "big", &[], &opts.to_args());
        let log = "ptxas error   : Entry function 'k' uses too much shared data (0xcc00 bytes, 0xc000 max)";
        kerntune_core::store::cache::store(dir.path(), &big, "err", refused(log).as_bytes());
        assert!(matches!(c.compile("k", None, "big", &[], &opts), Err(BackendError::OutOfResources(v)) if v.requested == 0xcc00));
    }

    #[test]
    fn cache_keys_cover_source_options_and_version() {
        let c = CompileCache::new(None, "13.0".into());
        let a = c.key("k", "code", &[], &["-DA=1".into()]);
        assert_ne!(a, c.key("k", "code", &[], &["-DA=2".into()]));
        assert_ne!(a, c.key("k", "code2", &[], &["-DA=1".into()]));
        assert_ne!(a, CompileCache::new(None, "12.8".into()).key("k", "code", &[], &["-DA=1".into()]));
        assert_eq!(a, c.key("k", "code", &[], &["-DA=1".into()]));
        // A header's contents are in the key, not where it was read.
        let header = |code: &str, path: &str| kerntune_core::Header { name: "tile.h".into(), path: path.into(), code: code.into() };
        let h = c.key("k", "code", &[header("#define T 4", "/a/tile.h")], &["-DA=1".into()]);
        assert_ne!(a, h);
        assert_ne!(h, c.key("k", "code", &[header("#define T 8", "/a/tile.h")], &["-DA=1".into()]));
        assert_eq!(h, c.key("k", "code", &[header("#define T 4", "/b/tile.h")], &["-DA=1".into()]));
    }
}
