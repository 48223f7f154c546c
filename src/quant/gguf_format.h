/* What the GGUF reader and writer share: the magic, the default alignment, the sizes of
 * metadata values and the mapping between ggml's tensor types and wgtensor's. */
#ifndef WGT_GGUF_FORMAT_H
#define WGT_GGUF_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "wgtensor.h"

#define WGT_GGUF_MAGIC 0x46554747u /* "GGUF" read as a little-endian u32 */
#define WGT_GGUF_DEFAULT_ALIGNMENT 32u
#define WGT_GGUF_MAX_DIMS 8 /* ggml writes at most 4 */

/* ggml's type numbers for the types wgtensor holds. */
enum { GGML_F32 = 0, GGML_F16 = 1, GGML_Q4_0 = 2, GGML_Q8_0 = 8, GGML_I32 = 26 };

/* Bytes of one value of a scalar type (a bool is one byte); 0 for string, array, unknown. */
static inline size_t wgt_gguf_scalar_size(uint32_t t) {
    switch (t) {
    case WGT_GGUF_UINT8: case WGT_GGUF_INT8: case WGT_GGUF_BOOL: return 1;
    case WGT_GGUF_UINT16: case WGT_GGUF_INT16: return 2;
    case WGT_GGUF_UINT32: case WGT_GGUF_INT32: case WGT_GGUF_FLOAT32: return 4;
    case WGT_GGUF_UINT64: case WGT_GGUF_INT64: case WGT_GGUF_FLOAT64: return 8;
    }
    return 0;
}

/* Bytes in host memory of one element of a kv's data. */
static inline size_t wgt_gguf_elem_size(uint32_t t) {
    return t == WGT_GGUF_STRING ? sizeof(wgt_gguf_string) : wgt_gguf_scalar_size(t);
}

static inline wgt_dtype wgt_gguf_dtype(uint32_t ggml_type) {
    switch (ggml_type) {
    case GGML_F32: return WGT_F32;
    case GGML_F16: return WGT_F16;
    case GGML_Q4_0: return WGT_Q4_0;
    case GGML_Q8_0: return WGT_Q8_0;
    case GGML_I32: return WGT_I32;
    }
    return (wgt_dtype)0;
}

/* The ggml type of dtype, or -1 where the library writes none (u32, the narrow types). */
static inline int wgt_gguf_ggml_type(wgt_dtype dtype) {
    switch (dtype) {
    case WGT_F32: return GGML_F32;
    case WGT_F16: return GGML_F16;
    case WGT_Q4_0: return GGML_Q4_0;
    case WGT_Q8_0: return GGML_Q8_0;
    case WGT_I32: return GGML_I32;
    default: return -1;
    }
}

/* Frees what a kv read or copied by the library holds (its key, values and strings). */
static inline void wgt_gguf_free_kv(wgt_gguf_kv *kv) {
    free((char *)kv->key);
    if (kv->elem_type == WGT_GGUF_STRING && kv->data) {
        const wgt_gguf_string *s = kv->data;
        for (uint64_t i = 0; i < kv->count; i++) free((char *)s[i].data);
    }
    free((void *)kv->data);
}

#endif
