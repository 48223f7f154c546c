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
 *
 * Slots are taken round a ring, and several reads of the record may be in flight, each of
 * the slots taken since the one before, oldest first: a decoder that keeps steps queued ahead
 * of the host reads each step's token with the checks that step took, and must not wait for
 * that read before recording the next step. A read finished clears only its own slots' bits,
 * so no slot may share a bit with one of a read still in flight: while a read is in flight,
 * the slots not yet finished span fewer than 64, and taking one past that finishes the oldest
 * read first (a wait, as a run with more than 64 checks always had). Without reads in flight,
 * slots not yet read may share bits as before: one read takes them all.
 *
 * Such a read, forced by a run, learns verdicts before any caller asked for them. Were the
 * storages it fails simply failed, the run would stop at the next step reading one, and a
 * dispatch would report an index error it otherwise leaves to the next synchronisation, on
 * where the ring happened to stand. So they are marked failed_in_run (tensor.h) and treated
 * as the taint they replace: runs carry the failure into what they write from them, a whole
 * write or a host write drops it, record-time checks ignore it, and a synchronisation reports
 * it (a read of such a storage reads the record first, as it would have; the first message
 * waits in unreported for the next wgt_context_sync).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node.h"

#define SLOTS 1024u
#define NONE 0xffffffffu
#define SLOT_WORDS 4u
#define SHARED 16u
#define TAINT_BITS 64u /* a storage's check_mask */
#define READS 16u      /* reads of the record in flight at once */

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
    int ran; /* the backend's check was recorded: a step that failed first leaves old words */
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
    /* Slots counted since the record was made: slot k is k % SLOTS. [finished, begun) are
     * being read, [begun, taken) not yet; a read never wraps round the ring. */
    uint64_t taken, begun, finished;
    struct {
        wgt_pending_read *pending; /* NULL on a host-resident record: its words are c->host */
        uint64_t from, to;
    } reads[READS]; /* oldest first */
    uint32_t nreads;
    wgt_storage *tainted; /* storages with a non-zero check_mask */
    slot_info slots[SLOTS];
    shared_check shared[SHARED]; /* the run's checks others may share, the oldest replaced */
    uint32_t nshared_taken;      /* entries filled so far (mod SHARED gives the next) */
    /* Reads a run forces (taking a slot, above) find failures the caller would otherwise
     * learn of at the next synchronisation: storages they fail are marked failed_in_run, and
     * the first message waits here for the next synchronisation to report or drop it. */
    int forced;
    char unreported[512];
};

static wgt_status finish_oldest(wgt_context *ctx, char *message, size_t size);

/* Slot k's taint bit. */
static uint64_t slot_bit(uint64_t k) { return (uint64_t)1 << (k % TAINT_BITS); }

int wgt_index_checks_unread(const wgt_context *ctx) {
    return ctx->index_checks && ctx->index_checks->taken > ctx->index_checks->finished;
}

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
        *bit = slot_bit((uint64_t)old);
        return WGT_OK;
    }
    /* A finished read clears its slots' bits, so none of them may be this slot's (see above).
     * A read never wraps round the ring: everything taken is read before the ring starts over.
     * Reads forced here run inside a run of steps (forced: see the struct). */
    c->forced = 1;
    st = WGT_OK;
    while (st == WGT_OK && c->nreads && c->taken - c->finished >= TAINT_BITS) st = finish_oldest(ctx, NULL, 0);
    if (st == WGT_OK && c->taken % SLOTS == 0 && c->taken > c->finished) st = wgt_index_checks_read(ctx, 0);
    c->forced = 0;
    if (st != WGT_OK) return st;
    uint32_t k = (uint32_t)(c->taken++ % SLOTS);
    slot_info *info = &c->slots[k];
    info->fn = n->fn;
    info->ran = 0;
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
    *bit = slot_bit(k);
    return WGT_OK;
}

