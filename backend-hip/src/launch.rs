//! Launching tuned kernels in an application's own HIP program: its device, its streams
//! (`hipStream_t`) and its device pointers.
//!
//! The same shape as the CUDA backend's launch API: a [`HipTunable`] resolves a problem size
//! to a config by its [`Policy`] (a stored or embedded winner, tuning now, or the default
//! config with tuning in the background) and loads that config's code object on the
//! application's device; [`TunedKernel::launch`] launches it on the application's stream with
//! a tuple of arguments — `&DeviceBuffer<T>` for buffers the kernel reads, `&mut
//! DeviceBuffer<T>` for those it writes, scalars by value — checked against the spec first.
//! HIP device memory is raw pointers, so the application states each buffer's length when it
//! wraps a pointer ([`DeviceBuffer::from_raw`]); the lengths are then checked on every launch.
//!
//! Not yet run on an AMD GPU (none was available): it is built and type-checked against the
//! real HIP headers and library, and its argument checks are tested on the host.

use crate::backend::HipBackend;
use crate::error::{check, describe};
use hip_sys::hiprt::{self as hip, hipError_t};
use kerntune_core::app::args::{ArgType, Lens, MAX_ARGS};
use kerntune_core::app::handle::{Autotuned, EmbeddedWinner, Origin, Policy, Slot};
use kerntune_core::spec::problem::Memory;
use kerntune_core::{app::Signature, CompileInputs};
use kerntune_core::{BackendError, Config, DType, Error, Launch, LaunchError, Prepared, TuneJob, TuneOptions, Tuner};
use std::collections::HashMap;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Element types a buffer argument may hold.
///
/// ```
/// use kerntune_hip::launch::Element;
/// assert_eq!(<f32 as Element>::DTYPE, kerntune_core::DType::F32);
/// assert_eq!(<kerntune_core::half::f16 as Element>::DTYPE, kerntune_core::DType::F16);
/// assert_eq!(<u8 as Element>::DTYPE, kerntune_core::DType::U8);
/// ```
pub trait Element: Copy {
    /// The spec's name for it.
    const DTYPE: DType;
}
macro_rules! elements {
    ($($t:ty => $d:ident),*) => {$(
        impl Element for $t {
            const DTYPE: DType = DType::$d;
        }
    )*};
}
kerntune_core::element_types!(elements);

/// A device allocation of the application's, with the length the application states.
#[derive(Debug)]
///
/// ```
/// use kerntune_hip::launch::DeviceBuffer;
/// // SAFETY (of this example): the buffer is never launched on.
/// let x = unsafe { DeviceBuffer::<f32>::from_raw(std::ptr::null_mut(), 0) };
/// assert!(x.is_empty());
/// ```
pub struct DeviceBuffer<T> {
    ptr: *mut c_void,
    len: usize,
    marker: PhantomData<T>,
}

impl<T: Element> DeviceBuffer<T> {
    /// Wraps a device pointer holding `len` elements of `T`.
    ///
    /// # Safety
    /// `ptr` must be a device allocation of at least `len` elements of `T`, on the device the
    /// kernel was loaded for, valid for as long as launches use it.
    ///
    /// ```no_run
    /// # let (ptr, n) = (std::ptr::null_mut(), 0usize);
    /// let x = unsafe { kerntune_hip::launch::DeviceBuffer::<f32>::from_raw(ptr, n) };
    /// ```
    pub unsafe fn from_raw(ptr: *mut c_void, len: usize) -> DeviceBuffer<T> {
        DeviceBuffer { ptr, len, marker: PhantomData }
    }

    /// Its length in elements.
    ///
    /// ```no_run
    /// # fn f(x: kerntune_hip::launch::DeviceBuffer<f32>) { assert!(x.len() > 0); }
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when it holds no element.
    ///
    /// ```no_run
    /// # fn f(x: kerntune_hip::launch::DeviceBuffer<f32>) { assert!(!x.is_empty()); }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// An application's HIP stream.
#[derive(Debug)]
///
/// ```
/// let s = kerntune_hip::launch::Stream::default_stream();
/// ```
pub struct Stream(hip::hipStream_t);

impl Stream {
    /// Wraps a stream handle.
    ///
    /// # Safety
    /// `stream` must be a live stream of the device the kernel was loaded for (or null, the
    /// default stream), for as long as launches use it.
    ///
    /// ```no_run
    /// # let raw = std::ptr::null_mut();
    /// let s = unsafe { kerntune_hip::launch::Stream::from_raw(raw) };
    /// ```
    pub unsafe fn from_raw(stream: hip::hipStream_t) -> Stream {
        Stream(stream)
    }

