/*
 * Tests of the indexing ops: gather_rows, index_select, set_rows, one_hot, triu and tril.
 * Data are seeded random bit patterns (NaN payloads and subnormals included: gather and
 * set_rows move bits, so the comparisons are byte for byte) laid out as contiguous,
 * transposed, sliced (odd f16 positions), reversed, broadcast and 3-D permuted views; index
 * tensors are i32 or u32 of rank 0, 1 and 2, transposed, stepped, broadcast and empty. Each
 * result is compared with a reference computed from the index values read back. set_rows
 * checks the whole storage under dst, so neighbours of written f16 elements must survive,
 * and its error path must leave dst unchanged. Outputs are poisoned (WGT_POISON=1, in the
 * runner's poisoned pass) so unwritten elements show. One test compares WebGPU with the CPU.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"
#include "test.h"

static const wgt_dtype dtypes[] = {WGT_F32, WGT_F16, WGT_I32, WGT_U32};
static const wgt_dtype index_dtypes[] = {WGT_I32, WGT_U32};
#define NDT 4

/* A tensor of random bit patterns. */
static wgt_tensor *bits_tensor(wgt_context *ctx, wgt_dtype dt, int ndim, const int64_t *shape, uint64_t seed,
                               unsigned usage) {
    size_t nbytes = (size_t)numel_of(ndim, shape) * wgt_dtype_size(dt);
    unsigned char *buf = malloc(nbytes + 8);
    for (size_t i = 0; buf && i < nbytes; i += 8) {
        uint64_t v = next_u64(&seed);
        memcpy(buf + i, &v, nbytes - i < 8 ? nbytes - i : 8);
    }
    wgt_tensor *t = buf ? wgt_tensor_from_data(ctx, dt, ndim, shape, buf, nbytes, usage) : NULL;
    free(buf);
    return t;
}

/* An i32 or u32 tensor holding v (row-major). */
static wgt_tensor *index_tensor(wgt_context *ctx, wgt_dtype idt, int ndim, const int64_t *shape, const int64_t *v) {
    int64_t n = numel_of(ndim, shape);
    uint32_t *buf = malloc((size_t)(n ? n : 1) * 4);
    for (int64_t i = 0; buf && i < n; i++) buf[i] = (uint32_t)v[i];
    wgt_tensor *t = buf ? wgt_tensor_from_data(ctx, idt, ndim, shape, buf, (size_t)n * 4, WGT_USAGE_DEFAULT) : NULL;
    free(buf);
    return t;
}

