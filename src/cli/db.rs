//! `kerntune db show|export|merge|remove|clear`.

use crate::cli::out::outln;
use kerntune::store::db::{Database, DbError, DbFile, Entry};
use kerntune::store::foreign;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    command: DbCommand,
    /// Database file (default: $KERNTUNE_CACHE_DIR/db.sqlite or the platform cache directory).
    #[arg(long, global = true)]
    db: Option<PathBuf>,
}

#[derive(clap::Subcommand, Debug)]
enum DbCommand {
    /// One line per entry: kernel, target, problem, measurements, winner.
    Show {
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Write the database (to stdout, or --out): kerntune's own JSON, T4 (the community results
    /// schema; one document per entry, an array when there are several), or Rust source of the
    /// winners for a program to `include!` (`--rust`, the same as `--format rust`).
    Export {
        /// Output file.
        #[arg(short, long)]
        out: Option<PathBuf>,
        /// `kerntune` (its own JSON, also `json`), `t4` or `rust`.
        #[arg(long, value_enum, default_value_t = ExportFormat::Kerntune)]
        format: ExportFormat,
        /// Rust source: a `&[kerntune::EmbeddedWinner]` expression for `include!`.
        #[arg(long, conflicts_with = "format")]
        rust: bool,
        /// Only entries of this kernel.
        #[arg(long)]
        kernel: Option<String>,
    },
    /// Merge other database files into this one (every entry kept, conflicts resolved
    /// deterministically). Shard databases of a split tune (`tune --shard`) must come from one
    /// spec: shards of another source, space or verification are refused, and nothing is written.
    Merge {
        /// Files to merge in: databases (SQLite or JSON exports), or a tune's own report
        /// (`kerntune tune --json > REPORT.json`), taken in as the entries its tune would have
        /// stored (one per problem of its spec).
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Remove the entries that match every filter given (at least one): a kernel's, a device's,
    /// a problem's, or those another entry of the same kernel, device and problem superseded
    /// (tuned later with an edited source, another compiler or driver). Each removed entry is
    /// listed; `--dry-run` lists them and removes nothing. `clear` deletes the whole file.
    Remove {
        /// Only entries of this kernel.
        #[arg(long)]
        kernel: Option<String>,
        /// Only entries of the devices whose name or fingerprint (in brackets in `db show`)
        /// contains this text, ignoring case (`H100`, `llvmpipe`), as `report --target` picks.
        #[arg(long)]
        target: Option<String>,
        /// Only entries of this problem (its key, as `db show` prints it: `N=100000`).
        #[arg(long)]
        problem: Option<String>,
        /// Only entries superseded by a later tune of the same kernel, device and problem.
        #[arg(long)]
        superseded: bool,
        /// List what would be removed, and remove nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Delete the database file.
    Clear,
}

/// What `db export` writes.
#[derive(Clone, Copy, PartialEq, Eq, Debug, clap::ValueEnum)]
pub enum ExportFormat {
    /// kerntune's own JSON (what `db merge`, `--prior`, `simulate` and `report --db` read).
    #[value(alias = "json")]
    Kerntune,
    /// T4, the community results schema.
    T4,
    /// Rust source of the winners.
    Rust,
}

pub fn run(a: Args) -> anyhow::Result<i32> {
    let db = Database::at(super::db_path(&a.db));
    // A database named that is not there is most likely a mistyped path: say so rather than
    // show or export nothing. The default one simply does not exist before the first tune.
    let missing = !db.path().exists() && matches!(a.command, DbCommand::Show { .. } | DbCommand::Export { .. } | DbCommand::Remove { .. });
    if missing && a.db.is_some() {
        anyhow::bail!("--db: {} does not exist; check the path, or tune something first (`kerntune tune SPEC --db FILE`)", db.path().display());
    }
    match a.command {
        DbCommand::Show { json } => {
            let f = db.load()?;
            if json {
                outln!("{}", serde_json::to_string_pretty(&f)?);
                return Ok(0);
            }
            if missing {
                outln!("{} (no database yet: `kerntune tune SPEC` makes it, or name one with --db)", db.path().display());
                return Ok(0);
            }
            let n = f.entries.len();
            outln!("{} ({n} entr{})", db.path().display(), if n == 1 { "y" } else { "ies" });
            let groups = Groups::of(&f);
            let mut listed: Vec<&Entry> = f.entries.values().collect();
            listed.sort_by(|a, b| a.id.listed_cmp(&b.id));
            for e in listed {
                outln!("{}", entry_line(&groups, e));
            }
        }
        DbCommand::Export { out, format, kernel, rust } => {
            if missing {
                anyhow::bail!(
                    "{} does not exist: nothing to export; tune something first (`kerntune tune SPEC`) or name the database with --db",
                    db.path().display()
                );
            }
            let mut f = db.load()?;
            if let Some(k) = &kernel {
                let kernels: std::collections::BTreeSet<String> = f.entries.values().map(|e| e.id.kernel.clone()).collect();
                f.entries.retain(|_, e| &e.id.kernel == k);
                if f.entries.is_empty() {
                    let near = kerntune::hint::nearest(k, kernels.iter().map(String::as_str), 3).map(|n| format!("did you mean `{n}`? ")).unwrap_or_default();
                    let holds =
                        if kernels.is_empty() { "no entries".to_string() } else { kernels.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ") };
                    anyhow::bail!("--kernel: {} has no entry for kernel `{k}` ({near}it holds {holds})", db.path().display());
                }
            }
            let format = if rust { ExportFormat::Rust } else { format };
            let text = match format {
                ExportFormat::Rust => {
                    // Only winners are embedded: say which entries have none, rather than write
                    // a shorter (or empty) list without a word.
                    let without = f.entries.values().filter(|e| e.winner.is_none()).count();
                    if without > 0 {
                        crate::cli::out::eprint_line(&format!(
                            "note: {without} of the {} entries have no winner (every config failed, the tune withheld it, or it stopped before it picked one) and are not in the Rust source; `kerntune db show --db {}` says which",
                            f.entries.len(),
                            db.path().display()
                        ));
                    }
                    kerntune::store::export::rust_source(&f, None, "kerntune")
                }
                ExportFormat::Kerntune => serde_json::to_string_pretty(&f)?,
                ExportFormat::T4 => {
                    let docs: Vec<serde_json::Value> = f.entries.values().map(kerntune::sim::recorded::to_t4).collect();
                    if docs.len() == 1 {
                        serde_json::to_string_pretty(&docs[0])?
                    } else {
                        serde_json::to_string_pretty(&docs)?
                    }
                }
            };
            match out {
                Some(p) => crate::cli::out::write_named(&p, text.as_bytes(), "")?,
                None => outln!("{text}"),
            }
        }
        DbCommand::Merge { files } => {
            super::say_json_db(&a.db);
            let mut incoming: Vec<(PathBuf, DbFile)> = Vec::new();
            let here = if db.path().exists() { db.load()? } else { DbFile::default() };
            for p in &files {
                if !p.exists() {
                    anyhow::bail!("{}: no such file", p.display());
                }
                // SQLite databases and JSON exports alike; a tune's own report (`tune --json`)
                // as the entries its tune would have stored. Anything else is said for what it is
                // here (the database's own errors advise on what to give --db).
                const TAKES: &str = "merge takes kerntune databases (SQLite, or their JSON export) and tune reports (`tune --json`)";
                let f = match Database::at(p).load() {
                    Err(DbError::Foreign { kind, .. }) if kind == foreign::REPORT => report_as_db(p)?,
                    Err(DbError::Folder { .. }) => {
                        anyhow::bail!("{}: a folder, not a file; name the databases in it (`{}/*.sqlite`, say)", p.display(), p.display())
                    }
                    Err(DbError::Foreign { kind, .. }) => {
                        anyhow::bail!("{} is {kind}, not a kerntune database: {TAKES}; {}", p.display(), kerntune::store::db::foreign_uses(p))
                    }
                    Err(DbError::NotOurs { detail, .. }) => anyhow::bail!("{} is not a kerntune database ({detail}): {TAKES}", p.display()),
                    other => other?,
                };
                if let Some(why) = here.conflict(&f) {
                    anyhow::bail!("not merging {} into {}: {why}", p.display(), db.path().display());
                }
                if let Some((q, _)) = incoming.iter().find(|(_, g)| g.conflict(&f).is_some()) {
                    let why = incoming.iter().find_map(|(_, g)| g.conflict(&f)).unwrap_or_default();
                    anyhow::bail!("not merging {} with {}: {why}; nothing was written", p.display(), q.display());
                }
                incoming.push((p.clone(), f));
            }
            let incoming: Vec<DbFile> = incoming.into_iter().map(|(_, f)| f).collect();
            let (before, after) = db.update(|f| {
                let before = f.entries.len();
                for other in &incoming {
                    f.merge(other);
                }
                (before, f.entries.len())
            })?;
            outln!("merged {} file(s) into {}: {before} → {after} entries", files.len(), db.path().display());
        }
        DbCommand::Remove { kernel, target, problem, superseded, dry_run } => {
            if kernel.is_none() && target.is_none() && problem.is_none() && !superseded {
                anyhow::bail!("db remove: name what to remove (--kernel, --target, --problem or --superseded; `db show` lists the entries), or delete the whole database with `kerntune db clear`");
            }
            if missing {
                anyhow::bail!("{} does not exist; nothing to remove", db.path().display());
            }
            // The keys of the entries to remove, each with its `db show` line.
            let picks = |f: &DbFile| -> Vec<(String, String)> {
                let groups = Groups::of(f);
                f.entries
                    .iter()
                    .filter(|(_, e)| {
                        kernel.as_ref().is_none_or(|k| &e.id.kernel == k)
                            && target.as_deref().is_none_or(|t| names_device(e, t))
                            && problem.as_ref().is_none_or(|p| &e.id.problem == p)
                            && (!superseded || groups.superseded(e))
                    })
                    .map(|(key, e)| (key.clone(), entry_line(&groups, e)))
                    .collect()
            };
            // Read first: a dry run, or nothing to remove, writes nothing (a JSON database stays
            // JSON); a removal picks again inside its transaction.
            let f = db.load()?;
            let read = picks(&f);
            let (picked, before) = if dry_run || read.is_empty() {
                (read, f.entries.len())
            } else {
                super::say_json_db(&a.db);
                db.update(|f| {
                    let picked = picks(f);
                    let before = f.entries.len();
                    for (k, _) in &picked {
                        f.entries.remove(k);
                    }
                    (picked, before)
                })?
            };
            let lines: Vec<String> = picked.into_iter().map(|(_, line)| line).collect();
            for l in &lines {
                outln!("{} {l}", if dry_run { "would remove" } else { "removed" });
            }
            let n = lines.len();
            match (n, dry_run) {
                (0, _) => {
                    let filters = [
                        Filter { flag: "--kernel", what: "kernels", given: kernel.as_deref(), field: |e| &e.id.kernel, matches: |e, k| e.id.kernel == k },
                        Filter { flag: "--target", what: "devices", given: target.as_deref(), field: |e| &e.target_name, matches: names_device },
                        Filter { flag: "--problem", what: "problems", given: problem.as_deref(), field: |e| &e.id.problem, matches: |e, p| e.id.problem == p },
                    ];
                    let why = unmatched(&f, &filters, superseded);
                    match why.is_empty() {
                        true => outln!("no entry of {} matches; nothing removed (`db show` lists the entries)", db.path().display()),
                        false => outln!("nothing removed from {}: {why}", db.path().display()),
                    }
                }
                (_, true) => outln!("{n} of {before} entries would be removed from {} (--dry-run: nothing removed)", db.path().display()),
                (_, false) => outln!("removed {n} of {before} entries from {}: {} left", db.path().display(), before - n),
            }
        }
        DbCommand::Clear => {
            if db.clear()? {
                outln!("removed {}", db.path().display());
            } else {
                outln!("{} does not exist; nothing to clear", db.path().display());
            }
        }
    }
    Ok(0)
}

/// One of `db remove`'s filters, for [`unmatched`]: its flag, what its values are called, the
/// value given, the field it reads (what is listed) and whether an entry matches it.
struct Filter<'a> {
    flag: &'static str,
    what: &'static str,
    given: Option<&'a str>,
    field: fn(&Entry) -> &str,
    matches: fn(&Entry, &str) -> bool,
}

/// Why `db remove`'s filters matched nothing: each filter no entry matches on its own, with the
/// values the database has (a few) and the one nearest what was given; or, when each matches
/// some entry, that none matches them all.
fn unmatched(f: &DbFile, filters: &[Filter<'_>], superseded: bool) -> String {
    if f.entries.is_empty() {
        return "it has no entries".to_string();
    }
    let given = filters.iter().filter(|x| x.given.is_some()).count() + usize::from(superseded);
    let mut missed = Vec::new();
    for x in filters {
        let Some(given) = x.given else { continue };
        if f.entries.values().any(|e| (x.matches)(e, given)) {
            continue;
        }
        let values: std::collections::BTreeSet<&str> = f.entries.values().map(x.field).collect();
        let mut list: Vec<String> = values.iter().take(6).map(|v| format!("`{v}`")).collect();
        if values.len() > 6 {
            list.push(format!("… {} in all", values.len()));
        }
        let mut line = format!("{} `{given}` matches no entry ({} there: {}", x.flag, x.what, list.join(", "));
        if let Some(near) = kerntune::hint::nearest(given, values.iter().copied(), 3) {
            line.push_str(&format!("; did you mean `{near}`?"));
        }
        line.push(')');
        missed.push(line);
    }
    if superseded
        && !{
            let groups = Groups::of(f);
            f.entries.values().any(|e| groups.superseded(e))
        }
    {
        missed.push("--superseded matches no entry (no entry was tuned again later for the same kernel, device and problem)".to_string());
    }
    match missed.is_empty() {
        true if given > 1 => "each filter matches some entry, but none matches them all".to_string(),
        true => String::new(),
        false => missed.join("; "),
    }
}

/// Whether `text` names entry `e`'s device: a part of its name or fingerprint, ignoring case.
fn names_device(e: &Entry, text: &str) -> bool {
    let t = text.to_lowercase();
    e.target_name.to_lowercase().contains(&t) || e.id.target.to_lowercase().contains(&t)
}

/// A tune's `--json` report as a database file of its entries (one per problem of the spec),
/// each the one its tune would have stored; refused, naming what to do instead, when the report
/// does not say what its measurements were made for (a report of an earlier kerntune).
fn report_as_db(path: &std::path::Path) -> anyhow::Result<DbFile> {
    let entries = foreign::report_entries(path).map_err(|m| anyhow::anyhow!("{m}"))?.unwrap_or_default();
    let mut f = DbFile::default();
    for mut e in entries {
        if e.origin.is_none() {
            anyhow::bail!(
                "{}: a tune report from a kerntune that did not record what its measurements were made for (no `origin`), so a database could not tell when to reuse them; it was left untouched: draw it with `kerntune report --db {}`, or tune again with --db",
                path.display(),
                path.display()
            );
        }
        // The file it came from names a drawn report's source, not a database entry's.
        e.env.details.remove("file");
        f.entries.insert(e.id.key(), e);
    }
    Ok(f)
}

/// When an entry was last tuned (seconds since the Unix epoch; 0 where it has no run noted).
fn last_tuned(e: &kerntune::store::db::Entry) -> u64 {
    e.runs.iter().map(|r| r.run).max().unwrap_or(0)
}

/// A database's entries grouped by kernel, device and problem: entries of one group differ, if
/// at all, in what made the binary (an edited source, another compiler or driver). Made once
/// per listing, so that `db show` of many entries does not compare each with every other.
struct Groups<'f>(std::collections::HashMap<(&'f str, &'f str, &'f str), Vec<&'f kerntune::store::db::Entry>>);

impl<'f> Groups<'f> {
    fn of(f: &'f DbFile) -> Self {
        let mut g: std::collections::HashMap<_, Vec<_>> = std::collections::HashMap::new();
        for e in f.entries.values() {
            g.entry((e.id.kernel.as_str(), e.id.target.as_str(), e.id.problem.as_str())).or_default().push(e);
        }
        Groups(g)
    }

    /// The other entries of `e`'s group.
    fn twins(&self, e: &'f kerntune::store::db::Entry) -> impl Iterator<Item = &'f kerntune::store::db::Entry> + '_ {
        self.0.get(&(e.id.kernel.as_str(), e.id.target.as_str(), e.id.problem.as_str())).into_iter().flatten().copied().filter(move |o| o.id != e.id)
    }

    /// Whether another entry of `e`'s group was tuned after it.
    fn superseded(&self, e: &'f kerntune::store::db::Entry) -> bool {
        self.twins(e).any(|o| last_tuned(o) > last_tuned(e))
    }
}

/// `db show`'s line for an entry: kernel, device, problem (with what tells it from the other
/// entries of its group), measurements and winner.
fn entry_line<'f>(groups: &Groups<'f>, e: &'f kerntune::store::db::Entry) -> String {
    let failed = e.measurements.values().filter(|m| m.stats().is_none()).count();
    let twins: Vec<_> = groups.twins(e).collect();
    let mut apart =
        kerntune::store::db::told_apart(&e.id.kernel_hash, &e.id.toolchain, twins.iter().map(|o| (o.id.kernel_hash.as_str(), o.id.toolchain.as_str())));
    if !twins.is_empty() && !e.runs.is_empty() {
        apart.push(format!("last tuned {}", kerntune::html::utc(last_tuned(e))));
    }
    let apart = if apart.is_empty() { String::new() } else { format!(" ({})", apart.join(", ")) };
    let mut winner = match &e.winner {
        Some(w) if w.partial => format!("winner {} at {:.4} ms (its tune ended early; the same tune command goes on)", w.config, w.stats.mean * 1e3),
        Some(w) => format!("winner {} at {:.4} ms", w.config, w.stats.mean * 1e3),
        None if failed > 0 && failed == e.measurements.len() => "no winner (every config measured failed)".into(),
        None => e.withheld_line().unwrap_or_else(|| "no winner yet (unfinished tune)".into()),
    };
    // What tuning gained over the spec's default config, where it was measured (or that it failed).
    if let Some((w, d)) = e.winner.as_ref().and_then(|w| Some((w, w.default.as_ref().filter(|d| **d != w.config)?))) {
        match e.measurements.get(d).map(|m| &m.status) {
            Some(kerntune::store::db::Status::Ok { stats }) => winner += &format!(" (the default {d} takes {:.2}× its time)", stats.mean / w.stats.mean),
            Some(kerntune::store::db::Status::Failed { failure, .. }) => winner += &format!(" (the default {d} failed: {failure})"),
            None => {}
        }
    }
    // A split tune's entry that does not hold every shard: its winner is their part's.
    if let Some(part) = e.origin.as_ref().and_then(|o| o.part()) {
        winner += &format!(" (of {part})");
    }
    // What the last tune learned from, where it learned from other devices.
    if let Some(line) = e.runs.last().and_then(|r| r.prior.as_deref()) {
        winner += &format!("; the last tune learned from {}", line.trim_start_matches("prior: "));
    }
    // A winner whose tune checked no output is not one to ship unawares.
    if e.winner.is_some() && e.runs.last().is_some_and(|r| r.unverified()) {
        winner += "; outputs not verified (the last tune ran with reference none)";
    }
    // Nor is one the memory checker saw reading or writing past its buffers.
    if e.winner.is_some() && e.runs.last().is_some_and(|r| r.winner_out_of_bounds()) {
        winner += "; the winner reads or writes past its buffers (tune --memcheck)";
    }
    let problem = if e.id.problem.is_empty() { String::new() } else { format!(" {}", e.id.problem) };
    format!("{} on {} [{}]{problem}{apart}: {} measured ({} failed); {}", e.id.kernel, e.target_name, e.id.target, e.measurements.len(), failed, winner)
}
