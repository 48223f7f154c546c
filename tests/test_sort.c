/*
 * Differential tests of sort, argsort, top-k and searchsorted against an exact host
 * reference: a stable sort of each row's positions by value (NaN above +inf, NaNs equal,
 * -0.0 equal to 0.0; descending reverses the value order and keeps equal elements in
 * position order), so the indices must match exactly and the values bit for bit (NaN for
 * NaN, the sign of zero). Every dtype, contiguous, transposed and strided (negative step)
 * inputs, the first and last axis, both directions; row lengths 1, 2, 3, 1000 and 65537
 * (past the one-workgroup tile of the WebGPU sort, up to many merge passes), lengths and
 * batches around the WebGPU radix sort's threshold and tiles, all-equal rows, 2^20 + 3
 * elements, the narrow types (bf16, i16, u16, i8, u8, bool); values with many
 * duplicates, NaN, infinities, -0.0 and subnormals; empty tensors; and the errors. The
 * runner's poisoned pass shows unwritten outputs.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "core/handles.h"
#include "core/tensor.h"
#include "test.h"

static const wgt_dtype dtypes[] = {WGT_F32, WGT_F16, WGT_I32, WGT_U32};
static const wgt_dtype narrow_dtypes[] = {WGT_BF16, WGT_I16, WGT_U16, WGT_I8, WGT_U8, WGT_BOOL};

static uint32_t rng(uint64_t *s) {
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(*s >> 32);
}

typedef enum { FEW_VALUES, WIDE_VALUES } value_kind;

/* A value of dt: FEW_VALUES draws from a small pool (duplicates, and for floats NaN, the
 * infinities, both zeros and a subnormal), WIDE_VALUES from the whole range. */
static double draw(wgt_dtype dt, value_kind k, uint64_t *s) {
    static const double fpool[] = {0.0, -0.0, 1.0, -1.0, 2.5, INFINITY, -INFINITY, NAN, 6e-8, -3.0, 0.5};
    static const double ipool[] = {0, 1, -1, 7, -7, 2147483647.0, -2147483648.0};
    static const double upool[] = {0, 1, 7, 2147483648.0, 4294967295.0};
    int is_float = dt == WGT_F32 || dt == WGT_F16;
    uint32_t r = rng(s);
    if (k == FEW_VALUES) {
        if (is_float) return fpool[r % (sizeof fpool / sizeof *fpool)];
        return dt == WGT_I32 ? ipool[r % 7] : upool[r % 5];
    }
    if (dt == WGT_I32) return (double)(int32_t)r;
    if (dt == WGT_U32) return r;
    return ((double)r / 4294967296.0 - 0.5) * (dt == WGT_F16 ? 100 : 1e6);
}

/* The bits of a value of a narrow type: FEW_VALUES from a small pool (for bf16 NaN, the
 * infinities, both zeros and a subnormal; for integers the extremes), WIDE_VALUES any bits. */
static uint32_t draw_narrow(wgt_dtype dt, value_kind k, uint64_t *s) {
    static const uint32_t bpool[] = {0x0000, 0x8000, 0x3f80, 0xbf80, 0x7f80, 0xff80, 0x7fc0, 0x0001, 0x4020};
    static const uint32_t ipool[] = {0, 1, 0xffffffffu, 7, 0xfffffff9u, 0x80000000u, 0x7fffffffu};
    uint32_t r = rng(s), bits = 8 * (uint32_t)wgt_dtype_size(dt), mask = (1u << bits) - 1;
    if (dt == WGT_BOOL) return r & 1;
    if (dt == WGT_BF16) return k == FEW_VALUES ? bpool[r % 9] : r & mask;
    if (k == WIDE_VALUES) return r & mask;
    uint32_t v = ipool[r % 7];
    /* The extremes of the narrow type: its sign bit alone, or all bits below it. */
    if (v == 0x80000000u) v = 1u << (bits - 1);
    if (v == 0x7fffffffu) v = (1u << (bits - 1)) - 1;
    return v & mask;
}

