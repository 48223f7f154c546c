// Matrix multiplication: out [batch, M, N] (contiguous) = a [batch, M, K] @ b [batch, K, N],
// with a and b read in place through their strides (transposed, sliced and broadcast views
// alike). Two kernels share this file; the host names one of them `main`:
//
// tiled: a workgroup of 256 invocations computes a 64 x 64 tile of one output matrix, 4 x 4
//   outputs per invocation (4 consecutive rows, 4 consecutive columns). K advances 16 at a
//   time: the workgroup stages a 64 x 16 tile of a and a 16 x 64 tile of b in workgroup
//   memory (one vec4 of each per invocation, zeros past the edges), then every invocation
//   does 16 rank-1 updates of its 4 x 4 block from two vec4 reads. The staging order follows
//   whichever stride is 1, so neighbouring invocations read neighbouring memory whether a
//   matrix is stored by rows or by columns.
// dot: one output per segment of `threads` invocations, which split K and meet in a tree;
//   for matrix-vector products (M = 1 or N = 1), where a 64 x 64 tile would be mostly idle.
//   With `interleave` the segments are spread across the workgroup, so that when the outputs
//   are contiguous in memory neighbouring invocations read neighbouring outputs' elements.
//
// Workgroups are numbered in a 2-D grid (65535 per dimension) and the number is split into
// batch element and tile, so any batch count fits. f16 is stored packed two per u32 and
// unpacked on load; all arithmetic is f32. An f16 output is written a whole u32 word per
// invocation, so no two invocations write one word: the tiled kernel's columns start at an
// even index (the host sends odd N through an f32 buffer instead), and the dot kernel writes
// pairs of outputs from workgroup memory.

struct Params {
    M: u32,
    N: u32,
    K: u32,
    batch: u32,          // product of the batch dimensions
    tiles_m: u32,        // tiled: ceil(M / 64), ceil(N / 64)
    tiles_n: u32,
    batch_ndim: u32,
    threads: u32,        // dot: invocations per output, a power of two
    a_offset: u32,       // element offsets of the views
    b_offset: u32,
    a_k_major: u32,      // tiled: a's stride along K is 1 (else stage it along M)
    b_n_major: u32,      // tiled: b's stride along N is 1 (else stage it along K)
    a_sm: i32,           // strides of the matrix dimensions, in elements
    a_sk: i32,
    b_sk: i32,
    b_sn: i32,
    interleave: u32,     // dot: segment s, lane l is invocation l * segments + s
    total: u32,          // dot: batch * M * N
    _pad0: u32,
    _pad1: u32,
    batch_shape: array<vec4<u32>, 2>,
    a_batch: array<vec4<i32>, 2>,  // strides of the batch dimensions (0 where broadcast)
    b_batch: array<vec4<i32>, 2>,
};

@group(0) @binding(0) var<storage, read> a: array<{{IN_STORAGE}}>;
@group(0) @binding(1) var<storage, read> b: array<{{IN_STORAGE}}>;
@group(0) @binding(2) var<storage, read_write> out: array<{{OUT_STORAGE}}>;
@group(0) @binding(3) var<uniform> params: Params;

const WG: u32 = 256u;
const TM: u32 = 64u;  // output tile rows
const TN: u32 = 64u;  // output tile columns
const TK: u32 = 16u;  // depth of a K step
// vec4s per K row of a staged tile: 16 plus one of padding, so that when 16 neighbouring
// invocations store 16 different k (a matrix stored by rows) their stores spread over the
// memory banks instead of all landing in one.
const PITCH: u32 = 17u;

fn load_a(i: u32) -> f32 {
    {{LOAD_A}}
}

fn load_b(i: u32) -> f32 {
    {{LOAD_B}}
}

// f32 to f16 bits, rounding to nearest; NaN, infinity and overflow are handled here
// because pack2x16float leaves values outside the f16 range indeterminate.
fn f16_bits(x: f32) -> u32 {
    let bits = bitcast<u32>(x);
    if ((bits & 0x7fffffffu) > 0x7f800000u) { return 0x7e00u; }
    if (abs(x) >= 65520.0) { return ((bits >> 16u) & 0x8000u) | 0x7c00u; }
    return pack2x16float(vec2<f32>(x, 0.0)) & 0xffffu;
}

// Storage indices of the first element of batch element `batch` in a (x) and b (y).
fn batch_bases(batch: u32) -> vec2<i32> {
    var rem = batch;
    var ia = i32(params.a_offset);
    var ib = i32(params.b_offset);
    for (var d = i32(params.batch_ndim) - 1; d >= 0; d = d - 1) {
        let n = params.batch_shape[d / 4][d % 4];
        let i = i32(rem % n);
        rem = rem / n;
        ia = ia + i * params.a_batch[d / 4][d % 4];
        ib = ib + i * params.b_batch[d / 4][d % 4];
    }
    return vec2<i32>(ia, ib);
}

// ---- tiled kernel ---------------------------------------------------------------------

// a's tile as [k][m / 4] and b's as [k][n / 4]: the inner loop reads one vec4 of each.
var<workgroup> a_tile: array<vec4<f32>, 272>;
var<workgroup> b_tile: array<vec4<f32>, 272>;

// Writes up to 4 outputs of one row: flat index base + n, ..., columns n.. below N.
fn store4(base: u32, n: u32, v: vec4<f32>) {
    {{STORE4}}
}

