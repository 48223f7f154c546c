/*
 * Tests of take, take_along_axis, scatter and index_add (src/core/scatter.c) and of the
 * scatter-add kernel behind them and behind gather gradients. Each result is compared with a
 * reference computed here from the values written: exactly for the ops that move values,
 * and for the sums of repeated indices against the float64 sum rounded to f32 (within one
 * ulp), on data where summing in f32 strays by many ulps, so a plain f32 accumulation
 * fails. Inputs come as contiguous, transposed, sliced and broadcast views, indices as i32
 * and u32 of several ranks, some empty; outputs are poisoned in the runner's poisoned pass.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"
#include "gradcheck.h"

/* f32 tensor with values k - 40 for k = 0, 1, ... times 0.5 (exact in f32 and in any sum here). */
static wgt_tensor *ramp(wgt_context *ctx, int ndim, const int64_t *shape, double scale) {
    int64_t n = numel_of(ndim, shape);
    float *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    for (int64_t i = 0; v && i < n; i++) v[i] = (float)((double)((i * 37) % 101 - 40) * scale);
    wgt_tensor *t = v ? wgt_tensor_from_data(ctx, WGT_F32, ndim, shape, v, sizeof *v * (size_t)n, WGT_USAGE_DEFAULT)
                      : NULL;
    free(v);
    return t;
}

static wgt_tensor *index_tensor(wgt_context *ctx, wgt_dtype dt, int ndim, const int64_t *shape, const int64_t *v) {
    int64_t n = numel_of(ndim, shape);
    uint32_t *buf = malloc((size_t)(n ? n : 1) * 4);
    for (int64_t i = 0; buf && i < n; i++) buf[i] = (uint32_t)v[i];
    wgt_tensor *t = buf ? wgt_tensor_from_data(ctx, dt, ndim, shape, buf, (size_t)n * 4, WGT_USAGE_DEFAULT) : NULL;
    free(buf);
    return t;
}

/* take along every axis of a 3-D tensor (contiguous and transposed), with 2-D and empty
 * indices of both index types, against numpy.take's definition. */
TEST_BACKENDS(scatter_take_every_axis) {
    int64_t shape[3] = {3, 4, 5};
    wgt_tensor *base = ramp(ctx, 3, shape, 1.0);
    wgt_tensor *tr = wgt_transpose(base, 0, 2); /* [5, 4, 3] */
    wgt_tensor *views[2] = {base, tr};
    for (int v = 0; v < 2; v++) {
        wgt_tensor *a = views[v];
        int64_t as[3];
        for (int d = 0; d < 3; d++) as[d] = wgt_tensor_shape(a)[d];
        double *av = test_read_f64(a);
        for (int ax = 0; ax < 3; ax++)
            for (int it = 0; it < 2; it++)
                for (int empty = 0; empty < 2; empty++) {
                    int64_t ishape[2] = {2, empty ? 0 : 3}, iv[6];
                    for (int k = 0; k < 6; k++) iv[k] = (k * 5 + 1) % as[ax];
                    wgt_tensor *idx = index_tensor(ctx, it ? WGT_U32 : WGT_I32, 2, ishape, iv);
                    wgt_tensor *out = wgt_take(a, idx, ax - 3 * (ax == 2)); /* a negative axis too */
                    int64_t oshape[4], on = 0;
                    for (int d = 0, k = 0; d < 3; d++) {
                        if (d == ax) oshape[k++] = ishape[0], oshape[k++] = ishape[1];
                        else oshape[k++] = as[d];
                    }
                    on = numel_of(4, oshape);
                    double *want = malloc((size_t)(on ? on : 1) * sizeof *want);
                    for (int64_t i = 0; want && av && i < on; i++) {
                        int64_t o[4], src[3];
                        coords(4, oshape, i, o);
                        for (int d = 0, k = 0; d < 3; d++) {
                            if (d == ax) src[d] = iv[o[k] * ishape[1] + o[k + 1]], k += 2;
                            else src[d] = o[k++];
                        }
                        want[i] = av[flat_of(3, as, src)];
                    }
                    char what[96];
                    snprintf(what, sizeof what, "take view %d axis %d %s%s", v, ax, it ? "u32" : "i32",
                             empty ? " empty" : "");
                    CHECK(!out || wgt_tensor_ndim(out) == 4, "%s: rank", what);
                    if (want) check_exact(out, want, on, what);
                    free(want);
                    wgt_release(out);
                    wgt_release(idx);
                }
        free(av);
    }
    wgt_release(tr);
    wgt_release(base);
}

