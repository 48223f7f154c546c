// Scaled dot-product attention in one pass over the keys (flash-attention style):
// out [batch, Lq, DV] = softmax(q k^T * scale, masked) v, without ever holding the [Lq, Lk]
// scores in memory.
//
// A workgroup owns BR = 64 query rows of one batch element and walks the keys in tiles of
// BC = 64. Per tile it
//   1. computes the 64 x 64 scores S = q k^T, staging q and k in chunks of 16 values of D
//      through two workgroup buffers (the next chunk's loads wait in registers while the
//      current chunk is multiplied; one barrier per chunk);
//   2. takes each row's maximum (16 partial maxima per row meet in workgroup memory, in a
//      fixed order) and turns S into probabilities against the running maximum: the online
//      softmax, which rescales the row's earlier sum and output when the maximum grows;
//   3. stores the probabilities transposed in workgroup memory and adds P v into the output
//      accumulators, staging v in chunks of VK keys the same way as q and k.
// Each invocation owns 4 RG query rows: in S, 4 keys of each (16 lanes cover the 64 keys);
// in the output, the vec4 columns lane + 16 c of each row. Row sums are kept per invocation
// (all lanes of a row share its maximum, so their partial sums scale alike) and combined once
// at the end. The host generates the unrolled steps (S_STEP, PV_STEP, ...) so that every
// accumulator is a named register.
//
// Under the causal mask a block skips the tiles past its last visible key, and only tiles
// that cross the diagonal or the end of the keys test each score. Workgroups take the row
// blocks from the last (the most keys) to the first, so the longest start first.
//
// Scores are kept in base 2 (scale * log2(e) folded in), one exp2 per probability. A query
// whose keys are all masked keeps maximum -inf and sum 0 and gets NaN, as in PyTorch.
// f16 is stored packed two to a u32; all arithmetic is f32.
//
// With a key count (wgt_attention_prefix: an i32 or u32 binding of one element, read here
// so that a compiled graph's dispatch sees its current value), only keys below it (clamped
// to Lk) exist for the kernel: scores past it are masked and v reads zeros there, so
// nothing past it reaches the result. The tiles past it still run: the loop over tiles
// holds barriers, and WGSL's uniformity rules refuse a bound read from storage there.

struct Params {
    lq: u32,
    lk: u32,
    batch: u32,          // product of the batch dimensions
    row_blocks: u32,     // ceil(lq / 64)
    groups: u32,         // batch * row_blocks
    causal: u32,
    scale_log2: f32,     // scale * log2(e)
    neg_inf_bits: u32,
    nan_bits: u32,
    count_offset: u32,   // element offset of the key count (with a count binding)
    pad0: u32,
    pad1: u32,
{{VIEWS}}
};

@group(0) @binding(0) var<storage, read> q: array<{{Q_STORAGE}}>;
@group(0) @binding(1) var<storage, read> k: array<{{K_STORAGE}}>;
@group(0) @binding(2) var<storage, read> v: array<{{V_STORAGE}}>;
{{COUNT_DECL}}
@group(0) @binding({{OUT_BINDING}}) var<storage, read_write> out: array<{{OUT_STORAGE}}>;
@group(0) @binding({{PARAMS_BINDING}}) var<uniform> params: Params;

const WG: u32 = {{WG}}u;       // invocations: 16 lanes x (16 / RG) row groups
const RG: u32 = {{RG}}u;       // vec4s of query rows per invocation
const D: u32 = {{D}}u;         // head dimension of q and k
const DV: u32 = {{DV}}u;       // head dimension of v
const DVU: u32 = {{DVU}}u;     // vec4 units per row of v: ceil(DV / 4)
const VK: u32 = {{VK}}u;       // keys per staged chunk of v
const DCH: u32 = (D + 15u) / 16u;

// stage holds, in turn: chunks of q and k (per buffer 16 values of D x 16 vec4s of 4 rows,
// then the same for 64 keys: 512 vec4s; two buffers), chunks of v (VK keys x DVU vec4s, two
// buffers), and row partials (16 lanes x 16 vec4s of 4 rows). pt holds the tile's
// probabilities, [64 keys][16 vec4s of 4 rows].
var<workgroup> stage: array<vec4<f32>, 1024>;
var<workgroup> pt: array<vec4<f32>, 1024>;

// Storage index of the batch element's first element in q, k and v.
var<private> q_base: u32;
var<private> k_base: u32;
var<private> v_base: u32;
// Keys that exist: Lk, or the key count clamped to [0, Lk].
var<private> lk_valid: u32;

{{BASES}}
// load_x(i, n): n (1 to 4) elements of x from element i on, along its head dimension.
{{LOADS}}

// Four values of the head dimension from (row, d) on; zeros outside the matrix.
fn fetch_q(row: u32, d: u32) -> vec4<f32> {
    if (row >= params.lq || d >= D) { return vec4<f32>(0.0); }
    return load_q(q_base + row * u32(params.q_sr) + d * u32(params.q_sd), min(4u, D - d));
}
fn fetch_k(row: u32, d: u32) -> vec4<f32> {
    if (row >= params.lk || d >= D) { return vec4<f32>(0.0); }
    return load_k(k_base + row * u32(params.k_sr) + d * u32(params.k_sd), min(4u, D - d));
}
fn fetch_v(row: u32, d: u32) -> vec4<f32> {
    if (row >= lk_valid || d >= DV) { return vec4<f32>(0.0); }
    return load_v(v_base + row * u32(params.v_sr) + d * u32(params.v_sd), min(4u, DV - d));
}

