//! Whether an entry's stored measurements still describe the tune asked for.
//!
//! An entry is found by kernel source, target, toolchain and problem key, but what a
//! measurement shows depends on more of the spec: the arguments (a buffer's length, type or
//! fill), the launch geometry and the defines, the verification, how L2 is flushed, and — for a
//! config that timed out — the launch timeout, or for one whose compile did, the compile
//! timeout. A user who fixes an undersized buffer or a wrong grid, loosens a tolerance, or
//! raises `[bench] timeout` or `[tune] compile_timeout` as a timeout's message suggests, and
//! tunes again, must see the configs measured again, not the old failures and times read back. Each tune stores a hash of each of these parts with its entry (`Origin::setup`); a
//! later tune compares them: a changed part makes every stored measurement stale, a longer
//! timeout only the timeouts. Stale records are not reused, and the tune's first write drops
//! them, so the entry never mixes the two. Entries stored before the parts were recorded have
//! none and are reused as before.

use crate::error::FailureKind;
use crate::run::{Context, RefOutputs, TuneOptions};
use crate::spec::job::{ArgKind, ArgSpec, Reference, TuneJob};
use crate::spec::problem::{ArgData, Init, ProblemData};
use crate::store::db::{Entry, Measurement, Status, SETUP_COMPILE_TIMEOUT, SETUP_PARTS, SETUP_TIMEOUT};
use std::collections::BTreeMap;

/// What a job's verification hash and setup are made from, each made once when the tune is
/// prepared.
pub(crate) struct Texts {
    /// The verification: outputs, tolerances, reference ([`reference_text`]) and the outputs
    /// compared otherwise than element by element.
    pub verification: String,
    /// The arguments ([`args_text`]).
    pub args: String,
    /// The expected outputs given as data, each buffer by content (empty without them).
    pub expected: String,
}

impl Texts {
    /// The texts of `job`, whose problem data is `data`.
    pub(crate) fn of(job: &TuneJob, data: &ProblemData, expected: Option<&RefOutputs>) -> Texts {
        let v = &job.verify;
        let mut verification = format!("{:?}|{:?}|{:?}|{}", v.outputs, v.tolerance, v.per_output, reference_text(&v.reference));
        if !v.compare.is_empty() {
            // Only when set, so that a job without it hashes as it did before it existed.
            verification.push_str(&format!("|compare {:?}", v.compare));
        }
        if !v.mismatches.is_empty() {
            // Likewise: a job that allows no mismatch hashes as before.
            verification.push_str(&format!("|mismatches {:?}", v.mismatches));
        }
        let expected = expected.iter().flat_map(|e| &e.buffers).map(|b| format!("|{}#{}", b.name, crate::hash::short_hash(&b.data))).collect();
        Texts { verification, args: args_text(&job.args, data), expected }
    }
}

/// The parts of the setup the job decides.
pub(crate) fn job_setup(job: &TuneJob, texts: &Texts) -> BTreeMap<String, String> {
    let hash = |text: String| crate::hash::short_hash(text.as_bytes());
    BTreeMap::from([
        ("args".to_string(), hash(texts.args.clone())),
        ("launch".to_string(), hash(format!("{:?}|{:?}|{:?}|{:?}", job.grid, job.block, job.shared_mem, job.extent))),
        ("defines".to_string(), hash(format!("{}|{:?}", job.size_defines, job.compat))),
        ("verify".to_string(), hash(format!("{}{}", texts.verification, texts.expected))),
    ])
}

/// What the tune's measurements depend on beyond the entry's id, part by part: the job's
/// parts, how it is timed and how long a compile may take.
pub(crate) fn setup(ctx: &Context, opts: &TuneOptions) -> BTreeMap<String, String> {
    let mut s = ctx.setup.clone();
    s.insert("flush".to_string(), format!("{:?}", opts.bench.l2_flush()));
    s.insert(SETUP_TIMEOUT.to_string(), format!("{}", opts.bench.timeout.as_secs_f64()));
    s.insert(SETUP_COMPILE_TIMEOUT.to_string(), opts.compile_timeout.map_or(OFF.to_string(), |t| format!("{}", t.as_secs_f64())));
    s
}

/// A reference as a hash takes it: expected outputs by their buffers' names (their files by
/// content, where they are loaded), not by the path a spec was given from.
pub(crate) fn reference_text(r: &Reference) -> String {
    match r {
        Reference::Expected(files) => format!("expected {:?}", files.iter().map(|(n, _)| n).collect::<Vec<_>>()),
        other => other.describe(),
    }
}

