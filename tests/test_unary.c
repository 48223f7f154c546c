/*
 * Differential tests of the unary ops, logical_not and casts. Every op runs on every type
 * it accepts, on contiguous, transposed, stepped (negative steps too), broadcast and
 * rank-0 inputs of sizes 0, 1, odd and prime, and each backend is compared with a float64
 * (or exact integer) reference computed from the inputs as read back. Separate tests pin
 * the special values (±0, ±inf, NaN, huge values, integer extremes) exactly, the type and
 * argument errors, and the WebGPU backend against the CPU backend directly.
 *
 * Tolerances: ops that only select, negate or round one value are exact; sqrt, rsqrt,
 * reciprocal and leaky_relu round a few times and get 4e-7 relative. The rest allow 1e-5
 * relative for f32: the WebGPU builtins are not correctly rounded (lavapipe's exp is about
 * 1e-6 off at |x| = 20) and erf, expm1 and log1p are approximations good to a few 1e-7.
 * The absolute floor is FLT_MIN, because a GPU may flush subnormal results to 0. sin and
 * cos reduce their argument exactly, so they get 4e-7 relative (2 ulp) even near their
 * zeros (test_float_accuracy.c holds them to 2 ulp at every magnitude).
 * f16 allows 2e-3 relative: computing in f32 then rounding once may land one f16 ulp from
 * the correctly rounded value.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

enum { NEG, ABS, SIGN, SQUARE, SQRT, RSQRT, RECIP, EXP, EXPM1, LOG, LOG1P, SIN, COS, TANH, SIGMOID, RELU, LEAKY,
       ELU, GELU, GELU_TANH, SILU, SOFTPLUS, FLOOR, CEIL, ROUND, ERF, ISNAN, ISINF, CLAMP, NOT, OP_COUNT };

/* One signature for every op, so the tables can hold them all. */
#define WRAP(name) static wgt_tensor *call_##name(wgt_tensor *a, double p0, double p1) { (void)p0, (void)p1; return wgt_##name(a); }
WRAP(neg) WRAP(abs) WRAP(sign) WRAP(square) WRAP(sqrt) WRAP(rsqrt) WRAP(reciprocal) WRAP(exp) WRAP(expm1)
WRAP(log) WRAP(log1p) WRAP(sin) WRAP(cos) WRAP(tanh) WRAP(sigmoid) WRAP(relu) WRAP(gelu) WRAP(gelu_tanh)
WRAP(silu) WRAP(softplus) WRAP(floor) WRAP(ceil) WRAP(round) WRAP(erf) WRAP(isnan) WRAP(isinf) WRAP(logical_not)
#undef WRAP
static wgt_tensor *call_leaky_relu(wgt_tensor *a, double p0, double p1) { (void)p1; return wgt_leaky_relu(a, p0); }
static wgt_tensor *call_elu(wgt_tensor *a, double p0, double p1) { (void)p1; return wgt_elu(a, p0); }
static wgt_tensor *call_clamp(wgt_tensor *a, double p0, double p1) { return wgt_clamp(a, p0, p1); }

