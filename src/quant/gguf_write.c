/*
 * Writing GGUF files (version 3): the writer keeps deep copies of the metadata and a
 * reference to each tensor; saving writes the header, then each tensor's bytes read from
 * its storage one tensor at a time, each padded to the alignment.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/node.h"
#include "gguf_format.h"

typedef struct {
    char *name;
    wgt_tensor *t;
} writer_tensor;

struct wgt_gguf_writer {
    wgt_gguf_kv *kvs;
    int64_t nkv, cap_kv;
    writer_tensor *tensors;
    int64_t ntensors, cap_tensors;
};

wgt_gguf_writer *wgt_gguf_writer_create(void) {
    wgt_gguf_writer *w = calloc(1, sizeof *w);
    if (!w) wgt_error(WGT_ERR_OUT_OF_MEMORY, "wgt_gguf_writer_create: out of host memory");
    return w;
}

void wgt_gguf_writer_release(wgt_gguf_writer *w) {
    if (!w) return;
    for (int64_t i = 0; i < w->nkv; i++) wgt_gguf_free_kv(&w->kvs[i]);
    for (int64_t i = 0; i < w->ntensors; i++) {
        free(w->tensors[i].name);
        wgt_release(w->tensors[i].t);
    }
    free(w->kvs);
    free(w->tensors);
    free(w);
}

/* Room for one more item in a growing array. */
static int grow(void **items, int64_t *cap, int64_t n, size_t size) {
    if (n < *cap) return 1;
    int64_t c = *cap ? 2 * *cap : 16;
    void *p = realloc(*items, (size_t)c * size);
    if (!p) return 0;
    *items = p;
    *cap = c;
    return 1;
}

wgt_status wgt_gguf_writer_set(wgt_gguf_writer *w, const wgt_gguf_kv *kv) {
    static const char fn[] = "wgt_gguf_writer_set";
    if (!w || !kv || !kv->key)
        return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, !w ? "the writer" : !kv ? "kv" : "kv->key");
    int array = kv->type == WGT_GGUF_ARRAY;
    size_t es = wgt_gguf_elem_size(kv->elem_type);
    if (es == 0 || (!array && (kv->type != kv->elem_type || kv->count != 1)))
        return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: '%s' has type %d, element type %d and count %llu; a scalar has "
                         "type == elem_type and count 1, an array WGT_GGUF_ARRAY of scalars or strings", fn, kv->key,
                         (int)kv->type, (int)kv->elem_type, (unsigned long long)kv->count);
    if (kv->count && !kv->data) return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: '%s' has no data", fn, kv->key);
    if (kv->count > ((uint64_t)1 << 40) / es)
        return wgt_error(WGT_ERR_LIMIT, "%s: '%s' has %llu values", fn, kv->key, (unsigned long long)kv->count);
    for (int64_t i = 0; i < w->nkv; i++)
        if (strcmp(w->kvs[i].key, kv->key) == 0)
            return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: the key '%s' is set already", fn, kv->key);
    if (!grow((void **)&w->kvs, &w->cap_kv, w->nkv, sizeof *w->kvs))
        return wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
    wgt_gguf_kv *c = &w->kvs[w->nkv];
    memset(c, 0, sizeof *c);
    c->type = kv->type;
    c->elem_type = kv->elem_type;
    c->count = kv->count;
    void *data = calloc(kv->count ? (size_t)kv->count : 1, es);
    c->key = strdup(kv->key);
    c->data = data;
    int ok = data && c->key;
    if (ok && kv->elem_type == WGT_GGUF_STRING) {
        const wgt_gguf_string *src = kv->data;
        wgt_gguf_string *dst = data;
        for (uint64_t i = 0; i < kv->count && ok; i++) {
            char *p = malloc((size_t)src[i].len + 1);
            if (!(ok = p != NULL)) break;
            if (src[i].len) memcpy(p, src[i].data, (size_t)src[i].len);
            p[src[i].len] = 0;
            dst[i].len = src[i].len;
            dst[i].data = p;
        }
    } else if (ok && kv->count) {
        memcpy(data, kv->data, (size_t)kv->count * es);
    }
    if (!ok) {
        wgt_gguf_free_kv(c);
        return wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory for '%s'", fn, kv->key);
    }
    w->nkv++;
    return WGT_OK;
}

wgt_status wgt_gguf_writer_add_tensor(wgt_gguf_writer *w, const char *name, wgt_tensor *t) {
    static const char fn[] = "wgt_gguf_writer_add_tensor";
    if (!w || !name) return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, !w ? "the writer" : "name");
    wgt_status st = wgt_check_tensor(fn, "t", t);
    if (st != WGT_OK) return st;
    if (wgt_gguf_ggml_type(t->dtype) < 0)
        return wgt_error(WGT_ERR_DTYPE, "%s: '%s' is %s, which GGUF does not hold (f32, f16, i32, q8_0, q4_0)", fn,
                         name, wgt_dtype_name(t->dtype));
    if (!(t->usage & WGT_USAGE_READABLE))
        return wgt_error(WGT_ERR_USAGE, "%s: '%s' was created without the readable usage", fn, name);
    for (int64_t i = 0; i < w->ntensors; i++)
        if (strcmp(w->tensors[i].name, name) == 0)
            return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: a tensor named '%s' was added already", fn, name);
    if (!grow((void **)&w->tensors, &w->cap_tensors, w->ntensors, sizeof *w->tensors))
        return wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
    char *copy = strdup(name);
    if (!copy) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
    w->tensors[w->ntensors].name = copy;
    w->tensors[w->ntensors].t = wgt_retain(t);
    w->ntensors++;
    return WGT_OK;
}

