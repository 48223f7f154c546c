/*
 * The bind-group cache. A kernel's bind group names its storage buffers and the uniform
 * ring; creating one per dispatch costs a driver object (and a validation pass) per op, while
 * real programs run the same kernels over the same buffers again and again (and the buffer
 * pool hands the same buffers back). So groups are kept in a hash table keyed by the layout,
 * each buffer with the bytes it binds, and the uniform binding's size; a repeated dispatch
 * looks its group up instead of creating it.
 *
 * The table is bounded: when every entry is taken, one is evicted by the clock algorithm (an
 * entry used since the hand last passed gets a second chance). A cached group holds its
 * buffers' memory, and a later buffer may get a released one's address, so when the pool
 * gives a buffer back to the driver it first drops every entry naming it; each buffer counts
 * its entries, so buffers never bound cost nothing there.
 */
#include <stdlib.h>
#include <string.h>

#include "webgpu_internal.h"

#define CACHE_ENTRIES 1024
#define CACHE_SLOTS 2048 /* a power of two, twice the entries: short probe runs */
#define NO_ENTRY (-1)

typedef struct bind_entry {
    WGPUBindGroup group; /* NULL: the entry is free */
    WGPUBindGroupLayout layout;
    uint64_t hash;
    wgt_buffer *buffers[WGT_MAX_LAYOUT_STORAGE];
    uint64_t sizes[WGT_MAX_LAYOUT_STORAGE];
    uint32_t ring_size;
    uint8_t count;
    uint8_t recently_used; /* the clock's second-chance bit */
} bind_entry;

struct wgt_wgpu_bind_cache {
    int16_t slots[CACHE_SLOTS]; /* entry index or NO_ENTRY; linear probing */
    int16_t free_entries[CACHE_ENTRIES];
    int nfree;
    uint32_t hand;
    bind_entry entries[CACHE_ENTRIES];
};

wgt_status wgt_wgpu_bind_cache_init(wgt_webgpu *w) {
    struct wgt_wgpu_bind_cache *c = calloc(1, sizeof *c);
    if (!c) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "out of host memory for the bind group cache");
    for (int i = 0; i < CACHE_SLOTS; i++) c->slots[i] = NO_ENTRY;
    for (int i = 0; i < CACHE_ENTRIES; i++) c->free_entries[i] = (int16_t)(CACHE_ENTRIES - 1 - i);
    c->nfree = CACHE_ENTRIES;
    w->bind_cache = c;
    return WGT_OK;
}

static uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v;
    h *= 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 32);
}

static uint64_t key_hash(WGPUBindGroupLayout layout, int count, wgt_buffer *const *buffers, uint32_t ring_size) {
    uint64_t h = mix((uint64_t)(uintptr_t)layout, ring_size);
    for (int i = 0; i < count; i++) h = mix(mix(h, (uint64_t)(uintptr_t)buffers[i]), buffers[i]->size);
    return h;
}

static int key_equal(const bind_entry *e, uint64_t hash, WGPUBindGroupLayout layout, int count,
                     wgt_buffer *const *buffers, uint32_t ring_size) {
    if (e->hash != hash || e->layout != layout || e->count != count || e->ring_size != ring_size) return 0;
    for (int i = 0; i < count; i++)
        if (e->buffers[i] != buffers[i] || e->sizes[i] != buffers[i]->size) return 0;
    return 1;
}

/* Removes entry index idx from the probe table, moving later entries of its run back so
 * every entry stays reachable from its home slot (no tombstones). */
static void unlink_slot(struct wgt_wgpu_bind_cache *c, int idx) {
    const uint32_t mask = CACHE_SLOTS - 1;
    uint32_t i = (uint32_t)c->entries[idx].hash & mask;
    while (c->slots[i] != idx) i = (i + 1) & mask;
    for (uint32_t j = i;;) {
        j = (j + 1) & mask;
        if (c->slots[j] == NO_ENTRY) break;
        uint32_t home = (uint32_t)c->entries[c->slots[j]].hash & mask;
        /* The entry at j may move to the hole at i unless its home lies cyclically in (i, j]. */
        int stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!stays) {
            c->slots[i] = c->slots[j];
            i = j;
        }
    }
    c->slots[i] = NO_ENTRY;
}

