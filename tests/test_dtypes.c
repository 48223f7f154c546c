/*
 * The narrow types (bool, i8, u8, i16, u16, bf16): casts between every pair of element types
 * against a reference written here in double arithmetic (not the library's conversion
 * code), moves of strided views through every shape op that takes them, packed lanes
 * written by many invocations, comparisons and where, and the refusals of the other ops.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"

static const wgt_dtype all_types[] = {WGT_F32, WGT_F16, WGT_I32, WGT_U32, WGT_BOOL,
                                      WGT_I8,  WGT_U8,  WGT_I16, WGT_U16, WGT_BF16};
#define NTYPES (int)(sizeof all_types / sizeof all_types[0])

static int is_float_type(wgt_dtype d) { return d == WGT_F32 || d == WGT_F16 || d == WGT_BF16; }

static void int_range(wgt_dtype d, double *lo, double *hi) {
    switch (d) {
    case WGT_I32: *lo = -2147483648.0, *hi = 2147483647.0; break;
    case WGT_U32: *lo = 0, *hi = 4294967295.0; break;
    case WGT_I16: *lo = -32768, *hi = 32767; break;
    case WGT_U16: *lo = 0, *hi = 65535; break;
    case WGT_I8: *lo = -128, *hi = 127; break;
    case WGT_U8: *lo = 0, *hi = 255; break;
    default: *lo = 0, *hi = 1; break;
    }
}

static float bits_to_f32(uint32_t b) {
    float f;
    memcpy(&f, &b, 4);
    return f;
}

/* f32 to bf16 by distances in double: the nearer of the two bf16 neighbours, the even one on
 * a tie; past the largest finite value the upper neighbour is 2^128, which means infinity. */
static uint16_t ref_bf16(float f) {
    uint32_t b;
    memcpy(&b, &f, 4);
    if (isnan(f)) return (uint16_t)((b >> 16) | 0x40);
    if (isinf(f)) return (uint16_t)(b >> 16);
    uint32_t low = b & 0xffff0000u;
    double lo = fabs((double)bits_to_f32(low)), x = fabs((double)f);
    double hi = ((low + 0x10000u) & 0x7f800000u) == 0x7f800000u ? ldexp(1, 128) : fabs((double)bits_to_f32(low + 0x10000u));
    int up = x - lo > hi - x || (x - lo == hi - x && ((low >> 16) & 1));
    return (uint16_t)((low >> 16) + (up ? 1 : 0));
}

/* The value of element i of a buffer of type d (bool as 0 or 1). */
static double load_ref(wgt_dtype d, const void *p, size_t i) {
    const char *c = p;
    switch (d) {
    case WGT_F32: { float f; memcpy(&f, c + 4 * i, 4); return f; }
    case WGT_F16: return wgt_f16_to_f32(((const uint16_t *)p)[i]);
    case WGT_BF16: return bits_to_f32((uint32_t)((const uint16_t *)p)[i] << 16);
    case WGT_I32: return ((const int32_t *)p)[i];
    case WGT_U32: return ((const uint32_t *)p)[i];
    case WGT_I16: return ((const int16_t *)p)[i];
    case WGT_U16: return ((const uint16_t *)p)[i];
    case WGT_I8: return ((const int8_t *)p)[i];
    case WGT_U8: return ((const uint8_t *)p)[i];
    default: return ((const uint8_t *)p)[i];
    }
}

