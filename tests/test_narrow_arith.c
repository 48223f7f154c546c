/*
 * Arithmetic, bitwise ops and reductions on i8, u8, i16 and u16: results keep the type and
 * wrap as NumPy's do (checked exactly against int64 references reduced to the type), sums
 * and products give i32 (signed) or u32 (unsigned), and what the types do not define (bool
 * and bf16 arithmetic, float-only functions) is WGT_ERR_DTYPE naming the function.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

static const wgt_dtype narrow_ints[] = {WGT_I8, WGT_U8, WGT_I16, WGT_U16};

static int bits_of(wgt_dtype d) { return d == WGT_I8 || d == WGT_U8 ? 8 : 16; }
static int is_signed(wgt_dtype d) { return d == WGT_I8 || d == WGT_I16; }

/* v reduced to d's range the way two's complement storage does. */
static int64_t wrap(wgt_dtype d, int64_t v) {
    int b = bits_of(d);
    uint64_t m = ((uint64_t)v) & ((1ull << b) - 1);
    if (is_signed(d) && (m >> (b - 1))) return (int64_t)m - (int64_t)(1ll << b);
    return (int64_t)m;
}
static int64_t wrap32(int sgn, int64_t v) {
    uint32_t m = (uint32_t)(uint64_t)v;
    return sgn ? (int64_t)(int32_t)m : (int64_t)m;
}

static wgt_tensor *make(wgt_context *ctx, wgt_dtype d, int ndim, const int64_t *shape, const int64_t *v) {
    int64_t n = 1;
    for (int k = 0; k < ndim; k++) n *= shape[k];
    size_t es = wgt_dtype_size(d);
    unsigned char *buf = calloc((size_t)n, es);
    for (int64_t i = 0; buf && i < n; i++) {
        uint16_t u = (uint16_t)(uint64_t)v[i];
        if (es == 1) buf[i] = (unsigned char)u;
        else memcpy(buf + 2 * i, &u, 2);
    }
    wgt_tensor *t = buf ? wgt_tensor_from_data(ctx, d, ndim, shape, buf, (size_t)n * es, WGT_USAGE_DEFAULT) : NULL;
    free(buf);
    return t;
}

/* got (of type want_dt) against want[], exactly. */
static void expect(wgt_tensor *got, wgt_dtype want_dt, const int64_t *want, int64_t n, const char *what, wgt_dtype d) {
    CHECK(got && wgt_tensor_dtype(got) == want_dt && wgt_tensor_numel(got) == n, "%s on %s: %s", what,
          wgt_dtype_name(d), got ? wgt_dtype_name(wgt_tensor_dtype(got)) : wgt_last_error());
    if (!got || wgt_tensor_dtype(got) != want_dt) return;
    double *g = test_read_f64(got);
    CHECK(g, "%s: %s", what, wgt_last_error());
    for (int64_t i = 0, bad = 0; g && i < n; i++)
        if (g[i] != (double)want[i] && bad++ < 3)
            CHECK(0, "%s on %s: element %lld is %.0f, want %lld", what, wgt_dtype_name(d), (long long)i, g[i],
                  (long long)want[i]);
    free(g);
}

enum { ADD, SUB, MUL, DIV, FDIV, MOD, MAX, MIN, AND, OR, XOR, SHL, SHR, NBIN };
static wgt_tensor *(*const bin[NBIN])(wgt_tensor *, wgt_tensor *) = {
    wgt_add, wgt_sub, wgt_mul, wgt_div, wgt_floor_divide, wgt_mod, wgt_maximum, wgt_minimum,
    wgt_bitwise_and, wgt_bitwise_or, wgt_bitwise_xor, wgt_bitwise_left_shift, wgt_bitwise_right_shift};
static const char *const bin_names[NBIN] = {"add", "sub", "mul", "div", "floor_divide", "mod", "maximum",
                                            "minimum", "bitwise_and", "bitwise_or", "bitwise_xor",
                                            "left_shift", "right_shift"};

