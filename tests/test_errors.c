/*
 * Misuse of the public API, table-driven. Each row makes one wrong call and names the status
 * and a word its message must contain. After every row the test checks that the failure
 * changed nothing it should not (a tensor's contents, the caller's read buffer) and that the
 * context still computes a small wgt_add. The NULL-handle rows run a second time after an
 * earlier failure, whose message must survive (an op given NULL keeps the first error).
 * Rows that expose library bugs are kept apart in errors_library_bugs.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

typedef struct fx {
    wgt_context *ctx, *other;
    wgt_tensor *a;          /* f32 [2, 3] = 1..6, readable and writable */
    wgt_tensor *v4;         /* f32 [4] */
    wgt_tensor *ai;         /* i32 [2, 3] */
    wgt_tensor *read_only;  /* f32 [2, 3] = 1..6, READABLE only */
    wgt_tensor *write_only; /* f32 [2, 3], WRITABLE only */
    wgt_tensor *dead;       /* f32 [2, 3], destroyed */
    wgt_tensor *dead_view;  /* f32 [1, 3] view whose base was destroyed */
    wgt_tensor *bcast;      /* f32 [4, 3]: a's first row broadcast (stride 0) */
    wgt_tensor *foreign;    /* f32 [2, 3] of a second context of the same backend */
    float dst[8];           /* read destination: a failed read must leave it alone */
    wgt_status ret;         /* what a status-returning call returned */
    int has_ret;
} fx;

typedef struct row {
    const char *what;     /* the call, as written in the table */
    int (*misuse)(fx *f); /* 1 when the call failed (NULL, an error status, a property's NULL value) */
    wgt_status status;    /* WGT_OK: a NULL-tolerant property, which must record nothing */
    wgt_status alt;       /* a second acceptable status, or WGT_OK */
    const char *word;     /* the message must contain it */
    const char *only;     /* the backend the row applies to; NULL: every backend */
} row;

#define ANY NULL
#define CPU "cpu"
#define GPU "webgpu"
#define OK WGT_OK
#define E_ARG WGT_ERR_INVALID_ARGUMENT
#define E_SHAPE WGT_ERR_SHAPE
#define E_DTYPE WGT_ERR_DTYPE
#define E_USAGE WGT_ERR_USAGE
#define E_DEAD WGT_ERR_DESTROYED
#define E_CTX WGT_ERR_CONTEXT_MISMATCH
#define E_LIMIT WGT_ERR_LIMIT
#define E_OOM WGT_ERR_OUT_OF_MEMORY
#define EITHER(s, t) s, .alt = t
#define DEF WGT_USAGE_DEFAULT
#define F32 WGT_F32
#define BAD_DT ((wgt_dtype)99)

/* A table is an X-macro list of X(id, only, status, word, call); this makes the functions
 * and then the rows. */
#define ROW_FN(id, only_, st, word_, call) static int id(fx *f) { (void)f; return (call); }
#define ROW_ENTRY(id, only_, st, word_, call) {.what = #call, .misuse = id, .status = st, .word = word_, .only = only_},
#define TABLE(name, LIST) LIST(ROW_FN) static const row name[] = {LIST(ROW_ENTRY)};
#define COUNT(t) ((int)(sizeof t / sizeof t[0]))

static const float D6[6] = {1, 2, 3, 4, 5, 6};
static const float W12[12] = {-1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12};
static const float SENTINEL = -7777.0f;

static const int64_t S1[] = {1}, S2[] = {2}, S3[] = {3}, S4[] = {4}, S6[] = {6}, S23[] = {2, 3}, S33[] = {3, 3},
                     S43[] = {4, 3}, S30[] = {3, 0}, S9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1}, S_NEG[] = {2, -3},
                     S_M2[] = {-2}, S_M1M1[] = {-1, -1}, S_M14[] = {-1, 4}, S_OVF[] = {1LL << 40, 1LL << 40},
                     S_ZERO_OVF[] = {1LL << 40, 1LL << 40, 0}, S_BIG[] = {1LL << 61},
                     S_HUGE[] = {(1LL << 62) + 1};
/* Just past the WebGPU device's tensor size limit, set by errors_limits from the real limit
 * (128 MiB on lavapipe, 4 GiB on an H200). */
static int64_t S_BIG_GPU[2] = {1 << 26, 2}, BIG_GPU_ROWS = 1LL << 24;
static const int64_t T0[] = {0}, T1[] = {1}, T4[] = {4}, TM1[] = {-1}, TM4[] = {-4}, T100[] = {100},
                     TM100[] = {-100}, T31[] = {3, 1}, T9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};

/* ---- helpers the rows use ---- */

/* The call returned NULL; a tensor it should not have made is released. */
static int gone(wgt_tensor *t) { return t ? (wgt_release(t), 0) : 1; }
static int bad(fx *f, wgt_status st) { return f->ret = st, f->has_ret = 1, st != WGT_OK; }
#define GONE(call) gone(call)
#define BAD(call) bad(f, call)

static int release_null(void) {
    wgt_release(NULL);
    wgt_context_release(NULL);
    return 1;
}
static int context_fails(int kind) {
    wgt_context_options o = {0};
    o.backend = (wgt_backend_kind)kind;
    o.quiet = 1;
    wgt_context *c = wgt_context_create(&o);
    wgt_context_release(c);
    return c == NULL;
}
/* Two broadcast views of one element whose sum would be an [n, 8] tensor. */
static int big_add(fx *f, int64_t n) {
    int64_t s1[2] = {n, 1}, s2[2] = {1, 8};
    wgt_tensor *x = wgt_zeros(f->ctx, F32, 1, S1), *bx = wgt_broadcast_to(x, 2, s1), *by = wgt_broadcast_to(x, 2, s2);
    wgt_tensor *r = wgt_add(bx, by);
    wgt_release(x);
    wgt_release(bx);
    wgt_release(by);
    return gone(r);
}
/* An S_BIG_GPU broadcast view (no storage of its own) made contiguous. */
static int big_contiguous(fx *f) {
    wgt_tensor *x = wgt_zeros(f->ctx, F32, 1, S1), *b = wgt_broadcast_to(x, 2, S_BIG_GPU);
    wgt_tensor *r = wgt_contiguous(b);
    wgt_release(x);
    wgt_release(b);
    return gone(r);
}
/* A scalar view of a broadcast to S_HUGE elements: 4 * ((1 << 62) + 1) bytes wrap size_t. */
static int broadcast_huge(fx *f) {
    wgt_tensor *s = wgt_as_strided(f->a, 0, NULL, NULL, 0), *v = wgt_broadcast_to(s, 1, S_HUGE);
    wgt_release(s);
    return gone(v); /* never read: its byte count wrapped, a read would overrun */
}

