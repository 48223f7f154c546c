// Row kernels: softmax, log_softmax, layer_norm or rms_norm over each row (the last
// dimension) of an input, written to a contiguous output; or logsumexp, one f32 per row.
// The file holds a common part and two kernels, each after its marker line; the backend
// compiles the common part with one of them:
//
// - dense: rows whose elements are consecutive in storage. Each segment of `threads`
//   invocations (a power of two) takes one row, read once in units of VEC elements (one
//   vec4<f32>, or four packed f16 in a vec2<u32>, where the rows are aligned to 4; f32 rows
//   that are not, SPAN, as the aligned vec4 units covering the row with the components
//   outside it masked, and written element by element; else one word of two f16, or one
//   f32 in a buffer under 16 bytes) into registers, CACHE units per invocation; rows longer than
//   threads * CACHE units read the rest again in each pass. The statistics are summed from
//   the registers and combined over the segment in a fixed order through workgroup memory,
//   and each invocation writes its own units: one read and one write of memory per element.
// - strided: any layout. A workgroup of 256 invocations is split into segments of `threads`
//   invocations; each segment takes one row per round. Within a segment, invocation `lane`
//   reads elements lane, lane + threads, ... of the row and the partial results meet in a
//   tree in workgroup memory: max then sum of exponentials (softmax), sum then squared
//   deviations (layer_norm), sum of squares (rms_norm). The per-row statistics land in
//   workgroup memory, and a write pass over the workgroup's contiguous range of the output
//   then has all 256 invocations write consecutive elements. threads = 1 gives each
//   invocation short rows alone, which it also writes: no workgroup memory and no barrier
//   (lavapipe is slow at barriers).
//
// Both compute the same statistics with the same expressions: softmax max(x - max, floor)
// under exp, layer_norm on the row shifted by its first element with the deviations' sum
// correcting the variance, rms_norm the mean square; a NaN or infinite max makes a softmax
// row NaN.
//
// The norms compute each row at a scale s = 2^-k, k the exponent of its largest element,
// where that is outside 2^-40..2^41: squares of 1e20 would overflow f32 and those of 1e-30
// underflow it, while at that scale the largest element is about 1. Scaling by a power of
// two is exact, and the result is the unscaled formula's: the deviations d s and
// 1 / sqrt(v s^2 + eps s^2) multiply to d / sqrt(v + eps). Rows in range take s = 1 and
// compute exactly what they did without scaling. The row's largest exponent rides the first
// sum's reduction, so it costs no reduction of its own: each invocation finds the largest
// exponent field among its elements (integer compares, no float ones that a GPU flushing
// subnormals would get wrong), sums at that exponent's scale, and the reduction brings
// partial sums to the larger scale as it combines them (exact: powers of two).
//
// f16 is stored packed two to a u32 and computed in f32, rounded once when stored. Every
// invocation writes whole words: a dense unit holds whole words of one row, and the strided
// write passes produce whole words, the host making each workgroup's (or lone invocation's)
// range start at an even element (an even number of rows when the row length is odd).
//
// The backend fills in the bindings, loads and the op (names in double braces).

struct Params {
    rows: u32,
    len: u32,                // row length
    lead_ndim: u32,          // dimensions enumerating the rows
    offset: u32,             // element offset of the input view
    stride: i32,             // input stride along the row (1 for dense rows)
    threads: u32,            // invocations per row: 1, 2, 4, ..., 256
    rounds: u32,             // strided: rows per segment (2 only for odd f16 rows, threads 1 or 256)
    len_f: f32,
    eps: f32,
    w_offset: u32,           // weight and bias views (unused when absent)
    w_stride: i32,
    b_offset: u32,
    b_stride: i32,
    nan_bits: u32,           // NaN and infinity as bits: WGSL constants cannot hold them
    inf_bits: u32,
    _pad: u32,
    lead_shape: array<vec4<u32>, 2>,
    lead_strides: array<vec4<i32>, 2>,
};

{{BINDINGS}}
@group(0) @binding({{PARAMS_BINDING}}) var<uniform> params: Params;

const WG: u32 = 256u;
const OP: u32 = {{OP}};
// The op codes of wgt_rows_op.
const SOFTMAX: u32 = 0u;
const LOG_SOFTMAX: u32 = 1u;
const LAYER_NORM: u32 = 2u;
const RMS_NORM: u32 = 3u;
const LOGSUMEXP: u32 = 4u;
// The ops that sum exponentials after the row's max (logsumexp writes one value per row).
const EXPS: bool = OP == SOFTMAX || OP == LOG_SOFTMAX || OP == LOGSUMEXP;
const BLOCK: u32 = 64u;
// exp of anything below this is 0 in f32; clamping there keeps exp away from -inf, whose
// result WGSL leaves to the implementation.
const EXP_FLOOR: f32 = -128.0;

{{PARAM_LOADS}}

