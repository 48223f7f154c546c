/*
 * Regression tests for what tests/fuzz/fuzz_api.c (`make fuzz`) found: each test is the call
 * sequence of one finding, cut down to the calls that matter, with the fuzzer's trace in its
 * comment. Most are signed overflows that UBSan reported in arithmetic on the strides of
 * empty tensors: wgt_contiguous_strides lets those wrap (they never address anything), so
 * every later computation on them must wrap or skip too. Others are allocations far larger
 * than an empty result needs. Each test checks the result's shape and that the context still
 * computes; run under ASan/UBSan (the fuzz build) they also show the overflow is gone.
 */
#include <stdint.h>
#include <string.h>

#include "test.h"

static int shape_is(wgt_tensor *t, int ndim, const int64_t *shape) {
    if (!t || wgt_tensor_ndim(t) != ndim) return 0;
    for (int d = 0; d < ndim; d++)
        if (wgt_tensor_shape(t)[d] != shape[d]) return 0;
    return 1;
}

/* The context still computes 1 + 1 after the finding's calls. */
static void still_computes(wgt_context *ctx, const char *what) {
    wgt_clear_error();
    wgt_tensor *one = wgt_ones(ctx, WGT_F32, 0, NULL), *two = wgt_add(one, one);
    float v = 0;
    CHECK(two && wgt_tensor_read(two, &v, sizeof v) == WGT_OK && v == 2, "after %s: %s", what, wgt_last_error());
    wgt_release(one);
    wgt_release(two);
}

/* Trace: "wgt_tensor_create f32 [0, 2, 2, 2, 4611686018427387905, 2] strides [16, 8, 4,
 * -9223372036854775806, 2, 1]; wgt_unsqueeze #0 3" overflowed stride * length in
 * insert_unit_dim (src/core/shape_ops.c). */
TEST_BACKENDS(fuzz_unsqueeze_empty_with_wrapped_strides) {
    static const int64_t shape[6] = {0, 2, 2, 2, (1LL << 62) + 1, 2}, want[7] = {0, 2, 2, 1, 2, (1LL << 62) + 1, 2};
    wgt_clear_error();
    wgt_tensor *t = wgt_tensor_create(ctx, WGT_F32, 6, shape, WGT_USAGE_DEFAULT), *u = wgt_unsqueeze(t, 3);
    CHECK(shape_is(u, 7, want) && wgt_tensor_numel(u) == 0, "unsqueeze of an empty tensor: %s", wgt_last_error());
    wgt_release(t);
    wgt_release(u);
    still_computes(ctx, "unsqueeze");
}

/* Trace: "wgt_full u32 [3037000500, 2, 3037000500, 4, 1000, 0]; wgt_sum #0" overflowed the
 * reduced element count in reduce_axes (src/core/reduce.c). The second case, found while
 * fixing it: an empty input with a non-empty result (sum over the empty axes) walked the kept
 * dimensions with the input's huge strides (append_merged, then the CPU kernel). */
TEST_BACKENDS(fuzz_reduce_empty_with_huge_dims) {
    static const int64_t s1[6] = {3037000500LL, 2, 3037000500LL, 4, 1000, 0}, s2[4] = {2, 2, 1LL << 62, 0},
                         want2[2] = {2, 2};
    static const int axes[2] = {2, 3};
    wgt_clear_error();
    wgt_tensor *t = wgt_full(ctx, WGT_U32, 6, s1, 1), *all = wgt_sum(t, 0, NULL, 0);
    uint32_t v = 7;
    CHECK(all && wgt_tensor_ndim(all) == 0 && wgt_tensor_read(all, &v, 4) == WGT_OK && v == 0,
          "sum of an empty u32 tensor: %s", wgt_last_error());
    wgt_tensor *e = wgt_zeros(ctx, WGT_F32, 4, s2), *part = wgt_sum(e, 2, axes, 0), *pr = wgt_prod(e, 2, axes, 0);
    float got[4] = {9, 9, 9, 9}, gp[4] = {0};
    CHECK(shape_is(part, 2, want2) && wgt_tensor_read(part, got, sizeof got) == WGT_OK && got[0] == 0 && got[3] == 0,
          "sum over the empty axes of [2, 2, 2^62, 0]: %s", wgt_last_error());
    CHECK(pr && wgt_tensor_read(pr, gp, sizeof gp) == WGT_OK && gp[0] == 1 && gp[3] == 1, "prod: %s", wgt_last_error());
    CHECK_ERROR(wgt_max(e, 2, axes, 0) == NULL, WGT_ERR_SHAPE, "cannot reduce zero elements");
    wgt_tensor *all_t[] = {t, all, e, part, pr};
    for (size_t i = 0; i < sizeof all_t / sizeof all_t[0]; i++) wgt_release(all_t[i]);
    still_computes(ctx, "reductions");
}

/* Trace: "wgt_tensor_create i32 [0, 65536, 65536]; wgt_triu #0" asked for a 16 GiB mask
 * (libFuzzer: malloc(17179869184)) for an empty result (src/core/indexing.c, triangle). */
TEST_BACKENDS(fuzz_triu_of_empty_allocates_nothing) {
    static const int64_t shape[3] = {0, 65536, 65536};
    wgt_clear_error();
    wgt_tensor *t = wgt_tensor_create(ctx, WGT_I32, 3, shape, WGT_USAGE_DEFAULT);
    wgt_tensor *u = wgt_triu(t, 0), *l = wgt_tril(t, -3);
    CHECK(shape_is(u, 3, shape) && shape_is(l, 3, shape) && wgt_tensor_numel(u) == 0,
          "triu/tril of an empty [0, 65536, 65536]: %s", wgt_last_error());
    wgt_release(t);
    wgt_release(u);
    wgt_release(l);
    still_computes(ctx, "triu");
}

