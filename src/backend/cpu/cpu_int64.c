/*
 * Sums, products and running sums of i64 and u64 on the CPU backend: arithmetic on uint64_t,
 * which wraps modulo 2^64 exactly as two's complement i64 does, so both types share it. The
 * order is the elements' own, as the WebGPU kernel's (the results are exact either way).
 */
#include "cpu_kernels.h"

/* The dimensions [first, ndim) of in walked in row-major order from `at`, each element
 * folded into acc (sum or product); with scan, the running value stored at out[o], o += step. */
static uint64_t fold(const wgt_operand *in, int first, int64_t at, int prod, uint64_t *out, int64_t o, int64_t step) {
    int64_t count = 1, index[WGT_MAX_DIMS] = {0};
    for (int d = first; d < in->ndim; d++) count *= in->shape[d];
    const uint64_t *x = in->host;
    uint64_t acc = prod ? 1 : 0;
    for (int64_t k = 0; k < count; k++) {
        acc = prod ? acc * x[at] : acc + x[at];
        if (out) out[o + k * step] = acc;
        for (int d = in->ndim - 1; d >= first; d--) {
            at += in->strides[d];
            if (++index[d] < in->shape[d]) break;
            at -= in->strides[d] * in->shape[d];
            index[d] = 0;
        }
    }
    return acc;
}

/* Storage index of the first element of output o, whose coordinates are those of the first
 * `keep` dimensions (row-major). */
static int64_t start_of(const wgt_operand *in, int keep, int64_t o) {
    int64_t at = in->offset;
    for (int d = keep - 1; d >= 0; d--) {
        at += (o % in->shape[d]) * in->strides[d];
        o /= in->shape[d];
    }
    return at;
}

wgt_status wgt_cpu_reduce64(const wgt_operand *out, wgt_reduce_op op, const wgt_operand *in, int reduce_ndim) {
    if (op != WGT_REDUCE_SUM && op != WGT_REDUCE_PROD)
        return wgt_error(WGT_ERR_INTERNAL, "reduce op %d of %s", (int)op, wgt_dtype_name(in->dtype));
    int keep = in->ndim - reduce_ndim;
    int64_t outputs = 1;
    for (int d = 0; d < keep; d++) outputs *= in->shape[d];
    uint64_t *o = (uint64_t *)out->host + out->offset;
    for (int64_t k = 0; k < outputs; k++) o[k] = fold(in, keep, start_of(in, keep, k), op == WGT_REDUCE_PROD, NULL, 0, 0);
    return WGT_OK;
}

wgt_status wgt_cpu_cumsum64(const wgt_operand *out, const wgt_operand *in, int axis) {
    /* The axis moved last: every other dimension names a row. */
    wgt_operand moved = *in, out_moved = *out;
    for (int d = 0, k = 0; d < in->ndim; d++) {
        if (d == axis) continue;
        moved.shape[k] = out_moved.shape[k] = in->shape[d], moved.strides[k] = in->strides[d];
        out_moved.strides[k] = out->strides[d];
        k++;
    }
    int last = in->ndim - 1;
    moved.shape[last] = in->shape[axis], moved.strides[last] = in->strides[axis];
    int64_t rows = 1;
    for (int d = 0; d < last; d++) rows *= moved.shape[d];
    for (int64_t r = 0; r < rows; r++)
        fold(&moved, last, start_of(&moved, last, r), 0, out->host, start_of(&out_moved, last, r), out->strides[axis]);
    return WGT_OK;
}

/* ---- elementwise ---- */

static int less(uint64_t a, uint64_t b, int is_signed) { return is_signed ? (int64_t)a < (int64_t)b : a < b; }

/* The 64-bit result of op on a and b (neg, abs and bitwise_not take a alone: unary is set). */
static uint64_t value64(int op, int unary, uint64_t a, uint64_t b, int s) {
    if (unary) return op == WGT_UNARY_NEG ? 0 - a : op == WGT_UNARY_ABS ? (s && (int64_t)a < 0 ? 0 - a : a) : ~a;
    switch (op) {
    case WGT_BINARY_ADD: return a + b;
    case WGT_BINARY_SUB: return a - b;
    case WGT_BINARY_MUL: return a * b;
    case WGT_BINARY_MAXIMUM: return less(a, b, s) ? b : a;
    case WGT_BINARY_MINIMUM: return less(b, a, s) ? b : a;
    case WGT_BINARY_BITWISE_AND: return a & b;
    case WGT_BINARY_BITWISE_OR: return a | b;
    case WGT_BINARY_BITWISE_XOR: return a ^ b;
    case WGT_BINARY_EQ: return a == b;
    case WGT_BINARY_NE: return a != b;
    case WGT_BINARY_LT: return less(a, b, s);
    case WGT_BINARY_LE: return !less(b, a, s);
    case WGT_BINARY_GT: return less(b, a, s);
    default: return !less(a, b, s); /* GE */
    }
}

static wgt_status elementwise64(int op, int unary, const wgt_operand *out, const wgt_operand *a,
                                const wgt_operand *b) {
    static const wgt_binary_op taken[] = {WGT_BINARY_ADD, WGT_BINARY_SUB, WGT_BINARY_MUL, WGT_BINARY_MAXIMUM,
                                          WGT_BINARY_MINIMUM, WGT_BINARY_EQ, WGT_BINARY_NE, WGT_BINARY_LT,
                                          WGT_BINARY_LE, WGT_BINARY_GT, WGT_BINARY_GE, WGT_BINARY_BITWISE_AND,
                                          WGT_BINARY_BITWISE_OR, WGT_BINARY_BITWISE_XOR};
    int known = unary;
    for (size_t k = 0; k < sizeof taken / sizeof taken[0]; k++) known |= op == (int)taken[k];
    if (!known) return wgt_error(WGT_ERR_INTERNAL, "binary op %d of %s", op, wgt_dtype_name(a->dtype));
    int64_t n = 1, index[WGT_MAX_DIMS] = {0}, ia = a->offset, ib = b->offset;
    for (int d = 0; d < out->ndim; d++) n *= out->shape[d];
    const uint64_t *xa = a->host, *xb = b->host;
    size_t es = wgt_dtype_size(out->dtype);
    int s = a->dtype == WGT_I64;
    for (int64_t k = 0; k < n; k++) {
        uint64_t r = value64(op, unary, xa[ia], xb[ib], s);
        if (es == 8) ((uint64_t *)out->host)[out->offset + k] = r;
        else if (es == 4) ((uint32_t *)out->host)[out->offset + k] = (uint32_t)r;
        else ((uint8_t *)out->host)[out->offset + k] = (uint8_t)r;
        for (int d = out->ndim - 1; d >= 0; d--) {
            ia += a->strides[d], ib += b->strides[d];
            if (++index[d] < out->shape[d]) break;
            ia -= a->strides[d] * out->shape[d], ib -= b->strides[d] * out->shape[d];
            index[d] = 0;
        }
    }
    return WGT_OK;
}

wgt_status wgt_cpu_binary64(wgt_binary_op op, const wgt_operand *out, const wgt_operand *a, const wgt_operand *b) {
    return elementwise64((int)op, 0, out, a, b);
}

wgt_status wgt_cpu_unary64(wgt_unary_op op, const wgt_operand *out, const wgt_operand *a) {
    if (op != WGT_UNARY_NEG && op != WGT_UNARY_ABS && op != WGT_UNARY_BITWISE_NOT)
        return wgt_error(WGT_ERR_INTERNAL, "unary op %d of %s", (int)op, wgt_dtype_name(a->dtype));
    return elementwise64((int)op, 1, out, a, a);
}
