/*
 * Large writes from host memory. Dawn's queue write copies the caller's bytes into a staging
 * buffer it makes for that write alone when the write is larger than its own staging ring:
 * for a 256 MiB array that is a fresh 256 MiB mapping, whose pages fault in as the bytes are
 * copied, before the device's copy can even begin (3.1 GB/s end to end on an H200 host, less
 * than half of what the bus carries). Large writes therefore go in pieces through a few
 * staging buffers the backend keeps: the host copies piece i + 1 into one slot while the
 * device copies piece i out of another, and each slot is mapped again (MapAsync) behind its
 * copy, so the next write finds its pages already resident.
 *
 * Order: a piece's copy is submitted on its own, so it runs after every batch already
 * submitted and before the batch being recorded, exactly where a queue write would run.
 * (wgt_wgpu_buffer_write submits the batch first when that batch uses the buffer.)
 *
 * Dawn delivers a mapping's callback into the slot, inside the backend; a slot's buffer that
 * goes while its mapping is pending (trim, device release) has that mapping cancelled, and its
 * generation is bumped so the late callback cannot be taken for a newer mapping's.
 */
#include <string.h>

#include "webgpu_internal.h"

static void on_mapped(uint32_t status, WGPUStringView message, void *u1, void *u2) {
    (void)message;
    struct wgt_upload_slot *slot = u1;
    if ((uint32_t)(uintptr_t)u2 != slot->generation) return; /* a cancelled, older mapping's */
    slot->map_status = status;
    slot->callback_ran = 1;
}

static void slot_release(wgt_webgpu *w, struct wgt_upload_slot *slot) {
    if (!slot->buffer) return;
    w->p->wgpuBufferDestroy(slot->buffer); /* cancels a pending mapping */
    w->p->wgpuBufferRelease(slot->buffer);
    slot->buffer = NULL;
    slot->mapping = 0;
    slot->generation++;
}

/* Leaves the slot's buffer mapped for writing: made mapped, or its last mapping waited on. */
static wgt_status slot_ready(wgt_webgpu *w, struct wgt_upload_slot *slot) {
    if (slot->buffer && slot->mapping) {
        slot->mapping = 0;
        wgt_status st = slot->callback_ran ? WGT_OK : wgt_wgpu_wait_work(w, slot->future, "a write to the device");
        if (st != WGT_OK) {
            slot_release(w, slot);
            return st;
        }
        if (slot->callback_ran && slot->map_status == WGPU_REQUEST_STATUS_SUCCESS) return WGT_OK;
        slot_release(w, slot); /* a failed mapping: make the slot again */
        if ((st = wgt_wgpu_status(w)) != WGT_OK) return st;
    }
    if (slot->buffer) return WGT_OK;
    WGPUBufferDescriptor desc = {0};
    desc.label = wgpu_str("wgtensor write staging");
    desc.usage = WGPU_BUFFER_USAGE_MAP_WRITE | WGPU_BUFFER_USAGE_COPY_SRC;
    desc.size = WGT_WGPU_UPLOAD_PIECE;
    desc.mappedAtCreation = 1;
    wgt_wgpu_push_scope(w);
    slot->buffer = w->p->wgpuDeviceCreateBuffer(w->device, &desc);
    wgt_status st = wgt_wgpu_pop_scope(w, "making a staging buffer for a write to the device");
    if (st == WGT_OK && !slot->buffer) st = wgt_error(WGT_ERR_OUT_OF_MEMORY, "cannot make a staging buffer of %llu bytes",
                                                      (unsigned long long)WGT_WGPU_UPLOAD_PIECE);
    if (st != WGT_OK) slot_release(w, slot);
    return st;
}

/* Copies one piece through the slot and asks for the slot's next mapping behind the copy. */
static wgt_status send_piece(wgt_webgpu *w, struct wgt_upload_slot *slot, WGPUBuffer dst, uint64_t offset,
                             const void *src, size_t n) {
    const wgpu_procs *p = w->p;
    void *range = p->wgpuBufferGetMappedRange(slot->buffer, 0, WGT_WGPU_UPLOAD_PIECE);
    if (!range) {
        slot_release(w, slot);
        return wgt_error(WGT_ERR_BACKEND, "the staging buffer of a write to the device has no mapped range");
    }
    memcpy(range, src, n);
    p->wgpuBufferUnmap(slot->buffer);
    WGPUCommandEncoderDescriptor ed = {0};
    WGPUCommandEncoder enc = p->wgpuDeviceCreateCommandEncoder(w->device, &ed);
    if (!enc) return wgt_error(WGT_ERR_BACKEND, "cannot create a command encoder for a write to the device");
    p->wgpuCommandEncoderCopyBufferToBuffer(enc, slot->buffer, 0, dst, offset, n);
    WGPUCommandBufferDescriptor cd = {0};
    WGPUCommandBuffer cmd = p->wgpuCommandEncoderFinish(enc, &cd);
    p->wgpuCommandEncoderRelease(enc);
    if (!cmd) return wgt_error(WGT_ERR_BACKEND, "finishing the command buffer of a write to the device failed");
    p->wgpuQueueSubmit(w->queue, 1, &cmd);
    p->wgpuCommandBufferRelease(cmd);
    WGPUCallbackInfo cb = {0};
    cb.mode = WGPU_CALLBACK_MODE_ALLOW_PROCESS_EVENTS;
    cb.callback = (void (*)(void))on_mapped;
    cb.userdata1 = slot;
    cb.userdata2 = (void *)(uintptr_t)slot->generation;
    slot->callback_ran = 0;
    slot->future = p->wgpuBufferMapAsync(slot->buffer, WGPU_MAP_MODE_WRITE, 0, (size_t)WGT_WGPU_UPLOAD_PIECE, cb);
    slot->mapping = 1;
    return wgt_wgpu_status(w);
}

wgt_status wgt_wgpu_upload_staged(wgt_webgpu *w, WGPUBuffer dst, uint64_t offset, const void *src, size_t n) {
    for (size_t done = 0; done < n;) {
        struct wgt_upload_slot *slot = &w->upload_slots[w->upload_next];
        w->upload_next = (w->upload_next + 1) % WGT_WGPU_UPLOAD_SLOTS;
        size_t piece = n - done < WGT_WGPU_UPLOAD_PIECE ? n - done : (size_t)WGT_WGPU_UPLOAD_PIECE;
        wgt_status st = slot_ready(w, slot);
        if (st == WGT_OK) st = send_piece(w, slot, dst, offset + done, (const char *)src + done, piece);
        if (st != WGT_OK) return st;
        done += piece;
    }
    return WGT_OK;
}

void wgt_wgpu_uploads_release(wgt_webgpu *w) {
    for (uint32_t i = 0; i < WGT_WGPU_UPLOAD_SLOTS; i++) slot_release(w, &w->upload_slots[i]);
}
