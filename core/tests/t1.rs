//! T1 files as published benchmark suites write them, and as Kernel Tuner reads them: the
//! shipped examples (`examples/t1` and `examples/convolution`: a 2-D convolution with a `__constant__` filter, a templated
//! dedispersion kernel with scalar arguments, a GEMM whose values are Python expressions, a
//! stencil with `+ list(range(...))`) load with the counts Python's own `eval` gives (checked
//! with a brute-force script when the files were written), launch with Kernel Tuner's grid,
//! compile with its defines, and tune on the fake backend; bad files get one clear error each.

use kerntune_core::fake::FakeBackend;
use kerntune_core::plan::prepare::{check, load, LayoutKind};
use kerntune_core::spec::t1;
use kerntune_core::*;
use std::path::{Path, PathBuf};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/t1")
}

/// Where an example lives: the convolution has a folder of its own (its T1 file, a TOML spec
/// and a Kernel Tuner script), the others are in examples/t1.
fn example(name: &str) -> PathBuf {
    match name {
        "convolution.json" | "convolution.cu" => examples().join("../convolution").join(name),
        _ => examples().join(name),
    }
}

fn prepared(name: &str) -> (Spec, TuneJob, Prepared) {
    let spec = load(&example(name)).unwrap_or_else(|e| panic!("{e}"));
    let job = spec.job("cuda", 0).unwrap();
    let prep = Prepared::without_data(&job, None).unwrap();
    (spec, job, prep)
}

fn cfg(prep: &Prepared, pairs: &[(&str, i64)]) -> Config {
    let mut c = prep.default.clone();
    for (k, v) in pairs {
        c.params.iter_mut().find(|(n, _)| n == k).unwrap_or_else(|| panic!("no {k}")).1 = Value::Int(*v);
    }
    c
}

#[test]
fn the_examples_load_with_the_counts_python_gives() {
    // (file, cartesian, valid) — valid counted by evaluating the conditions with Python's eval.
    for (file, cartesian, valid) in
        [("convolution.json", 2560, 1650), ("dedispersion.json", 111_360, 55_650), ("gemm.json", 576, 406), ("stencil.json", 888, 312)]
    {
        let (spec, _, prep) = prepared(file);
        assert_eq!((prep.space.cartesian_size(), prep.space.count().unwrap()), (cartesian, valid), "{file}");
        assert!(spec.warnings.is_empty(), "{file}: {:?}", spec.warnings);
        assert!(prep.default_valid, "{file}");
    }
}

#[test]
fn launch_geometry_is_kernel_tuners() {
    // grid = ceil(ProblemSize / product(GridDiv)); GlobalSize (present in convolution.json) is unused.
    let (_, _, p) = prepared("convolution.json");
    let l = p.launch(&p.default).unwrap();
    assert_eq!((l.grid, l.block), ([256, 256, 1], [16, 16, 1]));
    let l = p.launch(&cfg(&p, &[("block_size_x", 48), ("tile_size_x", 3), ("block_size_y", 4), ("tile_size_y", 3)])).unwrap();
    assert_eq!(l.grid, [29, 342, 1], "ceil(4096/144), ceil(4096/12)");
    let (_, _, p) = prepared("dedispersion.json");
    let l = p.launch(&cfg(&p, &[("block_size_x", 8), ("tile_size_x", 3), ("block_size_y", 96), ("tile_size_y", 5)])).unwrap();
    assert_eq!((l.grid, l.block), ([342, 2, 1], [8, 96, 1]), "ceil(8192/24), ceil(512/480)");
    let (_, _, p) = prepared("stencil.json");
    let l = p.launch(&cfg(&p, &[("block_size_x", 96), ("block_size_y", 4), ("tile_size_y", 3)])).unwrap();
    assert_eq!(l.grid, [43, 342, 1]);
}

#[test]
fn sizes_are_python_expressions_over_problem_size_and_parameter_lists() {
    let (_, _, p) = prepared("convolution.json");
    let sizes: Vec<(String, u64, Memory)> = p
        .layout
        .iter()
        .filter_map(|a| match a.kind {
            LayoutKind::Buffer { elements, memory, .. } => Some((a.name.clone(), elements, memory)),
            LayoutKind::Scalar { .. } => None,
        })
        .collect();
    assert_eq!(
        sizes,
        [
            ("output_image".to_string(), 4096 * 4096, Memory::Global),
            ("input_image".into(), 4110 * 4110, Memory::Global),
            ("d_filter".into(), 225, Memory::Constant { argument: true })
        ]
    );
    let (_, job, _) = prepared("convolution.json");
    assert_eq!(job.verify.outputs, ["output_image"]);
    assert_eq!(job.source.options, ["-std=c++11"]);
    let (_, job, p) = prepared("dedispersion.json");
    assert_eq!(job.source.name, "dedispersion_kernel<float>");
    assert_eq!(p.scalars().len(), 5);
}

