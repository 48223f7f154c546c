/*
 * Ops whose output length depends on the data: unique, nonzero and argwhere. Their sizes can
 * only be known once the input is computed, so each waits for it (a read, which runs the
 * pending work) and builds its outputs on the host. unique sorts on the backend first (a
 * stable argsort of the flattened input: equal elements lie together, first occurrence
 * first), so the host only walks the sorted run once.
 */
#include <stdlib.h>
#include <string.h>

#include "node.h"
#include "core/dtype_table.h"

/* Element i of row-major data of dtype as a double (bits: its raw bits), for equality. */
static double value_at(wgt_dtype dtype, const void *data, int64_t i, uint32_t *bits) {
    const uint8_t *p = data;
    if (dtype == WGT_F16) {
        uint16_t h;
        memcpy(&h, p + (size_t)i * 2, 2);
        *bits = h;
        return wgt_f16_to_f32(h);
    }
    uint32_t b;
    memcpy(&b, p + (size_t)i * 4, 4);
    *bits = b;
    if (dtype == WGT_F32) {
        float f;
        memcpy(&f, &b, 4);
        return f;
    }
    return dtype == WGT_I32 ? (double)(int32_t)b : (double)b;
}

/* A new tensor of host data (NULL with the error set). */
static wgt_tensor *from_host(wgt_context *ctx, wgt_dtype dtype, int ndim, const int64_t *shape, const void *data) {
    int64_t n = wgt_numel(ndim, shape);
    size_t bytes = (size_t)n * (dtype == WGT_F16 ? 2 : 4);
    return wgt_tensor_from_data(ctx, dtype, ndim, shape, bytes ? data : NULL, bytes, WGT_USAGE_DEFAULT);
}

/* Reads all of t, row-major, into fresh host memory (NULL with the error set). */
static void *read_all(const char *fn, wgt_tensor *t) {
    size_t bytes = wgt_tensor_nbytes(t);
    void *buf = malloc(bytes ? bytes : 1);
    if (!buf) {
        wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory for %zu bytes", fn, bytes);
        return NULL;
    }
    if (bytes && wgt_tensor_read(t, buf, bytes) != WGT_OK) {
        free(buf);
        return NULL;
    }
    return buf;
}

wgt_status wgt_unique(wgt_tensor *a, wgt_tensor **values, wgt_tensor **indices, wgt_tensor **inverse,
                      wgt_tensor **counts) {
    static const char fn[] = "wgt_unique";
    wgt_tensor **outs[4] = {values, indices, inverse, counts};
    for (int i = 0; i < 4; i++)
        if (outs[i]) *outs[i] = NULL;
    wgt_status st = wgt_check_tensor(fn, "a", a);
    if (st != WGT_OK) return st;
    if (wgt_dtype_is_narrow(a->dtype)) {
        /* The distinct values of the exact cast to i32 or f32 (core/narrow.c: the order and
         * the equalities are the same), cast back. */
        wgt_tensor *wide = wgt_narrow_widen(a), *v = NULL;
        st = wide ? wgt_unique(wide, values ? &v : NULL, indices, inverse, counts) : wgt_last_status();
        wgt_release(wide);
        if (st == WGT_OK && values && !(*values = wgt_narrow_cast_to(v, a->dtype))) {
            st = wgt_last_status();
            for (int i = 1; i < 4; i++)
                if (outs[i]) wgt_release(*outs[i]), *outs[i] = NULL;
        }
        return st;
    }
    int64_t n = wgt_tensor_numel(a);
    if (n > INT32_MAX)
        return wgt_error(WGT_ERR_LIMIT, "%s: a has %lld elements; i32 positions reach %d", fn, (long long)n, INT32_MAX);
    wgt_context *ctx = a->storage->ctx;
    wgt_tensor *flat = wgt_reshape(a, 1, &n);
    wgt_tensor *sorted = NULL, *order = NULL;
    st = flat ? wgt_sort_along(fn, flat, 0, 0, -1, &sorted, &order) : wgt_last_status();
    wgt_release(flat);
    if (st != WGT_OK) return st;
    int32_t *pos = read_all(fn, order);
    void *sv = pos ? read_all(fn, sorted) : NULL;
    wgt_release(order);
    wgt_release(sorted);
    /* Scratch: the unique values' bits, first positions, counts, and each element's group. */
    uint32_t *ubits = sv ? malloc(sizeof *ubits * (size_t)(n + 1)) : NULL;
    int32_t *first = ubits ? malloc(sizeof *first * (size_t)(n + 1)) : NULL;
    int32_t *cnt = first ? malloc(sizeof *cnt * (size_t)(n + 1)) : NULL;
    int32_t *inv = cnt ? malloc(sizeof *inv * (size_t)(n + 1)) : NULL;
    int64_t m = 0;
    if (!inv) {
        if (sv) wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory for %lld elements", fn, (long long)n);
        st = wgt_last_status();
        goto done;
    }
    double prev = 0;
    for (int64_t i = 0; i < n; i++) {
        uint32_t bits;
        double v = value_at(a->dtype, sv, i, &bits);
        /* NaN != NaN: each NaN starts a value of its own; -0.0 == 0.0 joins them. */
        if (i == 0 || v != prev) {
            ubits[m] = bits;
            first[m] = pos[i];
            cnt[m] = 0;
            m++;
        }
        cnt[m - 1]++;
        inv[pos[i]] = (int32_t)(m - 1);
        prev = v;
    }
    /* The unique values in a's dtype, packed from their bits. */
    if (a->dtype == WGT_F16)
        for (int64_t i = 0; i < m; i++) ((uint16_t *)sv)[i] = (uint16_t)ubits[i];
    else
        memcpy(sv, ubits, sizeof *ubits * (size_t)m);
    wgt_tensor *made[4] = {
        values ? from_host(ctx, a->dtype, 1, &m, sv) : NULL,
        indices ? from_host(ctx, WGT_I32, 1, &m, first) : NULL,
        inverse ? from_host(ctx, WGT_I32, a->ndim, a->shape, inv) : NULL,
        counts ? from_host(ctx, WGT_I32, 1, &m, cnt) : NULL,
    };
    st = WGT_OK;
    for (int i = 0; i < 4; i++)
        if (outs[i] && !made[i] && st == WGT_OK) st = wgt_last_status();
    for (int i = 0; i < 4; i++) {
        if (st == WGT_OK && outs[i]) *outs[i] = made[i];
        else wgt_release(made[i]);
    }
done:
    free(pos);
    free(sv);
    free(ubits);
    free(first);
    free(cnt);
    free(inv);
    return st;
}

