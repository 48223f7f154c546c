/*
 * The public entry points over tensor handles that api.c cannot generate: those taking
 * several tensors at once (arrays, bindings), handing several back (wgt_split), or ending a
 * handle (wgt_release and the releases of contexts, kernels, graphs and read requests). Each turns the handles into records in a copy of the caller's array
 * and leaves the checks, and their messages, to the function it calls.
 */
#include <stdlib.h>
#include <string.h>

#define WGT_API_PROTOTYPES_ONLY /* the record-level names, without renaming ours */
#include "api_names.h"
#include "handles.h"
#include "tensor.h"
#include "autograd/rules.h"

enum { ON_STACK = 16 };

/* Records of n handles, in buf when it fits, else in memory the caller frees (*heap). The
 * caller's own array goes through unchanged where it cannot be read (n < 1 or NULL): the
 * function called reports that. NULL with an error when out of memory. */
static wgt_tensor *const *records_of(const char *fn, int n, wgt_tensor *const *handles, wgt_tensor **buf,
                                     wgt_tensor ***heap) {
    *heap = NULL;
    if (n < 1 || !handles) return handles;
    wgt_tensor **r = n <= ON_STACK ? buf : (*heap = malloc((size_t)n * sizeof *r));
    if (!r) {
        wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory for %d tensors", fn, n);
        return NULL;
    }
    for (int i = 0; i < n; i++) r[i] = wgt_handle_arg(handles[i]);
    return r;
}

static const wgt_binding *bindings_of(const char *fn, int n, const wgt_binding *b, wgt_binding *buf,
                                      wgt_binding **heap) {
    *heap = NULL;
    if (n < 1 || !b) return b;
    wgt_binding *r = n <= ON_STACK ? buf : (*heap = malloc((size_t)n * sizeof *r));
    if (!r) {
        wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory for %d bindings", fn, n);
        return NULL;
    }
    for (int i = 0; i < n; i++) r[i] = (wgt_binding){b[i].name, wgt_handle_arg(b[i].tensor)};
    return r;
}

void wgt_release(wgt_tensor *t) {
    if (t) wgt_handle_release("wgt_release", t);
}

void wgt_context_release(wgt_context *ctx) { wgt_context_handle_release("wgt_context_release", ctx); }

void wgt_kernel_release(wgt_kernel *k) { wgt_kernel_handle_release("wgt_kernel_release", k); }

void wgt_graph_release(wgt_graph *g) { wgt_graph_handle_release("wgt_graph_release", g); }

void wgt_read_release(wgt_read *r) { wgt_read_handle_release("wgt_read_release", r); }

wgt_status wgt_eval(int n, wgt_tensor *const *tensors) {
    wgt_tensor *buf[ON_STACK], **heap;
    wgt_tensor *const *r = records_of("wgt_eval", n, tensors, buf, &heap);
    wgt_status st = r || !tensors ? wgt_impl_eval(n, r) : wgt_last_status();
    free(heap);
    return st;
}

static wgt_tensor *join(const char *fn, wgt_tensor *(*impl)(wgt_tensor *const *, int, int), wgt_tensor *const *tensors,
                        int count, int axis, int stacking) {
    wgt_tensor *buf[ON_STACK], **heap;
    wgt_tensor *const *r = records_of(fn, count, tensors, buf, &heap);
    wgt_tensor *out = r || !tensors ? wgt_handle_out(fn, wgt_ag_join_rule(fn, impl(r, count, axis), r, count, axis, stacking))
                                    : NULL;
    free(heap);
    return out;
}

wgt_tensor *wgt_concat(wgt_tensor *const *tensors, int count, int axis) {
    return join("wgt_concat", wgt_impl_concat, tensors, count, axis, 0);
}

wgt_tensor *wgt_stack(wgt_tensor *const *tensors, int count, int axis) {
    return join("wgt_stack", wgt_impl_stack, tensors, count, axis, 1);
}

/* Turns the records in out[0..n-1] (NULL entries stay NULL) into handles; when the table is
 * full, hands back nothing: every entry is released and set to NULL. */
static wgt_status hand_out(const char *fn, int n, wgt_tensor **out) {
    for (int i = 0; i < n; i++)
        if (out[i] && !(out[i] = wgt_handle_out(fn, out[i]))) {
            wgt_status st = wgt_last_status();
            for (int j = 0; j < i; j++) wgt_release(out[j]);
            for (int j = i + 1; j < n; j++)
                if (out[j]) wgt_impl_release(out[j]);
            for (int j = 0; j < n; j++) out[j] = NULL;
            return st;
        }
    return WGT_OK;
}

