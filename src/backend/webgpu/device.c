/*
 * The WebGPU backend's device: adapter choice, device creation with the adapter's own
 * limits and the features we use, and the two callbacks through which the driver reports
 * trouble. Device loss and uncaptured errors become the backend's status, never an abort;
 * every wait is bounded by the context's timeout.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "sgmatrix.h"
#include "webgpu_internal.h"

/* ---- callbacks from the driver (may run on Dawn's threads) ---- */

static void on_device_lost(const WGPUDevice *device, uint32_t reason, WGPUStringView message, void *u1, void *u2) {
    (void)device;
    (void)u2;
    wgt_webgpu *w = u1;
    if (atomic_load(&w->shutting_down) || reason == WGPU_DEVICE_LOST_CALLBACK_CANCELLED) return;
    pthread_mutex_lock(&w->message_lock);
    wgt_wgpu_copy_string(w->lost_message, sizeof w->lost_message, message);
    pthread_mutex_unlock(&w->message_lock);
    atomic_store(&w->lost, 1);
}

static void on_uncaptured_error(const WGPUDevice *device, uint32_t type, WGPUStringView message, void *u1, void *u2) {
    (void)device;
    (void)u2;
    (void)type;
    wgt_webgpu *w = u1;
    pthread_mutex_lock(&w->message_lock);
    if (!w->has_uncaptured) wgt_wgpu_copy_string(w->uncaptured, sizeof w->uncaptured, message);
    w->has_uncaptured = 1;
    pthread_mutex_unlock(&w->message_lock);
}

wgt_status wgt_wgpu_status(wgt_webgpu *w) {
    if (w->device_released) /* the core refuses a released context first; read requests may still ask */
        return wgt_error(WGT_ERR_INVALID_ARGUMENT, "the context was released: its WebGPU device is gone");
    if (atomic_load(&w->lost)) {
        pthread_mutex_lock(&w->message_lock);
        wgt_error(WGT_ERR_DEVICE_LOST, "the WebGPU device (%s) was lost: %s; create a new context", w->adapter.name,
                  w->lost_message[0] ? w->lost_message : "no reason given");
        pthread_mutex_unlock(&w->message_lock);
        return WGT_ERR_DEVICE_LOST;
    }
    if (w->stuck != WGT_OK) return wgt_error(w->stuck, "%s", w->stuck_message);
    wgt_status st = wgt_wgpu_settle_late(w, 0);
    if (st != WGT_OK) return st;
    pthread_mutex_lock(&w->message_lock);
    if (w->has_uncaptured) { /* reported once, to the next call, then cleared */
        st = wgt_error(WGT_ERR_BACKEND, "the WebGPU device reported an error: %s", w->uncaptured);
        w->has_uncaptured = 0;
    }
    pthread_mutex_unlock(&w->message_lock);
    return st;
}

/* ---- waits ---- */

/* WaitAny failed with the future still pending: the context refuses device work from now on
 * (wgt_wgpu_status repeats this message), since the instance cannot wait for anything. */
static wgt_status give_up(wgt_webgpu *w, wgt_status st, const char *why) {
    w->stuck = st;
    snprintf(w->stuck_message, sizeof w->stuck_message,
             "%s; the context can no longer use the device: release it and create a new one", why);
    return wgt_error(st, "%s", w->stuck_message);
}

static void on_late_work_done(uint32_t status, void *u1, void *u2) {
    (void)status;
    (void)u1;
    (void)u2;
}

/* The deadline passed with the future still pending. Its callback writes only into the
 * backend (never the waiter's frame), so the wait may be abandoned; what it waited for runs
 * on or not. Everything submitted so far is covered by one work-done future: when that
 * completes, the device has caught up and the context works again. */
static wgt_status fall_late(wgt_webgpu *w, const char *why) {
    if (!w->late && w->queue) {
        WGPUCallbackInfo cb = {0};
        cb.mode = WGPU_CALLBACK_MODE_WAIT_ANY_ONLY;
        cb.callback = (void (*)(void))on_late_work_done;
        w->late_done = w->p->wgpuQueueOnSubmittedWorkDone(w->queue, cb);
        w->late = 1;
    }
    snprintf(w->late_message, sizeof w->late_message, "%s", why);
    return wgt_error(WGT_ERR_TIMEOUT,
                     "%s: the device may be slow or hung; the context works again once that work finishes", why);
}

