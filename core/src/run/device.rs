//! One session per device: what a device owns in a tune (its workspace, the reference it
//! verifies against, its recovery after a fault) and the thread that runs its jobs. The search
//! loop sends each device a job at a time (run a reference candidate once, or verify and
//! measure a config) and receives the outcome, with the kernel back, on the channel the
//! compile threads also send to.

use crate::backend::{Backend, Compiled};
use crate::error::BackendError;
use crate::measure::stats::{became_distrusted, measure, races_on_fastest_verification, races_on_prior, PriorLaunches, Stats, VerifyExcess};
use crate::measure::timing::TimeRequest;
use crate::measure::verify::VerifyRequest;
use crate::plan::prepare::Launch;
use crate::run::diagnose::WrittenInput;
use crate::run::{Context, RefOutputs, TuneOptions};
use crate::spec::problem::HostBuffer;
use crate::spec::settings::L2Flush;
use crate::store::db::SpanKind;
use std::sync::mpsc::{Receiver, Sender};
use std::sync::Arc;
use std::time::Instant;

/// A compiled config as the loop passes it around: shared, so one kernel can be measured on
/// several devices (the cross-device calibration, the final round) without compiling again.
pub(crate) type Kernel<K> = Arc<Compiled<K>>;

/// Why a config is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Purpose {
    /// The search.
    Search,
    /// Timing a config already measured on another device, to learn this device's speed.
    Calibrate,
    /// The final round: the contenders again, on the judging device.
    Final,
    /// Measured again after the final round (`--recheck`).
    Recheck,
}

/// Work for a device.
pub(crate) enum Job<K> {
    /// Launch once on poisoned outputs and read every buffer back: a reference candidate.
    Reference { cand: usize, kernel: Kernel<K>, launch: Launch },
    /// Verify against `reference` (when given, or when `late` holds one by the time the device
    /// takes the job) and measure, racing against `best`.
    Measure {
        cand: usize,
        kernel: Kernel<K>,
        launch: Launch,
        reference: Option<Arc<RefOutputs>>,
        late: Option<LateRef>,
        best: Option<Stats>,
        purpose: Purpose,
        short: Short,
    },
    /// Run once under the backend's memory checker (a config that faulted, or the winner).
    Diagnose { cand: usize, kernel: Kernel<K>, launch: Launch },
    /// Verify a config measured before the reference was ready (no timing).
    Verify { cand: usize, kernel: Kernel<K>, launch: Launch, reference: Arc<RefOutputs> },
}

impl<K> Job<K> {
    /// A config measured in full for `purpose` (calibration, the final round), nothing to race
    /// against and no shortlist: verified against `reference` when given.
    pub fn in_full(cand: usize, kernel: Kernel<K>, launch: Launch, reference: Option<Arc<RefOutputs>>, purpose: Purpose) -> Job<K> {
        Job::Measure { cand, kernel, launch, reference, late: None, best: None, purpose, short: Short::No }
    }

    /// The candidate the job is about.
    pub fn cand(&self) -> usize {
        match self {
            Job::Reference { cand, .. } | Job::Measure { cand, .. } | Job::Diagnose { cand, .. } | Job::Verify { cand, .. } => *cand,
        }
    }
}

/// Whether a config waits on the shortlist after its verification launch (see the search
/// loop's docs): racing the configs an exhaustive order meets before the best against the best
/// so far would measure each of them in full.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Short {
    /// Measured in full now.
    No,
    /// The default config, measured in full now and raced on warm launches only, never on its
    /// verification launch alone: the winner's speed-up is said against it, and a first launch
    /// (CUDA's lazy module loading, a driver's compile) may take twice a warm one's time on a
    /// kernel of microseconds, where the other configs' first launches were within the racing
    /// allowance (the H100's confirm of the triad raced the default out at 1.8× its time).
    Baseline,
    /// Verified, then raced on its verification launch against the best (and against
    /// `fastest`, the fastest verification launch of a config shortlisted on any device, on
    /// this device's scale), or else shortlisted unmeasured.
    May { fastest: Option<f64> },
    /// Taken from the shortlist: verified already, its verification launch took `prior`
    /// seconds on this device (empty when it ran on another).
    Resumed { prior: Vec<f64> },
}

