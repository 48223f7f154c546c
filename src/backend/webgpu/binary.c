/*
 * Binary ops, comparisons, logical ops and where on WebGPU, as expressions (and helper
 * functions) for the shared elementwise runner. WGSL leaves much of what the header
 * promises undefined: pow for x <= 0, atan2 at zeros and infinities, max and min with NaN,
 * integer % by zero. So the helpers handle those cases themselves, spelling out the same
 * semantics as the CPU kernels (C's pow and atan2, NumPy's mod, maximum and minimum).
 * NaN and infinity tests and constants come from the shared float prelude
 * (wgt_wgsl_float_bits). Each op is an expression over x and y (and z for where) with its
 * helper pieces, looked up by the op's own kernel and by fused kernels (fused.c) alike.
 */
#include <stdio.h>
#include <string.h>

#include "webgpu_internal.h"

/* pow(ax, y) for finite ax > 0 and finite y != 0. WGSL's pow is exp2(y * log2(ax)) in f32:
 * it overflows on the way to pow(FLT_MAX, 1), misreads subnormal ax (pow(1e-40, 1) gave 0),
 * and loses the low bits of y * log2(ax) when the exponent part is large. So: small integer
 * exponents by repeated multiplication (exact where the result is representable; the
 * reciprocal for negative ones while the power is a normal number), else ax = m 2^e from its
 * bits (subnormals normalised), m in [sqrt(1/2), sqrt(2)), y e computed exactly as two
 * products (y split into 8 and 16 bits), log2(m) by its atanh series, and 2^(k + f) scaled in
 * two steps so neither the result near FLT_MAX nor a subnormal one passes through an
 * infinity or a zero. */
static const wgt_wgsl_piece pow_pos = {
    "fn wgt_pow2i(k: i32) -> f32 { return bitcast<f32>(u32(k + 127) << 23u); }\n" /* -126 <= k <= 127 */
    "fn wgt_pow_pos(ax: f32, y: f32) -> f32 {\n"
    "    if (trunc(y) == y && abs(y) <= 8.0) {\n"
    "        var n = u32(abs(y));\n"
    "        var base = ax;\n"
    "        var r = 1.0;\n"
    "        loop {\n"
    "            if ((n & 1u) != 0u) { r = r * base; }\n"
    "            n = n >> 1u;\n"
    "            if (n == 0u) { break; }\n"
    "            base = base * base;\n"
    "        }\n"
    "        if (y > 0.0) { return r; }\n"
    "        if (r >= 1.17549435e-38 && !wgt_is_inf(r)) { return 1.0 / r; }\n"
    "    }\n"
    "    var bits = bitcast<u32>(ax);\n"
    "    var e = i32(bits >> 23u) - 127;\n"
    "    if ((bits >> 23u) == 0u) {\n" /* subnormal: shift the significand up to bit 23 */
    "        let z = countLeadingZeros(bits) - 8u;\n"
    "        bits = bits << z;\n"
    "        e = -126 - i32(z);\n"
    "    }\n"
    "    var m = bitcast<f32>((bits & 0x7fffffu) | 0x3f800000u);\n"
    "    if (m > 1.41421356) { m = m * 0.5; e = e + 1; }\n"
    "    let s = (m - 1.0) / (m + 1.0);\n"
    "    let s2 = s * s;\n" /* log2(m) = 2 atanh(s) / ln 2, |s| < 0.172: to s^9 */
    "    let l = s * (2.88539008 + s2 * (0.961796694 + s2 * (0.577078016 + s2 * (0.412198583 + s2 * 0.320598898))));\n"
    "    let yh = bitcast<f32>(bitcast<u32>(y) & 0xffff0000u);\n"
    "    let th = yh * f32(e);\n"       /* 8 by 8 bits: exact */
    "    let tl = (y - yh) * f32(e);\n" /* 16 by 8 bits: exact */
    "    let yl = y * l;\n"
    "    let z = th + (tl + yl);\n"
    "    if (z >= 128.0) { return wgt_inf(); }\n"
    "    if (z < -151.0) { return 0.0; }\n"
    "    let k = round(z);\n"
    "    let f = ((th - k) + tl) + yl;\n" /* th - k is exact */
    "    let ki = i32(k);\n"
    "    let k1 = ki / 2;\n"
    "    return exp2(f) * wgt_pow2i(k1) * wgt_pow2i(ki - k1);\n"
    "}\n",
    {&wgt_wgsl_float_bits}};

