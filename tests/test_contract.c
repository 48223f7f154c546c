/*
 * Differential tests of the contractions (einsum, tensordot, vecdot, outer) on both backends.
 * The reference is a float64 loop over every assignment of the labels, computed from the
 * inputs as read back, so it shares nothing with the plan (sums, permutes, one matmul per
 * pair). Cases: matrix products, batches, traces and diagonals (repeated letters), implicit
 * outputs, three operands, "..." broadcasting, transposed and sliced inputs, empty and K = 0
 * contractions, f16, and the error messages. Outputs are poisoned in the runner's poisoned
 * pass, so an element nothing wrote shows as NaN.
 *
 * Tolerance: each output is a sum of products of nops factors; any summation order and the
 * rounding of intermediate products stay within (terms + nops + 2) u sum|products| with u =
 * 2^-24 for f32 (Higham 3.1). f16 intermediates are rounded to f16 once per pair (2^-11
 * relative each, so 2^-10 per pair covers any rounding mode) on top of that.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gradcheck.h"
#include "test.h"

#define U32 5.9604644775390625e-8 /* 2^-24 */
#define U16 9.765625e-4           /* 2^-10 */

typedef struct {
    int n;
    int labels[WGT_MAX_DIMS];
    int64_t shape[WGT_MAX_DIMS];
} spec;

/* The float64 reference: out[labels of out] = sum over the other labels of prod x_i.
 * sizes[l] gives every label's length; a label of length 1 in one operand broadcasts. */
static void reference(int nops, const spec *in, double *const *x, const spec *out, const int64_t *sizes,
                      const int *all, int nall, double *val, double *abs_sum) {
    int64_t out_n = 1;
    for (int d = 0; d < out->n; d++) out_n *= out->shape[d];
    for (int64_t i = 0; i < out_n; i++) val[i] = abs_sum[i] = 0;
    int64_t idx[WGT_MAX_DIMS * 64] = {0}; /* by label (a letter's code), as sizes */
    int64_t total = 1;
    for (int k = 0; k < nall; k++) total *= sizes[all[k]];
    for (int64_t it = 0; it < total; it++) {
        int64_t r = it;
        for (int k = nall - 1; k >= 0; k--) {
            idx[all[k]] = r % sizes[all[k]];
            r /= sizes[all[k]];
        }
        double p = 1;
        for (int o = 0; o < nops; o++) {
            int64_t off = 0;
            for (int d = 0; d < in[o].n; d++) off = off * in[o].shape[d] + (in[o].shape[d] == 1 ? 0 : idx[in[o].labels[d]]);
            p *= x[o][off];
        }
        int64_t oo = 0;
        for (int d = 0; d < out->n; d++) oo = oo * out->shape[d] + (out->shape[d] == 1 ? 0 : idx[out->labels[d]]);
        val[oo] += p;
        abs_sum[oo] += fabs(p);
    }
}

/* Runs got (already computed from the tensors t) against the reference over the specs. */
static void compare(const char *what, wgt_tensor *got, wgt_dtype dt, int nops, wgt_tensor *const *t, const spec *in,
                    const spec *out) {
    CHECK(got != NULL, "%s: %s", what, wgt_last_error());
    if (!got) return;
    CHECK(wgt_tensor_ndim(got) == out->n, "%s: rank %d, wanted %d", what, wgt_tensor_ndim(got), out->n);
    for (int d = 0; d < out->n && d < wgt_tensor_ndim(got); d++)
        CHECK(wgt_tensor_shape(got)[d] == out->shape[d], "%s: dim %d is %lld, wanted %lld", what, d,
              (long long)wgt_tensor_shape(got)[d], (long long)out->shape[d]);
    CHECK(wgt_tensor_dtype(got) == dt, "%s: dtype %s", what, wgt_dtype_name(wgt_tensor_dtype(got)));
    int64_t sizes[WGT_MAX_DIMS * 64] = {0};
    int all[64], nall = 0;
    for (int o = 0; o < nops; o++)
        for (int d = 0; d < in[o].n; d++) {
            int l = in[o].labels[d];
            if (!sizes[l]) all[nall++] = l;
            if (in[o].shape[d] != 1 || !sizes[l]) sizes[l] = in[o].shape[d] ? in[o].shape[d] : -1;
        }
    for (int k = 0; k < nall; k++)
        if (sizes[all[k]] < 0) sizes[all[k]] = 0;
    double *x[8];
    for (int o = 0; o < nops; o++) x[o] = test_read_f64(t[o]);
    double *g = test_read_f64(got);
    int64_t out_n = 1;
    for (int d = 0; d < out->n; d++) out_n *= out->shape[d];
    double *val = malloc(sizeof(double) * (size_t)(out_n + 1)), *as = malloc(sizeof(double) * (size_t)(out_n + 1));
    int64_t terms = 1;
    for (int k = 0; k < nall; k++) terms *= sizes[all[k]];
    terms = out_n ? terms / out_n : 0;
    reference(nops, in, x, out, sizes, all, nall, val, as);
    int bad = 0;
    for (int64_t i = 0; g && i < out_n && bad < 3; i++) {
        double tol = (double)(terms + nops + 2) * U32 * as[i];
        if (dt == WGT_F16) tol += (nops + 1) * U16 * as[i] + 6e-8;
        if (!(fabs(g[i] - val[i]) <= tol)) {
            bad++;
            CHECK(0, "%s (%s): element %lld is %.9g, wanted %.9g (tolerance %.3g)", what, wgt_dtype_name(dt), (long long)i,
                  g[i], val[i], tol);
        }
    }
    for (int o = 0; o < nops; o++) free(x[o]);
    free(g);
    free(val);
    free(as);
}

