//! How long making a problem's host buffers takes (random and zero fills), the first step of
//! every tune: `cargo run --release -p kerntune-core --example problem_build -- [ELEMENTS] [REPEATS]`.
use kerntune_core::spec::problem::{Access, DType, HostBuffer, Init};
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let len: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1 << 28);
    let repeats: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(3);
    for _ in 0..repeats {
        for (what, init) in [("random", Init::Random { seed: 1 }), ("zeros", Init::Zeros)] {
            let t = Instant::now();
            let b = HostBuffer::new("x", DType::F32, len, &init, Access::Read);
            let s = t.elapsed().as_secs_f64();
            println!("{what}: {len} f32 in {s:.3} s ({:.2} GB/s)", (len * 4) as f64 / s / 1e9);
            drop(std::hint::black_box(b));
        }
    }
}
