/* The gradient checker (gradcheck.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gradcheck.h"

/* The leaf's shape for an input seen through its view. */
static int leaf_shape(const gc_input *in, int64_t *shape) {
    memcpy(shape, in->shape, sizeof in->shape);
    if (in->view == GC_TRANSPOSED && in->ndim >= 2) {
        shape[in->ndim - 1] = in->shape[in->ndim - 2];
        shape[in->ndim - 2] = in->shape[in->ndim - 1];
    } else if (in->view == GC_STEPPED && in->ndim >= 1) {
        shape[0] = 2 * in->shape[0] + 1;
    }
    return in->ndim;
}

static double draw(uint64_t *s, const gc_input *in) {
    for (;;) {
        *s = *s * 6364136223846793005ull + 1442695040888963407ull;
        double u = (double)(*s >> 11) / 9007199254740992.0;
        double v = in->lo + (in->hi - in->lo) * u;
        if (in->away_from_int <= 0 || fabs(v - nearbyint(v)) >= in->away_from_int) return v;
    }
}

/* as_f32: the finite-difference reference evaluates f16 ops in f32 at the same (f16) points,
 * where steps are not lost to f16 rounding. */
static wgt_tensor *make_leaf(wgt_context *ctx, const gc_input *in, const double *vals, int as_f32) {
    int64_t shape[4];
    int nd = leaf_shape(in, shape);
    int64_t n = 1;
    for (int d = 0; d < nd; d++) n *= shape[d];
    wgt_dtype dt = in->dtype && !as_f32 ? in->dtype : WGT_F32;
    float *f = malloc(sizeof *f * (size_t)(n ? n : 1));
    uint16_t *h = malloc(sizeof *h * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) f[i] = (float)vals[i], h[i] = wgt_f32_to_f16((float)vals[i]);
    wgt_tensor *t = dt == WGT_F16 ? wgt_tensor_from_data(ctx, dt, nd, shape, h, (size_t)n * 2, WGT_USAGE_DEFAULT)
                                  : wgt_tensor_from_data(ctx, dt, nd, shape, f, (size_t)n * 4, WGT_USAGE_DEFAULT);
    free(f);
    free(h);
    return t;
}

static wgt_tensor *view_of(wgt_tensor *leaf, const gc_input *in) {
    if (in->view == GC_TRANSPOSED && in->ndim >= 2) return wgt_transpose(leaf, -1, -2);
    if (in->view == GC_STEPPED && in->ndim >= 1) return wgt_slice(leaf, 0, 1, 2 * in->shape[0] + 1, 2);
    return wgt_retain(leaf);
}

static double weight(int64_t i) { return sin(1.7 * (double)i + 0.3); }

/* L = sum(f(x) * R) in double, on ctx; NaN on failure. */
static double loss_host(wgt_context *ctx, const gc_case *c, double *const *vals) {
    wgt_tensor *leaf[4] = {0}, *x[4] = {0};
    for (int i = 0; i < c->nin; i++) {
        leaf[i] = make_leaf(ctx, &c->in[i], vals[i], 1);
        x[i] = view_of(leaf[i], &c->in[i]);
    }
    wgt_tensor *y = c->f(x);
    double L = NAN;
    double *v = y ? test_read_f64(y) : NULL;
    if (v) {
        L = 0;
        for (int64_t i = 0; i < wgt_tensor_numel(y); i++) L += v[i] * weight(i);
    }
    free(v);
    wgt_release(y);
    for (int i = 0; i < c->nin; i++) wgt_release(x[i]), wgt_release(leaf[i]);
    return L;
}

