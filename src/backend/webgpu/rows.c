/*
 * Row ops on WebGPU: softmax, log_softmax, layer_norm, rms_norm and logsumexp (one f32 per
 * row) over the last dimension, each one fused kernel (wgsl/rows.wgsl) filled per (op, type,
 * weight present, bias present, layout) and cached as a pipeline. Rows whose elements are consecutive in storage
 * take the dense kernel: each row is read once into registers, in vec4 units, and written
 * from there. f32 rows not aligned to 4 elements (a vocabulary of 50257) are read as the
 * aligned vec4 units that cover them, the elements of neighbouring rows masked out, and
 * written element by element. Other layouts (and f16 rows of odd length or odd start) take
 * the strided kernel, which reads each element once per pass.
 * The host picks how many invocations share a row from the row length and the row count: a
 * few long rows get a whole workgroup each, many short rows one invocation each (and no
 * reductions in workgroup memory). For the strided kernel it also picks the rows per
 * workgroup so that an f16 output's packed words never straddle two workgroups.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webgpu_internal.h"

#define WORKGROUP_SIZE 256u

/* The template's op codes are wgt_rows_op's values. */
_Static_assert(WGT_ROWS_SOFTMAX == 0 && WGT_ROWS_LOG_SOFTMAX == 1 && WGT_ROWS_LAYER_NORM == 2 &&
                   WGT_ROWS_RMS_NORM == 3 && WGT_ROWS_LOGSUMEXP == 4,
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
    /* Dense kernel: elements per unit (4; 2 for f16 rows not aligned to 4; 1 for f32 ones in
     * a buffer too small for a vec4) and units each invocation keeps in registers; 0: the
     * strided kernel. */
    uint32_t vec, cache;
    int param_units; /* dense kernel: weight and bias (those present) are read in units */
    int span;        /* dense f32 rows not aligned to 4: read as the aligned units covering them */
} rows_kernel;

/* The marker lines in rows.wgsl before each kernel; the common part comes first. */
#define STRIDED_MARKER "// ==== kernel: strided ===="
#define DENSE_MARKER "// ==== kernel: dense ===="

/* Units each invocation of the dense kernel keeps in registers. A unit is held as a vec4
 * whatever its width, so this fixes the registers (32 floats) for every unit: caching 32
 * elements of rows not aligned to 4 (32 units of 1) took 128 registers an invocation, and
 * softmax over [8192, 50257] logits ran at a quarter of the bandwidth on an H200. */
#define DENSE_CACHE_UNITS 8u

static const char *const op_names[WGT_ROWS_COUNT] = {"softmax", "log_softmax", "layer_norm", "rms_norm",
                                                     "logsumexp"};

/* A WGSL load of element i from binding `name` of type dt (f16 packed two to a u32). */
static void load_expr(char *buf, size_t size, const char *name, wgt_dtype dt, const char *i) {
    if (dt == WGT_F16) snprintf(buf, size, "unpack2x16float(%s[(%s) >> 1u])[(%s) & 1u]", name, i, i);
    else snprintf(buf, size, "%s[%s]", name, i);
}

/* The dense kernel's units in storage: f32 units are one vec4 or one f32, f16 units four
 * packed values (a vec2<u32>) or two (one u32). */
static const char *unit_storage_type(const rows_kernel *k) {
    if (k->dtype == WGT_F16) return k->vec == 4 ? "vec2<u32>" : "u32";
    return k->vec == 4 ? "vec4<f32>" : "f32";
}

/* WGSL statements returning unit i of binding `name` as a vec4<f32> (components past the
 * unit's elements 0), one load of the whole unit. */
static void unit_load(char *buf, size_t size, const rows_kernel *k, const char *name, const char *i) {
    if (k->dtype == WGT_F16 && k->vec == 4)
        snprintf(buf, size, "let w = %s[%s];\n    return vec4<f32>(unpack2x16float(w.x), unpack2x16float(w.y));", name, i);
    else if (k->dtype == WGT_F16) snprintf(buf, size, "return vec4<f32>(unpack2x16float(%s[%s]), 0.0, 0.0);", name, i);
    else if (k->vec == 4) snprintf(buf, size, "return %s[%s];", name, i);
    else snprintf(buf, size, "return vec4<f32>(%s[%s], 0.0, 0.0, 0.0);", name, i);
}

