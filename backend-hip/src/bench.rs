//! Device buffers, launches and event timing through the HIP runtime.

use crate::error::{check, map};
use hip_sys::hiprt::{self as hip, hipError_t};
use kerntune_core::backend::Notes;
use kerntune_core::measure::timing::{time_launches, Rotation, StreamOps};
use kerntune_core::measure::{memory, verify};
use kerntune_core::worker::KernelImage;
use kerntune_core::{Access, ArgData, BackendError, HostBuffer, L2Flush, Launch, ProblemData, TimeRequest, VerifyRequest};
use std::ffi::c_void;
use std::sync::Arc;
use std::time::Duration;

/// A compiled config: its code object, loaded as a module in this process (for the resource
/// report, and for launching when kernels run in-process) and shipped to the worker process
/// when isolation is on.
pub struct HipKernel {
    id: u64,
    name: String,
    code: Vec<u8>,
    module: hip::hipModule_t,
    pub(crate) func: hip::hipFunction_t,
    max_dynamic_lds: std::sync::Mutex<u32>,
    /// Whether workers may have loaded it (isolated mode): they are told when it is dropped.
    isolated: bool,
}

// SAFETY: module and function handles are process-wide in HIP and used under the runtime's own
// locking; kerntune only launches from the tuner's thread.
unsafe impl Send for HipKernel {}
// SAFETY: as above.
unsafe impl Sync for HipKernel {}

impl HipKernel {
    /// Loads a code object and finds `name` in it.
    pub(crate) fn load(code: Vec<u8>, name: &str, isolated: bool) -> Result<HipKernel, BackendError> {
        let mut module: hip::hipModule_t = std::ptr::null_mut();
        // SAFETY: `code` is a complete code object; out-pointer valid.
        check(unsafe { hip::hipModuleLoadData(&mut module, code.as_ptr() as *const c_void) }, "loading the code object")?;
        let cname = std::ffi::CString::new(name).map_err(|_| BackendError::other("kernel name contains a NUL byte"))?;
        let mut func: hip::hipFunction_t = std::ptr::null_mut();
        // SAFETY: module just loaded; name valid.
        let r = unsafe { hip::hipModuleGetFunction(&mut func, module, cname.as_ptr()) };
        if r != hipError_t::hipSuccess {
            // SAFETY: unloading what we loaded.
            unsafe { hip::hipModuleUnload(module) };
            return Err(BackendError::CompileFailed { log: format!("the code object has no kernel `{name}`"), options: vec![] });
        }
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(HipKernel { id, name: name.to_string(), code, module, func, max_dynamic_lds: std::sync::Mutex::new(0), isolated })
    }

    /// What the worker process needs to load this kernel.
    pub(crate) fn image(&self) -> KernelImage<'_> {
        KernelImage { id: self.id, name: &self.name, binary: &self.code }
    }

    /// A function attribute.
    pub(crate) fn attribute(&self, a: hip::hipFunction_attribute) -> Option<i64> {
        let mut v = 0;
        // SAFETY: valid function.
        (unsafe { hip::hipFuncGetAttribute(&mut v, a, self.func) } == hipError_t::hipSuccess).then_some(v as i64)
    }
}

impl Drop for HipKernel {
    fn drop(&mut self) {
        if self.isolated {
            kerntune_core::worker::kernel_dropped(self.id);
        }
        // SAFETY: loaded by us, unloaded once.
        unsafe { hip::hipModuleUnload(self.module) };
    }
}

struct DevBuf {
    ptr: *mut c_void,
    /// A device copy of the buffer's initial contents, which resets restore; null where the
    /// device had no room for one (see [`memory`]): resets then copy from the problem's host
    /// data.
    pristine: *mut c_void,
    bytes: usize,
    /// The buffer's index in the problem's arguments.
    arg: usize,
    /// The buffer's description; its data only for constant memory, which is filled from it.
    init: HostBuffer,
}

