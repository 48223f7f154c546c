/*
 * The one interface every backend implements: a table of functions the core calls. The
 * core owns tensors, shapes and the residency of each storage; a backend owns device
 * memory (wgt_buffer) and runs kernels over operands the core has already validated and
 * made resident. Backends never call back into the core, and the core never names a
 * WebGPU type.
 */
#ifndef WGT_BACKEND_H
#define WGT_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "wgtensor.h"

typedef struct wgt_buffer wgt_buffer; /* device memory, defined by each device backend */

/* A strided view of one storage, as a kernel sees it. Shapes and strides are in elements;
 * strides may be 0 (broadcast) or negative. */
typedef struct wgt_operand {
    wgt_dtype dtype;
    int ndim;
    int64_t shape[WGT_MAX_DIMS];
    int64_t strides[WGT_MAX_DIMS];
    int64_t offset;
    void *host;         /* host-resident backends: the storage's memory */
    wgt_buffer *buffer; /* device backends: the storage's buffer */
    struct wgt_storage *storage; /* the core's bookkeeping; backends never look at it */
} wgt_operand;

/* An rms_norm applied to a quantized product's x inside the product (matmul_quantized):
 * weight f32 [K] at any stride, or NULL; eps as the rows entry takes it. */
typedef struct wgt_quant_norm {
    const wgt_operand *weight;
    double eps;
} wgt_quant_norm;

/* Binary ops. The comparisons and logical ops give u32 0/1 outputs. */
typedef enum wgt_binary_op {
    WGT_BINARY_ADD,
    WGT_BINARY_SUB,
    WGT_BINARY_MUL,
    WGT_BINARY_DIV,
    WGT_BINARY_POW,
    WGT_BINARY_MAXIMUM,
    WGT_BINARY_MINIMUM,
    WGT_BINARY_MOD,
    WGT_BINARY_ATAN2,
    WGT_BINARY_EQ,
    WGT_BINARY_NE,
    WGT_BINARY_LT,
    WGT_BINARY_LE,
    WGT_BINARY_GT,
    WGT_BINARY_GE,
    WGT_BINARY_LOGICAL_AND,
    WGT_BINARY_LOGICAL_OR,
    /* The array API's additions (core/math2 set): not comparisons, whatever their position. */
    WGT_BINARY_LOGADDEXP,
    WGT_BINARY_HYPOT,
    WGT_BINARY_COPYSIGN,
    WGT_BINARY_NEXTAFTER,
    WGT_BINARY_BITWISE_AND,
    WGT_BINARY_BITWISE_OR,
    WGT_BINARY_BITWISE_XOR,
    WGT_BINARY_LEFT_SHIFT,
    WGT_BINARY_RIGHT_SHIFT,
    WGT_BINARY_FLOOR_DIVIDE,
    WGT_BINARY_LOGICAL_XOR,
    WGT_BINARY_COUNT
} wgt_binary_op;

/* Unary ops; params[0] and params[1] carry leaky_relu's slope, elu's alpha, clamp's bounds.
 * isnan, isinf, logical_not, signbit and isfinite give u32 0/1 outputs. */
