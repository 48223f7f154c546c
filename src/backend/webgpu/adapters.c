/*
 * Instance creation and adapter discovery. webgpu.h offers no enumeration call, so the
 * adapters are found by asking for one per backend and power preference and keeping the
 * distinct answers. The first answer to the plain high-performance request leads the list:
 * it is the default choice.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "webgpu_internal.h"

/* Experimental features (subgroup-matrix) are only reported with this toggle. */
static const char *const unsafe_toggles[] = {"allow_unsafe_apis"};

static WGPUDawnTogglesDescriptor toggles(void) {
    WGPUDawnTogglesDescriptor t = {0};
    t.chain.sType = WGPU_STYPE_DAWN_TOGGLES_DESCRIPTOR;
    t.enabledToggleCount = 1;
    t.enabledToggles = unsafe_toggles;
    return t;
}

WGPUInstance wgt_wgpu_create_instance(const wgpu_procs *p, int *timed_wait) {
    WGPUDawnTogglesDescriptor t = toggles();
    WGPUInstanceDescriptor desc = {0};
    desc.nextInChain = &t.chain;
    desc.capabilities.timedWaitAnyEnable = 1;
    desc.capabilities.timedWaitAnyMaxCount = 8;
    WGPUInstance inst = p->wgpuCreateInstance(&desc);
    *timed_wait = inst != NULL;
    if (!inst) { /* an implementation without timed waits: poll instead */
        desc.capabilities.timedWaitAnyEnable = 0;
        desc.capabilities.timedWaitAnyMaxCount = 0;
        inst = p->wgpuCreateInstance(&desc);
    }
    if (!inst) inst = p->wgpuCreateInstance(NULL);
    return inst;
}

const char *wgt_wgpu_backend_name(uint32_t t) {
    switch (t) {
    case WGPU_BACKEND_NULL: return "Null";
    case WGPU_BACKEND_WEBGPU: return "WebGPU";
    case WGPU_BACKEND_D3D11: return "D3D11";
    case WGPU_BACKEND_D3D12: return "D3D12";
    case WGPU_BACKEND_METAL: return "Metal";
    case WGPU_BACKEND_VULKAN: return "Vulkan";
    case WGPU_BACKEND_OPENGL: return "OpenGL";
    case WGPU_BACKEND_OPENGLES: return "OpenGLES";
    }
    return "unknown";
}

const char *wgt_wgpu_adapter_type_name(uint32_t t) {
    switch (t) {
    case WGPU_ADAPTER_DISCRETE_GPU: return "discrete GPU";
    case WGPU_ADAPTER_INTEGRATED_GPU: return "integrated GPU";
    case WGPU_ADAPTER_CPU: return "CPU";
    }
    return "unknown";
}

typedef struct {
    int done;
    WGPUAdapter adapter;
} adapter_request;

static void on_adapter(uint32_t status, WGPUAdapter adapter, WGPUStringView message, void *u1, void *u2) {
    (void)message;
    (void)u2;
    adapter_request *r = u1;
    r->adapter = status == WGPU_REQUEST_STATUS_SUCCESS ? adapter : NULL;
    r->done = 1;
}

static WGPUAdapter request_adapter(const wgpu_procs *p, WGPUInstance inst, int timed_wait, uint32_t backend,
                                   uint32_t power) {
    WGPUDawnTogglesDescriptor t = toggles();
    WGPURequestAdapterOptions opt = {0};
    opt.nextInChain = &t.chain;
    opt.featureLevel = WGPU_FEATURE_LEVEL_CORE;
    opt.powerPreference = power;
    opt.backendType = backend;
    /* On the heap: if the wait gives up, Dawn still runs the callback when the instance is
     * released, so the result must outlive this frame (it is then leaked on purpose). */
    adapter_request *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    WGPUCallbackInfo cb = {0};
    cb.mode = WGPU_CALLBACK_MODE_WAIT_ANY_ONLY;
    cb.callback = (void (*)(void))on_adapter;
    cb.userdata1 = r;
    WGPUFutureWaitInfo info = {p->wgpuInstanceRequestAdapter(inst, &opt, cb), 0};
    /* Adapter discovery needs no GPU work; 30 s only guards against a broken driver. */
    for (int spins = 0; !r->done && spins < (timed_wait ? 300 : 300000); spins++) { /* 100 ms or 100 us each */
        p->wgpuInstanceWaitAny(inst, 1, &info, timed_wait ? 100000000ull : 0);
        if (!r->done && !timed_wait) nanosleep(&(struct timespec){0, 100000}, NULL);
    }
    if (!r->done) return NULL; /* r stays allocated for the pending callback */
    WGPUAdapter a = r->adapter;
    free(r);
    return a;
}

