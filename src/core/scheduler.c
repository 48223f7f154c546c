/*
 * Planning recorded nodes (step_run.c runs the steps).
 *
 * A plan is built from nodes in record order (which is already a valid order):
 *   1. Liveness, walking backwards: a node runs only when something needs what it writes
 *      afterwards (a tensor the caller holds, a graph output, or a later node that runs).
 *   2. Fusion: an elementwise node (unary, binary, cast, where) joins the group of an
 *      elementwise producer when it reads that producer's result whole, at its own shape.
 *      The group then runs as one kernel at the position of its last member, so the join is
 *      refused when a node outside the group, between the members, reads a member's result or
 *      writes into a member's input, or when the kernel would need more bindings, outputs or
 *      steps than the backend takes. A member's result is stored only when someone outside
 *      the group needs it. Before the groups, an add of a quantized product's result and an
 *      rms_norm before quantized products fold into the products (epilogue.c, prologue.c).
 *      A whole copy of a member's result into a tensor (an optimizer step's update of a
 *      parameter, eager or in a graph) folds into the group: its kernel stores the result
 *      straight into the copy's target (folds_update says when that keeps every view), and a
 *      whole copy only that group reads is left out, the group reading its source instead
 *      (folds_copy).
 *   3. Steps: one per node that runs alone, one per fused group; each storage notes the last
 *      step that touches it, so a compiled graph can return its memory to the pool there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node.h"
#include "core/dtype_table.h"

#define FUSION_WINDOW 512 /* nodes a group may span: bounds the planning cost */

static int fusible(const wgt_node *n) {
    if (n->partial || n->index_bound) return 0;
    /* The fused kernels load and store the 4- and 2-byte types and bool (the predicates'
     * results and where's conditions, packed whole words at a time as the ops' own kernels
     * do); a cast to or from another narrow type or a 64-bit type runs alone. */
    for (int j = 0; j < n->nargs; j++)
        if (n->args[j].storage && ((wgt_dtype_is_narrow(n->args[j].dtype) && n->args[j].dtype != WGT_BOOL) ||
                                   wgt_dtype_is_64bit(n->args[j].dtype)))
            return 0;
    return n->kind == WGT_NODE_BINARY || n->kind == WGT_NODE_UNARY || n->kind == WGT_NODE_CAST ||
           n->kind == WGT_NODE_WHERE;
}


/* The consumer reads the producer's result whole, element for element at its own shape. */
static int reads_whole(const wgt_operand *arg, const wgt_operand *produced, const wgt_operand *consumer_out) {
    if (arg->ndim != consumer_out->ndim || produced->ndim != arg->ndim || arg->offset != produced->offset ||
        produced->offset != 0)
        return 0;
    int64_t stride = 1;
    for (int d = arg->ndim - 1; d >= 0; d--) {
        if (arg->shape[d] != consumer_out->shape[d] || produced->shape[d] != arg->shape[d]) return 0;
        if (arg->shape[d] != 1 && arg->strides[d] != stride) return 0;
        stride *= arg->shape[d];
    }
    return 1;
}

static int same_operand(const wgt_operand *a, const wgt_operand *b) {
    if (a->storage != b->storage || a->dtype != b->dtype || a->ndim != b->ndim || a->offset != b->offset) return 0;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d] || a->strides[d] != b->strides[d]) return 0;
    return 1;
}

typedef struct {
    wgt_node *const *nodes;
    int n;
    const char *live;
    int *group;    /* per node: its group's id (the first member's index), or -1 */
    int max_buffers;
    wgt_needed_fn foldable;
    void *arg;
    int *stored_in; /* per node: the in-place update that stores its result (see folds_update), or -1 */
    char *copy_read;  /* per node: a copy whose readers read its source instead (see folds_copy) */
} planner;

/* The operand a fused kernel reads for op: where op reads the result of a copy left out
 * (folds_copy), the same elements of the copy's source. */
