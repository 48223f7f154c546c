/*
 * Heap bytes in use, for the test suite's leak checks (tests/test_util.c's
 * test_heap_in_use): wasi-libc's dlmalloc has no mallinfo2. The wasm link wraps the
 * allocation functions (wasm-ld --wrap) and this file counts each block's usable size as it
 * is handed out and given back, which is what mallinfo2's uordblks counts natively.
 */
#include <malloc.h>
#include <stdlib.h>

void *__real_malloc(size_t);
void *__real_calloc(size_t, size_t);
void *__real_realloc(void *, size_t);
void *__real_aligned_alloc(size_t, size_t);
int __real_posix_memalign(void **, size_t, size_t);
void __real_free(void *);

static long long in_use;

static void *counted(void *p) {
    if (p) in_use += (long long)malloc_usable_size(p);
    return p;
}

void *__wrap_malloc(size_t n) { return counted(__real_malloc(n)); }
void *__wrap_calloc(size_t n, size_t size) { return counted(__real_calloc(n, size)); }
void *__wrap_aligned_alloc(size_t align, size_t n) { return counted(__real_aligned_alloc(align, n)); }

int __wrap_posix_memalign(void **out, size_t align, size_t n) {
    int rc = __real_posix_memalign(out, align, n);
    if (rc == 0) counted(*out);
    return rc;
}

void __wrap_free(void *p) {
    if (p) in_use -= (long long)malloc_usable_size(p);
    __real_free(p);
}

void *__wrap_realloc(void *p, size_t n) {
    size_t before = p ? malloc_usable_size(p) : 0;
    void *q = __real_realloc(p, n);
    if (q || n == 0) in_use -= (long long)before; /* a failed realloc keeps p */
    return counted(q);
}

long long wgt_wasm_heap_in_use(void) { return in_use; }
