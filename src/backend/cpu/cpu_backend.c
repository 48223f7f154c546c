/*
 * The CPU backend: storages live in host memory, kernels are plain C loops over strided
 * views. It runs everywhere and is the oracle the WebGPU backend is tested against.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_kernels.h"

static void cpu_destroy(wgt_backend *be) { free(be); }
static wgt_status cpu_status(wgt_backend *be) { (void)be; return WGT_OK; }
static const char *cpu_device_name(wgt_backend *be) { (void)be; return "cpu"; }
static wgt_status cpu_sync(wgt_backend *be) { (void)be; return WGT_OK; }

static wgt_status cpu_simulate_loss(wgt_backend *be) {
    (void)be;
    return wgt_error(WGT_ERR_INVALID_ARGUMENT, "wgt_context_simulate_device_loss: the CPU backend has no device to lose");
}

static char *cpu_describe(wgt_backend *be) {
    (void)be;
    const char *text = "backend: cpu\ndevice: host processor (portable C kernels)\n";
    char *s = malloc(strlen(text) + 1);
    if (s) strcpy(s, text);
    return s;
}

wgt_backend *wgt_cpu_backend_create(void) {
    wgt_backend *be = calloc(1, sizeof *be);
    if (!be) {
        wgt_error(WGT_ERR_OUT_OF_MEMORY, "out of host memory for the CPU backend");
        return NULL;
    }
    be->name = "cpu";
    be->kind = WGT_BACKEND_CPU;
    be->host_resident = 1;
    be->destroy = cpu_destroy;
    be->status = cpu_status;
    be->device_name = cpu_device_name;
    be->describe = cpu_describe;
    be->sync = cpu_sync;
    be->simulate_loss = cpu_simulate_loss;
    be->max_buffer_bytes = (uint64_t)PTRDIFF_MAX;
    be->max_kernel_elements = (uint64_t)INT64_MAX;
    be->copy = wgt_cpu_copy;
    be->binary = wgt_cpu_binary;
    be->gather_rows = wgt_cpu_gather_rows;
    be->set_rows = wgt_cpu_set_rows;
    be->unary = wgt_cpu_unary;
    be->cast = wgt_cpu_cast;
    be->reduce = wgt_cpu_reduce;
    be->cumsum = wgt_cpu_cumsum;
    be->where = wgt_cpu_where;
    be->matmul = wgt_cpu_matmul;
    be->rows = wgt_cpu_rows;
    be->write_box = wgt_cpu_write_box;
    be->pad = wgt_cpu_pad;
    return be;
}
