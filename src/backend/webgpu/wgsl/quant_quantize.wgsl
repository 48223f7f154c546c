// Quantize f32 or f16 rows [R, K] (any strides) to q8_0 / q4_0 blocks, bit for bit as
// ggml's reference quantizer (quantize_row_q8_0_ref, quantize_row_q4_0_ref) rounds in f32.
// WGSL allows division 2.5 ULP of error, rounds half to even and leaves the rounding of
// pack2x16float to the driver, so the steps whose rounding matters are written out: the
// divisions d = amax / 127 and id = 1 / d are correctly rounded by a long division of the
// mantissas (div_rn), round() is half away from zero, the f16 of d is rounded to nearest even
// by bits, and the product x * id is kept from contracting with the add or subtract after it
// into a fused multiply-add (keep).
//
// The output is in the device layout (quant_blocks.wgsl): every block's values, then every
// block's scale. One invocation per pair of blocks: their values are whole words, and so are
// their two scales (the pair starts on an even block), so no two invocations write the same
// word.

struct Params {
    blocks: u32,      // output blocks, R * K / 32 (the output is contiguous, from byte 0)
    row_blocks: u32,  // K / 32
    in_offset: u32,
    in_stride0: i32,
    in_stride1: i32,
    zero: u32,        // 0, which the compiler cannot see (keep)
    scales: u32,      // the u32 word where the output's scales start
    pad1: u32,
};

@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> wq: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

const Q8: bool = {{Q8}};
const HALF: bool = {{HALF}};
const VALUE_BYTES: u32 = select(16u, 32u, Q8);
const WORKGROUP_SIZE: u32 = 64u;

var<private> words: array<u32, 17>;

fn keep(v: f32) -> f32 { return bitcast<f32>(bitcast<u32>(v) ^ params.zero); }

fn put_byte(pos: u32, v: u32) { words[pos >> 2u] = words[pos >> 2u] | ((v & 0xffu) << ((pos & 3u) * 8u)); }

// a / b correctly rounded (to nearest even) for normal operands and a normal result; other
// cases (zeros, subnormals, infinities, NaN), which ggml's rounding never distinguishes in
// practice, take the native division.
fn div_rn(a: f32, b: f32) -> f32 {
    let ua = bitcast<u32>(a);
    let ub = bitcast<u32>(b);
    let ea = (ua >> 23u) & 0xffu;
    let eb = (ub >> 23u) & 0xffu;
    if (ea == 0u || eb == 0u || ea == 255u || eb == 255u) { return a / b; }
    var ma = (ua & 0x7fffffu) | 0x800000u;
    let mb = (ub & 0x7fffffu) | 0x800000u;
    var e = i32(ea) - i32(eb) + 127;
    if (ma < mb) { ma = ma << 1u; e = e - 1; } // ma / mb in [1, 2)
    var q = 0u;
    var rem = ma;
    for (var i = 0; i < 25; i = i + 1) { // 24 bits of quotient and a guard bit
        q = q << 1u;
        if (rem >= mb) { rem = rem - mb; q = q | 1u; }
        rem = rem << 1u;
    }
    let guard = q & 1u;
    q = q >> 1u;
    if (guard != 0u && (rem != 0u || (q & 1u) != 0u)) { q = q + 1u; }
    if (q == 0x1000000u) { q = q >> 1u; e = e + 1; }
    if (e <= 0 || e >= 255) { return a / b; }
    return bitcast<f32>(((ua ^ ub) & 0x80000000u) | (u32(e) << 23u) | (q & 0x7fffffu));
}

