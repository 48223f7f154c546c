/*
 * The WebAssembly build's webgpu.h: each function of webgpu_api.h's table is an import of
 * module "wgpu", served by web/src/webgpu_imports.js over the JS WebGPU API (navigator.gpu in
 * browsers, the npm package `webgpu` in Node). It replaces src/backend/webgpu/loader.c, which
 * dlopens a native library: here there is none to load, and the struct layouts the JS side
 * reads are generated from this same header compiled for wasm32 (web/c/layouts.c), so the
 * build-id check of the native loader has no counterpart.
 */
#include <stdio.h>
#include <stdlib.h>

#include "backend/webgpu/webgpu_internal.h"

#define WGT_IMPORT(ret, name, args) \
    __attribute__((import_module("wgpu"), import_name(#name))) ret name args;
WGT_WGPU_FUNCTIONS(WGT_IMPORT)
#undef WGT_IMPORT

/* Fills why and returns 0 when the JS side has no WebGPU (no navigator.gpu, no `webgpu`
 * package); the name of what it has goes to name otherwise. */
__attribute__((import_module("wgpu"), import_name("wgtjsDescribe"))) int wgtjsDescribe(char *name, size_t name_size,
                                                                                     char *why, size_t why_size);

/* The adapter's subgroup-matrix configurations (adapter.info.subgroupMatrixConfigs), five
 * u32 each (component type, result type, M, N, K as wgt_wgpu_sgm_config), at most max of
 * them; their count. None unless the page asked for the unsafe features (web/src/node_gpu.js). */
__attribute__((import_module("wgpu"), import_name("wgtjsSubgroupMatrixConfigs"))) uint32_t
wgtjsSubgroupMatrixConfigs(WGPUAdapter adapter, uint32_t *out, uint32_t max);

/* Whether the current call into wasm came through WebAssembly.promising, so that a wait may
 * suspend; and the waits' plain forms, which answer from what has already settled. V8 traps a
 * Suspending import called outside WebAssembly.promising even where it would not suspend,
 * leaving the library half-way through a call, so a synchronous call (most of the JS API's
 * ops) must never reach one. */
__attribute__((import_module("wgpu"), import_name("wgtjsCanSuspend"))) int wgtjsCanSuspend(void);
__attribute__((import_module("wgpu"), import_name("wgtjsWaitAnyNow"))) uint32_t
wgtjsWaitAnyNow(WGPUInstance instance, size_t count, WGPUFutureWaitInfo *infos, uint64_t timeout);
__attribute__((import_module("wgpu"), import_name("wgtjsProcessEventsNow"))) void wgtjsProcessEventsNow(WGPUInstance instance);

int wgt_wgpu_can_wait(void) { return wgtjsCanSuspend(); }

static uint32_t wait_any(WGPUInstance instance, size_t count, WGPUFutureWaitInfo *infos, uint64_t timeout) {
    return wgtjsCanSuspend() ? wgpuInstanceWaitAny(instance, count, infos, timeout)
                             : wgtjsWaitAnyNow(instance, count, infos, timeout);
}

static void process_events(WGPUInstance instance) {
    if (wgtjsCanSuspend()) wgpuInstanceProcessEvents(instance);
    else wgtjsProcessEventsNow(instance);
}

static wgpu_procs procs;

const wgpu_procs *wgt_wgpu_load(const char *explicit_path, char *loaded_path, size_t loaded_size) {
    const char *env = getenv("WGT_WEBGPU_LIBRARY"); /* named the same way as natively */
    if (!(explicit_path && *explicit_path)) explicit_path = env;
    if (explicit_path && *explicit_path) {
        /* Unavailable, as a library that cannot be loaded is natively: AUTO then falls back. */
        wgt_error(WGT_ERR_UNAVAILABLE,
                  "cannot load the webgpu library %s: the WebAssembly build loads none, its webgpu.h is the "
                  "JavaScript WebGPU API",
                  explicit_path);
        return NULL;
    }
    char why[512] = "";
    if (!wgtjsDescribe(loaded_path, loaded_size, why, sizeof why)) {
        wgt_error(WGT_ERR_UNAVAILABLE, "no WebGPU in this JavaScript runtime: %s", why);
        return NULL;
    }
#define WGT_BIND(ret, name, args) procs.name = name;
    WGT_WGPU_FUNCTIONS(WGT_BIND)
#undef WGT_BIND
    procs.wgpuInstanceWaitAny = wait_any;
    procs.wgpuInstanceProcessEvents = process_events;
    return &procs;
}

/* The allocator, for the JS side: strings it hands to C callbacks live in wasm memory. */
__attribute__((export_name("wgt_js_alloc"))) void *wgt_js_alloc(size_t n) { return malloc(n ? n : 1); }
__attribute__((export_name("wgt_js_free"))) void wgt_js_free(void *p) { free(p); }

uint32_t wgt_wgpu_subgroup_matrix_configs(const wgpu_procs *p, WGPUAdapter adapter, wgt_wgpu_sgm_config *out,
                                          uint32_t max) {
    (void)p;
    _Static_assert(sizeof(wgt_wgpu_sgm_config) == 5 * sizeof(uint32_t), "five u32 per configuration");
    uint32_t n = wgtjsSubgroupMatrixConfigs(adapter, (uint32_t *)out, max);
    return n < max ? n : max;
}
