/*
 * Differential tests of the array API's further elementwise functions (tan .. exp2, trunc,
 * signbit, isfinite, bitwise ops and shifts, logaddexp, hypot, copysign, nextafter,
 * floor_divide, clip) on both backends, against float64 or exact integer references.
 *
 * Inputs sweep each op's domain on a log scale (so tiny, huge and subnormal arguments come up)
 * plus the points where the WebGPU formulas switch, and are read through a strided view (every
 * other element of a wider tensor), contiguously and broadcast; empty tensors give empty
 * results. Tolerances are in units in the last place of the f32 result (FLT_MIN's ulp below
 * FLT_MIN, where a GPU may flush): 2 ulp for the functions built from exactly reduced
 * arguments, short polynomials and quotients corrected by their residual (quotient.c), 2.5 for
 * tan, whose sin / cos rounds both. Worst seen: tan 2.03 on lavapipe, every other function
 * at most 1.68 (asin) there and on an NVIDIA H100, whose own division and sqrt are 2 ulp off
 * (before the correction asinh, atanh, log2 and log10 came to 2.02 .. 2.83). A formula
 * that cancels or overflows (asinh as log(x + sqrt(x^2 + 1)), hypot as sqrt(x^2 + y^2)) fails
 * by thousands of ulp. f16 results are within one f16 ulp of the rounded reference.
 * Bit operations, copysign, nextafter, trunc and the integer ops are exact.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

typedef wgt_tensor *(*unary_fn)(wgt_tensor *);
typedef wgt_tensor *(*binary_fn)(wgt_tensor *, wgt_tensor *);

/* ulp of an f32 result of magnitude |v| (denormal results: the spacing at FLT_MIN). */
static double ulp32(double v) {
    v = fabs(v);
    if (!(v >= FLT_MIN)) return ldexp(1.0, -149 + 23); /* FLT_MIN's ulp scaled: a flushing GPU gets 0 */
    int e;
    frexp(v, &e);
    return ldexp(1.0, e - 24);
}

/* f16: computed in f32 and rounded once, so within one f16 ulp of the rounded reference. */
static double ulp16(double v) {
    v = fabs(v);
    if (v < ldexp(1.0, -14)) return ldexp(1.0, -24);
    int e;
    frexp(v, &e);
    return ldexp(1.0, e - 11);
}

/* Deterministic values: a log-uniform magnitude in [10^lo, 10^hi] with either sign (sign < 0:
 * negative only, > 0 positive only), and uniform ones in [ulo, uhi]. */
static uint64_t rng_state;
static double rnd01(void) {
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}
static float log_value(double lo, double hi, int sign) {
    double m = pow(10.0, lo + (hi - lo) * rnd01());
    int neg = sign < 0 || (sign == 0 && rnd01() < 0.5);
    return (float)(neg ? -m : m);
}
static float uniform(double lo, double hi) { return (float)(lo + (hi - lo) * rnd01()); }

typedef struct {
    const char *name;
    unary_fn fn;
    double (*ref)(double);
    double ulps;
    double lo, hi; /* log10 range of magnitudes */
    int sign;
    double ulo, uhi; /* uniform range */
    float edges[8];  /* where the formulas switch, and the domain's ends */
} unary_case;

static double ref_exp2(double x) { return exp2(x); }
static double ref_log2(double x) { return log2(x); }
static double ref_log10(double x) { return log10(x); }

