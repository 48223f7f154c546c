/*
 * fuzz_files: a libFuzzer target for the file readers, whose input comes from outside the
 * program: GGUF (wgt_gguf_open and wgt_gguf_load), safetensors (wgt_safetensors_names and
 * wgt_load_safetensors) and NumPy .npy (wgt_load_npy). The input's first byte picks the
 * format, the rest is the file. Every reader must either succeed with a sane result or fail
 * with a known status and a message; nothing may crash, read out of bounds or leak (ASan and
 * UBSan watch, as for fuzz_api).
 *
 * For GGUF every metadata entry is walked (strings and arrays read to their last element)
 * and every tensor whose dtype wgtensor knows is loaded when it is small; a loaded tensor's
 * shape must match its description and its bytes must read back. With
 * WGT_FUZZ_WRITE_SEEDS=DIR the program instead writes valid files of each format, made by the
 * library's own writers, into DIR as a starting corpus (`make fuzz` does this first).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wgtensor.h"

enum { FORMAT_GGUF, FORMAT_SAFETENSORS, FORMAT_NPY, FORMATS };
#define LOAD_CAP (1u << 20) /* bytes: larger tensors are described but not loaded */

static wgt_context *ctx;
static char path[64];

static void die(const char *what) {
    fprintf(stderr, "fuzz_files: %s (%s: %s)\n", what, wgt_status_name(wgt_last_status()), wgt_last_error());
    abort();
}

/* A failed call must leave a known status and a message. */
static void check_failure(const char *fn) {
    wgt_status st = wgt_last_status();
    if (st == WGT_OK || st >= WGT_ERR_INTERNAL || !wgt_last_error()[0]) {
        fprintf(stderr, "fuzz_files: %s failed with status %d and message \"%s\"\n", fn, (int)st, wgt_last_error());
        abort();
    }
    wgt_clear_error();
}

/* Reads t back and checks its element count against the expected shape. */
static void check_tensor(wgt_tensor *t, int ndim, const int64_t *shape, const char *fn) {
    if (wgt_tensor_ndim(t) != ndim) die(fn);
    int64_t count = 1;
    int empty = 0, overflow = 0;
    for (int d = 0; d < ndim; d++) {
        if (wgt_tensor_shape(t)[d] != shape[d]) die(fn);
        if (shape[d] == 0) empty = 1;
        else if (!overflow && __builtin_mul_overflow(count, shape[d], &count)) overflow = 1;
    }
    if (empty) count = 0;
    else if (overflow) die("a loaded tensor's element count overflows");
    if (wgt_tensor_numel(t) != count) die(fn);
    size_t nbytes = wgt_tensor_nbytes(t);
    void *buf = malloc(nbytes ? nbytes : 1);
    if (!buf) return;
    if (wgt_tensor_read(t, buf, nbytes) != WGT_OK) die("reading a loaded tensor back");
    free(buf);
}

