//! Where a config stands on the roofline: its achieved bandwidth and FLOP rate against the
//! device's peaks, and which of the two bounds it.
//!
//! The peaks come from the device's [`Limits`] at tune time and are stored with the entry
//! ([`Peaks::write`]), so a report needs no GPU. CUDA and HIP compute them from the clocks and
//! widths the device reports (theoretical peaks: no kernel reaches 100 %); a device that
//! reports neither (wgpu adapters) gets the published figures of a known preset whose name it
//! matches, marked as an estimate, or no peaks at all.

use crate::limits::{Limits, PRESETS};
use serde::Serialize;
use std::collections::BTreeMap;

/// A device's peak rates and where they come from.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Peaks {
    /// DRAM bandwidth, bytes per second.
    pub bandwidth: Option<f64>,
    /// FP32 (non-tensor) FLOP per second.
    pub flops_f32: Option<f64>,
    /// FP16 (tensor/matrix core where present) FLOP per second.
    pub flops_f16: Option<f64>,
    /// Where the figures come from, for the reader.
    pub source: String,
    /// Whether they are an estimate for this device (not from the device itself).
    pub estimated: bool,
    /// Whether the kernel computes in half precision ([`crate::TuneJob::half_precision`]): its
    /// compute peak is the FP16 one.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub half: bool,
}

const BANDWIDTH: &str = "peak_bandwidth";
const FLOPS_F32: &str = "peak_flops_f32";
const FLOPS_F16: &str = "peak_flops_f16";
const SOURCE: &str = "peak_source";
const ESTIMATED: &str = "peak_estimated";
const PRECISION: &str = "peak_precision";

impl Peaks {
    /// The peaks a device's limits give, `None` when they give none.
    pub fn from_limits(limits: &Limits, source: impl Into<String>) -> Option<Peaks> {
        let p = Peaks {
            bandwidth: limits.memory_bandwidth,
            flops_f32: limits.peak_flops_f32,
            flops_f16: limits.peak_flops_f16,
            source: source.into(),
            estimated: false,
            half: false,
        };
        p.any().then_some(p)
    }

    /// The peaks of a device from its limits, else (marked as an estimate) from the preset
    /// its name matches.
    pub fn of_device(limits: &Limits, backend: &str, name: &str) -> Option<Peaks> {
        Peaks::from_limits(limits, format!("{backend} device limits: theoretical peaks from its clocks and widths")).or_else(|| Peaks::of_preset_named(name))
    }

    fn any(&self) -> bool {
        self.bandwidth.is_some() || self.flops_f32.is_some() || self.flops_f16.is_some()
    }

    /// Stores the peaks in an entry's environment details.
    pub fn write(&self, details: &mut BTreeMap<String, String>) {
        for (k, v) in [(BANDWIDTH, self.bandwidth), (FLOPS_F32, self.flops_f32), (FLOPS_F16, self.flops_f16)] {
            if let Some(v) = v {
                details.insert(k.into(), format!("{v:e}"));
            }
        }
        details.insert(SOURCE.into(), self.source.clone());
        if self.estimated {
            details.insert(ESTIMATED.into(), "true".into());
        }
        if self.half {
            details.insert(PRECISION.into(), "half".into());
        }
    }

    /// The same peaks for a kernel that computes in half precision (`half`) or not.
    pub fn for_precision(mut self, half: bool) -> Peaks {
        self.half = half;
        self
    }

    /// The peaks of an entry: those stored with it, else a preset whose device name the target's
    /// name contains (an estimate), else `None`.
    pub fn of_entry(details: &BTreeMap<String, String>, target_name: &str) -> Option<Peaks> {
        let num = |k: &str| details.get(k).and_then(|v| v.parse::<f64>().ok()).filter(|v| v.is_finite() && *v > 0.0);
        let stored = Peaks {
            bandwidth: num(BANDWIDTH),
            flops_f32: num(FLOPS_F32),
            flops_f16: num(FLOPS_F16),
            source: details.get(SOURCE).cloned().unwrap_or_else(|| "stored with the entry".into()),
            estimated: details.get(ESTIMATED).is_some_and(|v| v == "true"),
            half: details.get(PRECISION).is_some_and(|v| v == "half"),
        };
        if stored.any() {
            return Some(stored);
        }
        Peaks::of_preset_named(target_name).map(|p| p.for_precision(stored.half))
    }

