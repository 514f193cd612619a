//! Device buffers, kernel launches and event timing.

use crate::device::Shared;
use crate::error::{launch_error, other};
use cudarc::driver::result::{self, DriverError};
use cudarc::driver::sys::{self, CUresult};
use kerntune_core::measure::timing::{time_launches, Rotation, StreamOps};
use kerntune_core::measure::{memory, verify};
use kerntune_core::{Access, ArgData, BackendError, HostBuffer, L2Flush, Launch, ProblemData, TimeRequest, VerifyRequest};
use std::ffi::c_void;
use std::sync::{Arc, Mutex};
use std::time::Duration;

struct Loaded {
    gen: u64,
    module: sys::CUmodule,
    func: sys::CUfunction,
    max_dynamic_smem: u32,
}

/// A compiled config: its CUBIN, loaded into the current context on demand (again after a
/// context was replaced following a fault), and into the worker process when isolation is on.
pub struct CudaKernel {
    pub(crate) id: u64,
    pub(crate) shared: Arc<Shared>,
    pub(crate) name: std::ffi::CString,
    pub(crate) cubin: Vec<u8>,
    loaded: Mutex<Option<Loaded>>,
}

// SAFETY: the raw module and function handles are only used with the context made current on
// the calling thread, and access is serialised by the mutex.
unsafe impl Send for CudaKernel {}
// SAFETY: as above.
unsafe impl Sync for CudaKernel {}

impl CudaKernel {
    pub(crate) fn new(shared: Arc<Shared>, name: std::ffi::CString, cubin: Vec<u8>) -> CudaKernel {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        CudaKernel { id, shared, name, cubin, loaded: Mutex::new(None) }
    }

    /// The function in the current context, loading the module if needed. The caller has bound
    /// the context.
    pub(crate) fn function(&self, gen: u64) -> Result<sys::CUfunction, BackendError> {
        let mut l = self.loaded.lock().expect("kernel lock");
        if let Some(x) = l.as_ref().filter(|x| x.gen == gen) {
            return Ok(x.func);
        }
        // SAFETY: the CUBIN is a complete image; the context is current on this thread.
        let module = unsafe { result::module::load_data(self.cubin.as_ptr() as *const c_void) }.map_err(|e| other("loading the module", e))?;
        // SAFETY: module was just loaded; name is a valid C string.
        let func = match unsafe { result::module::get_function(module, self.name.clone()) } {
            Ok(f) => f,
            Err(_) => {
                // SAFETY: unloading the module we loaded.
                unsafe {
                    let _ = result::module::unload(module);
                }
                return Err(BackendError::CompileFailed {
                    log: format!("the compiled module has no kernel `{}`", self.name.to_string_lossy()),
                    options: vec![],
                });
            }
        };
        *l = Some(Loaded { gen, module, func, max_dynamic_smem: 0 });
        Ok(func)
    }

    /// The module loaded in context generation `gen`, if it is loaded there.
    fn module(&self, gen: u64) -> Option<sys::CUmodule> {
        self.loaded.lock().ok()?.as_ref().filter(|x| x.gen == gen).map(|x| x.module)
    }

    /// Raises the dynamic shared memory limit when a launch needs more than the default 48 KiB.
    pub(crate) fn allow_dynamic_smem(&self, bytes: u32) -> Result<(), BackendError> {
        let mut l = self.loaded.lock().expect("kernel lock");
        let Some(x) = l.as_mut() else { return Ok(()) };
        if bytes > 48 * 1024 && bytes > x.max_dynamic_smem {
            // SAFETY: valid function in the current context.
            unsafe {
                result::function::set_function_attribute(x.func, sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes as i32)
            }
            .map_err(|e| BackendError::LaunchFailed(format!("setting {bytes} B of dynamic shared memory: {}", crate::error::describe(&e))))?;
            x.max_dynamic_smem = bytes;
        }
        Ok(())
    }
}

impl Drop for CudaKernel {
    fn drop(&mut self) {
        kerntune_core::worker::kernel_dropped(self.id);
        if let Some(x) = self.loaded.get_mut().ok().and_then(|l| l.take()) {
            if let Some(_guard) = self.shared.bind_if(x.gen) {
                // SAFETY: the module was loaded in this (still live) context.
                unsafe {
                    let _ = result::module::unload(x.module);
                }
            }
        }
    }
}

