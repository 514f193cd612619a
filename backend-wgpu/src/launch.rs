//! Launching tuned kernels in an application's own wgpu program: its `Device`, `Queue` and
//! `Buffer`s, recorded into its own `CommandEncoder` if it likes.
//!
//! A [`WgpuTunable`] is one kernel of the application, described by a spec file or a
//! [`TuneJob`]. [`WgpuTunable::kernel`] resolves a problem size to a config by the handle's
//! [`Policy`] (a stored or embedded winner, tuning now, or the default config with tuning in
//! the background) and builds that config's compute pipeline on the application's device.
//! [`TunedKernel::launch`] submits one dispatch on the application's queue, and
//! [`TunedKernel::record`] records it into the application's encoder. Arguments are the
//! spec's buffers, in order, as `&wgpu::Buffer`: WGSL has no by-value kernel arguments, so the
//! spec's scalars are compiled into the pipeline for the problem the kernel was made for. The
//! count and each buffer's size (bytes) and `STORAGE` usage are checked before anything is
//! recorded; a wrong argument is a [`LaunchError`], never a dispatch.
//!
//! Tuning runs on kerntune's own device on the same adapter, so the application's device only
//! ever sees the winner; where the program called `kerntune::hook()` (or
//! [`crate::worker::hook`]), the tune's kernels run in a worker process, as the CLI's do, so
//! that a shader that never ends is killed with that process and the tune goes on
//! ([`WgpuBackend::for_adapter`]).

use crate::backend::WgpuBackend;
use kerntune_core::app::args::{ArgType, Lens, MAX_ARGS};
use kerntune_core::app::handle::{Autotuned, EmbeddedWinner, Origin, Policy, Slot};
use kerntune_core::{app::Signature, CompileInputs};
use kerntune_core::{Config, Error, Launch, LaunchError, Prepared, TuneJob, TuneOptions, Tuner};
use std::path::Path;
use std::sync::Arc;

/// The arguments of a wgpu launch: a tuple of up to 16 `&wgpu::Buffer`s, the spec's buffers in
/// order.
///
/// ```
/// use kerntune_wgpu::launch::WgpuArgs;
/// assert_eq!(<(&wgpu::Buffer, &wgpu::Buffer) as WgpuArgs>::TYPES.len(), 2);
/// ```
pub trait WgpuArgs {
    /// Their types (untyped, writable buffers).
    const TYPES: &'static [ArgType];
    /// The buffers.
    fn buffers(&self) -> [Option<&wgpu::Buffer>; MAX_ARGS];
}

macro_rules! tuples {
    ($($i:tt),*) => {
        impl WgpuArgs for ($(tuples!(@buf $i),)*) {
            const TYPES: &'static [ArgType] = &[$(tuples!(@ty $i)),*];
            fn buffers(&self) -> [Option<&wgpu::Buffer>; MAX_ARGS] {
                #[allow(unused_mut)]
                let mut out = [None; MAX_ARGS];
                $(out[$i] = Some(self.$i);)*
                out
            }
        }
    };
    (@buf $i:tt) => { &wgpu::Buffer };
    (@ty $i:tt) => { ArgType::Buffer { dtype: None, writable: true } };
}
tuples!();
tuples!(0);
tuples!(0, 1);
tuples!(0, 1, 2);
tuples!(0, 1, 2, 3);
tuples!(0, 1, 2, 3, 4);
tuples!(0, 1, 2, 3, 4, 5);
tuples!(0, 1, 2, 3, 4, 5, 6);
tuples!(0, 1, 2, 3, 4, 5, 6, 7);
tuples!(0, 1, 2, 3, 4, 5, 6, 7, 8);
tuples!(0, 1, 2, 3, 4, 5, 6, 7, 8, 9);
tuples!(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10);
tuples!(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11);
tuples!(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12);
tuples!(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13);
tuples!(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14);
tuples!(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);

/// A config's pipeline on the application's device.
pub(crate) struct AppKernel {
    pipeline: Arc<wgpu::ComputePipeline>,
    grid: [u32; 3],
    signature: Signature,
}

