/*
 * Tests of the WebGPU backend's fused elementwise kernels (backend.h: wgt_fused_kernel),
 * called directly, as the execution engine will. Each test builds a chain by hand and, step
 * by step, the same ops through the public API on the same context with fusion off; every
 * output of the fused kernel must equal the one-op-at-a-time result bit for bit: NaN
 * payloads, signed zeros and f16 rounding between steps included. Inputs mix random values
 * with special ones (NaN, infinities, signed zeros, subnormals, values beyond f16's range,
 * integer extremes). Malformed descriptions must give WGT_ERR_INTERNAL, never a crash.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/handles.h"
#include "core/tensor.h"
#include "test.h"

#define NVALUES (WGT_FUSED_MAX_INPUTS + WGT_FUSED_MAX_STEPS)

/* A WebGPU context whose public ops run one by one, the reference for every fused chain. */
static wgt_context *unfused_context(void) {
    wgt_context_options opt = {0};
    opt.backend = WGT_BACKEND_WEBGPU;
    opt.quiet = 1;
    opt.no_fusion = 1;
    wgt_context *ctx = wgt_context_create(&opt);
    if (!ctx) wgt_clear_error(); /* the runner has failed the run already if WebGPU was required */
    return ctx;
}

/* ---- inputs ---- */

static uint32_t next_random(uint32_t *state) {
    *state = *state * 1664525u + 1013904223u;
    return *state >> 8;
}

/* Row-major values of dtype: one element in five special, the rest random in [-8, 8) for
 * floats, small or anywhere in the type for integers (wide). */
static wgt_tensor *values(wgt_context *ctx, wgt_dtype d, int ndim, const int64_t *shape, uint32_t seed, int wide) {
    static const float fspecial[] = {NAN, -0.0f, 0.0f, INFINITY, -INFINITY, 1e-40f, -3.5f, 65520.0f, -1e30f,
                                     0.5f, 2.5f, -2.5f, 3e9f, -3e9f, 1.0f, -1.0f, 16777217.0f, 0.1f};
    static const int32_t ispecial[] = {0, -1, 1, INT32_MIN, INT32_MAX, 7, -7, 2, -2, 65537};
    static const uint32_t uspecial[] = {0, 1, UINT32_MAX, 0x80000000u, 7, 2, 0xffff0001u, 65537};
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    size_t size = wgt_dtype_size(d);
    unsigned char *data = malloc((size_t)(n ? n : 1) * size);
    if (!data) return NULL;
    uint32_t state = seed * 2654435761u + 1;
    for (int64_t i = 0; i < n; i++) {
        uint32_t r = next_random(&state);
        int special = r % 5 == 0;
        uint32_t pick = next_random(&state);
        float f = special ? fspecial[pick % (sizeof fspecial / sizeof *fspecial)] : (float)(pick % 65536) / 4096.0f - 8.0f;
        int32_t iv = special ? ispecial[pick % (sizeof ispecial / sizeof *ispecial)]
                             : wide ? (int32_t)(pick * 2654435761u) : (int32_t)(pick % 41) - 20;
        uint32_t uv = special ? uspecial[pick % (sizeof uspecial / sizeof *uspecial)]
                              : wide ? pick * 2654435761u : pick % 41;
        switch (d) {
        case WGT_F32: memcpy(data + i * 4, &f, 4); break;
        case WGT_F16: {
            uint16_t h = wgt_f32_to_f16(f);
            memcpy(data + i * 2, &h, 2);
            break;
        }
        case WGT_I32: memcpy(data + i * 4, &iv, 4); break;
        case WGT_U32: memcpy(data + i * 4, &uv, 4); break;
        default: break;
        }
    }
    wgt_tensor *t = wgt_tensor_from_data(ctx, d, ndim, shape, data, (size_t)n * size, WGT_USAGE_DEFAULT);
    free(data);
    CHECK(t != NULL, "input: %s", wgt_last_error());
    return t;
}

/* ---- chains: the fused kernel and its one-op-at-a-time reference, built side by side ---- */

typedef struct {
    wgt_context *ctx;
    wgt_fused_kernel k;
    int ndim;
    int64_t shape[WGT_MAX_DIMS];
    wgt_tensor *input[WGT_FUSED_MAX_INPUTS];
    wgt_tensor *ref[NVALUES]; /* each value as the public ops give it, at the chain's shape */
    wgt_dtype type[NVALUES];
    wgt_tensor *out[WGT_FUSED_MAX_OUTPUTS];
    const char *name;
} chain;

static void chain_begin(chain *c, wgt_context *ctx, const char *name, int ndim, const int64_t *shape) {
    memset(c, 0, sizeof *c);
    c->ctx = ctx;
    c->name = name;
    c->ndim = ndim;
    if (ndim) memcpy(c->shape, shape, (size_t)ndim * sizeof *shape);
}

static void chain_end(chain *c) {
    for (int i = 0; i < NVALUES; i++) wgt_release(c->ref[i]);
    for (int o = 0; o < WGT_FUSED_MAX_OUTPUTS; o++) wgt_release(c->out[o]);
}

/* Input t, broadcast to the chain's shape (NumPy's rule: dimensions aligned at the end). */
static int chain_input(chain *c, wgt_tensor *t) {
    CHECK(c->k.nsteps == 0, "%s: inputs come before steps (values are numbered inputs first)", c->name);
    int i = c->k.ninputs++;
    if (!t) return i;
    c->input[i] = t;
    c->type[i] = wgt_tensor_dtype(t);
    c->ref[i] = wgt_broadcast_to(t, c->ndim, c->shape);
    CHECK(c->ref[i] != NULL, "%s: broadcast input %d: %s", c->name, i, wgt_last_error());
    return i;
}

static int add_step(chain *c, wgt_fused_kind kind, int op, int a, int b, int cond, wgt_dtype dtype, double p0,
                    double p1, wgt_tensor *ref) {
    int s = c->k.nsteps++, v = c->k.ninputs + s;
    wgt_fused_step *st = &c->k.steps[s];
    st->kind = kind;
    st->op = op;
    st->args[0] = a;
    st->args[1] = b;
    st->args[2] = cond;
    st->dtype = dtype;
    st->params[0] = p0;
    st->params[1] = p1;
    c->type[v] = dtype;
    c->ref[v] = ref;
    CHECK(ref != NULL, "%s: reference of step %d (kind %d, op %d): %s", c->name, s, (int)kind, op, wgt_last_error());
    return v;
}

