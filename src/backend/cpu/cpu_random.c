/*
 * Counter-based random numbers on the CPU (backend.h's random entry): each element is a
 * function of its index and the seed alone (philox.h), so tasks split the output in any way
 * and the values equal the WebGPU kernel's (wgsl/random.wgsl), which runs the same steps in
 * f32. Float expressions are written one rounding at a time (the library is built as ISO C,
 * where compilers do not contract a multiply and an add into one fused multiply-add).
 */
#include <math.h>
#include <string.h>

#include "backend/philox.h"
#include "cpu_kernels.h"
#include "cpu_threads.h"
#include "cpu_walk.h" /* wgt_cpu_pool_of */

#define CHUNK 16384

typedef struct {
    const wgt_random_params *p;
    uint32_t key[2];
    uint32_t *out;
    int64_t n;
} random_job;

static uint32_t element(const wgt_random_params *p, const uint32_t key[2], int64_t i) {
    uint32_t c[4] = {(uint32_t)i, (uint32_t)((uint64_t)i >> 32), 0, 0}, w[4];
    wgt_philox4x32(c, key, w);
    float v;
    switch (p->kind) {
    case WGT_RANDOM_UNIFORM: {
        float u = (float)(w[0] >> 8) * 0x1p-24f;
        float scaled = p->b * u;
        v = p->a + scaled;
        if (v > p->c) v = p->c;
        break;
    }
    case WGT_RANDOM_NORMAL: {
        float u1 = (float)((w[0] >> 8) + 1) * 0x1p-24f, u2 = (float)(w[1] >> 8) * 0x1p-24f;
        float turn = 6.2831855f * u2;
        float angle = turn - 3.1415927f;
        float z = sqrtf(-2.0f * logf(u1)) * cosf(angle);
        float scaled = p->b * z;
        v = p->a + scaled;
        break;
    }
    case WGT_RANDOM_INTEGER:
        return p->count >> 32 ? p->low + w[0] : p->low + (uint32_t)(((uint64_t)w[0] * p->count) >> 32);
    default: return w[0];
    }
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    return bits;
}

static void random_task(void *arg, int64_t task, int slot) {
    (void)slot;
    const random_job *j = arg;
    int64_t end = (task + 1) * CHUNK < j->n ? (task + 1) * CHUNK : j->n;
    for (int64_t i = task * CHUNK; i < end; i++) j->out[i] = element(j->p, j->key, i);
}

wgt_status wgt_cpu_random(wgt_backend *be, const wgt_operand *out, const wgt_operand *key,
                          const wgt_random_params *p) {
    int64_t n = 1;
    for (int d = 0; d < out->ndim; d++) n *= out->shape[d];
    random_job j = {p, {(uint32_t)p->seed, (uint32_t)(p->seed >> 32)}, (uint32_t *)out->host + out->offset, n};
    if (key) {
        const uint32_t *k = (const uint32_t *)key->host + key->offset;
        j.key[0] = k[0];
        j.key[1] = k[key->strides[0]];
    }
    wgt_cpu_pool_run(wgt_cpu_pool_of(be), (j.n + CHUNK - 1) / CHUNK, random_task, &j);
    return WGT_OK;
}
