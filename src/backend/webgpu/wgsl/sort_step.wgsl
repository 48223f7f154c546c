// One bitonic compare-exchange step over every segment, for partners too far apart for a
// workgroup's tile (sort_local.wgsl does the rest): invocation t handles the pair (i, i + j)
// with bit log_j of i clear. Within the 2^log_k blocks of a segment the direction alternates,
// so each merge sees a bitonic sequence; pairs compare by key, then position, which makes the
// order total and the result that of a stable sort.

struct Params {
    pairs: u32,
    log_j: u32,
    log_p: u32,
    log_k: u32,
};

@group(0) @binding(0) var<storage, read_write> keys: array<u32>;
@group(0) @binding(1) var<storage, read_write> pos: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

{{KEYS}}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let t = gid.x + gid.y * groups.x * 256u;
    if (t >= params.pairs) { return; }
    let j = 1u << params.log_j;
    let i = ((t >> params.log_j) << (params.log_j + 1u)) | (t & (j - 1u));
    let l = i | j;
    let up = ((i & ((1u << params.log_p) - 1u)) & (1u << params.log_k)) == 0u;
    let ki = keys[i];
    let kl = keys[l];
    let pi = pos[i];
    let pl = pos[l];
    if (pair_after(ki, pi, kl, pl) == up) {
        keys[i] = kl;
        keys[l] = ki;
        pos[i] = pl;
        pos[l] = pi;
    }
}