typedef enum wgt_unary_op {
    WGT_UNARY_NEG,
    WGT_UNARY_ABS,
    WGT_UNARY_SIGN,
    WGT_UNARY_SQUARE,
    WGT_UNARY_SQRT,
    WGT_UNARY_RSQRT,
    WGT_UNARY_RECIPROCAL,
    WGT_UNARY_EXP,
    WGT_UNARY_EXPM1,
    WGT_UNARY_LOG,
    WGT_UNARY_LOG1P,
    WGT_UNARY_SIN,
    WGT_UNARY_COS,
    WGT_UNARY_TANH,
    WGT_UNARY_SIGMOID,
    WGT_UNARY_RELU,
    WGT_UNARY_LEAKY_RELU,
    WGT_UNARY_ELU,
    WGT_UNARY_GELU,
    WGT_UNARY_GELU_TANH,
    WGT_UNARY_SILU,
    WGT_UNARY_SOFTPLUS,
    WGT_UNARY_FLOOR,
    WGT_UNARY_CEIL,
    WGT_UNARY_ROUND,
    WGT_UNARY_ERF,
    WGT_UNARY_ISNAN,
    WGT_UNARY_ISINF,
    WGT_UNARY_CLAMP,
    WGT_UNARY_LOGICAL_NOT,
    WGT_UNARY_TAN,
    WGT_UNARY_ASIN,
    WGT_UNARY_ACOS,
    WGT_UNARY_ATAN,
    WGT_UNARY_SINH,
    WGT_UNARY_COSH,
    WGT_UNARY_ASINH,
    WGT_UNARY_ACOSH,
    WGT_UNARY_ATANH,
    WGT_UNARY_LOG2,
    WGT_UNARY_LOG10,
    WGT_UNARY_EXP2,
    WGT_UNARY_TRUNC,
    WGT_UNARY_SIGNBIT,
    WGT_UNARY_ISFINITE,
    WGT_UNARY_BITWISE_NOT,
    WGT_UNARY_COUNT
} wgt_unary_op;

/* Ops whose kernels give u32 0/1 whatever the input type (the core casts these to bool
 * for the caller: core/binary.c and core/unary.c). */
static inline int wgt_binary_gives_u32(wgt_binary_op op) {
    return (op >= WGT_BINARY_EQ && op <= WGT_BINARY_LOGICAL_OR) || op == WGT_BINARY_LOGICAL_XOR;
}
static inline int wgt_unary_gives_u32(wgt_unary_op op) {
    return op == WGT_UNARY_ISNAN || op == WGT_UNARY_ISINF || op == WGT_UNARY_LOGICAL_NOT || op == WGT_UNARY_SIGNBIT ||
           op == WGT_UNARY_ISFINITE;
}

/* Reductions over the trailing reduce_ndim dimensions of the input operand; the leading
 * dimensions match the (contiguous) output's shape. VAR takes the correction as param.
 * ARGMAX and ARGMIN reduce one dimension and give i32. */
typedef enum wgt_reduce_op {
    WGT_REDUCE_SUM,
    WGT_REDUCE_MEAN,
    WGT_REDUCE_MAX,
    WGT_REDUCE_MIN,
    WGT_REDUCE_PROD,
    WGT_REDUCE_VAR,
    WGT_REDUCE_ARGMAX,
    WGT_REDUCE_ARGMIN,
    WGT_REDUCE_COUNT
} wgt_reduce_op;

/* Scans along one axis (src/core/scan.c): running sum (cumsum), product, maximum and
 * minimum, and the position (i32) each running maximum or minimum came from. */
typedef enum wgt_scan_op {
    WGT_SCAN_SUM,
    WGT_SCAN_PROD,
    WGT_SCAN_MAX,
    WGT_SCAN_MIN,
    WGT_SCAN_ARGMAX,
    WGT_SCAN_ARGMIN,
    WGT_SCAN_COUNT
} wgt_scan_op;

/* Row ops over the last dimension. */
typedef enum wgt_rows_op {
    WGT_ROWS_SOFTMAX,
    WGT_ROWS_LOG_SOFTMAX,
    WGT_ROWS_LAYER_NORM,
    WGT_ROWS_RMS_NORM,
    WGT_ROWS_LOGSUMEXP, /* one f32 per row: log(sum(exp(x - max))) + max */
    WGT_ROWS_COUNT
} wgt_rows_op;

