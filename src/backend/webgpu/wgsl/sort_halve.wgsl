// One round of a top-k: each pair of neighbouring blocks of 2^log_b pairs, the first sorted
// ascending and the second descending (as sort_local leaves them), becomes one block of their
// 2^log_b smallest pairs: the smaller of the two at each place (a bitonic half-cleaner), which
// is a bitonic sequence that sort_local then merges. Each round halves the data and keeps
// every pair of a segment that can still be among its first 2^log_b.

struct Params {
    count: u32,  // pairs written
    log_b: u32,
    _pad0: u32,
    _pad1: u32,
};

@group(0) @binding(0) var<storage, read> keys_in: array<u32>;
@group(0) @binding(1) var<storage, read> pos_in: array<u32>;
@group(0) @binding(2) var<storage, read_write> keys: array<u32>;
@group(0) @binding(3) var<storage, read_write> pos: array<u32>;
@group(0) @binding(4) var<uniform> params: Params;

{{KEYS}}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let t = gid.x + gid.y * groups.x * 256u;
    if (t >= params.count) { return; }
    let b = 1u << params.log_b;
    let a = ((t >> params.log_b) << (params.log_b + 1u)) | (t & (b - 1u));
    let ka = keys_in[a];
    let pa = pos_in[a];
    let kb = keys_in[a + b];
    let pb = pos_in[a + b];
    if (pair_after(ka, pa, kb, pb)) {
        keys[t] = kb;
        pos[t] = pb;
    } else {
        keys[t] = ka;
        pos[t] = pa;
    }
}
