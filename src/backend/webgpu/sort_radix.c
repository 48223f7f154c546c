/*
 * LSD radix sort of (key, position) pairs on WebGPU, every row at once: 8-bit digits, from
 * the lowest. Each pass is a histogram per tile of 4096 pairs of one row (sort_radix_hist),
 * one exclusive scan over all the tiles' counts laid out row, digit, tile (sort_radix_scan
 * and sort_radix_add, a block of 1024 per workgroup, recursively over the block totals), and
 * a stable scatter of every tile to its scanned places (sort_radix_scatter). Rows never
 * share a tile and the scan's order puts every row's places after the previous rows', so a
 * batch needs no row bits in the key and no segmented pass. Each pass is stable, so the last
 * one leaves the pairs sorted by key with equal keys in their first order: with positions
 * given in order, the result of a stable sort.
 * For 16M pairs with 32-bit keys: 4 passes, each 1 histogram + 2 scan levels (1M counts,
 * then their 1024 block totals) + 1 add + 1 scatter = 5 dispatches moving about 128 MB
 * (histogram reads: the keys' sectors of the pair buffer) + 256 MB (scatter reads and
 * writes of 8-byte pairs) + 24 MB (counts): 22 dispatches and about 2.1 GB with sort_init
 * and sort_out, against 138 dispatches and 136 bitonic sweeps of 256 MB (35 GB) for the
 * same row. The scatter's stores are the cost that remains: a tile's pairs go to 256 places,
 * so each store fills part of a sector: most of the 2.5 ms the whole sort takes on an H200.
 * Only core WGSL: workgroup atomics and countOneBits, no subgroups.
 */
#include <string.h>

#include "sort_radix.h"

#define TILE 4096u       /* pairs per histogram and scatter workgroup (sort_radix_tile.wgsl) */
#define SCAN_BLOCK 1024u /* counts per scan workgroup (sort_radix_scan.wgsl) */
#define SCAN_LEVELS 8    /* 1024^8 counts: more than a u32 can count */

typedef struct {
    uint32_t rows, n, tiles, shift;
    uint32_t stride, pos_at, pad[2]; /* pair i: key at i * stride, position at pos_at + i * stride */
} radix_params;

typedef struct {
    uint32_t count, pad[3];
} scan_params;

static char *build(wgt_webgpu *w, const void *arg) {
    (void)w;
    const char *text = wgt_wgsl_source(arg), *tile = wgt_wgsl_source("sort_radix_tile");
    const char *pairs[] = {"TILE", tile, NULL};
    return text && tile ? wgt_wgsl_expand(text, pairs) : NULL;
}

static wgt_status pipeline(wgt_webgpu *w, const char *kernel, int storage, int written, wgt_pipeline **out) {
    return wgt_wgpu_pipeline_writing(w, kernel, storage, written, build, kernel, out);
}

static uint64_t blocks(uint64_t count, uint64_t per) { return (count + per - 1) / per; }

/* Exclusive prefix sum of count u32 in data, in place; sums[level] hold the block totals of
 * each level (allocated here when NULL, kept for the next pass's scan of the same count and
 * released by the caller). */
static wgt_status scan(wgt_webgpu *w, wgt_buffer *data, uint32_t count, int level, wgt_buffer **sums) {
    wgt_pipeline *blk, *add;
    wgt_status st;
    if (level >= SCAN_LEVELS) return wgt_error(WGT_ERR_INTERNAL, "sort: a scan of %u counts is too deep", count);
    if ((st = pipeline(w, "sort_radix_scan", 2, 2, &blk)) != WGT_OK || (st = pipeline(w, "sort_radix_add", 2, 1, &add)) != WGT_OK)
        return st;
    uint32_t nblocks = (uint32_t)blocks(count, SCAN_BLOCK);
    if (!sums[level] && (st = wgt_wgpu_buffer_create(&w->base, (size_t)nblocks * 4, 0, &sums[level])) != WGT_OK)
        return st;
    scan_params sp = {count, {0, 0, 0}};
    wgt_buffer *sb[2] = {data, sums[level]};
    if ((st = wgt_wgpu_dispatch(w, blk, sb, &sp, sizeof sp, nblocks)) != WGT_OK) return st;
    if (nblocks == 1) return WGT_OK; /* one block: its scan is the whole */
    if ((st = scan(w, sums[level], nblocks, level + 1, sums)) != WGT_OK) return st;
    wgt_buffer *ab[2] = {sums[level], data};
    return wgt_wgpu_dispatch(w, add, ab, &sp, sizeof sp, blocks(count, 256));
}

