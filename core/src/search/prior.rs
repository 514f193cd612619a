//! What other devices measured of the same kernel, lined up with this tune's candidates: the
//! prior a [`crate::search::Transfer`] search learns from.
//!
//! A source is one device's measurements (a database entry of another target, a Kernel Tuner
//! cache, a T4 file). [`PriorBuilder`] maps each measured config onto the candidates by its
//! parameter values, and counts what it cannot use: configs that are not candidates here
//! (outside the space, or pruned by this device's limits), failures, times that are not times
//! (NaN, negative, infinite). A source of another parameter space is refused with the names or
//! values that differ.

use crate::search::strategy::Candidates;
use crate::spec::job::Param;
use crate::spec::value::Value;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;

/// One source's measurements, aligned with the candidates.
#[derive(Clone, Debug)]
pub struct Source {
    /// A name for reports (the device, or the file).
    pub name: String,
    /// Per candidate: the time (any unit; only ratios matter), NaN for one the source did not
    /// measure (or saw fail).
    pub times: Vec<f32>,
}

impl Source {
    /// Each candidate's score: the log of its time over the source's best (0 for the best); an
    /// unmeasured config scores the median.
    pub fn scores(&self) -> Vec<f32> {
        let ok: Vec<f32> = self.times.iter().copied().filter(|t| t.is_finite() && *t > 0.0).collect();
        if ok.is_empty() {
            return vec![0.0; self.times.len()];
        }
        let best = ok.iter().copied().fold(f32::INFINITY, f32::min);
        let mut logs: Vec<f32> = ok.iter().map(|t| (t / best).ln()).collect();
        logs.sort_by(f32::total_cmp);
        let (median, worst) = (logs[logs.len() / 2], logs[logs.len() - 1]);
        self.times
            .iter()
            .map(|&t| {
                if t.is_nan() {
                    median
                } else if !t.is_finite() || t <= 0.0 {
                    worst + 1.0
                } else {
                    (t / best).ln()
                }
            })
            .collect()
    }

    /// Configs it measured successfully.
    pub fn measured(&self) -> usize {
        self.times.iter().filter(|t| t.is_finite()).count()
    }
}

/// The sources, aligned with one tune's candidates.
#[derive(Clone, Debug, Default)]
pub struct Prior {
    /// Every usable source.
    pub sources: Vec<Source>,
    /// What was left out, and why (counts by reason; refused sources by name).
    pub skipped: BTreeMap<String, usize>,
    /// Sources refused whole, with the reason.
    pub refused: Vec<String>,
    /// Notes for the report (a different kernel hash used because a file was named, ...).
    pub notes: Vec<String>,
    /// Per candidate: the sources' recorded compile seconds (their geometric mean; NaN where
    /// none recorded one), for ordering this tune's compiles longest first from the start.
    /// Empty when no source recorded compile times.
    pub compile_s: Vec<f32>,
    /// The seconds a config took to compile and to evaluate (verify and measure) on the
    /// sources, each source's mean over its successful configs that recorded both, averaged over
    /// the sources that did; `None` when none did. Before this tune has timed an evaluation of
    /// its own, they say whether compiling or measuring will bound it, and so how many
    /// proposals to ask for before any outcome is in ([`crate::search::pipeline::capacity`]).
    pub seconds: Option<(f64, f64)>,
    /// How many of the sources are this target's own measurements of other problem sizes (or
    /// of this problem under another toolchain), not other targets'.
    pub problems_here: usize,
}

impl Prior {
    /// Whether there is anything to learn from.
    pub fn is_empty(&self) -> bool {
        self.sources.is_empty()
    }

    /// Sources that are other targets (not this target's other problem sizes).
    pub fn targets(&self) -> usize {
        self.sources.len() - self.problems_here
    }

    /// Measurements used, over every source.
    pub fn measurements(&self) -> usize {
        self.sources.iter().map(Source::measured).sum()
    }

    /// One line: `prior: 5 targets, 21,780 measurements (db)`, with what was skipped.
    pub fn summary(&self, from: &str) -> String {
        let mut s = format!("prior: {}, {} measurements ({from})", learned_from(self.targets(), self.problems_here), thousands(self.measurements()));
        if !self.skipped.is_empty() {
            s.push_str(&format!("; skipped {}", self.skipped.iter().map(|(k, v)| format!("{} {k}", thousands(*v))).collect::<Vec<_>>().join(", ")));
        }
        s
    }
}

