/*
 * Rotary position embedding in one kernel (wgsl/rope.wgsl) for the small x of a decoding
 * step: one invocation per rotated pair (f32; rope_f32.wgsl) or two neighbouring pairs (f16,
 * packed two to a word; rope_f16.wgsl), each pair's cos and sin taken once (trig.c). The core
 * composes rope from elementwise ops for larger x and on backends without this entry.
 */
#include <stdlib.h>
#include <string.h>

#include "webgpu_internal.h"

static const int f16_kernel = 1;

/* arg: &f16_kernel for the f16 kernel, else NULL. */
static char *build_rope(wgt_webgpu *w, const void *arg) {
    (void)w;
    int f16 = arg == &f16_kernel;
    wgt_wgsl_pieces helpers = {0};
    wgt_wgsl_pieces_add(&helpers, &wgt_wgsl_sin_cos);
    if (f16) wgt_wgsl_pieces_add(&helpers, &wgt_wgsl_unpack_f16);
    char cast[128], round16[128] = "";
    if (wgt_wgpu_cast_expr(WGT_I32, WGT_F32, cast, sizeof cast, &helpers) != WGT_OK ||
        (f16 && wgt_wgpu_cast_expr(WGT_F32, WGT_F16, round16, sizeof round16, &helpers) != WGT_OK))
        return NULL;
    char *text = wgt_wgsl_pieces_text(&helpers);
    const char *source = wgt_wgsl_source("rope"), *body = wgt_wgsl_source(f16 ? "rope_f16" : "rope_f32");
    char *filled = NULL;
    if (body) {
        const char *body_pairs[] = {"F32_AS_F16", round16, NULL};
        filled = wgt_wgsl_expand(body, body_pairs);
    }
    const char *pairs[] = {"HELPERS",        text ? text : "", "I32_AS_F32", cast, "STORAGE", f16 ? "u32" : "f32",
                           "BODY", filled ? filled : "", NULL};
    char *out = text && source && filled ? wgt_wgsl_expand(source, pairs) : NULL;
    free(text);
    free(filled);
    return out;
}

wgt_status wgt_wgpu_rope(wgt_backend *be, const wgt_operand *out, const wgt_operand *x, const wgt_operand *positions,
                         const wgt_operand *freqs) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    int64_t B = x->shape[0], S = x->shape[1], d = x->shape[2];
    int f16 = x->dtype == WGT_F16;
    /* f16 takes two neighbouring pairs an invocation, whose stores are whole words: d % 4 == 0. */
    if (x->ndim != 3 || (x->dtype != WGT_F32 && !f16) || out->dtype != x->dtype || out->offset != 0 || d % (f16 ? 4 : 2) ||
        (positions && positions->dtype != WGT_I32) || freqs->dtype != WGT_F32 || freqs->shape[0] != d / 2)
        return wgt_error(WGT_ERR_INTERNAL, "rope of %s [%lld, %lld, %lld] into %s", wgt_dtype_name(x->dtype),
                         (long long)B, (long long)S, (long long)d, wgt_dtype_name(out->dtype));
    uint64_t pairs = (uint64_t)B * (uint64_t)S * (uint64_t)(d / 2), items = f16 ? pairs / 2 : pairs;
    if (pairs == 0) return WGT_OK;
    if (pairs > 0x7fffffffu || x->buffer->size / wgt_dtype_size(x->dtype) > 0x7fffffffu)
        return wgt_error(WGT_ERR_INTERNAL, "rope of %llu pairs in a buffer of %llu bytes: past 32-bit indexing",
                         (unsigned long long)pairs, (unsigned long long)x->buffer->size);
    struct {
        uint32_t items, seq, half, x_offset;
        int32_t x_sb, x_ss, x_sd;
        uint32_t p_offset;
        int32_t p_stride;
        uint32_t zero, has_pos, pad;
    } p = {(uint32_t)items,
           (uint32_t)S,
           (uint32_t)(d / 2),
           (uint32_t)x->offset,
           (int32_t)x->strides[0],
           (int32_t)x->strides[1],
           (int32_t)x->strides[2],
           positions ? (uint32_t)positions->offset : 0,
           positions ? (int32_t)positions->strides[0] : 0,
           0,
           positions != NULL,
           0};
    wgt_pipeline *pl;
    wgt_status st = wgt_wgpu_pipeline(w, f16 ? "rope:f16" : "rope:f32", 4, build_rope, f16 ? &f16_kernel : NULL, &pl);
    if (st != WGT_OK) return st;
    /* Without positions freqs stands in for the unused binding. */
    wgt_buffer *buffers[4] = {x->buffer, positions ? positions->buffer : freqs->buffer, freqs->buffer, out->buffer};
    return wgt_wgpu_dispatch(w, pl, buffers, &p, sizeof p, (items + 255) / 256);
}
