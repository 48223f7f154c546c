/*
 * Dense factorizations on the host: inv, solve, det and cholesky of batches of small f32
 * matrices (f16 ones are read exactly as f32 and their results rounded to f16). LU and Cholesky are sequential pivoting algorithms that a GPU runs poorly at the
 * sizes these are used for (a few to a few hundred), so on either backend the input is read
 * back, each matrix factorized in double precision by LAPACK (lapack.c) and the result
 * written to a new tensor: eager, unlike the other ops, since the answer (or an error for a
 * singular matrix) depends on the values. Working in double from exact f32 inputs leaves
 * only the final rounding to f32 for well-conditioned matrices. As NumPy's LinAlgError, an
 * exactly singular matrix (inv, solve) or one that is not positive definite (cholesky) is an
 * error naming the matrix; det of a singular matrix is 0.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linalg_host.h"

wgt_status wgt_linalg_check_matrices(const char *fn, const char *name, const wgt_tensor *a) {
    if (wgt_check_tensor(fn, name, a) != WGT_OK) return wgt_last_status();
    char s[256];
    wgt_format_shape(s, sizeof s, a->ndim, a->shape);
    if (a->dtype != WGT_F32 && a->dtype != WGT_F16)
        return wgt_error(WGT_ERR_DTYPE, "%s: takes f32 or f16 (factorized in double on the host), but %s is %s", fn,
                         name, wgt_dtype_name(a->dtype));
    if (a->ndim < 2)
        return wgt_error(WGT_ERR_SHAPE, "%s: %s must be a (batch of) matrices [..., m, n], not %s", fn, name, s);
    if (a->shape[a->ndim - 1] > 46340 || a->shape[a->ndim - 2] > 46340) /* m * n must fit LAPACK's int */
        return wgt_error(WGT_ERR_LIMIT, "%s: %s %s is larger than the host factorizations take (m, n <= 46340)", fn,
                         name, s);
    return WGT_OK;
}

wgt_status wgt_linalg_check_square(const char *fn, const char *name, const wgt_tensor *a) {
    if (wgt_linalg_check_matrices(fn, name, a) != WGT_OK) return wgt_last_status();
    if (a->shape[a->ndim - 1] == a->shape[a->ndim - 2]) return WGT_OK;
    char s[256];
    wgt_format_shape(s, sizeof s, a->ndim, a->shape);
    return wgt_error(WGT_ERR_SHAPE, "%s: %s must be a (batch of) square matrices [..., n, n], not %s", fn, name, s);
}

double *wgt_linalg_read_doubles(const char *fn, wgt_tensor *t, int64_t count) {
    wgt_tensor *c = t->dtype == WGT_F32 ? wgt_contiguous(t) : wgt_cast(t, WGT_F32); /* f16: exactly */
    float *f = malloc(sizeof(float) * (size_t)(count ? count : 1));
    double *d = malloc(sizeof(double) * (size_t)(count ? count : 1));
    if (!c || !f || !d || (count && wgt_tensor_read(c, f, sizeof(float) * (size_t)count) != WGT_OK)) {
        if (c && (!f || !d)) wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory for %lld values", fn, (long long)count);
        wgt_release(c);
        free(f);
        free(d);
        return NULL;
    }
    for (int64_t i = 0; i < count; i++) d[i] = f[i];
    wgt_release(c);
    free(f);
    return d;
}

void wgt_linalg_to_column_major(double *m, int64_t blocks, int rows, int cols, double *scratch) {
    for (int64_t b = 0; b < blocks; b++) {
        double *x = m + b * rows * cols;
        memcpy(scratch, x, sizeof(double) * (size_t)rows * (size_t)cols);
        for (int i = 0; i < rows; i++)
            for (int j = 0; j < cols; j++) x[i + j * rows] = scratch[i * cols + j];
    }
}

