//! `kerntune tune SPEC.toml`.

use super::report;
use crate::cli::out::outln;
use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use kerntune::store::db::Database;
use kerntune::{with_backend, Backend, BackendChoice, Budget, Event, Spec, TuneOptions, TuneReport, Tuner, Value};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The spec file (TOML; see docs/spec.md).
    spec: PathBuf,
    /// Backend: auto (CUDA, then HIP, then a hardware wgpu adapter, then software Vulkan), cuda, hip or wgpu.
    #[arg(long, default_value = "auto")]
    backend: BackendChoice,
    /// Device index within the backend (see `kerntune devices`).
    #[arg(long)]
    device: Option<usize>,
    /// Tune one problem instead of the spec's list: NAME=VALUE[,NAME=VALUE...] over the spec's problem sizes.
    #[arg(long)]
    key: Option<String>,
    /// Search strategy: exhaustive, random, annealing, genetic, local, model or hybrid; overrides the spec's [tune] strategy.
    #[arg(long)]
    strategy: Option<String>,
    /// Budget: evaluations (200), seconds (30s), minutes (5m), within a percentage of the model's predicted optimum (2%, model and hybrid only), or several (400,5m,2%).
    #[arg(long)]
    budget: Option<String>,
    /// Seed for random strategies.
    #[arg(long)]
    seed: Option<u64>,
    /// Database file (default: $KERNTUNE_CACHE_DIR/db.json or the platform cache directory).
    #[arg(long)]
    db: Option<PathBuf>,
    /// Do not read or write any database.
    #[arg(long)]
    no_db: bool,
    /// Ignore a stored winner and select again (stored measurements are reused).
    #[arg(long)]
    force: bool,
    /// Measure everything again, ignoring stored measurements.
    #[arg(long)]
    remeasure: bool,
    /// Rows in the result table.
    #[arg(long, default_value_t = 10)]
    top: usize,
    /// Machine-readable output (the full reports as JSON on stdout).
    #[arg(long)]
    json: bool,
    /// Allow kernel sources outside the spec's folder.
    #[arg(long)]
    allow_outside_sources: bool,
    /// Compile threads (default: one per core). Fewer leave cores to other work; a tune is then
    /// slower where compiling is the bottleneck.
    #[arg(short = 'j', long, value_parser = clap::value_parser!(u16).range(1..=4096))]
    jobs: Option<u16>,
}

fn parse_key(text: &str, sizes: &[(String, Value)]) -> anyhow::Result<Vec<(String, Value)>> {
    let mut out = sizes.to_vec();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once('=').with_context(|| format!("--key: `{part}` is not NAME=VALUE"))?;
        let slot = out.iter_mut().find(|(n, _)| n == k).with_context(|| {
            format!("--key: `{k}` is not a problem size of this spec (sizes: {})", sizes.iter().map(|s| s.0.as_str()).collect::<Vec<_>>().join(", "))
        })?;
        slot.1 = kerntune::space::config::parse_value(v);
    }
    Ok(out)
}

pub fn run(a: Args) -> anyhow::Result<i32> {
    let mut spec = kerntune::plan::prepare::load_with(&a.spec, kerntune::LoadOptions { allow_outside_sources: a.allow_outside_sources })?;
    for w in &spec.warnings {
        crate::cli::out::eprint_line(&format!("warning: {w}"));
    }
    if let Some(k) = &a.key {
        let first = spec.problems.first().cloned().unwrap_or_default();
        spec.problems = vec![parse_key(k, &first)?];
    }
    let budget_text = a.budget.clone().or(spec.budget.clone());
    let budget = match &budget_text {
        Some(b) => Budget::parse(b).map_err(|m| anyhow::anyhow!("--budget: {m}"))?,
        None => Budget::default(),
    };
    let strategy = a.strategy.clone().or(spec.strategy.clone()).unwrap_or_else(|| "exhaustive".into());
    kerntune::spec::settings::strategy_named(&strategy).map_err(|m| anyhow::anyhow!("--strategy: {m}"))?;
    kerntune::spec::settings::check_strategy(&strategy, &budget).map_err(|m| anyhow::anyhow!("--budget: {m}"))?;
    let backend = kerntune::open(a.backend, a.device)?;
    let db = if a.no_db { None } else { Some(Database::at(super::db_path(&a.db))) };
    let opts = TuneOptions {
        bench: spec.bench.clone().unwrap_or_default(),
        prune: spec.prune.clone().unwrap_or_default(),
        strategy,
        seed: a.seed.or(spec.seed).unwrap_or(0),
        budget,
        model: spec.model.unwrap_or(false),
        top_k: spec.top_k,
        db,
        force: a.force,
        remeasure: a.remeasure,
        compile_threads: a.jobs.map(usize::from),
        ..Default::default()
    };
    with_backend!(backend, b => tune_all(b, &spec, &a, opts))
}

/// SIGINT and SIGTERM: the first asks the tune to stop (the config in progress finishes,
/// everything measured is written, the command exits 130 or 143); a second one exits at once.
struct Stop {
    flag: Arc<std::sync::atomic::AtomicBool>,
    signal: Arc<std::sync::atomic::AtomicUsize>,
}

