/*
 * The indexing pieces (index_types.c, indexing.c) that other op files build on: scatter.c's
 * take, scatter and index_add check and gather indices exactly as gather_rows and
 * index_select do, and every op taking an index tensor checks and narrows it here.
 */
#ifndef WGT_CORE_INDEXING_H
#define WGT_CORE_INDEXING_H

#include "node.h"

/* ---- index_types.c ---- */
/* wgt_check_tensor for an index operand named name: WGT_ERR_DTYPE unless it is i32, u32,
 * i64 or u64. */
wgt_status wgt_check_index_tensor(const char *fn, const char *name, const wgt_tensor *indices);
/* Indices of 32 bits for the kernels: i32 and u32 indices themselves (a new reference); i64
 * and u64 ones narrowed to a u32 tensor of their shape, their values checked against
 * [0, bound) at the call when they are on the host (the error naming the 64-bit value), else
 * on the device (the u32 value of a bad one is then 0xffffffff). NULL: the error is set. */
wgt_tensor *wgt_index_narrow(const char *fn, wgt_tensor *indices, int64_t bound, const char *unit);
/* Checks the indices at the call where their values are on the host already (no pending
 * writer: checking costs no flush and no wait) and reports the first (row-major) outside
 * [0, bound); `unit` names what is counted ("rows", "classes"). Other indices (computed by
 * pending work, or from graph inputs) are left to the device: *deferred is set, and the node
 * checks them when it runs (index_checks.c). */
wgt_status wgt_check_index_values(const char *fn, wgt_tensor *indices, int64_t bound, const char *unit,
                                  int *deferred);
/* Indices with the negative ones counted from the end, as NumPy and the array API count
 * them in take and take_along_axis: a value v in [-bound, 0) becomes v + bound, every other
 * value is kept (so the op's check still refuses, and names, one out of range). i32 and i64
 * values (i64 when i32 cannot hold bound - 1); unsigned indices are returned as they are.
 * Values on the host are wrapped on the host; others lazily, by ops. A new reference, or
 * NULL with the error set. */
wgt_tensor *wgt_wrap_negative_indices(const char *fn, wgt_tensor *indices, int64_t bound);
/* ---- indexing.c ---- */
/* A copy of indices, of the same shape, whose values are checked against [0, bound) when it
 * runs: for ops composed of others that have no check of their own (one_hot's comparisons,
 * the linear positions of take_along_axis and scatter). */
wgt_tensor *wgt_checked_indices(const char *fn, wgt_tensor *indices, int64_t bound);
/* out [indices..., row...] = table[indices[i]] for a table of rank >= 1; fn names the public
 * function in messages, unit what dimension 0 counts. trusted: the caller has checked the
 * values already (or made them from checked ones), so they are not checked again. */
wgt_tensor *wgt_index_gather(const char *fn, const char *unit, wgt_tensor *table, wgt_tensor *indices, int trusted);
/* a's entries at indices (any shape) along axis ax (normalized): a view of shape
 * a[:ax] + indices + a[ax+1:] (numpy.take); arguments already checked but the values. */
wgt_tensor *wgt_take_along(const char *fn, wgt_tensor *a, int ax, wgt_tensor *indices);

#endif