/// One kernel of a wgpu application: tuned (or looked up) per problem size, built on the
/// application's device.
///
/// ```
/// use kerntune_wgpu::launch::WgpuTunable;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let instance = wgpu::Instance::default();
/// let Ok(adapter) = pollster::block_on(instance.request_adapter(&Default::default())) else { return Ok(()) };
/// let (device, queue) = pollster::block_on(adapter.request_device(&Default::default()))?;
/// let triad = WgpuTunable::from_spec(&adapter, device.clone(), queue.clone(), "../examples/triad/triad.toml".as_ref())?
///     .policy(kerntune_core::Policy::Default);
/// let n = 4096usize;
/// let k = triad.kernel(&[n as i64])?;
/// let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
/// let x = device.create_buffer(&wgpu::BufferDescriptor { label: None, size: 4 * n as u64, usage, mapped_at_creation: false });
/// let y = device.create_buffer(&wgpu::BufferDescriptor { label: None, size: 4 * n as u64, usage, mapped_at_creation: false });
/// for _ in 0..10 {
///     k.launch((&x, &y))?;
/// }
/// # Ok(())
/// # }
/// ```
pub struct WgpuTunable {
    auto: Autotuned<WgpuBackend, AppKernel>,
    device: wgpu::Device,
    queue: wgpu::Queue,
}

impl WgpuTunable {
    /// The kernel `job` describes (its `wgsl` source), tuned on kerntune's own device on
    /// `adapter` with `opts` (its kernels in a worker process after `kerntune::hook()`:
    /// [`WgpuBackend::for_adapter`]), and built on the application's `device`.
    ///
    /// ```no_run
    /// # fn f(adapter: &wgpu::Adapter, device: wgpu::Device, queue: wgpu::Queue, job: kerntune_core::TuneJob) -> Result<(), kerntune_core::Error> {
    /// let t = kerntune_wgpu::launch::WgpuTunable::new(adapter, device, queue, job, kerntune_core::TuneOptions::default())?;
    /// # Ok(()) }
    /// ```
    pub fn new(adapter: &wgpu::Adapter, device: wgpu::Device, queue: wgpu::Queue, job: TuneJob, opts: TuneOptions) -> Result<WgpuTunable, Error> {
        let backend = WgpuBackend::for_adapter(adapter).map_err(|e| Error::Backend(kerntune_core::BackendError::DeviceLost(e.to_string())))?;
        let tuner = Arc::new(Tuner::new(backend));
        let d = device.clone();
        let auto = Autotuned::with_compiler(tuner, job, opts, move |job, prep, cfg, launch| build(&d, job, prep, cfg, launch));
        Ok(WgpuTunable { auto, device, queue })
    }

    /// The kernel of a spec file (its `wgsl` source), with the spec's settings (its `[bench]`, `[prune]` and `[tune]`:
    /// [`TuneOptions::for_spec`](kerntune_core::TuneOptions::for_spec)) and the default database.
    ///
    /// ```no_run
    /// # fn f(adapter: &wgpu::Adapter, device: wgpu::Device, queue: wgpu::Queue) -> Result<(), kerntune_core::Error> {
    /// let t = kerntune_wgpu::launch::WgpuTunable::from_spec(adapter, device, queue, "kernels/triad.toml".as_ref())?;
    /// # Ok(()) }
    /// ```
    pub fn from_spec(adapter: &wgpu::Adapter, device: wgpu::Device, queue: wgpu::Queue, path: &Path) -> Result<WgpuTunable, Error> {
        let spec = kerntune_core::plan::prepare::load(path)?;
        let job = spec.job("wgsl", 0)?;
        let opts = TuneOptions { db: Some(kerntune_core::Database::at(kerntune_core::Database::default_path())), ..TuneOptions::for_spec(&spec)? };
        WgpuTunable::new(adapter, device, queue, job, opts)
    }