/* Trace: "wgt_tensor_create f32 []; wgt_as_strided #0 with a stride of INT64_MIN" overflowed
 * taking |stride| in wgt_as_strided (src/core/views.c). A length-1 dimension may have any
 * stride (only index 0 is addressed); a longer one may not. */
TEST_BACKENDS(fuzz_as_strided_int64_min_stride) {
    static const int64_t one[1] = {1}, two[1] = {2}, min_stride[1] = {INT64_MIN};
    wgt_clear_error();
    wgt_tensor *t = wgt_tensor_create(ctx, WGT_F32, 0, NULL, WGT_USAGE_DEFAULT);
    wgt_tensor *v = wgt_as_strided(t, 1, one, min_stride, 0);
    CHECK(shape_is(v, 1, one), "a length-1 view with stride INT64_MIN: %s", wgt_last_error());
    CHECK_ERROR(wgt_as_strided(t, 1, two, min_stride, 0) == NULL, WGT_ERR_SHAPE, "reaches outside");
    wgt_release(t);
    wgt_release(v);
    still_computes(ctx, "as_strided");
}

/* Trace: "wgt_full i32 [2, 5]; wgt_as_strided #0 rank 2 shape [5, 6] strides [-1, 2] offset
 * 9223372036854775807" overflowed the view's extent (offset + spans) before the bounds check. */
TEST_BACKENDS(fuzz_as_strided_huge_offset) {
    static const int64_t s25[2] = {2, 5}, s56[2] = {5, 6}, st[2] = {-1, 2}, s1[1] = {1}, st1[1] = {1};
    wgt_clear_error();
    wgt_tensor *t = wgt_full(ctx, WGT_I32, 2, s25, 10);
    CHECK_ERROR(wgt_as_strided(t, 2, s56, st, INT64_MAX) == NULL, WGT_ERR_SHAPE, "reaches outside");
    CHECK_ERROR(wgt_as_strided(t, 1, s1, st1, INT64_MAX) == NULL, WGT_ERR_SHAPE, "reaches outside");
    CHECK_ERROR(wgt_as_strided(t, 1, s1, st1, 10) == NULL, WGT_ERR_SHAPE, "offset 10");
    wgt_release(t);
    still_computes(ctx, "as_strided");
}

/* Trace: "... wgt_abs -> f32 [3, 6, 0, 2147483648, 0, 2147483648, 0] strides
 * [-9223372036854775808, ...]; wgt_flip #2 naxes 0" negated INT64_MIN (src/core/shape_ops.c).
 * A length-1 view of as_strided with stride INT64_MIN reaches the same negation. */
TEST_BACKENDS(fuzz_flip_int64_min_stride) {
    static const int64_t shape[7] = {3, 6, 0, 1LL << 31, 0, 1LL << 31, 0}, one[1] = {1}, min_stride[1] = {INT64_MIN};
    wgt_clear_error();
    wgt_tensor *z = wgt_zeros(ctx, WGT_F32, 7, shape), *a = wgt_abs(z), *f = wgt_flip(a, 0, NULL);
    CHECK(shape_is(f, 7, shape) && wgt_tensor_numel(f) == 0, "flip of an empty tensor: %s", wgt_last_error());
    wgt_tensor *s = wgt_ones(ctx, WGT_F32, 1, one), *v = wgt_as_strided(s, 1, one, min_stride, 0);
    wgt_tensor *fv = wgt_flip(v, 0, NULL);
    float x = 0;
    CHECK(fv && wgt_tensor_read(fv, &x, 4) == WGT_OK && x == 1, "flip of a length-1 view: %s", wgt_last_error());
    wgt_tensor *all[] = {z, a, f, s, v, fv};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) wgt_release(all[i]);
    still_computes(ctx, "flip");
}

/* Found reading wgt_slice beside the flip fix: a slice of an empty tensor multiplied its huge
 * stride by the step and by the start (src/core/views.c). */
TEST_BACKENDS(fuzz_slice_empty_with_huge_stride) {
    static const int64_t shape[3] = {4, 1LL << 62, 0}, w1[3] = {2, 1LL << 62, 0}, w2[3] = {1, 1LL << 62, 0};
    wgt_clear_error();
    wgt_tensor *t = wgt_zeros(ctx, WGT_F32, 3, shape), *a = wgt_slice(t, 0, 1, 4, 2), *b = wgt_slice(t, 0, 3, 4, 1);
    CHECK(shape_is(a, 3, w1) && shape_is(b, 3, w2), "slices of an empty [4, 2^62, 0]: %s", wgt_last_error());
    wgt_release(t);
    wgt_release(a);
    wgt_release(b);
    still_computes(ctx, "slice");
}

/* Trace: "f32 [2147483648, 4, 0, 2, 0, 65536, 3]; wgt_attention #3 #3 #3 causal 1 scale 0"
 * asked for a [65536, 65536] mask (16 GiB) for empty scores (src/core/transformer.c). */
TEST_BACKENDS(fuzz_causal_attention_of_empty_allocates_nothing) {
    static const int64_t shape[7] = {1LL << 31, 4, 0, 2, 0, 65536, 3};
    wgt_clear_error();
    wgt_tensor *q = wgt_zeros(ctx, WGT_F32, 7, shape), *o = wgt_attention(q, q, q, 1, 0);
    CHECK(shape_is(o, 7, shape) && wgt_tensor_numel(o) == 0, "causal attention of empty q, k, v: %s",
          wgt_last_error());
    wgt_release(q);
    wgt_release(o);
    still_computes(ctx, "attention");
}