/* One WaitAny slice of at most 50 ms (to notice device loss) and never past the deadline, so
 * a short timeout is honoured to the millisecond; polling sleeps 20 us where the instance
 * has no timed waits. 1 when the future completed. */
static int wait_slice(wgt_webgpu *w, WGPUFutureWaitInfo *info, uint64_t left_ns, uint32_t *status) {
    uint64_t slice = 0;
    if (w->timed_wait) slice = left_ns < 50000000ull ? left_ns : 50000000ull;
    *status = w->p->wgpuInstanceWaitAny(w->instance, 1, info, slice);
    if (!info->completed && !w->timed_wait) nanosleep(&(struct timespec){0, 20000}, NULL);
    return info->completed != 0;
}

static uint64_t ns_since(const struct timespec *start) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)(now.tv_sec - start->tv_sec) * 1000000000ull + (uint64_t)(now.tv_nsec - start->tv_nsec);
}

int wgt_wgpu_late_pending(wgt_webgpu *w) {
    if (!w->late) return 0;
    WGPUFutureWaitInfo info = {w->late_done, 0};
    uint32_t s;
    if (wait_slice(w, &info, 0, &s)) w->late = 0;
    return w->late;
}

wgt_status wgt_wgpu_settle_late(wgt_webgpu *w, int block) {
    if (!w->late) return WGT_OK;
    WGPUFutureWaitInfo info = {w->late_done, 0};
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    uint32_t s = 0;
    for (uint64_t elapsed = 0; !wait_slice(w, &info, block ? w->timeout_ns - elapsed : 0, &s);) {
        if (s != WGPU_WAIT_STATUS_SUCCESS && s != WGPU_WAIT_STATUS_TIMED_OUT) {
            char why[256];
            snprintf(why, sizeof why, "waiting for work that passed its deadline failed (wait status %u)", s);
            return give_up(w, WGT_ERR_BACKEND, why);
        }
        if (atomic_load(&w->lost) || !block || !wgt_wgpu_can_wait() || (elapsed = ns_since(&start)) >= w->timeout_ns)
            return wgt_error(WGT_ERR_TIMEOUT,
                             "the device is still running work that passed its deadline (%s); calls that need "
                             "the device wait up to %llu ms for it each, and work again once it finishes",
                             w->late_message, (unsigned long long)(w->timeout_ns / 1000000));
    }
    w->late = 0;
    return WGT_OK;
}

wgt_status wgt_wgpu_wait(wgt_webgpu *w, WGPUFuture f, const char *what) {
    WGPUFutureWaitInfo info = {f, 0};
    struct timespec start;
    if (w->stuck != WGT_OK || atomic_load(&w->lost)) return wgt_wgpu_status(w); /* no new waits */
    wgt_status late = wgt_wgpu_settle_late(w, 1); /* the deadline is for this wait's work alone */
    if (late != WGT_OK) return late;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (uint64_t elapsed = 0;;) {
        uint32_t s;
        if (wait_slice(w, &info, w->timeout_ns - elapsed, &s)) return WGT_OK;
        char why[256];
        if (s != WGPU_WAIT_STATUS_SUCCESS && s != WGPU_WAIT_STATUS_TIMED_OUT) {
            snprintf(why, sizeof why, "waiting for %s failed (wait status %u)", what, s);
            return give_up(w, WGT_ERR_BACKEND, why);
        }
        if (atomic_load(&w->lost)) return wgt_wgpu_status(w);
        if (!wgt_wgpu_can_wait()) /* nothing settles until the JS event loop runs: fail now, the device is fine */
            return wgt_error(WGT_ERR_USAGE, "waiting for %s: a synchronous call from JavaScript cannot wait for the "
                                            "device; run it where the JS API awaits (t.read(), ctx.sync()) first", what);
        if ((elapsed = ns_since(&start)) >= w->timeout_ns) {
            snprintf(why, sizeof why, "waiting for %s took longer than %llu ms", what,
                     (unsigned long long)(w->timeout_ns / 1000000));
            return fall_late(w, why);
        }
    }
}

