//! `kerntune tune SPEC.toml`.

use super::stop::Stop;
use super::summary;
use crate::cli::out::outln;
use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use kerntune::spec::settings::Shard;
use kerntune::store::db::Database;
use kerntune::{with_backends, Backend, BackendChoice, Budget, Devices, Event, Reference, Spec, TuneOptions, TuneReport, Tuner, Value, VerifySample};
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
    #[arg(long, conflicts_with = "devices")]
    device: Option<usize>,
    /// Tune on several devices of one model at once: `all`, or indices such as 0,2,3. One
    /// measuring session per device, one compile pool; overrides the spec's [tune] devices.
    #[arg(long)]
    devices: Option<Devices>,
    /// This process's part of a tune split over N processes or machines: K/N (0 ≤ K < N).
    /// Problems are dealt out; a problem's configs are partitioned (exhaustive, random) or
    /// searched with a seed per shard (adaptive strategies). Give each shard its own --db
    /// and then `kerntune db merge`, or every shard one --db (the shards run at once and add
    /// up); then `kerntune confirm`.
    #[arg(long)]
    shard: Option<Shard>,
    #[command(flatten)]
    measuring: Measuring,
    /// Verify only some configs during the search: a count (the first N measured) or a share
    /// (10%); the winner and its tie band are always verified.
    #[arg(long)]
    verify_sample: Option<String>,
    /// Tune this problem instead of the spec's list: NAME=VALUE[,NAME=VALUE...] over the spec's
    /// problem sizes (the first problem's values for the sizes not named). Repeat it to tune
    /// several problems, in the order given.
    #[arg(long)]
    key: Vec<String>,
    /// Search strategy: exhaustive, random, annealing, genetic, local, model, hybrid or transfer;
    /// overrides the spec's [tune] strategy. Without one: transfer when other GPUs' measurements
    /// of this kernel exist (priors), else exhaustive.
    #[arg(long)]
    strategy: Option<String>,
    /// Learn from these files of other GPUs' measurements instead of the database: Kernel Tuner
    /// caches (.json, .json.gz), T4 files, kerntune databases (entries of another source hash
    /// in a named database are used too), kerntune tune reports (`tune --json`). A file of
    /// several entries or tunes (a database, `db export --format t4`, `tune --json` of several
    /// problems) gives this kernel and problem on other targets, and this target's nearest sizes.
    #[arg(long, num_args = 1.., value_name = "FILE", conflicts_with = "no_prior")]
    prior: Vec<PathBuf>,
    /// Do not learn from other GPUs' measurements.
    #[arg(long)]
    no_prior: bool,
    /// Budget: evaluations (200), seconds (30s), minutes (5m), within a percentage of the model's predicted optimum (2%, model and hybrid only), a share of the valid configs (10%space), or several (400,5m,2%). Asking for more than a stored winner came from (more evaluations than are stored, or more time after a search its time limit stopped) searches on from the stored measurements.
    // A value that starts with `-` (`-3s`) reaches the budget's own parser, which says what
    // is wrong with it, instead of clap taking it for a flag.
    #[arg(long, allow_hyphen_values = true)]
    budget: Option<String>,
    /// Seed for random strategies.
    #[arg(long)]
    seed: Option<u64>,
    /// Database file (default: $KERNTUNE_CACHE_DIR/db.sqlite or the platform cache directory).
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
    /// After the final round, measure the winner's tie band and N other configs again and
    /// report whether each second mean fell inside the first's reported 95 % interval (implies
    /// --remeasure, so both measurements are this tune's).
    #[arg(long, value_name = "N")]
    recheck: Option<usize>,
    /// After the tune, run the winner once under CUDA's compute-sanitizer (memcheck), or on wgpu
    /// with kerntune's guard words after its buffers filled three ways, and say whether it reads
    /// or writes past its buffers (its outputs may pass verification anyway); on a database
    /// hit, the stored winner. HIP has no memory checker (said so).
    #[arg(long)]
    memcheck: bool,
    /// At the end of a search, stop waiting for compiles running longer than K times the
    /// median compile (default 3) when nothing else is left to do, the budget counts
    /// evaluations and the strategy need not measure every config: their evaluations go to
    /// other configs. `off` waits for every compile. Compiles still running at a time budget's
    /// end are always abandoned. Overrides the spec's [tune] compile_tail.
    #[arg(long, value_name = "K|off", value_parser = compile_tail)]
    compile_tail: Option<TailFactor>,
    /// Give up on a config whose compile is still running after this long (`120s`, `2m`) of its
    /// own CPU time: it fails as `compile timed out`, stored, and a later tune with a longer
    /// timeout (`--force` where a winner is stored) compiles it again. `off` (the default) waits
    /// for every compile. Overrides the spec's [tune] compile_timeout.
    #[arg(long, value_name = "DURATION|off", value_parser = compile_timeout, allow_hyphen_values = true)]
    compile_timeout: Option<CompileTimeout>,
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

