/*
 * Differential tests of the reductions (sum, mean, max, min, prod, var, std, argmax,
 * argmin) and cumsum: every op and data type, on contiguous, transposed, sliced (steps,
 * one negative) and broadcast (stride-0) inputs of rank 1 to 4 with odd and prime shapes,
 * over each axis, pairs of axes and all axes, negative axes, with and without keepdims.
 * Each backend is compared with a float64 reference computed from the inputs as read back;
 * integers must match exactly (32-bit wraparound), floats within a bound on the rounding
 * error of the kernels' summation scaled by the reduction length. Edge cases: empty
 * reductions (errors and the sum/prod identities), sizes 1 and 0, ties and NaN, long sums,
 * and more outputs than one dispatch dimension holds. Long rows and columns take the split
 * path (partial results per chunk, then a combining pass) and dense rows 16-byte loads: every
 * op and type there, at aligned and unaligned offsets, and on WebGPU once more without
 * subgroups. Outputs are poisoned (WGT_POISON=1, in the runner's poisoned pass) so unwritten
 * elements show.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/webgpu/webgpu_internal.h"
#include "core/handles.h"
#include "core/tensor.h"
#include "test.h"

static const wgt_dtype dtypes[] = {WGT_F32, WGT_F16, WGT_I32, WGT_U32};

/* ---- inputs -------------------------------------------------------------------------- */

typedef enum {
    VALUES_SIGNED, /* floats around 0; i32 in [-50, 50]; u32 in [0, 100] */
    VALUES_PROD,   /* products that neither vanish nor explode (integers still wrap on long rows) */
    VALUES_TIES,   /* few distinct values, and NaN now and then for floats */
    VALUES_WIDE    /* integers over their whole range: sums and products wrap */
} value_kind;

static uint32_t rng(uint64_t *s) {
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(*s >> 32);
}
static double rng_unit(uint64_t *s) { return rng(s) / 4294967296.0; }

static double draw(wgt_dtype dt, value_kind k, uint64_t *s) {
    static const double prod_ints[6] = {-3, -2, -1, 1, 2, 3};
    int is_float = dt == WGT_F32 || dt == WGT_F16;
    switch (k) {
    case VALUES_PROD:
        if (is_float) return 0.5 + rng_unit(s);
        return dt == WGT_U32 ? 1 + rng(s) % 7 : prod_ints[rng(s) % 6];
    case VALUES_TIES:
        if (is_float && rng(s) % 16 == 0) return NAN;
        return (double)(rng(s) % 5) - (dt == WGT_U32 ? 0 : 2);
    case VALUES_WIDE:
        if (dt == WGT_I32) return (double)(int32_t)rng(s);
        if (dt == WGT_U32) return rng(s);
        return 8 * rng_unit(s) - 4;
    default:
        if (dt == WGT_I32) return (double)(rng(s) % 101) - 50;
        if (dt == WGT_U32) return rng(s) % 101;
        if (dt == WGT_F16) return 8 * rng_unit(s) - 4;
        return 3 * (rng_unit(s) + rng_unit(s) + rng_unit(s) - 1.5);
    }
}

/* A new contiguous tensor of seeded values of the given kind. */
static wgt_tensor *host_tensor(wgt_context *ctx, wgt_dtype dt, int ndim, const int64_t *shape, uint64_t seed,
                               value_kind k) {
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    size_t es = wgt_dtype_size(dt);
    char *raw = malloc((size_t)(n > 0 ? n : 1) * es);
    uint64_t s = seed * 7919 + 17;
    for (int64_t i = 0; raw && i < n; i++) {
        double v = draw(dt, k, &s);
        switch (dt) {
        case WGT_F32: ((float *)raw)[i] = (float)v; break;
        case WGT_F16: ((uint16_t *)raw)[i] = wgt_f32_to_f16((float)v); break;
        case WGT_I32: ((int32_t *)raw)[i] = (int32_t)v; break;
        case WGT_U32: ((uint32_t *)raw)[i] = (uint32_t)v; break;
        default: break;
        }
    }
    wgt_tensor *t = raw ? wgt_tensor_from_data(ctx, dt, ndim, shape, raw, (size_t)n * es, WGT_USAGE_DEFAULT) : NULL;
    free(raw);
    return t;
}

/* A rank-1 tensor of the given values, converted to dt. */
static wgt_tensor *from_doubles(wgt_context *ctx, wgt_dtype dt, int64_t n, const double *v) {
    char raw[64 * 4];
    size_t es = wgt_dtype_size(dt);
    for (int64_t i = 0; i < n && i < 64; i++) {
        switch (dt) {
        case WGT_F32: ((float *)raw)[i] = (float)v[i]; break;
        case WGT_F16: ((uint16_t *)raw)[i] = wgt_f32_to_f16((float)v[i]); break;
        case WGT_I32: ((int32_t *)raw)[i] = (int32_t)v[i]; break;
        case WGT_U32: ((uint32_t *)raw)[i] = (uint32_t)v[i]; break;
        default: break;
        }
    }
    return wgt_tensor_from_data(ctx, dt, 1, &n, raw, (size_t)n * es, WGT_USAGE_DEFAULT);
}

typedef enum { CONTIGUOUS, TRANSPOSED, SLICED, BROADCAST, LAYOUT_COUNT } layout;
static const char *const layout_names[] = {"contiguous", "transposed", "sliced", "broadcast"};

/* A view of the given shape in the given layout; its base tensor is released (the view
 * keeps the storage alive). Shapes here have no zero dimensions. */
static wgt_tensor *make_input(wgt_context *ctx, wgt_dtype dt, layout l, int ndim, const int64_t *shape,
                              uint64_t seed, value_kind k) {
    int64_t s[WGT_MAX_DIMS] = {0};
    wgt_tensor *v = NULL;
    switch (l) {
    case TRANSPOSED: /* reversed dimensions: strides run from small to large */
        for (int i = 0; i < ndim; i++) s[i] = shape[ndim - 1 - i];
        v = host_tensor(ctx, dt, ndim, s, seed, k);
        if (ndim == 1) {
            wgt_tensor *r = wgt_slice(v, 0, -1, -(shape[0] + 1), -1);
            wgt_release(v);
            return r;
        }
        for (int i = 0; i < ndim / 2; i++) {
            wgt_tensor *t = wgt_transpose(v, i, ndim - 1 - i);
            wgt_release(v);
            v = t;
        }
        return v;
    case SLICED: /* every other element from 1 on each axis; the last axis backwards */
        for (int i = 0; i < ndim; i++) s[i] = 2 * shape[i] + 1;
        v = host_tensor(ctx, dt, ndim, s, seed, k);
        for (int i = 0; i < ndim; i++) {
            wgt_tensor *t = i < ndim - 1 ? wgt_slice(v, i, 1, s[i], 2) : wgt_slice(v, i, 2 * shape[i], 0, -2);
            wgt_release(v);
            v = t;
        }
        return v;
    case BROADCAST: /* even axes (and a rank-1 axis) have stride 0 */
        for (int i = 0; i < ndim; i++) s[i] = i % 2 == 0 ? 1 : shape[i];
        v = host_tensor(ctx, dt, ndim, s, seed, k);
        {
            wgt_tensor *b = wgt_broadcast_to(v, ndim, shape);
            wgt_release(v);
            return b;
        }
    default: return host_tensor(ctx, dt, ndim, shape, seed, k);
    }
}

