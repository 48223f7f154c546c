/*
 * Scalars given as doubles to ops on typed tensors: a value the tensor's type cannot hold is
 * an error naming the function, the value and the type (a fraction, NaN or infinity for an
 * integer type: WGT_ERR_DTYPE; a whole number past an integer type's range or a finite
 * value past a float type's range: WGT_ERR_INVALID_ARGUMENT), and the values at the edge
 * of each type are taken exactly. Covers the *_scalar forms, wgt_scalar, wgt_full, wgt_pad,
 * wgt_arange and the random creators' bounds.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "test.h"

#define N_(a) ((int)(sizeof(a) / sizeof *(a)))

typedef wgt_tensor *(*scalar_form)(wgt_tensor *, double);
static const struct {
    const char *name;
    scalar_form fn;
} forms[] = {{"wgt_add_scalar", wgt_add_scalar},         {"wgt_sub_scalar", wgt_sub_scalar},
             {"wgt_mul_scalar", wgt_mul_scalar},         {"wgt_div_scalar", wgt_div_scalar},
             {"wgt_pow_scalar", wgt_pow_scalar},         {"wgt_maximum_scalar", wgt_maximum_scalar},
             {"wgt_minimum_scalar", wgt_minimum_scalar}};

/* A call that must fail with status, its message naming fn, the value as shown and the type. */
#define REFUSED(expr, status, fn, shown, dtype)                                                          \
    do {                                                                                                 \
        wgt_clear_error();                                                                               \
        wgt_tensor *r_ = (expr);                                                                         \
        const char *m_ = wgt_last_error();                                                               \
        CHECK(!r_ && wgt_last_status() == (status), "%s(%s, %s): status %s, wanted %s: %s", fn, dtype,     \
              shown, wgt_status_name(wgt_last_status()), wgt_status_name(status), m_);                   \
        CHECK(test_contains(m_, fn) && test_contains(m_, shown) && test_contains(m_, dtype),             \
              "the message does not name %s, %s and %s: %s", fn, shown, dtype, m_);                      \
        wgt_release(r_);                                                                                 \
        wgt_clear_error();                                                                               \
    } while (0)