/// A problem's buffers on the device of this process, with pristine copies for fast restores
/// where the device has room (see [`memory`]).
pub struct LocalWorkspace {
    /// The problem, whose host data restores a buffer without a device copy.
    problem: Arc<ProblemData>,
    notes: Arc<Notes>,
    stream: hip::hipStream_t,
    bufs: Vec<DevBuf>,
    params: Vec<Vec<u8>>,
    /// The index in `params` of each buffer's pointer (`None`: a `__constant__`-only buffer).
    buf_params: Vec<Option<usize>>,
    /// Kernels whose module's `__constant__` symbols this workspace has filled.
    constants_filled: std::collections::HashSet<u64>,
    /// Copies of the buffers that rotating launches take turns on (made at the first one).
    rotation: Rotation<*mut c_void>,
    /// The device had no room for the rotation's copies: this workspace empties L2 by a memset
    /// instead, for every config alike.
    no_rotation: bool,
    /// Bytes that empty L2: twice its size (0: no flush).
    flush_bytes: usize,
    /// The buffer a memset flush writes, allocated at the first one.
    flush: Option<*mut c_void>,
    events: Vec<hip::hipEvent_t>,
    round: u8,
    /// The device's architecture, to compile the comparison kernel.
    arch: String,
    /// Device copies of the reference outputs (f32, f16 and bf16 buffers), for on-device
    /// verification. (Device addresses as integers: device memory is never dereferenced on the
    /// host.)
    refs: verify::DeviceReference<usize>,
    /// The comparison kernels loaded so far, by entry point.
    compare: Vec<(&'static str, HipKernel)>,
    counters: Option<*mut c_void>,
    /// The host data of buffers restored from the host, page-locked (see
    /// [`LocalWorkspace::pin_host_restores`]); unregistered when the workspace is dropped.
    pinned: Vec<*mut c_void>,
    /// Outputs compared on the host: the memory each is read back into, kept for the next
    /// verification, and whether it is page-locked (unregistered when the workspace is dropped).
    readback: std::collections::HashMap<usize, (HostBuffer, bool)>,
}

// SAFETY: used only from the tuner's thread.
unsafe impl Send for LocalWorkspace {}

/// The device operations core's on-device verification needs.
impl verify::DeviceCompare for LocalWorkspace {
    type Ptr = usize;

    fn upload(&mut self, want: &HostBuffer) -> Result<Option<usize>, BackendError> {
        let data = &want.data;
        let (free, total) = mem_info()?;
        let room = memory::fits(data.len(), free, memory::reserve(total, self.flush_bytes));
        let Some(p) = room.then(|| try_malloc(data.len())).transpose()?.flatten() else {
            self.notes.note(memory::compared_on_host(&want.name, data.len()));
            return Ok(None);
        };
        // SAFETY: `p` holds `data.len()` bytes.
        if let Err(e) = check(unsafe { hip::hipMemcpyHtoD(p, data.as_ptr() as *mut c_void, data.len()) }, "uploading the reference") {
            self.free(p as usize);
            return Err(e);
        }
        Ok(Some(p as usize))
    }

    fn free(&mut self, p: usize) {
        // SAFETY: allocated by `upload`, freed once.
        unsafe { hip::hipFree(p as *mut c_void) };
    }

    fn compare(
        &mut self,
        output: usize,
        want: usize,
        n: u64,
        kernel: &'static str,
        tol: kerntune_core::spec::Tolerance,
    ) -> Result<verify::CompareCounters, BackendError> {
        if !self.compare.iter().any(|(k, _)| *k == kernel) {
            self.compare.push((kernel, HipKernel::load(compare_code(&self.arch)?, kernel, false)?));
        }
        if self.counters.is_none() {
            self.counters = Some(malloc(std::mem::size_of::<verify::CompareCounters>())?);
        }
        let counters = self.counters.expect("allocated");
        let func = self.compare.iter().find(|(k, _)| *k == kernel).expect("loaded above").1.func;
        let mut init = verify::DEVICE_COMPARE_INIT;
        let mut args = verify::CompareArgs::new(self.bufs[output].ptr, want as *mut c_void, n, tol, counters);
        let mut params = args.pointers();
        let (blocks, threads) = (args.blocks(), verify::DEVICE_COMPARE_THREADS);
        let mut res: verify::CompareCounters = verify::DEVICE_COMPARE_INIT;
        // SAFETY: all pointers are device buffers of this process with the sizes used here;
        // `params` points into `args`, which outlives the synchronous launch-and-wait below.
        unsafe {
            check(hip::hipMemcpyHtoD(counters, init.as_mut_ptr() as *mut c_void, std::mem::size_of::<verify::CompareCounters>()), "verification counters")?;
            check(
                hip::hipModuleLaunchKernel(func, blocks, 1, 1, threads, 1, 1, 0, self.stream, params.as_mut_ptr(), std::ptr::null_mut()),
                "launch (verification kernel)",
            )?;
            check(hip::hipStreamSynchronize(self.stream), "launch (verification kernel)")?;
            check(hip::hipMemcpyDtoH(res.as_mut_ptr() as *mut c_void, counters, std::mem::size_of::<verify::CompareCounters>()), "verification counters")?;
        }
        Ok(res)
    }

