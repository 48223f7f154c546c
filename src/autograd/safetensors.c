/*
 * The safetensors format: an 8-byte little-endian header length, a JSON object mapping each
 * name to {"dtype", "shape", "data_offsets": [begin, end]} (and an optional "__metadata__"
 * of strings), padded with spaces, then the tensors' bytes. The reader's JSON parser takes
 * exactly what that grammar needs, bounds its depth, and checks every offset against the file.
 */
#include <stdlib.h>
#include <string.h>

#include "tensor_file.h"

#define ST_MAX_HEADER (100u << 20) /* the reference implementation's limit */

/* safetensors' names of our types; the block-quantized types have none. */
static const struct {
    wgt_dtype dtype;
    const char *name;
} st_names[] = {
    {WGT_F32, "F32"}, {WGT_F16, "F16"}, {WGT_BF16, "BF16"}, {WGT_I32, "I32"}, {WGT_U32, "U32"},
    {WGT_I16, "I16"}, {WGT_U16, "U16"}, {WGT_I8, "I8"},     {WGT_U8, "U8"},   {WGT_BOOL, "BOOL"},
    {WGT_I64, "I64"}, {WGT_U64, "U64"},
};

static const char *st_dtype(wgt_dtype d) {
    for (size_t i = 0; i < sizeof st_names / sizeof st_names[0]; i++)
        if (st_names[i].dtype == d) return st_names[i].name;
    return NULL;
}

/* ---- writing ---- */

typedef struct {
    char *s;
    size_t n, cap;
    int failed;
} text;

static void put(text *t, const char *s, size_t n) {
    if (t->failed) return;
    if (t->n + n + 1 > t->cap) {
        size_t cap = (t->n + n + 1) * 2;
        char *g = realloc(t->s, cap);
        if (!g) {
            t->failed = 1;
            return;
        }
        t->s = g, t->cap = cap;
    }
    memcpy(t->s + t->n, s, n);
    t->n += n;
    t->s[t->n] = 0;
}
static void puts_(text *t, const char *s) { put(t, s, strlen(s)); }

static void put_json_string(text *t, const char *s) {
    puts_(t, "\"");
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        char esc[8];
        if (ch == '"' || ch == '\\') esc[0] = '\\', esc[1] = (char)ch, esc[2] = 0;
        else if (ch < 0x20) snprintf(esc, sizeof esc, "\\u%04x", ch);
        else esc[0] = (char)ch, esc[1] = 0;
        puts_(t, esc);
    }
    puts_(t, "\"");
}

wgt_status wgt_save_safetensors(const char *path, int n, const char *const *names, wgt_tensor *const *tensors) {
    static const char fn[] = "wgt_save_safetensors";
    if (!path || n < 0 || (n > 0 && (!names || !tensors)))
        return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: path, names or tensors is NULL (n %d)", fn, n);
    for (int i = 0; i < n; i++) {
        char what[32];
        snprintf(what, sizeof what, "tensors[%d]", i);
        if (wgt_check_tensor(fn, what, tensors[i]) != WGT_OK) return wgt_last_status();
        if (!st_dtype(tensors[i]->dtype))
            return wgt_error(WGT_ERR_DTYPE, "%s: %s is %s, which safetensors cannot hold (dequantize it, or write GGUF)",
                             fn, what, wgt_dtype_name(tensors[i]->dtype));
        if (!names[i] || !names[i][0] || !strcmp(names[i], "__metadata__"))
            return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: names[%d] is %s", fn, i,
                             !names[i] ? "NULL" : !names[i][0] ? "empty" : "__metadata__, which the format reserves");
        for (int j = 0; j < i; j++)
            if (!strcmp(names[i], names[j]))
                return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: names[%d] and names[%d] are both \"%s\"", fn, j, i,
                                 names[i]);
    }
    text h = {0};
    uint64_t at = 0;
    puts_(&h, "{");
    for (int i = 0; i < n; i++) {
        char buf[64];
        put_json_string(&h, names[i]);
        snprintf(buf, sizeof buf, ":{\"dtype\":\"%s\",\"shape\":[", st_dtype(tensors[i]->dtype));
        puts_(&h, buf);
        for (int d = 0; d < tensors[i]->ndim; d++) {
            snprintf(buf, sizeof buf, "%s%lld", d ? "," : "", (long long)tensors[i]->shape[d]);
            puts_(&h, buf);
        }
        uint64_t nb = wgt_tensor_nbytes(tensors[i]);
        snprintf(buf, sizeof buf, "],\"data_offsets\":[%llu,%llu]}%s", (unsigned long long)at,
                 (unsigned long long)(at + nb), i + 1 < n ? "," : "");
        puts_(&h, buf);
        at += nb;
    }
    puts_(&h, "}");
    while (!h.failed && h.n % 8) puts_(&h, " "); /* the data starts aligned */
    if (h.failed) {
        free(h.s);
        return wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
    }
    unsigned char len[8];
    for (int i = 0; i < 8; i++) len[i] = (unsigned char)((uint64_t)h.n >> (8 * i));
    wgt_status st = WGT_OK;
    FILE *f = fopen(path, "wb");
    if (!f) st = wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: cannot create %s", fn, path);
    if (st == WGT_OK) st = wgt_file_write(fn, path, f, len, 8);
    if (st == WGT_OK) st = wgt_file_write(fn, path, f, h.s, h.n);
    for (int i = 0; i < n && st == WGT_OK; i++) {
        size_t nb;
        void *data = wgt_file_tensor_bytes(fn, tensors[i], &nb);
        st = data ? wgt_file_write(fn, path, f, data, nb) : wgt_last_status();
        free(data);
    }
    if (f && fclose(f) != 0 && st == WGT_OK) st = wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: cannot write %s", fn, path);
    free(h.s);
    return st;
}

