/*
 * Index checks on the device. Indices whose values are not on the host when their op is
 * recorded (computed by pending work: an argmax feeding an embedding) or that a compiled
 * graph's node reads at each dispatch are not read back to be checked: that would flush the
 * graph and wait for the device at every such op. Instead each checked node, when it runs,
 * takes a slot of the context's check record (four u32 words: the first bad position, its
 * value's low and high words (an i64 or u64 index needs both to be named in the message) and
 * one unused, written by the backend's index_check in order with the other work), and the kernels
 * that use the indices keep out of bounds on their own (a gather writes zero rows, a
 * set_rows writes nothing). The record is read at the next synchronisation, together with
 * the data that synchronisation reads.
 *
 * Until then the values a failed check produced may already feed later work, so a storage
 * written by a step carries a taint mask: the bits (slot modulo 64) of the unread checks its
 * value depends on, the union of its inputs' masks and the step's own slot. When the record
 * is read, every storage whose mask meets a failed slot's bit is marked failed with that
 * check's message (a bit shared by two slots can only make a storage fail that depended on
 * a check: never the other way), and every mask is cleared. Storages with a mask are linked
 * on the context's list, so reading the record visits only them, and a released storage
 * unlinks itself.
 *
 * Within one run of steps (a flush, or a graph's dispatch) nodes often check the same index
 * values against the same bound: a decoding step writes every layer's keys and values at one
 * position. Such a node shares the slot of the first one (the same values give the same
 * verdict and, as the function, index shape and bound match too, the same message) and no
 * check runs for it: one dispatch per step instead of one per write. A slot is shared only
 * while the record has not been read since it was taken and nothing in the run has written
 * the index storage; a new run starts with none shared (the caller may have written its
 * tensors in between).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node.h"

#define SLOTS 1024u
#define NONE 0xffffffffu
#define SLOT_WORDS 4u
#define SHARED 16u

/* A check taken in the current run that a node with the same index operand and bound may
 * share (see above). */
typedef struct {
    const wgt_storage *storage; /* the index operand as resolved, NULL: no entry */
    int64_t offset;
    int ndim;
    int64_t shape[WGT_MAX_DIMS], strides[WGT_MAX_DIMS];
    uint32_t slot;
} shared_check;

typedef struct {
    const char *fn;
    int64_t bound;
    wgt_dtype dtype;
    int ndim;
    int64_t shape[WGT_MAX_DIMS];
} slot_info;

struct wgt_index_checks {
    /* The record, the context's own memory (backend context_memory_create): a device buffer,
     * or host memory on host-resident backends. Outside the pool, so never in the stats. */
    wgt_buffer *buffer;
    uint32_t *host;
    uint32_t used;      /* slots taken since the record was last read */
    wgt_pending_read *reading; /* begun, not finished */
    uint32_t reading_slots;
    wgt_storage *tainted; /* storages with a non-zero check_mask */
    slot_info slots[SLOTS];
    shared_check shared[SHARED]; /* the run's checks others may share, the oldest replaced */
    uint32_t nshared_taken;      /* entries filled so far (mod SHARED gives the next) */
};

int wgt_index_checks_unread(const wgt_context *ctx) { return ctx->index_checks && ctx->index_checks->used > 0; }

static const char *unit_of(const char *fn) {
    if (!strcmp(fn, "wgt_one_hot") || !strcmp(fn, "wgt_cross_entropy")) return "classes";
    if (!strcmp(fn, "wgt_index_select") || !strcmp(fn, "wgt_take") || !strcmp(fn, "wgt_take_along_axis") ||
        !strcmp(fn, "wgt_scatter") || !strcmp(fn, "wgt_index_add"))
        return "entries along the axis";
    return "rows";
}

/* The one-line message for an index outside [0, bound) ([-bound, bound) for take and
 * take_along_axis), naming its position in the caller's index shape (pos is row-major); v's
 * bits are read as unsigned when is_unsigned (a u64 index past 2^63 is named as it is, not as
 * a negative number). */
static void format_index_error(char *buf, size_t size, const char *fn, int64_t v, int is_unsigned, int ndim,
                               const int64_t *shape, int64_t pos, int64_t bound, const char *unit) {
    int64_t at[WGT_MAX_DIMS];
    for (int d = ndim - 1; d >= 0; d--) {
        at[d] = shape[d] ? pos % shape[d] : 0;
        pos = shape[d] ? pos / shape[d] : 0;
    }
    char where[256], valid[64];
    wgt_format_shape(where, sizeof where, ndim, at);
    /* take and take_along_axis count negative indices from the end (wgt_wrap_negative_indices). */
    int from_end = !strcmp(fn, "wgt_take") || !strcmp(fn, "wgt_take_along_axis");
    if (bound > 0)
        snprintf(valid, sizeof valid, "valid: %lld..%lld", from_end ? -(long long)bound : 0LL, (long long)(bound - 1));
    else snprintf(valid, sizeof valid, "there are none to pick");
    char value[32];
    if (is_unsigned) snprintf(value, sizeof value, "%llu", (unsigned long long)v);
    else snprintf(value, sizeof value, "%lld", (long long)v);
    snprintf(buf, size, "%s: index %s at position %s of indices is %s for %lld %s (%s)", fn, value, where,
             !is_unsigned && v < 0 && !from_end ? "negative" : "out of range", (long long)bound, unit, valid);
}

