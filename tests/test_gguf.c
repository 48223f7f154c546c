/*
 * GGUF reading and writing: files the library writes round-trip bit for bit (metadata of
 * every value type, tensors of every type it holds, views), a header built byte by byte
 * here reads as built, and malformed files (truncated anywhere, bad magic or version, absurd
 * counts and lengths, offsets past the end, misaligned data) fail with a message, never a
 * crash.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"

static void temp_path(char *buf, size_t n, const char *tag) {
    snprintf(buf, n, "/tmp/wgt_test_gguf_%d_%s.gguf", (int)getpid(), tag);
}

static unsigned char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *p = malloc(len > 0 ? (size_t)len : 1);
    *n = p ? fread(p, 1, (size_t)len, f) : 0;
    fclose(f);
    return p;
}

static void spit(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(p, 1, n, f);
        fclose(f);
    }
}

/* One metadata entry of every type, scalars and arrays, strings included. */
static const uint8_t v_u8[3] = {1, 200, 255};
static const int8_t v_i8[2] = {-128, 127};
static const uint16_t v_u16[2] = {0, 65535};
static const int16_t v_i16[1] = {-300};
static const uint32_t v_u32[2] = {7, 4000000000u};
static const int32_t v_i32[2] = {-5, 2147483647};
static const float v_f32[2] = {1.5f, -0.0f};
static const uint8_t v_bool[2] = {1, 0};
static const uint64_t v_u64[1] = {18446744073709551615ull};
static const int64_t v_i64[1] = {-9223372036854775807ll};
static const double v_f64[2] = {3.141592653589793, -1e300};
static const wgt_gguf_string v_str[3] = {{5, "llama"}, {0, ""}, {3, "a\0b"}};

static const wgt_gguf_kv all_kvs[] = {
    {"t.u8", WGT_GGUF_UINT8, WGT_GGUF_UINT8, 1, v_u8},
    {"t.i8", WGT_GGUF_INT8, WGT_GGUF_INT8, 1, v_i8},
    {"t.u16", WGT_GGUF_UINT16, WGT_GGUF_UINT16, 1, v_u16 + 1},
    {"t.i16", WGT_GGUF_INT16, WGT_GGUF_INT16, 1, v_i16},
    {"t.u32", WGT_GGUF_UINT32, WGT_GGUF_UINT32, 1, v_u32 + 1},
    {"t.i32", WGT_GGUF_INT32, WGT_GGUF_INT32, 1, v_i32},
    {"t.f32", WGT_GGUF_FLOAT32, WGT_GGUF_FLOAT32, 1, v_f32},
    {"t.bool", WGT_GGUF_BOOL, WGT_GGUF_BOOL, 1, v_bool},
    {"t.str", WGT_GGUF_STRING, WGT_GGUF_STRING, 1, v_str},
    {"t.u64", WGT_GGUF_UINT64, WGT_GGUF_UINT64, 1, v_u64},
    {"t.i64", WGT_GGUF_INT64, WGT_GGUF_INT64, 1, v_i64},
    {"t.f64", WGT_GGUF_FLOAT64, WGT_GGUF_FLOAT64, 1, v_f64},
    {"a.u8", WGT_GGUF_ARRAY, WGT_GGUF_UINT8, 3, v_u8},
    {"a.i8", WGT_GGUF_ARRAY, WGT_GGUF_INT8, 2, v_i8},
    {"a.u16", WGT_GGUF_ARRAY, WGT_GGUF_UINT16, 2, v_u16},
    {"a.i16", WGT_GGUF_ARRAY, WGT_GGUF_INT16, 1, v_i16},
    {"a.u32", WGT_GGUF_ARRAY, WGT_GGUF_UINT32, 2, v_u32},
    {"a.i32", WGT_GGUF_ARRAY, WGT_GGUF_INT32, 2, v_i32},
    {"a.f32", WGT_GGUF_ARRAY, WGT_GGUF_FLOAT32, 2, v_f32},
    {"a.bool", WGT_GGUF_ARRAY, WGT_GGUF_BOOL, 2, v_bool},
    {"a.str", WGT_GGUF_ARRAY, WGT_GGUF_STRING, 3, v_str},
    {"a.u64", WGT_GGUF_ARRAY, WGT_GGUF_UINT64, 1, v_u64},
    {"a.i64", WGT_GGUF_ARRAY, WGT_GGUF_INT64, 1, v_i64},
    {"a.f64", WGT_GGUF_ARRAY, WGT_GGUF_FLOAT64, 2, v_f64},
    {"a.empty", WGT_GGUF_ARRAY, WGT_GGUF_INT32, 0, NULL},
};
#define NKV ((int)(sizeof all_kvs / sizeof all_kvs[0]))

