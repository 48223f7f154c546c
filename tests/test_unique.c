/*
 * unique, nonzero and argwhere: the ops sized on the host. Each is compared with a direct
 * host reference computed from the input as read back: unique by a quadratic scan (each
 * NaN distinct, -0.0 and 0.0 one value, which is the first of them in the input), nonzero
 * and argwhere by walking the elements in row-major order (NaN nonzero, -0.0 zero). Inputs
 * are transposed views with many duplicates, of every type the ops take (the narrow ones made
 * by casting the pool, so 2^31 and 2^32 - 1 wrap to 0 and -1 or 255); empty and rank-0 inputs
 * and the errors too.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

static const wgt_dtype dtypes[] = {WGT_F32, WGT_F16, WGT_I32, WGT_U32, WGT_BF16,
                                    WGT_I16, WGT_U16, WGT_I8,  WGT_U8,  WGT_BOOL};

/* The type the pool is written in for dt: dt itself, or for a narrow type the 4-byte type of
 * its kind, cast to dt afterwards. */
static wgt_dtype pool_type(wgt_dtype dt) {
    if (dt == WGT_BF16) return WGT_F32;
    if (dt == WGT_I8 || dt == WGT_I16) return WGT_I32;
    return dt == WGT_U8 || dt == WGT_U16 || dt == WGT_BOOL ? WGT_U32 : dt;
}

/* [rows, cols] of the pool's values in a seeded order, as a transposed view of [cols, rows]. */
static wgt_tensor *pool_view(wgt_context *ctx, wgt_dtype narrow, int64_t rows, int64_t cols, uint64_t seed) {
    static const double fpool[] = {0.0, -0.0, 1.0, -1.0, NAN, INFINITY, 2.5, NAN, 0.0, 3.0};
    static const double ipool[] = {0, 1, 4294967295.0, 7, 0, 2147483648.0, 1, 9, 3, 0};
    wgt_dtype dt = pool_type(narrow);
    int64_t n = rows * cols, shape[2] = {cols, rows};
    size_t es = wgt_dtype_size(dt);
    char *raw = malloc((size_t)(n ? n : 1) * es);
    uint64_t s = seed;
    for (int64_t i = 0; raw && i < n; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        int pick = (int)((s >> 33) % 10);
        double v = dt == WGT_F32 || dt == WGT_F16 ? fpool[pick] : ipool[pick];
        switch (dt) {
        case WGT_F32: ((float *)raw)[i] = (float)v; break;
        case WGT_F16: ((uint16_t *)raw)[i] = wgt_f32_to_f16((float)v); break;
        case WGT_I32: ((int32_t *)raw)[i] = (int32_t)(int64_t)v; break;
        default: ((uint32_t *)raw)[i] = (uint32_t)v; break;
        }
    }
    wgt_tensor *base = raw ? wgt_tensor_from_data(ctx, dt, 2, shape, raw, (size_t)n * es, WGT_USAGE_DEFAULT) : NULL;
    free(raw);
    if (base && narrow != dt) {
        wgt_tensor *c = wgt_cast(base, narrow);
        wgt_release(base);
        base = c;
    }
    wgt_tensor *t = wgt_transpose(base, 0, 1);
    wgt_release(base);
    return t;
}

static int same_bits(double a, double b) { return (isnan(a) && isnan(b)) || (a == b && signbit(a) == signbit(b)); }

static void check_unique(wgt_tensor *a, const char *what) {
    wgt_tensor *v = NULL, *idx = NULL, *inv = NULL, *cnt = NULL;
    wgt_status st = wgt_unique(a, &v, &idx, &inv, &cnt);
    CHECK(st == WGT_OK && v && idx && inv && cnt, "%s: %s", what, wgt_last_error());
    if (st != WGT_OK) return;
    int64_t n = wgt_tensor_numel(a), m = wgt_tensor_numel(v);
    CHECK(wgt_tensor_dtype(v) == wgt_tensor_dtype(a), "%s: values are %s", what, wgt_dtype_name(wgt_tensor_dtype(v)));
    double *x = test_read_f64(a), *gv = test_read_f64(v), *gi = test_read_f64(idx), *ginv = test_read_f64(inv),
           *gc = test_read_f64(cnt);
    /* Reference: the first occurrence of each distinct value, in ascending order. */
    int64_t *first = malloc(sizeof *first * (size_t)(n ? n : 1)), nu = 0;
    for (int64_t i = 0; x && first && i < n; i++) {
        int seen = 0;
        for (int64_t j = 0; j < i && !isnan(x[i]); j++) seen |= x[j] == x[i];
        if (!seen) first[nu++] = i;
    }
    /* Insertion sort of the firsts by value (NaN last, in position order). */
    for (int64_t i = 1; first && i < nu; i++)
        for (int64_t j = i; j > 0; j--) {
            double p = x[first[j - 1]], q = x[first[j]];
            int after = isnan(p) ? !isnan(q) || first[j - 1] > first[j] : !isnan(q) && p > q;
            if (!after) break;
            int64_t t = first[j];
            first[j] = first[j - 1];
            first[j - 1] = t;
        }
    CHECK(x && gv && gi && ginv && gc && first && m == nu, "%s: %lld unique values, want %lld", what, (long long)m,
          (long long)nu);
    CHECK(wgt_tensor_ndim(inv) == wgt_tensor_ndim(a) && wgt_tensor_dtype(v) == wgt_tensor_dtype(a) &&
              wgt_tensor_dtype(idx) == WGT_I32 && wgt_tensor_dtype(cnt) == WGT_I32,
          "%s: output types or inverse rank", what);
    for (int64_t u = 0; m == nu && gv && gi && gc && u < nu; u++) {
        int64_t count = 0;
        for (int64_t i = 0; i < n; i++) count += isnan(x[first[u]]) ? i == first[u] : x[i] == x[first[u]];
        CHECK(same_bits(gv[u], x[first[u]]) && gi[u] == (double)first[u] && gc[u] == (double)count,
              "%s: unique %lld is %.9g at %.0f x%.0f, want %.9g at %lld x%lld", what, (long long)u, gv[u], gi[u], gc[u],
              x[first[u]], (long long)first[u], (long long)count);
    }
    for (int64_t i = 0; m == nu && ginv && gv && i < n; i++) {
        int64_t at = (int64_t)ginv[i];
        CHECK(at >= 0 && at < m && (isnan(x[i]) ? gi[at] == (double)i : gv[at] == x[i]),
              "%s: inverse of element %lld is %lld", what, (long long)i, (long long)at);
    }
    free(x);
    free(gv);
    free(gi);
    free(ginv);
    free(gc);
    free(first);
    wgt_release(v);
    wgt_release(idx);
    wgt_release(inv);
    wgt_release(cnt);
}