/* The device-local memory the adapter reports, or 0. The answer is checked for sense (a
 * non-empty list of at most 64 heaps) before it is used. */
static uint64_t device_local_bytes(const wgpu_procs *p, WGPUAdapter a) {
    if (!p->wgpuAdapterHasFeature(a, WGPU_FEATURE_ADAPTER_PROPERTIES_MEMORY_HEAPS)) return 0;
    WGPUAdapterPropertiesMemoryHeaps heaps;
    memset(&heaps, 0, sizeof heaps);
    heaps.chain.sType = WGPU_STYPE_ADAPTER_PROPERTIES_MEMORY_HEAPS;
    WGPUAdapterInfoRoom room;
    memset(&room, 0, sizeof room);
    room.info.nextInChain = &heaps.chain;
    if (p->wgpuAdapterGetInfo(a, &room.info) != WGPU_STATUS_SUCCESS) return 0;
    uint64_t total = 0;
    if (heaps.heapInfo && heaps.heapCount > 0 && heaps.heapCount <= 64)
        for (size_t i = 0; i < heaps.heapCount; i++)
            if (heaps.heapInfo[i].properties & WGPU_HEAP_PROPERTY_DEVICE_LOCAL) total += heaps.heapInfo[i].size;
    p->wgpuAdapterPropertiesMemoryHeapsFreeMembers(heaps);
    room.info.nextInChain = NULL;
    p->wgpuAdapterInfoFreeMembers(room.info);
    return total;
}

static void describe_adapter(const wgpu_procs *p, WGPUAdapter a, wgt_adapter_desc *d) {
    memset(d, 0, sizeof *d);
    d->adapter = a;
    WGPUAdapterInfoRoom room;
    memset(&room, 0, sizeof room);
    if (p->wgpuAdapterGetInfo(a, &room.info) != WGPU_STATUS_SUCCESS) {
        snprintf(d->name, sizeof d->name, "(no adapter info)");
        return;
    }
    wgt_wgpu_copy_string(d->name, sizeof d->name, room.info.device);
    wgt_wgpu_copy_string(d->vendor, sizeof d->vendor, room.info.vendor);
    wgt_wgpu_copy_string(d->architecture, sizeof d->architecture, room.info.architecture);
    wgt_wgpu_copy_string(d->description, sizeof d->description, room.info.description);
    d->backend_type = room.info.backendType;
    d->adapter_type = room.info.adapterType;
    d->vendor_id = room.info.vendorID;
    d->device_id = room.info.deviceID;
    d->subgroup_min = room.info.subgroupMinSize;
    d->subgroup_max = room.info.subgroupMaxSize;
    if (!d->name[0]) snprintf(d->name, sizeof d->name, "%s", d->description);
    p->wgpuAdapterInfoFreeMembers(room.info);
    d->device_local_bytes = device_local_bytes(p, a);
}

