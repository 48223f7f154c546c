/*
 * The array API's further elementwise functions on WebGPU (tan, the inverse and hyperbolic
 * functions, log2, log10, exp2, trunc, signbit, isfinite, bitwise ops and shifts, logaddexp,
 * hypot, copysign, nextafter, floor_divide), as expressions and helper pieces for the shared
 * elementwise runner and the fused kernels, looked up from unary.c and binary.c.
 *
 * WGSL's builtins for these (tan, asin, atan, sinh, acosh, log2, exp2, ...) carry loose or
 * implementation-defined precision: Vulkan holds asin and atan to 4096 ulp, exp2 to 3 + 2|x|
 * ulp, log2 only to an absolute 2^-21 near 1, and tan and the hyperbolic functions to whatever
 * their defining formulas give (sinh's (e^x - e^-x) / 2 cancels near 0); lavapipe's exp is
 * 1e-6 off at |x| = 20. So nothing here calls them. Each
 * function is a short minimax polynomial on a reduced range (Cephes' single precision
 * coefficients, as the CPU's libm uses comparable ones), with the reduction done exactly: tan
 * shares sin and cos's Payne-Hanek reduction (trig.c), exp and exp2 split off a whole power of
 * two (Cody-Waite with a short ln 2 so k ln2_hi is exact), log2 takes the exponent from the
 * bits. The inverse hyperbolics use the forms that neither cancel near 0 nor overflow for
 * huge arguments (log(2x) + ... beyond 2^12). Special values are spelled out on the bits, as
 * elsewhere, because a driver may flush subnormals and compile compares as if NaN were absent.
 */
#include <stddef.h>

#include "webgpu_internal.h"

static const wgt_wgsl_piece pow2i = {
    "fn m2_pow2i(k: i32) -> f32 { return bitcast<f32>(u32(k + 127) << 23u); }\n", /* -126 <= k <= 127 */
    {NULL}};

/* 2^x: x = k + f with |f| <= 1/2 exact, 2^f by Cephes' exp2f polynomial, 2^k in two steps so
 * that neither a result near FLT_MAX nor a subnormal one passes through inf or 0. */
static const wgt_wgsl_piece exp2_f = {
    "fn m2_exp2(x: f32) -> f32 {\n"
    "  if (x >= 128.0) { return wgt_inf(); }\n"
    "  if (x <= -150.0) { return 0.0; }\n"
    "  let k = round(x);\n"
    "  let f = x - k;\n"
    "  let p = f * (6.931472028550421e-1 + f * (2.402264791363012e-1 + f * (5.550332471162809e-2\n"
    "          + f * (9.618437357674640e-3 + f * (1.339887440266574e-3 + f * 1.535336188319500e-4)))));\n"
    "  let ki = i32(k);\n"
    "  let k1 = ki / 2;\n"
    "  return (1.0 + p) * m2_pow2i(k1) * m2_pow2i(ki - k1);\n"
    "}\n",
    {&wgt_wgsl_float_bits, &pow2i}};

/* e^x: k = round(x / ln 2), r = x - k ln 2 in two steps (ln2_hi has 9 bits, so k ln2_hi is
 * exact), e^r by Cephes' expf polynomial on |r| <= ln2 / 2. */
static const wgt_wgsl_piece exp_f = {
    "fn m2_exp(x: f32) -> f32 {\n"
    "  if (x > 88.72283935546875) { return wgt_inf(); }\n"
    "  if (x < -103.97208404541015625) { return 0.0; }\n"
    "  let k = round(x * 1.44269504088896341);\n"
    "  let r = (x - k * 0.693359375) + k * 2.12194440e-4;\n"
    "  let z = r * r;\n"
    "  let p = (((((1.9875691500e-4 * r + 1.3981999507e-3) * r + 8.3334519073e-3) * r + 4.1665795894e-2) * r\n"
    "          + 1.6666665459e-1) * r + 5.0000001201e-1) * z + r + 1.0;\n"
    "  let ki = i32(k);\n"
    "  let k1 = ki / 2;\n"
    "  return p * m2_pow2i(k1) * m2_pow2i(ki - k1);\n"
    "}\n",
    {&wgt_wgsl_float_bits, &pow2i}};

