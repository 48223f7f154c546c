// f16 scaled dot-product attention with both products on subgroup matrices
// (src/backend/webgpu/attention_sgmatrix.c): out [batch, Lq, DV] = softmax(q k^T * scale,
// masked) v, flash-attention style, without the [Lq, Lk] scores in memory.
//
// A workgroup owns BR = NSG * SM query rows of one batch element, each of its NSG subgroups
// SM of them, and walks the keys in tiles of BC. Per tile:
//   1. S = q k^T on subgroup matrices (f16 operands, f32 result), D in chunks of DC: q's
//      chunk staged [BR][QS], k's transposed [DC][KS] (so both load row-major); the
//      subgroup's BC / SN result matrices go to ss, [BR][SSS] f32.
//   2. The online softmax in f32, from ss: RPI rows per invocation, each row's keys split
//      over PARTS invocations whose maxima meet in `red`; the probabilities go to sh as f16
//      ([BR][PS], the left operand of P v), each row's rescale factor to rowv.
//   3. P v on subgroup matrices, v staged VC keys at a time ([VC][VS]), into fresh result
//      matrices; those pass through ss BC columns at a time into the output accumulators,
//      plain f32 registers of each invocation (o <- o * rescale + P v): a result matrix
//      cannot be scaled row by row, and the output must not accumulate in f16.
// q, k and v are read one value at a time through their strides (any view); values past
// Lq, Lk, D and DV are staged as zeros. Scores are in base 2 (scale * log2(e) folded in).
// A query whose keys are all masked keeps sum 0 and gets NaN, as the plain kernel does.
enable f16;
{{ENABLES}}

struct Params {
    lq: u32, lk: u32, batch: u32, row_blocks: u32,
    groups: u32, batch_ndim: u32, causal: u32, scale_log2: f32,
    q_offset: u32, k_offset: u32, v_offset: u32, neg_inf_bits: u32,
    q_sr: i32, q_sd: i32, k_sr: i32, k_sd: i32,
    v_sr: i32, v_sd: i32, nan_bits: u32, pad: u32,  // -inf, and two f16 NaNs: not constants,
    // which WGSL rejects
    batch_shape: array<vec4<u32>, 2>,
    q_batch: array<vec4<i32>, 2>,  // strides of the batch dimensions (0 where broadcast)
    k_batch: array<vec4<i32>, 2>,
    v_batch: array<vec4<i32>, 2>,
}

@group(0) @binding(0) var<storage, read> q: array<f16>;
@group(0) @binding(1) var<storage, read> k: array<f16>;
@group(0) @binding(2) var<storage, read> v: array<f16>;
@group(0) @binding(3) var<storage, read_write> out: array<f16>;
@group(0) @binding(4) var<uniform> params: Params;

const SG = {{SG}}u;
const SM = {{SM}}u;
const SN = {{SN}}u;
const SK = {{SK}}u;
const WG = {{WG}}u;
const BR = {{BR}}u;     // query rows per workgroup
const BC = {{BC}}u;     // keys per tile
const DC = {{DC}}u;     // head-dimension chunk of q k^T
const D = {{D}}u;
const DP = {{DP}}u;     // D rounded up to DC
const DV = {{DV}}u;
const DVP = {{DVP}}u;   // DV rounded up to SN
const VC = {{VC}}u;     // keys of v per staged chunk
const QS = DC + 8u;     // staged line lengths, 16 bytes of padding against bank conflicts
const KS = BC + 8u;
const PS = BC + 8u;
const VS = DVP + 8u;
// Score lines: 4 values of padding, so the softmax's invocations (one row each, rows
// consecutive) meet in 4-way rather than 32-way bank conflicts; 16-byte aligned, as matrix
// loads and stores need.
const SSS = BC + 4u;
const KOFF = BR * QS;   // k's chunk after q's
const VOFF = BR * PS;   // v's chunk after the probabilities
const PARTS = {{PARTS}}u;
const RS = {{RS}}u;     // row slots: invocations lid and lid + RS * p share a row

var<workgroup> sh: array<f16, {{SH}}u>;
var<workgroup> ss: array<f32, BR * SSS>;
var<workgroup> red: array<f32, PARTS * BR>;
var<workgroup> rowv: array<f32, BR>;