static wgt_tensor *unary_ref(wgt_unary_op op, wgt_tensor *a, double p0, double p1) {
    switch (op) {
    case WGT_UNARY_NEG: return wgt_neg(a);
    case WGT_UNARY_ABS: return wgt_abs(a);
    case WGT_UNARY_SIGN: return wgt_sign(a);
    case WGT_UNARY_SQUARE: return wgt_square(a);
    case WGT_UNARY_SQRT: return wgt_sqrt(a);
    case WGT_UNARY_RSQRT: return wgt_rsqrt(a);
    case WGT_UNARY_RECIPROCAL: return wgt_reciprocal(a);
    case WGT_UNARY_EXP: return wgt_exp(a);
    case WGT_UNARY_EXPM1: return wgt_expm1(a);
    case WGT_UNARY_LOG: return wgt_log(a);
    case WGT_UNARY_LOG1P: return wgt_log1p(a);
    case WGT_UNARY_SIN: return wgt_sin(a);
    case WGT_UNARY_COS: return wgt_cos(a);
    case WGT_UNARY_TANH: return wgt_tanh(a);
    case WGT_UNARY_SIGMOID: return wgt_sigmoid(a);
    case WGT_UNARY_RELU: return wgt_relu(a);
    case WGT_UNARY_LEAKY_RELU: return wgt_leaky_relu(a, p0);
    case WGT_UNARY_ELU: return wgt_elu(a, p0);
    case WGT_UNARY_GELU: return wgt_gelu(a);
    case WGT_UNARY_GELU_TANH: return wgt_gelu_tanh(a);
    case WGT_UNARY_SILU: return wgt_silu(a);
    case WGT_UNARY_SOFTPLUS: return wgt_softplus(a);
    case WGT_UNARY_FLOOR: return wgt_floor(a);
    case WGT_UNARY_CEIL: return wgt_ceil(a);
    case WGT_UNARY_ROUND: return wgt_round(a);
    case WGT_UNARY_ERF: return wgt_erf(a);
    case WGT_UNARY_ISNAN: return wgt_isnan(a);
    case WGT_UNARY_ISINF: return wgt_isinf(a);
    case WGT_UNARY_CLAMP: return wgt_clamp(a, p0, p1);
    case WGT_UNARY_LOGICAL_NOT: return wgt_logical_not(a);
    case WGT_UNARY_TAN: return wgt_tan(a);
    case WGT_UNARY_ASIN: return wgt_asin(a);
    case WGT_UNARY_ACOS: return wgt_acos(a);
    case WGT_UNARY_ATAN: return wgt_atan(a);
    case WGT_UNARY_SINH: return wgt_sinh(a);
    case WGT_UNARY_COSH: return wgt_cosh(a);
    case WGT_UNARY_ASINH: return wgt_asinh(a);
    case WGT_UNARY_ACOSH: return wgt_acosh(a);
    case WGT_UNARY_ATANH: return wgt_atanh(a);
    case WGT_UNARY_LOG2: return wgt_log2(a);
    case WGT_UNARY_LOG10: return wgt_log10(a);
    case WGT_UNARY_EXP2: return wgt_exp2(a);
    case WGT_UNARY_TRUNC: return wgt_trunc(a);
    case WGT_UNARY_SIGNBIT: return wgt_signbit(a);
    case WGT_UNARY_ISFINITE: return wgt_isfinite(a);
    case WGT_UNARY_BITWISE_NOT: return wgt_bitwise_not(a);
    case WGT_UNARY_COUNT: break;
    }
    return NULL;
}

static wgt_tensor *(*const binary_ref[WGT_BINARY_COUNT])(wgt_tensor *, wgt_tensor *) = {
    wgt_add, wgt_sub, wgt_mul, wgt_div, wgt_pow, wgt_maximum, wgt_minimum, wgt_mod, wgt_atan2,
    wgt_eq, wgt_ne, wgt_lt, wgt_le, wgt_gt, wgt_ge, wgt_logical_and, wgt_logical_or, wgt_logaddexp, wgt_hypot,
    wgt_copysign, wgt_nextafter, wgt_bitwise_and, wgt_bitwise_or, wgt_bitwise_xor, wgt_bitwise_left_shift,
    wgt_bitwise_right_shift, wgt_floor_divide, wgt_logical_xor};

static int gives_u32(wgt_unary_op op) { return wgt_unary_gives_u32(op); }

/* The public predicates give bool; the kernels' u32 0/1 is compared with it cast to u32. */
static wgt_tensor *as_kernel_type(wgt_tensor *ref, wgt_dtype kernel_type) {
    if (!ref || wgt_tensor_dtype(ref) == kernel_type) return ref;
    wgt_tensor *c = wgt_cast(ref, kernel_type);
    wgt_release(ref);
    return c;
}

/* Parameters are passed as the core passes them: integer clamp bounds already integers. */
static int chain_unary(chain *c, wgt_unary_op op, int a, double p0, double p1) {
    wgt_dtype t = gives_u32(op) ? WGT_U32 : c->type[a];
    return add_step(c, WGT_FUSED_UNARY, op, a, 0, 0, t, p0, p1, as_kernel_type(unary_ref(op, c->ref[a], p0, p1), t));
}

static int chain_binary(chain *c, wgt_binary_op op, int a, int b) {
    wgt_dtype t = wgt_binary_gives_u32(op) ? WGT_U32 : c->type[a];
    return add_step(c, WGT_FUSED_BINARY, op, a, b, 0, t, 0, 0, as_kernel_type(binary_ref[op](c->ref[a], c->ref[b]), t));
}

static int chain_cast(chain *c, int a, wgt_dtype d) {
    return add_step(c, WGT_FUSED_CAST, 0, a, 0, 0, d, 0, 0, wgt_cast(c->ref[a], d));
}

static int chain_where(chain *c, int cond, int a, int b) {
    return add_step(c, WGT_FUSED_WHERE, 0, cond, a, b, c->type[a], 0, 0, wgt_where(c->ref[cond], c->ref[a], c->ref[b]));
}

static void chain_output(chain *c, int value) { c->k.output_steps[c->k.noutputs++] = value - c->k.ninputs; }

/* Makes the operands and the outputs and runs the kernel; the status of the fused call. */
static wgt_status chain_launch(chain *c) {
    wgt_backend *be = wgt_context_record(c->ctx)->backend;
    for (int i = 0; i < c->k.ninputs; i++) {
        wgt_tensor *t = c->input[i];
        int nd = wgt_tensor_ndim(t), off = c->ndim - nd;
        int64_t strides[WGT_MAX_DIMS];
        for (int d = 0; d < c->ndim; d++) /* stride 0 where t is broadcast */
            strides[d] = d < off || wgt_tensor_shape(t)[d - off] != c->shape[d] ? 0 : wgt_tensor_strides(t)[d - off];
        if (wgt_make_operand(wgt_handle_record(t), c->ndim, c->shape, strides, &c->k.inputs[i]) != WGT_OK) return wgt_last_status();
    }
    for (int o = 0; o < c->k.noutputs; o++) {
        wgt_dtype d = c->type[c->k.ninputs + c->k.output_steps[o]];
        c->out[o] = wgt_tensor_create(c->ctx, d, c->ndim, c->shape, WGT_USAGE_DEFAULT);
        if (!c->out[o] || wgt_make_output_operand(wgt_handle_record(c->out[o]), &c->k.outputs[o]) != WGT_OK) return wgt_last_status();
    }
    wgt_status st = be->fused(be, &c->k);
    if (st == WGT_OK)
        for (int o = 0; o < c->k.noutputs; o++) wgt_finish_output(wgt_handle_record(c->out[o]));
    return st;
}

