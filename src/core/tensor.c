/*
 * Tensor handles: lifetime, validation, properties, and moving data between the caller's
 * memory and a tensor's storage with the usage checks of WebNN's MLTensor.
 */
#include <stdlib.h>
#include <string.h>

#include "node.h"
#include "core/dtype_table.h"

/* Records come from handles (handles.h): a stale handle arrives as a record without references. */
static int live(const wgt_tensor *t) { return t && t->refs > 0; }

/* The public functions that take block types: storage, data movement and the views that
 * keep blocks whole, and the quantized ops. Everything else refuses them at its argument
 * check, so no kernel ever sees a block type it does not know. */
static const char *const block_functions[] = {
    "wgt_tensor_create", "wgt_tensor_from_data", "wgt_zeros", "wgt_tensor_read", "wgt_tensor_write",
    "wgt_tensor_data", "wgt_tensor_data_mut", "wgt_tensor_export_buffer", "wgt_read_begin", "wgt_read",
    "wgt_eval", "wgt_as_strided", "wgt_slice", "wgt_reshape", "wgt_reshape_view", "wgt_squeeze", "wgt_unsqueeze",
    "wgt_split", "wgt_quantize", "wgt_dequantize", "wgt_cast", "wgt_matmul_quantized", "wgt_linear", "wgt_gather_rows",
    "wgt_gguf_load", "wgt_gguf_writer_add_tensor", "wgt_gguf_writer_save",
};

int wgt_takes_blocks(const char *fn) {
    for (size_t i = 0; i < sizeof block_functions / sizeof block_functions[0]; i++)
        if (strcmp(fn, block_functions[i]) == 0) return 1;
    return 0;
}

/* The public functions that take the narrow types (bool, i8, u8, i16, u16, bf16): storage,
 * data movement, views and copies, casts, the shape ops that move elements, and the ops
 * computed in a wider type below. Everything else refuses them at its argument check. */
static const char *const narrow_functions[] = {
    "wgt_tensor_create", "wgt_tensor_from_data", "wgt_zeros", "wgt_ones", "wgt_full", "wgt_arange", "wgt_scalar",
    "wgt_tensor_read", "wgt_tensor_write", "wgt_tensor_data", "wgt_tensor_data_mut", "wgt_tensor_export_buffer",
    "wgt_read_begin", "wgt_eval", "wgt_as_strided", "wgt_slice", "wgt_reshape", "wgt_squeeze", "wgt_unsqueeze",
    "wgt_split", "wgt_permute", "wgt_transpose", "wgt_expand", "wgt_broadcast_to", "wgt_flip", "wgt_contiguous",
    "wgt_detach", "wgt_cast", "wgt_concat", "wgt_stack", "wgt_pad", "wgt_where", "wgt_eq", "wgt_ne", "wgt_lt",
    "wgt_le", "wgt_gt", "wgt_ge", "wgt_logical_and", "wgt_logical_or", "wgt_logical_not", "wgt_save_npy",
    "wgt_load_npy", "wgt_save_safetensors", "wgt_load_safetensors", "wgt_reshape_view", "wgt_broadcast_arrays",
    "wgt_meshgrid",
    /* Sorting orders them by keys of their own bits (sort.c), computing nothing. */
    "wgt_sort", "wgt_argsort", "wgt_topk", "wgt_searchsorted",
    /* Computed wide (core/narrow.c): every predicate, the bitwise ops (bool: and, or, xor,
     * not) and, for the narrow integers, arithmetic and the reductions; each op refuses the
     * narrow types it does not define (bool and bf16 arithmetic). */
    "wgt_logical_xor", "wgt_isnan", "wgt_isinf", "wgt_isfinite", "wgt_signbit", "wgt_any", "wgt_all",
    "wgt_count_nonzero", "wgt_masked_fill", "wgt_masked_select", "wgt_add", "wgt_sub", "wgt_mul", "wgt_div",
    "wgt_pow", "wgt_maximum", "wgt_minimum", "wgt_mod", "wgt_floor_divide", "wgt_bitwise_and", "wgt_bitwise_or",
    "wgt_bitwise_xor", "wgt_bitwise_left_shift", "wgt_bitwise_right_shift", "wgt_bitwise_not", "wgt_add_scalar",
    "wgt_sub_scalar", "wgt_mul_scalar", "wgt_div_scalar", "wgt_pow_scalar", "wgt_maximum_scalar",
    "wgt_minimum_scalar", "wgt_neg", "wgt_abs", "wgt_sign", "wgt_square", "wgt_relu", "wgt_clamp", "wgt_floor",
    "wgt_ceil", "wgt_round", "wgt_trunc", "wgt_sum", "wgt_prod", "wgt_max", "wgt_min", "wgt_mean", "wgt_var",
    "wgt_std", "wgt_argmax", "wgt_argmin", "wgt_cumsum",
    /* Read exactly as a 4-byte type (core/unique.c). */
    "wgt_unique", "wgt_nonzero", "wgt_argwhere",
    /* Built from the moves above (core/manip.c, indexing.c), or gathering in the wide type
     * (wgt_index_gather). */
    "wgt_moveaxis", "wgt_roll", "wgt_tile", "wgt_diagonal", "wgt_tril", "wgt_triu", "wgt_repeat", "wgt_take",
    "wgt_take_along_axis", "wgt_index_select",
    /* Scanned widened (core/scan.c). */
    "wgt_cumprod", "wgt_cummax", "wgt_cummin", "wgt_cumargmax", "wgt_cumargmin",
    /* maximum and minimum (core/clip.c). */
    "wgt_clip",
    /* Compiled graphs take and give them as the ops recorded in them do. */
    "wgt_graph_input", "wgt_graph_build", "wgt_graph_dispatch",
    /* Integer products computed in i32 (core/linalg.c, contract.c); bool is refused there. */
    "wgt_matmul", "wgt_tensordot", "wgt_vecdot", "wgt_outer", "wgt_einsum",
};

