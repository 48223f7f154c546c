/*
 * dropout, batch_norm, group_norm and interpolate (src/core/nn_layers.c) on both backends:
 * dropout's mask against the generator's reference bit for bit and across the backends, the
 * normalisations and interpolation against float64 references on odd shapes, strided
 * inputs and empty batches, interpolation also against values PyTorch gives, and the error
 * statuses. Gradients: test_nn_layers_grad.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "philox_ref.h"
#include "reference.h"
#include "test.h"

/* An f32 tensor of n values uniform in [lo, hi) from the test's own sequence (vals gets them). */
static wgt_tensor *filled(wgt_context *ctx, int ndim, const int64_t *shape, double lo, double hi, uint64_t seed,
                          double *vals) {
    int64_t n = numel_of(ndim, shape);
    float *f = malloc(sizeof *f * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) {
        f[i] = (float)(lo + (hi - lo) * (double)(next_u64(&seed) >> 11) * 0x1p-53);
        if (vals) vals[i] = f[i];
    }
    wgt_tensor *t = wgt_tensor_from_data(ctx, WGT_F32, ndim, shape, f, sizeof *f * (size_t)n, WGT_USAGE_DEFAULT);
    free(f);
    return t;
}

/* got (read from t) against want within tol * (1 + |want|). */
static void check_close(wgt_tensor *t, const double *want, int64_t n, double tol, const char *what) {
    CHECK(t, "%s: %s", what, wgt_last_error());
    if (!t) return;
    CHECK(wgt_tensor_numel(t) == n, "%s: %lld elements, wanted %lld", what, (long long)wgt_tensor_numel(t), (long long)n);
    double *got = test_read_f64(t);
    CHECK(got || n == 0, "%s: read: %s", what, wgt_last_error());
    for (int64_t i = 0, bad = 0; got && i < n && bad < 3; i++)
        if (!(fabs(got[i] - want[i]) <= tol * (1 + fabs(want[i])))) {
            bad++;
            CHECK(0, "%s: element %lld is %.9g, wanted %.9g", what, (long long)i, got[i], want[i]);
        }
    free(got);
}

/* ---- dropout ---- */

TEST_BACKENDS(dropout_mask_is_the_generators) {
    int64_t shape[2] = {13, 7}, n = 91;
    double x[91];
    wgt_tensor *base = filled(ctx, 2, shape, -2, 2, 1, x);
    wgt_tensor *xt = wgt_transpose(base, 0, 1); /* [7, 13], strided */
    double p = 0.3;
    wgt_tensor *y = wgt_dropout(xt, p, 77);
    float scale = (float)(1 / (1 - p));
    double want[91];
    int kept = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t r = i / 13, c = i % 13; /* position in xt; x is base's row-major values */
        float u = uniform_ref(77, i, 0, 1, nextafterf(1, 0));
        int keep = u >= (float)p;
        kept += keep;
        want[i] = keep ? (double)((float)x[c * 7 + r] * scale) : 0;
    }
    CHECK(kept > 40 && kept < 85, "kept %d of 91", kept);
    check_exact(y, want, n, "dropout p 0.3");
    wgt_release(y);

    /* p = 0: x itself; p = 1: zeros; an empty tensor stays empty. */
    y = wgt_dropout(xt, 0, 5);
    for (int64_t i = 0; i < n; i++) want[i] = x[(i % 13) * 7 + i / 13];
    check_exact(y, want, n, "dropout p 0");
    wgt_release(y);
    y = wgt_dropout(xt, 1, 5);
    for (int64_t i = 0; i < n; i++) want[i] = 0;
    check_exact(y, want, n, "dropout p 1");
    wgt_release(y);
    int64_t empty[2] = {0, 3};
    wgt_tensor *e = wgt_zeros(ctx, WGT_F32, 2, empty), *ye = wgt_dropout(e, 0.5, 1);
    CHECK(ye && wgt_tensor_numel(ye) == 0, "%s", wgt_last_error());
    wgt_release(e), wgt_release(ye);

    CHECK_ERROR(!wgt_dropout(xt, -0.1, 1), WGT_ERR_INVALID_ARGUMENT, "p = -0.1");
    CHECK_ERROR(!wgt_dropout(xt, 1.5, 1), WGT_ERR_INVALID_ARGUMENT, "p = 1.5");
    CHECK_ERROR(!wgt_dropout(xt, NAN, 1), WGT_ERR_INVALID_ARGUMENT, "p = nan");
    wgt_tensor *ints = wgt_zeros(ctx, WGT_I32, 2, shape);
    CHECK_ERROR(!wgt_dropout(ints, 0.5, 1), WGT_ERR_DTYPE, "i32");
    wgt_release(ints);
    wgt_release(xt), wgt_release(base);
}

