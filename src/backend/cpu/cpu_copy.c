/*
 * The CPU kernels that move elements without arithmetic: the strided copy (views made
 * contiguous) and where. Elements move as their bits, so NaN payloads and signed zeros pass
 * through unchanged. Every element type is 1, 2, 4 or 8 bytes, so elements are loaded and
 * stored as 8-, 16-, 32- or 64-bit words; dense runs of a copy are one memcpy. where takes 2-,
 * 4- and 8-byte values (the core widens the narrow ones first) and conditions of 2 or 4 bytes
 * and bool (the predicates' type, read as it is so a mask needs no widening pass).
 */
#include <string.h>

#include "cpu_kernels.h"
#include "cpu_walk.h"

typedef struct {
    const wgt_operand *out, *cond, *a, *b;
    uint32_t truth_mask; /* cond's bits that make it nonzero (float: all but the sign) */
} where_job;

/* out[i] = cond[i] ? a[i] : b[i] for element type TE and condition word type TC. */
#define WHERE_LOOP(name, TE, TC)                                                                                      \
    static void name(const where_job *j, const int64_t *base, const int64_t *step, int64_t len) {                     \
        TE *o = (TE *)j->out->host + base[0];                                                                         \
        const TC *c = (const TC *)j->cond->host + base[1];                                                            \
        const TE *a = (const TE *)j->a->host + base[2], *b = (const TE *)j->b->host + base[3];                        \
        TC mask = (TC)j->truth_mask;                                                                                  \
        for (int64_t i = 0; i < len; i++) o[i * step[0]] = (c[i * step[1]] & mask) ? a[i * step[2]] : b[i * step[3]]; \
    }
WHERE_LOOP(where_4_4, uint32_t, uint32_t)
WHERE_LOOP(where_4_2, uint32_t, uint16_t)
WHERE_LOOP(where_2_4, uint16_t, uint32_t)
WHERE_LOOP(where_2_2, uint16_t, uint16_t)
WHERE_LOOP(where_4_1, uint32_t, uint8_t)
WHERE_LOOP(where_2_1, uint16_t, uint8_t)
WHERE_LOOP(where_8_4, uint64_t, uint32_t)
WHERE_LOOP(where_8_2, uint64_t, uint16_t)
WHERE_LOOP(where_8_1, uint64_t, uint8_t)

static void where_run(void *arg, const int64_t *base, const int64_t *step, int64_t len, int slot) {
    (void)slot;
    const where_job *j = arg;
    size_t es = wgt_dtype_size(j->out->dtype), cond_size = wgt_dtype_size(j->cond->dtype);
    if (es == 8) cond_size == 4 ? where_8_4(j, base, step, len) : cond_size == 2 ? where_8_2(j, base, step, len)
                                                                              : where_8_1(j, base, step, len);
    else if (es == 4) cond_size == 4 ? where_4_4(j, base, step, len) : cond_size == 2 ? where_4_2(j, base, step, len)
                                                                                    : where_4_1(j, base, step, len);
    else cond_size == 4 ? where_2_4(j, base, step, len) : cond_size == 2 ? where_2_2(j, base, step, len)
                                                                        : where_2_1(j, base, step, len);
}

wgt_status wgt_cpu_where(wgt_backend *be, const wgt_operand *out, const wgt_operand *cond, const wgt_operand *a,
                         const wgt_operand *b) {
    wgt_cpu_advise_output(out);
    /* Nonzero is true: NaN is, -0 is not, as `value != 0` says for every type. */
    uint32_t mask = cond->dtype == WGT_F32 ? 0x7fffffffu : cond->dtype == WGT_F16 ? 0x7fffu : 0xffffffffu;
    where_job job = {out, cond, a, b, mask};
    const wgt_operand *ops[4] = {out, cond, a, b};
    wgt_cpu_walk w;
    wgt_cpu_walk_init(&w, out->ndim, out->shape, 4, ops);
    wgt_cpu_walk_run(be, &w, 1.0, where_run, &job);
    return WGT_OK;
}

typedef struct {
    const wgt_operand *dst, *src;
} copy_job;

#define COPY_LOOP(name, TE)                                                                      \
    static void name(const copy_job *j, const int64_t *base, const int64_t *step, int64_t len) { \
        TE *d = (TE *)j->dst->host + base[0];                                                    \
        const TE *s = (const TE *)j->src->host + base[1];                                        \
        for (int64_t i = 0; i < len; i++) d[i * step[0]] = s[i * step[1]];                       \
    }
COPY_LOOP(copy_8, uint64_t)
COPY_LOOP(copy_4, uint32_t)
COPY_LOOP(copy_2, uint16_t)
COPY_LOOP(copy_1, uint8_t)

static void copy_run(void *arg, const int64_t *base, const int64_t *step, int64_t len, int slot) {
    (void)slot;
    const copy_job *j = arg;
    size_t es = wgt_dtype_size(j->src->dtype);
    if (step[0] == 1 && step[1] == 1)
        memcpy((char *)j->dst->host + (size_t)base[0] * es, (const char *)j->src->host + (size_t)base[1] * es,
               (size_t)len * es);
    else if (es == 8) copy_8(j, base, step, len);
    else if (es == 4) copy_4(j, base, step, len);
    else if (es == 2) copy_2(j, base, step, len);
    else copy_1(j, base, step, len);
}

wgt_status wgt_cpu_copy(wgt_backend *be, const wgt_operand *dst, const wgt_operand *src) {
    wgt_cpu_advise_output(dst);
    copy_job job = {dst, src};
    const wgt_operand *ops[2] = {dst, src};
    wgt_cpu_walk w;
    wgt_cpu_walk_init(&w, dst->ndim, dst->shape, 2, ops);
    wgt_cpu_walk_run(be, &w, 1.0, copy_run, &job);
    return WGT_OK;
}
