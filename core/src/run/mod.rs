//! # Stage 6: running a tune
//!
//! [`Tuner::tune`] is the pipeline, one stage function each:
//!
//! 1. **prepare** — expand a class-based job for the device, compile every expression
//!    ([`Prepared`]), derive the database entry id and the hashes a stored winner must match;
//! 2. **lookup** — a stored winner for the same kernel, target, toolchain, problem key, space
//!    and verification means no benchmark at all (`lookup.rs`); records made with other
//!    arguments, launch, defines, verification or L2 flushing, and timeouts under a shorter
//!    limit, are stale: never a hit, never reused, and dropped at the tune's first write
//!    (`stale.rs`);
//! 3. **candidates** — enumerate and prune before compiling, keeping each reason, optionally
//!    order by the roofline model, and keep this shard's part (`candidates.rs`);
//! 4. **search** — the strategy proposes within the budget; proposals compile on a pool of
//!    threads while one session per device (`device.rs`) verifies and benchmarks what is ready;
//!    the reference is made from the first candidate that runs (`search_loop.rs`);
//! 5. **finals** — the winner's contenders are verified if the sample skipped them, and
//!    re-measured on one device when several measured them (`finals.rs`);
//! 6. **select and persist** — the noise-aware, deterministic rule of [`crate::measure::select`],
//!    then every measurement and the winner to the database (`persist.rs`).
//!
//! What the tune knows is kept in one ledger (`ledger.rs`: stored and new measurements, the
//! writes pending, the best so far, the counters); what one device owns is kept in its session
//! (workspace, the reference it verifies against, recovery). A failure of one config (compile,
//! launch, timeout, wrong output, lost device) is recorded with its reason and never ends the
//! tune; failures are grouped by cause and diagnosed once per cause (`diagnose.rs`).
//!
//! **May import:** every stage below (`spec`, `space`, `plan`, `search`, `measure`, `backend`,
//! `store`, `worker`) and the vocabulary; never `sim` or `app`.

mod candidates;
mod compile_queue;
mod device;
pub mod diagnose;
pub mod error;
mod finals;
mod ledger;
pub(crate) mod lookup;
mod persist;
pub mod priors;
pub mod recheck;
pub mod report;
mod search_loop;
pub(crate) mod stale;
pub mod tail;
pub mod timeline;

pub use error::Error;
pub use priors::PriorSetting;
pub use recheck::{Recheck, RecheckRow};
pub use report::{ConfigResult, DeviceReport, Event, Observer, PriorReport, ResultOutcome, TuneReport, Unsaved};
pub use tail::{Abandoned, CompileTail};

