//! The worker process that runs kernels, so that a fault cannot take the tuner down.
//!
//! Why: on current drivers a sticky error (`CUDA_ERROR_ILLEGAL_ADDRESS` and friends) poisons
//! the whole process — even creating a new context fails afterwards — and a kernel that never
//! ends cannot be stopped from the host. A process can be killed; so the parent (the tuner)
//! compiles and decides, and a worker process owns the context that runs kernels. When the
//! worker reports a lost device, or does not answer within the launch timeout, the parent kills
//! it and starts a fresh one on next use (re-sending the problem data).
//!
//! The worker is the host program itself, started again with `KERNTUNE_CUDA_WORKER=1`: a host
//! program opts in by calling [`hook`] first thing in `main` (the `kerntune` CLI does). Messages
//! are a JSON header and raw byte blobs, length-prefixed, over the worker's stdin/stdout.
//! Verification happens in the worker against a reference it keeps, so outputs are not shipped
//! back for every config.

use crate::backend::CudaBackend;
use crate::bench::{CudaKernel, LocalWorkspace};
use kerntune_core::{Access, ArgData, BackendError, DType, HostBuffer, Launch, ProblemData, TimeRequest, Value, VerifyRequest};
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

const ENV: &str = "KERNTUNE_CUDA_WORKER";
static ENABLED: AtomicBool = AtomicBool::new(false);

/// Call first thing in `main`. In a worker process (started by the CUDA backend) this serves
/// requests and exits; otherwise it enables running kernels in workers for this program.
/// `KERNTUNE_CUDA_ISOLATION=0` keeps kernels in-process.
pub fn hook() {
    if std::env::var_os(ENV).is_some() {
        std::process::exit(serve());
    }
    ENABLED.store(std::env::var("KERNTUNE_CUDA_ISOLATION").map_or(true, |v| v != "0"), Ordering::SeqCst);
}

/// Whether [`hook`] enabled worker processes.
pub fn isolation_enabled() -> bool {
    ENABLED.load(Ordering::SeqCst)
}

#[derive(Serialize, Deserialize, Debug)]
struct ArgMeta {
    name: String,
    dtype: DType,
    access: Option<Access>,
    scalar: Option<Value>,
}

#[derive(Serialize, Deserialize, Debug)]
#[serde(tag = "op", rename_all = "snake_case")]
enum Req {
    Init { ordinal: usize, args: Vec<ArgMeta>, flush_bytes: usize },
    Load { id: u64, name: String },
    Unload { ids: Vec<u64> },
    Reset { poison: bool },
    Time { id: u64, launch: Launch, n: u32, flush: bool, timeout: f64 },
    Verify { id: u64, launch: Launch, timeout: f64, ref_id: u64, send_ref: bool, outputs: Vec<String>, atol: f64, rtol: f64 },
    Read,
}

#[derive(Serialize, Deserialize, Debug)]
#[serde(tag = "status", rename_all = "snake_case")]
enum Rep {
    Ok { times: Vec<f64> },
    Err { kind: String, message: String },
}

fn to_wire(e: &BackendError) -> Rep {
    let kind = match e {
        BackendError::CompileFailed { .. } => "compile_failed",
        BackendError::LaunchFailed(_) => "launch_failed",
        BackendError::OutOfResources(_) => "out_of_resources",
        BackendError::TimedOut(_) => "timed_out",
        BackendError::WrongOutput(_) => "wrong_output",
        BackendError::DeviceLost(_) => "device_lost",
        BackendError::Other(_) => "other",
    };
    let message = match e {
        BackendError::LaunchFailed(m) | BackendError::WrongOutput(m) | BackendError::DeviceLost(m) => m.clone(),
        other => other.to_string(),
    };
    Rep::Err { kind: kind.into(), message }
}

fn from_wire(kind: &str, message: String, timeout: Duration) -> BackendError {
    match kind {
        "compile_failed" => BackendError::CompileFailed { log: message, options: vec![] },
        "launch_failed" | "out_of_resources" => BackendError::LaunchFailed(message),
        "timed_out" => BackendError::TimedOut(timeout),
        "wrong_output" => BackendError::WrongOutput(message),
        "device_lost" => BackendError::DeviceLost(message),
        _ => BackendError::other(message),
    }
}

fn write_msg(w: &mut impl Write, header: &impl Serialize, blobs: &[&[u8]]) -> io::Result<()> {
    let h = serde_json::to_vec(header).map_err(io::Error::other)?;
    w.write_all(&(h.len() as u64).to_le_bytes())?;
    w.write_all(&h)?;
    w.write_all(&(blobs.len() as u64).to_le_bytes())?;
    for b in blobs {
        w.write_all(&(b.len() as u64).to_le_bytes())?;
        w.write_all(b)?;
    }
    w.flush()
}

