// Reduction kernel: each output is reduced over the trailing (strided) dimensions of the
// input. The work is a list of items: an item is one output, or, when a long row is split,
// one chunk of one output's row (chunk c of output o is item c * out_count + o, so items
// next to each other read neighbouring outputs, which is what a column reduction wants).
// A workgroup of 256 invocations is split into segments of `threads` invocations (a power
// of two the host picks); each segment reduces one item per round. Within a segment,
// invocation `lane` takes elements lane, lane + threads, ... of the item, four at a time,
// and the segment's partial results meet in a tree in workgroup memory, or for whole
// workgroups through subgroup shuffles where the device has subgroups. threads = 1 lets
// each invocation reduce an item alone, with no workgroup memory or barriers, so many
// short rows do not leave 255 of 256 invocations idle.
//
// The same kernel serves the passes of a split reduction, chosen when there are few outputs
// for the reduced length: pass 1 (PARTIAL) writes one partial result (an Acc, three words)
// per item into a temporary buffer; pass 2 (PARTIALS) reads them, combines each output's
// chunks and finishes. var runs two such pairs: the first ends with each output's mean
// (MEAN, into a buffer the second pair reads as `aux`), the second (SECOND) sums the
// squared deviations from it, so the split var is the same two-pass computation as the
// unsplit one, which runs both passes in one kernel (TWO_PASS).
//
// Dense rows (one reduced dimension of stride 1, every row and chunk starting at a
// multiple of E elements) are read as 16-byte vectors through a second binding of the same
// buffer (VEC); the elements after the last whole vector are read one by one.
//
// The backend fills in the value types and the per-op pieces (names in double braces) and
// keeps the lines between //#if NAME and //#endif (or //#else) only for variants with
// (without) that property, so each pipeline holds only its own code: shader compilers, the
// CPU ones especially, spend their time on code even where a constant condition skips it.
// f16 is stored packed two to a u32 and accumulated in f32; an f16 output is written a whole
// word (two outputs) per invocation, so no two invocations write the same word.
//#if SG
enable subgroups;
//#endif

struct Params {
    out_count: u32,          // outputs to produce
    red_count: u32,          // elements reduced into each output (PARTIALS: chunks per output)
    keep_ndim: u32,
    red_ndim: u32,
    offset: u32,             // element offset of the input view
    threads: u32,            // invocations per item: 1, 2, 4, ..., 256
    rounds: u32,             // items per segment (2 only for f16 outputs with threads = 256)
    chunks: u32,             // chunks per output (1: an item is a whole row)
    chunk_len: u32,          // elements per chunk (the last one may be shorter)
    count_f: f32,            // elements per output as f32 (mean, var)
    divisor_f: f32,          // var: max(elements - correction, 0)
    nan_bits: u32,           // NaN and infinity as bits: WGSL constants cannot hold them
    inf_bits: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
    keep_shape: array<vec4<u32>, 2>,
    keep_strides: array<vec4<i32>, 2>,
    red_shape: array<vec4<u32>, 2>,
    red_strides: array<vec4<i32>, 2>,
};

// Elements, or for PARTIALS the partials' words.
@group(0) @binding(0) var<storage, read> inp: array<{{IN_STORAGE}}>;
//#if VEC
@group(0) @binding(1) var<storage, read> inp4: array<vec4<{{IN_STORAGE}}>>;
//#endif
//#if SECOND
@group(0) @binding(2) var<storage, read> aux: array<u32>;  // each output's mean, as f32 bits
//#endif
// Outputs as words (f32, i32, u32 bits; two f16), partials (three words each) or means.
@group(0) @binding(3) var<storage, read_write> out: array<u32>;
@group(0) @binding(4) var<uniform> params: Params;

const WG: u32 = 256u;
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
//#if F16OUT
var<workgroup> results: array<f32, 256>;
//#endif

fn identity() -> Acc {
//#if PROD
    return Acc(T(1), T(0), NONE);
//#else
    return Acc(T(0), T(0), NONE);
//#endif
}

fn is_nan(x: T) -> bool {
    {{IS_NAN}}
}

