/*
 * Loops over dense operands that the compiler turns into SIMD code at the Makefile's -O2.
 * GCC's default -O2 cost model only vectorises a loop whose trip count needs no scalar
 * remainder, so the loops run blocks of 16 elements with a constant inner trip count, then
 * the remainder one at a time; the operands arrive as restrict parameters of an inlined
 * function, so no runtime overlap test is needed (kernel outputs are fresh storages, never
 * an input). Without -ffast-math and with ISO C's -ffp-contract=off the compiler neither
 * reorders nor fuses float operations, so the SIMD loops give the same bits as the scalar
 * expression, element by element.
 */
#ifndef WGT_CPU_LOOPS_H
#define WGT_CPU_LOOPS_H

#include <stdint.h>

/* BODY for i_ = 0 .. n - 1. */
#define WGT_CPU_BLOCKED(n, BODY)                \
    do {                                        \
        int64_t b_ = 0;                         \
        for (; b_ + 16 <= (n); b_ += 16)        \
            for (int j_ = 0; j_ < 16; j_++) {   \
                int64_t i_ = b_ + j_;           \
                BODY;                           \
            }                                   \
        for (int64_t i_ = b_; i_ < (n); i_++) { \
            BODY;                               \
        }                                       \
    } while (0)

/* How the inputs of a dense run are laid out: both dense, or one of them one value. */
typedef enum { WGT_CPU_DENSE_DENSE, WGT_CPU_DENSE_SCALAR, WGT_CPU_SCALAR_DENSE } wgt_cpu_pair_mode;

/* o[i] = EXPR of x = a[i] and y = b[i] (or the one value *a, *b in the scalar modes). */
typedef void (*wgt_cpu_map2_fn)(wgt_cpu_pair_mode mode, void *o, const void *a, const void *b, int64_t n);
/* o[i] = EXPR of x = a[i]; p0 and p1 are the op's parameters, already in the input's type. */
typedef void (*wgt_cpu_map1_fn)(void *o, const void *a, int64_t n, const void *p0, const void *p1);

/* Defines static void name(...) of type wgt_cpu_map2_fn computing TO from two TI. */
#define WGT_CPU_DEFINE_MAP2(name, TO, TI, EXPR)                                                           \
    static inline void name##_dd(TO *restrict o, const TI *restrict a, const TI *restrict b, int64_t n) { \
        WGT_CPU_BLOCKED(n, TI x = a[i_]; TI y = b[i_]; o[i_] = (EXPR));                                   \
    }                                                                                                     \
    static inline void name##_ds(TO *restrict o, const TI *restrict a, TI y, int64_t n) {                 \
        WGT_CPU_BLOCKED(n, TI x = a[i_]; o[i_] = (EXPR));                                                 \
    }                                                                                                     \
    static inline void name##_sd(TO *restrict o, TI x, const TI *restrict b, int64_t n) {                 \
        WGT_CPU_BLOCKED(n, TI y = b[i_]; o[i_] = (EXPR));                                                 \
    }                                                                                                     \
    static void name(wgt_cpu_pair_mode mode, void *o, const void *a, const void *b, int64_t n) {          \
        if (mode == WGT_CPU_DENSE_DENSE) name##_dd(o, a, b, n);                                           \
        else if (mode == WGT_CPU_DENSE_SCALAR) name##_ds(o, a, *(const TI *)b, n);                        \
        else name##_sd(o, *(const TI *)a, b, n);                                                          \
    }

/* Defines static void name(...) of type wgt_cpu_map1_fn computing TO from TI; EXPR may use
 * the parameters p0 and p1 (of type TI). */
#define WGT_CPU_DEFINE_MAP1(name, TO, TI, EXPR)                                                  \
    static inline void name##_d(TO *restrict o, const TI *restrict a, int64_t n, TI p0, TI p1) { \
        (void)p0;                                                                                \
        (void)p1;                                                                                \
        WGT_CPU_BLOCKED(n, TI x = a[i_]; o[i_] = (EXPR));                                        \
    }                                                                                            \
    static void name(void *o, const void *a, int64_t n, const void *p0, const void *p1) {        \
        name##_d(o, a, n, *(const TI *)p0, *(const TI *)p1);                                     \
    }

#endif
