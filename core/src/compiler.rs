//! Compiler processes: compiles the tuner can stop, and whose crash costs one config.
//!
//! Why: an NVRTC or hipRTC call cannot be interrupted. On a thread, a compile the tuner gave up
//! on (past `[tune] compile_timeout`, in the compile tail, at a time limit) runs on until it
//! ends, holding a core — and, as an H200 showed, keeping other compiles waiting inside NVRTC
//! (0.0 s of CPU in 15 s beside a 10^5-statement kernel) — and a compiler that crashes on a
//! config's code ends the tuner with it. In a process of its own, a compile can be killed, and
//! its crash is that config's failure.
//!
//! The compiler process is the host program started again with the kind's variable set
//! (`KERNTUNE_CUDA_COMPILER=1`), as for the worker processes that run kernels
//! ([`crate::worker`]): `kerntune::hook()` serves compiles there. A compile thread takes an idle
//! compiler from its kind's pool (or starts one), sends it a [`CompileJob`], waits for the
//! answer while checking its [`CompileWatch`], and gives the compiler back; one it gave up on is
//! killed, so the cores and NVRTC are free at once. The backend's cache lookup and store stay in
//! the tuner's process. Messages are [`crate::worker`]'s: a JSON header and raw blobs,
//! length-prefixed, over the compiler's stdin and stdout.
//!
//! When: a tune with a compile timeout compiles in compiler processes, and so does every tune
//! with `KERNTUNE_COMPILE_ISOLATION=1` (`KERNTUNE_COMPILE_ISOLATION=0`: never); otherwise the
//! backend's default ([`CompilerKind::by_default`]: CUDA's NVRTC in processes, HIP's hipRTC on
//! threads). A program that did not call the hook compiles on threads. The tuner starts a tune's
//! compilers as soon as it knows it will compile ([`CompilerKind::prestart`]), and they load
//! their compiler ([`CompilerKind::with_warm`]) while the search starts.

pub mod memory;

pub use crate::backend::process_cpu_seconds;
use crate::backend::{abandonable, CompileWatch};
use crate::error::BackendError;
use crate::spec::source::Header;
use serde::{Deserialize, Serialize};
use std::io::{self, BufReader, BufWriter};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// `1`: every compile of a tune in a compiler process; `0`: none, not even with a compile
/// timeout; unset: with a compile timeout, and where the backend compiles in them by default
/// (CUDA; [`CompilerKind::by_default`]).
pub const ISOLATION_VAR: &str = "KERNTUNE_COMPILE_ISOLATION";

/// Whether a tune compiles in compiler processes (`Some(true)`), on threads (`Some(false)`) or
/// as the backend does by default (`None`; see [`CompilerKind::by_default`]): in processes with
/// a compile timeout, unless [`ISOLATION_VAR`] says otherwise (`1`, `on`, `true`, `yes`; `0`,
/// `off`, `false`, `no`; any other value is warned of, once, and ignored).
pub fn wanted(compile_timeout: bool) -> Option<bool> {
    switch(ISOLATION_VAR, "compile in compiler processes", "on threads").or(compile_timeout.then_some(true))
}

/// Whether the switch variable `var` is set on (`1`, `on`, `true`, `yes`: `on` says what that
/// does) or off (`0`, `off`, `false`, `no`: `off`); `None` when unset or empty. Any other value is
/// warned of, once per variable, and ignored (`None`).
pub(crate) fn switch(var: &str, on: &str, off: &str) -> Option<bool> {
    let v = std::env::var(var).ok()?;
    match v.trim().to_ascii_lowercase().as_str() {
        "1" | "on" | "true" | "yes" => Some(true),
        "0" | "off" | "false" | "no" => Some(false),
        "" => None,
        _ => {
            static WARNED: Mutex<Vec<String>> = Mutex::new(Vec::new());
            let mut warned = WARNED.lock().unwrap_or_else(|p| p.into_inner());
            if !warned.iter().any(|w| w == var) {
                warned.push(var.to_string());
                tracing::warn!("{var}={v:?} is neither 1 ({on}) nor 0 ({off}); ignored");
            }
            None
        }
    }
}

