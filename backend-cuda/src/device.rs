//! The device: driver initialisation (distinguishing a missing library from a missing device),
//! device enumeration with each device's target and limits, and the context a backend owns,
//! replaced after faults.

use crate::error::describe;
use crate::limits::{arch_name, limits_from_attributes, Attr};
use cudarc::driver::result;
use cudarc::driver::sys::{self, CUdevice_attribute as A, CUresult};
use kerntune_core::{BackendError, Limits, OpenError, Target, Vendor};
use std::sync::Mutex;
use std::time::Duration;

fn sys_attr(a: Attr) -> A {
    match a {
        Attr::MaxThreadsPerBlock => A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
        Attr::MaxBlockDimX => A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X,
        Attr::MaxBlockDimY => A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y,
        Attr::MaxBlockDimZ => A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z,
        Attr::MaxGridDimX => A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X,
        Attr::MaxGridDimY => A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,
        Attr::MaxGridDimZ => A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z,
        Attr::WarpSize => A::CU_DEVICE_ATTRIBUTE_WARP_SIZE,
        Attr::SharedPerBlock => A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
        Attr::SharedPerBlockOptin => A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
        Attr::SharedPerSm => A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
        Attr::RegistersPerSm => A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR,
        Attr::RegistersPerBlock => A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK,
        Attr::MaxBlocksPerSm => A::CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR,
        Attr::MaxThreadsPerSm => A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
        Attr::SmCount => A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
        Attr::L2Bytes => A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE,
        Attr::MemoryClockKhz => A::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE,
        Attr::BusWidthBits => A::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH,
        Attr::ClockKhz => A::CU_DEVICE_ATTRIBUTE_CLOCK_RATE,
        Attr::CcMajor => A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
        Attr::CcMinor => A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
    }
}

fn attribute(dev: sys::CUdevice, a: Attr) -> Option<i64> {
    // SAFETY: `dev` is a valid device handle from cuDeviceGet.
    unsafe { result::device::get_attribute(dev, sys_attr(a)) }.ok().map(|v| v as i64).filter(|&v| v > 0 || matches!(a, Attr::CcMinor))
}

/// A device found by [`devices`].
#[derive(Clone, Debug)]
pub struct DeviceSummary {
    /// CUDA ordinal.
    pub ordinal: usize,
    /// The target.
    pub target: Target,
    /// Its limits.
    pub limits: Limits,
    /// Raw attribute values, for recording tables.
    pub attributes: Vec<(String, i64)>,
}

/// Initialises the driver, distinguishing a missing library from a missing device.
pub(crate) fn init() -> Result<i32, OpenError> {
    // SAFETY: only tries to load the library.
    if !unsafe { sys::is_culib_present() } {
        return Err(OpenError::LibraryNotFound {
            backend: "cuda".into(),
            library: "CUDA driver library".into(),
            detail: "libcuda.so could not be loaded".into(),
        });
    }
    match result::init() {
        Ok(()) => {}
        Err(e) if e.0 == CUresult::CUDA_ERROR_NO_DEVICE => return Err(OpenError::NoDevice { backend: "cuda".into(), message: "no CUDA device".into() }),
        Err(e) => return Err(OpenError::Other { backend: "cuda".into(), message: format!("cuInit failed: {}", describe(&e)) }),
    }
    let n = result::device::get_count().map_err(|e| OpenError::Other { backend: "cuda".into(), message: describe(&e) })?;
    if n == 0 {
        return Err(OpenError::NoDevice { backend: "cuda".into(), message: "no CUDA device".into() });
    }
    Ok(n)
}

