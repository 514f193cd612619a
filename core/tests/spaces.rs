//! Exact counts on the real search spaces from ../shared/spaces/README.md.

#[path = "common/spaces.rs"]
mod fixtures;

use fixtures::*;
use kerntune_core::{SearchSpace, Value};

#[test]
fn clblast_gemm_has_exactly_17956_of_82944() {
    let s = clblast_gemm();
    assert_eq!(s.cartesian_size(), 82_944);
    assert_eq!(s.count().unwrap(), 17_956);
}

#[test]
fn convolution_has_exactly_4362_of_10240() {
    let s = convolution();
    assert_eq!(s.cartesian_size(), 10_240);
    assert_eq!(s.count().unwrap(), 4_362);
}

#[test]
fn large_gemm_has_exactly_116928_of_663552() {
    let s = large_gemm();
    assert_eq!(s.cartesian_size(), 663_552);
    assert_eq!(s.count().unwrap(), 116_928);
}

#[test]
fn enumeration_is_lazy_and_restartable() {
    let s = large_gemm();
    let first: Vec<_> = s.iter().take(3).collect();
    let again: Vec<_> = s.iter().take(3).collect();
    assert_eq!(first, again);
    for c in &first {
        let coords = s.coords_of(c).unwrap();
        assert!(s.is_valid(&coords).unwrap());
        assert_eq!(c.get("PRECISION"), Some(&Value::Int(32)));
    }
}

#[test]
fn sgemm_bench_space_has_410() {
    // ../shared/bench/README.md: the SGEMM space kerntune is compared on.
    let params = vec![
        p("block_size_x", &[8, 16, 32]),
        p("block_size_y", &[4, 8, 16, 32]),
        p("tile_size_x", &[1, 2, 4, 8]),
        p("tile_size_y", &[1, 2, 4, 8]),
        p("BK", &[8, 16, 32]),
    ];
    let r = [
        "64 <= block_size_x*block_size_y <= 1024",
        "BK*(block_size_y*tile_size_y + block_size_x*tile_size_x)*4 <= 48*1024",
        "16 <= block_size_y*tile_size_y <= 256",
        "16 <= block_size_x*tile_size_x <= 256",
    ];
    assert_eq!(SearchSpace::new(params, &r, vec![]).unwrap().count().unwrap(), 410);
}
