//! Every shipped example that names a HIP source compiles as HIP for AMD architectures of both
//! wavefront widths, with exactly the options kerntune's HIP backend hands hipRTC
//! ([`CompileOptions::to_args`]) and the defines the tuner makes for real configs of the spec;
//! so does core's on-device comparison kernel, which the HIP backend verifies outputs with.
//!
//! ROCm 5.2's hipRTC will not compile without an AMD GPU, so the compiler here is ROCm's own
//! offline one, `hipcc` (clang's HIP front end, Debian package `hipcc`), which needs no GPU. The
//! only difference from hipRTC is the prelude: hipRTC supplies its own builtin declarations
//! (`__global__`, `threadIdx`, `__launch_bounds__`, ...), which `-include hip/hip_runtime.h`
//! stands in for; a templated kernel is instantiated by a reference to its instance where
//! hipRTC would take a name expression. The output is checked to be an AMDGPU code object
//! holding the kernel's symbol, and a CUDA-only kernel
//! (PTX inline assembly) is checked to be refused, so the test cannot pass on a compiler that
//! accepts anything.

use kerntune_core::testing::skipped;
use kerntune_core::{Config, Prepared, Spec};
use kerntune_hip::CompileOptions;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// CDNA 2 (MI200, wave64), CDNA 3 (MI300's first ID in ROCm 5.2, wave64), RDNA 2 (wave32).
const ARCHS: [&str; 3] = ["gfx90a", "gfx940", "gfx1030"];
/// Configs compiled per spec: the default plus evenly spaced valid ones.
const CONFIGS_PER_SPEC: usize = 4;
/// ELF `e_machine` of AMDGPU code objects.
const EM_AMDGPU: u16 = 224;

fn hipcc() -> PathBuf {
    let under_hip_path = std::env::var_os("HIP_PATH").map(|p| PathBuf::from(p).join("bin/hipcc"));
    under_hip_path.filter(|p| p.exists()).unwrap_or_else(|| PathBuf::from("hipcc"))
}

/// Compiles `source` for one architecture; the code object's bytes, or the compiler's log.
fn compile(hipcc: &Path, source: &Path, opts: &CompileOptions, out: &Path) -> std::io::Result<Result<Vec<u8>, String>> {
    let o = Command::new(hipcc)
        .args(["-x", "hip", "--cuda-device-only", "--no-gpu-bundle-output", "-include", "hip/hip_runtime.h", "-c"])
        .args(opts.to_args())
        .arg(source)
        .arg("-o")
        .arg(out)
        .output()?;
    if !o.status.success() {
        return Ok(Err(String::from_utf8_lossy(&o.stderr).into_owned()));
    }
    Ok(Ok(std::fs::read(out)?))
}

fn e_machine(elf: &[u8]) -> Option<u16> {
    (elf.len() > 20 && elf.starts_with(b"\x7fELF")).then(|| u16::from_le_bytes([elf[18], elf[19]]))
}

/// The default config, then evenly spaced valid configs, `CONFIGS_PER_SPEC` in all.
fn configs(prep: &Prepared) -> Vec<Config> {
    let all: Vec<Config> = prep.space.iter().collect();
    let mut picked = vec![prep.default.clone()];
    let step = (all.len() / CONFIGS_PER_SPEC).max(1);
    for c in all.iter().step_by(step) {
        if picked.len() == CONFIGS_PER_SPEC {
            break;
        }
        if !picked.contains(c) {
            picked.push(c.clone());
        }
    }
    picked
}

struct Job {
    spec: String,
    source: PathBuf,
    /// The text compiled: the source, plus for a template a reference that instantiates the
    /// config's instance (hipRTC does that through a name expression).
    code: String,
    /// What the code object's symbol table must hold: `NAME.kd`, the kernel descriptor of a plain
    /// kernel, or the mangled prefix of a template instance (`_Z7triad_tI`).
    symbol: String,
    config: Config,
    opts: CompileOptions,
}

/// The text to compile and the symbol to find, for kernel `source` at `defines`.
fn instantiate(source: &kerntune_core::KernelSource, defines: &[(String, String)]) -> (String, String) {
    let entry = source.entry();
    match source.instance(defines) {
        // An extern "C" kernel keeps its name; a C++ one is mangled (`_Z18convolution_kernelPfS_S_`).
        None if source.code.lines().any(|l| !l.trim_start().starts_with("//") && l.contains("extern \"C\"")) => (source.code.clone(), format!("{entry}.kd")),
        None => (source.code.clone(), format!("_Z{}{entry}", entry.len())),
        Some(instance) => (format!("{}\nstatic void* kt_instance = (void*)&{instance};\n", source.code), format!("_Z{}{entry}I", entry.len())),
    }
}

