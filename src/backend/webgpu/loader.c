/*
 * Loads a webgpu.h implementation at run time. Search order: an explicit path (option or
 * WGT_WEBGPU_LIBRARY), the Dawn installed beside the library (LIBDIR/wgtensor/, found from
 * where libwgtensor.so or the program was loaded, then from the configured LIBDIR), the Dawn
 * the project's setup put in .deps/dawn of a build tree, then common system names. Libraries stay loaded for the life of the process: Dawn keeps
 * threads and global state that do not survive dlclose.
 *
 * webgpu_api.h declares the structs and enum values of one Dawn build, not of webgpu.h in
 * general: builds differ in both (feature numbers, sTypes, struct fields), and a library that
 * merely exports the same names would be handed structs it reads differently, which is
 * undefined behaviour, not an error. So a library is used only when its GNU build id (the
 * linker's hash of the binary, kept by copies and renames) is the one we were written
 * against.
 */
#include <dlfcn.h>
#include <elf.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "webgpu_internal.h"

#include "install_dirs.h" /* WGT_INSTALL_LIBDIR, generated from the Makefile's LIBDIR */

/* npm bun-webgpu-linux-x64@0.1.7, libwebgpu_wrapper.so: Dawn of early 2026 plus a wrapper. */
#define DAWN_BUILD_NAME "the Dawn of npm bun-webgpu-linux-x64@0.1.7"
#define DAWN_BUILD_ID "67c96e5a9d09a8607503ce15326243ee8c6458a5"

#define MAX_LIBRARIES 4
static struct loaded_library {
    char path[PATH_MAX];
    wgpu_procs procs;
} libraries[MAX_LIBRARIES];
static int library_count;
static pthread_mutex_t loader_lock = PTHREAD_MUTEX_INITIALIZER;

/* Finds the build id note among the loaded object's segments. */
struct build_id_search {
    ElfW(Addr) base;
    char hex[2 * 64 + 1]; /* "" when the object has none */
    int found;
};

static int scan_object(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    struct build_id_search *q = data;
    if (info->dlpi_addr != q->base) return 0;
    q->found = 1;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE) continue;
        const unsigned char *at = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr), *end = at + ph->p_memsz;
        while (at + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)(const void *)at;
            const unsigned char *name = at + sizeof *n, *desc = name + ((n->n_namesz + 3) & ~3u);
            at = desc + ((n->n_descsz + 3) & ~3u);
            if (at > end) break;
            if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && !memcmp(name, "GNU", 4) && n->n_descsz <= 64) {
                for (unsigned j = 0; j < n->n_descsz; j++) snprintf(q->hex + 2 * j, 3, "%02x", desc[j]);
                return 1;
            }
        }
    }
    return 1;
}

