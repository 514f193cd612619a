//! Stopping a command that measures (`tune`, `confirm`) on a signal, keeping what it measured.

use std::sync::Arc;

/// SIGINT, SIGTERM and SIGHUP: the first asks the tune to stop (everything measured is
/// written, the command exits 130, 143 or 129); another one [`INSIST`] or more after it exits at
/// once. Sooner, it is the same event signalled twice, not a person insisting: GNU `timeout`
/// signals the command and then its process group (the command again), and a scheduler may
/// signal each process of a job step; the second signal ended the tune at once, nothing
/// printed, the measurements since the last write lost. SIGHUP (a terminal or ssh session that
/// goes away) killed it outright. SIGHUP ignored when the command starts (`nohup`) is left
/// ignored.
pub(crate) struct Stop {
    pub(crate) flag: Arc<std::sync::atomic::AtomicBool>,
    pub(crate) signal: Arc<std::sync::atomic::AtomicUsize>,
}

/// How long after the first signal another one means "exit now" ([`Stop`]).
const INSIST: std::time::Duration = std::time::Duration::from_millis(500);

/// The signals that stop a tune, with their names; the exit status is 128 + the number.
#[cfg(unix)]
const STOP_SIGNALS: [(i32, &str); 3] =
    [(signal_hook::consts::SIGINT, "SIGINT"), (signal_hook::consts::SIGTERM, "SIGTERM"), (signal_hook::consts::SIGHUP, "SIGHUP")];
#[cfg(not(unix))]
const STOP_SIGNALS: [(i32, &str); 1] = [(2, "SIGINT")];

/// Whether `sig` is ignored (`SIG_IGN`) in this process.
#[cfg(unix)]
fn ignored(sig: i32) -> bool {
    // SAFETY: with a null new action, sigaction only reads the current one into `old`, which
    // is zeroed memory of the right type.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN
    }
}

impl Stop {
    pub(crate) fn install() -> Stop {
        let stop = Stop { flag: Arc::default(), signal: Arc::default() };
        #[cfg(unix)]
        {
            use std::sync::atomic::{AtomicU64, Ordering};
            let start = std::time::Instant::now();
            // When the first signal came (nanoseconds after `start`, plus one: 0 is none yet).
            let first = Arc::new(AtomicU64::new(0));
            for (sig, _) in STOP_SIGNALS {
                // SIGHUP ignored when the command started stays ignored: `nohup kerntune tune …`
                // is run to outlive its terminal (the tune stopped at the hang-up once SIGHUP
                // stopped tunes). SIGINT and SIGTERM are caught as ever, ignored or not (a
                // shell starts a script's background jobs with SIGINT ignored, and Ctrl-C
                // stopped such tunes, keeping what they measured).
                if sig == signal_hook::consts::SIGHUP && ignored(sig) {
                    continue;
                }
                let (flag, signal, first) = (stop.flag.clone(), stop.signal.clone(), first.clone());
                let action = move || {
                    let now = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX - 1) + 1;
                    match first.compare_exchange(0, now, Ordering::SeqCst, Ordering::SeqCst) {
                        Ok(_) => {
                            signal.store(sig as usize, Ordering::SeqCst);
                            flag.store(true, Ordering::SeqCst);
                        }
                        Err(at) if now.saturating_sub(at) >= INSIST.as_nanos() as u64 => signal_hook::low_level::exit(128 + sig),
                        Err(_) => {}
                    }
                };
                // SAFETY: the action only reads the monotonic clock (`clock_gettime`, which
                // POSIX lists as async-signal-safe), does atomic operations and calls `_exit`.
                let _ = unsafe { signal_hook::low_level::register(sig, action) };
            }
        }
        stop
    }

    pub(crate) fn requested(&self) -> bool {
        self.flag.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The signal's name and the exit status for it.
    pub(crate) fn which(&self) -> (&'static str, i32) {
        Stop::named(self.signal.load(std::sync::atomic::Ordering::Relaxed)).unwrap_or(("SIGINT", 130))
    }

    pub(crate) fn named(signal: usize) -> Option<(&'static str, i32)> {
        STOP_SIGNALS.iter().find(|(s, _)| *s as usize == signal).map(|&(s, name)| (name, 128 + s))
    }
}