#[test]
fn kernels_compile_with_kernel_tuners_defines() {
    let (_, job, p) = prepared("dedispersion.json");
    let c = cfg(&p, &[("loop_unroll_factor_channel", 4), ("block_size_x", 16)]);
    let l = p.launch(&c).unwrap();
    let d = p.defines(&c, &l);
    let get = |k: &str| d.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    assert_eq!((get("grid_size_x"), get("grid_size_y"), get("grid_size_z")), (Some("512"), Some("16"), Some("1")));
    assert_eq!((get("block_size_x"), get("kernel_tuner")), (Some("16"), Some("1")));
    assert_eq!(get("loop_unroll_factor_channel"), None, "an unroll factor is a constexpr, not a define");
    let code = p.code(&c, &job.source.code);
    assert!(code.starts_with("constexpr int loop_unroll_factor_channel = 4;\n#line 1\n"), "{}", &code[..80]);
    assert!(code.contains("#pragma unroll loop_unroll_factor_channel"));
    // 0: no unroll hint at all; the pragma's line is blanked, so line numbers stay the file's.
    let zero = p.code(&p.default, &job.source.code);
    assert!(!zero.contains("#pragma unroll loop_unroll_factor_channel"));
    assert_eq!(zero.lines().count(), job.source.code.lines().count() + 1, "one #line directive added, no line removed");
    // A kerntune spec keeps its own defines.
    let mut plain = job.clone();
    plain.compat = Compat::Kerntune;
    let p = Prepared::without_data(&plain, None).unwrap();
    assert!(p.defines(&p.default, &l).iter().all(|(k, _)| k != "kernel_tuner" && k != "grid_size_x"));
    assert!(matches!(p.code(&p.default, &plain.source.code), std::borrow::Cow::Borrowed(_)));
}

#[test]
fn each_example_tunes_on_the_fake_backend() {
    for file in ["convolution.json", "dedispersion.json", "gemm.json", "stencil.json"] {
        let spec = load(&example(file)).unwrap();
        let mut job = spec.job("cuda", 0).unwrap();
        // The fake backend runs on the host: smaller buffers, same space and launch rules.
        for a in &mut job.args {
            if let ArgKind::Buffer { len, .. } = &mut a.kind {
                *len = "1024".into();
            }
        }
        let budget = Budget::parse(spec.budget.as_deref().unwrap_or("30")).unwrap();
        let limits = Limits::preset("h100").unwrap().1;
        let fake = FakeBackend::new(limits, |c: &Config| 1e-3 * (1.0 + c.params.iter().map(|(_, v)| v.as_f64().unwrap_or(0.0)).sum::<f64>() / 1e3));
        let opts =
            TuneOptions { strategy: spec.strategy.clone().unwrap_or_else(|| "exhaustive".into()), budget, compile_threads: Some(2), ..Default::default() };
        let r = Tuner::new(fake).tune(&job, &opts).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(r.failures.is_empty(), "{file}: {:?}", r.failures);
        assert_eq!(r.reference, "default config");
        assert!(r.evaluated > 0 && r.evaluated <= opts.budget.max_evals_for(r.valid).unwrap_or(usize::MAX), "{file}: {}", r.evaluated);
    }
}

/// Writes `value` at `path` into the convolution example and loads it (with the temporary
/// folder that holds it).
fn load_in(path: &[&str], value: serde_json::Value) -> Result<(tempfile::TempDir, Spec), SpecError> {
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(example("convolution.json")).unwrap()).unwrap();
    let mut at = &mut v;
    for k in &path[..path.len() - 1] {
        at = match k.parse::<usize>() {
            Ok(i) => &mut at[i],
            Err(_) => &mut at[*k],
        };
    }
    let last = path[path.len() - 1];
    if value.is_null() {
        at.as_object_mut().unwrap().remove(last);
    } else {
        match last.parse::<usize>() {
            Ok(i) => at[i] = value,
            Err(_) => at[last] = value,
        }
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(example("convolution.cu"), dir.path().join("convolution.cu")).unwrap();
    let p = dir.path().join("t1.json");
    std::fs::write(&p, v.to_string()).unwrap();
    let spec = Spec::load(&p)?;
    check(&spec)?;
    Ok((dir, spec))
}