/* ---- reference ----------------------------------------------------------------------- */

typedef enum { OP_SUM, OP_MEAN, OP_MAX, OP_MIN, OP_PROD, OP_VAR0, OP_VAR1, OP_STD0, OP_STD1, OP_ARGMAX, OP_ARGMIN, OP_COUNT } test_op;
static const char *const op_names[] = {"sum", "mean", "max", "min", "prod", "var(0)", "var(1)", "std(0)", "std(1)",
                                       "argmax", "argmin"};
#define REDUCE_OPS 9 /* the ops taking an axes list */

static wgt_tensor *apply(test_op op, wgt_tensor *a, int naxes, const int *axes, int keep) {
    switch (op) {
    case OP_SUM: return wgt_sum(a, naxes, axes, keep);
    case OP_MEAN: return wgt_mean(a, naxes, axes, keep);
    case OP_MAX: return wgt_max(a, naxes, axes, keep);
    case OP_MIN: return wgt_min(a, naxes, axes, keep);
    case OP_PROD: return wgt_prod(a, naxes, axes, keep);
    case OP_VAR0: return wgt_var(a, naxes, axes, keep, 0);
    case OP_VAR1: return wgt_var(a, naxes, axes, keep, 1);
    case OP_STD0: return wgt_std(a, naxes, axes, keep, 0);
    case OP_STD1: return wgt_std(a, naxes, axes, keep, 1);
    case OP_ARGMAX: return wgt_argmax(a, axes[0], keep);
    default: return wgt_argmin(a, axes[0], keep);
    }
}

static int is_int(wgt_dtype d) { return d == WGT_I32 || d == WGT_U32; }

static wgt_dtype result_dtype(test_op op, wgt_dtype in) {
    if (op == OP_ARGMAX || op == OP_ARGMIN) return WGT_I32;
    if (op == OP_MEAN || op >= OP_VAR0) return is_int(in) ? WGT_F32 : in;
    return in;
}

/* An integer result wrapped to 32 bits, as the type's value. */
static double wrap32(wgt_dtype dt, uint32_t bits) {
    if (dt == WGT_U32) return bits;
    return bits > INT32_MAX ? (double)bits - 4294967296.0 : (double)bits;
}

/* Unit roundoff of the f32 accumulators, and a bound on how many roundings an element's
 * contribution to a tree or blocked sum of n terms goes through (the GPU kernels use
 * blocks of 64 per invocation and a tree of 256; 2 sqrt(n) + 8 is above that for all n). */
#define U32_ROUNDOFF 5.97e-8
static double growth(int64_t n) { return 2 * sqrt((double)n) + 8; }
/* Rounding of the result into the output type, relative (with room for a few f32 steps
 * after the accumulation, and for f16 rounding that is not to nearest-even). */
static double out_rel(wgt_dtype out) { return out == WGT_F16 ? 2e-3 : 4e-7; }
static double out_abs(wgt_dtype out) { return out == WGT_F16 ? 1e-7 : 1e-30; }

typedef struct {
    double value, tol;
} expected;

/* The reference result of op over the n values x of one output, and its tolerance. */
static expected reference(test_op op, wgt_dtype in, const double *x, int64_t n) {
    wgt_dtype out = result_dtype(op, in);
    expected e = {0, 0};
    double sum = 0, abs_sum = 0, prod = 1;
    uint32_t isum = 0, iprod = 1;
    for (int64_t i = 0; i < n; i++) {
        sum += x[i];
        abs_sum += fabs(x[i]);
        prod *= x[i];
        uint32_t b = (uint32_t)(int64_t)x[i];
        isum += b;
        iprod *= b;
    }
    switch (op) {
    case OP_SUM:
    case OP_PROD:
        if (is_int(in)) {
            e.value = wrap32(in, op == OP_SUM ? isum : iprod);
        } else if (op == OP_SUM) {
            e.value = sum;
            e.tol = out_rel(out) * fabs(sum) + U32_ROUNDOFF * growth(n) * abs_sum + out_abs(out);
        } else {
            e.value = prod;
            e.tol = (out_rel(out) + U32_ROUNDOFF * (double)(n + 2)) * fabs(prod) + out_abs(out);
        }
        return e;
    case OP_MEAN:
        e.value = sum / (double)n;
        e.tol = out_rel(out) * fabs(e.value) + U32_ROUNDOFF * growth(n) * abs_sum / (double)n + out_abs(out);
        return e;
    case OP_MAX:
    case OP_MIN:
    case OP_ARGMAX:
    case OP_ARGMIN: {
        int greater = op == OP_MAX || op == OP_ARGMAX;
        int64_t best = 0;
        for (int64_t i = 1; i < n && !isnan(x[best]); i++)
            if (isnan(x[i]) || (greater ? x[i] > x[best] : x[i] < x[best])) best = i;
        e.value = op == OP_MAX || op == OP_MIN ? x[best] : (double)best;
        return e;
    }
    default: { /* var and std, two-pass in double */
        double mean = sum / (double)n, ssq = 0;
        for (int64_t i = 0; i < n; i++) ssq += (x[i] - mean) * (x[i] - mean);
        int correction = op == OP_VAR1 || op == OP_STD1;
        double divisor = (double)n - correction > 0 ? (double)n - correction : 0;
        double var = ssq / divisor; /* NaN or inf when the divisor is 0, as in NumPy */
        double tv = out_rel(out) * var + 4 * U32_ROUNDOFF * growth(n) * ssq / divisor + out_abs(out);
        if (op == OP_VAR0 || op == OP_VAR1) {
            e.value = var;
            e.tol = tv;
        } else { /* |sqrt(a) - sqrt(b)| <= min(sqrt|a - b|, |a - b| / sqrt(b)) */
            e.value = sqrt(var);
            e.tol = 1.5 * out_rel(out) * e.value + (e.value > 0 ? fmin(sqrt(tv), tv / e.value) : sqrt(tv));
        }
        return e;
    }
    }
}