struct DevBuf {
    /// What kernels see: at the end of a mapping between two unmapped guard ranges when the
    /// device allows (see [`Guarded`]), so that a read or write past its end faults instead of
    /// landing in a neighbouring buffer.
    ptr: sys::CUdeviceptr,
    guarded: Option<Guarded>,
    /// A device copy of the buffer's initial contents, which resets restore; 0 where the
    /// device had no room for one (see [`memory`]): resets then copy from the problem's host
    /// data.
    pristine: sys::CUdeviceptr,
    bytes: usize,
    /// The buffer's index in the problem's arguments.
    arg: usize,
    /// The buffer's description; its data only for constant memory, which is filled from it.
    init: HostBuffer,
}

/// A problem's buffers on the device, with a pristine copy of each for fast restores where the
/// device has room (see [`memory`]).
pub struct LocalWorkspace {
    shared: Arc<Shared>,
    /// The problem, whose host data restores a buffer without a device copy.
    problem: Arc<ProblemData>,
    gen: u64,
    stream: sys::CUstream,
    bufs: Vec<DevBuf>,
    /// Kernel parameter storage, one entry per argument (8-byte device pointers or scalars).
    params: Vec<Vec<u8>>,
    /// The index in `params` of each buffer's pointer (`None`: a `__constant__`-only buffer).
    buf_params: Vec<Option<usize>>,
    /// Kernels whose module's `__constant__` symbols this workspace has filled.
    constants_filled: std::collections::HashSet<u64>,
    /// Copies of the buffers that rotating launches take turns on (made at the first one).
    rotation: Rotation<sys::CUdeviceptr>,
    /// The device had no room for the rotation's copies: this workspace empties L2 by a memset
    /// instead, for every config alike.
    no_rotation: bool,
    /// Bytes that empty L2: twice its size (0: no flush).
    flush_bytes: usize,
    /// The buffer a memset flush writes, allocated at the first one.
    flush: Option<sys::CUdeviceptr>,
    events: Vec<sys::CUevent>,
    flush_round: u8,
    /// Device copies of the reference outputs (f32, f16 and bf16 buffers), for on-device
    /// verification.
    refs: verify::DeviceReference<sys::CUdeviceptr>,
    /// The comparison kernels loaded so far, by entry point.
    compare: Vec<(&'static str, CudaKernel)>,
    counters: Option<sys::CUdeviceptr>,
    /// The host data of buffers restored from the host, page-locked for the driver (see
    /// [`LocalWorkspace::pin_host_restores`]); unregistered when the workspace is dropped.
    pinned: Vec<*mut c_void>,
    /// Outputs compared on the host: the memory each is read back into, kept for the next
    /// verification, and whether it is page-locked (unregistered when the workspace is dropped).
    readback: std::collections::HashMap<usize, (HostBuffer, bool)>,
}

fn compare_cubin(arch: &str) -> Result<Vec<u8>, BackendError> {
    static CUBINS: verify::CompareBinaries = verify::CompareBinaries::new();
    CUBINS.get(arch, || {
        crate::compile::nvrtc_compile(verify::DEVICE_COMPARE_KERNEL, None, verify::DEVICE_COMPARE_SRC, &[], &[format!("--gpu-architecture={arch}")])
            .map(|(cubin, _)| cubin)
            .map_err(|e| e.to_string())
    })
}

/// The device operations core's on-device verification needs; called by `verify_on_device`
/// with the workspace's context bound.
impl verify::DeviceCompare for LocalWorkspace {
    type Ptr = sys::CUdeviceptr;

    fn upload(&mut self, want: &HostBuffer) -> Result<Option<sys::CUdeviceptr>, BackendError> {
        let data = &want.data;
        let (free, total) = mem_info()?;
        let room = memory::fits(data.len(), free, memory::reserve(total, self.flush_bytes));
        let Some(p) = room.then(|| try_malloc(data.len())).transpose()?.flatten() else {
            self.shared.notes.note(memory::compared_on_host(&want.name, data.len()));
            return Ok(None);
        };
        // SAFETY: `p` holds `data.len()` bytes.
        if let Err(e) =
            unsafe { result::memcpy_htod_sync(p, data) }.map_err(|e| other("uploading the reference", e)).and_then(|()| settle("uploading the reference"))
        {
            self.free(p);
            return Err(e);
        }
        Ok(Some(p))
    }

    fn free(&mut self, p: sys::CUdeviceptr) {
        // SAFETY: allocated by `upload` in this context, freed once.
        unsafe {
            let _ = result::free_sync(p);
        }
    }

