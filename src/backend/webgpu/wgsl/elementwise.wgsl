// Elementwise kernel: out[i] = op(in0[i], in1[i], in2[i]) over up to three strided,
// broadcast inputs; out is contiguous. The backend fills in the bindings, the loads, the
// stores and the op (names in double braces) per (op, input types, output type, how each
// input is read, vector or tail kernel); see elementwise_access.h.
//
// Each invocation produces four consecutive output elements i .. i + 3 per turn of a
// grid-stride loop over [params.start, params.end), so a launch never needs more than one
// dimension of workgroups. The vector kernel (end - start a multiple of 4) stores the four
// as one vector: vec4 for 32-bit types, two whole words of packed f16 pairs. The tail kernel
// stores element by element below params.end, f16 as whole words.

struct Params {
    start: u32,              // first element of this launch (a multiple of 4)
    end: u32,                // one past its last element
    ndim: u32,
    unused: u32,
    offsets: vec4<u32>,      // element offset of each input in its storage
    inner: vec4<u32>,        // block inputs: element offset + (i / inner) % mid
    mid: vec4<u32>,
    scalar_bits: vec4<u32>,  // op parameters (slopes, bounds), as bits of the compute type
    shape: array<vec4<u32>, 2>,
    strides0: array<vec4<i32>, 2>,
    strides1: array<vec4<i32>, 2>,
    strides2: array<vec4<i32>, 2>,
};

{{BINDINGS}}
@group(0) @binding({{PARAMS_BINDING}}) var<uniform> params: Params;

const WORKGROUP_SIZE: u32 = 256u;

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

{{FUNCTIONS}}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let quads = (params.end - params.start + 3u) / 4u;
    let step = groups.x * groups.y * WORKGROUP_SIZE;
    for (var q = gid.x + gid.y * groups.x * WORKGROUP_SIZE; q < quads; q = q + step) {
        let i = params.start + 4u * q;
        store(i, value4(i));
    }
}
