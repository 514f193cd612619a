//! `kerntune cache show|prune|clear`: the compile caches (CUBINs, HIP code objects and the
//! compilers' kept refusals) under kerntune's cache directory.

use crate::cli::out::outln;
use kerntune::store::cache::{self, FolderUsage};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    command: CacheCommand,
}

#[derive(clap::Subcommand, Debug)]
enum CacheCommand {
    /// One line per backend's compile cache: compiled kernels, kept compile errors, size, and
    /// when its entries were last used; the bound tunes keep it within.
    Show {
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Remove the least recently used entries until the caches hold at most 80 % of the bound
    /// (what every tune that compiles does by itself).
    Prune {
        /// The bound (`2GiB`, `500MB`); default: KERNTUNE_COMPILE_CACHE_MAX, else 2 GiB.
        #[arg(long)]
        max: Option<String>,
    },
    /// Remove every compiled kernel and kept compile error (the database is kept: `kerntune db
    /// clear` removes it).
    Clear,
}

/// `seconds since the epoch` as how long ago, for a person.
fn since(epoch_s: Option<u64>) -> String {
    let now = kerntune::store::db::now();
    match epoch_s.map(|t| now.saturating_sub(t)) {
        Some(s) if s < 120 => "within a minute or two".into(),
        Some(s) => format!("{} ago", cache::ago(s)),
        None => "never".into(),
    }
}

fn line(f: &FolderUsage) -> String {
    // Ends that read alike (two uses a minute apart) are one time: "between within a minute or
    // two and within a minute or two" said it twice.
    let used = match (since(f.oldest_use), since(f.newest_use)) {
        _ if f.oldest_use.is_none() => String::new(),
        (a, b) if a == b => format!("; last used {a}"),
        (a, b) => format!("; last used between {a} and {b}"),
    };
    format!(
        "{}: {} compiled kernel(s), {} kept compile error(s), {}{used} ({})",
        f.backend,
        f.binaries,
        f.refusals,
        cache::size_text(f.bytes),
        f.folder.display()
    )
}

/// The bound: `--max`, else the environment's, else the default; `None`: off.
fn bound(max: Option<&str>) -> anyhow::Result<Option<u64>> {
    match max {
        Some(m) => cache::parse_max(m).map_err(|e| anyhow::anyhow!("--max: {e}")),
        None => cache::max_bytes().map_err(|e| anyhow::anyhow!("{e}")),
    }
}

fn bound_text(b: Option<u64>) -> String {
    match b {
        Some(b) => format!("tunes keep it within {} ({}, default 2 GiB)", cache::size_text(b), cache::MAX_VAR),
        None => format!("never pruned ({} is off)", cache::MAX_VAR),
    }
}

pub fn run(a: Args) -> anyhow::Result<i32> {
    let root = kerntune::store::db::cache_dir();
    let off = cache::disabled();
    match a.command {
        CacheCommand::Show { json } => {
            let usage = cache::usage(&root);
            let max = bound(None)?;
            if json {
                let v = serde_json::json!({ "root": root, "max_bytes": max, "disabled": off, "folders": usage });
                outln!("{}", serde_json::to_string_pretty(&v)?);
                return Ok(0);
            }
            let total: u64 = usage.iter().map(|f| f.bytes).sum();
            outln!("{}: compile caches of {}; {}", root.display(), cache::size_text(total), bound_text(max));
            if off {
                outln!("KERNTUNE_NO_COMPILE_CACHE is set: tunes neither read nor keep compiled kernels");
            }
            if usage.is_empty() {
                outln!("no compile cache yet (a CUDA or HIP tune keeps what it compiles)");
            }
            for f in &usage {
                outln!("{}", line(f));
            }
        }
        CacheCommand::Prune { max } => {
            let whence = if max.is_some() { "--max" } else { cache::MAX_VAR };
            let Some(max) = bound(max.as_deref())? else {
                anyhow::bail!("{} is off: nothing to prune to; give a bound with --max (such as --max 2GiB)", cache::MAX_VAR);
            };
            let p = cache::prune(&root, max);
            match p.line(max, whence) {
                Some(l) => outln!("{l}"),
                None => outln!("compile cache: {} held, within {}; nothing removed", cache::size_text(p.kept_bytes), cache::size_text(max)),
            }
        }
        CacheCommand::Clear => {
            let mut removed = Vec::new();
            for f in cache::usage(&root) {
                std::fs::remove_dir_all(&f.folder).map_err(|e| anyhow::anyhow!("removing {}: {e}", f.folder.display()))?;
                removed.push(format!("{} ({})", f.folder.display(), cache::size_text(f.bytes)));
            }
            if removed.is_empty() {
                outln!("{}: no compile cache; nothing to clear", root.display());
            } else {
                outln!("removed {}", removed.join(", "));
            }
        }
    }
    Ok(0)
}
