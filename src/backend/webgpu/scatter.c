/*
 * Scatter-add of f32 rows on WebGPU (wgsl/scatter_add_index.wgsl, wgsl/scatter_add_sum.wgsl):
 * dst[indices[i]] += rows[i], the gradient of a gather. WGSL has atomics on i32 and u32
 * only, and a compare-and-swap loop on f32 bits would add in whatever order the threads
 * meet, accumulating one f32 rounding per repeat. So the indices are counting-sorted instead
 * (count, scan, fill: three small passes over one zeroed scratch buffer) and one invocation
 * per dst element sums its row's list in a two-float accumulator, rounding once: repeated
 * indices give the float64 sum within f32 rounding. The fill's order within a row is not
 * fixed; the accumulator makes it matter only for sums within about 2^-40 of a rounding
 * tie. Nothing is read back: a bad index raises a flag in the scratch buffer and the sum
 * pass then writes nothing (the core reports the index through index_check).
 */
#include <stdio.h>
#include <string.h>

#include "webgpu_internal.h"

#define WORKGROUP_SIZE 256u

typedef struct {
    uint32_t n, rows, index_offset;
    int32_t index_stride;
} index_params;

typedef struct {
    uint32_t count, row, rows, dst_offset, rows_offset, zero, pad[2];
} sum_params;

typedef struct {
    const char *name;
    int pass;
} scatter_kernel;

static char *build_scatter(wgt_webgpu *w, const void *arg) {
    (void)w;
    const scatter_kernel *k = arg;
    const char *text = wgt_wgsl_source(k->name);
    if (!text) return NULL;
    char pass[8];
    snprintf(pass, sizeof pass, "%d", k->pass);
    const char *pairs[] = {"PASS", pass, NULL};
    return wgt_wgsl_expand(text, pairs);
}

static wgt_status scatter_pipeline(wgt_webgpu *w, const char *name, int pass, int storage, wgt_pipeline **out) {
    scatter_kernel k = {name, pass};
    char key[64];
    snprintf(key, sizeof key, "%s:%d", name, pass);
    return wgt_wgpu_pipeline(w, key, storage, build_scatter, &k, out);
}

wgt_status wgt_wgpu_scatter_add_rows(wgt_backend *be, const wgt_operand *dst, const wgt_operand *indices,
                                     const wgt_operand *rows) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    uint64_t nrows = (uint64_t)dst->shape[0], n = (uint64_t)rows->shape[0], row = 1;
    for (int d = 1; d < dst->ndim; d++) row *= (uint64_t)dst->shape[d];
    if (n == 0 || row == 0) return WGT_OK;
    uint64_t words = 3 * nrows + 2 + n;
    if (nrows * row > 0x7fffffffu || words > 0x7fffffffu)
        return wgt_error(WGT_ERR_LIMIT, "scatter_add_rows of %llu rows of %llu elements and %llu indices is beyond "
                         "32-bit indexing", (unsigned long long)nrows, (unsigned long long)row,
                         (unsigned long long)n);
    index_params ip = {(uint32_t)n, (uint32_t)nrows, (uint32_t)indices->offset, (int32_t)indices->strides[0]};
    sum_params sp;
    memset(&sp, 0, sizeof sp);
    sp.count = (uint32_t)(nrows * row);
    sp.row = (uint32_t)row;
    sp.rows = (uint32_t)nrows;
    sp.dst_offset = (uint32_t)dst->offset;
    sp.rows_offset = (uint32_t)rows->offset;
    wgt_buffer *scratch = NULL;
    wgt_pipeline *pl;
    wgt_status st = wgt_wgpu_buffer_create(be, (size_t)words * 4, 1, &scratch);
    wgt_buffer *index_pass[2] = {indices->buffer, scratch};
    uint64_t index_groups = (n + WORKGROUP_SIZE - 1) / WORKGROUP_SIZE;
    for (int pass = 0; pass < 3 && st == WGT_OK; pass++)
        if ((st = scatter_pipeline(w, "scatter_add_index", pass, 2, &pl)) == WGT_OK)
            st = wgt_wgpu_dispatch(w, pl, index_pass, &ip, sizeof ip, pass == 1 ? 1 : index_groups);
    if (st == WGT_OK && (st = scatter_pipeline(w, "scatter_add_sum", 0, 3, &pl)) == WGT_OK) {
        wgt_buffer *sum_pass[3] = {rows->buffer, scratch, dst->buffer};
        st = wgt_wgpu_dispatch(w, pl, sum_pass, &sp, sizeof sp, (sp.count + WORKGROUP_SIZE - 1) / WORKGROUP_SIZE);
    }
    wgt_wgpu_buffer_destroy(be, scratch); /* a release: the recorded dispatches keep it alive */
    return st;
}
