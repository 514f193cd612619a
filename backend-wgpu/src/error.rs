//! Mapping wgpu's errors to kerntune's: a poll that times out is a timed-out launch, any other
//! poll failure a lost device.

use kerntune_core::BackendError;
use std::time::Duration;

/// The error a failed `Device::poll` (waiting up to `timeout`) means.
pub(crate) fn poll_error(e: wgpu::PollError, timeout: Duration) -> BackendError {
    match e {
        wgpu::PollError::Timeout => BackendError::TimedOut(timeout),
        e => BackendError::DeviceLost(e.to_string()),
    }
}
