/*
 * Autograd's behaviour beyond single gradients: accumulation, zero_grad, the no-grad scope,
 * detach, errors (ops without a gradient, misuse), the tape freed with the tensors, a backward
 * pass recorded into a compiled graph, cross-entropy's gradient, and the optimizers and
 * schedule against values computed by hand.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gradcheck.h"

static wgt_tensor *vec(wgt_context *ctx, int n, const float *v) {
    int64_t shape[1] = {n};
    return wgt_tensor_from_data(ctx, WGT_F32, 1, shape, v, sizeof(float) * (size_t)n, WGT_USAGE_DEFAULT);
}

static float at(wgt_tensor *t, int i) {
    double *v = test_read_f64(t);
    float r = v ? (float)v[i] : NAN;
    free(v);
    return r;
}

static float grad_at(wgt_tensor *t, int i) {
    wgt_tensor *g = wgt_grad(t);
    float r = g ? at(g, i) : NAN;
    wgt_release(g);
    return r;
}

TEST_BACKENDS(autograd_accumulates_and_zero_grad) {
    const float xv[3] = {1, 2, 3};
    wgt_tensor *x = vec(ctx, 3, xv);
    CHECK(wgt_requires_grad(x, 1) == WGT_OK, "%s", wgt_last_error());
    CHECK(wgt_tensor_requires_grad(x) == 1, "");
    for (int round = 0; round < 2; round++) { /* d/dx sum(x^2) = 2x, twice: 4x */
        wgt_tensor *y = wgt_square(x), *l = wgt_sum(y, 0, NULL, 0);
        CHECK(wgt_backward(l, NULL) == WGT_OK, "%s", wgt_last_error());
        wgt_release(y);
        wgt_release(l);
    }
    CHECK(grad_at(x, 2) == 12.0f, "accumulated gradient %g, wanted 12", grad_at(x, 2));
    CHECK(wgt_zero_grad(x) == WGT_OK, "");
    wgt_tensor *none = wgt_grad(x);
    CHECK(none == NULL, "zero_grad left a gradient");
    /* A given output gradient weighs the elements. */
    const float gv[3] = {1, 0, -2};
    wgt_tensor *y = wgt_mul_scalar(x, 3.0), *g = vec(ctx, 3, gv);
    CHECK(wgt_backward(y, g) == WGT_OK, "%s", wgt_last_error());
    CHECK(grad_at(x, 0) == 3.0f && grad_at(x, 1) == 0.0f && grad_at(x, 2) == -6.0f, "weighted gradient");
    wgt_release(y);
    wgt_release(g);
    wgt_release(x);
}

TEST_BACKENDS(autograd_no_grad_and_detach) {
    const float xv[2] = {1, 2};
    wgt_tensor *x = vec(ctx, 2, xv);
    wgt_requires_grad(x, 1);
    wgt_no_grad_begin();
    wgt_tensor *a = wgt_mul(x, x);
    CHECK(wgt_no_grad_end() == WGT_OK, "");
    CHECK(!wgt_tensor_requires_grad(a), "an op in a no-grad scope recorded a gradient");
    CHECK_ERROR(wgt_no_grad_end() != WGT_OK, WGT_ERR_USAGE, "wgt_no_grad_end");
    wgt_tensor *d = wgt_detach(x);
    CHECK(d && !wgt_tensor_requires_grad(d), "detach kept the gradient");
    /* y = x * detach(x): dy/dx = detach(x) only. */
    wgt_tensor *y = wgt_mul(x, d), *l = wgt_sum(y, 0, NULL, 0);
    CHECK(wgt_backward(l, NULL) == WGT_OK, "%s", wgt_last_error());
    CHECK(grad_at(x, 1) == 2.0f, "gradient through detach: %g, wanted 2", grad_at(x, 1));
    CHECK_ERROR(wgt_backward(a, NULL) != WGT_OK, WGT_ERR_USAGE, "needs no gradient");
    wgt_release(y), wgt_release(l), wgt_release(d), wgt_release(a), wgt_release(x);
}

