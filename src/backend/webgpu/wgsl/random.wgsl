// Counter-based random numbers: element i is Philox4x32-10 of counter (i, 0, 0, 0) and the
// seed's two words as key (src/backend/philox.h), mapped to a value as backend.h's random
// entry says, exactly as the CPU backend computes it. WGSL has no 64-bit integers, so the
// 32 x 32 -> 64-bit products are formed from 16-bit halves. A product is kept from
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

// (high, low) words of a * b.
fn mul_wide(a: u32, b: u32) -> vec2<u32> {
    let al = a & 0xffffu;
    let ah = a >> 16u;
    let bl = b & 0xffffu;
    let bh = b >> 16u;
    let ll = al * bl;
    let lh = al * bh;
    let hl = ah * bl;
    let mid = (ll >> 16u) + (lh & 0xffffu) + (hl & 0xffffu);
    let hi = ah * bh + (lh >> 16u) + (hl >> 16u) + (mid >> 16u);
    return vec2<u32>(hi, a * b);
}

fn philox(counter: vec4<u32>) -> vec4<u32> {
    var x = counter;
    var k0 = {{KEY0}};
    var k1 = {{KEY1}};
    for (var r = 0u; r < 10u; r = r + 1u) {
        let p0 = mul_wide(0xD2511F53u, x.x);
        let p1 = mul_wide(0xCD9E8D57u, x.z);
        x = vec4<u32>(p1.x ^ x.y ^ k0, p1.y, p0.x ^ x.w ^ k1, p0.y);
        k0 = k0 + 0x9E3779B9u;
        k1 = k1 + 0xBB67AE85u;
    }
    return x;
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
            let angle = keep(6.2831855f * u2) - 3.1415927f;
            let z = keep(sqrt(-2.0f * log(u1)) * cos(angle));
            return bitcast<u32>(params.a + keep(params.b * z));
        }
        case 2u: {
            if (params.count == 0u) { return params.low + w.x; }
            return params.low + mul_wide(w.x, params.count).x;
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
