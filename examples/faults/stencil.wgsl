// The WGSL twin of `heat` in stencil.cu (see there and read_past.toml): a 2-D five-point heat
// step written for an input padded with a halo of R cells on every side, (nx + 2R) x (ny + 2R)
// elements. wgpu never faults on a read past a buffer (it reads zero, or the last element), so
// kerntune finds it by the guard words it keeps after each buffer: the outputs change with them.
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@group(0) @binding(1) var<storage, read> inp: array<f32>;

@compute @workgroup_size(block_size_x, block_size_y)
fn heat(@builtin(global_invocation_id) g: vec3<u32>) {
    let x = i32(g.x);
    let y = i32(g.y);
    if (x >= nx || y >= ny) {
        return;
    }
    let pitch = nx + 2 * R;
    let c = (y + R) * pitch + (x + R);
    out[y * nx + x] = 0.5 * inp[c] + 0.125 * (inp[c - R] + inp[c + R] + inp[c - R * pitch] + inp[c + R * pitch]);
}