TEST_BACKENDS(autograd_errors) {
    const float xv[4] = {1, 2, 3, 4};
    wgt_tensor *x = vec(ctx, 4, xv);
    int64_t s1[1] = {4};
    wgt_tensor *i = wgt_zeros(ctx, WGT_I32, 1, s1);
    CHECK_ERROR(wgt_requires_grad(i, 1) != WGT_OK, WGT_ERR_DTYPE, "i32");
    wgt_requires_grad(x, 1);
    wgt_tensor *y = wgt_mul_scalar(x, 2.0);
    CHECK_ERROR(wgt_requires_grad(y, 1) != WGT_OK, WGT_ERR_USAGE, "wgt_mul_scalar");
    CHECK_ERROR(wgt_backward(y, NULL) != WGT_OK, WGT_ERR_SHAPE, "one element");
    /* argmax has no gradient: a loss reaching a leaf through it names it. */
    wgt_tensor *am = wgt_argmax(y, 0, 0), *c = wgt_cast(am, WGT_F32);
    CHECK_ERROR(wgt_backward(c, NULL) != WGT_OK, WGT_ERR_USAGE, "wgt_argmax");
    /* A comparison used as a mask inside where needs no gradient of its own. */
    wgt_tensor *zero = wgt_scalar(ctx, WGT_F32, 2.5), *m = wgt_gt(x, zero), *w = wgt_where(m, x, zero);
    wgt_tensor *l = wgt_sum(w, 0, NULL, 0);
    CHECK(wgt_backward(l, NULL) == WGT_OK, "%s", wgt_last_error());
    CHECK(grad_at(x, 0) == 0.0f && grad_at(x, 3) == 1.0f, "where's gradient");
    wgt_release(l), wgt_release(w), wgt_release(m), wgt_release(zero), wgt_release(c), wgt_release(am);
    wgt_release(y), wgt_release(i), wgt_release(x);
}

/* The tape goes with the tensors: a long chain is freed without deep recursion, and many
 * rounds of recording and releasing leave the heap where it was. */
TEST_BACKENDS(autograd_tape_is_freed) {
    if (SANITIZED) {
        test_skip("heap figures mean something else under a sanitizer");
        return;
    }
    const float xv[4] = {1, 2, 3, 4};
    wgt_tensor *x = vec(ctx, 4, xv);
    wgt_requires_grad(x, 1);
    long long before = 0;
    for (int round = 0; round < 6; round++) {
        if (round == 2) before = test_heap_in_use();
        wgt_tensor *t = wgt_retain(x);
        for (int k = 0; k < 20000; k++) {
            wgt_tensor *u = wgt_mul_scalar(t, 1.0);
            wgt_release(t);
            t = u;
        }
        wgt_release(t); /* frees 20000 nodes in a chain: no stack overflow */
        wgt_zero_grad(x);
    }
    long long grown = test_heap_in_use() - before;
    CHECK(grown < 64 * 1024, "the heap grew by %lld bytes over 4 rounds of 20000 recorded ops", grown);
    wgt_release(x);
}

static wgt_tensor *f_ce(wgt_tensor *const *x) {
    static const int32_t t[4] = {2, 0, 1, 2};
    int64_t shape[2] = {2, 2};
    wgt_tensor *tt = wgt_tensor_from_data(wgt_tensor_context(x[0]), WGT_I32, 2, shape, t, sizeof t, WGT_USAGE_DEFAULT);
    wgt_tensor *r = wgt_cross_entropy(x[0], tt);
    wgt_release(tt);
    return r;
}