static int matches(double got, expected e) {
    if (isnan(e.value)) return isnan(got);
    if (isinf(e.value)) return got == e.value;
    return fabs(got - e.value) <= e.tol;
}

/* Values of x (row-major over shape) grouped by output: row o holds its reduced elements in
 * row-major order of the reduced axes. */
static double *group_by_output(const double *x, int ndim, const int64_t *shape, const int *reduced, int64_t *count) {
    int64_t n = 1, r = 1;
    for (int d = 0; d < ndim; d++) {
        n *= shape[d];
        if (reduced[d]) r *= shape[d];
    }
    double *g = malloc((size_t)(n > 0 ? n : 1) * sizeof *g);
    int64_t idx[WGT_MAX_DIMS] = {0};
    for (int64_t i = 0; g && i < n; i++) {
        int64_t o = 0, k = 0;
        for (int d = 0; d < ndim; d++) {
            if (reduced[d]) k = k * shape[d] + idx[d];
            else o = o * shape[d] + idx[d];
        }
        g[o * r + k] = x[i];
        for (int d = ndim - 1; d >= 0 && ++idx[d] == shape[d]; d--) idx[d] = 0;
    }
    *count = r;
    return g;
}

static void format_axes(char *buf, size_t size, int naxes, const int *axes) {
    int used = snprintf(buf, size, naxes ? "{" : "all");
    for (int i = 0; i < naxes && used < (int)size; i++) used += snprintf(buf + used, size - (size_t)used, i ? ", %d" : "%d", axes[i]);
    if (naxes && used < (int)size) snprintf(buf + used, size - (size_t)used, "}");
}

/* Applies op to `a` and compares every output with the reference; returns mismatches. */
static int check_op(test_op op, wgt_tensor *a, int naxes, const int *axes, int keep, const char *what) {
    int ndim = wgt_tensor_ndim(a), reduced[WGT_MAX_DIMS] = {0};
    const int64_t *shape = wgt_tensor_shape(a);
    wgt_dtype in = wgt_tensor_dtype(a);
    char desc[256], ax[64], sh[96];
    format_axes(ax, sizeof ax, naxes, axes);
    int used = snprintf(sh, sizeof sh, "[");
    for (int d = 0; d < ndim; d++) used += snprintf(sh + used, sizeof sh - (size_t)used, d ? ", %lld" : "%lld", (long long)shape[d]);
    snprintf(sh + used, sizeof sh - (size_t)used, "]");
    snprintf(desc, sizeof desc, "%s %s %s %s axes %s keepdims %d", op_names[op], wgt_dtype_name(in), what, sh, ax, keep);
    for (int i = 0; i < (naxes ? naxes : ndim); i++) reduced[naxes ? (axes[i] + ndim) % ndim : i] = 1;

    wgt_tensor *r = apply(op, a, naxes, axes, keep);
    CHECK(r != NULL, "%s: %s", desc, wgt_last_error());
    if (!r) return 1;
    int bad = 0;
    /* Shape: the kept axes, and the reduced ones as 1 with keepdims. */
    int want_ndim = 0;
    for (int d = 0; d < ndim; d++) {
        if (reduced[d] && !keep) continue;
        if (want_ndim < wgt_tensor_ndim(r) && wgt_tensor_shape(r)[want_ndim] != (reduced[d] ? 1 : shape[d])) bad++;
        want_ndim++;
    }
    if (want_ndim != wgt_tensor_ndim(r) || wgt_tensor_dtype(r) != result_dtype(op, in)) bad++;
    CHECK(!bad, "%s: result has rank %d and type %s", desc, wgt_tensor_ndim(r), wgt_dtype_name(wgt_tensor_dtype(r)));

    int64_t count = 0;
    double *x = test_read_f64(a), *got = test_read_f64(r);
    double *g = x ? group_by_output(x, ndim, shape, reduced, &count) : NULL;
    CHECK(g && got, "%s: reading back: %s", desc, wgt_last_error());
    for (int64_t o = 0; !bad && g && got && o < wgt_tensor_numel(r); o++) {
        expected e = reference(op, in, g + o * count, count);
        if (!matches(got[o], e) && bad++ < 3)
            CHECK(0, "%s: output %lld is %.9g, want %.9g (tolerance %.3g)", desc, (long long)o, got[o], e.value, e.tol);
    }
    free(x);
    free(g);
    free(got);
    wgt_release(r);
    return bad;
}

/* ---- reductions over the layouts and axes --------------------------------------------- */

static const int64_t test_shapes[][4] = {{13}, {7, 11}, {5, 7, 3}, {2, 3, 5, 7}, {3, 1031}};
static const int test_ranks[] = {1, 2, 3, 4, 2};

/* Every single axis (odd ones written negative), every pair (in reverse order, one negative)
 * and all axes (naxes 0), for rank ndim; returns the number of axis lists written. */
static int axis_lists(int ndim, int lists[][2], int *counts) {
    int n = 0;
    for (int i = 0; i < ndim; i++, n++) lists[n][0] = i % 2 ? i - ndim : i, counts[n] = 1;
    for (int i = 0; i < ndim; i++)
        for (int j = i + 1; j < ndim; j++, n++) lists[n][0] = j, lists[n][1] = i - ndim, counts[n] = 2;
    counts[n++] = 0;
    return n;
}

TEST_BACKENDS(reduce_ops_dtypes_layouts_axes) {
    uint64_t seed = 1;
    int config = 0;
    for (size_t s = 0; s < sizeof test_ranks / sizeof *test_ranks; s++) {
        int lists[16][2], counts[16];
        int nlists = axis_lists(test_ranks[s], lists, counts);
        for (int a = 0; a < nlists; a++, config++)
            for (int op = 0; op < REDUCE_OPS; op++)
                for (size_t d = 0; d < sizeof dtypes / sizeof *dtypes; d++) {
                    layout l = (layout)((config + op + (int)d) % LAYOUT_COUNT);
                    value_kind k = op == OP_PROD ? VALUES_PROD : VALUES_SIGNED;
                    wgt_tensor *x = make_input(ctx, dtypes[d], l, test_ranks[s], test_shapes[s], seed++, k);
                    check_op((test_op)op, x, counts[a], lists[a], (config + op) % 2, layout_names[l]);
                    wgt_release(x);
                }
    }
}