/* take_along_axis with indices of a's shape, broadcast indices and a broadcast a. */
TEST_BACKENDS(scatter_take_along_axis_broadcasts) {
    int64_t shape[3] = {3, 4, 5};
    wgt_tensor *a = ramp(ctx, 3, shape, 0.5);
    double *av = test_read_f64(a);
    struct { int ax; int64_t ishape[3]; } cases[] = {{1, {3, 6, 5}}, {1, {1, 2, 5}}, {2, {3, 1, 7}}, {0, {2, 4, 1}},
                                                     {1, {3, 0, 5}}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        int ax = cases[c].ax;
        const int64_t *is = cases[c].ishape;
        int64_t n = numel_of(3, is), *iv = malloc((size_t)(n ? n : 1) * sizeof *iv);
        for (int64_t i = 0; i < n; i++) iv[i] = (i * 7 + 3) % shape[ax];
        wgt_tensor *idx = index_tensor(ctx, c % 2 ? WGT_U32 : WGT_I32, 3, is, iv);
        wgt_tensor *out = wgt_take_along_axis(a, idx, ax);
        int64_t os[3];
        for (int d = 0; d < 3; d++) os[d] = d == ax ? is[d] : (shape[d] == 1 ? is[d] : shape[d]);
        int64_t on = numel_of(3, os);
        double *want = malloc((size_t)(on ? on : 1) * sizeof *want);
        for (int64_t i = 0; av && i < on; i++) {
            int64_t o[3], ia[3], src[3];
            coords(3, os, i, o);
            for (int d = 0; d < 3; d++) ia[d] = is[d] == 1 ? 0 : o[d];
            memcpy(src, o, sizeof src);
            src[ax] = iv[flat_of(3, is, ia)];
            want[i] = av[flat_of(3, shape, src)];
        }
        char what[64];
        snprintf(what, sizeof what, "take_along_axis case %zu", c);
        check_exact(out, want, on, what);
        free(want), free(iv);
        wgt_release(out), wgt_release(idx);
    }
    free(av);
    wgt_release(a);
}

/* scatter replace (the last write wins) and add, along both axes, from a transposed base,
 * a scalar src and an i32 base, against a sequential reference. */
