/*
 * Matrix multiplication on the CPU backend: out [batch..., M, N] = a [batch..., M, K] @
 * b [batch..., K, N], one matrix product per batch element. f32 goes to OpenBLAS: sgemv for
 * one row or one column (M = 1 or N = 1), sgemm otherwise, and a batch that shares one b
 * over evenly spaced rows of a is a single product of all the rows. A matrix with a unit
 * stride along one dimension (and rows that do not overlap) is passed
 * in place, as itself or as a transposed matrix with the other stride as its leading
 * dimension; any other view (negative or zero strides, two non-unit strides) is first
 * gathered into a contiguous copy, so every f32 product runs in BLAS. f16 has no BLAS
 * routine: a blocked C loop converts tiles to double and accumulates in double, so the one
 * rounding is the final one to f16 and this backend stays an exact-as-possible oracle for
 * the WebGPU kernels; its output tiles are shared among the context's threads (each tile
 * sums all of K itself, so the thread count never changes a bit). K = 0 gives zeros.
 */
#include <cblas.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_kernels.h"
#include "cpu_walk.h"

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

/* Whether a vector of n elements with step s can be passed to BLAS in place (a positive
 * increment that fits its int); others are gathered. */
static int blas_vector(int64_t n, int64_t s) { return n == 1 || (s >= 1 && s <= INT_MAX); }

/* One f32 product per batch element. One row (M = 1) or one column (N = 1) is a
 * matrix-vector product: sgemv reads the matrix once at memory speed, where sgemm would pack
 * it for a blocked product that never reuses it (3 to 4x slower here for 1 x 4096 x 4096). */
static wgt_status matmul_f32(const wgt_operand *out, const wgt_operand *a, const wgt_operand *b, int64_t batch,
                             int64_t M, int64_t N, int64_t K) {
    int nd = out->ndim;
    int64_t a_sm = a->strides[nd - 2], a_sk = a->strides[nd - 1], b_sk = b->strides[nd - 2], b_sn = b->strides[nd - 1];
    int row_vector = M == 1, column_vector = !row_vector && N == 1;
    blas_view va = {CblasNoTrans, (int)K}, vb = {CblasNoTrans, (int)N};
    int a_direct = row_vector ? blas_vector(K, a_sk) : blas_layout(M, K, a_sm, a_sk, &va);
    int b_direct = column_vector ? blas_vector(K, b_sk) : blas_layout(K, N, b_sk, b_sn, &vb);
    float *a_copy = NULL, *b_copy = NULL;
    /* A gathered operand is a contiguous row-major matrix (or a unit-step vector). */
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
    int a_inc = a_direct && K > 1 ? (int)a_sk : 1, b_inc = b_direct && K > 1 ? (int)b_sk : 1;
    const float *pa = a->host, *pb = b->host;
    float *po = out->host;
    batch_iter it = {nd - 2, {0}, a->offset, b->offset};
    /* A broadcast batch repeats one matrix: its copy is made once. */
    int64_t a_copied = -1, b_copied = -1;
    for (int64_t i = 0; i < batch; i++, batch_next(&it, out, a, b)) {
        if (!a_direct && it.a_off != a_copied) gather_f32(a_copy, pa, a_copied = it.a_off, M, K, a_sm, a_sk);
        if (!b_direct && it.b_off != b_copied) gather_f32(b_copy, pb, b_copied = it.b_off, K, N, b_sk, b_sn);
        const float *A = a_direct ? pa + it.a_off : a_copy, *B = b_direct ? pb + it.b_off : b_copy;
        float *C = po + i * M * N;
        if (row_vector) /* C [N] = B^T a: B is K x N row-major, or N x K when transposed */
            cblas_sgemv(CblasRowMajor, vb.trans == CblasNoTrans ? CblasTrans : CblasNoTrans,
                        vb.trans == CblasNoTrans ? (int)K : (int)N, vb.trans == CblasNoTrans ? (int)N : (int)K, 1.0f, B,
                        vb.ld, A, a_inc, 0.0f, C, 1);
        else if (column_vector) /* C [M] = A b: A is M x K row-major, or K x M when transposed */
            cblas_sgemv(CblasRowMajor, va.trans, va.trans == CblasNoTrans ? (int)M : (int)K,
                        va.trans == CblasNoTrans ? (int)K : (int)M, 1.0f, A, va.ld, B, b_inc, 0.0f, C, 1);
        else
            cblas_sgemm(CblasRowMajor, va.trans, vb.trans, (int)M, (int)N, (int)K, 1.0f, A, va.ld, B, vb.ld, 0.0f, C,
                        (int)N);
    }
    free(a_copy);
    free(b_copy);
    return WGT_OK;
}

