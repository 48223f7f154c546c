/*
 * A small MLP trained with autograd and AdamW gives the loss curve of the same model trained
 * with gradients written out by hand in double (the reference below), and a thousand more
 * steps leave the host heap and the device pool where they were.
 *
 * Model: logits = tanh(x W1^T + b1) W2^T + b2, cross-entropy with integer targets, AdamW.
 * Tolerance: 2e-4 on each step's loss. f32 rounding moves the curve by about 1e-6; tanh's
 * derivative off by 10% moves it past the tolerance by step 8. AdamW does not see a gradient
 * scaled by a constant factor (m / sqrt(v) cancels it): the gradient checks catch those.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

enum { B = 16, D = 6, H = 12, C = 4, STEPS = 300, MORE = 1000 };
static const double LR = 0.01, B1 = 0.9, B2 = 0.999, EPS = 1e-8, WD = 0.01;

static double rnd(uint64_t *s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) / 9007199254740992.0 * 2 - 1;
}

typedef struct { double w1[H * D], b1[H], w2[C * H], b2[C]; } params;
#define NP (H * D + H + C * H + C)

/* One step of the reference: returns the loss before the update. */
static double reference_step(params *p, double *m, double *v, int t, const double *x, const int *y) {
    double h[B][H], lg[B][C], dl[B][C], dh[B][H];
    params g;
    memset(&g, 0, sizeof g);
    double loss = 0;
    for (int b = 0; b < B; b++) {
        for (int j = 0; j < H; j++) {
            double s = p->b1[j];
            for (int k = 0; k < D; k++) s += x[b * D + k] * p->w1[j * D + k];
            h[b][j] = tanh(s);
        }
        double mx = -INFINITY, z = 0;
        for (int c = 0; c < C; c++) {
            double s = p->b2[c];
            for (int j = 0; j < H; j++) s += h[b][j] * p->w2[c * H + j];
            lg[b][c] = s;
            mx = fmax(mx, s);
        }
        for (int c = 0; c < C; c++) z += exp(lg[b][c] - mx);
        loss += (log(z) + mx - lg[b][y[b]]) / B;
        for (int c = 0; c < C; c++) dl[b][c] = (exp(lg[b][c] - mx) / z - (c == y[b])) / B;
    }
    for (int b = 0; b < B; b++) {
        for (int c = 0; c < C; c++) {
            g.b2[c] += dl[b][c];
            for (int j = 0; j < H; j++) g.w2[c * H + j] += dl[b][c] * h[b][j];
        }
        for (int j = 0; j < H; j++) {
            double s = 0;
            for (int c = 0; c < C; c++) s += dl[b][c] * p->w2[c * H + j];
            dh[b][j] = s * (1 - h[b][j] * h[b][j]);
            g.b1[j] += dh[b][j];
            for (int k = 0; k < D; k++) g.w1[j * D + k] += dh[b][j] * x[b * D + k];
        }
    }
    double *pp = (double *)p, *gg = (double *)&g;
    for (int i = 0; i < NP; i++) {
        m[i] = B1 * m[i] + (1 - B1) * gg[i];
        v[i] = B2 * v[i] + (1 - B2) * gg[i] * gg[i];
        double mh = m[i] / (1 - pow(B1, t)), vh = v[i] / (1 - pow(B2, t));
        pp[i] -= LR * (mh / (sqrt(vh) + EPS) + WD * pp[i]);
    }
    return loss;
}

static wgt_tensor *from(wgt_context *ctx, int ndim, const int64_t *shape, const double *v, int n) {
    float *f = malloc(sizeof *f * (size_t)n);
    for (int i = 0; i < n; i++) f[i] = (float)v[i];
    wgt_tensor *t = wgt_tensor_from_data(ctx, WGT_F32, ndim, shape, f, sizeof *f * (size_t)n, WGT_USAGE_DEFAULT);
    free(f);
    wgt_requires_grad(t, 1);
    return t;
}

