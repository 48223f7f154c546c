/*
 * Counter-based random numbers on WebGPU (backend.h's random entry): one invocation per
 * element runs Philox4x32-10 (wgsl/random.wgsl), so nothing is uploaded from the host and
 * the values are the CPU backend's. One pipeline serves every kind and output type: the
 * kind travels in the uniform block, and every output type is one 32-bit word per element.
 */
#include <string.h>

#include "webgpu_internal.h"

#define WORKGROUP_SIZE 256u

typedef struct {
    uint32_t n, kind, key0, key1;
    float a, b, c;
    uint32_t low, count, zero, key_at, key_step;
} random_params;

static char *build_random(wgt_webgpu *w, const void *arg) {
    (void)w;
    int keyed = *(const int *)arg;
    const char *text = wgt_wgsl_source("random"), *words = wgt_wgsl_source("int64_words");
    const char *pairs[] = {"WORDS", words, "KEY_DECL", keyed ? "@group(0) @binding(0) var<storage, read> key_words: array<u32>;\n" : "",
                           "OUT", keyed ? "1" : "0", "UNIFORM", keyed ? "2" : "1",
                           "KEY0", keyed ? "key_words[params.key_at]" : "params.key0",
                           "KEY1", keyed ? "key_words[params.key_at + params.key_step]" : "params.key1", NULL};
    return text && words ? wgt_wgsl_expand(text, pairs) : NULL;
}

wgt_status wgt_wgpu_random(wgt_backend *be, const wgt_operand *out, const wgt_operand *key,
                           const wgt_random_params *p) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    if (out->offset != 0) return wgt_error(WGT_ERR_INTERNAL, "random output at offset %lld", (long long)out->offset);
    uint64_t n = 1;
    for (int d = 0; d < out->ndim; d++) n *= (uint64_t)out->shape[d];
    if (n == 0) return WGT_OK;
    if (n > UINT32_MAX) return wgt_error(WGT_ERR_INTERNAL, "random output of %llu elements", (unsigned long long)n);
    random_params q;
    memset(&q, 0, sizeof q);
    q.n = (uint32_t)n;
    q.kind = (uint32_t)p->kind;
    q.key0 = (uint32_t)p->seed;
    q.key1 = (uint32_t)(p->seed >> 32);
    q.a = p->a;
    q.b = p->b;
    q.c = p->c;
    q.low = p->low;
    q.count = (uint32_t)p->count; /* 2^32 becomes 0, which the kernel reads as such */
    int keyed = key != NULL;
    if (keyed) {
        q.key_at = (uint32_t)key->offset;
        q.key_step = (uint32_t)key->strides[0];
    }
    wgt_pipeline *pl;
    wgt_status st = wgt_wgpu_pipeline(w, keyed ? "random_keyed" : "random", 1 + keyed, build_random, &keyed, &pl);
    if (st != WGT_OK) return st;
    wgt_buffer *buffers[2] = {keyed ? key->buffer : out->buffer, out->buffer};
    return wgt_wgpu_dispatch(w, pl, buffers, &q, sizeof q, (n + WORKGROUP_SIZE - 1) / WORKGROUP_SIZE);
}
