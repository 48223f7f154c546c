/*
 * Finds LAPACK at run time rather than at link time: the CPU backend's BLAS is any CBLAS (the
 * Makefile's BLAS), and only some carry LAPACK. OpenBLAS does (Debian's libopenblas0), so its
 * routines are looked up first among the symbols already loaded; failing that, the reference
 * LAPACK (Debian's liblapack3, liblapack.so.3) is opened. Without either, the dense
 * factorizations fail with a status naming the missing routine, never a wrong answer. Nothing
 * is linked, so a library built without LAPACK still loads and runs everything else.
 */
#include "lapack.h"

#ifndef __wasi__
#include <dlfcn.h>
#endif
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "error.h"

static wgt_lapack found;
static const char *missing; /* the first routine not found, NULL when all are */
static char where[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static const char *const names[] = {"dgetrf_", "dgetrs_", "dpotrf_", "dgeqrf_", "dorgqr_", "dgesdd_", "dsyevd_"};
enum { NAMES = sizeof names / sizeof names[0] };

#ifdef __wasi__
/* WASI has no dynamic loading, so the WebAssembly build has no LAPACK to find. */
static void load(void) {
    missing = names[0];
    snprintf(where, sizeof where, "the WebAssembly build (no dynamic loading)");
}
#else
static int resolve(void *h) {
    void *f[NAMES];
    for (int i = 0; i < NAMES; i++)
        if (!(f[i] = dlsym(h, names[i]))) {
            missing = names[i];
            return 0;
        }
    /* Data pointers to function pointers: POSIX dlsym's documented use. */
    memcpy(&found.dgetrf, &f[0], sizeof f[0]);
    memcpy(&found.dgetrs, &f[1], sizeof f[1]);
    memcpy(&found.dpotrf, &f[2], sizeof f[2]);
    memcpy(&found.dgeqrf, &f[3], sizeof f[3]);
    memcpy(&found.dorgqr, &f[4], sizeof f[4]);
    memcpy(&found.dgesdd, &f[5], sizeof f[5]);
    memcpy(&found.dsyevd, &f[6], sizeof f[6]);
    missing = NULL;
    return 1;
}

static void load(void) {
    if (resolve(RTLD_DEFAULT)) return;
    static const char *const libs[] = {"liblapack.so.3", "liblapack.so"};
    for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++) {
        void *h = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
        if (h && resolve(h)) return; /* kept open for the process's life */
        if (h) dlclose(h);
    }
    snprintf(where, sizeof where, "neither the loaded BLAS nor liblapack.so.3");
}
#endif

const wgt_lapack *wgt_lapack_get(const char *fn) {
    pthread_once(&once, load);
    if (!missing) return &found;
    wgt_error(WGT_ERR_UNAVAILABLE,
              "%s: needs LAPACK, but %s provides %s (install liblapack3 or OpenBLAS; docs/architecture.md)", fn, where,
              missing);
    return NULL;
}
