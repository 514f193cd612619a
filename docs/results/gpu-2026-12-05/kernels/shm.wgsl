override WG_SIZE: u32 = 64u;
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
var<workgroup> tile: array<f32, TILE>;
@compute @workgroup_size(WG_SIZE)
fn triad(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let i = gid.x;
    if (i < u32(n)) {
        tile[lid.x % u32(TILE)] = x[i];
    }
    workgroupBarrier();
    if (i < u32(n)) {
        y[i] = f32(a) * tile[lid.x % u32(TILE)] + y[i];
    }
}
