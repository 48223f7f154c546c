/*
 * The optimizer step inside a compiled graph: one wgt_graph_dispatch runs forward, backward
 * and the update, writing the parameters and the optimizer's state in place. N dispatches
 * must compute what N eager steps compute, learning-rate schedule included.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

enum { B = 6, DIN = 7, H = 5, C = 3, NPARAM = 3, NKEEP = 5 };

/* Loss of a two-layer model over x [B, DIN] and targets [B]: w1 [H, DIN] f32, b1 [H] f32,
 * w2 [C, H] f16 (an f16 parameter: its update is cast back). Intermediates go in keep. */
static wgt_tensor *model_loss(wgt_tensor *const *w, wgt_tensor *x, wgt_tensor *y, wgt_tensor **keep) {
    keep[0] = wgt_linear(x, w[0], w[1]);
    keep[1] = wgt_tanh(keep[0]);
    keep[2] = wgt_cast(keep[1], WGT_F16);
    keep[3] = wgt_linear(keep[2], w[2], NULL);
    keep[4] = wgt_cast(keep[3], WGT_F32);
    return wgt_cross_entropy(keep[4], y);
}

static void make_params(wgt_context *ctx, wgt_tensor **w) {
    w[0] = wgt_rand_normal(ctx, WGT_F32, 2, (int64_t[]){H, DIN}, 0, 0.5, 11);
    w[1] = wgt_rand_normal(ctx, WGT_F32, 1, (int64_t[]){H}, 0, 0.5, 12);
    w[2] = wgt_rand_normal(ctx, WGT_F16, 2, (int64_t[]){C, H}, 0, 0.5, 13);
    for (int i = 0; i < NPARAM; i++) wgt_requires_grad(w[i], 1);
}

static wgt_tensor *batch_x(wgt_context *ctx, int step) {
    return wgt_rand_normal(ctx, WGT_F32, 2, (int64_t[]){B, DIN}, 0, 1, 100 + (uint64_t)step);
}

static wgt_tensor *batch_y(wgt_context *ctx, int step) {
    int32_t y[B];
    for (int i = 0; i < B; i++) y[i] = (i * 7 + step * 3) % C;
    return wgt_tensor_from_data(ctx, WGT_I32, 1, (int64_t[]){B}, y, sizeof y, WGT_USAGE_DEFAULT);
}

static wgt_optimizer *make_opt(int kind, wgt_tensor **w) {
    return kind ? wgt_adamw(NPARAM, w, 0.05, 0.9, 0.999, 1e-8, 0.01) : wgt_sgd(NPARAM, w, 0.1, 0.9, 0.01);
}

/* Forward, backward and o's step recorded over placeholders named xn and yn. */
typedef struct recorded {
    wgt_tensor *x, *y, *loss, *keep[NKEEP];
} recorded;

static void record_step(wgt_context *ctx, wgt_optimizer *o, wgt_tensor **w, const char *xn, const char *yn,
                        recorded *r) {
    r->x = wgt_graph_input(ctx, xn, WGT_F32, 2, (int64_t[]){B, DIN});
    r->y = wgt_graph_input(ctx, yn, WGT_I32, 1, (int64_t[]){B});
    r->loss = model_loss(w, r->x, r->y, r->keep);
    CHECK(wgt_backward(r->loss, NULL) == WGT_OK, "%s", wgt_last_error());
    CHECK(wgt_optimizer_step(o) == WGT_OK, "%s", wgt_last_error());
}

static void recorded_release(recorded *r) {
    wgt_release(r->loss), wgt_release(r->x), wgt_release(r->y);
    for (int k = 0; k < NKEEP; k++) wgt_release(r->keep[k]);
}

/* One eager step; returns the loss. */
static double eager_step(wgt_optimizer *o, wgt_tensor **w, wgt_tensor *x, wgt_tensor *y) {
    wgt_tensor *keep[NKEEP];
    wgt_optimizer_zero_grad(o);
    wgt_tensor *l = model_loss(w, x, y, keep);
    CHECK(wgt_backward(l, NULL) == WGT_OK, "%s", wgt_last_error());
    CHECK(wgt_optimizer_step(o) == WGT_OK, "%s", wgt_last_error());
    double *v = test_read_f64(l), loss = v ? v[0] : NAN;
    free(v);
    wgt_release(l);
    for (int k = 0; k < NKEEP; k++) wgt_release(keep[k]);
    return loss;
}

