/*
 * The array API's further elementwise functions at the arguments where a GPU that flushes
 * subnormals, divides as x * (1 / y) or unpacks f16 loosely goes wrong, on both backends:
 * NVIDIA's Vulkan driver does all three, and gave floor_divide(3e38, 3e38) = 0 (1 / 3e38 is
 * subnormal), floor_divide(1e-40, 2e-40) = NaN (a subnormal divisor read as 0),
 * asinh(-1.87e-38) = -0 (a quotient of the tiny argument flushed on the way) and
 * signbit(-NaN) = false for f16 (unpack2x16float dropped the sign). The references are
 * float64 (floor_divide: floor(x / y), exact for these pairs) and the stored bits.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "test.h"

static wgt_tensor *f32_tensor(wgt_context *ctx, const float *v, int64_t n) {
    return wgt_tensor_from_data(ctx, WGT_F32, 1, &n, v, sizeof(float) * (size_t)n, WGT_USAGE_DEFAULT);
}

/* ulp of the f32 value nearest v (the subnormal spacing below FLT_MIN). */
static double f32_ulp(double v) {
    double a = fabs((float)v);
    if (a < FLT_MIN) return ldexp(1, -149);
    int e;
    frexp(a, &e);
    return ldexp(1, e - 24);
}

/* NumPy's floor_divide of f32 operands: the floor of the exact quotient, rounded to f32 (inf
 * beyond FLT_MAX); a zero result has the sign of x / y. */
static double floor_divide_ref(float x, float y) {
    double q = floor((double)x / (double)y);
    if (q == 0) return copysign(0.0, (double)x / (double)y);
    return (float)q;
}

/* Divisors below 2^-60 (subnormal ones too) and above 2^64, dividends of every size beside
 * them; quotients up to FLT_MAX and past it. Within one ulp of the f32 quotient (exact below
 * 2^24), signed zeros and infinities exactly. */
TEST_BACKENDS(math2_floor_divide_subnormal_and_huge_divisors) {
    static const float pairs[][2] = {
        {1e-40f, 2e-40f}, {3e-40f, 1e-40f}, {-3e-40f, 1e-40f}, {1e-40f, -3e-41f}, {0x1p-149f, 0x1p-149f},
        {-0x1p-149f, 0x1p-149f}, {5e-39f, 1e-45f}, {1.0f, 1e-40f}, {1e-30f, 1e-40f}, {-1e-30f, 3e-41f},
        {7e-10f, 2e-39f}, {2e15f, 3e-20f}, {5e19f, 2e-19f}, {-5e19f, 2e-19f}, {1e25f, 3e-19f}, {1e38f, 3e-39f},
        {3e38f, 3e38f}, {3e38f, 1.5e38f}, {-3e38f, 7e37f}, {3e38f, -1e38f}, {1e30f, 2e19f}, {-1e30f, 2e19f},
        {1e35f, 3.0f}, {-1e35f, 7.0f}, {1e30f, 1e19f}, {1.0f, 3e38f}, {-1.0f, 3e38f}, {-0.0f, 3e38f},
        {0.0f, -3e38f}, {-1e-40f, -2e-40f}, {2e-40f, -1e-40f}, {FLT_MAX, 0.75f}, {FLT_MAX, 2.0f},
    };
    enum { N = sizeof pairs / sizeof pairs[0] };
    float x[N], y[N];
    for (int i = 0; i < N; i++) x[i] = pairs[i][0], y[i] = pairs[i][1];
    wgt_tensor *a = f32_tensor(ctx, x, N), *b = f32_tensor(ctx, y, N), *r = wgt_floor_divide(a, b);
    double *got = r ? test_read_f64(r) : NULL;
    CHECK(got != NULL, "floor_divide: %s", wgt_last_error());
    for (int i = 0; got && i < N; i++) {
        double want = floor_divide_ref(x[i], y[i]);
        int ok = isinf(want) || want == 0 || fabs(want) < 16777216.0
                     ? got[i] == want && signbit(got[i]) == signbit(want)
                     : fabs(got[i] - want) <= f32_ulp(want);
        CHECK(ok, "floor_divide(%a, %a) = %.9g, want %.9g", x[i], y[i], got[i], want);
    }
    free(got);
    wgt_release(a), wgt_release(b), wgt_release(r);
}

