//! One tune over two wgpu devices, each measuring in its own worker process: the first device
//! compiles (validates the WGSL and makes the recipe) and either worker builds the pipeline
//! from the recipe on its own adapter. Here both devices are the machine's first adapter opened
//! twice (software Vulkan in CI), which exercises the same path as two GPUs of one model.
//!
//! A custom `main` (harness = false) because a worker is this very program started again: the
//! hook must run before anything else, as in a host program.

use kerntune_core::testing::skipped_without_device;
use kerntune_core::{TuneOptions, Tuner};
use kerntune_wgpu::WgpuBackend;
use std::path::Path;

fn main() {
    kerntune_wgpu::worker::hook();
    let open = || WgpuBackend::open(Some(0));
    let (a, b) = match (open(), open()) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => {
            skipped_without_device("wgpu", "wgpu devices: no adapter", &e);
            return;
        }
    };
    assert!(a.isolated() && b.isolated(), "the hook enabled worker processes");
    let spec = kerntune_core::plan::prepare::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/triad/triad.toml")).unwrap();
    let job = spec.job("wgsl", 0).unwrap();

    // Kernels made in this process belong to its device: such backends cannot share a tune.
    let local = || WgpuBackend::open_in_process(Some(0)).unwrap();
    let e = Tuner::with_devices(vec![local(), local()]).err().expect("in-process wgpu backends cannot share kernels").to_string();
    assert!(e.contains("runs a kernel only on the device that compiled it"), "{e}");

    let r = Tuner::with_devices(vec![a, b])
        .expect("wgpu backends with workers share kernels")
        .tune(&job, &TuneOptions { compile_threads: Some(2), ..Default::default() })
        .unwrap();
    assert_eq!(r.devices.len(), 2, "{:?}", r.devices);
    assert!(r.devices.iter().all(|d| d.measured > 0 && d.lost.is_none()), "each device measured, none lost: {:?}", r.devices);
    let measured: Vec<_> = r.results.iter().filter(|x| x.stats().is_some()).collect();
    assert_eq!(measured.len(), r.results.len(), "every config measured: {:?}", r.results.iter().map(|x| &x.outcome).collect::<Vec<_>>());
    assert!(measured.iter().all(|x| x.verified), "every config verified against the reference");
    // What the second device measured for the search: the configs it still holds, and those the
    // final round re-measured on the judge (device 0), each a sample of its ratio beside the
    // calibration config's. On a GPU most triad configs tie within the final round's margin, so
    // the judge may re-measure every one the second device measured.
    let kept = measured.iter().filter(|x| x.device == Some(1)).count();
    let moved = r.devices[1].ratio.map_or(0, |(_, n)| n.saturating_sub(1));
    assert!(kept + moved > 0, "the second device measured configs the first compiled: {:?}", r.devices);
    println!(
        "wgpu devices: {} configs over {:?}; the second's kept {kept}, re-measured by the first {moved}",
        measured.len(),
        r.devices.iter().map(|d| d.measured).collect::<Vec<_>>()
    );
}