TEST_BACKENDS(reduce_argmax_argmin_ties_and_nan) {
    uint64_t seed = 500;
    for (size_t s = 0; s < sizeof test_ranks / sizeof *test_ranks; s++)
        for (int axis = 0; axis < test_ranks[s]; axis++)
            for (size_t d = 0; d < sizeof dtypes / sizeof *dtypes; d++) {
                layout l = (layout)((axis + (int)d + (int)s) % LAYOUT_COUNT);
                wgt_tensor *x = make_input(ctx, dtypes[d], l, test_ranks[s], test_shapes[s], seed++, VALUES_TIES);
                int ax = axis % 2 ? axis - test_ranks[s] : axis;
                for (test_op op = OP_MAX; op <= OP_MIN; op++) check_op(op, x, 1, &ax, axis % 2, layout_names[l]);
                for (test_op op = OP_ARGMAX; op <= OP_ARGMIN; op++) check_op(op, x, 1, &ax, (axis + 1) % 2, layout_names[l]);
                wgt_release(x);
            }
    /* Known answers: the first of equal extremes, and the first NaN. */
    static const double ties[8] = {2, 5, 5, 1, 1, 0, 7, 7}, nans[5] = {1, NAN, 9, NAN, -4};
    for (size_t d = 0; d < sizeof dtypes / sizeof *dtypes; d++) {
        int is_float = !is_int(dtypes[d]);
        wgt_tensor *t = from_doubles(ctx, dtypes[d], 8, ties), *tn = is_float ? from_doubles(ctx, dtypes[d], 5, nans) : NULL;
        int32_t i[4] = {-1, -1, -1, -1};
        double mx = 0, mn = 0;
        wgt_tensor *r[6] = {wgt_argmax(t, 0, 0), wgt_argmin(t, -1, 1), NULL, NULL, NULL, NULL};
        if (is_float) {
            r[2] = wgt_argmax(tn, 0, 0), r[3] = wgt_argmin(tn, 0, 0);
            r[4] = wgt_max(tn, 0, NULL, 0), r[5] = wgt_min(tn, 0, NULL, 1);
        }
        for (int k = 0; k < (is_float ? 4 : 2); k++)
            CHECK(r[k] && wgt_tensor_read(r[k], &i[k], 4) == WGT_OK, "%s: %s", wgt_dtype_name(dtypes[d]), wgt_last_error());
        CHECK(i[0] == 6 && i[1] == 5, "%s: argmax %d, argmin %d of {2, 5, 5, 1, 1, 0, 7, 7}", wgt_dtype_name(dtypes[d]),
              i[0], i[1]);
        if (is_float) {
            double *vx = test_read_f64(r[4]), *vn = test_read_f64(r[5]);
            if (vx && vn) mx = vx[0], mn = vn[0];
            CHECK(vx && vn && isnan(mx) && isnan(mn), "%s: max %g, min %g with NaN", wgt_dtype_name(dtypes[d]), mx, mn);
            CHECK(i[2] == 1 && i[3] == 1, "%s: argmax %d, argmin %d of {1, NaN, 9, NaN, -4}", wgt_dtype_name(dtypes[d]),
                  i[2], i[3]);
            free(vx);
            free(vn);
        }
        for (int k = 0; k < 6; k++) wgt_release(r[k]);
        wgt_release(t);
        wgt_release(tn);
    }
}

/* ---- sizes 0 and 1 ------------------------------------------------------------------ */

TEST_BACKENDS(reduce_empty_and_size_one) {
    for (size_t d = 0; d < sizeof dtypes / sizeof *dtypes; d++) {
        wgt_dtype dt = dtypes[d];
        const char *name = wgt_dtype_name(dt);
        /* [3, 0] over axis 1: sum and prod give their identities, the rest have none. */
        int64_t s30[2] = {3, 0};
        int ax1 = 1, ax0 = 0;
        wgt_tensor *e = wgt_zeros(ctx, dt, 2, s30);
        wgt_tensor *sum = wgt_sum(e, 1, &ax1, 0), *prod = wgt_prod(e, 1, &ax1, 1);
        double *vs = test_read_f64(sum), *vp = test_read_f64(prod);
        CHECK(vs && vp && wgt_tensor_numel(sum) == 3 && wgt_tensor_ndim(prod) == 2 && wgt_tensor_shape(prod)[1] == 1,
              "%s: %s", name, wgt_last_error());
        for (int i = 0; vs && vp && i < 3; i++) CHECK(vs[i] == 0 && vp[i] == 1, "%s: sum %g prod %g", name, vs[i], vp[i]);
        free(vs);
        free(vp);
        wgt_release(sum);
        wgt_release(prod);
        for (test_op op = OP_MEAN; op < OP_COUNT; op++) {
            if (op == OP_PROD) continue;
            if (op == OP_MEAN || (op >= OP_VAR0 && op <= OP_STD1)) {
                /* The mean and variance of nothing are NaN (NumPy, the array API), kept dims too. */
                for (int keep = 0; keep < 2; keep++) {
                    wgt_tensor *r = apply(op, e, 1, &ax1, keep);
                    double *v = test_read_f64(r);
                    CHECK(r && v && wgt_tensor_ndim(r) == 1 + keep && wgt_tensor_shape(r)[0] == 3 &&
                              wgt_tensor_dtype(r) == result_dtype(op, dt),
                          "%s: op %d of [3, 0] over axis 1 (keepdims %d): %s", name, (int)op, keep, wgt_last_error());
                    for (int i = 0; v && i < 3; i++) CHECK(isnan(v[i]), "%s: op %d of nothing gave %g", name, (int)op, v[i]);
                    free(v);
                    wgt_release(r);
                }
                continue;
            }
            CHECK_ERROR(apply(op, e, 1, &ax1, 0) == NULL, WGT_ERR_SHAPE, "axis 1 of shape [3, 0]");
        }
        CHECK_ERROR(wgt_max(e, 0, NULL, 0) == NULL, WGT_ERR_SHAPE, "zero elements");
        /* Over axis 0 there is nothing to produce: an empty result, not an error. */
        wgt_tensor *m = wgt_max(e, 1, &ax0, 0), *am = wgt_argmin(e, 0, 1);
        CHECK(m && wgt_tensor_numel(m) == 0 && am && wgt_tensor_ndim(am) == 2 && wgt_tensor_numel(am) == 0, "%s: %s",
              name, wgt_last_error());
        wgt_release(m);
        wgt_release(am);
        wgt_tensor *all = wgt_sum(e, 0, NULL, 0);
        double *va = test_read_f64(all);
        CHECK(va && wgt_tensor_ndim(all) == 0 && va[0] == 0, "%s: sum of all of [3, 0]", name);
        free(va);
        wgt_release(all);
        wgt_release(e);

        /* Size 1: [1], [1, 1] and a rank-0 tensor reduce to their one element. */
        int64_t s11[2] = {1, 1};
        wgt_tensor *one = host_tensor(ctx, dt, 1, s11, 91 + d, VALUES_SIGNED);
        wgt_tensor *grid = host_tensor(ctx, dt, 2, s11, 92 + d, VALUES_SIGNED);
        wgt_tensor *scalar = host_tensor(ctx, dt, 0, NULL, 93 + d, VALUES_PROD);
        for (int op = 0; op < OP_COUNT; op++) {
            int axis = -1;
            check_op((test_op)op, one, 1, &axis, op % 2, "size-1");
            check_op((test_op)op, grid, 1, &axis, 1, "size-1");
            if (op < REDUCE_OPS) check_op((test_op)op, scalar, 0, NULL, op % 2, "rank-0");
        }
        wgt_release(one);
        wgt_release(grid);
        wgt_release(scalar);
    }
}

