// The pick pass of a set_rows with many indices (set_rows.wgsl): one invocation per index
// position i. A valid index v raises winners[v] to i + 1 (atomicMax: the last position
// naming a row wins, as on the CPU); a bad one sets winners[dst_rows], after which the
// scatter writes nothing. winners starts as zeros.

struct Params {
    count: u32,
    row: u32,
    row_ndim: u32,
    parity: u32,
    dst_offset: u32,
    rows_offset: u32,
    dst_stride0: i32,
    rows_stride0: i32,
    index_offset: u32,   // element offset of the (1-D) index view
    index_stride: i32,
    n: u32,              // indices
    dst_rows: u32,       // valid indices: [0, dst_rows)
    signed_: u32,        // 1: i32 indices
    winners: u32,
    _pad0: u32,
    _pad1: u32,
};

@group(0) @binding(0) var<storage, read> indices: array<u32>;
@group(0) @binding(1) var<storage, read_write> winners: array<atomic<u32>>;
@group(0) @binding(2) var<uniform> params: Params;

const WORKGROUP_SIZE: u32 = 256u;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = gid.x + gid.y * groups.x * WORKGROUP_SIZE;
    if (i >= params.n) { return; }
    let v = indices[u32(i32(params.index_offset) + i32(i) * params.index_stride)];
    if ((params.signed_ != 0u && bitcast<i32>(v) < 0) || v >= params.dst_rows) {
        atomicOr(&winners[params.dst_rows], 1u);
    } else {
        atomicMax(&winners[v], i + 1u);
    }
}
