//! Recorded search spaces: Kernel Tuner cache files and T4 results files, read as oracles for
//! simulation, and kerntune's own measurements written as T4.
//!
//! Kernel Tuner cache format (its `doc/source/cache_files.rst`): an object with
//! `tune_params_keys`, `tune_params` and `cache`, whose entries hold the parameters, `time` (ms,
//! the mean of `times`) and `times`. A failure has a string in `time`
//! (`CompilationFailedConfig`, `RuntimeFailedConfig`, `InvalidConfig`) or, in old files, `1e20`.
//! Kernel Tuner appends entries while it runs, so an unfinished file lacks its closing braces;
//! such files are repaired on read. T4 (the community results schema) lists `results` with a
//! `configuration`, `times.runtimes`, `measurements` (`time` in a `unit`) and `invalidity`.

use crate::spec::job::Param;
use crate::spec::value::Value;
use serde_json::{json, Value as J};
use std::io::Read;
use std::path::Path;

/// A brute-forced space: every config with its recorded time (or failure).
#[derive(Clone, Debug)]
pub struct RecordedSpace {
    /// A short name (the file name).
    pub name: String,
    /// Device the space was measured on, where recorded.
    pub device: String,
    /// Parameters and their values.
    pub params: Vec<Param>,
    /// Each config's value indices.
    pub coords: Vec<Vec<u32>>,
    /// Mean time in ms, `None` for a failed config.
    pub times: Vec<Option<f64>>,
    /// Each config's recorded repetitions, in ms.
    pub samples: Vec<Vec<f64>>,
    /// The failure marker of failed configs.
    pub failures: Vec<Option<String>>,
    /// Each config's recorded compile seconds, where recorded (Kernel Tuner's `compile_time`).
    pub compile_s: Vec<Option<f64>>,
    /// Each config's recorded seconds of benchmarking and verifying, where recorded (Kernel
    /// Tuner's `benchmark_time` plus `verification_time`).
    pub eval_s: Vec<Option<f64>>,
    /// The file ended early (a Kernel Tuner run still writing it, or stopped): it was closed
    /// after its last complete entry ([`cut_off_note`] says so where it is read).
    pub cut_off: bool,
    /// What its reader should be told where the file holds part of a space: a tune's report of
    /// fewer configs than the tune had to choose from (a budget), which a simulation scores
    /// against the fastest of those it holds.
    pub note: Option<String>,
}

/// A file's text, gunzipped where its name ends in `.gz`, without a byte-order mark (Windows
/// editors write one, and JSON has none).
pub(crate) fn read_text(path: &Path) -> Result<String, String> {
    if path.is_dir() {
        return Err(format!(
            "{}: a folder, not a file; name the files in it (`{}/*.json.gz`, say)",
            path.display(),
            path.display().to_string().trim_end_matches('/')
        ));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path).and_then(|mut f| f.read_to_end(&mut bytes)).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let text = if path.extension().is_some_and(|e| e == "gz") {
        let mut out = String::new();
        flate2::read::GzDecoder::new(&bytes[..]).read_to_string(&mut out).map_err(|e| format!("{}: not valid gzip: {e}", path.display()))?;
        out
    } else {
        String::from_utf8(bytes).map_err(|e| format!("{}: not UTF-8: {e}", path.display()))?
    };
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    })
}

/// A Kernel Tuner cache's or T4 file's text parsed (repaired where cut off); `Err` names `path`.
/// With it, whether the file was cut off (see [`parse_repairing`]).
pub(crate) fn parse_space(text: &str, path: &Path) -> Result<(J, bool), String> {
    parse_repairing(text).map_err(|e| format!("{}: not a Kernel Tuner cache, T4 file or kerntune tune report: {e}", path.display()))
}

/// What a file cut off while it was written says where it is read.
pub fn cut_off_note(path: &Path, configs: usize) -> String {
    format!(
        "{}: the file ends before its last closing braces (a Kernel Tuner run still writing it, or stopped); its {configs} complete entr{} were read",
        path.display(),
        if configs == 1 { "y" } else { "ies" }
    )
}

/// Python's `json` writes `NaN`, `Infinity` and `-Infinity`, which JSON has not, and Kernel
/// Tuner's caches and T4 files are written with it: outside strings, each is read as the string
/// of its name (`"NaN"`), which no number field accepts.
pub(crate) fn python_numbers(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("NaN") && !text.contains("Infinity") {
        return std::borrow::Cow::Borrowed(text);
    }
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len() + 64);
    let (mut in_string, mut escaped, mut last, mut i) = (false, false, 0, 0);
    'scan: while i < b.len() {
        let c = b[i];
        if in_string {
            match c {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
        } else if c == b'"' {
            in_string = true;
        } else {
            for token in ["NaN", "Infinity", "-Infinity"] {
                if b[i..].starts_with(token.as_bytes()) {
                    // Every boundary here is at an ASCII byte, so the slices are whole characters.
                    out.push_str(&text[last..i]);
                    out.push('"');
                    out.push_str(token);
                    out.push('"');
                    i += token.len();
                    last = i;
                    continue 'scan;
                }
            }
        }
        i += 1;
    }
    out.push_str(&text[last..]);
    std::borrow::Cow::Owned(out)
}

/// Whether a string read where a number belongs is one of Python's non-finite numbers.
fn python_non_finite(s: &str) -> bool {
    matches!(s, "NaN" | "Infinity" | "-Infinity")
}

/// Parses JSON (with Python's non-finite numbers, [`python_numbers`]), repairing a Kernel Tuner
/// cache that was cut off while being written: closed after its last complete entry. Only a
/// text that ends early is repaired; a syntax error inside it is the file's damage, and is
/// reported, so that no entry after it is silently lost. With it, whether it was repaired.
fn parse_repairing(text: &str) -> Result<(J, bool), String> {
    let text = python_numbers(text);
    match serde_json::from_str(&text) {
        Ok(v) => Ok((v, false)),
        Err(first) if first.classify() == serde_json::error::Category::Eof => {
            let t = text.trim_end().trim_end_matches(',');
            // Cut after an entry's closing brace, or after the cache's.
            for tail in ["}}", "}"] {
                if let Ok(v) = serde_json::from_str(&format!("{t}{tail}")) {
                    return Ok((v, true));
                }
            }
            // Cut inside an entry: drop it.
            if let Some(cut) = t.rfind("},") {
                if let Ok(v) = serde_json::from_str(&format!("{}}}}}", &t[..cut + 1])) {
                    return Ok((v, true));
                }
            }
            Err(first.to_string())
        }
        Err(first) => Err(first.to_string()),
    }
}

fn same(a: &J, b: &J) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// A JSON value as an error quotes it: at most 200 characters.
fn quote_json(v: &J) -> String {
    crate::spec::error::quote(&v.to_string()).into_owned()
}

/// A config's recorded time: finite and above zero (a zero would be an optimum no search
/// could be scored against).
fn config_time(t: f64, entry: &str) -> Result<f64, String> {
    if t.is_finite() && t > 0.0 {
        Ok(t)
    } else {
        Err(format!("entry `{entry}`: `time` {t} is not a time (zero, negative or not finite); the file is damaged: remove that entry or record it again"))
    }
}

/// A recorded duration: finite and not negative.
fn non_negative(t: f64, entry: &str, field: &str) -> Result<f64, String> {
    if t.is_finite() && t >= 0.0 {
        Ok(t)
    } else {
        Err(format!("entry `{entry}`: `{field}` {t} is not a time (negative or not finite); the file is damaged: remove that entry or record it again"))
    }
}

/// A duration a tool recorded in ms, as seconds: `None` where absent, `null` or a string (not
/// recorded); an error where negative or not finite.
fn recorded_secs(v: &J, entry: &str, field: &str) -> Result<Option<f64>, String> {
    match v {
        J::Number(n) => non_negative(n.as_f64().unwrap_or(f64::NAN), entry, field).map(|ms| Some(ms / 1e3)),
        _ => Ok(None),
    }
}