TEST_BACKENDS(reduce_axis_errors) {
    int64_t shape[3] = {2, 3, 4};
    wgt_tensor *a = wgt_ones(ctx, WGT_F32, 3, shape);
    int dup[2] = {1, -2}, out_of_range[1] = {3}, two[2] = {0, 2};
    CHECK_ERROR(wgt_sum(a, 2, dup, 0) == NULL, WGT_ERR_SHAPE, "more than once");
    CHECK_ERROR(wgt_var(a, 1, out_of_range, 0, 1) == NULL, WGT_ERR_SHAPE, "axis 3");
    CHECK_ERROR(wgt_mean(a, -1, two, 0) == NULL, WGT_ERR_INVALID_ARGUMENT, "naxes");
    CHECK_ERROR(wgt_prod(a, 2, NULL, 0) == NULL, WGT_ERR_INVALID_ARGUMENT, "axes is NULL");
    CHECK_ERROR(wgt_argmax(a, -4, 0) == NULL, WGT_ERR_SHAPE, "axis -4");
    CHECK_ERROR(wgt_cumsum(a, 3) == NULL, WGT_ERR_SHAPE, "axis 3");
    wgt_tensor *s = wgt_full(ctx, WGT_F32, 0, NULL, 2);
    CHECK_ERROR(wgt_argmin(s, 0, 0) == NULL, WGT_ERR_SHAPE, "rank 0");
    /* A NULL input keeps the first error of a chain. */
    wgt_clear_error();
    CHECK(wgt_std(wgt_sum(a, 2, dup, 0), 0, NULL, 0, 0) == NULL && test_contains(wgt_last_error(), "wgt_sum"),
          "message: %s", wgt_last_error());
    wgt_clear_error();
    wgt_release(s);
    wgt_release(a);
}

/* ---- integers, long sums, stability, many outputs ------------------------------------ */

TEST_BACKENDS(reduce_integer_wraparound) {
    int64_t shapes[2][2] = {{17, 5}, {3, 1031}};
    int axis = 1;
    for (int s = 0; s < 2; s++)
        for (wgt_dtype dt = WGT_I32; dt <= WGT_U32; dt++) {
            wgt_tensor *x = make_input(ctx, dt, s ? SLICED : CONTIGUOUS, 2, shapes[s], 300 + dt * 2 + s, VALUES_WIDE);
            check_op(OP_SUM, x, 1, &axis, 0, "wide");
            check_op(OP_PROD, x, 1, &axis, 1, "wide");
            check_op(OP_SUM, x, 0, NULL, 0, "wide");
            check_op(OP_MAX, x, 0, NULL, 0, "wide");
            check_op(OP_MIN, x, 1, &axis, 0, "wide");
            wgt_release(x);
        }
}

TEST_BACKENDS(reduce_long_sum_and_stable_var) {
    /* 1,000,003 values in [0, 1): a plain f32 running sum would be off by ~1e-4 relative;
     * blocked and tree summation stays within a few 1e-6. */
    int64_t n[1] = {1000003};
    wgt_tensor *x = wgt_rand_uniform(ctx, WGT_F32, 1, n, 0, 1, 4242);
    wgt_tensor *s = wgt_sum(x, 0, NULL, 0);
    double *v = test_read_f64(x), *got = test_read_f64(s), want = 0;
    for (int64_t i = 0; v && i < n[0]; i++) want += v[i];
    CHECK(v && got && fabs(got[0] - want) <= 2e-5 * want, "sum of 1000003: %.9g, want %.9g", got ? got[0] : 0, want);
    free(v);
    free(got);
    wgt_release(s);
    wgt_release(x);
    /* f16 values with an f16-sized mean: accumulating in f16 would stall at 2048. */
    wgt_tensor *h = wgt_full(ctx, WGT_F16, 1, n, 0.1), *hm = wgt_mean(h, 0, NULL, 0), *hs = wgt_sum(h, 0, NULL, 0);
    double *vm = test_read_f64(hm), *vs = test_read_f64(hs), tenth = wgt_f16_to_f32(wgt_f32_to_f16(0.1f));
    CHECK(vm && fabs(vm[0] - tenth) <= 1e-3 * tenth, "f16 mean of 1000003: %g", vm ? vm[0] : 0);
    CHECK(vs && isinf(vs[0]) && vs[0] > 0, "f16 sum beyond 65504 rounds to infinity: %g", vs ? vs[0] : 0);
    free(vm);
    free(vs);
    wgt_release(h);
    wgt_release(hm);
    wgt_release(hs);
    /* var of values with a mean far larger than their spread: E[x^2] - E[x]^2 in f32 would
     * lose every digit; the two-pass result is within the usual bound. */
    int64_t rows[2] = {4, 4099};
    wgt_tensor *big = wgt_rand_normal(ctx, WGT_F32, 2, rows, 1e4, 1, 77);
    int axis = 1;
    check_op(OP_VAR1, big, 1, &axis, 0, "mean 1e4, spread 1");
    check_op(OP_STD0, big, 1, &axis, 1, "mean 1e4, spread 1");
    wgt_release(big);
}

/* Many outputs: [70000, 3] (one invocation per output), broadcast rows of 1024 (a few
 * invocations per output, the input stays small), and more outputs than 65535 workgroups
 * of 256 hold, so the launch needs the 2-D grid of workgroups. */