/* Specs from explicit letter-only subscripts ("ij,jk->ik") and the operands' shapes. */
static int specs_of(const char *subs, int nops, wgt_tensor *const *t, spec *in, spec *out) {
    const char *p = subs;
    int64_t len[128] = {0};
    for (int o = 0; o < nops; o++) {
        in[o].n = 0;
        for (; *p && *p != ',' && *p != '-'; p++) {
            in[o].labels[in[o].n] = *p;
            in[o].shape[in[o].n] = wgt_tensor_shape(t[o])[in[o].n];
            len[(int)*p] = in[o].shape[in[o].n];
            in[o].n++;
        }
        if (*p == ',') p++;
    }
    if (strncmp(p, "->", 2) != 0) return 0;
    p += 2;
    for (out->n = 0; *p; p++, out->n++) {
        out->labels[out->n] = *p;
        out->shape[out->n] = len[(int)*p];
    }
    return 1;
}

static wgt_tensor *operand(wgt_context *ctx, wgt_dtype dt, int n, const int64_t *shape, uint64_t seed) {
    return wgt_rand_uniform(ctx, dt, n, shape, -1, 1, seed);
}

/* One explicit case: subscripts (with "->"), operand shapes, each operand optionally a
 * transposed view (its last two axes swapped in storage) or every other element. */
typedef struct {
    const char *subs;
    int nops;
    int nd[3];
    int64_t shape[3][4];
    int layout[3]; /* 0 contiguous, 1 transposed, 2 sliced */
} einsum_case;

static wgt_tensor *laid_out(wgt_context *ctx, wgt_dtype dt, int n, const int64_t *shape, int layout, uint64_t seed) {
    int64_t s[WGT_MAX_DIMS];
    memcpy(s, shape, sizeof(int64_t) * (size_t)n);
    if (layout == 1 && n >= 2) {
        s[n - 1] = shape[n - 2];
        s[n - 2] = shape[n - 1];
        wgt_tensor *b = operand(ctx, dt, n, s, seed), *v = wgt_transpose(b, -1, -2);
        wgt_release(b);
        return v;
    }
    if (layout == 2 && n >= 1) {
        s[n - 1] = 2 * shape[n - 1] + 1;
        wgt_tensor *b = operand(ctx, dt, n, s, seed), *v = wgt_slice(b, n - 1, 2 * shape[n - 1], 0, -2);
        wgt_release(b);
        return v;
    }
    return operand(ctx, dt, n, shape, seed);
}

