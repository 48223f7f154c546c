// Row scatter: dst[indices[i], j] = rows[i, j], the last of repeated indices winning, and
// nothing written at all when any index lies outside [0, dst_rows) (the core reports it
// through its own check, index_check.wgsl). dst and rows may have any strides (dst
// addresses no element twice); their rows are seen through up to 8 dimensions. Elements
// move as raw bits: HALF (f16, packed two to a u32) or 32-bit elements.
//
// One invocation per element of rows. Which position wins a dst row is settled on the
// device, never by reading indices back: with few indices (winners == 0) each invocation
// scans them all, leaving when any is bad or a later one names its row; with many, a pass
// before this one (set_rows_pick.wgsl) left in winners[r] the last position + 1 naming row
// r and in winners[dst_rows] whether any index was bad.
//
// An f16 element shares its word with a neighbour that may be written by another
// invocation. Where every row of dst covers whole words (words == 1: the host saw that each
// element pair (2m, 2m + 1) of a row lies in one word), an invocation writes one word, both
// of its elements, in one dispatch. Otherwise f16 runs as two dispatches: the first writes
// only elements at even storage positions, the second only those at odd ones. Within a
// dispatch each word then has one writer, which reads, modifies and writes it alone; the
// next dispatch sees the first one's writes.

struct Params {
    count: u32,          // indices * row
    row: u32,            // elements per row
    row_ndim: u32,       // dimensions of a row
    parity: u32,         // f16: the storage parity this dispatch writes
    dst_offset: u32,
    rows_offset: u32,
    dst_stride0: i32,    // dst stride between rows
    rows_stride0: i32,   // rows stride between rows
    index_offset: u32,   // element offset of the (1-D) index view
    index_stride: i32,
    n: u32,              // indices
    dst_rows: u32,       // valid indices: [0, dst_rows)
    signed_: u32,        // 1: i32 indices
    winners: u32,        // 1: the pick pass ran
    words: u32,          // f16: 1 when an invocation writes one whole word (count is even)
    _pad1: u32,
    row_shape: array<vec4<u32>, 2>,
    dst_strides: array<vec4<i32>, 2>,
    rows_strides: array<vec4<i32>, 2>,
};

@group(0) @binding(0) var<storage, read> rows: array<u32>;
@group(0) @binding(1) var<storage, read> indices: array<u32>;
@group(0) @binding(2) var<storage, read> winners: array<u32>; // the indices again when unused
@group(0) @binding(3) var<storage, read_write> dst: array<u32>;
@group(0) @binding(4) var<uniform> params: Params;

const WORKGROUP_SIZE: u32 = 256u;
const HALF: bool = {{HALF}};

fn index_at(i: u32) -> u32 {
    return indices[u32(i32(params.index_offset) + i32(i) * params.index_stride)];
}

fn bad(v: u32) -> bool {
    if (params.signed_ != 0u && bitcast<i32>(v) < 0) { return true; }
    return v >= params.dst_rows;
}

// Whether position i's row is written: every index valid, and no later one names the row.
fn wins(i: u32, v: u32) -> bool {
    if (params.winners != 0u) {
        return winners[params.dst_rows] == 0u && winners[v] == i + 1u;
    }
    for (var k = 0u; k < params.n; k = k + 1u) {
        let w = index_at(k);
        if (bad(w) || (k > i && w == v)) { return false; }
    }
    return true;
}

// Storage positions in dst and rows of element rem of position i's row, written to dst row v.
fn positions(i: u32, v: u32, rem_in: u32) -> vec2<u32> {
    var rem = rem_in;
    var d_pos = i32(params.dst_offset) + i32(v) * params.dst_stride0;
    var s_pos = i32(params.rows_offset) + i32(i) * params.rows_stride0;
    for (var d = i32(params.row_ndim) - 1; d >= 0; d = d - 1) {
        let n = params.row_shape[d / 4][d % 4];
        let c = i32(rem % n);
        d_pos = d_pos + c * params.dst_strides[d / 4][d % 4];
        s_pos = s_pos + c * params.rows_strides[d / 4][d % 4];
        rem = rem / n;
    }
    return vec2<u32>(u32(d_pos), u32(s_pos));
}

fn half_at(s: u32) -> u32 { return (rows[s >> 1u] >> ((s & 1u) * 16u)) & 0xffffu; }

// Large launches use a 2-D grid of workgroups: the limit per dimension is 65535.
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let t = gid.x + gid.y * groups.x * WORKGROUP_SIZE;
    let words = HALF && params.words != 0u;
    let e = select(t, 2u * t, words); // the (first) element of rows this invocation moves
    if (e >= params.count) { return; }
    let i = e / params.row;
    let v = index_at(i);
    if (!wins(i, v)) { return; }
    let at = positions(i, v, e % params.row);
    if (words) {
        let second = positions(i, v, e % params.row + 1u);
        dst[at.x >> 1u] = half_at(at.y) | (half_at(second.y) << 16u);
    } else if (HALF) {
        let p = at.x;
        if ((p & 1u) != params.parity) { return; }
        let shift = (p & 1u) * 16u;
        let w = p >> 1u;
        dst[w] = (dst[w] & ~(0xffffu << shift)) | (half_at(at.y) << shift);
    } else {
        dst[at.x] = rows[at.y];
    }
}