    fn read_element(&mut self, output: usize, index: u64, dtype: kerntune_core::DType) -> Result<f64, BackendError> {
        let size = dtype.size();
        let mut g = [0u8; 8];
        let at = (self.bufs[output].ptr as *mut u8).wrapping_add(index as usize * size) as *mut c_void;
        // SAFETY: `index` < the buffer's element count; reads one element (at most 8 bytes).
        check(unsafe { hip::hipMemcpyDtoH(g.as_mut_ptr() as *mut c_void, at, size) }, "reading a mismatch")?;
        Ok(dtype.decode(&g[..size]))
    }

    fn read_back(&mut self, output: usize) -> Result<&HostBuffer, BackendError> {
        // SAFETY: valid stream.
        check(unsafe { hip::hipStreamSynchronize(self.stream) }, "launch (waiting for it)")?;
        let b = &self.bufs[output];
        let host = self.readback.entry(output).or_insert_with(|| {
            let mut host = HostBuffer { data: vec![0u8; b.bytes], ..b.init.described() };
            let p = host.data.as_mut_ptr() as *mut c_void;
            // SAFETY: registers the buffer's `bytes` bytes, which the workspace owns and never
            // resizes; Drop unregisters them before they are freed.
            let pinned = b.bytes > 0 && unsafe { hip::hipHostRegister(p, b.bytes, 0) } == hipError_t::hipSuccess;
            (host, pinned)
        });
        if b.bytes > 0 {
            // SAFETY: the host buffer and the device buffer hold `bytes` bytes.
            check(unsafe { hip::hipMemcpyDtoH(host.0.data.as_mut_ptr() as *mut c_void, b.ptr, b.bytes) }, "reading back")?;
        }
        Ok(&host.0)
    }
}

/// The comparison kernel's code object for `arch`, compiled once per architecture per process.
fn compare_code(arch: &str) -> Result<Vec<u8>, BackendError> {
    static CODE: verify::CompareBinaries = verify::CompareBinaries::new();
    CODE.get(arch, || {
        let opts = crate::compile::CompileOptions { arch: arch.to_string(), defines: vec![], std: Some("c++17".into()), extra: vec![] };
        crate::compile::compile(verify::DEVICE_COMPARE_KERNEL, None, verify::DEVICE_COMPARE_SRC, &[], &opts, None, "", &crate::compile::hiprtc_job)
            .map(|c| c.bytes)
            .map_err(|e| e.to_string())
    })
}

fn malloc(bytes: usize) -> Result<*mut c_void, BackendError> {
    try_malloc(bytes)?.ok_or_else(|| BackendError::other(format!("out of device memory allocating {bytes} B")))
}

/// An allocation on this process's device; `None` when it is out of memory.
fn try_malloc(bytes: usize) -> Result<Option<*mut c_void>, BackendError> {
    let mut p: *mut c_void = std::ptr::null_mut();
    // SAFETY: out-pointer valid.
    match unsafe { hip::hipMalloc(&mut p, bytes.max(4)) } {
        hipError_t::hipSuccess => Ok(Some(p)),
        hipError_t::hipErrorOutOfMemory => Ok(None),
        e => Err(map(e, "allocating device memory")),
    }
}

/// The device's free and total memory.
fn mem_info() -> Result<(usize, usize), BackendError> {
    let (mut free, mut total) = (0usize, 0usize);
    // SAFETY: valid out-pointers.
    check(unsafe { hip::hipMemGetInfo(&mut free, &mut total) }, "reading the device's free memory")?;
    Ok((free, total))
}

impl LocalWorkspace {
    /// Allocates and fills the problem's buffers, then device copies of their initial contents
    /// where the device has room ([`LocalWorkspace::make_copies`]).
    pub(crate) fn new(problem: &Arc<ProblemData>, flush_bytes: usize, arch: &str, notes: Arc<Notes>) -> Result<LocalWorkspace, BackendError> {
        let (free, total) = mem_info()?;
        let mut stream: hip::hipStream_t = std::ptr::null_mut();
        // SAFETY: out-pointer valid.
        check(unsafe { hip::hipStreamCreate(&mut stream) }, "creating a stream")?;
        let mut ws = LocalWorkspace {
            problem: problem.clone(),
            notes,
            stream,
            bufs: vec![],
            params: vec![],
            buf_params: vec![],
            constants_filled: Default::default(),
            rotation: Rotation::default(),
            no_rotation: false,
            flush_bytes,
            flush: None,
            events: vec![],
            round: 0,
            arch: arch.to_string(),
            refs: Default::default(),
            compare: Vec::new(),
            counters: None,
            pinned: Vec::new(),
            readback: Default::default(),
        };
        for (arg, a) in problem.args.iter().enumerate() {
            match a {
                ArgData::Buffer(b) => {
                    let ptr =
                        try_malloc(b.data.len())?.ok_or_else(|| BackendError::ProblemTooLarge(memory::does_not_fit(&problem.buffer_sizes(), free, total)))?;
                    ws.bufs.push(DevBuf { ptr, pristine: std::ptr::null_mut(), bytes: b.data.len(), arg, init: b.described() });
                    if !b.data.is_empty() {
                        // SAFETY: the allocation holds the buffer's bytes.
                        check(unsafe { hip::hipMemcpyHtoD(ptr, b.data.as_ptr() as *mut c_void, b.data.len()) }, "uploading")?;
                    }
                    if b.memory.is_argument() {
                        ws.buf_params.push(Some(ws.params.len()));
                        ws.params.push((ptr as u64).to_le_bytes().to_vec());
                    } else {
                        ws.buf_params.push(None);
                    }
                }
                ArgData::Scalar { dtype, value, .. } => ws.params.push(ArgData::scalar_bytes(*dtype, value)),
            }
        }
        ws.make_copies()?;
        Ok(ws)
    }

