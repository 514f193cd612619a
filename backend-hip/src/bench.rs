//! Device buffers, launches and event timing through the HIP runtime.

use crate::error::{check, map};
use hip_sys::hiprt::{self as hip, hipError_t};
use kerntune_core::{Access, ArgData, BackendError, HostBuffer, Launch, ProblemData, TimeRequest};
use std::ffi::c_void;
use std::time::{Duration, Instant};

/// A compiled config: its module and function.
pub struct HipKernel {
    module: hip::hipModule_t,
    pub(crate) func: hip::hipFunction_t,
    max_dynamic_lds: std::sync::Mutex<u32>,
}

// SAFETY: module and function handles are process-wide in HIP and used under the runtime's own
// locking; kerntune only launches from the tuner's thread.
unsafe impl Send for HipKernel {}
// SAFETY: as above.
unsafe impl Sync for HipKernel {}

impl HipKernel {
    /// Loads a code object and finds `name` in it.
    pub(crate) fn load(code: &[u8], name: &str) -> Result<HipKernel, BackendError> {
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
            return Err(BackendError::CompileFailed {
                log: format!("the code object has no kernel named `{name}`; declare it `extern \"C\" __global__`"),
                options: vec![],
            });
        }
        Ok(HipKernel { module, func, max_dynamic_lds: std::sync::Mutex::new(0) })
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
        // SAFETY: loaded by us, unloaded once.
        unsafe { hip::hipModuleUnload(self.module) };
    }
}

struct DevBuf {
    ptr: *mut c_void,
    pristine: *mut c_void,
    bytes: usize,
    init: HostBuffer,
}

/// A problem's buffers on the device (with pristine copies for fast restores).
pub struct HipWorkspace {
    stream: hip::hipStream_t,
    bufs: Vec<DevBuf>,
    params: Vec<Vec<u8>>,
    flush: Option<(*mut c_void, usize)>,
    events: Vec<hip::hipEvent_t>,
    round: u8,
}

// SAFETY: used only from the tuner's thread.
unsafe impl Send for HipWorkspace {}

fn malloc(bytes: usize) -> Result<*mut c_void, BackendError> {
    let mut p: *mut c_void = std::ptr::null_mut();
    // SAFETY: out-pointer valid.
    check(unsafe { hip::hipMalloc(&mut p, bytes.max(4)) }, "allocating device memory")?;
    Ok(p)
}

impl HipWorkspace {
    pub(crate) fn new(problem: &ProblemData, flush_bytes: usize) -> Result<HipWorkspace, BackendError> {
        let mut stream: hip::hipStream_t = std::ptr::null_mut();
        // SAFETY: out-pointer valid.
        check(unsafe { hip::hipStreamCreate(&mut stream) }, "creating a stream")?;
        let mut ws = HipWorkspace { stream, bufs: vec![], params: vec![], flush: None, events: vec![], round: 0 };
        for a in &problem.args {
            match a {
                ArgData::Buffer(b) => {
                    let (ptr, pristine) = (malloc(b.data.len())?, malloc(b.data.len())?);
                    ws.bufs.push(DevBuf { ptr, pristine, bytes: b.data.len(), init: b.clone() });
                    if !b.data.is_empty() {
                        // SAFETY: both allocations hold the buffer's bytes.
                        unsafe {
                            check(hip::hipMemcpyHtoD(pristine, b.data.as_ptr() as *mut c_void, b.data.len()), "uploading")?;
                            check(hip::hipMemcpyDtoD(ptr, pristine, b.data.len()), "copying")?;
                        }
                    }
                    ws.params.push((ptr as u64).to_le_bytes().to_vec());
                }
                ArgData::Scalar { dtype, value, .. } => ws.params.push(ArgData::scalar_bytes(*dtype, value)),
            }
        }
        if flush_bytes > 0 {
            ws.flush = Some((malloc(flush_bytes)?, flush_bytes));
        }
        Ok(ws)
    }