/* ---- the tables ---- */

/* NULL context or tensor handles. Also run with an error pending, which must survive. */
#define NULL_HANDLE_ROWS(X)                                                                                          \
    X(nh_create, ANY, E_ARG, "context is NULL", GONE(wgt_tensor_create(NULL, F32, 2, S23, DEF)))                     \
    X(nh_from_data, ANY, E_ARG, "context is NULL", GONE(wgt_tensor_from_data(NULL, F32, 2, S23, D6, 24, DEF)))       \
    X(nh_zeros, ANY, E_ARG, "context is NULL", GONE(wgt_zeros(NULL, F32, 2, S23)))                                   \
    X(nh_ones, ANY, E_ARG, "context is NULL", GONE(wgt_ones(NULL, F32, 2, S23)))                                     \
    X(nh_full, ANY, E_ARG, "context is NULL", GONE(wgt_full(NULL, F32, 2, S23, 2.0)))                                \
    X(nh_arange, ANY, E_ARG, "context is NULL", GONE(wgt_arange(NULL, F32, 0, 4, 1)))                                \
    X(nh_uniform, ANY, E_ARG, "context is NULL", GONE(wgt_rand_uniform(NULL, F32, 2, S23, 0, 1, 7)))                 \
    X(nh_normal, ANY, E_ARG, "context is NULL", GONE(wgt_rand_normal(NULL, F32, 2, S23, 0, 1, 7)))                   \
    X(nh_ctx_status, ANY, E_ARG, "context is NULL", BAD(wgt_context_status(NULL)))                                   \
    X(nh_ctx_sync, ANY, E_ARG, "context is NULL", BAD(wgt_context_sync(NULL)))                                       \
    X(nh_ctx_describe, ANY, E_ARG, "context is NULL", wgt_context_describe(NULL) == NULL)                            \
    X(nh_read, ANY, E_ARG, "tensor is NULL", BAD(wgt_tensor_read(NULL, f->dst, 24)))                                 \
    X(nh_write, ANY, E_ARG, "tensor is NULL", BAD(wgt_tensor_write(NULL, D6, 24)))                                   \
    X(nh_data, ANY, E_ARG, "tensor is NULL", wgt_tensor_data(NULL) == NULL)                                          \
    X(nh_data_mut, ANY, E_ARG, "tensor is NULL", wgt_tensor_data_mut(NULL) == NULL)                                  \
    X(nh_export, ANY, E_ARG, "tensor is NULL", wgt_tensor_export_buffer(NULL, NULL) == NULL)                         \
    X(nh_destroy, ANY, E_ARG, "tensor is NULL", BAD(wgt_tensor_destroy(NULL)))                                       \
    X(nh_retain, ANY, E_ARG, "tensor is NULL", GONE(wgt_retain(NULL)))                                               \
    X(nh_as_strided, ANY, E_ARG, "tensor is NULL", GONE(wgt_as_strided(NULL, 1, S6, T1, 0)))                         \
    X(nh_transpose, ANY, E_ARG, "tensor is NULL", GONE(wgt_transpose(NULL, 0, 1)))                                   \
    X(nh_slice, ANY, E_ARG, "tensor is NULL", GONE(wgt_slice(NULL, 0, 0, 1, 1)))                                     \
    X(nh_broadcast, ANY, E_ARG, "tensor is NULL", GONE(wgt_broadcast_to(NULL, 2, S23)))                              \
    X(nh_reshape, ANY, E_ARG, "tensor is NULL", GONE(wgt_reshape(NULL, 1, S6)))                                      \
    X(nh_contiguous, ANY, E_ARG, "tensor is NULL", GONE(wgt_contiguous(NULL)))                                       \
    X(nh_add_a, ANY, E_ARG, "a is NULL", GONE(wgt_add(NULL, f->a)))                                                  \
    X(nh_add_b, ANY, E_ARG, "b is NULL", GONE(wgt_add(f->a, NULL)))                                                  \
    X(nh_sub, ANY, E_ARG, "a is NULL", GONE(wgt_sub(NULL, f->a)))                                                    \
    X(nh_mul, ANY, E_ARG, "b is NULL", GONE(wgt_mul(f->a, NULL)))                                                    \
    X(nh_div, ANY, E_ARG, "a is NULL", GONE(wgt_div(NULL, NULL)))                                                    \
    X(np_dtype, ANY, OK, NULL, wgt_tensor_dtype(NULL) == 0)                                                          \
    X(np_ndim, ANY, OK, NULL, wgt_tensor_ndim(NULL) == -1)                                                           \
    X(np_shape, ANY, OK, NULL, wgt_tensor_shape(NULL) == NULL)                                                       \
    X(np_strides, ANY, OK, NULL, wgt_tensor_strides(NULL) == NULL)                                                   \
    X(np_offset, ANY, OK, NULL, wgt_tensor_offset(NULL) == -1)                                                       \
    X(np_numel, ANY, OK, NULL, wgt_tensor_numel(NULL) == -1)                                                         \
    X(np_nbytes, ANY, OK, NULL, wgt_tensor_nbytes(NULL) == 0)                                                        \
    X(np_usage, ANY, OK, NULL, wgt_tensor_usage(NULL) == 0)                                                          \
    X(np_contig, ANY, OK, NULL, wgt_tensor_is_contiguous(NULL) == 0)                                                 \
    X(np_context, ANY, OK, NULL, wgt_tensor_context(NULL) == NULL)                                                   \
    X(np_backend, ANY, OK, NULL, wgt_context_backend(NULL) == WGT_BACKEND_AUTO)                                      \
    X(np_device, ANY, OK, NULL, wgt_context_device_name(NULL) && !*wgt_context_device_name(NULL))                    \
    X(np_release, ANY, OK, NULL, release_null())
TABLE(null_handle_rows, NULL_HANDLE_ROWS)

