// Reduction kernel: each output is reduced over the trailing (strided) dimensions of the
// input. A workgroup of 256 invocations is split into segments of `threads` invocations
// (a power of two the host picks from the reduced length and the output count); each
// segment produces one output per round. Within a segment, invocation `lane` takes elements
// lane, lane + threads, ... and the segment's partial results meet in a tree in workgroup
// memory.
// threads = 256 is the classic one-workgroup-per-output reduction; threads = 1 lets each
// invocation reduce a row alone, with no workgroup memory or barriers, so many short rows
// do not leave 255 of 256 invocations idle.
//
// The backend fills in the value types and the per-op pieces (names in double braces).
// f16 is stored packed two to a u32 and accumulated in f32; an f16 output is written a whole
// word (two outputs) per invocation, so no two invocations write the same word.

struct Params {
    out_count: u32,          // outputs to produce
    red_count: u32,          // elements reduced into each output
    keep_ndim: u32,
    red_ndim: u32,
    offset: u32,             // element offset of the input view
    threads: u32,            // invocations per output: 1, 2, 4, ..., 256
    rounds: u32,             // outputs per segment (2 only for f16 outputs with threads = 256)
    count_f: f32,            // red_count as f32 (mean, var)
    divisor_f: f32,          // var: max(red_count - correction, 0)
    nan_bits: u32,           // NaN and infinity as bits: WGSL constants cannot hold them
    inf_bits: u32,
    _pad: u32,
    keep_shape: array<vec4<u32>, 2>,
    keep_strides: array<vec4<i32>, 2>,
    red_shape: array<vec4<u32>, 2>,
    red_strides: array<vec4<i32>, 2>,
};

@group(0) @binding(0) var<storage, read> inp: array<{{IN_STORAGE}}>;
@group(0) @binding(1) var<storage, read_write> out: array<{{OUT_STORAGE}}>;
@group(0) @binding(2) var<uniform> params: Params;

const WG: u32 = 256u;
const OP: u32 = {{OP}};
// The op codes of wgt_reduce_op.
const SUM: u32 = 0u;
const MEAN: u32 = 1u;
const MAX: u32 = 2u;
const MIN: u32 = 3u;
const PROD: u32 = 4u;
const VAR: u32 = 5u;
const ARGMAX: u32 = 6u;
const ARGMIN: u32 = 7u;
const NONE: u32 = 0xffffffffu;  // index of "no element yet"
const BLOCK: u32 = 64u;

alias T = {{ACC_T}};  // accumulator type: f32 for floats, mean and var; i32 or u32 otherwise
alias O = {{OUT_T}};  // output compute type

// v: the running value (sum, product, extreme, or var's sum of squared deviations);
// w: var's sum of deviations; i: the position of the extreme in the reduced row, NONE
// while nothing was seen (max/min/argmax/argmin need no identity value then).
struct Acc {
    v: T,
    w: T,
    i: u32,
};

var<workgroup> scratch: array<Acc, 256>;
var<workgroup> results: array<O, 256>;

fn load(i: u32) -> T {
    {{LOAD}}
}

fn is_nan(x: T) -> bool {
    {{IS_NAN}}
}

fn identity() -> Acc {
    if (OP == PROD) { return Acc(T(1), T(0), NONE); }
    return Acc(T(0), T(0), NONE);
}

// True when b should replace a for max/min/argmax/argmin: NaN beats everything, then the
// larger (smaller) value, and among equals the first position, as NumPy does.
fn better(a: Acc, b: Acc) -> bool {
    if (b.i == NONE) { return false; }
    if (a.i == NONE) { return true; }
    let an = is_nan(a.v);
    let bn = is_nan(b.v);
    if (an || bn) {
        if (an && bn) { return b.i < a.i; }
        return bn;
    }
    if (OP == MAX || OP == ARGMAX) {
        if (b.v > a.v) { return true; }
    } else {
        if (b.v < a.v) { return true; }
    }
    return b.v == a.v && b.i < a.i;
}

fn combine(a: Acc, b: Acc) -> Acc {
    if (OP == SUM || OP == MEAN || OP == VAR) { return Acc(a.v + b.v, a.w + b.w, 0u); }
    if (OP == PROD) { return Acc(a.v * b.v, a.w, 0u); }
    if (better(a, b)) { return b; }
    return a;
}

// One element at position r of the reduced row; var's second pass takes deviations from
// the mean (shift).
fn element(x: T, r: u32, second_pass: bool, shift: T) -> Acc {
    if (OP == VAR && second_pass) {
        let d = x - shift;
        return Acc(d * d, d, r);
    }
    return Acc(x, T(0), r);
}

