/*
 * Exact matrix products through every matmul kernel variant, so that a kernel which lowers
 * the precision of its operands or products cannot pass. test_matmul.c's bound, (K + 2)
 * 2^-24 sum|a b|, is a worst case for f32 sums; at K in the thousands it is wider than the
 * error of operands rounded to bf16, f16 or TF32. Here one operand holds values of 12
 * significant bits for f32 (11 for f16: odd multiples of 2^-11 or 2^-10 in [1, 2), more than
 * bf16's 8 and TF32's or f16's 11 bits keep) and the other small integers (0 three times in
 * four, else +-1, +-2, +-3), so every product has at most 14 bits and every partial sum, in
 * any order, is a multiple of 2^-11 (2^-10) below 2^13 (2^14) in magnitude: exact in f32. The
 * result must then be the exact value (f16 results: it rounded once to f16), and any
 * rounding of an operand, or of a product to f16, changes some output. Each shape runs with
 * the wide values in a and then in b.
 *
 * Proven by mutation (lavapipe): the loads of a, then of b, rounded inside one kernel variant
 * at a time (matmul.c's build_matmul wrapping load_a/load4_a/load8_a or the b ones, under
 * a condition on the variant): 128 x 128 tiles, 64-wide tiles, split-K and sliced tiles
 * (chunks > 1 or T_SLICES > 1), streamed tiles, the rows kernel for 2..16 rows and for one
 * row or a matrix-vector product. Rounded to bf16 (and f16 loads cut to 8 bits), all twelve
 * mutations failed these tests, in f32 and f16 shapes. Rounded to 11 bits (TF32, f16's
 * precision) in the split-K, rows, one-row, 128 x 128 and streamed variants, they failed
 * here too, while test_matmul.c's matmul_split_k (split-K) and matmul_few_rows_wide_loads
 * (rows) passed with them.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

enum { NARROW, WIDE };

static uint64_t rng_next(uint64_t *s) {
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

/* Significant bits of the wide values: more than any narrower format keeps, and few enough
 * for exact sums. */
static int wide_bits(wgt_dtype dt) { return dt == WGT_F32 ? 12 : 11; }

static float exact_value(int kind, wgt_dtype dt, uint64_t *s) {
    uint64_t r = rng_next(s);
    float sign = (r >> 62) & 1 ? -1.0f : 1.0f;
    if (kind == WIDE) {
        int p = wide_bits(dt);
        uint32_t m = (1u << (p - 1)) | ((uint32_t)(r >> 20) & ((1u << (p - 1)) - 1)) | 1u;
        return sign * ldexpf((float)m, 1 - p);
    }
    return (r >> 8) % 4 ? 0.0f : sign * (float)(1 + (r >> 16) % 3);
}

/* A tensor of `shape` holding exact values of `kind`, stored by rows, or by columns (its last
 * two dimensions transposed) where `by_columns`. */
static wgt_tensor *exact_tensor(wgt_context *ctx, wgt_dtype dt, int kind, int by_columns, int ndim,
                                const int64_t *shape, uint64_t seed) {
    int64_t stored[4], n = 1;
    memcpy(stored, shape, sizeof(int64_t) * (size_t)ndim);
    if (by_columns && ndim >= 2) stored[ndim - 2] = shape[ndim - 1], stored[ndim - 1] = shape[ndim - 2];
    for (int d = 0; d < ndim; d++) n *= shape[d];
    float *v = malloc(sizeof(float) * (size_t)(n ? n : 1));
    if (!v) return NULL;
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
    for (int64_t i = 0; i < n; i++) v[i] = exact_value(kind, dt, &s);
    wgt_tensor *t = wgt_tensor_from_data(ctx, WGT_F32, ndim, stored, v, sizeof(float) * (size_t)n, WGT_USAGE_DEFAULT);
    free(v);
    if (t && dt != WGT_F32) { /* the values are exact in f16 */
        wgt_tensor *c = wgt_cast(t, dt);
        wgt_release(t);
        t = c;
    }
    if (t && by_columns && ndim >= 2) {
        wgt_tensor *view = wgt_transpose(t, -1, -2);
        wgt_release(t);
        t = view;
    }
    return t;
}

/* a [batch?, M, K] @ b: [batch, K, N], [K, N] (shared by the batch) or [K] (a vector): checks
 * every output against the exact value, and that the inputs keep every sum exact. */
