/*
 * Tests of the manipulation and mask ops (src/core/manip.c, masked.c): moveaxis, roll,
 * repeat, tile, diagonal, trace, diag, masked_fill and masked_select, each against a
 * reference computed here entry by entry from the input's values (exact: the ops move
 * values, and trace's sums are of small integers), on contiguous and transposed inputs and
 * empty shapes; their errors; and their gradients against finite differences.
 */
#include <stdlib.h>
#include <string.h>

#include "reference.h"
#include "gradcheck.h"

/* f32 [shape] with distinct small integers (exact in every sum here). */
static wgt_tensor *distinct(wgt_context *ctx, int ndim, const int64_t *shape) {
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    float *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    for (int64_t i = 0; v && i < n; i++) v[i] = (float)((i * 7) % 97 - 30);
    wgt_tensor *t = v ? wgt_tensor_from_data(ctx, WGT_F32, ndim, shape, v, sizeof *v * (size_t)n, WGT_USAGE_DEFAULT)
                      : NULL;
    free(v);
    return t;
}

static void check_values(wgt_tensor *t, int ndim, const int64_t *shape, const double *want, const char *what) {
    CHECK(t, "%s: %s", what, wgt_last_error());
    if (!t) return;
    int same = wgt_tensor_ndim(t) == ndim;
    for (int d = 0; same && d < ndim; d++) same = wgt_tensor_shape(t)[d] == shape[d];
    CHECK(same, "%s: wrong shape", what);
    if (!same) return;
    check_exact(t, want, wgt_tensor_numel(t), what);
}

TEST_BACKENDS(manip_moveaxis_roll_repeat_tile) {
    int64_t s3[3] = {2, 3, 4};
    wgt_tensor *a = distinct(ctx, 3, s3);
    double *av = test_read_f64(a), want[200];
    /* moveaxis 0 -> 2: out[j, k, i] = a[i, j, k]. */
    wgt_tensor *m = wgt_moveaxis(a, 0, -1);
    for (int64_t i = 0; i < 24; i++) {
        int64_t o[3], src[3];
        coords(3, (int64_t[]){3, 4, 2}, i, o);
        src[0] = o[2], src[1] = o[0], src[2] = o[1];
        want[i] = av[flat_of(3, s3, src)];
    }
    check_values(m, 3, (int64_t[]){3, 4, 2}, want, "moveaxis");
    /* roll along axes 2 and 1 (2 and -4), and flattened by 5; also of a transposed view. */
    wgt_tensor *r = wgt_roll(a, 2, (int64_t[]){2, -4}, (int[]){2, 1});
    for (int64_t i = 0; i < 24; i++) {
        int64_t o[3];
        coords(3, s3, i, o);
        o[2] = (o[2] - 2 + 4) % 4, o[1] = ((o[1] + 4) % 3 + 3) % 3;
        want[i] = av[flat_of(3, s3, o)];
    }
    check_values(r, 3, s3, want, "roll axes");
    wgt_tensor *rf = wgt_roll(a, 1, (int64_t[]){5}, NULL);
    for (int64_t i = 0; i < 24; i++) want[i] = av[(i - 5 + 24) % 24];
    check_values(rf, 3, s3, want, "roll flattened");
    /* repeat: 2 each along axis 1; per entry {0, 3} along axis 0. */
    wgt_tensor *rp = wgt_repeat(a, 1, (int64_t[]){2}, 1), *rq = wgt_repeat(a, 2, (int64_t[]){0, 3}, 0);
    for (int64_t i = 0; i < 48; i++) {
        int64_t o[3];
        coords(3, (int64_t[]){2, 6, 4}, i, o);
        o[1] /= 2;
        want[i] = av[flat_of(3, s3, o)];
    }
    check_values(rp, 3, (int64_t[]){2, 6, 4}, want, "repeat 2");
    for (int64_t i = 0; i < 36; i++) want[i] = av[12 + i % 12];
    check_values(rq, 3, (int64_t[]){3, 3, 4}, want, "repeat per entry");
    wgt_tensor *r0 = wgt_repeat(a, 1, (int64_t[]){0}, 2);
    check_values(r0, 3, (int64_t[]){2, 3, 0}, want, "repeat 0");
    /* tile: {2} over the last axis; {2, 1, 1, 3} prepends a dimension. */
    wgt_tensor *t1 = wgt_tile(a, 1, (int64_t[]){2}), *t2 = wgt_tile(a, 4, (int64_t[]){2, 1, 1, 3});
    for (int64_t i = 0; i < 48; i++) {
        int64_t o[3];
        coords(3, (int64_t[]){2, 3, 8}, i, o);
        o[2] %= 4;
        want[i] = av[flat_of(3, s3, o)];
    }
    check_values(t1, 3, (int64_t[]){2, 3, 8}, want, "tile last");
    for (int64_t i = 0; i < 144; i++) {
        int64_t o[4];
        coords(4, (int64_t[]){2, 2, 3, 12}, i, o);
        int64_t src[3] = {o[1], o[2], o[3] % 4};
        want[i] = av[flat_of(3, s3, src)];
    }
    check_values(t2, 4, (int64_t[]){2, 2, 3, 12}, want, "tile prepend");
    wgt_tensor *all[] = {a, m, r, rf, rp, rq, r0, t1, t2};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) wgt_release(all[i]);
    free(av);
}