static void unlink_tainted(struct wgt_index_checks *c, wgt_storage *s) {
    if (s->check_prev) s->check_prev->check_next = s->check_next;
    else c->tainted = s->check_next;
    if (s->check_next) s->check_next->check_prev = s->check_prev;
    s->check_prev = s->check_next = NULL;
    s->check_mask = 0;
}

/* A failure a run found (failed_in_run) stands for taint whose verdict came early: it goes
 * where the taint would go. */
static void drop_failure_in_run(wgt_storage *s) {
    if (s->failed && s->failed_in_run) wgt_storage_clear_failure(s);
}

void wgt_index_checks_written(wgt_storage *s, uint64_t mask, int whole) {
    if (whole) drop_failure_in_run(s);
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

void wgt_index_checks_ran(wgt_context *ctx, const wgt_operand *record) {
    struct wgt_index_checks *c = ctx->index_checks;
    if (c) c->slots[(uint64_t)record->offset / SLOT_WORDS % SLOTS].ran = 1;
}

wgt_status wgt_index_checks_settle(wgt_storage *s) {
    if (!s->failed || !s->failed_in_run) return WGT_OK;
    s->failed_in_run = 0;
    return wgt_index_checks_read(s->ctx, 0);
}

void wgt_index_checks_forget(wgt_storage *s) {
    drop_failure_in_run(s);
    if (s->ctx->index_checks) unshare(s->ctx->index_checks, s);
    if (s->check_mask) unlink_tainted(s->ctx->index_checks, s);
}

wgt_status wgt_index_checks_begin(wgt_context *ctx) {
    struct wgt_index_checks *c = ctx->index_checks;
    if (!c || c->taken == c->begun) return WGT_OK;
    wgt_status st;
    if (c->nreads == READS && (st = finish_oldest(ctx, NULL, 0)) != WGT_OK) return st;
    unshare(c, NULL); /* the taint of a slot being read is cleared by the read */
    wgt_pending_read *pending = NULL;
    if (c->buffer) {
        wgt_backend *be = ctx->backend;
        size_t first = (size_t)(c->begun % SLOTS), n = (size_t)(c->taken - c->begun);
        if ((st = be->read_begin(be, c->buffer, first * SLOT_WORDS * 4, n * SLOT_WORDS * 4, &pending)) != WGT_OK)
            return st;
    }
    c->reads[c->nreads].pending = pending;
    c->reads[c->nreads].from = c->begun;
    c->reads[c->nreads].to = c->taken;
    c->nreads++;
    c->begun = c->taken;
    return WGT_OK;
}

uint64_t wgt_index_checks_mark(const wgt_context *ctx) { return ctx->index_checks ? ctx->index_checks->begun : 0; }

/* Marks what depends on the failed slots among the n read from slot first on (words: theirs)
 * and clears their bits from every storage; returns the index among them of the first
 * failed slot, or -1. */
static int64_t apply(wgt_context *ctx, const uint32_t *words, uint32_t first, uint32_t n) {
    struct wgt_index_checks *c = ctx->index_checks;
    uint64_t failed = 0, cleared = n >= TAINT_BITS ? ~(uint64_t)0 : 0;
    int64_t first_failed = -1;
    char *messages[TAINT_BITS] = {0};
    uint32_t order[TAINT_BITS]; /* per failed bit, the first of its slots to fail */
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k = first + i;
        uint64_t bit = slot_bit(k);
        cleared |= bit;
        if (words[SLOT_WORDS * i] == NONE || !c->slots[k % SLOTS].ran) continue;
        if (first_failed < 0) first_failed = i;
        if (failed & bit) continue;
        failed |= bit;
        order[k % TAINT_BITS] = i;
        char message[512];
        slot_message(message, sizeof message, &c->slots[k], words + SLOT_WORDS * i);
        messages[k % TAINT_BITS] = strdup(message);
    }
    for (wgt_storage *s = c->tainted, *next; s; s = next) {
        next = s->check_next;
        uint64_t hit = s->check_mask & failed;
        if (hit && !s->failed) {
            /* The message of the check that ran first: a later one may only have seen what the
             * first let through (the narrowed form of a bad 64-bit index, say). */
            int b = -1;
            for (int q = 0; q < (int)TAINT_BITS; q++)
                if ((hit >> q & 1) && (b < 0 || order[q] < order[b])) b = q;
            s->failed = WGT_ERR_INVALID_ARGUMENT;
            s->failed_message = messages[b] ? strdup(messages[b]) : NULL;
            s->failed_in_run = c->forced;
        }
        if (!(s->check_mask &= ~cleared)) unlink_tainted(c, s);
    }
    for (uint32_t b = 0; b < TAINT_BITS; b++) free(messages[b]);
    return first_failed;
}

