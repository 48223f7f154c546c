/*
 * Saving and loading tensors as .npy and safetensors: round trips of every type and of
 * strided views, NumPy reading what we write and writing what we read (when /usr/bin/python3
 * has NumPy), the safetensors bytes checked by Python's json and struct, and malformed files
 * (every truncation, bad headers, absurd sizes) failing with a message, never a crash.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"

static void tmp_path(char *buf, size_t size, const char *what) {
    snprintf(buf, size, "/tmp/wgt_test_%d_%s", (int)getpid(), what);
}

static int same_values(wgt_tensor *a, wgt_tensor *b) {
    if (wgt_tensor_dtype(a) != wgt_tensor_dtype(b) || wgt_tensor_ndim(a) != wgt_tensor_ndim(b)) return 0;
    for (int d = 0; d < wgt_tensor_ndim(a); d++)
        if (wgt_tensor_shape(a)[d] != wgt_tensor_shape(b)[d]) return 0;
    double *x = test_read_f64(a), *y = test_read_f64(b);
    int ok = x && y;
    for (int64_t i = 0; ok && i < wgt_tensor_numel(a); i++) ok = x[i] == y[i];
    free(x), free(y);
    return ok;
}

/* A tensor of type dt and the given shape holding i * 0.5 - 3 (as the type stores it). */
static wgt_tensor *sample(wgt_context *ctx, wgt_dtype dt, int ndim, const int64_t *shape) {
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    void *buf = malloc((size_t)(n ? n : 1) * 4);
    for (int64_t i = 0; i < n; i++) {
        double v = (double)i * 0.5 - 3;
        switch (dt) {
        case WGT_F32: ((float *)buf)[i] = (float)v; break;
        case WGT_F16: ((uint16_t *)buf)[i] = wgt_f32_to_f16((float)v); break;
        case WGT_I32: ((int32_t *)buf)[i] = (int32_t)(i * 3 - 7); break;
        case WGT_U32: ((uint32_t *)buf)[i] = (uint32_t)(i * 3 + 4000000000u); break;
        default: break; /* the file formats take the four element types only */
        }
    }
    wgt_tensor *t = wgt_tensor_from_data(ctx, dt, ndim, shape, buf, (size_t)n * wgt_dtype_size(dt), WGT_USAGE_DEFAULT);
    free(buf);
    return t;
}

static const wgt_dtype types[4] = {WGT_F32, WGT_F16, WGT_I32, WGT_U32};

TEST_BACKENDS(tensor_files_round_trip) {
    char npy[256], st[256];
    tmp_path(npy, sizeof npy, "rt.npy");
    tmp_path(st, sizeof st, "rt.safetensors");
    int64_t shapes[3][3] = {{0}, {5}, {2, 3, 4}};
    int ranks[3] = {0, 1, 3};
    for (int k = 0; k < 4; k++)
        for (int r = 0; r < 3; r++) {
            wgt_tensor *t = sample(ctx, types[k], ranks[r], shapes[r]);
            CHECK(wgt_save_npy(t, npy) == WGT_OK, "%s", wgt_last_error());
            wgt_tensor *u = wgt_load_npy(ctx, npy, WGT_USAGE_DEFAULT);
            CHECK(u && same_values(t, u), "npy round trip of %s rank %d: %s", wgt_dtype_name(types[k]), ranks[r],
                  wgt_last_error());
            wgt_release(u);
            wgt_release(t);
        }
    /* Views are written row-major; several tensors share a safetensors file. */
    wgt_tensor *base = sample(ctx, WGT_F32, 3, shapes[2]), *tv = wgt_transpose(base, 0, 2);
    wgt_tensor *h = sample(ctx, WGT_F16, 1, shapes[1]), *i = sample(ctx, WGT_I32, 0, NULL);
    const char *names[3] = {"layer.0/weight \"quoted\"", "h", "i"};
    wgt_tensor *all[3] = {tv, h, i};
    CHECK(wgt_save_safetensors(st, 3, names, all) == WGT_OK, "%s", wgt_last_error());
    for (int k = 0; k < 3; k++) {
        wgt_tensor *u = wgt_load_safetensors(ctx, st, names[k], WGT_USAGE_DEFAULT);
        CHECK(u && same_values(all[k], u), "safetensors round trip of %s: %s", names[k], wgt_last_error());
        wgt_release(u);
    }
    char *list = wgt_safetensors_names(st);
    CHECK(list && !strcmp(list, "layer.0/weight \"quoted\"\nh\ni\n"), "names: %s", list ? list : wgt_last_error());
    free(list);
    CHECK_ERROR(wgt_load_safetensors(ctx, st, "nope", WGT_USAGE_DEFAULT) == NULL, WGT_ERR_INVALID_ARGUMENT, "nope");
    CHECK_ERROR(wgt_save_safetensors(st, 2, (const char *[]){"a", "a"}, all) != WGT_OK, WGT_ERR_INVALID_ARGUMENT,
                "both");
    CHECK(wgt_save_npy(tv, npy) == WGT_OK, "%s", wgt_last_error());
    wgt_tensor *u = wgt_load_npy(ctx, npy, WGT_USAGE_DEFAULT);
    CHECK(u && same_values(tv, u), "npy of a transposed view");
    wgt_release(u), wgt_release(i), wgt_release(h), wgt_release(tv), wgt_release(base);
    unlink(npy);
    unlink(st);
}

