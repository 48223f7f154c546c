/*
 * Shape kernels on WebGPU: write_box (wgsl/write_box.wgsl; concat and stack write each
 * input into its box of the output, one dispatch per input) and pad (wgsl/pad.wgsl, a
 * gather over the output). Both only move elements, so they move bits: one pipeline serves
 * every type of a size; the 2- and 1-byte types are stored packed two or four to a word and
 * need whole-word writes (see the templates for how each invocation owns its words).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "webgpu_internal.h"

#define WORKGROUP_SIZE 256u

typedef struct {
    uint32_t count, ndim, row_len, words_per_row;
    uint32_t src_offset, dst_base, dst_numel, pad;
    uint32_t src_shape[8];
    int32_t src_strides[8];
    uint32_t dst_shape[8];
    uint32_t dst_strides[8];
    uint32_t box_start[8];
} write_box_params;

typedef struct {
    uint32_t count, ndim, value_bits, in_offset;
    uint32_t value_hi, pairs, unused[2];
    uint32_t out_shape[8];
    uint32_t in_shape[8];
    uint32_t before[8];
    int32_t in_strides[8];
} pad_params;

/* Both templates take only LANES, the elements per u32 word; arg points at the template's name. */
typedef struct {
    const char *name;
    unsigned lanes;
} shape_kernel;

static unsigned lanes_of(wgt_dtype dtype) { return 4u / (unsigned)wgt_dtype_size(dtype); }

static char *build_shape(wgt_webgpu *w, const void *arg) {
    (void)w;
    const shape_kernel *k = arg;
    const char *text = wgt_wgsl_source(k->name);
    if (!text) return NULL;
    char lanes[8];
    snprintf(lanes, sizeof lanes, "%u", k->lanes);
    const char *pairs[] = {"LANES", lanes, NULL};
    return wgt_wgsl_expand(text, pairs);
}

static wgt_status get_pipeline(wgt_webgpu *w, const char *name, wgt_dtype dtype, wgt_pipeline **pl) {
    shape_kernel k = {name, lanes_of(dtype)};
    char key[64];
    snprintf(key, sizeof key, "%s:b%u", name, 32u / k.lanes);
    return wgt_wgpu_pipeline(w, key, 2, build_shape, &k, pl);
}

/* The kernels index with 32-bit integers: the view's elements must lie below 2^31, so its
 * offset and every stride that is ever multiplied by a nonzero coordinate fit an i32. */
static wgt_status check_view(const char *what, const wgt_operand *v) {
    int64_t lo = v->offset, hi = v->offset;
    for (int d = 0; d < v->ndim; d++) {
        int64_t span = (v->shape[d] - 1) * v->strides[d];
        if (span < 0) lo += span;
        else hi += span;
    }
    if (lo < 0 || hi > INT32_MAX)
        return wgt_error(WGT_ERR_LIMIT, "%s: a view reaching elements %lld..%lld is beyond 32-bit indexing", what,
                         (long long)lo, (long long)hi);
    return WGT_OK;
}

