/*
 * Loads a webgpu.h implementation at run time. Search order: an explicit path (option or
 * WGT_WEBGPU_LIBRARY), the Dawn the project's setup installed (.deps/dawn, found next to
 * the source tree the library was built from, or next to the running program), then
 * common system names. Libraries stay loaded for the life of the process: Dawn keeps
 * threads and global state that do not survive dlclose.
 */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "webgpu_internal.h"

#ifndef WGT_DAWN_INSTALL_PATH
#define WGT_DAWN_INSTALL_PATH ""
#endif

#define MAX_LIBRARIES 4
static struct loaded_library {
    char path[PATH_MAX];
    wgpu_procs procs;
} libraries[MAX_LIBRARIES];
static int library_count;
static pthread_mutex_t loader_lock = PTHREAD_MUTEX_INITIALIZER;

static const wgpu_procs *try_load(const char *path, char *why, size_t why_size) {
    for (int i = 0; i < library_count; i++)
        if (!strcmp(libraries[i].path, path)) return &libraries[i].procs;
    if (library_count == MAX_LIBRARIES) {
        snprintf(why, why_size, "too many different webgpu libraries loaded");
        return NULL;
    }
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(why, why_size, "%s", dlerror());
        return NULL;
    }
    struct loaded_library *lib = &libraries[library_count];
    memset(lib, 0, sizeof *lib);
#define WGT_RESOLVE(ret, name, args)                                              \
    *(void **)(&lib->procs.name) = dlsym(h, #name);                                \
    if (!lib->procs.name) {                                                       \
        snprintf(why, why_size, "%s lacks the function %s", path, #name);         \
        dlclose(h);                                                               \
        return NULL;                                                              \
    }
    WGT_WGPU_FUNCTIONS(WGT_RESOLVE)
#undef WGT_RESOLVE
    snprintf(lib->path, sizeof lib->path, "%s", path);
    library_count++;
    return &lib->procs;
}

static int exe_relative(char *out, size_t size) {
    char exe[PATH_MAX - 64];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return 0;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash) return 0;
    *slash = '\0';
    /* Programs live in build/ or build/<dir>/ of the project. */
    for (int up = 1; up <= 3; up++) {
        char prefix[PATH_MAX] = "";
        for (int i = 0; i < up; i++) strcat(prefix, "../");
        int len = snprintf(out, size, "%s/%s.deps/dawn/libwebgpu_wrapper.so", exe, prefix);
        if (len > 0 && (size_t)len < size && access(out, R_OK) == 0) return 1; /* never a truncated path */
    }
    return 0;
}

const wgpu_procs *wgt_wgpu_load(const char *explicit_path, char *loaded_path, size_t loaded_size) {
    char why[PATH_MAX + 256] = "", tried[4096] = "";
    const wgpu_procs *procs = NULL;
    pthread_mutex_lock(&loader_lock);
    const char *env = getenv("WGT_WEBGPU_LIBRARY");
    const char *first = explicit_path && *explicit_path ? explicit_path : env && *env ? env : NULL;
    if (first) {
        /* A path the caller named is the only one tried: falling back would hide their mistake. */
        procs = try_load(first, why, sizeof why);
        if (procs) snprintf(loaded_path, loaded_size, "%s", first);
        else wgt_error(WGT_ERR_UNAVAILABLE, "cannot load the webgpu library %s: %s", first, why);
        pthread_mutex_unlock(&loader_lock);
        return procs;
    }
    char exe_path[PATH_MAX];
    const char *candidates[8];
    int n = 0;
    if (WGT_DAWN_INSTALL_PATH[0]) candidates[n++] = WGT_DAWN_INSTALL_PATH;
    if (exe_relative(exe_path, sizeof exe_path)) candidates[n++] = exe_path;
    candidates[n++] = "libwebgpu_dawn.so";
    candidates[n++] = "libwebgpu_wrapper.so";
    candidates[n++] = "libwebgpu.so";
    for (int i = 0; i < n && !procs; i++) {
        procs = try_load(candidates[i], why, sizeof why);
        if (procs) snprintf(loaded_path, loaded_size, "%s", candidates[i]);
        else if (strlen(tried) + strlen(candidates[i]) + 4 < sizeof tried)
            strcat(strcat(tried, tried[0] ? ", " : ""), candidates[i]);
    }
    if (!procs)
        wgt_error(WGT_ERR_UNAVAILABLE, "no webgpu library found (tried %s; run `make setup` or set WGT_WEBGPU_LIBRARY)",
                  tried);
    pthread_mutex_unlock(&loader_lock);
    return procs;
}
