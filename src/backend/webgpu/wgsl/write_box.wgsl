// write_box kernel (concat, stack): copies a strided source view into a box of a contiguous
// destination; elements outside the box keep their values. Elements move as bits (both
// buffers are read as u32 words whatever the dtype), so NaN payloads and signed zeros
// survive. The backend fills in LANES, the elements per u32 word (1, 2 or 4).
//
// 4-byte types: one invocation per source element.
// 2- and 1-byte types (stored LANES per u32 word): a word must be written by a single
// invocation, so each invocation owns one destination word of one box row and writes it
// whole, merging the box's lanes into the word as it stands (the other lanes belong to an
// earlier box, written by an earlier dispatch, or to a later one, which will merge in turn).
// A word shared by several box rows is owned by the row of its first lane inside the box,
// whose invocation finds the later rows' lanes through box_source.

struct Params {
    count: u32,          // invocations with work: source elements, or rows * words_per_row
    ndim: u32,
    row_len: u32,        // source elements per row (the last dimension)
    words_per_row: u32,  // packed types: the most words a row can touch
    src_offset: u32,     // element offset of the source view
    dst_base: u32,       // destination element of the box's first element
    dst_numel: u32,      // destination elements (the last word may hold only one)
    _pad: u32,
    src_shape: array<vec4<u32>, 2>,
    src_strides: array<vec4<i32>, 2>,   // may be 0 (broadcast) or negative (flip)
    dst_shape: array<vec4<u32>, 2>,
    dst_strides: array<vec4<u32>, 2>,   // contiguous
    box_start: array<vec4<u32>, 2>,
};

@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

const WORKGROUP_SIZE: u32 = 256u;
const LANES: u32 = {{LANES}}u;
const BITS: u32 = 32u / LANES;
const MASK: u32 = 0xffffffffu >> (32u - BITS);

// Bits of packed source element i (its lane of the word).
fn src_lane(i: u32) -> u32 {
    return (src[i / LANES] >> ((i % LANES) * BITS)) & MASK;
}

// Source element of destination element e when e lies inside the box, else -1. Used only
// at row ends, where a word may reach into a neighbouring row.
fn box_source(e: u32) -> i32 {
    if (e >= params.dst_numel) { return -1; }
    var index = i32(params.src_offset);
    for (var d = 0u; d < params.ndim; d = d + 1u) {
        let c = (e / params.dst_strides[d / 4u][d % 4u]) % params.dst_shape[d / 4u][d % 4u];
        let k = c - params.box_start[d / 4u][d % 4u];  // wraps past the shape when c < start
        if (k >= params.src_shape[d / 4u][d % 4u]) { return -1; }
        index = index + i32(k) * params.src_strides[d / 4u][d % 4u];
    }
    return index;
}

fn copy_element(i: u32) {
    var rem = i;
    var s = i32(params.src_offset);
    var o = params.dst_base;
    for (var d = i32(params.ndim) - 1; d >= 0; d = d - 1) {
        let n = params.src_shape[d / 4][d % 4];
        let c = rem % n;
        rem = rem / n;
        s = s + i32(c) * params.src_strides[d / 4][d % 4];
        o = o + c * params.dst_strides[d / 4][d % 4];
    }
    dst[o] = src[u32(s)];
}

fn copy_word(i: u32) {
    let r = i / params.words_per_row;
    let w = i % params.words_per_row;
    // Row r's first element in the source and in the destination.
    var rem = r;
    var s = i32(params.src_offset);
    var o = params.dst_base;
    let last = params.ndim - 1u;
    for (var d = i32(last) - 1; d >= 0; d = d - 1) {
        let n = params.src_shape[d / 4][d % 4];
        let c = rem % n;
        rem = rem / n;
        s = s + i32(c) * params.src_strides[d / 4][d % 4];
        o = o + c * params.dst_strides[d / 4][d % 4];
    }
    let row_end = o + params.row_len;
    let word = o / LANES + w;
    let e0 = LANES * word;
    if (e0 >= row_end) { return; }  // a spare slot: this row touches fewer words
    for (var j = 0u; j < LANES; j = j + 1u) {
        if (e0 + j < o && box_source(e0 + j) >= 0) { return; }  // an earlier row's invocation writes it
    }
    let step = params.src_strides[last / 4u][last % 4u];
    var v = dst[word];  // lanes outside the box keep their bits
    for (var j = 0u; j < LANES; j = j + 1u) {
        let e = e0 + j;
        var index = -1;
        if (e >= o && e < row_end) { index = s + i32(e - o) * step; } else if (e >= row_end) { index = box_source(e); }
        if (index >= 0) {
            let shift = j * BITS;
            v = (v & ~(MASK << shift)) | (src_lane(u32(index)) << shift);
        }
    }
    dst[word] = v;
}

// Large launches use a 2-D grid of workgroups: the limit per dimension is 65535.
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = gid.x + gid.y * groups.x * WORKGROUP_SIZE;
    if (i >= params.count) { return; }
    if (LANES > 1u) { copy_word(i); } else { copy_element(i); }
}