/* C99 F.9.4.4's special cases around wgt_pow_pos; zeros are tested on the bits, so that a
 * subnormal input is not taken for one. */
static const wgt_wgsl_piece pow_f32 = {
    "fn wgt_pow(x: f32, y: f32) -> f32 {\n"
    "    if (wgt_is_zero(y) || x == 1.0) { return 1.0; }\n" /* even when the other one is NaN */
    "    if (wgt_is_nan(x) || wgt_is_nan(y)) { return wgt_nan(); }\n"
    /* |x| on the bits: a GPU that flushes subnormals may flush abs()'s result (NVIDIA's did). */
    "    let ax = bitcast<f32>(bitcast<u32>(x) & 0x7fffffffu);\n"
    "    if (wgt_is_inf(y)) {\n"
    "        if (ax == 1.0) { return 1.0; }\n"
    "        return select(0.0, wgt_inf(), (ax > 1.0) == (y > 0.0));\n"
    "    }\n"
    "    let y_int = trunc(y) == y;\n"
    /* Every f32 of magnitude 2^24 or more is an even integer. */
    "    let y_odd = y_int && abs(y) < 16777216.0 && (u32(abs(y)) & 1u) == 1u;\n"
    "    var mag: f32;\n"
    "    if (wgt_is_zero(ax)) { mag = select(0.0, wgt_inf(), y < 0.0); }\n"
    "    else if (wgt_is_inf(ax)) { mag = select(wgt_inf(), 0.0, y < 0.0); }\n"
    "    else { mag = wgt_pow_pos(ax, y); }\n"
    "    if (wgt_sign_bit(x)) {\n"
    "        if (y_odd) { return -mag; }\n"
    "        if (!y_int && !wgt_is_zero(ax) && !wgt_is_inf(ax)) { return wgt_nan(); }\n"
    "    }\n"
    "    return mag;\n"
    "}\n",
    {&wgt_wgsl_float_bits, &wgt_wgsl_subnormal, &pow_pos}};

/* C's atan2 at zeros and infinities (WGSL leaves atan2(0, 0) undefined); the angles are
 * the f32 roundings of pi, pi/2, pi/4 and 3pi/4. Zeros are tested on the bits, and a pair
 * below 2^-64 is scaled up by 2^64 first (exactly; subnormals from their bits), because the
 * builtin divides one by the other: atan2(1e-44, 3e-44) gave pi/2, not 0.32. */
static const wgt_wgsl_piece atan2_f32 = {
    "fn wgt_atan2(y: f32, x: f32) -> f32 {\n"
    "    if (wgt_is_nan(y) || wgt_is_nan(x)) { return wgt_nan(); }\n"
    "    let pi = bitcast<f32>(0x40490fdbu);\n"
    "    let half_pi = bitcast<f32>(0x3fc90fdbu);\n"
    "    var r: f32;\n"
    "    if (wgt_is_zero(y)) { r = select(0.0, pi, wgt_sign_bit(x)); }\n"
    "    else if (wgt_is_zero(x)) { r = half_pi; }\n"
    "    else if (wgt_is_inf(y) && wgt_is_inf(x)) {\n"
    "        r = select(bitcast<f32>(0x3f490fdbu), bitcast<f32>(0x4016cbe4u), x < 0.0);\n"
    "    }\n"
    "    else if (wgt_is_inf(x)) { r = select(0.0, pi, x < 0.0); }\n"
    "    else if (wgt_is_inf(y)) { r = half_pi; }\n"
    "    else if (max(bitcast<u32>(y) & 0x7fffffffu, bitcast<u32>(x) & 0x7fffffffu) < 0x1f800000u) {\n"
    "        return atan2(wgt_scale_up64(y), wgt_scale_up64(x));\n"
    "    }\n"
    "    else { return atan2(y, x); }\n"
    "    return wgt_with_sign(r, wgt_sign_bit(y));\n"
    "}\n",
    {&wgt_wgsl_float_bits, &wgt_wgsl_subnormal}};

