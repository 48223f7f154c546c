/*
 * i64 and u64 index tensors in every op that takes indices (gather_rows, index_select, take,
 * take_along_axis, scatter in both modes, index_add, set_rows, one_hot, cross_entropy, and
 * rope's positions). The i32 path is the reference (test_indexing.c and test_scatter.c check
 * it against values computed on the host): the same logical index values, laid out as a
 * contiguous tensor, a transposed view, a stepped slice (whose skipped elements hold values
 * out of range, so reading one fails), a broadcast view, or computed by pending work (so
 * checked on the device), must give byte for byte the same result in i64 and u64.
 * test_index64_errors.c covers the values out of range.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"
#include "test.h"

enum { CONTIGUOUS, TRANSPOSED, STEPPED, BROADCAST, COMPUTED, COMPUTED_STEPPED, LAYOUTS };
static const char *const layout_names[LAYOUTS] = {"contiguous", "transposed", "stepped",
                                                  "broadcast",  "computed",   "computed stepped"};

/* A value no op here accepts: it sits where a stepped view skips. */
#define SKIPPED 1000003

/* A tensor of dtype dt and the given shape holding v (row-major). */
static wgt_tensor *raw_tensor(wgt_context *ctx, wgt_dtype dt, int ndim, const int64_t *shape, const int64_t *v) {
    int64_t n = numel_of(ndim, shape);
    size_t es = wgt_dtype_size(dt);
    unsigned char *buf = malloc((size_t)(n ? n : 1) * es);
    for (int64_t i = 0; buf && i < n; i++) {
        if (es == 8) ((uint64_t *)buf)[i] = (uint64_t)v[i];
        else ((uint32_t *)buf)[i] = (uint32_t)v[i];
    }
    wgt_tensor *t = buf ? wgt_tensor_from_data(ctx, dt, ndim, shape, buf, (size_t)n * es, WGT_USAGE_DEFAULT) : NULL;
    free(buf);
    return t;
}

/* An index tensor of logical shape (ndim, shape) and values v (row-major) in the layout.
 * Where the layout cannot hold them (rank too low to transpose, rows that differ for a
 * broadcast), the caller gives suitable v: broadcast repeats row 0 of the first dimension. */
static wgt_tensor *index_view(wgt_context *ctx, wgt_dtype dt, int layout, int ndim, const int64_t *shape,
                              const int64_t *v) {
    int64_t n = numel_of(ndim, shape), st[WGT_MAX_DIMS], at[WGT_MAX_DIMS];
    memcpy(st, shape, sizeof(int64_t) * (size_t)ndim);
    wgt_tensor *base = NULL, *out = NULL;
    int64_t *sv = NULL;
    if (layout == TRANSPOSED && ndim >= 2) {
        st[ndim - 1] = shape[ndim - 2], st[ndim - 2] = shape[ndim - 1];
        sv = malloc((size_t)(n ? n : 1) * sizeof *sv);
        for (int64_t i = 0; sv && i < n; i++) {
            coords(ndim, shape, i, at);
            int64_t t = at[ndim - 1];
            at[ndim - 1] = at[ndim - 2], at[ndim - 2] = t;
            sv[flat_of(ndim, st, at)] = v[i];
        }
        base = sv ? raw_tensor(ctx, dt, ndim, st, sv) : NULL;
        out = base ? wgt_transpose(base, -1, -2) : NULL;
    } else if ((layout == STEPPED || layout == COMPUTED_STEPPED) && ndim >= 1) {
        st[ndim - 1] = 2 * shape[ndim - 1];
        int64_t m = numel_of(ndim, st);
        sv = malloc((size_t)(m ? m : 1) * sizeof *sv);
        for (int64_t i = 0; sv && i < m; i++) sv[i] = i % 2 ? SKIPPED : v[i / 2];
        base = sv ? raw_tensor(ctx, dt, ndim, st, sv) : NULL;
        if (base && layout == COMPUTED_STEPPED) {
            wgt_tensor *c = wgt_add_scalar(base, 0);
            wgt_release(base);
            base = c;
        }
        out = base ? wgt_slice(base, ndim - 1, 0, st[ndim - 1], 2) : NULL;
    } else if (layout == BROADCAST && ndim >= 1 && shape[0] > 0) {
        st[0] = 1;
        base = raw_tensor(ctx, dt, ndim, st, v);
        out = base ? wgt_broadcast_to(base, ndim, shape) : NULL;
    } else {
        base = raw_tensor(ctx, dt, ndim, shape, v);
        out = base && layout >= COMPUTED ? wgt_add_scalar(base, 0) : wgt_retain(base);
    }
    free(sv);
    wgt_release(base);
    return out;
}

