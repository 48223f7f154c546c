/* CPU kernel entry points, one family per file. */
#ifndef WGT_CPU_KERNELS_H
#define WGT_CPU_KERNELS_H

#include "backend/backend.h"
#include "core/error.h"

wgt_status wgt_cpu_copy(wgt_backend *be, const wgt_operand *dst, const wgt_operand *src);
wgt_status wgt_cpu_binary(wgt_backend *be, wgt_binary_op op, const wgt_operand *out, const wgt_operand *a,
                          const wgt_operand *b);

#endif
