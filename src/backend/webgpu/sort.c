/*
 * Sorting and searching on WebGPU. A row sort turns each row (any view) into a segment of
 * (key, position) pairs in scratch buffers, all rows at once (sort_init; keys of
 * src/backend/sort_keys.h, complemented for a descending sort), orders the segments, and
 * sort_out reads back the first k pairs of each: the positions, and the input's elements at
 * them bit for bit. Rows of WGT_WGPU_RADIX_MIN_ROW (sort_radix.h) and more go to the LSD
 * radix sort of sort_radix.c, unpadded. Shorter rows take a bitonic sort over segments of
 * 2^log_p pairs, padded with pairs that sort last: sort_local sorts every 512-pair tile in
 * workgroup memory; then for each longer block size sort_step makes the compare-exchange
 * steps whose partners lie in different tiles, one dispatch per step, and sort_local the rest
 * of the merge. Comparing (key, position) makes the order total, so the unstable network
 * gives the stable result. A row of n costs about log2(n)^2 / 2 steps, of which only those
 * with partners 512 or more apart go through global memory.
 * A top-k with k <= 512 sorts no more than it keeps: blocks of b = 2^ceil(log2 k) pairs are
 * sorted in alternating directions, then each round (sort_halve) keeps the b smallest of each
 * pair of blocks and merges them (sort_local), halving the segment until one block is left:
 * for [64, 32000] with k = 50 about 30M compare-exchanges (21M of them in the first local sort)
 * instead of a full bitonic sort's 120M, in 19 dispatches over shrinking data instead of 28 over 2M pairs.
 * searchsorted is one binary search per value in the same key order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sort_radix.h"

#define WORKGROUP_SIZE 256u
#define TILE 512u /* pairs sorted in one workgroup's memory (sort_local.wgsl) */

typedef struct {
    uint32_t rows, n, seg, k; /* seg: the length of each row's segment of pairs */
    uint32_t ndim, offset;
    int32_t row_stride;
    uint32_t last; /* sort_init: descending; sort_out: the number of outputs */
    uint32_t shape[8];
    int32_t strides[8];
    uint32_t pos_at, pos_stride, pad[2]; /* sort_out: position i is at pos_at + i * pos_stride */
} rows_params;

typedef struct {
    uint32_t pairs, log_j, log_p, log_k;
} step_params;

typedef struct {
    uint32_t count, log_b, pad[2];
} halve_params;

typedef struct {
    uint32_t total, log_p, k_first, k_last, j_first, pad[3];
} local_params;

typedef struct {
    uint32_t count, n, ndim, offset, sorted_offset;
    int32_t sorted_stride;
    uint32_t right, pad;
    uint32_t shape[8];
    int32_t strides[8];
} search_params;

/* What a sort kernel is built for: its template, the input's dtype (where it reads one) and
 * the name of the array its raw loads read. */
typedef struct {
    const char *kernel;
    wgt_dtype dtype;
} sort_kernel;

/* The key of a raw element of dtype (its bits in the low 8, 16 or 32 of b), in WGSL. */
static const char *key_expr(wgt_dtype dtype) {
    switch (dtype) {
    case WGT_F32: return "key_f32(b)";
    case WGT_F16: return "key_half(b, 0x7c00u)";
    case WGT_BF16: return "key_half(b, 0x7f80u)";
    case WGT_I32: return "b ^ 0x80000000u";
    case WGT_I16: return "b ^ 0x8000u";
    case WGT_I8: return "b ^ 0x80u";
    default: return "b"; /* u32, u16, u8, bool */
    }
}

/* The key functions for dtype, and raw loads (one element's bits, a narrow one in the low 8
 * or 16, from the packed words) from each named storage array: the text pasted at {{KEYS}}.
 * malloc'd, or NULL. */
static char *keys_text(wgt_dtype dtype, const char *const *arrays, int narrays) {
    const char *common = wgt_wgsl_source("sort_keys");
    if (!common) return NULL;
    size_t cap = strlen(common) + 512 * (size_t)(narrays + 1);
    char *s = malloc(cap);
    if (!s) return NULL;
    int used = snprintf(s, cap, "%s\nfn key_of(b: u32) -> u32 { return %s; }\n", common, key_expr(dtype));
    size_t size = wgt_dtype_size(dtype);
    for (int i = 0; i < narrays; i++)
        used += snprintf(s + used, cap - (size_t)used,
                         size == 1   ? "fn raw_%s(i: u32) -> u32 { return (%s[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu; }\n"
                         : size == 2 ? "fn raw_%s(i: u32) -> u32 { return (%s[i >> 1u] >> ((i & 1u) * 16u)) & 0xffffu; }\n"
                                     : "fn raw_%s(i: u32) -> u32 { return %s[i]; }\n",
                         arrays[i], arrays[i]);
    return s;
}

