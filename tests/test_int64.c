/*
 * The 64-bit integer types (i64, u64): creation beyond 2^32 and 2^53, casts from and to
 * every type against references computed here with C's own 64-bit arithmetic, moves of
 * strided and broadcast views through the shape and index ops (values whose high words
 * differ, so a swapped or dropped word shows), where, files, promotion, and the refusals of
 * the ops that do not take them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"

static const wgt_dtype every_type[] = {WGT_F32, WGT_F16, WGT_BF16, WGT_I32, WGT_U32, WGT_I16,
                                       WGT_U16, WGT_I8,  WGT_U8,   WGT_BOOL, WGT_I64, WGT_U64};
#define NEVERY (int)(sizeof every_type / sizeof every_type[0])

/* Values of i64 (as bits) at the edges: the word boundary, 2^53 and its neighbours, the ends
 * of the range, small negatives. */
static const int64_t edges[] = {0,
                                1,
                                -1,
                                2,
                                -2,
                                4294967295LL,
                                4294967296LL,
                                4294967297LL,
                                -4294967296LL,
                                -4294967297LL,
                                2147483647LL,
                                2147483648LL,
                                -2147483649LL,
                                9007199254740992LL,
                                9007199254740993LL,
                                -9007199254740993LL,
                                0x0123456789abcdefLL,
                                (int64_t)0xfedcba9876543210ULL,
                                16777217LL,
                                (1LL << 40) + 1,
                                (1LL << 62) + (1LL << 38) + 1,
                                INT64_MAX,
                                INT64_MIN,
                                INT64_MIN + 1,
                                (int64_t)0x8000008000000000ULL,
                                (int64_t)0xffffff7fffffffffULL,
                                (1LL << 24) + 1,
                                (1LL << 25) + 3,
                                (1LL << 40) + (1LL << 16) + 1, /* a tie but for the lowest bit: rounds up */
                                -((1LL << 40) + (1LL << 16) + 1),
                                (1LL << 40) + (1LL << 16),     /* a true tie: to even, down */
                                (1LL << 40) + 3 * (1LL << 16)};  /* a true tie: to even, up */
#define NEDGES (int)(sizeof edges / sizeof edges[0])