// The f16 bits of f, rounded to nearest even (as the library's wgt_f32_to_f16).
fn f16_bits(f: f32) -> u32 {
    let x = bitcast<u32>(f);
    let sign = (x >> 16u) & 0x8000u;
    let exp = (x >> 23u) & 0xffu;
    let man = x & 0x7fffffu;
    if (exp == 255u) { return sign | 0x7c00u | select(0u, 0x200u | (man >> 13u), man != 0u); }
    let e = i32(exp) - 127 + 15;
    if (e >= 31) { return sign | 0x7c00u; }
    if (e <= 0) {
        if (e < -10) { return sign; }
        let m = man | 0x800000u;
        let shift = u32(14 - e);
        var half = m >> shift;
        let rem = m & ((1u << shift) - 1u);
        let mid = 1u << (shift - 1u);
        if (rem > mid || (rem == mid && (half & 1u) != 0u)) { half = half + 1u; }
        return sign | half;
    }
    var half = (u32(e) << 10u) | (man >> 13u);
    let rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (half & 1u) != 0u)) { half = half + 1u; }
    return sign | half;
}

// Element i of block g of the input.
fn load(g: u32, i: u32) -> f32 {
    let r = g / params.row_blocks;
    let c = (g % params.row_blocks) * 32u + i;
    let at = u32(i32(params.in_offset) + i32(r) * params.in_stride0 + i32(c) * params.in_stride1);
    if (HALF) { return unpack2x16float((src[at >> 1u] >> ((at & 1u) * 16u)) & 0xffffu).x; }
    return bitcast<f32>(src[at]);
}

// C's roundf: half away from zero.
fn round_away(v: f32) -> f32 {
    let t = trunc(v);
    if (abs(v - t) >= 0.5) { return t + sign(v); }
    return t;
}

// Whether v is a normal float (by its bits: a driver may fold comparisons on subnormals).
fn is_normal(v: f32) -> bool {
    let e = (bitcast<u32>(v) >> 23u) & 0xffu;
    return e != 0u && e != 255u;
}

fn is_nan(v: f32) -> bool { return (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u; }

// Block g into the pair's words: its values at byte base, its scale at byte scale. 1 / d only
// for a normal d, else 0, and a NaN element's product gives 0 (q8_0) or nibble 0 (q4_0): the
// CPU backend's rules (docs/quant.md), which no device's subnormal flushing or float-to-int
// conversion of NaN can change.
fn quantize_block(g: u32, base: u32, scale: u32) {
    var x: array<f32, 32>;
    var amax = 0.0;
    var mx = 0.0;
    for (var i = 0u; i < 32u; i = i + 1u) {
        x[i] = load(g, i);
        if (amax < abs(x[i])) { amax = abs(x[i]); mx = x[i]; }
    }
    var d: f32;
    if (Q8) { d = div_rn(amax, 127.0); } else { d = mx * -0.125; }
    var id = 0.0;
    if (is_normal(d)) { id = div_rn(1.0, d); }
    let h = f16_bits(d);
    put_byte(scale, h);
    put_byte(scale + 1u, h >> 8u);
    if (Q8) {
        for (var i = 0u; i < 32u; i = i + 1u) {
            let v = keep(x[i] * id);
            put_byte(base + i, select(u32(i32(round_away(v))), 0u, is_nan(v)));
        }
    } else {
        for (var i = 0u; i < 16u; i = i + 1u) {
            let v0 = keep(x[i] * id) + 8.5;
            let v1 = keep(x[i + 16u] * id) + 8.5;
            let q0 = select(min(15u, u32(v0)), 0u, is_nan(v0));
            let q1 = select(min(15u, u32(v1)), 0u, is_nan(v1));
            put_byte(base + i, q0 | (q1 << 4u));
        }
    }
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let p = gid.x + gid.y * groups.x * WORKGROUP_SIZE;
    let first = 2u * p;
    if (first >= params.blocks) { return; }
    // The pair's words: the two blocks' values, then their scales' word (a lone last block:
    // the scale's high half, past the last block, zero).
    quantize_block(first, 0u, 2u * VALUE_BYTES);
    var n = VALUE_BYTES / 4u;
    if (first + 1u < params.blocks) {
        quantize_block(first + 1u, VALUE_BYTES, 2u * VALUE_BYTES + 2u);
        n = 2u * VALUE_BYTES / 4u;
    }
    let at = first * (VALUE_BYTES / 4u);
    for (var k = 0u; k < n; k = k + 1u) { wq[at + k] = words[k]; }
    wq[params.scales + first / 2u] = words[2u * VALUE_BYTES / 4u];
}
