//! Priors for a tune: what other devices measured of the same kernel and problem, from the
//! database (entries of other targets) or from files named on the command line (Kernel Tuner
//! caches, T4 files, kerntune databases), lined up with this tune's candidates
//! ([`crate::search::PriorBuilder`]). A prior that cannot be used is reported and left out; the
//! tune goes on without it.

use crate::run::report::PriorReport;
use crate::run::{Context, TuneOptions};
use crate::search::prior::{Prior, PriorBuilder};
use crate::search::strategy::Candidates;
use crate::store::db::Database;
use crate::store::recorded::PriorFile;
use std::path::PathBuf;
use std::sync::Arc;

/// Where a tune's priors come from.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum PriorSetting {
    /// The tune's database: the same kernel (source hash) and problem on other targets.
    #[default]
    Database,
    /// These files (and not the database): Kernel Tuner caches, T4 files, kerntune databases.
    /// Entries of another source hash are used (they were named), with a note.
    Files(Vec<PathBuf>),
    /// None.
    Off,
}

/// Gathers the priors of `setting` for the tune `ctx` on `target` (its fingerprint), lined up
/// with the candidates; `None` when there are none to gather (or they are off). With
/// `compile`, databases' recorded compile seconds are read too (files' always are).
pub(crate) fn gather(ctx: &Context, opts: &TuneOptions, target: &str, cands: &Candidates<'_>, compile: bool) -> Option<(Arc<Prior>, PriorReport)> {
    let t0 = std::time::Instant::now();
    let mut b = PriorBuilder::new(cands).with_sizes(&ctx.job.sizes);
    let from = match &opts.prior {
        PriorSetting::Off => return None,
        PriorSetting::Database => {
            let db = opts.db.as_ref()?;
            from_database(&mut b, db, ctx, target, false, compile);
            "db".to_string()
        }
        PriorSetting::Files(files) => {
            // The line names the files learned from; the others are named in their notes.
            let mut used = Vec::new();
            for f in files {
                let before = b.sources();
                from_file(&mut b, f, ctx, target, compile);
                if b.sources() > before {
                    used.push(f.display().to_string());
                }
            }
            if used.is_empty() {
                "no usable file".to_string()
            } else {
                used.join(", ")
            }
        }
    };
    let prior = b.build();
    // Files named on the command line always get their line, even when nothing in them is usable.
    let named = matches!(opts.prior, PriorSetting::Files(_));
    if !named && prior.is_empty() && prior.refused.is_empty() && prior.notes.is_empty() {
        return None;
    }
    let report = PriorReport {
        line: prior.summary(&from),
        targets: prior.targets(),
        problems_here: prior.problems_here,
        measurements: prior.measurements(),
        from,
        skipped: prior.skipped.clone(),
        refused: prior.refused.clone(),
        notes: prior.notes.clone(),
        seconds: t0.elapsed().as_secs_f64(),
    };
    tracing::info!(seconds = report.seconds, "{}", report.line);
    Some((Arc::new(prior), report))
}

/// Every entry of this kernel and problem on another target in `db`. Entries of another source
/// hash are used only when `named` (the user gave the file), with a note; otherwise counted.
fn from_database(b: &mut PriorBuilder<'_>, db: &Database, ctx: &Context, target: &str, named: bool, compile: bool) {
    let names: Vec<String> = ctx.prep.space.params().iter().map(|p| p.name.clone()).collect();
    let entries = match db.times_elsewhere(&ctx.id.kernel, &ctx.id.problem, target, compile) {
        Ok(e) => e,
        Err(e) => {
            b.note(format!("{}: not read ({e}); tuning without it", db.path().display()));
            return;
        }
    };
    let mut other_hash = 0;
    let found = entries.len();
    for (id, target_name, times) in entries {
        if id.kernel_hash != ctx.id.kernel_hash {
            if !named {
                other_hash += 1;
                continue;
            }
            b.note(format!(
                "{target_name}: measured a kernel of another source hash ({} here {}); used because --prior names it",
                id.kernel_hash, ctx.id.kernel_hash
            ));
        }
        let records = times.iter().map(|(key, t, _)| (key, t.ok_or_else(|| "failed".to_string())));
        if b.add_keyed(&format!("{target_name} ({})", id.target), &names, records) {
            b.add_compile_keyed(times.iter().filter_map(|(key, _, c)| c.map(|c| (key, c))));
            b.add_seconds(times.seconds.iter().copied());
        }
    }
    let here = from_problems_here(b, db, ctx, target, &names, compile);
    if named && found == 0 && here == 0 {
        b.note(format!(
            "{}: no entry of kernel `{}` for problem `{}` on another target; tuning without it",
            db.path().display(),
            ctx.id.kernel,
            ctx.id.problem
        ));
    }
    if other_hash > 0 {
        b.note(format!(
            "{other_hash} entr{} of kernel `{}` on other targets measured another source or options (another hash): not used; name the database with --prior to use them anyway",
            if other_hash == 1 { "y" } else { "ies" },
            ctx.id.kernel
        ));
    }
}