void gradcheck(wgt_context *ctx, const gc_case *c) {
    double *vals[4] = {0};
    int64_t n[4] = {0};
    uint64_t seed = 12345;
    for (int i = 0; i < c->nin; i++) {
        int64_t shape[4];
        int nd = leaf_shape(&c->in[i], shape);
        n[i] = 1;
        for (int d = 0; d < nd; d++) n[i] *= shape[d];
        vals[i] = malloc(sizeof(double) * (size_t)(n[i] ? n[i] : 1));
        for (int64_t j = 0; j < n[i]; j++) {
            vals[i][j] = draw(&seed, &c->in[i]);
            if (c->in[i].dtype == WGT_F16) vals[i][j] = wgt_f16_to_f32(wgt_f32_to_f16((float)vals[i][j]));
            else vals[i][j] = (float)vals[i][j];
        }
    }
    /* The analytic gradient on ctx. */
    wgt_tensor *leaf[4] = {0}, *x[4] = {0};
    for (int i = 0; i < c->nin; i++) {
        leaf[i] = make_leaf(ctx, &c->in[i], vals[i], 0);
        if (c->in[i].view != GC_CONST) CHECK(wgt_requires_grad(leaf[i], 1) == WGT_OK, "%s: %s", c->name, wgt_last_error());
        x[i] = view_of(leaf[i], &c->in[i]);
    }
    wgt_tensor *y = c->f(x);
    CHECK(y, "%s: the op failed: %s", c->name, wgt_last_error());
    wgt_tensor *R = NULL, *yr = NULL, *L = NULL;
    if (y) {
        int64_t ny = wgt_tensor_numel(y);
        float *w = malloc(sizeof *w * (size_t)(ny ? ny : 1));
        for (int64_t i = 0; i < ny; i++) w[i] = (float)weight(i);
        R = wgt_tensor_from_data(ctx, WGT_F32, wgt_tensor_ndim(y), wgt_tensor_shape(y), w, (size_t)ny * 4,
                                 WGT_USAGE_DEFAULT);
        free(w);
        wgt_tensor *yf = wgt_tensor_dtype(y) == WGT_F32 ? wgt_retain(y) : wgt_cast(y, WGT_F32);
        yr = wgt_mul(yf, R);
        wgt_release(yf);
        L = wgt_sum(yr, 0, NULL, 0);
        CHECK(L && wgt_backward(L, NULL) == WGT_OK, "%s: backward failed: %s", c->name, wgt_last_error());
    }
    wgt_context *cpu = test_new_context(WGT_BACKEND_CPU);
    for (int i = 0; cpu && y && i < c->nin; i++) {
        if (c->in[i].view == GC_CONST) continue;
        wgt_tensor *g = wgt_grad(leaf[i]);
        CHECK(g, "%s: input %d has no gradient", c->name, i);
        if (!g) continue;
        int64_t shape[4];
        int nd = leaf_shape(&c->in[i], shape);
        int same = wgt_tensor_ndim(g) == nd && wgt_tensor_dtype(g) == wgt_tensor_dtype(leaf[i]);
        for (int d = 0; same && d < nd; d++) same = wgt_tensor_shape(g)[d] == shape[d];
        CHECK(same, "%s: input %d's gradient has the wrong shape or type", c->name, i);
        double *an = same ? test_read_f64(g) : NULL;
        double *fd = malloc(sizeof(double) * (size_t)(n[i] ? n[i] : 1)), big = 0;
        for (int64_t j = 0; an && j < n[i]; j++) {
            double keep = vals[i][j], h = 2e-3 * fmax(1.0, fabs(keep));
            double xp = (float)(keep + h), xm = (float)(keep - h); /* the steps the f32 leaf holds */
            vals[i][j] = xp;
            double lp = loss_host(cpu, c, vals);
            vals[i][j] = xm;
            double lm = loss_host(cpu, c, vals);
            vals[i][j] = keep;
            fd[j] = (lp - lm) / (xp - xm);
            big = fmax(big, fabs(fd[j]));
        }
        double rtol = c->rtol > 0 ? c->rtol : 1e-2;
        int bad = 0;
        for (int64_t j = 0; an && j < n[i]; j++) {
            /* f16: the op's result and its gradient are rounded to 11 bits, several times over */
            double tol = c->in[i].dtype == WGT_F16 ? fmax(rtol, 3e-2) * fabs(fd[j]) + 1e-2 * fmax(1.0, big)
                                                   : rtol * fabs(fd[j]) + 2e-3 * fmax(1.0, big);
            if (!(fabs(an[j] - fd[j]) <= tol) && bad++ < 3)
                CHECK(0, "%s [%s]: d/d input %d [%lld]: autograd %.7g, finite differences %.7g", c->name,
                      test_backend_name(), i, (long long)j, an[j], fd[j]);
        }
        free(an);
        free(fd);
        wgt_release(g);
    }
    if (cpu) wgt_context_release(cpu);
    wgt_release(L);
    wgt_release(yr);
    wgt_release(R);
    wgt_release(y);
    for (int i = 0; i < c->nin; i++) wgt_release(x[i]), wgt_release(leaf[i]), free(vals[i]);
}