static void drop_entry(wgt_webgpu *w, struct wgt_wgpu_bind_cache *c, int idx) {
    bind_entry *e = &c->entries[idx];
    unlink_slot(c, idx);
    w->p->wgpuBindGroupRelease(e->group); /* work recorded with it keeps its own reference */
    for (int i = 0; i < e->count; i++) e->buffers[i]->bind_refs--;
    memset(e, 0, sizeof *e);
    c->free_entries[c->nfree++] = (int16_t)idx;
}

/* Frees one entry (onto the free list). */
static void evict_one(wgt_webgpu *w, struct wgt_wgpu_bind_cache *c) {
    for (;;) {
        int idx = (int)(c->hand++ % CACHE_ENTRIES);
        bind_entry *e = &c->entries[idx];
        if (!e->group) continue;
        if (e->recently_used) {
            e->recently_used = 0;
            continue;
        }
        drop_entry(w, c, idx);
        return;
    }
}

wgt_status wgt_wgpu_bind_group(wgt_webgpu *w, WGPUBindGroupLayout layout, int count, wgt_buffer *const *buffers,
                               uint32_t ring_size, WGPUBindGroup *out) {
    struct wgt_wgpu_bind_cache *c = w->bind_cache;
    const uint32_t mask = CACHE_SLOTS - 1;
    uint64_t hash = key_hash(layout, count, buffers, ring_size);
    for (uint32_t i = (uint32_t)hash & mask; c->slots[i] != NO_ENTRY; i = (i + 1) & mask) {
        bind_entry *e = &c->entries[c->slots[i]];
        if (key_equal(e, hash, layout, count, buffers, ring_size)) {
            e->recently_used = 1;
            *out = e->group;
            return WGT_OK;
        }
    }
    if (count > WGT_MAX_LAYOUT_STORAGE)
        return wgt_error(WGT_ERR_INTERNAL, "a bind group of %d storage buffers (at most %d)", count,
                         WGT_MAX_LAYOUT_STORAGE);
    WGPUBindGroupEntry e[WGT_MAX_LAYOUT_STORAGE + 1];
    memset(e, 0, sizeof e);
    for (int i = 0; i < count; i++) {
        e[i].binding = (uint32_t)i;
        e[i].buffer = buffers[i]->handle;
        e[i].size = buffers[i]->size; /* what the storage holds, not the pooled buffer's size */
    }
    e[count].binding = (uint32_t)count;
    e[count].buffer = w->ring;
    e[count].size = ring_size;
    WGPUBindGroupDescriptor bd = {0};
    bd.layout = layout;
    bd.entryCount = (size_t)count + 1;
    bd.entries = e;
    WGPUBindGroup group = w->p->wgpuDeviceCreateBindGroup(w->device, &bd);
    if (!group) return wgt_error(WGT_ERR_BACKEND, "cannot create a bind group");
    w->batch_groups++; /* the driver holds its descriptors until the batch is done (in_flight.c) */
    if (!c->nfree) evict_one(w, c);
    int idx = c->free_entries[--c->nfree];
    bind_entry *n = &c->entries[idx];
    n->group = group;
    n->layout = layout;
    n->hash = hash;
    n->count = (uint8_t)count;
    n->ring_size = ring_size;
    n->recently_used = 1;
    for (int i = 0; i < count; i++) {
        n->buffers[i] = buffers[i];
        n->sizes[i] = buffers[i]->size;
        buffers[i]->bind_refs++;
    }
    uint32_t i = (uint32_t)hash & mask;
    while (c->slots[i] != NO_ENTRY) i = (i + 1) & mask;
    c->slots[i] = (int16_t)idx;
    *out = group;
    return WGT_OK;
}

void wgt_wgpu_bind_cache_forget(wgt_webgpu *w, wgt_buffer *b) {
    struct wgt_wgpu_bind_cache *c = w->bind_cache;
    if (!c) return;
    for (int idx = 0; idx < CACHE_ENTRIES && b->bind_refs; idx++) {
        bind_entry *e = &c->entries[idx];
        if (!e->group) continue;
        for (int i = 0; i < e->count; i++)
            if (e->buffers[i] == b) {
                drop_entry(w, c, idx);
                break;
            }
    }
}

void wgt_wgpu_bind_cache_shutdown(wgt_webgpu *w) {
    struct wgt_wgpu_bind_cache *c = w->bind_cache;
    if (!c) return;
    for (int idx = 0; idx < CACHE_ENTRIES; idx++)
        if (c->entries[idx].group) drop_entry(w, c, idx);
    free(c);
    w->bind_cache = NULL;
}