int wgt_takes_narrow(const char *fn) {
    for (size_t i = 0; i < sizeof narrow_functions / sizeof narrow_functions[0]; i++)
        if (strcmp(fn, narrow_functions[i]) == 0) return 1;
    return 0;
}

static wgt_status narrow_refused(const char *fn, const char *what, wgt_dtype dtype) {
    return wgt_error(WGT_ERR_DTYPE, "%s: %s is %s, which this function does not take (docs/ops.md lists the functions "
                     "of the narrow types; wgt_cast to a wider type first)", fn, what, wgt_dtype_name(dtype));
}

wgt_status wgt_check_dtype(const char *fn, wgt_dtype dtype) {
    if (wgt_dtype_block_elements(dtype) == 0)
        return wgt_error(WGT_ERR_DTYPE, "%s: unknown data type %d", fn, (int)dtype);
    if (wgt_dtype_is_narrow(dtype) && !wgt_takes_narrow(fn)) return narrow_refused(fn, "the data type", dtype);
    if (wgt_dtype_is_64bit(dtype) && !wgt_takes_int64(fn)) return wgt_int64_refused(fn, "the data type", dtype);
    if (wgt_dtype_is_block(dtype) && !wgt_takes_blocks(fn))
        return wgt_error(WGT_ERR_DTYPE, "%s: %s is a quantized block type, which only the functions of "
                         "docs/quant.md take", fn, wgt_dtype_name(dtype));
    return WGT_OK;
}

wgt_status wgt_check_block_view(const char *fn, wgt_dtype dtype, int ndim, const int64_t *shape,
                                const int64_t *strides, int64_t offset) {
    if (!wgt_dtype_is_block(dtype)) return WGT_OK;
    int64_t b = wgt_dtype_block_elements(dtype);
    /* strides NULL: a new contiguous tensor, whose only constraint is the last dimension. */
    int bad = ndim == 0 || shape[ndim - 1] % b != 0 || offset % b != 0 ||
              (strides && shape[ndim - 1] > 1 && strides[ndim - 1] != 1);
    for (int d = 0; strides && d + 1 < ndim && !bad; d++) bad = shape[d] > 1 && strides[d] % b != 0;
    if (!bad) return WGT_OK;
    char s[256], st[256] = "contiguous";
    wgt_format_shape(s, sizeof s, ndim, shape);
    if (strides) wgt_format_shape(st, sizeof st, ndim, strides);
    return wgt_error(WGT_ERR_SHAPE, "%s: a view of shape %s, strides %s at offset %lld cuts the %lld-element blocks "
                     "of a %s tensor (the last dimension needs stride 1 and a multiple of %lld elements, the offset "
                     "and the other strides multiples of %lld)", fn, s, st, (long long)offset, (long long)b,
                     wgt_dtype_name(dtype), (long long)b, (long long)b);
}

void wgt_block_units(const wgt_tensor *t, wgt_tensor *out) {
    *out = *t;
    int64_t b = wgt_dtype_block_elements(t->dtype);
    if (b <= 1) return;
    for (int d = 0; d < t->ndim; d++) out->strides[d] /= b;
    if (t->ndim > 0) {
        out->shape[t->ndim - 1] /= b;
        out->strides[t->ndim - 1] = 1;
    }
    out->offset /= b;
}