static const unary_case unary_cases[] = {
    {"tan", wgt_tan, tan, 2.5, -30, 6, 0, -20, 20, {0.785398185f, 1.57079637f, -1.57079637f, 3.14159274f, 1e-30f, 1e5f, 0}},
    {"asin", wgt_asin, asin, 2, -30, 0, 0, -1, 1, {1, -1, 0.5f, -0.5f, 0.50000006f, 0.99999994f, 1e-40f, 0}},
    {"acos", wgt_acos, acos, 2, -30, 0, 0, -1, 1, {1, -1, 0.5f, -0.5f, 0.50000006f, -0.99999994f, 1e-40f, 0}},
    {"atan", wgt_atan, atan, 2, -38, 38, 0, -4, 4, {2.41421366f, 0.41421357f, -2.41421366f, 1, 1e-40f, 3e38f, 0}},
    {"sinh", wgt_sinh, sinh, 2, -30, 1.95, 0, -3, 3, {1, -1, 0.99999994f, 88, 89.4f, -89.4f, 1e-40f, 0}},
    {"cosh", wgt_cosh, cosh, 2, -30, 1.95, 0, -3, 3, {1, 88, 89.4f, -89.4f, 1e-40f, 0, 20, -20}},
    {"asinh", wgt_asinh, asinh, 2, -38, 38, 0, -3, 3, {2, -2, 2.0000002f, 4096, 4096.0005f, 1e-30f, 3e38f, 0}},
    {"acosh", wgt_acosh, acosh, 2, 0, 38, 1, 1, 3, {1, 1.0000001f, 2, 2.0000002f, 4096, 3e38f, 1.25f, 1.5f}},
    {"atanh", wgt_atanh, atanh, 2, -30, 0, 0, -1, 1, {0.5f, -0.5f, 0.99999994f, -0.99999994f, 1e-30f, 0.25f, 1e-40f, 0}},
    {"log2", wgt_log2, ref_log2, 2, -44, 38, 1, 0.5, 2, {1, 2, 0.70710677f, 1.4142135f, 1e-40f, 3e38f, 0.99999994f, 1.0000001f}},
    {"log10", wgt_log10, ref_log10, 2, -44, 38, 1, 0.5, 2, {1, 10, 1000, 0.1f, 1e-40f, 3e38f, 0.99999994f, 1.0000001f}},
    {"exp2", wgt_exp2, ref_exp2, 2, -30, 2.1, 0, -10, 10, {127.9f, -126, -149, -149.5f, 0.5f, -0.5f, 1e-30f, 0}},
};

/* values in a [n] tensor read through every other element of a [2n] one (a strided view). */
static wgt_tensor *strided_input(wgt_context *ctx, wgt_dtype dt, const float *v, int64_t n) {
    float *wide = malloc(sizeof(float) * (size_t)(2 * n));
    for (int64_t i = 0; i < n; i++) wide[2 * i] = v[i], wide[2 * i + 1] = NAN;
    int64_t shape = 2 * n;
    wgt_tensor *f = wgt_tensor_from_data(ctx, WGT_F32, 1, &shape, wide, sizeof(float) * (size_t)shape, WGT_USAGE_DEFAULT);
    free(wide);
    wgt_tensor *base = dt == WGT_F32 ? wgt_retain(f) : wgt_cast(f, dt);
    wgt_release(f);
    wgt_tensor *view = wgt_slice(base, 0, 0, 2 * n, 2);
    wgt_release(base);
    return view;
}

enum { N = 600 };

static void check_unary_case(wgt_context *ctx, const unary_case *c, wgt_dtype dt) {
    float v[N];
    rng_state = 12345;
    int k = 0;
    for (int i = 0; i < 8; i++) v[k++] = c->edges[i], v[k++] = -c->edges[i];
    v[k++] = INFINITY, v[k++] = -INFINITY, v[k++] = NAN, v[k++] = -0.0f;
    while (k < N / 2) v[k++] = log_value(c->lo, c->hi, c->sign);
    while (k < N) v[k++] = uniform(c->ulo, c->uhi);
    wgt_tensor *x = strided_input(ctx, dt, v, N), *y = c->fn(x);
    CHECK(y != NULL, "%s: %s", c->name, wgt_last_error());
    if (!y) {
        wgt_release(x);
        return;
    }
    double *in = test_read_f64(x), *got = test_read_f64(y);
    double worst = 0;
    int bad = 0;
    for (int i = 0; i < N; i++) {
        double want = c->ref(in[i]);
        if (dt == WGT_F16) want = test_round_to(WGT_F16, want);
        else if (isinf((float)want)) want = (float)want; /* beyond FLT_MAX: the f32 result is inf */
        double err;
        if (isnan(want)) err = isnan(got[i]) ? 0 : INFINITY;
        else if (isinf(want) || isinf(got[i])) err = got[i] == want ? 0 : INFINITY;
        else err = fabs(got[i] - want) / (dt == WGT_F16 ? ulp16(want) : ulp32(want));
        if (err > worst) worst = err;
        double allowed = dt == WGT_F16 ? 1 : c->ulps;
        if (err > allowed && bad++ < 4)
            CHECK(0, "%s %s(%.9g) = %.9g, want %.9g (%.2f ulp > %g)", wgt_dtype_name(dt), c->name, in[i], got[i],
                  want, err, allowed);
    }
    if (getenv("WGT_TEST_REPORT_ULPS"))
        fprintf(stderr, "%s %s %s: worst %.2f ulp\n", test_backend_name(), wgt_dtype_name(dt), c->name, worst);
    free(in);
    free(got);
    wgt_release(x);
    wgt_release(y);
}

TEST_BACKENDS(math2_unary_float_vs_float64) {
    for (size_t i = 0; i < sizeof unary_cases / sizeof unary_cases[0]; i++) {
        check_unary_case(ctx, &unary_cases[i], WGT_F32);
        check_unary_case(ctx, &unary_cases[i], WGT_F16);
    }
}