/// Where the CPU reference's outputs appear once made: a job sent while it was being computed
/// is verified after all when it is there by the time a device takes the job.
pub(crate) type LateRef = Arc<std::sync::OnceLock<Arc<RefOutputs>>>;

/// What a device did with a job.
pub(crate) enum Done {
    /// The outputs of a reference candidate, or why it did not run.
    Reference(Result<(Vec<HostBuffer>, Vec<WrittenInput>), BackendError>),
    /// A measurement, or why it failed; `verified` when the outputs were checked.
    Measured { result: Result<Stats, BackendError>, verified: bool, purpose: Purpose },
    /// Verified, and near enough the best on its verification launch (`prior`) to wait on the
    /// shortlist.
    Shortlisted { prior: Vec<f64> },
    /// What the memory checker said, where there is one.
    Diagnosed(Option<crate::backend::Memcheck>),
    /// A deferred verification: passed, or why not.
    Verified(Result<(), BackendError>),
}

impl Done {
    /// The error of a failed search job (a reference launch, a measurement for the search, a
    /// verification), if it failed.
    pub fn search_error(&self) -> Option<&BackendError> {
        match self {
            Done::Reference(Err(e)) | Done::Measured { result: Err(e), purpose: Purpose::Search, .. } | Done::Verified(Err(e)) => Some(e),
            _ => None,
        }
    }

    /// What the job was, for the tune's account of its time.
    pub fn span_kind(&self) -> SpanKind {
        match self {
            Done::Reference(_) => SpanKind::Reference,
            Done::Measured { purpose: Purpose::Search, .. } => SpanKind::Measure,
            Done::Measured { purpose: Purpose::Calibrate, .. } => SpanKind::Calibrate,
            Done::Measured { purpose: Purpose::Final, .. } => SpanKind::Final,
            Done::Measured { purpose: Purpose::Recheck, .. } => SpanKind::Recheck,
            Done::Shortlisted { .. } | Done::Verified(_) => SpanKind::Verify,
            Done::Diagnosed(_) => SpanKind::Memcheck,
        }
    }
}

/// A device's answer to a job, with the kernel handed back.
pub(crate) struct Answer<K> {
    pub device: usize,
    pub cand: usize,
    pub kernel: Kernel<K>,
    pub done: Done,
    /// When the job began, and the seconds it took.
    pub started: Instant,
    pub seconds: f64,
    /// When the job's error needed the device recovered: `Err` says why the device is
    /// unusable now (its thread has stopped taking jobs).
    pub recovery: Option<Result<(), String>>,
    /// This job's verification launch ran this many times its config's later launches, and
    /// from now on no verification launch on this device races a config alone
    /// ([`crate::measure::stats::trusted`]).
    pub distrusted: Option<f64>,
    /// What the job's kernel printed (device `printf`) where the backend kept it out of the
    /// tuner's output ([`Backend::printed`]).
    pub printed: Option<crate::backend::Printed>,
}

/// What the search loop's thread receives: compiled configs and devices' answers.
pub(crate) enum Msg<K> {
    /// A compile ended.
    Compiled(CompileDone<K>),
    /// A device finished a job.
    Device(Answer<K>),
    /// The CPU reference is computed (its outputs, or why not, wait in the loop's slot).
    HostReference,
}

/// Candidate `index` compiled (or failed to) in `seconds`; `behind` others were queued when it
/// started; `held`: the backend's compile cache held it before (a binary, or the compiler's
/// refusal: see [`crate::Backend::in_compile_cache`]), so a failure is one from the cache.
pub(crate) struct CompileDone<K> {
    pub index: usize,
    pub result: Result<Compiled<K>, BackendError>,
    pub started: Instant,
    pub seconds: f64,
    pub behind: usize,
    pub held: bool,
}

/// One device in one tune: the state its jobs share.
pub(crate) struct Session<'a, B: Backend> {
    index: usize,
    backend: &'a B,
    ctx: &'a Context,
    opts: &'a TuneOptions,
    ws: Option<B::Workspace>,
    /// How much slower this device's verification launches ran than the launches after them.
    excess: VerifyExcess,
    /// Set when a verification launch first ran so much slower than its config's later
    /// launches that none races a config alone any more (the ratio), until told.
    distrusted: Option<f64>,
    /// Why the workspace made before the first job could not be (see
    /// [`BackendError::device_unusable`]): the first job meets this error without trying again.
    unusable: Option<BackendError>,
}