/* NULL shape, strides or data where the rank or byte count needs them. */
#define NULL_POINTER_ROWS(X)                                                                                         \
    X(nn_create, ANY, E_ARG, "shape is NULL for rank 2", GONE(wgt_tensor_create(f->ctx, F32, 2, NULL, DEF)))         \
    X(nn_from_data, ANY, E_ARG, "shape is NULL for rank 2",                                                          \
      GONE(wgt_tensor_from_data(f->ctx, F32, 2, NULL, D6, 24, DEF)))                                                 \
    X(nn_zeros, ANY, E_ARG, "shape is NULL for rank 1", GONE(wgt_zeros(f->ctx, F32, 1, NULL)))                       \
    X(nn_ones, ANY, E_ARG, "shape is NULL for rank 3", GONE(wgt_ones(f->ctx, F32, 3, NULL)))                         \
    X(nn_full, ANY, E_ARG, "shape is NULL for rank 2", GONE(wgt_full(f->ctx, F32, 2, NULL, 1.0)))                    \
    X(nn_uniform, ANY, E_ARG, "shape is NULL", GONE(wgt_rand_uniform(f->ctx, F32, 2, NULL, 0, 1, 7)))                \
    X(nn_normal, ANY, E_ARG, "shape is NULL", GONE(wgt_rand_normal(f->ctx, F32, 2, NULL, 0, 1, 7)))                  \
    X(nn_strided_shape, ANY, E_ARG, "shape is NULL", GONE(wgt_as_strided(f->a, 1, NULL, T1, 0)))                     \
    X(nn_strided_strides, ANY, E_ARG, "strides is NULL for rank 1", GONE(wgt_as_strided(f->a, 1, S6, NULL, 0)))      \
    X(nn_broadcast, ANY, E_ARG, "shape is NULL", GONE(wgt_broadcast_to(f->a, 2, NULL)))                              \
    X(nn_reshape, ANY, E_ARG, "shape is NULL", GONE(wgt_reshape(f->a, 2, NULL)))                                     \
    X(nn_data, ANY, E_ARG, "data is NULL for 24 bytes",                                                              \
      GONE(wgt_tensor_from_data(f->ctx, F32, 2, S23, NULL, 24, DEF)))                                                \
    X(nn_write_src, ANY, E_ARG, "source is NULL", BAD(wgt_tensor_write(f->a, NULL, 24)))                             \
    X(nn_read_dst, ANY, E_ARG, "destination is NULL", BAD(wgt_tensor_read(f->a, NULL, 24)))
TABLE(null_pointer_rows, NULL_POINTER_ROWS)

/* Creators: data types, usage flags, ranks, dimensions, ranges and random bounds. */
#define CREATION_ROWS(X)                                                                                             \
    X(cd_create, ANY, E_DTYPE, "unknown data type 99", GONE(wgt_tensor_create(f->ctx, BAD_DT, 2, S23, DEF)))         \
    X(cd_from_data, ANY, E_DTYPE, "99", GONE(wgt_tensor_from_data(f->ctx, BAD_DT, 2, S23, D6, 24, DEF)))             \
    X(cd_zeros, ANY, E_DTYPE, "99", GONE(wgt_zeros(f->ctx, BAD_DT, 2, S23)))                                         \
    X(cd_ones, ANY, E_DTYPE, "99", GONE(wgt_ones(f->ctx, BAD_DT, 2, S23)))                                           \
    X(cd_full, ANY, E_DTYPE, "99", GONE(wgt_full(f->ctx, BAD_DT, 2, S23, 1.0)))                                      \
    X(cd_arange, ANY, E_DTYPE, "99", GONE(wgt_arange(f->ctx, BAD_DT, 0, 4, 1)))                                      \
    X(cd_uniform, ANY, E_DTYPE, "99", GONE(wgt_rand_uniform(f->ctx, BAD_DT, 2, S23, 0, 1, 7)))                       \
    X(cd_normal, ANY, E_DTYPE, "99", GONE(wgt_rand_normal(f->ctx, BAD_DT, 2, S23, 0, 1, 7)))                         \
    X(cd_zero, ANY, E_DTYPE, "unknown data type 0", GONE(wgt_zeros(f->ctx, (wgt_dtype)0, 2, S23)))                   \
    X(cu_create, ANY, E_ARG, "usage flags 0x80", GONE(wgt_tensor_create(f->ctx, F32, 2, S23, 0x80)))                 \
    X(cu_all, ANY, E_ARG, "0xffffffff", GONE(wgt_tensor_create(f->ctx, F32, 2, S23, ~0u)))                           \
    X(cu_from_data, ANY, E_ARG, "0x10", GONE(wgt_tensor_from_data(f->ctx, F32, 2, S23, D6, 24, 0x10)))               \
    X(cu_export_cpu, CPU, E_USAGE, "exportable", GONE(wgt_tensor_create(f->ctx, F32, 2, S23, WGT_USAGE_EXPORTABLE))) \
    X(cu_export_cpu2, CPU, E_USAGE, "exportable",                                                                    \
      GONE(wgt_tensor_from_data(f->ctx, F32, 2, S23, D6, 24, DEF | WGT_USAGE_EXPORTABLE)))                           \
    X(cr_create_m1, ANY, E_SHAPE, "rank -1", GONE(wgt_tensor_create(f->ctx, F32, -1, S23, DEF)))                     \
    X(cr_create_9, ANY, E_SHAPE, "rank 9", GONE(wgt_tensor_create(f->ctx, F32, 9, S9, DEF)))                         \
    X(cr_zeros_9, ANY, E_SHAPE, "rank 9", GONE(wgt_zeros(f->ctx, F32, 9, S9)))                                       \
    X(cr_full_m1, ANY, E_SHAPE, "rank -1", GONE(wgt_full(f->ctx, F32, -1, S23, 1.0)))                                \
    X(cr_data_9, ANY, E_SHAPE, "rank 9", GONE(wgt_tensor_from_data(f->ctx, F32, 9, S9, D6, 4, DEF)))                 \
    X(cr_uniform_m1, ANY, E_SHAPE, "rank -1", GONE(wgt_rand_uniform(f->ctx, F32, -1, S23, 0, 1, 7)))                 \
    X(cn_create, ANY, E_SHAPE, "negative (-3)", GONE(wgt_tensor_create(f->ctx, F32, 2, S_NEG, DEF)))                 \
    X(cn_ones, ANY, E_SHAPE, "[2, -3]", GONE(wgt_ones(f->ctx, F32, 2, S_NEG)))                                       \
    X(cn_normal, ANY, E_SHAPE, "-3", GONE(wgt_rand_normal(f->ctx, F32, 2, S_NEG, 0, 1, 7)))                          \
    X(co_create, ANY, E_SHAPE, "overflows", GONE(wgt_tensor_create(f->ctx, F32, 2, S_OVF, DEF)))                     \
    X(co_zeros, ANY, E_SHAPE, "[1099511627776, 1099511627776]", GONE(wgt_zeros(f->ctx, F32, 2, S_OVF)))              \
    X(co_from_data, ANY, E_SHAPE, "overflows", GONE(wgt_tensor_from_data(f->ctx, F32, 2, S_OVF, D6, 24, DEF)))       \
    X(ca_step0, ANY, E_ARG, "step 0", GONE(wgt_arange(f->ctx, F32, 0, 4, 0)))                                        \
    X(ca_start_nan, ANY, E_ARG, "nan", GONE(wgt_arange(f->ctx, F32, NAN, 4, 1)))                                     \
    X(ca_stop_inf, ANY, E_ARG, "stop inf", GONE(wgt_arange(f->ctx, F32, 0, INFINITY, 1)))                            \
    X(ca_step_inf, ANY, E_ARG, "step -inf", GONE(wgt_arange(f->ctx, F32, 0, 4, -INFINITY)))                          \
    X(ca_too_many, ANY, E_SHAPE, "1e+19", GONE(wgt_arange(f->ctx, F32, 0, 1e19, 1)))                                 \
    X(cg_uniform_order, ANY, E_ARG, "[2, 1)", GONE(wgt_rand_uniform(f->ctx, F32, 2, S23, 2, 1, 7)))                  \
    X(cg_uniform_inf, ANY, E_ARG, "-inf", GONE(wgt_rand_uniform(f->ctx, F32, 2, S23, -INFINITY, 1, 7)))              \
    X(cg_uniform_nan, ANY, E_ARG, "nan", GONE(wgt_rand_uniform(f->ctx, F32, 2, S23, 0, NAN, 7)))                     \
    X(cg_normal_sd, ANY, E_ARG, "stddev -1", GONE(wgt_rand_normal(f->ctx, F32, 2, S23, 0, -1, 7)))                   \
    X(cg_normal_mean, ANY, E_ARG, "nan", GONE(wgt_rand_normal(f->ctx, F32, 2, S23, NAN, 1, 7)))                      \
    X(cg_normal_inf, ANY, E_ARG, "stddev inf", GONE(wgt_rand_normal(f->ctx, F32, 2, S23, 0, INFINITY, 7)))
