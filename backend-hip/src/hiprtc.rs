//! hipRTC, the HIP run-time compiler: hip-sys has no bindings for it, so this is a small FFI
//! layer of its own, in the usual three layers.
//!
//! - **sys**: the C entry points, resolved at run time. ROCm 6 ships them in `libhiprtc.so`;
//!   ROCm 5 (Debian's `libamdhip64-dev` is 5.2) keeps them in `libamdhip64.so`. Both are tried.
//! - **result**: each call returns `Result<_, HiprtcError>` with hipRTC's error string.
//! - **safe**: [`Program`] owns an `hiprtcProgram` and destroys it on drop.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::OnceLock;

type Prog = *mut c_void;

/// The hipRTC entry points kerntune uses.
struct Api {
    _lib: libloading::Library,
    version: unsafe extern "C" fn(*mut c_int, *mut c_int) -> c_int,
    error_string: unsafe extern "C" fn(c_int) -> *const c_char,
    create: unsafe extern "C" fn(*mut Prog, *const c_char, *const c_char, c_int, *const *const c_char, *const *const c_char) -> c_int,
    compile: unsafe extern "C" fn(Prog, c_int, *const *const c_char) -> c_int,
    add_name_expression: unsafe extern "C" fn(Prog, *const c_char) -> c_int,
    lowered_name: unsafe extern "C" fn(Prog, *const c_char, *mut *const c_char) -> c_int,
    log_size: unsafe extern "C" fn(Prog, *mut usize) -> c_int,
    log: unsafe extern "C" fn(Prog, *mut c_char) -> c_int,
    code_size: unsafe extern "C" fn(Prog, *mut usize) -> c_int,
    code: unsafe extern "C" fn(Prog, *mut c_char) -> c_int,
    destroy: unsafe extern "C" fn(*mut Prog) -> c_int,
}

/// Library names tried, in order (ROCm 6 first, then ROCm 5).
pub const CANDIDATES: &[&str] = &["libhiprtc.so", "libhiprtc.so.6", "libhiprtc.so.5", "libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"];

fn load() -> Result<Api, String> {
    let mut tried = Vec::new();
    for name in CANDIDATES {
        // SAFETY: loading a system library whose initialisers are ROCm's own.
        let lib = match unsafe { libloading::Library::new(name) } {
            Ok(l) => l,
            Err(e) => {
                tried.push(format!("{name}: {e}"));
                continue;
            }
        };
        // SAFETY: the symbol types match hipRTC's C declarations (hiprtc.h).
        let api = unsafe {
            (|| -> Result<Api, libloading::Error> {
                Ok(Api {
                    version: *lib.get(b"hiprtcVersion\0")?,
                    error_string: *lib.get(b"hiprtcGetErrorString\0")?,
                    create: *lib.get(b"hiprtcCreateProgram\0")?,
                    compile: *lib.get(b"hiprtcCompileProgram\0")?,
                    add_name_expression: *lib.get(b"hiprtcAddNameExpression\0")?,
                    lowered_name: *lib.get(b"hiprtcGetLoweredName\0")?,
                    log_size: *lib.get(b"hiprtcGetProgramLogSize\0")?,
                    log: *lib.get(b"hiprtcGetProgramLog\0")?,
                    code_size: *lib.get(b"hiprtcGetCodeSize\0")?,
                    code: *lib.get(b"hiprtcGetCode\0")?,
                    destroy: *lib.get(b"hiprtcDestroyProgram\0")?,
                    _lib: lib,
                })
            })()
        };
        match api {
            Ok(a) => return Ok(a),
            Err(e) => tried.push(format!("{name}: {e}")),
        }
    }
    Err(format!("hipRTC not found (tried {})", tried.join("; ")))
}

fn api() -> Result<&'static Api, String> {
    static API: OnceLock<Result<Api, String>> = OnceLock::new();
    API.get_or_init(load).as_ref().map_err(Clone::clone)
}

/// A hipRTC failure with its message.
#[derive(Debug, Clone, PartialEq)]
pub struct HiprtcError(pub String);

fn check(a: &Api, code: c_int, what: &str) -> Result<(), HiprtcError> {
    if code == 0 {
        return Ok(());
    }
    // SAFETY: hipRTC returns a static string for any code.
    let msg = unsafe { CStr::from_ptr((a.error_string)(code)) }.to_string_lossy().into_owned();
    Err(HiprtcError(format!("{what}: {msg} ({code})")))
}

/// hipRTC's version, `(major, minor)`.
pub fn version() -> Result<(i32, i32), HiprtcError> {
    let a = api().map_err(HiprtcError)?;
    let (mut ma, mut mi) = (0, 0);
    // SAFETY: valid out-pointers.
    check(a, unsafe { (a.version)(&mut ma, &mut mi) }, "hiprtcVersion")?;
    Ok((ma, mi))
}

/// An `hiprtcProgram`.
pub struct Program {
    api: &'static Api,
    prog: Prog,
}

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: created by hiprtcCreateProgram, destroyed once.
        unsafe {
            (self.api.destroy)(&mut self.prog);
        }
    }
}

/// Refuses, before anything is compiled, where no AMD GPU is present (see
/// [`Program::compile`]): the machine's condition, not the compiler's verdict on a kernel.
pub fn require_gpu() -> Result<(), HiprtcError> {
    let mut n = 0;
    // SAFETY: valid out-pointer; hipGetDeviceCount initialises the runtime if needed.
    let r = unsafe { hip_sys::hiprt::hipGetDeviceCount(&mut n) };
    if r != hip_sys::hiprt::hipError_t::hipSuccess || n == 0 {
        return Err(HiprtcError("hipRTC needs an AMD GPU present to compile (ROCm 5.x crashes without one); no AMD GPU found".into()));
    }
    Ok(())
}