TEST_BACKENDS(einsum_matches_float64_reference) {
    static const einsum_case cases[] = {
        {"ij,jk->ik", 2, {2, 2}, {{5, 7}, {7, 3}}, {0, 0}},
        {"ij,jk->ik", 2, {2, 2}, {{5, 7}, {7, 3}}, {1, 2}},
        {"ij,kj->ik", 2, {2, 2}, {{6, 9}, {4, 9}}, {2, 1}},
        {"bij,bjk->bik", 2, {3, 3}, {{3, 4, 5}, {3, 5, 2}}, {0, 1}},
        {"bij,bjk->kbi", 2, {3, 3}, {{3, 4, 5}, {3, 5, 2}}, {1, 0}},
        {"ii->i", 1, {2}, {{4, 4}}, {0}},
        {"ii->", 1, {2}, {{5, 5}}, {1}},
        {"iij->ji", 1, {3}, {{3, 3, 2}}, {0}},
        {"ij->ji", 1, {2}, {{3, 5}}, {2}},
        {"ijk->j", 1, {3}, {{3, 5, 2}}, {1}},
        {"ij,ij->", 2, {2, 2}, {{3, 4}, {3, 4}}, {0, 1}},
        {"i,j->ij", 2, {1, 1}, {{3}, {4}}, {0, 2}},
        {"ijk,jl,lk->i", 3, {3, 2, 2}, {{2, 3, 4}, {3, 5}, {5, 4}}, {0, 1, 0}},
        {"i,i,i->", 3, {1, 1, 1}, {{7}, {7}, {7}}, {0, 2, 0}},
        {"ij,jk->ik", 2, {2, 2}, {{0, 3}, {3, 2}}, {0, 0}},
        {"ij,jk->ik", 2, {2, 2}, {{2, 0}, {0, 3}}, {0, 0}},
        {"ij,jk->ijk", 2, {2, 2}, {{2, 3}, {3, 4}}, {0, 0}},
        {"abc,cd->dba", 2, {3, 2}, {{2, 3, 5}, {5, 2}}, {2, 1}},
    };
    static const wgt_dtype dts[2] = {WGT_F32, WGT_F16};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int di = 0; di < 2; di++) {
            const einsum_case *e = &cases[c];
            wgt_tensor *t[3] = {0};
            for (int o = 0; o < e->nops; o++)
                t[o] = laid_out(ctx, dts[di], e->nd[o], e->shape[o], e->layout[o], 100 * c + 10 * di + o);
            spec in[3], out;
            CHECK(specs_of(e->subs, e->nops, t, in, &out));
            wgt_tensor *got = wgt_einsum(e->subs, e->nops, t);
            compare(e->subs, got, dts[di], e->nops, t, in, &out);
            wgt_release(got);
            for (int o = 0; o < e->nops; o++) wgt_release(t[o]);
        }
}

/* Implicit outputs and "...": the reference's labels are written out by hand. */
TEST_BACKENDS(einsum_implicit_and_ellipsis) {
    int64_t s23[2] = {2, 3}, s34[2] = {3, 4}, s53[2] = {5, 3};
    wgt_tensor *a = operand(ctx, WGT_F32, 2, s23, 1), *b = operand(ctx, WGT_F32, 2, s34, 2);
    wgt_tensor *c = operand(ctx, WGT_F32, 2, s53, 3);
    wgt_tensor *ab[2] = {a, b};
    spec in[3] = {{2, {'i', 'j'}, {2, 3}}, {2, {'j', 'k'}, {3, 4}}}, out = {2, {'i', 'k'}, {2, 4}};
    wgt_tensor *got = wgt_einsum("ij,jk", 2, ab);
    compare("ij,jk (implicit ik)", got, WGT_F32, 2, ab, in, &out);
    wgt_release(got);
    /* Implicit order is alphabetical: "ba" is the transpose. */
    spec tin = {2, {'b', 'a'}, {5, 3}}, tout = {2, {'a', 'b'}, {3, 5}};
    got = wgt_einsum("ba", 1, &c);
    compare("ba (implicit ab)", got, WGT_F32, 1, &c, &tin, &tout);
    wgt_release(got);
    /* "..." broadcasts [2, 1] against [5]: batch [2, 5]; label 'x' and 'y' stand for them. */
    int64_t sa[4] = {2, 1, 3, 4}, sb[3] = {5, 4, 2};
    wgt_tensor *ea = operand(ctx, WGT_F32, 4, sa, 4), *eb = operand(ctx, WGT_F32, 3, sb, 5);
    wgt_tensor *e2[2] = {ea, eb};
    spec ein[2] = {{4, {'x', 'y', 'i', 'j'}, {2, 1, 3, 4}}, {3, {'y', 'j', 'k'}, {5, 4, 2}}};
    spec eout = {4, {'x', 'y', 'i', 'k'}, {2, 5, 3, 2}};
    got = wgt_einsum("...ij,...jk->...ik", 2, e2);
    compare("...ij,...jk->...ik", got, WGT_F32, 2, e2, ein, &eout);
    wgt_release(got);
    got = wgt_einsum("...ij,...jk", 2, e2); /* implicit: "..." first, then i, k */
    compare("...ij,...jk (implicit)", got, WGT_F32, 2, e2, ein, &eout);
    wgt_release(got);
    /* "..." left out of the output sums over it. */
    spec sout = {1, {'i'}, {3}};
    spec sin1 = {4, {'x', 'y', 'i', 'j'}, {2, 1, 3, 4}};
    got = wgt_einsum("...ij->i", 1, &ea);
    compare("...ij->i", got, WGT_F32, 1, &ea, &sin1, &sout);
    wgt_release(got);
    wgt_release(a);
    wgt_release(b);
    wgt_release(c);
    wgt_release(ea);
    wgt_release(eb);
}