fn is_nan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }
fn is_finite(x: f32) -> bool { return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u; }
fn nan() -> f32 { return bitcast<f32>(params.nan_bits); }
fn inf() -> f32 { return bitcast<f32>(params.inf_bits); }

// 1 / sqrt(v) with IEEE's answers at the edges, which WGSL leaves to the implementation:
// infinity for 0 (a constant row with eps 0 gives 0 * inf = NaN, as in PyTorch), 0 for
// infinity (rms_norm of a row holding inf gives 0 beside NaN, as x * rsqrt(inf) does), NaN
// for NaN. v is never negative.
fn rstd(v: f32) -> f32 {
    if (is_nan(v)) { return v; }
    if (v == 0.0) { return inf(); }
    if (!is_finite(v)) { return 0.0; }
    return inverseSqrt(v);
}

// ---- the norms' scale -----------------------------------------------------------------

// 2^e for -126 <= e <= 127, from its bits.
fn pow2(e: i32) -> f32 { return bitcast<f32>(u32(e + 127) << 23u); }

// The exponent field of x (0 for zeros and subnormals, 255 for infinities and NaN).
fn exp_field(x: f32) -> u32 { return (bitcast<u32>(x) >> 23u) & 0xffu; }

// log2 of the scale of a row whose largest exponent field is e: 0 when its largest
// magnitude is within 2^-40..2^41 (squares and their sums then stay normal and finite for
// any row length), else -k with k the largest exponent, clamped so that the scale is a
// normal number (subnormal rows take 2^126; rows holding an infinity or NaN 2^-126: their
// sums are then infinite or NaN at any scale, and so is the result, or 0 beside NaN for
// rms_norm, as unscaled). It never grows with e.
fn scale_exp(e: f32) -> i32 {
    let k = i32(e) - 127;
    if (abs(k) <= 40) { return 0; }
    return -clamp(k, -126, 126);
}

// The modes of the reductions: plain sums of both components, the max of .x, and sums of
// values (VALUES) or of squares (SQUARES) in .x taken at scale 2^.y (see combine).
const SUM: u32 = 0u;
const MAX: u32 = 1u;
const VALUES: u32 = 2u;
const SQUARES: u32 = 3u;

// a and b combined in one of those modes. Sums at two scales meet at the smaller: the other
// is multiplied by 2^-f (squares: 2^-2f) in two normal steps, exact as powers of two are, so
// the result is what summing at the smaller scale gives. Past 2^-252 the factor stays
// 2^-252: a sum taken that far down is negligible beside the row's largest element (about 1
// at the row's scale).
fn combine(a: vec2<f32>, b: vec2<f32>, mode: u32) -> vec2<f32> {
    if (mode == MAX) { return vec2<f32>(max_nan(a.x, b.x), 0.0); }
    if (mode == SUM) { return a + b; }
    if (a.y == b.y) { return vec2<f32>(a.x + b.x, a.y); }
    var hi = a;
    var lo = b;
    if (b.y > a.y) {
        hi = b;
        lo = a;
    }
    let f = i32(hi.y - lo.y) * (i32(mode) - 1);
    return vec2<f32>(hi.x * pow2(-min(f / 2, 126)) * pow2(-min(f - f / 2, 126)) + lo.x, lo.y);
}

// max that propagates NaN (WGSL's max may drop it).
fn max_nan(a: f32, b: f32) -> f32 {
    if (is_nan(a)) { return a; }
    if (is_nan(b) || b > a) { return b; }
    return a;
}

// log2 of s, a normal power of two, read from its bits.
fn log2_of(s: f32) -> i32 { return i32((bitcast<u32>(s) >> 23u) & 0xffu) - 127; }

// v unchanged, through an integer operation the compiler cannot see through (an OR with a
// uniform that is 0 at run time). NVIDIA's Vulkan compiler reassociates float products and
// flushes subnormals: (x s)^2 became x^2 s^2 (0 for x = 1e-30, s = 2^100), and x s c became
// x (s c), which underflows for s = 2^-63. A product passed through this is computed as
// written.
fn opaque4(v: vec4<f32>) -> vec4<f32> {
    return bitcast<vec4<f32>>(bitcast<vec4<u32>>(v) | vec4<u32>(params.inf_bits ^ 0x7f800000u));
}

// x s, s a power of two (the row's scale): exact unless the result is below FLT_MIN; x
// itself at scale 1, which rows in range take. Rows scaled up by 2^23 or more may hold only
// subnormal elements, which a GPU that flushes subnormals would take for 0: there they are
// read from their bits, significand times 2^(k - 149) for s = 2^k, a normal factor built
// from bits (a float constant 2^-149 would itself be subnormal).
fn scaled4(x: vec4<f32>, s: f32) -> vec4<f32> {
    if (s == 1.0) { return x; }
    var y = x * s;
    if (s >= 8388608.0) {
        let bits = bitcast<vec4<u32>>(x);
        let v = vec4<f32>(bits & vec4<u32>(0x7fffffu)) * pow2(log2_of(s) - 149);
        let sub = (bits & vec4<u32>(0x7f800000u)) == vec4<u32>(0u);
        y = select(y, select(v, -v, bits >= vec4<u32>(0x80000000u)), sub);
    }
    return opaque4(y);
}

