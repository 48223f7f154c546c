/* CPU kernel entry points, one family per file. */
#ifndef WGT_CPU_KERNELS_H
#define WGT_CPU_KERNELS_H

#include <string.h>

#include "backend/backend.h"
#include "core/error.h"

/* wgt_f16_to_f32 for the kernels' inner loops: normal numbers inline (the exponent rebiased,
 * the mantissa shifted, exact), zeros, subnormals, infinities and NaN through the library's
 * function, so the result is the same in every case. */
static inline float wgt_cpu_f16_to_f32(uint16_t h) {
    uint32_t exponent = (h >> 10) & 0x1fu;
    if (exponent == 0 || exponent == 0x1f) return wgt_f16_to_f32(h);
    uint32_t bits = ((uint32_t)(h & 0x8000u) << 16) | ((uint32_t)(h & 0x7fffu) + 0x1c000u) << 13;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

wgt_status wgt_cpu_copy(wgt_backend *be, const wgt_operand *dst, const wgt_operand *src);
wgt_status wgt_cpu_binary(wgt_backend *be, wgt_binary_op op, const wgt_operand *out, const wgt_operand *a,
                          const wgt_operand *b);
/* cpu_unary.c: unary ops (params[0], params[1] as in backend.h), logical_not and casts */
wgt_status wgt_cpu_unary(wgt_backend *be, wgt_unary_op op, const wgt_operand *out, const wgt_operand *a,
                         const double *params);
wgt_status wgt_cpu_cast(wgt_backend *be, const wgt_operand *out, const wgt_operand *a);
/* cpu_cast.c: casts with a narrow type (bool, i8, u8, i16, u16, bf16) on either side */
/* cpu_int64.c: sum and prod of i64/u64 (wrapping modulo 2^64) and their running sum. */
wgt_status wgt_cpu_reduce64(const wgt_operand *out, wgt_reduce_op op, const wgt_operand *in, int reduce_ndim);
wgt_status wgt_cpu_cumsum64(const wgt_operand *out, const wgt_operand *in, int axis);
/* cpu_int64.c: add, sub, mul, maximum, minimum, comparisons, bitwise ops; neg, abs, bitwise_not. */
wgt_status wgt_cpu_binary64(wgt_binary_op op, const wgt_operand *out, const wgt_operand *a, const wgt_operand *b);
wgt_status wgt_cpu_unary64(wgt_unary_op op, const wgt_operand *out, const wgt_operand *a);
wgt_status wgt_cpu_cast_narrow(wgt_backend *be, const wgt_operand *out, const wgt_operand *a);
/* cpu_reduce.c */
wgt_status wgt_cpu_reduce(wgt_backend *be, wgt_reduce_op op, const wgt_operand *out, const wgt_operand *in,
                          int reduce_ndim, double param);
wgt_status wgt_cpu_cumsum(wgt_backend *be, const wgt_operand *out, const wgt_operand *in, int axis);
wgt_status wgt_cpu_scan(wgt_backend *be, wgt_scan_op op, const wgt_operand *out, const wgt_operand *in, int axis);
/* cpu_random.c: Philox4x32-10 values (backend.h's random entry) */
wgt_status wgt_cpu_random(wgt_backend *be, const wgt_operand *out, const wgt_operand *key,
                          const wgt_random_params *p);
/* cpu_rows.c: softmax, log_softmax, layer_norm, rms_norm over the last dimension */
wgt_status wgt_cpu_rows(wgt_backend *be, wgt_rows_op op, const wgt_operand *out, const wgt_operand *in,
                        const wgt_operand *weight, const wgt_operand *bias, double eps);
wgt_status wgt_cpu_where(wgt_backend *be, const wgt_operand *out, const wgt_operand *cond, const wgt_operand *a,
                         const wgt_operand *b);
/* cpu_sort.c: stable row sorts and binary searches (backend.h's sort_rows, searchsorted) */
wgt_status wgt_cpu_sort_rows(wgt_backend *be, const wgt_operand *values, const wgt_operand *indices,
                             const wgt_operand *in, int descending);
wgt_status wgt_cpu_searchsorted(wgt_backend *be, const wgt_operand *out, const wgt_operand *sorted,
                                const wgt_operand *values, int right);
/* cpu_matmul.c: OpenBLAS sgemv and sgemm for f32, a blocked double-accumulating loop for f16 */
wgt_status wgt_cpu_matmul(wgt_backend *be, const wgt_operand *out, const wgt_operand *a, const wgt_operand *b);
/* cpu_matmul_int.c: i32, u32, i64, u64 products wrapping in unsigned arithmetic (wgt_cpu_matmul's
 * integer case: batch, M, N, K > 0 as it found them) */
wgt_status wgt_cpu_matmul_int(wgt_backend *be, const wgt_operand *out, const wgt_operand *a, const wgt_operand *b,
                              int64_t batch, int64_t M, int64_t N, int64_t K);
/* cpu_conv.c: the general convolution, im2col and a BLAS product */
wgt_status wgt_cpu_conv(wgt_backend *be, const wgt_operand *out, const wgt_operand *x, const wgt_operand *w,
                        const int64_t *params);
/* cpu_indexing.c: row gather and row scatter */
wgt_status wgt_cpu_gather_rows(wgt_backend *be, const wgt_operand *out, const wgt_operand *table,
                               const wgt_operand *indices);
wgt_status wgt_cpu_set_rows(wgt_backend *be, const wgt_operand *dst, const wgt_operand *indices,
                            const wgt_operand *rows);
wgt_status wgt_cpu_index_check(wgt_backend *be, const wgt_operand *indices, int64_t bound,
                               const wgt_operand *record);
wgt_status wgt_cpu_index_narrow(wgt_backend *be, const wgt_operand *out, const wgt_operand *in, int64_t bound);
/* cpu_scatter.c: scatter-add of rows, summed in double */
wgt_status wgt_cpu_scatter_add_rows(wgt_backend *be, const wgt_operand *dst, const wgt_operand *indices,
                                    const wgt_operand *rows);
/* cpu_shape.c: write_box (concat, stack) and pad */
wgt_status wgt_cpu_write_box(wgt_backend *be, const wgt_operand *dst, const int64_t *box_start,
                             const wgt_operand *src);
wgt_status wgt_cpu_pad(wgt_backend *be, const wgt_operand *out, const wgt_operand *in, const int64_t *before,
                       uint64_t value_bits);

/* cpu_quant.c: the block types (backend.h) */
wgt_status wgt_cpu_quantize(wgt_backend *be, const wgt_operand *out, const wgt_operand *in);
wgt_status wgt_cpu_dequantize(wgt_backend *be, const wgt_operand *out, const wgt_operand *table,
                              const wgt_operand *indices);
wgt_status wgt_cpu_matmul_quantized(wgt_backend *be, const wgt_operand *out, const wgt_operand *x,
                                    const wgt_operand *w, const wgt_operand *addend, const wgt_quant_norm *norm,
                                    int int8);

#endif
