/*
 * Integer matrix products and the contractions built on them (vecdot, tensordot, outer,
 * einsum) on both backends, for every integer type, against an exact reference: the values
 * read back from the operands, multiplied and summed in uint64_t (wrapping modulo 2^64) and
 * reduced to the result's bits (the low bits, sign-extended for signed types), which is
 * NumPy's wrap-around. Operand values use the type's whole range, so nearly every product
 * wraps and a float accumulator or a saturating step cannot pass (an f32 sum keeps 24 bits).
 * Shapes: 1 x 1, odd sizes across several 64 x 64 tiles, batch broadcasting, 1-D operands,
 * K = 0 (zeros), empty M and N; transposed, sliced, reversed and stride-0 views; mixed
 * types promoted by the array API's table; the errors. Outputs are poisoned in the runner's
 * poisoned pass, so an element nothing wrote shows.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

static const wgt_dtype int_types[] = {WGT_I32, WGT_U32, WGT_I8, WGT_U8, WGT_I16, WGT_U16, WGT_I64, WGT_U64};
#define NTYPES (sizeof int_types / sizeof int_types[0])

static uint64_t rng_next(uint64_t *s) {
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

static int is_signed(wgt_dtype dt) { return dt == WGT_I8 || dt == WGT_I16 || dt == WGT_I32 || dt == WGT_I64; }

/* v reduced to dt's bits: the low bits, sign-extended for signed types (two's complement). */
static uint64_t wrap(wgt_dtype dt, uint64_t v) {
    int bits = (int)wgt_dtype_size(dt) * 8;
    if (bits == 64) return v;
    uint64_t mask = ((uint64_t)1 << bits) - 1, sign = (uint64_t)1 << (bits - 1);
    v &= mask;
    return is_signed(dt) && (v & sign) ? v | ~mask : v;
}

/* Element i of dt's bytes, sign- or zero-extended to 64 bits. */
static uint64_t decode(wgt_dtype dt, const unsigned char *p, int64_t i) {
    size_t es = wgt_dtype_size(dt);
    uint64_t v = 0;
    memcpy(&v, p + (size_t)i * es, es); /* little-endian hosts */
    return wrap(dt, v);
}

/* A tensor's values (any view) as 64-bit words, row-major; NULL on failure. */
static uint64_t *values_of(wgt_tensor *t) {
    int64_t n = wgt_tensor_numel(t);
    wgt_dtype dt = wgt_tensor_dtype(t);
    wgt_tensor *c = wgt_contiguous(t);
    unsigned char *bytes = malloc((size_t)n * wgt_dtype_size(dt) + 8);
    uint64_t *v = malloc(sizeof(uint64_t) * (size_t)(n + 1));
    int ok = c && bytes && v && wgt_tensor_read(c, bytes, (size_t)n * wgt_dtype_size(dt)) == WGT_OK;
    for (int64_t i = 0; ok && i < n; i++) v[i] = decode(dt, bytes, i);
    wgt_release(c);
    free(bytes);
    if (!ok) free(v);
    return ok ? v : NULL;
}

/* A tensor of shape with random values over dt's whole range. */
static wgt_tensor *random_int(wgt_context *ctx, wgt_dtype dt, int ndim, const int64_t *shape, uint64_t seed) {
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    size_t es = wgt_dtype_size(dt);
    unsigned char *bytes = malloc((size_t)n * es + 8);
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = rng_next(&s);
        memcpy(bytes + (size_t)i * es, &r, es);
    }
    wgt_tensor *t = wgt_tensor_from_data(ctx, dt, ndim, shape, bytes, (size_t)n * es, WGT_USAGE_DEFAULT);
    free(bytes);
    return t;
}

/* The reference of numpy.matmul on values a (shape sa) and b (sb), in uint64_t, reduced to
 * dt. Fills the result's shape; returns the values (malloc'd). */