static size_t elem_size(wgt_gguf_type t) {
    switch (t) {
    case WGT_GGUF_UINT8: case WGT_GGUF_INT8: case WGT_GGUF_BOOL: return 1;
    case WGT_GGUF_UINT16: case WGT_GGUF_INT16: return 2;
    case WGT_GGUF_UINT32: case WGT_GGUF_INT32: case WGT_GGUF_FLOAT32: return 4;
    default: return 8;
    }
}

static int same_kv(const wgt_gguf_kv *a, const wgt_gguf_kv *b) {
    if (strcmp(a->key, b->key) || a->type != b->type || a->elem_type != b->elem_type || a->count != b->count) return 0;
    if (a->elem_type != WGT_GGUF_STRING) return a->count == 0 || !memcmp(a->data, b->data, a->count * elem_size(a->elem_type));
    const wgt_gguf_string *x = a->data, *y = b->data;
    for (uint64_t i = 0; i < a->count; i++)
        if (x[i].len != y[i].len || memcmp(x[i].data, y[i].data, x[i].len) || y[i].data[y[i].len] != 0) return 0;
    return 1;
}

TEST_BACKENDS(gguf_round_trip_bit_for_bit) {
    char p1[128], p2[128];
    temp_path(p1, sizeof p1, "rt1");
    temp_path(p2, sizeof p2, "rt2");
    int64_t s2[2] = {3, 64}, s3[3] = {2, 3, 5}, big[2] = {6, 64};
    wgt_tensor *f32 = wgt_rand_normal(ctx, WGT_F32, 2, s2, 0, 1, 1);
    wgt_tensor *f16 = wgt_rand_normal(ctx, WGT_F16, 3, s3, 0, 1, 2);
    wgt_tensor *i32 = wgt_arange(ctx, WGT_I32, -3, 4, 1);
    wgt_tensor *q8 = wgt_quantize(f32, WGT_Q8_0), *q4 = wgt_quantize(f32, WGT_Q4_0);
    wgt_tensor *whole = wgt_rand_normal(ctx, WGT_F32, 2, big, 0, 1, 3);
    wgt_tensor *wq = wgt_quantize(whole, WGT_Q4_0);
    wgt_tensor *rows = wgt_slice(wq, 0, 2, 5, 1); /* a view: its rows' blocks are written */
    wgt_tensor *tr = wgt_transpose(f16, 1, 2);    /* a strided view: written row-major */
    const char *names[] = {"f32", "f16", "i32", "q8", "q4", "rows", "tr"};
    wgt_tensor *ts[] = {f32, f16, i32, q8, q4, rows, tr};
    for (uint32_t align = 32; align <= 64; align *= 2) {
        wgt_gguf_writer *w = wgt_gguf_writer_create();
        for (int i = 0; i < NKV; i++) CHECK(wgt_gguf_writer_set(w, &all_kvs[i]) == WGT_OK, "%s", wgt_last_error());
        for (int i = 0; i < 7; i++) CHECK(wgt_gguf_writer_add_tensor(w, names[i], ts[i]) == WGT_OK, "%s", wgt_last_error());
        CHECK(wgt_gguf_writer_save(w, p1, align) == WGT_OK, "%s", wgt_last_error());
        wgt_gguf_writer_release(w);
        wgt_gguf *g = wgt_gguf_open(p1);
        CHECK(g != NULL, "%s", wgt_last_error());
        if (!g) break;
        CHECK(wgt_gguf_version(g) == 3, "version");
        int extra = align != 32;
        CHECK(wgt_gguf_kv_count(g) == NKV + extra && wgt_gguf_tensor_count(g) == 7, "counts %lld %lld",
              (long long)wgt_gguf_kv_count(g), (long long)wgt_gguf_tensor_count(g));
        for (int i = 0; i < NKV; i++) {
            const wgt_gguf_kv *kv = wgt_gguf_find_kv(g, all_kvs[i].key);
            CHECK(kv && same_kv(&all_kvs[i], kv), "metadata %s differs", all_kvs[i].key);
        }
        /* Writing what was read gives the same file, byte for byte. */
        wgt_gguf_writer *w2 = wgt_gguf_writer_create();
        for (int64_t i = 0; i < wgt_gguf_kv_count(g); i++)
            if (strcmp(wgt_gguf_kv_at(g, i)->key, "general.alignment"))
                CHECK(wgt_gguf_writer_set(w2, wgt_gguf_kv_at(g, i)) == WGT_OK, "%s", wgt_last_error());
        for (int i = 0; i < 7; i++) {
            const wgt_gguf_tensor_info *info = wgt_gguf_tensor_at(g, wgt_gguf_find_tensor(g, names[i]));
            CHECK(info && info->dtype == wgt_tensor_dtype(ts[i]) && info->ndim == wgt_tensor_ndim(ts[i]) &&
                      !memcmp(info->shape, wgt_tensor_shape(ts[i]), sizeof(int64_t) * (size_t)info->ndim) &&
                      info->offset % align == 0,
                  "tensor %s described wrongly", names[i]);
            wgt_tensor *t = wgt_gguf_load(g, ctx, names[i], WGT_USAGE_DEFAULT);
            size_t n = wgt_tensor_nbytes(ts[i]);
            unsigned char *a = malloc(n), *b = malloc(n);
            CHECK(t && wgt_tensor_read(t, a, n) == WGT_OK && wgt_tensor_read(ts[i], b, n) == WGT_OK && !memcmp(a, b, n),
                  "tensor %s: %s", names[i], wgt_last_error());
            CHECK(wgt_gguf_writer_add_tensor(w2, names[i], t) == WGT_OK, "%s", wgt_last_error());
            free(a), free(b);
            wgt_release(t);
        }
        CHECK(wgt_gguf_writer_save(w2, p2, align) == WGT_OK, "%s", wgt_last_error());
        wgt_gguf_writer_release(w2);
        wgt_gguf_close(g);
        size_t n1 = 0, n2 = 0;
        unsigned char *b1 = slurp(p1, &n1), *b2 = slurp(p2, &n2);
        CHECK(b1 && b2 && n1 == n2 && !memcmp(b1, b2, n1), "alignment %u: the rewritten file differs (%zu vs %zu bytes)",
              align, n1, n2);
        free(b1), free(b2);
    }
    /* Misuse of the writer. */
    wgt_gguf_writer *w = wgt_gguf_writer_create();
    CHECK(wgt_gguf_writer_set(w, &all_kvs[0]) == WGT_OK, "%s", wgt_last_error());
    CHECK_ERROR(wgt_gguf_writer_set(w, &all_kvs[0]) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "set already");
    wgt_gguf_kv odd = {"x", WGT_GGUF_UINT8, WGT_GGUF_INT8, 1, v_u8};
    CHECK_ERROR(wgt_gguf_writer_set(w, &odd) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "type == elem_type");
    CHECK(wgt_gguf_writer_add_tensor(w, "f32", f32) == WGT_OK, "%s", wgt_last_error());
    CHECK_ERROR(wgt_gguf_writer_add_tensor(w, "f32", f16) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "added already");
    wgt_tensor *u = wgt_cast(i32, WGT_U32);
    CHECK_ERROR(wgt_gguf_writer_add_tensor(w, "u", u) != WGT_OK, WGT_ERR_DTYPE, "u32");
    CHECK_ERROR(wgt_gguf_writer_save(w, p1, 48) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "power of two");
    CHECK_ERROR(wgt_gguf_writer_save(w, "/nonexistent-dir/x.gguf", 0) != WGT_OK, WGT_ERR_UNAVAILABLE, "cannot create");
    wgt_gguf_writer_release(w);
    wgt_gguf *g = wgt_gguf_open(p1);
    CHECK_ERROR(!wgt_gguf_load(g, ctx, "nope", WGT_USAGE_DEFAULT), WGT_ERR_INVALID_ARGUMENT, "no tensor named 'nope'");
    wgt_gguf_close(g);
    remove(p1), remove(p2);
    wgt_release(f32), wgt_release(f16), wgt_release(i32), wgt_release(q8), wgt_release(q4), wgt_release(whole);
    wgt_release(wq), wgt_release(rows), wgt_release(tr), wgt_release(u);
}