/* The tensor's elements, row-major, as bytes (malloc'd; NULL on failure). */
static unsigned char *read_all(wgt_tensor *t) {
    size_t n = wgt_tensor_nbytes(t);
    unsigned char *buf = malloc(n + 1);
    if (buf && wgt_tensor_read(t, buf, n) != WGT_OK) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* Index values (read back from any index view) as int64, row-major. */
static int64_t *read_indices(wgt_tensor *t) {
    int64_t n = wgt_tensor_numel(t);
    uint32_t *raw = (uint32_t *)read_all(t);
    int64_t *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    for (int64_t i = 0; raw && v && i < n; i++)
        v[i] = wgt_tensor_dtype(t) == WGT_I32 ? (int64_t)(int32_t)raw[i] : (int64_t)raw[i];
    if (!raw) {
        free(v);
        v = NULL;
    }
    free(raw);
    return v;
}

/* ---- layouts ---- */

typedef enum { T_CONTIG, T_TRANSPOSED, T_SLICED, T_REVERSED, T_BCAST_ROWS, T_BCAST_COLS, T_3D, T_1D, T_COUNT } table_kind;
static const char *const table_names[] = {"contiguous", "transposed", "sliced", "reversed", "broadcast rows",
                                          "broadcast columns", "3-D permuted", "1-D"};

/* A table view with n rows of r elements each ([n, r]; [n, 3, r] for T_3D; [n] for T_1D). */
static wgt_tensor *make_table(wgt_context *ctx, wgt_dtype dt, table_kind k, int64_t n, int64_t r, uint64_t seed) {
    wgt_tensor *base, *v, *tmp;
    switch (k) {
    case T_TRANSPOSED:
        base = bits_tensor(ctx, dt, 2, (int64_t[]){r, n}, seed, WGT_USAGE_DEFAULT);
        v = wgt_transpose(base, 0, 1);
        break;
    case T_SLICED: /* rows 1, 3, ... and columns 2.. of a larger tensor: odd f16 positions */
        base = bits_tensor(ctx, dt, 2, (int64_t[]){2 * n + 1, r + 3}, seed, WGT_USAGE_DEFAULT);
        tmp = wgt_slice(base, 0, 1, 2 * n + 1, 2);
        v = wgt_slice(tmp, 1, 2, r + 2, 1);
        wgt_release(tmp);
        break;
    case T_REVERSED:
        base = bits_tensor(ctx, dt, 2, (int64_t[]){n, 2 * r}, seed, WGT_USAGE_DEFAULT);
        tmp = wgt_slice(base, 0, -1, -(n + 1), -1);
        v = wgt_slice(tmp, 1, -1, -(2 * r + 1), -2);
        wgt_release(tmp);
        break;
    case T_BCAST_ROWS: /* every row the same: stride 0 between rows */
        base = bits_tensor(ctx, dt, 2, (int64_t[]){1, r}, seed, WGT_USAGE_DEFAULT);
        v = wgt_broadcast_to(base, 2, (int64_t[]){n, r});
        break;
    case T_BCAST_COLS:
        base = bits_tensor(ctx, dt, 2, (int64_t[]){n, 1}, seed, WGT_USAGE_DEFAULT);
        v = wgt_broadcast_to(base, 2, (int64_t[]){n, r});
        break;
    case T_3D: /* [n, r, 3] with its last two dimensions swapped: rows that do not chain */
        base = bits_tensor(ctx, dt, 3, (int64_t[]){n, r, 3}, seed, WGT_USAGE_DEFAULT);
        v = wgt_transpose(base, 1, 2);
        break;
    case T_1D: return bits_tensor(ctx, dt, 1, (int64_t[]){n}, seed, WGT_USAGE_DEFAULT);
    default: return bits_tensor(ctx, dt, 2, (int64_t[]){n, r}, seed, WGT_USAGE_DEFAULT);
    }
    wgt_release(base);
    return v;
}

typedef enum { I_RANK0, I_RANK1, I_RANK2, I_TRANSPOSED, I_STEPPED, I_BCAST, I_EMPTY, I_COUNT } index_kind;
static const char *const index_names[] = {"rank-0", "rank-1", "rank-2", "transposed", "stepped", "broadcast", "empty"};

/* An index tensor of the given kind with values drawn from [0, bound). */
static wgt_tensor *make_indices(wgt_context *ctx, wgt_dtype idt, index_kind k, int64_t bound, uint64_t seed) {
    int64_t v[64];
    for (int i = 0; i < 64; i++) v[i] = (int64_t)(next_u64(&seed) % (uint64_t)bound);
    wgt_tensor *base, *view;
    switch (k) {
    case I_RANK0: return index_tensor(ctx, idt, 0, NULL, v);
    case I_RANK2: return index_tensor(ctx, idt, 2, (int64_t[]){3, 4}, v);
    case I_TRANSPOSED:
        base = index_tensor(ctx, idt, 2, (int64_t[]){5, 3}, v);
        view = wgt_transpose(base, 0, 1);
        break;
    case I_STEPPED:
        base = index_tensor(ctx, idt, 1, (int64_t[]){23}, v);
        view = wgt_slice(base, 0, 21, 0, -3);
        break;
    case I_BCAST:
        base = index_tensor(ctx, idt, 1, (int64_t[]){3}, v);
        view = wgt_broadcast_to(base, 2, (int64_t[]){2, 3});
        break;
    case I_EMPTY: return index_tensor(ctx, idt, 1, (int64_t[]){0}, v);
    default: return index_tensor(ctx, idt, 1, (int64_t[]){9}, v);
    }
    wgt_release(base);
    return view;
}

/* ---- gather_rows ---- */

/* Gathers and compares every output row with the table row its index names, bytes exact. */
static void check_gather(wgt_context *ctx, wgt_tensor *table, wgt_tensor *idx, const char *what) {
    wgt_tensor *out = wgt_gather_rows(table, idx);
    CHECK(out != NULL, "%s: %s", what, wgt_last_error());
    int64_t *iv = read_indices(idx);
    unsigned char *tb = read_all(table), *ob = out ? read_all(out) : NULL;
    if (out && iv && tb && ob) {
        int tnd = wgt_tensor_ndim(table), ind = wgt_tensor_ndim(idx);
        CHECK(wgt_tensor_ndim(out) == ind + tnd - 1 && wgt_tensor_dtype(out) == wgt_tensor_dtype(table), "%s: rank %d",
              what, wgt_tensor_ndim(out));
        for (int d = 0; d < ind; d++) CHECK(wgt_tensor_shape(out)[d] == wgt_tensor_shape(idx)[d], "%s: dim %d", what, d);
        for (int d = 1; d < tnd; d++)
            CHECK(wgt_tensor_shape(out)[ind + d - 1] == wgt_tensor_shape(table)[d], "%s: row dim %d", what, d);
        int64_t n = wgt_tensor_numel(idx), rows = wgt_tensor_shape(table)[0];
        size_t rb = rows ? wgt_tensor_nbytes(table) / (size_t)rows : 0;
        int bad = 0;
        for (int64_t i = 0; i < n; i++)
            if (memcmp(ob + (size_t)i * rb, tb + (size_t)iv[i] * rb, rb) != 0 && bad++ < 3)
                CHECK(0, "%s: output row %lld differs from table row %lld", what, (long long)i, (long long)iv[i]);
    } else {
        CHECK(0, "%s: reading back: %s", what, wgt_last_error());
    }
    free(iv);
    free(tb);
    free(ob);
    wgt_release(out);
}

TEST_BACKENDS(index_gather_rows_types_layouts) {
    static const int64_t row_sizes[] = {1, 3, 64};
    uint64_t seed = 1;
    int cycle = 0;
    for (int d = 0; d < NDT; d++)
        for (int id = 0; id < 2; id++)
            for (int tk = 0; tk < T_COUNT; tk++)
                for (int r = 0; r < 3; r++) {
                    if (tk == T_1D && r > 0) continue;
                    int64_t n = 11;
                    wgt_tensor *table = make_table(ctx, dtypes[d], (table_kind)tk, n, row_sizes[r], seed++);
                    /* Every index kind on contiguous tables, one in turn on the others. */
                    for (int ik = 0; ik < I_COUNT; ik++) {
                        if (tk != T_CONTIG && ik != cycle % I_COUNT) continue;
                        wgt_tensor *idx = make_indices(ctx, index_dtypes[id], (index_kind)ik, n, seed++);
                        char what[160];
                        snprintf(what, sizeof what, "gather %s table %s r=%lld, %s indices %s",
                                 wgt_dtype_name(dtypes[d]), table_names[tk], (long long)row_sizes[r],
                                 wgt_dtype_name(index_dtypes[id]), index_names[ik]);
                        check_gather(ctx, table, idx, what);
                        wgt_release(idx);
                    }
                    cycle++;
                    wgt_release(table);
                }
}

/* An empty table gathers nothing; a rank-0 index gives one row without the index dim. */
TEST_BACKENDS(index_gather_rows_edges) {
    wgt_tensor *empty = wgt_zeros(ctx, WGT_F32, 2, (int64_t[]){0, 4});
    wgt_tensor *none = index_tensor(ctx, WGT_I32, 1, (int64_t[]){0}, NULL);
    wgt_tensor *g = wgt_gather_rows(empty, none);
    CHECK(g && wgt_tensor_ndim(g) == 2 && wgt_tensor_shape(g)[0] == 0 && wgt_tensor_shape(g)[1] == 4, "%s",
          wgt_last_error());
    wgt_release(g);
    wgt_tensor *t = wgt_arange(ctx, WGT_F16, 0, 15, 1), *t2 = wgt_reshape(t, 2, (int64_t[]){5, 3});
    wgt_tensor *i0 = index_tensor(ctx, WGT_U32, 0, NULL, (int64_t[]){4});
    g = wgt_gather_rows(t2, i0);
    double want[3] = {12, 13, 14};
    unsigned char *b = g ? read_all(g) : NULL;
    CHECK(g && b && wgt_tensor_ndim(g) == 1 && wgt_tensor_shape(g)[0] == 3, "%s", wgt_last_error());
    for (int k = 0; b && k < 3; k++) {
        uint16_t h;
        memcpy(&h, b + 2 * k, 2);
        CHECK(wgt_f16_to_f32(h) == want[k], "element %d: %g", k, wgt_f16_to_f32(h));
    }
    free(b);
    /* triu and tril of empty matrices are empty. */
    wgt_tensor *e1 = wgt_triu(empty, 0), *e2 = wgt_tril(empty, -3);
    CHECK(e1 && e2 && wgt_tensor_numel(e1) == 0 && wgt_tensor_shape(e2)[1] == 4, "%s", wgt_last_error());
    wgt_release(e1);
    wgt_release(e2);
    wgt_tensor *all[] = {empty, none, g, t, t2, i0};
    for (int k = 0; k < 6; k++) wgt_release(all[k]);
}

/* Enough output elements to need more than 65535 workgroups of 256 (a 2-D grid), for both
 * the gather and the scatter kernel, and 70000 indices for the host-side checks. */
TEST_BACKENDS(index_many_indices_2d_grid) {
    const int64_t n = 70000, r = 256, rows = 1000;
    int64_t *v = malloc((size_t)n * sizeof *v);
    uint64_t s = 99;
    for (int64_t i = 0; v && i < n; i++) v[i] = (int64_t)(next_u64(&s) % (uint64_t)rows);
    wgt_tensor *table = bits_tensor(ctx, WGT_U32, 2, (int64_t[]){rows, r}, 5, WGT_USAGE_DEFAULT);
    wgt_tensor *idx = v ? index_tensor(ctx, WGT_U32, 1, (int64_t[]){n}, v) : NULL;
    check_gather(ctx, table, idx, "gather of 70000 rows of 256");
    /* Scatter: a permutation of n dst rows, so every element is written. */
    for (int64_t i = 0; v && i < n; i++) v[i] = (i * 7919) % n;
    wgt_tensor *perm = v ? index_tensor(ctx, WGT_I32, 1, (int64_t[]){n}, v) : NULL;
    wgt_tensor *dst = wgt_zeros(ctx, WGT_U32, 2, (int64_t[]){n, r});
    wgt_tensor *src = bits_tensor(ctx, WGT_U32, 2, (int64_t[]){n, r}, 6, WGT_USAGE_DEFAULT);
    wgt_status st = wgt_set_rows(dst, perm, src);
    CHECK(st == WGT_OK, "set_rows: %s", wgt_last_error());
    unsigned char *got = read_all(dst), *want = read_all(src);
    int bad = 0;
    for (int64_t i = 0; got && want && v && i < n; i++)
        if (memcmp(got + (size_t)(v[i] * r) * 4, want + (size_t)(i * r) * 4, (size_t)r * 4) && bad++ < 3)
            CHECK(0, "set_rows: dst row %lld is not rows[%lld]", (long long)v[i], (long long)i);
    CHECK(got && want, "reading back: %s", wgt_last_error());
    free(got);
    free(want);
    free(v);
    wgt_tensor *all[] = {table, idx, perm, dst, src};
    for (int k = 0; k < 5; k++) wgt_release(all[k]);
}

/* ---- index_select ---- */

TEST_BACKENDS(index_select_every_axis) {
    uint64_t seed = 300;
    for (int d = 0; d < NDT; d++)
        for (int layout = 0; layout < 2; layout++) {
            /* [4, 5, 6], contiguous or as the transpose of a [6, 5, 4] tensor. */
            wgt_tensor *base = bits_tensor(ctx, dtypes[d], 3, layout ? (int64_t[]){6, 5, 4} : (int64_t[]){4, 5, 6}, seed++,
                                           WGT_USAGE_DEFAULT);
            wgt_tensor *a = layout ? wgt_transpose(base, 0, 2) : wgt_retain(base);
            unsigned char *ab = read_all(a);
            size_t es = wgt_dtype_size(dtypes[d]);
            for (int axis = -3; axis < 3; axis++) {
                int ax = axis < 0 ? axis + 3 : axis;
                int64_t len = wgt_tensor_shape(a)[ax], vals[7];
                for (int k = 0; k < 7; k++) vals[k] = (int64_t)(next_u64(&seed) % (uint64_t)len);
                wgt_tensor *idx = index_tensor(ctx, index_dtypes[(axis + 3) % 2], 1, (int64_t[]){7}, vals);
                wgt_tensor *out = wgt_index_select(a, axis, idx);
                unsigned char *ob = out ? read_all(out) : NULL;
                CHECK(ob && ab && wgt_tensor_ndim(out) == 3 && wgt_tensor_shape(out)[ax] == 7, "%s axis %d: %s",
                      wgt_dtype_name(dtypes[d]), axis, wgt_last_error());
                int64_t sh[3] = {4, 5, 6}, os[3] = {4, 5, 6}, bad = 0;
                os[ax] = 7;
                for (int64_t i = 0; ob && ab && i < os[0]; i++)
                    for (int64_t j = 0; j < os[1]; j++)
                        for (int64_t k = 0; k < os[2]; k++) {
                            int64_t c[3] = {i, j, k};
                            c[ax] = vals[c[ax]];
                            size_t src = (size_t)((c[0] * sh[1] + c[1]) * sh[2] + c[2]) * es;
                            size_t dst = (size_t)((i * os[1] + j) * os[2] + k) * es;
                            if (memcmp(ob + dst, ab + src, es) && bad++ < 3)
                                CHECK(0, "%s layout %d axis %d: element [%lld, %lld, %lld] differs",
                                      wgt_dtype_name(dtypes[d]), layout, axis, (long long)i, (long long)j, (long long)k);
                        }
                free(ob);
                wgt_release(out);
                wgt_release(idx);
            }
            free(ab);
            wgt_release(a);
            wgt_release(base);
        }
}

/* ---- set_rows ---- */

typedef enum { D_CONTIG, D_SLICED, D_EVEN_SLICED, D_TRANSPOSED, D_REVERSED, D_COUNT } dst_kind;
static const char *const dst_names[] = {"contiguous", "sliced", "sliced at even positions", "transposed", "reversed"};

/* dst [n, r] as a view of *base (contiguous, offset 0), which the caller releases. */
static wgt_tensor *make_dst(wgt_context *ctx, wgt_dtype dt, dst_kind k, int64_t n, int64_t r, uint64_t seed,
                            wgt_tensor **base) {
    wgt_tensor *tmp, *v;
    switch (k) {
    case D_SLICED: /* rows 1, 3, ... and columns 1..: odd start positions for f16 */
        *base = bits_tensor(ctx, dt, 2, (int64_t[]){2 * n + 1, r + 2}, seed, WGT_USAGE_DEFAULT);
        tmp = wgt_slice(*base, 0, 1, 2 * n + 1, 2);
        v = wgt_slice(tmp, 1, 1, r + 1, 1);
        wgt_release(tmp);
        return v;
    case D_EVEN_SLICED: /* rows 0, 2, ... and columns 2..: f16 rows of whole words where r is even */
        *base = bits_tensor(ctx, dt, 2, (int64_t[]){2 * n + 1, r + 4}, seed, WGT_USAGE_DEFAULT);
        tmp = wgt_slice(*base, 0, 0, 2 * n, 2);
        v = wgt_slice(tmp, 1, 2, r + 2, 1);
        wgt_release(tmp);
        return v;
    case D_TRANSPOSED:
        *base = bits_tensor(ctx, dt, 2, (int64_t[]){r, n}, seed, WGT_USAGE_DEFAULT);
        return wgt_transpose(*base, 0, 1);
    case D_REVERSED:
        *base = bits_tensor(ctx, dt, 2, (int64_t[]){n, 2 * r}, seed, WGT_USAGE_DEFAULT);
        tmp = wgt_slice(*base, 0, -1, -(n + 1), -1);
        v = wgt_slice(tmp, 1, -2, -(2 * r + 1), -2);
        wgt_release(tmp);
        return v;
    default:
        *base = bits_tensor(ctx, dt, 2, (int64_t[]){n, r}, seed, WGT_USAGE_DEFAULT);
        return wgt_retain(*base);
    }
}

/* Writes k rows (indices drawn from [0, n), so repeats are common when k > n/2) and checks
 * the whole storage under dst against a sequential host replay: the last repeat wins and
 * nothing outside the written rows changes. */
static void check_set_rows(wgt_context *ctx, wgt_dtype dt, dst_kind dk, int64_t n, int64_t r, wgt_dtype idt, int64_t k,
                           int rows_transposed, uint64_t seed) {
    wgt_tensor *base = NULL, *dst = make_dst(ctx, dt, dk, n, r, seed, &base);
    int64_t *v = malloc((size_t)k * sizeof *v + 1);
    uint64_t s = seed;
    for (int64_t i = 0; v && i < k; i++) v[i] = (int64_t)(next_u64(&s) % (uint64_t)n);
    wgt_tensor *idx = v ? index_tensor(ctx, idt, 1, (int64_t[]){k}, v) : NULL, *rb = NULL, *rows;
    if (rows_transposed) {
        rb = bits_tensor(ctx, dt, 2, (int64_t[]){r, k}, seed + 1, WGT_USAGE_DEFAULT);
        rows = wgt_transpose(rb, 0, 1);
    } else {
        rows = bits_tensor(ctx, dt, 2, (int64_t[]){k, r}, seed + 1, WGT_USAGE_DEFAULT);
    }
    unsigned char *before = read_all(base), *src = read_all(rows), *after = NULL;
    size_t es = wgt_dtype_size(dt);
    char what[160];
    snprintf(what, sizeof what, "set_rows %s dst %s [%lld, %lld], %lld %s indices, rows %s", wgt_dtype_name(dt),
             dst_names[dk], (long long)n, (long long)r, (long long)k, wgt_dtype_name(idt),
             rows_transposed ? "transposed" : "contiguous");
    wgt_status st = wgt_set_rows(dst, idx, rows);
    CHECK(st == WGT_OK, "%s: %s", what, wgt_last_error());
    if (before && src && v && (after = read_all(base)) != NULL) {
        const int64_t *ds = wgt_tensor_strides(dst);
        int64_t off = wgt_tensor_offset(dst);
        for (int64_t i = 0; i < k; i++)
            for (int64_t j = 0; j < r; j++)
                memcpy(before + (size_t)(off + v[i] * ds[0] + j * ds[1]) * es, src + (size_t)(i * r + j) * es, es);
        size_t total = wgt_tensor_nbytes(base), bad = 0;
        for (size_t b = 0; b < total; b += es)
            if (memcmp(before + b, after + b, es) && bad++ < 3) CHECK(0, "%s: storage element %zu differs", what, b / es);
    } else {
        CHECK(0, "%s: reading back: %s", what, wgt_last_error());
    }
    free(before);
    free(src);
    free(after);
    free(v);
    wgt_tensor *all[] = {base, dst, idx, rows, rb};
    for (int j = 0; j < 5; j++) wgt_release(all[j]);
}

TEST_BACKENDS(index_set_rows_types_views_repeats) {
    static const int64_t row_sizes[] = {1, 3, 6, 64};
    uint64_t seed = 700;
    for (int d = 0; d < NDT; d++)
        for (int dk = 0; dk < D_COUNT; dk++)
            for (int r = 0; r < 4; r++)
                for (int id = 0; id < 2; id++) {
                    /* 5 indices into 9 rows, then 40 into 9: many repeats. */
                    check_set_rows(ctx, dtypes[d], (dst_kind)dk, 9, row_sizes[r], index_dtypes[id], id ? 40 : 5,
                                   (dk + r) % 2, seed);
                    seed += 3;
                }
}

/* f16 rows of whole words (written a word an invocation) with many indices (the pick pass
 * settles repeats), and a 3-D dst whose rows are planes with an even middle stride, from
 * rows seen transposed: each element against a host replay, and what lies between the rows
 * unchanged. */
TEST_BACKENDS(index_set_rows_f16_whole_words) {
    for (int dk = 0; dk < D_COUNT; dk++)
        check_set_rows(ctx, WGT_F16, (dst_kind)dk, 9, 6, WGT_I32, 100, dk % 2, 900 + (uint64_t)dk);
    /* dst [4, 3, 6]: every other plane row of a [4, 6, 6] base (strides 36, 12, 1). */
    wgt_tensor *base = bits_tensor(ctx, WGT_F16, 3, (int64_t[]){4, 6, 6}, 77, WGT_USAGE_DEFAULT);
    wgt_tensor *dst = wgt_slice(base, 1, 0, 6, 2);
    wgt_tensor *rb = bits_tensor(ctx, WGT_F16, 3, (int64_t[]){6, 3, 3}, 78, WGT_USAGE_DEFAULT);
    wgt_tensor *rows = wgt_permute(rb, (const int[]){2, 1, 0}); /* [3, 3, 6], strides (1, 3, 9) */
    wgt_tensor *idx = index_tensor(ctx, WGT_U32, 1, (int64_t[]){3}, (int64_t[]){2, 0, 2});
    uint16_t *before = (uint16_t *)read_all(base), *src = (uint16_t *)read_all(rb), *after = NULL;
    CHECK(wgt_set_rows(dst, idx, rows) == WGT_OK, "3-D: %s", wgt_last_error());
    if (before && src && (after = (uint16_t *)read_all(base)) != NULL) {
        static const int at[3] = {2, 0, 2};
        for (int i = 0; i < 3; i++) /* in order, so the last repeat wins */
            for (int a = 0; a < 3; a++)
                for (int b = 0; b < 6; b++) before[at[i] * 36 + a * 12 + b] = src[b * 9 + a * 3 + i];
        for (int e = 0; e < 144; e++)
            CHECK(before[e] == after[e], "3-D: storage element %d is %04x, want %04x", e, after[e], before[e]);
    } else {
        CHECK(0, "3-D: reading back: %s", wgt_last_error());
    }
    free(before), free(src), free(after);
    wgt_tensor *all[] = {base, dst, rb, rows, idx};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) wgt_release(all[k]);
}