/// What a prior learned from, in words: `5 targets, 3 other problems on this target` (`0
/// targets` when there is nothing).
pub fn learned_from(targets: usize, problems_here: usize) -> String {
    let mut parts = Vec::new();
    if targets > 0 || problems_here == 0 {
        parts.push(format!("{targets} target{}", if targets == 1 { "" } else { "s" }));
    }
    if problems_here > 0 {
        parts.push(format!("{problems_here} other problem{} on this target", if problems_here == 1 { "" } else { "s" }));
    }
    parts.join(", ")
}

fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// One measured config of a source: its parameter values by name, and its time (`Err`: why
/// it has none — a failure string, NaN, a negative number).
pub type Record = (Vec<(String, Value)>, Result<f64, String>);

/// Lines sources up with a tune's candidates.
pub struct PriorBuilder<'a> {
    params: &'a [Param],
    coords: &'a [Vec<u32>],
    index: FxHashMap<&'a [u32], usize>,
    /// Candidates by config key (`name=value,...`), made on first use.
    keys: Option<FxHashMap<String, usize>>,
    n: usize,
    prior: Prior,
    /// Per candidate: the sum of the logs of the recorded compile seconds, and their count.
    compile: Vec<(f64, u32)>,
    /// Per source that recorded them: its mean compile and evaluation seconds.
    seconds: Vec<(f64, f64)>,
    /// This tune's problem sizes ([`PriorBuilder::with_sizes`]).
    sizes: Vec<(String, Value)>,
    /// Those of the last source's parameters that are problem sizes here, with this tune's values.
    sized: Vec<(String, Value)>,
}

/// Whether two parameter values are the same (`64` and `64.0` are).
fn same_value(a: &Value, b: &Value) -> bool {
    // A number written as a string by another tool (`"64"` in a T4 file or a cache whose script
    // kept values as strings) is that number.
    let number = |v: &Value| match v {
        Value::Str(s) => s.trim().parse::<f64>().ok(),
        other => other.as_f64(),
    };
    a == b || number(a).zip(number(b)).is_some_and(|(x, y)| x == y)
}

impl<'a> PriorBuilder<'a> {
    /// For these candidates.
    pub fn new(cands: &Candidates<'a>) -> PriorBuilder<'a> {
        let index = cands.coords.iter().enumerate().map(|(i, c)| (c.as_slice(), i)).collect();
        PriorBuilder {
            params: cands.params,
            coords: cands.coords,
            index,
            keys: None,
            n: cands.len(),
            prior: Prior::default(),
            compile: Vec::new(),
            seconds: Vec::new(),
            sizes: Vec::new(),
            sized: Vec::new(),
        }
    }

    /// With this tune's problem sizes: a source parameter of the same name (a Kernel Tuner
    /// script's single-value `filter_width`, say) is not another parameter space; its records
    /// are used where their value is this tune's, and counted out where it is not.
    pub fn with_sizes(mut self, sizes: &[(String, Value)]) -> PriorBuilder<'a> {
        self.sizes = sizes.to_vec();
        self
    }

    /// Sources kept so far.
    pub fn sources(&self) -> usize {
        self.prior.sources.len()
    }

    fn skip(&mut self, why: &str, n: usize) {
        if n > 0 {
            *self.prior.skipped.entry(why.to_string()).or_default() += n;
        }
    }