TEST_BACKENDS(scalar_forms_refuse_values_the_type_cannot_hold) {
    int64_t s3[1] = {3};
    wgt_tensor *i = wgt_full(ctx, WGT_I32, 1, s3, 7), *u = wgt_full(ctx, WGT_U32, 1, s3, 7);
    wgt_tensor *h = wgt_full(ctx, WGT_F16, 1, s3, 1), *f = wgt_full(ctx, WGT_F32, 1, s3, 1);
    CHECK(i && u && h && f, "%s", wgt_last_error());
    /* The two cases: division by 0.5 became division by 0, -1 became 0. */
    REFUSED(wgt_div_scalar(i, 0.5), WGT_ERR_DTYPE, "wgt_div_scalar", "0.5", "i32");
    REFUSED(wgt_mul_scalar(u, -1), WGT_ERR_INVALID_ARGUMENT, "wgt_mul_scalar", "-1", "u32");
    static const struct {
        wgt_dtype dtype;
        double value;
        wgt_status status;
        const char *shown;
    } bad[] = {
        {WGT_I32, 0.5, WGT_ERR_DTYPE, "0.5"},
        {WGT_I32, -2.25, WGT_ERR_DTYPE, "-2.25"},
        {WGT_I32, NAN, WGT_ERR_DTYPE, "nan"},
        {WGT_I32, INFINITY, WGT_ERR_DTYPE, "inf"},
        {WGT_U32, -INFINITY, WGT_ERR_DTYPE, "-inf"},
        {WGT_U32, 1e-300, WGT_ERR_DTYPE, "1e-300"},
        {WGT_I32, 2147483648.0, WGT_ERR_INVALID_ARGUMENT, "2147483648"},
        {WGT_I32, -2147483649.0, WGT_ERR_INVALID_ARGUMENT, "-2147483649"},
        {WGT_I32, 1e20, WGT_ERR_INVALID_ARGUMENT, "1e+20"},
        {WGT_U32, -1, WGT_ERR_INVALID_ARGUMENT, "-1"},
        {WGT_U32, 4294967296.0, WGT_ERR_INVALID_ARGUMENT, "4294967296"},
        {WGT_F16, 65520, WGT_ERR_INVALID_ARGUMENT, "65520"}, /* rounds to infinity */
        {WGT_F16, 1e6, WGT_ERR_INVALID_ARGUMENT, "1000000"},
        {WGT_F16, -1e6, WGT_ERR_INVALID_ARGUMENT, "-1000000"},
        {WGT_F32, 1e39, WGT_ERR_INVALID_ARGUMENT, "1e+39"},
        {WGT_F32, 0x1.ffffffp127, WGT_ERR_INVALID_ARGUMENT, "3.4028235677973366e+38"}, /* rounds to infinity */
        {WGT_F32, -DBL_MAX, WGT_ERR_INVALID_ARGUMENT, "-1.7976931348623157e+308"},
    };
    for (int k = 0; k < N_(bad); k++) {
        wgt_tensor *a = bad[k].dtype == WGT_I32 ? i : bad[k].dtype == WGT_U32 ? u : bad[k].dtype == WGT_F16 ? h : f;
        const char *type = wgt_dtype_name(bad[k].dtype);
        for (int m = 0; m < N_(forms); m++)
            REFUSED(forms[m].fn(a, bad[k].value), bad[k].status, forms[m].name, bad[k].shown, type);
        REFUSED(wgt_scalar(ctx, bad[k].dtype, bad[k].value), bad[k].status, "wgt_scalar", bad[k].shown, type);
        REFUSED(wgt_full(ctx, bad[k].dtype, 1, s3, bad[k].value), bad[k].status, "wgt_full", bad[k].shown, type);
        int64_t before[1] = {1}, after[1] = {0};
        REFUSED(wgt_pad(a, before, after, bad[k].value), bad[k].status, "wgt_pad", bad[k].shown, type);
    }
    wgt_release(i), wgt_release(u), wgt_release(h), wgt_release(f);
}

