//! Time this process was awake to see, for timeouts.
//!
//! A process that is stopped (Ctrl-Z, `kill -STOP`, a scheduler suspending its job: Slurm's
//! `scontrol suspend`, gang scheduling, preemption by suspension; a paused container) or whose
//! machine sleeps comes back to find every wall-clock deadline passed. A kernel launched before
//! the stop, whose worker process was stopped with the tuner, failed as `timed out after 5.000
//! s` and was stored so (llvmpipe, a tune stopped for 60 s). Timeouts count [`Since::elapsed`]
//! instead: the wall time less the stops seen. A stop is seen as a gap between two looks at the
//! clock longer than [`GAP`]; a thread looks every [`TICK`], and so does every caller.

use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// How often the looking thread reads the clock.
pub const TICK: Duration = Duration::from_millis(50);
/// A look this much later than the one before means the process was stopped: a thread of a
/// running process is not kept off every core for two seconds, short of a machine too loaded
/// to time anything on; and a stop shorter than this costs no launch its timeout (1 s at the
/// least a user would set, 5 s by default).
pub const GAP: Duration = Duration::from_secs(2);

struct Looks {
    last: Instant,
    stopped: Duration,
}

static LOOKS: OnceLock<Mutex<Looks>> = OnceLock::new();

fn looks() -> MutexGuard<'static, Looks> {
    let looks = LOOKS.get_or_init(|| {
        // Without the thread (none could be started), the callers' own looks still see stops
        // that happen while they wait.
        let _ = std::thread::Builder::new().name("kerntune-awake".into()).spawn(|| loop {
            std::thread::sleep(TICK);
            stopped();
        });
        Mutex::new(Looks { last: Instant::now(), stopped: Duration::ZERO })
    });
    looks.lock().unwrap_or_else(|p| p.into_inner())
}

/// Looks at the clock `now`: a gap since the last look longer than [`GAP`] was a stop (all of
/// it but one tick, which the process may have been awake for).
fn look(l: &mut Looks, now: Instant) -> Duration {
    let gap = now.saturating_duration_since(l.last);
    if gap > GAP {
        l.stopped += gap - TICK;
    }
    l.last = l.last.max(now);
    l.stopped
}

/// How long this process has been seen stopped since its first look.
pub fn stopped() -> Duration {
    look(&mut looks(), Instant::now())
}

/// A point in time, to count the time awake since.
#[derive(Clone, Copy, Debug)]
pub struct Since {
    at: Instant,
    stopped: Duration,
}

impl Since {
    /// Now.
    pub fn now() -> Self {
        let stopped = stopped();
        Self { at: Instant::now(), stopped }
    }

    /// The time since, less the stops seen meanwhile.
    pub fn elapsed(&self) -> Duration {
        let stopped = stopped().saturating_sub(self.stopped);
        self.at.elapsed().saturating_sub(stopped)
    }

    /// How long of the time since the process was seen stopped.
    pub fn stopped(&self) -> Duration {
        stopped().saturating_sub(self.stopped)
    }
}

/// Waits for a message on `rx` until [`Since::elapsed`] from now reaches `timeout`, looking
/// every quarter of a second (a stop ends a wait's slice, not the wait).
pub fn recv_timeout<T>(rx: &std::sync::mpsc::Receiver<T>, timeout: Duration) -> Result<T, std::sync::mpsc::RecvTimeoutError> {
    let since = Since::now();
    loop {
        let left = timeout.saturating_sub(since.elapsed());
        if left.is_zero() {
            return Err(std::sync::mpsc::RecvTimeoutError::Timeout);
        }
        match rx.recv_timeout(left.min(Duration::from_millis(250))) {
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => continue,
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gap_between_looks_is_a_stop() {
        let t0 = Instant::now();
        let mut l = Looks { last: t0, stopped: Duration::ZERO };
        assert_eq!(look(&mut l, t0 + Duration::from_millis(300)), Duration::ZERO, "a late tick is no stop");
        assert_eq!(look(&mut l, t0 + Duration::from_millis(60_300)), Duration::from_millis(60_000 - 50));
        // An earlier reading taken before the lock (another thread's) does not move it back.
        assert_eq!(look(&mut l, t0 + Duration::from_millis(60_200)), Duration::from_millis(59_950));
        assert_eq!(l.last, t0 + Duration::from_millis(60_300));
    }
}
