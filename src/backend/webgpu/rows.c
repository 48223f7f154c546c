/*
 * Row ops on WebGPU: softmax, log_softmax, layer_norm and rms_norm over the last dimension,
 * each one fused kernel (wgsl/rows.wgsl) filled per (op, type, weight present, bias
 * present) and cached as a pipeline. The host picks how many invocations share a row from
 * the row length and the row count, as the reductions do: a few long rows get a whole
 * workgroup each and tree reductions in workgroup memory, many short rows get one
 * invocation each and no trees. It also picks the rows per workgroup so that an f16
 * output's packed words never straddle two workgroups.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "webgpu_internal.h"

#define WORKGROUP_SIZE 256u

/* The template's op codes are wgt_rows_op's values. */
_Static_assert(WGT_ROWS_SOFTMAX == 0 && WGT_ROWS_LOG_SOFTMAX == 1 && WGT_ROWS_LAYER_NORM == 2 &&
                   WGT_ROWS_RMS_NORM == 3,
               "rows.wgsl hard-codes the wgt_rows_op values");

typedef struct {
    uint32_t rows, len, lead_ndim, offset;
    int32_t stride;
    uint32_t threads, rounds;
    float len_f, eps;
    uint32_t w_offset;
    int32_t w_stride;
    uint32_t b_offset;
    int32_t b_stride;
    uint32_t nan_bits, inf_bits, pad;
    uint32_t lead_shape[8];
    int32_t lead_strides[8];
} rows_params;

typedef struct {
    wgt_rows_op op;
    wgt_dtype dtype;
    int has_weight, has_bias;
} rows_kernel;

static const char *const op_names[WGT_ROWS_COUNT] = {"softmax", "log_softmax", "layer_norm", "rms_norm"};

/* A WGSL load of element i from binding `name` of type dt (f16 packed two to a u32). */
static void load_expr(char *buf, size_t size, const char *name, wgt_dtype dt, const char *i) {
    if (dt == WGT_F16) snprintf(buf, size, "unpack2x16float(%s[(%s) >> 1u])[(%s) & 1u]", name, i, i);
    else snprintf(buf, size, "%s[%s]", name, i);
}

