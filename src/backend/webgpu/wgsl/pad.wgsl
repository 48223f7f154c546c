// pad kernel, a gather: each element of the contiguous output is the input element it
// covers (output coordinate minus `before` in every dimension) or, in the padding, the
// value. Elements move as bits (u32 words whatever the dtype), so NaN payloads and signed
// zeros survive. The backend fills in IS_F16.
//
// 4-byte types: one output element per invocation. f16 (stored two per u32 word): one
// output word, two elements, per invocation, so no two invocations write the same word.

struct Params {
    count: u32,         // output elements
    ndim: u32,
    value_bits: u32,    // the pad value's bits in the output type (f16 in the low half)
    in_offset: u32,     // element offset of the input view
    out_shape: array<vec4<u32>, 2>,
    in_shape: array<vec4<u32>, 2>,
    before: array<vec4<u32>, 2>,
    in_strides: array<vec4<i32>, 2>,   // may be 0 (broadcast) or negative (flip)
};

@group(0) @binding(0) var<storage, read> inp: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

const WORKGROUP_SIZE: u32 = 256u;
const IS_F16: bool = {{IS_F16}};

fn load(i: u32) -> u32 {
    if (IS_F16) { return (inp[i >> 1u] >> ((i & 1u) * 16u)) & 0xffffu; }
    return inp[i];
}

// Bits of output element e.
fn value(e: u32) -> u32 {
    var rem = e;
    var index = i32(params.in_offset);
    for (var d = i32(params.ndim) - 1; d >= 0; d = d - 1) {
        let n = params.out_shape[d / 4][d % 4];
        let k = rem % n - params.before[d / 4][d % 4];  // wraps past the shape in the padding before
        rem = rem / n;
        if (k >= params.in_shape[d / 4][d % 4]) { return params.value_bits; }
        index = index + i32(k) * params.in_strides[d / 4][d % 4];
    }
    return load(u32(index));
}

// Large launches use a 2-D grid of workgroups: the limit per dimension is 65535.
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = gid.x + gid.y * groups.x * WORKGROUP_SIZE;
    if (!IS_F16) {
        if (i < params.count) { out[i] = value(i); }
        return;
    }
    let first = 2u * i;
    if (first >= params.count) { return; }
    var high = 0u;
    if (first + 1u < params.count) { high = value(first + 1u); }
    out[i] = value(first) | (high << 16u);
}