static uint32_t f32_bits(float f) {
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

/* The bits a cast of the 64-bit integer x (of type from) to type to must store. */
static uint64_t ref_from64(wgt_dtype from, wgt_dtype to, int64_t x) {
    int u = from == WGT_U64;
    float f = u ? (float)(uint64_t)x : (float)x; /* C rounds a 64-bit integer to nearest */
    switch (to) {
    case WGT_F32: return f32_bits(f);
    case WGT_F16: return wgt_f32_to_f16(f);
    case WGT_BF16: return wgt_f32_to_bf16(f);
    case WGT_BOOL: return x != 0;
    case WGT_I32: case WGT_U32: return (uint32_t)x;
    case WGT_I16: case WGT_U16: return (uint16_t)x;
    case WGT_I8: case WGT_U8: return (uint8_t)x;
    default: return (uint64_t)x;
    }
}

/* The bits of f32 f converted to i64 or u64: truncated, saturated, NaN 0. */
static uint64_t ref_float_to64(wgt_dtype to, float f) {
    if (isnan(f)) return 0;
    double t = trunc((double)f);
    if (to == WGT_I64) {
        if (t >= 9223372036854775808.0) return (uint64_t)INT64_MAX;
        if (t <= -9223372036854775808.0) return (uint64_t)INT64_MIN;
        return (uint64_t)(int64_t)t;
    }
    if (t <= 0) return 0;
    if (t >= 18446744073709551616.0) return UINT64_MAX;
    return (uint64_t)t;
}

static uint64_t element(wgt_dtype d, const void *p, int i) {
    const char *c = p;
    uint64_t v = 0;
    memcpy(&v, c + wgt_dtype_size(d) * (size_t)i, wgt_dtype_size(d)); /* little-endian: the low bytes */
    return v;
}

static wgt_tensor *edges_tensor(wgt_context *ctx, wgt_dtype d) {
    int64_t n = NEDGES;
    return wgt_tensor_from_data(ctx, d, 1, &n, edges, sizeof edges, WGT_USAGE_DEFAULT);
}

/* Every 64-bit edge to every type, through a stepped view (every element once, backwards)
 * so the kernels' strided reads are the ones checked. */
TEST_BACKENDS(int64_casts_to_every_type_match_reference) {
    const wgt_dtype from[2] = {WGT_I64, WGT_U64};
    for (int s = 0; s < 2; s++) {
        wgt_tensor *a = edges_tensor(ctx, from[s]);
        int axes[1] = {0};
        wgt_tensor *rev = a ? wgt_flip(a, 1, axes) : NULL;
        CHECK(rev, "%s", wgt_last_error());
        for (int k = 0; rev && k < NEVERY; k++) {
            wgt_dtype to = every_type[k];
            wgt_tensor *c = wgt_cast(rev, to);
            uint64_t got[NEDGES];
            CHECK(c && wgt_tensor_dtype(c) == to && wgt_tensor_read(c, got, wgt_dtype_size(to) * NEDGES) == WGT_OK,
                  "%s to %s: %s", wgt_dtype_name(from[s]), wgt_dtype_name(to), wgt_last_error());
            for (int i = 0; c && i < NEDGES; i++) {
                int64_t x = edges[NEDGES - 1 - i];
                uint64_t want = ref_from64(from[s], to, x), have = element(to, got, i);
                CHECK(have == want, "%s %lld to %s: bits 0x%llx, wanted 0x%llx", wgt_dtype_name(from[s]), (long long)x,
                      wgt_dtype_name(to), (unsigned long long)have, (unsigned long long)want);
            }
            wgt_release(c);
        }
        wgt_release(rev), wgt_release(a);
    }
}

/* Every type's edge values to i64 and u64: floats saturate at the range (2^63 and beyond),
 * send NaN to 0 and truncate; integers sign- or zero-extend; bool gives 0 or 1. */
TEST_BACKENDS(int64_casts_from_every_type_match_reference) {
    static const float fv[] = {0.0f, -0.0f, 0.5f, -0.99f, 1.5f, -1.5f, 4294967296.0f, -4294967296.0f,
                               16777217.0f, 1e18f, -1e18f, 9.2233715e18f, -9.2233715e18f, 9.223372e18f,
                               -9.223372e18f, 1.8446743e19f, 1.9e19f, 3e38f, -3e38f, INFINITY, -INFINITY, NAN,
                               1.2345678e15f, -7.654321e12f, 123456.789f};
    enum { N = (int)(sizeof fv / sizeof fv[0]) };
    int64_t n = N;
    wgt_tensor *f = wgt_tensor_from_data(ctx, WGT_F32, 1, &n, fv, sizeof fv, WGT_USAGE_DEFAULT);
    const wgt_dtype to[2] = {WGT_I64, WGT_U64};
    for (int k = 0; f && k < NEVERY; k++) {
        wgt_dtype src = every_type[k];
        wgt_tensor *s = wgt_dtype_size(src) == 8 ? edges_tensor(ctx, src) : wgt_cast(f, src);
        int count = wgt_dtype_size(src) == 8 ? NEDGES : N;
        /* The source's own bits, read back, give the reference its values. */
        uint64_t bits[N > NEDGES ? N : NEDGES];
        CHECK(s && wgt_tensor_read(s, bits, wgt_dtype_size(src) * (size_t)count) == WGT_OK, "%s: %s",
              wgt_dtype_name(src), wgt_last_error());
        for (int t = 0; s && t < 2; t++) {
            wgt_tensor *c = wgt_cast(s, to[t]);
            uint64_t got[N > NEDGES ? N : NEDGES];
            CHECK(c && wgt_tensor_read(c, got, 8 * (size_t)count) == WGT_OK, "%s to %s: %s", wgt_dtype_name(src),
                  wgt_dtype_name(to[t]), wgt_last_error());
            for (int i = 0; c && i < count; i++) {
                uint64_t b = element(src, bits, i), want;
                switch (src) {
                case WGT_F32: { float v; uint32_t w = (uint32_t)b; memcpy(&v, &w, 4); want = ref_float_to64(to[t], v); break; }
                case WGT_F16: want = ref_float_to64(to[t], wgt_f16_to_f32((uint16_t)b)); break;
                case WGT_BF16: want = ref_float_to64(to[t], wgt_bf16_to_f32((uint16_t)b)); break;
                case WGT_I32: want = (uint64_t)(int64_t)(int32_t)(uint32_t)b; break;
                case WGT_I16: want = (uint64_t)(int64_t)(int16_t)(uint16_t)b; break;
                case WGT_I8: want = (uint64_t)(int64_t)(int8_t)(uint8_t)b; break;
                default: want = b; break; /* unsigned types and bool extend with zeros; i64 and u64 keep the bits */
                }
                CHECK(got[i] == want, "%s element %d to %s: 0x%llx, wanted 0x%llx", wgt_dtype_name(src), i,
                      wgt_dtype_name(to[t]), (unsigned long long)got[i], (unsigned long long)want);
            }
            wgt_release(c);
        }
        wgt_release(s);
    }
    wgt_release(f);
}

/* Creation: values beyond 2^53 from data and arange (computed in integers, not doubles),
 * full with exactly representable values, and the scalar checks at the ends of the range. */
TEST_BACKENDS(int64_creation_beyond_2_53_and_range_checks) {
    double start = 9007199254740992.0; /* 2^53: start + 1 is not a double, the range must still hold it */
    wgt_tensor *r = wgt_arange(ctx, WGT_I64, start, start + 8, 1);
    /* 2^64 - 2048 down to 2^64 - 6144 (both doubles) by -3: 1366 values no double holds. */
    wgt_tensor *d = wgt_arange(ctx, WGT_U64, 18446744073709549568.0, 18446744073709545472.0, -3);
    int64_t shape[2] = {2, 3};
    wgt_tensor *f = wgt_full(ctx, WGT_I64, 2, shape, -9223372036854775808.0);
    wgt_tensor *g = wgt_full(ctx, WGT_U64, 2, shape, 12345678901234567168.0);
    wgt_tensor *o = wgt_ones(ctx, WGT_U64, 2, shape), *z = wgt_zeros(ctx, WGT_I64, 2, shape);
    int64_t gr[8], gf[6];
    uint64_t gd[1366], gg[6], go[6], gz[6];
    CHECK(r && d && f && g && o && z && wgt_tensor_read(r, gr, sizeof gr) == WGT_OK &&
              wgt_tensor_read(d, gd, sizeof gd) == WGT_OK && wgt_tensor_read(f, gf, sizeof gf) == WGT_OK &&
              wgt_tensor_read(g, gg, sizeof gg) == WGT_OK && wgt_tensor_read(o, go, sizeof go) == WGT_OK &&
              wgt_tensor_read(z, gz, sizeof gz) == WGT_OK,
          "%s", wgt_last_error());
    for (int i = 0; r && i < 8; i++) CHECK(gr[i] == 9007199254740992LL + i, "arange element %d: %lld", i, (long long)gr[i]);
    for (int i = 0; d && i < 1366; i++)
        CHECK(gd[i] == 18446744073709549568ULL - 3ULL * (uint64_t)i, "u64 arange element %d", i);
    for (int i = 0; f && g && o && z && i < 6; i++)
        CHECK(gf[i] == INT64_MIN && gg[i] == 12345678901234567168ULL && go[i] == 1 && gz[i] == 0, "full element %d", i);
    CHECK_ERROR(wgt_full(ctx, WGT_I64, 2, shape, 9223372036854775808.0) == NULL, WGT_ERR_INVALID_ARGUMENT,
                "out of range for i64");
    CHECK_ERROR(wgt_full(ctx, WGT_U64, 2, shape, 18446744073709551616.0) == NULL, WGT_ERR_INVALID_ARGUMENT,
                "out of range for u64");
    CHECK_ERROR(wgt_full(ctx, WGT_U64, 2, shape, -1) == NULL, WGT_ERR_INVALID_ARGUMENT, "out of range for u64");
    CHECK_ERROR(wgt_full(ctx, WGT_I64, 2, shape, 0.5) == NULL, WGT_ERR_DTYPE, "i64");
    CHECK(wgt_dtype_size(WGT_I64) == 8 && wgt_dtype_size(WGT_U64) == 8 && !strcmp(wgt_dtype_name(WGT_I64), "i64") &&
              !strcmp(wgt_dtype_name(WGT_U64), "u64"),
          "dtype table");
    wgt_release(r), wgt_release(d), wgt_release(f), wgt_release(g), wgt_release(o), wgt_release(z);
}

/* Element (r, k) of the [5, 7] source: distinct low and high words everywhere. */
static int64_t source_value(int i) { return (int64_t)((uint64_t)(i + 1) * 0x9e3779b97f4a7c15ULL); }

static void check_values(const char *what, wgt_tensor *t, const int64_t *want, int n) {
    int64_t *got = malloc(8 * (size_t)(n ? n : 1));
    CHECK(t && wgt_tensor_read(t, got, 8 * (size_t)n) == WGT_OK, "%s: %s", what, wgt_last_error());
    for (int i = 0, bad = 0; t && i < n && bad < 4; i++)
        if (got[i] != want[i]) {
            CHECK(0, "%s element %d: 0x%llx, wanted 0x%llx", what, i, (unsigned long long)got[i],
                  (unsigned long long)want[i]);
            bad++;
        }
    free(got);
}

/* Views (transposed, flipped, stepped, broadcast), contiguous, concat, stack, pad with a value
 * whose two words differ, where with a bool and with an i64 condition, and the row gathers. */
TEST_BACKENDS(int64_views_shape_ops_where_and_gathers) {
    enum { R = 5, C = 7 };
    int64_t src[R * C], shape[2] = {R, C};
    for (int i = 0; i < R * C; i++) src[i] = source_value(i);
    wgt_tensor *a = wgt_tensor_from_data(ctx, WGT_I64, 2, shape, src, sizeof src, WGT_USAGE_DEFAULT);
    CHECK(a, "%s", wgt_last_error());
    if (!a) return;
    int axes[2] = {1, 0}, flip_axis[1] = {1};
    wgt_tensor *t = wgt_permute(a, axes), *fl = wgt_flip(a, 1, flip_axis);
    int64_t vs[2] = {3, 2}, st[2] = {2 * C, 3};
    wgt_tensor *sv = wgt_as_strided(a, 2, vs, st, 1);
    int64_t want[R * C * 2];
    for (int k = 0; k < C; k++)
        for (int r = 0; r < R; r++) want[k * R + r] = src[r * C + k];
    wgt_tensor *tc = wgt_contiguous(t);
    check_values("transpose", tc, want, R * C);
    for (int r = 0; r < R; r++)
        for (int k = 0; k < C; k++) want[r * C + k] = src[r * C + C - 1 - k];
    check_values("flip", fl, want, R * C);
    for (int r = 0; r < 3; r++)
        for (int k = 0; k < 2; k++) want[r * 2 + k] = src[1 + r * 2 * C + 3 * k];
    check_values("stepped view", sv, want, 6);
    /* A row broadcast down 3 rows. */
    int64_t row_shape[1] = {C}, bshape[2] = {3, C};
    wgt_tensor *row = wgt_reshape(wgt_slice(a, 0, 2, 3, 1), 1, row_shape);
    wgt_tensor *bc = row ? wgt_contiguous(wgt_broadcast_to(row, 2, bshape)) : NULL;
    for (int r = 0; r < 3; r++)
        for (int k = 0; k < C; k++) want[r * C + k] = src[2 * C + k];
    check_values("broadcast", bc, want, 3 * C);
    /* concat along columns of a and its flip; stack of the two. */
    wgt_tensor *parts[2] = {a, fl};
    wgt_tensor *cat = wgt_concat(parts, 2, 1), *stk = wgt_stack(parts, 2, 0);
    for (int r = 0; r < R; r++)
        for (int k = 0; k < 2 * C; k++) want[r * 2 * C + k] = k < C ? src[r * C + k] : src[r * C + 2 * C - 1 - k];
    check_values("concat", cat, want, 2 * R * C);
    for (int i = 0; i < R * C; i++) want[i] = src[i], want[R * C + i] = src[(i / C) * C + C - 1 - i % C];
    check_values("stack", stk, want, 2 * R * C);
    /* pad of the transpose [7, 5] to [8, 8] with -2^40 - 3 (high word not the low word's sign). */
    int64_t before[2] = {1, 2}, after[2] = {0, 1};
    double value = -1099511627779.0;
    wgt_tensor *pad = wgt_pad(t, before, after, value);
    for (int r = 0; r < 8; r++)
        for (int k = 0; k < 8; k++) {
            int inside = r >= 1 && k >= 2 && k < 7;
            want[r * 8 + k] = inside ? src[(k - 2) * C + (r - 1)] : -1099511627779LL;
        }
    check_values("pad", pad, want, 64);
    /* where: a bool condition over columns, then an i64 condition (2^32 is true: no word dropped). */
    uint8_t cv[C] = {1, 0, 0, 1, 1, 0, 1};
    int64_t cshape[1] = {C};
    wgt_tensor *cond = wgt_tensor_from_data(ctx, WGT_BOOL, 1, cshape, cv, sizeof cv, WGT_USAGE_DEFAULT);
    wgt_tensor *w = wgt_where(cond, a, fl);
    for (int r = 0; r < R; r++)
        for (int k = 0; k < C; k++) want[r * C + k] = cv[k] ? src[r * C + k] : src[r * C + C - 1 - k];
    check_values("where bool", w, want, R * C);
    int64_t c64[C] = {4294967296LL, 0, 0, INT64_MIN, -1, 0, 1};
    wgt_tensor *cond64 = wgt_tensor_from_data(ctx, WGT_I64, 1, cshape, c64, sizeof c64, WGT_USAGE_DEFAULT);
    wgt_tensor *w64 = wgt_where(cond64, a, fl);
    check_values("where i64 condition", w64, want, R * C);
    /* gather_rows, index_select along columns, take of the flattened tensor. */
    int32_t iv[4] = {4, 0, 4, 2};
    int64_t ishape[1] = {4};
    wgt_tensor *idx = wgt_tensor_from_data(ctx, WGT_I32, 1, ishape, iv, sizeof iv, WGT_USAGE_DEFAULT);
    wgt_tensor *gr = wgt_gather_rows(a, idx), *is = wgt_index_select(a, 1, idx), *tk = wgt_take(a, idx, 1);
    for (int j = 0; j < 4; j++)
        for (int k = 0; k < C; k++) want[j * C + k] = src[iv[j] * C + k];
    check_values("gather_rows", gr, want, 4 * C);
    for (int r = 0; r < R; r++)
        for (int j = 0; j < 4; j++) want[r * 4 + j] = src[r * C + iv[j]];
    check_values("index_select", is, want, 4 * R);
    check_values("take", tk, want, 4 * R);
    wgt_tensor *all[] = {a, t, fl, sv, tc, row, bc, cat, stk, pad, cond, w, cond64, w64, idx, gr, is, tk};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) wgt_release(all[k]);
}