/* The bytes of t, malloc'd (NULL and a failure when it cannot be read). */
static unsigned char *read_bytes(wgt_tensor *t, size_t *n) {
    *n = wgt_tensor_nbytes(t);
    unsigned char *b = malloc(*n ? *n : 1);
    if (b && wgt_tensor_read(t, b, *n) == WGT_OK) return b;
    CHECK(0, "read: %s", wgt_last_error());
    free(b);
    return NULL;
}

/* Whether got and want hold the same bits; a failure names the first element that differs. */
static int same_bits(wgt_tensor *got, wgt_tensor *want, const char *what, int index) {
    size_t ng, nw;
    unsigned char *g = read_bytes(got, &ng), *w = read_bytes(want, &nw);
    int same = g && w && ng == nw && !memcmp(g, w, ng);
    /* An f16 NaN's payload is not kept: WGSL leaves pack2x16float of NaN to the driver, and
     * NVIDIA's differs between a value packed once and one packed, unpacked and packed again. */
    if (g && w && !same && ng == nw && wgt_tensor_dtype(got) == WGT_F16) {
        same = 1;
        for (size_t i = 0; i + 2 <= ng && same; i += 2) {
            uint16_t a, b;
            memcpy(&a, g + i, 2), memcpy(&b, w + i, 2);
            same = a == b || ((a & 0x7fff) > 0x7c00 && (b & 0x7fff) > 0x7c00);
        }
    }
    if (g && w && !same) {
        size_t size = wgt_dtype_size(wgt_tensor_dtype(got)), i = 0;
        while (i + size <= ng && i + size <= nw && !memcmp(g + i, w + i, size)) i += size;
        uint32_t gv = 0, wv = 0;
        if (i + size <= ng && i + size <= nw) memcpy(&gv, g + i, size), memcpy(&wv, w + i, size);
        CHECK(0, "%s, output %d (%s): element %zu is 0x%x fused, 0x%x op by op (%zu vs %zu bytes)", what, index,
              wgt_dtype_name(wgt_tensor_dtype(got)), i / size, gv, wv, ng, nw);
    }
    free(g);
    free(w);
    return same;
}

/* Runs the chain and compares every output with its reference. */
static void chain_check(chain *c) {
    wgt_status st = chain_launch(c);
    CHECK(st == WGT_OK, "%s: fused kernel: %s", c->name, wgt_last_error());
    if (st != WGT_OK) return;
    for (int o = 0; o < c->k.noutputs; o++)
        same_bits(c->out[o], c->ref[c->k.ninputs + c->k.output_steps[o]], c->name, o);
}

static const wgt_dtype all_types[] = {WGT_F32, WGT_F16, WGT_I32, WGT_U32};
static int is_float(wgt_dtype d) { return d == WGT_F32 || d == WGT_F16; }

/* Ops that take integers too (the rest take f32 and f16 only). */
static int unary_takes(wgt_unary_op op, wgt_dtype d) {
    switch (op) {
    case WGT_UNARY_NEG: case WGT_UNARY_ABS: case WGT_UNARY_SIGN: case WGT_UNARY_SQUARE: case WGT_UNARY_RELU:
    case WGT_UNARY_FLOOR: case WGT_UNARY_CEIL: case WGT_UNARY_ROUND: case WGT_UNARY_ISNAN: case WGT_UNARY_ISINF:
    case WGT_UNARY_CLAMP: case WGT_UNARY_LOGICAL_NOT: case WGT_UNARY_TRUNC: case WGT_UNARY_ISFINITE: return 1;
    case WGT_UNARY_BITWISE_NOT: return !is_float(d);
    default: return is_float(d);
    }
}

static int binary_takes(wgt_binary_op op, wgt_dtype d) {
    switch (op) {
    case WGT_BINARY_ATAN2: case WGT_BINARY_LOGADDEXP: case WGT_BINARY_HYPOT: case WGT_BINARY_COPYSIGN:
    case WGT_BINARY_NEXTAFTER: return is_float(d);
    case WGT_BINARY_BITWISE_AND: case WGT_BINARY_BITWISE_OR: case WGT_BINARY_BITWISE_XOR: case WGT_BINARY_LEFT_SHIFT:
    case WGT_BINARY_RIGHT_SHIFT: return !is_float(d);
    default: return 1;
    }
}

static void unary_params(wgt_unary_op op, wgt_dtype d, double *p0, double *p1) {
    *p0 = *p1 = 0;
    if (op == WGT_UNARY_LEAKY_RELU) *p0 = 0.01;
    if (op == WGT_UNARY_ELU) *p0 = 1.5;
    if (op == WGT_UNARY_CLAMP) {
        *p0 = d == WGT_U32 ? 3 : d == WGT_I32 ? -3 : -1.5;
        *p1 = d == WGT_U32 ? 30 : d == WGT_I32 ? 7 : 2.25;
    }
}

/* ---- the ops ---- */

/* Two ops a kernel: op(x), op(op(x)) where op keeps the type (so an f16 result is rounded
 * before it is used again), else logical_not of it, for each of the two. */
TEST(fused_every_unary_op) {
    wgt_context *gpu = unfused_context();
    if (!gpu) return;
    static const int64_t shape[2] = {5, 37};
    for (size_t t = 0; t < 4; t++) {
        wgt_dtype d = all_types[t];
        int ops[WGT_UNARY_COUNT], nops = 0;
        for (int op = 0; op < WGT_UNARY_COUNT; op++)
            if (unary_takes((wgt_unary_op)op, d)) ops[nops++] = op;
        wgt_tensor *x = values(gpu, d, 2, shape, (uint32_t)t, 0);
        for (int i = 0; i < nops; i += 2) {
            chain c;
            char name[96];
            snprintf(name, sizeof name, "unary %d and %d on %s", ops[i], i + 1 < nops ? ops[i + 1] : -1, wgt_dtype_name(d));
            chain_begin(&c, gpu, name, 2, shape);
            int in = chain_input(&c, wgt_retain(x));
            for (int j = i; j < i + 2 && j < nops; j++) {
                wgt_unary_op op = (wgt_unary_op)ops[j];
                double p0, p1;
                unary_params(op, d, &p0, &p1);
                int once = chain_unary(&c, op, in, p0, p1);
                int twice = gives_u32(op) ? chain_unary(&c, WGT_UNARY_LOGICAL_NOT, once, 0, 0)
                                          : chain_unary(&c, op, once, p0, p1);
                chain_output(&c, once);
                chain_output(&c, twice);
            }
            chain_check(&c);
            wgt_release(c.input[0]);
            chain_end(&c);
        }
        wgt_release(x);
    }
    wgt_context_release(gpu);
}

