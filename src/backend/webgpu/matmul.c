/*
 * Matrix multiplication on WebGPU (wgsl/matmul.wgsl): out [batch..., M, N] = a [batch..., M, K]
 * @ b [batch..., K, N] with a and b read in place through their strides. Products with
 * M > 1 and N > 1 run the tiled kernel (64 x 64 outputs per workgroup, 4 x 4 per invocation,
 * K in steps of 16 through workgroup memory); matrix-vector products (M = 1 or N = 1) run
 * the dot kernel, which splits K across a segment of invocations, since a 64 x 64 tile would
 * leave 63 of every 64 invocations idle. The host picks per call how the tiles are staged
 * (by rows or by columns, whichever stride is 1) and how many invocations share one dot.
 * An f16 tiled result with odd N goes through an f32 buffer and the elementwise cast kernel,
 * because its rows do not start on u32 words and invocations must write whole words.
 */
#include <stdio.h>
#include <string.h>

#include "webgpu_internal.h"

#define WORKGROUP_SIZE 256u
#define TILE 64u

/* Mirrors struct Params in matmul.wgsl: 20 scalars, then the 16-byte aligned arrays. */
typedef struct {
    uint32_t M, N, K, batch;
    uint32_t tiles_m, tiles_n, batch_ndim, threads;
    uint32_t a_offset, b_offset, a_k_major, b_n_major;
    int32_t a_sm, a_sk, b_sk, b_sn;
    uint32_t interleave, total, pad0, pad1;
    uint32_t batch_shape[8];
    int32_t a_batch[8];
    int32_t b_batch[8];
} matmul_params;

_Static_assert(sizeof(matmul_params) == 176, "matmul_params must match the WGSL Params layout");

typedef struct {
    int dot; /* the dot kernel, else the tiled one */
    wgt_dtype in, out;
} matmul_kernel;

static const char *load_body(wgt_dtype in, const char *buffer, char *text, size_t size) {
    if (in == WGT_F16) snprintf(text, size, "return unpack2x16float(%s[i >> 1u])[i & 1u];", buffer);
    else snprintf(text, size, "return %s[i];", buffer);
    return text;
}

static char *build_matmul(wgt_webgpu *w, const void *arg) {
    (void)w;
    const matmul_kernel *k = arg;
    const char *text = wgt_wgsl_source("matmul");
    if (!text) return NULL;
    char load_a[96], load_b[96];
    const char *store4, *store_results;
    if (k->out == WGT_F16) {
        /* The host guarantees an even N here, so base + n is even and n + 1 < N with n. */
        store4 = "let word = (base + n) / 2u;\n"
                 "    out[word] = f16_bits(v.x) | (f16_bits(v.y) << 16u);\n"
                 "    if (n + 2u < params.N) { out[word + 1u] = f16_bits(v.z) | (f16_bits(v.w) << 16u); }";
        /* count and first are even: each invocation writes one word of two results. */
        store_results = "if (tid < count / 2u) {\n"
                        "        let o = first + 2u * tid;\n"
                        "        if (o < params.total) {\n"
                        "            var high = 0u;\n"
                        "            if (o + 1u < params.total) { high = f16_bits(results[2u * tid + 1u]); }\n"
                        "            out[o / 2u] = f16_bits(results[2u * tid]) | (high << 16u);\n"
                        "        }\n"
                        "    }";
    } else {
        store4 = "out[base + n] = v.x;\n"
                 "    if (n + 1u < params.N) { out[base + n + 1u] = v.y; }\n"
                 "    if (n + 2u < params.N) { out[base + n + 2u] = v.z; }\n"
                 "    if (n + 3u < params.N) { out[base + n + 3u] = v.w; }";
        store_results = "if (tid < count && first + tid < params.total) { out[first + tid] = results[tid]; }";
    }
    const char *pairs[] = {"IN_STORAGE", k->in == WGT_F16 ? "u32" : "f32",
                           "OUT_STORAGE", k->out == WGT_F16 ? "u32" : "f32",
                           "LOAD_A", load_body(k->in, "a", load_a, sizeof load_a),
                           "LOAD_B", load_body(k->in, "b", load_b, sizeof load_b),
                           "STORE4", store4,
                           "STORE_RESULTS", store_results,
                           /* The other kernel keeps a name of its own and is left out of the pipeline. */
                           "TILED_ENTRY", k->dot ? "tiled" : "main",
                           "DOT_ENTRY", k->dot ? "main" : "dot",
                           NULL};
    return wgt_wgsl_expand(text, pairs);
}

/* Invocations per dot output, a power of two: grow while each would still get 4 or more
 * elements of K, and either the launch is too small to fill a large GPU (2^18 invocations)
 * or each invocation would have more than 64 products in sequence. f16 outputs keep at
 * least two segments per workgroup so that results pair into whole words. When outputs are
 * contiguous in memory (interleave) and there are many, at most 32 per output (16 for f16)
 * keeps 8 (16) segments side by side, so the loads at one k fill whole 32-byte sectors: on
 * an H200 this took a row-vector times a row-major 8192 x 8192 f32 matrix from 640 to 1560
 * GB/s (8 per output left too few invocations in flight; 128 would read 4 bytes a sector). */
static uint32_t dot_threads(uint64_t outputs, uint64_t K, int interleave, int f16_out, int f16_in) {
    uint32_t cap = f16_out ? WORKGROUP_SIZE / 2 : WORKGROUP_SIZE;
    if (interleave && outputs >= 1024) cap = f16_in ? 16 : 32;
    uint32_t t = 1;
    while (t < cap && (uint64_t)t * 4 <= K && (outputs * t < (1u << 18) || K / t > 64)) t *= 2;
    return t;
}

