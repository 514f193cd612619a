//! The spec file: a TOML description of a tuning job (documented in `docs/spec.md`).
//!
//! Every error names the file and the field, and says what to do.

use crate::spec::error::{quote, SpecError};
use crate::spec::job::{ArgKind, ArgSpec, Compat, Param, Reference, Resources, Tolerance, TuneJob, Verification, VerifySample};
use crate::spec::key::Bucket;
use crate::spec::problem::{Access, DType, Init, Memory};
use crate::spec::settings::{BenchOptions, PruneOptions};
use crate::spec::source::KernelSource;
use crate::spec::value::Value;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSpec {
    kernel: RawKernel,
    #[serde(default)]
    params: toml::Table,
    #[serde(default)]
    space: RawSpace,
    #[serde(default)]
    problems: Vec<toml::Table>,
    #[serde(default)]
    args: Vec<RawArg>,
    launch: RawLaunch,
    #[serde(default)]
    verify: RawVerify,
    #[serde(default)]
    metrics: RawMetrics,
    #[serde(default)]
    key: RawKey,
    #[serde(default)]
    resources: RawResources,
    #[serde(default)]
    tune: RawTune,
    #[serde(default)]
    roles: toml::Table,
    #[serde(default)]
    generate: Option<RawGenerate>,
    #[serde(default)]
    bench: Option<BenchOptions>,
    #[serde(default)]
    prune: Option<PruneOptions>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawKernel {
    name: String,
    #[serde(default)]
    class: Option<String>,
    source: BTreeMap<String, String>,
    #[serde(default)]
    options: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    arch: BTreeMap<String, String>,
    #[serde(default)]
    compat: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSpace {
    #[serde(default)]
    restrictions: Vec<String>,
    #[serde(default)]
    default: Option<toml::Table>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawArg {
    name: String,
    #[serde(rename = "type")]
    dtype: String,
    #[serde(default)]
    len: Option<toml::Value>,
    #[serde(default)]
    value: Option<toml::Value>,
    #[serde(default)]
    init: Option<String>,
    #[serde(default)]
    seed: Option<u64>,
    #[serde(default)]
    fill: Option<f64>,
    #[serde(default)]
    expr: Option<String>,
    #[serde(default)]
    file: Option<String>,
    #[serde(default)]
    access: Option<String>,
    #[serde(default)]
    memory: Option<String>,
    #[serde(default)]
    argument: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLaunch {
    #[serde(default)]
    grid: Option<Vec<toml::Value>>,
    #[serde(default)]
    block: Option<Vec<toml::Value>>,
    #[serde(default)]
    problem_size: Option<Vec<toml::Value>>,
    #[serde(default)]
    grid_div_x: Option<Vec<toml::Value>>,
    #[serde(default)]
    grid_div_y: Option<Vec<toml::Value>>,
    #[serde(default)]
    grid_div_z: Option<Vec<toml::Value>>,
    #[serde(default)]
    shared_mem: Option<toml::Value>,
    #[serde(default)]
    size_defines: bool,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVerify {
    #[serde(default)]
    outputs: Vec<String>,
    #[serde(default)]
    atol: Option<f64>,
    #[serde(default)]
    rtol: Option<f64>,
    #[serde(default)]
    reference: Option<String>,
    /// Expected-output files by buffer name (`reference = "expected"`, or implied).
    #[serde(default)]
    expected: Option<BTreeMap<String, String>>,
    /// Tolerances of single outputs.
    #[serde(default)]
    tolerances: BTreeMap<String, Tolerance>,
    /// `all`, a count, or a percentage (a number below 1 is a share).
    #[serde(default)]
    sample: Option<toml::Value>,
    /// How single outputs are compared: `sum`, `sorted` or `elements`, by buffer name.
    #[serde(default)]
    compare: BTreeMap<String, String>,
    /// Elements of single outputs that may differ: a count or a percentage, by buffer name.
    #[serde(default)]
    mismatches: BTreeMap<String, toml::Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMetrics {
    #[serde(default)]
    flops: Option<toml::Value>,
    #[serde(default)]
    bytes: Option<toml::Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawKey {
    #[serde(default)]
    fields: Vec<String>,
    #[serde(default)]
    bucket: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawResources {
    #[serde(default)]
    shared_mem: Option<toml::Value>,
    #[serde(default)]
    registers: Option<toml::Value>,
    #[serde(default)]
    tile: Option<Vec<toml::Value>>,
    #[serde(default)]
    dims: Option<Vec<toml::Value>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGenerate {
    shape: Vec<toml::Value>,
    #[serde(default)]
    dtype: Option<String>,
    #[serde(default)]
    top_k: Option<usize>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTune {
    #[serde(default)]
    strategy: Option<String>,
    #[serde(default)]
    budget: Option<toml::Value>,
    #[serde(default)]
    seed: Option<u64>,
    #[serde(default)]
    model: Option<bool>,
    #[serde(default)]
    top_k: Option<usize>,
    /// `"all"` or a list of device indices.
    #[serde(default)]
    devices: Option<toml::Value>,
    /// A factor over the median compile, or `"off"`.
    #[serde(default)]
    compile_tail: Option<toml::Value>,
    /// Seconds (`120`, `"120s"`, `"2m"`) or `"off"`.
    #[serde(default)]
    compile_timeout: Option<toml::Value>,
}

/// A parsed spec file.
#[derive(Debug, Clone)]
pub struct Spec {
    /// The file.
    pub path: PathBuf,
    /// Kernel entry point.
    pub kernel: String,
    /// Kernel class, if declared (for generated configs).
    pub class: Option<String>,
    /// Source file per language (`wgsl`, `cuda`, `hip`), resolved against the spec's folder.
    pub sources: BTreeMap<String, PathBuf>,
    /// Extra compiler options per language.
    pub options: BTreeMap<String, Vec<String>>,
    /// Architecture override per language (e.g. `cuda = "sm_90a"`).
    pub arch: BTreeMap<String, String>,
    /// The job template (source and sizes are filled by [`Spec::job`]).
    template: TuneJob,
    /// Problem instances (sizes); at least one.
    pub problems: Vec<Vec<(String, Value)>>,
    /// `[bench]`, if given.
    pub bench: Option<BenchOptions>,
    /// `[prune]`, if given.
    pub prune: Option<PruneOptions>,
    /// `[tune] strategy`.
    pub strategy: Option<String>,
    /// `[tune] budget`, as text (`200`, `30s`).
    pub budget: Option<String>,
    /// `[tune] seed`.
    pub seed: Option<u64>,
    /// `[tune] model`.
    pub model: Option<bool>,
    /// `[tune] top_k`.
    pub top_k: Option<usize>,
    /// Devices to tune on (`[tune] devices`): `all`, or indices joined by commas.
    pub devices: Option<String>,
    /// `[tune] compile_tail`, when given: the factor over the median compile past which the
    /// end of a search stops waiting for a compile, or `None` for `"off"`.
    pub compile_tail: Option<Option<f64>>,
    /// `[tune] compile_timeout`, when given: how long a compile may run before the tune gives
    /// up on its config, or `None` for `"off"`.
    pub compile_timeout: Option<Option<std::time::Duration>>,
    /// The CPU reference name, if `verify.reference = "cpu:NAME"`.
    pub cpu_reference: Option<String>,
    /// What the file holds that was accepted but not used as written (T1 files: see
    /// [`crate::spec::t1::T1::warnings`]); tools print these.
    pub warnings: Vec<String>,
}

/// The largest spec file read.
pub const MAX_SPEC_BYTES: u64 = 16 << 20;

/// How a spec is read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoadOptions {
    /// Allow kernel sources outside the spec's folder (for T1 files: outside its folder and
    /// that folder's parent, where Kernel Tuner looks).
    pub allow_outside_sources: bool,
}

/// Checks that `path` lies inside one of `roots` (after resolving `..` and symbolic links), so
/// that a spec cannot make kerntune read an arbitrary file; the error says how to allow it.
pub fn confine(path: &Path, roots: &[&Path]) -> Result<(), String> {
    let resolve = |p: &Path| p.canonicalize().ok().or_else(|| lexical(p));
    let Some(target) = resolve(path) else { return Ok(()) };
    if roots.iter().filter_map(|r| resolve(r)).any(|r| target.starts_with(&r)) {
        return Ok(());
    }
    Err(format!(
        "{} is outside {}; kerntune reads the files a spec names (sources, data) only there unless you pass --allow-outside-sources",
        path.display(),
        roots.iter().map(|r| r.display().to_string()).collect::<Vec<_>>().join(" and ")
    ))
}

/// `path` made absolute with `.` and `..` resolved textually (for a file that does not exist yet).
fn lexical(path: &Path) -> Option<PathBuf> {
    let abs = if path.is_absolute() { path.to_path_buf() } else { std::env::current_dir().ok()?.join(path) };
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    Some(out)
}

/// A `[tune]` setting given as a number or a string (`compile_tail = 3`, `compile_timeout =
/// "2m"`), read by `parse` from its text; `what` it should be, for a value of another type.
fn setting<T>(v: Option<&toml::Value>, what: &str, parse: fn(&str) -> Result<T, String>) -> Result<Option<T>, String> {
    let text = match v {
        None => return Ok(None),
        Some(toml::Value::Integer(i)) => i.to_string(),
        Some(toml::Value::Float(f)) => f.to_string(),
        Some(toml::Value::String(t)) => t.clone(),
        Some(other) => return Err(format!("{other} is not {what} or \"off\"")),
    };
    parse(&text).map(Some)
}

fn expr_text(v: &toml::Value) -> Option<String> {
    match v {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::Float(f) => Some(f.to_string()),
        _ => None,
    }
}

impl Spec {
    /// Reads a spec file, kerntune TOML or a T1 JSON problem description, and checks every
    /// field it can without compiling expressions; [`crate::plan::prepare::load`] also
    /// compiles them, and is what tools should call.
    pub fn load(path: &Path) -> Result<Spec, SpecError> {
        Spec::load_with(path, LoadOptions::default())
    }

    /// [`Spec::load`] with options.
    pub fn load_with(path: &Path, opts: LoadOptions) -> Result<Spec, SpecError> {
        let spec = Spec::load_unchecked(path, opts)?;
        spec.check_languages()?;
        Ok(spec)
    }

    /// A CUDA or HIP source that includes the other language's headers is an error naming the
    /// header and the file beside it in the right language (see
    /// [`crate::spec::source::check_language`]). Unreadable sources are reported when tuning.
    fn check_languages(&self) -> Result<(), SpecError> {
        for (language, path) in &self.sources {
            let Ok(code) = std::fs::read_to_string(path) else { continue };
            crate::spec::source::check_language(language, path, &code).map_err(|message| SpecError {
                file: self.path.display().to_string(),
                field: if self.path.extension().is_some_and(|e| e == "json") {
                    "KernelSpecification.KernelFile".into()
                } else {
                    format!("kernel.source.{language}")
                },
                message,
            })?;
        }
        Ok(())
    }

    fn load_unchecked(path: &Path, opts: LoadOptions) -> Result<Spec, SpecError> {
        if path.extension().is_some_and(|e| e == "json") {
            return Spec::from_t1(path, opts);
        }
        let file = path.display().to_string();
        let err = |message: String| SpecError { file: file.clone(), field: crate::spec::error::WHOLE_FILE.into(), message };
        let len = std::fs::metadata(path).map_err(|e| err(format!("cannot read the spec: {e}")))?.len();
        if len > MAX_SPEC_BYTES {
            return Err(err(format!("is {len} bytes; a spec is at most {MAX_SPEC_BYTES} bytes")));
        }
        let text = crate::spec::source::read_text(path).map_err(|e| err(format!("cannot read the spec: {e}")))?;
        Spec::parse_with(&text, path, opts)
    }

    /// Parses spec text; `path` locates relative source files and names the file in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Spec, SpecError> {
        Spec::parse_with(text, path, LoadOptions::default())
    }

    /// [`Spec::parse`] with options.
    pub fn parse_with(text: &str, path: &Path, opts: LoadOptions) -> Result<Spec, SpecError> {
        let file = path.display().to_string();
        let err = |field: &str, message: String| SpecError { file: file.clone(), field: field.into(), message };
        // The field a schema error is in (`bench.max_reps`, `args[0].seed`), with its line.
        let raw: RawSpec = serde_path_to_error::deserialize(toml::Deserializer::new(text)).map_err(|e| {
            let path = e.path().to_string();
            let e = e.into_inner();
            let line = e.span().map(|span| format!("line {}", text[..span.start.min(text.len())].matches('\n').count() + 1));
            let field = match (path.as_str(), line) {
                ("" | ".", Some(line)) => line,
                ("" | ".", None) => "(toml)".into(),
                (path, Some(line)) => format!("{path} ({line})"),
                (path, None) => path.to_string(),
            };
            let message = match unknown_field_hint(e.message()) {
                Some(near) => format!("{}; did you mean `{near}`? (the schema: docs/spec.md)", e.message()),
                None => format!("{}; see docs/spec.md for the schema", e.message()),
            };
            err(&field, message)
        })?;
        KernelSource::check_name(&raw.kernel.name).map_err(|m| err("kernel.name", m))?;
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let sources: BTreeMap<String, PathBuf> = raw.kernel.source.iter().map(|(k, v)| (k.clone(), dir.join(v))).collect();
        let known = |table: &str, lang: &str| {
            if ["wgsl", "cuda", "hip"].contains(&lang) {
                Ok(())
            } else {
                Err(err(&format!("kernel.{table}.{lang}"), "unknown language; use wgsl, cuda or hip".into()))
            }
        };
        for (lang, src) in &sources {
            known("source", lang)?;
            if !opts.allow_outside_sources {
                confine(src, &[dir]).map_err(|m| err(&format!("kernel.source.{lang}"), m))?;
            }
        }
        for (lang, opts) in &raw.kernel.options {
            known("options", lang)?;
            crate::spec::source::check_options(lang, opts).map_err(|m| err(&format!("kernel.options.{lang}"), m))?;
        }
        let compat = match raw.kernel.compat.as_deref() {
            None | Some("kerntune") => Compat::Kerntune,
            Some("kernel_tuner") => Compat::KernelTuner,
            Some(other) => return Err(err("kernel.compat", format!("`{}` is not kerntune or kernel_tuner", quote(other)))),
        };
        if sources.is_empty() {
            return Err(err("kernel.source", "no kernel source; add e.g. `wgsl = \"kernel.wgsl\"`".into()));
        }
        // Parameters, in declaration order.
        let mut params = Vec::new();
        let mut declared_defaults: Vec<(String, Value)> = Vec::new();
        for (name, v) in &raw.params {
            let field = format!("params.{name}");
            let (list, def) = match v {
                toml::Value::Array(a) => (a.clone(), None),
                toml::Value::Table(t) => {
                    let vals =
                        t.get("values").and_then(|v| v.as_array()).cloned().ok_or_else(|| err(&field, "a table parameter needs `values = [...]`".into()))?;
                    for k in t.keys() {
                        if k != "values" && k != "default" {
                            return Err(err(&format!("{field}.{k}"), "unknown key; use `values` and `default`".into()));
                        }
                    }
                    (vals, t.get("default").cloned())
                }
                // A list written as one string (`"1,2"`, `"[1, 2, 4]"`) is a single string value,
                // which no arithmetic on it could use: said here, not at its first restriction.
                toml::Value::String(text) if number_list(text).is_some_and(|l| l.len() > 1) => {
                    let list = number_list(text).unwrap_or_default().join(", ");
                    return Err(err(&field, format!("`{v}` is one value, a string; for a list of values write `{name} = [{list}]`")));
                }
                other => (vec![other.clone()], None),
            };
            let values: Vec<Value> = list
                .iter()
                .map(|x| Value::from_toml(x).ok_or_else(|| err(&field, format!("`{x}` is not an integer, float, boolean or string"))))
                .collect::<Result<_, _>>()?;
            if values.is_empty() {
                return Err(err(&field, "no values; give at least one".into()));
            }
            // `nan` or `inf` would reach the kernel as a define no compiler reads as a number.
            if let Some(v) = values.iter().find(|v| matches!(v, Value::Float(f) if !f.is_finite())) {
                return Err(err(&field, format!("{v} is not a value a kernel can take; give finite numbers")));
            }
            // A value listed twice is most likely a typo for another (`[1, 1, 4, 8]`), and
            // would make every config with it twice.
            let mut seen = std::collections::HashSet::with_capacity(values.len());
            if let Some(v) = values.iter().find(|v| !seen.insert(*v)) {
                return Err(err(&field, format!("{v} is listed twice; list each value once")));
            }
            if let Some(d) = def {
                let d = Value::from_toml(&d).ok_or_else(|| err(&format!("{field}.default"), "not a scalar".into()))?;
                declared_defaults.push((name.clone(), d));
            }
            params.push(Param { name: name.clone(), values });
        }
        if let Some(d) = &raw.space.default {
            for (k, v) in d {
                let v = Value::from_toml(v).ok_or_else(|| err(&format!("space.default.{k}"), "not a scalar".into()))?;
                declared_defaults.retain(|(n, _)| n != k);
                declared_defaults.push((k.clone(), v));
            }
        }
        // Problems.
        let mut problems = Vec::new();
        for (i, t) in raw.problems.iter().enumerate() {
            let mut sizes = Vec::new();
            for (k, v) in t {
                let v = Value::from_toml(v).ok_or_else(|| err(&format!("problems[{i}].{k}"), "not a scalar".into()))?;
                sizes.push((k.clone(), v));
            }
            problems.push(sizes);
        }
        if problems.is_empty() {
            problems.push(Vec::new());
        }
        // Arguments.
        let mut args = Vec::new();
        for (i, a) in raw.args.iter().enumerate() {
            let field = format!("args[{i}] ({})", a.name);
            let dtype =
                DType::parse(&a.dtype).ok_or_else(|| err(&format!("{field}.type"), format!("unknown type `{}`; use one of {}", a.dtype, DType::names())))?;
            let kind = match (&a.len, &a.value) {
                (Some(len), None) => {
                    let len = expr_text(len).ok_or_else(|| err(&format!("{field}.len"), "must be a number or an expression string".into()))?;
                    let init = match a.init.as_deref().unwrap_or("zeros") {
                        "zeros" => Init::Zeros,
                        "random" => Init::Random { seed: a.seed.unwrap_or(i as u64 + 1) },
                        "sequence" => Init::Sequence,
                        "constant" => {
                            Init::Constant { value: a.fill.ok_or_else(|| err(&format!("{field}.fill"), "init = \"constant\" needs `fill = <number>`".into()))? }
                        }
                        "expr" => {
                            let e = a
                                .expr
                                .as_deref()
                                .ok_or_else(|| err(&format!("{field}.expr"), "init = \"expr\" needs `expr = \"...\"`, an expression of the index i".into()))?;
                            crate::spec::expr::Expr::compile(e, &["i"]).map_err(|m| err(&format!("{field}.expr"), m.to_string()))?;
                            Init::Generator { expr: e.to_string() }
                        }
                        "file" => {
                            let f = a.file.as_deref().ok_or_else(|| {
                                err(&format!("{field}.file"), "init = \"file\" needs `file = \"x.npy\"`, a NumPy array or raw little-endian elements".into())
                            })?;
                            let path = dir.join(f);
                            if !opts.allow_outside_sources {
                                confine(&path, &[dir]).map_err(|m| err(&format!("{field}.file"), m))?;
                            }
                            // Read now, so that a missing file is reported before any device work
                            // (its length and type are checked against each problem's when its
                            // data are made).
                            std::fs::metadata(&path).map_err(|e| err(&format!("{field}.file"), format!("cannot read {}: {e}", path.display())))?;
                            Init::File { path }
                        }
                        other => {
                            return Err(err(
                                &format!("{field}.init"),
                                format!("unknown init `{}`; use random, zeros, sequence, constant, expr or file", quote(other)),
                            ))
                        }
                    };
                    if a.file.is_some() && !matches!(init, Init::File { .. }) {
                        return Err(err(&format!("{field}.file"), "`file` needs init = \"file\"".into()));
                    }
                    let access = match a.access.as_deref().unwrap_or("read") {
                        "read" => Access::Read,
                        "write" => Access::Write,
                        "readwrite" | "read_write" => Access::ReadWrite,
                        other => return Err(err(&format!("{field}.access"), format!("unknown access `{other}`; use read, write or readwrite"))),
                    };
                    let memory = match (a.memory.as_deref().unwrap_or("global"), a.argument) {
                        ("global", None) => Memory::Global,
                        ("global", Some(_)) => return Err(err(&format!("{field}.argument"), "only a `memory = \"constant\"` buffer takes `argument`".into())),
                        ("constant", argument) => Memory::Constant { argument: argument.unwrap_or(false) },
                        (other, _) => {
                            return Err(err(
                                &format!("{field}.memory"),
                                format!("unknown memory `{}`; use global or constant", crate::spec::error::quote(other)),
                            ))
                        }
                    };
                    ArgKind::Buffer { dtype, len, init, access, memory }
                }
                (None, Some(v)) => ArgKind::Scalar {
                    dtype,
                    value: expr_text(v).ok_or_else(|| err(&format!("{field}.value"), "must be a number or an expression string".into()))?,
                },
                _ => return Err(err(&field, "give `len` for a buffer or `value` for a scalar (exactly one)".into())),
            };
            args.push(ArgSpec { name: a.name.clone(), kind });
        }
        let dims = |field: &str, v: &[toml::Value]| -> Result<[String; 3], SpecError> {
            if v.is_empty() || v.len() > 3 {
                return Err(err(field, "give 1 to 3 expressions (x, y, z)".into()));
            }
            let mut out = ["1".to_string(), "1".to_string(), "1".to_string()];
            for (i, x) in v.iter().enumerate() {
                out[i] = expr_text(x).ok_or_else(|| err(&format!("{field}[{i}]"), "must be a number or an expression string".into()))?;
            }
            Ok(out)
        };
        let param_names: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
        let (grid, block, extent) = match (&raw.launch.grid, &raw.launch.problem_size) {
            (Some(g), None) => {
                let block = raw.launch.block.as_ref().ok_or_else(|| err("launch.block", "missing: give 1 to 3 expressions (x, y, z)".into()))?;
                (dims("launch.grid", g)?, dims("launch.block", block)?, None)
            }
            (None, Some(ps)) => {
                // Kernel Tuner's rule: grid = ceil(problem_size / product(grid_div_*)).
                let sizes: Vec<String> = dims("launch.problem_size", ps)?.into_iter().take(ps.len()).collect();
                let mut divisors: [Option<Vec<String>>; 3] = [None, None, None];
                for (d, (key, list)) in [("grid_div_x", &raw.launch.grid_div_x), ("grid_div_y", &raw.launch.grid_div_y), ("grid_div_z", &raw.launch.grid_div_z)]
                    .into_iter()
                    .enumerate()
                {
                    divisors[d] = list
                        .as_ref()
                        .map(|l| {
                            l.iter()
                                .map(|x| expr_text(x).ok_or_else(|| err(&format!("launch.{key}"), "expressions expected".into())))
                                .collect::<Result<Vec<_>, _>>()
                        })
                        .transpose()?;
                }
                let (grid, extent) = crate::spec::geometry::grid_and_extent(&sizes, &divisors, &param_names).map_err(|m| err("launch.problem_size", m))?;
                let block = match &raw.launch.block {
                    Some(b) => dims("launch.block", b)?,
                    None => crate::spec::geometry::block(&param_names),
                };
                (grid, block, Some(extent))
            }
            (Some(_), Some(_)) => return Err(err("launch.problem_size", "give either `grid` or `problem_size` (with `grid_div_x/y/z`), not both".into())),
            (None, None) => return Err(err("launch.grid", "missing: give `grid` (1 to 3 expressions) or `problem_size` with `grid_div_x/y/z`".into())),
        };
        if raw.launch.grid.is_some() && (raw.launch.grid_div_x.is_some() || raw.launch.grid_div_y.is_some() || raw.launch.grid_div_z.is_some()) {
            return Err(err("launch.grid_div_x", "grid divisors go with `problem_size`, not with `grid`".into()));
        }
        let opt_expr = |field: &str, v: &Option<toml::Value>| -> Result<Option<String>, SpecError> {
            v.as_ref().map(|v| expr_text(v).ok_or_else(|| err(field, "must be a number or an expression string".into()))).transpose()
        };
        let two = |field: &str, v: &Option<Vec<toml::Value>>| -> Result<Option<[String; 2]>, SpecError> {
            match v {
                None => Ok(None),
                Some(v) if v.len() == 2 => Ok(Some([
                    expr_text(&v[0]).ok_or_else(|| err(field, "expressions expected".into()))?,
                    expr_text(&v[1]).ok_or_else(|| err(field, "expressions expected".into()))?,
                ])),
                Some(_) => Err(err(field, "give two expressions (m, n)".into())),
            }
        };
        let reference = match (raw.verify.reference.as_deref(), &raw.verify.expected) {
            (Some("expected") | None, Some(files)) if !files.is_empty() => {
                Reference::Expected(files.iter().map(|(n, f)| (n.clone(), Init::File { path: dir.join(f) })).collect())
            }
            (Some("expected"), _) => {
                return Err(err("verify.expected", "`reference = \"expected\"` needs a table of files, e.g. expected = { y = \"y.npy\" }".into()))
            }
            (Some(r), Some(files)) if !files.is_empty() => {
                return Err(err("verify.expected", format!("expected-output files are given, but verify.reference is `{}`; drop one of the two", quote(r))))
            }
            (r, _) => Reference::parse(r.unwrap_or("default"), dir).map_err(|m| err("verify.reference", m))?,
        };
        let cpu_reference = match &reference {
            Reference::Host(name, _) => Some(name.clone()),
            Reference::Expected(files) if !opts.allow_outside_sources => {
                for (name, init) in files {
                    if let Init::File { path } = init {
                        confine(path, &[dir]).map_err(|m| err(&format!("verify.expected.{name}"), m))?;
                    }
                }
                None
            }
            _ => None,
        };
        let tol = Tolerance { atol: raw.verify.atol.unwrap_or(Tolerance::default().atol), rtol: raw.verify.rtol.unwrap_or(Tolerance::default().rtol) };
        crate::spec::job::check_tolerance(&tol).map_err(|m| err("verify", m))?;
        let mut per_output = Vec::new();
        for (name, t) in &raw.verify.tolerances {
            crate::spec::job::check_tolerance(t).map_err(|m| err(&format!("verify.tolerances.{name}"), m))?;
            per_output.push((name.clone(), *t));
        }
        let mut compare = Vec::new();
        for (name, how) in &raw.verify.compare {
            if let Some(c) = crate::spec::job::Compare::parse(how).map_err(|m| err(&format!("verify.compare.{name}"), m))? {
                compare.push((name.clone(), c));
            }
        }
        let sample = match &raw.verify.sample {
            None => VerifySample::All,
            Some(toml::Value::Float(f)) if *f > 0.0 && *f < 1.0 => VerifySample::Fraction(*f),
            Some(toml::Value::Float(f)) => {
                return Err(err("verify.sample", format!("{f} is not a share between 0 and 1; give a count (20) or a percentage (\"10%\")")))
            }
            Some(toml::Value::Integer(n)) => VerifySample::parse(&n.to_string()).map_err(|m| err("verify.sample", m))?,
            Some(toml::Value::String(t)) => VerifySample::parse(t).map_err(|m| err("verify.sample", m))?,
            Some(other) => return Err(err("verify.sample", format!("{other} is not `all`, a count or a percentage"))),
        };
        let bucket = match raw.key.bucket.as_deref().unwrap_or("exact") {
            "exact" => Bucket::Exact,
            "pow2" => Bucket::Pow2,
            other => return Err(err("key.bucket", format!("unknown bucket `{other}`; use exact or pow2"))),
        };
        let budget = match &raw.tune.budget {
            None => None,
            Some(toml::Value::Integer(i)) => Some(i.to_string()),
            Some(toml::Value::String(s)) => Some(s.clone()),
            Some(_) => return Err(err("tune.budget", "use a count (200) or a duration string (\"30s\")".into())),
        };
        let parsed = match &budget {
            Some(b) => crate::spec::settings::Budget::parse(b).map_err(|m| err("tune.budget", m))?,
            None => Default::default(),
        };
        if let Some(s) = &raw.tune.strategy {
            crate::spec::settings::strategy_named(s).map_err(|m| err("tune.strategy", m))?;
            crate::spec::settings::check_strategy(s, &parsed).map_err(|m| err("tune.budget", m))?;
        }
        let generate = if raw.roles.is_empty() {
            None
        } else {
            if !params.is_empty() {
                return Err(err("roles", "give either [params] (listed values) or [roles] (generated configs), not both".into()));
            }
            let class_name = raw
                .kernel
                .class
                .as_deref()
                .ok_or_else(|| err("kernel.class", "[roles] needs a kernel class (elementwise, reduction, matmul, attention)".into()))?;
            let class = crate::spec::job::Class::parse(class_name)
                .ok_or_else(|| err("kernel.class", format!("`{class_name}` is not elementwise, reduction, matmul or attention")))?;
            let mut roles = Vec::new();
            for (k, v) in &raw.roles {
                roles.push((k.clone(), expr_text(v).ok_or_else(|| err(&format!("roles.{k}"), "must be an expression string".into()))?));
            }
            let g = raw.generate.as_ref().ok_or_else(|| err("generate", "[roles] needs [generate] with `shape = [\"M\", \"N\", \"K\"]`".into()))?;
            let mut shape = ["1".to_string(), "1".to_string(), "1".to_string()];
            for (i, x) in g.shape.iter().enumerate().take(3) {
                shape[i] = expr_text(x).ok_or_else(|| err(&format!("generate.shape[{i}]"), "must be a number or an expression string".into()))?;
            }
            let elem_bytes = match g.dtype.as_deref().unwrap_or("f32") {
                "f32" | "float" => 4,
                "f16" | "bf16" | "half" => 2,
                "f64" | "double" => 8,
                other => return Err(err("generate.dtype", format!("`{other}` is not f32, f16, bf16 or f64"))),
            };
            Some(crate::spec::job::GenerateSpec { class, roles, shape, elem_bytes, top_k: g.top_k })
        };
        let mut template = TuneJob::new(KernelSource::new(&raw.kernel.name, "", ""), params);
        template.generate = generate;
        template.restrictions = raw.space.restrictions.clone();
        template.default = if declared_defaults.is_empty() { None } else { Some(declared_defaults) };
        template.args = args;
        template.grid = grid;
        template.extent = extent;
        template.block = block;
        template.compat = compat;
        template.shared_mem = opt_expr("launch.shared_mem", &raw.launch.shared_mem)?;
        template.size_defines = raw.launch.size_defines;
        let mut mismatches = Vec::new();
        for (name, v) in &raw.verify.mismatches {
            let text = match v {
                toml::Value::Integer(n) if *n >= 0 => n.to_string(),
                toml::Value::String(t) => t.clone(),
                other => other.to_string(),
            };
            let a = crate::spec::job::Allowance::parse(&text).map_err(|m| err(&format!("verify.mismatches.{name}"), m))?;
            // None allowed is the default, not an allowance.
            if a.allows_any() {
                mismatches.push((name.clone(), a));
            }
        }
        template.verify = Verification { outputs: raw.verify.outputs.clone(), tolerance: tol, per_output, compare, mismatches, reference, sample };
        if raw.verify.rtol.is_none() {
            template.verify.default_half_precision(&template.args);
        }
        template.resources = Resources {
            shared_mem: opt_expr("resources.shared_mem", &raw.resources.shared_mem)?,
            registers: opt_expr("resources.registers", &raw.resources.registers)?,
            tile: two("resources.tile", &raw.resources.tile)?,
            dims: two("resources.dims", &raw.resources.dims)?,
        };
        template.flops = opt_expr("metrics.flops", &raw.metrics.flops)?;
        template.bytes = opt_expr("metrics.bytes", &raw.metrics.bytes)?;
        template.key = raw.key.fields.clone();
        template.bucket = bucket;
        template.origin = file.clone();
        if let Some(b) = &raw.bench {
            b.check().map_err(|(f, m)| err(&format!("bench.{f}"), m))?;
        }
        if let Some(p) = &raw.prune {
            p.check().map_err(|(f, m)| err(&format!("prune.{f}"), m))?;
        }
        let spec = Spec {
            path: path.to_path_buf(),
            kernel: raw.kernel.name.clone(),
            class: raw.kernel.class.clone(),
            sources,
            options: raw.kernel.options.clone(),
            arch: raw.kernel.arch.clone(),
            template,
            problems,
            bench: raw.bench,
            prune: raw.prune,
            strategy: raw.tune.strategy,
            budget,
            seed: raw.tune.seed,
            model: raw.tune.model,
            top_k: raw.tune.top_k,
            devices: match &raw.tune.devices {
                None => None,
                Some(toml::Value::String(t)) if t == "all" => Some("all".into()),
                Some(toml::Value::Array(a)) if !a.is_empty() && a.iter().all(|v| v.as_integer().is_some_and(|i| i >= 0)) => {
                    Some(a.iter().map(|v| v.as_integer().unwrap_or(0).to_string()).collect::<Vec<_>>().join(","))
                }
                Some(other) => return Err(err("tune.devices", format!("{other} is not \"all\" or a list of device indices such as [0, 2, 3]"))),
            },
            compile_tail: setting(raw.tune.compile_tail.as_ref(), "a factor over the median compile (such as 3)", crate::spec::settings::parse_compile_tail)
                .map_err(|m| err("tune.compile_tail", m))?,
            compile_timeout: setting(
                raw.tune.compile_timeout.as_ref(),
                "a duration (such as 120, \"120s\" or \"2m\")",
                crate::spec::settings::parse_compile_timeout,
            )
            .map_err(|m| err("tune.compile_timeout", m))?,
            cpu_reference,
            warnings: Vec::new(),
        };
        Ok(spec)
    }

    /// Reads a T1 file (see [`crate::spec::t1`]).
    pub fn from_t1(path: &Path, opts: LoadOptions) -> Result<Spec, SpecError> {
        let t1_opts = crate::spec::t1::T1Options { allow_outside_sources: opts.allow_outside_sources };
        let crate::spec::t1::T1 { job: template, language, kernel_file, budget, strategy, warnings } = crate::spec::t1::load_with(path, t1_opts)?;
        let mut sources = BTreeMap::new();
        sources.insert(language.clone(), kernel_file);
        let mut options = BTreeMap::new();
        options.insert(language, template.source.options.clone());
        Ok(Spec {
            path: path.to_path_buf(),
            kernel: template.source.name.clone(),
            class: None,
            sources,
            options,
            arch: BTreeMap::new(),
            template,
            problems: vec![vec![]],
            bench: None,
            prune: None,
            strategy,
            budget,
            seed: None,
            model: None,
            top_k: None,
            devices: None,
            compile_tail: None,
            compile_timeout: None,
            cpu_reference: None,
            warnings,
        })
    }

    /// Whether a vendor generator makes the configs (`[roles]`): their values are known only on
    /// a device.
    pub fn generated(&self) -> bool {
        self.template.generate.is_some()
    }

    /// The verification every problem's job gets.
    pub fn verification(&self) -> &crate::spec::job::Verification {
        &self.template.verify
    }

    /// The verification every problem's job gets, for the command line's flags to override.
    pub fn verification_mut(&mut self) -> &mut crate::spec::job::Verification {
        &mut self.template.verify
    }

    /// One job per problem, source text left empty and generated parameters given a placeholder
    /// value, with the field suffix that names the problem: what [`crate::plan::prepare::check`]
    /// compiles to report a bad expression before any device work.
    pub fn validation_jobs(&self) -> Vec<(String, TuneJob)> {
        (0..self.problems.len())
            .map(|i| {
                let mut job = self.template.clone();
                job.sizes = self.problems[i].clone();
                if let Some(g) = &job.generate {
                    // Generated values are known only on a device; validate with placeholders.
                    job.params = g.roles.iter().map(|(p, _)| Param::new(p.clone(), [1i64])).collect();
                    job.generate = None;
                }
                let suffix = if self.problems.len() > 1 { format!(" (problems[{i}])") } else { String::new() };
                (suffix, job)
            })
            .collect()
    }

    /// The tuning job for problem `index` in `language` (`wgsl`, `cuda`, `hip`), reading the
    /// kernel source file.
    pub fn job(&self, language: &str, index: usize) -> Result<TuneJob, SpecError> {
        let file = self.path.display().to_string();
        let field = format!("kernel.source.{language}");
        let path = self.sources.get(language).ok_or_else(|| SpecError {
            file: file.clone(),
            field: field.clone(),
            message: format!(
                "this spec has no {language} source (it has: {}); add `{language} = \"kernel file\"` under [kernel.source] or pick another backend",
                self.sources.keys().cloned().collect::<Vec<_>>().join(", ")
            ),
        })?;
        let code = crate::spec::source::read_text(path).map_err(|e| SpecError {
            file: file.clone(),
            field: field.clone(),
            message: format!("cannot read kernel file {}: {e}", path.display()),
        })?;
        // A byte-order mark (Windows editors write one) is no source: naga stopped at it
        // (`expected global item … found "\u{feff}"`).
        let code = match code.strip_prefix('\u{feff}') {
            Some(rest) => rest.to_string(),
            None => code,
        };
        // An empty file (a save that failed, a placeholder) failed every config's compile, one
        // by one, with the compiler's words for a missing entry point.
        if code.trim().is_empty() {
            return Err(SpecError {
                file,
                field,
                message: format!("kernel file {} is empty; it should hold the kernel `{}`", path.display(), self.template.source.name),
            });
        }
        if language == "wgsl" {
            if let Some((i, a)) = self.template.args.iter().enumerate().find(|(_, a)| matches!(a.kind, ArgKind::Buffer { memory: Memory::Constant { .. }, .. }))
            {
                return Err(SpecError {
                    file,
                    field: format!("args[{i}] ({}).memory", a.name),
                    message: "constant memory is not supported on wgpu (WGSL has no __constant__ symbols); use a read-only storage buffer, or tune with --backend cuda or hip".into(),
                });
            }
        }
        let options = self.options.get(language).cloned().unwrap_or_default();
        let headers = if language == "wgsl" {
            Vec::new()
        } else {
            let dir = |p: &Path| p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf();
            crate::spec::source::local_headers(&code, &dir(path), &dir(&self.path), &options).map_err(|m| SpecError {
                file: file.clone(),
                field: field.clone(),
                message: format!("{}: {m}", path.display()),
            })?
        };
        let mut job = self.template.clone();
        job.source = KernelSource {
            name: self.kernel.clone(),
            language: language.into(),
            code,
            path: Some(path.display().to_string()),
            options,
            arch: self.arch.get(language).cloned(),
            headers,
        };
        job.sizes = self.problems.get(index).cloned().unwrap_or_default();
        Ok(job)
    }
}

/// The numbers of a list written as one string (`"1,2"`, `"[1, 2, 4]"`, `"1 2 4"`), where each
/// item is a number.
fn number_list(text: &str) -> Option<Vec<&str>> {
    let inner = text.trim().trim_start_matches(['[', '(']).trim_end_matches([']', ')']);
    let items: Vec<&str> = inner.split([',', ' ', ';']).map(str::trim).filter(|x| !x.is_empty()).collect();
    items.iter().all(|x| x.parse::<f64>().is_ok()).then_some(items)
}

/// For serde's "unknown field `max_rep`, expected one of `warmup_min`, … `max_reps`, …": the
/// expected name nearest the unknown one (`max_reps`), where one is near enough to be what was
/// misspelt.
fn unknown_field_hint(message: &str) -> Option<&str> {
    let rest = message.strip_prefix("unknown field `")?;
    let mut names = rest.split('`').step_by(2);
    let unknown = names.next()?;
    crate::hint::nearest(unknown, names, 3)
}
