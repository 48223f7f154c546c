/*
 * The device random number generator (src/core/random.c, src/backend/philox.h): its raw words
 * against Philox4x32-10's published known answers through a reference written here from the
 * paper, uniform and integer draws bit for bit against that reference on each backend, the
 * two backends against each other, and the distributions (mean, variance, Kolmogorov-Smirnov,
 * chi-square, neighbour correlation) with bounds that a generator off by a constant, a bit or
 * an index fails.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "philox_ref.h"
#include "test.h"

static void *read_all(wgt_tensor *t, size_t elem) {
    size_t n = (size_t)wgt_tensor_numel(t) * elem;
    void *p = malloc(n ? n : 1);
    if (p && wgt_tensor_read(t, p, n) != WGT_OK) {
        free(p);
        p = NULL;
    }
    return p;
}

TEST(random_philox_reference_known_answers) {
    /* Random123's kat_vectors for philox4x32_10. */
    static const uint32_t ctr[3][4] = {{0, 0, 0, 0},
                                       {0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
                                       {0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}};
    static const uint32_t key[3][2] = {{0, 0}, {0xffffffffu, 0xffffffffu}, {0xa4093822u, 0x299f31d0u}};
    static const uint32_t want[3][4] = {{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u},
                                        {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu},
                                        {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}};
    for (int v = 0; v < 3; v++) {
        uint32_t got[4];
        philox_ref(ctr[v], key[v], got);
        for (int j = 0; j < 4; j++) CHECK(got[j] == want[v][j], "vector %d word %d: %08x, wanted %08x", v, j, got[j], want[v][j]);
    }
}

/* The library's raw words are the reference's first word of each element's block, for seeds
 * that differ in either half. */
TEST_BACKENDS(random_bits_match_philox) {
    static const uint64_t seeds[] = {0, 1, 0x100000000ull, 0xa40938220000002aull};
    int64_t shape[2] = {37, 29}; /* odd, and more than one workgroup */
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
        wgt_tensor *t = wgt_rand_bits(ctx, 2, shape, seeds[s]);
        CHECK(t && wgt_tensor_dtype(t) == WGT_U32, "%s", wgt_last_error());
        uint32_t *got = t ? read_all(t, 4) : NULL;
        CHECK(got, "%s", wgt_last_error());
        int bad = 0;
        for (int64_t i = 0; got && i < 37 * 29 && bad < 3; i++) {
            uint32_t w[4];
            words_of(seeds[s], i, w);
            if (got[i] != w[0]) { bad++; CHECK(0, "seed %llx element %lld: %08x, wanted %08x", (unsigned long long)seeds[s], (long long)i, got[i], w[0]); }
        }
        if (s == 0 && got) CHECK(got[0] == 0x6627e8d5u, "seed 0 element 0: %08x", got[0]);
        free(got);
        wgt_release(t);
    }
}

/* Uniform f32 and integer draws are bit for bit the documented mapping of the words. */
TEST_BACKENDS(random_uniform_exact) {
    int64_t n = 1000, shape[1] = {n};
    wgt_tensor *t = wgt_rand_uniform(ctx, WGT_F32, 1, shape, -1.5, 2.25, 99);
    float *got = t ? read_all(t, 4) : NULL;
    CHECK(got, "%s", wgt_last_error());
    int bad = 0;
    for (int64_t i = 0; got && i < n && bad < 3; i++) {
        float want = uniform_ref(99, i, -1.5f, 3.75f, nextafterf(2.25f, -INFINITY));
        if (memcmp(&got[i], &want, 4)) { bad++; CHECK(0, "f32 element %lld: %.9g, wanted %.9g", (long long)i, got[i], want); }
        CHECK(got[i] >= -1.5f && got[i] < 2.25f, "element %lld = %.9g outside [-1.5, 2.25)", (long long)i, got[i]);
    }
    free(got);
    wgt_release(t);

    /* i32 from a negative start over 7 values ([-3.5, 3.5) holds -3 .. 3), u32 over all 2^32. */
    t = wgt_rand_uniform(ctx, WGT_I32, 1, shape, -3.5, 3.5, 5);
    int32_t *gi = t ? read_all(t, 4) : NULL;
    CHECK(gi, "%s", wgt_last_error());
    for (int64_t i = 0, b = 0; gi && i < n && b < 3; i++) {
        uint32_t w[4];
        words_of(5, i, w);
        int32_t want = -3 + (int32_t)(((uint64_t)w[0] * 7) >> 32);
        if (gi[i] != want) { b++; CHECK(0, "i32 element %lld: %d, wanted %d", (long long)i, gi[i], want); }
    }
    free(gi);
    wgt_release(t);
    t = wgt_rand_uniform(ctx, WGT_U32, 1, shape, 0, 4294967296.0, 6);
    uint32_t *gu = t ? read_all(t, 4) : NULL;
    CHECK(gu, "%s", wgt_last_error());
    for (int64_t i = 0, b = 0; gu && i < n && b < 3; i++) {
        uint32_t w[4];
        words_of(6, i, w);
        if (gu[i] != w[0]) { b++; CHECK(0, "u32 element %lld: %u, wanted %u", (long long)i, gu[i], w[0]); }
    }
    free(gu);
    wgt_release(t);
}