TABLE(creation_rows, CREATION_ROWS)

/* Elementwise operands, axes, reshapes, strided views and broadcasts. */
#define OPS_VIEW_ROWS(X)                                                                                             \
    X(ob_add, ANY, E_SHAPE, "[2, 3] and [4]", GONE(wgt_add(f->a, f->v4)))                                            \
    X(ob_sub, ANY, E_SHAPE, "[4] and [2, 3]", GONE(wgt_sub(f->v4, f->a)))                                            \
    X(ob_mul, ANY, E_SHAPE, "[2, 3] and [4]", GONE(wgt_mul(f->a, f->v4)))                                            \
    X(ob_div, ANY, E_SHAPE, "[2, 3] and [4, 3]", GONE(wgt_div(f->a, f->bcast)))                                      \
    X(ot_add, ANY, E_DTYPE, "b is i32", GONE(wgt_add(f->a, f->ai)))                                                  \
    X(ot_sub, ANY, E_DTYPE, "a is i32", GONE(wgt_sub(f->ai, f->a)))                                                  \
    X(ot_mul, ANY, E_DTYPE, "f32", GONE(wgt_mul(f->a, f->ai)))                                                       \
    X(ot_div, ANY, E_DTYPE, "i32", GONE(wgt_div(f->ai, f->a)))                                                       \
    X(ox_transpose_pos, ANY, E_SHAPE, "axis 2 is out of range for rank 2", GONE(wgt_transpose(f->a, 2, 0)))          \
    X(ox_transpose_neg, ANY, E_SHAPE, "axis -3", GONE(wgt_transpose(f->a, 0, -3)))                                   \
    X(ox_slice_pos, ANY, E_SHAPE, "axis 2", GONE(wgt_slice(f->a, 2, 0, 1, 1)))                                       \
    X(ox_slice_neg, ANY, E_SHAPE, "axis -3", GONE(wgt_slice(f->a, -3, 0, 1, 1)))                                     \
    X(ox_slice_step0, ANY, E_ARG, "step is 0", GONE(wgt_slice(f->a, 0, 0, 2, 0)))                                    \
    X(or_count, ANY, E_SHAPE, "cannot reshape [2, 3] (6 elements) to [4]", GONE(wgt_reshape(f->a, 1, S4)))           \
    X(or_two_infer, ANY, E_SHAPE, "-1", GONE(wgt_reshape(f->a, 2, S_M1M1)))                                          \
    X(or_infer_bad, ANY, E_SHAPE, "[-1, 4]", GONE(wgt_reshape(f->a, 2, S_M14)))                                      \
    X(or_negative, ANY, E_SHAPE, "-2", GONE(wgt_reshape(f->a, 1, S_M2)))                                             \
    X(or_rank9, ANY, E_SHAPE, "rank 9", GONE(wgt_reshape(f->a, 9, S9)))                                              \
    X(or_rank_m1, ANY, E_SHAPE, "rank -1", GONE(wgt_reshape(f->a, -1, S6)))                                          \
    X(os_neg_offset, ANY, E_SHAPE, "offset -1", GONE(wgt_as_strided(f->a, 1, S2, T1, -1)))                           \
    X(os_big_stride, ANY, E_SHAPE, "stride 100", GONE(wgt_as_strided(f->a, 1, S2, T100, 0)))                         \
    X(os_neg_stride, ANY, E_SHAPE, "stride -100", GONE(wgt_as_strided(f->a, 1, S2, TM100, 5)))                       \
    X(os_past_end, ANY, E_SHAPE, "offset 5", GONE(wgt_as_strided(f->a, 1, S2, T1, 5)))                               \
    X(os_at_end, ANY, E_SHAPE, "offset 6", GONE(wgt_as_strided(f->a, 1, S1, T1, 6)))                                 \
    X(os_2d_end, ANY, E_SHAPE, "6 elements", GONE(wgt_as_strided(f->a, 2, S23, T31, 1)))                             \
    X(os_below, ANY, E_SHAPE, "[3] at offset 1", GONE(wgt_as_strided(f->a, 1, S3, TM1, 1)))                          \
    X(os_rank9, ANY, E_SHAPE, "rank 9", GONE(wgt_as_strided(f->a, 9, S9, T9, 0)))                                    \
    X(os_neg_dim, ANY, E_SHAPE, "-2", GONE(wgt_as_strided(f->a, 1, S_M2, T1, 0)))                                    \
    X(oc_shape, ANY, E_SHAPE, "[2, 3] cannot broadcast to [4]", GONE(wgt_broadcast_to(f->a, 1, S4)))                 \
    X(oc_dim, ANY, E_SHAPE, "to [3, 3]", GONE(wgt_broadcast_to(f->a, 2, S33)))                                       \
    X(oc_fewer, ANY, E_SHAPE, "to [3]", GONE(wgt_broadcast_to(f->a, 1, S3)))                                         \
    X(oc_rank9, ANY, E_SHAPE, "rank 9", GONE(wgt_broadcast_to(f->a, 9, S9)))                                         \
    X(oc_neg, ANY, E_SHAPE, "-3", GONE(wgt_broadcast_to(f->a, 2, S_NEG)))
