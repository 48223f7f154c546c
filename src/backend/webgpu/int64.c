/*
 * i64 and u64 on WebGPU, whose shaders have no 64-bit integers: an element is two u32 words
 * (low, high). Ops that only move elements move the words: an 8-byte operand is seen as a
 * u32 operand with one more dimension, of length 2 and stride 1 (the element's two words),
 * and the existing u32 kernels run on it (write_box, so copies, pad, where, gather_rows and
 * set_rows). The extra dimension needs a rank below WGT_MAX_DIMS: a rank-8 view of a 64-bit
 * type is refused with WGT_ERR_LIMIT. Casts to and from these types run wgsl/int64_cast.wgsl
 * on word pairs.
 */
#include <stdio.h>
#include <string.h>

#include "core/dtype_table.h"
#include "webgpu_internal.h"

#define WORKGROUP_SIZE 256u

/* The view of op's words; a length-1 extra dimension stands in for a missing one so all the
 * operands of one call keep matching ranks. */
static wgt_status split(const char *what, const wgt_operand *op, int words, wgt_operand *out) {
    if (op->ndim >= WGT_MAX_DIMS)
        return wgt_error(WGT_ERR_LIMIT, "%s: a rank-%d view of %s is beyond the WebGPU backend, which moves 64-bit "
                         "elements as word pairs in one more dimension (at most rank %d)", what, op->ndim,
                         wgt_dtype_name(op->dtype), WGT_MAX_DIMS - 1);
    *out = *op;
    int eight = wgt_dtype_size(op->dtype) == 8;
    for (int d = 0; d < op->ndim; d++) out->strides[d] = eight ? 2 * op->strides[d] : op->strides[d];
    out->offset = eight ? 2 * op->offset : op->offset;
    out->shape[op->ndim] = words;
    out->strides[op->ndim] = eight ? 1 : 0; /* a 4-byte operand (where's condition) repeats per word */
    out->ndim = op->ndim + 1;
    if (eight) out->dtype = WGT_U32;
    return WGT_OK;
}

wgt_status wgt_wgpu_write_box64(wgt_backend *be, const wgt_operand *dst, const int64_t *box_start,
                                const wgt_operand *src) {
    wgt_operand d, s;
    int64_t start[WGT_MAX_DIMS] = {0};
    wgt_status st;
    if ((st = split("write_box", dst, 2, &d)) != WGT_OK || (st = split("write_box", src, 2, &s)) != WGT_OK) return st;
    memcpy(start, box_start, sizeof *start * (size_t)dst->ndim);
    return wgt_wgpu_write_box(be, &d, start, &s);
}

wgt_status wgt_wgpu_pad64(wgt_backend *be, const wgt_operand *out, const wgt_operand *in, const int64_t *before,
                          uint64_t value_bits) {
    wgt_operand o, i;
    int64_t b[WGT_MAX_DIMS] = {0};
    wgt_status st;
    if ((st = split("pad", out, 2, &o)) != WGT_OK || (st = split("pad", in, 2, &i)) != WGT_OK) return st;
    memcpy(b, before, sizeof *b * (size_t)out->ndim);
    return wgt_wgpu_pad_words(be, &o, &i, b, (uint32_t)value_bits, (uint32_t)(value_bits >> 32), 1);
}

wgt_status wgt_wgpu_where64(wgt_backend *be, const wgt_operand *out, const wgt_operand *cond, const wgt_operand *a,
                            const wgt_operand *b) {
    wgt_operand o, c, x, y;
    wgt_status st;
    if ((st = split("where", out, 2, &o)) != WGT_OK || (st = split("where", cond, 2, &c)) != WGT_OK ||
        (st = split("where", a, 2, &x)) != WGT_OK || (st = split("where", b, 2, &y)) != WGT_OK)
        return st;
    return wgt_wgpu_where(be, &o, &c, &x, &y);
}

wgt_status wgt_wgpu_gather_rows64(wgt_backend *be, const wgt_operand *out, const wgt_operand *table,
                                  const wgt_operand *indices) {
    wgt_operand o, t;
    wgt_status st;
    if ((st = split("gather_rows", out, 2, &o)) != WGT_OK || (st = split("gather_rows", table, 2, &t)) != WGT_OK)
        return st;
    return wgt_wgpu_gather_rows(be, &o, &t, indices);
}

wgt_status wgt_wgpu_set_rows64(wgt_backend *be, const wgt_operand *dst, const wgt_operand *indices,
                               const wgt_operand *rows) {
    wgt_operand d, r;
    wgt_status st;
    if ((st = split("set_rows", dst, 2, &d)) != WGT_OK || (st = split("set_rows", rows, 2, &r)) != WGT_OK) return st;
    return wgt_wgpu_set_rows(be, &d, indices, &r);
}

