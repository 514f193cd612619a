//! `kerntune check FILE`: load a spec (TOML or T1) without a device and print its space —
//! cartesian size, valid configs, the default config and its launch — and its arguments.

use kerntune::plan::expand::expand;
use kerntune::plan::prepare::{check, LayoutKind};
use kerntune::plan::summary::{prune_forecast, summarize, PruneForecast, SpaceSummary};
use kerntune::spec::job::ArgKind;
use kerntune::spec::problem::{human_bytes, Access};
use kerntune::{Limits, LoadOptions, Memory, Spec};
use std::path::PathBuf;
use std::time::Duration;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The spec: a kerntune TOML file or a T1 JSON file.
    file: PathBuf,
    /// A device preset (a100, h100, h200, mi250x, mi300x, rx7900xtx, llvmpipe) or its
    /// architecture: a vendor generator's spec ([roles]) generates its configs for it; any
    /// other spec is told how many of its valid configs fit it before compiling (threads,
    /// shared memory, grid, occupancy) and why the others do not.
    #[arg(long)]
    target: Option<String>,
    /// The kernel language to check the sources of (wgsl, cuda, hip); default: the first the spec has.
    #[arg(long)]
    language: Option<String>,
    /// Stop counting valid configs after this many seconds (the count is then a lower bound);
    /// with --target, the look at which fit that device stops after as many.
    #[arg(long, default_value_t = 60.0)]
    count_seconds: f64,
    /// Also list the first N valid configs with their grid and block.
    #[arg(long, default_value_t = 0)]
    launches: usize,
    /// Allow kernel sources outside the spec's folder.
    #[arg(long)]
    allow_outside_sources: bool,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args) -> anyhow::Result<i32> {
    if !(a.count_seconds.is_finite() && a.count_seconds > 0.0 && a.count_seconds <= 86_400.0) {
        anyhow::bail!("--count-seconds: give a number of seconds between 0 and 86400");
    }
    let spec = Spec::load_with(&a.file, LoadOptions { allow_outside_sources: a.allow_outside_sources })?;
    check(&spec)?;
    // Unless one is asked for, the first language whose source reads (the others' are warned
    // about below), else the first the spec has, whose error then says what is wrong.
    let language = match &a.language {
        Some(l) => l.clone(),
        None => spec.sources.keys().find(|l| spec.job(l, 0).is_ok()).or_else(|| spec.sources.keys().next()).cloned().unwrap_or_else(|| "cuda".into()),
    };
    let preset = match &a.target {
        Some(t) => Some(super::target_preset(t)?),
        None => None,
    };
    let first = spec.job(&language, 0)?;
    let mut warnings = spec.warnings.clone();
    warnings.extend(first.unused_params());
    // The other languages' sources are read too: a missing or unreadable one (for a backend
    // this machine may not have) would otherwise surface only when tuning there.
    for other in spec.sources.keys().filter(|l| **l != language) {
        let backend = if other == "wgsl" { "wgpu" } else { other.as_str() };
        match spec.job(other, 0) {
            Err(e) => warnings.push(format!("{e} (a tune with --backend {backend} would stop there)")),
            Ok(job) => warnings.extend(job.unused_params().into_iter().map(|w| format!("{w} (with --backend {backend})"))),
        }
    }
    let mut problems = Vec::new();
    for i in 0..spec.problems.len() {
        let job = spec.job(&language, i)?;
        if job.generate.is_some() && preset.is_none() {
            anyhow::bail!("{}: the configs of this spec come from a vendor generator; pass --target (e.g. --target h100) to generate them", a.file.display());
        }
        let (target, limits) = preset.clone().unwrap_or_else(|| Limits::preset("h100").expect("a preset"));
        let expanded = expand(&job, &target, &limits)?;
        // How each input buffer is filled (`random (seed 1)`, `file ./x.npy`), for the listing.
        let fills = job
            .args
            .iter()
            .map(|a| match &a.kind {
                ArgKind::Buffer { init, access, .. } if *access != Access::Write => Some(init.describe()),
                _ => None,
            })
            .collect::<Vec<_>>();
        // A device named for a spec of its own configs: what pruning before compiling would
        // keep there (a generator's spec is generated for it, pruned already).
        let forecast = match (&preset, job.generate.is_none()) {
            (Some((target, limits)), true) => {
                let prep = kerntune::plan::prepare::Prepared::without_data(&job, None)?;
                let prune = kerntune::TuneOptions::for_spec(&spec)?.prune;
                Some(prune_forecast(&prep, target, limits, &prune, std::time::Instant::now() + Duration::from_secs_f64(a.count_seconds)))
            }
            _ => None,
        };
        problems.push((summarize(&expanded, Duration::from_secs_f64(a.count_seconds), a.launches)?, fills, forecast));
    }
    let verification = first.verify.in_full(None);
    // The user's own headers the source includes, which are part of the kernel's identity.
    let headers: Vec<(&str, &str)> = first.source.headers.iter().map(|h| (h.name.as_str(), h.path.as_str())).collect();
    if a.json {
        let out = serde_json::json!({
            "verification": verification,
            "file": a.file,
            "kernel": spec.kernel,
            "language": language,
            "sources": spec.sources,
            "headers": headers.iter().map(|(name, path)| serde_json::json!({ "name": name, "path": path })).collect::<Vec<_>>(),
            "strategy": spec.strategy,
            "budget": spec.budget,
            "warnings": warnings,
            // Each problem's summary, with how each argument is filled (`null` for outputs and
            // scalars), in argument order.
            "problems": problems
                .iter()
                .map(|(p, fills, forecast)| {
                    let mut v = serde_json::to_value(p)?;
                    v["fills"] = serde_json::json!(fills);
                    if let Some(f) = forecast {
                        v["pruned_on_target"] = serde_json::to_value(f)?;
                    }
                    Ok(v)
                })
                .collect::<anyhow::Result<Vec<_>>>()?,
        });
        crate::cli::out::println(&serde_json::to_string_pretty(&out)?)?;
        return Ok(0);
    }
    let mut text = format!(
        "{}: kernel `{}` ({language}, {})\n",
        a.file.display(),
        spec.kernel,
        spec.sources.get(&language).map(|p| p.display().to_string()).unwrap_or_else(|| "no source".into())
    );
    // The other languages' sources, read and checked above (a problem with one is a warning).
    let others: Vec<String> = spec.sources.iter().filter(|(l, _)| **l != language).map(|(l, p)| format!("{l} {}", p.display())).collect();
    if !others.is_empty() {
        text.push_str(&format!("other sources (read too; `--language` checks one in full): {}\n", others.join(", ")));
    }
    if !headers.is_empty() {
        let list: Vec<String> = headers.iter().map(|(name, path)| format!("{name} ({path})")).collect();
        text.push_str(&format!("headers (read with the source; an edit makes a new kernel): {}\n", list.join(", ")));
    }
    if let Some(s) = &spec.strategy {
        text.push_str(&format!("search: {s}{}\n", spec.budget.as_ref().map(|b| format!(", budget {b}")).unwrap_or_default()));
    }
    for (p, fills, forecast) in &problems {
        text.push_str(&describe(p, fills, forecast.as_ref()));
    }
    text.push_str(&format!("verification: {verification}\n"));
    for w in &warnings {
        text.push_str(&format!("warning: {w}\n"));
    }
    crate::cli::out::print(&text)?;
    Ok(0)
}

