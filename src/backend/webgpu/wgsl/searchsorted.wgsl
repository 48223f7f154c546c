// For each of values (any view), the count of elements of the ascending 1-D sorted below it
// (RIGHT: at or below it), by binary search in the sort's key order.

struct Params {
    count: u32,          // values
    n: u32,              // length of sorted
    ndim: u32,           // values' rank
    offset: u32,         // values' element offset
    sorted_offset: u32,
    sorted_stride: i32,
    right: u32,
    _pad: u32,
    shape: array<vec4<u32>, 2>,
    strides: array<vec4<i32>, 2>,
};

@group(0) @binding(0) var<storage, read> srt: array<u32>;
@group(0) @binding(1) var<storage, read> inp: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<i32>;
@group(0) @binding(3) var<uniform> params: Params;

{{KEYS}}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = gid.x + gid.y * groups.x * 256u;
    if (i >= params.count) { return; }
    let v = key_of(raw_inp(u32(i32(params.offset) + view_offset(i, params.ndim, params.shape, params.strides))));
    var lo = 0u;
    var hi = params.n;
    loop {
        if (lo >= hi) { break; }
        let mid = lo + (hi - lo) / 2u;
        let km = key_of(raw_srt(u32(i32(params.sorted_offset) + i32(mid) * params.sorted_stride)));
        if (km < v || (params.right != 0u && km == v)) { lo = mid + 1u; } else { hi = mid; }
    }
    out[i] = i32(lo);
}
