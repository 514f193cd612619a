//! The cost of comparing an output sorted (`verify.compare = { y = "sorted" }`) and of the note
//! an element-by-element mismatch gets when its values agree sorted, on 16 Mi f32 elements: the
//! same values reversed (they agree), and the values scaled by 1.5 (they do not). Three rounds,
//! seconds each. `cargo run --release -p kerntune-core --example sorted_compare`; numbers in
//! docs/benchmarks.md ("Outputs compared sorted, and the cost of saying so").

use kerntune_core::measure::verify::{compare_sorted, sorted_hint};
use kerntune_core::spec::job::Tolerance;
use kerntune_core::spec::problem::Init;
use kerntune_core::{Access, DType, HostBuffer};

fn main() {
    let n = 1usize << 24;
    let want = HostBuffer::new("y", DType::F32, n, &Init::Random { seed: 1 }, Access::Write);
    let mut reversed = want.clone();
    reversed.data.chunks_exact_mut(4).rev().zip(want.data.chunks_exact(4)).for_each(|(g, w)| g.copy_from_slice(w));
    let mut scaled = want.clone();
    scaled.data.chunks_exact_mut(4).for_each(|c| {
        let v = f32::from_le_bytes([c[0], c[1], c[2], c[3]]) * 1.5;
        c.copy_from_slice(&v.to_le_bytes());
    });
    let tol = Tolerance::default();
    let timed = |what: &str, f: &dyn Fn() -> bool| {
        let t = std::time::Instant::now();
        let agrees = f();
        println!("{what}: {:.3} s (agrees sorted: {agrees})", t.elapsed().as_secs_f64());
    };
    for _ in 0..3 {
        timed("the note, a wrong output", &|| !sorted_hint(&scaled, &want, tol).is_empty());
        timed("the note, a reversed output", &|| !sorted_hint(&reversed, &want, tol).is_empty());
        timed("compared sorted, a reversed output", &|| compare_sorted(&reversed, &want, tol).is_ok());
    }
}
