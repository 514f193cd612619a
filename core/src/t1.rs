//! T1 input files (the community's JSON problem descriptions: parameters, conditions, kernel
//! file, grid/block expressions, arguments with fill types) read as kerntune specs.
//!
//! Mapping:
//! - `TuningParameters[].Values` (a list literal in a string) → parameter values;
//! - `Conditions[].Expression` → restrictions;
//! - `KernelSpecification.GlobalSize`/`LocalSize` → grid/block expressions. With
//!   `GlobalSizeType` `OpenCL` (or an OpenCL kernel) the global size counts threads and
//!   the grid is `div_ceil(global, local)`; otherwise it counts blocks, as CUDA does;
//! - `Arguments[]` (`Vector` → buffer of `Size` elements filled `Constant`/`Random`; `Scalar` →
//!   its `FillValue`) in order;
//! - `CompilerOptions` → compiler options.
//!
//! Outputs are verified against the default config (T1 reference outputs come from data files,
//! which are not read).

use crate::backend::KernelSource;
use crate::job::{ArgKind, ArgSpec, Reference, TuneJob, Verification};
use crate::problem::{Access, DType, Init};
use crate::space::Param;
use crate::spec::SpecError;
use crate::value::Value;
use serde_json::Value as J;
use std::path::Path;

fn parse_values(text: &str) -> Option<Vec<Value>> {
    let t = text.trim();
    let inner = t.strip_prefix('[').and_then(|x| x.strip_suffix(']')).or_else(|| t.strip_prefix('(').and_then(|x| x.strip_suffix(')')))?;
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
    Some(out)
}

/// Reads a T1 file: the job template, the source language and the kernel file.
pub fn load(path: &Path) -> Result<(TuneJob, String, std::path::PathBuf), SpecError> {
    let file = path.display().to_string();
    let err = |field: &str, message: String| SpecError { file: file.clone(), field: field.into(), message };
    let text = std::fs::read_to_string(path).map_err(|e| err("(file)", format!("cannot read: {e}")))?;
    let v: J = serde_json::from_str(&text).map_err(|e| err("(json)", format!("not valid JSON: {e}")))?;
    let space = v.get("ConfigurationSpace").ok_or_else(|| err("ConfigurationSpace", "missing; this is not a T1 file".into()))?;
    let ks = v.get("KernelSpecification").ok_or_else(|| err("KernelSpecification", "missing; this is not a T1 file".into()))?;
    let mut params = Vec::new();
    for (i, p) in
        space["TuningParameters"].as_array().ok_or_else(|| err("ConfigurationSpace.TuningParameters", "missing or not a list".into()))?.iter().enumerate()
    {
        let field = format!("ConfigurationSpace.TuningParameters[{i}]");
        let name = p["Name"].as_str().ok_or_else(|| err(&field, "no Name".into()))?;
        let values = match &p["Values"] {
            J::String(s) => parse_values(s).ok_or_else(|| err(&format!("{field}.Values"), format!("`{s}` is not a list literal like \"[16, 32, 64]\"")))?,
            J::Array(a) => a.iter().filter_map(Value::from_json).collect(),
            _ => return Err(err(&format!("{field}.Values"), "missing".into())),
        };
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
                    other => return Err(err(&format!("{field}.FillType"), format!("fill type `{other}` is not supported (Constant, Random)"))),
                };
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
    job.verify = Verification { reference: Reference::DefaultConfig, ..Default::default() };
    job.origin = file.clone();
    Ok((job, language.to_string(), kernel_file))
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
        let (job, lang, file) = load(&p).unwrap();
        assert_eq!(lang, "cuda");
        assert!(file.ends_with("k.cu"));
        assert_eq!(job.params[0].values, vec![Value::Int(32), Value::Int(64), Value::Int(128)]);
        assert_eq!(job.grid[0], "div_ceil(4096, block_size_x)");
        let prep = crate::job::Prepared::new(&job).unwrap();
        assert_eq!(prep.space.count(), 5);
        assert_eq!(prep.data.args.len(), 2);
        assert_eq!(prep.launch(&prep.default).unwrap().grid, [128, 1, 1]);
        assert_eq!(job.source.options, vec!["-use_fast_math"]);
        // Template arguments (KernelTypeNames) make a templated kernel name.
        let mut templated = t1.clone();
        templated["KernelSpecification"]["KernelTypeNames"] = serde_json::json!(["float", "block_size_x"]);
        std::fs::write(&p, templated.to_string()).unwrap();
        let (job, _, _) = load(&p).unwrap();
        assert_eq!(job.source.name, "k<float, block_size_x>");
        assert_eq!(job.source.instance(&prep.defines(&prep.default)).unwrap(), "k<float, 32>");
        templated["KernelSpecification"]["KernelTypeNames"] = serde_json::json!(["float>"]);
        std::fs::write(&p, templated.to_string()).unwrap();
        assert!(load(&p).unwrap_err().field.contains("KernelTypeNames"));
        let bad = serde_json::json!({"ConfigurationSpace": {"TuningParameters": [{"Name": "x", "Values": "range(4)"}]}, "KernelSpecification": {}});
        std::fs::write(&p, bad.to_string()).unwrap();
        let e = load(&p).unwrap_err();
        assert!(e.field.contains("TuningParameters[0].Values"), "{e}");
    }
}