/* The row-major positions of a's nonzero elements: *count of them, in a malloc'd array. */
static wgt_status nonzero_positions(const char *fn, wgt_tensor *a, int64_t **out, int64_t *count) {
    *out = NULL;
    *count = 0;
    wgt_status st = wgt_check_tensor(fn, "a", a);
    if (st != WGT_OK) return st;
    if (wgt_dtype_is_narrow(a->dtype)) {
        /* The positions of the exact cast to i32 or f32 (NaN stays nonzero, -0.0 zero). */
        wgt_tensor *wide = wgt_narrow_widen(a);
        st = wide ? nonzero_positions(fn, wide, out, count) : wgt_last_status();
        wgt_release(wide);
        return st;
    }
    if (a->dtype != WGT_F32 && a->dtype != WGT_F16 && a->dtype != WGT_I32 && a->dtype != WGT_U32)
        return wgt_error(WGT_ERR_DTYPE, "%s: a is %s; nonzero takes f32, f16, bf16, i32, u32, i16, u16, i8, u8 or bool",
                         fn, wgt_dtype_name(a->dtype));
    int64_t n = wgt_tensor_numel(a);
    if (n > INT32_MAX)
        return wgt_error(WGT_ERR_LIMIT, "%s: a has %lld elements; i32 positions reach %d", fn, (long long)n, INT32_MAX);
    void *data = read_all(fn, a);
    int64_t *pos = data ? malloc(sizeof *pos * (size_t)(n ? n : 1)) : NULL;
    if (!pos) {
        if (data) wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory for %lld positions", fn, (long long)n);
        free(data);
        return wgt_last_status();
    }
    /* Zero is every bit clear but the sign for floats (so NaN counts), all bits for integers. */
    uint32_t mask = a->dtype == WGT_F32 ? 0x7fffffffu : a->dtype == WGT_F16 ? 0x7fffu : 0xffffffffu;
    for (int64_t i = 0; i < n; i++) {
        uint32_t bits;
        value_at(a->dtype, data, i, &bits);
        if (bits & mask) pos[(*count)++] = i;
    }
    free(data);
    *out = pos;
    return WGT_OK;
}

/* [count, rank] coordinates (row-major) of the positions, as i32. */
static int32_t *coordinates(const char *fn, const wgt_tensor *a, const int64_t *pos, int64_t count) {
    int r = a->ndim;
    int32_t *c = malloc(sizeof *c * (size_t)(count * r > 0 ? count * r : 1));
    if (!c) {
        wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory for %lld coordinates", fn, (long long)count);
        return NULL;
    }
    for (int64_t i = 0; i < count; i++) {
        int64_t rem = pos[i];
        for (int d = r - 1; d >= 0; d--) {
            c[i * r + d] = (int32_t)(rem % a->shape[d]);
            rem /= a->shape[d];
        }
    }
    return c;
}

wgt_status wgt_nonzero(wgt_tensor *a, wgt_tensor **out) {
    static const char fn[] = "wgt_nonzero";
    wgt_status st = wgt_check_tensor(fn, "a", a);
    if (st != WGT_OK) return st;
    if (!out) return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    if (a->ndim == 0) return wgt_error(WGT_ERR_SHAPE, "%s: a has rank 0; nonzero needs at least one dimension", fn);
    int64_t *pos, count;
    if ((st = nonzero_positions(fn, a, &pos, &count)) != WGT_OK) return st;
    int32_t *c = coordinates(fn, a, pos, count);
    int32_t *col = c ? malloc(sizeof *col * (size_t)(count ? count : 1)) : NULL;
    wgt_tensor *made[WGT_MAX_DIMS] = {0};
    st = col ? WGT_OK : wgt_last_status();
    if (!col && c) st = wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
    for (int d = 0; d < a->ndim && st == WGT_OK; d++) {
        for (int64_t i = 0; i < count; i++) col[i] = c[i * a->ndim + d];
        if (!(made[d] = from_host(a->storage->ctx, WGT_I32, 1, &count, col))) st = wgt_last_status();
    }
    for (int d = 0; d < a->ndim; d++) {
        if (st == WGT_OK) out[d] = made[d];
        else wgt_release(made[d]);
    }
    free(pos);
    free(c);
    free(col);
    return st;
}

wgt_tensor *wgt_argwhere(wgt_tensor *a) {
    static const char fn[] = "wgt_argwhere";
    int64_t *pos, count;
    if (nonzero_positions(fn, a, &pos, &count) != WGT_OK) return NULL;
    int32_t *c = coordinates(fn, a, pos, count);
    int64_t shape[2] = {count, a->ndim};
    wgt_tensor *t = c ? from_host(a->storage->ctx, WGT_I32, 2, shape, c) : NULL;
    free(pos);
    free(c);
    return t;
}
