/*
 * The sort order of every backend as 32-bit keys whose unsigned order is the order of the
 * values: integers by flipping the sign bit (i32) or as they are (u32); floats by their bits
 * with the sign bit set for positives and all bits flipped for negatives, after -0.0 becomes
 * 0.0 (they are equal) and every NaN the largest key (NaN counts above +inf, NaNs equal).
 * f16 and bf16 keys work the same way on their 16 bits; i8 and i16 flip their own sign bit,
 * u8, u16 and bool are their bits: narrow keys fill only the low 8 or 16 bits. A descending
 * sort uses the complemented keys. The WebGPU kernels (wgsl/sort_keys.wgsl) compute the same
 * keys.
 */
#ifndef WGT_BACKEND_SORT_KEYS_H
#define WGT_BACKEND_SORT_KEYS_H

#include <stdint.h>

static inline uint32_t wgt_sort_key_f32(uint32_t bits) {
    if ((bits & 0x7fffffffu) > 0x7f800000u) return 0xffffffffu; /* NaN */
    if (bits == 0x80000000u) bits = 0;                            /* -0.0 */
    return bits & 0x80000000u ? ~bits : bits | 0x80000000u;
}

/* 16-bit float keys from the half's own bits (the same order as through f32, and no
 * conversion that a device might flush): 16-bit keys in a 32-bit word. inf is the bits of
 * +inf: f16 and bf16 differ only there. */
static inline uint32_t wgt_sort_key_half(uint32_t bits, uint32_t inf) {
    if ((bits & 0x7fffu) > inf) return 0xffffu; /* NaN */
    if (bits == 0x8000u) bits = 0;               /* -0.0 */
    return bits & 0x8000u ? ~bits & 0xffffu : bits | 0x8000u;
}

static inline uint32_t wgt_sort_key_f16(uint32_t bits) { return wgt_sort_key_half(bits, 0x7c00u); }
static inline uint32_t wgt_sort_key_bf16(uint32_t bits) { return wgt_sort_key_half(bits, 0x7f80u); }

#endif