/// The options that decide what a measurement means — its verification and its launch timeout
/// — shared by `tune` and `confirm`, which measures as the shards did when given the same.
#[derive(clap::Args, Debug)]
pub(crate) struct Measuring {
    /// Where expected outputs come from: default (the default config, else the first valid
    /// config that runs), first-valid, none, cpu:NAME, or files of expected outputs
    /// NAME=FILE[,NAME=FILE] (.npy, or raw elements). Overrides the spec's verify.reference.
    #[arg(long)]
    reference: Option<String>,
    /// Absolute tolerance of every output (1e-4), or of named ones (y=1e-4,z=1e-2).
    #[arg(long)]
    atol: Option<String>,
    /// Relative tolerance of every output (1e-5), or of named ones (y=1e-5).
    #[arg(long)]
    rtol: Option<String>,
    /// How named outputs are compared: NAME=sum compares the sum of the output's written
    /// elements (partial results whose number depends on a parameter, such as a partial sum per
    /// block), NAME=sorted its written elements sorted (the same values in an order that differs
    /// between configs), NAME=elements element by element (the default). Overrides the spec's
    /// verify.compare for the outputs named.
    #[arg(long, value_name = "NAME=sum|sorted|elements[,...]")]
    compare: Option<String>,
    /// How many elements of named outputs (compared element by element) may differ from the
    /// reference's and the output still pass: a count (bitmap=10) or a share (bitmap=0.001%),
    /// for outputs where a few elements legitimately differ between correct configs. Overrides
    /// the spec's verify.mismatches for the outputs named (NAME=0 allows none).
    #[arg(long, value_name = "NAME=COUNT|PERCENT%[,...]")]
    mismatches: Option<String>,
    /// Seconds a launch may take before it is recorded as timed out (a kernel that never ends
    /// costs its config this long); overrides the spec's [bench] timeout (default 5). A longer
    /// one than a stored entry was tuned with measures its timed-out configs again.
    #[arg(long, value_name = "SECONDS", value_parser = timeout)]
    timeout: Option<std::time::Duration>,
}

impl Measuring {
    /// `base`'s benchmark settings with the timeout given here.
    pub(crate) fn bench(&self, base: &kerntune::BenchOptions) -> kerntune::BenchOptions {
        kerntune::BenchOptions { timeout: self.timeout.unwrap_or(base.timeout), ..base.clone() }
    }
}

/// `--timeout`: seconds above 0, at most a day.
fn timeout(text: &str) -> Result<std::time::Duration, String> {
    let most = kerntune::spec::settings::MAX_TIMEOUT_SECONDS;
    match text.trim().trim_end_matches('s').parse::<f64>() {
        Ok(v) if v > 0.0 && v <= most => Ok(std::time::Duration::from_secs_f64(v)),
        _ => Err(format!("`{text}` is not a number of seconds above 0 and at most {most} (a day)")),
    }
}

/// `--compile-tail`: a factor, or `None` for `off`.
#[derive(Clone, Copy, Debug)]
struct TailFactor(Option<f64>);

fn compile_tail(text: &str) -> Result<TailFactor, String> {
    kerntune::spec::settings::parse_compile_tail(text).map(TailFactor)
}

/// `--compile-timeout`: a duration, or `None` for `off`.
#[derive(Clone, Copy, Debug)]
struct CompileTimeout(Option<std::time::Duration>);

fn compile_timeout(text: &str) -> Result<CompileTimeout, String> {
    kerntune::spec::settings::parse_compile_timeout(text).map(CompileTimeout)
}

pub(crate) fn parse_key(text: &str, sizes: &[(String, Value)]) -> anyhow::Result<Vec<(String, Value)>> {
    let mut out = sizes.to_vec();
    let mut given = std::collections::HashSet::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once('=').with_context(|| format!("--key: `{part}` is not NAME=VALUE"))?;
        let k = k.trim();
        if !given.insert(k) {
            anyhow::bail!("--key: `{k}` is given more than once; give each problem size once");
        }
        let slot = out.iter_mut().find(|(n, _)| n == k).with_context(|| {
            format!("--key: `{k}` is not a problem size of this spec (sizes: {})", sizes.iter().map(|s| s.0.as_str()).collect::<Vec<_>>().join(", "))
        })?;
        slot.1 = match (&slot.1, kerntune::space::config::parse_value(v)) {
            // A whole number written as a float (`--key N=1e6`) for a size the spec gives as an
            // integer is that integer: the problem is `N=1000000`, as the spec would name it.
            (Value::Int(_), Value::Float(x)) if x.fract() == 0.0 && x.abs() < 9.0e15 => Value::Int(x as i64),
            (_, given) => given,
        };
    }
    Ok(out)
}

/// Applies the flags that change a loaded spec (`tune`'s and `confirm`'s): narrows its problems
/// to those the `--key`s name ([`only_problems`]), sets its verification from the flags
/// ([`verification`]), and checks the result once as the spec's own was when it loaded, so that
/// sizes its expressions cannot take (`--key N=-5`, `N=abc`) and names that are no output
/// (`--atol q=1`, `--reference q=FILE`) are said before a device opens — each as the flag's
/// (the spec as loaded passed: a verification field's error is the verification flags', any
/// other the `--key`s').
pub(crate) fn apply_flags(spec: &mut Spec, keys: &[String], measuring: &Measuring) -> anyhow::Result<()> {
    if !keys.is_empty() {
        only_problems(&mut spec.problems, keys)?;
    }
    let verifying = verification(spec, measuring)?;
    if keys.is_empty() && !verifying {
        return Ok(());
    }
    kerntune::plan::prepare::check(spec).map_err(|e| match keys {
        [] => e.into(),
        _ if e.field.starts_with("verify") => e.into(),
        _ => anyhow::anyhow!("--key {}: {e}", keys.join(" --key ")),
    })
}

