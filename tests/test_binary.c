/*
 * Tests of the binary ops (pow, maximum, minimum, mod, atan2 beside add..div), the
 * comparisons, the logical ops, where and the tensor-with-scalar forms. The differential
 * tests draw seeded values on the host (small ranges so integer results wrap and compare
 * equal often, plus zeros, signed zeros, infinities and NaN for floats), lay them out as
 * contiguous, transposed, stepped, reversed, broadcast (other ranks) and rank-0 operands
 * at sizes 0, 1, odd and prime, and compare each backend with a float64 or exact integer
 * reference computed from the inputs read back. Separate tests pin the edge cases with
 * literal expected values, and one compares WebGPU with the CPU directly. Outputs are
 * poisoned (WGT_POISON=1, in the runner's poisoned pass) so unwritten elements show.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"
#include "test.h"

enum { ADD, SUB, MUL, DIV, POW, MAX, MIN, MOD, ATAN2, EQ, NE, LT, LE, GT, GE, AND, OR, NOPS };
typedef wgt_tensor *(*binary_fn)(wgt_tensor *, wgt_tensor *);
static const struct {
    const char *name;
    binary_fn fn;
} ops[NOPS] = {{"add", wgt_add}, {"sub", wgt_sub}, {"mul", wgt_mul}, {"div", wgt_div}, {"pow", wgt_pow},
               {"maximum", wgt_maximum}, {"minimum", wgt_minimum}, {"mod", wgt_mod}, {"atan2", wgt_atan2},
               {"eq", wgt_eq}, {"ne", wgt_ne}, {"lt", wgt_lt}, {"le", wgt_le}, {"gt", wgt_gt}, {"ge", wgt_ge},
               {"logical_and", wgt_logical_and}, {"logical_or", wgt_logical_or}};
static const wgt_dtype dtypes[] = {WGT_F32, WGT_F16, WGT_I32, WGT_U32};
#define NDT 4

static int is_int(wgt_dtype d) { return d == WGT_I32 || d == WGT_U32; }
static int gives_bool(int op) { return op >= EQ; }
static int accepts(int op, wgt_dtype d) { return op != ATAN2 || !is_int(d); }

/* ---- seeded host values ---- */

static int64_t irange(uint64_t *s, int64_t lo, int64_t hi) { return lo + (int64_t)(next_u64(s) % (uint64_t)(hi - lo + 1)); }
static double uniform(uint64_t *s, double lo, double hi) { return lo + (hi - lo) * (double)(next_u64(s) >> 11) * 0x1p-53; }

/* A value for operand `which` of op (-1: a where condition). */
static double draw(int op, wgt_dtype dt, int which, uint64_t *s) {
    static const double discrete[] = {-2, -1, -0.0, 0, 0.5, 1, 2, INFINITY, -INFINITY, NAN};
    static const double i32_extremes[] = {INT32_MIN, INT32_MAX, -1, 0, 1}, u32_extremes[] = {0, 4294967295.0, 1};
    if (op >= EQ || which < 0) { /* few distinct values, so equal pairs are common */
        if (!is_int(dt)) return discrete[irange(s, 0, 9)];
        if (irange(s, 0, 15) == 0) return dt == WGT_I32 ? i32_extremes[irange(s, 0, 4)] : u32_extremes[irange(s, 0, 2)];
        return dt == WGT_U32 ? (double)irange(s, 0, 4) : (double)irange(s, -2, 2);
    }
    if (is_int(dt)) {
        if (irange(s, 0, 15) == 0) return dt == WGT_I32 ? i32_extremes[irange(s, 0, 4)] : u32_extremes[irange(s, 0, 2)];
        if (op == POW && which == 0) return dt == WGT_U32 ? (double)irange(s, 0, 9) : (double)irange(s, -6, 6);
        if (op == POW) return dt == WGT_U32 ? (double)irange(s, 0, 33) : (double)irange(s, -3, 33);
        return dt == WGT_U32 ? (double)irange(s, 0, 40) : (double)irange(s, -20, 20);
    }
    if (irange(s, 0, 31) == 0) return discrete[irange(s, 2, 9)];
    if (op == POW) { /* integer exponents half the time, so negative bases give numbers */
        double lim = which == 0 ? 4 : 6;
        return irange(s, 0, 1) ? (double)irange(s, -(int64_t)lim, (int64_t)lim) : uniform(s, -lim, lim);
    }
    if (op == MOD && which == 0) return uniform(s, -100, 100) * (irange(s, 0, 3) == 0 ? (dt == WGT_F32 ? 1e4 : 1e2) : 1);
    return uniform(s, -8, 8);
}

/* Stores v as one element of dt; integer types are only given values in their range. */
static void store(wgt_dtype dt, unsigned char *dst, double v) {
    float f = (float)v;
    uint16_t h;
    int32_t i;
    uint32_t u;
    switch (dt) {
    case WGT_F32: memcpy(dst, &f, 4); break;
    case WGT_F16: h = wgt_f32_to_f16(f), memcpy(dst, &h, 2); break;
    case WGT_I32: i = (int32_t)v, memcpy(dst, &i, 4); break;
    case WGT_U32: u = (uint32_t)v, memcpy(dst, &u, 4); break;
    default: break;
    }
}

