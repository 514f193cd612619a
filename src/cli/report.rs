//! `kerntune report`: one self-contained HTML page of the database entries of a kernel — no GPU
//! needed.

use crate::cli::out::outln;
use anyhow::Context;
use kerntune::analysis::{EntryView, Hints};
use kerntune::html::{page, Source};
use kerntune::plan::prepare::Prepared;
use kerntune::store::db::{Database, DbError, DbFile, Entry};
use kerntune::{LoadOptions, Spec};
use std::path::PathBuf;
use std::time::Instant;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The spec whose kernel to show (every device and problem size in the database, unless
    /// --key or --target narrow it); it also marks the default config and supplies FLOP and
    /// byte formulas to records made without them.
    spec: Option<PathBuf>,
    /// The kernel whose entries to show (default: the spec's, or the only kernel in the database,
    /// or the only one whose entries --key and --target leave).
    #[arg(long)]
    kernel: Option<String>,
    /// Only entries whose problem key has these values, e.g. `--key n=1048576`, or
    /// `--key M=4096,N=4096,K=4096` as `tune --key` takes them (or one `--key` per size). A size
    /// given several values matches any of them (`--key n=65536 --key n=1048576`: both problems).
    #[arg(long = "key", value_name = "NAME=VALUE", value_delimiter = ',')]
    keys: Vec<String>,
    /// Only entries whose device name or target contains this text (case-insensitive).
    #[arg(long)]
    target: Option<String>,
    /// Database files (default: $KERNTUNE_CACHE_DIR/db.sqlite or the platform cache
    /// directory); a JSON export (`kerntune db export`) works too, and so do Kernel Tuner caches
    /// (.json, .json.gz), T4 files and a tune's own `--json` report (one tune's), each one entry
    /// (its device, kernel and problem). Several are drawn together: one kernel's results on
    /// several GPUs side by side.
    #[arg(long, num_args = 1.., value_name = "FILE")]
    db: Vec<PathBuf>,
    /// The HTML file to write.
    #[arg(short, long)]
    out: PathBuf,
    /// Also write each chart as an SVG file of its own into this folder (made if missing), for
    /// slides and papers: entry-1-distribution.svg, entry-1-parameter-2.svg,
    /// side-by-side-comparison.svg, ...
    #[arg(long, value_name = "DIR")]
    charts: Option<PathBuf>,
    /// Allow kernel sources outside the spec's folder.
    #[arg(long)]
    allow_outside_sources: bool,
}

/// What the spec says about an entry's problem (its default config and FLOP/byte formulas),
/// with the entry's sizes put in: `None` where the key is not made of the spec's sizes (an
/// entry of an older spec).
fn spec_problem(path: &std::path::Path, spec: &Spec, key: &str) -> anyhow::Result<Option<Prepared>> {
    let mut spec = spec.clone();
    if super::tune::only_problem(&mut spec.problems, key).is_err() {
        return Ok(None);
    }
    let Some((suffix, job)) = spec.validation_jobs().into_iter().next() else { return Ok(None) };
    let prep = Prepared::without_data(&job, None).with_context(|| format!("{}{suffix}", path.display()))?;
    Ok((prep.key.text() == key).then_some(prep))
}