/* Logarithms: x = m 2^e from the bits (subnormals normalised), m in [sqrt(1/2), sqrt(2)),
 * f = m - 1 exact, and log(1 + f) = 2 atanh(s) with s = f / (2 + f), |s| < 0.172, as a series
 * to s^11 (error < 1e-10 relative). s comes as hi + lo (wgt_div_2_plus), and the result in base
 * K is C (s + s^3 / 3 + ...) with C = 2 / ln K split as c_hi (12 bits) + c_lo: c_hi times s's
 * top 12 bits is exact and carries the result, everything else is a correction 2^-11 its
 * size, so one rounding dominates (a plain C s rounds twice and came to 2.8 ulp for log10).
 * e log_K 2 enters as a hi part with few bits, exact times e, plus a lo part; log2 of a power
 * of two comes out exact. */
static const wgt_wgsl_piece log_f = {
    "fn m2_log_special(x: f32) -> bool {\n"
    "  let b = bitcast<u32>(x);\n"
    "  return (b << 1u) == 0u || (b >> 31u) != 0u || b >= 0x7f800000u;\n"
    "}\n"
    "fn m2_log_special_value(x: f32) -> f32 {\n" /* -inf at zero, NaN below, +inf and NaN as they are */
    "  let b = bitcast<u32>(x);\n"
    "  if ((b << 1u) == 0u) { return -wgt_inf(); }\n"
    "  if ((b >> 31u) != 0u && b <= 0xff800000u) { return wgt_nan(); }\n"
    "  return x;\n"
    "}\n"
    "fn m2_log_split(x: f32) -> vec2<f32> {\n" /* (e, m - 1) for finite x > 0 */
    "  var b = bitcast<u32>(x);\n"
    "  var e = i32(b >> 23u) - 127;\n"
    "  if ((b >> 23u) == 0u) {\n"
    "    let z = countLeadingZeros(b) - 8u;\n"
    "    b = b << z;\n"
    "    e = -126 - i32(z);\n"
    "  }\n"
    "  var m = bitcast<f32>((b & 0x7fffffu) | 0x3f800000u);\n"
    "  if (m > 1.41421356) { m = m * 0.5; e = e + 1; }\n"
    "  return vec2<f32>(f32(e), m - 1.0);\n"
    "}\n"
    /* (lead, tail) with lead + tail = (c_hi + c_lo) atanh(f / (2 + f)), lead exact */
    "fn m2_log1p_parts(f: f32, c_hi: f32, c_lo: f32) -> vec2<f32> {\n"
    "  let s = wgt_div_2_plus(f);\n"
    "  let s2 = s.x * s.x;\n"
    "  let series = s2 * (0.333333333 + s2 * (0.2 + s2 * (0.142857143 + s2 * (0.111111111 + s2 * 0.0909090909))));\n"
    "  let sh = wgt_hi12(s.x);\n"
    "  let tail = c_hi * (s.x - sh) + (c_lo * s.x + (c_hi + c_lo) * (s.y + s.x * series));\n"
    "  return vec2<f32>(c_hi * sh, tail);\n"
    "}\n"
    "fn m2_log_ef(e: f32, f: f32, c_hi: f32, c_lo: f32, b_hi: f32, b_lo: f32) -> f32 {\n" /* log_K((1 + f) 2^e) */
    "  let l = m2_log1p_parts(f, c_hi, c_lo);\n"
    "  return (e * b_hi + l.x) + (l.y + e * b_lo);\n"
    "}\n"
    "fn m2_log_base(x: f32, c_hi: f32, c_lo: f32, b_hi: f32, b_lo: f32) -> f32 {\n"
    "  if (m2_log_special(x)) { return m2_log_special_value(x); }\n"
    "  let p = m2_log_split(x);\n"
    "  return m2_log_ef(p.x, p.y, c_hi, c_lo, b_hi, b_lo);\n"
    "}\n"
    "fn m2_ln(x: f32) -> f32 { return m2_log_base(x, 2.0, 0.0, 0.693145751953125, 1.42860682030941723e-6); }\n"
    "fn m2_log2(x: f32) -> f32 { return m2_log_base(x, 2.8857421875, -3.521057078614831e-4, 1.0, 0.0); }\n"
    "fn m2_log10(x: f32) -> f32 {\n"
    "  return m2_log_base(x, 0.86865234375, -6.337994273053482e-5, 0.30078125, 2.48745663981195214e-4);\n"
    "}\n",
    {&wgt_wgsl_float_bits, &wgt_wgsl_quotient}};