static wgt_tensor *from_values(wgt_context *ctx, wgt_dtype dt, int ndim, const int64_t *shape, int op, int which,
                               uint64_t seed) {
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    size_t es = wgt_dtype_size(dt);
    unsigned char *buf = malloc((size_t)(n ? n : 1) * es);
    uint64_t s = seed * 0x2545f4914f6cdd1dull + (uint64_t)which;
    for (int64_t i = 0; buf && i < n; i++) store(dt, buf + (size_t)i * es, draw(op, dt, which, &s));
    wgt_tensor *t = buf ? wgt_tensor_from_data(ctx, dt, ndim, shape, buf, (size_t)n * es, WGT_USAGE_DEFAULT) : NULL;
    free(buf);
    return t;
}

/* ---- operand layouts ---- */

typedef enum { V_CONTIG, V_TRANSPOSED, V_STEPPED, V_REVERSED, V_ROW, V_COL, V_ONE_ROW, V_RANK0 } view_kind;
static const char *const view_names[] = {"contiguous", "transposed", "stepped", "reversed", "[cols]", "[rows,1]", "[1,cols]", "rank-0"};

/* An operand that broadcasts to [rows, cols] (or is rank 0); the base is released, the
 * view keeps the storage alive. */
static wgt_tensor *make_view(wgt_context *ctx, wgt_dtype dt, view_kind k, int64_t rows, int64_t cols, int op, int which,
                             uint64_t seed) {
    int64_t s[2] = {0, 0};
    wgt_tensor *base, *v = NULL, *r;
    switch (k) {
    case V_TRANSPOSED:
        s[0] = cols, s[1] = rows;
        base = from_values(ctx, dt, 2, s, op, which, seed);
        v = wgt_transpose(base, 0, 1);
        break;
    case V_STEPPED: /* rows 1, 3, 5, ... and columns 2.. of a larger tensor: offset and step */
        s[0] = 2 * rows + 1, s[1] = cols + 3;
        base = from_values(ctx, dt, 2, s, op, which, seed);
        r = wgt_slice(base, 0, 1, 2 * rows + 1, 2);
        v = wgt_slice(r, 1, 2, cols + 2, 1);
        wgt_release(r);
        break;
    case V_REVERSED: /* negative steps on both axes, the inner one by 2 */
        s[0] = rows, s[1] = 2 * cols;
        base = from_values(ctx, dt, 2, s, op, which, seed);
        r = wgt_slice(base, 0, -1, -(rows + 1), -1);
        v = wgt_slice(r, 1, -1, -(2 * cols + 1), -2);
        wgt_release(r);
        break;
    case V_ROW: s[0] = cols; return from_values(ctx, dt, 1, s, op, which, seed);
    case V_COL: s[0] = rows, s[1] = 1; return from_values(ctx, dt, 2, s, op, which, seed);
    case V_ONE_ROW: s[0] = 1, s[1] = cols; return from_values(ctx, dt, 2, s, op, which, seed);
    case V_RANK0: return from_values(ctx, dt, 0, s, op, which, seed);
    default: s[0] = rows, s[1] = cols; return from_values(ctx, dt, 2, s, op, which, seed);
    }
    wgt_release(base);
    return v;
}

/* Operand layouts of a binary op, (a, b). */
static const view_kind pairs[][2] = {{V_CONTIG, V_CONTIG}, {V_TRANSPOSED, V_TRANSPOSED}, {V_STEPPED, V_STEPPED},
                                     {V_REVERSED, V_STEPPED}, {V_CONTIG, V_ROW}, {V_COL, V_ONE_ROW},
                                     {V_TRANSPOSED, V_RANK0}, {V_RANK0, V_REVERSED}, {V_RANK0, V_RANK0}};
#define NPAIRS (sizeof pairs / sizeof *pairs)
static const int64_t sizes[][2] = {{0, 5}, {1, 1}, {7, 13}, {17, 31}};
#define NSIZES (sizeof sizes / sizeof *sizes)

/* ---- references ---- */

static double wrap(wgt_dtype dt, int64_t v) {
    return dt == WGT_U32 ? (double)(uint32_t)(uint64_t)v : (double)(int32_t)(uint32_t)(uint64_t)v;
}

static double int_reference(int op, wgt_dtype dt, int64_t a, int64_t b) {
    switch (op) {
    case ADD: return wrap(dt, a + b);
    case SUB: return wrap(dt, a - b);
    case MUL: return wrap(dt, (int64_t)((uint64_t)a * (uint64_t)b));
    case DIV: return b == 0 ? 0 : wrap(dt, a / b);
    case MAX: return (double)(a > b ? a : b);
    case MIN: return (double)(a < b ? a : b);
    case MOD: {
        if (b == 0) return 0;
        int64_t m = a % b;
        return (double)(m != 0 && (m < 0) != (b < 0) ? m + b : m);
    }
    default: { /* POW: exponent bits from the top, unlike the kernels, which start at the bottom */
        if (b < 0) return a == 1 ? 1 : a == -1 ? (b % 2 ? -1 : 1) : 0;
        uint32_t r = 1;
        for (int bit = 31; bit >= 0; bit--) {
            r *= r;
            if ((uint64_t)b >> bit & 1) r *= (uint32_t)a;
        }
        return wrap(dt, r);
    }
    }
}

