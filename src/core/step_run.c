/*
 * Running a plan's steps (scheduler.c builds the plan): each operand bound to its storage
 * (resolved through a compiled graph's bindings where it has them) and made resident, then
 * one backend entry for a node, or the backend's fused kernel for a group; every storage a
 * step writes is marked written on the device and takes the taint of what the step read
 * (index_checks.c).
 */
#include <stdlib.h>
#include <string.h>

#include "node.h"

/* Fills op from its storage (resolved) and makes it resident: whole outputs are allocated
 * without upload, everything else is synced to the device. */
static wgt_status bind_operand(wgt_operand *op, int whole_output, wgt_resolve_fn resolve, void *arg) {
    wgt_storage *s = op->storage;
    if (!s) return WGT_OK;
    int64_t shift = 0;
    wgt_storage *real = resolve ? resolve(s, &shift, arg) : s;
    if (!real) return wgt_last_status() != WGT_OK ? wgt_last_status() : WGT_ERR_INTERNAL;
    op->offset += shift;
    wgt_status st;
    /* A failure the run found on its own (failed_in_run) goes on into what this step writes. */
    if (real->failed && !real->failed_in_run)
        return wgt_error(real->failed, "an input failed earlier: %s",
                         real->failed_message ? real->failed_message : wgt_status_name(real->failed));
    /* A graph's intermediate holds no data between dispatches: destroying its handle ends the
     * handle's use, and the graph recorded before still computes through it, as eager work
     * recorded before a destroy still runs (the destroy flushes it first). */
    if (real->destroyed && !wgt_storage_is_intermediate(real))
        return wgt_error(WGT_ERR_DESTROYED, "a tensor this work reads or writes was destroyed");
    /* A storage of the caller's (a graph binding) keeps what lies outside the view, unless the
     * view is all of it: a graph's output bound to a fresh storage at each dispatch is then
     * allocated as any output is, not zero-filled first (a fill ends the compute pass). */
    if (whole_output &&
        (real == s || wgt_layout_covers(op->ndim, op->shape, op->strides, op->offset, op->dtype, real->nbytes)))
        st = wgt_storage_prepare_output(real);
    else st = wgt_storage_sync_device_now(real);
    if (st != WGT_OK) return st;
    op->host = real->host;
    op->buffer = real->buffer;
    op->storage = real;
    return WGT_OK;
}

/* The first of a step's operands that a check found failed while a run went on (see
 * failed_in_run in tensor.h), or NULL. */
static const wgt_storage *failed_in_run(const wgt_operand *ops, int n) {
    for (int i = 0; i < n; i++)
        if (ops[i].storage && ops[i].storage->failed && ops[i].storage->failed_in_run) return ops[i].storage;
    return NULL;
}

/* What a step wrote from such an operand fails as it does, as its taint would have made it
 * fail at the next synchronisation: the run goes on, and reads report the check. */
static void carry_failure(wgt_storage *s, const wgt_storage *from) {
    if (!s || s->failed || !from) return;
    s->failed = from->failed;
    s->failed_message = from->failed_message ? strdup(from->failed_message) : NULL;
    s->failed_in_run = 1;
}

/* The taint of what a step reads (see index_checks.c): the union of its operands' masks. */
static uint64_t read_mask(const wgt_operand *ops, int n) {
    uint64_t m = 0;
    for (int i = 0; i < n; i++)
        if (ops[i].storage) m |= ops[i].storage->check_mask;
    return m;
}