/* ---- exact unary ops ---- */

static wgt_tensor *from_values(wgt_context *ctx, wgt_dtype dt, const double *v, int64_t n) {
    void *buf = malloc((size_t)(4 * n + 4));
    for (int64_t i = 0; i < n; i++) {
        if (dt == WGT_I32) ((int32_t *)buf)[i] = (int32_t)v[i];
        else if (dt == WGT_U32) ((uint32_t *)buf)[i] = (uint32_t)v[i];
        else ((float *)buf)[i] = (float)v[i];
    }
    wgt_tensor *t = wgt_tensor_from_data(ctx, dt == WGT_F16 ? WGT_F32 : dt, 1, &n, buf, (size_t)(4 * n), WGT_USAGE_DEFAULT);
    free(buf);
    if (dt != WGT_F16) return t;
    wgt_tensor *h = wgt_cast(t, WGT_F16);
    wgt_release(t);
    return h;
}

static double ref_trunc(double x) { return trunc(x); }
static double ref_signbit(double x) { return signbit(x) != 0; }
static double ref_isfinite(double x) { return isfinite(x) != 0; }

static void check_exact_unary(wgt_context *ctx, const char *name, unary_fn fn, wgt_dtype dt, const double *v, int64_t n,
                              double (*ref)(double), wgt_dtype want_dt) {
    wgt_tensor *x = from_values(ctx, dt, v, n), *y = fn(x);
    CHECK(y && wgt_tensor_dtype(y) == want_dt, "%s on %s: %s", name, wgt_dtype_name(dt), y ? "wrong type" : wgt_last_error());
    if (y && wgt_tensor_dtype(y) == want_dt) {
        double *in = test_read_f64(x), *got = test_read_f64(y);
        for (int64_t i = 0, bad = 0; i < n; i++) {
            double want = ref(in[i]);
            int same = isnan(want) ? isnan(got[i]) : got[i] == want && signbit(got[i]) == signbit(want);
            if (!same && bad++ < 4) CHECK(0, "%s %s(%.9g) = %.9g, want %.9g", wgt_dtype_name(dt), name, in[i], got[i], want);
        }
        free(in);
        free(got);
    }
    wgt_release(x);
    wgt_release(y);
}

static double ref_not_i32(double x) { return (double)~(int32_t)x; }
static double ref_not_u32(double x) { return (double)~(uint32_t)x; }

TEST_BACKENDS(math2_trunc_signbit_isfinite_bitwise_not) {
    const double f[] = {2.5, -2.5, 0.0, -0.0, 0.999, -0.999, 1e30, -1e-30, 8388607.5, -8388607.5, INFINITY, -INFINITY,
                        NAN, -NAN, 65504, 1e-40};
    const int64_t nf = sizeof f / sizeof f[0];
    const double ints[] = {0, 1, -1, 2147483647.0, -2147483648.0, 12345, -777};
    const double uints[] = {0, 1, 4294967295.0, 2147483648.0, 12345};
    const wgt_dtype floats[] = {WGT_F32, WGT_F16};
    for (int k = 0; k < 2; k++) {
        check_exact_unary(ctx, "trunc", wgt_trunc, floats[k], f, nf, ref_trunc, floats[k]);
        check_exact_unary(ctx, "signbit", wgt_signbit, floats[k], f, nf, ref_signbit, WGT_BOOL);
        check_exact_unary(ctx, "isfinite", wgt_isfinite, floats[k], f, nf, ref_isfinite, WGT_BOOL);
    }
    check_exact_unary(ctx, "trunc", wgt_trunc, WGT_I32, ints, 7, ref_trunc, WGT_I32);
    check_exact_unary(ctx, "isfinite", wgt_isfinite, WGT_I32, ints, 7, ref_isfinite, WGT_BOOL);
    check_exact_unary(ctx, "isfinite", wgt_isfinite, WGT_U32, uints, 5, ref_isfinite, WGT_BOOL);
    check_exact_unary(ctx, "bitwise_not", wgt_bitwise_not, WGT_I32, ints, 7, ref_not_i32, WGT_I32);
    check_exact_unary(ctx, "bitwise_not", wgt_bitwise_not, WGT_U32, uints, 5, ref_not_u32, WGT_U32);
}

/* ---- binary ops ---- */

typedef double (*ref2)(double, double, wgt_dtype);

/* a (read through a stepped view) op b, elementwise and with b's first element broadcast as a
 * rank-0 tensor; ulps < 0: exact (signed zeros told apart), else f32 ulps (f16: one f16 ulp). */
