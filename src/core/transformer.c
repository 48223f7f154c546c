/*
 * Transformer pieces: rotary position embedding and scaled dot-product attention. Rope is
 * composed from the library's ops, which keeps it exactly as right as they are on every
 * backend. Attention runs as one backend kernel where the backend has one for the dtype and
 * head dimensions (never materialising the [Lq, Lk] scores) and expects it to be the faster
 * way, and is composed from matmul, where and softmax elsewhere, with the same semantics.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "indexing.h"
#include "transformer.h"

/* Releases a list of intermediate tensors (NULL entries are fine). */
static void release_all(wgt_tensor **ts, int n) {
    for (int i = 0; i < n; i++) wgt_release(ts[i]);
}

static int is_float(wgt_dtype d) { return d == WGT_F32 || d == WGT_F16; }

wgt_tensor *wgt_attention_scores(wgt_tensor *q, wgt_tensor *k, double scale) {
    int half = q->dtype == WGT_F16;
    wgt_tensor *kt = wgt_transpose(k, -1, -2), *qs = half ? wgt_mul_scalar(q, scale) : wgt_retain(q);
    wgt_tensor *s = kt && qs ? wgt_matmul(qs, kt) : NULL;
    wgt_release(kt), wgt_release(qs);
    if (half || !s) return s;
    wgt_tensor *scaled = wgt_mul_scalar(s, scale);
    wgt_release(s);
    return scaled;
}

/* Elements of x up to which rope computes its angles at x's shape (see wgt_rope). */
#define ROPE_ANGLES_AT_X 65536

/* base^(-2i/d) for i < half, each computed in double and rounded once (malloc'd; NULL with
 * the error set). */
static float *rope_frequencies(int64_t half, double base) {
    float *f = malloc(sizeof(float) * (size_t)half);
    if (!f) {
        wgt_error(WGT_ERR_OUT_OF_MEMORY, "wgt_rope: no host memory for %lld frequencies", (long long)half);
        return NULL;
    }
    for (int64_t i = 0; i < half; i++) f[i] = (float)exp(-(double)i * log(base) / (double)half);
    return f;
}

/* Angles positions[p] * base^(-2i/d), in f32, at [seq, 1, d/2], or at x's shape split as
 * [..., seq, 2, d/2] (ndim, shape) when given. The frequencies are computed on the host (in
 * double, rounded once) and uploaded: as device ops they would be recomputed by every dispatch
 * of a compiled graph that ropes. */
static wgt_tensor *rope_angles(wgt_context *ctx, wgt_tensor *positions, int64_t seq, int64_t half, double base,
                               int ndim, const int64_t *at) {
    float *f = rope_frequencies(half, base);
    if (!f) return NULL;
    /* The positions are cast at the angles' shape (a broadcast view), so the cast reads its
     * input whole and the product and the cos and sin after it join one fused kernel. */
    wgt_tensor *t[4] = {0};
    int64_t col[WGT_MAX_DIMS], shape[WGT_MAX_DIMS] = {seq, 1, half};
    int n = at ? ndim : 3;
    if (at) memcpy(shape, at, sizeof(int64_t) * (size_t)ndim);
    for (int i = 0; i < n; i++) col[i] = 1;
    col[n - 3] = seq;
    t[0] = positions ? wgt_retain(positions) : wgt_arange(ctx, WGT_F32, 0, (double)seq, 1);
    t[1] = wgt_reshape(t[0], n, col);
    t[2] = wgt_broadcast_to(t[1], n, shape);
    t[3] = wgt_tensor_from_data(ctx, WGT_F32, 1, &half, f, sizeof(float) * (size_t)half, WGT_USAGE_DEFAULT);
    free(f);
    wgt_tensor *pf = t[2] && t[2]->dtype != WGT_F32 ? wgt_cast(t[2], WGT_F32) : wgt_retain(t[2]);
    wgt_tensor *angles = wgt_mul(pf, t[3]); /* at shape */
    wgt_release(pf);
    release_all(t, 4);
    return angles;
}

/* x's batch axes (all but the last two) as one, when their strides allow it: 1 with *count
 * and *stride set, else 0. */