typedef wgt_tensor *(*unary_fn)(wgt_tensor *);

/* Tiny normal arguments, where these functions are x to within half an ulp: a formula that
 * divides the argument by 2 or squares it on the way (asinh through log1p(x / (2 + x)))
 * flushes to zero on such a GPU. Within 2 ulp of the float64 value (their documented bound). */
TEST_BACKENDS(math2_tiny_normal_arguments_are_not_flushed) {
    static const struct {
        const char *name;
        unary_fn fn;
        double (*ref)(double);
    } ops[] = {{"tan", wgt_tan, tan},       {"asin", wgt_asin, asin},   {"atan", wgt_atan, atan},
               {"sinh", wgt_sinh, sinh},    {"asinh", wgt_asinh, asinh}, {"atanh", wgt_atanh, atanh}};
    static const float x[] = {FLT_MIN, -1.87331478e-38f, 3e-38f, -1e-37f, 0x1p-100f, -1e-20f, 0x1p-13f, -2.5e-4f,
                              1e-3f, 0x1.0004p-12f, -0x1.fffffep-13f, 0x1p-60f};
    enum { N = sizeof x / sizeof x[0] };
    wgt_tensor *t = f32_tensor(ctx, x, N);
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        wgt_tensor *r = ops[k].fn(t);
        double *got = r ? test_read_f64(r) : NULL;
        CHECK(got != NULL, "%s: %s", ops[k].name, wgt_last_error());
        for (int i = 0; got && i < N; i++) {
            double want = ops[k].ref((double)x[i]);
            CHECK(fabs(got[i] - want) <= 2 * f32_ulp(want), "%s(%a) = %a, want %a (%.2f ulp)", ops[k].name, x[i], got[i],
                  want, fabs(got[i] - want) / f32_ulp(want));
        }
        free(got);
        wgt_release(r);
    }
    wgt_release(t);
}

/* f16 NaNs of either sign (quiet and signalling), zeros and subnormals given as bits: signbit
 * and copysign read the sign from them, through the vector loads (8 dense elements) and the
 * element-wise ones (a strided view). */
TEST_BACKENDS(math2_f16_sign_of_nan_is_read_from_the_bits) {
    static const uint16_t bits[8] = {0xfe00, 0x7e00, 0xfc01, 0x7c01, 0x8000, 0x0001, 0x8001, 0xfe3f};
    int64_t n = 8;
    wgt_tensor *h = wgt_tensor_from_data(ctx, WGT_F16, 1, &n, bits, sizeof bits, WGT_USAGE_DEFAULT);
    wgt_tensor *ones = wgt_ones(ctx, WGT_F16, 1, &n);
    CHECK(h && ones, "inputs: %s", wgt_last_error());
    for (int view = 0; h && ones && view < 2; view++) {
        wgt_tensor *in = view ? wgt_slice(h, 0, 1, 8, 2) : wgt_retain(h);
        wgt_tensor *mag = view ? wgt_slice(ones, 0, 1, 8, 2) : wgt_retain(ones);
        wgt_tensor *s = wgt_signbit(in), *c = wgt_copysign(mag, in);
        int m = view ? 4 : 8, first = view ? 1 : 0, step = view ? 2 : 1;
        uint8_t got[8];
        double *cs = c ? test_read_f64(c) : NULL;
        CHECK(s && wgt_tensor_read(s, got, (size_t)m) == WGT_OK && cs, "view %d: %s", view, wgt_last_error());
        for (int i = 0; s && cs && i < m; i++) {
            int neg = (bits[first + i * step] & 0x8000) != 0;
            CHECK(got[i] == neg, "view %d: signbit(f16 bits 0x%04x) = %d, want %d", view, bits[first + i * step], got[i], neg);
            CHECK(cs[i] == (neg ? -1.0 : 1.0), "view %d: copysign(1, f16 bits 0x%04x) = %g", view, bits[first + i * step],
                  cs[i]);
        }
        free(cs);
        wgt_release(s), wgt_release(c), wgt_release(in), wgt_release(mag);
    }
    wgt_release(h), wgt_release(ones);
}