    /// The device's default (null) stream.
    ///
    /// ```no_run
    /// let s = kerntune_hip::launch::Stream::default_stream();
    /// ```
    pub fn default_stream() -> Stream {
        Stream(std::ptr::null_mut())
    }
}

/// One argument of a HIP launch.
///
/// ```
/// use kerntune_hip::launch::{DeviceBuffer, HipArg};
/// let x = unsafe { DeviceBuffer::<f32>::from_raw(std::ptr::null_mut(), 1024) };
/// assert_eq!((&x).size(), Some(1024));
/// assert_eq!(2.0f32.size(), None);
/// ```
pub trait HipArg {
    /// What it is.
    const TYPE: ArgType;
    /// A buffer's length in elements; `None` for a scalar.
    fn size(&self) -> Option<u64>;
    /// Where its value is (what `hipModuleLaunchKernel`'s parameter array points at).
    fn param(&self) -> *mut c_void;
}

impl<T: Element> HipArg for &DeviceBuffer<T> {
    const TYPE: ArgType = ArgType::Buffer { dtype: Some(T::DTYPE), writable: false };
    fn size(&self) -> Option<u64> {
        Some(self.len as u64)
    }
    fn param(&self) -> *mut c_void {
        &self.ptr as *const *mut c_void as *mut c_void
    }
}

impl<T: Element> HipArg for &mut DeviceBuffer<T> {
    const TYPE: ArgType = ArgType::Buffer { dtype: Some(T::DTYPE), writable: true };
    fn size(&self) -> Option<u64> {
        Some(self.len as u64)
    }
    fn param(&self) -> *mut c_void {
        &self.ptr as *const *mut c_void as *mut c_void
    }
}

macro_rules! scalars {
    ($($t:ty => $d:ident),*) => {$(
        impl HipArg for $t {
            const TYPE: ArgType = ArgType::Scalar(<$t as Element>::DTYPE);
            fn size(&self) -> Option<u64> {
                None
            }
            fn param(&self) -> *mut c_void {
                self as *const $t as *mut c_void
            }
        }
    )*};
}
kerntune_core::element_types!(scalars);

/// The arguments of a HIP launch, in the kernel's order: a tuple of up to 16 [`HipArg`]s.
///
/// ```
/// use kerntune_hip::launch::{DeviceBuffer, HipArgs};
/// type Triad<'a> = (&'a DeviceBuffer<f32>, &'a mut DeviceBuffer<f32>, f32, u32);
/// assert_eq!(<Triad as HipArgs>::TYPES.len(), 4);
/// ```
pub trait HipArgs {
    /// Their types.
    const TYPES: &'static [ArgType];
    /// Their lengths.
    fn lens(&self, out: &mut Lens);
    /// Where their values are.
    fn params(&self, out: &mut [*mut c_void; MAX_ARGS]);
}

macro_rules! tuples {
    ($($t:ident $i:tt),*) => {
        impl<$($t: HipArg),*> HipArgs for ($($t,)*) {
            const TYPES: &'static [ArgType] = &[$($t::TYPE),*];
            #[allow(unused_variables)]
            fn lens(&self, out: &mut Lens) {
                $(out[$i] = self.$i.size();)*
            }
            #[allow(unused_variables)]
            fn params(&self, out: &mut [*mut c_void; MAX_ARGS]) {
                $(out[$i] = self.$i.param();)*
            }
        }
    };
}
tuples!();
tuples!(A 0);
tuples!(A 0, B 1);
tuples!(A 0, B 1, C 2);
tuples!(A 0, B 1, C 2, D 3);
tuples!(A 0, B 1, C 2, D 3, E 4);
tuples!(A 0, B 1, C 2, D 3, E 4, F 5);
tuples!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
tuples!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
tuples!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8);
tuples!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9);
tuples!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10);
tuples!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11);
tuples!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12);
tuples!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13);
tuples!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14);
tuples!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14, P 15);

/// A config's code object loaded on the application's device.
pub(crate) struct AppKernel {
    module: hip::hipModule_t,
    func: hip::hipFunction_t,
    launch: Launch,
    signature: Signature,
}

