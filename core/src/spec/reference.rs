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

/// A copy of every buffer of the problem (copied in parallel: references run on gigabytes).
fn buffers(p: &ProblemData) -> Result<Vec<HostBuffer>, String> {
    p.buffers().map(|b| b.par_clone().ok_or_else(|| format!("cannot copy buffer `{}` on the host", b.name))).collect()
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
    let mut b = buffers(p)?;
    let (xi, yi) = (find(&b, "x")?, find(&b, "y")?);
    let a = scalar(p, "a")?;
    if b[xi].len() != b[yi].len() {
        return Err("x and y differ in length".into());
    }
    // x is read from the problem itself (nothing writes it), y updated in the copy.
    let x = p.buffers().nth(xi).expect("the copies are the problem's buffers, in order");
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
    let mut b = buffers(p)?;
    let (ai, bi, ci) = (find(&b, "A")?, find(&b, "B")?, find(&b, "C")?);
    let (m, n, k) = (scalar(p, "M")? as usize, scalar(p, "N")? as usize, scalar(p, "K")? as usize);
    if b[ai].len() < m * k || b[bi].len() < k * n || b[ci].len() < m * n {
        return Err(format!("buffers are smaller than M×K, K×N, M×N for M={m}, N={n}, K={k}"));
    }
    let a: Vec<f32> = b[ai].to_f32();
    let bm: Vec<f32> = b[bi].to_f32();
    let mut c = vec![0f32; m * n];
    if m > 0 && n > 0 {
        // The `gemm` crate's packed kernels (AVX-512 where the CPU has it), on every core: a
        // tune verifies nothing until this reference is made. At 4096³ on the H100 machine's
        // 16 Sapphire Rapids cores: 0.19–0.23 s, against 0.31–0.36 s through ndarray and
        // matrixmultiply (docs/benchmarks.md, "The CPU GEMM reference").
        // SAFETY: `c` holds m×n, `a` at least m×k and `bm` at least k×n elements (checked
        // above), all row-major: row stride = columns, column stride 1; no two alias.
        unsafe {
            gemm::gemm(
                m,
                n,
                k,
                c.as_mut_ptr(),
                1,
                n as isize,
                false,
                a.as_ptr(),
                1,
                k as isize,
                bm.as_ptr(),
                1,
                n as isize,
                0.0,
                1.0,
                false,
                false,
                false,
                gemm::Parallelism::Rayon(0),
            );
        }
    }
    b[ci].set_f32s(&c);
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::problem::{Access, DType, Init};
    use crate::spec::value::Value;

    fn gemm_problem(m: usize, n: usize, k: usize) -> ProblemData {
        let scalar = |name: &str, v: usize| ArgData::Scalar { name: name.into(), dtype: DType::I32, value: Value::Int(v as i64) };
        ProblemData {
            args: vec![
                ArgData::Buffer(HostBuffer::new("A", DType::F32, m * k, &Init::Random { seed: 1 }, Access::Read)),
                ArgData::Buffer(HostBuffer::new("B", DType::F32, k * n, &Init::Random { seed: 2 }, Access::Read)),
                ArgData::Buffer(HostBuffer::new("C", DType::F32, m * n, &Init::Zeros, Access::Write)),
                scalar("M", m),
                scalar("N", n),
                scalar("K", k),
            ],
        }
    }

    #[test]
    fn triad_is_a_times_x_plus_y_past_chunk_ends_in_f32_and_f64() {
        for dtype in [DType::F32, DType::F64] {
            // Two parallel chunks of 64 Ki f32 elements and a ragged end.
            let len = (2 << 16) + 5;
            let p = ProblemData {
                args: vec![
                    ArgData::Buffer(HostBuffer::new("x", dtype, len, &Init::Random { seed: 1 }, Access::Read)),
                    ArgData::Buffer(HostBuffer::new("y", dtype, len, &Init::Random { seed: 2 }, Access::ReadWrite)),
                    ArgData::Scalar { name: "a".into(), dtype, value: Value::Float(2.5) },
                ],
            };
            let r = triad(&p).unwrap();
            let (x, y) = (p.buffers().next().unwrap(), p.buffers().nth(1).unwrap());
            assert_eq!(&r[0], x, "{dtype:?}: x comes back as it was");
            for i in [0, 1, (1 << 16) - 1, 1 << 16, len - 1] {
                let want = if dtype == DType::F32 { (2.5f32 * x.get_f64(i) as f32 + y.get_f64(i) as f32) as f64 } else { 2.5 * x.get_f64(i) + y.get_f64(i) };
                assert_eq!(r[1].get_f64(i), want, "{dtype:?} element {i}");
            }
        }
    }

    #[test]
    fn gemm_matches_the_textbook_product_on_ragged_sizes() {
        // 130 rows: two full blocks of 64 and a ragged one; n and k not multiples of anything.
        let (m, n, k) = (130, 33, 129);
        let p = gemm_problem(m, n, k);
        let out = gemm(&p).unwrap();
        let (a, b, c) = (out[0].to_f32(), out[1].to_f32(), out[2].to_f32());
        for i in 0..m {
            for j in 0..n {
                let want: f64 = (0..k).map(|l| a[i * k + l] as f64 * b[l * n + j] as f64).sum();
                assert!((c[i * n + j] as f64 - want).abs() < 1e-3 * (1.0 + want.abs()), "C[{i},{j}] = {} ≠ {want}", c[i * n + j]);
            }
        }
        let mut small = gemm_problem(4, 4, 4);
        small.args[2] = ArgData::Buffer(HostBuffer::new("C", DType::F32, 3, &Init::Zeros, Access::Write));
        assert!(gemm(&small).unwrap_err().contains("smaller than M×K"));
    }
}