/* A fused elementwise kernel: a chain of unary, binary, cast and where steps computed per
 * output element in registers. Values are numbered: 0..ninputs-1 are the inputs (loaded at
 * the element, each broadcast to the common shape with any strides), ninputs..ninputs +
 * nconsts - 1 are constants (one element each, passed by value, no binding), and
 * ninputs + nconsts + k is step k's result. Steps come in order and only use earlier values. Each output is contiguous, has the
 * common shape and receives one step's result. A step gives exactly what the op alone gives
 * for the same operands: a result of a 16-bit type is rounded to it before later steps use
 * it, and no float expression is contracted across steps (so f32 is bit-for-bit with the
 * unfused ops). An input may be an output's own storage (an update in place) when it is
 * read whole at the common shape, of the output's 4-byte type: each element is read before
 * it is written, by the one invocation that writes it. */
#define WGT_FUSED_MAX_INPUTS 8
#define WGT_FUSED_MAX_OUTPUTS 4
#define WGT_FUSED_MAX_STEPS 64
#define WGT_FUSED_MAX_CONSTS 32
typedef enum wgt_fused_kind {
    WGT_FUSED_UNARY,  /* op is a wgt_unary_op; params as for the unary entry */
    WGT_FUSED_BINARY, /* op is a wgt_binary_op */
    WGT_FUSED_CAST,   /* args[0] converted to dtype */
    WGT_FUSED_WHERE   /* args[0] ? args[1] : args[2] */
} wgt_fused_kind;
typedef struct wgt_fused_step {
    wgt_fused_kind kind;
    int op;
    int args[3];
    wgt_dtype dtype; /* the result's type; each argument has its value's type */
    double params[2];
} wgt_fused_step;
typedef struct wgt_fused_kernel {
    int ninputs, nsteps, noutputs, nconsts;
    wgt_operand inputs[WGT_FUSED_MAX_INPUTS];
    wgt_dtype const_dtypes[WGT_FUSED_MAX_CONSTS];
    uint32_t const_bits[WGT_FUSED_MAX_CONSTS]; /* the element's bits (f16 in the low 16) */
    wgt_fused_step steps[WGT_FUSED_MAX_STEPS];
    wgt_operand outputs[WGT_FUSED_MAX_OUTPUTS];
    int output_steps[WGT_FUSED_MAX_OUTPUTS];
} wgt_fused_kernel;

/* What the random entry computes from the first two words w0, w1 of element i's Philox
 * block. u = (w0 >> 8) 2^-24 (exactly, in [0, 1)); u1 = ((w0 >> 8) + 1) 2^-24 (in (0, 1]),
 * u2 = (w1 >> 8) 2^-24.
 * UNIFORM: min(a + b u, c) in f32 (the product rounded before the add: never fused).
 * NORMAL:  a + b z in f32 for z = sqrt(-2 ln u1) cos(2 pi u2) (Box-Muller), the ln, cos and
 *          sqrt written out in f32 additions and multiplications (cpu_random.c), so exact too.
 * INTEGER: low + ((w0 count) >> 32) as a 32-bit word (count 2^32: low + w0): each of the
 *          count integers from low comes from floor(2^32 / count) or one more of the 2^32
 *          words (Lemire's multiply-shift without rejection).
 * BITS:    w0. */
typedef enum wgt_random_kind { WGT_RANDOM_UNIFORM, WGT_RANDOM_NORMAL, WGT_RANDOM_INTEGER, WGT_RANDOM_BITS } wgt_random_kind;
typedef struct wgt_random_params {
    wgt_random_kind kind;
    uint64_t seed;
    float a, b, c;
    uint32_t low;   /* INTEGER: the first value's bits */
    uint64_t count; /* INTEGER: 1 .. 2^32 */
} wgt_random_params;

typedef struct wgt_pending_read wgt_pending_read; /* an asynchronous read, defined by each device backend */

/* GPU time of the compute passes run since timing was turned on or last read. */
typedef struct wgt_gpu_time {
    double ms;               /* summed over the timed passes: end of pass minus its beginning */
    uint64_t passes;         /* passes timed */
    uint64_t untimed_passes; /* passes begun with timing on that got no timestamps (set full) */
} wgt_gpu_time;