static void walk_kv(const wgt_gguf_kv *kv) {
    volatile unsigned char sink = 0;
    if (kv->elem_type == WGT_GGUF_STRING) {
        const wgt_gguf_string *s = kv->data;
        for (uint64_t i = 0; i < kv->count; i++)
            if (s[i].len) sink ^= (unsigned char)(s[i].data[0] ^ s[i].data[s[i].len - 1] ^ s[i].data[s[i].len]);
    } else if (kv->count) {
        static const size_t size[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
        if ((unsigned)kv->elem_type >= sizeof size / sizeof *size || !size[kv->elem_type]) die("gguf entry type");
        sink ^= ((const unsigned char *)kv->data)[kv->count * size[kv->elem_type] - 1];
    }
    (void)sink;
}

static void read_gguf(void) {
    wgt_gguf *g = wgt_gguf_open(path);
    if (!g) return check_failure("wgt_gguf_open");
    int64_t kvs = wgt_gguf_kv_count(g), tensors = wgt_gguf_tensor_count(g);
    for (int64_t i = 0; i < kvs; i++) {
        const wgt_gguf_kv *kv = wgt_gguf_kv_at(g, i);
        if (!kv || wgt_gguf_find_kv(g, kv->key) == NULL) die("gguf metadata entry");
        walk_kv(kv);
    }
    for (int64_t i = 0; i < tensors; i++) {
        const wgt_gguf_tensor_info *info = wgt_gguf_tensor_at(g, i);
        if (!info || info->ndim < 0 || info->ndim > WGT_MAX_DIMS) die("gguf tensor description");
        if (wgt_gguf_find_tensor(g, info->name) < 0) die("gguf tensor name");
        if (info->nbytes > LOAD_CAP) continue;
        wgt_tensor *t = wgt_gguf_load(g, ctx, info->name, WGT_USAGE_DEFAULT);
        if (!t) {
            check_failure("wgt_gguf_load");
            continue;
        }
        check_tensor(t, info->ndim, info->shape, "wgt_gguf_load");
        wgt_release(t);
    }
    if (wgt_gguf_tensor_at(g, tensors) || wgt_gguf_kv_at(g, kvs) || wgt_gguf_find_tensor(g, "\001absent") != -1)
        die("gguf lookups past the end");
    wgt_gguf_close(g);
}

static void read_safetensors(void) {
    char *names = wgt_safetensors_names(path);
    if (!names) return check_failure("wgt_safetensors_names");
    for (char *name = names, *end; *name; name = end) {
        end = strchr(name, '\n');
        if (!end) die("safetensors names end without a newline");
        *end++ = 0;
        wgt_tensor *t = wgt_load_safetensors(ctx, path, name, WGT_USAGE_DEFAULT);
        if (!t) {
            check_failure("wgt_load_safetensors");
            continue;
        }
        check_tensor(t, wgt_tensor_ndim(t), wgt_tensor_shape(t), "wgt_load_safetensors");
        wgt_release(t);
    }
    free(names);
}

static void read_npy(void) {
    wgt_tensor *t = wgt_load_npy(ctx, path, WGT_USAGE_DEFAULT);
    if (!t) return check_failure("wgt_load_npy");
    check_tensor(t, wgt_tensor_ndim(t), wgt_tensor_shape(t), "wgt_load_npy");
    wgt_release(t);
}

/* Writes the bytes after DIR/<name>'s format byte: the file made by the library at tmp. */
static void seed(const char *dir, const char *name, int format, const char *tmp) {
    FILE *in = fopen(tmp, "rb");
    char out_path[4096];
    snprintf(out_path, sizeof out_path, "%s/%s", dir, name);
    FILE *out = fopen(out_path, "wb");
    if (!in || !out) die("writing a seed");
    fputc(format, out);
    for (int c; (c = fgetc(in)) != EOF;) fputc(c, out);
    fclose(in);
    fclose(out);
    unlink(tmp);
}

static void write_seeds(const char *dir) {
    float v[24];
    for (int i = 0; i < 24; i++) v[i] = (float)i * 0.5f - 3;
    int64_t shape[3] = {2, 3, 4}, flat = 64;
    wgt_tensor *a = wgt_tensor_from_data(ctx, WGT_F32, 3, shape, v, sizeof v, WGT_USAGE_DEFAULT);
    wgt_tensor *h = a ? wgt_cast(a, WGT_F16) : NULL;
    wgt_tensor *q_src = wgt_full(ctx, WGT_F32, 1, &flat, 0.25);
    wgt_tensor *q = q_src ? wgt_quantize(q_src, WGT_Q8_0) : NULL;
    if (!a || !h || !q) die("seed tensors");
    char tmp[64];
    snprintf(tmp, sizeof tmp, "/tmp/wgt-fuzz-seed-%d", (int)getpid());
    wgt_gguf_writer *w = wgt_gguf_writer_create();
    wgt_gguf_string s = {5, "llama"};
    uint32_t layers = 2;
    wgt_gguf_kv arch = {"general.architecture", WGT_GGUF_STRING, WGT_GGUF_STRING, 1, &s};
    wgt_gguf_kv count = {"llama.block_count", WGT_GGUF_UINT32, WGT_GGUF_UINT32, 1, &layers};
    if (!w || wgt_gguf_writer_set(w, &arch) || wgt_gguf_writer_set(w, &count) || wgt_gguf_writer_add_tensor(w, "a", a) ||
        wgt_gguf_writer_add_tensor(w, "h", h) || wgt_gguf_writer_add_tensor(w, "q", q) ||
        wgt_gguf_writer_save(w, tmp, 0))
        die("gguf seed");
    wgt_gguf_writer_release(w);
    seed(dir, "seed-gguf", FORMAT_GGUF, tmp);
    const char *names[2] = {"a", "h"};
    wgt_tensor *both[2] = {a, h};
    if (wgt_save_safetensors(tmp, 2, names, both)) die("safetensors seed");
    seed(dir, "seed-safetensors", FORMAT_SAFETENSORS, tmp);
    if (wgt_save_npy(h, tmp)) die("npy seed");
    seed(dir, "seed-npy", FORMAT_NPY, tmp);
    wgt_release(a);
    wgt_release(h);
    wgt_release(q_src);
    wgt_release(q);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    wgt_context_options o = {.backend = WGT_BACKEND_CPU, .quiet = 1};
    ctx = wgt_context_create(&o);
    if (!ctx) die("no CPU context");
    snprintf(path, sizeof path, "/tmp/wgt-fuzz-file-%d", (int)getpid());
    const char *seeds = getenv("WGT_FUZZ_WRITE_SEEDS");
    if (seeds && *seeds) {
        write_seeds(seeds);
        wgt_context_release(ctx);
        exit(0);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    FILE *f = fopen(path, "wb");
    if (!f) die("temporary file");
    if (size > 1 && fwrite(data + 1, 1, size - 1, f) != size - 1) die("temporary file write");
    fclose(f);
    switch (data[0] % FORMATS) {
    case FORMAT_GGUF: read_gguf(); break;
    case FORMAT_SAFETENSORS: read_safetensors(); break;
    default: read_npy(); break;
    }
    unlink(path);
    return 0;
}
