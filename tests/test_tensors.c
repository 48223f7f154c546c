/*
 * Tensors and memory: creation functions, reading and writing through views, the host data
 * pointer and the unified memory model, reference counting, f16 conversion, and views
 * (transpose, slice, broadcast, reshape, as_strided, contiguous) on both backends.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/handles.h"
#include "core/tensor.h"
#include "test.h"

TEST(f16_conversion_round_trips_and_rounds_to_nearest_even) {
    for (uint32_t h = 0; h < 65536; h++) { /* every f16 value survives f16 -> f32 -> f16 */
        float f = wgt_f16_to_f32((uint16_t)h);
        uint16_t back = wgt_f32_to_f16(f);
        if (isnan(f)) CHECK((back & 0x7c00) == 0x7c00 && (back & 0x3ff), "nan 0x%04x", h);
        else CHECK(back == h, "0x%04x -> %g -> 0x%04x", h, f, back);
    }
    CHECK(wgt_f32_to_f16(1.0f + 1.0f / 2048) == 0x3c00, "tie rounds to even (down)");
    CHECK(wgt_f32_to_f16(1.0f + 3.0f / 2048) == 0x3c02, "tie rounds to even (up)");
    CHECK(wgt_f32_to_f16(65520.0f) == 0x7c00, "overflow gives infinity");
    CHECK(wgt_f32_to_f16(65519.0f) == 0x7bff, "largest finite");
    CHECK(wgt_f32_to_f16(5.96e-8f) == 0x0001, "smallest subnormal");
    CHECK(wgt_f32_to_f16(-0.0f) == 0x8000, "negative zero");
}

TEST_BACKENDS(tensor_creation_functions) {
    int64_t shape[3] = {2, 3, 4};
    wgt_tensor *z = wgt_zeros(ctx, WGT_F32, 3, shape), *o = wgt_ones(ctx, WGT_I32, 3, shape);
    wgt_tensor *f = wgt_full(ctx, WGT_F16, 3, shape, -2.5), *r = wgt_arange(ctx, WGT_F32, 1, 2, 0.25);
    wgt_tensor *u = wgt_full(ctx, WGT_U32, 3, shape, 7e9); /* saturates to UINT32_MAX */
    double *vz = test_read_f64(z), *vo = test_read_f64(o), *vf = test_read_f64(f), *vr = test_read_f64(r);
    double *vu = test_read_f64(u);
    CHECK(vz && vo && vf && vr && vu, "%s", wgt_last_error());
    for (int i = 0; vz && vo && vf && vu && i < 24; i++) {
        CHECK(vz[i] == 0 && vo[i] == 1 && vf[i] == -2.5 && vu[i] == 4294967295.0, "element %d", i);
    }
    CHECK(wgt_tensor_numel(r) == 4 && vr && vr[0] == 1 && vr[3] == 1.75, "arange");
    CHECK(wgt_tensor_nbytes(f) == 48 && wgt_tensor_dtype(f) == WGT_F16, "f16 tensor bytes");
    wgt_tensor *down = wgt_arange(ctx, WGT_I32, 5, 0, -2); /* 5, 3, 1 */
    double *vd = test_read_f64(down);
    CHECK(wgt_tensor_numel(down) == 3 && vd && vd[0] == 5 && vd[2] == 1, "descending arange");
    free(vd);
    free(vz), free(vo), free(vf), free(vr), free(vu);
    wgt_release(z), wgt_release(o), wgt_release(f), wgt_release(r), wgt_release(u), wgt_release(down);
}

