//! The `kerntune` binary as a user runs it: real tuning on the machine's wgpu adapter (software
//! Vulkan in CI), database hits, and one clear error line for each kind of bad input.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn kerntune(cache: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kerntune")).args(args).env("KERNTUNE_CACHE_DIR", cache).env_remove("KERNTUNE_LOG").output().expect("kerntune runs")
}

fn text(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples")
}

/// Whether a wgpu adapter exists; without one the device tests say they are skipped, and fail
/// when `KERNTUNE_REQUIRE_DEVICE=1` (as `make test` and CI set).
fn have_device(cache: &Path) -> bool {
    let ok = kerntune(cache, &["devices"]).status.success();
    if !ok {
        assert!(
            std::env::var("KERNTUNE_REQUIRE_DEVICE").is_err(),
            "KERNTUNE_REQUIRE_DEVICE is set but `kerntune devices` finds no adapter; run scripts/setup.sh"
        );
        eprintln!("SKIPPED: no wgpu adapter on this machine (install mesa-vulkan-drivers)");
    }
    ok
}

#[test]
fn triad_tunes_for_real_and_the_second_run_is_a_database_hit() {
    let d = tempfile::tempdir().unwrap();
    if !have_device(d.path()) {
        return;
    }
    let spec = examples().join("triad/triad.toml");
    let o = kerntune(d.path(), &["tune", spec.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(out.contains("verification: cpu:triad"), "outputs were checked against the CPU reference:\n{out}");
    assert!(out.contains("winner: WG_SIZE="), "{out}");
    assert!(out.contains("GB/s"), "{out}");
    assert!(out.contains("winner written"), "{out}");
    assert!(!out.contains("failures:"), "no config of the triad fails:\n{out}");
    // The table shows the fastest ten of the 23 and says that the rest are not shown.
    assert!(out.contains("… and 13 more measured, not shown (`--top` sets the rows"), "{out}");
    // What the winner gained over the spec's default config (an exhaustive search measured it).
    let default = out.lines().find(|l| l.starts_with("default: WG_SIZE=64,PER_THREAD=1")).unwrap_or_else(|| panic!("a line for the default:\n{out}"));
    if let Some(x) = default.strip_suffix("× as fast").and_then(|l| l.rsplit(' ').next()) {
        let x: f64 = x.parse().unwrap();
        assert!(x >= 1.0, "the default is outside the tie band, so the winner is faster: {default}");
    } else {
        assert!(default.ends_with("is the winner") || default.ends_with("tied with the winner within noise"), "{default}");
    }
    // A tie band names the rule that took the winner (llvmpipe reports no resource use: the
    // default, else declaration order).
    let winner = out.lines().find(|l| l.starts_with("winner: ")).unwrap();
    if winner.contains("configs tied within noise") {
        assert!(
            winner.contains("the stable tie-break took the spec's default config")
                || winner.contains("the stable tie-break took the first in the space's declaration order"),
            "{winner}"
        );
    }
    // `db show` says it too, after the winner.
    let shown = text(&kerntune(d.path(), &["db", "show"])).0;
    assert_eq!(shown.contains("(the default WG_SIZE=64,PER_THREAD=1 takes "), !default.ends_with("is the winner"), "{shown}");
    // A compile-parallel efficiency is shown only where compiling could have held the tune
    // (on lavapipe the triad's compiles fill a few percent of the threads' time: none shown).
    if let Some(at) = out.find("compile-parallel efficiency ") {
        let pct: f64 = out[at + "compile-parallel efficiency ".len()..].split(' ').next().unwrap().parse().unwrap();
        assert!(pct >= 10.0, "{out}");
    }
    let o = kerntune(d.path(), &["tune", spec.to_str().unwrap()]);
    let (out, _) = text(&o);
    assert!(o.status.success());
    assert!(out.contains("database hit") && out.contains("(`--force` searches again, reusing the stored measurements)"), "{out}");
    // The database is valid JSON with the winner and every measured config.
    let o = kerntune(d.path(), &["db", "show", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let entry = v["entries"].as_object().unwrap().values().next().unwrap();
    assert!(entry["winner"]["config"].is_string());
    assert_eq!(entry["measurements"].as_object().unwrap().len(), 23);
    // --recheck measures again although a winner is stored (it implies --remeasure), and says
    // how many second measurements fell inside the first's interval.
    let o = kerntune(d.path(), &["tune", spec.to_str().unwrap(), "--recheck", "4", "--json"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let r = &v[0];
    assert_eq!(r["db_hit"], false, "{out}");
    let rows = r["recheck"]["rows"].as_array().expect("a recheck section");
    // The tie band and 4 others, among the configs measured with an interval (not raced out):
    // fewer where fewer have one, as on a loaded machine.
    let band: Vec<String> = r["tie_band"].as_array().unwrap().iter().map(|c| c.to_string()).collect();
    let with_interval: Vec<&serde_json::Value> = r["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["outcome"] == "measured" && x["from_db"] == false && x["stats"]["raced"] == false && x["stats"]["ci_half"].is_number())
        .collect();
    let in_band = with_interval.iter().filter(|x| band.contains(&x["config"].to_string())).count();
    let expected = in_band + 4.min(with_interval.len() - in_band);
    let failed = r["recheck"]["failed"].as_array().unwrap().len();
    assert_eq!(rows.len() + failed, expected, "{} rows, {failed} failed, {in_band} in the tie band, {} with an interval", rows.len(), with_interval.len());
    let inside = rows.iter().filter(|x| x["inside"] == true).count();
    assert_eq!(r["recheck"]["inside"], inside);
    for x in rows {
        let (a, b) = (x["first"]["mean"].as_f64().unwrap(), x["second"]["mean"].as_f64().unwrap());
        assert_eq!(x["inside"], (b - a).abs() <= x["first"]["ci_half"].as_f64().unwrap(), "{x}");
        // The reported interval holds the 1 % run-to-run floor.
        assert!(x["first"]["ci_half"].as_f64().unwrap() >= 0.01 * a * 0.999, "{x}");
    }
    let o = kerntune(d.path(), &["tune", spec.to_str().unwrap(), "--recheck", "2"]);
    let (out, _) = text(&o);
    assert!(out.contains("recheck: ") && out.contains("measured again at the end"), "{out}");
}

/// A spec with several problems, tuned in one run in the worker process the CLI measures in: each
/// problem is measured and verified on its own buffers (the worker started for the first, smaller
/// one is sent the next), each summary names its problem, and with a budget the problems after
/// the first learn from those before them.
#[test]
fn several_problems_in_one_run_each_on_its_own_buffers_and_learning_from_the_last() {
    let d = tempfile::tempdir().unwrap();
    if !have_device(d.path()) {
        return;
    }
    let dir = d.path().join("mm");
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["matmul.wgsl", "matmul.cu"] {
        std::fs::copy(examples().join("matmul").join(f), dir.join(f)).unwrap();
    }
    let toml = std::fs::read_to_string(examples().join("matmul/matmul.toml")).unwrap();
    let first = "[[problems]]\nM = 512\nN = 512\nK = 512\n";
    assert!(toml.contains(first), "the example's problem table moved");
    let spec = dir.join("matmul.toml");
    let problems = "[[problems]]\nM = 32\nN = 32\nK = 32\n\n[[problems]]\nM = 96\nN = 64\nK = 80\n\n[[problems]]\nM = 64\nN = 96\nK = 48\n";
    std::fs::write(&spec, toml.replace(first, problems)).unwrap();
    let db = d.path().join("db.sqlite");
    let o = kerntune(d.path(), &["tune", spec.to_str().unwrap(), "--backend", "wgpu", "--budget", "5", "--seed", "1", "--db", db.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    for p in ["M=32,N=32,K=32", "M=96,N=64,K=80", "M=64,N=96,K=48"] {
        assert!(out.contains(&format!("== problem {p}\n")), "{out}");
    }
    assert!(!out.contains("wrong output") && !err.contains("error"), "{out}\n{err}");
    assert_eq!(out.matches("prior: ").count(), 2, "the second and third problems learn from those before them: {out}");
    assert!(out.contains("prior: 2 other problems on this target"), "{out}");
    assert_eq!(out.matches("strategy: transfer").count(), 2, "{out}");
    // At the end, one line per problem, with what its search learned from.
    let table = out.split("== 3 problems\n").nth(1).unwrap_or_else(|| panic!("no table of the problems: {out}"));
    for (p, search) in [
        ("M=32,N=32,K=32", "hybrid"),
        ("M=96,N=64,K=80", "transfer, 1 other problem on this target"),
        ("M=64,N=96,K=48", "transfer, 2 other problems on this target"),
    ] {
        assert!(table.lines().any(|l| l.contains(p) && l.contains(search)), "{p}: {search}: {table}");
    }
}

#[test]
fn matmul_tunes_with_a_budget_and_json_output() {
    let d = tempfile::tempdir().unwrap();
    if !have_device(d.path()) {
        return;
    }
    let spec = examples().join("matmul/matmul.toml");
    let o = kerntune(
        d.path(),
        &["tune", spec.to_str().unwrap(), "--key", "M=96,N=80,K=64", "--strategy", "random", "--budget", "6", "--seed", "3", "--json", "-j", "3"],
    );
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let r = &v[0];
    assert_eq!(r["evaluated"], 6);
    assert_eq!(r["compile_threads"], 3, "-j 3 runs three compile threads");
    assert_eq!(r["reference"], "cpu:gemm");
    assert_eq!(r["entry"]["problem"], "M=96,N=80,K=64");
    assert!(r["results"].as_array().unwrap().iter().all(|x| x["outcome"] == "measured"), "every sampled config matches the CPU product: {out}");
}

/// On a device without room for a copy of the triad's writable buffer or its reference (as
/// `KERNTUNE_DEVICE_COPIES=0` makes any device behave), the triad is still tuned, in a worker
/// and in this process: `y` is restored from the host before and after each verification (were
/// it not, every config would verify one application of the triad off) and compared on the host,
/// and the report says both.
#[test]
fn a_device_without_room_for_copies_restores_from_the_host() {
    let d = tempfile::tempdir().unwrap();
    if !have_device(d.path()) {
        return;
    }
    let spec = examples().join("triad/triad.toml");
    for isolation in ["1", "0"] {
        let o = Command::new(env!("CARGO_BIN_EXE_kerntune"))
            .args(["tune", spec.to_str().unwrap(), "--backend", "wgpu", "--no-db", "--strategy", "random", "--budget", "4", "--seed", "1"])
            .env("KERNTUNE_CACHE_DIR", d.path())
            .env("KERNTUNE_DEVICE_COPIES", "0")
            .env("KERNTUNE_WGPU_ISOLATION", isolation)
            .env_remove("KERNTUNE_LOG")
            .output()
            .expect("kerntune runs");
        let (out, err) = text(&o);
        assert!(o.status.success() && out.contains("winner: WG_SIZE="), "isolation {isolation}:\n{out}\n{err}");
        assert!(!out.contains("failures:"), "isolation {isolation}:\n{out}");
        // The default: measured by the 4 random configs, or said not to be.
        let default = out.lines().find(|l| l.starts_with("default: WG_SIZE=64,PER_THREAD=1")).unwrap_or_else(|| panic!("no default line:\n{out}"));
        assert!(default.contains(" ms") || default.ends_with(" was not measured by this search (random, 4 of 23 candidates)"), "{default}");
        assert!(out.contains("device memory: no room for a device copy of y (4.0 MiB) (") && out.contains("so it is restored from host memory"), "{out}");
        assert!(out.contains("device memory: no room for the reference of output y (4.0 MiB) on the device"), "{out}");
    }
}

/// `kerntune devices` names each backend that found nothing and why, as a note while another
/// backend found a device (it listed the devices found and said nothing of the rest).
#[test]
fn the_device_listing_says_why_a_backend_found_nothing() {
    let d = tempfile::tempdir().unwrap();
    if !have_device(d.path()) {
        return;
    }
    let (out, err) = text(&kerntune(d.path(), &["devices"]));
    assert!(out.contains("[wgpu #0]"), "{out}");
    // wgpu reports no multiprocessor count: said as the host's cores (a software adapter) or
    // unknown (a GPU), not a bare number.
    let sm = out.lines().find(|l| l.trim_start().starts_with("sm_count") && (l.contains("(the host's cores)") || l.contains("unknown (wgpu")));
    assert!(sm.is_some(), "{out}");
    // As JSON: a list of devices, each detail a field of an object.
    let json: serde_json::Value = serde_json::from_str(&text(&kerntune(d.path(), &["devices", "--backend", "wgpu", "--json"])).0).unwrap();
    assert_eq!(json[0]["details"]["api"], "Vulkan", "{json}");
    assert!(json[0]["limits"]["max_threads_per_block"].as_u64().is_some_and(|n| n > 0), "{json}");
    let has_libcuda =
        ["/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/local/nvidia/lib64/libcuda.so.1", "/usr/lib64/libcuda.so.1"].iter().any(|p| Path::new(p).exists());
    if !cfg!(feature = "cuda") {
        assert!(err.contains("note: cuda: the cuda backend is not compiled in; rebuild with `--features cuda`"), "{err}");
    } else if !has_libcuda {
        assert!(err.contains("note: cuda: CUDA driver library not found"), "{err}");
    }
    if !cfg!(feature = "hip") {
        assert!(err.contains("note: hip: the hip backend is not compiled in; rebuild with `--features hip`"), "{err}");
    } else if !out.contains("[hip #") {
        assert!(err.contains("note: hip: no AMD GPU found"), "{err}");
    }
    assert!(!err.contains("error:"), "a backend that found nothing is not an error while another found a device: {err}");
    // A tune on a backend that found nothing says where to look and what --backend's default does.
    if cfg!(feature = "hip") && !out.contains("[hip #") {
        let triad = examples().join("triad/triad.toml");
        let (_, err) = text(&kerntune(d.path(), &["tune", triad.to_str().unwrap(), "--backend", "hip", "--no-db"]));
        assert!(
            err.trim() == "error: no AMD GPU found; `kerntune devices` lists what this machine has, and without --backend a tune takes the best of it",
            "{err}"
        );
    }
    // A device list naming one the machine lacks: the ordinals it has, as for --device.
    let triad = examples().join("triad/triad.toml");
    let (_, err) = text(&kerntune(d.path(), &["tune", triad.to_str().unwrap(), "--backend", "wgpu", "--devices", "0,4", "--no-db"]));
    assert!(
        err.trim().starts_with("error: --devices: no wgpu device #4: this machine has only #0 (see `kerntune devices`)") || out.contains("[wgpu #4]"),
        "{err}"
    );
}

/// A problem larger than the whole device is refused before it is made, with what it needs and
/// what the device has: a Vulkan adapter says how much memory it has (`kerntune devices`).
#[test]
fn a_problem_larger_than_the_device_is_refused_before_it_is_made() {
    let d = tempfile::tempdir().unwrap();
    if !have_device(d.path()) {
        return;
    }
    let listing = text(&kerntune(d.path(), &["devices", "--backend", "wgpu"])).0;
    let field = |name: &str| listing.lines().find_map(|l| l.trim().strip_prefix(name)).map(str::trim).unwrap_or("").to_string();
    if field("api") != "Vulkan" {
        eprintln!("SKIPPED: the first wgpu adapter is not a Vulkan one (only Vulkan reports its memory)");
        return;
    }
    // The count of bytes, before its size in units (`2147483648 (2.0 GiB)`).
    let bytes = |name: &str| field(name).split_whitespace().next().unwrap_or("").parse::<u64>();
    let (memory, most): (u64, u64) = match (bytes("global_mem_bytes"), bytes("max_buffer_bytes")) {
        (Ok(m), Ok(b)) => (m, b),
        _ => panic!("a Vulkan adapter's listing gives its memory and largest buffer:\n{listing}"),
    };
    // Buffers of the largest size one may have, one more than the device holds.
    let elems = most / 4;
    let count = memory / (elems * 4) + 1;
    let args: String = (0..count).map(|i| format!("[[args]]\nname = \"b{i}\"\ntype = \"f32\"\nlen = \"E\"\naccess = \"readwrite\"\n")).collect();
    write(d.path(), "k.wgsl", GOOD_WGSL);
    let spec = write(
        d.path(),
        "big.toml",
        &format!("[kernel]\nname = \"triad\"\nsource = {{ wgsl = \"k.wgsl\" }}\n[params]\nWG_SIZE = [64]\n[[problems]]\nE = {elems}\n{args}[launch]\ngrid = [\"1\"]\nblock = [\"WG_SIZE\"]\n[verify]\nreference = \"none\"\n"),
    );
    bad(
        d.path(),
        &["tune", spec.to_str().unwrap(), "--backend", "wgpu", "--no-db"],
        &["big.toml", "problems", "more than the device's", "choose a smaller problem"],
    );
}

fn write(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    p
}

const GOOD_WGSL: &str = "override WG_SIZE: u32 = 64u;\n@group(0) @binding(0) var<storage, read> x: array<f32>;\n@group(0) @binding(1) var<storage, read_write> y: array<f32>;\n@compute @workgroup_size(WG_SIZE)\nfn triad(@builtin(global_invocation_id) g: vec3<u32>) { if (g.x < u32(n)) { y[g.x] = f32(a) * x[g.x] + y[g.x]; } }\n";

fn spec(kernel_file: &str, restrictions: &str, block: &str) -> String {
    format!(
        r#"[kernel]
name = "triad"
source = {{ wgsl = "{kernel_file}" }}
[params]
WG_SIZE = [32, 64]
[space]
restrictions = [{restrictions}]
[[problems]]
N = 1000
[[args]]
name = "x"
type = "f32"
len = "N"
init = "random"
[[args]]
name = "y"
type = "f32"
len = "N"
access = "readwrite"
[[args]]
name = "a"
type = "f32"
value = "2.0"
[[args]]
name = "n"
type = "u32"
value = "N"
[launch]
grid = ["div_ceil(N, WG_SIZE)"]
block = ["{block}"]
[verify]
reference = "cpu:triad"
"#
    )
}

/// Runs a bad input and checks: non-zero exit, one `error:` line naming the file and what is
/// wrong, no panic.
fn bad(cache: &Path, args: &[&str], must_contain: &[&str]) {
    let o = kerntune(cache, args);
    let (out, err) = text(&o);
    assert!(!o.status.success(), "should fail: {args:?}\n{out}");
    assert!(!err.contains("panicked"), "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(lines.len(), 1, "exactly one error line:\n{err}");
    for m in must_contain {
        assert!(lines[0].contains(m), "`{m}` missing from: {}", lines[0]);
    }
}

/// A verification flag that names no output, or expected outputs that are not there, is refused
/// before a device opens (on a machine without one too), as the spec's own fields are.
#[test]
fn verification_flags_are_checked_before_the_device() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    write(dir, "ok.wgsl", GOOD_WGSL);
    let p = write(dir, "good.toml", &spec("ok.wgsl", "", "WG_SIZE"));
    let p = p.to_str().unwrap();
    let refused = |args: &[&str], want: &[&str]| {
        let o = kerntune(dir, &[&["tune", p, "--no-db"][..], args].concat());
        let err = text(&o).1;
        assert!(!err.contains("timing:"), "no device is opened: {err}");
        bad(dir, &[&["tune", p, "--no-db"][..], args].concat(), want);
    };
    refused(&["--atol", "q=1e-3"], &["good.toml", "verify.tolerances", "`q` is not a buffer argument", "--atol/--rtol NAME=VALUE"]);
    refused(&["--atol", "x=1e-3"], &["verify.tolerances", "`x` has a tolerance of its own, but it is not compared"]);
    refused(&["--mismatches", "q=3"], &["verify.mismatches.q", "`q` is not a buffer argument"]);
    refused(&["--compare", "q=sum"], &["verify.compare", "`q` is not a buffer argument"]);
    let zeros = dir.join("y.bin");
    std::fs::write(&zeros, vec![0u8; 4000]).unwrap();
    refused(&["--reference", &format!("q={}", zeros.display())], &["verify.outputs", "`q` is not a buffer argument", "--reference NAME=FILE"]);
    refused(&["--reference", &format!("y={}", dir.join("missing.npy").display())], &["verify.expected.y", "missing.npy: cannot read"]);
    refused(&["--reference", &format!("y={}", dir.display())], &["verify.expected.y", "is a folder"]);
    // Problem sizes from --key that the spec's expressions cannot take, likewise.
    refused(&["--key", "N=-5"], &["--key N=-5:", "length -5 is negative"]);
    refused(&["--key", "N=4096.5"], &["--key N=4096.5:", "not a whole number"]);
    // With both, each error is said as its own flag's.
    refused(&["--key", "N=-5", "--atol", "y=1e-3"], &["--key N=-5:", "length -5 is negative"]);
    let e = text(&kerntune(dir, &["tune", p, "--no-db", "--key", "N=4096", "--atol", "q=1e-3"])).1;
    assert!(e.contains("`q` is not a buffer argument") && !e.contains("--key"), "{e}");
    // And confirm's: a database that is not there, and a --key size.
    let nowhere = dir.join("nowhere.sqlite");
    for (args, want) in [
        (&["confirm", p, "--db", nowhere.to_str().unwrap()][..], &["nowhere.sqlite: no such database", "db merge"][..]),
        (&["confirm", p, "--db", nowhere.to_str().unwrap(), "--key", "N=-5"], &["--key N=-5:", "length -5 is negative"]),
    ] {
        let o = kerntune(dir, args);
        assert!(!text(&o).1.contains("timing:"), "no device is opened: {}", text(&o).1);
        bad(dir, args, want);
    }
    // The spec's own expected outputs, likewise.
    let own =
        write(dir, "own.toml", &format!("{}\nexpected = {{ y = \"nowhere.npy\" }}\n", spec("ok.wgsl", "", "WG_SIZE").replace("reference = \"cpu:triad\"", "")));
    bad(dir, &["check", own.to_str().unwrap()], &["own.toml", "verify.expected.y", "nowhere.npy: cannot read"]);
}

#[test]
fn bad_input_gets_one_clear_line() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    write(dir, "ok.wgsl", GOOD_WGSL);
    let p = write(dir, "malformed.toml", "[kernel\nname = 1");
    bad(dir, &["tune", p.to_str().unwrap()], &["malformed.toml", "line 1"]);
    let p = write(dir, "unknown_param.toml", &spec("ok.wgsl", "\"WG_SIZE * VEC <= 128\"", "WG_SIZE"));
    bad(dir, &["tune", p.to_str().unwrap()], &["unknown_param.toml", "restrictions[0]", "unknown name `VEC`"]);
    let p = write(dir, "not_expr.toml", &spec("ok.wgsl", "\"WG_SIZE <= \"", "WG_SIZE"));
    bad(dir, &["tune", p.to_str().unwrap()], &["not_expr.toml", "restrictions[0]", "is not an expression"]);
    let p = write(dir, "no_kernel.toml", &spec("missing.wgsl", "", "WG_SIZE"));
    bad(dir, &["tune", p.to_str().unwrap(), "--backend", "wgpu", "--no-db"], &["no_kernel.toml", "kernel.source.wgsl", "missing.wgsl"]);
    let p = write(dir, "bad_field.toml", &spec("ok.wgsl", "", "WG_SIZE").replace("[launch]", "[launch]\nshard_mem = 4"));
    bad(dir, &["tune", p.to_str().unwrap()], &["bad_field.toml", "launch.shard_mem (line ", "unknown field `shard_mem`", "did you mean `shared_mem`?"]);
    // A list written as one string is one string value: said at the parameter, with the list.
    let p = write(dir, "string_list.toml", &spec("ok.wgsl", "", "WG_SIZE").replacen("[params]\n", "[params]\nVEC = \"1,2\"\n", 1));
    bad(dir, &["tune", p.to_str().unwrap()], &["string_list.toml", "params.VEC", "is one value, a string", "`VEC = [1, 2]`"]);
    // A value of the wrong type names its field, by its path in the file.
    let p = write(dir, "bad_type.toml", &spec("ok.wgsl", "", "WG_SIZE").replacen("len = \"N\"", "len = \"N\"\nseed = \"one\"", 1));
    bad(dir, &["tune", p.to_str().unwrap()], &["bad_type.toml", "args[0].seed (line ", "invalid type: string \"one\""]);
    bad(dir, &["tune", "/nonexistent/spec.toml"], &["/nonexistent/spec.toml", "cannot read"]);
    let p = write(dir, "bad_name.toml", &spec("ok.wgsl", "", "WG_SIZE").replace("name = \"triad\"", "name = \"triad<float, WG_SIZE\""));
    bad(dir, &["tune", p.to_str().unwrap()], &["bad_name.toml", "kernel.name", "not closed with `>`"]);
    let p = write(dir, "bad_option.toml", &spec("ok.wgsl", "", "WG_SIZE").replace("source = {", "options = { wgsl = [\"-O3\"] }\nsource = {"));
    bad(dir, &["tune", p.to_str().unwrap()], &["bad_option.toml", "kernel.options.wgsl", "`-O3` is not a WGSL option", "no-loop-bounding"]);
    for good in ["2.5", "4", "\"off\""] {
        let p = write(dir, "good_tail.toml", &format!("{}\n[tune]\ncompile_tail = {good}\n", spec("ok.wgsl", "", "WG_SIZE")));
        let o = kerntune(dir, &["check", p.to_str().unwrap()]);
        assert!(o.status.success(), "compile_tail = {good}: {}", text(&o).1);
    }
    let p = write(dir, "bad_tail.toml", &format!("{}\n[tune]\ncompile_tail = 0.5\n", spec("ok.wgsl", "", "WG_SIZE")));
    bad(dir, &["tune", p.to_str().unwrap()], &["bad_tail.toml", "tune.compile_tail", "`0.5` is not a factor over the median compile greater than 1", "`off`"]);
    for good in ["120", "\"90s\"", "\"2m\"", "\"off\""] {
        let p = write(dir, "good_timeout.toml", &format!("{}\n[tune]\ncompile_timeout = {good}\n", spec("ok.wgsl", "", "WG_SIZE")));
        let o = kerntune(dir, &["check", p.to_str().unwrap()]);
        assert!(o.status.success(), "compile_timeout = {good}: {}", text(&o).1);
    }
    let p = write(dir, "bad_timeout.toml", &format!("{}\n[tune]\ncompile_timeout = \"forever\"\n", spec("ok.wgsl", "", "WG_SIZE")));
    bad(
        dir,
        &["tune", p.to_str().unwrap()],
        &["bad_timeout.toml", "tune.compile_timeout", "`forever` is not a duration of at most a day (such as 120s or 2m) or `off`"],
    );
    // `check` reads every language's source, not only the one it shows: a missing one is a
    // warning naming the field, the file and the backend that would stop there.
    std::fs::copy(examples().join("triad/triad.cu"), dir.join("ok.cu")).unwrap();
    let p = write(
        dir,
        "half.toml",
        &spec("ok.wgsl", "", "WG_SIZE").replace("source = { wgsl = \"ok.wgsl\" }", "source = { cuda = \"ok.cu\", wgsl = \"gone.wgsl\" }"),
    );
    let o = kerntune(dir, &["check", p.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let warning = out.lines().find(|l| l.starts_with("warning:")).unwrap_or_default();
    for m in ["half.toml", "kernel.source.wgsl", "gone.wgsl", "--backend wgpu would stop there"] {
        assert!(warning.contains(m), "`{m}` missing from: {out}");
    }
    // A tolerance for an output the spec does not have, from the spec or the command line.
    let p = write(dir, "tol.toml", &format!("{}\n[verify.tolerances]\nz = {{ atol = 1e-3, rtol = 1e-3 }}\n", spec("ok.wgsl", "", "WG_SIZE")));
    bad(dir, &["check", p.to_str().unwrap()], &["tol.toml", "verify.tolerances", "`z` is not a buffer argument (buffers: x, y)"]);
    // A folder where a file goes: said for what it is, with what to give instead.
    let folder = dir.join("results");
    std::fs::create_dir_all(&folder).unwrap();
    let f = folder.to_str().unwrap();
    let ok = write(dir, "fine.toml", &spec("ok.wgsl", "", "WG_SIZE"));
    // The database: one wording wherever --db names it.
    for args in [&["tune", ok.to_str().unwrap(), "--db", f][..], &["db", "show", "--db", f], &["report", "--db", f, "-o", dir.join("r.html").to_str().unwrap()]]
    {
        bad(dir, args, &["results is a folder; name a database file in it (such as", "results/db.sqlite)"]);
    }
    // Files read as results: name the files in it.
    bad(dir, &["simulate", f], &["a folder, not a file; name the files in it (`", "/results/*.json.gz`, say)"]);
    bad(dir, &["tune", ok.to_str().unwrap(), "--no-db", "--prior", f], &["--prior:", "a folder, not a file; name the files in it"]);
    let merged = dir.join("merged.sqlite");
    bad(dir, &["db", "merge", f, "--db", merged.to_str().unwrap()], &["a folder, not a file; name the databases in it (`", "/results/*.sqlite`, say)"]);
    assert!(!merged.exists(), "nothing written");
    // A file to write.
    let empty = write(dir, "empty.json", r#"{"schema": "kerntune-db", "version": 1, "entries": {}}"#);
    bad(dir, &["db", "export", "--db", empty.to_str().unwrap(), "--out", f], &["results is a folder; name a file in it"]);
    // A file of the user's that is no database (a TOML file starts like a JSON list) is never
    // called damaged, nor to be cleared.
    let toml = write(dir, "Cargo.toml", "[package]\nname = \"x\"\n");
    bad(dir, &["db", "show", "--db", toml.to_str().unwrap()], &["Cargo.toml is not a kerntune database (not JSON"]);
    let o = kerntune(dir, &["db", "merge", toml.to_str().unwrap(), "--db", merged.to_str().unwrap()]);
    assert!(!text(&o).1.contains("db clear"), "{}", text(&o).1);
    // Another program's SQLite database: tune and confirm say so before a device opens, and
    // leave it as it was.
    let app = dir.join("app.db");
    let c = rusqlite::Connection::open(&app).unwrap();
    c.execute_batch("CREATE TABLE users(id INTEGER); INSERT INTO users VALUES (1);").unwrap();
    drop(c);
    let before = std::fs::read(&app).unwrap();
    for command in ["tune", "confirm"] {
        let args = [command, ok.to_str().unwrap(), "--db", app.to_str().unwrap()];
        assert!(!text(&kerntune(dir, &args)).1.contains("timing:"), "no device is opened");
        bad(dir, &args, &["app.db is not a kerntune database (an SQLite database of another program: its tables `users`)", "left untouched"]);
    }
    assert_eq!(std::fs::read(&app).unwrap(), before, "left as it was");
    // And for an input, which is never compared (the line of `check` showed its tolerance).
    let p = write(
        dir,
        "tolx.toml",
        &format!(
            "{}
[verify.tolerances]
x = {{ atol = 1e-3, rtol = 1e-3 }}
",
            spec("ok.wgsl", "", "WG_SIZE")
        ),
    );
    bad(dir, &["check", p.to_str().unwrap()], &["tolx.toml", "verify.tolerances", "`x` has a tolerance of its own, but it is not compared at all"]);
    let p = write(dir, "twice.toml", &spec("ok.wgsl", "", "WG_SIZE").replace("WG_SIZE = [32, 64]", "WG_SIZE = [32, 32, 64]"));
    bad(dir, &["check", p.to_str().unwrap()], &["twice.toml", "params.WG_SIZE", "32 is listed twice; list each value once"]);
    let p = write(dir, "nan.toml", &spec("ok.wgsl", "", "WG_SIZE").replace("WG_SIZE = [32, 64]", "WG_SIZE = [32, 64]\nSCALE = [1.0, nan]"));
    bad(dir, &["check", p.to_str().unwrap()], &["nan.toml", "params.SCALE", "NaN is not a value a kernel can take; give finite numbers"]);
    // A buffer sized by a parameter: made once for every config, so the parameter stands for its
    // list of values (Kernel Tuner's rule); a length that takes it for a number says what to write.
    let halo = |len: &str| {
        spec("ok.wgsl", "", "WG_SIZE").replace("WG_SIZE = [32, 64]", "WG_SIZE = [32, 64]\nR = [2, 4]").replacen("len = \"N\"", &format!("len = \"{len}\""), 1)
    };
    let p = write(dir, "halo.toml", &halo("N + 2*R"));
    bad(dir, &["check", p.to_str().unwrap()], &["halo.toml", "args[0] (x).len", "`R` is a tunable parameter (2, 4)", "max(R)"]);
    let p = write(dir, "halo.toml", &halo("N + 2*max(R)"));
    let o = kerntune(dir, &["check", p.to_str().unwrap()]);
    assert!(o.status.success() && text(&o).0.contains("1,008 elements"), "{}{}", text(&o).0, text(&o).1);
    let good = write(dir, "good.toml", &spec("ok.wgsl", "", "WG_SIZE"));
    bad(dir, &["tune", good.to_str().unwrap(), "--budget", "fast"], &["--budget", "`fast`"]);
    // A negative number is a value to judge, not an unknown flag.
    bad(dir, &["tune", good.to_str().unwrap(), "--budget", "-1"], &["--budget", "`-1` is neither a count"]);
    bad(dir, &["tune", good.to_str().unwrap(), "--budget", "-3s"], &["--budget", "`-3s`: a number of seconds must be a positive"]);
    bad(dir, &["tune", good.to_str().unwrap(), "-j", "-2"], &["'-2'", "--jobs"]);
    bad(dir, &["tune", good.to_str().unwrap(), "--key", "N=1,N=2"], &["--key", "`N` is given more than once"]);
    bad(
        dir,
        &["tune", good.to_str().unwrap(), "--key", "N=1", "--key", "N=2", "--key", "N=1"],
        &["--key", "`N=1` (the 3rd --key) names problem N=1 again, as the 1st did"],
    );
    let matmul = examples().join("matmul/matmul.toml");
    bad(
        dir,
        &["tune", matmul.to_str().unwrap(), "--key", "M=64", "--key", "N=64", "--key", "K=64"],
        &["--key", "each --key is one problem, and these 3 name no size in common", "`--key M=64,N=64,K=64`"],
    );
    bad(dir, &["tune", good.to_str().unwrap(), "--recheck", "0"], &["--recheck", "0 configs checks nothing"]);
    // A shard's winner is its part's best: never into the shared default database, nor lost.
    bad(dir, &["tune", good.to_str().unwrap(), "--shard", "0/2"], &["--shard 0/2", "its own --db FILE", "best of its part only"]);
    bad(dir, &["tune", good.to_str().unwrap(), "--shard", "1/2", "--no-db"], &["--shard 1/2 with --no-db", "its own --db FILE"]);
    bad(dir, &["generate", "--class", "matmul", "--shape", "4096x4096", "--target", "h100"], &["--shape", "matmul needs three sizes, MxNxK", "has 2"]);
    bad(dir, &["generate", "--class", "attention", "--shape", "4096", "--target", "h100"], &["--shape", "attention needs three sizes", "has 1"]);
    bad(dir, &["generate", "--class", "matmul", "--shape", "M=1", "--target", "h100"], &["--shape", "`M=1` is not a shape", "4096x4096x4096"]);
    bad(
        dir,
        &["generate", "--class", "matmul", "--shape", "64x64x64", "--target", "h10"],
        &["--target", "`h10` is neither a preset nor a preset's architecture", "did you mean `h100`?", "mi300x (gfx942)"],
    );
    bad(dir, &["tune", good.to_str().unwrap(), "--compile-tail", "never"], &["--compile-tail", "`never`", "`off`"]);
    bad(dir, &["tune", good.to_str().unwrap(), "--compile-timeout", "0s"], &["--compile-timeout", "`0s`", "`off`"]);
    bad(dir, &["tune", good.to_str().unwrap(), "-j", "0"], &["--jobs", "0"]);
    bad(dir, &["tune", good.to_str().unwrap(), "--strategy", "annealing", "--budget", "2%"], &["--budget", "`model` or `hybrid`", "`annealing` has none"]);
    if cfg!(feature = "hip") {
        // This machine has the HIP runtime but no AMD GPU.
        if kerntune(dir, &["devices", "--backend", "hip"]).status.success() {
            eprintln!("an AMD GPU is present; the no-GPU message is not checked");
        } else {
            bad(dir, &["devices", "--backend", "hip"], &["no AMD GPU found"]);
        }
    } else {
        bad(dir, &["devices", "--backend", "hip"], &["hip backend is not compiled in", "--features hip"]);
    }
    // Does this machine have a CUDA driver library at all?
    let has_libcuda =
        ["/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/local/nvidia/lib64/libcuda.so.1", "/usr/lib64/libcuda.so.1"].iter().any(|p| Path::new(p).exists());
    if cfg!(feature = "cuda") && !has_libcuda {
        bad(dir, &["devices", "--backend", "cuda"], &["CUDA driver library not found"]);
        bad(dir, &["tune", good.to_str().unwrap(), "--backend", "cuda"], &["CUDA driver library not found"]);
    } else if !cfg!(feature = "cuda") {
        bad(dir, &["devices", "--backend", "cuda"], &["cuda backend is not compiled in", "--features cuda"]);
    }
}

/// A source that no config compiles is said while the tune goes on, once the first configs
/// (as many as compile threads, at least 8) all failed with one error: a published kernel's
/// removed intrinsic would otherwise be told only when the whole space had failed. A space
/// whose configs compile says nothing of the kind.
#[test]
fn a_source_no_config_compiles_is_said_early() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    if !have_device(dir) {
        return;
    }
    let twenty = |file: &str| spec(file, "", "WG_SIZE").replace("WG_SIZE = [32, 64]", "WG_SIZE = [32, 64]\nUNROLL = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]");
    write(dir, "broken.wgsl", &GOOD_WGSL.replace("y[g.x] =", "y[g.x] = undefined_name +"));
    let p = write(dir, "broken.toml", &twenty("broken.wgsl"));
    let o = kerntune(dir, &["tune", p.to_str().unwrap(), "--no-db", "-j", "2"]);
    let (_, err) = text(&o);
    assert!(!o.status.success(), "{err}");
    let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("warning: the first")).collect();
    assert_eq!(warnings.len(), 1, "{err}");
    assert!(
        warnings[0].starts_with("warning: the first 8 configs all failed to compile with one error, and none compiled: ")
            && warnings[0].contains("undefined_name"),
        "{err}"
    );
    assert!(err.lines().any(|l| l.starts_with("error:") && l.contains("all 20 configs failed to compile")), "{err}");
    write(dir, "ok.wgsl", GOOD_WGSL);
    let p = write(dir, "ok.toml", &twenty("ok.wgsl"));
    let o = kerntune(dir, &["tune", p.to_str().unwrap(), "--no-db", "-j", "2"]);
    assert!(o.status.success() && !text(&o).1.contains("warning: the first"), "{}", text(&o).1);
}

#[test]
fn device_errors_get_one_clear_line() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    if !have_device(dir) {
        return;
    }
    write(dir, "ok.wgsl", GOOD_WGSL);
    write(dir, "broken.wgsl", &GOOD_WGSL.replace("y[g.x] =", "y[g.x] = undefined_name +"));
    let p = write(dir, "broken.toml", &spec("broken.wgsl", "", "WG_SIZE"));
    bad(dir, &["tune", p.to_str().unwrap(), "--no-db"], &["broken.toml", "no valid config", "failed to compile", "broken.wgsl:5", "undefined_name"]);
    let p = write(dir, "pruned.toml", &spec("ok.wgsl", "", "WG_SIZE * 64"));
    bad(dir, &["tune", p.to_str().unwrap(), "--no-db"], &["pruned.toml", "all 2 valid configs were pruned", "threads: 2"]);
    // A corrupt database is reported, left untouched, and nothing is measured.
    let db = dir.join("db.json");
    std::fs::write(&db, "{\"schema\": \"kerntune-db\", \"version\": 1, \"entries\": [").unwrap();
    let p = write(dir, "good.toml", &spec("ok.wgsl", "", "WG_SIZE"));
    bad(dir, &["tune", p.to_str().unwrap(), "--db", db.to_str().unwrap()], &["db.json", "corrupt", "left untouched"]);
    assert_eq!(std::fs::read_to_string(&db).unwrap(), "{\"schema\": \"kerntune-db\", \"version\": 1, \"entries\": [");
}

#[test]
fn db_merge_keeps_entries_from_both_files() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    if !have_device(dir) {
        return;
    }
    write(dir, "ok.wgsl", GOOD_WGSL);
    let p = write(dir, "good.toml", &spec("ok.wgsl", "", "WG_SIZE"));
    let (a, b, merged) = (dir.join("a.json"), dir.join("b.json"), dir.join("m.json"));
    // A new database named `.json` is SQLite all the same, and the command says so, once.
    let sqlite_anyway = "a new database is an SQLite file, whatever its name; `kerntune db export --db";
    let o = kerntune(dir, &["tune", p.to_str().unwrap(), "--db", a.to_str().unwrap()]);
    assert!(o.status.success() && text(&o).1.contains(sqlite_anyway), "{}", text(&o).1);
    assert!(std::fs::read(&a).unwrap().starts_with(b"SQLite format 3\0"));
    let o = kerntune(dir, &["tune", p.to_str().unwrap(), "--db", a.to_str().unwrap(), "--force"]);
    assert!(o.status.success() && !text(&o).1.contains(sqlite_anyway), "{}", text(&o).1);
    assert!(kerntune(dir, &["tune", p.to_str().unwrap(), "--db", b.to_str().unwrap(), "--key", "N=2000"]).status.success());
    let o = kerntune(dir, &["db", "merge", a.to_str().unwrap(), b.to_str().unwrap(), "--db", merged.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("0 → 2 entries") && err.contains(sqlite_anyway), "{out}{err}");
    let o = kerntune(dir, &["db", "merge", a.to_str().unwrap(), "--db", merged.to_str().unwrap()]);
    assert!(text(&o).0.contains("2 → 2 entries") && !text(&o).1.contains(sqlite_anyway));
    // Winners as Rust source for a program to include!: one row per winner.
    let rs = dir.join("winners.rs");
    let o = kerntune(dir, &["db", "export", "--rust", "--out", rs.to_str().unwrap(), "--db", merged.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o).1);
    let src = std::fs::read_to_string(&rs).unwrap();
    assert!(src.contains("2 winner(s)") && src.matches("kerntune::EmbeddedWinner {").count() == 2, "{src}");
    // `--out /dev/stdout` writes to the pipe it names, as a shell user expects (renaming a whole
    // file over it was refused, or, as root, replaced /dev/stdout).
    let o = kerntune(dir, &["db", "export", "--rust", "--out", "/dev/stdout", "--db", merged.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o).1);
    assert!(text(&o).0.starts_with(&src), "{}", text(&o).0);
    // Into a file the shell opened to append to (`>> log`): appended, as a shell user expects
    // (opened again by name, the log was truncated and written from its start).
    let log = dir.join("log.txt");
    std::fs::write(&log, "earlier lines\n").unwrap();
    let appending = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_kerntune"))
        .args(["db", "export", "--rust", "--out", "/dev/stdout", "--db", merged.to_str().unwrap()])
        .env("KERNTUNE_CACHE_DIR", dir)
        .stdout(appending)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o).1);
    assert_eq!(std::fs::read_to_string(&log).unwrap(), format!("earlier lines\n{src}"));
    let o = kerntune(dir, &["db", "export", "--rust", "--kernel", "nope", "--db", merged.to_str().unwrap()]);
    assert!(!o.status.success() && text(&o).1.contains("no entry for kernel `nope` (it holds `triad`)"), "{}", text(&o).1);
    let o = kerntune(dir, &["db", "export", "--kernel", "traid", "--db", merged.to_str().unwrap()]);
    assert!(!o.status.success() && text(&o).1.contains("(did you mean `triad`? it holds `triad`)"), "{}", text(&o).1);
    let o = kerntune(dir, &["db", "clear", "--db", merged.to_str().unwrap()]);
    assert!(o.status.success() && !merged.exists());
}

/// `db remove` takes out the entries its filters name, and `--superseded` those a later tune of
/// the same kernel, device and problem replaced (here: the source edited); `db show` tells such
/// entries apart by their source.
#[test]
fn db_remove_takes_out_the_entries_its_filters_name() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    if !have_device(dir) {
        return;
    }
    write(dir, "ok.wgsl", GOOD_WGSL);
    let p = write(dir, "good.toml", &spec("ok.wgsl", "", "WG_SIZE"));
    let db = dir.join("r.sqlite");
    let tune = |extra: &[&str]| {
        let o = kerntune(dir, &[&["tune", p.to_str().unwrap(), "--db", db.to_str().unwrap()], extra].concat());
        assert!(o.status.success(), "{}", text(&o).1);
    };
    let db_cmd = |args: &[&str]| kerntune(dir, &[&["db"], args, &["--db", db.to_str().unwrap()]].concat());
    // Two problems in one command, in the order given (`--key` repeated).
    let o = kerntune(dir, &["tune", p.to_str().unwrap(), "--db", db.to_str().unwrap(), "--key", "N=900", "--key", "N=1000"]);
    let out = text(&o).0;
    assert!(o.status.success(), "{}", text(&o).1);
    let (first, second) = (out.find("== problem N=900").unwrap_or(usize::MAX), out.find("== problem N=1000").unwrap_or(0));
    assert!(first < second && out.contains("== 2 problems"), "{out}");
    // A second apart, so that the edited source's tune is the later one.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    write(dir, "ok.wgsl", &format!("// edited\n{GOOD_WGSL}"));
    tune(&[]);
    let shown = text(&db_cmd(&["show"])).0;
    assert!(shown.contains("(3 entries)") && shown.matches("N=1000 (source ").count() == 2 && shown.contains("last tuned "), "{shown}");
    // Problems in numeric order (N=900 before N=1000; as text it came after).
    assert!(shown.find("N=900:").unwrap_or(usize::MAX) < shown.find("N=1000 (source ").unwrap_or(0), "{shown}");
    let o = db_cmd(&["remove"]);
    assert!(!o.status.success() && text(&o).1.contains("name what to remove") && text(&o).1.contains("db clear"), "{}", text(&o).1);
    let o = db_cmd(&["remove", "--superseded", "--dry-run"]);
    let out = text(&o).0;
    assert!(o.status.success() && out.contains("would remove triad on ") && out.contains("1 of 3 entries would be removed"), "{out}");
    assert!(text(&db_cmd(&["show"])).0.contains("(3 entries)"), "a dry run removes nothing");
    let out = text(&db_cmd(&["remove", "--superseded"])).0;
    assert!(out.contains("removed 1 of 3 entries") && out.contains("2 left"), "{out}");
    let shown = text(&db_cmd(&["show"])).0;
    assert!(shown.contains("(2 entries)") && !shown.contains("(source "), "the entry left of N=1000 is the edited source's:\n{shown}");
    // A filter that matches nothing says which, with the values there and the nearest one.
    let out = text(&db_cmd(&["remove", "--kernel", "nope"])).0;
    assert!(out.contains("nothing removed from") && out.contains("--kernel `nope` matches no entry (kernels there: `triad`)"), "{out}");
    let out = text(&db_cmd(&["remove", "--kernel", "traid"])).0;
    assert!(out.contains("did you mean `triad`?"), "{out}");
    let out = text(&db_cmd(&["remove", "--superseded"])).0;
    assert!(out.contains("--superseded matches no entry"), "{out}");
    let out = text(&db_cmd(&["remove", "--kernel", "triad", "--problem", "N=1000", "--superseded"])).0;
    assert!(out.contains("--superseded matches no entry") && !out.contains("--kernel"), "{out}");
    // A device by a part of its name, ignoring case, as `report --target` picks.
    let name = text(&db_cmd(&["show", "--json"])).0;
    let v: serde_json::Value = serde_json::from_str(&name).unwrap();
    let device = v["entries"].as_object().unwrap().values().next().unwrap()["target_name"].as_str().unwrap().to_string();
    let part = device.split_whitespace().next().unwrap().to_uppercase();
    let out = text(&db_cmd(&["remove", "--target", &part, "--dry-run"])).0;
    assert!(out.contains("2 of 2 entries would be removed"), "{part}: {out}");
    let out = text(&db_cmd(&["remove", "--target", "no such gpu", "--kernel", "triad"])).0;
    assert!(out.contains("--target `no such gpu` matches no entry (devices there: ") && !out.contains("--kernel `"), "{out}");
    let out = text(&db_cmd(&["remove", "--kernel", "triad", "--problem", "N=900"])).0;
    assert!(out.contains("removed 1 of 2 entries") && out.contains("N=900"), "{out}");
    // What is left is the edited source's entry: the same tune is a database hit.
    let o = kerntune(dir, &["tune", p.to_str().unwrap(), "--db", db.to_str().unwrap()]);
    assert!(text(&o).0.contains("database hit"), "{}", text(&o).0);
    // An export in JSON: a removal that matches nothing leaves it JSON; one that removes says
    // that the file becomes SQLite.
    let json = dir.join("e.json");
    assert!(db_cmd(&["export", "--out", json.to_str().unwrap()]).status.success());
    let in_json = |args: &[&str]| kerntune(dir, &[&["db", "remove"], args, &["--db", json.to_str().unwrap()]].concat());
    let o = in_json(&["--kernel", "nope"]);
    assert!(o.status.success() && !text(&o).1.contains("note:"), "{}", text(&o).1);
    assert!(std::fs::read(&json).unwrap().starts_with(b"{"), "still JSON");
    let o = in_json(&["--kernel", "triad"]);
    assert!(o.status.success() && text(&o).1.contains("is a database in JSON") && text(&o).0.contains("removed 1 of 1"), "{}{}", text(&o).0, text(&o).1);
}

/// `kerntune check` counts exactly on the reference spaces (`../shared/spaces/README.md`'s
/// brute-forced counts, written as T1 files in tests/data/spaces) and on the shipped T1
/// examples, without a device.
#[test]
fn check_counts_the_reference_spaces_exactly() {
    let d = tempfile::tempdir().unwrap();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/spaces");
    for (file, cartesian, valid) in [
        (data.join("convolution.json"), 10_240u64, 4_362u64),
        (data.join("clblast_gemm.json"), 82_944, 17_956),
        (data.join("gemm_large.json"), 663_552, 116_928),
        (data.join("dedispersion.json"), 22_272, 11_130),
        (examples().join("convolution/convolution.json"), 2_560, 1_650),
        (examples().join("t1/dedispersion.json"), 111_360, 55_650),
        (examples().join("t1/gemm.json"), 576, 406),
        (examples().join("t1/stencil.json"), 888, 312),
        // The same convolution space as a kerntune spec moved from a Kernel Tuner script.
        (examples().join("convolution/convolution.toml"), 2_560, 1_650),
        // benchmark_hub's convolution space (the six GPUs' recorded spaces), as a kerntune spec.
        (examples().join("convolution/convolution_hub.toml"), 10_240, 4_362),
    ] {
        let o = kerntune(d.path(), &["check", file.to_str().unwrap(), "--json"]);
        let (out, err) = text(&o);
        assert!(o.status.success(), "{}: {err}", file.display());
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let p = &v["problems"][0];
        assert_eq!(
            (p["cartesian"].as_u64(), p["valid"].as_u64(), p["valid_complete"].as_bool()),
            (Some(cartesian), Some(valid), Some(true)),
            "{}",
            file.display()
        );
    }
    // The text form names the default's launch and the arguments' sizes.
    let o = kerntune(d.path(), &["check", examples().join("convolution/convolution.json").to_str().unwrap()]);
    let (out, _) = text(&o);
    assert!(out.contains("space: 2,560 combinations, 1,650 valid"), "{out}");
    assert!(out.contains("grid 256 × 256 × 1, block 16 × 16 × 1"), "{out}");
    assert!(out.contains("d_filter") && out.contains("900 B") && out.contains("__constant__"), "{out}");
    // A TOML spec works too, one section per problem.
    let o = kerntune(d.path(), &["check", examples().join("matmul/matmul.toml").to_str().unwrap(), "--language", "cuda"]);
    let (out, err) = text(&o);
    assert!(o.status.success() && out.contains("252 valid"), "{out}{err}");
    // It names the sources of the other languages, which it read too.
    assert!(
        out.contains("other sources (read too; `--language` checks one in full): hip ") && out.contains("matmul.cu, wgsl ") && out.contains("matmul.wgsl\n"),
        "{out}"
    );
    // A class-based spec needs a target to generate for.
    let generated = examples().join("matmul/matmul_generated.toml");
    let o = kerntune(d.path(), &["check", generated.to_str().unwrap()]);
    assert!(!o.status.success() && text(&o).1.contains("pass --target"), "{}", text(&o).1);
    let o = kerntune(d.path(), &["check", generated.to_str().unwrap(), "--target", "h100", "--json"]);
    assert!(o.status.success(), "{}", text(&o).1);
    // Any other spec with a target: what fits there before compiling, and why the rest does not
    // (the tensor-core GEMM's largest tiles need more workgroup memory than llvmpipe has).
    let hgemm = examples().join("hgemm/hgemm.toml");
    let out = text(&kerntune(d.path(), &["check", hgemm.to_str().unwrap(), "--target", "llvmpipe"])).0;
    assert!(
        out.contains("on llvmpipe (software Vulkan) (vulkan-10005-0), before compiling: 175 of 191 valid configs fit; a tune there prunes the rest"),
        "{out}"
    );
    assert!(out.contains("  pruned shared_memory: 16  (e.g. ") && out.contains("device allows 32768 B)"), "{out}");
    let o = kerntune(d.path(), &["check", hgemm.to_str().unwrap(), "--target", "a100", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let f = &v["problems"][0]["pruned_on_target"];
    assert_eq!((f["checked"].as_u64(), f["fit"].as_u64(), f["complete"].as_bool()), (Some(191), Some(191), Some(true)), "{f}");
    bad(d.path(), &["check", hgemm.to_str().unwrap(), "--target", "a10"], &["--target", "`a10` is neither a preset", "did you mean `a100`?"]);
}

/// `db show` and `db export` of a database that is not there: a path named with --db is most
/// likely mistyped (an error naming it); the default one just does not exist before the first
/// tune (shown as such; nothing to export).
#[test]
fn db_commands_say_when_the_database_is_not_there() {
    let d = tempfile::tempdir().unwrap();
    let typo = d.path().join("fleet.sqlte");
    let typo = typo.to_str().unwrap();
    for cmd in ["show", "export"] {
        let o = kerntune(d.path(), &["db", cmd, "--db", typo]);
        let (_, err) = text(&o);
        assert!(!o.status.success() && err.contains("--db:") && err.contains("fleet.sqlte does not exist"), "{cmd}: {err}");
    }
    let o = kerntune(d.path(), &["db", "show"]);
    let (out, err) = text(&o);
    assert!(o.status.success() && out.contains("no database yet"), "{out}\n{err}");
    let o = kerntune(d.path(), &["db", "export"]);
    assert!(!o.status.success() && text(&o).1.contains("nothing to export"), "{}", text(&o).1);
    assert!(!Path::new(typo).exists() && std::fs::read_dir(d.path()).unwrap().count() == 0, "nothing was created");
}

/// Closed pipes and full disks on standard output: no panic, whatever the subcommand.
#[test]
fn output_errors_end_quietly() {
    use std::process::Stdio;
    let d = tempfile::tempdir().unwrap();
    let spec = examples().join("convolution/convolution.json");
    for args in [vec!["check", spec.to_str().unwrap()], vec!["check", spec.to_str().unwrap(), "--json"], vec!["db", "show"], vec!["--help"]] {
        // `| head -0`: the reader is gone before kerntune writes.
        let mut child = Command::new(env!("CARGO_BIN_EXE_kerntune"))
            .args(&args)
            .env("KERNTUNE_CACHE_DIR", d.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(o.status.success() || o.status.code() == Some(141), "{args:?}: {:?} {err}", o.status);
        // `> /dev/full`: one error line.
        if Path::new("/dev/full").exists() && args[0] != "--help" {
            let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
            let o = Command::new(env!("CARGO_BIN_EXE_kerntune")).args(&args).env("KERNTUNE_CACHE_DIR", d.path()).stdout(full).output().unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(!err.contains("panicked"), "{args:?}: {err}");
            if !o.status.success() {
                assert!(err.trim().lines().count() == 1 && err.contains("error: cannot write the output"), "{args:?}: {err}");
            }
        }
    }
}

/// Bad T1 files and flags: one `error:` line naming the file and field, exit status 1.
#[test]
fn bad_t1_files_get_one_error_line() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("k.cu"), "__global__ void k(float *x) {}").unwrap();
    for (body, says) in [
        (r#"{"ConfigurationSpace": {"TuningParameters": [{"Name": "x", "Values": "[1, 2"}]}, "KernelSpecification": {}}"#, "TuningParameters[0].Values"),
        (
            r#"{"ConfigurationSpace": {"TuningParameters": [{"Name": "x", "Values": "[1]"}]}, "KernelSpecification": {"Language": "OpenCL", "KernelName": "k", "KernelFile": "k.cu"}}"#,
            "Language",
        ),
        (r#"{"ConfigurationSpace": {"TuningParameters": []}}"#, "KernelSpecification"),
        ("not json", "(json)"),
        (
            r#"{"ConfigurationSpace": {"TuningParameters": [{"Name": "x", "Values": "[1]"}]}, "KernelSpecification": {"KernelName": "k", "KernelFile": "k.cu", "ProblemSize": [8], "Arguments": [{"Name": "a", "Type": "float", "MemoryType": "Vector"}]}}"#,
            "a Vector argument needs Size",
        ),
    ] {
        let p = d.path().join("t1.json");
        std::fs::write(&p, body).unwrap();
        let o = kerntune(d.path(), &["check", p.to_str().unwrap()]);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{body}: {err}");
        assert!(err.starts_with("error: ") && err.trim().lines().count() == 1 && err.contains(says) && err.contains("t1.json"), "{body}: {err}");
    }
    let o = kerntune(d.path(), &["check", "nowhere.json"]);
    assert!(text(&o).1.contains("nowhere.json: cannot read"), "{}", text(&o).1);
    let o = kerntune(d.path(), &["check", examples().join("t1/gemm.json").to_str().unwrap(), "--count-seconds", "nan"]);
    assert!(text(&o).1.starts_with("error: --count-seconds"), "{}", text(&o).1);
}

/// The example application `include!`s examples/app/tests/data/winners.rs (its test compiles it);
/// that file must stay what `db export --rust` writes for the database it came from.
#[test]
fn rust_export_matches_the_file_the_example_app_compiles() {
    let d = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let db = root.join("tests/data/db/triad-llvmpipe.json");
    let o = kerntune(d.path(), &["db", "export", "--rust", "--kernel", "triad", "--db", db.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o).1);
    let shipped = std::fs::read_to_string(root.join("examples/app/tests/data/winners.rs")).unwrap();
    assert_eq!(text(&o).0.trim_end(), shipped.trim_end(), "regenerate examples/app/tests/data/winners.rs with `kerntune db export --rust --db tests/data/db/triad-llvmpipe.json --out examples/app/tests/data/winners.rs`");
    assert!(text(&o).1.is_empty(), "{}", text(&o).1);
    // Entries without a winner are left out, with a word.
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&db).unwrap()).unwrap();
    let n = v["entries"].as_object().unwrap().len();
    for e in v["entries"].as_object_mut().unwrap().values_mut() {
        e.as_object_mut().unwrap().remove("winner");
    }
    let none = d.path().join("none.json");
    std::fs::write(&none, v.to_string()).unwrap();
    let o = kerntune(d.path(), &["db", "export", "--rust", "--db", none.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert!(o.status.success() && out.contains("0 winner(s)"), "{out}");
    assert!(err.contains(&format!("note: {n} of the {n} entries have no winner")) && err.contains("are not in the Rust source"), "{err}");
}

/// A tune stopped as a whole (Ctrl-Z; a scheduler suspending its job sends SIGSTOP to every
/// process of it) for longer than a launch may take, then continued: the launches in flight
/// when it stopped are not timed out, and the tune says it was stopped. (Before, a 60 s stop
/// failed the config being measured as `timed out after 5.000 s`, stored so.)
#[cfg(unix)]
#[test]
fn a_tune_stopped_and_continued_times_out_nothing() {
    use std::os::unix::process::CommandExt;
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    if !have_device(dir) {
        return;
    }
    // The shipped matmul: on software Vulkan nearly all of its time is launches (tens to
    // hundreds of milliseconds each), so a stop lands in a launch's wait. Three launches a
    // config, each allowed 2 s: a wait is at most 6 s, and the stop is 8 s.
    let toml = std::fs::read_to_string(examples().join("matmul/matmul.toml")).unwrap();
    let toml = toml.replace("[bench]\nmax_reps = 30\nmax_seconds = 0.5", "[bench]\nwarmup_max = 2\nmin_reps = 3\nmax_reps = 3\nracing = false\ntimeout = 2");
    assert!(toml.contains("timeout = 2"));
    let spec = write(dir, "matmul.toml", &toml);
    write(dir, "matmul.wgsl", &std::fs::read_to_string(examples().join("matmul/matmul.wgsl")).unwrap());
    // Tunes with `budget`, stops the tune's process group (the tuner and its worker) `after` ms
    // in for `stopped` ms, and returns the tune's output, its stdout, and its wall time.
    let stopped_tune = |budget: &str, after: u64, stopped: u64| {
        let t = std::time::Instant::now();
        let child =
            piped(dir, &["tune", spec.to_str().unwrap(), "--backend", "wgpu", "--no-db", "--budget", budget, "--seed", "3"]).process_group(0).spawn().unwrap();
        let group = child.id() as i32;
        std::thread::sleep(std::time::Duration::from_millis(after));
        // SAFETY: kill sends a signal to the tune's own process group.
        unsafe { libc::kill(-group, libc::SIGSTOP) };
        std::thread::sleep(std::time::Duration::from_millis(stopped));
        // SAFETY: as above.
        unsafe { libc::kill(-group, libc::SIGCONT) };
        let out = child.wait_with_output().unwrap();
        let (stdout, stderr) = text(&out);
        assert!(out.status.success(), "{stdout}\n{stderr}");
        assert!(stdout.contains("note: the tune was stopped for ") && !stdout.contains("timed out after"), "{stdout}");
        (stdout, t.elapsed())
    };
    let (stdout, _) = stopped_tune("8", 3000, 8000);
    assert!(stdout.contains("evaluated 8"), "{stdout}");
    // A time budget counts the time awake too (as Slurm's time limit does not count a
    // suspension): 6 s of tuning, stopped for 5 s after 2 s, ends 11 s or more in (it ended
    // when it went on, 7 s in, having tuned 2 s of its 6).
    let (stdout, wall) = stopped_tune("6s", 2000, 5000);
    assert!(wall >= std::time::Duration::from_millis(10_500), "ended {wall:?} in: {stdout}");
}

/// SIGINT, SIGTERM and SIGHUP stop a tune: what was measured is written, the command says so
/// and exits 130, 143 or 129; running it again resumes. A signal sent twice at once (GNU
/// `timeout` signals the command, then its process group) is one: the old code exited at the
/// second, saying nothing, in 5 of 10 `timeout -s TERM 4` runs.
#[cfg(unix)]
#[test]
fn a_signal_stops_the_tune_and_keeps_what_was_measured() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    if !have_device(dir) {
        return;
    }
    let toml = slow_triad(dir);
    let spec = write(dir, "slow.toml", &toml);
    // `kerntune COMMAND SPEC --db DB [more]`, its output piped.
    // SIGHUP as a terminal leaves it (its default), whatever this test inherited (run under
    // `nohup`, it is ignored, and so it stays for kerntune).
    let start = |command: &str, spec: &std::path::Path, db: &std::path::Path, more: &[&str]| {
        use std::os::unix::process::CommandExt;
        let mut c = piped(dir, &[command, spec.to_str().unwrap(), "--db", db.to_str().unwrap()]);
        c.args(more);
        // SAFETY: between fork and exec the child only resets a signal's disposition
        // (`signal` is async-signal-safe).
        unsafe {
            c.pre_exec(|| {
                libc::signal(libc::SIGHUP, libc::SIG_DFL);
                Ok(())
            })
        };
        c.spawn().unwrap()
    };
    for (signal, code) in [("-INT", 130), ("-TERM", 143), ("-HUP", 129)] {
        let db = dir.join(format!("db{code}.sqlite"));
        let child = start("tune", &spec, &db, &[]);
        // Wait for the first measurements to be written, then signal.
        wait_for(&db);
        std::thread::sleep(std::time::Duration::from_millis(300));
        // SIGTERM twice, as `timeout` sends it.
        let times = if code == 143 { 2 } else { 1 };
        let pid = child.id().to_string();
        let kill = format!("kill {signal} {pid}");
        assert!(Command::new("sh").args(["-c", &vec![kill.as_str(); times].join("; ")]).status().unwrap().success());
        let out = child.wait_with_output().unwrap();
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(code), "{stdout}\n{stderr}");
        let name = match code {
            130 => "SIGINT",
            143 => "SIGTERM",
            _ => "SIGHUP",
        };
        assert!(stderr.contains(&format!("interrupted by {name}")) && stderr.contains("run the same command to resume"), "{stderr}");
        let shown = text(&kerntune(dir, &["db", "show", "--json", "--db", db.to_str().unwrap()])).0;
        let v: serde_json::Value = serde_json::from_str(&shown).unwrap();
        let entry = v["entries"].as_object().unwrap().values().next().unwrap();
        let kept = entry["measurements"].as_object().unwrap().len();
        assert!((1..23).contains(&kept) && entry["winner"].is_null(), "{kept} kept");
        assert!(stderr.contains(&format!("{kept} config(s) measured in this run")), "{stderr}");
        if code == 130 {
            // Resuming reads what was kept and measures on (one more config here).
            let budget = (kept + 1).to_string();
            let again = kerntune(dir, &["tune", spec.to_str().unwrap(), "--db", db.to_str().unwrap(), "--budget", &budget]);
            let out = text(&again).0;
            assert!(out.contains(&format!("evaluated {} ({kept} from the database)", kept + 1)), "{out}");
            // `confirm` stops so too (measuring those configs again, 300 launches each at least:
            // 3 s for two here).
            assert!(toml.contains("min_reps = 30\nmax_reps = 200"));
            let slower = write(dir, "slower.toml", &toml.replace("min_reps = 30\nmax_reps = 200", "min_reps = 300\nmax_reps = 400"));
            let child = start("confirm", &slower, &db, &["--top", "20"]);
            std::thread::sleep(std::time::Duration::from_millis(500));
            assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
            let out = child.wait_with_output().unwrap();
            let (stdout, stderr) = text(&out);
            assert_eq!(out.status.code(), Some(130), "{stdout}\n{stderr}");
            assert!(stderr.contains("interrupted by SIGINT while confirming triad (N=1048576): ") && stderr.contains("measured again, written to"), "{stderr}");
        }
    }
    // Under `nohup` (SIGHUP ignored when it starts) a hang-up leaves the tune to its end: the
    // handler stopped it (exit 129), defeating nohup.
    let db = dir.join("nohup.sqlite");
    let child = Command::new("nohup")
        .arg(env!("CARGO_BIN_EXE_kerntune"))
        .args(["tune", spec.to_str().unwrap(), "--db", db.to_str().unwrap(), "--budget", "4"])
        .env("KERNTUNE_CACHE_DIR", dir)
        .env_remove("KERNTUNE_LOG")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(&db);
    assert!(Command::new("kill").args(["-HUP", &child.id().to_string()]).status().unwrap().success());
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success() && stdout.contains("evaluated 4") && !stderr.contains("interrupted"), "{:?}\n{stdout}\n{stderr}", out.status);
}

/// `kerntune ARGS` with `dir` as its cache, its log level its own, and its output piped: to
/// spawn, and signal or stop while it runs.
fn piped(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_kerntune"));
    c.args(args).env("KERNTUNE_CACHE_DIR", dir).env_remove("KERNTUNE_LOG").stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    c
}

/// Waits until `path` exists (a tune's database: its first measurements written), a minute at most.
fn wait_for(path: &Path) {
    let t = std::time::Instant::now();
    while !path.exists() && t.elapsed() < std::time::Duration::from_secs(60) {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// The shipped triad (its WGSL written into `dir`), slowed down: every config measured 30 to 200
/// times, no racing; the spec's text.
fn slow_triad(dir: &std::path::Path) -> String {
    let wgsl = std::fs::read_to_string(examples().join("triad/triad.wgsl")).unwrap();
    write(dir, "triad.wgsl", &wgsl);
    let toml = std::fs::read_to_string(examples().join("triad/triad.toml")).unwrap();
    let slow = toml
        .replace("source = { wgsl = \"triad.wgsl\", cuda = \"triad.cu\", hip = \"triad.cu\" }", "source = { wgsl = \"triad.wgsl\" }")
        .replace("[bench]\nmax_reps = 50\nmax_seconds = 0.5", "[bench]\nmin_reps = 30\nmax_reps = 200\nmax_seconds = 2.0\nracing = false");
    assert!(slow.contains("racing = false") && !slow.contains("triad.cu"), "the shipped triad spec changed: {toml}");
    slow
}

/// SIGUSR1 (or SIGUSR2), the warning a scheduler sends before a job's time limit (Slurm's
/// `--signal=B:USR1@120`), ends a tune as its time budget would: with a winner from what was
/// measured, stored, exit 0 (the signal's default action killed it, losing what was measured
/// since the last write). With more problems, those left are not started, and the command says
/// so with a status that is not success.
#[cfg(unix)]
#[test]
fn a_schedulers_warning_ends_the_tune_early_with_a_winner() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    if !have_device(dir) {
        return;
    }
    // With a second, smaller problem too.
    let toml = slow_triad(dir);
    let two = toml.replace("[[problems]]\nN = 1048576\n", "[[problems]]\nN = 1048576\n\n[[problems]]\nN = 65536\n");
    assert!(two != toml);
    let one = write(dir, "slow.toml", &toml);
    let two = write(dir, "two.toml", &two);
    for (spec, signal) in [(&one, "-USR1"), (&two, "-USR2")] {
        use std::os::unix::process::CommandExt;
        let db = dir.join(format!("db{signal}.sqlite"));
        // In a process group of its own: the first is signalled with its worker, as a scheduler
        // signals every process of a job (the worker died of it, and was restarted).
        // The second with `--json`: the report says it ended early.
        let json = spec == &two;
        let mut args = vec!["tune", spec.to_str().unwrap(), "--db", db.to_str().unwrap()];
        if json {
            args.push("--json");
        }
        let child = piped(dir, &args).process_group(0).spawn().unwrap();
        // Wait for the first measurements to be written, then signal (twice, as a scheduler may
        // signal a job's processes and its shell: once counts).
        wait_for(&db);
        std::thread::sleep(std::time::Duration::from_millis(300));
        let pid = child.id() as libc::pid_t;
        let (whom, sig) = if spec == &one { (-pid, libc::SIGUSR1) } else { (pid, libc::SIGUSR2) };
        for _ in 0..2 {
            // SAFETY: kill(2) with a process (group) this test started.
            assert_eq!(unsafe { libc::kill(whom, sig) }, 0, "kill {signal}");
        }
        let out = child.wait_with_output().unwrap();
        let (stdout, stderr) = text(&out);
        let shown = text(&kerntune(dir, &["db", "show", "--json", "--db", db.to_str().unwrap()])).0;
        let v: serde_json::Value = serde_json::from_str(&shown).unwrap();
        let entries: Vec<&serde_json::Value> = v["entries"].as_object().unwrap().values().collect();
        assert_eq!(entries.len(), 1, "one problem tuned: {shown}");
        let kept = entries[0]["measurements"].as_object().unwrap().len();
        assert!((1..23).contains(&kept) && !entries[0]["winner"].is_null(), "{kept} kept: {shown}");
        if json {
            let v: serde_json::Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"));
            let reports = v.as_array().unwrap();
            assert_eq!(reports.len(), 1, "{stdout}");
            let r = &reports[0];
            let notes: Vec<&str> = r["notes"].as_array().unwrap().iter().filter_map(|n| n.as_str()).collect();
            assert!(
                r["ended_early"] == true
                    && r["evaluated"] == kept
                    && notes.iter().any(|n| n.starts_with("ended early, as asked") && n.contains("the same command goes on from them"))
                    && !notes.iter().any(|n| n.contains("died")),
                "{stdout}\n{stderr}"
            );
        } else {
            assert!(
                stdout.contains(&format!("evaluated {kept} (0 from the database)"))
                    && stdout.contains("note: ended early, as asked (`kerntune tune` ends so on SIGUSR1 or SIGUSR2")
                    && stdout.contains("(winner written)")
                    && stdout.contains("the same command goes on from them")
                    && !stdout.contains("died"),
                "{stdout}\n{stderr}"
            );
        }
        if spec == &one {
            assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
            // The winner is kept for launches, but answers no tune: the command run again (here
            // with a budget of one more) goes on from what was kept, and its winner is whole.
            let shown = text(&kerntune(dir, &["db", "show", "--db", db.to_str().unwrap()])).0;
            assert!(shown.contains("(its tune ended early; the same tune command goes on)"), "{shown}");
            // So does the HTML report's entry.
            let page = dir.join("report.html");
            let r = kerntune(dir, &["report", spec.to_str().unwrap(), "--db", db.to_str().unwrap(), "--out", page.to_str().unwrap()]);
            assert!(r.status.success(), "{}", text(&r).1);
            let html = std::fs::read_to_string(&page).unwrap();
            assert!(html.contains("its tune was ended early (SIGUSR1 or SIGUSR2"), "no note in the report");
            let again = text(&kerntune(dir, &["tune", spec.to_str().unwrap(), "--db", db.to_str().unwrap(), "--budget", &(kept + 1).to_string(), "--json"])).0;
            let v: serde_json::Value = serde_json::from_str(&again).unwrap_or_else(|e| panic!("{e}: {again}"));
            assert!(v[0]["evaluated"] == kept + 1 && v[0]["from_db"] == kept && v[0]["db_hit"] == false && v[0]["ended_early"] == false, "{again}");
            let shown = text(&kerntune(dir, &["db", "show", "--db", db.to_str().unwrap()])).0;
            assert!(shown.contains(" winner ") && !shown.contains("ended early"), "{shown}");
            let hit = text(&kerntune(dir, &["tune", spec.to_str().unwrap(), "--db", db.to_str().unwrap(), "--budget", &(kept + 1).to_string()])).0;
            assert!(hit.contains("database hit"), "{hit}");
            // `kerntune confirm` ends early so too (measuring those configs again, 300 launches
            // each at least: a second or more each here), with the winner among those it measured.
            let slower = write(dir, "slower.toml", &toml.replace("min_reps = 30\nmax_reps = 200", "min_reps = 300\nmax_reps = 400"));
            let child = piped(dir, &["confirm", slower.to_str().unwrap(), "--db", db.to_str().unwrap(), "--top", "20"]).spawn().unwrap();
            std::thread::sleep(std::time::Duration::from_millis(1500));
            // SAFETY: kill(2) with a process this test started.
            assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGUSR1) }, 0);
            let out = child.wait_with_output().unwrap();
            let (stdout, stderr) = text(&out);
            assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
            assert!(
                stdout.contains("note: ended early, as asked")
                    && stdout.contains("(ended early by SIGUSR1: only the configs measured again before it were compared)"),
                "{stdout}\n{stderr}"
            );
        } else {
            assert_eq!(out.status.code(), Some(128 + libc::SIGUSR2), "{stdout}\n{stderr}");
            assert!(stderr.contains("ended early by SIGUSR2: 1 of 2 problems tuned, the rest not started; run the same command to tune them"), "{stderr}");
        }
    }
}

#[test]
fn a_shader_that_never_ends_costs_its_configs_not_the_tune() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    if !have_device(dir) {
        return;
    }
    // The shipped example (examples/faults/hang.toml): HANG = 1 loops forever.
    let spec = examples().join("faults/hang.toml");
    let db = dir.join("db.sqlite");
    // In-process, the first config that never ends kept the adapter busy and the tune ended
    // with "every device was lost"; in a worker process it is killed and the tune goes on.
    let o = kerntune(dir, &["tune", spec.to_str().unwrap(), "--json", "--db", db.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let run = &v[0];
    let hang_of = |c: &serde_json::Value| c["params"].as_array().unwrap().iter().find(|p| p[0] == "HANG").map(|p| p[1].as_i64().unwrap()).unwrap();
    assert_eq!(hang_of(&run["winner"]), 0, "{out}");
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), 4, "{out}");
    for r in results {
        if hang_of(&r["config"]) == 1 {
            assert_eq!((r["outcome"].as_str(), r["kind"].as_str()), (Some("failed"), Some("timed_out")), "{r}");
        } else {
            assert_eq!(r["outcome"], "measured", "a config after one that never ended is measured on a fresh worker: {r}");
        }
    }
    // The cause is explained: the limit against the measured times, and the value that hangs.
    let causes = run["causes"].as_array().unwrap();
    assert_eq!(causes.len(), 1, "{out}");
    let diagnosis: Vec<&str> = causes[0]["diagnosis"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
    assert!(diagnosis[0].contains("did not end within the 1 s limit ([bench] timeout)"), "{diagnosis:?}");
    assert_eq!(diagnosis[1], "every config that timed out has HANG = 1 (2 configs), and no config measured has it");
    // Everything was kept.
    let shown = text(&kerntune(dir, &["db", "show", "--json", "--db", db.to_str().unwrap()])).0;
    let v: serde_json::Value = serde_json::from_str(&shown).unwrap();
    let entry = v["entries"].as_object().unwrap().values().next().unwrap();
    assert_eq!(entry["measurements"].as_object().unwrap().len(), 4);
    // A kernel name that is not an entry point of the source: wgpu's cause in the first line,
    // and the entry points there are.
    std::fs::copy(examples().join("faults/hang.wgsl"), dir.join("hang.wgsl")).unwrap();
    let toml = std::fs::read_to_string(&spec).unwrap().replace("name = \"hang\"", "name = \"hanging\"");
    let wrong = write(dir, "wrong.toml", &toml);
    bad(dir, &["tune", wrong.to_str().unwrap(), "--no-db"], &["Unable to find entry point 'hanging'", "set [kernel] name to `hang`"]);
}

/// A Kernel Tuner cache of a 4×4 space whose compile times grow with `tile` (ms, as Kernel
/// Tuner writes them); `compile_time` left out of one entry when `gap`.
fn kt_cache(dir: &Path, gap: bool) -> PathBuf {
    let mut cache = serde_json::Map::new();
    for tile in [1, 2, 4, 8] {
        for block in [32, 64, 128, 256] {
            let mut e = serde_json::json!({"tile": tile, "block": block, "time": 1.0 + f64::from(block) / 256.0, "times": [1.0],
                "compile_time": 500.0 * f64::from(tile), "benchmark_time": 20.0, "verification_time": 5.0});
            if gap && tile == 8 && block == 256 {
                e.as_object_mut().unwrap().remove("compile_time");
            }
            cache.insert(format!("{tile},{block}"), e);
        }
    }
    let v = serde_json::json!({"device_name": "test", "tune_params_keys": ["tile", "block"], "tune_params": {"tile": [1, 2, 4, 8], "block": [32, 64, 128, 256]}, "cache": cache});
    let p = dir.join(if gap { "gap.json" } else { "space.json" });
    std::fs::write(&p, v.to_string()).unwrap();
    p
}

#[test]
fn simulate_reports_the_wall_time_a_compile_pipeline_would_take() {
    let d = tempfile::tempdir().unwrap();
    let space = kt_cache(d.path(), false);
    let args = ["simulate", space.to_str().unwrap(), "--compile-threads", "4", "--budget", "16", "--strategy", "random,genetic", "--repeats", "3", "--json"];
    let o = kerntune(d.path(), &args);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for r in rows {
        let m = &r["model"];
        // The whole space: 16 configs, 0.5 + 1 + 2 + 4 s per block size, summed 30 s; on 4
        // threads no order beats 7.5 s, nor does any run take longer than one thread would.
        assert_eq!(m["evaluated"], 16, "{r}");
        assert!((m["compile_s"].as_f64().unwrap() - 30.0).abs() < 1e-6, "{r}");
        assert!((m["bound_s"].as_f64().unwrap() - 7.5).abs() < 1e-6, "{r}");
        for order in ["model", "fifo", "oracle"] {
            let wall = r[order]["wall_s"].as_f64().unwrap();
            assert!((7.5..30.5).contains(&wall), "{order}: {r}");
        }
    }
    // Random sampling proposes all 16 at once: longest first by the true times is the ideal
    // schedule (each thread 4 + 2 + 1 + 0.5 s), plus the measuring of the last configs.
    let random = &rows[0]["oracle"]["wall_s"].as_f64().unwrap();
    assert!((7.5..7.95).contains(random), "{}", rows[0]);
    // The table names the orders compared; the progress bar is only drawn on a terminal, so a
    // log of standard error stays empty.
    let o = kerntune(d.path(), &args[..args.len() - 1]);
    let (out, err) = text(&o);
    assert!(o.status.success() && out.contains("first in, first out") && out.contains("space"), "{out}");
    assert!(err.is_empty(), "{err}");
    // A config without a recorded compile time: one line naming it and the field.
    let gap = kt_cache(d.path(), true);
    let o = kerntune(d.path(), &["simulate", gap.to_str().unwrap(), "--compile-threads", "4", "--budget", "16", "--strategy", "exhaustive"]);
    let (_, err) = text(&o);
    assert!(!o.status.success(), "{err}");
    assert!(err.contains("gap.json") && err.contains("tile=8, block=256") && err.contains("compile_time"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    // Counts to report that no run reaches: an error naming the flag, not an empty column.
    let space = space.to_str().unwrap();
    for (at, says) in [("0", "--at: 0 evaluations have no score"), ("8,50", "--at 50 is beyond --budget 16")] {
        let o = kerntune(d.path(), &["simulate", space, "--budget", "16", "--at", at, "--repeats", "2"]);
        let (_, err) = text(&o);
        assert!(!o.status.success() && err.contains(says), "{at}: {err}");
    }
    // Without --at, the table ends at the budget, whatever it is.
    let o = kerntune(d.path(), &["simulate", space, "--budget", "12", "--strategy", "random", "--repeats", "2", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&text(&o).0).unwrap();
    assert_eq!(v[0]["at"].as_object().unwrap().keys().collect::<Vec<_>>(), ["12"], "{v}");
    // Without --budget, the run goes to the largest --at.
    let o = kerntune(d.path(), &["simulate", space, "--at", "8,500", "--strategy", "random", "--repeats", "2", "--json"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v[0]["mean"].as_array().unwrap().len(), 500, "{v}");
    assert!(v[0]["at"]["500"]["mean"].as_f64().is_some(), "{v}");
    // --svg: the curves, one per strategy, in a panel for the space.
    let svg = d.path().join("curves.svg");
    let o = kerntune(d.path(), &["simulate", space, "--budget", "12", "--strategy", "random,hybrid", "--repeats", "2", "--svg", svg.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert!(o.status.success() && out.contains("curves written to"), "{out}{err}");
    let drawn = std::fs::read_to_string(&svg).unwrap();
    assert!(drawn.contains("fraction of optimum") && drawn.contains("\nrandom\n") && drawn.contains("\nhybrid\n"), "{drawn}");
    assert!(drawn.contains("\nevaluations\n"), "12 evaluations on a linear axis");
    // From 1 to 100 evaluations and more, a log axis labelled 1, 2, 5 of each decade.
    let o = kerntune(d.path(), &["simulate", space, "--budget", "120", "--strategy", "random", "--repeats", "2", "--svg", svg.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o).1);
    let drawn = std::fs::read_to_string(&svg).unwrap();
    assert!(drawn.contains("\nevaluations (log scale)\n") && drawn.contains("\n50\n") && drawn.contains("\n100\n"), "{drawn}");
}

/// A tune with `--no-db --json` (a CI job keeping its report as an artifact): `db merge
/// REPORT.json` takes the report in as the entry its tune would have stored, and the same tune
/// with that database is a hit, measuring nothing, with the same winner; a report that does not
/// say what it was made for (an earlier build's) is refused with one line, nothing written.
#[test]
fn a_tune_report_merges_into_a_database_as_its_entry() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    if !have_device(dir) {
        return;
    }
    write(dir, "ok.wgsl", GOOD_WGSL);
    // Two problems: the report is a list of two tunes, two entries.
    let p = write(dir, "good.toml", &spec("ok.wgsl", "", "WG_SIZE").replace("[[problems]]\nN = 1000", "[[problems]]\nN = 1000\n[[problems]]\nN = 2000"));
    let p = p.to_str().unwrap();
    let o = kerntune(dir, &["tune", p, "--no-db", "--json"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let report = dir.join("report.json");
    std::fs::write(&report, &out).unwrap();
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v.as_array().map(Vec::len), Some(2), "one report per problem");
    assert!(v[0]["origin"]["space"].is_string() && v[0]["environment"]["kerntune"].is_string(), "{}", v[0]["origin"]);
    let db = dir.join("fleet.sqlite");
    let o = kerntune(dir, &["db", "merge", report.to_str().unwrap(), "--db", db.to_str().unwrap()]);
    let (out2, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out2.contains("0 → 2 entries"), "{out2}");
    let o = kerntune(dir, &["tune", p, "--db", db.to_str().unwrap(), "--json"]);
    let (hit, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let h: serde_json::Value = serde_json::from_str(&hit).unwrap();
    for k in 0..2 {
        assert_eq!(h[k]["db_hit"], true, "the merged report's winner is reused: {err}");
        assert_eq!(h[k]["winner"], v[k]["winner"]);
        assert_eq!(h[k]["evaluated"], v[k]["evaluated"], "every measured config came in");
    }
    // The database's entry keeps the tune's environment, not the report's file name.
    let o = kerntune(dir, &["db", "export", "--db", db.to_str().unwrap()]);
    let exported = text(&o).0;
    assert!(!exported.contains("report.json") && exported.contains(v[0]["environment"]["kerntune"].as_str().unwrap()), "{exported}");
    // A report of an earlier build: no `origin`.
    let mut old = v.clone();
    old[1].as_object_mut().unwrap().remove("origin");
    let old_path = dir.join("old.json");
    std::fs::write(&old_path, old.to_string()).unwrap();
    let before = std::fs::read(&db).unwrap();
    bad(
        dir,
        &["db", "merge", old_path.to_str().unwrap(), "--db", db.to_str().unwrap()],
        &["old.json", "no `origin`", "left untouched", "kerntune report --db"],
    );
    assert_eq!(std::fs::read(&db).unwrap(), before, "nothing written");
}

/// A split tune by hand: two shards each measure their part, `db merge` combines them,
/// `confirm` measures the best again and stores the winner; merging a shard of another space is
/// refused with nothing written, and bad shard and device arguments are one line each.
#[test]
fn shards_merge_and_confirm() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    if !have_device(dir) {
        return;
    }
    write(dir, "ok.wgsl", GOOD_WGSL);
    let p = write(dir, "good.toml", &spec("ok.wgsl", "", "WG_SIZE").replace("WG_SIZE = [32, 64]", "WG_SIZE = [32, 64, 128, 256]"));
    let p = p.to_str().unwrap();
    let mut keys = Vec::new();
    for k in 0..2 {
        let db = dir.join(format!("shard-{k}.sqlite"));
        let o = kerntune(dir, &["tune", p, "--shard", &format!("{k}/2"), "--db", db.to_str().unwrap(), "--json"]);
        let (out, err) = text(&o);
        assert!(o.status.success(), "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v[0]["shard"], serde_json::json!({"index": k, "count": 2}));
        keys.extend(v[0]["results"].as_array().unwrap().iter().map(|r| r["config"].to_string()));
    }
    keys.sort();
    keys.dedup();
    // Each config measured by one shard: the reference is a CPU function, so no config is every
    // shard's reference (the default is measured by the shard whose part holds it).
    assert_eq!(keys.len(), 4, "{keys:?}");
    // The shard whose part does not hold it says so.
    let o = kerntune(dir, &["tune", p, "--shard", "1/2", "--db", dir.join("again-1.sqlite").to_str().unwrap()]);
    let out = text(&o).0;
    assert!(out.contains("default: WG_SIZE=32 is in shard 0/2's part of the space, not shard 1/2's"), "{out}");
    let merged = dir.join("merged.sqlite");
    let (s0, s1) = (dir.join("shard-0.sqlite"), dir.join("shard-1.sqlite"));
    let o = kerntune(dir, &["db", "merge", s0.to_str().unwrap(), s1.to_str().unwrap(), "--db", merged.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o).1);
    let o = kerntune(dir, &["confirm", p, "--db", merged.to_str().unwrap(), "--top", "3"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("is the winner among the shards' best 3 of 4 measured configs"), "{out}");
    assert!(out.contains("; strategy: listed;"), "confirm measured the listed configs, searched nothing: {out}");
    assert!(!err.contains("warning:"), "every shard merged: {err}");
    // The merged entry keeps each shard's run note apart, and confirm's (the report draws a run
    // from the records it still holds, which confirm's measurements may have replaced: its
    // labels are the report test's).
    let shown: serde_json::Value = serde_json::from_str(&text(&kerntune(dir, &["db", "show", "--json", "--db", merged.to_str().unwrap()])).0).unwrap();
    let runs = shown["entries"].as_object().unwrap().values().next().unwrap()["runs"].as_array().unwrap().clone();
    let said: Vec<(String, serde_json::Value)> = runs.iter().map(|r| (r["strategy"].as_str().unwrap().to_string(), r["shard"].clone())).collect();
    assert_eq!(said.iter().filter(|(s, _)| s == "listed").count(), 1, "{said:?}");
    assert_eq!(said.iter().filter(|(_, k)| !k.is_null()).count(), 2, "{said:?}");
    // With one shard merged, confirm says which are missing; a plain tune of the shard's own
    // database does not take the shard's winner (its half's best) for the space's.
    let half = dir.join("half.sqlite");
    assert!(kerntune(dir, &["db", "merge", s0.to_str().unwrap(), "--db", half.to_str().unwrap()]).status.success());
    let o = kerntune(dir, &["confirm", p, "--db", half.to_str().unwrap()]);
    let (_, err) = text(&o);
    assert!(o.status.success() && err.contains("shard 0/2 only; 1/2 not merged, so their configs are not compared"), "{err}");
    let o = kerntune(dir, &["db", "show", "--db", half.to_str().unwrap()]);
    assert!(text(&o).0.contains("(of shard 0/2 only; 1/2 not merged)"), "{}", text(&o).0);
    // The confirmed winner stays shard 0/2's: a plain tune of that database selects again.
    let o = kerntune(dir, &["tune", p, "--db", half.to_str().unwrap(), "--json"]);
    let v: serde_json::Value = serde_json::from_str(&text(&o).0).unwrap();
    assert_eq!((v[0]["db_hit"].as_bool(), v[0]["evaluated"].as_u64(), v[0]["from_db"].as_u64()), (Some(false), Some(4), Some(2)), "{}", v[0]);
    let o = kerntune(dir, &["tune", p, "--db", s1.to_str().unwrap(), "--json"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    // Shard 1/2 measured its two configs, no more.
    assert_eq!((v[0]["db_hit"].as_bool(), v[0]["evaluated"].as_u64(), v[0]["from_db"].as_u64()), (Some(false), Some(4), Some(2)), "{}", v[0]);
    let v: serde_json::Value = serde_json::from_slice(&kerntune(dir, &["db", "show", "--json", "--db", merged.to_str().unwrap()]).stdout).unwrap();
    let entry = v["entries"].as_object().unwrap().values().next().unwrap();
    assert!(entry["winner"]["config"].is_string());
    assert_eq!(entry["measurements"].as_object().unwrap().len(), 4);
    // A shard of another space (one more value) is refused; the target is left as it was.
    let other = write(dir, "other.toml", &spec("ok.wgsl", "", "WG_SIZE").replace("WG_SIZE = [32, 64]", "WG_SIZE = [32, 64, 128]"));
    let s2 = dir.join("other-0.sqlite");
    assert!(kerntune(dir, &["tune", other.to_str().unwrap(), "--shard", "0/2", "--db", s2.to_str().unwrap()]).status.success());
    let before = std::fs::read(&merged).unwrap();
    bad(
        dir,
        &["db", "merge", s2.to_str().unwrap(), "--db", merged.to_str().unwrap()],
        &["not merging", "other-0.sqlite", "the search spaces differ", "one spec"],
    );
    assert_eq!(std::fs::read(&merged).unwrap(), before, "nothing written");
    // So is a shard of the same space timed another way (its times are not comparable).
    let unflushed = write(
        dir,
        "unflushed.toml",
        &format!("{}[bench]\nflush_l2 = false\n", spec("ok.wgsl", "", "WG_SIZE").replace("WG_SIZE = [32, 64]", "WG_SIZE = [32, 64, 128, 256]")),
    );
    let s3 = dir.join("unflushed-0.sqlite");
    assert!(kerntune(dir, &["tune", unflushed.to_str().unwrap(), "--shard", "0/2", "--db", s3.to_str().unwrap()]).status.success());
    bad(
        dir,
        &["db", "merge", s3.to_str().unwrap(), "--db", merged.to_str().unwrap()],
        &["not merging", "unflushed-0.sqlite", "the L2 flushing settings differ", "one spec"],
    );
    assert_eq!(std::fs::read(&merged).unwrap(), before, "nothing written");
    // A database of an older layout is one line, and nothing is lost.
    let old = dir.join("old.sqlite");
    std::fs::copy(&s0, &old).unwrap();
    let c = std::process::Command::new("python3")
        .args([
            "-c",
            &format!("import sqlite3; c = sqlite3.connect('{}'); c.execute(\"UPDATE meta SET value='1' WHERE name='layout'\"); c.commit()", old.display()),
        ])
        .status();
    if c.is_ok_and(|s| s.success()) {
        bad(dir, &["db", "merge", old.to_str().unwrap(), "--db", merged.to_str().unwrap()], &["old.sqlite", "format version 1", "reads version 3"]);
        assert_eq!(std::fs::read(&merged).unwrap(), before);
    }
    for (args, want) in [
        (vec!["--shard", "5/4"], vec!["--shard", "`5/4`", "0 to 3"]),
        (vec!["--shard", "0/0"], vec!["--shard", "at least one shard"]),
        (vec!["--devices", "0,0"], vec!["--devices", "device 0 is listed twice"]),
        (vec!["--devices", "7", "--backend", "wgpu"], vec!["--devices", "no wgpu adapter #7: this machine has "]),
        (vec!["--devices", "x"], vec!["--devices", "`x` is not a device index"]),
    ] {
        let mut a = vec!["tune", p, "--no-db"];
        a.extend(args);
        bad(dir, &a, &want);
    }
}

/// Verification is the user's to choose: expected outputs from a file, no reference, per-output
/// tolerances, a sample; a CUDA spec whose source is HIP is one error naming the file beside it.
#[test]
fn verification_options_and_language_mismatch() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    if !have_device(dir) {
        return;
    }
    write(dir, "ok.wgsl", GOOD_WGSL);
    let p = write(dir, "good.toml", &spec("ok.wgsl", "", "WG_SIZE"));
    let p = p.to_str().unwrap();
    let json = |args: &[&str]| -> serde_json::Value {
        let mut a = vec!["tune", p, "--no-db", "--json"];
        a.extend_from_slice(args);
        let o = kerntune(dir, &a);
        assert!(o.status.success(), "{args:?}: {}", text(&o).1);
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()[0].clone()
    };
    // Expected outputs that are wrong on purpose (zeros): every config disagrees, and the
    // summary says so first.
    let zeros = dir.join("y.bin");
    std::fs::write(&zeros, vec![0u8; 4000]).unwrap();
    let o = kerntune(dir, &["tune", p, "--no-db", "--reference", &format!("y={}", zeros.display())]);
    let (out, err) = text(&o);
    assert!(!o.status.success(), "{out}");
    assert!(err.contains("all 2 configs gave the wrong output: `y`: 1000 of 1000 elements differ"), "{err}");
    // No reference: nothing is verified.
    let r = json(&["--reference", "none"]);
    assert_eq!(r["reference"], "none");
    assert!(r["results"].as_array().unwrap().iter().all(|x| x["verified"] == false));
    let r = json(&["--reference", "first-valid", "--atol", "y=1e-3", "--rtol", "1e-4", "--verify-sample", "1"]);
    assert_eq!(r["reference"], "first valid config");
    assert!(r["results"].as_array().unwrap().iter().all(|x| x["verified"] == true), "the sample, the reference and the finalists: {r}");
    bad(dir, &["tune", p, "--reference", "bogus"], &["--reference", "`bogus`", "first-valid"]);
    bad(dir, &["tune", p, "--atol=-1"], &["--atol", "not a tolerance"]);
    bad(dir, &["tune", p, "--verify-sample", "0"], &["--verify-sample", "verifies nothing"]);
    let short = dir.join("short.bin");
    std::fs::write(&short, vec![0u8; 12]).unwrap();
    bad(dir, &["tune", p, "--no-db", "--reference", &format!("y={}", short.display())], &["verify.expected.y", "12 bytes", "1000 elements"]);
    // A CUDA spec pointing at a HIP source, with the CUDA file beside it.
    write(dir, "conv.cu.hip", "#include <hip/hip_runtime.h>\nextern \"C\" __global__ void conv(float* x) {}\n");
    write(dir, "conv.cu", "extern \"C\" __global__ void conv(float* x) {}\n");
    let cu = write(dir, "conv.toml", &spec("ok.wgsl", "", "WG_SIZE").replace("source = { wgsl = \"ok.wgsl\" }", "source = { cuda = \"conv.cu.hip\" }"));
    bad(
        dir,
        &["check", cu.to_str().unwrap()],
        &["conv.toml", "kernel.source.cuda", "`hip/hip_runtime.h`, a HIP header", "conv.cu beside it looks like the CUDA version"],
    );
}

/// `simulate --leave-one-out` on the six-GPU spaces: a record per space and prior kind, with
/// the mean and the 5th percentile at each `--at`.
#[test]
fn simulate_leave_one_out_reports_each_held_out_gpu() {
    let d = tempfile::tempdir().unwrap();
    let gpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/spaces/gpus");
    let files: Vec<String> = ["A100", "A4000", "W7800"].iter().map(|g| gpus.join(format!("convolution_{g}.json.gz")).display().to_string()).collect();
    if !Path::new(&files[0]).exists() {
        assert!(std::env::var("CI").is_err(), "CI has ../shared beside the clone");
        eprintln!("SKIPPED: no ../shared/spaces/gpus");
        return;
    }
    let mut args = vec!["simulate", "--leave-one-out", "--repeats", "4", "--at", "5,10", "--json"];
    args.extend(files.iter().map(String::as_str));
    let o = kerntune(d.path(), &args);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 9, "3 held-out spaces × none, plain, adaptive");
    for r in rows {
        assert!(["none", "plain", "adaptive"].contains(&r["prior"].as_str().unwrap()), "{r}");
        for n in ["5", "10"] {
            let (m, p5) = (r["at"][n]["mean"].as_f64().unwrap(), r["at"][n]["p5"].as_f64().unwrap());
            assert!(p5 <= m + 1e-12 && m <= 1.0 && p5 > 0.0, "{r}");
        }
        assert!(r.get("withdrawn").is_none(), "one at a time nothing is withdrawn: {r}");
        // With priors, how many evaluations the sources' ranking proposed and how often it
        // proposed the final pick; plain transfer's every one.
        match r["prior"].as_str().unwrap() {
            "none" => assert!(r.get("from_sources").is_none() && r.get("pick_from_sources").is_none(), "{r}"),
            kind => {
                let (n, pick) = (r["from_sources"].as_f64().unwrap(), r["pick_from_sources"].as_f64().unwrap());
                assert!((0.0..=10.0).contains(&n) && (0.0..=1.0).contains(&pick), "{r}");
                assert!(kind != "plain" || (n, pick) == (10.0, 1.0), "{r}");
            }
        }
    }
    // With 16 in flight the adaptive search withdraws picks the outcomes rank lower, and says
    // how many; the searches without priors and plain transfer never do.
    let mut par = vec!["simulate", "--leave-one-out", "--repeats", "4", "--budget", "20", "--at", "20", "--parallel", "16", "--json"];
    par.extend(files.iter().map(String::as_str));
    let o = kerntune(d.path(), &par);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    for r in v.as_array().unwrap() {
        let w = r.get("withdrawn").and_then(serde_json::Value::as_f64);
        assert_eq!(w.is_some_and(|w| w > 0.0), r["prior"] == "adaptive", "{r}");
    }
    // `--jobs N` keeps in flight what `tune -j N` keeps: with one compile thread that is 2
    // throughout, so the same records as `--parallel 2`; the table says what it keeps.
    let with = |flight: &[&str]| {
        let mut a = vec!["simulate", "--leave-one-out", "--repeats", "4", "--budget", "20", "--at", "20", "--json"];
        a.extend(flight);
        a.extend(files.iter().map(String::as_str));
        let o = kerntune(d.path(), &a);
        assert!(o.status.success(), "{}", text(&o).1);
        text(&o).0
    };
    assert_eq!(with(&["--jobs", "1"]), with(&["--parallel", "2"]));
    let mut table = vec!["simulate", "--leave-one-out", "--repeats", "2", "--at", "5", "--jobs", "16"];
    table.extend(files.iter().map(String::as_str));
    let (out, err) = text(&kerntune(d.path(), &table));
    assert!(out.contains("proposals in flight as a tune with -j 16 keeps them: 24 until outcomes are in"), "{out}{err}");
    assert!(out.contains("sources' picks (final pick)") && out.contains(" of 5 ("), "{out}");
    // --svg: a panel per held-out space, each with its three curves.
    let svg = d.path().join("loo.svg");
    let mut plot = vec!["simulate", "--leave-one-out", "--repeats", "2", "--at", "5", "--svg", svg.to_str().unwrap()];
    plot.extend(files.iter().map(String::as_str));
    let (out, err) = text(&kerntune(d.path(), &plot));
    assert!(out.trim_end().ends_with(&format!("curves written to {}", svg.display())), "{out}{err}");
    let drawn = std::fs::read_to_string(&svg).unwrap();
    for g in ["A100", "A4000", "W7800"] {
        assert!(drawn.contains(&format!("convolution_{g}: fraction of optimum")), "no panel for {g}");
    }
    // One legend for the figure, above the panels (plotters writes a label's text on a line of
    // its own).
    let first_panel = drawn.find("convolution_A100: fraction of optimum").unwrap();
    for curve in ["\nnone (hybrid)\n", "\nplain transfer\n", "\nadaptive\n"] {
        assert_eq!(drawn.matches(curve).count(), 1, "{curve} once, in the figure's legend");
        assert!(drawn.find(curve).unwrap() < first_panel, "{curve}'s legend above the panels");
    }
    let o = kerntune(d.path(), &["simulate", "--leave-one-out", "--jobs", "0", &files[0], &files[1]]);
    assert!(!o.status.success() && text(&o).1.contains("--jobs 0: give at least 1"), "{}", text(&o).1);
    let o = kerntune(d.path(), &["simulate", "--compile-threads", "0", &files[0]]);
    assert!(!o.status.success() && text(&o).1.contains("--compile-threads 0: give at least 1"), "{}", text(&o).1);
    let o = kerntune(d.path(), &["simulate", "--leave-one-out", "--jobs", "4", "--parallel", "3", &files[0], &files[1]]);
    assert!(!o.status.success() && text(&o).1.contains("cannot be used with"), "{}", text(&o).1);
    let o = kerntune(d.path(), &["simulate", "--leave-one-out", &files[0]]);
    assert!(!o.status.success() && text(&o).1.contains("at least two spaces"));
    // A space of another kernel among them is not held out (it has no prior), and says so.
    let other = kt_cache(d.path(), false);
    let other = other.to_str().unwrap();
    args.push(other);
    let o = kerntune(d.path(), &args);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert_eq!(serde_json::from_str::<serde_json::Value>(&out).unwrap().as_array().unwrap().len(), 9, "the same 9 records");
    assert!(err.contains("note: space is not held out: no other space given can be its prior") && err.contains("another parameter space"), "{err}");
    // With no two of one kernel, nothing can be held out: an error, not an empty table.
    let o = kerntune(d.path(), &["simulate", "--leave-one-out", &files[0], other]);
    let (_, err) = text(&o);
    assert!(!o.status.success() && err.contains("no two of the spaces given share a parameter space"), "{err}");
}

/// A tune's own `--json` report is a recorded space: `simulate` replays it in evaluations and
/// in time (each config's compile and evaluation seconds as the tune spent them), `report`
/// draws it, `--prior` learns from it, and `--db` leaves it untouched.
#[test]
fn a_tune_report_is_simulated_drawn_and_learned_from() {
    let d = tempfile::tempdir().unwrap();
    if !have_device(d.path()) {
        return;
    }
    let spec = examples().join("triad/triad.toml");
    let o = kerntune(d.path(), &["tune", spec.to_str().unwrap(), "--backend", "wgpu", "--no-db", "--strategy", "exhaustive", "--json"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let report = d.path().join("triad.json");
    std::fs::write(&report, &out).unwrap();
    let r: serde_json::Value = serde_json::from_str(&out).unwrap();
    let measured = r[0]["results"].as_array().unwrap().iter().filter(|x| x["outcome"] == "measured").count();
    // The winner may be another of the configs tied within noise: the optimum is the fastest mean.
    let fastest_ms = r[0]["results"].as_array().unwrap().iter().filter_map(|x| x["stats"]["mean"].as_f64()).fold(f64::INFINITY, f64::min) * 1e3;
    let path = report.to_str().unwrap();
    let o = kerntune(d.path(), &["simulate", path, "--strategy", "random", "--repeats", "2", "--budget", "4"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.starts_with("triad (") && out.contains(&format!("{measured} configs, 0 failed, optimum {fastest_ms:.4} ms")), "{out}");
    // In time: the whole space measured in a simulated minute, its optimum found.
    let o = kerntune(d.path(), &["simulate", path, "--strategy", "exhaustive", "--repeats", "1", "--budget", "1m", "--at", "1m", "--json"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!((v[0]["evaluations"].as_f64(), v[0]["at"]["1m"]["mean"].as_f64()), (Some(measured as f64), Some(1.0)), "{v}");
    // A budgeted tune's report is part of the space: the simulation says what it scores against.
    let o = kerntune(d.path(), &["tune", spec.to_str().unwrap(), "--backend", "wgpu", "--no-db", "--strategy", "random", "--budget", "5", "--json"]);
    assert!(o.status.success(), "{}", text(&o).1);
    let part = d.path().join("part.json");
    std::fs::write(&part, &o.stdout).unwrap();
    let o = kerntune(d.path(), &["simulate", part.to_str().unwrap(), "--strategy", "random", "--repeats", "2", "--budget", "3"]);
    let (_, err) = text(&o);
    assert!(o.status.success() && err.contains(&format!("a tune's report of 5 of the {measured} configs it had to choose from (a budget)")), "{err}");
    // As a prior.
    let o = kerntune(d.path(), &["tune", spec.to_str().unwrap(), "--backend", "wgpu", "--no-db", "--budget", "4", "--prior", path]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains(&format!("prior: 1 target, {measured} measurements (")), "{out}");
    assert!(out.contains("strategy: transfer"), "{out}");
    // Drawn as the tune's database entry would be.
    let page = d.path().join("triad.html");
    let o = kerntune(d.path(), &["report", "--db", path, "-o", page.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains(&format!("(1 entry, {measured} measured configs,")), "{out}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("best so far against wall time") && html.contains("llvmpipe"), "the search trace, on its device");
    // Given as a database: said to be a report, never called damaged (nor to be cleared).
    let before = std::fs::read(&report).unwrap();
    let o = kerntune(d.path(), &["db", "show", "--db", path]);
    let (_, err) = text(&o);
    assert!(!o.status.success() && err.contains("is a kerntune tune report (`kerntune tune --json`), not a kerntune database"), "{err}");
    assert!(!err.contains("db clear"), "{err}");
    assert_eq!(std::fs::read(&report).unwrap(), before);
}

/// A fleet's database, and each form `db export` writes of it, holds several spaces: `simulate`
/// scores each entry (and holds each out in turn), a searched entry says it is part of its
/// space, and `--prior` reads a file of several documents as it reads the database: this kernel
/// at this problem, or this target's nearest sizes; the others are counted in a note.
#[test]
fn a_fleets_database_and_its_exports_are_simulated_and_learned_from() {
    let d = tempfile::tempdir().unwrap();
    if !have_device(d.path()) {
        return;
    }
    let spec = examples().join("triad/triad.toml");
    let spec = spec.to_str().unwrap();
    let db = d.path().join("fleet.sqlite");
    let db = db.to_str().unwrap();
    let o = kerntune(d.path(), &["tune", spec, "--backend", "wgpu", "--db", db, "--strategy", "exhaustive", "--key", "N=4096", "--key", "N=65536"]);
    assert!(o.status.success(), "{}", text(&o).1);
    let t4 = d.path().join("fleet.t4.json");
    let own = d.path().join("fleet.json");
    for (file, format) in [(&t4, "t4"), (&own, "kerntune")] {
        let o = kerntune(d.path(), &["db", "export", "--db", db, "--format", format, "-o", file.to_str().unwrap()]);
        assert!(o.status.success(), "{}", text(&o).1);
    }
    for (file, name) in [(db, "fleet.sqlite"), (t4.to_str().unwrap(), "fleet.t4"), (own.to_str().unwrap(), "fleet")] {
        let o = kerntune(d.path(), &["simulate", file, "--strategy", "random", "--repeats", "2", "--budget", "4"]);
        let (out, err) = text(&o);
        assert!(o.status.success(), "{file}: {err}");
        for problem in ["N=4096", "N=65536"] {
            assert!(out.contains(&format!("{name} triad {problem} (llvmpipe")) && out.contains("23 configs, 0 failed"), "{file}: {out}");
        }
        assert!(!err.contains("note:"), "an exhaustive tune's entries are whole spaces: {err}");
    }
    // Drawn: an entry each, with the launches each config's mean was measured over.
    let page = d.path().join("fleet.html");
    let o = kerntune(d.path(), &["report", "--db", t4.to_str().unwrap(), "-o", page.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert!(o.status.success() && out.contains("(2 entries, 46 measured configs,"), "{out}{err}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains(" over 1 launch") && html.contains(" launches"), "the launches as measured, not the one mean exported");
    // Merged into a database it is not (T4 keeps too little of a tune); said so, the file untouched.
    let o = kerntune(d.path(), &["db", "merge", "--db", d.path().join("m.sqlite").to_str().unwrap(), t4.to_str().unwrap()]);
    let (_, err) = text(&o);
    assert!(!o.status.success() && err.contains("is a list of T4 results documents (`kerntune db export --format t4`), not a kerntune database"), "{err}");
    // Each entry held out in turn, the other its prior.
    let o = kerntune(d.path(), &["simulate", "--leave-one-out", t4.to_str().unwrap(), "--repeats", "2", "--json"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 6, "two held out, three records each: {v}");
    // Counts given out of order or twice are read once each, in order; a budget past the space
    // says its columns repeat; --noise says which configs have no launch times to draw from
    // (the database keeps each config's statistics, not its launches).
    let o = kerntune(d.path(), &["simulate", db, "--strategy", "random", "--repeats", "2", "--at", "5,5,3", "--budget", "30", "--noise"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("│ strategy ┆ @3 ") && out.contains("┆ @5 ") && out.matches("┆ @5 ").count() == 2 && !out.contains("┆ @30"), "{out}");
    assert!(out.contains("(the space has 23 configs: a run evaluates each at most once, so it ends by evaluation 23; later columns repeat its end)"), "{out}");
    assert!(
        err.contains("note: --noise: in fleet.sqlite triad N=4096, 23 of the 23 configs that succeeded have fewer than two recorded launch times"),
        "{err}"
    );
    // Leaving one out compares one search without priors with the transfer searches.
    let o = kerntune(d.path(), &["simulate", "--leave-one-out", db, "--strategy", "random,hybrid"]);
    let (_, err) = text(&o);
    assert!(!o.status.success() && err.contains("--leave-one-out compares one search without priors"), "{err}");
    // An entry a search measured part of says so.
    let part = d.path().join("part.sqlite");
    let o =
        kerntune(d.path(), &["tune", spec, "--backend", "wgpu", "--db", part.to_str().unwrap(), "--strategy", "random", "--budget", "5", "--key", "N=4096"]);
    assert!(o.status.success(), "{}", text(&o).1);
    let o = kerntune(d.path(), &["simulate", part.to_str().unwrap(), "--strategy", "random", "--repeats", "2", "--budget", "3"]);
    let (_, err) = text(&o);
    assert!(o.status.success() && err.contains("holds the configs a `random` search chose (5 configs), perhaps part of the space"), "{err}");
    // As a prior, the T4 export of both entries: at a third size, both are this target's near sizes.
    let o = kerntune(d.path(), &["tune", spec, "--backend", "wgpu", "--no-db", "--budget", "4", "--key", "N=16384", "--prior", t4.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("prior: 2 other problems on this target, 46 measurements ("), "{out}");
    // Another kernel's tune uses none of it, and says why.
    let reduction = examples().join("reduction/reduction.toml");
    let o = kerntune(d.path(), &["tune", reduction.to_str().unwrap(), "--backend", "wgpu", "--no-db", "--budget", "3", "--prior", t4.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("prior: 0 targets, 0 measurements (no usable file)") && out.contains("2 documents; not used: 2 of another kernel (`triad`)"), "{out}");
}

#[test]
fn simulate_under_a_time_budget_reads_the_scores_at_durations() {
    let d = tempfile::tempdir().unwrap();
    let space = kt_cache(d.path(), false);
    let space = space.to_str().unwrap();
    // 16 configs compiling 0.5, 1, 2 or 4 s (by tile) and measured in 25 ms each, on 4 threads.
    let o = kerntune(d.path(), &["simulate", space, "--budget", "4s", "--jobs", "4", "--strategy", "random,exhaustive", "--repeats", "5", "--json"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    for r in v.as_array().unwrap() {
        assert_eq!((r["seconds"].as_f64(), r["jobs"].as_u64()), (Some(4.0), Some(4)), "{r}");
        // A quarter, a half, three quarters and all of the budget, by default.
        assert_eq!(r["at"].as_object().unwrap().keys().collect::<Vec<_>>(), ["1s", "2s", "3s", "4s"], "{r}");
        let at = |k: &str| r["at"][k]["mean"].as_f64().unwrap();
        assert!(at("1s") <= at("2s") && at("2s") <= at("3s") && at("3s") <= at("4s") && at("4s") <= 1.0, "{r}");
        // Nothing ends before the first compile (0.5 s at the least); in 4 s on 4 threads at
        // most 4 × 4 ÷ 0.5 compiles end, fewer than the space.
        let n = r["evaluations"].as_f64().unwrap();
        assert!((1.0..16.0).contains(&n), "{r}");
        // Each point also says how many had ended by then.
        assert!(r["at"]["1s"]["evaluations"].as_f64().unwrap() <= n && r["at"]["4s"]["evaluations"].as_f64() == Some(n), "{r}");
    }
    // With time for the whole space, exhaustive measures all 16 and finds the optimum.
    let o = kerntune(d.path(), &["simulate", space, "--budget", "1m", "--jobs", "4", "--strategy", "exhaustive", "--repeats", "1", "--at", "30s,1m", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&text(&o).0).unwrap();
    assert_eq!((v[0]["evaluations"].as_f64(), v[0]["at"]["1m"]["mean"].as_f64()), (Some(16.0), Some(1.0)), "{v}");
    // The table says what the time counts; the curves are drawn against seconds.
    let svg = d.path().join("time.svg");
    let o = kerntune(d.path(), &["simulate", space, "--budget", "4s", "--strategy", "random", "--repeats", "2", "--svg", svg.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("a time budget of 4s, simulated: 1 compile thread") && out.contains("@2s") && out.contains("evaluations"), "{out}");
    assert!(std::fs::read_to_string(&svg).unwrap().contains("simulated seconds"));
    // Wrong pairings: one line each, naming the flag and what to give instead.
    let gap = kt_cache(d.path(), true);
    let gap = gap.to_str().unwrap();
    for (args, says) in [
        (vec![space, "--budget", "4s", "--at", "8"], "--at 8 is a count of evaluations; with a time budget give durations"),
        (vec![space, "--budget", "16", "--at", "2s"], "--at 2s is a duration; give --budget a duration too"),
        (vec![space, "--budget", "4s", "--at", "5s"], "--at 5s is beyond --budget 4s"),
        (vec![space, "--budget", "4s", "--noise"], "--noise is not simulated under a time budget"),
        (vec![space, "--budget", "4s", "--parallel", "4"], "give --jobs N instead"),
        (vec![space, "--budget", "2%"], "a simulation takes one count of evaluations (400) or one duration (30s, 5m)"),
        (vec![gap, "--budget", "4s", "--strategy", "random"], "has no recorded compile time; simulating a time budget needs"),
    ] {
        let mut a = vec!["simulate", "--repeats", "2"];
        a.extend(args);
        let o = kerntune(d.path(), &a);
        let (_, err) = text(&o);
        assert!(!o.status.success() && err.contains(says), "{a:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
    // Leave one out under a time budget: the three searches of each held-out space, the
    // adaptive one told the evaluations its time leaves.
    let gpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/spaces/gpus");
    let files: Vec<String> = ["A100", "A4000"].iter().map(|g| gpus.join(format!("convolution_{g}.json.gz")).display().to_string()).collect();
    if !Path::new(&files[0]).exists() {
        assert!(std::env::var("CI").is_err(), "CI has ../shared beside the clone");
        eprintln!("SKIPPED: no ../shared/spaces/gpus");
        return;
    }
    let mut args = vec!["simulate", "--leave-one-out", "--budget", "10s", "--jobs", "16", "--repeats", "2", "--at", "5s,10s", "--json"];
    args.extend(files.iter().map(String::as_str));
    let o = kerntune(d.path(), &args);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let kinds: Vec<&str> = v.as_array().unwrap().iter().map(|r| r["prior"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["none", "plain", "adaptive", "none", "plain", "adaptive"], "{v}");
    for r in v.as_array().unwrap() {
        let (m, p5) = (r["at"]["10s"]["mean"].as_f64().unwrap(), r["at"]["10s"]["p5"].as_f64().unwrap());
        assert!(p5 <= m + 1e-12 && m <= 1.0 && m > 0.0 && r["evaluations"].as_f64().unwrap() >= 1.0, "{r}");
    }
}

/// `--prior` as a user runs it, on the machine's adapter: another GPU's Kernel Tuner cache of
/// the triad's space makes the search `transfer`, one line says what was learned from (and
/// `--json` the same), its failed entry is counted out, a cache of another space is refused in
/// a line that names the file and the difference while the tune goes on, and `--no-prior`
/// turns priors off.
#[test]
fn a_tune_learns_from_another_gpus_results() {
    let d = tempfile::tempdir().unwrap();
    if !have_device(d.path()) {
        return;
    }
    let spec = examples().join("triad/triad.toml");
    let spec = spec.to_str().unwrap();
    // The triad's 23 configs as "another GPU" measured them (fastest at WG_SIZE=256,
    // PER_THREAD=4), one of them failed there; its script made the problem size `N` a
    // single-value parameter, and Kernel Tuner recorded each config's compile time.
    let mut cache = serde_json::Map::new();
    for wg in [32, 64, 128, 256, 512, 1024] {
        for pt in [1, 2, 4, 8] {
            if wg * pt > 4096 {
                continue;
            }
            let time: serde_json::Value = if (wg, pt) == (32, 1) {
                "RuntimeFailedConfig".into()
            } else {
                (1.0 + (f64::from(wg) / 256.0).log2().abs() * 0.2 + (f64::from(pt) / 4.0).log2().abs() * 0.1).into()
            };
            let compile_ms = 100.0 * f64::from(pt);
            cache.insert(
                format!("{wg},{pt},1048576"),
                serde_json::json!({"WG_SIZE": wg, "PER_THREAD": pt, "N": 1048576, "time": time, "compile_time": compile_ms}),
            );
        }
    }
    let other = d.path().join("other_gpu.json");
    let v = serde_json::json!({"device_name": "Other GPU", "tune_params_keys": ["WG_SIZE", "PER_THREAD", "N"],
        "tune_params": {"WG_SIZE": [32, 64, 128, 256, 512, 1024], "PER_THREAD": [1, 2, 4, 8], "N": [1048576]}, "cache": cache});
    std::fs::write(&other, v.to_string()).unwrap();
    let o = kerntune(d.path(), &["tune", spec, "--prior", other.to_str().unwrap(), "--budget", "5", "--json", "-j", "4"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let r = &v[0];
    assert_eq!(r["strategy"], "transfer", "{out}");
    // 4 compile threads would keep six in flight at the start (one and a half per thread), all
    // of the budget of 5 chosen before anything is measured; wgpu's compiles take a fraction of
    // a measurement, so two are, and it is said in place of the transfer search's note.
    let notes: Vec<&str> = r["notes"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    assert!(
        notes.iter().any(|n| n.starts_with("compiling a config takes a fraction of measuring it on this backend, so 2 were kept in flight (not 6)")),
        "{out}"
    );
    assert!(!notes.iter().any(|n| n.starts_with("transfer: 4 compile threads ask for")), "{out}");
    assert_eq!(r["evaluated"], 5, "{out}");
    let p = &r["prior"];
    assert_eq!((p["targets"].as_u64(), p["measurements"].as_u64()), (Some(1), Some(22)), "{p}");
    assert_eq!(p["skipped"]["failed"], 1, "{p}");
    assert!(p["line"].as_str().unwrap().starts_with("prior: 1 target, 22 measurements"), "{p}");
    // The sources' favourite is measured first after the default config.
    let favourite = serde_json::json!({"params": [["WG_SIZE", 256], ["PER_THREAD", 4]]});
    let fav = r["results"].as_array().unwrap().iter().find(|x| x["config"] == favourite).unwrap_or_else(|| panic!("{out}"));
    // Each result says who proposed it: the favourite, the sources' ranking.
    assert_eq!(fav["proposed_by"], "sources", "{fav}");
    // The database keeps it, with what the tune learned from: `db show` says so, and the
    // report's page shows the line, who proposed each evaluation and what each found.
    let o = kerntune(d.path(), &["db", "show"]);
    let (shown, err) = text(&o);
    assert!(o.status.success() && shown.contains("the last tune learned from 1 target, 22 measurements"), "{shown}\n{err}");
    let page = d.path().join("triad.html");
    let o = kerntune(d.path(), &["report", spec, "--out", page.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o).1);
    let html = std::fs::read_to_string(&page).unwrap();
    for part in [
        "strategy <code>transfer</code>",
        "learned from 1 target, 22 measurements",
        "Who proposed run 1",
        "the sources' ranking",
        "proposed by the sources&apos; ranking",
    ] {
        assert!(html.contains(part), "the page has no `{part}`");
    }
    // A note says how many proposals the sources made.
    assert!(
        r["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().starts_with("transfer: ") && n.as_str().unwrap().contains("proposals from the sources' ranking")),
        "{out}"
    );
    // A cache of another space beside it: refused in a line naming the file and what differs;
    // the tune goes on with the good one. Text output carries the same line.
    let wrong = d.path().join("sgemm_h200.json");
    std::fs::write(
        &wrong,
        r#"{"tune_params_keys": ["block_size_x"], "tune_params": {"block_size_x": [32]}, "cache": {"32": {"block_size_x": 32, "time": 1.0}}}"#,
    )
    .unwrap();
    let o = kerntune(d.path(), &["tune", spec, "--prior", other.to_str().unwrap(), wrong.to_str().unwrap(), "--budget", "4", "--remeasure"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(out.contains("prior: 1 target, 22 measurements"), "{out}");
    let refusal = out.lines().find(|l| l.contains("sgemm_h200.json")).unwrap_or_else(|| panic!("no line names the refused file:\n{out}"));
    assert!(refusal.contains("another parameter space") && refusal.contains("block_size_x"), "{refusal}");
    assert!(out.contains("winner: "), "{out}");
    // The table marks the configs the sources' ranking proposed, and the winner's line says who
    // proposed it when a search did.
    let rows: Vec<&str> = out.lines().filter(|l| l.starts_with('│')).collect();
    assert!(rows.iter().any(|l| l.trim_end_matches(['│', ' ']).ends_with("sources")), "{out}");
    let winner_row = rows.iter().find(|l| l.contains("winner")).unwrap_or_else(|| panic!("{out}"));
    let winner_line = out.lines().find(|l| l.starts_with("winner: ")).unwrap();
    assert_eq!(winner_row.contains("sources"), winner_line.ends_with("proposed by the sources' ranking"), "{out}");
    // A strategy that queues its budget ahead (exhaustive): the cache's compile times order
    // the compiles, and the report says so.
    let o = kerntune(d.path(), &["tune", spec, "--prior", other.to_str().unwrap(), "--strategy", "exhaustive", "--remeasure", "--json"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v[0]["strategy"], "exhaustive", "{out}");
    let notes = v[0]["notes"].as_array().unwrap();
    assert!(
        notes.iter().any(|n| n.as_str().unwrap().starts_with("compile order: longest first by the compile times the prior's devices recorded (23 of 23")),
        "{notes:?}"
    );
    assert!(
        notes.iter().any(|n| n.as_str().unwrap().starts_with("--strategy exhaustive does not learn from the prior's times")
            && n.as_str().unwrap().ends_with("its compile times order the compiles")),
        "{notes:?}"
    );
    // --no-prior: the search a tune without priors runs (the whole space, it is small).
    let o = kerntune(d.path(), &["tune", spec, "--no-prior", "--remeasure", "--json"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!((v[0]["strategy"].as_str(), v[0]["prior"].is_null()), (Some("exhaustive"), true), "{out}");
    // --prior with a database holding only this device's entries: the line says nothing was
    // learned, and why, rather than nothing.
    let own = d.path().join("db.sqlite");
    let o = kerntune(d.path(), &["tune", spec, "--prior", own.to_str().unwrap(), "--budget", "3", "--no-db"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(out.contains("prior: 0 targets, 0 measurements (no usable file)"), "{out}");
    assert!(out.contains("no entry of kernel `triad` for problem `N=1048576` on another target"), "{out}");
    // --prior with a file that does not exist: one line, nothing tuned.
    bad(d.path(), &["tune", spec, "--prior", "nowhere.json"], &["--prior", "nowhere.json", "no such file"]);
}

/// A database this process may not write (a shipped or shared file): `db show` and a tune's
/// database hit read it; a tune that would have to write says so in one line before measuring.
/// Run as another user when the tests run as root (root writes read-only files).
#[test]
fn a_read_only_database_is_read() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    if !have_device(d.path()) {
        return;
    }
    // The spec is read as the other user too: a copy in the temporary directory, since the
    // checkout may be where that user cannot read (a clone under /root).
    let triad = d.path().join("triad");
    std::fs::create_dir(&triad).unwrap();
    for f in std::fs::read_dir(examples().join("triad")).unwrap() {
        let f = f.unwrap();
        std::fs::copy(f.path(), triad.join(f.file_name())).unwrap();
    }
    let spec = triad.join("triad.toml");
    let spec = spec.to_str().unwrap();
    let ro = d.path().join("shipped");
    std::fs::create_dir(&ro).unwrap();
    let db = ro.join("db.sqlite");
    let o = kerntune(d.path(), &["tune", spec, "--db", db.to_str().unwrap(), "--strategy", "random", "--budget", "3"]);
    assert!(o.status.success(), "{}", text(&o).1);
    let _ = std::fs::remove_dir_all(ro.join("db.sqlite.locks"));
    for p in [d.path(), ro.as_path()] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o555)).unwrap();
    }
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o444)).unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    // Whether this process writes read-only files anyway (root): then the reads run as nobody.
    let root = std::fs::OpenOptions::new().append(true).open(&db).is_ok();
    let run = |args: &[&str]| -> Output {
        let mut c = if root {
            let mut c = Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups", env!("CARGO_BIN_EXE_kerntune")]);
            c
        } else {
            Command::new(env!("CARGO_BIN_EXE_kerntune"))
        };
        c.args(args)
            .env("KERNTUNE_CACHE_DIR", home.path().join("cache"))
            .env("XDG_RUNTIME_DIR", home.path())
            .env("HOME", home.path())
            .env_remove("KERNTUNE_LOG");
        c.output().expect("kerntune runs")
    };
    let o = run(&["db", "show", "--db", db.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(out.contains("(1 entry)") && out.contains("triad"), "{out}");
    let o = run(&["tune", spec, "--db", db.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(out.contains("database hit"), "{out}");
    let o = run(&["tune", spec, "--db", db.to_str().unwrap(), "--key", "N=4096"]);
    let (out, err) = text(&o);
    assert!(!o.status.success(), "{out}");
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains("db.sqlite") && lines[0].contains("read-only") && lines[0].contains("--db"), "{}", lines[0]);
    for p in [d.path(), ro.as_path()] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// Runs `kerntune check` on a changed copy of a shipped spec: it passes, or it fails with one
/// `error:` line that names the file; never a panic. Returns whether it was refused.
fn check_changed(dir: &Path, file: &str, body: &str, change: &str) -> bool {
    let p = dir.join(file);
    std::fs::write(&p, body).unwrap();
    let o = kerntune(dir, &["check", p.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert!(!err.contains("panicked") && o.status.code().is_some_and(|c| c <= 1), "{file}, {change}: {err}");
    if o.status.success() {
        return false;
    }
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert!(lines.len() == 1 && lines[0].contains(file), "{file}, {change}: one error line naming the file expected:\n{out}{err}");
    true
}

/// Every one-line change to a shipped TOML spec (each line dropped, each value replaced by a
/// wrong one) and every one-field change to a shipped T1 file (each field dropped, each value
/// replaced) gets one clear error line or passes: the spec loader has no input that panics it or
/// makes it print several errors.
#[test]
fn every_small_change_to_a_shipped_spec_gets_one_error_line_or_passes() {
    const WRONG: [&str; 5] = ["\"abc\"", "-1", "[]", "\"N * (\"", "1e300"];
    let mut refused = 0;
    let mut tried = 0;
    for spec in ["triad/triad.toml", "convolution/convolution.toml"] {
        let d = tempfile::tempdir().unwrap();
        let src = examples().join(spec);
        for f in std::fs::read_dir(src.parent().unwrap()).unwrap() {
            let f = f.unwrap().path();
            if f.is_file() {
                std::fs::copy(&f, d.path().join(f.file_name().unwrap())).unwrap();
            }
        }
        let text = std::fs::read_to_string(&src).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let t = line.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            let mut changes = vec![(format!("line {} dropped", i + 1), String::new())];
            if let Some((key, _)) = line.split_once('=') {
                changes.extend(WRONG.iter().map(|w| (format!("line {} set to {w}", i + 1), format!("{key}= {w}"))));
            }
            for (change, new) in changes {
                let mut body = lines.clone();
                body[i] = &new;
                tried += 1;
                refused += check_changed(d.path(), "changed.toml", &body.join("\n"), &change) as usize;
            }
        }
    }
    // T1 (JSON): each field dropped, each value replaced by a wrong type.
    let d = tempfile::tempdir().unwrap();
    std::fs::copy(examples().join("t1/gemm.cu"), d.path().join("gemm.cu")).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(examples().join("t1/gemm.json")).unwrap()).unwrap();
    fn paths(v: &serde_json::Value, at: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        let children: Vec<(String, &serde_json::Value)> = match v {
            serde_json::Value::Object(m) => m.iter().map(|(k, x)| (k.clone(), x)).collect(),
            serde_json::Value::Array(a) => a.iter().enumerate().map(|(i, x)| (i.to_string(), x)).collect(),
            _ => vec![],
        };
        for (k, x) in children {
            at.push(k);
            out.push(at.clone());
            paths(x, at, out);
            at.pop();
        }
    }
    let mut all = Vec::new();
    paths(&doc, &mut Vec::new(), &mut all);
    for path in all {
        let wrong = [serde_json::json!(null), serde_json::json!("abc"), serde_json::json!(-1), serde_json::json!([1, "a"])];
        for w in [None].into_iter().chain(wrong.into_iter().map(Some)) {
            let mut v = doc.clone();
            let (last, parent) = path.split_last().unwrap();
            let mut node = &mut v;
            for k in parent {
                node = match node {
                    serde_json::Value::Object(m) => m.get_mut(k).unwrap(),
                    serde_json::Value::Array(a) => &mut a[k.parse::<usize>().unwrap()],
                    _ => unreachable!(),
                };
            }
            match (node, &w) {
                (serde_json::Value::Object(m), None) => drop(m.remove(last)),
                (serde_json::Value::Array(a), None) => drop(a.remove(last.parse::<usize>().unwrap())),
                (serde_json::Value::Object(m), Some(w)) => drop(m.insert(last.clone(), w.clone())),
                (serde_json::Value::Array(a), Some(w)) => a[last.parse::<usize>().unwrap()] = w.clone(),
                _ => unreachable!(),
            }
            tried += 1;
            let change = format!("{} {}", path.join("."), w.map_or("dropped".to_string(), |w| format!("set to {w}")));
            refused += check_changed(d.path(), "changed.json", &v.to_string(), &change) as usize;
        }
    }
    eprintln!("{tried} changed specs checked, {refused} refused");
    // The changes must reach the loader: most of them break the spec.
    assert!(refused * 2 > tried, "only {refused} of {tried} changes were refused");
}

/// wgpu verification reads back only the compared outputs and rewrites only the buffers a
/// kernel can change, reusing its read-back buffers from config to config: a config that leaves
/// part of the compared output unwritten is still caught (by the poison) whatever was verified
/// before it on the same device, garbage in an output not compared passes, and the read-only
/// input every config reads stays as it was.
#[test]
fn wgpu_verification_compares_the_named_outputs_only_and_poison_still_catches_unwritten_ones() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    if !have_device(dir) {
        return;
    }
    // MODE 0: right. 1: leaves the upper half of y unwritten. 2: right y, garbage in z (not
    // compared).
    write(
        dir,
        "k.wgsl",
        "override WG: u32 = 64u;\noverride MODE: u32 = 0u;\n@group(0) @binding(0) var<storage, read> x: array<f32>;\n@group(0) @binding(1) var<storage, read_write> y: array<f32>;\n@group(0) @binding(2) var<storage, read_write> z: array<f32>;\n@compute @workgroup_size(WG)\nfn k(@builtin(global_invocation_id) g: vec3<u32>) {\n  let i = g.x;\n  if (i >= 1000u) { return; }\n  if (MODE != 1u || i < 500u) { y[i] = 2.0 * x[i]; }\n  z[i] = select(x[i], -7.0, MODE == 2u);\n}\n",
    );
    let p = write(
        dir,
        "k.toml",
        r#"[kernel]
name = "k"
source = { wgsl = "k.wgsl" }
[params]
WG = [32, 64, 128]
MODE = { values = [0, 1, 2], default = 0 }
[[problems]]
N = 1000
[[args]]
name = "x"
type = "f32"
len = "N"
init = "random"
[[args]]
name = "y"
type = "f32"
len = "N"
access = "write"
[[args]]
name = "z"
type = "f32"
len = "N"
access = "write"
[launch]
grid = ["div_ceil(N, WG)"]
block = ["WG"]
[verify]
outputs = ["y"]
"#,
    );
    let o = kerntune(dir, &["tune", p.to_str().unwrap(), "--no-db", "--json", "--strategy", "exhaustive"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    let r = &serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()[0];
    let mut wrong = Vec::new();
    for x in r["results"].as_array().unwrap() {
        let cfg = x["config"]["params"].as_array().unwrap();
        let mode = cfg.iter().find(|kv| kv[0] == "MODE").unwrap()[1].as_i64().unwrap();
        let failed = x["outcome"] == "failed";
        assert_eq!(failed, mode == 1, "MODE {mode}: {x}");
        if failed {
            let why = x["message"].as_str().unwrap();
            assert!(x["kind"] == "wrong_output" && why.contains("`y`: 500 of 1000 elements differ") && why.contains("500 were never written"), "{why}");
            wrong.push(mode);
        }
    }
    assert_eq!(wrong.len(), 3, "each MODE = 1 config caught, after and before right ones: {r}");
}

/// The shipped kernel with planted non-finite outputs (examples/faults/nonfinite.toml), smaller:
/// the configs that write NaN or infinity where the CPU reference is finite are one cause that
/// says so, with what to look for, and no allowance of a mismatch is offered for one element.
#[test]
fn nan_or_infinity_where_the_reference_is_finite_is_named() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    if !have_device(dir) {
        return;
    }
    std::fs::copy(examples().join("faults/nonfinite.wgsl"), dir.join("nonfinite.wgsl")).unwrap();
    let toml = std::fs::read_to_string(examples().join("faults/nonfinite.toml")).unwrap().replace("N = 1048576", "N = 65536");
    let p = write(dir, "nonfinite.toml", &toml);
    let o = kerntune(dir, &["tune", p.to_str().unwrap(), "--no-db", "--backend", "wgpu", "--json"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    let r = &serde_json::from_str::<serde_json::Value>(&out).unwrap()[0];
    let pt = r["winner"]["params"][1][1].as_i64().unwrap();
    assert!(pt == 1 || pt == 4, "{}", r["winner"]);
    let causes = r["causes"].as_array().unwrap();
    assert_eq!(causes.len(), 1, "{causes:?}");
    let message = causes[0]["message"].as_str().unwrap();
    assert!(message.contains("1 of 65536 elements differ") && message.contains("; 1 is NaN or infinite where the reference is finite"), "{message}");
    let diagnosis = causes[0]["diagnosis"].to_string();
    assert!(
        diagnosis.contains("all 11 configs that computed a wrong output wrote NaN or infinity where the reference is finite, which no tolerance covers"),
        "{diagnosis}"
    );
    assert!(diagnosis.contains("PER_THREAD = 2 or 8"), "{diagnosis}");
    assert!(!diagnosis.contains("verify.mismatches"), "one NaN is no tie to allow: {diagnosis}");
}

/// A race between threads is no read past a buffer: the shipped reduction without its first
/// `workgroupBarrier()` (its threads add neighbours' partial sums before they are written) gave
/// outputs that change from launch to launch, and the guard-word probe called three of its
/// configs `out-of-bounds read past the end of `partial` … and `x`` on llvmpipe (and a fourth
/// "past the end of its buffers"), though it reads neither past its end; this test failed so
/// with that probe. Its configs were then wrong outputs against its racy default, which won;
/// now each config taken as the reference is launched twice, its outputs differ between the
/// two, and the tune ends with no winner and says why, or, where a racy config's two launches
/// agree, says its reference may be wrong (the probe's own handling of a race is held by
/// guard.rs's unit tests).
#[test]
fn a_race_between_threads_is_not_called_a_read_past_a_buffer() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    if !have_device(dir) {
        return;
    }
    let wgsl = std::fs::read_to_string(examples().join("reduction/reduction.wgsl")).unwrap();
    let racy = wgsl.replacen("workgroupBarrier();\n    for", "for", 1);
    assert_ne!(racy, wgsl, "the shipped reduction's first barrier");
    write(dir, "reduction.wgsl", &racy);
    std::fs::copy(examples().join("reduction/reduction.cu"), dir.join("reduction.cu")).unwrap();
    let p = write(dir, "reduction.toml", &std::fs::read_to_string(examples().join("reduction/reduction.toml")).unwrap());
    for _ in 0..2 {
        let o = kerntune(dir, &["tune", p.to_str().unwrap(), "--no-db", "--backend", "wgpu", "--budget", "30"]);
        let (out, err) = text(&o);
        let all = format!("{out}\n{err}");
        assert!(!all.contains("out-of-bounds read"), "{all}");
        assert!(all.contains("its outputs differ between two launches on the same inputs, so no output can be checked against it"), "the race named: {all}");
        // No winner, as a rule; but a race need not show in two launches, and a config whose
        // two launches happened to agree becomes the reference the rest disagree with (a
        // clean-clone CI run: 18 configs racy, the 19th the reference, 11 against it): then the
        // tune says the reference may be wrong.
        assert!(
            (!o.status.success() && all.contains("no valid config left")) || all.contains("the reference itself may be wrong"),
            "no winner, or a reference in doubt: {all}"
        );
    }
}

/// wgpu never faults on an access past a buffer (it clamps the index or drops the write), so a
/// buffer the spec sized too small tuned as if nothing were wrong. The guard words after each
/// buffer find it: a stencil reading past its input fails in every config with one message
/// naming the buffer; a write past `y` and a read past `x` fail their configs and the right
/// ones win (the write also without verification); a kernel that asks a buffer's length
/// (`arrayLength`) sees the spec's.
#[test]
fn a_read_or_write_past_a_wgpu_buffer_is_found_by_the_guard_words() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    if !have_device(dir) {
        return;
    }
    // The shipped stencil (examples/faults/read_past.toml), smaller.
    std::fs::copy(examples().join("faults/stencil.wgsl"), dir.join("stencil.wgsl")).unwrap();
    let toml = std::fs::read_to_string(examples().join("faults/read_past.toml")).unwrap().replace("nx = 4096", "nx = 256").replace("ny = 4096", "ny = 256");
    let p = write(dir, "read_past.toml", &toml);
    let o = kerntune(dir, &["tune", p.to_str().unwrap(), "--no-db", "--backend", "wgpu", "--strategy", "random", "--budget", "3"]);
    let (out, err) = text(&o);
    assert!(!o.status.success(), "{out}\n{err}");
    assert!(err.contains("all 3 configs failed to launch: out-of-bounds read past the end of `in` (262144 bytes as the spec sizes it)"), "{err}");
    assert!(err.contains("`in` holds exactly the problem's 256×256 = 65536 elements"), "{err}");

    // FAULT 1: no bounds check on `y` (N is not a multiple of WG): writes past its end. FAULT 2:
    // reads the next element of `x` without checking it is there.
    write(
        dir,
        "planted.wgsl",
        "override WG: u32 = 64u;\n@group(0) @binding(0) var<storage, read> x: array<f32>;\n@group(0) @binding(1) var<storage, read_write> y: array<f32>;\n@compute @workgroup_size(WG)\nfn planted(@builtin(global_invocation_id) g: vec3<u32>) {\n  let i = g.x;\n  if (FAULT == 1) { y[i] = x[min(i, n - 1u)]; return; }\n  if (i >= n) { return; }\n  if (FAULT == 2) { y[i] = x[i] + x[i + 1u]; return; }\n  y[i] = x[i] + select(0.0, x[min(i + 1u, n - 1u)], i + 1u < n);\n}\n",
    );
    let planted = |kernel: &str| {
        format!(
            r#"[kernel]
name = "{kernel}"
source = {{ wgsl = "{kernel}.wgsl" }}
[params]
WG = [32, 64]
FAULT = {{ values = [0, 1, 2], default = 0 }}
[[problems]]
N = 1000
[[args]]
name = "x"
type = "f32"
len = "N"
init = "random"
[[args]]
name = "y"
type = "f32"
len = "N"
access = "write"
[[args]]
name = "n"
type = "u32"
value = "N"
[launch]
grid = ["div_ceil(N, WG)"]
block = ["WG"]
"#
        )
    };
    let p = write(dir, "planted.toml", &planted("planted"));
    let o = kerntune(dir, &["tune", p.to_str().unwrap(), "--no-db", "--json", "--memcheck"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    let r = &serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()[0];
    let fault = |c: &serde_json::Value| c["params"].as_array().unwrap().iter().find(|kv| kv[0] == "FAULT").unwrap()[1].as_i64().unwrap();
    assert_eq!(fault(&r["winner"]), 0, "{out}");
    for x in r["results"].as_array().unwrap() {
        let (f, why) = (fault(&x["config"]), x["message"].as_str().unwrap_or(""));
        match f {
            0 => assert_eq!(x["outcome"], "measured", "{x}"),
            1 => assert!(
                x["kind"] == "launch_failed" && why.starts_with("launch failed: out-of-bounds write past the end of `y` (4000 bytes as the spec sizes it)"),
                "{x}"
            ),
            _ => assert!(
                x["kind"] == "launch_failed" && why.starts_with("launch failed: out-of-bounds read past the end of `x` (4000 bytes as the spec sizes it)"),
                "{x}"
            ),
        }
    }
    assert_eq!(r["memcheck"]["verdict"], "clean", "{}", r["memcheck"]);
    assert!(r["memcheck"]["line"].as_str().unwrap().starts_with("kerntune's guard words (wgpu"), "{}", r["memcheck"]);
    // Without verification a write past `y` still fails its configs (as a fault does on CUDA);
    // a read is not told without outputs to compare.
    let o = kerntune(dir, &["tune", p.to_str().unwrap(), "--no-db", "--json", "--reference", "none"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    let r = &serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()[0];
    for x in r["results"].as_array().unwrap() {
        match fault(&x["config"]) {
            1 => assert!(x["message"].as_str().unwrap_or("").starts_with("launch failed: out-of-bounds write past the end of `y`"), "{x}"),
            _ => assert_eq!(x["outcome"], "measured", "{x}"),
        }
    }

    // `arrayLength(&y)` is the spec's 1000 elements, not the guard's more: nothing is past.
    write(
        dir,
        "sized.wgsl",
        "override WG: u32 = 64u;\n@group(0) @binding(0) var<storage, read> x: array<f32>;\n@group(0) @binding(1) var<storage, read_write> y: array<f32>;\n@compute @workgroup_size(WG)\nfn sized(@builtin(global_invocation_id) g: vec3<u32>) {\n  let i = g.x;\n  if (i < arrayLength(&y)) { y[i] = x[i] + f32(FAULT); }\n}\n",
    );
    let p = write(dir, "sized.toml", &planted("sized").replace("values = [0, 1, 2], default = 0", "values = [0], default = 0"));
    let o = kerntune(dir, &["tune", p.to_str().unwrap(), "--no-db", "--memcheck"]);
    let (out, err) = text(&o);
    assert!(o.status.success() && !out.contains("failures") && out.contains("saw no out-of-bounds access"), "{out}\n{err}");

    // The shipped triad without its bounds check, N not a multiple of any block: each config
    // updates `y` in place past its end (`y[i] = a * x[i] + y[i]`), verified against the CPU
    // reference (no GPU reference is probed). From guards holding a NaN, a NaN computed from
    // NaNs kept its bits on llvmpipe and the tune picked a winner; the writable buffer's finite
    // guard word is moved by it.
    std::fs::write(dir.join("inplace.wgsl"), std::fs::read_to_string(examples().join("triad/triad.wgsl")).unwrap().replace("if (i < u32(n)) {", "{")).unwrap();
    let toml = std::fs::read_to_string(examples().join("triad/triad.toml"))
        .unwrap()
        .replace("triad.wgsl", "inplace.wgsl")
        .replace("N = 1048576", "N = 100003")
        .replace(", cuda = \"triad.cu\", hip = \"triad.cu\"", "");
    let p = write(dir, "inplace.toml", &toml);
    let o = kerntune(dir, &["tune", p.to_str().unwrap(), "--no-db", "--backend", "wgpu", "--strategy", "random", "--budget", "3"]);
    let (out, err) = text(&o);
    assert!(!o.status.success(), "{out}\n{err}");
    assert!(err.contains("all 3 configs failed to launch: out-of-bounds write past the end of `y` (400012 bytes as the spec sizes it)"), "{err}");
    // A copy without a bounds check (`y[i] = x[i]`): it copied `x`'s guard word onto `y`'s, the
    // same NaN, and went unseen as well.
    write(
        dir,
        "copy.wgsl",
        "override WG: u32 = 64u;\n@group(0) @binding(0) var<storage, read> x: array<f32>;\n@group(0) @binding(1) var<storage, read_write> y: array<f32>;\n@compute @workgroup_size(WG)\nfn copy(@builtin(global_invocation_id) g: vec3<u32>) {\n  y[g.x] = x[g.x] + f32(FAULT);\n}\n",
    );
    let p = write(dir, "copy.toml", &planted("copy").replace("values = [0, 1, 2], default = 0", "values = [0], default = 0"));
    let o = kerntune(dir, &["tune", p.to_str().unwrap(), "--no-db", "--backend", "wgpu"]);
    let (out, err) = text(&o);
    assert!(!o.status.success(), "{out}\n{err}");
    assert!(err.contains("failed to launch: out-of-bounds write past the end of `y` (4000 bytes as the spec sizes it)"), "{err}");
}

/// wgpu makes a pipeline whatever workgroup memory its shader declares (llvmpipe ran a 256 KiB
/// array where it allows 32 KiB), so the config was measured, and could win, where the adapter
/// does not have it. naga's layout of the entry point's `var<workgroup>` is the compile's
/// resource report: such a config is pruned after compiling, with an example.
#[test]
fn a_wgpu_config_with_more_workgroup_memory_than_the_adapter_has_is_pruned() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    if !have_device(dir) {
        return;
    }
    write(
        dir,
        "tiled.wgsl",
        "@group(0) @binding(0) var<storage, read> x: array<f32>;\n@group(0) @binding(1) var<storage, read_write> y: array<f32>;\nvar<workgroup> tile: array<f32, TILE>;\n@compute @workgroup_size(64)\nfn tiled(@builtin(global_invocation_id) g: vec3<u32>, @builtin(local_invocation_index) l: u32) {\n  if (g.x < n) { tile[l] = x[g.x]; }\n  workgroupBarrier();\n  if (g.x < n) { y[g.x] = tile[l]; }\n}\n",
    );
    let p = write(
        dir,
        "tiled.toml",
        "[kernel]\nname = \"tiled\"\nsource = { wgsl = \"tiled.wgsl\" }\n[params]\nTILE = { values = [64, 1048576], default = 64 }\n[[problems]]\nN = 4096\n[[args]]\nname = \"x\"\ntype = \"f32\"\nlen = \"N\"\ninit = \"random\"\n[[args]]\nname = \"y\"\ntype = \"f32\"\nlen = \"N\"\naccess = \"write\"\n[[args]]\nname = \"n\"\ntype = \"u32\"\nvalue = \"N\"\n[launch]\ngrid = [\"div_ceil(N, 64)\"]\nblock = [\"64\"]\n[verify]\noutputs = [\"y\"]\n",
    );
    let o = kerntune(dir, &["tune", p.to_str().unwrap(), "--no-db", "--backend", "wgpu"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(out.contains("winner: TILE=64 "), "{out}");
    assert!(out.contains("pruned after compiling: shared_memory 1"), "{out}");
    // The example names the config once and the resource in words, not CUDA's attribute name.
    assert!(out.contains("    e.g. TILE=1048576: shared memory per block (workgroup storage): needs 4194304 B, device allows"), "{out}");
}

/// A published kernel whose default config computes wrongly (`PER_THREAD = 8` skips its last
/// stripe) and no CPU reference: the default is the reference, so every right config "fails".
/// The warning says the reference is the likely culprit (the configs that disagree all differ
/// from it alike) and what to do; doing it (`--reference first-valid`) gives a right winner and
/// blames the wrong value.
#[test]
fn a_wrong_default_as_the_reference_is_named_and_another_reference_fixes_it() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    if !have_device(dir) {
        return;
    }
    std::fs::write(
        dir.join("wd.wgsl"),
        std::fs::read_to_string(examples().join("triad/triad.wgsl"))
            .unwrap()
            .replace("let i = gid.x + k * total;", "let i = gid.x + k * total;\n        if (PER_THREAD == 8 && k == 7u) { continue; }"),
    )
    .unwrap();
    let toml = std::fs::read_to_string(examples().join("triad/triad.toml"))
        .unwrap()
        .replace("triad.wgsl", "wd.wgsl")
        .replace("PER_THREAD = [1, 2, 4, 8]", "PER_THREAD = { values = [1, 2, 4, 8], default = 8 }")
        .replace("reference = \"cpu:triad\"", "")
        .replace("N = 1048576", "N = 65536")
        .replace(", cuda = \"triad.cu\", hip = \"triad.cu\"", "");
    let p = write(dir, "wd.toml", &toml);
    let db = dir.join("wd.json");
    let o = kerntune(dir, &["tune", p.to_str().unwrap(), "--db", db.to_str().unwrap(), "--backend", "wgpu"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    // The report says it too, under the failures (it showed the 18 "wrong outputs" alone).
    let html = dir.join("wd.html");
    let o = kerntune(dir, &["report", p.to_str().unwrap(), "--db", db.to_str().unwrap(), "-o", html.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o).1);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("the 18 that disagree differ from it alike"), "the report's findings");
    assert!(
        out.contains("warning: 18 of the 23 verified configs disagree with the reference")
            && out.contains("the 18 that disagree differ from it alike")
            && out.contains("is more likely the wrong one (only the configs with `PER_THREAD` = 8 agree with it)")
            && out.contains("--reference first-valid"),
        "{out}"
    );
    // The winner, one of the 5 that agree with a wrong reference, is not stored: the next tune or
    // launch must not take it. The measurements are; `db show` says why there is no winner.
    assert!(
        out.contains("(measurements written, no winner: 18 of the 23 verified configs differ from the reference alike, all with `PER_THREAD` = 1, 2, 4: either `PER_THREAD` changes the output by design"),
        "{out}"
    );
    let shown = kerntune(dir, &["db", "show", "--db", db.to_str().unwrap()]);
    assert!(text(&shown).0.contains("23 measured (18 failed); no winner: the last tune withheld it (18 of the 23"), "{}", text(&shown).0);
    // Tuned again as it was, from the stored measurements: told again, and still not stored.
    let o = kerntune(dir, &["tune", p.to_str().unwrap(), "--db", db.to_str().unwrap(), "--backend", "wgpu"]);
    let (again, err) = text(&o);
    assert!(o.status.success(), "{again}\n{err}");
    assert!(again.contains("evaluated 23 (23 from the database)") && again.contains("warning: 18 of the 23 verified configs disagree"), "{again}");
    assert!(again.contains("measurements written, no winner"), "{again}");
    let o = kerntune(dir, &["tune", p.to_str().unwrap(), "--db", db.to_str().unwrap(), "--backend", "wgpu", "--reference", "first-valid"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    let winner = out.lines().find(|l| l.starts_with("winner: ")).unwrap_or_else(|| panic!("{out}"));
    assert!(!winner.contains("PER_THREAD=8"), "{winner}");
    assert!(out.contains("every config that computed a wrong output has PER_THREAD = 8 (5 configs)"), "{out}");
    assert!(out.contains("(winner written)"), "{out}");
}

/// A reduction whose default config (`num_blocks = 128`) adds 100 to its sum, compared by the
/// sum of its partial sums: the right configs' sums differ from the reference's alike only up
/// to rounding (each sums in its own order, and writes as many partial sums as it has blocks),
/// so the reference is still named the likely culprit and the winner is not stored.
#[test]
fn a_wrong_default_of_a_reduction_is_named_though_the_right_sums_differ_by_rounding() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    if !have_device(dir) {
        return;
    }
    let wgsl = std::fs::read_to_string(examples().join("reduction/reduction.wgsl")).unwrap();
    let wrong = wgsl.replace("partial[wg.x] = s[0];", "partial[wg.x] = s[0] + select(0.0, 100.0, nwg.x == 128u && wg.x == 0u);");
    assert_ne!(wgsl, wrong, "the example changed: plant the fault again");
    std::fs::write(dir.join("rd.wgsl"), wrong).unwrap();
    let toml = std::fs::read_to_string(examples().join("reduction/reduction.toml"))
        .unwrap()
        .replace("wgsl = \"reduction.wgsl\"", "wgsl = \"rd.wgsl\"")
        .replace("cuda = \"reduction.cu\", hip = \"reduction.cu\", ", "")
        .replace("n = 4194304", "n = 262144");
    let p = write(dir, "rd.toml", &toml);
    let db = dir.join("rd.json");
    let o = kerntune(dir, &["tune", p.to_str().unwrap(), "--db", db.to_str().unwrap(), "--backend", "wgpu"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(
        out.contains("warning: 25 of the 30 verified configs disagree with the reference")
            && out.contains("the 25 that disagree differ from it alike")
            && out.contains("is more likely the wrong one (only the configs with `num_blocks` = 128 agree with it)"),
        "{out}"
    );
    assert!(out.contains("(measurements written, no winner: 25 of the 30 verified configs differ from the reference alike"), "{out}");
}

/// The diagnosis of a timeout says "raise [bench] timeout (or --timeout)"; a user who does and tunes again gets
/// the configs that timed out measured, not the stored timeouts read back as before. A spec
/// changed elsewhere (a buffer's length) is measured again whole.
#[test]
fn raising_the_timeout_measures_what_timed_out() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    if !have_device(dir) {
        return;
    }
    write(
        dir,
        "slow.wgsl",
        "@group(0) @binding(0) var<storage, read_write> y: array<f32>;\n@compute @workgroup_size(64)\nfn slow(@builtin(global_invocation_id) g: vec3<u32>) {\n    if (g.x < n) {\n        var acc = y[g.x];\n        for (var k = 0u; k < ITER; k++) { acc = acc * 0.999 + 0.001; }\n        y[g.x] = acc;\n    }\n}\n",
    );
    let spec = |timeout: &str, len: &str| {
        format!(
            "[kernel]\nname = \"slow\"\nsource = {{ wgsl = \"slow.wgsl\" }}\n[params]\nITER = [1, 2, 100000]\n[[problems]]\nN = 16384\n[[args]]\nname = \"y\"\ntype = \"f32\"\nlen = \"{len}\"\ninit = \"constant\"\nfill = 1.0\naccess = \"readwrite\"\n[[args]]\nname = \"n\"\ntype = \"u32\"\nvalue = \"N\"\n[launch]\ngrid = [\"div_ceil(N, 64)\"]\nblock = [\"64\"]\n[verify]\nreference = \"none\"\n[bench]\ntimeout = {timeout}\n"
        )
    };
    let tune_with = |body: String, flags: &[&str]| {
        let p = write(dir, "slow.toml", &body);
        let o = kerntune(dir, &[&["tune", p.to_str().unwrap(), "--json"], flags].concat());
        let (out, err) = text(&o);
        assert!(o.status.success(), "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        v[0].clone()
    };
    let tune = |body: String| tune_with(body, &[]);
    let slow = |r: &serde_json::Value| r["results"].as_array().unwrap().iter().find(|x| x["config"]["params"][0][1] == 100000).unwrap().clone();
    let notes = |r: &serde_json::Value| {
        r["notes"].as_array().unwrap().iter().filter_map(|n| n.as_str()).filter(|n| n.starts_with("database:")).map(String::from).collect::<Vec<_>>()
    };
    // A 100 ms limit: ITER = 100000 (half a second on software Vulkan on two cores) times out,
    // and the two others' first launches finish well within it even on a loaded machine (at
    // 50 ms one of them once timed out there too, beside two other test runs).
    let first = tune(spec("0.1", "N"));
    assert_eq!((slow(&first)["outcome"].as_str(), slow(&first)["kind"].as_str()), (Some("failed"), Some("timed_out")), "{}", slow(&first));
    // Raised (here with --timeout; the spec's [bench] timeout alike): it is measured this time;
    // the two that measured come from the database.
    let raised = tune_with(spec("0.1", "N"), &["--timeout", "30"]);
    assert_eq!((slow(&raised)["outcome"].as_str(), slow(&raised)["from_db"].as_bool()), (Some("measured"), Some(false)), "{}", slow(&raised));
    assert_eq!((raised["evaluated"].as_u64(), raised["from_db"].as_u64()), (Some(3), Some(2)));
    assert_eq!(notes(&raised), ["database: 1 config that timed out under the 0.1 s limit is measured again under 30 s ([bench] timeout or --timeout)"]);
    // The same again, the limit in the spec: the stored winner.
    assert_eq!(tune(spec("30", "N"))["db_hit"], true);
    bad(dir, &["tune", "slow.toml", "--timeout", "0"], &["--timeout", "above 0"]);
    // A longer buffer: every record is of another problem layout.
    let longer = tune(spec("30", "N + 64"));
    assert_eq!((longer["db_hit"].as_bool(), longer["from_db"].as_u64()), (Some(false), Some(0)));
    assert!(notes(&longer)[0].starts_with("database: the arguments changed since the 3 stored measurements"), "{:?}", notes(&longer));
}

/// Shards tuned with a verification flag: `confirm` takes the same flags and measures as they
/// did; without them it says the verification differs, and keeps every shard's record.
#[test]
fn confirm_measures_as_the_shards_did() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    if !have_device(dir) {
        return;
    }
    write(dir, "ok.wgsl", GOOD_WGSL);
    let p = write(dir, "good.toml", &spec("ok.wgsl", "", "WG_SIZE").replace("WG_SIZE = [32, 64]", "WG_SIZE = [32, 64, 128, 256]"));
    let p = p.to_str().unwrap();
    let merged = dir.join("merged.sqlite");
    let mut shards = Vec::new();
    for k in 0..2 {
        let db = dir.join(format!("shard-{k}.sqlite"));
        let o = kerntune(dir, &["tune", p, "--shard", &format!("{k}/2"), "--db", db.to_str().unwrap(), "--atol", "1e-3", "--timeout", "20"]);
        assert!(o.status.success(), "{}", text(&o).1);
        shards.push(db.to_str().unwrap().to_string());
    }
    let o = kerntune(dir, &["db", "merge", &shards[0], &shards[1], "--db", merged.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o).1);
    let records = || {
        let v: serde_json::Value = serde_json::from_slice(&kerntune(dir, &["db", "show", "--json", "--db", merged.to_str().unwrap()]).stdout).unwrap();
        v["entries"].as_object().unwrap().values().next().unwrap()["measurements"].as_object().unwrap().len()
    };
    assert_eq!(records(), 4);
    let confirm = |flags: &[&str]| {
        let o = kerntune(dir, &[&["confirm", p, "--db", merged.to_str().unwrap(), "--top", "2", "--json"], flags].concat());
        let (out, err) = text(&o);
        assert!(o.status.success(), "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        v[0]["notes"].as_array().unwrap().iter().filter_map(|n| n.as_str()).filter(|n| n.starts_with("database:")).map(String::from).collect::<Vec<_>>()
    };
    assert_eq!(confirm(&["--atol", "1e-3", "--timeout", "20"]), Vec::<String>::new(), "measured as the shards did");
    let notes = confirm(&[]);
    assert!(notes.len() == 1 && notes[0].contains("the verification changed") && notes[0].ends_with("the others are kept"), "{notes:?}");
    assert_eq!(records(), 4, "no shard's record is dropped");
}

/// Partial results whose number depends on a parameter (a partial sum per work-group, as many
/// as `num_blocks`): element by element most configs disagree and the warning says to compare
/// sums; compared by their sums (`verify.compare`, `--compare`), the right configs pass and a
/// config that drops elements fails with both sums; a file of one element is the expected sum.
#[test]
fn partial_results_are_compared_by_their_sum() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    if !have_device(dir) {
        return;
    }
    // DROP = 1 leaves out the last 1024 elements: every x is 1, so the sum is 16384 or 15360.
    write(
        dir,
        "partial.wgsl",
        "override block_size_x: u32 = 64u;\n@group(0) @binding(0) var<storage, read_write> partial: array<f32>;\n@group(0) @binding(1) var<storage, read> x: array<f32>;\nvar<workgroup> s: array<f32, 256>;\n@compute @workgroup_size(block_size_x)\nfn sum_partial(@builtin(local_invocation_index) t: u32, @builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {\n    var acc = 0.0;\n    let end = u32(n) - u32(DROP) * 1024u;\n    for (var i = wg.x * block_size_x + t; i < end; i += nwg.x * block_size_x) { acc += x[i]; }\n    s[t] = acc;\n    workgroupBarrier();\n    for (var w = block_size_x / 2u; w > 0u; w /= 2u) { if (t < w) { s[t] += s[t + w]; } workgroupBarrier(); }\n    if (t == 0u) { partial[wg.x] = s[0]; }\n}\n",
    );
    let spec = |verify: &str| {
        let body = format!(
            "[kernel]\nname = \"sum_partial\"\nsource = {{ wgsl = \"partial.wgsl\" }}\n[params]\nblock_size_x = [64, 256]\nnum_blocks = [32, 128]\nDROP = [0, 1]\n[space]\ndefault = {{ block_size_x = 64, num_blocks = 32, DROP = 0 }}\n[[problems]]\nn = 16384\n[[args]]\nname = \"partial\"\ntype = \"f32\"\nlen = \"max(num_blocks)\"\naccess = \"write\"\n[[args]]\nname = \"x\"\ntype = \"f32\"\nlen = \"n\"\ninit = \"constant\"\nfill = 1.0\n[[args]]\nname = \"n\"\ntype = \"i32\"\nvalue = \"n\"\n[launch]\ngrid = [\"num_blocks\"]\nblock = [\"block_size_x\"]\n[verify]\n{verify}\n"
        );
        write(dir, "partial.toml", &body).to_str().unwrap().to_string()
    };
    let tune = |p: &str, flags: &[&str]| {
        let db = dir.join(format!("db-{}.sqlite", flags.len()));
        let o = kerntune(dir, &[&["tune", p, "--json", "--db", db.to_str().unwrap()], flags].concat());
        let (out, err) = text(&o);
        assert!(o.status.success(), "{err}");
        serde_json::from_str::<serde_json::Value>(&out).unwrap()[0].clone()
    };
    // The verdict of each config: its DROP and whether it failed, with the message.
    let verdicts = |r: &serde_json::Value| {
        let mut v: Vec<(i64, bool, String)> = r["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| {
                let drop = x["config"]["params"].as_array().unwrap().iter().find(|p| p[0] == "DROP").unwrap()[1].as_i64().unwrap();
                (drop, x["outcome"] == "failed", x["message"].as_str().unwrap_or_default().to_string())
            })
            .collect();
        v.sort();
        v
    };
    let by_sum = |r: &serde_json::Value| {
        let v = verdicts(r);
        assert_eq!(v.len(), 8, "{v:?}");
        for (drop, failed, message) in &v {
            assert_eq!(*failed, *drop == 1, "{v:?}");
            if *failed {
                assert!(message.contains("the sum of its") && message.contains("is 1.536e4; expected 1.6384e4"), "{message}");
            }
        }
    };
    // Element by element: the partial sums of 32 and 128 work-groups differ.
    let p = spec("");
    let plain = tune(&p, &[]);
    let warning = plain["disagreement"]["advice"].as_str().unwrap();
    assert!(warning.contains("--compare partial=sum"), "{warning}");
    // By their sums, from the spec and from the command line; `check` says so.
    let summed = spec("compare = { partial = \"sum\" }");
    let o = kerntune(dir, &["check", &summed]);
    assert!(text(&o).0.contains("\nverification: default config; partial by its sum; atol 1e-5, rtol 1e-5\n"), "{}", text(&o).0);
    by_sum(&tune(&summed, &["--top", "1"]));
    // The report says how each run verified, and that a run without a reference did not.
    let report = |db: &str| {
        let html = dir.join("report.html");
        let o = kerntune(dir, &["report", "--kernel", "sum_partial", "--db", dir.join(db).to_str().unwrap(), "-o", html.to_str().unwrap()]);
        assert!(o.status.success(), "{}", text(&o).1);
        std::fs::read_to_string(html).unwrap()
    };
    let page = report("db-2.sqlite");
    assert!(page.contains("verification: default config (block_size_x=64,num_blocks=32,DROP=0); partial by its sum; atol 1e-5, rtol 1e-5"), "{page}");
    let page = report("db-0.sqlite");
    assert!(page.contains("verification: default config (block_size_x=64,num_blocks=32,DROP=0); atol 1e-5, rtol 1e-5<"), "{page}");
    let o = kerntune(dir, &["tune", &p, "--reference", "none", "--db", dir.join("none.sqlite").to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o).1);
    let page = report("none.sqlite");
    assert!(page.contains("<strong>outputs not verified</strong>") && !page.contains("verification: "), "{page}");
    let o = kerntune(dir, &["db", "show", "--db", dir.join("none.sqlite").to_str().unwrap()]);
    assert!(text(&o).0.contains("; outputs not verified (the last tune ran with reference none)\n"), "{}", text(&o).0);
    let o = kerntune(dir, &["db", "show", "--db", dir.join("db-2.sqlite").to_str().unwrap()]);
    assert!(o.status.success() && !text(&o).0.contains("not verified"), "{}", text(&o).0);
    by_sum(&tune(&p, &["--compare", "partial=sum"]));
    // The expected sum as a file of one element (raw f32).
    std::fs::write(dir.join("sum.bin"), 16384f32.to_le_bytes()).unwrap();
    let expected = tune(&spec("compare = { partial = \"sum\" }\nexpected = { partial = \"sum.bin\" }"), &["--top", "2"]);
    by_sum(&expected);
    let reference = expected["reference"].as_str().unwrap();
    assert!(reference.starts_with("expected outputs (partial: file") && reference.ends_with("sum.bin); partial by its sum"), "{reference}");
    // Bad input: one line each.
    bad(dir, &["tune", &p, "--compare", "partial=max"], &["--compare", "`max` is not `sum`"]);
    bad(dir, &["tune", &spec("compare = { nope = \"sum\" }")], &["verify.compare", "`nope` is not a buffer argument"]);
    bad(dir, &["tune", &spec("compare = { x = \"sum\" }")], &["verify.compare", "`x`", "it is an input"]);
    bad(dir, &["tune", &spec("compare = { partial = \"total\" }")], &["verify.compare.partial", "`total` is not `sum`"]);
    std::fs::write(dir.join("two.bin"), [0u8; 8]).unwrap();
    bad(dir, &["tune", &spec("compare = { partial = \"sum\" }\nexpected = { partial = \"two.bin\" }")], &["verify.expected.partial", "a file of one element"]);
}

/// A few elements that correct configs compute differently (here FLIP = 1 configs add 1 to the
/// first three, as a different edge test counts a point on a polygon's edge in or out): they fail
/// element by element, with the summary suggesting an allowance, and pass where that many may differ (`--mismatches y=3`, a share, or the
/// spec's `[verify] mismatches`); one fewer allowed says how many were. Bad allowances get one
/// line each.
#[test]
fn a_few_elements_may_differ_where_the_spec_allows() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    if !have_device(dir) {
        return;
    }
    write(
        dir,
        "flip.wgsl",
        "@group(0) @binding(0) var<storage, read_write> y: array<f32>;\n@group(0) @binding(1) var<storage, read> x: array<f32>;\n@compute @workgroup_size(WG)\nfn flip(@builtin(global_invocation_id) g: vec3<u32>) {\n    let i = g.x;\n    if (i < u32(n)) { y[i] = 2.0 * x[i] + select(0.0, 1.0, FLIP == 1 && i < 3u); }\n}\n",
    );
    let spec = |verify: &str| {
        let body = format!(
            "[kernel]\nname = \"flip\"\nsource = {{ wgsl = \"flip.wgsl\" }}\n[params]\nWG = [32, 64]\nFLIP = [0, 1]\n[space]\ndefault = {{ WG = 32, FLIP = 0 }}\n[[problems]]\nn = 400000\n[[args]]\nname = \"y\"\ntype = \"f32\"\nlen = \"n\"\naccess = \"write\"\n[[args]]\nname = \"x\"\ntype = \"f32\"\nlen = \"n\"\ninit = \"random\"\n[[args]]\nname = \"n\"\ntype = \"i32\"\nvalue = \"n\"\n[launch]\ngrid = [\"div_ceil(n, WG)\"]\nblock = [\"WG\"]\n[verify]\n{verify}\n"
        );
        write(dir, "flip.toml", &body).to_str().unwrap().to_string()
    };
    let failed = |flags: &[&str], p: &str| {
        let o = kerntune(dir, &[&["tune", p, "--json", "--no-db"], flags].concat());
        let (out, err) = text(&o);
        assert!(o.status.success(), "{err}");
        let r = &serde_json::from_str::<serde_json::Value>(&out).unwrap()[0];
        let mut v: Vec<String> =
            r["results"].as_array().unwrap().iter().filter(|x| x["outcome"] == "failed").map(|x| x["message"].as_str().unwrap().to_string()).collect();
        v.sort();
        v
    };
    let p = spec("");
    let plain = failed(&[], &p);
    assert_eq!(plain.len(), 2, "{plain:?}");
    assert!(plain.iter().all(|m| m.contains("`y`: 3 of 400000 elements differ")), "{plain:?}");
    // The summary suggests the allowance: every wrong output differs in 3 of 400,000 elements.
    let o = kerntune(dir, &["tune", &p, "--no-db"]);
    assert!(
        text(&o).0.contains("in at most 3 of the 400000 elements of `y`: if so few may differ between correct configs")
            && text(&o).0.contains("--mismatches y=3"),
        "{}",
        text(&o).0
    );
    assert!(failed(&["--mismatches", "y=3"], &p).is_empty());
    assert!(failed(&["--mismatches", "y=0.001%"], &p).is_empty());
    let two = failed(&["--mismatches", "y=2"], &p);
    assert!(two.len() == 2 && two.iter().all(|m| m.ends_with("; more than the 2 allowed to differ (verify.mismatches)")), "{two:?}");
    let allowing = spec("mismatches = { y = 3 }");
    assert!(failed(&[], &allowing).is_empty());
    assert_eq!(failed(&["--mismatches", "y=0"], &allowing).len(), 2, "the flag takes the allowance back");
    let o = kerntune(dir, &["check", &allowing]);
    assert!(text(&o).0.contains("\nverification: default config; atol 1e-5, rtol 1e-5; y: up to 3 elements may differ\n"), "{}", text(&o).0);
    // Bad allowances: one line each.
    bad(dir, &["tune", &p, "--mismatches", "y=ten"], &["--mismatches y=ten", "is not a count of elements"]);
    bad(dir, &["tune", &p, "--mismatches", "y"], &["--mismatches", "is not NAME=COUNT"]);
    bad(dir, &["tune", &spec("mismatches = { y = -3 }")], &["verify.mismatches.y", "is not a count of elements"]);
    bad(dir, &["tune", &spec("mismatches = { z = 3 }")], &["verify.mismatches.z", "`z` is not a buffer argument"]);
    bad(dir, &["tune", &spec("mismatches = { x = 3 }")], &["verify.mismatches.x", "not compared at all"]);
    bad(dir, &["tune", &spec("mismatches = { y = 3 }\ncompare = { y = \"sum\" }")], &["verify.mismatches.y", "compared by its sum", "element by element"]);
}

/// A NumPy `.npy` file of little-endian f32 values, as `numpy.save` writes it.
fn npy_f32(dir: &Path, name: &str, values: &[f32]) -> PathBuf {
    let mut header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({},), }}", values.len());
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend((header.len() as u16).to_le_bytes());
    bytes.extend(header.as_bytes());
    bytes.extend(values.iter().flat_map(|v| v.to_le_bytes()));
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// Input data from files, as a Kernel Tuner script passes its NumPy arrays: `init = "file"` reads
/// a `.npy` array (or raw elements) into a buffer, which the tune uses (the expected output,
/// from another file, holds only where it did) and `check` lists; a generated input may use
/// Python's math functions (a polygon's vertices on the unit circle). Bad files get one line
/// each, naming the argument's `file` field.
#[test]
fn inputs_come_from_files_and_from_math_functions() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    if !have_device(dir) {
        return;
    }
    write(
        dir,
        "scale.wgsl",
        "@group(0) @binding(0) var<storage, read_write> y: array<f32>;\n@group(0) @binding(1) var<storage, read> x: array<f32>;\n@group(0) @binding(2) var<storage, read> v: array<f32>;\n@compute @workgroup_size(WG)\nfn scale(@builtin(global_invocation_id) g: vec3<u32>) {\n    let i = g.x;\n    if (i < u32(n)) { y[i] = 2.0 * x[i] + v[i % 8u]; }\n}\n",
    );
    let n = 1000usize;
    let x: Vec<f32> = (0..n).map(|i| (i % 13) as f32 * 0.25 - 1.0).collect();
    npy_f32(dir, "x.npy", &x);
    // The vertices' x and y, interleaved: cos and sin of 2πk/4 for k = i // 2, so 1, 0, 0, 1, -1, 0, 0, -1.
    let v = [1.0f32, 0.0, 0.0, 1.0, -1.0, 0.0, 0.0, -1.0];
    let y: Vec<f32> = (0..n).map(|i| 2.0 * x[i] + v[i % 8]).collect();
    npy_f32(dir, "y.npy", &y);
    let spec = |x_arg: &str| {
        let body = format!(
            "[kernel]\nname = \"scale\"\nsource = {{ wgsl = \"scale.wgsl\" }}\n[params]\nWG = [32, 64]\n[[problems]]\nn = {n}\n[[args]]\nname = \"y\"\ntype = \"f32\"\nlen = \"n\"\naccess = \"write\"\n[[args]]\nname = \"x\"\ntype = \"f32\"\nlen = \"n\"\n{x_arg}\n[[args]]\nname = \"v\"\ntype = \"f32\"\nlen = 8\ninit = \"expr\"\nexpr = \"math.cos(2 * math.pi * (i // 2) / 4) if i % 2 == 0 else np.sin(2 * np.pi * (i // 2) / 4)\"\n[[args]]\nname = \"n\"\ntype = \"i32\"\nvalue = \"n\"\n[launch]\ngrid = [\"div_ceil(n, WG)\"]\nblock = [\"WG\"]\n[verify]\nexpected = {{ y = \"y.npy\" }}\natol = 1e-6\n"
        );
        write(dir, "scale.toml", &body).to_str().unwrap().to_string()
    };
    let p = spec("init = \"file\"\nfile = \"x.npy\"");
    let o = kerntune(dir, &["tune", &p, "--json", "--no-db"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let r = &serde_json::from_str::<serde_json::Value>(&out).unwrap()[0];
    let results = r["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "{out}");
    assert!(results.iter().all(|x| x["outcome"] == "measured"), "{out}");
    let o = kerntune(dir, &["check", &p]);
    assert!(text(&o).0.contains("  read, file ./x.npy\n") || text(&o).0.contains(&format!("  read, file {}\n", dir.join("x.npy").display())), "{}", text(&o).0);
    let o = kerntune(dir, &["check", &p, "--json"]);
    let fills = serde_json::from_str::<serde_json::Value>(&text(&o).0).unwrap()["problems"][0]["fills"].clone();
    assert!(fills[0].is_null() && fills[1].as_str().unwrap().starts_with("file ") && fills[1].as_str().unwrap().ends_with("x.npy"), "{fills}");
    assert!(fills[2].as_str().unwrap().starts_with("generator `math.cos(") && fills[3].is_null(), "{fills}");
    // The same spec with random x: the expected outputs no longer hold.
    let o = kerntune(dir, &["tune", &spec("init = \"random\""), "--json", "--no-db"]);
    assert!(!o.status.success() && text(&o).1.contains("wrong output"), "{:?}", text(&o));
    // Bad input: one line each.
    npy_f32(dir, "short.npy", &x[..10]);
    bad(dir, &["tune", &spec("init = \"file\"\nfile = \"short.npy\"")], &["args[1] (x).file", "short.npy", "10 elements", "the buffer 1000"]);
    bad(dir, &["tune", &spec("init = \"file\"\nfile = \"nope.npy\"")], &["args[1] (x).file", "cannot read", "nope.npy"]);
    bad(dir, &["tune", &spec("init = \"file\"\nfile = \"../x.npy\"")], &["args[1] (x).file", "is outside", "--allow-outside-sources"]);
    bad(dir, &["tune", &spec("init = \"file\"")], &["args[1] (x).file", "init = \"file\" needs `file"]);
    bad(dir, &["tune", &spec("file = \"x.npy\"")], &["args[1] (x).file", "`file` needs init = \"file\""]);
    std::fs::write(dir.join("raw.bin"), [0u8; 12]).unwrap();
    bad(dir, &["tune", &spec("init = \"file\"\nfile = \"raw.bin\"")], &["args[1] (x).file", "12 bytes of raw data", "1000 elements of float need 4000"]);
}

/// An output whose order differs between configs (here REV = 1 writes it backwards): element by
/// element those configs disagree, each message says the output agrees sorted and the warning
/// says to compare sorted; compared sorted (`--compare y=sorted`) they pass, and a config that
/// computes other values (SCALE = 3) still fails.
#[test]
fn reordered_outputs_are_compared_sorted() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    if !have_device(dir) {
        return;
    }
    write(
        dir,
        "rev.wgsl",
        "@group(0) @binding(0) var<storage, read_write> y: array<f32>;\n@group(0) @binding(1) var<storage, read> x: array<f32>;\n@compute @workgroup_size(WG)\nfn scale(@builtin(global_invocation_id) g: vec3<u32>) {\n    let i = g.x;\n    if (i < u32(n)) {\n        let at = select(i, u32(n) - 1u - i, REV == 1);\n        y[at] = f32(SCALE) * x[i];\n    }\n}\n",
    );
    let p = write(
        dir,
        "rev.toml",
        "[kernel]\nname = \"scale\"\nsource = { wgsl = \"rev.wgsl\" }\n[params]\nWG = [64, 128]\nREV = [0, 1]\nSCALE = [2, 3]\n[space]\ndefault = { WG = 64, REV = 0, SCALE = 2 }\n[[problems]]\nn = 4096\n[[args]]\nname = \"y\"\ntype = \"f32\"\nlen = \"n\"\naccess = \"write\"\n[[args]]\nname = \"x\"\ntype = \"f32\"\nlen = \"n\"\ninit = \"random\"\n[[args]]\nname = \"n\"\ntype = \"i32\"\nvalue = \"n\"\n[launch]\ngrid = [\"div_ceil(n, WG)\"]\nblock = [\"WG\"]\n",
    );
    let tune = |flags: &[&str]| {
        let o = kerntune(dir, &[&["tune", p.to_str().unwrap(), "--json", "--no-db"], flags].concat());
        let (out, err) = text(&o);
        assert!(o.status.success(), "{err}");
        serde_json::from_str::<serde_json::Value>(&out).unwrap()[0].clone()
    };
    let param = |x: &serde_json::Value, name: &str| x["config"]["params"].as_array().unwrap().iter().find(|p| p[0] == name).unwrap()[1].as_i64().unwrap();
    let plain = tune(&[]);
    let advice = plain["disagreement"]["advice"].as_str().unwrap();
    assert!(advice.contains("in another order") && advice.contains("--compare y=sorted"), "{advice}");
    for x in plain["results"].as_array().unwrap() {
        let (rev, scale, failed) = (param(x, "REV"), param(x, "SCALE"), x["outcome"] == "failed");
        assert_eq!(failed, rev == 1 || scale == 3, "{x}");
        let agrees_sorted = x["message"].as_str().unwrap_or_default().contains("sorted, they agree");
        assert_eq!(agrees_sorted, rev == 1 && scale == 2, "{x}");
    }
    let sorted = tune(&["--compare", "y=sorted"]);
    assert_eq!(sorted["reference"].as_str(), Some("default config; y sorted"));
    for x in sorted["results"].as_array().unwrap() {
        assert_eq!(x["outcome"] == "failed", param(x, "SCALE") == 3, "{x}");
        if param(x, "SCALE") == 3 {
            assert!(x["message"].as_str().unwrap().contains("compared sorted"), "{x}");
        }
    }
}

/// A CUDA source that includes the user's own headers (beside it, and from an `-I` folder of
/// its options): `check` lists them, as read for the compiler; two files included by one name
/// are one clear error naming the source field. (They compile from memory on the GPU: the
/// GPU suite's `the_users_headers_compile_and_an_edit_is_a_new_kernel`.)
#[test]
fn the_users_headers_are_listed_and_a_clash_is_named() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::create_dir_all(dir.join("kernels/detail")).unwrap();
    std::fs::create_dir_all(dir.join("include/ops")).unwrap();
    write(dir, "kernels/tile.h", "#pragma once\n#include \"detail/load.h\"\n#define SCALE 2.0f\n");
    write(dir, "kernels/detail/load.h", "#pragma once\n__device__ float load(const float* p, int i) { return p[i]; }\n");
    write(dir, "include/ops/axpy.cuh", "#pragma once\n__device__ float axpy(float a, float x, float y) { return a * x + y; }\n");
    write(
        dir,
        "kernels/scale.cu",
        "#include <cuda_fp16.h>\n#include \"tile.h\"\n#include <ops/axpy.cuh>\nextern \"C\" __global__ void scale(float* y, const float* x, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] = axpy(SCALE, load(x, i), 0.0f);\n}\n",
    );
    let spec = write(
        dir,
        "scale.toml",
        "[kernel]\nname = \"scale\"\nsource = { cuda = \"kernels/scale.cu\" }\noptions = { cuda = [\"-Iinclude\"] }\n[params]\nWG = [32, 64]\n[[problems]]\nn = 1000\n[[args]]\nname = \"y\"\ntype = \"f32\"\nlen = \"n\"\naccess = \"write\"\n[[args]]\nname = \"x\"\ntype = \"f32\"\nlen = \"n\"\n[[args]]\nname = \"n\"\ntype = \"i32\"\nvalue = \"n\"\n[launch]\ngrid = [\"div_ceil(n, WG)\"]\nblock = [\"WG\"]\n",
    );
    let p = spec.to_str().unwrap();
    let o = kerntune(dir, &["check", p]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let line = out.lines().find(|l| l.starts_with("headers")).unwrap_or_else(|| panic!("no headers line:\n{out}"));
    for h in ["tile.h (", "kernels/tile.h)", "ops/axpy.cuh (", "include/ops/axpy.cuh)", "detail/load.h ("] {
        assert!(line.contains(h), "`{h}` missing from: {line}");
    }
    assert!(!line.contains("cuda_fp16"), "the toolkit's headers are the compiler's: {line}");
    let o = kerntune(dir, &["check", p, "--json"]);
    let v: serde_json::Value = serde_json::from_str(&text(&o).0).unwrap();
    let names: Vec<&str> = v["headers"].as_array().unwrap().iter().map(|h| h["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["tile.h", "ops/axpy.cuh", "detail/load.h"]);
    // Another `tile.h` beside load.h, included from there: the compiler could be given only one.
    write(dir, "kernels/detail/load.h", "#pragma once\n#include \"tile.h\"\n");
    write(dir, "kernels/detail/tile.h", "#define OTHER 1\n");
    bad(dir, &["check", p], &["scale.toml", "kernel.source.cuda", "two files are included as `tile.h`", "rename one"]);
}

/// `--memcheck` on wgpu runs the winner with the guard words after its buffers filled three ways
/// and says what it saw in one line, on a tune and on the database hit after it, in the report
/// (kept with the run) and in `--json`; the tune is not affected. (A winner that reads past a
/// buffer: `a_read_or_write_past_a_wgpu_buffer_is_found_by_the_guard_words` finds such configs
/// before they can win; the CUDA checker's verdicts: the GPU suite's
/// `the_winner_is_run_under_the_memory_checker_when_asked`.)
#[test]
fn memcheck_runs_the_winner_with_the_guard_words_on_wgpu() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    if !have_device(dir) {
        return;
    }
    write(dir, "triad.wgsl", GOOD_WGSL);
    let p = write(dir, "triad.toml", &spec("triad.wgsl", "", "WG_SIZE")).display().to_string();
    let db = dir.join("memcheck.sqlite").display().to_string();
    for run in ["tune", "database hit"] {
        let o = kerntune(dir, &["tune", &p, "--memcheck", "--db", &db]);
        let (out, err) = text(&o);
        assert!(o.status.success(), "{err}");
        assert!(
            out.contains("\nmemcheck: kerntune's guard words (wgpu: 256 bytes to 64 KiB after each buffer, filled three ways) ran the winner ("),
            "{run}: {out}"
        );
        assert!(out.contains(") and saw no out-of-bounds access\n"), "{run}: {out}");
        assert!(!out.contains("warning: memcheck"), "{out}");
        assert_eq!(out.contains("database hit"), run == "database hit", "{out}");
    }
    // Kept with the run: the report says it under the run.
    let html = dir.join("memcheck.html");
    let o = kerntune(dir, &["report", "--db", &db, "-o", html.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o).1);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("memcheck: kerntune&#39;s guard words (wgpu") || page.contains("memcheck: kerntune's guard words (wgpu"), "{page}");
    let o = kerntune(dir, &["tune", &p, "--memcheck", "--json", "--no-db"]);
    let v: serde_json::Value = serde_json::from_str(&text(&o).0).unwrap();
    assert_eq!(v[0]["memcheck"]["verdict"], "clean", "{v}");
    let o = kerntune(dir, &["tune", &p, "--json", "--no-db"]);
    let v: serde_json::Value = serde_json::from_str(&text(&o).0).unwrap();
    assert!(v[0]["memcheck"].is_null(), "not asked, not run: {v}");
}

/// A parameter nothing reads (a misspelt name) is said at once by `check` and by `tune`, kept
/// in the tune's notes (`--json` too), and the tune goes on; a shader that writes a buffer the
/// spec leaves `access = "read"` fails with what to change, naming the shader's variable.
#[test]
fn a_parameter_that_changes_nothing_and_a_read_only_buffer_written_are_explained() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    // The shader's own default hides the misspelt name: every config compiles.
    write(dir, "triad.wgsl", &format!("override UNROLL: u32 = 1u;\n{GOOD_WGSL}"));
    let typo = spec("triad.wgsl", "", "WG_SIZE").replace("WG_SIZE = [32, 64]", "WG_SIZE = [32, 64]\nUNROL = [1, 2]");
    let p = write(dir, "typo.toml", &typo).display().to_string();
    let line = "parameter `UNROL` (2 values) appears nowhere in triad.wgsl, the kernel's name, [launch] or the scalar arguments: its values compile and launch the same kernel, each measured as a config of its own; did you mean `UNROLL`, which triad.wgsl uses?";
    let o = kerntune(dir, &["check", &p]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains(&format!("warning: {line}")), "{out}");
    let mut fine = spec("triad.wgsl", "", "WG_SIZE");
    let o = kerntune(dir, &["check", &write(dir, "fine.toml", &fine).display().to_string()]);
    assert!(!text(&o).0.contains("appears nowhere"), "{}", text(&o).0);
    if !have_device(dir) {
        return;
    }
    let o = kerntune(dir, &["tune", &p, "--no-db"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains(&format!("warning: {line}")), "said at once: {err}");
    assert!(out.contains(&format!("note: {line}")), "kept: {out}");
    let o = kerntune(dir, &["tune", &p, "--no-db", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&text(&o).0).unwrap();
    assert!(v[0]["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().starts_with(line)), "{}", v[0]["notes"]);
    // `y` is written by the shader but left read-only by the spec.
    fine = fine.replace("access = \"readwrite\"\n", "");
    let p = write(dir, "readonly.toml", &fine).display().to_string();
    let o = kerntune(dir, &["tune", &p, "--no-db"]);
    let (_, err) = text(&o);
    assert!(!o.status.success(), "{err}");
    assert!(
        err.contains("the shader writes `y` at @group(0) @binding(1) (`var<storage, read_write>`), but the 2nd buffer argument of [[args]], bound there, has `access = \"read\"` (the default)"),
        "{err}"
    );
    assert!(err.contains("give that argument `access = \"readwrite\"`"), "{err}");
}

/// `kerntune cache` shows, prunes and clears the compile caches (made here as a CUDA and a HIP
/// tune leave them: one file per compiled kernel and kept compile error); a bound that is not a
/// size is one error, before a tune measures anything.
#[test]
fn the_compile_caches_are_shown_pruned_to_their_bound_and_cleared() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let (cuda, hip) = (dir.join("cuda"), dir.join("hip"));
    std::fs::create_dir_all(&cuda).unwrap();
    std::fs::create_dir_all(&hip).unwrap();
    let old = |p: &Path, days: u64| {
        let f = std::fs::File::options().append(true).open(p).unwrap();
        f.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(days * 86_400)).unwrap();
    };
    // Ten CUDA kernels of 100 KiB, last used 10 … 1 days ago, one template instance's symbol;
    // a kept refusal in the HIP folder used today.
    for i in 0..10u64 {
        let p = cuda.join(format!("{i:064x}.cubin"));
        std::fs::write(&p, vec![0u8; 100 << 10]).unwrap();
        old(&p, 10 - i);
    }
    std::fs::write(cuda.join(format!("{:064x}.sym", 0)), "_Z1kILi4EEvv").unwrap();
    old(&cuda.join(format!("{:064x}.sym", 0)), 10);
    std::fs::write(hip.join("ab.err"), r#"{"log":"error","options":[]}"#).unwrap();

    let o = kerntune(dir, &["cache", "show"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("tunes keep it within 2.0 GiB (KERNTUNE_COMPILE_CACHE_MAX, default 2 GiB)"), "{out}");
    assert!(out.contains("cuda: 10 compiled kernel(s), 0 kept compile error(s), 1000.0 KiB; last used between 10 days ago and 24 h ago"), "{out}");
    assert!(out.contains("hip: 0 compiled kernel(s), 1 kept compile error(s), 28 B; last used within a minute or two ("), "{out}");
    let o = kerntune(dir, &["cache", "show", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["max_bytes"], 2u64 << 30);
    assert_eq!(v["folders"][0]["binaries"], 10);

    // Within 500 KiB: down to 400 KiB (80 %), the three most recently used kernels kept and the refusal.
    let o = kerntune(dir, &["cache", "prune", "--max", "500KiB"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        out.contains("removed the 7 least recently used entries (700.0 KiB, none used in the last 4 days) to stay within 500.0 KiB (--max); 4 kept"),
        "{out}"
    );
    let mut left: Vec<String> = std::fs::read_dir(&cuda).unwrap().map(|f| f.unwrap().file_name().into_string().unwrap()).collect();
    left.sort();
    assert_eq!(left, (7..10u64).map(|i| format!("{i:064x}.cubin")).collect::<Vec<_>>(), "the oldest went, the symbol with its kernel");
    assert!(hip.join("ab.err").exists());
    let o = kerntune(dir, &["cache", "prune", "--max", "500KiB"]);
    assert!(text(&o).0.contains("within 500.0 KiB; nothing removed"), "{:?}", text(&o));
    // A HIP kernel used a minute before the refusal: "within a minute or two" once, not
    // "between" it and itself.
    let k = hip.join(format!("{:064x}.hsaco", 1));
    std::fs::write(&k, "k").unwrap();
    std::fs::File::options().append(true).open(&k).unwrap().set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(60)).unwrap();
    let out = text(&kerntune(dir, &["cache", "show"])).0;
    assert!(out.contains("hip: 1 compiled kernel(s), 1 kept compile error(s), 29 B; last used within a minute or two ("), "{out}");

    // Bad bounds: one line each, naming where it came from.
    bad(dir, &["cache", "prune", "--max", "lots"], &["--max", "`lots` is not a size", "2GiB"]);
    bad(dir, &["cache", "prune", "--max", "0"], &["--max", "KERNTUNE_NO_COMPILE_CACHE=1"]);
    let spec = examples().join("triad/triad.toml");
    let o = Command::new(env!("CARGO_BIN_EXE_kerntune"))
        .args(["tune", spec.to_str().unwrap(), "--no-db"])
        .env("KERNTUNE_CACHE_DIR", dir)
        .env("KERNTUNE_COMPILE_CACHE_MAX", "2 jigabytes")
        .output()
        .unwrap();
    let err = text(&o).1;
    assert!(!o.status.success() && err.lines().filter(|l| l.starts_with("error:")).count() == 1, "{err}");
    assert!(err.contains("error: KERNTUNE_COMPILE_CACHE_MAX: `2 jigabytes` is not a size"), "{err}");
    let o = Command::new(env!("CARGO_BIN_EXE_kerntune"))
        .args(["cache", "prune"])
        .env("KERNTUNE_CACHE_DIR", dir)
        .env("KERNTUNE_COMPILE_CACHE_MAX", "off")
        .output()
        .unwrap();
    assert!(text(&o).1.contains("error: KERNTUNE_COMPILE_CACHE_MAX is off: nothing to prune to; give a bound with --max"), "{:?}", text(&o));

    let o = kerntune(dir, &["cache", "clear"]);
    let out = text(&o).0;
    assert!(o.status.success() && out.starts_with("removed ") && out.contains("cuda (300.0 KiB)"), "{out}");
    assert!(!cuda.exists() && !hip.exists());
    assert!(text(&kerntune(dir, &["cache", "clear"])).0.contains("no compile cache; nothing to clear"));
    assert!(text(&kerntune(dir, &["cache", "show"])).0.contains("no compile cache yet"));
}

/// `generate`'s table names each launch knob once (`threads=128`, not also `@threads=128`) and
/// says when the model cannot order the configs it ranks first.
#[test]
fn generate_names_each_knob_once_and_says_when_the_model_ties() {
    let d = tempfile::tempdir().unwrap();
    let o = kerntune(d.path(), &["generate", "--class", "matmul", "--shape", "4096x4096x4096", "--target", "h100", "--top", "3"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let rows: Vec<&str> = out.lines().filter(|l| l.contains("num_warps=")).collect();
    assert!(rows.len() >= 3, "{out}");
    assert!(rows.iter().all(|r| !r.contains("@num_warps=") && !r.contains("@threads=")), "{out}");
    let note = out.lines().find(|l| l.starts_with("note: the model gives ")).unwrap_or_else(|| panic!("{out}"));
    let tied: usize = note["note: the model gives ".len()..].split(' ').next().unwrap().parse().unwrap();
    assert!(tied > 3, "{note}");
    // --json keeps the configs whole, knobs included.
    let o = kerntune(d.path(), &["generate", "--class", "matmul", "--shape", "4096x4096x4096", "--target", "h100", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&text(&o).0).unwrap();
    assert_eq!(v["generated"]["candidates"][0][0]["knobs"]["num_warps"].as_i64().map(|w| w > 0), Some(true), "the JSON keeps every knob");
    // A device that reports no peak rates: the table's `-` column is explained.
    let o = kerntune(d.path(), &["generate", "--class", "reduction", "--shape", "1048576", "--target", "llvmpipe", "--top", "2"]);
    let out = text(&o).0;
    assert!(out.contains("- "), "{out}");
    assert!(out.contains("note: no model estimate: llvmpipe (software Vulkan) reports neither its peak FLOP/s nor its memory bandwidth"), "{out}");
    let o = kerntune(d.path(), &["generate", "--class", "matmul", "--shape", "4096x4096x4096", "--target", "h100", "--top", "1"]);
    assert!(!text(&o).0.contains("no model estimate"), "the H100 preset has its peak rates");
}
