//! Built-in CPU references a spec can name with `verify.reference = "cpu:NAME"`.
//!
//! Each finds its arguments by name (case-insensitive) and returns every buffer, in argument
//! order, as it must look after one launch.

use crate::spec::job::HostReference;
use crate::spec::problem::{ArgData, HostBuffer, ProblemData};
use rayon::prelude::*;
use std::sync::Arc;

/// Names of the built-in references.
pub const BUILTINS: &[&str] = &["triad", "gemm"];

/// A built-in reference by name.
pub fn builtin(name: &str) -> Option<HostReference> {
    match name {
        "triad" => Some(Arc::new(triad)),
        "gemm" | "matmul" | "sgemm" => Some(Arc::new(gemm)),
        _ => None,
    }
}

fn buffers(p: &ProblemData) -> Vec<HostBuffer> {
    p.buffers().cloned().collect()
}

fn find(bufs: &[HostBuffer], name: &str) -> Result<usize, String> {
    bufs.iter().position(|b| b.name.eq_ignore_ascii_case(name)).ok_or_else(|| format!("needs a buffer argument named `{name}`"))
}

fn scalar(p: &ProblemData, name: &str) -> Result<f64, String> {
    p.args
        .iter()
        .find_map(|a| match a {
            ArgData::Scalar { name: n, value, .. } if n.eq_ignore_ascii_case(name) => value.as_f64(),
            _ => None,
        })
        .ok_or_else(|| format!("needs a scalar argument named `{name}`"))
}

/// `y = a*x + y` with buffers `x`, `y` and scalar `a`.
pub fn triad(p: &ProblemData) -> Result<Vec<HostBuffer>, String> {
    let mut b = buffers(p);
    let (xi, yi) = (find(&b, "x")?, find(&b, "y")?);
    let a = scalar(p, "a")?;
    if b[xi].len() != b[yi].len() {
        return Err("x and y differ in length".into());
    }
    let x = b[xi].clone();
    let y = &mut b[yi];
    if x.dtype == crate::spec::problem::DType::F32 && y.dtype == crate::spec::problem::DType::F32 {
        // f32 fast path, in parallel chunks (this reference runs on gigabyte-sized inputs).
        let a = a as f32;
        y.data.par_chunks_mut(1 << 18).zip(x.data.par_chunks(1 << 18)).for_each(|(yc, xc)| {
            for (yv, xv) in yc.chunks_exact_mut(4).zip(xc.chunks_exact(4)) {
                let r = a * f32::from_le_bytes([xv[0], xv[1], xv[2], xv[3]]) + f32::from_le_bytes([yv[0], yv[1], yv[2], yv[3]]);
                yv.copy_from_slice(&r.to_le_bytes());
            }
        });
    } else {
        for i in 0..y.len() {
            let v = a * x.get_f64(i) + y.get_f64(i);
            y.set_f64(i, v);
        }
    }
    Ok(b)
}

/// `C = A·B`, row-major, with buffers `A` (M×K), `B` (K×N), `C` (M×N) and scalars `M`, `N`, `K`.
pub fn gemm(p: &ProblemData) -> Result<Vec<HostBuffer>, String> {
    let mut b = buffers(p);
    let (ai, bi, ci) = (find(&b, "A")?, find(&b, "B")?, find(&b, "C")?);
    let (m, n, k) = (scalar(p, "M")? as usize, scalar(p, "N")? as usize, scalar(p, "K")? as usize);
    if b[ai].len() < m * k || b[bi].len() < k * n || b[ci].len() < m * n {
        return Err(format!("buffers are smaller than M×K, K×N, M×N for M={m}, N={n}, K={k}"));
    }
    let a: Vec<f32> = b[ai].to_f32();
    let bm: Vec<f32> = b[bi].to_f32();
    // Cache-blocked i-k-j product: each task owns a block of C's rows and streams B in
    // k-blocks, so the inner loop is a contiguous, vectorisable axpy.
    const ROWS: usize = 16;
    const KB: usize = 256;
    let mut c = vec![0f32; m * n];
    c.par_chunks_mut(ROWS * n.max(1)).enumerate().for_each(|(blk, cblock)| {
        let r0 = blk * ROWS;
        let rows = cblock.len() / n.max(1);
        for k0 in (0..k).step_by(KB) {
            let k1 = (k0 + KB).min(k);
            for r in 0..rows {
                let crow = &mut cblock[r * n..(r + 1) * n];
                let arow = &a[(r0 + r) * k..(r0 + r + 1) * k];
                for kk in k0..k1 {
                    let av = arow[kk];
                    let brow = &bm[kk * n..(kk + 1) * n];
                    for (cv, bv) in crow.iter_mut().zip(brow) {
                        *cv += av * bv;
                    }
                }
            }
        }
    });
    for (i, v) in c.iter().enumerate() {
        b[ci].set_f64(i, *v as f64);
    }
    Ok(b)
}
