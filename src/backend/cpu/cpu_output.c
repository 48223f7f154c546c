/*
 * Fresh kernel outputs on the CPU backend. The core allocates a new output with calloc, which
 * for large sizes maps untouched pages: the kernel's first write to each 4 KiB page then takes
 * a page fault that clears it, and for a dense elementwise op those faults cost more than the
 * arithmetic (about 17 ms of the 25 ms it takes to write 32 MiB here, against 8 ms when the
 * region may use 2 MiB transparent huge pages, one fault per 2 MiB). So, as NumPy does for its
 * arrays, a kernel asks for huge pages over an output of 4 MiB or more before it writes it.
 * It is advice: where the system does not allow huge pages (or the pages are already there,
 * as after WGT_POISON's fill) nothing changes.
 */
#include <stdint.h>
#ifndef __wasi__ /* WASI has no madvise: MADV_HUGEPAGE stays undefined, the advice is skipped */
#include <sys/mman.h>
#endif
#include <unistd.h>

#include "cpu_walk.h"

#define HUGE_PAGE_MIN_BYTES ((size_t)4 << 20)

void wgt_cpu_advise_output(const wgt_operand *out) {
#ifdef MADV_HUGEPAGE
    size_t es = wgt_dtype_size(out->dtype), n = 1;
    for (int d = 0; d < out->ndim; d++) n *= (size_t)out->shape[d];
    size_t bytes = n * es;
    if (bytes < HUGE_PAGE_MIN_BYTES) return;
    long p = sysconf(_SC_PAGESIZE);
    size_t page = p > 0 ? (size_t)p : 4096;
    /* madvise takes a page-aligned start; the partial pages at either end keep their advice. */
    uintptr_t begin = (uintptr_t)((char *)out->host + (size_t)out->offset * es), end = begin + bytes;
    uintptr_t first = (begin + page - 1) / page * page;
    if (end > first) madvise((void *)first, end - first, MADV_HUGEPAGE);
#else
    (void)out;
#endif
}