    fn compare(
        &mut self,
        output: usize,
        want: sys::CUdeviceptr,
        n: u64,
        kernel: &'static str,
        tol: kerntune_core::spec::Tolerance,
    ) -> Result<verify::CompareCounters, BackendError> {
        if !self.compare.iter().any(|(k, _)| *k == kernel) {
            let cubin = compare_cubin(&self.shared.arch)?;
            self.compare.push((kernel, CudaKernel::new(self.shared.clone(), std::ffi::CString::new(kernel).expect("no NUL"), cubin)));
        }
        if self.counters.is_none() {
            self.counters = Some(malloc(std::mem::size_of::<verify::CompareCounters>())?);
        }
        let counters = self.counters.expect("allocated");
        let func = self.compare.iter().find(|(k, _)| *k == kernel).expect("loaded above").1.function(self.gen)?;
        let init = verify::DEVICE_COMPARE_INIT;
        let mut args = verify::CompareArgs::new(self.bufs[output].ptr, want, n, tol, counters);
        let mut params = args.pointers();
        let (blocks, threads) = (args.blocks(), verify::DEVICE_COMPARE_THREADS);
        let mut res: verify::CompareCounters = verify::DEVICE_COMPARE_INIT;
        // SAFETY: all pointers are device buffers of this context with the sizes used here;
        // `params` points into `args`, which outlives the synchronous launch-and-wait below.
        unsafe {
            // On the workspace's stream, so that the kernel after it sees the counters (a
            // "synchronous" copy would go to the legacy stream, which this one does not wait for).
            result::memcpy_htod_async(counters, &init, self.stream).map_err(|e| other("verification counters", e))?;
            result::launch_kernel(func, (blocks, 1, 1), (threads, 1, 1), 0, self.stream, &mut params).map_err(launch_error)?;
            result::stream::synchronize(self.stream).map_err(launch_error)?;
            result::memcpy_dtoh_sync(&mut res, counters).map_err(|e| other("verification counters", e))?;
        }
        Ok(res)
    }

    fn read_element(&mut self, output: usize, index: u64, dtype: kerntune_core::DType) -> Result<f64, BackendError> {
        let size = dtype.size();
        let mut g = [0u8; 8];
        // SAFETY: `index` < the buffer's element count; reads one element (at most 8 bytes).
        unsafe { result::memcpy_dtoh_sync(&mut g[..size], self.bufs[output].ptr + index * size as u64) }.map_err(|e| other("reading a mismatch", e))?;
        Ok(dtype.decode(&g[..size]))
    }

