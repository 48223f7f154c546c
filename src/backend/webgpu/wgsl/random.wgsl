// Counter-based random numbers: element i is Philox4x32-10 of counter (i, 0, 0, 0) and the
// seed's two words as key (src/backend/philox.h), mapped to a value as backend.h's random
// entry says, exactly as the CPU backend computes it. WGSL has no 64-bit integers, so the
// 32 x 32 -> 64-bit products are int64_words.wgsl's, formed from 16-bit halves. A product is kept from
// contracting with the add after it into a fused multiply-add (keep), which the CPU does not
// do: so uniform and integer values are bit for bit the CPU's. The keyed variant reads the
// key from a buffer (a seed tensor, which a compiled graph may bind anew at each dispatch).

struct Params {
    n: u32,       // elements
    kind: u32,    // 0 uniform, 1 normal, 2 integer, 3 bits
    key0: u32,
    key1: u32,
    a: f32,
    b: f32,
    c: f32,
    low: u32,
    count: u32,   // integer: the number of values, 0 for 2^32
    zero: u32,    // 0, which the compiler cannot see (keep)
    key_at: u32,  // a keyed kernel: the key's first word in key_words, and the step to its second
    key_step: u32,
};

{{KEY_DECL}}@group(0) @binding({{OUT}}) var<storage, read_write> out: array<u32>;
@group(0) @binding({{UNIFORM}}) var<uniform> params: Params;

const WORKGROUP_SIZE: u32 = 256u;

fn keep(v: f32) -> f32 { return bitcast<f32>(bitcast<u32>(v) ^ params.zero); }

// mul32 (the full 64-bit product from 16-bit halves) and the other word-pair functions of
// int64_words.wgsl.
{{WORDS}}

fn philox(counter: vec4<u32>) -> vec4<u32> {
    var x = counter;
    var k0 = {{KEY0}};
    var k1 = {{KEY1}};
    for (var r = 0u; r < 10u; r = r + 1u) {
        let p0 = mul32(0xD2511F53u, x.x);  // (low, high)
        let p1 = mul32(0xCD9E8D57u, x.z);
        x = vec4<u32>(p1.y ^ x.y ^ k0, p1.x, p0.y ^ x.w ^ k1, p0.x);
        k0 = k0 + 0x9E3779B9u;
        k1 = k1 + 0xBB67AE85u;
    }
    return x;
}

// Box-Muller's log, sqrt and cos in f32 additions and multiplications, as the CPU backend's
// cpu_random.c writes them (WGSL's own log, cos and sqrt differ by platform): ln(m) for m in
// [sqrt(1/2), sqrt(2)) by 20 Taylor terms, cos and sin of [0, pi/4] by 6, sqrt by three Newton
// steps of the inverse square root. keep() stops each product fusing with the add after it.
fn ln_unit(u: f32) -> f32 {
    let b = bitcast<u32>(u);
    var e = i32(b >> 23u) - 127;
    var m = bitcast<f32>((b & 0x7fffffu) | 0x3f800000u);
    if (m > 0x1.6a09e6p+0f) { m = m * 0.5f; e = e + 1; }
    let f = m - 1.0f;
    var p = -0x1.99999ap-5f;
    p = 0x1.af286cp-5f + keep(f * p);
    p = -0x1.c71c72p-5f + keep(f * p);
    p = 0x1.e1e1e2p-5f + keep(f * p);
    p = -0x1.0p-4f + keep(f * p);
    p = 0x1.111112p-4f + keep(f * p);
    p = -0x1.24924ap-4f + keep(f * p);
    p = 0x1.3b13b2p-4f + keep(f * p);
    p = -0x1.555556p-4f + keep(f * p);
    p = 0x1.745d18p-4f + keep(f * p);
    p = -0x1.99999ap-4f + keep(f * p);
    p = 0x1.c71c72p-4f + keep(f * p);
    p = -0x1.0p-3f + keep(f * p);
    p = 0x1.24924ap-3f + keep(f * p);
    p = -0x1.555556p-3f + keep(f * p);
    p = 0x1.99999ap-3f + keep(f * p);
    p = -0x1.0p-2f + keep(f * p);
    p = 0x1.555556p-2f + keep(f * p);
    p = -0x1.0p-1f + keep(f * p);
    p = 0x1.0p+0f + keep(f * p);
    return keep(f32(e) * 0x1.62e43p-1f) + keep(f * p);
}

fn sqrt_det(v: f32) -> f32 {
    if (v == 0.0f) { return 0.0f; }
    var y = bitcast<f32>(0x5f3759dfu - (bitcast<u32>(v) >> 1u));
    let h = 0.5f * v;
    for (var k = 0; k < 3; k = k + 1) {
        let t = keep(keep(h * y) * y);
        y = y * (1.5f - t);
    }
    return v * y;
}

fn cos_turn(t_in: f32) -> f32 {
    var t = t_in;
    var sign = 1.0f;
    if (t > 0.5f) { t = 1.0f - t; }
    if (t > 0.25f) { t = 0.5f - t; sign = -1.0f; }
    let use_sin = t > 0.125f;
    if (use_sin) { t = 0.25f - t; }
    let x = t * 0x1.921fb6p+2f;
    let x2 = keep(x * x);
    if (use_sin) {
        var s = -0x1.ae6456p-26f;
        s = 0x1.71de3ap-19f + keep(x2 * s);
        s = -0x1.a01a02p-13f + keep(x2 * s);
        s = 0x1.111112p-7f + keep(x2 * s);
        s = -0x1.555556p-3f + keep(x2 * s);
        s = 0x1.0p+0f + keep(x2 * s);
        return sign * (x * s);
    }
    var c = -0x1.27e4fcp-22f;
    c = 0x1.a01a02p-16f + keep(x2 * c);
    c = -0x1.6c16c2p-10f + keep(x2 * c);
    c = 0x1.555556p-5f + keep(x2 * c);
    c = -0x1.0p-1f + keep(x2 * c);
    c = 0x1.0p+0f + keep(x2 * c);
    return sign * c;
}

fn value(i: u32) -> u32 {
    let w = philox(vec4<u32>(i, 0u, 0u, 0u));
    switch params.kind {
        case 0u: {
            let u = f32(w.x >> 8u) * 0x1p-24f;
            return bitcast<u32>(min(params.a + keep(params.b * u), params.c));
        }
        case 1u: {
            let u1 = f32((w.x >> 8u) + 1u) * 0x1p-24f;
            let u2 = f32(w.y >> 8u) * 0x1p-24f;
            let z = sqrt_det(-2.0f * ln_unit(u1)) * cos_turn(u2);
            return bitcast<u32>(params.a + keep(params.b * z));
        }
        case 2u: {
            if (params.count == 0u) { return params.low + w.x; }
            return params.low + mul32(w.x, params.count).y;
        }
        default: { return w.x; }
    }
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    // Large launches use a 2-D grid of workgroups: the limit per dimension is 65535.
    let i = gid.x + gid.y * groups.x * WORKGROUP_SIZE;
    if (i >= params.n) { return; }
    out[i] = value(i);
}
