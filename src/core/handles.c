/*
 * The process-wide tables of tensor, context, kernel, graph and read-request handles (see
 * handles.h). Slots live in chunks
 * that are allocated on first use and never freed, so looking a handle up never touches freed
 * memory.
 * A handle is (generation << 25 | slot << 1 | 1): odd, so it is never a valid record pointer
 * or NULL. Creating and ending handles takes one lock (contexts on different threads create
 * tensors at once); looking one up takes none: the generation is read before and after the
 * record, so a slot reused meanwhile by another thread reads as stale.
 */
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#define WGT_API_PROTOTYPES_ONLY /* the record-level names, without renaming ours */
#include "api_names.h"
#include "handles.h"
#include "tensor.h"

#define INDEX_BITS 24
#define CHUNK_BITS 12
#define CHUNK_SLOTS (1u << CHUNK_BITS)
#define NCHUNKS (1u << (INDEX_BITS - CHUNK_BITS))
/* Generation bits that fit in a pointer beside the index and the tag bit (32 on 64-bit). */
#define GEN_BITS (sizeof(uintptr_t) * 8 - 1 - INDEX_BITS > 32 ? 32 : sizeof(uintptr_t) * 8 - 1 - INDEX_BITS)
#define GEN_MASK ((uint32_t)((1ull << GEN_BITS) - 1))

typedef struct slot {
    _Atomic uint32_t gen;    /* bumped when the caller's last reference ends */
    _Atomic(void *) record;  /* NULL while free */
    uint32_t user_refs;      /* the caller's references (each also holds the record) */
    uint32_t next_free;      /* free list link: index + 1, 0 at the end */
} slot;

/* One table per kind of handle (tensors, contexts, kernels, graphs, reads): a handle of one never names a slot of
 * the other, and each kind has its own limit. */
typedef struct table {
    _Atomic(slot *) chunks[NCHUNKS];
    /* A spin lock: the sections it guards are a few stores, and a mutex's cost doubled the
     * cost of making and releasing a view. A holder that was preempted is waited out with a
     * yield. */
    atomic_flag lock;
    uint32_t free_head; /* index + 1 */
    uint32_t high_water, live_count, limit;
} table;

static table tensors = {.lock = ATOMIC_FLAG_INIT, .limit = 1u << INDEX_BITS};
static table contexts = {.lock = ATOMIC_FLAG_INIT, .limit = 1u << INDEX_BITS};

static void table_lock(table *t) {
    while (atomic_flag_test_and_set_explicit(&t->lock, memory_order_acquire)) sched_yield();
}

static void table_unlock(table *t) { atomic_flag_clear_explicit(&t->lock, memory_order_release); }

/* What a stale handle becomes: no reference, no storage; every check calls it not live. */
static wgt_tensor dead_record;

static slot *slot_at(table *t, uint32_t index) {
    slot *c = atomic_load_explicit(&t->chunks[index >> CHUNK_BITS], memory_order_acquire);
    return c ? &c[index & (CHUNK_SLOTS - 1)] : NULL;
}

static uintptr_t encode(uint32_t index, uint32_t gen) {
    return ((uintptr_t)(gen & GEN_MASK) << (INDEX_BITS + 1)) | ((uintptr_t)index << 1) | 1u;
}

static uint32_t index_of(uintptr_t h) { return (uint32_t)((h >> 1) & ((1u << INDEX_BITS) - 1)); }

static uint32_t gen_in(uintptr_t h) { return (uint32_t)(h >> (INDEX_BITS + 1)); }

/* The live slot a handle names, and its record; NULL when stale or not a handle. */
static slot *lookup(table *t, const void *handle, void **record) {
    uintptr_t h = (uintptr_t)handle;
    if (!(h & 1)) return NULL;
    uint32_t gen = gen_in(h);
    slot *s = slot_at(t, index_of(h));
    if (!s || (atomic_load_explicit(&s->gen, memory_order_acquire) & GEN_MASK) != gen) return NULL;
    void *r = atomic_load_explicit(&s->record, memory_order_acquire);
    if (!r || (atomic_load_explicit(&s->gen, memory_order_acquire) & GEN_MASK) != gen) return NULL;
    *record = r;
    return s;
}

