/*
 * Quantized block types (q8_0, q4_0) as ops: quantize, dequantize and the quantized matrix
 * product x @ w^T with w [N, K] quantized along K, plus the routing of wgt_cast and
 * wgt_linear to them. The backends see rows: every operand is viewed as [rows, K], the
 * leading dimensions merged (a float operand that cannot be merged is copied first; a block
 * operand whose leading dimensions do not merge is an error, since block types have no copy
 * kernel). Block layouts and rounding are in docs/quant.md.
 */
#include <stdio.h>
#include <string.h>

#include "core/node.h"
#include "quant.h"

/* Products with at least this many rows of x go through a dequantized weight (see below). */
#define WGT_QUANT_GEMM_ROWS 32

static int is_float(wgt_dtype d) { return d == WGT_F32 || d == WGT_F16; }

/* The leading dimensions of t as one: *rows and *row_stride (elements), or 0 when they do not
 * chain (a transposed or sliced view). Length-1 dimensions never break the chain. */
static int merged_rows(const wgt_tensor *t, int64_t *rows, int64_t *row_stride) {
    int64_t n = 1, stride = 0;
    int have = 0;
    for (int d = t->ndim - 2; d >= 0; d--) {
        if (t->shape[d] == 1) continue;
        if (have && t->strides[d] != stride * n) return 0;
        if (!have) stride = t->strides[d];
        have = 1;
        n *= t->shape[d];
    }
    if (!have) stride = t->ndim > 0 ? t->shape[t->ndim - 1] : 1;
    /* An empty tensor's strides may be anything; its operand is never used. */
    if (n == 0) stride = 0;
    *rows = n;
    *row_stride = stride;
    return 1;
}

/* t (rank >= 1) as a [rows, K] operand. Floats that do not merge are copied (*copy is then
 * the contiguous copy, which the caller releases after recording). */
static wgt_status rows_operand(const char *fn, const char *name, wgt_tensor *t, wgt_operand *op, wgt_tensor **copy) {
    int64_t rows, stride, K = t->shape[t->ndim - 1];
    *copy = NULL;
    if (!merged_rows(t, &rows, &stride)) {
        if (wgt_dtype_is_block(t->dtype)) {
            char s[256];
            wgt_format_shape(s, sizeof s, t->ndim, t->shape);
            return wgt_error(WGT_ERR_SHAPE, "%s: the leading dimensions of the %s view %s (%s) do not merge into rows; "
                             "block types are only read through such views", fn, wgt_dtype_name(t->dtype), s, name);
        }
        if (!(*copy = wgt_contiguous(t))) return wgt_last_status();
        t = *copy;
        rows = wgt_numel(t->ndim, t->shape) / (K ? K : 1);
        stride = K;
    }
    int64_t shape[2] = {rows, K}, strides[2] = {stride, t->strides[t->ndim - 1]};
    return wgt_view_operand(t, 2, shape, strides, op);
}

static wgt_tensor *rows_f32(const char *fn, wgt_tensor *q, wgt_tensor *out);

static wgt_status check_block_dtype(const char *fn, const char *what, wgt_dtype dtype) {
    if (wgt_dtype_is_block(dtype)) return WGT_OK;
    return wgt_error(WGT_ERR_DTYPE, "%s: %s must be a block type (q8_0 or q4_0), not %s", fn, what,
                     wgt_dtype_block_elements(dtype) ? wgt_dtype_name(dtype) : "an unknown type");
}

static wgt_status check_float(const char *fn, const char *what, wgt_dtype dtype) {
    if (is_float(dtype)) return WGT_OK;
    return wgt_error(WGT_ERR_DTYPE, "%s: %s must be f32 or f16, not %s", fn, what,
                     wgt_dtype_block_elements(dtype) ? wgt_dtype_name(dtype) : "an unknown type");
}