static double reference(int op, wgt_dtype dt, double x, double y) {
    switch (op) {
    case EQ: return x == y;
    case NE: return x != y;
    case LT: return x < y;
    case LE: return x <= y;
    case GT: return x > y;
    case GE: return x >= y;
    case AND: return x != 0 && y != 0;
    case OR: return x != 0 || y != 0;
    default: break;
    }
    if (is_int(dt)) return int_reference(op, dt, (int64_t)x, (int64_t)y);
    double r;
    switch (op) {
    case ADD: r = x + y; break;
    case SUB: r = x - y; break;
    case MUL: r = x * y; break;
    case DIV: r = x / y; break;
    case POW: r = pow(x, y); break;
    case ATAN2: r = atan2(x, y); break;
    case MAX: r = isnan(x) ? x : isnan(y) ? y : x >= y ? x : y; break;
    case MIN: r = isnan(x) ? x : isnan(y) ? y : x <= y ? x : y; break;
    default: /* MOD, as Python's float %: fmod is exact, then the divisor's side */
        if (y == 0) return NAN;
        r = fmod(x, y);
        if (r == 0) r = copysign(0.0, y);
        else if ((r < 0) != (y < 0)) r += y;
    }
    return test_round_to(dt, r);
}

/* WebGPU's pow and atan2 are not correctly rounded, so f32 gets 1e-5 relative there, plus:
 *   - for pow, WGSL's bound for exp2(y * log2(x)), 2 ulp (2.4e-7) per unit of |y log2 x|,
 *     since the error of the logarithm is multiplied by y (lavapipe: 8e-6 at y = -57);
 *   - for atan2, 1e-5 absolute: lavapipe's atan2 is off by up to 3.4e-6 absolute (2e-5
 *     relative for results near 0), within WGSL's 4096-ulp allowance.
 * f16 keeps test_tolerance, which one f16 rounding dominates. Everything else is exact
 * or as test_tolerance says (the WebGPU mod is exact like the CPU's). */
static double tolerance(int op, wgt_dtype dt, int gpu, double want, double x, double y) {
    if (gives_bool(op) || op == MAX || op == MIN) return 0;
    if (gpu && dt == WGT_F32 && op == POW) {
        double t = fabs(y * log2(fabs(x))); /* not finite: a special case, which is exact */
        return (1e-5 + (isfinite(t) ? 2.4e-7 * t : 0)) * fabs(want) + 1e-37;
    }
    if (gpu && dt == WGT_F32 && op == ATAN2) return 1e-5 * fabs(want) + 1e-5;
    return test_tolerance(dt, want);
}

static int close_enough(double got, double want, double tol) {
    if (isnan(want)) return isnan(got);
    if (isinf(want)) return got == want;
    return fabs(got - want) <= tol;
}