/// What the compiler processes have to say to the tune's report (that none could be started),
/// until [`take_notes`].
static NOTES: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// The compiler kinds this program has used, for [`shed_idle`].
static KINDS: Mutex<Vec<&'static CompilerKind>> = Mutex::new(Vec::new());

/// Closes the idle compiler processes beyond `keep` of each kind: while compile starts are held
/// for memory ([`memory`]), compilers no compile can use hold memory one could (on an H200, 14
/// MiB each of their own once NVRTC is loaded: 16 idle ones took 224 MiB of a 627 MiB job
/// where compiles ran one or two at a time). A compile that finds none idle starts one. How many
/// were closed.
pub(crate) fn shed_idle(keep: usize) -> usize {
    let kinds: Vec<&'static CompilerKind> = KINDS.lock().unwrap_or_else(|p| p.into_inner()).clone();
    kinds.into_iter().map(|k| k.shed(keep)).sum()
}

/// The lines for the report of the tune that is ending (kept in its notes, `--json` too).
pub fn take_notes() -> Vec<String> {
    std::mem::take(&mut *NOTES.lock().unwrap_or_else(|p| p.into_inner()))
}

/// One compile, as the backend's compiler takes it: the program's name, the name expression to
/// lower (the kernel, or a template instance), the source text, the user's headers (given to
/// the compiler in memory) and the compiler's arguments.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CompileJob {
    /// The program's name (the kernel's entry point).
    pub name: String,
    /// The name expression whose lowered (mangled) symbol is wanted.
    pub expr: Option<String>,
    /// The source text.
    pub code: String,
    /// The user's headers the source includes.
    pub headers: Vec<Header>,
    /// The compiler's arguments.
    pub args: Vec<String>,
}

/// What a compile produces: the binary and, for a name expression, the symbol it lowered to.
pub type CompileOutput = (Vec<u8>, Option<String>);

/// A backend's compiler, run in whichever process compiles.
pub type CompileFn = fn(&CompileJob) -> Result<CompileOutput, BackendError>;

/// The compiler's answer.
#[derive(Serialize, Deserialize, Debug)]
#[serde(tag = "status", rename_all = "snake_case")]
enum Rep {
    /// Compiled: the binary is the message's blob.
    Ok { symbol: Option<String> },
    /// The compiler refused the code ([`BackendError::CompileFailed`]).
    Refused { log: String },
    /// Anything else (the machine's verdict: out of memory, an internal error).
    Failed { message: String },
}

/// A compiler process the tuner holds.
struct Compiler {
    child: Child,
    stdin: BufWriter<ChildStdin>,
    replies: crate::worker::Replies<Rep>,
    /// What it wrote to its standard error since its current compile was sent (passed on to
    /// the tuner's as it comes).
    words: crate::worker::LastWords,
}

impl Compiler {
    fn pid(&self) -> u32 {
        self.child.id()
    }
}

/// One backend's compiler processes: its label for messages, the variable that makes this
/// program one, its compiler, and the pool of idle ones.
pub struct CompilerKind {
    /// `CUDA`, `HIP`: used in messages.
    pub label: &'static str,
    /// Set (to `1`) in a compiler process.
    pub env: &'static str,
    local: CompileFn,
    warm: Option<fn()>,
    default: bool,
    enabled: AtomicBool,
    /// Set once a compiler process could not be started: compiles run on threads from then on.
    unstartable: AtomicBool,
    idle: Mutex<Vec<Compiler>>,
    /// Compilers [`CompilerKind::prestart`] is starting that are not yet idle.
    pending: AtomicUsize,
    /// Compilers a compile thread holds.
    lent: AtomicUsize,
    /// How many idle compilers are kept: the most compile threads a prestart asked for (one
    /// given back beyond it is closed).
    keep: AtomicUsize,
    started: AtomicUsize,
    killed: AtomicUsize,
}

impl std::fmt::Debug for CompilerKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompilerKind").field("label", &self.label).field("enabled", &self.enabled()).finish_non_exhaustive()
    }
}

