/*
 * f32 rows not aligned to 4 elements, which the WebGPU row kernel reads as the aligned vec4
 * units covering each row with the other components masked, and writes element by element:
 * softmax, log_softmax, logsumexp over the last axis, layer_norm (weight and bias) and
 * rms_norm (weight) for row lengths 1, 3, 5 and 50257, rows starting at every position in
 * a unit (padded and offset views of a larger storage), storages ending inside a unit (the
 * last unit read past the vec4 array's end) and storages under one unit, against float64,
 * on both backends.
 *
 * The storage around the rows holds 30, so a masked component that leaks into a row's max or
 * sums moves its results by e^30 (or the mean by far more than the tolerance); the rows hold
 * values in [-2, 2]. Rows of 1, 3 and 5 lose a large share if a component of theirs is
 * masked away. Tolerances: a few ulp per operation plus 2 sqrt(n) + 8 ulp for the sums'
 * rounding, as test_norm.c derives, with room (64 u), far below either failure.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#define U 5.9604644775390625e-8

enum { SOFTMAX, LOG_SOFTMAX, LOGSUMEXP, LAYER_NORM, RMS_NORM, NOPS };
static const char *const names[NOPS] = {"softmax", "log_softmax", "logsumexp", "layer_norm", "rms_norm"};

typedef struct {
    int64_t rows, len, row_stride, start; /* row r at element start + r * row_stride */
    int64_t pad;                          /* elements of the storage past the last row */
} span_case;

/* The [rows, len] view of a 1-D f32 storage of 30s with the rows' elements in [-2, 2]. */
static wgt_tensor *span_view(wgt_context *ctx, const span_case *c, uint64_t *seed) {
    int64_t n = c->start + (c->rows - 1) * c->row_stride + c->len + c->pad;
    float *v = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; i++) v[i] = 30.0f;
    for (int64_t r = 0; r < c->rows; r++)
        for (int64_t j = 0; j < c->len; j++) {
            *seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
            v[c->start + r * c->row_stride + j] = (float)((double)(*seed >> 40) / 16777216.0 * 4 - 2);
        }
    wgt_tensor *s = wgt_tensor_from_data(ctx, WGT_F32, 1, &n, v, sizeof(float) * (size_t)n, WGT_USAGE_DEFAULT);
    free(v);
    int64_t shape[2] = {c->rows, c->len}, strides[2] = {c->row_stride, 1};
    wgt_tensor *view = s ? wgt_as_strided(s, 2, shape, strides, c->start) : NULL;
    wgt_release(s);
    return view;
}

static wgt_tensor *apply(int op, wgt_tensor *a, wgt_tensor *w, wgt_tensor *b) {
    int last = -1;
    switch (op) {
    case SOFTMAX: return wgt_softmax(a, -1);
    case LOG_SOFTMAX: return wgt_log_softmax(a, -1);
    case LOGSUMEXP: return wgt_logsumexp(a, 1, &last, 0);
    case LAYER_NORM: return wgt_layer_norm(a, w, b, 1e-5);
    default: return wgt_rms_norm(a, w, 1e-5);
    }
}