/// Seconds of benchmarking plus verifying, where either was recorded.
fn eval_secs(benchmark: Option<f64>, verification: Option<f64>) -> Option<f64> {
    match (benchmark, verification) {
        (None, None) => None,
        (b, v) => Some(b.unwrap_or(0.0) + v.unwrap_or(0.0)),
    }
}

/// A space's name: its file's, without `.json` or `.json.gz`.
fn space_name(path: &Path) -> String {
    path.file_name().and_then(|n| n.to_str()).unwrap_or("space").trim_end_matches(".gz").trim_end_matches(".json").to_string()
}

/// Names the spaces that share a name (one GPU's entries through two backends, which share its
/// device name too) by their target as well (`fleet matmul M=1024 [cuda-sm_90-…]`), where known.
fn distinct(spaces: &mut [RecordedSpace], targets: &[Option<&str>]) {
    let mut named: Vec<(&mut RecordedSpace, Option<&str>)> = spaces.iter_mut().zip(targets.iter().copied()).collect();
    name_apart(&mut named, |(a, _), (b, _)| a.name == b.name && a.device == b.device, |(_, t), _| t.map(shown_target), |(s, _)| &mut s.name);
}

/// Names apart the items that would read alike (`alike`, over two different items): the name
/// `name` gives each such item gets ` [what]` after it, where `apart` says what tells it from the
/// items alike to it (`None`: it keeps its name). The rule `report` and
/// [`RecordedSpace::load_all`] share: one GPU through two backends has one device name, and an
/// edited kernel or a new driver makes another entry of it.
pub fn name_apart<T>(items: &mut [T], alike: impl Fn(&T, &T) -> bool, apart: impl Fn(&T, &[&T]) -> Option<String>, name: impl Fn(&mut T) -> &mut String) {
    let suffixes: Vec<Option<String>> = (0..items.len())
        .map(|i| {
            let others: Vec<&T> = (0..items.len()).filter(|&j| j != i && alike(&items[i], &items[j])).map(|j| &items[j]).collect();
            if others.is_empty() {
                None
            } else {
                apart(&items[i], &others)
            }
        })
        .collect();
    for (item, suffix) in items.iter_mut().zip(suffixes) {
        if let Some(suffix) = suffix {
            let name = name(item);
            *name = format!("{name} [{suffix}]");
        }
    }
}

/// A target as a name shows it: a recorded space's without the prefix that marks it recorded.
pub fn shown_target(target: &str) -> String {
    target.strip_prefix(crate::store::foreign::TARGET_PREFIX).unwrap_or(target).to_string()
}

/// Whether the file starts as an SQLite database does.
fn is_sqlite(path: &Path) -> bool {
    let mut head = [0u8; 16];
    std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut head)).is_ok() && head.starts_with(b"SQLite format 3\0")
}

/// The documents a list holds, where it is kerntune's own list of them: T4 documents (`kerntune
/// db export --format t4` of several entries) or tune reports (`kerntune tune --json` of
/// several problems), each with a label of its kernel and problem (`triad N=65536`); `None` for
/// anything else, which is read whole.
pub(crate) fn documents(v: &J) -> Option<Vec<(String, &J)>> {
    let J::Array(all) = v else { return None };
    let t4 = |d: &J| d.is_object() && d["results"].is_array() && !is_report(d);
    if all.is_empty() || !(all.iter().all(t4) || all.iter().all(is_report)) {
        return None;
    }
    let label = |(i, d): (usize, &J)| {
        let meta = about(d);
        let named: Vec<&str> = [&meta["kernel"], &meta["problem"]].into_iter().filter_map(J::as_str).collect();
        if named.is_empty() {
            format!("[{i}]")
        } else {
            named.join(" ")
        }
    };
    Some(all.iter().enumerate().map(|d| (label(d), d.1)).collect())
}

/// What a document says it is about: a tune report's `entry`, a T4 document's `metadata` (each
/// naming `kernel`, `problem` and `target` where kerntune wrote it).
fn about(d: &J) -> &J {
    if is_report(d) {
        &d["entry"]
    } else {
        &d["metadata"]
    }
}

/// One document of a file, as its readers take it: the whole file, or one of kerntune's list of
/// them ([`documents`]).
pub(crate) struct Document<'a> {
    /// The document.
    pub value: &'a J,
    /// What names it in messages: the file, or for one of a list of several the file, its place
    /// and its label (`fleet.json [1] (triad N=65536)`).
    pub path: std::path::PathBuf,
    /// Its kernel and problem, for one of a list of several.
    pub label: Option<String>,
    /// Whether it was cut off: the last document of a file cut off while written.
    pub cut_off: bool,
}

/// The documents of a parsed file (`cut_off`: the file was): one for a file of one document (a
/// list of one included), else one per document of kerntune's list.
pub(crate) fn documents_of<'a>(v: &'a J, path: &Path, cut_off: bool) -> Vec<Document<'a>> {
    match documents(v) {
        Some(docs) if docs.len() > 1 => {
            let last = docs.len() - 1;
            docs.into_iter()
                .enumerate()
                .map(|(i, (label, value))| Document {
                    value,
                    path: format!("{} [{i}] ({label})", path.display()).into(),
                    label: Some(label),
                    cut_off: cut_off && i == last,
                })
                .collect()
        }
        Some(one) => vec![Document { value: one[0].1, path: path.into(), label: None, cut_off }],
        None => vec![Document { value: v, path: path.into(), label: None, cut_off }],
    }
}

/// Parameters from value lists; every value must be a number, a string or a boolean.
fn params_of(keys: &[String], lists: &[Vec<J>]) -> Result<Vec<Param>, String> {
    keys.iter()
        .zip(lists)
        .map(|(k, l)| {
            let values = l
                .iter()
                .map(|x| Value::from_json(x).ok_or(format!("parameter `{k}` has the value {}, not a number, string or boolean", quote_json(x))))
                .collect::<Result<_, _>>()?;
            Ok(Param { name: k.clone(), values })
        })
        .collect()
}

/// The file's `schema_version`, when it has one: 1.x is read; anything else is refused rather
/// than misread.
fn check_version(v: &J) -> Result<(), String> {
    match &v["schema_version"] {
        J::Null => Ok(()),
        J::String(s) if s.split('.').next() == Some("1") => Ok(()),
        other => Err(format!("schema_version {} is not one this version reads (1.x); convert the file or use a matching kerntune", quote_json(other))),
    }
}

impl RecordedSpace {
    /// Reads a Kernel Tuner cache (`.json`, `.json.gz`), a T4 results file or a kerntune tune
    /// report (`kerntune tune --json`, one tune's).
    pub fn load(path: &Path) -> Result<RecordedSpace, String> {
        let text = read_text(path)?;
        let (v, cut_off) = parse_space(&text, path)?;
        Ok(RecordedSpace { cut_off, ..Self::from_value(&v, path)? })
    }

    /// Every recorded space a file holds: one for a Kernel Tuner cache, a T4 document or one
    /// tune's report; one per document for a list of them (`kerntune db export --format t4` of
    /// several entries, `kerntune tune --json` of several problems); one per entry for a kerntune
    /// database (SQLite, or its JSON export). A space of several is named by its file and its
    /// kernel and problem (`fleet.t4 conv N=4096`).
    pub fn load_all(path: &Path) -> Result<Vec<RecordedSpace>, String> {
        let db = crate::store::db::Database::at(path);
        if is_sqlite(path) || db.is_json() {
            return Self::from_database(&db, path);
        }
        let text = read_text(path)?;
        let (v, cut_off) = parse_space(&text, path)?;
        let docs = documents_of(&v, path, cut_off);
        let mut all = docs
            .iter()
            .map(|d| {
                let s = Self::from_value(d.value, &d.path)?;
                let name = d.label.as_ref().map_or(s.name.clone(), |label| format!("{} {label}", space_name(path)));
                Ok(RecordedSpace { name, cut_off: d.cut_off, ..s })
            })
            .collect::<Result<Vec<_>, String>>()?;
        let targets: Vec<Option<&str>> = docs.iter().map(|d| about(d.value)["target"].as_str()).collect();
        distinct(&mut all, &targets);
        Ok(all)
    }