/* A 1-D dst (rows of one element, odd f16 positions everywhere), a 3-D dst, explicit
 * repeats and an empty index list. */
TEST_BACKENDS(index_set_rows_shapes_and_repeats) {
    wgt_tensor *dst = wgt_zeros(ctx, WGT_F16, 1, (int64_t[]){7});
    wgt_tensor *idx = index_tensor(ctx, WGT_I32, 1, (int64_t[]){6}, (int64_t[]){3, 1, 3, 6, 0, 1});
    uint16_t vals[6], got[7];
    for (int k = 0; k < 6; k++) vals[k] = wgt_f32_to_f16((float)(10 + k));
    wgt_tensor *rows = wgt_tensor_from_data(ctx, WGT_F16, 1, (int64_t[]){6}, vals, sizeof vals, WGT_USAGE_DEFAULT);
    CHECK(wgt_set_rows(dst, idx, rows) == WGT_OK && wgt_tensor_read(dst, got, sizeof got) == WGT_OK, "%s",
          wgt_last_error());
    static const float want[7] = {14, 15, 0, 12, 0, 0, 13}; /* 3 -> 12 (last), 1 -> 15 (last) */
    for (int k = 0; k < 7; k++)
        CHECK(wgt_f16_to_f32(got[k]) == want[k], "element %d: %g, want %g", k, wgt_f16_to_f32(got[k]), want[k]);
    wgt_release(dst);
    wgt_release(idx);
    wgt_release(rows);

    /* 3-D: dst [4, 3, 5] as a permuted view; rows [2, 3, 5]. */
    wgt_tensor *base = wgt_zeros(ctx, WGT_I32, 3, (int64_t[]){4, 5, 3});
    dst = wgt_transpose(base, 1, 2);
    idx = index_tensor(ctx, WGT_U32, 1, (int64_t[]){2}, (int64_t[]){2, 0});
    rows = wgt_arange(ctx, WGT_I32, 1, 31, 1);
    wgt_tensor *rows3 = wgt_reshape(rows, 3, (int64_t[]){2, 3, 5});
    int32_t out[60];
    CHECK(wgt_set_rows(dst, idx, rows3) == WGT_OK && wgt_tensor_read(dst, out, sizeof out) == WGT_OK, "%s",
          wgt_last_error());
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 15; j++) {
            int32_t w = i == 2 ? 1 + j : i == 0 ? 16 + j : 0;
            CHECK(out[i * 15 + j] == w, "3-D element [%d, %d]: %d, want %d", i, j / 5, out[i * 15 + j], w);
        }
    wgt_tensor *none = index_tensor(ctx, WGT_I32, 1, (int64_t[]){0}, NULL);
    wgt_tensor *no_rows = wgt_zeros(ctx, WGT_I32, 3, (int64_t[]){0, 3, 5});
    CHECK(wgt_set_rows(dst, none, no_rows) == WGT_OK, "empty: %s", wgt_last_error());
    /* rows that are a view of dst itself: copied first, so the result is as if read before. */
    wgt_tensor *own = wgt_slice(dst, 0, 2, 3, 1); /* dst row 2 */
    {
        wgt_tensor *i1 = index_tensor(ctx, WGT_I32, 1, (int64_t[]){1}, (int64_t[]){3});
        CHECK(wgt_set_rows(dst, i1, own) == WGT_OK && wgt_tensor_read(dst, out, sizeof out) == WGT_OK, "%s",
              wgt_last_error());
        for (int j = 0; j < 15; j++) CHECK(out[45 + j] == 1 + j, "aliased rows element %d: %d", j, out[45 + j]);
        wgt_release(i1);
    }
    wgt_tensor *all[] = {base, dst, idx, rows, rows3, none, no_rows, own};
    for (int k = 0; k < 8; k++) wgt_release(all[k]);
}

