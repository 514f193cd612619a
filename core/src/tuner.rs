//! The tuner: one pipeline every backend shares.
//!
//! 1. database lookup (a stored winner for the same kernel, target, toolchain, problem key,
//!    space and verification means no benchmark at all);
//! 2. enumerate and prune before compiling, keeping each reason;
//! 3. optionally order by the roofline model and keep the top k;
//! 4. the strategy picks candidates within the budget;
//! 5. compile in parallel on a worker pool while the tuner's thread benchmarks what is ready,
//!    then prune again from the compiler's resource report;
//! 6. verify each config against the reference (outputs poisoned first);
//! 7. benchmark: warm-up, adaptive repetitions, racing;
//! 8. pick the winner with the noise-aware, deterministic rule of [`crate::select`];
//! 9. persist every measurement (periodically, so an interrupted tune resumes) and the winner.
//!
//! A failure of one config (compile, launch, timeout, wrong output, lost device) is recorded
//! with its reason and never ends the tune.

use crate::backend::{Backend, CompileRequest, Compiled, L2Flush, Launch, ResourceUsage, TimeRequest, TimingMethod};
use crate::config::Config;
use crate::db::{self, Database, Entry, EntryId, Environment, Measurement, Status};
use crate::error::{BackendError, Error, FailureKind};
use crate::job::{Prepared, Reference, TuneJob};
use crate::measure::{measure, BenchOptions, Stats};
use crate::model::{self, ModelInput};
use crate::prune::{prune_after, prune_before, Estimate, PruneOptions, PruneReason};
use crate::select::{select, Entrant};
use crate::strategy::{self, Budget, Candidates, Outcome};
use crate::target::Target;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A progress event.
#[derive(Debug)]
pub enum Event<'a> {
    /// Planning finished.
    Planned {
        /// Valid configs in the space.
        valid: usize,
        /// Pruned before compiling.
        pruned: usize,
        /// Candidates the strategy may pick from.
        candidates: usize,
        /// Evaluation budget, if any.
        budget: Option<usize>,
        /// Time budget, if any.
        seconds: Option<f64>,
    },
    /// A config compiled.
    Compiled {
        /// The config.
        config: &'a Config,
        /// Compile seconds.
        seconds: f64,
    },
    /// A config's result is final (measured, failed, pruned after compiling, or from the db).
    Result {
        /// The result.
        result: &'a ConfigResult,
        /// Best mean so far, seconds.
        best: Option<f64>,
    },
}

/// A progress callback.
pub type Observer = Arc<dyn Fn(&Event<'_>) + Send + Sync>;

/// Options of one tune.
#[derive(Clone)]
pub struct TuneOptions {
    /// Benchmarking.
    pub bench: BenchOptions,
    /// Pruning thresholds.
    pub prune: PruneOptions,
    /// Strategy name (see [`strategy::by_name`]).
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
        }
    }
}

/// What happened to one config.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum ResultOutcome {
    /// Verified and timed.
    Measured {
        /// Timing.
        stats: Stats,
    },
    /// Failed.
    Failed {
        /// Class.
        kind: FailureKind,
        /// Detail.
        message: String,
    },
    /// Pruned after compiling.
    Pruned {
        /// Why.
        reason: PruneReason,
    },
}

/// One config's result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ConfigResult {
    /// The config.
    pub config: Config,
    /// Its outcome.
    #[serde(flatten)]
    pub outcome: ResultOutcome,
    /// Compiler resource report.
    pub usage: Option<ResourceUsage>,
    /// Taken from the database, not measured now.
    pub from_db: bool,
    /// FLOPs of one launch (from the job's formula).
    pub flops: Option<f64>,
    /// Bytes of one launch (from the job's formula).
    pub bytes: Option<f64>,
}

impl ConfigResult {
    /// The stats if measured.
    pub fn stats(&self) -> Option<&Stats> {
        match &self.outcome {
            ResultOutcome::Measured { stats } => Some(stats),
            _ => None,
        }
    }
}

