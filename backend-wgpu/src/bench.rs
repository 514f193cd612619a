//! Device buffers, launches, timing, read-back, and verification on the device.

use crate::compile::WgpuKernel;
use crate::error::poll_error;
use crate::memory;
use kerntune_core::backend::Notes;
use kerntune_core::measure::memory as core_memory;
use kerntune_core::{Access, ArgData, BackendError, DType, HostBuffer, Launch, ProblemData, TimeRequest, VerifyRequest};
use std::sync::Arc;
use std::time::Instant;

/// A problem's buffers on the device (the workspace of kernels that run in this process).
pub(crate) struct Buffers {
    pub(crate) buffers: Vec<wgpu::Buffer>,
    /// The problem whose buffers these are: their initial contents, shared with the caller
    /// (a problem of gigabytes is not copied for the workspace).
    problem: Arc<ProblemData>,
    /// Each buffer's host-readable copy, made the first time it is read back and kept.
    staging: Vec<Option<wgpu::Buffer>>,
    /// A device copy of the initial contents of each buffer a kernel can write, which
    /// [`reset`] copies back on the device (read-only buffers are bound read-only: no launch
    /// changes them). `None` for a writable buffer the device had no room to copy: [`reset`]
    /// writes it from `initial` instead.
    pristine: Vec<Option<wgpu::Buffer>>,
    /// The fill and comparison shaders, made on first use.
    pub(crate) ops: Option<DeviceOps>,
    /// The reference's outputs the device screens (see [`on_device`]), and the reference id
    /// they belong to.
    pub(crate) reference: Option<(u64, Vec<Option<wgpu::Buffer>>)>,
    /// Each buffer's guard (see [`crate::guard`]): where it starts (the buffer's size padded to
    /// 4 bytes) and its length in bytes (0: none).
    pub(crate) guards: Vec<(u64, u64)>,
    /// The word each buffer's guard holds now ([`fill_word`] but while probing).
    pub(crate) canary: Vec<u32>,
    /// The host-readable copy of the guards of the buffers a kernel can write, made the first
    /// time they are checked and kept.
    pub(crate) guards_read: Option<wgpu::Buffer>,
}

impl Buffers {
    /// How a kernel may use buffer `i`.
    pub(crate) fn access(&self, i: usize) -> Access {
        self.problem.buffers().nth(i).map_or(Access::Read, |b| b.access)
    }

    /// Buffer `i`'s name in the spec.
    pub(crate) fn name(&self, i: usize) -> &str {
        self.problem.buffers().nth(i).map_or("?", |b| b.name.as_str())
    }

    /// Buffer `i`'s size in bytes, as the spec makes it.
    pub(crate) fn len(&self, i: usize) -> usize {
        self.problem.buffers().nth(i).map_or(0, |b| b.data.len())
    }

    /// Buffer `i` as binding `i` of a kernel: whole, its guard with it, or without the guard
    /// where the kernel asks its length (`sized`, see [`crate::compile::lengths_asked`]).
    pub(crate) fn binding(&self, i: usize, sized: bool) -> wgpu::BindingResource<'_> {
        let (data, guard) = self.guards[i];
        if sized && guard > 0 {
            return wgpu::BindingResource::Buffer(wgpu::BufferBinding { buffer: &self.buffers[i], offset: 0, size: wgpu::BufferSize::new(data) });
        }
        self.buffers[i].as_entire_binding()
    }
}

impl Drop for Buffers {
    /// After a launch in this process that never ended, the device objects are left
    /// undestroyed (see `device::leave_undestroyed`).
    fn drop(&mut self) {
        if crate::device::launch_never_ended() {
            crate::device::leave_undestroyed((
                std::mem::take(&mut self.buffers),
                std::mem::take(&mut self.staging),
                std::mem::take(&mut self.pristine),
                self.ops.take(),
                self.reference.take(),
                self.guards_read.take(),
            ));
        }
    }
}

/// A problem of only `buffers` (a workspace made in code: the clock guard's, tests').
pub(crate) fn buffers_only(buffers: Vec<HostBuffer>) -> Arc<ProblemData> {
    Arc::new(ProblemData { args: buffers.into_iter().map(ArgData::Buffer).collect() })
}

/// Buffer size: at least 4 bytes, a multiple of 4 (wgpu's copy alignment).
fn padded(len: usize) -> u64 {
    (len.max(4) as u64).div_ceil(4) * 4
}

// The guard words after each buffer (see `crate::guard`).

/// The word the guard of a read-only buffer holds while tuning: a quiet NaN for an f32 read, a
/// large number for an integer one.
pub(crate) const FILL: u32 = 0x7FC5_A5A5;
/// The word the guard of a buffer a kernel can write holds while tuning: a finite f32 near its
/// largest (3.4e38), a large number for an integer read. Not a NaN: a kernel that updates a
/// buffer in place past its end (`y[i] = a * x[i] + y[i]` without a bounds check) computes a
/// NaN from NaNs, which on a CPU keeps the first one's bits, and so wrote [`FILL`] back where it
/// stood: the write went unseen. From this word any arithmetic moves it (to a NaN, infinity or
/// another number).
pub(crate) const FILL_WRITABLE: u32 = 0x7F7F_A5A5;

/// The word a buffer's guard holds while tuning ([`FILL`] or [`FILL_WRITABLE`]).
pub(crate) fn fill_word(access: Access) -> u32 {
    if access == Access::Read {
        FILL
    } else {
        FILL_WRITABLE
    }
}
/// The guard after a buffer of `data` bytes (already padded to 4) on a device that binds at
/// most `max_binding` bytes: a sixteenth of it, at least 256 bytes and at most 64 KiB, a
/// multiple of 4, less where the binding limit leaves less (none for a buffer at the limit).
pub(crate) fn guard_bytes(data: u64, max_binding: u64) -> u64 {
    let want = (data / 16).clamp(256, 64 << 10).next_multiple_of(4);
    want.min(max_binding.saturating_sub(data) / 4 * 4)
}

/// Fills the guard of buffer `i` with its word ([`Buffers::canary`]), from the host: the write
/// lands before the next submission's commands.
pub(crate) fn fill(queue: &wgpu::Queue, ws: &Buffers, i: usize) {
    fill_with(queue, &ws.buffers[i], ws.guards[i], ws.canary[i]);
}