wgt_status wgt_wgpu_radix_sort(wgt_webgpu *w, wgt_buffer *keys, wgt_buffer *pos, uint32_t rows, uint32_t n,
                               uint32_t key_bits, wgt_buffer **sorted) {
    *sorted = NULL;
    wgt_pipeline *hist, *scatter;
    wgt_status st;
    if ((st = pipeline(w, "sort_radix_hist", 2, 1, &hist)) != WGT_OK ||
        (st = pipeline(w, "sort_radix_scatter", 4, 1, &scatter)) != WGT_OK)
        return st;
    uint32_t tiles = (uint32_t)blocks(n, TILE), total = rows * n;
    uint64_t groups = (uint64_t)rows * tiles, ncounts = groups * 256;
    if (ncounts > UINT32_MAX)
        return wgt_error(WGT_ERR_LIMIT, "sort: %u rows of %u elements need %llu digit counts, more than 2^32", rows, n,
                         (unsigned long long)ncounts);
    /* Two buffers of (key, position) pairs side by side, written in turn. */
    wgt_buffer *counts = NULL, *pairs[2] = {NULL, NULL}, *sums[SCAN_LEVELS] = {0};
    if ((st = wgt_wgpu_buffer_create(&w->base, (size_t)ncounts * 4, 0, &counts)) != WGT_OK ||
        (st = wgt_wgpu_buffer_create(&w->base, (size_t)total * 8, 0, &pairs[0])) != WGT_OK ||
        (st = wgt_wgpu_buffer_create(&w->base, (size_t)total * 8, 0, &pairs[1])) != WGT_OK)
        goto done;
    wgt_buffer *from_k = keys, *from_p = pos, *to = pairs[0];
    uint32_t stride = 1, pos_at = 0;
    for (uint32_t shift = 0; shift < key_bits; shift += 8) {
        radix_params rp = {rows, n, tiles, shift, stride, pos_at, {0, 0}};
        wgt_buffer *hb[2] = {from_k, counts};
        if ((st = wgt_wgpu_dispatch(w, hist, hb, &rp, sizeof rp, groups)) != WGT_OK) goto done;
        if ((st = scan(w, counts, (uint32_t)ncounts, 0, sums)) != WGT_OK) goto done;
        wgt_buffer *xb[4] = {from_k, from_p, counts, to};
        if ((st = wgt_wgpu_dispatch(w, scatter, xb, &rp, sizeof rp, groups)) != WGT_OK) goto done;
        from_k = from_p = to;
        stride = 2, pos_at = 1;
        to = to == pairs[0] ? pairs[1] : pairs[0];
    }
    *sorted = from_k;
    if (from_k == pairs[0]) pairs[0] = NULL;
    else pairs[1] = NULL;
done:
    /* Releases: the recorded commands keep the buffers alive. */
    for (int l = 0; l < SCAN_LEVELS; l++)
        if (sums[l]) wgt_wgpu_buffer_destroy(&w->base, sums[l]);
    if (counts) wgt_wgpu_buffer_destroy(&w->base, counts);
    for (int b = 0; b < 2; b++)
        if (pairs[b]) wgt_wgpu_buffer_destroy(&w->base, pairs[b]);
    return st;
}