static wgt_operand leaf_of(const planner *p, const wgt_operand *op) {
    wgt_operand r = *op;
    wgt_storage *s = op->storage;
    if (s && s->producer_index >= 0 && p->copy_read[s->producer_index])
        r.storage = p->nodes[s->producer_index]->args[1].storage;
    return r;
}

/* A leaf whose one element is known on the host now and cannot change before the kernel
 * runs: it becomes a constant of the fused kernel (a uniform, not a binding and a load). A
 * value that depends on an unread index check stays an input, so its taint reaches the
 * kernel's outputs. */
static int is_constant(const planner *p, const wgt_operand *op) {
    wgt_storage *s = op->storage;
    if (!s || s->symbolic || !s->host_valid || !s->host || s->pending_writers || s->check_mask || !p->foldable ||
        !p->foldable(s, p->arg) || wgt_dtype_is_narrow(op->dtype)) /* constants are 2- and 4-byte words */
        return 0;
    for (int d = 0; d < op->ndim; d++)
        if (op->shape[d] != 1 && op->strides[d] != 0) return 0;
    return 1;
}

static uint32_t constant_bits(const wgt_operand *op) {
    const wgt_storage *s = op->storage;
    if (op->dtype == WGT_F16) return ((const uint16_t *)s->host)[op->offset];
    return ((const uint32_t *)s->host)[op->offset];
}

/* Whether arg j of node i is computed inside the group g (and so never loaded). */
static int inlined(const planner *p, int i, int j, int g) {
    const wgt_node *node = p->nodes[i];
    wgt_storage *s = node->args[j].storage;
    if (!s || s->producer_index < 0 || p->group[s->producer_index] != g) return 0;
    return reads_whole(&node->args[j], &p->nodes[s->producer_index]->args[0], &node->args[0]);
}

