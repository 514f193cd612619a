//! The adapters: enumeration through one wgpu instance, hardware before software, each with
//! its target and limits.

use crate::limits::{limits_from_wgpu, target_from_info};
use kerntune_core::{Limits, Target};

/// What `kerntune devices` shows for one adapter.
#[derive(Clone, Debug)]
pub struct AdapterSummary {
    /// Position in preference order (what `--device` selects).
    pub index: usize,
    /// The adapter's description.
    pub info: wgpu::AdapterInfo,
    /// Its target.
    pub target: Target,
    /// Its limits.
    pub limits: Limits,
    /// Whether it runs half-precision shaders (`enable f16;`, wgpu's `SHADER_F16`).
    pub shader_f16: bool,
}

fn rank(t: wgpu::DeviceType) -> u8 {
    match t {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Other => 3,
        wgpu::DeviceType::Cpu => 4,
    }
}

fn instance() -> wgpu::Instance {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
    // A release build's flags in every build: wgpu's default in a debug build (`make demo`
    // builds one) asks for the driver's validation layers, which slow the host side of every
    // launch where they are installed, and for the loader's debug messages, which Ubuntu
    // 22.04's Mesa fills with a warning per instance about an ICD for hardware it lacks.
    // `WGPU_VALIDATION=1` / `WGPU_DEBUG=1` still turn them on.
    desc.flags = wgpu::InstanceFlags::VALIDATION_INDIRECT_CALL.with_env();
    if std::env::var_os("WGPU_BACKEND").is_none() {
        desc.backends = wgpu::Backends::PRIMARY;
    }
    wgpu::Instance::new(desc)
}

/// The adapters in preference order: hardware before software, then by name, then by PCI bus,
/// so that every process numbers them alike (`--device N` in the tuner and in each worker
/// process must be the same GPU; the order a driver enumerates them in is not promised).
pub(crate) fn sorted_adapters() -> Vec<wgpu::Adapter> {
    let mut v = pollster::block_on(instance().enumerate_adapters(wgpu::Backends::all()));
    tracing::debug!(
        enumerated = ?v.iter().map(|a| { let i = a.get_info(); format!("{} [{}]", i.name, i.device_pci_bus_id) }).collect::<Vec<_>>(),
        "wgpu adapters"
    );
    v.sort_by_key(|a| {
        let i = a.get_info();
        (rank(i.device_type), i.name.clone(), i.device_pci_bus_id.clone())
    });
    v
}

/// The adapter kerntune tunes on by default: the first of [`adapters`] (a discrete GPU before an
/// integrated one, software Vulkan last), from Vulkan, Metal or DX12 unless `WGPU_BACKEND` says
/// otherwise. `None` when there is no adapter at all.
///
/// ```
/// if let Some(adapter) = kerntune_wgpu::best_adapter() {
///     println!("{}", adapter.get_info().name);
/// }
/// ```
pub fn best_adapter() -> Option<wgpu::Adapter> {
    sorted_adapters().into_iter().next()
}

/// An adapter's [`Limits`]: [`limits_from_wgpu`] of its limits and info, with its memory where
/// the API below wgpu says ([`crate::memory::adapter_memory`]).
pub(crate) fn adapter_limits(adapter: &wgpu::Adapter) -> Limits {
    Limits { global_mem_bytes: crate::memory::adapter_memory(adapter), ..limits_from_wgpu(&adapter.limits(), &adapter.get_info()) }
}

/// Every adapter, hardware first, software (CPU) adapters last.
pub fn adapters() -> Vec<AdapterSummary> {
    sorted_adapters()
        .into_iter()
        .enumerate()
        .map(|(index, a)| {
            let info = a.get_info();
            AdapterSummary {
                index,
                target: target_from_info(&info),
                limits: adapter_limits(&a),
                shader_f16: a.features().contains(wgpu::Features::SHADER_F16),
                info,
            }
        })
        .collect()
}

static NEVER_ENDED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether a launch in this process (not in a worker) did not end within its timeout. Such a
/// launch may still be running when the program exits, and a driver can wait for it at exit
/// forever (NVIDIA's Vulkan driver did, on an H200): a program that sees `true` should leave
/// without running exit handlers (`_exit`), as `kerntune::exit` does. Launches in worker
/// processes never set it: the worker is killed with its launch.
pub fn launch_never_ended() -> bool {
    NEVER_ENDED.load(std::sync::atomic::Ordering::SeqCst)
}

/// Leaves device objects undestroyed, to the process's exit, once a launch in this process
/// never ended: a driver may wait for that launch before destroying one, forever. wgpu waits
/// for the queue to be idle when it is dropped (Debian 12's Mesa and NVIDIA's driver), and
/// Ubuntu 22.04's lavapipe (Mesa 23.2) waits in `vkDestroyPipeline` too: the tune reported the
/// lost device and then never returned, its device thread dropping the workspace's pipelines.
/// A memory leak after a fatal fault, in a process whose device is lost anyway.
pub(crate) fn leave_undestroyed<T>(objects: T) {
    std::mem::forget(objects);
}

/// Notes that a launch in this process did not end within its timeout (see
/// [`launch_never_ended`]).
pub(crate) fn note_launch_never_ended() {
    NEVER_ENDED.store(true, std::sync::atomic::Ordering::SeqCst);
}