static int64_t floor_div(int64_t x, int64_t y) {
    int64_t q = x / y;
    return (x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q;
}

static int64_t ref_bin(int op, int64_t x, int64_t y) {
    switch (op) {
    case ADD: return x + y;
    case SUB: return x - y;
    case MUL: return x * y;
    case DIV: return y == 0 ? 0 : x / y; /* truncates; -128 / -1 = 128 wraps back to -128 */
    case FDIV: return y == 0 ? 0 : floor_div(x, y);
    case MOD: return y == 0 ? 0 : x - y * floor_div(x, y);
    case MAX: return x > y ? x : y;
    case MIN: return x < y ? x : y;
    case AND: return x & y;
    case OR: return x | y;
    case XOR: return x ^ y;
    case SHL: return (int64_t)((uint64_t)x << y);
    default: return x >> y; /* arithmetic on the sign-extended value, as NumPy */
    }
}

TEST_BACKENDS(narrow_integer_arithmetic_wraps) {
    int64_t shape[2] = {4, 8}, row[1] = {8};
    for (size_t k = 0; k < sizeof narrow_ints / sizeof *narrow_ints; k++) {
        wgt_dtype d = narrow_ints[k];
        int64_t lo = is_signed(d) ? -(1ll << (bits_of(d) - 1)) : 0, hi = is_signed(d) ? (1ll << (bits_of(d) - 1)) - 1
                                                                                        : (1ll << bits_of(d)) - 1;
        int64_t xv[32], yv[8], sv[8], want[32];
        const int64_t xs[8] = {lo, hi, 0, 1, lo + 1, hi - 1, 100, 7};
        const int64_t ys[8] = {-1, 1, 2, 0, hi, lo, 3, -7};
        for (int i = 0; i < 32; i++) xv[i] = wrap(d, xs[i % 8] + (i / 8) * 37 * (i % 3 ? 1 : -1));
        for (int j = 0; j < 8; j++) yv[j] = wrap(d, ys[j]), sv[j] = j + (j > 4 ? 2 : 0); /* shift counts 0..11 */
        wgt_tensor *x = make(ctx, d, 2, shape, xv), *y = make(ctx, d, 1, row, yv), *s = make(ctx, d, 1, row, sv);
        for (int op = 0; op < NBIN; op++) {
            wgt_tensor *b = op == SHL || op == SHR ? s : y;
            const int64_t *bv = op == SHL || op == SHR ? sv : yv;
            for (int i = 0; i < 32; i++) want[i] = wrap(d, ref_bin(op, xv[i], bv[i % 8]));
            wgt_tensor *r = bin[op](x, b); /* y broadcast along the rows */
            expect(r, d, want, 32, bin_names[op], d);
            wgt_release(r);
        }
        /* Unary ops on a transposed view. */
        wgt_tensor *xt = wgt_transpose(x, 0, 1);
        int64_t xtv[32];
        for (int i = 0; i < 8; i++)
            for (int j = 0; j < 4; j++) xtv[i * 4 + j] = xv[j * 8 + i];
        wgt_tensor *un[4] = {wgt_neg(xt), wgt_abs(xt), wgt_bitwise_not(xt), wgt_square(xt)};
        const char *un_names[4] = {"neg", "abs", "bitwise_not", "square"};
        for (int op = 0; op < 4; op++) {
            for (int i = 0; i < 32; i++) {
                int64_t v = xtv[i];
                want[i] = wrap(d, op == 0 ? -v : op == 1 ? (v < 0 ? -v : v) : op == 2 ? ~v : v * v);
            }
            expect(un[op], d, want, 32, un_names[op], d);
            wgt_release(un[op]);
        }
        /* The scalar forms: hi + 1 wraps to lo. */
        wgt_tensor *inc = wgt_add_scalar(x, 1);
        for (int i = 0; i < 32; i++) want[i] = wrap(d, xv[i] + 1);
        expect(inc, d, want, 32, "add_scalar", d);
        wgt_release(inc);
        /* Reductions: sum, prod and cumsum in i32 (signed) or u32 (unsigned), max and min keep d. */
        wgt_dtype acc = is_signed(d) ? WGT_I32 : WGT_U32;
        int ax1[1] = {1};
        wgt_tensor *sum = wgt_sum(x, 1, ax1, 0), *prod = wgt_prod(x, 1, ax1, 0), *mx = wgt_max(x, 1, ax1, 0);
        wgt_tensor *mn = wgt_min(xt, 1, ax1, 0), *cs = wgt_cumsum(x, 1), *am = wgt_argmax(x, 1, 0);
        int64_t wsum[4], wprod[4], wmax[4], wmin[8], wcs[32], warg[4];
        for (int r = 0; r < 4; r++) {
            int64_t sacc = 0, pacc = 1, m = xv[r * 8];
            warg[r] = 0;
            for (int j = 0; j < 8; j++) {
                int64_t v = xv[r * 8 + j];
                sacc += v;
                pacc = wrap32(is_signed(d), pacc * v);
                wcs[r * 8 + j] = wrap32(is_signed(d), sacc);
                if (v > m) m = v, warg[r] = j;
            }
            wsum[r] = wrap32(is_signed(d), sacc), wprod[r] = pacc, wmax[r] = m;
        }
        for (int c = 0; c < 8; c++) {
            wmin[c] = xv[c];
            for (int r = 1; r < 4; r++) wmin[c] = xv[r * 8 + c] < wmin[c] ? xv[r * 8 + c] : wmin[c];
        }
        expect(sum, acc, wsum, 4, "sum", d);
        expect(prod, acc, wprod, 4, "prod (wraps in 32 bits)", d);
        expect(mx, d, wmax, 4, "max", d);
        expect(mn, d, wmin, 8, "min of a transposed view", d);
        expect(cs, acc, wcs, 32, "cumsum", d);
        expect(am, WGT_I32, warg, 4, "argmax", d);
        wgt_tensor *tmp[] = {x, y, s, xt, sum, prod, mx, mn, cs, am};
        for (size_t i = 0; i < sizeof tmp / sizeof *tmp; i++) wgt_release(tmp[i]);
    }
}

/* Mixed narrow types promote first: i8 with u8 computes in i16. */
TEST_BACKENDS(narrow_integer_promotion_and_errors) {
    int64_t shape[1] = {3};
    wgt_tensor *a = make(ctx, WGT_I8, 1, shape, (int64_t[]){-128, 127, -1});
    wgt_tensor *b = make(ctx, WGT_U8, 1, shape, (int64_t[]){255, 255, 1});
    wgt_tensor *s = wgt_add(a, b);
    expect(s, WGT_I16, (int64_t[]){127, 382, 0}, 3, "i8 + u8", WGT_I8);
    wgt_release(s);
    wgt_tensor *t = wgt_tensor_from_data(ctx, WGT_BOOL, 1, shape, (uint8_t[]){1, 0, 1}, 3, WGT_USAGE_DEFAULT);
    wgt_tensor *f = wgt_ones(ctx, WGT_F32, 1, shape), *h = wgt_ones(ctx, WGT_BF16, 1, shape);
    CHECK(a && b && t && f && h, "%s", wgt_last_error());
    CHECK_ERROR(wgt_add(t, t) == NULL, WGT_ERR_DTYPE, "wgt_add: takes no bool operands");
    CHECK_ERROR(wgt_mul(t, f) == NULL, WGT_ERR_DTYPE, "do not promote");
    CHECK_ERROR(wgt_neg(h) == NULL, WGT_ERR_DTYPE, "wgt_neg: takes no bf16");
    CHECK_ERROR(wgt_bitwise_left_shift(t, t) == NULL, WGT_ERR_DTYPE, "wgt_bitwise_left_shift");
    CHECK_ERROR(wgt_prod(t, 0, NULL, 0) == NULL, WGT_ERR_DTYPE, "wgt_prod: takes no bool");
    CHECK_ERROR(wgt_sqrt(a) == NULL, WGT_ERR_DTYPE, "wgt_sqrt");
    CHECK_ERROR(wgt_atan2(a, a) == NULL, WGT_ERR_DTYPE, "wgt_atan2");
    CHECK_ERROR(wgt_clamp(a, 200, 300) == NULL, WGT_ERR_INVALID_ARGUMENT, "no i8 value");
    wgt_tensor *c = wgt_clamp(a, -5, 500);
    expect(c, WGT_I8, (int64_t[]){-5, 127, -1}, 3, "clamp", WGT_I8);
    wgt_tensor *m = wgt_masked_select(a, t); /* gathered widened, cast back (test_manip_dtypes.c) */
    expect(m, WGT_I8, (int64_t[]){-128, -1}, 2, "masked_select", WGT_I8);
    wgt_release(m);
    wgt_tensor *tmp[] = {a, b, t, f, h, c};
    for (size_t i = 0; i < sizeof tmp / sizeof *tmp; i++) wgt_release(tmp[i]);
}