/* Elements of dtype per 32-bit word: sort_out writes whole words. */
static uint32_t per_word(wgt_dtype dtype) { return 4 / (uint32_t)wgt_dtype_size(dtype); }

static char *build(wgt_webgpu *w, const void *arg) {
    (void)w;
    const sort_kernel *k = arg;
    const char *text = wgt_wgsl_source(k->kernel);
    if (!text) return NULL;
    static const char *const inp[] = {"inp"}, *const both[] = {"srt", "inp"};
    /* The bitonic steps read no input: they take only the pair comparison. */
    int search = !strcmp(k->kernel, "searchsorted");
    int steps = !strncmp(k->kernel, "sort_", 5) && strcmp(k->kernel, "sort_init") && strcmp(k->kernel, "sort_out");
    char *keys = keys_text(k->dtype, search ? both : inp, search ? 2 : steps ? 0 : 1);
    if (!keys) return NULL;
    char elems[4];
    snprintf(elems, sizeof elems, "%u", per_word(k->dtype));
    const char *pairs[] = {"KEYS", keys, "ELEMS", elems, NULL};
    char *out = wgt_wgsl_expand(text, pairs);
    free(keys);
    return out;
}

/* The pipeline of kernel for dtype (dtype is ignored by the kernels that read no input). */
static wgt_status pipeline(wgt_webgpu *w, const char *kernel, wgt_dtype dtype, int storage, int written,
                           wgt_pipeline **out) {
    char key[64];
    snprintf(key, sizeof key, "%s:%s", kernel, wgt_dtype_name(dtype));
    sort_kernel k = {kernel, dtype};
    return wgt_wgpu_pipeline_writing(w, key, storage, written, build, &k, out);
}

/* The leading dimensions of in (all but the last) into the params' shape and strides. */
static uint64_t leading_dims(const wgt_operand *in, uint32_t *shape, int32_t *strides) {
    uint64_t rows = 1;
    for (int d = 0; d + 1 < in->ndim; d++) {
        rows *= (uint64_t)in->shape[d];
        shape[d] = (uint32_t)in->shape[d];
        strides[d] = (int32_t)in->strides[d];
    }
    return rows;
}

static uint64_t groups_for(uint64_t invocations) { return (invocations + WORKGROUP_SIZE - 1) / WORKGROUP_SIZE; }

/* The bitonic passes over the segments of 2^log_p pairs in keys and pos (total pairs). */
static wgt_status bitonic(wgt_webgpu *w, wgt_buffer *keys, wgt_buffer *pos, uint32_t total, uint32_t log_p) {
    wgt_pipeline *step, *local;
    wgt_status st;
    if ((st = pipeline(w, "sort_step", WGT_U32, 2, 2, &step)) != WGT_OK ||
        (st = pipeline(w, "sort_local", WGT_U32, 2, 2, &local)) != WGT_OK)
        return st;
    wgt_buffer *bufs[2] = {keys, pos};
    uint64_t tiles = (total + TILE - 1) / TILE;
    uint32_t p = 1u << log_p, first = p < TILE ? p : TILE;
    local_params lp = {total, log_p, 2, first, 1, {0, 0, 0}};
    if (p > 1 && (st = wgt_wgpu_dispatch(w, local, bufs, &lp, sizeof lp, tiles)) != WGT_OK) return st;
    for (uint32_t log_k = 10; log_k <= log_p; log_k++) { /* block sizes past a tile */
        for (uint32_t log_j = log_k - 1; log_j >= 9; log_j--) {
            step_params sp = {total / 2, log_j, log_p, log_k};
            if ((st = wgt_wgpu_dispatch(w, step, bufs, &sp, sizeof sp, groups_for(total / 2))) != WGT_OK) return st;
        }
        local_params mp = {total, log_p, 1u << log_k, 1u << log_k, TILE / 2, {0, 0, 0}};
        if ((st = wgt_wgpu_dispatch(w, local, bufs, &mp, sizeof mp, tiles)) != WGT_OK) return st;
    }
    return WGT_OK;
}