TEST_BACKENDS(random_values_are_seeded_and_distributed) {
    int64_t shape[1] = {20000};
    wgt_tensor *a = wgt_rand_uniform(ctx, WGT_F32, 1, shape, -2, 3, 42), *b = wgt_rand_uniform(ctx, WGT_F32, 1, shape, -2, 3, 42);
    wgt_tensor *c = wgt_rand_uniform(ctx, WGT_F32, 1, shape, -2, 3, 43), *n = wgt_rand_normal(ctx, WGT_F32, 1, shape, 1, 2, 7);
    double *va = test_read_f64(a), *vb = test_read_f64(b), *vc = test_read_f64(c), *vn = test_read_f64(n);
    CHECK(va && vb && vc && vn, "%s", wgt_last_error());
    double mean = 0, nmean = 0, nvar = 0;
    int same_seed_equal = 1, other_seed_differs = 0, in_range = 1;
    for (int i = 0; va && vb && vc && vn && i < 20000; i++) {
        same_seed_equal &= va[i] == vb[i];
        other_seed_differs |= va[i] != vc[i];
        in_range &= va[i] >= -2 && va[i] < 3;
        mean += va[i] / 20000;
        nmean += vn[i] / 20000;
    }
    for (int i = 0; vn && i < 20000; i++) nvar += (vn[i] - nmean) * (vn[i] - nmean) / 20000;
    CHECK(same_seed_equal && other_seed_differs && in_range, "seeding");
    CHECK(fabs(mean - 0.5) < 0.05, "uniform mean %g", mean);
    CHECK(fabs(nmean - 1) < 0.06 && fabs(sqrt(nvar) - 2) < 0.06, "normal mean %g std %g", nmean, sqrt(nvar));
    free(va), free(vb), free(vc), free(vn);
    wgt_release(a), wgt_release(b), wgt_release(c), wgt_release(n);
}

TEST_BACKENDS(read_write_through_views) {
    int64_t shape[2] = {4, 6};
    wgt_tensor *t = wgt_arange(ctx, WGT_I32, 0, 24, 1);
    wgt_tensor *m = wgt_reshape(t, 2, shape);
    wgt_tensor *tr = wgt_transpose(m, 0, 1); /* [6, 4] */
    int32_t v[24];
    CHECK(wgt_tensor_read(tr, v, sizeof v) == WGT_OK, "%s", wgt_last_error());
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 4; j++) CHECK(v[i * 4 + j] == j * 6 + i, "transpose [%d,%d] = %d", i, j, v[i * 4 + j]);
    /* Write a column (a strided view) and see it in the base. */
    wgt_tensor *col = wgt_slice(m, 1, 2, 3, 1); /* [4, 1] */
    int32_t newcol[4] = {-1, -2, -3, -4};
    CHECK(wgt_tensor_write(col, newcol, sizeof newcol) == WGT_OK, "%s", wgt_last_error());
    CHECK(wgt_tensor_read(t, v, sizeof v) == WGT_OK, "%s", wgt_last_error());
    for (int i = 0; i < 24; i++) CHECK(v[i] == (i % 6 == 2 ? -(i / 6) - 1 : i), "after column write: [%d] = %d", i, v[i]);
    /* A whole-tensor write goes straight to the device; the next op must see it. */
    int32_t ones[24];
    for (int i = 0; i < 24; i++) ones[i] = 1;
    wgt_tensor *sum0 = wgt_add(t, t); /* recorded before the write: must see the old values */
    CHECK(wgt_tensor_write(t, ones, sizeof ones) == WGT_OK, "%s", wgt_last_error());
    wgt_tensor *sum1 = wgt_add(t, t);
    int32_t s0[24], s1[24];
    CHECK(wgt_tensor_read(sum0, s0, sizeof s0) == WGT_OK && wgt_tensor_read(sum1, s1, sizeof s1) == WGT_OK, "%s",
          wgt_last_error());
    CHECK(s0[3] == 6 && s0[2] == -2 && s1[0] == 2 && s1[23] == 2, "ordering of writes and ops: %d %d %d %d", s0[3], s0[2],
          s1[0], s1[23]);
    wgt_release(t), wgt_release(m), wgt_release(tr), wgt_release(col), wgt_release(sum0), wgt_release(sum1);
}