impl CompilerKind {
    /// A kind whose compiler is `local`; compiler processes are off until [`CompilerKind::hook`]
    /// runs.
    pub const fn new(label: &'static str, env: &'static str, local: CompileFn) -> CompilerKind {
        CompilerKind {
            label,
            env,
            local,
            warm: None,
            default: false,
            enabled: AtomicBool::new(false),
            unstartable: AtomicBool::new(false),
            idle: Mutex::new(Vec::new()),
            pending: AtomicUsize::new(0),
            lent: AtomicUsize::new(0),
            keep: AtomicUsize::new(usize::MAX),
            started: AtomicUsize::new(0),
            killed: AtomicUsize::new(0),
        }
    }

    /// The same kind, whose compiler processes run `warm` as they start, before their first
    /// compile: loading the compiler's libraries while the tuner prepares (see
    /// [`CompilerKind::prestart`]).
    pub const fn with_warm(mut self, warm: fn()) -> CompilerKind {
        self.warm = Some(warm);
        self
    }

    /// The same kind, compiling in processes when the tune does not say ([`wanted`] is `None`:
    /// no compile timeout, [`ISOLATION_VAR`] unset); without this, such tunes compile on
    /// threads.
    pub const fn by_default(mut self) -> CompilerKind {
        self.default = true;
        self
    }

    /// Whether a compile the tuner wants in a process (`Some(true)`), on a thread
    /// (`Some(false)`) or left to the backend (`None`) runs in a compiler process of this kind:
    /// only in a program that called [`CompilerKind::hook`], and not once a compiler process
    /// could not be started.
    pub fn used(&self, wanted: Option<bool>) -> bool {
        self.enabled() && !self.unstartable.load(Ordering::Relaxed) && wanted.unwrap_or(self.default)
    }

    /// Starts compiler processes for a tune of `threads` compile threads that uses them (see
    /// [`CompilerKind::used`]), in the background, so that they have loaded their compiler by
    /// the time the first compiles come: as many as there are threads, less those idle or
    /// compiling already. From then on at most `threads` idle compilers are kept.
    pub fn prestart(&'static self, threads: usize, wanted: Option<bool>) {
        if !self.used(wanted) || threads == 0 {
            return;
        }
        self.register();
        self.keep.store(threads, Ordering::Relaxed);
        let have = self.idle().len() + self.lent.load(Ordering::Relaxed) + self.pending.load(Ordering::Relaxed);
        let wanted = threads.saturating_sub(have);
        if wanted == 0 {
            return;
        }
        self.pending.fetch_add(wanted, Ordering::SeqCst);
        memory::starting(wanted, true);
        let starting = std::thread::Builder::new().name(format!("kerntune-{}-compiler-start", self.label.to_lowercase())).spawn(move || {
            for _ in 0..wanted {
                match self.spawn() {
                    Ok(c) => self.idle().push(c),
                    Err(e) => tracing::debug!("starting a {} compiler process ahead: {e}", self.label),
                }
                self.pending.fetch_sub(1, Ordering::SeqCst);
                memory::starting(1, false);
            }
        });
        if starting.is_err() {
            self.pending.fetch_sub(wanted, Ordering::SeqCst);
            memory::starting(wanted, false);
        }
    }

    fn idle(&self) -> std::sync::MutexGuard<'_, Vec<Compiler>> {
        self.idle.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Lists this kind among those [`shed_idle`] looks at.
    fn register(&'static self) {
        let mut kinds = KINDS.lock().unwrap_or_else(|p| p.into_inner());
        if !kinds.iter().any(|k| std::ptr::eq(*k, self)) {
            kinds.push(self);
        }
    }

    /// Closes this kind's idle compilers beyond the `keep` used last; how many it closed.
    fn shed(&self, keep: usize) -> usize {
        let extra: Vec<Compiler> = {
            let mut idle = self.idle();
            let n = idle.len().saturating_sub(keep);
            idle.drain(..n).collect()
        };
        let n = extra.len();
        for c in extra {
            self.close(c);
        }
        if n > 0 {
            tracing::debug!("{n} idle {} compiler process(es) closed for memory", self.label);
        }
        n
    }

    /// Closes an idle compiler: at the end of its input it exits.
    fn close(&self, mut c: Compiler) {
        memory::gone(c.pid());
        drop(c.stdin);
        let _ = c.child.wait();
    }

