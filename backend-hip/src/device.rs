//! The device: runtime initialisation ("no AMD GPU found" when it has none) and device
//! enumeration with each device's target and limits.

use crate::error::describe;
use crate::limits::{arch, limits_from_attributes, Attributes};
use hip_sys::hiprt::{self as hip, hipDeviceAttribute_t as A, hipError_t};
use kerntune_core::{Limits, OpenError, Target, Vendor};

/// A device found by [`devices`].
#[derive(Clone, Debug)]
pub struct DeviceSummary {
    /// HIP ordinal.
    pub ordinal: usize,
    /// The target (`gfx942`, ...).
    pub target: Target,
    /// Its limits.
    pub limits: Limits,
    /// The raw attributes.
    pub attributes: Attributes,
}

pub(crate) fn no_device(message: String) -> OpenError {
    OpenError::NoDevice { backend: "hip".into(), message }
}

/// Initialises the runtime: "no AMD GPU found" when it has none.
pub(crate) fn init() -> Result<i32, OpenError> {
    // SAFETY: plain runtime initialisation.
    match unsafe { hip::hipInit(0) } {
        hipError_t::hipSuccess => {}
        hipError_t::hipErrorNoDevice | hipError_t::hipErrorInvalidDevice => return Err(no_device("no AMD GPU found".into())),
        e => return Err(no_device(format!("no AMD GPU found (hipInit: {})", describe(e)))),
    }
    let mut n = 0;
    // SAFETY: valid out-pointer.
    let r = unsafe { hip::hipGetDeviceCount(&mut n) };
    if r != hipError_t::hipSuccess || n == 0 {
        return Err(no_device("no AMD GPU found".into()));
    }
    Ok(n)
}

fn attr(dev: i32, a: A) -> i64 {
    let mut v = 0;
    // SAFETY: valid out-pointer and device ordinal.
    if unsafe { hip::hipDeviceGetAttribute(&mut v, a, dev) } == hipError_t::hipSuccess {
        v as i64
    } else {
        0
    }
}

/// `gcnArchName`, found by scanning the properties record: the record's layout differs
/// between ROCm releases (and from the bindings' own), so the call writes into a generously
/// sized buffer and the `gfx...` string is searched for instead of read at a fixed offset.
fn arch_name(dev: i32) -> String {
    let mut buf = vec![0u64; 2048]; // 16 KiB, zeroed, 8-byte aligned: larger than any release's record.
                                    // SAFETY: the buffer is larger than hipDeviceProp_t in every ROCm release.
    let ok = unsafe { hip::hipGetDeviceProperties(buf.as_mut_ptr() as *mut hip::hipDeviceProp_t, dev) } == hipError_t::hipSuccess;
    if !ok {
        return "gfx".into();
    }
    // SAFETY: reinterpreting our own u64 buffer as bytes.
    let bytes = unsafe { std::slice::from_raw_parts(buf.as_ptr() as *const u8, buf.len() * 8) };
    bytes
        .windows(4)
        .position(|w| w[..3] == *b"gfx" && w[3].is_ascii_alphanumeric())
        .map(|i| bytes[i..].iter().take_while(|&&c| c != 0 && c.is_ascii_graphic()).map(|&c| c as char).collect())
        .unwrap_or_else(|| "gfx".into())
}

fn total_mem(dev: i32) -> i64 {
    let mut bytes = 0usize;
    // SAFETY: valid out-pointer and device ordinal.
    if unsafe { hip::hipDeviceTotalMem(&mut bytes, dev) } == hipError_t::hipSuccess {
        bytes.min(i64::MAX as usize) as i64
    } else {
        0
    }
}

pub(crate) fn summary(dev: i32) -> DeviceSummary {
    let a = Attributes {
        max_threads_per_block: attr(dev, A::hipDeviceAttributeMaxThreadsPerBlock),
        max_block_dim: [
            attr(dev, A::hipDeviceAttributeMaxBlockDimX),
            attr(dev, A::hipDeviceAttributeMaxBlockDimY),
            attr(dev, A::hipDeviceAttributeMaxBlockDimZ),
        ],
        max_grid_dim: [attr(dev, A::hipDeviceAttributeMaxGridDimX), attr(dev, A::hipDeviceAttributeMaxGridDimY), attr(dev, A::hipDeviceAttributeMaxGridDimZ)],
        warp_size: attr(dev, A::hipDeviceAttributeWarpSize),
        shared_per_block: attr(dev, A::hipDeviceAttributeMaxSharedMemoryPerBlock),
        shared_per_cu: attr(dev, A::hipDeviceAttributeMaxSharedMemoryPerMultiprocessor),
        registers_per_block: attr(dev, A::hipDeviceAttributeMaxRegistersPerBlock),
        max_threads_per_cu: attr(dev, A::hipDeviceAttributeMaxThreadsPerMultiProcessor),
        cu_count: attr(dev, A::hipDeviceAttributeMultiprocessorCount),
        l2_bytes: attr(dev, A::hipDeviceAttributeL2CacheSize),
        memory_clock_khz: attr(dev, A::hipDeviceAttributeMemoryClockRate),
        bus_width_bits: attr(dev, A::hipDeviceAttributeMemoryBusWidth),
        clock_khz: attr(dev, A::hipDeviceAttributeClockRate),
        arch_name: arch_name(dev),
        total_mem_bytes: total_mem(dev),
    };
    let mut name = [0i8; 256];
    // SAFETY: buffer of the given length.
    let named = unsafe { hip::hipDeviceGetName(name.as_mut_ptr(), name.len() as i32, dev) } == hipError_t::hipSuccess;
    // SAFETY: NUL-terminated by the runtime (zero-initialised otherwise).
    let display = if named { unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) }.to_string_lossy().into_owned() } else { "AMD GPU".into() };
    let target = Target::new("hip", Vendor::Amd, &arch(&a.arch_name), &display);
    DeviceSummary { ordinal: dev as usize, limits: limits_from_attributes(&a), target, attributes: a }
}

/// Every AMD GPU.
pub fn devices() -> Result<Vec<DeviceSummary>, OpenError> {
    let n = init()?;
    Ok((0..n).map(summary).collect())
}
