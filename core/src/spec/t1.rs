//! T1 input files (the community's JSON problem descriptions: parameters, conditions, kernel
//! file, grid/block expressions, arguments with fill types) read as kerntune specs.
//!
//! Mapping:
//! - `TuningParameters[].Values` (a list literal in a string, or `range(...)` /
//!   `list(range(...))`) → parameter values; `Default` → the default config;
//! - `Conditions[].Expression` → restrictions;
//! - `KernelSpecification.GlobalSize`/`LocalSize` → grid/block expressions. With
//!   `GlobalSizeType` `OpenCL` the global size counts threads and the grid is
//!   `div_ceil(global, local)`; otherwise it counts blocks, as CUDA does;
//! - `KernelName` (+ `KernelTypeNames`: template arguments) → the kernel's name;
//! - `Arguments[]` in order: `Vector` → a buffer of `Size` elements filled `Constant`,
//!   `Random` or `Generator` (`DataSource`: an expression of `i`), `Output: 1` marking the
//!   buffers to verify; `Scalar` → its `FillValue`;
//! - `CompilerOptions` → compiler options;
//! - `Budget` (`ConfigurationCount`, `TuningDuration`, `ConfigurationFraction`) → the budget;
//!   `Search.Name` → the strategy (`hybrid` when only a budget is given).
//!
//! Outputs are verified against the default config (T1 reference outputs come from data files,
//! which are not read).

use crate::spec::error::SpecError;
use crate::spec::job::Param;
use crate::spec::job::{ArgKind, ArgSpec, Reference, TuneJob, Verification};
use crate::spec::problem::{Access, DType, Init};
use crate::spec::source::KernelSource;
use crate::spec::value::Value;
use serde_json::Value as J;
use std::path::Path;

/// A parameter's `Values`: a list literal (`"[16, 32, 64]"`), or `range(...)` /
/// `list(range(...))` with integer expressions as bounds (`"list(range(32, 1024+1, 32))"`).
fn parse_values(text: &str) -> Result<Vec<Value>, String> {
    let t = text.trim();
    let t = t.strip_prefix("list(").and_then(|x| x.strip_suffix(')')).map(str::trim).unwrap_or(t);
    if let Some(args) = t.strip_prefix("range(").and_then(|x| x.strip_suffix(')')) {
        let bounds: Vec<i64> = args
            .split(',')
            .map(|a| crate::spec::expr::Expr::compile(a, &[]).map_err(|e| e.to_string()).and_then(|e| e.eval_i64(&[]).map_err(|e| e.to_string())))
            .collect::<Result<_, _>>()?;
        let (start, stop, step) = match bounds[..] {
            [stop] => (0, stop, 1),
            [start, stop] => (start, stop, 1),
            [start, stop, step] if step != 0 => (start, stop, step),
            _ => return Err(format!("`{text}`: range takes 1 to 3 arguments and a non-zero step")),
        };
        let mut out = Vec::new();
        let mut v = start;
        while (step > 0 && v < stop) || (step < 0 && v > stop) {
            out.push(Value::Int(v));
            v += step;
        }
        return Ok(out);
    }
    let inner = t
        .strip_prefix('[')
        .and_then(|x| x.strip_suffix(']'))
        .or_else(|| t.strip_prefix('(').and_then(|x| x.strip_suffix(')')))
        .ok_or_else(|| format!("`{text}` is not a list literal like \"[16, 32, 64]\" or a range like \"list(range(1, 17))\""))?;
    let mut out = Vec::new();
    for part in inner.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        out.push(if let Ok(i) = part.parse::<i64>() {
            Value::Int(i)
        } else if let Ok(f) = part.parse::<f64>() {
            Value::Float(f)
        } else if part == "True" || part == "true" {
            Value::Bool(true)
        } else if part == "False" || part == "false" {
            Value::Bool(false)
        } else {
            Value::Str(part.trim_matches(|c| c == '"' || c == '\'').to_string())
        });
    }
    Ok(out)
}

/// What a T1 file gives: the job, the source language, the kernel file, budget and search.
#[derive(Debug)]
pub struct T1 {
    /// The tuning job (its source code not yet read).
    pub job: TuneJob,
    /// `cuda` or `hip`.
    pub language: String,
    /// The kernel file, relative to the T1 file's folder.
    pub kernel_file: std::path::PathBuf,
    /// `Budget` as a kerntune budget (`"200"`, `"60s"`), if given.
    pub budget: Option<String>,
    /// `Search.Name` as a kerntune strategy; `hybrid` when only a budget is given.
    pub strategy: Option<String>,
}

