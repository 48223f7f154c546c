/*
 * Predicates give bool, and the narrow integers compute. Every comparison, logical op and
 * float test is checked against C's own double predicates on every input type (NaN, -0 and
 * infinities among the values), on contiguous, transposed, broadcast and empty operands; in
 * fused chains and a compiled graph; and i8/u8/i16/u16 arithmetic and reductions against
 * int64 references wrapped to the type, so wrap-around is checked exactly on both backends.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

static const wgt_dtype all_types[] = {WGT_F32, WGT_F16, WGT_BF16, WGT_I32, WGT_U32,
                                      WGT_I8,  WGT_U8,  WGT_I16,  WGT_U16, WGT_BOOL};
#define NTYPES (int)(sizeof all_types / sizeof all_types[0])

static int is_float_type(wgt_dtype d) { return d == WGT_F32 || d == WGT_F16 || d == WGT_BF16; }

/* The stored bytes of v[i] in dtype d (v already in the type's range). */
static wgt_tensor *make(wgt_context *ctx, wgt_dtype d, int ndim, const int64_t *shape, const double *v) {
    int64_t n = 1;
    for (int k = 0; k < ndim; k++) n *= shape[k];
    size_t es = wgt_dtype_size(d);
    unsigned char *buf = calloc((size_t)(n ? n : 1), es);
    for (int64_t i = 0; buf && i < n; i++) {
        unsigned char *p = buf + (size_t)i * es;
        switch (d) {
        case WGT_F32: { float f = (float)v[i]; memcpy(p, &f, 4); break; }
        case WGT_F16: { uint16_t h = wgt_f32_to_f16((float)v[i]); memcpy(p, &h, 2); break; }
        case WGT_BF16: { uint16_t h = wgt_f32_to_bf16((float)v[i]); memcpy(p, &h, 2); break; }
        case WGT_I32: { int32_t x = (int32_t)v[i]; memcpy(p, &x, 4); break; }
        case WGT_U32: { uint32_t x = (uint32_t)v[i]; memcpy(p, &x, 4); break; }
        case WGT_I16: { int16_t x = (int16_t)v[i]; memcpy(p, &x, 2); break; }
        case WGT_U16: { uint16_t x = (uint16_t)v[i]; memcpy(p, &x, 2); break; }
        case WGT_I8: { int8_t x = (int8_t)v[i]; memcpy(p, &x, 1); break; }
        case WGT_U8: { uint8_t x = (uint8_t)v[i]; memcpy(p, &x, 1); break; }
        case WGT_BOOL: *p = v[i] != 0; break;
        default: break;
        }
    }
    wgt_tensor *t = buf ? wgt_tensor_from_data(ctx, d, ndim, shape, buf, (size_t)n * es, WGT_USAGE_DEFAULT) : NULL;
    free(buf);
    return t;
}

/* Twelve values of type d: the extremes, zeros of both signs, NaN and infinities for floats. */
static void sample(wgt_dtype d, double *v) {
    if (is_float_type(d)) {
        const double f[12] = {0.0, -0.0, 1.5, -2.0, NAN, -NAN, INFINITY, -INFINITY, 3.0, -3.0, 1.5, 0.25};
        memcpy(v, f, sizeof f);
        return;
    }
    if (d == WGT_BOOL) {
        for (int i = 0; i < 12; i++) v[i] = (i * 7 + i / 3) % 2;
        return;
    }
    double lo = d == WGT_I32 ? -2147483648.0 : d == WGT_I16 ? -32768 : d == WGT_I8 ? -128 : 0;
    double hi = d == WGT_I32 ? 2147483647.0 : d == WGT_U32 ? 4294967295.0 : d == WGT_I16 ? 32767
              : d == WGT_U16 ? 65535 : d == WGT_I8 ? 127 : 255;
    const double m[12] = {lo, hi, 0, 1, lo + 1, hi - 1, 2, 1, 0, hi, lo, 5};
    memcpy(v, m, sizeof m);
}

typedef wgt_tensor *(*binary_fn)(wgt_tensor *, wgt_tensor *);
typedef wgt_tensor *(*unary_fn)(wgt_tensor *);

static int ref_pred2(int op, double x, double y) {
    switch (op) {
    case 0: return x == y;
    case 1: return x != y;
    case 2: return x < y;
    case 3: return x <= y;
    case 4: return x > y;
    case 5: return x >= y;
    case 6: return x != 0 && y != 0;
    case 7: return x != 0 || y != 0;
    default: return (x != 0) != (y != 0);
    }
}
static const binary_fn pred2[9] = {wgt_eq, wgt_ne, wgt_lt, wgt_le, wgt_gt, wgt_ge,
                                   wgt_logical_and, wgt_logical_or, wgt_logical_xor};