use crate::backend::{Backend, CompileInputs, Compiled};
use crate::plan::expand::{expand, Expanded};
use crate::plan::prepare::{Launch, Prepared};
use crate::space::config::Config;
use crate::spec::job::{Reference, TuneJob};
use crate::spec::problem::{ArgData, HostBuffer, ProblemData};
use crate::spec::settings::{BenchOptions, Budget, PruneOptions, Shard};
use crate::store::db::{Database, EntryId};
use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Options of one tune.
#[derive(Clone)]
pub struct TuneOptions {
    /// Benchmarking.
    pub bench: BenchOptions,
    /// Pruning thresholds.
    pub prune: PruneOptions,
    /// Strategy name (see [`crate::search::by_name`]), or `auto`: the transfer search when
    /// there are priors, else exhaustive.
    pub strategy: String,
    /// Seed for random strategies.
    pub seed: u64,
    /// Budget.
    pub budget: Budget,
    /// Order candidates by the roofline model.
    pub model: bool,
    /// Keep only the model's best k (the default config is always kept).
    pub top_k: Option<usize>,
    /// Compile threads; `None` uses every core.
    pub compile_threads: Option<usize>,
    /// The database; `None` keeps nothing.
    pub db: Option<Database>,
    /// Ignore a stored winner and select again (stored measurements are still reused).
    pub force: bool,
    /// Ignore stored measurements too: measure everything again (a stored winner is ignored
    /// as well, as with `force`).
    pub remeasure: bool,
    /// Progress callback.
    pub observer: Option<Observer>,
    /// Write measurements to the database at least this often.
    pub flush_every: Duration,
    /// Set from outside (a signal handler, another thread) to stop the tune: the configs being
    /// measured are finished, nothing new is started, everything measured is written to the
    /// database, and the tune returns [`Error::Interrupted`].
    pub cancel: Option<Arc<AtomicBool>>,
    /// Set from outside to end the tune now as its time budget would end it: nothing new is
    /// started, the configs being measured are finished, and the winner is chosen from what
    /// was measured and stored (a later tune with the same command goes on from there).
    /// `kerntune tune` sets it on SIGUSR1 or SIGUSR2, the warning a scheduler sends before a
    /// job's time limit (Slurm's `--signal=B:USR1@120`). The report says so.
    pub wrap_up: Option<Arc<AtomicBool>>,
    /// This process's part of a tune split over several ([`Shard`]): exhaustive and random
    /// searches take every `count`-th candidate from `index`, and a share of an evaluation
    /// budget; adaptive strategies run with a seed of their own. The winner of a shard is that
    /// shard's; `kerntune confirm` picks among the merged shards.
    pub shard: Option<Shard>,
    /// Measure only these configs (by key), whatever the strategy: `kerntune confirm`
    /// re-measures the merged shards' best this way.
    pub only: Option<Vec<String>>,
    /// Where priors come from (other devices' measurements of the same kernel). With priors
    /// and the strategy `auto`, the tune runs the transfer search.
    pub prior: PriorSetting,
    /// After the final round, measure the winner's tie band and this many other configs
    /// again and report whether each second mean fell inside the first's interval (see
    /// [`recheck`]); 0 does not.
    pub recheck: usize,
    /// After the final round, run the winner once under the backend's memory checker (CUDA's
    /// `compute-sanitizer`) and report what it saw ([`crate::run::report::WinnerMemcheck`]):
    /// a winner whose outputs pass may still read or write past its buffers.
    pub memcheck: bool,
    /// At the end of the search, stop waiting for compiles that all ran longer than this many
    /// times the median compile, when nothing else is left to do, the budget counts
    /// evaluations and the strategy need not measure every config; their evaluations go to
    /// other configs (see [`tail`]). `None` waits for every compile (except at the time
    /// limit, where compiles still running are always abandoned).
    pub compile_tail: Option<f64>,
    /// Give up on a config whose compile is still running after this long (its own CPU time
    /// where the system tells it, else the wall clock): it fails as `compile timed out`. One
    /// that used more CPU time than this is stored, and a later tune with a longer timeout (or
    /// none) compiles it again; one given up on by the wall clock is not stored. A
    /// compiler process is killed; an in-process compiler (NVRTC, hipRTC, naga) cannot be
    /// stopped and runs on in the background until it ends or the process does. `None` (the
    /// default) waits for every compile.
    pub compile_timeout: Option<std::time::Duration>,
}

impl TuneOptions {
    /// The compile threads a tune runs: [`TuneOptions::compile_threads`], or one per core.
    pub(crate) fn threads(&self) -> usize {
        self.compile_threads.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)).max(1)
    }

    /// Whether [`TuneOptions::cancel`] was set.
    pub fn cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// Whether [`TuneOptions::wrap_up`] was set.
    pub fn wrapped_up(&self) -> bool {
        self.wrap_up.as_ref().is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// The seed the strategy runs with: a shard of an adaptive search gets its own.
    pub(crate) fn strategy_seed(&self) -> u64 {
        self.seed.wrapping_add(self.shard.map_or(0, |s| s.index as u64 * 7919))
    }

    /// What a tune of `spec` does unless told otherwise: its `[bench]`, `[prune]` and `[tune]`
    /// settings (strategy, budget, seed, the roofline model and `top_k`, the compile tail), and
    /// no database (the caller names one). A spec that names no strategy gets `auto`: the
    /// transfer search where other devices' measurements of the kernel exist, else the
    /// exhaustive one (the hybrid with a `%` budget, which needs a model).
    ///
    /// ```no_run
    /// # fn f() -> Result<(), kerntune_core::Error> {
    /// let spec = kerntune_core::plan::prepare::load("kernels/triad.toml".as_ref())?;
    /// let opts = kerntune_core::TuneOptions::for_spec(&spec)?;
    /// # Ok(()) }
    /// ```
    pub fn for_spec(spec: &crate::spec::file::Spec) -> Result<TuneOptions, crate::spec::error::SpecError> {
        // The spec's loader checked the budget; a spec made in code may still hold a bad one.
        let budget = match &spec.budget {
            Some(text) => Budget::parse(text).map_err(|message| crate::spec::error::SpecError {
                file: spec.path.display().to_string(),
                field: "tune.budget".into(),
                message,
            })?,
            None => Budget::default(),
        };
        Ok(TuneOptions {
            bench: spec.bench.clone().unwrap_or_default(),
            prune: spec.prune.clone().unwrap_or_default(),
            strategy: spec.strategy.clone().unwrap_or_else(|| "auto".into()),
            seed: spec.seed.unwrap_or(0),
            budget,
            model: spec.model.unwrap_or(false),
            top_k: spec.top_k,
            compile_tail: spec.compile_tail.unwrap_or(Some(tail::DEFAULT_FACTOR)),
            compile_timeout: spec.compile_timeout.flatten(),
            ..Default::default()
        })
    }
}