enum { ANY = 1, BOOL_OUT = 2, EXACT = 4, SATURATES = 8 };
static const struct {
    const char *name;
    wgt_tensor *(*fn)(wgt_tensor *, double, double);
    unsigned flags;
    double lo, hi;  /* random float inputs: the op's domain, plus where its formulas switch */
    double p0, p1;  /* parameters passed */
    double rtol, atol;
} ops[OP_COUNT] = {
    [NEG] = {"neg", call_neg, ANY | EXACT, -100, 100, 0, 0, 0, 0},
    [ABS] = {"abs", call_abs, ANY | EXACT, -100, 100, 0, 0, 0, 0},
    [SIGN] = {"sign", call_sign, ANY | EXACT, -3, 3, 0, 0, 0, 0},
    [SQUARE] = {"square", call_square, ANY | EXACT, -100, 100, 0, 0, 0, 0},
    [SQRT] = {"sqrt", call_sqrt, 0, 0, 100, 0, 0, 4e-7, 0},
    [RSQRT] = {"rsqrt", call_rsqrt, 0, 0.01, 100, 0, 0, 4e-7, 0},
    [RECIP] = {"reciprocal", call_reciprocal, 0, -10, 10, 0, 0, 4e-7, 0},
    [EXP] = {"exp", call_exp, 0, -20, 20, 0, 0, 1e-5, 0},
    [EXPM1] = {"expm1", call_expm1, SATURATES, -3, 3, 0, 0, 1e-5, 0},
    [LOG] = {"log", call_log, 0, 0.01, 10, 0, 0, 1e-5, 0},
    [LOG1P] = {"log1p", call_log1p, 0, -0.9, 3, 0, 0, 1e-5, 0},
    [SIN] = {"sin", call_sin, 0, -20, 20, 0, 0, 4e-7, 0},
    [COS] = {"cos", call_cos, 0, -20, 20, 0, 0, 4e-7, 0},
    [TANH] = {"tanh", call_tanh, SATURATES, -6, 6, 0, 0, 1e-5, 0},
    [SIGMOID] = {"sigmoid", call_sigmoid, SATURATES, -20, 20, 0, 0, 1e-5, 0},
    [RELU] = {"relu", call_relu, ANY | EXACT, -5, 5, 0, 0, 0, 0},
    [LEAKY] = {"leaky_relu", call_leaky_relu, 0, -5, 5, 0.01, 0, 4e-7, 0},
    [ELU] = {"elu", call_elu, SATURATES, -5, 5, 1.5, 0, 1e-5, 0},
    [GELU] = {"gelu", call_gelu, SATURATES, -8, 8, 0, 0, 1e-5, 0},
    [GELU_TANH] = {"gelu_tanh", call_gelu_tanh, SATURATES, -8, 8, 0, 0, 1e-5, 0},
    [SILU] = {"silu", call_silu, SATURATES, -20, 20, 0, 0, 1e-5, 0},
    [SOFTPLUS] = {"softplus", call_softplus, SATURATES, -20, 20, 0, 0, 1e-5, 0},
    [FLOOR] = {"floor", call_floor, ANY | EXACT, -10, 10, 0, 0, 0, 0},
    [CEIL] = {"ceil", call_ceil, ANY | EXACT, -10, 10, 0, 0, 0, 0},
    [ROUND] = {"round", call_round, ANY | EXACT, -10, 10, 0, 0, 0, 0},
    [ERF] = {"erf", call_erf, SATURATES, -4, 4, 0, 0, 1e-5, 0},
    [ISNAN] = {"isnan", call_isnan, ANY | BOOL_OUT | EXACT, -5, 5, 0, 0, 0, 0},
    [ISINF] = {"isinf", call_isinf, ANY | BOOL_OUT | EXACT, -5, 5, 0, 0, 0, 0},
    [CLAMP] = {"clamp", call_clamp, ANY | EXACT, -5, 5, -1.5, 2, 0, 0},
    [NOT] = {"logical_not", call_logical_not, ANY | BOOL_OUT | EXACT, -2, 2, 0, 0, 0, 0},
};
static const wgt_dtype dtypes[] = {WGT_F32, WGT_F16, WGT_I32, WGT_U32};

static int is_int(wgt_dtype d) { return d == WGT_I32 || d == WGT_U32; }
static int accepts(int op, wgt_dtype d) { return !is_int(d) || (ops[op].flags & ANY); }
static wgt_dtype out_type(int op, wgt_dtype d) { return ops[op].flags & BOOL_OUT ? WGT_BOOL : d; }

/* Bits of a 64-bit integer result kept in 32, as i32 or u32. */
static double wrap32(wgt_dtype dt, int64_t v) {
    uint32_t u = (uint32_t)(uint64_t)v;
    return dt == WGT_U32 ? (double)u : (double)(int32_t)u;
}

static double sigmoid(double x) { return 1 / (1 + exp(-x)); }