wgt_status wgt_linalg_read_batch(const char *fn, wgt_tensor *a, host_batch *h) {
    h->rows = (int)a->shape[a->ndim - 2];
    h->n = h->cols = (int)a->shape[a->ndim - 1];
    h->batch = 1;
    for (int d = 0; d < a->ndim - 2; d++) h->batch *= a->shape[d];
    int64_t size = (int64_t)h->rows * h->cols, count = h->batch * size;
    double *scratch = malloc(sizeof(double) * (size_t)(size + 1));
    h->m = scratch ? wgt_linalg_read_doubles(fn, a, count) : NULL;
    if (!h->m) {
        free(scratch);
        return scratch ? wgt_last_status() : wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
    }
    wgt_linalg_to_column_major(h->m, h->batch, h->rows, h->cols, scratch);
    free(scratch);
    return WGT_OK;
}

wgt_status wgt_linalg_check_finite(const char *fn, const wgt_tensor *a, const host_batch *h, int64_t b, int lower) {
    int64_t size = (int64_t)h->rows * h->cols;
    for (int64_t i = 0; i < size; i++) /* column-major: row i % rows, column i / rows */
        if (!isfinite(h->m[b * size + i]) && (!lower || i % h->rows >= i / h->rows)) {
            char s[256];
            wgt_format_shape(s, sizeof s, a->ndim, a->shape);
            return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: a %s has a non-finite value in matrix %lld of the batch", fn, s,
                             (long long)b);
        }
    return WGT_OK;
}

int wgt_linalg_workspace(const char *fn, const wgt_tensor *a, double query) {
    if (query < 2147483647.0) return query < 1 ? 1 : (int)query;
    char s[256];
    wgt_format_shape(s, sizeof s, a->ndim, a->shape);
    wgt_error(WGT_ERR_LIMIT, "%s: a %s needs a LAPACK workspace of %.0f values, past LAPACK's int", fn, s, query);
    return -1;
}

wgt_tensor *wgt_linalg_from_doubles(const wgt_tensor *like, const char *fn, int nd, const int64_t *shape, const double *v,
                                    int64_t count) {
    float *f = malloc(sizeof(float) * (size_t)(count ? count : 1));
    if (!f) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory for the result", fn), NULL;
    for (int64_t i = 0; i < count; i++) f[i] = (float)v[i];
    wgt_tensor *t = wgt_tensor_from_data(like->storage->ctx, WGT_F32, nd, shape, f, sizeof(float) * (size_t)count,
                                         WGT_USAGE_DEFAULT);
    free(f);
    if (!t || like->dtype == WGT_F32) return t;
    wgt_tensor *c = wgt_cast(t, like->dtype); /* f16: computed in double, rounded to f32, then to f16 */
    wgt_release(t);
    return c;
}

wgt_status wgt_linalg_singular(const char *fn, const char *name, const wgt_tensor *a, int64_t b, int pivot) {
    char s[256];
    wgt_format_shape(s, sizeof s, a->ndim, a->shape);
    return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: %s %s is singular: matrix %lld of the batch has U[%d][%d] = 0 in its LU factorization",
                     fn, name, s, (long long)b, pivot - 1, pivot - 1);
}

/* Solves a x = rhs for each matrix of h (factorized in place) with k right-hand sides per
 * matrix, column-major in rhs (batch * n * k). */
static wgt_status lu_solve(const char *fn, const wgt_lapack *L, host_batch *h, const wgt_tensor *a, double *rhs, int k) {
    int n = h->n, info = 0, *piv = malloc(sizeof(int) * (size_t)(n + 1));
    if (!piv) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
    for (int64_t b = 0; b < h->batch && n > 0; b++) {
        double *m = h->m + b * n * n;
        L->dgetrf(&n, &n, m, &n, piv, &info);
        if (info > 0) {
            free(piv);
            return wgt_linalg_singular(fn, "a", a, b, info);
        }
        if (k > 0) L->dgetrs("N", &n, &k, m, &n, piv, rhs + b * n * k, &n, &info, 1);
    }
    free(piv);
    return WGT_OK;
}

