// Vector triad y = a*x + y (memory-bound).
// Tunables: WG_SIZE (a pipeline-overridable constant: the workgroup size) and PER_THREAD
// (elements per invocation, injected as a const). `a` and `n` are the spec's scalar arguments,
// injected as consts too.
override WG_SIZE: u32 = 64u;

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(WG_SIZE)
fn triad(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    // Each invocation handles PER_THREAD elements strided by the whole grid, so that
    // neighbouring invocations touch neighbouring elements (coalesced).
    let total = nwg.x * WG_SIZE;
    for (var k: u32 = 0u; k < u32(PER_THREAD); k++) {
        let i = gid.x + k * total;
        if (i < u32(n)) {
            y[i] = f32(a) * x[i] + y[i];
        }
    }
}
