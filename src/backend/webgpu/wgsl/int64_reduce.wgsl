// Sums and products of i64 and u64 (two u32 words an element, low then high), wrapping
// modulo 2^64 as two's complement does, so one kernel serves both types. One invocation per
// output walks its reduced elements in order (an odometer over the trailing dimensions); with
// SCAN (cumsum) it writes the running value at every step along the one trailing dimension.
// The backend fills in OP (0 sum, 1 product) and SCAN (0 or 1).

struct Params {
    count: u32,         // outputs (SCAN: rows along the axis)
    keep: u32,          // leading dimensions, one output each
    ndim: u32,
    in_offset: u32,
    out_offset: u32,
    reduced: u32,       // elements per output
    out_step: u32,      // SCAN: the output's stride along the axis
    unused: u32,
    shape: array<vec4<u32>, 2>,
    in_strides: array<vec4<i32>, 2>,
    out_strides: array<vec4<u32>, 2>,  // of the leading dimensions
};

@group(0) @binding(0) var<storage, read> inp: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

const WORKGROUP_SIZE: u32 = 256u;
const OP: u32 = {{OP}}u;
const SCAN: u32 = {{SCAN}}u;

{{WORDS}}
fn store(e: u32, v: vec2<u32>) {
    out[2u * e] = v.x;
    out[2u * e + 1u] = v.y;
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let o = gid.x + gid.y * groups.x * WORKGROUP_SIZE;
    if (o >= params.count) { return; }
    var rem = o;
    var at = i32(params.in_offset);
    var ob = params.out_offset;
    for (var d = i32(params.keep) - 1; d >= 0; d = d - 1) {
        let n = params.shape[d / 4][d % 4];
        let c = rem % n;
        rem = rem / n;
        at = at + i32(c) * params.in_strides[d / 4][d % 4];
        ob = ob + c * params.out_strides[d / 4][d % 4];
    }
    var acc = vec2<u32>(select(0u, 1u, OP == 1u), 0u);
    var index: array<u32, 8>;
    for (var k = 0u; k < params.reduced; k = k + 1u) {
        let x = vec2<u32>(inp[2u * u32(at)], inp[2u * u32(at) + 1u]);
        if (OP == 0u) { acc = add64(acc, x); } else { acc = mul64(acc, x); }
        if (SCAN == 1u) { store(ob + k * params.out_step, acc); }
        for (var d = i32(params.ndim) - 1; d >= i32(params.keep); d = d - 1) {
            let s = params.in_strides[d / 4][d % 4];
            at = at + s;
            index[d] = index[d] + 1u;
            if (index[d] < params.shape[d / 4][d % 4]) { break; }
            at = at - s * i32(params.shape[d / 4][d % 4]);
            index[d] = 0u;
        }
    }
    if (SCAN == 0u) { store(ob, acc); }
}
