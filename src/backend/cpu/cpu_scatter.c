/*
 * Scatter-add of rows on the CPU: dst[indices[i]] += rows[i] for f32 rows. A stable counting
 * sort of the indices lists, per dst row, the positions that name it in index order; each
 * such dst row is then summed with its rows in double and rounded once, so repeated indices
 * give the float64 sum of the row and its contributions within one f32 rounding, and the
 * result does not depend on threads or timing. An index out of range writes nothing (the
 * core reports it through index_check).
 */
#include <stdlib.h>

#include "cpu_kernels.h"

static int64_t index_at(const wgt_operand *indices, int64_t i) {
    int64_t at = indices->offset + i * indices->strides[0];
    if (indices->dtype == WGT_I32) return ((const int32_t *)indices->host)[at];
    return ((const uint32_t *)indices->host)[at];
}

wgt_status wgt_cpu_scatter_add_rows(wgt_backend *be, const wgt_operand *dst, const wgt_operand *indices,
                                    const wgt_operand *rows) {
    (void)be;
    int64_t nrows = dst->shape[0], n = rows->shape[0], row = 1;
    for (int d = 1; d < dst->ndim; d++) row *= dst->shape[d];
    if (n == 0 || row == 0) return WGT_OK;
    for (int64_t i = 0; i < n; i++) {
        int64_t v = index_at(indices, i);
        if (v < 0 || v >= nrows) return WGT_OK; /* all or nothing */
    }
    int64_t *start = calloc((size_t)nrows + 1, sizeof *start), *order = malloc((size_t)n * sizeof *order);
    double *acc = malloc((size_t)row * sizeof *acc);
    if (!start || !order || !acc) {
        free(start);
        free(order);
        free(acc);
        return wgt_error(WGT_ERR_OUT_OF_MEMORY, "scatter_add_rows: out of host memory for %lld indices",
                         (long long)n);
    }
    for (int64_t i = 0; i < n; i++) start[index_at(indices, i) + 1]++;
    for (int64_t r = 0; r < nrows; r++) start[r + 1] += start[r];
    for (int64_t i = 0; i < n; i++) order[start[index_at(indices, i)]++] = i;
    /* start[r] now ends row r's list, which begins where row r - 1's ends. */
    float *d = (float *)dst->host + dst->offset;
    const float *s = (const float *)rows->host + rows->offset;
    for (int64_t r = 0, first = 0; r < nrows; first = start[r++]) {
        if (first == start[r]) continue;
        float *out = d + r * row;
        for (int64_t k = 0; k < row; k++) acc[k] = out[k];
        for (int64_t j = first; j < start[r]; j++) {
            const float *src = s + order[j] * row;
            for (int64_t k = 0; k < row; k++) acc[k] += src[k];
        }
        for (int64_t k = 0; k < row; k++) out[k] = (float)acc[k];
    }
    free(start);
    free(order);
    free(acc);
    return WGT_OK;
}