/* Whether got is want, or a zero of its sign where want is below FLT_MIN (a flushing GPU). */
static int same_or_flushed(double got, double want) {
    if (isnan(want)) return isnan(got);
    if (got == want && signbit(got) == signbit(want)) return 1;
    return fabs(want) < FLT_MIN && got == 0 && signbit(got) == signbit(want);
}

/* NumPy's remainder of f32 operands: fmod (exact) moved to the divisor's side, rounded once. */
static double mod_ref(float x, float y) {
    if (isnan(x) || isnan(y) || isinf(x) || y == 0) return NAN;
    double m = fmod((double)x, (double)y);
    if (m == 0) return copysign(0.0, y);
    return signbit(m) != signbit(y) ? (double)(float)(m + y) : m;
}

/* True division and remainder beside the same divisors: huge ones (3e38 / 3e38 was 0 there,
 * as 1 / y is subnormal), subnormal ones and subnormal dividends (1e-40 / 1e-5 is a normal
 * 1e-35). Quotients within WGSL's 2.5 ulp of division, results below FLT_MIN as they are or
 * flushed to a zero of their sign; remainders exact, since fmod is. */
TEST_BACKENDS(math2_div_and_mod_subnormal_and_huge_divisors) {
    static const float pairs[][2] = {
        {3e38f, 3e38f}, {1e38f, 2e38f}, {-3e38f, 1.5e38f}, {3e38f, -2.5e38f}, {1e30f, 2e38f}, {1.0f, 3e38f},
        {-7.5f, FLT_MAX}, {1e-40f, 2e-40f}, {-1e-40f, 1e-5f}, {1e-30f, 1e-40f}, {2.0f, 1e-45f}, {1e-7f, -1e-40f},
        {3e-39f, 3e-39f}, {0.0f, 1e-40f}, {-0.0f, 1e-40f}, {1e-40f, 3e38f}, {5e-39f, 0.75f}, {1.0f, 1e-40f},
        {-1e-40f, 3e-40f}, {7e-40f, -2e-40f}, {3e38f, 7e37f}, {-3e38f, 7e37f}, {1e-40f, 0.0f}, {-1.0f, 2e-39f},
    };
    enum { N = sizeof pairs / sizeof pairs[0] };
    float x[N], y[N];
    for (int i = 0; i < N; i++) x[i] = pairs[i][0], y[i] = pairs[i][1];
    wgt_tensor *a = f32_tensor(ctx, x, N), *b = f32_tensor(ctx, y, N);
    wgt_tensor *q = wgt_div(a, b), *r = wgt_mod(a, b);
    double *gq = q ? test_read_f64(q) : NULL, *gr = r ? test_read_f64(r) : NULL;
    CHECK(gq && gr, "div, mod: %s", wgt_last_error());
    for (int i = 0; gq && gr && i < N; i++) {
        double want = (double)x[i] / (double)y[i];
        if (fabs(want) > FLT_MAX) want = copysign(INFINITY, want);
        int ok = same_or_flushed(gq[i], (float)want) ||
                 (isfinite(want) && fabs(want) >= FLT_MIN && fabs(gq[i] - want) <= 2.5 * f32_ulp(want));
        CHECK(ok, "div(%a, %a) = %.9g, want %.9g", x[i], y[i], gq[i], want);
        double wm = mod_ref(x[i], y[i]);
        CHECK(same_or_flushed(gr[i], wm), "mod(%a, %a) = %a, want %a", x[i], y[i], gr[i], wm);
    }
    free(gq), free(gr);
    wgt_release(a), wgt_release(b), wgt_release(q), wgt_release(r);
}
