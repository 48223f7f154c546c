// Integer matrix products (matmul_int.c): out [batch..., M, N] = a [batch..., M, K] @
// b [batch..., K, N], a and b read in place through their strides, products and sums wrapping
// modulo 2^bits. ELEMENT fills in the element type E and its arithmetic: u32 for i32 and u32
// (two's complement makes the wrapping product and sum one computation for both; WGSL's u32
// arithmetic wraps), or a pair of u32 words (low, high) for i64 and u64 with the word-pair
// arithmetic of int64_words.wgsl. Never a float: past 2^24 a float sum drops low bits.
//
// A workgroup computes a 64 x 64 tile of one batch element's output, 4 x 4 outputs per
// invocation (each staged value read once for four products), K in steps of 16 through
// workgroup memory (16 KiB for the 64-bit types: WebGPU's minimum limit). Values past M, N
// or K are staged as zeros, which add nothing.

struct Params {
    M: u32,
    N: u32,
    K: u32,
    batch_ndim: u32,
    tiles_m: u32,
    tiles_n: u32,
    a_offset: u32,      // elements
    b_offset: u32,
    a_sm: i32,          // strides in elements
    a_sk: i32,
    b_sk: i32,
    b_sn: i32,
    groups: u32,        // batch * tiles_m * tiles_n: the grid may be padded past it
    pad0: u32,
    pad1: u32,
    pad2: u32,
    batch_shape: array<vec4<u32>, 2>,
    a_batch: array<vec4<i32>, 2>,
    b_batch: array<vec4<i32>, 2>,
};

@group(0) @binding(0) var<storage, read> a: array<u32>;
@group(0) @binding(1) var<storage, read> b: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;
@group(0) @binding(3) var<uniform> params: Params;

{{ELEMENT}}

// A workgroup's 64 x 64 outputs: invocation (ty, tx) owns rows ty + 16 i and columns
// tx + 16 j (i, j < 4), so that neighbouring invocations read neighbouring staged values.
var<workgroup> ta: array<array<E, 16>, 64>; // [m][k]
var<workgroup> tb: array<array<E, 64>, 16>; // [k][n]

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let group = wid.x + wid.y * groups.x;
    if (group >= params.groups) { return; } // the whole workgroup: barriers stay uniform
    let per_batch = params.tiles_m * params.tiles_n;
    let bi = group / per_batch;
    let tile = group % per_batch;
    let m0 = (tile / params.tiles_n) * 64u;
    let n0 = (tile % params.tiles_n) * 64u;
    var ao = i32(params.a_offset);
    var bo = i32(params.b_offset);
    var rem = bi;
    for (var d = i32(params.batch_ndim) - 1; d >= 0; d = d - 1) {
        let len = params.batch_shape[d / 4][d % 4];
        let idx = i32(rem % len);
        rem = rem / len;
        ao = ao + idx * params.a_batch[d / 4][d % 4];
        bo = bo + idx * params.b_batch[d / 4][d % 4];
    }
    let ty = lid / 16u;
    let tx = lid % 16u;
    var acc: array<array<E, 4>, 4>;
    for (var i = 0u; i < 4u; i = i + 1u) {
        for (var j = 0u; j < 4u; j = j + 1u) { acc[i][j] = zero(); }
    }
    for (var k0 = 0u; k0 < params.K; k0 = k0 + 16u) {
        // Each invocation stages 4 values of each operand (1024 a tile); past M, N or K: zeros.
        for (var r = 0u; r < 4u; r = r + 1u) {
            let e = lid + 256u * r;
            let am = e / 16u;
            let ak = e % 16u;
            var va = zero();
            if (m0 + am < params.M && k0 + ak < params.K) {
                va = load_a(ao + i32(m0 + am) * params.a_sm + i32(k0 + ak) * params.a_sk);
            }
            ta[am][ak] = va;
            let bk = e / 64u;
            let bn = e % 64u;
            var vb = zero();
            if (k0 + bk < params.K && n0 + bn < params.N) {
                vb = load_b(bo + i32(k0 + bk) * params.b_sk + i32(n0 + bn) * params.b_sn);
            }
            tb[bk][bn] = vb;
        }
        workgroupBarrier();
        for (var k = 0u; k < 16u; k = k + 1u) {
            var av: array<E, 4>;
            for (var i = 0u; i < 4u; i = i + 1u) { av[i] = ta[ty + 16u * i][k]; }
            for (var j = 0u; j < 4u; j = j + 1u) {
                let bv = tb[k][tx + 16u * j];
                for (var i = 0u; i < 4u; i = i + 1u) { acc[i][j] = add_e(acc[i][j], mul_e(av[i], bv)); }
            }
        }
        workgroupBarrier();
    }
    for (var i = 0u; i < 4u; i = i + 1u) {
        let m = m0 + ty + 16u * i;
        for (var j = 0u; j < 4u; j = j + 1u) {
            let n = n0 + tx + 16u * j;
            if (m < params.M && n < params.N) { store((bi * params.M + m) * params.N + n, acc[i][j]); }
        }
    }
}