TEST_BACKENDS(reduce_many_outputs_2d_grid) {
    int axis = 1;
    int64_t small[2] = {70000, 3};
    wgt_tensor *x = host_tensor(ctx, WGT_I32, 2, small, 5, VALUES_SIGNED);
    check_op(OP_SUM, x, 1, &axis, 0, "many rows");
    check_op(OP_ARGMAX, x, 1, &axis, 0, "many rows");
    wgt_release(x);
    /* Rows of 1024 copies of one value, broadcast from a column. */
    int64_t col[2] = {70001, 1}, wide[2] = {70001, 1024};
    wgt_tensor *base = host_tensor(ctx, WGT_F32, 2, col, 6, VALUES_SIGNED), *b = wgt_broadcast_to(base, 2, wide);
    wgt_tensor *r = wgt_sum(b, 1, &axis, 1);
    double *v = test_read_f64(base), *got = r ? test_read_f64(r) : NULL;
    CHECK(v && got && wgt_tensor_numel(r) == col[0], "sum of broadcast [70001, 1024]: %s", wgt_last_error());
    int bad = 0;
    for (int64_t i = 0; v && got && i < col[0]; i++) {
        expected e = {1024 * v[i], U32_ROUNDOFF * growth(1024) * 1024 * fabs(v[i]) + 1e-30};
        if (!matches(got[i], e) && bad++ < 3) CHECK(0, "row %lld: %.9g, want %.9g", (long long)i, got[i], e.value);
    }
    free(v);
    free(got);
    wgt_release(r);
    wgt_release(base);
    wgt_release(b);
    /* Rows of 2 copies of i: 256 outputs per workgroup, so this needs more than 65535. */
    const int64_t rows = 65535LL * 256 + 299;
    int64_t grid[2] = {rows, 2};
    wgt_tensor *seq = wgt_arange(ctx, WGT_I32, 0, (double)rows, 1);
    wgt_tensor *seq2 = wgt_reshape(seq, 2, (int64_t[]){rows, 1}), *pairs = wgt_broadcast_to(seq2, 2, grid);
    wgt_tensor *twice = wgt_sum(pairs, 1, &axis, 0);
    int32_t *out = malloc((size_t)rows * 4);
    CHECK(twice && out && wgt_tensor_read(twice, out, (size_t)rows * 4) == WGT_OK, "sum of [%lld, 2]: %s",
          (long long)rows, wgt_last_error());
    bad = 0;
    for (int64_t i = 0; twice && out && i < rows; i++)
        if (out[i] != 2 * i && bad++ < 3) CHECK(0, "[%lld, 2] row %lld: %d", (long long)rows, (long long)i, out[i]);
    free(out);
    wgt_release(seq);
    wgt_release(seq2);
    wgt_release(pairs);
    wgt_release(twice);
}

/* ---- long rows: split reductions, 16-byte loads, column reductions --------------------- */

/* Values suited to op: products that neither vanish at once nor explode (integers wrap),
 * ties and NaN for the selections, signed values otherwise. */
static value_kind values_for(test_op op) {
    return op == OP_PROD ? VALUES_PROD : op == OP_MAX || op == OP_MIN || op >= OP_ARGMAX ? VALUES_TIES : VALUES_SIGNED;
}

/* Reduces long rows (split into chunks whose partial results a second pass combines) and
 * long columns (split along the reduced axis) with every op in ops, each on the types in
 * dts (rotating over the shapes when rotate is set, to keep the kernel compiles few):
 * dense rows of a multiple of four (16-byte loads) and of odd length, a whole 1-D tensor
 * with a tail after its last vector, views at aligned and unaligned offsets, strided rows,
 * and columns with odd output counts (f16 results share words). */
static void check_long_rows(wgt_context *ctx, int nops, const test_op *ops, int ndts, const wgt_dtype *dts, int rotate,
                            const char *what) {
    static const int64_t dense_even[2] = {2, 70000}, dense_odd[2] = {3, 70001}, flat[1] = {70003};
    static const int64_t strided[2] = {2, 40001}, col3[2] = {40001, 3}, col67[2] = {3001, 67}, trans[2] = {3, 50000};
    char desc[96];
    uint64_t seed = 7000;
    int axis1 = 1, axis0 = 0;
    for (int i = 0; i < nops; i++)
        for (int j = 0; j < ndts; j++)
            for (int shape = 0; shape < 8; shape++) {
                if (rotate && (shape + i + j) % ndts != 0) continue;
                test_op op = ops[i];
                wgt_dtype dt = dts[j];
                value_kind k = values_for(op);
                int one = op >= OP_ARGMAX; /* argmax and argmin take one axis */
                wgt_tensor *x = NULL, *base = NULL;
                switch (shape) {
                case 0: x = host_tensor(ctx, dt, 2, dense_even, seed++, k); break;
                case 1: x = host_tensor(ctx, dt, 2, dense_odd, seed++, k); break;
                case 2: x = host_tensor(ctx, dt, 1, flat, seed++, k); break;
                case 3: /* 1-D views at offsets 8 (whole vectors for every type) and 3 */
                case 4:
                    base = host_tensor(ctx, dt, 1, flat, seed++, k);
                    x = wgt_slice(base, 0, shape == 3 ? 8 : 3, flat[0] - 5, 1);
                    break;
                case 5: x = make_input(ctx, dt, SLICED, 2, strided, seed++, k); break;
                case 6: x = host_tensor(ctx, dt, 2, (i + j) % 2 ? col3 : col67, seed++, k); break;
                default: x = make_input(ctx, dt, TRANSPOSED, 2, trans, seed++, k); break;
                }
                snprintf(desc, sizeof desc, "%s, long rows %d", what, shape);
                CHECK(x != NULL, "%s %s: %s", desc, wgt_dtype_name(dt), wgt_last_error());
                if (!x) {
                    wgt_release(base);
                    continue;
                }
                int ndim = wgt_tensor_ndim(x);
                if (shape == 6) check_op(op, x, 1, &axis0, (i + j) % 2, desc);          /* columns */
                else if (ndim == 1) check_op(op, x, one, &axis0, shape % 2, desc);    /* everything */
                else check_op(op, x, 1, &axis1, shape % 2, desc);                     /* rows */
                wgt_release(x);
                wgt_release(base);
            }
}

TEST_BACKENDS(reduce_long_rows_split_every_op) {
    test_op ops[OP_COUNT];
    for (int i = 0; i < OP_COUNT; i++) ops[i] = (test_op)i;
    check_long_rows(ctx, OP_COUNT, ops, 4, dtypes, 1, "rotating types");
    /* f32 and f16 on every shape: the float paths differ most between layouts. */
    static const test_op float_ops[] = {OP_SUM, OP_VAR1, OP_ARGMIN};
    check_long_rows(ctx, 3, float_ops, 2, dtypes, 0, "every shape");
}

/* Without subgroups the whole-workgroup combine is a tree in workgroup memory: the same
 * checks on a device that pretends to have none. */
