// Index check: writes to record[slot], record[slot + 1], record[slot + 2] the first position
// of the (1-D) indices whose value lies outside [0, bound), and that value's low and high
// words (high 0 for 32-bit indices), or 0xffffffff first when every index lies inside. One
// workgroup: each invocation scans positions lid, lid + 256, ... up to its first bad one, the
// workgroup takes the minimum of those through a workgroup atomic, and one invocation writes
// the slot, so the position and the value always belong together (two global atomics written
// by racing workgroups would not). Nothing is read back: the host reads the record at its
// next synchronisation.

struct Params {
    count: u32,        // indices
    offset: u32,       // element offset of the index view
    stride: i32,
    bound: u32,        // valid indices: [0, bound)
    signed_: u32,      // 1: i32 indices (negative ones are bad), 0: u32
    slot: u32,         // word offset of the record's words
    wide: u32,         // 1: i64 or u64 indices, two words (low, high) per element
    _pad1: u32,
};

@group(0) @binding(0) var<storage, read> indices: array<u32>;
@group(0) @binding(1) var<storage, read_write> record: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

const NONE: u32 = 0xffffffffu;
var<workgroup> first: atomic<u32>;

// The index's words (low, high); a 32-bit index has high 0.
fn index_at(i: u32) -> vec2<u32> {
    let e = u32(i32(params.offset) + i32(i) * params.stride);
    if (params.wide != 0u) { return vec2<u32>(indices[2u * e], indices[2u * e + 1u]); }
    return vec2<u32>(indices[e], 0u);
}

// A 64-bit index is in range only with a zero high word (bound is below 2^32): a negative
// i64 or a value past 2^32 is bad, never its low word alone.
fn bad(v: vec2<u32>) -> bool {
    if (v.y != 0u) { return true; }
    if (params.signed_ != 0u && bitcast<i32>(v.x) < 0) { return true; }
    return v.x >= params.bound;
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
        var v = vec2<u32>(0u, 0u);
        if (f != NONE) { v = index_at(f); }
        record[params.slot + 1u] = v.x;
        record[params.slot + 2u] = v.y;
    }
}
