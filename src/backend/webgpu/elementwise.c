/*
 * The elementwise kernel runner shared by every elementwise op family on WebGPU (binary,
 * unary, casts, comparisons, where): one WGSL template, filled per (op, input types, output
 * type) with the bindings, the loads, the op's helper functions and its expression, and
 * cached as a pipeline. f16 is stored packed two to a u32 and computed in f32, so it works
 * on devices without shader-f16. The strided copy is the runner's identity op.
 *
 * Helper functions come as named pieces with dependencies (wgt_wgsl_piece), so a kernel that
 * calls several, such as a fused chain of ops, holds each once; the NaN and infinity prelude
 * every float op family shares is defined here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webgpu_internal.h"

typedef struct {
    uint32_t numel, ndim, dense, fixed;
    uint32_t offsets[4];
    uint32_t scalar_bits[4];
    uint32_t shape[8];
    int32_t strides[3][8];
} elementwise_params;

const char *wgt_wgpu_compute_type(wgt_dtype d) { return d == WGT_I32 ? "i32" : d == WGT_U32 ? "u32" : "f32"; }
const char *wgt_wgpu_storage_type(wgt_dtype d) { return d == WGT_F16 ? "u32" : wgt_wgpu_compute_type(d); }

/* NaN and infinity come from private variables, because WGSL rejects a constant expression
 * that evaluates to either; NaN and infinity tests look at the bits, because a driver may
 * compile float compares as if NaN could not occur. */
const wgt_wgsl_piece wgt_wgsl_float_bits = {
    "var<private> wgt_nan_bits: u32 = 0x7fc00000u;\n"
    "var<private> wgt_inf_bits: u32 = 0x7f800000u;\n"
    "fn wgt_nan() -> f32 { return bitcast<f32>(wgt_nan_bits); }\n"
    "fn wgt_inf() -> f32 { return bitcast<f32>(wgt_inf_bits); }\n"
    "fn wgt_is_nan(v: f32) -> bool { return (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u; }\n"
    "fn wgt_is_inf(v: f32) -> bool { return (bitcast<u32>(v) & 0x7fffffffu) == 0x7f800000u; }\n"
    "fn wgt_sign_bit(v: f32) -> bool { return (bitcast<u32>(v) & 0x80000000u) != 0u; }\n"
    "fn wgt_with_sign(mag: f32, negative: bool) -> f32 {\n"
    "    return bitcast<f32>((bitcast<u32>(mag) & 0x7fffffffu) | select(0u, 0x80000000u, negative));\n"
    "}\n",
    {NULL}};

void wgt_wgsl_pieces_add(wgt_wgsl_pieces *set, const wgt_wgsl_piece *piece) {
    if (!piece) return;
    for (int i = 0; i < set->count; i++)
        if (set->list[i] == piece) return;
    for (int d = 0; d < WGT_WGSL_PIECE_DEPS; d++) wgt_wgsl_pieces_add(set, piece->deps[d]);
    if (set->count < WGT_WGSL_MAX_PIECES) set->list[set->count++] = piece;
    else set->overflow = 1; /* text() then fails: a missing function must not compile silently */
}

char *wgt_wgsl_pieces_text(const wgt_wgsl_pieces *set) {
    size_t n = 1;
    if (set && set->overflow) return NULL;
    for (int i = 0; set && i < set->count; i++) n += set->list[i]->text ? strlen(set->list[i]->text) : 0;
    char *text = malloc(n), *at = text;
    if (!text) return NULL;
    for (int i = 0; set && i < set->count; i++) {
        const char *t = set->list[i]->text; /* NULL: a piece that only gathers others */
        if (!t) continue;
        memcpy(at, t, strlen(t));
        at += strlen(t);
    }
    *at = '\0';
    return text;
}

/* What build_elementwise needs: the spec and the op's helper functions (or NULL). */
typedef struct {
    const wgt_wgpu_elementwise_spec *spec;
    const wgt_wgsl_pieces *helpers;
} kernel_source;

