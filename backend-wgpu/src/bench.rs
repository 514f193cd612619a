//! Device buffers, launches, timing and read-back.

use crate::compile::WgpuKernel;
use crate::error::poll_error;
use kerntune_core::{Access, BackendError, HostBuffer, Launch, TimeRequest};
use std::time::Instant;

/// A problem's buffers on the device (the workspace of kernels that run in this process).
pub(crate) struct Buffers {
    pub(crate) buffers: Vec<wgpu::Buffer>,
    pub(crate) initial: Vec<HostBuffer>,
    /// Each buffer's host-readable copy, made the first time it is read back and kept: a
    /// verification reads the outputs of every config, and a fresh staging buffer the size of
    /// an output each time cost as much as the copy.
    staging: Vec<Option<wgpu::Buffer>>,
    /// Each written buffer's poisoned contents, made on first use.
    poisoned: Vec<Option<Vec<u8>>>,
}

/// Buffer size: at least 4 bytes, a multiple of 4 (wgpu's copy alignment).
fn padded(len: usize) -> u64 {
    (len.max(4) as u64).div_ceil(4) * 4
}

pub(crate) fn create_workspace(device: &wgpu::Device, queue: &wgpu::Queue, bufs: Vec<HostBuffer>) -> Buffers {
    let buffers = bufs
        .iter()
        .map(|b| {
            let buf = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(&b.name),
                size: padded(b.data.len()),
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            write_padded(queue, &buf, &b.data);
            buf
        })
        .collect();
    queue.submit([]);
    let n = bufs.len();
    Buffers { buffers, initial: bufs, staging: (0..n).map(|_| None).collect(), poisoned: vec![None; n] }
}

fn write_padded(queue: &wgpu::Queue, buf: &wgpu::Buffer, data: &[u8]) {
    if data.len().is_multiple_of(4) && !data.is_empty() {
        queue.write_buffer(buf, 0, data);
    } else {
        let mut v = data.to_vec();
        v.resize(padded(data.len()) as usize, 0);
        queue.write_buffer(buf, 0, &v);
    }
}

/// Restores the buffers a kernel can write to their initial contents, or poisons the
/// write-only ones (`poison`). Read-only arguments are bound read-only (see
/// [`crate::compile::pipeline_layout`]): no launch can change them, so they are not written
/// again (for a matmul, two of its three buffers).
pub(crate) fn reset(queue: &wgpu::Queue, ws: &mut Buffers, poison: bool) {
    for (i, (buf, init)) in ws.buffers.iter().zip(&ws.initial).enumerate() {
        match init.access {
            Access::Read => {}
            Access::Write if poison => write_padded(queue, buf, ws.poisoned[i].get_or_insert_with(|| init.poisoned())),
            _ => write_padded(queue, buf, &init.data),
        }
    }
    queue.submit([]);
}

fn wait(device: &wgpu::Device, idx: wgpu::SubmissionIndex, timeout: std::time::Duration) -> Result<(), BackendError> {
    device.poll(wgpu::PollType::Wait { submission_index: Some(idx), timeout: Some(timeout) }).map(drop).map_err(|e| poll_error(e, timeout))
}

fn read_buffer(device: &wgpu::Device, buf: &wgpu::Buffer, timeout: std::time::Duration) -> Result<Vec<u8>, BackendError> {
    let (tx, rx) = std::sync::mpsc::channel();
    buf.map_async(wgpu::MapMode::Read, .., move |r| {
        let _ = tx.send(r);
    });
    device.poll(wgpu::PollType::Wait { submission_index: None, timeout: Some(timeout) }).map_err(|e| poll_error(e, timeout))?;
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

    pub fn time(&self, ws: &Buffers, k: &WgpuKernel, launch: &Launch, req: &TimeRequest) -> Result<Vec<f64>, BackendError> {
        let layout = k.pipeline.get_bind_group_layout(0);
        let entries: Vec<wgpu::BindGroupEntry<'_>> =
            ws.buffers.iter().enumerate().map(|(i, b)| wgpu::BindGroupEntry { binding: i as u32, resource: b.as_entire_binding() }).collect();
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

    /// Reads back every buffer.
    pub fn read_outputs(&self, ws: &mut Buffers) -> Result<Vec<HostBuffer>, BackendError> {
        self.read_selected(ws, |_| true)
    }

    /// Reads back the buffers `wanted` selects, in argument order; the others come back empty.
    pub fn read_selected(&self, ws: &mut Buffers, wanted: impl Fn(&HostBuffer) -> bool) -> Result<Vec<HostBuffer>, BackendError> {
        let mut enc = self.device.create_command_encoder(&Default::default());
        let picked: Vec<bool> = ws.initial.iter().map(&wanted).collect();
        for ((b, s), _) in ws.buffers.iter().zip(ws.staging.iter_mut()).zip(&picked).filter(|(_, &p)| p) {
            let s = s.get_or_insert_with(|| {
                self.device.create_buffer(&wgpu::BufferDescriptor {
                    label: None,
                    size: b.size(),
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                })
            });
            enc.copy_buffer_to_buffer(b, 0, s, 0, b.size());
        }
        let idx = self.queue.submit([enc.finish()]);
        wait(self.device, idx, std::time::Duration::from_secs(60))?;
        let mut out = Vec::with_capacity(ws.initial.len());
        for ((s, init), p) in ws.staging.iter().zip(&ws.initial).zip(picked) {
            let data = match s {
                Some(s) if p => {
                    let mut data = read_buffer(self.device, s, std::time::Duration::from_secs(60))?;
                    data.truncate(init.data.len());
                    data
                }
                _ => Vec::new(),
            };
            out.push(HostBuffer { data, ..init.clone() });
        }
        Ok(out)
    }
}