wgt_status wgt_split(wgt_tensor *a, int axis, int count, const int64_t *sizes, wgt_tensor **out) {
    wgt_tensor *ra = wgt_handle_arg(a);
    wgt_status st = wgt_impl_split(ra, axis, count, sizes, out);
    if (st != WGT_OK) return st;
    int64_t start = 0;
    for (int i = 0; i < count; start += sizes[i], i++)
        if (!(out[i] = wgt_ag_split_piece(out[i], ra, axis, start))) { /* out of host memory: hand back nothing */
            st = wgt_last_status();
            for (int j = 0; j < count; j++) {
                if (j != i) wgt_impl_release(out[j]);
                out[j] = NULL;
            }
            return st;
        }
    return hand_out("wgt_split", count, out);
}

wgt_graph *wgt_graph_build(wgt_context *ctx, int n_outputs, const wgt_binding *outputs) {
    wgt_context *record;
    if (!wgt_context_arg("wgt_graph_build", ctx, &record)) return NULL;
    wgt_binding buf[ON_STACK], *heap;
    const wgt_binding *r = bindings_of("wgt_graph_build", n_outputs, outputs, buf, &heap);
    wgt_graph *g = r || !outputs ? wgt_graph_out("wgt_graph_build", wgt_impl_graph_build(record, n_outputs, r)) : NULL;
    free(heap);
    return g;
}

wgt_status wgt_graph_dispatch(wgt_graph *g, int n_inputs, const wgt_binding *inputs, int n_outputs,
                              const wgt_binding *outputs) {
    static const char fn[] = "wgt_graph_dispatch";
    wgt_graph *rg;
    if (!wgt_graph_handle_arg(fn, g, &rg)) return wgt_last_status();
    wgt_binding ibuf[ON_STACK], obuf[ON_STACK], *iheap, *oheap = NULL;
    const wgt_binding *in = bindings_of(fn, n_inputs, inputs, ibuf, &iheap);
    const wgt_binding *out = in || !inputs ? bindings_of(fn, n_outputs, outputs, obuf, &oheap) : NULL;
    wgt_status st = (in || !inputs) && (out || !outputs) ? wgt_impl_graph_dispatch(rg, n_inputs, in, n_outputs, out)
                                                         : wgt_last_status();
    free(iheap);
    free(oheap);
    return st;
}

wgt_status wgt_kernel_dispatch(wgt_kernel *k, int nargs, const wgt_kernel_arg *args, const void *params,
                               size_t params_size, uint32_t groups_x, uint32_t groups_y, uint32_t groups_z,
                               wgt_tensor **outputs) {
    static const char fn[] = "wgt_kernel_dispatch";
    wgt_kernel *rk;
    if (!wgt_kernel_handle_arg(fn, k, &rk)) return wgt_last_status();
    wgt_kernel_arg buf[ON_STACK], *r = NULL;
    if (nargs >= 1 && args) {
        r = nargs <= ON_STACK ? buf : malloc((size_t)nargs * sizeof *r);
        if (!r) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory for %d arguments", fn, nargs);
        for (int i = 0; i < nargs; i++) {
            r[i] = args[i];
            r[i].tensor = wgt_handle_arg(args[i].tensor);
        }
    }
    wgt_status st = wgt_impl_kernel_dispatch(rk, nargs, r ? r : args, params, params_size, groups_x, groups_y,
                                             groups_z, outputs);
    if (r != buf) free(r);
    return st != WGT_OK || !outputs ? st : hand_out(fn, nargs, outputs);
}

wgt_optimizer *wgt_sgd(int n, wgt_tensor *const *params, double lr, double momentum, double weight_decay) {
    wgt_tensor *buf[ON_STACK], **heap;
    wgt_tensor *const *r = records_of("wgt_sgd", n, params, buf, &heap);
    wgt_optimizer *o = r || !params ? wgt_impl_sgd(n, r, lr, momentum, weight_decay) : NULL;
    free(heap);
    return o;
}

wgt_optimizer *wgt_adamw(int n, wgt_tensor *const *params, double lr, double beta1, double beta2, double eps,
                         double weight_decay) {
    wgt_tensor *buf[ON_STACK], **heap;
    wgt_tensor *const *r = records_of("wgt_adamw", n, params, buf, &heap);
    wgt_optimizer *o = r || !params ? wgt_impl_adamw(n, r, lr, beta1, beta2, eps, weight_decay) : NULL;
    free(heap);
    return o;
}