impl Program {
    /// Creates a program from source.
    pub fn new(source: &str, name: &str, headers: &[kerntune_core::Header]) -> Result<Program, HiprtcError> {
        let a = api().map_err(HiprtcError)?;
        let src = CString::new(source).map_err(|_| HiprtcError("the source contains a NUL byte".into()))?;
        let n = CString::new(name).unwrap_or_default();
        let nul = |_| HiprtcError("a header the source includes contains a NUL byte".into());
        let texts = headers.iter().map(|h| CString::new(h.code.as_str()).map_err(nul)).collect::<Result<Vec<_>, _>>()?;
        let names = headers.iter().map(|h| CString::new(h.name.as_str()).map_err(nul)).collect::<Result<Vec<_>, _>>()?;
        let (tp, np): (Vec<*const c_char>, Vec<*const c_char>) = (texts.iter().map(|t| t.as_ptr()).collect(), names.iter().map(|t| t.as_ptr()).collect());
        let (hp, ip) = if headers.is_empty() { (std::ptr::null(), std::ptr::null()) } else { (tp.as_ptr(), np.as_ptr()) };
        let mut prog: Prog = std::ptr::null_mut();
        // SAFETY: valid C strings (and arrays of as many, `headers.len()`) that outlive the call;
        // hipRTC copies them.
        check(a, unsafe { (a.create)(&mut prog, src.as_ptr(), n.as_ptr(), headers.len() as c_int, hp, ip) }, "hiprtcCreateProgram")?;
        Ok(Program { api: a, prog })
    }

    /// Asks the compiler to instantiate `expression` (a template instance such as
    /// `matmul<64, 32, float>`); after compiling, [`Program::lowered_name`] gives its symbol.
    pub fn add_name_expression(&self, expression: &str) -> Result<(), HiprtcError> {
        let e = CString::new(expression).map_err(|_| HiprtcError("the kernel name contains a NUL byte".into()))?;
        // SAFETY: valid program and C string; hipRTC copies the expression.
        check(self.api, unsafe { (self.api.add_name_expression)(self.prog, e.as_ptr()) }, "hiprtcAddNameExpression")
    }

    /// The mangled symbol a name expression added before compiling was lowered to.
    pub fn lowered_name(&self, expression: &str) -> Result<String, HiprtcError> {
        let e = CString::new(expression).map_err(|_| HiprtcError("the kernel name contains a NUL byte".into()))?;
        let mut out: *const c_char = std::ptr::null();
        // SAFETY: valid program, C string and out-pointer.
        check(self.api, unsafe { (self.api.lowered_name)(self.prog, e.as_ptr(), &mut out) }, "hiprtcGetLoweredName")?;
        if out.is_null() {
            return Err(HiprtcError(format!("`{expression}` was not lowered to a symbol")));
        }
        // SAFETY: a NUL-terminated string owned by the live program, copied here.
        Ok(unsafe { CStr::from_ptr(out) }.to_string_lossy().into_owned())
    }

    /// Compiles with `options`; on failure the error holds the compiler log.
    ///
    /// Needs an AMD GPU: ROCm 5.x's hipRTC looks up the current device's ISA even when
    /// `--offload-arch` is given and crashes inside `amd_comgr` without one (seen with
    /// Debian's ROCm 5.2), so this refuses instead.
    pub fn compile(&self, options: &[String]) -> Result<(), HiprtcError> {
        require_gpu()?;
        let c: Vec<CString> = options.iter().map(|o| CString::new(o.as_str()).unwrap_or_default()).collect();
        let p: Vec<*const c_char> = c.iter().map(|x| x.as_ptr()).collect();
        // SAFETY: `p` points at C strings that outlive the call.
        let r = unsafe { (self.api.compile)(self.prog, p.len() as c_int, p.as_ptr()) };
        if r != 0 {
            let log = self.log().unwrap_or_default();
            return Err(HiprtcError(if log.is_empty() { format!("hiprtcCompileProgram failed ({r})") } else { log }));
        }
        Ok(())
    }

    /// The compile log.
    pub fn log(&self) -> Result<String, HiprtcError> {
        let mut n = 0usize;
        // SAFETY: valid program and out-pointer.
        check(self.api, unsafe { (self.api.log_size)(self.prog, &mut n) }, "hiprtcGetProgramLogSize")?;
        let mut buf = vec![0u8; n.max(1)];
        // SAFETY: `buf` holds the reported size.
        check(self.api, unsafe { (self.api.log)(self.prog, buf.as_mut_ptr() as *mut c_char) }, "hiprtcGetProgramLog")?;
        Ok(CStr::from_bytes_until_nul(&buf).map(|c| c.to_string_lossy().trim().to_string()).unwrap_or_default())
    }

    /// The compiled code object.
    pub fn code(&self) -> Result<Vec<u8>, HiprtcError> {
        let mut n = 0usize;
        // SAFETY: valid program and out-pointer.
        check(self.api, unsafe { (self.api.code_size)(self.prog, &mut n) }, "hiprtcGetCodeSize")?;
        let mut buf = vec![0u8; n];
        // SAFETY: `buf` holds the reported size.
        check(self.api, unsafe { (self.api.code)(self.prog, buf.as_mut_ptr() as *mut c_char) }, "hiprtcGetCode")?;
        Ok(buf)
    }
}
