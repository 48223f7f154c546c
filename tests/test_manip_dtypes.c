/*
 * The element-moving ops of the array API on the narrow types (bool, i8, u8, i16, u16, bf16)
 * and the 64-bit integers: moveaxis, roll, tile, diagonal, tril, triu, repeat, take,
 * index_select, take_along_axis and masked_select. Each op runs on a transposed view of the
 * type and, the same way, on an i32 tensor of source positions (1-based; 0 is never a
 * position), whose result says which source element each output element must be; the output
 * is checked bit for bit against the source bytes (zero where tril/triu clear an entry). The
 * position tensors run the i32 paths, which test_manip.c checks against host references.
 */
#include <stdlib.h>
#include <string.h>

#include "test.h"

enum { ROWS = 5, COLS = 3, N = ROWS * COLS };

static const wgt_dtype types[] = {WGT_BOOL, WGT_I8, WGT_U8, WGT_I16, WGT_U16, WGT_BF16, WGT_I64, WGT_U64};

/* Source element i of type dt, as bytes: distinct where the type allows, negative ones for
 * the signed types, values past 2^32 for the 64-bit ones (so both words move). */
static void element(wgt_dtype dt, int i, unsigned char *out) {
    int64_t v = (int64_t)i * 37 - 200;
    memset(out, 0, 8);
    switch (dt) {
    case WGT_BOOL: out[0] = (unsigned char)(i % 3 != 1); break;
    case WGT_I8: out[0] = (unsigned char)(int8_t)(v / 3); break;
    case WGT_U8: out[0] = (unsigned char)(i * 17 + 3); break;
    case WGT_I16: {
        int16_t s = (int16_t)(v * 41);
        memcpy(out, &s, 2);
        break;
    }
    case WGT_U16: {
        uint16_t s = (uint16_t)(i * 4099 + 7);
        memcpy(out, &s, 2);
        break;
    }
    case WGT_BF16: {
        uint16_t s = wgt_f32_to_bf16((float)v * 0.5f);
        memcpy(out, &s, 2);
        break;
    }
    default: {
        int64_t s = v * 3000000019LL; /* u64 reads the same bits as a large unsigned value */
        memcpy(out, &s, 8);
        break;
    }
    }
}

/* The [COLS, ROWS] transposed view of a [ROWS, COLS] tensor of dt made from bytes. */
static wgt_tensor *transposed(wgt_context *ctx, wgt_dtype dt, const void *bytes) {
    int64_t shape[2] = {ROWS, COLS};
    wgt_tensor *base = wgt_tensor_from_data(ctx, dt, 2, shape, bytes, wgt_dtype_size(dt) * N, WGT_USAGE_DEFAULT);
    wgt_tensor *t = base ? wgt_transpose(base, 0, 1) : NULL;
    wgt_release(base);
    return t;
}

typedef struct {
    wgt_tensor *i02, *i20, *along, *mask; /* index tensors and a mask shared by both runs */
} extras;

static wgt_tensor *run_op(int op, wgt_tensor *x, const extras *e) {
    static const int64_t shift2[1] = {2}, shift4[1] = {4}, reps[2] = {2, 1}, twice[1] = {2};
    static const int axis1[1] = {1};
    switch (op) {
    case 0: return wgt_moveaxis(x, 0, 1);
    case 1: return wgt_roll(x, 1, shift2, axis1);
    case 2: return wgt_roll(x, 1, shift4, NULL);
    case 3: return wgt_tile(x, 2, reps);
    case 4: return wgt_diagonal(x, 1, 0, 1);
    case 5: return wgt_tril(x, 0);
    case 6: return wgt_triu(x, 1);
    case 7: return wgt_repeat(x, 1, twice, 0);
    case 8: return wgt_take(x, e->i02, 1);
    case 9: return wgt_index_select(x, 0, e->i20);
    case 10: return wgt_take_along_axis(x, e->along, 1);
    default: return wgt_masked_select(x, e->mask);
    }
}

static const char *const op_names[] = {"moveaxis", "roll", "roll (flat)", "tile", "diagonal", "tril",
                                       "triu", "repeat", "take", "index_select", "take_along_axis", "masked_select"};

static wgt_tensor *i32_tensor(wgt_context *ctx, int ndim, const int64_t *shape, const int32_t *v, size_t n) {
    return wgt_tensor_from_data(ctx, WGT_I32, ndim, shape, v, n * sizeof *v, WGT_USAGE_DEFAULT);
}

