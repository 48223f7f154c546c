/*
 * layer_norm and rms_norm over the whole finite range of f32: rows whose squares overflow f32
 * (magnitudes 1e20 to FLT_MAX), rows whose squares underflow it (1e-20 down to subnormals),
 * rows mixing 1e30 with 1e-30, one huge element among tiny ones, constant huge rows, and
 * infinities and NaNs in such rows. Both backends must give the float64 answer of the formula
 * within a bound derived from f32 rounding (the same model as test_norm.c: the row's sums,
 * 1/sqrt, the products), which holds only if every row is computed at a scale where nothing
 * overflows or underflows; where the reference is +-1 the result must be that, not 0 or NaN.
 * Row lengths 1, 3, 257, 4099 and 10000 (past what the dense kernel keeps in registers),
 * dense and strided rows, weight and bias absent, dense, strided or broadcast, eps 0 and 1e-5.
 * f16 rows at f16's extremes are computed in f32 and checked the same way.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

/* f32's unit roundoff; the error bounds below are in these units. */
#define U 5.97e-8

static uint32_t rng(uint64_t *s) {
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(*s >> 32);
}

/* A signed factor in +-[0.5, 1), so no element of a row is far below the row's scale unless
 * the pattern puts it there. */
static double factor(uint64_t *s) {
    uint32_t r = rng(s);
    double f = 0.5 + (r >> 1) / 4294967296.0;
    return r & 1 ? -f : f;
}

/* The row patterns: one per row of each tested tensor. */
typedef enum {
    P_SCALE,      /* magnitude * factor: every element at one scale */
    P_GRADED,     /* magnitude * factor / 2^(j % 23): partial sums at several scales */
    P_MIXED,      /* 1e30 and 1e-30 alternating */
    P_ONE_HUGE,   /* 1e38 at the middle, 1e-38 elsewhere */
    P_ALTERNATE,  /* +m, -m, +m, ...: normalised values exactly +-1 (even lengths) */
    P_CONSTANT,   /* every element 2.5e37: no spread */
    P_ZERO,       /* zeros */
    P_INF,        /* 1e30 scale with +inf at the middle */
    P_NAN,        /* 1e-30 scale with NaN at the middle */
} pattern;

typedef struct {
    pattern p;
    double magnitude;
} row_kind;

static const row_kind kinds[] = {
    {P_SCALE, 1e-44}, {P_SCALE, 1e-40}, {P_SCALE, 1e-38}, {P_SCALE, 1e-30},  {P_SCALE, 1e-20},
    {P_SCALE, 1e-12}, {P_SCALE, 1},     {P_SCALE, 1e12},  {P_SCALE, 1e20},   {P_SCALE, 1e30},
    {P_SCALE, 1e38},  {P_SCALE, 3.4e38}, {P_MIXED, 0},    {P_ONE_HUGE, 0},   {P_ALTERNATE, 3e38},
    {P_ALTERNATE, 1e-41}, {P_CONSTANT, 0}, {P_ZERO, 0},   {P_INF, 0},        {P_NAN, 0},
    {P_GRADED, 1e15},     {P_GRADED, 1e25}, {P_GRADED, 1e-25},
};
#define NKINDS ((int64_t)(sizeof kinds / sizeof *kinds))

static float element(row_kind k, int64_t j, int64_t n, uint64_t *s) {
    switch (k.p) {
    case P_SCALE: return (float)(k.magnitude * factor(s));
    case P_GRADED: return (float)(k.magnitude * factor(s) / (double)(1 << (j % 23)));
    case P_MIXED: return (float)((j % 2 ? 1e-30 : 1e30) * factor(s));
    case P_ONE_HUGE: return j == n / 2 ? 1e38f : (float)(1e-38 * factor(s));
    case P_ALTERNATE: return (float)(j % 2 ? -k.magnitude : k.magnitude);
    case P_CONSTANT: return 2.5e37f;
    case P_ZERO: return 0;
    case P_INF: return j == n / 2 ? INFINITY : (float)(1e30 * factor(s));
    default: return j == n / 2 ? NAN : (float)(1e-30 * factor(s));
    }
}

/* f16 rows: every element at one of f16's scales (its subnormals, its largest values). */
static const double f16_magnitudes[] = {1e-7, 3e-5, 1, 6e4};
#define NF16 ((int64_t)(sizeof f16_magnitudes / sizeof *f16_magnitudes))

