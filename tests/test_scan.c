/*
 * Scans (wgt_cumprod, wgt_cummax, wgt_cummin, wgt_cumargmax, wgt_cumargmin) on both backends
 * against references computed here: products in float64 (wrapping uint32_t for integers),
 * with a bound that grows with the position along the axis as a sequential f32 product's
 * rounding does; maxima, minima and positions exactly. Inputs come contiguous, transposed,
 * stepped and broadcast, in odd shapes, along every axis (negative ones too), with ties,
 * zeros and NaNs; outputs are poisoned in the runner's poisoned pass, so an unwritten
 * element shows.
 */
#include <math.h>
#include <stdlib.h>

#include "reference.h"
#include "test.h"

static const wgt_dtype dtypes[] = {WGT_F32, WGT_F16, WGT_I32, WGT_U32};
enum { C_PROD, C_MAX, C_MIN, C_ARGMAX, C_ARGMIN, C_COUNT };
static const char *const names[C_COUNT] = {"cumprod", "cummax", "cummin", "cumargmax", "cumargmin"};

static wgt_tensor *run(int op, wgt_tensor *a, int axis) {
    switch (op) {
    case C_PROD: return wgt_cumprod(a, axis);
    case C_MAX: return wgt_cummax(a, axis);
    case C_MIN: return wgt_cummin(a, axis);
    case C_ARGMAX: return wgt_cumargmax(a, axis);
    default: return wgt_cumargmin(a, axis);
    }
}

static int is_int(wgt_dtype dt) { return dt == WGT_I32 || dt == WGT_U32; }

/* Values for the op: products of factors near 1 with exact zeros and sign changes (small
 * integers for the integer types, which still wrap on long rows); few distinct values for
 * max and min so ties are common, and NaN now and then for floats. */
static double draw(wgt_dtype dt, int op, uint64_t *s) {
    uint64_t r = next_u64(s);
    if (op == C_PROD) {
        if (r % 11 == 0) return 0;
        if (is_int(dt)) return dt == WGT_U32 ? (double)(1 + r % 5) : (double)((int)(r % 7) - 3);
        return (r >> 8) % 2 ? 0.5 + (double)(r >> 16 & 0xffff) / 65536.0 : -(0.5 + (double)(r >> 16 & 0xffff) / 65536.0);
    }
    if (!is_int(dt) && r % 13 == 0) return NAN;
    return (double)(r % 5) - (dt == WGT_U32 ? 0 : 2) + (is_int(dt) ? 0 : 0.25);
}

static wgt_tensor *tensor_of(wgt_context *ctx, wgt_dtype dt, int ndim, const int64_t *shape, int op, uint64_t seed) {
    int64_t n = numel_of(ndim, shape);
    double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    for (int64_t i = 0; v && i < n; i++) v[i] = draw(dt, op, &seed);
    wgt_tensor *t = v ? tensor_of_doubles(ctx, dt, ndim, shape, v) : NULL;
    free(v);
    return t;
}