    /// The same kernel with another [`Policy`].
    ///
    /// ```no_run
    /// # fn f(t: kerntune_wgpu::launch::WgpuTunable) { let t = t.policy(kerntune_core::Policy::Background); }
    /// ```
    pub fn policy(mut self, policy: Policy) -> WgpuTunable {
        self.auto = self.auto.policy(policy);
        self
    }

    /// The same kernel with winners embedded in the program.
    ///
    /// ```no_run
    /// # fn f(t: kerntune_wgpu::launch::WgpuTunable) { static W: &[kerntune_core::EmbeddedWinner] = &[]; let t = t.embedded(W); }
    /// ```
    pub fn embedded(mut self, winners: &'static [EmbeddedWinner]) -> WgpuTunable {
        self.auto = self.auto.embedded(winners);
        self
    }

    /// The kernel for these problem sizes.
    ///
    /// ```no_run
    /// # fn f(t: kerntune_wgpu::launch::WgpuTunable) -> Result<(), kerntune_core::Error> { let k = t.kernel(&[4096])?; Ok(()) }
    /// ```
    pub fn kernel(&self, sizes: &[i64]) -> Result<TunedKernel, Error> {
        Ok(TunedKernel { slot: self.auto.slot(sizes)?, device: self.device.clone(), queue: self.queue.clone() })
    }

    /// Waits for background tunes started so far.
    ///
    /// ```no_run
    /// # fn f(t: kerntune_wgpu::launch::WgpuTunable) { t.settle(); }
    /// ```
    pub fn settle(&self) {
        self.auto.settle();
    }
}

/// Builds the pipeline of `cfg` on the application's device.
fn build(device: &wgpu::Device, job: &TuneJob, prep: &Prepared, cfg: &Config, launch: &Launch) -> Result<AppKernel, Error> {
    let inputs = CompileInputs::new(prep, &job.source, cfg, launch);
    let req = inputs.request(&job.source, cfg, launch);
    let layout = crate::compile::pipeline_layout(device, req.buffers);
    let (k, _) = crate::compile::compile(device, &layout, &req, crate::compile::Ship::Nothing)?;
    Ok(AppKernel { pipeline: k.pipeline.clone(), grid: launch.grid, signature: Signature::new(&job.source.name, &prep.layout, false, false) })
}

/// A tuned kernel, ready to dispatch on the application's device.
///
/// ```
/// # let Some((k, device, queue, x, y)) = kerntune_wgpu::launch::doc_example() else { return Ok(()) };
/// k.launch((&x, &y))?; // y = 2x + y on the application's buffers
/// device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
/// # Ok::<(), kerntune_core::LaunchError>(())
/// ```
pub struct TunedKernel {
    slot: Arc<Slot<AppKernel>>,
    device: wgpu::Device,
    queue: wgpu::Queue,
}

