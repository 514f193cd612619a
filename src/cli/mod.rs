//! Command-line front end. Every error is printed as one `error:` line (with the file and field
//! where it comes from a spec) and exits non-zero; nothing panics on bad input.

mod cache;
mod check;
mod confirm;
mod db;
mod devices;
mod generate;
pub(crate) mod out;
mod report;
mod simulate;
mod stop;
mod summary;
mod tune;

use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// kerntune: tune GPU kernels on CUDA, HIP and any wgpu adapter.
#[derive(Parser, Debug)]
#[command(name = "kerntune", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

// Every subcommand takes `-1` as a value (`--budget -1` gets kerntune's own message about the
// value, not clap's "unexpected argument '-1'" with a tip that does not apply).
#[derive(Subcommand, Debug)]
enum Command {
    /// List every device the compiled-in backends find, with its limits.
    #[command(allow_negative_numbers = true)]
    Devices(devices::Args),
    /// Load a spec (TOML or T1) without a device and print its search space: the cartesian
    /// size, the valid configs, the default config and its launch, and the arguments.
    #[command(allow_negative_numbers = true)]
    Check(check::Args),
    /// Tune the kernel a spec file describes and store the winner.
    #[command(allow_negative_numbers = true)]
    Tune(Box<tune::Args>),
    /// After a split tune (`tune --shard` and `db merge`): measure the shards' best configs
    /// again on this device and store the winner.
    #[command(allow_negative_numbers = true)]
    Confirm(confirm::Args),
    /// Inspect or maintain the winner database.
    #[command(allow_negative_numbers = true)]
    Db(db::Args),
    /// Inspect, prune or clear the compile caches (compiled kernels and kept compile errors).
    Cache(cache::Args),
    /// Print the config set a vendor's generator derives for a target, class and shape, the
    /// pruned configs with reasons, and the perf model's order.
    #[command(allow_negative_numbers = true)]
    Generate(generate::Args),
    /// Write one self-contained HTML page of a kernel's database entries: times, parameters,
    /// search trace, compile times, failures, roofline, and several devices side by side.
    #[command(allow_negative_numbers = true)]
    Report(report::Args),
    /// Score search strategies offline on recorded spaces (Kernel Tuner caches, T4 files, tune
    /// reports).
    #[command(allow_negative_numbers = true)]
    Simulate(simulate::Args),
}

/// The device preset `--target` names (`check`, `generate`), or an error that it is neither a
/// preset nor a preset's architecture, with the nearest name and the presets.
pub(crate) fn target_preset(name: &str) -> anyhow::Result<(kerntune::Target, kerntune::Limits)> {
    kerntune::Limits::preset(name).ok_or_else(|| {
        let names = kerntune::PRESETS.iter().flat_map(|p| [p.name, p.arch]);
        let hint = kerntune::hint::nearest(name, names, 3).map(|n| format!("did you mean `{n}`? ")).unwrap_or_default();
        anyhow::anyhow!(
            "--target: `{}` is neither a preset nor a preset's architecture; {hint}use one of: {}",
            kerntune::spec::error::quote(name),
            kerntune::PRESETS.iter().map(|p| format!("{} ({})", p.name, p.arch)).collect::<Vec<_>>().join(", ")
        )
    })
}

/// Where the database lives: `--db`, else `$KERNTUNE_CACHE_DIR/db.sqlite`, else the platform
/// cache directory.
pub(crate) fn db_path(arg: &Option<PathBuf>) -> PathBuf {
    arg.clone().unwrap_or_else(kerntune::store::db::Database::default_path)
}

/// Before a command writes to the database `--db` names: a new one named `.json` is an SQLite
/// file all the same, and an existing one in JSON (an export) becomes one at the first write
/// (kerntune's database is SQLite; a JSON one is read as it is), which a user who named it so
/// for JSON would find only on opening it.
pub(crate) fn say_json_db(arg: &Option<PathBuf>) {
    let Some(path) = arg else { return };
    let json = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("json"));
    if json && !path.exists() {
        out::eprint_line(&format!(
            "note: --db {0}: a new database is an SQLite file, whatever its name; `kerntune db export --db {0} --out FILE.json` writes it as JSON",
            path.display()
        ));
    } else if kerntune::store::db::Database::at(path).is_json() {
        out::eprint_line(&format!(
            "note: --db {0} is a database in JSON (an export, or an earlier kerntune's): writing to it makes it an SQLite file with the same entries; `kerntune db export --db {0} --out FILE.json` writes JSON again",
            path.display()
        ));
    }
}

