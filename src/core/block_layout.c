/*
 * The device layout of the quantized block types. The host copy, files and the caller's
 * buffers hold ggml's layout (34- or 18-byte blocks: an f16 scale, then the values). A device
 * buffer holds the same bytes split in two: every block's values first (32 or 16 bytes a
 * block, so a block's values start on a 16-byte boundary), then every block's scale (2 bytes
 * a block). Kernels then read a block's values with aligned 16-byte loads, and neighbouring
 * invocations reading neighbouring blocks read one run of memory (docs/quant.md). The
 * storage's size is the same in both layouts; data changes layout where it moves between
 * host and device (storage.c, data.c, gguf_read.c).
 */
#include <stdlib.h>
#include <string.h>

#include "node.h"

size_t wgt_block_values_bytes(wgt_dtype dtype) { return wgt_dtype_block_bytes(dtype) - 2; }

void wgt_blocks_split(wgt_dtype dtype, const unsigned char *ggml, unsigned char *device, size_t blocks) {
    size_t bb = wgt_dtype_block_bytes(dtype), qb = wgt_block_values_bytes(dtype);
    unsigned char *scales = device + blocks * qb;
    for (size_t b = 0; b < blocks; b++) {
        memcpy(scales + 2 * b, ggml + b * bb, 2);
        memcpy(device + b * qb, ggml + b * bb + 2, qb);
    }
}

void wgt_blocks_join(wgt_dtype dtype, const unsigned char *device, unsigned char *ggml, size_t blocks) {
    size_t bb = wgt_dtype_block_bytes(dtype), qb = wgt_block_values_bytes(dtype);
    const unsigned char *scales = device + blocks * qb;
    for (size_t b = 0; b < blocks; b++) {
        memcpy(ggml + b * bb, scales + 2 * b, 2);
        memcpy(ggml + b * bb + 2, device + b * qb, qb);
    }
}

/* The whole of s's ggml bytes (its nbytes) written to its buffer in the device layout, the
 * tail padding zero. */
wgt_status wgt_blocks_upload(wgt_storage *s, const void *ggml) {
    wgt_backend *be = s->ctx->backend;
    unsigned char *device = calloc(1, s->alloc_bytes);
    if (!device) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "out of host memory for %zu bytes", s->alloc_bytes);
    wgt_blocks_split(s->block_dtype, ggml, device, s->nbytes / wgt_dtype_block_bytes(s->block_dtype));
    wgt_status st = be->buffer_write(be, s->buffer, 0, device, s->alloc_bytes);
    free(device);
    return st;
}

/* The whole of s's buffer read back into ggml (alloc_bytes). */
wgt_status wgt_blocks_download(wgt_storage *s, void *ggml) {
    wgt_backend *be = s->ctx->backend;
    unsigned char *device = malloc(s->alloc_bytes);
    if (!device) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "out of host memory for %zu bytes", s->alloc_bytes);
    wgt_status st = be->buffer_read(be, s->buffer, 0, device, s->alloc_bytes);
    if (st == WGT_OK) {
        memset(ggml, 0, s->alloc_bytes);
        wgt_blocks_join(s->block_dtype, device, ggml, s->nbytes / wgt_dtype_block_bytes(s->block_dtype));
    }
    free(device);
    return st;
}