/* The bits the cast of v (a value of type from) to type to must store (docs/ops.md). */
static uint32_t ref_cast_bits(wgt_dtype from, wgt_dtype to, double v) {
    if (to == WGT_BOOL) return v != 0 || isnan(v);
    if (is_float_type(to)) {
        float f = (float)v; /* exact from the float types and from the narrow integers; i32, u32 round once */
        uint32_t b;
        memcpy(&b, &f, 4);
        return to == WGT_F32 ? b : to == WGT_F16 ? wgt_f32_to_f16(f) : ref_bf16(f);
    }
    double lo, hi;
    int_range(to, &lo, &hi);
    double r;
    if (is_float_type(from)) {
        r = isnan(v) ? 0 : trunc(v);
        r = r < lo ? lo : r > hi ? hi : r;
    } else { /* the low bits */
        double span = hi - lo + 1;
        r = fmod(v - lo, span);
        if (r < 0) r += span;
        r += lo;
    }
    int64_t i = (int64_t)r;
    uint32_t size = (uint32_t)wgt_dtype_size(to);
    return size == 4 ? (uint32_t)i : (uint32_t)i & ((1u << (8 * size)) - 1u);
}

static uint32_t element_bits(wgt_dtype d, const void *p, size_t i) {
    switch (wgt_dtype_size(d)) {
    case 1: return ((const uint8_t *)p)[i];
    case 2: return ((const uint16_t *)p)[i];
    default: return ((const uint32_t *)p)[i];
    }
}

static void store_bits(wgt_dtype d, void *p, size_t i, uint32_t b) {
    switch (wgt_dtype_size(d)) {
    case 1: ((uint8_t *)p)[i] = (uint8_t)b; break;
    case 2: ((uint16_t *)p)[i] = (uint16_t)b; break;
    default: ((uint32_t *)p)[i] = b; break;
    }
}

/* Edge values for a source of type d, stored as d's elements in buf; returns the count. */
static int edge_values(wgt_dtype d, void *buf) {
    static const double floats[] = {0.0, -0.0, 1.0, -1.0, 0.5, 1.5, 2.5, -2.5, 127.5, 128.0, -128.9, -129.0,
                                    255.9, 256.0, 300.0, -300.0, 32767.5, 32768.0, -32769.0, 65535.9, 65536.0,
                                    1.00390625, 1.01171875, 3e9, -3e9, 5e9, 1e30, -1e30, 1e-40, 65504.0, 65520.0,
                                    3.3895313892515355e38};
    int n = 0;
    if (is_float_type(d)) {
        for (size_t k = 0; k < sizeof floats / sizeof floats[0]; k++) {
            float f = (float)floats[k];
            uint32_t b;
            memcpy(&b, &f, 4);
            store_bits(d, buf, (size_t)n++, d == WGT_F32 ? b : d == WGT_F16 ? wgt_f32_to_f16(f) : ref_bf16(f));
        }
        const uint32_t special[] = {0x7fc00000u, 0xffc00001u, 0x7f800000u, 0xff800000u, 0x7f7fffffu, 0x3f808000u,
                                    0x3f818000u, 0x3f80ffffu};
        for (size_t k = 0; k < sizeof special / sizeof special[0]; k++) {
            float f = bits_to_f32(special[k]);
            store_bits(d, buf, (size_t)n++, d == WGT_F32 ? special[k] : d == WGT_F16 ? wgt_f32_to_f16(f) : ref_bf16(f));
        }
        return n;
    }
    double lo, hi;
    int_range(d, &lo, &hi);
    const double ints[] = {0, 1, lo, hi, lo + 1, hi - 1, -1, 127, 128, 255, 256, 32767, 32768, 65535, 65536,
                           16777217, 2147483647, 4294967295.0, -129, -32769, 33554435};
    for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++)
        if (ints[k] >= lo && ints[k] <= hi) store_bits(d, buf, (size_t)n++, (uint32_t)(int64_t)ints[k]);
    return n;
}