/* Index views for set_rows (stepped: a stride of -2; broadcast: one index repeated, so the
 * last row wins) and indices that are a view of dst itself (copied before dst changes). */
TEST_BACKENDS(index_set_rows_index_views) {
    wgt_tensor *dst = wgt_zeros(ctx, WGT_F16, 2, (int64_t[]){6, 3});
    wgt_tensor *ib = index_tensor(ctx, WGT_I32, 1, (int64_t[]){7}, (int64_t[]){5, 9, 1, 9, 4, 9, 0});
    wgt_tensor *stepped = wgt_slice(ib, 0, 6, -8, -2); /* 0, 4, 1, 5 */
    wgt_tensor *r = wgt_arange(ctx, WGT_F16, 1, 13, 1), *rows = wgt_reshape(r, 2, (int64_t[]){4, 3});
    uint16_t h[18];
    CHECK(wgt_set_rows(dst, stepped, rows) == WGT_OK && wgt_tensor_read(dst, h, sizeof h) == WGT_OK, "%s",
          wgt_last_error());
    static const float want[18] = {1, 2, 3, 7, 8, 9, 0, 0, 0, 0, 0, 0, 4, 5, 6, 10, 11, 12};
    for (int k = 0; k < 18; k++)
        CHECK(wgt_f16_to_f32(h[k]) == want[k], "stepped: element %d = %g", k, wgt_f16_to_f32(h[k]));
    wgt_tensor *one = index_tensor(ctx, WGT_U32, 1, (int64_t[]){1}, (int64_t[]){2});
    wgt_tensor *same = wgt_broadcast_to(one, 1, (int64_t[]){4});
    CHECK(wgt_set_rows(dst, same, rows) == WGT_OK && wgt_tensor_read(dst, h, sizeof h) == WGT_OK, "%s", wgt_last_error());
    for (int k = 0; k < 3; k++)
        CHECK(wgt_f16_to_f32(h[6 + k]) == 10 + k, "broadcast: element %d = %g", k, wgt_f16_to_f32(h[6 + k]));
    /* dst i32 [4, 2] = {3, 0, 1, 2, ...}: its column 0 as indices, rows from elsewhere. */
    wgt_tensor *di = index_tensor(ctx, WGT_I32, 2, (int64_t[]){4, 2}, (int64_t[]){3, 0, 1, 0, 1, 0, 2, 0});
    wgt_tensor *col = wgt_slice(di, 1, 0, 1, 1), *col1 = wgt_reshape(col, 1, (int64_t[]){4});
    wgt_tensor *src = index_tensor(ctx, WGT_I32, 2, (int64_t[]){4, 2}, (int64_t[]){10, 11, 12, 13, 14, 15, 16, 17});
    int32_t out[8];
    CHECK(wgt_set_rows(di, col1, src) == WGT_OK && wgt_tensor_read(di, out, sizeof out) == WGT_OK, "%s", wgt_last_error());
    /* Indices 3, 1, 1, 2 (read before any write): row 3 <- src 0, row 1 <- src 2 (last),
     * row 2 <- src 3, row 0 untouched. */
    static const int32_t expect[8] = {3, 0, 14, 15, 16, 17, 10, 11};
    for (int k = 0; k < 8; k++)
        CHECK(out[k] == expect[k], "aliased indices: element %d = %d, want %d", k, out[k], expect[k]);
    /* A table whose own elements are the indices: two read-only bindings of one buffer. */
    wgt_tensor *t = index_tensor(ctx, WGT_U32, 2, (int64_t[]){4, 2}, (int64_t[]){1, 3, 0, 2, 3, 3, 2, 0});
    wgt_tensor *tcol = wgt_slice(t, 1, 1, 2, 1); /* [4, 1]: 3, 2, 3, 0 */
    wgt_tensor *g = wgt_gather_rows(t, tcol);
    uint32_t gv[8];
    static const uint32_t gw[8] = {2, 0, 3, 3, 2, 0, 1, 3};
    CHECK(g && wgt_tensor_ndim(g) == 3 && wgt_tensor_read(g, gv, sizeof gv) == WGT_OK, "%s", wgt_last_error());
    for (int k = 0; g && k < 8; k++)
        CHECK(gv[k] == gw[k], "self-indexed gather: element %d = %u, want %u", k, gv[k], gw[k]);
    wgt_tensor *all[] = {dst, ib, stepped, r, rows, one, same, di, col, col1, src, t, tcol, g};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) wgt_release(all[k]);
}

