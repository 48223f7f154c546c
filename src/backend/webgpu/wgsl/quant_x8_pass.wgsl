// x [M, K] (f32, any strides) quantized to q8 blocks for the wide matrix-vector kernel's
// integer path (quant_matvec_lanes.wgsl with INT8, where x's blocks do not fit in workgroup
// memory): block b of row m goes to xq[12 (m B + b) ..], twelve words: the 32 values packed
// four to a word, then d_x's bits, the sum of the values and two zero words, so the wide
// kernel reads a block of x with three 16-byte loads that every row of w its workgroup takes
// shares.
//
// Eight invocations share a block, four values each: the pass runs before every product of
// the integer path, which waits for it, so its latency counts, not its arithmetic. The block's
// largest magnitude and its values' sum are gathered through workgroup memory; both are exact
// (a maximum, an integer sum), so the words are those quant_x8.wgsl's q8_of gives, which the
// other kernels use.

//
// With NORM, x is first normalized as rms_norm would (quant_norm.wgsl: each workgroup takes
// the statistics of every row, at most three), times the norm's weight where it has one
// (HAS_G); with F32_OUT too, those values are written as f32 for the float path's product
// instead of being quantized.

struct Params {
    M: u32,
    row_blocks: u32, // B = K / 32
    x_offset: u32,
    x_stride0: i32,
    x_stride1: i32,
    g_offset: u32,   // the norm's weight (with NORM and HAS_G)
    g_stride: i32,
    eps: f32,        // the norm's eps (with NORM)
}

const NORM: bool = {{NORM}};
const HAS_G: bool = {{HAS_G}};
// The normed values themselves, as f32 [M, K] in xq's words, for the float path's products
// (with NORM; no quantizing).
const F32_OUT: bool = {{F32_OUT}};

{{BINDINGS}}

{{X8}}

fn norm_x(m: u32, k: u32) -> f32 {
    return x[u32(i32(params.x_offset) + i32(m) * params.x_stride0 + i32(k) * params.x_stride1)];
}

{{NORM_STATS}}

const PARTS: u32 = 8u;  // invocations a block

var<workgroup> amax_of: array<f32, 256>;
var<workgroup> nan_of: array<u32, 256>;
var<workgroup> sum_of: array<i32, 256>;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
    let i = (wid.x + wid.y * groups.x) * (256u / PARTS) + li / PARTS;
    let part = li % PARTS;
    let first = li - part;
    let valid = i < params.M * params.row_blocks;
    // The statistics of every row (at most three: the pass serves decoding's products), each
    // workgroup its own.
    norm_rows(li, params.M);
    var v = array<f32, 4>(0.0, 0.0, 0.0, 0.0);
    if (valid) {
        let m = i / params.row_blocks;
        let b = i % params.row_blocks;
        let s = params.x_stride1;
        let base = i32(params.x_offset) + i32(m) * params.x_stride0 + i32(b * 32u + 4u * part) * s;
        for (var j = 0; j < 4; j = j + 1) { v[j] = x[u32(base + j * s)]; }
        if (NORM) {
            for (var j = 0u; j < 4u; j = j + 1u) {
                v[j] = (v[j] * norm_inv[m]) * norm_rs[m];
                if (HAS_G) { v[j] = v[j] * g[u32(i32(params.g_offset) + i32(b * 32u + 4u * part + j) * params.g_stride)]; }
            }
        }
    }
    if (F32_OUT) {
        if (valid) {
            for (var j = 0u; j < 4u; j = j + 1u) { xq[32u * i + 4u * part + j] = bitcast<u32>(v[j]); }
        }
        return;
    }
    // As q8_of: NaN kept out of the maximum and flagged, 1 / d only for a normal d.
    var part_max = 0.0;
    var part_nan = 0u;
    for (var j = 0u; j < 4u; j = j + 1u) {
        part_nan = part_nan | u32(q8_is_nan(v[j]));
        part_max = max(part_max, select(abs(v[j]), 0.0, q8_is_nan(v[j])));
    }
    amax_of[li] = part_max;
    nan_of[li] = part_nan;
    workgroupBarrier();
    var amax = 0.0;
    var nan = 0u;
    for (var j = 0u; j < PARTS; j = j + 1u) {
        amax = max(amax, amax_of[first + j]);
        nan = nan | nan_of[first + j];
    }
    var d = amax / 127.0;
    var id = 0.0;
    if (q8_is_normal(d)) { id = 1.0 / d; }
    if (nan != 0u) { d = bitcast<f32>(q8_nan_bits); }
    var word = 0u;
    var sum = 0;
    for (var j = 0u; j < 4u; j = j + 1u) {
        let p = v[j] * id;
        let c = select(i32(round_away(p)), 0, q8_is_nan(p));
        sum = sum + c;
        word = word | ((bitcast<u32>(c) & 0xffu) << (8u * j));
    }
    sum_of[li] = sum;
    workgroupBarrier();
    if (!valid) { return; }
    xq[12u * i + part] = word;
    if (part == 0u) {
        var total = 0;
        for (var j = 0u; j < PARTS; j = j + 1u) { total = total + sum_of[first + j]; }
        xq[12u * i + 8u] = bitcast<u32>(d);
        xq[12u * i + 9u] = bitcast<u32>(total);
        xq[12u * i + 10u] = 0u;
        xq[12u * i + 11u] = 0u;
    }
}
