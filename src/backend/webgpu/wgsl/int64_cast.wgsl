// Casts to and from the 64-bit integer types, which WGSL does not have: an i64 or u64 element
// is two u32 words (low, high) and the conversions work on the pair. One output element per
// invocation, read from its input element through any strides (a gather, as pad does). The
// backend fills in IN and OUT, each a type code: 0 f32, 1 i32, 2 u32, 3 i64, 4 u64.
// The rules are docs/ops.md's, as on the CPU: float to integer truncates toward zero,
// saturates and sends NaN to 0; between integers the bits wrap (low word, or sign or zero
// extension); i64 and u64 to f32 round once, to nearest even.

struct Params {
    count: u32,         // output elements
    ndim: u32,
    in_offset: u32,     // element offset of the input view
    out_offset: u32,    // element offset of the contiguous output
    shape: array<vec4<u32>, 2>,
    in_strides: array<vec4<i32>, 2>,   // may be 0 (broadcast) or negative (flip)
};

@group(0) @binding(0) var<storage, read> inp: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

const WORKGROUP_SIZE: u32 = 256u;
const IN: u32 = {{IN}}u;
const OUT: u32 = {{OUT}}u;

{{WORDS}}

// u32 to f32 in two exact halves whose sum rounds once (WGSL lets f32(u32) round either way).
fn u32_to_f32(x: u32) -> f32 { return f32(x & 0xffff0000u) + f32(x & 0xffffu); }

// An unsigned 64-bit value to f32, rounded once: its top 32 bits from the leading one, with
// the bits below them folded into the lowest bit (a sticky bit far below f32's 24), then
// scaled by an exact power of two.
fn mag_to_f32(a: vec2<u32>) -> f32 {
    if (a.y == 0u) { return u32_to_f32(a.x); }
    let n = countLeadingZeros(a.y);
    var top = a.y;
    var rest = a.x;
    if (n != 0u) {
        top = (a.y << n) | (a.x >> (32u - n));
        rest = a.x << n;
    }
    let m = top | select(0u, 1u, rest != 0u);
    return u32_to_f32(m) * bitcast<f32>((127u + 32u - n) << 23u);
}

// f32 to i64 (signed) or u64: truncated toward zero, saturated, NaN 0.
fn f32_to_64(v: f32, signed: bool) -> vec2<u32> {
    let b = bitcast<u32>(v);
    if ((b & 0x7fffffffu) > 0x7f800000u) { return vec2<u32>(0u, 0u); }
    let neg = (b >> 31u) != 0u;
    let e = i32((b >> 23u) & 0xffu) - 127;  // |v| = m 2^(e - 23)
    if (e < 0) { return vec2<u32>(0u, 0u); }
    if (signed && e >= 63) { return select(vec2<u32>(0xffffffffu, 0x7fffffffu), vec2<u32>(0u, 0x80000000u), neg); }
    if (!signed && neg) { return vec2<u32>(0u, 0u); }
    if (!signed && e >= 64) { return vec2<u32>(0xffffffffu, 0xffffffffu); }
    let m = (b & 0x7fffffu) | 0x800000u;
    var mag = vec2<u32>(0u, 0u);
    if (e <= 23) {
        mag = vec2<u32>(m >> u32(23 - e), 0u);
    } else {
        let s = u32(e - 23);  // 1..40
        if (s < 32u) { mag = vec2<u32>(m << s, m >> (32u - s)); } else { mag = vec2<u32>(0u, m << (s - 32u)); }
    }
    if (neg) { return neg64(mag); }
    return mag;
}

fn to_f32(x: vec2<u32>) -> f32 {
    if (IN == 3u && (x.y >> 31u) != 0u) { return -mag_to_f32(neg64(x)); }
    return mag_to_f32(x);
}

// The input element of output element e, counted in input elements.
fn source(e: u32) -> u32 {
    var rem = e;
    var index = i32(params.in_offset);
    for (var d = i32(params.ndim) - 1; d >= 0; d = d - 1) {
        let n = params.shape[d / 4][d % 4];
        index = index + i32(rem % n) * params.in_strides[d / 4][d % 4];
        rem = rem / n;
    }
    return u32(index);
}

// Large launches use a 2-D grid of workgroups: the limit per dimension is 65535.
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let e = gid.x + gid.y * groups.x * WORKGROUP_SIZE;
    if (e >= params.count) { return; }
    let i = source(e);
    let o = params.out_offset + e;
    var x = vec2<u32>(0u, 0u);  // the input as 64 bits (integers)
    if (IN == 0u) {
        x = f32_to_64(bitcast<f32>(inp[i]), OUT == 3u);
    } else if (IN == 1u) {
        x = vec2<u32>(inp[i], select(0u, 0xffffffffu, (inp[i] >> 31u) != 0u));
    } else if (IN == 2u) {
        x = vec2<u32>(inp[i], 0u);
    } else {
        x = vec2<u32>(inp[2u * i], inp[2u * i + 1u]);
    }
    if (OUT == 0u) {
        out[o] = bitcast<u32>(to_f32(x));
    } else if (OUT <= 2u) {
        out[o] = x.x;
    } else {
        out[2u * o] = x.x;
        out[2u * o + 1u] = x.y;
    }
}