static void check_exact(wgt_context *ctx, wgt_dtype dt, int wide_b, int a_cols, int b_cols, int na,
                        const int64_t *sa, int nb, const int64_t *sb, uint64_t seed) {
    char what[160];
    snprintf(what, sizeof what, "%s [%lld, %lld%s] @ [%lld%s%s] (%s wide%s%s)", wgt_dtype_name(dt),
             (long long)sa[0], (long long)sa[1], na == 3 ? ", ..." : "", (long long)sb[0], nb > 1 ? ", ..." : "",
             nb == 3 ? " batched" : "", wide_b ? "b" : "a", a_cols ? ", a by columns" : "", b_cols ? ", b by columns" : "");
    wgt_tensor *a = exact_tensor(ctx, dt, wide_b ? NARROW : WIDE, a_cols, na, sa, seed);
    wgt_tensor *b = exact_tensor(ctx, dt, wide_b ? WIDE : NARROW, b_cols, nb, sb, seed + 7);
    wgt_tensor *r = a && b ? wgt_matmul(a, b) : NULL;
    double *x = a ? test_read_f64(a) : NULL, *y = b ? test_read_f64(b) : NULL, *got = r ? test_read_f64(r) : NULL;
    CHECK(x && y && got, "%s: %s", what, wgt_last_error());
    int64_t batch = na == 3 ? sa[0] : 1, M = sa[na - 2], K = sa[na - 1], N = nb == 1 ? 1 : sb[nb - 1];
    int bad = 0;
    double limit = ldexp(1, 24 - (wide_bits(dt) - 1)); /* sums of multiples of 2^(1-p) exact below this */
    for (int64_t bi = 0; x && y && got && bi < batch; bi++)
        for (int64_t m = 0; m < M; m++)
            for (int64_t n = 0; n < N; n++) {
                const double *ar = x + (bi * M + m) * K, *bc = y + (nb == 3 ? bi * K * N : 0) + n;
                double v = 0, abs_sum = 0;
                for (int64_t k = 0; k < K; k++) v += ar[k] * bc[k * N], abs_sum += fabs(ar[k] * bc[k * N]);
                CHECK(abs_sum < limit, "%s: inputs too large for exact sums (%g)", what, abs_sum);
                double want = test_round_to(dt, v), g = got[(bi * M + m) * N + n];
                if (g != want && bad++ < 3)
                    CHECK(0, "%s: output (%lld, %lld, %lld) is %.9g, exactly %.9g", what, (long long)bi, (long long)m,
                          (long long)n, g, want);
            }
    free(x), free(y), free(got);
    wgt_release(a), wgt_release(b), wgt_release(r);
}

static void both_ways(wgt_context *ctx, wgt_dtype dt, int a_cols, int b_cols, int na, const int64_t *sa, int nb,
                      const int64_t *sb, uint64_t seed) {
    for (int wide_b = 0; wide_b < 2; wide_b++) check_exact(ctx, dt, wide_b, a_cols, b_cols, na, sa, nb, sb, seed + (uint64_t)wide_b);
}

/* The shapes test_matmul.c uses to reach each variant on WebGPU: 128 x 128 tiles over a long
 * K, 128 x 64 tiles, many 64 x 64 tiles, K split into ranges (and into slices of one
 * workgroup), the rows kernel for several rows and for one, and a matrix times a vector. */
TEST_BACKENDS(matmul_exact_every_kernel) {
    static const wgt_dtype types[2] = {WGT_F32, WGT_F16};
    for (int d = 0; d < 2; d++) {
        wgt_dtype dt = types[d];
        uint64_t s = 100 * (uint64_t)d;
        int64_t t128a[3] = {50, 132, 516}, t128b[3] = {50, 516, 132};
        both_ways(ctx, dt, 0, 1, 3, t128a, 3, t128b, s + 1);
        int64_t t64a[3] = {50, 130, 20}, t64b[3] = {50, 20, 100};
        both_ways(ctx, dt, 0, 0, 3, t64a, 3, t64b, s + 3);
        int64_t many_a[2] = {256, 300}, many_b[2] = {300, 200};
        both_ways(ctx, dt, 1, 0, 2, many_a, 2, many_b, s + 5);
        int64_t split_a[2] = {64, 4096}, split_b[2] = {4096, 64}, slice_a[2] = {200, 1100}, slice_b[2] = {1100, 130};
        both_ways(ctx, dt, 0, 0, 2, split_a, 2, split_b, s + 7);
        both_ways(ctx, dt, 0, 1, 2, slice_a, 2, slice_b, s + 9);
        int64_t rows_a[3] = {2, 3, 700}, rows_b[3] = {2, 700, 301}, long_a[2] = {4, 5000}, long_b[2] = {5000, 64};
        both_ways(ctx, dt, 0, 0, 3, rows_a, 3, rows_b, s + 11);
        both_ways(ctx, dt, 0, 1, 2, long_a, 2, long_b, s + 13);
        int64_t one_a[2] = {1, 5000}, mat[2] = {264, 3000}, vec[1] = {3000};
        both_ways(ctx, dt, 0, 0, 2, one_a, 2, long_b, s + 15);
        both_ways(ctx, dt, 0, 0, 2, mat, 1, vec, s + 17);
    }
}

/* A WebGPU context that takes the GPU to have `units` compute units, which the matmul's
 * choices by fill of the device follow. */
static wgt_context *gpu_with_units(uint32_t units) {
    wgt_context_options opt = {0};
    opt.backend = WGT_BACKEND_WEBGPU;
    opt.quiet = 1;
    opt.compute_units = units;
    return wgt_context_create(&opt);
}

/* The variants picked by the device's fill: 128 x 128 tiles streamed (the last wave's passes
 * over K shared out, test_matmul.c's matmul_tiles_128_streamed), and a matrix stored by rows
 * times a vector by columns. */
TEST(matmul_exact_streamed_and_by_columns) {
    wgt_context *gpu = gpu_with_units(16);
    if (!gpu) {
        test_skip_no_webgpu();
        return;
    }
    int64_t ta[3] = {50, 132, 516}, tb[3] = {50, 516, 132};
    both_ways(gpu, WGT_F32, 0, 0, 3, ta, 3, tb, 301);
    wgt_context_release(gpu);
    gpu = gpu_with_units(0);
    int64_t w[2] = {8200, 72}, v[1] = {72};
    for (int d = 0; gpu && d < 2; d++) both_ways(gpu, d ? WGT_F16 : WGT_F32, 0, 0, 2, w, 1, v, 305 + (uint64_t)d);
    wgt_context_release(gpu);
}