/* Position of node index i among the sorted members, or -1. */
static int member_position(const int *members, int m, int i) {
    int lo = 0, hi = m - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (members[mid] == i) return mid;
        if (members[mid] < i) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

/* Counts what the kernel for the members (sorted indices) would need; 0 when it is not
 * possible at all (a member reads a member's result other than whole). Called for every
 * join a chain tries, so it is linear in the members (a chain of n ops costs n joins). */
static int group_shape(const planner *p, const int *members, int m, int g, int *ninputs, int *noutputs) {
    wgt_operand leaves[WGT_FUSED_MAX_INPUTS * 4 + WGT_FUSED_MAX_CONSTS];
    int inside[WGT_FUSED_MAX_STEPS + 1] = {0}; /* per member: reads of its result computed in the group */
    int nleaves = 0, nout = 0, nconst = 0;
    for (int k = 0; k < m; k++) {
        const wgt_node *node = p->nodes[members[k]];
        for (int j = 1; j < node->nargs; j++) {
            wgt_storage *s = node->args[j].storage;
            if (inlined(p, members[k], j, g)) {
                int at = member_position(members, m, s->producer_index);
                if (at >= 0) inside[at]++;
                continue;
            }
            if (s && s->producer_index >= 0 && p->group[s->producer_index] == g) return 0;
            int seen = 0;
            for (int q = 0; q < nleaves && !seen; q++) seen = same_operand(&leaves[q], &node->args[j]);
            if (!seen) {
                if (nleaves == (int)(sizeof leaves / sizeof *leaves)) return 0;
                leaves[nleaves++] = node->args[j];
                if (is_constant(p, &node->args[j])) nconst++;
            }
        }
    }
    for (int k = 0; k < m; k++) {
        /* Stored when needed after the plan or read by a node outside the group. */
        wgt_storage *out = p->nodes[members[k]]->args[0].storage;
        if (out->needed || out->readers > inside[k] || k == m - 1) nout++;
    }
    if (nconst > WGT_FUSED_MAX_CONSTS) return 0;
    *ninputs = nleaves - nconst > 0 ? nleaves - nconst : 1; /* a kernel binds at least one input */
    *noutputs = nout;
    return 1;
}

/* Whether running all members at the position of the last one keeps every other node's view. */
static int can_move(const planner *p, const int *members, int m, int g) {
    int first = members[0], last = members[m - 1];
    if (last - first > FUSION_WINDOW) return 0;
    for (int i = first + 1; i < last; i++) {
        if (!p->live[i] || p->group[i] == g) continue;
        const wgt_node *x = p->nodes[i];
        for (int j = 0; j < x->nargs; j++) {
            wgt_storage *s = x->args[j].storage;
            if (!s) continue;
            /* Reads (or overwrites) a member's result before the group would store it. */
            if (s->producer_index >= 0 && s->producer_index < i && p->group[s->producer_index] == g) return 0;
            /* Writes into something a member reads. */
            if (j < x->nwrites && x->partial)
                for (int k = 0; k < m; k++) {
                    const wgt_node *mem = p->nodes[members[k]];
                    if (members[k] >= i) break;
                    for (int a = 1; a < mem->nargs; a++)
                        if (mem->args[a].storage == s) return 0;
                }
        }
    }
    return 1;
}

/* The members of group g, which ends at node last (a group spans at most FUSION_WINDOW). */
static int collect(const planner *p, int g, int last, int *members) {
    int m = 0;
    for (int i = g; i <= last; i++)
        if (p->group[i] == g) members[m++] = i;
    return m;
}

/* Tries to merge node i's group with producer group g (both end at or before i): the merged
 * group takes the smaller id, and the labels go back when the kernel would not work. */
static void try_join(planner *p, int i, int g) {
    int own = p->group[i];
    if (own == g) return;
    int id = own < g ? own : g;
    if (i - id > FUSION_WINDOW) return; /* a group's id is its first member: can_move would refuse */
    int changed[WGT_FUSED_MAX_STEPS + 1], before[WGT_FUSED_MAX_STEPS + 1], nchanged = 0;
    int members[WGT_FUSED_MAX_STEPS + 1], m = 0, ok = 1;
    for (int k = id; k <= i && ok; k++) {
        if (p->group[k] != own && p->group[k] != g) continue;
        if (m == WGT_FUSED_MAX_STEPS) {
            ok = 0;
            break;
        }
        members[m++] = k;
    }
    if (ok)
        for (int q = 0; q < m; q++)
            if (p->group[members[q]] != id) {
                changed[nchanged] = members[q];
                before[nchanged++] = p->group[members[q]];
                p->group[members[q]] = id;
            }
    int nin = 0, nout = 0;
    ok = ok && group_shape(p, members, m, id, &nin, &nout) && nin <= WGT_FUSED_MAX_INPUTS &&
         nout <= WGT_FUSED_MAX_OUTPUTS && nin + nout <= p->max_buffers && can_move(p, members, m, id);
    if (!ok)
        for (int q = 0; q < nchanged; q++) p->group[changed[q]] = before[q];
}

static wgt_fused_kind fused_kind(wgt_node_kind k) {
    return k == WGT_NODE_UNARY ? WGT_FUSED_UNARY
           : k == WGT_NODE_BINARY ? WGT_FUSED_BINARY
           : k == WGT_NODE_CAST   ? WGT_FUSED_CAST
                                  : WGT_FUSED_WHERE;
}

static wgt_fused_kernel *build_kernel(const planner *p, const int *members, int m, int g) {
    wgt_fused_kernel *k = calloc(1, sizeof *k);
    if (!k) return NULL;
    /* Inputs and constants first: step results are numbered after them. */
    wgt_operand consts[WGT_FUSED_MAX_CONSTS];
    for (int s = 0; s < m; s++) {
        const wgt_node *node = p->nodes[members[s]];
        for (int j = 1; j < node->nargs; j++) {
            if (inlined(p, members[s], j, g)) continue;
            const wgt_operand *op = &node->args[j];
            wgt_operand read = leaf_of(p, op);
            int seen = 0;
            for (int q = 0; q < k->ninputs && !seen; q++) seen = same_operand(&k->inputs[q], &read);
            for (int q = 0; q < k->nconsts && !seen; q++) seen = same_operand(&consts[q], op);
            if (seen) continue;
            if (is_constant(p, op) && k->nconsts < WGT_FUSED_MAX_CONSTS) {
                consts[k->nconsts] = *op;
                k->const_dtypes[k->nconsts] = op->dtype;
                k->const_bits[k->nconsts++] = constant_bits(op);
            } else {
                k->inputs[k->ninputs++] = read;
            }
        }
    }
    if (k->ninputs == 0) { /* every leaf was constant: the kernel still binds one */
        k->inputs[k->ninputs++] = consts[0];
        for (int q = 1; q < k->nconsts; q++) {
            consts[q - 1] = consts[q];
            k->const_dtypes[q - 1] = k->const_dtypes[q];
            k->const_bits[q - 1] = k->const_bits[q];
        }
        k->nconsts--;
    }
    k->nsteps = m;
    for (int s = 0; s < m; s++) {
        const wgt_node *node = p->nodes[members[s]];
        wgt_fused_step *step = &k->steps[s];
        step->kind = fused_kind(node->kind);
        step->op = node->op;
        step->dtype = node->args[0].dtype;
        step->params[0] = node->params[0];
        step->params[1] = node->params[1];
        for (int j = 1; j < node->nargs; j++) {
            int value = -1;
            if (inlined(p, members[s], j, g)) {
                for (int q = 0; q < s && value < 0; q++)
                    if (members[q] == node->args[j].storage->producer_index) value = k->ninputs + k->nconsts + q;
            } else {
                wgt_operand read = leaf_of(p, &node->args[j]);
                for (int q = 0; q < k->ninputs && value < 0; q++)
                    if (same_operand(&k->inputs[q], &read)) value = q;
                for (int q = 0; q < k->nconsts && value < 0; q++)
                    if (same_operand(&consts[q], &node->args[j])) value = k->ninputs + q;
            }
            step->args[j - 1] = value;
        }
    }
    for (int s = 0; s < m; s++) {
        wgt_storage *out = p->nodes[members[s]]->args[0].storage;
        int inside = 0;
        for (int q = 0; q < m; q++) {
            const wgt_node *r = p->nodes[members[q]];
            for (int j = 1; j < r->nargs; j++)
                if (r->args[j].storage == out && inlined(p, members[q], j, g)) inside++;
        }
        if (out->needed || out->readers > inside || s == m - 1) {
            int u = p->stored_in[members[s]];
            k->outputs[k->noutputs] = u >= 0 ? p->nodes[u]->args[0] : p->nodes[members[s]]->args[0];
            k->output_steps[k->noutputs++] = s;
        }
    }
    return k;
}

/* Whether op is the whole of a dense tensor starting at element 0. */
static int dense_from_zero(const wgt_operand *op) {
    int64_t stride = 1;
    if (op->offset != 0) return 0;
    for (int k = op->ndim - 1; k >= 0; k--) {
        if (op->shape[k] != 1 && op->strides[k] != stride) return 0;
        stride *= op->shape[k];
    }
    return 1;
}

static int touches(const wgt_node *x, const wgt_storage *s) {
    for (int j = 0; j < x->nargs; j++)
        if (x->args[j].storage == s) return 1;
    return 0;
}

int wgt_node_writes(const wgt_node *n, const wgt_storage *s) {
    for (int j = 0; j < n->nwrites; j++)
        if (n->args[j].storage == s) return 1;
    return 0;
}

/* Whether a fused kernel writing target (a whole dense tensor) at out's shape may read arg, an
 * operand of target's storage, through target's binding: the backends allow it for inputs of
 * the target's 4-byte type read element for element at the kernel's shape (backend.h). */
static int reads_in_place(const wgt_operand *arg, const wgt_operand *target, const wgt_operand *out) {
    return arg->dtype == target->dtype && wgt_dtype_size(target->dtype) == 4 && reads_whole(arg, target, out);
}

/* Whether the whole copy u (dst = src: a compiled graph's in-place update, graph_updates.c,
 * or an eager copy into a tensor, such as an optimizer step writing a parameter) can be
 * stored by the fused kernel that computes src, straight into dst: the copy and its dispatch
 * go. It can when
 *   - src is the whole result of a member of a group of two or more (a group of one runs as
 *     its node, which writes its own result) that nothing else reads outside the group;
 *   - dst is a whole, dense tensor of src's type that no member writes, and that members read,
 *     if at all, element for element at the kernel's shape in a 4-byte type: the backends
 *     read such an input through the output's binding (backend.h), each element before the
 *     invocation that read it stores its new value (an eager step reads the parameter it
 *     updates);
 *   - no node outside the group writes dst between the group's first member and u, nor
 *     reads it between the group's run (at its last member, last) and u, so every other node
 *     sees dst as it would have: the old values before u's place, the new ones after it.
 * gsize: the groups' sizes. Returns the member, or -1. */
static int folds_update(const planner *p, int u, const int *last, const int *gsize) {
    const wgt_node *c = p->nodes[u];
    if (!p->live[u] || c->kind != WGT_NODE_COPY || c->partial || c->index_bound || c->nargs != 2) return -1;
    const wgt_operand *dst = &c->args[0], *src = &c->args[1];
    wgt_storage *d = dst->storage, *s = src->storage;
    if (!d || !s || d == s || s->needed || s->producer_index < 0 || dst->dtype != src->dtype || !dense_from_zero(dst))
        return -1;
    int i = s->producer_index, g = p->group[i];
    if (g < 0 || gsize[g] < 2 || !p->live[i] || last[g] >= u || !reads_whole(src, &p->nodes[i]->args[0], dst))
        return -1;
    int inside = 0;
    for (int k = g; k < u; k++) {
        const wgt_node *m = p->nodes[k];
        if (!p->live[k]) continue;
        if (p->group[k] != g) { /* before the group's run, reading the old values is right */
            if (k > last[g] ? touches(m, d) : wgt_node_writes(m, d)) return -1;
            continue;
        }
        for (int j = 0; j < m->nargs; j++) {
            if (m->args[j].storage == d && (j < m->nwrites || !reads_in_place(&m->args[j], dst, &m->args[0])))
                return -1;
            if (j >= m->nwrites && m->args[j].storage == s && inlined(p, k, j, g)) inside++;
        }
    }
    if (s->readers != inside + 1) return -1; /* u is the one reader outside */
    return i;
}

/* Whether the whole copy r (R = X: a graph's read of a tensor the graph updates, say) can be
 * left out, the fused group g that alone reads R reading the same elements of X instead.
 * Both are dense from element 0 at one shape, so every view of R is that view of X. It can
 * when g has two or more members (its kernel is built here, a lone node keeps its operands),
 * and nothing in the plan writes X but, at most, g itself through an update folded into it
 * (folds_update): X then holds at g's run what the copy took. In that last case g reads X
 * and stores into it in one kernel, which the backend allows for inputs read element for
 * element at the kernel's shape, of X's 4-byte type: every read of R in g must be so.
 * reader_group[r] is the one group reading R (-2: readers outside one group); last and gsize
 * the groups' last members and sizes. */
static int folds_copy(const planner *p, int r, const int *reader_group, const int *last, const int *gsize) {
    const wgt_node *c = p->nodes[r];
    /* A copy that checks indices (one_hot's) has a job beyond its values. */
    if (!p->live[r] || c->kind != WGT_NODE_COPY || c->update || c->partial || c->index_bound || c->nargs != 2) return 0;
    const wgt_operand *dst = &c->args[0], *src = &c->args[1];
    wgt_storage *copy = dst->storage, *x = src->storage;
    int g = reader_group[r];
    if (!copy || !x || copy == x || copy->needed || copy->producer_index != r || copy->writers != 1 || g < 0 ||
        gsize[g] < 2 ||
        dst->dtype != src->dtype || dst->ndim != src->ndim || !dense_from_zero(dst) || !dense_from_zero(src))
        return 0;
    for (int d = 0; d < dst->ndim; d++)
        if (dst->shape[d] != src->shape[d]) return 0;
    int stores_x = 0, in_place = 1; /* whether g may also store into x */
    for (int k = g; k <= last[g]; k++) {
        if (p->group[k] != g) continue;
        const wgt_node *m = p->nodes[k];
        if (p->stored_in[k] >= 0 && p->nodes[p->stored_in[k]]->args[0].storage == x) stores_x = 1;
        for (int j = 1; j < m->nargs; j++)
            if (m->args[j].storage == copy && !reads_in_place(&m->args[j], dst, &m->args[0])) in_place = 0;
    }
    return x->writers <= stores_x && (!stores_x || in_place);
}

void wgt_plan_free(wgt_plan *p) {
    for (int s = 0; s < p->nsteps; s++) {
        free(p->steps[s].fused);
        if (p->steps[s].owns_node) free(p->steps[s].node);
        free(p->steps[s].last_uses);
    }
    free(p->steps);
    free(p->node_step);
    memset(p, 0, sizeof *p);
}

static void each_storage_reset(wgt_node *const *nodes, int n, wgt_needed_fn needed, void *arg) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < nodes[i]->nargs; j++) {
            wgt_storage *s = nodes[i]->args[j].storage;
            if (!s) continue;
            s->needed = needed(s, arg);
            s->live_mark = s->needed;
            s->readers = 0;
            s->writers = 0;
            s->producer_index = -1;
            s->last_step = -1;
        }
}