/* log1p(v) = log((1 + f) 2^e) without rounding 1 + v: f = v while 1 + v lies in
 * [sqrt(1/2), 3/2) (extended to 3/2 because v - 1 would round below v = 1/2), else
 * f = (v - (2^e - 1)) 2^-e, exact by Sterbenz's lemma, with e read from the rounded 1 + v
 * (f may then stray past the range by an ulp, which the series takes). Below 2^-28 log1p(v)
 * rounds to v itself; from 2^24 on it is log(v); from -1 to -1/2, 1 + v is exact. A
 * correction (v - (u - 1)) / u for the rounding of u = 1 + v is no use on Mesa, whose compiler
 * folds (1 + v) - 1 to v. */
static const wgt_wgsl_piece log1p_acc = {
    "fn m2_log1p(v: f32) -> f32 {\n"
    "  if (abs(v) < 3.7252903e-9) { return v; }\n"
    "  if (v >= 16777216.0) { return m2_ln(v); }\n"
    "  if (v <= -0.5) { return m2_ln(1.0 + v); }\n"
    "  var e = 0.0;\n"
    "  var f = v;\n"
    "  if (v < -0.29289321) { e = -1.0; f = 1.0 + 2.0 * v; }\n"
    "  else if (v >= 0.5) {\n"
    "    let k = i32(m2_log_split(1.0 + v).x);\n"
    "    e = f32(k);\n"
    "    f = (v - (m2_pow2i(k) - 1.0)) * m2_pow2i(-k);\n"
    "  }\n"
    "  return m2_log_ef(e, f, 2.0, 0.0, 0.693145751953125, 1.42860682030941723e-6);\n"
    "}\n",
    {&log_f, &pow2i}};

/* tan = sin / cos of the exactly reduced argument (trig.c); an odd quadrant is -cos / sin. */
static const wgt_wgsl_piece tan_f = {
    "fn m2_tan(x: f32) -> f32 {\n"
    "  if ((bitcast<u32>(x) & 0x7f800000u) == 0x7f800000u) { return wgt_nan(); }\n"
    "  if ((bitcast<u32>(x) & 0x7fffffffu) < 0x39800000u) { return x; }\n" /* |x| < 2^-12: x^3 / 3 is below half an ulp */
    "  let a = wgt_reduce_pio2(abs(x));\n"
    "  let s = wgt_sin_k(a.hi, a.lo);\n"
    "  let c = wgt_cos_k(a.hi, a.lo);\n"
    "  let t = select(wgt_div(s, c), wgt_div(-c, s), (a.q & 1u) == 1u);\n"
    "  return select(t, -t, wgt_sign_bit(x));\n"
    "}\n",
    {&wgt_wgsl_sin_cos, &wgt_wgsl_quotient}};

/* Cephes' asinf and acosf: a polynomial in z = v^2 for |v| <= 1/2; beyond, asin(v) =
 * pi/2 - 2 asin(sqrt((1 - v) / 2)), where 1 - v is exact. pi/2 and pi enter as hi + lo. */
