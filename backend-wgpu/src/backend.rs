//! Opening an adapter and the [`Backend`] implementation.

use crate::bench::{self, Buffers, Timer};
use crate::compile::WgpuKernel;
use crate::device::{adapter_limits, sorted_adapters};
use crate::limits::target_from_info;
use kerntune_core::worker::{WorkerKind, WorkerSlot};
use kerntune_core::{
    Access, Backend, BackendError, CompileRequest, Compiled, HostBuffer, Launch, Limits, Memcheck, OpenError, ProblemData, ResourceUsage, Target, TimeRequest,
    TimingMethod, VerifyRequest,
};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

type Layouts = HashMap<Vec<Access>, Arc<wgpu::PipelineLayout>>;

/// The wgpu backend's kind of worker process (see [`crate::worker`]).
pub static KIND: WorkerKind = WorkerKind::new("wgpu", "KERNTUNE_WGPU_WORKER", "KERNTUNE_WGPU_ISOLATION");

/// A problem's buffers: on this process's device, or in the worker process's.
pub struct WgpuWorkspace(Place);

enum Place {
    /// Kernels run in this process.
    Local(Box<Buffers>),
    /// Kernels run in the worker process (see [`crate::worker`]); the parent keeps the problem
    /// to start a fresh worker after a shader that never ended.
    Remote(Arc<ProblemData>),
}

/// A wgpu device opened for tuning.
pub struct WgpuBackend {
    device: wgpu::Device,
    /// Taken only by `drop` (see [`Drop`] for [`WgpuBackend`]).
    queue: Option<wgpu::Queue>,
    /// A launch in this process timed out: a dispatch that may never end is still queued.
    hung: std::sync::atomic::AtomicBool,
    info: wgpu::AdapterInfo,
    target: Target,
    limits: Limits,
    timestamps: bool,
    period_ns: f64,
    layouts: Mutex<Layouts>,
    clock: crate::clock::ClockGuard,
    /// The report's notes from workspaces and verification (device memory).
    notes: kerntune_core::backend::Notes,
    /// Whether the device can make pipeline caches (Vulkan): a pipeline compiled here travels
    /// to a worker process with the driver's compiled code (see [`crate::compile::compile`]).
    pipeline_caches: bool,
    /// `Some` when kernels run in a worker process (where the host program enabled it, see
    /// [`crate::worker::hook`]); the worker is started on first use.
    worker: Option<WorkerSlot>,
    /// Other processes seen on an NVIDIA GPU while configs were timed (the tuner's backend
    /// only; see [`kerntune_core::sharing`]).
    sharing: kerntune_core::sharing::Sharing,
}

/// How NVML finds the adapter's GPU: an NVIDIA adapter's PCI bus (none for other vendors, or
/// where the driver does not say it).
fn nvidia_gpu(info: &wgpu::AdapterInfo) -> Option<kerntune_core::sharing::GpuId> {
    const NVIDIA: u32 = 0x10de;
    (info.vendor == NVIDIA && !info.device_pci_bus_id.is_empty()).then(|| kerntune_core::sharing::GpuId::PciBus(info.device_pci_bus_id.clone()))
}

impl WgpuBackend {
    /// Opens the adapter at `index` in [`crate::adapters`] order, or the most preferred one.
    /// Kernels run in a worker process where the host program enabled it
    /// ([`crate::worker::hook`]).
    pub fn open(index: Option<usize>) -> Result<WgpuBackend, OpenError> {
        let mut b = Self::open_in_process(index)?;
        // The tuner's backend (not a worker's, which opens in process) watches who else uses
        // the GPU.
        b.sharing = kerntune_core::sharing::Sharing::new(nvidia_gpu(&b.info));
        if KIND.enabled() {
            b.worker = Some(WorkerSlot::new(&KIND, index.unwrap_or(0)));
        }
        Ok(b)
    }

    /// Opens the adapter with kernels running in this process (what the worker itself uses).
    pub fn open_in_process(index: Option<usize>) -> Result<WgpuBackend, OpenError> {
        let mut list = sorted_adapters();
        if list.is_empty() {
            return Err(OpenError::NoDevice {
                backend: "wgpu".into(),
                message: "no wgpu adapter found (no Vulkan, Metal or DX12 driver); on Debian/Ubuntu `apt-get install mesa-vulkan-drivers` gives a software Vulkan device".into(),
            });
        }
        let i = index.unwrap_or(0);
        if i >= list.len() {
            return Err(OpenError::NoDevice {
                backend: "wgpu".into(),
                message: format!("no wgpu adapter #{i}: this machine has {} (see `kerntune devices`)", kerntune_core::hint::ordinals(list.len())),
            });
        }
        Self::from_adapter(list.swap_remove(i))
    }

