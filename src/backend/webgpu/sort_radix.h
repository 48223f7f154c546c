/*
 * The LSD radix sort behind the WebGPU sort of long rows (sort_radix.c); sort.c chooses it
 * by the row length and keeps its bitonic network for shorter rows.
 */
#ifndef WGT_WEBGPU_SORT_RADIX_H
#define WGT_WEBGPU_SORT_RADIX_H

#include "webgpu_internal.h"

/* Rows at least this long sort by radix. Per element, a radix pass moves about 24 bytes (the
 * histogram reads the key, the scatter reads and writes the 8-byte pair) and a 32-bit key
 * takes four passes: about 96 bytes in 20 dispatches. A bitonic sweep moves 16 bytes, and a
 * row padded to 2^L (L > 9) takes 1 + sum_{m=1}^{L-9} (m + 1) sweeps: 6 (96 bytes, 8
 * dispatches) at 2048, 10 (160 bytes, 14 dispatches) at 4096. Up to 2048 the network costs
 * about the same bytes in fewer dispatches; past it the padding to the next power of two
 * alone doubles its work. */
#define WGT_WGPU_RADIX_MIN_ROW 2049u

/* Sorts each of the rows segments of n (key, position) pairs in keys and pos (rows * n of
 * each, row after row) by the low key_bits (8, 16 or 32) of the key, stably: ties keep their
 * order. *sorted (the caller releases it) gets the sorted (key, position) pairs, side by
 * side. */
wgt_status wgt_wgpu_radix_sort(wgt_webgpu *w, wgt_buffer *keys, wgt_buffer *pos, uint32_t rows, uint32_t n,
                               uint32_t key_bits, wgt_buffer **sorted);

#endif
