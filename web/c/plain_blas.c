/*
 * A plain blocked matrix product for the WebAssembly build's CPU backend (no system BLAS in
 * wasm32-wasi): the row-major cblas_sgemm, cblas_dgemm and cblas_sgemv that cpu_matmul.c
 * calls. Single-threaded, as the wasm build is. The products are blocked over K and N so a
 * panel of B stays in cache while the rows of A stream past it; each output is summed in k
 * order (f32 sums kept in f32, as a BLAS's would be), and beta = 0 never reads C, as BLAS
 * promises (C may hold NaN then).
 */
#include <cblas.h>
#include <stddef.h>

#define BLOCK_K 128
#define BLOCK_N 256

/* Element (r, c) of a row-major matrix with leading dimension ld, seen transposed or not. */
#define AT(M, trans, ld, r, c) ((trans) == CblasNoTrans ? (M)[(size_t)(r) * (ld) + (c)] : (M)[(size_t)(c) * (ld) + (r)])

#define DEFINE_GEMM(name, T)                                                                                   \
    void name(CBLAS_ORDER order, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int M, int N, int K, T alpha,         \
              const T *A, int lda, const T *B, int ldb, T beta, T *C, int ldc) {                               \
        (void)order; /* row-major only: the CPU backend never asks for column-major */                        \
        for (int i = 0; i < M; i++)                                                                            \
            for (int j = 0; j < N; j++) C[(size_t)i * ldc + j] = beta == 0 ? 0 : beta * C[(size_t)i * ldc + j]; \
        for (int k0 = 0; k0 < K; k0 += BLOCK_K) {                                                              \
            int k1 = k0 + BLOCK_K < K ? k0 + BLOCK_K : K;                                                      \
            for (int j0 = 0; j0 < N; j0 += BLOCK_N) {                                                          \
                int j1 = j0 + BLOCK_N < N ? j0 + BLOCK_N : N;                                                  \
                for (int i = 0; i < M; i++) {                                                                  \
                    T *c = C + (size_t)i * ldc;                                                                \
                    for (int k = k0; k < k1; k++) {                                                            \
                        T a = alpha * AT(A, ta, lda, i, k);                                                    \
                        if (tb == CblasNoTrans) {                                                              \
                            const T *b = B + (size_t)k * ldb;                                                  \
                            for (int j = j0; j < j1; j++) c[j] += a * b[j];                                    \
                        } else {                                                                               \
                            for (int j = j0; j < j1; j++) c[j] += a * B[(size_t)j * ldb + k];                  \
                        }                                                                                      \
                    }                                                                                          \
                }                                                                                              \
            }                                                                                                  \
        }                                                                                                      \
    }

DEFINE_GEMM(cblas_sgemm, float)
DEFINE_GEMM(cblas_dgemm, double)

/* y = alpha op(A) x + beta y, A being M x N row-major (op(A) is N x M when transposed). */
void cblas_sgemv(CBLAS_ORDER order, CBLAS_TRANSPOSE trans, int M, int N, float alpha, const float *A, int lda,
                 const float *X, int incX, float beta, float *Y, int incY) {
    (void)order;
    int rows = trans == CblasNoTrans ? M : N, cols = trans == CblasNoTrans ? N : M;
    for (int r = 0; r < rows; r++) {
        float sum = 0;
        for (int c = 0; c < cols; c++) sum += AT(A, trans, lda, r, c) * X[(ptrdiff_t)c * incX];
        float *y = Y + (ptrdiff_t)r * incY;
        *y = alpha * sum + (beta == 0 ? 0 : beta * *y);
    }
}