impl Default for TuneOptions {
    fn default() -> Self {
        TuneOptions {
            bench: BenchOptions::default(),
            prune: PruneOptions::default(),
            strategy: "exhaustive".into(),
            seed: 0,
            budget: Budget::default(),
            model: false,
            top_k: None,
            compile_threads: None,
            db: None,
            force: false,
            remeasure: false,
            observer: None,
            flush_every: Duration::from_millis(500),
            cancel: None,
            wrap_up: None,
            shard: None,
            only: None,
            prior: PriorSetting::Database,
            recheck: 0,
            memcheck: false,
            compile_tail: Some(tail::DEFAULT_FACTOR),
            compile_timeout: None,
        }
    }
}

/// The tuner over one or several devices of one backend. Configs compile once, on the first
/// device's backend, and are measured on whichever device is free; see [`Tuner::with_devices`].
pub struct Tuner<B: Backend> {
    devices: Vec<B>,
}

/// The expected outputs of one tune, with an id that tells backends when they change.
#[derive(Debug)]
pub(crate) struct RefOutputs {
    /// Identifies these outputs for the tune (backends cache them on the device by it).
    pub id: u64,
    /// Every buffer as it must look after one launch, in argument order.
    pub buffers: Vec<HostBuffer>,
}

impl RefOutputs {
    /// Every buffer after one launch (`buffers`, in the argument order of `problem`), keeping the
    /// contents of those a verification of `outputs` compares only: the others (a kernel's
    /// inputs) are never looked at, and a CPU reference or expected outputs given as files
    /// return them whole — on a triad of two 64 MiB buffers, 64 MiB of the tuner's 277.
    pub(crate) fn compared(buffers: Vec<HostBuffer>, outputs: &[String], problem: &ProblemData) -> RefOutputs {
        let compared = crate::measure::verify::compared_buffers(outputs, problem.buffers());
        let buffers = if compared.len() == buffers.len() {
            buffers.into_iter().zip(compared).map(|(b, kept)| if kept { b } else { HostBuffer { data: Vec::new(), ..b } }).collect()
        } else {
            // Not one per buffer (refused before a CPU reference gets here): kept whole.
            buffers
        };
        RefOutputs { id: reference_id(), buffers }
    }
}

/// A job made ready for one backend: the output of the prepare stage.
pub(crate) struct Context {
    /// The job, expanded when it was class-based.
    pub job: TuneJob,
    /// Its compiled form.
    pub prep: Prepared,
    /// The database entry it maps to.
    pub id: EntryId,
    /// Hash of the search space a stored winner must have been chosen from.
    pub space_hash: String,
    /// Hash of the verification a stored winner must have passed.
    pub verify_hash: String,
    /// What the measurements depend on that the job decides, part by part (`stale`).
    pub setup: BTreeMap<String, String>,
    /// Configs the generator dropped, by reason (empty for a listed space).
    pub generated_pruned: BTreeMap<String, usize>,
    /// Expected outputs given as data (`Reference::Expected`), loaded.
    pub expected: Option<Arc<RefOutputs>>,
}