TEST_BACKENDS(autograd_cross_entropy) {
    const gc_case c = {"cross_entropy", f_ce, 1, {{3, {2, 2, 3}, -2, 2, GC_TRANSPOSED}}};
    gradcheck(ctx, &c);
    /* The value: -mean(log softmax[target]). */
    const float lv[6] = {1, 2, 3, 0, 0, 0};
    const int32_t tv[2] = {2, 1};
    int64_t ls[2] = {2, 3}, ts[1] = {2};
    wgt_tensor *lg = wgt_tensor_from_data(ctx, WGT_F32, 2, ls, lv, sizeof lv, WGT_USAGE_DEFAULT);
    wgt_tensor *tg = wgt_tensor_from_data(ctx, WGT_I32, 1, ts, tv, sizeof tv, WGT_USAGE_DEFAULT);
    wgt_tensor *l = wgt_cross_entropy(lg, tg);
    double want = 0.5 * ((log(exp(1) + exp(2) + exp(3)) - 3) + log(3.0));
    CHECK(l && wgt_tensor_ndim(l) == 0 && fabs(at(l, 0) - want) < 1e-6, "loss %g, wanted %g", l ? at(l, 0) : NAN, want);
    const int32_t bad[2] = {3, 0};
    wgt_tensor *tb = wgt_tensor_from_data(ctx, WGT_I32, 1, ts, bad, sizeof bad, WGT_USAGE_DEFAULT);
    wgt_tensor *lb = NULL, *i3 = NULL;
    CHECK_ERROR((lb = wgt_cross_entropy(lg, tb)) == NULL || wgt_tensor_read(lb, (float[1]){0}, 4) != WGT_OK,
                WGT_ERR_INVALID_ARGUMENT, "-1");
    CHECK_ERROR(wgt_cross_entropy(lg, lg) == NULL, WGT_ERR_DTYPE, "targets");
    CHECK_ERROR(wgt_cross_entropy(lg, i3 = wgt_zeros(ctx, WGT_I32, 1, (int64_t[1]){3})) == NULL, WGT_ERR_SHAPE,
                "without its last dimension");
    wgt_release(i3);
    wgt_release(lb), wgt_release(tb), wgt_release(l), wgt_release(tg), wgt_release(lg);
}

/* A backward pass over graph inputs records into the graph: one dispatch gives the loss and
 * the gradients, equal to the eager ones. */
TEST_BACKENDS(autograd_backward_in_compiled_graph) {
    int64_t xs[2] = {3, 4}, ws[2] = {2, 4};
    wgt_tensor *x = wgt_graph_input(ctx, "ag_x", WGT_F32, 2, xs), *w = wgt_graph_input(ctx, "ag_w", WGT_F32, 2, ws);
    CHECK(wgt_requires_grad(w, 1) == WGT_OK, "%s", wgt_last_error());
    wgt_tensor *y = wgt_linear(x, w, NULL), *t = wgt_tanh(y), *l = wgt_mean(t, 0, NULL, 0);
    CHECK(wgt_backward(l, NULL) == WGT_OK, "%s", wgt_last_error());
    wgt_tensor *gw = wgt_grad(w);
    wgt_graph *g = wgt_graph_build(ctx, 2, (wgt_binding[]){{"loss", l}, {"gw", gw}});
    CHECK(g, "%s", wgt_last_error());
    wgt_tensor *xv = wgt_rand_normal(ctx, WGT_F32, 2, xs, 0, 1, 1), *wv = wgt_rand_normal(ctx, WGT_F32, 2, ws, 0, 1, 2);
    wgt_tensor *lo = wgt_zeros(ctx, WGT_F32, 0, NULL), *go = wgt_zeros(ctx, WGT_F32, 2, ws);
    CHECK(g && wgt_graph_dispatch(g, 2, (wgt_binding[]){{"ag_x", xv}, {"ag_w", wv}}, 2,
                                  (wgt_binding[]){{"loss", lo}, {"gw", go}}) == WGT_OK, "%s", wgt_last_error());
    /* The same eagerly. */
    wgt_requires_grad(wv, 1);
    wgt_tensor *y2 = wgt_linear(xv, wv, NULL), *t2 = wgt_tanh(y2), *l2 = wgt_mean(t2, 0, NULL, 0);
    CHECK(wgt_backward(l2, NULL) == WGT_OK, "%s", wgt_last_error());
    wgt_tensor *ge = wgt_grad(wv);
    double *a = test_read_f64(go), *b = ge ? test_read_f64(ge) : NULL;
    for (int i = 0; a && b && i < 8; i++) CHECK(fabs(a[i] - b[i]) <= 1e-6 + 1e-5 * fabs(b[i]), "gw[%d] %g vs %g", i, a[i], b[i]);
    CHECK(fabs(at(lo, 0) - at(l2, 0)) < 1e-6, "loss");
    free(a), free(b);
    wgt_release(ge), wgt_release(l2), wgt_release(t2), wgt_release(y2), wgt_release(go), wgt_release(lo);
    wgt_release(wv), wgt_release(xv), wgt_graph_release(g), wgt_release(gw), wgt_release(l), wgt_release(t);
    wgt_release(y), wgt_release(w), wgt_release(x);
}