/* Random indices in [0, bound) of shape; for the broadcast layout every slice along the
 * first dimension repeats the first. */
static int64_t *random_indices(int ndim, const int64_t *shape, int64_t bound, int layout, uint64_t *seed) {
    int64_t n = numel_of(ndim, shape), row = ndim && shape[0] ? n / shape[0] : n;
    int64_t *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    for (int64_t i = 0; v && i < n; i++)
        v[i] = layout == BROADCAST && i >= row ? v[i % row] : (int64_t)(next_u64(seed) % (uint64_t)bound);
    return v;
}

static wgt_tensor *random_f32(wgt_context *ctx, int ndim, const int64_t *shape, uint64_t seed) {
    int64_t n = numel_of(ndim, shape);
    double *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    for (int64_t i = 0; v && i < n; i++) v[i] = (double)(int64_t)(next_u64(&seed) % 2001) / 64.0 - 15.0;
    wgt_tensor *t = v ? tensor_of_doubles(ctx, WGT_F32, ndim, shape, v) : NULL;
    free(v);
    return t;
}

/* The ops under test: each takes its operands (made once per test) and one index tensor. */
enum { GATHER, INDEX_SELECT, TAKE, TAKE_ALONG, SCATTER, SCATTER_ADD, INDEX_ADD, SET_ROWS, ONE_HOT, CROSS_ENTROPY,
       ROPE, OPS };
static const char *const op_names[OPS] = {"gather_rows", "index_select", "take",     "take_along_axis",
                                          "scatter",     "scatter add",  "index_add", "set_rows",
                                          "one_hot",     "cross_entropy", "rope"};

typedef struct {
    int ndim;
    int64_t shape[3];
    int64_t bound;
} index_form;

/* The index shape and bound each op takes here. */
static const index_form forms[OPS] = {
    [GATHER] = {2, {2, 3}, 6},        [INDEX_SELECT] = {1, {7}, 4}, [TAKE] = {2, {2, 3}, 4},
    [TAKE_ALONG] = {2, {3, 5}, 4},    [SCATTER] = {2, {3, 2}, 4},   [SCATTER_ADD] = {2, {3, 2}, 4},
    [INDEX_ADD] = {1, {5}, 4},        [SET_ROWS] = {1, {4}, 6},     [ONE_HOT] = {2, {2, 3}, 5},
    [CROSS_ENTROPY] = {1, {6}, 4},    [ROPE] = {1, {3}, 1000},
};

typedef struct {
    wgt_tensor *table, *a, *src, *rows, *src_ia, *logits, *x;
} operands;

static operands make_operands(wgt_context *ctx) {
    operands o;
    o.table = random_f32(ctx, 2, (int64_t[]){6, 3}, 1);
    o.a = random_f32(ctx, 2, (int64_t[]){3, 4}, 2);
    o.src = random_f32(ctx, 2, (int64_t[]){3, 2}, 3);
    o.rows = random_f32(ctx, 2, (int64_t[]){5, 3}, 4);
    o.src_ia = random_f32(ctx, 2, (int64_t[]){3, 5}, 7);
    o.logits = random_f32(ctx, 2, (int64_t[]){6, 4}, 5);
    o.x = random_f32(ctx, 3, (int64_t[]){2, 3, 4}, 6);
    return o;
}

static void release_operands(operands *o) {
    wgt_tensor *all[] = {o->table, o->a, o->src, o->rows, o->src_ia, o->logits, o->x};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) wgt_release(all[i]);
}

/* The first rows of t along dimension 0 and the first cols along 1 (the operand matching
 * an index of that shape). */
static wgt_tensor *cut(wgt_tensor *t, int64_t rows, int64_t cols) {
    wgt_tensor *r = wgt_slice(t, 0, 0, rows, 1), *c = r && cols >= 0 ? wgt_slice(r, 1, 0, cols, 1) : NULL;
    if (cols < 0) return r;
    wgt_release(r);
    return c;
}

