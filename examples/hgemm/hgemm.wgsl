// Half-precision matrix multiply C = A·B, row-major f16 in and out, products accumulated in
// f32: the portable twin of hgemm.cu, with the same parameters. A workgroup of
// 32·WARPS_M·WARPS_N invocations (4·WARPS_M rows of them by 8·WARPS_N columns) computes a
// BM×BN tile of C, each invocation a TM×TN part of it, staging BK-wide slices of A and B in
// workgroup memory (as f16). M, N and K must be multiples of BM, BN and BK.
enable f16;

const TY: u32 = 4u * u32(WARPS_M);
const TX: u32 = 8u * u32(WARPS_N);
const NT: u32 = TX * TY;
const TM: u32 = u32(BM) / TY;
const TN: u32 = u32(BN) / TX;

@group(0) @binding(0) var<storage, read> A: array<f16>;
@group(0) @binding(1) var<storage, read> B: array<f16>;
@group(0) @binding(2) var<storage, read_write> C: array<f16>;

var<workgroup> As: array<f16, BK * BM>;
var<workgroup> Bs: array<f16, BK * BN>;

@compute @workgroup_size(NT)
fn hgemm(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let n = u32(N);
    let kdim = u32(K);
    let ty = tid / TX;
    let tx = tid % TX;
    let row0 = wid.y * u32(BM);
    let col0 = wid.x * u32(BN);
    var acc: array<f32, TM * TN>;
    for (var k0: u32 = 0u; k0 < kdim; k0 += u32(BK)) {
        // As is stored k-major (As[k][m]) so that the inner loop reads it contiguously.
        for (var e: u32 = tid; e < u32(BM) * u32(BK); e += NT) {
            let r = e / u32(BK);
            let c = e % u32(BK);
            As[c * u32(BM) + r] = A[(row0 + r) * kdim + k0 + c];
        }
        for (var e: u32 = tid; e < u32(BK) * u32(BN); e += NT) {
            let r = e / u32(BN);
            let c = e % u32(BN);
            Bs[r * u32(BN) + c] = B[(k0 + r) * n + col0 + c];
        }
        workgroupBarrier();
        for (var kk: u32 = 0u; kk < u32(BK); kk++) {
            var a: array<f32, TM>;
            var b: array<f32, TN>;
            for (var i: u32 = 0u; i < TM; i++) {
                a[i] = f32(As[kk * u32(BM) + ty + i * TY]);
            }
            for (var j: u32 = 0u; j < TN; j++) {
                b[j] = f32(Bs[kk * u32(BN) + tx + j * TX]);
            }
            for (var i: u32 = 0u; i < TM; i++) {
                for (var j: u32 = 0u; j < TN; j++) {
                    acc[i * TN + j] += a[i] * b[j];
                }
            }
        }
        workgroupBarrier();
    }
    for (var i: u32 = 0u; i < TM; i++) {
        let r = row0 + ty + i * TY;
        for (var j: u32 = 0u; j < TN; j++) {
            C[r * n + col0 + tx + j * TX] = f16(acc[i * TN + j]);
        }
    }
}
