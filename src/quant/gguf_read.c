/*
 * Reading GGUF files: the header, metadata and tensor descriptions are parsed and checked
 * at open; tensor bytes are read only when a tensor is loaded, straight into its storage in
 * chunks. Every count and length is checked against the bytes left in the file before
 * anything is allocated for it, so a hostile header costs at most the file's size.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/node.h"
#include "gguf_format.h"

struct wgt_gguf {
    FILE *f;
    char *path;
    uint32_t version, alignment;
    uint64_t size, data_start;
    int64_t nkv, ntensors;
    wgt_gguf_kv *kvs;
    wgt_gguf_tensor_info *tensors;
};

typedef struct {
    FILE *f;
    uint64_t pos, size;
    const char *what; /* the part being read, for messages */
} reader;

static const char fn_open[] = "wgt_gguf_open";

static wgt_status bad(const reader *r, const char *fmt, const char *detail) {
    char buf[512];
    snprintf(buf, sizeof buf, fmt, detail);
    return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: not a valid GGUF file: %s (%s, at byte %llu of %llu)", fn_open,
                     buf, r->what, (unsigned long long)r->pos, (unsigned long long)r->size);
}

static wgt_status read_bytes(reader *r, void *dst, uint64_t n) {
    if (n > r->size - r->pos) return bad(r, "%s", "the file ends early (truncated)");
    if (n && fread(dst, 1, (size_t)n, r->f) != n)
        return wgt_error(WGT_ERR_UNAVAILABLE, "%s: read failed at byte %llu: %s", fn_open, (unsigned long long)r->pos,
                         strerror(errno));
    r->pos += n;
    return WGT_OK;
}

static wgt_status read_u32(reader *r, uint32_t *v) { return read_bytes(r, v, 4); }
static wgt_status read_u64(reader *r, uint64_t *v) { return read_bytes(r, v, 8); }

/* A count of items of at least `each` bytes: it cannot exceed what is left of the file. */
static wgt_status check_count(reader *r, uint64_t count, uint64_t each, const char *what) {
    if (each && count > (r->size - r->pos) / each) {
        char d[160];
        snprintf(d, sizeof d, "%s %llu cannot fit in the %llu bytes left", what, (unsigned long long)count,
                 (unsigned long long)(r->size - r->pos));
        return bad(r, "%s", d);
    }
    return WGT_OK;
}

static wgt_status read_string(reader *r, wgt_gguf_string *s) {
    uint64_t len;
    wgt_status st = read_u64(r, &len);
    if (st != WGT_OK || (st = check_count(r, len, 1, "a string length")) != WGT_OK) return st;
    char *p = malloc((size_t)len + 1);
    if (!p) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory for a %llu-byte string", fn_open,
                             (unsigned long long)len);
    if ((st = read_bytes(r, p, len)) != WGT_OK) {
        free(p);
        return st;
    }
    p[len] = 0;
    s->len = len;
    s->data = p;
    return WGT_OK;
}

/* count values of scalar or string type t into a new array. */
static wgt_status read_values(reader *r, uint32_t t, uint64_t count, const void **out) {
    size_t es = wgt_gguf_elem_size(t);
    if (es == 0) {
        char d[64];
        snprintf(d, sizeof d, "value type %u", t);
        return bad(r, "unknown %s", d);
    }
    wgt_status st = check_count(r, count, t == WGT_GGUF_STRING ? 8 : es, "an array length");
    if (st != WGT_OK) return st;
    void *data = calloc(count ? (size_t)count : 1, es);
    if (!data) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory for %llu values", fn_open,
                                (unsigned long long)count);
    if (t != WGT_GGUF_STRING) {
        st = read_bytes(r, data, count * es);
    } else {
        wgt_gguf_string *s = data;
        for (uint64_t i = 0; i < count && st == WGT_OK; i++) st = read_string(r, &s[i]);
    }
    *out = data; /* freed by the caller's free_kv, strings and all, on failure too */
    return st;
}