/* GPU time of one kernel (by its pipeline's label) over the passes of a per-dispatch timing. */
typedef struct wgt_gpu_kernel_time {
    char label[96];
    double ms;
    uint64_t dispatches;
} wgt_gpu_kernel_time;

/* A caller's WGSL kernel compiled by a backend (src/core/user_kernel.c validates and records
 * its dispatches). The layout lists every binding of the shader's @group(0). */
typedef struct wgt_user_pipeline wgt_user_pipeline;
typedef struct wgt_user_layout_entry {
    uint32_t binding;
    int kind; /* 0: var<storage, read>, 1: var<storage, read_write>, 2: var<uniform> */
} wgt_user_layout_entry;

typedef struct wgt_backend wgt_backend;
struct wgt_backend {
    const char *name;
    wgt_backend_kind kind;
    /* 1: storages live in host memory and kernels use operand.host; the buffer functions
     * below are then NULL. 0: kernels use operand.buffer. */
    int host_resident;

    void (*destroy)(wgt_backend *be);
    /* The caller released the context while its tensors keep it: give the device and what
     * holds it (threads, file descriptors, device memory) back now. Afterwards only
     * buffer_destroy, read_release, stats, device_name, describe and destroy are called, and
     * status reports the release. NULL: the backend holds nothing worth giving back early. */
    void (*release_device)(wgt_backend *be);
    /* WGT_OK, or the error that makes the backend unusable (device loss), with a message. */
    wgt_status (*status)(wgt_backend *be);
    const char *(*device_name)(wgt_backend *be);
    char *(*describe)(wgt_backend *be); /* malloc'd text for `wgtensor info` */
    wgt_status (*sync)(wgt_backend *be);
    /* Sends recorded work to the device without waiting for it (NULL: nothing is deferred). */
    wgt_status (*submit)(wgt_backend *be);
    wgt_status (*simulate_loss)(wgt_backend *be);
    /* Opt-in GPU timing, for benchmarks (NULL: the backend has no GPU clock). gpu_timing turns
     * timestamps of every compute pass begun from now on on or off (WGT_ERR_UNAVAILABLE when
     * the device does not offer them); gpu_time reads what the passes submitted so far took
     * (the caller has waited for them) and starts counting again. on = 2 times every dispatch
     * in a pass of its own (slower: a profile, not a benchmark), and gpu_kernel_times then
     * gives the time by kernel since the last read, most first: up to max entries, their
     * count returned (or -1 with the error set). */
    wgt_status (*gpu_timing)(wgt_backend *be, int on);
    wgt_status (*gpu_time)(wgt_backend *be, wgt_gpu_time *out);
    int (*gpu_kernel_times)(wgt_backend *be, wgt_gpu_kernel_time *out, int max);
    /* Largest storage the backend can hold, and the largest element count a kernel takes. */
    uint64_t max_buffer_bytes;
    uint64_t max_kernel_elements;

    /* zero: the contents must read as zeros; otherwise they are unspecified (the caller writes
     * all of it), which lets a pooled buffer be reused without clearing. */
    wgt_status (*buffer_create)(wgt_backend *be, size_t nbytes, int zero, wgt_buffer **out);
    void (*buffer_destroy)(wgt_backend *be, wgt_buffer *buf);
    wgt_status (*buffer_write)(wgt_backend *be, wgt_buffer *buf, size_t offset, const void *src, size_t n);
    wgt_status (*buffer_read)(wgt_backend *be, wgt_buffer *buf, size_t offset, void *dst, size_t n);
    void *(*buffer_export)(wgt_backend *be, wgt_buffer *buf);
    /* Memory the context keeps for its own bookkeeping, for its whole life (the index-check
     * record): made outside the storage pool, so wgt_stats never counts it (in use, pooled or
     * peak), the memory budget leaves it out, and no tensor ever gets it. Host-resident
     * backends return host memory in *host, device backends a buffer in *buffer that kernels,
     * reads and read_begin take as a tensor's; the other is set to NULL. Contents unspecified. */
    wgt_status (*context_memory_create)(wgt_backend *be, size_t nbytes, wgt_buffer **buffer, void **host);
    void (*context_memory_destroy)(wgt_backend *be, wgt_buffer *buffer, void *host);
    /* Device memory and queue counters: fills the device_* and buffers_* fields and submits. */
    void (*stats)(wgt_backend *be, wgt_stats *out);
    /* Gives pooled memory back to the driver and restarts the peak at what is in use. */
    void (*trim)(wgt_backend *be);

