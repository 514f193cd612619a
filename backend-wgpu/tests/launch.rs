//! The launch API on a real wgpu device (software Vulkan in CI): tune the shipped triad, launch
//! the winner on the application's own buffers, read the result back; wrong arguments are
//! refused before anything is recorded; embedded winners are used without tuning.

use kerntune_core::testing::skipped_without_device;
use kerntune_core::{Database, EmbeddedWinner, LaunchError, Origin, Policy, TuneOptions};
use kerntune_wgpu::launch::WgpuTunable;
use std::path::Path;

fn device() -> Option<(wgpu::Adapter, wgpu::Device, wgpu::Queue)> {
    let instance = wgpu::Instance::default();
    let adapter = match pollster::block_on(instance.request_adapter(&Default::default())) {
        Ok(a) => a,
        Err(e) => {
            skipped_without_device("wgpu", "wgpu launch API: no adapter", &e);
            return None;
        }
    };
    let (device, queue) = pollster::block_on(adapter.request_device(&Default::default())).expect("a device");
    Some((adapter, device, queue))
}

fn triad_job(n: i64) -> kerntune_core::TuneJob {
    let spec = kerntune_core::plan::prepare::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/triad/triad.toml")).unwrap();
    let mut job = spec.job("wgsl", 0).unwrap();
    job.sizes = vec![("N".into(), kerntune_core::Value::Int(n))];
    job
}

fn buffer(device: &wgpu::Device, queue: &wgpu::Queue, data: &[f32]) -> wgpu::Buffer {
    let b = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 4 * data.len() as u64,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    queue.write_buffer(&b, 0, &data.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>());
    b
}

fn read(device: &wgpu::Device, queue: &wgpu::Queue, b: &wgpu::Buffer) -> Vec<f32> {
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: b.size(),
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut enc = device.create_command_encoder(&Default::default());
    enc.copy_buffer_to_buffer(b, 0, &staging, 0, b.size());
    queue.submit([enc.finish()]);
    staging.map_async(wgpu::MapMode::Read, .., |r| r.expect("mapped"));
    device.poll(wgpu::PollType::wait_indefinitely()).expect("poll");
    let bytes = staging.get_mapped_range(..).expect("map the staging buffer").to_vec();
    staging.unmap();
    bytes.chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
}

#[test]
fn tuned_triad_launches_on_application_buffers() {
    let Some((adapter, device, queue)) = device() else { return };
    let dir = tempfile::tempdir().unwrap();
    let n = 1 << 14;
    let opts = TuneOptions { db: Some(Database::at(dir.path().join("db.json"))), ..Default::default() };
    let triad = WgpuTunable::new(&adapter, device.clone(), queue.clone(), triad_job(n), opts.clone()).unwrap().policy(Policy::Tune);
    let k = triad.kernel(&[n]).unwrap();
    assert_eq!(k.origin(), Origin::Tuned);
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let y0 = vec![1.0f32; n as usize];
    let (xb, yb) = (buffer(&device, &queue, &x), buffer(&device, &queue, &y0));
    for _ in 0..3 {
        k.launch((&xb, &yb)).unwrap();
    }
    let y = read(&device, &queue, &yb);
    // a = 2 is compiled in (the spec's scalar): y = 1 + 3 * 2x.
    assert!(y.iter().zip(&x).all(|(y, x)| (*y - (1.0 + 6.0 * x)).abs() <= 1e-3 * y.abs()), "{:?}", &y[..4]);
    // Recorded into the application's own encoder, next to its own work.
    let mut enc = device.create_command_encoder(&Default::default());
    k.record(&mut enc, (&xb, &yb)).unwrap();
    queue.submit([enc.finish()]);
    assert_eq!(read(&device, &queue, &yb)[1], 1.0 + 8.0);
    // A second application (a new process) finds the stored winner: nothing is tuned.
    let again = WgpuTunable::new(&adapter, device.clone(), queue.clone(), triad_job(n), opts).unwrap().policy(Policy::Stored);
    let k2 = again.kernel(&[n]).unwrap();
    assert_eq!((k2.origin(), k2.config()), (Origin::Database, k.config()));
}

#[test]
fn wrong_arguments_are_refused_before_anything_is_recorded() {
    let Some((adapter, device, queue)) = device() else { return };
    let n = 1024;
    let t = WgpuTunable::new(&adapter, device.clone(), queue.clone(), triad_job(n), TuneOptions::default()).unwrap().policy(Policy::Default);
    let k = t.kernel(&[n]).unwrap();
    let x = buffer(&device, &queue, &vec![1.0; n as usize]);
    let y = buffer(&device, &queue, &vec![0.0; n as usize]);
    let short = buffer(&device, &queue, &[0.0; 100]);
    let e = k.launch((&x,)).unwrap_err().to_string();
    assert_eq!(e, "kernel `triad` takes 2 arguments (x, y), 1 were given");
    let e = k.launch((&x, &short)).unwrap_err().to_string();
    assert_eq!(e, "kernel `triad`, argument 1 (`y`): the buffer holds 400 bytes, the problem needs 4096");
    let uniform = device.create_buffer(&wgpu::BufferDescriptor { label: None, size: 4096, usage: wgpu::BufferUsages::UNIFORM, mapped_at_creation: false });
    let e = k.launch((&x, &uniform)).unwrap_err();
    assert!(matches!(e, LaunchError::Device { .. }) && e.to_string().contains("STORAGE"), "{e}");
    assert!(read(&device, &queue, &y).iter().all(|v| *v == 0.0), "nothing was dispatched");
}

#[test]
fn embedded_winners_are_used_without_tuning() {
    let Some((adapter, device, queue)) = device() else { return };
    let n = 1 << 12;
    // What `kerntune db export --rust` writes for this device, built from a real tune.
    let dir = tempfile::tempdir().unwrap();
    let db = Database::at(dir.path().join("db.json"));
    let t = WgpuTunable::new(&adapter, device.clone(), queue.clone(), triad_job(n), TuneOptions { db: Some(db.clone()), ..Default::default() }).unwrap();
    let tuned = t.kernel(&[n]).unwrap().config();
    let src = kerntune_core::store::export::rust_source(&db.load().unwrap(), Some("triad"), "kerntune");
    let entry = db.load().unwrap().entries.into_values().next().unwrap();
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    let winners: &'static [EmbeddedWinner] = Box::leak(Box::new([EmbeddedWinner {
        kernel: leak(entry.id.kernel.clone()),
        kernel_hash: leak(entry.id.kernel_hash.clone()),
        target: leak(entry.id.target.clone()),
        toolchain: leak(entry.id.toolchain.clone()),
        problem: leak(entry.id.problem.clone()),
        config: leak(entry.winner.unwrap().config),
    }]));
    assert!(src.contains(winners[0].config) && src.contains(winners[0].kernel_hash), "{src}");
    // No database: the embedded winner, never a tune.
    let none = TuneOptions { db: Some(Database::at(dir.path().join("empty.json"))), ..Default::default() };
    let app = WgpuTunable::new(&adapter, device, queue, triad_job(n), none).unwrap().embedded(winners).policy(Policy::Stored);
    let k = app.kernel(&[n]).unwrap();
    assert_eq!((k.origin(), k.config()), (Origin::Embedded, tuned));
    // A size it has no winner for runs the spec's default under the stored-only policy.
    let other = app.kernel(&[n * 2]).unwrap();
    assert_eq!(other.origin(), Origin::Default);
    assert!(!dir.path().join("empty.json").exists(), "nothing was tuned or stored");
}