TEST(autograd_lr_warmup_cosine) {
    CHECK(fabs(wgt_lr_warmup_cosine(0, 10, 110, 1.0, 0.1) - 0.1) < 1e-12, "first warmup step");
    CHECK(fabs(wgt_lr_warmup_cosine(9, 10, 110, 1.0, 0.1) - 1.0) < 1e-12, "end of warmup");
    CHECK(fabs(wgt_lr_warmup_cosine(60, 10, 110, 1.0, 0.1) - 0.55) < 1e-12, "half way down the cosine");
    CHECK(fabs(wgt_lr_warmup_cosine(110, 10, 110, 1.0, 0.1) - 0.1) < 1e-12, "the floor");
    CHECK(fabs(wgt_lr_warmup_cosine(500, 10, 110, 1.0, 0.1) - 0.1) < 1e-12, "after the end");
}

/* One parameter, gradient 2p (loss sum(p^2)): SGD with momentum and AdamW against the update
 * rules written out in double; clipping against the norm by hand. */
TEST_BACKENDS(autograd_optimizers_match_their_formulas) {
    const float pv[3] = {1.0f, -2.0f, 0.5f};
    for (int kind = 0; kind < 2; kind++) {
        wgt_tensor *p = vec(ctx, 3, pv);
        wgt_requires_grad(p, 1);
        wgt_optimizer *o = kind ? wgt_adamw(1, &p, 0.1, 0.9, 0.999, 1e-8, 0.01) : wgt_sgd(1, &p, 0.1, 0.9, 0.01);
        CHECK(o, "%s", wgt_last_error());
        double ref[3], m[3] = {0}, v[3] = {0};
        for (int i = 0; i < 3; i++) ref[i] = pv[i];
        for (int step = 1; step <= 5 && o; step++) {
            wgt_optimizer_zero_grad(o);
            wgt_tensor *sq = wgt_square(p), *l = wgt_sum(sq, 0, NULL, 0);
            CHECK(wgt_backward(l, NULL) == WGT_OK, "%s", wgt_last_error());
            CHECK(wgt_optimizer_step(o) == WGT_OK, "%s", wgt_last_error());
            wgt_release(sq), wgt_release(l);
            for (int i = 0; i < 3; i++) {
                double g = 2 * ref[i];
                if (!kind) {
                    double d = g + 0.01 * ref[i];
                    m[i] = step == 1 ? d : 0.9 * m[i] + d;
                    ref[i] -= 0.1 * m[i];
                } else {
                    m[i] = 0.9 * m[i] + 0.1 * g;
                    v[i] = 0.999 * v[i] + 0.001 * g * g;
                    double mh = m[i] / (1 - pow(0.9, step)), vh = v[i] / (1 - pow(0.999, step));
                    ref[i] -= 0.1 * (mh / (sqrt(vh) + 1e-8) + 0.01 * ref[i]);
                }
            }
        }
        for (int i = 0; i < 3; i++)
            CHECK(fabs(at(p, i) - ref[i]) <= 1e-5 * (1 + fabs(ref[i])), "%s p[%d] %.7g, wanted %.7g",
                  kind ? "adamw" : "sgd", i, at(p, i), ref[i]);
        wgt_optimizer_release(o);
        wgt_release(p);
    }
    /* AdamW counts steps per parameter: q, without a gradient in the first step, gets its
     * first update (bias correction of step 1: a step of lr * sign(g)) in the second. */
    {
        wgt_tensor *p1 = vec(ctx, 1, pv), *q = vec(ctx, 1, pv + 1);
        wgt_requires_grad(p1, 1), wgt_requires_grad(q, 1);
        wgt_optimizer *o = wgt_adamw(2, (wgt_tensor *[]){p1, q}, 0.1, 0.9, 0.999, 1e-8, 0);
        for (int step = 0; step < 2; step++) {
            wgt_optimizer_zero_grad(o);
            wgt_tensor *l = step ? wgt_add(p1, q) : wgt_mul_scalar(p1, 1.0), *ls = wgt_sum(l, 0, NULL, 0);
            wgt_backward(ls, NULL);
            CHECK(wgt_optimizer_step(o) == WGT_OK, "%s", wgt_last_error());
            wgt_release(l), wgt_release(ls);
        }
        CHECK(fabs(at(q, 0) - (-2.0 - 0.1)) < 1e-6, "q after its first update: %.7g, wanted -2.1", at(q, 0));
        wgt_optimizer_release(o), wgt_release(p1), wgt_release(q);
    }
    /* Clipping: gradients 2p with norm 2 |p| = 2 sqrt(5.25), scaled to norm 1. */
    wgt_tensor *p = vec(ctx, 3, pv);
    wgt_requires_grad(p, 1);
    wgt_tensor *sq = wgt_square(p), *l = wgt_sum(sq, 0, NULL, 0);
    wgt_backward(l, NULL);
    double norm = 0;
    CHECK(wgt_clip_grad_norm(1, &p, 1.0, &norm) == WGT_OK, "%s", wgt_last_error());
    CHECK(fabs(norm - 2 * sqrt(5.25)) < 1e-5, "norm %g", norm);
    CHECK(fabs(grad_at(p, 1) - (-4.0 / (2 * sqrt(5.25)))) < 1e-5, "clipped gradient %g", grad_at(p, 1));
    CHECK_ERROR(wgt_adamw(1, &p, 0.1, 1.0, 0.999, 1e-8, 0) == NULL, WGT_ERR_INVALID_ARGUMENT, "betas");
    CHECK_ERROR(wgt_sgd(1, &sq, 0.1, 0, 0) == NULL, WGT_ERR_USAGE, "not a leaf");
    wgt_release(sq), wgt_release(l), wgt_release(p);
}