static void check_binary(wgt_context *ctx, const char *name, binary_fn fn, wgt_dtype dt, const double *a,
                         const double *b, int64_t n, ref2 ref, double ulps) {
    for (int scalar = 0; scalar < 2; scalar++) {
        wgt_tensor *ta = NULL, *tb = from_values(ctx, dt, b, scalar ? 1 : n);
        if (dt == WGT_F32 || dt == WGT_F16) {
            float *fa = malloc(sizeof(float) * (size_t)n);
            for (int64_t i = 0; i < n; i++) fa[i] = (float)a[i];
            ta = strided_input(ctx, dt, fa, n);
            free(fa);
        } else {
            ta = from_values(ctx, dt, a, n);
        }
        wgt_tensor *tb0 = scalar ? wgt_reshape(tb, 0, NULL) : wgt_retain(tb);
        wgt_tensor *y = fn(ta, tb0);
        CHECK(y != NULL, "%s on %s: %s", name, wgt_dtype_name(dt), wgt_last_error());
        if (y) {
            double *x = test_read_f64(ta), *z = test_read_f64(tb), *got = test_read_f64(y);
            for (int64_t i = 0, bad = 0; i < n; i++) {
                double bi = z[scalar ? 0 : i], want = ref(x[i], bi, dt);
                if (dt == WGT_F16) want = test_round_to(WGT_F16, want);
                else if (dt == WGT_F32 && isinf((float)want)) want = (float)want;
                int ok;
                if (isnan(want)) ok = isnan(got[i]);
                else if (ulps < 0 || isinf(want)) ok = got[i] == want && signbit(got[i]) == signbit(want);
                else ok = fabs(got[i] - want) <= (dt == WGT_F16 ? ulp16(want) : ulps * ulp32(want));
                if (!ok && bad++ < 4)
                    CHECK(0, "%s %s(%.9g, %.9g) = %.9g, want %.9g", wgt_dtype_name(dt), name, x[i], bi, got[i], want);
            }
            free(x);
            free(z);
            free(got);
        }
        wgt_release(ta);
        wgt_release(tb);
        wgt_release(tb0);
        wgt_release(y);
    }
}

static double r_logaddexp(double x, double y, wgt_dtype d) {
    (void)d;
    if (x == y) return x + M_LN2;
    double m = fmax(x, y);
    return isnan(x) || isnan(y) ? NAN : m + log1p(exp(-fabs(x - y)));
}
static double r_hypot(double x, double y, wgt_dtype d) { (void)d; return hypot(x, y); }
static double r_copysign(double x, double y, wgt_dtype d) { (void)d; return copysign(x, y); }
static double r_nextafter(double x, double y, wgt_dtype d) {
    if (d == WGT_F32) return nextafterf((float)x, (float)y);
    /* f16: the neighbouring f16 value, found by rounding x plus or minus its f16 spacing */
    if (isnan(x) || isnan(y)) return NAN;
    if (x == y) return y;
    if (x == 0) return copysign(ldexp(1.0, -24), y);
    double step = fabs(x) < ldexp(1.0, -14) ? ldexp(1.0, -24) : ulp16(x);
    /* stepping toward zero from a power of two crosses into the finer binade */
    if ((fabs(y) < fabs(x) || signbit(x) != signbit(y)) && fabs(x) >= ldexp(1.0, -14) && frexp(fabs(x), &(int){0}) == 0.5)
        step /= 2;
    if (isinf(x)) return copysign(65504, x);
    double r = y > x ? x + step : x - step;
    return fabs(r) > 65504 ? copysign(INFINITY, r) : r;
}
static double r_floor_divide(double x, double y, wgt_dtype d) {
    if (d == WGT_I32 || d == WGT_U32) {
        if (y == 0) return 0;
        if (d == WGT_I32 && x == -2147483648.0 && y == -1) return x;
        return floor(x / y) + 0.0; /* exact in double for 32-bit operands; no -0 for integers */
    }
    if (isnan(x) || isnan(y) || isinf(x)) return NAN;
    if (y == 0) return x / y;
    /* NumPy (and Python's //): a finite x over an infinity of the other sign is -1 */
    if (isinf(y)) return x != 0 && signbit(x) != signbit(y) ? -1 : copysign(0.0, x / y);
    double q = floor(x / y);
    return q == 0 ? copysign(0.0, x / y) : q;
}
static double r_and(double x, double y, wgt_dtype d) {
    return d == WGT_I32 ? (double)((int32_t)x & (int32_t)y) : (double)((uint32_t)x & (uint32_t)y);
}
static double r_or(double x, double y, wgt_dtype d) {
    return d == WGT_I32 ? (double)((int32_t)x | (int32_t)y) : (double)((uint32_t)x | (uint32_t)y);
}
static double r_xor(double x, double y, wgt_dtype d) {
    return d == WGT_I32 ? (double)((int32_t)x ^ (int32_t)y) : (double)((uint32_t)x ^ (uint32_t)y);
}
/* NumPy's shifts: counts outside [0, 32) shift everything out (sign fill for a right shift). */
static double r_shl(double x, double y, wgt_dtype d) {
    if (y < 0 || y >= 32) return 0;
    uint32_t r = (uint32_t)(d == WGT_I32 ? (uint32_t)(int32_t)x : (uint32_t)x) << (int)y;
    return d == WGT_I32 ? (double)(int32_t)r : (double)r;
}
static double r_shr(double x, double y, wgt_dtype d) {
    if (y < 0 || y >= 32) return x < 0 ? -1 : 0;
    return floor(x / ldexp(1.0, (int)y)); /* arithmetic shift for i32, logical for u32 */
}

