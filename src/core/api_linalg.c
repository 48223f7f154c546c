/*
 * The public entry points of the decompositions that hand back several tensors (qr, slogdet,
 * svd, eigh), written by hand as api_special.c's are (scripts/gen_api.py lists them in
 * SPECIAL): the argument's handle becomes a record, the results become handles, each through
 * its gradient rule (src/autograd/rules_linalg.c): tracked, a plain tensor (slogdet's sign, piecewise
 * constant) or marked as having none, so that a backward pass reaching it fails naming the op.
 */
#define WGT_API_PROTOTYPES_ONLY /* the record-level names, without renaming ours */
#include "api_names.h"
#include "handles.h"
#include "tensor.h"
#include "autograd/rules.h"

/* The count results *where[i] of fn(a) (records) through their rules and into handles; on
 * failure none is handed out. */
static wgt_status results(const char *fn, wgt_tensor *a, int count, wgt_tensor **const *where) {
    wgt_tensor *r[3];
    wgt_status st = WGT_OK;
    for (int i = 0; i < count; i++) r[i] = *where[i], *where[i] = NULL;
    for (int i = 0; i < count && st == WGT_OK; i++)
        if (!(r[i] = wgt_ag_decomp_rule(fn, i, a, r))) st = wgt_last_status();
    for (int i = 0; i < count && st == WGT_OK; i++)
        if (!(*where[i] = wgt_handle_out(fn, r[i]))) {
            st = wgt_last_status();
            for (int j = 0; j < i; j++) wgt_release(*where[j]), *where[j] = r[j] = NULL;
            r[i] = NULL; /* released by wgt_handle_out */
        }
    if (st != WGT_OK) /* the records not yet handed out */
        for (int i = 0; i < count; i++)
            if (r[i]) wgt_impl_release(r[i]);
    return st;
}

wgt_status wgt_linalg_qr(wgt_tensor *a, int complete, wgt_tensor **q, wgt_tensor **r) {
    wgt_tensor *ra = wgt_handle_arg(a);
    wgt_status st = wgt_impl_linalg_qr(ra, complete, q, r);
    return st != WGT_OK ? st : results("wgt_linalg_qr", ra, 2, (wgt_tensor **const[]){q, r});
}

wgt_status wgt_linalg_slogdet(wgt_tensor *a, wgt_tensor **sign, wgt_tensor **logabsdet) {
    wgt_tensor *ra = wgt_handle_arg(a);
    wgt_status st = wgt_impl_linalg_slogdet(ra, sign, logabsdet);
    return st != WGT_OK ? st : results("wgt_linalg_slogdet", ra, 2, (wgt_tensor **const[]){sign, logabsdet});
}

wgt_status wgt_linalg_svd(wgt_tensor *a, int full_matrices, wgt_tensor **u, wgt_tensor **s, wgt_tensor **vh) {
    wgt_tensor *ra = wgt_handle_arg(a);
    wgt_status st = wgt_impl_linalg_svd(ra, full_matrices, u, s, vh);
    return st != WGT_OK ? st : results("wgt_linalg_svd", ra, 3, (wgt_tensor **const[]){u, s, vh});
}

wgt_status wgt_linalg_eigh(wgt_tensor *a, wgt_tensor **eigenvalues, wgt_tensor **eigenvectors) {
    wgt_tensor *ra = wgt_handle_arg(a);
    wgt_status st = wgt_impl_linalg_eigh(ra, eigenvalues, eigenvectors);
    return st != WGT_OK ? st : results("wgt_linalg_eigh", ra, 2, (wgt_tensor **const[]){eigenvalues, eigenvectors});
}
