// out [M, N] (f32) = x [M, K] (f32) @ w^T for w [N, K] in q8_0 / q4_0 blocks, for decoding's
// few rows of x (M of 1 to 3), over the device layout of blocks (quant_blocks.wgsl: every
// block's values, 16-byte words QV b .., then the scales from u32 word params.scales).
//
// Why this shape: the product is bound by the weight's bytes, and memory delivers them fastest
// when neighbouring invocations read neighbouring bytes. LANES invocations walk a row of w
// together, invocation l taking blocks l, l + LANES, ...: each load of the lanes reads one run
// of LANES blocks' values and one run of their scales. Each group of lanes takes ROWS rows of
// w, so a block of x serves ROWS blocks of w. The lanes' sums are added by a fixed tree in
// workgroup memory: the same order every run.
//
// With INT8 (WGT_QUANT_INT8=1) x is quantized to q8 blocks (quant_x8.wgsl's q8_of) and each
// block is 8 integer dot products of four packed bytes (q4_0: 4 of the low nibbles, 4 of the
// high, less 8 times x's sum); quant_x8_pass.wgsl has quantized x first (three 16-byte words
// a block).

{{PRODUCT}}

const LANES: u32 = {{LANES}}u;        // invocations along a row of w
const GROUPS: u32 = 256u / LANES;     // groups of lanes per workgroup
const ROWS: u32 = {{ROWS}}u;          // rows of w per group
const MX: u32 = {{MX}}u;              // rows of x (1 to 3)
const Q8: bool = {{Q8}};
const QV: u32 = select(1u, 2u, Q8);   // 16-byte words of values per block
const SLOTS: u32 = ROWS * MX;         // sums per group

var<workgroup> partial: array<f32, 256u * SLOTS>;

fn scale_of(b: u32) -> f32 {
    let i = params.scales + b / 2u;
    return unpack2x16float(wq[i / 4u][i % 4u] >> (16u * (b % 2u))).x;
}

// The four bytes of w as f32 plus 2^23: each byte becomes the low bits of 2^23's mantissa. An
// integer-to-float conversion runs at a fraction of the rate of float arithmetic on GPUs
// (an eighth on NVIDIA's), and the float path converts every weight value. The caller
// subtracts 2^23 plus the values' offset (128 for q8_0's bytes with the sign bit flipped, 8 for
// q4_0's nibbles), exactly in f32.
fn byte_values(w: u32) -> vec4<f32> {
    let bytes = vec4<u32>(w & 0xffu, (w >> 8u) & 0xffu, (w >> 16u) & 0xffu, w >> 24u);
    return bitcast<vec4<f32>>(bytes | vec4<u32>(0x4b000000u));
}

fn dot_words(a: vec4<u32>, b: vec4<u32>) -> i32 {
    return dot4I8Packed(a.x, b.x) + dot4I8Packed(a.y, b.y) + dot4I8Packed(a.z, b.z) + dot4I8Packed(a.w, b.w);
}

{{X_READ}}

{{BLOCK_DOT}}

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
    let lane = li % LANES;
    let group = li / LANES;
    let n0 = ((wid.x + wid.y * groups.x) * GROUPS + group) * ROWS;
    var acc: array<f32, SLOTS>;
    for (var s = 0u; s < SLOTS; s = s + 1u) { acc[s] = 0.0; }
    // Rows past N (the last workgroup's) read row N - 1 again and are not written.
    var first: array<u32, ROWS>;
    for (var r = 0u; r < ROWS; r = r + 1u) {
        first[r] = params.w_first + min(n0 + r, params.N - 1u) * params.w_stride;
    }
    for (var kb = lane; kb < params.row_blocks; kb = kb + LANES) {
        // Every row's loads first, so they are in flight together.
        var w: array<vec4<u32>, ROWS * QV>;
        var d: array<f32, ROWS>;
        for (var r = 0u; r < ROWS; r = r + 1u) {
            let b = first[r] + kb;
            for (var v = 0u; v < QV; v = v + 1u) { w[r * QV + v] = wq[b * QV + v]; }
            d[r] = scale_of(b);
        }
        for (var m = 0u; m < MX; m = m + 1u) {
            let xb = x_block(m, kb);
            for (var r = 0u; r < ROWS; r = r + 1u) {
                acc[r * MX + m] = acc[r * MX + m] + block_dot(w[r * QV], w[r * QV + QV - 1u], d[r], xb);
            }
        }
    }
    for (var s = 0u; s < SLOTS; s = s + 1u) { partial[(group * SLOTS + s) * LANES + lane] = acc[s]; }
    for (var half = LANES / 2u; half > 0u; half = half / 2u) {
        workgroupBarrier();
        if (lane < half) {
            for (var s = 0u; s < SLOTS; s = s + 1u) {
                let i = (group * SLOTS + s) * LANES + lane;
                partial[i] = partial[i] + partial[i + half];
            }
        }
    }
    workgroupBarrier();
    if (lane < SLOTS) {
        let n = n0 + lane / MX;
        let m = lane % MX;
        if (n < params.N) { out[m * params.N + n] = finished(m * params.N + n, partial[(group * SLOTS + lane) * LANES]); }
    }
}
