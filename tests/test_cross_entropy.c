/*
 * Cross-entropy against float64: the loss and its gradient from wgt_backward, for f32 and
 * f16 logits (contiguous and transposed views), i32, u32 and i64 targets, row lengths from 1
 * to 50257, and logits of +-1e4 (only a max-shifted logsumexp gets those right), on both
 * backends; finite differences through gradcheck; and the kernel launches of one forward and
 * backward pass, which read the logits twice (a logsumexp row kernel, then one fused
 * gradient kernel), never through a softmax or a [rows, classes] intermediate.
 *
 * Tolerances, with u the unit roundoff of f32, M the largest |logit| and C the classes: the
 * row's lse is within about (4 + log C) u M + 4 C u of its value (the shift, C exponentials
 * summed, the log), so the loss is within 8 u (M + C + 1) plus f16's rounding of it; a
 * gradient element (p - onehot) / rows, p = exp(x - lse), inherits x - lse's error as a
 * relative error of p, plus a few u of its own, and f16 gradients round once more (2^-11
 * relative, 2^-24 absolute for subnormals).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gradcheck.h"

#define U32 5.9604644775390625e-8

typedef struct {
    int64_t rows, classes;
    wgt_dtype dt, tdt;
    double scale; /* logits uniform in [-scale, scale] */
    int transposed;
} ce_case;

static uint64_t rng = 88172645463325252ull;
static double uniform(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

/* Logits of the case as a leaf requiring a gradient: [rows, classes] (made as [classes,
 * rows] and transposed when the case says so), of the case's type. */
static wgt_tensor *logits_of(wgt_context *ctx, const ce_case *c) {
    int64_t n = c->rows * c->classes, shape[2] = {c->rows, c->classes}, tshape[2] = {c->classes, c->rows};
    float *v = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; i++) v[i] = (float)((2 * uniform() - 1) * c->scale);
    wgt_tensor *f = wgt_tensor_from_data(ctx, WGT_F32, 2, c->transposed ? tshape : shape, v, sizeof(float) * (size_t)n,
                                         WGT_USAGE_DEFAULT);
    free(v);
    wgt_tensor *t = c->dt == WGT_F32 ? wgt_retain(f) : wgt_cast(f, c->dt);
    wgt_release(f);
    if (t && c->transposed) {
        wgt_tensor *tt = wgt_transpose(t, 0, 1);
        wgt_release(t);
        t = tt;
    }
    if (t) wgt_requires_grad(t, 1);
    return t;
}

static wgt_tensor *targets_of(wgt_context *ctx, const ce_case *c, int32_t *tv) {
    for (int64_t r = 0; r < c->rows; r++) tv[r] = (int32_t)(uniform() * (double)c->classes) % (int32_t)c->classes;
    int64_t shape[1] = {c->rows};
    wgt_tensor *t = wgt_tensor_from_data(ctx, WGT_I32, 1, shape, tv, sizeof(int32_t) * (size_t)c->rows,
                                         WGT_USAGE_DEFAULT);
    if (t && c->tdt != WGT_I32) {
        wgt_tensor *u = wgt_cast(t, c->tdt);
        wgt_release(t);
        t = u;
    }
    return t;
}

