// HANG = 1 never ends on a GPU: its loop exits only on an input below -1, and the inputs are in
// [0, 1); the store in the loop keeps any compiler from removing it. (On llvmpipe the loop ends
// after a bound, naga's or llvmpipe's: 2.3 s for 4,096 elements on a 2-core machine, longer
// than 150 s for hang.toml's 2^20.) See hang.toml.
override WG_SIZE: u32 = 64u;
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(WG_SIZE)
fn hang(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= u32(n)) { return; }
    y[i] = 0.0;
    if (HANG == 1) {
        loop {
            y[i] = y[i] + 1.0;
            if (x[i] < -1.0) { break; }
        }
    }
    y[i] = 2.0 * x[i];
}
