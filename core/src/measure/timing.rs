//! The timing loop that backends launching through raw argument arrays share (CUDA, HIP).
//!
//! [`time_launches`] owns the order of operations and the deadline: per launch, empty L2 as
//! asked, record a start event, launch, record an end event; then wait for the last event and
//! read every launch's time. A backend supplies the stream operations ([`StreamOps`]).
//!
//! [`Rotation`] holds the copies of the arguments for [`L2Flush::Rotate`]: copies of every
//! buffer, each with its own parameter set, taken in turn so that a launch's data were evicted
//! from L2 by the launches in between, and nothing else runs between launches.

use crate::error::BackendError;
use crate::spec::settings::L2Flush;
use serde::{Deserialize, Serialize};
use std::ffi::c_void;
use std::time::Duration;

/// The copies and which parameter set comes next. `P` is a backend's device pointer.
#[derive(Debug)]
pub struct Rotation<P> {
    /// Per copy: its buffers and its kernel parameters.
    copies: Vec<(Vec<P>, Vec<Vec<u8>>)>,
    /// The set the last launch used (0: the workspace's own parameters, i: copy i - 1).
    at: usize,
}

impl<P> Default for Rotation<P> {
    fn default() -> Self {
        Rotation { copies: Vec::new(), at: 0 }
    }
}

impl<P: Copy> Rotation<P> {
    /// The bytes [`Rotation::ensure`] would allocate for buffers of `bytes` bytes in all (0 once
    /// the copies are made), so that a backend can check the device has room first.
    pub fn bytes_to_make(&self, bytes: usize, span: usize) -> usize {
        if !self.copies.is_empty() || span == 0 || bytes == 0 {
            return 0;
        }
        span.div_ceil(bytes).saturating_mul(bytes)
    }

    /// Makes the copies, once: enough that the sets other than the one launched span `span`
    /// bytes (2×L2). `params` are the workspace's own kernel parameters; `buffers` has, per
    /// buffer, its pristine data's pointer, its size and the index of its pointer in `params`;
    /// `copy(src, bytes)` allocates a buffer and copies `src` into it; `param(p)` is a
    /// pointer's bytes as a kernel parameter. After a failure, [`Rotation::allocations`] still
    /// lists what was allocated.
    pub fn ensure(
        &mut self,
        params: &[Vec<u8>],
        buffers: &[(P, usize, usize)],
        span: usize,
        mut copy: impl FnMut(P, usize) -> Result<P, BackendError>,
        param: impl Fn(P) -> Vec<u8>,
    ) -> Result<(), BackendError> {
        let bytes: usize = buffers.iter().map(|b| b.1).sum();
        if !self.copies.is_empty() || span == 0 || bytes == 0 {
            return Ok(());
        }
        for _ in 0..span.div_ceil(bytes) {
            self.copies.push((Vec::new(), params.to_vec()));
            let (ptrs, set) = self.copies.last_mut().expect("pushed");
            for &(pristine, size, at) in buffers {
                let p = copy(pristine, size)?;
                ptrs.push(p);
                set[at] = param(p);
            }
        }
        Ok(())
    }

    /// Every buffer the copies hold, for freeing.
    pub fn allocations(&self) -> impl Iterator<Item = P> + '_ {
        self.copies.iter().flat_map(|(ptrs, _)| ptrs.iter().copied())
    }

    /// Launch argument arrays, one per parameter set: `own` first, then each copy's. The
    /// pointers are valid while `own` and this rotation are neither moved nor changed.
    pub fn pointer_sets(&mut self, own: &mut [Vec<u8>]) -> Vec<Vec<*mut c_void>> {
        let raw = |params: &mut [Vec<u8>]| params.iter_mut().map(|p| p.as_mut_ptr() as *mut c_void).collect();
        std::iter::once(raw(own)).chain(self.copies.iter_mut().map(|(_, set)| raw(set))).collect()
    }

    /// The set the next rotating launch uses (an index into [`Rotation::pointer_sets`]).
    pub fn next_set(&mut self) -> usize {
        self.at = (self.at + 1) % (self.copies.len() + 1);
        self.at
    }
}

