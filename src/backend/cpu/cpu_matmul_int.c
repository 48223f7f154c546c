/*
 * Integer matrix products on the CPU backend (i32, u32, i64, u64; the core computes the
 * narrow integers in i32 and casts back). Products and sums wrap modulo 2^bits as NumPy's do,
 * and two's complement makes that one computation for the signed and the unsigned type of a
 * width: the values are read as unsigned words and multiplied and added in unsigned
 * arithmetic of the output's width, which C defines to wrap (signed overflow would be
 * undefined behaviour, and a float accumulator would lose the low bits past 2^24).
 *
 * The rows of the output (over the batch and M) are shared among the pool's threads, each
 * row written by one task, so the result does not depend on the thread count (it could not
 * anyway: wrapping sums are exact in any order). A row is computed in the order its
 * operands' layout favours: where b's rows are contiguous (unit stride along N) the row is
 * an accumulation of a[i, k] times b's row k (i-k-j order, the inner loop a vectorisable
 * run over N); otherwise each output is a dot product along K, which reads b's columns along
 * their unit stride when b is stored by columns (a transposed view). K = 0 gives zeros.
 */
#include <string.h>

#include "cpu_kernels.h"
#include "cpu_walk.h"

typedef struct {
    const wgt_operand *out, *a, *b;
    int64_t rows, M, N, K; /* rows = batch * M */
    int64_t tasks;
} int_job;

/* The storage offsets of a's row m and b's matrix for output row r (batch element r / M). */
static void row_offsets(const int_job *j, int64_t r, int64_t *a_off, int64_t *b_off) {
    const wgt_operand *out = j->out, *a = j->a, *b = j->b;
    int nd = out->ndim;
    int64_t i = r / j->M, m = r % j->M;
    *a_off = a->offset + m * a->strides[nd - 2];
    *b_off = b->offset;
    for (int d = nd - 3; d >= 0; d--) {
        int64_t idx = i % out->shape[d];
        i /= out->shape[d];
        *a_off += idx * a->strides[d];
        *b_off += idx * b->strides[d];
    }
}

/* c[0..n) += x b[0..n), eight statements a step: GCC's -O2 pairs them into SIMD multiplies
 * and adds where the type has them (3.3x faster for u32 on x86-64 than the plain loop,
 * which -O2's cheap vectoriser leaves scalar). */
#define INT_AXPY(NAME, T)                                                                              \
    static inline void NAME(T *restrict c, const T *restrict b, T x, int64_t n) {                      \
        int64_t i = 0;                                                                                 \
        for (; i + 8 <= n; i += 8) {                                                                   \
            c[i] += x * b[i], c[i + 1] += x * b[i + 1], c[i + 2] += x * b[i + 2];                      \
            c[i + 3] += x * b[i + 3], c[i + 4] += x * b[i + 4], c[i + 5] += x * b[i + 5];              \
            c[i + 6] += x * b[i + 6], c[i + 7] += x * b[i + 7];                                        \
        }                                                                                              \
        for (; i < n; i++) c[i] += x * b[i];                                                           \
    }

/* The sum of a[k] b[k] over k < n for unit-step a and b, in eight lanes (any order gives the
 * same wrapped sum) that GCC keeps in SIMD registers: 3x the single sum for u32 on x86-64. */
#define INT_DOT(NAME, T)                                                                               \
    static inline T NAME(const T *a, const T *b, int64_t n) {                                          \
        T l[8] = {0};                                                                                  \
        int64_t k = 0;                                                                                 \
        for (; k + 8 <= n; k += 8)                                                                     \
            for (int i = 0; i < 8; i++) l[i] += a[k + i] * b[k + i];                                   \
        for (; k < n; k++) l[0] += a[k] * b[k];                                                        \
        return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));                      \
    }

/* One task's rows, for unsigned type T (the width of the output). */
#define INT_ROWS(NAME, AXPY, DOT, T)                                                                        \
    static void NAME(void *arg, int64_t t, int slot) {                                                 \
        (void)slot;                                                                                    \
        const int_job *j = arg;                                                                        \
        int nd = j->out->ndim;                                                                         \
        const T *pa = j->a->host, *pb = j->b->host;                                                    \
        T *po = j->out->host;                                                                          \
        int64_t a_sk = j->a->strides[nd - 1], b_sk = j->b->strides[nd - 2], b_sn = j->b->strides[nd - 1]; \
        int64_t first, end;                                                                            \
        wgt_cpu_task_range(j->rows, j->tasks, t, &first, &end);                                        \
        for (int64_t r = first; r < end; r++) {                                                        \
            int64_t a_off, b_off;                                                                      \
            row_offsets(j, r, &a_off, &b_off);                                                         \
            T *c = po + r * j->N;                                                                      \
            if (b_sn == 1 || j->N == 1) {                                                              \
                memset(c, 0, sizeof(T) * (size_t)j->N);                                                \
                for (int64_t k = 0; k < j->K; k++) AXPY(c, pb + b_off + k * b_sk, pa[a_off + k * a_sk], j->N); \
            } else {                                                                                   \
                for (int64_t n = 0; n < j->N; n++) {                                                   \
                    const T *bcol = pb + b_off + n * b_sn;                                             \
                    T s = 0;                                                                           \
                    if (a_sk == 1 && b_sk == 1) s = DOT(pa + a_off, bcol, j->K);                       \
                    else                                                                               \
                        for (int64_t k = 0; k < j->K; k++) s += pa[a_off + k * a_sk] * bcol[k * b_sk]; \
                    c[n] = s;                                                                          \
                }                                                                                      \
            }                                                                                          \
        }                                                                                              \
    }

INT_AXPY(axpy32, uint32_t)
INT_AXPY(axpy64, uint64_t)
INT_DOT(dot32, uint32_t)
INT_DOT(dot64, uint64_t)
INT_ROWS(rows32, axpy32, dot32, uint32_t)
INT_ROWS(rows64, axpy64, dot64, uint64_t)

wgt_status wgt_cpu_matmul_int(wgt_backend *be, const wgt_operand *out, const wgt_operand *a, const wgt_operand *b,
                              int64_t batch, int64_t M, int64_t N, int64_t K) {
    size_t size = wgt_dtype_size(out->dtype);
    if (size != 4 && size != 8)
        return wgt_error(WGT_ERR_INTERNAL, "wgt_matmul: %s reached the CPU integer kernel", wgt_dtype_name(out->dtype));
    int_job j = {out, a, b, batch * M, M, N, K, 0};
    j.tasks = wgt_cpu_task_count(be, j.rows, (double)N * (double)K);
    wgt_cpu_pool_run(wgt_cpu_pool_of(be), j.tasks, size == 4 ? rows32 : rows64, &j);
    return WGT_OK;
}