static int merged_batch(const wgt_tensor *x, int64_t *count, int64_t *stride) {
    int64_t n = 1, s = 0, next = 0; /* next: the stride the axis before the last kept one needs */
    int kept = 0;
    for (int d = x->ndim - 3; d >= 0; d--) {
        if (x->shape[d] == 1) continue;
        if (kept && x->strides[d] != next) return 0;
        if (!kept) s = x->strides[d];
        kept = 1;
        n *= x->shape[d];
        next = x->strides[d] * x->shape[d];
    }
    *count = n, *stride = s;
    return 1;
}

/* The backend's one-kernel rope (backend.h) for f32 x, or f16 x with d a multiple of 4, its
 * batch axes merged; NULL with *declined set where it does not apply (the composition runs),
 * else NULL on an error. */
static wgt_tensor *rope_kernel(const char *fn, wgt_tensor *x, wgt_tensor *positions, double base, int *declined) {
    wgt_context *ctx = x->storage->ctx;
    int64_t batch, batch_stride, seq = x->shape[x->ndim - 2], d = x->shape[x->ndim - 1];
    int typed = x->dtype == WGT_F32 || (x->dtype == WGT_F16 && d % 4 == 0);
    *declined = !ctx->backend->rope || !typed || (positions && positions->dtype != WGT_I32) ||
                !merged_batch(x, &batch, &batch_stride) ||
                x->storage->nbytes / wgt_dtype_size(x->dtype) > 0x7fffffff ||
                (positions && positions->storage->nbytes / 4 > 0x7fffffff); /* the kernel's i32 indexing */
    if (*declined) return NULL;
    int64_t half = d / 2, shape3[3] = {batch, seq, d}, strides3[3] = {batch_stride, x->strides[x->ndim - 2],
                                                                       x->strides[x->ndim - 1]};
    float *f = rope_frequencies(half, base);
    wgt_tensor *freqs = f ? wgt_tensor_from_data(ctx, WGT_F32, 1, &half, f, sizeof(float) * (size_t)half,
                                                 WGT_USAGE_DEFAULT)
                          : NULL;
    free(f);
    wgt_tensor *out = freqs ? wgt_tensor_new(ctx, fn, x->dtype, x->ndim, x->shape, WGT_USAGE_DEFAULT) : NULL;
    if (out) {
        wgt_operand ox, op, of, oo;
        int64_t ostrides[3] = {seq * d, d, 1};
        wgt_view_operand(x, 3, shape3, strides3, &ox);
        if (positions) wgt_view_operand(positions, 1, positions->shape, positions->strides, &op);
        wgt_view_operand(freqs, 1, &half, freqs->strides, &of);
        wgt_view_operand(out, 3, shape3, ostrides, &oo);
        if (wgt_record_rope(ctx, fn, &oo, &ox, positions ? &op : NULL, &of) != WGT_OK) {
            wgt_release(out);
            out = NULL;
        }
    }
    wgt_release(freqs);
    return out;
}