TEST_BACKENDS(dtypes_cast_every_pair_matches_reference) {
    for (int s = 0; s < NTYPES; s++) {
        wgt_dtype from = all_types[s];
        uint32_t src[64];
        int n = edge_values(from, src);
        int64_t shape[1] = {n};
        wgt_tensor *a = wgt_tensor_from_data(ctx, from, 1, shape, src, wgt_dtype_size(from) * (size_t)n, WGT_USAGE_DEFAULT);
        CHECK(a, "%s: %s", wgt_dtype_name(from), wgt_last_error());
        for (int t = 0; a && t < NTYPES; t++) {
            wgt_dtype to = all_types[t];
            wgt_tensor *c = wgt_cast(a, to);
            uint32_t got[64];
            memset(got, 0xab, sizeof got);
            CHECK(c && wgt_tensor_read(c, got, wgt_dtype_size(to) * (size_t)n) == WGT_OK, "%s to %s: %s",
                  wgt_dtype_name(from), wgt_dtype_name(to), wgt_last_error());
            for (int i = 0; c && i < n; i++) {
                double v = load_ref(from, src, (size_t)i);
                uint32_t want = from == to ? element_bits(from, src, (size_t)i) : ref_cast_bits(from, to, v);
                uint32_t have = element_bits(to, got, (size_t)i);
                int ok = have == want;
                if (!ok && is_float_type(to)) ok = isnan(load_ref(to, &want, 0)) && isnan(load_ref(to, &have, 0));
                CHECK(ok, "%s %.17g to %s: bits 0x%x, wanted 0x%x", wgt_dtype_name(from), v, wgt_dtype_name(to), have, want);
            }
            wgt_release(c);
        }
        wgt_release(a);
    }
}

/* One element of a view of a [rows, cols] buffer: the element (r, c) of the view. */
typedef struct {
    int64_t shape[2], strides[2], offset;
} view2;

