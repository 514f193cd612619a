//! The worker-process machinery the CUDA, HIP and wgpu backends share, proven on a CPU: this test
//! program is its own worker (as the `kerntune` CLI is), with an executor over host memory
//! whose "kernels" crash the process, hang, write wrong values or skip their output on purpose.
//!
//! A custom `main` (harness = false) because a worker is this very program started again: the
//! hook must run before anything else, as in a host program.

use kerntune_core::spec::job::Tolerance;
use kerntune_core::spec::problem::{Access, ArgData, DType, HostBuffer, Init, ProblemData};
use kerntune_core::worker::{Executor, KernelImage, WorkerKind, WorkerSlot};
use kerntune_core::{BackendError, Launch, TimeRequest, VerifyRequest};
use std::collections::HashMap;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

static KIND: WorkerKind = WorkerKind::new("TEST", "KERNTUNE_TEST_WORKER", "KERNTUNE_TEST_ISOLATION");

/// Kernels are named by what they do; the "binary" is the behaviour.
#[derive(Default)]
struct HostExec {
    bufs: Vec<HostBuffer>,
    init: Vec<HostBuffer>,
    kernels: HashMap<u64, Vec<u8>>,
    /// Launches made since the last notes were taken.
    launched: usize,
}

impl HostExec {
    fn run(&mut self, id: u64) -> Result<(), BackendError> {
        let what = self.kernels.get(&id).ok_or_else(|| BackendError::other("kernel not loaded"))?.clone();
        // A large image is a name followed by zeros.
        let what: Vec<u8> = what.split(|&b| b == 0).next().unwrap_or_default().to_vec();
        self.launched += 1;
        let x = self.bufs[0].clone();
        let y = &mut self.bufs[1];
        match what.as_slice() {
            b"double" => (0..x.len()).for_each(|i| y.set_f64(i, 2.0 * x.get_f64(i))),
            b"wrong" => (0..x.len()).for_each(|i| y.set_f64(i, 2.0 * x.get_f64(i) + 1.0)),
            b"skip" => (0..x.len() / 2).for_each(|i| y.set_f64(i, 2.0 * x.get_f64(i))),
            // A sticky fault: the process is gone, as after CUDA_ERROR_ILLEGAL_ADDRESS.
            b"crash" => std::process::abort(),
            // A kernel that never ends and cannot be stopped from inside.
            b"hang" => loop {
                std::thread::sleep(Duration::from_secs(1));
            },
            b"lost" => return Err(BackendError::DeviceLost("the device fell off the bus".into())),
            // Its pipe closed at once, its end a while later (a large process torn down, then
            // killed: as a worker of gigabytes that the out-of-memory killer ends).
            #[cfg(unix)]
            b"slow-end" => {
                for fd in 3..1024 {
                    unsafe { libc::close(fd) };
                }
                std::thread::sleep(Duration::from_millis(300));
                unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
                loop {
                    std::thread::sleep(Duration::from_secs(1));
                }
            }
            other => return Err(BackendError::LaunchFailed(format!("unknown kernel {}", String::from_utf8_lossy(other)))),
        }
        Ok(())
    }
}

impl Executor for HostExec {
    fn init(&mut self, _: usize, problem: &std::sync::Arc<ProblemData>) -> Result<(), BackendError> {
        self.init = problem.buffers().cloned().collect();
        self.bufs = self.init.clone();
        Ok(())
    }
    fn load(&mut self, id: u64, _: &str, binary: Vec<u8>) -> Result<(), BackendError> {
        if binary.as_slice() == b"unloadable" {
            return Err(BackendError::LaunchFailed("the module does not load (a test image)".into()));
        }
        self.kernels.insert(id, binary);
        Ok(())
    }
    fn unload(&mut self, id: u64) {
        self.kernels.remove(&id);
    }
    fn reset(&mut self, poison: bool) -> Result<(), BackendError> {
        for (b, i) in self.bufs.iter_mut().zip(&self.init) {
            b.data = if poison && i.access == Access::Write { i.poisoned() } else { i.data.clone() };
        }
        Ok(())
    }
    fn time(&mut self, id: u64, _: &Launch, req: &TimeRequest) -> Result<Vec<f64>, BackendError> {
        (0..req.launches).map(|_| self.run(id).map(|_| 1e-3)).collect()
    }
    fn verify(&mut self, id: u64, _: &Launch, req: &VerifyRequest<'_>) -> Result<Vec<f64>, BackendError> {
        self.reset(true)?;
        self.run(id)?;
        req.check(&self.bufs)?;
        self.reset(false)?;
        Ok(vec![1e-3])
    }
    fn read_outputs(&mut self, wanted: &[bool]) -> Result<Vec<HostBuffer>, BackendError> {
        Ok(self.bufs.iter().zip(wanted).map(|(b, &w)| if w { b.clone() } else { b.described() }).collect())
    }
    fn take_notes(&mut self) -> Vec<String> {
        match std::mem::take(&mut self.launched) {
            0 => Vec::new(),
            n => vec![format!("{n} launches"), "a second note, ünïcode".into()],
        }
    }
}

