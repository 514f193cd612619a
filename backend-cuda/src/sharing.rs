//! Whether other processes use the GPU a tune measures on: their kernels can take the GPU's time
//! from the ones being timed, which may then read slower and noisier than alone, and they share
//! the machine (two shards of a Slurm array given no GPU of their own both tune device 0; another
//! user's job on a shared node). Kernel Tuner and Triton time on regardless and say nothing.
//!
//! While configs are timed, at most every [`EVERY`], the GPU's compute processes are listed
//! through NVML (the driver's management library, `libnvidia-ml.so.1`, through
//! `nvml-wrapper`); those that are neither this process nor one it started (its kernel worker)
//! are others. The first sighting is a warning; the tune's report gets one line naming them
//! ([`Sharing::take_note`]). Where NVML is missing, or the listed process ids are not this
//! process's (a container with a PID namespace of its own, where NVML names host ids), nothing
//! is said: it cannot be told.

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
    /// NVML, once tried (`None` inside: unavailable).
    nvml: Option<Option<nvml_wrapper::Nvml>>,
    last: Option<Instant>,
    /// Others seen since the last note, by process id.
    seen: BTreeMap<u32, Other>,
    /// Said as a warning already (once per backend).
    warned: bool,
}

/// The other processes on one GPU ([`crate::CudaBackend`]'s, sampled as it times).
#[derive(Default)]
pub(crate) struct Sharing {
    uuid: Option<String>,
    state: Mutex<State>,
}

impl Sharing {
    /// For the device with this UUID (as NVML writes it, `GPU-…`); `None`: never says anything.
    pub(crate) fn new(uuid: Option<String>) -> Sharing {
        Sharing { uuid, state: Mutex::default() }
    }

    /// Lists the GPU's processes, unless that was done less than [`EVERY`] ago.
    pub(crate) fn sample(&self) {
        let Some(uuid) = &self.uuid else { return };
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
        });
        let Some(nvml) = nvml.as_ref() else { return };
        let listed = match nvml.device_by_uuid(uuid.as_str()).and_then(|d| d.running_compute_processes()) {
            Ok(l) => l,
            Err(e) => {
                tracing::debug!(error = %e, "NVML could not list the GPU's processes");
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
        let others = others(std::process::id(), &listed, kerntune_core::backend::process_parent);
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
            tracing::warn!("{}", warning(&st.seen));
        }
    }

    /// The report's line on the others seen since the last call, if any.
    pub(crate) fn take_note(&self) -> Option<String> {
        self.sample_now();
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let seen = std::mem::take(&mut st.seen);
        (!seen.is_empty()).then(|| note(&seen))
    }

    /// [`Sharing::sample`] however recent the last one.
    fn sample_now(&self) {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).last = None;
        self.sample();
    }
}

/// The listed processes (id, GPU memory) that are others: neither `me` nor a process `me`
/// started. None when no listed process is `me` or its child while some are listed: the ids
/// are another PID namespace's (a container), and nothing can be told.
fn others(me: u32, listed: &[(u32, Option<u64>)], parent: impl Fn(u32) -> Option<u32>) -> Vec<(u32, Option<u64>)> {
    let ours = |pid: u32| pid == me || parent(pid) == Some(me);
    if !listed.iter().any(|&(pid, _)| ours(pid)) {
        return Vec::new();
    }
    listed.iter().copied().filter(|&(pid, _)| !ours(pid)).collect()
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

const ADVICE: &str = "give the tune a GPU of its own (Slurm: --gpus-per-task=1 or --gres=gpu:1; elsewhere CUDA_VISIBLE_DEVICES or --device)";

fn warning(seen: &BTreeMap<u32, Other>) -> String {
    format!(
        "the GPU is shared: {} use{} it while configs are timed; another process's kernels can slow these and widen their spread; {ADVICE}",
        named(seen),
        if seen.len() == 1 { "s" } else { "" }
    )
}

fn note(seen: &BTreeMap<u32, Other>) -> String {
    format!(
        "the GPU was shared: {} used it while configs were timed; another process's kernels can slow these and widen their spread (tune again on a GPU of its own to compare); {ADVICE}",
        named(seen)
    )
}

/// The UUID of CUDA device `ordinal` as NVML names it (`GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`).
pub(crate) fn uuid_of(ordinal: usize) -> Option<String> {
    let dev = cudarc::driver::result::device::get(ordinal as i32).ok()?;
    let u = cudarc::driver::result::device::get_uuid(dev).ok()?;
    let b: Vec<u8> = u.bytes.iter().map(|&c| c as u8).collect();
    let hex = |r: std::ops::Range<usize>| b[r].iter().map(|x| format!("{x:02x}")).collect::<String>();
    Some(format!("GPU-{}-{}-{}-{}-{}", hex(0..4), hex(4..6), hex(6..8), hex(8..10), hex(10..16)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn others_are_the_processes_neither_this_one_nor_its_children() {
        let parent = |pid: u32| Some(if pid == 11 { 10 } else { 1 });
        // This process (10) and its worker (11), beside two others.
        let listed = [(10, Some(300 << 20)), (11, Some(500 << 20)), (20, Some(2 << 30)), (21, None)];
        assert_eq!(others(10, &listed, parent), vec![(20, Some(2 << 30)), (21, None)]);
        // Alone.
        assert!(others(10, &listed[..2], parent).is_empty());
        // Ids from another PID namespace (none is this process's): nothing can be told.
        assert!(others(10, &[(4242, None), (4243, None)], parent).is_empty());
        // This process's parent and siblings are others.
        assert_eq!(others(11, &listed, parent).iter().map(|o| o.0).collect::<Vec<_>>(), vec![10, 20, 21]);
    }

    #[test]
    fn the_note_names_each_other_process() {
        let mut seen = BTreeMap::new();
        seen.insert(4242, Other { name: Some("python3".into()), memory: Some(3 << 30) });
        seen.insert(4250, Other { name: None, memory: None });
        let n = note(&seen);
        assert!(n.starts_with("the GPU was shared: 2 other processes (pid 4242 `python3`, 3072 MiB; pid 4250) used it"), "{n}");
        assert!(n.contains("--gpus-per-task=1"), "{n}");
        seen.remove(&4250);
        assert!(warning(&seen).starts_with("the GPU is shared: 1 other process (pid 4242 `python3`, 3072 MiB) uses it"));
    }
}
