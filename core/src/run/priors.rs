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
        targets: prior.sources.len(),
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
    if named && found == 0 {
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

/// A file named with `--prior`: a kerntune database, or another tool's results.
fn from_file(b: &mut PriorBuilder<'_>, f: &std::path::Path, ctx: &Context, target: &str, compile: bool) {
    let head = std::fs::read(f).map(|d| d.into_iter().take(64).collect::<Vec<u8>>()).unwrap_or_default();
    let is_db = head.starts_with(b"SQLite format 3\0") || String::from_utf8_lossy(&head).contains("kerntune-db");
    if is_db {
        from_database(b, &Database::at(f), ctx, target, true, compile);
        return;
    }
    match PriorFile::load(f) {
        Ok(p) => {
            // Named by the file as given, so that a refusal or a note says which file it is.
            let name = if p.device.is_empty() { f.display().to_string() } else { format!("{} ({})", p.device, f.display()) };
            let compile: Vec<_> = p.compile_records().collect();
            let seconds: Vec<_> = p.seconds().collect();
            if b.add(&name, &p.params, p.records) {
                b.add_compile(compile);
                b.add_seconds(seconds);
            }
        }
        Err(e) => b.note(format!("{e}; tuning without it")),
    }
}
