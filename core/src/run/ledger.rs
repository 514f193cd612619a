//! What a tune knows, in one place: the measurements it found in the database, every result of
//! this run, the database writes not yet made, the best time so far, what the devices did, and
//! the counters the report shows. Only the search loop's thread touches it; the device
//! sessions send their outcomes there.

use crate::backend::Backend;
use crate::error::FailureKind;
use crate::measure::stats::Stats;
use crate::plan::roofline::Peaks;
use crate::run::report::{ConfigResult, DeviceReport, Event, ResultOutcome};
use crate::run::stale::{self, Stale};
use crate::run::{Context, RefOutputs, TuneOptions};
use crate::search::strategy::Outcome;
use crate::store::db::{self, Entry, Environment, Measurement, Span, SpanKind, Status};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Instant;

/// The tune's records. See the module docs.
pub(crate) struct Ledger<'a> {
    pub ctx: &'a Context,
    pub opts: &'a TuneOptions,
    /// Measurements already in the database (empty with `remeasure`).
    pub known: HashMap<String, Measurement>,
    /// Every result so far, by config key.
    pub results: HashMap<String, ConfigResult>,
    /// Measurements not yet written to the database.
    pub pending: Vec<(String, Measurement)>,
    last_flush: Instant,
    /// The fastest mean so far, on the judging device's scale (see `ratios`).
    best: Option<Stats>,
    /// Compilations performed, and of those served by a persistent compile cache.
    pub compiled: usize,
    pub cache_hits: usize,
    /// Compile failures the compile cache answered (see [`crate::store::cache::binary`]).
    pub cached_refusals: usize,
    /// Compiler processes the out-of-memory killer ended while compiling.
    pub compiles_killed_for_memory: u32,
    /// Seconds spent compiling, summed over threads.
    pub compile_seconds: f64,
    /// Compile threads the search loop ran.
    pub compile_threads: usize,
    /// The search was ended early ([`crate::TuneOptions::wrap_up`]): its winner is stored as
    /// partial, and answers no later tune.
    pub ended_early: bool,
    /// The time limit that stopped the search, in milliseconds, where it stopped with configs
    /// and evaluations left ([`db::RunNote::time_limit_ms`]).
    pub time_limit_ms: Option<u64>,
    /// Configs pruned after compiling, by category.
    pub pruned_after: BTreeMap<String, usize>,
    /// What each device did.
    pub devices: Vec<DeviceReport>,
    /// Each device's times over the judging device's (1 until measured on a shared config).
    pub ratios: Vec<f64>,
    /// The expected outputs, once made.
    pub reference: Option<Arc<RefOutputs>>,
    /// Notes for the report.
    pub notes: Vec<String>,
    /// What the database entry holds that this tune's setup makes stale, until its first write
    /// drops it.
    pub stale: Option<Stale>,
    /// Failures grouped by cause, once diagnosed.
    pub causes: Vec<crate::run::diagnose::Cause>,
    /// What the priors held.
    pub prior: Option<crate::run::report::PriorReport>,
    /// Who proposed each config sent to be measured, by key, where the strategy says
    /// ([`crate::search::Strategy::proposed_by`]).
    pub proposed: HashMap<String, String>,
    /// What this run says of its search, once the search ended: written with its
    /// measurements, whether the tune then finishes, fails or is stopped.
    pub note: Option<db::RunNote>,
    /// The note as last written ([`Ledger::flush`] writes it again when it changed).
    note_written: Option<db::RunNote>,
    /// What the search did about its slowest compiles.
    pub compile_tail: Option<crate::run::CompileTail>,
    /// Configs verified so far during the search (the sample counts them).
    pub verified: usize,
    /// What kernels printed (device `printf`), where the backend kept it out of the tuner's
    /// output.
    pub printed: PrintedTally,
    /// Where each config's time went in this run (compiles, device jobs), by config key.
    spans: HashMap<String, Vec<Span>>,
    /// When the CPU computed the expected outputs, where it did: seconds from the start.
    pub reference_span: Option<(f64, f64)>,
    /// The number the next result of this run gets.
    next_seq: usize,
    /// Whether a database write failed in this tune (warned once; the tune goes on:
    /// [`Ledger::maybe_flush`]).
    db_failed: bool,
    /// Where this tune kept what the database could not take ([`Ledger::keep_unsaved`]): the
    /// file, and the entry it holds.
    pub kept_elsewhere: Option<(std::path::PathBuf, Entry)>,
    /// Spans taken for a write that failed, for the measurements kept elsewhere.
    pub(crate) unwritten_spans: Vec<(String, Vec<Span>)>,
    /// Environment facts for the database.
    environment: Environment,
    /// The first device's peak rates, where known (for the winner's roofline position).
    pub peaks: Option<Peaks>,
    target_name: String,
    target: crate::target::Target,
    timing: crate::measure::timing::TimingMethod,
    t0: Instant,
    pub(crate) run: u64,
}