/* A template of wgsl/ with up to three constants filled in (keys NULL past the last) and the
 * word-pair arithmetic of wgsl/int64_words.wgsl, and the storage bindings of its kernel (the
 * last one written). */
typedef struct {
    const char *name, *keys[3];
    int values[3];
    int storage_count;
} template_args;

static char *build_template(wgt_webgpu *w, const void *arg) {
    (void)w;
    const template_args *t = arg;
    const char *text = wgt_wgsl_source(t->name);
    if (!text) return NULL;
    char v[3][12];
    const char *words = wgt_wgsl_source("int64_words");
    if (!words) return NULL;
    const char *pairs[9] = {"WORDS", words, NULL};
    for (int k = 0, n = 2; k < 3 && t->keys[k]; k++) {
        snprintf(v[k], sizeof v[k], "%d", t->values[k]);
        pairs[n++] = t->keys[k];
        pairs[n++] = v[k];
    }
    return wgt_wgsl_expand(text, pairs);
}

static wgt_status template_pipeline(wgt_webgpu *w, const template_args *t, wgt_pipeline **pl) {
    char key[64];
    snprintf(key, sizeof key, "%s:%d:%d:%d", t->name, t->values[0], t->values[1], t->values[2]);
    return wgt_wgpu_pipeline(w, key, t->storage_count, build_template, t, pl);
}

/* ---- casts ---- */

typedef struct {
    uint32_t count, ndim, in_offset, out_offset;
    uint32_t shape[8];
    int32_t in_strides[8];
} cast_params;

/* The kernel's type codes: 0 f32, 1 i32, 2 u32, 3 i64, 4 u64 (the core sends other pairs
 * through one of these: src/core/int64.c). */
static int type_code(wgt_dtype d) {
    switch (d) {
    case WGT_F32: return 0;
    case WGT_I32: return 1;
    case WGT_U32: return 2;
    case WGT_I64: return 3;
    case WGT_U64: return 4;
    default: return -1;
    }
}

wgt_status wgt_wgpu_cast64(wgt_backend *be, const wgt_operand *out, const wgt_operand *a) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    int codes[2] = {type_code(a->dtype), type_code(out->dtype)};
    if (codes[0] < 0 || codes[1] < 0 || (codes[0] < 3 && codes[1] < 3))
        return wgt_error(WGT_ERR_INTERNAL, "cast64 from %s to %s", wgt_dtype_name(a->dtype),
                         wgt_dtype_name(out->dtype));
    cast_params p;
    memset(&p, 0, sizeof p);
    uint64_t numel = 1;
    int64_t lo = a->offset, hi = a->offset;
    for (int d = 0; d < a->ndim; d++) {
        numel *= (uint64_t)a->shape[d];
        p.shape[d] = (uint32_t)a->shape[d];
        /* A length-1 dimension's stride is never multiplied by a nonzero coordinate. */
        p.in_strides[d] = a->shape[d] > 1 ? (int32_t)a->strides[d] : 0;
        int64_t span = (a->shape[d] - 1) * a->strides[d];
        if (span < 0) lo += span;
        else hi += span;
    }
    if (numel == 0) return WGT_OK;
    /* Element indices are i32 in the kernel; word indices of an 8-byte side are twice that. */
    if (lo < 0 || hi > INT32_MAX || (uint64_t)out->offset + numel > INT32_MAX)
        return wgt_error(WGT_ERR_LIMIT, "cast: a view reaching elements %lld..%lld, or %llu output elements, is beyond "
                         "32-bit indexing", (long long)lo, (long long)hi, (unsigned long long)numel);
    p.count = (uint32_t)numel;
    p.ndim = (uint32_t)a->ndim;
    p.in_offset = (uint32_t)a->offset;
    p.out_offset = (uint32_t)out->offset;
    template_args t = {"int64_cast", {"IN", "OUT", NULL}, {codes[0], codes[1], 0}, 2};
    wgt_pipeline *pl;
    wgt_status st = template_pipeline(w, &t, &pl);
    if (st != WGT_OK) return st;
    wgt_buffer *buffers[2] = {a->buffer, out->buffer};
    return wgt_wgpu_dispatch(w, pl, buffers, &p, sizeof p, (numel + WORKGROUP_SIZE - 1) / WORKGROUP_SIZE);
}

/* ---- sums, products and running sums ---- */

typedef struct {
    uint32_t count, keep, ndim, in_offset;
    uint32_t out_offset, reduced, out_step, unused;
    uint32_t shape[8];
    int32_t in_strides[8];
    uint32_t out_strides[8];
} reduce64_params;