/* Trace: "f16 [2, 4, 2]; wgt_as_strided #0 rank 3 shape [1, 0, 6] strides [9223372036854775807,
 * -1, -3]; wgt_pad #1 before [2, 2, 2] after [2, 2, 2] value -5.125": the CPU pad kernel added
 * coordinate * stride before checking the coordinate was inside the input, -2 * INT64_MAX
 * (src/backend/cpu/cpu_shape.c). A non-empty length-1 view with that stride did the same. */
TEST_BACKENDS(fuzz_pad_length_one_dim_with_huge_stride) {
    static const int64_t s242[3] = {2, 4, 2}, s106[3] = {1, 0, 6}, st[3] = {INT64_MAX, -1, -3}, b2[3] = {2, 2, 2},
                         want[3] = {5, 4, 10}, s13[2] = {1, 3}, st13[2] = {INT64_MAX, 1}, b20[2] = {2, 0},
                         a00[2] = {0, 0}, want2[2] = {3, 3};
    wgt_clear_error();
    wgt_tensor *t = wgt_zeros(ctx, WGT_F16, 3, s242), *e = wgt_as_strided(t, 3, s106, st, 0);
    wgt_tensor *p = wgt_pad(e, b2, b2, -5.125);
    uint16_t h[200] = {0};
    int all = p && wgt_tensor_read(p, h, sizeof h) == WGT_OK;
    for (int i = 0; all && i < 200; i++) all = wgt_f16_to_f32(h[i]) == -5.125f;
    CHECK(shape_is(p, 3, want) && all, "pad of an empty [1, 0, 6] view: %s", wgt_last_error());
    wgt_tensor *o = wgt_ones(ctx, WGT_F32, 1, s13 + 1), *v = wgt_as_strided(o, 2, s13, st13, 0);
    wgt_tensor *q = wgt_pad(v, b20, a00, 7);
    float f[9] = {0};
    CHECK(shape_is(q, 2, want2) && wgt_tensor_read(q, f, sizeof f) == WGT_OK && f[0] == 7 && f[5] == 7 && f[6] == 1 &&
              f[8] == 1,
          "pad of a [1, 3] view with stride INT64_MAX: %s", wgt_last_error());
    wgt_tensor *all_t[] = {t, e, p, o, v, q};
    for (size_t i = 0; i < sizeof all_t / sizeof all_t[0]; i++) wgt_release(all_t[i]);
    still_computes(ctx, "pad");
}

/* Trace: "f32 #3 [3, 3, 65536, 0]; wgt_slice #3 axis 0 start 2 stop 2 step 3 -> #6 [0, 3, 65536,
 * 0]; wgt_attention #3 #3 #6 causal 1" computed the scores q k^T, [3, 3, 65536, 65536] (144 GiB),
 * before finding that v's batch [0, 3] does not broadcast with [3, 3]; with a v that fits, the
 * result is empty and needs no scores either (src/core/transformer.c). */
TEST_BACKENDS(fuzz_attention_checks_batch_and_empty_result_first) {
    static const int64_t s[4] = {3, 3, 65536, 0};
    wgt_clear_error();
    wgt_tensor *q = wgt_zeros(ctx, WGT_F32, 4, s), *v = wgt_slice(q, 0, 2, 2, 3);
    CHECK_ERROR(wgt_attention(q, q, v, 1, 0) == NULL, WGT_ERR_SHAPE, "[0, 3]");
    wgt_tensor *o = wgt_attention(q, q, q, 1, 0);
    CHECK(shape_is(o, 4, s) && wgt_tensor_numel(o) == 0, "attention with d = dv = 0: %s", wgt_last_error());
    wgt_release(q);
    wgt_release(v);
    wgt_release(o);
    still_computes(ctx, "attention");
}

/* Found beside the attention fix (the fuzzer's guard kept it from this call): one_hot of empty
 * indices built arange(classes), 8 GiB for 2^31 - 1 classes, for an empty result
 * (src/core/indexing.c). */
TEST_BACKENDS(fuzz_one_hot_of_empty_indices_allocates_nothing) {
    static const int64_t s0[1] = {0}, want[2] = {0, INT32_MAX};
    wgt_clear_error();
    wgt_tensor *i = wgt_zeros(ctx, WGT_I32, 1, s0), *h = wgt_one_hot(i, INT32_MAX, WGT_F32);
    CHECK(shape_is(h, 2, want) && wgt_tensor_dtype(h) == WGT_F32, "one_hot of [0] indices: %s", wgt_last_error());
    wgt_release(i);
    wgt_release(h);
    still_computes(ctx, "one_hot");
}

/* Trace (WebGPU): "wgt_tensor_create f32 [] on the peer context; wgt_tensor_data_mut #3; context
 * call 4 on peer (simulated device loss); wgt_tensor_read #3 nbytes 4 -> ok" left DEVICE_LOST
 * recorded although the read succeeded, as host data may after a loss (src/core/data.c): a
 * success must leave the error state alone, a pending error included. */