wgt_tensor *wgt_rope(wgt_tensor *x, wgt_tensor *positions, double base) {
    static const char fn[] = "wgt_rope";
    if (wgt_check_tensor(fn, "x", x) != WGT_OK) return NULL;
    if (positions && (wgt_check_index_tensor(fn, "positions", positions) != WGT_OK ||
                      wgt_check_same_context(fn, x, positions) != WGT_OK))
        return NULL;
    if (!is_float(x->dtype)) {
        wgt_error(WGT_ERR_DTYPE, "%s: x is %s; rope takes f32 or f16", fn, wgt_dtype_name(x->dtype));
        return NULL;
    }
    if (x->ndim < 2) {
        wgt_error(WGT_ERR_SHAPE, "%s: x has rank %d; rope needs [..., seq, d]", fn, x->ndim);
        return NULL;
    }
    int64_t seq = x->shape[x->ndim - 2], d = x->shape[x->ndim - 1];
    if (d % 2) {
        wgt_error(WGT_ERR_SHAPE, "%s: the last dimension of x is %lld; it must be even", fn, (long long)d);
        return NULL;
    }
    if (!(base > 0) || !isfinite(base)) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: base %g must be finite and positive", fn, base);
        return NULL;
    }
    if (positions) {
        if (positions->ndim != 1 || positions->shape[0] != seq) {
            char s[256];
            wgt_format_shape(s, sizeof s, positions->ndim, positions->shape);
            wgt_error(WGT_ERR_SHAPE, "%s: positions have shape %s; they must be [%lld], one per row of x", fn, s,
                      (long long)seq);
            return NULL;
        }
    }
    int64_t half = d / 2;
    if (half == 0 || seq == 0 || wgt_tensor_numel(x) == 0) return wgt_contiguous(x);
    wgt_context *ctx = x->storage->ctx;
    /* With x seen as [..., seq, 2, d/2], the pair (i, i + d/2) is a column of the last two
     * axes: out = x * cos + flip(x) * sin * sign, flip reversing the pair axis (a view) and
     * sign (-1, +1) giving the first of the pair -x2 sin and the second +x1 sin (exactly: a
     * sign change). Every term is a view or broadcast of x, the angles or a constant, so the
     * chain fuses into a kernel for the angles and one or two over x; concatenating halves
     * would cost a copy per half. */
    enum { ANG, COS_H, SIN_H, SIGN, COS, SIN, X4, XF, XC, RS, RSS, SUM, OUT_N };
    wgt_tensor *t[OUT_N] = {0};
    /* x's batch axes, kept (a view) while the split leaves room for them, else merged. */
    int64_t two[2] = {2, 1}, x4[WGT_MAX_DIMS];
    int nb = x->ndim < WGT_MAX_DIMS ? x->ndim - 2 : 1, nx = nb + 3;
    if (nb == x->ndim - 2)
        memcpy(x4, x->shape, sizeof(int64_t) * (size_t)nb);
    else
        x4[0] = wgt_tensor_numel(x) / (seq * d);
    x4[nb] = seq, x4[nb + 1] = 2, x4[nb + 2] = half;
    static const float sign_f32[2] = {-1, 1};
    static const uint16_t sign_f16[2] = {0xbc00, 0x3c00}; /* -1, +1 */
    int f16 = x->dtype == WGT_F16;
    /* The angles once per position and frequency, read by the rotation through a broadcast:
     * a kernel of their own. A small x (a decoding step's heads) takes them at its own shape
     * instead, each element computing its angle's cos and sin: the whole rope is then one
     * kernel, and a dispatch costs more there than the repeated arithmetic. */
    int at_x = wgt_tensor_numel(x) <= ROPE_ANGLES_AT_X;
    /* Where the backend has a rope kernel, that small x (f32, or f16 with d a multiple of 4)
     * runs through it instead: each pair's angle, cos and sin taken once, no strided read of
     * its partner (a decoding step of 24 layers 0.18 ms less GPU time on an H200 in f32,
     * BENCHMARKS.md). */
    if (at_x) {
        int declined = 0;
        wgt_tensor *out = rope_kernel(fn, x, positions, base, &declined);
        if (!declined) return out;
    }
    t[ANG] = rope_angles(ctx, positions, seq, half, base, nx, at_x ? x4 : NULL);
    t[COS_H] = wgt_cos(t[ANG]);
    t[SIN_H] = wgt_sin(t[ANG]);
    t[SIGN] = wgt_tensor_from_data(ctx, x->dtype, 2, two, f16 ? (const void *)sign_f16 : (const void *)sign_f32,
                                   f16 ? sizeof sign_f16 : sizeof sign_f32, WGT_USAGE_DEFAULT);
    /* The same type is no cast: wgt_cast would copy. */
    t[COS] = f16 ? wgt_cast(t[COS_H], x->dtype) : wgt_retain(t[COS_H]);
    t[SIN] = f16 ? wgt_cast(t[SIN_H], x->dtype) : wgt_retain(t[SIN_H]);
    t[X4] = wgt_reshape(x, nx, x4);
    t[XF] = t[X4] ? wgt_slice(t[X4], -2, 1, -3, -1) : NULL;
    t[XC] = wgt_mul(t[X4], t[COS]);
    t[RS] = wgt_mul(t[XF], t[SIN]);
    t[RSS] = wgt_mul(t[RS], t[SIGN]);
    t[SUM] = wgt_add(t[XC], t[RSS]);
    wgt_tensor *out = t[SUM] ? wgt_reshape(t[SUM], x->ndim, x->shape) : NULL;
    release_all(t, OUT_N);
    return out;
}

