/*
 * Philox4x32-10 (Salmon, Moraes, Dror and Shaw, "Parallel random numbers: as easy as 1, 2,
 * 3", SC 2011; Random123's philox4x32 with 10 rounds): a counter-based generator, so element
 * i's value is a pure function of (seed, i) and the CPU backend computes it exactly as the
 * WebGPU kernel (wgsl/random.wgsl) does, in any order and on any number of threads. The
 * mapping of the output words to values is the random entry's (backend.h).
 */
#ifndef WGT_BACKEND_PHILOX_H
#define WGT_BACKEND_PHILOX_H

#include <stdint.h>

#define WGT_PHILOX_M0 0xD2511F53u
#define WGT_PHILOX_M1 0xCD9E8D57u
#define WGT_PHILOX_W0 0x9E3779B9u
#define WGT_PHILOX_W1 0xBB67AE85u

/* out = Philox4x32-10(counter c, key k). */
static inline void wgt_philox4x32(const uint32_t c[4], const uint32_t k[2], uint32_t out[4]) {
    uint32_t x0 = c[0], x1 = c[1], x2 = c[2], x3 = c[3], k0 = k[0], k1 = k[1];
    for (int r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)WGT_PHILOX_M0 * x0, p1 = (uint64_t)WGT_PHILOX_M1 * x2;
        uint32_t y0 = (uint32_t)(p1 >> 32) ^ x1 ^ k0, y1 = (uint32_t)p1;
        uint32_t y2 = (uint32_t)(p0 >> 32) ^ x3 ^ k1, y3 = (uint32_t)p0;
        x0 = y0, x1 = y1, x2 = y2, x3 = y3;
        k0 += WGT_PHILOX_W0;
        k1 += WGT_PHILOX_W1;
    }
    out[0] = x0, out[1] = x1, out[2] = x2, out[3] = x3;
}

#endif