wgt_status wgt_wgpu_wait_work(wgt_webgpu *w, WGPUFuture f, const char *what) {
    /* (A call that cannot wait keeps the allowance for the first wait that can.) */
    if (w->first_runs_pending && wgt_wgpu_can_wait() && w->stuck == WGT_OK && !atomic_load(&w->lost) &&
        wgt_wgpu_settle_late(w, 1) == WGT_OK) {
        /* Kernels' first runs: the driver may be compiling, which is not the device hanging. */
        uint64_t timeout = w->timeout_ns, allowance = (uint64_t)WGT_WGPU_FIRST_RUN_ALLOWANCE_MS * 1000000ull;
        char first[160];
        snprintf(first, sizeof first, "the first run of kernels compiled for %s (within %u s)", what,
                 WGT_WGPU_FIRST_RUN_ALLOWANCE_MS / 1000);
        if (allowance > timeout) w->timeout_ns = allowance;
        w->first_runs_pending = 0;
        wgt_status st = wgt_wgpu_wait(w, w->first_runs_done, first);
        w->timeout_ns = timeout;
        if (st != WGT_OK) return st;
    }
    return wgt_wgpu_wait(w, f, what);
}

static void on_scope(uint32_t status, uint32_t type, WGPUStringView message, void *u1, void *u2) {
    (void)u2;
    wgt_wgpu_result *r = u1;
    r->status = status;
    r->type = type;
    wgt_wgpu_copy_string(r->message, sizeof r->message, message);
    r->done = 1;
}

void wgt_wgpu_push_scope(wgt_webgpu *w) {
    w->p->wgpuDevicePushErrorScope(w->device, WGPU_ERROR_FILTER_OUT_OF_MEMORY);
    w->p->wgpuDevicePushErrorScope(w->device, WGPU_ERROR_FILTER_VALIDATION);
}

wgt_status wgt_wgpu_pop_scope(wgt_webgpu *w, const char *what) {
    wgt_wgpu_result *r = w->scope_results;
    memset(r, 0, 2 * sizeof *r);
    /* Both scopes are popped before either is waited for: a wait that gives up must not leave
     * one of ours on the device's stack, where the next push and pop would pair wrongly. */
    WGPUFuture popped[2];
    for (int i = 0; i < 2; i++) { /* validation first (pushed last), then out-of-memory */
        WGPUCallbackInfo cb = {0};
        cb.mode = WGPU_CALLBACK_MODE_WAIT_ANY_ONLY;
        cb.callback = (void (*)(void))on_scope;
        cb.userdata1 = &r[i];
        popped[i] = w->p->wgpuDevicePopErrorScope(w->device, cb);
    }
    for (int i = 0; i < 2; i++) {
        wgt_status st = wgt_wgpu_wait(w, popped[i], what);
        if (st != WGT_OK) return st;
    }
    for (int i = 0; i < 2; i++) {
        if (r[i].type == WGPU_ERROR_OUT_OF_MEMORY)
            return wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: the device is out of memory: %s", what, r[i].message);
        if (r[i].type != WGPU_ERROR_NONE && r[i].type != 0)
            return wgt_error(WGT_ERR_BACKEND, "%s failed: %s", what, r[i].message);
    }
    return WGT_OK;
}

/* ---- adapter choice and device creation ---- */

static int contains_nocase(const char *hay, const char *needle) {
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (!strncasecmp(hay, needle, n)) return 1;
    return 0;
}