static uint64_t *reference(wgt_dtype dt, const uint64_t *a, int na, const int64_t *sa, const uint64_t *b, int nb,
                           const int64_t *sb, int *nout, int64_t *out_shape) {
    int64_t M = na == 1 ? 1 : sa[na - 2], K = sa[na - 1], N = nb == 1 ? 1 : sb[nb - 1];
    int ba = na > 2 ? na - 2 : 0, bb = nb > 2 ? nb - 2 : 0, nbatch = ba > bb ? ba : bb;
    int64_t bshape[WGT_MAX_DIMS], batch = 1;
    *nout = 0;
    for (int i = 0; i < nbatch; i++) {
        int ia = i - (nbatch - ba), ib = i - (nbatch - bb);
        int64_t da = ia >= 0 ? sa[ia] : 1, db = ib >= 0 ? sb[ib] : 1;
        bshape[i] = da == 1 ? db : da;
        out_shape[(*nout)++] = bshape[i];
        batch *= bshape[i];
    }
    if (na > 1) out_shape[(*nout)++] = M;
    if (nb > 1) out_shape[(*nout)++] = N;
    uint64_t *out = calloc((size_t)(batch * M * N + 1), sizeof(uint64_t));
    for (int64_t i = 0; i < batch; i++) {
        /* Each operand's matrix in batch element i (length-1 batch dimensions broadcast). */
        int64_t r = i, oa = 0, ob = 0, step_a = M * K, step_b = K * N;
        for (int d = nbatch - 1; d >= 0; d--) {
            int64_t idx = r % bshape[d];
            r /= bshape[d];
            int ia = d - (nbatch - ba), ib = d - (nbatch - bb);
            if (ia >= 0) oa += (sa[ia] == 1 ? 0 : idx) * step_a, step_a *= sa[ia];
            if (ib >= 0) ob += (sb[ib] == 1 ? 0 : idx) * step_b, step_b *= sb[ib];
        }
        for (int64_t m = 0; m < M; m++)
            for (int64_t n = 0; n < N; n++) {
                uint64_t s = 0;
                for (int64_t k = 0; k < K; k++) s += a[oa + m * K + k] * b[ob + k * N + n];
                out[(i * M + m) * N + n] = wrap(dt, s);
            }
    }
    return out;
}

/* got against want (n values): shape, type and every element exactly. */
static void compare(const char *what, wgt_tensor *got, wgt_dtype dt, int nd, const int64_t *shape, const uint64_t *want) {
    CHECK(got != NULL, "%s: %s", what, wgt_last_error());
    if (!got) return;
    int ok = wgt_tensor_dtype(got) == dt && wgt_tensor_ndim(got) == nd;
    for (int d = 0; ok && d < nd; d++) ok = wgt_tensor_shape(got)[d] == shape[d];
    CHECK(ok, "%s: result is %s rank %d, wanted %s rank %d", what, wgt_dtype_name(wgt_tensor_dtype(got)),
          wgt_tensor_ndim(got), wgt_dtype_name(dt), nd);
    if (!ok) return;
    uint64_t *g = values_of(got);
    CHECK(g != NULL, "%s: read: %s", what, wgt_last_error());
    int64_t n = wgt_tensor_numel(got);
    for (int64_t i = 0, bad = 0; g && i < n && bad < 3; i++)
        if (g[i] != want[i]) {
            bad++;
            CHECK(0, "%s (%s): element %lld is %llu (0x%llx), wanted %llu (0x%llx)", what, wgt_dtype_name(dt),
                  (long long)i, (unsigned long long)g[i], (unsigned long long)g[i], (unsigned long long)want[i],
                  (unsigned long long)want[i]);
        }
    free(g);
}

/* a @ b against the reference, the result of type dt. */
static void check_matmul(const char *what, wgt_tensor *a, wgt_tensor *b, wgt_dtype dt) {
    CHECK(a && b, "%s: operands: %s", what, wgt_last_error());
    if (!a || !b) return;
    uint64_t *va = values_of(a), *vb = values_of(b);
    int nd;
    int64_t shape[WGT_MAX_DIMS];
    uint64_t *want = va && vb ? reference(dt, va, wgt_tensor_ndim(a), wgt_tensor_shape(a), vb, wgt_tensor_ndim(b),
                                          wgt_tensor_shape(b), &nd, shape)
                              : NULL;
    wgt_tensor *r = wgt_matmul(a, b);
    if (want) compare(what, r, dt, nd, shape, want);
    wgt_release(r);
    free(va), free(vb), free(want);
}