/* Largest difference between the two sets of parameters, relative to 1 + |value|. */
static double params_apart(wgt_tensor **a, wgt_tensor **b) {
    double worst = 0;
    for (int i = 0; i < NPARAM; i++) {
        double *x = test_read_f64(a[i]), *y = test_read_f64(b[i]);
        int64_t n = wgt_tensor_numel(a[i]);
        for (int64_t k = 0; x && y && k < n; k++) {
            double d = fabs(x[k] - y[k]) / (1 + fabs(y[k]));
            if (d > worst || isnan(d)) worst = isnan(d) ? INFINITY : d;
        }
        if (!x || !y) worst = INFINITY;
        free(x), free(y);
    }
    return worst;
}

TEST_BACKENDS(optim_graph_steps_equal_eager_steps) {
    enum { STEPS = 5 };
    for (int kind = 0; kind < 2; kind++) {
        const char *name = kind ? "adamw" : "sgd";
        wgt_tensor *wg[NPARAM], *we[NPARAM];
        make_params(ctx, wg);
        make_params(ctx, we);
        wgt_optimizer *og = make_opt(kind, wg), *oe = make_opt(kind, we);
        CHECK(og && oe, "%s", wgt_last_error());
        recorded r;
        record_step(ctx, og, wg, "og_x", "og_y", &r);
        wgt_graph *g = wgt_graph_build(ctx, 1, (wgt_binding[]){{"loss", r.loss}});
        CHECK(g, "%s", wgt_last_error());
        wgt_optimizer_zero_grad(og); /* the gradients were graph values */
        recorded_release(&r);
        wgt_tensor *lo = wgt_zeros(ctx, WGT_F32, 0, NULL);
        for (int step = 0; g && step < STEPS; step++) {
            double lr = (kind ? 0.05 : 0.1) * (1 - 0.15 * step); /* a schedule: each dispatch takes the new rate */
            wgt_optimizer_set_lr(og, lr), wgt_optimizer_set_lr(oe, lr);
            wgt_tensor *xv = batch_x(ctx, step), *yv = batch_y(ctx, step);
            CHECK(wgt_graph_dispatch(g, 2, (wgt_binding[]){{"og_x", xv}, {"og_y", yv}}, 1,
                                     (wgt_binding[]){{"loss", lo}}) == WGT_OK, "%s", wgt_last_error());
            double le = eager_step(oe, we, xv, yv), *lg = test_read_f64(lo);
            CHECK(lg && fabs(lg[0] - le) <= 1e-5 * (1 + fabs(le)), "%s step %d: graph loss %.9g, eager %.9g", name,
                  step, lg ? lg[0] : NAN, le);
            free(lg);
            double apart = params_apart(wg, we);
            CHECK(apart <= 2e-6, "%s step %d: parameters differ by %.3g", name, step, apart);
            wgt_release(xv), wgt_release(yv);
        }
        /* The parameters moved: the updates ran. */
        wgt_tensor *w0[NPARAM];
        make_params(ctx, w0);
        CHECK(params_apart(wg, w0) > 1e-3, "%s: the graph did not update the parameters", name);
        /* Eager steps after the graph continue from its state (moments, step count) in place. */
        wgt_graph_release(g);
        wgt_tensor *xv = batch_x(ctx, STEPS), *yv = batch_y(ctx, STEPS);
        double l1 = eager_step(og, wg, xv, yv), l2 = eager_step(oe, we, xv, yv);
        CHECK(fabs(l1 - l2) <= 1e-5 * (1 + fabs(l2)), "%s: eager step after the graph: loss %.9g vs %.9g", name,
              l1, l2);
        CHECK(params_apart(wg, we) <= 2e-6, "%s: an eager step after the graph differs by %.3g", name,
              params_apart(wg, we));
        wgt_release(xv), wgt_release(yv), wgt_release(lo);
        wgt_optimizer_release(og), wgt_optimizer_release(oe);
        for (int i = 0; i < NPARAM; i++) wgt_release(wg[i]), wgt_release(we[i]), wgt_release(w0[i]);
    }
}