/* An out-of-range index in the middle: the error names its position, value and the row
 * count, and dst is unchanged even though earlier indices were fine. */
TEST_BACKENDS(index_set_rows_bad_index_leaves_dst) {
    for (int d = 0; d < NDT; d++) {
        wgt_tensor *base = NULL, *dst = make_dst(ctx, dtypes[d], D_SLICED, 9, 3, 41 + (uint64_t)d, &base);
        unsigned char *before = read_all(base), *after = NULL;
        wgt_tensor *rows = bits_tensor(ctx, dtypes[d], 2, (int64_t[]){7, 3}, 5, WGT_USAGE_DEFAULT);
        wgt_tensor *bad = index_tensor(ctx, WGT_U32, 1, (int64_t[]){7}, (int64_t[]){0, 1, 2, 12, 4, 99, 6});
        wgt_tensor *neg = index_tensor(ctx, WGT_I32, 1, (int64_t[]){7}, (int64_t[]){0, 1, 2, 3, -2, 5, 6});
        CHECK_ERROR(wgt_set_rows(dst, bad, rows) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "index 12 at position [3]");
        CHECK_ERROR(wgt_set_rows(dst, bad, rows) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "9 rows");
        CHECK_ERROR(wgt_set_rows(dst, neg, rows) != WGT_OK, WGT_ERR_INVALID_ARGUMENT,
                    "index -2 at position [4] of indices is negative");
        CHECK(before && (after = read_all(base)) && !memcmp(before, after, wgt_tensor_nbytes(base)),
              "%s: dst changed by a failed set_rows", wgt_dtype_name(dtypes[d]));
        free(before);
        free(after);
        wgt_tensor *all[] = {base, dst, rows, bad, neg};
        for (int k = 0; k < 5; k++) wgt_release(all[k]);
    }
}

