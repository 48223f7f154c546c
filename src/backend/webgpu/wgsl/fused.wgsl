// Fused elementwise kernel: a chain of steps (unary, binary, cast, where) computed per
// element in registers, over up to 8 strided, broadcast inputs, into up to 4 contiguous
// outputs. The backend (fused.c) fills in the bindings, the loads, each step as the same
// expression its op's own kernel runs, and the stores (names in double braces).
//
// Each invocation produces ELEMS consecutive elements of every output: 2 when an output is
// f16 stored packed two to a u32, so no two invocations write the same word; 1 otherwise.

struct Params {
    numel: u32,
    ndim: u32,
    dense: u32,              // bit k: input k is dense in output order (index = offset + i)
    fixed: u32,              // bit k: input k reads one element everywhere (index = offset)
    zero: vec4<u32>,         // always 0, but the compiler cannot know it (see keep_f32)
    shape: array<vec4<u32>, 2>,
    offsets: array<vec4<u32>, 2>,  // element offset of each input in its storage
    strides: array<array<vec4<i32>, 2>, {{NIN}}>,
    consts: array<vec4<u32>, {{NCONST}}>,  // op parameters of two steps a vector: xy, zw
};

{{BINDINGS}}
@group(0) @binding({{PARAMS_BINDING}}) var<uniform> params: Params;

const WORKGROUP_SIZE: u32 = 256u;
const ELEMS: u32 = {{ELEMS}};

// Element index of input k for output element i; strides may be 0 (broadcast) or negative.
fn input_index(k: u32, i: u32) -> u32 {
    let offset = params.offsets[k / 4u][k % 4u];
    if ((params.dense & (1u << k)) != 0u) { return offset + i; }
    if ((params.fixed & (1u << k)) != 0u) { return offset; }
    var rem = i;
    var index = i32(offset);
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

fn compute(i: u32) -> Results {
{{BODY}}}

// Large launches use a 2-D grid of workgroups: the limit per dimension is 65535.
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let word = gid.x + gid.y * groups.x * WORKGROUP_SIZE;
    let first = word * ELEMS;
    if (first >= params.numel) { return; }
    let r0 = compute(first);
    var r1 = r0;
    let has_second = ELEMS == 2u && first + 1u < params.numel;
    if (has_second) { r1 = compute(first + 1u); }
{{STORES}}}