static void check_case(wgt_context *ctx, const ce_case *c) {
    int32_t *tv = malloc(sizeof(int32_t) * (size_t)c->rows);
    wgt_tensor *x = logits_of(ctx, c), *t = targets_of(ctx, c, tv);
    wgt_tensor *loss = x && t ? wgt_cross_entropy(x, t) : NULL;
    CHECK(loss && wgt_backward(loss, NULL) == WGT_OK, "[%lld, %lld] %s: %s", (long long)c->rows,
          (long long)c->classes, wgt_dtype_name(c->dt), wgt_last_error());
    wgt_tensor *g = wgt_grad(x);
    double *xv = x ? test_read_f64(x) : NULL, *lv = loss ? test_read_f64(loss) : NULL, *gv = g ? test_read_f64(g) : NULL;
    CHECK(xv && lv && gv, "reading back: %s", wgt_last_error());
    if (xv && lv && gv) {
        CHECK(wgt_tensor_dtype(loss) == c->dt && wgt_tensor_dtype(g) == c->dt && wgt_tensor_ndim(loss) == 0,
              "loss %s rank %d, gradient %s", wgt_dtype_name(wgt_tensor_dtype(loss)), wgt_tensor_ndim(loss),
              wgt_dtype_name(wgt_tensor_dtype(g)));
        double m = 0, want = 0, n = (double)c->rows, C = (double)c->classes;
        for (int64_t i = 0; i < c->rows * c->classes; i++) m = fmax(m, fabs(xv[i]));
        double *lse = malloc(sizeof(double) * (size_t)c->rows);
        for (int64_t r = 0; r < c->rows; r++) {
            const double *row = xv + r * c->classes;
            double mx = -INFINITY, s = 0;
            for (int64_t k = 0; k < c->classes; k++) mx = fmax(mx, row[k]);
            for (int64_t k = 0; k < c->classes; k++) s += exp(row[k] - mx);
            lse[r] = mx + log(s);
            want += (lse[r] - row[tv[r]]) / n;
        }
        int f16 = c->dt == WGT_F16;
        double shift_err = 8 * U32 * (m + C + 1);
        double tol = shift_err + (f16 ? fabs(want) * 0x1p-11 : 0);
        CHECK(fabs(lv[0] - want) <= tol, "[%lld, %lld] %s scale %g: loss %.9g, float64 %.9g (tolerance %g)",
              (long long)c->rows, (long long)c->classes, wgt_dtype_name(c->dt), c->scale, lv[0], want, tol);
        int bad = 0;
        for (int64_t r = 0; r < c->rows && bad < 3; r++)
            for (int64_t k = 0; k < c->classes && bad < 3; k++) {
                double p = exp(xv[r * c->classes + k] - lse[r]), w = (p - (k == tv[r])) / n;
                double got = gv[r * c->classes + k];
                double gtol = (shift_err * p + 4 * U32) / n + (f16 ? fabs(w) * 0x1p-11 + 0x1p-24 : 0);
                if (!(fabs(got - w) <= gtol)) {
                    bad++;
                    CHECK(0, "[%lld, %lld] %s scale %g%s: d loss / d x[%lld, %lld] = %.9g, float64 %.9g (tolerance %g)",
                          (long long)c->rows, (long long)c->classes, wgt_dtype_name(c->dt), c->scale,
                          c->transposed ? " transposed" : "", (long long)r, (long long)k, got, w, gtol);
                }
            }
        free(lse);
    }
    free(xv), free(lv), free(gv), free(tv);
    wgt_release(g), wgt_release(loss), wgt_release(t), wgt_release(x);
}

