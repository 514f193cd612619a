//! # kerntune
//!
//! The facade: re-exports [`kerntune_core`] and picks backends by cargo feature. `wgpu` is on by
//! default, so a plain build tunes on any Vulkan/Metal/DX12 adapter or on software Vulkan.
//!
//! [`AnyBackend`] holds whichever backend was opened; because each backend has its own kernel
//! and workspace types, code that tunes is generic over [`Backend`] and [`with_backend!`]
//! dispatches to it with a hand-written `match` (enum_dispatch cannot span crates).
//!
//! ## Tuning from Rust
//!
//! What `kerntune tune SPEC` does, in a program: load the spec, open the best backend found,
//! tune each problem and read the winner. The database is the CLI's (so a second run is a
//! lookup); `opts.db = None` keeps nothing.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! kerntune::hook(); // first thing in `main`: compiles and kernels in worker processes
//! let spec = kerntune::plan::prepare::load("examples/triad/triad.toml".as_ref())?;
//! let mut opts = kerntune::TuneOptions::for_spec(&spec)?;
//! opts.db = Some(kerntune::store::db::Database::at(kerntune::store::db::Database::default_path()));
//! let backend = kerntune::open(kerntune::BackendChoice::Auto, None)?;
//! kerntune::with_backend!(backend, b => {
//!     let language = kerntune::Backend::language(&b);
//!     let tuner = kerntune::Tuner::new(b);
//!     for problem in 0..spec.problems.len() {
//!         let report = tuner.tune(&spec.job(language, problem)?, &opts)?;
//!         println!("{}: {} at {:.4} ms", report.entry.problem, report.winner.key(), report.winner_stats.mean * 1e3);
//!     }
//! });
//! # Ok(()) }
//! ```
//!
//! To launch the winner on your own buffers, tuning on first use, see each backend's `launch`
//! module (`docs/launch.md`, and `examples/app`, a whole program).

pub use kerntune_core as core;

pub mod html;
pub use kerntune_core::spec::LoadOptions;
pub use kerntune_core::*;

#[cfg(feature = "wgpu")]
pub use kerntune_wgpu as wgpu_backend;

#[cfg(feature = "cuda")]
pub use kerntune_cuda as cuda_backend;

#[cfg(feature = "hip")]
pub use kerntune_hip as hip_backend;

/// Call first thing in `main`. A worker process started by the CUDA, HIP or wgpu backend serves
/// its tuner here and exits; in any other process this lets those backends run kernels in worker
/// processes, so that a faulting or hung kernel cannot end a tune (see
/// [`kerntune_core::worker`]). Without it kernels run in the tuning process.
pub fn hook() {
    #[cfg(feature = "cuda")]
    kerntune_cuda::worker::hook();
    #[cfg(feature = "hip")]
    kerntune_hip::worker::hook();
    #[cfg(feature = "wgpu")]
    kerntune_wgpu::worker::hook();
}

/// Ends the program with `code`, as `std::process::exit` does, except after a wgpu launch in
/// this process that never ended ([`kerntune_wgpu::launch_never_ended`]: kernels ran without a
/// worker process): then stdout and stderr are flushed and the process leaves without running
/// exit handlers, since a GPU driver's own can wait for that launch forever.
pub fn exit(code: i32) -> ! {
    #[cfg(all(unix, feature = "wgpu"))]
    if kerntune_wgpu::launch_never_ended() {
        use std::io::Write;
        let _ = std::io::stdout().flush();
        let _ = std::io::stderr().flush();
        tracing::debug!("a wgpu launch in this process never ended: leaving without exit handlers");
        // SAFETY: `_exit` ends the process at once; nothing runs after it.
        unsafe { libc::_exit(code) }
    }
    std::process::exit(code)
}

/// Which backend to open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendChoice {
    /// CUDA, then HIP, then a hardware wgpu adapter, then software Vulkan.
    Auto,
    /// NVIDIA through CUDA.
    Cuda,
    /// AMD through HIP.
    Hip,
    /// Any wgpu adapter.
    Wgpu,
}

impl std::str::FromStr for BackendChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(BackendChoice::Auto),
            "cuda" => Ok(BackendChoice::Cuda),
            "hip" => Ok(BackendChoice::Hip),
            "wgpu" => Ok(BackendChoice::Wgpu),
            other => Err(format!("unknown backend `{other}`; use auto, cuda, hip or wgpu")),
        }
    }
}