static char *build_rows(wgt_webgpu *w, const void *arg) {
    (void)w;
    const rows_kernel *k = arg;
    const char *text = wgt_wgsl_source("rows");
    if (!text) return NULL;
    const char *st = k->dtype == WGT_F16 ? "u32" : "f32";
    char bindings[640], param_loads[640] = "", affine[96] = "", load[96], expr[128], tmp[256];
    int b = 0;
    int n = snprintf(bindings, sizeof bindings, "@group(0) @binding(%d) var<storage, read> inp: array<%s>;\n", b++, st);
    if (k->has_weight) {
        n += snprintf(bindings + n, sizeof bindings - (size_t)n,
                      "@group(0) @binding(%d) var<storage, read> wt: array<%s>;\n", b++, st);
        load_expr(expr, sizeof expr, "wt", k->dtype, "i");
        snprintf(tmp, sizeof tmp,
                 "fn weight(j: u32) -> f32 {\n    let i = u32(i32(params.w_offset) + i32(j) * params.w_stride);\n"
                 "    return %s;\n}\n", expr);
        strcat(param_loads, tmp);
        strcat(affine, "y = y * weight(j);\n    ");
    }
    if (k->has_bias) {
        n += snprintf(bindings + n, sizeof bindings - (size_t)n,
                      "@group(0) @binding(%d) var<storage, read> bs: array<%s>;\n", b++, st);
        load_expr(expr, sizeof expr, "bs", k->dtype, "i");
        snprintf(tmp, sizeof tmp,
                 "fn bias(j: u32) -> f32 {\n    let i = u32(i32(params.b_offset) + i32(j) * params.b_stride);\n"
                 "    return %s;\n}\n", expr);
        strcat(param_loads, tmp);
        strcat(affine, "y = y + bias(j);");
    }
    snprintf(bindings + n, sizeof bindings - (size_t)n, "@group(0) @binding(%d) var<storage, read_write> out: array<%s>;",
             b++, st);
    char params_binding[8], op_code[8], load_stmt[128];
    snprintf(params_binding, sizeof params_binding, "%d", b);
    snprintf(op_code, sizeof op_code, "%du", (int)k->op);
    load_expr(load, sizeof load, "inp", k->dtype, "i");
    snprintf(load_stmt, sizeof load_stmt, "return %s;", load);
    /* The write passes: all invocations over the workgroup's range, or one invocation over
     * its own rows (element e of those is row e / len; there are at most two). */
    const char *write, *write_alone;
    if (k->dtype == WGT_F16) {
        write = "var p = vec2<u32>((2u * tid) / params.len, (2u * tid) % params.len);\n"
                "    for (var e = 2u * tid; e < total; e = e + 2u * WG) {\n"
                "        var high = 0u;\n"
                "        if (e + 1u < total) {\n"
                "            let q = advance(p, 1u);\n"
                "            high = f16_bits(slot_value(q.x, q.y));\n"
                "        }\n"
                "        out[(out_first + e) / 2u] = f16_bits(slot_value(p.x, p.y)) | (high << 16u);\n"
                "        p = advance(p, 2u * WG);\n"
                "    }";
        write_alone = "for (var e = 0u; e < total; e = e + 2u) {\n"
                      "                var r = u32(e >= params.len);\n"
                      "                let lo = f16_bits(value(st[r], base[r], e - r * params.len));\n"
                      "                var high = 0u;\n"
                      "                if (e + 1u < total) {\n"
                      "                    r = u32(e + 1u >= params.len);\n"
                      "                    high = f16_bits(value(st[r], base[r], e + 1u - r * params.len));\n"
                      "                }\n"
                      "                out[(out_first + e) / 2u] = lo | (high << 16u);\n"
                      "            }";
    } else {
        write = "var p = vec2<u32>(tid / params.len, tid % params.len);\n"
                "    for (var e = tid; e < total; e = e + WG) {\n"
                "        out[out_first + e] = slot_value(p.x, p.y);\n"
                "        p = advance(p, WG);\n"
                "    }";
        write_alone = "for (var j = 0u; j < total; j = j + 1u) { out[out_first + j] = value(st[0], base[0], j); }";
    }
    const char *pairs[] = {"BINDINGS", bindings,  "PARAMS_BINDING", params_binding, "OP", op_code,
                           "LOAD", load_stmt,     "PARAM_LOADS", param_loads,       "AFFINE", affine,
                           "WRITE", write,        "WRITE_ALONE", write_alone, NULL};
    return wgt_wgsl_expand(text, pairs);
}

/* Invocations per row, a power of two: grow while each invocation would still get 4 or more
 * elements, and either the launch is too small to fill a large GPU (2^18 invocations) or
 * each invocation would have more than 64 elements in sequence. The reductions use the same
 * rule: few long rows get 256 invocations each, many short rows one each (then no trees
 * and no barrier at all, which matters on lavapipe, slow at barriers). */
static uint32_t threads_for(uint64_t rows, uint64_t len) {
    uint32_t t = 1;
    while (t < WORKGROUP_SIZE && (uint64_t)t * 4 <= len && (rows * t < (1u << 18) || len / t > 64)) t *= 2;
    return t;
}

static wgt_status set_param_view(const wgt_operand *p, uint64_t len, uint32_t *offset, int32_t *stride) {
    if (p->ndim != 1 || (uint64_t)p->shape[0] != len)
        return wgt_error(WGT_ERR_INTERNAL, "row op weight or bias of rank %d, not [%llu]", p->ndim,
                         (unsigned long long)len);
    *offset = (uint32_t)p->offset;
    *stride = (int32_t)p->strides[0];
    return WGT_OK;
}

