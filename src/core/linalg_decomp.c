/*
 * Decompositions on the host: qr (dgeqrf, dorgqr), slogdet (the LU of dgetrf), svd and svdvals
 * (dgesdd) and what is built on the singular values (pinv, matrix_rank), for batches of f32
 * matrices of any shape, and eigh and eigvalsh (dsyevd) of symmetric ones. As inv and solve (linalg_host.c), each matrix is read back and
 * factorized in double precision, so a well-conditioned input loses only the final rounding
 * to f32, and the ops are eager: a result, or an error naming the matrix that failed to
 * converge, depends on the values. Every LAPACK call is sized by its own workspace query.
 * Degenerate matrices (m or n = 0) never reach LAPACK, whose leading dimensions must be >= 1:
 * their factors are identities and empty matrices, as NumPy's.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linalg_host.h"

/* A new tensor of a's type [a's batch..., d[0], ..., d[trailing - 1]] from doubles (row-major). */
static wgt_tensor *batch_result(const char *fn, const wgt_tensor *a, int trailing, const int64_t *d, const double *v) {
    int64_t shape[WGT_MAX_DIMS], count = 1;
    int nb = a->ndim - 2;
    for (int i = 0; i < nb; i++) count *= shape[i] = a->shape[i];
    for (int i = 0; i < trailing; i++) count *= shape[nb + i] = d[i];
    return wgt_linalg_from_doubles(a, fn, nb + trailing, shape, v, count);
}

static void *host_alloc(const char *fn, size_t count, size_t size) {
    void *p = calloc(count ? count : 1, size);
    if (!p) wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory for %zu values", fn, count);
    return p;
}

static wgt_status not_converged(const char *fn, const wgt_tensor *a, const char *what, int64_t b) {
    char s[256];
    wgt_format_shape(s, sizeof s, a->ndim, a->shape);
    return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: a %s: the %s of matrix %lld of the batch did not converge", fn, s, what,
                     (long long)b);
}

wgt_status wgt_linalg_qr(wgt_tensor *a, int complete, wgt_tensor **q, wgt_tensor **r) {
    static const char fn[] = "wgt_linalg_qr";
    if (!q || !r) return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: q and r must not be NULL", fn);
    *q = *r = NULL;
    if (wgt_linalg_check_matrices(fn, "a", a) != WGT_OK) return wgt_last_status();
    const wgt_lapack *L = wgt_lapack_get(fn);
    host_batch h;
    if (!L || wgt_linalg_read_batch(fn, a, &h) != WGT_OK) return wgt_last_status();
    int m = h.rows, n = h.cols, k = m < n ? m : n, qc = complete ? m : k, info = 0, lwork = 1;
    int64_t mn = (int64_t)m * n;
    double *Q = host_alloc(fn, (size_t)(h.batch * m * qc), sizeof(double));
    double *R = Q ? host_alloc(fn, (size_t)(h.batch * qc * n), sizeof(double)) : NULL;
    double *w = R ? host_alloc(fn, (size_t)m * (size_t)(m > n ? m : n), sizeof(double)) : NULL;
    double *tau = w ? host_alloc(fn, (size_t)k, sizeof(double)) : NULL, *work = NULL;
    if (!tau) goto done;
    if (k > 0) { /* one workspace for both calls, from their queries */
        double q1 = 0, q2 = 0;
        int query = -1;
        L->dgeqrf(&m, &n, w, &m, tau, &q1, &query, &info);
        L->dorgqr(&m, &qc, &k, w, &m, tau, &q2, &query, &info);
        if ((lwork = wgt_linalg_workspace(fn, a, q1 > q2 ? q1 : q2)) < 0) goto done;
    }
    if (!(work = host_alloc(fn, (size_t)lwork, sizeof(double)))) goto done;
    for (int64_t b = 0; b < h.batch; b++) {
        double *Qb = Q + b * m * qc, *Rb = R + b * qc * n;
        if (k == 0) { /* no reflectors: Q is the identity's first qc columns, R zeros */
            for (int i = 0; i < m && i < qc; i++) Qb[i * qc + i] = 1;
            continue;
        }
        memcpy(w, h.m + b * mn, sizeof(double) * (size_t)mn);
        L->dgeqrf(&m, &n, w, &m, tau, work, &lwork, &info);
        /* R: the upper triangle of the factored matrix (rows past k are zeros). */
        for (int i = 0; i < k; i++)
            for (int j = i; j < n; j++) Rb[i * n + j] = w[i + j * m];
        L->dorgqr(&m, &qc, &k, w, &m, tau, work, &lwork, &info);
        for (int i = 0; i < m; i++)
            for (int j = 0; j < qc; j++) Qb[i * qc + j] = w[i + j * m];
    }
    int64_t dq[2] = {m, qc}, dr[2] = {qc, n};
    if ((*q = batch_result(fn, a, 2, dq, Q)) && !(*r = batch_result(fn, a, 2, dr, R))) {
        wgt_release(*q);
        *q = NULL;
    }
done:
    free(Q);
    free(R);
    free(w);
    free(tau);
    free(work);
    free(h.m);
    return *q ? WGT_OK : wgt_last_status();
}