/* The header's semantics in float64. Integer inputs are exact in a double. */
static double reference(int op, wgt_dtype dt, double x, double p0, double p1) {
    if (is_int(dt)) {
        int64_t v = (int64_t)x;
        switch (op) {
        case NEG: return wrap32(dt, -v);
        case ABS: return wrap32(dt, v < 0 ? -v : v);
        case SIGN: return wrap32(dt, (v > 0) - (v < 0));
        case SQUARE: return wrap32(dt, (int64_t)((uint64_t)v * (uint64_t)v));
        case RELU: return v < 0 ? 0 : x;
        case ISNAN: case ISINF: return 0;
        case NOT: return v == 0;
        case CLAMP: return x < ceil(p0) ? ceil(p0) : x > floor(p1) ? floor(p1) : x;
        default: return x; /* floor, ceil, round */
        }
    }
    if (isnan(x)) return op == ISNAN ? 1 : op == ISINF || op == NOT ? 0 : x;
    double lo = (float)p0, hi = (float)p1, s = (float)p0; /* parameters reach the kernels as f32 */
    switch (op) {
    case NEG: return -x;
    case ABS: return fabs(x);
    case SIGN: return x > 0 ? 1 : x < 0 ? -1 : x;
    case SQUARE: return x * x;
    case SQRT: return sqrt(x);
    case RSQRT: return 1 / sqrt(x);
    case RECIP: return 1 / x;
    case EXP: return exp(x);
    case EXPM1: return expm1(x);
    case LOG: return log(x);
    case LOG1P: return log1p(x);
    case SIN: return sin(x);
    case COS: return cos(x);
    case TANH: return tanh(x);
    case SIGMOID: return sigmoid(x);
    case RELU: return x < 0 ? 0 : x;
    case LEAKY: return x < 0 ? x * s : x;
    case ELU: return x < 0 ? s * expm1(x) : x;
    /* At -inf the products are -inf * 0: the limit, -0, is what the header's ops give. */
    case GELU: return x == -INFINITY ? -0.0 : 0.5 * x * erfc(-x / sqrt(2.0));
    case GELU_TANH: { /* 0.5 (1 + tanh(u)) written as sigmoid(2u): exact in float64 */
        double u = sqrt(2 / M_PI) * (x + 0.044715 * x * x * x);
        return x == -INFINITY ? -0.0 : x * sigmoid(2 * u);
    }
    case SILU: return x == -INFINITY ? -0.0 : x * sigmoid(x);
    case SOFTPLUS: return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
    case FLOOR: return floor(x);
    case CEIL: return ceil(x);
    case ROUND: return nearbyint(x); /* round-to-nearest-even mode */
    case ERF: return erf(x);
    case ISNAN: return 0;
    case ISINF: return isinf(x) != 0;
    case CLAMP: return x < lo ? lo : x > hi ? hi : x;
    case NOT: return x == 0;
    }
    return NAN;
}

static double tolerance(int op, wgt_dtype dt, double want) {
    if (is_int(dt) || (ops[op].flags & EXACT)) return 0;
    double tol = ops[op].rtol * fabs(want) + fmax(ops[op].atol, FLT_MIN);
    if (dt == WGT_F16) tol = fmax(tol, 2e-3 * fabs(want) + 6e-8);
    return tol;
}

static int matches(double got, double want, double tol) {
    if (isnan(want)) return isnan(got);
    if (isinf(want)) return got == want;
    return fabs(got - want) <= tol;
}

static double expected(int op, wgt_dtype dt, double x) {
    return test_round_to(out_type(op, dt), reference(op, dt, x, ops[op].p0, ops[op].p1));
}

/* Random inputs in the op's domain; integers over the whole type where wrapping shows. */
static wgt_tensor *random_input(wgt_context *ctx, int op, wgt_dtype dt, int ndim, const int64_t *shape, uint64_t seed) {
    int narrow = op == SIGN || op == RELU || op == NOT || op == CLAMP;
    switch (dt) {
    case WGT_I32:
        return narrow ? wgt_rand_uniform(ctx, dt, ndim, shape, -4, 4, seed)
                      : wgt_rand_uniform(ctx, dt, ndim, shape, -2147483648.0, 2147483648.0, seed);
    case WGT_U32:
        return narrow ? wgt_rand_uniform(ctx, dt, ndim, shape, 0, 4, seed)
                      : wgt_rand_uniform(ctx, dt, ndim, shape, 0, 4294967296.0, seed);
    default: return wgt_rand_uniform(ctx, dt, ndim, shape, ops[op].lo, ops[op].hi, seed);
    }
}

typedef enum { CONTIGUOUS, TRANSPOSED, STEPPED, BROADCAST, SCALAR, LAYOUT_COUNT } layout;
static const char *const layout_names[] = {"contiguous", "transposed", "stepped", "broadcast", "rank-0"};

/* A [rows, cols] view of the given layout (rank 0 for SCALAR); the base is released, the
 * view keeps the storage alive. */