static wgt_status run_node(wgt_context *ctx, const wgt_node *n, wgt_resolve_fn resolve, void *arg) {
    wgt_operand a[WGT_NODE_MAX_BINDINGS > WGT_NODE_MAX_ARGS ? WGT_NODE_MAX_BINDINGS : WGT_NODE_MAX_ARGS], record;
    memcpy(a, n->args, sizeof *a * (size_t)(n->nargs > WGT_NODE_MAX_ARGS ? n->nargs : WGT_NODE_MAX_ARGS));
    wgt_status st;
    uint64_t bit = 0;
    int shared = 0;
    /* Before binding: taking a slot may read the record, which can fail an input. */
    if (n->index_bound) {
        const wgt_operand *ix = &n->args[n->index_arg];
        int64_t shift = 0;
        const wgt_storage *real = resolve && ix->storage ? resolve(ix->storage, &shift, arg) : ix->storage;
        if ((st = wgt_index_checks_take(ctx, n, real, ix->offset + shift, &record, &bit, &shared)) != WGT_OK) return st;
    }
    for (int i = n->nargs - 1; i >= 0; i--) /* inputs first: syncing them may submit work */
        if ((st = bind_operand(&a[i], i < n->nwrites && !n->partial, resolve, arg)) != WGT_OK) return st;
    wgt_backend *be = ctx->backend;
    if (n->index_bound && !shared) {
        if ((st = be->index_check(be, &a[n->index_arg], n->index_bound < 0 ? 0 : n->index_bound, &record)) != WGT_OK)
            return st;
        wgt_index_checks_ran(ctx, &record);
    }
    switch (n->kind) {
    case WGT_NODE_COPY: st = be->copy(be, &a[0], &a[1]); break;
    case WGT_NODE_BINARY: st = be->binary(be, (wgt_binary_op)n->op, &a[0], &a[1], &a[2]); break;
    case WGT_NODE_UNARY: st = be->unary(be, (wgt_unary_op)n->op, &a[0], &a[1], n->params); break;
    case WGT_NODE_CAST: st = be->cast(be, &a[0], &a[1]); break;
    case WGT_NODE_WHERE: st = be->where(be, &a[0], &a[1], &a[2], &a[3]); break;
    case WGT_NODE_REDUCE: st = be->reduce(be, (wgt_reduce_op)n->op, &a[0], &a[1], n->axis, n->params[0]); break;
    case WGT_NODE_CUMSUM: st = be->cumsum(be, &a[0], &a[1], n->axis); break;
    case WGT_NODE_SCAN: st = be->scan(be, (wgt_scan_op)n->op, &a[0], &a[1], n->axis); break;
    case WGT_NODE_MATMUL: st = be->matmul(be, &a[0], &a[1], &a[2]); break;
    case WGT_NODE_ROWS:
        st = be->rows(be, (wgt_rows_op)n->op, &a[0], &a[1], a[2].storage ? &a[2] : NULL, a[3].storage ? &a[3] : NULL,
                      n->params[0]);
        break;
    case WGT_NODE_WRITE_BOX: st = be->write_box(be, &a[0], n->box, &a[1]); break;
    case WGT_NODE_PAD: st = be->pad(be, &a[0], &a[1], n->box, n->bits); break;
    case WGT_NODE_GATHER_ROWS: st = be->gather_rows(be, &a[0], &a[1], &a[2]); break;
    case WGT_NODE_INDEX_NARROW: st = be->index_narrow(be, &a[0], &a[1], (int64_t)n->bits); break;
    case WGT_NODE_SET_ROWS:
        st = n->op ? be->scatter_add_rows(be, &a[0], &a[1], &a[2]) : be->set_rows(be, &a[0], &a[1], &a[2]);
        break;
    case WGT_NODE_ATTENTION:
        st = be->attention(be, &a[0], &a[1], &a[2], &a[3], a[4].storage ? &a[4] : NULL, n->axis, n->params[0]);
        break;
    case WGT_NODE_ROPE: st = be->rope(be, &a[0], &a[1], a[2].storage ? &a[2] : NULL, &a[3]); break;
    case WGT_NODE_QUANTIZE: st = be->quantize(be, &a[0], &a[1]); break;
    case WGT_NODE_DEQUANTIZE: st = be->dequantize(be, &a[0], &a[1], a[2].storage ? &a[2] : NULL); break;
    case WGT_NODE_MATMUL_QUANTIZED: {
        wgt_quant_norm norm = {n->nargs > 4 && a[4].storage ? &a[4] : NULL, n->params[0]}; /* 5 operands: prologue.c */
        st = be->matmul_quantized(be, &a[0], &a[1], &a[2], n->nargs > 3 && a[3].storage ? &a[3] : NULL,
                                  n->nargs > 4 ? &norm : NULL, n->op);
        break;
    }
    case WGT_NODE_CONV: st = be->conv(be, &a[0], &a[1], &a[2], n->box); break;
    case WGT_NODE_SORT: st = be->sort_rows(be, &a[0], &a[1], &a[2], n->op); break;
    case WGT_NODE_SEARCHSORTED: st = be->searchsorted(be, &a[0], &a[1], &a[2], n->op); break;
    case WGT_NODE_RANDOM: {
        wgt_random_params p = {(wgt_random_kind)n->op, (uint64_t)n->box[0], (float)n->params[0], (float)n->params[1], 0,
                               n->bits, (uint64_t)n->box[1]};
        memcpy(&p.c, &n->box[2], sizeof p.c);
        st = be->random(be, &a[0], a[1].storage ? &a[1] : NULL, &p);
        break;
    }
    case WGT_NODE_USER_KERNEL: st = wgt_user_call_run(be, n->user, a, n->nargs); break;
    default: st = wgt_error(WGT_ERR_INTERNAL, "unknown node kind %d", (int)n->kind);
    }
    if (st == WGT_OK) {
        /* A box as large as its destination (a staged graph output copied back) replaces it. */
        int whole = !n->partial || (n->kind == WGT_NODE_WRITE_BOX &&
                                    wgt_numel(a[1].ndim, a[1].shape) == wgt_numel(a[0].ndim, a[0].shape));
        uint64_t mask = read_mask(a + n->nwrites, n->nargs - n->nwrites) | bit;
        const wgt_storage *failed = failed_in_run(a + n->nwrites, n->nargs - n->nwrites);
        for (int i = 0; i < n->nwrites; i++) {
            wgt_storage_mark_device_written(a[i].storage);
            wgt_index_checks_written(a[i].storage, mask, whole);
            carry_failure(a[i].storage, failed);
        }
    }
    return st;
}

