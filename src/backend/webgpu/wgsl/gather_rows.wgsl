// Row gather: out[i, j] = table[indices[i], j] for a contiguous output [n, row] and a
// table of any strides, its row seen through up to 8 dimensions (row_shape, row_strides).
// Elements move as raw bits, so every type shares this kernel and NaN payloads survive:
// HALF (f16, two elements packed in a u32) or 32-bit elements.
//
// One invocation per output element, or per output word for f16: it builds the whole word
// from its two elements, so no two invocations write the same word. An index outside
// [0, rows) gives a row of zeros (an i32 read as u32 is negative exactly when it is at
// least 2^31, past any table): nothing is read out of bounds, and the core reports the
// index through its own check (index_check.wgsl).

struct Params {
    count: u32,          // output elements, n * row
    row: u32,            // elements per row
    row_ndim: u32,       // dimensions of a row
    table_offset: u32,   // element offset of the table view
    index_offset: u32,   // element offset of the (1-D) index view
    index_stride: i32,
    table_stride0: i32,  // table stride between rows
    rows: u32,           // rows of the table: valid indices are [0, rows)
    row_shape: array<vec4<u32>, 2>,
    row_strides: array<vec4<i32>, 2>,
};

@group(0) @binding(0) var<storage, read> table: array<u32>;
@group(0) @binding(1) var<storage, read> indices: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;
@group(0) @binding(3) var<uniform> params: Params;

const WORKGROUP_SIZE: u32 = 256u;
const HALF: bool = {{HALF}};

const NONE: u32 = 0xffffffffu;

// Storage element index in the table of output element e, or NONE when its row's index is
// out of range (a table has fewer than 2^31 elements, so no position is NONE).
fn source(e: u32) -> u32 {
    let i = e / params.row;
    var rem = e % params.row;
    let r = indices[u32(i32(params.index_offset) + i32(i) * params.index_stride)];
    if (r >= params.rows) { return NONE; }
    var pos = i32(params.table_offset) + i32(r) * params.table_stride0;
    for (var d = i32(params.row_ndim) - 1; d >= 0; d = d - 1) {
        let n = params.row_shape[d / 4][d % 4];
        pos = pos + i32(rem % n) * params.row_strides[d / 4][d % 4];
        rem = rem / n;
    }
    return u32(pos);
}

// The 16 bits of f16 element p of the table (0 for NONE).
fn half_bits(p: u32) -> u32 {
    if (p == NONE) { return 0u; }
    return (table[p >> 1u] >> ((p & 1u) * 16u)) & 0xffffu;
}

// Large launches use a 2-D grid of workgroups: the limit per dimension is 65535.
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let unit = gid.x + gid.y * groups.x * WORKGROUP_SIZE;
    if (HALF) {
        let first = unit * 2u;
        if (first >= params.count) { return; }
        var high = 0u;
        if (first + 1u < params.count) { high = half_bits(source(first + 1u)); }
        out[unit] = half_bits(source(first)) | (high << 16u);
    } else {
        if (unit >= params.count) { return; }
        let p = source(unit);
        if (p == NONE) {
            out[unit] = 0u;
        } else {
            out[unit] = table[p];
        }
    }
}