/* Four ops a kernel, each taking the previous result where the types allow. */
TEST(fused_every_binary_op) {
    wgt_context *gpu = unfused_context();
    if (!gpu) return;
    static const int64_t shape[2] = {3, 41};
    for (size_t t = 0; t < 4; t++) {
        wgt_dtype d = all_types[t];
        int ops[WGT_BINARY_COUNT], nops = 0;
        for (int op = 0; op < WGT_BINARY_COUNT; op++)
            if (binary_takes((wgt_binary_op)op, d)) ops[nops++] = op;
        wgt_tensor *a = values(gpu, d, 2, shape, 10 + (uint32_t)t, 0), *b = values(gpu, d, 2, shape, 20 + (uint32_t)t, 0);
        for (int i = 0; i < nops; i += 4) {
            chain c;
            char name[64];
            snprintf(name, sizeof name, "binary ops from %d on %s", ops[i], wgt_dtype_name(d));
            chain_begin(&c, gpu, name, 2, shape);
            int va = chain_input(&c, wgt_retain(a)), vb = chain_input(&c, wgt_retain(b)), prev = va;
            for (int j = i; j < i + 4 && j < nops; j++) {
                int r = chain_binary(&c, (wgt_binary_op)ops[j], prev, vb);
                chain_output(&c, r);
                if (c.type[r] == d) prev = r;
            }
            chain_check(&c);
            wgt_release(c.input[0]), wgt_release(c.input[1]);
            chain_end(&c);
        }
        wgt_release(a), wgt_release(b);
    }
    /* Logical ops take operands of different types. */
    chain c;
    chain_begin(&c, gpu, "logical ops on mixed types", 2, shape);
    int in[4];
    for (int t = 0; t < 4; t++) in[t] = chain_input(&c, values(gpu, all_types[t], 2, shape, 30 + (uint32_t)t, 0));
    chain_output(&c, chain_binary(&c, WGT_BINARY_LOGICAL_AND, in[0], in[1]));
    chain_output(&c, chain_binary(&c, WGT_BINARY_LOGICAL_OR, in[1], in[2]));
    chain_output(&c, chain_binary(&c, WGT_BINARY_LOGICAL_AND, in[2], in[3]));
    chain_output(&c, chain_binary(&c, WGT_BINARY_LOGICAL_OR, in[3], in[0]));
    chain_check(&c);
    for (int t = 0; t < 4; t++) wgt_release(c.input[t]);
    chain_end(&c);
    wgt_context_release(gpu);
}

/* Every pair of types, same-type casts included, on values that saturate, are NaN, overflow
 * f16 or lose bits; then a round trip through all four types in one chain. */
TEST(fused_all_casts) {
    wgt_context *gpu = unfused_context();
    if (!gpu) return;
    static const int64_t shape[1] = {301};
    for (size_t t = 0; t < 4; t++) {
        for (int wide = 0; wide < 2; wide++) {
            chain c;
            char name[64];
            snprintf(name, sizeof name, "casts from %s%s", wgt_dtype_name(all_types[t]), wide ? " (wide)" : "");
            chain_begin(&c, gpu, name, 1, shape);
            int in = chain_input(&c, values(gpu, all_types[t], 1, shape, 40 + (uint32_t)t, wide));
            for (size_t u = 0; u < 4; u++) chain_output(&c, chain_cast(&c, in, all_types[u]));
            chain_check(&c);
            wgt_release(c.input[0]);
            chain_end(&c);
        }
    }
    chain c;
    chain_begin(&c, gpu, "cast round trip", 1, shape);
    int v = chain_input(&c, values(gpu, WGT_F32, 1, shape, 50, 0));
    v = chain_cast(&c, v, WGT_F16);
    chain_output(&c, v);
    v = chain_cast(&c, v, WGT_I32);
    chain_output(&c, v);
    v = chain_cast(&c, v, WGT_U32);
    chain_output(&c, v);
    chain_output(&c, chain_cast(&c, v, WGT_F32));
    chain_check(&c);
    wgt_release(c.input[0]);
    chain_end(&c);
    wgt_context_release(gpu);
}

/* Conditions of every type (NaN and -0 included) choosing between values of every type,
 * bits passed through unchanged; a broadcast condition; where on where. */
TEST(fused_where) {
    wgt_context *gpu = unfused_context();
    if (!gpu) return;
    static const int64_t shape[2] = {9, 13}, row[1] = {13};
    for (size_t t = 0; t < 4; t++) {
        for (size_t pair = 0; pair < 2; pair++) { /* value types f32 and f16, then i32 and u32 */
            chain c;
            char name[64];
            snprintf(name, sizeof name, "where on %s condition, values pair %zu", wgt_dtype_name(all_types[t]), pair);
            chain_begin(&c, gpu, name, 2, shape);
            int cond = chain_input(&c, values(gpu, all_types[t], 2, shape, 60 + (uint32_t)t, 0));
            int row_cond = chain_input(&c, values(gpu, all_types[t], 1, row, 70 + (uint32_t)t, 0));
            int a[2], b[2];
            for (size_t u = 0; u < 2; u++) {
                wgt_dtype d = all_types[2 * pair + u];
                a[u] = chain_input(&c, values(gpu, d, 2, shape, 80 + (uint32_t)(2 * pair + u), 1));
                b[u] = chain_input(&c, values(gpu, d, 2, shape, 90 + (uint32_t)(2 * pair + u), 1));
            }
            for (size_t u = 0; u < 2; u++) {
                int r = chain_where(&c, u ? row_cond : cond, a[u], b[u]);
                chain_output(&c, chain_where(&c, cond, b[u], r));
            }
            chain_check(&c);
            for (int i = 0; i < c.k.ninputs; i++) wgt_release(c.input[i]);
            chain_end(&c);
        }
    }
    wgt_context_release(gpu);
}

/* ---- numerics across steps ---- */

/* a * b + c in f32: a driver may contract the two steps into a fused multiply-add, which the
 * ops one by one cannot. The data has teeth: for most elements fmaf differs from the
 * product rounded first. */