static wgt_status run_fused(wgt_context *ctx, const wgt_fused_kernel *src, wgt_resolve_fn resolve, void *arg) {
    wgt_fused_kernel k = *src;
    wgt_status st;
    for (int i = 0; i < k.ninputs; i++)
        if ((st = bind_operand(&k.inputs[i], 0, resolve, arg)) != WGT_OK) return st;
    for (int i = 0; i < k.noutputs; i++) {
        /* An output the kernel also reads (an update in place) keeps its values until then. */
        int read = 0;
        for (int j = 0; j < src->ninputs; j++) read |= src->inputs[j].storage == src->outputs[i].storage;
        if ((st = bind_operand(&k.outputs[i], !read, resolve, arg)) != WGT_OK) return st;
    }
    st = ctx->backend->fused(ctx->backend, &k);
    uint64_t mask = read_mask(k.inputs, k.ninputs);
    const wgt_storage *failed = failed_in_run(k.inputs, k.ninputs);
    if (st == WGT_OK)
        for (int i = 0; i < k.noutputs; i++) {
            wgt_storage_mark_device_written(k.outputs[i].storage);
            wgt_index_checks_written(k.outputs[i].storage, mask, 1);
            carry_failure(k.outputs[i].storage, failed);
        }
    return st;
}

wgt_status wgt_step_run(wgt_context *ctx, const wgt_step *step, wgt_resolve_fn resolve, void *arg) {
    wgt_status st = wgt_check_context("running recorded work", ctx);
    if (st != WGT_OK) return st;
    return step->node ? run_node(ctx, step->node, resolve, arg) : run_fused(ctx, step->fused, resolve, arg);
}