{{HELPERS}}

// Base-2 logit of (row, key k0 + j) of the tile, -inf where masked.
fn score(row: u32, j: u32, k0: u32, i0: u32, off: i32, ninf: f32) -> f32 {
    let key = k0 + j;
    var keep = key < params.lk;
    if (params.causal != 0u) { keep = keep && i32(key) <= i32(i0 + row) + off; }
    return select(ninf, ss[row * SSS + j] * params.scale_log2, keep);
}

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>{{LANE_PARAM}}) {
{{LANE_LET}}
    let id = wid.x + wid.y * nwg.x;
    if (id >= params.groups) { return; }
    // Row blocks from the last (under the causal mask, the most keys) to the first.
    let rb = params.row_blocks - 1u - id / params.batch;
    let bi = id % params.batch;
    var q_base = params.q_offset;
    var k_base = params.k_offset;
    var v_base = params.v_offset;
    var rest = bi;
    for (var d = i32(params.batch_ndim) - 1; d >= 0; d = d - 1) {
        let n = params.batch_shape[d / 4][d % 4];
        let c = rest % n;
        rest = rest / n;
        q_base = q_base + c * u32(params.q_batch[d / 4][d % 4]);
        k_base = k_base + c * u32(params.k_batch[d / 4][d % 4]);
        v_base = v_base + c * u32(params.v_batch[d / 4][d % 4]);
    }
    let i0 = rb * BR;
    let sg = lid / SG;
    let slot = lid % RS;
    let part = lid / RS;
    let off = i32(params.lk) - i32(params.lq);
    let ninf = bitcast<f32>(params.neg_inf_bits);
    // Keys [0, kend) are visible to some row of the block.
    var kend = i32(params.lk);
    if (params.causal != 0u) {
        kend = clamp(i32(min(i0 + BR - 1u, params.lq - 1u)) + off + 1, 0, i32(params.lk));
    }
    let tiles = (u32(kend) + BC - 1u) / BC;
{{STATE_DECL}}
    for (var t = 0u; t < tiles; t = t + 1u) {
        let k0 = t * BC;
        // 1. S = q k^T.
{{S_DECL}}
        for (var dc = 0u; dc < DP; dc = dc + DC) {
            workgroupBarrier();
            for (var e = lid; e < BR * DC; e = e + WG) {
                let r = e / DC;
                let c = e % DC;
                var x = 0.0h;
                if (i0 + r < params.lq && dc + c < D) {
                    x = q[q_base + (i0 + r) * u32(params.q_sr) + (dc + c) * u32(params.q_sd)];
                }
                sh[r * QS + c] = x;
            }
            for (var e = lid; e < BC * DC; e = e + WG) {
                let j = e / DC;
                let c = e % DC;
                var x = 0.0h;
                if (k0 + j < params.lk && dc + c < D) {
                    x = k[k_base + (k0 + j) * u32(params.k_sr) + (dc + c) * u32(params.k_sd)];
                }
                sh[KOFF + c * KS + j] = x;
            }
            workgroupBarrier();
{{S_MMA}}
        }
{{S_STORE}}
        workgroupBarrier();
        // 2. The online softmax.
{{SOFTMAX}}
        // 3. P v.
{{PV_DECL}}
        for (var vc = 0u; vc < BC; vc = vc + VC) {
            workgroupBarrier();
            for (var e = lid; e < VC * DVP; e = e + WG) {
                let j = e / DVP;
                let c = e % DVP;
                var x = 0.0h;
                if (k0 + vc + j < params.lk && c < DV) {
                    x = v[v_base + (k0 + vc + j) * u32(params.v_sr) + c * u32(params.v_sd)];
                }
                sh[VOFF + j * VS + c] = x;
            }
            workgroupBarrier();
{{PV_MMA}}
        }
{{PV_ADD}}
    }
    // Row sums, then the rows divided by them (NaN where no key was visible).
    workgroupBarrier();
{{SUM_PUT}}
    workgroupBarrier();
    if (part == 0u) {
{{SUM_TAKE}}
    }
    workgroupBarrier();
    let nan16 = bitcast<vec2<f16>>(params.nan_bits).x;
    let o_first = bi * params.lq * DV;
{{FINISH}}
}