TEST(fused_mul_add_is_not_contracted) {
    wgt_context *gpu = unfused_context();
    if (!gpu) return;
    static const int64_t shape[1] = {4099};
    wgt_tensor *a = wgt_rand_uniform(gpu, WGT_F32, 1, shape, -1, 1, 1);
    wgt_tensor *b = wgt_rand_uniform(gpu, WGT_F32, 1, shape, -1, 1, 2);
    wgt_tensor *cc = wgt_rand_uniform(gpu, WGT_F32, 1, shape, -1, 1, 3);
    chain c;
    chain_begin(&c, gpu, "a * b + c", 1, shape);
    int va = chain_input(&c, a), vb = chain_input(&c, b), vc = chain_input(&c, cc);
    int sum = chain_binary(&c, WGT_BINARY_ADD, chain_binary(&c, WGT_BINARY_MUL, va, vb), vc);
    chain_output(&c, sum);
    chain_output(&c, chain_binary(&c, WGT_BINARY_SUB, chain_binary(&c, WGT_BINARY_MUL, va, vc), sum));
    chain_check(&c);
    const float *ha = wgt_tensor_data(a), *hb = wgt_tensor_data(b), *hc = wgt_tensor_data(cc);
    int differ = 0;
    for (int64_t i = 0; ha && hb && hc && i < shape[0]; i++) {
        volatile float p = ha[i] * hb[i]; /* rounded on its own, as the ops do */
        differ += fmaf(ha[i], hb[i], hc[i]) != p + hc[i];
    }
    CHECK(differ > shape[0] / 20, "only %d of %lld elements tell a contracted a * b + c apart", differ,
          (long long)shape[0]);
    wgt_release(a), wgt_release(b), wgt_release(cc);
    chain_end(&c);
    wgt_context_release(gpu);
}

/* f16 steps round to f16 before the next step uses them: the fused result equals the f16 ops
 * one by one, and (so the test can fail) differs from the same chain computed in f32 and
 * rounded once at the end. */
TEST(fused_f16_chain_rounds_between_steps) {
    wgt_context *gpu = unfused_context();
    if (!gpu) return;
    static const int64_t shape[2] = {7, 129};
    wgt_tensor *a = wgt_rand_uniform(gpu, WGT_F16, 2, shape, -4, 4, 5);
    wgt_tensor *b = wgt_rand_uniform(gpu, WGT_F16, 2, shape, -4, 4, 6);
    wgt_tensor *d = wgt_rand_uniform(gpu, WGT_F16, 2, shape, -4, 4, 7);
    chain c;
    chain_begin(&c, gpu, "f16 chain", 2, shape);
    int va = chain_input(&c, a), vb = chain_input(&c, b), vd = chain_input(&c, d);
    int prod = chain_binary(&c, WGT_BINARY_MUL, va, vb);
    int sum = chain_binary(&c, WGT_BINARY_ADD, prod, vd);
    int e = chain_unary(&c, WGT_UNARY_EXP, chain_binary(&c, WGT_BINARY_DIV, sum, vb), 0, 0);
    int t = chain_unary(&c, WGT_UNARY_TANH, chain_binary(&c, WGT_BINARY_SUB, e, va), 0, 0);
    chain_output(&c, sum);
    chain_output(&c, e);
    chain_output(&c, t);
    chain_output(&c, chain_cast(&c, chain_binary(&c, WGT_BINARY_MUL, t, sum), WGT_F32));
    chain_check(&c);
    /* The same a * b + d in f32, rounded to f16 once. */
    wgt_tensor *a32 = wgt_cast(a, WGT_F32), *b32 = wgt_cast(b, WGT_F32), *d32 = wgt_cast(d, WGT_F32);
    wgt_tensor *p32 = wgt_mul(a32, b32), *s32 = wgt_add(p32, d32), *once = wgt_cast(s32, WGT_F16);
    size_t n1, n2;
    unsigned char *fused = c.out[0] ? read_bytes(c.out[0], &n1) : NULL, *rounded_once = once ? read_bytes(once, &n2) : NULL;
    int differ = 0;
    for (size_t i = 0; fused && rounded_once && i + 2 <= n1 && n1 == n2; i += 2) differ += memcmp(fused + i, rounded_once + i, 2) != 0;
    CHECK(differ > 0, "no element of a * b + d tells rounding between the steps apart");
    free(fused), free(rounded_once);
    wgt_release(a32), wgt_release(b32), wgt_release(d32), wgt_release(p32), wgt_release(s32), wgt_release(once);
    wgt_release(a), wgt_release(b), wgt_release(d);
    chain_end(&c);
    wgt_context_release(gpu);
}

/* Integer chains wrap, divide and take mod by zero, and compare, as the ops do. */
TEST(fused_integer_chain) {
    wgt_context *gpu = unfused_context();
    if (!gpu) return;
    static const int64_t shape[2] = {11, 23};
    for (int t = 2; t < 4; t++) {
        wgt_dtype d = all_types[t];
        chain c;
        chain_begin(&c, gpu, t == 2 ? "i32 chain" : "u32 chain", 2, shape);
        int a = chain_input(&c, values(gpu, d, 2, shape, 100 + (uint32_t)t, 1));
        int b = chain_input(&c, values(gpu, d, 2, shape, 110 + (uint32_t)t, 0));
        int sq = chain_unary(&c, WGT_UNARY_SQUARE, a, 0, 0);
        int q = chain_binary(&c, WGT_BINARY_DIV, sq, b);
        int m = chain_binary(&c, WGT_BINARY_MOD, chain_binary(&c, WGT_BINARY_SUB, q, a), b);
        int p = chain_binary(&c, WGT_BINARY_POW, chain_unary(&c, WGT_UNARY_NEG, m, 0, 0), b);
        int mx = chain_binary(&c, WGT_BINARY_MAXIMUM, chain_unary(&c, WGT_UNARY_ABS, p, 0, 0), a);
        int cl = chain_unary(&c, WGT_UNARY_CLAMP, mx, t == 2 ? -100 : 5, 1000);
        chain_output(&c, q);
        chain_output(&c, m);
        chain_output(&c, cl);
        chain_output(&c, chain_binary(&c, WGT_BINARY_LT, cl, chain_unary(&c, WGT_UNARY_SIGN, p, 0, 0)));
        chain_check(&c);
        wgt_release(c.input[0]), wgt_release(c.input[1]);
        chain_end(&c);
    }
    wgt_context_release(gpu);
}

/* ---- operands ---- */

/* Transposed, sliced with negative steps, offset, broadcast and strided inputs in one chain;
 * rank 8 with a broadcast dimension in the middle. */
