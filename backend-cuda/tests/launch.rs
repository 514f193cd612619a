//! The CUDA launch API on a real GPU (skipped without one; `KERNTUNE_REQUIRE_DEVICE=cuda` makes
//! a missing device a failure): the shipped triad tuned and launched on the application's
//! `CudaSlice`s and stream, wrong argument tuples refused with nothing launched, the stored
//! winner found by a second handle, and `__constant__` memory written through the handle.

use cudarc::driver::{CudaContext, CudaStream};
use kerntune_core::testing::skipped;
use kerntune_core::{Database, LaunchError, Origin, Policy, TuneOptions, Value};
use kerntune_cuda::launch::CudaTunable;
use std::path::Path;
use std::sync::Arc;

fn device() -> Option<(Arc<CudaContext>, Arc<CudaStream>)> {
    match kerntune_cuda::devices() {
        Ok(d) if !d.is_empty() => {
            let ctx = CudaContext::new(0).expect("CUDA device 0 opens");
            let stream = ctx.default_stream();
            Some((ctx, stream))
        }
        r => {
            let why = r.err().map(|e| e.to_string()).unwrap_or_else(|| "no CUDA device".into());
            let need = std::env::var("KERNTUNE_REQUIRE_DEVICE").is_ok_and(|v| v.split(',').any(|b| b == "cuda"));
            assert!(!need, "a CUDA device is required (KERNTUNE_REQUIRE_DEVICE) but: {why}");
            skipped(&format!("CUDA launch API: {why}"));
            None
        }
    }
}

fn triad_job(n: i64) -> kerntune_core::TuneJob {
    let spec = kerntune_core::plan::prepare::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/triad/triad.toml")).unwrap();
    let mut job = spec.job("cuda", 0).unwrap();
    job.sizes = vec![("N".into(), Value::Int(n))];
    job
}

#[test]
fn tuned_triad_launches_on_application_buffers_and_wrong_tuples_are_refused() {
    let Some((ctx, stream)) = device() else { return };
    let dir = tempfile::tempdir().unwrap();
    let n = 1 << 16;
    let opts = TuneOptions { db: Some(Database::at(dir.path().join("db.json"))), ..Default::default() };
    let triad = CudaTunable::new(ctx.clone(), triad_job(n), opts.clone()).unwrap().policy(Policy::Tune);
    let k = triad.kernel(&[n]).unwrap();
    assert_eq!(k.origin(), Origin::Tuned);
    let xh: Vec<f32> = (0..n).map(|i| (i % 13) as f32).collect();
    let x = stream.clone_htod(&xh).unwrap();
    let mut y = stream.clone_htod(&vec![1.0f32; n as usize]).unwrap();
    for _ in 0..3 {
        k.launch(&stream, (&x, &mut y, 2.0f32, n as u32)).unwrap();
    }
    let yh = stream.clone_dtoh(&y).unwrap();
    assert!(yh.iter().zip(&xh).all(|(y, x)| *y == 1.0 + 6.0 * x), "y = 1 + 3 * 2x: {:?}", &yh[..4]);

    // Wrong tuples: refused before launching, y untouched.
    let mut short = stream.alloc_zeros::<f32>(100).unwrap();
    let e = k.launch(&stream, (&x, &mut y, 2.0f32)).unwrap_err().to_string();
    assert_eq!(e, "kernel `triad` takes 4 arguments (x, y, a, n), 3 were given");
    let e = k.launch(&stream, (&x, &y, 2.0f32, n as u32)).unwrap_err().to_string();
    assert_eq!(e, "kernel `triad`, argument 1 (`y`): expected a writable buffer of float, got a buffer of float");
    let e = k.launch(&stream, (&x, &mut y, 2.0f64, n as u32)).unwrap_err().to_string();
    assert!(e.contains("argument 2 (`a`)") && e.contains("float scalar") && e.contains("double"), "{e}");
    let e = k.launch(&stream, (&x, &mut short, 2.0f32, n as u32)).unwrap_err();
    assert!(matches!(e, LaunchError::TooShort { index: 1, len: 100, .. }), "{e}");
    assert_eq!(stream.clone_dtoh(&y).unwrap(), yh, "nothing ran");

    // Another handle on the device's primary context is the same context: accepted (y += 0).
    let other = CudaContext::new(0).unwrap().new_stream().unwrap();
    k.launch(&other, (&x, &mut y, 0.0f32, n as u32)).unwrap();
    other.synchronize().unwrap();

    // The raw function runs the same kernel.
    let (func, cfg) = k.raw();
    {
        use cudarc::driver::PushKernelArg;
        let (a, nn) = (2.0f32, n as u32);
        let mut b = stream.launch_builder(&func);
        b.arg(&x).arg(&mut y).arg(&a).arg(&nn);
        unsafe { b.launch(cfg) }.unwrap();
    }
    let y4 = stream.clone_dtoh(&y).unwrap();
    assert!(y4.iter().zip(&xh).all(|(y, x)| *y == 1.0 + 8.0 * x));

    // A second program finds the stored winner and tunes nothing.
    let again = CudaTunable::new(ctx, triad_job(n), opts).unwrap().policy(Policy::Stored);
    let k2 = again.kernel(&[n]).unwrap();
    assert_eq!((k2.origin(), k2.config()), (Origin::Database, k.config()));
}

