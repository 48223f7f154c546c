// Index check: writes to record[slot], record[slot + 1] the first position of the (1-D)
// indices whose value lies outside [0, bound), and that value's bits, or 0xffffffff and 0
// when every index lies inside. One workgroup: each invocation scans positions lid,
// lid + 256, ... up to its first bad one, the workgroup takes the minimum of those through
// a workgroup atomic, and one invocation writes the slot, so the position and the value
// always belong together (two global atomics written by racing workgroups would not).
// Nothing is read back: the host reads the record at its next synchronisation.

struct Params {
    count: u32,        // indices
    offset: u32,       // element offset of the index view
    stride: i32,
    bound: u32,        // valid indices: [0, bound)
    signed_: u32,      // 1: i32 indices (negative ones are bad), 0: u32
    slot: u32,         // word offset of the record's two words
    _pad0: u32,
    _pad1: u32,
};

@group(0) @binding(0) var<storage, read> indices: array<u32>;
@group(0) @binding(1) var<storage, read_write> record: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

const NONE: u32 = 0xffffffffu;
var<workgroup> first: atomic<u32>;

fn index_at(i: u32) -> u32 {
    return indices[u32(i32(params.offset) + i32(i) * params.stride)];
}

fn bad(v: u32) -> bool {
    if (params.signed_ != 0u && bitcast<i32>(v) < 0) { return true; }
    return v >= params.bound;
}

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32) {
    if (lid == 0u) { atomicStore(&first, NONE); }
    workgroupBarrier();
    for (var i = lid; i < params.count; i = i + 256u) {
        if (bad(index_at(i))) {
            atomicMin(&first, i);
            break;
        }
    }
    workgroupBarrier();
    if (lid == 0u) {
        let f = atomicLoad(&first);
        record[params.slot] = f;
        var v = 0u;
        if (f != NONE) { v = index_at(f); }
        record[params.slot + 1u] = v;
    }
}