static wgt_tensor *host_tensor(wgt_context *ctx, wgt_dtype dt, int ndim, const int64_t *shape, uint64_t seed,
                               value_kind k) {
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    size_t es = wgt_dtype_size(dt);
    char *raw = malloc((size_t)(n > 0 ? n : 1) * es);
    uint64_t s = seed * 7919 + 17;
    for (int64_t i = 0; raw && i < n; i++) {
        if (dt != WGT_F32 && dt != WGT_F16 && dt != WGT_I32 && dt != WGT_U32) {
            uint32_t b = draw_narrow(dt, k, &s);
            memcpy(raw + (size_t)i * es, &b, es); /* little-endian: the low bytes */
            continue;
        }
        double v = draw(dt, k, &s);
        switch (dt) {
        case WGT_F32: ((float *)raw)[i] = (float)v; break;
        case WGT_F16: ((uint16_t *)raw)[i] = wgt_f32_to_f16((float)v); break;
        case WGT_I32: ((int32_t *)raw)[i] = (int32_t)v; break;
        default: ((uint32_t *)raw)[i] = (uint32_t)v; break;
        }
    }
    wgt_tensor *t = raw ? wgt_tensor_from_data(ctx, dt, ndim, shape, raw, (size_t)n * es, WGT_USAGE_DEFAULT) : NULL;
    free(raw);
    return t;
}

typedef enum { CONTIGUOUS, TRANSPOSED, STRIDED, LAYOUT_COUNT } layout;
static const char *const layout_names[] = {"contiguous", "transposed", "strided"};

/* A view of the given shape (rank 1 or 2) in the layout; the base tensor is released. */
static wgt_tensor *make_input(wgt_context *ctx, wgt_dtype dt, layout l, int ndim, const int64_t *shape,
                              uint64_t seed, value_kind k) {
    int64_t s[2] = {shape[0], ndim > 1 ? shape[1] : 1};
    wgt_tensor *base, *v;
    switch (l) {
    case TRANSPOSED: {
        if (ndim == 1) return host_tensor(ctx, dt, 1, shape, seed, k);
        int64_t r[2] = {s[1], s[0]};
        base = host_tensor(ctx, dt, 2, r, seed, k);
        v = wgt_transpose(base, 0, 1);
        break;
    }
    case STRIDED: { /* every other element of the last axis, backwards */
        int64_t d[2] = {s[0], s[1]};
        d[ndim - 1] = 2 * shape[ndim - 1];
        base = host_tensor(ctx, dt, ndim, d, seed, k);
        v = wgt_slice(base, ndim - 1, -1, -(d[ndim - 1] + 1), -2);
        break;
    }
    default: return host_tensor(ctx, dt, ndim, shape, seed, k);
    }
    wgt_release(base);
    return v;
}

/* The elements of t as doubles, for every sortable type; malloc'd, or NULL. */
static double *read_f64(wgt_tensor *t) {
    if (!t) return NULL;
    wgt_dtype dt = wgt_tensor_dtype(t);
    if (dt == WGT_F32 || dt == WGT_F16 || dt == WGT_I32 || dt == WGT_U32) return test_read_f64(t);
    int64_t n = wgt_tensor_numel(t);
    size_t nbytes = wgt_tensor_nbytes(t);
    double *out = malloc((size_t)(n > 0 ? n : 1) * sizeof *out);
    unsigned char *raw = malloc(nbytes ? nbytes : 1);
    if (!out || !raw || wgt_tensor_read(t, raw, nbytes) != WGT_OK) {
        free(out);
        free(raw);
        return NULL;
    }
    for (int64_t i = 0; i < n; i++) {
        uint16_t h;
        memcpy(&h, raw + 2 * i, dt == WGT_BF16 || dt == WGT_I16 || dt == WGT_U16 ? 2 : 0);
        switch (dt) {
        case WGT_BF16: {
            uint32_t b = (uint32_t)h << 16;
            float f;
            memcpy(&f, &b, 4);
            out[i] = f;
            break;
        }
        case WGT_I16: out[i] = (int16_t)h; break;
        case WGT_U16: out[i] = h; break;
        case WGT_I8: out[i] = (int8_t)raw[i]; break;
        default: out[i] = raw[i]; break; /* u8, bool */
        }
    }
    free(raw);
    return out;
}

