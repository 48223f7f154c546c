/*
 * Gradient checks (gradcheck.h) on both backends, against float64 finite differences, of the
 * ops whose gradients come back through positions or spectra: sort and top-k values (along
 * each axis, both directions), the vector and matrix norms (every ord), svdvals, eigvalsh,
 * pinv (full rank, so the rank does not change under the steps; tall and wide, where
 * different terms of its gradient vanish) and matrix_power (positive, negative and zero
 * powers, batched). Inputs are uniform draws, so ties and repeated singular values, where
 * these gradients are not defined, do not occur.
 */
#include <math.h>

#include "gradcheck.h"

#define V2(a, b) 2, {a, b}
#define V3(a, b, c) 3, {a, b, c}
#define F1(name, call) static wgt_tensor *name(wgt_tensor *const *x) { return call; }

static const int ax1[1] = {1}, ax02[2] = {0, 2};

F1(f_sort_last, wgt_sort(x[0], -1, 0))
F1(f_sort_0_desc, wgt_sort(x[0], 0, 1))
static wgt_tensor *topk(wgt_tensor *const *x, int64_t k, int axis, int largest) {
    wgt_tensor *v = NULL, *i = NULL;
    if (wgt_topk(x[0], k, axis, largest, 1, &v, &i) != WGT_OK) return NULL;
    wgt_release(i);
    return v;
}
static wgt_tensor *f_topk_largest(wgt_tensor *const *x) { return topk(x, 2, -1, 1); }
static wgt_tensor *f_topk_smallest_0(wgt_tensor *const *x) { return topk(x, 3, 0, 0); }

F1(f_vnorm_2, wgt_linalg_vector_norm(x[0], 2, 0, NULL, 0))
F1(f_vnorm_1_axis, wgt_linalg_vector_norm(x[0], 1, 1, ax1, 1))
F1(f_vnorm_3, wgt_linalg_vector_norm(x[0], 3, 2, ax02, 0))
F1(f_vnorm_half, wgt_linalg_vector_norm(x[0], 0.5, 1, ax1, 0))
F1(f_vnorm_inf, wgt_linalg_vector_norm(x[0], INFINITY, 1, ax1, 0))
F1(f_vnorm_ninf, wgt_linalg_vector_norm(x[0], -INFINITY, 0, NULL, 1))
F1(f_vnorm_0, wgt_linalg_vector_norm(x[0], 0, 1, ax1, 0))
F1(f_mnorm_fro, wgt_linalg_matrix_norm(x[0], "fro", 0))
F1(f_mnorm_1, wgt_linalg_matrix_norm(x[0], "1", 1))
F1(f_mnorm_m1, wgt_linalg_matrix_norm(x[0], "-1", 0))
F1(f_mnorm_inf, wgt_linalg_matrix_norm(x[0], "inf", 0))
F1(f_mnorm_minf, wgt_linalg_matrix_norm(x[0], "-inf", 1))
F1(f_mnorm_2, wgt_linalg_matrix_norm(x[0], "2", 0))
F1(f_mnorm_m2, wgt_linalg_matrix_norm(x[0], "-2", 0))
F1(f_mnorm_nuc, wgt_linalg_matrix_norm(x[0], "nuc", 1))
F1(f_svdvals, wgt_linalg_svdvals(x[0]))
F1(f_eigvalsh, wgt_linalg_eigvalsh(x[0]))
F1(f_pinv, wgt_linalg_pinv(x[0], -1))
F1(f_mpow_3, wgt_linalg_matrix_power(x[0], 3))
F1(f_mpow_6, wgt_linalg_matrix_power(x[0], 6))
F1(f_mpow_1, wgt_linalg_matrix_power(x[0], 1))
F1(f_mpow_0, wgt_linalg_matrix_power(x[0], 0))
/* A negative power of a well-conditioned matrix: x + 3 I. */
static wgt_tensor *f_mpow_neg(wgt_tensor *const *x) {
    int64_t n = wgt_tensor_shape(x[0])[wgt_tensor_ndim(x[0]) - 1], sq[2] = {n, n};
    float e[16] = {0};
    for (int64_t i = 0; i < n; i++) e[i * n + i] = 3;
    wgt_tensor *eye = wgt_tensor_from_data(wgt_tensor_context(x[0]), WGT_F32, 2, sq, e, sizeof(float) * (size_t)(n * n), WGT_USAGE_DEFAULT);
    wgt_tensor *a = wgt_add(x[0], eye), *r = a ? wgt_linalg_matrix_power(a, -3) : NULL;
    wgt_release(eye), wgt_release(a);
    return r;
}