/* A [rows, n] tensor of dt from f32 values v (row-major); strided: stored as [n, rows] and
 * transposed, so each row's elements are `rows` apart (the strided kernel). */
static wgt_tensor *make_rows(wgt_context *ctx, wgt_dtype dt, int64_t rows, int64_t n, const float *v, int strided) {
    size_t count = (size_t)(rows * n), size = wgt_dtype_size(dt);
    unsigned char *raw = malloc(count * size);
    if (!raw) return NULL;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < n; j++) {
            size_t at = (size_t)(strided ? j * rows + r : r * n + j);
            if (dt == WGT_F16) ((uint16_t *)raw)[at] = wgt_f32_to_f16(v[r * n + j]);
            else ((float *)raw)[at] = v[r * n + j];
        }
    int64_t shape[2] = {strided ? n : rows, strided ? rows : n};
    wgt_tensor *t = wgt_tensor_from_data(ctx, dt, 2, shape, raw, count * size, WGT_USAGE_DEFAULT);
    free(raw);
    if (!t || !strided) return t;
    wgt_tensor *view = wgt_transpose(t, 0, 1);
    wgt_release(t);
    return view;
}

/* weight or bias of n elements: 0 absent, 1 dense, 2 every other element of a longer tensor
 * (from element 1), 3 one value broadcast (stride 0). Values +-[0.5, 1) (weight) or
 * +-[0.25, 0.5) (bias). */
static wgt_tensor *make_param(wgt_context *ctx, wgt_dtype dt, int64_t n, int kind, double scale, uint64_t seed) {
    if (kind == 0) return NULL;
    int64_t len = kind == 2 ? 2 * n + 1 : kind == 3 ? 1 : n;
    float *v = malloc((size_t)len * sizeof *v);
    for (int64_t j = 0; v && j < len; j++) v[j] = (float)(scale * factor(&seed));
    wgt_tensor *t = v ? make_rows(ctx, dt, 1, len, v, 0) : NULL, *view = NULL;
    free(v);
    if (!t) return NULL;
    wgt_tensor *flat = wgt_reshape(t, 1, &len);
    wgt_release(t);
    if (kind == 1 || !flat) return flat;
    if (kind == 2) view = wgt_slice(flat, 0, 1, 2 * n + 1, 2);
    else view = wgt_expand(flat, 1, &n);
    wgt_release(flat);
    return view;
}

/* The float64 result of the norm over row x[0..n) (w, b may be NULL) at element j, and the
 * bound on an f32 computation's error: with g = 2 sqrt(n) + 8 roundings in a sum (blocks of
 * 64 then trees), 1/rstd is within U (g / 2 + 8) relatively, and layer_norm's centred values
 * within U (g + 4) of the largest |x - mean|; the affine step adds U (|z w| + |y|); the output
 * rounding (f16: 2e-3) and results below 2 FLT_MIN (a GPU may flush them) add the rest. The
 * mean is taken on the row shifted by its first element, so a constant row has none. */
static void reference(int layer, wgt_dtype dt, const double *x, int64_t n, const double *w, const double *b,
                      double eps, double *want, double *tol) {
    double shift = layer ? x[0] : 0, sum = 0, sq = 0;
    for (int64_t j = 0; j < n; j++) sum += x[j] - shift;
    double mean = layer ? shift + sum / (double)n : 0;
    for (int64_t j = 0; j < n; j++) sq += (x[j] - mean) * (x[j] - mean);
    double r = 1 / sqrt(sq / (double)n + eps), g = 2 * sqrt((double)n) + 8, zmax = 0;
    for (int64_t j = 0; j < n; j++) zmax = fmax(zmax, fabs((x[j] - mean) * r));
    double out_rel = dt == WGT_F16 ? 2e-3 : 2 * U, out_abs = dt == WGT_F16 ? 6e-8 : 2 * FLT_MIN;
    for (int64_t j = 0; j < n; j++) {
        double z = (x[j] - mean) * r, wj = w ? w[j] : 1, y = z * wj + (b ? b[j] : 0);
        double ez = fabs(z) * U * (g / 2 + 9) + (layer ? U * (g + 4) * zmax : 0);
        want[j] = y;
        tol[j] = fabs(wj) * ez + U * (fabs(z * wj) + fabs(y)) + out_rel * fabs(y) + out_abs;
    }
}

/* Runs the norm on a and checks every element against the reference; rows whose reference
 * is +-1 (alternating rows) must not come back 0 or NaN. */