    /// Puts a compiler that answered back in the pool, or closes it when the pool holds as
    /// many as are kept.
    fn give_back(&self, c: Compiler) {
        self.lent.fetch_sub(1, Ordering::SeqCst);
        let mut idle = self.idle();
        if idle.len() < self.keep.load(Ordering::Relaxed) {
            idle.push(c);
            return;
        }
        drop(idle);
        self.close(c);
    }

    /// Call first thing in `main` (through the backend's `hook`). In a compiler process of this
    /// kind it serves compiles until its input closes, then exits; otherwise it lets this
    /// program compile in such processes.
    pub fn hook(&self) {
        if std::env::var_os(self.env).is_some() {
            std::process::exit(self.serve());
        }
        self.enabled.store(true, Ordering::SeqCst);
    }

    /// Whether [`CompilerKind::hook`] ran in this program.
    pub fn enabled(&self) -> bool {
        self.enabled.load(Ordering::SeqCst)
    }

    /// Compiler processes started so far in this program.
    pub fn started(&self) -> usize {
        self.started.load(Ordering::Relaxed)
    }

    /// Compiler processes killed so far in this program (compiles given up on, and compilers
    /// whose answer could not be read or that were found dead while idle).
    pub fn killed(&self) -> usize {
        self.killed.load(Ordering::Relaxed)
    }