/* Checks row r of op's result (out: its len values, or one for logsumexp) against float64. */
static int check_row(int op, const double *x, int64_t len, const double *w, const double *b, const double *out,
                     const char *what, int64_t r) {
    double m = -INFINITY, s = 0, mean = 0, sq = 0;
    for (int64_t j = 0; j < len; j++) m = fmax(m, x[j]), mean += x[j] / (double)len;
    for (int64_t j = 0; j < len; j++) s += exp(x[j] - m), sq += (x[j] - mean) * (x[j] - mean);
    double ms = 0;
    for (int64_t j = 0; j < len; j++) ms += x[j] * x[j] / (double)len;
    double lse = m + log(s), grow = (2 * sqrt((double)len) + 64) * U;
    for (int64_t j = 0; j < (op == LOGSUMEXP ? 1 : len); j++) {
        double want, tol;
        switch (op) {
        case SOFTMAX: want = exp(x[j] - lse), tol = want * (grow + 8 * U * fabs(x[j] - lse)); break;
        case LOG_SOFTMAX: want = x[j] - lse, tol = grow + 4 * U * fabs(want); break;
        case LOGSUMEXP: want = lse, tol = grow + 4 * U * fabs(want); break;
        case LAYER_NORM: {
            double xh = (x[j] - mean) / sqrt(sq / (double)len + 1e-5);
            want = xh * w[j] + b[j], tol = grow * (fabs(xh * w[j]) + 1) + 4 * U * fabs(want);
            break;
        }
        default: {
            double xh = x[j] / sqrt(ms + 1e-5);
            want = xh * w[j], tol = grow * (fabs(want) + 1);
            break;
        }
        }
        if (!(fabs(out[j] - want) <= tol)) {
            CHECK(0, "%s %s: row %lld element %lld is %.9g, float64 %.9g (tolerance %.3g)", names[op], what,
                  (long long)r, (long long)j, out[j], want, tol);
            return 0;
        }
    }
    return 1;
}

static void check_case(wgt_context *ctx, const span_case *c, uint64_t *seed) {
    int64_t len = c->len;
    char what[128];
    snprintf(what, sizeof what, "[%lld, %lld] rows from element %lld, stride %lld, %lld after", (long long)c->rows,
             (long long)len, (long long)c->start, (long long)c->row_stride, (long long)c->pad);
    wgt_tensor *a = span_view(ctx, c, seed);
    /* weight and bias: consecutive elements from element 1 of their storage, not aligned either. */
    int64_t pn = len + 1;
    wgt_tensor *wp = wgt_rand_uniform(ctx, WGT_F32, 1, &pn, 0.5, 1.5, *seed + 1);
    wgt_tensor *bp = wgt_rand_uniform(ctx, WGT_F32, 1, &pn, -1, 1, *seed + 2);
    wgt_tensor *w = wp ? wgt_slice(wp, 0, 1, pn, 1) : NULL, *b = bp ? wgt_slice(bp, 0, 1, pn, 1) : NULL;
    double *x = a ? test_read_f64(a) : NULL, *wv = w ? test_read_f64(w) : NULL, *bv = b ? test_read_f64(b) : NULL;
    CHECK(x && wv && bv, "%s: inputs: %s", what, wgt_last_error());
    for (int op = 0; x && wv && bv && op < NOPS; op++) {
        wgt_tensor *r = apply(op, a, w, b);
        double *got = r ? test_read_f64(r) : NULL;
        CHECK(got && wgt_tensor_numel(r) == c->rows * (op == LOGSUMEXP ? 1 : len), "%s %s: %s", names[op], what,
              wgt_last_error());
        int64_t per = op == LOGSUMEXP ? 1 : len;
        for (int64_t row = 0; got && row < c->rows; row++)
            if (!check_row(op, x + row * len, len, wv, bv, got + row * per, what, row)) break;
        free(got);
        wgt_release(r);
    }
    free(x), free(wv), free(bv);
    wgt_release(a), wgt_release(w), wgt_release(b), wgt_release(wp), wgt_release(bp);
}

TEST_BACKENDS(rows_unaligned_f32_spans) {
    static const span_case cases[] = {
        {3, 1, 1, 0, 0},       /* 3 elements: under one unit */
        {7, 1, 3, 2, 1},       {7, 3, 3, 0, 0},       {7, 3, 4, 1, 0},      {7, 3, 5, 3, 2},
        {7, 5, 5, 0, 0},       {7, 5, 6, 1, 0},       {7, 5, 7, 2, 3},      {9, 5, 5, 3, 0},
        {2, 50257, 50257, 0, 0}, {3, 50257, 50259, 1, 0}, {2, 50257, 50257, 3, 2},
    };
    uint64_t seed = 4242;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_case(ctx, &cases[i], &seed);
}