static wgt_status read_kv(reader *r, wgt_gguf_kv *kv) {
    wgt_gguf_string key;
    uint32_t type;
    wgt_status st = read_string(r, &key);
    if (st != WGT_OK) return st;
    kv->key = key.data;
    if ((st = read_u32(r, &type)) != WGT_OK) return st;
    kv->type = (wgt_gguf_type)type;
    if (type == WGT_GGUF_ARRAY) {
        uint32_t et;
        uint64_t n;
        if ((st = read_u32(r, &et)) != WGT_OK || (st = read_u64(r, &n)) != WGT_OK) return st;
        if (et == WGT_GGUF_ARRAY) return bad(r, "%s", "an array of arrays, which wgtensor does not read");
        kv->elem_type = (wgt_gguf_type)et;
        kv->count = n;
        return read_values(r, et, n, &kv->data);
    }
    kv->elem_type = (wgt_gguf_type)type;
    kv->count = 1;
    return read_values(r, type, 1, &kv->data);
}

static wgt_status read_tensor_info(reader *r, wgt_gguf_tensor_info *t) {
    wgt_gguf_string name;
    uint32_t ndim, type;
    wgt_status st = read_string(r, &name);
    if (st != WGT_OK) return st;
    t->name = name.data;
    if ((st = read_u32(r, &ndim)) != WGT_OK) return st;
    if (ndim > WGT_GGUF_MAX_DIMS) {
        char d[96];
        snprintf(d, sizeof d, "tensor '%.40s' has %u dimensions, more than %d", name.data, ndim, WGT_GGUF_MAX_DIMS);
        return bad(r, "%s", d);
    }
    t->ndim = (int)ndim;
    uint64_t ne[WGT_GGUF_MAX_DIMS], numel = 1;
    for (uint32_t d = 0; d < ndim; d++) {
        if ((st = read_u64(r, &ne[d])) != WGT_OK) return st;
        if (ne[d] > (uint64_t)INT64_MAX || (ne[d] && numel > (uint64_t)INT64_MAX / ne[d])) {
            char m[96];
            snprintf(m, sizeof m, "tensor '%.40s' has more elements than 2^63", name.data);
            return bad(r, "%s", m);
        }
        numel *= ne[d];
        t->shape[ndim - 1 - d] = (int64_t)ne[d]; /* GGUF lists the innermost first */
    }
    if ((st = read_u32(r, &type)) != WGT_OK || (st = read_u64(r, &t->offset)) != WGT_OK) return st;
    t->ggml_type = type;
    t->dtype = wgt_gguf_dtype(type);
    if (t->dtype) {
        int64_t b = wgt_dtype_block_elements(t->dtype);
        if (b > 1 && (ndim == 0 || ne[0] % (uint64_t)b != 0)) {
            char m[128];
            snprintf(m, sizeof m, "tensor '%.40s' of %s has a row that is not whole blocks", name.data,
                     wgt_dtype_name(t->dtype));
            return bad(r, "%s", m);
        }
        t->nbytes = (uint64_t)(numel / (uint64_t)b) * wgt_dtype_block_bytes(t->dtype);
        if (numel / (uint64_t)b > UINT64_MAX / wgt_dtype_block_bytes(t->dtype)) return bad(r, "%s", "a tensor too large");
    }
    return WGT_OK;
}

void wgt_gguf_close(wgt_gguf *g) {
    if (!g) return;
    if (g->f) fclose(g->f);
    for (int64_t i = 0; i < g->nkv; i++) wgt_gguf_free_kv(&g->kvs[i]);
    for (int64_t i = 0; i < g->ntensors; i++) free((char *)g->tensors[i].name);
    free(g->kvs);
    free(g->tensors);
    free(g->path);
    free(g);
}

/* general.alignment, when present: a u32 power of two. */
static wgt_status find_alignment(wgt_gguf *g, reader *r) {
    g->alignment = WGT_GGUF_DEFAULT_ALIGNMENT;
    const wgt_gguf_kv *kv = wgt_gguf_find_kv(g, "general.alignment");
    if (!kv) return WGT_OK;
    uint32_t a = kv->type == WGT_GGUF_UINT32 ? *(const uint32_t *)kv->data : 0;
    if (a == 0 || (a & (a - 1)) != 0) return bad(r, "%s", "general.alignment is not a u32 power of two");
    g->alignment = a;
    return WGT_OK;
}

