//! Launching tuned kernels in an application's own CUDA program: its `cudarc` context and
//! streams, its `CudaSlice`s.
//!
//! A [`CudaTunable`] is one kernel of the application, described by a spec file or a
//! [`TuneJob`]. [`CudaTunable::kernel`] resolves a problem size to a config by the handle's
//! [`Policy`] (a stored or embedded winner, tuning now, or the default config with tuning in
//! the background; see [`kerntune_core::app::handle`]) and loads that config's CUBIN into the
//! application's context. [`TunedKernel::launch`] launches it on the application's stream with
//! a tuple of arguments — `&CudaSlice<T>` for buffers the kernel reads, `&mut CudaSlice<T>` for
//! those it writes, and scalars by value — checked against the spec: the count and types once
//! per tuple type, each buffer's length on every launch. A wrong argument is a
//! [`LaunchError`], never a launch.
//!
//! Tuning runs on kerntune's own backend for the same device ([`CudaBackend`], with its worker
//! process when the program called `kerntune::hook()`), so a faulting config never reaches the
//! application's context.

use crate::backend::CudaBackend;
use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, CudaView, CudaViewMut, DeviceRepr, LaunchArgs, LaunchConfig, PushKernelArg,
};
use kerntune_core::app::args::{ArgType, Lens, MAX_ARGS};
use kerntune_core::app::handle::{Autotuned, EmbeddedWinner, Origin, Policy, Slot};
use kerntune_core::spec::problem::Memory;
use kerntune_core::{app::Signature, CompileInputs};
use kerntune_core::{BackendError, Config, DType, Error, Launch, LaunchError, Prepared, TuneJob, TuneOptions, Tuner};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Element types a kernel argument's buffer may hold.
///
/// ```
/// use kerntune_cuda::launch::Element;
/// assert_eq!(<f32 as Element>::DTYPE, kerntune_core::DType::F32);
/// assert_eq!(<kerntune_core::half::f16 as Element>::DTYPE, kerntune_core::DType::F16);
/// assert_eq!(<u8 as Element>::DTYPE, kerntune_core::DType::U8);
/// ```
pub trait Element: DeviceRepr {
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

/// One argument of a CUDA launch.
///
/// ```no_run
/// # fn f(stream: std::sync::Arc<cudarc::driver::CudaStream>) -> Result<(), Box<dyn std::error::Error>> {
/// use kerntune_cuda::launch::CudaArg;
/// let x = stream.alloc_zeros::<f32>(1024)?;
/// assert_eq!((&x).size(), Some(1024));
/// # Ok(()) }
/// ```
pub trait CudaArg {
    /// What it is.
    const TYPE: ArgType;
    /// A buffer's length in elements; `None` for a scalar.
    fn size(&self) -> Option<u64>;
    /// Adds it to a launch.
    fn push<'a>(&'a mut self, b: &mut LaunchArgs<'a>);
}

impl<T: Element> CudaArg for &CudaSlice<T> {
    const TYPE: ArgType = ArgType::Buffer { dtype: Some(T::DTYPE), writable: false };
    fn size(&self) -> Option<u64> {
        Some(CudaSlice::len(self) as u64)
    }
    fn push<'a>(&'a mut self, b: &mut LaunchArgs<'a>) {
        b.arg(*self);
    }
}

impl<T: Element> CudaArg for &mut CudaSlice<T> {
    const TYPE: ArgType = ArgType::Buffer { dtype: Some(T::DTYPE), writable: true };
    fn size(&self) -> Option<u64> {
        Some(CudaSlice::len(self) as u64)
    }
    fn push<'a>(&'a mut self, b: &mut LaunchArgs<'a>) {
        b.arg(&mut **self);
    }
}

impl<T: Element> CudaArg for &CudaView<'_, T> {
    const TYPE: ArgType = ArgType::Buffer { dtype: Some(T::DTYPE), writable: false };
    fn size(&self) -> Option<u64> {
        Some(CudaView::len(self) as u64)
    }
    fn push<'a>(&'a mut self, b: &mut LaunchArgs<'a>) {
        b.arg(*self);
    }
}