TEST(fuzz_read_after_device_loss_records_nothing) {
    wgt_context *gpu = test_webgpu_context();
    if (!gpu) return;
    wgt_tensor *t = wgt_tensor_create(gpu, WGT_F32, 0, NULL, WGT_USAGE_DEFAULT);
    CHECK(t && wgt_tensor_data_mut(t) != NULL, "host copy: %s", wgt_last_error());
    CHECK(wgt_context_simulate_device_loss(gpu) == WGT_OK, "simulated loss: %s", wgt_last_error());
    float v = 1;
    wgt_clear_error();
    CHECK(wgt_tensor_read(t, &v, sizeof v) == WGT_OK && v == 0, "read of host data: %s", wgt_last_error());
    CHECK(wgt_last_status() == WGT_OK, "a successful read recorded: %s", wgt_last_error());
    CHECK(wgt_tensor_create(NULL, WGT_F32, 0, NULL, WGT_USAGE_DEFAULT) == NULL, "no context, no tensor");
    CHECK(wgt_tensor_read(t, &v, sizeof v) == WGT_OK && wgt_last_status() == WGT_ERR_INVALID_ARGUMENT &&
              test_contains(wgt_last_error(), "context is NULL"),
          "a successful read replaced the pending error: %s", wgt_last_error());
    CHECK_ERROR(wgt_tensor_read(t, &v, 3) != WGT_OK, WGT_ERR_USAGE, "byte count 3");
    wgt_clear_error();
    wgt_release(t);
    wgt_context_release(gpu);
}

/* Trace: "wgt_as_strided -> #1 u32 [0, 3, 3] strides [2, 2, 2] offset 9223372036854775807 (an
 * empty view, accepted); wgt_tensor_data_mut #1" overflowed the host pointer, host + offset * 4
 * (src/core/data.c via src/core/views.c). An empty view's offset may now reach one past the end
 * of the storage, as a slice at the end does, and no further. */
TEST_BACKENDS(fuzz_empty_view_offset_past_storage) {
    static const int64_t s33[2] = {3, 3}, s033[3] = {0, 3, 3}, st[3] = {2, 2, 2};
    wgt_clear_error();
    wgt_tensor *t = wgt_zeros(ctx, WGT_U32, 2, s33);
    CHECK_ERROR(wgt_as_strided(t, 3, s033, st, INT64_MAX) == NULL, WGT_ERR_SHAPE, "offset 9223372036854775807");
    CHECK_ERROR(wgt_as_strided(t, 3, s033, st, 10) == NULL, WGT_ERR_SHAPE, "offset 10");
    wgt_tensor *e = wgt_as_strided(t, 3, s033, st, 9);
    CHECK(shape_is(e, 3, s033) && wgt_tensor_data_mut(e) != NULL && wgt_tensor_data(e) != NULL,
          "an empty view at the end of the storage: %s", wgt_last_error());
    wgt_release(t);
    wgt_release(e);
    still_computes(ctx, "as_strided");
}

/* Trace: "wgt_graph_input ctx main name in.0 dtype i32 rank 1 shape [3037000500]" took 12 GB of
 * host memory on the CPU backend (libFuzzer: malloc(12148002000)) for a placeholder, which
 * never holds data: wgt_tensor_new takes a CPU tensor's memory at once and wgt_graph_input
 * freed it right after (src/core/tensor.c, src/core/compiled_graph.c). */
TEST_BACKENDS(fuzz_graph_input_takes_no_memory) {
    static const int64_t huge[1] = {1LL << 40}, s3[1] = {3};
    wgt_clear_error();
    wgt_tensor *h = wgt_graph_input(ctx, "fuzz_huge", WGT_F32, 1, huge);
    if (wgt_context_backend(ctx) == WGT_BACKEND_CPU)
        CHECK(shape_is(h, 1, huge), "a [2^40] placeholder on the CPU: %s", wgt_last_error());
    else
        CHECK(!h && wgt_last_status() == WGT_ERR_LIMIT, "a [2^40] placeholder on WebGPU: %s", wgt_last_error());
    wgt_release(h);
    /* A placeholder still works as one. */
    float in[3] = {1, 2, 3}, out[3] = {0};
    wgt_tensor *x = wgt_graph_input(ctx, "fuzz_x", WGT_F32, 1, s3), *y = wgt_add_scalar(x, 1);
    wgt_graph *g = wgt_graph_build(ctx, 1, &(wgt_binding){"y", y});
    wgt_tensor *a = wgt_tensor_from_data(ctx, WGT_F32, 1, s3, in, sizeof in, WGT_USAGE_DEFAULT);
    wgt_tensor *b = wgt_zeros(ctx, WGT_F32, 1, s3);
    CHECK(g && wgt_graph_dispatch(g, 1, &(wgt_binding){"fuzz_x", a}, 1, &(wgt_binding){"y", b}) == WGT_OK &&
              wgt_tensor_read(b, out, sizeof out) == WGT_OK && out[0] == 2 && out[2] == 4,
          "x + 1 through a graph: %s", wgt_last_error());
    wgt_graph_release(g);
    wgt_tensor *all[] = {x, y, a, b};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) wgt_release(all[i]);
    still_computes(ctx, "graph_input");
}

/* Trace: "wgt_tensor_from_data f32 [1, 3037000500] nbytes 0 data NULL" took the 12 GB on the
 * CPU backend before finding that the byte count does not match (src/core/creation.c). */
TEST_BACKENDS(fuzz_from_data_checks_the_byte_count_first) {
    static const int64_t huge[2] = {1, 1LL << 40};
    CHECK_ERROR(wgt_tensor_from_data(ctx, WGT_F32, 2, huge, NULL, 0, WGT_USAGE_DEFAULT) == NULL, WGT_ERR_USAGE,
                "byte count 0");
    float v = 1;
    CHECK_ERROR(wgt_tensor_from_data(ctx, WGT_F32, 2, huge, &v, sizeof v, WGT_USAGE_DEFAULT) == NULL, WGT_ERR_USAGE,
                "byte count 4");
    still_computes(ctx, "from_data");
}