/* ---- reading: the JSON header ---- */

typedef struct {
    const char *p, *end;
    const char *why; /* the first thing found wrong */
} json;

static void ws(json *j) {
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) j->p++;
}
static int fail(json *j, const char *why) {
    if (!j->why) j->why = why;
    return 0;
}
static int lit(json *j, char ch) {
    ws(j);
    if (j->p < j->end && *j->p == ch) return j->p++, 1;
    return 0;
}

/* A string into buf (NUL-terminated; escapes decoded, \u to UTF-8 for the BMP). */
static int jstring(json *j, char *buf, size_t size) {
    ws(j);
    if (j->p >= j->end || *j->p != '"') return fail(j, "a name or type is not a string");
    j->p++;
    size_t n = 0;
    while (j->p < j->end && *j->p != '"') {
        char ch = *j->p++;
        unsigned u = (unsigned char)ch;
        if (ch == '\\') {
            if (j->p >= j->end) break;
            char e = *j->p++;
            if (e == 'u') {
                if (j->end - j->p < 4) break;
                u = 0;
                for (int k = 0; k < 4; k++) {
                    char hx = *j->p++;
                    u = u * 16 + (unsigned)(hx >= '0' && hx <= '9' ? hx - '0' : hx >= 'a' && hx <= 'f' ? hx - 'a' + 10
                                            : hx >= 'A' && hx <= 'F' ? hx - 'A' + 10 : 99);
                }
                if (u > 0xffff) return fail(j, "a string has a bad \\u escape");
            } else {
                const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t", *at = strchr(from, e);
                if (!at || !e) return fail(j, "a string has a bad escape");
                u = (unsigned char)to[at - from];
            }
        }
        char enc[3];
        size_t m = 1;
        if (u < 0x80) enc[0] = (char)u;
        else if (u < 0x800) enc[0] = (char)(0xc0 | u >> 6), enc[1] = (char)(0x80 | (u & 0x3f)), m = 2;
        else enc[0] = (char)(0xe0 | u >> 12), enc[1] = (char)(0x80 | ((u >> 6) & 0x3f)), enc[2] = (char)(0x80 | (u & 0x3f)), m = 3;
        if (n + m >= size) return fail(j, "a name is longer than 4095 bytes");
        memcpy(buf + n, enc, m);
        n += m;
    }
    if (j->p >= j->end) return fail(j, "a string is not closed");
    j->p++;
    buf[n] = 0;
    return 1;
}

static int juint(json *j, uint64_t *v) {
    ws(j);
    const char *start = j->p;
    uint64_t x = 0;
    while (j->p < j->end && *j->p >= '0' && *j->p <= '9') {
        if (x > (UINT64_MAX - 9) / 10) return fail(j, "a number is too large");
        x = x * 10 + (uint64_t)(*j->p++ - '0');
    }
    *v = x;
    return j->p > start ? 1 : fail(j, "a size or offset is not a whole number");
}

