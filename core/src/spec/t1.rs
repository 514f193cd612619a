//! T1 input files — the community's JSON problem descriptions (parameters, conditions, kernel
//! file, launch geometry, arguments with fill types) — read as kerntune jobs, the way Kernel
//! Tuner's `tune_kernel_T1` reads them, so that a published file tunes unchanged.
//!
//! Mapping:
//! - `ConfigurationSpace.TuningParameters[]`: `Values` is any Python list expression
//!   (`"[1, 2, 4] + list(range(32, 1024+1, 32))"`, `"[2**i for i in range(6)]"`), evaluated
//!   safely by [`crate::spec::pyvalues`], or a JSON list; `Default` is a value or a one-element
//!   list (a default that is not among the values is reported and not used);
//! - `Conditions[].Expression` (strings) → restrictions;
//! - launch geometry: with `ProblemSize`, Kernel Tuner's rule ([`crate::spec::geometry`]:
//!   grid = ceil(ProblemSize / product(GridDivX/Y/Z)), `GlobalSize` unused); without it,
//!   `GlobalSize` (counting threads with `GlobalSizeType: OpenCL`, else blocks). `LocalSize`
//!   gives the block (Kernel Tuner's default names where it is absent);
//! - `KernelName` (+ `KernelTypeNames`: template arguments); `KernelFile` relative to the T1
//!   file's folder, else its parent (Kernel Tuner's lookup); `CompilerOptions`;
//! - `Arguments[]` in order: `Vector` buffers of `Size` elements (a number, or a Python
//!   expression over `ProblemSize` and the parameters, each bound to its list of values as in
//!   Kernel Tuner: `max(filter_width)`), filled `Constant`, `Random` or `Generator`
//!   (`DataSource`, an expression of `i`) or `BinaryRaw` (`DataSource`, a file of raw elements or
//!   a `.npy` array beside the T1 file); `MemType: Constant` also fills the module's
//!   `__constant__` symbol of that name; `Output: 1` marks the buffers to verify; `Scalar`
//!   arguments take their `FillValue`;
//! - `Budget` (`ConfigurationCount`, `TuningDuration`, `ConfigurationFraction`; all of a list
//!   apply) → the budget; `Search.Name` → the strategy (`hybrid` when only a budget is given).
//!
//! Kernels compile with Kernel Tuner's defines (`grid_size_x`, `block_size_x`, `kernel_tuner`,
//! `loop_unroll_factor*`; see [`Compat::KernelTuner`]). Outputs are verified against
//! `ReferenceArguments` where the file has them (the expected contents of the `TargetName`
//! argument, filled like an argument: Constant, Random, Generator or BinaryRaw), else against
//! the default config (or, when the default breaks the restrictions, the first valid config
//! that runs). Absent `Device`, `Search`, `Budget`,
//! `SharedMemory`, `Stream` and `CompilerOptions` are fine; `Device`, `General`,
//! `BenchmarkConfig` and `Misc` are not used.

use crate::spec::error::{quote, SpecError};
use crate::spec::geometry;
use crate::spec::job::{ArgKind, ArgSpec, Compat, Param, Reference, TuneJob, Verification};
use crate::spec::problem::{Access, DType, Init, Memory};
use crate::spec::pyvalues::{self, PyValue};
use crate::spec::source::KernelSource;
use crate::spec::value::Value;
use serde_json::Value as J;
use std::path::{Path, PathBuf};

/// The largest T1 file read (published files are a few KiB).
pub const MAX_T1_BYTES: u64 = 16 << 20;

/// The largest buffer a `Size` may ask for, in bytes (1 TiB): a guard against a typo that would
/// allocate the machine away; the device's own memory is checked when tuning.
pub const MAX_BUFFER_BYTES: u64 = 1 << 40;

/// What a T1 file gives: the job, the source language, the kernel file, budget and search.
#[derive(Debug)]
pub struct T1 {
    /// The tuning job (its source code not yet read).
    pub job: TuneJob,
    /// `cuda` or `hip`.
    pub language: String,
    /// The kernel file.
    pub kernel_file: PathBuf,
    /// `Budget` as a kerntune budget (`"200"`, `"60s"`, `"10%space"`), if given.
    pub budget: Option<String>,
    /// `Search.Name` as a kerntune strategy; `hybrid` when only a budget is given.
    pub strategy: Option<String>,
    /// Things in the file that were accepted but not used as written (a default that is not
    /// among the values, a `LocalSize` that differs from Kernel Tuner's block names).
    pub warnings: Vec<String>,
}

