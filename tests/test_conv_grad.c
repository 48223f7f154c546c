/*
 * Gradients of the convolutions against central finite differences (tests/gradcheck.c: the
 * op's gradient from wgt_backward on the test's backend, the differences computed on the CPU
 * and summed in double), on small cases with strides, padding (same included), dilation,
 * groups, output padding, transposed and stepped views of the inputs, and f16.
 */
#include "gradcheck.h"

#define V1(a) 1, {a}
#define V3(a, b, c) 3, {a, b, c}
#define V4(a, b, c, d) 4, {a, b, c, d}
#define F1(name, call) static wgt_tensor *name(wgt_tensor *const *x) { return call; }

static const int64_t s2[2] = {2, 1}, p1[2] = {1, 0}, d2[2] = {2, 1}, one[2] = {1, 1}, zero[2] = {0, 0};
static const int64_t same[2] = {WGT_PADDING_SAME, WGT_PADDING_SAME}, op1[2] = {1, 0}, p21[2] = {2, 1};

F1(f_conv2d, wgt_conv2d(x[0], x[1], x[2], s2, p1, one, 2))
F1(f_conv2d_dilated, wgt_conv2d(x[0], x[1], NULL, one, p21, d2, 1))
F1(f_conv2d_same, wgt_conv2d(x[0], x[1], x[2], one, same, one, 1))
F1(f_conv2d_depthwise, wgt_conv2d(x[0], x[1], NULL, s2, zero, one, 4))
F1(f_conv1d, wgt_conv1d(x[0], x[1], x[2], 2, 1, 2, 1))
F1(f_conv_transpose2d, wgt_conv_transpose2d(x[0], x[1], x[2], s2, p1, op1, one, 2))
F1(f_conv_transpose2d_dilated, wgt_conv_transpose2d(x[0], x[1], NULL, one, p21, zero, d2, 1))

TEST_BACKENDS(autograd_grad_conv) {
    static const gc_case cases[] = {
        {"conv2d stride, padding, groups", f_conv2d, 3,
         {{V4(2, 4, 5, 6), -1, 1, GC_STEPPED}, {V4(4, 2, 3, 2), -1, 1, GC_TRANSPOSED}, {V1(4), -1, 1, GC_PLAIN}}},
        {"conv2d dilated", f_conv2d_dilated, 2, {{V4(1, 3, 7, 5), -1, 1, GC_TRANSPOSED}, {V4(2, 3, 3, 2), -1, 1, GC_PLAIN}}},
        {"conv2d same, even kernel", f_conv2d_same, 3,
         {{V4(2, 2, 4, 5), -1, 1, GC_PLAIN}, {V4(3, 2, 2, 4), -1, 1, GC_STEPPED}, {V1(3), -1, 1, GC_STEPPED}}},
        {"conv2d depthwise", f_conv2d_depthwise, 2, {{V4(1, 4, 5, 5), -1, 1, GC_PLAIN}, {V4(4, 1, 3, 3), -1, 1, GC_PLAIN}}},
        {"conv1d", f_conv1d, 3, {{V3(2, 3, 21), -1, 1, GC_TRANSPOSED}, {V3(2, 3, 3), -1, 1, GC_PLAIN}, {V1(2), -1, 1, GC_PLAIN}}},
        {"conv_transpose2d", f_conv_transpose2d, 3,
         {{V4(2, 4, 3, 4), -1, 1, GC_PLAIN}, {V4(4, 3, 3, 2), -1, 1, GC_STEPPED}, {V1(6), -1, 1, GC_PLAIN}}},
        {"conv_transpose2d dilated", f_conv_transpose2d_dilated, 2,
         {{V4(1, 2, 4, 3), -1, 1, GC_TRANSPOSED}, {V4(2, 3, 3, 2), -1, 1, GC_PLAIN}}},
        {"conv2d f16", f_conv2d, 3,
         {{V4(2, 4, 5, 6), -1, 1, GC_PLAIN, WGT_F16}, {V4(4, 2, 3, 2), -1, 1, GC_PLAIN, WGT_F16},
          {V1(4), -1, 1, GC_PLAIN, WGT_F16}}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) gradcheck(ctx, &cases[i]);
}