TABLE(ops_view_rows, OPS_VIEW_ROWS)

/* Usage flags, byte counts, destroyed storage, broadcast writes and foreign contexts. */
#define DATA_ROWS(X)                                                                                                 \
    X(du_read, ANY, E_USAGE, "readable", BAD(wgt_tensor_read(f->write_only, f->dst, 24)))                            \
    X(du_data, ANY, E_USAGE, "readable", wgt_tensor_data(f->write_only) == NULL)                                     \
    X(du_write, ANY, E_USAGE, "writable", BAD(wgt_tensor_write(f->read_only, W12, 24)))                              \
    X(du_data_mut, ANY, E_USAGE, "writable", wgt_tensor_data_mut(f->read_only) == NULL)                              \
    X(du_export, ANY, E_USAGE, "exportable", wgt_tensor_export_buffer(f->a, NULL) == NULL)                           \
    X(du_export_ro, ANY, E_USAGE, "exportable", wgt_tensor_export_buffer(f->read_only, NULL) == NULL)                \
    X(dn_read_small, ANY, E_USAGE, "byte count 23", BAD(wgt_tensor_read(f->a, f->dst, 23)))                          \
    X(dn_read_large, ANY, E_USAGE, "byte count 25", BAD(wgt_tensor_read(f->a, f->dst, 25)))                          \
    X(dn_read_zero, ANY, E_USAGE, "24 bytes", BAD(wgt_tensor_read(f->a, f->dst, 0)))                                 \
    X(dn_write_small, ANY, E_USAGE, "byte count 23", BAD(wgt_tensor_write(f->a, W12, 23)))                           \
    X(dn_write_large, ANY, E_USAGE, "byte count 25", BAD(wgt_tensor_write(f->a, W12, 25)))                           \
    X(dn_data_small, ANY, E_USAGE, "byte count 23", GONE(wgt_tensor_from_data(f->ctx, F32, 2, S23, D6, 23, DEF)))    \
    X(dn_data_large, ANY, E_USAGE, "byte count 25", GONE(wgt_tensor_from_data(f->ctx, F32, 2, S23, W12, 25, DEF)))   \
    X(dw_broadcast, ANY, E_USAGE, "broadcast", BAD(wgt_tensor_write(f->bcast, W12, 48)))                             \
    X(dd_read, ANY, E_DEAD, "destroyed", BAD(wgt_tensor_read(f->dead, f->dst, 24)))                                  \
    X(dd_write, ANY, E_DEAD, "destroyed", BAD(wgt_tensor_write(f->dead, W12, 24)))                                   \
    X(dd_data, ANY, E_DEAD, "destroyed", wgt_tensor_data(f->dead) == NULL)                                           \
    X(dd_data_mut, ANY, E_DEAD, "destroyed", wgt_tensor_data_mut(f->dead) == NULL)                                   \
    X(dd_export, ANY, E_DEAD, "destroyed", wgt_tensor_export_buffer(f->dead, NULL) == NULL)                          \
    X(dd_add_a, ANY, E_DEAD, "a was destroyed", GONE(wgt_add(f->dead, f->a)))                                        \
    X(dd_add_b, ANY, E_DEAD, "b was destroyed", GONE(wgt_add(f->a, f->dead)))                                        \
    X(dd_div, ANY, E_DEAD, "destroyed", GONE(wgt_div(f->dead, f->dead)))                                             \
    X(dd_slice, ANY, E_DEAD, "destroyed", GONE(wgt_slice(f->dead, 0, 0, 1, 1)))                                      \
    X(dd_transpose, ANY, E_DEAD, "destroyed", GONE(wgt_transpose(f->dead, 0, 1)))                                    \
    X(dd_reshape, ANY, E_DEAD, "destroyed", GONE(wgt_reshape(f->dead, 1, S6)))                                       \
    X(dd_as_strided, ANY, E_DEAD, "destroyed", GONE(wgt_as_strided(f->dead, 1, S2, T1, 0)))                          \
    X(dd_broadcast, ANY, E_DEAD, "destroyed", GONE(wgt_broadcast_to(f->dead, 2, S43)))                               \
    X(dd_contiguous, ANY, E_DEAD, "destroyed", GONE(wgt_contiguous(f->dead)))                                        \
    X(dv_read, ANY, E_DEAD, "destroyed", BAD(wgt_tensor_read(f->dead_view, f->dst, 12)))                             \
    X(dv_slice, ANY, E_DEAD, "destroyed", GONE(wgt_slice(f->dead_view, 1, 0, 2, 1)))                                 \
    X(dv_add, ANY, E_DEAD, "destroyed", GONE(wgt_add(f->a, f->dead_view)))                                           \
    X(dm_add, ANY, E_CTX, "two different contexts", GONE(wgt_add(f->a, f->foreign)))                                 \
    X(dm_sub, ANY, E_CTX, "contexts", GONE(wgt_sub(f->foreign, f->a)))                                               \
    X(dm_mul, ANY, E_CTX, "contexts", GONE(wgt_mul(f->a, f->foreign)))                                               \
    X(dm_div, ANY, E_CTX, "contexts", GONE(wgt_div(f->foreign, f->a)))                                               \
    X(dm_eval, ANY, E_CTX, "tensors[0] (", BAD(wgt_eval(2, (wgt_tensor *const[]){f->a, f->foreign})))                \
    X(dm_eval_null, ANY, E_CTX, "and tensors[2] (", BAD(wgt_eval(3, (wgt_tensor *const[]){NULL, f->a, f->foreign})))