/// An opened backend of any compiled-in kind.
// One per process, so the variants' size difference costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
pub enum AnyBackend {
    /// A wgpu adapter.
    #[cfg(feature = "wgpu")]
    Wgpu(kerntune_wgpu::WgpuBackend),
    /// An NVIDIA GPU through CUDA.
    #[cfg(feature = "cuda")]
    Cuda(kerntune_cuda::CudaBackend),
    /// An AMD GPU through HIP.
    #[cfg(feature = "hip")]
    Hip(kerntune_hip::HipBackend),
    /// A build without any backend: no value of this variant exists (`open` reports "not
    /// compiled in" for every choice), it only keeps the dispatch `match` well-formed.
    #[cfg(not(any(feature = "wgpu", feature = "cuda", feature = "hip")))]
    Nothing(std::convert::Infallible),
}

/// Runs `$body` with `$b` bound to the concrete backend inside an [`AnyBackend`].
#[macro_export]
macro_rules! with_backend {
    ($any:expr, $b:ident => $body:expr) => {
        match $any {
            #[cfg(feature = "wgpu")]
            $crate::AnyBackend::Wgpu($b) => $body,
            #[cfg(feature = "cuda")]
            $crate::AnyBackend::Cuda($b) => $body,
            #[cfg(feature = "hip")]
            $crate::AnyBackend::Hip($b) => $body,
            #[cfg(not(any(feature = "wgpu", feature = "cuda", feature = "hip")))]
            $crate::AnyBackend::Nothing(never) => $crate::unreachable_backend(never),
        }
    };
}

/// The arm of [`with_backend!`] for a build without backends, where no `AnyBackend` exists.
#[doc(hidden)]
pub fn unreachable_backend<T>(never: impl std::borrow::Borrow<std::convert::Infallible>) -> T {
    match *never.borrow() {}
}

impl AnyBackend {
    /// The device.
    pub fn target(&self) -> &Target {
        with_backend!(self, b => b.target())
    }
    /// Its limits.
    pub fn limits(&self) -> &Limits {
        with_backend!(self, b => b.limits())
    }
    /// Source language.
    pub fn language(&self) -> &'static str {
        with_backend!(self, b => b.language())
    }
}

fn not_compiled(backend: &str) -> OpenError {
    OpenError::NotCompiledIn { backend: backend.into() }
}

/// Which devices of a backend to tune on (`--devices`, the spec's `[tune] devices`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Devices {
    /// Every device the backend finds.
    All,
    /// These device indices (as `kerntune devices` lists them), each once.
    List(Vec<usize>),
}

impl std::str::FromStr for Devices {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s.trim() == "all" {
            return Ok(Devices::All);
        }
        let mut list = Vec::new();
        for part in s.split(',').map(str::trim) {
            let shown = kerntune_core::spec::error::quote(part);
            let i: usize =
                part.parse().map_err(|_| format!("`{shown}` is not a device index; give `all` or indices such as 0,2,3 (see `kerntune devices`)"))?;
            if list.contains(&i) {
                return Err(format!("device {i} is listed twice"));
            }
            list.push(i);
        }
        Ok(Devices::List(list))
    }
}

/// Backends of one kind, opened on one device each: what a tune over several devices takes.
pub enum AnyBackends {
    /// wgpu adapters.
    #[cfg(feature = "wgpu")]
    Wgpu(Vec<kerntune_wgpu::WgpuBackend>),
    /// NVIDIA GPUs.
    #[cfg(feature = "cuda")]
    Cuda(Vec<kerntune_cuda::CudaBackend>),
    /// AMD GPUs.
    #[cfg(feature = "hip")]
    Hip(Vec<kerntune_hip::HipBackend>),
    /// A build without any backend (see [`AnyBackend::Nothing`]).
    #[cfg(not(any(feature = "wgpu", feature = "cuda", feature = "hip")))]
    Nothing(std::convert::Infallible),
}