/// The result of a tune.
#[derive(Clone, Debug, Serialize)]
pub struct TuneReport {
    /// The device.
    pub target: Target,
    /// The database entry.
    pub entry: EntryId,
    /// The winner came from the database; nothing was benchmarked.
    pub db_hit: bool,
    /// The winner.
    pub winner: Config,
    /// Its timing.
    pub winner_stats: Stats,
    /// Its FLOPs and bytes per launch, where known.
    pub winner_metrics: (Option<f64>, Option<f64>),
    /// Configs tied with the fastest, in tie-break order.
    pub tie_band: Vec<Config>,
    /// Every evaluated config (measured, failed, pruned after compiling), best first.
    pub results: Vec<ConfigResult>,
    /// Configs pruned before compiling, by category.
    pub pruned_before: BTreeMap<String, usize>,
    /// Configs pruned after compiling, by category.
    pub pruned_after: BTreeMap<String, usize>,
    /// Examples of pruning reasons (first per category), for reports.
    pub prune_examples: BTreeMap<String, String>,
    /// Failures by kind.
    pub failures: BTreeMap<String, usize>,
    /// Cartesian size of the space.
    pub cartesian: u128,
    /// Valid configs (restrictions satisfied).
    pub valid: usize,
    /// Candidates after pruning (and top-k).
    pub candidates: usize,
    /// Configs evaluated (database records included).
    pub evaluated: usize,
    /// Configs taken from the database.
    pub from_db: usize,
    /// Compilations performed.
    pub compiled: usize,
    /// Compilations served by a persistent compile cache.
    pub compile_cache_hits: usize,
    /// Seconds spent compiling, summed over threads.
    pub compile_seconds: f64,
    /// Timing method.
    pub timing: TimingMethod,
    /// Strategy name.
    pub strategy: String,
    /// Where expected outputs came from.
    pub reference: String,
    /// Wall-clock seconds of the whole tune.
    pub wall_seconds: f64,
    /// Whether the default config was part of the candidates.
    pub default_included: bool,
}

/// The tuner over one backend.
pub struct Tuner<B: Backend> {
    backend: B,
}

struct Cand {
    config: Config,
    coords: Vec<u32>,
    order: usize,
    is_default: bool,
    launch: Launch,
    estimate: Estimate,
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

    /// Hash of what a winner's verification depended on.
    fn verify_hash(job: &TuneJob, prep: &Prepared) -> String {
        // The data is a function of each argument's declaration (type, length, initializer and
        // seed, access) and the sizes, so those are hashed rather than gigabytes of contents.
        let mut text = format!("{:?}|{:?}|{}|{:?}", job.verify.outputs, job.verify.tolerance, job.verify.reference.describe(), job.args);
        for a in &prep.data.args {
            match a {
                crate::problem::ArgData::Buffer(b) => text.push_str(&format!("|{}:{:?}:{}", b.name, b.dtype, b.len())),
                crate::problem::ArgData::Scalar { name, value, .. } => text.push_str(&format!("|{name}={value}")),
            }
        }
        crate::hash::short_hash(text.as_bytes())
    }

    /// Compiles one config (the runtime handle uses this to load a stored winner).
    pub fn compile_config(&self, job: &TuneJob, prep: &Prepared, cfg: &Config) -> Result<(Compiled<B::Kernel>, Launch), Error> {
        let launch = prep.launch(cfg).map_err(Error::Eval)?;
        let defines = prep.defines(cfg);
        let scalars = prep.scalars();
        let c = self.backend.compile(&CompileRequest {
            source: &job.source,
            config: cfg,
            defines: &defines,
            launch: &launch,
            scalars: &scalars,
            buffers: &prep.buffer_access(),
        })?;
        Ok((c, launch))
    }