/* One seed, one mask: the backends keep exactly the same elements of a large f16 tensor, and
 * the share kept is 1 - p within five standard errors. */
TEST(dropout_same_mask_on_both_backends) {
    wgt_context *cpu, *gpu;
    if (!test_backend_pair(&cpu, &gpu)) return;
    int64_t shape[2] = {301, 333}, n = 301 * 333;
    wgt_tensor *y[2];
    wgt_context *ctxs[2] = {cpu, gpu};
    for (int k = 0; k < 2; k++) {
        wgt_tensor *ones = wgt_ones(ctxs[k], WGT_F16, 2, shape);
        y[k] = wgt_dropout(ones, 0.25, 0xfeedull << 32);
        wgt_release(ones);
    }
    uint16_t *a = malloc(2 * (size_t)n), *b = malloc(2 * (size_t)n);
    CHECK(y[0] && y[1] && wgt_tensor_read(y[0], a, 2 * (size_t)n) == WGT_OK &&
              wgt_tensor_read(y[1], b, 2 * (size_t)n) == WGT_OK,
          "%s", wgt_last_error());
    CHECK(!memcmp(a, b, 2 * (size_t)n), "the masks differ between the backends");
    int64_t kept = 0;
    for (int64_t i = 0; i < n; i++) kept += a[i] != 0;
    double share = (double)kept / n, se = sqrt(0.75 * 0.25 / n);
    CHECK(fabs(share - 0.75) < 5 * se, "kept %.5f, wanted 0.75", share);
    free(a), free(b);
    wgt_release(y[0]), wgt_release(y[1]);
    wgt_context_release(cpu);
    wgt_context_release(gpu);
}

/* In a compiled graph the mask is drawn once, when recorded: two dispatches with different
 * inputs use the same mask, the one an eager call with the seed gives. */
TEST_BACKENDS(dropout_in_a_graph_replays_its_mask) {
    int64_t shape[1] = {257};
    wgt_tensor *in = wgt_graph_input(ctx, "x", WGT_F32, 1, shape);
    wgt_tensor *y = wgt_dropout(in, 0.5, 31);
    wgt_binding ob = {"y", y};
    wgt_graph *g = y ? wgt_graph_build(ctx, 1, &ob) : NULL;
    CHECK(g, "%s", wgt_last_error());
    double want[257];
    for (int round = 0; g && round < 2; round++) {
        double xs[257];
        wgt_tensor *x = filled(ctx, 1, shape, 1, 2, 40 + (uint64_t)round, xs), *out = wgt_zeros(ctx, WGT_F32, 1, shape);
        wgt_binding ib = {"x", x}, obd = {"y", out};
        CHECK(wgt_graph_dispatch(g, 1, &ib, 1, &obd) == WGT_OK, "%s", wgt_last_error());
        for (int i = 0; i < 257; i++)
            want[i] = uniform_ref(31, i, 0, 1, nextafterf(1, 0)) >= 0.5f ? (double)((float)xs[i] * 2.0f) : 0;
        check_exact(out, want, 257, round ? "second dispatch" : "first dispatch");
        wgt_release(x), wgt_release(out);
    }
    wgt_graph_release(g);
    wgt_release(y), wgt_release(in);
}

/* With the seed as a graph input, each dispatch draws the mask of the seed bound to it, the
 * mask wgt_dropout gives for that seed; a seed tensor of the wrong type or shape is refused. */