//#if SELECT
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
    if (b.v {{GREATER}} a.v) { return true; }
    return b.v == a.v && b.i < a.i;
}

fn combine(a: Acc, b: Acc) -> Acc {
    if (better(a, b)) { return b; }
    return a;
}
//#endif
//#if PROD
fn combine(a: Acc, b: Acc) -> Acc {
    return Acc(a.v * b.v, a.w, 0u);
}
//#endif
//#if ADD
fn combine(a: Acc, b: Acc) -> Acc {
    return Acc(a.v + b.v, a.w + b.w, 0u);
}
//#endif

//#if FINAL
fn finish(a: Acc) -> O {
    {{FINISH}}
}
//#endif

//#if VAR
// The mean of a finished first-pass sum.
fn mean_of(a: Acc) -> T {
    return a.v / params.count_f;
}
//#endif

//#if ELEMENTS
fn load(i: u32) -> T {
    {{LOAD}}
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

// One invocation's running state over its elements. Sums go into four independent lanes
// (s, and q for var's deviations) combined in blocks of BLOCK steps and the blocks then
// added up (ts, tq), so a float sum's rounding error grows with BLOCK plus the block count
// rather than with the element count (no compensated arithmetic for a compiler to simplify
// away). Products multiply into s; max/min/argmax/argmin keep the best element so far.
struct Lane {
    s: vec4<T>,
    q: vec4<T>,
    ts: vec4<T>,
    tq: vec4<T>,
    n: u32,
    best: Acc,
};

fn lane_start() -> Lane {
    return Lane(vec4<T>(identity().v), vec4<T>(), vec4<T>(), vec4<T>(), 0u, identity());
}

// Four elements at positions r0, r0 + rs, r0 + 2 rs, r0 + 3 rs of the row; var's second
// pass takes deviations from shift. The caller ends the step (end_step).
fn add4(st: ptr<function, Lane>, x: vec4<T>, r0: u32, rs: u32, second: bool, shift: T) {
//#if SELECT
    (*st).best = combine((*st).best, Acc(x.x, T(0), r0));
    (*st).best = combine((*st).best, Acc(x.y, T(0), r0 + rs));
    (*st).best = combine((*st).best, Acc(x.z, T(0), r0 + 2u * rs));
    (*st).best = combine((*st).best, Acc(x.w, T(0), r0 + 3u * rs));
//#endif
//#if PROD
    (*st).s = (*st).s * x;
//#endif
//#if ADD
//#if VAR
    if (second) {
        let d = x - vec4<T>(shift);
        (*st).s = (*st).s + d * d;
        (*st).q = (*st).q + d;
        return;
    }
//#endif
    (*st).s = (*st).s + x;
//#endif
}

// One element at position r.
fn add1(st: ptr<function, Lane>, x: T, r: u32, second: bool, shift: T) {
//#if SELECT
    (*st).best = combine((*st).best, Acc(x, T(0), r));
//#endif
//#if PROD
    (*st).s.x = (*st).s.x * x;
//#endif
//#if ADD
//#if VAR
    if (second) {
        let d = x - shift;
        (*st).s.x = (*st).s.x + d * d;
        (*st).q.x = (*st).q.x + d;
        return;
    }
//#endif
    (*st).s.x = (*st).s.x + x;
//#endif
}

// Ends a step of n vector additions: a block is finished after BLOCK of them.
fn end_step(st: ptr<function, Lane>, n: u32) {
//#if ADD
    (*st).n = (*st).n + n;
    if ((*st).n >= BLOCK) {
        (*st).ts = (*st).ts + (*st).s;
        (*st).tq = (*st).tq + (*st).q;
        (*st).s = vec4<T>();
        (*st).q = vec4<T>();
        (*st).n = 0u;
    }
//#endif
}

fn lane_result(st: Lane) -> Acc {
//#if SELECT
    return st.best;
//#endif
//#if PROD
    return Acc((st.s.x * st.s.y) * (st.s.z * st.s.w), T(0), 0u);
//#endif
//#if ADD
    let s = st.ts + st.s;
    let q = st.tq + st.q;
    return Acc((s.x + s.y) + (s.z + s.w), (q.x + q.y) + (q.z + q.w), 0u);
//#endif
}

//#if VEC
const E: u32 = {{VEC_ELEMS}}u;  // elements per 16-byte vector

// Part k (0, or 1 for packed f16) of a vector, as four values.
fn vec_part(x: vec4<{{IN_STORAGE}}>, k: u32) -> vec4<T> {
    {{VEC_PART}}
}

// Adds one vector whose first element is at position r0.
fn add_vec(st: ptr<function, Lane>, x: vec4<{{IN_STORAGE}}>, r0: u32, second: bool, shift: T) {
    add4(st, vec_part(x, 0u), r0, 1u, second, shift);
//#if F16IN
    add4(st, vec_part(x, 1u), r0 + 4u, 1u, second, shift);
//#endif
}

// The whole vectors of elements [start, end) for lane_part: adds them to *st and returns
// the position where the elements after the last whole vector begin. The host made
// base + start a multiple of E: vectors vb .. vb + nv - 1 hold the range's whole vectors,
// read four per step (one for max/min/argmax/argmin, whose per-element work hides the
// loads' latency and whose code would be four times larger).
fn lane_vectors(st: ptr<function, Lane>, base: i32, start: u32, end: u32, lane: u32, step: u32, second: bool,
                shift: T) -> u32 {
    let vb = (u32(base) + start) / E;
    let nv = (end - start) / E;
    var v = lane;
//#if !SELECT
    loop {
        if (v >= nv || nv - v <= 3u * step) { break; }
        let x0 = inp4[vb + v];
        let x1 = inp4[vb + v + step];
        let x2 = inp4[vb + v + 2u * step];
        let x3 = inp4[vb + v + 3u * step];
        let r0 = start + v * E;
        add_vec(st, x0, r0, second, shift);
        add_vec(st, x1, r0 + step * E, second, shift);
        add_vec(st, x2, r0 + 2u * step * E, second, shift);
        add_vec(st, x3, r0 + 3u * step * E, second, shift);
        end_step(st, E);
        v = v + 4u * step;
    }
//#endif
    loop {
        if (v >= nv) { break; }
        add_vec(st, inp4[vb + v], start + v * E, second, shift);
        end_step(st, E / 4u);
        v = v + step;
    }
    return start + nv * E + lane;
}
//#endif

// This invocation's share of elements [start, end) of the row that starts at base: every
// step-th element from start + lane.
fn lane_part(base: i32, start: u32, end: u32, lane: u32, step: u32, second: bool, shift: T) -> Acc {
    var st = lane_start();
    var r = start + lane;
//#if VEC
    r = lane_vectors(&st, base, start, end, lane, step, second, shift);
//#else
    // Four elements per step.
    loop {
        if (r >= end || end - r <= 3u * step) { break; }
        var x = vec4<T>();
        for (var k = 0u; k < 4u; k = k + 1u) { x[k] = load(red_index(base, r + k * step)); }
        add4(&st, x, r, step, second, shift);
        end_step(&st, 1u);
        r = r + 4u * step;
    }
//#endif
    loop {
        if (r >= end) { break; }
        add1(&st, load(red_index(base, r)), r, second, shift);
        end_step(&st, 1u);
        r = r + step;
    }
    return lane_result(st);
}
//#endif

//#if PARTIALS
// Partial result j of pass 1.
fn load_partial(j: u32) -> Acc {
    return Acc(bitcast<T>(inp[3u * j]), bitcast<T>(inp[3u * j + 1u]), inp[3u * j + 2u]);
}

// This invocation's share of output o's partials: chunks lane, lane + step, ...
fn partial_lane(o: u32, lane: u32, step: u32) -> Acc {
    var a = identity();
    let n = params.red_count;
    var c = lane;
    loop {
        if (c >= n || n - c <= 3u * step) { break; }
        let p0 = load_partial(c * params.out_count + o);
        let p1 = load_partial((c + step) * params.out_count + o);
        let p2 = load_partial((c + 2u * step) * params.out_count + o);
        let p3 = load_partial((c + 3u * step) * params.out_count + o);
        a = combine(a, combine(combine(p0, p1), combine(p2, p3)));
        c = c + 4u * step;
    }
    loop {
        if (c >= n) { break; }
        a = combine(a, load_partial(c * params.out_count + o));
        c = c + step;
    }
    return a;
}
//#endif


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

//#if SG
fn shuffle_xor(a: Acc, mask: u32) -> Acc {
    return Acc(subgroupShuffleXor(a.v, mask), subgroupShuffleXor(a.w, mask), subgroupShuffleXor(a.i, mask));
}

// The whole workgroup's partials combined through subgroup shuffles: a butterfly in each
// subgroup gives every invocation its subgroup's result; each subgroup's first invocation
// leaves it in workgroup memory at its own index (the others leave the identity), so no
// assumption is made about how invocations map to subgroups; then every subgroup combines
// the 256 slots, size apart per invocation, and a second butterfly the invocations' shares.
// Subgroups are full (256 is a multiple of every subgroup size).
fn workgroup_shuffle(a: Acc, tid: u32, sg_lane: u32, size: u32) -> Acc {
    var x = a;
    for (var m = size / 2u; m > 0u; m = m / 2u) { x = combine(x, shuffle_xor(x, m)); }
    if (sg_lane == 0u) {
        scratch[tid] = x;
    } else {
        scratch[tid] = identity();
    }
    workgroupBarrier();
    var y = identity();
    for (var j = sg_lane; j < WG; j = j + size) { y = combine(y, scratch[j]); }
    for (var m = size / 2u; m > 0u; m = m / 2u) { y = combine(y, shuffle_xor(y, m)); }
    workgroupBarrier();  // all have read before scratch is written again
    return y;
}
//#endif

// The segment's result from each invocation's share.
fn segment_reduce(a: Acc, tid: u32, lane: u32, sg_lane: u32, sg_size: u32) -> Acc {
//#if SG
    if (params.threads == WG) { return workgroup_shuffle(a, tid, sg_lane, sg_size); }
//#endif
    return segment_tree(a, tid, lane);
}

//#if F16OUT
// f32 to f16 bits, rounding to nearest; NaN, infinity and overflow are handled here
// because pack2x16float leaves values outside the f16 range indeterminate.
fn f16_bits(x: f32) -> u32 {
    let bits = bitcast<u32>(x);
    if ((bits & 0x7fffffffu) > 0x7f800000u) { return 0x7e00u; }
    if (abs(x) >= 65520.0) { return ((bits >> 16u) & 0x8000u) | 0x7c00u; }
    return pack2x16float(vec2<f32>(x, 0.0)) & 0xffffu;
}
//#endif

//#if ELEMENTS
// Item p's output o, the storage index of its row and its range [start, end) of the row:
// chunk c of output o is elements [c * chunk_len, (c + 1) * chunk_len).
struct Item {
    o: u32,
    base: i32,
    start: u32,
    end: u32,
};

fn item_of(p: u32) -> Item {
    var it = Item(p, 0, 0u, params.red_count);
    if (params.chunks > 1u) {
        it.o = p % params.out_count;
        it.start = (p / params.out_count) * params.chunk_len;
        it.end = min(it.start + params.chunk_len, params.red_count);
    }
    it.base = keep_base(it.o);
    return it;
}
//#endif

// Item p reduced by one invocation alone (threads = 1): no workgroup memory, no barriers.
fn reduce_alone(p: u32) -> Acc {
//#if PARTIALS
    return partial_lane(p, 0u, 1u);
//#else
    let it = item_of(p);
//#if SECOND
    return lane_part(it.base, it.start, it.end, 0u, 1u, true, bitcast<f32>(aux[it.o]));
//#else
    let total = lane_part(it.base, it.start, it.end, 0u, 1u, false, T(0));
//#if TWO_PASS
    return lane_part(it.base, it.start, it.end, 0u, 1u, true, mean_of(total));
//#else
    return total;
//#endif
//#endif
//#endif
}

// Item p (valid: it exists) reduced by its segment; every invocation gets the result.
fn reduce_item(p: u32, valid: bool, tid: u32, lane: u32, sg_lane: u32, sg_size: u32) -> Acc {
    var part = identity();
//#if PARTIALS
    if (valid) { part = partial_lane(p, lane, params.threads); }
    return segment_reduce(part, tid, lane, sg_lane, sg_size);
//#else
    var it = Item(0u, 0, 0u, 0u);
    if (valid) { it = item_of(p); }
//#if SECOND
    var shift = T(0);
    if (valid) { shift = bitcast<f32>(aux[it.o]); }
    if (valid) { part = lane_part(it.base, it.start, it.end, lane, params.threads, true, shift); }
    return segment_reduce(part, tid, lane, sg_lane, sg_size);
//#else
    if (valid) { part = lane_part(it.base, it.start, it.end, lane, params.threads, false, T(0)); }
    let total = segment_reduce(part, tid, lane, sg_lane, sg_size);
//#if TWO_PASS
    let mean = mean_of(total);
    part = identity();
    if (valid) { part = lane_part(it.base, it.start, it.end, lane, params.threads, true, mean); }
    return segment_reduce(part, tid, lane, sg_lane, sg_size);
//#else
    return total;
//#endif
//#endif
//#endif
}

//#if !F16OUT
// Item p's result, as what this pipeline writes.
fn store(p: u32, total: Acc) {
//#if PARTIAL
    out[3u * p] = bitcast<u32>(total.v);
    out[3u * p + 1u] = bitcast<u32>(total.w);
    out[3u * p + 2u] = total.i;
//#endif
//#if MEAN
    out[p] = bitcast<u32>(mean_of(total));
//#endif
//#if FINAL
    out[p] = bitcast<u32>(finish(total));
//#endif
}
//#endif

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
//#if SG
        @builtin(subgroup_invocation_id) sg_lane: u32, @builtin(subgroup_size) sg_size: u32,
//#endif
        @builtin(num_workgroups) groups: vec3<u32>) {
//#if !SG
    let sg_lane = 0u;
    let sg_size = 1u;
//#endif
    // Large launches use a 2-D grid of workgroups: the limit per dimension is 65535.
    let group = wid.x + wid.y * groups.x;
//#if PARTIAL
    let items = params.out_count * params.chunks;
//#else
    let items = params.out_count;
//#endif
    if (params.threads == 1u) {
//#if F16OUT
        // One output word (two outputs) per invocation.
        let word = group * WG + tid;
        var bits = 0u;
        for (var k = 0u; k < 2u; k = k + 1u) {
            let o = 2u * word + k;
            if (o < items) { bits = bits | (f16_bits(finish(reduce_alone(o))) << (16u * k)); }
        }
        if (2u * word < items) { out[word] = bits; }
//#else
        let p = group * WG + tid;
        if (p < items) { store(p, reduce_alone(p)); }
//#endif
        return;
    }
    let segments = WG / params.threads;
    let per_group = segments * params.rounds;
    let first = group * per_group;
    if (first >= items) { return; }  // whole workgroups only: barriers stay uniform
    let seg = tid / params.threads;
    let lane = tid % params.threads;
    for (var round = 0u; round < params.rounds; round = round + 1u) {
        let slot = round * segments + seg;
        let p = first + slot;
        let valid = p < items;
        let total = reduce_item(p, valid, tid, lane, sg_lane, sg_size);
        if (lane == 0u && valid) {
//#if F16OUT
            results[slot] = finish(total);
//#else
            store(p, total);
//#endif
        }
    }
//#if F16OUT
    // Two outputs per word, each word written whole by one invocation.
    workgroupBarrier();
    if (tid < per_group / 2u) {
        let o = first + 2u * tid;
        if (o < items) {
            var high = 0u;
            if (o + 1u < items) { high = f16_bits(results[2u * tid + 1u]); }
            out[o / 2u] = f16_bits(results[2u * tid]) | (high << 16u);
        }
    }
//#endif
}