TEST_BACKENDS(manip_moves_narrow_and_64bit_types_bit_for_bit) {
    int32_t pos[N], i02[4] = {2, 0, 4, 2}, i20[2] = {2, 0}, along[COLS * 2] = {1, 0, 4, 4, 0, 2};
    uint8_t mask[COLS * ROWS];
    for (int i = 0; i < N; i++) pos[i] = i + 1;
    for (int i = 0; i < N; i++) mask[i] = (uint8_t)(i % 4 != 2);
    int64_t src_shape[2] = {ROWS, COLS}, n4 = 4, n2 = 2, along_shape[2] = {COLS, 2}, mask_shape[2] = {COLS, ROWS};
    extras e = {i32_tensor(ctx, 1, &n4, i02, 4), i32_tensor(ctx, 1, &n2, i20, 2),
                i32_tensor(ctx, 2, along_shape, along, COLS * 2),
                wgt_tensor_from_data(ctx, WGT_BOOL, 2, mask_shape, mask, sizeof mask, WGT_USAGE_DEFAULT)};
    wgt_tensor *pbase = i32_tensor(ctx, 2, src_shape, pos, N), *p = pbase ? wgt_transpose(pbase, 0, 1) : NULL;
    CHECK(e.i02 && e.i20 && e.along && e.mask && p, "setting up: %s", wgt_last_error());
    for (size_t t = 0; p && t < sizeof types / sizeof *types; t++) {
        wgt_dtype dt = types[t];
        size_t es = wgt_dtype_size(dt);
        unsigned char src[N * 8], zero[8] = {0};
        for (int i = 0; i < N; i++) element(dt, i, src + (size_t)i * es);
        wgt_tensor *a = transposed(ctx, dt, src);
        CHECK(a, "%s: %s", wgt_dtype_name(dt), wgt_last_error());
        for (int op = 0; a && op < (int)(sizeof op_names / sizeof *op_names); op++) {
            wgt_tensor *r = run_op(op, a, &e), *rp = run_op(op, p, &e);
            CHECK(r && rp, "%s of %s: %s", op_names[op], wgt_dtype_name(dt), wgt_last_error());
            int64_t n = r ? wgt_tensor_numel(r) : 0;
            CHECK(!r || !rp || (wgt_tensor_dtype(r) == dt && n == wgt_tensor_numel(rp) && n > 0),
                  "%s of %s: type %s, %lld elements", op_names[op], wgt_dtype_name(dt),
                  r ? wgt_dtype_name(wgt_tensor_dtype(r)) : "-", (long long)n);
            unsigned char *got = r && rp ? malloc((size_t)n * es) : NULL;
            int32_t *from = got ? malloc((size_t)n * sizeof *from) : NULL;
            if (from && wgt_tensor_read(r, got, (size_t)n * es) == WGT_OK &&
                wgt_tensor_read(rp, from, (size_t)n * sizeof *from) == WGT_OK) {
                for (int64_t i = 0; i < n; i++) {
                    const unsigned char *want = from[i] ? src + (size_t)(from[i] - 1) * es : zero;
                    CHECK(memcmp(got + (size_t)i * es, want, es) == 0, "%s of %s: element %lld (from source %d) differs",
                          op_names[op], wgt_dtype_name(dt), (long long)i, from[i] - 1);
                }
            } else if (r && rp) {
                CHECK(0, "%s of %s: reading: %s", op_names[op], wgt_dtype_name(dt), wgt_last_error());
            }
            free(got);
            free(from);
            wgt_release(r);
            wgt_release(rp);
        }
        wgt_release(a);
    }
    wgt_release(pbase), wgt_release(p);
    wgt_release(e.i02), wgt_release(e.i20), wgt_release(e.along), wgt_release(e.mask);
}

/* An index out of range is still found, and an empty input still gives an empty result of
 * its type, when the op goes through the wide type. */
TEST_BACKENDS(manip_moves_narrow_types_errors_and_empty) {
    int64_t shape[2] = {2, 3}, empty[2] = {0, 3}, one = 1;
    int32_t bad = 3;
    wgt_tensor *a = wgt_zeros(ctx, WGT_I8, 2, shape), *z = wgt_zeros(ctx, WGT_BF16, 2, empty);
    wgt_tensor *idx = wgt_tensor_from_data(ctx, WGT_I32, 1, &one, &bad, sizeof bad, WGT_USAGE_DEFAULT);
    CHECK(a && z && idx, "%s", wgt_last_error());
    wgt_tensor *r = NULL, *t = NULL;
    CHECK_ERROR((r = wgt_take(a, idx, 1)) == NULL, WGT_ERR_INVALID_ARGUMENT, "index 3 at position [0] of indices");
    wgt_release(r);
    static const int64_t reps[2] = {3, 2};
    CHECK((t = wgt_tile(z, 2, reps)) && wgt_tensor_dtype(t) == WGT_BF16 && wgt_tensor_numel(t) == 0 &&
              wgt_tensor_shape(t)[1] == 6,
          "tile of an empty bf16 tensor: %s", wgt_last_error());
    wgt_release(t);
    wgt_release(a), wgt_release(z), wgt_release(idx);
}