/// Reads a T1 file.
pub fn load(path: &Path) -> Result<T1, SpecError> {
    let file = path.display().to_string();
    let err = |field: &str, message: String| SpecError { file: file.clone(), field: field.into(), message };
    let text = std::fs::read_to_string(path).map_err(|e| err("(file)", format!("cannot read: {e}")))?;
    let v: J = serde_json::from_str(&text).map_err(|e| err("(json)", format!("not valid JSON: {e}")))?;
    let space = v.get("ConfigurationSpace").ok_or_else(|| err("ConfigurationSpace", "missing; this is not a T1 file".into()))?;
    let ks = v.get("KernelSpecification").ok_or_else(|| err("KernelSpecification", "missing; this is not a T1 file".into()))?;
    let mut params = Vec::new();
    let mut defaults = Vec::new();
    for (i, p) in
        space["TuningParameters"].as_array().ok_or_else(|| err("ConfigurationSpace.TuningParameters", "missing or not a list".into()))?.iter().enumerate()
    {
        let field = format!("ConfigurationSpace.TuningParameters[{i}]");
        let name = p["Name"].as_str().ok_or_else(|| err(&field, "no Name".into()))?;
        let values = match &p["Values"] {
            J::String(s) => parse_values(s).map_err(|m| err(&format!("{field}.Values"), m))?,
            J::Array(a) => a.iter().filter_map(Value::from_json).collect(),
            _ => return Err(err(&format!("{field}.Values"), "missing".into())),
        };
        if let Some(d) = p.get("Default").filter(|d| !d.is_null()) {
            let d =
                Value::from_json(d).filter(|d| values.contains(d)).ok_or_else(|| err(&format!("{field}.Default"), format!("{d} is not one of the values")))?;
            defaults.push((name.to_string(), d));
        }
        params.push(Param { name: name.to_string(), values });
    }
    let restrictions: Vec<String> =
        space["Conditions"].as_array().map(|c| c.iter().filter_map(|x| x["Expression"].as_str().map(String::from)).collect()).unwrap_or_default();
    let language = match ks["Language"].as_str().unwrap_or("CUDA") {
        "CUDA" => "cuda",
        "HIP" => "hip",
        other => return Err(err("KernelSpecification.Language", format!("`{other}` kernels are not supported; kerntune runs CUDA and HIP T1 files"))),
    };
    let mut name = ks["KernelName"].as_str().ok_or_else(|| err("KernelSpecification.KernelName", "missing".into()))?.to_string();
    KernelSource::check_name(&name).map_err(|m| err("KernelSpecification.KernelName", m))?;
    // A templated kernel's arguments (KTT's `KernelTypeNames`) become kerntune's templated name,
    // `name<T1, T2>`; arguments that name tuning parameters take each config's values.
    if let Some(types) = ks["KernelTypeNames"].as_array().filter(|t| !t.is_empty()) {
        let types: Vec<&str> = types
            .iter()
            .map(|t| t.as_str().ok_or_else(|| err("KernelSpecification.KernelTypeNames", "must be a list of strings".into())))
            .collect::<Result<_, _>>()?;
        if name.contains('<') {
            return Err(err("KernelSpecification.KernelTypeNames", "KernelName already has template arguments; give them in one place".into()));
        }
        name = format!("{name}<{}>", types.join(", "));
        KernelSource::check_name(&name).map_err(|m| err("KernelSpecification.KernelTypeNames", m))?;
    }
    let kernel_file =
        path.parent().unwrap_or(Path::new(".")).join(ks["KernelFile"].as_str().ok_or_else(|| err("KernelSpecification.KernelFile", "missing".into()))?);
    let dims = |key: &str| -> [String; 3] {
        let d = &ks[key];
        let get = |a: &str| match &d[a] {
            J::String(s) if !s.is_empty() => s.clone(),
            J::Number(n) => n.to_string(),
            _ => "1".into(),
        };
        [get("X"), get("Y"), get("Z")]
    };
    let global = dims("GlobalSize");
    let block = dims("LocalSize");
    let opencl_sizes = ks["GlobalSizeType"].as_str() == Some("OpenCL");
    let grid = if opencl_sizes { [0, 1, 2].map(|i| format!("div_ceil({}, {})", global[i], block[i])) } else { global };
    let mut args = Vec::new();
    let mut outputs = Vec::new();
    for (i, a) in ks["Arguments"].as_array().cloned().unwrap_or_default().iter().enumerate() {
        let field = format!("KernelSpecification.Arguments[{i}]");
        let aname = a["Name"].as_str().map(String::from).unwrap_or_else(|| format!("arg{i}"));
        let ty = a["Type"].as_str().unwrap_or("");
        let dtype = match ty {
            "float" => DType::F32,
            "double" => DType::F64,
            "int32" => DType::I32,
            "uint32" => DType::U32,
            "int64" => DType::I64,
            other => return Err(err(&format!("{field}.Type"), format!("type `{other}` is not supported (float, double, int32, uint32, int64)"))),
        };
        let fill = a["FillValue"].as_f64().unwrap_or(0.0);
        let kind = match a["MemoryType"].as_str().unwrap_or("Vector") {
            "Scalar" => ArgKind::Scalar { dtype, value: if dtype.is_float() { format!("{fill:?}") } else { format!("{}", fill as i64) } },
            "Vector" => {
                let size = a["Size"].as_u64().ok_or_else(|| err(&format!("{field}.Size"), "a Vector argument needs Size".into()))?;
                let init = match a["FillType"].as_str().unwrap_or("Constant") {
                    "Constant" => Init::Constant { value: fill },
                    "Random" => Init::Random { seed: a["RandomSeed"].as_u64().unwrap_or(i as u64 + 1) },
                    "Generator" => {
                        let expr = a["DataSource"]
                            .as_str()
                            .ok_or_else(|| err(&format!("{field}.DataSource"), "a Generator fill needs DataSource, an expression of i".into()))?;
                        Init::check_generator(expr, size as usize).map_err(|m| err(&format!("{field}.DataSource"), m))?;
                        Init::Generator { expr: expr.to_string() }
                    }
                    other => return Err(err(&format!("{field}.FillType"), format!("fill type `{other}` is not supported (Constant, Random, Generator)"))),
                };
                if a["Output"].as_u64() == Some(1) || a["Output"].as_bool() == Some(true) {
                    outputs.push(aname.clone());
                }
                let access = match a["AccessType"].as_str().unwrap_or("ReadWrite") {
                    "ReadOnly" => Access::Read,
                    "WriteOnly" => Access::Write,
                    _ => Access::ReadWrite,
                };
                ArgKind::Buffer { dtype, len: size.to_string(), init, access }
            }
            other => return Err(err(&format!("{field}.MemoryType"), format!("memory type `{other}` is not supported (Scalar, Vector)"))),
        };
        args.push(ArgSpec { name: aname, kind });
    }
    let mut source = KernelSource::new(&name, language, "");
    source.options = ks["CompilerOptions"].as_array().map(|o| o.iter().filter_map(|x| x.as_str().map(String::from)).collect()).unwrap_or_default();
    let mut job = TuneJob::new(source, params);
    job.restrictions = restrictions;
    job.grid = grid;
    job.block = block;
    job.shared_mem = ks["SharedMemory"].as_u64().map(|b| b.to_string());
    job.args = args;
    job.verify = Verification { reference: Reference::DefaultConfig, outputs, ..Default::default() };
    job.default = (!defaults.is_empty()).then_some(defaults);
    job.origin = file.clone();
    // `Budget`: one object, or a list of them (the schema's form), which all apply.
    let budgets = match &v["Budget"] {
        J::Array(a) => a.clone(),
        J::Object(_) => vec![v["Budget"].clone()],
        _ => vec![],
    };
    let mut parts = Vec::new();
    for (i, b) in budgets.iter().enumerate() {
        let value = b["BudgetValue"].as_f64().ok_or_else(|| err(&format!("Budget[{i}].BudgetValue"), "missing or not a number".into()))?;
        parts.push(match b["Type"].as_str() {
            Some("ConfigurationCount") => format!("{}", value.max(1.0) as u64),
            Some("TuningDuration") => format!("{value}s"),
            // Resolved against the valid configs when the space is known.
            Some("ConfigurationFraction") if value > 0.0 && value <= 1.0 => format!("{}%space", value * 100.0),
            Some("ConfigurationFraction") => return Err(err(&format!("Budget[{i}].BudgetValue"), format!("{value} is not a fraction between 0 and 1"))),
            other => return Err(err(&format!("Budget[{i}].Type"), format!("{other:?} is not ConfigurationCount, TuningDuration or ConfigurationFraction"))),
        });
    }
    let budget = (!parts.is_empty()).then(|| parts.join(","));
    let strategy = match v["Search"]["Name"].as_str() {
        None => budget.as_ref().map(|_| "hybrid".to_string()),
        Some(name) => Some(crate::spec::settings::strategy_named(name).map_err(|m| err("Search.Name", m))?.name.to_string()),
    };
    Ok(T1 { job, language: language.to_string(), kernel_file, budget, strategy })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_t1_file_becomes_a_job() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("k.cu"), "extern \"C\" __global__ void k(float* a, int n) {}").unwrap();
        let t1 = serde_json::json!({
            "ConfigurationSpace": {
                "TuningParameters": [{"Name": "block_size_x", "Type": "int", "Values": "[32, 64, 128]"}, {"Name": "use_x", "Type": "bool", "Values": "[0, 1]"}],
                "Conditions": [{"Parameters": ["block_size_x", "use_x"], "Expression": "use_x == 0 or block_size_x >= 64"}]
            },
            "KernelSpecification": {
                "Language": "CUDA", "KernelName": "k", "KernelFile": "k.cu", "GlobalSizeType": "OpenCL",
                "GlobalSize": {"X": "4096"}, "LocalSize": {"X": "block_size_x"}, "CompilerOptions": ["-use_fast_math"],
                "Arguments": [
                    {"Name": "a", "Type": "float", "Size": 4096, "FillType": "Random", "RandomSeed": 3, "AccessType": "ReadWrite", "MemoryType": "Vector"},
                    {"Name": "n", "Type": "int32", "FillValue": 4096, "MemoryType": "Scalar"}
                ]
            }
        });
        let p = dir.path().join("t1.json");
        std::fs::write(&p, t1.to_string()).unwrap();
        let T1 { job, language: lang, kernel_file: file, budget, strategy } = load(&p).unwrap();
        assert_eq!(lang, "cuda");
        assert!(file.ends_with("k.cu"));
        assert_eq!((budget, strategy), (None, None));
        assert_eq!(job.params[0].values, vec![Value::Int(32), Value::Int(64), Value::Int(128)]);
        assert_eq!(job.grid[0], "div_ceil(4096, block_size_x)");
        let prep = crate::plan::prepare::Prepared::new(&job).unwrap();
        assert_eq!(prep.space.count(), 5);
        assert_eq!(prep.data.args.len(), 2);
        assert_eq!(prep.launch(&prep.default).unwrap().grid, [128, 1, 1]);
        assert_eq!(job.source.options, vec!["-use_fast_math"]);
        // Template arguments (KernelTypeNames) make a templated kernel name.
        let mut templated = t1.clone();
        templated["KernelSpecification"]["KernelTypeNames"] = serde_json::json!(["float", "block_size_x"]);
        std::fs::write(&p, templated.to_string()).unwrap();
        let job = load(&p).unwrap().job;
        assert_eq!(job.source.name, "k<float, block_size_x>");
        assert_eq!(job.source.instance(&prep.defines(&prep.default)).unwrap(), "k<float, 32>");
        templated["KernelSpecification"]["KernelTypeNames"] = serde_json::json!(["float>"]);
        std::fs::write(&p, templated.to_string()).unwrap();
        assert!(load(&p).unwrap_err().field.contains("KernelTypeNames"));
        for (values, says) in [("sorted(4)", "not a list literal"), ("range(1, 9, 0)", "non-zero step"), ("range(1, x)", "unknown name")] {
            let bad = serde_json::json!({"ConfigurationSpace": {"TuningParameters": [{"Name": "x", "Values": values}]}, "KernelSpecification": {}});
            std::fs::write(&p, bad.to_string()).unwrap();
            let e = load(&p).unwrap_err();
            assert!(e.field.contains("TuningParameters[0].Values") && e.message.contains(says), "{values}: {e}");
        }
    }

    /// The shape of the files BAT publishes (its CAFF files): ranges as values, per-parameter
    /// defaults, generated inputs, flagged outputs, a budget.
    #[test]
    fn benchmark_suite_files_load_as_published() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("k.cu"), "").unwrap();
        let t1 = serde_json::json!({
            "Budget": {"Type": "ConfigurationCount", "BudgetValue": 10},
            "ConfigurationSpace": {
                "TuningParameters": [
                    {"Name": "BLOCK_SIZE", "Type": "int", "Values": "list(range(32, 1024+1, 32))", "Default": 128},
                    {"Name": "UNROLL", "Type": "int", "Values": "list(range(1,4))", "Default": 1},
                    {"Name": "WORK", "Type": "int", "Values": "range(1, 5)", "Default": 2}
                ],
                "Conditions": [{"Expression": "UNROLL <= WORK", "Parameters": ["UNROLL", "WORK"]}]
            },
            "KernelSpecification": {
                "Language": "CUDA", "KernelName": "k", "KernelFile": "k.cu",
                "GlobalSize": {"X": "(4096//BLOCK_SIZE//WORK) + 1"}, "LocalSize": {"X": "BLOCK_SIZE"},
                "Arguments": [
                    {"Name": "A", "Type": "float", "Size": 4096, "FillType": "Generator", "DataSource": "i % 7 * 0.5", "AccessType": "ReadOnly", "MemoryType": "Vector"},
                    {"Name": "C", "Type": "float", "Size": 4096, "FillType": "Constant", "FillValue": 0.0, "AccessType": "ReadWrite", "MemoryType": "Vector", "Output": 1},
                    {"Name": "n", "Type": "int32", "FillValue": 4096, "MemoryType": "Scalar"}
                ]
            }
        });
        let p = dir.path().join("t1.json");
        std::fs::write(&p, t1.to_string()).unwrap();
        let T1 { job, budget, strategy, .. } = load(&p).unwrap();
        assert_eq!(job.params[0].values.len(), 32);
        assert_eq!(job.params[0].values[31], Value::Int(1024));
        assert_eq!(job.params[2].values, [1, 2, 3, 4].map(Value::Int));
        assert_eq!(
            job.default.as_deref(),
            Some(&[("BLOCK_SIZE".to_string(), Value::Int(128)), ("UNROLL".into(), Value::Int(1)), ("WORK".into(), Value::Int(2))][..])
        );
        assert_eq!(job.verify.outputs, ["C"]);
        assert_eq!((budget.as_deref(), strategy.as_deref()), (Some("10"), Some("hybrid")), "a budget without a search uses the hybrid strategy");
        let prep = crate::plan::prepare::Prepared::new(&job).unwrap();
        assert_eq!(prep.default, crate::Config::new([("BLOCK_SIZE", 128), ("UNROLL", 1), ("WORK", 2)]));
        let a = prep.data.buffers().next().unwrap();
        assert_eq!(&a.data[..16], [0.0f32, 0.5, 1.0, 1.5].map(f32::to_le_bytes).concat(), "generated from i");
        assert_eq!(prep.launch(&prep.default).unwrap().grid, [17, 1, 1]);

        // Search names map to strategies; bad defaults, generators and searches are named.
        let mut t = t1.clone();
        t["Search"] = serde_json::json!({"Name": "Random"});
        t["Budget"] = serde_json::json!([{"Type": "TuningDuration", "BudgetValue": 30}, {"Type": "ConfigurationFraction", "BudgetValue": 0.1}]);
        std::fs::write(&p, t.to_string()).unwrap();
        let T1 { budget, strategy, .. } = load(&p).unwrap();
        // 10 % of the valid configs, resolved once the space is known; both limits apply.
        assert_eq!((budget.as_deref(), strategy.as_deref()), (Some("30s,10%space"), Some("random")));
        let b = crate::spec::settings::Budget::parse(budget.as_deref().unwrap()).unwrap();
        assert_eq!((b.max_seconds, b.max_evals_for(32 * 9)), (Some(30.0), Some(29)));
        for (path, value, field) in [
            (&["ConfigurationSpace", "TuningParameters", "0", "Default"][..], serde_json::json!(100), "TuningParameters[0].Default"),
            (&["KernelSpecification", "Arguments", "0", "DataSource"][..], serde_json::json!("i / (i - 3)"), "Arguments[0].DataSource"),
            (&["Search", "Name"][..], serde_json::json!("Quantum"), "Search.Name"),
        ] {
            let mut t = t1.clone();
            let mut at = &mut t;
            for k in &path[..path.len() - 1] {
                at = match k.parse::<usize>() {
                    Ok(i) => &mut at[i],
                    Err(_) => &mut at[*k],
                };
            }
            at[path[path.len() - 1]] = value;
            std::fs::write(&p, t.to_string()).unwrap();
            let e = load(&p).unwrap_err();
            assert!(e.field.contains(field), "{field}: {e}");
        }
    }
}
