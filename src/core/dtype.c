/*
 * Data types and host-side f16 conversion. f16 is stored as IEEE binary16 bits in a
 * uint16_t on the host and packed two to a u32 on the GPU; arithmetic happens in f32.
 * The block types (q8_0, q4_0) have no per-element size: their storage is counted in
 * blocks of 32 elements (docs/quant.md).
 */
#include "wgtensor.h"

#include <string.h>

size_t wgt_dtype_size(wgt_dtype dtype) {
    switch (dtype) {
    case WGT_F32: case WGT_I32: case WGT_U32: return 4;
    case WGT_F16: return 2;
    case WGT_Q8_0: case WGT_Q4_0: return 0;
    }
    return 0;
}

int64_t wgt_dtype_block_elements(wgt_dtype dtype) {
    switch (dtype) {
    case WGT_Q8_0: case WGT_Q4_0: return 32;
    case WGT_F32: case WGT_F16: case WGT_I32: case WGT_U32: return 1;
    }
    return 0;
}

size_t wgt_dtype_block_bytes(wgt_dtype dtype) {
    switch (dtype) {
    case WGT_Q8_0: return 34;
    case WGT_Q4_0: return 18;
    case WGT_F32: case WGT_F16: case WGT_I32: case WGT_U32: return wgt_dtype_size(dtype);
    }
    return 0;
}

const char *wgt_dtype_name(wgt_dtype dtype) {
    switch (dtype) {
    case WGT_F32: return "f32";
    case WGT_F16: return "f16";
    case WGT_I32: return "i32";
    case WGT_U32: return "u32";
    case WGT_Q8_0: return "q8_0";
    case WGT_Q4_0: return "q4_0";
    }
    return "unknown";
}

float wgt_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    uint32_t bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (man << 13); /* inf or nan, payload kept */
    } else if (exp != 0) {
        bits = sign | ((exp + 112u) << 23) | (man << 13);
    } else if (man == 0) {
        bits = sign;
    } else { /* subnormal: normalise */
        int e = -1;
        do { man <<= 1; e++; } while ((man & 0x400u) == 0);
        bits = sign | ((uint32_t)(112 - e) << 23) | ((man & 0x3ffu) << 13);
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

uint16_t wgt_f32_to_f16(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t exp = (x >> 23) & 0xffu;
    uint32_t man = x & 0x7fffffu;
    if (exp == 0xff) /* inf stays inf; nan stays a quiet nan */
        return (uint16_t)(sign | 0x7c00u | (man ? 0x200u | (man >> 13) : 0));
    int e = (int)exp - 127 + 15;
    if (e >= 0x1f) return (uint16_t)(sign | 0x7c00u);
    if (e <= 0) { /* subnormal or zero in f16 */
        if (e < -10) return sign;
        man |= 0x800000u;
        uint32_t shift = (uint32_t)(14 - e);
        uint32_t half = man >> shift;
        uint32_t rem = man & ((1u << shift) - 1);
        uint32_t mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1u))) half++;
        return (uint16_t)(sign | half);
    }
    uint32_t half = ((uint32_t)e << 10) | (man >> 13);
    uint32_t rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) half++; /* may carry into inf: right */
    return (uint16_t)(sign | half);
}