TEST_BACKENDS(scatter_replace_and_add_modes) {
    int64_t bshape[2] = {4, 6};
    wgt_tensor *b0 = ramp(ctx, 2, (int64_t[]){6, 4}, 1.0), *base = wgt_transpose(b0, 0, 1);
    double *bv = test_read_f64(base);
    for (int ax = 0; ax < 2; ax++)
        for (int mode = 0; mode < 2; mode++)
            for (int scalar = 0; scalar < 2; scalar++) {
                int64_t is[2] = {ax == 0 ? 5 : 3, ax == 0 ? 4 : 6}; /* 5 > 4 rows: repeats */
                int64_t n = numel_of(2, is), iv[30];
                for (int64_t i = 0; i < n; i++) iv[i] = (i * 3 + i / 4) % bshape[ax];
                wgt_tensor *idx = index_tensor(ctx, WGT_I32, 2, is, iv);
                wgt_tensor *src = scalar ? wgt_scalar(ctx, WGT_F32, 2.5) : ramp(ctx, 2, is, 0.25);
                double *sv = test_read_f64(src);
                wgt_tensor *out = wgt_scatter(base, ax, idx, src, mode ? WGT_SCATTER_ADD : WGT_SCATTER_REPLACE);
                double want[24];
                memcpy(want, bv, sizeof want);
                for (int64_t i = 0; sv && i < n; i++) {
                    int64_t at[2];
                    coords(2, is, i, at);
                    at[ax] = iv[i];
                    double x = sv[scalar ? 0 : i];
                    if (mode) want[flat_of(2, bshape, at)] += x;
                    else want[flat_of(2, bshape, at)] = x;
                }
                char what[64];
                snprintf(what, sizeof what, "scatter axis %d %s%s", ax, mode ? "add" : "replace",
                         scalar ? " scalar" : "");
                check_exact(out, want, 24, what);
                free(sv);
                wgt_release(out), wgt_release(src), wgt_release(idx);
            }
    /* The base is untouched; an i32 base takes replace; an empty index copies. */
    check_exact(base, bv, 24, "base after scatters");
    wgt_tensor *ib = wgt_cast(base, WGT_I32), *idx = index_tensor(ctx, WGT_U32, 2, (int64_t[]){1, 2}, (int64_t[]){5, 0});
    wgt_tensor *seven = wgt_scalar(ctx, WGT_I32, 7), *out = wgt_scatter(ib, 1, idx, seven, WGT_SCATTER_REPLACE);
    double want[24];
    memcpy(want, bv, sizeof want);
    want[5] = 7, want[0] = 7; /* (0, 0) goes to column 5, (0, 1) to column 0 */
    check_exact(out, want, 24, "i32 replace");
    wgt_tensor *none = index_tensor(ctx, WGT_I32, 2, (int64_t[]){0, 6}, NULL);
    wgt_tensor *copy = wgt_scatter(base, 0, none, seven, WGT_SCATTER_REPLACE);
    CHECK(!copy, "an i32 src into an f32 base is refused");
    wgt_tensor *f = wgt_scalar(ctx, WGT_F32, 1), *copy2 = wgt_scatter(base, 0, none, f, WGT_SCATTER_ADD);
    check_exact(copy2, bv, 24, "empty index");
    wgt_release(copy2), wgt_release(f), wgt_release(none);
    wgt_release(out), wgt_release(seven), wgt_release(idx), wgt_release(ib);
    free(bv);
    wgt_release(base), wgt_release(b0);
}

/* Units in the last place between two floats (0 when equal). */
static int64_t ulps(float a, float b) {
    int32_t x, y;
    memcpy(&x, &a, 4), memcpy(&y, &b, 4);
    if (x < 0) x = INT32_MIN - x;
    if (y < 0) y = INT32_MIN - y;
    return llabs((long long)x - y);
}

/* 6000 rows added into 7, most of them into row 3, of mixed magnitudes: the float64 sum
 * rounded once (within one ulp), where summing in f32 strays by many; along axis 0 of a
 * contiguous a and along axis 1 of a transposed one. */