    pub(crate) fn reset(&mut self, poison: bool) -> Result<(), BackendError> {
        for b in self.bufs.iter().filter(|b| b.bytes > 0) {
            // SAFETY: device buffers of `bytes` bytes.
            unsafe {
                if poison && b.init.access == Access::Write {
                    check(hip::hipMemsetD8Async(b.ptr, 0xFF, b.bytes, self.stream), "poisoning")?;
                } else {
                    check(hip::hipMemcpyDtoDAsync(b.ptr, b.pristine, b.bytes, self.stream), "restoring")?;
                }
            }
        }
        // SAFETY: valid stream.
        check(unsafe { hip::hipStreamSynchronize(self.stream) }, "synchronizing")
    }

    pub(crate) fn read_outputs(&mut self) -> Result<Vec<HostBuffer>, BackendError> {
        // SAFETY: valid stream.
        check(unsafe { hip::hipStreamSynchronize(self.stream) }, "launch (waiting for it)")?;
        let mut out = Vec::with_capacity(self.bufs.len());
        for b in &self.bufs {
            let mut data = vec![0u8; b.bytes];
            if b.bytes > 0 {
                // SAFETY: `data` holds `bytes` bytes.
                check(unsafe { hip::hipMemcpyDtoH(data.as_mut_ptr() as *mut c_void, b.ptr, b.bytes) }, "reading back")?;
            }
            out.push(HostBuffer { data, ..b.init.clone() });
        }
        Ok(out)
    }

    pub(crate) fn time(&mut self, k: &HipKernel, launch: &Launch, req: &TimeRequest) -> Result<Vec<f64>, BackendError> {
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
        let mut ptrs: Vec<*mut c_void> = self.params.iter_mut().map(|p| p.as_mut_ptr() as *mut c_void).collect();
        for i in 0..n {
            // SAFETY: handles of this process; `ptrs` point into `self.params`, copied at launch.
            unsafe {
                if let (true, Some((buf, bytes))) = (req.flush_l2, self.flush) {
                    self.round = self.round.wrapping_add(1);
                    check(hip::hipMemsetD8Async(buf, self.round, bytes, self.stream), "launch (flushing L2)")?;
                }
                check(hip::hipEventRecord(self.events[2 * i], self.stream), "launch (event)")?;
                check(
                    hip::hipModuleLaunchKernel(
                        k.func,
                        launch.grid[0],
                        launch.grid[1],
                        launch.grid[2],
                        launch.block[0],
                        launch.block[1],
                        launch.block[2],
                        launch.shared_mem_bytes,
                        self.stream,
                        ptrs.as_mut_ptr(),
                        std::ptr::null_mut(),
                    ),
                    "launch",
                )?;
                check(hip::hipEventRecord(self.events[2 * i + 1], self.stream), "launch (event)")?;
            }
        }
        let deadline = Instant::now() + req.timeout * req.launches.max(1);
        loop {
            // SAFETY: valid event.
            match unsafe { hip::hipEventQuery(self.events[2 * n - 1]) } {
                hipError_t::hipSuccess => break,
                hipError_t::hipErrorNotReady => {
                    if Instant::now() > deadline {
                        // A hung kernel cannot be stopped in-process; the device is unusable
                        // for this process from here on.
                        return Err(BackendError::DeviceLost(format!(
                            "a launch ran past its {:.1} s timeout and cannot be stopped",
                            req.timeout.as_secs_f64()
                        )));
                    }
                    std::thread::sleep(Duration::from_micros(50));
                }
                e => return Err(map(e, "launch")),
            }
        }
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let mut ms = 0f32;
            // SAFETY: both events completed.
            check(unsafe { hip::hipEventElapsedTime(&mut ms, self.events[2 * i], self.events[2 * i + 1]) }, "reading event times")?;
            out.push(ms as f64 * 1e-3);
        }
        Ok(out)
    }
}

impl Drop for HipWorkspace {
    fn drop(&mut self) {
        // SAFETY: resources created by this workspace, released once.
        unsafe {
            hip::hipStreamSynchronize(self.stream);
            for b in &self.bufs {
                hip::hipFree(b.ptr);
                hip::hipFree(b.pristine);
            }
            if let Some((p, _)) = self.flush {
                hip::hipFree(p);
            }
            for e in &self.events {
                hip::hipEventDestroy(*e);
            }
            hip::hipStreamDestroy(self.stream);
        }
    }
}