TEST(reduce_long_rows_without_subgroups) {
    wgt_context *gpu = test_webgpu_context();
    if (!gpu) return;
    ((wgt_webgpu *)wgt_context_record(gpu)->backend)->has_subgroups = 0;
    static const test_op ops[] = {OP_SUM, OP_PROD, OP_VAR0, OP_ARGMAX};
    check_long_rows(gpu, 4, ops, 2, dtypes, 1, "no subgroups");
    /* Rows of 1031: a workgroup each, unsplit. */
    int64_t shape[2] = {5, 1031};
    int axis = 1;
    static const test_op row_ops[] = {OP_SUM, OP_MAX, OP_PROD, OP_VAR1, OP_ARGMIN};
    for (int i = 0; i < 5; i++) {
        wgt_tensor *x = host_tensor(gpu, dtypes[i % 4], 2, shape, 60 + (uint64_t)i, values_for(row_ops[i]));
        check_op(row_ops[i], x, 1, &axis, i % 2, "no subgroups");
        wgt_release(x);
    }
    wgt_context_release(gpu);
}

/* Precision of the split paths: a long sum of positive values and var of values whose mean
 * is far larger than their spread, over rows and columns split into chunks. */
TEST_BACKENDS(reduce_split_precision) {
    int64_t rows[2] = {3, 100003}, cols[2] = {100003, 3};
    int axis1 = 1, axis0 = 0;
    wgt_tensor *u = wgt_rand_uniform(ctx, WGT_F32, 2, rows, 0, 1, 31);
    wgt_tensor *v = wgt_rand_normal(ctx, WGT_F32, 2, rows, 1e4, 1, 32);
    wgt_tensor *c = wgt_rand_normal(ctx, WGT_F32, 2, cols, -1e4, 1, 33);
    wgt_tensor *h = wgt_rand_normal(ctx, WGT_F16, 2, cols, 100, 1, 34);
    check_op(OP_SUM, u, 1, &axis1, 0, "uniform [0, 1)");
    check_op(OP_MEAN, u, 0, NULL, 0, "uniform [0, 1)");
    check_op(OP_VAR1, v, 1, &axis1, 0, "mean 1e4, spread 1");
    check_op(OP_STD0, v, 0, NULL, 0, "mean 1e4, spread 1");
    check_op(OP_VAR0, c, 1, &axis0, 1, "mean -1e4, spread 1");
    check_op(OP_VAR1, h, 1, &axis0, 0, "f16 mean 100, spread 1");
    check_op(OP_MEAN, h, 1, &axis0, 0, "f16 mean 100, spread 1");
    wgt_release(u), wgt_release(v), wgt_release(c), wgt_release(h);
}

/* Rows broadcast from one row (stride 0 between rows, dense within: read as vectors, every
 * row from the same place), 128 invocations per row (the 2-D grid of workgroups beyond
 * 65535, shared by every configuration of the kernel, is reduce_many_outputs_2d_grid's). */
TEST_BACKENDS(reduce_broadcast_rows) {
    int64_t row[2] = {1, 2048}, rows[2] = {3001, 2048};
    int axis = 1;
    for (wgt_dtype dt = WGT_F32; dt <= WGT_F16; dt++) {
        wgt_tensor *base = host_tensor(ctx, dt, 2, row, 80 + dt, VALUES_TIES), *b = wgt_broadcast_to(base, 2, rows);
        wgt_tensor *r = wgt_sum(b, 1, &axis, 0), *m = wgt_argmax(b, 1, 0);
        double *x = test_read_f64(base), *got = r ? test_read_f64(r) : NULL, *am = m ? test_read_f64(m) : NULL;
        CHECK(x && got && am && wgt_tensor_numel(r) == rows[0], "%s: %s", wgt_dtype_name(dt), wgt_last_error());
        expected e = x ? reference(OP_SUM, dt, x, row[1]) : (expected){0, 0};
        expected ea = x ? reference(OP_ARGMAX, dt, x, row[1]) : (expected){0, 0};
        int bad = 0;
        for (int64_t i = 0; x && got && am && i < rows[0]; i++)
            if ((!matches(got[i], e) || am[i] != ea.value) && bad++ < 3)
                CHECK(0, "%s row %lld: sum %.9g (want %.9g), argmax %g (want %g)", wgt_dtype_name(dt), (long long)i,
                      got[i], e.value, am[i], ea.value);
        free(x), free(got), free(am);
        wgt_release(r), wgt_release(m), wgt_release(b), wgt_release(base);
    }
}

/* ---- cumsum ------------------------------------------------------------------------- */

/* Compares cumsum(a, axis) with a float64 (or wrapping integer) running sum; the float
 * bound is that of a sequential f32 sum, which grows with the position along the axis. */
static void check_cumsum(wgt_tensor *a, int axis, const char *what) {
    int ndim = wgt_tensor_ndim(a), ax = (axis + ndim) % ndim;
    const int64_t *shape = wgt_tensor_shape(a);
    wgt_dtype dt = wgt_tensor_dtype(a);
    wgt_tensor *r = wgt_cumsum(a, axis);
    CHECK(r && wgt_tensor_dtype(r) == dt && wgt_tensor_ndim(r) == ndim, "cumsum %s %s axis %d: %s", wgt_dtype_name(dt),
          what, axis, wgt_last_error());
    double *x = test_read_f64(a), *got = r ? test_read_f64(r) : NULL;
    int64_t inner = 1, n = wgt_tensor_numel(a), len = shape[ax];
    for (int d = ax + 1; d < ndim; d++) inner *= shape[d];
    /* Running sums in place, row-major: the previous element along the axis is i - inner. */
    double *sum = malloc((size_t)(n > 0 ? n : 1) * sizeof *sum), *abs_sum = malloc((size_t)(n > 0 ? n : 1) * sizeof *abs_sum);
    uint32_t *isum = malloc((size_t)(n > 0 ? n : 1) * sizeof *isum);
    CHECK(x && got && sum && abs_sum && isum, "cumsum %s: reading back: %s", what, wgt_last_error());
    int bad = 0;
    for (int64_t i = 0; x && got && sum && abs_sum && isum && i < n; i++) {
        int64_t j = i / inner % len;
        sum[i] = x[i] + (j ? sum[i - inner] : 0);
        abs_sum[i] = fabs(x[i]) + (j ? abs_sum[i - inner] : 0);
        isum[i] = (uint32_t)(int64_t)x[i] + (j ? isum[i - inner] : 0);
        expected e = {sum[i], out_rel(dt) * fabs(sum[i]) + U32_ROUNDOFF * (double)(j + 1) * abs_sum[i] + out_abs(dt)};
        if (is_int(dt)) e.value = wrap32(dt, isum[i]), e.tol = 0;
        if (!matches(got[i], e) && bad++ < 3)
            CHECK(0, "cumsum %s %s axis %d: element %lld is %.9g, want %.9g", wgt_dtype_name(dt), what, axis, (long long)i,
                  got[i], e.value);
    }
    free(sum);
    free(abs_sum);
    free(isum);
    free(x);
    free(got);
    wgt_release(r);
}

