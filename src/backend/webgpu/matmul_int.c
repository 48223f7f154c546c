/*
 * Integer matrix products on WebGPU (wgsl/matmul_int.wgsl): i32, u32, i64 and u64, wrapping
 * modulo 2^bits; the core computes the narrow integers in i32 and casts back (core/linalg.c).
 * One kernel per element width: 32-bit values multiply and add as u32, which WGSL wraps, so
 * i32 and u32 share it; 64-bit values are word pairs with int64_words.wgsl's arithmetic.
 * The operands are read in place through their strides (transposed, sliced, broadcast batch
 * dimensions of stride 0), in 64 x 64 output tiles per workgroup. A float kernel would be
 * faster on tensor hardware but cannot be exact: integer products are for correctness here
 * (indices, counts, quantized arithmetic), not speed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webgpu_internal.h"

#define TILE 64 /* outputs per workgroup along M and N (matmul_int.wgsl) */

/* Mirrors struct Params in matmul_int.wgsl. */
typedef struct {
    uint32_t M, N, K, batch_ndim;
    uint32_t tiles_m, tiles_n, a_offset, b_offset;
    int32_t a_sm, a_sk, b_sk, b_sn;
    uint32_t groups, pad[3];
    uint32_t batch_shape[8];
    int32_t a_batch[8];
    int32_t b_batch[8];
} int_params;

_Static_assert(sizeof(int_params) == 160, "int_params must match the WGSL Params layout");

static const char element32[] =
    "alias E = u32;\n"
    "fn zero() -> E { return 0u; }\n"
    "fn load_a(i: i32) -> E { return a[u32(i)]; }\n"
    "fn load_b(i: i32) -> E { return b[u32(i)]; }\n"
    "fn mul_e(x: E, y: E) -> E { return x * y; }\n"
    "fn add_e(x: E, y: E) -> E { return x + y; }\n"
    "fn store(e: u32, v: E) { out[e] = v; }\n";

static const char element64[] =
    "alias E = vec2<u32>;\n"
    "fn zero() -> E { return vec2<u32>(0u, 0u); }\n"
    "fn load_a(i: i32) -> E { let w = 2u * u32(i); return vec2<u32>(a[w], a[w + 1u]); }\n"
    "fn load_b(i: i32) -> E { let w = 2u * u32(i); return vec2<u32>(b[w], b[w + 1u]); }\n"
    "fn mul_e(x: E, y: E) -> E { return mul64(x, y); }\n"
    "fn add_e(x: E, y: E) -> E { return add64(x, y); }\n"
    "fn store(e: u32, v: E) { out[2u * e] = v.x; out[2u * e + 1u] = v.y; }\n";

static char *build(wgt_webgpu *w, const void *arg) {
    (void)w;
    int wide = *(const int *)arg;
    const char *text = wgt_wgsl_source("matmul_int"), *words = wgt_wgsl_source("int64_words");
    if (!text || !words) return NULL;
    size_t n = strlen(words) + sizeof element64 + 1;
    char *element = malloc(n);
    if (!element) return NULL;
    snprintf(element, n, "%s%s", wide ? words : "", wide ? element64 : element32);
    const char *pairs[] = {"ELEMENT", element, NULL};
    char *out = wgt_wgsl_expand(text, pairs);
    free(element);
    return out;
}

/* Whether every element x reaches lies below 2^31 / words, so the kernel's i32 element
 * indices and u32 word indices cannot wrap (a view never reaches below element 0). */
static int fits(const wgt_operand *x, uint64_t words) {
    int64_t hi = x->offset;
    for (int d = 0; d < x->ndim; d++)
        if (x->shape[d] > 1 && x->strides[d] > 0) hi += (x->shape[d] - 1) * x->strides[d];
    return (uint64_t)hi < ((uint64_t)1 << 31) / words;
}

/* A stride as the kernel sees it: 0 for a length-1 dimension, whose stride is never used. */
static int32_t stride_of(const wgt_operand *x, int d) { return x->shape[d] == 1 ? 0 : (int32_t)x->strides[d]; }

wgt_status wgt_wgpu_matmul_int(wgt_webgpu *w, const wgt_operand *out, const wgt_operand *a, const wgt_operand *b) {
    int nd = out->ndim, wide = wgt_dtype_size(out->dtype) == 8;
    if (nd < 2 || nd > WGT_MAX_DIMS) return wgt_error(WGT_ERR_INTERNAL, "integer matmul output of rank %d", nd);
    if (out->offset != 0)
        return wgt_error(WGT_ERR_INTERNAL, "integer matmul output at offset %lld", (long long)out->offset);
    int64_t M = out->shape[nd - 2], N = out->shape[nd - 1], K = a->shape[nd - 1];
    int_params p;
    memset(&p, 0, sizeof p);
    uint64_t batch = 1;
    for (int d = 0; d < nd - 2; d++) {
        batch *= (uint64_t)out->shape[d];
        p.batch_shape[d] = (uint32_t)out->shape[d];
        p.a_batch[d] = stride_of(a, d);
        p.b_batch[d] = stride_of(b, d);
    }
    uint64_t total = batch * (uint64_t)M * (uint64_t)N, words = wide ? 2 : 1;
    if (total == 0) return WGT_OK;
    if (!fits(a, words) || !fits(b, words) || total >= ((uint64_t)1 << 31) / words || (uint64_t)K > INT32_MAX)
        return wgt_error(WGT_ERR_LIMIT, "wgt_matmul: %s product of %llu outputs over K = %lld reaches past the "
                         "integer kernel's 31-bit element indices", wgt_dtype_name(out->dtype),
                         (unsigned long long)total, (long long)K);
    p.M = (uint32_t)M, p.N = (uint32_t)N, p.K = (uint32_t)K, p.batch_ndim = (uint32_t)(nd - 2);
    p.tiles_m = (uint32_t)((M + TILE - 1) / TILE), p.tiles_n = (uint32_t)((N + TILE - 1) / TILE);
    p.a_offset = (uint32_t)a->offset, p.b_offset = (uint32_t)b->offset;
    p.a_sm = stride_of(a, nd - 2), p.a_sk = stride_of(a, nd - 1);
    p.b_sk = stride_of(b, nd - 2), p.b_sn = stride_of(b, nd - 1);
    uint64_t groups = batch * p.tiles_m * p.tiles_n; /* at most total: fits in u32 */
    p.groups = (uint32_t)groups;
    wgt_pipeline *pl;
    wgt_status st = wgt_wgpu_pipeline(w, wide ? "matmul_int:64" : "matmul_int:32", 3, build, &wide, &pl);
    if (st != WGT_OK) return st;
    wgt_buffer *buffers[3] = {a->buffer, b->buffer, out->buffer};
    return wgt_wgpu_dispatch(w, pl, buffers, &p, sizeof p, groups);
}