/* op applied with idx: its result (set_rows: a copy of the written dst); NULL on failure. */
static wgt_tensor *apply(int op, const operands *o, wgt_tensor *idx) {
    const int64_t *is = wgt_tensor_shape(idx);
    wgt_tensor *part = NULL, *out = NULL;
    switch (op) {
    case GATHER: return wgt_gather_rows(o->table, idx);
    case INDEX_SELECT: return wgt_index_select(o->a, 1, idx);
    case TAKE: return wgt_take(o->a, idx, -1);
    case TAKE_ALONG: return wgt_take_along_axis(o->a, idx, 1);
    case SCATTER:
    case SCATTER_ADD:
        part = cut(o->src, is[0], is[1]);
        out = part ? wgt_scatter(o->a, 1, idx, part, op == SCATTER ? WGT_SCATTER_REPLACE : WGT_SCATTER_ADD) : NULL;
        break;
    case INDEX_ADD: /* a [3, 4] along axis 1 */
        part = cut(o->src_ia, 3, is[0]);
        out = part ? wgt_index_add(o->a, 1, idx, part) : NULL;
        break;
    case SET_ROWS:
        part = cut(o->rows, is[0], -1);
        out = wgt_contiguous(o->table);
        if (!part || !out || wgt_set_rows(out, idx, part) != WGT_OK) {
            wgt_release(out);
            out = NULL;
        }
        break;
    case ONE_HOT: return wgt_one_hot(idx, 5, WGT_F32);
    case CROSS_ENTROPY: return wgt_cross_entropy(o->logits, idx);
    case ROPE: return wgt_rope(o->x, idx, 10000.0);
    }
    wgt_release(part);
    return out;
}

/* Whether a and b have one shape and the same bytes; names what. */
static void check_same(wgt_tensor *a, wgt_tensor *b, const char *what) {
    CHECK(a && b, "%s: %s", what, wgt_last_error());
    if (!a || !b) return;
    int nd = wgt_tensor_ndim(a), same_shape = nd == wgt_tensor_ndim(b) && wgt_tensor_dtype(a) == wgt_tensor_dtype(b);
    for (int d = 0; same_shape && d < nd; d++) same_shape = wgt_tensor_shape(a)[d] == wgt_tensor_shape(b)[d];
    CHECK(same_shape, "%s: the shapes or types differ", what);
    if (!same_shape) return;
    size_t n = wgt_tensor_nbytes(a);
    unsigned char *x = malloc(n + 1), *y = malloc(n + 1);
    CHECK(x && y && wgt_tensor_read(a, x, n) == WGT_OK && wgt_tensor_read(b, y, n) == WGT_OK, "%s: read: %s", what,
          wgt_last_error());
    size_t i = 0;
    while (x && y && i < n && x[i] == y[i]) i++;
    CHECK(!x || !y || i == n, "%s: byte %zu differs", what, i);
    free(x), free(y);
}

/* Every op, every layout: i64 and u64 indices give the bytes i32 indices give. */
TEST_BACKENDS(index64_ops_match_i32) {
    operands o = make_operands(ctx);
    uint64_t seed = 42;
    char what[160];
    for (int op = 0; op < OPS; op++)
        for (int layout = 0; layout < LAYOUTS; layout++) {
            const index_form *f = &forms[op];
            int64_t *v = random_indices(f->ndim, f->shape, f->bound, layout, &seed);
            wgt_tensor *i32 = v ? index_view(ctx, WGT_I32, layout, f->ndim, f->shape, v) : NULL;
            wgt_tensor *want = i32 ? apply(op, &o, i32) : NULL;
            snprintf(what, sizeof what, "%s, %s i32", op_names[op], layout_names[layout]);
            CHECK(want != NULL, "%s: %s", what, wgt_last_error());
            for (int k = 0; k < 2 && want; k++) {
                wgt_dtype dt = k ? WGT_U64 : WGT_I64;
                snprintf(what, sizeof what, "%s, %s %s", op_names[op], layout_names[layout], wgt_dtype_name(dt));
                wgt_tensor *idx = index_view(ctx, dt, layout, f->ndim, f->shape, v), *got = idx ? apply(op, &o, idx) : NULL;
                check_same(got, want, what);
                wgt_release(got), wgt_release(idx);
            }
            wgt_release(want), wgt_release(i32);
            free(v);
        }
    release_operands(&o);
}