impl TunedKernel {
    /// Records one dispatch into `encoder`, after checking `args` against the spec.
    ///
    /// ```
    /// # let Some((k, device, queue, x, y)) = kerntune_wgpu::launch::doc_example() else { return Ok(()) };
    /// let mut encoder = device.create_command_encoder(&Default::default());
    /// k.record(&mut encoder, (&x, &y))?;
    /// queue.submit([encoder.finish()]);
    /// # Ok::<(), kerntune_core::LaunchError>(())
    /// ```
    pub fn record<A: WgpuArgs>(&self, encoder: &mut wgpu::CommandEncoder, args: A) -> Result<(), LaunchError> {
        let t = self.slot.load();
        let k = &t.kernel;
        let buffers = args.buffers();
        let mut lens: Lens = [None; MAX_ARGS];
        for (l, b) in lens.iter_mut().zip(&buffers) {
            *l = b.map(|b| b.size());
        }
        k.signature.check_raw(A::TYPES, &lens)?;
        let entries: Vec<wgpu::BindGroupEntry<'_>> = buffers
            .iter()
            .take(A::TYPES.len())
            .enumerate()
            .map(|(i, b)| {
                let b = b.expect("one buffer per type");
                if !b.usage().contains(wgpu::BufferUsages::STORAGE) {
                    return Err(LaunchError::Device {
                        kernel: k.signature.kernel().to_string(),
                        message: format!("argument {i}: the buffer lacks the STORAGE usage; create it with wgpu::BufferUsages::STORAGE"),
                    });
                }
                Ok(wgpu::BindGroupEntry { binding: i as u32, resource: b.as_entire_binding() })
            })
            .collect::<Result<_, _>>()?;
        let layout = k.pipeline.get_bind_group_layout(0);
        let bg = self.device.create_bind_group(&wgpu::BindGroupDescriptor { label: Some("kerntune launch"), layout: &layout, entries: &entries });
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some(k.signature.kernel()), timestamp_writes: None });
        pass.set_pipeline(&k.pipeline);
        pass.set_bind_group(0, &bg, &[]);
        pass.dispatch_workgroups(k.grid[0], k.grid[1], k.grid[2]);
        Ok(())
    }

    /// Submits one dispatch on the application's queue (an encoder of its own), after checking
    /// `args`; returns the submission, which the application may wait for.
    ///
    /// ```
    /// # let Some((k, device, queue, x, y)) = kerntune_wgpu::launch::doc_example() else { return Ok(()) };
    /// let done = k.launch((&x, &y))?;
    /// device.poll(wgpu::PollType::Wait { submission_index: Some(done), timeout: None }).unwrap();
    /// # Ok::<(), kerntune_core::LaunchError>(())
    /// ```
    pub fn launch<A: WgpuArgs>(&self, args: A) -> Result<wgpu::SubmissionIndex, LaunchError> {
        let mut encoder = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("kerntune launch") });
        self.record(&mut encoder, args)?;
        Ok(self.queue.submit([encoder.finish()]))
    }

    /// The config dispatched now.
    ///
    /// ```
    /// # let Some((k, device, queue, x, y)) = kerntune_wgpu::launch::doc_example() else { return Ok(()) };
    /// assert_eq!(k.config().key(), "WG_SIZE=64,PER_THREAD=1"); // the triad's default
    /// # Ok::<(), kerntune_core::LaunchError>(())
    /// ```
    pub fn config(&self) -> Config {
        self.slot.load().config.clone()
    }

    /// Where that config came from.
    ///
    /// ```
    /// # let Some((k, device, queue, x, y)) = kerntune_wgpu::launch::doc_example() else { return Ok(()) };
    /// assert_eq!(k.origin(), kerntune_core::Origin::Default);
    /// # Ok::<(), kerntune_core::LaunchError>(())
    /// ```
    pub fn origin(&self) -> Origin {
        self.slot.load().origin
    }

    /// Its grid (work-groups) and work-group size.
    ///
    /// ```
    /// # let Some((k, device, queue, x, y)) = kerntune_wgpu::launch::doc_example() else { return Ok(()) };
    /// assert_eq!(k.geometry().grid, [64, 1, 1]); // 4096 elements, 64 per work-group
    /// # Ok::<(), kerntune_core::LaunchError>(())
    /// ```
    pub fn geometry(&self) -> Launch {
        self.slot.load().launch
    }
}

/// For the examples in this module's documentation: the shipped triad (default config, 4096
/// elements) on the best adapter, with two 4096-element buffers; `None` without an adapter.
#[doc(hidden)]
pub fn doc_example() -> Option<(TunedKernel, wgpu::Device, wgpu::Queue, wgpu::Buffer, wgpu::Buffer)> {
    let adapter = crate::device::best_adapter()?;
    let (device, queue) = pollster::block_on(adapter.request_device(&Default::default())).ok()?;
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/triad/triad.toml");
    let t = WgpuTunable::from_spec(&adapter, device.clone(), queue.clone(), &spec).ok()?.policy(Policy::Default);
    let k = t.kernel(&[4096]).ok()?;
    let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
    let buf = || device.create_buffer(&wgpu::BufferDescriptor { label: None, size: 4 * 4096, usage, mapped_at_creation: false });
    let (x, y) = (buf(), buf());
    Some((k, device, queue, x, y))
}