    /// A kerntune database's entries, each a space of the configs it measured; an entry a search
    /// measured part of (any strategy but exhaustive, or one shard of a split tune; a
    /// `confirm`'s run of listed configs changes neither) says so in
    /// its `note`.
    fn from_database(db: &crate::store::db::Database, path: &Path) -> Result<Vec<RecordedSpace>, String> {
        let file = db.load().map_err(|e| e.to_string())?;
        if file.entries.is_empty() {
            return Err(format!("{}: a kerntune database with no entries; nothing recorded to read", path.display()));
        }
        let mut all = file
            .entries
            .values()
            .map(|e| {
                let label = format!("{} {}", e.id.kernel, e.id.problem).trim_end().to_string();
                let where_ = format!("{}: {label} on {}", path.display(), e.target_name);
                let mut s = Self::from_t4(&to_t4(e), format!("{} {label}", space_name(path))).map_err(|m| format!("{where_}: {m}"))?;
                // A run of listed configs (`confirm`'s) chose none.
                let searched = e.runs.iter().filter(|r| !r.listed()).map(|r| r.strategy.as_str()).find(|s| *s != "exhaustive");
                let part = match (e.origin.as_ref().and_then(|o| o.shard.as_ref()), searched) {
                    (Some(shard), _) => Some(format!("shard {shard} of a split tune")),
                    (None, Some(strategy)) => Some(format!("configs a `{strategy}` search chose")),
                    (None, None) => None,
                };
                s.note = part.map(|part| {
                    format!("{where_}: holds the {part} ({} configs), perhaps part of the space: scores are fractions of the fastest of those, not of the space's optimum", s.len())
                });
                Ok(s)
            })
            .collect::<Result<Vec<_>, String>>()?;
        let targets: Vec<Option<&str>> = file.entries.values().map(|e| Some(e.id.target.as_str())).collect();
        distinct(&mut all, &targets);
        Ok(all)
    }

    /// The space a parsed Kernel Tuner cache or T4 file holds (`path` names it, in errors and
    /// as the space's name).
    pub(crate) fn from_value(v: &J, path: &Path) -> Result<RecordedSpace, String> {
        let name = space_name(path);
        check_version(v).map_err(|e| format!("{}: {e}", path.display()))?;
        if let Some(report) = one_report(v) {
            let report = report.map_err(|e| format!("{}: {e}", path.display()))?;
            let mut s = report_as_t4(report).and_then(|t4| Self::from_t4(&t4, name)).map_err(|e| format!("{}: {e}", path.display()))?;
            // A budgeted tune measured part of its candidates.
            let had = report["candidates"].as_u64().unwrap_or(0) as usize;
            if had > s.len() {
                s.note = Some(format!(
                    "{}: a tune's report of {} of the {had} configs it had to choose from (a budget): scores are fractions of the fastest of those {}, not of the space's optimum",
                    path.display(),
                    s.len(),
                    s.len()
                ));
            }
            return Ok(s);
        }
        if v.get("cache").is_some() {
            Self::from_kernel_tuner(v, name).map_err(|e| format!("{}: {e}", path.display()))
        } else if v.get("results").is_some() {
            Self::from_t4(v, name).map_err(|e| format!("{}: {e}", path.display()))
        } else {
            Err(format!(
                "{}: neither a Kernel Tuner cache (no `cache`), a T4 file (no `results`) nor a kerntune tune report (`kerntune tune --json`)",
                path.display()
            ))
        }
    }

    fn from_kernel_tuner(v: &J, name: String) -> Result<RecordedSpace, String> {
        let keys: Vec<String> = v["tune_params_keys"]
            .as_array()
            .ok_or("missing `tune_params_keys`")?
            .iter()
            .map(|k| k.as_str().map(String::from).ok_or(format!("`tune_params_keys` holds {}, not a name", quote_json(k))))
            .collect::<Result<_, _>>()?;
        let lists: Vec<Vec<J>> =
            keys.iter().map(|k| v["tune_params"][k].as_array().cloned().ok_or(format!("`tune_params` has no list `{k}`"))).collect::<Result<_, _>>()?;
        let params = params_of(&keys, &lists)?;
        let mut s = RecordedSpace { device: v["device_name"].as_str().unwrap_or("").to_string(), ..RecordedSpace::from_times(&name, params, vec![], vec![]) };
        for (key, e) in v["cache"].as_object().ok_or("`cache` is not an object")? {
            if !e.is_object() {
                return Err(format!("entry `{key}` is {}, not an object of parameter values and `time`", quote_json(e)));
            }
            let mut coords = Vec::with_capacity(keys.len());
            for (k, l) in keys.iter().zip(&lists) {
                let val = e.get(k).ok_or(format!("entry `{key}` has no `{k}`"))?;
                let i = l.iter().position(|x| same(x, val)).ok_or(format!("entry `{key}`: `{k}` = {} is not among tune_params", quote_json(val)))?;
                coords.push(i as u32);
            }
            let (time, failure) = match &e["time"] {
                J::Number(n) => {
                    let t = n.as_f64().unwrap_or(f64::INFINITY);
                    if t >= 1e19 {
                        (None, Some("1e20 (failed)".to_string()))
                    } else {
                        (Some(config_time(t, key)?), None)
                    }
                }
                // Python's json writes a NaN or an infinity as such: no time.
                J::String(m) if python_non_finite(m) => (None, Some(format!("{m} (no time)"))),
                // Kernel Tuner writes failures as strings ("CompilationFailedConfig", ...).
                J::String(m) => (None, Some(m.clone())),
                other => return Err(format!("entry `{key}`: `time` is {}, neither a number of ms nor a failure string", quote_json(other))),
            };
            let samples = match &e["times"] {
                J::Null => Vec::new(),
                J::String(s) if python_non_finite(s) => Vec::new(),
                // A repetition Python wrote as NaN or an infinity is no repetition.
                J::Array(a) => a
                    .iter()
                    .filter(|x| !x.as_str().is_some_and(python_non_finite))
                    .map(|x| {
                        x.as_f64().ok_or(format!("entry `{key}`: `times` holds {}, not a number", quote_json(x))).and_then(|t| non_negative(t, key, "times"))
                    })
                    .collect::<Result<_, _>>()?,
                other => return Err(format!("entry `{key}`: `times` is {}, not a list of ms", quote_json(other))),
            };
            let secs = |field: &str| recorded_secs(&e[field], key, field);
            let compile = secs("compile_time")?;
            let eval = eval_secs(secs("benchmark_time")?, secs("verification_time")?);
            s.coords.push(coords);
            s.times.push(time);
            s.samples.push(samples);
            s.failures.push(failure);
            s.compile_s.push(compile);
            s.eval_s.push(eval);
        }
        Ok(s)
    }