/* Many invocations over a long u64 cast chain: i32 -> i64 -> f32 and back, u64 -> u32. */
TEST_BACKENDS(int64_cast_of_many_elements) {
    const int64_t n = 200003;
    wgt_tensor *r = wgt_arange(ctx, WGT_I32, -100000, (double)(n - 100000), 1);
    wgt_tensor *w = r ? wgt_cast(r, WGT_I64) : NULL;
    wgt_tensor *big = w ? wgt_pad(w, (int64_t[1]){0}, (int64_t[1]){0}, 0) : NULL;
    wgt_tensor *f = big ? wgt_cast(big, WGT_F32) : NULL, *u = big ? wgt_cast(big, WGT_U64) : NULL;
    wgt_tensor *lo = u ? wgt_cast(u, WGT_U32) : NULL;
    float *gf = malloc(4 * (size_t)n);
    uint32_t *gl = malloc(4 * (size_t)n);
    CHECK(f && lo && wgt_tensor_read(f, gf, 4 * (size_t)n) == WGT_OK && wgt_tensor_read(lo, gl, 4 * (size_t)n) == WGT_OK,
          "%s", wgt_last_error());
    for (int64_t i = 0, bad = 0; f && lo && i < n && bad < 5; i++)
        if (gf[i] != (float)(i - 100000) || gl[i] != (uint32_t)(int32_t)(i - 100000)) {
            CHECK(0, "element %lld: %g, %u", (long long)i, gf[i], gl[i]);
            bad++;
        }
    free(gf), free(gl);
    wgt_release(r), wgt_release(w), wgt_release(big), wgt_release(f), wgt_release(u), wgt_release(lo);
}