/* The store of unit i of the output from y's components. */
static const char *unit_store(const rows_kernel *k) {
    if (k->dtype == WGT_F16 && k->vec == 4) return "out[i] = vec2<u32>(f16_pair(y.x, y.y), f16_pair(y.z, y.w));";
    if (k->dtype == WGT_F16) return "out[i] = f16_pair(y.x, y.y);";
    return k->vec == 4 ? "out[i] = y;" : "out[i] = y.x;";
}

/* rows.wgsl's common part followed by the dense or the strided kernel, malloc'd. */
static char *kernel_text(int dense_kernel) {
    const char *text = wgt_wgsl_source("rows");
    const char *strided = text ? strstr(text, STRIDED_MARKER) : NULL, *dense = text ? strstr(text, DENSE_MARKER) : NULL;
    if (!strided || !dense || dense < strided) return NULL;
    const char *from = dense_kernel ? dense : strided, *to = dense_kernel ? dense + strlen(dense) : dense;
    size_t common = (size_t)(strided - text), part = (size_t)(to - from);
    char *out = malloc(common + part + 1);
    if (!out) return NULL;
    memcpy(out, text, common);
    memcpy(out + common, from, part);
    out[common + part] = '\0';
    return out;
}

/* Binding, loads and affine step of the weight (name "wt", fn "weight") or the bias ("bs",
 * "bias"), appended to bindings, loads and affine (scalar, for the strided kernel) and
 * affine_unit (for the dense kernel). The dense kernel reads a parameter whose elements are
 * consecutive and aligned as the rows in units (k->param_units), others element by element. */
static void param_code(const rows_kernel *k, int binding, const char *name, const char *fn, const char *field,
                       const char *apply, char *bindings, size_t bsize, char *loads, size_t lsize, char *affine,
                       size_t asize, char *affine_unit, size_t usize) {
    const char *st = k->dtype == WGT_F16 ? "u32" : "f32";
    char expr[160], tmp[512];
    size_t n = strlen(bindings);
    snprintf(bindings + n, bsize - n, "@group(0) @binding(%d) var<storage, read> %s: array<%s>;\n", binding, name,
             k->vec && k->param_units ? unit_storage_type(k) : st);
    if (k->vec && k->param_units) {
        unit_load(expr, sizeof expr, k, name, "i");
        snprintf(tmp, sizeof tmp, "fn %s_unit(u: u32) -> vec4<f32> {\n    let i = params.%s_offset / VEC + u;\n"
                                  "    %s\n}\n", fn, field, expr);
    } else {
        load_expr(expr, sizeof expr, name, k->dtype, "i");
        snprintf(tmp, sizeof tmp,
                 "fn %s(j: u32) -> f32 {\n    let i = u32(i32(params.%s_offset) + i32(j) * params.%s_stride);\n"
                 "    return %s;\n}\n", fn, field, field, expr);
        if (k->vec) { /* a span row's unit u starts `lead` elements before the row's element 4u */
            n = strlen(tmp);
            snprintf(tmp + n, sizeof tmp - n,
                     "fn %s_unit(u: u32) -> vec4<f32> {\n    var r = vec4<f32>(0.0);\n"
                     "    for (var c = 0u; c < VEC; c = c + 1u) {\n"
                     "        let j = i32(u * VEC + c) - i32(lead);\n"
                     "        if (j >= 0 && j < i32(params.len)) { r[c] = %s(u32(j)); }\n    }\n    return r;\n}\n",
                     fn, fn);
        }
    }
    n = strlen(loads);
    snprintf(loads + n, lsize - n, "%s", tmp);
    n = strlen(affine);
    snprintf(affine + n, asize - n, "y = y %s %s(j);\n    ", apply, fn);
    n = strlen(affine_unit);
    snprintf(affine_unit + n, usize - n, "y = y %s %s_unit(u);\n    ", apply, fn);
}