static void check_moves(wgt_context *ctx, wgt_dtype d) {
    const int rows = 5, cols = 7;
    uint8_t src[4 * 35];
    for (int i = 0; i < rows * cols; i++) store_bits(d, src, (size_t)i, d == WGT_BOOL ? (uint32_t)(i % 3 == 0) : (uint32_t)(i * 2654435761u));
    int64_t shape[2] = {rows, cols};
    wgt_tensor *a = wgt_tensor_from_data(ctx, d, 2, shape, src, wgt_dtype_size(d) * 35, WGT_USAGE_DEFAULT);
    CHECK(a, "%s: %s", wgt_dtype_name(d), wgt_last_error());
    if (!a) return;
    /* The transposed, flipped and stepped views, each read and made contiguous. */
    int axes[2] = {1, 0}, flip_axes[1] = {1};
    wgt_tensor *views[3] = {wgt_permute(a, axes), wgt_flip(a, 1, flip_axes), NULL};
    int64_t st[2] = {2 * cols, 3}; /* rows 0, 2, 4; columns 1, 4 */
    int64_t vs[2] = {3, 2};
    views[2] = wgt_as_strided(a, 2, vs, st, 1);
    view2 ref[3] = {{{cols, rows}, {1, cols}, 0}, {{rows, cols}, {cols, -1}, cols - 1}, {{3, 2}, {2 * cols, 3}, 1}};
    for (int v = 0; v < 3; v++) {
        wgt_tensor *c = wgt_contiguous(views[v]);
        uint8_t got[4 * 35], direct[4 * 35];
        int64_t n = ref[v].shape[0] * ref[v].shape[1];
        size_t nb = wgt_dtype_size(d) * (size_t)n;
        CHECK(c && wgt_tensor_read(c, got, nb) == WGT_OK && wgt_tensor_read(views[v], direct, nb) == WGT_OK,
              "%s view %d: %s", wgt_dtype_name(d), v, wgt_last_error());
        for (int64_t i = 0; c && i < n; i++) {
            int64_t r = i / ref[v].shape[1], k = i % ref[v].shape[1];
            uint32_t want = element_bits(d, src, (size_t)(ref[v].offset + r * ref[v].strides[0] + k * ref[v].strides[1]));
            CHECK(element_bits(d, got, (size_t)i) == want && element_bits(d, direct, (size_t)i) == want,
                  "%s view %d element %lld", wgt_dtype_name(d), v, (long long)i);
        }
        wgt_release(c);
    }
    /* concat of a, a's stepped view (3 x 2) padded to 5 rows, along columns: rows of 7 + 7
     * elements, so rows share words; pad and stack beside it. */
    wgt_tensor *parts[2] = {a, views[1]};
    wgt_tensor *cat = wgt_concat(parts, 2, 1), *stk = wgt_stack(parts, 2, 0);
    int64_t before[2] = {1, 2}, after[2] = {0, 1};
    wgt_tensor *pad = wgt_pad(views[0], before, after, 1);
    uint8_t gc[4 * 70], gs[4 * 70], gp[4 * 80];
    CHECK(cat && stk && pad && wgt_tensor_read(cat, gc, wgt_dtype_size(d) * 70) == WGT_OK &&
              wgt_tensor_read(stk, gs, wgt_dtype_size(d) * 70) == WGT_OK &&
              wgt_tensor_read(pad, gp, wgt_dtype_size(d) * 8 * 8) == WGT_OK,
          "%s concat/stack/pad: %s", wgt_dtype_name(d), wgt_last_error());
    for (int r = 0; cat && r < rows; r++)
        for (int k = 0; k < 2 * cols; k++) {
            uint32_t want = element_bits(d, src, (size_t)(k < cols ? r * cols + k : r * cols + (2 * cols - 1 - k)));
            CHECK(element_bits(d, gc, (size_t)(r * 2 * cols + k)) == want, "%s concat (%d, %d)", wgt_dtype_name(d), r, k);
            if (k < cols)
                CHECK(element_bits(d, gs, (size_t)(r * cols + k)) == element_bits(d, src, (size_t)(r * cols + k)),
                      "%s stack (%d, %d)", wgt_dtype_name(d), r, k);
        }
    uint32_t one = ref_cast_bits(WGT_F32, d, 1.0);
    for (int r = 0; pad && r < 8; r++) /* views[0] is [7, 5]: padded to [8, 8] */
        for (int k = 0; k < 8; k++) {
            int inside = r >= 1 && k >= 2 && k < 7;
            uint32_t want = inside ? element_bits(d, src, (size_t)((k - 2) * cols + (r - 1))) : one;
            CHECK(element_bits(d, gp, (size_t)(r * 8 + k)) == want, "%s pad (%d, %d)", wgt_dtype_name(d), r, k);
        }
    wgt_release(cat), wgt_release(stk), wgt_release(pad);
    for (int v = 0; v < 3; v++) wgt_release(views[v]);
    wgt_release(a);
}

TEST_BACKENDS(dtypes_narrow_views_copy_and_shape_ops) {
    const wgt_dtype narrow[] = {WGT_BOOL, WGT_I8, WGT_U8, WGT_I16, WGT_U16, WGT_BF16};
    for (size_t k = 0; k < sizeof narrow / sizeof narrow[0]; k++) check_moves(ctx, narrow[k]);
}

/* Many invocations write neighbouring lanes of one word: a cast of an odd count, and a
 * concat of one-element rows, where every word holds four rows' elements. */