impl<T: Element> CudaArg for &mut CudaViewMut<'_, T> {
    const TYPE: ArgType = ArgType::Buffer { dtype: Some(T::DTYPE), writable: true };
    fn size(&self) -> Option<u64> {
        Some(CudaViewMut::len(self) as u64)
    }
    fn push<'a>(&'a mut self, b: &mut LaunchArgs<'a>) {
        b.arg(&mut **self);
    }
}

macro_rules! scalars {
    ($($t:ty => $d:ident),*) => {$(
        impl CudaArg for $t {
            const TYPE: ArgType = ArgType::Scalar(<$t as Element>::DTYPE);
            fn size(&self) -> Option<u64> {
                None
            }
            fn push<'a>(&'a mut self, b: &mut LaunchArgs<'a>) {
                b.arg(&*self);
            }
        }
    )*};
}
kerntune_core::element_types!(scalars);

/// The arguments of a CUDA launch, in the kernel's order: a tuple of up to 16 [`CudaArg`]s.
///
/// ```
/// use cudarc::driver::CudaSlice;
/// use kerntune_cuda::launch::CudaArgs;
/// // The triad's tuple: x (read), y (written), a, n.
/// type Triad<'a> = (&'a CudaSlice<f32>, &'a mut CudaSlice<f32>, f32, u32);
/// assert_eq!(<Triad as CudaArgs>::TYPES.len(), 4);
/// ```
pub trait CudaArgs {
    /// Their types.
    const TYPES: &'static [ArgType];
    /// Their lengths.
    fn lens(&self, out: &mut Lens);
    /// Adds them to a launch.
    fn push<'a>(&'a mut self, b: &mut LaunchArgs<'a>);
}