/// Fills the guard `(at, len)` of `buf` with `word`, from the host.
pub(crate) fn fill_with(queue: &wgpu::Queue, buf: &wgpu::Buffer, (at, len): (u64, u64), word: u32) {
    if len > 0 {
        let words: Vec<u8> = std::iter::repeat_n(word.to_le_bytes(), (len / 4) as usize).flatten().collect();
        queue.write_buffer(buf, at, &words);
    }
}

/// How much a write from the host puts in one staging buffer: wgpu stages each write in a
/// buffer of its size (on a discrete GPU often in device memory the host can see), so a
/// buffer of gigabytes is written in pieces, at most two staged at once, and a problem that
/// fits the device once is not refused for its staging.
const WRITE_CHUNK: usize = 64 << 20;

/// Makes the device buffers of a problem and writes their initial contents. On a device
/// without room for them the error is [`BackendError::ProblemTooLarge`], with what they need
/// and, where the adapter says ([`memory::device_memory`]), what it has free. Each writable
/// buffer gets a device copy of its initial contents while the device keeps
/// [`kerntune_core::measure::memory::reserve`] free (or, where it does not say, while its
/// allocations succeed); a buffer without one is restored from the host, and `notes` says so.
pub(crate) fn create_workspace(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    problem: Arc<ProblemData>,
    adapter: &str,
    notes: &Notes,
) -> Result<Buffers, BackendError> {
    let bufs: Vec<&HostBuffer> = problem.buffers().collect();
    // Each buffer with its guard after it (see `crate::guard`).
    let max_binding = device.limits().max_storage_buffer_binding_size.min(device.limits().max_buffer_size);
    let guards: Vec<(u64, u64)> = bufs.iter().map(|b| (padded(b.data.len()), guard_bytes(padded(b.data.len()), max_binding))).collect();
    // Buffer `i`, with its guard or (a pristine copy: every reset fills the guard) without.
    let make = |i: usize, guarded: bool| {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(&bufs[i].name),
            size: guards[i].0 + if guarded { guards[i].1 } else { 0 },
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    };
    // As the messages name them (the spec's sizes); the guards count too.
    let sizes: Vec<(&str, usize)> = bufs.iter().zip(&guards).map(|(b, g)| (b.name.as_str(), g.0 as usize)).collect();
    let need: usize = guards.iter().map(|g| (g.0 + g.1) as usize).sum();
    let before = memory::device_memory(device);
    tracing::debug!(?before, need, "device memory (free, total) before the workspace");
    let too_large = || {
        BackendError::ProblemTooLarge(match before {
            Some((free, total)) => core_memory::does_not_fit(&sizes, free, total),
            None => memory::no_memory(&sizes, adapter),
        })
    };
    if before.is_some_and(|(free, _)| need > free) {
        return Err(too_large());
    }
    let buffers: Vec<wgpu::Buffer> = memory::try_alloc(device, || (0..bufs.len()).map(|i| make(i, true)).collect()).ok_or_else(too_large)?;
    for ((b, buf), &guard) in bufs.iter().zip(&buffers).zip(&guards) {
        write_padded(device, queue, buf, &b.data)?.ok_or_else(too_large)?;
        fill_with(queue, buf, guard, fill_word(b.access));
    }
    let canary: Vec<u32> = bufs.iter().map(|b| fill_word(b.access)).collect();
    // A writable buffer's pristine copy is copied from it on the device (the queue's writes
    // land before the submission that follows them), largest first while there is room.
    let mut pristine: Vec<Option<wgpu::Buffer>> = bufs.iter().map(|_| None).collect();
    let mut enc = device.create_command_encoder(&Default::default());
    let writable: Vec<(&str, usize)> =
        bufs.iter().zip(&guards).map(|(b, g)| (b.name.as_str(), if b.access == Access::Read { 0 } else { g.0 as usize })).collect();
    let copy = |i: usize| -> Result<bool, BackendError> {
        let Some(copy) = memory::try_alloc(device, || make(i, false)) else { return Ok(false) };
        enc.copy_buffer_to_buffer(&buffers[i], 0, &copy, 0, copy.size());
        pristine[i] = Some(copy);
        Ok(true)
    };
    let after = memory::device_memory(device);
    tracing::debug!(?after, "device memory (free, total) after the problem's buffers");
    let note = core_memory::make_copies(&writable, after, 0, copy)?;
    queue.submit([enc.finish()]);
    if let Some(note) = note {
        notes.note(note);
    }
    let staging = bufs.iter().map(|_| None).collect();
    Ok(Buffers { buffers, staging, pristine, problem, ops: None, reference: None, guards, canary, guards_read: None })
}

/// Uploads a host buffer to a new device buffer (its exact size, at least 4 bytes): `None`
/// when the device has no room for it (the reference output is then compared on the host).
pub(crate) fn upload(device: &wgpu::Device, queue: &wgpu::Queue, data: &[u8]) -> Result<Option<wgpu::Buffer>, BackendError> {
    if core_memory::copies_disabled()
        || memory::device_memory(device).is_some_and(|(free, total)| !core_memory::fits(data.len(), free, core_memory::reserve(total, 0)))
    {
        return Ok(None);
    }
    let Some(buf) = memory::try_alloc(device, || {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("kerntune reference"),
            size: padded(data.len()),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }) else {
        return Ok(None);
    };
    Ok(write_padded(device, queue, &buf, data)?.map(|()| buf))
}

/// Writes `data` (padded with zeros to a multiple of 4 bytes) to the start of `buf`, in pieces
/// of [`WRITE_CHUNK`]: `None` when the device had no memory to stage a piece.
fn write_padded(device: &wgpu::Device, queue: &wgpu::Queue, buf: &wgpu::Buffer, data: &[u8]) -> Result<Option<()>, BackendError> {
    let mut tail = Vec::new();
    let whole = data.len() / 4 * 4;
    if whole < data.len() || data.is_empty() {
        tail = data[whole..].to_vec();
        tail.resize(4, 0);
    }
    let pieces = data[..whole].chunks(WRITE_CHUNK).chain((!tail.is_empty()).then_some(&tail[..]));
    let mut offset = 0u64;
    // Two pieces in flight: the host fills one piece's staging buffer while the device copies
    // the previous one; a piece's staging buffer is freed once its copy is done.
    let mut in_flight = std::collections::VecDeque::with_capacity(2);
    for piece in pieces {
        if in_flight.len() == 2 {
            wait(device, in_flight.pop_front().expect("two in flight"), std::time::Duration::from_secs(60))?;
        }
        if memory::try_alloc(device, || queue.write_buffer(buf, offset, piece)).is_none() {
            return Ok(None);
        }
        in_flight.push_back(queue.submit([]));
        offset += piece.len() as u64;
    }
    Ok(Some(()))
}