    fn from_t4(v: &J, name: String) -> Result<RecordedSpace, String> {
        let results = v["results"].as_array().ok_or("`results` is not an array")?;
        let mut keys: Vec<String> = Vec::new();
        let mut lists: Vec<Vec<J>> = Vec::new();
        for (n, r) in results.iter().enumerate() {
            let conf = r["configuration"].as_object().ok_or_else(|| match &r["configuration"] {
                J::Null => format!("results[{n}] has no `configuration`"),
                other => format!("results[{n}]: `configuration` is {}, not an object of parameter values", quote_json(other)),
            })?;
            for (k, val) in conf {
                let p = match keys.iter().position(|x| x == k) {
                    Some(p) => p,
                    None => {
                        keys.push(k.clone());
                        lists.push(vec![]);
                        keys.len() - 1
                    }
                };
                if !lists[p].iter().any(|x| same(x, val)) {
                    lists[p].push(val.clone());
                }
            }
        }
        for l in &mut lists {
            l.sort_by(|a, b| match (a.as_f64(), b.as_f64()) {
                (Some(x), Some(y)) => x.total_cmp(&y),
                _ => a.to_string().cmp(&b.to_string()),
            });
        }
        let params = params_of(&keys, &lists)?;
        let mut s = RecordedSpace {
            device: v["metadata"]["hardware"]["name"].as_str().unwrap_or("").to_string(),
            ..RecordedSpace::from_times(&name, params, vec![], vec![])
        };
        for (n, r) in results.iter().enumerate() {
            let key = format!("results[{n}]");
            let coords = keys
                .iter()
                .zip(&lists)
                .map(|(k, l)| l.iter().position(|x| same(x, &r["configuration"][k])).map(|i| i as u32).ok_or(format!("{key}: `configuration` has no `{k}`")))
                .collect::<Result<Vec<u32>, String>>()?;
            let valid = r["invalidity"].as_str().is_none_or(|i| i == "correct");
            let ms = |m: &J| -> Result<Option<f64>, String> {
                let Some(val) = m["value"].as_f64() else { return Ok(None) };
                let scale = match m["unit"].as_str().unwrap_or("ms") {
                    "s" => 1e3,
                    "ms" => 1.0,
                    "us" | "µs" => 1e-3,
                    "ns" => 1e-6,
                    other => return Err(format!("{key}: the time's unit `{}` is not s, ms, us or ns", crate::spec::error::quote(other))),
                };
                config_time(val * scale, &key).map(Some)
            };
            let time = match r["measurements"].as_array().and_then(|m| m.iter().find(|m| m["name"] == "time")) {
                Some(m) => ms(m)?,
                None => None,
            };
            let samples: Vec<f64> = match &r["times"]["runtimes"] {
                J::Null => Vec::new(),
                J::String(s) if python_non_finite(s) => Vec::new(),
                J::Array(a) => a
                    .iter()
                    .filter(|x| !x.as_str().is_some_and(python_non_finite))
                    .map(|x| {
                        x.as_f64().ok_or(format!("{key}: `times.runtimes` holds {}, not a number", quote_json(x))).and_then(|t| non_negative(t, &key, "times"))
                    })
                    .collect::<Result<_, _>>()?,
                other => return Err(format!("{key}: `times.runtimes` is {}, not a list", quote_json(other))),
            };
            let time = time.or_else(|| (!samples.is_empty()).then(|| samples.iter().sum::<f64>() / samples.len() as f64));
            s.coords.push(coords);
            if valid && time.is_some() {
                s.times.push(time);
                s.failures.push(None);
            } else {
                s.times.push(None);
                s.failures.push(Some(r["invalidity"].as_str().unwrap_or("no time").to_string()));
            }
            s.samples.push(samples);
            // T4 `times`, as Kernel Tuner writes them.
            let secs = |field: &str| recorded_secs(&r["times"][field], &key, &format!("times.{field}"));
            s.compile_s.push(secs("compilation")?);
            s.eval_s.push(eval_secs(secs("benchmark")?, secs("validation")?));
        }
        Ok(s)
    }

    /// A space from parameters, each config's coordinates and its time in ms (`None`: it
    /// failed); no repetitions, compile or benchmark times recorded.
    pub fn from_times(name: &str, params: Vec<Param>, coords: Vec<Vec<u32>>, times: Vec<Option<f64>>) -> RecordedSpace {
        let n = coords.len();
        let failures = times.iter().map(|t| t.is_none().then(|| "RuntimeFailedConfig".to_string())).collect();
        RecordedSpace {
            name: name.into(),
            device: String::new(),
            params,
            coords,
            times,
            samples: vec![vec![]; n],
            failures,
            compile_s: vec![None; n],
            eval_s: vec![None; n],
            cut_off: false,
            note: None,
        }
    }

    /// Config `i` as `name=value, …`, for messages.
    pub fn config_text(&self, i: usize) -> String {
        self.params.iter().zip(&self.coords[i]).map(|(p, &v)| format!("{}={}", p.name, p.values[v as usize])).collect::<Vec<_>>().join(", ")
    }

    /// The fastest recorded time (ms).
    pub fn optimum(&self) -> f64 {
        self.times.iter().flatten().copied().fold(f64::INFINITY, f64::min)
    }

    /// Number of configs.
    pub fn len(&self) -> usize {
        self.coords.len()
    }

    /// True when it holds no config.
    pub fn is_empty(&self) -> bool {
        self.coords.is_empty()
    }
}

/// Another device's measurements in a Kernel Tuner cache (`.json`, `.json.gz`), a T4 file or a
/// kerntune tune report (`kerntune tune --json`),
/// read as priors are: leniently. A config whose time is a failure string is a failure; `NaN`
/// (Python writes it), `null`, a negative number or anything else is kept as a time that is not
/// one, so that the prior counts what it skips instead of refusing the file.
pub struct PriorFile {
    /// The device, where recorded.
    pub device: String,
    /// Parameter names, in the file's order.
    pub params: Vec<String>,
    /// Every config with its time in ms.
    pub records: Vec<crate::search::prior::Record>,
    /// Each record's compile seconds, where recorded (Kernel Tuner's `compile_time`, T4's
    /// `times.compilation`, both in ms).
    pub compile_s: Vec<Option<f64>>,
    /// Each record's seconds of benchmarking and verifying, where recorded on kerntune's scale:
    /// a T4 file kerntune wrote (`metadata.tuner` names it; `times.benchmark` plus
    /// `times.validation`, in ms). Another tool's are left out: on an H100, Kernel Tuner's
    /// `benchmark_time` plus `verification_time` of SGEMM 4096³ configs were 14–32× what kerntune
    /// spent evaluating the same configs (median 22×, most of it verification), so they would
    /// size a tune's first flight as if measuring bounded it where compiling does
    /// (docs/benchmarks.md, "The first flight from the sources' seconds").
    pub eval_s: Vec<Option<f64>>,
    /// The file ended early and was closed after its last complete entry, as a
    /// [`RecordedSpace`]'s `cut_off`.
    pub cut_off: bool,
    /// The kernel, problem and target (fingerprint) the document names, where it names them
    /// (kerntune's T4 export and tune reports do; Kernel Tuner's files do not): a file of several
    /// documents is read as a database is, by these.
    pub kernel: Option<String>,
    /// See `kernel`.
    pub problem: Option<String>,
    /// See `kernel`.
    pub target: Option<String>,
}