wgt_status wgt_wgpu_rows(wgt_backend *be, wgt_rows_op op, const wgt_operand *out, const wgt_operand *in,
                         const wgt_operand *weight, const wgt_operand *bias, double eps) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    if ((unsigned)op >= WGT_ROWS_COUNT) return wgt_error(WGT_ERR_INTERNAL, "unknown rows op %d", (int)op);
    if (in->ndim < 1 || in->ndim > WGT_MAX_DIMS)
        return wgt_error(WGT_ERR_INTERNAL, "row op on an operand of rank %d", in->ndim);
    /* The kernel indexes the output from 0 and pairs f16 outputs from an even element. */
    if (out->offset != 0) return wgt_error(WGT_ERR_INTERNAL, "row op output at offset %lld", (long long)out->offset);
    if (in->dtype != WGT_F32 && in->dtype != WGT_F16)
        return wgt_error(WGT_ERR_INTERNAL, "row op on %s", wgt_dtype_name(in->dtype));
    rows_params p;
    memset(&p, 0, sizeof p);
    int lead = in->ndim - 1;
    uint64_t rows = 1, len = (uint64_t)in->shape[lead];
    for (int d = 0; d < lead; d++) {
        rows *= (uint64_t)in->shape[d];
        p.lead_shape[d] = (uint32_t)in->shape[d];
        p.lead_strides[d] = (int32_t)in->strides[d];
    }
    if (rows == 0 || len == 0) return WGT_OK;
    if (rows * len > UINT32_MAX)
        return wgt_error(WGT_ERR_LIMIT, "row op over %llu rows of %llu is beyond 32-bit indexing",
                         (unsigned long long)rows, (unsigned long long)len);
    wgt_status st;
    if (weight && (st = set_param_view(weight, len, &p.w_offset, &p.w_stride)) != WGT_OK) return st;
    if (bias && (st = set_param_view(bias, len, &p.b_offset, &p.b_stride)) != WGT_OK) return st;
    p.rows = (uint32_t)rows;
    p.len = (uint32_t)len;
    p.lead_ndim = (uint32_t)lead;
    p.offset = (uint32_t)in->offset;
    p.stride = (int32_t)in->strides[lead];
    p.threads = threads_for(rows, len);
    /* Each workgroup's (or lone invocation's) output range must start at an even element for
     * f16: with an odd row length that means an even number of rows, which only threads =
     * 256 (one row per workgroup and round) and threads = 1 (one row per invocation and
     * round) need a second round for. */
    p.rounds = out->dtype == WGT_F16 && (p.threads == WORKGROUP_SIZE || p.threads == 1) && len % 2 ? 2 : 1;
    p.len_f = (float)len;
    /* Rounded to f32 as the computation is: tiny values become 0, huge ones infinity (done
     * here because converting an out-of-range double is undefined in C). */
    p.eps = eps > FLT_MAX ? INFINITY : (float)eps;
    p.nan_bits = 0x7fc00000u;
    p.inf_bits = 0x7f800000u;

    rows_kernel k = {op, in->dtype, weight != NULL, bias != NULL};
    char key[64];
    snprintf(key, sizeof key, "rows:%s:%s:w%d:b%d", op_names[op], wgt_dtype_name(in->dtype), k.has_weight, k.has_bias);
    int nbuf = 0;
    wgt_buffer *buffers[WGT_MAX_STORAGE_BINDINGS];
    buffers[nbuf++] = in->buffer;
    if (weight) buffers[nbuf++] = weight->buffer;
    if (bias) buffers[nbuf++] = bias->buffer;
    buffers[nbuf++] = out->buffer;
    wgt_pipeline *pl;
    if ((st = wgt_wgpu_pipeline(w, key, nbuf, build_rows, &k, &pl)) != WGT_OK) return st;
    uint64_t per_group = (uint64_t)(WORKGROUP_SIZE / p.threads) * p.rounds;
    return wgt_wgpu_dispatch(w, pl, buffers, &p, sizeof p, (rows + per_group - 1) / per_group);
}