/* ---- one_hot ---- */

TEST_BACKENDS(index_one_hot_classes_types) {
    static const int64_t classes[] = {1, 2, 7, 300};
    uint64_t seed = 500;
    for (int c = 0; c < 4; c++)
        for (int d = 0; d < NDT; d++)
            for (int ik = 0; ik < I_COUNT; ik++) {
                wgt_dtype idt = index_dtypes[(d + ik) % 2];
                wgt_tensor *idx = make_indices(ctx, idt, (index_kind)ik, classes[c], seed++);
                wgt_tensor *oh = wgt_one_hot(idx, classes[c], dtypes[d]);
                int64_t *iv = read_indices(idx), n = wgt_tensor_numel(idx);
                double *got = oh ? test_read_f64(oh) : NULL;
                int nd = wgt_tensor_ndim(idx);
                CHECK(got && iv && wgt_tensor_dtype(oh) == dtypes[d] && wgt_tensor_ndim(oh) == nd + 1 &&
                          wgt_tensor_shape(oh)[nd] == classes[c] && wgt_tensor_numel(oh) == n * classes[c],
                      "one_hot %lld classes %s, %s indices: %s", (long long)classes[c], wgt_dtype_name(dtypes[d]),
                      index_names[ik], wgt_last_error());
                int bad = 0;
                for (int64_t i = 0; got && iv && i < n; i++)
                    for (int64_t j = 0; j < classes[c]; j++)
                        if (got[i * classes[c] + j] != (iv[i] == j) && bad++ < 3)
                            CHECK(0, "one_hot %lld %s: [%lld, %lld] = %g (index %lld)", (long long)classes[c],
                                  wgt_dtype_name(dtypes[d]), (long long)i, (long long)j, got[i * classes[c] + j],
                                  (long long)iv[i]);
                free(got);
                free(iv);
                wgt_release(oh);
                wgt_release(idx);
            }
}

/* ---- triu / tril ---- */

/* Compares triu/tril of a with the element kept where j - i >= diag (or <= diag), else 0. */
static void check_triangle(wgt_tensor *a, int upper, int64_t diag, const char *what) {
    wgt_tensor *t = upper ? wgt_triu(a, diag) : wgt_tril(a, diag);
    double *va = test_read_f64(a), *vt = t ? test_read_f64(t) : NULL;
    int nd = wgt_tensor_ndim(a);
    int64_t m = wgt_tensor_shape(a)[nd - 2], n = wgt_tensor_shape(a)[nd - 1], total = wgt_tensor_numel(a);
    CHECK(va && vt && wgt_tensor_dtype(t) == wgt_tensor_dtype(a) && wgt_tensor_numel(t) == total, "%s %s diag %lld: %s",
          upper ? "triu" : "tril", what, (long long)diag, wgt_last_error());
    int bad = 0;
    for (int64_t e = 0; va && vt && e < total; e++) {
        int64_t i = e / n % m, j = e % n;
        double want = (upper ? j - i >= diag : j - i <= diag) ? va[e] : 0;
        if (vt[e] != want && bad++ < 3)
            CHECK(0, "%s %s diag %lld: element %lld (%lld, %lld) = %g, want %g", upper ? "triu" : "tril", what,
                  (long long)diag, (long long)e, (long long)i, (long long)j, vt[e], want);
    }
    free(va);
    free(vt);
    wgt_release(t);
}

