/*
 * Attention with the keys split into chunks over many workgroups ("flash decoding"), for the
 * shapes where the one-pass kernel (attention.c) has too few workgroups to fill the GPU:
 * decoding, where each key head's few query rows (a group of query heads, one token) walk a
 * cache of up to the context's length. attention_split.wgsl gives each (batch element, block
 * of R rows, chunk of keys) a workgroup that leaves the chunk's row maxima, sums and
 * unnormalised outputs in an f32 scratch buffer; attention_combine.wgsl merges the chunks of
 * each row into the output. Two dispatches (still one launch of the op) where the one-pass
 * kernel takes one, but the keys of a layer spread over the whole GPU instead of one
 * workgroup per key head.
 *
 * Timed on an H200 (BENCHMARKS.md, fifth H200 run): one query over 8192 keys in 32 heads took
 * 0.110 to 0.111 ms with 4, 16 or 64 chunks forced and without (near half the copy's
 * bandwidth either way); in bench-quant's decode step (16 heads, a 1024-key cache, positions
 * under 40) 8 chunks forced took 0.38 + 0.25 ms of GPU time per step, dispatches timed apart,
 * against 0.56 for the one-pass kernel. The rule below is reasoned from the one-pass kernel's
 * H200 figures (attention.c) and not tuned further.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/env.h"
#include "webgpu_internal.h"

/* Query rows a workgroup holds (up to), and the largest D it stages (R * D floats of q and
 * R * 64 scores: 10 KiB of workgroup memory, within WebGPU's default 16 KiB). */
#define SPLIT_ROWS 8
#define SPLIT_MAX_D 256
#define SPLIT_MAX_DV 256

/* Mirrors struct Params in attention_split.wgsl: 12 scalars, then the views. */
typedef struct {
    uint32_t lq, lk, batch, row_blocks;
    uint32_t chunks, chunk_keys, causal;
    float scale_log2;
    uint32_t neg_inf_bits, groups, count_offset, pad;
    wgt_wgpu_attention_views views;
} split_params;

_Static_assert(sizeof(split_params) == 224, "split_params must match the WGSL Params layout");

/* Mirrors struct Params in attention_combine.wgsl. */
typedef struct {
    uint32_t items, chunks, neg_inf_bits, nan_bits;
} combine_params;

typedef struct {
    wgt_dtype dtype;
    int d, dv, rows;
    int q_vec, k_vec; /* read in 16-byte units along the head dimension */
    wgt_dtype count;  /* the key count's type (i32, u32), or WGT_F32 for no count */
} split_kernel;

static char *build_split(wgt_webgpu *w, const void *arg) {
    (void)w;
    const split_kernel *k = arg;
    const char *text = wgt_wgsl_source("attention_split");
    if (!text) return NULL;
    wgt_wgsl_text loads = {0};
    wgt_wgpu_attention_load_fn(&loads, "q", k->dtype, k->q_vec);
    wgt_wgpu_attention_load_fn(&loads, "k", k->dtype, k->k_vec);
    wgt_wgpu_attention_load_fn(&loads, "v", k->dtype, 0);
    if (loads.failed || !loads.s) {
        free(loads.s);
        return NULL;
    }
    int counted = k->count != WGT_F32;
    const char *count_decl = wgt_wgpu_attention_count_wgsl(k->count);
    const char *count_load = counted ? "        n = key_count();" : "";
    char r[16], d[16], dv[16];
    snprintf(r, sizeof r, "%d", k->rows);
    snprintf(d, sizeof d, "%d", k->d);
    snprintf(dv, sizeof dv, "%d", k->dv);
    const char *f16 = k->dtype == WGT_F16 ? "u32" : "f32", *f16v = k->dtype == WGT_F16 ? "vec2<u32>" : "vec4<f32>";
    const char *pairs[] = {"Q_STORAGE", k->q_vec ? f16v : f16, "K_STORAGE", k->k_vec ? f16v : f16, "V_STORAGE", f16,
                           "COUNT_DECL", count_decl, "COUNT_LOAD", count_load, "OUT_BINDING", counted ? "4" : "3",
                           "PARAMS_BINDING", counted ? "5" : "4", "VIEWS", wgt_wgpu_attention_views_wgsl, "BASES", wgt_wgpu_attention_bases_wgsl, "R", r, "D", d, "DV", dv, "LOADS", loads.s, NULL};
    char *result = wgt_wgsl_expand(text, pairs);
    free(loads.s);
    return result;
}

