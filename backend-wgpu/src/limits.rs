//! The one conversion from wgpu's adapter description to kerntune's `Target` and `Limits`.

use kerntune_core::{Limits, Target, Vendor};

/// The target of an adapter: architecture `backend-vendorid-deviceid` (hex), e.g.
/// `vulkan-10de-2335`.
pub fn target_from_info(info: &wgpu::AdapterInfo) -> Target {
    let backend = format!("{:?}", info.backend).to_lowercase();
    let arch = format!("{backend}-{:x}-{:x}", info.vendor, info.device);
    Target::new("wgpu", Vendor::Portable, &arch, &info.name)
}

/// Fills [`Limits`] from wgpu's limits and adapter info.
///
/// wgpu does not report multiprocessor counts, registers, caches or peak rates; those fields
/// are `None`, except `sm_count`, which is the host's core count for CPU (software) adapters
/// and 1 otherwise (occupancy-derived grids then fall back to one block per "SM").
pub fn limits_from_wgpu(l: &wgpu::Limits, info: &wgpu::AdapterInfo) -> Limits {
    let cores = std::thread::available_parallelism().map(|n| n.get() as u32).unwrap_or(1);
    let shared = l.max_compute_workgroup_storage_size as u64;
    Limits {
        max_threads_per_block: l.max_compute_invocations_per_workgroup,
        max_block_dim: [l.max_compute_workgroup_size_x, l.max_compute_workgroup_size_y, l.max_compute_workgroup_size_z],
        max_grid_dim: [l.max_compute_workgroups_per_dimension; 3],
        warp_size: info.subgroup_min_size.max(1),
        shared_mem_per_block: shared,
        shared_mem_per_block_optin: shared,
        shared_mem_per_sm: shared,
        registers_per_sm: None,
        registers_per_block: None,
        max_registers_per_thread: None,
        max_blocks_per_sm: None,
        max_warps_per_sm: None,
        sm_count: if info.device_type == wgpu::DeviceType::Cpu { cores } else { 1 },
        l2_bytes: None,
        memory_bandwidth: None,
        peak_flops_f32: None,
        peak_flops_f16: None,
        // WebGPU reports no device memory size; `crate::device::adapter_limits` fills it where
        // the API below says (Vulkan).
        global_mem_bytes: None,
        max_buffer_bytes: Some(l.max_buffer_size.min(l.max_storage_buffer_binding_size)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversion_maps_each_field() {
        let l = wgpu::Limits {
            max_compute_workgroup_storage_size: 32768,
            max_compute_invocations_per_workgroup: 1024,
            max_compute_workgroup_size_x: 1024,
            max_compute_workgroup_size_y: 512,
            max_compute_workgroup_size_z: 64,
            max_compute_workgroups_per_dimension: 65535,
            ..Default::default()
        };
        let mut info = wgpu::AdapterInfo::new(wgpu::DeviceType::Cpu, wgpu::Backend::Vulkan);
        info.name = "llvmpipe (LLVM 15.0.6, 256 bits)".into();
        info.vendor = 0x10005;
        info.device = 0;
        info.subgroup_min_size = 8;
        info.subgroup_max_size = 8;
        let k = limits_from_wgpu(&l, &info);
        assert_eq!(k.max_threads_per_block, 1024);
        assert_eq!(k.max_block_dim, [1024, 512, 64]);
        assert_eq!(k.max_grid_dim, [65535; 3]);
        assert_eq!(k.warp_size, 8);
        assert_eq!(k.shared_mem_per_block_optin, 32768);
        assert!(k.registers_per_sm.is_none() && k.l2_bytes.is_none());
        let t = target_from_info(&info);
        assert_eq!(t.arch, "vulkan-10005-0");
        assert_eq!(t.backend, "wgpu");
        assert!(t.fingerprint.starts_with("wgpu-vulkan-10005-0-llvmpipe"));
    }
}