/// The stream operations [`time_launches`] needs. Events are numbered; event `2i` starts launch
/// `i` and event `2i + 1` ends it.
pub trait StreamOps {
    /// Queues the 2×L2 memset that empties L2 (nothing where the device has no flush buffer).
    fn memset_flush(&mut self) -> Result<(), BackendError>;
    /// Records event `event` on the stream.
    fn record(&mut self, event: usize) -> Result<(), BackendError>;
    /// Queues the kernel with the argument array `args`.
    fn launch(&mut self, args: &mut [*mut c_void]) -> Result<(), BackendError>;
    /// Whether event `event` has completed; an error when the work before it failed.
    fn query(&mut self, event: usize) -> Result<bool, BackendError>;
    /// Milliseconds between two completed events.
    fn elapsed_ms(&mut self, start: usize, end: usize) -> Result<f32, BackendError>;
    /// The error to report when the launches are still running at the deadline (the kernel
    /// cannot be stopped, so the backend also marks its device unusable here).
    fn hung(&mut self, timeout: Duration) -> BackendError;
}

/// Runs `req.launches` timed launches of one kernel and returns each one's time in seconds.
/// `params` are the workspace's own kernel parameters; with [`L2Flush::Rotate`], `rotation`
/// (already made) supplies the other parameter sets, taken in turn. Waits for the last launch
/// until `req.timeout` per launch has passed.
pub fn time_launches<P: Copy>(
    ops: &mut impl StreamOps,
    params: &mut [Vec<u8>],
    rotation: &mut Rotation<P>,
    req: &TimeRequest,
) -> Result<Vec<f64>, BackendError> {
    let n = req.launches as usize;
    if n == 0 {
        return Ok(Vec::new());
    }
    // The pointers stay valid: neither `params` nor `rotation` changes until the launches
    // are queued (the driver copies the arguments at launch time).
    let mut sets = rotation.pointer_sets(params);
    for i in 0..n {
        let set = if req.flush == L2Flush::Rotate { rotation.next_set() } else { 0 };
        if req.flush == L2Flush::Memset {
            ops.memset_flush()?;
        }
        ops.record(2 * i)?;
        ops.launch(&mut sets[set])?;
        ops.record(2 * i + 1)?;
    }
    // The time awake: a stop of the process (Ctrl-Z, a suspended job) is no hung kernel.
    let since = crate::measure::awake::Since::now();
    while !ops.query(2 * n - 1)? {
        if since.elapsed() > req.timeout * req.launches {
            return Err(ops.hung(req.timeout));
        }
        std::thread::sleep(Duration::from_micros(50));
    }
    (0..n).map(|i| ops.elapsed_ms(2 * i, 2 * i + 1).map(|ms| ms as f64 * 1e-3)).collect()
}

/// One timing request.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeRequest {
    /// Launches to time, each reported separately.
    pub launches: u32,
    /// How L2 is emptied before each launch (backends without a way to do so ignore it).
    pub flush: L2Flush,
    /// A launch that takes longer fails with [`BackendError::TimedOut`].
    pub timeout: Duration,
}

/// How launches were timed; reports always say which.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimingMethod {
    /// Device events around each launch (CUDA/HIP events).
    DeviceEvents,
    /// GPU timestamp queries (wgpu `TIMESTAMP_QUERY`).
    TimestampQueries,
    /// Host clock around submit and wait: includes submission overhead.
    HostClock,
    /// Synthetic times from a table (the fake backend).
    Simulated,
}

