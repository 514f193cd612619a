//! An application that uses a tuned kernel, as a program of yours would.
//!
//! It runs the vector triad `y = 2x + y` from `examples/triad` on its own device buffers: the
//! first run on a machine tunes the kernel (or finds its winner in kerntune's database, or one
//! embedded at build time), then every launch goes to the winner through a lock-free lookup.
//!
//! The backend is picked by cargo feature (`wgpu` by default, `cuda`, `hip`) and, with
//! `--backend auto`, at run time: CUDA when a CUDA device is present, else HIP, else wgpu (a GPU
//! adapter, or software Vulkan).
//!
//! ```text
//! cargo run -p kerntune-example-app --release -- --iters 1000          # wgpu
//! cargo run -p kerntune-example-app --release --features cuda -- --n 16777216
//! KERNTUNE_TUNE=0 cargo run -p kerntune-example-app                    # never tune
//! ```
//!
//! Shipping winners: `kerntune db export --rust --kernel triad --out winners.rs`, then build
//! with `KERNTUNE_WINNERS=$PWD/winners.rs` (see `build.rs`).

use anyhow::{bail, Context, Result};
use kerntune::{EmbeddedWinner, Origin, Policy};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Winners embedded at build time (`KERNTUNE_WINNERS`); empty otherwise.
static WINNERS: &[EmbeddedWinner] = include!(concat!(env!("OUT_DIR"), "/winners.rs"));

#[derive(clap::Parser, Debug)]
#[command(about = "Runs a tuned triad in a loop on the application's own buffers")]
struct Cli {
    /// Elements per vector; several sizes, comma-separated, run one after another on the same
    /// tuned kernel handle (each size is tuned, or found, on first use).
    #[arg(long, default_value = "1048576", value_delimiter = ',', value_parser = clap::value_parser!(i64).range(1..=1 << 28))]
    n: Vec<i64>,
    /// Launches.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    iters: u32,
    /// `auto` (CUDA, else HIP, else wgpu), `cuda`, `hip` or `wgpu`.
    #[arg(long, default_value = "auto")]
    backend: kerntune::BackendChoice,
    /// `tune` (now, blocking), `stored` (never tune), `background` or `default`.
    #[arg(long, default_value = "tune", value_parser = parse_policy)]
    policy: Policy,
    /// The kernel's spec.
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/../triad/triad.toml"))]
    spec: PathBuf,
}

fn parse_policy(s: &str) -> Result<Policy, String> {
    match s {
        "tune" => Ok(Policy::Tune),
        "stored" => Ok(Policy::Stored),
        "background" => Ok(Policy::Background),
        "default" => Ok(Policy::Default),
        other => Err(format!("`{other}` is not tune, stored, background or default")),
    }
}

fn main() {
    kerntune::hook();
    // Warnings, and the handle's own lines (which winner is used, fallbacks to the default).
    let filter = tracing_subscriber::EnvFilter::try_from_env("KERNTUNE_LOG").unwrap_or_else(|_| "warn,kerntune_core::app::handle=info".into());
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).init();
    let cli: Cli = clap::Parser::parse();
    if let Err(e) = run(&cli) {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

fn run(cli: &Cli) -> Result<()> {
    use kerntune::BackendChoice::*;
    match cli.backend {
        Cuda => cuda(cli),
        Hip => hip(cli),
        Wgpu => wgpu(cli),
        Auto => {
            if let Some(why) = missing_cuda() {
                println!("no CUDA device ({why}); trying the next backend");
                if let Some(why) = missing_hip() {
                    println!("no HIP device ({why}); using wgpu");
                    return wgpu(cli);
                }
                return hip(cli);
            }
            cuda(cli)
        }
    }
}

/// The host data: small integers, so that every sum is exact in f32.
fn inputs(n: i64) -> (Vec<f32>, Vec<f32>) {
    ((0..n).map(|i| (i % 7) as f32).collect(), vec![1.0; n as usize])
}

/// `iters` triads with a = 2 add `2 * iters * x` to y = 1.
fn verify(x: &[f32], y: &[f32], iters: u32) -> Result<()> {
    for (i, (x, y)) in x.iter().zip(y).enumerate() {
        let want = 1.0 + 2.0 * iters as f32 * x;
        if *y != want {
            bail!("y[{i}] = {y}, expected {want}: the tuned kernel computed a wrong result");
        }
    }
    Ok(())
}

fn origin(o: Origin) -> &'static str {
    match o {
        Origin::Tuned => "tuned now",
        Origin::Database => "stored winner",
        Origin::Embedded => "embedded winner",
        Origin::Default => "default config",
    }
}