    /// The device copies of the buffers' initial contents, where the device keeps room for what
    /// a tune allocates later ([`memory::plan_copies`]); the report names the buffers left to
    /// be restored from the host.
    fn make_copies(&mut self) -> Result<(), BackendError> {
        let (free, total) = mem_info()?;
        let bufs = &mut self.bufs;
        let note = memory::make_copies(&self.problem.buffer_sizes(), Some((free, total)), self.flush_bytes, |i| {
            let b = &mut bufs[i];
            let Some(p) = try_malloc(b.bytes)? else { return Ok(false) };
            b.pristine = p;
            // SAFETY: both allocations hold `bytes` bytes.
            check(unsafe { hip::hipMemcpyDtoD(p, b.ptr, b.bytes) }, "copying")?;
            Ok(true)
        })?;
        if let Some(note) = note {
            self.notes.note(note);
            self.pin_host_restores();
        }
        Ok(())
    }

    /// Page-locks the host data of every buffer without a device copy, which each reset copies
    /// to the device, as CUDA's workspace does (there, pageable restores of 8 GiB cost about 6 s
    /// a config). Registered where it is (the workspace holds the problem); where the runtime
    /// refuses, the copies stay pageable.
    fn pin_host_restores(&mut self) {
        for b in self.bufs.iter().filter(|b| b.pristine.is_null() && b.bytes > 0) {
            let data = self.problem.buffer_data(b.arg);
            let p = data.as_ptr() as *mut c_void;
            // SAFETY: registers `data.len()` bytes of the problem's host data, which the
            // workspace keeps alive until Drop unregisters them; the runtime only reads them.
            match unsafe { hip::hipHostRegister(p, data.len(), 0) } {
                hipError_t::hipSuccess => self.pinned.push(p),
                e => tracing::debug!(buffer = b.init.name, "could not page-lock a buffer restored from the host: {e:?}"),
            }
        }
    }