static char *build_elementwise(wgt_webgpu *w, const void *arg) {
    (void)w;
    const kernel_source *src = arg;
    const wgt_wgpu_elementwise_spec *k = src->spec;
    const char *text = wgt_wgsl_source("elementwise");
    if (!text) return NULL;
    static const char *const names[3] = {"x", "y", "z"};
    char bindings[768] = "", functions[2048] = "", args[128] = "", params_list[192] = "", tmp[512];
    for (int i = 0; i < k->nin; i++) {
        wgt_dtype d = k->in_dtype[i];
        snprintf(tmp, sizeof tmp, "@group(0) @binding(%d) var<storage, read> in%d: array<%s>;\n", i, i,
                 wgt_wgpu_storage_type(d));
        strcat(bindings, tmp);
        if (d == WGT_F16)
            snprintf(tmp, sizeof tmp, "fn load%d(i: u32) -> f32 { return unpack2x16float(in%d[i >> 1u])[i & 1u]; }\n", i, i);
        else snprintf(tmp, sizeof tmp, "fn load%d(i: u32) -> %s { return in%d[i]; }\n", i, wgt_wgpu_compute_type(d), i);
        strcat(functions, tmp);
        snprintf(tmp, sizeof tmp, "%sload%d(input_index%d(i))", i ? ", " : "", i, i);
        strcat(args, tmp);
        snprintf(tmp, sizeof tmp, "%s%s: %s", i ? ", " : "", names[i], wgt_wgpu_compute_type(d));
        strcat(params_list, tmp);
    }
    const char *t_out = wgt_wgpu_compute_type(k->out_dtype);
    snprintf(tmp, sizeof tmp, "@group(0) @binding(%d) var<storage, read_write> out: array<%s>;\n", k->nin,
             wgt_wgpu_storage_type(k->out_dtype));
    strcat(bindings, tmp);
    size_t flen = strlen(functions);
    int wrote = snprintf(functions + flen, sizeof functions - flen,
             "fn op(%s) -> %s { return %s; }\n"
             "fn value(i: u32) -> %s { return op(%s); }\n"
             "fn write_out(word: u32, v0: %s, v1: %s) { %s }\n",
             params_list, t_out, k->expr, t_out, args, t_out, t_out,
             k->out_dtype == WGT_F16 ? "out[word] = pack2x16float(vec2<f32>(v0, v1));" : "out[word] = v0;");
    if (wrote < 0 || (size_t)wrote >= sizeof functions - flen) return NULL; /* an op expression too long: no truncated kernel */
    char binding_index[16];
    snprintf(binding_index, sizeof binding_index, "%d", k->nin + 1);
    /* The op's helpers come first so the generated functions can call them. */
    char *helpers = wgt_wgsl_pieces_text(src->helpers);
    char *all = helpers ? malloc(strlen(helpers) + strlen(functions) + 2) : NULL;
    if (all) sprintf(all, "%s\n%s", helpers, functions);
    free(helpers);
    if (!all) return NULL;
    const char *pairs[] = {"BINDINGS", bindings, "PARAMS_BINDING", binding_index, "ELEMS",
                           k->out_dtype == WGT_F16 ? "2u" : "1u", "FUNCTIONS", all, NULL};
    char *wgsl = wgt_wgsl_expand(text, pairs);
    free(all);
    return wgsl;
}

int wgt_wgpu_is_fixed(const wgt_operand *in, int ndim, const int64_t *shape) {
    for (int d = 0; d < ndim; d++)
        if (shape[d] != 1 && in->strides[d] != 0) return 0;
    return 1;
}

int wgt_wgpu_is_dense(const wgt_operand *in, int ndim, const int64_t *shape) {
    int64_t s = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        if (shape[d] != 1 && in->strides[d] != s) return 0;
        s *= shape[d];
    }
    return 1;
}