/* One autograd step; returns the loss before the update. */
static double train_step(wgt_optimizer *o, wgt_tensor *const *w, wgt_tensor *x, wgt_tensor *y) {
    wgt_optimizer_zero_grad(o);
    wgt_tensor *a = wgt_linear(x, w[0], w[1]), *h = wgt_tanh(a), *lg = wgt_linear(h, w[2], w[3]);
    wgt_tensor *l = wgt_cross_entropy(lg, y);
    float loss = NAN;
    if (wgt_backward(l, NULL) != WGT_OK || wgt_tensor_read(l, &loss, sizeof loss) != WGT_OK ||
        wgt_optimizer_step(o) != WGT_OK)
        loss = NAN;
    wgt_release(a), wgt_release(h), wgt_release(lg), wgt_release(l);
    return loss;
}

TEST_BACKENDS(autograd_mlp_matches_hand_written_gradients) {
    uint64_t s = 7;
    double x[B * D];
    int y[B];
    params p;
    for (int i = 0; i < B * D; i++) x[i] = rnd(&s);
    for (int b = 0; b < B; b++) y[b] = (int)((rnd(&s) + 1) * 2) % C;
    double *pp = (double *)&p;
    for (int i = 0; i < NP; i++) pp[i] = 0.5 * rnd(&s);
    int64_t xs[2] = {B, D}, ys[1] = {B}, w1s[2] = {H, D}, b1s[1] = {H}, w2s[2] = {C, H}, b2s[1] = {C};
    float xf[B * D];
    for (int i = 0; i < B * D; i++) xf[i] = (float)x[i];
    wgt_tensor *xt = wgt_tensor_from_data(ctx, WGT_F32, 2, xs, xf, sizeof xf, WGT_USAGE_DEFAULT);
    wgt_tensor *yt = wgt_tensor_from_data(ctx, WGT_I32, 1, ys, y, sizeof y, WGT_USAGE_DEFAULT);
    wgt_tensor *w[4] = {from(ctx, 2, w1s, p.w1, H * D), from(ctx, 1, b1s, p.b1, H), from(ctx, 2, w2s, p.w2, C * H),
                        from(ctx, 1, b2s, p.b2, C)};
    wgt_optimizer *o = wgt_adamw(4, w, LR, B1, B2, EPS, WD);
    CHECK(o, "%s", wgt_last_error());
    double m[NP] = {0}, v[NP] = {0}, first = 0, last = 0;
    int bad = 0;
    for (int t = 1; o && t <= STEPS && bad < 3; t++) {
        double want = reference_step(&p, m, v, t, x, y), got = train_step(o, w, xt, yt);
        if (t == 1) first = want;
        last = want;
        if (!(fabs(got - want) <= 2e-4)) {
            bad++;
            CHECK(0, "step %d: loss %.7f, reference %.7f (%s)", t, got, want, wgt_last_error());
        }
    }
    CHECK(last < 0.5 * first, "the reference did not learn (%g -> %g): the check would be weak", first, last);
    /* A thousand more steps: the heap and the device memory stay put. */
    wgt_stats s0, s1;
    long long heap0 = test_heap_in_use();
    wgt_context_stats(ctx, &s0);
    for (int t = 0; o && t < MORE; t++)
        if (isnan(train_step(o, w, xt, yt))) {
            CHECK(0, "step failed: %s", wgt_last_error());
            break;
        }
    wgt_context_stats(ctx, &s1);
    long long grown = test_heap_in_use() - heap0;
    if (!SANITIZED) CHECK(grown < 256 * 1024, "the heap grew by %lld bytes over %d steps", grown, MORE);
    CHECK(s1.device_bytes_in_use <= s0.device_bytes_in_use && s1.device_bytes_pooled <= s0.device_bytes_pooled + 65536,
          "device memory in use %llu -> %llu, pooled %llu -> %llu", (unsigned long long)s0.device_bytes_in_use,
          (unsigned long long)s1.device_bytes_in_use, (unsigned long long)s0.device_bytes_pooled,
          (unsigned long long)s1.device_bytes_pooled);
    wgt_optimizer_release(o);
    for (int i = 0; i < 4; i++) wgt_release(w[i]);
    wgt_release(xt), wgt_release(yt);
}