TEST_BACKENDS(scalar_creators_refuse_ranges_the_type_cannot_hold) {
    int64_t s4[1] = {4};
    REFUSED(wgt_arange(ctx, WGT_I32, 0, 5, 0.5), WGT_ERR_DTYPE, "wgt_arange", "step = 0.5", "i32");
    REFUSED(wgt_arange(ctx, WGT_I32, 0.5, 5, 1), WGT_ERR_DTYPE, "wgt_arange", "start = 0.5", "i32");
    REFUSED(wgt_arange(ctx, WGT_U32, 2, -3, -1), WGT_ERR_INVALID_ARGUMENT, "wgt_arange", "-2", "u32");
    REFUSED(wgt_arange(ctx, WGT_I32, 2147483640.0, 2147483650.0, 1), WGT_ERR_INVALID_ARGUMENT, "wgt_arange",
            "2147483649", "i32");
    REFUSED(wgt_arange(ctx, WGT_F16, 65000, 66000, 100), WGT_ERR_INVALID_ARGUMENT, "wgt_arange", "65900", "f16");
    REFUSED(wgt_rand_uniform(ctx, WGT_U32, 1, s4, -10, 10, 1), WGT_ERR_INVALID_ARGUMENT, "wgt_rand_uniform", "-10",
            "u32");
    REFUSED(wgt_rand_uniform(ctx, WGT_I32, 1, s4, 0, 2147483649.0, 1), WGT_ERR_INVALID_ARGUMENT, "wgt_rand_uniform",
            "2147483649", "i32");
    REFUSED(wgt_rand_uniform(ctx, WGT_F16, 1, s4, 0, 1e5, 1), WGT_ERR_INVALID_ARGUMENT, "wgt_rand_uniform", "100000",
            "f16");
    REFUSED(wgt_rand_normal(ctx, WGT_U32, 1, s4, -5, 1, 1), WGT_ERR_INVALID_ARGUMENT, "wgt_rand_normal", "-5", "u32");
    REFUSED(wgt_rand_normal(ctx, WGT_F16, 1, s4, 1e5, 1, 1), WGT_ERR_INVALID_ARGUMENT, "wgt_rand_normal", "100000",
            "f16");
    /* Ranges that fill a type end to end are fine; an empty range holds no value to check. */
    wgt_tensor *ok[] = {wgt_arange(ctx, WGT_U32, 5, -1, -1), wgt_arange(ctx, WGT_I32, 0.5, 0.5, 0.25),
                        wgt_arange(ctx, WGT_I32, 2147483644.0, 2147483647.5, 1),
                        wgt_rand_uniform(ctx, WGT_I32, 1, s4, -2147483648.0, 2147483648.0, 1),
                        wgt_rand_uniform(ctx, WGT_U32, 1, s4, 0, 4294967296.0, 1),
                        wgt_rand_uniform(ctx, WGT_F16, 1, s4, -65504, 65504, 1)};
    for (int k = 0; k < N_(ok); k++) CHECK(ok[k] != NULL, "range %d: %s", k, wgt_last_error());
    int32_t top[4] = {0};
    CHECK(ok[2] && wgt_tensor_read(ok[2], top, sizeof top) == WGT_OK && top[0] == 2147483644 && top[3] == INT32_MAX,
          "arange to INT32_MAX: %d .. %d", top[0], top[3]);
    for (int k = 0; k < N_(ok); k++) wgt_release(ok[k]);
}

static wgt_tensor *from_u32(wgt_context *ctx, wgt_dtype dtype, const void *data) {
    int64_t s3[1] = {3};
    return wgt_tensor_from_data(ctx, dtype, 1, s3, data, 3 * wgt_dtype_size(dtype), WGT_USAGE_DEFAULT);
}

/* r's three 32-bit (or 16-bit) elements are exactly want's. */
static void expect_bits(wgt_tensor *r, const void *want, const char *what) {
    uint32_t got[3] = {0};
    size_t bytes = r ? (size_t)wgt_tensor_nbytes(r) : 0;
    CHECK(r && bytes <= sizeof got && wgt_tensor_read(r, got, bytes) == WGT_OK && !memcmp(got, want, bytes),
          "%s: %s", what, r ? "wrong bits" : wgt_last_error());
    wgt_release(r);
}