TEST_BACKENDS(dropout_seeded_in_a_graph_draws_per_dispatch) {
    int64_t shape[2] = {9, 29}, two[1] = {2};
    wgt_tensor *in = wgt_graph_input(ctx, "x", WGT_F32, 2, shape), *sd = wgt_graph_input(ctx, "seed", WGT_U32, 1, two);
    wgt_tensor *y = wgt_dropout_seeded(in, 0.4, sd);
    wgt_binding ob = {"y", y};
    wgt_graph *g = y ? wgt_graph_build(ctx, 1, &ob) : NULL;
    CHECK(g, "%s", wgt_last_error());
    static const uint64_t seeds[3] = {3, 0x500000003ull, 3};
    double xs[261], want[261];
    wgt_tensor *x = filled(ctx, 2, shape, 1, 2, 50, xs);
    for (int round = 0; g && round < 3; round++) {
        uint32_t words[2] = {(uint32_t)seeds[round], (uint32_t)(seeds[round] >> 32)};
        wgt_tensor *s = wgt_tensor_from_data(ctx, WGT_U32, 1, two, words, sizeof words, WGT_USAGE_DEFAULT);
        wgt_tensor *out = wgt_zeros(ctx, WGT_F32, 2, shape);
        wgt_binding ib[2] = {{"x", x}, {"seed", s}}, obd = {"y", out};
        CHECK(wgt_graph_dispatch(g, 2, ib, 1, &obd) == WGT_OK, "%s", wgt_last_error());
        for (int i = 0; i < 261; i++)
            want[i] = uniform_ref(seeds[round], i, 0, 1, nextafterf(1, 0)) >= 0.4f ? (double)((float)xs[i] * (float)(1 / 0.6)) : 0;
        check_exact(out, want, 261, "graph dispatch");
        wgt_tensor *eager = wgt_dropout(x, 0.4, seeds[round]);
        check_exact(eager, want, 261, "wgt_dropout with the same seed");
        wgt_release(eager), wgt_release(s), wgt_release(out);
    }
    wgt_graph_release(g);
    wgt_release(y), wgt_release(in), wgt_release(sd);
    wgt_tensor *bad = wgt_zeros(ctx, WGT_I32, 1, two), *three = wgt_zeros(ctx, WGT_U32, 1, (int64_t[]){3});
    CHECK_ERROR(!wgt_dropout_seeded(x, 0.5, bad), WGT_ERR_INVALID_ARGUMENT, "seed is i32 [2]");
    CHECK_ERROR(!wgt_dropout_seeded(x, 0.5, three), WGT_ERR_INVALID_ARGUMENT, "seed is u32 [3]");
    wgt_release(bad), wgt_release(three), wgt_release(x);
}

/* ---- batch_norm and group_norm ---- */

static void batch_norm_case(wgt_context *ctx, int ndim, const int64_t *shape, int strided, int affine) {
    int64_t n = numel_of(ndim, shape), c = shape[1], inner = n / (shape[0] ? shape[0] : 1) / c;
    double *x = malloc(sizeof *x * (size_t)(n ? n : 1)), *want = malloc(sizeof *want * (size_t)(n ? n : 1));
    double m[16], v[16], w[16], b[16];
    int64_t cs[1] = {c};
    wgt_tensor *tm = filled(ctx, 1, cs, -1, 1, 2, m), *tv = filled(ctx, 1, cs, 0.1, 3, 3, v);
    wgt_tensor *tw = affine ? filled(ctx, 1, cs, -2, 2, 4, w) : NULL, *tb = affine ? filled(ctx, 1, cs, -1, 1, 5, b) : NULL;
    /* strided: x is the transpose of a contiguous tensor with the first two dims swapped. */
    int64_t sw[WGT_MAX_DIMS];
    memcpy(sw, shape, sizeof(int64_t) * (size_t)ndim);
    sw[0] = shape[1], sw[1] = shape[0];
    double *raw = malloc(sizeof *raw * (size_t)(n ? n : 1));
    wgt_tensor *base = filled(ctx, ndim, strided ? sw : shape, -3, 3, 6, raw);
    wgt_tensor *xt = strided ? wgt_transpose(base, 0, 1) : wgt_retain(base);
    for (int64_t i = 0; i < n; i++) {
        int64_t at[WGT_MAX_DIMS];
        coords(ndim, shape, i, at);
        if (strided) {
            int64_t t = at[0];
            at[0] = at[1], at[1] = t;
        }
        x[i] = raw[flat_of(ndim, strided ? sw : shape, at)];
        int64_t ch = (i / inner) % c;
        want[i] = (x[i] - m[ch]) / sqrt(v[ch] + 1e-5) * (affine ? w[ch] : 1) + (affine ? b[ch] : 0);
    }
    wgt_tensor *y = wgt_batch_norm(xt, tm, tv, tw, tb, 1e-5);
    check_close(y, want, n, 4e-6, "batch_norm");
    wgt_release(y);
    wgt_release(xt), wgt_release(base), wgt_release(tm), wgt_release(tv), wgt_release(tw), wgt_release(tb);
    free(x), free(want), free(raw);
}