fn load_modified(path: &[&str], value: serde_json::Value) -> Result<Spec, SpecError> {
    load_in(path, value).map(|(_, s)| s)
}

#[test]
fn absent_optional_fields_are_fine() {
    for field in ["SharedMemory", "Stream", "CompilerOptions", "GlobalSize", "GlobalSizeType", "LocalSize", "BenchmarkName"] {
        load_modified(&["KernelSpecification", field], serde_json::Value::Null).unwrap_or_else(|e| panic!("without {field}: {e}"));
    }
    for field in ["Budget", "General"] {
        load_modified(&[field], serde_json::Value::Null).unwrap_or_else(|e| panic!("without {field}: {e}"));
    }
    // Kernel Tuner's own files name a device and a search; kerntune notes the device.
    let s = load_modified(&["KernelSpecification", "Device"], serde_json::json!({"Name": "A100"})).unwrap();
    assert!(s.warnings.iter().any(|w| w.contains("Device.Name `A100` is not used")), "{:?}", s.warnings);
    let s = load_modified(&["Search"], serde_json::json!({"Name": "GeneticAlgorithm", "Attributes": []})).unwrap();
    assert_eq!(s.strategy.as_deref(), Some("genetic"));
    // A byte-order mark, as a Windows editor saves the file, is not JSON: read without it.
    let dir = tempfile::tempdir().unwrap();
    for f in ["gemm.json", "gemm.cu"] {
        std::fs::copy(example(f), dir.path().join(f)).unwrap();
    }
    let text = std::fs::read_to_string(dir.path().join("gemm.json")).unwrap();
    std::fs::write(dir.path().join("gemm.json"), format!("\u{feff}{text}")).unwrap();
    load(&dir.path().join("gemm.json")).unwrap_or_else(|e| panic!("with a byte-order mark: {e}"));
}

#[test]
fn bad_input_is_one_clear_error_naming_the_field() {
    use serde_json::json;
    let tp = |i: &'static str, k: &'static str| vec!["ConfigurationSpace", "TuningParameters", i, k];
    let arg = |i: &'static str, k: &'static str| vec!["KernelSpecification", "Arguments", i, k];
    let cases: Vec<(Vec<&str>, serde_json::Value, &str, &str)> = vec![
        (tp("0", "Values"), json!("[2**i for i in range(10**9)]"), "TuningParameters[0].Values", "the limit is"),
        (tp("0", "Values"), json!("__import__('os').system('true')"), "TuningParameters[0].Values", "calls a method"),
        (tp("0", "Values"), json!("__import__('os')"), "TuningParameters[0].Values", "calls `__import__`"),
        (tp("0", "Values"), json!("open('/etc/passwd').read()"), "TuningParameters[0].Values", "calls a method"),
        (tp("0", "Values"), json!(format!("{}1{}", "[".repeat(3000), "]".repeat(3000))), "TuningParameters[0].Values", "nested more than"),
        (tp("0", "Values"), json!("[]"), "TuningParameters[0].Values", "gives no values"),
        (tp("0", "Values"), json!(7), "TuningParameters[0].Values", "not a list"),
        (tp("0", "Name"), json!("block size"), "TuningParameters[0].Name", "not an identifier"),
        (tp("7", "Default"), json!([15, 16]), "TuningParameters[7].Default", "one element"),
        (vec!["ConfigurationSpace", "Conditions", "0", "Expression"], json!(["a"]), "Conditions[0].Expression", "must be a string"),
        (vec!["ConfigurationSpace", "Conditions", "0", "Expression"], json!("use_padding ==="), "restrictions[0]", "not an expression"),
        (vec!["ConfigurationSpace", "Conditions", "0", "Parameters"], json!("use_padding"), "Conditions[0].Parameters", "list of parameter names"),
        (vec!["KernelSpecification", "Language"], json!("OpenCL"), "KernelSpecification.Language", "CUDA or HIP"),
        (vec!["KernelSpecification", "KernelFile"], json!("missing.cu"), "KernelSpecification.KernelFile", "was found neither"),
        (vec!["KernelSpecification", "KernelFile"], json!("../../../../../../etc/hostname"), "KernelSpecification.KernelFile", "--allow-outside-sources"),
        (vec!["KernelSpecification", "ProblemSize"], json!({"x": 1}), "KernelSpecification.ProblemSize", "not a number or a list"),
        (vec!["KernelSpecification", "GridDivX"], json!("block_size_x"), "KernelSpecification.GridDivX", "list of strings"),
        (arg("1", "Size"), json!("(ProblemSize[0]+max(filter_wdth)-1)"), "Arguments[1].Size", "unknown name `filter_wdth`"),
        (arg("1", "Size"), json!("ProblemSize[5]"), "Arguments[1].Size", "out of range"),
        (arg("1", "Size"), json!("2**40 * 2**20"), "Arguments[1].Size", "exceed"),
        (arg("1", "Size"), json!("-4"), "Arguments[1].Size", "must not be negative"),
        (arg("1", "Size"), serde_json::Value::Null, "Arguments[1].Size", "a Vector argument needs Size"),
        (arg("1", "Type"), json!("float4"), "Arguments[1].Type", "vector type"),
        (arg("1", "Type"), json!("half2"), "Arguments[1].Type", "vector type"),
        (arg("1", "Type"), json!("quad"), "Arguments[1].Type", "not supported"),
        (arg("1", "FillType"), json!("BinaryHDF"), "Arguments[1].FillType", "not supported"),
        (arg("1", "AccessType"), json!("Sometimes"), "Arguments[1].AccessType", "ReadOnly, WriteOnly or ReadWrite"),
        (arg("2", "MemType"), json!("Texture"), "Arguments[2].MemType", "Global or Constant"),
        (arg("0", "Output"), json!(7), "Arguments[0].Output", "0, 1, true or false"),
        (arg("0", "MemoryType"), json!("Local"), "Arguments[0].MemoryType", "Vector or Scalar"),
        (vec!["Budget"], json!([{"Type": "ConfigurationCount", "BudgetValue": "many"}]), "Budget[0].BudgetValue", "positive number"),
        (vec!["Budget"], json!([{"Type": "TuningDuration", "BudgetValue": 1e300}]), "Budget", "longer than a year"),
        (vec!["Budget"], json!([{"Type": "Energy", "BudgetValue": 1}]), "Budget[0].Type", "\"Energy\" is not one: give ConfigurationCount"),
        (vec!["Budget"], json!([{"Type": 7, "BudgetValue": 1}]), "Budget[0].Type", "7 is not one: give ConfigurationCount"),
        (vec!["Budget"], json!([{"BudgetValue": 1}]), "Budget[0].Type", "missing: give ConfigurationCount"),
        (vec!["Search", "Name"], json!("Quantum"), "Search.Name", "unknown strategy"),
    ];
    for (path, value, field, says) in cases {
        let e = load_modified(&path, value.clone()).err().unwrap_or_else(|| panic!("{path:?} = {value} loaded"));
        assert!(e.field.contains(field) && e.message.contains(says), "{path:?}: {e}");
        assert!(!e.message.contains("Some(") && !e.message.contains("None"), "{path:?}: Rust's words in the message: {e}");
        assert!(e.to_string().len() < 800, "{path:?}: the message quotes the input short ({} chars)", e.to_string().len());
    }
}