/* The reduced dimension K of a (last) must be a whole number of blocks. */
static wgt_status check_blocks(const char *fn, const char *name, const wgt_tensor *a, wgt_dtype block) {
    int64_t b = wgt_dtype_block_elements(block);
    if (a->ndim >= 1 && a->shape[a->ndim - 1] % b == 0) return WGT_OK;
    char s[256];
    wgt_format_shape(s, sizeof s, a->ndim, a->shape);
    return wgt_error(WGT_ERR_SHAPE, "%s: the last dimension of %s %s must be a multiple of %s's %lld-element blocks", fn,
                     name, s, wgt_dtype_name(block), (long long)b);
}

/* Output [rows, K] of out's type, contiguous, as the backends want it. */
static wgt_status rows_output(wgt_tensor *out, int64_t K, wgt_operand *op) {
    wgt_status st = wgt_output_operand(out, op);
    if (st != WGT_OK) return st;
    op->ndim = 2;
    op->shape[0] = K ? wgt_numel(out->ndim, out->shape) / K : 0;
    op->shape[1] = K;
    op->strides[0] = K;
    op->strides[1] = 1;
    return WGT_OK;
}

wgt_tensor *wgt_quant_quantize(const char *fn, wgt_tensor *a, wgt_dtype dtype) {
    if (wgt_check_tensor(fn, "a", a) != WGT_OK || check_block_dtype(fn, "the target type", dtype) != WGT_OK ||
        check_float(fn, "a", a->dtype) != WGT_OK || check_blocks(fn, "a", a, dtype) != WGT_OK)
        return NULL;
    wgt_context *ctx = a->storage->ctx;
    wgt_tensor *out = wgt_tensor_new(ctx, fn, dtype, a->ndim, a->shape, WGT_USAGE_DEFAULT);
    if (!out || wgt_tensor_numel(out) == 0) return out;
    wgt_tensor *copy = NULL;
    wgt_operand oi, oo;
    int64_t K = a->shape[a->ndim - 1];
    if (wgt_check_kernel_size(fn, a) != WGT_OK || rows_operand(fn, "a", a, &oi, &copy) != WGT_OK ||
        rows_output(out, K, &oo) != WGT_OK || wgt_record_quantize(ctx, fn, &oo, &oi) != WGT_OK) {
        wgt_release(copy);
        wgt_release(out);
        return NULL;
    }
    wgt_release(copy);
    return out;
}

wgt_tensor *wgt_quant_dequantize(const char *fn, wgt_tensor *q, wgt_dtype dtype) {
    if (wgt_check_tensor(fn, "q", q) != WGT_OK || check_block_dtype(fn, "q", q->dtype) != WGT_OK ||
        check_float(fn, "the target type", dtype) != WGT_OK)
        return NULL;
    wgt_context *ctx = q->storage->ctx;
    /* The kernels give f32; f16 is one rounding of it. */
    wgt_tensor *out = wgt_tensor_new(ctx, fn, WGT_F32, q->ndim, q->shape, WGT_USAGE_DEFAULT);
    if (!out) return NULL;
    if (wgt_tensor_numel(out) == 0 && dtype != WGT_F32) {
        wgt_release(out);
        return wgt_tensor_new(ctx, fn, dtype, q->ndim, q->shape, WGT_USAGE_DEFAULT);
    }
    out = rows_f32(fn, q, out);
    if (!out || dtype == WGT_F32) return out;
    wgt_tensor *h = wgt_cast(out, dtype);
    wgt_release(out);
    return h;
}

/* Records the dequantization of q into out (f32); returns out, or NULL (released). */
static wgt_tensor *rows_f32(const char *fn, wgt_tensor *q, wgt_tensor *out) {
    if (!out || wgt_tensor_numel(out) == 0) return out;
    wgt_context *ctx = q->storage->ctx;
    wgt_tensor *copy = NULL; /* stays NULL: block operands are never copied */
    wgt_operand oq, oo;
    if (wgt_check_kernel_size(fn, out) != WGT_OK || rows_operand(fn, "q", q, &oq, &copy) != WGT_OK ||
        rows_output(out, q->shape[q->ndim - 1], &oo) != WGT_OK ||
        wgt_record_dequantize(ctx, fn, &oo, &oq, NULL, 0, 0, NULL) != WGT_OK) {
        wgt_release(out);
        return NULL;
    }
    return out;
}