/* The top 2^log_b of each segment of 2^log_p pairs in *keys and *pos (total pairs), into the
 * first block of a segment of 2^log_b: *keys and *pos may become the scratch pair k2, p2. */
static wgt_status top_blocks(wgt_webgpu *w, wgt_buffer **keys, wgt_buffer **pos, wgt_buffer *k2, wgt_buffer *p2,
                             uint32_t total, uint32_t log_p, uint32_t log_b) {
    wgt_pipeline *local, *halve;
    wgt_status st;
    if ((st = pipeline(w, "sort_local", WGT_U32, 2, 2, &local)) != WGT_OK ||
        (st = pipeline(w, "sort_halve", WGT_U32, 4, 2, &halve)) != WGT_OK)
        return st;
    uint32_t b = 1u << log_b;
    wgt_buffer *bufs[2] = {*keys, *pos};
    local_params lp = {total, log_p, 2, b, 1, {0, 0, 0}};
    if (b > 1 && (st = wgt_wgpu_dispatch(w, local, bufs, &lp, sizeof lp, (total + TILE - 1) / TILE)) != WGT_OK) return st;
    wgt_buffer *from_k = *keys, *from_p = *pos, *to_k = k2, *to_p = p2;
    for (; log_p > log_b; log_p--) {
        total /= 2;
        halve_params hp = {total, log_b, {0, 0}};
        wgt_buffer *hb[4] = {from_k, from_p, to_k, to_p};
        if ((st = wgt_wgpu_dispatch(w, halve, hb, &hp, sizeof hp, groups_for(total))) != WGT_OK) return st;
        /* The kept blocks are bitonic: merge each, in alternating directions again. */
        local_params mp = {total, log_p - 1, b, b, b / 2, {0, 0, 0}};
        wgt_buffer *mb[2] = {to_k, to_p};
        if (b > 1 && (st = wgt_wgpu_dispatch(w, local, mb, &mp, sizeof mp, (total + TILE - 1) / TILE)) != WGT_OK)
            return st;
        wgt_buffer *t = from_k;
        from_k = to_k, to_k = t;
        t = from_p, from_p = to_p, to_p = t;
    }
    *keys = from_k;
    *pos = from_p;
    return WGT_OK;
}

