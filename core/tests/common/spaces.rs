//! The real search spaces from ../shared/spaces/README.md, shared by the exact-count tests
//! (`tests/spaces.rs`) and the enumeration benchmark (`benches/core.rs`).
#![allow(dead_code)] // each includer uses a subset

use kerntune_core::{Param, SearchSpace};

pub fn p(name: &str, v: &[i64]) -> Param {
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

pub fn gemm_restrictions() -> Vec<&'static str> {
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