/* q, k or v seen at the broadcast batch shape followed by its own two matrix dimensions. */
static void batch_view(wgt_tensor *t, int nb, const int64_t *batch, wgt_operand *op) {
    int64_t shape[WGT_MAX_DIMS], strides[WGT_MAX_DIMS];
    memcpy(shape, batch, sizeof(int64_t) * (size_t)nb);
    shape[nb] = t->shape[t->ndim - 2];
    shape[nb + 1] = t->shape[t->ndim - 1];
    wgt_broadcast_strides(t, nb + 2, shape, strides);
    wgt_view_operand(t, nb + 2, shape, strides, op);
}

/* The backend's attention kernel over operands broadcast to the batch shape `shape` (whose
 * last two entries are already the result's [Lq, Dv]). */
static wgt_tensor *attention_kernel(const char *fn, wgt_tensor *q, wgt_tensor *k, wgt_tensor *v, wgt_tensor *count,
                                    int nb, const int64_t *shape, int causal, double scale) {
    wgt_context *ctx = q->storage->ctx;
    wgt_tensor *out = wgt_tensor_new(ctx, fn, q->dtype, nb + 2, shape, WGT_USAGE_DEFAULT);
    if (!out) return NULL;
    wgt_operand oq, ok, ov, oo, oc;
    if (count) wgt_view_operand(count, count->ndim, count->shape, count->strides, &oc);
    batch_view(q, nb, shape, &oq);
    batch_view(k, nb, shape, &ok);
    batch_view(v, nb, shape, &ov);
    wgt_output_operand(out, &oo);
    if (wgt_check_kernel_size(fn, out) != WGT_OK || wgt_check_kernel_size(fn, q) != WGT_OK ||
        wgt_check_kernel_size(fn, k) != WGT_OK || wgt_check_kernel_size(fn, v) != WGT_OK ||
        wgt_record_attention(ctx, fn, &oo, &oq, &ok, &ov, count ? &oc : NULL, causal, scale) != WGT_OK) {
        wgt_release(out);
        return NULL;
    }
    return out;
}

/* The checks wgt_attention and wgt_attention_prefix share: q, k and v of one float type
 * fitting [.., Lq, d], [.., Lk, d], [.., Lk, dv], and a scale (0 becomes 1/sqrt(d)). */
static wgt_status check_attention(const char *fn, wgt_tensor *q, wgt_tensor *k, wgt_tensor *v, double *scale) {
    wgt_status st;
    if ((st = wgt_check_tensor(fn, "q", q)) != WGT_OK || (st = wgt_check_tensor(fn, "k", k)) != WGT_OK ||
        (st = wgt_check_tensor(fn, "v", v)) != WGT_OK || (st = wgt_check_same_context(fn, q, k)) != WGT_OK ||
        (st = wgt_check_same_context(fn, q, v)) != WGT_OK)
        return st;
    if (!is_float(q->dtype) || k->dtype != q->dtype || v->dtype != q->dtype)
        return wgt_error(WGT_ERR_DTYPE, "%s: q, k and v are %s, %s and %s; they must share one floating type", fn,
                         wgt_dtype_name(q->dtype), wgt_dtype_name(k->dtype), wgt_dtype_name(v->dtype));
    if (q->ndim < 2 || k->ndim < 2 || v->ndim < 2)
        return wgt_error(WGT_ERR_SHAPE, "%s: q, k and v need rank 2 or more (have %d, %d, %d)", fn, q->ndim, k->ndim,
                         v->ndim);
    int64_t d = q->shape[q->ndim - 1], lk = k->shape[k->ndim - 2];
    if (k->shape[k->ndim - 1] != d || v->shape[v->ndim - 2] != lk) {
        char s1[256], s2[256], s3[256];
        wgt_format_shape(s1, sizeof s1, q->ndim, q->shape);
        wgt_format_shape(s2, sizeof s2, k->ndim, k->shape);
        wgt_format_shape(s3, sizeof s3, v->ndim, v->shape);
        return wgt_error(WGT_ERR_SHAPE, "%s: q %s, k %s and v %s do not fit [.., Lq, d], [.., Lk, d], [.., Lk, dv]", fn,
                         s1, s2, s3);
    }
    if (!isfinite(*scale) || *scale < 0)
        return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: scale %g must be finite and not negative (0 means 1/sqrt(d))",
                         fn, *scale);
    if (*scale == 0) *scale = d > 0 ? 1.0 / sqrt((double)d) : 1.0;
    return WGT_OK;
}

