//! Targets: which device a tuning result belongs to.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Who made the device, as far as config generation cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Vendor {
    /// NVIDIA GPUs (CUDA).
    Nvidia,
    /// AMD GPUs (HIP/ROCm).
    Amd,
    /// Anything reached through a portable API (wgpu adapters, software Vulkan, the fake backend).
    Portable,
}

impl fmt::Display for Vendor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Vendor::Nvidia => "nvidia",
            Vendor::Amd => "amd",
            Vendor::Portable => "portable",
        })
    }
}

/// A device as the tuner sees it.
///
/// `name` is for people; `fingerprint` is for caches: winners, compiled binaries and config
/// overrides are stored under it, so it must change whenever a result could (a different chip,
/// a different API) and stay the same across runs, processes and machines with the same device.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Target {
    /// The backend that reaches it: `cuda`, `hip`, `wgpu`, `fake`.
    pub backend: String,
    /// Vendor family.
    pub vendor: Vendor,
    /// Architecture: `sm_90`, `gfx942`, or for wgpu `vulkan-10de-2335`.
    pub arch: String,
    /// Human-readable device name.
    pub name: String,
    /// Stable cache namespace, see the type docs.
    pub fingerprint: String,
}

impl Target {
    /// Builds a target; the fingerprint is `backend-arch-name` lower-cased with runs of
    /// non-alphanumerics collapsed to `-`.
    pub fn new(backend: &str, vendor: Vendor, arch: &str, name: &str) -> Target {
        let fingerprint = slug(&format!("{backend}-{arch}-{name}"));
        Target { backend: backend.into(), vendor, arch: arch.into(), name: name.into(), fingerprint }
    }
}

/// Lower-case, alphanumerics and `_` kept, everything else collapsed to single `-`.
pub fn slug(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        if ch.is_ascii_alphanumeric() || ch == '_' {
            out.push(ch.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}, {})", self.name, self.arch, self.backend)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn fingerprint_is_stable_slug() {
        let t = Target::new("cuda", Vendor::Nvidia, "sm_90", "NVIDIA H200");
        assert_eq!(t.fingerprint, "cuda-sm_90-nvidia-h200");
    }
}