static const char *const pred2_names[9] = {"eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or",
                                           "logical_xor"};

static int ref_pred1(int op, double x) {
    switch (op) {
    case 0: return x == 0;
    case 1: return isnan(x);
    case 2: return isinf(x) != 0;
    case 3: return isfinite(x);
    default: return signbit(x) != 0;
    }
}
static const unary_fn pred1[5] = {wgt_logical_not, wgt_isnan, wgt_isinf, wgt_isfinite, wgt_signbit};
static const char *const pred1_names[5] = {"logical_not", "isnan", "isinf", "isfinite", "signbit"};

/* got must be bool of n elements equal to want (computed from the operands as stored). */
static void expect_bool(wgt_tensor *got, const int *want, int64_t n, const char *what, wgt_dtype d) {
    CHECK(got && wgt_tensor_dtype(got) == WGT_BOOL && wgt_tensor_numel(got) == n, "%s on %s: %s", what,
          wgt_dtype_name(d), got ? wgt_dtype_name(wgt_tensor_dtype(got)) : wgt_last_error());
    if (!got || wgt_tensor_dtype(got) != WGT_BOOL || n == 0) return;
    uint8_t b[64];
    CHECK(wgt_tensor_read(got, b, (size_t)n) == WGT_OK, "%s: %s", what, wgt_last_error());
    for (int64_t i = 0, bad = 0; i < n; i++)
        if (b[i] != want[i] && bad++ < 3) CHECK(0, "%s on %s: element %lld is %d, want %d", what, wgt_dtype_name(d), (long long)i, b[i], want[i]);
}

TEST_BACKENDS(bool_predicates_on_every_type) {
    int64_t shape[2] = {3, 4}, row[2] = {1, 4}, empty[2] = {0, 3};
    for (int k = 0; k < NTYPES; k++) {
        wgt_dtype d = all_types[k];
        double xv[12], yv[12];
        sample(d, xv);
        for (int i = 0; i < 12; i++) yv[i] = xv[(i * 5 + 3) % 12]; /* every pair of kinds meets */
        wgt_tensor *x = make(ctx, d, 2, shape, xv), *y = make(ctx, d, 2, shape, yv), *yr = make(ctx, d, 2, row, yv);
        wgt_tensor *xt = wgt_transpose(x, 0, 1), *yt = wgt_transpose(y, 0, 1);
        double *sx = test_read_f64(x), *sy = test_read_f64(y), *sxt = test_read_f64(xt), *syt = test_read_f64(yt);
        CHECK(sx && sy && sxt && syt, "%s: %s", wgt_dtype_name(d), wgt_last_error());
        if (!sx || !sy || !sxt || !syt) goto next;
        int want[12];
        for (int op = 0; op < 9; op++) {
            char what[64];
            for (int i = 0; i < 12; i++) want[i] = ref_pred2(op, sx[i], sy[i]);
            snprintf(what, sizeof what, "%s contiguous", pred2_names[op]);
            wgt_tensor *r = pred2[op](x, y);
            expect_bool(r, want, 12, what, d);
            wgt_release(r);
            for (int i = 0; i < 12; i++) want[i] = ref_pred2(op, sxt[i], syt[i]);
            snprintf(what, sizeof what, "%s transposed", pred2_names[op]);
            r = pred2[op](xt, yt);
            expect_bool(r, want, 12, what, d);
            wgt_release(r);
            for (int i = 0; i < 12; i++) want[i] = ref_pred2(op, sx[i], sy[i % 4]);
            snprintf(what, sizeof what, "%s broadcast", pred2_names[op]);
            r = pred2[op](x, yr);
            expect_bool(r, want, 12, what, d);
            wgt_release(r);
        }
        for (int op = 0; op < 5; op++) {
            if (op == 4 && !is_float_type(d)) {
                CHECK_ERROR(wgt_signbit(x) == NULL, WGT_ERR_DTYPE, "wgt_signbit");
                continue;
            }
            for (int i = 0; i < 12; i++) want[i] = ref_pred1(op, sxt[i]);
            wgt_tensor *r = pred1[op](xt);
            expect_bool(r, want, 12, pred1_names[op], d);
            wgt_release(r);
        }
        /* Empty operands give empty bool results. */
        wgt_tensor *e = wgt_zeros(ctx, d, 2, empty), *re = e ? wgt_lt(e, e) : NULL, *ne = e ? wgt_isnan(e) : NULL;
        CHECK(re && ne && wgt_tensor_dtype(re) == WGT_BOOL && wgt_tensor_dtype(ne) == WGT_BOOL &&
                  wgt_tensor_numel(re) == 0 && wgt_tensor_ndim(re) == 2,
              "empty on %s: %s", wgt_dtype_name(d), wgt_last_error());
        wgt_release(e), wgt_release(re), wgt_release(ne);
    next:
        free(sx), free(sy), free(sxt), free(syt);
        wgt_release(x), wgt_release(y), wgt_release(yr), wgt_release(xt), wgt_release(yt);
    }
}