static wgt_tensor *make_input(wgt_context *ctx, int op, wgt_dtype dt, layout l, int64_t rows, int64_t cols,
                              uint64_t seed) {
    wgt_tensor *base = NULL, *view = NULL;
    int64_t s[2] = {rows, cols};
    switch (l) {
    case CONTIGUOUS: return random_input(ctx, op, dt, 2, s, seed);
    case SCALAR: return random_input(ctx, op, dt, 0, s, seed);
    case TRANSPOSED:
        s[0] = cols, s[1] = rows;
        base = random_input(ctx, op, dt, 2, s, seed);
        view = wgt_transpose(base, 0, 1);
        break;
    case STEPPED: { /* rows 1, 3, 5, ... and the columns backwards: offset, step 2, step -1 */
        s[0] = 2 * rows + 1, s[1] = cols + 2;
        base = random_input(ctx, op, dt, 2, s, seed);
        wgt_tensor *r = wgt_slice(base, 0, 1, 2 * rows + 1, 2);
        view = wgt_slice(r, 1, cols, 0, -1);
        wgt_release(r);
        break;
    }
    case BROADCAST: /* one row repeated: stride 0 on the first axis */
        s[0] = 1;
        base = random_input(ctx, op, dt, 2, s, seed);
        s[0] = rows;
        view = wgt_broadcast_to(base, 2, s);
        break;
    default: break;
    }
    wgt_release(base);
    return view;
}

static const int64_t sizes[][2] = {{0, 5}, {1, 1}, {7, 13}, {17, 31}, {3, 401}};

/* Runs one op on one input and compares every element with the reference. */
static void check_against_reference(int op, wgt_dtype dt, wgt_tensor *in, const char *what) {
    wgt_tensor *out = ops[op].fn(in, ops[op].p0, ops[op].p1);
    CHECK(out != NULL, "%s %s %s: %s", ops[op].name, wgt_dtype_name(dt), what, wgt_last_error());
    if (!out) return;
    int64_t n = wgt_tensor_numel(in);
    CHECK(wgt_tensor_dtype(out) == out_type(op, dt) && wgt_tensor_numel(out) == n &&
              wgt_tensor_ndim(out) == wgt_tensor_ndim(in) && wgt_tensor_is_contiguous(out),
          "%s %s %s: result type or shape", ops[op].name, wgt_dtype_name(dt), what);
    double *x = test_read_f64(in), *y = test_read_f64(out);
    CHECK(x && y, "reading back: %s", wgt_last_error());
    int bad = 0;
    for (int64_t i = 0; x && y && i < n; i++) {
        double want = expected(op, dt, x[i]);
        if (!matches(y[i], want, tolerance(op, dt, want)) && bad++ < 3)
            CHECK(0, "%s %s %s: element %lld: %s(%.9g) = %.9g, want %.9g", ops[op].name, wgt_dtype_name(dt), what,
                  (long long)i, ops[op].name, x[i], y[i], want);
    }
    free(x);
    free(y);
    wgt_release(out);
}

TEST_BACKENDS(unary_all_ops_types_layouts) {
    uint64_t seed = 1;
    char what[96];
    for (int op = 0; op < OP_COUNT; op++)
        for (size_t d = 0; d < sizeof dtypes / sizeof *dtypes; d++) {
            if (!accepts(op, dtypes[d])) continue;
            for (int l = 0; l < LAYOUT_COUNT; l++)
                for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
                    if (l == SCALAR && s > 0) break; /* one rank-0 case per layout sweep */
                    int64_t rows = sizes[s][0], cols = sizes[s][1];
                    wgt_tensor *in = make_input(ctx, op, dtypes[d], (layout)l, rows, cols, seed);
                    snprintf(what, sizeof what, "%s [%lld, %lld] seed %llu", layout_names[l], (long long)rows,
                             (long long)cols, (unsigned long long)seed);
                    seed++;
                    CHECK(in != NULL, "%s: making the input: %s", what, wgt_last_error());
                    if (in) check_against_reference(op, dtypes[d], in, what);
                    wgt_release(in);
                }
        }
}

/* A 1-D tensor holding the values exactly as the type stores them (f16 rounds). */
static wgt_tensor *vector(wgt_context *ctx, wgt_dtype dt, int n, const double *v) {
    unsigned char buf[64 * 4];
    for (int i = 0; i < n; i++) {
        switch (dt) {
        case WGT_F32: { float f = (float)v[i]; memcpy(buf + 4 * i, &f, 4); break; }
        case WGT_F16: { uint16_t h = wgt_f32_to_f16((float)v[i]); memcpy(buf + 2 * i, &h, 2); break; }
        case WGT_I32: { int32_t k = (int32_t)v[i]; memcpy(buf + 4 * i, &k, 4); break; }
        case WGT_U32: { uint32_t k = (uint32_t)v[i]; memcpy(buf + 4 * i, &k, 4); break; }
        default: break;
        }
    }
    return wgt_tensor_from_data(ctx, dt, 1, (int64_t[]){n}, buf, (size_t)n * wgt_dtype_size(dt), WGT_USAGE_DEFAULT);
}

