/*
 * f32 division and square root in WGSL to about half an ulp, whatever the driver's builtins
 * give. WGSL holds x / y only to 2.5 ulp and sqrt to what its defining formula inherits, and
 * drivers use that room: NVIDIA's Vulkan driver computes x / y as x * (1 / y) with an
 * approximate reciprocal and sqrt from an approximate inverse square root, about 2 ulp each,
 * which put asin, atan, acosh and log10 past their documented bounds there (lavapipe's
 * division is not correctly rounded either). The functions built on these (math2.c) need the
 * quotient or root itself to be right, so each takes the builtin's result q and corrects it
 * once by its exact residual: a - q b (or x - s^2) is computed from products of 12-bit
 * halves, which are exact in f32, and the first difference is exact by Sterbenz's lemma, as
 * long as the builtin is within 2^-11 relative. The halves are split on the bits, not by
 * Veltkamp's (2^12 + 1) v trick: Mesa's compiler folds (c - (c - v)) to v, and masks it
 * cannot fold. The correction's own division may be as loose as the driver likes: it only
 * moves the result by a fraction of an ulp.
 *
 * Range: operands and results within about 2^-90 .. 2^100 in magnitude, so that the residual
 * (2^-24 of the operands) is neither flushed by a GPU that flushes subnormals nor overflows;
 * callers handle tiny, huge and special arguments before calling.
 */
#include "webgpu_internal.h"

const wgt_wgsl_piece wgt_wgsl_quotient = {
    /* v's top 12 significant bits; v - wgt_hi12(v) is exact and has at most 12. */
    "fn wgt_hi12(v: f32) -> f32 { return bitcast<f32>(bitcast<u32>(v) & 0xfffff000u); }\n"
    "fn wgt_div(a: f32, b: f32) -> f32 {\n"
    "    let q = a / b;\n"
    "    if ((bitcast<u32>(q) & 0x7f800000u) == 0x7f800000u) { return q; }\n" /* inf or NaN: nothing to correct */
    "    let qh = wgt_hi12(q); let ql = q - qh;\n"
    "    let bh = wgt_hi12(b); let bl = b - bh;\n"
    "    let r = (((a - qh * bh) - qh * bl) - ql * bh) - ql * bl;\n"
    "    return q + r / b;\n"
    "}\n"
    /* f / (2 + f) as hi + lo, |f| <= 1.5: the sum 2 + f may round, so the residual is taken
     * from f and 2 apart, f - q (2 + f) = (f - 2q) - q f, whose first difference is exact
     * (2q is within a factor 2 of f) and q f comes as exact products of halves. */
    "fn wgt_div_2_plus(f: f32) -> vec2<f32> {\n"
    "    let d = 2.0 + f;\n"
    "    let q = f / d;\n"
    "    let qh = wgt_hi12(q); let ql = q - qh;\n"
    "    let fh = wgt_hi12(f); let fl = f - fh;\n"
    "    let r = (((f - 2.0 * q) - qh * fh) - (qh * fl + ql * fh)) - ql * fl;\n"
    "    return vec2<f32>(q, r / d);\n"
    "}\n"
    /* For x >= 0; a zero gives itself (the correction would be 0 / 0). */
    "fn wgt_sqrt(x: f32) -> f32 {\n"
    "    let s = sqrt(x);\n"
    "    let sh = wgt_hi12(s); let sl = s - sh;\n"
    "    let r = ((x - sh * sh) - 2.0 * sh * sl) - sl * sl;\n"
    "    return select(s + r / (s + s), s, s == 0.0);\n"
    "}\n",
    {NULL}};
