/*
 * The three CBLAS routines the CPU backend calls (src/backend/cpu/cpu_matmul.c), for the
 * WebAssembly build, which has no system BLAS: plain_blas.c implements them. Row-major only,
 * as the backend calls them; the declarations match CBLAS, so cpu_matmul.c compiles unchanged.
 */
#ifndef WGT_WASM_CBLAS_H
#define WGT_WASM_CBLAS_H

typedef enum { CblasRowMajor = 101, CblasColMajor = 102 } CBLAS_ORDER;
typedef enum { CblasNoTrans = 111, CblasTrans = 112, CblasConjTrans = 113 } CBLAS_TRANSPOSE;

void cblas_sgemm(CBLAS_ORDER order, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int M, int N, int K, float alpha,
                 const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc);
void cblas_dgemm(CBLAS_ORDER order, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int M, int N, int K, double alpha,
                 const double *A, int lda, const double *B, int ldb, double beta, double *C, int ldc);
void cblas_sgemv(CBLAS_ORDER order, CBLAS_TRANSPOSE trans, int M, int N, float alpha, const float *A, int lda,
                 const float *X, int incX, float beta, float *Y, int incY);

#endif