    fn read_back(&mut self, output: usize) -> Result<&HostBuffer, BackendError> {
        // SAFETY: valid stream.
        unsafe { result::stream::synchronize(self.stream) }.map_err(launch_error)?;
        let b = &self.bufs[output];
        let host = self.readback.entry(output).or_insert_with(|| {
            let mut host = HostBuffer { data: vec![0u8; b.bytes], ..b.init.described() };
            let p = host.data.as_mut_ptr() as *mut c_void;
            // SAFETY: registers the buffer's `bytes` bytes, which the workspace owns and never
            // resizes; Drop unregisters them before they are freed.
            let pinned = b.bytes > 0 && unsafe { sys::cuMemHostRegister_v2(p, b.bytes, 0) }.result().is_ok();
            (host, pinned)
        });
        if b.bytes > 0 {
            // SAFETY: the host buffer and the device buffer hold `bytes` bytes.
            unsafe { result::memcpy_dtoh_sync(&mut host.0.data, b.ptr) }.map_err(|e| other("reading back", e))?;
        }
        Ok(&host.0)
    }
}

// SAFETY: the workspace's handles are only used on the tuner's thread with its context bound.
unsafe impl Send for LocalWorkspace {}

/// Whether buffers are plain `cuMemAlloc` allocations of their exact size, without guards: set
/// (`KERNTUNE_CUDA_PLAIN_BUFFERS`) for a run under the memory checker, which sees a guarded
/// buffer as its whole mapping (rounded up to 2 MiB), so a read past the buffer's end but within
/// the mapping would be neither a fault nor, to it, out of bounds; with the exact size it is.
pub(crate) fn plain_buffers() -> bool {
    std::env::var_os(PLAIN_BUFFERS).is_some()
}

/// The variable [`plain_buffers`] reads.
pub(crate) const PLAIN_BUFFERS: &str = "KERNTUNE_CUDA_PLAIN_BUFFERS";

/// A device buffer mapped (CUDA's virtual memory management) in the middle of an address range
/// reserved for it, with unmapped guards before and after: an access past the buffer's end
/// faults (an illegal address, which the tune diagnoses) instead of silently reading or writing
/// whatever allocation `cuMemAlloc` placed next to it. Guards are a quarter of the buffer, at
/// least the allocation granularity (2 MiB) and at most 1 GiB of address space; they take no
/// memory.
///
/// A mapping is a whole number of granules, so the buffer is placed at its end ([`place`]): the
/// first byte past the buffer (rounded up to 256 bytes, the alignment `cuMemAlloc` gives and
/// kernels' vector loads and coalescing assume) is the guard's, whatever the buffer's size. A
/// read one element past the end — a last block without a bounds check, the common undersized
/// buffer — faults in every config; the slack before the buffer's start (the rest of the
/// granule) is mapped, so a read a little before it does not.
pub(crate) struct Guarded {
    /// The buffer's start: `map + place(bytes, size)`.
    pub ptr: sys::CUdeviceptr,
    /// The mapping's start.
    map: sys::CUdeviceptr,
    /// The mapped size (the buffer's, rounded up to the granularity).
    size: usize,
    /// The reserved range.
    base: sys::CUdeviceptr,
    reserved: usize,
}

impl Guarded {
    /// `None` where the device or driver does not offer virtual memory management (the caller
    /// falls back to `cuMemAlloc`); needs the context of `device` current.
    pub(crate) fn new(bytes: usize, device: sys::CUdevice) -> Option<Guarded> {
        let location = sys::CUmemLocation { type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, id: device };
        let prop = sys::CUmemAllocationProp {
            type_: sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
            requestedHandleTypes: sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_NONE,
            location,
            win32HandleMetaData: std::ptr::null_mut(),
            allocFlags: sys::CUmemAllocationProp_st__bindgen_ty_1 { compressionType: 0, gpuDirectRDMACapable: 0, usage: 0, reserved: [0; 4] },
        };
        let ok = |r: CUresult| r == CUresult::CUDA_SUCCESS;
        let mut gran = 0usize;
        // SAFETY: `prop` and `gran` are valid for the call.
        if !ok(unsafe { sys::cuMemGetAllocationGranularity(&mut gran, &prop, sys::CUmemAllocationGranularity_flags::CU_MEM_ALLOC_GRANULARITY_MINIMUM) })
            || gran == 0
        {
            return None;
        }
        let size = bytes.max(1).div_ceil(gran) * gran;
        let guard = (size / 4).clamp(gran, 1 << 30).div_ceil(gran) * gran;
        let reserved = size + 2 * guard;
        let mut base: sys::CUdeviceptr = 0;
        // SAFETY: reserving address space only; released by `free` or below.
        if !ok(unsafe { sys::cuMemAddressReserve(&mut base, reserved, 0, 0, 0) }) {
            return None;
        }
        let map = base + guard as u64;
        let mut handle: sys::CUmemGenericAllocationHandle = 0;
        // SAFETY: creating physical memory with valid properties; mapping it into the range
        // reserved above; the handle is released once mapped (the mapping keeps the memory).
        let mapped = unsafe {
            if !ok(sys::cuMemCreate(&mut handle, size, &prop, 0)) {
                let _ = sys::cuMemAddressFree(base, reserved);
                return None;
            }
            let mapped = ok(sys::cuMemMap(map, size, 0, handle, 0));
            let _ = sys::cuMemRelease(handle);
            mapped
        };
        let g = Guarded { ptr: map + place(bytes, size) as u64, map, size, base, reserved };
        let access = sys::CUmemAccessDesc { location, flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
        // SAFETY: the mapped range with a valid descriptor.
        if !mapped || !ok(unsafe { sys::cuMemSetAccess(map, size, &access, 1) }) {
            if mapped {
                g.free();
            } else {
                // SAFETY: the range reserved above, nothing mapped in it.
                unsafe {
                    let _ = sys::cuMemAddressFree(base, reserved);
                }
            }
            return None;
        }
        Some(g)
    }

    /// Unmaps the buffer (its memory goes back) and releases the range; once.
    pub(crate) fn free(&self) {
        // SAFETY: the mapping and reservation made by `new`, in the current context.
        unsafe {
            let _ = sys::cuMemUnmap(self.map, self.size);
            let _ = sys::cuMemAddressFree(self.base, self.reserved);
        }
    }
}

/// Where a buffer of `bytes` starts in a mapping of `size` bytes (a multiple of 256 at least
/// `bytes` rounded up to 256): as close to the mapping's end as a 256-byte aligned start allows.
fn place(bytes: usize, size: usize) -> usize {
    size - bytes.max(1).div_ceil(256) * 256
}

fn malloc(bytes: usize) -> Result<sys::CUdeviceptr, BackendError> {
    try_malloc(bytes)?.ok_or_else(|| BackendError::other(format!("out of device memory allocating {bytes} B")))
}

/// An allocation in the current context; `None` when the device is out of memory.
fn try_malloc(bytes: usize) -> Result<Option<sys::CUdeviceptr>, BackendError> {
    // SAFETY: plain allocation in the current context.
    match unsafe { result::malloc_sync(bytes.max(4)) } {
        Ok(p) => Ok(Some(p)),
        Err(DriverError(CUresult::CUDA_ERROR_OUT_OF_MEMORY)) => Ok(None),
        Err(e) => Err(other("allocating device memory", e)),
    }
}

/// Waits for every copy the context has queued. The workspace's copies made with the driver's
/// "synchronous" calls run on the legacy stream, which the workspace's non-blocking stream does
/// not wait for, and such a call can return before its copy is done (device to device, and
/// pageable host memory to device once staged): kernels launched on the workspace's stream
/// could read a buffer before it is filled, or a launch could change a buffer while its
/// pristine copy is still being taken (seen on an H200: every triad config verified one
/// application off, when warm compile caches made the first launch follow the workspace at once).
fn settle(what: &str) -> Result<(), BackendError> {
    result::ctx::synchronize().map_err(|e| other(what, e))
}

/// The device's free and total memory (the current context's device).
fn mem_info() -> Result<(usize, usize), BackendError> {
    result::mem_get_info().map_err(|e| other("reading the device's free memory", e))
}

impl LocalWorkspace {
    /// Allocates and fills the problem's buffers, then device copies of their initial contents
    /// where the device has room ([`LocalWorkspace::make_copies`]).
    pub(crate) fn new(shared: Arc<Shared>, problem: &Arc<ProblemData>, flush_bytes: usize) -> Result<LocalWorkspace, BackendError> {
        let guard = shared.bind()?;
        let gen = guard.gen;
        let (free, total) = mem_info()?;
        // SAFETY: creating a stream in the bound context.
        let stream = result::stream::create(result::stream::StreamKind::NonBlocking).map_err(|e| other("creating a stream", e))?;
        let mut ws = LocalWorkspace {
            shared: shared.clone(),
            problem: problem.clone(),
            gen,
            stream,
            bufs: Vec::new(),
            params: Vec::new(),
            buf_params: Vec::new(),
            constants_filled: Default::default(),
            rotation: Rotation::default(),
            no_rotation: false,
            flush_bytes,
            flush: None,
            events: Vec::new(),
            flush_round: 0,
            refs: Default::default(),
            compare: Vec::new(),
            counters: None,
            pinned: Vec::new(),
            readback: Default::default(),
        };
        for (arg, a) in problem.args.iter().enumerate() {
            match a {
                ArgData::Buffer(b) => {
                    let bytes = b.data.len();
                    let guarded = if plain_buffers() { None } else { Guarded::new(bytes, shared.device()) };
                    let ptr = match &guarded {
                        Some(g) => g.ptr,
                        None => try_malloc(bytes)?.ok_or_else(|| BackendError::ProblemTooLarge(memory::does_not_fit(&problem.buffer_sizes(), free, total)))?,
                    };
                    // Pushed at once so that Drop frees what was allocated if anything below fails.
                    ws.bufs.push(DevBuf { ptr, guarded, pristine: 0, bytes, arg, init: b.described() });
                    if bytes > 0 {
                        // SAFETY: the allocation and the host slice hold `bytes` bytes.
                        unsafe { result::memcpy_htod_sync(ptr, &b.data) }.map_err(|e| other("uploading", e))?;
                    }
                    if b.memory.is_argument() {
                        ws.buf_params.push(Some(ws.params.len()));
                        ws.params.push(ptr.to_le_bytes().to_vec());
                    } else {
                        ws.buf_params.push(None);
                    }
                }
                ArgData::Scalar { dtype, value, .. } => ws.params.push(ArgData::scalar_bytes(*dtype, value)),
            }
        }
        ws.make_copies()?;
        settle("making the workspace")?;
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
            // SAFETY: both allocations hold `bytes` bytes in the bound context.
            unsafe { result::memcpy_dtod_sync(p, b.ptr, b.bytes) }.map_err(|e| other("copying", e))?;
            Ok(true)
        })?;
        if let Some(note) = note {
            self.shared.notes.note(note);
            self.pin_host_restores();
        }
        Ok(())
    }