impl<B: Backend> Tuner<B> {
    /// A tuner on one device.
    pub fn new(backend: B) -> Tuner<B> {
        Tuner { devices: vec![backend] }
    }

    /// A tuner over several devices of one model: one measuring session per device, one compile
    /// pool. Refused (one line saying why) when the devices are of different targets — their
    /// winners differ and belong to different database entries, so tune each model on its own
    /// — or when the backend cannot measure a kernel on a device other than the one that
    /// compiled it ([`Backend::shares_kernels`]).
    pub fn with_devices(devices: Vec<B>) -> Result<Tuner<B>, Error> {
        let Some(first) = devices.first() else {
            return Err(Error::Devices("no device was given".into()));
        };
        if let Some(other) = devices.iter().find(|d| d.target().fingerprint != first.target().fingerprint) {
            return Err(Error::Devices(format!(
                "the devices are of different models ({} is {}, {} is {}): a tune measures on devices of one model, since each model has a winner of its own; tune each model with its own --devices list",
                first.target().name,
                first.target().fingerprint,
                other.target().name,
                other.target().fingerprint
            )));
        }
        if devices.len() > 1 && !first.shares_kernels() {
            return Err(Error::Devices(format!(
                "the {} backend runs a kernel only on the device that compiled it, so one tune cannot spread over {} devices here; run one tune per device (--device N, or --shard K/N with a database each)",
                first.target().backend,
                devices.len()
            )));
        }
        Ok(Tuner { devices })
    }

    /// The first device's backend (the one that compiles).
    pub fn backend(&self) -> &B {
        &self.devices[0]
    }

    /// Every device's backend.
    pub fn devices(&self) -> &[B] {
        &self.devices
    }

    /// The database entry id a job maps to on this backend.
    pub fn entry_id(&self, job: &TuneJob, prep: &Prepared) -> EntryId {
        let b = self.backend();
        EntryId {
            kernel: job.source.name.clone(),
            kernel_hash: job.source.identity_hash(),
            target: b.target().fingerprint.clone(),
            toolchain: b.toolchain(),
            problem: prep.key.text(),
        }
    }

    /// The database entry a job maps to on this tuner's devices (a class-based job expanded
    /// first), without building its data.
    pub fn entry_of(&self, job: &TuneJob) -> Result<EntryId, Error> {
        let Expanded { job, explicit, .. } = self.expand_generated(job)?;
        let prep = Prepared::without_data(&job, explicit)?;
        Ok(self.entry_id(&job, &prep))
    }

    /// Runs a stored winner once under the memory checker (`--memcheck` on a database hit).
    fn memcheck_stored(&self, ctx: &Context, winner: &Config) -> crate::run::report::WinnerMemcheck {
        let backend = &self.backend().target().backend;
        match self.compile_config(&ctx.job, &ctx.prep, winner) {
            Ok((c, launch)) => {
                let seen = self.backend().memcheck(&ctx.prep.data, &c.kernel, &launch);
                crate::run::report::WinnerMemcheck::of(winner, backend, seen, &ctx.prep)
            }
            Err(e) => crate::run::report::WinnerMemcheck {
                config: winner.key(),
                verdict: "inconclusive".into(),
                line: format!("not run: the stored winner ({winner}) did not compile: {e}"),
            },
        }
    }

    /// Compiles one config (the runtime handle uses this to load a stored winner).
    pub fn compile_config(&self, job: &TuneJob, prep: &Prepared, cfg: &Config) -> Result<(Compiled<B::Kernel>, Launch), Error> {
        let launch = prep.launch(cfg).map_err(Error::Eval)?;
        let build = CompileInputs::new(prep, &job.source, cfg, &launch);
        let c = self.backend().compile(&build.request(&job.source, cfg, &launch))?;
        Ok((c, launch))
    }

    /// Turns a class-based job into an explicit candidate list for this backend's device (see
    /// [`crate::plan::expand`]).
    pub fn expand_generated(&self, job: &TuneJob) -> Result<Expanded, Error> {
        Ok(expand(job, self.backend().target(), self.backend().limits())?)
    }