/* Dispatches one kernel on (a, b) into dst (out, or an f32 stand-in for it). */
static wgt_status run(wgt_webgpu *w, const matmul_kernel *k, const matmul_params *p, const wgt_operand *a,
                      const wgt_operand *b, wgt_buffer *dst, uint64_t workgroups) {
    char key[64];
    snprintf(key, sizeof key, "matmul:%s:%s->%s", k->dot ? "dot" : "tiled", wgt_dtype_name(k->in),
             wgt_dtype_name(k->out));
    wgt_pipeline *pl;
    wgt_status st = wgt_wgpu_pipeline(w, key, 3, build_matmul, k, &pl);
    if (st != WGT_OK) return st;
    wgt_buffer *buffers[3] = {a->buffer, b->buffer, dst};
    return wgt_wgpu_dispatch(w, pl, buffers, p, sizeof *p, workgroups);
}

/* A stride as the kernels see it: 0 for a length-1 dimension, whose stride is never used
 * and may not fit in 32 bits. */
static int32_t stride32(int64_t len, int64_t stride) { return len == 1 ? 0 : (int32_t)stride; }

wgt_status wgt_wgpu_matmul(wgt_backend *be, const wgt_operand *out, const wgt_operand *a, const wgt_operand *b) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    int nd = out->ndim;
    if (nd < 2 || nd > WGT_MAX_DIMS) return wgt_error(WGT_ERR_INTERNAL, "matmul output of rank %d", nd);
    /* The kernels index the output from 0 and pair f16 outputs from an even element. */
    if (out->offset != 0) return wgt_error(WGT_ERR_INTERNAL, "matmul output at offset %lld", (long long)out->offset);
    int64_t M = out->shape[nd - 2], N = out->shape[nd - 1], K = a->shape[nd - 1];
    uint64_t batch = 1;
    matmul_params p;
    memset(&p, 0, sizeof p);
    for (int d = 0; d < nd - 2; d++) {
        batch *= (uint64_t)out->shape[d];
        p.batch_shape[d] = (uint32_t)out->shape[d];
        p.a_batch[d] = stride32(out->shape[d], a->strides[d]);
        p.b_batch[d] = stride32(out->shape[d], b->strides[d]);
    }
    uint64_t total = batch * (uint64_t)M * (uint64_t)N;
    if (total == 0) return WGT_OK;
    if (total > INT32_MAX || (uint64_t)K > INT32_MAX)
        return wgt_error(WGT_ERR_LIMIT, "matmul of %llu outputs over K = %lld is beyond 32-bit indexing",
                         (unsigned long long)total, (long long)K);
    p.M = (uint32_t)M;
    p.N = (uint32_t)N;
    p.K = (uint32_t)K;
    p.batch = (uint32_t)batch;
    p.batch_ndim = (uint32_t)(nd - 2);
    p.a_offset = (uint32_t)a->offset;
    p.b_offset = (uint32_t)b->offset;
    p.a_sm = stride32(M, a->strides[nd - 2]);
    p.a_sk = stride32(K, a->strides[nd - 1]);
    p.b_sk = stride32(K, b->strides[nd - 2]);
    p.b_sn = stride32(N, b->strides[nd - 1]);
    p.total = (uint32_t)total;
    matmul_kernel k = {0, a->dtype, out->dtype};

    if (M == 1 || N == 1) {
        /* The matrix operand's stride along the outputs is 1 and along K it is not: the
         * outputs' elements lie side by side, so neighbouring invocations take neighbouring
         * outputs. */
        if (N == 1 && M > 1) p.interleave = p.a_sm == 1 && p.a_sk != 1;
        if (M == 1 && N > 1) p.interleave = p.b_sn == 1 && p.b_sk != 1;
        p.threads = dot_threads(total, (uint64_t)K, (int)p.interleave, out->dtype == WGT_F16, a->dtype == WGT_F16);
        k.dot = 1;
        uint64_t per_group = WORKGROUP_SIZE / p.threads;
        return run(w, &k, &p, a, b, out->buffer, (total + per_group - 1) / per_group);
    }

    /* Stage a along K when that stride is 1 (a stored by rows), else along M; b along N when
     * that stride is 1, else along K. A view with neither unit stride works either way. */
    p.a_k_major = p.a_sm != 1 && p.a_sk == 1;
    p.b_n_major = p.b_sn == 1 || p.b_sk != 1;
    p.tiles_m = (uint32_t)(((uint64_t)M + TILE - 1) / TILE);
    p.tiles_n = (uint32_t)(((uint64_t)N + TILE - 1) / TILE);
    uint64_t workgroups = (uint64_t)p.tiles_m * p.tiles_n * batch;
    if (out->dtype != WGT_F16 || N % 2 == 0) return run(w, &k, &p, a, b, out->buffer, workgroups);

    /* f16 with odd N: compute into f32, then convert in one pass that writes whole words. */
    wgt_buffer *tmp;
    wgt_status st = wgt_wgpu_buffer_create(be, (size_t)total * 4, 0, &tmp);
    if (st != WGT_OK) return st;
    k.out = WGT_F32;
    st = run(w, &k, &p, a, b, tmp, workgroups);
    if (st == WGT_OK) {
        wgt_operand t = *out;
        t.dtype = WGT_F32;
        t.buffer = tmp;
        t.host = NULL;
        st = wgt_wgpu_cast(be, out, &t); /* the cast, not the copy: it sends overflow to infinity */
    }
    wgt_wgpu_buffer_destroy(be, tmp); /* a release: the recorded commands keep it alive */
    return st;
}