fn scaled(x: f32, s: f32) -> f32 { return scaled4(vec4<f32>(x, 0.0, 0.0, 0.0), s).x; }

// The factor c of a norm's output d_s c, d_s the scaled deviations (or scaled values), from
// their scaled mean square v: 1 / sqrt(v + eps s^2), which is s times smaller than
// 1 / sqrt(v / s^2 + eps). Where eps s^2 overflows (tiny rows, s >= 2^64 or so) v is
// negligible beside it and c is 1 / (s sqrt(eps)); a row with no spread (v = 0: d is 0
// everywhere) and eps > 0 gives 0 whatever eps s^2 rounded to.
fn scaled_rstd(v: f32, s: f32) -> f32 {
    if (params.eps == 0.0) { return rstd(v); }
    if (v == 0.0) { return 0.0; }
    let eps_s = (params.eps * s) * s;
    if (!is_finite(eps_s)) { return rstd(params.eps) * bitcast<f32>((254u << 23u) - bitcast<u32>(s)); }
    return rstd(v + eps_s);
}

// rms_norm's statistics (a, -, -, c) from the scaled mean square v at scale s: y = scaled(x,
// a) * c. Rows scaled down (s < 1, magnitudes past 2^41) take a = 2^-63 and c = 1 / rms
// times 2^63, both normal where 1 / rms itself may be subnormal: x 2^-63 is exact for every
// element whose result is above FLT_MIN, and the product rounds once.
fn rms_stats(v: f32, s: f32) -> vec4<f32> {
    let c = scaled_rstd(v, s);
    if (s < 1.0) { return vec4<f32>(1.08420217e-19, 0.0, 0.0, c * pow2(log2_of(s) + 63)); }
    return vec4<f32>(s, 0.0, 0.0, c);
}

// layer_norm's variance from the sums over the row of d^2 and d, d = x - shift - mean: d's
// sum is 0 in exact arithmetic, so subtracting its share removes the rounding of the mean. A
// NaN (from an inf or NaN in the row) is kept by a bit test: NVIDIA's compiler turns a
// comparison-and-select clamp into max(c, 0), which drops it.
fn variance(t: vec2<f32>) -> f32 {
    let c = (t.x - t.y * t.y / params.len_f) / params.len_f;
    var v = c;
    if (!is_nan(c)) { v = max(c, 0.0); }
    return v;
}

// logsumexp's value from a row's (max, log of the shifted sum, NaN count): an infinite
// max is the result (+inf, or -inf for a row of nothing but -inf), a NaN gives NaN.
fn lse_of(st: vec4<f32>) -> f32 {
    if (st.z > 0.0 || is_nan(st.x)) { return nan(); }
    if (!is_finite(st.x)) { return st.x; }
    return st.x + st.y;
}

// Stores logsumexp's value of row r (the other ops store whole rows).
fn store_row(r: u32, v: f32) {
    {{STORE_ROW}}
}

// Storage index of the first element of row r.
fn row_base(r: u32) -> i32 {
    var rem = r;
    var index = i32(params.offset);
    for (var d = i32(params.lead_ndim) - 1; d >= 0; d = d - 1) {
        let n = params.lead_shape[d / 4][d % 4];
        index = index + i32(rem % n) * params.lead_strides[d / 4][d % 4];
        rem = rem / n;
    }
    return index;
}

// f32 to f16 bits, rounding to nearest; NaN, infinity and overflow are handled here
// because pack2x16float leaves values outside the f16 range indeterminate.
fn f16_bits(x: f32) -> u32 {
    let bits = bitcast<u32>(x);
    if ((bits & 0x7fffffffu) > 0x7f800000u) { return 0x7e00u; }
    if (abs(x) >= 65520.0) { return ((bits >> 16u) & 0x8000u) | 0x7c00u; }
    return pack2x16float(vec2<f32>(x, 0.0)) & 0xffffu;
}

// f16_bits(a) | f16_bits(b) << 16, with one conversion when both are below 65520 in
// magnitude (tested by bits: 0x477ff000 is 65520, and NaN's bits are above it).
fn f16_pair(a: f32, b: f32) -> u32 {
    let m = vec2<u32>(bitcast<u32>(a), bitcast<u32>(b)) & vec2<u32>(0x7fffffffu);
    if (all(m < vec2<u32>(0x477ff000u))) { return pack2x16float(vec2<f32>(a, b)); }
    return f16_bits(a) | (f16_bits(b) << 16u);
}

// ==== kernel: strided ====