/* any and all of every type give bool; bool masks feed where, masked_fill, masked_select and
 * sum (a count); bool takes the bitwise and, or, xor and not as logic. */
TEST_BACKENDS(bool_masks_reduce_select_and_count) {
    int64_t shape[2] = {3, 4};
    double mv[12] = {1, 0, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1}, av[12];
    for (int i = 0; i < 12; i++) av[i] = i - 5.5;
    wgt_tensor *m = make(ctx, WGT_BOOL, 2, shape, mv), *a = make(ctx, WGT_F32, 2, shape, av);
    wgt_tensor *zero = wgt_scalar(ctx, WGT_F32, 0);
    int axis1[1] = {1};
    wgt_tensor *any = wgt_any(m, 1, axis1, 0), *all = wgt_all(m, 1, axis1, 0), *cnt = wgt_sum(m, 0, NULL, 0);
    wgt_tensor *w = wgt_where(m, a, zero), *mf = wgt_masked_fill(a, m, 7.0), *ms = wgt_masked_select(a, m);
    wgt_tensor *nm = wgt_bitwise_not(m), *band = wgt_bitwise_and(m, nm), *bor = wgt_bitwise_or(m, nm);
    wgt_tensor *cs = wgt_cumsum(m, 1);
    int want_any[3] = {1, 0, 1}, want_all[3] = {0, 0, 1}, want_not[12], want_and[12] = {0}, want_or[12];
    for (int i = 0; i < 12; i++) want_not[i] = mv[i] == 0, want_or[i] = 1;
    expect_bool(any, want_any, 3, "any", WGT_BOOL);
    expect_bool(all, want_all, 3, "all", WGT_BOOL);
    expect_bool(nm, want_not, 12, "bitwise_not", WGT_BOOL);
    expect_bool(band, want_and, 12, "bitwise_and", WGT_BOOL);
    expect_bool(bor, want_or, 12, "bitwise_or", WGT_BOOL);
    int32_t count = -1, run[12];
    CHECK(cnt && wgt_tensor_dtype(cnt) == WGT_I32 && wgt_tensor_read(cnt, &count, 4) == WGT_OK && count == 7,
          "sum of bool counts: %d (%s)", count, wgt_last_error());
    CHECK(cs && wgt_tensor_dtype(cs) == WGT_I32 && wgt_tensor_read(cs, run, sizeof run) == WGT_OK,
          "cumsum of bool: %s", wgt_last_error());
    for (int i = 0, acc = 0; cs && i < 12; i++) {
        acc = (i % 4 ? acc : 0) + (int)mv[i];
        CHECK(run[i] == acc, "cumsum element %d: %d, want %d", i, run[i], acc);
    }
    float gw[12], gf[12], gs[7];
    CHECK(w && mf && ms && wgt_tensor_read(w, gw, sizeof gw) == WGT_OK && wgt_tensor_read(mf, gf, sizeof gf) == WGT_OK &&
              wgt_tensor_numel(ms) == 7 && wgt_tensor_read(ms, gs, sizeof gs) == WGT_OK,
          "where, masked_fill, masked_select: %s", wgt_last_error());
    for (int i = 0, j = 0; w && mf && ms && i < 12; i++) {
        CHECK(gw[i] == (mv[i] ? (float)av[i] : 0.0f) && gf[i] == (mv[i] ? 7.0f : (float)av[i]), "element %d", i);
        if (mv[i] && j < 7) CHECK(gs[j++] == (float)av[i], "selected %d", j - 1);
    }
    wgt_tensor *tmp[] = {m, a, zero, any, all, cnt, w, mf, ms, nm, band, bor, cs};
    for (size_t i = 0; i < sizeof tmp / sizeof *tmp; i++) wgt_release(tmp[i]);
}

/* Comparisons at the end and in the middle of elementwise chains (fused on WebGPU), and
 * inside a compiled graph, give what the ops give one by one. */