TEST_BACKENDS(scalar_forms_take_each_types_edge_values_exactly) {
    const int32_t iv[3] = {7, -7, 0};
    const uint32_t uv[3] = {7, 0, UINT32_MAX};
    wgt_tensor *i = from_u32(ctx, WGT_I32, iv), *u = from_u32(ctx, WGT_U32, uv);
    /* Integers wrap (ops.md); the scalar arrives exactly, not saturated or truncated. */
    expect_bits(wgt_add_scalar(i, INT32_MAX), (int32_t[]){INT32_MIN + 6, 2147483640, INT32_MAX}, "i32 + INT32_MAX");
    expect_bits(wgt_sub_scalar(i, -2147483648.0), (int32_t[]){INT32_MIN + 7, 2147483641, INT32_MIN},
                "i32 - INT32_MIN");
    expect_bits(wgt_div_scalar(i, -2), (int32_t[]){-3, 3, 0}, "i32 / -2");
    expect_bits(wgt_div_scalar(i, -0.0), (int32_t[]){0, 0, 0}, "i32 / -0.0 (integer division by zero gives 0)");
    expect_bits(wgt_pow_scalar(i, -1), (int32_t[]){0, 0, 0}, "i32 ^ -1");
    expect_bits(wgt_add_scalar(u, UINT32_MAX), (uint32_t[]){6, UINT32_MAX, UINT32_MAX - 1}, "u32 + UINT32_MAX");
    expect_bits(wgt_mul_scalar(u, UINT32_MAX), (uint32_t[]){UINT32_MAX - 6, 0, 1}, "u32 * UINT32_MAX");
    expect_bits(wgt_maximum_scalar(u, 4294967295.0), (uint32_t[]){UINT32_MAX, UINT32_MAX, UINT32_MAX}, "u32 max");
    expect_bits(wgt_minimum_scalar(u, 0), (uint32_t[]){0, 0, 0}, "u32 min 0");
    /* f16: 65504 is the largest finite value; 65519 rounds to it; infinities pass as given. */
    const uint16_t hv[3] = {0x0000, 0xfbff /* -65504 */, 0x3c00 /* 1 */};
    wgt_tensor *h = from_u32(ctx, WGT_F16, hv);
    expect_bits(wgt_add_scalar(h, 65504), (uint16_t[]){0x7bff, 0x0000, 0x7bff}, "f16 + 65504");
    expect_bits(wgt_mul_scalar(h, 65519), (uint16_t[]){0x0000, 0xfc00, 0x7bff}, "f16 * 65519 (rounds to 65504)");
    expect_bits(wgt_add_scalar(h, -INFINITY), (uint16_t[]){0xfc00, 0xfc00, 0xfc00}, "f16 + -inf");
    /* f32: -0.0 keeps its sign, FLT_MAX is exact. */
    const float fv[3] = {-0.0f, 1.0f, -1.0f};
    wgt_tensor *f = from_u32(ctx, WGT_F32, fv);
    expect_bits(wgt_add_scalar(f, -0.0), (float[]){-0.0f, 1.0f, -1.0f}, "f32 + -0.0");
    expect_bits(wgt_mul_scalar(f, -0.0), (float[]){0.0f, -0.0f, 0.0f}, "f32 * -0.0");
    expect_bits(wgt_maximum_scalar(f, FLT_MAX), (float[]){FLT_MAX, FLT_MAX, FLT_MAX}, "f32 max FLT_MAX");
    expect_bits(wgt_minimum_scalar(f, -0x1.fffffefp127), (float[]){-FLT_MAX, -FLT_MAX, -FLT_MAX},
                "f32 min (a value that rounds to -FLT_MAX)");
    expect_bits(wgt_add_scalar(f, 0.1), (float[]){0.1f, 1.1f, -0.9f}, "f32 + 0.1 (rounded)");
    /* The creators take the same edge values. */
    int64_t s3[1] = {3}, before[1] = {1}, after[1] = {1};
    expect_bits(wgt_full(ctx, WGT_I32, 1, s3, -2147483648.0), (int32_t[]){INT32_MIN, INT32_MIN, INT32_MIN},
                "full INT32_MIN");
    expect_bits(wgt_full(ctx, WGT_I32, 1, s3, -0.0), (int32_t[]){0, 0, 0}, "full i32 -0.0");
    expect_bits(wgt_full(ctx, WGT_U32, 1, s3, 4294967295.0), (uint32_t[]){UINT32_MAX, UINT32_MAX, UINT32_MAX},
                "full UINT32_MAX");
    expect_bits(wgt_full(ctx, WGT_F16, 1, s3, -65504), (uint16_t[]){0xfbff, 0xfbff, 0xfbff}, "full f16 -65504");
    wgt_tensor *one = wgt_full(ctx, WGT_U32, 1, (int64_t[]){1}, 9);
    expect_bits(wgt_pad(one, before, after, 4294967295.0), (uint32_t[]){UINT32_MAX, 9, UINT32_MAX}, "pad u32");
    wgt_release(one), wgt_release(i), wgt_release(u), wgt_release(h), wgt_release(f);
}