/* Trace: "wgt_graph_input x u32 [6]; wgt_set_rows #0 #0 #0" (x written in place with its own
 * rows at its own indices) left x's name taken after every tensor was released: the write
 * made x own its node, and the node (through the copies set_rows takes of operands sharing
 * dst's storage) held x, so neither was ever freed. Any symbolic write in parts of values
 * computed from the tensor written does the same; it is refused now (src/core/lazy.c). */
TEST_BACKENDS(fuzz_graph_write_in_place_from_itself_is_refused) {
    static const int64_t s6[1] = {6}, s23[2] = {2, 3}, s2[1] = {2};
    static const int32_t rows[2] = {0, 1};
    wgt_clear_error();
    wgt_tensor *x = wgt_graph_input(ctx, "fuzz_self", WGT_U32, 1, s6);
    CHECK_ERROR(wgt_set_rows(x, x, x) != WGT_OK, WGT_ERR_USAGE, "computed from graph inputs and from the tensor");
    wgt_release(x);
    x = wgt_graph_input(ctx, "fuzz_self", WGT_U32, 1, s6);
    CHECK(x != NULL, "the name is free again after the release: %s", wgt_last_error());
    wgt_release(x);
    /* Two steps: y = p + z, then y's rows written into z. */
    wgt_tensor *p = wgt_graph_input(ctx, "fuzz_p", WGT_F32, 2, s23), *z = wgt_zeros(ctx, WGT_F32, 2, s23);
    wgt_tensor *y = wgt_add(p, z), *idx = wgt_tensor_from_data(ctx, WGT_I32, 1, s2, rows, sizeof rows, WGT_USAGE_DEFAULT);
    CHECK_ERROR(wgt_set_rows(z, idx, y) != WGT_OK, WGT_ERR_USAGE, "the tensor they are written into");
    /* Rows from graph inputs into a fresh tensor, as before. */
    wgt_tensor *w = wgt_zeros(ctx, WGT_F32, 2, s23);
    CHECK(wgt_set_rows(w, idx, p) == WGT_OK, "rows of a placeholder into a fresh tensor: %s", wgt_last_error());
    wgt_tensor *all[] = {p, z, y, idx, w};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) wgt_release(all[i]);
    p = wgt_graph_input(ctx, "fuzz_p", WGT_F32, 2, s23);
    CHECK(p != NULL, "the name is free again after the release: %s", wgt_last_error());
    wgt_release(p);
    still_computes(ctx, "set_rows");
}

/* Trace: "wgt_graph_input k i32 [3, 1]; wgt_cast #0 f32; wgt_broadcast_to #1 [1000, 3, 0] ->
 * #4; wgt_graph_build out=#4": the empty view became a fresh empty copy, which no node
 * computes, and the build followed its NULL producer (UBSan; src/core/compiled_graph.c). A
 * graph of empty outputs has no nodes at all: qsort got a NULL array. */
TEST_BACKENDS(fuzz_graph_of_an_empty_view) {
    static const int64_t s23[2] = {2, 3}, s03[2] = {0, 3};
    wgt_clear_error();
    wgt_tensor *x = wgt_graph_input(ctx, "fuzz_e", WGT_F32, 2, s23), *y = wgt_add_scalar(x, 1);
    wgt_tensor *v = wgt_slice(y, 0, 0, 0, 1);
    wgt_graph *g = wgt_graph_build(ctx, 1, &(wgt_binding){"v", v});
    CHECK(g && wgt_graph_launches(g) == 0, "a graph of one empty output: %s", wgt_last_error());
    wgt_tensor *a = wgt_ones(ctx, WGT_F32, 2, s23), *o = wgt_zeros(ctx, WGT_F32, 2, s03);
    CHECK(g && wgt_graph_dispatch(g, 0, NULL, 1, &(wgt_binding){"v", o}) == WGT_OK, "its dispatch: %s",
          wgt_last_error());
    wgt_graph_release(g);
    wgt_tensor *all[] = {x, y, v, a, o};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) wgt_release(all[i]);
    still_computes(ctx, "graph_build");
}

/* Trace: "wgt_graph_input x f32 [5, 6]; wgt_attention #3 #3 #3 causal 1 -> #4; wgt_graph_build
 * out=#4; wgt_graph_dispatch in [x=fresh] out [out=offset]" (the output a contiguous view at an
 * offset into a larger tensor, which the API allows) failed with an internal error: kernels
 * write their outputs from element 0 (the CPU matmul refused; WebGPU's elementwise kernels
 * wrote at the start of the storage instead of the view). Found beside it: an output written
 * in parts (set_rows into a fresh zero tensor) kept the caller's old values where it should
 * hold zeros. Such outputs now run into a fresh tensor that is then copied into the caller's
 * (src/core/compiled_graph.c). */