    /// Opens kerntune's own device on an application's `adapter` (what the launch API tunes
    /// on), with kernels in a worker process where the host program enabled it
    /// ([`crate::worker::hook`]), as [`WgpuBackend::open`] does: the worker opens the adapter of
    /// [`crate::adapters`] that `adapter` is (the same description: name, vendor and device
    /// IDs, driver, PCI bus, graphics API). Where none is (an adapter of a graphics API kerntune
    /// does not enumerate, such as OpenGL, or `WGPU_BACKEND` set differently for the worker),
    /// kernels run in this process, and a warning says so: a shader that never ends then ends
    /// the tune.
    pub fn for_adapter(adapter: &wgpu::Adapter) -> Result<WgpuBackend, OpenError> {
        let mut b = Self::from_adapter(adapter.clone())?;
        b.sharing = kerntune_core::sharing::Sharing::new(nvidia_gpu(&b.info));
        if KIND.enabled() {
            match sorted_adapters().iter().position(|a| a.get_info() == b.info) {
                Some(i) => b.worker = Some(WorkerSlot::new(&KIND, i)),
                None => tracing::warn!(
                    adapter = b.info.name,
                    api = ?b.info.backend,
                    "the application's wgpu adapter is not among those kerntune enumerates (`kerntune devices`: Vulkan, Metal and DX12 unless WGPU_BACKEND says otherwise), so a worker process could not open it: its kernels are tuned in this process, where a shader that never ends stops the tune"
                ),
            }
        }
        Ok(b)
    }