TEST_BACKENDS(index_triu_tril_shapes_diagonals) {
    static const int64_t shapes[][4] = {{4, 4}, {3, 6}, {6, 3}, {2, 3, 4, 5}};
    static const int ranks[] = {2, 2, 2, 4};
    uint64_t seed = 900;
    for (int d = 0; d < NDT; d++)
        for (int s = 0; s < 5; s++) {
            wgt_tensor *a, *base = NULL;
            char what[64];
            if (s < 4) { /* positive values so a kept element never looks like a zeroed one */
                a = wgt_rand_uniform(ctx, dtypes[d], ranks[s], shapes[s], 1, 100, seed++);
                int used = snprintf(what, sizeof what, "[");
                for (int k = 0; k < ranks[s]; k++)
                    used += snprintf(what + used, sizeof what - (size_t)used, k ? ", %lld" : "%lld",
                                     (long long)shapes[s][k]);
                snprintf(what + used, sizeof what - (size_t)used, "]");
            } else { /* a transposed batch: [3, 5, 4] seen as [3, 4, 5] */
                base = wgt_rand_uniform(ctx, dtypes[d], 3, (int64_t[]){3, 5, 4}, 1, 100, seed++);
                a = wgt_transpose(base, 1, 2);
                snprintf(what, sizeof what, "transposed [3, 4, 5]");
            }
            char full[96];
            snprintf(full, sizeof full, "%s %s", wgt_dtype_name(dtypes[d]), what);
            for (int64_t diag = -2; diag <= 2; diag++) {
                check_triangle(a, 1, diag, full);
                check_triangle(a, 0, diag, full);
            }
            /* Far diagonals: everything or nothing kept. */
            check_triangle(a, 1, INT64_MIN, full);
            check_triangle(a, 0, INT64_MAX, full);
            check_triangle(a, 1, 1000, full);
            wgt_release(a);
            wgt_release(base);
        }
}

/* ---- errors ---- */

TEST_BACKENDS(index_errors_name_the_problem) {
    wgt_tensor *table = wgt_ones(ctx, WGT_F32, 2, (int64_t[]){5, 3}), *scalar = wgt_ones(ctx, WGT_F32, 0, NULL);
    wgt_tensor *fidx = wgt_zeros(ctx, WGT_F32, 1, (int64_t[]){2});
    wgt_tensor *idx2 = index_tensor(ctx, WGT_I32, 2, (int64_t[]){2, 3}, (int64_t[]){0, 1, 2, 3, 7, 4});
    wgt_tensor *idx = index_tensor(ctx, WGT_U32, 1, (int64_t[]){2}, (int64_t[]){4, 0});
    wgt_tensor *deep = wgt_zeros(ctx, WGT_I32, 5, (int64_t[]){1, 1, 1, 1, 1});
    wgt_tensor *tall = wgt_zeros(ctx, WGT_F32, 5, (int64_t[]){2, 1, 1, 1, 1});
    /* Indices the caller cannot read are still checked (the library's own read). */
    wgt_tensor *hidden = wgt_tensor_from_data(ctx, WGT_I32, 1, (int64_t[]){2}, (int32_t[]){1, 9}, 8, WGT_USAGE_WRITABLE);
    CHECK_ERROR(!wgt_gather_rows(scalar, idx), WGT_ERR_SHAPE, "rank 0");
    CHECK_ERROR(!wgt_gather_rows(table, fidx), WGT_ERR_DTYPE, "must be i32, u32, i64 or u64, not f32");
    CHECK_ERROR(!wgt_gather_rows(table, idx2), WGT_ERR_INVALID_ARGUMENT,
                "index 7 at position [1, 1] of indices is out of range for 5 rows");
    CHECK_ERROR(!wgt_gather_rows(tall, deep), WGT_ERR_SHAPE, "rank 9");
    CHECK_ERROR(!wgt_gather_rows(table, hidden), WGT_ERR_INVALID_ARGUMENT, "index 9 at position [1]");
    CHECK_ERROR(!wgt_gather_rows(table, NULL), WGT_ERR_INVALID_ARGUMENT, "indices is NULL");
    CHECK_ERROR(!wgt_index_select(table, 2, idx), WGT_ERR_SHAPE, "axis 2");
    CHECK_ERROR(!wgt_index_select(table, 0, idx2), WGT_ERR_SHAPE, "1-D");
    CHECK_ERROR(!wgt_index_select(table, -1, idx), WGT_ERR_INVALID_ARGUMENT, "wgt_index_select: index 4 at position [0]");
    CHECK_ERROR(!wgt_index_select(table, 1, fidx), WGT_ERR_DTYPE, "wgt_index_select");
    /* set_rows: usage, types, shapes, broadcast dst. */
    wgt_tensor *ro = wgt_tensor_create(ctx, WGT_F32, 2, (int64_t[]){5, 3}, WGT_USAGE_READABLE);
    wgt_tensor *rows = wgt_ones(ctx, WGT_F32, 2, (int64_t[]){2, 3}), *irows = wgt_ones(ctx, WGT_I32, 2, (int64_t[]){2, 3});
    wgt_tensor *wide = wgt_ones(ctx, WGT_F32, 2, (int64_t[]){2, 4}), *row1 = wgt_ones(ctx, WGT_F32, 2, (int64_t[]){1, 3});
    wgt_tensor *bdst = wgt_broadcast_to(row1, 2, (int64_t[]){5, 3});
    CHECK_ERROR(wgt_set_rows(ro, idx, rows) != WGT_OK, WGT_ERR_USAGE, "writable");
    CHECK_ERROR(wgt_set_rows(table, idx, irows) != WGT_OK, WGT_ERR_DTYPE, "rows are i32 but dst is f32");
    CHECK_ERROR(wgt_set_rows(table, idx, wide) != WGT_OK, WGT_ERR_SHAPE,
                "rows of shape [2, 4] do not fit: 2 indices into dst of shape [5, 3] need rows of shape [2, 3]");
    CHECK_ERROR(wgt_set_rows(table, idx2, rows) != WGT_OK, WGT_ERR_SHAPE, "1-D");
    CHECK_ERROR(wgt_set_rows(table, fidx, rows) != WGT_OK, WGT_ERR_DTYPE, "must be i32, u32, i64 or u64, not f32");
    CHECK_ERROR(wgt_set_rows(scalar, idx, rows) != WGT_OK, WGT_ERR_SHAPE, "rank 0");
    CHECK_ERROR(wgt_set_rows(bdst, idx, rows) != WGT_OK, WGT_ERR_USAGE, "broadcast");
    CHECK_ERROR(wgt_set_rows(table, idx, NULL) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "rows is NULL");
    /* one_hot */
    CHECK_ERROR(!wgt_one_hot(idx, 0, WGT_F32), WGT_ERR_INVALID_ARGUMENT, "classes is 0");
    CHECK_ERROR(!wgt_one_hot(idx, 4, WGT_F32), WGT_ERR_INVALID_ARGUMENT,
                "index 4 at position [0] of indices is out of range for 4 classes");
    CHECK_ERROR(!wgt_one_hot(idx2, 7, WGT_F16), WGT_ERR_INVALID_ARGUMENT, "position [1, 1]");
    CHECK_ERROR(!wgt_one_hot(idx, 5, (wgt_dtype)99), WGT_ERR_DTYPE, "unknown data type 99");
    CHECK_ERROR(!wgt_one_hot(fidx, 5, WGT_F32), WGT_ERR_DTYPE, "must be i32, u32, i64 or u64, not f32");
    CHECK_ERROR(!wgt_one_hot(NULL, 5, WGT_F32), WGT_ERR_INVALID_ARGUMENT, "wgt_one_hot");
    /* triu / tril */
    wgt_tensor *vec = wgt_ones(ctx, WGT_F32, 1, (int64_t[]){4});
    CHECK_ERROR(!wgt_triu(vec, 0), WGT_ERR_SHAPE, "rank >= 2");
    CHECK_ERROR(!wgt_tril(scalar, 0), WGT_ERR_SHAPE, "wgt_tril");
    /* A NULL from a failed call keeps that call's message through every indexing op. */
    wgt_clear_error();
    wgt_tensor *bad = wgt_gather_rows(scalar, idx);
    CHECK(!bad && !wgt_gather_rows(bad, idx) && !wgt_gather_rows(table, bad) && !wgt_index_select(bad, 0, idx) &&
              wgt_set_rows(bad, idx, rows) != WGT_OK && wgt_set_rows(table, bad, rows) != WGT_OK &&
              !wgt_one_hot(bad, 3, WGT_F32) && !wgt_triu(bad, 0) && !wgt_tril(bad, 0) &&
              test_contains(wgt_last_error(), "wgt_gather_rows: the table has rank 0"),
          "message: %s", wgt_last_error());
    wgt_clear_error();
    wgt_context *other = test_new_context(WGT_BACKEND_CPU);
    wgt_tensor *foreign = other ? index_tensor(other, WGT_I32, 1, (int64_t[]){1}, (int64_t[]){0}) : NULL;
    if (foreign) {
        CHECK_ERROR(!wgt_gather_rows(table, foreign), WGT_ERR_CONTEXT_MISMATCH, "wgt_gather_rows");
        CHECK_ERROR(wgt_set_rows(table, foreign, row1) != WGT_OK, WGT_ERR_CONTEXT_MISMATCH, "wgt_set_rows");
    }
    wgt_release(foreign);
    wgt_context_release(other);
    wgt_tensor *all[] = {table, scalar, fidx, idx2, idx, deep, tall, hidden, ro, rows, irows, wide, row1, bdst, vec};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) wgt_release(all[k]);
}