var<workgroup> scratch: array<vec2<f32>, 256>;
// Per row: softmax (max, 1 / sum, -, -), log_softmax (max, log sum, -, -), layer_norm
// (scale, scaled shift, scaled mean - shift, c), rms_norm (a, -, -, c): see value().
var<workgroup> stats: array<vec4<f32>, 256>;
var<workgroup> bases: array<i32, 256>;        // per row: storage index of its first element

fn load(i: u32) -> f32 {
    {{LOAD}}
}

fn element(base: i32, j: u32) -> f32 { return load(u32(base + i32(j) * params.stride)); }

// Largest of this lane's elements (NaN wins); -inf when the lane has none.
fn lane_max(base: i32, lane: u32) -> f32 {
    var m = -inf();
    for (var j = lane; j < params.len; j = j + params.threads) { m = max_nan(m, element(base, j)); }
    return m;
}

// Largest exponent field of this lane's elements (0 when it has none).
fn lane_exp(base: i32, lane: u32) -> f32 {
    var e = 0u;
    for (var j = lane; j < params.len; j = j + params.threads) { e = max(e, exp_field(element(base, j))); }
    return f32(e);
}

// What one element adds to a sum: exp(x - max) for softmax (shift.x is the max); for
// layer_norm x - shift.x, then (d^2, d) with d = x - shift.x - shift.y (the shifted mean);
// x^2 for rms_norm.
fn term(x: f32, shift: vec2<f32>, second_pass: bool) -> vec2<f32> {
    if (EXPS) { return vec2<f32>(exp(max(x - shift.x, EXP_FLOOR)), 0.0); }
    if (OP == LAYER_NORM) {
        if (!second_pass) { return vec2<f32>(x - shift.x, 0.0); }
        let d = (x - shift.x) - shift.y;
        return vec2<f32>(d * d, d);
    }
    return vec2<f32>(x * x, 0.0);
}

// This lane's share of a sum. Elements are added in blocks of BLOCK and the blocks then
// added up, so the rounding error grows with BLOCK plus the block count rather than with the
// element count (no compensated arithmetic for a compiler to simplify away).
// The norms sum the elements times their row's scale s.
fn lane_sum(base: i32, lane: u32, shift: vec2<f32>, second_pass: bool, s: f32) -> vec2<f32> {
    var total = vec2<f32>(0.0);
    var block = vec2<f32>(0.0);
    var n = 0u;
    for (var j = lane; j < params.len; j = j + params.threads) {
        var x = element(base, j);
        if (OP == LAYER_NORM || OP == RMS_NORM) { x = scaled(x, s); }
        block = block + term(x, shift, second_pass);
        n = n + 1u;
        if (n == BLOCK) {
            total = total + block;
            block = vec2<f32>(0.0);
            n = 0u;
        }
    }
    return total + block;
}

// Combines the partials of each segment (see combine's modes); every invocation gets its
// segment's result. Called in uniform control flow only.
fn tree(v: vec2<f32>, tid: u32, lane: u32, mode: u32) -> vec2<f32> {
    if (params.threads == 1u) { return v; }
    scratch[tid] = v;
    workgroupBarrier();
    for (var s = params.threads / 2u; s > 0u; s = s / 2u) {
        if (lane < s) {
            let a = scratch[tid];
            let b = scratch[tid + s];
            scratch[tid] = combine(a, b, mode);
        }
        workgroupBarrier();
    }
    let result = scratch[tid - lane];
    workgroupBarrier();  // all have read before scratch is written again
    return result;
}

// The statistics of the row starting at base (valid: the segment has a row this round).
fn row_stats(base: i32, valid: bool, tid: u32, lane: u32) -> vec4<f32> {
    var part = vec2<f32>(0.0);
    if (EXPS) {  // logsumexp: (max, log sum); the NaN-keeping max needs no count here
        var m = -inf();
        if (valid) { m = lane_max(base, lane); }
        m = tree(vec2<f32>(m, 0.0), tid, lane, MAX).x;
        // A non-finite max makes the row NaN in the write pass; the sum is not needed.
        if (valid && is_finite(m)) { part = lane_sum(base, lane, vec2<f32>(m, 0.0), false, 1.0); }
        let s = tree(part, tid, lane, SUM).x;  // >= 1: the max contributes exp(0)
        if (OP == SOFTMAX) { return vec4<f32>(m, 1.0 / s, 0.0, 0.0); }
        return vec4<f32>(m, log(s), 0.0, 0.0);
    }
    // layer_norm works on the row shifted by its first element, so the mean's rounding error
    // scales with the row's spread, not its magnitude (a mean of 1e4 with a spread of 1
    // would otherwise lose three digits in f32). Every lane reads the same element, and
    // counts its exponent, so that the shift is in range at the lane's own scale.
    var first = 0.0;
    var e = 0.0;
    if (valid) {
        first = element(base, 0u);
        e = lane_exp(base, lane);
        if (OP == LAYER_NORM) { e = max(e, f32(exp_field(first))); }
    }
    let own = scale_exp(e);
    let own_scale = pow2(own);
    if (OP == RMS_NORM) {
        if (valid) { part = vec2<f32>(lane_sum(base, lane, vec2<f32>(0.0), false, own_scale).x, f32(own)); }
        let r = tree(part, tid, lane, SQUARES);
        return rms_stats(r.x / params.len_f, pow2(i32(r.y)));
    }
    if (valid) {
        part = vec2<f32>(lane_sum(base, lane, vec2<f32>(scaled(first, own_scale), 0.0), false, own_scale).x, f32(own));
    }
    let r = tree(part, tid, lane, VALUES);
    let scale = pow2(i32(r.y));
    let shift = scaled(first, scale);
    let mean = r.x / params.len_f;
    part = vec2<f32>(0.0);
    if (valid) { part = lane_sum(base, lane, vec2<f32>(shift, mean), true, scale); }
    let t = tree(part, tid, lane, SUM);
    return vec4<f32>(scale, shift, mean, scaled_rstd(variance(t), scale));
}

