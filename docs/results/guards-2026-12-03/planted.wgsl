override WG: u32 = 64u;
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(WG)
fn planted(@builtin(global_invocation_id) g: vec3<u32>) {
  let i = g.x;
  if (FAULT == 1) { y[i] = x[min(i, n - 1u)]; return; }
  if (i >= n) { return; }
  if (FAULT == 2) { y[i] = x[i] + x[i + 1u]; return; }
  y[i] = x[i] + select(0.0, x[min(i + 1u, n - 1u)], i + 1u < n);
}