/* Empty index tensors: the same (empty or not) results as empty i32 ones. */
TEST_BACKENDS(index64_empty_indices_match_i32) {
    static const index_form empty[OPS] = {
        [GATHER] = {2, {0, 3}, 6},     [INDEX_SELECT] = {1, {0}, 4}, [TAKE] = {2, {2, 0}, 4},
        [TAKE_ALONG] = {2, {3, 0}, 4}, [SCATTER] = {2, {3, 0}, 4},   [SCATTER_ADD] = {2, {0, 2}, 4},
        [INDEX_ADD] = {1, {0}, 4},     [SET_ROWS] = {1, {0}, 6},     [ONE_HOT] = {2, {0, 3}, 5},
    };
    operands o = make_operands(ctx);
    char what[160];
    for (int op = 0; op <= ONE_HOT; op++)
        for (int layout = CONTIGUOUS; layout <= COMPUTED; layout += COMPUTED - CONTIGUOUS) {
            const index_form *f = &empty[op];
            wgt_tensor *i32 = index_view(ctx, WGT_I32, layout, f->ndim, f->shape, NULL);
            wgt_tensor *want = i32 ? apply(op, &o, i32) : NULL;
            for (int k = 0; k < 2 && want; k++) {
                wgt_dtype dt = k ? WGT_U64 : WGT_I64;
                snprintf(what, sizeof what, "%s, empty %s %s", op_names[op], layout_names[layout], wgt_dtype_name(dt));
                wgt_tensor *idx = index_view(ctx, dt, layout, f->ndim, f->shape, NULL);
                wgt_tensor *got = idx ? apply(op, &o, idx) : NULL;
                check_same(got, want, what);
                wgt_release(got), wgt_release(idx);
            }
            CHECK(want != NULL, "%s, empty i32: %s", op_names[op], wgt_last_error());
            wgt_release(want), wgt_release(i32);
        }
    release_operands(&o);
}

/* The rows an i64 index picks, against the table's values on the host (so the layouts above
 * hold the values they are meant to). */
TEST_BACKENDS(index64_gather_rows_reference) {
    double tv[18], want[3 * 2 * 3];
    for (int i = 0; i < 18; i++) tv[i] = i * 1.5 - 4;
    int64_t v[6] = {5, 0, 3, 3, 1, 4};
    wgt_tensor *table = tensor_of_doubles(ctx, WGT_F32, 2, (int64_t[]){6, 3}, tv);
    for (int i = 0; i < 6; i++)
        for (int c = 0; c < 3; c++) want[i * 3 + c] = tv[v[i] * 3 + c];
    for (int layout = 0; layout < LAYOUTS; layout++) {
        wgt_tensor *idx = index_view(ctx, WGT_I64, layout, 2, (int64_t[]){2, 3}, v);
        wgt_tensor *g = idx && table ? wgt_gather_rows(table, idx) : NULL;
        if (layout != BROADCAST) check_exact(g, want, 18, layout_names[layout]);
        wgt_release(g), wgt_release(idx);
    }
    wgt_release(table);
}

/* Gradients through i64 and u64 indices are those through i32 ones (the backward passes
 * scatter and gather by the same indices; cross_entropy's compares the class with them). */
TEST_BACKENDS(index64_gradients_match_i32) {
    int64_t v[6] = {2, 0, 3, 3, 1, 2};
    float g[3][12];
    wgt_dtype dts[3] = {WGT_I32, WGT_I64, WGT_U64};
    for (int k = 0; k < 3; k++) {
        wgt_tensor *a = random_f32(ctx, 2, (int64_t[]){3, 4}, 9);
        wgt_tensor *idx = index_view(ctx, dts[k], CONTIGUOUS, 2, (int64_t[]){2, 3}, v);
        wgt_tensor *w = random_f32(ctx, 3, (int64_t[]){3, 2, 3}, 10);
        wgt_tensor *t = NULL, *p = NULL, *loss = NULL, *ce = NULL, *both = NULL;
        CHECK(a && wgt_requires_grad(a, 1) == WGT_OK, "%s", wgt_last_error());
        if (a && idx && w && (t = wgt_take(a, idx, 1)) && (p = wgt_mul(t, w))) loss = wgt_sum(p, 0, NULL, 0);
        /* a [3, 4] as the logits of 3 rows, the first row of the indices as their targets. */
        wgt_tensor *row = idx ? wgt_slice(idx, 0, 0, 1, 1) : NULL, *tgt = row ? wgt_reshape(row, 1, (int64_t[]){3}) : NULL;
        if (loss && tgt && (ce = wgt_cross_entropy(a, tgt))) both = wgt_add(loss, ce);
        wgt_release(loss);
        loss = both;
        wgt_release(ce), wgt_release(row), wgt_release(tgt);
        wgt_tensor *grad = loss && wgt_backward(loss, NULL) == WGT_OK ? wgt_grad(a) : NULL;
        CHECK(grad && wgt_tensor_read(grad, g[k], sizeof g[k]) == WGT_OK, "%s: %s", wgt_dtype_name(dts[k]),
              wgt_last_error());
        CHECK(k == 0 || !memcmp(g[k], g[0], sizeof g[0]), "%s: the gradient differs from i32's",
              wgt_dtype_name(dts[k]));
        wgt_tensor *all[] = {a, idx, w, t, p, loss, grad};
        for (size_t i = 0; i < sizeof all / sizeof *all; i++) wgt_release(all[i]);
    }
}