wgt_status wgt_linalg_slogdet(wgt_tensor *a, wgt_tensor **sign, wgt_tensor **logabsdet) {
    static const char fn[] = "wgt_linalg_slogdet";
    if (!sign || !logabsdet) return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: sign and logabsdet must not be NULL", fn);
    *sign = *logabsdet = NULL;
    if (wgt_linalg_check_square(fn, "a", a) != WGT_OK) return wgt_last_status();
    const wgt_lapack *L = wgt_lapack_get(fn);
    host_batch h;
    if (!L || wgt_linalg_read_batch(fn, a, &h) != WGT_OK) return wgt_last_status();
    int n = h.n, info = 0, *piv = host_alloc(fn, (size_t)n, sizeof(int));
    double *sg = piv ? host_alloc(fn, (size_t)h.batch, sizeof(double)) : NULL;
    double *lg = sg ? host_alloc(fn, (size_t)h.batch, sizeof(double)) : NULL;
    for (int64_t b = 0; lg && b < h.batch; b++) {
        double *m = h.m + b * n * n, s = 1, l = 0;
        if (n > 0) L->dgetrf(&n, &n, m, &n, piv, &info);
        /* The sign of prod U[i][i], flipped per row swap; the log of its magnitude as a sum,
         * which neither overflows nor underflows where the product would. */
        for (int i = 0; i < n; i++) {
            double u = m[i + i * n];
            s *= (u < 0) != (piv[i] != i + 1) ? -1 : 1;
            l += log(fabs(u));
        }
        if (n > 0 && info > 0) s = 0, l = -INFINITY; /* exactly singular */
        sg[b] = s;
        lg[b] = l;
    }
    if (lg && (*sign = batch_result(fn, a, 0, NULL, sg)) && !(*logabsdet = batch_result(fn, a, 0, NULL, lg))) {
        wgt_release(*sign);
        *sign = NULL;
    }
    free(piv);
    free(sg);
    free(lg);
    free(h.m);
    return *sign ? WGT_OK : wgt_last_status();
}

/* The singular values of a batch, descending: S [batch, k] and, unless job is 'N', U and Vh,
 * row-major, [batch, m, uc] and [batch, vr, n] (uc = vr = k for job 'S', m and n for 'A'). */
typedef struct {
    host_batch h;
    int k, uc, vr;
    double *S, *U, *Vh;
} svd_result;

static void svd_free(svd_result *r) {
    free(r->h.m);
    free(r->S);
    free(r->U);
    free(r->Vh);
}