// Output element j of the row starting at base, whose statistics are st.
fn value(st: vec4<f32>, base: i32, j: u32) -> f32 {
    let x = element(base, j);
    var y: f32;
    if (OP == SOFTMAX || OP == LOG_SOFTMAX) {
        if (!is_finite(st.x)) { return nan(); }
        if (OP == SOFTMAX) { return exp(max(x - st.x, EXP_FLOOR)) * st.y; }
        return (x - st.x) - st.y;  // x = -inf stays -inf
    } else if (OP == LAYER_NORM) {
        y = ((scaled(x, st.x) - st.y) - st.z) * st.w;
    } else {
        y = scaled(x, st.x) * st.w;
    }
    {{AFFINE}}
    return y;
}

// The (slot, position) `by` elements after p in the workgroup's row-major range; divides
// only when rows are shorter than the step.
fn advance(p: vec2<u32>, by: u32) -> vec2<u32> {
    let j = p.y + by;
    if (j < params.len) { return vec2<u32>(p.x, j); }
    if (j - params.len < params.len) { return vec2<u32>(p.x + 1u, j - params.len); }
    return vec2<u32>(p.x + j / params.len, j % params.len);
}

// Output element j of the workgroup's row in `slot`.
fn slot_value(slot: u32, j: u32) -> f32 { return value(stats[slot], bases[slot], j); }

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
    // Many rows use a 2-D grid of workgroups: the limit per dimension is 65535.
    let group = wid.x + wid.y * groups.x;
    if (params.threads == 1u) {
        // Short rows: each invocation takes `rounds` consecutive rows alone (2 when f16 rows
        // of odd length, so its words hold its own elements only) and writes them itself:
        // no workgroup memory, no barrier.
        let row0 = (group * WG + tid) * params.rounds;
        var st: array<vec4<f32>, 2>;
        var base: array<i32, 2>;
        for (var round = 0u; round < params.rounds; round = round + 1u) {
            let valid = row0 + round < params.rows;
            base[round] = 0;
            if (valid) { base[round] = row_base(row0 + round); }
            st[round] = row_stats(base[round], valid, tid, 0u);  // no trees with one invocation
        }
        // No early return for rows past the end: the barriers after this branch must be
        // reached (or skipped) by all invocations alike.
        if (row0 < params.rows) {
            let total = min(params.rounds, params.rows - row0) * params.len;
            let out_first = row0 * params.len;
            {{WRITE_ALONE}}
        }
        return;
    }
    let segments = WG / params.threads;
    let per_group = segments * params.rounds;
    let first = group * per_group;
    if (first >= params.rows) { return; }  // whole workgroups only: barriers stay uniform
    let seg = tid / params.threads;
    let lane = tid % params.threads;
    for (var round = 0u; round < params.rounds; round = round + 1u) {
        let slot = round * segments + seg;
        let valid = first + slot < params.rows;
        var base = 0;
        if (valid) { base = row_base(first + slot); }
        let st = row_stats(base, valid, tid, lane);
        if (lane == 0u) {
            stats[slot] = st;
            bases[slot] = base;
        }
    }
    workgroupBarrier();
    // The write pass: this workgroup's rows are output elements [out_first, out_first + total).
    let total = min(per_group, params.rows - first) * params.len;
    let out_first = first * params.len;
    {{WRITE}}
}

// ==== kernel: dense ====

const VEC: u32 = {{VEC}};      // elements per unit: 4; 2 (f16) or 1 (f32, fewer than 4 in all) for unaligned rows
const CACHE: u32 = {{CACHE}};  // units each invocation keeps in registers
// The components of a unit's vec4 that hold elements.
const USED = vec4<bool>(true, VEC > 1u, VEC > 2u, VEC > 3u);
// f32 rows not aligned to 4 (any start, any length): each row is read as the aligned vec4
// units of storage that cover it, the components outside the row masked (read as 0 and
// left out of the statistics), and written element by element, so the rows beside it keep
// their elements.
const SPAN: bool = {{SPAN}};
// SPAN: where the row's first element sits in its first unit (0..3); 0 otherwise.
var<private> lead: u32;