// SAFETY: HIP module and function handles are process-wide and thread-safe to launch from.
unsafe impl Send for AppKernel {}
// SAFETY: as above.
unsafe impl Sync for AppKernel {}

impl Drop for AppKernel {
    fn drop(&mut self) {
        // SAFETY: loaded by `load`, unloaded once.
        unsafe { hip::hipModuleUnload(self.module) };
    }
}

type Constants = Arc<Mutex<HashMap<String, Vec<u8>>>>;

/// One kernel of a HIP application: tuned (or looked up) per problem size and loaded on the
/// application's device.
///
/// ```no_run
/// use kerntune_hip::launch::{DeviceBuffer, HipTunable, Stream};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let (x_ptr, y_ptr) = (std::ptr::null_mut(), std::ptr::null_mut());
/// let stream = Stream::default_stream();
/// let triad = HipTunable::from_spec(0, "examples/triad/triad.toml".as_ref())?;
/// let n = 1usize << 20;
/// let k = triad.kernel(&[n as i64])?;
/// let x = unsafe { DeviceBuffer::<f32>::from_raw(x_ptr, n) };
/// let mut y = unsafe { DeviceBuffer::<f32>::from_raw(y_ptr, n) };
/// k.launch(&stream, (&x, &mut y, 2.0f32, n as u32))?;
/// # Ok(())
/// # }
/// ```
pub struct HipTunable {
    ordinal: usize,
    auto: Autotuned<HipBackend, AppKernel>,
    constants: Constants,
}

impl HipTunable {
    /// The kernel `job` describes, tuned on device `ordinal` (kerntune opens its own backend
    /// there) with `opts`, and loaded there for the application.
    ///
    /// ```no_run
    /// # fn f(job: kerntune_core::TuneJob) -> Result<(), kerntune_core::Error> {
    /// let t = kerntune_hip::launch::HipTunable::new(0, job, kerntune_core::TuneOptions::default())?;
    /// # Ok(()) }
    /// ```
    pub fn new(ordinal: usize, job: TuneJob, opts: TuneOptions) -> Result<HipTunable, Error> {
        let backend = HipBackend::open(Some(ordinal)).map_err(|e| Error::Backend(BackendError::DeviceLost(e.to_string())))?;
        let tuner = Arc::new(Tuner::new(backend));
        let constants: Constants = Arc::default();
        let (t, k) = (tuner.clone(), constants.clone());
        let auto = Autotuned::with_compiler(tuner, job, opts, move |job, prep, cfg, launch| load(ordinal, &t, &k, job, prep, cfg, launch));
        Ok(HipTunable { ordinal, auto, constants })
    }

    /// The kernel of a spec file (TOML or T1), with the spec's settings (its `[bench]`, `[prune]` and `[tune]`:
    /// [`TuneOptions::for_spec`](kerntune_core::TuneOptions::for_spec)) and the default database.
    ///
    /// ```no_run
    /// # fn f() -> Result<(), kerntune_core::Error> {
    /// let t = kerntune_hip::launch::HipTunable::from_spec(0, "kernels/triad.toml".as_ref())?;
    /// # Ok(()) }
    /// ```
    pub fn from_spec(ordinal: usize, path: &Path) -> Result<HipTunable, Error> {
        let spec = kerntune_core::plan::prepare::load(path)?;
        let job = spec.job("hip", 0)?;
        let opts = TuneOptions { db: Some(kerntune_core::Database::at(kerntune_core::Database::default_path())), ..TuneOptions::for_spec(&spec)? };
        HipTunable::new(ordinal, job, opts)
    }

    /// The same kernel with another [`Policy`].
    ///
    /// ```no_run
    /// # fn f(t: kerntune_hip::launch::HipTunable) { let t = t.policy(kerntune_core::Policy::Stored); }
    /// ```
    pub fn policy(mut self, policy: Policy) -> HipTunable {
        self.auto = self.auto.policy(policy);
        self
    }

    /// The same kernel with winners embedded in the program.
    ///
    /// ```no_run
    /// # fn f(t: kerntune_hip::launch::HipTunable) { static W: &[kerntune_core::EmbeddedWinner] = &[]; let t = t.embedded(W); }
    /// ```
    pub fn embedded(mut self, winners: &'static [EmbeddedWinner]) -> HipTunable {
        self.auto = self.auto.embedded(winners);
        self
    }

