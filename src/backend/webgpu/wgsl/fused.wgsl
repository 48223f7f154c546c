// Fused elementwise kernel: a chain of steps (unary, binary, cast, where) computed per
// element in registers, over up to 8 strided, broadcast inputs, into up to 4 contiguous
// outputs. The backend (fused.c) fills in the bindings, the loads, each step as the same
// expression its op's own kernel runs, and the stores (names in double braces).
//
// Each invocation produces four consecutive elements i .. i + 3 of every output per turn of a
// grid-stride loop over [params.start, params.end), so a launch never needs more than one
// dimension of workgroups. The vector kernel (end - start a multiple of 4) loads each input
// as its layout allows (elementwise_access.h) and stores each output's four as one vector
// (vec4 for 32-bit types, two whole words of packed f16 pairs); the tail kernel stores
// element by element below params.end, f16 as whole words.

struct Params {
    end: u32,                // one past the last element of this launch
    ndim: u32,
    start: u32,              // its first element (a multiple of 4)
    unused: u32,
    zero: vec4<u32>,         // always 0, but the compiler cannot know it (see keep_f32)
    shape: array<vec4<u32>, 2>,
    offsets: array<vec4<u32>, 2>,  // element offset of each input in its storage
    inner: array<vec4<u32>, 2>,    // block inputs: element offset + (i / inner) % mid
    mid: array<vec4<u32>, 2>,
    strides: array<array<vec4<i32>, 2>, {{NIN}}>,
    consts: array<vec4<u32>, {{NCONST}}>,  // op parameters of two steps a vector: xy, zw
};

{{BINDINGS}}
@group(0) @binding({{PARAMS_BINDING}}) var<uniform> params: Params;

const WORKGROUP_SIZE: u32 = 256u;

// Element index of input k for output element i; strides may be 0 (broadcast) or negative.
fn strided_index(k: u32, i: u32) -> u32 {
    var rem = i;
    var index = i32(params.offsets[k / 4u][k % 4u]);
    for (var d = i32(params.ndim) - 1; d >= 0; d = d - 1) {
        let n = params.shape[d / 4][d % 4];
        index = index + i32(rem % n) * params.strides[k][d / 4][d % 4];
        rem = rem / n;
    }
    return u32(index);
}

// A float step's result as the next op would load it. The ops one by one meet in memory, so
// no compiler can contract one step's multiply with the next step's add into a fused
// multiply-add, or simplify (a + b) - b to a across steps; in registers drivers do both
// (lavapipe does the second). XOR with a uniform the compiler cannot see is 0 hides where the
// value came from. A value passed twice to one step is hidden from itself the same way (with
// zero.y, zero.z), or x - x would fold to 0, which is wrong for infinities and NaN.
fn keep_f32(v: f32) -> f32 { return bitcast<f32>(bitcast<u32>(v) ^ params.zero.x); }
// An f16 result, rounded as storing it packed and loading it again would. The XOR sits on the
// packed word: compilers fold unpack2x16float(pack2x16float(v)) back to v, skipping the rounding.
fn keep_f16(v: f32) -> f32 { return unpack2x16float(pack2x16float(vec2<f32>(v, 0.0)) ^ params.zero.x).x; }

{{HELPERS}}
{{STEPS}}
struct Results {
{{RESULT_FIELDS}}};

{{COMPUTE}}
{{ACCESS}}
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let quads = (params.end - params.start + 3u) / 4u;
    let step = groups.x * groups.y * WORKGROUP_SIZE;
    for (var q = gid.x + gid.y * groups.x * WORKGROUP_SIZE; q < quads; q = q + step) {
        let i = params.start + 4u * q;
{{RUN}}    }
}
