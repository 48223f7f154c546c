/* The labelled contraction that tensordot, vecdot, outer and einsum share (contract.c). */
#ifndef WGT_CONTRACT_H
#define WGT_CONTRACT_H

#include "node.h"

/* Labels name dimensions: einsum's letters are their character codes, other labels (ellipsis
 * dimensions, tensordot's axes) are any other values below WGT_LABELS. */
#define WGT_LABELS 512

typedef struct wgt_labelled {
    wgt_tensor *t; /* owned: one reference */
    int labels[WGT_MAX_DIMS];
} wgt_labelled;

/* Contracts a with b (both consumed: their references released): labels of one operand that
 * keep[] does not flag are summed out of it, labels of both that keep[] flags are batch
 * dimensions, labels of both it does not flag are contracted by one matmul. The result is
 * labelled [batch..., a's own kept..., b's own kept...]. A label of length 1 in one operand
 * broadcasts against the other's. Both operands are of one type (a float or a backend's
 * integer type: wgt_contract_widen) and context;
 * NULL result with the error set (fn names the public function). */
wgt_labelled wgt_contract_pair(const char *fn, wgt_labelled a, wgt_labelled b, const unsigned char *keep);

/* Sums out of x every label keep[] does not flag (x consumed). */
wgt_labelled wgt_contract_sum_out(wgt_labelled x, const unsigned char *keep);

/* x with its dimensions in the order of labels (nd of them, each one of x's), row-major: a
 * fresh tensor unless x already is in that order (x consumed). */
wgt_tensor *wgt_contract_finish(wgt_labelled x, int nd, const int *labels);

/* A contraction of one or two operands as labels: what the public ops are planned into, and
 * what their gradients are computed from. */
typedef struct wgt_contract_plan {
    int nops;
    int labels[2][WGT_MAX_DIMS]; /* of each operand's dimensions */
    int nout;
    int out[WGT_MAX_DIMS];       /* of the result's dimensions, in order */
} wgt_contract_plan;

/* The plans of the public ops, validating their arguments (errors name the public function). */
wgt_status wgt_tensordot_plan(wgt_tensor *a, wgt_tensor *b, int naxes, const int *axes_a, const int *axes_b,
                              wgt_contract_plan *p);
wgt_status wgt_vecdot_plan(wgt_tensor *a, wgt_tensor *b, int axis, wgt_contract_plan *p);
wgt_status wgt_outer_plan(wgt_tensor *a, wgt_tensor *b, wgt_contract_plan *p);
/* einsum's plan where it has one: at most two operands and no repeated letter (a diagonal);
 * otherwise *why says which is missing and the status is WGT_ERR_UNAVAILABLE (no error set). */
wgt_status wgt_einsum_plan(const char *subscripts, int count, wgt_tensor *const *operands, wgt_contract_plan *p,
                           const char **why);
/* Runs a plan on its operands (not consumed): a fresh row-major result. */
wgt_tensor *wgt_contract_run(const char *fn, const wgt_contract_plan *p, wgt_tensor *const *ops);

/* The operands' shared checks: tensors, one context, one float type or integer types that
 * promote (wgt_product_type). */
wgt_status wgt_contract_check(const char *fn, int n, wgt_tensor *const *t);
/* The checked operands in the type the backends compute their common type in (new
 * references in wide[0..n), the narrow integers widened to i32), and that common type, the
 * result's, in *result. The error status with nothing held on failure. */
wgt_status wgt_contract_widen(int n, wgt_tensor *const *t, wgt_tensor **wide, wgt_dtype *result);

#endif