/* Checks op(a, axis) element by element against the reference of a's values. */
static void check_scan(int op, wgt_tensor *a, int axis, const char *what) {
    int ndim = wgt_tensor_ndim(a), ax = axis < 0 ? axis + ndim : axis;
    const int64_t *shape = wgt_tensor_shape(a);
    wgt_dtype dt = wgt_tensor_dtype(a);
    wgt_tensor *r = run(op, a, axis);
    wgt_dtype want_dt = op >= C_ARGMAX ? WGT_I32 : dt;
    CHECK(r && wgt_tensor_dtype(r) == want_dt && wgt_tensor_ndim(r) == ndim, "%s %s %s axis %d: %s", names[op],
          wgt_dtype_name(dt), what, axis, wgt_last_error());
    double *x = test_read_f64(a), *got = r ? test_read_f64(r) : NULL;
    int64_t n = wgt_tensor_numel(a), inner = 1, len = shape[ax];
    for (int d = ax + 1; d < ndim; d++) inner *= shape[d];
    /* Running values in place, row-major: the previous element along the axis is i - inner. */
    double *acc = malloc((size_t)(n > 0 ? n : 1) * sizeof *acc);
    uint32_t *iacc = malloc((size_t)(n > 0 ? n : 1) * sizeof *iacc);
    int64_t *at = malloc((size_t)(n > 0 ? n : 1) * sizeof *at);
    CHECK(x && got && acc && iacc && at, "%s %s: reading back: %s", names[op], what, wgt_last_error());
    int bad = 0;
    for (int64_t i = 0; x && got && acc && iacc && at && i < n; i++) {
        int64_t j = i / inner % len;
        double want, tol = 0;
        if (op == C_PROD) {
            acc[i] = x[i] * (j ? acc[i - inner] : 1);
            iacc[i] = (uint32_t)(int64_t)x[i] * (j ? iacc[i - inner] : 1u);
            want = is_int(dt) ? (dt == WGT_I32 ? (double)(int32_t)iacc[i] : (double)iacc[i]) : acc[i];
            /* j + 1 roundings of f32 products, then the output's own rounding */
            if (!is_int(dt)) tol = fabs(want) * ((double)(j + 1) * 0x1p-24 + (dt == WGT_F16 ? 0x1p-11 : 0));
        } else {
            int larger = op == C_MAX || op == C_ARGMAX;
            double prev = j ? acc[i - inner] : 0;
            int take = j == 0 || (!isnan(prev) && (isnan(x[i]) || (larger ? x[i] >= prev : x[i] <= prev)));
            acc[i] = take ? x[i] : prev;
            at[i] = take ? j : at[i - inner];
            want = op >= C_ARGMAX ? (double)at[i] : acc[i];
        }
        int same = (isnan(want) && isnan(got[i])) || fabs(got[i] - want) <= tol;
        if (!same && bad++ < 3)
            CHECK(0, "%s %s %s axis %d: element %lld is %.9g, want %.9g", names[op], wgt_dtype_name(dt), what, axis,
                  (long long)i, got[i], want);
    }
    free(acc), free(iacc), free(at), free(x), free(got);
    wgt_release(r);
}

/* Every op and type along every axis of odd shapes, the input contiguous, transposed
 * (a permuted view), stepped (every other element along the first axis) and broadcast. */
TEST_BACKENDS(scan_ops_dtypes_layouts) {
    static const int64_t shapes[3][3] = {{7}, {3, 5}, {4, 1, 6}};
    static const int ranks[3] = {1, 2, 3};
    uint64_t seed = 77;
    for (int op = 0; op < C_COUNT; op++)
        for (size_t d = 0; d < sizeof dtypes / sizeof *dtypes; d++)
            for (int s = 0; s < 3; s++) {
                int nd = ranks[s];
                wgt_tensor *base = tensor_of(ctx, dtypes[d], nd, shapes[s], op == C_ARGMAX ? C_MAX : op == C_ARGMIN ? C_MIN : op,
                                             seed++);
                int64_t twice[3] = {2 * shapes[s][0], nd > 1 ? shapes[s][1] : 0, nd > 2 ? shapes[s][2] : 0};
                wgt_tensor *wide = tensor_of(ctx, dtypes[d], nd, twice, op, seed++);
                wgt_tensor *stepped = wgt_slice(wide, 0, 1, twice[0], 2);
                int perm[3] = {nd - 1, 0, 1};
                if (nd == 2) perm[1] = 0;
                wgt_tensor *tr = nd > 1 ? wgt_permute(base, perm) : wgt_retain(base);
                int64_t bshape[4] = {3};
                for (int k = 0; k < nd; k++) bshape[k + 1] = shapes[s][k];
                wgt_tensor *bc = wgt_broadcast_to(base, nd + 1, bshape);
                for (int axis = -nd; axis < nd; axis++) {
                    check_scan(op, base, axis, "contiguous");
                    check_scan(op, tr, axis, "transposed");
                    check_scan(op, stepped, axis, "stepped");
                }
                check_scan(op, bc, 0, "broadcast");
                check_scan(op, bc, nd, "broadcast");
                wgt_release(bc), wgt_release(tr), wgt_release(stepped), wgt_release(wide), wgt_release(base);
            }
}

/* A single element, a row long enough to cross many workgroups' worth of work in one
 * invocation, rows of one element each, and empty tensors (nothing to do, shape kept). */