fn read_u64(r: &mut impl Read) -> io::Result<u64> {
    let mut b = [0u8; 8];
    r.read_exact(&mut b)?;
    Ok(u64::from_le_bytes(b))
}

fn read_msg<T: DeserializeOwned>(r: &mut impl Read) -> io::Result<(T, Vec<Vec<u8>>)> {
    let n = read_u64(r)? as usize;
    let mut h = vec![0u8; n];
    r.read_exact(&mut h)?;
    let header = serde_json::from_slice(&h).map_err(io::Error::other)?;
    let count = read_u64(r)? as usize;
    let mut blobs = Vec::with_capacity(count);
    for _ in 0..count {
        let len = read_u64(r)? as usize;
        let mut b = vec![0u8; len];
        r.read_exact(&mut b)?;
        blobs.push(b);
    }
    Ok((header, blobs))
}

/// The parent's side of the data a workspace needs: the problem, to (re)start workers.
pub struct RemoteWorkspace {
    pub(crate) problem: ProblemData,
}

/// A running worker process.
pub(crate) struct Worker {
    child: Child,
    stdin: BufWriter<ChildStdin>,
    replies: Receiver<io::Result<(Rep, Vec<Vec<u8>>)>>,
    loaded: HashSet<u64>,
    ref_id: Option<u64>,
}