fn problem() -> Arc<ProblemData> {
    Arc::new(ProblemData {
        args: vec![
            ArgData::Buffer(HostBuffer::new("x", DType::F32, 1000, &Init::Sequence, Access::Read)),
            ArgData::Buffer(HostBuffer::new("y", DType::F32, 1000, &Init::Zeros, Access::Write)),
        ],
    })
}

/// The small problem's shape with 12 MiB buffers: above the size that goes through shared memory.
fn large_problem() -> Arc<ProblemData> {
    let n = 3 << 20;
    Arc::new(ProblemData {
        args: vec![
            ArgData::Buffer(HostBuffer::new("x", DType::F32, n, &Init::Sequence, Access::Read)),
            ArgData::Buffer(HostBuffer::new("y", DType::F32, n, &Init::Zeros, Access::Write)),
        ],
    })
}

fn reference(p: &ProblemData) -> Vec<HostBuffer> {
    let mut r: Vec<HostBuffer> = p.buffers().cloned().collect();
    for i in 0..r[0].len() {
        let v = 2.0 * r[0].get_f64(i);
        r[1].set_f64(i, v);
    }
    r
}

fn slot() -> WorkerSlot {
    let exe = std::env::current_exe().expect("this test program");
    WorkerSlot::new(&KIND, 0).with_command(move || Command::new(&exe))
}

