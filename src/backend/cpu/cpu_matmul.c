/*
 * Matrix multiplication on the CPU backend: out [batch..., M, N] = a [batch..., M, K] @
 * b [batch..., K, N], one matrix product per batch element. f32 goes to the BLAS: sgemv for
 * one row or one column (M = 1 or N = 1), sgemm otherwise, and a batch that shares one b
 * over evenly spaced rows of a is a single product of all the rows. A matrix with a unit
 * stride along one dimension (and rows that do not overlap) is passed
 * in place, as itself or as a transposed matrix with the other stride as its leading
 * dimension; any other view (negative or zero strides, two non-unit strides) is first
 * gathered into a contiguous copy, so every f32 product runs in BLAS. f16 has no BLAS
 * routine, but every product of two f16 values is exact in double: blocks of the operands
 * are converted to double and multiplied by dgemm, which sums in double, so the one rounding
 * that matters is the final one to f16 and this backend stays an exact-as-possible oracle
 * for the WebGPU kernels. A single row or column (M = 1 or N = 1) converts as it goes
 * instead, one pass over the matrix shared among the context's threads, each output summed
 * in k order by one of them. K = 0 gives zeros.
 */
#include <cblas.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype_table.h"
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

/* The iterator's position at batch element i (row-major over the batch dimensions), for
 * work that starts anywhere in the batch. */
static batch_iter batch_at(int64_t i, const wgt_operand *out, const wgt_operand *a, const wgt_operand *b) {
    batch_iter it = {out->ndim - 2, {0}, a->offset, b->offset};
    for (int d = it.ndim - 1; d >= 0; d--) {
        it.index[d] = i % out->shape[d];
        i /= out->shape[d];
        it.a_off += it.index[d] * a->strides[d];
        it.b_off += it.index[d] * b->strides[d];
    }
    return it;
}

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

/* ---- f16: products of f16 values are exact in double, and sums are kept in double ---- */

/* Blocks of the f16 matrix product: a's rows x a K range and the K range x b's columns are
 * converted to double (4 MiB each at most) and multiplied by dgemm into a double block of the
 * output (8 MiB), which is rounded to f16 once K is done. b's block is converted once per
 * block of rows, so the conversions cost about 1/1024 of the multiplications. */
#define F16_ROWS 1024
#define F16_COLS 1024
#define F16_DEPTH 512

/* Converts the rows x cols f16 matrix at src + base (strides sr, sc) to row-major double. */
static void widen_f16(double *dst, const uint16_t *src, int64_t base, int64_t rows, int64_t cols, int64_t sr,
                      int64_t sc) {
    for (int64_t r = 0; r < rows; r++) {
        const uint16_t *row = src + base + r * sr;
        double *d = dst + r * cols;
        for (int64_t c = 0; c < cols; c++) d[c] = wgt_cpu_f16_to_f32(row[c * sc]);
    }
}

static wgt_status matmul_f16_blocks(const wgt_operand *out, const wgt_operand *a, const wgt_operand *b,
                                    int64_t batch, int64_t M, int64_t N, int64_t K) {
    int nd = out->ndim;
    int64_t a_sm = a->strides[nd - 2], a_sk = a->strides[nd - 1], b_sk = b->strides[nd - 2], b_sn = b->strides[nd - 1];
    int64_t rows = M < F16_ROWS ? M : F16_ROWS, cols = N < F16_COLS ? N : F16_COLS, depth = K < F16_DEPTH ? K : F16_DEPTH;
    double *ad = malloc(sizeof(double) * (size_t)(rows * depth)), *bd = malloc(sizeof(double) * (size_t)(depth * cols));
    double *cd = malloc(sizeof(double) * (size_t)(rows * cols));
    if (!ad || !bd || !cd) {
        free(ad), free(bd), free(cd);
        return wgt_error(WGT_ERR_OUT_OF_MEMORY, "wgt_matmul: out of host memory for the f16 product's double blocks");
    }
    const uint16_t *pa = a->host, *pb = b->host;
    uint16_t *po = out->host;
    batch_iter it = {nd - 2, {0}, a->offset, b->offset};
    for (int64_t i = 0; i < batch; i++, batch_next(&it, out, a, b))
        for (int64_t m0 = 0; m0 < M; m0 += rows)
            for (int64_t n0 = 0; n0 < N; n0 += cols) {
                int mb = (int)(M - m0 < rows ? M - m0 : rows), nb = (int)(N - n0 < cols ? N - n0 : cols);
                for (int64_t k0 = 0; k0 < K; k0 += depth) {
                    int kb = (int)(K - k0 < depth ? K - k0 : depth);
                    widen_f16(ad, pa, it.a_off + m0 * a_sm + k0 * a_sk, mb, kb, a_sm, a_sk);
                    widen_f16(bd, pb, it.b_off + k0 * b_sk + n0 * b_sn, kb, nb, b_sk, b_sn);
                    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, mb, nb, kb, 1.0, ad, kb, bd, nb,
                                k0 == 0 ? 0.0 : 1.0, cd, nb);
                }
                for (int r = 0; r < mb; r++)
                    for (int c = 0; c < nb; c++)
                        po[i * M * N + (m0 + r) * N + n0 + c] = wgt_f32_to_f16((float)cd[(int64_t)r * nb + c]);
            }
    free(ad), free(bd), free(cd);
    return WGT_OK;
}

/* One row (M = 1) or one column (N = 1): out[r] = sum over k of w[r, k] x[k], where w is b
 * seen transposed and x a's row, or w is a and x b's column. Each output is summed by one
 * task in k order, so the bits do not depend on the thread count. */
