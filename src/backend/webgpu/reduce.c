/*
 * Reductions and cumsum on WebGPU. One template (wgsl/reduce.wgsl) serves every reduce op:
 * it is filled per (op, input type, pass) with the accumulator and output types, the load
 * and the op's final step, trimmed to the code of that variant, and cached as a pipeline.
 * The host picks how many invocations share one output from the reduced length and the
 * number of outputs, so long rows get a whole workgroup each (combined through subgroup
 * shuffles where the device has them, else a tree), while many short rows get one
 * invocation each and no barriers. When the outputs are too few to fill the device, each
 * row is split into chunks: one pass reduces every chunk to a partial result in a
 * temporary buffer, a second combines each output's partials (var: a pair of such passes
 * for the means, then one for the deviations from them). Column reductions (the reduced
 * dimension strided, neighbouring outputs adjacent in memory) give each invocation one
 * output's chunk, so neighbouring invocations read neighbouring elements. Dense rows are
 * read 16 bytes at a time.
 * cumsum is the scan kernel's running sum (scan.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webgpu_internal.h"

#define WORKGROUP_SIZE 256u

typedef struct {
    uint32_t out_count, red_count, keep_ndim, red_ndim;
    uint32_t offset, threads, rounds, chunks;
    uint32_t chunk_len;
    float count_f;
    float divisor_f;
    uint32_t nan_bits, inf_bits, pad[3];
    uint32_t keep_shape[8];
    int32_t keep_strides[8];
    uint32_t red_shape[8];
    int32_t red_strides[8];
} reduce_params;

/* What one reduce pipeline reads and writes (see reduce.wgsl). */
enum { DST_FINAL, DST_PARTIAL, DST_MEAN };

