//! Another tuner's results as a database entry, so that `kerntune report` draws them: a Kernel
//! Tuner cache (`.json`, `.json.gz`) or a T4 results file becomes one entry — its device, its
//! kernel and problem size, every config with its time or failure, the compile and
//! benchmarking seconds where recorded, and the order the configs were measured in (by their
//! timestamps, else the file's order), so that the search trace, the compile times and the
//! failures read as a kerntune tune's do; Kernel Tuner's `GFLOP/s` and `GB/s` observers give
//! each config's FLOPs and bytes per launch (the roofline). The fastest config is the winner
//! (the file names none). A kerntune tune report (`kerntune tune --json`, run with `--no-db`
//! or gathered from a CI matrix) becomes the entry its tune's database would hold. Read only:
//! nothing here writes such a file.

use crate::error::FailureKind;
use crate::measure::stats::Stats;
use crate::space::config::Config;
use crate::store::db::{Entry, EntryId, Environment, Measurement, Origin, RunNote, RunTime, Status, Trace, Winner};
use crate::store::recorded::RecordedSpace;
use serde::Deserialize;
use serde_json::Value as J;
use std::path::Path;

/// What an entry read from another tuner's file has for its target: `recorded-` and the
/// device's name.
pub const TARGET_PREFIX: &str = "recorded-";

/// What [`kind_of`] calls a kerntune tune report.
pub const REPORT: &str = "a kerntune tune report (`kerntune tune --json`)";

/// Whether an entry's target is one read from another tuner's file.
pub fn is_recorded(target: &str) -> bool {
    target.starts_with(TARGET_PREFIX)
}

/// What kind of file `text` holds, when it is another tuner's: `a Kernel Tuner cache` or `a T4
/// results file`.
pub fn kind_of(v: &J) -> Option<&'static str> {
    if crate::store::recorded::one_report(v).is_some() {
        Some(REPORT)
    } else if v.get("cache").is_some_and(J::is_object) && v.get("tune_params_keys").is_some() {
        Some("a Kernel Tuner cache")
    } else if v.get("results").is_some_and(J::is_array) && v.get("schema").is_none() {
        Some("a T4 results file")
    } else if crate::store::recorded::documents(v).is_some() {
        Some(T4_LIST)
    } else {
        None
    }
}

/// What [`kind_of`] calls a list of T4 documents (`kerntune db export --format t4` of several
/// entries).
pub const T4_LIST: &str = "a list of T4 results documents (`kerntune db export --format t4`)";

/// What kind of file `v` would be, were it not damaged: a `cache` or `tune_params_keys` is
/// Kernel Tuner's, `results` without kerntune's `schema` a T4 file's. Reading it as one says
/// where it is damaged.
pub(crate) fn kind_of_damaged(v: &J) -> Option<&'static str> {
    if v.get("cache").is_some() || v.get("tune_params_keys").is_some() {
        Some("a Kernel Tuner cache")
    } else if v.get("results").is_some() && v.get("schema").is_none() {
        Some("a T4 results file")
    } else {
        None
    }
}

/// What kind of file `text` holds, when it is another tuner's, read as such files are (Python's
/// non-finite numbers; a Kernel Tuner cache cut off while written); `None` where it is not. A
/// text that does not parse even so but names Kernel Tuner's `tune_params_keys` is a damaged
/// cache: reading it as one says where it is damaged.
pub(crate) fn kind_of_text(text: &str) -> Option<&'static str> {
    match crate::store::recorded::parse_space(text, Path::new("")) {
        Ok((v, _)) => kind_of(&v),
        Err(_) => text.contains("\"tune_params_keys\"").then_some("a Kernel Tuner cache"),
    }
}

/// Every entry another tuner's file describes: one for a Kernel Tuner cache or T4 file, one
/// per document of a list of T4 documents (`kerntune db export --format t4`), one per tune of a
/// kerntune report; with a note where the file was cut off while written (read up to its last
/// complete entry). `Err` says why the file is not one.
pub fn entries(path: &Path) -> Result<(Vec<Entry>, Option<String>), String> {
    let text = crate::store::recorded::read_text(path)?;
    let (v, cut_off) = crate::store::recorded::parse_space(&text, path)?;
    if let Some(reports) = crate::store::recorded::reports(&v) {
        return entries_of_reports(reports, path).map(|all| (all, None));
    }
    let mut all = Vec::new();
    let mut note = None;
    for d in crate::store::recorded::documents_of(&v, path, cut_off) {
        let (e, n) = entry_of(d.value, &text, d.cut_off, &d.path)?;
        all.push(e);
        note = note.or(n);
    }
    Ok((all, note))
}