// The mean of a finished first-pass sum (var only; other ops never use it).
fn mean_of(a: Acc) -> T {
    {{MEAN_OF}}
}

fn finish(a: Acc) -> O {
    {{FINISH}}
}

// Storage index of output o's first reduced element.
fn keep_base(o: u32) -> i32 {
    var rem = o;
    var index = i32(params.offset);
    for (var d = i32(params.keep_ndim) - 1; d >= 0; d = d - 1) {
        let n = params.keep_shape[d / 4][d % 4];
        index = index + i32(rem % n) * params.keep_strides[d / 4][d % 4];
        rem = rem / n;
    }
    return index;
}

// Storage index of element r of the reduced row that starts at base.
fn red_index(base: i32, r: u32) -> u32 {
    if (params.red_ndim == 1u) { return u32(base + i32(r) * params.red_strides[0].x); }
    var rem = r;
    var index = base;
    for (var d = i32(params.red_ndim) - 1; d >= 0; d = d - 1) {
        let n = params.red_shape[d / 4][d % 4];
        index = index + i32(rem % n) * params.red_strides[d / 4][d % 4];
        rem = rem / n;
    }
    return u32(index);
}

// This invocation's share of one row. Elements are first combined in blocks of BLOCK and the
// blocks then added up, so a float sum's rounding error grows with BLOCK plus the block
// count rather than with the element count (no compensated arithmetic for a compiler to
// simplify away).
fn reduce_lane(base: i32, lane: u32, second_pass: bool, shift: T) -> Acc {
    var total = identity();
    var block = identity();
    var n = 0u;
    for (var r = lane; r < params.red_count; r = r + params.threads) {
        block = combine(block, element(load(red_index(base, r)), r, second_pass, shift));
        n = n + 1u;
        if (n == BLOCK) {
            total = combine(total, block);
            block = identity();
            n = 0u;
        }
    }
    return combine(total, block);
}

// Combines the partials of each segment; every invocation gets its segment's result.
fn segment_tree(a: Acc, tid: u32, lane: u32) -> Acc {
    scratch[tid] = a;
    workgroupBarrier();
    for (var s = params.threads / 2u; s > 0u; s = s / 2u) {
        if (lane < s) { scratch[tid] = combine(scratch[tid], scratch[tid + s]); }
        workgroupBarrier();
    }
    let result = scratch[tid - lane];
    workgroupBarrier();  // all have read before scratch is written again
    return result;
}

// f32 to f16 bits, rounding to nearest; NaN, infinity and overflow are handled here
// because pack2x16float leaves values outside the f16 range indeterminate.
fn f16_bits(x: f32) -> u32 {
    let bits = bitcast<u32>(x);
    if ((bits & 0x7fffffffu) > 0x7f800000u) { return 0x7e00u; }
    if (abs(x) >= 65520.0) { return ((bits >> 16u) & 0x8000u) | 0x7c00u; }
    return pack2x16float(vec2<f32>(x, 0.0)) & 0xffffu;
}

// Output o reduced by one invocation alone (threads = 1): no workgroup memory, no barriers.
fn reduce_alone(o: u32) -> O {
    let base = keep_base(o);
    var total = reduce_lane(base, 0u, false, T(0));
    if (OP == VAR) { total = reduce_lane(base, 0u, true, mean_of(total)); }
    return finish(total);
}

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
    // Large launches use a 2-D grid of workgroups: the limit per dimension is 65535.
    let group = wid.x + wid.y * groups.x;
    if (params.threads == 1u) {
        // One output word per invocation (two f16 outputs, else one).
        let word = group * WG + tid;
        {{WRITE_ALONE}}
        return;
    }
    let segments = WG / params.threads;
    let per_group = segments * params.rounds;
    let first = group * per_group;
    if (first >= params.out_count) { return; }  // whole workgroups only: barriers stay uniform
    let seg = tid / params.threads;
    let lane = tid % params.threads;
    for (var round = 0u; round < params.rounds; round = round + 1u) {
        let slot = round * segments + seg;
        let o = first + slot;
        let valid = o < params.out_count;
        var base = 0;
        var part = identity();
        if (valid) {
            base = keep_base(o);
            part = reduce_lane(base, lane, false, T(0));
        }
        var total = segment_tree(part, tid, lane);
        if (OP == VAR) {
            let mean = mean_of(total);
            part = identity();
            if (valid) { part = reduce_lane(base, lane, true, mean); }
            total = segment_tree(part, tid, lane);
        }
        if (lane == 0u) { results[slot] = finish(total); }
    }
    workgroupBarrier();
    {{WRITE}}
}
