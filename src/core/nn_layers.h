/*
 * Shared by the layers of nn_layers.c and their gradient rules (src/autograd/rules_nn_layers.c):
 * interpolation along one axis, forwards and transposed.
 */
#ifndef WGT_CORE_NN_LAYERS_H
#define WGT_CORE_NN_LAYERS_H

#include "wgtensor.h"

/* x resampled along axis from x->shape[axis] = in positions to out (transpose 0), or, with
 * transpose 1, the adjoint map: x holds out positions along axis and the result in (the
 * gradient, scattered and summed in f32). ratio is in / out, or 1 / scale factor when the
 * caller gave one. A new tensor, or NULL with the error set. */
wgt_tensor *wgt_interp_axis(wgt_tensor *x, int axis, int64_t in, int64_t out, double ratio, wgt_interp_mode mode,
                            int align_corners, int transpose);

/* out[d] and ratio[d] for the spatial dimensions d >= 2 of x from interpolate's arguments,
 * which it checks (errors name fn). */
wgt_status wgt_interp_plan(const char *fn, const wgt_tensor *x, const int64_t *size, const double *scale,
                           wgt_interp_mode mode, int align_corners, int64_t *out, double *ratio);
/* v [C] seen as [C, 1, ...] so that it broadcasts along dimension 1 of a rank-ndim tensor. */
wgt_tensor *wgt_channels_view(wgt_tensor *v, int ndim);

#endif