    /// Opens a device on `adapter`, with timestamp queries, pipeline caches and half-precision
    /// shaders (`enable f16;`) where supported.
    pub fn from_adapter(adapter: wgpu::Adapter) -> Result<WgpuBackend, OpenError> {
        let info = adapter.get_info();
        let timestamps = adapter.features().contains(wgpu::Features::TIMESTAMP_QUERY) && std::env::var_os("KERNTUNE_WGPU_HOST_TIMING").is_none();
        let pipeline_caches = adapter.features().contains(wgpu::Features::PIPELINE_CACHE);
        let mut required_features = wgpu::Features::empty();
        required_features.set(wgpu::Features::TIMESTAMP_QUERY, timestamps);
        required_features.set(wgpu::Features::PIPELINE_CACHE, pipeline_caches);
        // Half-precision kernels (`enable f16;`) where the adapter has them.
        required_features.set(wgpu::Features::SHADER_F16, adapter.features().contains(wgpu::Features::SHADER_F16));
        let alimits = adapter.limits();
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("kerntune"),
            required_features,
            required_limits: alimits,
            experimental_features: wgpu::ExperimentalFeatures::disabled(),
            memory_hints: wgpu::MemoryHints::Performance,
            trace: wgpu::Trace::Off,
        }))
        .map_err(|e| OpenError::Other { backend: "wgpu".into(), message: format!("could not open {}: {e}", info.name) })?;
        device.on_uncaptured_error(Arc::new(|e: wgpu::Error| tracing::error!("wgpu: {e}")));
        tracing::debug!(adapter = info.name, pci_bus = info.device_pci_bus_id, pid = std::process::id(), pipeline_caches, "wgpu device opened");
        let period_ns = queue.get_timestamp_period() as f64;
        let clock = crate::clock::ClockGuard::new(match std::env::var("KERNTUNE_WGPU_CLOCK_GUARD").as_deref() {
            Ok("off") => false,
            Ok("on") => true,
            _ => info.device_type != wgpu::DeviceType::Cpu,
        });
        Ok(WgpuBackend {
            target: target_from_info(&info),
            limits: adapter_limits(&adapter),
            device,
            queue: Some(queue),
            hung: false.into(),
            info,
            timestamps,
            period_ns,
            layouts: Mutex::new(HashMap::new()),
            clock,
            notes: Default::default(),
            pipeline_caches,
            worker: None,
            sharing: Default::default(),
        })
    }

    /// Whether the adapter is a CPU (software) implementation.
    pub fn is_software(&self) -> bool {
        self.info.device_type == wgpu::DeviceType::Cpu
    }

    /// The adapter's description.
    pub fn info(&self) -> &wgpu::AdapterInfo {
        &self.info
    }

    /// Whether kernels run in a worker process.
    pub fn isolated(&self) -> bool {
        self.worker.is_some()
    }

    /// Whether the device makes pipeline caches.
    pub(crate) fn pipeline_caches(&self) -> bool {
        self.pipeline_caches
    }

    pub(crate) fn device(&self) -> &wgpu::Device {
        &self.device
    }

    fn queue(&self) -> &wgpu::Queue {
        self.queue.as_ref().expect("the queue is taken only when the backend is dropped")
    }

    /// Notes a launch in this process that did not end in time (see [`Drop`] and
    /// [`crate::launch_never_ended`]).
    fn note_hang<T>(&self, r: Result<T, BackendError>) -> Result<T, BackendError> {
        if matches!(r, Err(BackendError::TimedOut(_))) {
            self.hung.store(true, std::sync::atomic::Ordering::SeqCst);
            crate::device::note_launch_never_ended();
        }
        r
    }

    /// Runs `f` on the worker for `problem` (see [`WorkerSlot::with`]).
    fn with_worker<T>(
        &self,
        problem: &Arc<ProblemData>,
        f: impl FnOnce(&mut kerntune_core::worker::Worker) -> Result<T, BackendError>,
    ) -> Result<T, BackendError> {
        self.worker.as_ref().expect("isolated mode").with(problem, f)
    }

    pub(crate) fn layout(&self, access: &[Access]) -> Arc<wgpu::PipelineLayout> {
        let mut map = self.layouts.lock().expect("layout cache");
        map.entry(access.to_vec()).or_insert_with(|| Arc::new(crate::compile::pipeline_layout(&self.device, access))).clone()
    }

    /// Times launches of a kernel in this process: the clock guard first, then the launches,
    /// with wgpu's validation errors as the launch's error.
    fn time_local(&self, l: &mut Buffers, kernel: &WgpuKernel, launch: &Launch, req: &TimeRequest) -> Result<Vec<f64>, BackendError> {
        self.clock.before(&self.timer());
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let r = self.note_hang(self.timer().time(l, kernel, launch, req));
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(BackendError::LaunchFailed(crate::compile::describe(&e)));
        }
        r
    }

    /// Verifies a kernel in this process: outputs poisoned, one launch, the guards after the
    /// buffers it can write checked (see [`crate::guard`]), the outputs screened on the device
    /// and compared, the buffers restored. Outputs that differ from the reference's are
    /// probed for a read past a buffer's end before they are called wrong.
    fn verify_local(&self, l: &mut Buffers, kernel: &WgpuKernel, launch: &Launch, req: &VerifyRequest<'_>) -> Result<Vec<f64>, BackendError> {
        bench::reset(&self.device, self.queue(), l, true)?;
        let t = self.time_local(l, kernel, launch, &TimeRequest { launches: 1, flush: kerntune_core::L2Flush::Off, timeout: req.timeout })?;
        if let Some(wrote) = self.note_hang(crate::guard::written(&self.device, self.queue(), l))? {
            return Err(BackendError::LaunchFailed(wrote));
        }
        match self.note_hang(bench::check(&self.device, self.queue(), l, req, &self.notes)) {
            Err(BackendError::WrongOutput(m)) => {
                return Err(match self.probe(l, kernel, launch, req.timeout)? {
                    crate::guard::Found::Past(report) => BackendError::LaunchFailed(report),
                    _ => BackendError::WrongOutput(m),
                })
            }
            other => other?,
        }
        bench::reset(&self.device, self.queue(), l, false)?;
        Ok(t)
    }

    /// [`crate::guard::probe`] of a kernel in this process.
    fn probe(&self, l: &mut Buffers, kernel: &WgpuKernel, launch: &Launch, timeout: std::time::Duration) -> Result<crate::guard::Found, BackendError> {
        let once = TimeRequest { launches: 1, flush: kerntune_core::L2Flush::Off, timeout };
        let mut run = |l: &mut Buffers| self.time_local(l, kernel, launch, &once).map(drop);
        self.note_hang(crate::guard::probe(&self.device, self.queue(), l, &mut run))
    }

    fn timer(&self) -> Timer<'_> {
        Timer { device: &self.device, queue: self.queue(), timestamps: self.timestamps, period_ns: self.period_ns }
    }
}

