/*
 * Which webgpu library the loader accepts. Our declarations (webgpu_api.h) match one Dawn
 * build's structs and enum values, so a library exporting the same names but built otherwise
 * is refused at load time, with a message naming what was found; the same build copied
 * elsewhere and named through library_path is accepted and computes.
 *
 * The impostor is compiled at run time from the loader's own list of function names (each
 * a function that does nothing), so it exports every name we resolve: the only thing that
 * can tell it apart is the identity check.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/webgpu/webgpu_internal.h"
#include "test.h"

#ifdef __wasi__
/* The WebAssembly build loads no library: its webgpu.h is the JavaScript import table
 * (web/c/loader_js.c), and WASI has neither dlopen nor temporary directories. */
TEST(loader_refuses_a_library_of_another_build) {
    test_skip("wasm: webgpu.h is the JavaScript import table, there is no library to load");
}
TEST(loader_accepts_the_known_build_copied_elsewhere) {
    test_skip("wasm: webgpu.h is the JavaScript import table, there is no library to load");
}
#else

#define NAME_ENTRY(ret, name, args) #name,
static const char *const resolved_names[] = {WGT_WGPU_FUNCTIONS(NAME_ENTRY)};
#undef NAME_ENTRY

/* Writes dir/impostor.c exporting every resolved name and builds dir/libimpostor.so from it;
 * 0 when no C compiler is at hand. */
static int build_impostor(const char *dir, char *so, size_t so_size) {
    char src[512], cmd[1600];
    snprintf(src, sizeof src, "%s/impostor.c", dir);
    snprintf(so, so_size, "%s/libimpostor.so", dir);
    FILE *f = fopen(src, "w");
    if (!f) return 0;
    for (size_t i = 0; i < sizeof resolved_names / sizeof *resolved_names; i++)
        fprintf(f, "void *%s(void) { return 0; }\n", resolved_names[i]);
    fclose(f);
    snprintf(cmd, sizeof cmd, "cc -shared -fPIC -Wl,--build-id -o %s %s 2>/dev/null", so, src);
    return system(cmd) == 0 && access(so, R_OK) == 0;
}

static int copy_file(const char *from, const char *to) {
    FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
    int ok = in && out;
    char buf[1 << 16];
    for (size_t n; ok && (n = fread(buf, 1, sizeof buf, in)) > 0;) ok = fwrite(buf, 1, n, out) == n;
    if (in) fclose(in);
    if (out && fclose(out) != 0) ok = 0;
    return ok;
}

/* The library path a context reports in its description (malloc'd), or NULL. */
static char *library_of(wgt_context *ctx) {
    char *d = wgt_context_describe(ctx), *path = NULL;
    const char *at = d ? strstr(d, "library: ") : NULL;
    if (at) {
        at += strlen("library: ");
        size_t n = strcspn(at, "\n");
        path = malloc(n + 1);
        if (path) memcpy(path, at, n), path[n] = '\0';
    }
    free(d);
    return path;
}

TEST(loader_refuses_a_library_of_another_build) {
    char dir[] = "/tmp/wgt_loader_XXXXXX", so[600];
    if (!mkdtemp(dir)) {
        CHECK(0, "cannot make a temporary directory");
        return;
    }
    if (!build_impostor(dir, so, sizeof so)) {
        test_skip("no C compiler (cc) to build an impostor webgpu library with");
    } else {
        wgt_context_options opt = {0};
        opt.backend = WGT_BACKEND_WEBGPU;
        opt.library_path = so;
        CHECK_ERROR(wgt_context_create(&opt) == NULL, WGT_ERR_UNAVAILABLE, "build id");
        /* The message names the library and what was found (40 hex digits after "is "). */
        wgt_context_create(&opt);
        CHECK(test_contains(wgt_last_error(), so) && test_contains(wgt_last_error(), "bun-webgpu-linux-x64@0.1.7"),
              "%s", wgt_last_error());
        /* Listing adapters loads the library the same way. */
        wgt_clear_error();
        char *list = wgt_list_adapters(so);
        CHECK(!list && wgt_last_status() == WGT_ERR_UNAVAILABLE && test_contains(wgt_last_error(), "build id"),
              "listing through an impostor: %s", list ? list : wgt_last_error());
        free(list);
        wgt_clear_error();
        /* The environment variable is checked the same way (an explicit option is not set). */
        test_saved_env env = test_env_set("WGT_WEBGPU_LIBRARY", so);
        opt.library_path = NULL;
        CHECK_ERROR(wgt_context_create(&opt) == NULL, WGT_ERR_UNAVAILABLE, "build id");
        test_env_restore(&env);
        remove(so);
    }
    char src[600];
    snprintf(src, sizeof src, "%s/impostor.c", dir);
    remove(src);
    rmdir(dir);
}

TEST(loader_accepts_the_known_build_copied_elsewhere) {
    wgt_context *base = test_webgpu_context();
    if (!base) return; /* skipped by test_webgpu_context */
    char *real = library_of(base);
    wgt_context_release(base);
    char dir[] = "/tmp/wgt_loader_XXXXXX", copy[600];
    int made = real && mkdtemp(dir);
    CHECK(made, "no library path in the description, or no temporary directory");
    if (!made) {
        free(real);
        return;
    }
    snprintf(copy, sizeof copy, "%s/renamed_webgpu.so", dir);
    CHECK(copy_file(real, copy), "copying %s to %s", real, copy);
    wgt_context_options opt = {0};
    opt.backend = WGT_BACKEND_WEBGPU;
    opt.library_path = copy;
    wgt_context *copied = wgt_context_create(&opt);
    CHECK(copied, "the same build copied to %s: %s", copy, wgt_last_error());
    char *used = copied ? library_of(copied) : NULL;
    CHECK(used && !strcmp(used, copy), "the context loaded %s, not the copy", used ? used : "nothing");
    wgt_tensor *a = copied ? wgt_arange(copied, WGT_F32, 0, 4, 1) : NULL, *b = a ? wgt_mul(a, a) : NULL;
    float v[4] = {0};
    CHECK(b && wgt_tensor_read(b, v, sizeof v) == WGT_OK && v[3] == 9.0f, "the copy computes: %s", wgt_last_error());
    wgt_release(a), wgt_release(b);
    wgt_context_release(copied);
    free(used);
    free(real);
    remove(copy); /* the library stays mapped for the life of the process; the name may go */
    rmdir(dir);
}
#endif