/* ---- WebGPU against CPU ---- */

/* The same inputs through both backends: gathers of f16 odd rows from a sliced table,
 * set_rows with repeats into a reversed f16 view, one_hot and triu; bytes must agree. */
TEST(index_webgpu_matches_cpu) {
    wgt_context *cpu, *gpu;
    if (!test_backend_pair(&cpu, &gpu)) return;
    wgt_context *cs[2] = {cpu, gpu};
    for (int d = 0; d < NDT; d++) {
        unsigned char *res[2][4] = {{0}};
        size_t sizes[4] = {0};
        for (int k = 0; k < 2; k++) {
            wgt_context *c = cs[k];
            wgt_tensor *table = make_table(c, dtypes[d], T_SLICED, 37, 5, 11);
            wgt_tensor *idx = make_indices(c, WGT_I32, I_TRANSPOSED, 37, 12);
            wgt_tensor *g = wgt_gather_rows(table, idx);
            wgt_tensor *base = NULL, *dst = make_dst(c, dtypes[d], D_REVERSED, 13, 7, 13, &base);
            int64_t v[40];
            uint64_t s = 14;
            for (int i = 0; i < 40; i++) v[i] = (int64_t)(next_u64(&s) % 13);
            wgt_tensor *si = index_tensor(c, WGT_U32, 1, (int64_t[]){40}, v);
            wgt_tensor *rows = bits_tensor(c, dtypes[d], 2, (int64_t[]){40, 7}, 15, WGT_USAGE_DEFAULT);
            CHECK(g && wgt_set_rows(dst, si, rows) == WGT_OK, "%s: %s", wgt_dtype_name(dtypes[d]), wgt_last_error());
            wgt_tensor *oi = make_indices(c, WGT_U32, I_RANK2, 9, 16), *oh = wgt_one_hot(oi, 9, dtypes[d]);
            double lo = dtypes[d] == WGT_U32 ? 0 : -50; /* u32 holds no negative draw */
            wgt_tensor *ta = wgt_rand_uniform(c, dtypes[d], 3, (int64_t[]){2, 5, 6}, lo, lo + 100, 17);
            wgt_tensor *tu = wgt_triu(ta, -1);
            wgt_tensor *outs[4] = {g, base, oh, tu};
            for (int j = 0; j < 4; j++) {
                res[k][j] = outs[j] ? read_all(outs[j]) : NULL;
                sizes[j] = wgt_tensor_nbytes(outs[j]);
            }
            wgt_tensor *all[] = {table, idx, g, base, dst, si, rows, oi, oh, ta, tu};
            for (size_t j = 0; j < sizeof all / sizeof *all; j++) wgt_release(all[j]);
        }
        static const char *const names[4] = {"gather_rows", "set_rows", "one_hot", "triu"};
        for (int j = 0; j < 4; j++)
            CHECK(res[0][j] && res[1][j] && sizes[j] > 0 && !memcmp(res[0][j], res[1][j], sizes[j]),
                  "%s %s: backends differ (%s)", names[j], wgt_dtype_name(dtypes[d]), wgt_last_error());
        for (int j = 0; j < 4; j++) free(res[0][j]), free(res[1][j]);
    }
    wgt_context_release(gpu);
    wgt_context_release(cpu);
}