    /* Asynchronous reads of n bytes at offset of buf. The copy is recorded with the current
     * batch, so reads begun before the next submit share it; read_poll never blocks and sets
     * *done once read_data may be called; read_wait blocks within the context's timeout;
     * read_release frees the request, finished or not. */
    wgt_status (*read_begin)(wgt_backend *be, wgt_buffer *buf, size_t offset, size_t n, wgt_pending_read **out);
    wgt_status (*read_poll)(wgt_backend *be, wgt_pending_read *r, int *done);
    wgt_status (*read_wait)(wgt_backend *be, wgt_pending_read *r);
    const void *(*read_data)(wgt_backend *be, wgt_pending_read *r);
    void (*read_release)(wgt_backend *be, wgt_pending_read *r);

    /* A fused elementwise kernel (see wgt_fused_kernel), or NULL when the backend runs the ops
     * one by one. max_fused_buffers bounds inputs plus outputs of one kernel. */
    wgt_status (*fused)(wgt_backend *be, const wgt_fused_kernel *k);
    int max_fused_buffers;

    /* dst (contiguous, same shape) = src (any view). dtypes are equal. */
    wgt_status (*copy)(wgt_backend *be, const wgt_operand *dst, const wgt_operand *src);
    /* out (contiguous) = a op b, with a and b already broadcast to out's shape. */
    wgt_status (*binary)(wgt_backend *be, wgt_binary_op op, const wgt_operand *out,
                         const wgt_operand *a, const wgt_operand *b);
    /* out (contiguous, same shape) = op(a); params has two entries. */
    wgt_status (*unary)(wgt_backend *be, wgt_unary_op op, const wgt_operand *out, const wgt_operand *a,
                        const double *params);
    /* out (contiguous, same shape, another dtype) = a converted. */
    wgt_status (*cast)(wgt_backend *be, const wgt_operand *out, const wgt_operand *a);
    /* out = cond ? a : b, all broadcast to out's shape. */
    wgt_status (*where)(wgt_backend *be, const wgt_operand *out, const wgt_operand *cond,
                        const wgt_operand *a, const wgt_operand *b);
    wgt_status (*reduce)(wgt_backend *be, wgt_reduce_op op, const wgt_operand *out, const wgt_operand *in,
                         int reduce_ndim, double param);
    /* out (contiguous, same shape) = running sum of in along axis: scan's WGT_SCAN_SUM. */
    wgt_status (*cumsum)(wgt_backend *be, const wgt_operand *out, const wgt_operand *in, int axis);
    /* out (contiguous, in's shape; i32 for ARGMAX and ARGMIN) = the scan op of in along axis:
     * integer products wrap, NaN sticks from its first position, equal values move the
     * position to the later one. */
    wgt_status (*scan)(wgt_backend *be, wgt_scan_op op, const wgt_operand *out, const wgt_operand *in, int axis);
    /* out [batch..., M, N] (contiguous) = a [batch..., M, K] @ b [batch..., K, N]; the batch
     * dimensions are already broadcast (stride 0 where repeated); any strides. */
    wgt_status (*matmul)(wgt_backend *be, const wgt_operand *out, const wgt_operand *a, const wgt_operand *b);
    /* out (contiguous, in's shape) = op over each row (last dimension) of in; weight and bias
     * are 1-D operands of the row length, or NULL. WGT_ROWS_LOGSUMEXP writes one f32 per row
     * instead: out is f32, contiguous, of in's shape with the last dimension 1. */
    wgt_status (*rows)(wgt_backend *be, wgt_rows_op op, const wgt_operand *out, const wgt_operand *in,
                       const wgt_operand *weight, const wgt_operand *bias, double eps);
    /* Writes src into the box of dst starting at box_start (src's shape); dst is a contiguous
     * tensor seen whole, and elements outside the box keep their values. */
    wgt_status (*write_box)(wgt_backend *be, const wgt_operand *dst, const int64_t *box_start,
                            const wgt_operand *src);
    /* out (contiguous) = in shifted by before in each dimension; outside in, the element
     * whose bits are value_bits (f16 in the low 16 bits, i64 and u64 in all 64), converted by
     * the core. */
    wgt_status (*pad)(wgt_backend *be, const wgt_operand *out, const wgt_operand *in, const int64_t *before,
                      uint64_t value_bits);
    /* out [n, row...] (contiguous) = rows indices[i] of table [N, row...]; indices are 1-D
     * (i32 or u32). A row whose index lies outside [0, N) is written as zeros: nothing is
     * read out of bounds (the core reports such indices through index_check). */
    wgt_status (*gather_rows)(wgt_backend *be, const wgt_operand *out, const wgt_operand *table,
                              const wgt_operand *indices);
    /* Rows indices[i] of dst = rows[i]; dst may be any view that addresses no element twice;
     * when an index repeats the last row wins. When any index lies outside [0, dst rows),
     * nothing at all is written. */
    wgt_status (*set_rows)(wgt_backend *be, const wgt_operand *dst, const wgt_operand *indices,
                           const wgt_operand *rows);
    /* Rows indices[i] of dst += rows[i] for f32 dst [N, row] and rows [n, row], both with
     * contiguous rows (strides row and 1; any offset) and 1-D indices. The rows naming one
     * dst row are summed with it in more than f32 precision and rounded once, so repeated
     * indices give the float64 sum within f32 rounding. When any index lies outside [0, N),
     * nothing at all is written. */
    wgt_status (*scatter_add_rows)(wgt_backend *be, const wgt_operand *dst, const wgt_operand *indices,
                                   const wgt_operand *rows);
    /* Writes into record (four u32 words, record->offset names the first) the first position
     * of indices (1-D, i32, u32, i64 or u64) whose value lies outside [0, bound) and that
     * value's low and high words (high 0 for 32-bit indices; the fourth word is not written),
     * or 0xffffffff first when every index lies inside, as device work in order with the
     * rest: nothing is read back here (the core reads the record at a synchronisation). */
    wgt_status (*index_check)(wgt_backend *be, const wgt_operand *indices, int64_t bound,
                              const wgt_operand *record);
    /* out (u32, 1-D, contiguous) = in (1-D i64 or u64, any stride) where the value lies in
     * [0, bound), else 0xffffffff; bound is below 2^32, so such a value is out of range for
     * every kernel taking out, and a value past 2^32 never wraps into range. */
    wgt_status (*index_narrow)(wgt_backend *be, const wgt_operand *out, const wgt_operand *in, int64_t bound);
    /* Stable sort of each row (the last dimension, length n) of in (f32, f16, i32 or u32, any
     * view): values (in's dtype) and indices (i32), contiguous with in's leading dimensions and
     * k <= n last, receive the first k elements of each sorted row and their positions in it.
     * The order: ascending (descending) by value where NaN is above +inf and -0.0 equals 0.0,
     * ties by position (sort_keys.h's keys). */
    wgt_status (*sort_rows)(wgt_backend *be, const wgt_operand *values, const wgt_operand *indices,
                            const wgt_operand *in, int descending);
    /* out (i32, contiguous, values' shape) = for each of values, the count of elements of the
     * ascending 1-D sorted below it (right: at or below it), in sort_rows's order. */
    wgt_status (*searchsorted)(wgt_backend *be, const wgt_operand *out, const wgt_operand *sorted,
                               const wgt_operand *values, int right);
    /* Scaled dot-product attention in one kernel: out [batch..., Lq, Dv] (contiguous) =
     * softmax(q k^T * scale) v for q [batch..., Lq, D], k [batch..., Lk, D], v [batch..., Lk, Dv]
     * with the batch dimensions already broadcast (stride 0 where repeated), any strides, Lk > 0.
     * causal keeps key j for query i when j <= i + Lk - Lq; a query that keeps no key gives NaN.
     * count (NULL: none): an i32 or u32 operand of one element, read when the kernel runs;
     * only keys j < count are kept (count clamped to [0, Lk]) and later rows of v are not read.
     * NULL: the core composes attention from matmul, where and softmax. attention_fits says
     * whether the kernel takes a dtype and head dimensions (the core composes the rest), and
     * attention_pays (NULL: always) whether it is expected to beat the composition for
     * `batch` problems of lq queries and lk keys of `dtype`; the core asks it unless the
     * context says which path to take. */
    wgt_status (*attention)(wgt_backend *be, const wgt_operand *out, const wgt_operand *q, const wgt_operand *k,
                            const wgt_operand *v, const wgt_operand *count, int causal, double scale);
    int (*attention_fits)(wgt_backend *be, wgt_dtype dtype, int64_t d, int64_t dv);
    /* Rotary position embedding in one kernel, for small x (a decoding step's heads; f32, or
     * f16 with d a multiple of 4): out [B, S, d] (contiguous, x's type) = x [B, S, d] (any
     * strides) with each pair (j, j + d/2) of row (b, s) turned by positions[s] * freqs[j]
     * (positions 1-D i32, or NULL for s itself; freqs [d/2] f32), each product rounded before
     * the sum (in f16, cos, sin and every result rounded to f16), as the composed rope rounds them.
     * NULL: the core composes rope from elementwise ops (core/transformer.c). */
    wgt_status (*rope)(wgt_backend *be, const wgt_operand *out, const wgt_operand *x, const wgt_operand *positions,
                       const wgt_operand *freqs);
    int (*attention_pays)(wgt_backend *be, wgt_dtype dtype, uint64_t batch, int64_t lq, int64_t lk, int causal);