    /// Runs the whole pipeline for one job.
    pub fn tune(&self, job: &TuneJob, opts: &TuneOptions) -> Result<TuneReport, Error> {
        let t0 = Instant::now();
        let settings = |(field, message): (&str, String), section: &str| {
            Error::Spec(crate::spec::error::SpecError { file: job.origin.clone(), field: format!("{section}.{field}"), message })
        };
        opts.bench.check().map_err(|e| settings(e, "bench"))?;
        opts.prune.check().map_err(|e| settings(e, "prune"))?;
        let ctx = self.prepare(job)?;
        // One process tunes an entry (or a shard's part of it) at a time; others wait here and
        // then find its winner.
        let _tuning = opts.db.as_ref().and_then(|d| d.lock_entry(&ctx.id, opts.shard));
        let stored = lookup::stored_entry(opts.db.as_ref(), &ctx.id)?;
        // A winner of a tune that was ended early answers launches, not a tune: this one goes on
        // from its measurements.
        let partial = stored.as_ref().and_then(|e| e.winner.as_ref()).is_some_and(|w| w.partial);
        // A tune that asks for more search than the stored winner came from goes on from it,
        // unless every candidate is measured already.
        let mut planned = None;
        if !opts.force && !opts.remeasure && opts.only.is_none() && !partial {
            if let Some(mut hit) = lookup::stored_winner(self.backend(), &ctx, stored.as_ref(), opts, t0) {
                let entry = stored.as_ref().expect("a hit has its entry");
                // Asked of the whole budget first (no share is larger), then of this tune's
                // share, once planned; and only where a candidate is left unmeasured.
                let budget = opts.budget.max_evals.or(opts.budget.fraction.map(|_| usize::MAX));
                if lookup::searches_on(entry, opts, budget).is_some() {
                    let mut plan = candidates::plan(&ctx, self.backend().limits(), opts)?;
                    let why = lookup::searches_on(entry, opts, plan.max_evals);
                    if let Some(why) = why.filter(|_| plan.cands.iter().any(|c| !entry.measurements.contains_key(&c.config.key()))) {
                        plan.notes.push(why);
                        planned = Some(plan);
                    }
                }
                if planned.is_none() {
                    if opts.memcheck {
                        hit.memcheck = Some(self.memcheck_stored(&ctx, &hit.winner));
                    }
                    return Ok(hit);
                }
            }
        }
        let mut plan = match planned {
            Some(plan) => plan,
            None => candidates::plan(&ctx, self.backend().limits(), opts)?,
        };
        // Compiles are coming: compiler processes (where the tune uses them) start now and load
        // their compiler while the search starts. Not when the first candidate's compile is in
        // the compile cache: a space compiled before (a tune run again, `--force`) compiles
        // little, and what it does compile starts its compiler then. No more than there are
        // candidates.
        // What an earlier tune of this kernel's compiles took holds the first compiles where
        // memory is short (see `compiler::memory`); what this one's take is kept when it ends.
        let _memory = crate::compiler::memory::Remembered::begin(&self.backend().target().backend, &ctx.id.kernel_hash);
        if search_loop::in_compile_cache(self.backend(), &ctx, &plan, 0) != Some(true) {
            let compilers = opts.threads().min(plan.cands.len());
            self.backend().prestart_compilers(compilers, crate::compiler::wanted(opts.compile_timeout.is_some()));
        }
        // A parameter that changes nothing: said at once (the tune goes on) and kept in the notes.
        for line in job.unused_params() {
            emit(opts.observer.as_ref(), Event::Warning { message: &line });
            plan.notes.push(line);
        }
        tracing::debug!(seconds = t0.elapsed().as_secs_f64(), candidates = plan.cands.len(), "planned");
        emit(
            opts.observer.as_ref(),
            Event::Planned { valid: plan.valid, pruned: plan.pruned(), candidates: plan.cands.len(), budget: plan.max_evals, seconds: opts.budget.max_seconds },
        );
        let mut ledger = ledger::Ledger::new(&ctx, opts, stored, &self.devices, t0);
        let awake = crate::measure::awake::Since::now();
        let (strategy, selected, recheck) = std::thread::scope(|s| -> Result<_, Error> {
            let mut coord = search_loop::Coordinator::start(s, &self.devices, &ctx, opts, &plan)?;
            let strategy = coord.search(&mut ledger, t0)?;
            tracing::debug!(seconds = t0.elapsed().as_secs_f64(), "search done");
            coord.diagnose(&mut ledger);
            let selected = coord.finals(&mut ledger)?;
            tracing::debug!(seconds = t0.elapsed().as_secs_f64(), "finals done");
            let recheck = (opts.recheck > 0).then(|| coord.recheck(&mut ledger, &selected, opts.recheck, opts.seed)).flatten();
            if opts.memcheck && !opts.cancelled() {
                let m = coord.memcheck_winner(&mut ledger, &selected);
                // Kept with the run (the search noted it), for this report, the HTML report and
                // `db show`.
                if let Some(n) = ledger.note.as_mut() {
                    n.memcheck = Some(m);
                }
            }
            coord.oom_note_after_search(&mut ledger);
            Ok((strategy, selected, recheck))
        })
        .inspect_err(|_| {
            ledger.flush_or_keep();
        })?;
        for (d, b) in self.devices.iter().enumerate() {
            let on = if self.devices.len() > 1 { format!("device {d}: ") } else { String::new() };
            ledger.notes.extend(b.take_notes().into_iter().map(|n| format!("{on}{n}")));
        }
        ledger.notes.extend(ledger.printed.note());
        ledger.notes.extend(crate::compiler::take_notes());
        ledger.notes.extend(crate::compiler::memory::take_note());
        let stopped = awake.stopped();
        if stopped >= crate::measure::awake::GAP {
            ledger.notes.push(format!(
                "the tune was stopped for {:.1} s (SIGSTOP: Ctrl-Z, or a scheduler suspending its job): no launch or worker was timed out for that time, but the wall time and the device's share of it include it",
                stopped.as_secs_f64()
            ));
        }
        // After the finals, whose verifications count too: the note the database keeps, the
        // warning and the withholding all read this one.
        let disagreement = ledger.note_findings();
        let withheld = persist::withheld(disagreement.as_ref(), &ledger.ctx.job.verify.reference);
        let (withheld, unsaved) = persist::winner(&mut ledger, &plan, &selected, withheld);
        tracing::debug!(seconds = t0.elapsed().as_secs_f64(), "winner stored");
        let mut report = persist::report(&ledger, &plan, selected, strategy, recheck, disagreement, t0);
        report.winner_withheld = withheld;
        report.unsaved = unsaved;
        // What this tune compiled (or saw refused) was added to the compile caches: keep them
        // within their bound.
        let refused = report.failures.get(&crate::error::FailureKind::CompileFailed.to_string()).copied().unwrap_or(0);
        if report.compiled > report.compile_cache_hits || refused > report.compile_cache_refusals {
            report.notes.extend(crate::store::cache::prune_after_tune());
        }
        Ok(report)
    }

