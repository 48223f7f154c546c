/*
 * Differential tests of the elementwise binary ops: every op and data type, on contiguous,
 * transposed, sliced (with steps, negative too), broadcast and rank-0 inputs, at sizes 0,
 * 1, odd, prime and beyond one dispatch dimension. Each backend is compared with a float64
 * (or exact integer) reference; a separate test compares the two backends directly.
 * Outputs are poisoned (WGT_POISON=1, in the runner's poisoned pass) so unwritten elements show.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

typedef wgt_tensor *(*binary_fn)(wgt_tensor *, wgt_tensor *);
static const struct {
    const char *name;
    binary_fn fn;
    char op;
} ops[] = {{"add", wgt_add, '+'}, {"sub", wgt_sub, '-'}, {"mul", wgt_mul, '*'}, {"div", wgt_div, '/'}};
static const wgt_dtype dtypes[] = {WGT_F32, WGT_F16, WGT_I32, WGT_U32};

static double reference(wgt_dtype dt, char op, double x, double y) {
    if (dt == WGT_I32 || dt == WGT_U32) {
        int64_t a = (int64_t)x, b = (int64_t)y, r;
        switch (op) {
        case '+': r = a + b; break;
        case '-': r = a - b; break;
        case '*': r = (int64_t)((uint64_t)a * (uint64_t)b); break;
        default:
            if (b == 0) r = 0;
            else if (dt == WGT_I32 && a == INT32_MIN && b == -1) r = INT32_MIN;
            else r = a / b;
        }
        if (dt == WGT_U32) return (double)(uint32_t)(uint64_t)r;
        return (double)(int32_t)(uint32_t)(uint64_t)r;
    }
    double r = op == '+' ? x + y : op == '-' ? x - y : op == '*' ? x * y : x / y;
    return test_round_to(dt, r);
}

static int close_enough(wgt_dtype dt, double got, double want) {
    if (isnan(want)) return isnan(got);
    if (isinf(want)) return got == want;
    return fabs(got - want) <= test_tolerance(dt, want);
}

/* Random values suited to the type: ints include 0 (division by zero) and, for the
 * "wide" range, values whose products and sums wrap around. */
static wgt_tensor *random_tensor(wgt_context *ctx, wgt_dtype dt, int ndim, const int64_t *shape, uint64_t seed,
                                 int wide) {
    switch (dt) {
    case WGT_I32: return wide ? wgt_rand_uniform(ctx, dt, ndim, shape, -2147483648.0, 2147483647.0, seed)
                              : wgt_rand_uniform(ctx, dt, ndim, shape, -50, 50, seed);
    case WGT_U32: return wide ? wgt_rand_uniform(ctx, dt, ndim, shape, 0, 4294967295.0, seed)
                              : wgt_rand_uniform(ctx, dt, ndim, shape, 0, 100, seed);
    case WGT_F16: return wgt_rand_uniform(ctx, dt, ndim, shape, -4, 4, seed);
    default: return wgt_rand_normal(ctx, dt, ndim, shape, 0, 3, seed);
    }
}

typedef enum { CONTIGUOUS, TRANSPOSED, SLICED, REVERSED, BROADCAST_ROW, BROADCAST_BOTH, SCALAR, LAYOUT_COUNT } layout;
static const char *const layout_names[] = {"contiguous", "transposed", "sliced", "reversed",
                                           "broadcast-row", "broadcast-both", "scalar"};

/* Builds operand `which` (0 = a, 1 = b) of a [rows, cols] op in the given layout; the result
 * is a view whose base is released (the view keeps the storage alive). */