    /// Whether a source with parameters `params` is of this space; refused (and noted) if not.
    fn same_space(&mut self, name: &str, params: &[String]) -> bool {
        let mine: Vec<&str> = self.params.iter().map(|p| p.name.as_str()).collect();
        let missing: Vec<&str> = mine.iter().copied().filter(|m| !params.iter().any(|p| p == m)).collect();
        // A parameter this space has as a problem size (Kernel Tuner scripts often make the
        // problem's constants single-value parameters, so that they reach the kernel as
        // defines): each record is checked against this tune's value instead.
        self.sized = params.iter().filter(|p| !mine.contains(&p.as_str())).filter_map(|p| self.sizes.iter().find(|(n, _)| n == p).cloned()).collect();
        let extra: Vec<&str> = params.iter().map(String::as_str).filter(|p| !mine.contains(p) && !self.sized.iter().any(|(n, _)| n == p)).collect();
        if missing.is_empty() && extra.is_empty() {
            return true;
        }
        let mut why = format!("{name}: another parameter space:");
        if !missing.is_empty() {
            why.push_str(&format!(" it lacks {}", missing.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", ")));
        }
        if !extra.is_empty() {
            why.push_str(&format!(
                "{} it has {} this space does not",
                if missing.is_empty() { "" } else { ";" },
                extra.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", ")
            ));
        }
        self.prior.refused.push(why);
        false
    }

    /// Whether a record's values of the source's parameters that are this tune's problem sizes
    /// match them (true without such parameters).
    fn this_problem(&self, values: &[(String, Value)]) -> bool {
        self.sized.iter().all(|(n, want)| values.iter().find(|(k, _)| k == n).is_some_and(|(_, v)| same_value(v, want)))
    }

    /// The candidate a record's parameter values name, if any; a value outside the space is
    /// remembered in `foreign`.
    fn locate(&self, values: &[(String, Value)], foreign: &mut BTreeMap<String, Value>) -> Option<usize> {
        let coords: Option<Vec<u32>> = self
            .params
            .iter()
            .map(|p| {
                let v = values.iter().find(|(n, _)| n == &p.name).map(|(_, v)| v)?;
                let at = p.values.iter().position(|x| same_value(x, v));
                if at.is_none() {
                    foreign.entry(p.name.clone()).or_insert_with(|| v.clone());
                }
                at.map(|i| i as u32)
            })
            .collect();
        coords.as_deref().and_then(|c| self.index.get(c).copied())
    }

    /// Keeps a source of located records (`None`: not a candidate here), counting what it
    /// cannot use.
    fn keep(&mut self, name: &str, located: impl IntoIterator<Item = (Option<usize>, Result<f64, String>)>, foreign: BTreeMap<String, Value>) {
        let mut times = vec![f32::NAN; self.n];
        let (mut outside, mut failed, mut bad) = (0, 0, 0);
        for (i, time) in located {
            let Some(i) = i else {
                outside += 1;
                continue;
            };
            match time {
                Ok(t) if t.is_finite() && t > 0.0 => times[i] = t as f32,
                Ok(_) => bad += 1,
                // A failure elsewhere says little about this device: left out, counted.
                Err(_) => failed += 1,
            }
        }
        self.skip("failed", failed);
        self.skip("not candidates here (outside the space, or pruned on this device)", outside);
        self.skip("not times (NaN, zero or negative)", bad);
        if !foreign.is_empty() {
            self.prior.notes.push(format!(
                "{name}: values outside this space were skipped ({})",
                foreign.iter().map(|(k, v)| if let Value::Str(s) = v { format!("{k} = \"{s}\"") } else { format!("{k} = {v}") }).collect::<Vec<_>>().join(", ")
            ));
        }
        let source = Source { name: name.to_string(), times };
        if source.measured() == 0 {
            self.prior.refused.push(format!("{name}: no successful measurement of a candidate here"));
            return;
        }
        self.prior.sources.push(source);
    }

    /// Adds a source. Refused (and noted) when its parameters are not the space's; otherwise
    /// every record that maps onto a candidate is used and the rest counted. True when kept.
    pub fn add(&mut self, name: &str, params: &[String], records: impl IntoIterator<Item = Record>) -> bool {
        if !self.same_space(name, params) {
            return false;
        }
        let before = self.prior.sources.len();
        let mut foreign = BTreeMap::new();
        let mut other_problem = 0;
        let located: Vec<(Option<usize>, Result<f64, String>)> = records
            .into_iter()
            .filter(|(values, _)| {
                let ours = self.this_problem(values);
                other_problem += usize::from(!ours);
                ours
            })
            .map(|(values, t)| (self.locate(&values, &mut foreign), t))
            .collect();
        if other_problem > 0 {
            let sizes = self.sized.iter().map(|(n, v)| format!("{n} = {v}")).collect::<Vec<_>>().join(", ");
            self.skip(&format!("of another problem (this tune's {sizes})"), other_problem);
        }
        self.keep(name, located, foreign);
        self.prior.sources.len() > before
    }

    /// Adds a source whose records are config keys (`name=value,...`, as the database keeps
    /// them): a key written as this space writes it is found directly; any other is parsed and
    /// matched by parameter values (another order of parameters, another spelling of a number).
    pub fn add_keyed<K: AsRef<str>>(&mut self, name: &str, params: &[String], records: impl IntoIterator<Item = (K, Result<f64, String>)>) -> bool {
        if !self.same_space(name, params) {
            return false;
        }
        let before = self.prior.sources.len();
        let mut foreign = BTreeMap::new();
        let located: Vec<(Option<usize>, Result<f64, String>)> = records.into_iter().map(|(k, t)| (self.locate_key(k.as_ref(), &mut foreign), t)).collect();
        self.keep(name, located, foreign);
        self.prior.sources.len() > before
    }

    /// The candidate a config key names: directly when written as this space writes it, else
    /// parsed and matched by parameter values (another order of parameters, another spelling of
    /// a number), a value outside the space remembered in `foreign`.
    fn locate_key(&mut self, key: &str, foreign: &mut BTreeMap<String, Value>) -> Option<usize> {
        self.key_index(key).or_else(|| crate::space::config::Config::parse(key).and_then(|c| self.locate(&c.params, foreign)))
    }

    /// Adds a source's recorded compile seconds (parameter values and seconds), after
    /// [`PriorBuilder::add`] kept it: configs that are not candidates here, and times that are
    /// not positive and finite, are left out. Compile times depend on the code and the compiler
    /// far more than on the device, so another device's say which of this tune's compiles are
    /// the long ones before any has finished.
    pub fn add_compile(&mut self, records: impl IntoIterator<Item = (Vec<(String, Value)>, f64)>) {
        let mut foreign = BTreeMap::new();
        let located: Vec<(Option<usize>, f64)> =
            records.into_iter().filter(|(v, _)| self.this_problem(v)).map(|(v, s)| (self.locate(&v, &mut foreign), s)).collect();
        self.keep_compile(located);
    }

    /// [`PriorBuilder::add_compile`] for records keyed as the database keys them.
    pub fn add_compile_keyed<K: AsRef<str>>(&mut self, records: impl IntoIterator<Item = (K, f64)>) {
        let mut foreign = BTreeMap::new();
        let located: Vec<(Option<usize>, f64)> = records.into_iter().map(|(k, s)| (self.locate_key(k.as_ref(), &mut foreign), s)).collect();
        self.keep_compile(located);
    }

    fn keep_compile(&mut self, located: Vec<(Option<usize>, f64)>) {
        for (i, secs) in located {
            let Some(i) = i.filter(|_| secs.is_finite() && secs > 0.0) else { continue };
            if self.compile.is_empty() {
                self.compile = vec![(0.0, 0); self.n];
            }
            self.compile[i].0 += secs.ln();
            self.compile[i].1 += 1;
        }
    }

    /// Adds a source's compile and evaluation seconds per config (each pair one successful
    /// config's, in any order), after [`PriorBuilder::add`] kept it: a pair of which either is
    /// missing, not finite or not positive is left out; a source with none left adds nothing.
    /// The pairs may be a sample of the source's configs: only their means are kept.
    pub fn add_seconds(&mut self, pairs: impl IntoIterator<Item = (Option<f64>, Option<f64>)>) {
        let ok = |s: Option<f64>| s.filter(|s| s.is_finite() && *s > 0.0);
        let (mut c, mut e, mut n) = (0.0, 0.0, 0usize);
        for (compile, eval) in pairs {
            if let (Some(compile), Some(eval)) = (ok(compile), ok(eval)) {
                (c, e, n) = (c + compile, e + eval, n + 1);
            }
        }
        if n > 0 {
            self.seconds.push((c / n as f64, e / n as f64));
        }
    }

    /// The candidate a config key written as this space writes it names.
    fn key_index(&mut self, key: &str) -> Option<usize> {
        let (ps, coords) = (self.params, self.coords);
        self.keys
            .get_or_insert_with(|| {
                // Each parameter's `name=value` texts made once; a key is their concatenation.
                let parts: Vec<Vec<String>> =
                    ps.iter().enumerate().map(|(j, p)| p.values.iter().map(|v| format!("{}{}={v}", if j == 0 { "" } else { "," }, p.name)).collect()).collect();
                let mut keys = FxHashMap::with_capacity_and_hasher(coords.len(), Default::default());
                for (i, c) in coords.iter().enumerate() {
                    let mut key = String::with_capacity(c.iter().zip(&parts).map(|(&v, p)| p[v as usize].len()).sum());
                    for (&v, p) in c.iter().zip(&parts) {
                        key.push_str(&p[v as usize]);
                    }
                    keys.insert(key, i);
                }
                keys
            })
            .get(key)
            .copied()
    }

    /// Adds a note (e.g. that a source of another kernel hash was used because it was named).
    pub fn note(&mut self, note: String) {
        self.prior.notes.push(note);
    }

    /// Counts the source just added as this target's own (another problem size, or this one
    /// under another toolchain), for [`Prior::summary`].
    pub fn count_as_problem_here(&mut self) {
        self.prior.problems_here += 1;
    }

    /// The aligned prior.
    pub fn build(mut self) -> Prior {
        self.prior.compile_s = self.compile.iter().map(|&(sum, n)| if n > 0 { (sum / f64::from(n)).exp() as f32 } else { f32::NAN }).collect();
        let n = self.seconds.len() as f64;
        self.prior.seconds = (n > 0.0).then(|| (self.seconds.iter().map(|s| s.0).sum::<f64>() / n, self.seconds.iter().map(|s| s.1).sum::<f64>() / n));
        self.prior
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_line_up_with_the_candidates_and_count_what_they_cannot_use() {
        let params = vec![Param::new("a", [1, 2, 3]), Param::new("b", [10, 20])];
        let coords: Vec<Vec<u32>> = vec![vec![0, 0], vec![1, 0], vec![2, 1]];
        let cands = Candidates { params: &params, coords: &coords };
        let mut b = PriorBuilder::new(&cands);
        let rec = |a: i64, bb: i64, t: Result<f64, String>| (vec![("a".to_string(), Value::Int(a)), ("b".to_string(), Value::Int(bb))], t);
        b.add(
            "gpu1",
            &["a".into(), "b".into()],
            vec![
                rec(1, 10, Ok(2.0)),
                rec(2, 10, Ok(1.0)),
                rec(3, 20, Err("RuntimeFailedConfig".into())),
                rec(2, 20, Ok(5.0)),
                rec(9, 10, Ok(1.0)),
                rec(1, 10, Ok(f64::NAN)),
            ],
        );
        b.add("other", &["a".into(), "c".into()], vec![]);
        let p = b.build();
        assert_eq!(p.sources.len(), 1);
        let s = &p.sources[0];
        assert_eq!((s.times[0], s.times[1]), (2.0, 1.0));
        assert!(s.times[2].is_nan(), "a failure there is left out");
        assert_eq!(p.skipped["not candidates here (outside the space, or pruned on this device)"], 2);
        assert_eq!(p.skipped["failed"], 1);
        assert_eq!(p.skipped["not times (NaN, zero or negative)"], 1);
        assert!(p.refused[0].contains("another parameter space: it lacks `b`; it has `c` this space does not"), "{:?}", p.refused);
        assert!(p.notes[0].contains("a = 9"), "{:?}", p.notes);
        let sc = s.scores();
        assert!((sc[1] - 0.0).abs() < 1e-6 && (sc[0] - 2f32.ln()).abs() < 1e-6 && sc[2] == sc[0], "unmeasured: the median");
        assert_eq!(
            p.summary("db"),
            "prior: 1 target, 2 measurements (db); skipped 1 failed, 2 not candidates here (outside the space, or pruned on this device), 1 not times (NaN, zero or negative)"
        );
    }

    /// Numbers another tool wrote as strings (`"64"`) are those numbers; a string that is not
    /// one of the space's values is named quoted, so that its kind shows.
    #[test]
    fn numbers_written_as_strings_are_numbers() {
        let params = vec![Param::new("a", [32, 64])];
        let coords: Vec<Vec<u32>> = vec![vec![0], vec![1]];
        let cands = Candidates { params: &params, coords: &coords };
        let mut b = PriorBuilder::new(&cands);
        let rec = |a: &str, t: f64| (vec![("a".to_string(), Value::Str(a.into()))], Ok(t));
        assert!(b.add("strings", &["a".into()], vec![rec("32", 2.0), rec(" 64", 1.0), rec("wide", 1.0)]));
        let p = b.build();
        assert_eq!((p.sources[0].times[0], p.sources[0].times[1]), (2.0, 1.0));
        assert!(p.notes.iter().any(|n| n.contains("a = \"wide\"")), "{:?}", p.notes);
    }

    /// Keys as the database writes them (`Config::key`) are found in the key table directly,
    /// whatever the values' kinds, so a database's 20,000 records do not each take the slow
    /// path (parsing the key and matching its values); a key written otherwise still is found.
    #[test]
    fn database_keys_are_found_directly() {
        let params = vec![
            Param::new("b", [Value::Int(-4), Value::Int(64)]),
            Param::new("a", [Value::Float(0.5), Value::Float(2.0)]),
            Param::new("on", [Value::Bool(true), Value::Bool(false)]),
            Param::new("s", [Value::Str("x y".into()), Value::Str("z".into())]),
        ];
        let coords: Vec<Vec<u32>> = (0..16u32).map(|i| vec![i & 1, (i >> 1) & 1, (i >> 2) & 1, i >> 3]).collect();
        let cands = Candidates { params: &params, coords: &coords };
        let mut b = PriorBuilder::new(&cands);
        for (i, c) in coords.iter().enumerate() {
            let key = crate::space::config::Config::new(params.iter().zip(c).map(|(p, &v)| (p.name.clone(), p.values[v as usize].clone()))).key();
            assert_eq!(b.key_index(&key), Some(i), "{key}");
        }
        let mut foreign = BTreeMap::new();
        assert_eq!(b.locate_key("a=2.0,b=64,on=false,s=z", &mut foreign), Some(15), "another order: parsed and matched");
    }

    /// The sources' seconds a config costs: each source's mean over its pairs with both seconds
    /// positive and finite, averaged over the sources (a sample of one source counts as much as
    /// all of another's); none without a usable pair.
    #[test]
    fn the_sources_seconds_are_averaged_source_by_source() {
        let params = vec![Param::new("a", [1, 2])];
        let coords: Vec<Vec<u32>> = vec![vec![0], vec![1]];
        let cands = Candidates { params: &params, coords: &coords };
        assert!(PriorBuilder::new(&cands).build().seconds.is_none());
        let mut b = PriorBuilder::new(&cands);
        b.add_seconds(vec![(Some(1.0), Some(0.1)), (Some(3.0), Some(0.3)), (None, Some(9.0)), (Some(f64::NAN), Some(1.0)), (Some(1.0), Some(-1.0))]);
        b.add_seconds(vec![(Some(4.0), Some(1.0))]);
        b.add_seconds(vec![(Some(0.0), Some(1.0))]);
        let (c, e) = b.build().seconds.unwrap();
        assert!((c - 3.0).abs() < 1e-12 && (e - 0.6).abs() < 1e-12, "{c} {e}");
    }

    /// A Kernel Tuner cache whose script made a problem constant a single-value parameter
    /// (`fw`, a problem size here): its records of this problem are used, those of another
    /// are counted out, and their compile times follow the same rule.
    #[test]
    fn a_parameter_that_is_a_problem_size_here_is_matched_against_it() {
        let params = vec![Param::new("a", [1, 2])];
        let coords: Vec<Vec<u32>> = vec![vec![0], vec![1]];
        let cands = Candidates { params: &params, coords: &coords };
        let mut b = PriorBuilder::new(&cands).with_sizes(&[("fw".to_string(), Value::Int(15))]);
        let rec = |a: i64, fw: i64| vec![("a".to_string(), Value::Int(a)), ("fw".to_string(), Value::Int(fw))];
        assert!(b.add("kt", &["a".into(), "fw".into()], vec![(rec(1, 15), Ok(2.0)), (rec(2, 15), Ok(1.0)), (rec(2, 7), Ok(9.0))]));
        b.add_compile(vec![(rec(1, 15), 3.0), (rec(2, 7), 100.0)]);
        assert!(!b.add("other", &["a".into(), "c".into()], vec![]), "a parameter that is neither: another space");
        let p = b.build();
        assert_eq!(p.sources[0].times, vec![2.0, 1.0]);
        assert_eq!(p.skipped["of another problem (this tune's fw = 15)"], 1);
        assert_eq!(p.compile_s[0], 3.0);
        assert!(p.compile_s[1].is_nan(), "another problem's compile time is not this one's");
        assert!(p.refused[0].contains("it has `c` this space does not"), "{:?}", p.refused);
    }
}