wgt_tensor *wgt_linalg_inv(wgt_tensor *a) {
    static const char fn[] = "wgt_linalg_inv";
    if (wgt_linalg_check_square(fn, "a", a) != WGT_OK) return NULL;
    const wgt_lapack *L = wgt_lapack_get(fn);
    host_batch h;
    if (!L || wgt_linalg_read_batch(fn, a, &h) != WGT_OK) return NULL;
    int n = h.n;
    int64_t count = h.batch * n * n;
    double *x = calloc((size_t)(count ? count : 1), sizeof(double));
    wgt_tensor *out = NULL;
    if (!x) {
        wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
        goto done;
    }
    for (int64_t b = 0; b < h.batch; b++) /* identity right-hand sides */
        for (int i = 0; i < n; i++) x[b * n * n + i * n + i] = 1;
    if (lu_solve(fn, L, &h, a, x, n) != WGT_OK) goto done;
    /* x holds each inverse column-major; its transpose read row-major is the same matrix. */
    double *scratch = malloc(sizeof(double) * (size_t)(n * n + 1));
    if (!scratch) {
        wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
        goto done;
    }
    wgt_linalg_to_column_major(x, h.batch, n, n, scratch); /* a transpose: column-major back to row-major */
    free(scratch);
    out = wgt_linalg_from_doubles(a, fn, a->ndim, a->shape, x, count);
done:
    free(x);
    free(h.m);
    return out;
}

wgt_tensor *wgt_linalg_solve(wgt_tensor *a, wgt_tensor *b) {
    static const char fn[] = "wgt_linalg_solve";
    if (wgt_linalg_check_square(fn, "a", a) != WGT_OK || wgt_check_tensor(fn, "b", b) != WGT_OK ||
        wgt_check_same_context(fn, a, b) != WGT_OK)
        return NULL;
    char sa[256], sb[256];
    wgt_format_shape(sa, sizeof sa, a->ndim, a->shape);
    wgt_format_shape(sb, sizeof sb, b->ndim, b->shape);
    if (b->dtype != a->dtype) {
        wgt_error(WGT_ERR_DTYPE, "%s: operand types differ (a is %s, b is %s); cast one first", fn, wgt_dtype_name(a->dtype),
                  wgt_dtype_name(b->dtype));
        return NULL;
    }
    int64_t n = a->shape[a->ndim - 1];
    /* b is one vector [n], or matrices [..., n, k] whose batch broadcasts with a's. */
    int vec = b->ndim == 1;
    if (b->ndim == 0 || b->shape[vec ? 0 : b->ndim - 2] != n) {
        wgt_error(WGT_ERR_SHAPE, "%s: b %s must be [%lld] or [..., %lld, k] for a %s", fn, sb, (long long)n, (long long)n, sa);
        return NULL;
    }
    int nbatch;
    int64_t shape[WGT_MAX_DIMS + 1];
    if (wgt_broadcast_shapes(fn, a->ndim - 2, a->shape, vec ? 0 : b->ndim - 2, b->shape, &nbatch, shape) != WGT_OK)
        return NULL;
    int64_t k = vec ? 1 : b->shape[b->ndim - 1];
    if (k > 46340 * 46340 / (n ? n : 1)) {
        wgt_error(WGT_ERR_LIMIT, "%s: b %s has more right-hand sides than the host solve takes", fn, sb);
        return NULL;
    }
    const wgt_lapack *L = wgt_lapack_get(fn);
    if (!L) return NULL;
    /* Both operands at the broadcast batch (copies where a batch repeats). */
    shape[nbatch] = n, shape[nbatch + 1] = n;
    wgt_tensor *ab = wgt_broadcast_to(a, nbatch + 2, shape);
    shape[nbatch + 1] = k;
    wgt_tensor *bb = vec ? wgt_retain(b) : wgt_broadcast_to(b, nbatch + 2, shape);
    host_batch h = {0};
    double *x = NULL, *scratch = NULL;
    wgt_tensor *out = NULL;
    int64_t batch = 1;
    for (int d = 0; d < nbatch; d++) batch *= shape[d];
    if (!ab || !bb || wgt_linalg_read_batch(fn, ab, &h) != WGT_OK) goto done;
    if (vec && batch > 1) { /* one vector against a batch: the same right-hand side for each */
        double *v = wgt_linalg_read_doubles(fn, bb, n);
        x = v ? malloc(sizeof(double) * (size_t)(batch * n)) : NULL;
        for (int64_t i = 0; x && i < batch; i++) memcpy(x + i * n, v, sizeof(double) * (size_t)n);
        if (v && !x) wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
        free(v);
    } else {
        x = wgt_linalg_read_doubles(fn, bb, batch * n * k);
    }
    scratch = malloc(sizeof(double) * (size_t)(n * k + 1));
    if (!x || !scratch) {
        if (x) wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
        goto done;
    }
    wgt_linalg_to_column_major(x, batch, (int)n, (int)k, scratch);
    if (lu_solve(fn, L, &h, a, x, (int)k) != WGT_OK) goto done;
    /* Back to row-major [n, k]: the column-major [n, k] is a row-major [k, n]. */
    wgt_linalg_to_column_major(x, batch, (int)k, (int)n, scratch);
    if (vec) shape[nbatch] = n;
    out = wgt_linalg_from_doubles(a, fn, nbatch + (vec ? 1 : 2), shape, x, batch * n * k);
done:
    wgt_release(ab);
    wgt_release(bb);
    free(h.m);
    free(x);
    free(scratch);
    return out;
}