TEST_BACKENDS(dtypes_packed_lanes_from_many_workgroups) {
    const int64_t n = 300001;
    int64_t shape[1] = {n};
    wgt_tensor *r = wgt_arange(ctx, WGT_I32, 0, (double)n, 1);
    wgt_tensor *b = wgt_cast(r, WGT_U8), *h = wgt_cast(r, WGT_I16);
    uint8_t *gb = malloc((size_t)n);
    int16_t *gh = malloc(2 * (size_t)n);
    CHECK(b && h && wgt_tensor_read(b, gb, (size_t)n) == WGT_OK && wgt_tensor_read(h, gh, 2 * (size_t)n) == WGT_OK,
          "%s", wgt_last_error());
    int bad = 0;
    for (int64_t i = 0; b && h && i < n && bad < 5; i++)
        if (gb[i] != (uint8_t)i || gh[i] != (int16_t)(uint16_t)i) {
            CHECK(0, "element %lld: %u, %d", (long long)i, gb[i], gh[i]);
            bad++;
        }
    int64_t col[2] = {n, 1};
    wgt_tensor *bc = wgt_reshape(b, 2, col), *parts[3] = {bc, bc, bc};
    wgt_tensor *cat = wgt_concat(parts, 3, 1); /* [n, 3]: rows of three one-byte elements */
    uint8_t *gc = malloc(3 * (size_t)n);
    CHECK(cat && wgt_tensor_read(cat, gc, 3 * (size_t)n) == WGT_OK, "%s", wgt_last_error());
    for (int64_t i = 0; cat && i < 3 * n && bad < 10; i++)
        if (gc[i] != (uint8_t)(i / 3)) {
            CHECK(0, "concat element %lld: %u", (long long)i, gc[i]);
            bad++;
        }
    (void)shape;
    free(gb), free(gh), free(gc);
    wgt_release(r), wgt_release(b), wgt_release(h), wgt_release(bc), wgt_release(cat);
}

TEST_BACKENDS(dtypes_narrow_compare_logic_and_where) {
    int8_t av[6] = {-128, -1, 0, 1, 127, 5}, bv[6] = {127, -1, 1, 0, -128, 5};
    uint8_t cv[6] = {1, 0, 1, 0, 0, 1};
    int64_t shape[1] = {6};
    wgt_tensor *a = wgt_tensor_from_data(ctx, WGT_I8, 1, shape, av, 6, WGT_USAGE_DEFAULT);
    wgt_tensor *b = wgt_tensor_from_data(ctx, WGT_I8, 1, shape, bv, 6, WGT_USAGE_DEFAULT);
    wgt_tensor *c = wgt_tensor_from_data(ctx, WGT_BOOL, 1, shape, cv, 6, WGT_USAGE_DEFAULT);
    wgt_tensor *lt = wgt_lt(a, b), *eq = wgt_eq(a, b), *w = wgt_where(c, a, b), *nc = wgt_logical_not(c);
    uint8_t glt[6], geq[6], gnc[6];
    int8_t gw[6];
    CHECK(lt && eq && w && nc && wgt_tensor_read(lt, glt, sizeof glt) == WGT_OK &&
              wgt_tensor_read(eq, geq, sizeof geq) == WGT_OK && wgt_tensor_read(w, gw, sizeof gw) == WGT_OK &&
              wgt_tensor_read(nc, gnc, sizeof gnc) == WGT_OK,
          "%s", wgt_last_error());
    for (int i = 0; lt && eq && w && nc && i < 6; i++)
        CHECK(glt[i] == (av[i] < bv[i]) && geq[i] == (av[i] == bv[i]) && gw[i] == (cv[i] ? av[i] : bv[i]) &&
                  gnc[i] == !cv[i],
              "element %d", i);
    CHECK(w && wgt_tensor_dtype(w) == WGT_I8, "where keeps i8");
    CHECK(lt && eq && nc && wgt_tensor_dtype(lt) == WGT_BOOL && wgt_tensor_dtype(eq) == WGT_BOOL &&
              wgt_tensor_dtype(nc) == WGT_BOOL,
          "predicates give bool");
    wgt_release(a), wgt_release(b), wgt_release(c), wgt_release(lt), wgt_release(eq), wgt_release(w), wgt_release(nc);
}