TEST_BACKENDS(batch_norm_matches_float64) {
    int64_t s4[4] = {3, 5, 4, 7}, s2[2] = {9, 3}, s3[3] = {2, 7, 11}, e4[4] = {0, 5, 2, 2};
    batch_norm_case(ctx, 4, s4, 0, 1);
    batch_norm_case(ctx, 4, s4, 1, 1);
    batch_norm_case(ctx, 2, s2, 0, 0);
    batch_norm_case(ctx, 3, s3, 1, 0);
    batch_norm_case(ctx, 4, e4, 0, 1);

    int64_t c5[1] = {5}, c4[1] = {4};
    wgt_tensor *x = wgt_zeros(ctx, WGT_F32, 4, s4), *m = wgt_zeros(ctx, WGT_F32, 1, c5), *m4 = wgt_zeros(ctx, WGT_F32, 1, c4);
    wgt_tensor *mh = wgt_zeros(ctx, WGT_F16, 1, c5), *x1 = wgt_zeros(ctx, WGT_F32, 1, c5);
    CHECK_ERROR(!wgt_batch_norm(x, m4, m, NULL, NULL, 1e-5), WGT_ERR_SHAPE, "running_mean has shape [4]");
    CHECK_ERROR(!wgt_batch_norm(x, m, mh, NULL, NULL, 1e-5), WGT_ERR_DTYPE, "running_var is f16");
    CHECK_ERROR(!wgt_batch_norm(x, NULL, m, NULL, NULL, 1e-5), WGT_ERR_INVALID_ARGUMENT, "running_mean is NULL");
    CHECK_ERROR(!wgt_batch_norm(x1, m, m, NULL, NULL, 1e-5), WGT_ERR_SHAPE, "rank 1");
    CHECK_ERROR(!wgt_batch_norm(x, m, m, NULL, NULL, -1), WGT_ERR_INVALID_ARGUMENT, "eps = -1");
    CHECK_ERROR(!wgt_batch_norm(x, m, m, m4, NULL, 1e-5), WGT_ERR_SHAPE, "weight has shape [4]");
    wgt_release(x), wgt_release(m), wgt_release(m4), wgt_release(mh), wgt_release(x1);
}