/* in's first `keep` dimensions give the outputs (output strides out_strides), the rest are
 * reduced in order; scan writes every step at out_step apart. */
static wgt_status run_reduce64(wgt_webgpu *w, int prod, int scan, const wgt_operand *out, const wgt_operand *in,
                               int keep, const int64_t *out_strides, int64_t out_step) {
    reduce64_params p;
    memset(&p, 0, sizeof p);
    uint64_t outputs = 1, reduced = 1;
    int64_t lo = in->offset, hi = in->offset, out_hi = out->offset;
    for (int d = 0; d < in->ndim; d++) {
        if (d < keep) outputs *= (uint64_t)in->shape[d];
        else reduced *= (uint64_t)in->shape[d];
        p.shape[d] = (uint32_t)in->shape[d];
        p.in_strides[d] = in->shape[d] > 1 ? (int32_t)in->strides[d] : 0;
        if (d < keep) p.out_strides[d] = (uint32_t)out_strides[d], out_hi += (in->shape[d] - 1) * out_strides[d];
        int64_t span = (in->shape[d] - 1) * in->strides[d];
        if (span < 0) lo += span;
        else hi += span;
    }
    if (outputs == 0) return WGT_OK;
    if (scan && reduced > 0) out_hi += ((int64_t)reduced - 1) * out_step;
    if (lo < 0 || hi > INT32_MAX || out_hi > INT32_MAX || outputs > INT32_MAX || reduced > UINT32_MAX)
        return wgt_error(WGT_ERR_LIMIT, "%s of i64/u64: a view reaching elements %lld..%lld into %llu outputs is beyond "
                         "32-bit indexing", scan ? "cumsum" : "reduce", (long long)lo, (long long)hi,
                         (unsigned long long)outputs);
    p.count = (uint32_t)outputs;
    p.keep = (uint32_t)keep;
    p.ndim = (uint32_t)in->ndim;
    p.in_offset = (uint32_t)in->offset;
    p.out_offset = (uint32_t)out->offset;
    p.reduced = (uint32_t)reduced;
    p.out_step = (uint32_t)out_step;
    template_args t = {"int64_reduce", {"OP", "SCAN", NULL}, {prod, scan, 0}, 2};
    wgt_pipeline *pl;
    wgt_status st = template_pipeline(w, &t, &pl);
    if (st != WGT_OK) return st;
    wgt_buffer *buffers[2] = {in->buffer, out->buffer};
    return wgt_wgpu_dispatch(w, pl, buffers, &p, sizeof p, (outputs + WORKGROUP_SIZE - 1) / WORKGROUP_SIZE);
}

wgt_status wgt_wgpu_reduce64(wgt_backend *be, wgt_reduce_op op, const wgt_operand *out, const wgt_operand *in,
                             int reduce_ndim) {
    if (op != WGT_REDUCE_SUM && op != WGT_REDUCE_PROD)
        return wgt_error(WGT_ERR_INTERNAL, "reduce op %d of %s", (int)op, wgt_dtype_name(in->dtype));
    int keep = in->ndim - reduce_ndim;
    int64_t strides[WGT_MAX_DIMS], s = 1; /* the output is contiguous over the kept dimensions */
    for (int d = keep - 1; d >= 0; d--) strides[d] = s, s *= in->shape[d];
    return run_reduce64((wgt_webgpu *)be, op == WGT_REDUCE_PROD, 0, out, in, keep, strides, 0);
}

wgt_status wgt_wgpu_cumsum64(wgt_backend *be, const wgt_operand *out, const wgt_operand *in, int axis) {
    /* The axis moved last: every other dimension names a row. */
    wgt_operand moved = *in;
    int64_t out_strides[WGT_MAX_DIMS];
    for (int d = 0, k = 0; d < in->ndim; d++) {
        if (d == axis) continue;
        moved.shape[k] = in->shape[d], moved.strides[k] = in->strides[d], out_strides[k] = out->strides[d];
        k++;
    }
    moved.shape[in->ndim - 1] = in->shape[axis];
    moved.strides[in->ndim - 1] = in->strides[axis];
    return run_reduce64((wgt_webgpu *)be, 0, 1, out, &moved, in->ndim - 1, out_strides, out->strides[axis]);
}

/* ---- elementwise arithmetic, comparisons and bitwise ops ---- */

typedef struct {
    uint32_t count, ndim, a_offset, b_offset;
    uint32_t out_offset, unused[3];
    uint32_t shape[8];
    int32_t a_strides[8];
    int32_t b_strides[8];
} binary64_params;