wgt_status wgt_check_tensor_any_type(const char *fn, const char *name, const wgt_tensor *t) {
    if (!t) return wgt_error_if_clear(WGT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, name);
    if (!live(t))
        return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: %s is not a live tensor (released or not a tensor)", fn, name);
    if (t->storage->destroyed)
        return wgt_error(WGT_ERR_DESTROYED, "%s: %s was destroyed", fn, name);
    /* A failure a run found on its own (failed_in_run) is reported where a read finds it. */
    if (t->storage->failed && !t->storage->failed_in_run)
        return wgt_error(t->storage->failed, "%s: the work computing %s failed: %s", fn, name,
                         t->storage->failed_message ? t->storage->failed_message : wgt_status_name(t->storage->failed));
    return wgt_check_context(fn, t->storage->ctx);
}

wgt_status wgt_check_tensor(const char *fn, const char *name, const wgt_tensor *t) {
    wgt_status st = wgt_check_tensor_any_type(fn, name, t);
    if (st != WGT_OK) return st;
    if (wgt_dtype_is_block(t->dtype) && !wgt_takes_blocks(fn))
        return wgt_error(WGT_ERR_DTYPE, "%s: %s is %s, a quantized block type, which only the functions of "
                         "docs/quant.md take (wgt_dequantize it first)", fn, name, wgt_dtype_name(t->dtype));
    if (wgt_dtype_is_narrow(t->dtype) && !wgt_takes_narrow(fn)) return narrow_refused(fn, name, t->dtype);
    if (wgt_dtype_is_64bit(t->dtype) && !wgt_takes_int64(fn)) return wgt_int64_refused(fn, name, t->dtype);
    return WGT_OK;
}

wgt_status wgt_check_same_context(const char *fn, const wgt_tensor *a, const wgt_tensor *b) {
    if (a->storage->ctx != b->storage->ctx)
        return wgt_error(WGT_ERR_CONTEXT_MISMATCH, "%s: the operands belong to two different contexts (%s and %s)",
                         fn, wgt_context_device_name(a->storage->ctx), wgt_context_device_name(b->storage->ctx));
    return WGT_OK;
}

static wgt_tensor *tensor_alloc(wgt_storage *s, wgt_dtype dtype, int ndim, const int64_t *shape,
                                const int64_t *strides, int64_t offset, unsigned usage) {
    wgt_tensor *t = calloc(1, sizeof *t);
    if (!t) {
        wgt_error(WGT_ERR_OUT_OF_MEMORY, "out of host memory for a tensor handle");
        return NULL;
    }
    t->refs = 1;
    t->storage = s;
    s->refs++;
    t->dtype = dtype;
    t->ndim = ndim;
    for (int i = 0; i < ndim; i++) {
        t->shape[i] = shape[i];
        t->strides[i] = strides[i];
    }
    t->offset = offset;
    t->usage = usage;
    return t;
}

wgt_tensor *wgt_tensor_new(wgt_context *ctx, const char *fn, wgt_dtype dtype, int ndim, const int64_t *shape,
                           unsigned usage) {
    int64_t numel;
    if (wgt_check_context(fn, ctx) != WGT_OK || wgt_check_dtype(fn, dtype) != WGT_OK ||
        wgt_check_shape(fn, ndim, shape, &numel) != WGT_OK)
        return NULL;
    if (usage & ~(unsigned)(WGT_USAGE_READABLE | WGT_USAGE_WRITABLE | WGT_USAGE_EXPORTABLE)) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: unknown usage flags 0x%x", fn, usage);
        return NULL;
    }
    if (usage & WGT_USAGE_EXPORTABLE && ctx->backend->host_resident) {
        wgt_error(WGT_ERR_USAGE, "%s: the exportable usage needs the WebGPU backend; this context uses %s", fn,
                  ctx->backend->name);
        return NULL;
    }
    if (wgt_check_block_view(fn, dtype, ndim, shape, NULL, 0) != WGT_OK) return NULL;
    size_t esize = wgt_dtype_block_bytes(dtype);
    int64_t units = numel / wgt_dtype_block_elements(dtype);
    uint64_t max = ctx->backend->max_buffer_bytes;
    if ((uint64_t)units > (max & ~3ull) / esize) { /* storage is allocated in whole words */
        char s[256];
        wgt_format_shape(s, sizeof s, ndim, shape);
        wgt_error(WGT_ERR_LIMIT, "%s: a %s tensor of shape %s needs %llu bytes; the %s device allows %llu per tensor",
                  fn, wgt_dtype_name(dtype), s, (unsigned long long)units * esize, ctx->backend->name,
                  (unsigned long long)max);
        return NULL;
    }
    wgt_storage *s = wgt_storage_create(ctx, (size_t)units * esize);
    if (!s) return NULL;
    if (wgt_dtype_is_block(dtype)) s->block_dtype = dtype;
    /* Memory is taken when the work that writes it runs (or the caller writes it), on every
     * backend: pending work holds no output memory, and intermediates that die before their
     * turn reuse what earlier steps freed. */
    int64_t strides[WGT_MAX_DIMS];
    wgt_contiguous_strides(ndim, shape, strides);
    wgt_tensor *t = tensor_alloc(s, dtype, ndim, shape, strides, 0, usage);
    wgt_storage_release(s); /* the tensor holds the only reference now */
    return t;
}