macro_rules! tuples {
    ($($t:ident $i:tt),*) => {
        impl<$($t: CudaArg),*> CudaArgs for ($($t,)*) {
            const TYPES: &'static [ArgType] = &[$($t::TYPE),*];
            #[allow(unused_variables)]
            fn lens(&self, out: &mut Lens) {
                $(out[$i] = self.$i.size();)*
            }
            #[allow(unused_variables)]
            fn push<'a>(&'a mut self, b: &mut LaunchArgs<'a>) {
                $(self.$i.push(b);)*
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

/// A config's kernel loaded into the application's context.
pub(crate) struct AppKernel {
    module: Arc<CudaModule>,
    func: CudaFunction,
    cfg: LaunchConfig,
    signature: Signature,
}

/// Constant-memory contents the application wrote, re-applied when a background tune loads a
/// new module.
type Constants = Arc<Mutex<HashMap<String, Vec<u8>>>>;

/// One kernel of a CUDA application: tuned (or looked up) per problem size and loaded into the
/// application's context.
///
/// ```no_run
/// use cudarc::driver::CudaContext;
/// use kerntune_cuda::launch::CudaTunable;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let ctx = CudaContext::new(0)?;
/// let stream = ctx.default_stream();
/// let triad = CudaTunable::from_spec(ctx.clone(), "examples/triad/triad.toml".as_ref())?;
/// let n = 1 << 20;
/// let k = triad.kernel(&[n])?; // tunes the first time (or finds the stored winner)
/// let x = stream.memcpy_stod(&vec![1.0f32; n as usize])?;
/// let mut y = stream.alloc_zeros::<f32>(n as usize)?;
/// for _ in 0..100 {
///     k.launch(&stream, (&x, &mut y, 2.0f32, n as u32))?;
/// }
/// stream.synchronize()?;
/// # Ok(())
/// # }
/// ```
pub struct CudaTunable {
    ctx: Arc<CudaContext>,
    auto: Autotuned<CudaBackend, AppKernel>,
    constants: Constants,
}

impl CudaTunable {
    /// The kernel `job` describes, tuned on the device of `ctx` (kerntune opens its own
    /// backend on the same device) with `opts`, and loaded into `ctx`. The policy is
    /// [`Policy::Tune`], or what `KERNTUNE_TUNE`/`KERNTUNE_DISABLE` say.
    ///
    /// ```no_run
    /// # use std::sync::Arc;
    /// # fn f(ctx: Arc<cudarc::driver::CudaContext>, job: kerntune_core::TuneJob) -> Result<(), kerntune_core::Error> {
    /// let t = kerntune_cuda::launch::CudaTunable::new(ctx, job, kerntune_core::TuneOptions::default())?;
    /// # Ok(()) }
    /// ```
    pub fn new(ctx: Arc<CudaContext>, job: TuneJob, opts: TuneOptions) -> Result<CudaTunable, Error> {
        let backend = CudaBackend::open(Some(ctx.ordinal())).map_err(|e| Error::Backend(BackendError::DeviceLost(e.to_string())))?;
        let tuner = Arc::new(Tuner::new(backend));
        let constants: Constants = Arc::default();
        let (c, t, k) = (ctx.clone(), tuner.clone(), constants.clone());
        let auto = Autotuned::with_compiler(tuner, job, opts, move |job, prep, cfg, launch| load(&c, &t, &k, job, prep, cfg, launch));
        Ok(CudaTunable { ctx, auto, constants })
    }

    /// The kernel of a spec file (TOML or T1), its first problem's sizes as the template, with
    /// the spec's `[bench]`, `[prune]` and `[tune]` settings
    /// ([`TuneOptions::for_spec`](kerntune_core::TuneOptions::for_spec)) and the default database.
    ///
    /// ```no_run
    /// # fn f(ctx: std::sync::Arc<cudarc::driver::CudaContext>) -> Result<(), kerntune_core::Error> {
    /// let t = kerntune_cuda::launch::CudaTunable::from_spec(ctx, "kernels/triad.toml".as_ref())?;
    /// # Ok(()) }
    /// ```
    pub fn from_spec(ctx: Arc<CudaContext>, path: &Path) -> Result<CudaTunable, Error> {
        let spec = kerntune_core::plan::prepare::load(path)?;
        let job = spec.job("cuda", 0)?;
        let opts = TuneOptions { db: Some(kerntune_core::Database::at(kerntune_core::Database::default_path())), ..TuneOptions::for_spec(&spec)? };
        CudaTunable::new(ctx, job, opts)
    }

    /// The same kernel with another [`Policy`] (before the first [`CudaTunable::kernel`]).
    ///
    /// ```no_run
    /// # fn f(t: kerntune_cuda::launch::CudaTunable) {
    /// let t = t.policy(kerntune_core::Policy::Background);
    /// # }
    /// ```
    pub fn policy(mut self, policy: Policy) -> CudaTunable {
        self.auto = self.auto.policy(policy);
        self
    }

    /// The same kernel with winners embedded in the program (`kerntune db export --rust`).
    ///
    /// ```no_run
    /// # fn f(t: kerntune_cuda::launch::CudaTunable) {
    /// static WINNERS: &[kerntune_core::EmbeddedWinner] = &[];
    /// let t = t.embedded(WINNERS);
    /// # }
    /// ```
    pub fn embedded(mut self, winners: &'static [EmbeddedWinner]) -> CudaTunable {
        self.auto = self.auto.embedded(winners);
        self
    }

    /// The kernel for these problem sizes (in the spec's order): resolved and loaded the first
    /// time, then a lock-free lookup.
    ///
    /// ```no_run
    /// # fn f(t: kerntune_cuda::launch::CudaTunable) -> Result<(), kerntune_core::Error> {
    /// let k = t.kernel(&[1 << 20])?;
    /// println!("{} ({:?})", k.config(), k.origin());
    /// # Ok(()) }
    /// ```
    pub fn kernel(&self, sizes: &[i64]) -> Result<TunedKernel, Error> {
        Ok(TunedKernel { slot: self.auto.slot(sizes)?, ctx: self.ctx.clone(), constants: self.constants.clone() })
    }

    /// Waits for background tunes started so far (see [`Policy::Background`]).
    ///
    /// ```no_run
    /// # fn f(t: kerntune_cuda::launch::CudaTunable) { t.settle(); }
    /// ```
    pub fn settle(&self) {
        self.auto.settle();
    }
}

/// Loads the CUBIN of `cfg` into the application's context, with its constant memory filled.
fn load(
    ctx: &Arc<CudaContext>,
    tuner: &Tuner<CudaBackend>,
    constants: &Constants,
    job: &TuneJob,
    prep: &Prepared,
    cfg: &Config,
    launch: &Launch,
) -> Result<AppKernel, Error> {
    let inputs = CompileInputs::new(prep, &job.source, cfg, launch);
    let bin = tuner.backend().binary(&inputs.request(&job.source, cfg, launch))?;
    let driver = |what: &str, e: cudarc::driver::DriverError| Error::Backend(BackendError::LaunchFailed(format!("{what}: {}", crate::error::describe(&e))));
    let module = ctx.load_module(cudarc::nvrtc::Ptx::from_binary(bin.bytes)).map_err(|e| driver("loading the module", e))?;
    let func = module.load_function(&bin.entry).map_err(|e| driver("finding the kernel", e))?;
    if launch.shared_mem_bytes > 48 * 1024 {
        func.set_attribute(cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, launch.shared_mem_bytes as i32)
            .map_err(|e| driver("allowing the dynamic shared memory", e))?;
    }
    let stream = ctx.default_stream();
    let written = constants.lock().unwrap_or_else(|p| p.into_inner());
    for b in prep.data.buffers().filter(|b| b.memory != Memory::Global) {
        let data = written.get(&b.name).unwrap_or(&b.data);
        fill(&module, &stream, &b.name, data).map_err(|e| Error::Backend(BackendError::LaunchFailed(e.to_string())))?;
    }
    stream.synchronize().map_err(|e| driver("filling constant memory", e))?;
    Ok(AppKernel {
        module,
        func,
        cfg: LaunchConfig {
            grid_dim: (launch.grid[0], launch.grid[1], launch.grid[2]),
            block_dim: (launch.block[0], launch.block[1], launch.block[2]),
            shared_mem_bytes: launch.shared_mem_bytes,
        },
        signature: Signature::new(&job.source.name, &prep.layout, true, true),
    })
}

/// Copies `data` into the module's `__constant__` symbol `name`.
fn fill(module: &Arc<CudaModule>, stream: &Arc<CudaStream>, name: &str, data: &[u8]) -> Result<(), String> {
    let mut symbol = module.get_global(name, stream).map_err(|e| format!("the module has no __constant__ symbol `{name}` ({})", crate::error::describe(&e)))?;
    if symbol.len() < data.len() {
        return Err(format!("the __constant__ symbol `{name}` holds {} B, the data {} B", symbol.len(), data.len()));
    }
    let mut head = symbol.slice_mut(..data.len());
    stream.memcpy_htod(data, &mut head).map_err(|e| format!("filling `{name}`: {}", crate::error::describe(&e)))
}

/// A tuned kernel, ready to launch on the application's streams. It launches its key's current
/// kernel: a background tune may swap in a faster one between launches.
///
/// ```no_run
/// # fn f(triad: kerntune_cuda::launch::CudaTunable, stream: std::sync::Arc<cudarc::driver::CudaStream>) -> Result<(), Box<dyn std::error::Error>> {
/// let k = triad.kernel(&[1 << 20])?;
/// let (x, mut y) = (stream.alloc_zeros::<f32>(1 << 20)?, stream.alloc_zeros::<f32>(1 << 20)?);
/// k.launch(&stream, (&x, &mut y, 2.0f32, 1u32 << 20))?;
/// # Ok(()) }
/// ```
pub struct TunedKernel {
    slot: Arc<Slot<AppKernel>>,
    ctx: Arc<CudaContext>,
    constants: Constants,
}

impl TunedKernel {
    /// Launches on `stream` (of the context the kernel was made for) with `args`, after
    /// checking them against the spec.
    ///
    /// ```no_run
    /// # fn f(k: kerntune_cuda::launch::TunedKernel, stream: std::sync::Arc<cudarc::driver::CudaStream>) -> Result<(), Box<dyn std::error::Error>> {
    /// let x = stream.alloc_zeros::<f32>(1 << 20)?;
    /// let mut y = stream.alloc_zeros::<f32>(1 << 20)?;
    /// k.launch(&stream, (&x, &mut y, 2.0f32, 1u32 << 20))?;
    /// # Ok(()) }
    /// ```
    pub fn launch<A: CudaArgs>(&self, stream: &Arc<CudaStream>, mut args: A) -> Result<(), LaunchError> {
        let t = self.slot.load();
        let k = &t.kernel;
        // The same CUDA context (two `CudaContext`s of one device share its primary context).
        if stream.context().cu_ctx() != self.ctx.cu_ctx() {
            return Err(LaunchError::Device {
                kernel: k.signature.kernel().to_string(),
                message: "the stream belongs to another CUDA context than the kernel was loaded into".into(),
            });
        }
        let mut lens: Lens = [None; MAX_ARGS];
        args.lens(&mut lens);
        k.signature.check_raw(A::TYPES, &lens)?;
        let mut b = stream.launch_builder(&k.func);
        args.push(&mut b);
        // SAFETY: the arguments match the kernel's parameters in count and type, and every
        // buffer holds at least the elements the problem (and so the launch geometry) needs:
        // both checked above against the spec the kernel was tuned from.
        unsafe { b.launch(k.cfg) }.map(drop).map_err(|e| LaunchError::Device { kernel: k.signature.kernel().to_string(), message: crate::error::describe(&e) })
    }

    /// Writes the `__constant__` symbol of a constant-memory argument (the filter of a
    /// convolution, say); kept for modules a background tune loads later.
    ///
    /// ```no_run
    /// # fn f(k: kerntune_cuda::launch::TunedKernel, stream: std::sync::Arc<cudarc::driver::CudaStream>) -> Result<(), kerntune_core::LaunchError> {
    /// k.write_constant(&stream, "d_filter", &[0.5f32; 225])?;
    /// # Ok(()) }
    /// ```
    pub fn write_constant<T: Element>(&self, stream: &Arc<CudaStream>, name: &str, data: &[T]) -> Result<(), LaunchError> {
        let t = self.slot.load();
        let kernel = t.kernel.signature.kernel().to_string();
        // SAFETY: `T: DeviceRepr` is plain data; viewing it as bytes reads initialized memory.
        let bytes = unsafe { std::slice::from_raw_parts(data.as_ptr() as *const u8, std::mem::size_of_val(data)) }.to_vec();
        fill(&t.kernel.module, stream, name, &bytes).map_err(|message| LaunchError::Device { kernel, message })?;
        self.constants.lock().unwrap_or_else(|p| p.into_inner()).insert(name.to_string(), bytes);
        Ok(())
    }

    /// The config launched now.
    ///
    /// ```no_run
    /// # fn f(k: kerntune_cuda::launch::TunedKernel) { println!("{}", k.config()); }
    /// ```
    pub fn config(&self) -> Config {
        self.slot.load().config.clone()
    }

    /// Where that config came from.
    ///
    /// ```no_run
    /// # fn f(k: kerntune_cuda::launch::TunedKernel) { assert_eq!(k.origin(), kerntune_core::Origin::Tuned); }
    /// ```
    pub fn origin(&self) -> Origin {
        self.slot.load().origin
    }

    /// Its grid, block and dynamic shared memory.
    ///
    /// ```no_run
    /// # fn f(k: kerntune_cuda::launch::TunedKernel) { println!("{:?}", k.geometry().grid); }
    /// ```
    pub fn geometry(&self) -> Launch {
        self.slot.load().launch
    }

    /// The loaded function and its launch configuration, for launching it yourself (a CUDA
    /// graph, a cooperative launch): what [`TunedKernel::launch`] does after checking the
    /// arguments. A background tune that swaps the winner does not update a function taken
    /// earlier.
    ///
    /// ```no_run
    /// # fn f(k: kerntune_cuda::launch::TunedKernel, stream: std::sync::Arc<cudarc::driver::CudaStream>) -> Result<(), Box<dyn std::error::Error>> {
    /// use cudarc::driver::PushKernelArg;
    /// let (func, cfg) = k.raw();
    /// let (x, mut y) = (stream.alloc_zeros::<f32>(1024)?, stream.alloc_zeros::<f32>(1024)?);
    /// let (a, n) = (2.0f32, 1024u32);
    /// let mut b = stream.launch_builder(&func);
    /// b.arg(&x).arg(&mut y).arg(&a).arg(&n);
    /// // SAFETY: the triad's parameters, with buffers of n elements.
    /// unsafe { b.launch(cfg)? };
    /// # Ok(()) }
    /// ```
    pub fn raw(&self) -> (CudaFunction, LaunchConfig) {
        let t = self.slot.load();
        (t.kernel.func.clone(), t.kernel.cfg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kerntune_core::plan::prepare::{ArgLayout, LayoutKind};
    use kerntune_core::spec::problem::Access;

    /// The argument tuples of the triad, checked without a device: the tuple types carry
    /// everything the check needs.
    #[test]
    fn tuple_types_are_checked_against_the_spec() {
        let buf = |name: &str, access| ArgLayout {
            name: name.into(),
            dtype: DType::F32,
            kind: LayoutKind::Buffer { elements: 1024, bytes: 4096, access, memory: Memory::Global },
        };
        let scalar = |name: &str, dtype| ArgLayout { name: name.into(), dtype, kind: LayoutKind::Scalar { value: 1i64.into() } };
        let layout = vec![buf("x", Access::Read), buf("y", Access::ReadWrite), scalar("a", DType::F32), scalar("n", DType::U32)];
        let s = Signature::new("triad", &layout, true, true);
        type Good<'a> = (&'a CudaSlice<f32>, &'a mut CudaSlice<f32>, f32, u32);
        s.check_types(<Good<'_> as CudaArgs>::TYPES).unwrap();
        type ReadOnlyY<'a> = (&'a CudaSlice<f32>, &'a CudaSlice<f32>, f32, u32);
        let e = s.check_types(<ReadOnlyY<'_> as CudaArgs>::TYPES).unwrap_err().to_string();
        assert!(e.contains("argument 1 (`y`): expected a writable buffer of float"), "{e}");
        type Doubles<'a> = (&'a CudaSlice<f64>, &'a mut CudaSlice<f32>, f32, u32);
        assert!(s.check_types(<Doubles<'_> as CudaArgs>::TYPES).unwrap_err().to_string().contains("got a buffer of double"));
        type SignedN<'a> = (&'a CudaSlice<f32>, &'a mut CudaSlice<f32>, f32, i32);
        assert!(s.check_types(<SignedN<'_> as CudaArgs>::TYPES).unwrap_err().to_string().contains("expected an unsigned int scalar, got an int scalar"));
        type Short<'a> = (&'a CudaSlice<f32>, &'a mut CudaSlice<f32>, f32);
        assert!(s.check_types(<Short<'_> as CudaArgs>::TYPES).unwrap_err().to_string().contains("takes 4 arguments"));
        let mut lens: Lens = [None; MAX_ARGS];
        lens[..4].copy_from_slice(&[Some(1024), Some(1000), None, None]);
        assert!(s.check_raw(<Good<'_> as CudaArgs>::TYPES, &lens).unwrap_err().to_string().contains("holds 1000 elements, the problem needs 1024"));
    }
}
