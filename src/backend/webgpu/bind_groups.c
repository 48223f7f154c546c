/*
 * The bind-group cache. A kernel's bind group names its storage buffers and the uniform
 * ring; creating one per dispatch costs a driver object (and a validation pass) per op, while
 * real programs run the same kernels over the same buffers again and again (and the buffer
 * pool hands the same buffers back). So groups are kept in a hash table keyed by the layout,
 * each buffer with its binding number, offset and the bytes it binds, and the uniform
 * binding's number and size; a repeated dispatch looks its group up instead of creating it.
 * The library's kernels bind whole buffers at 0..n-1 and the ring after them; callers' own
 * kernels (user_kernel.c) name their bindings and bind tensors at offsets.
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
    uint64_t offsets[WGT_MAX_LAYOUT_STORAGE];
    uint32_t bindings[WGT_MAX_LAYOUT_STORAGE];
    int32_t ring_binding; /* -1: no uniform */
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

/* What a group binds: storage entries (binding, buffer, offset, size) and the ring's. */
typedef struct group_key {
    WGPUBindGroupLayout layout;
    int count;
    const WGPUBindGroupEntry *entries;
    wgt_buffer *const *buffers;
    int32_t ring_binding;
    uint32_t ring_size;
} group_key;

static uint64_t key_hash(const group_key *k) {
    uint64_t h = mix(mix((uint64_t)(uintptr_t)k->layout, k->ring_size), (uint64_t)(uint32_t)k->ring_binding);
    for (int i = 0; i < k->count; i++) {
        const WGPUBindGroupEntry *e = &k->entries[i];
        h = mix(mix(mix(mix(h, (uint64_t)(uintptr_t)k->buffers[i]), e->size), e->offset), e->binding);
    }
    return h;
}

static int key_equal(const bind_entry *e, uint64_t hash, const group_key *k) {
    if (e->hash != hash || e->layout != k->layout || e->count != k->count || e->ring_size != k->ring_size ||
        e->ring_binding != k->ring_binding)
        return 0;
    for (int i = 0; i < k->count; i++)
        if (e->buffers[i] != k->buffers[i] || e->sizes[i] != k->entries[i].size ||
            e->offsets[i] != k->entries[i].offset || e->bindings[i] != k->entries[i].binding)
            return 0;
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

/* The cached group for k, or a new one made and cached. */
static wgt_status cached_group(wgt_webgpu *w, const group_key *k, const char *label, WGPUBindGroup *out) {
    struct wgt_wgpu_bind_cache *c = w->bind_cache;
    const uint32_t mask = CACHE_SLOTS - 1;
    if (k->count > WGT_MAX_LAYOUT_STORAGE)
        return wgt_error(WGT_ERR_INTERNAL, "a cached bind group of %d storage buffers (at most %d)", k->count,
                         WGT_MAX_LAYOUT_STORAGE);
    uint64_t hash = key_hash(k);
    for (uint32_t i = (uint32_t)hash & mask; c->slots[i] != NO_ENTRY; i = (i + 1) & mask) {
        bind_entry *e = &c->entries[c->slots[i]];
        if (key_equal(e, hash, k)) {
            e->recently_used = 1;
            *out = e->group;
            return WGT_OK;
        }
    }
    WGPUBindGroupEntry e[WGT_MAX_LAYOUT_STORAGE + 1];
    memcpy(e, k->entries, sizeof *e * (size_t)k->count);
    if (k->ring_binding >= 0) {
        memset(&e[k->count], 0, sizeof e[k->count]);
        e[k->count].binding = (uint32_t)k->ring_binding;
        e[k->count].buffer = w->ring;
        e[k->count].size = k->ring_size;
    }
    WGPUBindGroupDescriptor bd = {0};
    bd.label = wgpu_str(label);
    bd.layout = k->layout;
    bd.entryCount = (size_t)k->count + (k->ring_binding >= 0);
    bd.entries = e;
    WGPUBindGroup group = w->p->wgpuDeviceCreateBindGroup(w->device, &bd);
    if (!group) return wgt_error(WGT_ERR_BACKEND, "cannot create a bind group");
    w->bind_groups_created++;
    w->batch_groups++; /* the driver holds its descriptors until the batch is done (in_flight.c) */
    if (!c->nfree) evict_one(w, c);
    int idx = c->free_entries[--c->nfree];
    bind_entry *n = &c->entries[idx];
    n->group = group;
    n->layout = k->layout;
    n->hash = hash;
    n->count = (uint8_t)k->count;
    n->ring_binding = k->ring_binding;
    n->ring_size = k->ring_size;
    n->recently_used = 1;
    for (int i = 0; i < k->count; i++) {
        n->buffers[i] = k->buffers[i];
        n->sizes[i] = k->entries[i].size;
        n->offsets[i] = k->entries[i].offset;
        n->bindings[i] = k->entries[i].binding;
        k->buffers[i]->bind_refs++;
    }
    uint32_t i = (uint32_t)hash & mask;
    while (c->slots[i] != NO_ENTRY) i = (i + 1) & mask;
    c->slots[i] = (int16_t)idx;
    *out = group;
    return WGT_OK;
}

wgt_status wgt_wgpu_bind_group(wgt_webgpu *w, WGPUBindGroupLayout layout, int count, wgt_buffer *const *buffers,
                               uint32_t ring_size, WGPUBindGroup *out) {
    if (count > WGT_MAX_LAYOUT_STORAGE)
        return wgt_error(WGT_ERR_INTERNAL, "a bind group of %d storage buffers (at most %d)", count,
                         WGT_MAX_LAYOUT_STORAGE);
    WGPUBindGroupEntry e[WGT_MAX_LAYOUT_STORAGE];
    memset(e, 0, sizeof *e * (size_t)count);
    for (int i = 0; i < count; i++) {
        e[i].binding = (uint32_t)i;
        e[i].buffer = buffers[i]->handle;
        e[i].size = buffers[i]->size; /* what the storage holds, not the pooled buffer's size */
    }
    group_key k = {layout, count, e, buffers, count, ring_size};
    return cached_group(w, &k, NULL, out);
}

wgt_status wgt_wgpu_bind_group_entries(wgt_webgpu *w, const char *label, WGPUBindGroupLayout layout, int count,
                                       const WGPUBindGroupEntry *entries, wgt_buffer *const *buffers,
                                       int ring_binding, uint32_t ring_size, WGPUBindGroup *out) {
    group_key k = {layout, count, entries, buffers, ring_binding, ring_size};
    return cached_group(w, &k, label, out);
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