/// How a T1 file is read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct T1Options {
    /// Allow a `KernelFile` outside the T1 file's folder and its parent.
    pub allow_outside_sources: bool,
}

struct Ctx<'a> {
    file: &'a str,
    warnings: Vec<String>,
    /// The T1 file's folder: `BinaryRaw` data sources are read relative to it.
    dir: PathBuf,
    allow_outside_sources: bool,
}

impl Ctx<'_> {
    fn err(&self, field: &str, message: impl Into<String>) -> SpecError {
        SpecError { file: self.file.to_string(), field: field.into(), message: message.into() }
    }
}

/// Reads a T1 file, with kernel files confined to its folder and its parent.
pub fn load(path: &Path) -> Result<T1, SpecError> {
    load_with(path, T1Options::default())
}

/// Reads a T1 file.
pub fn load_with(path: &Path, opts: T1Options) -> Result<T1, SpecError> {
    let file = path.display().to_string();
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf();
    let mut cx = Ctx { file: &file, warnings: Vec::new(), dir, allow_outside_sources: opts.allow_outside_sources };
    let v = read_json(&cx, path)?;
    let space = v.get("ConfigurationSpace").filter(|s| s.is_object()).ok_or_else(|| cx.err("ConfigurationSpace", "missing; this is not a T1 file"))?;
    let ks = v.get("KernelSpecification").filter(|s| s.is_object()).ok_or_else(|| cx.err("KernelSpecification", "missing; this is not a T1 file"))?;
    let (params, defaults) = parameters(&mut cx, space)?;
    let restrictions = conditions(&cx, space)?;
    let language = language(&cx, ks)?;
    let name = kernel_name(&cx, ks)?;
    let kernel_file = kernel_file(&cx, ks, path, opts)?;
    let (grid, block, extent) = launch(&mut cx, ks, &params)?;
    let (args, outputs) = arguments(&cx, ks, &params)?;
    let mut source = KernelSource::new(&name, &language, "");
    source.options = string_list(&cx, ks.get("CompilerOptions"), "KernelSpecification.CompilerOptions")?;
    let mut job = TuneJob::new(source, params);
    job.restrictions = restrictions;
    job.grid = grid;
    job.block = block;
    job.extent = extent;
    job.shared_mem = shared_memory(&cx, ks)?;
    job.args = args;
    let reference = match reference_arguments(&cx, ks, &job.args)? {
        Some(expected) => Reference::Expected(expected),
        None => Reference::DefaultConfig,
    };
    job.verify = Verification { reference, outputs, ..Default::default() };
    job.verify.default_half_precision(&job.args);
    job.default = (!defaults.is_empty()).then_some(defaults);
    job.origin = file.clone();
    job.compat = Compat::KernelTuner;
    let budget = budget(&cx, &v)?;
    let strategy = match v.get("Search").and_then(|s| s.get("Name")) {
        None | Some(J::Null) => budget.as_ref().map(|_| "hybrid".to_string()),
        Some(J::String(name)) => Some(crate::spec::settings::strategy_named(name).map_err(|m| cx.err("Search.Name", m))?.name.to_string()),
        Some(other) => return Err(cx.err("Search.Name", format!("must be a string, not {}", shown(other)))),
    };
    if let Some(d) = v.get("KernelSpecification").and_then(|k| k.get("Device")).or_else(|| v.get("Device")).and_then(|d| d.get("Name")).and_then(J::as_str) {
        cx.warnings.push(format!("Device.Name `{}` is not used; choose the device with --backend and --device", quote(d)));
    }
    Ok(T1 { job, language, kernel_file, budget, strategy, warnings: cx.warnings })
}

fn read_json(cx: &Ctx<'_>, path: &Path) -> Result<J, SpecError> {
    let len = std::fs::metadata(path).map_err(|e| cx.err(crate::spec::error::WHOLE_FILE, format!("cannot read: {e}")))?.len();
    if len > MAX_T1_BYTES {
        return Err(cx.err(crate::spec::error::WHOLE_FILE, format!("is {len} bytes; a T1 file is at most {MAX_T1_BYTES} bytes")));
    }
    let text = crate::spec::source::read_text(path).map_err(|e| cx.err(crate::spec::error::WHOLE_FILE, format!("cannot read: {e}")))?;
    // A byte-order mark (Windows editors write one) is not JSON.
    serde_json::from_str(text.strip_prefix('\u{feff}').unwrap_or(&text)).map_err(|e| cx.err("(json)", format!("not valid JSON: {e}")))
}

