// Running sum, product, maximum or minimum along one axis, or the position each running
// maximum or minimum came from: each invocation scans one row (every position along the axis,
// the other indices fixed) in order; rows are independent, so no workgroup memory or barriers. {{STEP}} folds element x at position j into acc (and at, its position).
//
// f16 inputs compute in f32 and the values go as f32 into a temporary buffer that the backend
// converts afterwards: neighbouring rows can share a packed word.

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

// Bits, not x != x: a compiler may assume there are no NaNs.
fn is_nan(x: T) -> bool {
    {{IS_NAN}}
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
    var acc = load(u32(src));
    var at = 0u;
    out[dst] = {{RESULT}};
    for (var j = 1u; j < params.len; j = j + 1u) {
        src = src + params.in_axis_stride;
        dst = dst + params.out_axis_stride;
        let x = load(u32(src));
        {{STEP}}
        out[dst] = {{RESULT}};
    }
}
