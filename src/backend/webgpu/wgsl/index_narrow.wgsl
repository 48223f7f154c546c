// i64 or u64 indices (word pairs: low, high) to the u32 the index kernels take: a value in
// [0, bound) keeps its low word; any other (a negative i64, a value past 2^32, one past the
// bound) becomes 0xffffffff, which is at or past every bound (bound < 2^32), so the kernels
// reading it keep out of bounds and a value never wraps into range. One invocation per index.

struct Params {
    count: u32,
    offset: u32,       // element offset of the index view
    stride: i32,       // in elements
    bound: u32,
};

@group(0) @binding(0) var<storage, read> indices: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = gid.x + gid.y * groups.x * 256u;
    if (i >= params.count) { return; }
    let e = u32(i32(params.offset) + i32(i) * params.stride);
    let lo = indices[2u * e];
    let hi = indices[2u * e + 1u];
    var v = 0xffffffffu;
    if (hi == 0u && lo < params.bound) { v = lo; }
    out[i] = v;
}