TEST_BACKENDS(matmul_int_shapes_every_type) {
    static const struct {
        int na, nb;
        int64_t sa[4], sb[4];
    } cases[] = {
        {2, 2, {1, 1}, {1, 1}},           {2, 2, {7, 13}, {13, 5}},       {4, 3, {3, 1, 5, 6}, {4, 6, 2}},
        {2, 2, {33, 17}, {17, 40}},       {1, 2, {5}, {5, 3}},            {2, 1, {4, 5}, {5}},
        {1, 1, {9}, {9}},                 {3, 1, {2, 3, 4}, {4}},         {2, 2, {3, 0}, {0, 4}},
        {2, 2, {0, 3}, {3, 4}},           {2, 2, {3, 4}, {4, 0}},         {3, 3, {2, 1, 3}, {2, 3, 2}},
        {2, 2, {70, 33}, {33, 67}},       {3, 2, {2, 65, 9}, {9, 3}}, /* past one 64 x 64 WebGPU tile */
    };
    for (size_t t = 0; t < NTYPES; t++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            wgt_dtype dt = int_types[t];
            wgt_tensor *a = random_int(ctx, dt, cases[c].na, cases[c].sa, 2 * c + 1 + 100 * t);
            wgt_tensor *b = random_int(ctx, dt, cases[c].nb, cases[c].sb, 2 * c + 2 + 100 * t);
            char what[64];
            snprintf(what, sizeof what, "case %zu", c);
            check_matmul(what, a, b, dt);
            wgt_release(a), wgt_release(b);
        }
}

TEST_BACKENDS(matmul_int_views) {
    const wgt_dtype types[] = {WGT_I32, WGT_U8, WGT_I64};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        wgt_dtype dt = types[t];
        int64_t s_at[2] = {13, 7}, s_b[2] = {13, 5}, s_big[2] = {26, 11}, s_bt[2] = {5, 13};
        wgt_tensor *at = random_int(ctx, dt, 2, s_at, 11 + t), *b = random_int(ctx, dt, 2, s_b, 12 + t);
        wgt_tensor *big = random_int(ctx, dt, 2, s_big, 13 + t), *bt = random_int(ctx, dt, 2, s_bt, 14 + t);
        /* a stored by columns; b stored by columns; every other row and column; reversed rows. */
        wgt_tensor *a = wgt_transpose(at, 0, 1), *b_cols = wgt_transpose(bt, 0, 1);
        wgt_tensor *rows = wgt_slice(big, 0, 0, 26, 2), *sliced = rows ? wgt_slice(rows, 1, 1, 11, 2) : NULL;
        wgt_tensor *flipped = wgt_flip(b, 1, (int[]){0});
        check_matmul("a transposed", a, b, dt);
        check_matmul("b transposed", a, b_cols, dt);
        int64_t s_a[2] = {7, 13};
        wgt_tensor *a_rows = random_int(ctx, dt, 2, s_a, 15 + t); /* a by rows, b by columns: unit steps along K */
        check_matmul("a by rows, b transposed", a_rows, b_cols, dt);
        check_matmul("a sliced with steps", sliced, bt, dt);
        check_matmul("b reversed", a, flipped, dt);
        /* A batch that repeats one matrix through a stride-0 view. */
        int64_t s3[3] = {3, 7, 13};
        wgt_tensor *expanded = wgt_expand(a, 3, s3);
        check_matmul("a broadcast by a stride-0 batch", expanded, b_cols, dt);
        wgt_tensor *all[] = {at, b, big, bt, a, b_cols, rows, sliced, flipped, expanded, a_rows};
        for (size_t k = 0; k < sizeof all / sizeof *all; k++) wgt_release(all[k]);
    }
}

