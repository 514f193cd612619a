//! An application's adapter (the launch API's): kerntune's backend on it runs kernels in a
//! worker process where the host program enabled them, as `WgpuBackend::open` does — the
//! worker finds the adapter among those kerntune enumerates. (Nothing is tuned here: this test
//! program has no hook, so a worker started from it would run the tests.)

use kerntune_core::testing::skipped_without_device;
use kerntune_wgpu::{worker, WgpuBackend};

#[test]
fn an_applications_adapter_gets_a_worker_where_the_program_enabled_them() {
    let Some(adapter) = kerntune_wgpu::best_adapter() else {
        skipped_without_device("wgpu", "adapter: no adapter", &"none enumerated");
        return;
    };
    assert!(!worker::isolation_enabled());
    assert!(!WgpuBackend::for_adapter(&adapter).unwrap().isolated(), "no hook: in this process");
    worker::KIND.set_enabled(true);
    assert!(WgpuBackend::for_adapter(&adapter).unwrap().isolated(), "enabled, and the adapter is one kerntune enumerates");
    worker::KIND.set_enabled(false);
}
