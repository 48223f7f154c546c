/*
 * An index of names: strings to pointers in one open-addressing table, so the checks and
 * lookups by name that compiled graphs make (unique placeholder names in a context, unique
 * output names, bindings matched to a graph's values) cost a constant per name instead of a
 * scan of every name before it. Keys are not copied: each must live, unchanged, while it is
 * in the index.
 */
#ifndef WGT_CORE_NAME_INDEX_H
#define WGT_CORE_NAME_INDEX_H

#include <stddef.h>

typedef struct wgt_name_index {
    struct wgt_name_slot *slots;
    size_t nslots; /* 0 or a power of two */
    size_t used;   /* names plus removed-name markers: kept at most half of nslots */
    size_t count;  /* names */
} wgt_name_index;

/* The value stored under name, or NULL. */
void *wgt_name_index_get(const wgt_name_index *ix, const char *name);
/* Stores value (not NULL) under name, replacing what was there; 0 when out of host memory. */
int wgt_name_index_put(wgt_name_index *ix, const char *name, void *value);
/* Removes name if present. */
void wgt_name_index_remove(wgt_name_index *ix, const char *name);
/* Frees the table; the index is empty and usable again. */
void wgt_name_index_free(wgt_name_index *ix);

#endif
