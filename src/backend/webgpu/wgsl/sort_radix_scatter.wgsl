// Last step of one LSD radix pass (sort_radix.c): each tile's (key, position) pairs move to
// their places for this digit, stably. The tile goes through in chunks of 256, one pair per
// invocation, in order; within a chunk an element's rank among equal digits is the number of
// earlier invocations holding the same digit, read from a 256-bit mask per digit (each
// invocation sets its bit, then counts the bits below its own). next[d] starts at the tile's
// first place for digit d (the scanned counts) and grows by each chunk's count of d, so
// equal digits keep their order across chunks and tiles: the pass is stable, and LSD passes
// over stable passes sort by the whole key, ties in their input order. The first pass reads
// sort_init's keys and positions; every pass writes (key, position) pairs side by side, one
// 8-byte store each (a scattered store fills part of a memory sector: one store per pair
// instead of two halves those), which the next pass reads as one buffer bound twice.

@group(0) @binding(0) var<storage, read> keys_in: array<u32>;
@group(0) @binding(1) var<storage, read> pos_in: array<u32>;
@group(0) @binding(2) var<storage, read> offsets: array<u32>;
@group(0) @binding(3) var<storage, read_write> out: array<vec2<u32>>;
@group(0) @binding(4) var<uniform> params: Params;

{{TILE}}

var<workgroup> masks: array<atomic<u32>, 2048>;  // digit d's invocations: words d * 8 .. d * 8 + 7
var<workgroup> next: array<u32, 256>;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
    let g = wid.x + wid.y * groups.x;
    if (g >= params.rows * params.tiles) { return; }
    let t = tile_at(g);
    let len = t.len;
    let base = t.base;
    next[lid.x] = offsets[(t.row * 256u + lid.x) * params.tiles + t.index];
    let word = lid.x >> 5u;
    let below = (1u << (lid.x & 31u)) - 1u;
    for (var c = 0u; c < len; c = c + 256u) {
        for (var w = 0u; w < 8u; w = w + 1u) {
            atomicStore(&masks[w * 256u + lid.x], 0u);
        }
        workgroupBarrier();
        let live = c + lid.x < len;
        var key = 0u;
        var p = 0u;
        var d = 0u;
        if (live) {
            key = keys_in[(base + c + lid.x) * params.stride];
            p = pos_in[params.pos_at + (base + c + lid.x) * params.stride];
            d = (key >> params.shift) & 255u;
            atomicOr(&masks[d * 8u + word], 1u << (lid.x & 31u));
        }
        workgroupBarrier();
        var rank = 0u;
        var total = 0u;
        if (live) {
            for (var w = 0u; w < 8u; w = w + 1u) {
                let bits = atomicLoad(&masks[d * 8u + w]);
                if (w < word) { rank = rank + countOneBits(bits); }
                if (w == word) { rank = rank + countOneBits(bits & below); }
                total = total + countOneBits(bits);
            }
            let dest = next[d] + rank;
            out[dest] = vec2<u32>(key, p);
        }
        workgroupBarrier();
        // The digit's last invocation in the chunk moves next[d] past the chunk's ones.
        if (live && rank + 1u == total) { next[d] = next[d] + total; }
        workgroupBarrier();
    }
}
