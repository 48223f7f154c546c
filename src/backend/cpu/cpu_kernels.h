/* CPU kernel entry points, one family per file. */
#ifndef WGT_CPU_KERNELS_H
#define WGT_CPU_KERNELS_H

#include "backend/backend.h"
#include "core/error.h"

wgt_status wgt_cpu_copy(wgt_backend *be, const wgt_operand *dst, const wgt_operand *src);
wgt_status wgt_cpu_binary(wgt_backend *be, wgt_binary_op op, const wgt_operand *out, const wgt_operand *a,
                          const wgt_operand *b);
/* cpu_unary.c: unary ops (params[0], params[1] as in backend.h), logical_not and casts */
wgt_status wgt_cpu_unary(wgt_backend *be, wgt_unary_op op, const wgt_operand *out, const wgt_operand *a,
                         const double *params);
wgt_status wgt_cpu_cast(wgt_backend *be, const wgt_operand *out, const wgt_operand *a);
/* cpu_reduce.c */
wgt_status wgt_cpu_reduce(wgt_backend *be, wgt_reduce_op op, const wgt_operand *out, const wgt_operand *in,
                          int reduce_ndim, double param);
wgt_status wgt_cpu_cumsum(wgt_backend *be, const wgt_operand *out, const wgt_operand *in, int axis);
wgt_status wgt_cpu_where(wgt_backend *be, const wgt_operand *out, const wgt_operand *cond, const wgt_operand *a,
                         const wgt_operand *b);

#endif