TEST_BACKENDS(f16_odd_offsets_and_lengths) {
    /* f16 sits two to a word on the GPU: views starting at odd elements and odd lengths. */
    uint16_t h[9];
    for (int i = 0; i < 9; i++) h[i] = wgt_f32_to_f16((float)i + 0.5f);
    int64_t n9[1] = {9};
    wgt_tensor *t = wgt_tensor_from_data(ctx, WGT_F16, 1, n9, h, sizeof h, WGT_USAGE_DEFAULT);
    wgt_tensor *odd = wgt_slice(t, 0, 1, 8, 2); /* elements 1,3,5,7 */
    wgt_tensor *sum = wgt_add(odd, odd);
    uint16_t out[4];
    CHECK(sum && wgt_tensor_read(sum, out, sizeof out) == WGT_OK, "%s", wgt_last_error());
    for (int i = 0; sum && i < 4; i++) CHECK(wgt_f16_to_f32(out[i]) == 2 * (2 * i + 1 + 0.5f), "[%d] = %g", i, wgt_f16_to_f32(out[i]));
    uint16_t three = wgt_f32_to_f16(-3);
    wgt_tensor *one = wgt_slice(t, 0, 4, 5, 1);
    CHECK(wgt_tensor_write(one, &three, 2) == WGT_OK, "odd-length write: %s", wgt_last_error());
    uint16_t all[9];
    CHECK(wgt_tensor_read(t, all, sizeof all) == WGT_OK && all[4] == three && all[3] == h[3] && all[5] == h[5],
          "neighbours untouched");
    wgt_release(t), wgt_release(odd), wgt_release(sum), wgt_release(one);
}

TEST_BACKENDS(unified_memory_data_pointer) {
    int64_t shape[1] = {5};
    wgt_tensor *t = wgt_arange(ctx, WGT_F32, 0, 5, 1);
    wgt_tensor *d = wgt_add(t, t); /* computed on the backend's side */
    const float *p = wgt_tensor_data(d);
    CHECK(p && p[4] == 8.0f, "data pointer syncs to host: %s", wgt_last_error());
    float *w = wgt_tensor_data_mut(d);
    CHECK(w != NULL, "%s", wgt_last_error());
    if (w) w[0] = 100.0f; /* written on the host: the next kernel must see it */
    wgt_tensor *e = wgt_add(d, t);
    float out[5];
    CHECK(e && wgt_tensor_read(e, out, sizeof out) == WGT_OK && out[0] == 100.0f && out[4] == 12.0f, "%s",
          wgt_last_error());
    wgt_tensor *v = wgt_slice(d, 0, 2, 5, 1);
    const float *pv = wgt_tensor_data(v);
    CHECK(pv && pv[0] == 4.0f, "view pointer starts at its first element");
    (void)shape;
    wgt_release(t), wgt_release(d), wgt_release(e), wgt_release(v);
}

TEST_BACKENDS(reference_counting_and_destroy) {
    int64_t shape[1] = {3};
    wgt_tensor *t = wgt_ones(ctx, WGT_F32, 1, shape);
    CHECK(wgt_retain(t) == t, "retain returns the tensor");
    wgt_release(t); /* one reference left */
    wgt_tensor *v = wgt_slice(t, 0, 1, 3, 1);
    wgt_release(t); /* the view keeps the storage */
    float out[2];
    CHECK(wgt_tensor_read(v, out, sizeof out) == WGT_OK && out[1] == 1.0f, "view outlives its base: %s", wgt_last_error());
    CHECK(wgt_tensor_destroy(v) == WGT_OK, "destroy");
    CHECK(wgt_tensor_read(v, out, sizeof out) == WGT_ERR_DESTROYED, "destroyed tensors cannot be read");
    wgt_clear_error();
    wgt_release(v);
    /* After the caller releases a context its tensors fail cleanly and can still be released. */
    wgt_context *c2 = test_new_context(wgt_context_backend(ctx));
    wgt_tensor *a = c2 ? wgt_full(c2, WGT_F32, 1, shape, 2) : NULL;
    wgt_context_release(c2);
    CHECK_ERROR(wgt_mul(a, a) == NULL, WGT_ERR_INVALID_ARGUMENT, "released");
    float full[3];
    CHECK_ERROR(wgt_tensor_read(a, full, sizeof full) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "released");
    wgt_release(a);
}