int wgt_wgpu_enumerate_adapters(const wgpu_procs *p, WGPUInstance inst, int timed_wait, wgt_adapter_desc *out,
                                int max) {
    static const uint32_t backends[] = {WGPU_BACKEND_UNDEFINED, WGPU_BACKEND_VULKAN, WGPU_BACKEND_METAL,
                                        WGPU_BACKEND_D3D12, WGPU_BACKEND_D3D11, WGPU_BACKEND_OPENGL,
                                        WGPU_BACKEND_OPENGLES};
    static const uint32_t powers[] = {WGPU_POWER_PREFERENCE_HIGH_PERFORMANCE, WGPU_POWER_PREFERENCE_LOW_POWER};
    int n = 0;
    for (size_t b = 0; b < sizeof backends / sizeof *backends; b++) {
        for (size_t q = 0; q < sizeof powers / sizeof *powers; q++) {
            WGPUAdapter a = request_adapter(p, inst, timed_wait, backends[b], powers[q]);
            if (!a) continue;
            wgt_adapter_desc d;
            describe_adapter(p, a, &d);
            int dup = 0;
            for (int i = 0; i < n && !dup; i++)
                dup = out[i].backend_type == d.backend_type && out[i].vendor_id == d.vendor_id &&
                      out[i].device_id == d.device_id && !strcmp(out[i].name, d.name);
            if (dup || n == max) {
                p->wgpuAdapterRelease(a);
                continue;
            }
            out[n++] = d;
        }
    }
    return n;
}

char *wgt_webgpu_list_adapters(const char *library_path) {
    char loaded[PATH_MAX];
    const wgpu_procs *p = wgt_wgpu_load(library_path, loaded, sizeof loaded);
    if (!p) return NULL;
    int timed;
    WGPUInstance inst = wgt_wgpu_create_instance(p, &timed);
    if (!inst) {
        wgt_error(WGT_ERR_UNAVAILABLE, "%s: wgpuCreateInstance failed", loaded);
        return NULL;
    }
    wgt_adapter_desc ad[WGT_MAX_ADAPTERS];
    int n = wgt_wgpu_enumerate_adapters(p, inst, timed, ad, WGT_MAX_ADAPTERS);
    size_t cap = 256 + (size_t)n * 512, used = 0;
    char *text = malloc(cap);
    if (text) {
        used += (size_t)snprintf(text + used, cap - used, "library: %s\n", loaded);
        if (n == 0) used += (size_t)snprintf(text + used, cap - used, "no adapters\n");
        for (int i = 0; i < n; i++)
            used += (size_t)snprintf(text + used, cap - used, "[%d] %s | vendor %s (0x%04x) | %s | %s%s\n", i,
                                     ad[i].name, ad[i].vendor[0] ? ad[i].vendor : "?", ad[i].vendor_id,
                                     wgt_wgpu_backend_name(ad[i].backend_type),
                                     wgt_wgpu_adapter_type_name(ad[i].adapter_type),
                                     ad[i].backend_type == WGPU_BACKEND_NULL ? " | not a device: never selected" : "");
    } else {
        wgt_error(WGT_ERR_OUT_OF_MEMORY, "out of host memory");
    }
    for (int i = 0; i < n; i++) p->wgpuAdapterRelease(ad[i].adapter);
    p->wgpuInstanceRelease(inst);
    return text;
}

/* Streaming multiprocessors of NVIDIA's data-centre GPUs, by a part of the adapter's name
 * (Vulkan's device name), the more specific first; from the vendor's published
 * specifications. WebGPU reports no such count; the balancing of matrix products over them
 * (matmul.c) and the split of attention's keys (attention_split.c) use it. */
static const struct {
    const char *name;
    uint32_t units;
} known_units[] = {
    {"H100 PCIe", 114}, /* the PCIe card has fewer multiprocessors than the SXM and NVL parts */
    {"H100", 132},
    {"H200", 132}, /* GH200 as well */
    {"A100", 108},
};

uint32_t wgt_wgpu_known_compute_units(const wgt_adapter_desc *d) {
    if (d->vendor_id != 0x10de) return 0;
    for (size_t i = 0; i < sizeof known_units / sizeof *known_units; i++)
        if (strstr(d->name, known_units[i].name)) return known_units[i].units;
    return 0;
}