TABLE(data_rows, DATA_ROWS)

/* Tensors larger than the backend allows (WebGPU: maxStorageBufferBindingSize, 128 MiB on
 * lavapipe; CPU: the address space). The shapes are never allocated. */
#define LIMIT_ROWS(X)                                                                                                \
    X(lg_create, GPU, EITHER(E_LIMIT, E_OOM), "allows",                                                          \
      GONE(wgt_tensor_create(f->ctx, F32, 2, S_BIG_GPU, DEF)))                                                    \
    X(lg_zeros, GPU, EITHER(E_LIMIT, E_OOM), "allows", GONE(wgt_zeros(f->ctx, F32, 2, S_BIG_GPU)))                   \
    X(lg_full, GPU, EITHER(E_LIMIT, E_OOM), "allows", GONE(wgt_full(f->ctx, F32, 2, S_BIG_GPU, 1)))                  \
    X(lg_contiguous, GPU, EITHER(E_LIMIT, E_OOM), "allows", big_contiguous(f))                                       \
    X(lg_add, GPU, EITHER(E_LIMIT, E_OOM), "allows", big_add(f, BIG_GPU_ROWS))                                       \
    X(la_create, ANY, E_SHAPE, "byte count of shape [2305843009213693952] overflows",                            \
      GONE(wgt_tensor_create(f->ctx, F32, 1, S_BIG, DEF)))                                                        \
    X(la_ones, ANY, E_SHAPE, "overflows", GONE(wgt_ones(f->ctx, F32, 1, S_BIG)))                                     \
    X(lc_add, CPU, E_SHAPE, "[576460752303423488, 8] overflows", big_add(f, 1LL << 59))
TABLE(limit_rows, LIMIT_ROWS)

#define CONTEXT_ROWS(X)                                                                                              \
    X(ck_3, ANY, E_ARG, "unknown backend 3", context_fails(3))                                                       \
    X(ck_99, ANY, E_ARG, "unknown backend 99", context_fails(99))                                                    \
    X(ck_m1, ANY, E_ARG, "unknown backend -1", context_fails(-1))
TABLE(context_rows, CONTEXT_ROWS)

/* Views whose element or byte counts overflow: rejected by the shape check. */
#define BUG_ROWS(X)                                                                                                  \
    X(bug_strided_wrap, ANY, E_SHAPE, "overflows", GONE(wgt_as_strided(f->a, 1, S_HUGE, T4, 0)))                     \
    X(bug_strided_wrap_neg, ANY, E_SHAPE, "overflows", GONE(wgt_as_strided(f->a, 1, S_HUGE, TM4, 5)))                \
    X(bug_strided_bytes, ANY, EITHER(E_SHAPE, E_LIMIT), "[4611686018427387905]",                                     \
      GONE(wgt_as_strided(f->a, 1, S_HUGE, T0, 0)))                                                                  \
    X(bug_broadcast_bytes, ANY, EITHER(E_SHAPE, E_LIMIT), "[4611686018427387905]", broadcast_huge(f))
TABLE(bug_rows, BUG_ROWS)

/* ---- fixture and runner ---- */

static void fx_setup(fx *f, wgt_context *ctx, int with_other) {
    memset(f, 0, sizeof *f);
    f->ctx = ctx;
    if (!ctx) return;
    f->a = wgt_tensor_from_data(ctx, F32, 2, S23, D6, sizeof D6, DEF);
    f->v4 = wgt_zeros(ctx, F32, 1, S4);
    f->ai = wgt_zeros(ctx, WGT_I32, 2, S23);
    f->read_only = wgt_tensor_from_data(ctx, F32, 2, S23, D6, sizeof D6, WGT_USAGE_READABLE);
    f->write_only = wgt_tensor_create(ctx, F32, 2, S23, WGT_USAGE_WRITABLE);
    f->dead = wgt_zeros(ctx, F32, 2, S23);
    CHECK(wgt_tensor_destroy(f->dead) == WGT_OK && wgt_tensor_destroy(f->dead) == WGT_OK, "destroy twice");
    wgt_tensor *base = wgt_zeros(ctx, F32, 2, S23), *row0 = wgt_slice(f->a, 0, 0, 1, 1);
    f->dead_view = wgt_slice(base, 0, 0, 1, 1);
    wgt_tensor_destroy(base);
    wgt_release(base);
    f->bcast = wgt_broadcast_to(row0, 2, S43);
    wgt_release(row0);
    if (with_other && (f->other = test_new_context(wgt_context_backend(ctx))))
        f->foreign = wgt_zeros(f->other, F32, 2, S23);
    CHECK(f->a && f->v4 && f->ai && f->read_only && f->write_only && f->dead && f->dead_view && f->bcast &&
              (!with_other || f->foreign),
          "fixture: %s", wgt_last_error());
    wgt_clear_error();
}

static void fx_teardown(fx *f) {
    wgt_tensor *all[] = {f->a, f->v4, f->ai, f->read_only, f->write_only, f->dead, f->dead_view, f->bcast, f->foreign};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) wgt_release(all[i]);
    wgt_context_release(f->other);
}

static int holds(wgt_tensor *t, const float *want, float scale) {
    float got[6];
    if (wgt_tensor_read(t, got, sizeof got) != WGT_OK) return 0;
    for (int i = 0; i < 6; i++)
        if (got[i] != want[i] * scale) return 0;
    return 1;
}

/* Nothing a failed call touched may have changed, and the context must still compute. */
static void verify_unchanged(fx *f, const char *what) {
    for (int i = 0; i < 8; i++) CHECK(f->dst[i] == SENTINEL, "after %s: the read buffer was written", what);
    if (!f->ctx) return;
    wgt_clear_error();
    CHECK(holds(f->a, D6, 1), "after %s: tensor a changed or is unreadable: %s", what, wgt_last_error());
    CHECK(holds(f->read_only, D6, 1), "after %s: read_only changed: %s", what, wgt_last_error());
    wgt_tensor *sum = wgt_add(f->a, f->a);
    CHECK(sum && holds(sum, D6, 2), "after %s: wgt_add no longer works: %s", what, wgt_last_error());
    wgt_release(sum);
    CHECK(wgt_context_status(f->ctx) == WGT_OK, "after %s: context status %s", what, wgt_last_error());
    wgt_clear_error();
}