/* Floored mod as numpy.mod computes it: the exact fmod (by integer long division of the
 * significands, as musl's fmodf does, because x - y * trunc(x / y) loses digits), then
 * moved to the divisor's side with one rounded addition. The same steps as the CPU. */
const wgt_wgsl_piece wgt_wgsl_mod_f32 = {
    "fn wgt_significand(bits: u32, e: ptr<function, i32>) -> u32 {\n"
    "    if (*e != 0) { return (bits & 0x7fffffu) | 0x800000u; }\n"
    "    var m = bits << 9u;\n" /* subnormal: normalize, lowering the exponent */
    "    var ex = 0;\n"
    "    loop { if ((m >> 31u) != 0u) { break; } ex = ex - 1; m = m << 1u; }\n"
    "    *e = ex;\n"
    "    return bits << u32(1 - ex);\n"
    "}\n"
    "fn wgt_fmod(x: f32, y: f32) -> f32 {\n"
    "    let bx = bitcast<u32>(x);\n"
    "    let by = bitcast<u32>(y);\n"
    "    let sx = bx & 0x80000000u;\n"
    "    if ((bx << 1u) <= (by << 1u)) {\n" /* |x| <= |y| (and y may be infinite) */
    "        return select(x, bitcast<f32>(sx), (bx << 1u) == (by << 1u));\n"
    "    }\n"
    "    var ex = i32((bx >> 23u) & 0xffu);\n"
    "    var ey = i32((by >> 23u) & 0xffu);\n"
    "    var mx = wgt_significand(bx, &ex);\n"
    "    let my = wgt_significand(by, &ey);\n"
    "    loop {\n"
    "        if (mx >= my) { mx = mx - my; if (mx == 0u) { return bitcast<f32>(sx); } }\n"
    "        if (ex <= ey) { break; }\n"
    "        mx = mx << 1u;\n"
    "        ex = ex - 1;\n"
    "    }\n"
    "    loop { if ((mx >> 23u) != 0u) { break; } mx = mx << 1u; ex = ex - 1; }\n"
    "    if (ex > 0) { mx = (mx - 0x800000u) | (u32(ex) << 23u); }\n"
    "    else { mx = mx >> u32(1 - ex); }\n"
    "    return bitcast<f32>(mx | sx);\n"
    "}\n"
    /* Zeros and signs on the bits, and a subnormal remainder moved to y's side at 2^64 its
     * size: a GPU may compare a subnormal as zero and flush it in a sum (NVIDIA's does), which
     * gave NaN for a subnormal y and y itself, or +0, for m + y. */
    "fn wgt_mod(x: f32, y: f32) -> f32 {\n"
    "    if (wgt_is_nan(x) || wgt_is_nan(y) || wgt_is_inf(x) || wgt_is_zero(y)) { return wgt_nan(); }\n"
    "    let m = wgt_fmod(x, y);\n"
    "    if (wgt_is_zero(m)) { return wgt_with_sign(0.0, wgt_sign_bit(y)); }\n"
    "    if (wgt_sign_bit(m) == wgt_sign_bit(y)) { return m; }\n"
    "    if (wgt_is_subnormal(m) && (bitcast<u32>(y) & 0x7fffffffu) < 0x5f800000u) {\n" /* |y| < 2^64 */
    "        return (wgt_scale_up64(m) + wgt_scale_up64(y)) * 5.421010862427522e-20;\n" /* 2^-64 */
    "    }\n"
    "    return m + y;\n"
    "}\n",
    {&wgt_wgsl_subnormal}};

/* x / y, the builtin's quotient, kept out of the ranges where a GPU that flushes subnormals
 * and divides as x * (1 / y) gives 0 or infinity (NVIDIA's does): beyond 2^126 the reciprocal
 * of y is subnormal (3e38 / 3e38 gave 0), so both operands are scaled by 1/4 first; a
 * subnormal operand reads as zero (1e-40 / 2e-40 gave NaN), so both are scaled by 2^64 from
 * their bits, which leaves the quotient as it is (or takes an operand to infinity only where
 * the quotient overflows or underflows anyway). */
