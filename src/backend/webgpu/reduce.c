/*
 * Reductions and cumsum on WebGPU. One template (wgsl/reduce.wgsl) serves every reduce op:
 * it is filled per (op, input type) with the accumulator and output types, the load and the
 * op's final step, and cached as a pipeline. The host picks how many invocations share one
 * output from the reduced length and the number of outputs, so a few long rows get a whole
 * workgroup each and a tree reduction, while many short rows get one invocation each and
 * no barriers. cumsum (wgsl/cumsum.wgsl) scans one row per invocation; f16 results go
 * through an f32 buffer and the elementwise copy kernel, which writes packed f16 words whole.
 */
#include <stdio.h>
#include <string.h>

#include "webgpu_internal.h"

#define WORKGROUP_SIZE 256u

/* The template's op codes are wgt_reduce_op's values. */
_Static_assert(WGT_REDUCE_SUM == 0 && WGT_REDUCE_MEAN == 1 && WGT_REDUCE_MAX == 2 && WGT_REDUCE_MIN == 3 &&
                   WGT_REDUCE_PROD == 4 && WGT_REDUCE_VAR == 5 && WGT_REDUCE_ARGMAX == 6 && WGT_REDUCE_ARGMIN == 7,
               "reduce.wgsl hard-codes the wgt_reduce_op values");

typedef struct {
    uint32_t out_count, red_count, keep_ndim, red_ndim;
    uint32_t offset, threads, rounds;
    float count_f;
    float divisor_f;
    uint32_t nan_bits, inf_bits, pad;
    uint32_t keep_shape[8];
    int32_t keep_strides[8];
    uint32_t red_shape[8];
    int32_t red_strides[8];
} reduce_params;

typedef struct {
    uint32_t rows, len, ndim, offset;
    int32_t in_axis_stride;
    uint32_t out_axis_stride, pad0, pad1;
    uint32_t shape[8];
    int32_t in_strides[8];
    uint32_t out_strides[8];
} cumsum_params;

typedef struct {
    wgt_reduce_op op;
    wgt_dtype in, out;
} reduce_kernel;

static const char *const op_names[WGT_REDUCE_COUNT] = {"sum", "mean", "max", "min", "prod", "var", "argmax", "argmin"};

static const char *storage_type(wgt_dtype d) { return d == WGT_F16 ? "u32" : wgt_wgpu_compute_type(d); }

/* mean and var accumulate integers as f32; the other ops keep the input's compute type. */
static const char *acc_type(wgt_reduce_op op, wgt_dtype in) {
    if (op == WGT_REDUCE_MEAN || op == WGT_REDUCE_VAR) return "f32";
    return wgt_wgpu_compute_type(in);
}

static const char *load_body(wgt_dtype in) {
    if (in == WGT_F16) return "return unpack2x16float(inp[i >> 1u])[i & 1u];";
    return "return T(inp[i]);";
}

static char *build_reduce(wgt_webgpu *w, const void *arg) {
    (void)w;
    const reduce_kernel *k = arg;
    const char *text = wgt_wgsl_source("reduce");
    if (!text) return NULL;
    const char *acc = acc_type(k->op, k->in);
    const char *finish, *mean_of = "return a.v;";
    switch (k->op) {
    case WGT_REDUCE_MEAN: finish = "return a.v / params.count_f;"; break;
    case WGT_REDUCE_VAR:
        mean_of = "return a.v / params.count_f;";
        /* w (the deviations' sum) is 0 in exact arithmetic: subtracting its share removes
         * the rounding of the mean. A divisor of 0 gives NaN or infinity, as in NumPy. */
        /* NaN is tested by bits before the clamp: a compiler may turn the select into
         * max(c, 0), which drops NaN (NVIDIA's does). */
        finish = "let c = a.v - a.w * a.w / params.count_f;\n"
                 "    if (is_nan(c)) { return c; }\n"
                 "    let ssq = select(c, 0.0, c < 0.0);\n"
                 "    if (params.divisor_f > 0.0) { return ssq / params.divisor_f; }\n"
                 "    if (ssq == 0.0) { return bitcast<f32>(params.nan_bits); }\n"
                 "    return bitcast<f32>(params.inf_bits);";
        break;
    case WGT_REDUCE_ARGMAX:
    case WGT_REDUCE_ARGMIN: finish = "return i32(a.i);"; break;
    default: finish = "return a.v;"; break;
    }
    const char *write;
    if (k->out == WGT_F16)
        write = "if (tid < per_group / 2u) {\n"
                "        let o = first + 2u * tid;\n"
                "        if (o < params.out_count) {\n"
                "            var high = 0u;\n"
                "            if (o + 1u < params.out_count) { high = f16_bits(results[2u * tid + 1u]); }\n"
                "            out[o / 2u] = f16_bits(results[2u * tid]) | (high << 16u);\n"
                "        }\n"
                "    }";
    else
        write = "if (tid < per_group && first + tid < params.out_count) { out[first + tid] = results[tid]; }";
    const char *write_alone;
    if (k->out == WGT_F16)
        write_alone = "let o = 2u * word;\n"
                      "        if (o < params.out_count) {\n"
                      "            var high = 0u;\n"
                      "            if (o + 1u < params.out_count) { high = f16_bits(reduce_alone(o + 1u)); }\n"
                      "            out[word] = f16_bits(reduce_alone(o)) | (high << 16u);\n"
                      "        }";
    else
        write_alone = "if (word < params.out_count) { out[word] = reduce_alone(word); }";
    char op_code[8];
    snprintf(op_code, sizeof op_code, "%du", (int)k->op);
    const char *pairs[] = {"IN_STORAGE", storage_type(k->in),
                           "OUT_STORAGE", storage_type(k->out),
                           "OP", op_code,
                           "ACC_T", acc,
                           "OUT_T", wgt_wgpu_compute_type(k->out),
                           "LOAD", load_body(k->in),
                           "IS_NAN", strcmp(acc, "f32") ? "return false;"
                                                        : "return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;",
                           "MEAN_OF", mean_of,
                           "FINISH", finish,
                           "WRITE", write,
                           "WRITE_ALONE", write_alone,
                           NULL};
    return wgt_wgsl_expand(text, pairs);
}