    /// Stage 1: expand, compile the job's expressions, derive the entry id and the hashes.
    pub(crate) fn prepare(&self, job: &TuneJob) -> Result<Context, Error> {
        let t0 = Instant::now();
        let Expanded { mut job, explicit, pruned } = self.expand_generated(job)?;
        job.verify.compare_what_is_expected();
        // The sizes are checked against the device before anything is allocated.
        let mut prep = Prepared::without_data(&job, explicit)?;
        let spec_error = |field: &str, message: String| Error::Spec(crate::spec::error::SpecError { file: job.origin.clone(), field: field.into(), message });
        self.backend()
            .limits()
            .check_memory(&prep.buffer_sizes())
            .map_err(|m| spec_error("problems", format!("{} on {}: {m}", prep.key.text(), self.backend().target().name)))?;
        prep.make_data(&job)?;
        tracing::debug!(seconds = t0.elapsed().as_secs_f64(), "problem data built");
        let expected = match &job.verify.reference {
            Reference::Expected(files) => {
                Some(RefOutputs { id: reference_id(), buffers: expected_outputs(&prep, files, &job.verify).map_err(|(f, m)| spec_error(&f, m))? })
            }
            _ => None,
        };
        let id = self.entry_id(&job, &prep);
        let space_hash = prep.space.fingerprint();
        // What the verification and the setup are hashed from, made once (a file-read buffer and
        // the expected outputs are hashed by their bytes, every buffer as before).
        let texts = stale::Texts::of(&job, &prep.data, expected.as_ref());
        let expected = expected.map(|e| Arc::new(RefOutputs::compared(e.buffers, &job.verify.outputs, &prep.data)));
        let verify_hash = verify_hash(&prep, &texts);
        let setup = stale::job_setup(&job, &texts);
        Ok(Context { job, prep, id, space_hash, verify_hash, setup, generated_pruned: pruned, expected })
    }
}