/* Both backends give the same tensors bit for bit: uniform (f32, f16), integers and normal
 * draws (whose log, cos and sqrt are written out in f32 arithmetic). */
TEST(random_backends_agree) {
    wgt_context *cpu, *gpu;
    if (!test_backend_pair(&cpu, &gpu)) return;
    int64_t shape[3] = {3, 70, 101};
    int64_t n = 3 * 70 * 101;
    struct { wgt_dtype dt; int normal; double a, b; } cases[] = {
        {WGT_F32, 0, 0, 1}, {WGT_F32, 0, -7, 1e4}, {WGT_F16, 0, -2, 2}, {WGT_I32, 0, -1000, 1000},
        {WGT_U32, 0, 5, 1e9}, {WGT_F32, 1, 0, 1}, {WGT_F32, 1, 3, 0.5}, {WGT_I32, 1, 100, 30}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        wgt_tensor *t[2];
        wgt_context *ctxs[2] = {cpu, gpu};
        for (int k = 0; k < 2; k++)
            t[k] = cases[c].normal ? wgt_rand_normal(ctxs[k], cases[c].dt, 3, shape, cases[c].a, cases[c].b, 1234 + c)
                                   : wgt_rand_uniform(ctxs[k], cases[c].dt, 3, shape, cases[c].a, cases[c].b, 1234 + c);
        size_t es = cases[c].dt == WGT_F16 ? 2 : 4;
        void *x = t[0] ? read_all(t[0], es) : NULL, *y = t[1] ? read_all(t[1], es) : NULL;
        CHECK(x && y, "case %zu: %s", c, wgt_last_error());
        int bad = 0;
        for (int64_t i = 0; x && y && i < n && bad < 3; i++) {
            if (memcmp((char *)x + i * es, (char *)y + i * es, es)) {
                bad++;
                CHECK(0, "case %zu element %lld differs between the backends", c, (long long)i);
            }
        }
        free(x);
        free(y);
        wgt_release(t[0]);
        wgt_release(t[1]);
    }
    wgt_context_release(cpu);
    wgt_context_release(gpu);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The Kolmogorov-Smirnov distance of the sorted sample to cdf. */
static double ks_distance(double *v, int64_t n, double (*cdf)(double)) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    double d = 0;
    for (int64_t i = 0; i < n; i++) {
        double f = cdf(v[i]), lo = f - (double)i / n, hi = (double)(i + 1) / n - f;
        if (lo > d) d = lo;
        if (hi > d) d = hi;
    }
    return d;
}

static double uniform_cdf(double x) { return x < 0 ? 0 : x > 1 ? 1 : x; }
static double normal_cdf(double x) { return 0.5 * erfc(-x / sqrt(2.0)); }

/* Moments, the KS distance and the lag-1 correlation of n draws, against the distribution's.
 * Bounds are about 5 standard errors (KS: the 0.1% critical value, 1.95 / sqrt(n)), so a
 * correct generator passes every seed in practice and a biased one fails. */
static void check_sample(const float *x, int64_t n, double mean, double var, double (*cdf)(double), double scale_shift,
                         double scale, const char *what) {
    double s = 0, s2 = 0, lag = 0;
    for (int64_t i = 0; i < n; i++) s += x[i];
    double m = s / n;
    for (int64_t i = 0; i < n; i++) {
        s2 += (x[i] - m) * (x[i] - m);
        if (i) lag += (x[i] - m) * (x[i - 1] - m);
    }
    double v = s2 / (n - 1), r = lag / s2;
    CHECK(fabs(m - mean) < 5 * sqrt(var / n), "%s: mean %.6f, wanted %.6f", what, m, mean);
    /* The variance of a sample variance is about (kurtosis - 1) var^2 / n; 2 covers both. */
    CHECK(fabs(v - var) < 5 * var * sqrt(2.0 / n), "%s: variance %.6f, wanted %.6f", what, v, var);
    CHECK(fabs(r) < 5 / sqrt((double)n), "%s: neighbour correlation %.5f", what, r);
    double *z = malloc(sizeof *z * (size_t)n);
    for (int64_t i = 0; z && i < n; i++) z[i] = (x[i] - scale_shift) / scale;
    double d = z ? ks_distance(z, n, cdf) : 1;
    CHECK(d < 1.95 / sqrt((double)n), "%s: Kolmogorov-Smirnov distance %.5f over %lld draws", what, d, (long long)n);
    free(z);
}