/* The reference order: -1, 0 or 1 as a sorts before, with or after b (NaN largest). */
static int order(double a, double b) {
    if (isnan(a) || isnan(b)) return isnan(a) - isnan(b);
    return (a > b) - (a < b);
}

static const double *sort_vals;
static int sort_desc;
static int by_value_then_position(const void *pa, const void *pb) {
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    int c = order(sort_vals[a], sort_vals[b]);
    if (sort_desc) c = -c;
    return c ? c : (a > b) - (a < b);
}

static int same_value(double a, double b) { return (isnan(a) && isnan(b)) || (a == b && signbit(a) == signbit(b)); }

/* Checks values and indices (a's shape with k along axis) against the stable reference of
 * a's rows along axis; returns nonzero when they match. */
static int check_rows(wgt_tensor *a, int axis, int descending, int64_t k, wgt_tensor *values, wgt_tensor *indices,
                      const char *what) {
    int ndim = wgt_tensor_ndim(a);
    const int64_t *shape = wgt_tensor_shape(a);
    int ax = ndim == 0 ? 0 : axis < 0 ? axis + ndim : axis;
    int64_t outer = 1, inner = 1, n = ndim ? shape[ax] : 1;
    for (int d = 0; d < ax; d++) outer *= shape[d];
    for (int d = ax + 1; d < ndim; d++) inner *= shape[d];
    for (int d = 0; values && d < ndim; d++) {
        int64_t want = d == ax ? k : shape[d];
        CHECK(wgt_tensor_shape(values)[d] == want && wgt_tensor_shape(indices)[d] == want,
              "%s: dimension %d is %lld, want %lld", what, d, (long long)wgt_tensor_shape(values)[d], (long long)want);
    }
    CHECK(values && wgt_tensor_dtype(values) == wgt_tensor_dtype(a) && wgt_tensor_dtype(indices) == WGT_I32,
          "%s: %s", what, wgt_last_error());
    double *x = read_f64(a), *got = values ? read_f64(values) : NULL;
    double *gi = indices ? test_read_f64(indices) : NULL;
    double *row = malloc(sizeof *row * (size_t)(n ? n : 1));
    int64_t *ref = malloc(sizeof *ref * (size_t)(n ? n : 1));
    int ok = x && got && gi && row && ref;
    CHECK(ok, "%s: reading back: %s", what, wgt_last_error());
    for (int64_t o = 0; ok && o < outer; o++)
        for (int64_t i = 0; ok && i < inner; i++) {
            for (int64_t j = 0; j < n; j++) {
                row[j] = x[(o * n + j) * inner + i];
                ref[j] = j;
            }
            sort_vals = row;
            sort_desc = descending;
            qsort(ref, (size_t)n, sizeof *ref, by_value_then_position);
            for (int64_t j = 0; ok && j < k; j++) {
                int64_t at = (o * k + j) * inner + i;
                if (gi[at] != (double)ref[j] || !same_value(got[at], row[ref[j]])) {
                    CHECK(0, "%s: row (%lld, %lld) place %lld: index %.0f value %.9g, want %lld value %.9g", what,
                          (long long)o, (long long)i, (long long)j, gi[at], got[at], (long long)ref[j], row[ref[j]]);
                    ok = 0;
                }
            }
        }
    free(x);
    free(got);
    free(gi);
    free(row);
    free(ref);
    return ok;
}

/* sort and argsort of a along axis, checked against the reference. */
static void check_sort(wgt_tensor *a, int axis, int descending, const char *what) {
    wgt_tensor *v = wgt_sort(a, axis, descending), *i = wgt_argsort(a, axis, descending);
    int ndim = wgt_tensor_ndim(a);
    int64_t n = ndim ? wgt_tensor_shape(a)[axis < 0 ? axis + ndim : axis] : 1;
    check_rows(a, axis, descending, n, v, i, what);
    wgt_release(v);
    wgt_release(i);
}

