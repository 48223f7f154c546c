/*
 * CPU sorting and searching, the oracle for the WebGPU kernels. Every element becomes a
 * 32-bit key whose unsigned order is the sort order (sort_keys.h): a row is sorted as
 * (key, position) pairs by a bottom-up merge sort that takes the left run's element on equal
 * keys, so equal elements keep their order (stable) without comparing positions. Values are
 * then read back from the input at the sorted positions, bit for bit (a NaN's payload, -0.0).
 * A top-k (k < n) sorts no whole row: each (key, position) pair as one 64-bit value orders as
 * the stable sort does, a selection puts the k smallest first in O(n) expected time, and
 * only those k are sorted.
 * Rows are spread over the worker pool through the walk, one row per step.
 */
#include <stdlib.h>
#include <string.h>

#include "backend/sort_keys.h"
#include "cpu_kernels.h"
#include "cpu_walk.h"

static uint32_t load_raw(const wgt_operand *t, int64_t i) {
    const uint8_t *p = t->host;
    switch (wgt_dtype_size(t->dtype)) {
    case 1: return p[i];
    case 2: {
        uint16_t h;
        memcpy(&h, p + (size_t)i * 2, 2);
        return h;
    }
    default: {
        uint32_t b;
        memcpy(&b, p + (size_t)i * 4, 4);
        return b;
    }
    }
}

static void store_raw(const wgt_operand *t, int64_t i, uint32_t bits) {
    uint8_t *p = t->host;
    size_t size = wgt_dtype_size(t->dtype);
    if (size == 1) {
        p[i] = (uint8_t)bits;
    } else if (size == 2) {
        uint16_t h = (uint16_t)bits;
        memcpy(p + (size_t)i * 2, &h, 2);
    } else {
        memcpy(p + (size_t)i * 4, &bits, 4);
    }
}

static uint32_t key_of(const wgt_operand *t, int64_t i) {
    uint32_t b = load_raw(t, i);
    switch (t->dtype) {
    case WGT_F16: return wgt_sort_key_f16(b);
    case WGT_BF16: return wgt_sort_key_bf16(b);
    case WGT_F32: return wgt_sort_key_f32(b);
    case WGT_I32: return b ^ 0x80000000u;
    case WGT_I16: return b ^ 0x8000u;
    case WGT_I8: return b ^ 0x80u;
    default: return b; /* u32, u16, u8, bool */
    }
}

/* Sorts pos[0..n) by key[pos] (stable), using tmp (n entries) as the other buffer; the
 * result ends in pos. */
static void merge_sort(const uint32_t *key, uint32_t *pos, uint32_t *tmp, int64_t n) {
    uint32_t *src = pos, *dst = tmp;
    for (int64_t width = 1; width < n; width *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * width) {
            int64_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
            int64_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi) dst[o++] = key[src[j]] < key[src[i]] ? src[j++] : src[i++];
            while (i < mid) dst[o++] = src[i++];
            while (j < hi) dst[o++] = src[j++];
        }
        uint32_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != pos) memcpy(pos, src, sizeof *pos * (size_t)n);
}