/* Picks by index or name substring, or the first real adapter. Returns -1 with an error. */
static int choose_adapter(const wgt_adapter_desc *ad, int n, const char *want, const char *from_env) {
    if (want && *want) {
        char *end;
        long idx = strtol(want, &end, 10);
        int numeric = *end == '\0' && isdigit((unsigned char)want[0]);
        for (int i = 0; i < n; i++) {
            if (numeric ? i == idx : contains_nocase(ad[i].name, want) || contains_nocase(ad[i].description, want)) {
                if (ad[i].backend_type == WGPU_BACKEND_NULL) {
                    wgt_error(WGT_ERR_UNAVAILABLE, "wgt_context_create: adapter %s'%s' is Dawn's Null adapter, which computes nothing",
                              from_env, want);
                    return -1;
                }
                return i;
            }
        }
        char names[1024] = "";
        for (int i = 0; i < n; i++) {
            size_t used = strlen(names);
            snprintf(names + used, sizeof names - used, "%s[%d] %s", i ? ", " : "", i, ad[i].name);
        }
        wgt_error(WGT_ERR_UNAVAILABLE, "wgt_context_create: no adapter matches %s'%s' (have: %s)", from_env, want,
                  n ? names : "none");
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (ad[i].backend_type != WGPU_BACKEND_NULL) return i;
    wgt_error(WGT_ERR_UNAVAILABLE, "%s",
              n ? "only Dawn's Null adapter is available: no working GPU driver (on Linux, install a Vulkan driver; "
                  "for lavapipe, mesa-vulkan-drivers from bookworm-backports)"
                : "the webgpu library found no adapter");
    return -1;
}

static void on_device(uint32_t status, WGPUDevice device, WGPUStringView message, void *u1, void *u2) {
    (void)u2;
    wgt_wgpu_result *r = u1;
    r->status = status;
    r->device = status == WGPU_REQUEST_STATUS_SUCCESS ? device : NULL;
    wgt_wgpu_copy_string(r->message, sizeof r->message, message);
    r->done = 1;
}

/* The Dawn toggles the device asks for: timestamp_quantization off (Dawn rounds timestamps to a
 * coarse quantum unless told otherwise, a browser's defence against timing attacks; GPU timing
 * of our own kernels needs them whole), plus WGT_DAWN_TOGGLES, a comma-separated list of names
 * to turn on ("-name" turns one off), for measuring what a toggle such as skip_validation
 * changes. Dawn warns about names it does not know and goes on. */
#define DAWN_TOGGLES_MAX 16
typedef struct {
    char text[512];
    const char *on[DAWN_TOGGLES_MAX], *off[DAWN_TOGGLES_MAX + 1];
} dawn_toggle_list;

static wgt_status dawn_toggles_from_env(dawn_toggle_list *l, WGPUDawnTogglesDescriptor *t) {
    size_t on = 0, off = 0;
    l->off[off++] = "timestamp_quantization";
    const char *env = getenv("WGT_DAWN_TOGGLES");
    if (env && *env) {
        if (strlen(env) >= sizeof l->text)
            return wgt_error(WGT_ERR_INVALID_ARGUMENT, "wgt_context_create: WGT_DAWN_TOGGLES is %zu characters, at most %zu",
                             strlen(env), sizeof l->text - 1);
        strcpy(l->text, env);
        for (char *name = l->text, *next; name; name = next) {
            next = strchr(name, ',');
            if (next) *next++ = 0;
            int disable = *name == '-';
            name += disable;
            int bad = !*name;
            for (const char *c = name; *c; c++) bad |= !(islower((unsigned char)*c) || isdigit((unsigned char)*c) || *c == '_');
            if (bad)
                return wgt_error(WGT_ERR_INVALID_ARGUMENT,
                                 "wgt_context_create: WGT_DAWN_TOGGLES=%s: \"%s\" is not a toggle name (lower-case "
                                 "letters, digits and _, \"-\" before it to turn it off)", env, name);
            if ((disable ? off : on) >= DAWN_TOGGLES_MAX)
                return wgt_error(WGT_ERR_INVALID_ARGUMENT, "wgt_context_create: WGT_DAWN_TOGGLES=%s names more than %d toggles",
                                 env, DAWN_TOGGLES_MAX);
            if (disable) l->off[off++] = name;
            else l->on[on++] = name;
        }
    }
    t->enabledToggleCount = on;
    t->enabledToggles = l->on;
    t->disabledToggleCount = off;
    t->disabledToggles = l->off;
    return WGT_OK;
}

static wgt_status create_device(wgt_webgpu *w) {
    const wgpu_procs *p = w->p;
    WGPULimitsRoom adapter_limits;
    memset(&adapter_limits, 0, sizeof adapter_limits);
    if (p->wgpuAdapterGetLimits(w->adapter.adapter, &adapter_limits.limits) != WGPU_STATUS_SUCCESS)
        return wgt_error(WGT_ERR_UNAVAILABLE, "adapter %s: cannot read its limits", w->adapter.name);
    adapter_limits.limits.nextInChain = NULL;

    static const uint32_t wanted[] = {WGPU_FEATURE_SHADER_F16, WGPU_FEATURE_SUBGROUPS, WGPU_FEATURE_TIMESTAMP_QUERY};
    uint32_t required[4];
    size_t nreq = 0;
    for (size_t i = 0; i < sizeof wanted / sizeof *wanted; i++)
        if (p->wgpuAdapterHasFeature(w->adapter.adapter, wanted[i])) required[nreq++] = wanted[i];
    /* Subgroup matrices only where the f16 kernel has a configuration to be built for. */
    int sgm = wgt_wgpu_sgmatrix_choose(w);
    if (sgm < 0) return WGT_ERR_INVALID_ARGUMENT;
    if (sgm) required[nreq++] = WGPU_FEATURE_SUBGROUP_MATRIX;
    if (wgt_wgpu_attention_split_env(w) < 0) return WGT_ERR_INVALID_ARGUMENT;

    WGPUDeviceDescriptor desc = {0};
    desc.label = wgpu_str("wgtensor");
    desc.requiredFeatureCount = nreq;
    desc.requiredFeatures = required;
    desc.requiredLimits = &adapter_limits.limits; /* not the 128 MiB defaults */
    desc.deviceLostCallbackInfo.mode = WGPU_CALLBACK_MODE_ALLOW_SPONTANEOUS;
    desc.deviceLostCallbackInfo.callback = (void (*)(void))on_device_lost;
    desc.deviceLostCallbackInfo.userdata1 = w;
    desc.uncapturedErrorCallbackInfo.callback = on_uncaptured_error;
    desc.uncapturedErrorCallbackInfo.userdata1 = w;
    WGPUDawnTogglesDescriptor toggles = {0};
    toggles.chain.sType = WGPU_STYPE_DAWN_TOGGLES_DESCRIPTOR;
    dawn_toggle_list list;
    if (dawn_toggles_from_env(&list, &toggles) != WGT_OK) return WGT_ERR_INVALID_ARGUMENT;
    desc.nextInChain = &toggles.chain;

    wgt_wgpu_result *r = &w->device_result;
    memset(r, 0, sizeof *r);
    WGPUCallbackInfo cb = {0};
    cb.mode = WGPU_CALLBACK_MODE_WAIT_ANY_ONLY;
    cb.callback = (void (*)(void))on_device;
    cb.userdata1 = r;
    wgt_status st = wgt_wgpu_wait(w, p->wgpuAdapterRequestDevice(w->adapter.adapter, &desc, cb), "the device");
    if (st != WGT_OK) return st;
    if (!r->device)
        return wgt_error(WGT_ERR_UNAVAILABLE, "adapter %s refused to create a device: %s", w->adapter.name, r->message);
    w->device = r->device;
    w->queue = p->wgpuDeviceGetQueue(w->device);
    memset(&w->limits, 0, sizeof w->limits);
    if (p->wgpuDeviceGetLimits(w->device, &w->limits.limits) != WGPU_STATUS_SUCCESS) w->limits = adapter_limits;
    w->has_f16 = p->wgpuDeviceHasFeature(w->device, WGPU_FEATURE_SHADER_F16) != 0;
    w->has_subgroups = p->wgpuDeviceHasFeature(w->device, WGPU_FEATURE_SUBGROUPS) != 0;
    w->has_timestamp = p->wgpuDeviceHasFeature(w->device, WGPU_FEATURE_TIMESTAMP_QUERY) != 0;
    w->has_subgroup_matrix = p->wgpuAdapterHasFeature(w->adapter.adapter, WGPU_FEATURE_SUBGROUP_MATRIX) != 0;
    WGPUSupportedFeatures f = {0};
    p->wgpuAdapterGetFeatures(w->adapter.adapter, &f);
    w->feature_count = f.featureCount < 64 ? f.featureCount : 64;
    for (size_t i = 0; i < w->feature_count; i++) w->features[i] = f.features[i];
    p->wgpuSupportedFeaturesFreeMembers(f);
    return WGT_OK;
}

/* ---- the backend table ---- */

/* The core asks before every call that may need the device: after a timeout, that call is
 * the one that waits (within the timeout) for the late work, so the context recovers at the
 * first call after the work finished. */
static wgt_status webgpu_status(wgt_backend *be) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    if (!w->device_released && w->stuck == WGT_OK && !atomic_load(&w->lost)) {
        wgt_status st = wgt_wgpu_settle_late(w, 1);
        if (st != WGT_OK) return st;
    }
    return wgt_wgpu_status(w);
}
static const char *webgpu_device_name(wgt_backend *be) { return ((wgt_webgpu *)be)->adapter.name; }