/// Restores the buffers a kernel can write to their initial contents, or poisons the
/// write-only ones (`poison`: all bits set), on the device. Read-only arguments are bound
/// read-only (see [`crate::compile::pipeline_layout`]): no launch can change them, so they are
/// not touched (for a matmul, two of its three buffers).
pub(crate) fn reset(device: &wgpu::Device, queue: &wgpu::Queue, ws: &mut Buffers, poison: bool) -> Result<(), BackendError> {
    let ops = if poison { Some(ws.ops.get_or_insert_with(|| DeviceOps::new(device))) } else { None };
    let mut enc = device.create_command_encoder(&Default::default());
    for (((buf, init), pristine), &(size, _)) in ws.buffers.iter().zip(ws.problem.buffers()).zip(&ws.pristine).zip(&ws.guards) {
        match (init.access, &ops, pristine) {
            (Access::Write, Some(ops), _) => ops.record_poison(device, &mut enc, buf, size),
            (_, _, Some(p)) => enc.copy_buffer_to_buffer(p, 0, buf, 0, p.size()),
            (Access::Read, _, None) => {}
            // No room for a device copy: written from the host (before the submission below).
            (_, _, None) => {
                write_padded(device, queue, buf, &init.data)?
                    .ok_or_else(|| BackendError::other(format!("out of device memory restoring {} from the host", init.name)))?;
            }
        }
    }
    // The copies and fills cover each buffer's data, not the guard after it: a guard a launch
    // wrote is filled again where that is found (see `crate::guard::damage`).
    queue.submit([enc.finish()]);
    Ok(())
}

/// The data of every buffer a kernel can write, read back (the others empty): what
/// [`crate::guard::probe`] compares between launches.
pub(crate) fn outputs(device: &wgpu::Device, queue: &wgpu::Queue, ws: &mut Buffers) -> Result<Vec<Vec<u8>>, BackendError> {
    let writable: Vec<bool> = (0..ws.buffers.len()).map(|i| ws.access(i) != Access::Read).collect();
    Ok(read_selected(device, queue, ws, |i| writable[i])?.into_iter().map(|b| b.data).collect())
}

fn wait(device: &wgpu::Device, idx: wgpu::SubmissionIndex, timeout: std::time::Duration) -> Result<(), BackendError> {
    poll(device, Some(idx), timeout)
}

/// Waits for the device (up to submission `idx`, or all of it) until `timeout` of the time
/// awake has passed, a quarter of a second at a time: a worker stopped (Ctrl-Z, a suspended job)
/// while a kernel ran found its one wait's deadline passed when it went on, and failed the
/// kernel as timed out (see [`kerntune_core::measure::awake`]).
fn poll(device: &wgpu::Device, idx: Option<wgpu::SubmissionIndex>, timeout: std::time::Duration) -> Result<(), BackendError> {
    let since = kerntune_core::measure::awake::Since::now();
    loop {
        let slice = timeout.saturating_sub(since.elapsed()).min(std::time::Duration::from_millis(250));
        match device.poll(wgpu::PollType::Wait { submission_index: idx.clone(), timeout: Some(slice) }) {
            Err(wgpu::PollError::Timeout) if since.elapsed() < timeout => continue,
            r => return r.map(drop).map_err(|e| poll_error(e, timeout)),
        }
    }
}

pub(crate) fn read_buffer(device: &wgpu::Device, buf: &wgpu::Buffer, timeout: std::time::Duration) -> Result<Vec<u8>, BackendError> {
    let (tx, rx) = std::sync::mpsc::channel();
    buf.map_async(wgpu::MapMode::Read, .., move |r| {
        let _ = tx.send(r);
    });
    poll(device, None, timeout)?;
    match rx.recv() {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(BackendError::other(e)),
        Err(_) => return Err(BackendError::DeviceLost("mapping callback never ran".into())),
    }
    let data = buf.get_mapped_range(..).map_err(|e| BackendError::other(e.to_string()))?.to_vec();
    buf.unmap();
    Ok(data)
}

pub(crate) struct Timer<'a> {
    pub device: &'a wgpu::Device,
    pub queue: &'a wgpu::Queue,
    pub timestamps: bool,
    pub period_ns: f64,
}

