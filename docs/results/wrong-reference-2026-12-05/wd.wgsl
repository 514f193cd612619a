override WG_SIZE: u32 = 64u;
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(WG_SIZE)
fn triad(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let total = nwg.x * WG_SIZE;
    for (var k: u32 = 0u; k < u32(PER_THREAD); k++) {
        let i = gid.x + k * total;
        if (PER_THREAD == 8 && k == 7u) { continue; }
        if (i < u32(n)) {
            y[i] = f32(a) * x[i] + y[i];
        }
    }
}
