/*
 * Gradient checks (gradcheck.h) of the reductions, views and shape ops, indexing, matmul and
 * linear, the row ops, rope and attention, on both backends, with strided inputs.
 */
#include <stdlib.h>

#include "gradcheck.h"

#define V2(a, b) 2, {a, b}
#define V3(a, b, c) 3, {a, b, c}
#define F1(name, call) static wgt_tensor *name(wgt_tensor *const *x) { return call; }

static const int ax1[1] = {1}, ax0[1] = {0}, axm1[1] = {-1}, ax02[2] = {0, 2};
F1(f_sum_all, wgt_sum(x[0], 0, NULL, 0))
F1(f_sum_1, wgt_sum(x[0], 1, ax1, 0))
F1(f_mean_0k, wgt_mean(x[0], 1, ax0, 1))
F1(f_max_1, wgt_max(x[0], 1, ax1, 0))
F1(f_min_all, wgt_min(x[0], 0, NULL, 1))
F1(f_prod_1, wgt_prod(x[0], 1, ax1, 0))
F1(f_var_02, wgt_var(x[0], 2, ax02, 0, 1))
F1(f_std_m1, wgt_std(x[0], 1, axm1, 1, 0))
F1(f_cumsum, wgt_cumsum(x[0], 1))
F1(f_sum_dtype, wgt_sum_dtype(x[0], 1, ax1, 1, WGT_F32))
F1(f_prod_dtype, wgt_prod_dtype(x[0], 0, NULL, 0, WGT_F32))
F1(f_cumsum_dtype, wgt_cumsum_dtype(x[0], 0, WGT_F32))
F1(f_cumprod, wgt_cumprod(x[0], 1))
F1(f_cumprod_0, wgt_cumprod(x[0], 0))
F1(f_cummax, wgt_cummax(x[0], 1))
F1(f_cummin_0, wgt_cummin(x[0], -2))
/* cumprod through exact zeros: rows with none, one (first, middle, last) and two */
static wgt_tensor *f_cumprod_zeros(wgt_tensor *const *x) {
    float m[20] = {1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 0, 1, 0, 1};
    int64_t shape[2] = {4, 5};
    wgt_tensor *mask = wgt_tensor_from_data(wgt_tensor_context(x[0]), WGT_F32, 2, shape, m, sizeof m, WGT_USAGE_DEFAULT);
    wgt_tensor *z = wgt_mul(x[0], mask);
    wgt_tensor *r = wgt_cumprod(z, 1);
    wgt_release(mask);
    wgt_release(z);
    return r;
}
/* prod with exact zeros: one zero in a row, and two in another */
static wgt_tensor *f_prod_zeros(wgt_tensor *const *x) {
    float m[12] = {1, 0, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1};
    int64_t shape[2] = {3, 4};
    wgt_tensor *mask = wgt_tensor_from_data(wgt_tensor_context(x[0]), WGT_F32, 2, shape, m, sizeof m, WGT_USAGE_DEFAULT);
    wgt_tensor *z = wgt_mul(x[0], mask);
    wgt_tensor *r = wgt_prod(z, 1, ax1, 0);
    wgt_release(mask);
    wgt_release(z);
    return r;
}