static const double inf = INFINITY;
static const double float_specials[] = {0.0, -0.0, 1, -1, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.5, 1e-3, -1e-3,
                                        100, -100, 1e30, -1e30, FLT_MAX, -FLT_MAX, inf, -inf, NAN};

/* Zeros, infinities, NaN and huge values through every float op: NaN and infinities must
 * match exactly, and where an op saturates (tanh(100) = 1, softplus(100) = 100, silu(-inf)
 * = -0, ...) the result must be the exact saturated value, with no NaN from inf - inf or
 * inf / inf inside a formula. */
TEST_BACKENDS(unary_float_special_values) {
    const int n = (int)(sizeof float_specials / sizeof *float_specials);
    for (int op = 0; op < OP_COUNT; op++)
        for (int d = 0; d < 2; d++) {
            wgt_dtype dt = dtypes[d];
            wgt_tensor *in = vector(ctx, dt, n, float_specials);
            wgt_tensor *out = ops[op].fn(in, ops[op].p0, ops[op].p1);
            double *x = test_read_f64(in), *y = out ? test_read_f64(out) : NULL;
            CHECK(x && y, "%s %s: %s", ops[op].name, wgt_dtype_name(dt), wgt_last_error());
            for (int i = 0; x && y && i < n; i++) {
                double want = expected(op, dt, x[i]);
                int saturated = (ops[op].flags & SATURATES) && fabs(x[i]) >= 100 && fabs(want) >= FLT_MIN;
                double tol = saturated ? 0 : tolerance(op, dt, want);
                CHECK(matches(y[i], want, tol), "%s %s: %s(%g) = %.9g, want %.9g", ops[op].name, wgt_dtype_name(dt),
                      ops[op].name, x[i], y[i], want);
                if ((op == NEG || op == ABS) && want == 0)
                    CHECK(signbit(y[i]) == signbit(want), "%s(%g) = %g: sign of zero", ops[op].name, x[i], y[i]);
            }
            free(x);
            free(y);
            wgt_release(in);
            wgt_release(out);
        }
}

/* Integer extremes: neg and square wrap, abs(INT32_MIN) is INT32_MIN, the float-like ops
 * are the identity, isnan and isinf are 0, and clamp's bounds land inside the type. */
TEST_BACKENDS(unary_integer_edges_exact) {
    static const double i32v[] = {0, 1, -1, 2, -3, 46341, -46341, 65536, INT32_MAX, INT32_MIN, INT32_MIN + 1.0};
    static const double u32v[] = {0, 1, 2, 65536, 65537, 2147483647.0, 2147483648.0, 4294967295.0};
    for (int op = 0; op < OP_COUNT; op++) {
        if (!(ops[op].flags & ANY)) continue;
        for (int d = 2; d < 4; d++) {
            wgt_dtype dt = dtypes[d];
            int n = dt == WGT_I32 ? (int)(sizeof i32v / sizeof *i32v) : (int)(sizeof u32v / sizeof *u32v);
            wgt_tensor *in = vector(ctx, dt, n, dt == WGT_I32 ? i32v : u32v);
            check_against_reference(op, dt, in, "edges");
            wgt_release(in);
        }
    }
    int32_t r[3] = {0, 0, 0};
    wgt_tensor *t = vector(ctx, WGT_I32, 3, (double[]){INT32_MIN, INT32_MAX, -7});
    wgt_tensor *a = wgt_abs(t), *g = wgt_neg(t), *c = wgt_clamp(t, -6.5, 1e12);
    CHECK(a && wgt_tensor_read(a, r, sizeof r) == WGT_OK && r[0] == INT32_MIN && r[1] == INT32_MAX && r[2] == 7,
          "abs: %d %d %d", r[0], r[1], r[2]);
    CHECK(g && wgt_tensor_read(g, r, sizeof r) == WGT_OK && r[0] == INT32_MIN && r[1] == -INT32_MAX && r[2] == 7,
          "neg: %d %d %d", r[0], r[1], r[2]);
    CHECK(c && wgt_tensor_read(c, r, sizeof r) == WGT_OK && r[0] == -6 && r[1] == INT32_MAX && r[2] == -6,
          "clamp(-6.5, 1e12): %d %d %d", r[0], r[1], r[2]);
    wgt_release(t);
    wgt_release(a);
    wgt_release(g);
    wgt_release(c);
    uint32_t u[3];
    wgt_tensor *tu = vector(ctx, WGT_U32, 3, (double[]){0, 5, 4294967295.0});
    wgt_tensor *cu = wgt_clamp(tu, -3, 4.5);
    CHECK(cu && wgt_tensor_read(cu, u, sizeof u) == WGT_OK && u[0] == 0 && u[1] == 4 && u[2] == 4,
          "u32 clamp(-3, 4.5): %u %u %u", u[0], u[1], u[2]);
    wgt_release(tu);
    wgt_release(cu);
}