/* .npy (<i8, <u8) and safetensors (I64, U64) round trips of a transposed view. */
TEST_BACKENDS(int64_files_round_trip) {
    char npy[128], st[128];
    snprintf(npy, sizeof npy, "/tmp/wgt_test_%d_int64.npy", (int)getpid());
    snprintf(st, sizeof st, "/tmp/wgt_test_%d_int64.safetensors", (int)getpid());
    const wgt_dtype types[2] = {WGT_I64, WGT_U64};
    const char *const descr[2] = {"'<i8'", "'<u8'"}, *const st_name[2] = {"\"I64\"", "\"U64\""};
    for (int k = 0; k < 2; k++) {
        int64_t src[12], shape[2] = {3, 4};
        for (int i = 0; i < 12; i++) src[i] = edges[i + 10];
        int axes[2] = {1, 0};
        wgt_tensor *a = wgt_tensor_from_data(ctx, types[k], 2, shape, src, sizeof src, WGT_USAGE_DEFAULT);
        wgt_tensor *v = wgt_permute(a, axes);
        const char *name = "x";
        CHECK(v && wgt_save_npy(v, npy) == WGT_OK && wgt_save_safetensors(st, 1, &name, &v) == WGT_OK, "%s: %s",
              wgt_dtype_name(types[k]), wgt_last_error());
        wgt_tensor *loaded[2] = {wgt_load_npy(ctx, npy, WGT_USAGE_DEFAULT),
                                 wgt_load_safetensors(ctx, st, "x", WGT_USAGE_DEFAULT)};
        const char *files[2] = {npy, st}, *names[2] = {descr[k], st_name[k]};
        for (int j = 0; j < 2; j++) {
            char text[256] = "";
            FILE *fp = fopen(files[j], "rb");
            size_t got = fp ? fread(text, 1, sizeof text - 1, fp) : 0;
            if (fp) fclose(fp);
            for (size_t i = 0; i < got; i++) text[i] = text[i] ? text[i] : ' ';
            CHECK(strstr(text, names[j]) != NULL, "%s header: %s", wgt_dtype_name(types[k]), text + 8);
            int64_t back[12];
            CHECK(loaded[j] && wgt_tensor_dtype(loaded[j]) == types[k] &&
                      wgt_tensor_read(loaded[j], back, sizeof back) == WGT_OK,
                  "%s file %d: %s", wgt_dtype_name(types[k]), j, wgt_last_error());
            for (int i = 0; loaded[j] && i < 12; i++)
                CHECK(back[i] == src[(i % 3) * 4 + i / 3], "%s file %d element %d", wgt_dtype_name(types[k]), j, i);
            wgt_release(loaded[j]);
        }
        wgt_release(a), wgt_release(v);
    }
    remove(npy);
    remove(st);
}

