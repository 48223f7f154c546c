/*
 * Elementwise kernels on WebGPU: binary ops and the strided copy. One WGSL template per
 * arity; a pipeline per (op, dtype). f16 is stored packed two to a u32 and computed in
 * f32, so it works on devices without shader-f16.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webgpu_internal.h"

typedef struct {
    uint32_t numel, ndim, dense, pad;
    uint32_t offsets[4];
    uint32_t shape[8];
    int32_t strides[2][8];
} elementwise_params;

typedef struct {
    const char *template_name;
    wgt_dtype dtype;
    const char *op_expr;
} kernel_spec;

static const char *compute_type(wgt_dtype d) {
    return d == WGT_I32 ? "i32" : d == WGT_U32 ? "u32" : "f32";
}

static char *build_elementwise(wgt_webgpu *w, const void *arg) {
    (void)w;
    const kernel_spec *k = arg;
    const char *common = wgt_wgsl_source("elementwise_common"), *body = wgt_wgsl_source(k->template_name);
    if (!common || !body) return NULL;
    int packed = k->dtype == WGT_F16;
    int binary = !strcmp(k->template_name, "binary");
    const char *store = packed ? "u32" : compute_type(k->dtype);
    const char *load0 = packed ? "unpack2x16float(in0[i >> 1u])[i & 1u]" : "in0[i]";
    const char *load1 = packed ? "unpack2x16float(in1[i >> 1u])[i & 1u]" : "in1[i]";
    char write_out[256];
    snprintf(write_out, sizeof write_out, "fn write_out(word: u32, v0: %s, v1: %s) { %s }", compute_type(k->dtype),
             compute_type(k->dtype), packed ? "out[word] = pack2x16float(vec2<f32>(v0, v1));" : "out[word] = v0;");
    size_t n = strlen(common) + strlen(body) + 2;
    char *joined = malloc(n);
    if (!joined) return NULL;
    snprintf(joined, n, "%s\n%s", common, body);
    const char *pairs[] = {"PARAMS_BINDING", binary ? "3" : "2", "ELEMS", packed ? "2u" : "1u", "STORE", store,
                           "T", compute_type(k->dtype), "LOAD0", load0, "LOAD1", load1, "OP", k->op_expr,
                           "WRITE_OUT", write_out, NULL};
    char *wgsl = wgt_wgsl_expand(joined, pairs);
    free(joined);
    return wgsl;
}

/* Fills the shared parameter block; inputs are already broadcast to out's shape. */
static void fill_params(elementwise_params *p, const wgt_operand *out, const wgt_operand *const *in, int nin) {
    memset(p, 0, sizeof *p);
    int64_t numel = 1;
    for (int d = 0; d < out->ndim; d++) numel *= out->shape[d];
    p->numel = (uint32_t)numel;
    p->ndim = (uint32_t)out->ndim;
    for (int d = 0; d < out->ndim; d++) p->shape[d] = (uint32_t)out->shape[d];
    int64_t dense[WGT_MAX_DIMS];
    int64_t s = 1;
    for (int d = out->ndim - 1; d >= 0; d--) {
        dense[d] = s;
        s *= out->shape[d];
    }
    for (int k = 0; k < nin; k++) {
        int is_dense = 1;
        for (int d = 0; d < out->ndim; d++) {
            p->strides[k][d] = (int32_t)in[k]->strides[d];
            if (out->shape[d] != 1 && in[k]->strides[d] != dense[d]) is_dense = 0;
        }
        p->offsets[k] = (uint32_t)in[k]->offset;
        if (is_dense) p->dense |= 1u << k;
    }
}

static wgt_status run(wgt_backend *be, const char *template_name, const char *op_name, const char *op_expr,
                      const wgt_operand *out, const wgt_operand *const *in, int nin) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    char key[96];
    snprintf(key, sizeof key, "%s:%s:%s", template_name, op_name, wgt_dtype_name(out->dtype));
    kernel_spec spec = {template_name, out->dtype, op_expr};
    wgt_pipeline *pl;
    wgt_status st = wgt_wgpu_pipeline(w, key, nin + 1, build_elementwise, &spec, &pl);
    if (st != WGT_OK) return st;
    elementwise_params params;
    fill_params(&params, out, in, nin);
    uint64_t per_invocation = out->dtype == WGT_F16 ? 2 : 1;
    uint64_t invocations = (params.numel + per_invocation - 1) / per_invocation;
    wgt_buffer *buffers[3] = {in[0]->buffer, nin > 1 ? in[1]->buffer : out->buffer, out->buffer};
    return wgt_wgpu_dispatch(w, pl, buffers, &params, sizeof params, (invocations + 255) / 256);
}

wgt_status wgt_wgpu_binary(wgt_backend *be, wgt_binary_op op, const wgt_operand *out, const wgt_operand *a,
                           const wgt_operand *b) {
    static const char *const names[WGT_BINARY_COUNT] = {"add", "sub", "mul", "div"};
    int is_int = out->dtype == WGT_I32 || out->dtype == WGT_U32;
    const char *expr;
    switch (op) {
    case WGT_BINARY_ADD: expr = "x + y"; break;
    case WGT_BINARY_SUB: expr = "x - y"; break;
    case WGT_BINARY_MUL: expr = "x * y"; break;
    /* Integer division by zero is defined as 0 here (WGSL would give x). */
    case WGT_BINARY_DIV: expr = is_int ? "select(x / y, x - x, y == (y - y))" : "x / y"; break;
    default: return wgt_error(WGT_ERR_INTERNAL, "unknown binary op %d", (int)op);
    }
    const wgt_operand *in[2] = {a, b};
    return run(be, "binary", names[op], expr, out, in, 2);
}

wgt_status wgt_wgpu_copy(wgt_backend *be, const wgt_operand *dst, const wgt_operand *src) {
    const wgt_operand *in[1] = {src};
    return run(be, "unary", "copy", "x", dst, in, 1);
}
