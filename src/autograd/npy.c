/*
 * NumPy's .npy format: a magic string, a version, a header length, a Python dict literal
 * ({'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }) padded with spaces to a
 * multiple of 64 bytes, then the elements. The reader parses only that dict's grammar and
 * checks every size against the file before allocating, so a malformed file is an error.
 */
#include <stdlib.h>
#include <string.h>

#include "tensor_file.h"

#define NPY_MAX_HEADER (1u << 20) /* NumPy itself refuses headers past about 10 KB */

/* NumPy's names of our types, as np.save writes them; bf16 and the block-quantized types
 * have none. */
static const struct {
    wgt_dtype dtype;
    const char *descr;
} descrs[] = {
    {WGT_F32, "<f4"}, {WGT_F16, "<f2"}, {WGT_I32, "<i4"}, {WGT_U32, "<u4"}, {WGT_I16, "<i2"},
    {WGT_U16, "<u2"}, {WGT_I8, "|i1"},  {WGT_U8, "|u1"},  {WGT_BOOL, "|b1"},
    {WGT_I64, "<i8"}, {WGT_U64, "<u8"},
};

static const char *descr_of(wgt_dtype d) {
    for (size_t i = 0; i < sizeof descrs / sizeof descrs[0]; i++)
        if (descrs[i].dtype == d) return descrs[i].descr;
    return NULL;
}

/* The type a descr names: "<" (or "=", native here) for the multi-byte types, "|" for the
 * one-byte ones (NumPy also accepts "<" and "=" there). */
static wgt_dtype dtype_of_descr(const char *v) {
    if (v[0] != '<' && v[0] != '=' && v[0] != '|') return (wgt_dtype)0;
    for (size_t i = 0; i < sizeof descrs / sizeof descrs[0]; i++)
        if (!strcmp(v + 1, descrs[i].descr + 1) && (v[0] != '|' || descrs[i].descr[0] == '|')) return descrs[i].dtype;
    return (wgt_dtype)0;
}

wgt_status wgt_save_npy(wgt_tensor *t, const char *path) {
    static const char fn[] = "wgt_save_npy";
    if (wgt_check_tensor(fn, "t", t) != WGT_OK) return wgt_last_status();
    if (!path) return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: path is NULL", fn);
    if (!descr_of(t->dtype))
        return wgt_error(WGT_ERR_DTYPE, "%s: t is %s, which .npy cannot hold (dequantize it, or write GGUF)", fn,
                         wgt_dtype_name(t->dtype));
    char dict[512];
    int len = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr_of(t->dtype));
    for (int d = 0; d < t->ndim; d++)
        len += snprintf(dict + len, sizeof dict - (size_t)len, "%lld,%s", (long long)t->shape[d],
                        d + 1 < t->ndim ? " " : "");
    if (t->ndim > 1) len--; /* (3, 4) rather than (3, 4,); a 1-tuple keeps its comma */
    len += snprintf(dict + len, sizeof dict - (size_t)len, "), }");
    /* Padded with spaces and a newline so the data starts at a multiple of 64 bytes. */
    size_t pre = 10, total = (pre + (size_t)len + 1 + 63) / 64 * 64, hlen = total - pre;
    char *head = malloc(total);
    if (!head) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
    memcpy(head, "\x93NUMPY\x01\x00", 8);
    head[8] = (char)(hlen & 0xff), head[9] = (char)(hlen >> 8);
    memset(head + pre, ' ', hlen);
    memcpy(head + pre, dict, (size_t)len);
    head[total - 1] = '\n';
    size_t nbytes;
    void *data = wgt_file_tensor_bytes(fn, t, &nbytes);
    if (!data) {
        free(head);
        return wgt_last_status();
    }
    wgt_status st = WGT_OK;
    FILE *f = fopen(path, "wb");
    if (!f) st = wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: cannot create %s", fn, path);
    if (st == WGT_OK) st = wgt_file_write(fn, path, f, head, total);
    if (st == WGT_OK) st = wgt_file_write(fn, path, f, data, nbytes);
    if (f && fclose(f) != 0 && st == WGT_OK) st = wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: cannot write %s", fn, path);
    free(head);
    free(data);
    return st;
}

/* ---- reading: the header dict ---- */

typedef struct {
    const char *p, *end;
} cursor;

static void skip_space(cursor *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) c->p++;
}

static int eat(cursor *c, char ch) {
    skip_space(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return 1;
    }
    return 0;
}

/* A quoted string (either quote) into buf. */
static int string(cursor *c, char *buf, size_t size) {
    skip_space(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return 0;
    char q = *c->p++;
    size_t n = 0;
    while (c->p < c->end && *c->p != q) {
        if (n + 1 >= size) return 0;
        buf[n++] = *c->p++;
    }
    if (c->p >= c->end) return 0;
    c->p++;
    buf[n] = 0;
    return 1;
}

static int word(cursor *c, const char *w) {
    skip_space(c);
    size_t n = strlen(w);
    if ((size_t)(c->end - c->p) >= n && memcmp(c->p, w, n) == 0) {
        c->p += n;
        return 1;
    }
    return 0;
}

static int number(cursor *c, int64_t *v) {
    skip_space(c);
    int64_t x = 0;
    const char *start = c->p;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        if (x > (INT64_MAX - 9) / 10) return 0;
        x = x * 10 + (*c->p++ - '0');
    }
    if (c->p < c->end && *c->p == 'L') c->p++; /* Python 2's long */
    *v = x;
    return c->p > start;
}