/* u32 with a signed type now meets in i64; i64 takes the narrower integers; u64 with a signed
 * type has no common type (it would need 128 bits). */
TEST_BACKENDS(int64_promotion) {
    static const struct { wgt_dtype a, b, want; } rows[] = {
        {WGT_U32, WGT_I32, WGT_I64}, {WGT_U32, WGT_I8, WGT_I64},   {WGT_I16, WGT_U32, WGT_I64},
        {WGT_I64, WGT_I32, WGT_I64}, {WGT_I64, WGT_U32, WGT_I64},  {WGT_U8, WGT_I64, WGT_I64},
        {WGT_U64, WGT_U32, WGT_U64}, {WGT_U64, WGT_U8, WGT_U64},   {WGT_I64, WGT_U64, 0},
        {WGT_U64, WGT_I8, 0},        {WGT_I64, WGT_F32, 0},        {WGT_BOOL, WGT_U64, 0},
    };
    int64_t shape[1] = {3};
    uint8_t cv[3] = {1, 0, 1};
    wgt_tensor *cond = wgt_tensor_from_data(ctx, WGT_BOOL, 1, shape, cv, 3, WGT_USAGE_DEFAULT);
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        wgt_tensor *a = wgt_full(ctx, rows[k].a, 1, shape, 1), *b = wgt_zeros(ctx, rows[k].b, 1, shape), *w = NULL;
        if (rows[k].want) {
            w = wgt_where(cond, a, b);
            int64_t got[3] = {-1, -1, -1};
            CHECK(w && wgt_tensor_dtype(w) == rows[k].want && wgt_tensor_read(w, got, sizeof got) == WGT_OK &&
                      got[0] == 1 && got[1] == 0 && got[2] == 1,
                  "%s with %s: %s", wgt_dtype_name(rows[k].a), wgt_dtype_name(rows[k].b), wgt_last_error());
        } else {
            CHECK_ERROR((w = wgt_where(cond, a, b)) == NULL, WGT_ERR_DTYPE, "promote");
        }
        wgt_release(a), wgt_release(b), wgt_release(w);
    }
    wgt_release(cond);
}

/* Ops that do not take the 64-bit types refuse them by name; they never narrow silently. */
TEST_BACKENDS(int64_refusals_name_op_and_type) {
    int64_t shape[2] = {2, 3};
    wgt_tensor *a = wgt_zeros(ctx, WGT_I64, 2, shape), *u = wgt_ones(ctx, WGT_U64, 2, shape);
    CHECK(a && u, "%s", wgt_last_error());
    CHECK_ERROR(wgt_div(a, a) == NULL, WGT_ERR_DTYPE, "wgt_div: a is i64");
    CHECK_ERROR(wgt_sqrt(u) == NULL, WGT_ERR_DTYPE, "wgt_sqrt: a is u64");
    CHECK_ERROR(wgt_mean(a, 0, NULL, 0) == NULL, WGT_ERR_DTYPE, "wgt_mean: a is i64");
    CHECK_ERROR(wgt_argmax(a, 0, 0) == NULL, WGT_ERR_DTYPE, "wgt_argmax: a is i64");
    CHECK_ERROR(wgt_floor_divide(u, u) == NULL, WGT_ERR_DTYPE, "u64");
    CHECK_ERROR(wgt_softmax(u, -1) == NULL, WGT_ERR_DTYPE, "u64");
    CHECK_ERROR(wgt_rand_uniform(ctx, WGT_I64, 2, shape, 0, 1, 1) == NULL, WGT_ERR_DTYPE, "i64");
    CHECK_ERROR(wgt_argsort(a, -1, 0) == NULL, WGT_ERR_DTYPE, "i64");
    wgt_release(a), wgt_release(u);
}

/* WebGPU moves 64-bit elements as word pairs in one more dimension: a rank-8 view that cannot
 * be made contiguous by a copy there is refused with a message, while the CPU moves it. */
TEST_BACKENDS(int64_rank8_moves) {
    int64_t shape[8] = {2, 1, 2, 1, 2, 1, 2, 3};
    int n = 48;
    int64_t src[48];
    for (int i = 0; i < n; i++) src[i] = source_value(i);
    wgt_tensor *a = wgt_tensor_from_data(ctx, WGT_I64, 8, shape, src, sizeof src, WGT_USAGE_DEFAULT);
    int axes[8] = {7, 1, 2, 3, 4, 5, 6, 0};
    wgt_tensor *p = wgt_permute(a, axes), *c = p ? wgt_contiguous(p) : NULL;
    int64_t got[48];
    wgt_clear_error();
    wgt_status st = c ? wgt_tensor_read(c, got, sizeof got) : WGT_ERR_INTERNAL;
    if (!strcmp(test_backend_name(), "webgpu")) {
        CHECK(st == WGT_ERR_LIMIT && test_contains(wgt_last_error(), "rank-8 view of i64"), "%s: %s",
              wgt_status_name(st), wgt_last_error());
    } else {
        CHECK(st == WGT_OK, "%s", wgt_last_error());
        /* Output (k, 0, j, 0, m, 0, l, i) is input (i, 0, j, 0, m, 0, l, k). */
        for (int o = 0; st == WGT_OK && o < n; o++) {
            int i = o % 2, l = (o / 2) % 2, m = (o / 4) % 2, j = (o / 8) % 2, k = o / 16;
            CHECK(got[o] == src[((((i * 2 + j) * 2 + m) * 2 + l) * 3) + k], "element %d", o);
        }
    }
    wgt_clear_error();
    wgt_release(a), wgt_release(p), wgt_release(c);
}

