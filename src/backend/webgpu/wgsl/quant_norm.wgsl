// rms_norm of decoding's rows of x inside a quantized product's step (src/core/prologue.c folds
// a norm whose result only such products read): appended to quant_x8_pass.wgsl, which defines
// norm_x(m, k), x's element k of row m, and whose params hold row_blocks (K / 32) and eps.
// norm_rows fills norm_inv and norm_rs for the first rows of x (the pass without a norm takes
// quant_lanes.c's empty norm_rows). Every workgroup computes the statistics of the rows it
// needs itself: decoding's rows are one to three of a few thousand values, which the
// workgroup reads from the cache faster than a launch of their own would take.
//
// The row's elements are taken at a power-of-two scale u = x inv (exact), inv bringing the
// largest magnitude to [1, 4), so the squares neither overflow nor vanish whatever the row's
// magnitude. rms_norm(x) = u rs, rs = 1 / sqrt(mean(u^2) + eps inv^2) (for a row scaled up,
// inv > 1: rs = scale / sqrt(scale^2 mean(u^2) + eps), eps inv^2 being past the range).
// A row holding an infinity or a NaN gives NaN; a row of zeros with eps 0 gives rs = inf, so
// its products are 0 inf = NaN, as the norm's 0 / 0 made them.

var<workgroup> norm_bits: atomic<u32>;
var<private> norm_inv: array<f32, 3>;
var<private> norm_rs: array<f32, 3>;
var<workgroup> norm_sum: array<f32, 256>;

struct RowNorm {
    inv: f32, // a power of two
    rs: f32,
}

fn norm_pow2(e: i32) -> f32 { return bitcast<f32>(u32(e + 127) << 23u); }

// Values an invocation holds at once: a chunk of 8 x 256 of the row is loaded with all its
// loads in flight together (a loop reading one value at a time, twice, cost about 1.8 us more
// a dispatch on an H200), and a row of one chunk (decoding's widths up to 2048) stays in
// registers for the sum.
const NORM_HELD: u32 = 8u;

fn norm_chunk(m: u32, c: u32, li: u32, K: u32) -> array<f32, NORM_HELD> {
    var v: array<f32, NORM_HELD>;
    for (var j = 0u; j < NORM_HELD; j = j + 1u) {
        let k = (c * NORM_HELD + j) * 256u + li;
        v[j] = 0.0;
        if (k < K) { v[j] = norm_x(m, k); }
    }
    return v;
}

// Called by all 256 invocations of the workgroup, in uniform control flow.
fn row_norm(li: u32, m: u32) -> RowNorm {
    let K = params.row_blocks * 32u;
    let chunks = (K + 256u * NORM_HELD - 1u) / (256u * NORM_HELD);
    if (li == 0u) { atomicStore(&norm_bits, 0u); }
    var v: array<f32, NORM_HELD>;
    var bits = 0u;
    for (var c = 0u; c < chunks; c = c + 1u) {
        v = norm_chunk(m, c, li, K);
        for (var j = 0u; j < NORM_HELD; j = j + 1u) { bits = max(bits, bitcast<u32>(v[j]) & 0x7fffffffu); }
    }
    workgroupBarrier();
    atomicMax(&norm_bits, bits);
    workgroupBarrier();
    let field = i32(atomicLoad(&norm_bits) >> 23u);
    let e = clamp(127 - field, -126, 126); // inv = 2^e; 2^-e stays normal
    let inv = norm_pow2(e);
    var s = 0.0;
    for (var c = 0u; c < chunks; c = c + 1u) {
        if (chunks > 1u) { v = norm_chunk(m, c, li, K); }
        for (var j = 0u; j < NORM_HELD; j = j + 1u) {
            let u = v[j] * inv;
            s = s + u * u;
        }
    }
    norm_sum[li] = s;
    for (var half = 128u; half > 0u; half = half / 2u) {
        workgroupBarrier();
        if (li < half) { norm_sum[li] = norm_sum[li] + norm_sum[li + half]; }
    }
    workgroupBarrier();
    let mean = norm_sum[0] / f32(K);
    workgroupBarrier(); // every invocation has read the sums before the next row's
    let eps = params.eps;
    var r = RowNorm(inv, 0.0);
    let zero = u32(field) & 0x100u; // 0, as a runtime value: WGSL rejects NaN and inf constants
    if (field == 255) {
        r.rs = bitcast<f32>(0x7fc00000u | zero);
    } else if (e <= 0 || eps == 0.0) {
        let v = mean + (eps * inv) * inv;
        if (v == 0.0) { r.rs = bitcast<f32>(0x7f800000u | zero); } else { r.rs = 1.0 / sqrt(v); }
    } else {
        let scale = norm_pow2(-e);
        r.rs = scale / sqrt((scale * scale) * mean + eps);
    }
    return r;
}

// The statistics of rows 0 .. min(rows, 3) - 1 into norm_inv and norm_rs.
fn norm_rows(li: u32, rows: u32) {
    for (var m = 0u; m < min(rows, 3u); m = m + 1u) {
        let r = row_norm(li, m);
        norm_inv[m] = r.inv;
        norm_rs[m] = r.rs;
    }
}