wgt_tensor *wgt_linalg_det(wgt_tensor *a) {
    static const char fn[] = "wgt_linalg_det";
    if (wgt_linalg_check_square(fn, "a", a) != WGT_OK) return NULL;
    const wgt_lapack *L = wgt_lapack_get(fn);
    host_batch h;
    if (!L || wgt_linalg_read_batch(fn, a, &h) != WGT_OK) return NULL;
    int n = h.n, info = 0, *piv = malloc(sizeof(int) * (size_t)(n + 1));
    double *det = malloc(sizeof(double) * (size_t)(h.batch + 1));
    wgt_tensor *out = NULL;
    if (!piv || !det) {
        wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
        goto done;
    }
    for (int64_t b = 0; b < h.batch; b++) {
        double *m = h.m + b * n * n, d = 1;
        if (n > 0) L->dgetrf(&n, &n, m, &n, piv, &info);
        /* det = prod U[i][i], negated per row swap; an exactly singular U gives 0. */
        for (int i = 0; i < n; i++) d *= piv[i] != i + 1 ? -m[i + i * n] : m[i + i * n];
        det[b] = d;
    }
    out = wgt_linalg_from_doubles(a, fn, a->ndim - 2, a->shape, det, h.batch);
done:
    free(piv);
    free(det);
    free(h.m);
    return out;
}

wgt_tensor *wgt_linalg_cholesky(wgt_tensor *a, int upper) {
    static const char fn[] = "wgt_linalg_cholesky";
    if (wgt_linalg_check_square(fn, "a", a) != WGT_OK) return NULL;
    const wgt_lapack *L = wgt_lapack_get(fn);
    host_batch h;
    if (!L || wgt_linalg_read_batch(fn, a, &h) != WGT_OK) return NULL;
    int n = h.n, info = 0;
    int64_t count = h.batch * n * n;
    double *r = malloc(sizeof(double) * (size_t)(count ? count : 1));
    wgt_tensor *out = NULL;
    if (!r) {
        wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
        goto done;
    }
    for (int64_t b = 0; b < h.batch; b++) {
        double *m = h.m + b * n * n;
        if (n > 0) L->dpotrf("L", &n, m, &n, &info, 1); /* reads the lower triangle only, as NumPy */
        if (info > 0) {
            char s[256];
            wgt_format_shape(s, sizeof s, a->ndim, a->shape);
            wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: a %s is not positive definite: matrix %lld of the batch fails at its leading minor of order %d",
                      fn, s, (long long)b, info);
            goto done;
        }
        /* Row-major L (lower) from column-major m, or its transpose U = L^T (upper). */
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                int lo = upper ? j : i, hi = upper ? i : j; /* the element L[lo][hi] */
                r[b * n * n + i * n + j] = hi <= lo ? m[lo + hi * n] : 0;
            }
    }
    out = wgt_linalg_from_doubles(a, fn, a->ndim, a->shape, r, count);
done:
    free(r);
    free(h.m);
    return out;
}
