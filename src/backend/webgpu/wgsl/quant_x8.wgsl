// x quantized to q8 on the fly for the integer dot products of the quantized products
// (WGT_QUANT_INT8=1; appended to quant_product.wgsl, and the whole of the x8 pass's helpers in
// quant_x8_pass.wgsl): a block of 32 values as q8_0 holds them, d_x = max|x| / 127 and each
// value rounded half away from zero, packed four to a word, with the sum of the values (q4_0's
// nibbles are 0..15, 8 too many each: a block's product subtracts 8 times that sum). Every
// kernel quantizes x through q8_of, so all give the same bits.

fn round_away(v: f32) -> f32 {
    let t = trunc(v);
    if (abs(v - t) >= 0.5) { return t + sign(v); }
    return t;
}

struct Q8x {
    words: array<u32, 8>,
    d: f32,
    sum: i32,
}

// A NaN made at run time (WGSL refuses a NaN constant).
var<private> q8_nan_bits: u32 = 0x7fc00000u;

// By the bits: a driver may fold float tests that NaN or subnormals decide.
fn q8_is_nan(v: f32) -> bool { return (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u; }
fn q8_is_normal(v: f32) -> bool {
    let e = (bitcast<u32>(v) >> 23u) & 0xffu;
    return e != 0u && e != 255u;
}

// As the CPU backend's quantize_row_q8 (cpu_quant.c): 1 / d only for a normal d, a NaN product
// converts to 0, and a block holding a NaN gets d = NaN, so the product is NaN as the float
// path's would be.
fn q8_of(v: array<f32, 32>) -> Q8x {
    var amax = 0.0;
    var nan = false;
    for (var i = 0u; i < 32u; i = i + 1u) {
        nan = nan || q8_is_nan(v[i]);
        amax = max(amax, select(abs(v[i]), 0.0, q8_is_nan(v[i])));
    }
    var q: Q8x;
    q.d = amax / 127.0;
    var id = 0.0;
    if (q8_is_normal(q.d)) { id = 1.0 / q.d; }
    if (nan) { q.d = bitcast<f32>(q8_nan_bits); }
    q.sum = 0;
    for (var k = 0u; k < 8u; k = k + 1u) {
        var word = 0u;
        for (var j = 0u; j < 4u; j = j + 1u) {
            let p = v[4u * k + j] * id;
            let c = select(i32(round_away(p)), 0, q8_is_nan(p));
            q.sum = q.sum + c;
            word = word | ((bitcast<u32>(c) & 0xffu) << (8u * j));
        }
        q.words[k] = word;
    }
    return q;
}