// Partials for the segment sums: two sets used in turn (see seg_reduce), and the second
// level of segments longer than 16.
var<workgroup> partials: array<array<vec2<f32>, 256>, 2>;
var<workgroup> partials2: array<vec2<f32>, 16>;

// Unit i of the input storage as a vec4 (components past VEC are 0), and unit i of the
// output stored from y's first VEC components.
fn load_unit(i: u32) -> vec4<f32> {
    {{LOAD_UNIT}}
}
fn store_unit(i: u32, y: vec4<f32>) {
    {{STORE_UNIT}}
}

// The components of the row's unit u that hold its elements.
fn unit_mask(u: u32) -> vec4<bool> {
    if (!SPAN) { return USED; }
    let j = vec4<i32>(i32(u * 4u) - i32(lead)) + vec4<i32>(0, 1, 2, 3);
    return (j >= vec4<i32>(0)) & (j < vec4<i32>(i32(params.len)));
}

// Unit u of the row whose first unit in storage is base, components outside the row 0.
// A SPAN row's last unit may run past the end of the buffer, where the vec4 array ends
// before it: its elements are then read one by one.
fn row_unit(base: u32, u: u32) -> vec4<f32> {
    if (!SPAN) { return load_unit(base + u); }
    let i = base + u;
    var v = vec4<f32>(0.0);
    if (i < arrayLength(&inp)) {
        v = load_unit(i);
    } else {
        {{TAIL_LOAD}}
    }
    return select(vec4<f32>(0.0), v, unit_mask(u));
}

// Output unit u of row `row` from y.
fn put(row: u32, u: u32, y: vec4<f32>) {
    {{PUT}}
}

// v[0] op v[1] op ... op v[15] as a balanced tree (error growth log2 of the count, as the
// strided kernel's tree).
fn fold16(v: array<vec2<f32>, 16>, mode: u32) -> vec2<f32> {
    var a = v;
    for (var i = 0u; i < 8u; i = i + 1u) { a[i] = combine(a[i], a[i + 8u], mode); }
    for (var i = 0u; i < 4u; i = i + 1u) { a[i] = combine(a[i], a[i + 4u], mode); }
    for (var i = 0u; i < 2u; i = i + 1u) { a[i] = combine(a[i], a[i + 2u], mode); }
    return combine(a[0], a[1], mode);
}

// Combines v over the invocations of each segment, max of .x (NaN already counted as +inf)
// or sum of both components, in a fixed order: segments of up to 16 fold their partials at
// once; longer ones first fold 16 at a time (in `threads` / 16 invocations), then those.
// Every invocation gets its segment's result. Calls alternate `which`, so that a call's
// writes never meet the previous call's reads. Called in uniform control flow only.
fn seg_reduce(v: vec2<f32>, tid: u32, lane: u32, which: u32, mode: u32) -> vec2<f32> {
    let t = params.threads;
    if (t == 1u) { return v; }
    partials[which][tid] = v;
    workgroupBarrier();
    let start = tid - lane;
    var none = vec2<f32>(0.0);
    if (mode == MAX) { none = vec2<f32>(-inf(), 0.0); }
    if (mode == VALUES || mode == SQUARES) { none = vec2<f32>(0.0, 126.0); }  // 0 at the largest scale
    var parts: array<vec2<f32>, 16>;
    if (t <= 16u) {
        for (var i = 0u; i < 16u; i = i + 1u) {
            parts[i] = none;
            if (i < t) { parts[i] = partials[which][start + i]; }
        }
        return fold16(parts, mode);
    }
    let groups = t / 16u;
    if (lane < groups) {
        for (var i = 0u; i < 16u; i = i + 1u) { parts[i] = partials[which][start + lane + i * groups]; }
        partials2[start / 16u + lane] = fold16(parts, mode);
    }
    workgroupBarrier();
    for (var i = 0u; i < 16u; i = i + 1u) {
        parts[i] = none;
        if (i < groups) { parts[i] = partials2[start / 16u + i]; }
    }
    return fold16(parts, mode);
}

// A unit's elements for the max: NaN counts as +inf (either makes the row NaN), components
// outside `used` as -inf.
fn max_keys(v: vec4<f32>, used: vec4<bool>) -> vec4<f32> {
    let is_nan4 = (bitcast<vec4<u32>>(v) & vec4<u32>(0x7fffffffu)) > vec4<u32>(0x7f800000u);
    return select(vec4<f32>(-inf()), select(v, vec4<f32>(inf()), is_nan4), used);
}

fn max_unit(m: f32, v: vec4<f32>, used: vec4<bool>) -> f32 {
    let k = max_keys(v, used);
    var r = m;
    r = select(r, k.x, k.x > r);
    r = select(r, k.y, k.y > r);
    r = select(r, k.z, k.z > r);
    return select(r, k.w, k.w > r);
}