/* Runs python code with NumPy on the given file; 1 when it printed "ok". Skips when there is
 * no /usr/bin/python3 with NumPy. */
static int python_says_ok(const char *code, const char *path, int *skipped) {
    *skipped = 0;
    if (system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") != 0) {
        *skipped = 1;
        return 0;
    }
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 -c '%s' '%s' 2>&1", code, path);
    FILE *p = popen(cmd, "r");
    char out[512] = {0};
    size_t n = p ? fread(out, 1, sizeof out - 1, p) : 0;
    int rc = p ? pclose(p) : -1;
    out[n] = 0;
    if (rc != 0 || strncmp(out, "ok", 2) != 0) fprintf(stderr, "  python said: %s\n", out);
    return rc == 0 && strncmp(out, "ok", 2) == 0;
}

TEST(tensor_files_numpy_reads_and_writes_them) {
    ctx = test_new_context(WGT_BACKEND_CPU); /* a context of its own: files are host work */
    if (!ctx) return;
    char npy[256], st[256];
    tmp_path(npy, sizeof npy, "np.npy");
    tmp_path(st, sizeof st, "np.safetensors");
    int64_t shape[2] = {3, 4};
    int skipped = 0;
    for (int k = 0; k < 4 && !skipped; k++) {
        wgt_tensor *t = sample(ctx, types[k], 2, shape);
        wgt_save_npy(t, npy);
        char code[1024];
        const char *expect = types[k] == WGT_I32 ? "np.arange(12, dtype=np.int64) * 3 - 7"
                             : types[k] == WGT_U32 ? "np.arange(12, dtype=np.uint64) * 3 + 4000000000"
                                                   : "np.arange(12) * 0.5 - 3";
        const char *dt = types[k] == WGT_F32 ? "float32" : types[k] == WGT_F16 ? "float16" : types[k] == WGT_I32 ? "int32" : "uint32";
        snprintf(code, sizeof code,
                 "import sys, numpy as np\n"
                 "a = np.load(sys.argv[1])\n"
                 "assert a.dtype == np.%s and a.shape == (3, 4), (a.dtype, a.shape)\n"
                 "assert (a == (%s).reshape(3, 4).astype(np.%s)).all(), a\n"
                 "print(\"ok\")",
                 dt, expect, dt);
        CHECK(python_says_ok(code, npy, &skipped) || skipped, "NumPy cannot read our %s .npy", wgt_dtype_name(types[k]));
        wgt_release(t);
    }
    if (skipped) {
        wgt_context_release(ctx);
        test_skip("no /usr/bin/python3 with NumPy");
        return;
    }
    /* NumPy writes: Fortran order, format 2.0, rank 0. */
    const char *writers[3] = {"np.save(sys.argv[1], np.asfortranarray(np.arange(12, dtype=np.float32).reshape(3, 4)))",
                              "np.lib.format.write_array(open(sys.argv[1], \"wb\"), np.arange(12, dtype=np.float32).reshape(3, 4), version=(2, 0))",
                              "np.save(sys.argv[1], np.float32(7))"};
    for (int w = 0; w < 3; w++) {
        char code[1024];
        snprintf(code, sizeof code, "import sys, numpy as np\n%s\nprint(\"ok\")", writers[w]);
        CHECK(python_says_ok(code, npy, &skipped), "NumPy could not write");
        wgt_tensor *u = wgt_load_npy(ctx, npy, WGT_USAGE_DEFAULT);
        double *v = u ? test_read_f64(u) : NULL;
        if (w < 2) CHECK(v && wgt_tensor_ndim(u) == 2 && v[1] == 1 && v[4] == 4 && v[11] == 11, "writer %d: %s", w, wgt_last_error());
        else CHECK(v && wgt_tensor_ndim(u) == 0 && v[0] == 7, "rank 0: %s", wgt_last_error());
        free(v);
        wgt_release(u);
    }
    /* The safetensors bytes, read with json and struct. */
    wgt_tensor *a = sample(ctx, WGT_F32, 2, shape), *b = sample(ctx, WGT_U32, 1, (int64_t[1]){3});
    wgt_save_safetensors(st, 2, (const char *[]){"a", "b"}, (wgt_tensor *[]){a, b});
    const char *check =
        "import sys, json, struct, numpy as np\n"
        "d = open(sys.argv[1], \"rb\").read()\n"
        "n = struct.unpack(\"<Q\", d[:8])[0]\n"
        "assert (8 + n) % 8 == 0\n"
        "h = json.loads(d[8:8 + n])\n"
        "buf = d[8 + n:]\n"
        "assert h[\"a\"] == {\"dtype\": \"F32\", \"shape\": [3, 4], \"data_offsets\": [0, 48]}, h\n"
        "assert h[\"b\"] == {\"dtype\": \"U32\", \"shape\": [3], \"data_offsets\": [48, 60]}, h\n"
        "assert len(buf) == 60\n"
        "a = np.frombuffer(buf[0:48], dtype=\"<f4\").reshape(3, 4)\n"
        "assert (a == (np.arange(12) * 0.5 - 3).reshape(3, 4)).all()\n"
        "assert list(np.frombuffer(buf[48:60], dtype=\"<u4\")) == [4000000000, 4000000003, 4000000006]\n"
        "print(\"ok\")";
    CHECK(python_says_ok(check, st, &skipped), "the safetensors bytes are not what the format says");
    wgt_release(a), wgt_release(b);
    unlink(npy);
    unlink(st);
    wgt_context_release(ctx);
}

