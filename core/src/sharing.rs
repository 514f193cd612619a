//! Whether other processes use the NVIDIA GPU a tune measures on: their kernels can take the
//! GPU's time from the ones being timed, which may then read slower and noisier than alone, and
//! they share the machine (two shards of a Slurm array given no GPU of their own both tune device
//! 0; another user's job on a shared node). Kernel Tuner and Triton time on regardless and say
//! nothing.
//!
//! While configs are timed, at most every 2 s, the GPU's compute processes (CUDA contexts, and
//! Vulkan devices such as wgpu's; not a display's graphics-only ones) are listed through NVML (the driver's
//! management library, `libnvidia-ml.so.1`, through `nvml-wrapper`, loaded at run time); those
//! that are neither this process nor one it started (its kernel worker) are others. The first
//! sighting is a warning; the tune's report gets one line naming them ([`Sharing::take_note`]).
//! Where NVML is missing, the GPU is not NVIDIA's or not found by its id, or the listed process
//! ids are not this process's (a container with a PID namespace of its own, where NVML names
//! host ids), nothing is said: it cannot be told. The CUDA backend names its device by UUID, the
//! wgpu backend an NVIDIA adapter by PCI bus (Vulkan's `VK_EXT_pci_bus_info`).

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How often the GPU's processes are listed at most (listing takes about a millisecond).
const EVERY: Duration = Duration::from_secs(2);

/// Another process seen on the GPU: its name where this process can read it, and the most GPU
/// memory it held when seen.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Other {
    pub name: Option<String>,
    pub memory: Option<u64>,
}

#[derive(Default)]
struct State {
    /// NVML, once tried (`None` inside: unavailable), and whether this process is in the host's
    /// PID namespace, whose ids NVML lists.
    nvml: Option<Option<(nvml_wrapper::Nvml, bool)>>,
    last: Option<Instant>,
    /// Others seen since the last note, by process id.
    seen: BTreeMap<u32, Other>,
    /// Said as a warning already (once per backend).
    warned: bool,
}

/// How NVML finds the GPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GpuId {
    /// Its UUID as NVML writes it (`GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`; CUDA's
    /// `cuDeviceGetUuid`).
    Uuid(String),
    /// Its PCI bus as `domain:bus:device.function` in hexadecimal (`0000:19:00.0`; wgpu's
    /// `AdapterInfo::device_pci_bus_id`).
    PciBus(String),
}

/// The other processes on one GPU (a backend's, sampled as it times).
#[derive(Default)]
pub struct Sharing {
    id: Option<GpuId>,
    state: Mutex<State>,
}

impl Sharing {
    /// For the GPU NVML finds by `id`; `None`: never says anything.
    pub fn new(id: Option<GpuId>) -> Sharing {
        Sharing { id, state: Mutex::default() }
    }

