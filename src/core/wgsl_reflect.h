/*
 * What a user kernel's WGSL declares, read from its source before anything is compiled: the
 * module-scope buffers of @group(0) (storage, read or read_write, and at most one uniform),
 * the element type of each storage array with its size, the uniform's size, and the entry
 * point's @workgroup_size. wgt_kernel_dispatch checks its arguments against this, so a
 * binding that does not fit the shader is an error naming the binding, before any dispatch.
 */
#ifndef WGT_CORE_WGSL_REFLECT_H
#define WGT_CORE_WGSL_REFLECT_H

#include <stdint.h>

#include "wgtensor.h"

#define WGT_REFLECT_MAX_BINDINGS 32
#define WGT_REFLECT_NAME_MAX 64

typedef struct wgt_reflect_binding {
    char name[WGT_REFLECT_NAME_MAX];
    char type[WGT_REFLECT_NAME_MAX]; /* the element type (storage) or the type (uniform), as written */
    uint32_t binding;
    int uniform;    /* var<uniform> */
    int read_write; /* var<storage, read_write> */
    /* Storage: the array element's size and its scalars' size (0: not known, e.g. a type of a
     * form we do not lay out); uniform: its size in `element_size`. */
    uint32_t element_size;
    uint32_t component_size;
} wgt_reflect_binding;

typedef struct wgt_reflection {
    int count;
    wgt_reflect_binding bindings[WGT_REFLECT_MAX_BINDINGS];
    uint32_t workgroup_size[3]; /* the entry point's; 0 where not an integer literal */
    int entry_found;
} wgt_reflection;

/* Fills out from source for the entry point entry. WGT_ERR_INVALID_ARGUMENT (message from
 * fn, with the line) for what the kernel API does not take: a buffer outside @group(0), two
 * uniforms, a storage buffer that is not an array, more than WGT_REFLECT_MAX_BINDINGS. */
wgt_status wgt_wgsl_reflect(const char *fn, const char *source, const char *entry, wgt_reflection *out);

#endif