TEST(fused_strided_and_broadcast_inputs) {
    wgt_context *gpu = unfused_context();
    if (!gpu) return;
    static const int64_t shape[3] = {4, 6, 5}, base_shape[3] = {6, 4, 5}, big[3] = {9, 7, 12}, col[2] = {6, 1};
    wgt_tensor *base = values(gpu, WGT_F32, 3, base_shape, 120, 0);
    wgt_tensor *transposed = wgt_transpose(base, 0, 1);
    wgt_tensor *bigger = values(gpu, WGT_F16, 3, big, 121, 0);
    wgt_tensor *s0 = wgt_slice(bigger, 0, 8, 0, -2); /* 4 rows, backwards */
    wgt_tensor *s1 = s0 ? wgt_slice(s0, 1, 1, 7, 1) : NULL;
    wgt_tensor *stepped = s1 ? wgt_slice(s1, 2, 11, 1, -2) : NULL; /* [4, 6, 5], negative strides, an offset */
    wgt_tensor *column = values(gpu, WGT_F32, 2, col, 122, 0);
    wgt_tensor *scalar = values(gpu, WGT_I32, 0, NULL, 123, 0);
    chain c;
    chain_begin(&c, gpu, "strided inputs", 3, shape);
    int vt = chain_input(&c, transposed), vs = chain_input(&c, stepped), vc = chain_input(&c, column);
    int vk = chain_input(&c, scalar);
    int sum = chain_binary(&c, WGT_BINARY_ADD, vt, chain_cast(&c, vs, WGT_F32));
    int prod = chain_binary(&c, WGT_BINARY_MUL, sum, vc);
    int scaled = chain_binary(&c, WGT_BINARY_MUL, prod, chain_cast(&c, vk, WGT_F32));
    chain_output(&c, scaled);
    chain_output(&c, chain_cast(&c, scaled, WGT_F16));
    chain_output(&c, chain_binary(&c, WGT_BINARY_GT, vs, chain_cast(&c, vc, WGT_F16)));
    chain_check(&c);
    chain_end(&c);
    wgt_release(base), wgt_release(transposed), wgt_release(bigger), wgt_release(s0), wgt_release(s1);
    wgt_release(stepped), wgt_release(column), wgt_release(scalar);

    static const int64_t shape8[8] = {2, 3, 1, 2, 3, 2, 1, 3}, part[8] = {2, 3, 1, 1, 3, 2, 1, 3};
    chain_begin(&c, gpu, "rank 8", 8, shape8);
    int x = chain_input(&c, values(gpu, WGT_F32, 8, shape8, 124, 0));
    int y = chain_input(&c, values(gpu, WGT_F32, 8, part, 125, 0));
    chain_output(&c, chain_binary(&c, WGT_BINARY_ATAN2, x, y));
    chain_check(&c);
    wgt_release(c.input[0]), wgt_release(c.input[1]);
    chain_end(&c);
    wgt_context_release(gpu);
}

/* Rank-0 chains, and odd sizes with f16 outputs, whose last word holds one element. */
TEST(fused_rank0_and_odd_sizes) {
    wgt_context *gpu = unfused_context();
    if (!gpu) return;
    chain c;
    chain_begin(&c, gpu, "rank 0", 0, NULL);
    int a = chain_input(&c, values(gpu, WGT_F16, 0, NULL, 130, 0));
    int b = chain_input(&c, values(gpu, WGT_F32, 0, NULL, 131, 0));
    int s = chain_binary(&c, WGT_BINARY_ADD, chain_cast(&c, a, WGT_F32), b);
    chain_output(&c, s);
    chain_output(&c, chain_cast(&c, s, WGT_F16));
    chain_check(&c);
    wgt_release(c.input[0]), wgt_release(c.input[1]);
    chain_end(&c);
    static const int64_t sizes[] = {1, 2, 3, 7, 255, 257, 511, 513, 1023};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        char name[64];
        snprintf(name, sizeof name, "odd size %lld", (long long)sizes[i]);
        chain_begin(&c, gpu, name, 1, &sizes[i]);
        int x = chain_input(&c, values(gpu, WGT_F16, 1, &sizes[i], 140 + (uint32_t)i, 0));
        int y = chain_input(&c, values(gpu, WGT_F32, 0, NULL, 150 + (uint32_t)i, 0));
        int m = chain_binary(&c, WGT_BINARY_MUL, x, chain_cast(&c, y, WGT_F16));
        chain_output(&c, m);
        chain_output(&c, chain_cast(&c, m, WGT_F32));
        chain_output(&c, chain_unary(&c, WGT_UNARY_ISNAN, m, 0, 0));
        chain_check(&c);
        wgt_release(c.input[0]), wgt_release(c.input[1]);
        chain_end(&c);
    }
    wgt_context_release(gpu);
}

/* More elements than 65535 workgroups of 256 cover: the launch takes a 2-D grid. */
TEST(fused_beyond_65535_workgroups) {
    wgt_context *gpu = unfused_context();
    if (!gpu) return;
    int64_t n = 65535ll * 256 + 3 * 256 + 17;
    wgt_tensor *idx = wgt_arange(gpu, WGT_U32, 0, (double)n, 1);
    wgt_tensor *k = values(gpu, WGT_U32, 0, NULL, 160, 1);
    chain c;
    chain_begin(&c, gpu, "2-D grid", 1, &n);
    int vi = chain_input(&c, idx), vk = chain_input(&c, k);
    chain_output(&c, chain_binary(&c, WGT_BINARY_MUL, chain_binary(&c, WGT_BINARY_ADD, vi, vk), vk));
    chain_check(&c);
    wgt_release(idx), wgt_release(k);
    chain_end(&c);
    wgt_context_release(gpu);
}

/* Four outputs of four types, one of them also used by a later step, two from one step. */
TEST(fused_multiple_outputs) {
    wgt_context *gpu = unfused_context();
    if (!gpu) return;
    static const int64_t shape[2] = {17, 9};
    chain c;
    chain_begin(&c, gpu, "four outputs", 2, shape);
    int x = chain_input(&c, values(gpu, WGT_F32, 2, shape, 170, 0));
    int e = chain_unary(&c, WGT_UNARY_SIGMOID, x, 0, 0);
    int h = chain_cast(&c, e, WGT_F16);
    int i = chain_cast(&c, chain_binary(&c, WGT_BINARY_MUL, x, e), WGT_I32);
    chain_output(&c, h);
    chain_output(&c, e);
    chain_output(&c, chain_binary(&c, WGT_BINARY_GE, h, chain_unary(&c, WGT_UNARY_NEG, h, 0, 0)));
    chain_output(&c, i);
    chain_check(&c);
    wgt_release(c.input[0]);
    chain_end(&c);
    chain_begin(&c, gpu, "one step, two outputs", 2, shape);
    x = chain_input(&c, values(gpu, WGT_I32, 2, shape, 171, 0));
    e = chain_unary(&c, WGT_UNARY_ABS, x, 0, 0);
    chain_output(&c, e);
    chain_output(&c, e);
    chain_check(&c);
    wgt_release(c.input[0]);
    chain_end(&c);
    wgt_context_release(gpu);
}

/* As many inputs as the kernel takes, of every type and layout, and as many buffers as the
 * device allows. */
