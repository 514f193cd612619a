//! Exact counts on the real search spaces from ../shared/spaces/README.md.

use kerntune_core::{Param, SearchSpace, Value};

fn p(name: &str, v: &[i64]) -> Param {
    Param::new(name, v.iter().copied())
}

pub fn clblast_gemm() -> SearchSpace {
    let params = vec![
        p("MWG", &[16, 32, 64, 128]),
        p("NWG", &[16, 32, 64, 128]),
        p("KWG", &[32]),
        p("MDIMC", &[8, 16, 32]),
        p("NDIMC", &[8, 16, 32]),
        p("MDIMA", &[8, 16, 32]),
        p("NDIMB", &[8, 16, 32]),
        p("KWI", &[2]),
        p("VWM", &[1, 2, 4, 8]),
        p("VWN", &[1, 2, 4, 8]),
        p("STRM", &[0]),
        p("STRN", &[0]),
        p("SA", &[0, 1]),
        p("SB", &[0, 1]),
        p("PRECISION", &[32]),
    ];
    SearchSpace::new(params, &gemm_restrictions(), vec![]).unwrap()
}

fn gemm_restrictions() -> Vec<&'static str> {
    vec![
        "KWG % KWI == 0",
        "MWG % (MDIMC * VWM) == 0",
        "NWG % (NDIMC * VWN) == 0",
        "MWG % (MDIMA * VWM) == 0",
        "NWG % (NDIMB * VWN) == 0",
        "KWG % ((MDIMC * NDIMC)/MDIMA) == 0",
        "KWG % ((MDIMC * NDIMC)/NDIMB) == 0",
    ]
}

pub fn large_gemm() -> SearchSpace {
    let params = vec![
        p("GEMMK", &[0]),
        p("MWG", &[16, 32, 64, 128]),
        p("NWG", &[16, 32, 64, 128]),
        p("KWG", &[16, 32]),
        p("MDIMC", &[8, 16, 32]),
        p("NDIMC", &[8, 16, 32]),
        p("MDIMA", &[8, 16, 32]),
        p("NDIMB", &[8, 16, 32]),
        p("KWI", &[2]),
        p("VWM", &[1, 2, 4, 8]),
        p("VWN", &[1, 2, 4, 8]),
        p("STRM", &[0, 1]),
        p("STRN", &[0, 1]),
        p("SA", &[0, 1]),
        p("SB", &[0, 1]),
        p("KREG", &[1]),
        p("PRECISION", &[32]),
    ];
    let mut r = gemm_restrictions();
    r.push("not (MWG == 128 and NWG == 128 and MDIMC == 8 and NDIMC == 8)");
    SearchSpace::new(params, &r, vec![]).unwrap()
}

pub fn convolution() -> SearchSpace {
    let params = vec![
        Param::new("block_size_x", (1..=16).map(|i| i * 16)),
        p("block_size_y", &[1, 2, 4, 8, 16]),
        p("tile_size_x", &[1, 2, 3, 4]),
        p("tile_size_y", &[1, 2, 3, 4]),
        p("read_only", &[0, 1]),
        p("use_padding", &[0, 1]),
        p("use_shmem", &[0, 1]),
        p("use_cmem", &[1]),
        p("filter_height", &[15]),
        p("filter_width", &[15]),
    ];
    let r = [
        "use_padding==0 or block_size_x % 32 != 0",
        "block_size_x*block_size_y<=1024",
        "use_padding==0 or use_shmem != 0",
        "use_shmem == 0 or ((block_size_x*tile_size_x+(filter_width-1))*(block_size_y*tile_size_y+(filter_height-1))) < 12*1024",
    ];
    SearchSpace::new(params, &r, vec![]).unwrap()
}

#[test]
fn clblast_gemm_has_exactly_17956_of_82944() {
    let s = clblast_gemm();
    assert_eq!(s.cartesian_size(), 82_944);
    assert_eq!(s.count(), 17_956);
}

#[test]
fn convolution_has_exactly_4362_of_10240() {
    let s = convolution();
    assert_eq!(s.cartesian_size(), 10_240);
    assert_eq!(s.count(), 4_362);
}

#[test]
fn large_gemm_has_exactly_116928_of_663552() {
    let s = large_gemm();
    assert_eq!(s.cartesian_size(), 663_552);
    assert_eq!(s.count(), 116_928);
}

#[test]
fn enumeration_is_lazy_and_restartable() {
    let s = large_gemm();
    let first: Vec<_> = s.iter().take(3).collect();
    let again: Vec<_> = s.iter().take(3).collect();
    assert_eq!(first, again);
    for c in &first {
        let coords = s.coords_of(c).unwrap();
        assert!(s.is_valid(&coords));
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
    assert_eq!(SearchSpace::new(params, &r, vec![]).unwrap().count(), 410);
}