/* Skips any JSON value (for __metadata__), at most 32 levels deep. */
static int jskip(json *j, int depth) {
    char buf[4096];
    ws(j);
    if (depth > 32) return fail(j, "the header nests too deeply");
    if (j->p >= j->end) return fail(j, "the header ends inside a value");
    if (*j->p == '"') return jstring(j, buf, sizeof buf);
    if (*j->p == '{' || *j->p == '[') {
        char close = *j->p == '{' ? '}' : ']';
        int object = close == '}';
        j->p++;
        if (lit(j, close)) return 1;
        do {
            if (object && (!jstring(j, buf, sizeof buf) || !lit(j, ':'))) return fail(j, "an object's key is bad");
            if (!jskip(j, depth + 1)) return 0;
        } while (lit(j, ','));
        return lit(j, close) ? 1 : fail(j, "an object or array is not closed");
    }
    while (j->p < j->end && (strchr("+-.eE", *j->p) || (*j->p >= '0' && *j->p <= '9') || (*j->p >= 'a' && *j->p <= 'z')))
        j->p++;
    return 1;
}

typedef struct {
    wgt_dtype dtype;
    int ndim;
    int64_t shape[WGT_MAX_DIMS];
    uint64_t begin, end;
} st_entry;

static int jentry(json *j, st_entry *e) {
    int have = 0;
    if (!lit(j, '{')) return fail(j, "a tensor's entry is not an object");
    if (lit(j, '}')) return fail(j, "a tensor's entry is empty");
    do {
        char key[32], val[16];
        if (!jstring(j, key, sizeof key) || !lit(j, ':')) return fail(j, "a tensor's entry has a bad key");
        if (!strcmp(key, "dtype")) {
            if (!jstring(j, val, sizeof val)) return 0;
            e->dtype = (wgt_dtype)0;
            for (size_t k = 0; k < sizeof st_names / sizeof st_names[0]; k++)
                if (!strcmp(val, st_names[k].name)) e->dtype = st_names[k].dtype;
            if (!e->dtype) return fail(j, "a tensor's type is not F32, F16, BF16, I64, U64, I32, U32, I16, U16, I8, U8 or BOOL");
            have |= 1;
        } else if (!strcmp(key, "shape")) {
            if (!lit(j, '[')) return fail(j, "a shape is not an array");
            e->ndim = 0;
            if (!lit(j, ']')) {
                do {
                    uint64_t v;
                    if (e->ndim == WGT_MAX_DIMS) return fail(j, "a shape has more than 8 dimensions");
                    if (!juint(j, &v) || v > (uint64_t)INT64_MAX) return fail(j, "a shape holds a bad size");
                    e->shape[e->ndim++] = (int64_t)v;
                } while (lit(j, ','));
                if (!lit(j, ']')) return fail(j, "a shape is not closed");
            }
            have |= 2;
        } else if (!strcmp(key, "data_offsets")) {
            if (!lit(j, '[') || !juint(j, &e->begin) || !lit(j, ',') || !juint(j, &e->end) || !lit(j, ']'))
                return fail(j, "data_offsets is not [begin, end]");
            have |= 4;
        } else {
            return fail(j, "a tensor's entry has an unknown key");
        }
    } while (lit(j, ','));
    if (!lit(j, '}')) return fail(j, "a tensor's entry is not closed");
    return have == 7 ? 1 : fail(j, "a tensor's entry lacks dtype, shape or data_offsets");
}

/* Reads the header of path; calls visit for each tensor (stop when it returns 0). */
typedef int (*st_visit)(const char *name, const st_entry *e, void *arg);

