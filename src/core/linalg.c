/*
 * Linear algebra: matmul with numpy.matmul's rules, and linear (x @ w^T + bias) built on it.
 * matmul validates the operands, promotes 1-D operands to matrices by a view with a length-1
 * dimension of stride 0 (a to [1, K], b to [K, 1]), broadcasts the batch dimensions (stride 0
 * where repeated) and hands the backend one shape for all three operands: out [batch..., M, N]
 * = a [batch..., M, K] @ b [batch..., K, N]. Views (transposed, sliced, broadcast) reach the
 * backend as they are, so nothing is copied here. The dimensions added for 1-D operands are
 * left out of the result's shape; since they have length 1 the contiguous output is the same
 * memory either way.
 *
 * wgt_matmul also takes the integer types, of one type or two (promoted by the array API's
 * table, as the binary ops do): products and sums wrap modulo 2^bits as NumPy's do. The
 * backends multiply i32, u32, i64 and u64; the narrow integers are computed in i32, whose
 * wrapping sums keep the low bits exactly, and cast back, the cast keeping the low bits.
 */
#include <stdio.h>
#include <string.h>

#include "core/dtype_table.h"
#include "node.h"
#include "quant/quant.h"

static int is_float(wgt_dtype d) { return d == WGT_F32 || d == WGT_F16; }

wgt_status wgt_product_type(const char *fn, const char *name_a, wgt_dtype a, const char *name_b, wgt_dtype b,
                            wgt_dtype *out) {
    const char *bad = !is_float(a) && !wgt_dtype_is_integer(a)   ? name_a
                      : !is_float(b) && !wgt_dtype_is_integer(b) ? name_b
                                                                 : NULL;
    if (bad)
        return wgt_error(WGT_ERR_DTYPE, "%s: takes f32, f16 and the integer types (i8, u8, i16, u16, i32, u32, i64, u64), "
                         "but %s is %s", fn, bad, wgt_dtype_name(bad == name_a ? a : b));
    const char *why;
    if (is_float(a) && is_float(b) && a != b)
        return wgt_error(WGT_ERR_DTYPE, "%s: operand types differ (%s is %s, %s is %s); cast one first", fn, name_a,
                         wgt_dtype_name(a), name_b, wgt_dtype_name(b));
    if (!wgt_dtype_promote(a, b, out, &why))
        return wgt_error(WGT_ERR_DTYPE, "%s: operand types differ (%s is %s, %s is %s) and do not promote: %s; cast one "
                         "first", fn, name_a, wgt_dtype_name(a), name_b, wgt_dtype_name(b), why);
    return WGT_OK;
}

static wgt_tensor *matmul_impl(const char *fn, wgt_tensor *a, wgt_tensor *b);

/* a @ b computed in the backends' integer type that holds `common` (i32 for the narrow
 * integers) and cast back to it; a and b are checked integer operands. */
static wgt_tensor *matmul_widened(const char *fn, wgt_tensor *a, wgt_tensor *b, wgt_dtype common) {
    wgt_dtype wide = wgt_narrow_wide_type(common);
    wgt_tensor *wa = a->dtype == wide ? wgt_retain(a) : wgt_cast(a, wide);
    wgt_tensor *wb = !wa ? NULL : b->dtype == wide ? wgt_retain(b) : wgt_cast(b, wide);
    wgt_tensor *out = wa && wb ? matmul_impl(fn, wa, wb) : NULL;
    wgt_release(wa);
    wgt_release(wb);
    return wgt_narrow_cast_to(out, common);
}