/// Opens the devices a tune (or `confirm`) measures on; where the backend named finds none, the
/// error says where to look (`kerntune devices`) and that leaving `--backend` out takes the best
/// backend found.
pub(crate) fn open_devices(choice: kerntune::BackendChoice, devices: &kerntune::Devices, flag: &str) -> anyhow::Result<kerntune::OpenedDevices> {
    kerntune::open_devices(choice, devices).map_err(|e| {
        let hint = match (&e, choice) {
            (kerntune::OpenError::NoDevice { .. }, kerntune::BackendChoice::Auto) => "",
            // A device number the machine lacks is said with the ones it has.
            (kerntune::OpenError::NoDevice { message, .. }, _) if message.contains("kerntune devices") => "",
            (kerntune::OpenError::NoDevice { .. }, _) => "; `kerntune devices` lists what this machine has, and without --backend a tune takes the best of it",
            _ => "",
        };
        anyhow::anyhow!("{flag}{e}{hint}")
    })
}

/// Says which devices `--devices all` left out (another model than the first), if any.
pub(crate) fn say_left_out(left_out: &[(usize, String)]) {
    let Some(&(first, _)) = left_out.first() else { return };
    let names: Vec<String> = left_out.iter().map(|(i, name)| format!("#{i} {name}")).collect();
    out::eprint_line(&format!(
        "kerntune: --devices all: left out {} (another model than device #0: a tune measures on one model; tune it on its own with --device {first})",
        names.join(", ")
    ));
}

/// Logs to stderr, filtered by `KERNTUNE_LOG` (default: warnings; `KERNTUNE_PRINT_AUTOTUNING=1`
/// adds each config's result). Called first thing in `main`, so that worker processes log too.
pub(crate) fn init_logging() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_env("KERNTUNE_LOG").unwrap_or_else(|_| {
        if std::env::var("KERNTUNE_PRINT_AUTOTUNING").is_ok_and(|v| v == "1") {
            EnvFilter::new("warn,kerntune::autotuning=info")
        } else {
            EnvFilter::new("warn")
        }
    });
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_target(true).try_init();
}

/// Runs the CLI and returns the exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => 0,
                _ => 2,
            };
        }
    };
    // Logging was started by `main` before the worker hook.
    tracing::debug!("started");
    let r = match cli.command {
        Command::Devices(a) => devices::run(a),
        Command::Check(a) => check::run(a),
        Command::Tune(a) => tune::run(*a),
        Command::Confirm(a) => confirm::run(a),
        Command::Db(a) => db::run(a),
        Command::Cache(a) => cache::run(a),
        Command::Simulate(a) => simulate::run(a),
        Command::Report(a) => report::run(a),
        Command::Generate(a) => generate::run(a),
    };
    match r {
        Ok(code) => code,
        Err(e) if matches!(e.downcast_ref::<out::OutputError>(), Some(out::OutputError::Closed)) => 0,
        Err(e) => {
            out::eprint_line(&format!("error: {}", chain(&e)));
            1
        }
    }
}

/// An error and its causes on one line, each cause once, and the file the line starts with
/// named once (a spec's error names its file, as does the command that read it).
pub(crate) fn chain(e: &anyhow::Error) -> String {
    let mut msg = e.to_string();
    let lead = msg.split_once(": ").map(|(file, _)| format!("{file}: "));
    for cause in e.chain().skip(1) {
        let c = cause.to_string();
        if !msg.contains(&c) {
            msg.push_str(": ");
            msg.push_str(lead.as_deref().and_then(|l| c.strip_prefix(l)).unwrap_or(&c));
        }
    }
    msg
}

#[cfg(test)]
mod tests {
    use super::chain;

    #[test]
    fn a_chain_names_its_file_once() {
        let e = anyhow::anyhow!("big.toml: problems: E=1: more than the device's 2.0 GiB").context("big.toml: tuning triad (E=1)");
        assert_eq!(chain(&e), "big.toml: tuning triad (E=1): problems: E=1: more than the device's 2.0 GiB");
        let e = anyhow::anyhow!("disk I/O error").context("database x.db").context("big.toml: tuning triad (E=1)");
        assert_eq!(chain(&e), "big.toml: tuning triad (E=1): database x.db: disk I/O error");
    }
}
