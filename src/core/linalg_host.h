/* The host side shared by the dense factorizations (linalg_host.c, linalg_decomp.c): operands
 * read back as doubles, column-major per matrix as LAPACK takes them, and results written to
 * new tensors of the operand's type. */
#ifndef WGT_LINALG_HOST_H
#define WGT_LINALG_HOST_H

#include "lapack.h"
#include "node.h"

/* A batch of [rows, cols] matrices read to the host as doubles, column-major per matrix. */
typedef struct {
    int64_t batch;
    int n;          /* cols: the order of a square matrix */
    int rows, cols; /* m and n of the general ones */
    double *m;      /* batch * rows * cols */
} host_batch;

/* a is f32 or f16 [..., n, n] (square) with n within what LAPACK's int indexes. */
wgt_status wgt_linalg_check_square(const char *fn, const char *name, const wgt_tensor *a);
/* a is f32 or f16 [..., m, n] of any m, n, each within what LAPACK's int indexes. */
wgt_status wgt_linalg_check_matrices(const char *fn, const char *name, const wgt_tensor *a);
/* t's values (f32 or f16) as doubles, in row-major order of t's shape (any layout). */
double *wgt_linalg_read_doubles(const char *fn, wgt_tensor *t, int64_t count);
/* Row-major [rows, cols] blocks to column-major, in place through a scratch copy. */
void wgt_linalg_to_column_major(double *m, int64_t blocks, int rows, int cols, double *scratch);
/* a [..., rows, cols] (checked) read into h; h->m is the caller's to free. */
wgt_status wgt_linalg_read_batch(const char *fn, wgt_tensor *a, host_batch *h);
/* A new tensor of like's context and type (f32, f16) and the given shape from doubles
 * (row-major). */
wgt_tensor *wgt_linalg_from_doubles(const wgt_tensor *like, const char *fn, int nd, const int64_t *shape, const double *v,
                                    int64_t count);
/* The error for an exactly singular matrix b of the batch (pivot: LAPACK's 1-based info). */
wgt_status wgt_linalg_singular(const char *fn, const char *name, const wgt_tensor *a, int64_t b, int pivot);
/* Whether matrix b of h (rows x cols) is all finite (lower: its lower triangle); if not, the
 * error naming it. */
wgt_status wgt_linalg_check_finite(const char *fn, const wgt_tensor *a, const host_batch *h, int64_t b, int lower);
/* A LAPACK workspace size from its query's answer (work[0]), or -1 with WGT_ERR_LIMIT when it
 * passes LAPACK's int. */
int wgt_linalg_workspace(const char *fn, const wgt_tensor *a, double query);

#endif
