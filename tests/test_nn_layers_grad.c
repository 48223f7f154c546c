/*
 * Gradients of dropout, batch_norm, group_norm and interpolate against central finite
 * differences (tests/gradcheck.c), with transposed and stepped views of the inputs and f16.
 * dropout's differences run on a CPU context with the same seed, so they also check that the
 * backward pass applies the forward's mask.
 */
#include "gradcheck.h"

#define V1(a) 1, {a}
#define V3(a, b, c) 3, {a, b, c}
#define V4(a, b, c, d) 4, {a, b, c, d}
#define F1(name, call) static wgt_tensor *name(wgt_tensor *const *x) { return call; }

static const int64_t up[2] = {7, 5}, down[2] = {2, 3}, l5[1] = {5};
static const double sc[2] = {1.5, 0.7};

F1(f_dropout, wgt_dropout(x[0], 0.4, 1234))

/* The seed in a tensor of the input's context, released once the op holds it. */
static wgt_tensor *f_dropout_seeded(wgt_tensor *const *x) {
    uint32_t words[2] = {1234, 7};
    int64_t two[1] = {2};
    wgt_tensor *s = wgt_tensor_from_data(wgt_tensor_context(x[0]), WGT_U32, 1, two, words, sizeof words, WGT_USAGE_DEFAULT);
    wgt_tensor *y = wgt_dropout_seeded(x[0], 0.4, s);
    wgt_release(s);
    return y;
}
F1(f_batch_norm, wgt_batch_norm(x[0], x[1], x[2], x[3], NULL, 1e-3))
F1(f_batch_norm_bias, wgt_batch_norm(x[0], x[1], x[2], NULL, x[3], 1e-3))
F1(f_batch_norm_plain, wgt_batch_norm(x[0], x[1], x[2], NULL, NULL, 1e-3))
F1(f_group_norm, wgt_group_norm(x[0], 2, x[1], x[2], 1e-3))
F1(f_group_norm_plain, wgt_group_norm(x[0], 3, NULL, NULL, 1e-3))
F1(f_bilinear, wgt_interpolate(x[0], up, NULL, WGT_INTERP_LINEAR, 0))
F1(f_bilinear_corners, wgt_interpolate(x[0], down, NULL, WGT_INTERP_LINEAR, 1))
F1(f_bilinear_scale, wgt_interpolate(x[0], NULL, sc, WGT_INTERP_LINEAR, 0))
F1(f_nearest, wgt_interpolate(x[0], up, NULL, WGT_INTERP_NEAREST, 0))
F1(f_nearest_exact, wgt_interpolate(x[0], down, NULL, WGT_INTERP_NEAREST_EXACT, 0))
F1(f_linear1d, wgt_interpolate(x[0], l5, NULL, WGT_INTERP_LINEAR, 1))

TEST_BACKENDS(autograd_grad_nn_layers) {
    static const gc_case cases[] = {
        {"dropout", f_dropout, 1, {{V3(3, 4, 5), -1, 1, GC_TRANSPOSED}}},
        {"dropout with a seed tensor", f_dropout_seeded, 1, {{V3(4, 3, 5), -1, 1, GC_STEPPED}}},
        {"batch_norm", f_batch_norm, 4,
         {{V4(2, 3, 4, 3), -2, 2, GC_TRANSPOSED}, {V1(3), -1, 1, GC_PLAIN}, {V1(3), 0.5, 2, GC_PLAIN},
          {V1(3), -1, 1, GC_STEPPED}}},
        {"batch_norm with bias", f_batch_norm_bias, 4,
         {{V3(3, 2, 5), -2, 2, GC_PLAIN}, {V1(2), -1, 1, GC_STEPPED}, {V1(2), 0.5, 2, GC_PLAIN}, {V1(2), -1, 1, GC_PLAIN}}},
        {"batch_norm without weight and bias", f_batch_norm_plain, 3,
         {{V3(4, 3, 5), -2, 2, GC_STEPPED}, {V1(3), -1, 1, GC_CONST}, {V1(3), 0.5, 2, GC_PLAIN}}},
        {"group_norm", f_group_norm, 3,
         {{V4(2, 4, 3, 2), -2, 2, GC_TRANSPOSED}, {V1(4), -1, 1, GC_PLAIN}, {V1(4), -1, 1, GC_STEPPED}}},
        {"group_norm without weight and bias", f_group_norm_plain, 1, {{V3(3, 6, 4), -2, 2, GC_STEPPED}}},
        {"bilinear", f_bilinear, 1, {{V4(2, 2, 4, 3), -1, 1, GC_TRANSPOSED}}},
        {"bilinear align_corners", f_bilinear_corners, 1, {{V4(1, 2, 5, 4), -1, 1, GC_STEPPED}}},
        {"bilinear by scale", f_bilinear_scale, 1, {{V4(2, 1, 4, 6), -1, 1, GC_PLAIN}}},
        {"nearest", f_nearest, 1, {{V4(1, 2, 3, 4), -1, 1, GC_TRANSPOSED}}},
        {"nearest-exact", f_nearest_exact, 1, {{V4(2, 1, 5, 4), -1, 1, GC_PLAIN}}},
        {"linear 1-d", f_linear1d, 1, {{V3(2, 3, 4), -1, 1, GC_STEPPED}}},
        {"bilinear f16", f_bilinear, 1, {{V4(1, 2, 4, 3), -1, 1, GC_PLAIN, WGT_F16}}},
        {"group_norm f16", f_group_norm, 3,
         {{V4(2, 4, 3, 2), -2, 2, GC_PLAIN, WGT_F16}, {V1(4), -1, 1, GC_PLAIN, WGT_F16},
          {V1(4), -1, 1, GC_PLAIN, WGT_F16}}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) gradcheck(ctx, &cases[i]);
}
