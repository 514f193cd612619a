//! How long the built-in CPU reference `cpu:gemm` takes: a tune of a GEMM verifies nothing
//! before it is made. `cargo run --release -p kerntune-core --example reference_gemm -- [N] [REPEATS]`
//! (M = N = K = N, f32, the SGEMM benchmark's inputs).
use kerntune_core::spec::problem::{Access, ArgData, DType, HostBuffer, Init, ProblemData};
use kerntune_core::spec::value::Value;
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(4096);
    let repeats: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(3);
    let scalar = |name: &str| ArgData::Scalar { name: name.into(), dtype: DType::I32, value: Value::Int(n as i64) };
    let p = ProblemData {
        args: vec![
            ArgData::Buffer(HostBuffer::new("A", DType::F32, n * n, &Init::Random { seed: 1 }, Access::Read)),
            ArgData::Buffer(HostBuffer::new("B", DType::F32, n * n, &Init::Random { seed: 2 }, Access::Read)),
            ArgData::Buffer(HostBuffer::new("C", DType::F32, n * n, &Init::Zeros, Access::Write)),
            scalar("M"),
            scalar("N"),
            scalar("K"),
        ],
    };
    let flops = 2.0 * (n as f64).powi(3);
    for _ in 0..repeats {
        let t = Instant::now();
        let r = kerntune_core::spec::reference::gemm(&p).expect("a GEMM problem");
        let s = t.elapsed().as_secs_f64();
        println!(
            "gemm reference at {n}³ on {} threads: {s:.3} s ({:.0} GFLOP/s); C[0] = {}, C[last] = {}",
            rayon::current_num_threads(),
            flops / s / 1e9,
            r[2].get_f64(0),
            r[2].get_f64(n * n - 1)
        );
        drop(std::hint::black_box(r));
    }
}
