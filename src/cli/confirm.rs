//! `kerntune confirm SPEC`: the last step of a split tune. After the shards' databases are
//! merged (`kerntune db merge`), the best configs any shard measured for each problem are
//! measured again on this machine's device, one after another with the same settings, and the
//! winner among them is stored: shards on different machines are not compared by their own
//! clocks.

use super::summary;
use crate::cli::out::outln;
use kerntune::store::db::{Database, DbFile};
use kerntune::{with_backends, Backend, BackendChoice, Devices, TuneOptions, TuneReport, Tuner};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The spec file the shards tuned.
    spec: PathBuf,
    /// Backend: auto, cuda, hip or wgpu.
    #[arg(long, default_value = "auto")]
    backend: BackendChoice,
    /// Device index within the backend.
    #[arg(long, conflicts_with = "devices")]
    device: Option<usize>,
    /// Several devices of one model (`all`, or 0,2,3): the candidates are still judged on one.
    #[arg(long)]
    devices: Option<Devices>,
    /// Confirm one problem: NAME=VALUE[,NAME=VALUE...] over the spec's problem sizes.
    #[arg(long)]
    key: Option<String>,
    /// The merged database (default: $KERNTUNE_CACHE_DIR/db.sqlite or the platform cache directory).
    #[arg(long)]
    db: Option<PathBuf>,
    /// The shards' verification and launch timeout, where their `tune` commands overrode the
    /// spec's (give the same flags).
    #[command(flatten)]
    measuring: super::tune::Measuring,
    /// How many of the shards' best configs to measure again.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=1000))]
    top: u16,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
    /// Allow kernel sources outside the spec's folder.
    #[arg(long)]
    allow_outside_sources: bool,
}

pub fn run(a: Args) -> anyhow::Result<i32> {
    // Stopped by a signal (Ctrl-C, a job's time limit), what was measured again is written, and
    // the command says so (as `tune` does); one that comes while the devices open stops it
    // before it measures.
    let stop = super::stop::Stop::install();
    let mut spec = kerntune::plan::prepare::load_with(&a.spec, kerntune::LoadOptions { allow_outside_sources: a.allow_outside_sources })?;
    super::tune::apply_flags(&mut spec, a.key.as_slice(), &a.measuring)?;
    // Said before a device opens.
    let db = Database::at(super::db_path(&a.db));
    if !db.path().exists() {
        anyhow::bail!(
            "{}: no such database; merge the shards' databases into it first (kerntune db merge shard-*.sqlite --db {})",
            db.path().display(),
            db.path().display()
        );
    }
    // A file that is no kerntune database, or a damaged one, is said before the device opens.
    let file = db.load()?;
    let devices = match (&a.devices, a.device) {
        (Some(d), _) => d.clone(),
        (None, d) => Devices::List(vec![d.unwrap_or(0)]),
    };
    let opened = super::open_devices(a.backend, &devices, if a.devices.is_some() { "--devices: " } else { "" })?;
    super::say_left_out(&opened.left_out);
    let backends = opened.backends;
    with_backends!(backends, v => confirm_all(v, &spec, &a, db, file, &stop))
}

