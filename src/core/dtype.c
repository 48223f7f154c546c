/*
 * Data types (one table) and host-side f16 and bf16 conversion. f16 and bf16 are stored as
 * their 16 bits on the host and packed two to a u32 on the GPU; arithmetic happens in f32.
 * The one-byte types (bool, i8, u8) are packed four to a word on the GPU.
 * The block types (q8_0, q4_0) have no per-element size: their storage is counted in
 * blocks of 32 elements (docs/quant.md).
 */
#include "wgtensor.h"

#include <string.h>

#include "core/dtype_table.h"

/* One row per type, indexed by the enum's value; the rest of the library asks this table
 * instead of switching over types. */
static const wgt_dtype_info table[] = {
    [WGT_F32] = {"f32", 4, 1, 4, WGT_KIND_FLOAT, 0, 0},
    [WGT_F16] = {"f16", 2, 1, 2, WGT_KIND_FLOAT, 0, 0},
    [WGT_I32] = {"i32", 4, 1, 4, WGT_KIND_INT, -2147483648.0, 2147483647.0},
    [WGT_U32] = {"u32", 4, 1, 4, WGT_KIND_UINT, 0, 4294967295.0},
    [WGT_Q8_0] = {"q8_0", 0, 32, 34, WGT_KIND_BLOCK, 0, 0},
    [WGT_Q4_0] = {"q4_0", 0, 32, 18, WGT_KIND_BLOCK, 0, 0},
    [WGT_BOOL] = {"bool", 1, 1, 1, WGT_KIND_BOOL, 0, 1},
    [WGT_I8] = {"i8", 1, 1, 1, WGT_KIND_INT, -128, 127},
    [WGT_U8] = {"u8", 1, 1, 1, WGT_KIND_UINT, 0, 255},
    [WGT_I16] = {"i16", 2, 1, 2, WGT_KIND_INT, -32768, 32767},
    [WGT_U16] = {"u16", 2, 1, 2, WGT_KIND_UINT, 0, 65535},
    [WGT_BF16] = {"bf16", 2, 1, 2, WGT_KIND_FLOAT, 0, 0},
    /* The doubles 2^63 and 2^64 are one past the largest values: range checks of these two
     * types compare with < max (wgt_dtype_in_range). */
    [WGT_I64] = {"i64", 8, 1, 8, WGT_KIND_INT, -9223372036854775808.0, 9223372036854775808.0},
    [WGT_U64] = {"u64", 8, 1, 8, WGT_KIND_UINT, 0, 18446744073709551616.0},
};

const wgt_dtype_info *wgt_dtype_info_of(wgt_dtype dtype) {
    static const wgt_dtype_info unknown = {"unknown", 0, 0, 0, WGT_KIND_UNKNOWN, 0, 0};
    if ((unsigned)dtype >= sizeof table / sizeof table[0] || !table[dtype].name) return &unknown;
    return &table[dtype];
}

size_t wgt_dtype_size(wgt_dtype dtype) { return wgt_dtype_info_of(dtype)->size; }
int64_t wgt_dtype_block_elements(wgt_dtype dtype) { return wgt_dtype_info_of(dtype)->block_elements; }
size_t wgt_dtype_block_bytes(wgt_dtype dtype) { return wgt_dtype_info_of(dtype)->block_bytes; }
const char *wgt_dtype_name(wgt_dtype dtype) { return wgt_dtype_info_of(dtype)->name; }

int wgt_dtype_is_narrow(wgt_dtype dtype) { return dtype >= WGT_BOOL && dtype <= WGT_BF16; }
int wgt_dtype_is_64bit(wgt_dtype dtype) { return dtype == WGT_I64 || dtype == WGT_U64; }
int wgt_dtype_in_range(wgt_dtype dtype, double v) {
    const wgt_dtype_info *info = wgt_dtype_info_of(dtype);
    return v >= info->min && (wgt_dtype_is_64bit(dtype) ? v < info->max : v <= info->max);
}
int wgt_dtype_is_float(wgt_dtype dtype) { return wgt_dtype_info_of(dtype)->kind == WGT_KIND_FLOAT; }
int wgt_dtype_is_integer(wgt_dtype dtype) {
    wgt_dtype_kind k = wgt_dtype_info_of(dtype)->kind;
    return k == WGT_KIND_INT || k == WGT_KIND_UINT;
}

static float float_of_bits(uint32_t bits) {
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

int wgt_dtype_promote(wgt_dtype a, wgt_dtype b, wgt_dtype *out, const char **why) {
    const wgt_dtype_info *ia = wgt_dtype_info_of(a), *ib = wgt_dtype_info_of(b);
    *why = NULL;
    if (a == b) return *out = a, 1;
    if (ia->kind == WGT_KIND_FLOAT && ib->kind == WGT_KIND_FLOAT) { /* f16 with bf16 too: f32 holds both */
        *out = ia->size == 4 ? a : ib->size == 4 ? b : WGT_F32;
        return 1;
    }
    if (ia->kind == ib->kind && (ia->kind == WGT_KIND_INT || ia->kind == WGT_KIND_UINT)) {
        *out = ia->size >= ib->size ? a : b;
        return 1;
    }
    if (wgt_dtype_is_integer(a) && wgt_dtype_is_integer(b)) {
        /* The signed type wider than the unsigned one and at least as wide as the signed. */
        const wgt_dtype_info *s = ia->kind == WGT_KIND_INT ? ia : ib, *u = s == ia ? ib : ia;
        static const wgt_dtype signed_types[] = {WGT_I8, WGT_I16, WGT_I32, WGT_I64};
        for (size_t k = 0; k < sizeof signed_types / sizeof signed_types[0]; k++) {
            size_t size = wgt_dtype_size(signed_types[k]);
            if (size > u->size && size >= s->size) return *out = signed_types[k], 1;
        }
        *why = "u64 with a signed type has no common type (it would need 128 bits)";
        return 0;
    }
    if (ia->kind == WGT_KIND_BLOCK || ib->kind == WGT_KIND_BLOCK || ia->kind == WGT_KIND_UNKNOWN ||
        ib->kind == WGT_KIND_UNKNOWN) {
        *why = "block and unknown types do not promote";
        return 0;
    }
    *why = ia->kind == WGT_KIND_BOOL || ib->kind == WGT_KIND_BOOL
               ? "the array API leaves bool with a number undefined"
               : "the array API leaves an integer with a float undefined";
    return 0;
}

float wgt_bf16_to_f32(uint16_t b) { return float_of_bits((uint32_t)b << 16); }

uint16_t wgt_f32_to_bf16(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u); /* quiet, sign kept */
    x += 0x7fffu + ((x >> 16) & 1u); /* nearest even; the largest finite values carry into infinity */
    return (uint16_t)(x >> 16);
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
    return float_of_bits(bits);
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