static void check_topk(wgt_tensor *a, int64_t k, int axis, int largest, const char *what) {
    wgt_tensor *v = NULL, *i = NULL;
    wgt_status st = wgt_topk(a, k, axis, largest, 1, &v, &i);
    CHECK(st == WGT_OK, "%s: %s", what, wgt_last_error());
    if (st == WGT_OK) check_rows(a, axis, largest, k, v, i, what);
    wgt_release(v);
    wgt_release(i);
}

TEST_BACKENDS(sort_dtypes_layouts_axes) {
    static const int64_t shape[2] = {5, 37};
    for (size_t t = 0; t < sizeof dtypes / sizeof *dtypes; t++)
        for (int l = 0; l < LAYOUT_COUNT; l++)
            for (int kind = 0; kind < 2; kind++) {
                wgt_tensor *a = make_input(ctx, dtypes[t], (layout)l, 2, shape, 3 + (uint64_t)(t * 7 + l), kind);
                CHECK(a != NULL, "%s", wgt_last_error());
                char what[128];
                for (int axis = -1; a && axis < 2; axis++)
                    for (int desc = 0; desc < 2; desc++) {
                        snprintf(what, sizeof what, "sort %s %s %s axis %d%s", wgt_dtype_name(dtypes[t]),
                                 layout_names[l], kind ? "wide" : "few", axis, desc ? " descending" : "");
                        check_sort(a, axis, desc, what);
                    }
                wgt_release(a);
            }
}

TEST_BACKENDS(sort_row_lengths) {
    static const int64_t lengths[] = {1, 2, 3, 1000, 65537};
    for (size_t li = 0; li < sizeof lengths / sizeof *lengths; li++)
        for (size_t t = 0; t < sizeof dtypes / sizeof *dtypes; t++) {
            int64_t n = lengths[li];
            /* The longest rows once per type, the others in both directions and layouts. */
            for (int l = 0; l < (n > 1000 ? 1 : LAYOUT_COUNT); l++) {
                wgt_tensor *a = make_input(ctx, dtypes[t], (layout)l, 1, &n, 11 + li, n > 3 ? WIDE_VALUES : FEW_VALUES);
                char what[128];
                for (int desc = 0; a && desc < (n > 1000 ? 1 : 2); desc++) {
                    snprintf(what, sizeof what, "sort %s %s length %lld%s", wgt_dtype_name(dtypes[t]), layout_names[l],
                             (long long)n, desc ? " descending" : "");
                    check_sort(a, 0, desc, what);
                }
                wgt_release(a);
            }
        }
    /* Many rows of many duplicates, and many short rows in one tile. */
    int64_t many[2] = {3, 4097}, short_rows[2] = {1000, 3};
    wgt_tensor *a = make_input(ctx, WGT_F32, CONTIGUOUS, 2, many, 5, FEW_VALUES);
    wgt_tensor *b = make_input(ctx, WGT_I32, STRIDED, 2, short_rows, 6, FEW_VALUES);
    check_sort(a, 1, 1, "sort f32 [3, 4097] descending");
    check_sort(a, 1, 0, "sort f32 [3, 4097]");
    check_sort(b, 1, 0, "sort i32 [1000, 3]");
    check_sort(b, 0, 1, "sort i32 [1000, 3] axis 0 descending");
    wgt_release(a);
    wgt_release(b);
}