/* The wait on the future is the point; the callback has nothing to record. */
static void on_work_done(uint32_t status, void *u1, void *u2) {
    (void)status;
    (void)u1;
    (void)u2;
}

static wgt_status webgpu_submit(wgt_backend *be) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    wgt_status st = wgt_wgpu_status(w);
    wgt_wgpu_pipeline_caches_bound(w, 0); /* core submits between ops */
    return st != WGT_OK ? st : wgt_wgpu_submit(w);
}

static wgt_status webgpu_sync(wgt_backend *be) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    wgt_wgpu_pipeline_caches_bound(w, 0); /* core syncs between ops */
    wgt_status st = wgt_wgpu_submit(w);
    if (st != WGT_OK) return st;
    WGPUCallbackInfo cb = {0};
    cb.mode = WGPU_CALLBACK_MODE_WAIT_ANY_ONLY;
    cb.callback = (void (*)(void))on_work_done;
    st = wgt_wgpu_wait_work(w, w->p->wgpuQueueOnSubmittedWorkDone(w->queue, cb), "submitted work");
    return st != WGT_OK ? st : wgt_wgpu_status(w);
}

static wgt_status webgpu_simulate_loss(wgt_backend *be) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    w->p->wgpuDeviceForceLoss(w->device, WGPU_DEVICE_LOST_UNKNOWN, wgpu_str("device loss simulated by the caller"));
    w->p->wgpuInstanceProcessEvents(w->instance);
    return WGT_OK;
}