/* Known values at the edges of the types, where a float accumulator or a saturating step
 * gives another answer: (2^31 - 1)^2 + 2^24 + 1 wraps to 2^24 + 2 in i32, and 2^24 + 1 is
 * not an f32. */
TEST_BACKENDS(matmul_int_wraps_like_numpy) {
    static const struct {
        wgt_dtype dt;
        int64_t a[2], b[2], want;
    } cases[] = {
        {WGT_I32, {INT32_MAX, 16777217}, {INT32_MAX, 1}, 16777218},
        {WGT_I32, {INT32_MIN, INT32_MAX}, {-1, 2}, 2147483646},        /* 2^31 + 2^32 - 2 wraps */
        {WGT_U32, {UINT32_MAX, 3}, {UINT32_MAX, 5}, 16},              /* (2^32 - 1)^2 = 1 mod 2^32 */
        {WGT_I8, {127, 127}, {127, 127}, 2},                          /* 32258 = 126 * 256 + 2 */
        {WGT_I8, {-128, 1}, {-1, 0}, -128},                           /* 128 wraps to -128 */
        {WGT_U8, {255, 255}, {255, 2}, 255},                           /* 65025 + 510 = 65535 */
        {WGT_I16, {INT16_MAX, INT16_MAX}, {2, 1}, 32765},             /* 3 * 32767 = 98301 - 65536 */
        {WGT_U16, {65535, 2}, {65535, 1}, 3},                          /* 65535^2 + 2 = 3 mod 2^16 */
        {WGT_I64, {INT64_MAX, 3}, {INT64_MAX, 1}, 4},                  /* (2^63 - 1)^2 = 1 mod 2^64 */
        {WGT_U64, {(int64_t)0x100000001ll, 7}, {(int64_t)0x100000001ll, 1}, (int64_t)0x200000008ll},
    };
    int64_t one[1] = {2};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        wgt_dtype dt = cases[c].dt;
        size_t es = wgt_dtype_size(dt);
        unsigned char ab[16], bb[16];
        for (int i = 0; i < 2; i++) {
            uint64_t x = (uint64_t)cases[c].a[i], y = (uint64_t)cases[c].b[i];
            memcpy(ab + i * es, &x, es), memcpy(bb + i * es, &y, es);
        }
        wgt_tensor *a = wgt_tensor_from_data(ctx, dt, 1, one, ab, 2 * es, WGT_USAGE_DEFAULT);
        wgt_tensor *b = wgt_tensor_from_data(ctx, dt, 1, one, bb, 2 * es, WGT_USAGE_DEFAULT);
        wgt_tensor *r = a && b ? wgt_matmul(a, b) : NULL;
        uint64_t *g = r ? values_of(r) : NULL;
        CHECK(g && wgt_tensor_ndim(r) == 0 && g[0] == wrap(dt, (uint64_t)cases[c].want), "case %zu %s: %lld, wanted %lld (%s)",
              c, wgt_dtype_name(dt), g ? (long long)g[0] : 0, (long long)cases[c].want, wgt_last_error());
        free(g);
        wgt_release(a), wgt_release(b), wgt_release(r);
    }
}

TEST_BACKENDS(matmul_int_mixed_types_promote) {
    static const struct {
        wgt_dtype a, b, want;
    } cases[] = {
        {WGT_I8, WGT_U8, WGT_I16},   {WGT_U8, WGT_I32, WGT_I32},  {WGT_I32, WGT_U32, WGT_I64},
        {WGT_U16, WGT_U32, WGT_U32}, {WGT_I16, WGT_I64, WGT_I64}, {WGT_U8, WGT_U64, WGT_U64},
        {WGT_I8, WGT_U16, WGT_I32},
    };
    int64_t sa[2] = {5, 7}, sb[3] = {2, 7, 3};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        wgt_tensor *a = random_int(ctx, cases[c].a, 2, sa, 31 + c), *b = random_int(ctx, cases[c].b, 3, sb, 41 + c);
        char what[64];
        snprintf(what, sizeof what, "%s @ %s", wgt_dtype_name(cases[c].a), wgt_dtype_name(cases[c].b));
        check_matmul(what, a, b, cases[c].want);
        wgt_release(a), wgt_release(b);
    }
}

