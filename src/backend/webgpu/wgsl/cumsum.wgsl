// Running sum along one axis: each invocation scans one row (every position along the
// axis, with the other indices fixed) sequentially. Rows are independent, so this needs no
// workgroup memory or barriers; a long row with few others is the slow case (a parallel
// scan would split it).
//
// f16 inputs accumulate in f32 and the kernel then writes f32 into a temporary buffer that
// the backend converts to f16 afterwards: neighbouring rows can share a packed word, and
// one invocation per row could not write whole words alone.

struct Params {
    rows: u32,
    len: u32,                // length of the axis
    ndim: u32,               // dimensions other than the axis
    offset: u32,             // element offset of the input view
    in_axis_stride: i32,
    out_axis_stride: u32,
    _pad0: u32,
    _pad1: u32,
    shape: array<vec4<u32>, 2>,       // the other dimensions, in order
    in_strides: array<vec4<i32>, 2>,
    out_strides: array<vec4<u32>, 2>, // the contiguous output's strides of those dimensions
};

@group(0) @binding(0) var<storage, read> inp: array<{{IN_STORAGE}}>;
@group(0) @binding(1) var<storage, read_write> out: array<{{OUT_STORAGE}}>;
@group(0) @binding(2) var<uniform> params: Params;

const WORKGROUP_SIZE: u32 = 256u;

alias T = {{ACC_T}};

fn load(i: u32) -> T {
    {{LOAD}}
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    // Large launches use a 2-D grid of workgroups: the limit per dimension is 65535.
    let row = gid.x + gid.y * groups.x * WORKGROUP_SIZE;
    if (row >= params.rows) { return; }
    var rem = row;
    var src = i32(params.offset);
    var dst = 0u;
    for (var d = i32(params.ndim) - 1; d >= 0; d = d - 1) {
        let n = params.shape[d / 4][d % 4];
        let k = rem % n;
        src = src + i32(k) * params.in_strides[d / 4][d % 4];
        dst = dst + k * params.out_strides[d / 4][d % 4];
        rem = rem / n;
    }
    var acc = T(0);
    for (var j = 0u; j < params.len; j = j + 1u) {
        acc = acc + load(u32(src));
        out[dst] = acc;
        src = src + params.in_axis_stride;
        dst = dst + params.out_axis_stride;
    }
}