wgt_status wgt_index_error(const char *fn, int64_t v, int is_unsigned, int ndim, const int64_t *shape, int64_t pos,
                           int64_t bound, const char *unit) {
    char message[512];
    format_index_error(message, sizeof message, fn, v, is_unsigned, ndim, shape, pos, bound, unit);
    return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s", message);
}

/* The message of a failed slot (its words: position, value low, value high): the value's
 * bits read as the index type. */
static void slot_message(char *buf, size_t size, const slot_info *info, const uint32_t *slot) {
    uint64_t wide = (uint64_t)slot[1] | (uint64_t)slot[2] << 32;
    int64_t v = info->dtype == WGT_I32 ? (int64_t)(int32_t)slot[1]
              : info->dtype == WGT_U32 ? (int64_t)slot[1]
                                       : (int64_t)wide;
    format_index_error(buf, size, info->fn, v, info->dtype == WGT_U64, info->ndim, info->shape, slot[0],
                       info->bound, unit_of(info->fn));
}

static wgt_status checks_create(wgt_context *ctx) {
    struct wgt_index_checks *c = calloc(1, sizeof *c);
    if (!c) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "out of host memory for the index check record");
    void *host;
    wgt_status st = ctx->backend->context_memory_create(ctx->backend, SLOTS * SLOT_WORDS * 4, &c->buffer, &host);
    c->host = host;
    if (st != WGT_OK) {
        free(c);
        return st;
    }
    ctx->index_checks = c;
    return WGT_OK;
}

/* Drops the run's shareable checks on storage s (NULL: all of them). */
static void unshare(struct wgt_index_checks *c, const wgt_storage *s) {
    for (uint32_t i = 0; i < SHARED; i++)
        if (!s || c->shared[i].storage == s) c->shared[i].storage = NULL;
}

void wgt_index_checks_new_run(wgt_context *ctx) {
    if (ctx->index_checks) unshare(ctx->index_checks, NULL);
}

/* The slot of a check taken earlier in the run on the same values for the same message, or
 * -1. */
static int64_t shared_slot(const struct wgt_index_checks *c, const wgt_node *n, const wgt_storage *real,
                           int64_t offset) {
    const wgt_operand *ix = &n->args[n->index_arg];
    int64_t bound = n->index_bound < 0 ? 0 : n->index_bound;
    for (uint32_t i = 0; i < SHARED; i++) {
        const shared_check *e = &c->shared[i];
        const slot_info *info = &c->slots[e->slot];
        if (e->storage != real || e->offset != offset || e->ndim != ix->ndim ||
            memcmp(e->shape, ix->shape, sizeof e->shape) || memcmp(e->strides, ix->strides, sizeof e->strides) ||
            info->dtype != ix->dtype || info->bound != bound || strcmp(info->fn, n->fn) || info->ndim != n->axis ||
            memcmp(info->shape, n->box, sizeof info->shape))
            continue;
        return e->slot;
    }
    return -1;
}

wgt_status wgt_index_checks_take(wgt_context *ctx, const wgt_node *n, const wgt_storage *real, int64_t offset,
                                 wgt_operand *record, uint64_t *bit, int *shared) {
    wgt_status st;
    if (!ctx->index_checks && (st = checks_create(ctx)) != WGT_OK) return st;
    struct wgt_index_checks *c = ctx->index_checks;
    int64_t old = real ? shared_slot(c, n, real, offset) : -1;
    *shared = old >= 0;
    if (old >= 0) {
        *bit = (uint64_t)1 << (old % 64);
        return WGT_OK;
    }
    /* A read of the record still in flight (an asynchronous read's) ends first: reading
     * clears every storage's taint, which must not take that of slots it did not read. */
    if (c->reading_slots && (st = wgt_index_checks_finish(ctx, 0)) != WGT_OK) return st;
    if (c->used == SLOTS && (st = wgt_index_checks_read(ctx, 0)) != WGT_OK) return st;
    uint32_t k = c->used++;
    slot_info *info = &c->slots[k];
    info->fn = n->fn;
    info->bound = n->index_bound < 0 ? 0 : n->index_bound;
    info->dtype = n->args[n->index_arg].dtype;
    info->ndim = n->axis;
    memcpy(info->shape, n->box, sizeof info->shape);
    if (real) {
        const wgt_operand *ix = &n->args[n->index_arg];
        shared_check *e = &c->shared[c->nshared_taken++ % SHARED];
        e->storage = real, e->offset = offset, e->ndim = ix->ndim, e->slot = k;
        memcpy(e->shape, ix->shape, sizeof e->shape);
        memcpy(e->strides, ix->strides, sizeof e->strides);
    }
    memset(record, 0, sizeof *record);
    record->dtype = WGT_U32;
    record->ndim = 1;
    record->shape[0] = SLOT_WORDS;
    record->strides[0] = 1;
    record->offset = SLOT_WORDS * (int64_t)k;
    record->host = c->host;
    record->buffer = c->buffer;
    *bit = (uint64_t)1 << (k % 64);
    return WGT_OK;
}