    /// Page-locks the host data of every buffer without a device copy, which each reset copies
    /// to the device: the driver copies page-locked memory straight to the device, and pageable
    /// memory through staging buffers, several times slower (a tune of a problem that fits the
    /// GPU only once spent about 6 s a config restoring 8 GiB). The memory is registered where
    /// it is (the workspace holds the problem, so it outlives the registration); where the
    /// driver refuses, the copies stay pageable.
    fn pin_host_restores(&mut self) {
        let t = std::time::Instant::now();
        let mut bytes = 0;
        for b in self.bufs.iter().filter(|b| b.pristine == 0 && b.bytes > 0) {
            let data = self.problem.buffer_data(b.arg);
            let p = data.as_ptr() as *mut c_void;
            // SAFETY: registers `data.len()` bytes of the problem's host data, which the
            // workspace keeps alive (its `Arc<ProblemData>`) until Drop unregisters them; the
            // driver only reads them (host-to-device copies), and no flag maps them for kernels.
            match unsafe { sys::cuMemHostRegister_v2(p, data.len(), 0) }.result() {
                Ok(()) => {
                    self.pinned.push(p);
                    bytes += data.len();
                }
                Err(e) => tracing::debug!(buffer = b.init.name, "could not page-lock a buffer restored from the host: {e}"),
            }
        }
        tracing::debug!(bytes, seconds = t.elapsed().as_secs_f64(), "host data of restores page-locked");
    }