static char *build_combine(wgt_webgpu *w, const void *arg) {
    (void)w;
    const split_kernel *k = arg;
    const char *text = wgt_wgsl_source("attention_combine");
    if (!text) return NULL;
    char dv[16];
    snprintf(dv, sizeof dv, "%d", k->dv);
    int f16 = k->dtype == WGT_F16;
    /* f16 DV is even (attention_fits), so a pair never crosses rows. */
    const char *store = f16 ? "out[item] = f16_half(r.x) | (f16_half(r.y) << 16u);" : "out[item] = r.x;";
    const char *pairs[] = {"OUT_STORAGE", f16 ? "u32" : "f32", "DV", dv, "W", f16 ? "2" : "1", "STORE", store, NULL};
    return wgt_wgsl_expand(text, pairs);
}

/* Chunks for a problem: 0 where the one-pass kernel should run instead.
 *
 * The one-pass kernel runs batch * ceil(Lq / 64) workgroups, each walking all Lk keys: with
 * fewer of them than the GPU has compute units, most units idle and the time grows with Lk
 * alone (attention.c: one query over 8192 keys in 32 workgroups took 1.58 ms on an H200,
 * where the composition's products, spread over the GPU, took 0.11). Decoding is that case:
 * a key head's group of query rows (1 to 8) over the cache, 4 to 16 workgroups. So the keys
 * are split where
 * - the rows are few (Lq <= SPLIT_PAYS_MAX_LQ: a split workgroup holds R = 8 of them, and
 *   each block of 8 rows reads the chunk's keys again),
 * - the one-pass kernel's workgroups are fewer than the compute units, and
 * - there are keys for at least two chunks of SPLIT_MIN_KEYS (a tile of 64: a smaller chunk
 *   runs a partly empty tile and writes as many partial sums per key as it reads keys for);
 * into as many chunks as give SPLIT_PER_UNIT workgroups per compute unit (several resident
 * per unit hide the loads' latency), at most one per SPLIT_MIN_KEYS keys. The second dispatch
 * and the partial sums (batch * Lq * chunks * (DV + 2) floats, written once and read once)
 * are small against a pass over the keys of the cache.
 * Where the compute units are unknown (WebGPU does not report them; adapters.c knows a few)
 * SPLIT_ASSUMED_UNITS stands in: a mid-size GPU's count, so a small one gets a few more
 * chunks than it needs rather than a large one too few.
 * WGT_ATTENTION_CHUNKS=N (tests, tuning) takes the split path with N chunks (at most one per
 * key) wherever the kernel fits, whatever the shape. */
#define SPLIT_PAYS_MAX_LQ 32
#define SPLIT_MIN_KEYS 64
#define SPLIT_PER_UNIT 2
#define SPLIT_ASSUMED_UNITS 32

static uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

static uint64_t split_chunks(const wgt_webgpu *w, uint64_t batch, int64_t lq, int64_t lk) {
    if (w->attention_chunks) return w->attention_chunks < (uint64_t)lk ? w->attention_chunks : (uint64_t)lk;
    uint64_t units = w->compute_units ? w->compute_units : SPLIT_ASSUMED_UNITS;
    if (lq > SPLIT_PAYS_MAX_LQ || batch * ceil_div((uint64_t)lq, 64) >= units || (uint64_t)lk < 2 * SPLIT_MIN_KEYS) return 0;
    uint64_t blocks = batch * ceil_div((uint64_t)lq, SPLIT_ROWS);
    uint64_t chunks = ceil_div(units * SPLIT_PER_UNIT, blocks), most = (uint64_t)lk / SPLIT_MIN_KEYS;
    if (chunks > most) chunks = most;
    return chunks < 2 ? 0 : chunks;
}

int wgt_wgpu_attention_split_env(wgt_webgpu *w) {
    uint64_t n = 0;
    if (wgt_env_count("wgt_context_create", "WGT_ATTENTION_CHUNKS", 1, 65536, &n) < 0) return -1;
    w->attention_chunks = n;
    return 0;
}

/* Whether the split path runs the problem (q, k, v seen at the batch shape of out). */
static uint64_t takes(const wgt_webgpu *w, const wgt_operand *out, const wgt_operand *k, uint64_t batch) {
    int nd = out->ndim;
    int64_t lq = out->shape[nd - 2], lk = k->shape[nd - 2], d = k->shape[nd - 1], dv = out->shape[nd - 1];
    if (d > SPLIT_MAX_D || dv > SPLIT_MAX_DV) return 0;
    uint64_t chunks = split_chunks(w, batch, lq, lk);
    /* The partial sums must fit one binding and 32-bit indexing. */
    double part = (double)batch * (double)lq * (double)chunks * (double)(dv + 2) * 4;
    if (!chunks || part > (double)w->base.max_buffer_bytes || part > 4294967295.0) return 0;
    return chunks;
}