struct Terms {
    a: vec4<f32>,
    b: vec4<f32>,
};

// What a unit adds to its row's sums (components outside `used` add 0; they hold 0, so
// rms_norm's squares need no mask): exp(x - s.x) for softmax (s.x the max); for layer_norm
// x - s.x (step 0), then (d^2, d) with d = x - s.x - s.y (s.y the shifted mean); x^2 for
// rms_norm.
fn terms(v: vec4<f32>, s: vec2<f32>, step: u32, used: vec4<bool>) -> Terms {
    let zero = vec4<f32>(0.0);
    if (EXPS) {
        // logsumexp also counts NaNs, which the dense max took for +inf.
        var nans = zero;
        if (OP == LOGSUMEXP) {
            let is_nan4 = (bitcast<vec4<u32>>(v) & vec4<u32>(0x7fffffffu)) > vec4<u32>(0x7f800000u);
            nans = select(zero, vec4<f32>(1.0), is_nan4 & used);
        }
        return Terms(select(zero, exp(max(v - s.x, vec4<f32>(EXP_FLOOR))), used), nans);
    }
    if (OP == LAYER_NORM) {
        if (step == 0u) { return Terms(select(zero, v - s.x, used), zero); }
        let d = select(zero, (v - s.x) - s.y, used);
        return Terms(d * d, d);
    }
    return Terms(v * v, zero);
}

// A unit as the norms sum it: times the row's scale.
fn norm_unit(v: vec4<f32>, scale: f32) -> vec4<f32> {
    if (OP == LAYER_NORM || OP == RMS_NORM) { return scaled4(v, scale); }
    return v;
}

// This invocation's share of its row's sums: its units in registers, then those past them,
// read again and added in blocks of BLOCK units (see the strided kernel's lane_sum).
fn share(x: ptr<function, array<vec4<f32>, CACHE>>, lane: u32, n: u32, base: u32, valid: bool, s: vec2<f32>,
         step: u32, scale: f32) -> vec2<f32> {
    let t = params.threads;
    var a = vec4<f32>(0.0);
    var b = vec4<f32>(0.0);
    for (var k = 0u; k < CACHE; k = k + 1u) {
        if (lane + k * t < n) {
            let q = terms(norm_unit((*x)[k], scale), s, step, unit_mask(lane + k * t));
            a = a + q.a;
            b = b + q.b;
        }
    }
    var block = Terms(vec4<f32>(0.0), vec4<f32>(0.0));
    var count = 0u;
    for (var u = lane + CACHE * t; valid && u < n; u = u + t) {
        let q = terms(norm_unit(row_unit(base, u), scale), s, step, unit_mask(u));
        block.a = block.a + q.a;
        block.b = block.b + q.b;
        count = count + 1u;
        if (count == BLOCK) {
            a = a + block.a;
            b = b + block.b;
            block = Terms(vec4<f32>(0.0), vec4<f32>(0.0));
            count = 0u;
        }
    }
    a = a + block.a;
    b = b + block.b;
    return vec2<f32>((a.x + a.y) + (a.z + a.w), (b.x + b.y) + (b.z + b.w));
}

// Largest of this invocation's elements, NaN counting as +inf; -inf when it has none.
fn share_max(x: ptr<function, array<vec4<f32>, CACHE>>, lane: u32, n: u32, base: u32, valid: bool) -> f32 {
    let t = params.threads;
    var m = -inf();
    for (var k = 0u; k < CACHE; k = k + 1u) {
        if (lane + k * t < n) { m = max_unit(m, (*x)[k], unit_mask(lane + k * t)); }
    }
    for (var u = lane + CACHE * t; valid && u < n; u = u + t) { m = max_unit(m, row_unit(base, u), unit_mask(u)); }
    return m;
}

// Largest exponent field of this invocation's elements (unused components are 0).
fn share_exp(x: ptr<function, array<vec4<f32>, CACHE>>, lane: u32, n: u32, base: u32, valid: bool) -> f32 {
    let t = params.threads;
    var e = vec4<u32>(0u);
    for (var k = 0u; k < CACHE; k = k + 1u) {
        if (lane + k * t < n) { e = max(e, bitcast<vec4<u32>>((*x)[k]) & vec4<u32>(0x7f800000u)); }
    }
    for (var u = lane + CACHE * t; valid && u < n; u = u + t) {
        e = max(e, bitcast<vec4<u32>>(row_unit(base, u)) & vec4<u32>(0x7f800000u));
    }
    return f32(max(max(e.x, e.y), max(e.z, e.w)) >> 23u);
}

// weight and bias for the elements of unit u.
fn affine(v: vec4<f32>, u: u32) -> vec4<f32> {
    var y = v;
    {{AFFINE_UNIT}}
    return y;
}