    /* Counter-based random numbers (philox.h): out (f32, i32 or u32, contiguous, offset 0)
     * gets, for element i, a value computed from Philox4x32-10 of counter (i mod 2^32,
     * i / 2^32, 0, 0) and key (seed mod 2^32, seed / 2^32) alone, so every backend gives the
     * same values (see wgt_random_params for each kind's mapping). key: NULL, or a u32 operand
     * of two elements whose words, read on the device, replace the seed's (low word first). */
    wgt_status (*random)(wgt_backend *be, const wgt_operand *out, const wgt_operand *key,
                         const struct wgt_random_params *p);

    /* A general 2-D convolution (src/core/conv.c maps conv1d, conv2d and conv_transpose2d to
     * it): out [N, G, Cout_g, OH, OW] (f32, contiguous) = sum over c < Cin_g, kh < kH, kw < kW
     * of x [N, G, Cin_g, H, W] * w [G, Cout_g, Cin_g, kH, kW] (x and w of one floating type,
     * any strides, negative included), accumulated in f32 at least. params: stride (2),
     * padding before (2, may be negative), dilation of the kernel (2), dilation of the input
     * (2). Along each spatial dimension output o and tap k meet input position
     * v = o stride - pad + k dilation, which holds x [v / in_dilation] where v is a multiple
     * of in_dilation within [0, (H - 1) in_dilation], and zero elsewhere (padding, and the
     * zeros between a dilated input's elements). Cin_g = 0 gives zeros. */
    wgt_status (*conv)(wgt_backend *be, const wgt_operand *out, const wgt_operand *x, const wgt_operand *w,
                       const int64_t *params);

