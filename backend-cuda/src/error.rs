//! Mapping CUDA driver errors to kerntune's typed errors.

use cudarc::driver::result::DriverError;
use cudarc::driver::sys::CUresult;
use kerntune_core::BackendError;

/// Name and description of a driver error, e.g. `CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory
/// access was encountered`.
pub fn describe(e: &DriverError) -> String {
    let name = format!("{:?}", e.0);
    // SAFETY: only probes whether the driver library can be loaded.
    let text = if unsafe { cudarc::driver::sys::is_culib_present() } {
        e.error_string().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
    } else {
        String::new()
    };
    if text.is_empty() {
        name
    } else {
        format!("{name}: {text}")
    }
}

/// Whether an error leaves the context unusable (a "sticky" error): every later call in the
/// context fails until it is destroyed.
pub fn is_sticky(code: CUresult) -> bool {
    matches!(
        code,
        CUresult::CUDA_ERROR_ILLEGAL_ADDRESS
            | CUresult::CUDA_ERROR_ILLEGAL_INSTRUCTION
            | CUresult::CUDA_ERROR_MISALIGNED_ADDRESS
            | CUresult::CUDA_ERROR_INVALID_ADDRESS_SPACE
            | CUresult::CUDA_ERROR_INVALID_PC
            | CUresult::CUDA_ERROR_HARDWARE_STACK_ERROR
            | CUresult::CUDA_ERROR_LAUNCH_FAILED
            | CUresult::CUDA_ERROR_ECC_UNCORRECTABLE
            | CUresult::CUDA_ERROR_CONTEXT_IS_DESTROYED
            | CUresult::CUDA_ERROR_LAUNCH_TIMEOUT
            | CUresult::CUDA_ERROR_ASSERT
    )
}

/// Maps a driver error raised while launching or waiting for a kernel.
pub fn launch_error(e: DriverError) -> BackendError {
    let msg = describe(&e);
    match e.0 {
        c if is_sticky(c) => BackendError::DeviceLost(msg),
        CUresult::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES => {
            BackendError::LaunchFailed(format!("{msg} (too many registers or too much shared memory for this block size)"))
        }
        _ => BackendError::LaunchFailed(msg),
    }
}

/// Maps any other driver error (allocation, copies).
pub fn other(what: &str, e: DriverError) -> BackendError {
    let msg = format!("{what}: {}", describe(&e));
    if is_sticky(e.0) {
        BackendError::DeviceLost(msg)
    } else {
        BackendError::other(msg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sticky_errors_are_device_lost_others_launch_failures() {
        assert!(matches!(launch_error(DriverError(CUresult::CUDA_ERROR_ILLEGAL_ADDRESS)), BackendError::DeviceLost(_)));
        assert!(matches!(launch_error(DriverError(CUresult::CUDA_ERROR_MISALIGNED_ADDRESS)), BackendError::DeviceLost(_)));
        let e = launch_error(DriverError(CUresult::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES));
        assert!(matches!(&e, BackendError::LaunchFailed(m) if m.contains("too many registers")), "{e}");
        assert!(matches!(launch_error(DriverError(CUresult::CUDA_ERROR_INVALID_VALUE)), BackendError::LaunchFailed(_)));
        assert!(matches!(other("alloc", DriverError(CUresult::CUDA_ERROR_OUT_OF_MEMORY)), BackendError::Other(_)));
    }
}