typedef struct {
    wgt_reduce_op op;
    wgt_dtype in, out;
    int partials; /* reads pass 1's partials instead of elements */
    int dst;      /* DST_FINAL, DST_PARTIAL or DST_MEAN */
    int second;   /* var: the pass over deviations from the means in binding 2 */
    int vec;      /* 16-byte loads of dense rows through binding 1 */
    int sg;       /* subgroup shuffles */
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

/* A named property of a pipeline for the template's //#if lines. */
typedef struct {
    const char *name;
    int on;
} reduce_flag;

/* Keeps the lines of text between "//#if NAME" (or "//#if !NAME") and "//#else" or
 * "//#endif" when the flag is on (off); the marker lines go. Blocks nest. malloc'd, or NULL. */
static char *select_lines(const char *text, const reduce_flag *flags, int nflags) {
    size_t n = strlen(text);
    char *out = malloc(n + 1);
    if (!out) return NULL;
    size_t used = 0;
    int depth = 0, keep[32]; /* keep[d]: the lines of block d are kept */
    for (const char *line = text; *line;) {
        const char *eol = strchr(line, '\n');
        size_t len = eol ? (size_t)(eol - line) + 1 : strlen(line);
        const char *t = line;
        while (*t == ' ') t++;
        int kept = 1;
        for (int d = 0; d < depth; d++) kept &= keep[d];
        if (!strncmp(t, "//#if ", 6)) {
            const char *name = t + 6;
            int negate = *name == '!';
            name += negate;
            size_t nl = strcspn(name, " \r\n");
            int on = -1;
            for (int i = 0; i < nflags; i++)
                if (strlen(flags[i].name) == nl && !strncmp(flags[i].name, name, nl)) on = flags[i].on;
            if (on < 0 || depth == 32) {
                free(out);
                return NULL;
            }
            keep[depth++] = negate ? !on : on;
        } else if (!strncmp(t, "//#else", 7) && depth > 0) {
            keep[depth - 1] = !keep[depth - 1];
        } else if (!strncmp(t, "//#endif", 8) && depth > 0) {
            depth--;
        } else if (kept) {
            memcpy(out + used, line, len);
            used += len;
        }
        line += len;
    }
    out[used] = '\0';
    if (depth != 0) {
        free(out);
        return NULL;
    }
    return out;
}

static char *build_reduce(wgt_webgpu *w, const void *arg) {
    (void)w;
    const reduce_kernel *k = arg;
    const char *source = wgt_wgsl_source("reduce");
    if (!source) return NULL;
    int select = k->op == WGT_REDUCE_MAX || k->op == WGT_REDUCE_MIN || k->op == WGT_REDUCE_ARGMAX ||
                 k->op == WGT_REDUCE_ARGMIN;
    int var = k->op == WGT_REDUCE_VAR;
    const reduce_flag flags[] = {
        {"SELECT", select},
        {"PROD", k->op == WGT_REDUCE_PROD},
        {"ADD", !select && k->op != WGT_REDUCE_PROD},
        {"VAR", var},
        {"PARTIALS", k->partials},
        {"ELEMENTS", !k->partials},
        {"VEC", k->vec},
        {"F16IN", k->in == WGT_F16 && !k->partials},
        {"SG", k->sg},
        {"SECOND", k->second},
        {"TWO_PASS", var && !k->partials && !k->second && k->dst == DST_FINAL},
        {"FINAL", k->dst == DST_FINAL},
        {"PARTIAL", k->dst == DST_PARTIAL},
        {"MEAN", k->dst == DST_MEAN},
        {"F16OUT", k->dst == DST_FINAL && k->out == WGT_F16},
    };
    char *text = select_lines(source, flags, (int)(sizeof flags / sizeof *flags));
    if (!text) return NULL;
    const char *acc = acc_type(k->op, k->in);
    const char *finish;
    switch (k->op) {
    case WGT_REDUCE_MEAN: finish = "return a.v / params.count_f;"; break;
    case WGT_REDUCE_VAR:
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
    /* A vector of packed f16 holds eight values: four from its first two words, four after. */
    const char *f16_part = "if (k == 0u) { return vec4<f32>(unpack2x16float(x.x), unpack2x16float(x.y)); }\n"
                           "    return vec4<f32>(unpack2x16float(x.z), unpack2x16float(x.w));";
    const char *pairs[] = {
        "IN_STORAGE", k->partials ? "u32" : storage_type(k->in),
        "ACC_T", acc,
        "OUT_T", wgt_wgpu_compute_type(k->out),
        "GREATER", k->op == WGT_REDUCE_MAX || k->op == WGT_REDUCE_ARGMAX ? ">" : "<",
        "IS_NAN", strcmp(acc, "f32") ? "return false;" : "return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;",
        "FINISH", finish,
        "LOAD", load_body(k->in),
        "VEC_ELEMS", k->in == WGT_F16 ? "8" : "4",
        "VEC_PART", k->in == WGT_F16 ? f16_part : "return vec4<T>(x);",
        NULL};
    char *wgsl = wgt_wgsl_expand(text, pairs);
    free(text);
    return wgsl;
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

/* Splitting: a pass writes one partial result per (output, chunk) when the outputs alone
 * would give fewer invocations than the target; each invocation still gets at least
 * SPLIT_MIN elements (column reductions: SPLIT_MIN_COLUMN in sequence). Rows reduced by whole
 * workgroups aim for 2^17 invocations (512 workgroups): on an H200 a sum over 64M f32 took
 * 0.077 ms, against 0.082 for 2^18, 0.081 for 2^19 and 0.090 for 2^16 (earlier, 2^20 and
 * 2^22 took 0.089); column reductions, one invocation per output and chunk, aim for 2^18.
 * SPLIT_MIN is low so that a few rows of some thousands of elements spread too: one
 * workgroup walking a row waits on each of its loads in turn (the greedy pick of a decoding
 * step, an argmax over 32000 logits in one workgroup, took about 0.05 ms of GPU time on an
 * H200, BENCHMARKS.md, where the products of the whole token take 1.2 ms). */
#define SPLIT_TARGET_ROWS (1u << 17)
#define SPLIT_TARGET (1u << 18)
#define SPLIT_MIN 8u
#define SPLIT_MIN_COLUMN 64u
/* Rows shorter than this are read element by element (vectors would save little). */
#define VEC_MIN 256u

/* Records one pass of the reduce kernel. */
static wgt_status run_pass(wgt_webgpu *w, const reduce_kernel *k, const reduce_params *p, wgt_buffer *src,
                           wgt_buffer *aux, wgt_buffer *dst) {
    char key[96];
    snprintf(key, sizeof key, "reduce:%s:%s:%s%s%s%s%s%s", op_names[k->op], wgt_dtype_name(k->in),
             k->dst == DST_FINAL ? "final" : k->dst == DST_PARTIAL ? "partial" : "mean", k->partials ? ":combine" : "",
             k->second ? ":second" : "", k->vec ? ":vec" : "", k->sg ? ":sg" : "",
             k->dst == DST_FINAL && k->out == WGT_F16 ? ":f16out" : "");
    wgt_pipeline *pl;
    wgt_status st = wgt_wgpu_pipeline(w, key, 4, build_reduce, k, &pl);
    if (st != WGT_OK) return st;
    uint64_t items = k->dst == DST_PARTIAL ? (uint64_t)p->out_count * p->chunks : p->out_count;
    /* Items per workgroup: threads = 1 takes one per invocation (two f16 outputs). */
    uint64_t per_group = (uint64_t)(WORKGROUP_SIZE / p->threads) * p->rounds;
    if (p->threads == 1 && k->dst == DST_FINAL && k->out == WGT_F16) per_group = 2 * WORKGROUP_SIZE;
    /* Bindings the pipeline does not declare are filled with the source (never read). */
    wgt_buffer *buffers[4] = {src, src, aux ? aux : src, dst};
    return wgt_wgpu_dispatch(w, pl, buffers, p, sizeof *p, (items + per_group - 1) / per_group);
}

wgt_status wgt_wgpu_reduce(wgt_backend *be, wgt_reduce_op op, const wgt_operand *out, const wgt_operand *in,
                           int reduce_ndim, double param) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    if ((unsigned)op >= WGT_REDUCE_COUNT) return wgt_error(WGT_ERR_INTERNAL, "unknown reduce op %d", (int)op);
    if (wgt_dtype_size(in->dtype) == 8) return wgt_wgpu_reduce64(be, op, out, in, reduce_ndim);
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
    p.count_f = (float)count;
    double divisor = (double)count - param;
    p.divisor_f = divisor > 0 ? (float)divisor : 0.0f;
    p.nan_bits = 0x7fc00000u;
    p.inf_bits = 0x7f800000u;

    /* Layout: dense rows (one reduced dimension of stride 1) and column reductions (the
     * innermost kept dimension has stride +-1, the reduced one does not: neighbouring
     * invocations then read neighbouring elements when each takes its own output). */
    int dense = count > 0 && reduce_ndim == 1 && p.red_strides[0] == 1;
    int column = count > 0 && keep > 0 && reduce_ndim > 0 && abs(p.keep_strides[keep - 1]) == 1 &&
                 abs(p.red_strides[reduce_ndim - 1]) != 1;
    uint32_t threads = column ? 1 : threads_for(outputs, count);
    uint64_t chunks = 1;
    if (threads == WORKGROUP_SIZE && outputs * WORKGROUP_SIZE < SPLIT_TARGET_ROWS) {
        chunks = (SPLIT_TARGET_ROWS / WORKGROUP_SIZE + outputs - 1) / outputs;
        uint64_t most = count / ((uint64_t)WORKGROUP_SIZE * SPLIT_MIN);
        if (chunks > most) chunks = most;
    } else if (threads == 1 && column && outputs < SPLIT_TARGET) {
        chunks = (SPLIT_TARGET + outputs - 1) / outputs;
        if (chunks > count / SPLIT_MIN_COLUMN) chunks = count / SPLIT_MIN_COLUMN;
    }
    /* Elements per 16-byte vector; chunks start at multiples of it. */
    uint32_t vec_elems = in->dtype == WGT_F16 ? 8 : 4;
    uint64_t chunk_len = count;
    if (chunks > 1) {
        chunk_len = (count + chunks - 1) / chunks;
        chunk_len = (chunk_len + vec_elems - 1) / vec_elems * vec_elems;
        chunks = (count + chunk_len - 1) / chunk_len;
    }
    if (chunks < 1) chunks = 1;
    int vec = dense && count >= VEC_MIN && in->offset % vec_elems == 0;
    for (int d = 0; vec && d < keep; d++) vec = p.keep_strides[d] % (int32_t)vec_elems == 0;
    p.threads = threads;
    p.chunks = (uint32_t)chunks;
    p.chunk_len = (uint32_t)chunk_len;
    p.rounds = out->dtype == WGT_F16 && threads == WORKGROUP_SIZE && chunks == 1 ? 2 : 1;

    reduce_kernel k = {op, in->dtype, out->dtype, 0, DST_FINAL, 0, vec, w->has_subgroups};
    if (chunks == 1) return run_pass(w, &k, &p, in->buffer, NULL, out->buffer);

    /* Split: pass 1 writes a partial result per (output, chunk), pass 2 combines each output's
     * chunks. var sums first, finishes the means, then sums the deviations from them. */
    uint64_t partial_bytes = outputs * chunks * 3 * 4;
    reduce_params c = p; /* the combining pass: the chunks of each output are its elements */
    c.red_count = (uint32_t)chunks;
    c.threads = threads_for(outputs, chunks);
    c.chunks = 1;
    c.chunk_len = (uint32_t)chunks;
    c.rounds = out->dtype == WGT_F16 && c.threads == WORKGROUP_SIZE ? 2 : 1;
    c.keep_ndim = 0;
    c.red_ndim = 1;
    reduce_kernel kc = {op, in->dtype, out->dtype, 1, DST_FINAL, 0, 0, w->has_subgroups};
    wgt_buffer *parts = NULL, *means = NULL, *parts2 = NULL;
    wgt_status st = wgt_wgpu_buffer_create(be, (size_t)partial_bytes, 0, &parts);
    if (st == WGT_OK) {
        k.dst = DST_PARTIAL;
        st = run_pass(w, &k, &p, in->buffer, NULL, parts);
    }
    if (st == WGT_OK && op == WGT_REDUCE_VAR) {
        reduce_params cm = c;
        cm.rounds = 1;
        kc.dst = DST_MEAN;
        if ((st = wgt_wgpu_buffer_create(be, (size_t)outputs * 4, 0, &means)) == WGT_OK)
            st = run_pass(w, &kc, &cm, parts, NULL, means);
        if (st == WGT_OK) st = wgt_wgpu_buffer_create(be, (size_t)partial_bytes, 0, &parts2);
        if (st == WGT_OK) {
            k.second = 1;
            st = run_pass(w, &k, &p, in->buffer, means, parts2);
        }
        kc.dst = DST_FINAL;
    }
    if (st == WGT_OK) st = run_pass(w, &kc, &c, parts2 ? parts2 : parts, NULL, out->buffer);
    /* Releases: the recorded commands keep the buffers alive. */
    if (parts) wgt_wgpu_buffer_destroy(be, parts);
    if (parts2) wgt_wgpu_buffer_destroy(be, parts2);
    if (means) wgt_wgpu_buffer_destroy(be, means);
    return st;
}

wgt_status wgt_wgpu_cumsum(wgt_backend *be, const wgt_operand *out, const wgt_operand *in, int axis) {
    if (wgt_dtype_size(in->dtype) == 8) return wgt_wgpu_cumsum64(be, out, in, axis);
    return wgt_wgpu_scan(be, WGT_SCAN_SUM, out, in, axis);
}