impl std::fmt::Display for TimingMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TimingMethod::DeviceEvents => "device events",
            TimingMethod::TimestampQueries => "GPU timestamp queries",
            TimingMethod::HostClock => "host clock around submit+wait",
            TimingMethod::Simulated => "simulated",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_span_the_flush_size_and_are_taken_in_turn() {
        // Arguments: buffer (100 B), scalar, buffer (60 B); 2×L2 = 400 B.
        let own = vec![1u64.to_le_bytes().to_vec(), vec![7, 0, 0, 0], 2u64.to_le_bytes().to_vec()];
        let buffers = [(1u64, 100usize, 0usize), (2, 60, 2)];
        let mut next_addr = 100u64;
        let mut copied = Vec::new();
        let mut r = Rotation::default();
        // What it will allocate: three copies of the 160 B set.
        assert_eq!(r.bytes_to_make(160, 400), 480);
        r.ensure(
            &own,
            &buffers,
            400,
            |src, bytes| {
                next_addr += 1;
                copied.push((src, bytes));
                Ok(next_addr)
            },
            |p| p.to_le_bytes().to_vec(),
        )
        .unwrap();
        // 160 B a set, 400 / 160 rounded up: 3 copies, so the 3 sets not being launched span 480 B.
        assert_eq!(r.allocations().count(), 6);
        assert_eq!(copied[..2], [(1, 100), (2, 60)], "each copy starts from the pristine data");
        let mut own_mut = own.clone();
        let sets = r.pointer_sets(&mut own_mut);
        assert_eq!(sets.len(), 4);
        // A copy's parameters point at its own buffers and keep the scalar.
        assert_eq!(r.copies[0].1, vec![101u64.to_le_bytes().to_vec(), vec![7, 0, 0, 0], 102u64.to_le_bytes().to_vec()]);
        let order: Vec<usize> = (0..8).map(|_| r.next_set()).collect();
        assert_eq!(order, [1, 2, 3, 0, 1, 2, 3, 0]);
        // Made once.
        assert_eq!(r.bytes_to_make(160, 400), 0);
        r.ensure(&own, &buffers, 400, |_, _| panic!("copied twice"), |p: u64| p.to_le_bytes().to_vec()).unwrap();
        // Nothing to rotate: no copies, always the own set.
        let mut none = Rotation::<u64>::default();
        none.ensure(&own, &[], 400, |_, _| panic!("no buffers"), |p| p.to_le_bytes().to_vec()).unwrap();
        assert_eq!((none.next_set(), none.next_set()), (0, 0));
        assert_eq!((none.bytes_to_make(0, 400), none.bytes_to_make(160, 0), none.bytes_to_make(500, 400)), (0, 0, 500));
    }

    /// A stream that logs what it was asked to do; its last event completes after `done_after`
    /// queries (never with `None`).
    struct Log {
        ops: Vec<String>,
        done_after: Option<u32>,
        queries: u32,
    }

    impl StreamOps for Log {
        fn memset_flush(&mut self) -> Result<(), BackendError> {
            self.ops.push("flush".into());
            Ok(())
        }
        fn record(&mut self, event: usize) -> Result<(), BackendError> {
            self.ops.push(format!("event {event}"));
            Ok(())
        }
        fn launch(&mut self, args: &mut [*mut c_void]) -> Result<(), BackendError> {
            // SAFETY: the first argument points at an 8-byte parameter of the test.
            let first = unsafe { *(args[0] as *const u64) };
            self.ops.push(format!("launch on {first}"));
            Ok(())
        }
        fn query(&mut self, _event: usize) -> Result<bool, BackendError> {
            self.queries += 1;
            Ok(self.done_after.is_some_and(|d| self.queries > d))
        }
        fn elapsed_ms(&mut self, start: usize, _end: usize) -> Result<f32, BackendError> {
            Ok(start as f32)
        }
        fn hung(&mut self, timeout: Duration) -> BackendError {
            BackendError::TimedOut(timeout)
        }
    }

    #[test]
    fn the_loop_flushes_rotates_waits_and_times_out() {
        let mut params = vec![1u64.to_le_bytes().to_vec()];
        let mut rotation = Rotation::default();
        rotation.ensure(&params.clone(), &[(1u64, 100usize, 0usize)], 100, |_, _| Ok(2u64), |p| p.to_le_bytes().to_vec()).unwrap();
        let req = |n, flush| TimeRequest { launches: n, flush, timeout: Duration::from_millis(20) };
        let mut log = Log { ops: vec![], done_after: Some(2), queries: 0 };
        let t = time_launches(&mut log, &mut params, &mut rotation, &req(2, L2Flush::Memset)).unwrap();
        assert_eq!(t, [0.0, 0.002], "each launch's own events, in seconds");
        assert_eq!(log.ops, ["flush", "event 0", "launch on 1", "event 1", "flush", "event 2", "launch on 1", "event 3"]);
        let mut log = Log { ops: vec![], done_after: Some(0), queries: 0 };
        time_launches(&mut log, &mut params, &mut rotation, &req(3, L2Flush::Rotate)).unwrap();
        let launches: Vec<&String> = log.ops.iter().filter(|o| o.starts_with("launch")).collect();
        assert_eq!(launches, ["launch on 2", "launch on 1", "launch on 2"], "rotation takes the copy, then the own set, in turn");
        assert!(!log.ops.iter().any(|o| o == "flush"), "rotating launches queue nothing between them");
        let mut never = Log { ops: vec![], done_after: None, queries: 0 };
        let e = time_launches(&mut never, &mut params, &mut rotation, &req(1, L2Flush::Off)).unwrap_err();
        assert!(matches!(e, BackendError::TimedOut(_)), "{e:?}");
        assert!(time_launches(&mut never, &mut params, &mut rotation, &req(0, L2Flush::Off)).unwrap().is_empty());
    }
}