    /// Turns a class-based job into an explicit candidate list for this backend's device.
    pub fn expand_generated(&self, job: &TuneJob) -> Result<(TuneJob, BTreeMap<String, usize>), Error> {
        let Some(g) = &job.generate else { return Ok((job.clone(), BTreeMap::new())) };
        let err = |field: &str, m: String| Error::Spec(crate::spec::SpecError { file: job.origin.clone(), field: field.into(), message: m });
        let size_names: Vec<&str> = job.sizes.iter().map(|s| s.0.as_str()).collect();
        let size_vals: Vec<crate::Value> = job.sizes.iter().map(|s| s.1.clone()).collect();
        let mut dims = [0u64; 3];
        for (i, e) in g.shape.iter().enumerate() {
            let x = crate::expr::Expr::compile(e, &size_names).map_err(|m| err(&format!("generate.shape[{i}]"), m.to_string()))?;
            dims[i] = x.eval_i64(&size_vals).map_err(|m| err(&format!("generate.shape[{i}]"), m.to_string()))?.max(1) as u64;
        }
        let target = self.backend.target().clone();
        let limits = self.backend.limits().clone();
        let ctx = crate::generate::GenContext {
            target: &target,
            limits: &limits,
            class: g.class,
            shape: crate::generate::Shape { m: dims[0], n: dims[1], k: dims[2] },
            elem_bytes: g.elem_bytes,
            prune: PruneOptions::default(),
        };
        let gen = crate::generate::generate(&ctx).map_err(|m| err("kernel.class", m))?;
        let mut pruned = gen.pruned_counts();
        const ROLES: &[&str] = &[
            "tile_m",
            "tile_n",
            "tile_k",
            "num_warps",
            "num_stages",
            "num_ctas",
            "group_m",
            "waves_per_eu",
            "matrix_instr_nonkdim",
            "threads",
            "occupancy",
            "vec",
            "warp_size",
            "sm_count",
        ];
        let mut names: Vec<String> = ROLES.iter().map(|s| s.to_string()).collect();
        let mut exprs = Vec::new();
        for (p, e) in &g.roles {
            let refs: Vec<&str> = names.iter().map(String::as_str).collect();
            exprs.push(crate::expr::Expr::compile(e, &refs).map_err(|m| err(&format!("roles.{p}"), m.to_string()))?);
            names.push(p.clone());
        }
        let mut seen = std::collections::HashSet::new();
        let mut configs: Vec<Config> = Vec::new();
        let ordered = std::iter::once(gen.default.clone()).chain(gen.candidates.iter().map(|c| c.0.clone()));
        for rc in ordered {
            let mut slots: Vec<crate::Value> = ROLES
                .iter()
                .map(|r| match *r {
                    "warp_size" => crate::Value::Int(limits.warp_size as i64),
                    "sm_count" => crate::Value::Int(limits.sm_count as i64),
                    _ => rc.get(r).cloned().unwrap_or(crate::Value::Int(0)),
                })
                .collect();
            let mut cfg = Config { params: vec![], knobs: rc.knobs.clone() };
            let mut ok = true;
            for ((p, _), e) in g.roles.iter().zip(&exprs) {
                match e.eval_i64(&slots) {
                    Ok(v) => {
                        slots.push(crate::Value::Int(v));
                        cfg.params.push((p.clone(), crate::Value::Int(v)));
                    }
                    Err(_) => {
                        ok = false;
                        break;
                    }
                }
            }
            if !ok {
                *pruned.entry("roles".into()).or_default() += 1;
                continue;
            }
            // Knobs no role maps onto the kernel (stages, clusters, ...) do not change it:
            // configs that differ only there are one kernel (maxnreg does reach the compiler).
            if seen.insert((cfg.params.clone(), cfg.knobs.maxnreg)) {
                configs.push(cfg);
            }
        }
        // The spec's restrictions apply to the mapped parameters, before the top-k cut.
        let params: Vec<crate::space::Param> = g
            .roles
            .iter()
            .map(|(p, _)| {
                let mut vals: Vec<i64> = configs.iter().filter_map(|c| c.get_i64(p)).collect();
                vals.sort_unstable();
                vals.dedup();
                crate::space::Param::new(p.clone(), vals)
            })
            .collect();
        let space = crate::space::SearchSpace::new(params.clone(), &job.restrictions, job.sizes.clone()).map_err(|e| err("restrictions", e.to_string()))?;
        let before = configs.len();
        configs.retain(|c| space.coords_of(c).is_some_and(|co| space.is_valid(&co)));
        if before > configs.len() {
            *pruned.entry("restrictions".into()).or_default() += before - configs.len();
        }
        if configs.is_empty() {
            return Err(Error::NoValidConfig(format!("the {} generator's configs all fail the spec's [roles] mapping or restrictions", gen.generator)));
        }
        if let Some(k) = g.top_k {
            let before = configs.len();
            configs.truncate(k.max(1));
            if before > configs.len() {
                *pruned.entry("model_top_k".into()).or_default() += before - configs.len();
            }
        }
        let mut out = job.clone();
        out.params = params;
        out.explicit = Some(configs);
        out.generate = None;
        Ok((out, pruned))
    }

    /// Runs the whole pipeline for one job.
    pub fn tune(&self, job: &TuneJob, opts: &TuneOptions) -> Result<TuneReport, Error> {
        let t0 = Instant::now();
        let (expanded, generated_pruned) = self.expand_generated(job)?;
        let job = &expanded;
        let prep = Prepared::new(job)?;
        tracing::debug!(seconds = t0.elapsed().as_secs_f64(), "problem data built");
        let id = self.entry_id(job, &prep);
        let space_hash = prep.space.fingerprint();
        let verify_hash = Self::verify_hash(job, &prep);
        let limits = self.backend.limits();
        let emit = |e: Event<'_>| {
            if let Some(o) = &opts.observer {
                o(&e)
            }
        };

