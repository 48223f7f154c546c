/*
 * Elementwise ops: validate operands, broadcast them to a common shape, create the output
 * and hand the backend operands it can run on directly (strided and broadcast inputs are
 * read in place, never copied first).
 */
#include "tensor.h"

static const char *const binary_names[WGT_BINARY_COUNT] = {"wgt_add", "wgt_sub", "wgt_mul", "wgt_div"};

static wgt_tensor *run_binary(wgt_binary_op op, wgt_tensor *a, wgt_tensor *b) {
    const char *fn = binary_names[op];
    if (wgt_check_tensor(fn, "a", a) != WGT_OK || wgt_check_tensor(fn, "b", b) != WGT_OK ||
        wgt_check_same_context(fn, a, b) != WGT_OK)
        return NULL;
    if (a->dtype != b->dtype) {
        wgt_error(WGT_ERR_DTYPE, "%s: operand types differ (a is %s, b is %s); cast one first", fn,
                  wgt_dtype_name(a->dtype), wgt_dtype_name(b->dtype));
        return NULL;
    }
    int ndim;
    int64_t shape[WGT_MAX_DIMS], sa[WGT_MAX_DIMS], sb[WGT_MAX_DIMS];
    if (wgt_broadcast_shapes(fn, a->ndim, a->shape, b->ndim, b->shape, &ndim, shape) != WGT_OK) return NULL;
    wgt_context *ctx = a->storage->ctx;
    wgt_tensor *out = wgt_tensor_new(ctx, fn, a->dtype, ndim, shape, WGT_USAGE_DEFAULT);
    if (!out) return NULL;
    if (wgt_tensor_numel(out) == 0) return out;
    if (wgt_check_kernel_size(fn, out) != WGT_OK) goto fail;
    wgt_broadcast_strides(a, ndim, shape, sa);
    wgt_broadcast_strides(b, ndim, shape, sb);
    wgt_operand oa, ob, oo;
    if (wgt_make_operand(a, ndim, shape, sa, &oa) != WGT_OK || wgt_make_operand(b, ndim, shape, sb, &ob) != WGT_OK ||
        wgt_make_output_operand(out, &oo) != WGT_OK)
        goto fail;
    if (ctx->backend->binary(ctx->backend, op, &oo, &oa, &ob) != WGT_OK) goto fail;
    wgt_finish_output(out);
    return out;
fail:
    wgt_release(out);
    return NULL;
}

wgt_tensor *wgt_add(wgt_tensor *a, wgt_tensor *b) { return run_binary(WGT_BINARY_ADD, a, b); }
wgt_tensor *wgt_sub(wgt_tensor *a, wgt_tensor *b) { return run_binary(WGT_BINARY_SUB, a, b); }
wgt_tensor *wgt_mul(wgt_tensor *a, wgt_tensor *b) { return run_binary(WGT_BINARY_MUL, a, b); }
wgt_tensor *wgt_div(wgt_tensor *a, wgt_tensor *b) { return run_binary(WGT_BINARY_DIV, a, b); }

wgt_tensor *wgt_contiguous(wgt_tensor *t) {
    static const char fn[] = "wgt_contiguous";
    if (wgt_check_tensor(fn, "tensor", t) != WGT_OK) return NULL;
    wgt_context *ctx = t->storage->ctx;
    wgt_tensor *out = wgt_tensor_new(ctx, fn, t->dtype, t->ndim, t->shape, t->usage);
    if (!out) return NULL;
    if (wgt_tensor_numel(out) == 0) return out;
    wgt_operand src, dst;
    if (wgt_check_kernel_size(fn, out) != WGT_OK || wgt_make_operand(t, t->ndim, t->shape, t->strides, &src) != WGT_OK ||
        wgt_make_output_operand(out, &dst) != WGT_OK || ctx->backend->copy(ctx->backend, &dst, &src) != WGT_OK) {
        wgt_release(out);
        return NULL;
    }
    wgt_finish_output(out);
    return out;
}