TEST_BACKENDS(tensordot_vecdot_outer_match_reference) {
    int64_t sa[3] = {3, 4, 5}, sb[3] = {5, 4, 2};
    wgt_tensor *a = laid_out(ctx, WGT_F32, 3, sa, 1, 11), *b = laid_out(ctx, WGT_F32, 3, sb, 2, 12);
    wgt_tensor *ab[2] = {a, b};
    /* axes as pairs: a's 1, 2 with b's 1, 0 */
    int xa[2] = {1, -1}, xb[2] = {1, 0};
    spec in[2] = {{3, {'i', 'j', 'k'}, {3, 4, 5}}, {3, {'k', 'j', 'l'}, {5, 4, 2}}}, out = {2, {'i', 'l'}, {3, 2}};
    wgt_tensor *got = wgt_tensordot(a, b, 2, xa, xb);
    compare("tensordot pairs", got, WGT_F32, 2, ab, in, &out);
    wgt_release(got);
    /* axes as an int: the last 1 of a with the first 1 of b (5 with 5) */
    spec out1 = {4, {'i', 'j', 'm', 'l'}, {3, 4, 4, 2}};
    spec in1[2] = {{3, {'i', 'j', 'k'}, {3, 4, 5}}, {3, {'k', 'm', 'l'}, {5, 4, 2}}};
    got = wgt_tensordot(a, b, 1, NULL, NULL);
    compare("tensordot int 1", got, WGT_F32, 2, ab, in1, &out1);
    wgt_release(got);
    /* 0 axes: the outer product of all elements */
    spec in0[2] = {{3, {'i', 'j', 'k'}, {3, 4, 5}}, {3, {'p', 'q', 'r'}, {5, 4, 2}}};
    spec out0 = {6, {'i', 'j', 'k', 'p', 'q', 'r'}, {3, 4, 5, 5, 4, 2}};
    got = wgt_tensordot(a, b, 0, NULL, NULL);
    compare("tensordot int 0", got, WGT_F32, 2, ab, in0, &out0);
    wgt_release(got);

    /* vecdot broadcasts [3, 1, 5] with [4, 5] along the last axis, and along axis 0. */
    int64_t sv[3] = {3, 1, 5}, sw[2] = {4, 5};
    wgt_tensor *v = laid_out(ctx, WGT_F32, 3, sv, 2, 13), *w = operand(ctx, WGT_F32, 2, sw, 14);
    wgt_tensor *vw[2] = {v, w};
    spec vin[2] = {{3, {'a', 'b', 'k'}, {3, 1, 5}}, {2, {'b', 'k'}, {4, 5}}}, vout = {2, {'a', 'b'}, {3, 4}};
    got = wgt_vecdot(v, w, -1);
    compare("vecdot axis -1", got, WGT_F32, 2, vw, vin, &vout);
    wgt_release(got);
    int64_t sp[2] = {6, 3}, sq[2] = {6, 1};
    wgt_tensor *p = operand(ctx, WGT_F32, 2, sp, 15), *q = operand(ctx, WGT_F32, 2, sq, 16);
    wgt_tensor *pq[2] = {p, q};
    spec pin[2] = {{2, {'k', 'a'}, {6, 3}}, {2, {'k', 'a'}, {6, 1}}}, pout = {1, {'a'}, {3}};
    got = wgt_vecdot(p, q, 0);
    compare("vecdot axis 0", got, WGT_F32, 2, pq, pin, &pout);
    wgt_release(got);

    int64_t s7[1] = {7}, s3[1] = {3};
    wgt_tensor *x = laid_out(ctx, WGT_F32, 1, s7, 2, 17), *y = operand(ctx, WGT_F32, 1, s3, 18);
    wgt_tensor *xy[2] = {x, y};
    spec oin[2] = {{1, {'i'}, {7}}, {1, {'j'}, {3}}}, oout = {2, {'i', 'j'}, {7, 3}};
    got = wgt_outer(x, y);
    compare("outer", got, WGT_F32, 2, xy, oin, &oout);
    wgt_release(got);
    wgt_tensor *rel[] = {a, b, v, w, p, q, x, y};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) wgt_release(rel[i]);
}