    pub(crate) fn reset(&mut self, poison: bool) -> Result<(), BackendError> {
        let _g = self.shared.bind_gen(self.gen)?;
        for b in &self.bufs {
            if b.bytes == 0 {
                continue;
            }
            // SAFETY: device buffers of `bytes` bytes in the bound context; a host buffer of as
            // many bytes, which the synchronisation below outlives.
            unsafe {
                if poison && b.init.access == Access::Write {
                    result::memset_d8_async(b.ptr, 0xFF, b.bytes, self.stream).map_err(|e| other("poisoning", e))?;
                } else if b.pristine != 0 {
                    result::memcpy_dtod_async(b.ptr, b.pristine, b.bytes, self.stream).map_err(|e| other("restoring", e))?;
                } else {
                    result::memcpy_htod_async(b.ptr, self.problem.buffer_data(b.arg), self.stream).map_err(|e| other("restoring from the host", e))?;
                }
            }
        }
        // SAFETY: valid stream.
        unsafe { result::stream::synchronize(self.stream) }.map_err(|e| other("synchronizing", e))
    }

    /// Reads back the buffers whose `mask` entry is true; the others come back empty.
    pub(crate) fn read_masked(&mut self, mask: &[bool]) -> Result<Vec<HostBuffer>, BackendError> {
        let _g = self.shared.bind_gen(self.gen)?;
        // SAFETY: valid stream.
        unsafe { result::stream::synchronize(self.stream) }.map_err(launch_error)?;
        let mut out = Vec::with_capacity(self.bufs.len());
        for (i, b) in self.bufs.iter().enumerate() {
            let wanted = mask.get(i).copied().unwrap_or(false);
            let mut data = vec![0u8; if wanted { b.bytes } else { 0 }];
            if wanted && b.bytes > 0 {
                // SAFETY: `data` has `bytes` bytes; the device buffer too.
                unsafe { result::memcpy_dtoh_sync(&mut data, b.ptr) }.map_err(|e| other("reading back", e))?;
            }
            out.push(HostBuffer { data, ..b.init.clone() });
        }
        Ok(out)
    }

    /// Verification on the device: poison and restore, one timed launch, then core's
    /// [`verify::DeviceReference::check`] (a comparison kernel per selected f32 output against a
    /// reference uploaded once per tune; other types compared on the host). Returns the
    /// verification launch's time.
    pub(crate) fn verify_on_device(&mut self, k: &CudaKernel, launch: &Launch, req: &VerifyRequest<'_>) -> Result<Vec<f64>, BackendError> {
        self.reset(true)?;
        let t = self.time(k, launch, &TimeRequest { launches: 1, flush: L2Flush::Off, timeout: req.timeout })?;
        let _g = self.shared.bind_gen(self.gen)?;
        let mut refs = std::mem::take(&mut self.refs);
        let checked = refs.check(self, req);
        self.refs = refs;
        checked?;
        self.reset(false)?;
        Ok(t)
    }