/* Fills the parameter block; inputs are already broadcast to out's shape. */
static void fill_params(elementwise_params *p, const wgt_operand *out, const wgt_operand *const *in, int nin) {
    memset(p, 0, sizeof *p);
    int64_t numel = 1;
    for (int d = 0; d < out->ndim; d++) numel *= out->shape[d];
    p->numel = (uint32_t)numel;
    p->ndim = (uint32_t)out->ndim;
    for (int d = 0; d < out->ndim; d++) p->shape[d] = (uint32_t)out->shape[d];
    for (int k = 0; k < nin; k++) {
        for (int d = 0; d < out->ndim; d++) p->strides[k][d] = (int32_t)in[k]->strides[d];
        p->offsets[k] = (uint32_t)in[k]->offset;
        if (wgt_wgpu_is_dense(in[k], out->ndim, out->shape)) p->dense |= 1u << k;
        if (wgt_wgpu_is_fixed(in[k], out->ndim, out->shape)) p->fixed |= 1u << k;
    }
}

wgt_status wgt_wgpu_elementwise(wgt_backend *be, const wgt_wgpu_elementwise_spec *spec, const wgt_operand *out,
                                const wgt_operand *const *in, const uint32_t *scalar_bits) {
    return wgt_wgpu_elementwise_with(be, spec, NULL, out, in, scalar_bits);
}

wgt_status wgt_wgpu_elementwise_with(wgt_backend *be, const wgt_wgpu_elementwise_spec *spec,
                                     const wgt_wgsl_pieces *helpers,
                                     const wgt_operand *out, const wgt_operand *const *in,
                                     const uint32_t *scalar_bits) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    if (spec->nin < 1 || spec->nin > 3) return wgt_error(WGT_ERR_INTERNAL, "elementwise kernel with %d inputs", spec->nin);
    char key[128];
    int used = snprintf(key, sizeof key, "elementwise:%s", spec->op_name);
    for (int i = 0; i < spec->nin && used < (int)sizeof key; i++)
        used += snprintf(key + used, sizeof key - (size_t)used, ":%s", wgt_dtype_name(spec->in_dtype[i]));
    if (used < (int)sizeof key) snprintf(key + used, sizeof key - (size_t)used, "->%s", wgt_dtype_name(spec->out_dtype));
    wgt_pipeline *pl;
    kernel_source source = {spec, helpers};
    wgt_status st = wgt_wgpu_pipeline(w, key, spec->nin + 1, build_elementwise, &source, &pl);
    if (st != WGT_OK) return st;
    elementwise_params params;
    fill_params(&params, out, in, spec->nin);
    if (scalar_bits) memcpy(params.scalar_bits, scalar_bits, sizeof params.scalar_bits);
    uint64_t per_invocation = out->dtype == WGT_F16 ? 2 : 1;
    uint64_t invocations = (params.numel + per_invocation - 1) / per_invocation;
    wgt_buffer *buffers[WGT_MAX_STORAGE_BINDINGS];
    for (int i = 0; i < spec->nin; i++) buffers[i] = in[i]->buffer;
    buffers[spec->nin] = out->buffer;
    return wgt_wgpu_dispatch(w, pl, buffers, &params, sizeof params, (invocations + 255) / 256);
}

/* A copy moves bits: it is a box write at the origin of the whole destination. (Through the
 * elementwise runner, f16 would pass pack2x16float, which WGSL leaves undefined for
 * infinities and NaN.) */
wgt_status wgt_wgpu_copy(wgt_backend *be, const wgt_operand *dst, const wgt_operand *src) {
    static const int64_t origin[WGT_MAX_DIMS] = {0};
    if (dst->ndim > 0) return wgt_wgpu_write_box(be, dst, origin, src);
    wgt_operand d1 = *dst, s1 = *src; /* a box has at least one dimension: a scalar is [1] */
    d1.ndim = s1.ndim = 1;
    d1.shape[0] = s1.shape[0] = 1;
    d1.strides[0] = s1.strides[0] = 1;
    return wgt_wgpu_write_box(be, &d1, origin, &s1);
}