    /// The kernel for these problem sizes.
    ///
    /// ```no_run
    /// # fn f(t: kerntune_hip::launch::HipTunable) -> Result<(), kerntune_core::Error> { let k = t.kernel(&[1 << 20])?; Ok(()) }
    /// ```
    pub fn kernel(&self, sizes: &[i64]) -> Result<TunedKernel, Error> {
        Ok(TunedKernel { slot: self.auto.slot(sizes)?, ordinal: self.ordinal, constants: self.constants.clone() })
    }

    /// Waits for background tunes started so far.
    ///
    /// ```no_run
    /// # fn f(t: kerntune_hip::launch::HipTunable) { t.settle(); }
    /// ```
    pub fn settle(&self) {
        self.auto.settle();
    }
}

fn set_device(ordinal: usize) -> Result<(), BackendError> {
    // SAFETY: plain runtime call.
    check(unsafe { hip::hipSetDevice(ordinal as i32) }, "selecting the device")
}

/// Loads the code object of `cfg` on device `ordinal`, with its constant memory filled.
fn load(
    ordinal: usize,
    tuner: &Tuner<HipBackend>,
    constants: &Constants,
    job: &TuneJob,
    prep: &Prepared,
    cfg: &Config,
    launch: &Launch,
) -> Result<AppKernel, Error> {
    let inputs = CompileInputs::new(prep, &job.source, cfg, launch);
    let bin = tuner.backend().binary(&inputs.request(&job.source, cfg, launch))?;
    set_device(ordinal)?;
    let mut module: hip::hipModule_t = std::ptr::null_mut();
    // SAFETY: a complete code object; out-pointer valid.
    check(unsafe { hip::hipModuleLoadData(&mut module, bin.bytes.as_ptr() as *const c_void) }, "loading the code object")?;
    let name = std::ffi::CString::new(bin.entry.as_str()).map_err(|_| Error::Backend(BackendError::other("kernel name contains a NUL byte")))?;
    let mut func: hip::hipFunction_t = std::ptr::null_mut();
    // SAFETY: module just loaded; name valid.
    let r = unsafe { hip::hipModuleGetFunction(&mut func, module, name.as_ptr()) };
    let k = AppKernel { module, func, launch: *launch, signature: Signature::new(&job.source.name, &prep.layout, true, true) };
    if r != hipError_t::hipSuccess {
        return Err(Error::Backend(BackendError::LaunchFailed(format!("the code object has no kernel `{}`: {}", bin.entry, describe(r)))));
    }
    let written = constants.lock().unwrap_or_else(|p| p.into_inner());
    for b in prep.data.buffers().filter(|b| b.memory != Memory::Global) {
        fill(k.module, &b.name, written.get(&b.name).unwrap_or(&b.data)).map_err(|m| Error::Backend(BackendError::LaunchFailed(m)))?;
    }
    Ok(k)
}

/// Copies `data` into the module's `__constant__` symbol `name`.
fn fill(module: hip::hipModule_t, name: &str, data: &[u8]) -> Result<(), String> {
    let cname = std::ffi::CString::new(name).map_err(|_| "a constant's name contains a NUL byte".to_string())?;
    let (mut ptr, mut size): (hip::hipDeviceptr_t, usize) = (std::ptr::null_mut(), 0);
    // SAFETY: a loaded module; valid out-pointers and C string.
    let r = unsafe { hip::hipModuleGetGlobal(&mut ptr, &mut size, module, cname.as_ptr()) };
    if r != hipError_t::hipSuccess {
        return Err(format!("the module has no __constant__ symbol `{name}` ({})", describe(r)));
    }
    if size < data.len() {
        return Err(format!("the __constant__ symbol `{name}` holds {size} B, the data {} B", data.len()));
    }
    // SAFETY: the symbol holds at least `data.len()` bytes.
    let r = unsafe { hip::hipMemcpyHtoD(ptr, data.as_ptr() as *mut c_void, data.len()) };
    if r != hipError_t::hipSuccess {
        return Err(format!("filling `{name}`: {}", describe(r)));
    }
    Ok(())
}