TEST_BACKENDS(random_distributions) {
    int64_t n = 1 << 17, shape[1] = {n};
    wgt_tensor *u = wgt_rand_uniform(ctx, WGT_F32, 1, shape, 2, 5, 42);
    float *x = u ? read_all(u, 4) : NULL;
    CHECK(x, "%s", wgt_last_error());
    if (x) check_sample(x, n, 3.5, 0.75, uniform_cdf, 2, 3, "uniform [2, 5)");
    free(x);
    wgt_release(u);
    wgt_tensor *g = wgt_rand_normal(ctx, WGT_F32, 1, shape, -1, 2, 43);
    x = g ? read_all(g, 4) : NULL;
    CHECK(x, "%s", wgt_last_error());
    if (x) check_sample(x, n, -1, 4, normal_cdf, -1, 2, "normal(-1, 2)");
    free(x);
    wgt_release(g);

    /* Integers 0..9: chi-square with 9 degrees of freedom below 33.7 (its 0.01% point). */
    wgt_tensor *k = wgt_rand_uniform(ctx, WGT_I32, 1, shape, 0, 10, 44);
    int32_t *y = k ? read_all(k, 4) : NULL;
    CHECK(y, "%s", wgt_last_error());
    int64_t counts[10] = {0};
    for (int64_t i = 0; y && i < n; i++) {
        CHECK(y[i] >= 0 && y[i] < 10, "integer %d outside [0, 10)", y[i]);
        if (y[i] >= 0 && y[i] < 10) counts[y[i]]++;
    }
    double chi = 0, e = n / 10.0;
    for (int j = 0; j < 10; j++) chi += (counts[j] - e) * (counts[j] - e) / e;
    CHECK(!y || chi < 33.7, "chi-square %.2f of the counts of 0..9", chi);
    free(y);
    wgt_release(k);
}

/* Seeds give different streams (also seeds that differ only in the upper half), f16 draws stay
 * below high after rounding, empty shapes and degenerate ranges give what they should. */
TEST_BACKENDS(random_seeds_and_edges) {
    int64_t shape[1] = {4096};
    wgt_tensor *a = wgt_rand_bits(ctx, 1, shape, 7), *b = wgt_rand_bits(ctx, 1, shape, 7 | (1ull << 32));
    uint32_t *x = a ? read_all(a, 4) : NULL, *y = b ? read_all(b, 4) : NULL;
    CHECK(x && y, "%s", wgt_last_error());
    int same = 0;
    for (int i = 0; x && y && i < 4096; i++) same += x[i] == y[i];
    CHECK(same < 4, "%d of 4096 words equal for seeds 7 and 7 + 2^32", same);
    free(x), free(y);
    wgt_release(a), wgt_release(b);

    wgt_tensor *h = wgt_rand_uniform(ctx, WGT_F16, 1, shape, 0, 1, 8);
    uint16_t *hv = h ? read_all(h, 2) : NULL;
    CHECK(hv, "%s", wgt_last_error());
    float top = 0;
    for (int i = 0; hv && i < 4096; i++) {
        float f = wgt_f16_to_f32(hv[i]);
        CHECK(f >= 0 && f < 1, "f16 element %d = %g outside [0, 1)", i, f);
        if (f > top) top = f;
    }
    CHECK(top > 0.99f, "largest f16 draw %g of 4096", top);
    free(hv);
    wgt_release(h);

    int64_t empty[2] = {0, 5};
    wgt_tensor *z = wgt_rand_normal(ctx, WGT_F16, 2, empty, 0, 1, 1);
    CHECK(z && wgt_tensor_numel(z) == 0 && wgt_tensor_dtype(z) == WGT_F16, "%s", wgt_last_error());
    wgt_release(z);

    /* low == high gives low; an integer range holding no whole number gives floor(low). */
    wgt_tensor *c = wgt_rand_uniform(ctx, WGT_F32, 1, shape, 0.25, 0.25, 3);
    float *cv = c ? read_all(c, 4) : NULL;
    for (int i = 0; cv && i < 4096; i++) CHECK(cv[i] == 0.25f, "element %d = %g", i, cv[i]);
    free(cv);
    wgt_release(c);
    wgt_tensor *f = wgt_rand_uniform(ctx, WGT_I32, 1, shape, -0.8, -0.2, 3);
    int32_t *fv = f ? read_all(f, 4) : NULL;
    for (int i = 0; fv && i < 4096; i++) CHECK(fv[i] == -1, "element %d = %d", i, fv[i]);
    free(fv);
    wgt_release(f);
}

TEST_BACKENDS(random_errors) {
    int64_t shape[1] = {4}, bad[1] = {-2};
    CHECK_ERROR(!wgt_rand_bits(ctx, 1, NULL, 1), WGT_ERR_INVALID_ARGUMENT, "shape is NULL");
    CHECK_ERROR(!wgt_rand_bits(ctx, 1, bad, 1), WGT_ERR_SHAPE, "-2");
    CHECK_ERROR(!wgt_rand_uniform(ctx, WGT_F32, 1, shape, -3e38, 3e38, 1), WGT_ERR_INVALID_ARGUMENT, "overflows f32");
    CHECK_ERROR(!wgt_rand_uniform(ctx, WGT_Q8_0, 1, shape, 0, 1, 1), WGT_ERR_DTYPE, "q8_0");
    CHECK_ERROR(!wgt_rand_normal(ctx, WGT_BF16, 1, shape, 0, 1, 1), WGT_ERR_DTYPE, "bf16");
}