TEST_BACKENDS(manip_diagonal_trace_diag) {
    int64_t s3[3] = {3, 4, 5};
    wgt_tensor *a = distinct(ctx, 3, s3), *at = wgt_transpose(a, 0, 2); /* [5, 4, 3] */
    double *av = test_read_f64(a), want[64];
    struct { int64_t off; int ax1, ax2; } cases[] = {{0, 0, 2}, {2, 0, 2}, {-1, 2, 1}, {-7, 0, 1}, {1, -1, 0}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
        for (int v = 0; v < 2; v++) {
            wgt_tensor *x = v ? at : a;
            const int64_t *xs = wgt_tensor_shape(x);
            int ax1 = (cases[c].ax1 + 3) % 3, ax2 = (cases[c].ax2 + 3) % 3, other = 3 - ax1 - ax2;
            int64_t off = cases[c].off, i0 = off < 0 ? -off : 0, j0 = off > 0 ? off : 0;
            int64_t len = xs[ax1] - i0 < xs[ax2] - j0 ? xs[ax1] - i0 : xs[ax2] - j0;
            if (len < 0) len = 0;
            wgt_tensor *d = wgt_diagonal(x, off, cases[c].ax1, cases[c].ax2), *tr = wgt_trace(x, off, cases[c].ax1, cases[c].ax2);
            double tw[8] = {0};
            for (int64_t o = 0; o < xs[other]; o++)
                for (int64_t k = 0; k < len; k++) {
                    int64_t xi[3];
                    xi[other] = o, xi[ax1] = i0 + k, xi[ax2] = j0 + k;
                    int64_t ai[3] = {xi[0], xi[1], xi[2]};
                    if (v) ai[0] = xi[2], ai[2] = xi[0]; /* at[i, j, k] = a[k, j, i] */
                    want[o * len + k] = av[flat_of(3, s3, ai)];
                    tw[o] += want[o * len + k];
                }
            char what[64];
            snprintf(what, sizeof what, "diagonal case %zu view %d", c, v);
            check_values(d, 2, (int64_t[]){xs[other], len}, want, what);
            snprintf(what, sizeof what, "trace case %zu view %d", c, v);
            check_values(tr, 1, (int64_t[]){xs[other]}, tw, what);
            wgt_release(d), wgt_release(tr);
        }
    /* diag of a vector: a new matrix; of a matrix: its diagonal. */
    wgt_tensor *vec = distinct(ctx, 1, (int64_t[]){3}), *mat = distinct(ctx, 2, (int64_t[]){3, 4});
    double *vv = test_read_f64(vec), *mv = test_read_f64(mat);
    for (int k = -2; k <= 1; k++) {
        int64_t size = 3 + (k < 0 ? -k : k);
        memset(want, 0, sizeof want);
        for (int i = 0; i < 3; i++) want[(i + (k < 0 ? -k : 0)) * size + i + (k > 0 ? k : 0)] = vv[i];
        wgt_tensor *dm = wgt_diag(vec, k);
        check_values(dm, 2, (int64_t[]){size, size}, want, "diag of a vector");
        wgt_release(dm);
    }
    wgt_tensor *dv = wgt_diag(mat, 1);
    double dw[3] = {mv[1], mv[6], mv[11]};
    check_values(dv, 1, (int64_t[]){3}, dw, "diag of a matrix");
    wgt_tensor *all[] = {a, at, vec, mat, dv};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) wgt_release(all[i]);
    free(av), free(vv), free(mv);
}

