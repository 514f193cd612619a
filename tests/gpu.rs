//! The GPU suite for published kernels and several GPUs: the `kerntune` binary on real NVIDIA
//! GPUs, run by `scripts/gpu-check.sh tests` on the GPU machine. Without a CUDA device each test
//! says it skipped (and fails when `KERNTUNE_REQUIRE_DEVICE` names cuda).
//!
//! - the planted faults and the four published-kernel cases of `examples/faults` tune to
//!   completion (or, where every config faults, end with one message) with the right diagnosis;
//! - with two or more GPUs, `--devices all` measures on each and picks the one-device winner,
//!   and `kill -9` of one device's worker mid-tune costs a re-run, not a failure; through
//!   wgpu too, where two GPU adapters of one model are found;
//! - a problem that fits the GPU's free memory only once is tuned, restoring its buffers from
//!   host memory, and one that does not fit at all ends with one message, through CUDA and
//!   through wgpu on Vulkan.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn bin() -> PathBuf {
    // Shipped to the GPU machine, the binary sits beside the repository's copy.
    std::env::var_os("KERNTUNE_BIN").map(PathBuf::from).unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_kerntune")))
}

fn cache() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn kerntune(cache: &Path, args: &[&str]) -> Output {
    Command::new(bin()).args(args).env("KERNTUNE_CACHE_DIR", cache).env_remove("KERNTUNE_LOG").output().expect("kerntune runs")
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// The number of CUDA devices, or `None` (skipped) without one.
fn cuda_devices(what: &str) -> Option<usize> {
    let d = cache();
    let o = kerntune(d.path(), &["devices", "--backend", "cuda", "--json"]);
    let n = serde_json::from_slice::<serde_json::Value>(&o.stdout).ok().and_then(|v| v.as_array().map(|a| a.len())).unwrap_or(0);
    if !o.status.success() || n == 0 {
        kerntune::testing::skipped_without_device("cuda", &format!("{what}: no CUDA device"), &format!("`kerntune devices` finds none: {}", text(&o)));
        return None;
    }
    Some(n)
}

fn example(name: &str) -> String {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/faults").join(name);
    let p = if here.exists() { here } else { PathBuf::from("examples/faults").join(name) };
    p.display().to_string()
}

#[test]
fn planted_faults_are_survived_and_named() {
    if cuda_devices("planted faults").is_none() {
        return;
    }
    let d = cache();
    let o = kerntune(d.path(), &["tune", &example("faults.toml"), "--backend", "cuda", "--top", "14", "--no-db"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("winner: FAULT=0"), "{t}");
    for cause in ["compile failed", "device lost", "timed out", "wrong output"] {
        assert!(t.contains(&format!(" × {cause}:")), "`{cause}` is a cause: {t}");
    }
}

/// NaN and infinity where the reference is finite, counted by the device comparison kernel
/// (CUDA compares f32 outputs on the device): the same words as the host's on wgpu.
#[test]
fn nan_or_infinity_where_the_reference_is_finite_is_named_on_the_device() {
    if cuda_devices("non-finite outputs").is_none() {
        return;
    }
    let d = cache();
    let o = kerntune(d.path(), &["tune", &example("nonfinite.toml"), "--backend", "cuda", "--no-db", "--json"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("stdout is JSON ({e}): {t}"));
    let causes = v[0]["causes"].as_array().unwrap();
    assert_eq!(causes.len(), 1, "{causes:?}");
    let message = causes[0]["message"].as_str().unwrap();
    assert!(message.contains("1 of 1048576 elements differ") && message.contains("; 1 is NaN or infinite where the reference is finite"), "{message}");
    let diagnosis = causes[0]["diagnosis"].to_string();
    assert!(diagnosis.contains("all 11 configs that computed a wrong output wrote NaN or infinity where the reference is finite"), "{diagnosis}");
    assert!(!diagnosis.contains("verify.mismatches"), "{diagnosis}");
}

#[test]
fn a_kernel_that_prints_and_asserts_is_tuned_and_told() {
    if cuda_devices("prints and asserts").is_none() {
        return;
    }
    let d = cache();
    // Its worker's standard output is its pipe to the tuner: before, the printed line broke it
    // and every config failed; `--json`'s output stays JSON.
    let o = kerntune(d.path(), &["tune", &example("prints.toml"), "--backend", "cuda", "--no-db", "--json"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("stdout is JSON ({e}): {t}"));
    let r = &v[0];
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("warning: the kernel prints to standard output (device printf): ") && stderr.contains("`triad: n = 1048576, "), "{stderr}");
    let notes = r["notes"].to_string();
    assert!(notes.contains("the kernel printed to standard output (device printf) in ") && notes.contains("`triad: n = 1048576, "), "{notes}");
    // kerntune's assert.h compiled it; the two configs over 1024 elements per block assert.
    let cause = &r["causes"][0];
    assert_eq!(cause["count"], 2, "{cause}");
    assert!(cause["message"].as_str().unwrap().contains("Assertion `WG_SIZE * PER_THREAD <= 1024` failed."), "{cause}");
    assert!(cause["diagnosis"].to_string().contains(r#"[space] restrictions = [\"WG_SIZE * PER_THREAD <= 1024\"]"#), "{cause}");
    let w = &r["winner"]["params"];
    assert!(w[0][1].as_i64().unwrap() * w[1][1].as_i64().unwrap() <= 1024, "{w}");
}

#[test]
fn an_invalid_default_is_never_run() {
    if cuda_devices("invalid default").is_none() {
        return;
    }
    let d = cache();
    let o = kerntune(d.path(), &["tune", &example("invalid_default.toml"), "--backend", "cuda", "--no-db", "--json"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let r = &v[0];
    assert!(r["notes"][0].as_str().unwrap().contains("violates restriction 1 (`FAULT != 2`): it was not run"), "{}", r["notes"]);
    assert!(r["results"].as_array().unwrap().iter().all(|x| x["config"]["params"][0][1] != 2), "FAULT=2 never ran");
    assert_eq!(r["winner"]["params"][0][1], 0, "{}", r["winner"]);
}

#[test]
fn a_reference_that_faults_is_replaced_by_the_next_candidate() {
    if cuda_devices("reference that faults").is_none() {
        return;
    }
    let d = cache();
    let o = kerntune(d.path(), &["tune", &example("reference_faults.toml"), "--backend", "cuda", "--no-db"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("note: reference: the outputs of FAULT=0,WG_SIZE=128"), "{t}");
    assert!(t.contains("after 2 config(s) before it failed"), "{t}");
    assert!(t.contains("2 × device lost"), "the two faulting configs are one cause: {t}");
    assert!(t.contains("winner: FAULT=0"), "{t}");
}

#[test]
fn a_read_past_a_buffer_is_diagnosed_once() {
    if cuda_devices("read past a buffer").is_none() {
        return;
    }
    let d = cache();
    let o = kerntune(d.path(), &["tune", &example("read_past.toml"), "--backend", "cuda", "--no-db", "--strategy", "random", "--budget", "6"]);
    let t = text(&o);
    println!("{t}");
    // Every launch reads past `in`: where that is unmapped the reference faults, and so does
    // every other config; one message names the cause and the buffer.
    assert!(!o.status.success(), "{t}");
    assert!(t.contains("all 6 configs faulted"), "{t}");
    assert!(t.contains("`in` holds exactly the problem's 4096×4096 = 16777216 elements"), "{t}");
    if Path::new("/usr/local/cuda/bin/compute-sanitizer").exists() {
        assert!(t.contains("compute-sanitizer (memcheck): Invalid __global__ read"), "{t}");
        assert!(t.contains("buffer `in`"), "the sanitizer's allocation is named: {t}");
    }
}

#[test]
fn a_parameter_that_changes_the_output_is_named_first() {
    if cuda_devices("output by design").is_none() {
        return;
    }
    let d = cache();
    let o = kerntune(d.path(), &["tune", &example("by_design.toml"), "--backend", "cuda", "--no-db"]);
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{out}{err}");
    let first = out.lines().next().unwrap_or("");
    assert!(first.starts_with("warning: 12 of the 16 verified configs disagree with the reference; `STEPS` tells them apart"), "{out}");
    assert!(first.contains("--reference none"), "{first}");
    assert!(out.contains("winner: block_size_x=") && out.contains(",STEPS=1 "), "{out}");
    // With no reference the same file tunes every config.
    let o = kerntune(d.path(), &["tune", &example("by_design.toml"), "--backend", "cuda", "--no-db", "--reference", "none"]);
    let t = text(&o);
    assert!(o.status.success() && !t.contains("failures:") && !t.contains("warning:"), "{t}");
}

/// The shipped reduction (examples/reduction: a partial sum per block, as many blocks as
/// `num_blocks`) through CUDA: compared by its sum every config passes; element by element the
/// warning says to compare sums, and the device comparison counts the elements written where the
/// reference's were not; a config that drops elements fails with both sums.
#[test]
fn partial_results_are_compared_by_their_sum() {
    if cuda_devices("partial results").is_none() {
        return;
    }
    let d = cache();
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/reduction/reduction.toml");
    let spec = if here.exists() { here } else { PathBuf::from("examples/reduction/reduction.toml") };
    let spec = spec.display().to_string();
    let o = kerntune(d.path(), &["tune", &spec, "--backend", "cuda", "--no-db"]);
    let t = text(&o);
    assert!(o.status.success() && !t.contains("failures:") && !t.contains("warning:"), "{t}");
    assert!(t.contains("evaluated 30 (0 from the database)") && t.contains("verification: default config; partial by its sum"), "{t}");
    let o = kerntune(d.path(), &["tune", &spec, "--backend", "cuda", "--no-db", "--compare", "partial=elements", "--top", "1"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.lines().next().is_some_and(|l| l.starts_with("warning: ") && l.contains("--compare partial=sum")), "{t}");
    assert!(t.contains("were written where the reference's were not") && t.contains("were never written"), "{t}");
    // A kernel that leaves out the last 1024 elements when DROP = 1.
    let dir = d.path();
    std::fs::write(dir.join("drop.cu"), std::fs::read_to_string(spec.replace(".toml", ".cu")).unwrap().replace("i < n;", "i < n - DROP * 1024;")).unwrap();
    let body = std::fs::read_to_string(&spec)
        .unwrap()
        .replace("reduction.cu", "drop.cu")
        .replace("num_blocks = {", "DROP = [0, 1]\nnum_blocks = {")
        .replace("default = { block_size_x = 256 }", "default = { block_size_x = 256, DROP = 0 }");
    std::fs::write(
        dir.join("drop.toml"),
        body.replace("source = { cuda = \"drop.cu\", hip = \"drop.cu\", wgsl = \"reduction.wgsl\" }", "source = { cuda = \"drop.cu\" }"),
    )
    .unwrap();
    let o = kerntune(d.path(), &["tune", dir.join("drop.toml").to_str().unwrap(), "--backend", "cuda", "--no-db", "--top", "1"]);
    let t = text(&o);
    assert!(o.status.success() && t.contains("failures: wrong output 30 "), "{t}");
    assert!(t.contains("every config that computed a wrong output has DROP = 1 (30 configs)") && t.contains("the sum of its"), "{t}");
}

/// An output written backwards by REV = 1 configs, through CUDA: the device comparison finds
/// them different, the output read back agrees sorted and the warning says to compare sorted;
/// `--compare y=sorted` passes them (and fails SCALE = 3).
#[test]
fn reordered_outputs_are_compared_sorted() {
    if cuda_devices("reordered outputs").is_none() {
        return;
    }
    let d = cache();
    let dir = d.path();
    std::fs::write(
        dir.join("rev.cu"),
        "extern \"C\" __global__ void scale(float *y, const float *x, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[REV ? n - 1 - i : i] = SCALE * x[i];\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("rev.toml"),
        "[kernel]\nname = \"scale\"\nsource = { cuda = \"rev.cu\" }\n[params]\nblock_size_x = [64, 128]\nREV = [0, 1]\nSCALE = [2, 3]\n[space]\ndefault = { block_size_x = 64, REV = 0, SCALE = 2 }\n[[problems]]\nn = 1048576\n[[args]]\nname = \"y\"\ntype = \"f32\"\nlen = \"n\"\naccess = \"write\"\n[[args]]\nname = \"x\"\ntype = \"f32\"\nlen = \"n\"\ninit = \"random\"\n[[args]]\nname = \"n\"\ntype = \"i32\"\nvalue = \"n\"\n[launch]\nproblem_size = [\"n\"]\n",
    )
    .unwrap();
    let spec = dir.join("rev.toml");
    let o = kerntune(dir, &["tune", spec.to_str().unwrap(), "--backend", "cuda", "--no-db", "--top", "1"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.lines().next().is_some_and(|l| l.starts_with("warning: ") && l.contains("--compare y=sorted")), "{t}");
    assert!(t.contains("sorted, they agree (the same values in another order)"), "{t}");
    let o = kerntune(dir, &["tune", spec.to_str().unwrap(), "--backend", "cuda", "--no-db", "--top", "1", "--compare", "y=sorted"]);
    let t = text(&o);
    assert!(o.status.success() && t.contains("failures: wrong output 4 ") && t.contains("compared sorted, its 1048576 written values cannot agree"), "{t}");
    assert!(t.contains("every config that computed a wrong output has SCALE = 3 (4 configs)"), "{t}");
}

/// A few elements allowed to differ, through the CUDA device comparison (its counters, not the
/// host's): FLIP = 1 configs add 1 to the first three elements of 1 Mi; they fail element by
/// element and pass with `--mismatches y=3`, and with two allowed the message says so.
#[test]
fn a_few_elements_may_differ_where_allowed() {
    if cuda_devices("mismatches").is_none() {
        return;
    }
    let d = cache();
    let dir = d.path();
    std::fs::write(dir.join("flip.cu"), "extern \"C\" __global__ void flip(float *y, const float *x, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] = 2.0f * x[i] + (FLIP && i < 3 ? 1.0f : 0.0f);\n}\n").unwrap();
    std::fs::write(
        dir.join("flip.toml"),
        "[kernel]\nname = \"flip\"\nsource = { cuda = \"flip.cu\" }\n[params]\nblock_size_x = [64, 128]\nFLIP = [0, 1]\n[space]\ndefault = { block_size_x = 64, FLIP = 0 }\n[[problems]]\nn = 1048576\n[[args]]\nname = \"y\"\ntype = \"f32\"\nlen = \"n\"\naccess = \"write\"\n[[args]]\nname = \"x\"\ntype = \"f32\"\nlen = \"n\"\ninit = \"random\"\n[[args]]\nname = \"n\"\ntype = \"i32\"\nvalue = \"n\"\n[launch]\nproblem_size = [\"n\"]\n",
    )
    .unwrap();
    let spec = dir.join("flip.toml");
    let tune = |flags: &[&str]| {
        let o = kerntune(dir, &[&["tune", spec.to_str().unwrap(), "--backend", "cuda", "--no-db", "--top", "1"], flags].concat());
        let t = text(&o);
        assert!(o.status.success(), "{t}");
        t
    };
    let t = tune(&[]);
    assert!(t.contains("failures: wrong output 2 ") && t.contains("`y`: 3 of 1048576 elements differ"), "{t}");
    let t = tune(&["--mismatches", "y=3"]);
    assert!(!t.contains("failures:"), "{t}");
    let t = tune(&["--mismatches", "y=2"]);
    assert!(t.contains("failures: wrong output 2 ") && t.contains("; more than the 2 allowed to differ (verify.mismatches)"), "{t}");
}

/// A CUDA source that includes the user's own headers (one beside it that includes another,
/// one through `-I`) compiles, NVRTC given them from memory; a second tune is a database hit.
/// Once a header is edited the kernel is a new one: measured again, nothing served from the
/// compile cache, and what the edit says compiles (here a name that breaks one config, and a
/// `__shared__` array beyond the 48 KiB a kernel may have statically for another). Tuned again
/// with `--remeasure`, neither failed config is compiled again: the compile cache keeps NVRTC's
/// refusals, and the summary says so.
#[test]
fn the_users_headers_compile_and_an_edit_is_a_new_kernel() {
    if cuda_devices("headers").is_none() {
        return;
    }
    let d = cache();
    let dir = d.path();
    for sub in ["kernels/detail", "include/ops"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    let tile = dir.join("kernels/tile.h");
    std::fs::write(&tile, "#pragma once\n#include \"detail/load.h\"\n#define SCALE 2.0f\n#define SCRATCH WG\n").unwrap();
    std::fs::write(dir.join("kernels/detail/load.h"), "#pragma once\n__device__ float load(const float* p, int i) { return p[i]; }\n").unwrap();
    std::fs::write(dir.join("include/ops/axpy.cuh"), "#pragma once\n__device__ float axpy(float a, float x, float y) { return a * x + y; }\n").unwrap();
    std::fs::write(
        dir.join("kernels/scale.cu"),
        "#include <cuda_fp16.h>\n#include \"tile.h\"\n#include <ops/axpy.cuh>\nextern \"C\" __global__ void scale(float* y, const float* x, int n) {\n    __shared__ float scratch[SCRATCH];\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    scratch[threadIdx.x] = i < n ? load(x, i) : 0.0f;\n    __syncthreads();\n    if (i < n) y[i] = axpy(SCALE, scratch[threadIdx.x], 1.0f);\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("scale.toml"),
        "[kernel]\nname = \"scale\"\nsource = { cuda = \"kernels/scale.cu\" }\noptions = { cuda = [\"-Iinclude\"] }\n[params]\nWG = [64, 128, 256]\n[[problems]]\nn = 1048576\n[[args]]\nname = \"y\"\ntype = \"f32\"\nlen = \"n\"\naccess = \"write\"\n[[args]]\nname = \"x\"\ntype = \"f32\"\nlen = \"n\"\ninit = \"random\"\n[[args]]\nname = \"n\"\ntype = \"i32\"\nvalue = \"n\"\n[launch]\ngrid = [\"div_ceil(n, WG)\"]\nblock = [\"WG\"]\n",
    )
    .unwrap();
    let spec = dir.join("scale.toml");
    // From another working folder: the headers are found from the spec's and the source's.
    let tune = |flags: &[&str]| {
        let o = Command::new(bin())
            .args([&["tune", spec.to_str().unwrap(), "--backend", "cuda", "--top", "1"], flags].concat())
            .env("KERNTUNE_CACHE_DIR", dir)
            .env_remove("KERNTUNE_LOG")
            .current_dir(std::env::temp_dir())
            .output()
            .unwrap();
        let t = text(&o);
        assert!(o.status.success(), "{t}");
        t
    };
    let t = tune(&[]);
    assert!(t.contains("compiled 3 in") && !t.contains("failures:") && !t.contains("from the compile cache"), "{t}");
    let t = tune(&[]);
    assert!(t.contains("database hit"), "{t}");
    std::fs::write(
        &tile,
        "#pragma once\n#include \"detail/load.h\"\n#if WG == 64\n#define SCALE undefined_scale\n#else\n#define SCALE 2.0f\n#endif\n#define SCRATCH (WG == 256 ? 16384 : WG)\n",
    )
    .unwrap();
    let t = tune(&[]);
    assert!(!t.contains("database hit") && !t.contains("from the compile cache"), "an edited header is a new kernel: {t}");
    let failures = "failures: compile failed 1, out of resources 1";
    assert!(t.contains("compiled 1 in") && t.contains(failures) && t.contains("undefined_scale") && t.contains("static shared memory"), "{t}");
    let t = tune(&["--remeasure"]);
    assert!(t.contains("compiled 1 in") && t.contains("; 1 from the compile cache"), "{t}");
    assert!(t.contains(failures) && t.contains("2 config(s) failed to compile before and were not compiled again"), "{t}");
}

/// The compile caches stay within `KERNTUNE_COMPILE_CACHE_MAX`: a tune of a second kernel that
/// takes them past it removes the first kernel's CUBINs (least recently used) and says so in its
/// notes; the second kernel's own stay, so tuning it again compiles nothing, while the first is
/// compiled again.
#[test]
fn the_compile_caches_stay_within_their_bound() {
    if cuda_devices("compile cache bound").is_none() {
        return;
    }
    let d = cache();
    let dir = d.path();
    let source = |scale: &str| {
        format!("extern \"C\" __global__ void scale(float* y, const float* x, int n) {{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] = {scale} * x[i];\n}}\n")
    };
    for (name, scale) in [("first", "2.0f"), ("second", "3.0f")] {
        std::fs::write(dir.join(format!("{name}.cu")), source(scale)).unwrap();
        std::fs::write(
            dir.join(format!("{name}.toml")),
            format!("[kernel]\nname = \"scale\"\nsource = {{ cuda = \"{name}.cu\" }}\n[params]\nWG = [32, 64, 128, 256, 512, 1024]\n[[problems]]\nn = 1048576\n[[args]]\nname = \"y\"\ntype = \"f32\"\nlen = \"n\"\naccess = \"write\"\n[[args]]\nname = \"x\"\ntype = \"f32\"\nlen = \"n\"\ninit = \"random\"\n[[args]]\nname = \"n\"\ntype = \"i32\"\nvalue = \"n\"\n[launch]\ngrid = [\"div_ceil(n, WG)\"]\nblock = [\"WG\"]\n"),
        )
        .unwrap();
    }
    let tune = |name: &str, max: &str, flags: &[&str]| {
        let spec = dir.join(format!("{name}.toml"));
        let o = Command::new(bin())
            .args([&["tune", spec.to_str().unwrap(), "--backend", "cuda", "--top", "1"], flags].concat())
            .env("KERNTUNE_CACHE_DIR", dir)
            .env("KERNTUNE_COMPILE_CACHE_MAX", max)
            .env_remove("KERNTUNE_LOG")
            .output()
            .unwrap();
        let t = text(&o);
        assert!(o.status.success(), "{t}");
        t
    };
    let t = tune("first", "2GiB", &[]);
    assert!(t.contains("compiled 6 in") && !t.contains("compile cache:"), "{t}");
    let o = kerntune(dir, &["cache", "show", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|_| panic!("{}", text(&o)));
    let (binaries, bytes) = (v["folders"][0]["binaries"].as_u64().unwrap(), v["folders"][0]["bytes"].as_u64().unwrap());
    assert_eq!(binaries, 6, "{v}");
    // Room for one and a half kernels' six: the second's six take the caches past it, and the
    // prune (down to 80 % of it, 1.2 kernels' worth) removes the least recently used, the first's.
    let max = (bytes * 3 / 2).to_string();
    let t = tune("second", &max, &[]);
    assert!(t.contains("compiled 6 in") && t.contains("compile cache: removed the ") && t.contains("least recently used entr"), "{t}");
    let o = kerntune(dir, &["cache", "show", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["folders"][0]["bytes"].as_u64().unwrap() <= bytes * 6 / 5, "{v}");
    let t = tune("second", &max, &["--remeasure"]);
    assert!(t.contains("; 6 from the compile cache") && !t.contains("compile cache: removed"), "the second kernel's CUBINs were kept: {t}");
    let t = tune("first", &max, &["--remeasure"]);
    assert!(!t.contains("; 6 from the compile cache"), "the first kernel's were removed: {t}");
    println!("{t}");
}

/// A published `.cu` file with its host program (`#include <stdio.h>`, `main` with `cudaMalloc`
/// and a launch), which NVRTC refuses: the one error says how to keep the file, and once its host
/// part is between `#ifndef __CUDACC_RTC__` and `#endif`, as it says, the kernel tunes.
#[test]
fn a_published_file_with_host_code_says_how_to_keep_it() {
    if cuda_devices("host code").is_none() {
        return;
    }
    let d = cache();
    let dir = d.path();
    let kernel = "extern \"C\" __global__ void add(float* y, const float* x, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] += x[i];\n}\n";
    let host = "int main() {\n    float *x, *y;\n    cudaMalloc(&x, 1024 * sizeof(float));\n    cudaMalloc(&y, 1024 * sizeof(float));\n    add<<<4, 256>>>(y, x, 1024);\n    cudaDeviceSynchronize();\n    printf(\"done\\n\");\n    return 0;\n}\n";
    let spec = "[kernel]\nname = \"add\"\nsource = { cuda = \"add.cu\" }\n[params]\nWG = [128, 256]\n[[problems]]\nn = 1048576\n[[args]]\nname = \"y\"\ntype = \"f32\"\nlen = \"n\"\naccess = \"readwrite\"\ninit = \"random\"\n[[args]]\nname = \"x\"\ntype = \"f32\"\nlen = \"n\"\ninit = \"random\"\n[[args]]\nname = \"n\"\ntype = \"i32\"\nvalue = \"n\"\n[launch]\ngrid = [\"div_ceil(n, WG)\"]\nblock = [\"WG\"]\n";
    std::fs::write(dir.join("add.toml"), spec).unwrap();
    let tune = || kerntune(dir, &["tune", dir.join("add.toml").to_str().unwrap(), "--backend", "cuda", "--no-db", "--top", "1"]);
    std::fs::write(dir.join("add.cu"), format!("#include <stdio.h>\n#include <cuda_runtime.h>\n{kernel}{host}")).unwrap();
    let o = tune();
    let t = text(&o);
    assert!(!o.status.success() && t.lines().filter(|l| l.starts_with("error:")).count() == 1, "{t}");
    assert!(t.contains("cannot open source file \"stdio.h\"") && t.contains("(`stdio.h` here)") && t.contains("`#ifndef __CUDACC_RTC__` and `#endif`"), "{t}");
    // The includes guarded, not the host code: NVRTC's refusal of `main` says what to do.
    std::fs::write(dir.join("add.cu"), format!("#ifndef __CUDACC_RTC__\n#include <stdio.h>\n#endif\n#include <cuda_runtime.h>\n{kernel}{host}")).unwrap();
    let t = text(&tune());
    assert!(t.contains("the source holds host code (`int main() {`), which NVRTC does not compile"), "{t}");
    std::fs::write(
        dir.join("add.cu"),
        format!("#ifndef __CUDACC_RTC__\n#include <stdio.h>\n#endif\n#include <cuda_runtime.h>\n{kernel}#ifndef __CUDACC_RTC__\n{host}#endif\n"),
    )
    .unwrap();
    let o = tune();
    let t = text(&o);
    assert!(o.status.success() && t.contains("winner: WG="), "{t}");
}

/// The processes running with every one of `vars` (`NAME=value`) in their environment (Linux;
/// this user's).
fn processes_with(vars: &[&str]) -> Vec<u32> {
    processes(|pid| std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|env| vars.iter().all(|want| env.split(|&b| b == 0).any(|v| v == want.as_bytes()))))
}

/// A value for [`TAG`] that marks one test's tune and the processes it starts (tests run side
/// by side, each with its own compilers).
fn tag(name: &str) -> String {
    format!("{name}-{}", std::process::id())
}

/// The variable a test's tune is marked with ([`tag`]).
const TAG: &str = "KERNTUNE_TEST_TAG";

/// The CUDA compiler processes a tune marked with `tag` started that are still there.
fn compilers_of(tag: &str) -> Vec<u32> {
    processes_with(&["KERNTUNE_CUDA_COMPILER=1", &format!("{TAG}={tag}")])
}

/// NVRTC compiles in compiler processes by default (no compile timeout): a tune of `-j 4`
/// starts four, ahead of its first compile, and no more; none outlives the tune. With
/// `KERNTUNE_COMPILE_ISOLATION=0` the compiles run on the tuner's threads: no compiler process.
#[test]
fn nvrtc_compiles_in_compiler_processes_by_default() {
    if cuda_devices("compiler processes").is_none() {
        return;
    }
    let d = cache();
    let dir = d.path();
    let kernel = "extern \"C\" __global__ void scale(float* y, const float* x, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] = 2.0f * x[i];\n}\n";
    std::fs::write(dir.join("scale.cu"), kernel).unwrap();
    let spec = "[kernel]\nname = \"scale\"\nsource = { cuda = \"scale.cu\" }\n[params]\nWG = [32, 64, 128, 256, 512, 1024]\n[[problems]]\nn = 1048576\n[[args]]\nname = \"y\"\ntype = \"f32\"\nlen = \"n\"\naccess = \"write\"\n[[args]]\nname = \"x\"\ntype = \"f32\"\nlen = \"n\"\ninit = \"random\"\n[[args]]\nname = \"n\"\ntype = \"i32\"\nvalue = \"n\"\n[launch]\ngrid = [\"div_ceil(n, WG)\"]\nblock = [\"WG\"]\n[verify]\nreference = \"none\"\n";
    std::fs::write(dir.join("scale.toml"), spec).unwrap();
    for isolation in ["", "0"] {
        let tag = tag(&format!("default-compilers{isolation}"));
        let mut child = Command::new(bin())
            .args(["tune", dir.join("scale.toml").to_str().unwrap(), "--backend", "cuda", "--no-db", "-j", "4"])
            .env("KERNTUNE_CACHE_DIR", dir.join(format!("cache{isolation}")))
            .env("CUDA_CACHE_PATH", dir.join(format!("nv{isolation}")))
            .env("KERNTUNE_COMPILE_ISOLATION", isolation)
            .env(TAG, &tag)
            .env_remove("KERNTUNE_LOG")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("kerntune runs");
        let mut most = 0;
        while child.try_wait().unwrap().is_none() {
            most = most.max(compilers_of(&tag).len());
            std::thread::sleep(Duration::from_millis(5));
        }
        let o = child.wait_with_output().unwrap();
        let t = text(&o);
        assert!(o.status.success() && t.contains("winner: WG="), "{t}");
        assert_eq!(most, if isolation.is_empty() { 4 } else { 0 }, "compiler processes at once, KERNTUNE_COMPILE_ISOLATION={isolation:?}: {t}");
        std::thread::sleep(Duration::from_secs(1));
        assert_eq!(compilers_of(&tag), Vec::<u32>::new(), "compiler processes left after the tune");
    }
}

/// The processes on this machine (Linux: `/proc`) that `keep` selects, in order.
fn processes(keep: impl Fn(u32) -> bool) -> Vec<u32> {
    let mut out: Vec<u32> =
        std::fs::read_dir("/proc").into_iter().flatten().flatten().filter_map(|e| e.file_name().to_str()?.parse().ok()).filter(|&p| keep(p)).collect();
    out.sort();
    out
}

/// A compile past `--compile-timeout` runs in a compiler process, which is killed: a kernel of
/// 10^5 macro-expanded statements (`L = 5`) fails each of its configs at 3 s of its own CPU
/// time, while the 100-statement ones (`L = 2`), which NVRTC kept waiting at 0.0 s of CPU beside
/// it when every compile ran on a thread of the tuner, compile and are measured; once the tune
/// has ended, no compiler process is left. The timeouts are stored: the same tune again
/// (`--force`) reads them back and waits for no compile, and one with a longer timeout compiles
/// them again, saying so.
#[test]
fn a_compile_past_the_timeout_is_killed_and_the_others_compile() {
    if cuda_devices("compile timeout").is_none() {
        return;
    }
    let d = cache();
    let dir = d.path();
    let kernel = "#define S a = a * 0.9999f + __sinf(a + (float)k); ++k;\n#define R10(s) s s s s s s s s s s\nextern \"C\" __global__ void rep(float* y, const float* x, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i >= n) return;\n    float a = x[i];\n    int k = 0;\n#if L == 2\n    R10(R10(S))\n#else\n    R10(R10(R10(R10(R10(S)))))\n#endif\n    y[i] = a;\n}\n";
    std::fs::write(dir.join("rep.cu"), kernel).unwrap();
    let spec = "[kernel]\nname = \"rep\"\nsource = { cuda = \"rep.cu\" }\n[params]\nWG = [128, 256]\nL = [2, 5]\n[[problems]]\nn = 1048576\n[[args]]\nname = \"y\"\ntype = \"f32\"\nlen = \"n\"\naccess = \"write\"\n[[args]]\nname = \"x\"\ntype = \"f32\"\nlen = \"n\"\ninit = \"random\"\n[[args]]\nname = \"n\"\ntype = \"i32\"\nvalue = \"n\"\n[launch]\ngrid = [\"div_ceil(n, WG)\"]\nblock = [\"WG\"]\n[verify]\nreference = \"none\"\n";
    std::fs::write(dir.join("rep.toml"), spec).unwrap();
    let tag = tag("compile-timeout");
    let db = dir.join("db.sqlite");
    let tune = |extra: &[&str]| {
        let t0 = Instant::now();
        let o = Command::new(bin())
            .args(["tune", dir.join("rep.toml").to_str().unwrap(), "--backend", "cuda", "--db", db.to_str().unwrap(), "--json"])
            .args(extra)
            .env("KERNTUNE_CACHE_DIR", dir)
            .env("CUDA_CACHE_PATH", dir.join("nv"))
            .env(TAG, &tag)
            .env_remove("KERNTUNE_LOG")
            .output()
            .expect("kerntune runs");
        let wall = t0.elapsed().as_secs_f64();
        let t = text(&o);
        assert!(o.status.success(), "{t}");
        let reports: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {t}"));
        (reports[0].clone(), wall, t)
    };
    let long = |x: &serde_json::Value| x["config"]["params"].as_array().is_some_and(|p| p.iter().any(|kv| kv[0] == "L" && kv[1] == 5));
    let (r, wall, t) = tune(&["--compile-timeout", "3s"]);
    let results = r["results"].as_array().unwrap_or_else(|| panic!("{t}"));
    for x in results {
        let (config, message) = (&x["config"]["params"], x["message"].as_str().unwrap_or(""));
        if long(x) {
            assert!(
                message.starts_with("compile timed out: still compiling after")
                    && message.contains("s of its own CPU time (")
                    && message.contains("(its compiler process was killed); stored"),
                "{config}: {message}"
            );
        } else {
            assert!(x["outcome"] == "measured", "{config} compiles and is measured: {x}");
        }
    }
    assert_eq!(results.len(), 4, "{t}");
    assert!(wall < 30.0, "{wall:.1} s: {t}");
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(compilers_of(&tag), Vec::<u32>::new(), "compiler processes left after the tune");

    // Again under the same timeout: the timeouts read back, no compile waited for.
    let (r, wall, t) = tune(&["--compile-timeout", "3s", "--force"]);
    let results = r["results"].as_array().unwrap_or_else(|| panic!("{t}"));
    assert_eq!(results.len(), 4, "{t}");
    assert!(results.iter().filter(|x| long(x)).all(|x| x["from_db"] == true && x["outcome"] == "failed"), "{t}");
    assert!(wall < 3.0, "waited for a compile again: {wall:.1} s: {t}");
    // A longer timeout: compiled again, said, and given up on again at 4 s.
    let (r, wall, t) = tune(&["--compile-timeout", "4s", "--force"]);
    let notes: Vec<&str> = r["notes"].as_array().unwrap().iter().filter_map(|n| n.as_str()).collect();
    assert!(
        notes.contains(&"database: 2 configs whose compile timed out under the 3 s compile timeout are compiled again under 4 s ([tune] compile_timeout, --compile-timeout)"),
        "{notes:?}"
    );
    let results = r["results"].as_array().unwrap_or_else(|| panic!("{t}"));
    assert!(
        results.iter().filter(|x| long(x)).all(|x| x["from_db"] == false && x["message"].as_str().unwrap_or("").contains("past the compile timeout of 4.0 s")),
        "{t}"
    );
    assert!(wall > 4.0 && wall < 30.0, "{wall:.1} s: {t}");
}

/// `--memcheck` runs the winner once under compute-sanitizer: a kernel that reads one element
/// past its input (and does not use it, so its output passes verification; 1,000,001 floats, so
/// that the read lands in the 252 bytes between the buffer's end and its guard, rounded to 256
/// bytes as `cuMemAlloc` aligns, and does not fault) is reported with the buffer named, as a
/// warning at the top, on a tune and on the database hit after it, and in `--json`; the same
/// kernel reading within bounds is said to be clean. With 1,000,000 floats the same read is the
/// guard's first byte: every config faults while tuning, and the one message names `x`.
#[test]
fn the_winner_is_run_under_the_memory_checker_when_asked() {
    if cuda_devices("memcheck").is_none() {
        return;
    }
    if !Path::new("/usr/local/cuda/bin/compute-sanitizer").exists() {
        kerntune::testing::skipped_without_device("cuda", "memcheck: no compute-sanitizer", &"/usr/local/cuda/bin/compute-sanitizer is missing");
        return;
    }
    let d = cache();
    let dir = d.path();
    std::fs::write(
        dir.join("shift.cu"),
        "extern \"C\" __global__ void shift(float* y, const float* x, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i >= n) return;\n#if OVERREAD\n    float next = x[i + 1];\n    y[i] = x[i] + (i + 1 < n ? next : 0.0f);\n#else\n    y[i] = x[i] + (i + 1 < n ? x[i + 1] : 0.0f);\n#endif\n}\n",
    )
    .unwrap();
    let spec_n = |overread: u32, n: u32| {
        let p = dir.join(format!("shift{overread}_{n}.toml"));
        std::fs::write(&p, format!("[kernel]\nname = \"shift\"\nsource = {{ cuda = \"shift.cu\" }}\n[params]\nWG = [128, 256]\nOVERREAD = [{overread}]\n[[problems]]\nn = {n}\n[[args]]\nname = \"y\"\ntype = \"f32\"\nlen = \"n\"\naccess = \"write\"\n[[args]]\nname = \"x\"\ntype = \"f32\"\nlen = \"n\"\ninit = \"random\"\n[[args]]\nname = \"n\"\ntype = \"i32\"\nvalue = \"n\"\n[launch]\ngrid = [\"div_ceil(n, WG)\"]\nblock = [\"WG\"]\n")).unwrap();
        p.display().to_string()
    };
    let spec = |overread: u32| spec_n(overread, 1_000_001);
    let tune = |spec: &str, flags: &[&str]| {
        let o = kerntune(dir, &[&["tune", spec, "--backend", "cuda", "--memcheck", "--top", "1"], flags].concat());
        let t = text(&o);
        assert!(o.status.success(), "{t}");
        t
    };
    let over = spec(1);
    for (run, t) in [("tune", tune(&over, &[])), ("database hit", tune(&over, &[]))] {
        assert!(t.starts_with("warning: memcheck: the winner (WG=") || t.contains("\nwarning: memcheck: the winner (WG="), "{run}: {t}");
        assert!(t.contains("passed verification, but compute-sanitizer (memcheck) reported: Invalid __global__ read of size 4 bytes"), "{run}: {t}");
        assert!(t.contains("buffer `x`") && t.contains("reads or writes memory past its buffers"), "{run}: {t}");
        assert_eq!(t.contains("database hit"), run == "database hit", "{t}");
    }
    let o = kerntune(dir, &["tune", &over, "--backend", "cuda", "--memcheck", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
    assert_eq!(v[0]["memcheck"]["verdict"], "out of bounds", "{v}");
    let t = tune(&spec(0), &[]);
    assert!(!t.contains("warning: memcheck"), "{t}");
    assert!(t.contains("memcheck: compute-sanitizer (memcheck, 4194304 bytes of padding after each allocation) ran the winner (WG="), "{t}");
    assert!(t.contains("and saw no out-of-bounds access"), "{t}");
    let o = kerntune(dir, &["tune", &spec_n(1, 1_000_000), "--backend", "cuda", "--no-db"]);
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    assert!(t.contains("all 2 configs faulted"), "{t}");
    assert!(t.contains("compute-sanitizer (memcheck): Invalid __global__ read") && t.contains("buffer `x`"), "{t}");
}

/// A kernel that works in place on a buffer the spec leaves `access = "read"` (the default):
/// the tune goes on (the buffer is restored before every verified launch) and says at once, and
/// in its notes, that the reference config wrote it and how to have it compared; declared
/// `readwrite`, nothing is said.
#[test]
fn an_input_the_kernel_writes_is_named() {
    if cuda_devices("an input written").is_none() {
        return;
    }
    let d = cache();
    let dir = d.path();
    std::fs::write(
        dir.join("inplace.cu"),
        "extern \"C\" __global__ void inplace(float* img, float* out, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i >= n) return;\n    img[i] = img[i] * 0.5f + 1.0f;\n    out[i] = img[i];\n}\n",
    )
    .unwrap();
    let spec = |access: &str| {
        let p = dir.join(format!("inplace{}.toml", access.len()));
        std::fs::write(&p, format!("[kernel]\nname = \"inplace\"\nsource = {{ cuda = \"inplace.cu\" }}\n[params]\nWG = [128, 256]\n[[problems]]\nn = 1000000\n[[args]]\nname = \"img\"\ntype = \"f32\"\nlen = \"n\"\ninit = \"random\"\n{access}[[args]]\nname = \"out\"\ntype = \"f32\"\nlen = \"n\"\naccess = \"write\"\n[[args]]\nname = \"n\"\ntype = \"i32\"\nvalue = \"n\"\n[launch]\ngrid = [\"div_ceil(n, WG)\"]\nblock = [\"WG\"]\n")).unwrap();
        p.display().to_string()
    };
    let line = "the reference config (WG=128) writes `img`, declared `access = \"read\"` (the default): 1000000 of its 1000000 elements changed.";
    let o = kerntune(dir, &["tune", &spec(""), "--backend", "cuda", "--no-db"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains(&format!("warning: {line}")) && t.contains(&format!("note: {line}")), "{t}");
    assert!(t.contains("winner: WG="), "{t}");
    let o = kerntune(dir, &["tune", &spec("access = \"readwrite\"\n"), "--backend", "cuda", "--no-db"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(!t.contains("writes `img`"), "{t}");
}

/// On a GPU whose memory another process holds (here this test, which allocates all but what
/// the case needs), a triad whose two 4 GiB buffers fit once but not with a device copy of each
/// is tuned, its buffers restored from host memory and its output compared on the host, and the
/// report says so; with one buffer's room less, the tune ends with one message that says what
/// the buffers need and what the GPU has free.
#[test]
fn a_problem_that_fits_the_gpu_only_once_is_tuned_with_restores_from_the_host() {
    if cuda_devices("device memory").is_none() {
        return;
    }
    // Room for the buffers, the reserve the workspace keeps (1/64 of the memory, the L2 flush
    // buffer) and the tune's two contexts (the CLI's and its worker's), not for one copy more;
    // then for one buffer and 2 GiB.
    fits_once("cuda", 4 * GIB, |total| total / 64 + GIB / 4 + 2 * GIB, 2 * GIB);
}

/// The same through Vulkan on the same GPU (wgpu, whose adapter says what is free through
/// `VK_EXT_memory_budget`): two 1020 MiB buffers (the most a 1-D grid of 65,535 workgroups of
/// 4,096 elements covers in whole MiB) with 1.5 GiB beside them for the two processes' devices,
/// too little for a copy of `y` and the 2.2 GiB reserve; then one buffer and 0.5 GiB.
#[test]
fn a_problem_that_fits_the_gpu_only_once_is_tuned_through_vulkan_too() {
    if cuda_devices("device memory through wgpu").is_none() {
        return;
    }
    fits_once("wgpu", 1020 << 20, |_| 3 * GIB / 2, GIB / 2);
}

const GIB: usize = 1 << 30;

/// Tunes the triad through `backend` on device 0 with two buffers of `buffer` bytes while this
/// process holds all the device's memory but the buffers and `beside(total)`: the tune ends
/// with a winner, both buffers or `y` restored from the host and `y` compared on the host; then
/// with room for one buffer and `beside_one` only, it ends with one message.
fn fits_once(backend: &str, buffer: usize, beside: impl Fn(usize) -> usize, beside_one: usize) {
    let ctx = cudarc::driver::CudaContext::new(0).expect("a context on device 0");
    ctx.bind_to_thread().expect("the context bound");
    let (free, total) = ctx.mem_get_info().expect("free memory");
    let leave = 2 * buffer + beside(total);
    assert!(free > leave + GIB, "device 0 has only {free} B free");
    let ballast = Ballast::new(free - leave);
    let triad = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/triad/triad.toml");
    let triad = if triad.exists() { triad } else { PathBuf::from("examples/triad/triad.toml") };
    let n = format!("N={}", buffer / 4);
    let args = ["tune", triad.to_str().unwrap(), "--backend", backend, "--no-db", "--key", &n, "--strategy", "random", "--budget", "4", "--seed", "1"];
    let size = kerntune::limits::human_bytes(buffer as u64);
    let d = cache();
    let o = kerntune(d.path(), &args);
    let t = text(&o);
    println!("{t}");
    assert!(o.status.success() && t.contains("winner: "), "{t}");
    assert!(!t.contains("failures:"), "{t}");
    // CUDA keeps a copy of every buffer, wgpu of the writable ones only (`x` is bound read-only).
    let copies = if backend == "cuda" { format!("x ({size}), y ({size})") } else { format!("y ({size})") };
    assert!(t.contains(&format!("device memory: no room for a device copy of {copies} (")) && t.contains("restored from host memory"), "{t}");
    assert!(t.contains(&format!("no room for the reference of output y ({size}) on the device")), "{t}");
    // Less room than the two buffers need, once the tune's processes have given theirs back.
    let deadline = Instant::now() + Duration::from_secs(30);
    let free = loop {
        let (free, _) = ctx.mem_get_info().expect("free memory");
        if free + GIB / 2 >= leave || Instant::now() > deadline {
            break free;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(free > buffer + beside_one + GIB, "device 0 has only {free} B free");
    let more = Ballast::new(free - (buffer + beside_one));
    let o = kerntune(d.path(), &args);
    let t = text(&o);
    println!("{t}");
    assert!(!o.status.success(), "{t}");
    let need = kerntune::limits::human_bytes(2 * buffer as u64);
    assert!(t.contains(&format!("out of device memory: the problem's buffers need {need} (x {size}, y {size}), and ")), "{t}");
    assert!(t.contains("; tune a smaller problem, or free the GPU's memory"), "{t}");
    // One message for the problem, not a failure per config.
    assert!(!t.contains("configs failed") && !t.contains("every device"), "{t}");
    drop((more, ballast, ctx));
}

/// Device memory held (allocated at once, not from a stream's pool), freed when dropped; the
/// context that allocated it must be current on this thread.
struct Ballast(cudarc::driver::sys::CUdeviceptr);

impl Ballast {
    fn new(bytes: usize) -> Ballast {
        // SAFETY: a plain allocation in the current context, never read.
        Ballast(unsafe { cudarc::driver::result::malloc_sync(bytes) }.expect("the ballast"))
    }
}

impl Drop for Ballast {
    fn drop(&mut self) {
        // SAFETY: allocated by `new`, freed once.
        unsafe {
            let _ = cudarc::driver::result::free_sync(self.0);
        }
    }
}

/// The workers (this CLI's children other than its compiler processes) serving `pid`.
fn workers(pid: u32) -> Vec<u32> {
    let compilers = processes_with(&["KERNTUNE_CUDA_COMPILER=1"]);
    processes(|p| kerntune::backend::process_parent(p) == Some(pid) && !compilers.contains(&p))
}

/// Held by the tests that tune on every GPU, one at a time. Side by side (the harness runs tests
/// in threads) each slows the other's workers, and on two H200s (2026-11-28) the kill below once
/// cost no device, likely because it landed while the slowed victim was still starting (a
/// worker killed while starting is started again).
static EVERY_GPU: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn several_gpus_share_a_tune_and_survive_a_killed_worker() {
    let Some(n) = cuda_devices("several GPUs") else { return };
    if n < 2 {
        kerntune::testing::skipped("several GPUs: this machine has one");
        return;
    }
    let _every = EVERY_GPU.lock().unwrap_or_else(|p| p.into_inner());
    let d = cache();
    let all_args = every_device_agrees_with_one(d.path(), "cuda", n);
    let all_args: Vec<&str> = all_args.iter().map(String::as_str).collect();
    // kill -9 of one device's worker mid-tune: at 8192³ (each launch 64× longer, the compiles
    // cached) the measuring outlasts the kill by seconds. (At 4096³ it did on two H200s, but no
    // longer on two H100s once the shortlist spanned devices: the tune was over by the kill.)
    let big: Vec<&str> = all_args.iter().map(|a| if *a == "M=2048,N=2048,K=2048" { "M=8192,N=8192,K=8192" } else { a }).collect();
    let child = Command::new(bin()).args(&big).env("KERNTUNE_CACHE_DIR", d.path()).stdout(std::process::Stdio::piped()).spawn().unwrap();
    let t0 = Instant::now();
    let mut killed = None;
    while t0.elapsed() < Duration::from_secs(120) && killed.is_none() {
        let w = workers(child.id());
        if w.len() >= 2 {
            // Past the workers' start (their context and buffers take about a second at
            // 8192³, and a worker killed while starting is simply started again), well before
            // the measuring ends.
            std::thread::sleep(Duration::from_secs(3));
            let victim = *w.last().unwrap();
            let _ = Command::new("kill").args(["-9", &victim.to_string()]).status();
            killed = Some(victim);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let o = child.wait_with_output().unwrap();
    assert!(killed.is_some(), "two workers ran");
    assert!(o.status.success(), "{}", text(&o));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let lost: Vec<&serde_json::Value> = r[0]["devices"].as_array().unwrap().iter().filter(|d| !d["lost"].is_null()).collect();
    assert_eq!(lost.len(), 1, "one device reported lost: {}", r[0]["devices"]);
    assert!(lost[0]["lost"].as_str().unwrap().contains("worker died"), "{}", lost[0]["lost"]);
    assert!(r[0]["failures"].get("device lost").is_none(), "no config blamed: {}", r[0]["failures"]);
}

/// Two or more GPUs of one model through wgpu (Vulkan): `--devices all` takes the adapters of
/// the first adapter's model (a software adapter beside them is left out, with a line), each
/// measures in its own worker from the recipes the parent compiled, and the winner is the
/// one-device tune's (or tied with it).
#[test]
fn several_gpus_share_a_wgpu_tune() {
    let d = cache();
    let o = kerntune(d.path(), &["devices", "--backend", "wgpu", "--json"]);
    let list: Vec<serde_json::Value> = serde_json::from_slice::<serde_json::Value>(&o.stdout).ok().and_then(|v| v.as_array().cloned()).unwrap_or_default();
    let Some(first) = list.first() else {
        kerntune::testing::skipped_without_device("wgpu", "several GPUs through wgpu: no adapter", &format!("`kerntune devices` finds none: {}", text(&o)));
        return;
    };
    let model = &first["target"]["fingerprint"];
    let same = list.iter().filter(|a| a["target"]["fingerprint"] == *model).count();
    if same < 2 || first["details"].as_array().is_some_and(|d| d.iter().any(|kv| kv[0] == "type" && kv[1] == "Cpu")) {
        kerntune::testing::skipped("several GPUs through wgpu: fewer than two GPU adapters of one model");
        return;
    }
    let _every = EVERY_GPU.lock().unwrap_or_else(|p| p.into_inner());
    every_device_agrees_with_one(d.path(), "wgpu", same);
}

/// Tunes the example matmul at 2048³ through `backend` on its first device, then with
/// `--devices all`: `n` devices each measure, none is lost, and the winner is the one-device
/// tune's (or tied with it). Returns the arguments of the run on every device.
fn every_device_agrees_with_one(cache: &Path, backend: &str, n: usize) -> Vec<String> {
    let spec = example("../matmul/matmul.toml");
    let args = ["tune", &spec, "--backend", backend, "--key", "M=2048,N=2048,K=2048", "--no-db", "--json"];
    let one: serde_json::Value = serde_json::from_slice(&kerntune(cache, &args).stdout).unwrap();
    let mut all_args = args.to_vec();
    all_args.extend(["--devices", "all"]);
    let o = kerntune(cache, &all_args);
    assert!(o.status.success(), "{}", text(&o));
    let all: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let devices = all[0]["devices"].as_array().unwrap();
    assert_eq!(devices.len(), n, "{devices:?}");
    assert!(devices.iter().all(|d| d["measured"].as_u64().unwrap() > 0 && d["lost"].is_null()), "{devices:?}");
    let w1 = &one[0]["winner"];
    let band: Vec<&serde_json::Value> = all[0]["tie_band"].as_array().unwrap().iter().chain(one[0]["tie_band"].as_array().unwrap()).collect();
    assert!(all[0]["winner"] == *w1 || band.contains(&&all[0]["winner"]) || band.contains(&w1), "{} vs {}", all[0]["winner"], w1);
    all_args.iter().map(|a| a.to_string()).collect()
}

/// Another process on the GPU while configs are timed (two shards given no GPU of their own, a
/// job beside the tune) is said: a warning when first seen, and the summary's note naming it;
/// alone, nothing. The other here is a second kerntune tune through CUDA (its tuner and its
/// kernel worker both hold the GPU). Where NVML names process ids from another PID namespace (a
/// container), nothing can be told: skipped.
#[test]
fn another_process_on_the_gpu_is_said() {
    if cuda_devices("shared GPU").is_none() {
        return;
    }
    shared_gpu_is_said("cuda", "elsewhere CUDA_VISIBLE_DEVICES or --device");
}

/// The same through Vulkan: the wgpu backend finds an NVIDIA adapter's GPU in NVML by its PCI
/// bus, and says the CUDA tune beside it.
#[test]
fn another_process_on_the_gpu_is_said_through_vulkan() {
    if cuda_devices("shared GPU through Vulkan").is_none() {
        return;
    }
    let d = cache();
    let o = kerntune(d.path(), &["devices", "--backend", "wgpu", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
    let first = v.as_array().and_then(|a| a.first()).map(|a| a.to_string()).unwrap_or_default();
    if !first.to_lowercase().contains("nvidia") {
        kerntune::testing::skipped_without_device("wgpu", "shared GPU through Vulkan: the first wgpu adapter is not an NVIDIA GPU", &first);
        return;
    }
    shared_gpu_is_said("wgpu", "elsewhere --device, see `kerntune devices`");
}

fn shared_gpu_is_said(backend: &str, advice: &str) {
    let d = cache();
    let triad = example("../triad/triad.toml");
    let alone = kerntune(d.path(), &["tune", &triad, "--backend", backend, "--no-db"]);
    // (The summary may say "shared memory": the warning and the note say "the GPU is/was shared".)
    assert!(alone.status.success() && !text(&alone).contains("GPU is shared") && !text(&alone).contains("GPU was shared"), "{}", text(&alone));
    // The convolution, long enough (random 200 configs, cold) to run beside the whole triad tune.
    let other = Command::new(bin())
        .args(["tune", &example("../convolution/convolution.toml"), "--backend", "cuda", "--no-db", "--strategy", "random", "--budget", "200"])
        .env("KERNTUNE_CACHE_DIR", d.path().join("other"))
        .env_remove("KERNTUNE_LOG")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = other.id();
    let mut other = Guard(other);
    // Until its worker runs kernels: listed by nvidia-smi (or, in a PID namespace, never).
    let t = Instant::now();
    let listed = loop {
        let smi = Command::new("nvidia-smi").args(["--query-compute-apps=pid", "--format=csv,noheader"]).output();
        let pids = smi.map(|o| String::from_utf8_lossy(&o.stdout).to_string()).unwrap_or_default();
        if pids.lines().any(|l| l.trim() == pid.to_string()) {
            break true;
        }
        if t.elapsed() > Duration::from_secs(20) {
            break false;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    if !listed {
        kerntune::testing::skipped(&format!("shared GPU: nvidia-smi did not list the other tune's process {pid} (a PID namespace?)"));
        return;
    }
    let beside = kerntune(d.path(), &["tune", &triad, "--backend", backend, "--no-db"]);
    let t = text(&beside);
    assert!(beside.status.success(), "{t}");
    assert!(t.contains("the GPU is shared: ") && t.contains("--gpus-per-task=1") && t.contains(advice), "no warning ({backend}): {t}");
    // The note names the other tune's processes (its tuner, its worker), and only them.
    let note = t.lines().find(|l| l.starts_with("note: the GPU was shared: ")).unwrap_or_else(|| panic!("no note: {t}"));
    let named: Vec<u32> = note.split("pid ").skip(1).filter_map(|w| w.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()).collect();
    assert!(!named.is_empty() && named.iter().all(|&p| p == pid || kerntune::backend::process_parent(p) == Some(pid)), "{note} (the other tune: {pid})");
    assert!(note.contains("`kerntune`"), "{note}");
    let _ = other.0.kill();
}

/// Kills the child when dropped (a failed assertion leaves no tune running on the GPU).
struct Guard(std::process::Child);
impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
