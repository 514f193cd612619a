//! A kernel that never ends, with kernels in the tuning process (no worker: this test program
//! does not call the hook, as a library user who skips it does not). wgpu cannot stop the
//! dispatch, so the tune takes the device out and ends with one error saying why; it must end,
//! though: wgpu waits for an idle queue when the queue is dropped, which here is forever, and
//! the backend leaves such a queue to the process's exit. (With the hook the kernel runs in a
//! worker that is killed, and the tune goes on: tests/cli.rs.)

use kerntune_core::testing::skipped_without_device;
use kerntune_core::{TuneOptions, Tuner};
use kerntune_wgpu::WgpuBackend;
use std::path::Path;
use std::time::Duration;

#[test]
fn without_a_worker_a_shader_that_never_ends_ends_the_tune_with_one_error() {
    let backend = match WgpuBackend::open(None) {
        Ok(b) => b,
        Err(e) => {
            skipped_without_device("wgpu", "hang: no adapter", &e);
            return;
        }
    };
    assert!(!backend.isolated(), "no hook was called: kernels run in this process");
    let spec = kerntune_core::plan::prepare::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/faults/hang.toml")).unwrap();
    let job = spec.job("wgsl", 0).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    // The tuner (and with it the backend) is dropped on this thread before it answers.
    std::thread::spawn(move || {
        let r = Tuner::new(backend).tune(&job, &TuneOptions::default()).map(|_| ()).map_err(|e| e.to_string());
        let _ = tx.send(r);
    });
    let r = rx.recv_timeout(Duration::from_secs(120)).expect("the tune ended, its backend dropped, within two minutes");
    let e = r.expect_err("the device cannot be recovered in this process");
    assert!(e.contains("device lost") && e.contains("without a worker process"), "{e}");
}
