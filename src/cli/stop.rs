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
///
/// SIGUSR1 and SIGUSR2 end the tune early instead ([`Stop::wrap`]): the warning a scheduler
/// sends before a job's time limit (Slurm's `--signal=B:USR1@120`) asks it to finish, and it
/// finishes as at the end of a time budget, with a winner from what it measured (their default
/// action killed it, and what was measured since the last write was lost).
pub(crate) struct Stop {
    pub(crate) flag: Arc<std::sync::atomic::AtomicBool>,
    pub(crate) signal: Arc<std::sync::atomic::AtomicUsize>,
    /// Set by SIGUSR1 or SIGUSR2: end the tune now with a winner ([`kerntune::TuneOptions::wrap_up`]).
    pub(crate) wrap: Arc<std::sync::atomic::AtomicBool>,
    /// Which of the two came first.
    wrap_signal: Arc<std::sync::atomic::AtomicUsize>,
}

/// How long after the first signal another one means "exit now" ([`Stop`]).
const INSIST: std::time::Duration = std::time::Duration::from_millis(500);

/// The signals that stop a tune, with their names; the exit status is 128 + the number.
#[cfg(unix)]
const STOP_SIGNALS: [(i32, &str); 3] =
    [(signal_hook::consts::SIGINT, "SIGINT"), (signal_hook::consts::SIGTERM, "SIGTERM"), (signal_hook::consts::SIGHUP, "SIGHUP")];
#[cfg(not(unix))]
const STOP_SIGNALS: [(i32, &str); 1] = [(2, "SIGINT")];

/// The signals that end a tune early with a winner ([`Stop::wrap`]), with their names.
#[cfg(unix)]
const WRAP_SIGNALS: [(i32, &str); 2] = [(signal_hook::consts::SIGUSR1, "SIGUSR1"), (signal_hook::consts::SIGUSR2, "SIGUSR2")];

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
        let stop = Stop { flag: Arc::default(), signal: Arc::default(), wrap: Arc::default(), wrap_signal: Arc::default() };
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
            for (sig, _) in WRAP_SIGNALS {
                // Ignored when the command started, they stay ignored (their sender meant so).
                if ignored(sig) {
                    continue;
                }
                let (wrap, which) = (stop.wrap.clone(), stop.wrap_signal.clone());
                let action = move || {
                    if which.compare_exchange(0, sig as usize, Ordering::SeqCst, Ordering::SeqCst).is_ok() {
                        wrap.store(true, Ordering::SeqCst);
                    }
                };
                // SAFETY: the action only does atomic operations.
                let _ = unsafe { signal_hook::low_level::register(sig, action) };
            }
        }
        stop
    }

    /// The signal that ended the tune early ([`Stop::wrap`]), if one did: its name and the exit
    /// status for problems it left unstarted (128 + the number).
    pub(crate) fn wrapped(&self) -> Option<(&'static str, i32)> {
        #[cfg(unix)]
        {
            let sig = self.wrap_signal.load(std::sync::atomic::Ordering::Relaxed);
            WRAP_SIGNALS.iter().find(|(s, _)| *s as usize == sig).map(|&(s, name)| (name, 128 + s))
        }
        #[cfg(not(unix))]
        None
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