/// Narrows a spec's problems to the one `--key` names: the first problem's sizes with the key's
/// values put in.
pub(crate) fn only_problem(problems: &mut Vec<Vec<(String, Value)>>, key: &str) -> anyhow::Result<()> {
    only_problems(problems, std::slice::from_ref(&key.to_string()))
}

/// Narrows a spec's problems to those the `--key`s name, in their order (see [`only_problem`]);
/// a problem named twice is refused (it would be tuned twice).
pub(crate) fn only_problems(problems: &mut Vec<Vec<(String, Value)>>, keys: &[String]) -> anyhow::Result<()> {
    let first = problems.first().cloned().unwrap_or_default();
    // `report --key` narrows by one size per flag (`--key M=4096 --key N=4096`); here each
    // `--key` is a problem of its own, so flags that name no size in common are likelier one
    // problem split up than several problems (which would each take a whole tune).
    let named: Vec<std::collections::HashSet<&str>> =
        keys.iter().map(|k| k.split(',').filter_map(|p| p.split_once('=')).map(|(n, _)| n.trim()).collect()).collect();
    if named.len() > 1 && named.iter().enumerate().all(|(i, a)| named[i + 1..].iter().all(|b| a.is_disjoint(b))) {
        anyhow::bail!(
            "--key: each --key is one problem, and these {} name no size in common; for one problem join them with commas (`--key {}`), for several give each problem's sizes in its own --key",
            keys.len(),
            keys.iter().map(|k| k.trim()).collect::<Vec<_>>().join(",")
        );
    }
    let mut out: Vec<Vec<(String, Value)>> = Vec::new();
    for (i, key) in keys.iter().enumerate() {
        let p = parse_key(key, &first)?;
        if let Some(j) = out.iter().position(|q| *q == p) {
            let shown = p.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(",");
            anyhow::bail!(
                "--key: `{}` (the {} --key) names problem {shown} again, as the {} did; give each problem once",
                key.trim(),
                ordinal(i + 1),
                ordinal(j + 1)
            );
        }
        out.push(p);
    }
    *problems = out;
    Ok(())
}

fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