/* gather_rows' gradient over a table too large for one one-hot matrix (20000 rows, 1000
 * indices: two chunks) sums the gradients of repeated indices exactly; no indices, zeros. */
TEST_BACKENDS(autograd_gather_gradient_in_chunks) {
    enum { N = 20000, M = 1000 };
    int64_t ts[2] = {N, 1}, is[1] = {M};
    int32_t *idx = malloc(sizeof *idx * M);
    float *w = malloc(sizeof *w * M);
    double *want = calloc(N, sizeof *want);
    for (int i = 0; i < M; i++) {
        idx[i] = (int32_t)((i * 7919) % 97 * 203 % N); /* 97 distinct rows, each picked about 10 times */
        w[i] = (float)(i % 13) - 6;
        want[idx[i]] += w[i];
    }
    wgt_tensor *table = wgt_zeros(ctx, WGT_F32, 2, ts);
    wgt_requires_grad(table, 1);
    wgt_tensor *it = wgt_tensor_from_data(ctx, WGT_I32, 1, is, idx, sizeof *idx * M, WGT_USAGE_DEFAULT);
    wgt_tensor *wt = wgt_tensor_from_data(ctx, WGT_F32, 2, (int64_t[2]){M, 1}, w, sizeof *w * M, WGT_USAGE_DEFAULT);
    wgt_tensor *rows = wgt_gather_rows(table, it), *prod = wgt_mul(rows, wt), *l = wgt_sum(prod, 0, NULL, 0);
    CHECK(wgt_backward(l, NULL) == WGT_OK, "%s", wgt_last_error());
    wgt_tensor *g = wgt_grad(table);
    double *got = g ? test_read_f64(g) : NULL;
    int bad = 0;
    for (int k = 0; got && k < N && bad < 3; k++)
        if (got[k] != want[k]) {
            bad++;
            CHECK(0, "row %d: gradient %g, wanted %g", k, got[k], want[k]);
        }
    CHECK(got, "no gradient: %s", wgt_last_error());
    free(got), wgt_release(g), wgt_release(l), wgt_release(prod), wgt_release(rows);
    /* No indices at all: the table's gradient is zeros. */
    wgt_zero_grad(table);
    wgt_tensor *none = wgt_zeros(ctx, WGT_I32, 1, (int64_t[1]){0});
    wgt_tensor *r0 = wgt_gather_rows(table, none), *l0 = wgt_sum(r0, 0, NULL, 0);
    CHECK(wgt_backward(l0, NULL) == WGT_OK, "%s", wgt_last_error());
    wgt_tensor *g0 = wgt_grad(table);
    double *z = g0 ? test_read_f64(g0) : NULL;
    CHECK(z && z[0] == 0 && z[N - 1] == 0, "empty gather's gradient");
    free(z), wgt_release(g0), wgt_release(l0), wgt_release(r0), wgt_release(none);
    wgt_release(wt), wgt_release(it), wgt_release(table);
    free(idx), free(w), free(want);
}

