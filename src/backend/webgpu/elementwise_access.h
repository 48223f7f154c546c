/*
 * How the elementwise and fused kernels (elementwise.c, fused.c) read their inputs. Both run
 * each invocation over four consecutive output elements: a "vector" kernel covers the
 * elements [start, end) with end - start a multiple of 4, stores the four as one vector
 * (vec4 of 32-bit values, or two words of packed f16 pairs) and reads each input in the
 * cheapest way its layout allows; a "tail" kernel covers what is left (at most 3 elements),
 * or a whole launch, with scalar loads and stores. The layout of an input, seen at the
 * output's shape, picks how it is read; the kind is part of the pipeline's key, the offset
 * and the block sizes travel in the uniform block.
 */
#ifndef WGT_WEBGPU_ELEMENTWISE_ACCESS_H
#define WGT_WEBGPU_ELEMENTWISE_ACCESS_H

#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"

typedef enum wgt_wgpu_access_kind {
    WGT_ACCESS_VECTOR,  /* dense, offset a multiple of 4: one vector load (vector kernels) */
    WGT_ACCESS_DENSE,   /* dense: element offset + i */
    WGT_ACCESS_FIXED,   /* one element everywhere (a broadcast scalar): element offset */
    WGT_ACCESS_ROW,     /* element offset + i % mid, with mid and offset multiples of 4: a dense
                         * block repeated along the leading dimensions (a row added to every
                         * row), one vector load (vector kernels) */
    WGT_ACCESS_SPLAT,   /* element offset + (i / inner) % mid, inner a multiple of 4: the four
                         * share one element, one load (vector kernels) */
    WGT_ACCESS_BLOCK,   /* element offset + (i / inner) % mid: a dense block of mid elements,
                         * each repeated inner times along trailing dimensions, the whole
                         * repeated along leading ones */
    WGT_ACCESS_STRIDED, /* any strides: the index from the coordinates */
    WGT_ACCESS_KINDS
} wgt_wgpu_access_kind;

typedef struct wgt_wgpu_access {
    wgt_wgpu_access_kind kind;
    uint32_t offset, inner, mid;
} wgt_wgpu_access;

/* How `in`, broadcast to shape, is read by a vector kernel (vector = 1) or a tail kernel. */
wgt_wgpu_access wgt_wgpu_classify_input(const wgt_operand *in, int ndim, const int64_t *shape, int vector);
/* One letter per kind, for pipeline keys. */
char wgt_wgpu_access_letter(wgt_wgpu_access_kind kind);
/* The WGSL element type of input k's binding for that kind (vec4<f32>, vec2<u32> for f16
 * quads, or the plain storage type). */
const char *wgt_wgpu_access_storage_type(wgt_wgpu_access_kind kind, wgt_dtype dtype);
/* The WGSL element type of an output's binding in a vector (1) or tail (0) kernel. */
const char *wgt_wgpu_output_storage_type(wgt_dtype dtype, int vector);

/* The WGSL expressions a kernel's uniform block gives for input k. */
typedef struct wgt_wgpu_access_exprs {
    char offset[48], inner[48], mid[48];
    char array[16]; /* the binding the input is read from: in<k>, or an output's (in place) */
} wgt_wgpu_access_exprs;

/* Appends to dst (a string in a buffer of size bytes) `fn load<k>(i: u32) -> vec4<T>`: the four
 * values of input k (binding e->array) for output elements i .. i + 3, in the compute type T;
 * tail kernels clamp the four to params.end - 1. STRIDED calls `fn element<k>(i: u32) -> u32`,
 * which the caller defines, and f16 calls wgt_unpack_f16 (the piece wgt_wgsl_unpack_f16), which
 * the caller adds to its helpers. Returns 0 when dst is too small (dst is then unusable). */
int wgt_wgpu_load_wgsl(char *dst, size_t size, int k, wgt_dtype dtype, wgt_wgpu_access_kind kind,
                       const wgt_wgpu_access_exprs *e, int vector);
/* Appends `fn store<k>(i: u32, v: vec4<T>)` writing output k (binding named out<k>, or `out`
 * for name_index < 0) at elements i .. i + 3: one vector store in a vector kernel; in a tail
 * kernel the elements below params.end, f16 as whole words. Returns 0 when dst is too small. */
int wgt_wgpu_store_wgsl(char *dst, size_t size, int name_index, wgt_dtype dtype, int vector);

/* Workgroups (of 256 invocations, four elements each) for elements [start, end): a
 * grid-stride launch of at most max_workgroups, so no launch needs a second grid dimension. */
uint64_t wgt_wgpu_quad_workgroups(uint64_t start, uint64_t end, uint32_t max_workgroups);

#endif
