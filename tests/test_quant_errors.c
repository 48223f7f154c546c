/*
 * Errors of the quantized block types: reduced dimensions that are not whole blocks, views
 * that cut a block, and every op outside docs/quant.md's list given a block-type tensor.
 */
#include <string.h>

#include "test.h"

static wgt_tensor *q8(wgt_context *ctx, int64_t rows, int64_t cols) {
    int64_t shape[2] = {rows, cols};
    wgt_tensor *a = wgt_rand_normal(ctx, WGT_F32, 2, shape, 0, 1, 1);
    wgt_tensor *q = wgt_quantize(a, WGT_Q8_0);
    wgt_release(a);
    return q;
}

TEST_BACKENDS(quant_errors_shapes_and_types) {
    int64_t s48[2] = {2, 48}, s64[2] = {2, 64}, s0[1] = {0};
    wgt_tensor *a48 = wgt_zeros(ctx, WGT_F32, 2, s48), *a64 = wgt_zeros(ctx, WGT_F32, 2, s64);
    wgt_tensor *i64 = wgt_zeros(ctx, WGT_I32, 2, s64);
    CHECK_ERROR(!wgt_quantize(a48, WGT_Q8_0), WGT_ERR_SHAPE, "multiple of q8_0's 32-element blocks");
    CHECK_ERROR(!wgt_cast(a48, WGT_Q4_0), WGT_ERR_SHAPE, "[2, 48]");
    CHECK_ERROR(!wgt_quantize(i64, WGT_Q8_0), WGT_ERR_DTYPE, "must be f32 or f16, not i32");
    CHECK_ERROR(!wgt_quantize(a64, WGT_F16), WGT_ERR_DTYPE, "must be a block type");
    CHECK_ERROR(!wgt_quantize(a64, (wgt_dtype)99), WGT_ERR_DTYPE, "unknown");
    CHECK_ERROR(!wgt_zeros(ctx, WGT_Q8_0, 2, s48), WGT_ERR_SHAPE, "cuts the 32-element blocks");
    CHECK_ERROR(!wgt_zeros(ctx, WGT_Q4_0, 0, s0), WGT_ERR_SHAPE, "cuts");
    unsigned char bytes[34];
    int64_t s33[1] = {33};
    CHECK_ERROR(!wgt_tensor_from_data(ctx, WGT_Q8_0, 1, s33, bytes, sizeof bytes, WGT_USAGE_DEFAULT), WGT_ERR_SHAPE,
                "cuts");
    int64_t s32[1] = {32};
    CHECK_ERROR(!wgt_tensor_from_data(ctx, WGT_Q8_0, 1, s32, bytes, 32, WGT_USAGE_DEFAULT), WGT_ERR_USAGE,
                "byte count 32");
    wgt_tensor *q = q8(ctx, 4, 64);
    CHECK_ERROR(!wgt_dequantize(a64, WGT_F32), WGT_ERR_DTYPE, "q must be a block type");
    CHECK_ERROR(!wgt_dequantize(q, WGT_I32), WGT_ERR_DTYPE, "must be f32 or f16, not i32");
    CHECK_ERROR(!wgt_matmul_quantized(a64, a64), WGT_ERR_DTYPE, "w must be a block type");
    CHECK_ERROR(!wgt_matmul_quantized(a48, q), WGT_ERR_SHAPE, "must end in the 64 input features");
    CHECK_ERROR(!wgt_matmul_quantized(i64, q), WGT_ERR_DTYPE, "x must be f32 or f16");
    int64_t s3[3] = {2, 2, 64};
    wgt_tensor *q3 = wgt_reshape(q, 3, s3);
    CHECK(q3 != NULL, "%s", wgt_last_error());
    CHECK_ERROR(!wgt_matmul_quantized(a64, q3), WGT_ERR_SHAPE, "w must be 2-D");
    unsigned char small[10];
    CHECK_ERROR(wgt_tensor_read(q, small, sizeof small) != WGT_OK, WGT_ERR_USAGE, "272 bytes");
    wgt_release(a48), wgt_release(a64), wgt_release(i64), wgt_release(q), wgt_release(q3);
}

TEST_BACKENDS(quant_errors_views_that_cut_blocks) {
    wgt_tensor *q = q8(ctx, 4, 64);
    int64_t shape[2] = {4, 32}, strides[2] = {64, 1}, odd[2] = {64, 2};
    CHECK_ERROR(!wgt_slice(q, 1, 16, 48, 1), WGT_ERR_SHAPE, "wgt_slice: a view of shape [4, 32]");
    CHECK_ERROR(!wgt_slice(q, 1, 0, 64, 2), WGT_ERR_SHAPE, "cuts the 32-element blocks of a q8_0");
    CHECK_ERROR(!wgt_as_strided(q, 2, shape, strides, 8), WGT_ERR_SHAPE, "at offset 8");
    CHECK_ERROR(!wgt_as_strided(q, 2, shape, odd, 0), WGT_ERR_SHAPE, "strides [64, 2]");
    CHECK_ERROR(!wgt_unsqueeze(q, 2), WGT_ERR_SHAPE, "wgt_unsqueeze");
    int64_t r[2] = {16, 16};
    CHECK_ERROR(!wgt_reshape(q, 2, r), WGT_ERR_SHAPE, "wgt_reshape");
    int64_t sizes[2] = {16, 48};
    wgt_tensor *pieces[2] = {NULL, NULL};
    CHECK_ERROR(wgt_split(q, 1, 2, sizes, pieces) != WGT_OK, WGT_ERR_SHAPE, "wgt_split");
    CHECK(!pieces[0] && !pieces[1], "split left pieces");
    /* Transposing is an op that does not take block types at all. */
    CHECK_ERROR(!wgt_transpose(q, 0, 1), WGT_ERR_DTYPE, "wgt_transpose: tensor is q8_0");
    /* Allowed: whole blocks. */
    wgt_tensor *ok1 = wgt_slice(q, 1, 32, 64, 1), *ok2 = wgt_as_strided(q, 2, shape, strides, 32);
    wgt_tensor *ok3 = wgt_unsqueeze(q, 0);
    CHECK(ok1 && ok2 && ok3, "%s", wgt_last_error());
    wgt_release(q), wgt_release(ok1), wgt_release(ok2), wgt_release(ok3);
}