static void unlink_tainted(struct wgt_index_checks *c, wgt_storage *s) {
    if (s->check_prev) s->check_prev->check_next = s->check_next;
    else c->tainted = s->check_next;
    if (s->check_next) s->check_next->check_prev = s->check_prev;
    s->check_prev = s->check_next = NULL;
    s->check_mask = 0;
}

void wgt_index_checks_written(wgt_storage *s, uint64_t mask, int whole) {
    struct wgt_index_checks *c = s->ctx->index_checks;
    if (!c) return;
    unshare(c, s); /* new values: a check of the old ones says nothing of them */
    if (!whole) mask |= s->check_mask;
    if (!mask) {
        if (s->check_mask) unlink_tainted(c, s);
        return;
    }
    if (!s->check_mask) {
        s->check_prev = NULL;
        s->check_next = c->tainted;
        if (c->tainted) c->tainted->check_prev = s;
        c->tainted = s;
    }
    s->check_mask = mask;
}

void wgt_index_checks_forget(wgt_storage *s) {
    if (s->ctx->index_checks) unshare(s->ctx->index_checks, s);
    if (s->check_mask) unlink_tainted(s->ctx->index_checks, s);
}

wgt_status wgt_index_checks_begin(wgt_context *ctx) {
    struct wgt_index_checks *c = ctx->index_checks;
    if (!c || !c->used || c->reading) return WGT_OK;
    unshare(c, NULL); /* the taint of a slot being read is cleared by the read */
    wgt_backend *be = ctx->backend;
    if (c->buffer) {
        wgt_status st = be->read_begin(be, c->buffer, 0, (size_t)c->used * SLOT_WORDS * 4, &c->reading);
        if (st != WGT_OK) return st;
    }
    c->reading_slots = c->used;
    return WGT_OK;
}

/* Marks what depends on the failed slots among the first n of words; returns the index of
 * the first failed slot, or -1. */
static int64_t apply(wgt_context *ctx, const uint32_t *words, uint32_t n) {
    struct wgt_index_checks *c = ctx->index_checks;
    uint64_t failed = 0;
    int64_t first = -1;
    char *messages[64] = {0};
    for (uint32_t k = 0; k < n; k++) {
        if (words[SLOT_WORDS * k] == NONE) continue;
        if (first < 0) first = k;
        uint64_t bit = (uint64_t)1 << (k % 64);
        if (failed & bit) continue;
        failed |= bit;
        char message[512];
        slot_message(message, sizeof message, &c->slots[k], words + SLOT_WORDS * k);
        messages[k % 64] = strdup(message);
    }
    for (wgt_storage *s = c->tainted, *next; s; s = next) {
        next = s->check_next;
        uint64_t hit = s->check_mask & failed;
        if (hit && !s->failed) {
            int b = 0;
            while (!(hit >> b & 1)) b++;
            s->failed = WGT_ERR_INVALID_ARGUMENT;
            s->failed_message = messages[b] ? strdup(messages[b]) : NULL;
        }
        unlink_tainted(c, s);
    }
    for (int b = 0; b < 64; b++) free(messages[b]);
    return first;
}

wgt_status wgt_index_checks_finish(wgt_context *ctx, int report) {
    struct wgt_index_checks *c = ctx->index_checks;
    if (!c || !c->reading_slots) return WGT_OK;
    wgt_backend *be = ctx->backend;
    const uint32_t *words = c->host;
    if (c->reading) {
        wgt_status st = be->read_wait(be, c->reading);
        if (st != WGT_OK) return st; /* the device failed: so does everything it computed */
        words = be->read_data(be, c->reading);
    }
    if (!words) {
        if (c->reading) be->read_release(be, c->reading);
        c->reading = NULL;
        return wgt_error(WGT_ERR_INTERNAL, "the index check record was read without data");
    }
    /* No slot was taken since begin: taking one finishes the read first. */
    int64_t first = apply(ctx, words, c->reading_slots);
    char message[512] = "";
    if (first >= 0) slot_message(message, sizeof message, &c->slots[first], words + SLOT_WORDS * first);
    if (c->reading) be->read_release(be, c->reading);
    c->reading = NULL;
    c->reading_slots = 0;
    c->used = 0;
    unshare(c, NULL);
    if (first < 0 || !report) return WGT_OK;
    return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s", message);
}

wgt_status wgt_index_checks_read(wgt_context *ctx, int report) {
    wgt_status st = wgt_index_checks_begin(ctx);
    return st != WGT_OK ? st : wgt_index_checks_finish(ctx, report);
}

void wgt_index_checks_free(wgt_context *ctx) {
    struct wgt_index_checks *c = ctx->index_checks;
    if (!c) return;
    wgt_backend *be = ctx->backend;
    if (c->reading) be->read_release(be, c->reading);
    be->context_memory_destroy(be, c->buffer, c->host);
    free(c);
    ctx->index_checks = NULL;
}
