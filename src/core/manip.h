/*
 * Layout helpers of the manipulation ops (manip.c) that their gradient rules
 * (src/autograd/rules_manip.c) share, so forward and backward agree on where entries go.
 */
#ifndef WGT_CORE_MANIP_H
#define WGT_CORE_MANIP_H

#include "node.h"

/* The permutation that moves axis src to dst (both normalized). */
void wgt_moveaxis_perm(int ndim, int src, int dst, int *perm);
/* Positions along the axis of each output entry of a repeat (malloc'd; NULL when out of host
 * memory); *total is their count. count 1: repeats[0] for every entry. */
int32_t *wgt_repeat_positions(int count, const int64_t *repeats, int64_t len, int64_t *total);
/* tile's broadcast view: view_shape interleaves each repeated axis' count (at rep_axes) before
 * its length; out_shape is the result's (max(ndim, nreps) dims). The view's rank, or -1 when
 * it passes WGT_MAX_DIMS. */
int wgt_tile_layout(int ndim, const int64_t *shape, int nreps, const int64_t *reps, int64_t *view_shape,
                    int *rep_axes, int *nrep_axes, int64_t *out_shape);
/* Normalizes and checks the axes of a diagonal; its length and its first element's offset
 * from a's. 0 with the error set when the axes are bad. */
int wgt_diagonal_layout(const char *fn, const wgt_tensor *a, int64_t offset, int axis1, int axis2, int *ax1, int *ax2,
                        int64_t *len, int64_t *start);
/* Row-major positions, in a contiguous tensor of shape, of its diagonal's entries in the
 * order wgt_diagonal gives them (malloc'd; NULL when out of host memory); *count of them. */
int64_t *wgt_diagonal_positions(int ndim, const int64_t *shape, int ax1, int ax2, int64_t offset, int64_t *count);

#endif