/* Each tensor's bytes must start aligned, lie inside the file and not overlap another's. */
static wgt_status check_tensors(wgt_gguf *g, reader *r) {
    uint64_t data = g->data_start, avail = g->size - data;
    for (int64_t i = 0; i < g->ntensors; i++) {
        wgt_gguf_tensor_info *t = &g->tensors[i];
        char d[256];
        if (t->offset % g->alignment != 0) {
            snprintf(d, sizeof d, "tensor '%.60s' starts at data offset %llu, not a multiple of the alignment %u",
                     t->name, (unsigned long long)t->offset, g->alignment);
            return bad(r, "%s", d);
        }
        if (t->dtype && (t->offset > avail || t->nbytes > avail - t->offset)) {
            snprintf(d, sizeof d, "tensor '%.60s' (%llu bytes at data offset %llu) reaches past the end of the file",
                     t->name, (unsigned long long)t->nbytes, (unsigned long long)t->offset);
            return bad(r, "%s", d);
        }
        t->offset += data;
        for (int64_t j = 0; j < i; j++)
            if (strcmp(g->tensors[j].name, t->name) == 0) {
                snprintf(d, sizeof d, "two tensors are named '%.60s'", t->name);
                return bad(r, "%s", d);
            }
    }
    return WGT_OK;
}

wgt_gguf *wgt_gguf_open(const char *path) {
    if (!path) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: path is NULL", fn_open);
        return NULL;
    }
    wgt_gguf *g = calloc(1, sizeof *g);
    if (!g || !(g->path = strdup(path))) {
        free(g);
        wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn_open);
        return NULL;
    }
    if (!(g->f = fopen(path, "rb"))) {
        wgt_error(WGT_ERR_UNAVAILABLE, "%s: cannot open %s: %s", fn_open, path, strerror(errno));
        wgt_gguf_close(g);
        return NULL;
    }
    reader r = {g->f, 0, 0, "the header"};
    long end;
    if (fseek(g->f, 0, SEEK_END) != 0 || (end = ftell(g->f)) < 0 || fseek(g->f, 0, SEEK_SET) != 0) {
        wgt_error(WGT_ERR_UNAVAILABLE, "%s: cannot find the size of %s: %s", fn_open, path, strerror(errno));
        wgt_gguf_close(g);
        return NULL;
    }
    g->size = r.size = (uint64_t)end;
    uint32_t magic;
    uint64_t nt, nkv;
    wgt_status st = read_u32(&r, &magic);
    if (st == WGT_OK && magic != WGT_GGUF_MAGIC) st = bad(&r, "%s", "the magic is not \"GGUF\"");
    if (st == WGT_OK && (st = read_u32(&r, &g->version)) == WGT_OK && g->version != 2 && g->version != 3) {
        char d[64];
        snprintf(d, sizeof d, "version %u (wgtensor reads 2 and 3)", g->version);
        st = bad(&r, "%s", d);
    }
    if (st == WGT_OK) st = read_u64(&r, &nt);
    if (st == WGT_OK) st = read_u64(&r, &nkv);
    /* A metadata entry takes at least 8 + 4 + 1 bytes, a tensor description 8 + 4 + 4 + 8. */
    if (st == WGT_OK) st = check_count(&r, nkv, 13, "a metadata count");
    if (st == WGT_OK) st = check_count(&r, nt, 24, "a tensor count");
    if (st == WGT_OK && (!(g->kvs = calloc(nkv ? nkv : 1, sizeof *g->kvs)) ||
                         !(g->tensors = calloc(nt ? nt : 1, sizeof *g->tensors))))
        st = wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory for the header", fn_open);
    char what[96];
    for (uint64_t i = 0; st == WGT_OK && i < nkv; i++) {
        snprintf(what, sizeof what, "metadata entry %llu", (unsigned long long)i);
        r.what = what;
        g->nkv = (int64_t)i + 1; /* freed on failure, partly read or not */
        st = read_kv(&r, &g->kvs[i]);
        for (uint64_t j = 0; st == WGT_OK && j < i; j++)
            if (strcmp(g->kvs[j].key, g->kvs[i].key) == 0) st = bad(&r, "the key '%s' appears twice", g->kvs[i].key);
    }
    for (uint64_t i = 0; st == WGT_OK && i < nt; i++) {
        snprintf(what, sizeof what, "tensor description %llu", (unsigned long long)i);
        r.what = what;
        g->ntensors = (int64_t)i + 1;
        st = read_tensor_info(&r, &g->tensors[i]);
    }
    r.what = "the tensor data";
    if (st == WGT_OK) st = find_alignment(g, &r);
    if (st == WGT_OK) {
        uint64_t pad = (g->alignment - r.pos % g->alignment) % g->alignment;
        g->data_start = r.pos + pad;
        if (nt > 0 && g->data_start > g->size) st = bad(&r, "%s", "the file ends before its tensor data");
        else if (g->data_start > g->size) g->data_start = g->size;
    }
    if (st == WGT_OK) st = check_tensors(g, &r);
    if (st != WGT_OK) {
        wgt_gguf_close(g);
        return NULL;
    }
    return g;
}