TEST_BACKENDS(bool_in_fused_chains_and_graphs) {
    enum { N = 37 };
    int64_t shape[1] = {N};
    double xv[N];
    for (int i = 0; i < N; i++) xv[i] = i == 5 ? NAN : i == 9 ? -0.0 : (i * 0.37) - 6.0;
    wgt_tensor *x = make(ctx, WGT_F32, 1, shape, xv);
    wgt_tensor *one = wgt_scalar(ctx, WGT_F32, 1), *two = wgt_scalar(ctx, WGT_F32, 2);
    /* end: ((x + 1) * 2) > 1; middle: where(x < 1, exp(x), -x) >= 1, then and with isnan */
    wgt_tensor *s = wgt_add(x, one), *p = wgt_mul(s, two), *end = wgt_gt(p, one);
    wgt_tensor *lt = wgt_lt(x, one), *e = wgt_exp(x), *n = wgt_neg(x), *w = wgt_where(lt, e, n);
    wgt_tensor *mid = wgt_ge(w, one), *nan = wgt_isnan(x), *both = wgt_logical_or(mid, nan);
    int want_end[N], want_both[N];
    for (int i = 0; i < N; i++) {
        float xf = (float)xv[i], pf = (xf + 1.0f) * 2.0f, wf = xf < 1.0f ? expf(xf) : -xf;
        want_end[i] = pf > 1.0f;
        want_both[i] = wf >= 1.0f || isnan(xf);
    }
    expect_bool(end, want_end, N, "fused chain ending in gt", WGT_F32);
    expect_bool(both, want_both, N, "fused chain with lt in the middle", WGT_F32);

    /* The same in a compiled graph, dispatched twice with different data. */
    wgt_tensor *gx = wgt_graph_input(ctx, "bool_x", WGT_F32, 1, shape);
    wgt_tensor *gs = wgt_add(gx, one), *gp = wgt_mul(gs, two), *g1 = wgt_gt(gp, one);
    wgt_tensor *glt = wgt_lt(gx, one), *ge = wgt_exp(gx), *gw = wgt_where(glt, ge, gx);
    wgt_tensor *gge = wgt_ge(gw, one), *gnan = wgt_isnan(gx), *g2 = wgt_logical_xor(gge, gnan);
    CHECK(g1 && g2, "graph recording: %s", wgt_last_error());
    wgt_binding outs[2] = {{"end", g1}, {"mid", g2}};
    wgt_graph *g = g1 && g2 ? wgt_graph_build(ctx, 2, outs) : NULL;
    CHECK(g, "graph build: %s", wgt_last_error());
    for (int round = 0; g && round < 2; round++) {
        double v[N];
        for (int i = 0; i < N; i++) v[i] = round ? -xv[i] : xv[i];
        wgt_tensor *in = make(ctx, WGT_F32, 1, shape, v);
        wgt_tensor *o1 = wgt_tensor_create(ctx, WGT_BOOL, 1, shape, WGT_USAGE_DEFAULT);
        wgt_tensor *o2 = wgt_tensor_create(ctx, WGT_BOOL, 1, shape, WGT_USAGE_DEFAULT);
        wgt_binding ins[1] = {{"bool_x", in}}, bo[2] = {{"end", o1}, {"mid", o2}};
        CHECK(wgt_graph_dispatch(g, 1, ins, 2, bo) == WGT_OK, "dispatch: %s", wgt_last_error());
        for (int i = 0; i < N; i++) {
            float xf = (float)v[i], pf = (xf + 1.0f) * 2.0f, wf = xf < 1.0f ? expf(xf) : xf;
            want_end[i] = pf > 1.0f;
            want_both[i] = (wf >= 1.0f) != (isnan(xf) != 0);
        }
        expect_bool(o1, want_end, N, "graph: gt at the end", WGT_F32);
        expect_bool(o2, want_both, N, "graph: lt in the middle, logical_xor", WGT_F32);
        wgt_release(in), wgt_release(o1), wgt_release(o2);
    }
    wgt_graph_release(g);
    /* On WebGPU the comparison and its pack to bool join the chain: one kernel in all. */
    wgt_tensor *fx = wgt_graph_input(ctx, "bool_fx", WGT_F32, 1, shape), *fs = wgt_add(fx, one), *fm = wgt_mul(fs, two);
    wgt_tensor *fg = wgt_gt(fm, one), *fw = wgt_where(fg, fm, fx);
    wgt_binding fouts[2] = {{"mask", fg}, {"picked", fw}};
    wgt_graph *fused = fg && fw ? wgt_graph_build(ctx, 2, fouts) : NULL;
    CHECK(fused, "graph build: %s", wgt_last_error());
    if (fused && wgt_context_backend(ctx) == WGT_BACKEND_WEBGPU)
        CHECK(wgt_graph_launches(fused) == 1, "a chain ending in a comparison and a where on it: %d launches",
              wgt_graph_launches(fused));
    wgt_graph_release(fused);
    wgt_tensor *tmp[] = {x,  one, two, s,  p,  end, lt,   e,  n,  w,  mid, nan, both, gx, gs,
                         gp, g1,  glt, ge, gw, gge, gnan, g2, fx, fs, fm,  fg,  fw};
    for (size_t i = 0; i < sizeof tmp / sizeof *tmp; i++) wgt_release(tmp[i]);
}