        // 1. Database lookup.
        let stored: Option<Entry> = match &opts.db {
            Some(d) => d.entry(&id)?,
            None => None,
        };
        if let (Some(entry), false) = (&stored, opts.force) {
            if let Some(w) = entry.winner.as_ref().filter(|w| w.space == space_hash && w.verify == verify_hash) {
                if let Some(m) = entry.measurements.get(&w.config) {
                    let results: Vec<ConfigResult> = entry.measurements.values().map(|m| to_result(m, true, prep.metrics(&m.config))).collect();
                    let tie_band = w.tie_band.iter().filter_map(|k| entry.measurements.get(k).map(|m| m.config.clone())).collect();
                    return Ok(TuneReport {
                        target: self.backend.target().clone(),
                        entry: id,
                        db_hit: true,
                        winner: m.config.clone(),
                        winner_stats: w.stats.clone(),
                        winner_metrics: prep.metrics(&m.config),
                        tie_band,
                        evaluated: results.len(),
                        from_db: results.len(),
                        results: sorted(results),
                        pruned_before: BTreeMap::new(),
                        pruned_after: BTreeMap::new(),
                        prune_examples: BTreeMap::new(),
                        failures: BTreeMap::new(),
                        cartesian: prep.space.cartesian_size(),
                        valid: 0,
                        candidates: 0,
                        compiled: 0,
                        compile_cache_hits: 0,
                        compile_seconds: 0.0,
                        timing: self.backend.timing_method(),
                        strategy: "database".into(),
                        reference: job.verify.reference.describe(),
                        wall_seconds: t0.elapsed().as_secs_f64(),
                        default_included: true,
                    });
                }
            }
        }