/* Waits for the oldest read in flight and applies it; its first failure's message goes to
 * message (size bytes, when not NULL and nothing is there yet). */
static wgt_status finish_oldest(wgt_context *ctx, char *message, size_t size) {
    struct wgt_index_checks *c = ctx->index_checks;
    wgt_backend *be = ctx->backend;
    wgt_pending_read *pending = c->reads[0].pending;
    uint32_t first = (uint32_t)(c->reads[0].from % SLOTS), n = (uint32_t)(c->reads[0].to - c->reads[0].from);
    const uint32_t *words = c->host ? c->host + (size_t)first * SLOT_WORDS : NULL;
    wgt_status st = WGT_OK;
    if (pending) {
        st = be->read_wait(be, pending);
        words = st == WGT_OK ? be->read_data(be, pending) : NULL;
    }
    /* The read is over either way: a device that failed fails everything it computed. */
    c->finished = c->reads[0].to;
    memmove(c->reads, c->reads + 1, sizeof c->reads[0] * --c->nreads);
    if (st == WGT_OK && !words) st = wgt_error(WGT_ERR_INTERNAL, "the index check record was read without data");
    if (st == WGT_OK) {
        int64_t failed = apply(ctx, words, first, n);
        if (c->forced) message = c->unreported, size = sizeof c->unreported;
        if (failed >= 0 && message && !*message)
            slot_message(message, size, &c->slots[first + failed], words + SLOT_WORDS * failed);
    }
    if (pending) be->read_release(be, pending);
    return st;
}

wgt_status wgt_index_checks_finish_through(wgt_context *ctx, uint64_t mark, int report) {
    struct wgt_index_checks *c = ctx->index_checks;
    char message[512] = "";
    while (c && c->nreads && c->reads[0].to <= mark) {
        wgt_status st = finish_oldest(ctx, message, sizeof message);
        if (st != WGT_OK) return st;
    }
    /* A synchronisation also reports (or, not reporting, drops) what reads forced by a run
     * found: checks taken before any read here, so theirs is the first failure. */
    if (c && !c->forced) {
        if (c->unreported[0]) memcpy(message, c->unreported, sizeof message);
        c->unreported[0] = 0;
    }
    if (!*message || !report) return WGT_OK;
    return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s", message);
}

wgt_status wgt_index_checks_finish(wgt_context *ctx, int report) {
    return wgt_index_checks_finish_through(ctx, UINT64_MAX, report);
}

wgt_status wgt_index_checks_read(wgt_context *ctx, int report) {
    wgt_status st = wgt_index_checks_begin(ctx);
    return st != WGT_OK ? st : wgt_index_checks_finish(ctx, report);
}

void wgt_index_checks_free(wgt_context *ctx) {
    struct wgt_index_checks *c = ctx->index_checks;
    if (!c) return;
    wgt_backend *be = ctx->backend;
    for (uint32_t i = 0; i < c->nreads; i++)
        if (c->reads[i].pending) be->read_release(be, c->reads[i].pending);
    be->context_memory_destroy(be, c->buffer, c->host);
    free(c);
    ctx->index_checks = NULL;
}