/* 1 when the library dlopen gave as h is the build we declare; else 0 with why filled. */
static int is_known_build(void *h, const char *path, char *why, size_t why_size) {
    struct link_map *map = NULL;
    struct build_id_search q = {0};
    if (dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map) {
        q.base = map->l_addr;
        dl_iterate_phdr(scan_object, &q);
    }
    if (q.hex[0] && !strcmp(q.hex, DAWN_BUILD_ID)) return 1;
    snprintf(why, why_size,
             "%s is not %s (its GNU build id is %s, not " DAWN_BUILD_ID
             "): our declarations match that build's structs and enums only",
             path, DAWN_BUILD_NAME, q.hex[0] ? q.hex : q.found ? "missing" : "unreadable");
    return 0;
}

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
    if (!is_known_build(h, path, why, why_size)) {
        dlclose(h);
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

/* The folder holding the file at path (a module or the program), in dir. */
static int folder_of(const char *path, char *dir, size_t size) {
    char resolved[PATH_MAX];
    if (!realpath(path, resolved)) return 0;
    char *slash = strrchr(resolved, '/');
    if (!slash || (size_t)(slash - resolved) >= size) return 0;
    *slash = '\0';
    snprintf(dir, size, "%s", resolved);
    return 1;
}

/* Adds dir/rel to the list when that file exists (never a truncated path). */
static void add_candidate(char list[][PATH_MAX], int *n, int max, const char *dir, const char *rel) {
    if (*n == max) return;
    int len = snprintf(list[*n], PATH_MAX, "%s/%s", dir, rel);
    if (len > 0 && len < PATH_MAX && access(list[*n], R_OK) == 0) (*n)++;
}

/* The search order below the explicit path, as README.md documents it: beside this library
 * (an installed libwgtensor.so finds LIBDIR/wgtensor/), the configured install location (a
 * program linked with the installed libwgtensor.a), then the Dawn the project's setup put in
 * .deps/ of a build tree (programs in build/ or build/<dir>/). */
static int found_candidates(char list[][PATH_MAX], int max) {
    int n = 0;
    char module_dir[PATH_MAX], exe_dir[PATH_MAX];
    Dl_info info;
    int have_module = dladdr((void *)wgt_wgpu_load, &info) && info.dli_fname &&
                      folder_of(info.dli_fname, module_dir, sizeof module_dir);
    int have_exe = folder_of("/proc/self/exe", exe_dir, sizeof exe_dir);
    if (have_module) add_candidate(list, &n, max, module_dir, "wgtensor/libwebgpu_wrapper.so");
    if (WGT_INSTALL_LIBDIR[0]) add_candidate(list, &n, max, WGT_INSTALL_LIBDIR, "wgtensor/libwebgpu_wrapper.so");
    static const char *const up[] = {"../.deps/dawn/libwebgpu_wrapper.so", "../../.deps/dawn/libwebgpu_wrapper.so",
                                     "../../../.deps/dawn/libwebgpu_wrapper.so"};
    for (int i = 0; i < 3; i++) {
        if (have_module) add_candidate(list, &n, max, module_dir, up[i]);
        if (have_exe) add_candidate(list, &n, max, exe_dir, up[i]);
    }
    return n;
}

int wgt_wgpu_can_wait(void) { return 1; }

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
    static char found[8][PATH_MAX]; /* under loader_lock */
    const char *candidates[12];
    int nfound = found_candidates(found, 8), n = 0;
    for (int i = 0; i < nfound; i++) candidates[n++] = found[i];
    candidates[n++] = "libwebgpu_dawn.so";
    candidates[n++] = "libwebgpu_wrapper.so";
    candidates[n++] = "libwebgpu.so";
    char refused[sizeof why] = ""; /* a library found but not of our build says more than a missing one */
    for (int i = 0; i < n && !procs; i++) {
        procs = try_load(candidates[i], why, sizeof why);
        if (procs) snprintf(loaded_path, loaded_size, "%s", candidates[i]);
        else if (strlen(tried) + strlen(candidates[i]) + 4 < sizeof tried)
            strcat(strcat(tried, tried[0] ? ", " : ""), candidates[i]);
        if (!procs && strstr(why, "build id")) snprintf(refused, sizeof refused, "%s", why);
    }
    if (!procs)
        wgt_error(WGT_ERR_UNAVAILABLE, "no webgpu library found (tried %s%s%s; run `make setup` or set WGT_WEBGPU_LIBRARY)",
                  tried, refused[0] ? "; " : "", refused);
    pthread_mutex_unlock(&loader_lock);
    return procs;
}

/* The Dawn we load natively answers subgroup-matrix configurations through a struct chained
 * to its adapter info, under an sType this build's table does not pin down (see
 * wgt_wgpu_subgroup_matrix_configs in webgpu_internal.h); it also refuses shader-f16 on the
 * NVIDIA GPUs that offer the feature, so the f16 kernel could not run here anyway. */
uint32_t wgt_wgpu_subgroup_matrix_configs(const wgpu_procs *p, WGPUAdapter adapter, wgt_wgpu_sgm_config *out,
                                          uint32_t max) {
    (void)p;
    (void)adapter;
    (void)out;
    (void)max;
    return 0;
}