/* ---- a header built byte by byte ---- */

typedef struct {
    unsigned char b[4096];
    size_t n;
} bytes;

static void add(bytes *o, const void *p, size_t n) {
    memcpy(o->b + o->n, p, n);
    o->n += n;
}
static void add_u32(bytes *o, uint32_t v) { add(o, &v, 4); }
static void add_u64(bytes *o, uint64_t v) { add(o, &v, 8); }
static void add_str(bytes *o, const char *s) {
    add_u64(o, strlen(s));
    add(o, s, strlen(s));
}
static void pad_to(bytes *o, size_t a) {
    while (o->n % a) o->b[o->n++] = 0;
}

/* A valid file: every scalar type, an array of strings, an f32 [2, 3] tensor, a q8_0 [32]
 * tensor and one of a type wgtensor does not hold (q4_1). */
static void build(bytes *o, uint32_t version) {
    o->n = 0;
    add_u32(o, 0x46554747u);
    add_u32(o, version);
    add_u64(o, 3);  /* tensors */
    add_u64(o, 14); /* metadata */
    uint8_t u8 = 9;
    int8_t i8 = -9;
    uint16_t u16 = 999;
    int16_t i16 = -999;
    uint32_t u32 = 99999;
    int32_t i32 = -99999;
    float f32 = 0.25f;
    uint8_t b = 1;
    uint64_t u64 = 1ull << 40;
    int64_t i64 = -(1ll << 40);
    double f64 = 0.125;
    struct { const char *k; uint32_t t; const void *v; size_t n; } s[] = {
        {"u8", 0, &u8, 1}, {"i8", 1, &i8, 1}, {"u16", 2, &u16, 2}, {"i16", 3, &i16, 2}, {"u32", 4, &u32, 4},
        {"i32", 5, &i32, 4}, {"f32", 6, &f32, 4}, {"bool", 7, &b, 1}, {"u64", 10, &u64, 8}, {"i64", 11, &i64, 8},
        {"f64", 12, &f64, 8},
    };
    for (int i = 0; i < 11; i++) {
        add_str(o, s[i].k);
        add_u32(o, s[i].t);
        add(o, s[i].v, s[i].n);
    }
    add_str(o, "general.architecture");
    add_u32(o, 8);
    add_str(o, "llama");
    add_str(o, "tokens");
    add_u32(o, 9);
    add_u32(o, 8);
    add_u64(o, 2);
    add_str(o, "<s>");
    add_str(o, "hi");
    add_str(o, "general.alignment");
    add_u32(o, 4);
    add_u32(o, 16);
    add_str(o, "w");
    add_u32(o, 2);
    add_u64(o, 3); /* innermost first: shape [2, 3] */
    add_u64(o, 2);
    add_u32(o, 0);
    add_u64(o, 0);
    add_str(o, "q");
    add_u32(o, 1);
    add_u64(o, 32);
    add_u32(o, 8);
    add_u64(o, 32);
    add_str(o, "other");
    add_u32(o, 1);
    add_u64(o, 32);
    add_u32(o, 3); /* q4_1 */
    add_u64(o, 80);
    pad_to(o, 16);
    for (int i = 0; i < 6; i++) {
        float v = (float)i - 2.5f;
        add(o, &v, 4);
    }
    pad_to(o, 16);
    for (int i = 0; i < 34; i++) o->b[o->n++] = (unsigned char)(i == 1 ? 0x3c : i); /* d = 1 */
    pad_to(o, 16);
    for (int i = 0; i < 20; i++) o->b[o->n++] = 0; /* q4_1's 20 bytes */
}