typedef struct {
    const uint16_t *w, *x;
    uint16_t *out;
    int64_t outputs, K, w_sr, w_sk, x_sk, chunks, tasks;
    int row_vector; /* w is b, x is a (M = 1); else w is a, x is b */
    const wgt_operand *o, *a, *b;
    double *scratch; /* per thread: x in double, then one chunk of sums */
} f16_vector_job;

/* Every f16 value in double (512 KiB, filled once per process): one load per element of the
 * matrix, where converting takes several operations and the loop is bound by them (4096 x
 * 4096: 12 ms converting, 7 ms through the table, on two cores). */
static double f16_widened[65536];
static pthread_once_t f16_widened_once = PTHREAD_ONCE_INIT;

static void fill_f16_widened(void) {
    for (uint32_t h = 0; h <= 0xffffu; h++) f16_widened[h] = wgt_cpu_f16_to_f32((uint16_t)h);
}

#define F16_CHUNK 64 /* outputs per chunk: x's conversion is shared by as many sums */

static void f16_vector_task(void *arg, int64_t t, int slot) {
    const f16_vector_job *j = arg;
    double *x = j->scratch + (size_t)slot * (size_t)(j->K + F16_CHUNK), *acc = x + j->K;
    int64_t first, end, batch_done = -1, per_batch = (j->outputs + F16_CHUNK - 1) / F16_CHUNK;
    wgt_cpu_task_range(j->chunks, j->tasks, t, &first, &end);
    for (int64_t chunk = first; chunk < end; chunk++) {
        int64_t i = chunk / per_batch, r0 = chunk % per_batch * F16_CHUNK;
        int64_t rn = j->outputs - r0 < F16_CHUNK ? j->outputs - r0 : F16_CHUNK;
        batch_iter at = batch_at(i, j->o, j->a, j->b); /* the output is contiguous */
        int64_t w_off = j->row_vector ? at.b_off : at.a_off, x_off = j->row_vector ? at.a_off : at.b_off;
        if (i != batch_done) {
            for (int64_t k = 0; k < j->K; k++) x[k] = wgt_cpu_f16_to_f32(j->x[x_off + k * j->x_sk]);
            batch_done = i;
        }
        const uint16_t *w = j->w + w_off + r0 * j->w_sr;
        if (j->w_sk == 1 || j->w_sr != 1) { /* a dot product per output, along w's rows */
            for (int64_t r = 0; r < rn; r++) {
                const uint16_t *row = w + r * j->w_sr;
                /* Four sums of every fourth term, so the additions do not wait on one another. */
                double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
                int64_t k = 0, sk = j->w_sk;
                const double *T = f16_widened;
                for (; k + 4 <= j->K; k += 4) {
                    s0 += T[row[k * sk]] * x[k];
                    s1 += T[row[(k + 1) * sk]] * x[k + 1];
                    s2 += T[row[(k + 2) * sk]] * x[k + 2];
                    s3 += T[row[(k + 3) * sk]] * x[k + 3];
                }
                for (; k < j->K; k++) s0 += T[row[k * sk]] * x[k];
                acc[r] = (s0 + s1) + (s2 + s3);
            }
        } else { /* w's columns are contiguous: add x[k] times column k to all the sums at once */
            for (int64_t r = 0; r < rn; r++) acc[r] = 0;
            for (int64_t k = 0; k < j->K; k++) {
                const uint16_t *col = w + k * j->w_sk;
                for (int64_t r = 0; r < rn; r++) acc[r] += f16_widened[col[r]] * x[k];
            }
        }
        for (int64_t r = 0; r < rn; r++) j->out[i * j->outputs + r0 + r] = wgt_f32_to_f16((float)acc[r]);
    }
}

static wgt_status matmul_f16_vector(wgt_backend *be, const wgt_operand *out, const wgt_operand *a,
                                    const wgt_operand *b, int64_t batch, int64_t M, int64_t N, int64_t K) {
    int nd = out->ndim, row_vector = M == 1;
    f16_vector_job j = {0};
    j.o = out, j.a = a, j.b = b, j.out = out->host, j.K = K, j.row_vector = row_vector;
    if (row_vector) { /* out [N] = b^T a: w [N, K] is b transposed */
        j.w = b->host, j.x = a->host, j.outputs = N;
        j.w_sr = b->strides[nd - 1], j.w_sk = b->strides[nd - 2], j.x_sk = a->strides[nd - 1];
    } else {
        j.w = a->host, j.x = b->host, j.outputs = M;
        j.w_sr = a->strides[nd - 2], j.w_sk = a->strides[nd - 1], j.x_sk = b->strides[nd - 2];
    }
    pthread_once(&f16_widened_once, fill_f16_widened);
    j.chunks = batch * ((j.outputs + F16_CHUNK - 1) / F16_CHUNK);
    int slots = wgt_cpu_pool_slots(wgt_cpu_pool_of(be));
    j.scratch = malloc(sizeof(double) * (size_t)(K + F16_CHUNK) * (size_t)slots);
    if (!j.scratch) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "wgt_matmul: out of host memory for f16 sums");
    j.tasks = wgt_cpu_task_count(be, j.chunks, (double)F16_CHUNK * (double)K);
    wgt_cpu_pool_run(wgt_cpu_pool_of(be), j.tasks, f16_vector_task, &j);
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
    if (K == 0) { /* an empty sum; all-zero bytes are +0 in both float types and 0 in the integers */
        memset(out->host, 0, (size_t)(batch * M * N) * wgt_dtype_size(out->dtype));
        return WGT_OK;
    }
    if (wgt_dtype_is_integer(out->dtype)) return wgt_cpu_matmul_int(be, out, a, b, batch, M, N, K);
    if (out->dtype == WGT_F16)
        return M == 1 || N == 1 ? matmul_f16_vector(be, out, a, b, batch, M, N, K)
                                : matmul_f16_blocks(out, a, b, batch, M, N, K);
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
