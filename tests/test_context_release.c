/*
 * A released WebGPU context that its tensors keep alive gives its device back at once: the
 * Dawn device and instance, their threads and file descriptors, and the device memory of
 * the tensors it leaves behind. The tensors fail clearly from then on ("released"), and
 * releasing them later frees what is left.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "backend/webgpu/webgpu_internal.h"
#include "test.h"

static int count_entries(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

#define KEPT_CONTEXTS 64

TEST(released_webgpu_contexts_give_back_device_threads_and_fds) {
    wgt_context *probe = test_webgpu_context();
    if (!probe) return; /* skipped by test_webgpu_context */
    wgt_context_release(probe);
    int threads0 = count_entries("/proc/self/task"), fds0 = count_entries("/proc/self/fd");
    long long live0 = wgt_wgpu_live_buffers();
    wgt_tensor *kept[KEPT_CONTEXTS] = {0}, *pending[KEPT_CONTEXTS] = {0};
    wgt_read *reads[KEPT_CONTEXTS] = {0};
    static float read_into[KEPT_CONTEXTS][4];
    float v[4];
    for (int i = 0; i < KEPT_CONTEXTS && !test_current_failed(); i++) {
        wgt_context *c = test_webgpu_context();
        CHECK(c, "context %d: %s", i, wgt_last_error());
        if (!c) break;
        wgt_tensor *a = wgt_arange(c, WGT_F32, 0, 4, 1);
        kept[i] = wgt_mul_scalar(a, (double)i);
        CHECK(kept[i] && wgt_tensor_read(kept[i], v, sizeof v) == WGT_OK && v[3] == 3.0f * (float)i, "%s",
              wgt_last_error());
        pending[i] = wgt_add(a, a); /* never read to the host */
        /* A device read begun and never waited for, which outlives the context. */
        reads[i] = wgt_read_begin(pending[i], read_into[i], sizeof read_into[i]);
        CHECK(reads[i], "%s", wgt_last_error());
        wgt_release(a);
        wgt_context_release(c);
    }
    int threads1 = count_entries("/proc/self/task"), fds1 = count_entries("/proc/self/fd");
    /* Each context held its device until the last tensor went: six threads and a file
     * descriptor apiece. A few stragglers of the driver's own may remain. */
    fprintf(stderr, "  %d released contexts kept by tensors: threads %d -> %d, fds %d -> %d\n", KEPT_CONTEXTS,
            threads0, threads1, fds0, fds1);
    CHECK(threads1 - threads0 <= 4, "%d released contexts still hold %d threads", KEPT_CONTEXTS, threads1 - threads0);
    CHECK(fds1 - fds0 <= 4, "%d released contexts still hold %d file descriptors", KEPT_CONTEXTS, fds1 - fds0);
    CHECK(wgt_wgpu_live_buffers() == live0, "%lld device buffers live, %lld before",
          wgt_wgpu_live_buffers(), live0);
    /* The tensors and the read request fail clearly, and nothing touches the device. */
    for (int i = 0; i < KEPT_CONTEXTS && kept[i]; i++) {
        CHECK_ERROR(wgt_tensor_read(kept[i], v, sizeof v) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "released");
        CHECK_ERROR(wgt_tensor_read(pending[i], v, sizeof v) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "released");
        CHECK_ERROR(wgt_add(kept[i], kept[i]) == NULL, WGT_ERR_INVALID_ARGUMENT, "released");
        if (i % 2 == 0) CHECK_ERROR(wgt_read_wait(reads[i]) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "released");
        wgt_read_release(reads[i]);
        wgt_release(kept[i]), wgt_release(pending[i]);
    }
    CHECK(wgt_last_status() == WGT_OK, "releasing the tensors recorded an error: %s", wgt_last_error());
    CHECK(wgt_wgpu_live_buffers() == live0, "%lld device buffers live after all, %lld before",
          wgt_wgpu_live_buffers(), live0);
}