/* The kernel's op codes (wgsl/int64_binary.wgsl); -1 for ops it does not have. */
static int binary_code(wgt_binary_op op) {
    switch (op) {
    case WGT_BINARY_ADD: return 0;
    case WGT_BINARY_SUB: return 1;
    case WGT_BINARY_MUL: return 2;
    case WGT_BINARY_MAXIMUM: return 3;
    case WGT_BINARY_MINIMUM: return 4;
    case WGT_BINARY_BITWISE_AND: return 5;
    case WGT_BINARY_BITWISE_OR: return 6;
    case WGT_BINARY_BITWISE_XOR: return 7;
    case WGT_BINARY_EQ: return 8;
    case WGT_BINARY_NE: return 9;
    case WGT_BINARY_LT: return 10;
    case WGT_BINARY_LE: return 11;
    case WGT_BINARY_GT: return 12;
    case WGT_BINARY_GE: return 13;
    default: return -1;
    }
}

static int unary_code(wgt_unary_op op) {
    return op == WGT_UNARY_NEG ? 14 : op == WGT_UNARY_ABS ? 15 : op == WGT_UNARY_BITWISE_NOT ? 16 : -1;
}

static wgt_status run_binary64(wgt_webgpu *w, int code, const wgt_operand *out, const wgt_operand *a,
                               const wgt_operand *b) {
    size_t out_size = wgt_dtype_size(out->dtype);
    if (code < 0 || (code >= 8 && code <= 13 ? out_size == 8 : out_size != 8) || (out_size == 1 && out->offset % 4))
        return wgt_error(WGT_ERR_INTERNAL, "elementwise op %d of %s giving %s at %lld", code, wgt_dtype_name(a->dtype),
                         wgt_dtype_name(out->dtype), (long long)out->offset);
    binary64_params p;
    memset(&p, 0, sizeof p);
    uint64_t numel = 1;
    const wgt_operand *ops[2] = {a, b};
    for (int d = 0; d < out->ndim; d++) {
        numel *= (uint64_t)out->shape[d];
        p.shape[d] = (uint32_t)out->shape[d];
    }
    if (numel == 0) return WGT_OK;
    for (int k = 0; k < 2; k++) {
        int64_t lo = ops[k]->offset, hi = ops[k]->offset;
        for (int d = 0; d < out->ndim; d++) {
            int64_t span = (out->shape[d] - 1) * ops[k]->strides[d];
            if (span < 0) lo += span;
            else hi += span;
            (k ? p.b_strides : p.a_strides)[d] = out->shape[d] > 1 ? (int32_t)ops[k]->strides[d] : 0;
        }
        if (lo < 0 || hi > INT32_MAX)
            return wgt_error(WGT_ERR_LIMIT, "elementwise op of %s: a view reaching elements %lld..%lld is beyond 32-bit "
                             "indexing", wgt_dtype_name(a->dtype), (long long)lo, (long long)hi);
    }
    if ((uint64_t)out->offset + numel > INT32_MAX)
        return wgt_error(WGT_ERR_LIMIT, "elementwise op of %s: %llu elements are beyond 32-bit indexing",
                         wgt_dtype_name(a->dtype), (unsigned long long)numel);
    p.count = (uint32_t)numel;
    p.ndim = (uint32_t)out->ndim;
    p.a_offset = (uint32_t)a->offset;
    p.b_offset = (uint32_t)b->offset;
    p.out_offset = (uint32_t)out->offset;
    template_args t = {"int64_binary", {"OP", "SIGNED", "OUT"}, {code, a->dtype == WGT_I64, (int)out_size}, 3};
    wgt_pipeline *pl;
    wgt_status st = template_pipeline(w, &t, &pl);
    if (st != WGT_OK) return st;
    uint64_t invocations = out_size == 1 ? (numel + 3) / 4 : numel;
    wgt_buffer *buffers[3] = {a->buffer, b->buffer, out->buffer};
    return wgt_wgpu_dispatch(w, pl, buffers, &p, sizeof p, (invocations + WORKGROUP_SIZE - 1) / WORKGROUP_SIZE);
}

wgt_status wgt_wgpu_binary64(wgt_backend *be, wgt_binary_op op, const wgt_operand *out, const wgt_operand *a,
                             const wgt_operand *b) {
    return run_binary64((wgt_webgpu *)be, binary_code(op), out, a, b);
}

wgt_status wgt_wgpu_unary64(wgt_backend *be, wgt_unary_op op, const wgt_operand *out, const wgt_operand *a) {
    return run_binary64((wgt_webgpu *)be, unary_code(op), out, a, a);
}
