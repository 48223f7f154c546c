/*
 * Scans on WebGPU: running sum (cumsum), product, maximum and minimum and the positions of
 * the last two, one template (wgsl/scan.wgsl) filled per (op, input type) with the step that
 * folds in the next element. One invocation scans one row in order: max and min then match
 * the CPU exactly, and sums and products round as sequential f32 ones (a long row with few
 * others is the slow case; a parallel scan would split it). f16 values go through an f32 buffer and the cast kernel, which
 * writes packed f16 words whole.
 */
#include <stdio.h>
#include <string.h>

#include "webgpu_internal.h"

#define WORKGROUP_SIZE 256u

typedef struct {
    uint32_t rows, len, ndim, offset;
    int32_t in_axis_stride;
    uint32_t out_axis_stride, pad0, pad1;
    uint32_t shape[8];
    int32_t in_strides[8];
    uint32_t out_strides[8];
} scan_params;

typedef struct {
    wgt_scan_op op;
    wgt_dtype in;
} scan_kernel;

static const char *const op_names[WGT_SCAN_COUNT] = {"sum", "prod", "max", "min", "argmax", "argmin"};

/* A NaN sticks; an equal value moves the position on, as the CPU scan does. */
static const char *step_of(wgt_scan_op op) {
    switch (op) {
    case WGT_SCAN_SUM: return "acc = acc + x;";
    case WGT_SCAN_PROD: return "acc = acc * x;";
    case WGT_SCAN_MAX:
    case WGT_SCAN_ARGMAX: return "if (!is_nan(acc) && (is_nan(x) || x >= acc)) { acc = x; at = j; }";
    default: return "if (!is_nan(acc) && (is_nan(x) || x <= acc)) { acc = x; at = j; }";
    }
}

static char *build_scan(wgt_webgpu *w, const void *arg) {
    (void)w;
    const scan_kernel *k = arg;
    const char *text = wgt_wgsl_source("scan");
    if (!text) return NULL;
    const char *acc = wgt_wgpu_compute_type(k->in);
    int position = k->op == WGT_SCAN_ARGMAX || k->op == WGT_SCAN_ARGMIN;
    const char *pairs[] = {
        "IN_STORAGE", k->in == WGT_F16 ? "u32" : acc,
        "OUT_STORAGE", position ? "i32" : acc,
        "ACC_T", acc,
        "LOAD", k->in == WGT_F16 ? "return unpack2x16float(inp[i >> 1u])[i & 1u];" : "return T(inp[i]);",
        "IS_NAN", strcmp(acc, "f32") ? "return false;" : "return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;",
        "STEP", step_of(k->op),
        "RESULT", position ? "i32(at)" : "acc",
        NULL};
    return wgt_wgsl_expand(text, pairs);
}

wgt_status wgt_wgpu_scan(wgt_backend *be, wgt_scan_op op, const wgt_operand *out, const wgt_operand *in, int axis) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    if (axis < 0 || axis >= in->ndim || op < 0 || op >= WGT_SCAN_COUNT)
        return wgt_error(WGT_ERR_INTERNAL, "scan op %d along axis %d of %d", (int)op, axis, in->ndim);
    if (out->offset != 0) return wgt_error(WGT_ERR_INTERNAL, "scan output at offset %lld", (long long)out->offset);
    scan_params p;
    memset(&p, 0, sizeof p);
    uint64_t rows = 1;
    int n = 0;
    for (int d = 0; d < in->ndim; d++) {
        if (d == axis) continue;
        rows *= (uint64_t)in->shape[d];
        p.shape[n] = (uint32_t)in->shape[d];
        p.in_strides[n] = (int32_t)in->strides[d];
        p.out_strides[n] = (uint32_t)out->strides[d];
        n++;
    }
    if (rows == 0 || in->shape[axis] == 0) return WGT_OK;
    p.rows = (uint32_t)rows;
    p.len = (uint32_t)in->shape[axis];
    p.ndim = (uint32_t)n;
    p.offset = (uint32_t)in->offset;
    p.in_axis_stride = (int32_t)in->strides[axis];
    p.out_axis_stride = (uint32_t)out->strides[axis];

    scan_kernel k = {op, in->dtype};
    char key[64];
    snprintf(key, sizeof key, "scan:%s:%s", op_names[op], wgt_dtype_name(in->dtype));
    wgt_pipeline *pl;
    wgt_status st = wgt_wgpu_pipeline(w, key, 2, build_scan, &k, &pl);
    if (st != WGT_OK) return st;
    uint64_t groups = (rows + WORKGROUP_SIZE - 1) / WORKGROUP_SIZE;
    if (out->dtype != WGT_F16) {
        wgt_buffer *buffers[2] = {in->buffer, out->buffer};
        return wgt_wgpu_dispatch(w, pl, buffers, &p, sizeof p, groups);
    }
    int64_t numel = 1;
    for (int d = 0; d < out->ndim; d++) numel *= out->shape[d];
    wgt_buffer *tmp;
    if ((st = wgt_wgpu_buffer_create(be, (size_t)numel * 4, 0, &tmp)) != WGT_OK) return st;
    wgt_buffer *buffers[2] = {in->buffer, tmp};
    st = wgt_wgpu_dispatch(w, pl, buffers, &p, sizeof p, groups);
    if (st == WGT_OK) {
        wgt_operand t = *out;
        t.dtype = WGT_F32;
        t.offset = 0;
        t.buffer = tmp;
        t.host = NULL;
        st = wgt_wgpu_cast(be, out, &t); /* f32 to f16 with overflow to infinity */
    }
    wgt_wgpu_buffer_destroy(be, tmp); /* a release: the recorded commands keep it alive */
    return st;
}