    pub(crate) fn reset(&mut self, poison: bool) -> Result<(), BackendError> {
        for b in self.bufs.iter().filter(|b| b.bytes > 0) {
            // SAFETY: device buffers of `bytes` bytes; a host buffer of as many bytes, which the
            // synchronisation below outlives (the runtime only reads it).
            unsafe {
                if poison && b.init.access == Access::Write {
                    check(hip::hipMemsetD8Async(b.ptr, 0xFF, b.bytes, self.stream), "poisoning")?;
                } else if !b.pristine.is_null() {
                    check(hip::hipMemcpyDtoDAsync(b.ptr, b.pristine, b.bytes, self.stream), "restoring")?;
                } else {
                    let data = self.problem.buffer_data(b.arg);
                    check(hip::hipMemcpyHtoDAsync(b.ptr, data.as_ptr() as *mut c_void, b.bytes, self.stream), "restoring from the host")?;
                }
            }
        }
        // SAFETY: valid stream.
        check(unsafe { hip::hipStreamSynchronize(self.stream) }, "synchronizing")
    }

    /// Reads back the buffers whose `mask` entry is true; the others come back empty.
    pub(crate) fn read_masked(&mut self, mask: &[bool]) -> Result<Vec<HostBuffer>, BackendError> {
        // SAFETY: valid stream.
        check(unsafe { hip::hipStreamSynchronize(self.stream) }, "launch (waiting for it)")?;
        let mut out = Vec::with_capacity(self.bufs.len());
        for (i, b) in self.bufs.iter().enumerate() {
            let wanted = mask.get(i).copied().unwrap_or(false);
            let mut data = vec![0u8; if wanted { b.bytes } else { 0 }];
            if wanted && b.bytes > 0 {
                // SAFETY: `data` holds `bytes` bytes.
                check(unsafe { hip::hipMemcpyDtoH(data.as_mut_ptr() as *mut c_void, b.ptr, b.bytes) }, "reading back")?;
            }
            out.push(HostBuffer { data, ..b.init.clone() });
        }
        Ok(out)
    }

    /// Verification on the device, as in the CUDA backend: poison and restore, one timed launch,
    /// then core's [`verify::DeviceReference::check`] (the comparison kernel per selected f32
    /// output against a reference uploaded once per tune; other types compared on the host).
    /// Returns the verification launch's time.
    pub(crate) fn verify_on_device(&mut self, k: &HipKernel, launch: &Launch, req: &VerifyRequest<'_>) -> Result<Vec<f64>, BackendError> {
        self.reset(true)?;
        let t = self.time(k, launch, &TimeRequest { launches: 1, flush: L2Flush::Off, timeout: req.timeout })?;
        let mut refs = std::mem::take(&mut self.refs);
        let checked = refs.check(self, req);
        self.refs = refs;
        checked?;
        self.reset(false)?;
        Ok(t)
    }

    /// Makes the copies of the buffers for rotating launches, once (see [`Rotation::ensure`]);
    /// `false` (and a note for the report) when the device has no room for them.
    fn ensure_rotation(&mut self) -> Result<bool, BackendError> {
        if self.no_rotation {
            return Ok(false);
        }
        let span = self.flush_bytes;
        let rotated: Vec<&DevBuf> = self.bufs.iter().zip(&self.buf_params).filter(|(_, at)| at.is_some()).map(|(b, _)| b).collect();
        let need = self.rotation.bytes_to_make(rotated.iter().map(|b| b.bytes).sum(), span);
        if need == 0 {
            return Ok(true);
        }
        let (free, total) = mem_info()?;
        if let Err(why) = memory::rotation_fits(need, free, total, self.flush_bytes) {
            self.notes.note(why);
            self.no_rotation = true;
            return Ok(false);
        }
        // The copies start from the initial contents: restored first where there is no device copy.
        if rotated.iter().any(|b| b.pristine.is_null() && b.bytes > 0) {
            self.reset(false)?;
        }
        let buffers: Vec<_> =
            self.bufs.iter().zip(&self.buf_params).filter_map(|(b, &at)| Some((if b.pristine.is_null() { b.ptr } else { b.pristine }, b.bytes, at?))).collect();
        self.rotation.ensure(
            &self.params,
            &buffers,
            span,
            |src, bytes| {
                let p = malloc(bytes)?;
                // SAFETY: both buffers hold `bytes` bytes.
                let copied = check(unsafe { hip::hipMemcpyDtoD(p, src, bytes) }, "copying inputs for rotation");
                if copied.is_err() {
                    // SAFETY: allocated just above, freed once.
                    unsafe { hip::hipFree(p) };
                }
                copied.map(|()| p)
            },
            |p| (p as u64).to_le_bytes().to_vec(),
        )?;
        Ok(true)
    }