TEST_BACKENDS(unary_round_half_to_even) {
    static const double x[] = {0.5, 1.5, 2.5, 3.5, -0.5, -1.5, -2.5, 2.4999998, 2.5000002, 8388607.5, -8388609};
    static const double want[] = {0, 2, 2, 4, -0.0, -2, -2, 2, 3, 8388608, -8388609};
    wgt_tensor *t = vector(ctx, WGT_F32, 11, x), *r = wgt_round(t);
    double *y = r ? test_read_f64(r) : NULL;
    CHECK(y != NULL, "%s", wgt_last_error());
    for (int i = 0; y && i < 11; i++) CHECK(y[i] == want[i], "round(%.9g) = %.9g, want %.9g", x[i], y[i], want[i]);
    free(y);
    wgt_release(t);
    wgt_release(r);
}

TEST_BACKENDS(unary_errors_name_the_op_and_type) {
    wgt_tensor *ti = wgt_zeros(ctx, WGT_I32, 1, (int64_t[]){3}), *tu = wgt_zeros(ctx, WGT_U32, 1, (int64_t[]){3});
    wgt_tensor *tf = wgt_zeros(ctx, WGT_F32, 1, (int64_t[]){3});
    char name[32];
    for (int op = 0; op < OP_COUNT; op++) {
        if (ops[op].flags & ANY) continue;
        snprintf(name, sizeof name, "wgt_%s", ops[op].name);
        CHECK_ERROR(ops[op].fn(ti, ops[op].p0, ops[op].p1) == NULL, WGT_ERR_DTYPE, name);
        CHECK_ERROR(ops[op].fn(tu, ops[op].p0, ops[op].p1) == NULL, WGT_ERR_DTYPE, "u32");
        CHECK_ERROR(ops[op].fn(ti, ops[op].p0, ops[op].p1) == NULL, WGT_ERR_DTYPE, "i32");
    }
    CHECK_ERROR(wgt_clamp(tf, 2, 1) == NULL, WGT_ERR_INVALID_ARGUMENT, "lo");
    CHECK_ERROR(wgt_clamp(tf, NAN, 1) == NULL, WGT_ERR_INVALID_ARGUMENT, "wgt_clamp");
    CHECK_ERROR(wgt_clamp(ti, 0.2, 0.8) == NULL, WGT_ERR_INVALID_ARGUMENT, "i32");
    CHECK_ERROR(wgt_clamp(tu, -5, -1) == NULL, WGT_ERR_INVALID_ARGUMENT, "u32");
    CHECK_ERROR(wgt_leaky_relu(tf, NAN) == NULL, WGT_ERR_INVALID_ARGUMENT, "negative_slope");
    CHECK_ERROR(wgt_elu(tf, NAN) == NULL, WGT_ERR_INVALID_ARGUMENT, "alpha");
    CHECK_ERROR(wgt_cast(tf, (wgt_dtype)99) == NULL, WGT_ERR_DTYPE, "wgt_cast");
    /* A NULL input keeps the message of the call that failed first. */
    wgt_clear_error();
    CHECK(wgt_exp(wgt_sqrt(ti)) == NULL && wgt_last_status() == WGT_ERR_DTYPE &&
              test_contains(wgt_last_error(), "wgt_sqrt"),
          "chained failure: %s", wgt_last_error());
    CHECK(wgt_cast(NULL, WGT_F32) == NULL && test_contains(wgt_last_error(), "wgt_sqrt"), "%s", wgt_last_error());
    wgt_clear_error();
    CHECK_ERROR(wgt_logical_not(NULL) == NULL, WGT_ERR_INVALID_ARGUMENT, "wgt_logical_not");
    wgt_release(ti);
    wgt_release(tu);
    wgt_release(tf);
}

/* ---- casts ---- */