impl Timer<'_> {
    fn encode(&self, enc: &mut wgpu::CommandEncoder, k: &WgpuKernel, bg: &wgpu::BindGroup, launch: &Launch, ts: Option<(&wgpu::QuerySet, u32)>) {
        let timestamp_writes = ts.map(|(qs, i)| wgpu::ComputePassTimestampWrites {
            query_set: qs,
            beginning_of_pass_write_index: Some(2 * i),
            end_of_pass_write_index: Some(2 * i + 1),
        });
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: None, timestamp_writes });
        pass.set_pipeline(&k.pipeline);
        pass.set_bind_group(0, bg, &[]);
        pass.dispatch_workgroups(launch.grid[0], launch.grid[1], launch.grid[2]);
    }

    /// Times `req.launches` launches. Launches during which this process was stopped (Ctrl-Z, a
    /// suspended job) are timed again, up to twice: on a software device the kernels run on
    /// this process's threads, and the timestamps around a stopped one hold the stop (a 740 ms
    /// ± 1,388 ms config won a tune of 60 ms ones so).
    pub fn time(&self, ws: &Buffers, k: &WgpuKernel, launch: &Launch, req: &TimeRequest) -> Result<Vec<f64>, BackendError> {
        let mut tries = 0;
        loop {
            let since = kerntune_core::measure::awake::Since::now();
            let times = self.time_once(ws, k, launch, req)?;
            tries += 1;
            if since.stopped().is_zero() || tries == 3 {
                return Ok(times);
            }
        }
    }

    fn time_once(&self, ws: &Buffers, k: &WgpuKernel, launch: &Launch, req: &TimeRequest) -> Result<Vec<f64>, BackendError> {
        let layout = k.pipeline.get_bind_group_layout(0);
        let entries: Vec<wgpu::BindGroupEntry<'_>> = (0..ws.buffers.len())
            .map(|i| wgpu::BindGroupEntry { binding: i as u32, resource: ws.binding(i, k.lengths.get(i).copied().unwrap_or(true)) })
            .collect();
        let bg = self.device.create_bind_group(&wgpu::BindGroupDescriptor { label: None, layout: &layout, entries: &entries });
        let mut out = Vec::with_capacity(req.launches as usize);
        if !self.timestamps {
            for _ in 0..req.launches {
                let mut enc = self.device.create_command_encoder(&Default::default());
                self.encode(&mut enc, k, &bg, launch, None);
                let t = Instant::now();
                let idx = self.queue.submit([enc.finish()]);
                wait(self.device, idx, req.timeout)?;
                out.push(t.elapsed().as_secs_f64());
            }
            return Ok(out);
        }
        let mut left = req.launches;
        while left > 0 {
            let n = left.min(1024);
            left -= n;
            let qs = self.device.create_query_set(&wgpu::QuerySetDescriptor { label: None, ty: wgpu::QueryType::Timestamp, count: 2 * n });
            let size = 16 * n as u64;
            let resolve = self.device.create_buffer(&wgpu::BufferDescriptor {
                label: None,
                size,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            let read = self.device.create_buffer(&wgpu::BufferDescriptor {
                label: None,
                size,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            let mut enc = self.device.create_command_encoder(&Default::default());
            for i in 0..n {
                self.encode(&mut enc, k, &bg, launch, Some((&qs, i)));
            }
            enc.resolve_query_set(&qs, 0..2 * n, &resolve, 0);
            enc.copy_buffer_to_buffer(&resolve, 0, &read, 0, size);
            let idx = self.queue.submit([enc.finish()]);
            wait(self.device, idx, req.timeout * n)?;
            let bytes = read_buffer(self.device, &read, req.timeout)?;
            for i in 0..n as usize {
                let t0 = u64::from_le_bytes(bytes[16 * i..16 * i + 8].try_into().expect("8 bytes"));
                let t1 = u64::from_le_bytes(bytes[16 * i + 8..16 * i + 16].try_into().expect("8 bytes"));
                out.push(t1.saturating_sub(t0) as f64 * self.period_ns * 1e-9);
            }
        }
        Ok(out)
    }

    /// Reads back the buffers `wanted` selects (see [`kerntune_core::Backend::read_outputs`]).
    pub fn read_outputs(&self, ws: &mut Buffers, wanted: &[bool]) -> Result<Vec<HostBuffer>, BackendError> {
        read_selected(self.device, self.queue, ws, |i| wanted.get(i).copied().unwrap_or(false))
    }
}

/// Reads back the buffers whose index `wanted` selects, in argument order; the others come back
/// empty.
fn read_selected(device: &wgpu::Device, queue: &wgpu::Queue, ws: &mut Buffers, wanted: impl Fn(usize) -> bool) -> Result<Vec<HostBuffer>, BackendError> {
    let mut enc = device.create_command_encoder(&Default::default());
    let picked: Vec<bool> = (0..ws.buffers.len()).map(&wanted).collect();
    // The data without the guard after it.
    for (i, s) in ws.staging.iter_mut().enumerate().filter(|(i, _)| picked[*i]) {
        let (b, size) = (&ws.buffers[i], ws.guards[i].0);
        let s = s.get_or_insert_with(|| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: None,
                size,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        });
        enc.copy_buffer_to_buffer(b, 0, s, 0, size);
    }
    let idx = queue.submit([enc.finish()]);
    wait(device, idx, std::time::Duration::from_secs(60))?;
    let mut out = Vec::with_capacity(ws.buffers.len());
    for ((s, init), p) in ws.staging.iter().zip(ws.problem.buffers()).zip(picked) {
        let data = match s {
            Some(s) if p => {
                let mut data = read_buffer(device, s, std::time::Duration::from_secs(60))?;
                data.truncate(init.data.len());
                data
            }
            _ => Vec::new(),
        };
        out.push(HostBuffer { data, ..init.described() });
    }
    Ok(out)
}

// Verification on the device: outputs poisoned by a fill shader, restored from copies kept on
// the device, and outputs compared with the reference by a comparison shader, so that a
// verification moves a few bytes between host and device instead of every output twice.
//
// The comparison is a screen, never the verdict on a mismatch: WGSL has no f64, so for f32
// outputs it counts the elements it cannot *prove* within tolerance in f32 (with a margin that
// covers f32's rounding, and treating infinities, NaNs against numbers, flushed denormals and a
// zero tolerance as unproven); for integer and f64 outputs, every element whose bits differ
// from the reference's (and for f64 every infinity and NaN). Zero means every element passes
// core's rule (`kerntune_core::measure::verify::compare`, in f64); anything else reads that
// output back and lets core's comparison decide and describe it, so verdicts and messages are
// the host's.

/// Threads per workgroup of the verification shaders; each strides over the buffer.
const THREADS: u32 = 256;
/// Most workgroups a dispatch uses (the shaders stride over larger buffers).
const MAX_GROUPS: u32 = 4096;

const FILL_WGSL: &str = r#"
@group(0) @binding(0) var<storage, read_write> buf: array<u32>;
@compute @workgroup_size(256)
fn fill(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let n = arrayLength(&buf);
    let stride = groups.x * 256u;
    for (var i = g.x; i < n; i += stride) {
        buf[i] = 0xFFFFFFFFu;
    }
}
"#;

/// Counts the elements of `got` not proven within `atol + rtol * |want|` of `want` (see the
/// section's comment above). `tol` holds atol and rtol as f32.
const COMPARE_WGSL: &str = r#"
@group(0) @binding(0) var<storage, read> got: array<u32>;
@group(0) @binding(1) var<storage, read> want: array<u32>;
@group(0) @binding(2) var<storage, read> tol: array<f32, 2>;
@group(0) @binding(3) var<storage, read_write> unproven: atomic<u32>;

fn is_nan(b: u32) -> bool { return (b & 0x7F800000u) == 0x7F800000u && (b & 0x007FFFFFu) != 0u; }
fn is_finite(b: u32) -> bool { return (b & 0x7F800000u) != 0x7F800000u; }

@compute @workgroup_size(256)
fn compare(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let n = arrayLength(&want);
    let stride = groups.x * 256u;
    let smallest_normal = bitcast<f32>(0x00800000u);
    var count = 0u;
    for (var i = g.x; i < n; i += stride) {
        let gb = got[i];
        let wb = want[i];
        // Both NaN: equal by core's rule.
        if (is_nan(gb) && is_nan(wb)) { continue; }
        // Infinities (core calls even two equal ones different) and NaN against a number.
        if (!is_finite(gb) || !is_finite(wb)) { count += 1u; continue; }
        // The same bits of a finite value: the difference is zero, within any tolerance.
        if (gb == wb) { continue; }
        let gf = bitcast<f32>(gb);
        let wf = bitcast<f32>(wb);
        let d = abs(gf - wf);
        let t = (tol[0] + tol[1] * abs(wf)) * 0.99998;
        // d == 0 from different bits: +0 against -0, or a difference flushed to zero; t below
        // the smallest normal: its rounding is not bounded relatively. The host decides those.
        if (!(d <= t) || d == 0.0 || !(t >= smallest_normal) || !is_finite(bitcast<u32>(t))) {
            count += 1u;
        }
    }
    if (count > 0u) {
        atomicAdd(&unproven, count);
    }
}
"#;

/// Counts the elements of `got` whose bits are not those of `want`'s: `shape[0]` words (of 32
/// bits) an element, and with `shape[1]` = 1 the elements are f64, whose infinities and NaNs
/// count too (core calls two equal infinities different, and two NaNs equal: the host decides).
/// Equal bits of an integer or a finite f64 are a zero difference, within any tolerance.
const COMPARE_BITS_WGSL: &str = r#"
@group(0) @binding(0) var<storage, read> got: array<u32>;
@group(0) @binding(1) var<storage, read> want: array<u32>;
@group(0) @binding(2) var<storage, read> shape: array<u32, 2>;
@group(0) @binding(3) var<storage, read_write> unproven: atomic<u32>;

@compute @workgroup_size(256)
fn compare_bits(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let words = shape[0];
    let n = arrayLength(&want) / words;
    let stride = groups.x * 256u;
    var count = 0u;
    for (var i = g.x; i < n; i += stride) {
        var same = true;
        for (var w = 0u; w < words; w += 1u) {
            same = same && got[i * words + w] == want[i * words + w];
        }
        let high = want[i * words + words - 1u];
        if (!same || (shape[1] == 1u && (high & 0x7FF00000u) == 0x7FF00000u)) {
            count += 1u;
        }
    }
    if (count > 0u) {
        atomicAdd(&unproven, count);
    }
}
"#;

/// The shaders and the small buffers a device's verifications share, made on first use.
pub(crate) struct DeviceOps {
    fill: wgpu::ComputePipeline,
    compare: wgpu::ComputePipeline,
    /// The comparison of bits (integer and f64 outputs), made the first time one is compared.
    compare_bits: Option<wgpu::ComputePipeline>,
    tol: wgpu::Buffer,
    /// `COMPARE_BITS_WGSL`'s shape.
    shape: wgpu::Buffer,
    counter: wgpu::Buffer,
    counter_read: wgpu::Buffer,
}

impl DeviceOps {
    pub(crate) fn new(device: &wgpu::Device) -> DeviceOps {
        let pipeline = |src: &str, entry: &str| verification_pipeline(device, src, entry);
        let buffer = |size: u64, usage: wgpu::BufferUsages| {
            device.create_buffer(&wgpu::BufferDescriptor { label: Some("kerntune verify"), size, usage, mapped_at_creation: false })
        };
        DeviceOps {
            fill: pipeline(FILL_WGSL, "fill"),
            compare: pipeline(COMPARE_WGSL, "compare"),
            compare_bits: None,
            tol: buffer(8, wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST),
            shape: buffer(8, wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST),
            counter: buffer(4, wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST),
            counter_read: buffer(4, wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST),
        }
    }

    /// Records a dispatch of the fill shader over the first `size` bytes of `buf` (all bits
    /// set: NaN for f32): a buffer's data, not the guard after it.
    pub(crate) fn record_poison(&self, device: &wgpu::Device, enc: &mut wgpu::CommandEncoder, buf: &wgpu::Buffer, size: u64) {
        let bg = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &self.fill.get_bind_group_layout(0),
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding { buffer: buf, offset: 0, size: wgpu::BufferSize::new(size) }),
            }],
        });
        let mut pass = enc.begin_compute_pass(&Default::default());
        pass.set_pipeline(&self.fill);
        pass.set_bind_group(0, &bg, &[]);
        pass.dispatch_workgroups(groups(size / 4), 1, 1);
    }

    /// How many of `want`'s elements `got` is not proven within `tol` of: f32 outputs by the
    /// f32 screen, the others by their bits (see the section's comment above). A screen that
    /// wgpu refused (an invalid buffer, no memory) proves nothing: `u32::MAX`, so the output is
    /// compared on the host (its counter, never written, would read as a pass).
    fn unproven(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        got: &wgpu::Buffer,
        want: &wgpu::Buffer,
        dtype: DType,
        tol: kerntune_core::spec::job::Tolerance,
    ) -> Result<u32, BackendError> {
        let (pipeline, params) = if dtype == DType::F32 {
            let t = [tol.atol as f32, tol.rtol as f32];
            queue.write_buffer(&self.tol, 0, &t.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>());
            (&self.compare, &self.tol)
        } else {
            let shape = [(dtype.size() / 4) as u32, u32::from(dtype == DType::F64)];
            queue.write_buffer(&self.shape, 0, &shape.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>());
            (&*self.compare_bits.get_or_insert_with(|| verification_pipeline(device, COMPARE_BITS_WGSL, "compare_bits")), &self.shape)
        };
        let refused = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let no_memory = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let bg = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry { binding: 0, resource: got.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 1, resource: want.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 2, resource: params.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 3, resource: self.counter.as_entire_binding() },
            ],
        });
        let mut enc = device.create_command_encoder(&Default::default());
        enc.clear_buffer(&self.counter, 0, None);
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, &bg, &[]);
            pass.dispatch_workgroups(groups(want.size() / dtype.size().max(4) as u64), 1, 1);
        }
        enc.copy_buffer_to_buffer(&self.counter, 0, &self.counter_read, 0, 4);
        queue.submit([enc.finish()]);
        let bytes = read_buffer(device, &self.counter_read, std::time::Duration::from_secs(60))?;
        let no_memory = pollster::block_on(no_memory.pop());
        if let Some(e) = no_memory.or(pollster::block_on(refused.pop())) {
            tracing::warn!("the device screen of an output failed, so it is compared on the host: {e}");
            return Ok(u32::MAX);
        }
        Ok(u32::from_le_bytes(bytes[..4].try_into().expect("4 bytes")))
    }
}