TEST_BACKENDS(sort_empty_and_scalar) {
    static const int64_t shapes[3][2] = {{0, 4}, {4, 0}, {0, 0}};
    for (int s = 0; s < 3; s++)
        for (int axis = 0; axis < 2; axis++) {
            wgt_tensor *a = wgt_zeros(ctx, WGT_F32, 2, shapes[s]);
            wgt_tensor *v = wgt_sort(a, axis, 0), *i = wgt_argsort(a, axis, 1);
            CHECK(v && i && wgt_tensor_numel(v) == 0 && wgt_tensor_numel(i) == 0 && wgt_tensor_shape(v)[0] == shapes[s][0] &&
                      wgt_tensor_shape(i)[1] == shapes[s][1],
                  "empty sort axis %d: %s", axis, wgt_last_error());
            wgt_tensor *tv = NULL, *ti = NULL;
            CHECK(wgt_topk(a, 0, axis, 1, 1, &tv, &ti) == WGT_OK && wgt_tensor_numel(tv) == 0,
                  "empty topk axis %d: %s", axis, wgt_last_error());
            wgt_release(v);
            wgt_release(i);
            wgt_release(tv);
            wgt_release(ti);
            wgt_release(a);
        }
    wgt_tensor *s = wgt_full(ctx, WGT_I32, 0, NULL, -5);
    check_sort(s, 0, 0, "sort of a rank-0 tensor");
    check_sort(s, -1, 1, "sort of a rank-0 tensor, axis -1");
    wgt_release(s);
}

TEST_BACKENDS(topk_rows) {
    int64_t shape[2] = {7, 1000};
    for (size_t t = 0; t < sizeof dtypes / sizeof *dtypes; t++)
        for (int kind = 0; kind < 2; kind++) {
            wgt_tensor *a = make_input(ctx, dtypes[t], kind ? TRANSPOSED : CONTIGUOUS, 2, shape, 21 + t, kind);
            static const int64_t ks[] = {0, 1, 50, 1000};
            char what[128];
            for (size_t ki = 0; ki < 4; ki++)
                for (int largest = 0; largest < 2; largest++) {
                    snprintf(what, sizeof what, "topk %s %s k %lld %s", wgt_dtype_name(dtypes[t]), kind ? "wide" : "few",
                             (long long)ks[ki], largest ? "largest" : "smallest");
                    check_topk(a, ks[ki], -1, largest, what);
                }
            check_topk(a, 3, 0, 1, "topk along axis 0");
            wgt_release(a);
        }
}

/* Long rows with k up to a tile and past it: the WebGPU top-k keeps halving blocks of the
 * next power of two above k (k <= 512) rather than sorting whole rows. */
TEST_BACKENDS(topk_long_rows) {
    static const int64_t ks[] = {1, 2, 50, 300, 512, 513};
    int64_t shape[2] = {3, 65537};
    for (int kind = 0; kind < 2; kind++) {
        wgt_tensor *a = make_input(ctx, kind ? WGT_F16 : WGT_F32, kind ? STRIDED : CONTIGUOUS, 2, shape, 51, kind);
        char what[128];
        for (size_t ki = 0; a && ki < sizeof ks / sizeof *ks; ki++) {
            snprintf(what, sizeof what, "topk [3, 65537] %s k %lld %s", kind ? "f16 wide" : "f32 few", (long long)ks[ki],
                     ki % 2 ? "smallest" : "largest");
            check_topk(a, ks[ki], 1, ki % 2 == 0, what);
        }
        wgt_release(a);
    }
    int64_t cols[2] = {4099, 5};
    wgt_tensor *c = make_input(ctx, WGT_I32, TRANSPOSED, 2, cols, 52, FEW_VALUES);
    check_topk(c, 37, 0, 1, "topk i32 [4099, 5] along axis 0");
    wgt_release(c);
}

/* Reference searchsorted: positions below v (right: at or below) in the order of sort. */
static int64_t search_ref(const double *s, int64_t n, double v, int right) {
    int64_t c = 0;
    for (int64_t i = 0; i < n; i++) c += right ? order(s[i], v) <= 0 : order(s[i], v) < 0;
    return c;
}

/* searchsorted of vals (count of them) into srt (n), both sides, against search_ref; the
 * tensors stay the caller's. */