/// Runs `$body` with `$v` bound to the `Vec` of concrete backends inside an [`AnyBackends`].
#[macro_export]
macro_rules! with_backends {
    ($any:expr, $v:ident => $body:expr) => {
        match $any {
            #[cfg(feature = "wgpu")]
            $crate::AnyBackends::Wgpu($v) => $body,
            #[cfg(feature = "cuda")]
            $crate::AnyBackends::Cuda($v) => $body,
            #[cfg(feature = "hip")]
            $crate::AnyBackends::Hip($v) => $body,
            #[cfg(not(any(feature = "wgpu", feature = "cuda", feature = "hip")))]
            $crate::AnyBackends::Nothing(never) => $crate::unreachable_backend(never),
        }
    };
}

impl AnyBackends {
    /// The first device.
    pub fn first_target(&self) -> &Target {
        with_backends!(self, v => v[0].target())
    }
}

/// Backends opened on several devices, and the devices `all` left out.
pub struct OpenedDevices {
    /// One backend per device, the first first.
    pub backends: AnyBackends,
    /// Devices that `all` did not take because they are of another model than the first (a
    /// wgpu software adapter beside the GPUs, say): `(index, name)`.
    pub left_out: Vec<(usize, String)>,
}

/// Opens a backend on several devices: every device of the first device's model, or the listed
/// ones. With `Auto`, the first backend (CUDA, HIP, wgpu) that opens its first device is used.
/// An index the backend does not have is one error naming the devices there are. `all` takes
/// only the devices of the first's model (a tune measures on one model, since each model has a
/// winner of its own) and says which it left out; a list is taken as it is (the tuner refuses
/// one that mixes models, with one line).
pub fn open_devices(choice: BackendChoice, devices: &Devices) -> Result<OpenedDevices, OpenError> {
    let first = match devices {
        Devices::All => 0,
        Devices::List(l) => *l.first().ok_or_else(|| OpenError::NoDevice { backend: "any".into(), message: "no device was listed".into() })?,
    };
    let one = open(choice, Some(first))?;
    let targets = device_targets(&one);
    let count = targets.len();
    let (indices, left_out): (Vec<usize>, Vec<(usize, String)>) = match devices {
        Devices::All => {
            let model = &one.target().fingerprint;
            let (same, other): (Vec<usize>, Vec<usize>) = (0..count).partition(|&i| &targets[i].fingerprint == model);
            (same, other.into_iter().map(|i| (i, targets[i].name.clone())).collect())
        }
        Devices::List(l) => (l.clone(), Vec::new()),
    };
    // (A build without backends never gets past `open`.)
    #[cfg(not(any(feature = "wgpu", feature = "cuda", feature = "hip")))]
    let _ = left_out;
    if let Some(&bad) = indices.iter().find(|&&i| i >= count) {
        let backend = one.target().backend.clone();
        return Err(OpenError::NoDevice {
            backend: backend.clone(),
            message: format!("no {backend} device #{bad}: this machine has {} (see `kerntune devices`)", kerntune_core::hint::ordinals(count)),
        });
    }
    with_backend!(one, b => {
        // The other devices open at once (a context each: a few hundred milliseconds apiece).
        let rest: Vec<Result<_, OpenError>> = std::thread::scope(|s| {
            let first = &b;
            let opening: Vec<_> = indices.iter().skip(1).map(|&i| (i, s.spawn(move || reopen(first, i)))).collect();
            opening
                .into_iter()
                .map(|(i, h)| {
                    h.join().unwrap_or_else(|_| {
                        Err(OpenError::NoDevice { backend: first.target().backend.clone(), message: format!("opening device #{i} panicked") })
                    })
                })
                .collect()
        });
        let mut all = vec![b];
        for r in rest {
            all.push(r?);
        }
        Ok(OpenedDevices { backends: into_many(all), left_out })
    })
}

/// The targets of every device the backend of `b` has, in index order (only `b`'s own when
/// the backend cannot list them).
fn device_targets(b: &AnyBackend) -> Vec<Target> {
    match b {
        #[cfg(feature = "wgpu")]
        AnyBackend::Wgpu(_) => kerntune_wgpu::adapters().into_iter().map(|a| a.target).collect(),
        #[cfg(feature = "cuda")]
        AnyBackend::Cuda(c) => kerntune_cuda::devices().map(|d| d.into_iter().map(|d| d.target).collect()).unwrap_or_else(|_| vec![c.target().clone()]),
        #[cfg(feature = "hip")]
        AnyBackend::Hip(h) => kerntune_hip::devices().map(|d| d.into_iter().map(|d| d.target).collect()).unwrap_or_else(|_| vec![h.target().clone()]),
        #[cfg(not(any(feature = "wgpu", feature = "cuda", feature = "hip")))]
        AnyBackend::Nothing(never) => match *never {},
    }
}