static void check_norm(int layer, wgt_tensor *a, wgt_tensor *w, wgt_tensor *b, double eps, const char *what) {
    wgt_tensor *r = layer ? wgt_layer_norm(a, w, b, eps) : wgt_rms_norm(a, w, eps);
    const char *op = layer ? "layer_norm" : "rms_norm";
    CHECK(r != NULL, "%s %s: %s", op, what, wgt_last_error());
    if (!r) return;
    int64_t rows = wgt_tensor_shape(a)[0], n = wgt_tensor_shape(a)[1];
    double *x = test_read_f64(a), *got = test_read_f64(r), *wv = w ? test_read_f64(w) : NULL;
    double *bv = b && layer ? test_read_f64(b) : NULL;
    double *want = malloc((size_t)n * sizeof *want), *tol = malloc((size_t)n * sizeof *tol);
    CHECK(x && got && want && tol && (!w || wv) && (!b || !layer || bv), "%s %s: reading back: %s", op, what,
          wgt_last_error());
    int bad = 0;
    for (int64_t i = 0; x && got && want && tol && i < rows; i++) {
        reference(layer, wgt_tensor_dtype(a), x + i * n, n, wv, bv, eps, want, tol);
        for (int64_t j = 0; j < n; j++) {
            double g = got[i * n + j], e = want[j];
            int ok = isnan(e) ? isnan(g) : fabs(g - e) <= tol[j];
            if (!ok && bad++ < 4)
                CHECK(0, "%s %s eps %g: row %lld (x[0] %g) element %lld is %.9g, want %.9g (tolerance %.3g)", op, what,
                      eps, (long long)i, x[i * n], (long long)j, g, e, tol[j]);
            if (!w && !bv && fabs(fabs(e) - 1) < 1e-3)
                CHECK(isfinite(g) && fabs(g) > 0.5, "%s %s: row %lld element %lld is %g where +-1 is due", op, what,
                      (long long)i, (long long)j, g);
        }
    }
    free(x);
    free(got);
    free(wv);
    free(bv);
    free(want);
    free(tol);
    wgt_release(r);
}

static const int64_t lengths[] = {1, 3, 257, 4099, 10000};

/* Checks both norms on [rows, n] tensors of dt for every tested length, dense and strided,
 * with every kind of weight and (rotating) bias, eps 0 and 1e-5; value(r, j, n, seed) gives
 * element j of row r. */
static void check_lengths(wgt_context *ctx, wgt_dtype dt, int64_t rows,
                          float (*value)(int64_t r, int64_t j, int64_t n, uint64_t *seed), uint64_t seed) {
    int config = 0;
    for (size_t l = 0; l < sizeof lengths / sizeof *lengths; l++) {
        int64_t n = lengths[l];
        float *v = malloc((size_t)(rows * n) * sizeof *v);
        if (!v) {
            CHECK(0, "out of host memory");
            return;
        }
        for (int64_t r = 0; r < rows; r++)
            for (int64_t j = 0; j < n; j++) v[r * n + j] = value(r, j, n, &seed);
        for (int strided = 0; strided < 2; strided++) {
            wgt_tensor *a = make_rows(ctx, dt, rows, n, v, strided);
            for (int pk = 0; pk < 4; pk++, config++) {
                wgt_tensor *w = make_param(ctx, dt, n, pk, 1, seed++);
                wgt_tensor *b = make_param(ctx, dt, n, (pk + config) % 4, 0.5, seed++);
                char what[96];
                snprintf(what, sizeof what, "%s rows of %lld, %s, weight kind %d, bias kind %d", wgt_dtype_name(dt),
                         (long long)n, strided ? "strided" : "dense", pk, (pk + config) % 4);
                for (int layer = 0; layer < 2; layer++) {
                    check_norm(layer, a, w, b, 0, what);
                    check_norm(layer, a, w, b, 1e-5, what);
                }
                wgt_release(w);
                wgt_release(b);
            }
            wgt_release(a);
        }
        free(v);
    }
}

static float f32_value(int64_t r, int64_t j, int64_t n, uint64_t *seed) { return element(kinds[r], j, n, seed); }
static float f16_value(int64_t r, int64_t j, int64_t n, uint64_t *seed) {
    return (float)(f16_magnitudes[r] * factor(seed));
}

TEST_BACKENDS(norm_range_f32_rows) { check_lengths(ctx, WGT_F32, NKINDS, f32_value, 77); }
TEST_BACKENDS(norm_range_f16_rows) { check_lengths(ctx, WGT_F16, NF16, f16_value, 91); }