/// A JSON value as an error message shows it (short).
fn shown(v: &J) -> String {
    quote(&v.to_string()).into_owned()
}

/// Parameters and the declared defaults (name, value) among them.
type Parameters = (Vec<Param>, Vec<(String, Value)>);

fn parameters(cx: &mut Ctx<'_>, space: &J) -> Result<Parameters, SpecError> {
    let list = space.get("TuningParameters").and_then(J::as_array).ok_or_else(|| cx.err("ConfigurationSpace.TuningParameters", "missing or not a list"))?;
    let mut params = Vec::new();
    let mut defaults = Vec::new();
    for (i, p) in list.iter().enumerate() {
        let field = format!("ConfigurationSpace.TuningParameters[{i}]");
        let name = p.get("Name").and_then(J::as_str).ok_or_else(|| cx.err(&field, "no Name (a string)"))?;
        if !name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_') || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(cx.err(&format!("{field}.Name"), format!("`{}` is not an identifier (it becomes a define)", quote(name))));
        }
        let values = match p.get("Values") {
            Some(J::String(s)) => pyvalues::eval_values(s, &[]).map_err(|e| cx.err(&format!("{field}.Values"), e.to_string()))?,
            Some(J::Array(a)) => a
                .iter()
                .map(|x| Value::from_json(x).ok_or_else(|| cx.err(&format!("{field}.Values"), format!("{} is not a number, boolean or string", shown(x)))))
                .collect::<Result<_, _>>()?,
            Some(other) => return Err(cx.err(&format!("{field}.Values"), format!("{} is not a list or a list expression", shown(other)))),
            None => return Err(cx.err(&format!("{field}.Values"), "missing")),
        };
        if values.is_empty() {
            return Err(cx.err(&format!("{field}.Values"), "gives no values; give at least one"));
        }
        // Published files are read as they are: a value listed twice is kept once, and said.
        let mut values = values;
        let before = values.len();
        let mut seen = std::collections::HashSet::with_capacity(before);
        values.retain(|v| seen.insert(v.clone()));
        if values.len() < before {
            cx.warnings.push(format!("{field}.Values: {} value(s) listed more than once; each is tuned once", before - values.len()));
        }
        if let Some(d) = default_value(cx, p.get("Default"), &field)? {
            if values.iter().any(|v| v == &d || v.as_f64().zip(d.as_f64()).is_some_and(|(a, b)| a == b)) {
                defaults.push((name.to_string(), d));
            } else {
                cx.warnings.push(format!("{field}.Default: {d} is not one of the values; the first value is the default instead"));
            }
        }
        params.push(Param { name: name.to_string(), values });
    }
    Ok((params, defaults))
}

/// A `Default`: a value, a one-element list (JSON or as text), or absent.
fn default_value(cx: &Ctx<'_>, d: Option<&J>, field: &str) -> Result<Option<Value>, SpecError> {
    let field = format!("{field}.Default");
    let one = |items: Vec<Value>| match <[Value; 1]>::try_from(items) {
        Ok([v]) => Ok(Some(v)),
        Err(items) => Err(cx.err(&field, format!("a list default must have one element, not {}", items.len()))),
    };
    match d {
        None | Some(J::Null) => Ok(None),
        Some(J::Array(a)) => one(a.iter().filter_map(Value::from_json).collect()),
        Some(J::String(s)) if s.trim_start().starts_with('[') => one(pyvalues::eval_values(s, &[]).map_err(|e| cx.err(&field, e.to_string()))?),
        Some(x) => Value::from_json(x).map(Some).ok_or_else(|| cx.err(&field, format!("{} is not a value", shown(x)))),
    }
}

fn conditions(cx: &Ctx<'_>, space: &J) -> Result<Vec<String>, SpecError> {
    let Some(list) = space.get("Conditions").filter(|c| !c.is_null()) else { return Ok(vec![]) };
    let list = list.as_array().ok_or_else(|| cx.err("ConfigurationSpace.Conditions", "must be a list"))?;
    let mut out = Vec::with_capacity(list.len());
    for (i, c) in list.iter().enumerate() {
        let field = |f: &str| format!("ConfigurationSpace.Conditions[{i}].{f}");
        // `Parameters` (the names the expression reads) is informational; when present it must
        // still be what the schema says.
        match c.get("Parameters") {
            None | Some(J::Null) => {}
            Some(J::Array(a)) if a.iter().all(J::is_string) => {}
            Some(other) => return Err(cx.err(&field("Parameters"), format!("must be a list of parameter names, not {}", shown(other)))),
        }
        match c.get("Expression") {
            Some(J::String(s)) => out.push(s.clone()),
            Some(other) => return Err(cx.err(&field("Expression"), format!("must be a string expression, not {}", shown(other)))),
            None => return Err(cx.err(&field("Expression"), "missing")),
        }
    }
    Ok(out)
}