/// One of the verification shaders' pipelines.
fn verification_pipeline(device: &wgpu::Device, src: &str, entry: &str) -> wgpu::ComputePipeline {
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor { label: Some("kerntune verify"), source: wgpu::ShaderSource::Wgsl(src.into()) });
    device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(entry),
        layout: None,
        module: &module,
        entry_point: Some(entry),
        compilation_options: Default::default(),
        cache: None,
    })
}

/// Workgroups for `n` elements.
fn groups(n: u64) -> u32 {
    n.div_ceil(THREADS as u64).clamp(1, MAX_GROUPS as u64) as u32
}

/// Compares the selected outputs in `ws` with `req`'s reference: each screened on the device
/// (the reference uploaded once per reference id), and any the screen could not pass read back
/// and compared by core's rule.
pub(crate) fn check(device: &wgpu::Device, queue: &wgpu::Queue, ws: &mut Buffers, req: &VerifyRequest<'_>, notes: &Notes) -> Result<(), BackendError> {
    let ops = ws.ops.get_or_insert_with(|| DeviceOps::new(device));
    if !matches!(&ws.reference, Some((id, _)) if *id == req.reference_id) {
        let mut refs = Vec::with_capacity(req.reference.len());
        for want in req.reference {
            let screened = req.selects(want) && !req.on_host(&want.name) && on_device(want);
            let buf = if screened { upload(device, queue, &want.data)? } else { None };
            if buf.is_none() && screened {
                notes.note(core_memory::compared_on_host(&want.name, want.data.len()));
            }
            refs.push(buf);
        }
        ws.reference = Some((req.reference_id, refs));
    }
    let refs = ws.reference.as_ref().map_or(&[][..], |(_, r)| r);
    let mut to_host: Vec<usize> = Vec::new();
    for (i, want) in req.reference.iter().enumerate().filter(|(_, w)| req.selects(w)) {
        let tol = req.tolerance_for(&want.name);
        // A screen proves elements within a tolerance of at least zero (a spec's always is);
        // any other is the host's to judge.
        let screenable = kerntune_core::spec::job::check_tolerance(&tol).is_ok();
        match refs.get(i).and_then(Option::as_ref).filter(|_| !req.on_host(&want.name)) {
            Some(r) if screenable && ops.unproven(device, queue, &ws.buffers[i], r, want.dtype, tol)? == 0 => {}
            _ => to_host.push(i),
        }
    }
    if to_host.is_empty() {
        return Ok(());
    }
    let outs = read_selected(device, queue, ws, |i| to_host.contains(&i))?;
    for i in to_host {
        req.compare_output(&outs[i], &req.reference[i])?;
    }
    Ok(())
}

