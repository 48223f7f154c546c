/*
 * Tensor, context, kernel, graph and read-request handles. A caller never holds a pointer to a tensor record: it holds a
 * handle that names a slot of one process-wide table and the slot's generation. Releasing a handle's
 * last reference bumps the generation, so a stale handle (a double release, a use after
 * release, a release after the slot went to a new tensor) is recognised from the table
 * alone, without reading freed memory, and never acts on the slot's next tensor.
 *
 * The public entry points (api.c, generated; api_special.c) turn handles into records with
 * wgt_handle_arg and records into handles with wgt_handle_out; everything below them works
 * on records. A stale or foreign handle becomes a dead record that every check reports as
 * "not a live tensor", naming the function and the argument.
 */
#ifndef WGT_CORE_HANDLES_H
#define WGT_CORE_HANDLES_H

#include <stdint.h>

#include "wgtensor.h"

/* The record a handle names, or the dead record (refs 0) for a stale or foreign one. NULL
 * stays NULL, so an op given NULL keeps the earlier error. */
wgt_tensor *wgt_handle_arg(const wgt_tensor *handle);
/* The handle of a record a function returns with one new reference, which becomes the
 * caller's. NULL stays NULL; a full table releases the record and fails naming fn. */
wgt_tensor *wgt_handle_out(const char *fn, wgt_tensor *record);
/* Ends one of the caller's references; 0 when the handle was stale (error recorded). */
int wgt_handle_release(const char *fn, wgt_tensor *handle);
/* For tests that look inside a tensor: the record, or NULL for a stale handle. */
wgt_tensor *wgt_handle_record(const wgt_tensor *handle);
/* Live handles at most (default 1 << 24); for tests of the limit. Returns the old limit. */
uint32_t wgt_handles_set_limit(uint32_t limit);

/* Context handles, in a table of their own: a released context's handle is stale, so a
 * second release or any call with it is an error naming the function, never a read of the
 * freed context. */

/* Into *record the context a handle names (NULL for NULL, which the function called reports
 * as it always did); 0 with WGT_ERR_INVALID_ARGUMENT naming fn for a stale or foreign one. */
int wgt_context_arg(const char *fn, const wgt_context *handle, wgt_context **record);
/* The caller's handle of a context record: a new one for a new context (NULL, the context
 * released and WGT_ERR_LIMIT naming fn when the table is full), else the one it has, stale
 * once the context was released. NULL stays NULL. */
wgt_context *wgt_context_out(const char *fn, wgt_context *record);
/* wgt_context_release over a handle: a stale one is an error naming fn. */
void wgt_context_handle_release(const char *fn, wgt_context *handle);
/* For tests that look inside a context: the record, or NULL for a stale handle. */
wgt_context *wgt_context_record(const wgt_context *handle);
/* Live contexts at most (default 1 << 24); for tests of the limit. Returns the old limit. */
uint32_t wgt_context_handles_set_limit(uint32_t limit);

/* Kernel, graph and read-request handles, each kind in a table of its own, with the contexts'
 * rules: the caller holds the one reference the creating call gave (wgt_kernel_create,
 * wgt_graph_build, wgt_read_begin),
 * so a released handle is stale, and a second release or any call with it is an error naming
 * the function, never a read of the freed object. What the library holds itself (a recorded
 * dispatch holds its kernel) holds the record, not the handle. For T of kernel, graph, read:
 *
 *   int wgt_T_handle_arg(fn, handle, &record): the record a handle names (NULL for NULL,
 *       which the function called reports); 0 with WGT_ERR_INVALID_ARGUMENT naming fn for a
 *       stale or foreign one. (wgt_kernel_arg is the type of a dispatch's argument.)
 *   wgt_T *wgt_T_out(fn, record): a new handle for a new record; NULL (the record released,
 *       WGT_ERR_LIMIT naming fn) when the table is full. NULL stays NULL.
 *   void wgt_T_handle_release(fn, handle): wgt_T_release over a handle: a stale one is an
 *       error naming fn; NULL is ignored.
 *   uint32_t wgt_T_handles_set_limit(limit): live handles at most (default 1 << 24), for
 *       tests of the limit; returns the old limit. */
#define WGT_SINGLE_KIND_DECLS(T)                                                      \
    int wgt_##T##_handle_arg(const char *fn, const wgt_##T *handle, wgt_##T **record); \
    wgt_##T *wgt_##T##_out(const char *fn, wgt_##T *record);                          \
    void wgt_##T##_handle_release(const char *fn, wgt_##T *handle);                   \
    uint32_t wgt_##T##_handles_set_limit(uint32_t limit);
WGT_SINGLE_KIND_DECLS(kernel)
WGT_SINGLE_KIND_DECLS(graph)
WGT_SINGLE_KIND_DECLS(read)

#endif