TEST_BACKENDS(scatter_index_add_repeats_sum_exactly) {
    enum { N = 7, R = 5, M = 6000 };
    uint64_t seed = 42;
    int32_t *iv = malloc(sizeof *iv * M);
    float *sv = malloc(sizeof *sv * M * R), bv[N * R];
    for (int i = 0; i < M; i++) iv[i] = next_u64(&seed) % 10 < 9 ? 3 : (int32_t)(next_u64(&seed) % N);
    for (int i = 0; i < M * R; i++) {
        uint64_t r = next_u64(&seed);
        double mag = (r & 1) ? 4096.0 : 1.0 / 1024;
        sv[i] = (float)(mag * ((double)(r >> 11) / 9007199254740992.0 + 0.1));
    }
    for (int i = 0; i < N * R; i++) bv[i] = (float)(i % 9) * 0.3f;
    double want[N * R];
    float naive[N * R];
    for (int i = 0; i < N * R; i++) want[i] = bv[i], naive[i] = bv[i];
    for (int i = 0; i < M; i++)
        for (int k = 0; k < R; k++) want[iv[i] * R + k] += sv[i * R + k], naive[iv[i] * R + k] += sv[i * R + k];
    int64_t worst_naive = 0;
    for (int i = 0; i < N * R; i++) {
        int64_t u = ulps(naive[i], (float)want[i]);
        if (u > worst_naive) worst_naive = u;
    }
    CHECK(worst_naive > 8, "the data must tell an f32 sum apart: it is off by %lld ulps only", (long long)worst_naive);
    wgt_tensor *idx = wgt_tensor_from_data(ctx, WGT_I32, 1, (int64_t[]){M}, iv, sizeof *iv * M, WGT_USAGE_DEFAULT);
    for (int layout = 0; layout < 2; layout++) {
        wgt_tensor *a, *src, *out;
        if (!layout) {
            a = wgt_tensor_from_data(ctx, WGT_F32, 2, (int64_t[]){N, R}, bv, sizeof bv, WGT_USAGE_DEFAULT);
            src = wgt_tensor_from_data(ctx, WGT_F32, 2, (int64_t[]){M, R}, sv, sizeof *sv * M * R, WGT_USAGE_DEFAULT);
            out = wgt_index_add(a, 0, idx, src);
        } else { /* the same sums with the axis last, through transposed views */
            wgt_tensor *a0 = wgt_tensor_from_data(ctx, WGT_F32, 2, (int64_t[]){N, R}, bv, sizeof bv, WGT_USAGE_DEFAULT);
            wgt_tensor *s0 = wgt_tensor_from_data(ctx, WGT_F32, 2, (int64_t[]){M, R}, sv, sizeof *sv * M * R,
                                                  WGT_USAGE_DEFAULT);
            a = wgt_transpose(a0, 0, 1), src = wgt_transpose(s0, 0, 1);
            wgt_tensor *t = wgt_index_add(a, 1, idx, src);
            out = t ? wgt_transpose(t, 0, 1) : NULL;
            wgt_release(t), wgt_release(a0), wgt_release(s0);
        }
        float got[N * R];
        CHECK(out && wgt_tensor_read(out, got, sizeof got) == WGT_OK, "layout %d: %s", layout, wgt_last_error());
        int bad = 0;
        for (int i = 0; out && i < N * R && bad < 3; i++)
            if (ulps(got[i], (float)want[i]) > 1) {
                bad++;
                CHECK(0, "layout %d element %d: %.9g, the float64 sum is %.17g (%lld ulps off)", layout, i, got[i],
                      want[i], (long long)ulps(got[i], (float)want[i]));
            }
        wgt_release(out), wgt_release(a), wgt_release(src);
    }
    /* wgt_scatter's add mode sums the same way. */
    wgt_tensor *a = wgt_tensor_from_data(ctx, WGT_F32, 2, (int64_t[]){N, R}, bv, sizeof bv, WGT_USAGE_DEFAULT);
    int64_t *ev = malloc(sizeof *ev * M * R);
    for (int i = 0; i < M * R; i++) ev[i] = iv[i / R];
    wgt_tensor *eidx = index_tensor(ctx, WGT_U32, 2, (int64_t[]){M, R}, ev);
    wgt_tensor *src = wgt_tensor_from_data(ctx, WGT_F32, 2, (int64_t[]){M, R}, sv, sizeof *sv * M * R, WGT_USAGE_DEFAULT);
    wgt_tensor *out = wgt_scatter(a, 0, eidx, src, WGT_SCATTER_ADD);
    float got[N * R];
    CHECK(out && wgt_tensor_read(out, got, sizeof got) == WGT_OK, "scatter add: %s", wgt_last_error());
    for (int i = 0; out && i < N * R; i++)
        CHECK(ulps(got[i], (float)want[i]) <= 1, "scatter add element %d: %.9g, wanted %.17g", i, got[i], want[i]);
    wgt_release(out), wgt_release(src), wgt_release(eidx), wgt_release(a), wgt_release(idx);
    free(ev), free(iv), free(sv);
}