fn summary(iters: u32, n: i64, elapsed: Duration) {
    let per = elapsed.as_secs_f64() / iters as f64;
    let gbs = 12.0 * n as f64 / per / 1e9;
    println!("{iters} launches: verified; {:.1} µs per launch ({gbs:.1} GB/s)", per * 1e6);
}

#[cfg(feature = "cuda")]
fn missing_cuda() -> Option<String> {
    match kerntune::cuda_backend::devices() {
        Ok(d) if !d.is_empty() => None,
        Ok(_) => Some("none found".into()),
        Err(e) => Some(e.to_string()),
    }
}

#[cfg(not(feature = "cuda"))]
fn missing_cuda() -> Option<String> {
    Some("built without the `cuda` feature".into())
}

#[cfg(feature = "hip")]
fn missing_hip() -> Option<String> {
    match kerntune::hip_backend::devices() {
        Ok(d) if !d.is_empty() => None,
        Ok(_) => Some("none found".into()),
        Err(e) => Some(e.to_string()),
    }
}

#[cfg(not(feature = "hip"))]
fn missing_hip() -> Option<String> {
    Some("built without the `hip` feature".into())
}

#[cfg(feature = "cuda")]
fn cuda(cli: &Cli) -> Result<()> {
    use kerntune::cuda_backend::cudarc::driver::CudaContext;
    use kerntune::cuda_backend::launch::CudaTunable;
    let ctx = CudaContext::new(0).context("opening CUDA device 0")?;
    println!("backend: cuda ({})", ctx.name().unwrap_or_default());
    let stream = ctx.default_stream();
    let triad = CudaTunable::from_spec(ctx.clone(), &cli.spec)?.policy(cli.policy).embedded(WINNERS);
    for &size in &cli.n {
        let k = triad.kernel(&[size])?;
        println!("triad N={}: {} ({})", size, k.config(), origin(k.origin()));
        let (xh, yh) = inputs(size);
        let x = stream.clone_htod(&xh)?;
        let mut y = stream.clone_htod(&yh)?;
        let n = size as u32;
        k.launch(&stream, (&x, &mut y, 0.0f32, n))?; // warm-up: y += 0
        stream.synchronize()?;
        let t = Instant::now();
        for _ in 0..cli.iters {
            k.launch(&stream, (&x, &mut y, 2.0f32, n))?;
        }
        stream.synchronize()?;
        let elapsed = t.elapsed();
        verify(&xh, &stream.clone_dtoh(&y)?, cli.iters)?;
        summary(cli.iters, size, elapsed);
    }
    Ok(())
}

#[cfg(not(feature = "cuda"))]
fn cuda(_: &Cli) -> Result<()> {
    bail!("--backend cuda: this build has no CUDA backend; rebuild with `--features cuda`")
}

