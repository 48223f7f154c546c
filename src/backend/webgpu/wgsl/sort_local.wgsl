// The bitonic steps whose partners lie within one tile of 512 pairs, in workgroup memory:
// for each block size 2^k from k_first to k_last, the steps j = j_first (then k / 2) down to
// 1. With k_first 2 and k_last the tile (or the segment, when shorter) it sorts every tile;
// with one k it finishes a merge after sort_step's wider steps. Tiles past the end hold
// padding and store nothing; a segment shorter than a tile shares it with the next ones,
// and its pairs never meet theirs (j < k <= the segment length).

struct Params {
    total: u32,   // pairs in all segments
    log_p: u32,
    k_first: u32,
    k_last: u32,
    j_first: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
};

@group(0) @binding(0) var<storage, read_write> keys: array<u32>;
@group(0) @binding(1) var<storage, read_write> pos: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

const TILE: u32 = 512u;
var<workgroup> tk: array<u32, 512>;
var<workgroup> tp: array<u32, 512>;

{{KEYS}}

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
    let base = (wid.x + wid.y * groups.x) * TILE;
    for (var h = 0u; h < 2u; h = h + 1u) {
        let at = lid.x + h * 256u;
        if (base + at < params.total) {
            tk[at] = keys[base + at];
            tp[at] = pos[base + at];
        } else {
            tk[at] = 0xffffffffu;
            tp[at] = 0xffffffffu;
        }
    }
    workgroupBarrier();
    let seg_mask = (1u << params.log_p) - 1u;
    var k = params.k_first;
    var j = params.j_first;
    loop {
        if (k > params.k_last) { break; }
        loop {
            if (j == 0u) { break; }
            let t = lid.x;
            let i = ((t & ~(j - 1u)) << 1u) | (t & (j - 1u));
            let l = i + j;
            let up = (((base + i) & seg_mask) & k) == 0u;
            let ki = tk[i];
            let kl = tk[l];
            let pi = tp[i];
            let pl = tp[l];
            if (pair_after(ki, pi, kl, pl) == up) {
                tk[i] = kl;
                tk[l] = ki;
                tp[i] = pl;
                tp[l] = pi;
            }
            workgroupBarrier();
            j = j >> 1u;
        }
        k = k << 1u;
        j = k >> 1u;
    }
    for (var h = 0u; h < 2u; h = h + 1u) {
        let at = lid.x + h * 256u;
        if (base + at < params.total) {
            keys[base + at] = tk[at];
            pos[base + at] = tp[at];
        }
    }
}