/// What the kernels of a tune printed (device `printf`) where the backend kept it out of the
/// tuner's output (a worker's standard output): said once as it starts, and summed up in the
/// report's notes.
#[derive(Default)]
pub(crate) struct PrintedTally {
    /// The configs whose jobs printed.
    configs: std::collections::BTreeSet<String>,
    all: crate::backend::Printed,
    /// The config of the first line kept.
    first: Option<String>,
}

/// What the times of a kernel that prints include, and what to do.
const PRINTING_COSTS: &str = "printing costs time, and the times measured include it: remove the printf (or put it under an `#ifdef`) before you trust them";

impl PrintedTally {
    /// Adds what `config` printed; the warning to give at once when it is the tune's first.
    pub fn add(&mut self, config: &crate::space::config::Config, p: crate::backend::Printed) -> Option<String> {
        let first = self.first.is_none();
        let said = first.then(|| {
            format!(
                "the kernel prints to standard output (device printf): {config} printed {} while measured, the first: `{}`; kerntune keeps it out of its own output and counts it (the summary says how much). {}{}",
                p.size(),
                p.first.first().map_or("", String::as_str),
                PRINTING_COSTS[..1].to_uppercase(),
                &PRINTING_COSTS[1..]
            )
        });
        if first {
            self.first = Some(config.to_string());
        }
        self.configs.insert(config.key());
        self.all.add(p);
        said
    }

    /// The report's note, where anything was printed.
    pub fn note(&self) -> Option<String> {
        let first = self.first.as_ref()?;
        let n = self.configs.len();
        Some(format!(
            "the kernel printed to standard output (device printf) in {n} config{}: {}, kept out of kerntune's output; the first from {first}: {}; {PRINTING_COSTS}",
            if n == 1 { "" } else { "s" },
            self.all.size(),
            self.all.quoted()
        ))
    }
}

/// Whether `m` is a failure earlier versions stored when the device's kernel worker could not
/// start (every config then failed in turn with `starting a CUDA worker process (…): …`): the
/// worker's, not the config's, so it is measured again. Failures since are not stored (see
/// [`crate::BackendError::WorkerStart`]).
fn workers_failure(m: &Measurement) -> bool {
    matches!(&m.status, Status::Failed { failure: FailureKind::Other, message }
        if (message.starts_with("starting a ") || message.starts_with("locating this program to start a ")) && message.contains(" worker"))
}