/// How many of this target's other problem sizes a tune learns from: the nearest ones. A
/// library's database may hold dozens; the transfer search was built and scored on fleets of
/// up to six sources, and scored on sizes (docs/benchmarks.md, "A new problem size from the
/// sizes tuned") the nearest six did as well as or better than the nearest two to four.
pub(crate) const NEAREST_PROBLEMS: usize = 6;

/// The same kernel (source hash) on this target at the problem sizes nearest this tune's
/// ([`problem_distance`]; the same problem measured under another toolchain first), up to
/// [`NEAREST_PROBLEMS`] of them. Their evaluation seconds are left out of the flight's sizing
/// (another size takes another time); their compile seconds are the same code's.
fn from_problems_here(b: &mut PriorBuilder<'_>, db: &Database, ctx: &Context, target: &str, names: &[String], compile: bool) -> usize {
    let here = match db.problems_here(&ctx.id.kernel, &ctx.id.kernel_hash, target, &ctx.id.problem, &ctx.id.toolchain) {
        Ok(e) => e,
        Err(e) => {
            b.note(format!("{}: this target's other problem sizes not read ({e}); tuning without them", db.path().display()));
            return 0;
        }
    };
    let (near, _) = nearest(here.into_iter().filter_map(|(k, e)| problem_distance(&ctx.id.problem, &e.id.problem).map(|d| (d, k.clone(), (k, e)))).collect());
    let entries = match db.times_for(near, compile) {
        Ok(e) => e,
        Err(e) => {
            b.note(format!("{}: this target's other problem sizes not read ({e}); tuning without them", db.path().display()));
            return 0;
        }
    };
    let mut added = 0;
    for (id, target_name, times) in entries {
        let name = if id.problem == ctx.id.problem { format!("{target_name} under {}", id.toolchain) } else { format!("{target_name} at {}", id.problem) };
        let records = times.iter().map(|(key, t, _)| (key, t.ok_or_else(|| "failed".to_string())));
        if b.add_keyed(&name, names, records) {
            b.add_compile_keyed(times.iter().filter_map(|(key, _, c)| c.map(|c| (key, c))));
            b.count_as_problem_here();
            added += 1;
        }
    }
    added
}

/// Of problem sizes with their distance from this tune's ([`problem_distance`]), the nearest
/// [`NEAREST_PROBLEMS`], nearest first (ties by `K`: a database key, a document's place), and how
/// many were farther: a database's entries and a file's documents are chosen alike.
fn nearest<K: Ord, T>(mut near: Vec<(f64, K, T)>) -> (Vec<T>, usize) {
    near.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
    let farther = near.len().saturating_sub(NEAREST_PROBLEMS);
    near.truncate(NEAREST_PROBLEMS);
    (near.into_iter().map(|(_, _, t)| t).collect(), farther)
}

/// How far apart two problem keys (`M=4096,N=1024`) are: the sum over their sizes of the
/// distance of their logarithms (`N=2048` is as far from `N=4096` as `N=8192` is); `None` when
/// they name other sizes or differ in a size that is not a number (another element type, say).
pub(crate) fn problem_distance(a: &str, b: &str) -> Option<f64> {
    let fields = |s: &str| -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = s
            .split(',')
            .filter(|f| !f.is_empty())
            .map(|f| f.split_once('=').map_or((f.to_string(), String::new()), |(k, v)| (k.to_string(), v.to_string())))
            .collect();
        v.sort();
        v
    };
    let (a, b) = (fields(a), fields(b));
    if a.len() != b.len() {
        return None;
    }
    let mut d = 0.0;
    for ((ka, va), (kb, vb)) in a.iter().zip(&b) {
        if ka != kb {
            return None;
        }
        if va == vb {
            continue;
        }
        let (x, y) = (va.parse::<f64>().ok()?, vb.parse::<f64>().ok()?);
        // Sizes are positive; a zero or a negative one (an offset, say) is compared past 1.
        let log = |v: f64| if v > 0.0 { v.ln() } else { -(1.0 + v.abs()).ln() - 1.0 };
        d += (log(x) - log(y)).abs();
    }
    Some(d)
}

/// A file named with `--prior`: a kerntune database, or another tool's results.
fn from_file(b: &mut PriorBuilder<'_>, f: &std::path::Path, ctx: &Context, target: &str, compile: bool) {
    let head = std::fs::read(f).map(|d| d.into_iter().take(64).collect::<Vec<u8>>()).unwrap_or_default();
    let is_db = head.starts_with(b"SQLite format 3\0") || String::from_utf8_lossy(&head).contains("kerntune-db");
    if is_db {
        from_database(b, &Database::at(f), ctx, target, true, compile);
        return;
    }
    match PriorFile::load_all(f) {
        Ok(mut docs) if docs.len() == 1 => {
            add_file(b, docs.remove(0), &f.display().to_string(), f, true);
        }
        Ok(docs) => from_documents(b, docs, f, ctx, target),
        Err(e) => b.note(format!("{e}; tuning without it")),
    }
}

