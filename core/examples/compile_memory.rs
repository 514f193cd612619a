//! Compiles that need more memory together than the tune's cgroup may use: a tune of 36 configs
//! on `-j 4` whose compiles each take 150 MiB in their compiler process, in a memory cgroup limited to
//! 400 MiB (a Slurm job's `--mem`, a pod's limit). Without a memory check, every wave of four
//! compiles runs the cgroup out of memory and the out-of-memory killer ends compilers; with it,
//! once a compile has shown what it takes, no compile starts where it would not fit.
//!
//! ```sh
//! cargo build --release -p kerntune-core --example compile_memory
//! sudo bash docs/results/compile-memory-2026-12-03/run.sh
//! ```
//!
//! Arguments: compile threads (4), MiB per compile (150), seconds per compile (1.5). Prints
//! the wall time, what was measured, the report's notes and failures, and the cgroup's count of
//! out-of-memory kills before and after.

use kerntune_core::fake::{self, FakeBackend};
use kerntune_core::{Config, Limits, TuneOptions, Tuner};
use std::time::{Duration, Instant};

fn time(c: &Config) -> f64 {
    let (bx, vec) = (c.get_i64("bx").unwrap_or(1) as f64, c.get_i64("vec").unwrap_or(1) as f64);
    1e-3 * (1.0 + 0.02 * (bx / 128.0).log2().abs()) * (1.0 + 0.02 * (4.0 / vec).log2())
}

fn main() {
    fake::hook();
    let arg = |i: usize, default: f64| std::env::args().nth(i).and_then(|a| a.parse().ok()).unwrap_or(default);
    let (threads, mib, secs) = (arg(1, 4.0) as usize, arg(2, 150.0) as usize, arg(3, 1.5));
    // Compiles in compiler processes (the CLI's default for NVRTC; here for the fake).
    std::env::set_var(kerntune_core::compiler::ISOLATION_VAR, "1");
    let fake = FakeBackend::new(Limits::preset("h100").expect("a preset").1, time)
        .with_compile_times(move |_| Duration::from_secs_f64(secs))
        .with_compile_memory(move |_| mib);
    let opts = TuneOptions { compile_threads: Some(threads), ..Default::default() };
    let job = fake::xy_job(&[32, 64, 128, 256, 512, 1024], &[1, 2, 4, 8, 16, 32], 1024);
    let before = kerntune_core::worker::oom_kills();
    let t0 = Instant::now();
    match Tuner::new(fake).tune(&job, &opts) {
        Ok(r) => {
            let measured = r.results.iter().filter(|x| x.stats().is_some()).count();
            println!("measured {measured} of {} in {:.1} s; winner {}", r.results.len(), t0.elapsed().as_secs_f64(), r.winner);
            for n in &r.notes {
                println!("note: {n}");
            }
            for f in &r.failures {
                println!("failed: {f:?}");
            }
        }
        Err(e) => println!("error after {:.1} s: {e}", t0.elapsed().as_secs_f64()),
    }
    let file = kerntune_core::worker::oom_count_file().map_or("(none)".into(), |p| p.display().to_string());
    println!("oom_kill in {file}: {before:?} before the tune, {:?} after", kerntune_core::worker::oom_kills());
    println!("a compiler process's footprint measured: {} MiB", kerntune_core::compiler::memory::footprint() >> 20);
}
