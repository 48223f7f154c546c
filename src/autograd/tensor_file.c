/* Helpers shared by the .npy and safetensors code (tensor_file.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tensor_file.h"

FILE *wgt_file_open_read(const char *fn, const char *path, uint64_t *size) {
    if (!path) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: path is NULL", fn);
        return NULL;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: cannot open %s: %s", fn, path, strerror(errno));
        return NULL;
    }
    long end = -1;
    if (fseek(f, 0, SEEK_END) == 0) end = ftell(f);
    if (end < 0 || fseek(f, 0, SEEK_SET) != 0) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: %s is not a regular file that can be read", fn, path);
        fclose(f);
        return NULL;
    }
    *size = (uint64_t)end;
    return f;
}

wgt_status wgt_file_read(const char *fn, const char *path, FILE *f, void *dst, size_t n) {
    if (n && fread(dst, 1, n, f) != n)
        return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: %s ends early (truncated)", fn, path);
    return WGT_OK;
}

wgt_status wgt_file_write(const char *fn, const char *path, FILE *f, const void *src, size_t n) {
    if (n && fwrite(src, 1, n, f) != n)
        return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: cannot write %s: %s", fn, path, strerror(errno));
    return WGT_OK;
}

void *wgt_file_tensor_bytes(const char *fn, wgt_tensor *t, size_t *nbytes) {
    *nbytes = wgt_tensor_nbytes(t);
    void *b = malloc(*nbytes ? *nbytes : 1);
    if (!b) {
        wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory for %zu bytes", fn, *nbytes);
        return NULL;
    }
    if (wgt_tensor_read(t, b, *nbytes) != WGT_OK) {
        free(b);
        return NULL;
    }
    return b;
}

int64_t wgt_file_numel(int ndim, const int64_t *shape, size_t esize, uint64_t limit) {
    uint64_t n = 1;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0) return -1;
        if (shape[d] && n > limit / (uint64_t)shape[d]) return -1;
        n *= (uint64_t)shape[d];
    }
    return n > limit / esize ? -1 : (int64_t)n;
}
