//! Built-in CPU references a spec can name with `verify.reference = "cpu:NAME"`.
//!
//! Each finds its arguments by name (case-insensitive) and returns every buffer, in argument
//! order, as it must look after one launch.

use crate::job::HostReference;
use crate::problem::{ArgData, HostBuffer, ProblemData};
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
    bufs.iter()
        .position(|b| b.name.eq_ignore_ascii_case(name))
        .ok_or_else(|| format!("needs a buffer argument named `{name}`"))
}

fn scalar(p: &ProblemData, name: &str) -> Result<f64, String> {
    p.args
        .iter()
        .find_map(|a| match a {
            ArgData::Scalar { name: n, value, .. } if n.eq_ignore_ascii_case(name) => {
                value.as_f64()
            }
            _ => None,
        })
        .ok_or_else(|| format!("needs a scalar argument named `{name}`"))
}

/// `y = a*x + y` with buffers `x`, `y` and scalar `a`.
pub fn triad(p: &ProblemData) -> Result<Vec<HostBuffer>, String> {
    let mut b = buffers(p);
    let (xi, yi) = (find(&b, "x")?, find(&b, "y")?);
    let a = scalar(p, "a")?;
    let x = b[xi].clone();
    let y = &mut b[yi];
    if x.len() != y.len() {
        return Err("x and y differ in length".into());
    }
    for i in 0..y.len() {
        let v = a * x.get_f64(i) + y.get_f64(i);
        y.set_f64(i, v);
    }
    Ok(b)
}

/// `C = A·B`, row-major, with buffers `A` (M×K), `B` (K×N), `C` (M×N) and scalars `M`, `N`, `K`.
pub fn gemm(p: &ProblemData) -> Result<Vec<HostBuffer>, String> {
    let mut b = buffers(p);
    let (ai, bi, ci) = (find(&b, "A")?, find(&b, "B")?, find(&b, "C")?);
    let (m, n, k) = (
        scalar(p, "M")? as usize,
        scalar(p, "N")? as usize,
        scalar(p, "K")? as usize,
    );
    if b[ai].len() < m * k || b[bi].len() < k * n || b[ci].len() < m * n {
        return Err(format!(
            "buffers are smaller than M×K, K×N, M×N for M={m}, N={n}, K={k}"
        ));
    }
    let a: Vec<f64> = (0..m * k).map(|i| b[ai].get_f64(i)).collect();
    let bt: Vec<f64> = {
        // Transposed B for contiguous inner products.
        let mut t = vec![0.0; k * n];
        for kk in 0..k {
            for j in 0..n {
                t[j * k + kk] = b[bi].get_f64(kk * n + j);
            }
        }
        t
    };
    let c: Vec<f64> = (0..m * n)
        .into_par_iter()
        .map(|idx| {
            let (i, j) = (idx / n, idx % n);
            let (ar, bc) = (&a[i * k..(i + 1) * k], &bt[j * k..(j + 1) * k]);
            ar.iter().zip(bc).map(|(x, y)| x * y).sum()
        })
        .collect();
    for (i, v) in c.into_iter().enumerate() {
        b[ci].set_f64(i, v);
    }
    Ok(b)
}