static void check_search(wgt_tensor *srt, wgt_tensor *vals, int64_t n, int64_t count) {
    const char *name = wgt_dtype_name(wgt_tensor_dtype(vals));
    double *s = read_f64(srt), *v = read_f64(vals);
    for (int right = 0; right < 2; right++) {
        wgt_tensor *r = wgt_searchsorted(srt, vals, right);
        double *got = r ? test_read_f64(r) : NULL;
        CHECK(got && s && v && wgt_tensor_dtype(r) == WGT_I32 && wgt_tensor_ndim(r) == wgt_tensor_ndim(vals),
              "searchsorted %s: %s", name, wgt_last_error());
        for (int64_t i = 0; got && s && v && i < count; i++) {
            int64_t want = search_ref(s, n, v[i], right);
            if (got[i] != (double)want) {
                CHECK(0, "searchsorted %s right %d: value %lld (%.9g) at %.0f, want %lld", name, right, (long long)i,
                      v[i], got[i], (long long)want);
                break;
            }
        }
        free(got);
        wgt_release(r);
    }
    free(s);
    free(v);
}

TEST_BACKENDS(searchsorted_sides) {
    for (size_t t = 0; t < sizeof dtypes / sizeof *dtypes; t++) {
        int64_t n = 301, vs[2] = {6, 17};
        wgt_tensor *raw = make_input(ctx, dtypes[t], STRIDED, 1, &n, 31 + t, FEW_VALUES);
        wgt_tensor *srt = wgt_sort(raw, 0, 0);
        wgt_tensor *vals = make_input(ctx, dtypes[t], TRANSPOSED, 2, vs, 41 + t, t % 2 ? WIDE_VALUES : FEW_VALUES);
        check_search(srt, vals, n, vs[0] * vs[1]);
        wgt_release(raw);
        wgt_release(srt);
        wgt_release(vals);
    }
    /* Into an empty array every value goes at 0; no values give an empty result. */
    int64_t zero = 0, three = 3;
    wgt_tensor *e = wgt_zeros(ctx, WGT_F32, 1, &zero), *v3 = wgt_ones(ctx, WGT_F32, 1, &three);
    wgt_tensor *r = wgt_searchsorted(e, v3, 1), *r0 = wgt_searchsorted(v3, e, 0);
    double *got = r ? test_read_f64(r) : NULL;
    CHECK(got && got[0] == 0 && got[2] == 0 && r0 && wgt_tensor_numel(r0) == 0, "searchsorted empty: %s",
          wgt_last_error());
    free(got);
    wgt_release(r);
    wgt_release(r0);
    wgt_release(e);
    wgt_release(v3);
}

TEST_BACKENDS(sort_errors) {
    int64_t shape[2] = {3, 4}, k32[2] = {2, 32};
    wgt_tensor *a = wgt_zeros(ctx, WGT_F32, 2, shape), *v = NULL, *i = NULL;
    CHECK_ERROR(wgt_sort(a, 2, 0) == NULL, WGT_ERR_SHAPE, "axis 2");
    CHECK_ERROR(wgt_argsort(a, -3, 0) == NULL, WGT_ERR_SHAPE, "axis -3");
    CHECK_ERROR(wgt_topk(a, 5, 1, 1, 1, &v, &i) == WGT_ERR_SHAPE && !v && !i, WGT_ERR_SHAPE, "k is 5");
    CHECK_ERROR(wgt_topk(a, -1, 1, 1, 1, &v, &i) == WGT_ERR_SHAPE, WGT_ERR_SHAPE, "negative");
    CHECK_ERROR(wgt_topk(a, 1, 1, 1, 1, NULL, &i) == WGT_ERR_INVALID_ARGUMENT, WGT_ERR_INVALID_ARGUMENT, "values");
    wgt_tensor *q = wgt_tensor_create(ctx, WGT_Q8_0, 2, k32, WGT_USAGE_DEFAULT);
    CHECK(q != NULL, "%s", wgt_last_error());
    CHECK_ERROR(wgt_sort(q, 1, 0) == NULL, WGT_ERR_DTYPE, "q8_0");
    wgt_tensor *b = wgt_zeros(ctx, WGT_I32, 1, &shape[1]);
    CHECK_ERROR(wgt_searchsorted(b, a, 0) == NULL, WGT_ERR_DTYPE, "i32");
    CHECK_ERROR(wgt_searchsorted(a, a, 0) == NULL, WGT_ERR_SHAPE, "1-D");
    wgt_release(q);
    wgt_release(b);
    wgt_release(a);
}

