/*
 * Accuracy of the float functions over the whole f32 range, in units in the last place of
 * the float64 reference rounded to f32, on both backends: sin and cos for every magnitude
 * up to FLT_MAX (the argument reduction must keep its bits at any exponent), and the
 * subnormal and extreme inputs of log, pow and atan2.
 *
 * Subnormals: inputs are honoured (a subnormal is the value it encodes, as libm takes it);
 * a result below FLT_MIN may come back flushed to a zero of the same sign, so results are
 * compared with an absolute floor of FLT_MIN on top of the ulp bound.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

/* The spacing of f32 values at |v| (the subnormal spacing below FLT_MIN). */
static double f32_ulp(double v) {
    double a = fabs(v);
    if (a < FLT_MIN) return ldexp(1, -149);
    int e;
    frexp(a, &e); /* a = f 2^e, 0.5 <= f < 1 */
    return ldexp(1, e - 24);
}

static float from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint64_t rng_next(uint64_t *s) {
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

/* Finite f32 of random sign and significand with binary exponents spread evenly over
 * [lo_exp, hi_exp] (biased, 1..254). */
static void random_magnitudes(float *x, int n, int lo_exp, int hi_exp, uint64_t seed) {
    uint64_t s = seed;
    for (int i = 0; i < n; i++) {
        uint64_t r = rng_next(&s);
        uint32_t e = (uint32_t)(lo_exp + (int)(r % (uint64_t)(hi_exp - lo_exp + 1)));
        x[i] = from_bits((uint32_t)(r >> 40 & 1) << 31 | e << 23 | (uint32_t)(r >> 8 & 0x7fffff));
    }
}

static wgt_tensor *f32_vector(wgt_context *ctx, const float *x, int n) {
    return wgt_tensor_from_data(ctx, WGT_F32, 1, (int64_t[]){n}, x, (size_t)n * sizeof *x, WGT_USAGE_DEFAULT);
}

/* Whether got is within max_ulp of want rounded to f32 (or within FLT_MIN of it, for a
 * flushed subnormal); NaN and infinities must match exactly. */
static int within_ulp(double got, double want, double max_ulp) {
    if (isnan(want)) return isnan(got);
    double w = (float)want;
    if (isinf(w)) return got == w;
    double err = fabs(got - w);
    return err <= max_ulp * f32_ulp(w) || (fabs(w) < FLT_MIN && err <= FLT_MIN);
}

/* sin and cos at arguments up to 3.4e38, both signs, and the values that test the reduction
 * hardest: near multiples of pi/2 at small and large exponents (the f32 roundings of pi/2,
 * pi, 2pi and of 2^k pi, and integers close to multiples of pi). 2 ulp: the reduction keeps
 * 64 bits, the polynomials are within one ulp. Before the exact reduction the WebGPU kernel
 * was off by 0.03 at 1e5 and meaningless past 1e7 (sin(1e7) = 0.27, not 0.42). */
TEST_BACKENDS(sin_cos_every_magnitude_within_2_ulp) {
    enum { N = 24576, SPECIAL = 24 };
    float *x = malloc(N * sizeof *x);
    CHECK(x != NULL, "out of memory");
    if (!x) return;
    random_magnitudes(x, N - SPECIAL, 27, 254, 11); /* 2^-100 (about 1e-30) .. FLT_MAX */
    const float special[SPECIAL] = {0.0f, -0.0f, 1.5707964f, 3.1415927f, 6.2831855f, -1.5707964f, 355.0f, 103993.0f,
                                    1e5f, 1e7f, 1e20f, FLT_MAX, -FLT_MAX, 0x1p127f, 0x1.921fb6p+100f, 8.5e37f,
                                    0.785398f, 0.7853982f, 1e-40f, -1e-45f, FLT_MIN, INFINITY, -INFINITY, NAN};
    memcpy(x + N - SPECIAL, special, sizeof special);
    wgt_tensor *in = f32_vector(ctx, x, N);
    for (int op = 0; op < 2; op++) {
        wgt_tensor *out = op ? wgt_cos(in) : wgt_sin(in);
        double *y = out ? test_read_f64(out) : NULL;
        CHECK(y != NULL, "%s: %s", op ? "cos" : "sin", wgt_last_error());
        int bad = 0;
        double worst = 0;
        for (int i = 0; y && i < N; i++) {
            double want = op ? cos((double)x[i]) : sin((double)x[i]);
            if (isfinite(want)) worst = fmax(worst, fabs(y[i] - (float)want) / f32_ulp((float)want));
            if (!within_ulp(y[i], want, 2) && bad++ < 4)
                CHECK(0, "%s(%.9g) = %.9g, want %.9g (%.1f ulp)", op ? "cos" : "sin", x[i], y[i], (float)want,
                      fabs(y[i] - (float)want) / f32_ulp((float)want));
            if (!op && x[i] == 0) CHECK(!signbit(y[i]) == !signbit(x[i]), "sin(%g) = %g: sign of zero", x[i], y[i]);
        }
        if (bad) fprintf(stderr, "    %s: %d of %d beyond 2 ulp, worst %.1f ulp\n", op ? "cos" : "sin", bad, N, worst);
        free(y);
        wgt_release(out);
    }
    wgt_release(in);
    free(x);
}

/* docs/ops.md's rule for results below FLT_MIN: a GPU that flushes subnormal results may give
 * a zero of the same sign (NVIDIA's does; lavapipe keeps them). The CPU backend keeps them. */
static int flushed_result(double got, double want, wgt_context *ctx) {
    return wgt_context_backend(ctx) == WGT_BACKEND_WEBGPU && want != 0 && fabs(want) < FLT_MIN && got == 0 &&
           signbit(got) == signbit(want);
}

/* Runs op over pairs (or single values, y NULL) and returns the results read back (malloc'd). */
static double *apply(wgt_context *ctx, int op, const float *x, const float *y, int n) {
    wgt_tensor *a = f32_vector(ctx, x, n), *b = y ? f32_vector(ctx, y, n) : NULL;
    wgt_tensor *r = op == 0 ? wgt_log(a) : op == 1 ? wgt_pow(a, b) : wgt_atan2(a, b);
    double *v = r ? test_read_f64(r) : NULL;
    CHECK(v != NULL, "%s: %s", op == 0 ? "log" : op == 1 ? "pow" : "atan2", wgt_last_error());
    wgt_release(a), wgt_release(b), wgt_release(r);
    return v;
}

/* Subnormal inputs of log are the values they encode (lavapipe's log misread them: log(1e-40)
 * gave -88.02, not -92.10); negative ones give NaN. */
TEST_BACKENDS(log_of_subnormal_and_extreme_inputs) {
    static const float x[] = {1e-40f, 0x1p-149f, 1e-38f, 5.877472e-39f, 0x1.fffffcp-127f, FLT_MIN, 1e-30f,
                              FLT_MAX, -1e-40f, -0x1p-149f, 0.0f, -0.0f};
    enum { N = sizeof x / sizeof *x };
    double *v = apply(ctx, 0, x, NULL, N);
    for (int i = 0; v && i < N; i++) {
        double want = x[i] == 0 ? -INFINITY : log((double)x[i]);
        CHECK(isnan(want) ? isnan(v[i]) : fabs(v[i] - want) <= 2e-7 * fabs(want) || v[i] == want,
              "log(%a) = %.9g, want %.9g", x[i], v[i], want);
    }
    free(v);
}

/* pow at the ends of the range: small integer exponents are exact where the result is
 * representable (pow(FLT_MAX, 1) overflowed to inf through exp2(y log2 x)), subnormal bases
 * are honoured (pow(1e-40, 1) gave 0, pow(1e-40, 0.5) 7.7e-20), results near FLT_MAX and in
 * the subnormal range do not pass through an infinity or a zero, and y log2 x keeps its low
 * bits of y e (pow(1.5, 100) was 3e-6 off). The others get test_binary.c's bound, 4 ulp plus
 * 2 ulp per unit of |y log2 x| (y log2 of the significand is still rounded in f32). */
TEST_BACKENDS(pow_of_subnormal_and_extreme_inputs) {
    static const struct { float x, y; int exact; } c[] = {
        {FLT_MAX, 1, 1}, {-FLT_MAX, 1, 1}, {1e38f, 1, 1}, {1.5e19f, 2, 1}, {-3e12f, 3, 1}, {3, 2, 1}, {2, 127, 0},
        {1e-40f, 1, 1}, {-1e-40f, 1, 1}, {0x1p-149f, 1, 1}, {1e-20f, 2, 1}, {1e-40f, 0.5f, 0}, {1e-40f, -0.25f, 0},
        {0x1p-149f, -0.5f, 0}, {1e-45f, -1, 0}, {FLT_MAX, -1, 0}, {1e20f, -2, 0}, {2, -126, 0}, {2, -149, 0},
        {2, 128, 0}, {0.5f, -127.5f, 0}, {FLT_MAX, 0.5f, 0}, {FLT_MAX, 0.999f, 0}, {1.5f, 100, 0},
        {10, 38, 0}, {1.0000001f, 1e7f, 0}, {0.99999994f, -1e9f, 0}, {3, -5, 0}, {7, 8, 1}, {1e-40f, 3, 0}};
    enum { N = sizeof c / sizeof *c };
    float x[N], y[N];
    for (int i = 0; i < N; i++) x[i] = c[i].x, y[i] = c[i].y;
    double *v = apply(ctx, 1, x, y, N);
    for (int i = 0; v && i < N; i++) {
        double want = pow((double)x[i], (double)y[i]);
        int ok = c[i].exact ? v[i] == (float)want : within_ulp(v[i], want, 4 + 2 * fabs(y[i] * log2(x[i])));
        if (!ok && flushed_result(v[i], want, ctx)) ok = 1;
        CHECK(ok, "pow(%a, %g) = %.9g, want %.9g%s", x[i], y[i], v[i], (float)want, c[i].exact ? " exactly" : "");
    }
    free(v);
}

/* atan2 of subnormal and tiny pairs: the ratio, not a quotient that overflowed (atan2(1e-44,
 * 3e-44) gave pi/2, not 0.32). 4e-6 absolute: lavapipe's atan2 itself is off by up to 3.4e-6
 * (and by 1e-4 relative for results near 1e-10), so tiny results get 2e-4 relative. */
TEST_BACKENDS(atan2_of_subnormal_pairs) {
    static const float y[] = {1e-44f, 1e-40f, -1e-45f, 1e-40f, 1e-30f, 0x1p-149f, -3e-39f, 1e-40f, 1e-40f};
    static const float x[] = {3e-44f, -2e-40f, -1e-45f, 1e-30f, 1e-40f, 0x1p-148f, 2e-39f, 1.0f, -1e-40f};
    enum { N = sizeof y / sizeof *y };
    double *v = apply(ctx, 2, y, x, N);
    for (int i = 0; v && i < N; i++) {
        double want = atan2((double)y[i], (double)x[i]);
        if (flushed_result(v[i], want, ctx)) continue;
        CHECK(fabs(v[i] - want) <= 4e-6 * fmax(1, fabs(want)) && (want != 0 || v[i] == 0),
              "atan2(%a, %a) = %.9g, want %.9g", y[i], x[i], v[i], want);
        if (fabs(want) < 1e-6) CHECK(fabs(v[i] - want) <= 2e-4 * fabs(want), "atan2(%a, %a) = %a, want %a", y[i], x[i], v[i], want);
    }
    free(v);
}