static const char *feature_name(uint32_t f) {
    switch (f) {
    case WGPU_FEATURE_TIMESTAMP_QUERY: return "timestamp-query";
    case WGPU_FEATURE_SHADER_F16: return "shader-f16";
    case WGPU_FEATURE_SUBGROUPS: return "subgroups";
    case WGPU_FEATURE_SUBGROUP_MATRIX: return "chromium-experimental-subgroup-matrix";
    }
    return NULL;
}

static char *webgpu_describe(wgt_backend *be) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    const WGPULimits *l = &w->limits.limits;
    size_t cap = 8192, used = 0;
    char *s = malloc(cap);
    if (!s) return NULL;
#define ADD(...) used += (size_t)snprintf(s + used, used < cap ? cap - used : 0, __VA_ARGS__)
    ADD("backend: webgpu\nlibrary: %s\n", w->library_path);
    ADD("adapter: %s\nvendor: %s (0x%04x), device id 0x%04x\narchitecture: %s\ndescription: %s\n", w->adapter.name,
        w->adapter.vendor, w->adapter.vendor_id, w->adapter.device_id, w->adapter.architecture, w->adapter.description);
    ADD("adapter backend: %s\nadapter type: %s\nsubgroup size: %u..%u\n", wgt_wgpu_backend_name(w->adapter.backend_type),
        wgt_wgpu_adapter_type_name(w->adapter.adapter_type), w->adapter.subgroup_min, w->adapter.subgroup_max);
    ADD("timed waits: %s\n", w->timed_wait ? "yes" : "no (polling)");
    if (w->compute_units) ADD("compute units: %u (%s)\n", w->compute_units, w->compute_units_from);
    else ADD("compute units: unknown (set WGT_COMPUTE_UNITS to balance large matrix products)\n");
    ADD("device-local memory: %llu MiB%s; tensors may hold %llu MiB%s\n",
        (unsigned long long)(w->adapter.device_local_bytes >> 20), w->adapter.device_local_bytes ? "" : " (not reported)",
        (unsigned long long)(w->memory_budget >> 20), w->memory_budget ? "" : " (no limit of our own)");
    ADD("limits:\n");
    ADD("  maxBufferSize: %llu\n", (unsigned long long)l->maxBufferSize);
    ADD("  maxStorageBufferBindingSize: %llu\n", (unsigned long long)l->maxStorageBufferBindingSize);
    ADD("  maxUniformBufferBindingSize: %llu\n", (unsigned long long)l->maxUniformBufferBindingSize);
    ADD("  maxStorageBuffersPerShaderStage: %u\n", l->maxStorageBuffersPerShaderStage);
    ADD("  maxBindGroups: %u\n", l->maxBindGroups);
    ADD("  maxBindingsPerBindGroup: %u\n", l->maxBindingsPerBindGroup);
    ADD("  maxDynamicUniformBuffersPerPipelineLayout: %u\n", l->maxDynamicUniformBuffersPerPipelineLayout);
    ADD("  minUniformBufferOffsetAlignment: %u\n", l->minUniformBufferOffsetAlignment);
    ADD("  minStorageBufferOffsetAlignment: %u\n", l->minStorageBufferOffsetAlignment);
    ADD("  maxComputeWorkgroupStorageSize: %u\n", l->maxComputeWorkgroupStorageSize);
    ADD("  maxComputeInvocationsPerWorkgroup: %u\n", l->maxComputeInvocationsPerWorkgroup);
    ADD("  maxComputeWorkgroupSize: %u x %u x %u\n", l->maxComputeWorkgroupSizeX, l->maxComputeWorkgroupSizeY,
        l->maxComputeWorkgroupSizeZ);
    ADD("  maxComputeWorkgroupsPerDimension: %u\n", l->maxComputeWorkgroupsPerDimension);
    ADD("features used: shader-f16 %s, subgroups %s, timestamp-query %s, subgroup-matrix %s\n",
        w->has_f16 ? "yes" : "no", w->has_subgroups ? "yes" : "no", w->has_timestamp ? "yes" : "no",
        w->has_subgroup_matrix ? "offered" : "no");
    ADD("subgroup matrices: %s\n", w->sgm_note);
    ADD("subgroup-matrix attention: %s\n", w->sga_note);
    for (uint32_t i = 0; i < w->sgm_config_count; i++) {
        static const char *const types[] = {"?", "f32", "f16", "u32", "i32", "u8", "i8"};
        const wgt_wgpu_sgm_config *c = &w->sgm_configs[i];
        ADD("  %ux%ux%u %s -> %s\n", c->M, c->N, c->K, types[c->component < 7 ? c->component : 0],
            types[c->result < 7 ? c->result : 0]);
    }
    ADD("all adapter features:");
    for (size_t i = 0; i < w->feature_count; i++) {
        const char *n = feature_name(w->features[i]);
        if (n) ADD(" %s", n);
        else ADD(" 0x%x", w->features[i]);
    }
    ADD("\n");