/* Sums and products of i32 in 64 bits (past 2^31: no wrap), of i64 and u64 wrapping modulo
 * 2^64 (carries across the word boundary, a product's cross terms), over strided views, some
 * axes, keepdims and empty axes; running sums along each axis of a transposed view. */
TEST_BACKENDS(int64_sums_products_and_running_sums) {
    enum { R = 6, C = 37 };
    int32_t iv[R * C];
    int64_t shape[2] = {R, C};
    for (int i = 0; i < R * C; i++) iv[i] = (int32_t)((uint32_t)(i + 1) * 2654435761u); /* large, both signs */
    wgt_tensor *a = wgt_tensor_from_data(ctx, WGT_I32, 2, shape, iv, sizeof iv, WGT_USAGE_DEFAULT);
    int axes[2] = {1, 0}, col[1] = {0};
    wgt_tensor *t = wgt_permute(a, axes); /* [C, R], strided */
    wgt_tensor *all = wgt_sum_dtype(t, 0, NULL, 0, WGT_I64), *cols = wgt_sum_dtype(t, 1, col, 1, WGT_I64);
    wgt_tensor *uall = wgt_sum_dtype(t, 0, NULL, 0, WGT_U64);
    int64_t want_all = 0, want_cols[R] = {0}, got_all = 0, got_cols[R];
    uint64_t got_u = 0;
    for (int i = 0; i < R * C; i++) want_all += iv[i], want_cols[i / C] += iv[i];
    CHECK(all && cols && uall && wgt_tensor_dtype(all) == WGT_I64 && wgt_tensor_read(all, &got_all, 8) == WGT_OK &&
              wgt_tensor_read(cols, got_cols, sizeof got_cols) == WGT_OK && wgt_tensor_read(uall, &got_u, 8) == WGT_OK,
          "%s", wgt_last_error());
    CHECK(got_all == want_all && got_u == (uint64_t)want_all, "sum %lld, wanted %lld", (long long)got_all,
          (long long)want_all);
    CHECK(all && wgt_tensor_ndim(cols) == 2 && wgt_tensor_shape(cols)[0] == 1, "keepdims shape");
    for (int r = 0; cols && r < R; r++) CHECK(got_cols[r] == want_cols[r], "column sum %d", r);
    /* i64 and u64 values near 2^64: sums wrap, products keep the low 64 bits. */
    int64_t n = NEDGES;
    wgt_tensor *e = edges_tensor(ctx, WGT_U64), *es = wgt_sum(e, 0, NULL, 0), *ep = wgt_prod(e, 0, NULL, 0);
    int64_t pshape[2] = {4, 7};
    wgt_tensor *odd = wgt_arange(ctx, WGT_I64, -13, 15, 1), *odd2 = odd ? wgt_reshape(odd, 2, pshape) : NULL;
    wgt_tensor *nz = odd2 ? wgt_slice(odd2, 1, 0, 7, 2) : NULL; /* [4, 4]: -13, -11, ... no zero */
    int ax1[1] = {1};
    wgt_tensor *rp = nz ? wgt_prod_dtype(nz, 1, ax1, 0, WGT_I64) : NULL;
    uint64_t ws = 0, wp = 1, gs = 0, gp = 0;
    for (int i = 0; i < NEDGES; i++) ws += (uint64_t)edges[i], wp *= edges[i] ? (uint64_t)edges[i] : 1;
    wgt_tensor *nonzero = NULL;
    {   /* the product without the zero edge, so its cross terms matter */
        uint8_t keep[NEDGES];
        for (int i = 0; i < NEDGES; i++) keep[i] = edges[i] != 0;
        wgt_tensor *m = wgt_tensor_from_data(ctx, WGT_BOOL, 1, &n, keep, sizeof keep, WGT_USAGE_DEFAULT);
        wgt_tensor *one = wgt_ones(ctx, WGT_U64, 1, &n);
        nonzero = m && one && e ? wgt_where(m, e, one) : NULL;
        wgt_release(m), wgt_release(one);
    }
    wgt_tensor *np = nonzero ? wgt_prod(nonzero, 0, NULL, 0) : NULL;
    int64_t grp[4];
    CHECK(es && ep && np && rp && wgt_tensor_read(es, &gs, 8) == WGT_OK && wgt_tensor_read(np, &gp, 8) == WGT_OK &&
              wgt_tensor_read(rp, grp, sizeof grp) == WGT_OK,
          "%s", wgt_last_error());
    CHECK(gs == ws && gp == wp, "u64 sum 0x%llx (wanted 0x%llx), product 0x%llx (wanted 0x%llx)", (unsigned long long)gs,
          (unsigned long long)ws, (unsigned long long)gp, (unsigned long long)wp);
    for (int r = 0; rp && r < 4; r++) {
        int64_t w = 1;
        for (int k = 0; k < 7; k += 2) w *= -13 + r * 7 + k;
        CHECK(grp[r] == w, "row product %d: %lld, wanted %lld", r, (long long)grp[r], (long long)w);
    }
    /* Running sums along both axes of the transposed i32 view, in u64. */
    for (int axis = 0; axis < 2; axis++) {
        wgt_tensor *cs = wgt_cumsum_dtype(t, axis, WGT_U64);
        uint64_t got[R * C];
        CHECK(cs && wgt_tensor_dtype(cs) == WGT_U64 && wgt_tensor_read(cs, got, sizeof got) == WGT_OK, "%s",
              wgt_last_error());
        for (int k = 0; cs && k < C; k++)
            for (int r = 0; r < R; r++) {
                uint64_t w = 0;
                for (int j = 0; j <= (axis == 0 ? k : r); j++)
                    w += (uint64_t)(int64_t)(axis == 0 ? iv[r * C + j] : iv[j * C + k]);
                CHECK(got[k * R + r] == w, "cumsum axis %d at (%d, %d)", axis, k, r);
            }
        wgt_release(cs);
    }
    /* Empty reductions give the identities. */
    int64_t eshape[2] = {3, 0};
    wgt_tensor *empty = wgt_zeros(ctx, WGT_I64, 2, eshape);
    wgt_tensor *esum = empty ? wgt_sum(empty, 1, ax1, 0) : NULL, *eprod = empty ? wgt_prod(empty, 1, ax1, 0) : NULL;
    int64_t gsum[3] = {-1, -1, -1}, gprod[3] = {-1, -1, -1};
    CHECK(esum && eprod && wgt_tensor_read(esum, gsum, sizeof gsum) == WGT_OK &&
              wgt_tensor_read(eprod, gprod, sizeof gprod) == WGT_OK,
          "%s", wgt_last_error());
    for (int i = 0; esum && eprod && i < 3; i++) CHECK(gsum[i] == 0 && gprod[i] == 1, "empty identity %d", i);
    CHECK_ERROR(wgt_sum_dtype(a, 0, NULL, 0, WGT_F32) == NULL, WGT_ERR_DTYPE, "wgt_sum_dtype: dtype f32 for a of i32");
    wgt_tensor *f = wgt_zeros(ctx, WGT_F32, 2, shape);
    CHECK_ERROR(wgt_cumsum_dtype(f, 0, WGT_I64) == NULL, WGT_ERR_DTYPE, "wgt_cumsum_dtype");
    wgt_tensor *rel[] = {a, t, all, cols, uall, e, es, ep, odd, odd2, nz, rp, nonzero, np, empty, esum, eprod, f};
    for (size_t k = 0; k < sizeof rel / sizeof rel[0]; k++) wgt_release(rel[k]);
}

