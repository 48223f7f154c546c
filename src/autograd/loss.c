/*
 * Cross-entropy from logits with integer targets. The forward takes log_softmax (one row
 * kernel) and gathers each row's target entry; the gradient, (softmax - one_hot) g / rows, is
 * one elementwise expression (the one-hot is a comparison of the class index with the target,
 * never stored), which fuses into one kernel.
 */
#include <stdlib.h>

#include "autograd.h"
#include "core/indexing.h"

static int is_float(wgt_dtype d) { return d == WGT_F32 || d == WGT_F16; }

wgt_tensor *wgt_cross_entropy(wgt_tensor *logits, wgt_tensor *targets) {
    static const char fn[] = "wgt_cross_entropy";
    if (wgt_check_tensor(fn, "logits", logits) != WGT_OK ||
        wgt_check_index_tensor(fn, "targets", targets) != WGT_OK ||
        wgt_check_same_context(fn, logits, targets) != WGT_OK)
        return NULL;
    if (!is_float(logits->dtype)) {
        wgt_error(WGT_ERR_DTYPE, "%s: logits are %s; they must be f32 or f16", fn, wgt_dtype_name(logits->dtype));
        return NULL;
    }
    int ok = logits->ndim >= 1 && targets->ndim == logits->ndim - 1;
    for (int d = 0; ok && d < targets->ndim; d++) ok = targets->shape[d] == logits->shape[d];
    int64_t classes = logits->ndim ? logits->shape[logits->ndim - 1] : 0, rows = wgt_tensor_numel(targets);
    if (!ok || classes < 1 || rows < 1) {
        char a[256], b[256];
        wgt_format_shape(a, sizeof a, logits->ndim, logits->shape);
        wgt_format_shape(b, sizeof b, targets->ndim, targets->shape);
        wgt_error(WGT_ERR_SHAPE, "%s: logits %s and targets %s; targets must be logits' shape without its last "
                  "dimension, with at least one row and one class", fn, a, b);
        return NULL;
    }
    if ((double)rows * (double)classes > 2147483647.0) {
        wgt_error(WGT_ERR_LIMIT, "%s: %lld rows of %lld classes are more than 2^31 - 1 entries", fn, (long long)rows,
                  (long long)classes);
        return NULL;
    }
    wgt_ag_arena a = {0}, *ar = &a;
    int64_t flat[2] = {rows * classes, 1}, one[1] = {rows};
    /* Entry rows[r] * classes + target[r] of the flattened log-probabilities. */
    /* i64 and u64 targets: checked against the classes and narrowed first, so a target past
     * 2^32 never wraps into range (index_types.c). */
    wgt_tensor *t = K(wgt_reshape(K(wgt_index_narrow(fn, targets, classes, "classes")), 1, one));
    if (t && t->dtype != WGT_I32) t = K(wgt_cast(t, WGT_I32));
    wgt_tensor *base = K(wgt_mul_scalar(K(wgt_arange(logits->storage->ctx, WGT_I32, 0, (double)rows, 1)), (double)classes));
    wgt_tensor *zero = K(wgt_scalar(logits->storage->ctx, WGT_I32, 0));
    wgt_tensor *bad = K(wgt_logical_or(K(wgt_ge(t, K(wgt_scalar(logits->storage->ctx, WGT_I32, (double)classes)))),
                                       K(wgt_lt(t, zero))));
    /* A target outside the classes would pick another row's entry: it becomes -1, which the
     * gather reports (at the call for targets on the host, else at the next synchronisation). */
    wgt_tensor *idx = K(wgt_where(bad, K(wgt_scalar(logits->storage->ctx, WGT_I32, -1)), K(wgt_add(t, base))));
    wgt_tensor *lp = K(wgt_reshape(K(wgt_log_softmax(logits, -1)), 2, flat));
    wgt_tensor *picked = K(wgt_gather_rows(lp, idx));
    wgt_tensor *loss = picked ? wgt_neg(K(wgt_reshape(K(wgt_mean(picked, 0, NULL, 0)), 0, NULL))) : NULL;
    wgt_ag_arena_free(ar);
    return loss;
}

static wgt_status bw_cross_entropy(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    wgt_tensor *x = n->saved[0], *t = n->saved[1];
    int64_t classes = x->shape[x->ndim - 1], rows = wgt_tensor_numel(t);
    wgt_tensor *cls = K(wgt_arange(n->ctx, t->dtype, 0, (double)classes, 1));
    wgt_tensor *hot = wgt_ag_mask(ar, K(wgt_eq(K(wgt_unsqueeze(t, -1)), cls)), x->dtype);
    wgt_tensor *p = K(wgt_softmax(x, -1));
    gin[0] = K(wgt_mul(K(wgt_sub(p, hot)), K(wgt_mul_scalar(g, 1.0 / (double)rows))));
    return WGT_OK;
}

wgt_tensor *wgt_ag_rule_cross_entropy(wgt_tensor *out, wgt_tensor *logits, wgt_tensor *targets) {
    WGT_AG_BEGIN(n, "wgt_cross_entropy", out, bw_cross_entropy, logits, NULL)
    wgt_ag_save(n, 0, logits);
    wgt_ag_save(n, 1, targets);
    return wgt_ag_attach(out, n);
}