    /* Block (quantized) types, ggml's q8_0 and q4_0 (docs/quant.md). A block-type operand
     * [R, K] has K a multiple of 32, strides[1] 1, and strides[0] and offset multiples of 32
     * (in elements: block b of the storage starts at byte b * block bytes).
     * quantize: out (block type, contiguous [R, K]) = in (f32 or f16 [R, K], any strides),
     * each block rounded as ggml's reference quantizer rounds. */
    wgt_status (*quantize)(wgt_backend *be, const wgt_operand *out, const wgt_operand *in);
    /* out [n, K] (f32, contiguous) = rows of table [R, K] (block type) as floats:
     * row indices[i] (1-D i32 or u32; an index outside [0, R) gives a row of zeros), or row i
     * when indices is NULL (n = R). */
    wgt_status (*dequantize)(wgt_backend *be, const wgt_operand *out, const wgt_operand *table,
                             const wgt_operand *indices);
    /* out [M, N] (f32, contiguous) = x [M, K] (f32, any strides) @ w^T for w [N, K] of a block
     * type, accumulated in f32 (the core casts f16 operands). int8: each block of x is first
     * quantized as q8_0 is (d_x = max|x| / 127, q = x / d_x rounded half away from zero) and
     * a block contributes d_w * d_x * (the integer dot product of the values). addend (NULL:
     * none; f32 [M, N], contiguous rows at any offset, never out's storage) is added to each
     * finished sum, as an add after the product would (the scheduler folds a residual add into
     * the product, src/core/epilogue.c). norm (NULL: none): the product's input is
     * rms_norm(x) over K with norm's weight and eps, as the rows entry computes it (the
     * scheduler folds a norm whose result only such products read, src/core/prologue.c). */
    wgt_status (*matmul_quantized)(wgt_backend *be, const wgt_operand *out, const wgt_operand *x,
                                   const wgt_operand *w, const wgt_operand *addend, const wgt_quant_norm *norm,
                                   int int8);