wgt_tensor *wgt_handle_arg(const wgt_tensor *handle) {
    void *r;
    if (!handle) return NULL;
    return lookup(&tensors, handle, &r) ? r : &dead_record;
}

wgt_tensor *wgt_handle_record(const wgt_tensor *handle) {
    void *r;
    return lookup(&tensors, handle, &r) ? r : NULL;
}

/* A free slot for record, or UINT32_MAX when the table is full or out of memory. */
static uint32_t slot_take(table *t, void *record) {
    uint32_t index = UINT32_MAX;
    table_lock(t);
    if (t->live_count < t->limit) {
        if (t->free_head) {
            index = t->free_head - 1;
            t->free_head = slot_at(t, index)->next_free;
        } else if ((t->high_water >> CHUNK_BITS) < NCHUNKS) {
            _Atomic(slot *) *chunk = &t->chunks[t->high_water >> CHUNK_BITS];
            slot *c = atomic_load_explicit(chunk, memory_order_relaxed);
            if (!c && (c = calloc(CHUNK_SLOTS, sizeof *c)) != NULL) atomic_store_explicit(chunk, c, memory_order_release);
            if (c) index = t->high_water++;
        }
    }
    if (index != UINT32_MAX) {
        slot *s = slot_at(t, index);
        s->user_refs = 1;
        atomic_store_explicit(&s->record, record, memory_order_release);
        t->live_count++;
    }
    table_unlock(t);
    return index;
}

/* Ends the slot's generation gen; 0 when it had ended already (a release racing another). */
static int slot_give_back(table *t, uint32_t index, uint32_t gen) {
    slot *s = slot_at(t, index); /* never NULL: the slot was taken */
    if (!s) return 0;
    table_lock(t);
    int live = (atomic_load_explicit(&s->gen, memory_order_relaxed) & GEN_MASK) == gen;
    if (live) {
        atomic_fetch_add_explicit(&s->gen, 1, memory_order_acq_rel); /* every handle to it is stale now */
        atomic_store_explicit(&s->record, NULL, memory_order_release);
        s->next_free = t->free_head;
        t->free_head = index + 1;
        t->live_count--;
    }
    table_unlock(t);
    return live;
}

static uint32_t gen_of(table *t, uint32_t index) {
    return atomic_load_explicit(&slot_at(t, index)->gen, memory_order_relaxed) & GEN_MASK;
}

wgt_tensor *wgt_handle_out(const char *fn, wgt_tensor *record) {
    if (!record) return NULL;
    if (record->handle) { /* the record is already the caller's: one more reference */
        slot_at(&tensors, record->handle - 1)->user_refs++;
        return (wgt_tensor *)encode(record->handle - 1, gen_of(&tensors, record->handle - 1));
    }
    uint32_t index = slot_take(&tensors, record);
    if (index == UINT32_MAX) {
        wgt_impl_release(record);
        wgt_error(WGT_ERR_LIMIT, "%s: %u tensors are alive, the most one process may hold at once", fn, tensors.limit);
        return NULL;
    }
    record->handle = index + 1;
    return (wgt_tensor *)encode(index, gen_of(&tensors, index));
}

int wgt_handle_release(const char *fn, wgt_tensor *handle) {
    void *p;
    slot *s = lookup(&tensors, handle, &p);
    wgt_tensor *r = p;
    if (!s) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: tensor is not a live tensor (released already, or not a tensor)", fn);
        return 0;
    }
    if (--s->user_refs == 0) {
        slot_give_back(&tensors, r->handle - 1, gen_in((uintptr_t)handle));
        r->handle = 0;
    }
    wgt_impl_release(r);
    return 1;
}

static uint32_t set_limit(table *t, uint32_t new_limit) {
    table_lock(t);
    uint32_t old = t->limit;
    t->limit = new_limit < (1u << INDEX_BITS) ? new_limit : 1u << INDEX_BITS;
    table_unlock(t);
    return old;
}