/* Row lengths around the WebGPU choice between the bitonic network (up to 2048) and the
 * radix sort (2049 on), and around the radix sort's tiles of 4096: one short tile, a row
 * ending a tile exactly, a tile plus one; batches whose rows span several tiles, and every
 * layout, so rows never mix and each tile's places follow the previous rows'. */
TEST_BACKENDS(sort_radix_lengths) {
    static const int64_t lengths[] = {2048, 2049, 4096, 4097, 8191, 12289};
    for (size_t li = 0; li < sizeof lengths / sizeof *lengths; li++)
        for (size_t t = 0; t < sizeof dtypes / sizeof *dtypes; t++) {
            int64_t n = lengths[li];
            int l = (int)((li + t) % LAYOUT_COUNT), desc = (int)(li % 2);
            wgt_tensor *a = make_input(ctx, dtypes[t], (layout)l, 1, &n, 61 + li * 5 + t, (li + t) % 2 ? WIDE_VALUES : FEW_VALUES);
            char what[128];
            snprintf(what, sizeof what, "sort %s %s length %lld%s", wgt_dtype_name(dtypes[t]), layout_names[l],
                     (long long)n, desc ? " descending" : "");
            check_sort(a, 0, desc, what);
            wgt_release(a);
        }
    static const int64_t batches[][2] = {{5, 4097}, {3, 9000}, {70, 2049}};
    for (size_t b = 0; b < sizeof batches / sizeof *batches; b++)
        for (int l = 0; l < LAYOUT_COUNT; l++) {
            wgt_dtype dt = dtypes[(b + (size_t)l) % 4];
            wgt_tensor *a = make_input(ctx, dt, (layout)l, 2, batches[b], 71 + b * 3 + (uint64_t)l, l % 2 ? FEW_VALUES : WIDE_VALUES);
            char what[128];
            snprintf(what, sizeof what, "sort %s %s [%lld, %lld]%s", wgt_dtype_name(dt), layout_names[l],
                     (long long)batches[b][0], (long long)batches[b][1], l == 1 ? " descending" : "");
            check_sort(a, 1, l == 1, what);
            wgt_release(a);
        }
}

/* Equal keys keep their order: all-equal rows (every digit of every pass the same, so each
 * pass's whole ranking is the stable rank), and rows of two values, where a descending sort
 * is not the reverse of an ascending one; -0.0 and 0.0 count as one value and keep order. */
TEST_BACKENDS(sort_radix_stability) {
    int64_t shape[2] = {3, 5000};
    wgt_tensor *z = wgt_zeros(ctx, WGT_F32, 2, shape);
    check_sort(z, 1, 0, "sort of equal f32 rows");
    check_sort(z, 1, 1, "sort of equal f32 rows, descending");
    wgt_release(z);
    int64_t n = 9001;
    float *raw = malloc(sizeof *raw * (size_t)n);
    uint64_t s = 5;
    for (int64_t i = 0; raw && i < n; i++) raw[i] = rng(&s) % 3 == 0 ? -0.0f : rng(&s) % 2 ? 0.0f : 1.0f;
    wgt_tensor *a = raw ? wgt_tensor_from_data(ctx, WGT_F32, 1, &n, raw, sizeof *raw * (size_t)n, WGT_USAGE_DEFAULT) : NULL;
    CHECK(a != NULL, "%s", wgt_last_error());
    check_sort(a, 0, 0, "sort of zeros, negative zeros and ones");
    check_sort(a, 0, 1, "sort of zeros, negative zeros and ones, descending");
    free(raw);
    wgt_release(a);
    wgt_tensor *h = wgt_full(ctx, WGT_F16, 1, &n, 3);
    check_sort(h, 0, 1, "sort of equal f16, descending");
    check_topk(h, 700, 0, 1, "topk 700 of equal f16");
    wgt_release(h);
}

/* 2^20 + 3 elements in one row (256 tiles, a two-level scan of their counts), and top-k
 * past a tile of a long row, which the radix sort serves whole. */