static const wgt_wgsl_piece asin_f = {
    "fn m2_asin_core(t: f32, z: f32) -> f32 {\n" /* asin(t) for |t| <= 1/2, z = t * t */
    "  return ((((4.2163199048e-2 * z + 2.4181311049e-2) * z + 4.5470025998e-2) * z + 7.4953002686e-2) * z\n"
    "         + 1.6666752422e-1) * z * t + t;\n"
    "}\n"
    "fn m2_asin(x: f32) -> f32 {\n"
    "  let a = abs(x);\n"
    "  if (a > 1.0) { return wgt_nan(); }\n"
    "  var r: f32;\n"
    "  if (a > 0.5) {\n"
    "    let z = 0.5 * (1.0 - a);\n"
    "    let t = wgt_sqrt(z);\n"
    "    r = 1.57079637050628662 - (2.0 * m2_asin_core(t, z) + 4.37113900018624283e-8);\n"
    "  } else {\n"
    "    r = m2_asin_core(a, a * a);\n"
    "  }\n"
    "  return wgt_with_sign(r, wgt_sign_bit(x));\n"
    "}\n"
    "fn m2_acos(x: f32) -> f32 {\n"
    "  if (abs(x) > 1.0) { return wgt_nan(); }\n"
    "  if (x > 0.5) {\n"
    "    let z = 0.5 * (1.0 - x);\n"
    "    return 2.0 * m2_asin_core(wgt_sqrt(z), z);\n"
    "  }\n"
    "  if (x < -0.5) {\n"
    "    let z = 0.5 * (1.0 + x);\n"
    "    return 3.14159274101257324 - (2.0 * m2_asin_core(wgt_sqrt(z), z) + 8.74227800037248566e-8);\n"
    "  }\n"
    "  return 1.57079637050628662 - (m2_asin_core(x, x * x) + 4.37113900018624283e-8);\n"
    "}\n",
    {&wgt_wgsl_float_bits, &wgt_wgsl_quotient}};

/* Cephes' atanf: reduced to |v| <= tan(pi/8) by atan(a) = pi/2 - atan(1 / a), pi/4 +
 * atan((a - 1) / (a + 1)) or, below a = 1/2 (where a - 1 would round), atan(1/2) +
 * atan((a - 1/2) / (1 + a / 2)), |v| < 0.072; the constants enter as hi + lo. (a - 1) / (a + 1)
 * is f / (2 + f) with f = a - 1 exact, taken as hi + lo (wgt_div_2_plus): its rounding, and
 * that of a + 1, moved the result by up to an ulp (atan(0.482) was 2.6 ulp off). */
static const wgt_wgsl_piece atan_f = {
    "fn m2_atan(x: f32) -> f32 {\n"
    "  let a = abs(x);\n"
    "  var hi = 0.0;\n"
    "  var lo = 0.0;\n"
    "  var v = a;\n"
    "  var vl = 0.0;\n"
    /* beyond 2^60, 1 / a is below pi/2's last bit: min keeps the quotient in wgt_div's range */
    "  if (a > 2.414213562373095) { hi = 1.57079637050628662; lo = -4.37113900018624283e-8; v = -wgt_div(1.0, min(a, 1.1529215e18)); }\n"
    "  else if (a >= 0.5) {\n"
    "    hi = 0.785398185253143311; lo = -2.18556950009312141e-8;\n"
    "    let s = wgt_div_2_plus(a - 1.0);\n"
    "    v = s.x; vl = s.y;\n"
    "  }\n"
    "  else if (a > 0.4142135623730950) { hi = 0.46364760398864746; lo = 5.01215868808913e-9; v = wgt_div(a - 0.5, 1.0 + 0.5 * a); }\n"
    "  let z = v * v;\n"
    "  let p = (((8.05374449538e-2 * z - 1.38776856032e-1) * z + 1.99777106478e-1) * z - 3.33329491539e-1) * z * v;\n"
    "  return wgt_with_sign(hi + (((p + lo) + vl) + v), wgt_sign_bit(x));\n"
    "}\n",
    {&wgt_wgsl_float_bits, &wgt_wgsl_quotient}};

/* sinh and cosh: Cephes' sinhf polynomial below 1 (e^x - e^-x cancels there); e^|x| / 2 as
 * (e^(|x|/2) / 2) e^(|x|/2) near the top, where e^|x| alone overflows first. */