TEST_BACKENDS(gguf_hand_built_header) {
    char p[128];
    temp_path(p, sizeof p, "hand");
    bytes o;
    for (uint32_t version = 2; version <= 3; version++) {
        build(&o, version);
        spit(p, o.b, o.n);
        wgt_gguf *g = wgt_gguf_open(p);
        CHECK(g != NULL, "%s", wgt_last_error());
        if (!g) continue;
        CHECK(wgt_gguf_kv_count(g) == 14 && wgt_gguf_tensor_count(g) == 3, "counts");
        const wgt_gguf_kv *kv = wgt_gguf_find_kv(g, "i16");
        CHECK(kv && kv->type == WGT_GGUF_INT16 && *(const int16_t *)kv->data == -999, "i16");
        kv = wgt_gguf_find_kv(g, "u64");
        CHECK(kv && kv->type == WGT_GGUF_UINT64 && *(const uint64_t *)kv->data == 1ull << 40, "u64");
        kv = wgt_gguf_find_kv(g, "f64");
        CHECK(kv && kv->type == WGT_GGUF_FLOAT64 && *(const double *)kv->data == 0.125, "f64");
        kv = wgt_gguf_find_kv(g, "bool");
        CHECK(kv && kv->type == WGT_GGUF_BOOL && *(const uint8_t *)kv->data == 1, "bool");
        kv = wgt_gguf_find_kv(g, "general.architecture");
        CHECK(kv && kv->type == WGT_GGUF_STRING && !strcmp(((const wgt_gguf_string *)kv->data)->data, "llama"), "arch");
        kv = wgt_gguf_find_kv(g, "tokens");
        CHECK(kv && kv->type == WGT_GGUF_ARRAY && kv->elem_type == WGT_GGUF_STRING && kv->count == 2 &&
                  !strcmp(((const wgt_gguf_string *)kv->data)[1].data, "hi"),
              "tokens");
        const wgt_gguf_tensor_info *t = wgt_gguf_tensor_at(g, 0);
        CHECK(t && t->ndim == 2 && t->shape[0] == 2 && t->shape[1] == 3 && t->dtype == WGT_F32 && t->nbytes == 24,
              "tensor w");
        CHECK(wgt_gguf_tensor_at(g, 2)->dtype == 0 && wgt_gguf_tensor_at(g, 2)->ggml_type == 3, "tensor other");
        wgt_tensor *w = wgt_gguf_load(g, ctx, "w", WGT_USAGE_DEFAULT);
        float v[6];
        CHECK(w && wgt_tensor_read(w, v, sizeof v) == WGT_OK && v[0] == -2.5f && v[5] == 2.5f, "%s", wgt_last_error());
        wgt_tensor *q = wgt_gguf_load(g, ctx, "q", WGT_USAGE_DEFAULT);
        wgt_tensor *qd = wgt_dequantize(q, WGT_F32);
        float d[32];
        CHECK(qd && wgt_tensor_read(qd, d, sizeof d) == WGT_OK && d[0] == 2.0f && d[31] == 33.0f, "%s", wgt_last_error());
        CHECK_ERROR(!wgt_gguf_load(g, ctx, "other", WGT_USAGE_DEFAULT), WGT_ERR_DTYPE, "ggml type 3");
        wgt_release(w), wgt_release(q), wgt_release(qd);
        wgt_gguf_close(g);
    }
    remove(p);
}