static void group_norm_case(wgt_context *ctx, int ndim, const int64_t *shape, int64_t groups, int strided, int affine) {
    int64_t n = numel_of(ndim, shape), c = shape[1], inner = n / (shape[0] ? shape[0] : 1) / c;
    double *x = malloc(sizeof *x * (size_t)(n ? n : 1)), *want = malloc(sizeof *want * (size_t)(n ? n : 1));
    double w[16], b[16];
    int64_t cs[1] = {c};
    wgt_tensor *tw = affine ? filled(ctx, 1, cs, -2, 2, 4, w) : NULL, *tb = affine ? filled(ctx, 1, cs, -1, 1, 5, b) : NULL;
    int64_t sw[WGT_MAX_DIMS];
    memcpy(sw, shape, sizeof(int64_t) * (size_t)ndim);
    sw[ndim - 1] = shape[ndim - 2], sw[ndim - 2] = shape[ndim - 1];
    double *raw = malloc(sizeof *raw * (size_t)(n ? n : 1));
    /* Values around 100 with spread 1: a one-pass variance would lose most digits. */
    wgt_tensor *base = filled(ctx, ndim, strided ? sw : shape, 99, 101, 7, raw);
    wgt_tensor *xt = strided ? wgt_transpose(base, -1, -2) : wgt_retain(base);
    for (int64_t i = 0; i < n; i++) {
        int64_t at[WGT_MAX_DIMS];
        coords(ndim, shape, i, at);
        if (strided) {
            int64_t t = at[ndim - 1];
            at[ndim - 1] = at[ndim - 2], at[ndim - 2] = t;
        }
        x[i] = raw[flat_of(ndim, strided ? sw : shape, at)];
    }
    int64_t gsize = c / groups * inner;
    for (int64_t s = 0; shape[0] && s < shape[0] * groups; s++) {
        double mean = 0, var = 0;
        for (int64_t k = 0; k < gsize; k++) mean += x[s * gsize + k];
        mean /= gsize;
        for (int64_t k = 0; k < gsize; k++) var += (x[s * gsize + k] - mean) * (x[s * gsize + k] - mean);
        var /= gsize;
        for (int64_t k = 0; k < gsize; k++) {
            int64_t i = s * gsize + k, ch = (i / inner) % c;
            want[i] = (x[i] - mean) / sqrt(var + 1e-5) * (affine ? w[ch] : 1) + (affine ? b[ch] : 0);
        }
    }
    wgt_tensor *y = wgt_group_norm(xt, groups, tw, tb, 1e-5);
    /* Inputs near 100 carry ~3e-6 of relative rounding into the centred values. */
    check_close(y, want, n, 2e-4, "group_norm");
    wgt_release(y);
    wgt_release(xt), wgt_release(base), wgt_release(tw), wgt_release(tb);
    free(x), free(want), free(raw);
}

TEST_BACKENDS(group_norm_matches_float64) {
    int64_t s4[4] = {2, 6, 3, 5}, s3[3] = {3, 4, 9}, e4[4] = {0, 6, 2, 2};
    group_norm_case(ctx, 4, s4, 3, 0, 1);
    group_norm_case(ctx, 4, s4, 2, 1, 1);
    group_norm_case(ctx, 4, s4, 6, 0, 0);
    group_norm_case(ctx, 3, s3, 1, 1, 0);
    group_norm_case(ctx, 4, e4, 3, 0, 1);

    int64_t c6[1] = {6};
    wgt_tensor *x = wgt_zeros(ctx, WGT_F32, 4, s4), *w = wgt_zeros(ctx, WGT_F32, 1, c6);
    CHECK_ERROR(!wgt_group_norm(x, 4, NULL, NULL, 1e-5), WGT_ERR_INVALID_ARGUMENT, "4 groups do not divide 6");
    CHECK_ERROR(!wgt_group_norm(x, 0, NULL, NULL, 1e-5), WGT_ERR_INVALID_ARGUMENT, "0 groups");
    CHECK_ERROR(!wgt_group_norm(x, 3, w, x, 1e-5), WGT_ERR_SHAPE, "bias has shape [2, 6, 3, 5]");
    wgt_release(x), wgt_release(w);
}

/* ---- interpolate ---- */

/* PyTorch's results on small inputs. */
TEST_BACKENDS(interpolate_known_values) {
    float row[3] = {1, 2, 4};
    int64_t s[3] = {1, 1, 3};
    wgt_tensor *x = wgt_tensor_from_data(ctx, WGT_F32, 3, s, row, sizeof row, WGT_USAGE_DEFAULT);
    int64_t up[1] = {5}, down[1] = {2};
    wgt_tensor *y = wgt_interpolate(x, up, NULL, WGT_INTERP_LINEAR, 1);
    check_exact(y, (double[]){1, 1.5, 2, 3, 4}, 5, "linear align_corners 3 -> 5");
    wgt_release(y);
    /* Without align_corners, 3 -> 5: sources (o + 0.5) 0.6 - 0.5 = -0.2 (0), 0.4, 1, 1.6, 2.2 (2). */
    y = wgt_interpolate(x, up, NULL, WGT_INTERP_LINEAR, 0);
    check_close(y, (double[]){1, 1.4, 2, 3.2, 4}, 5, 1e-6, "linear 3 -> 5");
    wgt_release(y);
    y = wgt_interpolate(x, down, NULL, WGT_INTERP_NEAREST, 0);
    check_exact(y, (double[]){1, 2}, 2, "nearest 3 -> 2");
    wgt_release(y);
    y = wgt_interpolate(x, down, NULL, WGT_INTERP_NEAREST_EXACT, 0);
    check_exact(y, (double[]){1, 4}, 2, "nearest-exact 3 -> 2");
    wgt_release(y);
    double two[1] = {2};
    y = wgt_interpolate(x, NULL, two, WGT_INTERP_NEAREST, 0);
    check_exact(y, (double[]){1, 1, 2, 2, 4, 4}, 6, "nearest scale 2");
    wgt_release(y);
    wgt_release(x);
}