/// The entry a Kernel Tuner cache or T4 file describes, with a note where the file was cut off
/// while written (read up to its last complete entry); `Err` says why the file is not one.
pub fn entry(path: &Path) -> Result<(Entry, Option<String>), String> {
    let text = crate::store::recorded::read_text(path)?;
    let (v, cut_off) = crate::store::recorded::parse_space(&text, path)?;
    entry_of(&v, &text, cut_off, path)
}

/// [`entry`] of a parsed document (`text` the file's, for a Kernel Tuner cache's order).
fn entry_of(v: &J, text: &str, cut_off: bool, path: &Path) -> Result<(Entry, Option<String>), String> {
    if let Some(report) = crate::store::recorded::one_report(v) {
        return report.and_then(|r| report_entry(r, path)).map(|e| (e, None)).map_err(|e| format!("{}: {e}", path.display()));
    }
    let space = RecordedSpace::from_value(v, path)?;
    let note = cut_off.then(|| crate::store::recorded::cut_off_note(path, space.len()));
    let kt = v.get("cache").is_some();
    // Each config's place in the file and its timestamp, in `space`'s order (a cache's entries
    // by key, as `RecordedSpace` reads them; a T4 file's results in order).
    // Each config's recorded rates (Kernel Tuner's `GFLOP/s` and `GB/s` observers), as FLOPs
    // and bytes per launch.
    let rates: Vec<(Option<f64>, Option<f64>)> = match v["cache"].as_object() {
        Some(cache) if kt => cache.values().map(|e| (e["GFLOP/s"].as_f64().map(|r| r * 1e9), e["GB/s"].as_f64().map(|r| r * 1e9))).collect(),
        _ => vec![(None, None); space.len()],
    };
    let (place, stamps): (Vec<usize>, Vec<Option<f64>>) = if kt {
        let cache = v["cache"].as_object().ok_or("`cache` is not an object")?;
        let order = file_order(text);
        cache.iter().enumerate().map(|(i, (k, e))| (order.iter().position(|o| o == k).unwrap_or(i), e["timestamp"].as_str().and_then(epoch_seconds))).unzip()
    } else {
        let results = v["results"].as_array().ok_or("`results` is not an array")?;
        results.iter().enumerate().map(|(i, r)| (i, r["timestamp"].as_str().and_then(epoch_seconds))).unzip()
    };
    let n = space.len();
    // Measured in timestamp order where every config has one, else in the file's.
    let timed = stamps.iter().all(Option::is_some) && n > 0;
    let mut order: Vec<usize> = (0..n).collect();
    if timed {
        order.sort_by(|&a, &b| stamps[a].unwrap_or(0.0).total_cmp(&stamps[b].unwrap_or(0.0)).then(place[a].cmp(&place[b])));
    } else {
        order.sort_by_key(|&i| place[i]);
    }
    let start = if timed { stamps[order[0]].unwrap_or(0.0) } else { 0.0 };
    let device = if space.device.is_empty() { space.name.clone() } else { space.device.clone() };
    let kernel = if kt { v["kernel_name"].as_str() } else { v["metadata"]["kernel"].as_str() }.unwrap_or(&space.name).to_string();
    // A T4 file kerntune wrote names its problem key (`metadata.problem`).
    let problem = match v["metadata"]["problem"].as_str() {
        Some(p) if !kt && !p.is_empty() => p.to_string(),
        _ => problem_text(if kt { &v["problem_size"] } else { &v["metadata"]["problem_size"] }),
    };
    let tool = if kt { "Kernel Tuner cache" } else { "T4 file" };
    let id = EntryId {
        kernel,
        kernel_hash: format!("{tool}: {}", path.display()),
        // kerntune's T4 export names the target it was measured on (one GPU through CUDA and
        // through Vulkan is two); another tool's file, the device.
        target: format!("{TARGET_PREFIX}{}", v["metadata"]["target"].as_str().filter(|_| !kt).map_or_else(|| slug(&device), String::from)),
        toolchain: "recorded".into(),
        problem,
    };
    let mut details = std::collections::BTreeMap::new();
    details.insert("file".to_string(), path.display().to_string());
    let env = Environment { kerntune: String::new(), host: String::new(), timing: format!("as recorded ({tool})"), details };
    let mut e = Entry::new(id, device, env);
    let run = start.max(0.0) as u64;
    let mut elapsed = 0.0;
    let mut best: Option<(f64, String)> = None;
    for (seq, &i) in order.iter().enumerate() {
        let config = Config::new(space.params.iter().zip(&space.coords[i]).map(|(p, &c)| (p.name.clone(), p.values[c as usize].clone())));
        // Without timestamps, the seconds since the start are the recorded compile and
        // benchmarking seconds summed (the tuner measured one config at a time).
        elapsed = if timed { stamps[i].unwrap_or(start) - start } else { elapsed + space.compile_s[i].unwrap_or(0.0) + space.eval_s[i].unwrap_or(0.0) };
        let status = match space.times[i] {
            Some(ms) => {
                let samples: Vec<f64> = if space.samples[i].is_empty() { vec![ms / 1e3] } else { space.samples[i].iter().map(|t| t / 1e3).collect() };
                let mut stats = Stats { mean: ms / 1e3, ..Stats::from_samples(&samples, false) };
                // kerntune's T4 export keeps a config's mean alone in `runtimes`, and its count of
                // launches and interval as measurements of their own.
                let measured = |name: &str| {
                    let all = if kt { None } else { v["results"][i]["measurements"].as_array() };
                    all.and_then(|m| m.iter().find(|m| m["name"] == name)).and_then(|m| m["value"].as_f64())
                };
                if let (Some(n), Some(half)) = (measured("samples").filter(|n| *n >= 1.0), measured("time_ci95_half_width")) {
                    stats.samples = n as u32;
                    stats.ci_half = if half >= 0.0 { half / 1e3 } else { f64::INFINITY };
                }
                if best.as_ref().is_none_or(|(t, _)| stats.mean < *t) {
                    best = Some((stats.mean, config.key()));
                }
                Status::Ok { stats }
            }
            None => {
                let marker = space.failures[i].clone().unwrap_or_default();
                Status::Failed { failure: failure_of(&marker), message: format!("{marker} (as recorded)") }
            }
        };
        let trace = Trace {
            run,
            seq,
            elapsed_s: elapsed,
            compile_s: space.compile_s[i],
            eval_s: space.eval_s[i],
            device: None,
            by: None,
            spans: Vec::new(),
            shard: None,
        };
        let per_launch = |rate: Option<f64>| rate.zip(space.times[i]).map(|(r, ms)| r * ms / 1e3).filter(|x| x.is_finite() && *x > 0.0);
        let (flops, bytes) = (per_launch(rates[i].0), per_launch(rates[i].1));
        e.measurements.insert(config.key(), Measurement { config, status, usage: None, at: run, verified: None, trace: Some(trace), flops, bytes });
    }
    if let Some((_, key)) = best {
        let stats = e.measurements[&key].stats().cloned().expect("a time");
        e.winner = Some(Winner {
            config: key.clone(),
            stats,
            space: "recorded".into(),
            verify: "recorded".into(),
            tie_band: tie_band(&e, &key),
            at: run,
            default: None,
            partial: false,
        });
    }
    Ok((e, note))
}