TEST_BACKENDS(views_reshape_broadcast_as_strided_contiguous) {
    int64_t s234[3] = {2, 3, 4};
    wgt_tensor *t = wgt_arange(ctx, WGT_F32, 0, 24, 1);
    wgt_tensor *r = wgt_reshape(t, 3, s234);
    CHECK(r && wgt_tensor_offset(r) == 0 && wgt_tensor_strides(r)[0] == 12, "reshape of contiguous is a view");
    wgt_tensor *tr = wgt_transpose(r, 0, 2); /* [4, 3, 2] */
    int64_t flat[1] = {-1};
    wgt_tensor *f = wgt_reshape(tr, 1, flat); /* needs a copy */
    double *vf = test_read_f64(f);
    CHECK(f && wgt_tensor_numel(f) == 24 && wgt_tensor_is_contiguous(f), "%s", wgt_last_error());
    for (int i = 0; vf && i < 24; i++) {
        int a = i / 6, b = (i / 2) % 3, c = i % 2; /* index into [4,3,2] */
        CHECK(vf[i] == c * 12 + b * 4 + a, "flattened transpose [%d] = %g", i, vf[i]);
    }
    int64_t s43[2] = {4, 6};
    wgt_tensor *head = wgt_slice(r, 0, 0, 2, 1), *first6 = wgt_slice(t, 0, 0, 6, 1);
    wgt_tensor *merge = wgt_reshape(head, 2, (int64_t[]){6, 4}); /* view: still contiguous */
    CHECK(merge && wgt_tensor_strides(merge)[0] == 4, "merge of contiguous dims is a view");
    wgt_tensor *b = wgt_broadcast_to(first6, 2, s43);
    double *vb = test_read_f64(b);
    CHECK(b && vb && vb[6] == 0 && vb[23] == 5 && wgt_tensor_strides(b)[0] == 0, "broadcast view");
    wgt_tensor *diag = wgt_as_strided(t, 1, (int64_t[]){4}, (int64_t[]){7}, 1); /* 1, 8, 15, 22 */
    double *vd = test_read_f64(diag);
    CHECK(vd && vd[0] == 1 && vd[3] == 22, "as_strided");
    wgt_tensor *c = wgt_contiguous(diag);
    CHECK(c && wgt_tensor_is_contiguous(c) && wgt_tensor_offset(c) == 0, "contiguous copy");
    double *vc = test_read_f64(c);
    CHECK(vc && vc[2] == 15, "contiguous values");
    wgt_tensor *rev = wgt_slice(t, 0, -1, -25, -3); /* 23, 20, ..., 2 */
    double *vr = test_read_f64(rev);
    CHECK(rev && wgt_tensor_numel(rev) == 8 && vr && vr[0] == 23 && vr[7] == 2, "negative step slice");
    free(vf), free(vb), free(vd), free(vc), free(vr);
    wgt_release(head), wgt_release(first6);
    wgt_release(t), wgt_release(r), wgt_release(tr), wgt_release(f), wgt_release(merge), wgt_release(b);
    wgt_release(diag), wgt_release(c), wgt_release(rev);
}

TEST_BACKENDS(f16_all_dtypes_round_trip) {
    int64_t shape[2] = {3, 5};
    const wgt_dtype types[] = {WGT_F32, WGT_F16, WGT_I32, WGT_U32};
    for (int k = 0; k < 4; k++) {
        wgt_tensor *t = wgt_rand_uniform(ctx, types[k], 2, shape, 0, 100, 3 + k);
        wgt_tensor *tt = wgt_transpose(t, 0, 1);
        wgt_tensor *c = wgt_contiguous(tt);
        double *a = test_read_f64(tt), *b = test_read_f64(c);
        for (int i = 0; a && b && i < 15; i++) CHECK(a[i] == b[i], "%s [%d]", wgt_dtype_name(types[k]), i);
        CHECK(a && b, "%s", wgt_last_error());
        free(a), free(b);
        wgt_release(t), wgt_release(tt), wgt_release(c);
    }
}

