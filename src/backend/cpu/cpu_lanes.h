/*
 * Sums and searches over dense runs of values for the reductions and row ops, in a fixed
 * order. A float sum gives element k to lane k % 8 and combines the lanes as
 * ((0 + 1) + (2 + 3)) + ((4 + 5) + (6 + 7)), in double; the order depends only on n, so a
 * caller that cuts its data the same way gets the same bits on any thread, and eight
 * independent lanes let the compiler use SIMD adds (four two-wide double sums) without
 * -ffast-math, which would let it reorder at will. The searches return the position of the
 * first best element, the answer a sequential scan gives.
 */
#ifndef WGT_CPU_LANES_H
#define WGT_CPU_LANES_H

#include <math.h>
#include <stdint.h>

/* The lanes of the header, as eight named accumulators: GCC pairs them into SIMD adds. */
#define LANES_BEGIN(T, init) T l0 = (init), l1 = l0, l2 = l0, l3 = l0, l4 = l0, l5 = l0, l6 = l0, l7 = l0
#define LANES_STEP8(STEP) \
    STEP(l0, 0) STEP(l1, 1) STEP(l2, 2) STEP(l3, 3) STEP(l4, 4) STEP(l5, 5) STEP(l6, 6) STEP(l7, 7)
#define LANES_COMBINE(l, OP) (((l[0] OP l[1]) OP (l[2] OP l[3])) OP ((l[4] OP l[5]) OP (l[6] OP l[7])))

/* Sums (and products, and sums of squares) of x[0..n) in double over the lanes, for each
 * element type a caller holds (f16 arrives as f32; i32 and u32 for mean and var, exact in
 * double; double for softmax's exponentials). */
#define DEFINE_LANE_SUM(name, T, OP, INIT)                    \
    static inline double name(const T *x, int64_t n) {        \
        LANES_BEGIN(double, INIT);                            \
        int64_t i = 0;                                        \
        for (; i + 8 <= n; i += 8) { LANES_STEP8(OP##_STEP) } \
        double l[8] = {l0, l1, l2, l3, l4, l5, l6, l7};       \
        for (int j = 0; i < n; i++, j++) OP##_STEP(l[j], 0)   \
        return LANES_COMBINE(l, OP##_COMBINE);                \
    }
#define SUM_STEP(l, k) l += (double)x[i + k];
#define SUM_COMBINE +
#define PROD_STEP(l, k) l *= (double)x[i + k];
#define PROD_COMBINE *
DEFINE_LANE_SUM(lane_sum_f32, float, SUM, 0.0)
DEFINE_LANE_SUM(lane_sum_i32, int32_t, SUM, 0.0)
DEFINE_LANE_SUM(lane_sum_u32, uint32_t, SUM, 0.0)
DEFINE_LANE_SUM(lane_sum_f64, double, SUM, 0.0)
DEFINE_LANE_SUM(lane_prod_f32, float, PROD, 1.0)
#define SQUARES_STEP(l, k) l += (double)x[i + k] * (double)x[i + k];
#define SQUARES_COMBINE +
DEFINE_LANE_SUM(lane_squares_f32, float, SQUARES, 0.0)

/* The sums of d = x - mean and of d * d, each over the lanes. */
#define DEFINE_LANE_DEV_SQ(name, T)                                                              \
    static inline void name(const T *x, int64_t n, double mean, double *dev, double *sq) {       \
        LANES_BEGIN(double, 0.0);                                                                \
        double q0 = 0, q1 = 0, q2 = 0, q3 = 0, q4 = 0, q5 = 0, q6 = 0, q7 = 0;                   \
        int64_t i = 0;                                                                           \
        for (; i + 8 <= n; i += 8) { LANES_STEP8(DEV_STEP) }                                     \
        double l[8] = {l0, l1, l2, l3, l4, l5, l6, l7}, q[8] = {q0, q1, q2, q3, q4, q5, q6, q7}; \
        for (int j = 0; i < n; i++, j++) {                                                       \
            double d = (double)x[i] - mean;                                                      \
            l[j] += d;                                                                           \
            q[j] += d * d;                                                                       \
        }                                                                                        \
        *dev = LANES_COMBINE(l, +);                                                              \
        *sq = LANES_COMBINE(q, +);                                                               \
    }
#define DEV_STEP(l, k)                      \
    {                                       \
        double d = (double)x[i + k] - mean; \
        l += d;                             \
        q##k += d * d;                      \
    }
DEFINE_LANE_DEV_SQ(lane_dev_sq_f32, float)
DEFINE_LANE_DEV_SQ(lane_dev_sq_i32, int32_t)
DEFINE_LANE_DEV_SQ(lane_dev_sq_u32, uint32_t)

/* Index of the first best element of x[0..n), n > 0: the first NaN if there is one, else the
 * first of the greatest (BETTER is >) or least (<) values. Sixteen running bests, which the
 * compiler updates as SIMD vectors, find the best value (a lane that meets a NaN keeps it);
 * a second pass finds where it first occurs, which also gives the first of equal values
 * (+0 or -0) exactly as a sequential scan would. */
#define DEFINE_FIRST_BEST(name, T, BETTER, WORST)                \
    static inline int64_t name(const T *restrict x, int64_t n) { \
        T m[16];                                                 \
        for (int j = 0; j < 16; j++) m[j] = (WORST);             \
        int64_t i = 0;                                           \
        for (; i + 16 <= n; i += 16)                             \
            for (int j = 0; j < 16; j++) {                       \
                T v = x[i + j];                                  \
                m[j] = (v BETTER m[j] || v != v) ? v : m[j];     \
            }                                                    \
        T best = (WORST);                                        \
        int nan = 0;                                             \
        for (int j = 0; j < 16; j++) {                           \
            nan |= m[j] != m[j];                                 \
            if (m[j] BETTER best) best = m[j];                   \
        }                                                        \
        for (; i < n; i++) {                                     \
            nan |= x[i] != x[i];                                 \
            if (x[i] BETTER best) best = x[i];                   \
        }                                                        \
        for (i = 0; i < n - 1; i++)                              \
            if (nan ? x[i] != x[i] : x[i] == best) return i;     \
        return n - 1;                                            \
    }
DEFINE_FIRST_BEST(first_max_f32, float, >, -INFINITY)
DEFINE_FIRST_BEST(first_min_f32, float, <, INFINITY)
DEFINE_FIRST_BEST(first_max_i32, int32_t, >, INT32_MIN)
DEFINE_FIRST_BEST(first_min_i32, int32_t, <, INT32_MAX)
DEFINE_FIRST_BEST(first_max_u32, uint32_t, >, 0)
DEFINE_FIRST_BEST(first_min_u32, uint32_t, <, UINT32_MAX)

#endif
