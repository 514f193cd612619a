//! Cross-backend conformance: the same checks for every backend compiled in, instantiated by
//! `conformance!`. A backend whose device is missing says so and is skipped (visible in the
//! output); `KERNTUNE_REQUIRE_DEVICE=wgpu,cuda` turns such a skip into a failure.

use kerntune::store::db::Database;
use kerntune::testing::skipped_without_device;
use kerntune::{Backend, Spec, TuneOptions, Tuner};
use std::path::PathBuf;

fn examples() -> PathBuf {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples");
    if here.exists() {
        here
    } else {
        // Test binaries shipped to another machine run from the repository root.
        PathBuf::from("examples")
    }
}

fn open(backend: &str) -> Option<kerntune::AnyBackend> {
    match kerntune::open(backend.parse().expect("backend name"), None) {
        Ok(b) => Some(b),
        Err(e) => {
            skipped_without_device(backend, &format!("conformance ({backend})"), &e);
            None
        }
    }
}

/// The triad (both sources) at a size every device handles.
fn triad_job(language: &str) -> kerntune::TuneJob {
    let spec = Spec::load(&examples().join("triad/triad.toml")).unwrap();
    let mut job = spec.job(language, 0).unwrap();
    job.sizes = vec![("N".into(), kerntune::Value::Int(1 << 16))];
    job
}

fn limits_are_consistent<B: Backend>(b: &B) {
    let l = b.limits();
    assert!(l.max_threads_per_block >= 64);
    assert!(l.max_block_dim[0] <= l.max_threads_per_block.max(l.max_block_dim[0]));
    assert!(l.shared_mem_per_block <= l.shared_mem_per_block_optin);
    assert!(l.warp_size >= 1 && l.sm_count >= 1);
    assert!(!b.target().fingerprint.is_empty());
    assert!(!b.toolchain().is_empty());
}

fn config_matches_reference_and_reloads<B: Backend>(b: B) {
    let dir = tempfile::tempdir().unwrap();
    let job = triad_job(b.language());
    let opts = TuneOptions { db: Some(Database::at(dir.path().join("db.sqlite"))), ..Default::default() };
    let tuner = Tuner::new(b);
    let r = tuner.tune(&job, &opts).unwrap();
    assert!(!r.db_hit);
    assert_eq!(r.reference, "cpu:triad");
    assert!(r.failures.is_empty(), "every triad config matches the CPU reference: {:?}", r.failures);
    assert!(r.results.iter().all(|x| x.stats().is_some()));
    let again = tuner.tune(&job, &opts).unwrap();
    assert!(again.db_hit, "the winner reloads from the database");
    assert_eq!(again.winner, r.winner);
    let prep = kerntune::Prepared::new(&job).unwrap();
    tuner.compile_config(&job, &prep, &again.winner).expect("the stored winner compiles");
}

/// Every way of emptying L2 between timed launches tunes the triad with correct outputs: none
/// (warm), a 2×L2 memset, and rotating copies of the arguments (backends that cannot flush
/// ignore the choice).
fn every_l2_flush_mode_tunes<B: Backend>(b: B) {
    let job = triad_job(b.language());
    let tuner = Tuner::new(b);
    for (flush_l2, rotate_inputs) in [(false, false), (true, false), (true, true)] {
        let mut opts = TuneOptions { db: None, ..Default::default() };
        opts.bench.flush_l2 = flush_l2;
        opts.bench.rotate_inputs = rotate_inputs;
        let r = tuner.tune(&job, &opts).unwrap();
        assert!(r.failures.is_empty(), "{:?}: {:?}", opts.bench.l2_flush(), r.failures);
        assert!(r.results.iter().all(|x| x.stats().is_some_and(|s| s.mean > 0.0)), "{:?}", opts.bench.l2_flush());
    }
}

