/* LAPACK, found at run time (lapack.c): the few double-precision routines the dense
 * factorizations call, with the Fortran calling convention (arguments by pointer, column-major,
 * a hidden length after each character argument). */
#ifndef WGT_LAPACK_H
#define WGT_LAPACK_H

#include <stddef.h>

typedef struct wgt_lapack {
    void (*dgetrf)(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);
    void (*dgetrs)(const char *trans, const int *n, const int *nrhs, const double *a, const int *lda, const int *ipiv,
                   double *b, const int *ldb, int *info, size_t trans_len);
    void (*dpotrf)(const char *uplo, const int *n, double *a, const int *lda, int *info, size_t uplo_len);
    void (*dgeqrf)(const int *m, const int *n, double *a, const int *lda, double *tau, double *work, const int *lwork,
                   int *info);
    void (*dorgqr)(const int *m, const int *n, const int *k, double *a, const int *lda, const double *tau, double *work,
                   const int *lwork, int *info);
    void (*dgesdd)(const char *jobz, const int *m, const int *n, double *a, const int *lda, double *s, double *u,
                   const int *ldu, double *vt, const int *ldvt, double *work, const int *lwork, int *iwork, int *info,
                   size_t jobz_len);
    void (*dsyevd)(const char *jobz, const char *uplo, const int *n, double *a, const int *lda, double *w, double *work,
                   const int *lwork, int *iwork, const int *liwork, int *info, size_t jobz_len, size_t uplo_len);
} wgt_lapack;

/* The routines, or NULL with WGT_ERR_UNAVAILABLE set naming what is missing (fn: the caller). */
const wgt_lapack *wgt_lapack_get(const char *fn);

#endif