/// The recorded configs tied with the fastest (`winner`) within their recorded launches' noise,
/// by the rule a tune picks its band with ([`crate::measure::select`], the default tie
/// tolerance), the fastest first and the rest by time: a file's per-launch times (Kernel Tuner's
/// `times`) give each mean an interval, and a file without them ties only within the tolerance.
fn tie_band(e: &Entry, winner: &str) -> Vec<String> {
    let measured: Vec<(&String, &crate::measure::stats::Stats)> = e.measurements.iter().filter_map(|(k, m)| Some((k, m.stats()?))).collect();
    let entrants: Vec<crate::measure::select::Entrant<'_>> = measured
        .iter()
        .enumerate()
        .map(|(order, (_, stats))| crate::measure::select::Entrant { order, is_default: false, resource_score: None, stats })
        .collect();
    let tolerance = crate::spec::settings::BenchOptions::default().tie_tolerance;
    let Some(sel) = crate::measure::select::select(&entrants, tolerance) else { return vec![winner.to_string()] };
    let mut band: Vec<(&String, f64)> = sel.tie_band.iter().map(|&i| (measured[i].0, measured[i].1.mean)).filter(|(k, _)| *k != winner).collect();
    band.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(b.0)));
    std::iter::once(winner.to_string()).chain(band.into_iter().map(|(k, _)| k.clone())).collect()
}