/* The shared path of wgt_matmul and wgt_linear; fn names the public function in messages. */
static wgt_tensor *matmul_impl(const char *fn, wgt_tensor *a, wgt_tensor *b) {
    if (wgt_check_tensor(fn, "a", a) != WGT_OK || wgt_check_tensor(fn, "b", b) != WGT_OK ||
        wgt_check_same_context(fn, a, b) != WGT_OK)
        return NULL;
    char sa[256], sb[256];
    wgt_format_shape(sa, sizeof sa, a->ndim, a->shape);
    wgt_format_shape(sb, sizeof sb, b->ndim, b->shape);
    wgt_dtype common;
    if (wgt_product_type(fn, "a", a->dtype, "b", b->dtype, &common) != WGT_OK) return NULL;
    if (a->dtype != b->dtype || wgt_narrow_wide_type(common) != common) return matmul_widened(fn, a, b, common);
    if (a->ndim == 0 || b->ndim == 0) {
        wgt_error(WGT_ERR_SHAPE, "%s: operands need rank 1 or more, but %s is rank 0 (a is %s, b is %s)", fn,
                  a->ndim == 0 ? "a" : "b", sa, sb);
        return NULL;
    }

    /* The matrix dimensions, with 1-D operands promoted: a [K] is [1, K], b [K] is [K, 1]. */
    int na = a->ndim, nb = b->ndim;
    int64_t M = na == 1 ? 1 : a->shape[na - 2], K = a->shape[na - 1];
    int64_t a_sm = na == 1 ? 0 : a->strides[na - 2], a_sk = a->strides[na - 1];
    int64_t Kb = nb == 1 ? b->shape[0] : b->shape[nb - 2], N = nb == 1 ? 1 : b->shape[nb - 1];
    int64_t b_sk = nb == 1 ? b->strides[0] : b->strides[nb - 2], b_sn = nb == 1 ? 0 : b->strides[nb - 1];
    if (K != Kb) {
        wgt_error(WGT_ERR_SHAPE, "%s: inner dimensions differ: a %s has K = %lld (its last dimension), b %s has K = %lld (its %s dimension)",
                  fn, sa, (long long)K, sb, (long long)Kb, nb == 1 ? "only" : "second-to-last");
        return NULL;
    }

    /* Batch dimensions: NumPy broadcasting over everything before the two matrix dimensions. */
    int ba = na > 2 ? na - 2 : 0, bb = nb > 2 ? nb - 2 : 0, nbatch = ba > bb ? ba : bb;
    int64_t shape[WGT_MAX_DIMS], as[WGT_MAX_DIMS], bs[WGT_MAX_DIMS];
    for (int i = 0; i < nbatch; i++) {
        int ia = i - (nbatch - ba), ib = i - (nbatch - bb);
        int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
        if (da != db && da != 1 && db != 1) {
            wgt_error(WGT_ERR_SHAPE, "%s: batch dimensions of a %s and b %s do not broadcast (batch dimension %d: %lld vs %lld)",
                      fn, sa, sb, i, (long long)da, (long long)db);
            return NULL;
        }
        shape[i] = da == 1 ? db : da;
        as[i] = ia < 0 || (da == 1 && shape[i] != 1) ? 0 : a->strides[ia];
        bs[i] = ib < 0 || (db == 1 && shape[i] != 1) ? 0 : b->strides[ib];
    }
    int nd = nbatch + 2; /* at most WGT_MAX_DIMS: the batch comes from an operand of rank nd or more */

    /* The result drops the dimensions that promotion added. */
    int out_nd = 0;
    int64_t out_shape[WGT_MAX_DIMS];
    for (int i = 0; i < nbatch; i++) out_shape[out_nd++] = shape[i];
    if (na > 1) out_shape[out_nd++] = M;
    if (nb > 1) out_shape[out_nd++] = N;

    wgt_context *ctx = a->storage->ctx;
    wgt_tensor *out = wgt_tensor_new(ctx, fn, a->dtype, out_nd, out_shape, WGT_USAGE_DEFAULT);
    if (!out || wgt_tensor_numel(out) == 0) return out; /* nothing to compute (K = 0 is computed: zeros) */
    if (wgt_check_kernel_size(fn, out) != WGT_OK || wgt_check_kernel_size(fn, a) != WGT_OK ||
        wgt_check_kernel_size(fn, b) != WGT_OK)
        goto fail;
    if (!ctx->backend->matmul) {
        wgt_error(WGT_ERR_INTERNAL, "%s: the %s backend has no matmul kernel", fn, ctx->backend->name);
        goto fail;
    }

    shape[nd - 2] = M;
    shape[nd - 1] = K;
    as[nd - 2] = a_sm;
    as[nd - 1] = a_sk;
    wgt_operand oa, ob, oo;
    if (wgt_view_operand(a, nd, shape, as, &oa) != WGT_OK) goto fail;
    shape[nd - 2] = K;
    shape[nd - 1] = N;
    bs[nd - 2] = b_sk;
    bs[nd - 1] = b_sn;
    if (wgt_view_operand(b, nd, shape, bs, &ob) != WGT_OK || wgt_output_operand(out, &oo) != WGT_OK) goto fail;
    /* The output seen with the promoted dimensions: the same contiguous memory. */
    shape[nd - 2] = M;
    oo.ndim = nd;
    memcpy(oo.shape, shape, sizeof(int64_t) * (size_t)nd);
    wgt_contiguous_strides(nd, oo.shape, oo.strides);
    if (wgt_record_matmul(ctx, fn, &oo, &oa, &ob) != WGT_OK) goto fail;
    return out;
fail:
    wgt_release(out);
    return NULL;
}