/* The result's shape: the batch dimensions broadcast, then [Lq, dv]; *nb the batch rank.
 * Batch dimensions that do not broadcast, and a result with no elements, are settled before
 * the scores: those are [batch..., Lq, Lk] however small (or impossible) the result is.
 * -1 on failure; 1 with *empty the (empty) result; 0 when there is work. */
static int attention_shape(const char *fn, wgt_tensor *q, wgt_tensor *k, wgt_tensor *v, int *nb, int64_t *shape,
                           wgt_tensor **empty) {
    int nqk = 0;
    int64_t qk[WGT_MAX_DIMS];
    *empty = NULL;
    if (wgt_broadcast_shapes(fn, q->ndim - 2, q->shape, k->ndim - 2, k->shape, &nqk, qk) != WGT_OK ||
        wgt_broadcast_shapes(fn, nqk, qk, v->ndim - 2, v->shape, nb, shape) != WGT_OK)
        return -1;
    shape[*nb] = q->shape[q->ndim - 2];
    shape[*nb + 1] = v->shape[v->ndim - 1];
    if (wgt_numel(*nb + 2, shape)) return 0;
    *empty = wgt_tensor_new(q->storage->ctx, fn, q->dtype, *nb + 2, shape, WGT_USAGE_DEFAULT);
    return 1;
}

/* Whether the backend's kernel takes the problem (the context not forcing the composition):
 * it needs keys (without any the composition's result, an empty sum: zeros, stands). */
static int kernel_takes(wgt_context *ctx, wgt_dtype dtype, int64_t d, int64_t dv, int64_t lk) {
    wgt_backend *be = ctx->backend;
    return ctx->attention != WGT_ATTENTION_COMPOSE && be->attention && lk > 0 &&
           (!be->attention_fits || be->attention_fits(be, dtype, d, dv));
}

wgt_tensor *wgt_attention(wgt_tensor *q, wgt_tensor *k, wgt_tensor *v, int causal, double scale) {
    static const char fn[] = "wgt_attention";
    if (check_attention(fn, q, k, v, &scale) != WGT_OK) return NULL;
    int64_t lq = q->shape[q->ndim - 2], d = q->shape[q->ndim - 1], lk = k->shape[k->ndim - 2];
    wgt_context *ctx = q->storage->ctx;
    int nb = 0;
    int64_t shape[WGT_MAX_DIMS];
    wgt_tensor *empty;
    if (attention_shape(fn, q, k, v, &nb, shape, &empty)) return empty;
    wgt_backend *be = ctx->backend;
    uint64_t batch = (uint64_t)wgt_numel(nb, shape);
    int kernel = kernel_takes(ctx, q->dtype, d, shape[nb + 1], lk) &&
                 (ctx->attention == WGT_ATTENTION_KERNEL || !be->attention_pays ||
                  be->attention_pays(be, q->dtype, batch, lq, lk, causal != 0));
    if (kernel) return attention_kernel(fn, q, k, v, NULL, nb, shape, causal != 0, scale);
    enum { SCALED, ONES, KEEP, NEG_INF, MASKED, PROBS, N_TMP };
    wgt_tensor *t[N_TMP] = {0};
    t[SCALED] = wgt_attention_scores(q, k, scale);
    wgt_tensor *logits = t[SCALED];
    /* Empty scores need no mask, which would be [Lq, Lk] however empty the batch is. */
    if (causal && logits && wgt_tensor_numel(logits) > 0) {
        /* Query i sees keys j <= i + (Lk - Lq): queries are the last Lq positions of the keys. */
        int64_t mask_shape[2] = {lq, lk};
        t[ONES] = wgt_ones(ctx, WGT_U32, 2, mask_shape);
        t[KEEP] = wgt_tril(t[ONES], lk - lq);
        t[NEG_INF] = wgt_scalar(ctx, q->dtype, -INFINITY);
        t[MASKED] = wgt_where(t[KEEP], logits, t[NEG_INF]);
        logits = t[MASKED];
    }
    t[PROBS] = logits ? wgt_softmax(logits, -1) : NULL;
    wgt_tensor *out = t[PROBS] ? wgt_matmul(t[PROBS], v) : NULL;
    release_all(t, N_TMP);
    return out;
}