/// Every tune of a kerntune `--json` report (one per problem of its spec) as the database entry
/// that tune would have stored (see [`entry`], which reads one tune at a time); `Ok(None)` when
/// the file is no report.
pub fn report_entries(path: &Path) -> Result<Option<Vec<Entry>>, String> {
    let text = crate::store::recorded::read_text(path)?;
    let (v, _) = crate::store::recorded::parse_space(&text, path)?;
    let Some(reports) = crate::store::recorded::reports(&v) else { return Ok(None) };
    entries_of_reports(reports, path).map(Some)
}

/// The entry of each tune report (see [`report_entries`]).
fn entries_of_reports(reports: Vec<&J>, path: &Path) -> Result<Vec<Entry>, String> {
    reports.into_iter().enumerate().map(|(i, r)| report_entry(r, path).map_err(|e| format!("{}: tune [{i}]: {e}", path.display()))).collect()
}

/// The entry a kerntune tune report describes, as the tune stored it in its database (for a
/// tune run with `--no-db`, or reports gathered from a CI matrix): every config measured or
/// failed with its trace (the order, compile and evaluation seconds, device spans), the winner
/// and its tie band, and the run's strategy, prior and length. Configs pruned after compiling
/// are left out, as the database leaves them.
fn report_entry(r: &J, path: &Path) -> Result<Entry, String> {
    let field = |name: &str| -> Result<J, String> { r.get(name).cloned().ok_or(format!("a kerntune tune report without `{name}`")) };
    let id: EntryId = serde_json::from_value(field("entry")?).map_err(|e| format!("`entry`: {e}"))?;
    let device = r["target"]["name"].as_str().unwrap_or(&id.target).to_string();
    let mut details = std::collections::BTreeMap::new();
    details.insert("file".to_string(), path.display().to_string());
    let timing = r["timing"].as_str().unwrap_or("").to_string();
    // What the measurements were made for and where, as the tune would have stored them
    // (reports of earlier builds have neither: drawn, not merged).
    let origin: Option<Origin> = match r.get("origin") {
        Some(o) if !o.is_null() => Some(serde_json::from_value(o.clone()).map_err(|err| format!("`origin`: {err}"))?),
        _ => None,
    };
    // The file it was read from (`details.file`) is what the report page names.
    let env = match r.get("environment") {
        Some(x) if !x.is_null() => {
            let mut env: Environment = serde_json::from_value(x.clone()).map_err(|err| format!("`environment`: {err}"))?;
            env.details.extend(details);
            env
        }
        _ => Environment { kerntune: String::new(), host: String::new(), timing, details },
    };
    let mut e = Entry::new(id, device, env);
    e.origin = origin.clone();
    // The run: when the tune started (a report from before kerntune wrote it has none).
    let run = r["started"].as_u64().unwrap_or(0);
    let shard: Option<crate::spec::settings::Shard> = serde_json::from_value(r["shard"].clone()).ok();
    for (n, x) in r["results"].as_array().into_iter().flatten().enumerate() {
        let x = crate::ConfigResult::deserialize(x).map_err(|err| format!("results[{n}]: {err}"))?;
        let Some(mut m) = x.measurement(run, run, x.device) else { continue };
        // A result the tune took from its database has no place in this run's order.
        if x.seq.is_none() {
            m.trace = None;
        }
        if let Some(t) = m.trace.as_mut() {
            t.shard = shard;
        }
        e.measurements.insert(m.config.key(), m);
    }
    // The winner, unless the tune withheld it (most configs disagreed with its reference).
    if r["winner_withheld"].is_null() {
        let winner: Config = serde_json::from_value(field("winner")?).map_err(|err| format!("`winner`: {err}"))?;
        let stats: Stats = serde_json::from_value(field("winner_stats")?).map_err(|err| format!("`winner_stats`: {err}"))?;
        let tie_band: Vec<Config> = serde_json::from_value(field("tie_band")?).map_err(|err| format!("`tie_band`: {err}"))?;
        if e.measurements.contains_key(&winner.key()) {
            e.winner = Some(Winner {
                config: winner.key(),
                stats,
                space: origin.as_ref().map_or_else(|| "report".into(), |o| o.space.clone()),
                verify: origin.as_ref().map_or_else(|| "report".into(), |o| o.verify.clone()),
                tie_band: tie_band.iter().map(Config::key).collect(),
                at: run,
                default: None,
                partial: r["ended_early"].as_bool().unwrap_or(false),
            });
        }
    }
    let ms = |s: f64| (s * 1e3).round().max(0.0) as u64;
    e.runs.push(RunNote {
        run,
        strategy: r["strategy"].as_str().unwrap_or("").to_string(),
        prior: r["prior"]["line"].as_str().map(String::from),
        search: None,
        findings: Vec::new(),
        verification: r["reference"].as_str().map(String::from),
        memcheck: None,
        time: r["wall_seconds"].as_f64().filter(|_| r["db_hit"] != true).map(|w| RunTime {
            wall_ms: ms(w),
            compile_threads: r["compile_threads"].as_u64().unwrap_or(0) as u32,
            devices: r["devices"].as_array().map_or(1, |d| d.len().max(1)) as u32,
            ..RunTime::default()
        }),
        winner_withheld: r["winner_withheld"].as_str().map(String::from),
        time_limit_ms: None,
        shard,
    });
    Ok(e)
}