const SCALE: &str = r#"
__constant__ float coef[4];
extern "C" __global__ void scale(const float* x, float* y, int n) {
    int i = blockIdx.x * BS + threadIdx.x;
    if (i < n) y[i] = x[i] * coef[i % 4];
}
"#;

const SCALE_SPEC: &str = r#"
[kernel]
name = "scale"
source = { cuda = "scale.cu" }

[params]
BS = [64, 128, 256]

[[problems]]
N = 4096

[[args]]
name = "x"
type = "f32"
len = "N"
init = "sequence"

[[args]]
name = "y"
type = "f32"
len = "N"
access = "write"

[[args]]
name = "n"
type = "i32"
value = "N"

[[args]]
name = "coef"
type = "f32"
len = "4"
init = "constant"
fill = 3.0
memory = "constant"

[launch]
grid = ["div_ceil(N, BS)"]
block = ["BS"]
"#;

#[test]
fn constant_memory_is_filled_from_the_spec_and_written_through_the_handle() {
    let Some((ctx, stream)) = device() else { return };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("scale.cu"), SCALE).unwrap();
    std::fs::write(dir.path().join("scale.toml"), SCALE_SPEC).unwrap();
    let spec = kerntune_core::plan::prepare::load(&dir.path().join("scale.toml")).unwrap();
    let job = spec.job("cuda", 0).unwrap();
    let t = CudaTunable::new(ctx, job, TuneOptions::default()).unwrap().policy(Policy::Default);
    let k = t.kernel(&[4096]).unwrap();
    let xh: Vec<f32> = (0..4096).map(|i| i as f32).collect();
    let x = stream.clone_htod(&xh).unwrap();
    let mut y = stream.alloc_zeros::<f32>(4096).unwrap();
    // The symbol is not an argument: x, y, n.
    k.launch(&stream, (&x, &mut y, 4096i32)).unwrap();
    assert_eq!(&stream.clone_dtoh(&y).unwrap()[..3], &[0.0, 3.0, 6.0], "filled from the spec (3.0)");
    k.write_constant(&stream, "coef", &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
    k.launch(&stream, (&x, &mut y, 4096i32)).unwrap();
    assert_eq!(&stream.clone_dtoh(&y).unwrap()[..5], &[0.0, 2.0, 6.0, 12.0, 4.0]);
    let e = k.write_constant(&stream, "coef", &[0f32; 64]).unwrap_err().to_string();
    assert!(e.contains("coef") && e.contains("holds 16 B"), "{e}");
    assert!(k.write_constant(&stream, "nope", &[0f32; 1]).unwrap_err().to_string().contains("no __constant__ symbol `nope`"));
}

/// A half-precision kernel (`examples/hgemm`, f16 on tensor cores) tuned and launched on the
/// application's `CudaSlice<f16>`s: the element type is checked like any other, and the product
/// matches the host's within f16's rounding.
#[test]
fn a_half_precision_kernel_launches_on_f16_buffers() {
    use kerntune_core::half::f16;
    let Some((ctx, stream)) = device() else { return };
    let dir = tempfile::tempdir().unwrap();
    let spec = kerntune_core::plan::prepare::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/hgemm/hgemm.toml")).unwrap();
    let (m, n, k) = (128usize, 256usize, 64usize);
    let mut job = spec.job("cuda", 0).unwrap();
    job.sizes = vec![("M".into(), Value::Int(m as i64)), ("N".into(), Value::Int(n as i64)), ("K".into(), Value::Int(k as i64))];
    let budget = kerntune_core::Budget::parse("6").unwrap();
    let opts = TuneOptions { db: Some(Database::at(dir.path().join("db.sqlite"))), strategy: "random".into(), budget, ..Default::default() };
    let gemm = CudaTunable::new(ctx, job, opts).unwrap().policy(Policy::Tune);
    let kernel = gemm.kernel(&[m as i64, n as i64, k as i64]).unwrap();
    // Small integers: every product and sum is exact in f32, and the results fit f16 exactly.
    let ah: Vec<f16> = (0..m * k).map(|i| f16::from_f32((i % 5) as f32 - 2.0)).collect();
    let bh: Vec<f16> = (0..k * n).map(|i| f16::from_f32((i % 3) as f32 - 1.0)).collect();
    let a = stream.clone_htod(&ah).unwrap();
    let b = stream.clone_htod(&bh).unwrap();
    let mut c = stream.alloc_zeros::<f16>(m * n).unwrap();
    kernel.launch(&stream, (&a, &b, &mut c, m as u32, n as u32, k as u32)).unwrap();
    let ch = stream.clone_dtoh(&c).unwrap();
    for (i, j) in [(0, 0), (5, 17), (m - 1, n - 1), (77, 130)] {
        let want: f32 = (0..k).map(|p| ah[i * k + p].to_f32() * bh[p * n + j].to_f32()).sum();
        assert_eq!(ch[i * n + j].to_f32(), want, "C[{i}][{j}]");
    }
    let wrong = stream.alloc_zeros::<f32>(m * n).unwrap();
    let e = kernel.launch(&stream, (&a, &b, &wrong, m as u32, n as u32, k as u32)).unwrap_err().to_string();
    assert!(e.contains("argument 2 (`C`)") && e.contains("__half") && e.contains("float"), "{e}");
}