/* A graph outliving the caller's optimizer handle keeps the optimizer alive. */
TEST_BACKENDS(optim_graph_lifetimes) {
    wgt_tensor *w[NPARAM];
    make_params(ctx, w);
    wgt_optimizer *o = make_opt(1, w);
    recorded r;
    record_step(ctx, o, w, "ol_x", "ol_y", &r);
    wgt_graph *g = wgt_graph_build(ctx, 1, (wgt_binding[]){{"loss", r.loss}});
    CHECK(g, "%s", wgt_last_error());
    wgt_optimizer_zero_grad(o);
    wgt_optimizer_release(o); /* the graph still holds it */
    wgt_tensor *xv = batch_x(ctx, 0), *yv = batch_y(ctx, 0), *lo = wgt_zeros(ctx, WGT_F32, 0, NULL);
    double before = 0, after = 0;
    for (int s = 0; s < 3 && g; s++) {
        CHECK(wgt_graph_dispatch(g, 2, (wgt_binding[]){{"ol_x", xv}, {"ol_y", yv}}, 1,
                                 (wgt_binding[]){{"loss", lo}}) == WGT_OK, "%s", wgt_last_error());
        double *v = test_read_f64(lo);
        if (v && s == 0) before = v[0];
        if (v) after = v[0];
        free(v);
    }
    CHECK(after < before, "three dispatches on one batch lower its loss: %g then %g", before, after);
    wgt_graph_release(g);
    recorded_release(&r);
    wgt_release(xv), wgt_release(yv), wgt_release(lo);
    for (int i = 0; i < NPARAM; i++) wgt_release(w[i]);
}

/* A step recorded and never built into a graph waits in its context, holding the parameters
 * and the optimizer, and goes with the context's release (a leak check under the sanitizers). */
TEST(optim_graph_update_never_built) {
    wgt_context *c = test_new_context(WGT_BACKEND_CPU);
    CHECK(c, "%s", wgt_last_error());
    if (!c) return;
    wgt_tensor *w[NPARAM];
    make_params(c, w);
    wgt_optimizer *o = make_opt(1, w);
    recorded r;
    record_step(c, o, w, "on_x", "on_y", &r);
    wgt_optimizer_release(o);
    recorded_release(&r);
    for (int i = 0; i < NPARAM; i++) wgt_release(w[i]);
    wgt_context_release(c);
}

/* A tensor the graph updates in place cannot also be bound as an output: both would write it. */
TEST_BACKENDS(optim_graph_refuses_an_output_bound_to_a_parameter) {
    wgt_tensor *p = wgt_scalar(ctx, WGT_F32, 0.5), *x = wgt_graph_input(ctx, "oo_x", WGT_F32, 0, NULL);
    wgt_requires_grad(p, 1);
    wgt_optimizer *o = wgt_sgd(1, &p, 0.1, 0, 0);
    wgt_tensor *l = wgt_mul(p, x);
    CHECK(wgt_backward(l, NULL) == WGT_OK && wgt_optimizer_step(o) == WGT_OK, "%s", wgt_last_error());
    wgt_graph *g = wgt_graph_build(ctx, 1, (wgt_binding[]){{"loss", l}});
    CHECK(g, "%s", wgt_last_error());
    wgt_optimizer_zero_grad(o);
    wgt_tensor *xv = wgt_scalar(ctx, WGT_F32, 2.0), *lo = wgt_zeros(ctx, WGT_F32, 0, NULL);
    CHECK_ERROR(wgt_graph_dispatch(g, 1, (wgt_binding[]){{"oo_x", xv}}, 1, (wgt_binding[]){{"loss", p}}) != WGT_OK,
                WGT_ERR_USAGE, "updates in place");
    /* Bound apart, the update runs: p -= 0.1 * x. */
    CHECK(wgt_graph_dispatch(g, 1, (wgt_binding[]){{"oo_x", xv}}, 1, (wgt_binding[]){{"loss", lo}}) == WGT_OK, "%s",
          wgt_last_error());
    double *v = test_read_f64(p);
    CHECK(v && fabs(v[0] - 0.3) < 1e-7, "p after one dispatch: %g, wanted 0.3", v ? v[0] : NAN);
    free(v);
    wgt_graph_release(g), wgt_optimizer_release(o);
    wgt_release(lo), wgt_release(xv), wgt_release(l), wgt_release(x), wgt_release(p);
}