/* The float64 reference: PyTorch's source positions (f32) and weights, the sum in double. */
static void interp_ref(const double *x, int ndim, const int64_t *shape, const int64_t *out, const double *ratio,
                       wgt_interp_mode mode, int align, double *want) {
    int64_t on = numel_of(ndim, out);
    int ns = ndim - 2;
    for (int64_t i = 0; i < on; i++) {
        int64_t at[WGT_MAX_DIMS], src[WGT_MAX_DIMS];
        coords(ndim, out, i, at);
        int64_t lo[3], hi[3];
        double l1[3];
        for (int k = 0; k < ns; k++) {
            int64_t in = shape[k + 2], o = at[k + 2], len = out[k + 2];
            float r = (float)ratio[k], s;
            if (mode == WGT_INTERP_NEAREST) s = in == len ? (float)o : floorf((float)o * r);
            else if (mode == WGT_INTERP_NEAREST_EXACT) s = in == len ? (float)o : floorf(((float)o + 0.5f) * r);
            else if (align) s = len > 1 ? (float)o * ((float)(in - 1) / (float)(len - 1)) : 0;
            else s = fmaxf(((float)o + 0.5f) * r - 0.5f, 0);
            lo[k] = (int64_t)s < in - 1 ? (int64_t)s : in - 1;
            hi[k] = lo[k] + (lo[k] < in - 1);
            l1[k] = mode == WGT_INTERP_LINEAR ? (double)(s - (float)lo[k]) : 0;
        }
        double acc = 0;
        for (int corner = 0; corner < (1 << ns); corner++) {
            double wgt = 1;
            src[0] = at[0], src[1] = at[1];
            for (int k = 0; k < ns; k++) {
                int up_k = corner >> k & 1;
                src[k + 2] = up_k ? hi[k] : lo[k];
                wgt *= up_k ? l1[k] : 1 - l1[k];
            }
            if (wgt != 0) acc += wgt * x[flat_of(ndim, shape, src)];
        }
        want[i] = acc;
    }
}

static void interp_case(wgt_context *ctx, int ndim, const int64_t *shape, const int64_t *size, const double *scale,
                        wgt_interp_mode mode, int align) {
    int64_t n = numel_of(ndim, shape), out[WGT_MAX_DIMS];
    double ratio[3];
    out[0] = shape[0], out[1] = shape[1];
    for (int k = 0; k < ndim - 2; k++) {
        out[k + 2] = size ? size[k] : (int64_t)floor((double)shape[k + 2] * scale[k]);
        ratio[k] = size ? (double)shape[k + 2] / (double)size[k] : 1 / scale[k];
    }
    double *x = malloc(sizeof *x * (size_t)(n ? n : 1));
    /* Strided: the input is a view stepping over every other element of the last dimension. */
    int64_t wide[WGT_MAX_DIMS];
    memcpy(wide, shape, sizeof(int64_t) * (size_t)ndim);
    wide[ndim - 1] *= 2;
    double *raw = malloc(sizeof *raw * (size_t)numel_of(ndim, wide) + 8);
    wgt_tensor *base = filled(ctx, ndim, wide, -1, 1, 8, raw);
    wgt_tensor *xv = wgt_slice(base, ndim - 1, 0, wide[ndim - 1], 2);
    for (int64_t i = 0; i < n; i++) x[i] = raw[2 * i];
    int64_t on = numel_of(ndim, out);
    double *want = malloc(sizeof *want * (size_t)(on ? on : 1));
    interp_ref(x, ndim, shape, out, ratio, mode, align, want);
    wgt_tensor *y = wgt_interpolate(xv, size, scale, mode, align);
    CHECK(!y || (wgt_tensor_ndim(y) == ndim && !memcmp(wgt_tensor_shape(y), out, sizeof(int64_t) * (size_t)ndim)),
          "output shape");
    check_close(y, want, on, 1e-6, mode == WGT_INTERP_LINEAR ? "linear" : "nearest");
    wgt_release(y), wgt_release(xv), wgt_release(base);
    free(x), free(raw), free(want);
}

