// x [M, K] (f32, any strides) quantized to q8 blocks for the wide matrix-vector kernel's
// integer path (quant_matvec_lanes.wgsl with INT8, where x's blocks do not fit in workgroup memory): block b of row m goes to xq[3 (m B + b)
// ..], three 16-byte words: the 32 values packed four to a word, then d_x's bits and the sum
// of the values, so the wide kernel reads a block of x with three vector loads that every row
// of w its workgroup takes shares. One invocation per block (quant_x8.wgsl: q8_of).

struct Params {
    M: u32,
    row_blocks: u32, // B = K / 32
    x_offset: u32,
    x_stride0: i32,
    x_stride1: i32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> xq: array<vec4<u32>>;
@group(0) @binding(2) var<uniform> params: Params;

{{X8}}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = gid.x + gid.y * groups.x * 64u;
    if (i >= params.M * params.row_blocks) { return; }
    let m = i / params.row_blocks;
    let b = i % params.row_blocks;
    let base = i32(params.x_offset) + i32(m) * params.x_stride0 + i32(b * 32u) * params.x_stride1;
    var v: array<f32, 32>;
    for (var j = 0u; j < 32u; j = j + 1u) { v[j] = x[u32(base + i32(j) * params.x_stride1)]; }
    let q = q8_of(v);
    xq[3u * i] = vec4<u32>(q.words[0], q.words[1], q.words[2], q.words[3]);
    xq[3u * i + 1u] = vec4<u32>(q.words[4], q.words[5], q.words[6], q.words[7]);
    xq[3u * i + 2u] = vec4<u32>(bitcast<u32>(q.d), bitcast<u32>(q.sum), 0u, 0u);
}