/* One linear layer's loss over graph inputs, and an optimizer's step over its parameters
 * (w [C, DIN], b [C], both f32) when o is given: the graph of one training step. */
static wgt_graph *linear_step_graph(wgt_context *c, wgt_tensor **w, wgt_optimizer *o, const char *xn, const char *yn) {
    wgt_tensor *x = wgt_graph_input(c, xn, WGT_F32, 2, (int64_t[]){B, DIN});
    wgt_tensor *y = wgt_graph_input(c, yn, WGT_I32, 1, (int64_t[]){B});
    wgt_tensor *z = wgt_linear(x, w[0], w[1]), *l = wgt_cross_entropy(z, y);
    CHECK(wgt_backward(l, NULL) == WGT_OK, "%s", wgt_last_error());
    CHECK(!o || wgt_optimizer_step(o) == WGT_OK, "%s", wgt_last_error());
    wgt_graph *g = wgt_graph_build(c, 1, (wgt_binding[]){{"loss", l}});
    CHECK(g, "%s", wgt_last_error());
    for (int i = 0; i < 2; i++) wgt_zero_grad(w[i]);
    wgt_release(x), wgt_release(y), wgt_release(z), wgt_release(l);
    return g;
}

/* A context on ctx's backend without fusion (every op a kernel of its own, every update a
 * copy), to compare the fused one with bit for bit. */
static wgt_context *unfused_twin(wgt_context *ctx) {
    wgt_context_options opt = {0};
    opt.backend = wgt_context_backend(ctx), opt.no_fusion = 1, opt.quiet = 1;
    wgt_context *c = wgt_context_create(&opt);
    CHECK(c, "%s", wgt_last_error());
    return c;
}

/* The linear model's weight [C, DIN] and bias [C] (f32) and an SGD (kind 0) or AdamW
 * optimizer over them. */
static wgt_optimizer *linear_params(wgt_context *c, int kind, wgt_tensor **w) {
    w[0] = wgt_rand_normal(c, WGT_F32, 2, (int64_t[]){C, DIN}, 0, 0.5, 21);
    w[1] = wgt_rand_normal(c, WGT_F32, 1, (int64_t[]){C}, 0, 0.5, 22);
    for (int i = 0; i < 2; i++) wgt_requires_grad(w[i], 1);
    return kind ? wgt_adamw(2, w, 0.05, 0.9, 0.999, 1e-8, 0.01) : wgt_sgd(2, w, 0.1, 0.9, 0.01);
}

/* The update of a parameter or a moment is stored straight into it by the fused kernel that
 * computes it (the scheduler folds the in-place copy into the kernel): a step costs the
 * optimizer's reads of its state and one kernel per parameter, and gives, bit for bit, what
 * a context without fusion (every op a kernel of its own, every update a copy) gives. */
TEST_BACKENDS(optim_graph_updates_stored_by_their_kernels) {
    for (int kind = 0; kind < 2; kind++) {
        const char *name = kind ? "adamw" : "sgd";
        wgt_context *cs[2] = {ctx, unfused_twin(ctx)};
        if (!cs[1]) return;
        float got[2][C * DIN + C];
        int launches[2] = {0, 0};
        for (int v = 0; v < 2; v++) {
            wgt_context *c = cs[v];
            wgt_tensor *w[2];
            wgt_optimizer *o = linear_params(c, kind, w);
            wgt_graph *plain = linear_step_graph(c, w, NULL, "us_x0", "us_y0");
            wgt_graph *g = linear_step_graph(c, w, o, "us_x", "us_y");
            launches[v] = plain && g ? wgt_graph_launches(g) - wgt_graph_launches(plain) : -1;
            wgt_tensor *lo = wgt_zeros(c, WGT_F32, 0, NULL);
            for (int step = 0; g && step < 3; step++) {
                wgt_tensor *xv = batch_x(c, step), *yv = batch_y(c, step);
                CHECK(wgt_graph_dispatch(g, 2, (wgt_binding[]){{"us_x", xv}, {"us_y", yv}}, 1,
                                         (wgt_binding[]){{"loss", lo}}) == WGT_OK, "%s", wgt_last_error());
                wgt_release(xv), wgt_release(yv);
            }
            CHECK(wgt_tensor_read(w[0], got[v], sizeof(float) * C * DIN) == WGT_OK &&
                  wgt_tensor_read(w[1], got[v] + C * DIN, sizeof(float) * C) == WGT_OK, "%s", wgt_last_error());
            wgt_graph_release(plain), wgt_graph_release(g);
            wgt_optimizer_release(o);
            wgt_release(lo), wgt_release(w[0]), wgt_release(w[1]);
        }
        CHECK(memcmp(got[0], got[1], sizeof got[0]) == 0, "%s: the parameters after three steps differ from "
              "those of a context without fusion", name);
        /* The backward pass (the loss's gradient, the weight's product, the bias's sum), one
         * read of the step's rates for all parameters, then per parameter one kernel, which
         * reads the parameter and its moments (m for SGD with momentum, m and v for AdamW)
         * and stores their new values in place. Copying them into the step and back out took
         * four (SGD) or six (AdamW) launches more per parameter, and each parameter read the
         * rates apart. */
        int most = 3 + 1 + 2;
        if (wgt_context_backend(ctx) == WGT_BACKEND_WEBGPU)
            CHECK(launches[0] <= most, "%s: the step adds %d launches to the graph (at most %d)", name, launches[0],
                  most);
        wgt_context_release(cs[1]);
    }
}