static void fill_pairs(double *a, double *b, int n, double scale) {
    rng_state = 777;
    for (int i = 0; i < n; i++) {
        a[i] = log_value(-scale, scale, 0);
        b[i] = log_value(-scale, scale, 0);
    }
}

TEST_BACKENDS(math2_float_binary_vs_float64) {
    enum { M = 400 };
    double a[M], b[M];
    const double edges[][2] = {{1e30, 1e30}, {3e38, 3e38}, {1e-30, 1e-30}, {1e-40, 2e-40}, {INFINITY, 1},
                               {INFINITY, NAN}, {-INFINITY, -INFINITY}, {INFINITY, INFINITY}, {0, 0}, {-0.0, 0},
                               {NAN, 1}, {100, -100}, {-88, 88}, {1, 1e-8}, {7, -2}, {-7, 2}, {-0.0, -3},
                               {5, INFINITY}, {-5, INFINITY}, {3, 0}, {-3, -0.0}};
    const int ne = sizeof edges / sizeof edges[0];
    const wgt_dtype floats[] = {WGT_F32, WGT_F16};
    for (int k = 0; k < 2; k++) {
        wgt_dtype dt = floats[k];
        fill_pairs(a, b, M, dt == WGT_F16 ? 4 : 30);
        for (int i = 0; i < ne; i++) a[i] = edges[i][0], b[i] = edges[i][1];
        check_binary(ctx, "logaddexp", wgt_logaddexp, dt, a, b, M, r_logaddexp, 2);
        check_binary(ctx, "hypot", wgt_hypot, dt, a, b, M, r_hypot, 1.5);
        check_binary(ctx, "copysign", wgt_copysign, dt, a, b, M, r_copysign, -1);
        check_binary(ctx, "nextafter", wgt_nextafter, dt, a, b, M, r_nextafter, -1);
        /* 1 ulp: below 2^23 that is exact (the spacing is under 1), above it the quotient rounds */
        fill_pairs(a, b, M, 3);
        for (int i = 0; i < ne; i++) a[i] = edges[i][0], b[i] = edges[i][1];
        check_binary(ctx, "floor_divide", wgt_floor_divide, dt, a, b, M, r_floor_divide, 1);
    }
}

TEST_BACKENDS(math2_integer_binary_exact) {
    enum { M = 300 };
    double a[M], b[M], c[M];
    rng_state = 99;
    const wgt_dtype ints[] = {WGT_I32, WGT_U32};
    for (int k = 0; k < 2; k++) {
        wgt_dtype dt = ints[k];
        for (int i = 0; i < M; i++) {
            a[i] = dt == WGT_I32 ? floor(uniform(-2147483648.0, 2147483647.0)) : floor(uniform(0, 4294967295.0));
            b[i] = dt == WGT_I32 ? floor(uniform(-2147483648.0, 2147483647.0)) : floor(uniform(0, 4294967295.0));
            c[i] = i < 80 ? (dt == WGT_I32 ? i - 40 : i) : floor(uniform(dt == WGT_I32 ? -40 : 0, 40)); /* shift counts */
        }
        if (dt == WGT_I32) a[0] = -2147483648.0, b[0] = -1, a[1] = -7, b[1] = 2, a[2] = 7, b[2] = -2, a[3] = -8, b[3] = 2;
        a[4] = 5, b[4] = 0, a[5] = 0, b[5] = 0;
        check_binary(ctx, "bitwise_and", wgt_bitwise_and, dt, a, b, M, r_and, -1);
        check_binary(ctx, "bitwise_or", wgt_bitwise_or, dt, a, b, M, r_or, -1);
        check_binary(ctx, "bitwise_xor", wgt_bitwise_xor, dt, a, b, M, r_xor, -1);
        check_binary(ctx, "floor_divide", wgt_floor_divide, dt, a, b, M, r_floor_divide, -1);
        for (int i = 80; i < M; i += 3) b[i] = floor(uniform(1, 1000)) * (dt == WGT_I32 && (i & 4) ? -1 : 1);
        check_binary(ctx, "floor_divide small divisors", wgt_floor_divide, dt, a, b, M, r_floor_divide, -1);
        check_binary(ctx, "bitwise_left_shift", wgt_bitwise_left_shift, dt, a, c, M, r_shl, -1);
        check_binary(ctx, "bitwise_right_shift", wgt_bitwise_right_shift, dt, a, c, M, r_shr, -1);
    }
}