/// A C++ template kernel (CUDA and HIP): each config instantiates `triad_t<float, WG_SIZE,
/// PER_THREAD>` with its values through a name expression; every instance must verify, and the
/// compile cache must serve instance and symbol again.
#[cfg(any(feature = "cuda", feature = "hip"))]
fn templated_kernel_instantiates_per_config<B: Backend>(b: B) {
    let spec = Spec::load(&examples().join("templated/triad_t.toml")).unwrap();
    let mut job = spec.job(b.language(), 0).unwrap();
    job.sizes = vec![("N".into(), kerntune::Value::Int(1 << 16))];
    let tuner = Tuner::new(b);
    let opts = TuneOptions { db: None, ..Default::default() };
    let r = tuner.tune(&job, &opts).unwrap();
    assert!(r.failures.is_empty(), "every instance compiles and matches the CPU reference: {:?}", r.failures);
    assert_eq!(r.results.len(), kerntune::Prepared::new(&job).unwrap().space.count().unwrap());
    let again = tuner.tune(&job, &opts).unwrap();
    assert!(again.failures.is_empty(), "{:?}", again.failures);
    if std::env::var_os("KERNTUNE_NO_COMPILE_CACHE").is_none() {
        assert_eq!(again.compile_cache_hits, again.compiled, "the second tune compiles nothing");
    }
}

/// The half-precision GEMMs (`examples/hgemm`: f16 and bf16 buffers, f32 accumulation; tensor
/// cores through CUDA, WGSL's f16 through wgpu, plain f32 arithmetic on f16 through HIP) tune,
/// and every config measured matches the CPU's GEMM within its type's tolerance. A spec without
/// a source for the backend (bf16 on wgpu and HIP), or an adapter without half-precision
/// shaders, is skipped, saying so.
fn half_precision_gemm_tunes_and_verifies<B: Backend>(b: B) {
    let name = b.target().name.clone();
    let language = b.language().to_string();
    let tuner = Tuner::new(b);
    for file in ["hgemm/hgemm.toml", "hgemm/hgemm_bf16.toml"] {
        let spec = Spec::load(&examples().join(file)).unwrap();
        let Ok(job) = spec.job(&language, 0) else {
            // By design (WGSL has no bf16; no HIP bf16 source), not something this machine lacks.
            eprintln!("{file} on {name}: the example has no {language} source");
            continue;
        };
        let opts = TuneOptions { db: None, strategy: "random".into(), seed: 1, budget: kerntune::Budget::parse("8").unwrap(), ..Default::default() };
        const NO_F16: &str = "no half-precision shaders";
        let r = match tuner.tune(&job, &opts) {
            // Every config failed to compile, for that reason.
            Err(e) if e.to_string().contains(NO_F16) => {
                kerntune::testing::skipped(&format!("{file} on {name}: the adapter has {NO_F16}"));
                continue;
            }
            r => r.unwrap_or_else(|e| panic!("{file}: {e}")),
        };
        assert!(r.failures.is_empty(), "{file}: {:?}", r.causes);
        assert_eq!(r.evaluated, 8, "{file}");
        assert_eq!(r.reference, "cpu:gemm", "{file}");
        assert!(r.results.iter().all(|x| x.stats().is_some()), "{file}: every config measured");
    }
}

macro_rules! conformance {
    ($($name:ident: $backend:literal),* $(,)?) => {$(
        mod $name {
            use super::*;
            #[test]
            fn limits_are_consistent() {
                if let Some(b) = open($backend) {
                    kerntune::with_backend!(&b, x => super::limits_are_consistent(x));
                }
            }
            #[test]
            fn every_l2_flush_mode_tunes() {
                if let Some(b) = open($backend) {
                    kerntune::with_backend!(b, x => super::every_l2_flush_mode_tunes(x));
                }
            }
            #[test]
            fn half_precision_gemm_tunes_and_verifies() {
                if let Some(b) = open($backend) {
                    kerntune::with_backend!(b, x => super::half_precision_gemm_tunes_and_verifies(x));
                }
            }
            #[test]
            fn config_matches_reference_and_reloads() {
                if let Some(b) = open($backend) {
                    kerntune::with_backend!(b, x => super::config_matches_reference_and_reloads(x));
                }
            }
        }
    )*};
}

