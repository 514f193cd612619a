//! One tune's state while it runs (`Run`), and the per-config part of the search loop:
//! record a compile failure, prune after compiling from the compiler's report, verify against
//! the reference with poisoned outputs, benchmark, and record the outcome (persisting it in
//! batches, so an interrupted tune resumes).

use crate::backend::{Backend, CompileRequest, Compiled};
use crate::error::{BackendError, FailureKind};
use crate::measure::stats::{measure, Stats};
use crate::measure::timing::TimeRequest;
use crate::measure::verify::VerifyRequest;
use crate::plan::prepare::Launch;
use crate::plan::prune::prune_after;
use crate::run::candidates::Cand;
use crate::run::error::Error;
use crate::run::report::{ConfigResult, Event, ResultOutcome};
use crate::run::tuner::{Context, TuneOptions, Tuner};
use crate::search::strategy::Outcome;
use crate::space::config::Config;
use crate::spec::job::Reference;
use crate::spec::problem::HostBuffer;
use crate::spec::settings::L2Flush;
use crate::store::db::{self, Entry, Environment, Measurement, Status};
use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

/// What a config's compile request borrows: its defines, its source text, and the problem's
/// scalars and buffer uses. Backends' launch APIs use it to compile a resolved config exactly as
/// the tuner did.
pub struct CompileInputs<'a> {
    defines: Vec<(String, String)>,
    code: std::borrow::Cow<'a, str>,
    scalars: Vec<(String, crate::spec::value::Value)>,
    access: Vec<crate::spec::problem::Access>,
}

impl<'a> CompileInputs<'a> {
    /// The inputs of `config` launched as `launch`, for the job `prep` was prepared from, whose
    /// source is `source`.
    pub fn new(prep: &crate::plan::prepare::Prepared, source: &'a crate::spec::source::KernelSource, config: &Config, launch: &Launch) -> CompileInputs<'a> {
        CompileInputs { defines: prep.defines(config, launch), code: prep.code(config, &source.code), scalars: prep.scalars(), access: prep.buffer_access() }
    }

    /// The compile request (borrowing these inputs).
    pub fn request<'r>(&'r self, source: &'r crate::spec::source::KernelSource, config: &'r Config, launch: &'r Launch) -> CompileRequest<'r> {
        CompileRequest { source, code: &self.code, config, defines: &self.defines, launch, scalars: &self.scalars, buffers: &self.access }
    }
}

/// Where the expected outputs come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReferenceSource {
    /// The job's CPU reference.
    Host,
    /// The default config (this candidate), run once: it compiles first, with top priority.
    Default(usize),
}

/// State of one tune in progress.
pub(crate) struct Run<'a, B: Backend> {
    pub tuner: &'a Tuner<B>,
    pub ctx: &'a Context,
    pub opts: &'a TuneOptions,
    /// Measurements already in the database (empty with `remeasure`).
    pub known: HashMap<String, Measurement>,
    ws: Option<B::Workspace>,
    reference: Option<Vec<HostBuffer>>,
    reference_id: u64,
    /// Every result so far, by config key.
    pub results: HashMap<String, ConfigResult>,
    /// Measurements not yet written to the database.
    pub pending: Vec<(String, Measurement)>,
    last_flush: Instant,
    best: Option<Stats>,
    /// Compilations performed.
    pub compiled: usize,
    /// Compilations served by a persistent compile cache.
    pub cache_hits: usize,
    /// Seconds spent compiling, summed over threads.
    pub compile_seconds: f64,
    /// Compile threads the search loop ran.
    pub compile_threads: usize,
    /// Configs pruned after compiling, by category.
    pub pruned_after: BTreeMap<String, usize>,
}

impl<'a, B: Backend> Run<'a, B> {
    /// A run with nothing measured yet; `stored` is the database entry, if any.
    pub fn new(tuner: &'a Tuner<B>, ctx: &'a Context, opts: &'a TuneOptions, stored: Option<Entry>) -> Run<'a, B> {
        let known = match (stored, opts.remeasure) {
            (Some(e), false) => e.measurements.into_iter().collect(),
            _ => HashMap::new(),
        };
        Run {
            tuner,
            ctx,
            opts,
            known,
            ws: None,
            reference: None,
            reference_id: std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1),
            results: HashMap::new(),
            pending: Vec::new(),
            last_flush: Instant::now(),
            best: None,
            compiled: 0,
            cache_hits: 0,
            compile_seconds: 0.0,
            compile_threads: 1,
            pruned_after: BTreeMap::new(),
        }
    }

