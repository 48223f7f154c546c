/*
 * KV-cache decoding: wgt_kv_cache_append writes new keys or values into a preallocated cache
 * along its sequence axis (the second to last) with set_rows on a view that puts that axis
 * first, so the cache may be any writable layout and nothing is copied around it. Attention
 * over the filled prefix is then an ordinary wgt_attention on a slice view of the cache (the
 * fused kernel takes strided keys and values), docs/quant.md shows the pattern.
 */
#include <stdio.h>
#include <stdlib.h>

#include "core/node.h"

wgt_status wgt_kv_cache_append(wgt_tensor *cache, wgt_tensor *x, int64_t pos) {
    static const char fn[] = "wgt_kv_cache_append";
    wgt_status st;
    if ((st = wgt_check_tensor(fn, "cache", cache)) != WGT_OK || (st = wgt_check_tensor(fn, "x", x)) != WGT_OK ||
        (st = wgt_check_same_context(fn, cache, x)) != WGT_OK)
        return st;
    if (x->dtype != cache->dtype)
        return wgt_error(WGT_ERR_DTYPE, "%s: x is %s but the cache is %s", fn, wgt_dtype_name(x->dtype),
                         wgt_dtype_name(cache->dtype));
    if (!(cache->usage & WGT_USAGE_WRITABLE))
        return wgt_error(WGT_ERR_USAGE, "%s: the cache was created without the writable usage", fn);
    int nd = cache->ndim;
    char sc[256], sx[256];
    wgt_format_shape(sc, sizeof sc, nd, cache->shape);
    wgt_format_shape(sx, sizeof sx, x->ndim, x->shape);
    int fits = nd >= 2 && x->ndim == nd;
    for (int d = 0; fits && d < nd; d++) fits = d == nd - 2 || x->shape[d] == cache->shape[d];
    if (!fits)
        return wgt_error(WGT_ERR_SHAPE, "%s: x %s must match the cache %s ([..., length, d]) except along the sequence "
                         "axis (the second to last)", fn, sx, sc);
    int64_t n = x->shape[nd - 2], len = cache->shape[nd - 2];
    if (pos < 0 || pos > len || n > len - pos)
        return wgt_error(WGT_ERR_SHAPE, "%s: %lld positions at %lld do not fit the cache's %lld (cache %s)", fn,
                         (long long)n, (long long)pos, (long long)len, sc);
    if (n == 0) return WGT_OK;
    int axes[WGT_MAX_DIMS];
    axes[0] = nd - 2;
    for (int d = 0; d < nd - 2; d++) axes[d + 1] = d;
    axes[nd - 1] = nd - 1;
    int32_t *at = malloc(sizeof(int32_t) * (size_t)n);
    if (!at) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory for %lld positions", fn, (long long)n);
    for (int64_t i = 0; i < n; i++) at[i] = (int32_t)(pos + i);
    wgt_tensor *dst = wgt_permute(cache, axes), *rows = wgt_permute(x, axes);
    wgt_tensor *idx = wgt_tensor_from_data(cache->storage->ctx, WGT_I32, 1, &n, at, sizeof(int32_t) * (size_t)n,
                                           WGT_USAGE_DEFAULT);
    free(at);
    st = dst && rows && idx ? wgt_set_rows(dst, idx, rows) : wgt_last_status();
    wgt_release(dst), wgt_release(rows), wgt_release(idx);
    return st;
}
