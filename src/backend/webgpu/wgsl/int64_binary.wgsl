// Elementwise ops of i64 and u64 (two u32 words an element, low then high) with carries
// between the words: add, sub and the low 64 bits of mul wrap modulo 2^64; maximum, minimum
// and the comparisons compare the high words (signed for i64) and then the low ones
// (unsigned); bitwise ops work word by word; neg, abs (wrapping at -2^63) and bitwise_not
// take a alone. Both inputs are read through any strides (broadcast included). The backend
// fills in OP, SIGNED (1 for i64) and OUT: 8 (a 64-bit result), 4 (u32 0/1) or 1 (bool
// bytes, four to a word: one invocation writes a whole word).

struct Params {
    count: u32,         // output elements
    ndim: u32,
    a_offset: u32,
    b_offset: u32,
    out_offset: u32,    // elements; a multiple of 4 for bool outputs
    unused0: u32,
    unused1: u32,
    unused2: u32,
    shape: array<vec4<u32>, 2>,
    a_strides: array<vec4<i32>, 2>,
    b_strides: array<vec4<i32>, 2>,
};

@group(0) @binding(0) var<storage, read> in_a: array<u32>;
@group(0) @binding(1) var<storage, read> in_b: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;
@group(0) @binding(3) var<uniform> params: Params;

const WORKGROUP_SIZE: u32 = 256u;
const OP: u32 = {{OP}}u;
const SIGNED: bool = {{SIGNED}}u == 1u;
const OUT: u32 = {{OUT}}u;

{{WORDS}}
fn less(a: vec2<u32>, b: vec2<u32>) -> bool {
    if (a.y != b.y) {
        if (SIGNED) { return bitcast<i32>(a.y) < bitcast<i32>(b.y); }
        return a.y < b.y;
    }
    return a.x < b.x;
}

fn equal(a: vec2<u32>, b: vec2<u32>) -> bool { return a.x == b.x && a.y == b.y; }

// The 64-bit result of ops 0..7 and 14..16.
fn value(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    switch OP {
        case 0u: { return add64(a, b); }
        case 1u: { return add64(a, neg64(b)); }
        case 2u: { return mul64(a, b); }
        case 3u: { return select(a, b, less(a, b)); }
        case 4u: { return select(a, b, less(b, a)); }
        case 5u: { return a & b; }
        case 6u: { return a | b; }
        case 7u: { return a ^ b; }
        case 14u: { return neg64(a); }
        case 15u: { return select(a, neg64(a), SIGNED && (a.y >> 31u) != 0u); }
        default: { return ~a; }
    }
}

// The truth of comparisons 8..13.
fn truth(a: vec2<u32>, b: vec2<u32>) -> bool {
    switch OP {
        case 8u: { return equal(a, b); }
        case 9u: { return !equal(a, b); }
        case 10u: { return less(a, b); }
        case 11u: { return !less(b, a); }
        case 12u: { return less(b, a); }
        default: { return !less(a, b); }
    }
}

fn operands(e: u32) -> array<vec2<u32>, 2> {
    var rem = e;
    var ia = i32(params.a_offset);
    var ib = i32(params.b_offset);
    for (var d = i32(params.ndim) - 1; d >= 0; d = d - 1) {
        let n = params.shape[d / 4][d % 4];
        let c = i32(rem % n);
        rem = rem / n;
        ia = ia + c * params.a_strides[d / 4][d % 4];
        ib = ib + c * params.b_strides[d / 4][d % 4];
    }
    let ua = 2u * u32(ia);
    let ub = 2u * u32(ib);
    return array<vec2<u32>, 2>(vec2<u32>(in_a[ua], in_a[ua + 1u]), vec2<u32>(in_b[ub], in_b[ub + 1u]));
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = gid.x + gid.y * groups.x * WORKGROUP_SIZE;
    if (OUT == 1u) {
        let first = 4u * i;
        if (first >= params.count) { return; }
        var word = 0u;
        for (var j = 0u; j < 4u; j = j + 1u) {
            if (first + j < params.count) {
                let v = operands(first + j);
                word = word | (select(0u, 1u, truth(v[0], v[1])) << (8u * j));
            }
        }
        out[params.out_offset / 4u + i] = word;
        return;
    }
    if (i >= params.count) { return; }
    let v = operands(i);
    let o = params.out_offset + i;
    if (OUT == 4u) {
        out[o] = select(0u, 1u, truth(v[0], v[1]));
    } else {
        let r = value(v[0], v[1]);
        out[2u * o] = r.x;
        out[2u * o + 1u] = r.y;
    }
}