/* Runs every row that applies to this backend. primed: an earlier failure (transpose with
 * axis 5) is pending, and the row's NULL argument must leave its message in place. */
static void run_rows(fx *f, const row *rows, int n, int primed) {
    for (int i = 0; i < n; i++) {
        const row *r = &rows[i];
        if (r->only && strcmp(r->only, test_backend_name())) continue;
        for (int k = 0; k < 8; k++) f->dst[k] = SENTINEL;
        f->has_ret = 0;
        wgt_clear_error();
        if (primed) CHECK(gone(wgt_transpose(f->a, 5, 0)), "priming failure did not fail");
        int failed = r->misuse(f);
        wgt_status got = wgt_last_status();
        const char *msg = wgt_last_error();
        CHECK(failed, "%s did not fail (status %s: %s)", r->what, wgt_status_name(got), msg);
        if (!failed) {
        } else if (primed) {
            CHECK(got == WGT_ERR_SHAPE && test_contains(msg, "axis 5"), "%s replaced the pending error: %s: %s",
                  r->what, wgt_status_name(got), msg);
        } else if (r->status == WGT_OK) {
            CHECK(got == WGT_OK, "%s recorded an error: %s", r->what, msg);
        } else {
            CHECK(got == r->status || (r->alt != WGT_OK && got == r->alt), "%s: status %s, wanted %s; message: %s",
                  r->what, wgt_status_name(got), wgt_status_name(r->status), msg);
            CHECK(test_contains(msg, r->word), "%s: message lacks '%s': %s", r->what, r->word, msg);
            CHECK(!f->has_ret || f->ret == got, "%s returned %s but recorded %s", r->what, wgt_status_name(f->ret),
                  wgt_status_name(got));
        }
        verify_unchanged(f, r->what);
    }
}

#define RUN_TABLE(f, t, primed) run_rows(f, t, COUNT(t), primed)

/* ---- tests ---- */

TEST_BACKENDS(errors_null_arguments) {
    fx f;
    fx_setup(&f, ctx, 0);
    RUN_TABLE(&f, null_handle_rows, 0);
    RUN_TABLE(&f, null_pointer_rows, 0);
    fx_teardown(&f);
}

TEST_BACKENDS(errors_first_error_kept) {
    fx f;
    fx_setup(&f, ctx, 0);
    RUN_TABLE(&f, null_handle_rows, 1);
    /* Chains: the NULL from a failing op flows into the next ones. */
    wgt_clear_error();
    wgt_tensor *r1 = wgt_reshape(f.a, 1, S4), *r2 = wgt_add(r1, f.a), *r3 = wgt_slice(r2, 0, 0, 1, 1);
    CHECK(!r1 && !r2 && !r3 && wgt_last_status() == WGT_ERR_SHAPE &&
              test_contains(wgt_last_error(), "cannot reshape [2, 3]"),
          "chain after a bad reshape: %s", wgt_last_error());
    CHECK(wgt_tensor_read(r3, f.dst, 4) != WGT_OK && test_contains(wgt_last_error(), "wgt_reshape"),
          "read of the chain's NULL: %s", wgt_last_error());
    wgt_clear_error();
    wgt_tensor *d1 = wgt_mul(f.dead, f.a), *d2 = wgt_contiguous(d1);
    CHECK(!d1 && !d2 && wgt_last_status() == WGT_ERR_DESTROYED && test_contains(wgt_last_error(), "wgt_mul"),
          "chain after a destroyed operand: %s", wgt_last_error());
    wgt_clear_error();
    wgt_context_options bad_opt = {0};
    bad_opt.backend = (wgt_backend_kind)42;
    wgt_context *c = wgt_context_create(&bad_opt);
    wgt_tensor *z = wgt_zeros(c, F32, 2, S23);
    CHECK(!c && !z && wgt_tensor_destroy(z) != WGT_OK && wgt_last_status() == WGT_ERR_INVALID_ARGUMENT &&
              test_contains(wgt_last_error(), "unknown backend 42"),
          "chain after a failed context: %s", wgt_last_error());
    wgt_clear_error();
    wgt_release(r1); wgt_release(r2); wgt_release(r3); wgt_release(d1); wgt_release(d2); wgt_release(z);
    wgt_context_release(c);
    fx_teardown(&f);
}

TEST_BACKENDS(errors_creation) {
    fx f;
    fx_setup(&f, ctx, 0);
    RUN_TABLE(&f, creation_rows, 0);
    fx_teardown(&f);
}

TEST_BACKENDS(errors_ops_and_views) {
    fx f;
    fx_setup(&f, ctx, 0);
    RUN_TABLE(&f, ops_view_rows, 0);
    fx_teardown(&f);
}

TEST_BACKENDS(errors_data_and_lifetime) {
    fx f;
    fx_setup(&f, ctx, 1);
    RUN_TABLE(&f, data_rows, 0);
    /* The exportable usage works where it is supported (WebGPU). */
    if (wgt_context_backend(ctx) == WGT_BACKEND_WEBGPU) {
        wgt_tensor *e = wgt_tensor_create(ctx, F32, 2, S23, DEF | WGT_USAGE_EXPORTABLE);
        uint64_t off = 99;
        CHECK(e && wgt_tensor_export_buffer(e, &off) != NULL && off == 0, "export: %s", wgt_last_error());
        wgt_release(e);
    }
    fx_teardown(&f);
}

static uint64_t describe_value(wgt_context *ctx, const char *key) {
    char *d = wgt_context_describe(ctx);
    const char *p = d ? strstr(d, key) : NULL;
    uint64_t v = p ? strtoull(p + strlen(key), NULL, 10) : 0;
    free(d);
    return v;
}

/* Largest tensor the WebGPU device allows, in bytes (as the library computes it). */
static uint64_t gpu_max_bytes(wgt_context *ctx) {
    uint64_t bind = describe_value(ctx, "maxStorageBufferBindingSize: "), buf = describe_value(ctx, "maxBufferSize: ");
    return bind < buf ? bind : buf;
}