        // 2. Enumerate and prune before compiling.
        let mut pruned_before: BTreeMap<String, usize> = generated_pruned.iter().map(|(k, v)| (format!("generator: {k}"), *v)).collect();
        let mut prune_examples: BTreeMap<String, String> = BTreeMap::new();
        let mut cands: Vec<Cand> = Vec::new();
        let mut valid = 0usize;
        let mut default_seen = false;
        let default_key = prep.default.key();
        let mut consider = |config: Config, coords: Vec<u32>, order: usize, is_default: bool, cands: &mut Vec<Cand>| {
            let checked = prep.launch(&config).and_then(|l| prep.estimate(&config, &l).map(|e| (l, e)));
            let reason = match checked {
                Ok((launch, estimate)) => match prune_before(limits, &estimate, &opts.prune) {
                    Ok(()) => {
                        cands.push(Cand { config, coords, order, is_default, launch, estimate });
                        return;
                    }
                    Err(r) => r,
                },
                Err(message) => PruneReason::Geometry { message },
            };
            tracing::debug!(config = %config, reason = %reason, "pruned before compiling");
            *pruned_before.entry(reason.category().to_string()).or_default() += 1;
            prune_examples.entry(reason.category().to_string()).or_insert_with(|| format!("{config}: {reason}"));
        };
        let listed: Box<dyn Iterator<Item = Vec<u32>> + '_> = match &job.explicit {
            Some(list) => Box::new(list.iter().filter_map(|c| prep.space.coords_of(c)).filter(|c| prep.space.is_valid(c))),
            None => Box::new(prep.space.iter_coords()),
        };
        for (order, coords) in listed.enumerate() {
            valid += 1;
            let mut config = prep.space.config_at(&coords);
            if let Some(list) = &job.explicit {
                // Keep the generator's knobs (stages, warps, ...) on the config.
                if let Some(orig) = list.iter().find(|c| c.params == config.params) {
                    config.knobs = orig.knobs.clone();
                }
            }
            let is_default = !default_seen && config.key() == default_key;
            default_seen |= is_default;
            consider(config, coords, order, is_default, &mut cands);
        }
        if !default_seen && prep.default_declared {
            // The declared default breaks a restriction: it is still a candidate, so that tuning
            // is never worse than the default (and it serves as the reference).
            if let Some(coords) = prep.space.coords_of(&prep.default) {
                tracing::warn!(default = %prep.default, "the default config does not satisfy the restrictions; keeping it as a candidate");
                consider(prep.default.clone(), coords, usize::MAX, true, &mut cands);
            }
        }
        let default_included = cands.iter().any(|c| c.is_default);

        // 3. Model order and top-k.
        if opts.model {
            let half = false;
            let mut est: Vec<(f64, usize)> = cands
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let (flops, bytes) = prep.metrics(&c.config);
                    let threads = c.launch.threads();
                    let occ = limits.occupancy(threads, c.estimate.regs_per_thread, c.estimate.shared_bytes).blocks_per_sm;
                    let input = ModelInput { flops: flops.unwrap_or(0.0), bytes: bytes.unwrap_or(0.0), blocks: c.launch.blocks(), occupancy: occ };
                    (model::estimate(limits, &input, half).unwrap_or(f64::INFINITY), i)
                })
                .collect();
            est.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            let mut keep: Vec<usize> = est.iter().map(|e| e.1).collect();
            if let Some(k) = opts.top_k {
                let def = keep.iter().position(|&i| cands[i].is_default);
                let mut kept: Vec<usize> = keep.iter().copied().take(k.max(1)).collect();
                if let Some(d) = def {
                    if d >= k {
                        kept.push(keep[d]);
                    }
                }
                let dropped = keep.len() - kept.len();
                if dropped > 0 {
                    *pruned_before.entry("model_top_k".into()).or_default() += dropped;
                }
                keep = kept;
            }
            let mut slots: Vec<Option<Cand>> = cands.into_iter().map(Some).collect();
            cands = keep.into_iter().map(|i| slots[i].take().expect("each kept once")).collect();
        }
        let n_pruned: usize = pruned_before.values().sum();
        emit(Event::Planned { valid, pruned: n_pruned, candidates: cands.len(), budget: opts.budget.max_evals, seconds: opts.budget.max_seconds });
        if cands.is_empty() {
            let why = if valid == 0 {
                "the restrictions leave no valid config".to_string()
            } else {
                format!(
                    "all {valid} valid configs were pruned ({}); e.g. {}",
                    pruned_before.iter().map(|(k, v)| format!("{k}: {v}")).collect::<Vec<_>>().join(", "),
                    prune_examples.values().next().cloned().unwrap_or_default()
                )
            };
            return Err(Error::NoValidConfig(why));
        }

        // Known measurements from the database.
        let known: HashMap<String, Measurement> = match (&stored, opts.remeasure) {
            (Some(e), false) => e.measurements.clone().into_iter().collect(),
            _ => HashMap::new(),
        };

        let mut run = Run {
            tuner: self,
            job,
            prep: &prep,
            opts,
            id: &id,
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
            pruned_after: BTreeMap::new(),
        };

        let scalars = prep.scalars();
        let access = prep.buffer_access();
        // Reference outputs (needed only if something is measured now).
        let needs_measuring = cands.iter().any(|c| !known.contains_key(&c.config.key()));
        let mut default_kernel: Option<(usize, Compiled<B::Kernel>)> = None;
        if needs_measuring {
            let tw = Instant::now();
            run.ensure_workspace()?;
            tracing::debug!(seconds = tw.elapsed().as_secs_f64(), "workspace allocated and uploaded");
            match &job.verify.reference {
                Reference::None => {}
                Reference::Host(name, f) => {
                    let outs = f(&prep.data).map_err(|e| Error::Reference(format!("cpu reference `{name}`: {e}")))?;
                    run.reference = Some(outs);
                }
                Reference::DefaultConfig => {
                    let di = cands.iter().position(|c| c.is_default).ok_or_else(|| {
                        Error::Reference(format!("the default config ({}) was pruned or is invalid; name a CPU reference or change the default", prep.default))
                    })?;
                    let c = &cands[di];
                    let defines = prep.defines(&c.config);
                    let compiled = self
                        .backend
                        .compile(&CompileRequest {
                            source: &job.source,
                            config: &c.config,
                            defines: &defines,
                            launch: &c.launch,
                            scalars: &scalars,
                            buffers: &access,
                        })
                        .map_err(|e| Error::Reference(format!("the default config ({}) failed to compile: {e}", c.config)))?;
                    run.compiled += 1;
                    let ws = run.ws.as_mut().expect("workspace");
                    self.backend.reset(ws, true)?;
                    self.backend
                        .time(ws, &compiled.kernel, &c.launch, &TimeRequest { launches: 1, flush: L2Flush::Off, timeout: opts.bench.timeout })
                        .map_err(|e| Error::Reference(format!("the default config ({}) failed to run: {e}", c.config)))?;
                    run.reference = Some(self.backend.read_outputs(ws)?);
                    default_kernel = Some((di, compiled));
                }
            }
        }

        tracing::debug!(seconds = t0.elapsed().as_secs_f64(), "reference ready");
        // 4-7. Strategy loop.
        let mut strat = strategy::for_budget(&opts.strategy, opts.seed, &opts.budget)
            .map_err(|m| Error::Spec(crate::spec::SpecError { file: job.origin.clone(), field: "strategy".into(), message: m }))?;
        let params = prep.space.params().to_vec();
        let coords: Vec<Vec<u32>> = cands.iter().map(|c| c.coords.clone()).collect();
        let view = Candidates { params: &params, coords: &coords };
        let threads = opts.compile_threads.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)).max(1);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("kerntune-compile-{i}"))
            .build()
            .map_err(|e| Error::Backend(BackendError::other(e)))?;
        let mut evaluated: Vec<bool> = vec![false; cands.len()];
        let mut n_eval = 0usize;
        let max_evals = opts.budget.max_evals.unwrap_or(usize::MAX);
        let deadline = opts.budget.max_seconds.map(|s| t0 + Duration::from_secs_f64(s));
        let out_of_time = || deadline.is_some_and(|d| Instant::now() >= d);

        // The default config first when it is compiled already.
        if let Some((di, compiled)) = default_kernel.take() {
            if !known.contains_key(&cands[di].config.key()) {
                run.evaluate(&cands[di], Ok(compiled))?;
                evaluated[di] = true;
                n_eval += 1;
                let o = run.outcome_of(&cands[di].config.key());
                strat.tell(di, &o);
            }
        }
        let batch_size = if opts.strategy == "exhaustive" || opts.strategy == "random" { usize::MAX } else { threads * 2 };
        let mut idle_rounds = 0;
        while n_eval < max_evals && !out_of_time() {
            let asked = strat.ask(&view, batch_size.min(max_evals - n_eval).max(1));
            if asked.is_empty() {
                break;
            }
            let mut fresh = Vec::new();
            for i in asked {
                if i >= cands.len() {
                    continue;
                }
                if evaluated[i] {
                    let o = run.outcome_of(&cands[i].config.key());
                    strat.tell(i, &o);
                    continue;
                }
                if let Some(m) = known.get(&cands[i].config.key()) {
                    evaluated[i] = true;
                    n_eval += 1;
                    let r = to_result(m, true, prep.metrics(&cands[i].config));
                    run.record_result(r, false);
                    let o = run.outcome_of(&cands[i].config.key());
                    strat.tell(i, &o);
                    continue;
                }
                if n_eval + fresh.len() < max_evals {
                    fresh.push(i);
                }
            }
            if fresh.is_empty() {
                idle_rounds += 1;
                if idle_rounds > 1000 {
                    break;
                }
                continue;
            }
            idle_rounds = 0;
            run.ensure_workspace()?;
            // Compile on the pool, benchmark here as results arrive.
            let cancel = AtomicBool::new(false);
            let backend = &self.backend;
            let prep_ref = &prep;
            let cands_ref = &cands;
            let source = &job.source;
            let scalars_ref = &scalars;
            let access_ref = &access;
            let mut failure: Option<Error> = None;
            std::thread::scope(|s| {
                let (tx, rx) = std::sync::mpsc::sync_channel::<(usize, Result<Compiled<B::Kernel>, BackendError>, f64)>(threads * 2);
                let cancel_ref = &cancel;
                let fresh_ref = &fresh;
                let pool_ref = &pool;
                s.spawn(move || {
                    pool_ref.install(|| {
                        fresh_ref.par_iter().for_each_with(tx, |tx, &i| {
                            if cancel_ref.load(Ordering::Relaxed) {
                                return;
                            }
                            let c = &cands_ref[i];
                            let defines = prep_ref.defines(&c.config);
                            let t = Instant::now();
                            let r = backend.compile(&CompileRequest {
                                source,
                                config: &c.config,
                                defines: &defines,
                                launch: &c.launch,
                                scalars: scalars_ref,
                                buffers: access_ref,
                            });
                            let _ = tx.send((i, r, t.elapsed().as_secs_f64()));
                        })
                    })
                });
                for (i, r, secs) in rx {
                    if failure.is_some() || out_of_time() {
                        cancel.store(true, Ordering::Relaxed);
                        continue;
                    }
                    run.compile_seconds += secs;
                    if let Ok(c) = &r {
                        run.compiled += 1;
                        run.cache_hits += c.cached as usize;
                        emit(Event::Compiled { config: &cands[i].config, seconds: secs });
                    }
                    if let Err(e) = run.evaluate(&cands[i], r) {
                        failure = Some(e);
                        cancel.store(true, Ordering::Relaxed);
                        continue;
                    }
                    evaluated[i] = true;
                    n_eval += 1;
                    let o = run.outcome_of(&cands[i].config.key());
                    strat.tell(i, &o);
                }
            });
            if let Some(e) = failure {
                let _ = run.flush();
                return Err(e);
            }
        }

        // 8. Select.
        let measured: Vec<(&Cand, &ConfigResult)> =
            cands.iter().filter_map(|c| run.results.get(&c.config.key()).map(|r| (c, r))).filter(|(_, r)| r.stats().is_some()).collect();
        let entrants: Vec<Entrant<'_>> = measured
            .iter()
            .map(|(c, r)| Entrant {
                order: c.order,
                is_default: c.is_default,
                resource_score: r.usage.as_ref().and_then(|u| u.score(c.launch.threads())),
                stats: r.stats().expect("filtered"),
            })
            .collect();
        let Some(sel) = select(&entrants, opts.bench.tie_tolerance) else {
            run.flush()?;
            let failures = failure_counts(run.results.values());
            let first = run.results.values().find_map(|r| match &r.outcome {
                ResultOutcome::Failed { message, .. } => {
                    Some(format!("{}: {}", r.config, message.lines().filter(|l| !l.trim().is_empty()).take(3).collect::<Vec<_>>().join(" | ")))
                }
                _ => None,
            });
            return Err(Error::NoValidConfig(format!(
                "none of the {} evaluated configs passed ({}){}",
                run.results.len(),
                failures.iter().map(|(k, v)| format!("{k}: {v}")).collect::<Vec<_>>().join(", "),
                first.map(|f| format!("; e.g. {f}")).unwrap_or_default()
            )));
        };
        let (wc, wr) = measured[sel.winner];
        let winner = wc.config.clone();
        let winner_stats = wr.stats().expect("measured").clone();
        let tie_band: Vec<Config> = sel.tie_band.iter().map(|&i| measured[i].0.config.clone()).collect();

        // 9. Persist.
        if let Some(d) = &opts.db {
            let pending = std::mem::take(&mut run.pending);
            let w = db::Winner {
                config: winner.key(),
                stats: winner_stats.clone(),
                space: space_hash,
                verify: verify_hash,
                tie_band: tie_band.iter().map(Config::key).collect(),
                at: db::now(),
            };
            let env = run.environment();
            let tname = self.backend.target().name.clone();
            d.update(|f| {
                let e = f.entries.entry(id.key()).or_insert_with(|| Entry::new(id.clone(), tname, env));
                for (k, m) in pending {
                    e.measurements.insert(k, m);
                }
                e.winner = Some(w);
            })?;
        }
        let failures = failure_counts(run.results.values());
        let results: Vec<ConfigResult> = run.results.values().cloned().collect();
        let from_db = results.iter().filter(|r| r.from_db).count();
        Ok(TuneReport {
            target: self.backend.target().clone(),
            entry: id.clone(),
            db_hit: false,
            winner_metrics: prep.metrics(&winner),
            winner,
            winner_stats,
            tie_band,
            evaluated: results.len(),
            from_db,
            results: sorted(results),
            pruned_before,
            pruned_after: run.pruned_after.clone(),
            prune_examples,
            failures,
            cartesian: prep.space.cartesian_size(),
            valid,
            candidates: cands.len(),
            compiled: run.compiled,
            compile_cache_hits: run.cache_hits,
            compile_seconds: run.compile_seconds,
            timing: self.backend.timing_method(),
            strategy: strat.name(),
            reference: job.verify.reference.describe(),
            wall_seconds: t0.elapsed().as_secs_f64(),
            default_included,
        })
    }
}