// Output unit u of a row from its input unit v and the row's statistics st (as the strided
// kernel's stats).
fn out_unit(v: vec4<f32>, st: vec4<f32>, u: u32) -> vec4<f32> {
    var y: vec4<f32>;
    if (OP == SOFTMAX || OP == LOG_SOFTMAX) {
        if (!is_finite(st.x)) { return vec4<f32>(nan()); }
        if (OP == SOFTMAX) { return exp(max(v - st.x, vec4<f32>(EXP_FLOOR))) * st.y; }
        return (v - st.x) - st.y;  // x = -inf stays -inf
    } else if (OP == LAYER_NORM) {
        y = ((scaled4(v, st.x) - st.y) - st.z) * st.w;
    } else {
        y = scaled4(v, st.x) * st.w;
    }
    return affine(y, u);
}

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
    let group = wid.x + wid.y * groups.x;  // a 2-D grid beyond 65535 workgroups
    let t = params.threads;
    let first = group * (WG / t);
    if (first >= params.rows) { return; }  // whole workgroups only: barriers stay uniform
    let lane = tid % t;
    let row = first + tid / t;
    let valid = row < params.rows;
    var n = params.len / VEC;  // units per row
    var base = 0u;             // the row's first unit in storage
    if (valid) {
        let b = u32(row_base(row));
        base = b / VEC;
        if (SPAN) {
            lead = b % 4u;
            n = (lead + params.len + 3u) / 4u;
        }
    }
    var x: array<vec4<f32>, CACHE>;
    for (var k = 0u; k < CACHE; k = k + 1u) {
        let u = lane + k * t;
        x[k] = vec4<f32>(0.0);
        if (valid && u < n) { x[k] = row_unit(base, u); }
    }
    var st = vec4<f32>(0.0);
    if (OP == SOFTMAX || OP == LOG_SOFTMAX) {
        let m = seg_reduce(vec2<f32>(share_max(&x, lane, n, base, valid), 0.0), tid, lane, 0u, MAX).x;
        // A non-finite max makes the row NaN; the sum is not needed.
        var part = 0.0;
        if (is_finite(m)) { part = share(&x, lane, n, base, valid, vec2<f32>(m, 0.0), 0u, 1.0).x; }
        let s = seg_reduce(vec2<f32>(part, 0.0), tid, lane, 1u, SUM).x;  // >= 1: the max gives exp(0)
        if (OP == SOFTMAX) { st = vec4<f32>(m, 1.0 / s, 0.0, 0.0); } else { st = vec4<f32>(m, log(s), 0.0, 0.0); }
    } else if (OP == LOGSUMEXP) {
        // The sum runs whatever the max, for the NaN count: a +inf max may be a NaN's.
        let m = seg_reduce(vec2<f32>(share_max(&x, lane, n, base, valid), 0.0), tid, lane, 0u, MAX).x;
        var shift = 0.0;
        if (is_finite(m)) { shift = m; }
        let s = seg_reduce(share(&x, lane, n, base, valid, vec2<f32>(shift, 0.0), 0u, 1.0), tid, lane, 1u, SUM);
        st = vec4<f32>(m, log(s.x), s.y, 0.0);
    } else {
        // Each invocation sums at the scale of its own largest exponent (layer_norm's
        // counting the shift, the row's first element, as in the strided kernel's row_stats);
        // the reduction brings the sums to the row's scale.
        var first = 0.0;
        if (valid) { first = row_unit(base, 0u)[lead]; }
        var e = share_exp(&x, lane, n, base, valid);
        if (OP == LAYER_NORM) { e = max(e, f32(exp_field(first))); }
        let own = scale_exp(e);
        let own_scale = pow2(own);
        if (OP == RMS_NORM) {
            let q = share(&x, lane, n, base, valid, vec2<f32>(0.0), 0u, own_scale).x;
            let r = seg_reduce(vec2<f32>(q, f32(own)), tid, lane, 0u, SQUARES);
            st = rms_stats(r.x / params.len_f, pow2(i32(r.y)));
        } else {
            let q = share(&x, lane, n, base, valid, vec2<f32>(scaled(first, own_scale), 0.0), 0u, own_scale).x;
            let r = seg_reduce(vec2<f32>(q, f32(own)), tid, lane, 0u, VALUES);
            let scale = pow2(i32(r.y));
            let shift = scaled(first, scale);
            let mean = r.x / params.len_f;
            let t2 = seg_reduce(share(&x, lane, n, base, valid, vec2<f32>(shift, mean), 1u, scale), tid, lane, 1u, SUM);
            st = vec4<f32>(scale, shift, mean, scaled_rstd(variance(t2), scale));
        }
    }
    if (!valid) { return; }
    if (OP == LOGSUMEXP) {
        if (lane == 0u) { store_row(row, lse_of(st)); }
        return;
    }
    for (var k = 0u; k < CACHE; k = k + 1u) {
        let u = lane + k * t;
        if (u < n) { put(row, u, out_unit(x[k], st, u)); }
    }
    for (var u = lane + CACHE * t; u < n; u = u + t) { put(row, u, out_unit(row_unit(base, u), st, u)); }
}