    /* User kernels (NULL: the backend runs no WGSL). user_kernel_create compiles source's
     * entry point with the given layout (WGT_ERR_BACKEND with the compiler's message, lines
     * included); a source compiled before on the backend shares its pipeline. user_kernel_run
     * records one dispatch of groups[0..2] workgroups: ops[i] (contiguous, any offset the
     * core checked) at binding bindings[i], params (params_size bytes) at the uniform's
     * binding. user_kernel_release may come after release_device. */
    wgt_status (*user_kernel_create)(wgt_backend *be, const char *source, const char *entry, int nlayout,
                                     const wgt_user_layout_entry *layout, wgt_user_pipeline **out);
    wgt_status (*user_kernel_run)(wgt_backend *be, wgt_user_pipeline *k, int n, const uint32_t *bindings,
                                  const wgt_operand *ops, const void *params, uint32_t params_size,
                                  const uint32_t *groups);
    void (*user_kernel_release)(wgt_backend *be, wgt_user_pipeline *k);
    /* Bytes one storage binding may span, workgroups per grid dimension. */
    uint64_t max_binding_bytes;
    uint32_t max_workgroups_per_dim;
    /* A caller's device buffer of at least nbytes as a storage's buffer, without a copy: the
     * backend takes a reference of its own (WGT_ERR_USAGE when it lacks a usage the storage
     * needs, WGT_ERR_SHAPE when it is too small). The device handle callers make such
     * buffers on. NULL: the backend has no device objects to share. */
    wgt_status (*buffer_wrap)(wgt_backend *be, void *handle, size_t nbytes, wgt_buffer **out);
    void *(*device_handle)(wgt_backend *be);
};

/* threads: the pool's size (WGT_CPU_THREADS, which context creation parses), 0 for the
 * processors this process may run on. */
wgt_backend *wgt_cpu_backend_create(int threads);
/* NULL on failure, with the reason in wgt_last_error(). */
wgt_backend *wgt_webgpu_backend_create(const wgt_context_options *options);
char *wgt_webgpu_list_adapters(const char *library_path);

#endif