static const wgt_wgsl_piece hyperbolic_f = {
    "fn m2_sinh(x: f32) -> f32 {\n"
    "  let a = abs(x);\n"
    "  var r: f32;\n"
    "  if (a < 1.0) {\n"
    "    let z = a * a;\n"
    "    r = ((2.03721912945e-4 * z + 8.33028376239e-3) * z + 1.66667160211e-1) * z * a + a;\n"
    "  } else if (a < 88.0) {\n"
    "    let e = m2_exp(a);\n"
    "    r = 0.5 * e - 0.5 / e;\n"
    "  } else {\n"
    "    let h = m2_exp(0.5 * a);\n"
    "    r = (0.5 * h) * h;\n"
    "  }\n"
    "  return wgt_with_sign(r, wgt_sign_bit(x));\n"
    "}\n"
    "fn m2_cosh(x: f32) -> f32 {\n"
    "  let a = abs(x);\n"
    "  if (a < 88.0) {\n"
    "    let e = m2_exp(a);\n"
    "    return 0.5 * e + 0.5 / e;\n"
    "  }\n"
    "  let h = m2_exp(0.5 * a);\n"
    "  return (0.5 * h) * h;\n"
    "}\n",
    {&exp_f, &wgt_wgsl_float_bits}};

/* asinh(a) = log1p(a + a^2 / (1 + sqrt(1 + a^2))) up to 2 (no cancellation near 0),
 * log(2a + 1 / (sqrt(a^2 + 1) + a)) up to 2^12, log(a) + ln 2 beyond (a^2 would overflow).
 * acosh likewise with t = x - 1; atanh(a) = log1p(2a / (1 - a)) / 2. */
static const wgt_wgsl_piece inverse_hyperbolic_f = {
    "fn m2_asinh(x: f32) -> f32 {\n"
    "  let a = abs(x);\n"
    "  var r: f32;\n"
    "  if (a > 4096.0) { r = m2_ln(a) + 0.693147180559945; }\n"
    "  else if (a > 2.0) { r = m2_ln(2.0 * a + 1.0 / (sqrt(a * a + 1.0) + a)); }\n"
    "  else if (a > 2.44140625e-4) { let t = a * a; r = m2_log1p(a + wgt_div(t, 1.0 + wgt_sqrt(1.0 + t))); }\n"
    "  else { r = a; }\n" /* below 2^-12, a^3 / 6 is below half an ulp (and a^2 could flush) */
    "  return wgt_with_sign(r, wgt_sign_bit(x));\n"
    "}\n"
    "fn m2_acosh(x: f32) -> f32 {\n"
    "  if (x < 1.0) { return wgt_nan(); }\n"
    "  if (x > 4096.0) { return m2_ln(x) + 0.693147180559945; }\n"
    "  if (x > 2.0) { return m2_ln(2.0 * x - 1.0 / (x + sqrt(x * x - 1.0))); }\n"
    "  let t = x - 1.0;\n"
    "  return m2_log1p(t + wgt_sqrt(2.0 * t + t * t));\n"
    "}\n"
    "fn m2_atanh(x: f32) -> f32 {\n"
    "  let a = abs(x);\n"
    "  if (a > 1.0) { return wgt_nan(); }\n"
    "  if (a == 1.0) { return wgt_with_sign(wgt_inf(), wgt_sign_bit(x)); }\n"
    "  var r: f32;\n"
    "  if (a < 2.44140625e-4) { r = a; }\n" /* below 2^-12, a^3 / 3 is below half an ulp */
    "  else if (a < 0.5) { r = 0.5 * m2_log1p(2.0 * a + wgt_div(2.0 * a * a, 1.0 - a)); }\n"
    "  else { r = 0.5 * m2_log1p(wgt_div(2.0 * a, 1.0 - a)); }\n"
    "  return wgt_with_sign(r, wgt_sign_bit(x));\n"
    "}\n",
    {&log1p_acc, &wgt_wgsl_float_bits}};