TEST_BACKENDS(fuzz_graph_outputs_at_an_offset_or_written_in_parts) {
    static const int64_t s23[2] = {2, 3}, s43[2] = {4, 3}, s2[1] = {2};
    static const float xv[6] = {1, 2, 3, 4, 5, 6};
    static const int32_t at[2] = {1, 3};
    wgt_clear_error();
    wgt_tensor *x = wgt_graph_input(ctx, "fuzz_o", WGT_F32, 2, s23);
    wgt_tensor *t = wgt_transpose(x, 0, 1), *mm = wgt_matmul(x, t), *sum = wgt_add_scalar(x, 10), *h = wgt_cast(x, WGT_F16);
    wgt_tensor *z = wgt_zeros(ctx, WGT_F32, 2, s43), *idx = wgt_tensor_from_data(ctx, WGT_I32, 1, s2, at, sizeof at,
                                                                                WGT_USAGE_DEFAULT);
    CHECK(wgt_set_rows(z, idx, x) == WGT_OK, "%s", wgt_last_error());
    wgt_binding outs[4] = {{"mm", mm}, {"sum", sum}, {"h", h}, {"z", z}};
    wgt_graph *g = wgt_graph_build(ctx, 4, outs);
    CHECK(g != NULL, "build: %s", wgt_last_error());
    /* Outputs: views one row into larger tensors filled with 7 (f16 at an odd offset), and z
     * a whole tensor of 7s. */
    static const int64_t big_mm[2] = {3, 2}, big_sum[2] = {3, 3}, big_h[1] = {7};
    wgt_tensor *bm = wgt_full(ctx, WGT_F32, 2, big_mm, 7), *bs = wgt_full(ctx, WGT_F32, 2, big_sum, 7);
    wgt_tensor *bh = wgt_full(ctx, WGT_F16, 1, big_h, 7), *oz = wgt_full(ctx, WGT_F32, 2, s43, 7);
    wgt_tensor *om = wgt_slice(bm, 0, 1, 3, 1), *os = wgt_slice(bs, 0, 1, 3, 1), *hv = wgt_slice(bh, 0, 1, 7, 1);
    wgt_tensor *oh = wgt_reshape(hv, 2, s23);
    wgt_tensor *a = wgt_tensor_from_data(ctx, WGT_F32, 2, s23, xv, sizeof xv, WGT_USAGE_DEFAULT);
    wgt_binding bind[4] = {{"mm", om}, {"sum", os}, {"h", oh}, {"z", oz}};
    for (int rep = 0; g && rep < 2; rep++) {
        CHECK(wgt_graph_dispatch(g, 1, &(wgt_binding){"fuzz_o", a}, 4, bind) == WGT_OK, "dispatch %d: %s", rep,
              wgt_last_error());
        float m[6] = {0}, s[9] = {0}, zz[12] = {0};
        uint16_t hh[7] = {0};
        CHECK(wgt_tensor_read(bm, m, sizeof m) == WGT_OK && wgt_tensor_read(bs, s, sizeof s) == WGT_OK &&
                  wgt_tensor_read(bh, hh, sizeof hh) == WGT_OK && wgt_tensor_read(oz, zz, sizeof zz) == WGT_OK,
              "%s", wgt_last_error());
        /* x x^T = [[14, 32], [32, 77]] below a row of 7s; x + 10 below a row of 7s. */
        CHECK(m[0] == 7 && m[1] == 7 && m[2] == 14 && m[3] == 32 && m[4] == 32 && m[5] == 77,
              "matmul into a view at offset 2: %g %g %g %g %g %g", m[0], m[1], m[2], m[3], m[4], m[5]);
        CHECK(s[0] == 7 && s[2] == 7 && s[3] == 11 && s[8] == 16, "add into a view at offset 3: %g %g %g %g", s[0], s[2],
              s[3], s[8]);
        CHECK(wgt_f16_to_f32(hh[0]) == 7 && wgt_f16_to_f32(hh[1]) == 1 && wgt_f16_to_f32(hh[6]) == 6,
              "f16 cast into a view at offset 1: %g %g %g", wgt_f16_to_f32(hh[0]), wgt_f16_to_f32(hh[1]),
              wgt_f16_to_f32(hh[6]));
        CHECK(zz[0] == 0 && zz[3] == 1 && zz[5] == 3 && zz[6] == 0 && zz[11] == 6,
              "rows 1 and 3 of x into zeros: %g %g %g %g %g", zz[0], zz[3], zz[5], zz[6], zz[11]);
        if (rep == 0) { /* the replay writes over other values */
            float sevens[12] = {7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7};
            wgt_tensor_write(oz, sevens, sizeof sevens);
        }
    }
    wgt_graph_release(g);
    wgt_tensor *all[] = {x, t, mm, sum, h, z, idx, bm, bs, bh, oz, om, os, hv, oh, a};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) wgt_release(all[i]);
    still_computes(ctx, "graph_dispatch");
}

/* Trace: "wgt_zeros f32 [2, 4, 3, 0, 0, 2305843009213693952, 4, 3]; wgt_set_rows of one row
 * into it" negated its wrapped stride INT64_MIN (UBSan) while checking that dst addresses no
 * element twice, before reaching the empty dimension (src/core/shape.c). */
TEST_BACKENDS(fuzz_set_rows_into_empty_with_wrapped_strides) {
    static const int64_t s[8] = {2, 4, 3, 0, 0, 1LL << 61, 4, 3}, r[8] = {1, 4, 3, 0, 0, 1LL << 61, 4, 3}, one[1] = {1};
    static const int32_t at[1] = {1};
    wgt_clear_error();
    wgt_tensor *dst = wgt_zeros(ctx, WGT_F32, 8, s), *rows = wgt_zeros(ctx, WGT_F32, 8, r);
    wgt_tensor *idx = wgt_tensor_from_data(ctx, WGT_I32, 1, one, at, sizeof at, WGT_USAGE_DEFAULT);
    CHECK(wgt_set_rows(dst, idx, rows) == WGT_OK, "set_rows into an empty [2, 4, 3, 0, 0, 2^61, 4, 3]: %s",
          wgt_last_error());
    float v = 0;
    CHECK(wgt_tensor_write(dst, &v, 0) == WGT_OK, "a write of no bytes: %s", wgt_last_error());
    wgt_release(dst);
    wgt_release(rows);
    wgt_release(idx);
    still_computes(ctx, "set_rows");
}