TEST_BACKENDS(interpolate_matches_float64) {
    int64_t s4[4] = {2, 3, 5, 7}, s3[3] = {2, 2, 9}, s5[5] = {1, 2, 3, 4, 5}, e4[4] = {0, 3, 5, 7};
    int64_t up[2] = {9, 11}, down[2] = {3, 4}, one[2] = {1, 1}, l3[1] = {4}, t3[3] = {5, 2, 7};
    double sc[2] = {1.7, 0.6}, sc1[1] = {2.5};
    for (int mode = 0; mode < 3; mode++) {
        interp_case(ctx, 4, s4, up, NULL, (wgt_interp_mode)mode, 0);
        interp_case(ctx, 4, s4, down, NULL, (wgt_interp_mode)mode, 0);
        interp_case(ctx, 4, s4, NULL, sc, (wgt_interp_mode)mode, 0);
        interp_case(ctx, 3, s3, l3, NULL, (wgt_interp_mode)mode, 0);
        interp_case(ctx, 3, s3, NULL, sc1, (wgt_interp_mode)mode, 0);
        interp_case(ctx, 5, s5, t3, NULL, (wgt_interp_mode)mode, 0);
        interp_case(ctx, 4, e4, up, NULL, (wgt_interp_mode)mode, 0);
    }
    interp_case(ctx, 4, s4, up, NULL, WGT_INTERP_LINEAR, 1);
    interp_case(ctx, 4, s4, down, NULL, WGT_INTERP_LINEAR, 1);
    interp_case(ctx, 4, s4, one, NULL, WGT_INTERP_LINEAR, 1);
    interp_case(ctx, 4, s4, one, NULL, WGT_INTERP_LINEAR, 0);

    wgt_tensor *x = wgt_zeros(ctx, WGT_F32, 4, s4);
    int64_t zero[2] = {0, 3};
    double neg[2] = {-1, 2};
    CHECK_ERROR(!wgt_interpolate(x, up, sc, WGT_INTERP_LINEAR, 0), WGT_ERR_INVALID_ARGUMENT, "both given");
    CHECK_ERROR(!wgt_interpolate(x, NULL, NULL, WGT_INTERP_LINEAR, 0), WGT_ERR_INVALID_ARGUMENT, "neither given");
    CHECK_ERROR(!wgt_interpolate(x, zero, NULL, WGT_INTERP_LINEAR, 0), WGT_ERR_INVALID_ARGUMENT, "size[0] = 0");
    CHECK_ERROR(!wgt_interpolate(x, NULL, neg, WGT_INTERP_LINEAR, 0), WGT_ERR_INVALID_ARGUMENT, "scale[0] = -1");
    CHECK_ERROR(!wgt_interpolate(x, up, NULL, WGT_INTERP_NEAREST, 1), WGT_ERR_INVALID_ARGUMENT, "align_corners");
    CHECK_ERROR(!wgt_interpolate(x, up, NULL, (wgt_interp_mode)7, 0), WGT_ERR_INVALID_ARGUMENT, "unknown mode 7");
    wgt_tensor *x2 = wgt_zeros(ctx, WGT_F32, 2, s4), *xi = wgt_zeros(ctx, WGT_I32, 4, s4);
    CHECK_ERROR(!wgt_interpolate(x2, up, NULL, WGT_INTERP_LINEAR, 0), WGT_ERR_SHAPE, "rank 2");
    CHECK_ERROR(!wgt_interpolate(xi, up, NULL, WGT_INTERP_LINEAR, 0), WGT_ERR_DTYPE, "i32");
    wgt_release(x), wgt_release(x2), wgt_release(xi);
}