fn language(cx: &Ctx<'_>, ks: &J) -> Result<String, SpecError> {
    match ks.get("Language") {
        None | Some(J::Null) => Ok("cuda".into()),
        Some(J::String(l)) => match l.to_ascii_lowercase().as_str() {
            "cuda" => Ok("cuda".into()),
            "hip" => Ok("hip".into()),
            _ => Err(cx.err(
                "KernelSpecification.Language",
                format!("`{}` kernels are not supported; kerntune tunes T1 files in CUDA or HIP (WGSL kernels through a TOML spec)", quote(l)),
            )),
        },
        Some(other) => Err(cx.err("KernelSpecification.Language", format!("must be a string, not {}", shown(other)))),
    }
}

/// The kernel's name, with `KernelTypeNames` as template arguments (`name<T1, T2>`).
fn kernel_name(cx: &Ctx<'_>, ks: &J) -> Result<String, SpecError> {
    let mut name = ks.get("KernelName").and_then(J::as_str).ok_or_else(|| cx.err("KernelSpecification.KernelName", "missing (a string)"))?.to_string();
    KernelSource::check_name(&name).map_err(|m| cx.err("KernelSpecification.KernelName", m))?;
    if let Some(types) = ks.get("KernelTypeNames").and_then(J::as_array).filter(|t| !t.is_empty()) {
        let types: Vec<&str> = types
            .iter()
            .map(|t| t.as_str().ok_or_else(|| cx.err("KernelSpecification.KernelTypeNames", "must be a list of strings")))
            .collect::<Result<_, _>>()?;
        if name.contains('<') {
            return Err(cx.err("KernelSpecification.KernelTypeNames", "KernelName already has template arguments; give them in one place"));
        }
        name = format!("{name}<{}>", types.join(", "));
        KernelSource::check_name(&name).map_err(|m| cx.err("KernelSpecification.KernelTypeNames", m))?;
    }
    Ok(name)
}

/// `KernelFile`, relative to the T1 file's folder, else its parent (Kernel Tuner's lookup),
/// and inside one of those two folders unless `allow_outside_sources`.
fn kernel_file(cx: &Ctx<'_>, ks: &J, path: &Path, opts: T1Options) -> Result<PathBuf, SpecError> {
    let field = "KernelSpecification.KernelFile";
    let rel = ks.get(field.rsplit('.').next().expect("field")).and_then(J::as_str).ok_or_else(|| cx.err(field, "missing (a path string)"))?;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let parent = dir.join("..");
    let candidates = [dir.join(rel), parent.join(rel)];
    let found = candidates
        .iter()
        .find(|c| c.is_file())
        .cloned()
        .ok_or_else(|| cx.err(field, format!("`{}` was found neither in {} nor in its parent folder", quote(rel), dir.display())))?;
    if !opts.allow_outside_sources {
        crate::spec::file::confine(&found, &[dir, &parent]).map_err(|m| cx.err(field, m))?;
    }
    Ok(found)
}

fn dims(cx: &Ctx<'_>, ks: &J, key: &str) -> Result<Option<[String; 3]>, SpecError> {
    let Some(d) = ks.get(key).filter(|d| !d.is_null()) else { return Ok(None) };
    let field = format!("KernelSpecification.{key}");
    let d = d.as_object().ok_or_else(|| cx.err(&field, "must be an object with X, Y and Z"))?;
    let mut out: [String; 3] = ["1".into(), "1".into(), "1".into()];
    for (i, axis) in ["X", "Y", "Z"].iter().enumerate() {
        out[i] = match d.get(*axis) {
            None | Some(J::Null) => "1".into(),
            Some(J::String(s)) if s.trim().is_empty() => "1".into(),
            Some(J::String(s)) => s.clone(),
            Some(J::Number(n)) => n.to_string(),
            Some(other) => return Err(cx.err(&format!("{field}.{axis}"), format!("must be a number or an expression string, not {}", shown(other)))),
        };
    }
    Ok(Some(out))
}

/// Grid and block expressions.
type Geometry = ([String; 3], [String; 3], Option<geometry::ProblemExtent>);