const char *wgt_wgpu_math2_unary(wgt_unary_op op, wgt_dtype d, const wgt_wgsl_piece **helpers) {
    *helpers = NULL;
    if (d == WGT_I32 || d == WGT_U32) {
        switch (op) {
        case WGT_UNARY_TRUNC: return "x";
        case WGT_UNARY_ISFINITE: return "1u";
        case WGT_UNARY_BITWISE_NOT: return "~x";
        default: return NULL;
        }
    }
    static const struct {
        wgt_unary_op op;
        const char *expr;
        const wgt_wgsl_piece *piece;
    } float_ops[] = {
        {WGT_UNARY_TAN, "m2_tan(x)", &tan_f},
        {WGT_UNARY_ASIN, "m2_asin(x)", &asin_f},
        {WGT_UNARY_ACOS, "m2_acos(x)", &asin_f},
        {WGT_UNARY_ATAN, "m2_atan(x)", &atan_f},
        {WGT_UNARY_SINH, "m2_sinh(x)", &hyperbolic_f},
        {WGT_UNARY_COSH, "m2_cosh(x)", &hyperbolic_f},
        {WGT_UNARY_ASINH, "m2_asinh(x)", &inverse_hyperbolic_f},
        {WGT_UNARY_ACOSH, "m2_acosh(x)", &inverse_hyperbolic_f},
        {WGT_UNARY_ATANH, "m2_atanh(x)", &inverse_hyperbolic_f},
        {WGT_UNARY_LOG2, "m2_log2(x)", &log_f},
        {WGT_UNARY_LOG10, "m2_log10(x)", &log_f},
        {WGT_UNARY_EXP2, "m2_exp2(x)", &exp2_f},
        {WGT_UNARY_TRUNC, "trunc(x)", NULL},
        {WGT_UNARY_SIGNBIT, "select(0u, 1u, wgt_sign_bit(x))", &wgt_wgsl_float_bits},
        {WGT_UNARY_ISFINITE, "select(0u, 1u, (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u)", NULL},
    };
    for (size_t i = 0; i < sizeof float_ops / sizeof float_ops[0]; i++)
        if (float_ops[i].op == op) {
            *helpers = float_ops[i].piece;
            return float_ops[i].expr;
        }
    return NULL;
}

/* ---- binary ---- */

/* numpy's logaddexp: the larger plus log1p(e^-|x - y|); equal arguments give x + ln 2. */
static const wgt_wgsl_piece logaddexp_f = {
    "fn m2_logaddexp(x: f32, y: f32) -> f32 {\n"
    "  if (wgt_is_nan(x) || wgt_is_nan(y)) { return wgt_nan(); }\n"
    "  if (x == y) { return x + 0.693147180559945; }\n"
    "  let d = x - y;\n"
    "  if (d > 0.0) { return x + m2_log1p(m2_exp(-d)); }\n"
    "  return y + m2_log1p(m2_exp(d));\n"
    "}\n",
    {&log1p_acc, &exp_f}};

/* Both scaled by the larger's power of two (exactly), so the squares neither overflow nor
 * underflow; an infinity wins over NaN, as C's hypot. */
static const wgt_wgsl_piece hypot_f = {
    "fn m2_hypot(x: f32, y: f32) -> f32 {\n"
    "  if (wgt_is_inf(x) || wgt_is_inf(y)) { return wgt_inf(); }\n"
    "  if (wgt_is_nan(x) || wgt_is_nan(y)) { return wgt_nan(); }\n"
    "  let a = bitcast<f32>(bitcast<u32>(x) & 0x7fffffffu);\n"
    "  let b = bitcast<f32>(bitcast<u32>(y) & 0x7fffffffu);\n"
    "  let hi = max(bitcast<u32>(a), bitcast<u32>(b));\n"
    "  if (hi == 0u) { return 0.0; }\n"
    "  let e = clamp(i32(hi >> 23u) - 127, -126, 126);\n"
    "  let sa = a * m2_pow2i(-e);\n"
    "  let sb = b * m2_pow2i(-e);\n"
    "  return sqrt(sa * sa + sb * sb) * m2_pow2i(e);\n"
    "}\n",
    {&wgt_wgsl_float_bits, &pow2i}};

/* The next value after x toward y, on the bits: an ordered key per value tells the
 * direction, so subnormals are stepped even where the GPU would flush them in a compare.
 * f16 steps on its own 16 bits (pack2x16float of an f16 value is exact). */