    /// The published figures of the preset whose short name (`h100`) or device name the given
    /// device name contains, marked as an estimate.
    pub fn of_preset_named(device: &str) -> Option<Peaks> {
        let lower = device.to_ascii_lowercase();
        let word = |name: &str| lower.split(|c: char| !c.is_ascii_alphanumeric()).any(|w| w == name);
        let preset = PRESETS.iter().find(|p| lower.contains(&p.device.to_ascii_lowercase())).or_else(|| PRESETS.iter().find(|p| word(p.name)))?;
        let mut p = Peaks::from_limits(&(preset.limits)(), format!("published figures for the {} (kerntune's preset `{}`)", preset.device, preset.name))?;
        p.estimated = true;
        Some(p)
    }

    /// The FP16 peak for a kernel that computes in half precision; else the FP32 peak, or the
    /// FP16 one where `achieved` FLOP/s exceed the FP32 peak (a kernel on tensor or matrix
    /// cores whose spec does not say so: an entry stored before the precision was); with a
    /// word on which was used.
    pub fn compute_for(&self, achieved: Option<f64>) -> Option<(f64, &'static str)> {
        match (self.flops_f32, self.flops_f16, achieved) {
            (_, Some(f16), _) if self.half => Some((f16, "FP16 tensor")),
            (Some(f32), Some(f16), Some(a)) if a > f32 => Some((f16, "FP16 tensor")),
            (Some(f32), _, _) => Some((f32, "FP32")),
            (None, Some(f16), _) => Some((f16, "FP16 tensor")),
            (None, None, _) => None,
        }
    }
}

/// Below this fraction of the roof that bounds it, a config is said to be far below it.
const FAR_BELOW: f64 = 0.1;

/// What limits a config.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// Arithmetic intensity below the ridge point: bandwidth limits it.
    Memory,
    /// At or above the ridge point: the FLOP rate limits it.
    Compute,
}

/// A config's place on the roofline.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Position {
    /// Achieved bytes per second, where the spec gives a byte formula.
    pub bytes_per_s: Option<f64>,
    /// Achieved FLOP per second, where the spec gives a FLOP formula.
    pub flops_per_s: Option<f64>,
    /// FLOP per byte, where both formulas are given.
    pub intensity: Option<f64>,
    /// Which peak bounds it, where both peaks and both formulas are known.
    pub bound: Option<Bound>,
    /// Achieved ÷ the peak of its bound (or of the only rate known).
    pub fraction: Option<f64>,
    /// The peak `fraction` is of: `bandwidth`, `FP32` or `FP16 tensor`.
    pub of: Option<&'static str>,
}

impl Position {
    /// The position of one launch of `flops` FLOPs and `bytes` bytes that took `seconds`.
    pub fn of(flops: Option<f64>, bytes: Option<f64>, seconds: f64, peaks: Option<&Peaks>) -> Position {
        let ok = |x: Option<f64>| x.filter(|v| v.is_finite() && *v > 0.0);
        let rate = |x: Option<f64>| ok(x).filter(|_| seconds > 0.0).map(|v| v / seconds);
        let (bytes_per_s, flops_per_s) = (rate(bytes), rate(flops));
        let intensity = ok(flops).zip(ok(bytes)).map(|(f, b)| f / b);
        let compute = peaks.and_then(|p| p.compute_for(flops_per_s));
        let bandwidth = peaks.and_then(|p| p.bandwidth);
        let bound = match (intensity, compute, bandwidth) {
            (Some(i), Some((c, _)), Some(b)) => Some(if i < c / b { Bound::Memory } else { Bound::Compute }),
            _ => None,
        };
        let (fraction, of) = match (bound, bytes_per_s, flops_per_s, bandwidth, compute) {
            (Some(Bound::Memory), Some(r), _, Some(b), _) => (Some(r / b), Some("bandwidth")),
            (Some(Bound::Compute), _, Some(r), _, Some((c, w))) => (Some(r / c), Some(w)),
            (None, Some(r), None, Some(b), _) => (Some(r / b), Some("bandwidth")),
            (None, None, Some(r), _, Some((c, w))) => (Some(r / c), Some(w)),
            _ => (None, None),
        };
        Position { bytes_per_s, flops_per_s, intensity, bound, fraction, of }
    }

