//! How much device memory an adapter has free, where its API says (Vulkan's
//! `VK_EXT_memory_budget`), and the allocations a workspace makes without panicking or poisoning
//! the device when it has none left (wgpu's out-of-memory error scope).
//!
//! WebGPU has no query for free memory; Vulkan has one, reached through wgpu's hal. Where there
//! is none (Metal, DX12, a driver without the extension), a workspace learns that the device is
//! full from the allocation that fails.

/// The device-local memory of `device`: `(free, total)` bytes of its largest device-local heap,
/// free being the heap's budget (what the driver says this process can use, other processes'
/// allocations taken out) less what this process already uses. `None` where the backend does
/// not say.
pub(crate) fn device_memory(device: &wgpu::Device) -> Option<(usize, usize)> {
    #[cfg(any(target_os = "linux", target_os = "windows", target_os = "android", target_os = "freebsd"))]
    {
        vulkan_budget(device)
    }
    #[cfg(not(any(target_os = "linux", target_os = "windows", target_os = "android", target_os = "freebsd")))]
    {
        let _ = device;
        None
    }
}

/// The size of `adapter`'s device memory: its largest device-local heap, the heap a
/// workspace's free memory is read from ([`device_memory`]). Read from the physical device, so
/// without opening one (`kerntune devices`, the check of a problem against the whole device
/// before a tune). `None` where the backend does not say.
pub(crate) fn adapter_memory(adapter: &wgpu::Adapter) -> Option<u64> {
    #[cfg(any(target_os = "linux", target_os = "windows", target_os = "android", target_os = "freebsd"))]
    {
        // SAFETY: only reads the physical device's memory properties; nothing is created or
        // destroyed through the hal adapter.
        let hal = unsafe { adapter.as_hal::<wgpu::hal::api::Vulkan>() }?;
        // SAFETY: a core Vulkan 1.0 query on the adapter's own physical device.
        let props = unsafe { hal.shared_instance().raw_instance().get_physical_device_memory_properties(hal.raw_physical_device()) };
        largest_device_local(&props).map(|(_, size)| size)
    }
    #[cfg(not(any(target_os = "linux", target_os = "windows", target_os = "android", target_os = "freebsd")))]
    {
        let _ = adapter;
        None
    }
}

/// The index and size of the largest device-local heap: the GPU's memory on a discrete GPU,
/// the memory shared with the host on an integrated one or a CPU.
#[cfg(any(target_os = "linux", target_os = "windows", target_os = "android", target_os = "freebsd"))]
fn largest_device_local(props: &ash::vk::PhysicalDeviceMemoryProperties) -> Option<(usize, u64)> {
    let heaps = &props.memory_heaps[..(props.memory_heap_count as usize).min(ash::vk::MAX_MEMORY_HEAPS)];
    heaps.iter().enumerate().filter(|(_, h)| h.flags.contains(ash::vk::MemoryHeapFlags::DEVICE_LOCAL)).map(|(i, h)| (i, h.size)).max_by_key(|&(_, size)| size)
}

#[cfg(any(target_os = "linux", target_os = "windows", target_os = "android", target_os = "freebsd"))]
fn vulkan_budget(device: &wgpu::Device) -> Option<(usize, usize)> {
    use ash::vk;
    // SAFETY: only reads the physical device's memory properties; nothing is created or
    // destroyed through the hal device.
    let hal = unsafe { device.as_hal::<wgpu::hal::api::Vulkan>() }?;
    let instance = hal.shared_instance();
    // The budget is chained to a Vulkan 1.1 query, valid once the device enabled the extension.
    if instance.instance_api_version() < vk::API_VERSION_1_1 || !hal.enabled_device_extensions().contains(&ash::ext::memory_budget::NAME) {
        return None;
    }
    let mut budget = vk::PhysicalDeviceMemoryBudgetPropertiesEXT::default();
    let mut props = vk::PhysicalDeviceMemoryProperties2::default().push_next(&mut budget);
    // SAFETY: a query on the physical device the device was made from, with the extension's
    // structure chained (the extension is enabled, checked above).
    unsafe { instance.raw_instance().get_physical_device_memory_properties2(hal.raw_physical_device(), &mut props) };
    let (i, total) = largest_device_local(&props.memory_properties)?;
    let free = budget.heap_budget[i].saturating_sub(budget.heap_usage[i]);
    Some((usize::try_from(free).unwrap_or(usize::MAX), usize::try_from(total).unwrap_or(usize::MAX)))
}