static wgt_status read_header(const char *fn, const char *path, FILE **fp, uint64_t *data_start, uint64_t *data_size,
                              st_visit visit, void *arg) {
    uint64_t size;
    FILE *f = wgt_file_open_read(fn, path, &size);
    if (!f) return wgt_last_status();
    unsigned char lenb[8];
    char *head = NULL, *name = NULL;
    const char *why = NULL;
    wgt_status st = wgt_file_read(fn, path, f, lenb, 8);
    uint64_t hlen = 0;
    for (int i = 0; i < 8; i++) hlen |= (uint64_t)lenb[i] << (8 * i);
    if (st == WGT_OK && (hlen > ST_MAX_HEADER || hlen > size - 8)) why = "its header length passes the file's end";
    if (st == WGT_OK && !why && (!(head = malloc(hlen + 1)) || !(name = malloc(4096))))
        st = wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
    if (st == WGT_OK && !why) st = wgt_file_read(fn, path, f, head, (size_t)hlen);
    if (st == WGT_OK && !why) {
        json j = {head, head + hlen, NULL};
        uint64_t dsize = size - 8 - hlen;
        int go = 1;
        if (!lit(&j, '{')) fail(&j, "the header is not a JSON object");
        else if (!lit(&j, '}')) {
            do {
                if (!jstring(&j, name, 4096) || !lit(&j, ':')) {
                    fail(&j, "a key is bad");
                    break;
                }
                if (!strcmp(name, "__metadata__")) {
                    if (!jskip(&j, 0)) break;
                    continue;
                }
                st_entry e = {0};
                if (!jentry(&j, &e)) break;
                size_t es = wgt_dtype_size(e.dtype);
                int64_t n = wgt_file_numel(e.ndim, e.shape, es, dsize);
                if (e.begin > e.end || e.end > dsize || n < 0 || (uint64_t)n * es != e.end - e.begin) {
                    fail(&j, "a tensor's data_offsets do not match its shape and type or pass the file's end");
                    break;
                }
                if (go) go = visit(name, &e, arg);
            } while (lit(&j, ','));
            if (!j.why && !lit(&j, '}')) fail(&j, "the header object is not closed");
        }
        why = j.why;
        *data_start = 8 + hlen;
        *data_size = dsize;
    }
    if (why) st = wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: %s is not a safetensors file wgtensor reads: %s", fn, path, why);
    free(head);
    free(name);
    if (st != WGT_OK) fclose(f);
    else *fp = f;
    return st;
}

typedef struct {
    const char *want;
    st_entry found;
    int hit;
} lookup;

static int find(const char *name, const st_entry *e, void *arg) {
    lookup *l = arg;
    if (strcmp(name, l->want)) return 1;
    l->found = *e;
    l->hit = 1;
    return 0;
}

wgt_tensor *wgt_load_safetensors(wgt_context *ctx, const char *path, const char *name, unsigned usage) {
    static const char fn[] = "wgt_load_safetensors";
    if (wgt_check_context(fn, ctx) != WGT_OK) return NULL;
    if (!name) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: name is NULL", fn);
        return NULL;
    }
    lookup l = {name, {0}, 0};
    FILE *f = NULL;
    uint64_t start, dsize;
    if (read_header(fn, path, &f, &start, &dsize, find, &l) != WGT_OK) return NULL;
    wgt_tensor *t = NULL;
    void *data = NULL;
    size_t nb = (size_t)(l.found.end - l.found.begin);
    if (!l.hit) wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: %s holds no tensor called \"%s\"", fn, path, name);
    else if (!(data = malloc(nb ? nb : 1))) wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory for %zu bytes", fn, nb);
    else if (fseek(f, (long)(start + l.found.begin), SEEK_SET) != 0)
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: cannot seek in %s", fn, path);
    else if (wgt_file_read(fn, path, f, data, nb) == WGT_OK)
        t = wgt_tensor_from_data(ctx, l.found.dtype, l.found.ndim, l.found.shape, data, nb, usage);
    free(data);
    fclose(f);
    return t;
}

static int collect(const char *name, const st_entry *e, void *arg) {
    text *t = arg;
    puts_(t, name);
    puts_(t, "\n");
    return 1;
}

char *wgt_safetensors_names(const char *path) {
    text t = {0};
    FILE *f = NULL;
    uint64_t start, dsize;
    puts_(&t, "");
    if (read_header("wgt_safetensors_names", path, &f, &start, &dsize, collect, &t) != WGT_OK) {
        free(t.s);
        return NULL;
    }
    fclose(f);
    if (t.failed) {
        free(t.s);
        wgt_error(WGT_ERR_OUT_OF_MEMORY, "wgt_safetensors_names: out of host memory");
        return NULL;
    }
    return t.s;
}