/* Invocations per output, a power of two. More invocations per output mean more
 * parallelism but more workgroups and barriers per element, so: grow while each invocation
 * would still get 4 or more elements, and either the launch is too small to fill a large GPU
 * (2^18 invocations) or each invocation would have more than 64 elements in sequence. A
 * single long row gets a whole workgroup; many short rows get one invocation each. */
static uint32_t threads_for(uint64_t outputs, uint64_t count) {
    uint32_t t = 1;
    while (t < WORKGROUP_SIZE && (uint64_t)t * 4 <= count && (outputs * t < (1u << 18) || count / t > 64)) t *= 2;
    return t;
}

wgt_status wgt_wgpu_reduce(wgt_backend *be, wgt_reduce_op op, const wgt_operand *out, const wgt_operand *in,
                           int reduce_ndim, double param) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    if ((unsigned)op >= WGT_REDUCE_COUNT) return wgt_error(WGT_ERR_INTERNAL, "unknown reduce op %d", (int)op);
    int keep = in->ndim - reduce_ndim;
    if (keep < 0 || keep > WGT_MAX_DIMS || reduce_ndim < 0)
        return wgt_error(WGT_ERR_INTERNAL, "reduce over %d of %d dimensions", reduce_ndim, in->ndim);
    /* The kernels index the output from 0 and pair f16 outputs from an even element. */
    if (out->offset != 0) return wgt_error(WGT_ERR_INTERNAL, "reduce output at offset %lld", (long long)out->offset);
    reduce_params p;
    memset(&p, 0, sizeof p);
    uint64_t outputs = 1, count = 1;
    for (int d = 0; d < keep; d++) {
        outputs *= (uint64_t)in->shape[d];
        p.keep_shape[d] = (uint32_t)in->shape[d];
        p.keep_strides[d] = (int32_t)in->strides[d];
    }
    for (int d = 0; d < reduce_ndim; d++) {
        count *= (uint64_t)in->shape[keep + d];
        p.red_shape[d] = (uint32_t)in->shape[keep + d];
        p.red_strides[d] = (int32_t)in->strides[keep + d];
    }
    if (outputs == 0) return WGT_OK;
    if (outputs > UINT32_MAX || count > UINT32_MAX)
        return wgt_error(WGT_ERR_LIMIT, "reduce of %llu outputs over %llu elements is beyond 32-bit indexing",
                         (unsigned long long)outputs, (unsigned long long)count);
    p.out_count = (uint32_t)outputs;
    p.red_count = (uint32_t)count;
    p.keep_ndim = (uint32_t)keep;
    p.red_ndim = (uint32_t)reduce_ndim;
    p.offset = (uint32_t)in->offset;
    p.threads = threads_for(outputs, count);
    p.rounds = out->dtype == WGT_F16 && p.threads == WORKGROUP_SIZE ? 2 : 1;
    p.count_f = (float)count;
    double divisor = (double)count - param;
    p.divisor_f = divisor > 0 ? (float)divisor : 0.0f;
    p.nan_bits = 0x7fc00000u;
    p.inf_bits = 0x7f800000u;

    reduce_kernel k = {op, in->dtype, out->dtype};
    char key[64];
    snprintf(key, sizeof key, "reduce:%s:%s", op_names[op], wgt_dtype_name(in->dtype));
    wgt_pipeline *pl;
    wgt_status st = wgt_wgpu_pipeline(w, key, 2, build_reduce, &k, &pl);
    if (st != WGT_OK) return st;
    /* Outputs per workgroup: a word's worth per invocation when each reduces rows alone. */
    uint64_t per_group = p.threads == 1 ? WORKGROUP_SIZE * (out->dtype == WGT_F16 ? 2u : 1u)
                                        : (uint64_t)(WORKGROUP_SIZE / p.threads) * p.rounds;
    wgt_buffer *buffers[2] = {in->buffer, out->buffer};
    return wgt_wgpu_dispatch(w, pl, buffers, &p, sizeof p, (outputs + per_group - 1) / per_group);
}