TEST_BACKENDS(scan_sizes_and_empty) {
    for (size_t d = 0; d < sizeof dtypes / sizeof *dtypes; d++)
        for (int op = 0; op < C_COUNT; op++) {
            int value_op = op == C_ARGMAX ? C_MAX : op == C_ARGMIN ? C_MIN : op;
            int64_t one[1] = {1}, longrow[1] = {70001}, column[2] = {1031, 1}, empty[2] = {4, 0};
            wgt_tensor *a = tensor_of(ctx, dtypes[d], 1, one, value_op, 5);
            wgt_tensor *l = tensor_of(ctx, dtypes[d], 1, longrow, value_op == C_PROD ? C_MAX : value_op, 6);
            wgt_tensor *c = tensor_of(ctx, dtypes[d], 2, column, value_op, 7);
            wgt_tensor *e = wgt_zeros(ctx, dtypes[d], 2, empty);
            check_scan(op, a, 0, "size-1");
            check_scan(op, l, 0, "long row"); /* products of small ties: 0 soon, or +-2^k wrapping */
            check_scan(op, c, 1, "rows of one");
            check_scan(op, c, 0, "column");
            for (int axis = 0; axis < 2; axis++) {
                wgt_tensor *r = run(op, e, axis);
                CHECK(r && wgt_tensor_numel(r) == 0 && wgt_tensor_shape(r)[0] == 4 && wgt_tensor_shape(r)[1] == 0,
                      "empty %s axis %d: %s", names[op], axis, wgt_last_error());
                wgt_release(r);
            }
            wgt_release(a), wgt_release(l), wgt_release(c), wgt_release(e);
        }
}

TEST_BACKENDS(scan_errors) {
    int64_t shape[2] = {2, 3};
    wgt_tensor *a = wgt_zeros(ctx, WGT_F32, 2, shape), *b = wgt_zeros(ctx, WGT_I64, 2, shape);
    wgt_tensor *s = wgt_scalar(ctx, WGT_F32, 1.0);
    for (int op = 0; op < C_COUNT; op++) {
        CHECK_ERROR(run(op, a, 2) == NULL, WGT_ERR_SHAPE, "axis 2");
        CHECK_ERROR(run(op, a, -3) == NULL, WGT_ERR_SHAPE, "axis -3");
        CHECK_ERROR(run(op, s, 0) == NULL, WGT_ERR_SHAPE, "axis 0");
        CHECK_ERROR(run(op, b, 0) == NULL, WGT_ERR_DTYPE, "i64");
        CHECK_ERROR(run(op, b, 0) == NULL, WGT_ERR_DTYPE, names[op]);
        wgt_clear_error();
        CHECK(run(op, NULL, 0) == NULL, "%s of NULL", names[op]);
    }
    wgt_release(a), wgt_release(b), wgt_release(s);
}

/* The narrow types scan widened: each op on a transposed [5, 4] view of i8, u8, i16, u16,
 * bool and bf16 equals the same op on the exact i32 or u32 (f32 for bf16) copy, which the
 * tests above check against references: the product in the type cumsum gives (i32 or u32),
 * the maxima and minima back in the narrow type, the positions i32. bool and bf16 take no
 * product. */