    /// Runs `work` — the backend's cache lookup around a compile, which compiles through the
    /// function it is given — so that the tuner can stop waiting: where the compile runs in a
    /// compiler process ([`CompilerKind::used`] by what `watch` asks), `work` runs on this
    /// thread and compiles in a process, killed when the watch is abandoned; otherwise `work`
    /// runs through [`abandonable`] with the compiler in this process. Without a watch (an application
    /// compiling for its own launch), `work` compiles here, on this thread.
    pub fn compile<T, W>(&'static self, watch: Option<&CompileWatch>, work: W) -> Result<T, BackendError>
    where
        T: Send + 'static,
        W: FnOnce(&dyn Fn(&CompileJob) -> Result<CompileOutput, BackendError>) -> Result<T, BackendError> + Send + 'static,
    {
        match watch.filter(|w| self.used(w.wants_process())) {
            Some(w) => work(&|job| self.run(job, w)),
            None => abandonable(watch, move || work(&|job| (self.local)(job))),
        }
    }

    /// Compiles `job` in a compiler process; see [`CompilerKind::compile`]. Where none can be
    /// started (the system's process limit, this program's file no longer executable), the
    /// compile runs on a thread, as do this kind's later ones, said once.
    fn run(&'static self, job: &CompileJob, watch: &CompileWatch) -> Result<CompileOutput, BackendError> {
        self.register();
        watch.track();
        let t0 = Instant::now();
        let oom_before = crate::worker::oom_kills();
        let c = match self.send(job) {
            Ok(c) => c,
            Err(e) => {
                if !self.unstartable.swap(true, Ordering::SeqCst) {
                    let line = format!(
                        "{e}; the {} compiles of this run go on on the tuner's threads, where one given up on runs on until it ends and a crash of the compiler ends the tune ({ISOLATION_VAR}=0 compiles there from the start)",
                        self.label
                    );
                    tracing::warn!("{line}");
                    NOTES.lock().unwrap_or_else(|p| p.into_inner()).push(line);
                }
                let job = job.clone();
                return abandonable(Some(watch), move || (self.local)(&job));
            }
        };
        watch.set_process(Some(c.pid()));
        // The most the compile holds of its own, looked at as the answer is awaited: this
        // compile's, where the process's peak is the largest of every compile it ran.
        let mut peak = None;
        let answer = loop {
            if watch.abandoned() {
                watch.set_process(None);
                self.lent.fetch_sub(1, Ordering::SeqCst);
                self.kill(c);
                return Err(BackendError::Abandoned(t0.elapsed()));
            }
            match c.replies.recv_timeout(Duration::from_millis(20)) {
                Ok(Ok(m)) => break m,
                Ok(Err(_)) | Err(RecvTimeoutError::Disconnected) => {
                    watch.set_process(None);
                    self.lent.fetch_sub(1, Ordering::SeqCst);
                    let words = c.words.clone();
                    let (status, killed) = self.ended(c);
                    let oom = killed.then(|| crate::worker::oom_killed_since(oom_before)).flatten();
                    return Err(BackendError::CompilerDied { label: self.label.into(), status, killed, oom, words: words.said() });
                }
                Err(RecvTimeoutError::Timeout) => peak = peak.max(memory::resident(c.pid())),
            }
        };
        watch.set_process(None);
        memory::ended(c.pid(), peak);
        self.give_back(c);
        match answer {
            (Rep::Ok { symbol }, blobs) => Ok((blobs.into_iter().next().unwrap_or_default(), symbol)),
            (Rep::Refused { log }, _) => Err(BackendError::CompileFailed { log, options: job.args.clone() }),
            (Rep::Failed { message }, _) => Err(BackendError::other(message)),
        }
    }

    /// Sends `job` to an idle compiler (waiting for one being started ahead), or to a new one;
    /// one found dead (killed from outside while idle) is replaced. The compiler is lent to the
    /// caller.
    fn send(&self, job: &CompileJob) -> Result<Compiler, BackendError> {
        let idle = loop {
            let c = self.idle().pop();
            if c.is_some() || self.pending.load(Ordering::SeqCst) == 0 {
                break c;
            }
            std::thread::sleep(Duration::from_millis(1));
        };
        if let Some(mut c) = idle {
            c.words.forget();
            memory::started(c.pid());
            if crate::worker::write_msg(&mut c.stdin, job, &[], None).is_ok() {
                self.lent.fetch_add(1, Ordering::SeqCst);
                return Ok(c);
            }
            self.kill(c);
        }
        let mut c = self.spawn()?;
        c.words.forget();
        memory::started(c.pid());
        if let Err(e) = crate::worker::write_msg(&mut c.stdin, job, &[], None) {
            memory::gone(c.pid());
            return Err(BackendError::other(format!("sending a compile to a new {} compiler process: {e}", self.label)));
        }
        self.lent.fetch_add(1, Ordering::SeqCst);
        Ok(c)
    }

    /// Starts this program again as a compiler of this kind.
    fn spawn(&self) -> Result<Compiler, BackendError> {
        let label = self.label;
        let (mut cmd, exe) =
            crate::worker::this_program_again().map_err(|e| BackendError::other(format!("locating this program to start a {label} compiler: {e}")))?;
        let mut child = cmd
            .env(self.env, "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| BackendError::other(format!("starting a {label} compiler process ({}): {e}", exe.display())))?;
        let stdin = BufWriter::new(child.stdin.take().expect("piped"));
        let stdout = BufReader::new(child.stdout.take().expect("piped"));
        let rx = crate::worker::read_on_thread(format!("kerntune-{}-compiler-reader", label.to_lowercase()), stdout, None)?;
        let words = crate::worker::LastWords::follow(format!("kerntune-{}-compiler-stderr", label.to_lowercase()), child.stderr.take().expect("piped"));
        self.started.fetch_add(1, Ordering::Relaxed);
        memory::spawned(child.id());
        tracing::debug!(pid = child.id(), "{label} compiler process started");
        Ok(Compiler { child, stdin, replies: rx, words })
    }

    /// How a compiler whose answer could not be read ended: its exit status once it has exited
    /// (at the end of its output it is exiting), or, when it is still there after a second (it
    /// wrote something unreadable), killed; and whether SIGKILL ended it (sent from outside: the
    /// tuner kills only compiles it gave up on, which never come here).
    fn ended(&self, mut c: Compiler) -> (String, bool) {
        memory::gone(c.pid());
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(1) {
            match c.child.try_wait() {
                Ok(Some(status)) => return (describe_exit(status), crate::worker::killed_by_sigkill(status)),
                Ok(None) => std::thread::sleep(Duration::from_millis(10)),
                Err(e) => return (format!("its exit could not be read: {e}"), false),
            }
        }
        self.kill(c);
        ("its answer could not be read, and it was killed".into(), false)
    }

    /// Kills a compiler (a compile given up on) and reaps it.
    fn kill(&self, mut c: Compiler) {
        let pid = c.pid();
        memory::gone(pid);
        let _ = c.child.kill();
        let _ = c.child.wait();
        self.killed.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(pid, "{} compiler process killed", self.label);
    }

    /// The compiler's loop: compiles the jobs on stdin, answering on stdout, until stdin closes
    /// (exit status 0) or the tuner is gone.
    fn serve(&self) -> i32 {
        crate::worker::name_after_argv0();
        crate::worker::ignore_interrupts();
        // When the machine runs out of memory (a huge kernel's compile, or many at once), a
        // compiler goes first, before the workers and the tuner: its config fails, the tune goes on.
        crate::worker::oom_before_the_tuner(1000);
        // A tuner killed outside its control never closes this one's input while it compiles:
        // leave once this process has been handed to another parent.
        #[cfg(unix)]
        {
            let parent = std::os::unix::process::parent_id();
            let _ = std::thread::Builder::new().name("kerntune-compiler-parent".into()).spawn(move || loop {
                std::thread::sleep(Duration::from_millis(500));
                if std::os::unix::process::parent_id() != parent {
                    std::process::exit(0);
                }
            });
        }
        if let Some(warm) = self.warm {
            warm();
        }
        let mut input = BufReader::new(io::stdin().lock());
        let mut output = BufWriter::new(io::stdout().lock());
        loop {
            let Ok((job, _)) = crate::worker::read_msg::<CompileJob>(&mut input, None, None) else { return 0 };
            let result = (self.local)(&job);
            // Before answering: once the tuner reads the answer, the memory is free to the
            // next compile's check ([`memory`]).
            give_back_freed_memory();
            let sent = match result {
                Ok((binary, symbol)) => crate::worker::write_msg(&mut output, &Rep::Ok { symbol }, &[&binary], None),
                Err(BackendError::CompileFailed { log, .. }) => crate::worker::write_msg(&mut output, &Rep::Refused { log }, &[], None),
                Err(e) => crate::worker::write_msg(&mut output, &Rep::Failed { message: e.to_string() }, &[], None),
            };
            if sent.is_err() {
                return 0;
            }
        }
    }
}

/// Gives the memory freed by a compile back to the system. The C library's allocator keeps what
/// a program frees for its next allocations, so an idle compiler process would hold what its
/// last compile freed (55 of the 60 MiB a fake compile took) while other compiles, the kernel
/// worker and the rest of a memory-limited job (Slurm's `--mem`, a pod's limit) need it. (NVRTC
/// frees most of its memory to the system itself: on an H200 a 16-thread convolution tune's
/// peak was 1045 MiB twice without this and 901–1022 MiB in four runs with it.) glibc only:
/// elsewhere nothing is done.
fn give_back_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free heap pages to the system; it takes the allocator's
    // locks like any allocation and touches no memory in use.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// How a compiler process ended, in words (`killed by signal 11 (SIGSEGV)`).
fn describe_exit(status: std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            return match signal_hook::low_level::signal_name(sig) {
                Some(name) => format!("killed by signal {sig} ({name})"),
                None => format!("killed by signal {sig}"),
            };
        }
    }
    match status.code() {
        Some(code) => format!("exit status {code}"),
        None => status.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_cpu_time_is_read_from_proc() {
        let me = std::process::id();
        if std::path::Path::new("/proc/self/stat").exists() {
            let t0 = process_cpu_seconds(me).unwrap();
            let mut x = 0u64;
            // Until it reads 0.1 s more, or 30 s of wall time (a loaded machine gives this
            // thread less CPU than the wall time passing: 0.2 s of wall time once read 0.01 s).
            let start = Instant::now();
            while process_cpu_seconds(me).is_some_and(|t| t < t0 + 0.1) && start.elapsed() < Duration::from_secs(30) {
                for _ in 0..100_000 {
                    x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(1));
                }
            }
            assert!(process_cpu_seconds(me).unwrap() >= t0 + 0.1, "{t0}");
            #[cfg(unix)]
            assert_eq!(crate::backend::process_parent(me), Some(std::os::unix::process::parent_id()));
        }
        assert_eq!(process_cpu_seconds(u32::MAX), None);
        assert_eq!(crate::backend::process_parent(u32::MAX), None);
    }
}