/// A fresh reference id: unique within the process, and unlikely to meet another process's.
pub(crate) fn reference_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1);
    now ^ NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed).rotate_left(48)
}

/// The expected contents of every buffer when outputs are given as data: the named ones from
/// their files or fills (one compared by its sum also from a file of one element: the sum),
/// the others as they start. `Err` names the field and says what is wrong.
fn expected_outputs(
    prep: &Prepared,
    expected: &[(String, crate::spec::problem::Init)],
    verify: &crate::spec::job::Verification,
) -> Result<Vec<HostBuffer>, (String, String)> {
    let mut out: Vec<HostBuffer> = prep.data.buffers().cloned().collect();
    for (name, init) in expected {
        let field = format!("verify.expected.{name}");
        let slot = out.iter_mut().find(|b| &b.name == name).ok_or_else(|| {
            (
                field.clone(),
                format!(
                    "there is no buffer argument `{}`; buffers: {}",
                    crate::spec::error::quote(name),
                    prep.data.buffers().map(|b| b.name.as_str()).collect::<Vec<_>>().join(", ")
                ),
            )
        })?;
        let b = match HostBuffer::try_new(name, slot.dtype, slot.len(), init, slot.access) {
            Ok(b) => b,
            // An output compared by its sum may be given as that sum: one element.
            Err(m) if verify.compare_of(name) == Some(crate::spec::job::Compare::Sum) => {
                HostBuffer::try_new(name, slot.dtype, 1, init, slot.access).map_err(|_| {
                    (field, format!("{m}; `{name}` is compared by its sum (verify.compare), so a file of one element, the expected sum, is taken too"))
                })?
            }
            Err(m) => return Err((field, m)),
        };
        slot.data = b.data;
    }
    Ok(out)
}

/// Calls the observer, if any.
pub(crate) fn emit(observer: Option<&Observer>, e: Event<'_>) {
    if let Some(o) = observer {
        o(&e)
    }
}

/// Hash of what a winner's verification depended on.
fn verify_hash(prep: &Prepared, texts: &stale::Texts) -> String {
    // The data is a function of each argument's declaration (type, length, initializer and
    // seed, access) and the sizes, so those are hashed rather than gigabytes of contents;
    // files (arguments read from one, expected outputs) by content, not path: a spec given from
    // another working folder verifies the same way.
    let mut text = format!("{}|{}", texts.verification, texts.args);
    for a in &prep.data.args {
        match a {
            ArgData::Buffer(b) => text.push_str(&format!("|{}:{:?}:{}", b.name, b.dtype, b.len())),
            ArgData::Scalar { name, value, .. } => text.push_str(&format!("|{name}={value}")),
        }
    }
    text.push_str(&texts.expected);
    crate::hash::short_hash(text.as_bytes())
}

/// A small job on the fake backend that the stage tests share: `bx` in 32..2048 (2048 breaks
/// the 1024-thread limit) × `vec` in 1, 2, 4, default bx=256, vec=1, fastest at bx=128, vec=4.
#[cfg(test)]
pub(crate) mod fixture {
    use crate::fake::FakeBackend;
    use crate::limits::Limits;
    use crate::run::{TuneOptions, Tuner};
    use crate::space::config::Config;
    use crate::spec::job::{ArgKind, ArgSpec, Param, TuneJob};
    use crate::spec::problem::{Access, DType, Init, Memory};
    use crate::spec::source::KernelSource;
    use crate::spec::value::Value;