TEST_BACKENDS(errors_limits) {
    fx f;
    fx_setup(&f, ctx, 0);
    if (wgt_context_backend(ctx) == WGT_BACKEND_WEBGPU) {
        uint64_t max = gpu_max_bytes(ctx);
        S_BIG_GPU[0] = (int64_t)(max / 8) + 1; /* [rows, 2] f32: one row past the limit */
        BIG_GPU_ROWS = (int64_t)(max / 32) + 1; /* [rows, 8] f32 */
    }
    RUN_TABLE(&f, limit_rows, 0);
    if (wgt_context_backend(ctx) == WGT_BACKEND_WEBGPU) { /* one element past the device's limit */
        uint64_t max = gpu_max_bytes(ctx);
        int64_t shape[1] = {(int64_t)(max / 4) + 1};
        char word[32];
        snprintf(word, sizeof word, "%llu", (unsigned long long)max);
        CHECK(max > 0, "no maxStorageBufferBindingSize in wgt_context_describe");
        CHECK_ERROR(gone(wgt_tensor_create(ctx, F32, 1, shape, DEF)), WGT_ERR_LIMIT, word);
        verify_unchanged(&f, "a tensor one element past the limit");
    }
    fx_teardown(&f);
}

TEST(errors_context_options) {
    fx f;
    fx_setup(&f, NULL, 0);
    RUN_TABLE(&f, context_rows, 0);
    wgt_context *c = test_new_context(WGT_BACKEND_CPU); /* the library still starts contexts */
    wgt_context_release(c);
}

/* Zero dimensions are valid everywhere: numel 0, nbytes 0, and ops give empty results. */
TEST_BACKENDS(errors_zero_dims_are_valid) {
    static const int64_t s03[] = {0, 3};
    wgt_clear_error();
    wgt_tensor *z = wgt_zeros(ctx, F32, 2, s03), *v = wgt_ones(ctx, F32, 1, S3);
    wgt_tensor *e = wgt_tensor_from_data(ctx, F32, 2, s03, NULL, 0, DEF);
    wgt_tensor *big0 = wgt_tensor_create(ctx, F32, 3, S_ZERO_OVF, DEF);
    wgt_tensor *sum = wgt_add(z, v), *rs = wgt_reshape(z, 2, S30), *ar = wgt_arange(ctx, F32, 0, 0, 1);
    wgt_tensor *sl = wgt_slice(v, 0, 2, 1, 1), *tr = wgt_transpose(z, 0, 1), *c = wgt_contiguous(tr);
    CHECK(z && wgt_tensor_numel(z) == 0 && wgt_tensor_nbytes(z) == 0, "zeros [0, 3]: %s", wgt_last_error());
    CHECK(e && wgt_tensor_numel(e) == 0, "from_data [0, 3] with NULL data: %s", wgt_last_error());
    CHECK(big0 && wgt_tensor_numel(big0) == 0, "[2^40, 2^40, 0] is empty, not an overflow: %s", wgt_last_error());
    CHECK(sum && wgt_tensor_ndim(sum) == 2 && wgt_tensor_shape(sum)[0] == 0 && wgt_tensor_shape(sum)[1] == 3,
          "[0, 3] + [3]: %s", wgt_last_error());
    CHECK(rs && wgt_tensor_numel(rs) == 0 && ar && wgt_tensor_numel(ar) == 0 && sl && wgt_tensor_numel(sl) == 0,
          "empty reshape, arange or slice: %s", wgt_last_error());
    CHECK(c && wgt_tensor_shape(c)[0] == 3 && wgt_tensor_numel(c) == 0, "empty transpose: %s", wgt_last_error());
    CHECK(wgt_tensor_read(z, NULL, 0) == WGT_OK && wgt_tensor_write(z, NULL, 0) == WGT_OK, "0-byte read/write: %s",
          wgt_last_error());
    CHECK(wgt_last_status() == WGT_OK, "an error was recorded: %s", wgt_last_error());
    wgt_tensor *all[] = {z, v, e, big0, sum, rs, ar, sl, tr, c};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) wgt_release(all[i]);
}

/*
 * Edges that once were bugs: views whose element or byte counts overflow 64 bits, a tensor of
 * exactly the device's binding limit (accepted), a byte count too large to state (a shape
 * error, not a wrapped size), and slices whose step is near INT64_MAX or INT64_MIN.
 */
TEST_BACKENDS(errors_overflowing_views_and_limit_edges) {
    fx f;
    fx_setup(&f, ctx, 0);
    RUN_TABLE(&f, bug_rows, 0);
    if (wgt_context_backend(ctx) == WGT_BACKEND_WEBGPU) { /* bug 3 */
        uint64_t max = gpu_max_bytes(ctx);
        int64_t shape[1] = {(int64_t)(max / 4)};
        wgt_clear_error();
        wgt_tensor *t = wgt_tensor_create(ctx, F32, 1, shape, DEF); /* storage is made lazily: no allocation */
        CHECK(t != NULL, "a f32 tensor of exactly the device's %llu-byte limit was refused: %s",
              (unsigned long long)max, wgt_last_error());
        wgt_release(t);
    }
    static const int64_t s62[1] = {1LL << 62}; /* bug 4 */
    wgt_clear_error();
    CHECK(gone(wgt_tensor_create(ctx, F32, 1, s62, DEF)) && wgt_last_status() == WGT_ERR_SHAPE &&
              test_contains(wgt_last_error(), "byte count of shape [4611686018427387904] overflows"),
          "LIMIT message for 2^62 f32 elements: %s", wgt_last_error());
    wgt_tensor *t6 = wgt_arange(ctx, F32, 1, 7, 1); /* bug 5: 1..6 */
    wgt_tensor *s1 = wgt_slice(t6, 0, 0, 6, INT64_MAX), *s2 = wgt_slice(t6, 0, 5, -7, INT64_MIN);
    float v1 = 0, v2 = 0;
    CHECK(s1 && wgt_tensor_numel(s1) == 1 && wgt_tensor_read(s1, &v1, 4) == WGT_OK && v1 == 1,
          "slice [0:6:INT64_MAX] of 1..6 has %lld elements, wanted [1]", (long long)wgt_tensor_numel(s1));
    CHECK(s2 && wgt_tensor_numel(s2) == 1 && wgt_tensor_read(s2, &v2, 4) == WGT_OK && v2 == 6,
          "slice [5:-7:INT64_MIN] of 1..6 has %lld elements, wanted [6]", (long long)wgt_tensor_numel(s2));
    wgt_release(s1);
    wgt_release(s2);
    wgt_release(t6);
    wgt_clear_error();
    fx_teardown(&f);
}