impl Worker {
    pub(crate) fn spawn(ordinal: usize, problem: &ProblemData, flush_bytes: usize) -> Result<Worker, BackendError> {
        let exe = std::env::current_exe().map_err(|e| BackendError::other(format!("locating this program to start a CUDA worker: {e}")))?;
        let mut child = Command::new(exe)
            .env(ENV, "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| BackendError::other(format!("starting a CUDA worker process: {e}")))?;
        let stdin = BufWriter::with_capacity(1 << 20, child.stdin.take().expect("piped"));
        let mut stdout = BufReader::with_capacity(1 << 20, child.stdout.take().expect("piped"));
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("kerntune-cuda-worker-reader".into())
            .spawn(move || loop {
                let m = read_msg::<Rep>(&mut stdout);
                let end = m.is_err();
                if tx.send(m).is_err() || end {
                    break;
                }
            })
            .map_err(|e| BackendError::other(format!("starting a reader thread: {e}")))?;
        let mut w = Worker { child, stdin, replies: rx, loaded: HashSet::new(), ref_id: None };
        let mut args = Vec::new();
        let mut blobs: Vec<&[u8]> = Vec::new();
        for a in &problem.args {
            match a {
                ArgData::Buffer(b) => {
                    args.push(ArgMeta { name: b.name.clone(), dtype: b.dtype, access: Some(b.access), scalar: None });
                    blobs.push(&b.data);
                }
                ArgData::Scalar { name, dtype, value } => args.push(ArgMeta { name: name.clone(), dtype: *dtype, access: None, scalar: Some(value.clone()) }),
            }
        }
        w.call(&Req::Init { ordinal, args, flush_bytes }, &blobs, Duration::from_secs(120))?;
        Ok(w)
    }

    fn call(&mut self, req: &Req, blobs: &[&[u8]], deadline: Duration) -> Result<(Vec<f64>, Vec<Vec<u8>>), BackendError> {
        if let Err(e) = write_msg(&mut self.stdin, req, blobs) {
            return Err(BackendError::DeviceLost(format!("the CUDA worker stopped ({e}){}", self.exit_note())));
        }
        match self.replies.recv_timeout(deadline) {
            Ok(Ok((Rep::Ok { times }, blobs))) => Ok((times, blobs)),
            Ok(Ok((Rep::Err { kind, message }, _))) => Err(from_wire(&kind, message, deadline)),
            Ok(Err(e)) => Err(BackendError::DeviceLost(format!("the CUDA worker died ({e}){}", self.exit_note()))),
            Err(RecvTimeoutError::Timeout) => {
                self.kill();
                Err(BackendError::TimedOut(deadline))
            }
            Err(RecvTimeoutError::Disconnected) => Err(BackendError::DeviceLost(format!("the CUDA worker died{}", self.exit_note()))),
        }
    }

    fn exit_note(&mut self) -> String {
        std::thread::sleep(Duration::from_millis(20));
        match self.child.try_wait() {
            Ok(Some(s)) => format!("; it exited with {s}"),
            _ => String::new(),
        }
    }

    pub(crate) fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    pub(crate) fn forget(&mut self, ids: &[u64]) {
        let ids: Vec<u64> = ids.iter().copied().filter(|id| self.loaded.remove(id)).collect();
        if !ids.is_empty() {
            let _ = self.call(&Req::Unload { ids }, &[], Duration::from_secs(30));
        }
    }

    fn ensure_loaded(&mut self, k: &CudaKernel) -> Result<(), BackendError> {
        if !self.loaded.contains(&k.id) {
            self.call(&Req::Load { id: k.id, name: k.name.to_string_lossy().into_owned() }, &[&k.cubin], Duration::from_secs(60))?;
            self.loaded.insert(k.id);
        }
        Ok(())
    }

    pub(crate) fn reset(&mut self, poison: bool) -> Result<(), BackendError> {
        self.call(&Req::Reset { poison }, &[], Duration::from_secs(60)).map(|_| ())
    }

    pub(crate) fn time(&mut self, k: &CudaKernel, launch: &Launch, req: &TimeRequest) -> Result<Vec<f64>, BackendError> {
        self.ensure_loaded(k)?;
        let r = Req::Time { id: k.id, launch: *launch, n: req.launches, flush: req.flush_l2, timeout: req.timeout.as_secs_f64() };
        // The worker enforces the per-launch timeout itself; the margin covers process overhead.
        let deadline = req.timeout * req.launches.max(1) + Duration::from_secs(5);
        match self.call(&r, &[], deadline) {
            Err(BackendError::TimedOut(_)) => Err(BackendError::TimedOut(req.timeout)),
            other => other.map(|(t, _)| t),
        }
    }

    pub(crate) fn verify(&mut self, k: &CudaKernel, launch: &Launch, req: &VerifyRequest<'_>) -> Result<Vec<f64>, BackendError> {
        self.ensure_loaded(k)?;
        let send_ref = self.ref_id != Some(req.reference_id);
        let blobs: Vec<&[u8]> = if send_ref { req.reference.iter().map(|b| b.data.as_slice()).collect() } else { vec![] };
        let r = Req::Verify {
            id: k.id,
            launch: *launch,
            timeout: req.timeout.as_secs_f64(),
            ref_id: req.reference_id,
            send_ref,
            outputs: req.outputs.to_vec(),
            atol: req.tolerance.atol,
            rtol: req.tolerance.rtol,
        };
        let out = self.call(&r, &blobs, req.timeout + Duration::from_secs(30));
        if send_ref && !matches!(out, Err(BackendError::DeviceLost(_)) | Err(BackendError::TimedOut(_))) {
            self.ref_id = Some(req.reference_id);
        }
        match out {
            Err(BackendError::TimedOut(_)) => Err(BackendError::TimedOut(req.timeout)),
            other => other.map(|(t, _)| t),
        }
    }

    pub(crate) fn read_outputs(&mut self, problem: &ProblemData) -> Result<Vec<HostBuffer>, BackendError> {
        let (_, blobs) = self.call(&Req::Read, &[], Duration::from_secs(120))?;
        Ok(problem.buffers().zip(blobs).map(|(b, data)| HostBuffer { data, ..b.clone() }).collect())
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.kill();
    }
}

struct WorkerState {
    backend: Option<CudaBackend>,
    ws: Option<LocalWorkspace>,
    problem: ProblemData,
    kernels: HashMap<u64, CudaKernel>,
    reference: Vec<HostBuffer>,
}

fn handle(st: &mut WorkerState, req: Req, blobs: Vec<Vec<u8>>) -> Result<(Vec<f64>, Vec<Vec<u8>>), BackendError> {
    match req {
        Req::Init { ordinal, args, flush_bytes } => {
            let b = CudaBackend::open_in_process(Some(ordinal)).map_err(|e| BackendError::DeviceLost(e.to_string()))?;
            let mut data = blobs.into_iter();
            let mut problem = ProblemData::default();
            for a in args {
                match (a.access, a.scalar) {
                    (Some(access), _) => {
                        problem.args.push(ArgData::Buffer(HostBuffer { name: a.name, dtype: a.dtype, data: data.next().unwrap_or_default(), access }))
                    }
                    (None, Some(value)) => problem.args.push(ArgData::Scalar { name: a.name, dtype: a.dtype, value }),
                    (None, None) => return Err(BackendError::other("malformed init message")),
                }
            }
            st.ws = Some(LocalWorkspace::new(b.shared().clone(), &problem, flush_bytes)?);
            st.problem = problem;
            st.backend = Some(b);
            Ok((vec![], vec![]))
        }
        Req::Load { id, name } => {
            let b = st.backend.as_ref().ok_or_else(|| BackendError::other("worker not initialised"))?;
            let cname = std::ffi::CString::new(name).map_err(|_| BackendError::other("bad kernel name"))?;
            let k = CudaKernel::new(b.shared().clone(), cname, blobs.into_iter().next().unwrap_or_default());
            let gen = b.shared().bind()?.gen;
            k.function(gen)?;
            st.kernels.insert(id, k);
            Ok((vec![], vec![]))
        }
        Req::Unload { ids } => {
            for id in ids {
                st.kernels.remove(&id);
            }
            Ok((vec![], vec![]))
        }
        Req::Reset { poison } => st.ws.as_mut().ok_or_else(|| BackendError::other("no workspace"))?.reset(poison).map(|_| (vec![], vec![])),
        Req::Time { id, launch, n, flush, timeout } => {
            let k = st.kernels.get(&id).ok_or_else(|| BackendError::other("kernel not loaded"))?;
            let ws = st.ws.as_mut().ok_or_else(|| BackendError::other("no workspace"))?;
            let t = ws.time(k, &launch, &TimeRequest { launches: n, flush_l2: flush, timeout: Duration::from_secs_f64(timeout) })?;
            Ok((t, vec![]))
        }
        Req::Verify { id, launch, timeout, ref_id, send_ref, outputs, atol, rtol } => {
            if send_ref {
                st.reference = st.problem.buffers().zip(blobs).map(|(b, data)| HostBuffer { data, ..b.clone() }).collect();
            }
            let k = st.kernels.get(&id).ok_or_else(|| BackendError::other("kernel not loaded"))?;
            let ws = st.ws.as_mut().ok_or_else(|| BackendError::other("no workspace"))?;
            let timeout = Duration::from_secs_f64(timeout);
            let req = VerifyRequest {
                reference: &st.reference,
                reference_id: ref_id,
                outputs: &outputs,
                tolerance: kerntune_core::verify::Tolerance { atol, rtol },
                timeout,
            };
            let t = ws.verify_on_device(k, &launch, &req)?;
            Ok((t, vec![]))
        }
        Req::Read => {
            let outs = st.ws.as_mut().ok_or_else(|| BackendError::other("no workspace"))?.read_outputs()?;
            Ok((vec![], outs.into_iter().map(|b| b.data).collect()))
        }
    }
}

/// The worker's loop: serve requests until stdin closes or the device is lost.
pub fn serve() -> i32 {
    let mut input = BufReader::with_capacity(1 << 20, io::stdin().lock());
    let mut output = BufWriter::with_capacity(1 << 20, io::stdout().lock());
    let mut st = WorkerState { backend: None, ws: None, problem: ProblemData::default(), kernels: HashMap::new(), reference: Vec::new() };
    loop {
        let (req, blobs) = match read_msg::<Req>(&mut input) {
            Ok(m) => m,
            Err(_) => return 0,
        };
        match handle(&mut st, req, blobs) {
            Ok((times, out)) => {
                let refs: Vec<&[u8]> = out.iter().map(|b| b.as_slice()).collect();
                if write_msg(&mut output, &Rep::Ok { times }, &refs).is_err() {
                    return 0;
                }
            }
            Err(e) => {
                let lost = matches!(e, BackendError::DeviceLost(_) | BackendError::TimedOut(_));
                let _ = write_msg(&mut output, &to_wire(&e), &[]);
                if lost {
                    // This process's CUDA state is unusable; the parent starts a fresh worker.
                    std::process::exit(3);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip_with_blobs() {
        let mut buf = Vec::new();
        let req = Req::Time { id: 7, launch: Launch { grid: [2, 1, 1], block: [64, 1, 1], shared_mem_bytes: 0 }, n: 5, flush: true, timeout: 1.5 };
        write_msg(&mut buf, &req, &[b"abc", b""]).unwrap();
        let (back, blobs): (Req, _) = read_msg(&mut buf.as_slice()).unwrap();
        assert!(matches!(back, Req::Time { id: 7, n: 5, flush: true, .. }));
        assert_eq!(blobs, vec![b"abc".to_vec(), vec![]]);
    }

    #[test]
    fn errors_keep_their_kind_across_the_pipe() {
        for e in [BackendError::DeviceLost("x".into()), BackendError::WrongOutput("y".into()), BackendError::LaunchFailed("z".into())] {
            let Rep::Err { kind, message } = to_wire(&e) else { panic!() };
            assert_eq!(from_wire(&kind, message, Duration::from_secs(1)).kind(), e.kind());
        }
    }
}