static wgt_status svd_run(const char *fn, wgt_tensor *a, char job, svd_result *r) {
    memset(r, 0, sizeof *r);
    if (wgt_linalg_check_matrices(fn, "a", a) != WGT_OK) return wgt_last_status();
    const wgt_lapack *L = wgt_lapack_get(fn);
    if (!L || wgt_linalg_read_batch(fn, a, &r->h) != WGT_OK) return wgt_last_status();
    int m = r->h.rows, n = r->h.cols, k = r->k = m < n ? m : n, info = 0, lwork = 1;
    int uc = r->uc = job == 'A' ? m : job == 'S' ? k : 0, vr = r->vr = job == 'A' ? n : job == 'S' ? k : 0;
    int ldu = m > 1 ? m : 1, ldvt = vr > 1 ? vr : 1;
    int64_t batch = r->h.batch, mn = (int64_t)m * n;
    double *u = NULL, *vt = NULL, *work = NULL;
    int *iwork = NULL;
    wgt_status st = WGT_ERR_OUT_OF_MEMORY;
    if (!(r->S = host_alloc(fn, (size_t)(batch * k), sizeof(double))) ||
        !(r->U = host_alloc(fn, (size_t)(batch * m * uc), sizeof(double))) ||
        !(r->Vh = host_alloc(fn, (size_t)(batch * vr * n), sizeof(double))) ||
        !(u = host_alloc(fn, (size_t)m * (size_t)uc, sizeof(double))) ||
        !(vt = host_alloc(fn, (size_t)vr * (size_t)n, sizeof(double))) ||
        !(iwork = host_alloc(fn, (size_t)(8 * k), sizeof(int))))
        goto done;
    if (k > 0) {
        double q = 0;
        int query = -1;
        L->dgesdd(&job, &m, &n, r->h.m, &m, r->S, u, &ldu, vt, &ldvt, &q, &query, iwork, &info, 1);
        if ((lwork = wgt_linalg_workspace(fn, a, q)) < 0) {
            st = wgt_last_status();
            goto done;
        }
    }
    if (!(work = host_alloc(fn, (size_t)lwork, sizeof(double)))) goto done;
    for (int64_t b = 0; b < batch; b++) {
        double *Ub = r->U + b * m * uc, *Vb = r->Vh + b * vr * n;
        if (k == 0) { /* an empty matrix: identities where the factors are square */
            for (int i = 0; i < m && i < uc; i++) Ub[i * uc + i] = 1;
            for (int i = 0; i < n && i < vr; i++) Vb[i * n + i] = 1;
            continue;
        }
        if ((st = wgt_linalg_check_finite(fn, a, &r->h, b, 0)) != WGT_OK) goto done;
        L->dgesdd(&job, &m, &n, r->h.m + b * mn, &m, r->S + b * k, u, &ldu, vt, &ldvt, work, &lwork, iwork, &info, 1);
        if (info != 0) {
            st = not_converged(fn, a, "singular value decomposition", b);
            goto done;
        }
        for (int i = 0; i < m; i++)
            for (int j = 0; j < uc; j++) Ub[i * uc + j] = u[i + j * m];
        for (int i = 0; i < vr; i++)
            for (int j = 0; j < n; j++) Vb[i * n + j] = vt[i + j * vr];
    }
    st = WGT_OK;
done:
    free(u);
    free(vt);
    free(work);
    free(iwork);
    if (st != WGT_OK) svd_free(r);
    return st;
}

wgt_status wgt_linalg_svd(wgt_tensor *a, int full_matrices, wgt_tensor **u, wgt_tensor **s, wgt_tensor **vh) {
    static const char fn[] = "wgt_linalg_svd";
    if (!u || !s || !vh) return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: u, s and vh must not be NULL", fn);
    *u = *s = *vh = NULL;
    svd_result r;
    if (svd_run(fn, a, full_matrices ? 'A' : 'S', &r) != WGT_OK) return wgt_last_status();
    int64_t du[2] = {r.h.rows, r.uc}, ds[1] = {r.k}, dv[2] = {r.vr, r.h.cols};
    *u = batch_result(fn, a, 2, du, r.U);
    *s = *u ? batch_result(fn, a, 1, ds, r.S) : NULL;
    *vh = *s ? batch_result(fn, a, 2, dv, r.Vh) : NULL;
    svd_free(&r);
    if (*vh) return WGT_OK;
    wgt_release(*u);
    wgt_release(*s);
    *u = *s = NULL;
    return wgt_last_status();
}