/// The arguments as a hash takes them: each declaration, with a buffer read from a file named
/// by its contents (as read for this problem) rather than its path, so that the same spec given
/// from another working folder, or installed elsewhere with its data, is the same setup.
pub(crate) fn args_text(args: &[ArgSpec], data: &ProblemData) -> String {
    // Without such a buffer, the declarations as they always were hashed (stored hashes stand).
    if !args.iter().any(|a| matches!(a.kind, ArgKind::Buffer { init: Init::File { .. }, .. })) {
        return format!("{args:?}");
    }
    let mut text = String::new();
    for (i, a) in args.iter().enumerate() {
        match (&a.kind, data.args.get(i)) {
            (ArgKind::Buffer { dtype, len, init: Init::File { .. }, access, memory }, Some(ArgData::Buffer(b))) => {
                text.push_str(&format!("{}:{dtype:?}:{len}:file#{}:{access:?}:{memory:?}|", a.name, crate::hash::short_hash(&b.data)));
            }
            _ => text.push_str(&format!("{a:?}|")),
        }
    }
    text
}

/// Why an entry's stored measurements are not reused.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Stale {
    /// These parts changed: every stored measurement (`count`) is stale.
    Changed { parts: Vec<&'static str>, count: usize },
    /// A timeout is longer now: the configs that ran past the shorter one are tried again.
    /// `launch`: the launch timeout's ([`SETUP_TIMEOUT`], measured again); `compile`: the
    /// compile timeout's ([`SETUP_COMPILE_TIMEOUT`], compiled again). At least one is set.
    Timeouts { launch: Option<Longer>, compile: Option<Longer> },
}

/// A timeout that is longer now than when `count` stored configs ran past it (`now` infinite:
/// no timeout).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Longer {
    pub was: f64,
    pub now: f64,
    pub count: usize,
}

/// Why `entry`'s measurements, made under the setup its origin records, do not all stand for
/// a tune of setup `now`; `None` when they do (or when the entry records no setup).
pub(crate) fn stale(entry: &Entry, now: &BTreeMap<String, String>) -> Option<Stale> {
    let was = &entry.origin.as_ref()?.setup;
    let parts: Vec<&'static str> =
        SETUP_PARTS.iter().filter(|(k, ..)| matches!((was.get(*k), now.get(*k)), (Some(a), Some(b)) if a != b)).map(|(_, said, _)| *said).collect();
    if !parts.is_empty() {
        return Some(Stale::Changed { parts, count: entry.measurements.len() });
    }
    // A limit stored as `off` (no compile timeout) is infinite; a key either side lacks (an
    // older kerntune's entry) compares nothing.
    let seconds = |s: Option<&String>| s.and_then(|s| if s == OFF { Some(f64::INFINITY) } else { s.parse::<f64>().ok() });
    let longer = |key: &str, compile: bool| {
        let (was, now) = (seconds(was.get(key))?, seconds(now.get(key))?);
        let count = entry.measurements.values().filter(|m| ran_past(m, compile)).count();
        (now > was && count > 0).then_some(Longer { was, now, count })
    };
    let (launch, compile) = (longer(SETUP_TIMEOUT, false), longer(SETUP_COMPILE_TIMEOUT, true));
    (launch.is_some() || compile.is_some()).then_some(Stale::Timeouts { launch, compile })
}

/// How a setup without a compile timeout records it.
const OFF: &str = "off";

/// Whether stored measurement `m` ran past the compile timeout (`compile`: its compile used more
/// CPU time than it) or the launch timeout.
fn ran_past(m: &Measurement, compile: bool) -> bool {
    matches!(&m.status, Status::Failed { failure: FailureKind::TimedOut, message } if crate::run::diagnose::is_compile_timeout(FailureKind::TimedOut, message) == compile)
}

impl Stale {
    /// Whether stored measurement `m` still stands.
    pub(crate) fn keeps(&self, m: &Measurement) -> bool {
        match self {
            Stale::Changed { .. } => false,
            Stale::Timeouts { launch, compile } => !(launch.is_some() && ran_past(m, false) || compile.is_some() && ran_past(m, true)),
        }
    }

    /// Whether a stored winner still answers a tune (a database hit): not when a part changed
    /// or the launch timeout is longer, but a longer compile timeout alone leaves it standing —
    /// a program that launches the winner sets none, and must not tune again for it; `tune
    /// --force` with the longer timeout compiles those configs again.
    pub(crate) fn keeps_the_winner(&self) -> bool {
        matches!(self, Stale::Timeouts { launch: None, .. })
    }