TEST_BACKENDS(autograd_grad_reduce) {
    const gc_case cases[] = {
        {"sum all", f_sum_all, 1, {{V2(3, 4), -1, 1, GC_TRANSPOSED}}},
        {"sum axis", f_sum_1, 1, {{V3(2, 3, 4), -1, 1, GC_STEPPED}}},
        {"mean keepdims", f_mean_0k, 1, {{V2(3, 4), -1, 1, GC_TRANSPOSED}}},
        {"max axis", f_max_1, 1, {{V2(3, 5), -1, 1, GC_PLAIN}}},
        {"min all", f_min_all, 1, {{V2(3, 4), -1, 1, GC_TRANSPOSED}}},
        {"prod axis", f_prod_1, 1, {{V2(3, 4), 0.5, 1.5, GC_PLAIN}}},
        {"prod with zeros", f_prod_zeros, 1, {{V2(3, 4), 0.5, 1.5, GC_PLAIN}}},
        {"var two axes", f_var_02, 1, {{V3(2, 3, 4), -1, 1, GC_PLAIN}}},
        {"std last keepdims", f_std_m1, 1, {{V2(3, 4), -1, 1, GC_TRANSPOSED}}},
        {"cumsum", f_cumsum, 1, {{V2(3, 4), -1, 1, GC_STEPPED}}},
        {"cumprod", f_cumprod, 1, {{V2(3, 4), 0.5, 1.5, GC_TRANSPOSED}}},
        {"cumprod axis 0", f_cumprod_0, 1, {{V2(4, 3), -1.5, -0.5, GC_STEPPED}}},
        {"cumprod with zeros", f_cumprod_zeros, 1, {{V2(4, 5), 0.5, 1.5, GC_PLAIN}}},
        {"cummax", f_cummax, 1, {{V2(3, 6), -1, 1, GC_TRANSPOSED}}},
        {"cummin axis -2", f_cummin_0, 1, {{V2(5, 3), -1, 1, GC_STEPPED}}},
        {"sum_dtype f32", f_sum_dtype, 1, {{V2(3, 4), -1, 1, GC_TRANSPOSED}}},
        {"prod_dtype f32", f_prod_dtype, 1, {{V2(2, 3), 0.5, 1.5, GC_STEPPED}}},
        {"cumsum_dtype f32", f_cumsum_dtype, 1, {{V2(3, 4), -1, 1, GC_PLAIN}}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) gradcheck(ctx, &cases[i]);
}

static const int perm[3] = {2, 0, 1}, flip_axes[2] = {0, 2};
static const int64_t shape_12[2] = {2, 6}, bshape[3] = {2, 3, 4}, eshape[3] = {2, -1, 4};
static const int64_t before[2] = {1, 0}, after[2] = {2, 1};
static const int64_t as_shape[2] = {3, 2}, as_strides[2] = {1, 2};
F1(f_reshape, wgt_reshape(x[0], 2, shape_12))
F1(f_contig, wgt_contiguous(x[0]))
F1(f_permute, wgt_permute(x[0], perm))
F1(f_squeeze, wgt_squeeze(x[0], 1))
F1(f_unsqueeze, wgt_unsqueeze(x[0], 1))
F1(f_broadcast, wgt_broadcast_to(x[0], 3, bshape))
F1(f_expand, wgt_expand(x[0], 3, eshape))
F1(f_flip, wgt_flip(x[0], 2, flip_axes))
F1(f_slice_neg, wgt_slice(x[0], 1, 3, 0, -1))
F1(f_slice_step3, wgt_slice(x[0], 1, 0, 5, 3))
F1(f_slice_negstep, wgt_slice(x[0], 0, -1, -6, -2))
F1(f_pad, wgt_pad(x[0], before, after, 1.5))
F1(f_triu, wgt_triu(x[0], 1))
F1(f_tril, wgt_tril(x[0], 0))
F1(f_as_strided, wgt_as_strided(x[0], 2, as_shape, as_strides, 1))
F1(f_concat, wgt_concat(x, 3, 1))
F1(f_stack, wgt_stack(x, 2, 1))
static wgt_tensor *f_split(wgt_tensor *const *x) {
    int64_t sizes[3] = {1, 2, 2};
    wgt_tensor *parts[3] = {0};
    if (wgt_split(x[0], 1, 3, sizes, parts) != WGT_OK) return NULL;
    wgt_tensor *a = wgt_mul_scalar(parts[0], 3.0);
    wgt_tensor *r = wgt_concat((wgt_tensor *[]){parts[2], a}, 2, 1); /* parts[1] unused: its gradient is 0 */
    for (int i = 0; i < 3; i++) wgt_release(parts[i]);
    wgt_release(a);
    return r;
}

TEST_BACKENDS(autograd_grad_shape) {
    const gc_case cases[] = {
        {"reshape of a transposed view", f_reshape, 1, {{V3(2, 3, 2), -1, 1, GC_TRANSPOSED}}},
        {"contiguous", f_contig, 1, {{V2(3, 4), -1, 1, GC_STEPPED}}},
        {"permute", f_permute, 1, {{V3(2, 3, 4), -1, 1, GC_PLAIN}}},
        {"squeeze", f_squeeze, 1, {{V3(3, 1, 4), -1, 1, GC_PLAIN}}},
        {"unsqueeze", f_unsqueeze, 1, {{V2(3, 4), -1, 1, GC_TRANSPOSED}}},
        {"broadcast_to", f_broadcast, 1, {{V2(3, 1), -1, 1, GC_PLAIN}}},
        {"expand", f_expand, 1, {{V3(1, 3, 4), -1, 1, GC_TRANSPOSED}}},
        {"flip", f_flip, 1, {{V3(2, 3, 4), -1, 1, GC_PLAIN}}},
        {"slice step -1", f_slice_neg, 1, {{V2(3, 5), -1, 1, GC_PLAIN}}},
        {"slice step 3", f_slice_step3, 1, {{V2(3, 5), -1, 1, GC_TRANSPOSED}}},
        {"slice step -2", f_slice_negstep, 1, {{V2(7, 2), -1, 1, GC_PLAIN}}},
        {"pad", f_pad, 1, {{V2(3, 4), -1, 1, GC_TRANSPOSED}}},
        {"triu", f_triu, 1, {{V3(2, 3, 4), -1, 1, GC_PLAIN}}},
        {"tril", f_tril, 1, {{V2(4, 3), -1, 1, GC_TRANSPOSED}}},
        {"as_strided overlapping", f_as_strided, 1, {{V2(2, 5), -1, 1, GC_PLAIN}}},
        {"concat", f_concat, 3, {{V2(3, 2), -1, 1, GC_PLAIN}, {V2(3, 1), -1, 1, GC_CONST}, {V2(3, 3), -1, 1, GC_TRANSPOSED}}},
        {"stack", f_stack, 2, {{V2(3, 2), -1, 1, GC_STEPPED}, {V2(3, 2), -1, 1, GC_PLAIN}}},
        {"split", f_split, 1, {{V2(3, 5), -1, 1, GC_PLAIN}}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) gradcheck(ctx, &cases[i]);
}

static wgt_tensor *indices(wgt_tensor *like, int n, const int32_t *v) {
    int64_t shape[1] = {n};
    return wgt_tensor_from_data(wgt_tensor_context(like), WGT_I32, 1, &shape[0], v, sizeof(int32_t) * (size_t)n,
                                WGT_USAGE_DEFAULT);
}
static wgt_tensor *f_gather(wgt_tensor *const *x) { /* a repeated row sums its gradients */
    static const int32_t v[5] = {2, 0, 2, 3, 2};
    wgt_tensor *i = indices(x[0], 5, v), *r = wgt_gather_rows(x[0], i);
    wgt_release(i);
    return r;
}
static wgt_tensor *f_index_select(wgt_tensor *const *x) {
    static const int32_t v[4] = {1, 1, 3, 0};
    wgt_tensor *i = indices(x[0], 4, v), *r = wgt_index_select(x[0], 1, i);
    wgt_release(i);
    return r;
}
F1(f_matmul, wgt_matmul(x[0], x[1]))
F1(f_linear, wgt_linear(x[0], x[1], x[2]))
F1(f_linear_nobias, wgt_linear(x[0], x[1], NULL))

TEST_BACKENDS(autograd_grad_index_linalg) {
    const gc_case cases[] = {
        {"gather_rows repeated", f_gather, 1, {{V2(4, 3), -1, 1, GC_TRANSPOSED}}},
        {"index_select", f_index_select, 1, {{V3(2, 4, 3), -1, 1, GC_PLAIN}}},
        {"matmul", f_matmul, 2, {{V2(3, 4), -1, 1, GC_TRANSPOSED}, {V2(4, 2), -1, 1, GC_PLAIN}}},
        {"matmul batch broadcast", f_matmul, 2, {{V3(2, 3, 4), -1, 1, GC_STEPPED}, {V2(4, 2), -1, 1, GC_TRANSPOSED}}},
        {"matmul 1-D left", f_matmul, 2, {{1, {4}, -1, 1, GC_PLAIN}, {V3(2, 4, 3), -1, 1, GC_PLAIN}}},
        {"matmul 1-D right", f_matmul, 2, {{V3(2, 3, 4), -1, 1, GC_PLAIN}, {1, {4}, -1, 1, GC_STEPPED}}},
        {"matmul 1-D both", f_matmul, 2, {{1, {4}, -1, 1, GC_PLAIN}, {1, {4}, -1, 1, GC_PLAIN}}},
        {"linear", f_linear, 3, {{V3(2, 3, 4), -1, 1, GC_PLAIN}, {V2(5, 4), -1, 1, GC_TRANSPOSED}, {1, {5}, -1, 1, GC_PLAIN}}},
        {"linear without bias", f_linear_nobias, 2, {{V2(3, 4), -1, 1, GC_TRANSPOSED}, {V2(2, 4), -1, 1, GC_PLAIN}}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) gradcheck(ctx, &cases[i]);
}

F1(f_softmax, wgt_softmax(x[0], -1))
F1(f_softmax0, wgt_softmax(x[0], 0))
F1(f_log_softmax, wgt_log_softmax(x[0], 1))
F1(f_layer_norm, wgt_layer_norm(x[0], x[1], x[2], 1e-5))
F1(f_layer_norm_plain, wgt_layer_norm(x[0], NULL, NULL, 1e-5))
F1(f_rms_norm, wgt_rms_norm(x[0], x[1], 1e-5))
F1(f_rope, wgt_rope(x[0], NULL, 10000.0))
static wgt_tensor *f_rope_pos(wgt_tensor *const *x) {
    static const int32_t v[3] = {5, 2, 9};
    wgt_tensor *p = indices(x[0], 3, v), *r = wgt_rope(x[0], p, 100.0);
    wgt_release(p);
    return r;
}
F1(f_attention, wgt_attention(x[0], x[1], x[2], 0, 0))
F1(f_attention_causal, wgt_attention(x[0], x[1], x[2], 1, 0.7))

TEST_BACKENDS(autograd_grad_nn) {
    const gc_case cases[] = {
        {"softmax last", f_softmax, 1, {{V2(3, 4), -2, 2, GC_TRANSPOSED}}},
        {"softmax axis 0", f_softmax0, 1, {{V2(3, 4), -2, 2, GC_PLAIN}}},
        {"log_softmax", f_log_softmax, 1, {{V3(2, 3, 4), -2, 2, GC_STEPPED}}},
        {"layer_norm", f_layer_norm, 3, {{V2(3, 5), -2, 2, GC_TRANSPOSED}, {1, {5}, 0.5, 1.5, GC_PLAIN}, {1, {5}, -1, 1, GC_PLAIN}}},
        {"layer_norm without affine", f_layer_norm_plain, 1, {{V3(2, 2, 4), -2, 2, GC_PLAIN}}},
        {"rms_norm", f_rms_norm, 2, {{V2(3, 4), -2, 2, GC_STEPPED}, {1, {4}, 0.5, 1.5, GC_PLAIN}}},
        {"rope", f_rope, 1, {{V3(2, 3, 4), -1, 1, GC_TRANSPOSED}}},
        {"rope positions", f_rope_pos, 1, {{V2(3, 6), -1, 1, GC_PLAIN}}},
        {"attention", f_attention, 3, {{V3(2, 3, 4), -1, 1, GC_PLAIN}, {V3(2, 5, 4), -1, 1, GC_TRANSPOSED},
                                       {V3(2, 5, 3), -1, 1, GC_PLAIN}}},
        {"attention causal", f_attention_causal, 3, {{V3(1, 3, 4), -1, 1, GC_PLAIN}, {V3(1, 4, 4), -1, 1, GC_PLAIN},
                                                     {V3(1, 4, 2), -1, 1, GC_STEPPED}}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) gradcheck(ctx, &cases[i]);
}

/* f16 inputs: the ops compute in f32 and round, and so do their gradients. */
TEST_BACKENDS(autograd_grad_f16) {
    const gc_case cases[] = {
        {"layer_norm f16", f_layer_norm_plain, 1,
         {{V2(3, 4), -2, 2, GC_TRANSPOSED, WGT_F16}}},
        {"softmax f16", f_softmax, 1, {{V2(3, 4), -2, 2, GC_PLAIN, WGT_F16}}},
        {"sum f16", f_sum_1, 1, {{V3(2, 3, 4), -1, 1, GC_STEPPED, WGT_F16}}},
        {"matmul f16", f_matmul, 2, {{V2(3, 4), -1, 1, GC_TRANSPOSED, WGT_F16}, {V2(4, 2), -1, 1, GC_PLAIN, WGT_F16}}},
        {"rms_norm f16", f_rms_norm, 2, {{V2(3, 4), -2, 2, GC_PLAIN, WGT_F16}, {1, {4}, 0.5, 1.5, GC_PLAIN, WGT_F16}}},
        {"attention f16", f_attention, 3, {{V3(1, 3, 4), -1, 1, GC_PLAIN, WGT_F16}, {V3(1, 5, 4), -1, 1, GC_PLAIN, WGT_F16},
                                           {V3(1, 5, 4), -1, 1, GC_PLAIN, WGT_F16}}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) gradcheck(ctx, &cases[i]);
}