fn describe(p: &SpaceSummary, fills: &[Option<String>], forecast: Option<&PruneForecast>) -> String {
    let mut s = String::new();
    if !p.sizes.is_empty() {
        s.push_str(&format!("\nproblem: {}\n", p.sizes.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", ")));
    } else {
        s.push('\n');
    }
    s.push_str(&format!("parameters ({}):\n", p.params.len()));
    // One column for the values, however long a name is (`loop_unroll_factor_channel`).
    let width = p.params.iter().map(|q| q.name.chars().count()).max().unwrap_or(0).max(24);
    for q in &p.params {
        let shown: Vec<String> = q.values.iter().map(|v| v.to_string()).collect();
        let more = if q.count > q.values.len() { format!(", … ({} values)", q.count) } else { String::new() };
        s.push_str(&format!("  {:<width$} {}{more}\n", q.name, shown.join(", ")));
    }
    let valid = if p.valid_complete { group(p.valid as u128) } else { format!("at least {} (counting stopped; see --count-seconds)", group(p.valid as u128)) };
    let restrictions = format!("{} restriction{}", p.restrictions, if p.restrictions == 1 { "" } else { "s" });
    match p.generated {
        Some(g) => s.push_str(&format!("space: {g} generated configs, {valid} valid ({restrictions})\n")),
        None => s.push_str(&format!("space: {} combinations, {valid} valid ({restrictions})\n", group(p.cartesian))),
    }
    if let Some(f) = forecast {
        let of = if f.complete {
            format!("{} valid configs", group(f.checked as u128))
        } else {
            format!("the first {} valid configs (looking stopped; see --count-seconds)", group(f.checked as u128))
        };
        s.push_str(&format!("on {}, before compiling: {} of {of} fit", f.target, group(f.fit as u128)));
        if f.pruned.is_empty() {
            s.push('\n');
        } else {
            s.push_str("; a tune there prunes the rest (and more from the compiler's report):\n");
            for (why, (n, example)) in &f.pruned {
                s.push_str(&format!("  pruned {why}: {}  (e.g. {example})\n", group(*n as u128)));
            }
        }
    }
    s.push_str(&format!("default: {}{}\n", p.default, if p.default_valid { "" } else { " (breaks a restriction; kept as a candidate)" }));
    match (&p.default_launch, &p.default_launch_error) {
        (Some(l), _) => s.push_str(&format!(
            "launch of the default: grid {} × {} × {}, block {} × {} × {}, {} of dynamic shared memory\n",
            l.grid[0],
            l.grid[1],
            l.grid[2],
            l.block[0],
            l.block[1],
            l.block[2],
            human_bytes(l.shared_mem_bytes as u64)
        )),
        (None, e) => s.push_str(&format!("launch of the default: cannot be computed: {}\n", e.as_deref().unwrap_or("?"))),
    }
    for c in &p.launches {
        match &c.launch {
            Some(l) => s.push_str(&format!("  {}: grid {:?}, block {:?}\n", c.config, l.grid, l.block)),
            None => s.push_str(&format!("  {}: {}\n", c.config, c.error.as_deref().unwrap_or("?"))),
        }
    }
    s.push_str(&format!("arguments ({}, {} of buffers):\n", p.args.len(), human_bytes(p.total_bytes)));
    for (i, a) in p.args.iter().enumerate() {
        match &a.kind {
            LayoutKind::Buffer { elements, bytes, access, memory } => {
                let fill = fills.get(i).cloned().flatten().map(|f| format!(", {f}")).unwrap_or_default();
                let mem = match memory {
                    Memory::Global => String::new(),
                    Memory::Constant { argument: true } => ", __constant__ (and an argument)".into(),
                    Memory::Constant { argument: false } => ", __constant__".into(),
                };
                s.push_str(&format!(
                    "  {:<20} {:<7} {:>14} elements {:>10}  {}{mem}{fill}\n",
                    a.name,
                    format!("{:?}", a.dtype).to_lowercase(),
                    group(*elements as u128),
                    human_bytes(*bytes),
                    format!("{access:?}").to_lowercase()
                ));
            }
            LayoutKind::Scalar { value } => s.push_str(&format!("  {:<20} {:<7} = {value}\n", a.name, format!("{:?}", a.dtype).to_lowercase())),
        }
    }
    s
}

/// `17956` → `17,956`.
fn group(n: u128) -> String {
    let d = n.to_string();
    let mut out = String::new();
    for (i, c) in d.chars().enumerate() {
        if i > 0 && (d.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
