//! Resource usage read from real CUBINs (`tests/data/cubin`, made by NVRTC 12.9) against what
//! the driver reported for the same configs on an H100, and ptxas's own report. Needs no GPU.

use kerntune_core::{Limits, ResourceUsage};
use kerntune_cuda::cubin::{resource_usage, usage, CubinUsage};

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!("{}/tests/data/cubin/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn h100() -> Limits {
    Limits::preset("h100").unwrap().1
}

/// (fixture, block threads, what the driver reported on the H100).
const SGEMM: [(&str, u32, [u64; 5]); 3] = [
    // registers, static shared, local, most threads per block, resident blocks per SM
    ("sgemm_16_8_8_8_16.sm_90.cubin", 128, [96, 12288, 0, 128, 5]),
    // Two warps of 40 registers: 24 blocks, not the 25 a count of registers alone gives (the
    // warps registers allow are rounded down to a multiple of 4).
    ("sgemm_16_4_1_4_16.sm_90.cubin", 64, [40, 2048, 0, 64, 24]),
    ("sgemm_32_32_8_4_32.sm_90.cubin", 1024, [64, 49152, 0, 1024, 1]),
];

#[test]
fn sgemm_usage_is_what_the_driver_reported() {
    for (file, threads, [regs, shared, local, max, blocks]) in SGEMM {
        let u = usage(&fixture(file), "sgemm").unwrap();
        assert_eq!(u, CubinUsage { registers: regs as u32, local_bytes: local, static_shared_bytes: shared, launch_bound: Some(max as u32) }, "{file}");
        let r = resource_usage(&u, threads, 0, 9, &h100());
        let want = ResourceUsage {
            registers: Some(regs as u32),
            static_shared_bytes: Some(shared),
            local_bytes: Some(local),
            max_threads_per_block: Some(max as u32),
            active_blocks_per_sm: Some(blocks as u32),
        };
        assert_eq!(r, want, "{file}");
    }
}

#[test]
fn a_stack_frame_without_launch_bounds_or_shared_memory() {
    let u = usage(&fixture("local_array.sm_90.cubin"), "local_array").unwrap();
    assert_eq!(u, CubinUsage { registers: 40, local_bytes: 1024, static_shared_bytes: 0, launch_bound: None });
    let r = resource_usage(&u, 256, 0, 9, &h100());
    // No launch bound: the registers check decides whether a block fits.
    assert_eq!(r.max_threads_per_block, None);
    // 8 warps of 40 registers (1,280 per warp): 48 warps by registers, 6 blocks; the reserved
    // 1 KiB of shared memory per block does not limit.
    assert_eq!(r.active_blocks_per_sm, Some(6));
}

#[test]
fn dynamic_shared_memory_and_the_reserve_count_against_occupancy() {
    let u = usage(&fixture("sgemm_16_4_1_4_16.sm_90.cubin"), "sgemm").unwrap();
    // 2 KiB static + 100 KiB dynamic + 1 KiB reserved = 103 KiB: two blocks in the H100's 228 KiB.
    assert_eq!(resource_usage(&u, 64, 100 << 10, 9, &h100()).active_blocks_per_sm, Some(2));
}

#[test]
fn c_plus_plus_kernels_are_found_by_their_mangled_names() {
    let u = usage(&fixture("triad_t_float_256_4.sm_90.cubin"), "_Z7triad_tIfLi256ELi4EEvPKT_PS0_S0_j").unwrap();
    assert_eq!(u, CubinUsage { registers: 22, local_bytes: 0, static_shared_bytes: 0, launch_bound: Some(256) });
    let u = usage(&fixture("convolution_48_2_2_3.sm_90.cubin"), "_Z18convolution_kernelPfPKfS1_").unwrap();
    assert_eq!(u, CubinUsage { registers: 54, local_bytes: 0, static_shared_bytes: 8880, launch_bound: Some(96) });
}

#[test]
fn a_kernel_not_in_the_cubin_is_an_error_naming_it() {
    let e = usage(&fixture("local_array.sm_90.cubin"), "sgemm").unwrap_err();
    assert!(e.contains("no symbol `sgemm`"), "{e}");
}