static char *build_rows(wgt_webgpu *w, const void *arg) {
    (void)w;
    const rows_kernel *k = arg;
    char *text = kernel_text(k->vec != 0);
    if (!text) return NULL;
    const char *st = k->dtype == WGT_F16 ? "u32" : "f32", *io_type = k->vec ? unit_storage_type(k) : st;
    char bindings[768], param_loads[1024] = "", affine[128] = "", affine_unit[128] = "", load[96], load_unit[192];
    int b = 0;
    int n = snprintf(bindings, sizeof bindings, "@group(0) @binding(%d) var<storage, read> inp: array<%s>;\n", b++,
                     io_type);
    if (k->span) /* the same buffer by element, for a last unit that runs past its end */
        n += snprintf(bindings + n, sizeof bindings - (size_t)n,
                      "@group(0) @binding(%d) var<storage, read> inp_s: array<f32>;\n", b++);
    if (k->has_weight)
        param_code(k, b++, "wt", "weight", "w", "*", bindings, sizeof bindings, param_loads, sizeof param_loads, affine,
                   sizeof affine, affine_unit, sizeof affine_unit);
    if (k->has_bias)
        param_code(k, b++, "bs", "bias", "b", "+", bindings, sizeof bindings, param_loads, sizeof param_loads, affine,
                   sizeof affine, affine_unit, sizeof affine_unit);
    int lse = k->op == WGT_ROWS_LOGSUMEXP; /* one f32 per row */
    n = (int)strlen(bindings);
    snprintf(bindings + n, sizeof bindings - (size_t)n, "@group(0) @binding(%d) var<storage, read_write> out: array<%s>;",
             b++, lse || k->span ? "f32" : io_type);
    char params_binding[8], op_code[8], load_stmt[128], vec[8], cache[8];
    unit_load(load_unit, sizeof load_unit, k, "inp", "i");
    snprintf(vec, sizeof vec, "%uu", k->vec);
    snprintf(cache, sizeof cache, "%uu", k->cache);
    snprintf(params_binding, sizeof params_binding, "%d", b);
    snprintf(op_code, sizeof op_code, "%du", (int)k->op);
    load_expr(load, sizeof load, "inp", k->dtype, "i");
    snprintf(load_stmt, sizeof load_stmt, "return %s;", load);
    /* The write passes: all invocations over the workgroup's range, or one invocation over
     * its own rows (element e of those is row e / len; there are at most two). */
    const char *write, *write_alone;
    if (lse) { /* the first slots' rows (one round: the output is f32) */
        write = "if (tid < min(per_group, params.rows - first)) { store_row(first + tid, lse_of(stats[tid])); }";
        write_alone = "for (var r = 0u; r < min(params.rounds, params.rows - row0); r = r + 1u) {\n"
                      "                store_row(row0 + r, lse_of(st[r]));\n"
                      "            }";
    } else if (k->dtype == WGT_F16) {
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
    const char *pairs[] = {"BINDINGS", bindings,    "PARAMS_BINDING", params_binding, "OP", op_code,
                           "LOAD", load_stmt,       "PARAM_LOADS", param_loads,       "AFFINE", affine,
                           "WRITE", write,          "WRITE_ALONE", write_alone,       "VEC", vec,
                           "CACHE", cache,          "LOAD_UNIT", load_unit,
                           "STORE_UNIT", lse || k->span ? "out[i] = y.x;" : unit_store(k),
                           "SPAN", k->span ? "true" : "false",
                           "TAIL_LOAD", k->span ? "for (var c = 0u; c < 4u; c = c + 1u) {\n"
                                                  "            if (i * 4u + c < arrayLength(&inp_s)) { v[c] = inp_s[i * 4u + c]; }\n"
                                                  "        }" : "",
                           "PUT", k->span ? "let m = unit_mask(u);\n"
                                            "    for (var c = 0u; c < 4u; c = c + 1u) {\n"
                                            "        if (m[c]) { out[row * params.len + u * 4u + c - lead] = y[c]; }\n"
                                            "    }" : "store_unit(row * (params.len / VEC) + u, y);",
                           "STORE_ROW", lse ? "out[r] = v;" : "",
                           "AFFINE_UNIT", affine_unit,
                           NULL};
    char *wgsl = wgt_wgsl_expand(text, pairs);
    free(text);
    return wgsl;
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

/* The dense kernel's unit for rows of `in` (the last dimension of stride 1): 4 elements when
 * every row starts at a multiple of 4 and holds a multiple of 4; else 2 for f16 rows that
 * start and end on word boundaries; 0 where the dense kernel does not apply. f32 rows that
 * are not aligned take units of 4 too, as spans (*span set): the aligned units covering
 * each row, masked. (f16 rows cannot: their output words would hold two rows' elements.) */
static uint32_t dense_unit(const wgt_operand *in, uint64_t len, int *span) {
    int lead = in->ndim - 1;
    *span = 0;
    if (in->strides[lead] != 1) return 0;
    for (uint32_t unit = 4; unit >= (in->dtype == WGT_F16 ? 2u : 4u); unit /= 2) {
        int aligned = len % unit == 0 && in->offset % unit == 0;
        for (int d = 0; aligned && d < lead; d++) aligned = in->shape[d] == 1 || in->strides[d] % unit == 0;
        if (aligned) return unit;
    }
    if (in->dtype == WGT_F16) return 0;
    *span = 1;
    return 4;
}

/* Invocations per row for the dense kernel, a power of two: enough that the row fits in
 * their registers (up to 256, which read the rest again), then more while each would still
 * get 2 or more units and the launch is too small to fill a large GPU (2^17 invocations). */
static uint32_t dense_threads(uint64_t rows, uint64_t units, uint32_t cache) {
    uint32_t t = 1;
    while (t < WORKGROUP_SIZE && (uint64_t)t * cache < units) t *= 2;
    while (t < WORKGROUP_SIZE && (uint64_t)t * 2 <= units && rows * t < (1u << 17)) t *= 2;
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
    if (op == WGT_ROWS_LOGSUMEXP && out->dtype != WGT_F32)
        return wgt_error(WGT_ERR_INTERNAL, "row logsumexp into %s, not f32", wgt_dtype_name(out->dtype));
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
    rows_kernel k = {op, in->dtype, weight != NULL, bias != NULL, 0, 0, 0, 0};
    k.vec = dense_unit(in, len, &k.span);
    /* A vec4 array cannot bind a buffer of fewer than 16 bytes: such rows go by element. */
    if (k.span && in->buffer->size < 16) k.span = 0, k.vec = 1;
    if (k.vec) {
        k.cache = DENSE_CACHE_UNITS;
        /* A span covers up to two more units than the row's length gives. */
        p.threads = dense_threads(rows, k.span ? (len + 6) / 4 : len / k.vec, k.cache);
        /* Span rows start anywhere in a unit: their weight and bias go element by element. */
        k.param_units = !k.span && (!weight || (p.w_stride == 1 && p.w_offset % k.vec == 0)) &&
                        (!bias || (p.b_stride == 1 && p.b_offset % k.vec == 0));
        p.rounds = 1;
    } else {
        p.threads = threads_for(rows, len);
        /* Each workgroup's (or lone invocation's) output range must start at an even element
         * for f16: with an odd row length that means an even number of rows, which only
         * threads = 256 (one row per workgroup and round) and threads = 1 (one row per
         * invocation and round) need a second round for. */
        p.rounds = out->dtype == WGT_F16 && (p.threads == WORKGROUP_SIZE || p.threads == 1) && len % 2 ? 2 : 1;
    }
    p.len_f = (float)len;
    /* Rounded to f32 as the computation is: tiny values become 0, huge ones infinity (done
     * here because converting an out-of-range double is undefined in C). */
    p.eps = eps > FLT_MAX ? INFINITY : (float)eps;
    p.nan_bits = 0x7fc00000u;
    p.inf_bits = 0x7f800000u;

    char key[80];
    snprintf(key, sizeof key, "rows:%s:%s:w%d:b%d:v%u:c%u:p%d:s%d", op_names[op], wgt_dtype_name(in->dtype),
             k.has_weight, k.has_bias, k.vec, k.cache, k.param_units, k.span);
    int nbuf = 0;
    wgt_buffer *buffers[WGT_MAX_STORAGE_BINDINGS];
    buffers[nbuf++] = in->buffer;
    if (k.span) buffers[nbuf++] = in->buffer; /* inp_s: read-only both times */
    if (weight) buffers[nbuf++] = weight->buffer;
    if (bias) buffers[nbuf++] = bias->buffer;
    buffers[nbuf++] = out->buffer;
    wgt_pipeline *pl;
    if ((st = wgt_wgpu_pipeline(w, key, nbuf, build_rows, &k, &pl)) != WGT_OK) return st;
    uint64_t per_group = (uint64_t)(WORKGROUP_SIZE / p.threads) * p.rounds;
    return wgt_wgpu_dispatch(w, pl, buffers, &p, sizeof p, (rows + per_group - 1) / per_group);
}