fn launch(cx: &mut Ctx<'_>, ks: &J, all: &[Param]) -> Result<Geometry, SpecError> {
    let params: &[&str] = &all.iter().map(|p| p.name.as_str()).collect::<Vec<_>>();
    let local = dims(cx, ks, "LocalSize")?;
    if let Some(l) = &local {
        let kt = geometry::block(params);
        // The same block either way: the same text, or a number that is the only value of
        // Kernel Tuner's block size parameter.
        let same = |mine: &str, theirs: &str| {
            mine == theirs || all.iter().find(|p| p.name == theirs).is_some_and(|p| p.values.len() == 1 && p.values[0].to_string() == mine)
        };
        for (d, axis) in ["X", "Y", "Z"].iter().enumerate() {
            if !same(l[d].trim(), &kt[d]) {
                cx.warnings.push(format!(
                    "KernelSpecification.LocalSize.{axis} is `{}`; Kernel Tuner's T1 loader would use `{}` for the block; kerntune uses LocalSize",
                    quote(&l[d]),
                    kt[d]
                ));
            }
        }
    }
    let block = local.unwrap_or_else(|| geometry::block(params));
    if let Some(ps) = ks.get("ProblemSize").filter(|p| !p.is_null()) {
        let field = "KernelSpecification.ProblemSize";
        let sizes: Vec<String> = match ps {
            J::Array(a) => a
                .iter()
                .map(|x| match x {
                    J::Number(n) => Ok(n.to_string()),
                    J::String(s) => Ok(s.clone()),
                    other => Err(cx.err(field, format!("{} is not a number or an expression string", shown(other)))),
                })
                .collect::<Result<_, _>>()?,
            J::Number(n) => vec![n.to_string()],
            J::String(s) => vec![s.clone()],
            other => return Err(cx.err(field, format!("{} is not a number or a list", shown(other)))),
        };
        let mut divisors: [Option<Vec<String>>; 3] = [None, None, None];
        for (d, key) in ["GridDivX", "GridDivY", "GridDivZ"].iter().enumerate() {
            divisors[d] = match ks.get(*key) {
                None | Some(J::Null) => None,
                Some(v) => Some(string_list(cx, Some(v), &format!("KernelSpecification.{key}"))?),
            };
        }
        let (grid, extent) = geometry::grid_and_extent(&sizes, &divisors, params).map_err(|m| cx.err(field, m))?;
        return Ok((grid, block, Some(extent)));
    }
    let global = dims(cx, ks, "GlobalSize")?.ok_or_else(|| {
        cx.err("KernelSpecification.ProblemSize", "missing, and so is GlobalSize: give ProblemSize (with GridDivX/Y/Z) or GlobalSize for the launch")
    })?;
    let grid = match ks.get("GlobalSizeType").and_then(J::as_str) {
        // OpenCL counts work-items (threads); the grid counts blocks.
        Some(t) if t.eq_ignore_ascii_case("opencl") => [0, 1, 2].map(|i| format!("div_ceil({}, {})", global[i], block[i])),
        _ => global,
    };
    Ok((grid, block, None))
}

fn string_list(cx: &Ctx<'_>, v: Option<&J>, field: &str) -> Result<Vec<String>, SpecError> {
    match v {
        None | Some(J::Null) => Ok(vec![]),
        Some(J::Array(a)) => a
            .iter()
            .map(|x| match x {
                J::String(s) => Ok(s.clone()),
                J::Number(n) => Ok(n.to_string()),
                other => Err(cx.err(field, format!("{} is not a string", shown(other)))),
            })
            .collect(),
        Some(other) => Err(cx.err(field, format!("must be a list of strings, not {}", shown(other)))),
    }
}

