//! The tuner: one pipeline every backend shares, as a sequence of stage functions.
//!
//! 1. **prepare** — expand a class-based job for the device, compile every expression
//!    ([`Prepared`]), derive the database entry id and the hashes a stored winner must match;
//! 2. **lookup** — a stored winner for the same kernel, target, toolchain, problem key, space
//!    and verification means no benchmark at all (`run/lookup.rs`);
//! 3. **candidates** — enumerate and prune before compiling, keeping each reason, and
//!    optionally order by the roofline model (`run/candidates.rs`);
//! 4. **search loop** — the strategy proposes within the budget; proposals compile in parallel
//!    while this thread verifies and benchmarks what is ready, prunes again from the
//!    compiler's report, and records every outcome (`run/search_loop.rs`,
//!    `run/evaluate.rs`);
//! 5. **select** — the noise-aware, deterministic rule of [`crate::measure::select`];
//! 6. **persist** — every measurement (periodically during the loop, so an interrupted tune
//!    resumes) and the winner (`run/persist.rs`).
//!
//! A failure of one config (compile, launch, timeout, wrong output, lost device) is recorded
//! with its reason and never ends the tune.

use crate::backend::{Backend, Compiled};
use crate::plan::expand::{expand, Expanded};
use crate::plan::prepare::{Launch, Prepared};
use crate::run::error::Error;
use crate::run::evaluate::{CompileInputs, Run};
use crate::run::report::{Event, Observer, TuneReport};
use crate::run::{candidates, lookup, persist, search_loop};
use crate::space::config::Config;
use crate::spec::job::TuneJob;
use crate::spec::problem::ArgData;
use crate::spec::settings::{BenchOptions, Budget, PruneOptions};
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
    /// Strategy name (see [`crate::search::by_name`]).
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
    /// Ignore stored measurements too: measure everything again.
    pub remeasure: bool,
    /// Progress callback.
    pub observer: Option<Observer>,
    /// Write measurements to the database at least this often.
    pub flush_every: Duration,
    /// Set from outside (a signal handler, another thread) to stop the tune: the config being
    /// measured is finished, nothing new is started, everything measured is written to the
    /// database, and the tune returns [`Error::Interrupted`].
    pub cancel: Option<Arc<AtomicBool>>,
}

impl TuneOptions {
    /// Whether [`TuneOptions::cancel`] was set.
    pub fn cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed))
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
        }
    }
}

/// The tuner over one backend.
pub struct Tuner<B: Backend> {
    backend: B,
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
    /// Configs the generator dropped, by reason (empty for a listed space).
    pub generated_pruned: BTreeMap<String, usize>,
}

impl<B: Backend> Tuner<B> {
    /// A tuner on `backend`.
    pub fn new(backend: B) -> Tuner<B> {
        Tuner { backend }
    }

    /// The backend.
    pub fn backend(&self) -> &B {
        &self.backend
    }

    /// The database entry id a job maps to on this backend.
    pub fn entry_id(&self, job: &TuneJob, prep: &Prepared) -> EntryId {
        EntryId {
            kernel: job.source.name.clone(),
            kernel_hash: job.source.identity_hash(),
            target: self.backend.target().fingerprint.clone(),
            toolchain: self.backend.toolchain(),
            problem: prep.key.text(),
        }
    }

    /// Compiles one config (the runtime handle uses this to load a stored winner).
    pub fn compile_config(&self, job: &TuneJob, prep: &Prepared, cfg: &Config) -> Result<(Compiled<B::Kernel>, Launch), Error> {
        let launch = prep.launch(cfg).map_err(Error::Eval)?;
        let build = CompileInputs::new(prep, &job.source, cfg, &launch);
        let c = self.backend.compile(&build.request(&job.source, cfg, &launch))?;
        Ok((c, launch))
    }

    /// Turns a class-based job into an explicit candidate list for this backend's device (see
    /// [`crate::plan::expand`]).
    pub fn expand_generated(&self, job: &TuneJob) -> Result<Expanded, Error> {
        Ok(expand(job, self.backend.target(), self.backend.limits())?)
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
        // One process tunes an entry at a time; others wait here and then find its winner.
        let _tuning = opts.db.as_ref().and_then(|d| d.lock_entry(&ctx.id));
        let stored = lookup::stored_entry(opts.db.as_ref(), &ctx.id)?;
        if !opts.force {
            if let Some(hit) = lookup::stored_winner(&self.backend, &ctx, stored.as_ref(), t0) {
                return Ok(hit);
            }
        }
        let plan = candidates::plan(&ctx, self.backend.limits(), opts)?;
        emit(
            opts.observer.as_ref(),
            Event::Planned {
                valid: plan.valid,
                pruned: plan.pruned(),
                candidates: plan.cands.len(),
                budget: opts.budget.max_evals,
                seconds: opts.budget.max_seconds,
            },
        );
        let mut run = Run::new(self, &ctx, opts, stored);
        let strategy = search_loop::run(&mut run, &plan, t0)?;
        let selected = persist::select(&mut run, &plan)?;
        persist::winner(&mut run, &selected)?;
        Ok(persist::report(&run, &plan, selected, strategy, t0))
    }

    /// Stage 1: expand, compile the job's expressions, derive the entry id and the hashes.
    pub(crate) fn prepare(&self, job: &TuneJob) -> Result<Context, Error> {
        let t0 = Instant::now();
        let Expanded { job, explicit, pruned } = self.expand_generated(job)?;
        // The sizes are checked against the device before anything is allocated.
        let mut prep = Prepared::without_data(&job, explicit)?;
        self.backend.limits().check_memory(&prep.buffer_sizes()).map_err(|m| {
            Error::Spec(crate::spec::error::SpecError {
                file: job.origin.clone(),
                field: "problems".into(),
                message: format!("{} on {}: {m}", prep.key.text(), self.backend.target().name),
            })
        })?;
        prep.make_data(&job)?;
        tracing::debug!(seconds = t0.elapsed().as_secs_f64(), "problem data built");
        let id = self.entry_id(&job, &prep);
        let space_hash = prep.space.fingerprint();
        let verify_hash = verify_hash(&job, &prep);
        Ok(Context { job, prep, id, space_hash, verify_hash, generated_pruned: pruned })
    }
}

/// Calls the observer, if any.
pub(crate) fn emit(observer: Option<&Observer>, e: Event<'_>) {
    if let Some(o) = observer {
        o(&e)
    }
}

/// Hash of what a winner's verification depended on.
fn verify_hash(job: &TuneJob, prep: &Prepared) -> String {
    // The data is a function of each argument's declaration (type, length, initializer and
    // seed, access) and the sizes, so those are hashed rather than gigabytes of contents.
    let mut text = format!("{:?}|{:?}|{}|{:?}", job.verify.outputs, job.verify.tolerance, job.verify.reference.describe(), job.args);
    for a in &prep.data.args {
        match a {
            ArgData::Buffer(b) => text.push_str(&format!("|{}:{:?}:{}", b.name, b.dtype, b.len())),
            ArgData::Scalar { name, value, .. } => text.push_str(&format!("|{name}={value}")),
        }
    }
    crate::hash::short_hash(text.as_bytes())
}
