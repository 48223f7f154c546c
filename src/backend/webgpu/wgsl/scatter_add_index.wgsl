// The index passes of scatter_add_rows (scatter.c): a counting sort of the indices into one
// scratch buffer of u32 words laid out as
//   counts [0, N) | cursors [N, 2N) | starts [2N, 3N] | bad flag 3N + 1 | order [3N + 2, ...)
// (N dst rows), zeroed before the first pass. PASS 0 counts each valid index and raises the
// flag for a bad one; PASS 1 (one workgroup) turns the counts into starts and cursors;
// PASS 2 puts each position i into its row's list. Positions of one row land in the order
// their atomicAdds happen, which is not fixed: the sum pass is written so that the order
// hardly matters (scatter_add_sum.wgsl).

struct Params {
    n: u32,              // indices
    rows: u32,           // N: valid indices are [0, N)
    index_offset: u32,
    index_stride: i32,
};

@group(0) @binding(0) var<storage, read> indices: array<u32>;
@group(0) @binding(1) var<storage, read_write> scratch: array<atomic<u32>>;
@group(0) @binding(2) var<uniform> params: Params;

const WORKGROUP_SIZE: u32 = 256u;
const PASS: u32 = {{PASS}}u;

var<workgroup> partial: array<u32, 256>;

// An i32 index read as u32 is at least 2^31 exactly when it is negative: past any N.
fn index_at(i: u32) -> u32 {
    return indices[u32(i32(params.index_offset) + i32(i) * params.index_stride)];
}

fn scan(t: u32) {
    let n = params.rows;
    let chunk = (n + WORKGROUP_SIZE - 1u) / WORKGROUP_SIZE;
    let lo = min(t * chunk, n);
    let hi = min(lo + chunk, n);
    var sum = 0u;
    for (var r = lo; r < hi; r = r + 1u) { sum = sum + atomicLoad(&scratch[r]); }
    partial[t] = sum;
    workgroupBarrier();
    var acc = 0u;
    for (var j = 0u; j < t; j = j + 1u) { acc = acc + partial[j]; }
    for (var r = lo; r < hi; r = r + 1u) {
        let c = atomicLoad(&scratch[r]);
        atomicStore(&scratch[n + r], acc);
        atomicStore(&scratch[2u * n + r], acc);
        acc = acc + c;
    }
    if (t == WORKGROUP_SIZE - 1u) { atomicStore(&scratch[3u * n], acc); }
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
    if (PASS == 1u) {
        scan(lid.x);
        return;
    }
    let i = gid.x + gid.y * groups.x * WORKGROUP_SIZE;
    if (i >= params.n) { return; }
    let v = index_at(i);
    let n = params.rows;
    if (v >= n) {
        if (PASS == 0u) { atomicStore(&scratch[3u * n + 1u], 1u); }
        return;
    }
    if (PASS == 0u) {
        atomicAdd(&scratch[v], 1u);
    } else {
        let slot = atomicAdd(&scratch[n + v], 1u);
        atomicStore(&scratch[3u * n + 2u + slot], i);
    }
}
