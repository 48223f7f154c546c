/*
 * What the .npy and safetensors readers and writers share: whole-file reading with a size
 * bound, a tensor's bytes in row-major order, and a tensor made from such bytes.
 */
#ifndef WGT_AUTOGRAD_TENSOR_FILE_H
#define WGT_AUTOGRAD_TENSOR_FILE_H

#include <stdio.h>

#include "core/node.h"

/* Opens path for reading and gives its size; NULL with an error naming fn and path. */
FILE *wgt_file_open_read(const char *fn, const char *path, uint64_t *size);
/* Reads n bytes at the current position; an error naming fn and path when the file ends first. */
wgt_status wgt_file_read(const char *fn, const char *path, FILE *f, void *dst, size_t n);
/* The tensor's elements row-major (a wait for pending work); malloc'd, caller frees. */
void *wgt_file_tensor_bytes(const char *fn, wgt_tensor *t, size_t *nbytes);
/* Writes n bytes; an error naming fn and path when the disk refuses. */
wgt_status wgt_file_write(const char *fn, const char *path, FILE *f, const void *src, size_t n);
/* Element count of a shape read from a file, or -1 when it overflows or passes limit bytes of
 * esize elements. */
int64_t wgt_file_numel(int ndim, const int64_t *shape, size_t esize, uint64_t limit);

#endif