TEST(fused_max_inputs) {
    wgt_context *gpu = unfused_context();
    if (!gpu) return;
    int max = wgt_context_record(gpu)->backend->max_fused_buffers;
    CHECK(max >= 4 && max <= WGT_FUSED_MAX_INPUTS + WGT_FUSED_MAX_OUTPUTS, "max_fused_buffers %d", max);
    static const int64_t shape[2] = {6, 10}, row[1] = {10};
    int nin = max - 1 < WGT_FUSED_MAX_INPUTS ? max - 1 : WGT_FUSED_MAX_INPUTS;
    chain c;
    chain_begin(&c, gpu, "max inputs", 2, shape);
    int acc = -1;
    for (int i = 0; i < nin; i++) {
        wgt_dtype d = all_types[i % 4];
        chain_input(&c, i % 3 == 2 ? values(gpu, d, 1, row, 180 + (uint32_t)i, 0)
                                   : values(gpu, d, 2, shape, 180 + (uint32_t)i, 0));
    }
    for (int i = 0; i < nin; i++) {
        int f = c.type[i] == WGT_F32 ? i : chain_cast(&c, i, WGT_F32);
        acc = acc < 0 ? f : chain_binary(&c, WGT_BINARY_ADD, acc, f);
    }
    chain_output(&c, acc);
    for (int o = 1; o < max - nin && o < WGT_FUSED_MAX_OUTPUTS; o++)
        chain_output(&c, chain_cast(&c, acc, all_types[o % 4]));
    CHECK(c.k.ninputs + c.k.noutputs == max, "%d inputs and %d outputs for %d buffers", c.k.ninputs, c.k.noutputs, max);
    chain_check(&c);
    for (int i = 0; i < nin; i++) wgt_release(c.input[i]);
    chain_end(&c);
    wgt_context_release(gpu);
}

/* Kernels that differ only in wiring, types or parameters must not share a result: the same
 * description twice reuses its pipeline with new parameters, strides and data. */
TEST(fused_kernels_are_told_apart) {
    wgt_context *gpu = unfused_context();
    if (!gpu) return;
    static const int64_t shape[2] = {5, 8}, flipped[2] = {8, 5};
    for (int round = 0; round < 2; round++) {
        wgt_tensor *a = values(gpu, WGT_F32, 2, shape, 190 + (uint32_t)round, 0);
        wgt_tensor *base = values(gpu, WGT_F32, 2, flipped, 192 + (uint32_t)round, 0);
        wgt_tensor *b = round ? wgt_transpose(base, 0, 1) : wgt_reshape(base, 2, shape);
        for (int swap = 0; swap < 2; swap++) {
            chain c;
            chain_begin(&c, gpu, swap ? "b - a" : "a - b", 2, shape);
            int va = chain_input(&c, wgt_retain(a)), vb = chain_input(&c, wgt_retain(b));
            int diff = swap ? chain_binary(&c, WGT_BINARY_SUB, vb, va) : chain_binary(&c, WGT_BINARY_SUB, va, vb);
            chain_output(&c, chain_unary(&c, WGT_UNARY_LEAKY_RELU, diff, round ? 0.25 : 0.5, 0));
            chain_output(&c, chain_unary(&c, WGT_UNARY_CLAMP, diff, -1 - round, 1 + swap));
            chain_check(&c);
            wgt_release(c.input[0]), wgt_release(c.input[1]);
            chain_end(&c);
        }
        wgt_release(a), wgt_release(base), wgt_release(b);
    }
    wgt_context_release(gpu);
}

/* ---- malformed descriptions ---- */

static void expect_internal(wgt_context *gpu, const wgt_fused_kernel *k, const char *what) {
    wgt_clear_error();
    wgt_status st = wgt_context_record(gpu)->backend->fused(wgt_context_record(gpu)->backend, k);
    CHECK(st == WGT_ERR_INTERNAL && wgt_last_status() == WGT_ERR_INTERNAL && test_contains(wgt_last_error(), "fused"),
          "%s: %s (%s)", what, wgt_status_name(st), wgt_last_error());
    wgt_clear_error();
}

TEST(fused_malformed_descriptions_are_errors) {
    wgt_context *gpu = unfused_context();
    if (!gpu) return;
    static const int64_t shape[1] = {16}, other[1] = {15};
    chain c;
    chain_begin(&c, gpu, "a valid kernel", 1, shape);
    int a = chain_input(&c, values(gpu, WGT_F32, 1, shape, 200, 0));
    int b = chain_input(&c, values(gpu, WGT_I32, 1, shape, 201, 0));
    int cb = chain_cast(&c, b, WGT_F32);
    chain_output(&c, chain_binary(&c, WGT_BINARY_ADD, a, cb));
    CHECK(chain_launch(&c) == WGT_OK, "the valid kernel: %s", wgt_last_error());
    wgt_tensor *i32_out = wgt_tensor_create(gpu, WGT_I32, 1, shape, WGT_USAGE_DEFAULT);
    wgt_tensor *short_out = wgt_tensor_create(gpu, WGT_F32, 1, other, WGT_USAGE_DEFAULT);
    wgt_operand i32_op, short_op;
    CHECK(wgt_make_output_operand(wgt_handle_record(i32_out), &i32_op) == WGT_OK &&
              wgt_make_output_operand(wgt_handle_record(short_out), &short_op) == WGT_OK,
          "outputs: %s", wgt_last_error());
    const wgt_fused_kernel good = c.k;
    wgt_fused_kernel k;
    expect_internal(gpu, NULL, "no kernel");
#define BAD(what, change) do { k = good; change; expect_internal(gpu, &k, what); } while (0)
    BAD("no inputs", k.ninputs = 0);
    BAD("too many inputs", k.ninputs = WGT_FUSED_MAX_INPUTS + 1);
    BAD("no steps", k.nsteps = 0);
    BAD("too many steps", k.nsteps = WGT_FUSED_MAX_STEPS + 1);
    BAD("no outputs", k.noutputs = 0);
    BAD("too many outputs", k.noutputs = WGT_FUSED_MAX_OUTPUTS + 1);
    BAD("more buffers than the device binds", k.ninputs = WGT_FUSED_MAX_INPUTS; k.noutputs = WGT_FUSED_MAX_OUTPUTS;
        for (int i = 0; i < k.ninputs; i++) k.inputs[i] = good.inputs[0];
        for (int o = 0; o < k.noutputs; o++) k.outputs[o] = good.outputs[0]);
    BAD("argument is a later value", k.steps[0].args[0] = 3);
    BAD("argument is the step itself", k.steps[1].args[0] = 3);
    BAD("negative argument", k.steps[1].args[1] = -1);
    BAD("unknown kind", k.steps[1].kind = (wgt_fused_kind)7);
    BAD("unknown binary op", k.steps[1].op = WGT_BINARY_COUNT);
    BAD("unknown unary op", k.steps[0].kind = WGT_FUSED_UNARY; k.steps[0].op = -1);
    BAD("unknown type", k.steps[0].dtype = (wgt_dtype)0);
    BAD("operand types differ", k.steps[1].args[1] = 1);
    BAD("wrong result type", k.steps[1].dtype = WGT_F16; k.outputs[0].dtype = WGT_F16);
    BAD("float-only op on i32", k.steps[0].kind = WGT_FUSED_UNARY; k.steps[0].op = WGT_UNARY_SQRT;
        k.steps[0].dtype = WGT_I32);
    BAD("atan2 on i32", k.steps[1].op = WGT_BINARY_ATAN2; k.steps[1].args[0] = 1; k.steps[1].args[1] = 1;
        k.steps[1].dtype = WGT_I32; k.outputs[0] = i32_op);
    BAD("comparison not giving u32", k.steps[1].op = WGT_BINARY_LT);
    BAD("where values of two types", k.steps[1].kind = WGT_FUSED_WHERE; k.steps[1].args[0] = 1;
        k.steps[1].args[1] = 0; k.steps[1].args[2] = 1);
    BAD("output step out of range", k.output_steps[0] = 2);
    BAD("output type is not its step's", k.outputs[0] = i32_op);
    BAD("output shape differs", k.outputs[0] = short_op);
    BAD("input shape differs", k.inputs[1].shape[0] = 15);
    BAD("input rank differs", k.inputs[1].ndim = 2);
    BAD("input type unknown", k.inputs[0].dtype = (wgt_dtype)99);
    BAD("input without a buffer", k.inputs[0].buffer = NULL);
    BAD("output is an input's buffer", k.outputs[0].buffer = k.inputs[1].buffer);
    BAD("two outputs in one buffer", k.noutputs = 2; k.output_steps[1] = 0; k.outputs[1] = k.outputs[0];
        k.outputs[1].dtype = WGT_F32);
#undef BAD
    /* The context works on after all of that, with the same kernel. */
    wgt_release(c.out[0]);
    c.out[0] = NULL;
    c.k.noutputs = 1;
    chain_check(&c);
    wgt_release(i32_out), wgt_release(short_out);
    wgt_release(c.input[0]), wgt_release(c.input[1]);
    chain_end(&c);
    wgt_context_release(gpu);
}