TEST_BACKENDS(cumsum_dtypes_layouts_axes) {
    uint64_t seed = 900;
    int config = 0;
    for (size_t s = 0; s < sizeof test_ranks / sizeof *test_ranks; s++)
        for (int axis = 0; axis < test_ranks[s]; axis++, config++)
            for (size_t d = 0; d < sizeof dtypes / sizeof *dtypes; d++) {
                layout l = (layout)((config + (int)d) % LAYOUT_COUNT);
                wgt_tensor *x = make_input(ctx, dtypes[d], l, test_ranks[s], test_shapes[s], seed++,
                                           is_int(dtypes[d]) && d % 2 ? VALUES_WIDE : VALUES_SIGNED);
                check_cumsum(x, axis % 2 ? axis - test_ranks[s] : axis, layout_names[l]);
                wgt_release(x);
            }
}

TEST_BACKENDS(cumsum_sizes_and_long_rows) {
    for (size_t d = 0; d < sizeof dtypes / sizeof *dtypes; d++) {
        int64_t one[1] = {1}, empty[2] = {4, 0}, odd[2] = {3, 5}, longrow[1] = {100003};
        wgt_tensor *a = host_tensor(ctx, dtypes[d], 1, one, 1, VALUES_SIGNED);
        wgt_tensor *e = wgt_zeros(ctx, dtypes[d], 2, empty);
        wgt_tensor *o = host_tensor(ctx, dtypes[d], 2, odd, 2, VALUES_SIGNED); /* f16 rows share words */
        wgt_tensor *l = host_tensor(ctx, dtypes[d], 1, longrow, 3, VALUES_SIGNED);
        check_cumsum(a, 0, "size-1");
        check_cumsum(o, 0, "odd");
        check_cumsum(o, 1, "odd");
        check_cumsum(l, -1, "long row");
        wgt_tensor *ec = wgt_cumsum(e, 1);
        CHECK(ec && wgt_tensor_numel(ec) == 0 && wgt_tensor_shape(ec)[0] == 4, "empty cumsum: %s", wgt_last_error());
        wgt_release(ec);
        wgt_release(a);
        wgt_release(e);
        wgt_release(o);
        wgt_release(l);
    }
}

/* ---- the two backends on the same inputs ------------------------------------------------ */

TEST(reduce_webgpu_matches_cpu) {
    wgt_context *cpu, *gpu;
    if (!test_backend_pair(&cpu, &gpu)) return;
    int64_t shape[3] = {9, 33, 65};
    int axes[2] = {-1, 0};
    /* Every op in two types each (the types rotate), to keep the kernel compiles few. */
    for (size_t pass = 0; pass < 2; pass++)
        for (int op = 0; op <= OP_COUNT; op++) { /* OP_COUNT stands for cumsum here */
            size_t d = ((size_t)op + 3 * pass) % 4;
            wgt_tensor *r[2];
            wgt_context *cs[2] = {cpu, gpu};
            for (int k = 0; k < 2; k++) {
                wgt_tensor *x = make_input(cs[k], dtypes[d], TRANSPOSED, 3, shape, 40 + d,
                                           op == OP_PROD ? VALUES_PROD : op >= OP_ARGMAX ? VALUES_TIES : VALUES_SIGNED);
                r[k] = op == OP_COUNT ? wgt_cumsum(x, 1) : apply((test_op)op, x, op >= OP_ARGMAX ? 1 : 2, axes, 0);
                wgt_release(x);
            }
            double *x = test_read_f64(r[0]), *y = test_read_f64(r[1]);
            CHECK(x && y && wgt_tensor_numel(r[0]) == wgt_tensor_numel(r[1]), "%s %s: %s",
                  op == OP_COUNT ? "cumsum" : op_names[op], wgt_dtype_name(dtypes[d]), wgt_last_error());
            /* Both are within their bound of the exact value; the relative part covers the
             * ops compared here (rows of at most 9 * 65 elements of moderate values). */
            double tol = is_int(dtypes[d]) && op != OP_MEAN && op < OP_VAR0 ? 0 : dtypes[d] == WGT_F16 ? 4e-3 : 2e-5;
            if (op >= OP_ARGMAX && op < OP_COUNT) tol = 0;
            int bad = 0;
            for (int64_t i = 0; x && y && i < wgt_tensor_numel(r[0]); i++) {
                int same = (isnan(x[i]) && isnan(y[i])) || fabs(x[i] - y[i]) <= tol * (fabs(x[i]) + 1);
                if (!same && bad++ < 3)
                    CHECK(0, "%s %s element %lld: webgpu %.9g, cpu %.9g", op == OP_COUNT ? "cumsum" : op_names[op],
                          wgt_dtype_name(dtypes[d]), (long long)i, y[i], x[i]);
            }
            free(x);
            free(y);
            wgt_release(r[0]);
            wgt_release(r[1]);
        }
    wgt_context_release(gpu);
    wgt_context_release(cpu);
}

/* var and std of rows holding NaN or infinity are NaN on every backend (a GPU compiler may
 * turn a clamp into max(), which would drop the NaN). */
TEST_BACKENDS(reduce_var_of_nan_and_inf_rows_is_nan) {
    float v[3][4] = {{1, 2, NAN, 4}, {1, INFINITY, 3, 4}, {-INFINITY, 0, 0, 0}};
    int64_t shape[2] = {3, 4};
    int axis = 1;
    wgt_tensor *t = wgt_tensor_from_data(ctx, WGT_F32, 2, shape, v, sizeof v, WGT_USAGE_DEFAULT);
    wgt_tensor *var = wgt_var(t, 1, &axis, 0, 0), *sd = wgt_std(t, 1, &axis, 0, 1);
    float a[3] = {0, 0, 0}, b[3] = {0, 0, 0};
    CHECK(var && sd && wgt_tensor_read(var, a, sizeof a) == WGT_OK && wgt_tensor_read(sd, b, sizeof b) == WGT_OK, "%s",
          wgt_last_error());
    for (int i = 0; i < 3; i++) CHECK(isnan(a[i]) && isnan(b[i]), "row %d: var %g std %g", i, a[i], b[i]);
    wgt_release(t), wgt_release(var), wgt_release(sd);
}