impl PriorFile {
    /// Compile and evaluation seconds of the records with a time (successful configs), for
    /// [`crate::search::PriorBuilder::add_seconds`].
    pub fn seconds(&self) -> impl Iterator<Item = (Option<f64>, Option<f64>)> + '_ {
        self.records.iter().zip(self.compile_s.iter().zip(&self.eval_s)).filter(|((_, t), _)| t.is_ok()).map(|(_, (&c, &e))| (c, e))
    }

    /// The records with a compile time: parameter values and seconds.
    pub fn compile_records(&self) -> impl Iterator<Item = (Vec<(String, Value)>, f64)> + '_ {
        self.records.iter().zip(&self.compile_s).filter_map(|((v, _), c)| c.map(|c| (v.clone(), c)))
    }

    /// Reads a file of one document; `Err` says why it is not one this reads.
    pub fn load(path: &Path) -> Result<PriorFile, String> {
        let mut all = Self::load_all(path)?;
        match all.len() {
            1 => Ok(all.remove(0)),
            n => Err(format!("{}: {n} documents (several entries or tunes); it is read one at a time here", path.display())),
        }
    }

    /// Reads a file: one document, or each of a list of them (kerntune's T4 export of several
    /// entries, its report of several tunes); `Err` says why it is not one this reads.
    pub fn load_all(path: &Path) -> Result<Vec<PriorFile>, String> {
        let text = read_text(path)?;
        let (v, cut_off) = parse_repairing(&text)
            .map_err(|e| format!("{}: not a Kernel Tuner cache, T4 file or kerntune database (no SQLite header): {e}", path.display()))?;
        documents_of(&v, path, cut_off).into_iter().map(|d| Self::from_value(d.value.clone(), d.cut_off, &d.path)).collect()
    }

    /// The prior one parsed document holds (`path` names it in errors).
    fn from_value(v: J, cut_off: bool, path: &Path) -> Result<PriorFile, String> {
        let time = |t: &J| -> Result<f64, String> {
            match t {
                J::Number(n) => Ok(n.as_f64().unwrap_or(f64::NAN)),
                // Python's NaN or infinity: not a time (counted as such), not a failure.
                J::String(s) if python_non_finite(s) => Ok(f64::NAN),
                J::String(s) => Err(s.clone()),
                _ => Ok(f64::NAN),
            }
        };
        let value = |x: &J| Value::from_json(x).unwrap_or_else(|| Value::Str(x.to_string()));
        let t4 = one_report(&v).map(|r| r.and_then(report_as_t4)).transpose().map_err(|e| format!("{}: {e}", path.display()))?;
        let v = t4.unwrap_or(v);
        if let Some(cache) = v.get("cache").and_then(J::as_object) {
            let keys: Vec<String> = v["tune_params_keys"]
                .as_array()
                .ok_or(format!("{}: missing `tune_params_keys`", path.display()))?
                .iter()
                .filter_map(|k| k.as_str().map(String::from))
                .collect();
            let records = cache
                .values()
                .map(|e| {
                    let t = match &e["time"] {
                        J::Number(n) if n.as_f64().is_some_and(|t| t >= 1e19) => Err("1e20 (failed)".to_string()),
                        other => time(other),
                    };
                    (keys.iter().map(|k| (k.clone(), value(&e[k]))).collect(), t)
                })
                .collect();
            let compile_s = cache.values().map(|e| e["compile_time"].as_f64().map(|ms| ms / 1e3)).collect();
            let eval_s = vec![None; cache.len()];
            return Ok(PriorFile {
                device: v["device_name"].as_str().unwrap_or("").to_string(),
                params: keys,
                records,
                compile_s,
                eval_s,
                cut_off,
                kernel: None,
                problem: None,
                target: None,
            });
        }
        if let Some(results) = v.get("results").and_then(J::as_array) {
            let mut params: Vec<String> = Vec::new();
            let records = results
                .iter()
                .map(|r| {
                    let conf: Vec<(String, Value)> =
                        r["configuration"].as_object().map(|o| o.iter().map(|(k, x)| (k.clone(), value(x))).collect()).unwrap_or_default();
                    for (k, _) in &conf {
                        if !params.contains(k) {
                            params.push(k.clone());
                        }
                    }
                    let invalid = r["invalidity"].as_str().filter(|i| *i != "correct");
                    let t = match (invalid, r["measurements"].as_array().and_then(|m| m.iter().find(|m| m["name"] == "time"))) {
                        (Some(i), _) => Err(i.to_string()),
                        (None, Some(m)) => time(&m["value"]).map(|x| {
                            x * match m["unit"].as_str().unwrap_or("ms") {
                                "s" => 1e3,
                                "us" | "µs" => 1e-3,
                                "ns" => 1e-6,
                                _ => 1.0,
                            }
                        }),
                        (None, None) => Ok(f64::NAN),
                    };
                    (conf, t)
                })
                .collect();
            let compile_s = results.iter().map(|r| r["times"]["compilation"].as_f64().map(|ms| ms / 1e3)).collect();
            let ours = v["metadata"]["tuner"].as_str().is_some_and(|t| t.starts_with("kerntune"));
            let eval_s = results
                .iter()
                .map(|r| eval_secs(r["times"]["benchmark"].as_f64(), r["times"]["validation"].as_f64()).map(|ms| ms / 1e3).filter(|_| ours))
                .collect();
            let named = |field: &str| v["metadata"][field].as_str().map(String::from);
            return Ok(PriorFile {
                device: v["metadata"]["hardware"]["name"].as_str().unwrap_or("").to_string(),
                params,
                records,
                compile_s,
                eval_s,
                cut_off,
                kernel: named("kernel"),
                problem: named("problem"),
                target: named("target"),
            });
        }
        match (v.get("cache"), v.get("results")) {
            (Some(c), _) => Err(format!("{}: `cache` is {}, not an object of configs (a Kernel Tuner cache)", path.display(), quote_json(c))),
            (_, Some(r)) => Err(format!("{}: `results` is {}, not a list of results (a T4 file)", path.display(), quote_json(r))),
            _ => Err(format!(
                "{}: neither a Kernel Tuner cache (no `cache`), a T4 file (no `results`), a kerntune tune report (`kerntune tune --json`) nor a kerntune database (no SQLite header)",
                path.display()
            )),
        }
    }
}

/// T4's `invalidity` for a failure class.
fn t4_invalidity(failure: crate::FailureKind) -> &'static str {
    match failure {
        crate::FailureKind::CompileFailed => "compile",
        crate::FailureKind::TimedOut => "timeout",
        crate::FailureKind::WrongOutput => "correctness",
        crate::FailureKind::OutOfResources => "constraints",
        _ => "runtime",
    }
}

/// Whether `v` is one kerntune tune report (an element of what `kerntune tune --json` prints).
fn is_report(v: &J) -> bool {
    v.is_object() && v["results"].is_array() && v["entry"].is_object() && v["target"].is_object()
}

/// The tune reports `v` holds, where it is kerntune's own (`kerntune tune --json`: a list with
/// one report per problem tuned, or one report); `None` when `v` is not one.
pub(crate) fn reports(v: &J) -> Option<Vec<&J>> {
    match v {
        J::Array(a) if !a.is_empty() && a.iter().all(is_report) => Some(a.iter().collect()),
        J::Object(_) if is_report(v) => Some(vec![v]),
        _ => None,
    }
}

/// The one tune report `v` holds (see [`reports`]): `None` when `v` is not one; `Err` for a list
/// of several, naming them (a recorded space, a prior and a drawn entry are one tune's).
pub(crate) fn one_report(v: &J) -> Option<Result<&J, String>> {
    reports(v).map(|all| match &all[..] {
        [one] => Ok(*one),
        many => {
            let tunes: Vec<String> = many
                .iter()
                .enumerate()
                .map(|(i, r)| format!("[{i}] {} {}", r["entry"]["kernel"].as_str().unwrap_or("?"), r["entry"]["problem"].as_str().unwrap_or("?")))
                .collect();
            Err(format!(
                "a kerntune report of {} tunes ({}); it is read one tune at a time: write one alone (`jq '.[0]' FILE > one.json`) and give that",
                many.len(),
                tunes.join(", ")
            ))
        }
    })
}

/// A kerntune tune report (one of [`one_report`]) as the T4 document its results make, so that
/// the tune's own output is read as a recorded space or a prior: each config's mean time (ms)
/// or failure (a config pruned after compiling as `constraints`), and the compile and
/// evaluation seconds the tune spent on it, which a time budget replays.
fn report_as_t4(report: &J) -> Result<J, String> {
    let mut results = Vec::new();
    for (n, r) in report["results"].as_array().into_iter().flatten().enumerate() {
        let Some(params) = r["config"]["params"].as_array() else {
            return Err(format!(
                "results[{n}]: `config.params` is {}, not a list of [name, value] pairs (a kerntune report)",
                quote_json(&r["config"]["params"])
            ));
        };
        let mut configuration = serde_json::Map::new();
        for p in params {
            match p.as_array().map(Vec::as_slice) {
                Some([J::String(name), value]) => {
                    configuration.insert(name.clone(), value.clone());
                }
                _ => return Err(format!("results[{n}]: `config.params` holds {}, not a [name, value] pair", quote_json(p))),
            }
        }
        let mut times = serde_json::Map::new();
        for (field, t4) in [("compile_seconds", "compilation"), ("eval_seconds", "benchmark")] {
            if let Some(s) = r[field].as_f64().filter(|s| s.is_finite() && *s >= 0.0) {
                times.insert(t4.into(), json!(s * 1e3));
            }
        }
        let (invalidity, measurements) = match r["outcome"].as_str() {
            Some("measured") => match r["stats"]["mean"].as_f64() {
                Some(mean) => ("correct", json!([{ "name": "time", "value": mean * 1e3, "unit": "ms" }])),
                None => return Err(format!("results[{n}]: a measured config without `stats.mean`")),
            },
            Some("failed") => {
                let kind = serde_json::from_value::<crate::FailureKind>(r["kind"].clone()).unwrap_or(crate::FailureKind::Other);
                (t4_invalidity(kind), json!([]))
            }
            Some("pruned") => ("constraints", json!([])),
            _ => return Err(format!("results[{n}]: `outcome` is {}, not measured, failed or pruned", quote_json(&r["outcome"]))),
        };
        results.push(json!({ "configuration": configuration, "times": times, "invalidity": invalidity, "measurements": measurements }));
    }
    let (entry, target) = (&report["entry"], &report["target"]);
    Ok(json!({
        "schema_version": "1.0.0",
        "metadata": { "kernel": entry["kernel"], "target": entry["target"], "hardware": { "name": target["name"] }, "problem": entry["problem"], "toolchain": entry["toolchain"], "tuner": "kerntune (tune report)" },
        "results": results,
    }))
}