TEST_BACKENDS(scatter_errors_name_the_problem) {
    wgt_tensor *a = wgt_ones(ctx, WGT_F32, 2, (int64_t[]){3, 4}), *ia = wgt_ones(ctx, WGT_I32, 2, (int64_t[]){3, 4});
    wgt_tensor *neg = index_tensor(ctx, WGT_I32, 2, (int64_t[]){1, 2}, (int64_t[]){0, -2});
    wgt_tensor *big = index_tensor(ctx, WGT_U32, 1, (int64_t[]){2}, (int64_t[]){1, 4});
    wgt_tensor *ok1 = index_tensor(ctx, WGT_I32, 1, (int64_t[]){2}, (int64_t[]){1, 2});
    wgt_tensor *ok2 = index_tensor(ctx, WGT_I32, 2, (int64_t[]){1, 2}, (int64_t[]){1, 2});
    wgt_tensor *fidx = wgt_zeros(ctx, WGT_F32, 2, (int64_t[]){1, 2}), *src = wgt_ones(ctx, WGT_F32, 2, (int64_t[]){1, 2});
    wgt_tensor *src3 = wgt_ones(ctx, WGT_F32, 2, (int64_t[]){1, 3}), *rows = wgt_ones(ctx, WGT_F32, 2, (int64_t[]){3, 2});
    /* take counts negative indices from the end (tests/test_take_negative.c): -5 of 4 is out. */
    wgt_tensor *neg5 = index_tensor(ctx, WGT_I32, 2, (int64_t[]){1, 2}, (int64_t[]){0, -5});
    CHECK_ERROR(!wgt_take(a, neg5, 1), WGT_ERR_INVALID_ARGUMENT,
                "wgt_take: index -5 at position [0, 1] of indices is out of range for 4 entries along axis 1 (valid: "
                "-4..3)");
    CHECK_ERROR(!wgt_take(a, big, 1), WGT_ERR_INVALID_ARGUMENT, "wgt_take: index 4 at position [1]");
    CHECK_ERROR(!wgt_take(a, ok1, 2), WGT_ERR_SHAPE, "axis 2");
    CHECK_ERROR(!wgt_take(a, fidx, 0), WGT_ERR_DTYPE, "must be i32, u32, i64 or u64, not f32");
    CHECK_ERROR(!wgt_take_along_axis(a, neg5, 1), WGT_ERR_INVALID_ARGUMENT,
                "wgt_take_along_axis: index -5 at position [0, 1]");
    CHECK_ERROR(!wgt_take_along_axis(a, ok1, 0), WGT_ERR_SHAPE, "rank 2");
    wgt_tensor *tall = index_tensor(ctx, WGT_I32, 2, (int64_t[]){2, 1}, (int64_t[]){0, 0});
    CHECK_ERROR(!wgt_take_along_axis(a, tall, 1), WGT_ERR_SHAPE, "do not broadcast with a of shape [3, 4] in dimension 0");
    CHECK_ERROR(!wgt_scatter(a, 1, neg, src, WGT_SCATTER_ADD), WGT_ERR_INVALID_ARGUMENT,
                "wgt_scatter: index -2 at position [0, 1]");
    CHECK_ERROR(!wgt_scatter(a, 1, ok2, src3, WGT_SCATTER_ADD), WGT_ERR_SHAPE, "does not broadcast to index's shape");
    CHECK_ERROR(!wgt_scatter(a, 1, ok1, src, WGT_SCATTER_ADD), WGT_ERR_SHAPE, "base's rank");
    CHECK_ERROR(!wgt_scatter(ia, 1, ok2, ia, WGT_SCATTER_ADD), WGT_ERR_DTYPE, "WGT_SCATTER_ADD takes f32");
    CHECK_ERROR(!wgt_scatter(a, 1, ok2, src, (wgt_scatter_mode)7), WGT_ERR_INVALID_ARGUMENT, "mode 7");
    CHECK_ERROR(!wgt_index_add(a, 1, big, rows), WGT_ERR_INVALID_ARGUMENT, "wgt_index_add: index 4 at position [1]");
    CHECK_ERROR(!wgt_index_add(a, 1, ok2, rows), WGT_ERR_SHAPE, "1-D");
    CHECK_ERROR(!wgt_index_add(a, 0, ok1, rows), WGT_ERR_SHAPE, "src of shape [3, 2] does not fit");
    CHECK_ERROR(!wgt_index_add(ia, 1, ok1, rows), WGT_ERR_DTYPE, "f32");
    /* Indices computed on the device are checked when they exist: the read names the value. */
    float lv[8] = {0, 0, 0, 1, 0, 0, 0, 0}; /* argmax: 3 and 0 */
    wgt_tensor *logits = wgt_tensor_from_data(ctx, WGT_F32, 2, (int64_t[]){2, 4}, lv, sizeof lv, WGT_USAGE_DEFAULT);
    wgt_tensor *am = wgt_argmax(logits, 1, 1), *ten = wgt_scalar(ctx, WGT_I32, 10), *far = wgt_add(am, ten);
    wgt_tensor *small = wgt_ones(ctx, WGT_F32, 2, (int64_t[]){2, 3});
    float out[8];
    wgt_tensor *t1 = NULL, *t2 = NULL, *one = wgt_scalar(ctx, WGT_F32, 1);
    /* Made inside the check: where the values exist by then, the call itself fails. */
    CHECK_ERROR(!(t1 = wgt_take_along_axis(small, am, 1)) || wgt_tensor_read(t1, out, 2 * sizeof *out) != WGT_OK, WGT_ERR_INVALID_ARGUMENT,
                "wgt_take_along_axis: index 3 at position [0, 0] of indices is out of range for 3 entries along the axis");
    CHECK_ERROR(!(t2 = wgt_scatter(small, 1, far, one, WGT_SCATTER_ADD)) || wgt_tensor_read(t2, out, 6 * sizeof *out) != WGT_OK, WGT_ERR_INVALID_ARGUMENT,
                "wgt_scatter: index 13 at position [0, 0]");
    wgt_tensor *all[] = {tall, neg5, a, ia, neg, big, ok1, ok2, fidx, src, src3, rows, logits, am, ten, far, small, t1, t2, one};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) wgt_release(all[i]);
}