/* Every public op outside the quantized list refuses a block-type operand with
 * WGT_ERR_DTYPE, naming itself and the type. */
TEST_BACKENDS(quant_errors_other_ops_refuse_blocks) {
    wgt_tensor *q = q8(ctx, 2, 32);
    int64_t s[2] = {2, 32}, shp[2] = {2, 32}, before[2] = {0, 0};
    int axes[2] = {1, 0}, ax1 = 1;
    wgt_tensor *f = wgt_zeros(ctx, WGT_F32, 2, s);
    int64_t one = 1;
    int32_t zero_i = 0;
    wgt_tensor *idx = wgt_tensor_from_data(ctx, WGT_I32, 1, &one, &zero_i, sizeof zero_i, WGT_USAGE_DEFAULT);
    wgt_tensor *list[2] = {q, q};
    struct {
        const char *name;
        int failed;
    } cases[] = {
        {"wgt_add", !wgt_add(q, f)},
        {"wgt_add", !wgt_add(f, q)},
        {"wgt_mul_scalar", !wgt_mul_scalar(q, 2)},
        {"wgt_neg", !wgt_neg(q)},
        {"wgt_exp", !wgt_exp(q)},
        {"wgt_clamp", !wgt_clamp(q, 0, 1)},
        {"wgt_isnan", !wgt_isnan(q)},
        {"wgt_sum", !wgt_sum(q, 0, NULL, 0)},
        {"wgt_max", !wgt_max(q, 0, NULL, 0)},
        {"wgt_argmax", !wgt_argmax(q, 1, 0)},
        {"wgt_cumsum", !wgt_cumsum(q, 1)},
        {"wgt_matmul", !wgt_matmul(f, q)},
        {"wgt_softmax", !wgt_softmax(q, -1)},
        {"wgt_layer_norm", !wgt_layer_norm(q, NULL, NULL, 1e-5)},
        {"wgt_rms_norm", !wgt_rms_norm(q, NULL, 1e-5)},
        {"wgt_where", !wgt_where(f, q, q)},
        {"wgt_contiguous", !wgt_contiguous(q)},
        {"wgt_transpose", !wgt_transpose(q, 0, 1)},
        {"wgt_permute", !wgt_permute(q, axes)},
        {"wgt_flip", !wgt_flip(q, 1, &ax1)},
        {"wgt_broadcast_to", !wgt_broadcast_to(q, 2, shp)},
        {"wgt_expand", !wgt_expand(q, 2, shp)},
        {"wgt_concat", !wgt_concat(list, 2, 0)},
        {"wgt_stack", !wgt_stack(list, 2, 0)},
        {"wgt_pad", !wgt_pad(q, before, before, 0)},
        {"wgt_index_select", !wgt_index_select(q, 0, idx)},
        {"wgt_set_rows", wgt_set_rows(q, idx, q) != WGT_OK},
        {"wgt_triu", !wgt_triu(q, 0)},
        {"wgt_rope", !wgt_rope(q, NULL, 10000)},
        {"wgt_attention", !wgt_attention(q, q, q, 0, 0)},
        {"wgt_full", !wgt_full(ctx, WGT_Q8_0, 2, s, 1.0)},
        {"wgt_ones", !wgt_ones(ctx, WGT_Q4_0, 2, s)},
        {"wgt_arange", !wgt_arange(ctx, WGT_Q8_0, 0, 32, 1)},
        {"wgt_rand_normal", !wgt_rand_normal(ctx, WGT_Q8_0, 2, s, 0, 1, 1)},
        {"wgt_scalar", !wgt_scalar(ctx, WGT_Q8_0, 1)},
        {"wgt_graph_input", !wgt_graph_input(ctx, "qin", WGT_Q8_0, 2, s)},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        CHECK(cases[i].failed, "%s accepted a q8_0 operand", cases[i].name);
    /* Each message names the function and the type (checked on fresh calls). */
    CHECK_ERROR(!wgt_exp(q), WGT_ERR_DTYPE, "wgt_exp: a is q8_0, a quantized block type");
    CHECK_ERROR(!wgt_matmul(f, q), WGT_ERR_DTYPE, "q8_0");
    CHECK_ERROR(!wgt_full(ctx, WGT_Q8_0, 2, s, 1.0), WGT_ERR_DTYPE, "wgt_full: q8_0 is a quantized block type");
    CHECK_ERROR(!wgt_sum(q, 0, NULL, 0), WGT_ERR_DTYPE, "wgt_sum");
    wgt_clear_error();
    wgt_release(q), wgt_release(f), wgt_release(idx);
}