TEST_BACKENDS(dtypes_narrow_refusals_name_op_and_type) {
    int64_t shape[1] = {4};
    wgt_tensor *a = wgt_zeros(ctx, WGT_I8, 1, shape), *h = wgt_ones(ctx, WGT_BF16, 1, shape);
    CHECK(a && h, "%s", wgt_last_error());
    CHECK_ERROR(wgt_sqrt(a) == NULL, WGT_ERR_DTYPE, "wgt_sqrt: a is i8");
    CHECK_ERROR(wgt_add(h, h) == NULL, WGT_ERR_DTYPE, "wgt_add: takes no bf16 operands");
    CHECK_ERROR(wgt_sum(h, 0, NULL, 0) == NULL, WGT_ERR_DTYPE, "bf16");
    CHECK_ERROR(wgt_rand_uniform(ctx, WGT_U8, 1, shape, 0, 1, 1) == NULL, WGT_ERR_DTYPE, "u8");
    CHECK_ERROR(wgt_full(ctx, WGT_I8, 1, shape, 128) == NULL, WGT_ERR_INVALID_ARGUMENT, "out of range for i8");
    CHECK_ERROR(wgt_full(ctx, WGT_U16, 1, shape, 0.5) == NULL, WGT_ERR_DTYPE, "u16");
    CHECK_ERROR(wgt_full(ctx, WGT_BF16, 1, shape, 3.4e38) == NULL, WGT_ERR_INVALID_ARGUMENT, "overflows bf16");
    uint8_t bad[4] = {0, 1, 2, 1};
    CHECK_ERROR(wgt_tensor_from_data(ctx, WGT_BOOL, 1, shape, bad, 4, WGT_USAGE_DEFAULT) == NULL,
                WGT_ERR_INVALID_ARGUMENT, "bool element 2 is the byte 2");
    wgt_clear_error();
    wgt_tensor *f = wgt_full(ctx, WGT_BOOL, 1, shape, 1), *r = wgt_arange(ctx, WGT_U8, 250, 254, 1);
    uint8_t gf[4], gr[4];
    CHECK(f && r && wgt_tensor_read(f, gf, 4) == WGT_OK && wgt_tensor_read(r, gr, 4) == WGT_OK, "%s", wgt_last_error());
    for (int i = 0; f && r && i < 4; i++) CHECK(gf[i] == 1 && gr[i] == 250 + i, "creation element %d", i);
    CHECK(wgt_dtype_size(WGT_BOOL) == 1 && wgt_dtype_size(WGT_BF16) == 2 && !strcmp(wgt_dtype_name(WGT_U16), "u16"),
          "dtype table");
    wgt_release(a), wgt_release(h), wgt_release(f), wgt_release(r);
}

/* .npy (NumPy's |b1, |i1, |u1, <i2, <u2) and safetensors (BOOL, I8, U8, I16, U16, BF16) round
 * trips of a strided view, the header naming the type as NumPy and safetensors do. */
