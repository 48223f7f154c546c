/*
 * Shared by the transformer ops of transformer.c and their gradient rules
 * (src/autograd/rules_nn.c): the composed attention's logits.
 */
#ifndef WGT_CORE_TRANSFORMER_H
#define WGT_CORE_TRANSFORMER_H

#include "wgtensor.h"

/* q k^T * scale over the last two dimensions, as the composed attention takes it. An f16
 * product is rounded to f16 once taken, so there q is scaled first, as PyTorch's composed
 * attention does: a dot product past f16's range (65504) that the scale brings back into it
 * stays finite. A new tensor, or NULL with the error set. */
wgt_tensor *wgt_attention_scores(wgt_tensor *q, wgt_tensor *k, double scale);

#endif