pub fn run(a: Args) -> anyhow::Result<i32> {
    // A compile-cache bound that is not a size is said before anything is measured (a tune that
    // compiles prunes the caches to it at its end).
    kerntune::store::cache::max_bytes().map_err(|m| anyhow::anyhow!("{m}"))?;
    // From here a signal stops the tune with what it measured (one during a slow device start
    // stops it before it measures).
    let stop = Stop::install();
    let mut spec = kerntune::plan::prepare::load_with(&a.spec, kerntune::LoadOptions { allow_outside_sources: a.allow_outside_sources })?;
    for w in &spec.warnings {
        crate::cli::out::eprint_line(&format!("warning: {w}"));
    }
    apply_flags(&mut spec, &a.key, &a.measuring)?;
    if let Some(sample) = &a.verify_sample {
        spec.verification_mut().sample = VerifySample::parse(sample).map_err(|m| anyhow::anyhow!("--verify-sample: {m}"))?;
    }
    // The spec's settings ([bench], [prune], [tune]), each overridden below by its flag.
    let base = TuneOptions::for_spec(&spec)?;
    let budget = match &a.budget {
        Some(b) => Budget::parse(b).map_err(|m| anyhow::anyhow!("--budget: {m}"))?,
        None => base.budget.clone(),
    };
    let strategy = a.strategy.clone().unwrap_or_else(|| base.strategy.clone());
    if strategy != "auto" {
        kerntune::spec::settings::strategy_named(&strategy).map_err(|m| anyhow::anyhow!("--strategy: {m}"))?;
        kerntune::spec::settings::check_strategy(&strategy, &budget).map_err(|m| anyhow::anyhow!("--budget: {m}"))?;
    } else if budget.within.is_some() {
        // A `%` budget needs a model: the hybrid, unless priors make it the transfer search.
        kerntune::spec::settings::check_strategy("hybrid", &budget).map_err(|m| anyhow::anyhow!("--budget: {m}"))?;
    }
    if a.recheck == Some(0) {
        // It would still measure everything again (--recheck implies --remeasure) and check nothing.
        anyhow::bail!("--recheck: 0 configs checks nothing; give how many other configs to measure again (such as 20), or leave it out");
    }
    if let Some(shard) = a.shard {
        // A shard's winner is the best of its part of the space: it belongs in a file named for
        // the split (merged, confirmed), not in the default database; with none it is lost.
        if a.no_db {
            anyhow::bail!("--shard {shard} with --no-db keeps nothing to merge: give this shard its own --db FILE, or one every shard of the split shares");
        }
        if a.db.is_none() {
            anyhow::bail!(
                "--shard {shard}: give this shard its own --db FILE (then `kerntune db merge`), or one every shard of the split shares, and then `kerntune confirm`; its winner is the best of its part only, not one for the default database"
            );
        }
    }
    for p in &a.prior {
        if !p.exists() {
            anyhow::bail!("--prior: {}: no such file", p.display());
        }
        // Said now: a tune that needs no priors (a database hit, a small space searched
        // exhaustively) would never read it.
        if p.is_dir() {
            anyhow::bail!("--prior: {}: a folder, not a file; name the files in it (`{}/*.json.gz`, say)", p.display(), p.display());
        }
    }
    let prior = match (a.no_prior, a.prior.is_empty()) {
        (true, _) => kerntune::PriorSetting::Off,
        (false, false) => kerntune::PriorSetting::Files(a.prior.clone()),
        (false, true) => kerntune::PriorSetting::Database,
    };
    let devices = match (&a.devices, a.device, &spec.devices) {
        (Some(d), _, _) => d.clone(),
        (None, Some(d), _) => Devices::List(vec![d]),
        (None, None, Some(text)) => text.parse().map_err(|m| anyhow::anyhow!("{}: tune.devices: {m}", spec.path.display()))?,
        (None, None, None) => Devices::List(vec![0]),
    };
    // A --db that is a folder, or a file that is no kerntune database (another program's, another
    // tuner's, another version's), is said before the device opens and the problem is made, not
    // when the first lookup fails.
    let db = if a.no_db { None } else { Some(Database::at(super::db_path(&a.db))) };
    if let Some(db) = &db {
        db.check().map_err(|e| if a.db.is_some() { anyhow::anyhow!("--db: {e}") } else { e.into() })?;
    }
    let opened = super::open_devices(a.backend, &devices, if a.devices.is_some() { "--devices: " } else { "" })?;
    tracing::debug!("devices opened");
    let backends = opened.backends;
    if !a.json {
        super::say_left_out(&opened.left_out);
    }
    if !a.no_db {
        super::say_json_db(&a.db);
    }
    let opts = TuneOptions {
        strategy,
        seed: a.seed.unwrap_or(base.seed),
        budget,
        db,
        force: a.force,
        remeasure: a.remeasure || a.recheck.is_some(),
        recheck: a.recheck.unwrap_or(0),
        memcheck: a.memcheck,
        compile_threads: a.jobs.map(usize::from),
        prior,
        compile_tail: a.compile_tail.map_or(base.compile_tail, |t| t.0),
        compile_timeout: a.compile_timeout.map_or(base.compile_timeout, |t| t.0),
        bench: a.measuring.bench(&base.bench),
        ..base
    };
    let work = match a.shard {
        Some(shard) => shard.assign(spec.problems.len()),
        None => (0..spec.problems.len()).map(|p| (p, None)).collect(),
    };
    if work.is_empty() {
        outln!(
            "shard {}: no problem falls to this shard (the spec has {}); nothing to do",
            a.shard.map(|s| s.to_string()).unwrap_or_default(),
            spec.problems.len()
        );
        return Ok(0);
    }
    let run = Run { spec: &spec, top: a.top, json: a.json, work, shown_shard: a.shard, stop: &stop };
    let code = with_backends!(backends, v => tune_all(v, &run, opts));
    tracing::debug!("devices closed");
    code
}

/// The `NAME=VALUE` parts of a per-output flag's text (`--compare y=sorted,z=sum`): each
/// output's name (trimmed), its value and the part it came from (for messages); a part without
/// `=` is an error saying the `form` a part takes.
fn named_values<'t>(flag: &'t str, form: &'t str, text: &'t str) -> impl Iterator<Item = anyhow::Result<(String, &'t str, &'t str)>> + 't {
    text.split(',').map(str::trim).filter(|p| !p.is_empty()).map(move |part| {
        let (name, value) = part.split_once('=').ok_or_else(|| anyhow::anyhow!("{flag}: `{}` is not {form}", kerntune::spec::error::quote(part)))?;
        Ok((name.trim().to_string(), value, part))
    })
}

/// Sets a spec's verification from the flags; whether any was given (the spec then wants the
/// check [`apply_flags`] makes).
fn verification(spec: &mut Spec, a: &Measuring) -> anyhow::Result<bool> {
    let v = spec.verification_mut();
    if let Some(r) = &a.reference {
        v.reference = Reference::parse(r, std::path::Path::new(".")).map_err(|m| anyhow::anyhow!("--reference: {m}"))?;
    }
    for pair in a.compare.iter().flat_map(|t| named_values("--compare", "NAME=sum, NAME=sorted or NAME=elements", t)) {
        let (name, how, part) = pair?;
        let how = kerntune::spec::job::Compare::parse(how).map_err(|m| anyhow::anyhow!("--compare {}: {m}", kerntune::spec::error::quote(part)))?;
        v.compare.retain(|(n, _)| *n != name);
        if let Some(c) = how {
            v.compare.push((name, c));
        }
    }
    for pair in a.mismatches.iter().flat_map(|t| named_values("--mismatches", "NAME=COUNT or NAME=PERCENT%", t)) {
        let (name, how, part) = pair?;
        let allowance = kerntune::spec::job::Allowance::parse(how).map_err(|m| anyhow::anyhow!("--mismatches {}: {m}", kerntune::spec::error::quote(part)))?;
        v.mismatches.retain(|(n, _)| *n != name);
        if allowance.allows_any() {
            v.mismatches.push((name, allowance));
        }
    }
    for (flag, text, set) in [("--atol", &a.atol, 0usize), ("--rtol", &a.rtol, 1)] {
        let Some(text) = text else { continue };
        let parse = |x: &str| -> anyhow::Result<f64> {
            let t: f64 = x.trim().parse().map_err(|_| anyhow::anyhow!("{flag}: `{}` is not a number", kerntune::spec::error::quote(x)))?;
            if !(t.is_finite() && t >= 0.0) {
                anyhow::bail!("{flag}: {t} is not a tolerance (a number of at least 0)");
            }
            Ok(t)
        };
        if !text.contains('=') {
            let t = parse(text)?;
            if set == 0 {
                v.tolerance.atol = t
            } else {
                v.tolerance.rtol = t
            }
            v.per_output.iter_mut().for_each(|(_, tol)| if set == 0 { tol.atol = t } else { tol.rtol = t });
            continue;
        }
        for pair in named_values(flag, "NAME=VALUE", text) {
            let (name, x, _) = pair?;
            let t = parse(x)?;
            let base = v.tolerance;
            let slot = match v.per_output.iter_mut().position(|(n, _)| *n == name) {
                Some(i) => &mut v.per_output[i].1,
                None => {
                    v.per_output.push((name, base));
                    &mut v.per_output.last_mut().expect("pushed").1
                }
            };
            if set == 0 {
                slot.atol = t
            } else {
                slot.rtol = t
            }
        }
    }
    Ok(a.reference.is_some() || a.compare.is_some() || a.mismatches.is_some() || a.atol.is_some() || a.rtol.is_some())
}

