/*
 * The CPU backend: storages live in host memory, kernels are C loops over strided views,
 * with tight loops for dense and broadcast operands and a worker pool (cpu_threads.c) for
 * large ones. It runs everywhere and is the oracle the WebGPU backend is tested against.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_kernels.h"
#include "cpu_walk.h"

/* The backend table and what only the CPU kernels use: the context's worker pool. */
typedef struct cpu_backend {
    wgt_backend base; /* first, so the table's pointer is the struct's */
    wgt_cpu_pool *pool;
} cpu_backend;

wgt_cpu_pool *wgt_cpu_pool_of(wgt_backend *be) { return ((cpu_backend *)be)->pool; }

static void cpu_destroy(wgt_backend *be) {
    wgt_cpu_pool_destroy(wgt_cpu_pool_of(be));
    free(be);
}
static wgt_status cpu_status(wgt_backend *be) { (void)be; return WGT_OK; }
static const char *cpu_device_name(wgt_backend *be) { (void)be; return "cpu"; }
static wgt_status cpu_sync(wgt_backend *be) { (void)be; return WGT_OK; }

static wgt_status cpu_simulate_loss(wgt_backend *be) {
    (void)be;
    return wgt_error(WGT_ERR_INVALID_ARGUMENT, "wgt_context_simulate_device_loss: the CPU backend has no device to lose");
}

static char *cpu_describe(wgt_backend *be) {
    const char *fmt = "backend: cpu\ndevice: host processor (portable C kernels)\n"
                      "threads: %d (WGT_CPU_THREADS to change)\n";
    int n = snprintf(NULL, 0, fmt, wgt_cpu_pool_slots(wgt_cpu_pool_of(be)));
    char *s = malloc((size_t)n + 1);
    if (s) snprintf(s, (size_t)n + 1, fmt, wgt_cpu_pool_slots(wgt_cpu_pool_of(be)));
    return s;
}

static wgt_status cpu_context_memory_create(wgt_backend *be, size_t nbytes, wgt_buffer **buffer, void **host) {
    *buffer = NULL;
    *host = malloc(nbytes ? nbytes : 1);
    return *host ? WGT_OK : wgt_error(WGT_ERR_OUT_OF_MEMORY, "out of host memory for %zu bytes the context keeps", nbytes);
}

static void cpu_context_memory_destroy(wgt_backend *be, wgt_buffer *buffer, void *host) { free(host); }

wgt_backend *wgt_cpu_backend_create(int threads) {
    cpu_backend *cpu = calloc(1, sizeof *cpu);
    wgt_cpu_pool *pool = cpu ? wgt_cpu_pool_create(threads > 0 ? threads : wgt_cpu_available_threads()) : NULL;
    if (!pool) {
        free(cpu);
        wgt_error(WGT_ERR_OUT_OF_MEMORY, "out of host memory for the CPU backend");
        return NULL;
    }
    cpu->pool = pool;
    wgt_backend *be = &cpu->base;
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
    be->context_memory_create = cpu_context_memory_create;
    be->context_memory_destroy = cpu_context_memory_destroy;
    be->copy = wgt_cpu_copy;
    be->binary = wgt_cpu_binary;
    be->gather_rows = wgt_cpu_gather_rows;
    be->set_rows = wgt_cpu_set_rows;
    be->scatter_add_rows = wgt_cpu_scatter_add_rows;
    be->index_check = wgt_cpu_index_check;
    be->index_narrow = wgt_cpu_index_narrow;
    be->unary = wgt_cpu_unary;
    be->cast = wgt_cpu_cast;
    be->reduce = wgt_cpu_reduce;
    be->cumsum = wgt_cpu_cumsum;
    be->scan = wgt_cpu_scan;
    be->sort_rows = wgt_cpu_sort_rows;
    be->searchsorted = wgt_cpu_searchsorted;
    be->where = wgt_cpu_where;
    be->matmul = wgt_cpu_matmul;
    be->conv = wgt_cpu_conv;
    be->random = wgt_cpu_random;
    be->rows = wgt_cpu_rows;
    be->write_box = wgt_cpu_write_box;
    be->pad = wgt_cpu_pad;
    be->quantize = wgt_cpu_quantize;
    be->dequantize = wgt_cpu_dequantize;
    be->matmul_quantized = wgt_cpu_matmul_quantized;
    return be;
}