// Slot s of a q or k chunk (row s / 4, values 4 (s % 4) .. + 3 of the chunk) into its
// staging buffer at `at`, transposed: [value][row].
fn put_chunk(at: u32, s: u32, x: vec4<f32>) {
    let r = s / 4u;
    let i = at + (s % 4u) * 64u + r / 4u;
    stage[i][r % 4u] = x.x;
    stage[i + 16u][r % 4u] = x.y;
    stage[i + 32u][r % 4u] = x.z;
    stage[i + 48u][r % 4u] = x.w;
}

fn max4(x: vec4<f32>) -> f32 { return max(max(x.x, x.y), max(x.z, x.w)); }
fn sum4(x: vec4<f32>) -> f32 { return (x.x + x.y) + (x.z + x.w); }

// The scores of `row` for keys key0 .. key0 + 3 with the masked ones at -inf.
fn masked(s: vec4<f32>, row: u32, key0: u32, off: i32, ninf: f32) -> vec4<f32> {
    let keys = vec4<i32>(i32(key0)) + vec4<i32>(0, 1, 2, 3);
    var keep = keys < vec4<i32>(i32(lk_valid));
    if (params.causal != 0u) { keep = keep & (keys <= vec4<i32>(i32(row) + off)); }
    return select(vec4<f32>(ninf), s, keep);
}

// 16 lanes' partials of vec4 row group g, as written to stage[lane * 16 + g]: max or sum.
fn combine_max(g: u32) -> vec4<f32> {
    var r = stage[g];
    for (var t = 1u; t < 16u; t = t + 1u) { r = max(r, stage[t * 16u + g]); }
    return r;
}
fn combine_sum(g: u32) -> vec4<f32> {
    var r = stage[g];
    for (var t = 1u; t < 16u; t = t + 1u) { r = r + stage[t * 16u + g]; }
    return r;
}

// f16 bits of x; pack2x16float leaves values beyond f16's range undefined, so those (and
// NaN) are set from the bits.
fn f16_half(x: f32) -> u32 {
    let m = bitcast<u32>(x) & 0x7fffffffu;
    if (m < 0x477ff000u) { return pack2x16float(vec2<f32>(x, 0.0)) & 0xffffu; }
    return select(((bitcast<u32>(x) >> 16u) & 0x8000u) | 0x7c00u, 0x7e00u, m > 0x7f800000u);
}

// Output row `row` (from storage index `first`), vec4 unit u, of the batch element.
fn store(first: u32, u: u32, x: vec4<f32>) {
    {{STORE}}
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let id = wid.x + wid.y * nwg.x;
    if (id >= params.groups) { return; }
    let rb = params.row_blocks - 1u - id / params.batch;
    let bi = id % params.batch;
    lk_valid = params.lk;
{{COUNT_LOAD}}
    let bases = view_bases(bi);
    q_base = bases.x;
    k_base = bases.y;
    v_base = bases.z;
    let i0 = rb * 64u;
    let tx = tid % 16u;
    let ty = tid / 16u;
    let off = i32(params.lk) - i32(params.lq);
    let ninf = bitcast<f32>(params.neg_inf_bits);
    let ninf4 = vec4<f32>(ninf);
    // Keys [0, kend) are visible to some row of the block.
    var kend = i32(params.lk);
    if (params.causal != 0u) {
        kend = clamp(i32(min(i0 + 63u, params.lq - 1u)) + off + 1, 0, i32(params.lk));
    }
    let tiles = (u32(kend) + 63u) / 64u;
{{ACC_DECL}}
    for (var t = 0u; t < tiles; t = t + 1u) {
        let k0 = t * 64u;
        // 1. S = q k^T, D in chunks of 16.
{{S_DECL}}
        var cc = 0u;
{{QK_FETCH}}
{{QK_PUT}}
        workgroupBarrier();
        for (; cc < DCH; cc = cc + 1u) {
            let sb = (cc % 2u) * 512u;
            let nb = 512u - sb;
            if (cc + 1u < DCH) {
                let cn = cc + 1u;
{{QK_FETCH_NEXT}}
            }
{{S_STEP}}
            if (cc + 1u < DCH) {
{{QK_PUT_NEXT}}
            }
            workgroupBarrier();
        }
        // 2. Masked base-2 logits, row maxima, probabilities.
{{S_SCALE}}
        if (k0 + 64u > lk_valid || (params.causal != 0u && i32(k0) + 63 > i32(i0) + off)) {
{{S_MASK}}
        }
{{ROW_MAX}}
        var vc = 0u;
{{V_FETCH}}
        workgroupBarrier();
{{SOFTMAX}}
        workgroupBarrier();
        // 3. out += P v, v in chunks of VK keys (the first chunk's loads were issued above).
{{V_PUT}}
        workgroupBarrier();
        for (; vc < 64u / VK; vc = vc + 1u) {
            let vb = (vc % 2u) * VK * DVU;
            let nb = VK * DVU - vb;
            if (vc + 1u < 64u / VK) {
                let cn = vc + 1u;
{{V_FETCH_NEXT}}
            }
{{PV_STEP}}
            if (vc + 1u < 64u / VK) {
{{V_PUT_NEXT}}
            }
            workgroupBarrier();
        }
    }
    // Row sums, then the rows divided by them (NaN where no key was visible).
{{ROW_SUM}}
    workgroupBarrier();
    let nan4 = vec4<f32>(bitcast<f32>(params.nan_bits));
    let o_first = bi * params.lq * DV;
{{FINISH}}
}
