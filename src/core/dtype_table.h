/*
 * The data-type table (dtype.c): what each wgt_dtype is, for code that must treat types by
 * kind and range rather than by name. Backends may include it: it holds no core state.
 */
#ifndef WGT_DTYPE_TABLE_H
#define WGT_DTYPE_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "wgtensor.h"

typedef enum {
    WGT_KIND_UNKNOWN,
    WGT_KIND_BOOL,
    WGT_KIND_INT,   /* signed integer */
    WGT_KIND_UINT,  /* unsigned integer */
    WGT_KIND_FLOAT,
    WGT_KIND_BLOCK  /* quantized blocks */
} wgt_dtype_kind;

typedef struct {
    const char *name;
    size_t size;            /* bytes per element; 0 for block types */
    int64_t block_elements; /* 1, or the block's elements */
    size_t block_bytes;     /* bytes per block (the element size for other types) */
    wgt_dtype_kind kind;
    double min, max;        /* integer and bool range (0, 0 for floats); for i64 and u64 max is one past */
} wgt_dtype_info;

/* The row of dtype; an "unknown" row (size 0, block_elements 0) for values outside the enum. */
const wgt_dtype_info *wgt_dtype_info_of(wgt_dtype dtype);
/* bool, i8, u8, i16, u16, bf16: the types most ops take only after a cast (docs/ops.md). */
int wgt_dtype_is_narrow(wgt_dtype dtype);
int wgt_dtype_is_64bit(wgt_dtype dtype);   /* i64, u64 */
/* Whether the whole number v is a value of the integer or bool type dtype. */
int wgt_dtype_in_range(wgt_dtype dtype, double v);
int wgt_dtype_is_float(wgt_dtype dtype);   /* f32, f16, bf16 */
int wgt_dtype_is_integer(wgt_dtype dtype); /* signed or unsigned, not bool */
/* The array API's type promotion of a and b into *out (docs/ops.md, "Type promotion"); 0 when
 * the pair has no common type here, with *why saying which rule refuses it. */
int wgt_dtype_promote(wgt_dtype a, wgt_dtype b, wgt_dtype *out, const char **why);

#endif
