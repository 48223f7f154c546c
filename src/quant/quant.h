/* The quantized ops behind wgt_quantize, wgt_dequantize and wgt_matmul_quantized, for the
 * public functions that route to them (wgt_cast, wgt_linear); fn names the caller. */
#ifndef WGT_QUANT_H
#define WGT_QUANT_H

#include "core/tensor.h"

wgt_tensor *wgt_quant_quantize(const char *fn, wgt_tensor *a, wgt_dtype dtype);
wgt_tensor *wgt_quant_dequantize(const char *fn, wgt_tensor *q, wgt_dtype dtype);
wgt_tensor *wgt_quant_matmul(const char *fn, wgt_tensor *x, wgt_tensor *w);

#endif