TEST_BACKENDS(matmul_int_errors) {
    int64_t s[2] = {2, 2};
    wgt_tensor *i = wgt_ones(ctx, WGT_I32, 2, s), *f = wgt_ones(ctx, WGT_F32, 2, s), *h = wgt_ones(ctx, WGT_F16, 2, s);
    wgt_tensor *bo = wgt_ones(ctx, WGT_BOOL, 2, s), *u = wgt_ones(ctx, WGT_U64, 2, s), *i8 = wgt_ones(ctx, WGT_I8, 2, s);
    wgt_tensor *bf = wgt_ones(ctx, WGT_BF16, 2, s);
    CHECK_ERROR(wgt_matmul(i, f) == NULL, WGT_ERR_DTYPE, "an integer with a float");
    CHECK_ERROR(wgt_matmul(f, i8) == NULL, WGT_ERR_DTYPE, "b is i8");
    CHECK_ERROR(wgt_matmul(bo, bo) == NULL, WGT_ERR_DTYPE, "a is bool");
    CHECK_ERROR(wgt_matmul(i, bo) == NULL, WGT_ERR_DTYPE, "b is bool");
    CHECK_ERROR(wgt_matmul(bf, bf) == NULL, WGT_ERR_DTYPE, "bf16");
    CHECK_ERROR(wgt_matmul(u, i8) == NULL, WGT_ERR_DTYPE, "u64 with a signed type");
    CHECK_ERROR(wgt_matmul(f, h) == NULL, WGT_ERR_DTYPE, "differ");
    CHECK_ERROR(wgt_vecdot(i, f, -1) == NULL, WGT_ERR_DTYPE, "wgt_vecdot");
    CHECK_ERROR(wgt_outer(bo, bo) == NULL, WGT_ERR_DTYPE, "bool");
    wgt_tensor *three[3] = {i, i8, f};
    CHECK_ERROR(wgt_einsum("ij,jk,kl->il", 3, three) == NULL, WGT_ERR_DTYPE, "the product of operands 0 to 1 is i32, operand 2 is f32");
    /* wgt_linear stays a float layer. */
    CHECK_ERROR(wgt_linear(i, i, NULL) == NULL, WGT_ERR_DTYPE, "wgt_linear: takes floating types");
    /* Integers have no gradients: marking one is the autograd's own error. */
    CHECK_ERROR(wgt_requires_grad(i, 1) == WGT_ERR_DTYPE, WGT_ERR_DTYPE, "only f32 and f16");
    /* A path from a tracked float through an integer product carries no gradient: backward
     * stops at the cast to the integer type with the autograd's message. */
    wgt_tensor *x = wgt_ones(ctx, WGT_F32, 2, s);
    CHECK(x && wgt_requires_grad(x, 1) == WGT_OK, "%s", wgt_last_error());
    wgt_tensor *xi = wgt_cast(x, WGT_I32), *y = wgt_matmul(xi, xi), *yf = wgt_cast(y, WGT_F32);
    wgt_tensor *loss = wgt_sum(yf, 0, NULL, 0);
    CHECK(loss && wgt_tensor_requires_grad(loss), "%s", wgt_last_error());
    CHECK_ERROR(wgt_backward(loss, NULL) == WGT_ERR_USAGE, WGT_ERR_USAGE, "wgt_cast: its result is an integer type");
    wgt_release(loss), wgt_release(yf), wgt_release(y), wgt_release(xi), wgt_release(x);
    wgt_tensor *all[] = {i, f, h, bo, u, i8, bf};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) wgt_release(all[k]);
}

/* ---- the contractions: a reference over every assignment of the labels ---- */

/* out[labels of out] = sum over the rest of the product of the operands, in uint64_t.
 * Operands' labels are letters; lengths come from the operands (no broadcasting here). */