/* A batch that repeats one b (stride 0 in every batch dimension) over rows of a that are
 * evenly spaced across the batch is a single product of batch * M rows: one BLAS call that
 * reads b once instead of once per batch element, and a batch of matrix-vector products
 * (a linear layer over a few tokens) becomes one matrix product. Fills the 2-D views and
 * returns 1 when that is so. */
static int one_product_of_rows(const wgt_operand *out, const wgt_operand *a, const wgt_operand *b, int64_t batch,
                               int64_t M, int64_t K, wgt_operand *a2, wgt_operand *b2, wgt_operand *out2) {
    int nd = out->ndim;
    for (int d = 0; d < nd - 2; d++)
        if (out->shape[d] != 1 && b->strides[d] != 0) return 0;
    /* The rows of a over the batch dimensions and M, innermost first, must chain. */
    int64_t row_stride = 0, expect = 0;
    int seen = 0;
    for (int d = nd - 2; d >= 0; d--) {
        if (out->shape[d] == 1) continue;
        if (!seen) {
            row_stride = a->strides[d];
            seen = 1;
        } else if (a->strides[d] != expect) {
            return 0;
        }
        expect = a->strides[d] * out->shape[d];
    }
    int64_t rows = batch * M;
    if (row_stride == 0 || rows > INT_MAX || rows * K > INT_MAX) return 0;
    *a2 = *a;
    *b2 = *b;
    *out2 = *out;
    a2->ndim = b2->ndim = out2->ndim = 2;
    a2->shape[0] = rows;
    a2->shape[1] = K;
    a2->strides[0] = row_stride;
    a2->strides[1] = a->strides[nd - 1];
    b2->shape[0] = K;
    b2->shape[1] = b->shape[nd - 1];
    b2->strides[0] = b->strides[nd - 2];
    b2->strides[1] = b->strides[nd - 1];
    out2->shape[0] = rows;
    out2->shape[1] = out->shape[nd - 1];
    out2->strides[0] = out->shape[nd - 1];
    out2->strides[1] = 1;
    return 1;
}

/* Tile sizes of the f16 loop: a tile of a (MB x KB) and of b (KB x NB) in double, 96 KiB
 * together, stay in L2 while the MB x NB accumulators are updated. */
#define MB 32
#define NB 64
#define KB 128

typedef struct {
    const wgt_operand *out, *a, *b;
    int64_t M, N, K, m_tiles, n_tiles, tiles, ntasks;
    double *scratch; /* per thread: a tile, b tile and accumulators */
} f16_job;

#define F16_SCRATCH (MB * KB + KB * NB + MB * NB)

/* Storage offsets of a's and b's matrices for batch element i. */
static void batch_offsets(const f16_job *j, int64_t i, int64_t *a_off, int64_t *b_off) {
    *a_off = j->a->offset;
    *b_off = j->b->offset;
    for (int d = j->out->ndim - 3; d >= 0; d--) {
        int64_t at = i % j->out->shape[d];
        i /= j->out->shape[d];
        *a_off += at * j->a->strides[d];
        *b_off += at * j->b->strides[d];
    }
}

/* One MB x NB tile of one batch element's output, summed over all of K in k order, so the
 * tiles can run on any thread. */