/// Failed configs counted by failure kind.
fn failure_counts<'a>(results: impl Iterator<Item = &'a ConfigResult>) -> BTreeMap<String, usize> {
    let mut failures = BTreeMap::new();
    for r in results {
        if let ResultOutcome::Failed { kind, .. } = &r.outcome {
            *failures.entry(kind.to_string()).or_default() += 1;
        }
    }
    failures
}

fn sorted(mut v: Vec<ConfigResult>) -> Vec<ConfigResult> {
    v.sort_by(|a, b| {
        let ka = a.stats().map(|s| s.mean).unwrap_or(f64::INFINITY);
        let kb = b.stats().map(|s| s.mean).unwrap_or(f64::INFINITY);
        ka.total_cmp(&kb).then_with(|| a.config.key().cmp(&b.config.key()))
    });
    v
}

fn to_result(m: &Measurement, from_db: bool, metrics: (Option<f64>, Option<f64>)) -> ConfigResult {
    let outcome = match &m.status {
        Status::Ok { stats } => ResultOutcome::Measured { stats: stats.clone() },
        Status::Failed { failure, message } => ResultOutcome::Failed { kind: *failure, message: message.clone() },
    };
    ConfigResult { config: m.config.clone(), outcome, usage: m.usage.clone(), from_db, flops: metrics.0, bytes: metrics.1 }
}