    fn ensure_events(&mut self, n: usize) -> Result<(), BackendError> {
        while self.events.len() < n {
            let e = result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT).map_err(|e| other("creating an event", e))?;
            self.events.push(e);
        }
        Ok(())
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
            self.shared.notes.note(why);
            self.no_rotation = true;
            return Ok(false);
        }
        // The copies start from the initial contents: restored first where there is no device copy.
        if rotated.iter().any(|b| b.pristine == 0 && b.bytes > 0) {
            self.reset(false)?;
        }
        let buffers: Vec<_> =
            self.bufs.iter().zip(&self.buf_params).filter_map(|(b, &at)| Some((if b.pristine != 0 { b.pristine } else { b.ptr }, b.bytes, at?))).collect();
        self.rotation.ensure(
            &self.params,
            &buffers,
            span,
            |src, bytes| {
                let p = malloc(bytes)?;
                // SAFETY: both buffers hold `bytes` bytes in the bound context.
                match unsafe { result::memcpy_dtod_sync(p, src, bytes) } {
                    Ok(()) => Ok(p),
                    Err(e) => {
                        // SAFETY: allocated just above, freed once.
                        let _ = unsafe { result::free_sync(p) };
                        Err(other("copying inputs for rotation", e))
                    }
                }
            },
            |p| p.to_le_bytes().to_vec(),
        )?;
        settle("copying inputs for rotation")?;
        Ok(true)
    }

    /// Fills the `__constant__` symbols of `k`'s module with the constant-memory buffers' data,
    /// once per kernel (constant memory is read-only to kernels, so it stays filled). The
    /// context is bound and the module loaded.
    fn fill_constants(&mut self, k: &CudaKernel) -> Result<(), BackendError> {
        if self.constants_filled.contains(&k.id) || !self.bufs.iter().any(|b| b.init.memory.is_constant()) {
            return Ok(());
        }
        let module = k.module(self.gen).ok_or_else(|| BackendError::DeviceLost("the kernel's module is not loaded in this context".into()))?;
        for b in self.bufs.iter().filter(|b| b.init.memory.is_constant()) {
            let name = std::ffi::CString::new(b.init.name.as_str())
                .map_err(|_| BackendError::LaunchFailed("a constant-memory argument's name contains a NUL byte".into()))?;
            let (mut ptr, mut size) = (0 as sys::CUdeviceptr, 0usize);
            // SAFETY: a module loaded in the bound context; valid out-pointers and C string.
            let r = unsafe { sys::cuModuleGetGlobal_v2(&mut ptr, &mut size, module, name.as_ptr()) };
            match r {
                CUresult::CUDA_SUCCESS => {}
                CUresult::CUDA_ERROR_NOT_FOUND => {
                    return Err(BackendError::LaunchFailed(format!(
                        "the module has no __constant__ symbol `{}`; declare `__constant__ {} {}[{}];` in the kernel (or make the argument global memory)",
                        b.init.name,
                        b.init.dtype.c_type(),
                        b.init.name,
                        b.init.len()
                    )))
                }
                e => return Err(launch_error(DriverError(e))),
            }
            if size < b.bytes {
                return Err(BackendError::LaunchFailed(format!(
                    "the __constant__ symbol `{}` holds {size} B, the argument {} B; enlarge the declaration",
                    b.init.name, b.bytes
                )));
            }
            // SAFETY: the symbol holds at least `bytes` bytes; the host data too.
            unsafe { result::memcpy_htod_sync(ptr, &b.init.data) }.map_err(|e| other("filling constant memory", e))?;
        }
        settle("filling constant memory")?;
        self.constants_filled.insert(k.id);
        Ok(())
    }

    /// Launches `req.launches` times, each bracketed by events (and preceded by emptying L2 as
    /// `req.flush` asks), waits with a deadline, and returns each launch's time in seconds.
    pub(crate) fn time(&mut self, k: &crate::bench::CudaKernel, launch: &Launch, req: &TimeRequest) -> Result<Vec<f64>, BackendError> {
        let _bound = self.shared.bind_gen(self.gen)?;
        let func = k.function(self.gen)?;
        k.allow_dynamic_smem(launch.shared_mem_bytes)?;
        self.fill_constants(k)?;
        let n = req.launches as usize;
        self.ensure_events(2 * n)?;
        let mut flush = req.flush;
        if flush == L2Flush::Rotate && !self.ensure_rotation()? {
            flush = L2Flush::Memset;
        }
        if flush == L2Flush::Memset && self.flush.is_none() && self.flush_bytes > 0 {
            self.flush = Some(malloc(self.flush_bytes)?);
        }
        let req = &TimeRequest { flush, ..*req };
        let mut ops = CudaStream {
            stream: self.stream,
            events: &self.events,
            func,
            launch,
            flush: self.flush.map(|buf| (buf, self.flush_bytes)),
            round: &mut self.flush_round,
            shared: &self.shared,
            gen: self.gen,
        };
        time_launches(&mut ops, &mut self.params, &mut self.rotation, req)
    }
}

/// The stream operations of one timing request, for core's [`time_launches`]; the context is
/// bound by the caller.
struct CudaStream<'a> {
    stream: sys::CUstream,
    events: &'a [sys::CUevent],
    func: sys::CUfunction,
    launch: &'a Launch,
    flush: Option<(sys::CUdeviceptr, usize)>,
    round: &'a mut u8,
    shared: &'a Shared,
    gen: u64,
}