static int u64_order(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Puts the k smallest of the distinct v[0..n) first, in order (0 < k < n): quickselect with
 * a median-of-three pivot, which after 2 log2(n) rounds sorts what is left instead, so bad
 * pivots cost at most O(n log n); then only the k are sorted. */
static void select_first(uint64_t *v, int64_t n, int64_t k) {
    int64_t lo = 0, hi = n;
    int rounds = 2;
    for (int64_t m = n; m > 1; m >>= 1) rounds += 2;
    while (hi - lo > 16 && rounds-- > 0) {
        int64_t mid = lo + (hi - lo) / 2, at = hi - 1;
        uint64_t a = v[lo], b = v[mid], c = v[hi - 1];
        if ((a < b) == (b < c)) at = mid;
        else if ((b < a) == (a < c)) at = lo;
        uint64_t p = v[at], t;
        v[at] = v[hi - 1], v[hi - 1] = p;
        int64_t i = lo;
        for (int64_t j = lo; j < hi - 1; j++)
            if (v[j] < p) t = v[i], v[i++] = v[j], v[j] = t;
        v[hi - 1] = v[i], v[i] = p;
        /* [lo, i) < p = v[i] < (i, hi): the k-th smallest lies on one side, or is p. */
        if (k <= i) hi = i;
        else if (k > i + 1) lo = i + 1;
        else lo = hi = i;
    }
    if (hi - lo > 1) qsort(v + lo, (size_t)(hi - lo), sizeof *v, u64_order);
    qsort(v, (size_t)k, sizeof *v, u64_order);
}

typedef struct {
    const wgt_operand *values, *indices, *in;
    int64_t n, k, in_step;
    int descending;
    int failed; /* out of host memory in some task */
} sort_job;

static void sort_run(void *arg, const int64_t *base, const int64_t *step, int64_t rows, int slot) {
    (void)slot;
    sort_job *j = arg;
    /* A top-k selects: (key, position) as one 64-bit value orders as the stable sort does. */
    int select = j->k < j->n;
    uint32_t *buf = malloc(sizeof *buf * (select ? 2 : 3) * (size_t)j->n);
    if (!buf) {
        __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    uint32_t *key = buf, *pos = buf + j->n, *tmp = buf + 2 * j->n;
    uint64_t *pairs = (uint64_t *)buf;
    uint32_t *order = pos; /* the sorted positions */
    for (int64_t r = 0; r < rows; r++) {
        int64_t pv = base[0] + r * step[0], pi = base[1] + r * step[1], src = base[2] + r * step[2];
        for (int64_t x = 0; x < j->n; x++) {
            uint32_t kk = key_of(j->in, src + x * j->in_step);
            kk = j->descending ? ~kk : kk;
            if (select) pairs[x] = (uint64_t)kk << 32 | (uint64_t)x;
            else key[x] = kk, pos[x] = (uint32_t)x;
        }
        if (select) {
            select_first(pairs, j->n, j->k);
            /* In place, forwards: order[x] overlaps pairs[x / 2], already read. */
            order = buf;
            for (int64_t x = 0; x < j->k; x++) order[x] = (uint32_t)pairs[x];
        } else {
            merge_sort(key, pos, tmp, j->n);
        }
        for (int64_t x = 0; x < j->k; x++) {
            store_raw(j->values, pv + x, load_raw(j->in, src + (int64_t)order[x] * j->in_step));
            store_raw(j->indices, pi + x, order[x]);
        }
    }
    free(buf);
}

wgt_status wgt_cpu_sort_rows(wgt_backend *be, const wgt_operand *values, const wgt_operand *indices,
                             const wgt_operand *in, int descending) {
    wgt_cpu_advise_output(values);
    wgt_cpu_advise_output(indices);
    int last = in->ndim - 1;
    sort_job j = {values, indices, in, in->shape[last], values->shape[last], in->strides[last], descending, 0};
    if (j.n > UINT32_MAX) return wgt_error(WGT_ERR_LIMIT, "sort: rows of %lld elements are too long", (long long)j.n);
    /* The walk visits each row once: the row's dimension has length 1 in it. */
    int64_t shape[WGT_MAX_DIMS];
    memcpy(shape, in->shape, sizeof shape);
    shape[last] = 1;
    const wgt_operand *ops[3] = {values, indices, in};
    wgt_cpu_walk w;
    wgt_cpu_walk_init(&w, in->ndim, shape, 3, ops);
    int log_n = 1;
    while (((int64_t)1 << log_n) < j.n) log_n++;
    wgt_cpu_walk_run(be, &w, 2.0 * (double)j.n * log_n, sort_run, &j);
    if (j.failed) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "sort: out of host memory for rows of %lld", (long long)j.n);
    return WGT_OK;
}

typedef struct {
    const wgt_operand *out, *sorted, *values;
    int right;
} search_job;

/* Binary search of len values: the walk's operand 0 is out, 1 the values. */
static void search_run(void *arg, const int64_t *base, const int64_t *step, int64_t len, int slot) {
    (void)slot;
    const search_job *j = arg;
    const wgt_operand *s = j->sorted;
    int64_t n = s->shape[0];
    for (int64_t e = 0; e < len; e++) {
        uint32_t v = key_of(j->values, base[1] + e * step[1]);
        int64_t lo = 0, hi = n;
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            uint32_t km = key_of(s, s->offset + mid * s->strides[0]);
            if (j->right ? km <= v : km < v) lo = mid + 1;
            else hi = mid;
        }
        store_raw(j->out, base[0] + e * step[0], (uint32_t)lo);
    }
}

wgt_status wgt_cpu_searchsorted(wgt_backend *be, const wgt_operand *out, const wgt_operand *sorted,
                                const wgt_operand *values, int right) {
    wgt_cpu_advise_output(out);
    search_job j = {out, sorted, values, right};
    const wgt_operand *ops[2] = {out, values};
    wgt_cpu_walk w;
    wgt_cpu_walk_init(&w, values->ndim, values->shape, 2, ops);
    int log_n = 1;
    while (((int64_t)1 << log_n) < sorted->shape[0]) log_n++;
    wgt_cpu_walk_run(be, &w, 2.0 * log_n, search_run, &j);
    return WGT_OK;
}