/* ---- clip ---- */

/* clip against numpy.clip: NaN anywhere gives NaN, lo > hi gives hi; lo broadcast along
 * rows, hi a rank-0 tensor or absent. */
TEST_BACKENDS(math2_clip_tensor_bounds) {
    const double xv[] = {-5, -1, 0, 0.5, 1, 3, NAN, 2, -0.0, 7, INFINITY, -INFINITY};
    const double lov[] = {-2, 0.25, NAN, 1};
    wgt_tensor *x1 = from_values(ctx, WGT_F32, xv, 12), *lo1 = from_values(ctx, WGT_F32, lov, 4);
    int64_t xs[2] = {3, 4}, ls[2] = {1, 4};
    wgt_tensor *x = wgt_reshape(x1, 2, xs), *lo = wgt_reshape(lo1, 2, ls);
    const double cases_hi[] = {2, 0.1, NAN};
    for (int c = 0; c < 4; c++) {
        wgt_tensor *hi = c < 3 ? wgt_full(ctx, WGT_F32, 0, NULL, cases_hi[c]) : NULL;
        wgt_tensor *y = wgt_clip(x, lo, hi);
        CHECK(y && wgt_tensor_ndim(y) == 2, "clip case %d: %s", c, wgt_last_error());
        if (y) {
            double *got = test_read_f64(y);
            for (int i = 0; i < 12; i++) {
                double l = lov[i % 4], h = c < 3 ? (float)cases_hi[c] : INFINITY, v = xv[i]; /* bounds in f32 */
                double want = isnan(v) || isnan(l) || isnan(h) ? NAN : fmin(fmax(v, l), h);
                CHECK(isnan(want) ? isnan(got[i]) : got[i] == want, "clip case %d [%d]: clip(%g, %g, %g) = %g, want %g",
                      c, i, v, l, h, got[i], want);
            }
            free(got);
        }
        wgt_release(hi);
        wgt_release(y);
    }
    /* integers, with only an upper bound that broadcasts the result to a larger shape */
    const double iv[] = {-3, 9, 4}, hv[] = {5, 0};
    wgt_tensor *xi = from_values(ctx, WGT_I32, iv, 3), *hi1 = from_values(ctx, WGT_I32, hv, 2);
    int64_t hs[2] = {2, 1};
    wgt_tensor *hi = wgt_reshape(hi1, 2, hs), *y = wgt_clip(xi, NULL, hi);
    CHECK(y && wgt_tensor_ndim(y) == 2 && wgt_tensor_numel(y) == 6, "integer clip: %s", wgt_last_error());
    if (y) {
        double *got = test_read_f64(y);
        const double want[6] = {-3, 5, 4, -3, 0, 0};
        for (int i = 0; i < 6; i++) CHECK(got[i] == want[i], "integer clip [%d] = %g, want %g", i, got[i], want[i]);
        free(got);
    }
    wgt_release(y);
    wgt_release(hi);
    wgt_release(hi1);
    wgt_release(xi);
    wgt_release(x);
    wgt_release(lo);
    wgt_release(x1);
    wgt_release(lo1);
}

/* ---- empty tensors, errors ---- */