static void write_bytes(const char *path, const void *b, size_t n) {
    FILE *f = fopen(path, "wb");
    if (f) fwrite(b, 1, n, f), fclose(f);
}

static unsigned char *read_all(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    unsigned char *b = malloc(1 << 16);
    *n = fread(b, 1, 1 << 16, f);
    fclose(f);
    return b;
}

TEST(tensor_files_malformed_files_are_errors) {
    ctx = test_new_context(WGT_BACKEND_CPU); /* a context of its own: files are host work */
    if (!ctx) return;
    char good[256], bad[256];
    tmp_path(good, sizeof good, "good");
    tmp_path(bad, sizeof bad, "bad");
    int64_t shape[2] = {3, 4};
    wgt_tensor *t = sample(ctx, WGT_F32, 2, shape);
    for (int fmt = 0; fmt < 2; fmt++) {
        const char *nm = "x";
        if (fmt == 0) wgt_save_npy(t, good);
        else wgt_save_safetensors(good, 1, &nm, &t);
        size_t n;
        unsigned char *b = read_all(good, &n);
        if (!b) continue;
        /* Every truncation fails, naming the file. */
        for (size_t cut = 0; cut < n; cut++) {
            write_bytes(bad, b, cut);
            wgt_clear_error();
            wgt_tensor *u = fmt == 0 ? wgt_load_npy(ctx, bad, WGT_USAGE_DEFAULT) : wgt_load_safetensors(ctx, bad, "x", WGT_USAGE_DEFAULT);
            CHECK(!u && wgt_last_status() == WGT_ERR_INVALID_ARGUMENT && test_contains(wgt_last_error(), bad),
                  "%s cut at %zu bytes of %zu: %s", fmt ? "safetensors" : "npy", cut, n, wgt_last_error());
            wgt_release(u);
        }
        /* Every single-byte corruption of the header either fails cleanly or loads a tensor. */
        size_t header_end = fmt == 0 ? 128 : 8 + (size_t)b[0];
        for (size_t at = 0; at < header_end && at < n; at++)
            for (int v = 0; v < 4; v++) {
                unsigned char keep = b[at];
                b[at] = (unsigned char)(v == 0 ? 0 : v == 1 ? 0xff : v == 2 ? '9' : '[');
                write_bytes(bad, b, n);
                b[at] = keep;
                wgt_clear_error();
                wgt_tensor *u = fmt == 0 ? wgt_load_npy(ctx, bad, WGT_USAGE_DEFAULT)
                                         : wgt_load_safetensors(ctx, bad, "x", WGT_USAGE_DEFAULT);
                CHECK(u || wgt_last_status() != WGT_OK, "no tensor and no error at byte %zu", at);
                wgt_release(u);
            }
        free(b);
    }
    /* Absurd sizes: a shape of 2^62 elements, a header length of 2^60. */
    const char huge_npy[] = "\x93NUMPY\x01\x00\x76\x00{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }";
    char padded[128];
    memset(padded, ' ', sizeof padded);
    memcpy(padded, huge_npy, sizeof huge_npy - 1);
    padded[127] = '\n';
    write_bytes(bad, padded, sizeof padded);
    CHECK_ERROR(wgt_load_npy(ctx, bad, WGT_USAGE_DEFAULT) == NULL, WGT_ERR_INVALID_ARGUMENT, "do not match");
    unsigned char big[16] = {0, 0, 0, 0, 0, 0, 0, 0x10, '{', '}'};
    write_bytes(bad, big, sizeof big);
    CHECK_ERROR(wgt_load_safetensors(ctx, bad, "x", WGT_USAGE_DEFAULT) == NULL, WGT_ERR_INVALID_ARGUMENT, "header length");
    const char *bad_json = "{\"x\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,8]}}";
    unsigned char bj[128] = {0};
    bj[0] = (unsigned char)strlen(bad_json);
    memcpy(bj + 8, bad_json, strlen(bad_json));
    write_bytes(bad, bj, 8 + strlen(bad_json) + 8);
    CHECK_ERROR(wgt_load_safetensors(ctx, bad, "x", WGT_USAGE_DEFAULT) == NULL, WGT_ERR_INVALID_ARGUMENT, "F32, F16");
    CHECK_ERROR(wgt_load_npy(ctx, "/nonexistent/dir/file.npy", WGT_USAGE_DEFAULT) == NULL, WGT_ERR_INVALID_ARGUMENT,
                "cannot open");
    wgt_release(t);
    unlink(good);
    unlink(bad);
    wgt_context_release(ctx);
}

/* Block-quantized tensors have no .npy or safetensors element type: saving one is a type
 * error naming the type, and no file is left behind. */
TEST_BACKENDS(tensor_files_refuse_quantized_types) {
    int64_t shape[2] = {2, 64};
    wgt_tensor *x = sample(ctx, WGT_F32, 2, shape), *q = x ? wgt_quantize(x, WGT_Q8_0) : NULL;
    CHECK(q != NULL, "quantize: %s", wgt_last_error());
    if (q) {
        char path[256], st[256];
        tmp_path(path, sizeof path, "quantized.npy");
        tmp_path(st, sizeof st, "quantized.safetensors");
        remove(path);
        CHECK_ERROR(wgt_save_npy(q, path) == WGT_ERR_DTYPE, WGT_ERR_DTYPE, "q8_0");
        FILE *f = fopen(path, "rb");
        CHECK(!f, "a refused save left %s behind", path);
        if (f) fclose(f);
        const char *names[1] = {"w"};
        CHECK_ERROR(wgt_save_safetensors(st, 1, names, &q) == WGT_ERR_DTYPE,
                    WGT_ERR_DTYPE, "q8_0");
    }
    wgt_release(q), wgt_release(x);
}