wgt_tensor *wgt_tensor_new_view(wgt_tensor *base, int ndim, const int64_t *shape,
                                const int64_t *strides, int64_t offset) {
    return tensor_alloc(base->storage, base->dtype, ndim, shape, strides, offset, base->usage);
}

/* A destroyed tensor may still be retained: the handle stays valid until released. */
wgt_tensor *wgt_retain(wgt_tensor *t) {
    if (!t) {
        wgt_error_if_clear(WGT_ERR_INVALID_ARGUMENT, "wgt_retain: tensor is NULL");
        return NULL;
    }
    if (!live(t)) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "wgt_retain: tensor is not a live tensor");
        return NULL;
    }
    t->refs++;
    return t;
}

void wgt_release(wgt_tensor *t) {
    if (!live(t)) return;
    if (--t->refs > 0) return;
    if (t->ag) wgt_ag_meta_release(t->ag);
    wgt_storage_release(t->storage);
    free(t);
}

wgt_status wgt_tensor_destroy(wgt_tensor *t) {
    if (!t) return wgt_error_if_clear(WGT_ERR_INVALID_ARGUMENT, "wgt_tensor_destroy: tensor is NULL");
    if (!live(t))
        return wgt_error(WGT_ERR_INVALID_ARGUMENT, "wgt_tensor_destroy: tensor is not a live tensor");
    if (!t->storage->destroyed) {
        /* Pending work that reads or writes it runs first: its other readers keep their inputs. */
        wgt_status st = t->storage->symbolic ? WGT_OK : wgt_flush_for(t->storage, 1);
        if (st != WGT_OK) return st;
        wgt_storage_destroy_data(t->storage);
        t->storage->destroyed = 1;
    }
    return WGT_OK;
}

/* ---- properties: NULL-tolerant so they can be used in messages and tests ---- */

wgt_dtype wgt_tensor_dtype(const wgt_tensor *t) { return live(t) ? t->dtype : (wgt_dtype)0; }
int wgt_tensor_ndim(const wgt_tensor *t) { return live(t) ? t->ndim : -1; }
const int64_t *wgt_tensor_shape(const wgt_tensor *t) { return live(t) ? t->shape : NULL; }
const int64_t *wgt_tensor_strides(const wgt_tensor *t) { return live(t) ? t->strides : NULL; }
int64_t wgt_tensor_offset(const wgt_tensor *t) { return live(t) ? t->offset : -1; }
int64_t wgt_tensor_numel(const wgt_tensor *t) { return live(t) ? wgt_numel(t->ndim, t->shape) : -1; }
size_t wgt_tensor_nbytes(const wgt_tensor *t) {
    return live(t) ? wgt_dtype_bytes(t->dtype, wgt_numel(t->ndim, t->shape)) : 0;
}
unsigned wgt_tensor_usage(const wgt_tensor *t) { return live(t) ? t->usage : 0; }
int wgt_tensor_is_contiguous(const wgt_tensor *t) {
    return live(t) && wgt_is_contiguous(t->ndim, t->shape, t->strides);
}
wgt_context *wgt_tensor_context(const wgt_tensor *t) { return live(t) ? t->storage->ctx : NULL; }

/* ---- kernel operands ---- */

wgt_status wgt_make_operand(wgt_tensor *t, int ndim, const int64_t *shape, const int64_t *strides,
                            wgt_operand *op) {
    wgt_storage *s = t->storage;
    wgt_status st = wgt_storage_sync_device(s);
    if (st != WGT_OK) return st;
    wgt_operand_view(t, ndim, shape, strides, op);
    op->host = s->host;
    op->buffer = s->buffer;
    return WGT_OK;
}

wgt_status wgt_make_output_operand(wgt_tensor *t, wgt_operand *op) {
    wgt_storage *s = t->storage;
    wgt_status st = wgt_flush_for(s, 1);
    if (st != WGT_OK || (st = wgt_storage_prepare_output(s)) != WGT_OK) return st;
    wgt_operand_whole(t, op);
    op->host = s->host;
    op->buffer = s->buffer;
    return WGT_OK;
}

void wgt_finish_output(wgt_tensor *t) { wgt_storage_mark_device_written(t->storage); }

wgt_status wgt_check_kernel_size(const char *fn, const wgt_tensor *t) {
    uint64_t max = t->storage->ctx->backend->max_kernel_elements;
    int64_t n = wgt_numel(t->ndim, t->shape);
    if ((uint64_t)n > max)
        return wgt_error(WGT_ERR_LIMIT, "%s: %lld elements exceed the %llu a %s kernel can index", fn, (long long)n,
                         (unsigned long long)max, t->storage->ctx->backend->name);
    return WGT_OK;
}