TEST_BACKENDS(math2_empty_and_errors) {
    int64_t zero = 0;
    wgt_tensor *e = wgt_zeros(ctx, WGT_F32, 1, &zero), *ei = wgt_zeros(ctx, WGT_I32, 1, &zero);
    wgt_tensor *r[4] = {wgt_asinh(e), wgt_hypot(e, e), wgt_bitwise_left_shift(ei, ei), wgt_clip(e, e, NULL)};
    for (int i = 0; i < 4; i++) {
        CHECK(r[i] && wgt_tensor_numel(r[i]) == 0, "empty %d: %s", i, wgt_last_error());
        wgt_release(r[i]);
    }
    int64_t two = 2, three = 3;
    wgt_tensor *f = wgt_ones(ctx, WGT_F32, 1, &two), *i32 = wgt_ones(ctx, WGT_I32, 1, &two);
    wgt_tensor *f3 = wgt_ones(ctx, WGT_F32, 1, &three);
    CHECK_ERROR(!wgt_tan(i32), WGT_ERR_DTYPE, "wgt_tan");
    CHECK_ERROR(!wgt_signbit(i32), WGT_ERR_DTYPE, "wgt_signbit");
    CHECK_ERROR(!wgt_bitwise_not(f), WGT_ERR_DTYPE, "wgt_bitwise_not: takes integer types (i32, u32, i64, u64, i16, u16, i8, u8) and bool, not f32");
    CHECK_ERROR(!wgt_bitwise_and(f, f), WGT_ERR_DTYPE, "wgt_bitwise_and: takes integer types (i32, u32, i64, u64, i16, u16, i8, u8, bool), not f32");
    CHECK_ERROR(!wgt_hypot(i32, i32), WGT_ERR_DTYPE, "wgt_hypot");
    CHECK_ERROR(!wgt_bitwise_left_shift(i32, f), WGT_ERR_DTYPE, "operand types differ");
    CHECK_ERROR(!wgt_floor_divide(f, f3), WGT_ERR_SHAPE, "wgt_floor_divide");
    CHECK_ERROR(!wgt_clip(f, i32, NULL), WGT_ERR_DTYPE, "wgt_clip: lo is i32 but a is f32");
    CHECK_ERROR(!wgt_clip(f, NULL, f3), WGT_ERR_SHAPE, "wgt_clip");
    CHECK(!wgt_clip(NULL, f, f) && !wgt_logaddexp(f, NULL) && !wgt_atanh(NULL), "NULL inputs give NULL");
    wgt_release(e), wgt_release(ei), wgt_release(f), wgt_release(i32), wgt_release(f3);
}

/* Every binary op given an f32 and an f16 operand promotes (array API) and runs on f32
 * copies: the result equals the op on operands cast first, bit for bit; the integer-only ops
 * refuse the pair with WGT_ERR_DTYPE. An op whose promotion path had no entry point crashed. */
TEST_BACKENDS(math2_binary_ops_promote_mixed_floats) {
    static const struct {
        const char *name;
        wgt_tensor *(*fn)(wgt_tensor *, wgt_tensor *);
        int int_only;
    } ops[] = {
        {"add", wgt_add, 0}, {"sub", wgt_sub, 0}, {"mul", wgt_mul, 0}, {"div", wgt_div, 0}, {"pow", wgt_pow, 0},
        {"maximum", wgt_maximum, 0}, {"minimum", wgt_minimum, 0}, {"mod", wgt_mod, 0}, {"atan2", wgt_atan2, 0},
        {"eq", wgt_eq, 0}, {"ne", wgt_ne, 0}, {"lt", wgt_lt, 0}, {"le", wgt_le, 0}, {"gt", wgt_gt, 0},
        {"ge", wgt_ge, 0}, {"logical_and", wgt_logical_and, 0}, {"logical_or", wgt_logical_or, 0},
        {"logaddexp", wgt_logaddexp, 0}, {"hypot", wgt_hypot, 0}, {"copysign", wgt_copysign, 0},
        {"nextafter", wgt_nextafter, 0}, {"floor_divide", wgt_floor_divide, 0}, {"bitwise_and", wgt_bitwise_and, 1},
        {"bitwise_or", wgt_bitwise_or, 1}, {"bitwise_xor", wgt_bitwise_xor, 1},
        {"bitwise_left_shift", wgt_bitwise_left_shift, 1}, {"bitwise_right_shift", wgt_bitwise_right_shift, 1},
    };
    float av[6] = {1.5f, -2.25f, 3.0f, 0.5f, -0.75f, 4.0f}, bv[3] = {0.5f, -1.5f, 2.0f};
    int64_t sa[2] = {2, 3}, sb[1] = {3};
    wgt_tensor *a = wgt_tensor_from_data(ctx, WGT_F32, 2, sa, av, sizeof av, WGT_USAGE_DEFAULT);
    wgt_tensor *b32 = wgt_tensor_from_data(ctx, WGT_F32, 1, sb, bv, sizeof bv, WGT_USAGE_DEFAULT);
    wgt_tensor *b16 = b32 ? wgt_cast(b32, WGT_F16) : NULL;
    CHECK(a && b16, "inputs: %s", wgt_last_error());
    for (size_t i = 0; a && b16 && i < sizeof ops / sizeof *ops; i++) {
        wgt_tensor *got = ops[i].fn(a, b16), *want = ops[i].int_only ? NULL : ops[i].fn(a, b32);
        if (ops[i].int_only) {
            CHECK(!got && wgt_last_status() == WGT_ERR_DTYPE, "%s(f32, f16): status %s, want a dtype error", ops[i].name,
                  wgt_status_name(wgt_last_status()));
            wgt_clear_error();
        } else {
            double *g = got ? test_read_f64(got) : NULL, *w = want ? test_read_f64(want) : NULL;
            CHECK(g && w, "%s(f32, f16): %s", ops[i].name, wgt_last_error());
            for (int k = 0; g && w && k < 6; k++)
                CHECK(g[k] == w[k] || (isnan(g[k]) && isnan(w[k])), "%s(f32, f16) element %d: %g, want %g", ops[i].name,
                      k, g[k], w[k]);
            free(g), free(w);
        }
        wgt_release(got), wgt_release(want);
    }
    wgt_release(a), wgt_release(b32), wgt_release(b16);
}

