// Integer matrix products (matmul_int.c): out [batch..., M, N] = a [batch..., M, K] @
// b [batch..., K, N], a and b read in place through their strides, products and sums wrapping
// modulo 2^bits. ELEMENT fills in the element type E and its arithmetic: u32 for i32 and u32
// (two's complement makes the wrapping product and sum one computation for both; WGSL's u32
// arithmetic wraps), or a pair of u32 words (low, high) for i64 and u64 with the word-pair
// arithmetic of int64_words.wgsl. Never a float: past 2^24 a float sum drops low bits.
//
// A workgroup computes a 16 x 16 tile of one batch element's output, one output per
// invocation, K in steps of 16 through workgroup memory (each operand's tile loaded once and
// read by 16 invocations). Invocations past M, N or K load zeros, which add nothing.

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

var<workgroup> ta: array<array<E, 16>, 16>; // [m][k]
var<workgroup> tb: array<array<E, 16>, 16>; // [k][n]

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let group = wid.x + wid.y * groups.x;
    if (group >= params.groups) { return; } // the whole workgroup: barriers stay uniform
    let per_batch = params.tiles_m * params.tiles_n;
    let bi = group / per_batch;
    let tile = group % per_batch;
    let m0 = (tile / params.tiles_n) * 16u;
    let n0 = (tile % params.tiles_n) * 16u;
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
    let m = m0 + ty;
    let n = n0 + tx;
    var acc = zero();
    for (var k0 = 0u; k0 < params.K; k0 = k0 + 16u) {
        let ka = k0 + tx;
        var va = zero();
        if (m < params.M && ka < params.K) { va = load_a(ao + i32(m) * params.a_sm + i32(ka) * params.a_sk); }
        ta[ty][tx] = va;
        let kb = k0 + ty;
        var vb = zero();
        if (kb < params.K && n < params.N) { vb = load_b(bo + i32(kb) * params.b_sk + i32(n) * params.b_sn); }
        tb[ty][tx] = vb;
        workgroupBarrier();
        for (var k = 0u; k < 16u; k = k + 1u) { acc = add_e(acc, mul_e(ta[ty][k], tb[k][tx])); }
        workgroupBarrier();
    }
    if (m < params.M && n < params.N) { store((bi * params.M + m) * params.N + n, acc); }
}