uint32_t wgt_gguf_version(const wgt_gguf *g) { return g ? g->version : 0; }
int64_t wgt_gguf_kv_count(const wgt_gguf *g) { return g ? g->nkv : 0; }
int64_t wgt_gguf_tensor_count(const wgt_gguf *g) { return g ? g->ntensors : 0; }

const wgt_gguf_kv *wgt_gguf_kv_at(const wgt_gguf *g, int64_t i) {
    return g && i >= 0 && i < g->nkv ? &g->kvs[i] : NULL;
}

const wgt_gguf_kv *wgt_gguf_find_kv(const wgt_gguf *g, const char *key) {
    for (int64_t i = 0; g && key && i < g->nkv; i++)
        if (strcmp(g->kvs[i].key, key) == 0) return &g->kvs[i];
    return NULL;
}

const wgt_gguf_tensor_info *wgt_gguf_tensor_at(const wgt_gguf *g, int64_t i) {
    return g && i >= 0 && i < g->ntensors ? &g->tensors[i] : NULL;
}

int64_t wgt_gguf_find_tensor(const wgt_gguf *g, const char *name) {
    for (int64_t i = 0; g && name && i < g->ntensors; i++)
        if (strcmp(g->tensors[i].name, name) == 0) return i;
    return -1;
}

#define LOAD_CHUNK ((size_t)4 << 20)

/* A block tensor's bytes, chunk by chunk of an even number of blocks, into s's buffer in the
 * device layout (block_layout.c): each chunk's values to their place in the first part, its
 * scales (whole words: the chunk starts on an even block) to theirs in the second. */
static wgt_status stream_blocks(wgt_gguf *g, const wgt_gguf_tensor_info *t, wgt_storage *s, char *chunk) {
    static const char fn[] = "wgt_gguf_load";
    wgt_backend *be = s->ctx->backend;
    size_t bb = wgt_dtype_block_bytes(s->block_dtype), qb = wgt_block_values_bytes(s->block_dtype);
    size_t blocks = (size_t)(t->nbytes / bb), per = LOAD_CHUNK / bb / 2 * 2; /* blocks per chunk */
    unsigned char *split = malloc(per * bb + 4);
    if (!split) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory for a read chunk", fn);
    wgt_status st = WGT_OK;
    for (size_t b0 = 0; b0 < blocks && st == WGT_OK; b0 += per) {
        size_t n = blocks - b0 < per ? blocks - b0 : per;
        if (fread(chunk, 1, n * bb, g->f) != n * bb) {
            st = wgt_error(WGT_ERR_UNAVAILABLE, "%s: reading '%s' from %s failed", fn, t->name, g->path);
            break;
        }
        wgt_blocks_split(s->block_dtype, (const unsigned char *)chunk, split, n);
        memset(split + n * bb, 0, 2); /* an odd last chunk's scales end inside a word */
        st = be->buffer_write(be, s->buffer, b0 * qb, split, n * qb);
        if (st == WGT_OK)
            st = be->buffer_write(be, s->buffer, blocks * qb + 2 * b0, split + n * qb, (2 * n + 3) & ~(size_t)3);
    }
    free(split);
    return st;
}