/// Whether an output can be screened on the device: any that is not empty and fills whole
/// elements of 32-bit words.
pub(crate) fn on_device(want: &HostBuffer) -> bool {
    let size = want.dtype.size();
    size.is_multiple_of(4) && !want.data.is_empty() && want.data.len().is_multiple_of(size)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kerntune_core::spec::job::Tolerance;
    use kerntune_core::DType;
    use kerntune_core::{Access, Memory};

    #[test]
    fn a_guard_is_a_sixteenth_within_its_bounds_and_the_binding_limit() {
        assert_eq!(guard_bytes(4, 1 << 30), 256);
        assert_eq!(guard_bytes(16 << 10, 1 << 30), 1 << 10);
        assert_eq!(guard_bytes(1 << 30, 2 << 30), 64 << 10);
        // A multiple of 4 from an odd sixteenth.
        assert_eq!(guard_bytes(4100 * 4, 1 << 30) % 4, 0);
        // The binding limit leaves less, or none.
        assert_eq!(guard_bytes(1000, 1100), 100);
        assert_eq!(guard_bytes(1 << 20, 1 << 20), 0);
        assert_eq!(guard_bytes(1 << 20, 1000), 0);
    }

    fn f32_buffer(name: &str, v: &[f32], access: Access) -> HostBuffer {
        HostBuffer { name: name.into(), dtype: DType::F32, data: v.iter().flat_map(|x| x.to_le_bytes()).collect(), access, memory: Memory::Global }
    }

    /// A tiny generator (no dependency for one test): xorshift64*.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        fn pick<T: Copy>(&mut self, v: &[T]) -> T {
            v[(self.next() % v.len() as u64) as usize]
        }
    }

    /// `check`'s verdict on `ws` (reference `id`, tolerance `tol`, the named `outputs` or every
    /// writable one) and core's host comparison of `got` with the reference's output of its
    /// name, each as the message a tune would show.
    fn verdicts(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        ws: &mut Buffers,
        reference: &[HostBuffer],
        outputs: &[String],
        (id, tol): (u64, Tolerance),
        got: &HostBuffer,
    ) -> (Result<(), String>, Result<(), String>) {
        let req = VerifyRequest {
            reference,
            reference_id: id,
            outputs,
            tolerance: tol,
            per_output: &[],
            compare: &[],
            mismatches: &[],
            timeout: std::time::Duration::from_secs(60),
        };
        let on_device = check(device, queue, ws, &req, &Notes::default()).map_err(|e| e.to_string());
        let want = reference.iter().find(|w| w.name == got.name).expect("the output is in the reference");
        // The host's verdict as a backend without a screen gives it (element by element, with
        // the note that the output agrees sorted when it does).
        let on_host = req.compare_output(got, want).map_err(|e| e.to_string());
        (on_device, on_host)
    }

    /// A buffer larger than one staging piece is written whole, its odd tail padded; a writable
    /// buffer without a device copy (no room for one) is restored from the host by `reset`.
    #[test]
    fn large_writes_and_restores_from_the_host_keep_the_data() {
        let Some(adapter) = crate::best_adapter() else {
            kerntune_core::testing::skipped("wgpu workspace: no adapter");
            return;
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&Default::default())).expect("a device");
        // Two pieces.
        let data: Vec<u8> = (0..WRITE_CHUNK + 4 * 1000).map(|i| (i * 7 % 251) as u8).collect();
        let buf = |access| HostBuffer { name: "y".into(), dtype: DType::I32, data: data.clone(), access, memory: Memory::Global };
        let notes = Notes::default();
        let problem = buffers_only(vec![buf(Access::ReadWrite)]);
        let mut ws = create_workspace(&device, &queue, problem.clone(), "test", &notes).unwrap();
        // The host copy it restores from is the caller's problem, not a copy of gigabytes.
        assert!(Arc::ptr_eq(&ws.problem, &problem));
        let read = |ws: &mut Buffers| read_selected(&device, &queue, ws, |_| true).unwrap().remove(0).data;
        assert!(read(&mut ws) == data, "written in pieces, read back the same");
        assert!(ws.pristine[0].is_some() && notes.take().is_empty(), "a copy made, nothing noted");
        // Without the copy, as on a full device: a kernel's write is undone from the host.
        ws.pristine[0] = None;
        queue.write_buffer(&ws.buffers[0], 8, &[0xAB; 16]);
        queue.submit([]);
        assert!(read(&mut ws) != data);
        reset(&device, &queue, &mut ws, false).unwrap();
        assert!(read(&mut ws) == data, "restored from the host");
        // A reference uploaded in pieces compares equal on the device.
        let reference = [buf(Access::ReadWrite)];
        let req = VerifyRequest {
            reference: &reference,
            reference_id: 1,
            outputs: &[],
            tolerance: Default::default(),
            per_output: &[],
            compare: &[],
            mismatches: &[],
            timeout: std::time::Duration::from_secs(60),
        };
        check(&device, &queue, &mut ws, &req, &notes).unwrap();
        assert!(ws.reference.as_ref().is_some_and(|r| r.1[0].is_some()) && notes.take().is_empty(), "the reference is on the device");
        // A screen wgpu refuses (here a destroyed reference) proves nothing.
        let (ops, refs) = (ws.ops.as_mut().expect("made by check"), &ws.reference.as_ref().expect("uploaded").1);
        let want = refs[0].as_ref().expect("on the device");
        want.destroy();
        assert_eq!(ops.unproven(&device, &queue, &ws.buffers[0], want, DType::I32, Default::default()).unwrap(), u32::MAX);
        ws.reference = None;
        // An odd length ends in a padded word.
        write_padded(&device, &queue, &ws.buffers[0], &[1, 2, 3, 4, 5, 6]).unwrap().unwrap();
        assert_eq!(read(&mut ws)[..12], [1, 2, 3, 4, 5, 6, 0, 0, data[8], data[9], data[10], data[11]]);
    }

    /// The device screen never changes a verdict or its words: on outputs full of edge cases
    /// (NaN, infinities, ±0, denormals, values at and just past the tolerance), with tolerances
    /// from zero to large, `check` gives exactly what core's host comparison gives.
    #[test]
    fn the_device_screen_gives_the_host_comparisons_verdict() {
        let Some(adapter) = crate::best_adapter() else {
            kerntune_core::testing::skipped("wgpu device verification: no adapter");
            return;
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&Default::default())).expect("a device");
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let specials =
            [0.0f32, -0.0, f32::NAN, f32::INFINITY, f32::NEG_INFINITY, f32::MIN_POSITIVE, 1e-45, -1e-45, 1.0, -1.0, 3.4e38, -3.4e38, 1e-3, 12345.678];
        let tolerances = [(0.0, 0.0), (1e-6, 1e-5), (1e-3, 1e-3), (0.0, 1e-7), (1e-40, 0.0), (1e30, 0.0), (0.0, 2.0)];
        let (mut passed, mut screened) = (0, 0);
        for case in 0..160 {
            let n = 1 + (rng.next() % 3000) as usize;
            let (atol, rtol) = tolerances[case % tolerances.len()];
            let tol = Tolerance { atol, rtol };
            // Infinities in the reference fail core's rule even where matched (inf - inf is NaN),
            // so only every eighth case has them.
            let finite: Vec<f32> = specials.iter().copied().filter(|x| !x.is_infinite()).collect();
            let pool = if case % 8 == 7 { &specials[..] } else { &finite[..] };
            let want: Vec<f32> =
                (0..n).map(|_| if rng.next().is_multiple_of(4) { rng.pick(pool) } else { (rng.next() % 2_000_001) as f32 / 1000.0 - 1000.0 }).collect();
            // Most cases differ nowhere or only within the tolerance, so that the screen's
            // pass is what is tested as often as its fallback.
            let kind = case % 4;
            let got: Vec<f32> = want
                .iter()
                .map(|&w| match (kind, rng.next() % 64) {
                    (0, _) => w,
                    (1, 0) => rng.pick(&specials),
                    (2, 0) => f32::from_bits(0xFFFF_FFFF),
                    (3, 0) => {
                        // At the tolerance, just inside or just outside it.
                        let t = (atol + rtol * (w as f64).abs()) as f32;
                        let at = w + t;
                        f32::from_bits(at.to_bits().wrapping_add(rng.pick(&[0u32, 1, u32::MAX])))
                    }
                    (_, 1) => w * (1.0 + rtol as f32 * 0.5),
                    _ => w,
                })
                .collect();
            let reference = vec![f32_buffer("x", &want, Access::Read), f32_buffer("y", &want, Access::Write)];
            let mut ws = create_workspace(
                &device,
                &queue,
                buffers_only(vec![f32_buffer("x", &want, Access::Read), f32_buffer("y", &got, Access::Write)]),
                "test",
                &Notes::default(),
            )
            .unwrap();
            let (device_verdict, host_verdict) =
                verdicts(&device, &queue, &mut ws, &reference, &["y".to_string()], (case as u64, tol), &f32_buffer("y", &got, Access::Write));
            assert_eq!(device_verdict, host_verdict, "case {case}: n = {n}, atol {atol}, rtol {rtol}");
            passed += usize::from(host_verdict.is_ok());
            if kind == 0 && case % 8 != 7 {
                // An exact copy is proven on the device: nothing was read back for it.
                let (ops, refs) = (ws.ops.as_mut().expect("made by check"), &ws.reference.as_ref().expect("uploaded by check").1);
                let unproven = ops.unproven(&device, &queue, &ws.buffers[1], refs[1].as_ref().expect("an f32 output"), DType::F32, tol).unwrap();
                assert_eq!(unproven, 0, "case {case}: an exact copy is proven on the device");
                screened += 1;
            }
        }
        assert!(passed > 40 && passed < 150, "both verdicts were tested: {passed} of 160 passed");
        // f32's rounding, which the screen's margin covers: 1e-3 as an f32 is a little above
        // 1e-3, so it is outside `atol = 1e-3` of zero by core's rule, though inside it in f32.
        let tol = Tolerance { atol: 1e-3, rtol: 0.0 };
        let (want, got) = (vec![0.0f32; 64], vec![1e-3f32; 64]);
        let reference = vec![f32_buffer("y", &want, Access::Write)];
        let mut ws = create_workspace(&device, &queue, buffers_only(vec![f32_buffer("y", &got, Access::Write)]), "test", &Notes::default()).unwrap();
        let req = VerifyRequest {
            reference: &reference,
            reference_id: 1000,
            outputs: &[],
            tolerance: tol,
            per_output: &[],
            compare: &[],
            mismatches: &[],
            timeout: std::time::Duration::from_secs(60),
        };
        let e = check(&device, &queue, &mut ws, &req, &Notes::default()).expect_err("1e-3f32 is more than 1e-3 from 0").to_string();
        assert!(e.contains("64 of 64 elements differ"), "{e}");
        assert!(screened > 20, "{screened} exact copies screened");
    }

    /// Integer and f64 outputs, screened by their bits: the device's verdict and words are the
    /// host's on outputs with equal values, values one apart, poison, i64 values f64 cannot
    /// tell apart, and f64 infinities, NaNs and signed zeros; an exact copy is proven on the
    /// device.
    #[test]
    fn the_bits_screen_gives_the_host_comparisons_verdict_for_integers_and_f64() {
        let Some(adapter) = crate::best_adapter() else {
            kerntune_core::testing::skipped("wgpu device verification: no adapter");
            return;
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&Default::default())).expect("a device");
        let mut rng = Rng(0xD1B5_4A32_D192_ED03);
        let f64_specials = [0.0f64, -0.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, f64::MIN_POSITIVE, 1.0, -1.0, 1e300];
        // A negative tolerance (a library caller's; a spec refuses it) fails even equal values.
        let tolerances = [(0.0, 0.0), (1e-6, 1e-5), (1.0, 0.0), (0.0, 1e-7), (2.5, 0.0), (-1.0, 0.0)];
        let (mut passed, mut proven, mut cases) = (0, 0, 0);
        for dtype in [DType::I32, DType::U32, DType::I64, DType::F64] {
            for case in 0..48 {
                let n = 1 + (rng.next() % 2000) as usize;
                let (atol, rtol) = tolerances[(case / 4) % tolerances.len()];
                let tol = Tolerance { atol, rtol };
                // Elements as u64 bit patterns of `dtype`, written at its size.
                let value = |rng: &mut Rng| -> u64 {
                    match dtype {
                        DType::I32 => ((rng.next() % 2001) as i64 - 1000) as u64,
                        DType::U32 => rng.next() % 100_000,
                        // Around 2^60, where neighbouring i64 values are one f64.
                        DType::I64 => (1u64 << 60) + rng.next() % 64,
                        // Infinities and NaNs in every third case, exact copies among them.
                        _ if rng.next().is_multiple_of(5) && case % 3 == 0 => rng.pick(&f64_specials).to_bits(),
                        _ => ((rng.next() % 2_000_001) as f64 / 1000.0 - 1000.0).to_bits(),
                    }
                };
                let want: Vec<u64> = (0..n).map(|_| value(&mut rng)).collect();
                let kind = case % 4;
                let got: Vec<u64> = want
                    .iter()
                    .map(|&w| match (kind, rng.next() % 64) {
                        (0, _) => w,
                        (1, 0) => w.wrapping_add(1),
                        (2, 0) => u64::MAX,
                        // The high word alone differs (a 64-bit type), or the low one.
                        (3, 0) if dtype.size() == 8 => w ^ (1 << 40),
                        (3, 0) => w.wrapping_sub(2),
                        (3, 1) if dtype == DType::F64 => rng.pick(&f64_specials).to_bits(),
                        _ => w,
                    })
                    .collect();
                let buffer = |name: &str, v: &[u64], access| HostBuffer {
                    name: name.into(),
                    dtype,
                    data: v.iter().flat_map(|x| x.to_le_bytes()[..dtype.size()].to_vec()).collect(),
                    access,
                    memory: Memory::Global,
                };
                let reference = vec![buffer("y", &want, Access::Write)];
                let mut ws = create_workspace(&device, &queue, buffers_only(vec![buffer("y", &got, Access::Write)]), "test", &Notes::default()).unwrap();
                let (device_verdict, host_verdict) = verdicts(&device, &queue, &mut ws, &reference, &[], (case as u64, tol), &buffer("y", &got, Access::Write));
                assert_eq!(device_verdict, host_verdict, "{dtype:?} case {case}: n = {n}, atol {atol}, rtol {rtol}");
                passed += usize::from(host_verdict.is_ok());
                cases += 1;
                let (ops, refs) = (ws.ops.as_mut().expect("made by check"), &ws.reference.as_ref().expect("uploaded by check").1);
                let unproven = ops.unproven(&device, &queue, &ws.buffers[0], refs[0].as_ref().expect("screened on the device"), dtype, tol).unwrap();
                let specials = want.iter().filter(|&&w| dtype == DType::F64 && !f64::from_bits(w).is_finite()).count() as u32;
                let differ = want.iter().zip(&got).filter(|(w, g)| w != g).count() as u32;
                assert!(unproven >= differ, "{dtype:?} case {case}: every element whose bits differ is unproven ({unproven} < {differ})");
                if kind == 0 {
                    assert_eq!(unproven, specials, "{dtype:?} case {case}: an exact copy is proven on the device but for f64 infinities and NaNs");
                    proven += usize::from(unproven == 0);
                }
            }
        }
        assert!(passed > cases / 4 && passed < cases * 3 / 4, "both verdicts were tested: {passed} of {cases} passed");
        assert!(proven >= 40, "exact copies proven on the device: {proven}");
    }
}
