// Tiled matrix multiply C = A·B, row-major, f32 (compute-bound).
// Tunables (injected as consts): WG_X, WG_Y (workgroup shape), TM, TN (outputs per invocation
// along rows and columns), BK (k-slice staged in workgroup memory). M, N, K are scalar args.
// Each workgroup computes a (WG_Y*TM) x (WG_X*TN) tile of C.
const BM: u32 = u32(WG_Y) * u32(TM);
const BN: u32 = u32(WG_X) * u32(TN);
const NT: u32 = u32(WG_X) * u32(WG_Y);

@group(0) @binding(0) var<storage, read> A: array<f32>;
@group(0) @binding(1) var<storage, read> B: array<f32>;
@group(0) @binding(2) var<storage, read_write> C: array<f32>;

var<workgroup> As: array<f32, BK * BM>;
var<workgroup> Bs: array<f32, BK * BN>;

@compute @workgroup_size(WG_X, WG_Y)
fn matmul(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let m = u32(M);
    let n = u32(N);
    let kdim = u32(K);
    let tid = lid.y * u32(WG_X) + lid.x;
    let row0 = wid.y * BM;
    let col0 = wid.x * BN;
    var acc: array<f32, TM * TN>;
    for (var k0: u32 = 0u; k0 < kdim; k0 += u32(BK)) {
        for (var e: u32 = tid; e < BM * u32(BK); e += NT) {
            let r = e / u32(BK);
            let c = e % u32(BK);
            let gr = row0 + r;
            let gc = k0 + c;
            var v = 0.0;
            if (gr < m && gc < kdim) {
                v = A[gr * kdim + gc];
            }
            As[c * BM + r] = v;
        }
        for (var e: u32 = tid; e < u32(BK) * BN; e += NT) {
            let r = e / BN;
            let c = e % BN;
            let gr = k0 + r;
            let gc = col0 + c;
            var v = 0.0;
            if (gr < kdim && gc < n) {
                v = B[gr * n + gc];
            }
            Bs[r * BN + c] = v;
        }
        workgroupBarrier();
        for (var kk: u32 = 0u; kk < u32(BK); kk++) {
            var a: array<f32, TM>;
            var b: array<f32, TN>;
            for (var i: u32 = 0u; i < u32(TM); i++) {
                a[i] = As[kk * BM + lid.y + i * u32(WG_Y)];
            }
            for (var j: u32 = 0u; j < u32(TN); j++) {
                b[j] = Bs[kk * BN + lid.x + j * u32(WG_X)];
            }
            for (var i: u32 = 0u; i < u32(TM); i++) {
                for (var j: u32 = 0u; j < u32(TN); j++) {
                    acc[i * u32(TN) + j] += a[i] * b[j];
                }
            }
        }
        workgroupBarrier();
    }
    for (var i: u32 = 0u; i < u32(TM); i++) {
        let r = row0 + lid.y + i * u32(WG_Y);
        for (var j: u32 = 0u; j < u32(TN); j++) {
            let c = col0 + lid.x + j * u32(WG_X);
            if (r < m && c < n) {
                C[r * n + c] = acc[i * u32(TN) + j];
            }
        }
    }
}