/// T4 `times` with the mean runtime (ms) added.
fn with_runtime(mut times: serde_json::Map<String, J>, ms: f64) -> serde_json::Map<String, J> {
    times.insert("runtimes".into(), json!([ms]));
    times
}

/// Writes database measurements as a T4 results document.
pub fn to_t4(entry: &crate::store::db::Entry) -> J {
    let results: Vec<J> = entry
        .measurements
        .values()
        .map(|m| {
            let configuration: serde_json::Map<String, J> =
                m.config.params.iter().map(|(k, v)| (k.clone(), serde_json::to_value(v).unwrap_or(J::Null))).collect();
            let ts = chrono_like(m.at);
            // Compile seconds where the tune recorded them (ms, as T4 readers and this one's
            // `PriorFile::load` take them), so that the file orders compiles as a prior and
            // simulates a wall time.
            let mut times = serde_json::Map::new();
            if let Some(c) = m.trace.as_ref().and_then(|t| t.compile_s).filter(|c| c.is_finite() && *c >= 0.0) {
                times.insert("compilation".into(), json!(c * 1e3));
            }
            // The seconds the device spent on it (verifying and measuring), as T4's `benchmark`.
            if let Some(e) = m.trace.as_ref().and_then(|t| t.eval_s).filter(|e| e.is_finite() && *e >= 0.0) {
                times.insert("benchmark".into(), json!(e * 1e3));
            }
            match &m.status {
                crate::store::db::Status::Ok { stats } => json!({
                    "timestamp": ts,
                    "configuration": configuration,
                    "objectives": ["time"],
                    "times": with_runtime(times, stats.mean * 1e3),
                    "invalidity": "correct",
                    "correctness": 1,
                    "measurements": [
                        { "name": "time", "value": stats.mean * 1e3, "unit": "ms" },
                        { "name": "time_ci95_half_width", "value": if stats.ci_half.is_finite() { stats.ci_half * 1e3 } else { -1.0 }, "unit": "ms" },
                        { "name": "samples", "value": stats.samples, "unit": "" }
                    ]
                }),
                crate::store::db::Status::Failed { failure, message } => json!({
                    "timestamp": ts,
                    "configuration": configuration,
                    "objectives": ["time"],
                    "times": times,
                    "invalidity": t4_invalidity(*failure),
                    "correctness": 0,
                    "measurements": [],
                    "error": message,
                }),
            }
        })
        .collect();
    json!({
        "schema_version": "1.0.0",
        "metadata": { "kernel": entry.id.kernel, "target": entry.id.target, "hardware": { "name": entry.target_name }, "problem": entry.id.problem, "toolchain": entry.id.toolchain, "tuner": format!("kerntune {}", entry.env.kerntune) },
        "results": results,
    })
}