    pub fn backend(&self) -> &'a B {
        self.tuner.backend()
    }

    pub fn ensure_workspace(&mut self) -> Result<(), Error> {
        if self.ws.is_none() {
            self.ws = Some(self.backend().workspace(&self.ctx.prep.data)?);
        }
        Ok(())
    }

    /// What the expected outputs come from, when something is to be measured now (`None` when
    /// every candidate is known already, or the job verifies nothing).
    pub fn reference_source(&self, cands: &[Cand]) -> Result<Option<ReferenceSource>, Error> {
        if cands.iter().all(|c| self.known.contains_key(&c.config.key())) {
            return Ok(None);
        }
        match &self.ctx.job.verify.reference {
            Reference::None => Ok(None),
            Reference::Host(..) => Ok(Some(ReferenceSource::Host)),
            Reference::DefaultConfig => {
                let di = cands.iter().position(|c| c.is_default).ok_or_else(|| {
                    Error::Reference(format!(
                        "the default config ({}) was pruned or is invalid; name a CPU reference or change the default",
                        self.ctx.prep.default
                    ))
                })?;
                Ok(Some(ReferenceSource::Default(di)))
            }
        }
    }

    /// Computes the CPU reference's outputs (the search loop does this while the first configs
    /// compile).
    pub fn host_reference(&mut self) -> Result<(), Error> {
        if let Reference::Host(name, f) = &self.ctx.job.verify.reference {
            let outs = f(&self.ctx.prep.data).map_err(|e| Error::Reference(format!("cpu reference `{name}`: {e}")))?;
            self.reference = Some(outs);
        }
        Ok(())
    }

    /// Runs the compiled default config once and keeps its outputs as the expected ones.
    pub fn default_reference(&mut self, c: &Cand, compiled: &Result<Compiled<B::Kernel>, BackendError>) -> Result<(), Error> {
        let compiled = compiled.as_ref().map_err(|e| Error::Reference(format!("the default config ({}) failed to compile: {e}", c.config)))?;
        self.ensure_workspace()?;
        let backend = self.backend();
        let ws = self.ws.as_mut().expect("workspace");
        backend.reset(ws, true)?;
        backend
            .time(ws, &compiled.kernel, &c.launch, &TimeRequest { launches: 1, flush: L2Flush::Off, timeout: self.opts.bench.timeout })
            .map_err(|e| Error::Reference(format!("the default config ({}) failed to run: {e}", c.config)))?;
        self.reference = Some(backend.read_outputs(ws)?);
        Ok(())
    }

    pub fn environment(&self) -> Environment {
        Environment {
            kerntune: env!("CARGO_PKG_VERSION").into(),
            host: std::env::var("HOSTNAME").ok().or_else(|| std::fs::read_to_string("/etc/hostname").ok().map(|s| s.trim().to_string())).unwrap_or_default(),
            timing: self.backend().timing_method().to_string(),
            details: self.backend().environment().into_iter().collect(),
        }
    }

    /// What the strategy is told about a config.
    pub fn outcome_of(&self, key: &str) -> Outcome {
        match self.results.get(key).map(|r| &r.outcome) {
            Some(ResultOutcome::Measured { stats }) => Outcome::Time(stats.mean),
            Some(ResultOutcome::Failed { kind, .. }) => Outcome::Failed(*kind),
            Some(ResultOutcome::Pruned { .. }) => Outcome::Failed(FailureKind::OutOfResources),
            None => Outcome::Failed(FailureKind::Other),
        }
    }

    /// Records a result; with `persist`, also queues it for the database (results taken from
    /// the database and configs pruned after compiling are not written back).
    pub fn record_result(&mut self, r: ConfigResult, persist: bool) {
        if let Some(s) = r.stats() {
            if !s.raced && self.best.as_ref().is_none_or(|b| s.mean < b.mean) {
                self.best = Some(s.clone());
            }
        }
        if persist {
            let status = match &r.outcome {
                ResultOutcome::Measured { stats } => Some(Status::Ok { stats: stats.clone() }),
                ResultOutcome::Failed { kind, message } => Some(Status::Failed { failure: *kind, message: message.clone() }),
                ResultOutcome::Pruned { .. } => None,
            };
            if let Some(status) = status {
                self.pending.push((r.config.key(), Measurement { config: r.config.clone(), status, usage: r.usage.clone(), at: db::now() }));
            }
        }
        tracing::info!(target: "kerntune::autotuning", config = %r.config, from_db = r.from_db, "{}", r.summary_line());
        if let Some(o) = &self.opts.observer {
            o(&Event::Result { result: &r, best: self.best.as_ref().map(|b| b.mean) });
        }
        self.results.insert(r.config.key(), r);
    }

    /// Writes pending measurements to the database.
    pub fn flush(&mut self) -> Result<(), Error> {
        if let Some(d) = &self.opts.db {
            if !self.pending.is_empty() {
                let pending = std::mem::take(&mut self.pending);
                let env = self.environment();
                let id = self.ctx.id.clone();
                let tname = self.backend().target().name.clone();
                d.update_entry(&id, |e| {
                    let e = e.get_or_insert_with(|| Entry::new(id.clone(), tname, env));
                    for (k, m) in pending {
                        e.record(k, m);
                    }
                })?;
            }
        }
        self.last_flush = Instant::now();
        Ok(())
    }

    fn maybe_flush(&mut self) -> Result<(), Error> {
        if self.last_flush.elapsed() >= self.opts.flush_every {
            self.flush()?;
        }
        Ok(())
    }

    /// Verifies and measures one compiled config (or records its compile failure).
    /// `compile_seconds`: how long its compile took (`None` when it was compiled beforehand).
    pub fn evaluate(&mut self, c: &Cand, compiled: Result<Compiled<B::Kernel>, BackendError>, compile_seconds: Option<f64>) -> Result<(), Error> {
        let metrics = self.ctx.prep.metrics(&c.config);
        let mk =
            |outcome, usage| ConfigResult { config: c.config.clone(), outcome, usage, from_db: false, flops: metrics.0, bytes: metrics.1, compile_seconds };
        let compiled = match compiled {
            Ok(k) => k,
            Err(e) => {
                self.record_result(mk(ResultOutcome::Failed { kind: e.kind(), message: e.to_string() }, None), true);
                return self.maybe_flush();
            }
        };
        let usage = compiled.usage.clone();
        if let Err(reason) = prune_after(self.backend().limits(), &c.estimate, &usage, &self.opts.prune) {
            *self.pruned_after.entry(reason.category().to_string()).or_default() += 1;
            self.record_result(mk(ResultOutcome::Pruned { reason }, Some(usage)), false);
            return Ok(());
        }
        let outcome = match self.verify_and_measure(c, &compiled.kernel) {
            Ok(stats) => ResultOutcome::Measured { stats },
            Err(e) if matches!(e, BackendError::DeviceLost(_) | BackendError::TimedOut(_)) => {
                // Record first, so the failure is persisted even if recovery fails.
                self.record_result(mk(ResultOutcome::Failed { kind: e.kind(), message: e.to_string() }, Some(usage)), true);
                self.recover(c, &e)?;
                return self.maybe_flush();
            }
            Err(e) => ResultOutcome::Failed { kind: e.kind(), message: e.to_string() },
        };
        self.record_result(mk(outcome, Some(usage)), true);
        self.maybe_flush()
    }

    /// After a lost device or a timeout: a fresh context and workspace where the backend can
    /// make them. A backend that cannot recover from a lost device ends the tune (measurements
    /// so far are flushed by the caller); after a timeout the device still works.
    fn recover(&mut self, c: &Cand, e: &BackendError) -> Result<(), Error> {
        tracing::warn!(config = %c.config, error = %e, "recovering the device");
        match self.backend().recover() {
            Ok(()) => {
                self.ws = None;
                self.ensure_workspace()
            }
            Err(re) if matches!(e, BackendError::DeviceLost(_)) => Err(Error::Backend(re)),
            Err(_) => Ok(()),
        }
    }

    fn verify_and_measure(&mut self, c: &Cand, kernel: &B::Kernel) -> Result<Stats, BackendError> {
        let backend = self.tuner.backend();
        let ws = self.ws.as_mut().expect("workspace allocated before measuring");
        let bench = &self.opts.bench;
        let mut prior = Vec::new();
        if let Some(reference) = &self.reference {
            let vr = VerifyRequest {
                reference,
                reference_id: self.reference_id,
                outputs: &self.ctx.job.verify.outputs,
                tolerance: self.ctx.job.verify.tolerance,
                timeout: bench.timeout,
            };
            prior = backend.verify(ws, kernel, &c.launch, &vr)?;
        }
        let req = |n: u32| TimeRequest { launches: n, flush: bench.l2_flush(), timeout: bench.timeout };
        // The verification launch (if any) warmed the kernel up, and its time can already decide
        // a clear race.
        let (stats, _cost) = measure(bench, self.best.as_ref(), &prior, |n| backend.time(ws, kernel, &c.launch, &req(n)))?;
        Ok(stats)
    }
}