static const wgt_wgsl_piece nextafter_f = {
    "fn m2_order_key(b: u32, sign: u32) -> u32 { return select(b | sign, ~b & (sign | (sign - 1u)), (b & sign) != 0u); }\n"
    "fn m2_next_bits(bx: u32, by: u32, sign: u32) -> u32 {\n"
    "  if (bx == by || ((bx | by) & (sign - 1u)) == 0u) { return by; }\n"
    "  if ((bx & (sign - 1u)) == 0u) { return (by & sign) | 1u; }\n"
    "  let up = m2_order_key(bx, sign) < m2_order_key(by, sign);\n"
    "  return select(bx - 1u, bx + 1u, up == ((bx & sign) == 0u));\n"
    "}\n"
    "fn m2_nextafter(x: f32, y: f32) -> f32 {\n"
    "  if (wgt_is_nan(x) || wgt_is_nan(y)) { return wgt_nan(); }\n"
    "  return bitcast<f32>(m2_next_bits(bitcast<u32>(x), bitcast<u32>(y), 0x80000000u));\n"
    "}\n"
    "fn m2_nextafter16(x: f32, y: f32) -> f32 {\n"
    "  if (wgt_is_nan(x) || wgt_is_nan(y)) { return wgt_nan(); }\n"
    "  let bx = pack2x16float(vec2<f32>(x, 0.0)) & 0xffffu;\n"
    "  let by = pack2x16float(vec2<f32>(y, 0.0)) & 0xffffu;\n"
    "  return unpack2x16float(m2_next_bits(bx, by, 0x8000u)).x;\n"
    "}\n",
    {&wgt_wgsl_float_bits}};

/* numpy's npy_divmod quotient, on binary.c's exact fmod: (x - fmod) / y moved down a step
 * where the remainder moves to the divisor's side, then floored with the correction for a
 * division that rounded just below a whole number. A zero divisor gives x / 0 (inf or NaN).
 * A GPU may flush subnormal operands and results to zero (NVIDIA's does) and divide as
 * x * (1 / y), whose reciprocal of a y beyond 2^126 is subnormal: so signs and zeros are read
 * on the bits, |x| < |y| is answered from the signs alone (0 or -1), and a divisor outside
 * [2^-60, 2^64) is brought inside by scaling both operands by 2^64 or 2^-64 exactly (from
 * the bits for a subnormal), which leaves the quotient and the remainder's sign as they are.
 * A dividend of 2^64 or more beside a tiny divisor, or of 2^100 or more beside any other,
 * has a quotient beyond 2^36: a whole number that neither the remainder nor the floor
 * moves, so it is the quotient alone, of the dividend scaled by 2^-64 (keeping the residual
 * in wgt_div's range) and scaled back. */
static const wgt_wgsl_piece floor_divide_f = {
    "fn m2_floor_divide(x: f32, y: f32) -> f32 {\n"
    "  if (wgt_is_nan(x) || wgt_is_nan(y) || wgt_is_inf(x)) { return wgt_nan(); }\n"
    "  let negative = wgt_sign_bit(x) != wgt_sign_bit(y);\n"
    "  if (wgt_is_zero(y)) {\n"
    "    if (wgt_is_zero(x)) { return wgt_nan(); }\n"
    "    return wgt_with_sign(wgt_inf(), negative);\n"
    "  }\n"
    "  let ax = bitcast<u32>(x) & 0x7fffffffu;\n"
    "  let ay = bitcast<u32>(y) & 0x7fffffffu;\n"
    "  if (ax < ay) {\n" /* fmod is x itself: -1 if it moves to y's side, else a signed zero */
    "    if (ax != 0u && negative) { return -1.0; }\n"
    "    return wgt_with_sign(0.0, negative);\n"
    "  }\n"
    "  var xs = x;\n"
    "  var ys = y;\n"
    "  let down = 5.421010862427522e-20;\n" /* 2^-64 */
    "  let up = 18446744073709551616.0;\n" /* 2^64 */
    "  if (ay < 0x21800000u) {\n" /* |y| < 2^-60 */
    "    ys = wgt_scale_up64(y);\n"
    /* |x| >= 2^64: 2^-32 and 2^96 here, since a compiler may fold 2^64 2^64 to infinity */
    "    if (ax >= 0x5f800000u) { return wgt_div(x * 2.3283064365386963e-10, ys) * 79228162514264337593543950336.0; }\n"
    "    xs = wgt_scale_up64(x);\n"
    "  } else if (ay >= 0x5f800000u) {\n" /* |y| >= 2^64 */
    "    xs = x * down;\n"
    "    ys = y * down;\n"
    "  } else if (ax >= 0x71800000u) {\n" /* |x| >= 2^100: a whole quotient beyond 2^36 */
    "    return wgt_div(x * down, y) * up;\n"
    "  }\n"
    "  let m = wgt_fmod(xs, ys);\n"
    "  var div = wgt_div(xs - m, ys);\n"
    "  if (!wgt_is_zero(m) && wgt_sign_bit(m) != wgt_sign_bit(ys)) { div = div - 1.0; }\n"
    "  if (div == 0.0) { return wgt_with_sign(0.0, negative); }\n"
    "  let fl = floor(div);\n"
    "  return select(fl, fl + 1.0, div - fl > 0.5);\n"
    "}\n",
    {&wgt_wgsl_subnormal, &wgt_wgsl_mod_f32, &wgt_wgsl_quotient}};