#[test]
fn shipped_examples_compile_as_hip() {
    let hipcc = hipcc();
    let tmp = std::env::temp_dir().join(format!("kerntune-hip-examples-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();

    // The compiler really checks: CUDA-only code (PTX assembly) is refused.
    let cuda_only = tmp.join("cuda_only.cu");
    std::fs::write(&cuda_only, "extern \"C\" __global__ void lane(unsigned* o) { unsigned l; asm(\"mov.u32 %0, %%laneid;\" : \"=r\"(l)); o[0] = l; }\n")
        .unwrap();
    let opts = CompileOptions { arch: ARCHS[0].into(), ..Default::default() };
    match compile(&hipcc, &cuda_only, &opts, &tmp.join("cuda_only.o")) {
        Err(e) => {
            assert!(std::env::var("CI").is_err(), "CI installs hipcc (scripts/setup.sh): {} did not start: {e}", hipcc.display());
            skipped(&format!("shipped examples compiled as HIP: {} not found ({e}); install Debian's hipcc", hipcc.display()));
            return;
        }
        Ok(Ok(_)) => panic!("hipcc accepted PTX inline assembly for {}", ARCHS[0]),
        Ok(Err(log)) => assert!(log.contains("error"), "{log}"),
    }

    // Every spec under examples/ with a HIP source, at a few of its real configs.
    let examples = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut specs: Vec<PathBuf> = std::fs::read_dir(&examples)
        .unwrap()
        .flat_map(|d| std::fs::read_dir(d.unwrap().path()).unwrap())
        .map(|e| e.unwrap().path())
        // Specs, not the example application's Cargo.toml.
        .filter(|p| p.extension().is_some_and(|x| x == "toml") && p.file_name().is_some_and(|n| n != "Cargo.toml"))
        .collect();
    specs.sort();
    let mut jobs = Vec::new();
    let mut hip_sources = std::collections::BTreeSet::new();
    for path in &specs {
        let spec = Spec::load(path).unwrap_or_else(|e| panic!("{e}"));
        let Some(source) = spec.sources.get("hip") else { continue };
        hip_sources.insert(source.clone());
        let job = spec.job("hip", 0).unwrap_or_else(|e| panic!("{e}"));
        if job.params.is_empty() {
            continue; // configs generated for the device at tune time (a class spec with [roles])
        }
        let prep = Prepared::new(&job).unwrap_or_else(|e| panic!("{e}"));
        for config in configs(&prep) {
            let launch = prep.launch(&config).unwrap_or_else(|e| panic!("{e}"));
            let defines = prep.defines(&config, &launch);
            let mut ksource = job.source.clone();
            ksource.code = prep.code(&config, &job.source.code).into_owned();
            let (code, symbol) = instantiate(&ksource, &defines);
            for arch in ARCHS {
                let mut opts = CompileOptions::for_request(
                    &kerntune_core::CompileRequest {
                        source: &ksource,
                        code: &ksource.code,
                        config: &config,
                        defines: &defines,
                        launch: &launch,
                        scalars: &[],
                        buffers: &[],
                        abandon: None,
                    },
                    arch,
                );
                opts.arch = arch.to_string();
                jobs.push(Job {
                    spec: path.display().to_string(),
                    source: source.clone(),
                    code: code.clone(),
                    symbol: symbol.clone(),
                    config: config.clone(),
                    opts,
                });
            }
        }
    }
    // And core's on-device comparison kernel, which the HIP backend compiles the same way.
    let compare = PathBuf::from("DEVICE_COMPARE_SRC");
    for arch in ARCHS {
        // One kernel per element type compared on the device, all in one source.
        for dtype in [kerntune_core::DType::F32, kerntune_core::DType::F16, kerntune_core::DType::BF16] {
            let opts = CompileOptions { arch: arch.into(), ..Default::default() };
            let name = kerntune_core::measure::verify::device_compare_kernel(dtype).expect("compared on the device");
            let (code, symbol) = (kerntune_core::measure::verify::DEVICE_COMPARE_SRC.to_string(), format!("{name}.kd"));
            jobs.push(Job { spec: format!("core's comparison kernel ({dtype:?})"), source: compare.clone(), code, symbol, config: Config::default(), opts });
        }
    }
    hip_sources.insert(compare);
    let compiled: std::collections::BTreeSet<PathBuf> = jobs.iter().map(|j| j.source.clone()).collect();
    assert!(!hip_sources.is_empty(), "no example names a HIP source");
    assert_eq!(compiled, hip_sources, "every HIP source is compiled through a spec with listed parameters");

    // Compile in parallel; collect every failure before reporting.
    let n = jobs.len();
    let queue = Mutex::new(jobs.into_iter().enumerate().collect::<Vec<_>>());
    let failures = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let Some((i, job)) = queue.lock().unwrap().pop() else { break };
                let (src, out) = (tmp.join(format!("{i}.hip")), tmp.join(format!("{i}.o")));
                std::fs::write(&src, &job.code).unwrap();
                let what = format!("{} [{}] for {}", job.spec, job.config, job.opts.arch);
                match compile(&hipcc, &src, &job.opts, &out).unwrap() {
                    Ok(code) if e_machine(&code) != Some(EM_AMDGPU) => failures.lock().unwrap().push(format!("{what}: output is not an AMDGPU code object")),
                    Ok(code) if !code.windows(job.symbol.len()).any(|w| w == job.symbol.as_bytes()) => {
                        failures.lock().unwrap().push(format!("{what}: the code object has no symbol {}", job.symbol))
                    }
                    Ok(_) => {}
                    Err(log) => failures.lock().unwrap().push(format!("{what}: {:?}\n{log}", job.opts.to_args())),
                }
            });
        }
    });
    let _ = std::fs::remove_dir_all(&tmp);
    let failures = failures.into_inner().unwrap();
    assert!(failures.is_empty(), "{} of {n} compiles failed:\n{}", failures.len(), failures.join("\n"));
    eprintln!("{n} compiles of {} HIP sources (examples and the comparison kernel) for {ARCHS:?}: all AMDGPU code objects", hip_sources.len());
}
