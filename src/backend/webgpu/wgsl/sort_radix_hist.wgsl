// First step of one LSD radix pass (sort_radix.c): the digit counts of each tile. A tile is
// TILE consecutive keys of one row (the last tile of a row may be short), one workgroup each;
// its 256 counts go to counts[(row * 256 + digit) * tiles + tile], the order in which one
// exclusive scan over the whole array gives every tile's first place for every digit: all
// rows before (row * n places), then the row's smaller digits, then this digit in earlier
// tiles.

@group(0) @binding(0) var<storage, read> keys: array<u32>;
@group(0) @binding(1) var<storage, read_write> counts: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

{{TILE}}

var<workgroup> hist: array<atomic<u32>, 256>;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
    let g = wid.x + wid.y * groups.x;
    if (g >= params.rows * params.tiles) { return; }
    let t = tile_at(g);
    atomicStore(&hist[lid.x], 0u);
    workgroupBarrier();
    for (var x = lid.x; x < t.len; x = x + 256u) {
        atomicAdd(&hist[(keys[(t.base + x) * params.stride] >> params.shift) & 255u], 1u);
    }
    workgroupBarrier();
    counts[(t.row * 256u + lid.x) * params.tiles + t.index] = atomicLoad(&hist[lid.x]);
}