wgt_status wgt_wgpu_write_box(wgt_backend *be, const wgt_operand *dst, const int64_t *box_start,
                              const wgt_operand *src) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    if (wgt_dtype_size(src->dtype) == 8 && src->dtype == dst->dtype) return wgt_wgpu_write_box64(be, dst, box_start, src);
    if (src->ndim != dst->ndim || src->ndim < 1 || src->dtype != dst->dtype)
        return wgt_error(WGT_ERR_INTERNAL, "write_box of rank %d %s into rank %d %s", src->ndim,
                         wgt_dtype_name(src->dtype), dst->ndim, wgt_dtype_name(dst->dtype));
    int nd = src->ndim;
    write_box_params p;
    memset(&p, 0, sizeof p);
    uint64_t numel = 1, dst_numel = 1;
    int64_t base = dst->offset;
    for (int d = 0; d < nd; d++) {
        numel *= (uint64_t)src->shape[d];
        dst_numel *= (uint64_t)dst->shape[d];
        base += box_start[d] * dst->strides[d];
        p.src_shape[d] = (uint32_t)src->shape[d];
        /* A length-1 dimension's stride is never multiplied by a nonzero coordinate. */
        p.src_strides[d] = src->shape[d] > 1 ? (int32_t)src->strides[d] : 0;
        p.dst_shape[d] = (uint32_t)dst->shape[d];
        p.dst_strides[d] = (uint32_t)dst->strides[d];
        p.box_start[d] = (uint32_t)box_start[d];
    }
    if (numel == 0) return WGT_OK;
    wgt_status st = check_view("write_box source", src);
    if (st != WGT_OK) return st;
    if (dst_numel + (uint64_t)dst->offset > INT32_MAX)
        return wgt_error(WGT_ERR_LIMIT, "write_box: a destination of %llu elements is beyond 32-bit indexing",
                         (unsigned long long)dst_numel);
    p.ndim = (uint32_t)nd;
    p.row_len = (uint32_t)src->shape[nd - 1];
    p.src_offset = (uint32_t)src->offset;
    p.dst_base = (uint32_t)base;
    p.dst_numel = (uint32_t)(dst_numel + (uint64_t)dst->offset); /* e is counted from the storage's start */
    uint64_t invocations = numel;
    unsigned lanes = lanes_of(src->dtype);
    if (lanes > 1) {
        /* Each row gets the most words a row of row_len elements can touch at any start
         * within a word; spares exit. */
        p.words_per_row = (p.row_len + 2 * lanes - 2) / lanes;
        invocations = numel / p.row_len * p.words_per_row;
    }
    if (invocations > UINT32_MAX)
        return wgt_error(WGT_ERR_LIMIT, "write_box: %llu invocations are beyond 32-bit indexing",
                         (unsigned long long)invocations);
    p.count = (uint32_t)invocations;
    wgt_pipeline *pl;
    if ((st = get_pipeline(w, "write_box", src->dtype, &pl)) != WGT_OK) return st;
    wgt_buffer *buffers[2] = {src->buffer, dst->buffer};
    return wgt_wgpu_dispatch(w, pl, buffers, &p, sizeof p, (invocations + WORKGROUP_SIZE - 1) / WORKGROUP_SIZE);
}

wgt_status wgt_wgpu_pad(wgt_backend *be, const wgt_operand *out, const wgt_operand *in, const int64_t *before,
                        uint64_t value_bits) {
    if (wgt_dtype_size(out->dtype) == 8 && in->dtype == out->dtype) return wgt_wgpu_pad64(be, out, in, before, value_bits);
    return wgt_wgpu_pad_words(be, out, in, before, (uint32_t)value_bits, (uint32_t)value_bits, 0);
}

wgt_status wgt_wgpu_pad_words(wgt_backend *be, const wgt_operand *out, const wgt_operand *in, const int64_t *before,
                              uint32_t lo, uint32_t hi, int pairs) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    if (in->ndim != out->ndim || in->dtype != out->dtype)
        return wgt_error(WGT_ERR_INTERNAL, "pad of rank %d %s into rank %d %s", in->ndim, wgt_dtype_name(in->dtype),
                         out->ndim, wgt_dtype_name(out->dtype));
    /* The kernel indexes the output from 0 and pairs f16 outputs from an even element. */
    if (out->offset != 0) return wgt_error(WGT_ERR_INTERNAL, "pad output at offset %lld", (long long)out->offset);
    pad_params p;
    memset(&p, 0, sizeof p);
    uint64_t numel = 1, in_numel = 1;
    for (int d = 0; d < out->ndim; d++) {
        numel *= (uint64_t)out->shape[d];
        in_numel *= (uint64_t)in->shape[d];
        p.out_shape[d] = (uint32_t)out->shape[d];
        p.in_shape[d] = (uint32_t)in->shape[d];
        p.before[d] = (uint32_t)before[d];
        p.in_strides[d] = in->shape[d] > 1 ? (int32_t)in->strides[d] : 0;
    }
    if (numel == 0) return WGT_OK;
    if (numel > INT32_MAX)
        return wgt_error(WGT_ERR_LIMIT, "pad: %llu output elements are beyond 32-bit indexing",
                         (unsigned long long)numel);
    wgt_status st = in_numel ? check_view("pad input", in) : WGT_OK;
    if (st != WGT_OK) return st;
    p.count = (uint32_t)numel;
    p.ndim = (uint32_t)out->ndim;
    p.value_bits = lo;
    p.value_hi = hi;
    p.pairs = (uint32_t)pairs;
    p.in_offset = (uint32_t)in->offset;
    wgt_pipeline *pl;
    if ((st = get_pipeline(w, "pad", out->dtype, &pl)) != WGT_OK) return st;
    uint64_t invocations = (numel + lanes_of(out->dtype) - 1) / lanes_of(out->dtype);
    wgt_buffer *buffers[2] = {in->buffer, out->buffer};
    return wgt_wgpu_dispatch(w, pl, buffers, &p, sizeof p, (invocations + WORKGROUP_SIZE - 1) / WORKGROUP_SIZE);
}