#[cfg(feature = "hip")]
fn hip(cli: &Cli) -> Result<()> {
    use kerntune::hip_backend::hip_sys::hiprt as hip;
    use kerntune::hip_backend::launch::{DeviceBuffer, HipTunable, Stream};
    use std::ffi::c_void;
    let ok = |e: hip::hipError_t, what: &str| if e == hip::hipError_t::hipSuccess { Ok(()) } else { Err(anyhow::anyhow!("{what}: {e:?}")) };
    println!("backend: hip (device 0)");
    let triad = HipTunable::from_spec(0, &cli.spec)?.policy(cli.policy).embedded(WINNERS);
    let stream = Stream::default_stream();
    for &size in &cli.n {
        let k = triad.kernel(&[size])?;
        println!("triad N={}: {} ({})", size, k.config(), origin(k.origin()));
        let (xh, mut yh) = inputs(size);
        let bytes = 4 * size as usize;
        let (mut px, mut py) = (std::ptr::null_mut::<c_void>(), std::ptr::null_mut::<c_void>());
        // SAFETY: plain allocations and copies of `bytes` bytes between buffers of that size.
        unsafe {
            ok(hip::hipMalloc(&mut px, bytes), "allocating x")?;
            ok(hip::hipMalloc(&mut py, bytes), "allocating y")?;
            ok(hip::hipMemcpyHtoD(px, xh.as_ptr() as *mut c_void, bytes), "uploading x")?;
            ok(hip::hipMemcpyHtoD(py, yh.as_ptr() as *mut c_void, bytes), "uploading y")?;
        }
        // SAFETY: both are live allocations of n floats on device 0 until the hipFree below.
        let (x, mut y) = unsafe { (DeviceBuffer::<f32>::from_raw(px, size as usize), DeviceBuffer::<f32>::from_raw(py, size as usize)) };
        let n = size as u32;
        let t = Instant::now();
        for _ in 0..cli.iters {
            k.launch(&stream, (&x, &mut y, 2.0f32, n))?;
        }
        // SAFETY: waits for the launches, then copies y back and frees both buffers.
        unsafe {
            ok(hip::hipDeviceSynchronize(), "running the launches")?;
            let elapsed = t.elapsed();
            ok(hip::hipMemcpyDtoH(yh.as_mut_ptr() as *mut c_void, py, bytes), "reading y")?;
            hip::hipFree(px);
            hip::hipFree(py);
            verify(&xh, &yh, cli.iters)?;
            summary(cli.iters, size, elapsed);
        }
    }
    Ok(())
}

#[cfg(not(feature = "hip"))]
fn hip(_: &Cli) -> Result<()> {
    bail!("--backend hip: this build has no HIP backend; rebuild with `--features hip`")
}

#[cfg(feature = "wgpu")]
fn wgpu(cli: &Cli) -> Result<()> {
    use kerntune::wgpu_backend::launch::WgpuTunable;
    use kerntune::wgpu_backend::wgpu;
    // The adapter kerntune would pick (a GPU first, software Vulkan last); any adapter works.
    let adapter = kerntune::wgpu_backend::best_adapter()
        .context("no wgpu adapter: install a Vulkan driver (mesa-vulkan-drivers gives software Vulkan on any machine)")?;
    let limits = wgpu::Limits { max_storage_buffer_binding_size: adapter.limits().max_storage_buffer_binding_size, ..Default::default() };
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor { required_limits: limits, ..Default::default() }))?;
    println!("backend: wgpu ({}, {:?})", adapter.get_info().name, adapter.get_info().backend);
    let triad = WgpuTunable::from_spec(&adapter, device.clone(), queue.clone(), &cli.spec)?.policy(cli.policy).embedded(WINNERS);
    let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC;
    let upload = |data: &[f32]| {
        let b = device.create_buffer(&wgpu::BufferDescriptor { label: None, size: 4 * data.len() as u64, usage, mapped_at_creation: false });
        queue.write_buffer(&b, 0, &data.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>());
        b
    };
    for &size in &cli.n {
        let k = triad.kernel(&[size])?;
        println!("triad N={}: {} ({})", size, k.config(), origin(k.origin()));
        let (xh, yh) = inputs(size);
        let (x, y) = (upload(&xh), upload(&yh));
        let t = Instant::now();
        for _ in 0..cli.iters {
            k.launch((&x, &y))?;
        }
        device.poll(wgpu::PollType::wait_indefinitely())?;
        let elapsed = t.elapsed();
        // Read y back through a staging buffer.
        let staging = device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: y.size(),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut enc = device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(&y, 0, &staging, 0, y.size());
        queue.submit([enc.finish()]);
        let (tx, rx) = std::sync::mpsc::channel();
        staging.map_async(wgpu::MapMode::Read, .., move |r| {
            let _ = tx.send(r);
        });
        device.poll(wgpu::PollType::wait_indefinitely())?;
        rx.recv().context("mapping y")??;
        let bytes = staging.get_mapped_range(..)?.to_vec();
        let yd: Vec<f32> = bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        verify(&xh, &yd, cli.iters)?;
        summary(cli.iters, size, elapsed);
    }
    Ok(())
}

#[cfg(not(feature = "wgpu"))]
fn wgpu(_: &Cli) -> Result<()> {
    bail!("--backend wgpu: this build has no wgpu backend; rebuild with `--features wgpu`")
}