fn confirm_all<B: Backend>(devices: Vec<B>, spec: &kerntune::Spec, a: &Args, db: Database, file: DbFile, stop: &super::stop::Stop) -> anyhow::Result<i32> {
    let language = devices[0].language();
    let tuner = Tuner::with_devices(devices)?;
    let mut reports: Vec<TuneReport> = Vec::new();
    for i in 0..spec.problems.len() {
        let job = spec.job(language, i)?;
        let id = tuner.entry_of(&job)?;
        // Every entry of this kernel, source, target and problem (any toolchain: shards may
        // have run on machines with other drivers), best measurement per config.
        let mut best: std::collections::BTreeMap<String, f64> = Default::default();
        let mut entries = 0;
        // The shards each entry stands for (`None`: a whole tune, or every shard merged).
        let mut shards: Vec<Option<(std::collections::BTreeSet<usize>, usize)>> = Vec::new();
        for e in file
            .entries
            .values()
            .filter(|e| e.id.kernel == id.kernel && e.id.kernel_hash == id.kernel_hash && e.id.target == id.target && e.id.problem == id.problem)
        {
            entries += 1;
            shards.push(e.origin.as_ref().and_then(|o| o.shards()));
            for (k, m) in &e.measurements {
                if let Some(s) = m.stats() {
                    let slot = best.entry(k.clone()).or_insert(f64::INFINITY);
                    *slot = slot.min(s.mean);
                }
            }
        }
        if best.is_empty() {
            anyhow::bail!(
                "{}: no shard measured {} on {} in {}; tune the shards first (kerntune tune --shard K/N --db shard-K.sqlite) and merge them",
                spec.path.display(),
                id.label(),
                id.target,
                db.path().display()
            );
        }
        // Every entry holds shards of one split: say which shards are missing (their configs
        // are not compared), and keep the confirmed winner as theirs, not the space's.
        let mut part: Option<(std::collections::BTreeSet<usize>, usize)> = None;
        if let Some(Some((_, count))) = shards.first() {
            if shards.iter().all(|s| s.as_ref().is_some_and(|s| s.1 == *count)) {
                let have: std::collections::BTreeSet<usize> = shards.iter().flatten().flat_map(|s| s.0.iter().copied()).collect();
                if let Some(said) = kerntune::store::db::shards_part(&have, *count) {
                    crate::cli::out::eprint_line(&format!(
                        "warning: {} ({}) in {}: {said}, so their configs are not compared and the winner is kept as these shards' only (kerntune db merge shard-*.sqlite --db {})",
                        id.kernel,
                        id.problem,
                        db.path().display(),
                        db.path().display()
                    ));
                    part = Some((have, *count));
                }
            }
        }
        let mut ranked: Vec<(String, f64)> = best.into_iter().collect();
        ranked.sort_by(|x, y| x.1.total_cmp(&y.1).then(x.0.cmp(&y.0)));
        let measured = ranked.len();
        let keys: Vec<String> = ranked.into_iter().take(a.top as usize).map(|(k, _)| k).collect();
        // Measured as the shards measured them (the spec's [bench], [prune] and compile tail, and
        // the flags given), every one of the shards' best: no budget, no roofline cut.
        let base = TuneOptions::for_spec(spec)?;
        let opts = TuneOptions {
            bench: a.measuring.bench(&base.bench),
            only: Some(keys.clone()),
            remeasure: true,
            force: true,
            strategy: "exhaustive".into(),
            budget: kerntune::spec::settings::Budget::default(),
            model: false,
            top_k: None,
            db: Some(db.clone()),
            cancel: Some(stop.flag.clone()),
            wrap_up: Some(stop.wrap.clone()),
            ..base.clone()
        };
        let stopped = |kept: usize, saved: bool| {
            let (name, code) = stop.which();
            let whereto = if saved { format!("written to {}", db.path().display()) } else { super::tune::NOT_WRITTEN.to_string() };
            crate::cli::out::eprint_line(&format!(
                "interrupted by {name} while confirming {} ({}): {kept} config(s) measured again, {whereto}; run the same command to confirm",
                id.kernel, id.problem
            ));
            code
        };
        let r = match tuner.tune(&job, &opts) {
            Err(kerntune::Error::Interrupted { kept, saved }) => {
                if a.json {
                    outln!("{}", serde_json::to_string_pretty(&reports)?);
                }
                return Ok(stopped(kept, saved));
            }
            r => r?,
        };
        if let Some((have, count)) = &part {
            db.update_entry(&r.entry, |e| {
                if let Some(o) = e.as_mut().and_then(|e| e.origin.as_mut()) {
                    o.set_shards(have, *count);
                }
            })?;
        }
        if !a.json {
            summary::print(&r, a.top as usize, Some(db.path()))?;
            outln!(
                "confirmed: {} is the winner among the shards' best {} of {measured} measured configs ({} entr{}), measured again on {}{}",
                r.winner,
                keys.len(),
                entries,
                if entries == 1 { "y" } else { "ies" },
                r.target.name,
                stop.wrapped()
                    .filter(|_| r.ended_early)
                    .map(|(n, _)| format!(" (ended early by {n}: only the configs measured again before it were compared)"))
                    .unwrap_or_default()
            );
        }
        reports.push(r);
        // Told to end early (SIGUSR1, SIGUSR2): the problems left are not started.
        if let (Some((name, code)), true) = (stop.wrapped(), i + 1 < spec.problems.len()) {
            if a.json {
                outln!("{}", serde_json::to_string_pretty(&reports)?);
            }
            crate::cli::out::eprint_line(&format!(
                "ended early by {name}: {} of {} problems confirmed, the rest not started; run the same command to confirm them",
                i + 1,
                spec.problems.len()
            ));
            return Ok(code);
        }
        // A signal that came as this problem's tune ended: the problems left are not started.
        if stop.requested() && i + 1 < spec.problems.len() {
            if a.json {
                outln!("{}", serde_json::to_string_pretty(&reports)?);
            }
            let (name, code) = stop.which();
            crate::cli::out::eprint_line(&format!(
                "interrupted by {name}: {} of {} problems confirmed; run the same command to confirm the rest",
                i + 1,
                spec.problems.len()
            ));
            return Ok(code);
        }
    }
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&reports)?);
    }
    Ok(0)
}