fn shared_memory(cx: &Ctx<'_>, ks: &J) -> Result<Option<String>, SpecError> {
    match ks.get("SharedMemory") {
        None | Some(J::Null) => Ok(None),
        Some(J::Number(n)) if n.as_u64().is_some() => Ok(Some(n.to_string())),
        Some(J::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(cx.err("KernelSpecification.SharedMemory", format!("{} is not a byte count", shown(other)))),
    }
}

/// The arguments, and the names of the buffers flagged `Output`.
fn arguments(cx: &Ctx<'_>, ks: &J, params: &[Param]) -> Result<(Vec<ArgSpec>, Vec<String>), SpecError> {
    let list = match ks.get("Arguments") {
        None | Some(J::Null) => return Ok((vec![], vec![])),
        Some(J::Array(a)) => a,
        Some(other) => return Err(cx.err("KernelSpecification.Arguments", format!("must be a list, not {}", shown(other)))),
    };
    // What `Size` expressions see: ProblemSize and each parameter as its list of values.
    let mut env: Vec<(&str, PyValue)> = params.iter().map(|p| (p.name.as_str(), PyValue::List(p.values.iter().map(PyValue::from_value).collect()))).collect();
    let problem_size = match ks.get("ProblemSize") {
        Some(J::Array(a)) => Some(PyValue::List(a.iter().map(json_py).collect())),
        Some(x @ (J::Number(_) | J::String(_))) => Some(json_py(x)),
        _ => None,
    };
    if let Some(ps) = problem_size {
        env.push(("ProblemSize", ps));
    }
    let mut args = Vec::new();
    let mut outputs = Vec::new();
    for (i, a) in list.iter().enumerate() {
        let field = format!("KernelSpecification.Arguments[{i}]");
        if !a.is_object() {
            return Err(cx.err(&field, format!("must be an object, not {}", shown(a))));
        }
        let name = match a.get("Name") {
            None | Some(J::Null) => format!("arg{i}"),
            Some(J::String(s)) => s.clone(),
            Some(other) => return Err(cx.err(&format!("{field}.Name"), format!("must be a string, not {}", shown(other)))),
        };
        let dtype = dtype(cx, a, &field)?;
        let kind = match a.get("MemoryType").and_then(J::as_str).unwrap_or("Vector") {
            "Scalar" => ArgKind::Scalar { dtype, value: scalar_value(cx, a, &field, dtype)? },
            "Vector" => {
                if flag(cx, a.get("Output"), &format!("{field}.Output"))? {
                    outputs.push(name.clone());
                }
                buffer(cx, a, &field, dtype, i, &env)?
            }
            other => return Err(cx.err(&format!("{field}.MemoryType"), format!("`{}` is not supported; use Vector or Scalar", quote(other)))),
        };
        args.push(ArgSpec { name, kind });
    }
    Ok((args, outputs))
}

fn json_py(v: &J) -> PyValue {
    match v {
        J::Number(n) => n.as_i64().map(PyValue::Int).unwrap_or_else(|| PyValue::Float(n.as_f64().unwrap_or(f64::NAN))),
        J::String(s) => PyValue::Str(s.clone()),
        J::Bool(b) => PyValue::Bool(*b),
        J::Array(a) => PyValue::List(a.iter().map(json_py).collect()),
        _ => PyValue::Str(v.to_string()),
    }
}

fn dtype(cx: &Ctx<'_>, a: &J, field: &str) -> Result<DType, SpecError> {
    let ty = a.get("Type").and_then(J::as_str).ok_or_else(|| cx.err(&format!("{field}.Type"), "missing (float, double, half, int32, uint32, int64, …)"))?;
    DType::parse(ty).ok_or_else(|| {
        let vector = ["float", "double", "int", "uint", "half", "bfloat16", "char", "short", "long"]
            .iter()
            .any(|b| ty.strip_prefix(b).is_some_and(|n| ["2", "3", "4", "8", "16"].contains(&n)));
        let what = if vector { "is a vector type, which kerntune does not support" } else { "is not supported" };
        cx.err(&format!("{field}.Type"), format!("`{}` {what}; use one of {}", quote(ty), DType::names()))
    })
}

fn flag(cx: &Ctx<'_>, v: Option<&J>, field: &str) -> Result<bool, SpecError> {
    match v {
        None | Some(J::Null) => Ok(false),
        Some(J::Bool(b)) => Ok(*b),
        Some(J::Number(n)) if n.as_u64() == Some(0) || n.as_u64() == Some(1) => Ok(n.as_u64() == Some(1)),
        Some(other) => Err(cx.err(field, format!("must be 0, 1, true or false, not {}", shown(other)))),
    }
}

fn scalar_value(cx: &Ctx<'_>, a: &J, field: &str, dtype: DType) -> Result<String, SpecError> {
    let fv = format!("{field}.FillValue");
    match a.get("FillValue") {
        Some(J::Number(n)) => {
            let x = n.as_f64().filter(|x| x.is_finite()).ok_or_else(|| cx.err(&fv, "must be a finite number"))?;
            if dtype.is_float() {
                Ok(format!("{x:?}"))
            } else if x.fract() == 0.0 && x.abs() < 9.0e18 {
                Ok(format!("{}", x as i64))
            } else {
                Err(cx.err(&fv, format!("{x} is not a whole number for an integer scalar")))
            }
        }
        Some(other) => Err(cx.err(&fv, format!("must be a number, not {}", shown(other)))),
        None => Err(cx.err(&fv, "missing: a Scalar argument needs FillValue")),
    }
}

fn buffer(cx: &Ctx<'_>, a: &J, field: &str, dtype: DType, index: usize, env: &[(&str, PyValue)]) -> Result<ArgKind, SpecError> {
    let size_field = format!("{field}.Size");
    let elements = match a.get("Size") {
        None | Some(J::Null) => return Err(cx.err(&size_field, "missing: a Vector argument needs Size")),
        Some(J::Number(n)) => n.as_u64().ok_or_else(|| cx.err(&size_field, format!("{n} is not a whole non-negative number")))?,
        Some(J::String(s)) => pyvalues::eval_count(s, env).map_err(|e| cx.err(&size_field, e.to_string()))?,
        Some(other) => return Err(cx.err(&size_field, format!("must be a number or an expression string, not {}", shown(other)))),
    };
    let bytes = elements.checked_mul(dtype.size() as u64).filter(|&b| b <= MAX_BUFFER_BYTES).ok_or_else(|| {
        cx.err(&size_field, format!("{elements} elements of {} bytes exceed the {} GiB a buffer may have", dtype.size(), MAX_BUFFER_BYTES >> 30))
    })?;
    let _ = bytes;
    let n = usize::try_from(elements).map_err(|_| cx.err(&size_field, "too large for this machine"))?;
    let init = fill(cx, a, field, n, dtype, index)?;
    let access = match a.get("AccessType").and_then(J::as_str).unwrap_or("ReadWrite") {
        "ReadOnly" => Access::Read,
        "WriteOnly" => Access::Write,
        "ReadWrite" => Access::ReadWrite,
        other => return Err(cx.err(&format!("{field}.AccessType"), format!("`{}` is not ReadOnly, WriteOnly or ReadWrite", quote(other)))),
    };
    let memory = match a.get("MemType").and_then(J::as_str) {
        None | Some("Global") => Memory::Global,
        // Kernel Tuner passes a constant-memory argument as an argument too.
        Some("Constant") => Memory::Constant { argument: true },
        Some(other) => return Err(cx.err(&format!("{field}.MemType"), format!("`{}` is not supported; use Global or Constant", quote(other)))),
    };
    Ok(ArgKind::Buffer { dtype, len: elements.to_string(), init, access, memory })
}

/// How a buffer of `n` elements is filled: `FillType` Constant (`FillValue`), Random
/// (`RandomSeed`), Generator (`DataSource`, an expression of `i`) or BinaryRaw (`DataSource`, a
/// file of raw elements, or a `.npy` array, beside the T1 file).
fn fill(cx: &Ctx<'_>, a: &J, field: &str, n: usize, dtype: DType, index: usize) -> Result<Init, SpecError> {
    let number = |key: &str| -> Result<f64, SpecError> {
        match a.get(key) {
            None | Some(J::Null) => Ok(0.0),
            Some(J::Number(n)) => n.as_f64().filter(|x| x.is_finite()).ok_or_else(|| cx.err(&format!("{field}.{key}"), "must be a finite number")),
            Some(other) => Err(cx.err(&format!("{field}.{key}"), format!("must be a number, not {}", shown(other)))),
        }
    };
    let source = |what: &str| -> Result<&str, SpecError> {
        a.get("DataSource").and_then(J::as_str).ok_or_else(|| cx.err(&format!("{field}.DataSource"), format!("a {what} fill needs DataSource")))
    };
    Ok(match a.get("FillType").and_then(J::as_str).unwrap_or("Constant") {
        "Constant" => Init::Constant { value: number("FillValue")? },
        "Random" => Init::Random { seed: a.get("RandomSeed").and_then(J::as_u64).unwrap_or(index as u64 + 1) },
        "Generator" => {
            let expr = source("Generator (an expression of i)")?;
            Init::check_generator(expr, n).map_err(|m| cx.err(&format!("{field}.DataSource"), m))?;
            Init::Generator { expr: expr.to_string() }
        }
        "BinaryRaw" => {
            let path = cx.dir.join(source("BinaryRaw (a file of raw elements)")?);
            let ds = format!("{field}.DataSource");
            if !cx.allow_outside_sources {
                let parent = cx.dir.parent().unwrap_or(&cx.dir).to_path_buf();
                crate::spec::file::confine(&path, &[&cx.dir, &parent]).map_err(|m| cx.err(&ds, m))?;
            }
            // The size is checked now, so that a wrong file is reported before any device work.
            let len = std::fs::metadata(&path).map_err(|e| cx.err(&ds, format!("cannot read {}: {e}", path.display())))?.len();
            let raw = path.extension().is_none_or(|e| e != "npy");
            if raw && len != (n * dtype.size()) as u64 {
                return Err(cx.err(&ds, format!("{} has {len} bytes; {n} elements of {} need {}", path.display(), dtype.c_type(), n * dtype.size())));
            }
            Init::File { path }
        }
        other => {
            return Err(
                cx.err(&format!("{field}.FillType"), format!("fill type `{}` is not supported; use Constant, Random, Generator or BinaryRaw", quote(other)))
            )
        }
    })
}

/// `ReferenceArguments`: the expected contents of output arguments (`TargetName`), filled as an
/// argument is. `None` when the file has none (the default config's outputs are the reference).
fn reference_arguments(cx: &Ctx<'_>, ks: &J, args: &[ArgSpec]) -> Result<Option<Vec<(String, Init)>>, SpecError> {
    let list = match ks.get("ReferenceArguments") {
        None | Some(J::Null) => return Ok(None),
        Some(J::Array(a)) if a.is_empty() => return Ok(None),
        Some(J::Array(a)) => a,
        Some(other) => return Err(cx.err("KernelSpecification.ReferenceArguments", format!("must be a list, not {}", shown(other)))),
    };
    let mut out = Vec::new();
    for (i, r) in list.iter().enumerate() {
        let field = format!("KernelSpecification.ReferenceArguments[{i}]");
        let target = r
            .get("TargetName")
            .and_then(J::as_str)
            .ok_or_else(|| cx.err(&format!("{field}.TargetName"), "missing: the argument whose expected contents this gives"))?;
        let (dtype, len) = args
            .iter()
            .find_map(|a| match &a.kind {
                ArgKind::Buffer { dtype, len, .. } if a.name == target => Some((*dtype, len.clone())),
                _ => None,
            })
            .ok_or_else(|| cx.err(&format!("{field}.TargetName"), format!("`{}` is not a Vector argument of this kernel", quote(target))))?;
        let n: usize = len.parse().map_err(|_| cx.err(&format!("{field}.TargetName"), "the target's size is not a number"))?;
        out.push((target.to_string(), fill(cx, r, &field, n, dtype, i)?));
    }
    Ok(Some(out))
}

fn budget(cx: &Ctx<'_>, v: &J) -> Result<Option<String>, SpecError> {
    // One object, or a list of them (the schema's form), which all apply.
    let budgets = match v.get("Budget") {
        Some(J::Array(a)) => a.clone(),
        Some(b @ J::Object(_)) => vec![b.clone()],
        None | Some(J::Null) => vec![],
        Some(other) => return Err(cx.err("Budget", format!("must be an object or a list of them, not {}", shown(other)))),
    };
    let mut parts = Vec::new();
    for (i, b) in budgets.iter().enumerate() {
        let value = b
            .get("BudgetValue")
            .and_then(J::as_f64)
            .filter(|x| x.is_finite() && *x > 0.0)
            .ok_or_else(|| cx.err(&format!("Budget[{i}].BudgetValue"), "missing, or not a positive number"))?;
        parts.push(match b.get("Type").and_then(J::as_str) {
            Some("ConfigurationCount") => format!("{}", value.max(1.0).min(u32::MAX as f64) as u64),
            Some("TuningDuration") => format!("{value}s"),
            // Resolved against the valid configs when the space is known.
            Some("ConfigurationFraction") if value <= 1.0 => format!("{}%space", value * 100.0),
            Some("ConfigurationFraction") => return Err(cx.err(&format!("Budget[{i}].BudgetValue"), format!("{value} is not a fraction between 0 and 1"))),
            _ => {
                let given = match b.get("Type") {
                    None => "missing".to_string(),
                    Some(t) => format!("{} is not one", shown(t)),
                };
                return Err(cx.err(&format!("Budget[{i}].Type"), format!("{given}: give ConfigurationCount, TuningDuration or ConfigurationFraction")));
            }
        });
    }
    let budget = (!parts.is_empty()).then(|| parts.join(","));
    if let Some(b) = &budget {
        crate::spec::settings::Budget::parse(b).map_err(|m| cx.err("Budget", m))?;
    }
    Ok(budget)
}