TEST_BACKENDS(manip_masked_fill_select) {
    int64_t s2[2] = {3, 4};
    wgt_tensor *a = distinct(ctx, 2, s2), *at = wgt_transpose(distinct(ctx, 2, (int64_t[]){4, 3}), 0, 1);
    double *av = test_read_f64(a), *atv = test_read_f64(at), want[12];
    uint32_t mrow[4] = {1, 0, 0, 7}, mfull[12] = {0, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1};
    wgt_tensor *row = wgt_tensor_from_data(ctx, WGT_U32, 1, (int64_t[]){4}, mrow, sizeof mrow, WGT_USAGE_DEFAULT);
    wgt_tensor *full = wgt_tensor_from_data(ctx, WGT_U32, 2, s2, mfull, sizeof mfull, WGT_USAGE_DEFAULT);
    wgt_tensor *f = wgt_masked_fill(at, row, -2.5);
    for (int i = 0; i < 12; i++) want[i] = mrow[i % 4] ? -2.5 : atv[i];
    check_values(f, 2, s2, want, "masked_fill broadcast mask");
    wgt_tensor *s = wgt_masked_select(a, full), *s2v = wgt_masked_select(at, row);
    int n = 0;
    for (int i = 0; i < 12; i++)
        if (mfull[i]) want[n++] = av[i];
    check_values(s, 1, (int64_t[]){n}, want, "masked_select");
    n = 0;
    for (int i = 0; i < 12; i++)
        if (mrow[i % 4]) want[n++] = atv[i];
    check_values(s2v, 1, (int64_t[]){n}, want, "masked_select broadcast mask");
    /* A mask computed on the device is read; an all-false one selects nothing. */
    wgt_tensor *gt = wgt_gt(a, a), *none = wgt_masked_select(a, gt);
    check_values(none, 1, (int64_t[]){0}, want, "masked_select of nothing");
    wgt_tensor *all[] = {a, at, row, full, f, s, s2v, gt, none};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) wgt_release(all[i]);
    free(av), free(atv);
}

TEST_BACKENDS(manip_errors_name_the_problem) {
    wgt_tensor *a = wgt_ones(ctx, WGT_F32, 2, (int64_t[]){3, 4}), *v = wgt_ones(ctx, WGT_F32, 1, (int64_t[]){3});
    wgt_tensor *c3 = wgt_ones(ctx, WGT_F32, 3, (int64_t[]){1, 2, 2}), *ia = wgt_ones(ctx, WGT_I32, 2, (int64_t[]){3, 4});
    wgt_tensor *m3 = wgt_ones(ctx, WGT_U32, 1, (int64_t[]){3});
    CHECK_ERROR(!wgt_moveaxis(a, 2, 0), WGT_ERR_SHAPE, "axis 2");
    CHECK_ERROR(!wgt_roll(a, 2, (int64_t[]){1, 1}, NULL), WGT_ERR_INVALID_ARGUMENT, "wgt_roll: 2 shifts");
    CHECK_ERROR(!wgt_roll(a, 1, (int64_t[]){1}, (int[]){-3}), WGT_ERR_SHAPE, "axis -3");
    CHECK_ERROR(!wgt_repeat(a, 2, (int64_t[]){1, 1}, 1), WGT_ERR_INVALID_ARGUMENT, "2 repeats for 4 entries along axis 1");
    CHECK_ERROR(!wgt_repeat(a, 1, (int64_t[]){-1}, 0), WGT_ERR_INVALID_ARGUMENT, "repeats[0] is -1");
    CHECK_ERROR(!wgt_tile(a, 1, (int64_t[]){-2}), WGT_ERR_INVALID_ARGUMENT, "reps[0] is -2");
    CHECK_ERROR(!wgt_diagonal(a, 0, 1, -1), WGT_ERR_INVALID_ARGUMENT, "axis1 and axis2 are both 1");
    CHECK_ERROR(!wgt_diagonal(v, 0, 0, 1), WGT_ERR_SHAPE, "wgt_diagonal: a has rank 1");
    CHECK_ERROR(!wgt_trace(v, 0, 0, 1), WGT_ERR_SHAPE, "wgt_trace: a has rank 1");
    CHECK_ERROR(!wgt_trace(a, 0, 0, 2), WGT_ERR_SHAPE, "axis 2");
    CHECK_ERROR(!wgt_diag(c3, 0), WGT_ERR_SHAPE, "wgt_diag: a has rank 3");
    CHECK_ERROR(!wgt_masked_fill(a, m3, 1), WGT_ERR_SHAPE, "the mask of shape [3] does not broadcast to a's shape [3, 4]");
    CHECK_ERROR(!wgt_masked_select(a, m3), WGT_ERR_SHAPE, "wgt_masked_select: the mask of shape [3]");
    wgt_tensor *m4 = wgt_ones(ctx, WGT_U32, 1, (int64_t[]){4});
    CHECK_ERROR(!wgt_masked_fill(ia, m4, 0.5), WGT_ERR_DTYPE, "wgt_masked_fill: value = 0.5 is not a whole number");
    wgt_tensor *all[] = {a, v, c3, ia, m3, m4};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) wgt_release(all[i]);
}

