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