/// A failure marker as a kind: Kernel Tuner's `CompilationFailedConfig`, `RuntimeFailedConfig`
/// and `InvalidConfig`, T4's `compile`, `runtime`, `constraints` and `correctness`.
fn failure_of(marker: &str) -> FailureKind {
    let m = marker.to_ascii_lowercase();
    if m.contains("compil") {
        FailureKind::CompileFailed
    } else if m.contains("runtime") {
        FailureKind::LaunchFailed
    } else if m.contains("invalid") || m.contains("constraint") {
        FailureKind::OutOfResources
    } else if m.contains("correct") {
        FailureKind::WrongOutput
    } else {
        FailureKind::Other
    }
}

/// A problem size as a key's text: `problem_size=4096x4096` (empty: `recorded`).
fn problem_text(v: &J) -> String {
    match v {
        J::Array(a) if !a.is_empty() => format!("problem_size={}", a.iter().map(|x| x.to_string().trim_matches('"').to_string()).collect::<Vec<_>>().join("x")),
        J::Number(n) => format!("problem_size={n}"),
        J::String(s) => format!("problem_size={s}"),
        _ => "recorded".into(),
    }
}

/// Lower-case letters and digits, runs of anything else as one `-`.
fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

/// The keys of the top-level `cache` object in the order the file lists them (the order Kernel
/// Tuner measured them in); empty where the text does not parse as it is (a cut-off file).
fn file_order(text: &str) -> Vec<String> {
    use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
    struct Keys(Vec<String>);
    impl<'de> serde::Deserialize<'de> for Keys {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Keys, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Keys;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("an object")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Keys, A::Error> {
                    let mut keys = Vec::new();
                    while let Some((k, IgnoredAny)) = m.next_entry::<String, IgnoredAny>()? {
                        keys.push(k);
                    }
                    Ok(Keys(keys))
                }
            }
            d.deserialize_map(V)
        }
    }
    #[derive(serde::Deserialize)]
    struct Doc {
        cache: Keys,
    }
    serde_json::from_str::<Doc>(&crate::store::recorded::python_numbers(text)).map(|d| d.cache.0).unwrap_or_default()
}