TEST_BACKENDS(unique_values_counts_inverse) {
    for (size_t t = 0; t < sizeof dtypes / sizeof *dtypes; t++) {
        char what[64];
        snprintf(what, sizeof what, "unique %s", wgt_dtype_name(dtypes[t]));
        wgt_tensor *a = pool_view(ctx, dtypes[t], 13, 9, 5 + t);
        check_unique(a, what);
        wgt_release(a);
    }
    int64_t zero = 0;
    wgt_tensor *e = wgt_zeros(ctx, WGT_F32, 1, &zero), *s = wgt_full(ctx, WGT_F32, 0, NULL, 2);
    check_unique(e, "unique of nothing");
    check_unique(s, "unique of a rank-0 tensor");
    /* Outputs not asked for stay NULL; the others still come. */
    wgt_tensor *v = NULL, *c = NULL;
    CHECK(wgt_unique(s, &v, NULL, NULL, &c) == WGT_OK && v && c, "%s", wgt_last_error());
    wgt_release(v);
    wgt_release(c);
    wgt_release(e);
    wgt_release(s);
}

TEST_BACKENDS(nonzero_and_argwhere) {
    for (size_t t = 0; t < sizeof dtypes / sizeof *dtypes; t++) {
        wgt_tensor *a = pool_view(ctx, dtypes[t], 6, 11, 9 + t);
        wgt_tensor *nz[2] = {NULL, NULL}, *aw = wgt_argwhere(a);
        CHECK(wgt_nonzero(a, nz) == WGT_OK && aw, "nonzero %s: %s", wgt_dtype_name(dtypes[t]), wgt_last_error());
        double *x = test_read_f64(a), *r = nz[0] ? test_read_f64(nz[0]) : NULL, *c = nz[1] ? test_read_f64(nz[1]) : NULL;
        double *w = aw ? test_read_f64(aw) : NULL;
        int64_t count = 0;
        for (int64_t i = 0; x && r && c && w && i < 66; i++) {
            if (x[i] == 0) continue;
            CHECK(count < wgt_tensor_numel(nz[0]) && r[count] == (double)(i / 11) && c[count] == (double)(i % 11) &&
                      w[2 * count] == r[count] && w[2 * count + 1] == c[count],
                  "nonzero %s: position %lld (element %lld) wrong", wgt_dtype_name(dtypes[t]), (long long)count,
                  (long long)i);
            count++;
        }
        CHECK(x && nz[0] && wgt_tensor_numel(nz[0]) == count && wgt_tensor_numel(nz[1]) == count &&
                  wgt_tensor_shape(aw)[0] == count && wgt_tensor_shape(aw)[1] == 2,
              "nonzero %s: %lld positions, want %lld", wgt_dtype_name(dtypes[t]),
              (long long)(nz[0] ? wgt_tensor_numel(nz[0]) : -1), (long long)count);
        free(x);
        free(r);
        free(c);
        free(w);
        wgt_release(nz[0]);
        wgt_release(nz[1]);
        wgt_release(aw);
        wgt_release(a);
    }
    int64_t shape[2] = {3, 0};
    wgt_tensor *e = wgt_zeros(ctx, WGT_U32, 2, shape), *s = wgt_full(ctx, WGT_F32, 0, NULL, 1), *out[2] = {NULL, NULL};
    wgt_tensor *ae = wgt_argwhere(e), *as = wgt_argwhere(s);
    CHECK(wgt_nonzero(e, out) == WGT_OK && wgt_tensor_numel(out[0]) == 0 && wgt_tensor_numel(out[1]) == 0,
          "nonzero of an empty tensor: %s", wgt_last_error());
    CHECK(ae && wgt_tensor_shape(ae)[0] == 0 && wgt_tensor_shape(ae)[1] == 2 && as && wgt_tensor_shape(as)[0] == 1 &&
              wgt_tensor_shape(as)[1] == 0,
          "argwhere of empty and rank-0 tensors: %s", wgt_last_error());
    CHECK_ERROR(wgt_nonzero(s, out) != WGT_OK, WGT_ERR_SHAPE, "rank 0");
    CHECK_ERROR(wgt_nonzero(e, NULL) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "out is NULL");
    wgt_release(out[0]);
    wgt_release(out[1]);
    wgt_release(ae);
    wgt_release(as);
    wgt_release(e);
    wgt_release(s);
}