static const wgt_wgsl_piece div_f32 = {
    "fn wgt_fdiv(x: f32, y: f32) -> f32 {\n"
    "    let ay = bitcast<u32>(y) & 0x7fffffffu;\n"
    "    if (ay >= 0x7e800000u && ay < 0x7f800000u) { return (x * 0.25) / (y * 0.25); }\n"
    "    if (wgt_is_subnormal(x) || wgt_is_subnormal(y)) { return wgt_scale_up64(x) / wgt_scale_up64(y); }\n"
    "    return x / y;\n"
    "}\n",
    {&wgt_wgsl_subnormal}};

/* NumPy's choice: the first NaN wins, and an ordered pair picks by comparison (so the
 * sign of a zero result matches the CPU too). */
static const wgt_wgsl_piece maxmin_f32 = {
    "fn wgt_maximum(x: f32, y: f32) -> f32 {\n"
    "    if (wgt_is_nan(x)) { return x; }\n"
    "    if (wgt_is_nan(y)) { return y; }\n"
    "    return select(y, x, x >= y);\n"
    "}\n"
    "fn wgt_minimum(x: f32, y: f32) -> f32 {\n"
    "    if (wgt_is_nan(x)) { return x; }\n"
    "    if (wgt_is_nan(y)) { return y; }\n"
    "    return select(y, x, x <= y);\n"
    "}\n",
    {&wgt_wgsl_float_bits}};

/* Repeated squaring; WGSL's integer multiply wraps. Negative i32 exponents follow the
 * header: 0, except 1 for base 1 and +-1 for base -1. */
static const wgt_wgsl_piece pow_int = {
    "fn wgt_pow_u32(x: u32, y: u32) -> u32 {\n"
    "    var r = 1u;\n"
    "    var b = x;\n"
    "    var e = y;\n"
    "    loop {\n"
    "        if (e == 0u) { break; }\n"
    "        if ((e & 1u) != 0u) { r = r * b; }\n"
    "        b = b * b;\n"
    "        e = e >> 1u;\n"
    "    }\n"
    "    return r;\n"
    "}\n"
    "fn wgt_pow_i32(x: i32, y: i32) -> i32 {\n"
    "    if (y < 0) {\n"
    "        if (x == 1) { return 1; }\n"
    "        if (x == -1) { return select(1, -1, (y & 1) != 0); }\n"
    "        return 0;\n"
    "    }\n"
    "    return bitcast<i32>(wgt_pow_u32(bitcast<u32>(x), bitcast<u32>(y)));\n"
    "}\n",
    {NULL}};

/* Floored integer mod; divisors 0 and -1 give 0 (and keep MIN % -1 out of the shader). */
static const wgt_wgsl_piece mod_int = {
    "fn wgt_mod_i32(x: i32, y: i32) -> i32 {\n"
    "    if (y == 0 || y == -1) { return 0; }\n"
    "    let m = x % y;\n"
    "    return select(m, m + y, m != 0 && ((m < 0) != (y < 0)));\n"
    "}\n"
    "fn wgt_mod_u32(x: u32, y: u32) -> u32 { return select(x % max(y, 1u), 0u, y == 0u); }\n",
    {NULL}};

