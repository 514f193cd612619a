//! Mapping HIP runtime errors to kerntune's typed errors.

use hip_sys::hiprt::hipError_t;
use kerntune_core::BackendError;

/// Name and description of a HIP error.
pub fn describe(e: hipError_t) -> String {
    // SAFETY: hipGetErrorName/String return static strings for any code.
    let (name, text) = unsafe {
        (
            std::ffi::CStr::from_ptr(hip_sys::hiprt::hipGetErrorName(e)).to_string_lossy().into_owned(),
            std::ffi::CStr::from_ptr(hip_sys::hiprt::hipGetErrorString(e)).to_string_lossy().into_owned(),
        )
    };
    format!("{name}: {text}")
}

/// Turns a status into a `Result`.
pub fn check(e: hipError_t, what: &str) -> Result<(), BackendError> {
    if e == hipError_t::hipSuccess {
        Ok(())
    } else {
        Err(map(e, what))
    }
}

/// Whether an error leaves the device unusable for this process.
pub fn is_sticky(e: hipError_t) -> bool {
    matches!(e, hipError_t::hipErrorIllegalAddress | hipError_t::hipErrorLaunchFailure | hipError_t::hipErrorAssert | hipError_t::hipErrorContextIsDestroyed)
}

/// Maps an error raised while `what`.
pub fn map(e: hipError_t, what: &str) -> BackendError {
    let msg = format!("{what}: {}", describe(e));
    if is_sticky(e) {
        BackendError::DeviceLost(msg)
    } else if matches!(e, hipError_t::hipErrorLaunchOutOfResources) {
        BackendError::LaunchFailed(format!("{msg} (too many registers or too much LDS for this block size)"))
    } else if what.starts_with("launch") {
        BackendError::LaunchFailed(msg)
    } else {
        BackendError::other(msg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_map_to_kinds_with_the_runtimes_own_text() {
        // These calls go to the real libamdhip64 (no device needed for error strings).
        let e = map(hipError_t::hipErrorIllegalAddress, "launch");
        assert!(matches!(&e, BackendError::DeviceLost(m) if m.contains("hipErrorIllegalAddress")), "{e}");
        let e = map(hipError_t::hipErrorLaunchOutOfResources, "launch");
        assert!(matches!(&e, BackendError::LaunchFailed(m) if m.contains("too many registers")), "{e}");
        assert!(matches!(map(hipError_t::hipErrorInvalidValue, "launch"), BackendError::LaunchFailed(_)));
        assert!(matches!(map(hipError_t::hipErrorOutOfMemory, "alloc"), BackendError::Other(_)));
        assert!(check(hipError_t::hipSuccess, "x").is_ok());
    }
}