pub fn run(a: Args) -> anyhow::Result<i32> {
    let t0 = Instant::now();
    let paths: Vec<PathBuf> = if a.db.is_empty() { vec![super::db_path(&None)] } else { a.db.clone() };
    for path in &paths {
        if !path.exists() {
            anyhow::bail!("--db: {} does not exist; tune something first (`kerntune tune SPEC`) or name the database with --db", path.display());
        }
    }
    for k in &a.keys {
        if !k.contains('=') {
            anyhow::bail!("--key: `{k}` is not NAME=VALUE (for example --key n=1048576)");
        }
    }
    if a.out.extension().is_some_and(|e| e != "html" && e != "htm") {
        anyhow::bail!("--out: {} does not end in .html; the report is an HTML page", a.out.display());
    }
    // Before anything is read or written: a page written and then refused its charts' folder
    // would leave half the output.
    if let Some(dir) = a.charts.as_ref().filter(|d| d.exists() && !d.is_dir()) {
        anyhow::bail!("--charts: {} is a file; name a folder for the chart files (it is made if missing)", dir.display());
    }
    let mut file = DbFile::default();
    let mut notes = Vec::new();
    for path in &paths {
        match Database::at(path).load() {
            Ok(f) => file.merge(&f),
            // Another tuner's results (or kerntune's tune reports, or its T4 export): an entry
            // each.
            Err(DbError::Foreign { .. }) => {
                let (all, note) = kerntune::store::foreign::entries(path).map_err(|m| anyhow::anyhow!("--db: {m}"))?;
                if let Some(note) = note {
                    crate::cli::out::eprint_line(&format!("note: {note}"));
                    notes.push(note);
                }
                file.entries.extend(all.into_iter().map(|e| (e.id.key(), e)));
            }
            Err(e) => return Err(e.into()),
        }
    }
    let path = paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ");
    let mut kernel = a.kernel.clone();
    let spec = match &a.spec {
        Some(s) => {
            let spec = Spec::load_with(s, LoadOptions { allow_outside_sources: a.allow_outside_sources })?;
            kernel.get_or_insert_with(|| spec.kernel.clone());
            if spec.generated() {
                notes.push(format!(
                    "{}: its configs come from a vendor generator, so the spec cannot mark the default or compute FLOPs and bytes; the records' own are used",
                    s.display()
                ));
            }
            Some((s, spec))
        }
        None => None,
    };
    let kernels: std::collections::BTreeSet<&str> = file.entries.values().map(|e| e.id.kernel.as_str()).collect();
    let target = a.target.as_ref().map(|t| t.to_ascii_lowercase());
    // Each size named, with the values it may take: any of them (a size named twice, as two
    // problems of a `tune --key … --key …`, matched nothing when every value was required).
    let mut wanted: std::collections::BTreeMap<&str, Vec<&str>> = std::collections::BTreeMap::new();
    for k in &a.keys {
        wanted.entry(k.split_once('=').map_or(k.as_str(), |(n, _)| n)).or_default().push(k.as_str());
    }
    let chosen = |e: &Entry| {
        let fields: Vec<&str> = e.id.problem.split(',').collect();
        wanted.values().all(|any| any.iter().any(|k| fields.contains(k)))
            && target.as_ref().is_none_or(|t| e.target_name.to_ascii_lowercase().contains(t) || e.id.target.to_ascii_lowercase().contains(t))
    };
    // Without --kernel: the only kernel, or the only one --key and --target leave.
    let narrowed: std::collections::BTreeSet<&str> = file.entries.values().filter(|e| chosen(e)).map(|e| e.id.kernel.as_str()).collect();
    let filtered = !a.keys.is_empty() || target.is_some();
    let listed = |ks: &std::collections::BTreeSet<&str>| ks.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
    let kernel = match kernel {
        Some(k) => k,
        None if kernels.len() == 1 => kernels.iter().next().expect("one").to_string(),
        None if kernels.is_empty() => anyhow::bail!("{} holds no entries; tune something first (`kerntune tune SPEC`)", path),
        None if filtered && narrowed.len() == 1 => narrowed.iter().next().expect("one").to_string(),
        None if filtered && narrowed.is_empty() => {
            let mut have: Vec<String> = file.entries.values().map(|e| format!("{} on {}{}", e.id.kernel, e.target_name, in_parens(&e.id.problem))).collect();
            let more = have.len().saturating_sub(8);
            have.truncate(8);
            let rest = if more > 0 { format!(", and {more} more (`kerntune db show` lists them)") } else { String::new() };
            anyhow::bail!("no entry in {} matches --key/--target; it has: {}{rest}", path, have.join(", "))
        }
        None if filtered && narrowed.len() > 1 => anyhow::bail!(
            "{}: entries of {} kernels match --key/--target ({}); name one with --kernel or pass its spec",
            path,
            narrowed.len(),
            listed(&narrowed)
        ),
        None => anyhow::bail!("{} holds entries of {} kernels ({}); name one with --kernel or pass its spec", path, kernels.len(), listed(&kernels)),
    };
    let selected: Vec<&Entry> = file.entries.values().filter(|e| e.id.kernel == kernel).filter(|e| chosen(e)).collect();
    if selected.is_empty() {
        let have: Vec<String> =
            file.entries.values().filter(|e| e.id.kernel == kernel).map(|e| format!("{}{}", e.target_name, in_parens(&e.id.problem))).collect();
        if have.is_empty() {
            let holds =
                if kernels.is_empty() { "no entry it can read".to_string() } else { kernels.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ") };
            let near = kerntune::hint::nearest(&kernel, kernels.iter().copied(), 3).map(|n| format!("did you mean `{n}`? ")).unwrap_or_default();
            anyhow::bail!("{} has no entry for kernel `{kernel}`; {near}it holds {holds}; tune it first or check --db", path);
        }
        anyhow::bail!("no entry of `{kernel}` matches --key/--target; the database has: {}", have.join(", "));
    }
    let mut views: Vec<EntryView> = Vec::with_capacity(selected.len());
    for e in &selected {
        let prep = match &spec {
            Some((path, spec)) if !spec.generated() => spec_problem(path, spec, &e.id.problem)?,
            _ => None,
        };
        let prep = prep.as_ref();
        let metrics = |c: &kerntune::Config| prep.map_or((None, None), |p| p.metrics(c));
        let hints =
            Hints { default: prep.map(|p| p.default.key()), metrics: prep.map(|_| &metrics as &dyn Fn(&kerntune::Config) -> (Option<f64>, Option<f64>)) };
        let mut v = EntryView::new(e, &hints);
        v.notes.extend(notes.iter().cloned());
        views.push(v);
    }
    // Devices together, then problems (sizes in numeric order), so the side-by-side reads in a
    // stable order.
    views.sort_by(|x, y| x.target_name.cmp(&y.target_name).then_with(|| kerntune::store::db::problem_cmp(&x.problem, &y.problem)));
    // One GPU through two backends (CUDA and Vulkan) has one device name: such entries are
    // named by their target too, or the page would show two alike.
    // An edited kernel, or a new compiler or driver, makes another entry of the same device and
    // problem: those are named by their source or toolchain (what `db show` tells them apart by).
    kerntune::store::recorded::name_apart(
        &mut views,
        |v, o| o.target_name == v.target_name && o.kernel == v.kernel && o.problem == v.problem,
        |v, others| {
            let mut parts = Vec::new();
            if others.iter().any(|o| o.target != v.target) {
                parts.push(kerntune::store::recorded::shown_target(&v.target));
            }
            parts.extend(kerntune::store::db::told_apart(&v.source, &v.toolchain, others.iter().map(|o| (o.source.as_str(), o.toolchain.as_str()))));
            (!parts.is_empty()).then(|| parts.join(", "))
        },
        |v| &mut v.target_name,
    );
    let selection = match &a.spec {
        Some(s) => format!("kernel {kernel} of {}", s.display()),
        None => format!("kernel {kernel}"),
    };
    let html = page(&views, &Source { database: path.clone(), selection })?;
    crate::cli::out::write_named(&a.out, html.as_bytes(), "--out: ")?;
    if let Some(dir) = &a.charts {
        let charts = kerntune::html::charts_of(&html);
        std::fs::create_dir_all(dir).with_context(|| format!("--charts: cannot make {}", dir.display()))?;
        for (name, svg) in &charts {
            crate::cli::out::write_named(&dir.join(format!("{name}.svg")), svg.as_bytes(), "--charts: ")?;
        }
        outln!("wrote {} charts to {} (one SVG file each)", charts.len(), dir.display());
    }
    let measured: usize = views.iter().map(|v| v.points.len()).sum();
    outln!(
        "wrote {} ({} entr{}, {measured} measured configs, {:.1} kB) in {:.2} s",
        a.out.display(),
        views.len(),
        if views.len() == 1 { "y" } else { "ies" },
        html.len() as f64 / 1e3,
        t0.elapsed().as_secs_f64()
    );
    Ok(0)
}

/// ` (text)`, or nothing where `text` is empty (a problem without sizes).
fn in_parens(text: &str) -> String {
    if text.is_empty() {
        String::new()
    } else {
        format!(" ({text})")
    }
}