static void add_last_use(wgt_plan *p, wgt_storage *s, int step) {
    if (s && s->last_step < step) s->last_step = step;
}

wgt_status wgt_plan_build(wgt_context *ctx, wgt_node *const *nodes, int n, wgt_needed_fn needed, void *arg,
                          int allow_fusion, wgt_needed_fn foldable, wgt_plan *out) {
    memset(out, 0, sizeof *out);
    char *live = calloc((size_t)n + 1, 1);
    int *group = malloc(sizeof *group * ((size_t)n + 1)), *last = malloc(sizeof *last * ((size_t)n + 1));
    int *epi = malloc(sizeof *epi * (2 * (size_t)n + 2)), *stored_in = malloc(sizeof *stored_in * ((size_t)n + 1));
    int *reader_group = malloc(sizeof *reader_group * ((size_t)n + 1)), *gsize = malloc(sizeof *gsize * ((size_t)n + 1));
    char *copy_read = malloc((size_t)n + 1);
    out->node_step = malloc(sizeof *out->node_step * ((size_t)n + 1));
    out->steps = calloc((size_t)n + 1, sizeof *out->steps);
    if (!live || !group || !last || !epi || !stored_in || !reader_group || !gsize || !copy_read || !out->node_step ||
        !out->steps) {
        free(live);
        free(group);
        free(last);
        free(epi);
        free(stored_in), free(reader_group), free(gsize), free(copy_read);
        wgt_plan_free(out);
        return wgt_error(WGT_ERR_OUT_OF_MEMORY, "out of host memory for planning %d recorded ops", n);
    }
    each_storage_reset(nodes, n, needed, arg);

    /* 1. Liveness. */
    for (int i = n - 1; i >= 0; i--) {
        const wgt_node *node = nodes[i];
        live[i] = 0; /* live when something needs any of what it writes */
        for (int j = 0; j < node->nwrites; j++) live[i] |= node->args[j].storage->live_mark != 0;
        if (!live[i]) {
            out->skipped++;
            continue;
        }
        if (!node->partial) /* nothing earlier writes what this node reads */
            for (int j = 0; j < node->nwrites; j++) node->args[j].storage->live_mark = 0;
        for (int j = node->nwrites; j < node->nargs; j++)
            if (node->args[j].storage) node->args[j].storage->live_mark = 1;
        if (node->partial)
            for (int j = 0; j < node->nwrites; j++) node->args[j].storage->live_mark = 1;
    }
    for (int i = 0; i < n; i++) {
        group[i] = -1;
        if (!live[i]) continue;
        const wgt_node *node = nodes[i];
        for (int j = node->nwrites; j < node->nargs; j++)
            if (node->args[j].storage) node->args[j].storage->readers++;
        for (int j = 0; j < node->nwrites; j++) {
            node->args[j].storage->writers++;
            if (node->partial) node->args[j].storage->readers++;
            else node->args[j].storage->producer_index = i;
        }
    }

    /* 2. Fusion. Producer indices are final now: first the adds folded into products
     * (epilogue.c, on every backend), then elementwise groups, which a folded add joins none of. */
    int *pro = epi + n + 1; /* norms folded into products (prologue.c), in epi's allocation */
    if (ctx->fusion) wgt_epilogues_find(nodes, n, live, epi), wgt_prologues_find(nodes, n, live, epi, pro);
    else
        for (int i = 0; i < n; i++) epi[i] = WGT_EPILOGUE_NONE, pro[i] = WGT_PROLOGUE_NONE;
    for (int i = 0; i < n; i++) stored_in[i] = -1, copy_read[i] = 0;
    planner p = {nodes, n, live, group, ctx->backend->max_fused_buffers, foldable, arg, stored_in, copy_read};
    if (allow_fusion && p.max_buffers >= 2)
        for (int i = 0; i < n; i++) {
            if (!live[i] || !fusible(nodes[i]) || epi[i] != WGT_EPILOGUE_NONE) continue;
            group[i] = i;
            for (int j = 1; j < nodes[i]->nargs; j++) {
                wgt_storage *s = nodes[i]->args[j].storage;
                if (!s || s->producer_index < 0 || group[s->producer_index] < 0) continue;
                const wgt_node *prod = nodes[s->producer_index];
                if (!reads_whole(&nodes[i]->args[j], &prod->args[0], &nodes[i]->args[0])) continue;
                try_join(&p, i, group[s->producer_index]);
            }
        }

    /* 3. Steps, each at its last member (found first, so no group is searched past its end). */
    for (int i = 0; i < n; i++)
        if (live[i] && group[i] >= 0) last[group[i]] = i;
    /* In-place updates stored by the kernels computing their values. All are decided on the
     * plan as it was, then applied: an update that folds still counts as touching its
     * destination for the ones after it (two updates of one tensor: the second stays a copy). */
    for (int i = 0; i < n; i++) gsize[i] = 0;
    for (int i = 0; i < n; i++)
        if (live[i] && group[i] >= 0) gsize[group[i]]++;
    int folded = 0;
    for (int u = 0; u < n; u++) {
        int i = folds_update(&p, u, last, gsize);
        if (i >= 0) stored_in[i] = u, folded = 1;
    }
    for (int i = 0; folded && i < n; i++)
        if (stored_in[i] >= 0) live[stored_in[i]] = 0, out->skipped++;
    /* Whole copies read by one fused group only: the group reads the source (folds_copy).
     * First the group reading each copy's result, in one pass. */
    for (int i = 0; i < n; i++) reader_group[i] = -1;
    for (int i = 0; i < n; i++) {
        if (!live[i]) continue;
        for (int j = nodes[i]->nwrites; j < nodes[i]->nargs; j++) {
            wgt_storage *s = nodes[i]->args[j].storage;
            if (!s || s->producer_index < 0 || nodes[s->producer_index]->kind != WGT_NODE_COPY) continue;
            int *rg = &reader_group[s->producer_index];
            if (*rg == -1) *rg = group[i] < 0 ? -2 : group[i];
            else if (*rg != group[i]) *rg = -2;
        }
    }
    for (int i = 0; i < n; i++)
        if (folds_copy(&p, i, reader_group, last, gsize)) copy_read[i] = 1;
    for (int i = 0; i < n; i++)
        if (copy_read[i]) live[i] = 0, out->skipped++;
    wgt_prologues_keep(nodes, n, stored_in, pro);
    int members[WGT_FUSED_MAX_STEPS + 1];
    for (int i = 0; i < n; i++) {
        out->node_step[i] = -1;
        if (!live[i]) continue;
        int g = group[i];
        if (g >= 0 && last[g] != i) continue; /* runs with its group's last member */
        if (epi[i] == WGT_EPILOGUE_FOLDED || pro[i] == WGT_PROLOGUE_FOLDED) continue; /* runs with its add, its products */
        int m = g < 0 ? 1 : collect(&p, g, i, members);
        wgt_step *step = &out->steps[out->nsteps];
        step->members = m;
        if (epi[i] >= 0 || pro[i] >= 0) {
            step->members = 2;
            step->owns_node = 1;
            step->node = epi[i] >= 0 ? wgt_epilogue_node(nodes[epi[i]], nodes[i]) : wgt_prologue_node(nodes[i], nodes[pro[i]]);
            if (!step->node) {
                free(live);
                free(group);
                free(last);
                free(epi);
                free(stored_in), free(reader_group), free(gsize), free(copy_read);
                wgt_plan_free(out);
                return wgt_error(WGT_ERR_OUT_OF_MEMORY, "out of host memory for a product with its add or norm");
            }
            /* A norm's node lives until its last product has run: they read its operands. */
            out->node_step[i] = out->node_step[epi[i] >= 0 ? epi[i] : pro[i]] = out->nsteps;
        } else if (m == 1) {
            step->node = nodes[i];
            out->node_step[i] = out->nsteps;
        } else {
            step->fused = build_kernel(&p, members, m, g);
            if (!step->fused) {
                free(live);
                free(group);
                free(last);
                free(epi);
                free(stored_in), free(reader_group), free(gsize), free(copy_read);
                wgt_plan_free(out);
                return wgt_error(WGT_ERR_OUT_OF_MEMORY, "out of host memory for a fused kernel");
            }
            for (int k = 0; k < m; k++) out->node_step[members[k]] = out->nsteps;
            out->fused += m;
        }
        out->nsteps++;
    }

    /* A folded copy belongs to the step of the kernel that took over its work: its node, which
     * holds what the kernel now reads or writes in its place, is released with that step. */
    for (int i = 0; i < n; i++) {
        if (copy_read[i]) out->node_step[i] = out->node_step[last[reader_group[i]]];
        if (stored_in[i] >= 0) out->node_step[stored_in[i]] = out->node_step[i];
    }

    /* Last uses, for returning memory early. */
    for (int s = 0; s < out->nsteps; s++) {
        wgt_step *step = &out->steps[s];
        if (step->node)
            for (int j = 0; j < step->node->nargs; j++) add_last_use(out, step->node->args[j].storage, s);
        else {
            for (int j = 0; j < step->fused->ninputs; j++) add_last_use(out, step->fused->inputs[j].storage, s);
            for (int j = 0; j < step->fused->noutputs; j++) add_last_use(out, step->fused->outputs[j].storage, s);
        }
    }
    for (int i = 0; i < n; i++) {
        if (!live[i]) continue;
        for (int j = 0; j < nodes[i]->nargs; j++) {
            wgt_storage *s = nodes[i]->args[j].storage;
            if (!s || s->last_step < 0) continue;
            wgt_step *step = &out->steps[s->last_step];
            int seen = 0;
            for (int q = 0; q < step->nlast && !seen; q++) seen = step->last_uses[q] == s;
            if (seen) continue;
            wgt_storage **grown = realloc(step->last_uses, sizeof *grown * ((size_t)step->nlast + 1));
            if (!grown) { /* only an early release is lost */
                out->lost_last_uses = 1;
                continue;
            }
            step->last_uses = grown;
            step->last_uses[step->nlast++] = s;
        }
    }
    free(live);
    free(group);
    free(last);
    free(epi);
    free(stored_in), free(reader_group), free(gsize), free(copy_read);
    return WGT_OK;
}