/// Seconds since the Unix epoch of a timestamp as Kernel Tuner writes it
/// (`2026-11-20 22:58:56.577428+00:00`; also `T` between date and time, `Z`, or no offset,
/// taken as UTC).
fn epoch_seconds(ts: &str) -> Option<f64> {
    let ts = ts.trim();
    let (date, rest) = ts.split_at(ts.find([' ', 'T'])?);
    let rest = &rest[1..];
    let mut d = date.split('-').map(|x| x.parse::<i64>().ok());
    let (y, mo, day) = (d.next()??, d.next()??, d.next()??);
    // The offset: `Z`, `+HH:MM` or `-HH:MM` after the time.
    let (time, offset) = match rest.rfind(['+', '-']) {
        Some(at) => {
            let (t, o) = rest.split_at(at);
            let sign = if o.starts_with('-') { -1.0 } else { 1.0 };
            let mut hm = o[1..].split(':').map(|x| x.parse::<f64>().ok());
            (t, sign * (hm.next()?? * 3600.0 + hm.next().flatten().unwrap_or(0.0) * 60.0))
        }
        None => (rest.trim_end_matches('Z'), 0.0),
    };
    let mut t = time.split(':').map(|x| x.parse::<f64>().ok());
    let (h, mi, s) = (t.next()??, t.next()??, t.next().flatten().unwrap_or(0.0));
    if !(1..=12).contains(&mo) || !(1..=31).contains(&day) {
        return None;
    }
    // Days from 1970-01-01 (Howard Hinnant's days_from_civil).
    let y = if mo <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if mo > 2 { mo - 3 } else { mo + 9 }) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days as f64 * 86_400.0 + h * 3600.0 + mi * 60.0 + s - offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_as_kernel_tuner_writes_them() {
        assert_eq!(epoch_seconds("1970-01-01 00:00:00+00:00"), Some(0.0));
        assert_eq!(epoch_seconds("2026-11-20 22:58:56.5+00:00"), Some(1_795_215_536.5));
        assert_eq!(epoch_seconds("2026-11-20T23:58:56.5+01:00"), Some(1_795_215_536.5));
        assert_eq!(epoch_seconds("2026-11-20 22:58:56.5Z"), Some(1_795_215_536.5));
        assert_eq!(epoch_seconds("2000-03-01 00:00:00"), Some(951_868_800.0));
        assert_eq!(epoch_seconds("yesterday"), None);
    }

    #[test]
    fn a_t4_file_is_an_entry_of_its_device_kernel_and_problem() {
        let text = r#"{"schema_version": "1.0.0", "metadata": {"hardware": {"name": "GPU X"}, "kernel": "triad", "problem": "N=4096"},
            "results": [{"configuration": {"b": 1}, "invalidity": "correct", "measurements": [{"name": "time", "unit": "us", "value": 500}]},
                        {"configuration": {"b": 2}, "invalidity": "compile", "measurements": []}]}"#;
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.t4.json");
        std::fs::write(&p, text).unwrap();
        let e = entry(&p).unwrap().0;
        assert_eq!((e.id.kernel.as_str(), e.id.problem.as_str(), e.target_name.as_str()), ("triad", "N=4096", "GPU X"));
        assert_eq!(e.measurements[&Config::new([("b", 1)]).key()].stats().unwrap().mean, 5e-4);
        assert!(matches!(e.measurements[&Config::new([("b", 2)]).key()].status, Status::Failed { failure: FailureKind::CompileFailed, .. }));
        assert_eq!(kind_of(&serde_json::from_str(text).unwrap()), Some("a T4 results file"));
    }

    #[test]
    fn a_caches_winner_is_tied_with_the_configs_its_recorded_launches_cannot_tell_from_it() {
        // b=1 is the fastest but noisy: b=2 lies inside the two intervals, b=3 outside them (and
        // beyond the 0.5 % tolerance), b=4 within the tolerance although its launches never vary.
        let text = r#"{"tune_params_keys": ["b"], "tune_params": {"b": [1, 2, 3, 4]}, "cache": {
            "1": {"b": 1, "time": 1.0, "times": [0.9, 1.1, 0.95, 1.05, 1.0]},
            "2": {"b": 2, "time": 1.05, "times": [1.04, 1.06, 1.05, 1.05, 1.05]},
            "3": {"b": 3, "time": 1.3, "times": [1.3, 1.3, 1.3, 1.3, 1.3]},
            "4": {"b": 4, "time": 1.004}}}"#;
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("k.json");
        std::fs::write(&p, text).unwrap();
        let e = entry(&p).unwrap().0;
        let key = |b: i64| Config::new([("b", b)]).key();
        let w = e.winner.as_ref().unwrap();
        assert_eq!(w.config, key(1));
        assert_eq!(w.tie_band, [key(1), key(4), key(2)], "the fastest first, then by time");
    }

    #[test]
    fn a_cache_keeps_the_order_it_was_measured_in() {
        let text = r#"{"tune_params_keys": ["b"], "tune_params": {"b": [1, 2, 3]}, "cache": {"3": {"b": 3, "time": 1.0}, "1": {"b": 1, "time": 2.0}, "2": {"b": 2, "time": "CompilationFailedConfig"}}}"#;
        assert_eq!(file_order(text), ["3", "1", "2"]);
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("k.json");
        std::fs::write(&p, text).unwrap();
        let e = entry(&p).unwrap().0;
        let seq = |b: i64| e.measurements[&Config::new([("b", b)]).key()].trace.as_ref().unwrap().seq;
        assert_eq!((seq(3), seq(1), seq(2)), (0, 1, 2));
        assert_eq!(e.winner.as_ref().unwrap().config, Config::new([("b", 3)]).key(), "the fastest");
        assert!(matches!(e.measurements[&Config::new([("b", 2)]).key()].status, Status::Failed { failure: FailureKind::CompileFailed, .. }));
        assert_eq!(e.measurements[&Config::new([("b", 3)]).key()].stats().unwrap().mean, 1e-3, "ms as seconds");
    }
}