/* Streams t's bytes from the file into s: into the host copy on a host-resident backend, else
 * chunk by chunk into the device buffer (whole words; the last chunk's tail padded). */
static wgt_status stream_into(wgt_gguf *g, const wgt_gguf_tensor_info *t, wgt_storage *s) {
    static const char fn[] = "wgt_gguf_load";
    wgt_backend *be = s->ctx->backend;
    if (fseek(g->f, (long)t->offset, SEEK_SET) != 0)
        return wgt_error(WGT_ERR_UNAVAILABLE, "%s: cannot seek in %s: %s", fn, g->path, strerror(errno));
    if (be->host_resident) {
        wgt_status st = wgt_storage_sync_host(s);
        if (st != WGT_OK) return st;
        if (fread(s->host, 1, (size_t)t->nbytes, g->f) != t->nbytes)
            return wgt_error(WGT_ERR_UNAVAILABLE, "%s: reading '%s' from %s failed", fn, t->name, g->path);
        s->device_valid = 0;
        return WGT_OK;
    }
    wgt_status st = WGT_OK;
    if (!s->buffer && (st = be->buffer_create(be, s->alloc_bytes, 0, &s->buffer)) != WGT_OK) return st;
    char *chunk = malloc(LOAD_CHUNK);
    if (!chunk) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory for a read chunk", fn);
    if (s->block_dtype) st = stream_blocks(g, t, s, chunk);
    for (uint64_t done = 0; !s->block_dtype && done < t->nbytes && st == WGT_OK;) {
        size_t n = t->nbytes - done < LOAD_CHUNK ? (size_t)(t->nbytes - done) : LOAD_CHUNK;
        if (fread(chunk, 1, n, g->f) != n) {
            st = wgt_error(WGT_ERR_UNAVAILABLE, "%s: reading '%s' from %s failed", fn, t->name, g->path);
            break;
        }
        size_t words = (n + 3) & ~(size_t)3; /* only the last chunk can end inside a word */
        memset(chunk + n, 0, words - n);
        st = be->buffer_write(be, s->buffer, (size_t)done, chunk, words);
        done += n;
    }
    free(chunk);
    if (st != WGT_OK) return st;
    s->device_valid = 1;
    s->host_valid = 0;
    return WGT_OK;
}

wgt_tensor *wgt_gguf_load(wgt_gguf *g, wgt_context *ctx, const char *name, unsigned usage) {
    static const char fn[] = "wgt_gguf_load";
    if (!g || !name) {
        wgt_error_if_clear(WGT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, !g ? "the file" : "name");
        return NULL;
    }
    if (wgt_check_context(fn, ctx) != WGT_OK) return NULL;
    int64_t i = wgt_gguf_find_tensor(g, name);
    if (i < 0) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: %s has no tensor named '%s'", fn, g->path, name);
        return NULL;
    }
    const wgt_gguf_tensor_info *t = &g->tensors[i];
    if (!t->dtype) {
        wgt_error(WGT_ERR_DTYPE, "%s: tensor '%s' has ggml type %u, which wgtensor does not hold "
                  "(f32, f16, i32, q8_0 and q4_0 only)", fn, name, t->ggml_type);
        return NULL;
    }
    wgt_tensor *out = wgt_tensor_new(ctx, fn, t->dtype, t->ndim, t->shape, usage);
    if (!out) return NULL;
    if (t->nbytes && stream_into(g, t, out->storage) != WGT_OK) {
        wgt_release(out);
        return NULL;
    }
    return out;
}
