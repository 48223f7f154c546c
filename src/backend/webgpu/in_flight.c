/*
 * Work in flight. Recording never waits for the device, so without a bound a long run (a
 * compiled graph of a million unfused steps, say) would queue every batch before the first
 * finished, and the driver keeps what each batch holds until it knows the batch is done:
 * Dawn recycles a released bind group's descriptor set, and the staging memory of a queue
 * write, only once it has seen the batch that used it complete. On lavapipe each descriptor
 * set is a memory mapping of its own, and past the process's mapping limit (65530 by
 * default) the driver crashes instead of failing (a 200k-step graph did).
 *
 * So every submit notes a work-done future and the bind groups its batch created, oldest
 * first, and before a new batch begins the oldest ones are retired: at once if the device
 * has finished them, else by waiting for them, but only while more than
 * WGT_WGPU_IN_FLIGHT_SUBMITS batches or WGT_WGPU_IN_FLIGHT_BIND_GROUPS created groups are
 * outstanding. A device that keeps up is never waited for; one that falls behind holds the
 * recorder back instead of letting the queue grow. Every future noted is waited for once
 * (a poll when it is already done), so they do not pile up with the instance: at most
 * WGT_WGPU_IN_FLIGHT_SUBMITS are outstanding, and those go with the device.
 */
#include <stdio.h>

#include "webgpu_internal.h"

static void on_batch_done(uint32_t status, void *u1, void *u2) {
    (void)status;
    (void)u1;
    (void)u2;
}

/* Drops the oldest batch from the window. */
static void pop_oldest(wgt_webgpu *w) {
    w->in_flight_groups -= w->in_flight[w->in_flight_head].groups;
    w->in_flight_head = (w->in_flight_head + 1) % WGT_WGPU_IN_FLIGHT_SUBMITS;
    w->in_flight_count--;
}

/* Retires the batches the device has finished, oldest first, without blocking. */
static void retire_done(wgt_webgpu *w) {
    while (w->in_flight_count) {
        WGPUFutureWaitInfo info = {w->in_flight[w->in_flight_head].done, 0};
        w->p->wgpuInstanceWaitAny(w->instance, 1, &info, 0);
        if (!info.completed) return;
        pop_oldest(w);
    }
}

void wgt_wgpu_in_flight_add(wgt_webgpu *w, uint32_t groups) {
    if (w->in_flight_count == WGT_WGPU_IN_FLIGHT_SUBMITS) retire_done(w);
    if (w->in_flight_count == WGT_WGPU_IN_FLIGHT_SUBMITS) return; /* only after a failed wait */
    WGPUCallbackInfo cb = {0};
    cb.mode = WGPU_CALLBACK_MODE_WAIT_ANY_ONLY;
    cb.callback = (void (*)(void))on_batch_done;
    uint32_t at = (w->in_flight_head + w->in_flight_count) % WGT_WGPU_IN_FLIGHT_SUBMITS;
    w->in_flight[at].done = w->p->wgpuQueueOnSubmittedWorkDone(w->queue, cb);
    w->in_flight[at].groups = groups;
    w->in_flight_groups += groups;
    w->in_flight_count++;
}

wgt_status wgt_wgpu_in_flight_room(wgt_webgpu *w) {
    if (w->in_flight_count < WGT_WGPU_IN_FLIGHT_SUBMITS && w->in_flight_groups < WGT_WGPU_IN_FLIGHT_BIND_GROUPS)
        return WGT_OK;
    retire_done(w);
    while (w->in_flight_count &&
           (w->in_flight_count >= WGT_WGPU_IN_FLIGHT_SUBMITS || w->in_flight_groups >= WGT_WGPU_IN_FLIGHT_BIND_GROUPS)) {
        char what[128];
        snprintf(what, sizeof what, "work submitted earlier (%u batches, %u new bind groups in flight)",
                 w->in_flight_count, w->in_flight_groups);
        wgt_status st = wgt_wgpu_wait_work(w, w->in_flight[w->in_flight_head].done, what);
        if (st != WGT_OK) return st;
        pop_oldest(w);
    }
    return WGT_OK;
}