#define V2(a, b) 2, {a, b}
#define V3(a, b, c) 3, {a, b, c}

static wgt_tensor *idx_of(wgt_tensor *like, wgt_dtype dt, int ndim, const int64_t *shape, const int32_t *v) {
    size_t n = (size_t)numel_of(ndim, shape);
    return wgt_tensor_from_data(wgt_tensor_context(like), dt, ndim, shape, v, n * 4, WGT_USAGE_DEFAULT);
}
static wgt_tensor *f_take(wgt_tensor *const *x) { /* repeats sum their gradients */
    static const int32_t v[6] = {2, 0, 2, 3, 2, 1};
    wgt_tensor *i = idx_of(x[0], WGT_I32, 2, (int64_t[]){2, 3}, v), *r = wgt_take(x[0], i, 1);
    wgt_release(i);
    return r;
}
static wgt_tensor *f_take_along(wgt_tensor *const *x) { /* indices broadcast over dimension 0 */
    static const int32_t v[6] = {3, 3, 0, 1, 1, 3};
    wgt_tensor *i = idx_of(x[0], WGT_U32, 3, (int64_t[]){1, 2, 3}, v), *r = wgt_take_along_axis(x[0], i, 1);
    wgt_release(i);
    return r;
}
static wgt_tensor *scatter_case(wgt_tensor *const *x, wgt_scatter_mode mode) { /* repeats in column 0 and 2 */
    static const int32_t v[6] = {1, 0, 3, 1, 2, 3};
    wgt_tensor *i = idx_of(x[0], WGT_I32, 2, (int64_t[]){2, 3}, v), *r = wgt_scatter(x[0], 0, i, x[1], mode);
    wgt_release(i);
    return r;
}
static wgt_tensor *f_scatter_add(wgt_tensor *const *x) { return scatter_case(x, WGT_SCATTER_ADD); }
static wgt_tensor *f_scatter_replace(wgt_tensor *const *x) { return scatter_case(x, WGT_SCATTER_REPLACE); }
static wgt_tensor *f_index_add(wgt_tensor *const *x) {
    static const int32_t v[3] = {2, 0, 2};
    wgt_tensor *i = idx_of(x[0], WGT_I32, 1, (int64_t[]){3}, v), *r = wgt_index_add(x[0], 1, i, x[1]);
    wgt_release(i);
    return r;
}