    pub fn job() -> TuneJob {
        let mut j = TuneJob::new(
            KernelSource::new("k", "fake", "// fake kernel"),
            vec![Param::new("bx", [32, 64, 128, 256, 512, 1024, 2048]), Param::new("vec", [1, 2, 4])],
        );
        j.sizes = vec![("n".into(), Value::Int(4096))];
        j.args = vec![
            ArgSpec {
                name: "x".into(),
                kind: ArgKind::Buffer { dtype: DType::F32, len: "n".into(), init: Init::Random { seed: 1 }, access: Access::Read, memory: Memory::Global },
            },
            ArgSpec {
                name: "y".into(),
                kind: ArgKind::Buffer { dtype: DType::F32, len: "n".into(), init: Init::Zeros, access: Access::Write, memory: Memory::Global },
            },
        ];
        j.grid = ["div_ceil(n, bx*vec)".into(), "1".into(), "1".into()];
        j.block = ["bx".into(), "1".into(), "1".into()];
        j.default = Some(vec![("bx".into(), Value::Int(256)), ("vec".into(), Value::Int(1))]);
        j
    }

    pub fn time(c: &Config) -> f64 {
        let bx = c.get_i64("bx").unwrap() as f64;
        let vec = c.get_i64("vec").unwrap() as f64;
        1e-3 * (1.0 + 0.1 * (bx / 128.0).log2().abs()) * (1.0 + 0.1 * (4.0 / vec).log2())
    }

    pub fn tuner() -> Tuner<FakeBackend> {
        Tuner::new(FakeBackend::new(Limits::preset("h100").unwrap().1, time))
    }

    pub fn opts() -> TuneOptions {
        TuneOptions { compile_threads: Some(2), ..Default::default() }
    }

    pub fn is(c: &Config, bx: i64, vec: i64) -> bool {
        c.get_i64("bx") == Some(bx) && c.get_i64("vec") == Some(vec)
    }

    /// Runs the stages up to the search (with `stored` as the database entry) and hands the
    /// ledger, the plan and the coordinator to `f`, inside the devices' scope.
    pub fn searched<B: crate::backend::Backend, T>(
        t: &Tuner<B>,
        job: &TuneJob,
        o: &TuneOptions,
        stored: Option<crate::store::db::Entry>,
        f: impl FnOnce(
            &mut crate::run::ledger::Ledger<'_>,
            &crate::run::candidates::Plan,
            &mut crate::run::search_loop::Coordinator<'_, B>,
            Result<String, crate::run::Error>,
        ) -> T,
    ) -> T {
        let ctx = t.prepare(job).unwrap();
        let p = crate::run::candidates::plan(&ctx, t.backend().limits(), o).unwrap();
        let t0 = std::time::Instant::now();
        let mut ledger = crate::run::ledger::Ledger::new(&ctx, o, stored, t.devices(), t0);
        std::thread::scope(|s| {
            let mut c = crate::run::search_loop::Coordinator::start(s, t.devices(), &ctx, o, &p).unwrap();
            let r = c.search(&mut ledger, t0);
            f(&mut ledger, &p, &mut c, r)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::RefOutputs;
    use crate::spec::problem::{Access, ArgData, DType, HostBuffer, Init, ProblemData};

    /// A reference keeps the contents of the buffers a verification compares (the named outputs,
    /// or every buffer a kernel may write), not the inputs a CPU reference returns with them.
    #[test]
    fn a_reference_keeps_the_buffers_a_verification_compares() {
        let buffer = |name: &str, access| HostBuffer::new(name, DType::F32, 1024, &Init::Random { seed: 1 }, access);
        let problem = ProblemData { args: vec![ArgData::Buffer(buffer("x", Access::Read)), ArgData::Buffer(buffer("y", Access::ReadWrite))] };
        let outs = || problem.buffers().cloned().collect::<Vec<_>>();
        let kept = |outputs: &[&str]| {
            let outputs: Vec<String> = outputs.iter().map(|s| s.to_string()).collect();
            RefOutputs::compared(outs(), &outputs, &problem).buffers.iter().map(|b| b.data.len()).collect::<Vec<_>>()
        };
        assert_eq!(kept(&[]), [0, 4096], "every buffer a kernel may write: y");
        assert_eq!(kept(&["x"]), [4096, 0], "the outputs named");
        // Not one per buffer: kept whole.
        let one = RefOutputs::compared(outs()[..1].to_vec(), &[], &problem);
        assert_eq!(one.buffers[0].data.len(), 4096);
    }
}
