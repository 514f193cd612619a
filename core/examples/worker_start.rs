//! How long starting one measurement worker per device takes when the problem is large: what a
//! tune over several GPUs pays before its first measurement, and does not divide (issue 24).
//!
//! ```sh
//! cargo run --release -p kerntune-core --example worker_start -- 3 1,2,4,8
//! ```
//!
//! Arguments: the problem's size in GiB (one read buffer and one written, half each), and the
//! numbers of workers to start at once (each as a tune over that many devices does: one thread
//! per device, all at the same moment). This program is its own worker, with an executor that
//! keeps the problem in host memory as it arrives (a GPU backend uploads it instead), so the
//! times are the processes' start and the problem's journey to them, no device. Each count
//! runs three times; the line gives the slowest worker's ready time of each run.

use kerntune_core::spec::problem::{Access, ArgData, DType, HostBuffer, Init, ProblemData};
use kerntune_core::worker::{Executor, WorkerKind, WorkerSlot};
use kerntune_core::{BackendError, Launch, TimeRequest, VerifyRequest};
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

static KIND: WorkerKind = WorkerKind::new("BENCH", "KERNTUNE_BENCH_WORKER", "KERNTUNE_BENCH_ISOLATION");

/// Holds the problem; runs nothing.
#[derive(Default)]
struct Holder {
    problem: Option<Arc<ProblemData>>,
}

impl Executor for Holder {
    fn init(&mut self, _: usize, problem: &Arc<ProblemData>) -> Result<(), BackendError> {
        self.problem = Some(problem.clone());
        Ok(())
    }
    fn load(&mut self, _: u64, _: &str, _: Vec<u8>) -> Result<(), BackendError> {
        Ok(())
    }
    fn unload(&mut self, _: u64) {}
    fn reset(&mut self, _: bool) -> Result<(), BackendError> {
        Ok(())
    }
    fn time(&mut self, _: u64, _: &Launch, _: &TimeRequest) -> Result<Vec<f64>, BackendError> {
        Ok(vec![])
    }
    fn verify(&mut self, _: u64, _: &Launch, _: &VerifyRequest<'_>) -> Result<Vec<f64>, BackendError> {
        Ok(vec![])
    }
    fn read_outputs(&mut self, _: &[bool]) -> Result<Vec<HostBuffer>, BackendError> {
        Ok(vec![])
    }
}

fn main() {
    KIND.hook(Holder::default);
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: worker_start GIB COUNTS (e.g. 3 1,2,4,8)";
    let gib: f64 = args.first().and_then(|a| a.parse().ok()).unwrap_or_else(|| {
        eprintln!("{usage}");
        std::process::exit(2)
    });
    let counts: Vec<usize> = args.get(1).map_or("1,2,4,8", String::as_str).split(',').filter_map(|c| c.parse().ok()).collect();
    let elems = (gib * (1u64 << 30) as f64 / 8.0) as usize; // two f32 buffers
    let t = Instant::now();
    let problem = Arc::new(ProblemData {
        args: vec![
            ArgData::Buffer(HostBuffer::new("in", DType::F32, elems, &Init::Sequence, Access::Read)),
            ArgData::Buffer(HostBuffer::new("out", DType::F32, elems, &Init::Zeros, Access::Write)),
        ],
    });
    println!("problem: {gib} GiB in two buffers, made in {:.2} s", t.elapsed().as_secs_f64());
    let exe = std::env::current_exe().expect("this program");
    for &n in &counts {
        let mut runs = vec![];
        for _ in 0..3 {
            let slots: Vec<WorkerSlot> = (0..n)
                .map(|d| {
                    let exe = exe.clone();
                    WorkerSlot::new(&KIND, d).with_command(move || Command::new(&exe))
                })
                .collect();
            let t = Instant::now();
            let ready: Vec<f64> = std::thread::scope(|s| {
                let each: Vec<_> = slots
                    .iter()
                    .map(|slot| {
                        let problem = &problem;
                        s.spawn(move || slot.with(problem, |_| Ok(())).map(|_| t.elapsed().as_secs_f64()))
                    })
                    .collect();
                each.into_iter().map(|h| h.join().expect("a starting thread").expect("a worker starts")).collect()
            });
            runs.push(ready.iter().copied().fold(0.0, f64::max));
            drop(slots); // the workers end when their input closes
            std::thread::sleep(std::time::Duration::from_millis(300));
        }
        println!("{n} workers: ready after {}", runs.iter().map(|r| format!("{r:.2} s")).collect::<Vec<_>>().join(", "));
    }
}