/// Half-precision and narrow integer buffers load under their C and NumPy names; a
/// half-precision output is compared with its type's tolerance (the file gives none).
#[test]
fn half_precision_and_narrow_types_load_and_outputs_get_their_type_s_tolerance() {
    use kerntune_core::spec::job::{ArgKind, Tolerance};
    use kerntune_core::DType;
    for (name, dtype, rtol) in
        [("half", DType::F16, Some(1e-3)), ("bfloat16", DType::BF16, Some(1.6e-2)), ("uint8", DType::U8, None), ("float", DType::F32, None)]
    {
        let (_dir, s) = load_in(&["KernelSpecification", "Arguments", "0", "Type"], serde_json::json!(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let job = s.job("cuda", 0).unwrap();
        assert!(matches!(job.args[0].kind, ArgKind::Buffer { dtype: d, .. } if d == dtype), "{name}");
        let want: Vec<(String, Tolerance)> = rtol.map(|rtol| ("output_image".to_string(), Tolerance { rtol, ..Tolerance::default() })).into_iter().collect();
        assert_eq!(job.verify.per_output, want, "{name}");
    }
}

#[test]
fn a_default_outside_the_values_is_reported_not_used() {
    let (_dir, s) = load_in(&["ConfigurationSpace", "TuningParameters", "0", "Default"], serde_json::json!(24)).unwrap();
    assert!(s.warnings.iter().any(|w| w.contains("TuningParameters[0].Default: 24 is not one of the values")), "{:?}", s.warnings);
    let p = Prepared::without_data(&s.job("cuda", 0).unwrap(), None).unwrap();
    assert_eq!(p.default.get_i64("block_size_x"), Some(16), "the first value");
}

/// A published file that lists a value twice is read as it is: the value is tuned once, and a
/// warning says so.
#[test]
fn a_value_listed_twice_is_tuned_once() {
    let (_dir, s) = load_in(&["ConfigurationSpace", "TuningParameters", "0", "Values"], serde_json::json!([16, 32, 16, 48, 32])).unwrap();
    assert!(s.warnings.iter().any(|w| w.contains("TuningParameters[0].Values: 2 value(s) listed more than once; each is tuned once")), "{:?}", s.warnings);
    let job = s.job("cuda", 0).unwrap();
    assert_eq!(job.params[0].values, vec![Value::Int(16), Value::Int(32), Value::Int(48)]);
}

#[test]
fn t1_reads_constant_memory_and_wgpu_refuses_it() {
    let (spec, _, _) = prepared("convolution.json");
    let mut s = spec.clone();
    s.sources.insert("wgsl".into(), example("convolution.cu"));
    let e = s.job("wgsl", 0).unwrap_err();
    assert!(e.field.contains("d_filter") && e.message.contains("not supported on wgpu"), "{e}");
    let _ = t1::MAX_T1_BYTES;
}

/// A T1 file's `ReferenceArguments` are the expected outputs: a constant, or raw data beside
/// the file; wrong expectations fail every config, and a data file of the wrong size is one
/// error naming the field.
#[test]
fn reference_arguments_are_the_expected_outputs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("k.cu"), "extern \"C\" __global__ void k(const float* x, float* y) {}\n").unwrap();
    let t1 = |reference: serde_json::Value| {
        let v = serde_json::json!({
            "ConfigurationSpace": {"TuningParameters": [{"Name": "block_size_x", "Type": "int", "Values": "[32, 64, 128]", "Default": 64}]},
            "KernelSpecification": {
                "Language": "CUDA", "KernelName": "k", "KernelFile": "k.cu", "ProblemSize": [64],
                "Arguments": [
                    {"Name": "x", "Type": "float", "Size": 64, "FillType": "Constant", "FillValue": 1.5, "AccessType": "ReadOnly", "MemoryType": "Vector"},
                    {"Name": "y", "Type": "float", "Size": 64, "FillType": "Constant", "FillValue": 0, "AccessType": "WriteOnly", "MemoryType": "Vector", "Output": 1}
                ],
                "ReferenceArguments": reference
            }
        });
        let p = dir.path().join("t1.json");
        std::fs::write(&p, v.to_string()).unwrap();
        Spec::load(&p)
    };
    let tune = |spec: Spec| {
        let job = spec.job("cuda", 0).unwrap();
        let fake = FakeBackend::new(Limits::preset("h100").unwrap().1, |_: &Config| 1e-3);
        Tuner::new(fake).tune(&job, &TuneOptions { compile_threads: Some(2), ..Default::default() })
    };
    // The fake kernel writes y = x: 1.5 everywhere.
    let r = tune(t1(serde_json::json!([{"Name": "y_ref", "TargetName": "y", "FillType": "Constant", "FillValue": 1.5}])).unwrap()).unwrap();
    assert_eq!(r.reference, "expected outputs (y: constant 1.5)");
    assert!(r.failures.is_empty() && r.results.iter().all(|x| x.verified), "{:?}", r.failures);
    let e = tune(t1(serde_json::json!([{"Name": "y_ref", "TargetName": "y", "FillType": "Constant", "FillValue": 2.0}])).unwrap()).unwrap_err().to_string();
    assert!(e.contains("all 3 configs gave the wrong output: `y`: 64 of 64 elements differ"), "{e}");
    let raw: Vec<u8> = std::iter::repeat_n(1.5f32.to_le_bytes(), 64).flatten().collect();
    std::fs::write(dir.path().join("y.bin"), &raw).unwrap();
    let r = tune(t1(serde_json::json!([{"Name": "y_ref", "TargetName": "y", "FillType": "BinaryRaw", "DataSource": "y.bin"}])).unwrap()).unwrap();
    assert!(r.failures.is_empty(), "{:?}", r.failures);
    std::fs::write(dir.path().join("short.bin"), &raw[..12]).unwrap();
    let e = t1(serde_json::json!([{"Name": "y_ref", "TargetName": "y", "FillType": "BinaryRaw", "DataSource": "short.bin"}])).unwrap_err();
    assert_eq!(e.field, "KernelSpecification.ReferenceArguments[0].DataSource");
    assert!(e.message.contains("has 12 bytes; 64 elements of float need 256"), "{}", e.message);
    let e = t1(serde_json::json!([{"Name": "r", "TargetName": "z", "FillType": "Constant"}])).unwrap_err();
    assert!(e.message.contains("`z` is not a Vector argument"), "{}", e.message);
}