/// What a `tune` command runs: the spec, which problems (with this shard's part of each), and
/// how to print.
struct Run<'a> {
    spec: &'a Spec,
    top: usize,
    json: bool,
    work: Vec<(usize, Option<Shard>)>,
    shown_shard: Option<Shard>,
    stop: &'a Stop,
}

/// What an interrupted tune says of its measurements where the database could not take them.
pub(crate) const NOT_WRITTEN: &str = "not all written to the database (the warning above says where the rest were kept)";

fn saved_where(opts: &TuneOptions) -> String {
    match opts.db.as_ref() {
        Some(d) => format!("written to {}", d.path().display()),
        None => "not saved (--no-db)".into(),
    }
}

fn interrupted(name: &str, problem: &str, kept: usize, timed_once: usize, saved: &str, compiling: usize) -> String {
    let dropped = if compiling > 0 { format!(" ({compiling} queued or compiling config(s) dropped)") } else { String::new() };
    if kept == 0 {
        return format!("interrupted by {name} while tuning {problem}: no config measured in this run yet{dropped}; run the same command to start again");
    }
    let once = match timed_once {
        0 => String::new(),
        n if n == kept => " (each by its verification launch alone: the next run measures the fastest in full before it picks)".to_string(),
        n => format!(" ({n} of them by their verification launch alone: the next run measures the fastest in full before it picks)"),
    };
    format!("interrupted by {name} while tuning {problem}: {kept} config(s) measured in this run{once}, {saved}{dropped}; run the same command to resume")
}

