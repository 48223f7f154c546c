// Row scatter: dst[pairs[2k], j] = rows[pairs[2k + 1], j] for each kept pair k. The host
// has resolved repeated indices (the last occurrence wins) into pairs of distinct dst
// rows, so no two invocations write the same element. dst and rows may have any strides
// (dst addresses no element twice); their rows are seen through up to 8 dimensions.
// Elements move as raw bits: HALF (f16, packed two to a u32) or 32-bit elements.
//
// One invocation per element. An f16 element shares its word with a neighbour that may be
// written by another invocation, so f16 runs as two dispatches: the first writes only
// elements at even storage positions, the second only those at odd ones. Within a
// dispatch each word then has one writer, which reads, modifies and writes it alone; the
// next dispatch sees the first one's writes.

struct Params {
    count: u32,          // kept rows * row
    row: u32,            // elements per row
    row_ndim: u32,       // dimensions of a row
    parity: u32,         // f16: the storage parity this dispatch writes
    dst_offset: u32,
    rows_offset: u32,
    dst_stride0: i32,    // dst stride between rows
    rows_stride0: i32,   // rows stride between rows
    row_shape: array<vec4<u32>, 2>,
    dst_strides: array<vec4<i32>, 2>,
    rows_strides: array<vec4<i32>, 2>,
};

@group(0) @binding(0) var<storage, read> rows: array<u32>;
@group(0) @binding(1) var<storage, read> pairs: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;
@group(0) @binding(3) var<uniform> params: Params;

const WORKGROUP_SIZE: u32 = 256u;
const HALF: bool = {{HALF}};

// Large launches use a 2-D grid of workgroups: the limit per dimension is 65535.
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let e = gid.x + gid.y * groups.x * WORKGROUP_SIZE;
    if (e >= params.count) { return; }
    let k = e / params.row;
    var rem = e % params.row;
    var d_pos = i32(params.dst_offset) + i32(pairs[2u * k]) * params.dst_stride0;
    var s_pos = i32(params.rows_offset) + i32(pairs[2u * k + 1u]) * params.rows_stride0;
    for (var d = i32(params.row_ndim) - 1; d >= 0; d = d - 1) {
        let n = params.row_shape[d / 4][d % 4];
        let c = i32(rem % n);
        d_pos = d_pos + c * params.dst_strides[d / 4][d % 4];
        s_pos = s_pos + c * params.rows_strides[d / 4][d % 4];
        rem = rem / n;
    }
    let p = u32(d_pos);
    let s = u32(s_pos);
    if (HALF) {
        if ((p & 1u) != params.parity) { return; }
        let bits = (rows[s >> 1u] >> ((s & 1u) * 16u)) & 0xffffu;
        let shift = (p & 1u) * 16u;
        let w = p >> 1u;
        dst[w] = (dst[w] & ~(0xffffu << shift)) | (bits << shift);
    } else {
        dst[p] = rows[s];
    }
}