wgt_tensor *wgt_linalg_svdvals(wgt_tensor *a) {
    static const char fn[] = "wgt_linalg_svdvals";
    svd_result r;
    if (svd_run(fn, a, 'N', &r) != WGT_OK) return NULL;
    int64_t ds[1] = {r.k};
    wgt_tensor *out = batch_result(fn, a, 1, ds, r.S);
    svd_free(&r);
    return out;
}

/* The cut below which singular values count as zero: rtol times the largest (rtol < 0: the
 * array API's default, max(m, n) * f32 epsilon). */
static double cutoff(const svd_result *r, int64_t b, double rtol) {
    if (rtol < 0) rtol = (r->h.rows > r->h.cols ? r->h.rows : r->h.cols) * (double)FLT_EPSILON;
    return r->k > 0 ? rtol * r->S[b * r->k] : 0;
}

static int check_rtol(const char *fn, double rtol) {
    if (!isnan(rtol)) return 1;
    wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: rtol is NaN", fn);
    return 0;
}

wgt_tensor *wgt_linalg_pinv(wgt_tensor *a, double rtol) {
    static const char fn[] = "wgt_linalg_pinv";
    svd_result r;
    if (!check_rtol(fn, rtol) || svd_run(fn, a, 'S', &r) != WGT_OK) return NULL;
    int m = r.h.rows, n = r.h.cols, k = r.k;
    double *p = host_alloc(fn, (size_t)(r.h.batch * n * m), sizeof(double));
    wgt_tensor *out = NULL;
    if (p) {
        /* pinv = V diag(1 / s) U^T over the singular values kept, in double. */
        for (int64_t b = 0; b < r.h.batch; b++) {
            const double *U = r.U + b * m * k, *Vh = r.Vh + b * k * n, *S = r.S + b * k;
            double cut = cutoff(&r, b, rtol), *P = p + b * n * m;
            for (int l = 0; l < k && S[l] > cut; l++)
                for (int i = 0; i < n; i++) {
                    double v = Vh[l * n + i] / S[l];
                    for (int j = 0; j < m; j++) P[i * m + j] += v * U[j * k + l];
                }
        }
        int64_t d[2] = {n, m};
        out = batch_result(fn, a, 2, d, p);
    }
    free(p);
    svd_free(&r);
    return out;
}

wgt_tensor *wgt_linalg_matrix_rank(wgt_tensor *a, double rtol) {
    static const char fn[] = "wgt_linalg_matrix_rank";
    svd_result r;
    if (!check_rtol(fn, rtol) || svd_run(fn, a, 'N', &r) != WGT_OK) return NULL;
    int32_t *rank = host_alloc(fn, (size_t)r.h.batch, sizeof(int32_t));
    wgt_tensor *out = NULL;
    if (rank) {
        for (int64_t b = 0; b < r.h.batch; b++) {
            double cut = cutoff(&r, b, rtol);
            for (int l = 0; l < r.k; l++) rank[b] += r.S[b * r.k + l] > cut;
        }
        out = wgt_tensor_from_data(a->storage->ctx, WGT_I32, a->ndim - 2, a->shape, rank,
                                   sizeof(int32_t) * (size_t)r.h.batch, WGT_USAGE_DEFAULT);
    }
    free(rank);
    svd_free(&r);
    return out;
}

/* Eigenvalues [batch, n] ascending and, with job 'V', eigenvectors as row-major columns
 * [batch, n, n]; a's lower triangle only is read (and checked for non-finite values). */
