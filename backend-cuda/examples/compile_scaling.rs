//! How NVRTC compiles scale with concurrency: the same configs of a spec compiled to CUBIN
//! one at a time, then by a pool of N threads in this process, then by a pool of N worker
//! processes (this program, started again), each taking the next config as it finishes. For
//! each run it prints the wall time, the compile-seconds summed over the pool, the slowdown
//! (summed ÷ the one-at-a-time total) and the compile-parallel efficiency (one-at-a-time total
//! ÷ (wall × N)). No GPU is needed: NVRTC compiles for the architecture given.
//!
//! ```text
//! cargo run --release -p kerntune-cuda --example compile_scaling -- SPEC CONFIGS SEED ARCH MODE...
//! # e.g. examples/convolution/convolution.toml 32 1 sm_90 serial t4 t8 t16 p4 p8 p16
//! ```
//!
//! Set `CUDA_CACHE_DISABLE=1`: NVRTC 12.9 and later otherwise return programs it compiled
//! before from the driver's cache. Results: docs/benchmarks.md, "Compile scaling".

use kerntune_core::{CompileInputs, Config, Prepared};
use kerntune_cuda::{CompileCache, CompileOptions};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::io::{BufRead, Write};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

struct Work {
    job: kerntune_core::TuneJob,
    prep: Prepared,
    configs: Vec<Config>,
    arch: String,
}

impl Work {
    fn load(spec: &str, n: usize, seed: u64, arch: &str) -> Result<Work, String> {
        let spec = kerntune_core::plan::prepare::load(std::path::Path::new(spec)).map_err(|e| e.to_string())?;
        let job = spec.job("cuda", 0).map_err(|e| e.to_string())?;
        let prep = Prepared::without_data(&job, None).map_err(|e| e.to_string())?;
        let mut configs: Vec<Config> = prep.space.iter().collect();
        configs.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(seed));
        configs.truncate(n);
        Ok(Work { job, prep, configs, arch: arch.into() })
    }

    /// Compiles config `i`; its seconds.
    fn compile(&self, i: usize) -> Result<f64, String> {
        let cfg = &self.configs[i];
        let launch = self.prep.launch(cfg)?;
        let inputs = CompileInputs::new(&self.prep, &self.job.source, cfg, &launch);
        let req = inputs.request(&self.job.source, cfg, &launch);
        let opts = CompileOptions::for_request(&req, &self.arch);
        let cache = CompileCache::new(None, String::new());
        let instance = req.source.instance(req.defines);
        let t = Instant::now();
        cache.compile(req.source.entry(), instance.as_deref(), req.code, &req.source.headers, &opts).map_err(|e| format!("{cfg}: {e}"))?;
        Ok(t.elapsed().as_secs_f64())
    }
}

/// Runs `n` workers over every config; returns (wall, summed compile seconds).
fn pool(n: usize, each: impl Fn(usize, &AtomicUsize, &Mutex<f64>) + Sync) -> (f64, f64) {
    let next = AtomicUsize::new(0);
    let sum = Mutex::new(0.0);
    let t = Instant::now();
    std::thread::scope(|s| {
        for w in 0..n {
            let (next, sum, each) = (&next, &sum, &each);
            s.spawn(move || each(w, next, sum));
        }
    });
    let wall = t.elapsed().as_secs_f64();
    let summed = *sum.lock().expect("sum");
    (wall, summed)
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--child") {
        // A worker process: config indices on stdin, "index seconds" on stdout.
        let w = Work::load(&args[2], args[3].parse().map_err(|_| "CONFIGS")?, args[4].parse().map_err(|_| "SEED")?, &args[5])?;
        let mut out = std::io::stdout().lock();
        for line in std::io::stdin().lock().lines() {
            let i: usize = line.map_err(|e| e.to_string())?.trim().parse().map_err(|_| "an index")?;
            let secs = w.compile(i)?;
            writeln!(out, "{i} {secs}").map_err(|e| e.to_string())?;
            out.flush().map_err(|e| e.to_string())?;
        }
        return Ok(());
    }
    if args.len() < 6 {
        return Err("usage: compile_scaling SPEC CONFIGS SEED ARCH MODE... (serial, tN, pN)".into());
    }
    let (spec, n, seed, arch) = (&args[1], &args[2], &args[3], &args[4]);
    let w = Work::load(spec, n.parse().map_err(|_| "CONFIGS")?, seed.parse().map_err(|_| "SEED")?, arch)?;
    let count = w.configs.len();
    println!("{count} configs of {spec} (seed {seed}) for {arch}");
    let mut serial_total: Option<f64> = None;
    for mode in &args[5..] {
        // `serial` is a pool of one thread, and the baseline the others are compared with.
        let threads =
            if mode == "serial" { Some(1) } else { mode.strip_prefix('t').map(|t| t.parse::<usize>().map_err(|_| format!("{mode}: tN"))).transpose()? };
        let (wall, summed, workers) = if let Some(t) = threads {
            let (wall, summed) = pool(t, |_, next, sum| {
                while let Some(i) = Some(next.fetch_add(1, Ordering::SeqCst)).filter(|&i| i < count) {
                    let s = w.compile(i).expect("compiles");
                    *sum.lock().expect("sum") += s;
                }
            });
            if mode == "serial" {
                serial_total = Some(summed);
            }
            (wall, summed, t)
        } else if let Some(p) = mode.strip_prefix('p') {
            let p: usize = p.parse().map_err(|_| format!("{mode}: pN"))?;
            let exe = std::env::current_exe().map_err(|e| e.to_string())?;
            // Start every worker first (a process's start is not a compile).
            let children: Vec<_> = (0..p)
                .map(|_| {
                    Command::new(&exe).args(["--child", spec, n, seed, arch]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("a worker process")
                })
                .collect();
            let children: Vec<Mutex<_>> = children.into_iter().map(Mutex::new).collect();
            let (wall, summed) = pool(p, |wk, next, sum| {
                let mut child = children[wk].lock().expect("child");
                let mut stdin = child.stdin.take().expect("stdin");
                let mut stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
                while let Some(i) = Some(next.fetch_add(1, Ordering::SeqCst)).filter(|&i| i < count) {
                    writeln!(stdin, "{i}").expect("send");
                    stdin.flush().expect("flush");
                    let mut line = String::new();
                    stdout.read_line(&mut line).expect("answer");
                    let secs: f64 = line.split_whitespace().nth(1).and_then(|s| s.parse().ok()).expect("index seconds");
                    *sum.lock().expect("sum") += secs;
                }
                drop(stdin);
                child.wait().expect("worker ends");
            });
            (wall, summed, p)
        } else {
            return Err(format!("{mode}: use serial, tN or pN"));
        };
        let base = serial_total.unwrap_or(summed);
        println!(
            "{mode:>7}: wall {wall:7.2} s, compile-seconds summed {summed:8.2}, slowdown {:.2}×, efficiency {:3.0} %",
            summed / base,
            100.0 * base / (wall * workers as f64)
        );
    }
    Ok(())
}