static void f16_tile(const f16_job *j, int64_t tile, double *at) {
    int nd = j->out->ndim;
    int64_t M = j->M, N = j->N, K = j->K;
    int64_t a_sm = j->a->strides[nd - 2], a_sk = j->a->strides[nd - 1];
    int64_t b_sk = j->b->strides[nd - 2], b_sn = j->b->strides[nd - 1];
    int64_t per_batch = j->m_tiles * j->n_tiles, i = tile / per_batch, r0 = tile % per_batch;
    int64_t m0 = r0 / j->n_tiles * MB, n0 = r0 % j->n_tiles * NB, a_off, b_off;
    batch_offsets(j, i, &a_off, &b_off);
    const uint16_t *pa = j->a->host, *pb = j->b->host;
    uint16_t *po = j->out->host;
    double *bt = at + MB * KB, *acc = bt + KB * NB;
    int64_t mb = M - m0 < MB ? M - m0 : MB, nb = N - n0 < NB ? N - n0 : NB;
    memset(acc, 0, sizeof(double) * MB * NB);
    for (int64_t k0 = 0; k0 < K; k0 += KB) {
        int64_t kb = K - k0 < KB ? K - k0 : KB;
        for (int64_t r = 0; r < mb; r++)
            for (int64_t k = 0; k < kb; k++)
                at[r * KB + k] = wgt_cpu_f16_to_f32(pa[a_off + (m0 + r) * a_sm + (k0 + k) * a_sk]);
        for (int64_t k = 0; k < kb; k++)
            for (int64_t c = 0; c < nb; c++)
                bt[k * NB + c] = wgt_cpu_f16_to_f32(pb[b_off + (k0 + k) * b_sk + (n0 + c) * b_sn]);
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
        for (int64_t c = 0; c < nb; c++) po[i * M * N + (m0 + r) * N + n0 + c] = wgt_f32_to_f16((float)acc[r * NB + c]);
}

static void f16_task(void *arg, int64_t t, int slot) {
    const f16_job *j = arg;
    int64_t first, end;
    wgt_cpu_task_range(j->tiles, j->ntasks, t, &first, &end);
    for (int64_t tile = first; tile < end; tile++) f16_tile(j, tile, j->scratch + (size_t)slot * F16_SCRATCH);
}

static wgt_status matmul_f16(wgt_backend *be, const wgt_operand *out, const wgt_operand *a, const wgt_operand *b,
                             int64_t batch, int64_t M, int64_t N, int64_t K) {
    int slots = wgt_cpu_pool_slots(wgt_cpu_pool_of(be));
    f16_job j = {out, a, b, M, N, K, (M + MB - 1) / MB, (N + NB - 1) / NB, 0, 1, NULL};
    j.scratch = malloc(sizeof(double) * F16_SCRATCH * (size_t)slots);
    if (!j.scratch) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "wgt_matmul: out of host memory for f16 tiles");
    j.tiles = batch * j.m_tiles * j.n_tiles;
    /* Work per tile in walk units: converting the tiles of a and b, then the products. */
    double per_tile = (double)K * (4.0 * (MB + NB) + (double)MB * NB / 2);
    j.ntasks = wgt_cpu_task_count(be, j.tiles, per_tile);
    wgt_cpu_pool_run(wgt_cpu_pool_of(be), j.ntasks, f16_task, &j);
    free(j.scratch);
    return WGT_OK;
}

wgt_status wgt_cpu_matmul(wgt_backend *be, const wgt_operand *out, const wgt_operand *a, const wgt_operand *b) {
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
    if (out->dtype == WGT_F16) return matmul_f16(be, out, a, b, batch, M, N, K);
    if (out->dtype != WGT_F32)
        return wgt_error(WGT_ERR_INTERNAL, "wgt_matmul: %s reached the CPU kernel", wgt_dtype_name(out->dtype));
    /* BLAS counts in int; larger products (beyond 2^31 elements per matrix) would not fit the
     * memory of this backend's kernels anyway, but are refused rather than truncated. */
    if (M > INT_MAX || N > INT_MAX || K > INT_MAX || M * K > INT_MAX || K * N > INT_MAX)
        return wgt_error(WGT_ERR_LIMIT, "wgt_matmul: [%lld, %lld] @ [%lld, %lld] is beyond BLAS's 32-bit sizes",
                         (long long)M, (long long)K, (long long)K, (long long)N);
    wgt_operand a2, b2, out2;
    if (batch > 1 && one_product_of_rows(out, a, b, batch, M, K, &a2, &b2, &out2))
        return matmul_f32(&out2, &a2, &b2, 1, batch * M, N, K);
    return matmul_f32(out, a, b, batch, M, N, K);
}