static uint64_t *contract_reference(wgt_dtype dt, const char *subs, int nops, wgt_tensor *const *t, uint64_t *const *v,
                                    int *nout, int64_t *out_shape) {
    int64_t len[128] = {0};
    int used[128] = {0}, all[64], nall = 0;
    const char *p = subs;
    const char *terms[8];
    for (int o = 0; o < nops; o++) {
        terms[o] = p;
        for (int d = 0; *p && *p != ',' && *p != '-'; p++, d++) {
            len[(int)*p] = wgt_tensor_shape(t[o])[d];
            if (!used[(int)*p]++) all[nall++] = *p;
        }
        if (*p == ',') p++;
    }
    const char *out = strstr(subs, "->") + 2;
    *nout = (int)strlen(out);
    int64_t out_n = 1, total = 1;
    for (int d = 0; d < *nout; d++) out_shape[d] = len[(int)out[d]], out_n *= out_shape[d];
    for (int k = 0; k < nall; k++) total *= len[all[k]];
    uint64_t *r = calloc((size_t)out_n + 1, sizeof(uint64_t));
    int64_t idx[128] = {0};
    for (int64_t it = 0; it < total; it++) {
        int64_t rem = it;
        for (int k = nall - 1; k >= 0; k--) idx[all[k]] = rem % len[all[k]], rem /= len[all[k]];
        uint64_t prod = 1;
        for (int o = 0; o < nops; o++) {
            int64_t off = 0;
            for (int d = 0; terms[o][d] && terms[o][d] != ',' && terms[o][d] != '-'; d++)
                off = off * len[(int)terms[o][d]] + idx[(int)terms[o][d]];
            prod *= v[o][off];
        }
        int64_t oo = 0;
        for (int d = 0; d < *nout; d++) oo = oo * len[(int)out[d]] + idx[(int)out[d]];
        r[oo] += prod;
    }
    for (int64_t i = 0; i < out_n; i++) r[i] = wrap(dt, r[i]);
    return r;
}

/* got (computed from t) against the reference of subs, the result of type dt. */
static void check_contraction(const char *what, wgt_tensor *got, const char *subs, int nops, wgt_tensor *const *t,
                              wgt_dtype dt) {
    uint64_t *v[4] = {0};
    int ok = 1, nd;
    for (int o = 0; o < nops; o++) ok &= (v[o] = values_of(t[o])) != NULL;
    int64_t shape[WGT_MAX_DIMS];
    uint64_t *want = ok ? contract_reference(dt, subs, nops, t, v, &nd, shape) : NULL;
    if (want) compare(what, got, dt, nd, shape, want);
    CHECK(want != NULL, "%s: operands unreadable: %s", what, wgt_last_error());
    for (int o = 0; o < nops; o++) free(v[o]);
    free(want);
}