/* The header's cast semantics in float64: x is the source value as read back. */
static double cast_reference(wgt_dtype from, wgt_dtype to, double x) {
    int from_float = !is_int(from);
    switch (to) {
    case WGT_F32: case WGT_F16: return test_round_to(to, x); /* f16 rounds via f32, as promised */
    case WGT_I32:
        if (from_float) return isnan(x) ? 0 : x >= 2147483647.0 ? 2147483647.0 : x <= -2147483648.0 ? -2147483648.0 : trunc(x);
        return wrap32(to, (int64_t)x);
    case WGT_U32:
        if (from_float) return isnan(x) || x <= 0 ? 0 : x >= 4294967295.0 ? 4294967295.0 : trunc(x);
        return wrap32(to, (int64_t)x);
    default: break;
    }
    return NAN;
}

/* Runs a cast and checks it bit for bit (NaN only as NaN; zeros with their sign). */
static void check_cast(wgt_dtype from, wgt_dtype to, wgt_tensor *in, const char *what) {
    wgt_tensor *out = wgt_cast(in, to);
    CHECK(out && wgt_tensor_dtype(out) == to && wgt_tensor_is_contiguous(out) && out != in, "cast %s -> %s %s: %s",
          wgt_dtype_name(from), wgt_dtype_name(to), what, wgt_last_error());
    if (!out) return;
    int64_t n = wgt_tensor_numel(in);
    double *x = test_read_f64(in), *y = test_read_f64(out);
    CHECK(x && y && wgt_tensor_numel(out) == n, "reading back: %s", wgt_last_error());
    int bad = 0;
    for (int64_t i = 0; x && y && i < n; i++) {
        double want = cast_reference(from, to, x[i]);
        int ok = isnan(want) ? isnan(y[i]) : y[i] == want && (is_int(to) || signbit(y[i]) == signbit(want));
        if (!ok && bad++ < 3)
            CHECK(0, "cast %s -> %s %s: element %lld: %.9g gives %.9g, want %.9g", wgt_dtype_name(from),
                  wgt_dtype_name(to), what, (long long)i, x[i], y[i], want);
    }
    free(x);
    free(y);
    wgt_release(out);
}

/* Random sources reach past every target's range and include fractions of both signs. */
static wgt_tensor *cast_source(wgt_context *ctx, wgt_dtype dt, int ndim, const int64_t *shape, uint64_t seed) {
    switch (dt) {
    case WGT_I32: return wgt_rand_uniform(ctx, dt, ndim, shape, -2147483648.0, 2147483648.0, seed);
    case WGT_U32: return wgt_rand_uniform(ctx, dt, ndim, shape, 0, 4294967296.0, seed);
    case WGT_F16: return wgt_rand_normal(ctx, dt, ndim, shape, 0, 2e4, seed); /* beyond u16 and f16 range both */
    default: return seed % 2 ? wgt_rand_normal(ctx, dt, ndim, shape, 0, 5e9, seed)
                             : wgt_rand_uniform(ctx, dt, ndim, shape, -300, 300, seed);
    }
}

TEST_BACKENDS(cast_all_pairs_layouts) {
    uint64_t seed = 1;
    char what[96];
    for (int f = 0; f < 4; f++)
        for (int t = 0; t < 4; t++)
            for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
                for (int l = 0; l < 3; l++) { /* contiguous, transposed, stepped-and-reversed */
                    int64_t rows = sizes[s][0], cols = sizes[s][1], shape[2] = {l == 1 ? cols : 2 * rows + 1, l == 1 ? rows : cols + 2};
                    wgt_tensor *base = cast_source(ctx, dtypes[f], 2, l == 0 ? sizes[s] : shape, seed++);
                    wgt_tensor *in = NULL;
                    if (l == 0) in = wgt_retain(base);
                    else if (l == 1) in = wgt_transpose(base, 0, 1);
                    else {
                        wgt_tensor *r = wgt_slice(base, 0, 1, 2 * rows + 1, 2);
                        in = wgt_slice(r, 1, cols, 0, -1);
                        wgt_release(r);
                    }
                    snprintf(what, sizeof what, "%s [%lld, %lld]", layout_names[l], (long long)rows, (long long)cols);
                    CHECK(in != NULL, "%s: %s", what, wgt_last_error());
                    if (in) check_cast(dtypes[f], dtypes[t], in, what);
                    wgt_release(in);
                    wgt_release(base);
                }
}

/* Every pair on the values where casts go wrong: NaN, infinities, saturation edges, values
 * between -1 and 0, integers that f32 or f16 must round (to even), negative integers as
 * u32 and u32 above INT32_MAX as i32; plus a broadcast and a rank-0 source. */