static wgt_tensor *make_operand(wgt_context *ctx, wgt_dtype dt, layout l, int which, int64_t rows, int64_t cols,
                                uint64_t seed, int wide) {
    wgt_tensor *base = NULL, *view = NULL;
    int64_t s[2] = {0, 0};
    switch (l) {
    case CONTIGUOUS:
        s[0] = rows, s[1] = cols;
        return random_tensor(ctx, dt, 2, s, seed, wide);
    case TRANSPOSED:
        s[0] = cols, s[1] = rows;
        base = random_tensor(ctx, dt, 2, s, seed, wide);
        view = wgt_transpose(base, 0, 1);
        break;
    case SLICED: /* every other row of a taller tensor, starting at row 1: an offset and a step */
        s[0] = 2 * rows + 1, s[1] = cols + 3;
        base = random_tensor(ctx, dt, 2, s, seed, wide);
        {
            wgt_tensor *r = wgt_slice(base, 0, 1, 2 * rows + 1, 2);
            view = wgt_slice(r, 1, 2, cols + 2, 1);
            wgt_release(r);
        }
        break;
    case REVERSED:
        s[0] = rows, s[1] = cols;
        base = random_tensor(ctx, dt, 2, s, seed, wide);
        view = wgt_slice(base, -1, -1, -(cols + 1), -1);
        break;
    case BROADCAST_ROW: /* a full [rows, cols] against b of shape [cols] */
        if (which == 0) return make_operand(ctx, dt, CONTIGUOUS, 0, rows, cols, seed, wide);
        s[0] = cols;
        return random_tensor(ctx, dt, 1, s, seed, wide);
    case BROADCAST_BOTH: /* a [rows, 1] against b [1, cols] */
        s[0] = which == 0 ? rows : 1, s[1] = which == 0 ? 1 : cols;
        return random_tensor(ctx, dt, 2, s, seed, wide);
    case SCALAR:
        if (which == 0) return make_operand(ctx, dt, TRANSPOSED, 0, rows, cols, seed, wide);
        return random_tensor(ctx, dt, 0, s, seed, wide);
    default: break;
    }
    wgt_release(base);
    return view;
}

/* Runs op on one configuration and compares with the reference; returns mismatches. */
static int check_case(wgt_context *ctx, int opi, wgt_dtype dt, layout l, int64_t rows, int64_t cols, uint64_t seed,
                      int wide) {
    wgt_tensor *a = make_operand(ctx, dt, l, 0, rows, cols, seed, wide);
    wgt_tensor *b = make_operand(ctx, dt, l, 1, rows, cols, seed + 7919, wide);
    wgt_tensor *c = ops[opi].fn(a, b);
    int bad = 0;
    CHECK(c != NULL, "%s %s %s [%lld, %lld] seed %llu: %s", ops[opi].name, wgt_dtype_name(dt), layout_names[l],
          (long long)rows, (long long)cols, (unsigned long long)seed, wgt_last_error());
    if (c) {
        CHECK(wgt_tensor_ndim(c) == 2 && wgt_tensor_shape(c)[0] == rows && wgt_tensor_shape(c)[1] == cols,
              "%s %s: result shape", ops[opi].name, layout_names[l]);
        int64_t shape[2] = {rows, cols};
        wgt_tensor *ab = wgt_broadcast_to(a, 2, shape), *bb = wgt_broadcast_to(b, 2, shape);
        double *va = test_read_f64(ab), *vb = test_read_f64(bb), *vc = test_read_f64(c);
        CHECK(va && vb && vc, "reading back: %s", wgt_last_error());
        for (int64_t i = 0; va && vb && vc && i < rows * cols; i++) {
            double want = reference(dt, ops[opi].op, va[i], vb[i]);
            if (!close_enough(dt, vc[i], want)) {
                if (bad++ < 3)
                    CHECK(0, "%s %s %s [%lld, %lld] seed %llu: element %lld: %.9g %c %.9g = %.9g, want %.9g",
                          ops[opi].name, wgt_dtype_name(dt), layout_names[l], (long long)rows, (long long)cols,
                          (unsigned long long)seed, (long long)i, va[i], ops[opi].op, vb[i], vc[i], want);
            }
        }
        free(va);
        free(vb);
        free(vc);
        wgt_release(ab);
        wgt_release(bb);
    }
    wgt_release(a);
    wgt_release(b);
    wgt_release(c);
    return bad;
}

TEST_BACKENDS(elementwise_all_ops_types_layouts) {
    static const int64_t sizes[][2] = {{1, 1}, {7, 13}, {3, 1000}, {17, 31}};
    uint64_t seed = 1;
    for (size_t o = 0; o < sizeof ops / sizeof *ops; o++)
        for (size_t d = 0; d < sizeof dtypes / sizeof *dtypes; d++)
            for (int l = 0; l < LAYOUT_COUNT; l++)
                for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
                    check_case(ctx, (int)o, dtypes[d], (layout)l, sizes[s][0], sizes[s][1], seed++, 0);
}