wgt_tensor *wgt_matmul(wgt_tensor *a, wgt_tensor *b) { return matmul_impl("wgt_matmul", a, b); }

/* x @ w^T is a matmul with a transposed view of w (no copy: the backends read either
 * layout), and the bias is a broadcast add. A fused epilogue can replace the add later. */
wgt_status wgt_check_linear_shapes(const char *fn, const wgt_tensor *x, const wgt_tensor *w, const wgt_tensor *bias) {
    char sx[256], sw[256], sbias[256] = "";
    wgt_format_shape(sx, sizeof sx, x->ndim, x->shape);
    wgt_format_shape(sw, sizeof sw, w->ndim, w->shape);
    if (bias) wgt_format_shape(sbias, sizeof sbias, bias->ndim, bias->shape);
    if (w->ndim != 2)
        return wgt_error(WGT_ERR_SHAPE, "%s: w must be 2-D [out, in], but its shape is %s (x is %s)", fn, sw, sx);
    if (x->ndim == 0 || x->shape[x->ndim - 1] != w->shape[1])
        return wgt_error(WGT_ERR_SHAPE, "%s: x %s must end in the %lld input features of w %s ([out, in])", fn, sx,
                         (long long)w->shape[1], sw);
    if (bias && (bias->ndim != 1 || bias->shape[0] != w->shape[0]))
        return wgt_error(WGT_ERR_SHAPE, "%s: bias %s must be [%lld], the output features of w %s", fn, sbias,
                         (long long)w->shape[0], sw);
    return WGT_OK;
}

wgt_tensor *wgt_linear(wgt_tensor *x, wgt_tensor *w, wgt_tensor *bias) {
    static const char fn[] = "wgt_linear";
    if (wgt_check_tensor(fn, "x", x) != WGT_OK || wgt_check_tensor(fn, "w", w) != WGT_OK ||
        wgt_check_same_context(fn, x, w) != WGT_OK)
        return NULL;
    if (bias && (wgt_check_tensor(fn, "bias", bias) != WGT_OK || wgt_check_same_context(fn, x, bias) != WGT_OK))
        return NULL;
    /* Checked here, before the matmul, so the messages speak of x, w and bias. A quantized w
     * takes x of its own type (docs/quant.md); the bias has x's type either way. */
    int quantized = wgt_dtype_is_block(w->dtype);
    if ((!quantized && x->dtype != w->dtype) || (bias && bias->dtype != x->dtype)) {
        wgt_error(WGT_ERR_DTYPE, "%s: operand types differ (x is %s, w is %s%s%s); cast first", fn,
                  wgt_dtype_name(x->dtype), wgt_dtype_name(w->dtype), bias ? ", bias is " : "",
                  bias ? wgt_dtype_name(bias->dtype) : "");
        return NULL;
    }
    if (!quantized && !is_float(x->dtype)) {
        wgt_error(WGT_ERR_DTYPE, "%s: takes floating types (f32, f16), not %s", fn, wgt_dtype_name(x->dtype));
        return NULL;
    }
    if (wgt_check_linear_shapes(fn, x, w, bias) != WGT_OK) return NULL;
    if (quantized) {
        wgt_tensor *yq = wgt_quant_matmul(fn, x, w);
        if (!yq || !bias) return yq;
        wgt_tensor *rq = wgt_add(yq, bias);
        wgt_release(yq);
        return rq;
    }
    wgt_tensor *wt = wgt_transpose(w, 0, 1);
    if (!wt) return NULL;
    wgt_tensor *y = matmul_impl(fn, x, wt);
    wgt_release(wt);
    if (!y || !bias) return y;
    wgt_tensor *r = wgt_add(y, bias);
    wgt_release(y);
    return r;
}