fn image(id: u64, what: &'static str) -> KernelImage<'static> {
    KernelImage { id, name: "k", binary: what.as_bytes() }
}

const LAUNCH: Launch = Launch { grid: [1, 1, 1], block: [1, 1, 1], shared_mem_bytes: 0 };

fn timing(timeout: Duration) -> TimeRequest {
    TimeRequest { launches: 3, flush: kerntune_core::L2Flush::Off, timeout }
}

/// The worker runs kernels and verifies against a reference it was sent once; wrong and
/// partly written outputs are reported in the verifier's own words.
fn runs_and_verifies_in_the_worker() {
    let (s, p) = (slot(), problem());
    let r = reference(&p);
    let req = VerifyRequest {
        reference: &r,
        reference_id: 1,
        outputs: &[],
        tolerance: Tolerance::default(),
        per_output: &[],
        compare: &[],
        mismatches: &[],
        timeout: Duration::from_secs(5),
    };
    assert_eq!(s.with(&p, |w| w.time(image(1, "double"), &LAUNCH, &timing(Duration::from_secs(5)))).unwrap(), vec![1e-3; 3]);
    assert_eq!(s.with(&p, |w| w.verify(image(1, "double"), &LAUNCH, &req)).unwrap().len(), 1);
    let e = s.with(&p, |w| w.verify(image(2, "wrong"), &LAUNCH, &req)).unwrap_err();
    assert!(matches!(&e, BackendError::WrongOutput(m) if m.contains("`y`: 1000 of 1000 elements differ")), "{e}");
    let e = s.with(&p, |w| w.verify(image(3, "skip"), &LAUNCH, &req)).unwrap_err();
    assert!(matches!(&e, BackendError::WrongOutput(m) if m.contains("500 were never written")), "{e}");
    // How an output is compared travels with the request: against the reference reversed,
    // element by element the output differs (and says it agrees sorted); sorted, or by its sum,
    // it passes.
    let mut reversed = reference(&p);
    let values: Vec<f64> = (0..reversed[1].len()).map(|i| reversed[1].get_f64(i)).rev().collect();
    values.iter().enumerate().for_each(|(i, &v)| reversed[1].set_f64(i, v));
    let by = |how| [("y".to_string(), how)];
    let (sorted, sum) = (by(kerntune_core::spec::job::Compare::Sorted), by(kerntune_core::spec::job::Compare::Sum));
    let req = VerifyRequest { reference: &reversed, reference_id: 2, ..req };
    let e = s.with(&p, |w| w.verify(image(1, "double"), &LAUNCH, &req)).unwrap_err();
    assert!(matches!(&e, BackendError::WrongOutput(m) if m.ends_with(kerntune_core::measure::verify::SORTED_AGREE)), "{e}");
    s.with(&p, |w| w.verify(image(1, "double"), &LAUNCH, &VerifyRequest { compare: &sorted, ..req })).unwrap();
    s.with(&p, |w| w.verify(image(1, "double"), &LAUNCH, &VerifyRequest { compare: &sum, ..req })).unwrap();
    let e = s.with(&p, |w| w.verify(image(2, "wrong"), &LAUNCH, &VerifyRequest { compare: &sum, ..req })).unwrap_err();
    assert!(matches!(&e, BackendError::WrongOutput(m) if m.contains("the sum of its 1000 written elements")), "{e}");
    // Outputs come back as the worker holds them (restored after verification).
    s.with(&p, |w| w.time(image(1, "double"), &LAUNCH, &timing(Duration::from_secs(5)))).unwrap();
    let outs = s.with(&p, |w| w.read_outputs(&p, &[true, true])).unwrap();
    assert_eq!(outs[1].to_f32()[10], 20.0);
    // Only the buffers asked for travel; the others come back described, without data.
    let outs = s.with(&p, |w| w.read_outputs(&p, &[false, true])).unwrap();
    assert!(outs[0].data.is_empty() && outs[0].name == p.buffers().next().unwrap().name, "{:?}", outs[0].name);
    assert_eq!(outs[1].to_f32()[10], 20.0);
    assert_eq!(s.starts(), 1, "one worker served all of that");
    // The out-of-memory killer takes a worker before the tuner (and after a compiler).
    if cfg!(target_os = "linux") {
        let adj = std::fs::read_to_string(format!("/proc/{}/oom_score_adj", s.pid().expect("a worker"))).unwrap();
        assert_eq!(adj.trim(), "100");
    }
}

/// One slot serves a spec's problems one after another (a tune per problem): the worker started
/// for the first is sent the second, larger one, and runs and verifies on its buffers, not on
/// the first's.
fn another_problem_replaces_the_one_the_worker_holds() {
    let s = slot();
    let sized = |n: usize| {
        Arc::new(ProblemData {
            args: vec![
                ArgData::Buffer(HostBuffer::new("x", DType::F32, n, &Init::Sequence, Access::Read)),
                ArgData::Buffer(HostBuffer::new("y", DType::F32, n, &Init::Zeros, Access::Write)),
            ],
        })
    };
    let verify = |p: &Arc<ProblemData>, id: u64| {
        let r = reference(p);
        let req = VerifyRequest {
            reference: &r,
            reference_id: id,
            outputs: &[],
            tolerance: Tolerance::default(),
            per_output: &[],
            compare: &[],
            mismatches: &[],
            timeout: Duration::from_secs(5),
        };
        s.with(p, |w| w.verify(image(1, "double"), &LAUNCH, &req))
    };
    let (small, large) = (sized(1000), sized(3000));
    verify(&small, 1).unwrap();
    verify(&large, 2).unwrap_or_else(|e| panic!("the second problem verified on the first's buffers: {e}"));
    // (Verification restores the outputs; a timed launch leaves its own.)
    s.with(&large, |w| w.time(image(1, "double"), &LAUNCH, &timing(Duration::from_secs(5)))).unwrap();
    let y = s.with(&large, |w| w.read_outputs(&large, &[false, true])).unwrap();
    assert_eq!((y[1].len(), y[1].to_f32()[2999]), (3000, 5998.0));
    // And back: an equal problem is not the one the worker holds; the one it holds is.
    verify(&small, 3).unwrap();
    assert_eq!(s.with(&small, |w| w.read_outputs(&small, &[false, true])).unwrap()[1].len(), 1000);
    assert_eq!(s.starts(), 1, "one worker, sent each problem in turn");
}

/// Buffers of several mebibytes (the problem's, the reference's and the outputs read back)
/// arrive whole, through the shared-memory file on Linux and through the pipe when it is
/// switched off.
fn large_buffers_arrive_whole() {
    let (n, p) = (3 << 20, large_problem());
    let r = reference(&p);
    for shared in [true, false] {
        if !shared {
            std::env::set_var(kerntune_core::worker::shm::SWITCH, "0");
        }
        let s = slot();
        let req = VerifyRequest {
            reference: &r,
            reference_id: 7,
            outputs: &[],
            tolerance: Tolerance::default(),
            per_output: &[],
            compare: &[],
            mismatches: &[],
            timeout: Duration::from_secs(30),
        };
        s.with(&p, |w| w.verify(image(1, "double"), &LAUNCH, &req)).unwrap();
        let e = s.with(&p, |w| w.verify(image(2, "wrong"), &LAUNCH, &req)).unwrap_err();
        assert!(matches!(&e, BackendError::WrongOutput(m) if m.contains("elements differ")), "{e}");
        s.with(&p, |w| w.time(image(1, "double"), &LAUNCH, &timing(Duration::from_secs(30)))).unwrap();
        let y = s.with(&p, |w| w.read_outputs(&p, &[false, true])).unwrap()[1].to_f32();
        assert!((0..n).step_by(4099).all(|i| y[i] == r[1].to_f32()[i]), "outputs read back whole");
        if cfg!(target_os = "linux") {
            let fd3 = std::fs::read_link(format!("/proc/{}/fd/3", s.pid().expect("a worker"))).map(|l| l.display().to_string()).unwrap_or_default();
            assert_eq!(fd3.starts_with("/memfd:kerntune-worker"), shared, "{fd3}");
            let fd4 = std::fs::read_link(format!("/proc/{}/fd/4", s.pid().expect("a worker"))).map(|l| l.display().to_string()).unwrap_or_default();
            assert_eq!(fd4.starts_with("/memfd:kerntune-problem"), shared, "{fd4}");
        }
        std::env::remove_var(kerntune_core::worker::shm::SWITCH);
    }
}

/// What a tune over several devices starts: one worker per device for one problem. Its large
/// buffers are written once, into one shared-memory file every worker reads (Linux), which is
/// emptied once they all have; a worker restarted after a crash gets the problem again.
fn several_workers_share_one_copy_of_the_problem() {
    let p = large_problem();
    let r = reference(&p);
    let req = VerifyRequest {
        reference: &r,
        reference_id: 3,
        outputs: &[],
        tolerance: Tolerance::default(),
        per_output: &[],
        compare: &[],
        mismatches: &[],
        timeout: Duration::from_secs(30),
    };
    let exe = std::env::current_exe().expect("this test program");
    let slots: Vec<WorkerSlot> = (0..3)
        .map(|d| {
            let exe = exe.clone();
            WorkerSlot::new(&KIND, d).with_command(move || Command::new(&exe))
        })
        .collect();
    // All at once, as a tune's device threads start them.
    std::thread::scope(|sc| {
        for s in &slots {
            let (p, req) = (&p, &req);
            sc.spawn(move || s.with(p, |w| w.verify(image(1, "double"), &LAUNCH, req)).expect("each worker has the whole problem"));
        }
    });
    if cfg!(target_os = "linux") {
        let files: Vec<(String, std::fs::Metadata)> = slots
            .iter()
            .map(|s| {
                let fd4 = format!("/proc/{}/fd/4", s.pid().expect("a worker"));
                let name = std::fs::read_link(&fd4).map(|l| l.display().to_string()).unwrap_or_default();
                (name, std::fs::metadata(&fd4).expect("the problem's file"))
            })
            .collect();
        use std::os::unix::fs::MetadataExt;
        assert!(files.iter().all(|(name, _)| name.starts_with("/memfd:kerntune-problem")), "{:?}", files.iter().map(|f| &f.0).collect::<Vec<_>>());
        assert!(files.iter().all(|(_, m)| m.ino() == files[0].1.ino()), "one file for every worker");
        assert!(files.iter().all(|(_, m)| m.len() == 0), "emptied once every worker has read it");
    }
    // A worker that dies is started again from the same problem, whose file is filled again.
    let e = slots[1].with(&p, |w| w.time(image(2, "crash"), &LAUNCH, &timing(Duration::from_secs(5)))).unwrap_err();
    assert!(matches!(&e, BackendError::WorkerDied { .. }), "{e}");
    slots[1].recover();
    slots[1].with(&p, |w| w.verify(image(1, "double"), &LAUNCH, &req)).expect("the fresh worker has the whole problem");
    assert_eq!(slots[1].starts(), 2);
    let e = slots[2].with(&p, |w| w.verify(image(3, "wrong"), &LAUNCH, &req)).unwrap_err();
    assert!(matches!(&e, BackendError::WrongOutput(_)), "the workers still compare: {e}");
}

/// A kernel that kills its process is a lost device for that config only: the parent
/// survives, and the next call runs on a fresh worker with the problem and kernels re-sent.
fn a_crash_costs_one_worker_not_the_tune() {
    let (s, p) = (slot(), problem());
    s.with(&p, |w| w.time(image(1, "double"), &LAUNCH, &timing(Duration::from_secs(5)))).unwrap();
    let e = s.with(&p, |w| w.time(image(2, "crash"), &LAUNCH, &timing(Duration::from_secs(5)))).unwrap_err();
    assert!(matches!(&e, BackendError::WorkerDied { message: m, killed: false, .. } if m.contains("TEST worker")), "{e}");
    s.recover();
    let t = s.with(&p, |w| w.time(image(1, "double"), &LAUNCH, &timing(Duration::from_secs(5)))).unwrap();
    assert_eq!(t.len(), 3);
    assert_eq!(s.starts(), 2);
    // A device-lost report from the worker itself also retires it.
    let e = s.with(&p, |w| w.time(image(4, "lost"), &LAUNCH, &timing(Duration::from_secs(5)))).unwrap_err();
    assert!(matches!(&e, BackendError::DeviceLost(m) if m.contains("fell off the bus")), "{e}");
    s.with(&p, |w| w.time(image(1, "double"), &LAUNCH, &timing(Duration::from_secs(5)))).unwrap();
    assert_eq!(s.starts(), 3);
}

/// A worker whose pipe closes well before its process has ended is waited for, so that its
/// failure says how it ended (here SIGKILL, from no out-of-memory killer).
#[cfg(unix)]
fn a_worker_that_takes_a_while_to_end_is_told_how_it_ended() {
    let (s, p) = (slot(), problem());
    let e = s.with(&p, |w| w.time(image(5, "slow-end"), &LAUNCH, &timing(Duration::from_secs(5)))).unwrap_err();
    assert!(matches!(&e, BackendError::WorkerDied { message: m, killed: true, .. } if m.contains("it exited with signal: 9 (SIGKILL)")), "{e}");
    s.recover();
}

/// A kernel that never ends is killed with its process once the deadline passes.
fn a_hang_is_killed_at_the_deadline() {
    let (s, p) = (slot(), problem());
    let started = Instant::now();
    let req = TimeRequest { launches: 1, flush: kerntune_core::L2Flush::Off, timeout: Duration::from_millis(100) };
    let e = s.with(&p, |w| w.time(image(5, "hang"), &LAUNCH, &req)).unwrap_err();
    assert!(matches!(e, BackendError::TimedOut(d) if d == Duration::from_millis(100)), "{e}");
    assert!(started.elapsed() < Duration::from_secs(30), "{:?}", started.elapsed());
    s.with(&p, |w| w.time(image(1, "double"), &LAUNCH, &timing(Duration::from_secs(5)))).unwrap();
    assert_eq!(s.starts(), 2);
}

/// What the worker's side had to do (its executor's notes) comes back to the parent, each
/// note whole; a slot with no worker running starts none to ask, and a worker killed after a
/// hang took its notes with it.
fn notes_come_back_from_the_worker() {
    let (s, p) = (slot(), problem());
    assert!(s.if_running(|w| w.take_notes()).is_none(), "no worker yet, and none is started to ask");
    assert_eq!(s.starts(), 0);
    s.with(&p, |w| w.time(image(1, "double"), &LAUNCH, &timing(Duration::from_secs(5)))).unwrap();
    let notes = s.if_running(|w| w.take_notes()).expect("a worker runs").unwrap();
    assert_eq!(notes, vec!["3 launches".to_string(), "a second note, ünïcode".to_string()]);
    assert!(s.if_running(|w| w.take_notes()).unwrap().unwrap().is_empty(), "taken once");
    let req = TimeRequest { launches: 1, flush: kerntune_core::L2Flush::Off, timeout: Duration::from_millis(100) };
    s.with(&p, |w| w.time(image(1, "double"), &LAUNCH, &timing(Duration::from_secs(5)))).unwrap();
    assert!(s.with(&p, |w| w.time(image(5, "hang"), &LAUNCH, &req)).is_err());
    assert!(s.if_running(|w| w.take_notes()).is_none(), "the hung worker was killed");
    assert_eq!(s.starts(), 1);
}

/// Ordinary failures (a refused launch) keep the worker.
fn a_launch_failure_keeps_the_worker() {
    let (s, p) = (slot(), problem());
    let e = s.with(&p, |w| w.time(image(6, "nonsense"), &LAUNCH, &timing(Duration::from_secs(5)))).unwrap_err();
    assert!(matches!(&e, BackendError::LaunchFailed(m) if m.contains("unknown kernel nonsense")), "{e}");
    // Dropped kernels are unloaded in the worker; using the id again loads it again.
    kerntune_core::worker::kernel_dropped(1);
    s.with(&p, |w| w.time(image(1, "double"), &LAUNCH, &timing(Duration::from_secs(5)))).unwrap();
    kerntune_core::worker::kernel_dropped(1);
    s.with(&p, |w| w.time(image(1, "double"), &LAUNCH, &timing(Duration::from_secs(5)))).unwrap();
    assert_eq!(s.starts(), 1);
}

/// Loads and unloads go out with the request that follows them, unanswered until then: a load
/// that fails is that request's error (the worker stays), and the requests after it, and a
/// binary too large for the pipe (sent through shared memory, answered at once), still work.
fn loads_travel_with_the_next_request_and_their_errors_come_back() {
    let (s, p) = (slot(), problem());
    for _ in 0..2 {
        let e = s.with(&p, |w| w.time(image(7, "unloadable"), &LAUNCH, &timing(Duration::from_secs(5)))).unwrap_err();
        assert!(matches!(&e, BackendError::LaunchFailed(m) if m.contains("does not load")), "{e}");
    }
    let mut big = b"double".to_vec();
    big.resize(3 << 20, 0);
    let big: &'static [u8] = Box::leak(big.into_boxed_slice());
    for round in 0..3u64 {
        for id in [8, 9] {
            s.with(&p, |w| w.time(image(id, "double"), &LAUNCH, &timing(Duration::from_secs(5)))).unwrap();
            kerntune_core::worker::kernel_dropped(id);
        }
        let t = s.with(&p, |w| w.time(KernelImage { id: 10 + round, name: "k", binary: big }, &LAUNCH, &timing(Duration::from_secs(5)))).unwrap();
        assert_eq!(t.len(), 3);
        kerntune_core::worker::kernel_dropped(10 + round);
    }
    let reference = reference(&p);
    let req = VerifyRequest {
        reference: &reference,
        reference_id: 1,
        outputs: &[],
        tolerance: Tolerance::default(),
        per_output: &[],
        compare: &[],
        mismatches: &[],
        timeout: Duration::from_secs(5),
    };
    s.with(&p, |w| w.verify(image(11, "double"), &LAUNCH, &req)).unwrap();
    let e = s.with(&p, |w| w.verify(image(12, "unloadable"), &LAUNCH, &req)).unwrap_err();
    assert!(matches!(&e, BackendError::LaunchFailed(m) if m.contains("does not load")), "{e}");
    assert_eq!(s.starts(), 1);
}

fn main() {
    KIND.hook(HostExec::default);
    assert!(KIND.enabled(), "the hook enables isolation unless told otherwise");
    let tests: &[(&str, fn())] = &[
        ("another_problem_replaces_the_one_the_worker_holds", another_problem_replaces_the_one_the_worker_holds),
        ("notes_come_back_from_the_worker", notes_come_back_from_the_worker),
        ("loads_travel_with_the_next_request_and_their_errors_come_back", loads_travel_with_the_next_request_and_their_errors_come_back),
        ("runs_and_verifies_in_the_worker", runs_and_verifies_in_the_worker),
        ("large_buffers_arrive_whole", large_buffers_arrive_whole),
        ("several_workers_share_one_copy_of_the_problem", several_workers_share_one_copy_of_the_problem),
        ("a_crash_costs_one_worker_not_the_tune", a_crash_costs_one_worker_not_the_tune),
        ("a_hang_is_killed_at_the_deadline", a_hang_is_killed_at_the_deadline),
        #[cfg(unix)]
        ("a_worker_that_takes_a_while_to_end_is_told_how_it_ended", a_worker_that_takes_a_while_to_end_is_told_how_it_ended),
        ("a_launch_failure_keeps_the_worker", a_launch_failure_keeps_the_worker),
    ];
    kerntune_core::testing::run_tests(tests);
}