TEST_BACKENDS(contraction_errors) {
    int64_t s23[2] = {2, 3}, s34[2] = {3, 4}, s3[1] = {3};
    wgt_tensor *a = operand(ctx, WGT_F32, 2, s23, 1), *b = operand(ctx, WGT_F32, 2, s34, 2);
    wgt_tensor *h = operand(ctx, WGT_F16, 2, s34, 3), *v = operand(ctx, WGT_F32, 1, s3, 4);
    wgt_tensor *ii = wgt_zeros(ctx, WGT_I32, 2, s34);
    wgt_tensor *ab[2] = {a, b}, *ah[2] = {a, h}, *ai[2] = {ii, b};
    CHECK_ERROR(!wgt_einsum("ij,j2->i", 2, ab), WGT_ERR_INVALID_ARGUMENT, "'2'");
    CHECK_ERROR(!wgt_einsum("ij,jk->ik", 1, ab), WGT_ERR_INVALID_ARGUMENT, "names 2 operands but 1");
    CHECK_ERROR(!wgt_einsum("ij,ik->jk", 2, ab), WGT_ERR_SHAPE, "subscript 'i' has length 2 in operand 0 but 3");
    CHECK_ERROR(!wgt_einsum("ijk,jk->ik", 2, ab), WGT_ERR_SHAPE, "operand 0 [2, 3] has 2 dimensions");
    CHECK_ERROR(!wgt_einsum("ij,jk->iz", 2, ab), WGT_ERR_INVALID_ARGUMENT, "'z'");
    CHECK_ERROR(!wgt_einsum("ij,jk->ii", 2, ab), WGT_ERR_INVALID_ARGUMENT, "repeats");
    CHECK_ERROR(!wgt_einsum("ii->i", 1, &a), WGT_ERR_SHAPE, "lengths 2 and 3");
    CHECK_ERROR(!wgt_einsum("i..j,jk->ik", 2, ab), WGT_ERR_INVALID_ARGUMENT, "'...'");
    CHECK_ERROR(!wgt_einsum("ij,jk->ik->i", 2, ab), WGT_ERR_INVALID_ARGUMENT, "more than one");
    CHECK_ERROR(!wgt_einsum(NULL, 2, ab), WGT_ERR_INVALID_ARGUMENT, "subscripts NULL");
    CHECK_ERROR(!wgt_einsum("ij,jk->ik", 2, ah), WGT_ERR_DTYPE, "differ");
    CHECK_ERROR(!wgt_einsum("ij,jk->ik", 2, ai), WGT_ERR_DTYPE, "i32");
    int xa[1] = {1}, xb[1] = {1}, xr[2] = {0, 0}, xr2[2] = {0, 1};
    CHECK_ERROR(!wgt_tensordot(a, b, 1, xa, xb), WGT_ERR_SHAPE, "axis 1 of a [2, 3] has length 3 but axis 1 of b [3, 4] has 4");
    int big[1] = {5};
    CHECK_ERROR(!wgt_tensordot(a, b, 1, big, xb), WGT_ERR_SHAPE, "out of range");
    CHECK_ERROR(!wgt_tensordot(a, a, 2, xr, xr2), WGT_ERR_SHAPE, "repeats");
    CHECK_ERROR(!wgt_tensordot(a, b, 3, NULL, NULL), WGT_ERR_SHAPE, "cannot contract 3 axes");
    CHECK_ERROR(!wgt_tensordot(a, b, 1, xa, NULL), WGT_ERR_INVALID_ARGUMENT, "both");
    CHECK_ERROR(!wgt_vecdot(a, b, -1), WGT_ERR_SHAPE, "broadcast");
    CHECK_ERROR(!wgt_vecdot(a, v, 0), WGT_ERR_SHAPE, "axis 0");
    CHECK_ERROR(!wgt_outer(a, v), WGT_ERR_SHAPE, "two vectors");
    wgt_release(a);
    wgt_release(b);
    wgt_release(h);
    wgt_release(v);
    wgt_release(ii);
}

