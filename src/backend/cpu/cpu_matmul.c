/*
 * Matrix multiplication on the CPU backend: out [batch..., M, N] = a [batch..., M, K] @
 * b [batch..., K, N], one matrix product per batch element. f32 goes to OpenBLAS's sgemm:
 * a matrix with a unit stride along one dimension (and rows that do not overlap) is passed
 * in place, as itself or as a transposed matrix with the other stride as its leading
 * dimension; any other view (negative or zero strides, two non-unit strides) is first
 * gathered into a contiguous copy, so every f32 product runs in BLAS. f16 has no BLAS
 * routine: a blocked C loop converts tiles to double and accumulates in double, so the one
 * rounding is the final one to f16 and this backend stays an exact-as-possible oracle for
 * the WebGPU kernels. K = 0 gives zeros.
 */
#include <cblas.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_kernels.h"

/* One operand's matrix as BLAS takes it: transpose flag and leading dimension. */
typedef struct {
    CBLAS_TRANSPOSE trans;
    int ld;
} blas_view;

/* Whether a rows x cols matrix with strides (sr, sc) can be passed to BLAS in place. Strides
 * of length-1 dimensions are ignored. Row-major without transpose needs unit column stride
 * and a row stride of at least cols (lda >= cols, or BLAS rejects it); transposed, the roles
 * swap. Strides that do not fit BLAS's int, negative and zero strides fall back to a copy. */
static int blas_layout(int64_t rows, int64_t cols, int64_t sr, int64_t sc, blas_view *v) {
    int64_t min_rows = rows > 1 ? rows : 1, min_cols = cols > 1 ? cols : 1;
    if ((sc == 1 || cols == 1) && (rows == 1 || (sr >= min_cols && sr <= INT_MAX))) {
        v->trans = CblasNoTrans;
        v->ld = (int)(rows == 1 ? min_cols : sr);
        return 1;
    }
    if ((sr == 1 || rows == 1) && (cols == 1 || (sc >= min_rows && sc <= INT_MAX))) {
        v->trans = CblasTrans;
        v->ld = (int)(cols == 1 ? min_rows : sc);
        return 1;
    }
    return 0;
}

/* Copies the rows x cols matrix at base (strides sr, sc) into dst, row-major. */
static void gather_f32(float *dst, const float *src, int64_t base, int64_t rows, int64_t cols, int64_t sr,
                       int64_t sc) {
    for (int64_t r = 0; r < rows; r++) {
        const float *row = src + base + r * sr;
        float *d = dst + r * cols;
        if (sc == 1) memcpy(d, row, sizeof(float) * (size_t)cols);
        else
            for (int64_t c = 0; c < cols; c++) d[c] = row[c * sc];
    }
}

/* Walks the batch dimensions (all but the last two), keeping each operand's offset. */
typedef struct {
    int ndim;
    int64_t index[WGT_MAX_DIMS];
    int64_t a_off, b_off;
} batch_iter;

static void batch_next(batch_iter *it, const wgt_operand *out, const wgt_operand *a, const wgt_operand *b) {
    for (int d = it->ndim - 1; d >= 0; d--) {
        if (++it->index[d] < out->shape[d]) {
            it->a_off += a->strides[d];
            it->b_off += b->strides[d];
            return;
        }
        it->a_off -= a->strides[d] * (out->shape[d] - 1);
        it->b_off -= b->strides[d] * (out->shape[d] - 1);
        it->index[d] = 0;
    }
}

static wgt_status matmul_f32(const wgt_operand *out, const wgt_operand *a, const wgt_operand *b, int64_t batch,
                             int64_t M, int64_t N, int64_t K) {
    int nd = out->ndim;
    int64_t a_sm = a->strides[nd - 2], a_sk = a->strides[nd - 1], b_sk = b->strides[nd - 2], b_sn = b->strides[nd - 1];
    blas_view va, vb;
    int a_direct = blas_layout(M, K, a_sm, a_sk, &va), b_direct = blas_layout(K, N, b_sk, b_sn, &vb);
    float *a_copy = NULL, *b_copy = NULL;
    /* A gathered operand is a contiguous row-major matrix. */
    if (!a_direct) {
        a_copy = malloc(sizeof(float) * (size_t)(M * K));
        va.trans = CblasNoTrans;
        va.ld = (int)K;
    }
    if (!b_direct) {
        b_copy = malloc(sizeof(float) * (size_t)(K * N));
        vb.trans = CblasNoTrans;
        vb.ld = (int)N;
    }
    if ((!a_direct && !a_copy) || (!b_direct && !b_copy)) {
        free(a_copy);
        free(b_copy);
        return wgt_error(WGT_ERR_OUT_OF_MEMORY, "wgt_matmul: out of host memory for a copy of a strided operand");
    }
    const float *pa = a->host, *pb = b->host;
    float *po = out->host;
    batch_iter it = {nd - 2, {0}, a->offset, b->offset};
    /* A broadcast batch repeats one matrix: its copy is made once. */
    int64_t a_copied = -1, b_copied = -1;
    for (int64_t i = 0; i < batch; i++, batch_next(&it, out, a, b)) {
        if (!a_direct && it.a_off != a_copied) gather_f32(a_copy, pa, a_copied = it.a_off, M, K, a_sm, a_sk);
        if (!b_direct && it.b_off != b_copied) gather_f32(b_copy, pb, b_copied = it.b_off, K, N, b_sk, b_sn);
        cblas_sgemm(CblasRowMajor, va.trans, vb.trans, (int)M, (int)N, (int)K, 1.0f, a_direct ? pa + it.a_off : a_copy,
                    va.ld, b_direct ? pb + it.b_off : b_copy, vb.ld, 0.0f, po + i * M * N, (int)N);
    }
    free(a_copy);
    free(b_copy);
    return WGT_OK;
}