/* Gradients against finite differences (gradcheck.h); repeated indices in every case. */
TEST_BACKENDS(scatter_gradients) {
    const gc_case cases[] = {
        {"take", f_take, 1, {{V3(2, 4, 3), -1, 1, GC_PLAIN}}},
        {"take_along_axis", f_take_along, 1, {{V3(2, 4, 3), -1, 1, GC_TRANSPOSED}}},
        {"scatter add", f_scatter_add, 2, {{V2(4, 3), -1, 1, GC_TRANSPOSED}, {V2(2, 3), -1, 1, GC_PLAIN}}},
        {"scatter add broadcast src", f_scatter_add, 2, {{V2(4, 3), -1, 1, GC_PLAIN}, {1, {3}, -1, 1, GC_PLAIN}}},
        {"scatter replace", f_scatter_replace, 2, {{V2(4, 3), -1, 1, GC_PLAIN}, {V2(2, 3), -1, 1, GC_STEPPED}}},
        {"index_add", f_index_add, 2, {{V2(2, 4), -1, 1, GC_PLAIN}, {V2(2, 3), -1, 1, GC_TRANSPOSED}}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) gradcheck(ctx, &cases[i]);
}

/* index_add of values computed from graph inputs, replayed: each dispatch gives what the
 * eager op gives on its inputs (replays must not add onto the last one's sums), onto a base
 * with data and onto zeros (as gather gradients scatter). */
TEST_BACKENDS(scatter_index_add_in_a_compiled_graph) {
    int64_t bshape[2] = {5, 3}, sshape[2] = {4, 3}, ishape[1] = {4}, iv[4] = {1, 4, 1, 0};
    wgt_tensor *base = ramp(ctx, 2, bshape, 0.25), *zeros = wgt_zeros(ctx, WGT_F32, 2, bshape);
    wgt_tensor *idx = index_tensor(ctx, WGT_I32, 1, ishape, iv);
    wgt_tensor *in = wgt_graph_input(ctx, "src", WGT_F32, 2, sshape);
    wgt_tensor *onto_base = wgt_index_add(base, 0, idx, in), *onto_zeros = wgt_index_add(zeros, 0, idx, in);
    CHECK(onto_base && onto_zeros, "recording: %s", wgt_last_error());
    wgt_binding outs[2] = {{"onto_base", onto_base}, {"onto_zeros", onto_zeros}};
    wgt_graph *g = onto_base && onto_zeros ? wgt_graph_build(ctx, 2, outs) : NULL;
    CHECK(g != NULL, "wgt_graph_build: %s", wgt_last_error());
    for (int run = 0; g && run < 3; run++) {
        wgt_tensor *src = ramp(ctx, 2, sshape, 1.0 + run), *want_base = wgt_index_add(base, 0, idx, src);
        wgt_tensor *want_zeros = wgt_index_add(zeros, 0, idx, src);
        wgt_tensor *got_base = wgt_zeros(ctx, WGT_F32, 2, bshape), *got_zeros = wgt_zeros(ctx, WGT_F32, 2, bshape);
        wgt_binding ins[1] = {{"src", src}}, bound[2] = {{"onto_base", got_base}, {"onto_zeros", got_zeros}};
        CHECK(wgt_graph_dispatch(g, 1, ins, 2, bound) == WGT_OK, "dispatch %d: %s", run, wgt_last_error());
        double *gb = test_read_f64(got_base), *wb = test_read_f64(want_base);
        double *gz = test_read_f64(got_zeros), *wz = test_read_f64(want_zeros);
        for (int i = 0; gb && wb && gz && wz && i < 15; i++) {
            CHECK(fabs(gb[i] - wb[i]) <= 1e-6 * (1 + fabs(wb[i])), "dispatch %d onto base, element %d: %g, want %g", run,
                  i, gb[i], wb[i]);
            CHECK(gz[i] == wz[i], "dispatch %d onto zeros, element %d: %g, want %g", run, i, gz[i], wz[i]);
        }
        free(gb), free(wb), free(gz), free(wz);
        wgt_tensor *all[] = {src, want_base, want_zeros, got_base, got_zeros};
        for (int k = 0; k < 5; k++) wgt_release(all[k]);
    }
    wgt_graph_release(g);
    wgt_tensor *all[] = {base, zeros, idx, in, onto_base, onto_zeros};
    for (int k = 0; k < 6; k++) wgt_release(all[k]);
}
