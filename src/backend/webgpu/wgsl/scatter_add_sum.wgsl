// The sum pass of scatter_add_rows (scatter.c): one invocation per dst element (r, k) adds
// rows[order[s], k] for the positions s of row r's list (scatter_add_index.wgsl) to it.
// WGSL has no f64, so the sum is kept as an unevaluated pair hi + lo (each addition's
// rounding error, from Knuth's TwoSum, goes into lo) and rounded once at the end: the
// result is the exact sum rounded to f32 unless it lies within about 2^-40 of halfway
// between two floats, the only case where the list's order (not fixed) can change the
// last bit. Nothing is written when any index was bad.

struct Params {
    count: u32,          // dst elements, N * row
    row: u32,            // elements per row
    rows: u32,           // N
    dst_offset: u32,
    rows_offset: u32,
    zero: u32,           // always 0: keeps the compiler from simplifying TwoSum away
    _pad0: u32,
    _pad1: u32,
};

@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read> scratch: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

const WORKGROUP_SIZE: u32 = 256u;

// x, but opaque to algebraic rewriting ((a + b) - a is not b in floating point).
fn opaque(x: f32) -> f32 {
    return bitcast<f32>(bitcast<u32>(x) ^ params.zero);
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let e = gid.x + gid.y * groups.x * WORKGROUP_SIZE;
    if (e >= params.count) { return; }
    let n = params.rows;
    if (scratch[3u * n + 1u] != 0u) { return; }
    let r = e / params.row;
    let k = e % params.row;
    let first = scratch[2u * n + r];
    let last = scratch[2u * n + r + 1u];
    if (first == last) { return; }
    var hi = dst[params.dst_offset + e];
    var lo = 0.0;
    for (var s = first; s < last; s = s + 1u) {
        let x = src[params.rows_offset + scratch[3u * n + 2u + s] * params.row + k];
        let sum = opaque(hi + x);
        let b = opaque(sum - hi);
        lo = lo + ((hi - (sum - b)) + (x - b));
        hi = sum;
    }
    dst[params.dst_offset + e] = hi + lo;
}