/// What [`Session::measure`] made of a config.
enum Measured {
    Stats(Stats),
    /// Shortlisted after its verification launch, which took these seconds.
    Shortlisted(Vec<f64>),
}

impl<'a, B: Backend> Session<'a, B> {
    pub fn new(index: usize, backend: &'a B, ctx: &'a Context, opts: &'a TuneOptions) -> Session<'a, B> {
        Session { index, backend, ctx, opts, ws: None, excess: VerifyExcess::default(), distrusted: None, unusable: None }
    }

    fn workspace(&mut self) -> Result<&mut B::Workspace, BackendError> {
        if let Some(e) = self.unusable.take() {
            return Err(e);
        }
        if self.ws.is_none() {
            self.ws = Some(self.backend.workspace(&self.ctx.prep.data)?);
        }
        Ok(self.ws.as_mut().expect("just made"))
    }

    /// Runs a reference candidate on poisoned outputs and returns every buffer, with data for
    /// those verification compares (the inputs stay on the device), and the inputs declared
    /// read-only that the launch wrote. It runs twice from the same inputs: outputs that differ
    /// between the two are a wrong output ([`reproduces`]), no reference.
    fn reference(&mut self, kernel: &B::Kernel, launch: &Launch) -> Result<(Vec<HostBuffer>, Vec<WrittenInput>), BackendError> {
        let (backend, timeout, ctx) = (self.backend, self.opts.bench.timeout, self.ctx);
        let compared = crate::measure::verify::compared_buffers(&self.ctx.job.verify.outputs, self.ctx.prep.data.buffers());
        // The inputs too (once, up to a size), so the tuner can tell whether the kernel wrote
        // one declared read-only: it would be restored, but never compared
        // ([`crate::run::diagnose::written_inputs`]).
        // WGSL binds read-only buffers read-only: no shader can write one.
        let inputs = match self.ctx.job.source.language.as_str() {
            "wgsl" => vec![false; compared.len()],
            _ => crate::run::diagnose::inputs_to_check(self.ctx.prep.data.buffers()),
        };
        let wanted: Vec<bool> = compared.iter().zip(&inputs).map(|(c, i)| *c || *i).collect();
        let ws = self.workspace()?;
        backend.reset(ws, true)?;
        backend.time(ws, kernel, launch, &TimeRequest { launches: 1, flush: L2Flush::Off, timeout })?;
        let mut outs = backend.read_outputs(ws, &wanted)?;
        // Launched again from the same inputs, it must give the same outputs (as the outputs
        // are compared): a reference whose outputs vary from launch to launch (a race between
        // threads, atomics that sum in another order each time) would call right configs wrong
        // and win the tune itself, as the example reduction without its first barrier did.
        backend.reset(ws, true)?;
        backend.time(ws, kernel, launch, &TimeRequest { launches: 1, flush: L2Flush::Off, timeout })?;
        let again = backend.read_outputs(ws, &compared)?;
        backend.reset(ws, false)?;
        reproduces(&ctx.job.verify, timeout, &outs, &again)?;
        // Where the backend can tell without a tool (wgpu's guard words), whether the candidate
        // reads or writes past a buffer: every config is held to its outputs, and a read past
        // a buffer's end reads there in every config alike.
        match backend.bounds(ws, kernel, launch, timeout)? {
            Some(crate::backend::Memcheck::Reported { report, .. }) => return Err(BackendError::LaunchFailed(report)),
            Some(crate::backend::Memcheck::Inconclusive(why)) => tracing::debug!(why, "the reference candidate's bounds could not be told"),
            _ => {}
        }
        let written = crate::run::diagnose::written_inputs(self.ctx.prep.data.buffers(), &outs);
        // The inputs read back only for that: the reference keeps the outputs it compares.
        for ((b, input), compared) in outs.iter_mut().zip(inputs).zip(compared) {
            if input && !compared {
                *b = b.described();
            }
        }
        Ok((outs, written))
    }

    /// Verifies (against `reference`, when given) and measures one config, or shortlists it
    /// (see [`Short`]).
    fn measure(
        &mut self,
        kernel: &B::Kernel,
        launch: &Launch,
        reference: Option<&RefOutputs>,
        best: Option<&Stats>,
        short: Short,
    ) -> Result<Measured, BackendError> {
        // A config measured without a verification (no reference, or none yet).
        let unverified = reference.is_none() && !matches!(short, Short::Resumed { .. });
        let short_baseline = short == Short::Baseline;
        let (prior, may) = match (short, reference) {
            (Short::Resumed { prior }, _) => (prior, None),
            (short, Some(r)) => (self.verify(kernel, launch, r)?, Some(short).filter(|s| !matches!(s, Short::No | Short::Baseline))),
            (_, None) => (Vec::new(), None),
        };
        let (backend, bench, seen) = (self.backend, &self.opts.bench, self.excess.clone());
        if let (Some(Short::May { fastest }), Some(&v)) = (may, prior.last()) {
            let prior_launches = PriorLaunches::learned(&prior, &seen);
            if races_on_prior(bench, best, prior_launches) || fastest.is_some_and(|f| races_on_fastest_verification(bench, v, f, seen.largest())) {
                return Ok(Measured::Stats(Stats::from_samples(&prior, true).widened(bench.run_to_run)));
            }
            return Ok(Measured::Shortlisted(prior));
        }
        let ws = self.workspace()?;
        let req = |n: u32| TimeRequest { launches: n, flush: bench.l2_flush(), timeout: bench.timeout };
        // The verification launch (if any) warmed the kernel up, and its time can already decide
        // a clear race.
        let mut later = f64::INFINITY;
        // The baseline's verification launch warms it up but races nothing (see `Short::Baseline`).
        let learned = if short_baseline { PriorLaunches::of(&prior) } else { PriorLaunches::learned(&prior, &seen) };
        let (stats, _cost) = measure(bench, best, learned, |n| {
            let times = backend.time(ws, kernel, launch, &req(n))?;
            later = times.iter().copied().fold(later, f64::min);
            Ok(times)
        })?;
        // No verification looked at what its launches did: where the backend can tell (wgpu's
        // guard words), whether one wrote past a buffer, as a fault says it on CUDA.
        if unverified {
            if let Some(wrote) = backend.wrote_past(ws)? {
                return Err(BackendError::LaunchFailed(wrote));
            }
        }
        if let Some(&v) = prior.last() {
            let was = self.excess.largest();
            self.excess.observe(v, later);
            let now = self.excess.largest();
            if became_distrusted(was, now) {
                self.distrusted = now;
            }
        }
        Ok(Measured::Stats(stats))
    }

    /// Verifies one config against `reference`; the verification launch's time.
    fn verify(&mut self, kernel: &B::Kernel, launch: &Launch, reference: &RefOutputs) -> Result<Vec<f64>, BackendError> {
        let (backend, bench, verify) = (self.backend, &self.opts.bench, &self.ctx.job.verify);
        let ws = self.workspace()?;
        backend.verify(ws, kernel, launch, &VerifyRequest::of(verify, &reference.buffers, reference.id, bench.timeout))
    }

    /// After an error that left the device unusable: a fresh context and, on next use, a fresh
    /// workspace. `Err` when the backend cannot recover the device.
    fn recover(&mut self, e: &BackendError) -> Result<(), String> {
        // The report groups failures by cause; a line per config would repeat it.
        tracing::debug!(device = self.index, error = %e, "recovering the device");
        self.ws = None;
        self.backend.recover().map_err(|re| re.to_string())
    }

    /// Serves jobs until the channel closes or the device cannot be recovered.
    pub fn serve(mut self, jobs: Receiver<Job<B::Kernel>>, out: Sender<Msg<B::Kernel>>) {
        // The workspace (on CUDA and HIP a worker process, its context and the problem's
        // buffers) is made now, while the first configs compile and a CPU reference is
        // computed, not when the first job arrives. An error here is left for that job to meet
        // again and report; one that says no config can run here (a worker that did not start,
        // twice) is kept for it, not met again.
        let t = Instant::now();
        let made = self.workspace().map(|_| ());
        let ok = made.is_ok();
        self.unusable = made.err().filter(|e| e.device_unusable());
        tracing::debug!(device = self.index, seconds = t.elapsed().as_secs_f64(), ok, "device workspace made");
        let mut idle = Instant::now();
        for job in jobs {
            let t = Instant::now();
            tracing::trace!(device = self.index, waited = (t - idle).as_secs_f64(), "device: job received");
            let (cand, kernel, done) = match job {
                Job::Reference { cand, kernel, launch } => {
                    let r = self.reference(&kernel.kernel, &launch);
                    (cand, kernel, Done::Reference(r))
                }
                Job::Measure { cand, kernel, launch, reference, late, best, purpose, short } => {
                    let reference = reference.or_else(|| late.and_then(|l| l.get().cloned()));
                    let verified = reference.is_some() || matches!(short, Short::Resumed { .. });
                    let done = match self.measure(&kernel.kernel, &launch, reference.as_deref(), best.as_ref(), short) {
                        Ok(Measured::Shortlisted(prior)) => Done::Shortlisted { prior },
                        Ok(Measured::Stats(stats)) => Done::Measured { result: Ok(stats), verified, purpose },
                        Err(e) => Done::Measured { result: Err(e), verified, purpose },
                    };
                    (cand, kernel, done)
                }
                Job::Diagnose { cand, kernel, launch } => {
                    let report = self.backend.memcheck(&self.ctx.prep.data, &kernel.kernel, &launch);
                    (cand, kernel, Done::Diagnosed(report))
                }
                Job::Verify { cand, kernel, launch, reference } => {
                    let r = self.verify(&kernel.kernel, &launch, &reference).map(|_| ());
                    (cand, kernel, Done::Verified(r))
                }
            };
            let failed = match &done {
                Done::Reference(Err(e)) | Done::Measured { result: Err(e), .. } | Done::Verified(Err(e)) if e.needs_recovery() => Some(e),
                _ => None,
            };
            let recovery = failed.map(|e| self.recover(e));
            let dead = matches!(recovery, Some(Err(_)));
            let distrusted = self.distrusted.take();
            let printed = self.ws.as_mut().and_then(|ws| self.backend.printed(ws));
            let answer = Answer { device: self.index, cand, kernel, done, started: t, seconds: t.elapsed().as_secs_f64(), recovery, distrusted, printed };
            tracing::trace!(device = self.index, seconds = answer.seconds, "device: job done");
            if out.send(Msg::Device(answer)).is_err() || dead {
                return;
            }
            idle = Instant::now();
        }
    }
}

/// The devices' job channels and the threads serving them.
pub(crate) struct Pool<K> {
    jobs: Vec<Option<Sender<Job<K>>>>,
}

impl<K: Send + Sync + 'static> Pool<K> {
    /// Starts one thread per device, each serving a [`Session`].
    pub fn start<'s, 'e: 's, B: Backend<Kernel = K>>(
        s: &'s std::thread::Scope<'s, 'e>,
        devices: &'e [B],
        ctx: &'e Context,
        opts: &'e TuneOptions,
        out: &Sender<Msg<K>>,
    ) -> Result<Pool<K>, crate::run::Error> {
        let mut jobs = Vec::new();
        for (i, b) in devices.iter().enumerate() {
            let (tx, rx) = std::sync::mpsc::channel();
            let session = Session::new(i, b, ctx, opts);
            let out = out.clone();
            std::thread::Builder::new()
                .name(format!("kerntune-device-{i}"))
                .spawn_scoped(s, move || session.serve(rx, out))
                .map_err(|e| BackendError::other(format!("starting the thread of device {i}: {e}")))?;
            jobs.push(Some(tx));
        }
        Ok(Pool { jobs })
    }

    /// Sends a job to device `d`; `false` when that device no longer takes jobs.
    pub fn send(&self, d: usize, job: Job<K>) -> bool {
        self.jobs[d].as_ref().is_some_and(|tx| tx.send(job).is_ok())
    }
}

/// Whether a reference candidate's second launch (`again`, its compared outputs) gave the
/// outputs of its first (`first`), as verification compares them; `Err` (a wrong output)
/// says how they differ.
fn reproduces(verify: &crate::spec::job::Verification, timeout: std::time::Duration, first: &[HostBuffer], again: &[HostBuffer]) -> Result<(), BackendError> {
    VerifyRequest::of(verify, first, 0, timeout).check(again).map_err(|e| match e {
        BackendError::WrongOutput(how) => BackendError::WrongOutput(format!(
            "its outputs differ between two launches on the same inputs, so no output can be checked against it ({how}, the second launch against the first): a race between threads (a missing barrier, say), or atomics that sum in another order each time (compare such an output by its sum, or loosen its tolerance)"
        )),
        other => other,
    })
}