/* Reading a small view of a device-computed tensor moves only the words it spans and makes no
 * host copy of the storage; f16 views at odd element offsets, strided columns and a view over
 * most of the storage (which syncs the whole) all read the right values. */
TEST_BACKENDS(reading_a_small_view_reads_only_its_span) {
    static const int64_t shape[2] = {257, 129};
    for (int half = 0; half < 2; half++) {
        wgt_dtype dt = half ? WGT_F16 : WGT_F32;
        wgt_tensor *a = wgt_arange(ctx, dt, 0, 257 * 129, 1), *m = wgt_reshape(a, 2, shape);
        wgt_tensor *x = wgt_mul_scalar(m, 0.5); /* computed where the context computes */
        wgt_tensor *row = wgt_slice(x, 0, 100, 101, 1), *cell = wgt_slice(row, 1, 37, 40, 1);
        wgt_tensor *col = wgt_slice(x, 1, 3, 4, 1), *most = wgt_slice(x, 0, 1, 257, 1);
        CHECK(x && row && cell && col && most, "%s", wgt_last_error());
        if (!x || !row || !cell || !col || !most) return;
        float v[3];
        uint16_t h[3];
        void *out = half ? (void *)h : (void *)v;
        CHECK(wgt_tensor_read(cell, out, wgt_tensor_nbytes(cell)) == WGT_OK, "%s", wgt_last_error());
        for (int i = 0; i < 3; i++) {
            float got = half ? wgt_f16_to_f32(h[i]) : v[i];
            float want = half ? wgt_f16_to_f32(wgt_f32_to_f16((float)(100 * 129 + 37 + i))) * 0.5f
                              : (float)(100 * 129 + 37 + i) * 0.5f;
            CHECK(got == want, "%s cell[%d] = %g, want %g", wgt_dtype_name(dt), i, got, want);
        }
        wgt_storage *xs = wgt_handle_record(x)->storage;
        if (wgt_context_backend(ctx) == WGT_BACKEND_WEBGPU)
            CHECK(!xs->host_valid, "a 3-element read made a host copy of %zu bytes", xs->nbytes);
        size_t es = wgt_dtype_size(dt);
        char *cv = malloc(257 * es), *mv = malloc(256 * 129 * es);
        CHECK(cv && mv && wgt_tensor_read(col, cv, 257 * es) == WGT_OK && wgt_tensor_read(most, mv, 256 * 129 * es) == WGT_OK,
              "%s", wgt_last_error());
        for (int i = 0; cv && mv && i < 257; i += 64) {
            float c = half ? wgt_f16_to_f32(((uint16_t *)cv)[i]) : ((float *)cv)[i];
            float e = (float)(i * 129 + 3);
            if (half) e = wgt_f16_to_f32(wgt_f32_to_f16(e));
            CHECK(c == e * 0.5f, "%s col[%d] = %g", wgt_dtype_name(dt), i, c);
            if (i >= 1) {
                float w = half ? wgt_f16_to_f32(((uint16_t *)mv)[(i - 1) * 129 + 5]) : ((float *)mv)[(i - 1) * 129 + 5];
                float f = (float)(i * 129 + 5);
                if (half) f = wgt_f16_to_f32(wgt_f32_to_f16(f));
                CHECK(w == f * 0.5f, "%s most[%d] = %g", wgt_dtype_name(dt), i - 1, w);
            }
        }
        CHECK(xs->host_valid, "reading most of the storage keeps a host copy");
        free(cv), free(mv);
        wgt_release(a), wgt_release(m), wgt_release(x), wgt_release(row), wgt_release(cell), wgt_release(col),
            wgt_release(most);
    }
}