/// One document of a prior file, named by its device and the file as given (so that a refusal
/// or a note says which it is); whether it was used. With `seconds`, its evaluation seconds
/// size the tune's first flight (not those of another problem size, which takes another time).
fn add_file(b: &mut PriorBuilder<'_>, p: PriorFile, file: &str, f: &std::path::Path, seconds: bool) -> bool {
    let name = if p.device.is_empty() { file.to_string() } else { format!("{} ({file})", p.device) };
    let compile: Vec<_> = p.compile_records().collect();
    let times: Vec<_> = p.seconds().collect();
    if p.cut_off {
        b.note(crate::store::recorded::cut_off_note(f, p.records.len()));
    }
    let used = b.add(&name, &p.params, p.records);
    if used {
        b.add_compile(compile);
        if seconds {
            b.add_seconds(times);
        }
    }
    used
}

/// A file of several documents (kerntune's T4 export of a database, its report of several
/// tunes), read as the database it came from is: the documents of this kernel and problem on
/// any target, and this target's nearest other problem sizes ([`NEAREST_PROBLEMS`]); a
/// document that names no kernel, problem or target is taken as this tune's. The others are
/// counted in a note.
fn from_documents(b: &mut PriorBuilder<'_>, docs: Vec<PriorFile>, f: &std::path::Path, ctx: &Context, target: &str) {
    let count = docs.len();
    let is = |field: &Option<String>, here: &str| field.as_deref().is_none_or(|x| x == here);
    let (mut other_kernels, mut other_kernel, mut elsewhere) = (Vec::<String>::new(), 0, 0);
    let mut near: Vec<(f64, usize, (usize, PriorFile))> = Vec::new();
    for (i, d) in docs.into_iter().enumerate() {
        let file = format!("{} [{i}]", f.display());
        if !is(&d.kernel, &ctx.id.kernel) {
            other_kernel += 1;
            let name = format!("`{}`", d.kernel.as_deref().unwrap_or_default());
            if !other_kernels.contains(&name) {
                other_kernels.push(name);
            }
        } else if is(&d.problem, &ctx.id.problem) {
            add_file(b, d, &file, f, true);
        } else if let Some(distance) = d.problem.as_deref().filter(|_| is(&d.target, target)).and_then(|p| problem_distance(&ctx.id.problem, p)) {
            near.push((distance, i, (i, d)));
        } else {
            elsewhere += 1;
        }
    }
    let (near, farther) = nearest(near);
    for (i, d) in near {
        if add_file(b, d, &format!("{} [{i}]", f.display()), f, false) {
            b.count_as_problem_here();
        }
    }
    let mut left = Vec::new();
    if other_kernel > 0 {
        left.push(format!("{other_kernel} of another kernel ({})", other_kernels.join(", ")));
    }
    if elsewhere > 0 {
        left.push(format!("{elsewhere} of another problem on another target"));
    }
    if farther > 0 {
        left.push(format!("{farther} of this target at problem sizes farther than the nearest {NEAREST_PROBLEMS}"));
    }
    if !left.is_empty() {
        b.note(format!(
            "{}: {count} documents; not used: {} (as in a database, a prior is this kernel and problem on another target, or this target at a near problem size)",
            f.display(),
            left.join(", ")
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::problem_distance;

    #[test]
    fn problem_sizes_are_near_by_their_ratios_and_other_kinds_are_not_compared() {
        let d = |a, b| problem_distance(a, b);
        assert_eq!(d("N=4096", "N=4096"), Some(0.0));
        let (half, double) = (d("N=4096", "N=2048").unwrap(), d("N=4096", "N=8192").unwrap());
        assert!((half - double).abs() < 1e-12 && (half - 2f64.ln()).abs() < 1e-12, "{half} {double}");
        // Each size counts, whatever the order the key names them in.
        let two = d("M=4096,N=4096,K=4096", "K=4096,N=2048,M=8192").unwrap();
        assert!((two - 2.0 * 2f64.ln()).abs() < 1e-12, "{two}");
        assert!(d("M=4096,N=1024", "M=4096,N=2048").unwrap() < two);
        // Another element type, or other sizes named: not comparable.
        assert_eq!(d("N=4096,dtype=f32", "N=4096,dtype=f16"), None);
        assert_eq!(d("N=4096", "M=4096"), None);
        assert_eq!(d("N=4096", "N=4096,K=8"), None);
        assert_eq!(d("N=4096,dtype=f32", "N=1024,dtype=f32").map(|x| (x - 4f64.ln()).abs() < 1e-12), Some(true));
        // A zero or negative size is compared past one, not as a logarithm of nothing.
        assert!(d("off=0", "off=1").unwrap().is_finite() && d("off=-3", "off=3").unwrap() > d("off=0", "off=3").unwrap());
    }
}