TEST_BACKENDS(dtypes_narrow_files_round_trip) {
    const wgt_dtype types[] = {WGT_BOOL, WGT_I8, WGT_U8, WGT_I16, WGT_U16, WGT_BF16};
    const char *const descr[] = {"'|b1'", "'|i1'", "'|u1'", "'<i2'", "'<u2'", NULL};
    const char *const st_name[] = {"\"BOOL\"", "\"I8\"", "\"U8\"", "\"I16\"", "\"U16\"", "\"BF16\""};
    char npy[128], st[128];
    snprintf(npy, sizeof npy, "/tmp/wgt_test_%d_dtypes.npy", (int)getpid());
    snprintf(st, sizeof st, "/tmp/wgt_test_%d_dtypes.safetensors", (int)getpid());
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        wgt_dtype d = types[k];
        uint8_t src[2 * 12];
        for (int i = 0; i < 12; i++) store_bits(d, src, (size_t)i, d == WGT_BOOL ? (uint32_t)(i & 1) : (uint32_t)(i * 40503u + 7u));
        int64_t shape[2] = {3, 4};
        int axes[2] = {1, 0};
        wgt_tensor *a = wgt_tensor_from_data(ctx, d, 2, shape, src, wgt_dtype_size(d) * 12, WGT_USAGE_DEFAULT);
        wgt_tensor *v = wgt_permute(a, axes); /* [4, 3], strided */
        const char *name = "x";
        CHECK(v && wgt_save_safetensors(st, 1, &name, &v) == WGT_OK, "%s: %s", wgt_dtype_name(d), wgt_last_error());
        wgt_tensor *ls = wgt_load_safetensors(ctx, st, "x", WGT_USAGE_DEFAULT);
        wgt_tensor *ln = NULL;
        if (descr[k]) {
            CHECK(wgt_save_npy(v, npy) == WGT_OK, "%s: %s", wgt_dtype_name(d), wgt_last_error());
            ln = wgt_load_npy(ctx, npy, WGT_USAGE_DEFAULT);
        } else {
            CHECK_ERROR(wgt_save_npy(v, npy) != WGT_OK, WGT_ERR_DTYPE, "bf16");
        }
        char text[256] = "";
        FILE *f = fopen(descr[k] ? npy : st, "rb");
        size_t got = f ? fread(text, 1, sizeof text - 1, f) : 0;
        if (f) fclose(f);
        for (size_t i = 0; i < got; i++) text[i] = text[i] ? text[i] : ' ';
        CHECK(strstr(text, descr[k] ? descr[k] : st_name[k]) != NULL, "%s: header %s", wgt_dtype_name(d), text + 10);
        wgt_tensor *loaded[2] = {ls, ln};
        for (int j = 0; j < (descr[k] ? 2 : 1); j++) {
            uint8_t back[2 * 12];
            CHECK(loaded[j] && wgt_tensor_dtype(loaded[j]) == d && wgt_tensor_shape(loaded[j])[0] == 4 &&
                      wgt_tensor_read(loaded[j], back, wgt_dtype_size(d) * 12) == WGT_OK,
                  "%s file %d: %s", wgt_dtype_name(d), j, wgt_last_error());
            for (int i = 0; loaded[j] && i < 12; i++)
                CHECK(element_bits(d, back, (size_t)i) == element_bits(d, src, (size_t)((i % 3) * 4 + i / 3)),
                      "%s file %d element %d", wgt_dtype_name(d), j, i);
        }
        wgt_release(a), wgt_release(v), wgt_release(ls), wgt_release(ln);
    }
    remove(npy);
    remove(st);
}

/* The array API's promotion table (2024.12), entry by entry, as where's result type; 0: no
 * common type (undefined by the standard). bf16 is outside the standard; the 64-bit rows are
 * in test_int64.c. */
TEST_BACKENDS(dtypes_promotion_table_entry_by_entry) {
    enum { B = WGT_BOOL, I8 = WGT_I8, I16 = WGT_I16, I32 = WGT_I32, U8 = WGT_U8, U16 = WGT_U16, U32 = WGT_U32,
           F16 = WGT_F16, BF = WGT_BF16, F32 = WGT_F32, I64 = WGT_I64 };
    static const int order[10] = {B, I8, I16, I32, U8, U16, U32, F16, BF, F32};
    static const int table[10][10] = {
        {B, 0, 0, 0, 0, 0, 0, 0, 0, 0},
        {0, I8, I16, I32, I16, I32, I64, 0, 0, 0},
        {0, I16, I16, I32, I16, I32, I64, 0, 0, 0},
        {0, I32, I32, I32, I32, I32, I64, 0, 0, 0},
        {0, I16, I16, I32, U8, U16, U32, 0, 0, 0},
        {0, I32, I32, I32, U16, U16, U32, 0, 0, 0},
        {0, I64, I64, I64, U32, U32, U32, 0, 0, 0},
        {0, 0, 0, 0, 0, 0, 0, F16, F32, F32},
        {0, 0, 0, 0, 0, 0, 0, F32, BF, F32},
        {0, 0, 0, 0, 0, 0, 0, F32, F32, F32},
    };
    int64_t shape[1] = {3};
    uint8_t cv[3] = {1, 0, 1};
    wgt_tensor *cond = wgt_tensor_from_data(ctx, WGT_BOOL, 1, shape, cv, 3, WGT_USAGE_DEFAULT);
    for (int r = 0; r < 10; r++)
        for (int c = 0; c < 10; c++) {
            wgt_dtype da = (wgt_dtype)order[r], db = (wgt_dtype)order[c];
            wgt_tensor *a = wgt_full(ctx, da, 1, shape, 1), *b = wgt_zeros(ctx, db, 1, shape);
            wgt_tensor *w = NULL;
            if (table[r][c]) {
                w = wgt_where(cond, a, b);
                CHECK(w && wgt_tensor_dtype(w) == (wgt_dtype)table[r][c], "%s with %s: %s (%s)", wgt_dtype_name(da),
                      wgt_dtype_name(db), w ? wgt_dtype_name(wgt_tensor_dtype(w)) : "NULL", wgt_last_error());
                wgt_tensor *back = w ? wgt_cast(w, WGT_F32) : NULL;
                float v[3] = {-1, -1, -1};
                CHECK(back && wgt_tensor_read(back, v, sizeof v) == WGT_OK && v[0] == 1 && v[1] == 0 && v[2] == 1,
                      "%s with %s: values", wgt_dtype_name(da), wgt_dtype_name(db));
                wgt_release(back);
            } else {
                CHECK_ERROR((w = wgt_where(cond, a, b)) == NULL, WGT_ERR_DTYPE, "do not promote");
            }
            wgt_release(a), wgt_release(b), wgt_release(w);
        }
    wgt_release(cond);
}