/* Floor for integers: the truncated quotient one lower where the signs differ and it was not
 * exact; a zero divisor gives 0 and MIN // -1 wraps (never a trap in the shader). */
static const wgt_wgsl_piece floor_divide_int = {
    "fn m2_floor_divide_i32(x: i32, y: i32) -> i32 {\n"
    "  if (y == 0) { return 0; }\n"
    "  if (y == -1) { return 0 - x; }\n"
    "  let q = x / y;\n"
    "  return select(q, q - 1, q * y != x && ((x < 0) != (y < 0)));\n"
    "}\n"
    "fn m2_floor_divide_u32(x: u32, y: u32) -> u32 { return select(x / max(y, 1u), 0u, y == 0u); }\n",
    {NULL}};

const char *wgt_wgpu_math2_binary(wgt_binary_op op, wgt_dtype d, const wgt_wgsl_piece **helpers) {
    int fl = d == WGT_F32 || d == WGT_F16, i32 = d == WGT_I32;
    *helpers = NULL;
    switch (op) {
    case WGT_BINARY_LOGADDEXP: *helpers = &logaddexp_f; return fl ? "m2_logaddexp(x, y)" : NULL;
    case WGT_BINARY_HYPOT: *helpers = &hypot_f; return fl ? "m2_hypot(x, y)" : NULL;
    case WGT_BINARY_COPYSIGN: *helpers = &wgt_wgsl_float_bits; return fl ? "wgt_with_sign(x, wgt_sign_bit(y))" : NULL;
    case WGT_BINARY_NEXTAFTER:
        *helpers = &nextafter_f;
        return !fl ? NULL : d == WGT_F16 ? "m2_nextafter16(x, y)" : "m2_nextafter(x, y)";
    case WGT_BINARY_BITWISE_AND: return fl ? NULL : "x & y";
    case WGT_BINARY_BITWISE_OR: return fl ? NULL : "x | y";
    case WGT_BINARY_BITWISE_XOR: return fl ? NULL : "x ^ y";
    /* WGSL takes shift counts modulo 32: counts of 32 and more (negative ones read as huge
     * u32 counts) are spelled out as NumPy's results. */
    case WGT_BINARY_LEFT_SHIFT:
        return fl ? NULL
               : i32 ? "select(x << (bitcast<u32>(y) & 31u), 0i, bitcast<u32>(y) >= 32u)"
                     : "select(x << (y & 31u), 0u, y >= 32u)";
    case WGT_BINARY_RIGHT_SHIFT:
        return fl ? NULL
               : i32 ? "select(x >> (bitcast<u32>(y) & 31u), x >> 31u, bitcast<u32>(y) >= 32u)"
                     : "select(x >> (y & 31u), 0u, y >= 32u)";
    case WGT_BINARY_FLOOR_DIVIDE:
        *helpers = fl ? &floor_divide_f : &floor_divide_int;
        return fl ? "m2_floor_divide(x, y)" : i32 ? "m2_floor_divide_i32(x, y)" : "m2_floor_divide_u32(x, y)";
    default: return NULL;
    }
}
