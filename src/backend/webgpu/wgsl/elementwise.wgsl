// Elementwise kernel: out[i] = op(in0[i], in1[i], in2[i]) over up to three strided,
// broadcast inputs; out is contiguous. The backend fills in the bindings, the loads and the
// op (names in double braces) per (op, input types, output type).
//
// Each invocation produces ELEMS consecutive output elements: 2 when the output is f16
// stored packed two to a u32, so no two invocations write the same word; 1 otherwise.

struct Params {
    numel: u32,
    ndim: u32,
    dense: u32,              // bit k: input k is dense in output order (index = offset + i)
    fixed: u32,              // bit k: input k reads one element everywhere (index = offset)
    offsets: vec4<u32>,      // element offset of each input in its storage
    scalar_bits: vec4<u32>,  // op parameters (slopes, bounds), as bits of the compute type
    shape: array<vec4<u32>, 2>,
    strides0: array<vec4<i32>, 2>,
    strides1: array<vec4<i32>, 2>,
    strides2: array<vec4<i32>, 2>,
};

{{BINDINGS}}
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
    if ((params.fixed & 1u) != 0u) { return params.offsets.x; }
    return strided_index(i, params.strides0, params.offsets.x);
}

fn input_index1(i: u32) -> u32 {
    if ((params.dense & 2u) != 0u) { return params.offsets.y + i; }
    if ((params.fixed & 2u) != 0u) { return params.offsets.y; }
    return strided_index(i, params.strides1, params.offsets.y);
}

fn input_index2(i: u32) -> u32 {
    if ((params.dense & 4u) != 0u) { return params.offsets.z + i; }
    if ((params.fixed & 4u) != 0u) { return params.offsets.z; }
    return strided_index(i, params.strides2, params.offsets.z);
}

{{FUNCTIONS}}

// Large launches use a 2-D grid of workgroups: the limit per dimension is 65535.
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let word = gid.x + gid.y * groups.x * WORKGROUP_SIZE;
    let first = word * ELEMS;
    if (first >= params.numel) { return; }
    let v0 = value(first);
    var v1 = v0;
    if (ELEMS == 2u && first + 1u < params.numel) { v1 = value(first + 1u); }
    write_out(word, v0, v1);
}