impl<'a> Ledger<'a> {
    /// A ledger with nothing measured yet; `stored` is the database entry, if any.
    pub fn new<B: Backend>(ctx: &'a Context, opts: &'a TuneOptions, stored: Option<Entry>, devices: &[B], t0: Instant) -> Ledger<'a> {
        // Records made for another setup (arguments, launch, verification … changed since, or
        // timeouts under a shorter limit) are not reused, and go at the first write.
        let stale = stored.as_ref().and_then(|e| stale::stale(e, &stale::setup(ctx, opts)));
        let mut known: HashMap<String, Measurement> = match (stored, opts.remeasure) {
            (Some(e), false) => e.measurements.into_iter().filter(|(_, m)| stale.as_ref().is_none_or(|s| s.keeps(m))).collect(),
            _ => HashMap::new(),
        };
        let before = known.len();
        known.retain(|_, m| !workers_failure(m));
        let workers = before - known.len();
        let first = &devices[0];
        let mut details: BTreeMap<String, String> = first.environment().into_iter().collect();
        let peaks = Peaks::of_device(first.limits(), &first.target().backend, &first.target().name).map(|p| p.for_precision(ctx.job.half_precision()));
        if let Some(p) = &peaks {
            p.write(&mut details);
        }
        if devices.len() > 1 {
            details.insert("devices".into(), devices.len().to_string());
        }
        let environment = Environment {
            kerntune: env!("CARGO_PKG_VERSION").into(),
            host: std::env::var("HOSTNAME").ok().or_else(|| std::fs::read_to_string("/etc/hostname").ok().map(|s| s.trim().to_string())).unwrap_or_default(),
            timing: first.timing_method().to_string(),
            details,
        };
        Ledger {
            ctx,
            opts,
            known,
            results: HashMap::new(),
            pending: Vec::new(),
            db_failed: false,
            unwritten_spans: Vec::new(),
            kept_elsewhere: None,
            last_flush: Instant::now(),
            best: None,
            compiled: 0,
            cache_hits: 0,
            cached_refusals: 0,
            compiles_killed_for_memory: 0,
            compile_seconds: 0.0,
            compile_threads: 1,
            ended_early: false,
            time_limit_ms: None,
            pruned_after: BTreeMap::new(),
            devices: devices.iter().enumerate().map(|(i, d)| DeviceReport { index: i, name: d.target().name.clone(), ..Default::default() }).collect(),
            ratios: vec![1.0; devices.len()],
            reference: ctx.expected.clone(),
            notes: stale
                .as_ref()
                .map(|s| s.notes(opts.only.is_some()))
                .into_iter()
                .flatten()
                .chain((workers > 0).then(|| {
                    let (s, their) = if workers == 1 { ("", "its config is") } else { ("s", "their configs are") };
                    format!("database: {workers} stored failure{s} came from a kernel worker that could not start (stored by an earlier version; not the configs' doing): {their} measured again")
                }))
                .collect(),
            // A tune of some configs only (`confirm`) leaves the others' records.
            stale: stale.filter(|_| opts.only.is_none()),
            causes: Vec::new(),
            prior: None,
            proposed: HashMap::new(),
            note: None,
            note_written: None,
            compile_tail: None,
            verified: 0,
            printed: PrintedTally::default(),
            spans: HashMap::new(),
            reference_span: None,
            next_seq: 0,
            environment,
            peaks,
            target_name: first.target().name.clone(),
            target: first.target().clone(),
            timing: first.timing_method(),
            t0,
            run: db::now(),
        }
    }

    /// Notes that `key`'s config spent `seconds` from `started` in `what`: on a compile thread,
    /// or on `device`. Kept with its record (see [`Trace::spans`]).
    pub fn span(&mut self, key: String, what: SpanKind, device: Option<usize>, started: Instant, seconds: f64) {
        let from = started.saturating_duration_since(self.t0).as_secs_f64();
        self.spans.entry(key).or_default().push(Span::new(what, device, from, seconds));
    }

    /// The configs whose spans went on after their record (the re-measurements of `--recheck`,
    /// the memory checker, diagnosis): each result of this run is given every span its config
    /// has, and those that changed are returned, for their records in the database.
    pub fn late_spans(&mut self) -> Vec<(String, Vec<Span>)> {
        let mut late = Vec::new();
        for (key, r) in self.results.iter_mut().filter(|(_, r)| !r.from_db) {
            if let Some(all) = self.spans.get(key).filter(|all| all.len() > r.spans.len()) {
                r.spans = all.clone();
                late.push((key.clone(), all.clone()));
            }
        }
        late
    }

    /// When the CPU computed the expected outputs (from `started`, for `seconds`).
    pub fn reference_computed(&mut self, started: Instant, seconds: f64) {
        let from = started.saturating_duration_since(self.t0).as_secs_f64();
        self.reference_span = Some((from, from + seconds));
    }

    /// The run's length so far and what it ran on, with the compiles no record keeps: for the
    /// run's note ([`db::RunNote::time`]) and the report's account of its time.
    pub fn run_time(&self) -> db::RunTime {
        let ms = |s: f64| (s.max(0.0) * 1e3).round() as u64;
        let unrecorded: Vec<&Span> = self
            .spans
            .iter()
            .filter(|(k, _)| self.results.get(*k).is_none_or(|r| matches!(r.outcome, ResultOutcome::Pruned { .. })))
            .flat_map(|(_, v)| v.iter().filter(|s| !s.what.on_device()))
            .collect();
        db::RunTime {
            wall_ms: ms(self.t0.elapsed().as_secs_f64()),
            compile_threads: self.compile_threads as u32,
            devices: self.devices.len() as u32,
            reference_ms: self.reference_span.map(|(a, b)| (ms(a), ms(b))),
            unrecorded_compiles: unrecorded.len() as u32,
            unrecorded_compile_ms: ms(unrecorded.iter().map(|s| s.seconds()).sum()),
            unrecorded_spans_ms: crate::run::timeline::merged(unrecorded.iter().map(|s| (s.from_s, s.to_s)).collect())
                .into_iter()
                .map(|(a, b)| (ms(a), ms(b)))
                .collect(),
            compiles_killed_for_memory: self.compiles_killed_for_memory,
            memory_held_ms: ms(crate::compiler::memory::held_seconds()),
        }
    }

    /// Puts the run's length so far in its note ([`Ledger::run_time`]).
    pub fn note_time(&mut self) {
        let time = self.run_time();
        if let Some(n) = self.note.as_mut() {
            n.time = Some(time);
        }
    }

    /// The best time so far, on the scale of device `d` (for racing there).
    pub fn best_on(&self, d: usize) -> Option<Stats> {
        self.best.as_ref().map(|b| scaled(b, self.ratios[d]))
    }

    /// A result's stats on the judging device's scale.
    pub fn normalized(&self, r: &ConfigResult) -> Option<Stats> {
        let s = r.stats()?;
        Some(match r.device {
            Some(d) if self.ratios[d] != 1.0 => scaled(s, 1.0 / self.ratios[d]),
            _ => s.clone(),
        })
    }

    /// What the strategy is told about a config.
    pub fn outcome_of(&self, key: &str) -> Outcome {
        match self.results.get(key) {
            Some(r @ ConfigResult { outcome: ResultOutcome::Measured { .. }, .. }) => Outcome::Time(self.normalized(r).map_or(f64::INFINITY, |s| s.mean)),
            Some(ConfigResult { outcome: ResultOutcome::Failed { kind, .. }, .. }) => Outcome::Failed(*kind),
            Some(ConfigResult { outcome: ResultOutcome::Pruned { .. }, .. }) => Outcome::Failed(FailureKind::OutOfResources),
            None => Outcome::Failed(FailureKind::Other),
        }
    }

    /// Records a result of this run, numbering it; with `persist`, also queues it for the
    /// database (results taken from the database and configs pruned after compiling are not
    /// written back).
    pub fn record(&mut self, mut r: ConfigResult, persist: bool) {
        let key = r.config.key();
        if !r.from_db {
            r.spans = self.spans.get(&key).cloned().unwrap_or_default();
            if r.seq.is_none() {
                r.seq = Some(self.next_seq);
                self.next_seq += 1;
            }
            if r.elapsed_s.is_none() {
                r.elapsed_s = Some(self.t0.elapsed().as_secs_f64());
            }
            if r.proposed_by.is_none() {
                r.proposed_by = self.proposed.get(&key).cloned();
            }
        }
        if let Some(s) = self.normalized(&r) {
            if !s.raced && self.best.as_ref().is_none_or(|b| s.mean < b.mean) {
                self.best = Some(s);
            }
        }
        if persist {
            if let Some(mut m) = r.measurement(self.run, db::now(), r.device.filter(|_| self.devices.len() > 1)) {
                if let Some(t) = m.trace.as_mut() {
                    t.shard = self.opts.shard;
                }
                self.pending.push((key.clone(), m));
            }
        }
        tracing::info!(target: "kerntune::autotuning", config = %r.config, from_db = r.from_db, "{}", r.summary_line());
        if let Some(o) = &self.opts.observer {
            o(&Event::Result { result: &r, best: self.best.as_ref().map(|b| b.mean) });
        }
        self.results.insert(key, r);
    }

    /// Replaces a config's result by a new measurement of it (the final round), keeping its
    /// place in this run's order; a database record measured again takes a place of its own
    /// (its place was another run's).
    pub fn replace(&mut self, mut r: ConfigResult) {
        match self.results.get(&r.config.key()) {
            Some(old) if !old.from_db => {
                r.seq = old.seq;
                // The search trace keeps when it was first measured.
                r.elapsed_s = r.elapsed_s.or(old.elapsed_s);
                r.compile_seconds = r.compile_seconds.or(old.compile_seconds);
                r.eval_seconds = r.eval_seconds.or(old.eval_seconds);
            }
            Some(_) => {
                r.seq = None;
                r.elapsed_s = None;
            }
            None => {}
        }
        self.record(r, true);
    }

    /// Writes pending measurements to the database. Where it cannot be written, they stay
    /// pending (the next flush tries again; the tune's end keeps them elsewhere: see
    /// [`Ledger::keep_unsaved`]).
    pub fn flush(&mut self) -> Result<(), crate::run::Error> {
        let opts = self.opts;
        if let Some(d) = &opts.db {
            let late = self.spans_to_write();
            if !self.pending.is_empty() || self.kept_elsewhere.is_some() || self.note != self.note_written || !late.is_empty() {
                let run = self.run;
                let (id, env, tname, origin) = (self.ctx.id.clone(), self.environment.clone(), self.target_name.clone(), self.origin());
                let pending = self.to_write();
                let (note, stale) = (&self.note, &self.stale);
                let written = d.update_entry(&id, |e| {
                    if let (Some(s), Some(e)) = (stale, e.as_mut()) {
                        s.clean(e);
                    }
                    // A note alone makes no entry.
                    if pending.is_empty() && e.is_none() {
                        return;
                    }
                    let e = e.get_or_insert_with(|| Entry::new(id.clone(), tname, env));
                    e.record_all(origin, pending);
                    keep_late(e, run, &late);
                    e.note_runs(note.as_ref());
                });
                if let Err(e) = written {
                    // The spans taken for this write go with the next one.
                    self.unwritten_spans = late;
                    return Err(e.into());
                }
                self.written();
                self.note_written = self.note.clone();
            }
        }
        self.last_flush = Instant::now();
        Ok(())
    }

    /// The spans the next database write takes: those a failed write took ([`Ledger::flush`]
    /// puts them back), and those recorded since the last write ([`Ledger::late_spans`]).
    pub fn spans_to_write(&mut self) -> Vec<(String, Vec<Span>)> {
        [std::mem::take(&mut self.unwritten_spans), self.late_spans()].concat()
    }

    /// What the next database write takes: what an earlier failure of this tune kept in a file
    /// ([`Ledger::keep_unsaved`]), and the pending measurements.
    pub fn to_write(&self) -> Vec<(String, Measurement)> {
        let kept = self.kept_elsewhere.iter().flat_map(|(_, e)| e.measurements.iter().map(|(k, m)| (k.clone(), m.clone())));
        kept.chain(self.pending.iter().cloned()).collect()
    }

    /// After a database write of [`Ledger::to_write`]: nothing is pending, the file that kept
    /// an earlier failure's measurements is no longer needed, and the stale records are gone.
    pub fn written(&mut self) {
        self.pending.clear();
        self.stale = None;
        if let Some((path, _)) = self.kept_elsewhere.take() {
            let _ = std::fs::remove_file(path);
        }
    }

    /// Flushes when the last flush is older than the tune's `flush_every`. A database that
    /// cannot be written (a full disk) does not stop the tune: the first failure is warned
    /// about, and the measurements stay pending for the next flush or the tune's end.
    pub fn maybe_flush(&mut self) {
        if self.last_flush.elapsed() >= self.opts.flush_every {
            if let Err(e) = self.flush() {
                self.last_flush = Instant::now();
                if !self.db_failed {
                    tracing::warn!("{e}; the tune goes on, keeping its measurements to write at its end");
                }
                self.db_failed = true;
            }
        }
    }

    /// Flushes at a tune's end that has no winner to store (stopped, failed, nothing passed):
    /// where the database cannot be written, keeps the measurements elsewhere
    /// ([`Ledger::keep_unsaved`]) and warns where. Whether the database holds them.
    pub fn flush_or_keep(&mut self) -> bool {
        match self.flush() {
            Ok(()) => self.kept_elsewhere.is_none(),
            Err(e) => {
                if let Some(u) = self.keep_unsaved(&e, None) {
                    tracing::warn!("{}", u.line());
                }
                false
            }
        }
    }

    /// After the database could not take this run's pending measurements (`error`, with
    /// `winner` where the tune found one): keeps them, with the winner, in a kerntune database
    /// file (JSON) in the temporary folder (else the current one) that `kerntune db merge` adds
    /// to the database later, and says where ([`Unsaved`]).
    pub fn keep_unsaved(&mut self, error: &crate::run::Error, winner: Option<(db::Winner, Option<String>)>) -> Option<crate::run::Unsaved> {
        let d = self.opts.db.as_ref()?;
        let late = self.spans_to_write();
        let (id, env, tname, origin) = (self.ctx.id.clone(), self.environment.clone(), self.target_name.clone(), self.origin());
        // One file a tune: what an earlier failure of this tune kept there, and what is pending.
        let (path, mut e) = match self.kept_elsewhere.take() {
            Some((path, e)) => (Some(path), e),
            None => (None, Entry::new(id.clone(), tname, env)),
        };
        e.record_all(origin.clone(), self.pending.iter().cloned());
        let measurements = e.measurements.len();
        keep_late(&mut e, self.run, &late);
        let winner_kept = matches!(winner, Some((_, None)));
        match winner {
            Some((_, Some(_))) => e.withhold_winner(origin),
            Some((w, None)) => e.set_winner(origin, w),
            None => {}
        }
        e.note_runs(self.note.as_ref());
        let mut file = db::DbFile::default();
        file.entries.insert(id.key(), e.clone());
        let text = serde_json::to_string_pretty(&file).expect("a database serializes");
        let name =
            format!("kerntune-unsaved-{}-{}-{}.json", id.kernel.replace(|c: char| !c.is_ascii_alphanumeric() && c != '_', "_"), db::now(), std::process::id());
        let places = match path {
            Some(p) => vec![p],
            None => [std::env::temp_dir(), std::env::current_dir().unwrap_or_else(|_| ".".into())].map(|d| d.join(&name)).to_vec(),
        };
        let mut tried = Vec::new();
        let mut kept_in = None;
        for path in places {
            // Written whole: a file cut off by a full disk never replaces what an earlier failure
            // of this tune kept.
            match crate::store::write_whole(&path, text.as_bytes()) {
                Ok(()) => {
                    kept_in = Some(path);
                    break;
                }
                Err(e) => tried.push(format!("{}: {e}", path.display())),
            }
        }
        if let Some(path) = &kept_in {
            self.pending.clear();
            self.kept_elsewhere = Some((path.clone(), e));
        }
        Some(crate::run::Unsaved {
            database: d.path().to_path_buf(),
            error: {
                let e = error.to_string();
                e.strip_prefix(&format!("database {}: ", d.path().display())).map_or(e.clone(), str::to_string)
            },
            measurements,
            winner: winner_kept,
            kept_error: kept_in.is_none().then(|| tried.join("; ")),
            kept_in,
        })
    }

    /// What this tune's measurements are for (the entry's origin).
    pub fn origin(&self) -> db::Origin {
        db::Origin {
            space: self.ctx.space_hash.clone(),
            verify: self.ctx.verify_hash.clone(),
            shard: self.opts.shard,
            merged: Vec::new(),
            setup: crate::run::stale::setup(self.ctx, self.opts),
        }
    }

    /// Notes what this run says of its search: the `strategy` it ran, what it learned from,
    /// the search's own line (`search`, [`crate::search::Strategy::summary`]) and how it
    /// verified outputs (`verification`, [`crate::spec::job::Verification::in_full`]).
    pub fn note_search(&mut self, strategy: String, search: Option<String>, verification: String) {
        self.note = Some(db::RunNote {
            run: self.run,
            strategy,
            prior: self.prior.as_ref().map(|p| p.line.clone()),
            search,
            findings: Vec::new(),
            verification: Some(verification),
            memcheck: None,
            time: Some(self.run_time()),
            winner_withheld: None,
            time_limit_ms: self.time_limit_ms,
            shard: self.opts.shard,
        });
    }

    /// Notes what the tune found out about its failures (each cause's diagnosis, after its
    /// kind), for the run's note in the database.
    ///
    /// Most configs disagreeing with the reference ([`crate::run::diagnose::disagreement`]) come
    /// first: the report showed the 18 configs a wrong default made "wrong output", and the
    /// value they share, without the warning the tune printed that the reference was the likely
    /// culprit.
    ///
    /// Called after the search and again after the finals (whose verifications count too), so
    /// that the note, the warning and the winner's withholding read the same disagreement.
    /// Returns it: most verified configs disagreeing with the reference, over every result of
    /// the tune (the database's included).
    pub fn note_findings(&mut self) -> Option<crate::run::diagnose::Disagreement> {
        // In the configs' order, not the map's: the same finding every run.
        let mut results: Vec<&ConfigResult> = self.results.values().collect();
        results.sort_by_cached_key(|r| r.config.key());
        let disagreement = crate::run::diagnose::disagreement(results, self.ctx.prep.space.params(), &self.ctx.job.verify);
        if let Some(n) = self.note.as_mut() {
            n.findings = disagreement
                .as_ref()
                .map(|d| format!("{}: {d}", crate::error::FailureKind::WrongOutput))
                .into_iter()
                .chain(self.causes.iter().flat_map(|c| c.findings()))
                .collect();
        }
        disagreement
    }

    /// The environment record and target name for the database.
    pub fn environment(&self) -> (&Environment, &str) {
        (&self.environment, &self.target_name)
    }

    /// The (first) device's target.
    pub fn target(&self) -> &crate::target::Target {
        &self.target
    }

    /// How the devices time launches.
    pub fn timing(&self) -> crate::measure::timing::TimingMethod {
        self.timing
    }

    /// Configs this run measured (or saw fail): what a stop keeps.
    pub fn kept(&self) -> usize {
        self.results.values().filter(|r| !r.from_db && !matches!(r.outcome, ResultOutcome::Pruned { .. })).count()
    }
}

/// `s` with every time multiplied by `k`.
pub(crate) fn scaled(s: &Stats, k: f64) -> Stats {
    Stats { mean: s.mean * k, median: s.median * k, min: s.min * k, max: s.max * k, stddev: s.stddev * k, ci_half: s.ci_half * k, ..s.clone() }
}

/// Gives the records of run `run` in `e` the spans their configs had after the records were
/// made ([`Ledger::late_spans`]); a record kept from an earlier run keeps that run's.
pub(crate) fn keep_late(e: &mut Entry, run: u64, late: &[(String, Vec<Span>)]) {
    for (key, spans) in late {
        if let Some(t) = e.measurements.get_mut(key).and_then(|m| m.trace.as_mut()).filter(|t| t.run == run) {
            t.spans.clone_from(spans);
        }
    }
}