/* ---- gradients against finite differences -------------------------------------------- */

static wgt_tensor *g_tensordot(wgt_tensor *const *x) {
    int xa[2] = {1, -1}, xb[2] = {1, 0};
    return wgt_tensordot(x[0], x[1], 2, xa, xb);
}
static wgt_tensor *g_tensordot_int(wgt_tensor *const *x) { return wgt_tensordot(x[0], x[1], 1, NULL, NULL); }
static wgt_tensor *g_vecdot(wgt_tensor *const *x) { return wgt_vecdot(x[0], x[1], -1); }
static wgt_tensor *g_outer(wgt_tensor *const *x) { return wgt_outer(x[0], x[1]); }
static wgt_tensor *g_einsum_mm(wgt_tensor *const *x) { return wgt_einsum("bij,jk->kbi", 2, x); }
static wgt_tensor *g_einsum_sum(wgt_tensor *const *x) { return wgt_einsum("ijk,j->k", 2, x); }
static wgt_tensor *g_einsum_ell(wgt_tensor *const *x) { return wgt_einsum("...ij,...j->...i", 2, x); }
static wgt_tensor *g_einsum_one(wgt_tensor *const *x) { return wgt_einsum("ijk->ki", 1, x); }

TEST_BACKENDS(contraction_gradients) {
    const gc_case cases[] = {
        {"tensordot pairs", g_tensordot, 2, {{3, {3, 4, 5}, -1, 1, GC_TRANSPOSED}, {3, {5, 4, 2}, -1, 1, GC_STEPPED}}},
        {"tensordot int", g_tensordot_int, 2, {{2, {3, 4}, -1, 1}, {2, {4, 5}, -1, 1, GC_TRANSPOSED}}},
        {"vecdot broadcast", g_vecdot, 2, {{3, {3, 1, 5}, -1, 1}, {2, {4, 5}, -1, 1, GC_TRANSPOSED}}},
        {"outer", g_outer, 2, {{1, {5}, -1, 1}, {1, {3}, -1, 1, GC_STEPPED}}},
        {"einsum bij,jk->kbi", g_einsum_mm, 2, {{3, {2, 3, 4}, -1, 1, GC_STEPPED}, {2, {4, 3}, -1, 1}}},
        {"einsum summed labels", g_einsum_sum, 2, {{3, {2, 3, 4}, -1, 1}, {1, {3}, -1, 1}}},
        {"einsum ellipsis", g_einsum_ell, 2, {{3, {2, 3, 4}, -1, 1}, {2, {1, 4}, -1, 1}}},
        {"einsum one operand", g_einsum_one, 1, {{3, {2, 3, 4}, -1, 1, GC_TRANSPOSED}}},
        {"einsum f16", g_einsum_mm, 2, {{3, {2, 3, 4}, -1, 1, GC_PLAIN, WGT_F16}, {2, {4, 3}, -1, 1, GC_PLAIN, WGT_F16}}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) gradcheck(ctx, &cases[c]);
}

/* A repeated subscript (a diagonal) and three operands have no gradient: backward says so. */
TEST_BACKENDS(einsum_without_gradient_says_why) {
    int64_t s33[2] = {3, 3}, s3[1] = {3};
    wgt_tensor *a = wgt_rand_uniform(ctx, WGT_F32, 2, s33, -1, 1, 1), *v = wgt_rand_uniform(ctx, WGT_F32, 1, s3, -1, 1, 2);
    CHECK(wgt_requires_grad(a, 1) == WGT_OK && wgt_requires_grad(v, 1) == WGT_OK);
    wgt_tensor *d = wgt_einsum("ii->", 1, &a), *ops[3] = {v, v, v}, *t = wgt_einsum("i,i,i->", 3, ops);
    CHECK(d && t, "%s", wgt_last_error());
    CHECK_ERROR(wgt_backward(d, NULL) != WGT_OK, WGT_ERR_USAGE, "diagonal");
    CHECK_ERROR(wgt_backward(t, NULL) != WGT_OK, WGT_ERR_USAGE, "two operands");
    wgt_release(d);
    wgt_release(t);
    wgt_release(a);
    wgt_release(v);
}