pub(crate) fn summary(ordinal: usize) -> Result<DeviceSummary, OpenError> {
    let dev = result::device::get(ordinal as i32)
        .map_err(|e| OpenError::NoDevice { backend: "cuda".into(), message: format!("no CUDA device #{ordinal}: {}", describe(&e)) })?;
    let name = result::device::get_name(dev).unwrap_or_else(|_| "CUDA device".into());
    let mut limits = limits_from_attributes(&|a| attribute(dev, a));
    // SAFETY: a device handle from cuDeviceGet.
    limits.global_mem_bytes = unsafe { result::device::total_mem(dev) }.ok().map(|b| b as u64);
    let (ma, mi) = (attribute(dev, Attr::CcMajor).unwrap_or(0) as i32, attribute(dev, Attr::CcMinor).unwrap_or(0) as i32);
    let target = Target::new("cuda", Vendor::Nvidia, &arch_name(ma, mi), &name);
    let attributes = crate::limits::ATTRS.iter().filter_map(|&a| attribute(dev, a).map(|v| (format!("{a:?}"), v))).collect();
    Ok(DeviceSummary { ordinal, target, limits, attributes })
}

/// Every CUDA device.
pub fn devices() -> Result<Vec<DeviceSummary>, OpenError> {
    let n = init()?;
    (0..n as usize).map(summary).collect()
}

struct CtxState {
    /// Null until first bound: a tuner whose kernels run in worker processes reads resources
    /// from the CUBIN and never needs a context of its own (creating one took about 0.1 s per
    /// device at start, competed with the workers' own, and was torn down at exit).
    ctx: sys::CUcontext,
    gen: u64,
    dead: bool,
}

/// The device and its current context. After a sticky fault or a hung kernel the context is
/// marked dead and [`Shared::recover`] replaces it; everything tagged with an older generation
/// is then reloaded (kernels) or rebuilt (workspaces) by its owner.
pub(crate) struct Shared {
    device: sys::CUdevice,
    /// The device's architecture, for kernels the backend compiles for itself.
    pub(crate) arch: String,
    state: Mutex<CtxState>,
    /// What the workspaces had to do that the tune's report should say.
    pub(crate) notes: kerntune_core::backend::Notes,
}

// SAFETY: the context handle is shared across threads as CUDA allows (a context may be current on
// several threads); state changes are serialised by the mutex.
unsafe impl Send for Shared {}
// SAFETY: as above.
unsafe impl Sync for Shared {}

/// Proof that the context of generation `gen` is current on this thread.
pub(crate) struct Bound {
    pub gen: u64,
}

impl Shared {
    /// The device the context is on.
    pub(crate) fn device(&self) -> sys::CUdevice {
        self.device
    }

    /// Device `ordinal` (of architecture `arch`); its context is created when first bound.
    pub(crate) fn open(ordinal: usize, arch: String) -> Result<Shared, OpenError> {
        let device = result::device::get(ordinal as i32).map_err(|e| OpenError::Other { backend: "cuda".into(), message: describe(&e) })?;
        Ok(Shared { device, arch, state: Mutex::new(CtxState { ctx: std::ptr::null_mut(), gen: 0, dead: false }), notes: Default::default() })
    }

    fn create_context(device: sys::CUdevice) -> Result<sys::CUcontext, BackendError> {
        // SAFETY: valid device; NULL creation parameters are allowed. The new context becomes
        // current on this thread.
        unsafe { result::ctx::create_v4(std::ptr::null_mut(), 0, device) }
            .map_err(|e| BackendError::DeviceLost(format!("creating a CUDA context: {}", describe(&e))))
    }

    fn set_current(ctx: sys::CUcontext) -> Result<(), BackendError> {
        // SAFETY: a live context handle.
        unsafe { result::ctx::set_current(ctx) }.map_err(|e| BackendError::DeviceLost(describe(&e)))
    }

    /// Binds the current context to this thread, creating it on first use.
    pub(crate) fn bind(&self) -> Result<Bound, BackendError> {
        let mut s = self.state.lock().expect("context lock");
        if s.dead {
            return Err(BackendError::DeviceLost("the CUDA context was lost and not recovered yet".into()));
        }
        if s.ctx.is_null() {
            s.ctx = Self::create_context(self.device)?;
        }
        Self::set_current(s.ctx)?;
        Ok(Bound { gen: s.gen })
    }

