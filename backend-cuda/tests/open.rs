//! Opening the CUDA backend on whatever machine runs the tests: without a driver library the
//! error says so; with a driver but no GPU it says "no CUDA device"; with a GPU it opens. No
//! path panics.

use kerntune_core::{Backend, OpenError};
use kerntune_cuda::CudaBackend;

#[test]
fn open_distinguishes_missing_driver_missing_device_and_success() {
    match CudaBackend::open(None) {
        Ok(b) => {
            eprintln!("CUDA device present: {}", b.target());
            assert!(b.target().arch.starts_with("sm_"));
            assert!(b.toolchain().starts_with("nvrtc "));
        }
        Err(OpenError::LibraryNotFound { library, .. }) => {
            // This machine has no libcuda (the CI case).
            assert!(library == "CUDA driver library" || library == "NVRTC library", "{library}");
            let msg = CudaBackend::open(None).err().unwrap().to_string();
            assert!(msg.contains("not found") && msg.contains("--backend"), "{msg}");
        }
        Err(OpenError::NoDevice { message, .. }) => assert!(message.contains("no CUDA device"), "{message}"),
        Err(e) => panic!("unexpected: {e}"),
    }
    assert!(CudaBackend::open(Some(99)).is_err());
}
