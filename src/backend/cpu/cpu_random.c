/*
 * Counter-based random numbers on the CPU (backend.h's random entry): each element is a
 * function of its index and the seed alone (philox.h), so tasks split the output in any way
 * and the values equal the WebGPU kernel's (wgsl/random.wgsl), which runs the same steps in
 * f32. Float expressions are written one rounding at a time (the library is built as ISO C,
 * where compilers do not contract a multiply and an add into one fused multiply-add).
 */
#include <string.h>

/* GCC contracts nothing in ISO C mode (-std=c11); clang contracts a * b + c within one
 * expression by default, which would make these values differ from the WebGPU kernel's. */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

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

/* Box-Muller's log, sqrt and cos written out in f32 additions and multiplications, which
 * IEEE 754 rounds the same way everywhere (WGSL's log, cos and sqrt are each platform's:
 * lavapipe's cos is off by up to ~4e-6), so normal draws are bit for bit the WebGPU kernel's,
 * whose copy of these lines (wgsl/random.wgsl) keeps every product from fusing with the add
 * after it. Taylor series on reduced ranges: ln(m) for m in [sqrt(1/2), sqrt(2)) to 20 terms,
 * cos and sin of [0, pi/4] to 6, sqrt by three Newton steps of the inverse square root. */
static const float LN_C[20] = {0x1.0p+0f, -0x1.0p-1f, 0x1.555556p-2f, -0x1.0p-2f, 0x1.99999ap-3f, -0x1.555556p-3f, 0x1.24924ap-3f, -0x1.0p-3f, 0x1.c71c72p-4f, -0x1.99999ap-4f, 0x1.745d18p-4f, -0x1.555556p-4f, 0x1.3b13b2p-4f, -0x1.24924ap-4f, 0x1.111112p-4f, -0x1.0p-4f, 0x1.e1e1e2p-5f, -0x1.c71c72p-5f, 0x1.af286cp-5f, -0x1.99999ap-5f};
static const float COS_C[6] = {0x1.0p+0f, -0x1.0p-1f, 0x1.555556p-5f, -0x1.6c16c2p-10f, 0x1.a01a02p-16f, -0x1.27e4fcp-22f};
static const float SIN_C[6] = {0x1.0p+0f, -0x1.555556p-3f, 0x1.111112p-7f, -0x1.a01a02p-13f, 0x1.71de3ap-19f, -0x1.ae6456p-26f};

static uint32_t bits_of(float f) {
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

static float float_of(uint32_t b) {
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

/* ln(u) for a normal u in (0, 1]: u = 2^e m, ln(u) = e ln 2 + ln(1 + (m - 1)). */
static float ln_unit(float u) {
    uint32_t b = bits_of(u);
    int e = (int)(b >> 23) - 127;
    float m = float_of((b & 0x7fffffu) | 0x3f800000u);
    if (m > 0x1.6a09e6p+0f) m = m * 0.5f, e += 1;
    float f = m - 1.0f, p = LN_C[19];
    for (int k = 18; k >= 0; k--) p = LN_C[k] + f * p;
    return (float)e * 0x1.62e43p-1f + f * p;
}

static float sqrt_det(float v) {
    if (v == 0) return 0;
    float y = float_of(0x5f3759dfu - (bits_of(v) >> 1)), h = 0.5f * v;
    for (int k = 0; k < 3; k++) {
        float t = h * y * y;
        y = y * (1.5f - t);
    }
    return v * y;
}

/* cos(2 pi t) for t in [0, 1) of 24 bits: the folds (1 - t, 0.5 - t, 0.25 - t) are exact. */
static float cos_turn(float t) {
    float sign = 1, p;
    if (t > 0.5f) t = 1.0f - t;
    if (t > 0.25f) t = 0.5f - t, sign = -1;
    int use_sin = t > 0.125f;
    if (use_sin) t = 0.25f - t;
    float x = t * 0x1.921fb6p+2f, x2 = x * x;
    const float *c = use_sin ? SIN_C : COS_C;
    p = c[5];
    for (int k = 4; k >= 0; k--) p = c[k] + x2 * p;
    return sign * (use_sin ? x * p : p);
}

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
        float z = sqrt_det(-2.0f * ln_unit(u1)) * cos_turn(u2);
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