    /// Binds the context only if it is still generation `gen`.
    pub(crate) fn bind_gen(&self, gen: u64) -> Result<Bound, BackendError> {
        let b = self.bind()?;
        if b.gen != gen {
            return Err(BackendError::DeviceLost("this workspace belongs to a replaced CUDA context".into()));
        }
        Ok(b)
    }

    /// Binds for cleanup: `None` when the context of `gen` is gone or dead (its resources went
    /// with it).
    pub(crate) fn bind_if(&self, gen: u64) -> Option<Bound> {
        let s = self.state.lock().ok()?;
        if s.dead || s.gen != gen || s.ctx.is_null() {
            return None;
        }
        Self::set_current(s.ctx).ok()?;
        Some(Bound { gen })
    }

    pub(crate) fn mark_dead(&self, gen: u64) {
        if let Ok(mut s) = self.state.lock() {
            if s.gen == gen {
                s.dead = true;
            }
        }
    }

    /// After a failed device-side assertion: the context of `gen` goes now, not at recovery,
    /// since the driver prints the assertion's lines (to standard error) only as it goes, and a
    /// worker reports them with its error (see `kerntune_core::worker`). Recovery then makes a
    /// fresh one.
    pub(crate) fn discard(&self, gen: u64) {
        let mut s = self.state.lock().expect("context lock");
        if s.gen != gen || s.ctx.is_null() {
            return;
        }
        let old = std::mem::replace(&mut s.ctx, std::ptr::null_mut());
        s.dead = true;
        s.gen += 1;
        Self::destroy(old);
    }

    /// Destroys `old` on a helper thread; if that does not finish within ten seconds (a kernel
    /// that never ends), it is abandoned.
    fn destroy(old: sys::CUcontext) {
        let old = old as usize;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            // SAFETY: the old context is no longer used by anything (all users check the
            // generation); destroying it frees its memory and modules.
            let r = unsafe { sys::cuCtxDestroy_v2(old as sys::CUcontext) };
            let _ = tx.send(r == CUresult::CUDA_SUCCESS);
        });
        match rx.recv_timeout(Duration::from_secs(10)) {
            Ok(true) => tracing::info!("replaced the CUDA context after a fault"),
            Ok(false) => tracing::warn!("destroying the faulted CUDA context reported an error; continuing with a new one"),
            Err(_) => tracing::warn!("the faulted CUDA context did not go away within 10 s (a kernel is still running); continuing with a new context, measurements may be disturbed"),
        }
    }

    /// Replaces the context (see [`Shared::destroy`] for the old one).
    pub(crate) fn recover(&self) -> Result<(), BackendError> {
        let mut s = self.state.lock().expect("context lock");
        if s.ctx.is_null() {
            s.ctx = Self::create_context(self.device)?;
            s.dead = false;
            return Ok(());
        }
        Self::destroy(s.ctx);
        s.ctx = Self::create_context(self.device)?;
        s.gen += 1;
        s.dead = false;
        Ok(())
    }
}

/// The UUID of CUDA device `ordinal` as NVML names it (`GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`).
pub(crate) fn uuid_of(ordinal: usize) -> Option<String> {
    let dev = cudarc::driver::result::device::get(ordinal as i32).ok()?;
    let u = cudarc::driver::result::device::get_uuid(dev).ok()?;
    let b: Vec<u8> = u.bytes.iter().map(|&c| c as u8).collect();
    let hex = |r: std::ops::Range<usize>| b[r].iter().map(|x| format!("{x:02x}")).collect::<String>();
    Some(format!("GPU-{}-{}-{}-{}-{}", hex(0..4), hex(4..6), hex(6..8), hex(8..10), hex(10..16)))
}