wgt_tensor *wgt_attention_prefix(wgt_tensor *q, wgt_tensor *k, wgt_tensor *v, wgt_tensor *count, double scale) {
    static const char fn[] = "wgt_attention_prefix";
    if (check_attention(fn, q, k, v, &scale) != WGT_OK || wgt_check_tensor(fn, "count", count) != WGT_OK ||
        wgt_check_same_context(fn, q, count) != WGT_OK)
        return NULL;
    if (count->dtype != WGT_I32 && count->dtype != WGT_U32) {
        wgt_error(WGT_ERR_DTYPE, "%s: count is %s; it must be i32 or u32", fn, wgt_dtype_name(count->dtype));
        return NULL;
    }
    if (wgt_tensor_numel(count) != 1) {
        char s[256];
        wgt_format_shape(s, sizeof s, count->ndim, count->shape);
        wgt_error(WGT_ERR_SHAPE, "%s: count has shape %s; it must hold one element", fn, s);
        return NULL;
    }
    int64_t d = q->shape[q->ndim - 1], lk = k->shape[k->ndim - 2];
    wgt_context *ctx = q->storage->ctx;
    int nb = 0;
    int64_t shape[WGT_MAX_DIMS];
    wgt_tensor *empty;
    if (attention_shape(fn, q, k, v, &nb, shape, &empty)) return empty;
    /* Decoding's shape (a few queries a head over a cache) is where one launch beats the
     * composition's seven, whatever the kernel's occupancy: attention_pays is not asked. */
    if (kernel_takes(ctx, q->dtype, d, shape[nb + 1], lk)) return attention_kernel(fn, q, k, v, count, nb, shape, 0, scale);
    /* Keys j >= count: their scores -inf, their rows of v zeros (never read by the kernel, so
     * a NaN there must not reach the result through a zero probability either). */
    enum { KEYS, CNT, PAST, PAST_COL, SCALED, NEG_INF, MASKED, PROBS, ZERO, VZ, N_TMP };
    wgt_tensor *t[N_TMP] = {0};
    int64_t one = 1, col[2] = {lk, 1};
    t[KEYS] = wgt_arange(ctx, count->dtype, 0, (double)lk, 1);
    t[CNT] = wgt_reshape(count, 1, &one);
    t[PAST] = wgt_ge(t[KEYS], t[CNT]);
    t[PAST_COL] = wgt_reshape(t[PAST], 2, col);
    t[SCALED] = wgt_attention_scores(q, k, scale);
    t[NEG_INF] = wgt_scalar(ctx, q->dtype, -INFINITY);
    t[MASKED] = wgt_where(t[PAST], t[NEG_INF], t[SCALED]);
    t[PROBS] = wgt_softmax(t[MASKED], -1);
    t[ZERO] = wgt_scalar(ctx, q->dtype, 0);
    t[VZ] = wgt_where(t[PAST_COL], t[ZERO], v);
    wgt_tensor *out = t[PROBS] && t[VZ] ? wgt_matmul(t[PROBS], t[VZ]) : NULL;
    release_all(t, N_TMP);
    return out;
}