wgt_status wgt_clip_grad_norm(int n, wgt_tensor *const *params, double max_norm, double *norm_out) {
    wgt_tensor *buf[ON_STACK], **heap;
    wgt_tensor *const *r = records_of("wgt_clip_grad_norm", n, params, buf, &heap);
    wgt_status st = r || !params ? wgt_impl_clip_grad_norm(n, r, max_norm, norm_out) : wgt_last_status();
    free(heap);
    return st;
}

wgt_status wgt_save_safetensors(const char *path, int n, const char *const *names, wgt_tensor *const *tensors) {
    wgt_tensor *buf[ON_STACK], **heap;
    wgt_tensor *const *r = records_of("wgt_save_safetensors", n, tensors, buf, &heap);
    wgt_status st = r || !tensors ? wgt_impl_save_safetensors(path, n, names, r) : wgt_last_status();
    free(heap);
    return st;
}

wgt_tensor *wgt_einsum(const char *subscripts, int count, wgt_tensor *const *operands) {
    static const char fn[] = "wgt_einsum";
    wgt_tensor *buf[ON_STACK], **heap;
    wgt_tensor *const *r = records_of(fn, count, operands, buf, &heap);
    wgt_tensor *out = r || !operands ? wgt_handle_out(fn, wgt_ag_einsum_rule(wgt_impl_einsum(subscripts, count, r), subscripts, count, r))
                                     : NULL;
    free(heap);
    return out;
}

/* Several results of one tensor argument (top-k, unique, nonzero): each marked as having no
 * gradient (wgt_ag_untracked) and turned into a handle; on failure none is handed out. */
static wgt_status hand_out_untracked(const char *fn, wgt_tensor *arg, int n, wgt_tensor **out) {
    wgt_status st = WGT_OK;
    for (int i = 0; i < n; i++)
        if (out[i] && !(out[i] = wgt_ag_untracked(fn, out[i], 1, &arg)) && st == WGT_OK) st = wgt_last_status();
    if (st != WGT_OK) {
        for (int i = 0; i < n; i++) {
            if (out[i]) wgt_impl_release(out[i]);
            out[i] = NULL;
        }
        return st;
    }
    return hand_out(fn, n, out);
}

wgt_status wgt_topk(wgt_tensor *a, int64_t k, int axis, int largest, int sorted, wgt_tensor **values,
                    wgt_tensor **indices) {
    wgt_tensor *ra = wgt_handle_arg(a), *out[2];
    wgt_status st = wgt_impl_topk(ra, k, axis, largest, sorted, values, indices);
    if (st != WGT_OK) return st;
    /* The values have a gradient (gathered at the indices); the indices are marked as having none. */
    wgt_tensor *v = *values, *i = *indices;
    *values = *indices = NULL;
    if (!(out[0] = wgt_ag_topk_rule(v, i, ra, axis))) { /* v released */
        st = wgt_last_status();
        wgt_impl_release(i);
        return st;
    }
    if (!(out[1] = wgt_ag_untracked("wgt_topk", i, 1, &ra))) { /* i released */
        st = wgt_last_status();
        wgt_impl_release(out[0]);
        return st;
    }
    st = hand_out("wgt_topk", 2, out);
    *values = out[0];
    *indices = out[1];
    return st;
}

wgt_status wgt_unique(wgt_tensor *a, wgt_tensor **values, wgt_tensor **indices, wgt_tensor **inverse,
                      wgt_tensor **counts) {
    wgt_tensor *ra = wgt_handle_arg(a), **where[4] = {values, indices, inverse, counts}, *out[4];
    wgt_status st = wgt_impl_unique(ra, values, indices, inverse, counts);
    if (st != WGT_OK) return st;
    for (int i = 0; i < 4; i++) out[i] = where[i] ? *where[i] : NULL;
    st = hand_out_untracked("wgt_unique", ra, 4, out);
    for (int i = 0; i < 4; i++)
        if (where[i]) *where[i] = out[i];
    return st;
}

wgt_status wgt_nonzero(wgt_tensor *a, wgt_tensor **out) {
    wgt_tensor *ra = wgt_handle_arg(a);
    wgt_status st = wgt_impl_nonzero(ra, out);
    return st != WGT_OK ? st : hand_out_untracked("wgt_nonzero", ra, ra ? wgt_impl_tensor_ndim(ra) : 0, out);
}