TEST_BACKENDS(elementwise_integer_wraparound_and_division_by_zero) {
    for (size_t o = 0; o < sizeof ops / sizeof *ops; o++) {
        check_case(ctx, (int)o, WGT_I32, CONTIGUOUS, 19, 23, 100 + o, 1);
        check_case(ctx, (int)o, WGT_U32, BROADCAST_BOTH, 19, 23, 200 + o, 1);
    }
    /* Exact edge cases: INT32_MIN / -1 wraps, x / 0 is 0. */
    int32_t a[4] = {INT32_MIN, 7, -7, INT32_MAX}, b[4] = {-1, 0, 2, -1}, c[4];
    int64_t shape[1] = {4};
    wgt_tensor *ta = wgt_tensor_from_data(ctx, WGT_I32, 1, shape, a, sizeof a, WGT_USAGE_DEFAULT);
    wgt_tensor *tb = wgt_tensor_from_data(ctx, WGT_I32, 1, shape, b, sizeof b, WGT_USAGE_DEFAULT);
    wgt_tensor *tc = wgt_div(ta, tb);
    CHECK(tc && wgt_tensor_read(tc, c, sizeof c) == WGT_OK, "%s", wgt_last_error());
    CHECK(c[0] == INT32_MIN && c[1] == 0 && c[2] == -3 && c[3] == -INT32_MAX, "got %d %d %d %d", c[0], c[1], c[2], c[3]);
    wgt_release(ta);
    wgt_release(tb);
    wgt_release(tc);
}

TEST_BACKENDS(elementwise_empty_and_rank0) {
    int64_t shape[2] = {0, 5};
    wgt_tensor *a = wgt_zeros(ctx, WGT_F32, 2, shape), *b = wgt_ones(ctx, WGT_F32, 1, shape + 1);
    wgt_tensor *c = wgt_add(a, b);
    CHECK(c && wgt_tensor_numel(c) == 0 && wgt_tensor_shape(c)[1] == 5, "%s", wgt_last_error());
    CHECK(c && wgt_tensor_read(c, NULL, 0) == WGT_OK, "%s", wgt_last_error());
    float x = 2.5f, y = -4.0f, z = 0;
    wgt_tensor *sx = wgt_tensor_from_data(ctx, WGT_F32, 0, NULL, &x, 4, WGT_USAGE_DEFAULT);
    wgt_tensor *sy = wgt_tensor_from_data(ctx, WGT_F32, 0, NULL, &y, 4, WGT_USAGE_DEFAULT);
    wgt_tensor *sz = wgt_mul(sx, sy);
    CHECK(sz && wgt_tensor_ndim(sz) == 0 && wgt_tensor_read(sz, &z, 4) == WGT_OK && z == -10.0f, "z = %g", z);
    wgt_release(a);
    wgt_release(b);
    wgt_release(c);
    wgt_release(sx);
    wgt_release(sy);
    wgt_release(sz);
}

TEST_BACKENDS(elementwise_rank3_odd_shapes) {
    int64_t sa[3] = {5, 1, 3}, sb[2] = {7, 1};
    for (size_t d = 0; d < sizeof dtypes / sizeof *dtypes; d++) {
        wgt_tensor *a = random_tensor(ctx, dtypes[d], 3, sa, 11, 0), *b = random_tensor(ctx, dtypes[d], 2, sb, 12, 0);
        wgt_tensor *c = wgt_sub(a, b);
        CHECK(c && wgt_tensor_ndim(c) == 3 && wgt_tensor_shape(c)[1] == 7, "%s: %s", wgt_dtype_name(dtypes[d]),
              wgt_last_error());
        int64_t full[3] = {5, 7, 3};
        wgt_tensor *ab = wgt_broadcast_to(a, 3, full), *bb = wgt_broadcast_to(b, 3, full);
        double *va = test_read_f64(ab), *vb = test_read_f64(bb), *vc = c ? test_read_f64(c) : NULL;
        for (int i = 0; va && vb && vc && i < 105; i++)
            CHECK(close_enough(dtypes[d], vc[i], reference(dtypes[d], '-', va[i], vb[i])), "%s element %d",
                  wgt_dtype_name(dtypes[d]), i);
        free(va);
        free(vb);
        free(vc);
        wgt_release(a);
        wgt_release(b);
        wgt_release(c);
        wgt_release(ab);
        wgt_release(bb);
    }
}

