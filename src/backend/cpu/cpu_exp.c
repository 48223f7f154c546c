/*
 * A vectorisable exp for softmax (see cpu_exp.h). libm's exp is one call per element and
 * took most of a softmax row's time (about 5 ns per element here, where NumPy's f32 exp runs
 * in SIMD). This one is plain arithmetic the compiler vectorises: k = round(x / ln 2) by the
 * round-to-nearest of adding 1.5 * 2^52 (whose low bits then hold k), r = x - k ln 2 in two
 * parts (the high part has trailing zeros, so k times it is exact), exp(r) by its Taylor
 * series to r^13 (|r| <= 0.35, so the first term left out is below 2^-60), and the scale
 * 2^k built in the exponent bits. Arguments are clamped to -708 first, so 2^k stays normal.
 *
 * The loop is compiled for AVX-512, AVX2 and baseline x86-64 (target attributes), and the
 * processor's features pick one. Each version performs the same IEEE operations per element
 * in the same order (ISO C mode, -std=c11, contracts nothing into FMA), so every processor
 * gives the same bits.
 */
#include <string.h>

#include "cpu_exp.h"

/* Versions for AVX-512 and AVX2 where the compiler can build them, picked per call by the
 * processor's features (a runtime test, not an ifunc: an ifunc resolver runs before the
 * sanitizers' runtimes start, and ThreadSanitizer's instrumentation of it crashes). */
#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#define EXP_X86_VERSIONS 1
#else
#define EXP_X86_VERSIONS 0
#endif

/* exp(x) for -708 <= x <= 0. */
static inline double exp_normal_range(double x) {
    const double shift = 0x1.8p52, inv_ln2 = 0x1.71547652b82fep0;
    const double ln2_hi = 0x1.62e42fee00000p-1, ln2_lo = 0x1.a39ef35793c76p-33;
    double kd = x * inv_ln2 + shift;
    uint64_t k_bits;
    memcpy(&k_bits, &kd, sizeof k_bits);
    kd -= shift;
    double r = (x - kd * ln2_hi) - kd * ln2_lo;
    double p = 1.0 / 6227020800.0; /* 1/13! */
    p = p * r + 1.0 / 479001600.0;
    p = p * r + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    /* k_bits is the bits of 1.5 * 2^52 plus k; 2^k's bits are (k + 1023) << 52. */
    uint64_t scale_bits = (k_bits - 0x4338000000000000ull + 1023u) << 52;
    double scale;
    memcpy(&scale, &scale_bits, sizeof scale);
    return p * scale;
}

#define EXP_LOOP(e, n)                                                              \
    do {                                                                            \
        int64_t i = 0;                                                              \
        for (; i + 16 <= (n); i += 16)                                              \
            for (int j = 0; j < 16; j++) (e)[i + j] = exp_normal_range((e)[i + j]); \
        for (; i < (n); i++) (e)[i] = exp_normal_range((e)[i]);                     \
    } while (0)

static void exp_baseline(double *restrict e, int64_t n) { EXP_LOOP(e, n); }
#if EXP_X86_VERSIONS
__attribute__((target("avx2"))) static void exp_avx2(double *restrict e, int64_t n) { EXP_LOOP(e, n); }
__attribute__((target("avx512f"))) static void exp_avx512(double *restrict e, int64_t n) { EXP_LOOP(e, n); }
#endif

static void exp_in_place(double *e, int64_t n) {
#if EXP_X86_VERSIONS
    if (__builtin_cpu_supports("avx512f")) {
        exp_avx512(e, n);
        return;
    }
    if (__builtin_cpu_supports("avx2")) {
        exp_avx2(e, n);
        return;
    }
#endif
    exp_baseline(e, n);
}

/* The arguments, clamped; a loop of its own, since the compare in the polynomial's loop
 * keeps GCC from vectorising it. */
static void shifted_arguments(double *restrict e, const float *restrict x, int64_t n, double shift) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int j = 0; j < 16; j++) {
            double v = (double)x[i + j] - shift;
            e[i + j] = v < -708.0 ? -708.0 : v;
        }
    for (; i < n; i++) {
        double v = (double)x[i] - shift;
        e[i] = v < -708.0 ? -708.0 : v;
    }
}

void wgt_cpu_exp_shifted(double *e, const float *x, int64_t n, double shift) {
    shifted_arguments(e, x, n, shift);
    exp_in_place(e, n);
}