/* clip of the narrow and 64-bit integer types (maximum then minimum in their own type): each
 * value limited to its broadcast bounds exactly, values past 2^32 for the 64-bit ones; bool
 * and bf16 take no arithmetic. */
static wgt_tensor *ints_of(wgt_context *ctx, wgt_dtype dt, int ndim, const int64_t *shape, const int64_t *v) {
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    size_t es = wgt_dtype_size(dt);
    unsigned char raw[64];
    for (int64_t i = 0; i < n; i++) memcpy(raw + (size_t)i * es, &v[i], es); /* the low bytes: little-endian */
    return wgt_tensor_from_data(ctx, dt, ndim, shape, raw, (size_t)n * es, WGT_USAGE_DEFAULT);
}

TEST_BACKENDS(math2_clip_narrow_and_64bit_integers) {
    static const wgt_dtype types[] = {WGT_I8, WGT_U8, WGT_I16, WGT_U16, WGT_I64, WGT_U64};
    for (size_t t = 0; t < sizeof types / sizeof *types; t++) {
        wgt_dtype dt = types[t];
        int wide = wgt_dtype_size(dt) == 8, is_signed = dt == WGT_I8 || dt == WGT_I16 || dt == WGT_I64;
        int64_t scale = wide ? 3000000000LL : 1, base = is_signed ? 0 : 60;
        int64_t xv[6], lv[3], hv[1];
        for (int i = 0; i < 6; i++) xv[i] = (base + (i * 37) % 90 - 45) * scale;
        for (int i = 0; i < 3; i++) lv[i] = (base - 20 + 15 * i) * scale;
        hv[0] = (base + 25) * scale;
        int64_t xs[2] = {2, 3}, ls[1] = {3};
        wgt_tensor *x = ints_of(ctx, dt, 2, xs, xv), *lo = ints_of(ctx, dt, 1, ls, lv), *hi = ints_of(ctx, dt, 0, NULL, hv);
        wgt_tensor *y = x && lo && hi ? wgt_clip(x, lo, hi) : NULL;
        CHECK(y && wgt_tensor_dtype(y) == dt && wgt_tensor_numel(y) == 6, "clip of %s: %s", wgt_dtype_name(dt),
              wgt_last_error());
        unsigned char got[48];
        if (y && wgt_tensor_read(y, got, 6 * wgt_dtype_size(dt)) == WGT_OK)
            for (int i = 0; i < 6; i++) {
                int64_t l = lv[i % 3], want = xv[i] < l ? l : xv[i];
                want = want > hv[0] ? hv[0] : want;
                CHECK(memcmp(got + (size_t)i * wgt_dtype_size(dt), &want, wgt_dtype_size(dt)) == 0,
                      "clip of %s [%d]: clip(%lld, %lld, %lld) differs", wgt_dtype_name(dt), i, (long long)xv[i],
                      (long long)l, (long long)hv[0]);
            }
        wgt_release(x), wgt_release(lo), wgt_release(hi), wgt_release(y);
    }
    int64_t two = 2;
    wgt_tensor *b = wgt_ones(ctx, WGT_BOOL, 1, &two), *h = wgt_ones(ctx, WGT_BF16, 1, &two), *r = NULL;
    CHECK_ERROR((r = wgt_clip(b, b, b)) == NULL, WGT_ERR_DTYPE, "wgt_clip: a is bool");
    wgt_release(r);
    CHECK_ERROR((r = wgt_clip(h, NULL, h)) == NULL, WGT_ERR_DTYPE, "wgt_clip: a is bf16");
    wgt_release(r), wgt_release(b), wgt_release(h);
}