fn tune_all<B: Backend>(devices: Vec<B>, run: &Run<'_>, mut opts: TuneOptions) -> anyhow::Result<i32> {
    let (spec, stop) = (run.spec, run.stop);
    opts.cancel = Some(stop.flag.clone());
    opts.wrap_up = Some(stop.wrap.clone());
    let language = devices[0].language();
    let target = devices[0].target().clone();
    let timing = devices[0].timing_method();
    let count = devices.len();
    let tuner = Tuner::with_devices(devices).map_err(|e| anyhow::anyhow!("--devices: {e}"))?;
    if !run.json {
        let on = if count > 1 { format!("{count} × {}", target.name) } else { target.name.clone() };
        let shard = run.shown_shard.map(|s| format!(", shard {s}")).unwrap_or_default();
        crate::cli::out::eprint_line(&format!("kerntune: {} on {on} [{}], timing: {timing}{shard}", spec.kernel, target.backend));
    }
    let mut reports: Vec<TuneReport> = Vec::new();
    let mut failed = 0usize;
    let mut unsaved = 0usize;
    for &(i, part) in &run.work {
        let job = spec.job(language, i)?;
        // One unit until the plan gives the count: a bar of none is drawn full.
        let pb = if run.json { ProgressBar::hidden() } else { ProgressBar::new(1) };
        let ends = Arc::new(std::sync::atomic::AtomicU64::new(u64::MAX));
        pb.set_style(eta_style(ends.clone()));
        let sizes = job.sizes.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(",");
        // What names this problem: its sizes, or the kernel where the spec has none (T1's).
        let problem = if sizes.is_empty() { spec.kernel.to_string() } else { sizes.clone() };
        pb.set_prefix(problem.clone());
        if !run.json {
            // Elapsed time and a time budget's time left move on while no config finishes.
            pb.enable_steady_tick(std::time::Duration::from_millis(250));
        }
        let counters = Arc::new(Mutex::new(Counters { ends, ..Counters::default() }));
        let pb2 = pb.clone();
        let mut o = TuneOptions { shard: part, ..opts.clone() };
        let (which, saved, sizes2) = (stop.which(), saved_where(&opts), problem.clone());
        let signal = stop.signal.clone();
        o.observer = Some(Arc::new(move |e: &Event<'_>| match e {
            Event::Interrupted { kept, timed_once, compiling, saved: written } => {
                // Everything measured is written (or kept elsewhere, and a warning said where):
                // exit now rather than wait for the compiles in progress (they would be thrown
                // away).
                pb2.finish_and_clear();
                let (name, code) = Stop::named(signal.load(std::sync::atomic::Ordering::Relaxed)).unwrap_or(which);
                let saved = if *written { saved.clone() } else { NOT_WRITTEN.to_string() };
                crate::cli::out::eprint_line(&interrupted(name, &sizes2, *kept, *timed_once, &saved, *compiling));
                kerntune::exit(code);
            }
            Event::Planned { candidates, budget, pruned, seconds, .. } => {
                let mut c = counters.lock().expect("counters");
                c.planned = budget.map_or(*candidates, |b| b.min(*candidates));
                c.pruned_before = *pruned;
                c.show(&pb2);
                if let Some(limit) = *seconds {
                    // A time budget ends the tune, not the count: its time left, not an estimate
                    // from the rate configs finish at.
                    pb2.set_style(time_budget_style(limit, kerntune::measure::awake::Since::now()));
                }
            }
            Event::Compiled { .. } => {
                let mut c = counters.lock().expect("counters");
                c.compiled += 1;
                c.show(&pb2);
            }
            Event::Warning { message } => pb2.suspend(|| crate::cli::out::eprint_line(&format!("warning: {message}"))),
            Event::Verified { config, .. } => {
                let mut c = counters.lock().expect("counters");
                c.verified(config.key(), pb2.elapsed().as_secs_f64());
                c.show(&pb2);
            }
            Event::Result { result, best } => {
                let mut c = counters.lock().expect("counters");
                c.result(result.config.key(), result.stats().is_some(), *best, pb2.elapsed().as_secs_f64());
                c.show(&pb2);
            }
        }));
        let r = tuner.tune(&job, &o);
        pb.finish_and_clear();
        let stopped = match &r {
            Err(kerntune::Error::Interrupted { kept, .. }) => Some(*kept),
            _ if stop.requested() => Some(0),
            _ => None,
        };
        let saved = match &r {
            Err(kerntune::Error::Interrupted { saved: false, .. }) if opts.db.is_some() => NOT_WRITTEN.to_string(),
            _ => saved_where(&opts),
        };
        if let Some(kept) = stopped {
            if let Ok(r) = r {
                if !run.json {
                    summary::print(&r, run.top, opts.db.as_ref().map(|d| d.path()))?;
                }
                reports.push(r);
            }
            let (name, code) = stop.which();
            crate::cli::out::eprint_line(&interrupted(name, &problem, kept, 0, &saved, 0));
            if run.json {
                outln!("{}", serde_json::to_string_pretty(&reports)?);
            }
            return Ok(code);
        }
        // One problem failing does not stop the others; the command fails at the end.
        let what = if sizes.is_empty() { spec.kernel.to_string() } else { format!("{} ({sizes})", spec.kernel) };
        let r = match r.with_context(|| format!("{}: tuning {what}", spec.path.display())) {
            Ok(r) => r,
            Err(e) if run.work.len() > 1 => {
                crate::cli::out::eprint_line(&format!("error: {}", crate::cli::chain(&e)));
                failed += 1;
                continue;
            }
            Err(e) => return Err(e),
        };
        if !run.json {
            // Several problems in one run: each summary under the problem it is for.
            if run.work.len() > 1 {
                outln!("== problem {sizes}");
            }
            summary::print(&r, run.top, opts.db.as_ref().map(|d| d.path()))?;
        }
        if let Some(u) = &r.unsaved {
            crate::cli::out::eprint_line(&format!("error: {}", u.line()));
            unsaved += 1;
        }
        reports.push(r);
        // Told to end early (SIGUSR1, SIGUSR2): the problems left are not started.
        if let (Some((name, code)), true) = (stop.wrapped(), reports.len() + failed < run.work.len()) {
            if run.json {
                outln!("{}", serde_json::to_string_pretty(&reports)?);
            } else if reports.len() > 1 {
                summary::print_problems(&reports)?;
            }
            crate::cli::out::eprint_line(&format!(
                "ended early by {name}: {} of {} problems tuned, the rest not started; run the same command to tune them",
                reports.len(),
                run.work.len()
            ));
            return Ok(code);
        }
    }
    if run.json {
        outln!("{}", serde_json::to_string_pretty(&reports)?);
    } else if reports.len() > 1 {
        summary::print_problems(&reports)?;
    }
    if failed > 0 {
        anyhow::bail!("{failed} of {} problems failed to tune (see above); the others were tuned and stored", run.work.len());
    }
    // Tuned, but not stored: the next run would tune again.
    Ok(if unsaved > 0 { 1 } else { 0 })
}