TEST_BACKENDS(scan_narrow_types_match_their_wide_copies) {
    static const wgt_dtype narrow[] = {WGT_I8, WGT_U8, WGT_I16, WGT_U16, WGT_BOOL, WGT_BF16};
    int64_t shape[2] = {4, 5};
    double v[20];
    for (size_t t = 0; t < sizeof narrow / sizeof *narrow; t++) {
        wgt_dtype dt = narrow[t];
        int is_unsigned = dt == WGT_U8 || dt == WGT_U16 || dt == WGT_BOOL;
        for (int i = 0; i < 20; i++) /* ties, zeros and signs; products wrap in 8 and 16 bits */
            v[i] = dt == WGT_BOOL ? (double)(i % 3 != 0) : (double)((i * 7) % 9 - (is_unsigned ? 0 : 4)) * 3;
        wgt_tensor *src = tensor_of_doubles(ctx, dt == WGT_BF16 ? WGT_F32 : WGT_I32, 2, shape, v);
        wgt_tensor *base = src ? wgt_cast(src, dt) : NULL, *a = base ? wgt_transpose(base, 0, 1) : NULL;
        for (int op = 0; a && op < C_COUNT; op++) {
            for (int axis = 0; axis < 2; axis++) {
                wgt_tensor *r = NULL;
                if (op == C_PROD && (dt == WGT_BOOL || dt == WGT_BF16)) {
                    CHECK_ERROR((r = run(op, a, axis)) == NULL, WGT_ERR_DTYPE, "takes no arithmetic");
                    wgt_release(r);
                    continue;
                }
                r = run(op, a, axis);
                wgt_dtype wide = op == C_PROD ? (is_unsigned ? WGT_U32 : WGT_I32) : dt == WGT_BF16 ? WGT_F32 : WGT_I32;
                wgt_dtype want_dt = op >= C_ARGMAX ? WGT_I32 : op == C_PROD ? wide : dt;
                wgt_tensor *w = wgt_cast(a, wide), *ref = w ? run(op, w, axis) : NULL;
                CHECK(r && ref && wgt_tensor_dtype(r) == want_dt, "%s of %s along %d: %s (%s)", names[op],
                      wgt_dtype_name(dt), axis, r ? wgt_dtype_name(wgt_tensor_dtype(r)) : "NULL", wgt_last_error());
                double *got = r ? test_read_f64(r) : NULL, *want = ref ? test_read_f64(ref) : NULL;
                for (int i = 0; got && want && i < 20; i++)
                    CHECK(got[i] == want[i], "%s of %s along %d: element %d is %g, the wide copy gives %g", names[op],
                          wgt_dtype_name(dt), axis, i, got[i], want[i]);
                free(got), free(want);
                wgt_release(r), wgt_release(w), wgt_release(ref);
            }
        }
        wgt_release(src), wgt_release(base), wgt_release(a);
    }
}

/* cumprod's gradient where rows hold exact zeros (none, one first, in the middle or last,
 * two), against the exact sum over i >= j of g_i times the product of x_k, k <= i, k != j. */
TEST_BACKENDS(scan_cumprod_grad_zeros) {
    enum { R = 5, L = 5 };
    static const float x[R][L] = {{0.5f, -1.25f, 2, 0.75f, 1.5f}, {0, 2, -0.5f, 3, 1.25f}, {1.5f, 2, 0, -3, 0.5f},
                                  {2, -0.5f, 1.25f, 3, 0}, {1.5f, 0, 2, 0, -1}};
    static const float g[R][L] = {{1, -2, 0.5f, 3, -1}, {2, 1, -1, 0.5f, 1.5f}, {-1, 0.25f, 2, 1, -3},
                                  {0.5f, 1, -2, 1.5f, 2}, {1, 2, 3, -1, 0.5f}};
    int64_t shape[2] = {R, L};
    wgt_tensor *a = wgt_tensor_from_data(ctx, WGT_F32, 2, shape, x, sizeof x, WGT_USAGE_DEFAULT);
    wgt_tensor *w = wgt_tensor_from_data(ctx, WGT_F32, 2, shape, g, sizeof g, WGT_USAGE_DEFAULT);
    CHECK(a && w && wgt_requires_grad(a, 1) == WGT_OK, "%s", wgt_last_error());
    wgt_tensor *y = wgt_cumprod(a, 1);
    CHECK(y && wgt_backward(y, w) == WGT_OK, "cumprod backward: %s", wgt_last_error());
    wgt_tensor *ga = wgt_grad(a);
    double *got = ga ? test_read_f64(ga) : NULL;
    CHECK(got, "reading the gradient: %s", wgt_last_error());
    for (int r = 0; got && r < R; r++)
        for (int j = 0; j < L; j++) {
            double want = 0;
            for (int i = j; i < L; i++) {
                double p = g[r][i];
                for (int k = 0; k <= i; k++)
                    if (k != j) p *= x[r][k];
                want += p;
            }
            CHECK(fabs(got[r * L + j] - want) <= 1e-6 * (1 + fabs(want)), "row %d element %d: gradient %.9g, want %.9g",
                  r, j, got[r * L + j], want);
        }
    free(got);
    wgt_release(ga), wgt_release(y), wgt_release(w), wgt_release(a);
}