    /// Fills the `__constant__` symbols of `k`'s module with the constant-memory buffers' data,
    /// once per kernel (constant memory is read-only to kernels, so it stays filled).
    fn fill_constants(&mut self, k: &HipKernel) -> Result<(), BackendError> {
        if self.constants_filled.contains(&k.id) || !self.bufs.iter().any(|b| b.init.memory.is_constant()) {
            return Ok(());
        }
        for b in self.bufs.iter().filter(|b| b.init.memory.is_constant()) {
            let name = std::ffi::CString::new(b.init.name.as_str())
                .map_err(|_| BackendError::LaunchFailed("a constant-memory argument's name contains a NUL byte".into()))?;
            let (mut ptr, mut size): (hip::hipDeviceptr_t, usize) = (std::ptr::null_mut(), 0);
            // SAFETY: a loaded module; valid out-pointers and C string.
            match unsafe { hip::hipModuleGetGlobal(&mut ptr, &mut size, k.module, name.as_ptr()) } {
                hipError_t::hipSuccess => {}
                hipError_t::hipErrorNotFound => {
                    return Err(BackendError::LaunchFailed(format!(
                        "the module has no __constant__ symbol `{}`; declare `__constant__ {} {}[{}];` in the kernel (or make the argument global memory)",
                        b.init.name,
                        b.init.dtype.c_type(),
                        b.init.name,
                        b.init.len()
                    )))
                }
                e => return Err(map(e, "finding a __constant__ symbol")),
            }
            if size < b.bytes {
                return Err(BackendError::LaunchFailed(format!(
                    "the __constant__ symbol `{}` holds {size} B, the argument {} B; enlarge the declaration",
                    b.init.name, b.bytes
                )));
            }
            // SAFETY: the symbol holds at least `bytes` bytes; the host data too.
            check(unsafe { hip::hipMemcpyHtoD(ptr, b.init.data.as_ptr() as *mut c_void, b.bytes) }, "filling constant memory")?;
        }
        self.constants_filled.insert(k.id);
        Ok(())
    }

    pub(crate) fn time(&mut self, k: &HipKernel, launch: &Launch, req: &TimeRequest) -> Result<Vec<f64>, BackendError> {
        self.fill_constants(k)?;
        let n = req.launches as usize;
        while self.events.len() < 2 * n {
            let mut e: hip::hipEvent_t = std::ptr::null_mut();
            // SAFETY: out-pointer valid.
            check(unsafe { hip::hipEventCreate(&mut e) }, "creating an event")?;
            self.events.push(e);
        }
        {
            let mut m = k.max_dynamic_lds.lock().expect("lds lock");
            if launch.shared_mem_bytes > 64 * 1024 && launch.shared_mem_bytes > *m {
                // SAFETY: valid function.
                check(
                    unsafe {
                        hip::hipFuncSetAttribute(
                            k.func as *const c_void,
                            hip::hipFuncAttribute::hipFuncAttributeMaxDynamicSharedMemorySize,
                            launch.shared_mem_bytes as i32,
                        )
                    },
                    "launch (setting dynamic LDS)",
                )?;
                *m = launch.shared_mem_bytes;
            }
        }
        let mut flush = req.flush;
        if flush == L2Flush::Rotate && !self.ensure_rotation()? {
            flush = L2Flush::Memset;
        }
        if flush == L2Flush::Memset && self.flush.is_none() && self.flush_bytes > 0 {
            self.flush = Some(malloc(self.flush_bytes)?);
        }
        let req = &TimeRequest { flush, ..*req };
        let mut ops = HipStream {
            stream: self.stream,
            events: &self.events,
            func: k.func,
            launch,
            flush: self.flush.map(|buf| (buf, self.flush_bytes)),
            round: &mut self.round,
        };
        time_launches(&mut ops, &mut self.params, &mut self.rotation, req)
    }
}

/// The stream operations of one timing request, for core's [`time_launches`].
struct HipStream<'a> {
    stream: hip::hipStream_t,
    events: &'a [hip::hipEvent_t],
    func: hip::hipFunction_t,
    launch: &'a Launch,
    flush: Option<(*mut c_void, usize)>,
    round: &'a mut u8,
}

