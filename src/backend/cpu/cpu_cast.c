/*
 * Casts of the CPU backend that involve a narrow type (bool, i8, u8, i16, u16, bf16) or a
 * 64-bit integer (i64, u64) on either side; casts among f32, f16, i32 and u32 keep their
 * dense loops in cpu_unary.c. Every element goes through one value, a float (the float
 * types, exact in f32) or a 64-bit integer (the integer types and bool, exact: u64 as its
 * bits, flagged unsigned), and is stored by the rules of docs/ops.md:
 *   - float to integer truncates toward zero, saturates at the type's range, NaN gives 0;
 *   - integer to integer keeps the low bits (two's complement wrap);
 *   - integer to float converts to f32 (nearest even), then rounds to f16 or bf16;
 *   - anything to bool is "nonzero" (NaN is true, -0 is false); bool is 0 or 1.
 * The rules are the same ones the WebGPU kernels follow, so this is their oracle.
 */
#include <math.h>
#include <string.h>

#include "core/dtype_table.h"
#include "cpu_kernels.h"
#include "cpu_walk.h"

typedef struct {
    int is_float, is_u64;
    float f;
    int64_t i; /* u64: the bits */
} cast_value;

static cast_value load_value(const wgt_operand *t, int64_t k) {
    const char *p = t->host;
    cast_value v = {0, 0, 0.0f, 0};
    switch (t->dtype) {
    case WGT_F32: memcpy(&v.f, p + 4 * k, 4), v.is_float = 1; break;
    case WGT_F16: v.f = wgt_f16_to_f32(((const uint16_t *)t->host)[k]), v.is_float = 1; break;
    case WGT_BF16: v.f = wgt_bf16_to_f32(((const uint16_t *)t->host)[k]), v.is_float = 1; break;
    case WGT_I32: v.i = ((const int32_t *)t->host)[k]; break;
    case WGT_U32: v.i = ((const uint32_t *)t->host)[k]; break;
    case WGT_I16: v.i = ((const int16_t *)t->host)[k]; break;
    case WGT_U16: v.i = ((const uint16_t *)t->host)[k]; break;
    case WGT_I8: v.i = ((const int8_t *)t->host)[k]; break;
    case WGT_U8: v.i = ((const uint8_t *)t->host)[k]; break;
    case WGT_BOOL: v.i = ((const uint8_t *)t->host)[k] != 0; break;
    case WGT_I64: v.i = ((const int64_t *)t->host)[k]; break;
    case WGT_U64: memcpy(&v.i, p + 8 * k, 8), v.is_u64 = 1; break;
    default: break; /* block types never reach a kernel: the core refuses them */
    }
    return v;
}

/* The bits of the integer a float converts to: truncated, saturated at the type's range,
 * NaN 0. i64 and u64 saturate below their max, which is one past their largest value. */
static uint64_t float_to_integer(float f, const wgt_dtype_info *info) {
    if (isnan(f)) return 0;
    double d = trunc((double)f);
    if (d <= info->min) return (uint64_t)(int64_t)info->min;
    if (info->size == 8 && d >= info->max) return info->kind == WGT_KIND_INT ? (uint64_t)INT64_MAX : UINT64_MAX;
    if (d >= info->max) return (uint64_t)(int64_t)info->max;
    return info->kind == WGT_KIND_UINT ? (uint64_t)d : (uint64_t)(int64_t)d;
}

static void store_value(const wgt_operand *t, int64_t k, cast_value v) {
    const wgt_dtype_info *info = wgt_dtype_info_of(t->dtype);
    if (info->kind == WGT_KIND_FLOAT) {
        /* nearest even (exact below 2^24); the conversion from 64 bits rounds once */
        float f = v.is_float ? v.f : v.is_u64 ? (float)(uint64_t)v.i : (float)v.i;
        if (t->dtype == WGT_F32) memcpy((char *)t->host + 4 * k, &f, 4);
        else ((uint16_t *)t->host)[k] = t->dtype == WGT_F16 ? wgt_f32_to_f16(f) : wgt_f32_to_bf16(f);
        return;
    }
    if (info->kind == WGT_KIND_BOOL) {
        ((uint8_t *)t->host)[k] = v.is_float ? (v.f != 0 || isnan(v.f)) : v.i != 0;
        return;
    }
    uint64_t bits = v.is_float ? float_to_integer(v.f, info) : (uint64_t)v.i; /* low bits: the wrap */
    switch (info->size) {
    case 8: memcpy((char *)t->host + 8 * k, &bits, 8); break;
    case 4: ((uint32_t *)t->host)[k] = (uint32_t)bits; break;
    case 2: ((uint16_t *)t->host)[k] = (uint16_t)bits; break;
    default: ((uint8_t *)t->host)[k] = (uint8_t)bits; break;
    }
}

typedef struct {
    const wgt_operand *out, *a;
} narrow_cast_job;

static void narrow_cast_run(void *arg, const int64_t *base, const int64_t *step, int64_t len, int slot) {
    (void)slot;
    const narrow_cast_job *j = arg;
    for (int64_t i = 0; i < len; i++) store_value(j->out, base[0] + i * step[0], load_value(j->a, base[1] + i * step[1]));
}

wgt_status wgt_cpu_cast_narrow(wgt_backend *be, const wgt_operand *out, const wgt_operand *a) {
    wgt_cpu_advise_output(out);
    narrow_cast_job job = {out, a};
    const wgt_operand *ops[2] = {out, a};
    wgt_cpu_walk w;
    wgt_cpu_walk_init(&w, out->ndim, out->shape, 2, ops);
    wgt_cpu_walk_run(be, &w, 5.0, narrow_cast_run, &job);
    return WGT_OK;
}