int wgt_wgpu_attention_split(wgt_webgpu *w, const wgt_operand *out, const wgt_operand *q, const wgt_operand *k,
                             const wgt_operand *v, const wgt_operand *count, int causal, double scale, wgt_status *st) {
    int nd = out->ndim;
    int64_t lq = q->shape[nd - 2], lk = k->shape[nd - 2], d = q->shape[nd - 1], dv = v->shape[nd - 1];
    uint64_t batch = 1;
    for (int i = 0; i < nd - 2; i++) batch *= (uint64_t)out->shape[i];
    uint64_t chunks = takes(w, out, k, batch);
    if (!chunks) return 0;
    *st = WGT_OK;
    split_params p;
    memset(&p, 0, sizeof p);
    wgt_wgpu_attention_views_of(out, q, k, v, &p.views);
    int rows = 1;
    while (rows < SPLIT_ROWS && rows < lq) rows *= 2;
    uint64_t row_blocks = ceil_div((uint64_t)lq, (uint64_t)rows), chunk_keys = ceil_div((uint64_t)lk, chunks);
    chunks = ceil_div((uint64_t)lk, chunk_keys); /* no chunk left empty */
    uint64_t groups = batch * row_blocks * chunks;
    if (groups > UINT32_MAX) return 0;
    p.lq = (uint32_t)lq;
    p.lk = (uint32_t)lk;
    p.batch = (uint32_t)batch;
    p.row_blocks = (uint32_t)row_blocks;
    p.chunks = (uint32_t)chunks;
    p.chunk_keys = (uint32_t)chunk_keys;
    p.causal = causal != 0;
    p.scale_log2 = wgt_wgpu_attention_scale_log2(scale);
    p.neg_inf_bits = 0xff800000u;
    p.groups = (uint32_t)groups;
    p.count_offset = count ? (uint32_t)count->offset : 0;

    split_kernel kern;
    memset(&kern, 0, sizeof kern);
    kern.dtype = q->dtype;
    kern.d = (int)d;
    kern.dv = (int)dv;
    kern.rows = rows;
    kern.q_vec = wgt_wgpu_attention_unit_reads(q);
    kern.k_vec = wgt_wgpu_attention_unit_reads(k);
    kern.count = count ? count->dtype : WGT_F32;
    char key[96];
    snprintf(key, sizeof key, "attention_split:%s:d%d:dv%d:r%d:v%d%d:c%s", wgt_dtype_name(kern.dtype), kern.d, kern.dv,
             rows, kern.q_vec, kern.k_vec, count ? wgt_dtype_name(count->dtype) : "-");
    wgt_pipeline *pl, *pc;
    wgt_buffer *part = NULL;
    size_t part_bytes = (size_t)(batch * (uint64_t)lq * chunks * (uint64_t)(dv + 2) * 4);
    if ((*st = wgt_wgpu_pipeline(w, key, count ? 5 : 4, build_split, &kern, &pl)) != WGT_OK) return 1;
    snprintf(key, sizeof key, "attention_combine:%s:dv%d", wgt_dtype_name(kern.dtype), kern.dv);
    if ((*st = wgt_wgpu_pipeline(w, key, 2, build_combine, &kern, &pc)) != WGT_OK) return 1;
    if ((*st = wgt_wgpu_buffer_create(&w->base, part_bytes, 0, &part)) != WGT_OK) return 1;
    wgt_buffer *first[5] = {q->buffer, k->buffer, v->buffer, count ? count->buffer : part, part};
    *st = wgt_wgpu_dispatch(w, pl, first, &p, sizeof p, groups);
    if (*st == WGT_OK) {
        combine_params cp;
        int pair = q->dtype == WGT_F16 ? 2 : 1;
        uint64_t items = batch * (uint64_t)lq * ceil_div((uint64_t)dv, (uint64_t)pair);
        cp.items = (uint32_t)items;
        cp.chunks = (uint32_t)chunks;
        cp.neg_inf_bits = 0xff800000u;
        cp.nan_bits = 0x7fc00000u;
        wgt_buffer *second[2] = {part, out->buffer};
        *st = wgt_wgpu_dispatch(w, pc, second, &cp, sizeof cp, ceil_div(items, 64));
    }
    /* Released here: the recorded commands keep the buffer alive. */
    wgt_wgpu_buffer_destroy(&w->base, part);
    return 1;
}
