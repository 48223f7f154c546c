/*
 * Cross-entropy from logits with integer targets, in as few passes over the [rows, classes]
 * logits as the math allows (at GPT-2's vocabulary they dominate a training step's memory
 * traffic). The forward reads them once, in the row kernel's logsumexp (a [rows] result), and
 * the loss is the mean of that minus each row's target logit (a gather of one element a row).
 * The gradient, (exp(x - lse) - one_hot) g / rows, is one elementwise expression over the
 * logits and the forward's lse (the one-hot is a comparison of the class index with the
 * target, never stored), which fuses into one kernel: no softmax, no [rows, classes]
 * intermediate.
 */
#include <stdlib.h>

#include "autograd.h"
#include "core/indexing.h"
#include "core/reduce_axes.h"

static int is_float(wgt_dtype d) { return d == WGT_F32 || d == WGT_F16; }

/* The forward's lse, handed from wgt_cross_entropy to its gradient rule, which the entry
 * point (src/core/api.c) calls next on the same thread with the loss it returned: the rule
 * saves it for the gradient, so the backward pass does not read the logits a second time
 * to recompute it. Tied to that loss; a rule given another (never, through the entry
 * point) gets none and computes it again. */
static _Thread_local struct {
    wgt_tensor *loss, *lse;
} handoff;

static void handoff_give(wgt_tensor *loss, wgt_tensor *lse) {
    wgt_release(handoff.lse);
    handoff.loss = loss;
    handoff.lse = loss && lse ? wgt_retain(lse) : NULL;
}

/* The lse handed with loss (a reference the caller releases), or NULL. */
static wgt_tensor *handoff_take(wgt_tensor *loss) {
    wgt_tensor *lse = handoff.loss == loss ? handoff.lse : NULL;
    if (!lse) wgt_release(handoff.lse);
    handoff.loss = handoff.lse = NULL;
    return lse;
}

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
    /* Entry rows[r] * classes + target[r] of the flattened logits. */
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
    /* lse is f32 (f16 logits are summed in f32), of logits' shape with the last dimension 1. */
    wgt_tensor *lse = K(wgt_rows_logsumexp(fn, logits));
    wgt_tensor *picked = K(wgt_gather_rows(K(wgt_reshape(logits, 2, flat)), idx));
    if (picked && picked->dtype != WGT_F32) picked = K(wgt_cast(picked, WGT_F32));
    wgt_tensor *d = K(wgt_sub(K(wgt_reshape(lse, 1, one)), K(wgt_reshape(picked, 1, one))));
    wgt_tensor *loss = K(wgt_mean(d, 0, NULL, 0));
    if (loss && logits->dtype != WGT_F32) loss = K(wgt_cast(loss, logits->dtype));
    if (loss) loss = wgt_retain(loss);
    handoff_give(loss, lse);
    wgt_ag_arena_free(ar);
    return loss;
}

static wgt_status bw_cross_entropy(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    wgt_tensor *x = n->saved[0], *t = n->saved[1], *lse = n->saved[2];
    int64_t classes = x->shape[x->ndim - 1], rows = wgt_tensor_numel(t);
    wgt_tensor *cls = K(wgt_arange(n->ctx, t->dtype, 0, (double)classes, 1));
    wgt_tensor *hot = wgt_ag_mask(ar, K(wgt_eq(K(wgt_unsqueeze(t, -1)), cls)), WGT_F32);
    wgt_tensor *xf = x->dtype == WGT_F32 ? x : K(wgt_cast(x, WGT_F32));
    wgt_tensor *gf = g->dtype == WGT_F32 ? g : K(wgt_cast(g, WGT_F32));
    wgt_tensor *p = K(wgt_exp(K(wgt_sub(xf, lse))));
    gin[0] = K(wgt_mul(K(wgt_sub(p, hot)), K(wgt_mul_scalar(gf, 1.0 / (double)rows))));
    if (gin[0] && x->dtype != WGT_F32) gin[0] = K(wgt_cast(gin[0], x->dtype));
    return WGT_OK;
}

static wgt_tensor *rule(wgt_tensor *out, wgt_tensor *logits, wgt_tensor *targets, wgt_tensor *lse) {
    WGT_AG_BEGIN(n, "wgt_cross_entropy", out, bw_cross_entropy, logits, NULL)
    wgt_ag_save(n, 0, logits);
    wgt_ag_save(n, 1, targets);
    wgt_tensor *own = lse ? NULL : wgt_rows_logsumexp(n->fn, logits);
    wgt_ag_save(n, 2, lse ? lse : own);
    wgt_release(own);
    return wgt_ag_attach(out, n);
}

wgt_tensor *wgt_ag_rule_cross_entropy(wgt_tensor *out, wgt_tensor *logits, wgt_tensor *targets) {
    wgt_tensor *lse = handoff_take(out);
    wgt_tensor *r = rule(out, logits, targets, lse);
    wgt_release(lse);
    return r;
}