/* Trace: "wgt_where giving u32 [1, 0, 2305843009213693952, 1, 6]; wgt_graph_input bound to
 * it; wgt_graph_dispatch" overflowed the expected stride 6 * 2^61 in wgt_is_contiguous
 * (src/core/shape.c) before reaching the empty dimension, which comes earlier in the shape. */
TEST_BACKENDS(fuzz_contiguity_of_empty_with_a_huge_inner_dimension) {
    static const int64_t s[5] = {1, 0, 1LL << 61, 1, 6};
    wgt_clear_error();
    wgt_tensor *t = wgt_zeros(ctx, WGT_U32, 5, s), *u = wgt_add_scalar(t, 1);
    CHECK(t && wgt_tensor_is_contiguous(t), "an empty [1, 0, 2^61, 1, 6] is contiguous: %s", wgt_last_error());
    CHECK(shape_is(u, 5, s) && wgt_tensor_is_contiguous(u), "x + 1 of it: %s", wgt_last_error());
    uint32_t v = 0;
    CHECK(wgt_tensor_read(u, &v, 0) == WGT_OK, "a read of no bytes: %s", wgt_last_error());
    wgt_release(t);
    wgt_release(u);
    still_computes(ctx, "contiguity of an empty tensor");
}

/* Trace: "x = wgt_graph_input [4] (per-input context); y = wgt_rsqrt x; wgt_unsqueeze y; z =
 * wgt_mul y y; wgt_tensor_destroy y; wgt_graph_build out=z; wgt_graph_dispatch" failed with
 * "a tensor this work reads or writes was destroyed" when y's node ran alone (fusion off, or
 * the CPU backend), and succeeded when y was fused away: the fuzzer's run with fusion on and
 * off disagreed. A graph's intermediate holds no data between dispatches, so destroying its
 * handle no longer stops the graph from computing through it, on any path
 * (src/core/scheduler.c), as eager work recorded before a destroy still runs. */
TEST_BACKENDS(fuzz_graph_through_a_destroyed_intermediate) {
    static const int64_t s4[1] = {4};
    for (int fusion = 0; fusion < 2; fusion++) {
        wgt_context_options o = {0};
        o.backend = wgt_context_backend(ctx);
        o.no_fusion = !fusion;
        o.quiet = 1;
        wgt_context *c = wgt_context_create(&o);
        CHECK(c != NULL, "a context with fusion %s: %s", fusion ? "on" : "off", wgt_last_error());
        if (!c) continue;
        wgt_clear_error();
        wgt_tensor *x = wgt_graph_input(c, "in", WGT_F32, 1, s4), *y = wgt_rsqrt(x), *u = wgt_unsqueeze(y, 1);
        wgt_tensor *z = wgt_mul(y, y);
        CHECK(wgt_tensor_destroy(y) == WGT_OK, "destroy of a graph intermediate: %s", wgt_last_error());
        wgt_graph *g = wgt_graph_build(c, 1, &(wgt_binding){"out", z});
        wgt_tensor *four = wgt_full(c, WGT_F32, 1, s4, 4.0), *r = wgt_zeros(c, WGT_F32, 1, s4);
        wgt_status st = g ? wgt_graph_dispatch(g, 1, &(wgt_binding){"in", four}, 1, &(wgt_binding){"out", r})
                          : wgt_last_status();
        float v[4] = {0};
        CHECK(st == WGT_OK && wgt_tensor_read(r, v, sizeof v) == WGT_OK && v[0] == 0.25f && v[3] == 0.25f,
              "fusion %s: rsqrt(4)^2 through the destroyed intermediate gave %g: %s", fusion ? "on" : "off", v[0],
              wgt_last_error());
        wgt_graph_release(g);
        wgt_tensor *all[] = {x, y, u, z, four, r};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) wgt_release(all[i]);
        still_computes(c, "a graph through a destroyed intermediate");
        wgt_context_release(c);
    }
}

/* Trace: "wgt_arange u32 [6] -> #0; wgt_graph_input w f32 [6]; wgt_rsqrt -> #5;
 * wgt_gather_rows #5 #0 -> #7; wgt_tensor_write #0 (bytes out of range); wgt_layer_norm #7;
 * wgt_graph_build; wgt_graph_dispatch" read far outside the table (ASan SEGV in the CPU
 * backend's gather). The indices were valid when the gather was recorded, and a graph's node
 * reads its index tensor's contents at each dispatch, so they are now checked there (on the
 * device, reported by the read of what they computed), as indices from graph inputs are
 * (src/core/record.c). set_rows into a graph's tensor gets the same check; valid indices
 * written later are used. */
