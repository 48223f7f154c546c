// Attention with the keys split into chunks, second pass: merges the chunks' partial results
// (attention_split.wgsl: per row and chunk m, l and DV unnormalised sums) into the output:
// out = sum_c exp2(m_c - M) o_c / sum_c exp2(m_c - M) l_c with M the largest m_c. A row no
// chunk saw a key of (every m_c -inf) gets NaN, as the one-pass kernel gives. An invocation
// writes W output values of a row (W = 2 for f16, stored packed in one u32).

struct Params {
    items: u32,          // rows * ceil(DV / W)
    chunks: u32,
    neg_inf_bits: u32,
    nan_bits: u32,
};

@group(0) @binding(0) var<storage, read> part: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<{{OUT_STORAGE}}>;
@group(0) @binding(2) var<uniform> params: Params;

const DV: u32 = {{DV}}u;
const W: u32 = {{W}}u;

// f16 bits of x; pack2x16float leaves values beyond f16's range undefined, so those (and
// NaN) are set from the bits.
fn f16_half(x: f32) -> u32 {
    let m = bitcast<u32>(x) & 0x7fffffffu;
    if (m < 0x477ff000u) { return pack2x16float(vec2<f32>(x, 0.0)) & 0xffffu; }
    return select(((bitcast<u32>(x) >> 16u) & 0x8000u) | 0x7c00u, 0x7e00u, m > 0x7f800000u);
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let item = (wid.x + wid.y * nwg.x) * 64u + tid;
    if (item >= params.items) { return; }
    let per = (DV + W - 1u) / W;
    let row = item / per;
    let col = (item % per) * W;
    let base = row * params.chunks * (DV + 2u);
    let ninf = bitcast<f32>(params.neg_inf_bits);
    var top = ninf;
    for (var c = 0u; c < params.chunks; c = c + 1u) { top = max(top, part[base + c * (DV + 2u)]); }
    var sum = 0.0;
    var acc = vec2<f32>(0.0);
    for (var c = 0u; c < params.chunks; c = c + 1u) {
        let at = base + c * (DV + 2u);
        let mc = part[at];
        if (mc > ninf) {
            let f = exp2(mc - top);
            sum = sum + f * part[at + 1u];
            acc.x = acc.x + f * part[at + 2u + col];
            if (W == 2u) { acc.y = acc.y + f * part[at + 3u + col]; }
        }
    }
    let r = select(acc / sum, vec2<f32>(bitcast<f32>(params.nan_bits)), sum == 0.0);
    {{STORE}}
}
