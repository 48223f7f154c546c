/*
 * Elementwise CPU kernels over strided operands. Integer arithmetic is done in unsigned
 * types so overflow wraps as on the GPU instead of being undefined; integer division
 * truncates and a zero divisor gives 0 (the WebGPU kernels do the same).
 */
#include <string.h>

#include "backend/strided_iter.h"
#include "cpu_kernels.h"

static float f32_op(wgt_binary_op op, float x, float y) {
    switch (op) {
    case WGT_BINARY_ADD: return x + y;
    case WGT_BINARY_SUB: return x - y;
    case WGT_BINARY_MUL: return x * y;
    case WGT_BINARY_DIV: return x / y;
    default: return 0;
    }
}

static uint32_t u32_op(wgt_binary_op op, uint32_t x, uint32_t y) {
    switch (op) {
    case WGT_BINARY_ADD: return x + y;
    case WGT_BINARY_SUB: return x - y;
    case WGT_BINARY_MUL: return x * y;
    case WGT_BINARY_DIV: return y == 0 ? 0 : x / y;
    default: return 0;
    }
}

static int32_t i32_op(wgt_binary_op op, int32_t x, int32_t y) {
    if (op == WGT_BINARY_DIV) {
        if (y == 0) return 0;
        if (x == INT32_MIN && y == -1) return INT32_MIN; /* wraps, as two's complement does */
        return x / y;
    }
    uint32_t r = u32_op(op, (uint32_t)x, (uint32_t)y);
    int32_t out;
    memcpy(&out, &r, sizeof out);
    return out;
}

wgt_status wgt_cpu_binary(wgt_backend *be, wgt_binary_op op, const wgt_operand *out, const wgt_operand *a,
                          const wgt_operand *b) {
    (void)be;
    const int64_t *strides[3] = {out->strides, a->strides, b->strides};
    int64_t offsets[3] = {out->offset, a->offset, b->offset};
    int64_t inner, is[3];
    wgt_strided_iter it;
    wgt_strided_iter_init(&it, out->ndim, out->shape, 3, strides, offsets, &inner, is);
    do {
        int64_t o = it.base[0], x = it.base[1], y = it.base[2];
        switch (out->dtype) {
        case WGT_F32: {
            float *po = out->host;
            const float *pa = a->host, *pb = b->host;
            for (int64_t i = 0; i < inner; i++) po[o + i * is[0]] = f32_op(op, pa[x + i * is[1]], pb[y + i * is[2]]);
            break;
        }
        case WGT_F16: {
            uint16_t *po = out->host;
            const uint16_t *pa = a->host, *pb = b->host;
            for (int64_t i = 0; i < inner; i++)
                po[o + i * is[0]] = wgt_f32_to_f16(
                    f32_op(op, wgt_f16_to_f32(pa[x + i * is[1]]), wgt_f16_to_f32(pb[y + i * is[2]])));
            break;
        }
        case WGT_I32: {
            int32_t *po = out->host;
            const int32_t *pa = a->host, *pb = b->host;
            for (int64_t i = 0; i < inner; i++) po[o + i * is[0]] = i32_op(op, pa[x + i * is[1]], pb[y + i * is[2]]);
            break;
        }
        case WGT_U32: {
            uint32_t *po = out->host;
            const uint32_t *pa = a->host, *pb = b->host;
            for (int64_t i = 0; i < inner; i++) po[o + i * is[0]] = u32_op(op, pa[x + i * is[1]], pb[y + i * is[2]]);
            break;
        }
        }
    } while (wgt_strided_iter_next(&it));
    return WGT_OK;
}

wgt_status wgt_cpu_copy(wgt_backend *be, const wgt_operand *dst, const wgt_operand *src) {
    (void)be;
    size_t es = wgt_dtype_size(src->dtype);
    const int64_t *strides[2] = {dst->strides, src->strides};
    int64_t offsets[2] = {dst->offset, src->offset};
    int64_t inner, is[2];
    wgt_strided_iter it;
    wgt_strided_iter_init(&it, dst->ndim, dst->shape, 2, strides, offsets, &inner, is);
    char *d = dst->host;
    const char *s = src->host;
    do {
        for (int64_t i = 0; i < inner; i++)
            memcpy(d + (size_t)(it.base[0] + i * is[0]) * es, s + (size_t)(it.base[1] + i * is[1]) * es, es);
    } while (wgt_strided_iter_next(&it));
    return WGT_OK;
}
