// Dequantize rows of a q8_0 / q4_0 table into a contiguous f32 output [n, K]: row i of the
// output is table row indices[i] (PICK) or row i. One invocation per block of the output;
// an index outside [0, rows) gives a row of zeros (the core reports it: index_check.wgsl).

struct Params {
    blocks: u32,       // output blocks, n * K / 32
    row_blocks: u32,   // blocks per row, K / 32
    first_block: u32,  // the table view's first block in storage
    stride_blocks: u32, // blocks between table rows
    rows: u32,         // table rows
    index_offset: u32,
    index_stride: i32,
    scales: u32,       // the table's scales (quant_blocks.wgsl)
};

@group(0) @binding(0) var<storage, read> wq: array<u32>;
@group(0) @binding(1) var<storage, read> indices: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

const PICK: bool = {{PICK}};
const WORKGROUP_SIZE: u32 = 64u;

{{BLOCKS}}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let unit = gid.x + gid.y * groups.x * WORKGROUP_SIZE;
    if (unit >= params.blocks) { return; }
    let i = unit / params.row_blocks;
    let j = unit % params.row_blocks;
    var r = i;
    if (PICK) { r = indices[u32(i32(params.index_offset) + i32(i) * params.index_stride)]; }
    var vals: array<f32, 32>;
    var d = 0.0;
    if (r < params.rows) {
        let b = params.first_block + r * params.stride_blocks + j;
        d = block_scale(b);
        block_values(b, &vals);
    }
    for (var k = 0u; k < 32u; k = k + 1u) { out[unit * 32u + k] = vals[k] * d; }
}