impl StreamOps for HipStream<'_> {
    fn memset_flush(&mut self) -> Result<(), BackendError> {
        if let Some((buf, bytes)) = self.flush {
            // A 2×L2 memset, as on CUDA (docs/benchmarks.md, "Flushing L2").
            *self.round = self.round.wrapping_add(1);
            // SAFETY: a device buffer of `bytes` bytes.
            check(unsafe { hip::hipMemsetD8Async(buf, *self.round, bytes, self.stream) }, "launch (flushing L2)")?;
        }
        Ok(())
    }

    fn record(&mut self, event: usize) -> Result<(), BackendError> {
        // SAFETY: an event and a stream of this process.
        check(unsafe { hip::hipEventRecord(self.events[event], self.stream) }, "launch (event)")
    }

    fn launch(&mut self, args: &mut [*mut c_void]) -> Result<(), BackendError> {
        // SAFETY: `args` point at parameter storage that outlives the call (the runtime copies
        // the values at launch).
        check(unsafe { launch_module_kernel(self.func, self.launch, self.stream, args) }, "launch")
    }

    fn query(&mut self, event: usize) -> Result<bool, BackendError> {
        // SAFETY: a recorded event.
        match unsafe { hip::hipEventQuery(self.events[event]) } {
            hipError_t::hipSuccess => Ok(true),
            hipError_t::hipErrorNotReady => Ok(false),
            e => Err(map(e, "launch")),
        }
    }

    fn elapsed_ms(&mut self, start: usize, end: usize) -> Result<f32, BackendError> {
        let mut ms = 0f32;
        // SAFETY: both events completed.
        check(unsafe { hip::hipEventElapsedTime(&mut ms, self.events[start], self.events[end]) }, "reading event times")?;
        Ok(ms)
    }

    fn hung(&mut self, timeout: Duration) -> BackendError {
        // A hung kernel cannot be stopped in-process; the device is unusable for this process
        // from here on.
        BackendError::DeviceLost(format!("a launch ran past its {:.1} s timeout and cannot be stopped", timeout.as_secs_f64()))
    }
}

impl Drop for LocalWorkspace {
    fn drop(&mut self) {
        // SAFETY: resources created by this workspace, released once.
        unsafe {
            hip::hipStreamSynchronize(self.stream);
            for p in self.refs.ptrs() {
                hip::hipFree(p as *mut c_void);
            }
            if let Some(p) = self.counters {
                hip::hipFree(p);
            }
            for b in &self.bufs {
                hip::hipFree(b.ptr);
                if !b.pristine.is_null() {
                    hip::hipFree(b.pristine);
                }
            }
            for p in self.rotation.allocations() {
                hip::hipFree(p);
            }
            if let Some(p) = self.flush {
                hip::hipFree(p);
            }
            for e in &self.events {
                hip::hipEventDestroy(*e);
            }
            hip::hipStreamDestroy(self.stream);
            for &p in &self.pinned {
                hip::hipHostUnregister(p);
            }
            for (host, _) in self.readback.values_mut().filter(|(_, pinned)| *pinned) {
                hip::hipHostUnregister(host.data.as_mut_ptr() as *mut c_void);
            }
        }
    }
}

/// `hipModuleLaunchKernel` of `func` with `l`'s geometry on `stream`.
///
/// # Safety
/// `func` is a loaded function of the current device, `stream` a stream of it (or null), and
/// `args` holds one pointer per kernel parameter, each to a value of the parameter's type that
/// lives until the call returns (HIP copies the values at launch).
pub(crate) unsafe fn launch_module_kernel(func: hip::hipFunction_t, l: &Launch, stream: hip::hipStream_t, args: &mut [*mut c_void]) -> hipError_t {
    // SAFETY: as the caller promised.
    unsafe {
        hip::hipModuleLaunchKernel(
            func,
            l.grid[0],
            l.grid[1],
            l.grid[2],
            l.block[0],
            l.block[1],
            l.block[2],
            l.shared_mem_bytes,
            stream,
            args.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    }
}
