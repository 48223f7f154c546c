// out [M, N] (f32) = x [M, K] (f32, any strides) @ w^T for w [N, K] in q8_0 / q4_0 blocks.
// A workgroup takes one row n of w and TM rows of x: its 64 invocations stride over the
// row's blocks, unpack each block once to f32 and add its dot product with the TM rows of x,
// scaled by the block's d, to their sums; the sums then meet through workgroup memory in a
// fixed tree. Decoding (M = 1) reads each weight block once.
//
// INT8 (WGT_QUANT_INT8=1): each block of x is quantized on the fly as q8_0 is (d_x = max|x| /
// 127, values rounded half away from zero) and packed four to a word; the block's integer dot
// product is dot4I8Packed over 8 words (q4_0: its nibbles, 0..15, less 8 times the sum of x's
// values), scaled by d_w * d_x. Otherwise the weight block is unpacked to f32.

{{PRODUCT}}

const TM: u32 = {{TM}}u;
const INT8: bool = {{INT8}};
const LANES: u32 = 64u;

{{BLOCKS}}

var<workgroup> partial: array<array<f32, LANES>, TM>;

// The weight block's values as 8 words of 4 signed bytes in element order (q4_0: 0..15, not
// yet less 8).
fn packed_weights(blk: u32, wv: ptr<function, array<u32, 8>>) {
    for (var k = 0u; k < VALUE_WORDS; k = k + 1u) {
        let w = block_word(blk, k);
        if (Q8) {
            (*wv)[k] = w;
        } else {
            (*wv)[k] = w & 0x0f0f0f0fu;
            (*wv)[k + 4u] = (w >> 4u) & 0x0f0f0f0fu;
        }
    }
}

// Block b of row m of x quantized to q8 and dotted with the packed weights, as f32 scaled by dw.
fn int8_block(wv: ptr<function, array<u32, 8>>, dw: f32, m: u32, b: u32) -> f32 {
    var xs: array<f32, 32>;
    let base = i32(params.x_offset) + i32(m) * params.x_stride0 + i32(b * 32u) * params.x_stride1;
    for (var i = 0u; i < 32u; i = i + 1u) { xs[i] = x[u32(base + i32(i) * params.x_stride1)]; }
    let q = q8_of(xs);
    var isum = 0;
    for (var k = 0u; k < 8u; k = k + 1u) { isum = isum + dot4I8Packed((*wv)[k], q.words[k]); }
    if (!Q8) { isum = isum - 8 * q.sum; }
    return f32(isum) * (dw * q.d);
}

@compute @workgroup_size(64)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
    let g = wid.x + wid.y * groups.x;
    let tiles = (params.M + TM - 1u) / TM;
    if (g >= params.N * tiles) { return; } // uniform: the whole workgroup leaves
    let n = g % params.N;
    let m0 = (g / params.N) * TM;
    var acc: array<f32, TM>;
    var vals: array<f32, 32>;
    var wv: array<u32, 8>;
    for (var b = lid.x; b < params.row_blocks; b = b + LANES) {
        let blk = params.w_first + n * params.w_stride + b;
        let d = block_scale(blk);
        if (INT8) {
            packed_weights(blk, &wv);
            for (var t = 0u; t < TM; t = t + 1u) {
                if (m0 + t >= params.M) { break; }
                acc[t] = acc[t] + int8_block(&wv, d, m0 + t, b);
            }
            continue;
        }
        block_values(blk, &vals);
        for (var t = 0u; t < TM; t = t + 1u) {
            let m = m0 + t;
            if (m >= params.M) { break; }
            var s = 0.0;
            let base = i32(params.x_offset) + i32(m) * params.x_stride0 + i32(b * 32u) * params.x_stride1;
            for (var i = 0u; i < 32u; i = i + 1u) { s = s + vals[i] * x[u32(base + i32(i) * params.x_stride1)]; }
            acc[t] = acc[t] + s * d;
        }
    }
    for (var t = 0u; t < TM; t = t + 1u) { partial[t][lid.x] = acc[t]; }
    for (var half = LANES / 2u; half > 0u; half = half / 2u) {
        workgroupBarrier();
        if (lid.x < half) {
            for (var t = 0u; t < TM; t = t + 1u) { partial[t][lid.x] = partial[t][lid.x] + partial[t][lid.x + half]; }
        }
    }
    if (lid.x == 0u) {
        for (var t = 0u; t < TM; t = t + 1u) {
            if (m0 + t < params.M) { out[(m0 + t) * params.N + n] = finished((m0 + t) * params.N + n, partial[t][0]); }
        }
    }
}