/// What a tune's progress line counts.
///
/// The bar counts two kinds of work: a config's first outcome (verified, raced, failed) and,
/// for a config that waits on the shortlist after its verification launch, its measurement in
/// full. The shortlist is measured once nothing compiled waits for the device, often after
/// every config was met (on llvmpipe an exhaustive matmul spent half its time there): a bar of
/// first outcomes alone stood full, `eta 0s`, all that while. How many configs the shortlist
/// will take is projected from the share of those met so far that waited on it.
///
/// The eta takes each kind at its own pace: a measurement in full can take far less than a
/// first outcome (on an H100, SGEMM 410's shortlist of 408 was measured in under a second
/// after 7 s to meet them, racing most out in two launches) or more (llvmpipe), so one rate
/// over both, indicatif's, was off by the shortlist's whole time.
#[derive(Default)]
struct Counters {
    /// Where the eta ends, in the bar's elapsed seconds × 1000 (`u64::MAX`: not known yet),
    /// read by the bar's `left` key between events.
    ends: Arc<std::sync::atomic::AtomicU64>,
    /// The bar's elapsed seconds at the first and at the last first outcome.
    first_s: Option<f64>,
    last_first_s: f64,
    /// The bar's elapsed seconds at the first and the last measurement in full of a config on
    /// the shortlist.
    in_full_s: Option<(f64, f64)>,
    /// Configs the tune will meet: the candidates, or fewer under an evaluation budget.
    planned: usize,
    compiled: usize,
    measured: usize,
    failed: usize,
    pruned_before: usize,
    /// Configs verified and waiting on the shortlist to be measured in full.
    waiting: std::collections::HashSet<String>,
    /// Configs put on the shortlist and measured in full since (with those still `waiting`, the
    /// configs put on it so far).
    listed_done: usize,
    /// Configs the bar has counted (verified or final: each once).
    counted: std::collections::HashSet<String>,
    best: Option<f64>,
}

impl Counters {
    /// A config verified by one launch, waiting on the shortlist to be measured in full; `at`:
    /// the bar's elapsed seconds.
    fn verified(&mut self, key: String, at: f64) {
        if self.counted.insert(key.clone()) {
            self.met_at(at);
        }
        self.waiting.insert(key);
    }

    /// A config's final outcome: measured (`ok`) or failed; `at`: the bar's elapsed seconds.
    fn result(&mut self, key: String, ok: bool, best: Option<f64>, at: f64) {
        if ok {
            self.measured += 1;
        } else {
            self.failed += 1;
        }
        if self.waiting.remove(&key) {
            self.listed_done += 1;
            self.in_full_s = Some((self.in_full_s.map_or(at, |t| t.0), at));
        }
        if self.counted.insert(key) {
            self.met_at(at);
        }
        self.best = best;
    }

    /// A config met for the first time at `at` (the bar's elapsed seconds).
    fn met_at(&mut self, at: f64) {
        self.first_s.get_or_insert(at);
        self.last_first_s = at;
    }

    /// Seconds left: the first outcomes to come at the pace they came so far (from the first
    /// one, once three are in: opening the device, making the problem and the first compiles
    /// come before any, at no pace of the outcomes), and the measurements in full to come at
    /// theirs once three are in (until then, at the first outcomes' pace). `None` before any
    /// outcome.
    fn seconds_left(&self) -> Option<f64> {
        let met = self.counted.len();
        if met == 0 {
            return None;
        }
        let first = match self.first_s {
            Some(start) if met >= 3 => (self.last_first_s - start) / (met - 1) as f64,
            _ => self.last_first_s / met as f64,
        };
        let in_full = match self.in_full_s {
            Some((a, b)) if self.listed_done >= 3 => (b - a) / (self.listed_done - 1) as f64,
            _ => first,
        };
        let firsts_left = self.planned.saturating_sub(met) as f64;
        let in_full_left = (self.listed_projected() - self.listed_done) as f64;
        Some(firsts_left * first + in_full_left * in_full)
    }

    /// The bar's work done: first outcomes and measurements in full.
    fn position(&self) -> u64 {
        (self.counted.len() + self.listed_done) as u64
    }

    /// The configs the shortlist will have taken by the tune's end: those put on it so far,
    /// projected to the configs not met yet.
    fn listed_projected(&self) -> usize {
        let met = self.counted.len();
        let listed = self.listed_done + self.waiting.len();
        if met == 0 {
            return listed;
        }
        (listed * self.planned.max(met)).div_ceil(met).max(listed)
    }

    /// The bar's work in all: every planned config's first outcome, and the shortlist's
    /// measurements in full.
    fn length(&self) -> u64 {
        (self.planned.max(self.counted.len()) + self.listed_projected()) as u64
    }

    fn show(&self, pb: &ProgressBar) {
        let ends = self.seconds_left().map_or(u64::MAX, |left| ((pb.elapsed().as_secs_f64() + left) * 1e3) as u64);
        self.ends.store(ends, std::sync::atomic::Ordering::Relaxed);
        pb.set_length(self.length());
        pb.set_position(self.position());
        pb.set_message(self.line());
    }

    fn line(&self) -> String {
        let waiting = if self.waiting.is_empty() { String::new() } else { format!(" | verified, to measure {}", self.waiting.len()) };
        format!(
            "{}/{} configs | compiled {} | measured {}{waiting} | failed/pruned {} | pruned before {} | best {}",
            self.counted.len(),
            self.planned.max(self.counted.len()),
            self.compiled,
            self.measured,
            self.failed,
            self.pruned_before,
            self.best.map_or("-".to_string(), |b| format!("{:.4} ms", b * 1e3))
        )
    }
}

