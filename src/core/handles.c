/*
 * The process-wide table of tensor handles (see handles.h). Slots live in chunks that are
 * allocated on first use and never freed, so looking a handle up never touches freed memory.
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
    _Atomic uint32_t gen;          /* bumped when the caller's last reference ends */
    _Atomic(wgt_tensor *) record;  /* NULL while free */
    uint32_t user_refs;            /* the caller's references (each also holds the record) */
    uint32_t next_free;            /* free list link: index + 1, 0 at the end */
} slot;

static _Atomic(slot *) chunks[NCHUNKS];
/* A spin lock: the sections it guards are a few stores, and a mutex's cost doubled the cost
 * of making and releasing a view. A holder that was preempted is waited out with a yield. */
static atomic_flag lock = ATOMIC_FLAG_INIT;

static void table_lock(void) {
    while (atomic_flag_test_and_set_explicit(&lock, memory_order_acquire)) sched_yield();
}

static void table_unlock(void) { atomic_flag_clear_explicit(&lock, memory_order_release); }
static uint32_t free_head; /* index + 1 */
static uint32_t high_water, live_count, limit = 1u << INDEX_BITS;

/* What a stale handle becomes: no reference, no storage; every check calls it not live. */
static wgt_tensor dead_record;

static slot *slot_at(uint32_t index) {
    slot *c = atomic_load_explicit(&chunks[index >> CHUNK_BITS], memory_order_acquire);
    return c ? &c[index & (CHUNK_SLOTS - 1)] : NULL;
}

static wgt_tensor *encode(uint32_t index, uint32_t gen) {
    return (wgt_tensor *)(((uintptr_t)(gen & GEN_MASK) << (INDEX_BITS + 1)) | ((uintptr_t)index << 1) | 1u);
}

/* The live slot a handle names, and its record; NULL when stale or not a handle. */
static slot *lookup(const wgt_tensor *handle, wgt_tensor **record) {
    uintptr_t h = (uintptr_t)handle;
    if (!(h & 1)) return NULL;
    uint32_t index = (uint32_t)((h >> 1) & ((1u << INDEX_BITS) - 1)), gen = (uint32_t)(h >> (INDEX_BITS + 1));
    slot *s = index < (1u << INDEX_BITS) ? slot_at(index) : NULL;
    if (!s || (atomic_load_explicit(&s->gen, memory_order_acquire) & GEN_MASK) != gen) return NULL;
    wgt_tensor *r = atomic_load_explicit(&s->record, memory_order_acquire);
    if (!r || (atomic_load_explicit(&s->gen, memory_order_acquire) & GEN_MASK) != gen) return NULL;
    *record = r;
    return s;
}

wgt_tensor *wgt_handle_arg(const wgt_tensor *handle) {
    wgt_tensor *r;
    if (!handle) return NULL;
    return lookup(handle, &r) ? r : &dead_record;
}

wgt_tensor *wgt_handle_record(const wgt_tensor *handle) {
    wgt_tensor *r;
    return lookup(handle, &r) ? r : NULL;
}

/* A free slot for record, or UINT32_MAX when the table is full or out of memory. */
static uint32_t slot_take(wgt_tensor *record) {
    uint32_t index = UINT32_MAX;
    table_lock();
    if (live_count < limit) {
        if (free_head) {
            index = free_head - 1;
            free_head = slot_at(index)->next_free;
        } else if ((high_water >> CHUNK_BITS) < NCHUNKS) {
            _Atomic(slot *) *chunk = &chunks[high_water >> CHUNK_BITS];
            slot *c = atomic_load_explicit(chunk, memory_order_relaxed);
            if (!c && (c = calloc(CHUNK_SLOTS, sizeof *c)) != NULL) atomic_store_explicit(chunk, c, memory_order_release);
            if (c) index = high_water++;
        }
    }
    if (index != UINT32_MAX) {
        slot *s = slot_at(index);
        s->user_refs = 1;
        atomic_store_explicit(&s->record, record, memory_order_release);
        live_count++;
    }
    table_unlock();
    return index;
}

static void slot_give_back(uint32_t index) {
    slot *s = slot_at(index); /* never NULL: the slot was taken */
    if (!s) return;
    table_lock();
    atomic_fetch_add_explicit(&s->gen, 1, memory_order_acq_rel); /* every handle to it is stale now */
    atomic_store_explicit(&s->record, NULL, memory_order_release);
    s->next_free = free_head;
    free_head = index + 1;
    live_count--;
    table_unlock();
}

wgt_tensor *wgt_handle_out(const char *fn, wgt_tensor *record) {
    if (!record) return NULL;
    if (record->handle) { /* the record is already the caller's: one more reference */
        slot *s = slot_at(record->handle - 1);
        s->user_refs++;
        return encode(record->handle - 1, atomic_load_explicit(&s->gen, memory_order_relaxed));
    }
    uint32_t index = slot_take(record);
    if (index == UINT32_MAX) {
        wgt_impl_release(record);
        wgt_error(WGT_ERR_LIMIT, "%s: %u tensors are alive, the most one process may hold at once", fn, limit);
        return NULL;
    }
    record->handle = index + 1;
    return encode(index, atomic_load_explicit(&slot_at(index)->gen, memory_order_relaxed));
}

int wgt_handle_release(const char *fn, wgt_tensor *handle) {
    wgt_tensor *r;
    slot *s = lookup(handle, &r);
    if (!s) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: tensor is not a live tensor (released already, or not a tensor)", fn);
        return 0;
    }
    if (--s->user_refs == 0) {
        slot_give_back(r->handle - 1);
        r->handle = 0;
    }
    wgt_impl_release(r);
    return 1;
}

uint32_t wgt_handles_set_limit(uint32_t new_limit) {
    table_lock();
    uint32_t old = limit;
    limit = new_limit < (1u << INDEX_BITS) ? new_limit : 1u << INDEX_BITS;
    table_unlock();
    return old;
}