TEST_BACKENDS(autograd_grad_sort_topk) {
    const gc_case cases[] = {
        {"sort last axis", f_sort_last, 1, {{V2(3, 5), -1, 1, GC_TRANSPOSED}}},
        {"sort axis 0 descending", f_sort_0_desc, 1, {{V3(4, 2, 3), -1, 1, GC_STEPPED}}},
        {"topk largest", f_topk_largest, 1, {{V2(3, 5), -1, 1, GC_PLAIN}}},
        {"topk smallest axis 0", f_topk_smallest_0, 1, {{V2(5, 3), -1, 1, GC_TRANSPOSED}}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) gradcheck(ctx, &cases[i]);
}

TEST_BACKENDS(autograd_grad_norms) {
    const gc_case cases[] = {
        {"vector_norm 2 all", f_vnorm_2, 1, {{V2(3, 4), -1, 1, GC_TRANSPOSED}}},
        {"vector_norm 1 keepdims", f_vnorm_1_axis, 1, {{V2(3, 4), -1, 1, GC_STEPPED, 0, 0.05}}},
        {"vector_norm 3 two axes", f_vnorm_3, 1, {{V3(2, 3, 4), -1, 1, GC_PLAIN}}},
        {"vector_norm 0.5", f_vnorm_half, 1, {{V2(3, 4), 0.2, 1, GC_PLAIN}}},
        {"vector_norm inf", f_vnorm_inf, 1, {{V2(3, 4), -1, 1, GC_TRANSPOSED}}},
        {"vector_norm -inf", f_vnorm_ninf, 1, {{V2(3, 4), -1, 1, GC_PLAIN}}},
        {"vector_norm 0", f_vnorm_0, 1, {{V2(3, 4), -1, 1, GC_PLAIN, 0, 0.05}}},
        {"matrix_norm fro", f_mnorm_fro, 1, {{V3(2, 3, 4), -1, 1, GC_STEPPED}}},
        {"matrix_norm 1", f_mnorm_1, 1, {{V3(2, 3, 4), -1, 1, GC_PLAIN, 0, 0.05}}},
        {"matrix_norm -1", f_mnorm_m1, 1, {{V2(4, 3), -1, 1, GC_TRANSPOSED, 0, 0.05}}},
        {"matrix_norm inf", f_mnorm_inf, 1, {{V2(3, 4), -1, 1, GC_PLAIN, 0, 0.05}}},
        {"matrix_norm -inf", f_mnorm_minf, 1, {{V3(2, 4, 3), -1, 1, GC_PLAIN, 0, 0.05}}},
        {"matrix_norm 2", f_mnorm_2, 1, {{V3(2, 3, 4), -1, 1, GC_PLAIN}}},
        {"matrix_norm -2", f_mnorm_m2, 1, {{V2(4, 3), -1, 1, GC_TRANSPOSED}}},
        {"matrix_norm nuc", f_mnorm_nuc, 1, {{V2(3, 3), -1, 1, GC_STEPPED}}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) gradcheck(ctx, &cases[i]);
}

TEST_BACKENDS(autograd_grad_spectral_and_power) {
    const gc_case cases[] = {
        {"svdvals wide batch", f_svdvals, 1, {{V3(2, 3, 4), -1, 1, GC_PLAIN}}},
        {"svdvals tall", f_svdvals, 1, {{V2(4, 3), -1, 1, GC_TRANSPOSED}}},
        {"eigvalsh", f_eigvalsh, 1, {{V3(2, 3, 3), -1, 1, GC_STEPPED}}},
        {"pinv tall batch", f_pinv, 1, {{V3(2, 4, 3), -1, 1, GC_TRANSPOSED}}},
        {"pinv wide", f_pinv, 1, {{V2(2, 4), -1, 1, GC_PLAIN}}},
        {"matrix_power 3 batch", f_mpow_3, 1, {{V3(2, 3, 3), -0.8, 0.8, GC_TRANSPOSED}}},
        {"matrix_power 6", f_mpow_6, 1, {{V2(3, 3), -0.6, 0.6, GC_PLAIN}}},
        {"matrix_power 1", f_mpow_1, 1, {{V2(3, 3), -1, 1, GC_STEPPED}}},
        {"matrix_power 0", f_mpow_0, 1, {{V2(3, 3), -1, 1, GC_PLAIN}}},
        {"matrix_power -3", f_mpow_neg, 1, {{V3(2, 3, 3), -1, 1, GC_PLAIN}}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) gradcheck(ctx, &cases[i]);
}
