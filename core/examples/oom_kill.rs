//! A compiler process the kernel's out-of-memory killer ends, on a real kernel: the tuner must
//! tell it from a kill by hand (the `oom_kill` count of the tuner's memory cgroup, or of
//! `/proc/vmstat`, moved while the config compiled),
//! compile the config again with fewer compiles beside it, and say so.
//!
//! Run inside a memory cgroup with a process that fills it (`oom_kill fill`: the same program,
//! so that it weighs no more than a compiler process besides the memory it fills; what
//! `docs/results/oom-2026-12-03/run.sh` does, as root on a machine with cgroup v1 or v2):
//!
//! ```sh
//! cargo build --release -p kerntune-core --example oom_kill
//! sudo bash docs/results/oom-2026-12-03/run.sh
//! ```
//!
//! The tune: the fake backend's 18 configs, each compiling for two seconds in a compiler
//! process (which asks the out-of-memory killer to take it first), two compile threads. It
//! prints what was measured, the report's notes and the failures.

use kerntune_core::fake::{self, FakeBackend};
use kerntune_core::{Config, Limits, TuneOptions, Tuner};
use std::time::Duration;

fn time(c: &Config) -> f64 {
    let (bx, vec) = (c.get_i64("bx").unwrap_or(1) as f64, c.get_i64("vec").unwrap_or(1) as f64);
    1e-3 * (1.0 + 0.02 * (bx / 128.0).log2().abs()) * (1.0 + 0.02 * (4.0 / vec).log2())
}

/// `oom_kill fill`: fills memory 10 MiB at a time (touching every page) until the
/// out-of-memory killer's count (its cgroup's) moves, then exits (the run script starts it beside the tune).
fn fill() {
    let start = kerntune_core::worker::oom_kills();
    let mut held: Vec<Vec<u8>> = Vec::new();
    while kerntune_core::worker::oom_kills() == start {
        held.push(vec![1u8; 10 << 20]);
        std::thread::sleep(Duration::from_millis(2));
    }
    println!("filler: oom_kill {start:?} -> {:?} after {} MiB", kerntune_core::worker::oom_kills(), held.len() * 10);
}

fn main() {
    fake::hook();
    if std::env::args().nth(1).as_deref() == Some("fill") {
        return fill();
    }
    // Compiles in compiler processes (the CLI's default for NVRTC; here for the fake).
    std::env::set_var(kerntune_core::compiler::ISOLATION_VAR, "1");
    let fake = FakeBackend::new(Limits::preset("h100").expect("a preset").1, time).with_compile_times(|_| Duration::from_secs(2));
    let opts = TuneOptions { compile_threads: Some(2), ..Default::default() };
    let job = fake::xy_job(&[32, 64, 128, 256, 512, 1024], &[1, 2, 4], 1024);
    let before = kerntune_core::worker::oom_kills();
    match Tuner::new(fake).tune(&job, &opts) {
        Ok(r) => {
            let measured = r.results.iter().filter(|x| x.stats().is_some()).count();
            println!("measured {measured} of {}; winner {}", r.results.len(), r.winner);
            for n in &r.notes {
                println!("note: {n}");
            }
            for f in &r.failures {
                println!("failed: {f:?}");
            }
        }
        Err(e) => println!("error: {e}"),
    }
    let file = kerntune_core::worker::oom_count_file().map_or("(none)".into(), |p| p.display().to_string());
    println!("oom_kill in {file}: {before:?} before the tune, {:?} after", kerntune_core::worker::oom_kills());
}