typedef struct {
    wgt_dtype dtype;
    int fortran;
    int ndim;
    int64_t shape[WGT_MAX_DIMS];
} npy_header;

static const char *parse_header(cursor *c, npy_header *h) {
    int have_descr = 0, have_order = 0, have_shape = 0;
    if (!eat(c, '{')) return "the header is not a dict";
    while (!eat(c, '}')) {
        char key[32], val[32];
        if (!string(c, key, sizeof key) || !eat(c, ':')) return "the header's keys are not quoted names";
        if (!strcmp(key, "descr")) {
            if (!string(c, val, sizeof val)) return "descr is not a string";
            h->dtype = dtype_of_descr(val);
            if (!h->dtype) return "its type is not one of <f4, <f2, <i8, <u8, <i4, <u4, <i2, <u2, |i1, |u1, |b1";
            have_descr = 1;
        } else if (!strcmp(key, "fortran_order")) {
            if (word(c, "True")) h->fortran = 1;
            else if (word(c, "False")) h->fortran = 0;
            else return "fortran_order is not True or False";
            have_order = 1;
        } else if (!strcmp(key, "shape")) {
            if (!eat(c, '(')) return "shape is not a tuple";
            h->ndim = 0;
            while (!eat(c, ')')) {
                if (h->ndim == WGT_MAX_DIMS) return "shape has more than 8 dimensions";
                if (!number(c, &h->shape[h->ndim])) return "shape holds something other than sizes";
                h->ndim++;
                if (!eat(c, ',')) {
                    if (!eat(c, ')')) return "shape is not a tuple";
                    break;
                }
            }
            have_shape = 1;
        } else {
            return "the header has an unknown key";
        }
        if (!eat(c, ',')) {
            if (!eat(c, '}')) return "the header dict is not closed";
            break;
        }
    }
    if (!have_descr || !have_order || !have_shape) return "the header lacks descr, fortran_order or shape";
    return NULL;
}

wgt_tensor *wgt_load_npy(wgt_context *ctx, const char *path, unsigned usage) {
    static const char fn[] = "wgt_load_npy";
    if (wgt_check_context(fn, ctx) != WGT_OK) return NULL;
    uint64_t size;
    FILE *f = wgt_file_open_read(fn, path, &size);
    if (!f) return NULL;
    unsigned char pre[12];
    char *head = NULL;
    void *data = NULL;
    wgt_tensor *t = NULL;
    const char *why = NULL;
    size_t plen = 10, hlen = 0;
    if (wgt_file_read(fn, path, f, pre, 10) != WGT_OK) goto done;
    if (memcmp(pre, "\x93NUMPY", 6) != 0) {
        why = "it does not start with the .npy magic";
    } else if (pre[6] == 1) {
        hlen = pre[8] | (size_t)pre[9] << 8;
    } else if (pre[6] == 2 || pre[6] == 3) {
        if (wgt_file_read(fn, path, f, pre + 10, 2) != WGT_OK) goto done;
        plen = 12;
        hlen = pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
    } else {
        why = "its format version is not 1, 2 or 3";
    }
    if (!why && (hlen > NPY_MAX_HEADER || hlen > size - plen)) why = "its header length passes the file's end";
    if (why) goto done;
    if (!(head = malloc(hlen + 1))) {
        wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
        goto done;
    }
    if (wgt_file_read(fn, path, f, head, hlen) != WGT_OK) goto done;
    head[hlen] = 0;
    npy_header h = {0};
    cursor c = {head, head + hlen};
    if ((why = parse_header(&c, &h))) goto done;
    size_t esize = wgt_dtype_size(h.dtype);
    uint64_t left = size - plen - hlen;
    int64_t n = wgt_file_numel(h.ndim, h.shape, esize, left);
    if (n < 0 || (uint64_t)n * esize != left) {
        why = "its shape and type do not match the bytes that follow the header";
        goto done;
    }
    size_t nbytes = (size_t)n * esize;
    if (!(data = malloc(nbytes ? nbytes : 1))) {
        wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory for %zu bytes", fn, nbytes);
        goto done;
    }
    if (wgt_file_read(fn, path, f, data, nbytes) != WGT_OK) goto done;
    if (!h.fortran) {
        t = wgt_tensor_from_data(ctx, h.dtype, h.ndim, h.shape, data, nbytes, usage);
    } else { /* column-major: the reversed shape row-major, transposed back */
        int64_t rev[WGT_MAX_DIMS];
        int perm[WGT_MAX_DIMS];
        for (int d = 0; d < h.ndim; d++) rev[d] = h.shape[h.ndim - 1 - d], perm[d] = h.ndim - 1 - d;
        wgt_tensor *r = wgt_tensor_from_data(ctx, h.dtype, h.ndim, rev, data, nbytes, usage);
        wgt_tensor *p = r ? wgt_permute(r, perm) : NULL;
        wgt_tensor *contig = p ? wgt_contiguous(p) : NULL;
        /* wgt_contiguous gives the default usage; the caller asked for theirs. */
        if (contig && (t = wgt_tensor_new(ctx, fn, h.dtype, h.ndim, h.shape, usage))) {
            wgt_operand dst, src;
            wgt_operand_whole(t, &dst);
            wgt_operand_whole(contig, &src);
            if (wgt_record_copy(ctx, fn, &dst, &src) != WGT_OK) wgt_release(t), t = NULL;
        }
        wgt_release(contig), wgt_release(p), wgt_release(r);
    }
done:
    if (why) wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: %s is not a .npy file wgtensor reads: %s", fn, path, why);
    free(head);
    free(data);
    fclose(f);
    return t;
}
