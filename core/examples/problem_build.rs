//! How long the first steps of a tune take on the host: making a problem's buffers (random and
//! zero fills) and the triad's CPU reference on them.
//! `cargo run --release -p kerntune-core --example problem_build -- [ELEMENTS] [REPEATS]`.
use kerntune_core::spec::problem::{Access, ArgData, DType, HostBuffer, Init, ProblemData};
use kerntune_core::spec::value::Value;
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let len: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1 << 28);
    let repeats: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(3);
    let gb = (len * 4) as f64 / 1e9;
    for _ in 0..repeats {
        for (what, init) in [("random", Init::Random { seed: 1 }), ("zeros", Init::Zeros)] {
            let t = Instant::now();
            let b = HostBuffer::new("x", DType::F32, len, &init, Access::Read);
            let s = t.elapsed().as_secs_f64();
            println!("{what}: {len} f32 in {s:.3} s ({:.2} GB/s)", gb / s);
            drop(std::hint::black_box(b));
        }
        let p = ProblemData {
            args: vec![
                ArgData::Buffer(HostBuffer::new("x", DType::F32, len, &Init::Random { seed: 1 }, Access::Read)),
                ArgData::Buffer(HostBuffer::new("y", DType::F32, len, &Init::Random { seed: 2 }, Access::ReadWrite)),
                ArgData::Scalar { name: "a".into(), dtype: DType::F32, value: Value::Float(2.0) },
            ],
        };
        let t = Instant::now();
        let r = kerntune_core::spec::reference::triad(&p).expect("a triad problem");
        println!("triad reference on 2 × {len} f32 in {:.3} s", t.elapsed().as_secs_f64());
        drop(std::hint::black_box(r));
    }
}