/* Opens bytes as a file: it must fail with WGT_ERR_INVALID_ARGUMENT naming word. */
static void expect_bad(const char *p, const bytes *o, const char *word, const char *what) {
    spit(p, o->b, o->n);
    wgt_clear_error();
    wgt_gguf *g = wgt_gguf_open(p);
    CHECK(!g, "%s: opened", what);
    CHECK(wgt_last_status() == WGT_ERR_INVALID_ARGUMENT && test_contains(wgt_last_error(), word),
          "%s: %s: %s", what, wgt_status_name(wgt_last_status()), wgt_last_error());
    wgt_gguf_close(g);
    wgt_clear_error();
}

/* The position of the first occurrence of the n bytes at s in the file. */
static size_t find_n(const bytes *o, const char *s, size_t n) {
    for (size_t i = 0; i + n <= o->n; i++)
        if (!memcmp(o->b + i, s, n)) return i;
    return 0;
}
static size_t find(const bytes *o, const char *s) { return find_n(o, s, strlen(s)); }
/* A tensor name as the file holds it: its length (1) then the letter. */
#define NAME1(c) "\x01\0\0\0\0\0\0\0" c, 9

TEST(gguf_bad_files_fail_cleanly) {
    char p[128];
    temp_path(p, sizeof p, "bad");
    bytes o, full;
    build(&full, 3);
    /* Every truncation: the header's, or the data of a tensor of a type wgtensor holds (up
     * to the end of q's bytes; past them come padding and the q4_1 tensor, whose size only a
     * loader of q4_1 would know). */
    spit(p, full.b, full.n);
    wgt_gguf *whole = wgt_gguf_open(p);
    CHECK(whole != NULL, "%s", wgt_last_error());
    const wgt_gguf_tensor_info *qi = wgt_gguf_tensor_at(whole, 1);
    size_t q_end = qi ? (size_t)(qi->offset + qi->nbytes) : 0;
    wgt_gguf_close(whole);
    for (size_t n = 0; n < q_end; n++) {
        o = full;
        o.n = n;
        spit(p, o.b, o.n);
        wgt_gguf *g = wgt_gguf_open(p);
        CHECK(!g && wgt_last_status() == WGT_ERR_INVALID_ARGUMENT, "truncated to %zu bytes: %s", n,
              g ? "opened" : wgt_last_error());
        wgt_gguf_close(g);
        wgt_clear_error();
    }
    o = full;
    memcpy(o.b, "GGUG", 4);
    expect_bad(p, &o, "magic", "magic");
    for (uint32_t v = 1; v <= 4; v += 3) {
        o = full;
        memcpy(o.b + 4, &v, 4);
        expect_bad(p, &o, "version", "version");
    }
    uint64_t huge = 1ull << 60;
    o = full;
    memcpy(o.b + 8, &huge, 8);
    expect_bad(p, &o, "a tensor count", "tensor count");
    o = full;
    memcpy(o.b + 16, &huge, 8);
    expect_bad(p, &o, "a metadata count", "metadata count");
    o = full;
    memcpy(o.b + 24, &huge, 8); /* the first key's length */
    expect_bad(p, &o, "a string length", "key length");
    o = full;
    size_t at = find(&o, "tokens") + 6 + 4 + 4; /* the array's length */
    memcpy(o.b + at, &huge, 8);
    expect_bad(p, &o, "an array length", "array length");
    o = full;
    uint32_t nested = 9;
    memcpy(o.b + find(&o, "tokens") + 6 + 4, &nested, 4);
    expect_bad(p, &o, "array of arrays", "nested array");
    o = full;
    uint32_t unknown = 13;
    memcpy(o.b + find(&o, "u8") + 2, &unknown, 4);
    expect_bad(p, &o, "unknown value type 13", "value type");
    o = full;
    uint32_t align3 = 3;
    memcpy(o.b + find(&o, "general.alignment") + 17 + 4, &align3, 4);
    expect_bad(p, &o, "general.alignment", "alignment");
    o = full;
    memcpy(o.b + find(&o, "i16") - 8, &(uint64_t){2}, 8); /* "i1" then '6' eats into the type: broken, no crash */
    spit(p, o.b, o.n);
    wgt_gguf_close(wgt_gguf_open(p));
    wgt_clear_error();
    o = full;
    memcpy(o.b + find(&o, "i8"), "u8", 2);
    expect_bad(p, &o, "the key 'u8' appears twice", "duplicate key");
    o = full;
    uint32_t dims = 9;
    memcpy(o.b + find_n(&o, NAME1("w")) + 9, &dims, 4);
    expect_bad(p, &o, "9 dimensions", "dimensions");
    o = full;
    size_t q_at = find_n(&o, NAME1("q")) + 9 + 4 + 8 + 4; /* q's offset */
    uint64_t off = 40;
    memcpy(o.b + q_at, &off, 8);
    expect_bad(p, &o, "not a multiple of the alignment", "misaligned");
    off = 1ull << 62;
    memcpy(o.b + q_at, &off, 8);
    expect_bad(p, &o, "past the end", "offset past the end");
    o = full;
    uint64_t ne = 33; /* a q8_0 row that is not whole blocks */
    memcpy(o.b + q_at - 12, &ne, 8);
    expect_bad(p, &o, "not whole blocks", "partial block");
    o = full;
    o.b[find_n(&o, NAME1("q")) + 8] = 'w';
    expect_bad(p, &o, "two tensors are named 'w'", "duplicate tensor");
    CHECK_ERROR(!wgt_gguf_open("/nonexistent-dir/none.gguf"), WGT_ERR_UNAVAILABLE, "cannot open");
    CHECK_ERROR(!wgt_gguf_open(NULL), WGT_ERR_INVALID_ARGUMENT, "path is NULL");
    remove(p);
}