wgt_tensor *wgt_quantize(wgt_tensor *a, wgt_dtype dtype) { return wgt_quant_quantize("wgt_quantize", a, dtype); }

wgt_tensor *wgt_dequantize(wgt_tensor *q, wgt_dtype dtype) { return wgt_quant_dequantize("wgt_dequantize", q, dtype); }

wgt_tensor *wgt_quant_matmul(const char *fn, wgt_tensor *x, wgt_tensor *w) {
    if (wgt_check_tensor(fn, "x", x) != WGT_OK || wgt_check_tensor(fn, "w", w) != WGT_OK ||
        wgt_check_same_context(fn, x, w) != WGT_OK || check_float(fn, "x", x->dtype) != WGT_OK ||
        check_block_dtype(fn, "w", w->dtype) != WGT_OK)
        return NULL;
    if (wgt_check_linear_shapes(fn, x, w, NULL) != WGT_OK) return NULL;
    int64_t K = w->shape[1], rows = K ? wgt_numel(x->ndim, x->shape) / K : 0;
    if (rows >= WGT_QUANT_GEMM_ROWS) {
        /* Many rows (prefill): each weight is read once for all of them, so the product is
         * bound by arithmetic, not by the weight's bytes: the weight dequantized once into a
         * temporary of x's type feeds the tiled matrix product (and BLAS on the CPU). */
        wgt_tensor *wd = wgt_quant_dequantize(fn, w, x->dtype);
        wgt_tensor *y = wd ? wgt_linear(x, wd, NULL) : NULL;
        wgt_release(wd);
        return y;
    }
    if (x->dtype == WGT_F16) { /* the kernels take f32: f16 in and out is a cast each way */
        wgt_tensor *xf = wgt_cast(x, WGT_F32);
        wgt_tensor *yf = xf ? wgt_quant_matmul(fn, xf, w) : NULL;
        wgt_tensor *y = yf ? wgt_cast(yf, WGT_F16) : NULL;
        wgt_release(xf);
        wgt_release(yf);
        return y;
    }
    int64_t oshape[WGT_MAX_DIMS];
    memcpy(oshape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
    oshape[x->ndim - 1] = w->shape[0];
    wgt_context *ctx = x->storage->ctx;
    wgt_tensor *out = wgt_tensor_new(ctx, fn, x->dtype, x->ndim, oshape, WGT_USAGE_DEFAULT);
    if (!out || wgt_tensor_numel(out) == 0) return out;
    if (w->shape[1] == 0) { /* an empty sum: zeros */
        wgt_release(out);
        return wgt_zeros(ctx, x->dtype, x->ndim, oshape);
    }
    wgt_tensor *copy = NULL, *no_copy = NULL; /* block operands are never copied */
    wgt_operand ox, ow, oo;
    if (wgt_check_kernel_size(fn, out) != WGT_OK || rows_operand(fn, "x", x, &ox, &copy) != WGT_OK ||
        rows_operand(fn, "w", w, &ow, &no_copy) != WGT_OK || rows_output(out, w->shape[0], &oo) != WGT_OK ||
        wgt_record_matmul_quantized(ctx, fn, &oo, &ox, &ow, ctx->quant_int8) != WGT_OK) {
        wgt_release(copy);
        wgt_release(out);
        return NULL;
    }
    wgt_release(copy);
    return out;
}

wgt_tensor *wgt_matmul_quantized(wgt_tensor *x, wgt_tensor *w) { return wgt_quant_matmul("wgt_matmul_quantized", x, w); }