wgt_status wgt_wgpu_sort_rows(wgt_backend *be, const wgt_operand *values, const wgt_operand *indices,
                              const wgt_operand *in, int descending) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    if (values->offset != 0 || indices->offset != 0)
        return wgt_error(WGT_ERR_INTERNAL, "sort outputs at offsets %lld and %lld", (long long)values->offset,
                         (long long)indices->offset);
    rows_params rp;
    memset(&rp, 0, sizeof rp);
    uint64_t rows = leading_dims(in, rp.shape, rp.strides);
    int last = in->ndim - 1;
    int64_t n = in->shape[last], k = values->shape[last];
    if (rows == 0 || k == 0) return WGT_OK;
    uint32_t log_p = 0;
    while (((int64_t)1 << log_p) < n) log_p++;
    if (log_p >= 32 || (rows << log_p) > UINT32_MAX)
        return wgt_error(WGT_ERR_LIMIT, "sort: %llu rows of %lld elements pad to more than 2^32 pairs",
                         (unsigned long long)rows, (long long)n);
    uint32_t total = (uint32_t)(rows << log_p);
    /* A top-k of at most a tile: rounds of halving (top_blocks) instead of a full sort. */
    uint32_t log_b = 0;
    while (((int64_t)1 << log_b) < k) log_b++;
    int halving = k < n && log_b <= 9 && log_b < log_p;
    /* Long rows (and top-k past a tile of them): a radix sort of unpadded rows, whose buffer
     * of 8-byte pairs must fit one binding (the bitonic sort binds keys and positions apart:
     * a device at WebGPU's default 128 MiB still sorts 32M elements that way). */
    int radix = !halving && n >= WGT_WGPU_RADIX_MIN_ROW && rows * (uint64_t)n * 8 <= be->max_binding_bytes;
    if (radix) total = (uint32_t)(rows * (uint64_t)n);
    rp.rows = (uint32_t)rows;
    rp.n = (uint32_t)n;
    rp.seg = radix ? (uint32_t)n : 1u << log_p;
    rp.k = (uint32_t)k;
    rp.ndim = (uint32_t)(in->ndim - 1);
    rp.offset = (uint32_t)in->offset;
    rp.row_stride = (int32_t)in->strides[last];
    rp.last = descending != 0;
    rp.pos_stride = 1;

    wgt_pipeline *init, *out;
    wgt_buffer *keys = NULL, *pos = NULL, *keys2 = NULL, *pos2 = NULL, *sorted = NULL, *pos_out;
    wgt_status st;
    if ((st = pipeline(w, "sort_init", in->dtype, 3, 2, &init)) != WGT_OK ||
        (st = pipeline(w, "sort_out", in->dtype, 4, 2, &out)) != WGT_OK)
        return st;
    if ((st = wgt_wgpu_buffer_create(be, (size_t)total * 4, 0, &keys)) != WGT_OK) return st;
    if ((st = wgt_wgpu_buffer_create(be, (size_t)total * 4, 0, &pos)) != WGT_OK) goto done;
    wgt_buffer *ib[3] = {in->buffer, keys, pos};
    if ((st = wgt_wgpu_dispatch(w, init, ib, &rp, sizeof rp, groups_for(total))) != WGT_OK) goto done;
    pos_out = pos;
    if (radix) {
        /* Narrow keys (complemented or not) differ only in their low 8 or 16 bits: one pass
         * per byte of the element. */
        uint32_t bits = 8 * (uint32_t)wgt_dtype_size(in->dtype);
        if ((st = wgt_wgpu_radix_sort(w, keys, pos, rp.rows, rp.n, bits, &sorted)) != WGT_OK) goto done;
        pos_out = sorted; /* (key, position) pairs */
        rp.pos_at = 1;
        rp.pos_stride = 2;
    } else if (halving) {
        if ((st = wgt_wgpu_buffer_create(be, (size_t)total * 2, 0, &keys2)) != WGT_OK ||
            (st = wgt_wgpu_buffer_create(be, (size_t)total * 2, 0, &pos2)) != WGT_OK)
            goto done;
        wgt_buffer *k1 = keys, *p1 = pos;
        if ((st = top_blocks(w, &k1, &p1, keys2, pos2, total, log_p, log_b)) != WGT_OK) goto done;
        rp.seg = 1u << log_b; /* each row's first k now lead a segment of 2^log_b */
        pos_out = p1;
    } else if ((st = bitonic(w, keys, pos, total, log_p)) != WGT_OK) {
        goto done;
    }
    uint64_t count = rows * (uint64_t)k, per = per_word(in->dtype);
    rp.last = (uint32_t)count;
    wgt_buffer *ob[4] = {in->buffer, pos_out, values->buffer, indices->buffer};
    st = wgt_wgpu_dispatch(w, out, ob, &rp, sizeof rp, groups_for((count + per - 1) / per));
done:
    /* Releases: the recorded commands keep the buffers alive. */
    if (keys) wgt_wgpu_buffer_destroy(be, keys);
    if (pos) wgt_wgpu_buffer_destroy(be, pos);
    if (keys2) wgt_wgpu_buffer_destroy(be, keys2);
    if (pos2) wgt_wgpu_buffer_destroy(be, pos2);
    if (sorted) wgt_wgpu_buffer_destroy(be, sorted);
    return st;
}

wgt_status wgt_wgpu_searchsorted(wgt_backend *be, const wgt_operand *out, const wgt_operand *sorted,
                                 const wgt_operand *values, int right) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    if (out->offset != 0) return wgt_error(WGT_ERR_INTERNAL, "searchsorted output at offset %lld", (long long)out->offset);
    search_params p;
    memset(&p, 0, sizeof p);
    uint64_t count = 1;
    for (int d = 0; d < values->ndim; d++) {
        count *= (uint64_t)values->shape[d];
        p.shape[d] = (uint32_t)values->shape[d];
        p.strides[d] = (int32_t)values->strides[d];
    }
    if (count == 0) return WGT_OK;
    p.count = (uint32_t)count;
    p.n = (uint32_t)sorted->shape[0];
    p.ndim = (uint32_t)values->ndim;
    p.offset = (uint32_t)values->offset;
    p.sorted_offset = (uint32_t)sorted->offset;
    p.sorted_stride = (int32_t)sorted->strides[0];
    p.right = right != 0;
    wgt_pipeline *pl;
    wgt_status st = pipeline(w, "searchsorted", values->dtype, 3, 1, &pl);
    if (st != WGT_OK) return st;
    wgt_buffer *bufs[3] = {sorted->buffer, values->buffer, out->buffer};
    return wgt_wgpu_dispatch(w, pl, bufs, &p, sizeof p, groups_for(count));
}