impl Backend for WgpuBackend {
    type Kernel = WgpuKernel;
    type Workspace = WgpuWorkspace;

    fn target(&self) -> &Target {
        &self.target
    }
    fn limits(&self) -> &Limits {
        &self.limits
    }
    fn toolchain(&self) -> String {
        format!("wgpu 30 {:?} {} {}", self.info.backend, self.info.driver, self.info.driver_info).trim().to_string()
    }
    fn language(&self) -> &'static str {
        "wgsl"
    }
    fn timing_method(&self) -> TimingMethod {
        if self.timestamps {
            TimingMethod::TimestampQueries
        } else {
            TimingMethod::HostClock
        }
    }
    fn environment(&self) -> Vec<(String, String)> {
        vec![
            ("adapter".into(), self.info.name.clone()),
            ("api".into(), format!("{:?}", self.info.backend)),
            ("device_type".into(), format!("{:?}", self.info.device_type)),
            ("driver".into(), format!("{} {}", self.info.driver, self.info.driver_info)),
        ]
    }

    fn compile(&self, req: &CompileRequest<'_>) -> Result<Compiled<WgpuKernel>, BackendError> {
        let layout = self.layout(req.buffers);
        let ship = match self.worker {
            Some(_) => crate::compile::Ship::Recipe { pipeline_cache: self.pipeline_caches },
            None => crate::compile::Ship::Nothing,
        };
        let (kernel, workgroup_bytes) = crate::compile::compile(&self.device, &layout, req, ship)?;
        Ok(Compiled { kernel, usage: ResourceUsage { static_shared_bytes: workgroup_bytes, ..ResourceUsage::default() }, cached: false })
    }

    fn compiles_quickly(&self) -> bool {
        // A pipeline is built in tens of milliseconds (35–88 ms on an H200 through Vulkan,
        // less on lavapipe, which compiles at the first launch), against seconds for NVRTC.
        true
    }

    fn workspace(&self, problem: &std::sync::Arc<ProblemData>) -> Result<WgpuWorkspace, BackendError> {
        let max = self.limits_raw_max_binding();
        for b in problem.buffers() {
            if b.data.len() as u64 > max {
                return Err(BackendError::OutOfResources(kerntune_core::LimitViolation {
                    limit: format!("max_storage_buffer_binding_size ({})", b.name),
                    requested: b.data.len() as u64,
                    allowed: max,
                }));
            }
        }
        if self.worker.is_some() {
            // Start the worker now, so that a worker that cannot start fails before measuring.
            self.with_worker(problem, |_| Ok(()))?;
            return Ok(WgpuWorkspace(Place::Remote(problem.clone())));
        }
        let buffers = bench::create_workspace(&self.device, self.queue(), problem.clone(), &self.info.name, &self.notes)?;
        Ok(WgpuWorkspace(Place::Local(Box::new(buffers))))
    }

    fn reset(&self, ws: &mut WgpuWorkspace, poison: bool) -> Result<(), BackendError> {
        match &mut ws.0 {
            Place::Local(l) => bench::reset(&self.device, self.queue(), l, poison),
            Place::Remote(p) => self.with_worker(p, |w| w.reset(poison)),
        }
    }

    fn time(&self, ws: &mut WgpuWorkspace, kernel: &WgpuKernel, launch: &Launch, req: &TimeRequest) -> Result<Vec<f64>, BackendError> {
        self.sharing.sample();
        match &mut ws.0 {
            Place::Local(l) => self.time_local(l, kernel, launch, req),
            Place::Remote(p) => self.with_worker(p, |w| w.time(kernel.image(), launch, req)),
        }
    }

    fn verify(&self, ws: &mut WgpuWorkspace, kernel: &WgpuKernel, launch: &Launch, req: &VerifyRequest<'_>) -> Result<Vec<f64>, BackendError> {
        match &mut ws.0 {
            // Outputs poisoned, compared and restored on the device, the guards checked.
            Place::Local(l) => self.verify_local(l, kernel, launch, req),
            // Compared in the worker, against the reference it is sent once.
            Place::Remote(p) => self.with_worker(p, |w| w.verify(kernel.image(), launch, req)),
        }
    }

    fn read_outputs(&self, ws: &mut WgpuWorkspace, wanted: &[bool]) -> Result<Vec<HostBuffer>, BackendError> {
        match &mut ws.0 {
            Place::Local(l) => self.note_hang(self.timer().read_outputs(l, wanted)),
            Place::Remote(p) => self.with_worker(p, |w| w.read_outputs(p, wanted)),
        }
    }

    fn check_outputs(&self, ws: &mut WgpuWorkspace, req: &VerifyRequest<'_>) -> Result<(), BackendError> {
        match &mut ws.0 {
            // Screened on the device; only an output the screen cannot pass is read back.
            Place::Local(l) => self.note_hang(bench::check(&self.device, self.queue(), l, req, &self.notes)),
            // (Not reached: a worker's verification runs whole in the worker.)
            Place::Remote(_) => req.check(&self.read_outputs(ws, &req.wanted())?),
        }
    }

    fn bounds(&self, ws: &mut WgpuWorkspace, kernel: &WgpuKernel, launch: &Launch, timeout: std::time::Duration) -> Result<Option<Memcheck>, BackendError> {
        match &mut ws.0 {
            Place::Local(l) => self.probe(l, kernel, launch, timeout).map(|f| Some(f.memcheck())),
            Place::Remote(p) => self.with_worker(p, |w| w.bounds(kernel.image(), launch, timeout)),
        }
    }

    fn wrote_past(&self, ws: &mut WgpuWorkspace) -> Result<Option<String>, BackendError> {
        match &mut ws.0 {
            // The guards written are filled again: the next config's launches are checked on
            // their own.
            Place::Local(l) => self.note_hang(crate::guard::written(&self.device, self.queue(), l)),
            Place::Remote(p) => self.with_worker(p, |w| w.wrote_past()),
        }
    }

    fn memcheck(&self, problem: &Arc<ProblemData>, kernel: &WgpuKernel, launch: &Launch) -> Option<Memcheck> {
        let timeout = std::time::Duration::from_secs(60);
        let found = match &self.worker {
            // The worker's workspace is this problem's (a tune's diagnosis, its winner).
            Some(_) => self.with_worker(problem, |w| w.bounds(kernel.image(), launch, timeout)),
            // A workspace of its own: the tune's belongs to its device's session.
            None => bench::create_workspace(&self.device, self.queue(), problem.clone(), &self.info.name, &self.notes)
                .and_then(|mut l| self.probe(&mut l, kernel, launch, timeout))
                .map(|f| Some(f.memcheck())),
        };
        Some(match found {
            Ok(Some(m)) => m,
            Ok(None) => Memcheck::Inconclusive("the worker did not check".into()),
            Err(e) => Memcheck::Inconclusive(format!("{}: {e}", crate::guard::tool())),
        })
    }

    fn shares_kernels(&self) -> bool {
        // A worker builds its pipeline from the recipe the parent ships (source, constants,
        // bindings), on whichever adapter it owns; a pipeline made in this process belongs to
        // this process's device.
        self.worker.is_some()
    }

    fn take_notes(&self) -> Vec<String> {
        let mut notes = match &self.worker {
            // The worker's clock guard is the one that ran; a worker killed after a shader that
            // never ended took its notes with it.
            Some(slot) => slot.if_running(|w| w.take_notes()).and_then(Result::ok).unwrap_or_default(),
            None => {
                let mut notes = self.clock.take_notes();
                notes.extend(self.notes.take());
                notes
            }
        };
        notes.extend(self.sharing.take_note());
        notes
    }

    fn recover(&self) -> Result<(), BackendError> {
        match &self.worker {
            // The worker was killed with its hung shader; the next call starts a fresh one.
            Some(slot) => {
                slot.recover();
                Ok(())
            }
            None => Err(BackendError::DeviceLost(
                "wgpu cannot stop a launch that never ends, or recover a lost device, without a worker process (kernels run in one when the program calls `kerntune::hook()` first, as the kerntune CLI does, and KERNTUNE_WGPU_ISOLATION is not 0)".into(),
            )),
        }
    }
}

impl Drop for WgpuBackend {
    /// The queue and the device of a backend whose launch never ended are left undestroyed
    /// (see `device::leave_undestroyed`).
    fn drop(&mut self) {
        if self.hung.load(std::sync::atomic::Ordering::SeqCst) {
            tracing::debug!("a launch never ended: the wgpu queue and device are left undestroyed");
            crate::device::leave_undestroyed((self.queue.take(), self.device.clone()));
        }
    }
}

impl WgpuBackend {
    fn limits_raw_max_binding(&self) -> u64 {
        self.device.limits().max_storage_buffer_binding_size
    }
}
