/*
 * The name index (name_index.h): linear probing over FNV-1a hashes, with the hash kept in
 * the slot so probing compares strings only on a hash match. A removed name leaves a marker
 * so later names in its probe run stay reachable; markers count as used, and a rehash drops
 * them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "name_index.h"

struct wgt_name_slot {
    const char *name; /* NULL: empty, or removed where value is the marker */
    void *value;
    uint64_t hash;
};

static char removed_marker;
#define REMOVED ((void *)&removed_marker)

static uint64_t hash_of(const char *s) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

/* The slot holding name, or NULL. */
static struct wgt_name_slot *find(const wgt_name_index *ix, const char *name, uint64_t h) {
    if (!ix->nslots) return NULL;
    for (size_t i = (size_t)h & (ix->nslots - 1);; i = (i + 1) & (ix->nslots - 1)) {
        struct wgt_name_slot *s = &ix->slots[i];
        if (!s->name && s->value != REMOVED) return NULL;
        if (s->name && s->hash == h && !strcmp(s->name, name)) return s;
    }
}

/* Places a name known to be absent; the table has a free slot. */
static void place(wgt_name_index *ix, const char *name, void *value, uint64_t h) {
    size_t i = (size_t)h & (ix->nslots - 1);
    while (ix->slots[i].name) i = (i + 1) & (ix->nslots - 1);
    if (ix->slots[i].value != REMOVED) ix->used++;
    ix->slots[i] = (struct wgt_name_slot){name, value, h};
    ix->count++;
}

/* Room for one more name: a table twice the names (and at least 16 slots), markers gone. */
static int grow(wgt_name_index *ix) {
    size_t size = 16;
    while (size < 4 * (ix->count + 1)) {
        if (size > SIZE_MAX / 2 / sizeof *ix->slots) return 0;
        size *= 2;
    }
    struct wgt_name_slot *slots = calloc(size, sizeof *slots);
    if (!slots) return 0;
    wgt_name_index old = *ix;
    *ix = (wgt_name_index){slots, size, 0, 0};
    for (size_t i = 0; i < old.nslots; i++)
        if (old.slots[i].name) place(ix, old.slots[i].name, old.slots[i].value, old.slots[i].hash);
    free(old.slots);
    return 1;
}

void *wgt_name_index_get(const wgt_name_index *ix, const char *name) {
    struct wgt_name_slot *s = find(ix, name, hash_of(name));
    return s ? s->value : NULL;
}

int wgt_name_index_put(wgt_name_index *ix, const char *name, void *value) {
    uint64_t h = hash_of(name);
    struct wgt_name_slot *s = find(ix, name, h);
    if (s) {
        s->name = name;
        s->value = value;
        return 1;
    }
    if (2 * (ix->used + 1) > ix->nslots && !grow(ix)) return 0;
    place(ix, name, value, h);
    return 1;
}

void wgt_name_index_remove(wgt_name_index *ix, const char *name) {
    struct wgt_name_slot *s = find(ix, name, hash_of(name));
    if (!s) return;
    s->name = NULL;
    s->value = REMOVED;
    ix->count--;
}

void wgt_name_index_free(wgt_name_index *ix) {
    free(ix->slots);
    *ix = (wgt_name_index){0};
}
