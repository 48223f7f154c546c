// Exclusive prefix sum of u32 counts in place, for the radix sort's tile offsets: each
// workgroup scans a block of 1024 (four per invocation, then the 256 invocation totals in
// workgroup memory) and writes the block's total to sums; sort_radix.c scans sums the same
// way and sort_radix_add adds each block's scanned total back.

struct Params {
    count: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
};

@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@group(0) @binding(1) var<storage, read_write> sums: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

var<workgroup> part: array<u32, 256>;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
    let g = wid.x + wid.y * groups.x;
    if (g * 1024u >= params.count) { return; }
    let at = g * 1024u + lid.x * 4u;
    var v = vec4<u32>(0u);
    for (var i = 0u; i < 4u; i = i + 1u) {
        if (at + i < params.count) { v[i] = data[at + i]; }
    }
    let own = v.x + v.y + v.z + v.w;
    part[lid.x] = own;
    workgroupBarrier();
    for (var d = 1u; d < 256u; d = d << 1u) {
        var add = 0u;
        if (lid.x >= d) { add = part[lid.x - d]; }
        workgroupBarrier();
        part[lid.x] = part[lid.x] + add;
        workgroupBarrier();
    }
    var run = part[lid.x] - own;
    for (var i = 0u; i < 4u; i = i + 1u) {
        if (at + i < params.count) { data[at + i] = run; }
        run = run + v[i];
    }
    if (lid.x == 255u) { sums[g] = part[255]; }
}
