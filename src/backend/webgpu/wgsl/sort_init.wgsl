// First pass of a row sort: each row of the input (its last dimension, n long) becomes a
// segment of seg (key, position) pairs, positions n.. padded with pairs that sort after
// everything (key and position all ones): segments of 2^log_p for the bitonic passes, of n
// (no padding) for the radix sort.

struct Params {
    rows: u32,
    n: u32,           // row length
    seg: u32,         // segment length >= n
    k: u32,           // outputs per row (sort_out)
    ndim: u32,        // dimensions before the row
    offset: u32,      // element offset of the input view
    row_stride: i32,  // stride along the row
    descending: u32,  // sort_out: the number of outputs
    shape: array<vec4<u32>, 2>,
    strides: array<vec4<i32>, 2>,
};

@group(0) @binding(0) var<storage, read> inp: array<u32>;
@group(0) @binding(1) var<storage, read_write> keys: array<u32>;
@group(0) @binding(2) var<storage, read_write> pos: array<u32>;
@group(0) @binding(3) var<uniform> params: Params;

{{KEYS}}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = gid.x + gid.y * groups.x * 256u;
    if (i >= params.rows * params.seg) { return; }
    let row = i / params.seg;
    let x = i - row * params.seg;
    if (x >= params.n) {
        keys[i] = 0xffffffffu;
        pos[i] = 0xffffffffu;
        return;
    }
    let e = i32(params.offset) + view_offset(row, params.ndim, params.shape, params.strides) + i32(x) * params.row_stride;
    var key = key_of(raw_inp(u32(e)));
    if (params.descending != 0u) { key = ~key; }
    keys[i] = key;
    pos[i] = x;
}
