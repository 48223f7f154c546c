// pad kernel, a gather: each element of the contiguous output is the input element it
// covers (output coordinate minus `before` in every dimension) or, in the padding, the
// value. Elements move as bits (u32 words whatever the dtype), so NaN payloads and signed
// zeros survive; 64-bit elements come as word pairs (int64.c), the output's odd words high. The backend fills in LANES, the elements per u32 word (1, 2 or 4).
//
// 4-byte types: one output element per invocation. 2- and 1-byte types (stored LANES per
// u32 word): one output word, LANES elements, per invocation, so no two invocations write
// the same word.

struct Params {
    count: u32,         // output elements
    ndim: u32,
    value_bits: u32,    // the pad value's bits in the output type (a packed type's in the low lane)
    in_offset: u32,     // element offset of the input view
    value_hi: u32,      // with pairs: the value's high word, for the odd output words
    pairs: u32,         // nonzero: 64-bit elements seen as (low, high) word pairs, LANES 1
    unused0: u32,
    unused1: u32,
    out_shape: array<vec4<u32>, 2>,
    in_shape: array<vec4<u32>, 2>,
    before: array<vec4<u32>, 2>,
    in_strides: array<vec4<i32>, 2>,   // may be 0 (broadcast) or negative (flip)
};

@group(0) @binding(0) var<storage, read> inp: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

const WORKGROUP_SIZE: u32 = 256u;
const LANES: u32 = {{LANES}}u;
const BITS: u32 = 32u / LANES;
const MASK: u32 = 0xffffffffu >> (32u - BITS);

fn load(i: u32) -> u32 {
    return (inp[i / LANES] >> ((i % LANES) * BITS)) & MASK;
}

// Bits of output element e.
fn value(e: u32) -> u32 {
    var rem = e;
    var index = i32(params.in_offset);
    for (var d = i32(params.ndim) - 1; d >= 0; d = d - 1) {
        let n = params.out_shape[d / 4][d % 4];
        let k = rem % n - params.before[d / 4][d % 4];  // wraps past the shape in the padding before
        rem = rem / n;
        if (k >= params.in_shape[d / 4][d % 4]) { return select(params.value_bits, params.value_hi, params.pairs != 0u && (e & 1u) == 1u); }
        index = index + i32(k) * params.in_strides[d / 4][d % 4];
    }
    return load(u32(index));
}

// Large launches use a 2-D grid of workgroups: the limit per dimension is 65535.
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = gid.x + gid.y * groups.x * WORKGROUP_SIZE;
    if (LANES == 1u) {
        if (i < params.count) { out[i] = value(i); }
        return;
    }
    let first = LANES * i;
    if (first >= params.count) { return; }
    var v = 0u;
    for (var j = 0u; j < LANES; j = j + 1u) {
        if (first + j < params.count) { v = v | (value(first + j) << (j * BITS)); }
    }
    out[i] = v;
}