/* More elements than 65535 workgroups of 256 reach: the launch needs a 2-D grid. */
TEST_BACKENDS(elementwise_beyond_one_dispatch_dimension) {
    const int64_t n = 65535LL * 256 + 1001;
    int64_t shape[1] = {n}, one[1] = {1};
    wgt_tensor *a = wgt_arange(ctx, WGT_U32, 0, (double)n, 1), *b = wgt_full(ctx, WGT_U32, 1, one, 3);
    wgt_tensor *c = wgt_mul(a, b);
    uint32_t *v = malloc((size_t)n * 4);
    CHECK(c && v && wgt_tensor_read(c, v, (size_t)n * 4) == WGT_OK, "%s", wgt_last_error());
    int64_t bad = 0;
    for (int64_t i = 0; c && v && i < n; i++)
        if (v[i] != (uint32_t)(3 * i) && bad++ < 3) CHECK(0, "element %lld = %u", (long long)i, v[i]);
    (void)shape;
    free(v);
    wgt_release(a);
    wgt_release(b);
    wgt_release(c);
    /* f16 packs two elements per invocation: an odd count beyond the limit too. */
    const int64_t m = 2 * 65535LL * 256 + 3;
    wgt_tensor *h = wgt_full(ctx, WGT_F16, 1, (int64_t[]){m}, 1.5), *k = wgt_full(ctx, WGT_F16, 1, one, 0.25);
    wgt_tensor *hk = wgt_add(h, k);
    uint16_t *hv = malloc((size_t)m * 2);
    CHECK(hk && hv && wgt_tensor_read(hk, hv, (size_t)m * 2) == WGT_OK, "%s", wgt_last_error());
    bad = 0;
    for (int64_t i = 0; hk && hv && i < m; i++)
        if (wgt_f16_to_f32(hv[i]) != 1.75f && bad++ < 3) CHECK(0, "f16 element %lld = %g", (long long)i, wgt_f16_to_f32(hv[i]));
    free(hv);
    wgt_release(h);
    wgt_release(k);
    wgt_release(hk);
}

/* The WebGPU backend against the CPU backend directly, on the same seeded inputs. */
TEST(elementwise_webgpu_matches_cpu) {
    wgt_context *cpu, *gpu;
    if (!test_backend_pair(&cpu, &gpu)) return;
    int64_t shape[2] = {33, 65};
    for (size_t o = 0; o < sizeof ops / sizeof *ops; o++)
        for (size_t d = 0; d < sizeof dtypes / sizeof *dtypes; d++) {
            wgt_tensor *r[2];
            wgt_context *cs[2] = {cpu, gpu};
            for (int k = 0; k < 2; k++) {
                wgt_tensor *a = random_tensor(cs[k], dtypes[d], 2, shape, 5 + o, 0);
                wgt_tensor *b = random_tensor(cs[k], dtypes[d], 2, shape, 9 + o, 0);
                wgt_tensor *a2 = wgt_reshape(a, 2, (int64_t[]){65, 33});
                wgt_tensor *at = wgt_transpose(a2, 0, 1); /* a strided [33, 65] view */
                r[k] = ops[o].fn(at, b);
                wgt_release(a);
                wgt_release(a2);
                wgt_release(at);
                wgt_release(b);
            }
            double *x = test_read_f64(r[0]), *y = test_read_f64(r[1]);
            CHECK(x && y, "%s", wgt_last_error());
            for (int i = 0; x && y && i < 33 * 65; i++)
                CHECK(close_enough(dtypes[d], y[i], x[i]), "%s %s element %d: webgpu %.9g, cpu %.9g", ops[o].name,
                      wgt_dtype_name(dtypes[d]), i, y[i], x[i]);
            free(x);
            free(y);
            wgt_release(r[0]);
            wgt_release(r[1]);
        }
    wgt_context_release(gpu);
    wgt_context_release(cpu);
}