/* Tile sizes of the f16 loop: a tile of a (MB x KB) and of b (KB x NB) in double, 96 KiB
 * together, stay in L2 while the MB x NB accumulators are updated. */
#define MB 32
#define NB 64
#define KB 128

static wgt_status matmul_f16(const wgt_operand *out, const wgt_operand *a, const wgt_operand *b, int64_t batch,
                             int64_t M, int64_t N, int64_t K) {
    int nd = out->ndim;
    int64_t a_sm = a->strides[nd - 2], a_sk = a->strides[nd - 1], b_sk = b->strides[nd - 2], b_sn = b->strides[nd - 1];
    double *at = malloc(sizeof(double) * (MB * KB + KB * NB + MB * NB));
    if (!at) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "wgt_matmul: out of host memory for f16 tiles");
    double *bt = at + MB * KB, *acc = bt + KB * NB;
    const uint16_t *pa = a->host, *pb = b->host;
    uint16_t *po = out->host;
    batch_iter it = {nd - 2, {0}, a->offset, b->offset};
    for (int64_t i = 0; i < batch; i++, batch_next(&it, out, a, b)) {
        for (int64_t m0 = 0; m0 < M; m0 += MB) {
            int64_t mb = M - m0 < MB ? M - m0 : MB;
            for (int64_t n0 = 0; n0 < N; n0 += NB) {
                int64_t nb = N - n0 < NB ? N - n0 : NB;
                memset(acc, 0, sizeof(double) * MB * NB);
                for (int64_t k0 = 0; k0 < K; k0 += KB) {
                    int64_t kb = K - k0 < KB ? K - k0 : KB;
                    for (int64_t r = 0; r < mb; r++)
                        for (int64_t k = 0; k < kb; k++)
                            at[r * KB + k] = wgt_f16_to_f32(pa[it.a_off + (m0 + r) * a_sm + (k0 + k) * a_sk]);
                    for (int64_t k = 0; k < kb; k++)
                        for (int64_t c = 0; c < nb; c++)
                            bt[k * NB + c] = wgt_f16_to_f32(pb[it.b_off + (k0 + k) * b_sk + (n0 + c) * b_sn]);
                    /* Row of acc += a element * row of b: the inner loop is unit-stride. */
                    for (int64_t r = 0; r < mb; r++)
                        for (int64_t k = 0; k < kb; k++) {
                            double x = at[r * KB + k];
                            const double *brow = bt + k * NB;
                            double *arow = acc + r * NB;
                            for (int64_t c = 0; c < nb; c++) arow[c] += x * brow[c];
                        }
                }
                for (int64_t r = 0; r < mb; r++)
                    for (int64_t c = 0; c < nb; c++)
                        po[i * M * N + (m0 + r) * N + n0 + c] = wgt_f32_to_f16((float)acc[r * NB + c]);
            }
        }
    }
    free(at);
    return WGT_OK;
}

wgt_status wgt_cpu_matmul(wgt_backend *be, const wgt_operand *out, const wgt_operand *a, const wgt_operand *b) {
    (void)be;
    int nd = out->ndim;
    if (nd < 2) return wgt_error(WGT_ERR_INTERNAL, "wgt_matmul: output of rank %d reached the CPU kernel", nd);
    if (out->offset != 0) return wgt_error(WGT_ERR_INTERNAL, "wgt_matmul: output at offset %lld", (long long)out->offset);
    int64_t M = out->shape[nd - 2], N = out->shape[nd - 1], K = a->shape[nd - 1], batch = 1;
    for (int d = 0; d < nd - 2; d++) batch *= out->shape[d];
    if (batch * M * N == 0) return WGT_OK;
    if (K == 0) { /* an empty sum; all-zero bytes are +0 in both float types */
        memset(out->host, 0, (size_t)(batch * M * N) * wgt_dtype_size(out->dtype));
        return WGT_OK;
    }
    if (out->dtype == WGT_F16) return matmul_f16(out, a, b, batch, M, N, K);
    if (out->dtype != WGT_F32)
        return wgt_error(WGT_ERR_INTERNAL, "wgt_matmul: %s reached the CPU kernel", wgt_dtype_name(out->dtype));
    /* BLAS counts in int; larger products (beyond 2^31 elements per matrix) would not fit the
     * memory of this backend's kernels anyway, but are refused rather than truncated. */
    if (M > INT_MAX || N > INT_MAX || K > INT_MAX || M * K > INT_MAX || K * N > INT_MAX)
        return wgt_error(WGT_ERR_LIMIT, "wgt_matmul: [%lld, %lld] @ [%lld, %lld] is beyond BLAS's 32-bit sizes",
                         (long long)M, (long long)K, (long long)K, (long long)N);
    return matmul_f32(out, a, b, batch, M, N, K);
}