/* Binary arithmetic promotes too: f16 with f32 computes in f32, as f32 operands would. */
TEST_BACKENDS(dtypes_binary_ops_promote_mixed_floats) {
    float x[4] = {1.5f, -2.25f, 1e-3f, 60000.0f};
    uint16_t h[4];
    for (int i = 0; i < 4; i++) h[i] = wgt_f32_to_f16(0.1f * (float)(i + 1));
    int64_t shape[1] = {4};
    wgt_tensor *a = wgt_tensor_from_data(ctx, WGT_F32, 1, shape, x, sizeof x, WGT_USAGE_DEFAULT);
    wgt_tensor *b = wgt_tensor_from_data(ctx, WGT_F16, 1, shape, h, sizeof h, WGT_USAGE_DEFAULT);
    wgt_tensor *s = wgt_add(b, a), *lt = wgt_lt(a, b);
    float got[4];
    uint8_t less[4];
    CHECK(s && wgt_tensor_dtype(s) == WGT_F32 && wgt_tensor_read(s, got, sizeof got) == WGT_OK && lt &&
              wgt_tensor_read(lt, less, sizeof less) == WGT_OK,
          "%s", wgt_last_error());
    for (int i = 0; s && lt && i < 4; i++) {
        float hv = wgt_f16_to_f32(h[i]);
        CHECK(got[i] == hv + x[i] && less[i] == (x[i] < hv), "element %d: %g", i, got[i]);
    }
    int64_t one[1] = {1};
    wgt_tensor *i32 = wgt_ones(ctx, WGT_I32, 1, one), *u32 = wgt_ones(ctx, WGT_U32, 1, one);
    wgt_tensor *sum = wgt_add(i32, u32);
    int64_t two = 0;
    CHECK(sum && wgt_tensor_dtype(sum) == WGT_I64 && wgt_tensor_read(sum, &two, 8) == WGT_OK && two == 2,
          "i32 + u32 in i64: %s", wgt_last_error());
    wgt_release(sum);
    CHECK_ERROR(wgt_div(i32, u32) == NULL, WGT_ERR_DTYPE, "wgt_div: i32 with u32 promotes to i64, which this function");
    CHECK_ERROR(wgt_mul(i32, a) == NULL, WGT_ERR_DTYPE, "an integer with a float undefined");
    wgt_release(a), wgt_release(b), wgt_release(s), wgt_release(lt), wgt_release(i32), wgt_release(u32);
}
