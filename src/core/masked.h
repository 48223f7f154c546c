/*
 * masked_select's positions (masked.c), shared with its gradient rule.
 */
#ifndef WGT_CORE_MASKED_H
#define WGT_CORE_MASKED_H

#include "node.h"

/* i32 [k]: the row-major positions in a's shape where mask (broadcast to it) is nonzero,
 * read from the mask's values (a synchronisation when they are still to be computed). */
wgt_tensor *wgt_masked_positions(const char *fn, wgt_tensor *a, wgt_tensor *mask);

#endif