    /// The position in words: `87 % of peak bandwidth (memory-bound)`; `None` without a
    /// fraction.
    pub fn words(&self) -> Option<String> {
        let f = self.fraction?;
        let of = match self.of? {
            "bandwidth" => "peak bandwidth".to_string(),
            w => format!("the {w} peak"),
        };
        let bound = match self.bound {
            Some(Bound::Memory) => "memory-bound",
            Some(Bound::Compute) => "compute-bound",
            None => "",
        };
        // Far below the roof its intensity puts it under, the roof is not what limits it: a
        // tiny hgemm (9 µs a launch on an H100) reads `memory-bound` by its intensity at 1 % of
        // peak bandwidth, and said so plainly that points at the wrong remedy.
        let far = if f < FAR_BELOW && !bound.is_empty() {
            " by its intensity, but far below the roof: launch latency, too little parallelism or the kernel itself limits it"
        } else {
            ""
        };
        // Above a peak is possible (a working set that fits in L2 beats DRAM bandwidth) or a
        // sign that the spec's flops/bytes formula counts more than the kernel does: say which.
        let above = if f > 1.05 {
            match self.bound {
                Some(Bound::Memory) => "; above the DRAM peak: the data is served from cache, or the spec's bytes formula counts more than the kernel moves",
                _ => "; above the peak: the spec's flops formula counts more than the kernel computes",
            }
        } else {
            ""
        };
        let paren = match (bound.is_empty(), above.is_empty()) {
            (true, true) => String::new(),
            (true, false) => format!(" ({})", &above[2..]),
            (false, _) => format!(" ({bound}{far}{above})"),
        };
        Some(format!("{:.0} % of {of}{paren}", f * 100.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h100() -> Peaks {
        Peaks::from_limits(&Limits::preset("h100").unwrap().1, "test").unwrap()
    }

    #[test]
    fn a_triad_is_memory_bound_and_a_gemm_compute_bound() {
        // Triad: 2 FLOP and 24 bytes per element, 2^28 elements at 2.3 TB/s.
        let n = (1u64 << 28) as f64;
        let t = 24.0 * n / 2.9e12;
        let p = Position::of(Some(2.0 * n), Some(24.0 * n), t, Some(&h100()));
        assert_eq!(p.bound, Some(Bound::Memory));
        assert!((p.fraction.unwrap() - 2.9 / 3.35).abs() < 1e-9);
        assert_eq!(p.words().unwrap(), "87 % of peak bandwidth (memory-bound)");
        // SGEMM 4096³: 2·n³ FLOP, 3·4·n² bytes, at 40 TFLOP/s.
        let n = 4096f64;
        let t = 2.0 * n * n * n / 40e12;
        let p = Position::of(Some(2.0 * n * n * n), Some(12.0 * n * n), t, Some(&h100()));
        assert_eq!(p.bound, Some(Bound::Compute));
        assert_eq!(p.words().unwrap(), "60 % of the FP32 peak (compute-bound)");
        // A triad small enough to stay in L2 runs above the DRAM peak: said, not hidden.
        let n = (1u64 << 16) as f64;
        let p = Position::of(Some(2.0 * n), Some(24.0 * n), 24.0 * n / 6.7e12, Some(&h100()));
        let w = p.words().unwrap();
        assert!(w.starts_with("200 % of peak bandwidth (memory-bound; above the DRAM peak"), "{w}");
        // A small hgemm (2·256³ FLOP, 3·2·256² bytes, 9.4 µs): under the ridge of the FP16
        // tensor peak, at 1 % of peak bandwidth. The roof is not what limits it, and it is said.
        let n = 256f64;
        let half = h100().for_precision(true);
        let p = Position::of(Some(2.0 * n * n * n), Some(6.0 * n * n), 9.4e-6, Some(&half));
        assert_eq!(p.bound, Some(Bound::Memory));
        let w = p.words().unwrap();
        assert_eq!(
            w,
            "1 % of peak bandwidth (memory-bound by its intensity, but far below the roof: launch latency, too little parallelism or the kernel itself limits it)"
        );
    }

    #[test]
    fn a_kernel_above_the_fp32_peak_is_measured_against_the_tensor_peak() {
        let p = Position::of(Some(500e12), Some(1e9), 1.0, Some(&h100()));
        assert_eq!(p.of, Some("FP16 tensor"));
        assert!((p.fraction.unwrap() - 500.0 / 989.0).abs() < 1e-9);
    }

    #[test]
    fn a_half_precision_kernel_is_measured_against_the_fp16_peak_whatever_it_reaches() {
        // An f16 GEMM at 40 TFLOP/s: below the FP32 peak, and 4 % of the tensor peak, not 60 %
        // of the FP32 one.
        let half = h100().for_precision(true);
        let p = Position::of(Some(40e12), Some(1e9), 1.0, Some(&half));
        assert_eq!(
            p.words().unwrap(),
            "4 % of the FP16 tensor peak (compute-bound by its intensity, but far below the roof: launch latency, too little parallelism or the kernel itself limits it)"
        );
        assert_eq!(Position::of(Some(40e12), Some(1e9), 1.0, Some(&h100())).words().unwrap(), "60 % of the FP32 peak (compute-bound)");
        // Stored with the entry, so that a report says the same.
        let mut d = BTreeMap::new();
        half.write(&mut d);
        assert!(Peaks::of_entry(&d, "anything").unwrap().half);
        let mut none = BTreeMap::new();
        none.insert(PRECISION.to_string(), "half".to_string());
        assert!(Peaks::of_entry(&none, "NVIDIA H100 PCIe").is_some_and(|p| p.half && p.estimated), "a preset's figures keep the precision");
        // A device with no FP16 figure: the FP32 peak.
        let mut f32_only = h100().for_precision(true);
        f32_only.flops_f16 = None;
        assert_eq!(f32_only.compute_for(None).map(|c| c.1), Some("FP32"));
    }

    #[test]
    fn without_a_flop_formula_the_bandwidth_fraction_is_given_and_no_bound_named() {
        let p = Position::of(None, Some(3.35e9), 2e-3, Some(&h100()));
        assert_eq!(p.bound, None);
        assert_eq!(p.words().unwrap(), "50 % of peak bandwidth");
        assert_eq!(Position::of(None, None, 1.0, Some(&h100())).words(), None);
        assert_eq!(Position::of(Some(1.0), Some(1.0), 1.0, None).words(), None);
    }

    #[test]
    fn peaks_round_trip_through_the_environment_and_fall_back_to_a_preset() {
        let mut d = BTreeMap::new();
        h100().write(&mut d);
        let back = Peaks::of_entry(&d, "anything").unwrap();
        assert_eq!(back.bandwidth, Some(3.35e12));
        assert!(!back.estimated);
        let est = Peaks::of_entry(&BTreeMap::new(), "NVIDIA H100 80GB HBM3").unwrap();
        assert!(est.estimated && est.source.contains("h100"), "{}", est.source);
        let est = Peaks::of_entry(&BTreeMap::new(), "NVIDIA H200 (Vulkan)").unwrap();
        assert_eq!(est.bandwidth, Some(4.8e12));
        assert_eq!(Peaks::of_entry(&BTreeMap::new(), "llvmpipe (LLVM 15.0.6, 256 bits)"), None, "llvmpipe's preset has no peaks");
        assert_eq!(Peaks::of_entry(&BTreeMap::new(), "Intel(R) Arc(tm) A770"), None);
    }
}