TEST_BACKENDS(cross_entropy_matches_float64) {
    const ce_case cases[] = {
        {1, 1, WGT_F32, WGT_I32, 3},       {3, 5, WGT_F32, WGT_I32, 4},      {5, 3, WGT_F32, WGT_U32, 4, 1},
        {7, 1001, WGT_F32, WGT_I64, 6},    {4, 257, WGT_F32, WGT_I32, 1e4},  {6, 9, WGT_F32, WGT_I32, 1e4, 1},
        {3, 50257, WGT_F32, WGT_I32, 10},  {4, 6, WGT_F16, WGT_I32, 3},      {5, 33, WGT_F16, WGT_I64, 5, 1},
        {2, 1001, WGT_F16, WGT_U32, 8},    {16, 64, WGT_F32, WGT_I32, 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_case(ctx, &cases[i]);
}

static wgt_tensor *f_ce_wide(wgt_tensor *const *x) {
    static const int32_t t[3] = {4, 0, 6};
    int64_t shape[1] = {3};
    wgt_tensor *tt = wgt_tensor_from_data(wgt_tensor_context(x[0]), WGT_I32, 1, shape, t, sizeof t, WGT_USAGE_DEFAULT);
    wgt_tensor *r = wgt_cross_entropy(x[0], tt);
    wgt_release(tt);
    return r;
}

TEST_BACKENDS(cross_entropy_gradcheck) {
    const gc_case cases[] = {
        {"cross_entropy [3, 7]", f_ce_wide, 1, {{2, {3, 7}, -3, 3, GC_PLAIN}}},
        {"cross_entropy [3, 7] every other row", f_ce_wide, 1, {{2, {3, 7}, -3, 3, GC_STEPPED}}},
        {"cross_entropy [3, 7] f16", f_ce_wide, 1, {{2, {3, 7}, -2, 2, GC_PLAIN, WGT_F16}}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) gradcheck(ctx, &cases[i]);
}

/* One training step's passes over [64, 1001] logits, compiled: the row kernel's logsumexp,
 * the target gather and the mean (a few small launches over [rows]), and one fused gradient
 * kernel: 6 launches on WebGPU, where log_softmax in the forward and softmax again in the
 * backward took 7. The CPU backend runs op by op (no fused kernels): nothing to count. */
TEST(cross_entropy_launches) {
    wgt_context *gpu = test_webgpu_context();
    if (!gpu) return;
    int64_t shape[2] = {64, 1001}, ts[1] = {64};
    wgt_tensor *x = wgt_graph_input(gpu, "ce_logits", WGT_F32, 2, shape);
    wgt_tensor *t = wgt_graph_input(gpu, "ce_targets", WGT_I32, 1, ts);
    CHECK(x && t && wgt_requires_grad(x, 1) == WGT_OK, "%s", wgt_last_error());
    wgt_tensor *loss = wgt_cross_entropy(x, t);
    CHECK(loss && wgt_backward(loss, NULL) == WGT_OK, "%s", wgt_last_error());
    wgt_tensor *gx = wgt_grad(x);
    wgt_graph *g = gx ? wgt_graph_build(gpu, 2, (wgt_binding[]){{"loss", loss}, {"gx", gx}}) : NULL;
    CHECK(g, "%s", wgt_last_error());
    int launches = g ? wgt_graph_launches(g) : -1;
    CHECK(launches > 0 && launches <= 6, "cross-entropy and its gradient take %d launches, wanted at most 6", launches);
    wgt_graph_release(g), wgt_release(gx), wgt_release(loss), wgt_release(t), wgt_release(x);
    wgt_context_release(gpu);
}

/* Eager, the same pass holds no [rows, classes] intermediate: the device memory it ever
 * held is the logits and their gradient, plus small [rows] tensors (2.07 blocks of the
 * logits' size, where log_softmax and softmax took 3.09). */
TEST(cross_entropy_memory) {
    wgt_context *gpu = test_webgpu_context();
    if (!gpu) return;
    const ce_case c = {64, 1001, WGT_F32, WGT_I32, 3};
    int32_t tv[64];
    wgt_tensor *x = logits_of(gpu, &c), *t = targets_of(gpu, &c, tv), *loss = NULL, *gx = NULL;
    CHECK(x && t && wgt_eval(2, (wgt_tensor *[]){x, t}) == WGT_OK, "%s", wgt_last_error());
    wgt_stats s0, s1;
    wgt_context_trim(gpu);
    wgt_context_stats(gpu, &s0);
    loss = wgt_cross_entropy(x, t);
    CHECK(loss && wgt_backward(loss, NULL) == WGT_OK && (gx = wgt_grad(x)) && wgt_eval(1, &gx) == WGT_OK, "%s",
          wgt_last_error());
    wgt_context_stats(gpu, &s1);
    uint64_t block = 64 * 1001 * sizeof(float);
    /* Logits and gradient: 2 blocks (with log-probabilities and probabilities held as well,
     * 3 or more). */
    CHECK(s1.device_bytes_peak < 2 * block + block / 2, "peak device memory %llu bytes, logits %llu",
          (unsigned long long)s1.device_bytes_peak, (unsigned long long)block);
    wgt_release(gx), wgt_release(loss), wgt_release(t), wgt_release(x);
    wgt_context_release(gpu);
}