#[cfg(feature = "wgpu")]
conformance!(wgpu: "wgpu");
#[cfg(feature = "cuda")]
conformance!(cuda: "cuda");
#[cfg(feature = "hip")]
conformance!(hip: "hip");

/// The shipped T1 file (`examples/t1/triad.json`: ranges, defaults, a generated input, a
/// flagged output, a budget) tunes as published, with the strategy and budget it asks for.
#[cfg(any(feature = "cuda", feature = "hip"))]
fn t1_example_tunes_as_published<B: Backend>(b: B) {
    let mut spec = Spec::load(&examples().join("t1/triad.json")).unwrap();
    let language = b.language().to_string();
    // The file names a CUDA kernel, which also compiles as HIP.
    if let Some(cuda) = spec.sources.get("cuda").cloned() {
        spec.sources.insert(language.clone(), cuda);
    }
    let job = spec.job(&language, 0).unwrap();
    let budget = kerntune::Budget::parse(spec.budget.as_deref().expect("the file has a budget")).unwrap();
    let opts = TuneOptions { db: None, strategy: spec.strategy.clone().expect("a budget picks a strategy"), budget, ..Default::default() };
    let r = Tuner::new(b).tune(&job, &opts).unwrap();
    assert!(r.failures.is_empty(), "{:?}", r.failures);
    assert_eq!(r.evaluated, 60, "the file's budget");
    assert_eq!(r.reference, "default config");
}

/// The T1 examples in the styles benchmark suites publish (examples/t1: a convolution whose
/// filter is a `__constant__` array and whose kernel is plain C++, a templated dedispersion
/// kernel with scalar arguments and a Kernel Tuner unroll factor, a GEMM with Python-expression
/// values, a stencil with `+ list(range(...))`) tune with Kernel Tuner's geometry and defines,
/// and every config measured matches the default config's output.
#[cfg(any(feature = "cuda", feature = "hip"))]
fn t1_examples_tune_and_verify<B: Backend>(b: B) {
    let language = b.language().to_string();
    let tuner = Tuner::new(b);
    for file in ["convolution/convolution.json", "t1/dedispersion.json", "t1/gemm.json", "t1/stencil.json"] {
        let mut spec = kerntune::plan::prepare::load(&examples().join(file)).unwrap();
        if let Some(cuda) = spec.sources.get("cuda").cloned() {
            spec.sources.insert(language.clone(), cuda);
        }
        let job = spec.job(&language, 0).unwrap();
        let opts = TuneOptions { db: None, strategy: "random".into(), seed: 1, budget: kerntune::Budget::parse("24").unwrap(), ..Default::default() };
        let r = tuner.tune(&job, &opts).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(r.failures.is_empty(), "{file}: {:?} {:?}", r.failures, r.results.iter().find(|x| x.stats().is_none()));
        assert_eq!(r.evaluated, 24, "{file}");
        assert_eq!(r.reference, "default config");
    }
}

#[cfg(any(feature = "cuda", feature = "hip"))]
macro_rules! cuda_and_hip {
    ($($name:ident: $check:ident on $backend:literal),* $(,)?) => {$(
        #[test]
        fn $name() {
            if let Some(b) = open($backend) {
                kerntune::with_backend!(b, x => $check(x));
            }
        }
    )*};
}

#[cfg(feature = "cuda")]
cuda_and_hip!(
    cuda_templated_kernel: templated_kernel_instantiates_per_config on "cuda",
    cuda_t1_example: t1_example_tunes_as_published on "cuda",
    cuda_t1_examples: t1_examples_tune_and_verify on "cuda",
);
#[cfg(feature = "hip")]
cuda_and_hip!(
    hip_templated_kernel: templated_kernel_instantiates_per_config on "hip",
    hip_t1_example: t1_example_tunes_as_published on "hip",
    hip_t1_examples: t1_examples_tune_and_verify on "hip",
);