typedef struct {
    FILE *f;
    const char *path;
    wgt_status st;
} out_file;

static void put(out_file *o, const void *p, size_t n) {
    if (o->st == WGT_OK && n && fwrite(p, 1, n, o->f) != n)
        o->st = wgt_error(WGT_ERR_UNAVAILABLE, "wgt_gguf_writer_save: writing %s failed: %s", o->path, strerror(errno));
}

static void put_u32(out_file *o, uint32_t v) { put(o, &v, 4); }
static void put_u64(out_file *o, uint64_t v) { put(o, &v, 8); }
static void put_string(out_file *o, const char *s, uint64_t len) {
    put_u64(o, len);
    put(o, s, (size_t)len);
}

static void put_values(out_file *o, const wgt_gguf_kv *kv) {
    if (kv->elem_type != WGT_GGUF_STRING) {
        put(o, kv->data, (size_t)kv->count * wgt_gguf_scalar_size(kv->elem_type));
        return;
    }
    const wgt_gguf_string *s = kv->data;
    for (uint64_t i = 0; i < kv->count; i++) put_string(o, s[i].data, s[i].len);
}

static void put_padding(out_file *o, uint64_t pos, uint32_t alignment) {
    static const char zeros[256];
    uint64_t pad = (alignment - pos % alignment) % alignment;
    while (pad > 0) {
        size_t n = pad < sizeof zeros ? (size_t)pad : sizeof zeros;
        put(o, zeros, n);
        pad -= n;
    }
}

wgt_status wgt_gguf_writer_save(wgt_gguf_writer *w, const char *path, uint32_t alignment) {
    static const char fn[] = "wgt_gguf_writer_save";
    if (!w || !path) return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, !w ? "the writer" : "path");
    if (alignment == 0) alignment = WGT_GGUF_DEFAULT_ALIGNMENT;
    if ((alignment & (alignment - 1)) != 0)
        return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: alignment %u is not a power of two", fn, alignment);
    for (int64_t i = 0; i < w->nkv; i++)
        if (strcmp(w->kvs[i].key, "general.alignment") == 0)
            return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: general.alignment is written from the alignment argument; "
                             "do not set it", fn);
    for (int64_t i = 0; i < w->ntensors; i++) {
        wgt_status st = wgt_check_tensor(fn, "a tensor", w->tensors[i].t);
        if (st != WGT_OK) return st;
    }
    out_file o = {fopen(path, "wb"), path, WGT_OK};
    if (!o.f) return wgt_error(WGT_ERR_UNAVAILABLE, "%s: cannot create %s: %s", fn, path, strerror(errno));
    int extra = alignment != WGT_GGUF_DEFAULT_ALIGNMENT;
    put_u32(&o, WGT_GGUF_MAGIC);
    put_u32(&o, 3);
    put_u64(&o, (uint64_t)w->ntensors);
    put_u64(&o, (uint64_t)w->nkv + (uint64_t)extra);
    uint64_t pos = 24;
    if (extra) {
        put_string(&o, "general.alignment", 17);
        put_u32(&o, WGT_GGUF_UINT32);
        put_u32(&o, alignment);
        pos += 8 + 17 + 4 + 4;
    }
    for (int64_t i = 0; i < w->nkv; i++) {
        const wgt_gguf_kv *kv = &w->kvs[i];
        size_t klen = strlen(kv->key);
        put_string(&o, kv->key, klen);
        put_u32(&o, (uint32_t)kv->type);
        pos += 8 + klen + 4;
        if (kv->type == WGT_GGUF_ARRAY) {
            put_u32(&o, (uint32_t)kv->elem_type);
            put_u64(&o, kv->count);
            pos += 12;
        }
        put_values(&o, kv);
        if (kv->elem_type == WGT_GGUF_STRING) {
            const wgt_gguf_string *s = kv->data;
            for (uint64_t j = 0; j < kv->count; j++) pos += 8 + s[j].len;
        } else {
            pos += kv->count * wgt_gguf_scalar_size(kv->elem_type);
        }
    }
    uint64_t offset = 0;
    for (int64_t i = 0; i < w->ntensors; i++) {
        const wgt_tensor *t = w->tensors[i].t;
        size_t nlen = strlen(w->tensors[i].name);
        put_string(&o, w->tensors[i].name, nlen);
        put_u32(&o, (uint32_t)t->ndim);
        for (int d = t->ndim - 1; d >= 0; d--) put_u64(&o, (uint64_t)t->shape[d]);
        put_u32(&o, (uint32_t)wgt_gguf_ggml_type(t->dtype));
        put_u64(&o, offset);
        pos += 8 + nlen + 4 + 8 * (uint64_t)t->ndim + 4 + 8;
        uint64_t n = wgt_tensor_nbytes(t);
        offset += n + (alignment - n % alignment) % alignment;
    }
    put_padding(&o, pos, alignment);
    for (int64_t i = 0; i < w->ntensors && o.st == WGT_OK; i++) {
        wgt_tensor *t = w->tensors[i].t;
        size_t n = wgt_tensor_nbytes(t);
        void *bytes = malloc(n ? n : 1);
        if (!bytes) {
            o.st = wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory for '%s' (%zu bytes)", fn,
                             w->tensors[i].name, n);
            break;
        }
        wgt_status st = wgt_tensor_read(t, bytes, n);
        if (st != WGT_OK) o.st = st;
        put(&o, bytes, n);
        free(bytes);
        put_padding(&o, n, alignment);
    }
    if (fclose(o.f) != 0 && o.st == WGT_OK)
        o.st = wgt_error(WGT_ERR_UNAVAILABLE, "%s: closing %s failed: %s", fn, path, strerror(errno));
    return o.st;
}