/// Seconds since the epoch as an ISO-8601 UTC timestamp.
fn chrono_like(secs: u64) -> String {
    let days = secs / 86400;
    let rem = secs % 86400;
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days as i64 + 719468;
    let era = z.div_euclid(146097);
    let doe = z.rem_euclid(146097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, (rem % 3600) / 60, rem % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn damaged_records_are_errors_that_quote_at_most_200_characters() {
        let kt = |entry: &str, extra: &str| {
            let text =
                format!(r#"{{"tune_params_keys": ["a"], "tune_params": {{"a": [1, 2]}}{extra}, "cache": {{"1": {{"a": 1, "time": 1.0}}, "2": {}}}}}"#, entry);
            let v = parse_repairing(&text).unwrap().0;
            check_version(&v).and_then(|_| RecordedSpace::from_kernel_tuner(&v, "t".into())).err().unwrap_or_default()
        };
        let e = kt(r#"{"a": 2, "time": -1.0}"#, "");
        assert!(e.contains("entry `2`: `time` -1 is not a time (zero, negative") && e.ends_with("remove that entry or record it again"), "{e}");
        assert!(kt(r#"{"a": 2, "time": null}"#, "").contains("`time` is null"));
        assert!(kt(r#"{"a": 2, "time": {"v": 1}}"#, "").contains("neither a number"));
        assert!(kt(r#"{"a": 2, "time": 1.0, "times": [1.0, "x"]}"#, "").contains("not a number"));
        assert!(kt(r#"{"a": 2, "time": 1.0}"#, r#", "schema_version": "7.0""#).contains("schema_version"));
        assert_eq!(kt(r#"{"a": 2, "time": 1.0}"#, r#", "schema_version": "1.0.0""#), "");
        let long = format!(r#"{{"a": {{"x": "{}"}}, "time": 1.0}}"#, "y".repeat(5000));
        let e = kt(&long, "");
        assert!(e.contains("not among tune_params") && e.len() < 400, "{}", e.len());
        // T4: an unknown unit is refused, not read as milliseconds.
        let t4 = r#"{"results": [{"configuration": {"a": 1}, "measurements": [{"name": "time", "value": 2.0, "unit": "fortnights"}]}]}"#;
        let e = RecordedSpace::from_t4(&parse_repairing(t4).unwrap().0, "t".into()).err().unwrap();
        assert!(e.contains("unit `fortnights`"), "{e}");
    }

    /// A Kernel Tuner cache and a T4 file, damaged one node at a time (a value replaced by one
    /// of another kind, a key removed, the text cut short; fixed seed), are read as a recorded
    /// space and as a prior: accepted or refused with a message, never a panic.
    #[test]
    fn damaged_files_are_refused_with_a_message_never_a_panic() {
        use rand::{Rng, SeedableRng};
        let kt: J = serde_json::from_str(
            r#"{"device_name": "X", "kernel_name": "k", "schema_version": "1.0.0", "tune_params_keys": ["a", "b"], "tune_params": {"a": [1, 2], "b": [8, 16]},
            "cache": {"1,8": {"a": 1, "b": 8, "time": 2.0, "times": [2.0, 2.1], "compile_time": 310.0, "verification_time": 1.0, "benchmark_time": 9.0},
                      "1,16": {"a": 1, "b": 16, "time": 1e20}, "2,8": {"a": 2, "b": 8, "time": "CompilationFailedConfig"},
                      "2,16": {"a": 2, "b": 16, "time": 1.5, "times": [1.5, 1.4]}}}"#,
        )
        .unwrap();
        let t4: J = serde_json::from_str(
            r#"{"schema_version": "1.0.0", "results": [
                {"configuration": {"a": 1, "b": 8}, "times": {"compilation": 0.3, "runtimes": [0.002, 0.0021]}, "measurements": [{"name": "time", "value": 2.0, "unit": "ms"}], "invalidity": "correct"},
                {"configuration": {"a": 2, "b": 8}, "times": {"runtimes": []}, "measurements": [], "invalidity": "compile"}]}"#,
        )
        .unwrap();
        let odd: [J; 10] = [
            J::Null,
            J::from(-1.0),
            J::from("x"),
            J::from(1e300),
            J::Array(vec![]),
            J::Object(Default::default()),
            J::Bool(true),
            J::from(u64::MAX),
            J::from(vec![J::from(1), J::from("a")]),
            J::from("1e20"),
        ];
        fn damage(v: &mut J, rng: &mut impl Rng, odd: &[J]) {
            let n = match v {
                J::Object(m) => m.len(),
                J::Array(a) => a.len(),
                _ => 0,
            };
            if n == 0 || rng.random_bool(0.25) {
                *v = odd[rng.random_range(0..odd.len())].clone();
                return;
            }
            let k = rng.random_range(0..n);
            match v {
                J::Object(m) => {
                    let key = m.keys().nth(k).cloned().unwrap_or_default();
                    if rng.random_bool(0.2) {
                        m.remove(&key);
                    } else if let Some(child) = m.get_mut(&key) {
                        damage(child, rng, odd);
                    }
                }
                J::Array(a) => damage(&mut a[k], rng, odd),
                _ => {}
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(26);
        let (mut refused, mut tried) = (0, 0);
        // A list of T4 documents (`db export --format t4` of several entries) too.
        let list = J::Array(vec![t4.clone(), t4.clone()]);
        for original in [&kt, &t4, &list] {
            for _ in 0..300 {
                let mut v = original.clone();
                for _ in 0..rng.random_range(1..4) {
                    damage(&mut v, &mut rng, &odd);
                }
                let mut text = v.to_string();
                if rng.random_bool(0.15) {
                    text.truncate(rng.random_range(0..text.len()));
                }
                let file = dir.path().join("space.json");
                std::fs::write(&file, &text).unwrap();
                tried += 2;
                let read = std::panic::catch_unwind(|| (RecordedSpace::load_all(&file).err(), PriorFile::load_all(&file).err()));
                let Ok(errors) = read else { panic!("reading panicked on {text}") };
                if let Some(e) = errors.0 {
                    refused += 1;
                    assert!(e.contains("space.json"), "the message does not name the file: {e}");
                }
                if let Some(e) = errors.1 {
                    refused += 1;
                    assert!(!e.trim().is_empty(), "an empty message for {text}");
                }
            }
        }
        assert!(refused > tried / 10 && refused < tried, "{refused} of {tried} refused");
    }

    #[test]
    fn unfinished_and_old_kernel_tuner_files_read() {
        let full = r#"{"device_name": "X", "kernel_name": "k", "tune_params_keys": ["a", "b"], "tune_params": {"a": [1, 2], "b": [8, 16]}, "objective": "time",
"cache": {
"1,8": {"a": 1, "b": 8, "time": 2.0, "times": [2.0, 2.0]},
"1,16": {"a": 1, "b": 16, "time": 1e20},
"2,8": {"a": 2, "b": 8, "time": "CompilationFailedConfig"},
"2,16": {"a": 2, "b": 16, "time": 1.5, "times": [1.4, 1.6]},
"#;
        let v = parse_repairing(full).unwrap().0;
        let s = RecordedSpace::from_kernel_tuner(&v, "t".into()).unwrap();
        assert_eq!(s.len(), 4);
        assert_eq!(s.optimum(), 1.5);
        assert_eq!(s.times.iter().filter(|t| t.is_none()).count(), 2);
        let best = s.times.iter().position(|t| *t == Some(1.5)).unwrap();
        assert_eq!(s.coords[best], vec![1, 1]);
        // Cut inside the last entry: that entry is dropped.
        let cut = &full[..full.len() - 30];
        let v = parse_repairing(cut).unwrap().0;
        assert_eq!(RecordedSpace::from_kernel_tuner(&v, "t".into()).unwrap().len(), 3);
    }

    /// Python's `json` (Kernel Tuner's writer) puts `NaN`, `Infinity` and `-Infinity` where
    /// numbers go: read as their names outside strings, untouched inside them; a config timed
    /// NaN is a failure, a repetition NaN is none, and a zero time is refused as damage.
    #[test]
    fn python_non_finite_numbers_read() {
        let text = r#"{"a": NaN, "b": [1.0, Infinity, -Infinity], "s": "NaN \" Infinity", "NaN": -Infinity}"#;
        let v: J = serde_json::from_str(&python_numbers(text)).unwrap();
        assert_eq!(v["a"], "NaN");
        assert_eq!(v["b"], json!([1.0, "Infinity", "-Infinity"]));
        assert_eq!(v["s"], "NaN \" Infinity", "inside a string, as written");
        assert_eq!(v["NaN"], "-Infinity");
        assert!(matches!(python_numbers(r#"{"a": 1}"#), std::borrow::Cow::Borrowed(_)));
        let cache = r#"{"tune_params_keys": ["a"], "tune_params": {"a": [1, 2, 3]}, "cache": {
"1": {"a": 1, "time": NaN, "times": [NaN]},
"2": {"a": 2, "time": 2.0, "times": [2.0, NaN, Infinity], "compile_time": NaN, "GB/s": Infinity},
"3": {"a": 3, "time": 3.0, "times": NaN}}}"#;
        let (v, cut_off) = parse_repairing(cache).unwrap();
        assert!(!cut_off);
        let s = RecordedSpace::from_kernel_tuner(&v, "t".into()).unwrap();
        assert_eq!(s.times, vec![None, Some(2.0), Some(3.0)]);
        assert_eq!(s.failures[0].as_deref(), Some("NaN (no time)"));
        assert_eq!(s.samples, vec![vec![], vec![2.0], vec![]]);
        assert_eq!(s.compile_s[1], None);
        let p = std::env::temp_dir().join(format!("kerntune-python-{}.json", std::process::id()));
        // With a byte-order mark, as a Windows editor saves it.
        std::fs::write(&p, format!("\u{feff}{cache}")).unwrap();
        let prior = PriorFile::load(&p).unwrap();
        assert_eq!(RecordedSpace::load(&p).unwrap().times, s.times);
        std::fs::remove_file(&p).unwrap();
        assert!(prior.records[0].1.as_ref().is_ok_and(|t| t.is_nan()), "a NaN time is no time, not a failure");
        let zero = cache.replace(r#""time": 3.0"#, r#""time": 0.0"#);
        let e = RecordedSpace::from_kernel_tuner(&parse_repairing(&zero).unwrap().0, "t".into()).err().unwrap();
        assert!(e.contains("entry `3`: `time` 0 is not a time (zero"), "{e}");
        // An entry that is no object, or lacks a parameter, says so.
        let e = RecordedSpace::from_kernel_tuner(&parse_repairing(&cache.replace(r#"{"a": 3, "time": 3.0, "times": NaN}"#, "7")).unwrap().0, "t".into());
        assert!(e.err().unwrap().contains("entry `3` is 7, not an object of parameter values and `time`"));
        let e = RecordedSpace::from_kernel_tuner(&parse_repairing(&cache.replace(r#""a": 3, "#, "")).unwrap().0, "t".into());
        assert!(e.err().unwrap().contains("entry `3` has no `a`"));
    }

    /// Only a file that ends early is repaired: a syntax error inside a file is reported, where
    /// closing the file after its last complete entry would have dropped every entry after it.
    #[test]
    fn damage_inside_a_file_is_not_taken_for_a_cut_off_file() {
        let text = r#"{"tune_params_keys": ["a"], "tune_params": {"a": [1, 2, 3]}, "cache": {
"1": {"a": 1, "time": 1.0},
"2": {"a": 2, "time": 2.0 oops},
"3": {"a": 3, "time": 3.0}}}"#;
        let e = parse_repairing(text).err().unwrap();
        assert!(e.contains("line 3"), "{e}");
        let cut = &text[..text.len() - 12];
        let (v, cut_off) = parse_repairing(&cut.replace(" oops", "")).unwrap();
        assert!(cut_off);
        assert_eq!(RecordedSpace::from_kernel_tuner(&v, "t".into()).unwrap().len(), 2);
    }

    /// A list of T4 documents (`db export --format t4`) is a space each, named by the file, the
    /// kernel and the problem, and by the target too where two share the rest (one GPU through
    /// CUDA and Vulkan has one device name).
    #[test]
    fn a_list_of_documents_is_a_space_each_named_apart() {
        let doc = |target: &str, problem: &str, ms: f64| {
            json!({
                "metadata": { "kernel": "mm", "problem": problem, "target": target, "hardware": { "name": "GPU" } },
                "results": [
                    { "configuration": { "t": 1 }, "invalidity": "correct", "measurements": [{ "name": "time", "value": ms, "unit": "ms" }] },
                    { "configuration": { "t": 2 }, "invalidity": "correct", "measurements": [{ "name": "time", "value": 2.0 * ms, "unit": "ms" }] }
                ]
            })
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fleet.t4.json");
        std::fs::write(&path, J::Array(vec![doc("cuda-a", "n=1", 1.0), doc("wgpu-a", "n=1", 3.0), doc("cuda-a", "n=2", 5.0)]).to_string()).unwrap();
        let names: Vec<String> = RecordedSpace::load_all(&path).unwrap().into_iter().map(|s| format!("{} {}", s.name, s.optimum())).collect();
        assert_eq!(names, ["fleet.t4 mm n=1 [cuda-a] 1", "fleet.t4 mm n=1 [wgpu-a] 3", "fleet.t4 mm n=2 5"]);
        let priors = PriorFile::load_all(&path).unwrap();
        assert_eq!(
            priors.iter().map(|p| (p.target.as_deref(), p.problem.as_deref())).collect::<Vec<_>>(),
            [(Some("cuda-a"), Some("n=1")), (Some("wgpu-a"), Some("n=1")), (Some("cuda-a"), Some("n=2"))]
        );
        // Read one at a time, it says it holds several.
        assert!(PriorFile::load(&path).err().unwrap().contains("3 documents"));
    }

    #[test]
    fn t4_round_trips_through_export() {
        let t4 = json!({"schema_version": "1.0.0", "results": [
            {"configuration": {"a": 1}, "times": {"runtimes": [1.0, 3.0]}, "invalidity": "correct", "correctness": 1, "measurements": [{"name": "time", "value": 2.0, "unit": "ms"}]},
            {"configuration": {"a": 2}, "times": {}, "invalidity": "compile", "correctness": 0},
            {"configuration": {"a": 4}, "times": {}, "invalidity": "correct", "correctness": 1, "measurements": [{"name": "time", "value": 0.001, "unit": "s"}]}
        ]});
        let s = RecordedSpace::from_t4(&t4, "t".into()).unwrap();
        assert_eq!(s.params[0].values, vec![Value::Int(1), Value::Int(2), Value::Int(4)]);
        assert_eq!(s.times, vec![Some(2.0), None, Some(1.0)]);
        assert_eq!(chrono_like(0), "1970-01-01T00:00:00Z");
        assert_eq!(chrono_like(1763683200), "2025-11-21T00:00:00Z");
    }

    /// A prior file's compile times: Kernel Tuner's `compile_time` and T4's `times.compilation`
    /// (both milliseconds) are read as seconds, each beside its record; a record without one
    /// has none.
    #[test]
    fn prior_files_carry_their_compile_times() {
        let dir = tempfile::tempdir().unwrap();
        let kt = dir.path().join("kt.json");
        std::fs::write(
            &kt,
            r#"{"device_name": "GPU", "tune_params_keys": ["a"], "tune_params": {"a": [1, 2]}, "cache": {"1": {"a": 1, "time": 1.0, "compile_time": 1500.0}, "2": {"a": 2, "time": "CompilationFailedConfig"}}}"#,
        )
        .unwrap();
        let f = PriorFile::load(&kt).unwrap();
        assert_eq!(f.compile_s, vec![Some(1.5), None]);
        let c: Vec<_> = f.compile_records().collect();
        assert_eq!(c, vec![(vec![("a".to_string(), Value::Int(1))], 1.5)]);
        let t4 = dir.path().join("t4.json");
        std::fs::write(
            &t4,
            r#"{"results": [{"configuration": {"a": 2}, "times": {"compilation": 250.0}, "invalidity": "correct", "measurements": [{"name": "time", "value": 3.0, "unit": "ms"}]}]}"#,
        )
        .unwrap();
        assert_eq!(PriorFile::load(&t4).unwrap().compile_s, vec![Some(0.25)]);
    }

    /// A prior file's evaluation seconds: a T4 file kerntune wrote gives its `times.benchmark`
    /// plus `times.validation` (ms), paired with the compile seconds for the successful records
    /// only; Kernel Tuner's caches and other tools' T4 files give none (their seconds are not on
    /// kerntune's scale).
    #[test]
    fn prior_files_carry_their_evaluation_times() {
        let dir = tempfile::tempdir().unwrap();
        let kt = dir.path().join("kt.json");
        std::fs::write(
            &kt,
            r#"{"tune_params_keys": ["a"], "tune_params": {"a": [1, 2, 3]}, "cache": {
                "1": {"a": 1, "time": 1.0, "compile_time": 1500.0, "benchmark_time": 200.0, "verification_time": 50.0},
                "2": {"a": 2, "time": 2.0, "benchmark_time": 100.0},
                "3": {"a": 3, "time": "RuntimeFailedConfig", "compile_time": 900.0, "benchmark_time": 10.0}}}"#,
        )
        .unwrap();
        let f = PriorFile::load(&kt).unwrap();
        assert_eq!(f.compile_s, vec![Some(1.5), None, Some(0.9)]);
        assert_eq!(f.eval_s, vec![None, None, None], "Kernel Tuner's evaluation seconds are not kerntune's");
        let t4 = |tuner: &str| {
            let path = dir.path().join("t4.json");
            let results = r#"[{"configuration": {"a": 2}, "times": {"compilation": 250.0, "benchmark": 30.0, "validation": 10.0}, "invalidity": "correct", "measurements": [{"name": "time", "value": 3.0, "unit": "ms"}]},
                {"configuration": {"a": 3}, "times": {"compilation": 90.0, "benchmark": 5.0}, "invalidity": "compile", "measurements": []}]"#;
            std::fs::write(&path, format!(r#"{{"metadata": {{"tuner": "{tuner}"}}, "results": {results}}}"#)).unwrap();
            PriorFile::load(&path).unwrap().seconds().collect::<Vec<_>>()
        };
        assert_eq!(t4("kerntune 0.1.0"), vec![(Some(0.25), Some(0.04))], "the failed config left out");
        assert_eq!(t4("kernel_tuner 1.5.0"), vec![(Some(0.25), None)]);
    }

    /// A T4 file's compile, benchmark and validation times (ms) are a recorded space's compile
    /// and evaluation seconds (what `simulate --compile-threads` replays), and a database's
    /// export writes each measurement's compile seconds there.
    #[test]
    fn t4_times_carry_compile_seconds_both_ways() {
        let t4 = json!({"results": [
            {"configuration": {"a": 1}, "times": {"compilation": 250.0, "benchmark": 10.0, "validation": 5.0, "runtimes": [2.0]}, "invalidity": "correct"},
            {"configuration": {"a": 2}, "times": {"runtimes": [1.0]}, "invalidity": "correct"}
        ]});
        let s = RecordedSpace::from_t4(&t4, "t".into()).unwrap();
        assert_eq!(s.compile_s, vec![Some(0.25), None]);
        assert_eq!(s.eval_s, vec![Some(0.015), None]);
        use crate::store::db::{Entry, EntryId, Environment, Measurement, Trace};
        let id = EntryId { kernel: "k".into(), kernel_hash: "h".into(), target: "t".into(), toolchain: "c".into(), problem: "n=1".into() };
        let mut e = Entry::new(id, "GPU".into(), Environment::default());
        let mut m = Measurement::timed(
            crate::space::config::Config::new([("a".to_string(), Value::Int(1))]),
            crate::measure::stats::Stats::from_samples(&[0.002, 0.002], false),
            1,
        );
        m.trace =
            Some(Trace { run: 1, seq: 0, elapsed_s: 3.0, compile_s: Some(1.5), eval_s: Some(0.25), device: None, by: None, spans: Vec::new(), shard: None });
        e.measurements.insert(m.config.key(), m);
        let back = RecordedSpace::from_t4(&to_t4(&e), "t".into()).unwrap();
        assert_eq!(back.compile_s, vec![Some(1.5)]);
        assert_eq!(back.eval_s, vec![Some(0.25)]);
        assert_eq!(back.times, vec![Some(2.0)]);
    }
}