@compute @workgroup_size(256)
fn {{TILED_ENTRY}}(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
    let group = wid.x + wid.y * groups.x;
    let per_batch = params.tiles_m * params.tiles_n;
    let batch = group / per_batch;
    if (batch >= params.batch) { return; }  // the grid's spare workgroups, whole: barriers stay uniform
    let tile = group - batch * per_batch;
    let m0 = (tile / params.tiles_n) * TM;
    let n0 = (tile % params.tiles_n) * TN;
    let bases = batch_bases(batch);
    let tx = tid % 16u;  // columns n0 + 4 tx .. + 3
    let ty = tid / 16u;  // rows m0 + 4 ty .. + 3
    var acc0 = vec4<f32>(0.0);
    var acc1 = vec4<f32>(0.0);
    var acc2 = vec4<f32>(0.0);
    var acc3 = vec4<f32>(0.0);
    let m = m0 + 4u * ty;
    let n = n0 + 4u * tx;
    let in_range = m < params.M && n < params.N;
    for (var k0 = 0u; k0 < params.K; k0 = k0 + TK) {
        // One vec4 of each tile per invocation: 4 consecutive rows of a (columns of b) at one
        // k, stored whole. When the stride along K is 1, 16 neighbouring invocations take 16
        // neighbouring k; otherwise they take 64 neighbouring rows (columns).
        var ag = tid % 16u;
        var ak = tid / 16u;
        if (params.a_k_major != 0u) {
            ag = tid / 16u;
            ak = tid % 16u;
        }
        var av = vec4<f32>(0.0);
        if (k0 + ak < params.K) {
            let r = m0 + 4u * ag;
            let at = bases.x + i32(k0 + ak) * params.a_sk + i32(r) * params.a_sm;
            if (r < params.M) { av.x = load_a(u32(at)); }
            if (r + 1u < params.M) { av.y = load_a(u32(at + params.a_sm)); }
            if (r + 2u < params.M) { av.z = load_a(u32(at + 2 * params.a_sm)); }
            if (r + 3u < params.M) { av.w = load_a(u32(at + 3 * params.a_sm)); }
        }
        a_tile[ak * PITCH + ag] = av;
        var bg = tid % 16u;
        var bk = tid / 16u;
        if (params.b_n_major == 0u) {
            bg = tid / 16u;
            bk = tid % 16u;
        }
        var bv = vec4<f32>(0.0);
        if (k0 + bk < params.K) {
            let c = n0 + 4u * bg;
            let bt = bases.y + i32(k0 + bk) * params.b_sk + i32(c) * params.b_sn;
            if (c < params.N) { bv.x = load_b(u32(bt)); }
            if (c + 1u < params.N) { bv.y = load_b(u32(bt + params.b_sn)); }
            if (c + 2u < params.N) { bv.z = load_b(u32(bt + 2 * params.b_sn)); }
            if (c + 3u < params.N) { bv.w = load_b(u32(bt + 3 * params.b_sn)); }
        }
        b_tile[bk * PITCH + bg] = bv;
        workgroupBarrier();
        // Invocations whose whole 4 x 4 block lies past the edge skip the arithmetic (no
        // barrier inside, so the branch may diverge).
        if (in_range) {
            for (var kk = 0u; kk < TK; kk = kk + 1u) {
                let a4 = a_tile[kk * PITCH + ty];
                let b4 = b_tile[kk * PITCH + tx];
                acc0 = acc0 + a4.x * b4;
                acc1 = acc1 + a4.y * b4;
                acc2 = acc2 + a4.z * b4;
                acc3 = acc3 + a4.w * b4;
            }
        }
        workgroupBarrier();  // all have read the tiles before they are overwritten
    }
    if (!in_range) { return; }
    let row = (batch * params.M + m) * params.N;
    if (m < params.M) { store4(row, n, acc0); }
    if (m + 1u < params.M) { store4(row + params.N, n, acc1); }
    if (m + 2u < params.M) { store4(row + 2u * params.N, n, acc2); }
    if (m + 3u < params.M) { store4(row + 3u * params.N, n, acc3); }
}

// ---- dot kernel -----------------------------------------------------------------------

var<workgroup> partial: array<f32, 256>;
var<workgroup> results: array<f32, 256>;

// The invocation that holds lane `lane` of segment `seg`.
fn slot(seg: u32, lane: u32, segments: u32) -> u32 {
    if (params.interleave != 0u) { return lane * segments + seg; }
    return seg * params.threads + lane;
}

// Writes the workgroup's results (outputs first .. first + count - 1).
fn store_results(first: u32, count: u32, tid: u32) {
    {{STORE_RESULTS}}
}

@compute @workgroup_size(256)
fn {{DOT_ENTRY}}(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
    let group = wid.x + wid.y * groups.x;
    let t = params.threads;
    let segments = WG / t;
    let first = group * segments;
    if (first >= params.total) { return; }  // whole workgroups only
    var seg = tid / t;
    var lane = tid % t;
    if (params.interleave != 0u) {
        seg = tid % segments;
        lane = tid / segments;
    }
    let o = first + seg;
    var sum = 0.0;
    if (o < params.total) {
        let per_batch = params.M * params.N;
        let batch = o / per_batch;
        let i = o - batch * per_batch;
        let bases = batch_bases(batch);
        let a_row = bases.x + i32(i / params.N) * params.a_sm;
        let b_col = bases.y + i32(i % params.N) * params.b_sn;
        for (var k = lane; k < params.K; k = k + t) {
            sum = sum + load_a(u32(a_row + i32(k) * params.a_sk)) * load_b(u32(b_col + i32(k) * params.b_sk));
        }
    }
    partial[tid] = sum;
    workgroupBarrier();
    for (var s = t / 2u; s > 0u; s = s / 2u) {
        if (lane < s) { partial[tid] = partial[tid] + partial[slot(seg, lane + s, segments)]; }
        workgroupBarrier();
    }
    if (lane == 0u) { results[seg] = partial[tid]; }
    workgroupBarrier();
    store_results(first, segments, tid);
}