/// Runs `make` (which allocates) with wgpu's out-of-memory errors captured: `None` when the
/// device found no memory for it (what `make` returned is dropped, an invalid object).
pub(crate) fn try_alloc<T>(device: &wgpu::Device, make: impl FnOnce() -> T) -> Option<T> {
    let scope = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let made = make();
    match pollster::block_on(scope.pop()) {
        None => Some(made),
        Some(e) => {
            tracing::info!("wgpu allocation failed: {e}");
            None
        }
    }
}

/// The error for a problem whose buffers the device found no memory for, where the adapter
/// does not report its free memory: `buffers` are `(name, bytes)` of each.
pub(crate) fn no_memory(buffers: &[(&str, usize)], adapter: &str) -> String {
    format!(
        "out of device memory: the problem's buffers need {}, and {adapter} found no memory for them (its API does not report free memory); tune a smaller problem, or free the GPU's memory",
        kerntune_core::measure::memory::buffers_need(buffers)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_names_the_buffers_and_what_to_do() {
        let m = no_memory(&[("x", 2 << 30), ("y", 2 << 30), ("n", 0)], "NVIDIA H200");
        assert_eq!(
            m,
            "out of device memory: the problem's buffers need 4.0 GiB (x 2.0 GiB, y 2.0 GiB), and NVIDIA H200 found no memory for them (its API does not report free memory); tune a smaller problem, or free the GPU's memory"
        );
    }

    /// Where the adapter reports a budget (NVIDIA's and AMD's Vulkan drivers do; llvmpipe as
    /// Debian 12 ships it does not), its free memory is read: at most its total. (That it counts
    /// other processes' memory is the GPU suite's fits-once test through Vulkan.)
    #[test]
    fn a_vulkan_adapter_reports_its_free_memory() {
        let Some(adapter) = crate::best_adapter() else {
            kerntune_core::testing::skipped("wgpu device memory: no adapter");
            return;
        };
        let (device, _queue) = pollster::block_on(adapter.request_device(&Default::default())).expect("a device");
        let Some((free, total)) = device_memory(&device) else {
            kerntune_core::testing::skipped("wgpu device memory: the adapter reports no budget");
            return;
        };
        assert!(free > 0 && free <= total, "{free} of {total}");
        // A buffer allocated takes from it (drivers may report the change later, or take it
        // from a block already allocated: the free memory does not grow).
        let buf = try_alloc(&device, || {
            device.create_buffer(&wgpu::BufferDescriptor { label: None, size: 64 << 20, usage: wgpu::BufferUsages::STORAGE, mapped_at_creation: false })
        })
        .expect("64 MiB");
        let (after, total_after) = device_memory(&device).expect("still reported");
        // A CPU adapter's budget is the host's free memory (llvmpipe in Ubuntu 24.04's Mesa),
        // which every other process on the host moves either way: there it is only bounded.
        let cpu = adapter.get_info().device_type == wgpu::DeviceType::Cpu;
        assert!((cpu || after <= free) && after <= total && total_after == total, "{free} → {after} of {total} → {total_after}");
        drop(buf);
        // The adapter's size, read without a device (what `kerntune devices` prints), is the
        // same heap's.
        assert_eq!(adapter_memory(&adapter), Some(total as u64));
    }

    /// Every Vulkan adapter says how large its memory is, whether or not it reports a budget
    /// (llvmpipe: the host's memory).
    #[test]
    fn a_vulkan_adapter_says_how_much_memory_it_has() {
        let Some(adapter) = crate::best_adapter() else {
            kerntune_core::testing::skipped("wgpu adapter memory: no adapter");
            return;
        };
        if adapter.get_info().backend != wgpu::Backend::Vulkan {
            kerntune_core::testing::skipped("wgpu adapter memory: not a Vulkan adapter");
            return;
        }
        let total = adapter_memory(&adapter).expect("a Vulkan adapter has a device-local heap");
        assert!(total >= 256 << 20, "{total} bytes");
        let summary = crate::adapters().into_iter().find(|a| a.info.name == adapter.get_info().name).expect("listed");
        assert_eq!(summary.limits.global_mem_bytes, Some(total), "the listing carries it");
    }
}
