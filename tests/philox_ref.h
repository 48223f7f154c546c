/*
 * Test reference of the device generator (src/backend/philox.h, docs/ops.md "Random numbers"),
 * written from the paper rather than shared with the library, so a wrong constant or word
 * shows as a difference.
 */
#ifndef WGT_TEST_PHILOX_REF_H
#define WGT_TEST_PHILOX_REF_H

#include <stdint.h>
#include <string.h>

/* Philox4x32-10 as Salmon et al. define it, 64-bit products written out. */
static inline void philox_ref(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]) {
    uint32_t c[4] = {ctr[0], ctr[1], ctr[2], ctr[3]}, k[2] = {key[0], key[1]};
    for (int round = 0; round < 10; round++) {
        if (round) k[0] += 0x9E3779B9u, k[1] += 0xBB67AE85u;
        uint64_t a = (uint64_t)0xD2511F53u * c[0], b = (uint64_t)0xCD9E8D57u * c[2];
        uint32_t n[4] = {(uint32_t)(b >> 32) ^ c[1] ^ k[0], (uint32_t)b, (uint32_t)(a >> 32) ^ c[3] ^ k[1], (uint32_t)a};
        memcpy(c, n, sizeof c);
    }
    memcpy(out, c, sizeof c);
}

static inline void words_of(uint64_t seed, int64_t i, uint32_t w[4]) {
    uint32_t c[4] = {(uint32_t)i, (uint32_t)((uint64_t)i >> 32), 0, 0}, k[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    philox_ref(c, k, w);
}

/* Draw i of wgt_rand_uniform(f32, ..., seed) for a = low, b = high - low, c the largest f32 below high. */
static inline float uniform_ref(uint64_t seed, int64_t i, float a, float b, float c) {
    uint32_t w[4];
    words_of(seed, i, w);
    float u = (float)(w[0] >> 8) * 0x1p-24f, scaled = b * u, v = a + scaled;
    return v > c ? c : v;
}

#endif