#define V2(a, b) 2, {a, b}
#define V3(a, b, c) 3, {a, b, c}
#define F1(name, call) static wgt_tensor *name(wgt_tensor *const *x) { return call; }
F1(f_moveaxis, wgt_moveaxis(x[0], 0, 2))
F1(f_roll, wgt_roll(x[0], 2, (int64_t[]){1, -3}, (int[]){1, 0}))
F1(f_roll_flat, wgt_roll(x[0], 1, (int64_t[]){7}, NULL))
F1(f_repeat, wgt_repeat(x[0], 3, (int64_t[]){2, 0, 3}, 1))
F1(f_tile, wgt_tile(x[0], 3, (int64_t[]){2, 1, 3}))
F1(f_diagonal, wgt_diagonal(x[0], 1, 2, 0))
F1(f_trace, wgt_trace(x[0], -1, 0, 1))
F1(f_diag_vec, wgt_diag(x[0], -1))
F1(f_diag_mat, wgt_diag(x[0], 1))
static wgt_tensor *with_mask(wgt_tensor *const *x, int select) {
    static const uint32_t m[4] = {1, 0, 1, 1};
    wgt_tensor *mask = wgt_tensor_from_data(wgt_tensor_context(x[0]), WGT_U32, 1, (int64_t[]){4}, m, sizeof m,
                                            WGT_USAGE_DEFAULT);
    wgt_tensor *r = select ? wgt_masked_select(x[0], mask) : wgt_masked_fill(x[0], mask, 3.0);
    wgt_release(mask);
    return r;
}
static wgt_tensor *f_masked_fill(wgt_tensor *const *x) { return with_mask(x, 0); }
static wgt_tensor *f_masked_select(wgt_tensor *const *x) { return with_mask(x, 1); }

TEST_BACKENDS(manip_gradients) {
    const gc_case cases[] = {
        {"moveaxis", f_moveaxis, 1, {{V3(2, 3, 4), -1, 1, GC_PLAIN}}},
        {"roll", f_roll, 1, {{V2(3, 4), -1, 1, GC_TRANSPOSED}}},
        {"roll flattened", f_roll_flat, 1, {{V2(3, 4), -1, 1, GC_PLAIN}}},
        {"repeat", f_repeat, 1, {{V2(2, 3), -1, 1, GC_STEPPED}}},
        {"tile", f_tile, 1, {{V2(2, 3), -1, 1, GC_TRANSPOSED}}},
        {"diagonal", f_diagonal, 1, {{V3(3, 2, 4), -1, 1, GC_PLAIN}}},
        {"trace", f_trace, 1, {{V3(3, 4, 2), -1, 1, GC_PLAIN}}},
        {"diag of a vector", f_diag_vec, 1, {{1, {3}, -1, 1, GC_PLAIN}}},
        {"diag of a matrix", f_diag_mat, 1, {{V2(3, 4), -1, 1, GC_TRANSPOSED}}},
        {"masked_fill", f_masked_fill, 1, {{V2(3, 4), -1, 1, GC_TRANSPOSED}}},
        {"masked_select", f_masked_select, 1, {{V2(3, 4), -1, 1, GC_PLAIN}}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) gradcheck(ctx, &cases[i]);
}