/* Kernel launches of one dispatch of the graph computing an 8-op chain's sum and its gradient. */
static int chain_launches(wgt_context *ctx) {
    int64_t n[1] = {256};
    wgt_tensor *x = wgt_graph_input(ctx, "fx", WGT_F32, 1, n);
    CHECK(wgt_requires_grad(x, 1) == WGT_OK, "%s", wgt_last_error());
    wgt_tensor *t[8];
    t[0] = wgt_tanh(x), t[1] = wgt_mul_scalar(t[0], 2), t[2] = wgt_sin(t[1]), t[3] = wgt_add_scalar(t[2], 1.5);
    t[4] = wgt_sqrt(t[3]), t[5] = wgt_mul(t[4], x), t[6] = wgt_sigmoid(t[5]), t[7] = wgt_sum(t[6], 0, NULL, 0);
    CHECK(wgt_backward(t[7], NULL) == WGT_OK, "%s", wgt_last_error());
    wgt_tensor *gx = wgt_grad(x);
    wgt_graph *g = wgt_graph_build(ctx, 2, (wgt_binding[]){{"loss", t[7]}, {"gx", gx}});
    CHECK(g, "%s", wgt_last_error());
    int launches = g ? wgt_graph_launches(g) : -1;
    wgt_graph_release(g), wgt_release(gx), wgt_release(x);
    for (int i = 0; i < 8; i++) wgt_release(t[i]);
    return launches;
}

/* The backward pass is lazy work like the forward, so it fuses: the chain above and its
 * gradient (15 elementwise ops) take a few launches on WebGPU, against one per op where
 * nothing fuses (the CPU backend, which has no fused kernels). */
TEST(autograd_backward_fuses) {
    wgt_context *gpu = test_webgpu_context(), *cpu = test_new_context(WGT_BACKEND_CPU);
    if (!gpu) {
        wgt_context_release(cpu);
        return;
    }
    int fused = chain_launches(gpu), op_by_op = cpu ? chain_launches(cpu) : -1;
    CHECK(op_by_op >= 20, "the chain ran op by op in %d launches: too short to show fusion", op_by_op);
    CHECK(fused > 0 && fused <= 4, "forward and backward of the chain take %d launches on WebGPU (%d op by op)", fused, op_by_op);
    wgt_context_release(gpu), wgt_context_release(cpu);
}