static char *build_cumsum(wgt_webgpu *w, const void *arg) {
    (void)w;
    wgt_dtype in = *(const wgt_dtype *)arg;
    const char *text = wgt_wgsl_source("cumsum");
    if (!text) return NULL;
    const char *acc = wgt_wgpu_compute_type(in);
    const char *pairs[] = {"IN_STORAGE", storage_type(in), "OUT_STORAGE", acc, "ACC_T", acc, "LOAD", load_body(in), NULL};
    return wgt_wgsl_expand(text, pairs);
}

wgt_status wgt_wgpu_cumsum(wgt_backend *be, const wgt_operand *out, const wgt_operand *in, int axis) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    if (axis < 0 || axis >= in->ndim) return wgt_error(WGT_ERR_INTERNAL, "cumsum along axis %d of %d", axis, in->ndim);
    if (out->offset != 0) return wgt_error(WGT_ERR_INTERNAL, "cumsum output at offset %lld", (long long)out->offset);
    cumsum_params p;
    memset(&p, 0, sizeof p);
    uint64_t rows = 1;
    int n = 0;
    for (int d = 0; d < in->ndim; d++) {
        if (d == axis) continue;
        rows *= (uint64_t)in->shape[d];
        p.shape[n] = (uint32_t)in->shape[d];
        p.in_strides[n] = (int32_t)in->strides[d];
        p.out_strides[n] = (uint32_t)out->strides[d];
        n++;
    }
    if (rows == 0 || in->shape[axis] == 0) return WGT_OK;
    p.rows = (uint32_t)rows;
    p.len = (uint32_t)in->shape[axis];
    p.ndim = (uint32_t)n;
    p.offset = (uint32_t)in->offset;
    p.in_axis_stride = (int32_t)in->strides[axis];
    p.out_axis_stride = (uint32_t)out->strides[axis];

    char key[64];
    snprintf(key, sizeof key, "cumsum:%s", wgt_dtype_name(in->dtype));
    wgt_pipeline *pl;
    wgt_status st = wgt_wgpu_pipeline(w, key, 2, build_cumsum, &in->dtype, &pl);
    if (st != WGT_OK) return st;
    uint64_t groups = (rows + WORKGROUP_SIZE - 1) / WORKGROUP_SIZE;
    if (out->dtype != WGT_F16) {
        wgt_buffer *buffers[2] = {in->buffer, out->buffer};
        return wgt_wgpu_dispatch(w, pl, buffers, &p, sizeof p, groups);
    }
    /* f16: scan into an f32 buffer laid out like out, then convert it in one pass. */
    int64_t numel = 1;
    for (int d = 0; d < out->ndim; d++) numel *= out->shape[d];
    wgt_buffer *tmp;
    if ((st = wgt_wgpu_buffer_create(be, (size_t)numel * 4, 0, &tmp)) != WGT_OK) return st;
    wgt_buffer *buffers[2] = {in->buffer, tmp};
    st = wgt_wgpu_dispatch(w, pl, buffers, &p, sizeof p, groups);
    if (st == WGT_OK) {
        wgt_operand t = *out;
        t.dtype = WGT_F32;
        t.offset = 0;
        t.buffer = tmp;
        t.host = NULL;
        st = wgt_wgpu_cast(be, out, &t); /* f32 to f16 with overflow to infinity, not a bit copy */
    }
    wgt_wgpu_buffer_destroy(be, tmp); /* a release: the recorded commands keep it alive */
    return st;
}
