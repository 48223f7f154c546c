// Shared by the elementwise kernels: the parameter block, the strided index map and the
// invocation index. Names in double braces are filled in per kernel by the backend.
//
// Each invocation produces ELEMS consecutive output elements (2 when f16 is stored packed
// two to a u32, so no two invocations write the same word; 1 otherwise).

struct Params {
    numel: u32,
    ndim: u32,
    dense: u32,          // bit k: input k is dense in output order (index = offset + i)
    _pad: u32,
    offsets: vec4<u32>,  // element offset of each input in its storage
    shape: array<vec4<u32>, 2>,
    strides0: array<vec4<i32>, 2>,
    strides1: array<vec4<i32>, 2>,
};

@group(0) @binding({{PARAMS_BINDING}}) var<uniform> params: Params;

const WORKGROUP_SIZE: u32 = 256u;
const ELEMS: u32 = {{ELEMS}};

// Walks the dimensions from the innermost out; strides may be 0 (broadcast) or negative.
fn strided_index(linear: u32, strides: array<vec4<i32>, 2>, offset: u32) -> u32 {
    var rem = linear;
    var index = i32(offset);
    for (var d = i32(params.ndim) - 1; d >= 0; d = d - 1) {
        let n = params.shape[d / 4][d % 4];
        index = index + i32(rem % n) * strides[d / 4][d % 4];
        rem = rem / n;
    }
    return u32(index);
}

fn input_index0(i: u32) -> u32 {
    if ((params.dense & 1u) != 0u) { return params.offsets.x + i; }
    return strided_index(i, params.strides0, params.offsets.x);
}

fn input_index1(i: u32) -> u32 {
    if ((params.dense & 2u) != 0u) { return params.offsets.y + i; }
    return strided_index(i, params.strides1, params.offsets.y);
}

// Large launches use a 2-D grid of workgroups: the limit per dimension is 65535.
fn invocation_index(gid: vec3<u32>, groups: vec3<u32>) -> u32 {
    return gid.x + gid.y * groups.x * WORKGROUP_SIZE;
}