/// A backend of the same kind as `like` on device `index`.
#[cfg(any(feature = "wgpu", feature = "cuda", feature = "hip"))]
trait Reopen: Sized {
    fn reopen(&self, index: usize) -> Result<Self, OpenError>;
    fn many(v: Vec<Self>) -> AnyBackends;
}

#[cfg(feature = "wgpu")]
impl Reopen for kerntune_wgpu::WgpuBackend {
    fn reopen(&self, index: usize) -> Result<Self, OpenError> {
        kerntune_wgpu::WgpuBackend::open(Some(index))
    }
    fn many(v: Vec<Self>) -> AnyBackends {
        AnyBackends::Wgpu(v)
    }
}

#[cfg(feature = "cuda")]
impl Reopen for kerntune_cuda::CudaBackend {
    fn reopen(&self, index: usize) -> Result<Self, OpenError> {
        kerntune_cuda::CudaBackend::open(Some(index))
    }
    fn many(v: Vec<Self>) -> AnyBackends {
        AnyBackends::Cuda(v)
    }
}

#[cfg(feature = "hip")]
impl Reopen for kerntune_hip::HipBackend {
    fn reopen(&self, index: usize) -> Result<Self, OpenError> {
        kerntune_hip::HipBackend::open(Some(index))
    }
    fn many(v: Vec<Self>) -> AnyBackends {
        AnyBackends::Hip(v)
    }
}

#[cfg(any(feature = "wgpu", feature = "cuda", feature = "hip"))]
fn reopen<B: Reopen>(like: &B, index: usize) -> Result<B, OpenError> {
    like.reopen(index)
}

#[cfg(any(feature = "wgpu", feature = "cuda", feature = "hip"))]
fn into_many<B: Reopen>(v: Vec<B>) -> AnyBackends {
    B::many(v)
}

/// Opens a backend. `device` selects among several devices of that backend (see
/// `kerntune devices`). With `Auto`, a backend that is not compiled in, has no driver library or
/// no device is skipped; the last reason is returned when nothing opens.
pub fn open(choice: BackendChoice, device: Option<usize>) -> Result<AnyBackend, OpenError> {
    match choice {
        BackendChoice::Cuda => open_cuda(device),
        BackendChoice::Hip => open_hip(device),
        BackendChoice::Wgpu => open_wgpu(device),
        BackendChoice::Auto => {
            let mut last = None;
            for f in [open_cuda, open_hip, open_wgpu] {
                match f(device) {
                    Ok(b) => return Ok(b),
                    Err(e) => {
                        tracing::debug!("auto: {e}");
                        last = Some(e);
                    }
                }
            }
            Err(last.unwrap_or_else(|| not_compiled("wgpu")))
        }
    }
}

#[cfg(feature = "wgpu")]
fn open_wgpu(device: Option<usize>) -> Result<AnyBackend, OpenError> {
    kerntune_wgpu::WgpuBackend::open(device).map(AnyBackend::Wgpu)
}

#[cfg(not(feature = "wgpu"))]
fn open_wgpu(_device: Option<usize>) -> Result<AnyBackend, OpenError> {
    Err(not_compiled("wgpu"))
}

#[cfg(feature = "hip")]
fn open_hip(device: Option<usize>) -> Result<AnyBackend, OpenError> {
    kerntune_hip::HipBackend::open(device).map(AnyBackend::Hip)
}

#[cfg(not(feature = "hip"))]
fn open_hip(_device: Option<usize>) -> Result<AnyBackend, OpenError> {
    Err(not_compiled("hip"))
}

#[cfg(feature = "cuda")]
fn open_cuda(device: Option<usize>) -> Result<AnyBackend, OpenError> {
    kerntune_cuda::CudaBackend::open(device).map(AnyBackend::Cuda)
}

#[cfg(not(feature = "cuda"))]
fn open_cuda(_device: Option<usize>) -> Result<AnyBackend, OpenError> {
    Err(not_compiled("cuda"))
}