/* The same outside a graph: an eager step's update of a parameter is stored into it by the
 * kernel that computes it, which reads the parameter element for element (the scheduler
 * folds the copy back, scheduler.c folds_update): one launch per parameter, bit for bit what
 * a context without fusion gives. */
TEST_BACKENDS(optim_eager_updates_stored_by_their_kernels) {
    for (int kind = 0; kind < 2; kind++) {
        const char *name = kind ? "adamw" : "sgd";
        wgt_context *cs[2] = {ctx, unfused_twin(ctx)};
        if (!cs[1]) return;
        float got[2][C * DIN + C];
        uint64_t launches = 0;
        for (int v = 0; v < 2; v++) {
            wgt_context *c = cs[v];
            wgt_tensor *w[2];
            wgt_optimizer *o = linear_params(c, kind, w);
            for (int step = 0; step < 3; step++) {
                wgt_tensor *xv = batch_x(c, step), *yv = batch_y(c, step);
                CHECK(wgt_optimizer_zero_grad(o) == WGT_OK, "%s", wgt_last_error());
                wgt_tensor *z = wgt_linear(xv, w[0], w[1]), *l = wgt_cross_entropy(z, yv);
                CHECK(wgt_backward(l, NULL) == WGT_OK, "%s", wgt_last_error());
                wgt_tensor *g[2] = {wgt_grad(w[0]), wgt_grad(w[1])};
                CHECK(g[0] && g[1] && wgt_eval(2, g) == WGT_OK, "%s", wgt_last_error());
                wgt_stats before, after;
                CHECK(wgt_context_stats(c, &before) == WGT_OK, "%s", wgt_last_error());
                CHECK(wgt_optimizer_step(o) == WGT_OK && wgt_eval(2, w) == WGT_OK, "%s", wgt_last_error());
                CHECK(wgt_context_stats(c, &after) == WGT_OK, "%s", wgt_last_error());
                if (v == 0 && step == 2) launches = after.launches - before.launches;
                wgt_release(g[0]), wgt_release(g[1]), wgt_release(z), wgt_release(l), wgt_release(xv), wgt_release(yv);
            }
            CHECK(wgt_tensor_read(w[0], got[v], sizeof(float) * C * DIN) == WGT_OK &&
                  wgt_tensor_read(w[1], got[v] + C * DIN, sizeof(float) * C) == WGT_OK, "%s", wgt_last_error());
            wgt_optimizer_release(o);
            wgt_release(w[0]), wgt_release(w[1]);
        }
        CHECK(memcmp(got[0], got[1], sizeof got[0]) == 0, "%s: the parameters after three eager steps differ from "
              "those of a context without fusion", name);
        /* One kernel per parameter, computing its new value and its moments'; a copy back of
         * each parameter took one launch more each. (The CPU backend runs no fused kernels.) */
        CHECK(wgt_context_backend(ctx) != WGT_BACKEND_WEBGPU || launches == 2,
              "%s: an eager step took %llu launches (2 expected, one per parameter)", name, (unsigned long long)launches);
        wgt_context_release(cs[1]);
    }
}