    /// Drops what is stale from `entry` before a tune's first write: the stale measurements,
    /// the winner (chosen from them, or without the configs that timed out) and, when every
    /// measurement goes, the notes of the runs that made them.
    pub(crate) fn clean(&self, entry: &mut Entry) {
        entry.measurements.retain(|_, m| self.keeps(m));
        entry.winner = None;
        entry.origin = None;
        if matches!(self, Stale::Changed { .. }) {
            entry.runs.clear();
        }
    }

    /// The tune's notes saying what is measured again, and why. A tune of some configs only
    /// (`kerntune confirm`, which measures its configs again anyway) keeps the other records,
    /// and says so; a longer timeout changes nothing it measures.
    pub(crate) fn notes(&self, some_only: bool) -> Vec<String> {
        let s = |n: usize| if n == 1 { "" } else { "s" };
        let is = |n: usize| if n == 1 { "is" } else { "are" };
        let limit = |l: f64| if l.is_finite() { format!("under {l} s") } else { "with no timeout".to_string() };
        match self {
            Stale::Changed { parts, count } => {
                let said = match parts.as_slice() {
                    [one] => one.to_string(),
                    [first @ .., last] => format!("{} and {last}", first.join(", ")),
                    [] => "the spec".to_string(),
                };
                let done = if some_only {
                    "the configs measured here replace theirs, and the others are kept"
                } else {
                    "they are not reused, and this tune's measurements replace them"
                };
                vec![format!(
                    "database: {said} changed since the {count} stored measurement{} of this entry {}: {done}",
                    s(*count),
                    if *count == 1 { "was made" } else { "were made" }
                )]
            }
            Stale::Timeouts { .. } if some_only => Vec::new(),
            Stale::Timeouts { launch, compile } => launch
                .map(|Longer { was, now, count }| {
                    format!(
                        "database: {count} config{} that timed out under the {was} s limit {} measured again {} ([bench] timeout or --timeout)",
                        s(count),
                        is(count),
                        limit(now)
                    )
                })
                .into_iter()
                .chain(compile.map(|Longer { was, now, count }| {
                    format!(
                        "database: {count} config{} whose compile timed out under the {was} s compile timeout {} compiled again {} ([tune] compile_timeout, --compile-timeout)",
                        s(count),
                        is(count),
                        limit(now)
                    )
                }))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::space::config::Config;
    use crate::store::db::{EntryId, Environment, Origin};

    fn entry(setup: &[(&str, &str)], statuses: &[Status]) -> Entry {
        let id = EntryId { kernel: "k".into(), kernel_hash: "h".into(), target: "t".into(), toolchain: "c".into(), problem: "n=1".into() };
        let mut e = Entry::new(id, "T".into(), Environment::default());
        e.origin = Some(Origin {
            space: "s".into(),
            verify: "v".into(),
            shard: None,
            merged: Vec::new(),
            setup: setup.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        });
        for (i, s) in statuses.iter().enumerate() {
            let config = Config::new([("x", i as i64)]);
            e.measurements.insert(
                config.key(),
                Measurement { status: s.clone(), ..Measurement::timed(config, crate::measure::stats::Stats::from_samples(&[1.0], false), 1) },
            );
        }
        e
    }

    fn now(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    fn ok() -> Status {
        Status::Ok { stats: crate::measure::stats::Stats::from_samples(&[1.0], false) }
    }

    fn timeout() -> Status {
        Status::Failed { failure: FailureKind::TimedOut, message: "timed out after 0.050 s".into() }
    }

    #[test]
    fn a_changed_part_makes_every_measurement_stale_and_says_which() {
        let e = entry(&[("args", "a1"), ("launch", "l1"), ("verify", "v1"), ("timeout", "0.05")], &[ok(), ok(), timeout()]);
        assert_eq!(stale(&e, &now(&[("args", "a1"), ("launch", "l1"), ("verify", "v1"), ("timeout", "0.05")])), None);
        let s = stale(&e, &now(&[("args", "a2"), ("launch", "l2"), ("verify", "v1"), ("timeout", "9")])).expect("stale");
        assert_eq!(s, Stale::Changed { parts: vec!["the arguments", "the launch geometry"], count: 3 });
        let [note] = &s.notes(false)[..] else { panic!("{s:?}") };
        assert!(note.starts_with("database: the arguments and the launch geometry changed since the 3 stored measurements"), "{note}");
        assert!(s.notes(true)[0].ends_with("the configs measured here replace theirs, and the others are kept"));
        let mut cleaned = e.clone();
        s.clean(&mut cleaned);
        assert!(cleaned.measurements.is_empty() && cleaned.winner.is_none() && cleaned.origin.is_none());
    }

    #[test]
    fn a_longer_timeout_makes_the_timeouts_alone_stale() {
        let e = entry(&[("args", "a1"), ("timeout", "0.05")], &[ok(), timeout(), timeout()]);
        let s = stale(&e, &now(&[("args", "a1"), ("timeout", "10")])).expect("stale");
        assert_eq!(s, Stale::Timeouts { launch: Some(Longer { was: 0.05, now: 10.0, count: 2 }), compile: None });
        assert_eq!(s.notes(false), ["database: 2 configs that timed out under the 0.05 s limit are measured again under 10 s ([bench] timeout or --timeout)"]);
        assert!(s.notes(true).is_empty(), "a tune of some configs only measures none of them");
        let mut cleaned = e.clone();
        s.clean(&mut cleaned);
        assert_eq!(cleaned.measurements.len(), 1, "the measured config stays");
        // A shorter timeout, or none timed out: everything stands.
        assert_eq!(stale(&e, &now(&[("args", "a1"), ("timeout", "0.01")])), None);
        assert_eq!(stale(&entry(&[("timeout", "0.05")], &[ok()]), &now(&[("timeout", "10")])), None);
    }

    #[test]
    fn an_entry_that_records_no_setup_is_reused_as_before() {
        let e = entry(&[], &[ok(), timeout()]);
        assert_eq!(stale(&e, &now(&[("args", "a2"), ("timeout", "10")])), None);
        // A part one side lacks (a newer kerntune's) is not compared.
        let e = entry(&[("args", "a1"), ("timeout", "1")], &[ok()]);
        assert_eq!(stale(&e, &now(&[("args", "a1"), ("launch", "l9"), ("timeout", "1")])), None);
    }

    fn compile_timeout() -> Status {
        Status::Failed {
            failure: FailureKind::TimedOut,
            message: "compile timed out: still compiling after 2.1 s of its own CPU time (2.3 s of wall time), past the compile timeout of 2 s".into(),
        }
    }

    /// A compile that ran past the compile timeout is stored; a longer compile timeout (or
    /// none) compiles it again, and leaves the launch timeouts alone, and the other way round.
    #[test]
    fn a_longer_compile_timeout_makes_the_compile_timeouts_alone_stale() {
        let e = entry(&[("timeout", "1"), ("compile_timeout", "2")], &[ok(), compile_timeout(), timeout(), compile_timeout()]);
        assert_eq!(stale(&e, &now(&[("timeout", "1"), ("compile_timeout", "2")])), None);
        assert_eq!(stale(&e, &now(&[("timeout", "1"), ("compile_timeout", "1.5")])), None, "a shorter one would give up on them again");
        let s = stale(&e, &now(&[("timeout", "1"), ("compile_timeout", "off")])).expect("stale");
        assert_eq!(s, Stale::Timeouts { launch: None, compile: Some(Longer { was: 2.0, now: f64::INFINITY, count: 2 }) });
        assert!(s.keeps_the_winner(), "a program launching the winner does not tune again");
        assert_eq!(
            s.notes(false),
            ["database: 2 configs whose compile timed out under the 2 s compile timeout are compiled again with no timeout ([tune] compile_timeout, --compile-timeout)"]
        );
        let mut cleaned = e.clone();
        s.clean(&mut cleaned);
        assert_eq!(cleaned.measurements.len(), 2, "the measured config and the launch's timeout stay");
        assert!(cleaned.measurements.values().all(|m| !ran_past(m, true)));
        // Both longer: each kind is tried again, each with its line.
        let s = stale(&e, &now(&[("timeout", "5"), ("compile_timeout", "60")])).expect("stale");
        assert_eq!(s.notes(false).len(), 2, "{s:?}");
        let mut cleaned = e.clone();
        s.clean(&mut cleaned);
        assert_eq!(cleaned.measurements.len(), 1);
        // A longer launch timeout alone leaves the compile timeouts stored.
        let s = stale(&e, &now(&[("timeout", "5"), ("compile_timeout", "2")])).expect("stale");
        assert_eq!(s, Stale::Timeouts { launch: Some(Longer { was: 1.0, now: 5.0, count: 1 }), compile: None });
        assert!(!s.keeps_the_winner());
        // An entry an older kerntune stored records no compile timeout: nothing to compare.
        let e = entry(&[("timeout", "1")], &[compile_timeout()]);
        assert_eq!(stale(&e, &now(&[("timeout", "1"), ("compile_timeout", "off")])), None);
    }
}