/* Contexts: the caller holds one reference (there is no retain), ended by the one release. */
wgt_context *wgt_context_out(const char *fn, wgt_context *record) {
    if (!record) return NULL;
    if (record->handle) return record->handle; /* stale once the context was released */
    uint32_t index = slot_take(&contexts, record);
    if (index == UINT32_MAX) {
        wgt_impl_context_release(record);
        wgt_error(WGT_ERR_LIMIT, "%s: %u contexts are alive, the most one process may hold at once", fn, contexts.limit);
        return NULL;
    }
    record->handle = (wgt_context *)encode(index, gen_of(&contexts, index));
    return record->handle;
}

/* Objects the caller holds one reference to (contexts, kernels: there is no retain), ended by
 * the one release; what names the kind in messages. */
static wgt_status not_live(const char *fn, const char *what) {
    return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: %s is not a live %s (released already, or not a %s)", fn, what,
                     what, what);
}

static int single_arg(table *t, const char *what, const char *fn, const void *handle, void **record) {
    void *r = NULL;
    if (handle && !lookup(t, handle, &r)) {
        not_live(fn, what);
        return 0;
    }
    *record = r;
    return 1;
}

/* Ends the handle's slot and returns the record to release; NULL (error naming fn) when the
 * handle was stale. The generation moves on under the table's lock: of two releases racing,
 * one wins. */
static void *single_end(table *t, const char *what, const char *fn, const void *handle) {
    void *r;
    uintptr_t h = (uintptr_t)handle;
    if (!lookup(t, handle, &r) || !slot_give_back(t, index_of(h), gen_in(h))) {
        not_live(fn, what);
        return NULL;
    }
    return r;
}

int wgt_context_arg(const char *fn, const wgt_context *handle, wgt_context **record) {
    void *r;
    if (!single_arg(&contexts, "context", fn, handle, &r)) return 0;
    *record = r;
    return 1;
}

wgt_context *wgt_context_record(const wgt_context *handle) {
    void *r;
    return lookup(&contexts, handle, &r) ? r : NULL;
}

void wgt_context_handle_release(const char *fn, wgt_context *handle) {
    wgt_context *r = handle ? single_end(&contexts, "context", fn, handle) : NULL;
    if (r) wgt_impl_context_release(r);
}

/* A new handle for a new record of a kind made one record per handle; a full table releases
 * the record and fails naming fn. NULL stays NULL. */
static void *single_out(table *t, const char *what, const char *fn, void *record, void (*release)(void *)) {
    if (!record) return NULL;
    uint32_t index = slot_take(t, record);
    if (index == UINT32_MAX) {
        release(record);
        wgt_error(WGT_ERR_LIMIT, "%s: %u %ss are alive, the most one process may hold at once", fn, t->limit, what);
        return NULL;
    }
    return (void *)encode(index, gen_of(t, index));
}

/* The entry points of such a kind (handles.h): T is the type's and functions' stem, WHAT
 * names it in messages. */
#define SINGLE_KIND(T, WHAT)                                                                   \
    static table T##_table = {.lock = ATOMIC_FLAG_INIT, .limit = 1u << INDEX_BITS};            \
    static void T##_record_release(void *r) { wgt_impl_##T##_release(r); }                    \
    wgt_##T *wgt_##T##_out(const char *fn, wgt_##T *record) {                                 \
        return single_out(&T##_table, WHAT, fn, record, T##_record_release);                  \
    }                                                                                          \
    int wgt_##T##_handle_arg(const char *fn, const wgt_##T *handle, wgt_##T **record) {        \
        void *r;                                                                               \
        if (!single_arg(&T##_table, WHAT, fn, handle, &r)) return 0;                           \
        *record = r;                                                                           \
        return 1;                                                                              \
    }                                                                                          \
    void wgt_##T##_handle_release(const char *fn, wgt_##T *handle) {                          \
        void *r = handle ? single_end(&T##_table, WHAT, fn, handle) : NULL;                    \
        if (r) wgt_impl_##T##_release(r);                                                      \
    }                                                                                          \
    uint32_t wgt_##T##_handles_set_limit(uint32_t limit) { return set_limit(&T##_table, limit); }

SINGLE_KIND(kernel, "kernel")
SINGLE_KIND(graph, "graph")
SINGLE_KIND(read, "request")

uint32_t wgt_context_handles_set_limit(uint32_t new_limit) { return set_limit(&contexts, new_limit); }

uint32_t wgt_handles_set_limit(uint32_t new_limit) { return set_limit(&tensors, new_limit); }