/* The reference of docs/ops.md's 64-bit elementwise ops in C's own uint64_t arithmetic. */
static uint64_t ref_binary(const char *op, uint64_t a, uint64_t b, int s) {
    int lt = s ? (int64_t)a < (int64_t)b : a < b, gt = s ? (int64_t)a > (int64_t)b : a > b;
    if (!strcmp(op, "add")) return a + b;
    if (!strcmp(op, "sub")) return a - b;
    if (!strcmp(op, "mul")) return a * b;
    if (!strcmp(op, "maximum")) return lt ? b : a;
    if (!strcmp(op, "minimum")) return gt ? b : a;
    if (!strcmp(op, "and")) return a & b;
    if (!strcmp(op, "or")) return a | b;
    if (!strcmp(op, "xor")) return a ^ b;
    if (!strcmp(op, "eq")) return a == b;
    if (!strcmp(op, "ne")) return a != b;
    if (!strcmp(op, "lt")) return lt;
    if (!strcmp(op, "le")) return !gt;
    if (!strcmp(op, "gt")) return gt;
    return !lt; /* ge */
}

/* Every pair of edge values (a column broadcast against a row: carries across the word
 * boundary, overflow wrap, the ends of the range), for both types, through every op; neg,
 * abs and bitwise_not of a flipped view; and a chain of ops, which WebGPU does not fuse. */
TEST_BACKENDS(int64_elementwise_every_pair_of_edges) {
    static const struct {
        const char *name;
        wgt_tensor *(*fn)(wgt_tensor *, wgt_tensor *);
    } ops[] = {{"add", wgt_add}, {"sub", wgt_sub}, {"mul", wgt_mul}, {"maximum", wgt_maximum},
               {"minimum", wgt_minimum}, {"and", wgt_bitwise_and}, {"or", wgt_bitwise_or}, {"xor", wgt_bitwise_xor},
               {"eq", wgt_eq}, {"ne", wgt_ne}, {"lt", wgt_lt}, {"le", wgt_le}, {"gt", wgt_gt}, {"ge", wgt_ge}};
    const wgt_dtype types[2] = {WGT_I64, WGT_U64};
    int64_t col[2] = {NEDGES, 1}, row[2] = {1, NEDGES};
    static uint64_t got[NEDGES * NEDGES];
    for (int t = 0; t < 2; t++) {
        int s = types[t] == WGT_I64;
        wgt_tensor *a = wgt_tensor_from_data(ctx, types[t], 2, col, edges, sizeof edges, WGT_USAGE_DEFAULT);
        wgt_tensor *b = wgt_tensor_from_data(ctx, types[t], 2, row, edges, sizeof edges, WGT_USAGE_DEFAULT);
        for (size_t k = 0; a && b && k < sizeof ops / sizeof ops[0]; k++) {
            wgt_tensor *r = ops[k].fn(a, b);
            int compare = k >= 8;
            wgt_tensor *wide = r && compare ? wgt_cast(r, WGT_U64) : (r ? wgt_retain(r) : NULL);
            CHECK(wide && wgt_tensor_dtype(r) == (compare ? wgt_tensor_dtype(r) : types[t]) &&
                      wgt_tensor_read(wide, got, sizeof got) == WGT_OK,
                  "%s %s: %s", wgt_dtype_name(types[t]), ops[k].name, wgt_last_error());
            for (int i = 0, bad = 0; wide && i < NEDGES * NEDGES && bad < 3; i++) {
                uint64_t x = (uint64_t)edges[i / NEDGES], y = (uint64_t)edges[i % NEDGES], want = ref_binary(ops[k].name, x, y, s);
                if (got[i] != want) {
                    CHECK(0, "%s %s(0x%llx, 0x%llx): 0x%llx, wanted 0x%llx", wgt_dtype_name(types[t]), ops[k].name,
                          (unsigned long long)x, (unsigned long long)y, (unsigned long long)got[i],
                          (unsigned long long)want);
                    bad++;
                }
            }
            wgt_release(r), wgt_release(wide);
        }
        /* Unary ops of the flipped column, and the chain -((a + b) * b) - 1 over the broadcast. */
        int axis[1] = {0};
        wgt_tensor *fl = a ? wgt_flip(a, 1, axis) : NULL;
        wgt_tensor *un[3] = {fl ? wgt_neg(fl) : NULL, fl ? wgt_abs(fl) : NULL, fl ? wgt_bitwise_not(fl) : NULL};
        for (int u = 0; u < 3; u++) {
            uint64_t g[NEDGES];
            CHECK(un[u] && wgt_tensor_read(un[u], g, sizeof g) == WGT_OK, "%s unary %d: %s", wgt_dtype_name(types[t]), u,
                  wgt_last_error());
            for (int i = 0; un[u] && i < NEDGES; i++) {
                uint64_t x = (uint64_t)edges[NEDGES - 1 - i];
                uint64_t want = u == 0 ? 0 - x : u == 1 ? (s && (int64_t)x < 0 ? 0 - x : x) : ~x;
                CHECK(g[i] == want, "%s unary %d of 0x%llx: 0x%llx", wgt_dtype_name(types[t]), u, (unsigned long long)x,
                      (unsigned long long)g[i]);
            }
            wgt_release(un[u]);
        }
        wgt_tensor *sum = a && b ? wgt_add(a, b) : NULL, *prod = sum ? wgt_mul(sum, b) : NULL;
        wgt_tensor *neg = prod ? wgt_neg(prod) : NULL, *chain = neg ? wgt_sub_scalar(neg, 1) : NULL;
        CHECK(chain && wgt_tensor_read(chain, got, sizeof got) == WGT_OK, "chain: %s", wgt_last_error());
        for (int i = 0; chain && i < NEDGES * NEDGES; i++) {
            uint64_t x = (uint64_t)edges[i / NEDGES], y = (uint64_t)edges[i % NEDGES];
            CHECK(got[i] == 0 - (x + y) * y - 1, "chain at %d", i);
        }
        wgt_release(sum), wgt_release(prod), wgt_release(neg), wgt_release(chain), wgt_release(fl);
        wgt_release(a), wgt_release(b);
    }
    /* Mixed types promote first: u32 with i32 computes in i64. */
    int64_t one = 1;
    wgt_tensor *u = wgt_full(ctx, WGT_U32, 1, &one, 4294967295.0), *i = wgt_full(ctx, WGT_I32, 1, &one, -2147483648.0);
    wgt_tensor *m = u && i ? wgt_mul(u, i) : NULL;
    int64_t gm = 0;
    CHECK(m && wgt_tensor_dtype(m) == WGT_I64 && wgt_tensor_read(m, &gm, 8) == WGT_OK &&
              gm == (int64_t)4294967295LL * -2147483648LL,
          "u32 * i32 in i64: %lld (%s)", (long long)gm, wgt_last_error());
    wgt_release(u), wgt_release(i), wgt_release(m);
}

