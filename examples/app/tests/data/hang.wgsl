// The triad y = a*x + y, whose HANG = 1 configs never end on a GPU: the loop exits only on an
// input below -1, and the inputs are in [0, 1); the store in the loop keeps any compiler from
// removing it (as examples/faults/hang.wgsl).
override WG_SIZE: u32 = 64u;
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(WG_SIZE)
fn triad(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= u32(n)) { return; }
    let y0 = y[i];
    if (HANG == 1) {
        loop {
            y[i] = y[i] + 1.0;
            if (x[i] < -1.0) { break; }
        }
    }
    y[i] = f32(a) * x[i] + y0;
}