impl StreamOps for CudaStream<'_> {
    fn memset_flush(&mut self) -> Result<(), BackendError> {
        if let Some((buf, bytes)) = self.flush {
            // A 2×L2 memset, as Triton and nvbench flush. Reading 2×L2 and rotating inputs were
            // measured against it (docs/benchmarks.md, "Flushing L2").
            *self.round = self.round.wrapping_add(1);
            // SAFETY: a device buffer of `bytes` bytes in the bound context.
            unsafe { result::memset_d8_async(buf, *self.round, bytes, self.stream) }.map_err(launch_error)?;
        }
        Ok(())
    }

    fn record(&mut self, event: usize) -> Result<(), BackendError> {
        // SAFETY: an event and the stream of the bound context.
        unsafe { result::event::record(self.events[event], self.stream) }.map_err(launch_error)
    }

    fn launch(&mut self, args: &mut [*mut c_void]) -> Result<(), BackendError> {
        let l = self.launch;
        // SAFETY: `args` point at parameter storage that outlives the call (the driver copies
        // the values at launch); the function and stream belong to the bound context.
        unsafe {
            result::launch_kernel(self.func, (l.grid[0], l.grid[1], l.grid[2]), (l.block[0], l.block[1], l.block[2]), l.shared_mem_bytes, self.stream, args)
        }
        .map_err(launch_error)
    }

    fn query(&mut self, event: usize) -> Result<bool, BackendError> {
        // SAFETY: a recorded event of the bound context.
        match unsafe { result::event::query(self.events[event]) } {
            Ok(()) => Ok(true),
            Err(DriverError(CUresult::CUDA_ERROR_NOT_READY)) => Ok(false),
            Err(e) => {
                let assertion = e.0 == CUresult::CUDA_ERROR_ASSERT;
                let err = launch_error(e);
                if assertion {
                    self.shared.discard(self.gen);
                } else if matches!(err, BackendError::DeviceLost(_)) {
                    self.shared.mark_dead(self.gen);
                }
                Err(err)
            }
        }
    }

    fn elapsed_ms(&mut self, start: usize, end: usize) -> Result<f32, BackendError> {
        // SAFETY: both events completed.
        unsafe { result::event::elapsed(self.events[start], self.events[end]) }.map_err(launch_error)
    }

    fn hung(&mut self, timeout: Duration) -> BackendError {
        // The kernel is still running and cannot be stopped in this context: the context must
        // be replaced before anything else runs.
        self.shared.mark_dead(self.gen);
        BackendError::TimedOut(timeout)
    }
}

impl Drop for LocalWorkspace {
    fn drop(&mut self) {
        let Some(_g) = self.shared.bind_if(self.gen) else { return };
        // SAFETY: handles created in this (still live) context and freed once.
        unsafe {
            let _ = result::stream::synchronize(self.stream);
            for b in &self.bufs {
                match &b.guarded {
                    Some(g) => g.free(),
                    None => {
                        let _ = result::free_sync(b.ptr);
                    }
                }
                if b.pristine != 0 {
                    let _ = result::free_sync(b.pristine);
                }
            }
            for p in self.rotation.allocations() {
                let _ = result::free_sync(p);
            }
            if let Some(p) = self.flush {
                let _ = result::free_sync(p);
            }
            for p in self.refs.ptrs() {
                let _ = result::free_sync(p);
            }
            if let Some(p) = self.counters {
                let _ = result::free_sync(p);
            }
            for e in &self.events {
                let _ = result::event::destroy(*e);
            }
            let _ = result::stream::destroy(self.stream);
            for &p in &self.pinned {
                let _ = sys::cuMemHostUnregister(p).result();
            }
            for (host, _) in self.readback.values_mut().filter(|(_, pinned)| *pinned) {
                let _ = sys::cuMemHostUnregister(host.data.as_mut_ptr() as *mut c_void).result();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::place;

    /// A guarded buffer ends where its mapping does, less the rounding to 256 bytes, and starts
    /// 256-byte aligned: the first element past it is the guard's whenever its size is a multiple
    /// of 256 bytes, and at most 252 bytes of slack follow it otherwise.
    #[test]
    fn a_guarded_buffer_ends_at_its_mapping_end() {
        const GRAN: usize = 2 << 20;
        for (bytes, slack) in [(4_000_000, 0), (4_000_004, 252), (4 << 20, 0), (1, 255), (0, 256), (GRAN - 4, 4), (GRAN + 1, 255)] {
            let size = bytes.max(1).div_ceil(GRAN) * GRAN;
            let start = place(bytes, size);
            assert_eq!(start % 256, 0, "{bytes}");
            assert_eq!(size - (start + bytes), slack, "{bytes}");
        }
    }
}