/* Every one- and two-tensor function of the header outside docs/ops.md's list for the 64-bit
 * types refuses them with WGT_ERR_DTYPE naming the function and the type. */
TEST_BACKENDS(int64_refused_by_every_op_outside_the_list) {
#define F(name) {#name, name}
    static const struct { const char *name; wgt_tensor *(*fn)(wgt_tensor *); } unary[] = {
        F(wgt_logical_not), F(wgt_sign), F(wgt_square), F(wgt_sqrt), F(wgt_rsqrt), F(wgt_reciprocal), F(wgt_exp),
        F(wgt_expm1), F(wgt_log), F(wgt_log1p), F(wgt_sin), F(wgt_cos), F(wgt_tanh), F(wgt_sigmoid), F(wgt_relu),
        F(wgt_gelu), F(wgt_gelu_tanh), F(wgt_silu), F(wgt_softplus), F(wgt_floor), F(wgt_ceil), F(wgt_round),
        F(wgt_erf), F(wgt_isnan), F(wgt_isinf), F(wgt_tan), F(wgt_asin), F(wgt_acos), F(wgt_atan), F(wgt_sinh),
        F(wgt_cosh), F(wgt_asinh), F(wgt_acosh), F(wgt_atanh), F(wgt_log2), F(wgt_log10), F(wgt_exp2), F(wgt_trunc),
        F(wgt_signbit), F(wgt_isfinite), F(wgt_linalg_inv), F(wgt_linalg_det), F(wgt_argwhere)};
    static const struct { const char *name; wgt_tensor *(*fn)(wgt_tensor *, wgt_tensor *); } binary[] = {
        F(wgt_div), F(wgt_pow), F(wgt_mod), F(wgt_atan2), F(wgt_logical_and), F(wgt_logical_or), F(wgt_logaddexp),
        F(wgt_hypot), F(wgt_copysign), F(wgt_nextafter), F(wgt_bitwise_left_shift), F(wgt_bitwise_right_shift),
        F(wgt_floor_divide), F(wgt_linalg_solve)};
#undef F
    int64_t shape[2] = {2, 2};
    const wgt_dtype types[2] = {WGT_I64, WGT_U64};
    for (int t = 0; t < 2; t++) {
        wgt_tensor *a = wgt_ones(ctx, types[t], 2, shape);
        char want[96];
        for (size_t k = 0; a && k < sizeof unary / sizeof unary[0]; k++) {
            snprintf(want, sizeof want, "%s: a is %s", unary[k].name, wgt_dtype_name(types[t]));
            wgt_tensor *r = NULL;
            CHECK_ERROR((r = unary[k].fn(a)) == NULL, WGT_ERR_DTYPE, want);
            wgt_release(r);
        }
        for (size_t k = 0; a && k < sizeof binary / sizeof binary[0]; k++) {
            snprintf(want, sizeof want, "%s: a is %s", binary[k].name, wgt_dtype_name(types[t]));
            wgt_tensor *r = NULL;
            CHECK_ERROR((r = binary[k].fn(a, a)) == NULL, WGT_ERR_DTYPE, want);
            wgt_release(r);
        }
        wgt_release(a);
    }
}