TEST_BACKENDS(contractions_int_every_type) {
    for (size_t ti = 0; ti < NTYPES; ti++) {
        wgt_dtype dt = int_types[ti];
        int64_t s35[2] = {3, 5}, s54[2] = {5, 4}, s42[2] = {4, 2}, s345[3] = {3, 4, 5}, s542[3] = {5, 4, 2};
        int64_t s7[1] = {7}, s6[1] = {6}, s33[2] = {3, 3}, s235[3] = {2, 3, 5}, s254[3] = {2, 5, 4};
        uint64_t seed = 1000 + 50 * ti;
        wgt_tensor *a = random_int(ctx, dt, 2, s35, seed + 1), *b = random_int(ctx, dt, 2, s54, seed + 2);
        wgt_tensor *c = random_int(ctx, dt, 2, s42, seed + 3), *x = random_int(ctx, dt, 3, s345, seed + 4);
        wgt_tensor *y = random_int(ctx, dt, 3, s542, seed + 5), *u = random_int(ctx, dt, 1, s7, seed + 6);
        wgt_tensor *w = random_int(ctx, dt, 1, s6, seed + 7), *sq = random_int(ctx, dt, 2, s33, seed + 8);
        wgt_tensor *ba = random_int(ctx, dt, 3, s235, seed + 9), *bb = random_int(ctx, dt, 3, s254, seed + 10);
        wgt_tensor *ab[2] = {a, b}, *abc[3] = {a, b, c}, *xy[2] = {x, y}, *uw[2] = {u, w}, *babb[2] = {ba, bb};
        wgt_tensor *r;
        check_contraction("einsum ij,jk->ik", r = wgt_einsum("ij,jk->ik", 2, ab), "ij,jk->ik", 2, ab, dt), wgt_release(r);
        check_contraction("einsum of three", r = wgt_einsum("ij,jk,kl->il", 3, abc), "ij,jk,kl->il", 3, abc, dt), wgt_release(r);
        check_contraction("einsum batch", r = wgt_einsum("bij,bjk->bik", 2, babb), "bij,bjk->bik", 2, babb, dt), wgt_release(r);
        check_contraction("einsum trace", r = wgt_einsum("ii->", 1, &sq), "ii->", 1, &sq, dt), wgt_release(r);
        check_contraction("einsum sum", r = wgt_einsum("ij->j", 1, &a), "ij->j", 1, &a, dt), wgt_release(r);
        check_contraction("einsum transposed output", r = wgt_einsum("ij,jk->ki", 2, ab), "ij,jk->ki", 2, ab, dt), wgt_release(r);
        check_contraction("tensordot", r = wgt_tensordot(x, y, 2, (int[]){1, 2}, (int[]){1, 0}), "abc,cbd->ad", 2, xy, dt),
            wgt_release(r);
        check_contraction("outer", r = wgt_outer(u, w), "i,j->ij", 2, uw, dt), wgt_release(r);
        wgt_tensor *a2 = random_int(ctx, dt, 2, s35, seed + 11), *aa[2] = {a, a2};
        check_contraction("vecdot", r = wgt_vecdot(a, a2, -1), "ij,ij->i", 2, aa, dt), wgt_release(r);
        check_contraction("vecdot axis 0", r = wgt_vecdot(a, a2, 0), "ij,ij->j", 2, aa, dt), wgt_release(r);
        wgt_tensor *all[] = {a, b, c, x, y, u, w, sq, ba, bb, a2};
        for (size_t k = 0; k < sizeof all / sizeof *all; k++) wgt_release(all[k]);
    }
}

TEST_BACKENDS(contractions_int_mixed_types_and_views) {
    int64_t s35[2] = {3, 5}, s45[2] = {4, 5}, s0[2] = {3, 0}, s04[2] = {0, 4};
    wgt_tensor *a = random_int(ctx, WGT_I8, 2, s35, 7), *bt = random_int(ctx, WGT_U8, 2, s45, 8);
    wgt_tensor *b = wgt_transpose(bt, 0, 1), *ab[2] = {a, b};
    wgt_tensor *r = wgt_einsum("ij,jk->ik", 2, ab);
    check_contraction("einsum i8, u8 (transposed) -> i16", r, "ij,jk->ik", 2, ab, WGT_I16);
    wgt_release(r);
    wgt_tensor *c = random_int(ctx, WGT_I32, 2, s35, 9), *d = random_int(ctx, WGT_U32, 2, s35, 10), *cd[2] = {c, d};
    check_contraction("vecdot i32, u32 -> i64", r = wgt_vecdot(c, d, -1), "ij,ij->i", 2, cd, WGT_I64), wgt_release(r);
    /* Contracting an empty dimension gives zeros. */
    wgt_tensor *e = random_int(ctx, WGT_I16, 2, s0, 11), *g = random_int(ctx, WGT_I16, 2, s04, 12), *eg[2] = {e, g};
    check_contraction("tensordot over K = 0", r = wgt_tensordot(e, g, 1, NULL, NULL), "ij,jk->ik", 2, eg, WGT_I16),
        wgt_release(r);
    wgt_tensor *all[] = {a, bt, b, c, d, e, g};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) wgt_release(all[k]);
}
