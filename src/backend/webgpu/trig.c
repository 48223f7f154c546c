/*
 * sin and cos in WGSL for every f32, as a piece the unary kernels and fused kernels share.
 * WGSL's builtins promise nothing outside [-pi, pi], and a reduction by x - k 2pi in f32
 * loses every bit of the remainder once k passes a few thousand (sin(1e7) came out 0.27,
 * not 0.42). So the argument is reduced as libm reduces large ones (Payne-Hanek): x times
 * 2/pi in integer arithmetic against the bits of 2/pi, keeping 64 bits of the fraction
 * whatever the exponent, which covers the f32 inputs closest to a multiple of pi/2 (their
 * remainder has about 30 leading zero bits). One integer path for every |x| > pi/4 rather
 * than a Cody-Waite fast path beside it: it is exact by construction. The remainder is
 * multiplied by pi/2 in integers too: lavapipe's compiler reassociates float arithmetic,
 * which silently broke a Dekker product (cos came out 2 ulp off near pi/4); integers it
 * cannot reorder. The product's top 48 bits become two exact floats, hi + lo, that feed
 * minimax polynomials on [-pi/4, pi/4] (Cephes' sinf and cosf coefficients) with a
 * first-order correction for lo.
 */
#include "webgpu_internal.h"

const wgt_wgsl_piece wgt_wgsl_sin_cos = {
    "struct WgtAngle { q: u32, hi: f32, lo: f32 }\n"
    /* (lo, hi) words of the 64-bit product a * b, from 16-bit halves (WGSL has no u64). */
    "fn wgt_mul_wide(a: u32, b: u32) -> vec2<u32> {\n"
    "    let a0 = a & 0xffffu; let a1 = a >> 16u; let b0 = b & 0xffffu; let b1 = b >> 16u;\n"
    "    let p00 = a0 * b0; let p01 = a0 * b1; let p10 = a1 * b0;\n"
    "    let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);\n"
    "    return vec2<u32>((p00 & 0xffffu) | (mid << 16u), a1 * b1 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u));\n"
    "}\n"
    /* Bits [pos, pos + 32) of the number whose 32-bit words, lowest first, are w. */
    "fn wgt_bits_at(w: ptr<function, array<u32, 5>>, pos: u32) -> u32 {\n"
    "    let i = pos >> 5u; let sh = pos & 31u;\n"
    "    return ((*w)[i] >> sh) | select((*w)[i + 1u] << (32u - sh), 0u, sh == 0u);\n"
    "}\n"
    "fn wgt_pow2(k: i32) -> f32 { return bitcast<f32>(u32(k + 127) << 23u); }\n" /* -126 <= k <= 127 */
    /* Finite ax >= 0 as q quarter turns plus hi + lo radians, |hi + lo| <= pi/4. */
    "fn wgt_reduce_pio2(ax: f32) -> WgtAngle {\n"
    "    let bits = bitcast<u32>(ax);\n"
    "    if (bits <= 0x3f490fdau) { return WgtAngle(0u, ax, 0.0); }\n" /* below pi/4 */
    "    let m = (bits & 0x7fffffu) | 0x800000u;\n"
    "    let e = i32(bits >> 23u) - 150;\n" /* ax = m 2^e */
    /* Bits 2^-j of 2/pi with j < e - 1 only add multiples of 4 quarter turns: take 96 bits
     * from j0 on. The table reaches j = 288, past the j0 + 95 = 198 of the largest f32. */
    "    var t = array<u32, 9>(0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u, 0xdb629599u,\n"
    "                          0x3c439041u, 0xfe5163abu, 0xdebbc561u, 0xb7246e3au);\n"
    "    let j0 = max(1, e - 1);\n"
    "    let wi = u32(j0 - 1) >> 5u; let sh = u32(j0 - 1) & 31u;\n"
    "    var w: array<u32, 3>;\n"
    "    for (var k = 0u; k < 3u; k = k + 1u) {\n"
    "        w[k] = (t[wi + k] << sh) | select(t[wi + k + 1u] >> (32u - sh), 0u, sh == 0u);\n"
    "    }\n"
    /* m times those 96 bits: a 120-bit product, lowest word first. */
    "    let p2 = wgt_mul_wide(m, w[2]); let p1 = wgt_mul_wide(m, w[1]); let p0 = wgt_mul_wide(m, w[0]);\n"
    "    var r: array<u32, 5>;\n"
    "    r[0] = p2.x;\n"
    "    r[1] = p2.y + p1.x; let c1 = u32(r[1] < p1.x);\n"
    "    let s2 = p1.y + p0.x; r[2] = s2 + c1; let c2 = u32(s2 < p0.x) + u32(r[2] < c1);\n"
    "    r[3] = p0.y + c2;\n"
    "    r[4] = 0u;\n"
    /* ax 2/pi = product 2^(e - j0 - 95): its units bit is bit s, 94 <= s <= 120. */
    "    let s = u32(j0 + 95 - e);\n"
    "    var q = wgt_bits_at(&r, s) & 3u;\n"
    "    var hi = wgt_bits_at(&r, s - 32u);\n"
    "    var lo = wgt_bits_at(&r, s - 64u);\n"
    /* Past half a quarter turn: the next quarter, and a negative remainder (64-bit negate). */
    "    let negative = (hi >> 31u) != 0u;\n"
    "    if (negative) { q = q + 1u; lo = ~lo + 1u; hi = ~hi + u32(lo == 0u); }\n"
    "    var scale = -64;\n" /* remainder = (hi:lo) 2^scale quarter turns */
    "    if (hi == 0u) { hi = lo; lo = 0u; scale = scale - 32; }\n"
    "    if (hi == 0u) { return WgtAngle(q, 0.0, 0.0); }\n"
    "    let z = countLeadingZeros(hi);\n"
    "    hi = (hi << z) | select(lo >> (32u - z), 0u, z == 0u);\n"
    "    lo = lo << z;\n"
    "    scale = scale - i32(z);\n"
    /* Times pi/2 as 64-bit integers (pi/4 2^64, the top half of the 128-bit product):
     * (hi:lo) 2^scale quarter turns = y 2^(scale + 1) radians. */
    "    let pi_hi = 0xc90fdaa2u; let pi_lo = 0x2168c234u;\n"
    "    let p11 = wgt_mul_wide(hi, pi_hi); let p10 = wgt_mul_wide(hi, pi_lo); let p01 = wgt_mul_wide(lo, pi_hi);\n"
    "    let low = p10.x + p01.x;\n"
    "    let t1 = p11.x + p10.y; let t2 = t1 + p01.y; let t3 = t2 + u32(low < p10.x);\n"
    "    var yh = p11.y + u32(t1 < p11.x) + u32(t2 < t1) + u32(t3 < t2);\n"
    "    var yl = t3;\n"
    "    let z2 = countLeadingZeros(yh);\n" /* 0 or 1: both factors had their top bit set */
    "    yh = (yh << z2) | select(yl >> (32u - z2), 0u, z2 == 0u);\n"
    "    yl = yl << z2;\n"
    "    let ys = scale + 1 - i32(z2);\n"
    /* 48 bits as two exact floats: the top 24 (truncated) and the next 24. */
    "    let y = f32(yh >> 8u) * wgt_pow2(ys + 40);\n"
    "    let err = f32(((yh & 0xffu) << 16u) | (yl >> 16u)) * wgt_pow2(ys + 16);\n"
    "    return WgtAngle(q, select(y, -y, negative), select(err, -err, negative));\n"
    "}\n"
    /* sin and cos of hi + lo, |hi| <= pi/4, |lo| < ulp(hi): sin(hi) + lo cos(hi), and
     * cos(hi) - lo hi. Each adds the small terms first and the leading one last, so one
     * rounding dominates; a compensated 1 - hi^2/2 would need an order the compiler keeps. */
    "fn wgt_sin_k(y: f32, e: f32) -> f32 {\n"
    "    let z = y * y;\n"
    "    return y + (y * z * ((-1.9515295891e-4 * z + 8.3321608736e-3) * z - 1.6666654611e-1) + e * (1.0 - 0.5 * z));\n"
    "}\n"
    "fn wgt_cos_k(y: f32, e: f32) -> f32 {\n"
    "    let z = y * y;\n"
    "    return 1.0 - (0.5 * z - (z * z * ((2.443315711809948e-5 * z - 1.388731625493765e-3) * z\n"
    "           + 4.166664568298827e-2) - y * e));\n"
    "}\n"
    /* Infinities (and NaN) give NaN; sin keeps the sign of a zero. */
    "fn wgt_sin(x: f32) -> f32 {\n"
    "    if ((bitcast<u32>(x) & 0x7f800000u) == 0x7f800000u) { return wgt_nan(); }\n"
    "    let a = wgt_reduce_pio2(abs(x));\n"
    "    let v = select(wgt_sin_k(a.hi, a.lo), wgt_cos_k(a.hi, a.lo), (a.q & 1u) == 1u);\n"
    "    return select(v, -v, ((a.q & 2u) != 0u) != wgt_sign_bit(x));\n"
    "}\n"
    "fn wgt_cos(x: f32) -> f32 {\n"
    "    if ((bitcast<u32>(x) & 0x7f800000u) == 0x7f800000u) { return wgt_nan(); }\n"
    "    let a = wgt_reduce_pio2(abs(x));\n"
    "    let v = select(wgt_cos_k(a.hi, a.lo), wgt_sin_k(a.hi, a.lo), (a.q & 1u) == 1u);\n"
    "    return select(v, -v, ((a.q + 1u) & 2u) != 0u);\n"
    "}\n",
    {&wgt_wgsl_float_bits}};
