// out [M, N] (f32) = x [M, K] (f32, any strides) @ w^T for w [N, K] in q8_0 / q4_0 blocks,
// shaped for decoding (M of 1 to 3): the weight's bytes are all that matters, so every
// invocation streams blocks with independent whole-word loads and nothing waits on a barrier
// inside a block.
//
// A workgroup of ROWS * LANES invocations takes ROWS rows n of w for one row m of x. The
// LANES invocations of a row stride over its blocks (adjacent invocations, adjacent blocks),
// so each row's bytes are read once, spread over the workgroup. x goes through workgroup
// memory a tile of TILE_BLOCKS blocks at a time, read from storage once for all ROWS rows
// (workgroup memory is 16 KiB at least, too little for a whole row of x). Each block's
// values are read as the words that hold them (quant_blocks.wgsl: a q8_0 block's values
// start 2 bytes into a word for every other block, so such words are two aligned loads
// shifted together) and unpacked four at a time. A fixed tree over each row's LANES partial
// sums ends it: the same order every run, no subgroup operations.
//
// INT8 (WGT_QUANT_INT8=1): the tile of x is quantized once per workgroup as q8_0 is (d_x =
// max|x| / 127, values rounded half away from zero) and kept packed four to a word with its
// scale and its sum; a block's integer dot product is dot4I8Packed over 8 words (q4_0: its
// nibbles, 0..15, less 8 times the sum of x's values), scaled by d_w * d_x. Per block this is
// exactly what quant_matmul.wgsl computes.

{{PRODUCT}}

const INT8: bool = {{INT8}};
const ROWS: u32 = 8u;
const LANES: u32 = 32u;
const TILE_BLOCKS: u32 = 64u; // 2048 values of x: 8 KiB as f32

{{BLOCKS}}

var<workgroup> xs: array<vec4<f32>, TILE_BLOCKS * 8u>; // the tile as f32, four values a slot
var<workgroup> xq: array<u32, TILE_BLOCKS * 8u>;       // INT8: the tile as q8, four a word
var<workgroup> xd: array<f32, TILE_BLOCKS>;            // INT8: each block's d_x
var<workgroup> xsum: array<i32, TILE_BLOCKS>;          // INT8: each block's sum of q8 values
var<workgroup> partial: array<f32, ROWS * LANES>;

fn x_at(base: i32, e: u32) -> f32 { return x[u32(base + i32(e) * params.x_stride1)]; }

// Block j of the tile (its first value at e) quantized to q8 into xq, xd and xsum.
fn quantize_x(base: i32, e: u32, j: u32) {
    var v: array<f32, 32>;
    for (var i = 0u; i < 32u; i = i + 1u) { v[i] = x_at(base, e + i); }
    let q = q8_of(v);
    for (var k = 0u; k < 8u; k = k + 1u) { xq[8u * j + k] = q.words[k]; }
    xd[j] = q.d;
    xsum[j] = q.sum;
}

// Weight block blk dotted with block j of the tile, scaled.
fn block_dot(blk: u32, j: u32) -> f32 {
    if (INT8) {
        var isum = 0;
        for (var k = 0u; k < VALUE_WORDS; k = k + 1u) {
            let w = block_word(blk, k);
            if (Q8) {
                isum = isum + dot4I8Packed(w, xq[8u * j + k]);
            } else { // nibbles: low ones are values 4k.., high ones 16 + 4k..
                isum = isum + dot4I8Packed(w & 0x0f0f0f0fu, xq[8u * j + k]) +
                       dot4I8Packed((w >> 4u) & 0x0f0f0f0fu, xq[8u * j + 4u + k]);
            }
        }
        if (!Q8) { isum = isum - 8 * xsum[j]; }
        return f32(isum) * (block_scale(blk) * xd[j]);
    }
    var s = 0.0;
    for (var k = 0u; k < VALUE_WORDS; k = k + 1u) {
        let w = block_word(blk, k);
        if (Q8) {
            s = s + dot(vec4<f32>(unpack4xI8(w)), xs[8u * j + k]);
        } else {
            let lo = vec4<f32>(vec4<i32>(unpack4xU8(w & 0x0f0f0f0fu)) - vec4<i32>(8));
            let hi = vec4<f32>(vec4<i32>(unpack4xU8((w >> 4u) & 0x0f0f0f0fu)) - vec4<i32>(8));
            s = s + dot(lo, xs[8u * j + k]) + dot(hi, xs[8u * j + 4u + k]);
        }
    }
    return s * block_scale(blk);
}

@compute @workgroup_size(ROWS * LANES)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
    let g = wid.x + wid.y * groups.x;
    let row_groups = (params.N + ROWS - 1u) / ROWS;
    if (g >= row_groups * params.M) { return; } // uniform: the whole workgroup leaves
    let m = g / row_groups;
    let lane = li % LANES;
    let n = (g % row_groups) * ROWS + li / LANES;
    let live = n < params.N; // rows past N still share the tiles' loads and barriers
    let first = params.w_first + n * params.w_stride;
    let base = i32(params.x_offset) + i32(m) * params.x_stride0;
    var acc = 0.0;
    for (var t0 = 0u; t0 < params.row_blocks; t0 = t0 + TILE_BLOCKS) {
        let nb = min(TILE_BLOCKS, params.row_blocks - t0);
        workgroupBarrier(); // the last tile is used up
        if (INT8) {
            if (li < nb) { quantize_x(base, (t0 + li) * 32u, li); }
        } else {
            for (var i = li; i < nb * 8u; i = i + ROWS * LANES) {
                let e = t0 * 32u + 4u * i;
                xs[i] = vec4<f32>(x_at(base, e), x_at(base, e + 1u), x_at(base, e + 2u), x_at(base, e + 3u));
            }
        }
        workgroupBarrier();
        if (live) {
            for (var j = lane; j < nb; j = j + LANES) { acc = acc + block_dot(first + t0 + j, j); }
        }
    }
    partial[li] = acc;
    for (var half = LANES / 2u; half > 0u; half = half / 2u) {
        workgroupBarrier();
        if (lane < half) { partial[li] = partial[li] + partial[li + half]; }
    }
    if (lane == 0u && live) { out[m * params.N + n] = finished(m * params.N + n, partial[li]); }
}