static wgt_status eigh_run(const char *fn, wgt_tensor *a, char job, host_batch *h, double **w, double **v) {
    *w = *v = NULL;
    if (wgt_linalg_check_square(fn, "a", a) != WGT_OK) return wgt_last_status();
    const wgt_lapack *L = wgt_lapack_get(fn);
    if (!L || wgt_linalg_read_batch(fn, a, h) != WGT_OK) return wgt_last_status();
    int n = h->n, info = 0, lwork = 1, liwork = 1;
    double *work = NULL;
    int *iwork = NULL;
    wgt_status st = WGT_ERR_OUT_OF_MEMORY;
    if (!(*w = host_alloc(fn, (size_t)(h->batch * n), sizeof(double))) ||
        (job == 'V' && !(*v = host_alloc(fn, (size_t)(h->batch * n * n), sizeof(double)))))
        goto done;
    if (n > 0) {
        double q = 0;
        int iq = 0, query = -1;
        L->dsyevd(&job, "L", &n, h->m, &n, *w, &q, &query, &iq, &query, &info, 1, 1);
        if ((lwork = wgt_linalg_workspace(fn, a, q)) < 0 || (liwork = wgt_linalg_workspace(fn, a, iq)) < 0) {
            st = wgt_last_status();
            goto done;
        }
    }
    if (!(work = host_alloc(fn, (size_t)lwork, sizeof(double))) || !(iwork = host_alloc(fn, (size_t)liwork, sizeof(int))))
        goto done;
    for (int64_t b = 0; b < h->batch && n > 0; b++) {
        double *m = h->m + b * n * n;
        if ((st = wgt_linalg_check_finite(fn, a, h, b, 1)) != WGT_OK) goto done;
        L->dsyevd(&job, "L", &n, m, &n, *w + b * n, work, &lwork, iwork, &liwork, &info, 1, 1);
        if (info != 0) {
            st = not_converged(fn, a, "eigendecomposition", b);
            goto done;
        }
        for (int i = 0; job == 'V' && i < n; i++)
            for (int j = 0; j < n; j++) (*v)[b * n * n + i * n + j] = m[i + j * n];
    }
    st = WGT_OK;
done:
    free(work);
    free(iwork);
    if (st != WGT_OK) {
        free(*w);
        free(*v);
        free(h->m);
        *w = *v = h->m = NULL;
    }
    return st;
}

wgt_status wgt_linalg_eigh(wgt_tensor *a, wgt_tensor **eigenvalues, wgt_tensor **eigenvectors) {
    static const char fn[] = "wgt_linalg_eigh";
    if (!eigenvalues || !eigenvectors)
        return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: eigenvalues and eigenvectors must not be NULL", fn);
    *eigenvalues = *eigenvectors = NULL;
    host_batch h;
    double *w, *v;
    if (eigh_run(fn, a, 'V', &h, &w, &v) != WGT_OK) return wgt_last_status();
    int64_t d[2] = {h.n, h.n};
    *eigenvalues = batch_result(fn, a, 1, d, w);
    *eigenvectors = *eigenvalues ? batch_result(fn, a, 2, d, v) : NULL;
    free(w);
    free(v);
    free(h.m);
    if (*eigenvectors) return WGT_OK;
    wgt_release(*eigenvalues);
    *eigenvalues = NULL;
    return wgt_last_status();
}

wgt_tensor *wgt_linalg_eigvalsh(wgt_tensor *a) {
    static const char fn[] = "wgt_linalg_eigvalsh";
    host_batch h;
    double *w, *v;
    if (eigh_run(fn, a, 'N', &h, &w, &v) != WGT_OK) return NULL;
    int64_t d[1] = {h.n};
    wgt_tensor *out = batch_result(fn, a, 1, d, w);
    free(w);
    free(h.m);
    return out;
}