/// The progress bar of a tune: its eta counts down to where the last outcome put the end
/// (`ends`, see [`Counters::seconds_left`]), `-` before the first.
fn eta_style(ends: Arc<std::sync::atomic::AtomicU64>) -> ProgressStyle {
    ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {msg} (eta {left})")
        .expect("valid template")
        .with_key("left", move |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
            let _ = match ends.load(std::sync::atomic::Ordering::Relaxed) {
                u64::MAX => write!(w, "-"),
                end => {
                    let left = (end as f64 / 1e3 - state.elapsed().as_secs_f64()).max(0.0);
                    // Compact (`38s`, `4m`), as indicatif's own eta.
                    write!(w, "{:#}", indicatif::HumanDuration(std::time::Duration::from_secs_f64(left)))
                }
            };
        })
        .progress_chars("=> ")
}

/// The progress bar of a tune with a time budget of `limit` seconds: the time left instead of
/// an estimate from the count, counted from `since` (the plan made, as the tune's own clock is)
/// in time awake, as the budget is (a tune stopped with Ctrl-Z and continued has the time it
/// had; the bar's elapsed time said less).
fn time_budget_style(limit: f64, since: kerntune::measure::awake::Since) -> ProgressStyle {
    ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {msg} ({left} of the time budget left)")
        .expect("valid template")
        .with_key("left", move |_: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
            let left = (limit - since.elapsed().as_secs_f64()).max(0.0);
            let _ = write!(w, "{}", indicatif::HumanDuration(std::time::Duration::from_secs_f64(left)));
        })
        .progress_chars("=> ")
}

#[cfg(test)]
mod tests {
    use super::Counters;

    /// A whole number written as a float is the integer a size the spec gives as one takes;
    /// other values are kept as written (and checked against the spec's expressions later).
    #[test]
    fn a_key_s_whole_float_is_an_integer_size() {
        use kerntune::spec::value::Value;
        let sizes = vec![("N".to_string(), Value::Int(4096)), ("alpha".to_string(), Value::Float(0.5))];
        let k = super::parse_key("N=1e6, alpha=2", &sizes).unwrap();
        assert_eq!(k, vec![("N".to_string(), Value::Int(1_000_000)), ("alpha".to_string(), Value::Int(2))]);
        let k = super::parse_key("N=4096.5,alpha=1e0", &sizes).unwrap();
        assert_eq!(k, vec![("N".to_string(), Value::Float(4096.5)), ("alpha".to_string(), Value::Float(1.0))]);
    }

    /// An exhaustive tune whose configs all wait on the shortlist: the bar is half full once
    /// every config was met, and full once the shortlist is measured.
    #[test]
    fn the_bar_counts_the_shortlists_measurements_in_full() {
        let mut c = Counters { planned: 4, ..Counters::default() };
        c.verified("a".into(), 1.0);
        assert_eq!((c.position(), c.length()), (1, 8), "one of four met and listed: four more projected");
        c.result("b".into(), false, None, 2.0);
        assert_eq!((c.position(), c.length()), (2, 6), "a failure takes no measurement in full");
        c.verified("c".into(), 3.0);
        c.verified("d".into(), 4.0);
        assert_eq!((c.position(), c.length()), (4, 7), "every config met, three waiting");
        assert!(c.line().starts_with("4/4 configs") && c.line().contains("verified, to measure 3"), "{}", c.line());
        for k in ["d", "a", "c"] {
            c.result(k.into(), true, Some(1e-3), 4.5);
        }
        assert_eq!((c.position(), c.length()), (7, 7));
        assert!(c.line().contains("measured 3 |") && !c.line().contains("to measure"), "{}", c.line());
    }

    /// The eta takes the shortlist's measurements in full at their own pace once three are in.
    #[test]
    fn the_eta_takes_each_stage_at_its_own_pace() {
        let mut c = Counters { planned: 10, ..Counters::default() };
        assert_eq!(c.seconds_left(), None);
        for i in 0..5 {
            c.verified(format!("c{i}"), (i + 1) as f64);
        }
        // Five first outcomes a second apart, each put on the shortlist: five more to meet and
        // ten to measure in full, at that pace until a measurement in full is timed.
        assert_eq!(c.seconds_left(), Some(15.0));
        for i in 5..10 {
            c.verified(format!("c{i}"), (i + 1) as f64);
        }
        assert_eq!(c.seconds_left(), Some(10.0));
        for (i, at) in [10.1, 10.2, 10.3].into_iter().enumerate() {
            c.result(format!("c{i}"), true, Some(1e-3), at);
        }
        // Three measured in full a tenth of a second apart: seven left at that pace.
        assert!((c.seconds_left().unwrap() - 0.7).abs() < 1e-9, "{:?}", c.seconds_left());
        // Outcomes a tenth of a second apart after five seconds of opening the device and the
        // first compiles: at their pace, not the startup's (on an H100 the eta of an SGEMM that
        // ended 9 s later said 26 s at 2 s).
        let mut c = Counters { planned: 100, ..Counters::default() };
        for i in 0..10 {
            c.result(format!("c{i}"), true, Some(1e-3), 5.0 + 0.1 * i as f64);
        }
        assert!((c.seconds_left().unwrap() - 9.0).abs() < 1e-9, "90 left at 0.1 s: {:?}", c.seconds_left());
    }
}