/* One value as two arguments of a step: the ops one by one load it twice, so the fused
 * kernel must not let the compiler fold x - x to 0 or x / x to 1 (wrong for infinities and
 * NaN), whether the value is an input or a step's result, f32 or f16. */
TEST(fused_repeated_arguments) {
    wgt_context *gpu = unfused_context();
    if (!gpu) return;
    static const int64_t shape[1] = {97};
    static const wgt_binary_op ops[] = {WGT_BINARY_SUB, WGT_BINARY_DIV, WGT_BINARY_MOD, WGT_BINARY_POW,
                                        WGT_BINARY_ATAN2, WGT_BINARY_NE, WGT_BINARY_EQ, WGT_BINARY_GE};
    for (int t = 0; t < 2; t++) {
        for (size_t i = 0; i < sizeof ops / sizeof *ops; i += 2) {
            chain c;
            char name[64];
            snprintf(name, sizeof name, "repeated arguments, ops from %d, %s", (int)ops[i], wgt_dtype_name(all_types[t]));
            chain_begin(&c, gpu, name, 1, shape);
            int x = chain_input(&c, values(gpu, all_types[t], 1, shape, 210 + (uint32_t)t, 0));
            int e = chain_unary(&c, WGT_UNARY_EXP, x, 0, 0);
            for (size_t j = i; j < i + 2; j++) {
                chain_output(&c, chain_binary(&c, ops[j], x, x));
                chain_output(&c, chain_binary(&c, ops[j], e, e));
            }
            chain_check(&c);
            wgt_release(c.input[0]);
            chain_end(&c);
        }
        chain c;
        chain_begin(&c, gpu, "where with repeated arguments", 1, shape);
        int x = chain_input(&c, values(gpu, all_types[t], 1, shape, 220 + (uint32_t)t, 0));
        int d = chain_binary(&c, WGT_BINARY_SUB, x, x);
        chain_output(&c, chain_where(&c, d, d, x));
        chain_output(&c, chain_where(&c, x, d, d));
        chain_check(&c);
        wgt_release(c.input[0]);
        chain_end(&c);
    }
    wgt_context_release(gpu);
}

/* An output stored into one of the kernel's own inputs (an optimizer's update in place): the
 * input is read through the output's binding, each element before it is written, and the
 * result is what the ops give one by one on the values from before. 153 elements: the vector
 * kernel and the tail. Only an input read element for element, of the output's 4-byte type,
 * may share the output's buffer. */
TEST(fused_output_in_place_of_an_input) {
    wgt_context *gpu = unfused_context();
    if (!gpu) return;
    static const int64_t shape[2] = {17, 9}, row[1] = {9};
    wgt_backend *be = wgt_context_record(gpu)->backend;
    for (int ty = 0; ty < 2; ty++) {
        wgt_dtype d = ty ? WGT_I32 : WGT_F32;
        chain c;
        chain_begin(&c, gpu, ty ? "i32 in place" : "f32 in place", 2, shape);
        wgt_tensor *t = values(gpu, d, 2, shape, 180 + ty, 0);
        int x = chain_input(&c, t);
        int y = chain_input(&c, values(gpu, d, 1, row, 190 + ty, 0)); /* a row added to every row */
        int s = chain_binary(&c, WGT_BINARY_ADD, chain_binary(&c, WGT_BINARY_MUL, x, y), x);
        chain_output(&c, s);
        size_t nw = 0, ng = 0;
        unsigned char *want = read_bytes(c.ref[s], &nw); /* computed before t changes */
        for (int i = 0; i < 2; i++) {
            int64_t strides[2] = {i ? 0 : 9, 1};
            CHECK(wgt_make_operand(wgt_handle_record(c.input[i]), 2, shape, strides, &c.k.inputs[i]) == WGT_OK, "%s",
                  wgt_last_error());
        }
        c.k.outputs[0] = c.k.inputs[0]; /* t itself, resident with its values */
        /* The broadcast row cannot be the output's storage: other invocations read it. */
        wgt_fused_kernel k = c.k;
        k.outputs[0].buffer = k.inputs[1].buffer;
        expect_internal(gpu, &k, "a broadcast input in the output's buffer");
        CHECK(be->fused(be, &c.k) == WGT_OK, "%s: %s", c.name, wgt_last_error());
        wgt_finish_output(wgt_handle_record(t));
        unsigned char *got = read_bytes(t, &ng);
        CHECK(want && got && nw == ng && !memcmp(want, got, nw), "%s: the result stored in place differs", c.name);
        free(want), free(got);
        wgt_release(c.input[0]), wgt_release(c.input[1]);
        chain_end(&c);
    }
    wgt_context_release(gpu);
}