TEST_BACKENDS(cast_edge_values_exact) {
    static const double fv[] = {0.0, -0.0, 0.5, -0.5, 0.99, -0.99, 1.5, -2.5, 2147483520.0, 2147483648.0,
                                -2147483648.0, -2147483904.0, 4294967040.0, 4294967296.0, 65504, 65519, 65520,
                                -65536, 1e-8, 6e-8, 16777217.0, 1e30, -1e30, inf, -inf, NAN};
    static const double iv[] = {0, 1, -1, INT32_MAX, INT32_MIN, 16777217, 16777219, -16777219, 65504, 65519,
                                65520, -65520, 2049, 2051, 4097};
    static const double uv[] = {0, 1, 2147483647.0, 2147483648.0, 4294967295.0, 16777217, 16777219, 65519,
                                65520, 2049, 4294967040.0};
    for (int f = 0; f < 4; f++) {
        const double *v = f < 2 ? fv : f == 2 ? iv : uv;
        int n = f < 2 ? (int)(sizeof fv / sizeof *fv) : f == 2 ? (int)(sizeof iv / sizeof *iv) : (int)(sizeof uv / sizeof *uv);
        wgt_tensor *in = vector(ctx, dtypes[f], n, v);
        wgt_tensor *col = wgt_reshape(in, 2, (int64_t[]){n, 1});
        wgt_tensor *wide = wgt_broadcast_to(col, 2, (int64_t[]){n, 3});
        wgt_tensor *one = wgt_as_strided(in, 0, NULL, NULL, n - 1); /* the last value as rank 0 */
        for (int t = 0; t < 4; t++) {
            check_cast(dtypes[f], dtypes[t], in, "edges");
            check_cast(dtypes[f], dtypes[t], wide, "edges broadcast");
            check_cast(dtypes[f], dtypes[t], one, "rank-0");
        }
        wgt_release(in);
        wgt_release(col);
        wgt_release(wide);
        wgt_release(one);
    }
}

/* ---- the WebGPU backend against the CPU backend ---- */

TEST(unary_webgpu_matches_cpu) {
    wgt_context *cpu, *gpu;
    if (!test_backend_pair(&cpu, &gpu)) return;
    wgt_context *cs[2] = {cpu, gpu};
    const int64_t n = 33 * 65;
    for (int op = 0; op <= OP_COUNT; op++) /* op == OP_COUNT: casts to every type */
        for (int d = 0; d < 4; d++) {
            int casts = op == OP_COUNT;
            if (!casts && !accepts(op, dtypes[d])) continue;
            for (int t = 0; t < (casts ? 4 : 1); t++) {
                wgt_tensor *r[2];
                for (int k = 0; k < 2; k++) {
                    wgt_tensor *a = casts ? cast_source(cs[k], dtypes[d], 2, (int64_t[]){65, 33}, 77 + d)
                                          : random_input(cs[k], op, dtypes[d], 2, (int64_t[]){65, 33}, 5 + op);
                    wgt_tensor *at = wgt_transpose(a, 0, 1); /* a strided [33, 65] view */
                    r[k] = casts ? wgt_cast(at, dtypes[t]) : ops[op].fn(at, ops[op].p0, ops[op].p1);
                    wgt_release(a);
                    wgt_release(at);
                }
                const char *name = casts ? "cast" : ops[op].name;
                double *x = r[0] ? test_read_f64(r[0]) : NULL, *y = r[1] ? test_read_f64(r[1]) : NULL;
                CHECK(x && y && wgt_tensor_numel(r[0]) == n && wgt_tensor_numel(r[1]) == n, "%s %s: %s", name,
                      wgt_dtype_name(dtypes[d]), wgt_last_error());
                int bad = 0;
                for (int64_t i = 0; x && y && i < n; i++) {
                    double tol = casts ? 0 : tolerance(op, dtypes[d], x[i]);
                    if (!matches(y[i], x[i], tol) && bad++ < 3)
                        CHECK(0, "%s %s -> %s element %lld: webgpu %.9g, cpu %.9g", name, wgt_dtype_name(dtypes[d]),
                              wgt_dtype_name(wgt_tensor_dtype(r[0])), (long long)i, y[i], x[i]);
                }
                free(x);
                free(y);
                wgt_release(r[0]);
                wgt_release(r[1]);
            }
        }
    wgt_context_release(gpu);
    wgt_context_release(cpu);
}