impl Stop {
    fn install() -> Stop {
        let stop = Stop { flag: Arc::default(), signal: Arc::default() };
        #[cfg(unix)]
        for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            // Registered first, so it sees the flag as it was before this signal set it.
            let _ = signal_hook::flag::register_conditional_shutdown(sig, 128 + sig, stop.flag.clone());
            let _ = signal_hook::flag::register(sig, stop.flag.clone());
            let _ = signal_hook::flag::register_usize(sig, stop.signal.clone(), sig as usize);
        }
        stop
    }

    fn requested(&self) -> bool {
        self.flag.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The signal's name and the exit status for it.
    fn which(&self) -> (&'static str, i32) {
        Stop::named(self.signal.load(std::sync::atomic::Ordering::Relaxed)).unwrap_or(("SIGINT", 130))
    }

    fn named(signal: usize) -> Option<(&'static str, i32)> {
        match signal {
            15 => Some(("SIGTERM", 143)),
            2 => Some(("SIGINT", 130)),
            _ => None,
        }
    }
}

fn saved_where(opts: &TuneOptions) -> String {
    match opts.db.as_ref() {
        Some(d) => format!("written to {}", d.path().display()),
        None => "not saved (--no-db)".into(),
    }
}

fn interrupted(name: &str, sizes: &str, kept: usize, saved: &str, compiling: usize) -> String {
    let dropped = if compiling > 0 { format!(" ({compiling} queued or compiling config(s) dropped)") } else { String::new() };
    format!("interrupted by {name} while tuning {sizes}: {kept} config(s) measured in this run, {saved}{dropped}; run the same command to resume")
}

fn tune_all<B: Backend>(backend: B, spec: &Spec, a: &Args, mut opts: TuneOptions) -> anyhow::Result<i32> {
    let stop = Stop::install();
    opts.cancel = Some(stop.flag.clone());
    let language = backend.language();
    let target = backend.target().clone();
    let timing = backend.timing_method();
    let tuner = Tuner::new(backend);
    if !a.json {
        crate::cli::out::eprint_line(&format!("kerntune: {} on {} [{}], timing: {timing}", spec.kernel, target.name, target.backend));
    }
    let mut reports: Vec<TuneReport> = Vec::new();
    let mut failed = 0usize;
    for i in 0..spec.problems.len() {
        let job = spec.job(language, i)?;
        let pb = if a.json { ProgressBar::hidden() } else { ProgressBar::new(0) };
        pb.set_style(
            ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg} (eta {eta})").expect("valid template").progress_chars("=> "),
        );
        let sizes = job.sizes.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(",");
        pb.set_prefix(sizes.clone());
        let counters = Arc::new(Mutex::new((0usize, 0usize, 0usize, 0usize)));
        let pb2 = pb.clone();
        let mut o = opts.clone();
        let (which, saved, sizes2) = (stop.which(), saved_where(&opts), sizes.clone());
        let signal = stop.signal.clone();
        o.observer = Some(Arc::new(move |e: &Event<'_>| match e {
            Event::Interrupted { kept, compiling } => {
                // Everything measured is written: exit now rather than wait for the compiles in
                // progress (they would be thrown away).
                pb2.finish_and_clear();
                let (name, code) = Stop::named(signal.load(std::sync::atomic::Ordering::Relaxed)).unwrap_or(which);
                crate::cli::out::eprint_line(&interrupted(name, &sizes2, *kept, &saved, *compiling));
                std::process::exit(code);
            }
            Event::Planned { candidates, budget, pruned, .. } => {
                pb2.set_length(budget.map_or(*candidates, |b| b.min(*candidates)) as u64);
                counters.lock().expect("counters").3 = *pruned;
            }
            Event::Compiled { .. } => counters.lock().expect("counters").0 += 1,
            Event::Result { result, best } => {
                let mut c = counters.lock().expect("counters");
                if result.stats().is_some() {
                    c.1 += 1;
                } else {
                    c.2 += 1;
                }
                pb2.inc(1);
                pb2.set_message(format!(
                    "compiled {} | benchmarked {} | failed/pruned {} | pruned before {} | best {}",
                    c.0,
                    c.1,
                    c.2,
                    c.3,
                    best.map_or("-".to_string(), |b| format!("{:.4} ms", b * 1e3))
                ));
            }
        }));
        let r = tuner.tune(&job, &o);
        pb.finish_and_clear();
        let stopped = match &r {
            Err(kerntune::Error::Interrupted { kept, .. }) => Some(*kept),
            _ if stop.requested() => Some(0),
            _ => None,
        };
        if let Some(kept) = stopped {
            if let Ok(r) = r {
                if !a.json {
                    report::print(&r, a.top, opts.db.as_ref().map(|d| d.path()))?;
                }
                reports.push(r);
            }
            let (name, code) = stop.which();
            crate::cli::out::eprint_line(&interrupted(name, &sizes, kept, &saved_where(&opts), 0));
            if a.json {
                outln!("{}", serde_json::to_string_pretty(&reports)?);
            }
            return Ok(code);
        }
        // One problem failing does not stop the others; the command fails at the end.
        let r = match r.with_context(|| format!("{}: tuning {} ({sizes})", spec.path.display(), spec.kernel)) {
            Ok(r) => r,
            Err(e) if spec.problems.len() > 1 => {
                crate::cli::out::eprint_line(&format!("error: {}", crate::cli::chain(&e)));
                failed += 1;
                continue;
            }
            Err(e) => return Err(e),
        };
        if !a.json {
            report::print(&r, a.top, opts.db.as_ref().map(|d| d.path()))?;
        }
        reports.push(r);
    }
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&reports)?);
    }
    if failed > 0 {
        anyhow::bail!("{failed} of {} problems failed to tune (see above); the others were tuned and stored", spec.problems.len());
    }
    Ok(0)
}
