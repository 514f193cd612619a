//! Output verification: compare a config's outputs with the reference, with tolerances.
//!
//! Outputs are poisoned (all bits set: NaN for floats) before each verified launch, so a config
//! that skips writing part of its output cannot pass by leaving the previous run's values.

use crate::problem::HostBuffer;
use serde::{Deserialize, Serialize};

/// Absolute and relative tolerance: `|got - want| <= atol + rtol * |want|`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Tolerance {
    /// Absolute tolerance.
    pub atol: f64,
    /// Relative tolerance.
    pub rtol: f64,
}

impl Default for Tolerance {
    fn default() -> Self {
        Tolerance { atol: 1e-5, rtol: 1e-5 }
    }
}

/// Compares one output buffer; `Err` says where and how it differs.
pub fn compare(got: &HostBuffer, want: &HostBuffer, tol: Tolerance) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("`{}` has {} elements, the reference {}", got.name, got.len(), want.len()));
    }
    if got.dtype == crate::problem::DType::F32 && want.dtype == crate::problem::DType::F32 && all_close_f32(&got.data, &want.data, tol) {
        return Ok(());
    }
    let size = got.dtype.size();
    let mut bad = 0usize;
    let mut first: Option<String> = None;
    let mut unwritten = 0usize;
    for i in 0..got.len() {
        let raw = &got.data[i * size..(i + 1) * size];
        let g = got.get_f64(i);
        let w = want.get_f64(i);
        let ok = if g.is_nan() || w.is_nan() { g.is_nan() && w.is_nan() } else { (g - w).abs() <= tol.atol + tol.rtol * w.abs() };
        if !ok {
            bad += 1;
            if raw.iter().all(|&b| b == 0xFF) {
                unwritten += 1;
            }
            if first.is_none() {
                first = Some(format!("first at index {i}: got {g}, expected {w}"));
            }
        }
    }
    if bad == 0 {
        return Ok(());
    }
    let mut msg = format!("`{}`: {bad} of {} elements differ ({})", got.name, got.len(), first.unwrap_or_default());
    if unwritten > 0 {
        msg.push_str(&format!("; {unwritten} were never written (still hold the poison value)"));
    }
    Err(msg)
}

/// Fast path for f32 buffers: true when every element is within tolerance (compared in
/// parallel chunks). On `false` the slow path finds and describes the differences.
fn all_close_f32(got: &[u8], want: &[u8], tol: Tolerance) -> bool {
    use rayon::prelude::*;
    const CHUNK: usize = 1 << 16;
    got.par_chunks(CHUNK).zip(want.par_chunks(CHUNK)).all(|(g, w)| {
        g.chunks_exact(4).zip(w.chunks_exact(4)).all(|(a, b)| {
            let x = f32::from_le_bytes([a[0], a[1], a[2], a[3]]) as f64;
            let y = f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64;
            (x - y).abs() <= tol.atol + tol.rtol * y.abs() || (x.is_nan() && y.is_nan())
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::{Access, DType, Init};

    #[test]
    fn tolerances_and_poison() {
        let want = HostBuffer::new("y", DType::F32, 4, &Init::Sequence, Access::Write);
        let mut got = want.clone();
        assert!(compare(&got, &want, Tolerance::default()).is_ok());
        got.set_f64(2, 2.5);
        let e = compare(&got, &want, Tolerance::default()).unwrap_err();
        assert!(e.contains("1 of 4") && e.contains("index 2"), "{e}");
        assert!(compare(&got, &want, Tolerance { atol: 0.6, rtol: 0.0 }).is_ok());
        let mut got = want.clone();
        got.data[4..8].fill(0xFF);
        let e = compare(&got, &want, Tolerance::default()).unwrap_err();
        assert!(e.contains("never written"), "{e}");
    }
}