/// State of one tune in progress.
struct Run<'a, B: Backend> {
    tuner: &'a Tuner<B>,
    job: &'a TuneJob,
    prep: &'a Prepared,
    opts: &'a TuneOptions,
    id: &'a EntryId,
    ws: Option<B::Workspace>,
    reference: Option<Vec<crate::problem::HostBuffer>>,
    reference_id: u64,
    results: HashMap<String, ConfigResult>,
    pending: Vec<(String, Measurement)>,
    last_flush: Instant,
    best: Option<Stats>,
    compiled: usize,
    cache_hits: usize,
    compile_seconds: f64,
    pruned_after: BTreeMap<String, usize>,
}

impl<B: Backend> Run<'_, B> {
    fn backend(&self) -> &B {
        &self.tuner.backend
    }

    fn ensure_workspace(&mut self) -> Result<(), Error> {
        if self.ws.is_none() {
            self.ws = Some(self.tuner.backend.workspace(&self.prep.data)?);
        }
        Ok(())
    }

    fn environment(&self) -> Environment {
        Environment {
            kerntune: env!("CARGO_PKG_VERSION").into(),
            host: std::env::var("HOSTNAME").ok().or_else(|| std::fs::read_to_string("/etc/hostname").ok().map(|s| s.trim().to_string())).unwrap_or_default(),
            timing: self.backend().timing_method().to_string(),
            details: self.backend().environment().into_iter().collect(),
        }
    }

    fn outcome_of(&self, key: &str) -> Outcome {
        match self.results.get(key).map(|r| &r.outcome) {
            Some(ResultOutcome::Measured { stats }) => Outcome::Time(stats.mean),
            Some(ResultOutcome::Failed { kind, .. }) => Outcome::Failed(*kind),
            Some(ResultOutcome::Pruned { .. }) => Outcome::Failed(FailureKind::OutOfResources),
            None => Outcome::Failed(FailureKind::Other),
        }
    }

    /// Records a result; with `persist`, also queues it for the database (results taken from
    /// the database and configs pruned after compiling are not written back).
    fn record_result(&mut self, r: ConfigResult, persist: bool) {
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
        let line = match &r.outcome {
            ResultOutcome::Measured { stats } => {
                format!("{:.4} ms ± {:.4} ({} runs{})", stats.mean * 1e3, stats.ci_half * 1e3, stats.samples, if stats.raced { ", raced" } else { "" })
            }
            ResultOutcome::Failed { kind, message } => {
                format!("{kind}: {}", message.lines().next().unwrap_or(""))
            }
            ResultOutcome::Pruned { reason } => format!("pruned after compiling: {reason}"),
        };
        tracing::info!(target: "kerntune::autotuning", config = %r.config, from_db = r.from_db, "{line}");
        if let Some(o) = &self.opts.observer {
            o(&Event::Result { result: &r, best: self.best.as_ref().map(|b| b.mean) });
        }
        self.results.insert(r.config.key(), r);
    }

    fn flush(&mut self) -> Result<(), Error> {
        if let Some(d) = &self.opts.db {
            if !self.pending.is_empty() {
                let pending = std::mem::take(&mut self.pending);
                let env = self.environment();
                let id = self.id.clone();
                let tname = self.backend().target().name.clone();
                d.update(|f| {
                    let e = f.entries.entry(id.key()).or_insert_with(|| Entry::new(id.clone(), tname, env));
                    for (k, m) in pending {
                        e.measurements.insert(k, m);
                    }
                })?;
            }
        }
        self.last_flush = Instant::now();
        Ok(())
    }

    /// Verifies and measures one compiled config (or records its compile failure).
    fn evaluate(&mut self, c: &Cand, compiled: Result<Compiled<B::Kernel>, BackendError>) -> Result<(), Error> {
        let metrics = self.prep.metrics(&c.config);
        let mk = |outcome, usage| ConfigResult { config: c.config.clone(), outcome, usage, from_db: false, flops: metrics.0, bytes: metrics.1 };
        let compiled = match compiled {
            Ok(k) => k,
            Err(e) => {
                let r = mk(ResultOutcome::Failed { kind: e.kind(), message: e.to_string() }, None);
                self.record_result(r, true);
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
            Err(e) => {
                let lost = matches!(e, BackendError::DeviceLost(_));
                let failed = ResultOutcome::Failed { kind: e.kind(), message: e.to_string() };
                if lost || matches!(e, BackendError::TimedOut(_)) {
                    // Record first, so the failure is persisted even if recovery fails.
                    self.record_result(mk(failed, Some(usage)), true);
                    tracing::warn!(config = %c.config, error = %e, "recovering the device");
                    match self.backend().recover() {
                        Ok(()) => {
                            self.ws = None;
                            self.ensure_workspace()?;
                        }
                        // A backend that cannot recover from a lost device ends the tune
                        // (measurements so far are flushed by the caller).
                        Err(re) if lost => return Err(Error::Backend(re)),
                        // A timeout on a backend without recovery: the device still works.
                        Err(_) => {}
                    }
                    return self.maybe_flush();
                }
                failed
            }
        };
        self.record_result(mk(outcome, Some(usage)), true);
        self.maybe_flush()
    }

    fn maybe_flush(&mut self) -> Result<(), Error> {
        if self.last_flush.elapsed() >= self.opts.flush_every {
            self.flush()?;
        }
        Ok(())
    }

    fn verify_and_measure(&mut self, c: &Cand, kernel: &B::Kernel) -> Result<Stats, BackendError> {
        let backend = &self.tuner.backend;
        let ws = self.ws.as_mut().expect("workspace allocated before measuring");
        let bench = &self.opts.bench;
        let mut prior = Vec::new();
        if let Some(reference) = &self.reference {
            let vr = crate::backend::VerifyRequest {
                reference,
                reference_id: self.reference_id,
                outputs: &self.job.verify.outputs,
                tolerance: self.job.verify.tolerance,
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