    /// Lists the GPU's processes, unless that was done less than 2 s ago.
    pub fn sample(&self) {
        let Some(id) = &self.id else { return };
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if st.last.is_some_and(|t| t.elapsed() < EVERY) {
            return;
        }
        st.last = Some(Instant::now());
        let nvml = st.nvml.get_or_insert_with(|| {
            nvml_wrapper::Nvml::builder()
                .lib_path(std::ffi::OsStr::new("libnvidia-ml.so.1"))
                .init()
                .map_err(|e| tracing::debug!(error = %e, "NVML unavailable: whether other processes share the GPU is not checked"))
                .ok()
                .map(|n| (n, in_host_pid_namespace()))
        });
        let Some((nvml, host_ids)) = nvml.as_ref() else { return };
        let host_ids = *host_ids;
        let device = match id {
            GpuId::Uuid(u) => nvml.device_by_uuid(u.as_str()),
            GpuId::PciBus(b) => nvml.device_by_pci_bus_id(b.as_str()),
        };
        // Compute processes: CUDA contexts, and Vulkan devices (NVML lists a wgpu tune's as
        // `C+G`, among these), not a display's graphics-only processes (Xorg, a compositor),
        // which would be said at every tune on a desktop.
        let listed = match device.and_then(|d| d.running_compute_processes()) {
            Ok(l) => l,
            Err(e) => {
                tracing::debug!(error = %e, gpu = ?id, "NVML could not list the GPU's processes");
                return;
            }
        };
        let listed: Vec<(u32, Option<u64>)> = listed
            .into_iter()
            .map(|p| {
                let memory = match p.used_gpu_memory {
                    nvml_wrapper::enums::device::UsedGpuMemory::Used(b) => Some(b),
                    nvml_wrapper::enums::device::UsedGpuMemory::Unavailable => None,
                };
                (p.pid, memory)
            })
            .collect();
        let others = others(std::process::id(), &listed, crate::backend::process_parent, host_ids);
        for (pid, memory) in others {
            let slot = st
                .seen
                .entry(pid)
                .or_insert_with(|| Other { name: std::fs::read_to_string(format!("/proc/{pid}/comm")).ok().map(|n| n.trim().to_string()), memory });
            slot.memory = slot.memory.max(memory);
        }
        // The first process seen is said at once; the rest go into the note.
        if !st.seen.is_empty() && !st.warned {
            st.warned = true;
            tracing::warn!("{}", warning(&st.seen, Some(id)));
        }
    }

    /// The report's line on the others seen since the last call, if any.
    pub fn take_note(&self) -> Option<String> {
        self.sample_now();
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let seen = std::mem::take(&mut st.seen);
        (!seen.is_empty()).then(|| note(&seen, self.id.as_ref()))
    }

    /// [`Sharing::sample`] however recent the last one.
    fn sample_now(&self) {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).last = None;
        self.sample();
    }
}

/// The listed processes (id, GPU memory) that are others: neither `me` nor a process `me`
/// started. NVML names process ids as the host's first PID namespace numbers them: in that
/// namespace (`host_ids`) they are this process's ids too. Elsewhere (a container), or where that
/// cannot be read, only when `me` or its child is listed (the ids are then this namespace's);
/// otherwise none, as nothing can be told. (A process using the GPU through Vulkan, as wgpu does,
/// may be listed late or not at all, so in the host's namespace its own listing is not needed.)
fn others(me: u32, listed: &[(u32, Option<u64>)], parent: impl Fn(u32) -> Option<u32>, host_ids: bool) -> Vec<(u32, Option<u64>)> {
    let ours = |pid: u32| pid == me || parent(pid) == Some(me);
    if !host_ids && !listed.iter().any(|&(pid, _)| ours(pid)) {
        return Vec::new();
    }
    listed.iter().copied().filter(|&(pid, _)| !ours(pid)).collect()
}

/// Whether this process is in the first PID namespace (its `NSpid` in `/proc/self/status` has
/// one id: a process in a container has one per namespace it is nested in); false where that
/// cannot be read.
fn in_host_pid_namespace() -> bool {
    std::fs::read_to_string("/proc/self/status").ok().and_then(|s| pid_namespaces(&s)) == Some(1)
}

/// The number of PID namespaces a process is in, from its `/proc/PID/status`.
fn pid_namespaces(status: &str) -> Option<usize> {
    let ids = status.lines().find_map(|l| l.strip_prefix("NSpid:"))?;
    Some(ids.split_whitespace().count()).filter(|&n| n > 0)
}

fn named(seen: &BTreeMap<u32, Other>) -> String {
    let each: Vec<String> = seen
        .iter()
        .map(|(pid, o)| {
            let name = o.name.as_deref().map(|n| format!(" `{n}`")).unwrap_or_default();
            let memory = o.memory.map(|b| format!(", {} MiB", b >> 20)).unwrap_or_default();
            format!("pid {pid}{name}{memory}")
        })
        .collect();
    format!("{} other process{} ({})", seen.len(), if seen.len() == 1 { "" } else { "es" }, each.join("; "))
}