#undef ADD
    return s;
}

wgt_backend *wgt_webgpu_backend_create(const wgt_context_options *options) {
    wgt_webgpu *w = calloc(1, sizeof *w);
    if (!w) {
        wgt_error(WGT_ERR_OUT_OF_MEMORY, "out of host memory for the WebGPU backend");
        return NULL;
    }
    pthread_mutex_init(&w->message_lock, NULL);
    w->timeout_ns = (uint64_t)options->wait_timeout_ms * 1000000ull;
    w->p = wgt_wgpu_load(options->library_path, w->library_path, sizeof w->library_path);
    if (!w->p) goto fail;
    w->instance = wgt_wgpu_create_instance(w->p, &w->timed_wait);
    if (!w->instance) {
        wgt_error(WGT_ERR_UNAVAILABLE, "%s: wgpuCreateInstance failed", w->library_path);
        goto fail;
    }
    wgt_adapter_desc ad[WGT_MAX_ADAPTERS];
    int n = wgt_wgpu_enumerate_adapters(w->p, w->instance, w->timed_wait, ad, WGT_MAX_ADAPTERS);
    const char *want = options->adapter ? options->adapter : getenv("WGT_ADAPTER");
    int chosen = choose_adapter(ad, n, want, options->adapter ? "" : "WGT_ADAPTER="); /* say where it came from */
    for (int i = 0; i < n; i++)
        if (i != chosen) w->p->wgpuAdapterRelease(ad[i].adapter);
    if (chosen < 0) goto fail;
    w->adapter = ad[chosen];
    /* context.c has applied WGT_COMPUTE_UNITS to the option. */
    if ((w->compute_units = options->compute_units) != 0) w->compute_units_from = "given";
    else if ((w->compute_units = wgt_wgpu_known_compute_units(&w->adapter)) != 0) w->compute_units_from = "known adapter";
    w->memory_budget = options->max_device_bytes;
    if (!w->memory_budget && w->adapter.device_local_bytes) {
        uint64_t heap = w->adapter.device_local_bytes, reserve = heap / 32;
        if (reserve < (512ull << 20)) reserve = 512ull << 20;
        w->memory_budget = heap > 2 * reserve ? heap - reserve : heap / 2;
    }
    if (create_device(w) != WGT_OK || wgt_wgpu_encoder_init(w) != WGT_OK || wgt_wgpu_buffers_init(w) != WGT_OK)
        goto fail;

    wgt_backend *be = &w->base;
    be->name = "webgpu";
    be->kind = WGT_BACKEND_WEBGPU;
    be->destroy = wgt_wgpu_destroy;
    be->release_device = wgt_wgpu_release_device;
    be->status = webgpu_status;
    be->device_name = webgpu_device_name;
    be->describe = webgpu_describe;
    be->sync = webgpu_sync;
    be->submit = webgpu_submit;
    be->simulate_loss = webgpu_simulate_loss;
    be->gpu_timing = wgt_wgpu_gpu_timing;
    be->gpu_time = wgt_wgpu_gpu_time;
    be->gpu_kernel_times = wgt_wgpu_gpu_kernel_times;
    const WGPULimits *l = &w->limits.limits;
    /* A tensor is bound whole, so it must fit one storage binding as well as one buffer. */
    be->max_buffer_bytes = l->maxStorageBufferBindingSize < l->maxBufferSize ? l->maxStorageBufferBindingSize
                                                                           : l->maxBufferSize;
    be->max_kernel_elements = 0x7fffffffull; /* kernels index with 32-bit integers */
    be->buffer_create = wgt_wgpu_buffer_create;
    be->buffer_destroy = wgt_wgpu_buffer_destroy;
    be->buffer_write = wgt_wgpu_buffer_write;
    be->buffer_read = wgt_wgpu_buffer_read;
    be->buffer_export = wgt_wgpu_buffer_export;
    be->context_memory_create = wgt_wgpu_context_memory_create;
    be->context_memory_destroy = wgt_wgpu_context_memory_destroy;
    be->stats = wgt_wgpu_stats;
    be->trim = wgt_wgpu_trim;
    be->read_begin = wgt_wgpu_read_begin;
    be->read_poll = wgt_wgpu_read_poll;
    be->read_wait = wgt_wgpu_read_wait;
    be->read_data = wgt_wgpu_read_data;
    be->read_release = wgt_wgpu_read_release;
    be->copy = wgt_wgpu_copy;
    be->binary = wgt_wgpu_binary;
    be->matmul = wgt_wgpu_matmul;
    be->conv = wgt_wgpu_conv;
    be->random = wgt_wgpu_random;
    be->gather_rows = wgt_wgpu_gather_rows;
    be->set_rows = wgt_wgpu_set_rows;
    be->scatter_add_rows = wgt_wgpu_scatter_add_rows;
    be->index_check = wgt_wgpu_index_check;
    be->index_narrow = wgt_wgpu_index_narrow;
    be->rows = wgt_wgpu_rows;
    be->attention = wgt_wgpu_attention;
    be->rope = wgt_wgpu_rope;
    be->attention_fits = wgt_wgpu_attention_fits;
    be->attention_pays = wgt_wgpu_attention_pays;
    be->write_box = wgt_wgpu_write_box;
    be->pad = wgt_wgpu_pad;
    be->quantize = wgt_wgpu_quantize;
    be->dequantize = wgt_wgpu_dequantize;
    be->matmul_quantized = wgt_wgpu_matmul_quantized;
    be->reduce = wgt_wgpu_reduce;
    be->cumsum = wgt_wgpu_cumsum;
    be->scan = wgt_wgpu_scan;
    be->sort_rows = wgt_wgpu_sort_rows;
    be->searchsorted = wgt_wgpu_searchsorted;
    be->unary = wgt_wgpu_unary;
    be->cast = wgt_wgpu_cast;
    be->where = wgt_wgpu_where;
    be->fused = wgt_wgpu_fused;
    be->max_fused_buffers = wgt_wgpu_fused_max_buffers(w);
    be->user_kernel_create = wgt_wgpu_user_kernel_create;
    be->user_kernel_run = wgt_wgpu_user_kernel_run;
    be->user_kernel_release = wgt_wgpu_user_kernel_release;
    be->max_binding_bytes = l->maxStorageBufferBindingSize;
    be->max_workgroups_per_dim = l->maxComputeWorkgroupsPerDimension ? l->maxComputeWorkgroupsPerDimension : 65535;
    be->buffer_wrap = wgt_wgpu_buffer_wrap;
    be->device_handle = wgt_wgpu_device_handle;
    wgt_wgpu_sgmatrix_probe(w); /* with the table complete: it runs a product */
    wgt_wgpu_attention_sgmatrix_probe(w);
    return be;
fail:
    if (w->p) {
        wgt_status keep = wgt_last_status();
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", wgt_last_error());
        wgt_wgpu_destroy(&w->base);
        wgt_error(keep, "%s", msg);
    } else {
        pthread_mutex_destroy(&w->message_lock);
        free(w);
    }
    return NULL;
}