static const char *const op_names[WGT_BINARY_COUNT] = {
    "add", "sub", "mul", "div", "pow", "maximum", "minimum", "mod", "atan2",
    "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logaddexp", "hypot", "copysign", "nextafter",
    "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "floor_divide", "logical_xor"};

static int is_float(wgt_dtype d) { return d == WGT_F32 || d == WGT_F16; }
static int is_dtype(wgt_dtype d) { return is_float(d) || d == WGT_I32 || d == WGT_U32; }

/* WGSL test that input v (x, y or z) of type d is nonzero. Floats are tested on their
 * bits: +-0 is false and NaN true, whatever the driver assumes about NaN. */
static void truth(char *buf, size_t size, const char *v, wgt_dtype d) {
    if (is_float(d)) snprintf(buf, size, "((bitcast<u32>(%s) & 0x7fffffffu) != 0u)", v);
    else snprintf(buf, size, "(%s != %s)", v, d == WGT_I32 ? "0" : "0u");
}

wgt_status wgt_wgpu_binary_expr(wgt_binary_op op, wgt_dtype a, wgt_dtype b, wgt_dtype out, char *expr, size_t size,
                                wgt_wgsl_pieces *helpers) {
    if ((unsigned)op >= WGT_BINARY_COUNT) return wgt_error(WGT_ERR_INTERNAL, "unknown binary op %d", (int)op);
    int fl = is_float(a), i32 = a == WGT_I32, logical = wgt_binary_gives_u32(op) && op > WGT_BINARY_GE;
    if (!is_dtype(a) || !is_dtype(b) || (!logical && a != b) || (op == WGT_BINARY_ATAN2 && !fl))
        return wgt_error(WGT_ERR_INTERNAL, "binary op %s on %s and %s", op_names[op], wgt_dtype_name(a),
                         wgt_dtype_name(b));
    wgt_dtype want = wgt_binary_gives_u32(op) ? WGT_U32 : a;
    if (out != want)
        return wgt_error(WGT_ERR_INTERNAL, "binary op %s on %s gives %s, not %s", op_names[op], wgt_dtype_name(a),
                         wgt_dtype_name(want), wgt_dtype_name(out));
    const char *e = NULL;
    const wgt_wgsl_piece *piece = NULL;
    char buf[256];
    int math2 = op > WGT_BINARY_LOGICAL_OR && op != WGT_BINARY_LOGICAL_XOR;
    if (math2) { /* the array API's additions: math2.c */
        e = wgt_wgpu_math2_binary(op, a, &piece);
        if (!e)
            return wgt_error(WGT_ERR_INTERNAL, "binary op %s on %s and %s", op_names[op], wgt_dtype_name(a),
                             wgt_dtype_name(b));
    }
    switch (math2 ? WGT_BINARY_COUNT : op) {
    case WGT_BINARY_COUNT: break;
    case WGT_BINARY_ADD: e = "x + y"; break;
    case WGT_BINARY_SUB: e = "x - y"; break;
    case WGT_BINARY_MUL: e = "x * y"; break;
    /* Integer division by zero is defined as 0 here (WGSL would give x). */
    case WGT_BINARY_DIV:
        e = fl ? "wgt_fdiv(x, y)" : "select(x / y, x - x, y == (y - y))";
        piece = fl ? &div_f32 : NULL;
        break;
    case WGT_BINARY_POW:
        e = fl ? "wgt_pow(x, y)" : i32 ? "wgt_pow_i32(x, y)" : "wgt_pow_u32(x, y)";
        piece = fl ? &pow_f32 : &pow_int;
        break;
    case WGT_BINARY_MAXIMUM:
    case WGT_BINARY_MINIMUM:
        if (fl) {
            e = op == WGT_BINARY_MAXIMUM ? "wgt_maximum(x, y)" : "wgt_minimum(x, y)";
            piece = &maxmin_f32;
        } else {
            e = op == WGT_BINARY_MAXIMUM ? "max(x, y)" : "min(x, y)";
        }
        break;
    case WGT_BINARY_MOD:
        e = fl ? "wgt_mod(x, y)" : i32 ? "wgt_mod_i32(x, y)" : "wgt_mod_u32(x, y)";
        piece = fl ? &wgt_wgsl_mod_f32 : &mod_int;
        break;
    case WGT_BINARY_ATAN2:
        e = "wgt_atan2(x, y)";
        piece = &atan2_f32;
        break;
    case WGT_BINARY_LOGICAL_AND:
    case WGT_BINARY_LOGICAL_OR:
    case WGT_BINARY_LOGICAL_XOR: {
        char tx[64], ty[64];
        truth(tx, sizeof tx, "x", a);
        truth(ty, sizeof ty, "y", b);
        snprintf(buf, sizeof buf, "select(0u, 1u, %s %s %s)", tx,
                 op == WGT_BINARY_LOGICAL_AND ? "&&" : op == WGT_BINARY_LOGICAL_OR ? "||" : "!=", ty);
        e = buf;
        break;
    }
    default: { /* comparisons: NaN compares false except for ne */
        static const char *const cmp[] = {"==", "!=", "<", "<=", ">", ">="};
        const char *c = cmp[op - WGT_BINARY_EQ];
        if (!fl) snprintf(buf, sizeof buf, "select(0u, 1u, x %s y)", c);
        else if (op == WGT_BINARY_NE) snprintf(buf, sizeof buf, "select(0u, 1u, wgt_is_nan(x) || wgt_is_nan(y) || x != y)");
        else snprintf(buf, sizeof buf, "select(0u, 1u, !wgt_is_nan(x) && !wgt_is_nan(y) && x %s y)", c);
        e = buf;
        piece = fl ? &wgt_wgsl_float_bits : NULL;
        break;
    }
    }
    if (strlen(e) >= size) return wgt_error(WGT_ERR_INTERNAL, "binary op %s: no room for its expression", op_names[op]);
    memcpy(expr, e, strlen(e) + 1);
    wgt_wgsl_pieces_add(helpers, piece);
    return WGT_OK;
}

wgt_status wgt_wgpu_binary(wgt_backend *be, wgt_binary_op op, const wgt_operand *out, const wgt_operand *a,
                           const wgt_operand *b) {
    if (wgt_dtype_size(a->dtype) == 8) return wgt_wgpu_binary64(be, op, out, a, b);
    char expr[256];
    wgt_wgsl_pieces helpers = {0};
    wgt_status st = wgt_wgpu_binary_expr(op, a->dtype, b->dtype, out->dtype, expr, sizeof expr, &helpers);
    if (st != WGT_OK) return st;
    wgt_wgpu_elementwise_spec spec = {op_names[op], expr, 2, {a->dtype, b->dtype, 0}, out->dtype};
    const wgt_operand *in[2] = {a, b};
    return wgt_wgpu_elementwise_with(be, &spec, &helpers, out, in, NULL);
}

wgt_status wgt_wgpu_where_expr(wgt_dtype cond, wgt_dtype a, wgt_dtype b, wgt_dtype out, char *expr, size_t size) {
    /* A bool condition is read from its packed bytes by the runner's loads. */
    if ((!is_dtype(cond) && cond != WGT_BOOL) || !is_dtype(a) || a != b || a != out)
        return wgt_error(WGT_ERR_INTERNAL, "where on %s ? %s : %s giving %s", wgt_dtype_name(cond), wgt_dtype_name(a),
                         wgt_dtype_name(b), wgt_dtype_name(out));
    char t[64];
    truth(t, sizeof t, "x", cond);
    int n = snprintf(expr, size, "select(z, y, %s)", t);
    return n > 0 && (size_t)n < size ? WGT_OK : wgt_error(WGT_ERR_INTERNAL, "where: no room for its expression");
}

wgt_status wgt_wgpu_where(wgt_backend *be, const wgt_operand *out, const wgt_operand *cond, const wgt_operand *a,
                          const wgt_operand *b) {
    if (wgt_dtype_size(out->dtype) == 8 && a->dtype == out->dtype) return wgt_wgpu_where64(be, out, cond, a, b);
    char expr[128];
    wgt_status st = wgt_wgpu_where_expr(cond->dtype, a->dtype, b->dtype, out->dtype, expr, sizeof expr);
    if (st != WGT_OK) return st;
    /* 32-bit values move as u32 bits, so NaN payloads, signed zeros and subnormals pass
     * through unchanged; f16 must go through f32 to be unpacked, which is exact too. */
    wgt_dtype vt = out->dtype == WGT_F16 ? WGT_F16 : WGT_U32;
    wgt_wgpu_elementwise_spec spec = {"where", expr, 3, {cond->dtype, vt, vt}, vt};
    const wgt_operand *in[3] = {cond, a, b};
    return wgt_wgpu_elementwise(be, &spec, out, in, NULL);
}
