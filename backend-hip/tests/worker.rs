//! The HIP worker process, against the real HIP library: this test program is its own worker
//! (as the `kerntune` CLI is), through the protocol and fault policy that the CUDA backend
//! proves on a GPU (`kerntune_core::worker`). Without an AMD GPU the worker starts, asks the
//! real runtime, and its "no AMD GPU found" reaches the parent as a clean error; with one, a
//! real kernel is timed and verified in the worker.
//!
//! A custom `main` (harness = false), because the hook must run first thing in a worker.

use kerntune_core::spec::problem::{Access, ArgData, DType, HostBuffer, Init, ProblemData};
use kerntune_core::worker::WorkerSlot;
use kerntune_core::{Backend, BackendError, OpenError};
use kerntune_hip::HipBackend;

fn problem() -> ProblemData {
    ProblemData {
        args: vec![
            ArgData::Buffer(HostBuffer::new("y", DType::F32, 4096, &Init::Zeros, Access::Write)),
            ArgData::Buffer(HostBuffer::new("x", DType::F32, 4096, &Init::Sequence, Access::Read)),
        ],
    }
}

fn without_a_gpu_the_worker_reports_it_cleanly() -> bool {
    let slot = WorkerSlot::new(&kerntune_hip::worker::KIND, 0);
    match slot.with(&std::sync::Arc::new(problem()), |_| Ok(())) {
        Ok(()) => return false,
        // Tried twice, then said once, with the worker's own words.
        Err(BackendError::WorkerStart(m)) => assert!(m.contains("(device lost: no AMD GPU found") && m.contains("KERNTUNE_HIP_ISOLATION=0"), "{m}"),
        Err(e) => panic!("unexpected: {e}"),
    }
    assert_eq!(slot.starts(), 0, "a worker that cannot open the device is not counted as started");
    // Opening with isolation on says the same as without.
    match HipBackend::open(None) {
        Err(OpenError::NoDevice { message, .. }) => assert!(message.starts_with("no AMD GPU found"), "{message}"),
        Err(e) => panic!("unexpected: {e}"),
        Ok(_) => unreachable!("the worker found no GPU"),
    }
    true
}

fn on_a_gpu_the_worker_times_and_verifies() {
    let b = HipBackend::open(None).expect("an AMD GPU");
    assert!(b.isolated());
    let src = kerntune_core::KernelSource::new(
        "twice",
        "hip",
        "extern \"C\" __global__ void twice(float* y, const float* x) { int i = blockIdx.x * blockDim.x + threadIdx.x; y[i] = 2.0f * x[i]; }",
    );
    let cfg = kerntune_core::Config::new([("B", 256)]);
    let launch = kerntune_core::Launch { grid: [16, 1, 1], block: [256, 1, 1], shared_mem_bytes: 0 };
    let req =
        kerntune_core::CompileRequest { source: &src, code: &src.code, config: &cfg, defines: &[], launch: &launch, scalars: &[], buffers: &[], abandon: None };
    let k = b.compile(&req).expect("compiles").kernel;
    let p = problem();
    let mut ws = b.workspace(&std::sync::Arc::new(p.clone())).expect("worker workspace");
    let t = b
        .time(
            &mut ws,
            &k,
            &launch,
            &kerntune_core::TimeRequest { launches: 3, flush: kerntune_core::L2Flush::Memset, timeout: std::time::Duration::from_secs(5) },
        )
        .unwrap();
    assert_eq!(t.len(), 3);
    let mut reference: Vec<HostBuffer> = p.buffers().cloned().collect();
    for i in 0..4096 {
        let v = 2.0 * reference[1].get_f64(i);
        reference[0].set_f64(i, v);
    }
    let vreq = kerntune_core::VerifyRequest {
        reference: &reference,
        reference_id: 1,
        outputs: &[],
        tolerance: Default::default(),
        per_output: &[],
        compare: &[],
        mismatches: &[],
        timeout: std::time::Duration::from_secs(5),
    };
    b.verify(&mut ws, &k, &launch, &vreq).expect("verifies on the device, in the worker");
}

fn main() {
    kerntune_hip::worker::hook();
    print!("test hip_worker ... ");
    if without_a_gpu_the_worker_reports_it_cleanly() {
        let what = "hip worker: timing and verifying in the worker (no AMD GPU; the worker's refusal was checked instead)";
        println!("ok (SKIPPED {what})");
        kerntune_core::testing::skipped(what);
    } else {
        on_a_gpu_the_worker_times_and_verifies();
        println!("ok");
    }
    println!("\ntest result: ok. 1 passed; 0 failed");
}