TEST_BACKENDS(sort_radix_large) {
    int64_t n = (1 << 20) + 3;
    wgt_tensor *a = make_input(ctx, WGT_F32, CONTIGUOUS, 1, &n, 81, WIDE_VALUES);
    check_sort(a, 0, 0, "sort f32 of 2^20 + 3");
    check_topk(a, 1000, 0, 1, "topk 1000 of 2^20 + 3");
    wgt_release(a);
}

/* bf16, i16, u16, i8, u8 and bool through the same keys: rows short enough for the bitonic
 * network and long enough for the radix sort (one pass per byte of the element), in every
 * layout, both directions and axes; top-k; and searchsorted on their keys. */
TEST_BACKENDS(sort_narrow_dtypes) {
    static const int64_t shapes[][2] = {{5, 37}, {3, 5001}};
    for (size_t t = 0; t < sizeof narrow_dtypes / sizeof *narrow_dtypes; t++) {
        wgt_dtype dt = narrow_dtypes[t];
        for (int sh = 0; sh < 2; sh++)
            for (int l = 0; l < LAYOUT_COUNT; l++) {
                value_kind k = (l + sh) % 2 ? WIDE_VALUES : FEW_VALUES;
                wgt_tensor *a = make_input(ctx, dt, (layout)l, 2, shapes[sh], 91 + t * 7 + (uint64_t)(l + 3 * sh), k);
                CHECK(a != NULL, "%s", wgt_last_error());
                char what[128];
                for (int axis = sh; a && axis < 2; axis++)
                    for (int desc = 0; desc < 2; desc++) {
                        snprintf(what, sizeof what, "sort %s %s %s [%lld, %lld] axis %d%s", wgt_dtype_name(dt),
                                 layout_names[l], k == WIDE_VALUES ? "wide" : "few", (long long)shapes[sh][0],
                                 (long long)shapes[sh][1], axis, desc ? " descending" : "");
                        check_sort(a, axis, desc, what);
                    }
                snprintf(what, sizeof what, "topk 20 %s %s", wgt_dtype_name(dt), layout_names[l]);
                if (a) check_topk(a, 20, 1, l % 2, what);
                wgt_release(a);
            }
        int64_t n = 301, vs = 40;
        wgt_tensor *raw = make_input(ctx, dt, STRIDED, 1, &n, 97 + t, FEW_VALUES);
        wgt_tensor *srt = wgt_sort(raw, 0, 0), *vals = make_input(ctx, dt, CONTIGUOUS, 1, &vs, 98 + t, WIDE_VALUES);
        check_search(srt, vals, n, vs);
        wgt_release(raw);
        wgt_release(srt);
        wgt_release(vals);
    }
}

/* A device whose binding size cannot hold a row's 8-byte (key, position) pairs sorts it by
 * the bitonic network instead, which binds 4-byte keys and positions apart: a different
 * number of dispatches, the same result. */
TEST(sort_radix_binding_limit) {
    wgt_context *gpu = test_webgpu_context();
    if (!gpu) return;
    int64_t n = 5000;
    wgt_tensor *a = make_input(gpu, WGT_F32, CONTIGUOUS, 1, &n, 101, WIDE_VALUES);
    CHECK(a && wgt_eval(1, &a) == WGT_OK, "%s", wgt_last_error());
    uint64_t *max = &wgt_handle_record(a)->storage->ctx->backend->max_binding_bytes, saved = *max, used[2];
    for (int narrow = 0; narrow < 2; narrow++) {
        *max = narrow ? (uint64_t)n * 8 - 4 : saved;
        wgt_stats before, after;
        wgt_context_stats(gpu, &before);
        check_sort(a, 0, narrow, narrow ? "sort under a small binding limit" : "sort under the device's limit");
        wgt_context_stats(gpu, &after);
        used[narrow] = after.dispatches - before.dispatches;
    }
    *max = saved;
    CHECK(used[0] != used[1], "the same %llu dispatches under both limits: the radix sort ran under both",
          (unsigned long long)used[0]);
    wgt_release(a);
    wgt_context_release(gpu);
}