/// What to do, for a GPU named so.
fn advice(id: Option<&GpuId>) -> &'static str {
    match id {
        Some(GpuId::PciBus(_)) => "give the tune a GPU of its own (Slurm: --gpus-per-task=1 or --gres=gpu:1; elsewhere --device, see `kerntune devices`)",
        _ => "give the tune a GPU of its own (Slurm: --gpus-per-task=1 or --gres=gpu:1; elsewhere CUDA_VISIBLE_DEVICES or --device)",
    }
}

fn warning(seen: &BTreeMap<u32, Other>, id: Option<&GpuId>) -> String {
    format!(
        "the GPU is shared: {} use{} it while configs are timed; another process's kernels can slow these and widen their spread; {}",
        named(seen),
        if seen.len() == 1 { "s" } else { "" },
        advice(id)
    )
}

fn note(seen: &BTreeMap<u32, Other>, id: Option<&GpuId>) -> String {
    format!(
        "the GPU was shared: {} used it while configs were timed; another process's kernels can slow these and widen their spread (tune again on a GPU of its own to compare); {}",
        named(seen),
        advice(id)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn others_are_the_processes_neither_this_one_nor_its_children() {
        let parent = |pid: u32| Some(if pid == 11 { 10 } else { 1 });
        // This process (10) and its worker (11), beside two others.
        let listed = [(10, Some(300 << 20)), (11, Some(500 << 20)), (20, Some(2 << 30)), (21, None)];
        for host in [true, false] {
            assert_eq!(others(10, &listed, parent, host), vec![(20, Some(2 << 30)), (21, None)]);
            // Alone.
            assert!(others(10, &listed[..2], parent, host).is_empty());
            // This process's parent and siblings are others.
            assert_eq!(others(11, &listed, parent, host).iter().map(|o| o.0).collect::<Vec<_>>(), vec![10, 20, 21]);
        }
        // None of the listed is this process's: in a container, the ids may be the host's and
        // nothing can be told; in the host's namespace, they are others (this process itself
        // not listed, as a Vulkan device may not be).
        assert!(others(10, &[(4242, None), (4243, None)], parent, false).is_empty());
        assert_eq!(others(10, &[(4242, None)], parent, true), vec![(4242, None)]);
    }

    #[test]
    fn the_pid_namespaces_are_read_from_the_status() {
        assert_eq!(pid_namespaces("Name:\tkerntune\nNSpid:\t23450\nNSpgid:\t1\n"), Some(1));
        assert_eq!(pid_namespaces("NSpid:\t181934\t7\n"), Some(2));
        assert_eq!(pid_namespaces("Name:\tx\n"), None);
        assert_eq!(pid_namespaces("NSpid:\n"), None);
    }

    #[test]
    fn the_note_names_each_other_process() {
        let mut seen = BTreeMap::new();
        seen.insert(4242, Other { name: Some("python3".into()), memory: Some(3 << 30) });
        seen.insert(4250, Other { name: None, memory: None });
        let n = note(&seen, Some(&GpuId::Uuid("GPU-0".into())));
        assert!(n.starts_with("the GPU was shared: 2 other processes (pid 4242 `python3`, 3072 MiB; pid 4250) used it"), "{n}");
        assert!(n.contains("--gpus-per-task=1"), "{n}");
        seen.remove(&4250);
        let w = warning(&seen, Some(&GpuId::PciBus("0000:19:00.0".into())));
        assert!(w.starts_with("the GPU is shared: 1 other process (pid 4242 `python3`, 3072 MiB) uses it"), "{w}");
        // No CUDA variable for a GPU tuned through Vulkan.
        assert!(w.ends_with("elsewhere --device, see `kerntune devices`)") && !w.contains("CUDA_VISIBLE_DEVICES"), "{w}");
    }
}