TEST_BACKENDS(fuzz_graph_indices_written_after_recording) {
    static const int64_t s6[1] = {6}, s3[1] = {3};
    uint32_t first[3] = {0, 1, 5}, bad[3] = {2, 4000000000u, 1}, later[3] = {3, 3, 0};
    float table[6] = {10, 11, 12, 13, 14, 15}, got[3] = {0}, put[6] = {0};
    wgt_clear_error();
    wgt_tensor *w = wgt_graph_input(ctx, "fuzz_w", WGT_F32, 1, s6), *t = wgt_add_scalar(w, 0);
    wgt_tensor *idx = wgt_tensor_from_data(ctx, WGT_U32, 1, s3, first, sizeof first, WGT_USAGE_DEFAULT);
    wgt_tensor *g_out = wgt_gather_rows(t, idx), *s_out = wgt_zeros(ctx, WGT_F32, 1, s6);
    CHECK(wgt_set_rows(s_out, idx, g_out) == WGT_OK, "rows from the graph into a fresh tensor: %s", wgt_last_error());
    wgt_binding outs_b[2] = {{"g", g_out}, {"s", s_out}};
    wgt_graph *g = wgt_graph_build(ctx, 2, outs_b);
    wgt_tensor *in = wgt_tensor_from_data(ctx, WGT_F32, 1, s6, table, sizeof table, WGT_USAGE_DEFAULT);
    wgt_tensor *r = wgt_zeros(ctx, WGT_F32, 1, s3), *q = wgt_zeros(ctx, WGT_F32, 1, s6);
    wgt_tensor *r2 = wgt_zeros(ctx, WGT_F32, 1, s3), *q2 = wgt_zeros(ctx, WGT_F32, 1, s6);
    wgt_binding ins[1] = {{"fuzz_w", in}}, outs[2] = {{"g", r}, {"s", q}}, outs2[2] = {{"g", r2}, {"s", q2}};
    CHECK(g != NULL, "the graph: %s", wgt_last_error());
    if (g) {
        CHECK(wgt_tensor_write(idx, bad, sizeof bad) == WGT_OK, "writing the indices: %s", wgt_last_error());
        CHECK(wgt_graph_dispatch(g, 1, ins, 2, outs) == WGT_OK, "the dispatch waits for nothing: %s", wgt_last_error());
        CHECK_ERROR(wgt_tensor_read(r, got, sizeof got) != WGT_OK, WGT_ERR_INVALID_ARGUMENT,
                    "index 4000000000 at position [1]");
        CHECK_ERROR(wgt_tensor_read(q, put, sizeof put) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "4000000000");
        CHECK(wgt_tensor_write(idx, later, sizeof later) == WGT_OK, "writing the indices: %s", wgt_last_error());
        CHECK(wgt_graph_dispatch(g, 1, ins, 2, outs2) == WGT_OK && wgt_tensor_read(r2, got, sizeof got) == WGT_OK &&
                  got[0] == 13 && got[1] == 13 && got[2] == 10,
              "gather with the indices written later: %g %g %g (%s)", got[0], got[1], got[2], wgt_last_error());
        CHECK(wgt_tensor_read(q2, put, sizeof put) == WGT_OK && put[0] == 10 && put[3] == 13 && put[1] == 0 &&
                  put[5] == 0,
              "set_rows with the indices written later: %g %g %g %g (%s)", put[0], put[1], put[3], put[5],
              wgt_last_error());
    }
    wgt_graph_release(g);
    wgt_tensor *all[] = {w, t, idx, g_out, s_out, in, r, q, r2, q2};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) wgt_release(all[i]);
    still_computes(ctx, "graph_dispatch");
}

/* wgt_rand_uniform of a narrow integer type with a negative bound converted the bound to an
 * unsigned 32-bit value before the type was refused: undefined behaviour (UBSan, fuzz_api). */
TEST_BACKENDS(fuzz_rand_uniform_of_a_narrow_type_with_a_negative_bound) {
    int64_t n = 4;
    static const wgt_dtype narrow[4] = {WGT_U8, WGT_U16, WGT_I8, WGT_I16};
    for (int i = 0; i < 4; i++)
        CHECK_ERROR(!wgt_rand_uniform(ctx, narrow[i], 1, &n, -4.5, 3, 7), WGT_ERR_DTYPE, wgt_dtype_name(narrow[i]));
}

/* Trace: "g0 = div(w, #2) with #2 a tensor with data; wgt_graph_dispatch g0 out=#2": the
 * output bound to a tensor the graph reads made one kernel read and write a buffer, which
 * WebGPU refused at the submit (a backend error). It is a usage error at the dispatch, and
 * the constant keeps its values. */
TEST_BACKENDS(fuzz_graph_output_bound_to_a_constant_it_reads) {
    char name[32];
    snprintf(name, sizeof name, "fz_const_w_%s", test_backend_name());
    wgt_tensor *c = wgt_tensor_from_data(ctx, WGT_I32, 0, NULL, (int32_t[]){4}, 4, WGT_USAGE_DEFAULT);
    wgt_tensor *w = wgt_graph_input(ctx, name, WGT_I32, 0, NULL);
    wgt_tensor *q = w ? wgt_div(w, c) : NULL;
    wgt_graph *g = q ? wgt_graph_build(ctx, 1, (const wgt_binding[]){{"out", q}}) : NULL;
    wgt_tensor *x = wgt_tensor_from_data(ctx, WGT_I32, 0, NULL, (int32_t[]){12}, 4, WGT_USAGE_DEFAULT);
    wgt_tensor *o = wgt_zeros(ctx, WGT_I32, 0, NULL);
    CHECK(g != NULL, "%s", wgt_last_error());
    CHECK_ERROR(wgt_graph_dispatch(g, 1, (const wgt_binding[]){{name, x}}, 1, (const wgt_binding[]){{"out", c}}) != WGT_OK,
                WGT_ERR_USAGE, "output 'out' is bound to a tensor the graph reads");
    int32_t v = 0, cv = 0;
    CHECK(wgt_graph_dispatch(g, 1, (const wgt_binding[]){{name, x}}, 1, (const wgt_binding[]){{"out", o}}) == WGT_OK &&
              wgt_tensor_read(o, &v, 4) == WGT_OK && v == 3 && wgt_tensor_read(c, &cv, 4) == WGT_OK && cv == 4,
          "12 / 4 gave %d, the constant %d (%s)", v, cv, wgt_last_error());
    still_computes(ctx, "a graph output bound to its constant");
    wgt_graph_release(g);
    wgt_tensor *all[] = {c, w, q, x, o};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) wgt_release(all[k]);
}