/// A tuned kernel, ready to launch on the application's streams.
///
/// ```no_run
/// # fn f(triad: kerntune_hip::launch::HipTunable, x: kerntune_hip::launch::DeviceBuffer<f32>, mut y: kerntune_hip::launch::DeviceBuffer<f32>) -> Result<(), Box<dyn std::error::Error>> {
/// let k = triad.kernel(&[1 << 20])?;
/// k.launch(&kerntune_hip::launch::Stream::default_stream(), (&x, &mut y, 2.0f32, 1u32 << 20))?;
/// # Ok(()) }
/// ```
pub struct TunedKernel {
    slot: Arc<Slot<AppKernel>>,
    ordinal: usize,
    constants: Constants,
}

impl TunedKernel {
    /// Launches on `stream` (a stream of the kernel's device) with `args`, after checking them
    /// against the spec.
    ///
    /// ```no_run
    /// # fn f(k: kerntune_hip::launch::TunedKernel, x: kerntune_hip::launch::DeviceBuffer<f32>, mut y: kerntune_hip::launch::DeviceBuffer<f32>) -> Result<(), kerntune_core::LaunchError> {
    /// k.launch(&kerntune_hip::launch::Stream::default_stream(), (&x, &mut y, 2.0f32, 1u32 << 20))?;
    /// # Ok(()) }
    /// ```
    pub fn launch<A: HipArgs>(&self, stream: &Stream, args: A) -> Result<(), LaunchError> {
        let t = self.slot.load();
        let k = &t.kernel;
        let mut lens: Lens = [None; MAX_ARGS];
        args.lens(&mut lens);
        k.signature.check_raw(A::TYPES, &lens)?;
        let mut params = [std::ptr::null_mut(); MAX_ARGS];
        args.params(&mut params);
        let l = k.launch;
        // SAFETY: the arguments match the kernel's parameters in count and type, each buffer
        // holds what the launch geometry needs (checked above), and `params` points at `args`,
        // which outlives the call (HIP copies the values at launch).
        let r = unsafe { crate::bench::launch_module_kernel(k.func, &l, stream.0, &mut params) };
        if r != hipError_t::hipSuccess {
            return Err(LaunchError::Device { kernel: k.signature.kernel().to_string(), message: describe(r) });
        }
        Ok(())
    }

    /// Writes the `__constant__` symbol of a constant-memory argument; kept for modules a
    /// background tune loads later.
    ///
    /// ```no_run
    /// # fn f(k: kerntune_hip::launch::TunedKernel) -> Result<(), kerntune_core::LaunchError> { k.write_constant("d_filter", &[0.5f32; 225]) }
    /// ```
    pub fn write_constant<T: Element>(&self, name: &str, data: &[T]) -> Result<(), LaunchError> {
        let t = self.slot.load();
        let kernel = t.kernel.signature.kernel().to_string();
        set_device(self.ordinal).map_err(|e| LaunchError::Device { kernel: kernel.clone(), message: e.to_string() })?;
        // SAFETY: `T` is plain numeric data; viewing it as bytes reads initialized memory.
        let bytes = unsafe { std::slice::from_raw_parts(data.as_ptr() as *const u8, std::mem::size_of_val(data)) }.to_vec();
        fill(t.kernel.module, name, &bytes).map_err(|message| LaunchError::Device { kernel, message })?;
        self.constants.lock().unwrap_or_else(|p| p.into_inner()).insert(name.to_string(), bytes);
        Ok(())
    }

    /// The config launched now.
    ///
    /// ```no_run
    /// # fn f(k: kerntune_hip::launch::TunedKernel) { println!("{}", k.config()); }
    /// ```
    pub fn config(&self) -> Config {
        self.slot.load().config.clone()
    }

    /// Where that config came from.
    ///
    /// ```no_run
    /// # fn f(k: kerntune_hip::launch::TunedKernel) { println!("{:?}", k.origin()); }
    /// ```
    pub fn origin(&self) -> Origin {
        self.slot.load().origin
    }

    /// Its grid, block and dynamic shared memory.
    ///
    /// ```no_run
    /// # fn f(k: kerntune_hip::launch::TunedKernel) { println!("{:?}", k.geometry().grid); }
    /// ```
    pub fn geometry(&self) -> Launch {
        self.slot.load().launch
    }