/* Runs op on one configuration and compares with the reference; returns mismatches. */
static int check_case(wgt_context *ctx, int op, wgt_dtype da, wgt_dtype db, int pair, int64_t rows, int64_t cols,
                      uint64_t seed) {
    int gpu = wgt_context_backend(ctx) == WGT_BACKEND_WEBGPU;
    wgt_tensor *a = make_view(ctx, da, pairs[pair][0], rows, cols, op, 0, seed);
    wgt_tensor *b = make_view(ctx, db, pairs[pair][1], rows, cols, op, 1, seed);
    wgt_tensor *c = ops[op].fn(a, b);
    int rank0 = pairs[pair][0] == V_RANK0 && pairs[pair][1] == V_RANK0, bad = 0;
    int64_t shape[2] = {rows, cols}, n = rank0 ? 1 : rows * cols;
    wgt_dtype out_dt = gives_bool(op) ? WGT_BOOL : da;
#define CASE_FMT "%s %s,%s %s,%s [%lld, %lld] seed %llu"
#define CASE_ARGS ops[op].name, wgt_dtype_name(da), wgt_dtype_name(db), view_names[pairs[pair][0]], \
                  view_names[pairs[pair][1]], (long long)rows, (long long)cols, (unsigned long long)seed
    CHECK(c != NULL, CASE_FMT ": %s", CASE_ARGS, wgt_last_error());
    if (c) {
        CHECK(wgt_tensor_dtype(c) == out_dt && wgt_tensor_ndim(c) == (rank0 ? 0 : 2) && wgt_tensor_numel(c) == n,
              "result type or shape: " CASE_FMT, CASE_ARGS);
        wgt_tensor *ab = wgt_broadcast_to(a, rank0 ? 0 : 2, shape), *bb = wgt_broadcast_to(b, rank0 ? 0 : 2, shape);
        double *va = test_read_f64(ab), *vb = test_read_f64(bb), *vc = test_read_f64(c);
        CHECK(va && vb && vc, "reading back: %s", wgt_last_error());
        for (int64_t i = 0; va && vb && vc && i < n; i++) {
            double want = reference(op, da, va[i], vb[i]);
            if (!close_enough(vc[i], want, tolerance(op, da, gpu, want, va[i], vb[i])) && bad++ < 3)
                CHECK(0, CASE_FMT ": element %lld: f(%.9g, %.9g) = %.9g, want %.9g", CASE_ARGS, (long long)i, va[i],
                      vb[i], vc[i], want);
        }
#undef CASE_FMT
#undef CASE_ARGS
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

TEST_BACKENDS(binary_all_ops_types_layouts) {
    uint64_t seed = 1;
    for (int op = 0; op < NOPS; op++)
        for (int d = 0; d < NDT; d++)
            for (size_t p = 0; accepts(op, dtypes[d]) && p < NPAIRS; p++)
                for (size_t s = 0; s < NSIZES; s++)
                    check_case(ctx, op, dtypes[d], dtypes[d], (int)p, sizes[s][0], sizes[s][1], seed++);
}

/* logical_and and logical_or take operands of two different types. */
TEST_BACKENDS(binary_logical_mixed_types) {
    uint64_t seed = 5000;
    for (int op = AND; op <= OR; op++)
        for (int i = 0; i < NDT; i++)
            for (int j = 0; j < NDT; j++)
                for (size_t p = 0; p < NPAIRS; p += 2)
                    check_case(ctx, op, dtypes[i], dtypes[j], (int)p, 7, 13, seed++);
}

/* ---- where ---- */

/* Operand layouts of where, (cond, a, b). */
static const view_kind triples[][3] = {{V_CONTIG, V_CONTIG, V_CONTIG},     {V_TRANSPOSED, V_STEPPED, V_REVERSED},
                                       {V_COL, V_ROW, V_RANK0},           {V_RANK0, V_TRANSPOSED, V_ONE_ROW},
                                       {V_ONE_ROW, V_COL, V_CONTIG},      {V_RANK0, V_RANK0, V_RANK0}};

/* Compares raw bytes: where moves values, so they must come out bit for bit (NaN excepted
 * for f16, whose payload WebGPU may change on the way through f32). */
static void check_where(wgt_context *ctx, wgt_dtype dc, wgt_dtype dv, int t, int64_t rows, int64_t cols, uint64_t seed) {
    wgt_tensor *c = make_view(ctx, dc, triples[t][0], rows, cols, 0, -1, seed);
    wgt_tensor *a = make_view(ctx, dv, triples[t][1], rows, cols, ADD, 0, seed);
    wgt_tensor *b = make_view(ctx, dv, triples[t][2], rows, cols, ADD, 1, seed);
    wgt_tensor *w = wgt_where(c, a, b);
    int rank0 = t == 5, nd = rank0 ? 0 : 2, bad = 0;
    int64_t shape[2] = {rows, cols}, n = rank0 ? 1 : rows * cols;
    size_t es = wgt_dtype_size(dv);
    CHECK(w && wgt_tensor_dtype(w) == dv && wgt_tensor_ndim(w) == nd && wgt_tensor_numel(w) == n,
          "where %s ? %s: layout %d [%lld, %lld]: %s", wgt_dtype_name(dc), wgt_dtype_name(dv), t, (long long)rows,
          (long long)cols, wgt_last_error());
    wgt_tensor *cb = wgt_broadcast_to(c, nd, shape), *ab = wgt_broadcast_to(a, nd, shape), *bb = wgt_broadcast_to(b, nd, shape);
    double *vc = test_read_f64(cb);
    unsigned char *ra = malloc((size_t)n * es + 1), *rb = malloc((size_t)n * es + 1), *rw = malloc((size_t)n * es + 1);
    if (w && vc && ra && rb && rw && wgt_tensor_read(ab, ra, (size_t)n * es) == WGT_OK &&
        wgt_tensor_read(bb, rb, (size_t)n * es) == WGT_OK && wgt_tensor_read(w, rw, (size_t)n * es) == WGT_OK) {
        for (int64_t i = 0; i < n; i++) {
            const unsigned char *want = (vc[i] != 0 ? ra : rb) + (size_t)i * es, *got = rw + (size_t)i * es;
            uint16_t hw, hg;
            memcpy(&hw, want, 2);
            memcpy(&hg, got, 2);
            int f16_nans = dv == WGT_F16 && isnan(wgt_f16_to_f32(hw)) && isnan(wgt_f16_to_f32(hg));
            if (memcmp(want, got, es) != 0 && !f16_nans && bad++ < 3)
                CHECK(0, "where %s ? %s: layout %d [%lld, %lld] seed %llu: element %lld differs (cond %g)",
                      wgt_dtype_name(dc), wgt_dtype_name(dv), t, (long long)rows, (long long)cols,
                      (unsigned long long)seed, (long long)i, vc[i]);
        }
    } else {
        CHECK(0, "reading back where %s ? %s: %s", wgt_dtype_name(dc), wgt_dtype_name(dv), wgt_last_error());
    }
    free(vc);
    free(ra);
    free(rb);
    free(rw);
    wgt_release(cb);
    wgt_release(ab);
    wgt_release(bb);
    wgt_release(a);
    wgt_release(b);
    wgt_release(c);
    wgt_release(w);
}

TEST_BACKENDS(where_all_types_layouts) {
    uint64_t seed = 9000;
    for (int i = 0; i < NDT; i++)
        for (int j = 0; j < NDT; j++)
            for (size_t t = 0; t < sizeof triples / sizeof *triples; t++)
                for (size_t s = 0; s < NSIZES; s++) check_where(ctx, dtypes[i], dtypes[j], (int)t, sizes[s][0], sizes[s][1], seed++);
}

/* ---- exact edge cases ---- */

static wgt_tensor *vec(wgt_context *ctx, wgt_dtype dt, int n, const double *v) {
    unsigned char buf[32 * 4];
    size_t es = wgt_dtype_size(dt);
    for (int i = 0; i < n; i++) store(dt, buf + (size_t)i * es, v[i]);
    return wgt_tensor_from_data(ctx, dt, 1, (int64_t[]){n}, buf, (size_t)n * es, WGT_USAGE_DEFAULT);
}

/* Runs op on two vectors and checks each element against want, rounded to the result's
 * type: NaN must be NaN, a zero must have want's sign, anything else may differ by rel
 * (0: exactly). */
static void expect_op(wgt_context *ctx, int op, wgt_dtype dt, int n, const double *x, const double *y,
                      const double *want, double rel) {
    wgt_tensor *a = vec(ctx, dt, n, x), *b = vec(ctx, dt, n, y), *c = ops[op].fn(a, b);
    double *got = c ? test_read_f64(c) : NULL;
    CHECK(got != NULL, "%s %s: %s", ops[op].name, wgt_dtype_name(dt), wgt_last_error());
    for (int i = 0; got && i < n; i++) {
        double w = gives_bool(op) ? want[i] : test_round_to(dt, want[i]);
        int ok = isnan(w) ? isnan(got[i]) : w == 0 ? got[i] == 0 && !signbit(got[i]) == !signbit(w)
                                                   : got[i] == w || fabs(got[i] - w) <= rel * fabs(w);
        CHECK(ok, "%s %s element %d: f(%g, %g) = %g, want %g", ops[op].name, wgt_dtype_name(dt), i, x[i], y[i], got[i], w);
    }
    free(got);
    wgt_release(a);
    wgt_release(b);
    wgt_release(c);
}

#define N_(v) (int)(sizeof(v) / sizeof *(v))
static const double inf = INFINITY, pi = 3.141592653589793;

TEST_BACKENDS(binary_maximum_minimum_nan_and_infinity) {
    static const double x[] = {NAN, 1, NAN, inf, -inf, inf, 3, -1, 0.5};
    static const double y[] = {1, NAN, NAN, 1, 1, -inf, 2, -5, 0.25};
    static const double mx[] = {NAN, NAN, NAN, inf, 1, inf, 3, -1, 0.5};
    static const double mn[] = {NAN, NAN, NAN, 1, -inf, -inf, 2, -5, 0.25};
    for (int d = 0; d < 2; d++) {
        expect_op(ctx, MAX, dtypes[d], N_(x), x, y, mx, 0);
        expect_op(ctx, MIN, dtypes[d], N_(x), x, y, mn, 0);
    }
    static const double ix[] = {INT32_MIN, -1, 7}, iy[] = {INT32_MAX, 0, 7}, imx[] = {INT32_MAX, 0, 7}, imn[] = {INT32_MIN, -1, 7};
    expect_op(ctx, MAX, WGT_I32, 3, ix, iy, imx, 0);
    expect_op(ctx, MIN, WGT_I32, 3, ix, iy, imn, 0);
    static const double ux[] = {4294967295.0, 0, 7}, uy[] = {1, 1, 7}, umx[] = {4294967295.0, 1, 7}, umn[] = {1, 0, 7};
    expect_op(ctx, MAX, WGT_U32, 3, ux, uy, umx, 0);
    expect_op(ctx, MIN, WGT_U32, 3, ux, uy, umn, 0);
}

TEST_BACKENDS(compare_nan_infinity_and_signed_zero) {
    static const double x[] = {NAN, 1, NAN, inf, -inf, -0.0, 1, 2, inf};
    static const double y[] = {1, NAN, NAN, inf, inf, 0, 2, 1, 5};
    static const double want[6][9] = {{0, 0, 0, 1, 0, 1, 0, 0, 0},  /* eq */
                                      {1, 1, 1, 0, 1, 0, 1, 1, 1},  /* ne */
                                      {0, 0, 0, 0, 1, 0, 1, 0, 0},  /* lt */
                                      {0, 0, 0, 1, 1, 1, 1, 0, 0},  /* le */
                                      {0, 0, 0, 0, 0, 0, 0, 1, 1},  /* gt */
                                      {0, 0, 0, 1, 0, 1, 0, 1, 1}}; /* ge */
    for (int d = 0; d < 2; d++)
        for (int op = EQ; op <= GE; op++) expect_op(ctx, op, dtypes[d], N_(x), x, y, want[op - EQ], 0);
    /* Signed and unsigned order differ for the same bits. */
    static const double ix[] = {-1, INT32_MIN, 5}, iy[] = {0, INT32_MAX, 5}, ilt[] = {1, 1, 0}, ige[] = {0, 0, 1};
    expect_op(ctx, LT, WGT_I32, 3, ix, iy, ilt, 0);
    expect_op(ctx, GE, WGT_I32, 3, ix, iy, ige, 0);
    static const double ux[] = {4294967295.0, 0, 7}, uy[] = {0, 1, 7}, ult[] = {0, 1, 0}, ueq[] = {0, 0, 1};
    expect_op(ctx, LT, WGT_U32, 3, ux, uy, ult, 0);
    expect_op(ctx, EQ, WGT_U32, 3, ux, uy, ueq, 0);
    /* Logic: NaN is true, -0 is false. */
    static const double lx[] = {NAN, -0.0, 2, 0}, ly[] = {1, 1, 0, -0.0}, land[] = {1, 0, 0, 0}, lor[] = {1, 1, 1, 0};
    for (int d = 0; d < 2; d++) {
        expect_op(ctx, AND, dtypes[d], 4, lx, ly, land, 0);
        expect_op(ctx, OR, dtypes[d], 4, lx, ly, lor, 0);
    }
}

TEST_BACKENDS(binary_mod_signs_and_zero_divisors) {
    static const double ix[] = {7, -7, 7, -7, 6, -6, 5, INT32_MIN, INT32_MIN, 0, -1};
    static const double iy[] = {3, 3, -3, -3, 3, -3, 0, -1, 3, 5, INT32_MAX};
    static const double iw[] = {1, 2, -2, -1, 0, 0, 0, 0, 1, 0, 2147483646};
    expect_op(ctx, MOD, WGT_I32, N_(ix), ix, iy, iw, 0);
    static const double ux[] = {7, 7, 0, 4294967295.0}, uy[] = {3, 0, 5, 10}, uw[] = {1, 0, 0, 5};
    expect_op(ctx, MOD, WGT_U32, 4, ux, uy, uw, 0);
    /* The result takes the divisor's sign, zeros included; x mod 0 and inf mod y are NaN;
     * x mod inf is x on the divisor's side, else the divisor itself (as numpy.mod). */
    static const double fx[] = {7.5, -7.5, 7.5, -7.5, 5, 5, inf, NAN, 5, -5, -0.0, 6, -6, 0.0, 100.25, -0.375};
    static const double fy[] = {2, 2, -2, -2, 0, -0.0, 2, 2, inf, inf, 2, 3, 3, -3, 0.5, 0.125};
    static const double fw[] = {1.5, 0.5, -0.5, -1.5, NAN, NAN, NAN, NAN, 5, inf, 0, 0, 0, -0.0, 0.25, 0};
    for (int d = 0; d < 2; d++) expect_op(ctx, MOD, dtypes[d], N_(fx), fx, fy, fw, 0);
    /* A quotient of 2^20: x - y * trunc(x / y) would lose the low digits; fmod is exact. */
    static const double bx[] = {1048576.75, -1048576.75}, by[] = {0.5, 0.5}, bw[] = {0.25, 0.25};
    expect_op(ctx, MOD, WGT_F32, 2, bx, by, bw, 0);
}

TEST_BACKENDS(binary_integer_pow_edges) {
    static const double ix[] = {2, 2, 2, 3, -2, 0, 0, 5, 1, -1, -1, 0, -3, INT32_MIN, 7, -1};
    static const double iy[] = {10, 31, 32, 21, 3, 0, 5, -1, -5, -5, -4, -1, 0, 2, 1, INT32_MIN};
    static const double iw[] = {1024, INT32_MIN, 0, 1870418611, -8, 1, 0, 0, 1, -1, 1, 0, 1, 0, 7, 1};
    expect_op(ctx, POW, WGT_I32, N_(ix), ix, iy, iw, 0);
    static const double ux[] = {2, 3, 4294967295.0, 4294967295.0, 7, 0, 0};
    static const double uy[] = {32, 20, 2, 3, 0, 0, 4294967295.0};
    static const double uw[] = {0, 3486784401.0, 1, 4294967295.0, 1, 1, 0};
    expect_op(ctx, POW, WGT_U32, N_(ux), ux, uy, uw, 0);
}

/* C99's pow special cases, where WGSL's pow is undefined or differs. */
TEST_BACKENDS(binary_float_pow_special_cases) {
    static const double x[] = {NAN, 1, -2, -2, -2, -2, 0, -0.0, 0, -0.0, -1, 0.5, 2, 0.5, 2,
                               -inf, -inf, -inf, inf, inf, 4, -8, NAN, 2, -0.0, -0.0, 2, -3};
    static const double y[] = {0, NAN, 3, 2, -3, 0.5, -1, -1, 2, 3, inf, inf, inf, -inf, -inf,
                               3, -3, 0.5, -1, 2, 0.5, 1.0 / 3, 1, -0.0, -2, 0.5, 10, 5};
    static const double w[] = {1, 1, -8, 4, -0.125, NAN, inf, -inf, 0, -0.0, 1, 0, inf, inf, 0,
                               -inf, -0.0, inf, 0, inf, 2, NAN, NAN, 1, inf, 0, 1024, -243};
    expect_op(ctx, POW, WGT_F32, N_(x), x, y, w, 1e-6);
    expect_op(ctx, POW, WGT_F16, N_(x), x, y, w, 1e-3);
}

TEST_BACKENDS(binary_atan2_special_cases) {
    static const double y[] = {0, 0, -0.0, -0.0, 1, -1, inf, inf, -inf, -inf, 1, -1, inf, NAN, 1, 1};
    static const double x[] = {0, -0.0, 0, -1, 0, -0.0, inf, -inf, inf, -inf, -inf, inf, 5, 1, NAN, 1};
    static const double w[] = {0, pi, -0.0, -pi, pi / 2, -pi / 2, pi / 4, 3 * pi / 4, -pi / 4, -3 * pi / 4,
                               pi, -0.0, pi / 2, NAN, NAN, pi / 4};
    expect_op(ctx, ATAN2, WGT_F32, N_(y), y, x, w, 1e-5); /* the last is computed, not a special case */
    expect_op(ctx, ATAN2, WGT_F16, N_(y), y, x, w, 1e-3);
}

/* cond [3, 1] (NaN is true, -0 false) with a [4] and a rank-0 b gives [3, 4]. */
TEST_BACKENDS(where_broadcast_condition) {
    static const double cv[] = {NAN, -0.0, 2}, av[] = {1, 2, 3, 4};
    for (int d = 0; d < NDT; d++) {
        double bv = dtypes[d] == WGT_U32 ? 9 : -7;
        wgt_tensor *c0 = vec(ctx, WGT_F32, 3, cv), *c = wgt_reshape(c0, 2, (int64_t[]){3, 1});
        wgt_tensor *a = vec(ctx, dtypes[d], 4, av), *b0 = vec(ctx, dtypes[d], 1, &bv);
        wgt_tensor *b = wgt_reshape(b0, 0, NULL), *w = wgt_where(c, a, b);
        double *got = w ? test_read_f64(w) : NULL;
        CHECK(got && wgt_tensor_ndim(w) == 2 && wgt_tensor_shape(w)[0] == 3 && wgt_tensor_shape(w)[1] == 4 &&
                  wgt_tensor_dtype(w) == dtypes[d],
              "%s: %s", wgt_dtype_name(dtypes[d]), wgt_last_error());
        for (int i = 0; got && i < 12; i++)
            CHECK(got[i] == (i / 4 == 1 ? bv : av[i % 4]), "%s element %d = %g", wgt_dtype_name(dtypes[d]), i, got[i]);
        free(got);
        wgt_release(c0);
        wgt_release(c);
        wgt_release(a);
        wgt_release(b0);
        wgt_release(b);
        wgt_release(w);
    }
}

/* ---- errors, scalars and the cross-backend check ---- */

TEST_BACKENDS(binary_errors_name_the_operands) {
    int64_t s23[2] = {2, 3}, s3[1] = {3}, s4[1] = {4};
    wgt_tensor *f = wgt_ones(ctx, WGT_F32, 2, s23), *h = wgt_ones(ctx, WGT_F16, 2, s23), *i = wgt_ones(ctx, WGT_I32, 2, s23);
    wgt_tensor *u = wgt_ones(ctx, WGT_U32, 1, s3), *f3 = wgt_ones(ctx, WGT_F32, 1, s3), *f4 = wgt_ones(ctx, WGT_F32, 1, s4);
    CHECK_ERROR(!wgt_pow(f, i), WGT_ERR_DTYPE, "wgt_pow");
    CHECK_ERROR(!wgt_atan2(i, i), WGT_ERR_DTYPE, "wgt_atan2");
    CHECK_ERROR(!wgt_atan2(i, i), WGT_ERR_DTYPE, "not i32");
    CHECK_ERROR(!wgt_atan2(u, u), WGT_ERR_DTYPE, "not u32");
    CHECK_ERROR(!wgt_eq(f, i), WGT_ERR_DTYPE, "wgt_eq: operand types differ (a is f32, b is i32)");
    CHECK_ERROR(!wgt_mod(f, f4), WGT_ERR_SHAPE, "wgt_mod");
    CHECK_ERROR(!wgt_where(i, f, i), WGT_ERR_DTYPE, "wgt_where");
    /* A where shape mismatch names all three shapes. */
    CHECK_ERROR(!wgt_where(f, f3, f4), WGT_ERR_SHAPE, "[2, 3] (cond), [3] (a) and [4] (b)");
    CHECK_ERROR(!wgt_add_scalar(NULL, 1), WGT_ERR_INVALID_ARGUMENT, "wgt_add_scalar");
    CHECK_ERROR(!wgt_scalar(NULL, WGT_F32, 1), WGT_ERR_INVALID_ARGUMENT, "wgt_scalar");
    CHECK_ERROR(!wgt_scalar(ctx, (wgt_dtype)99, 1), WGT_ERR_DTYPE, "wgt_scalar");
    /* A NULL operand from a failed call keeps that call's message. */
    wgt_clear_error();
    wgt_tensor *bad = wgt_atan2(i, i);
    CHECK(!bad && !wgt_where(bad, f, f) && !wgt_ge(f, bad) && !wgt_pow_scalar(bad, 2) &&
              test_contains(wgt_last_error(), "wgt_atan2"),
          "message: %s", wgt_last_error());
    wgt_clear_error();
    wgt_context *other = test_new_context(WGT_BACKEND_CPU);
    wgt_tensor *foreign = other ? wgt_ones(other, WGT_F32, 2, s23) : NULL;
    if (foreign) {
        CHECK_ERROR(!wgt_where(foreign, f, f), WGT_ERR_CONTEXT_MISMATCH, "wgt_where");
        CHECK_ERROR(!wgt_where(f, f, foreign), WGT_ERR_CONTEXT_MISMATCH, "wgt_where");
        CHECK_ERROR(!wgt_logical_or(f, foreign), WGT_ERR_CONTEXT_MISMATCH, "wgt_logical_or");
    }
    wgt_release(foreign);
    wgt_context_release(other);
    wgt_tensor *all[] = {f, h, i, u, f3, f4};
    for (int k = 0; k < 6; k++) wgt_release(all[k]);
}

/* wgt_scalar converts as wgt_full does; each *_scalar form equals the op with that scalar
 * and matches the reference. */
TEST_BACKENDS(binary_scalar_forms) {
    /* Values each type holds (those it cannot are errors: test_scalars.c). */
    static const double values[] = {0.1, 3.9, -3.9, 1e20, -1e20, NAN, 65504, 2.5,
                                    -0.0, 3, -3, 70000, 2147483647, -2147483648.0, 4294967295.0};
    for (int d = 0; d < NDT; d++)
        for (int k = 0; k < N_(values); k++) {
            double v = values[k];
            int integer = dtypes[d] == WGT_I32 || dtypes[d] == WGT_U32;
            double lo = dtypes[d] == WGT_I32 ? -2147483648.0 : 0, hi = dtypes[d] == WGT_I32 ? 2147483647 : 4294967295.0;
            if (integer ? v != floor(v) || v < lo || v > hi : fabs(v) > (dtypes[d] == WGT_F16 ? 65504 : FLT_MAX))
                continue;
            wgt_tensor *s = wgt_scalar(ctx, dtypes[d], values[k]), *full = wgt_full(ctx, dtypes[d], 1, (int64_t[]){1}, values[k]);
            uint32_t x = 0, y = 0;
            CHECK(s && full && wgt_tensor_ndim(s) == 0 && wgt_tensor_dtype(s) == dtypes[d] &&
                      wgt_tensor_read(s, &x, wgt_dtype_size(dtypes[d])) == WGT_OK &&
                      wgt_tensor_read(full, &y, wgt_dtype_size(dtypes[d])) == WGT_OK && x == y,
                  "wgt_scalar(%s, %g): %s", wgt_dtype_name(dtypes[d]), values[k], wgt_last_error());
            wgt_release(s);
            wgt_release(full);
        }
    static const struct {
        wgt_tensor *(*form)(wgt_tensor *, double);
        int op;
    } forms[] = {{wgt_add_scalar, ADD}, {wgt_sub_scalar, SUB}, {wgt_mul_scalar, MUL}, {wgt_div_scalar, DIV},
                 {wgt_pow_scalar, POW}, {wgt_maximum_scalar, MAX}, {wgt_minimum_scalar, MIN}};
    static const double scalars[] = {2, -3.5, 0}; /* -3.5 is -3 for i32 and 3 for u32 */
    int gpu = wgt_context_backend(ctx) == WGT_BACKEND_WEBGPU;
    for (int d = 0; d < NDT; d++)
        for (int f = 0; f < N_(forms); f++)
            for (int k = 0; k < N_(scalars); k++) {
                wgt_dtype dt = dtypes[d];
                wgt_tensor *a = make_view(ctx, dt, V_TRANSPOSED, 5, 7, forms[f].op, 0, (uint64_t)(100 * d + 10 * f + k));
                double sv = dt == WGT_U32 && scalars[k] < 0 ? 3 : dt == WGT_I32 ? trunc(scalars[k]) : scalars[k];
                wgt_tensor *s = wgt_scalar(ctx, dt, sv);
                wgt_tensor *r1 = forms[f].form(a, sv);
                wgt_tensor *r2 = ops[forms[f].op].fn(a, s);
                double *va = test_read_f64(a), *vs = test_read_f64(s), *v1 = r1 ? test_read_f64(r1) : NULL;
                double *v2 = r2 ? test_read_f64(r2) : NULL;
                CHECK(v1 && v2 && wgt_tensor_dtype(r1) == dt && wgt_tensor_ndim(r1) == 2, "%s_scalar %s: %s",
                      ops[forms[f].op].name, wgt_dtype_name(dt), wgt_last_error());
                for (int i = 0; va && vs && v1 && v2 && i < 35; i++) {
                    double want = reference(forms[f].op, dt, va[i], vs[0]);
                    CHECK((isnan(v1[i]) && isnan(v2[i])) || v1[i] == v2[i], "%s_scalar %s element %d: %g vs %g",
                          ops[forms[f].op].name, wgt_dtype_name(dt), i, v1[i], v2[i]);
                    CHECK(close_enough(v1[i], want, tolerance(forms[f].op, dt, gpu, want, va[i], vs[0])),
                          "%s_scalar %s element %d: f(%g, %g) = %g, want %g", ops[forms[f].op].name, wgt_dtype_name(dt),
                          i, va[i], vs[0], v1[i], want);
                }
                free(va);
                free(vs);
                free(v1);
                free(v2);
                wgt_release(a);
                wgt_release(s);
                wgt_release(r1);
                wgt_release(r2);
            }
}

/* The WebGPU backend against the CPU backend directly, on the same seeded inputs: every op
 * and accepted type, logic on mixed types, and where. */
TEST(binary_webgpu_matches_cpu) {
    wgt_context *cpu, *gpu;
    if (!test_backend_pair(&cpu, &gpu)) return;
    wgt_context *cs[2] = {cpu, gpu};
    for (int op = 0; op < NOPS + 1; op++) /* NOPS stands for where */
        for (int d = 0; d < NDT; d++) {
            wgt_dtype da = dtypes[d], db = op == AND || op == OR || op == NOPS ? dtypes[(d + 1) % NDT] : da;
            if (op < NOPS && !accepts(op, da)) continue;
            wgt_tensor *r[2];
            double *va = NULL, *vb = NULL; /* the inputs, for pow's tolerance */
            for (int k = 0; k < 2; k++) {
                wgt_tensor *a = make_view(cs[k], da, V_TRANSPOSED, 33, 65, op, op == NOPS ? -1 : 0, 77 + op);
                wgt_tensor *b = make_view(cs[k], db, V_STEPPED, 33, 65, op == NOPS ? ADD : op, 1, 91 + op);
                if (op == NOPS) {
                    wgt_tensor *c = make_view(cs[k], db, V_REVERSED, 33, 65, ADD, 0, 55);
                    r[k] = wgt_where(a, b, c);
                    wgt_release(c);
                } else {
                    r[k] = ops[op].fn(a, b);
                }
                if (k == 0) va = test_read_f64(a), vb = test_read_f64(b);
                wgt_release(a);
                wgt_release(b);
            }
            wgt_dtype rt = op == NOPS ? db : da;
            const char *name = op == NOPS ? "where" : ops[op].name;
            double *x = test_read_f64(r[0]), *y = test_read_f64(r[1]);
            CHECK(x && y && va && vb, "%s %s: %s", name, wgt_dtype_name(da), wgt_last_error());
            int bad = 0;
            for (int i = 0; x && y && va && vb && i < 33 * 65; i++) {
                double tol = op == NOPS ? 0 : tolerance(op, rt, 1, x[i], va[i], vb[i]);
                if (!close_enough(y[i], x[i], tol) && bad++ < 3)
                    CHECK(0, "%s %s,%s element %d: webgpu %.9g, cpu %.9g", name, wgt_dtype_name(da), wgt_dtype_name(db),
                          i, y[i], x[i]);
            }
            free(x);
            free(y);
            free(va);
            free(vb);
            wgt_release(r[0]);
            wgt_release(r[1]);
        }
    wgt_context_release(gpu);
    wgt_context_release(cpu);
}