    /// The loaded function and its launch geometry, for launching it yourself (a HIP graph, a
    /// cooperative launch): what [`TunedKernel::launch`] does after checking the arguments. The
    /// [`RawKernel`] keeps its code object loaded while it lives; a background tune that swaps
    /// the winner does not update one taken earlier.
    ///
    /// ```no_run
    /// # fn f(k: kerntune_hip::launch::TunedKernel, stream: kerntune_hip::hip_sys::hiprt::hipStream_t, x: *mut std::ffi::c_void, y: *mut std::ffi::c_void) {
    /// use kerntune_hip::hip_sys::hiprt::hipModuleLaunchKernel;
    /// use std::ffi::c_void;
    /// let raw = k.raw();
    /// let l = raw.geometry();
    /// let (mut x, mut y, mut a, mut n) = (x, y, 2.0f32, 1u32 << 20);
    /// let mut params: [*mut c_void; 4] =
    ///     [(&raw mut x).cast(), (&raw mut y).cast(), (&raw mut a).cast(), (&raw mut n).cast()];
    /// // SAFETY: the triad's parameters, x and y hipMalloc'd buffers of n floats on k's device.
    /// let r = unsafe {
    ///     hipModuleLaunchKernel(raw.function(), l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1], l.block[2],
    ///                           l.shared_mem_bytes, stream, params.as_mut_ptr(), std::ptr::null_mut())
    /// };
    /// assert_eq!(r, kerntune_hip::hip_sys::hiprt::hipError_t::hipSuccess);
    /// # }
    /// ```
    pub fn raw(&self) -> RawKernel {
        RawKernel(Arc::clone(&self.slot.load()))
    }
}

/// A tuned kernel's loaded function and launch geometry ([`TunedKernel::raw`]); its code object
/// stays loaded while this lives.
pub struct RawKernel(Arc<kerntune_core::app::handle::Tuned<AppKernel>>);

impl RawKernel {
    /// The function, for `hipModuleLaunchKernel` (valid while this `RawKernel` lives).
    ///
    /// ```no_run
    /// # fn f(k: kerntune_hip::launch::TunedKernel) { let raw = k.raw(); println!("{:?}", raw.function()); }
    /// ```
    pub fn function(&self) -> hip::hipFunction_t {
        self.0.kernel.func
    }

    /// Its grid, block and dynamic shared memory.
    ///
    /// ```no_run
    /// # fn f(k: kerntune_hip::launch::TunedKernel) { println!("{:?}", k.raw().geometry().block); }
    /// ```
    pub fn geometry(&self) -> Launch {
        self.0.kernel.launch
    }

    /// The config it was compiled for.
    ///
    /// ```no_run
    /// # fn f(k: kerntune_hip::launch::TunedKernel) { println!("{}", k.raw().config()); }
    /// ```
    pub fn config(&self) -> &Config {
        &self.0.config
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kerntune_core::plan::prepare::{ArgLayout, LayoutKind};
    use kerntune_core::spec::problem::Access;

    #[test]
    fn tuple_types_are_checked_against_the_spec() {
        let buf = |name: &str, access| ArgLayout {
            name: name.into(),
            dtype: DType::F32,
            kind: LayoutKind::Buffer { elements: 64, bytes: 256, access, memory: Memory::Global },
        };
        let s = Signature::new("k", &[buf("x", Access::Read), buf("y", Access::Write)], true, true);
        type Good<'a> = (&'a DeviceBuffer<f32>, &'a mut DeviceBuffer<f32>);
        s.check_types(<Good<'_> as HipArgs>::TYPES).unwrap();
        type Bad<'a> = (&'a DeviceBuffer<f32>, &'a DeviceBuffer<f32>);
        assert!(s.check_types(<Bad<'_> as HipArgs>::TYPES).is_err());
        // The parameter array points at each argument's value.
        let x = unsafe { DeviceBuffer::<f32>::from_raw(0x1000 as *mut c_void, 64) };
        let mut y = unsafe { DeviceBuffer::<f32>::from_raw(0x2000 as *mut c_void, 32) };
        let args: Good<'_> = (&x, &mut y);
        let mut p = [std::ptr::null_mut(); MAX_ARGS];
        args.params(&mut p);
        // SAFETY: p[0] points at x's device pointer.
        assert_eq!(unsafe { *(p[0] as *const *mut c_void) } as usize, 0x1000);
        let mut lens: Lens = [None; MAX_ARGS];
        args.lens(&mut lens);
        assert!(s.check_raw(<Good<'_> as HipArgs>::TYPES, &lens).unwrap_err().to_string().contains("holds 32 elements, the problem needs 64"));
    }
}
