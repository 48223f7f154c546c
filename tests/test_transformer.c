/*
 * Rotary position embedding and scaled dot-product attention against float64 references
 * computed here from the inputs, on both backends, with and without the causal mask, for
 * f32 and f16, odd sequence lengths, batch dimensions and explicit positions; and attention
 * over a prefix of the keys (wgt_attention_prefix, below).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

static double tol_for(wgt_dtype dt) { return dt == WGT_F16 ? 1e-2 : 2e-5; }

static void check_rope(wgt_context *ctx, wgt_dtype dt, int64_t batch, int64_t seq, int64_t d, int explicit_pos) {
    int64_t shape[3] = {batch, seq, d}, pshape[1] = {seq};
    wgt_tensor *x = wgt_rand_normal(ctx, dt, 3, shape, 0, 1, (uint64_t)(seq * 31 + d));
    int32_t *pos = malloc((size_t)seq * sizeof *pos);
    for (int64_t i = 0; i < seq; i++) pos[i] = (int32_t)(3 * i + 7);
    wgt_tensor *p = explicit_pos ? wgt_tensor_from_data(ctx, WGT_I32, 1, pshape, pos, (size_t)seq * 4, WGT_USAGE_DEFAULT)
                                 : NULL;
    wgt_tensor *y = wgt_rope(x, p, 10000.0);
    CHECK(y != NULL, "rope %s [%lld, %lld, %lld]: %s", wgt_dtype_name(dt), (long long)batch, (long long)seq,
          (long long)d, wgt_last_error());
    double *vx = test_read_f64(x), *vy = y ? test_read_f64(y) : NULL;
    int64_t half = d / 2;
    for (int64_t b = 0; vx && vy && b < batch; b++)
        for (int64_t s = 0; s < seq; s++)
            for (int64_t i = 0; i < d; i++) {
                int64_t base = (b * seq + s) * d, j = i % half;
                double angle = (explicit_pos ? pos[s] : (double)s) * pow(10000.0, -(double)j / (double)half);
                double rot = i < half ? -vx[base + i + half] : vx[base + i - half];
                double want = vx[base + i] * cos(angle) + rot * sin(angle);
                CHECK(fabs(vy[base + i] - want) <= tol_for(dt) * (1 + fabs(want)), "rope %s element (%lld, %lld, %lld): %g, want %g",
                      wgt_dtype_name(dt), (long long)b, (long long)s, (long long)i, vy[base + i], want);
            }
    free(vx), free(vy), free(pos);
    wgt_release(x), wgt_release(p), wgt_release(y);
}

/* Rope of x of rank 7 (batch axes kept as they are) and 8 (batch axes merged first: the
 * pair axis needs a dimension), strided views, equals rope of the same values as
 * [batch, seq, d] element for element: the same arithmetic per element. */
static void check_rope_ranks(wgt_context *ctx) {
    for (int rank = 7; rank <= 8; rank++) {
        static const int64_t shapes[2][8] = {{2, 3, 1, 2, 1, 5, 6}, {2, 1, 3, 1, 2, 1, 5, 6}}; /* 12 batches */
        int64_t flat[3] = {12, 5, 6}, seq = 5;
        const int64_t *s = shapes[rank - 7];
        wgt_tensor *base = wgt_rand_normal(ctx, WGT_F32, 3, flat, 0, 1, 77 + (uint64_t)rank);
        /* x: the values as [.., seq, d], read through a transposed view of a copy laid out [.., d, seq] */
        wgt_tensor *bt = wgt_transpose(base, 1, 2), *btc = bt ? wgt_contiguous(bt) : NULL;
        int64_t tshape[8];
        memcpy(tshape, s, sizeof(int64_t) * (size_t)rank);
        tshape[rank - 2] = 6, tshape[rank - 1] = 5;
        wgt_tensor *xt = btc ? wgt_reshape(btc, rank, tshape) : NULL, *x = xt ? wgt_transpose(xt, -1, -2) : NULL;
        int32_t pos[5] = {4, 0, 9, 2, 30};
        wgt_tensor *p = wgt_tensor_from_data(ctx, WGT_I32, 1, &seq, pos, sizeof pos, WGT_USAGE_DEFAULT);
        wgt_tensor *y = x ? wgt_rope(x, p, 500.0) : NULL, *want = wgt_rope(base, p, 500.0);
        double *a = y ? test_read_f64(y) : NULL, *b = want ? test_read_f64(want) : NULL;
        CHECK(a && b && wgt_tensor_ndim(y) == rank, "rope of rank %d: %s", rank, wgt_last_error());
        for (int i = 0; a && b && i < 360; i++)
            CHECK(a[i] == b[i], "rope of rank %d element %d: %.9g, as [12, 5, 6] %.9g", rank, i, a[i], b[i]);
        free(a), free(b);
        wgt_release(base), wgt_release(bt), wgt_release(btc), wgt_release(xt), wgt_release(x), wgt_release(p);
        wgt_release(y), wgt_release(want);
    }
}

/* q and k heads as a decoding step takes them: [heads, n, hd] read through the transpose of
 * a [n, heads + 1, hd] product (the last head left out), with positions every other element
 * of a longer array and as large as a long context's (the angle is rounded to f32 first, as
 * rope computes it; the reference takes its cos and sin in double). */
static void check_rope_heads_view(wgt_context *ctx) {
    enum { N = 3, H = 5, HD = 8, HALF = HD / 2 };
    int64_t pshape[3] = {N, H + 1, HD}, six = 2 * N;
    wgt_tensor *qkv = wgt_rand_normal(ctx, WGT_F32, 3, pshape, 0, 1, 91);
    wgt_tensor *heads = qkv ? wgt_transpose(qkv, 0, 1) : NULL, *x = heads ? wgt_slice(heads, 0, 0, H, 1) : NULL;
    int32_t pos[2 * N] = {5, -1, 70001, -1, -1234567, -1};
    wgt_tensor *all = wgt_tensor_from_data(ctx, WGT_I32, 1, &six, pos, sizeof pos, WGT_USAGE_DEFAULT);
    wgt_tensor *p = all ? wgt_slice(all, 0, 0, 2 * N, 2) : NULL, *y = x && p ? wgt_rope(x, p, 10000.0) : NULL;
    double *vq = qkv ? test_read_f64(qkv) : NULL, *vy = y ? test_read_f64(y) : NULL;
    CHECK(vq && vy, "rope of a heads view: %s", wgt_last_error());
    for (int h = 0; vq && vy && h < H; h++)
        for (int s = 0; s < N; s++)
            for (int i = 0; i < HD; i++) {
                int j = i % HALF;
                float freq = (float)exp(-(double)j * log(10000.0) / HALF), angle = (float)pos[2 * s] * freq;
                const double *row = vq + (s * (H + 1) + h) * HD;
                double rot = i < HALF ? -row[i + HALF] : row[i - HALF];
                double want = row[i] * cos((double)angle) + rot * sin((double)angle);
                double got = vy[(h * N + s) * HD + i];
                CHECK(fabs(got - want) <= 2e-6 * (1 + fabs(want)), "rope of a heads view (%d, %d, %d): %.9g, want %.9g",
                      h, s, i, got, want);
            }
    free(vq), free(vy);
    wgt_release(qkv), wgt_release(heads), wgt_release(x), wgt_release(all), wgt_release(p), wgt_release(y);
}

/* f16 rope of a decoding step's heads view (on a backend with a rope kernel, small f16 x with
 * d a multiple of 4 takes it) gives the composition's bits, which a larger x of the same
 * values takes: cos and sin rounded to f16, then each product, then the sum, as the
 * elementwise ops round them. Positions large and negative; rows strided (a transposed
 * product's heads). */
static void check_rope_f16_bits(wgt_context *ctx) {
    enum { S = 300, H = 6, HD = 128, N = 5 }; /* S * H * HD is past the kernel's 65536 elements */
    int64_t shape[3] = {S, H, HD}, seq = S;
    wgt_tensor *big = wgt_rand_normal(ctx, WGT_F16, 3, shape, 0, 3, 19);
    int32_t pos[S];
    for (int i = 0; i < S; i++) pos[i] = (int32_t)(37 * i * i - 5000);
    pos[1] = 70001, pos[2] = -1234567, pos[3] = 999999;
    wgt_tensor *p = wgt_tensor_from_data(ctx, WGT_I32, 1, &seq, pos, sizeof pos, WGT_USAGE_DEFAULT);
    wgt_tensor *bt = big ? wgt_transpose(big, 0, 1) : NULL, *whole = bt && p ? wgt_rope(bt, p, 10000.0) : NULL;
    wgt_tensor *small = big ? wgt_slice(big, 0, 0, N, 1) : NULL, *st = small ? wgt_transpose(small, 0, 1) : NULL;
    wgt_tensor *ps = p ? wgt_slice(p, 0, 0, N, 1) : NULL, *part = st && ps ? wgt_rope(st, ps, 10000.0) : NULL;
    uint16_t *a = malloc(sizeof(uint16_t) * H * S * HD), *b = malloc(sizeof(uint16_t) * H * N * HD);
    CHECK(a && b && whole && part && wgt_tensor_read(whole, a, sizeof(uint16_t) * H * S * HD) == WGT_OK &&
              wgt_tensor_read(part, b, sizeof(uint16_t) * H * N * HD) == WGT_OK,
          "f16 rope: %s", wgt_last_error());
    int bad = 0;
    for (int h = 0; whole && part && h < H && !bad; h++)
        for (int s = 0; s < N && !bad; s++)
            for (int i = 0; i < HD && !bad; i++) {
                uint16_t want = a[(h * S + s) * HD + i], got = b[(h * N + s) * HD + i];
                if (got != want) {
                    bad = 1;
                    CHECK(0, "f16 rope of a heads view (%d, %d, %d): 0x%04x (%g), the composition 0x%04x (%g)", h, s, i,
                          got, wgt_f16_to_f32(got), want, wgt_f16_to_f32(want));
                }
            }
    free(a), free(b);
    wgt_release(big), wgt_release(p), wgt_release(bt), wgt_release(whole), wgt_release(small), wgt_release(st);
    wgt_release(ps), wgt_release(part);
}

TEST_BACKENDS(rope_matches_reference) {
    check_rope(ctx, WGT_F32, 2, 7, 8, 0);
    check_rope(ctx, WGT_F32, 1, 13, 6, 1);
    check_rope(ctx, WGT_F16, 3, 5, 4, 1);
    check_rope(ctx, WGT_F16, 2, 7, 8, 0);
    check_rope(ctx, WGT_F16, 1, 13, 6, 1); /* d not a multiple of 4: composed */
    check_rope(ctx, WGT_F32, 1, 1, 2, 0);
    check_rope_ranks(ctx);
    check_rope_heads_view(ctx);
    check_rope_f16_bits(ctx);
}

static void check_attention(wgt_context *ctx, wgt_dtype dt, int64_t heads, int64_t lq, int64_t lk, int64_t d,
                            int64_t dv, int causal) {
    int64_t sq[3] = {heads, lq, d}, sk[3] = {heads, lk, d}, sv[3] = {heads, lk, dv};
    uint64_t seed = (uint64_t)(lq * 1000 + lk * 10 + causal);
    wgt_tensor *q = wgt_rand_normal(ctx, dt, 3, sq, 0, 1, seed), *k = wgt_rand_normal(ctx, dt, 3, sk, 0, 1, seed + 1);
    wgt_tensor *v = wgt_rand_normal(ctx, dt, 3, sv, 0, 1, seed + 2);
    wgt_tensor *o = wgt_attention(q, k, v, causal, 0);
    CHECK(o != NULL, "attention: %s", wgt_last_error());
    double *vq = test_read_f64(q), *vk = test_read_f64(k), *vv = test_read_f64(v), *vo = o ? test_read_f64(o) : NULL;
    double *w = malloc((size_t)(lk > 0 ? lk : 1) * sizeof *w), scale = 1 / sqrt((double)d);
    for (int64_t h = 0; vq && vk && vv && vo && h < heads; h++)
        for (int64_t i = 0; i < lq; i++) {
            double mx = -INFINITY, sum = 0;
            for (int64_t j = 0; j < lk; j++) {
                double s = 0;
                for (int64_t c = 0; c < d; c++) s += vq[(h * lq + i) * d + c] * vk[(h * lk + j) * d + c];
                w[j] = causal && j > i + (lk - lq) ? -INFINITY : s * scale;
                if (w[j] > mx) mx = w[j];
            }
            for (int64_t j = 0; j < lk; j++) sum += w[j] = exp(w[j] - mx);
            for (int64_t c = 0; c < dv; c++) {
                double want = 0;
                for (int64_t j = 0; j < lk; j++) want += w[j] / sum * vv[(h * lk + j) * dv + c];
                double got = vo[(h * lq + i) * dv + c];
                CHECK(fabs(got - want) <= tol_for(dt) * (1 + fabs(want)) * 2, "attention %s causal %d (%lld, %lld, %lld): %g, want %g",
                      wgt_dtype_name(dt), causal, (long long)h, (long long)i, (long long)c, got, want);
            }
        }
    free(vq), free(vk), free(vv), free(vo), free(w);
    wgt_release(q), wgt_release(k), wgt_release(v), wgt_release(o);
}

/* ---- wgt_attention_prefix ---- */
/*
 * wgt_attention_prefix (called from attention_matches_reference) against a float64 reference on both backends, and on WebGPU along
 * both paths (the fused kernel with its key-count binding, and the composition a context
 * with attention = COMPOSE takes). Keys past the count hold NaN in k and v, which must not
 * reach the result; counts of 0 and below give NaN rows, counts past Lk take every key.
 * Operands are contiguous, transposed (head dimension strided), sliced backwards, grouped
 * (k and v broadcast over the query heads of a group, as decoding reads its cache) and the
 * count a view at an offset. Tolerance: the composition's and the kernel's roundings bound
 * the error by a small multiple of the unit roundoff times sum_j p_j |v_j| (the scores are
 * dot products of at most 40 terms of unit size); a dropped or extra key moves the result by
 * about p_j |v_j|, far more.
 */
/* x [..., rows, cols] with values in [-2, 2), contiguous or as a view with other strides:
 * its transpose stored (layout 1), or every other row of a wider matrix read with the
 * columns backwards (layout 2). Rows from `from` on of the view hold NaN. */
static wgt_tensor *prefix_operand(wgt_context *ctx, wgt_dtype dt, int layout, int ndim, const int64_t *shape, int64_t from,
                           uint64_t seed) {
    int64_t s[WGT_MAX_DIMS], n = 1;
    memcpy(s, shape, sizeof(int64_t) * (size_t)ndim);
    int64_t rows = s[ndim - 2], cols = s[ndim - 1];
    if (layout == 1) s[ndim - 2] = cols, s[ndim - 1] = rows;
    if (layout == 2) s[ndim - 2] = 2 * rows, s[ndim - 1] = cols + 1;
    for (int i = 0; i < ndim; i++) n *= s[i];
    float *f = malloc(sizeof(float) * (size_t)(n ? n : 1));
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
    for (int64_t i = 0; i < n; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        int64_t c = i % s[ndim - 1], r = i / s[ndim - 1] % s[ndim - 2];
        int64_t row = layout == 1 ? c : layout == 2 ? (r - 1) / 2 : r; /* the view's row it lands in */
        f[i] = (layout == 2 && r % 2 == 0) || row < from ? (float)((double)(x >> 11) / 9007199254740992.0 * 4 - 2)
                                                         : NAN;
    }
    wgt_tensor *b32 = wgt_tensor_from_data(ctx, WGT_F32, ndim, s, f, sizeof(float) * (size_t)n, WGT_USAGE_DEFAULT);
    free(f);
    wgt_tensor *base = dt == WGT_F32 ? b32 : wgt_cast(b32, dt), *view = NULL;
    if (dt != WGT_F32) wgt_release(b32);
    if (layout == 1) {
        view = wgt_transpose(base, -1, -2);
    } else if (layout == 2) {
        wgt_tensor *r = wgt_slice(base, -2, 1, 2 * rows, 2);
        view = wgt_slice(r, -1, cols - 1, -cols - 2, -1);
        wgt_release(r);
    } else {
        view = wgt_retain(base);
    }
    wgt_release(base);
    return view;
}

typedef struct {
    wgt_dtype dt;
    int64_t heads, group, lq, lk, d, dv;
    int layout_q, layout_k, layout_v;
    int64_t count;
    wgt_dtype count_type;
} prefix_case;

/* The result for q [heads, group, lq, d], k [heads, 1, lk, d], v [heads, 1, lk, dv] (grouped:
 * broadcast over the group) against float64; NaN rows where no key is seen. */
static void prefix_case_check(wgt_context *ctx, const char *path, const prefix_case *c, uint64_t seed) {
    int64_t sq[4] = {c->heads, c->group, c->lq, c->d}, sk[4] = {c->heads, 1, c->lk, c->d};
    int64_t sv[4] = {c->heads, 1, c->lk, c->dv};
    int64_t seen = c->count < 0 ? 0 : c->count > c->lk ? c->lk : c->count;
    wgt_tensor *q = prefix_operand(ctx, c->dt, c->layout_q, 4, sq, c->lq, seed);
    wgt_tensor *k = prefix_operand(ctx, c->dt, c->layout_k, 4, sk, seen, seed + 1);
    wgt_tensor *v = prefix_operand(ctx, c->dt, c->layout_v, 4, sv, seen, seed + 2);
    /* The count: element 2 of a [3] tensor (a view at an offset). */
    int32_t cv[3] = {99, 98, (int32_t)c->count};
    int64_t three = 3;
    wgt_tensor *cb = wgt_tensor_from_data(ctx, c->count_type, 1, &three, cv, sizeof cv, WGT_USAGE_DEFAULT);
    wgt_tensor *count = cb ? wgt_slice(cb, 0, 2, 3, 1) : NULL;
    wgt_tensor *out = q && k && v && count ? wgt_attention_prefix(q, k, v, count, 0) : NULL;
    CHECK(out != NULL, "%s: %s", path, wgt_last_error());
    double *Q = q ? test_read_f64(q) : NULL, *K = k ? test_read_f64(k) : NULL, *V = v ? test_read_f64(v) : NULL;
    double *O = out ? test_read_f64(out) : NULL;
    CHECK(!out || (Q && K && V && O), "%s: reading the operands or the result: %s", path, wgt_last_error());
    double unit = c->dt == WGT_F16 ? 4.8828125e-4 : 5.9604644775390625e-8, scale = 1 / sqrt((double)c->d);
    double *p = malloc(sizeof(double) * (size_t)(c->lk + 1));
    int bad = 0;
    for (int64_t h = 0; O && Q && K && V && h < c->heads; h++)
        for (int64_t g = 0; g < c->group; g++)
            for (int64_t i = 0; i < c->lq; i++) {
                const double *qi = Q + ((h * c->group + g) * c->lq + i) * c->d;
                double top = -INFINITY, sum = 0;
                for (int64_t j = 0; j < seen; j++) {
                    p[j] = 0;
                    for (int64_t e = 0; e < c->d; e++) p[j] += qi[e] * K[(h * c->lk + j) * c->d + e];
                    p[j] *= scale;
                    if (p[j] > top) top = p[j];
                }
                for (int64_t j = 0; j < seen; j++) sum += p[j] = exp(p[j] - top);
                for (int64_t e = 0; e < c->dv && bad < 5; e++) {
                    double want = 0, mag = 0, got = O[((h * c->group + g) * c->lq + i) * c->dv + e];
                    for (int64_t j = 0; j < seen; j++) {
                        want += p[j] / sum * V[(h * c->lk + j) * c->dv + e];
                        mag += p[j] / sum * fabs(V[(h * c->lk + j) * c->dv + e]);
                    }
                    int ok = seen == 0 ? isnan(got) : fabs(got - want) <= 64 * unit * mag + 1e-300;
                    if (!ok) bad++;
                    CHECK(ok, "%s %s count %lld of %lld keys (layouts %d %d %d): [%lld, %lld, %lld, %lld] = %.9g, want %.9g",
                          path, wgt_dtype_name(c->dt), (long long)c->count, (long long)c->lk, c->layout_q, c->layout_k,
                          c->layout_v, (long long)h, (long long)g, (long long)i, (long long)e, got,
                          seen ? want : NAN);
                }
            }
    free(p), free(Q), free(K), free(V), free(O);
    wgt_release(q), wgt_release(k), wgt_release(v), wgt_release(cb), wgt_release(count), wgt_release(out);
}

static void prefix_check_all(wgt_context *ctx, const char *path) {
    const prefix_case cases[] = {
        /* decoding: one query per head of a group over a cache */
        {WGT_F32, 2, 2, 1, 64, 16, 16, 0, 0, 0, 5, WGT_I32},
        {WGT_F32, 2, 2, 1, 64, 16, 16, 0, 0, 0, 64, WGT_U32},
        {WGT_F32, 2, 2, 1, 64, 16, 16, 0, 0, 0, 1, WGT_I32},
        /* past a tile of 64 keys, odd head sizes, strided views */
        {WGT_F32, 1, 3, 5, 150, 7, 5, 1, 2, 1, 129, WGT_I32},
        {WGT_F32, 3, 1, 70, 90, 6, 9, 2, 1, 2, 70, WGT_U32},
        /* counts ending at, just past and before a tile of 64 keys with more tiles after it
         * (the kernel stops at the count's last tile) */
        {WGT_F32, 2, 2, 1, 150, 16, 16, 0, 0, 0, 64, WGT_I32},
        {WGT_F32, 2, 2, 1, 150, 16, 16, 0, 0, 0, 65, WGT_U32},
        {WGT_F32, 1, 2, 2, 200, 8, 8, 0, 0, 0, 127, WGT_I32},
        {WGT_F32, 1, 2, 2, 200, 8, 8, 0, 0, 0, 0, WGT_I32},
        /* counts past Lk (all keys), 0 and below (NaN rows) */
        {WGT_F32, 1, 2, 2, 9, 4, 4, 0, 0, 0, 40, WGT_I32},
        {WGT_F32, 1, 2, 2, 9, 4, 4, 0, 0, 0, 0, WGT_I32},
        {WGT_F32, 1, 2, 2, 9, 4, 4, 1, 0, 0, -3, WGT_I32},
        {WGT_F16, 2, 2, 1, 80, 32, 32, 0, 1, 0, 67, WGT_I32},
        {WGT_F16, 1, 3, 3, 20, 6, 5, 2, 0, 2, 11, WGT_U32}, /* odd dv: f16 composes */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) prefix_case_check(ctx, path, &cases[i], 40 + 3 * (uint64_t)i);
}

static void prefix_matches_float64(wgt_context *ctx) {
    prefix_check_all(ctx, wgt_context_backend(ctx) == WGT_BACKEND_WEBGPU ? "kernel" : "composed");
    if (wgt_context_backend(ctx) != WGT_BACKEND_WEBGPU) return;
    wgt_context_options opt = {0};
    opt.backend = WGT_BACKEND_WEBGPU;
    opt.quiet = 1;
    opt.attention = WGT_ATTENTION_COMPOSE;
    wgt_context *c = wgt_context_create(&opt);
    CHECK(c != NULL, "%s", wgt_last_error());
    if (c) prefix_check_all(c, "composed");
    wgt_context_release(c);
}

/* On WebGPU the op is one launch (the kernel reads the count), in a compiled graph too: the
 * count as a graph input, each dispatch attending over the keys its count gives. The launch
 * is `dispatches` kernel dispatches: 1, or 2 on the split path (the chunks, then their
 * combination). */
static void prefix_count_is_read_per_dispatch(wgt_context *ctx, uint64_t dispatches) {
    int64_t sq[3] = {2, 3, 8}, sk[3] = {2, 12, 8}, one = 1;
    wgt_tensor *q = wgt_rand_normal(ctx, WGT_F32, 3, sq, 0, 1, 1), *k = wgt_rand_normal(ctx, WGT_F32, 3, sk, 0, 1, 2);
    wgt_tensor *v = wgt_rand_normal(ctx, WGT_F32, 3, sk, 0, 1, 3);
    wgt_tensor *n = wgt_graph_input(ctx, "attention_prefix.count", WGT_I32, 1, &one);
    wgt_tensor *o = n ? wgt_attention_prefix(q, k, v, n, 0) : NULL;
    wgt_binding outs[1] = {{"out", o}};
    wgt_graph *g = o ? wgt_graph_build(ctx, 1, outs) : NULL;
    CHECK(g != NULL, "%s", wgt_last_error());
    if (g && wgt_context_backend(ctx) == WGT_BACKEND_WEBGPU)
        CHECK(wgt_graph_launches(g) == 1, "%d launches", wgt_graph_launches(g));
    for (int32_t cnt = 1; g && cnt <= 12; cnt += 5) {
        wgt_tensor *ct = wgt_tensor_from_data(ctx, WGT_I32, 1, &one, &cnt, sizeof cnt, WGT_USAGE_DEFAULT);
        wgt_tensor *got = wgt_zeros(ctx, WGT_F32, 3, wgt_tensor_shape(o));
        wgt_binding in[1] = {{"attention_prefix.count", ct}}, out[1] = {{"out", got}};
        wgt_stats before = {0}, after = {0};
        wgt_context_stats(ctx, &before);
        CHECK(wgt_graph_dispatch(g, 1, in, 1, out) == WGT_OK, "%s", wgt_last_error());
        wgt_context_stats(ctx, &after);
        if (wgt_context_backend(ctx) == WGT_BACKEND_WEBGPU)
            CHECK(after.dispatches - before.dispatches == dispatches, "count %d: %llu dispatches, want %llu", cnt,
                  (unsigned long long)(after.dispatches - before.dispatches), (unsigned long long)dispatches);
        /* The reference: wgt_attention over the first cnt keys. */
        wgt_tensor *ks = wgt_slice(k, 1, 0, cnt, 1), *vs = wgt_slice(v, 1, 0, cnt, 1);
        wgt_tensor *want = wgt_attention(q, ks, vs, 0, 0);
        double *a = test_read_f64(got), *b = want ? test_read_f64(want) : NULL;
        CHECK(a && b, "count %d: %s", cnt, wgt_last_error());
        for (int i = 0; a && b && i < 48; i++)
            CHECK(fabs(a[i] - b[i]) <= 1e-5 * (1 + fabs(b[i])), "count %d element %d: %.9g, want %.9g", cnt, i, a[i], b[i]);
        free(a), free(b);
        wgt_release(ct), wgt_release(got), wgt_release(ks), wgt_release(vs), wgt_release(want);
    }
    wgt_graph_release(g);
    wgt_release(q), wgt_release(k), wgt_release(v), wgt_release(n), wgt_release(o);
}

static void prefix_edges_and_errors(wgt_context *ctx) {
    int64_t sq[3] = {2, 0, 4}, sk[3] = {2, 5, 4}, s0[3] = {2, 0, 4}, q1[3] = {2, 1, 4}, one = 1, two = 2;
    int32_t five = 5;
    wgt_tensor *cnt = wgt_tensor_from_data(ctx, WGT_I32, 1, &one, &five, sizeof five, WGT_USAGE_DEFAULT);
    wgt_tensor *q0 = wgt_zeros(ctx, WGT_F32, 3, sq), *q = wgt_ones(ctx, WGT_F32, 3, q1);
    wgt_tensor *k = wgt_ones(ctx, WGT_F32, 3, sk), *k0 = wgt_zeros(ctx, WGT_F32, 3, s0);
    /* No queries: an empty result; no keys: zeros, an empty sum, as wgt_attention gives. */
    wgt_tensor *e = wgt_attention_prefix(q0, k, k, cnt, 0), *z = wgt_attention_prefix(q, k0, k0, cnt, 0);
    CHECK(e && wgt_tensor_numel(e) == 0, "%s", wgt_last_error());
    float zf[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    CHECK(z && wgt_tensor_read(z, zf, sizeof zf) == WGT_OK, "%s", wgt_last_error());
    for (int i = 0; i < 8; i++) CHECK(zf[i] == 0, "element %d of attention without keys: %g", i, zf[i]);
    wgt_tensor *fc = wgt_ones(ctx, WGT_F32, 1, &one), *c2 = wgt_ones(ctx, WGT_I32, 1, &two);
    wgt_tensor *kh = wgt_ones(ctx, WGT_F16, 3, sk);
    CHECK_ERROR(!wgt_attention_prefix(q, k, k, fc, 0), WGT_ERR_DTYPE, "wgt_attention_prefix: count is f32");
    CHECK_ERROR(!wgt_attention_prefix(q, k, k, c2, 0), WGT_ERR_SHAPE, "count has shape [2]; it must hold one element");
    CHECK_ERROR(!wgt_attention_prefix(q, k, k, NULL, 0), WGT_ERR_INVALID_ARGUMENT, "count");
    CHECK_ERROR(!wgt_attention_prefix(q, kh, k, cnt, 0), WGT_ERR_DTYPE, "must share one floating type");
    CHECK_ERROR(!wgt_attention_prefix(q, k, q, cnt, 0), WGT_ERR_SHAPE, "do not fit");
    CHECK_ERROR(!wgt_attention_prefix(q, k, k, cnt, -1), WGT_ERR_INVALID_ARGUMENT, "scale -1");
    wgt_release(cnt), wgt_release(q0), wgt_release(q), wgt_release(k), wgt_release(k0), wgt_release(e), wgt_release(z);
    wgt_release(fc), wgt_release(c2), wgt_release(kh);
}

/* (wgt_attention_prefix too: prefix_*) */
TEST_BACKENDS(attention_matches_reference) {
    check_attention(ctx, WGT_F32, 2, 7, 7, 8, 5, 0);
    check_attention(ctx, WGT_F32, 3, 9, 9, 16, 16, 1);
    check_attention(ctx, WGT_F32, 1, 3, 11, 4, 6, 1); /* fewer queries than keys: the last 3 positions */
    check_attention(ctx, WGT_F16, 2, 5, 5, 8, 8, 1);
    prefix_matches_float64(ctx);
    prefix_count_is_read_per_dispatch(ctx, 1);
    prefix_edges_and_errors(ctx);
}

TEST_BACKENDS(rope_and_attention_errors) {
    int64_t s3[3] = {1, 4, 5}, s2[2] = {4, 6}, p3[1] = {3};
    wgt_tensor *odd = wgt_zeros(ctx, WGT_F32, 3, s3), *x = wgt_zeros(ctx, WGT_F32, 2, s2);
    wgt_tensor *xi = wgt_zeros(ctx, WGT_I32, 2, s2), *pos = wgt_zeros(ctx, WGT_I32, 1, p3);
    CHECK_ERROR(wgt_rope(odd, NULL, 10000) == NULL, WGT_ERR_SHAPE, "even");
    CHECK_ERROR(wgt_rope(xi, NULL, 10000) == NULL, WGT_ERR_DTYPE, "i32");
    CHECK_ERROR(wgt_rope(x, pos, 10000) == NULL, WGT_ERR_SHAPE, "[3]");
    CHECK_ERROR(wgt_rope(x, NULL, -1) == NULL, WGT_ERR_INVALID_ARGUMENT, "base");
    CHECK_ERROR(wgt_attention(x, odd, x, 0, 0) == NULL, WGT_ERR_SHAPE, "[1, 4, 5]");
    CHECK_ERROR(wgt_attention(x, x, xi, 0, 0) == NULL, WGT_ERR_DTYPE, "i32");
    CHECK_ERROR(wgt_attention(x, x, x, 0, NAN) == NULL, WGT_ERR_INVALID_ARGUMENT, "scale");
    wgt_release(odd), wgt_release(x), wgt_release(xi), wgt_release(pos);
}

/* ---- the split-key path (WebGPU, attention_split.c) ---- */
/*
 * WGT_ATTENTION_CHUNKS=N sends every attention the split kernel fits through it, with the keys
 * in chunks of ceil(Lk / N). The prefix cases above run again that way with 1, 3 and 7 chunks
 * (150 keys: chunks of 150, 50 and 22, the last 18: counts that do not divide Lk), then
 * decoding's shapes: grouped heads both ways (the group as a batch dimension k and v are
 * broadcast over, and as the query rows of a key head, as tools/llama.c reads its cache), f16
 * and f32, and counts of 0, 1, inside a chunk, at a chunk's end and one past it, across a tile
 * of 64 inside a chunk, and past Lk. Then wgt_attention, causal and not, through the split
 * path (a kernel context), and a compiled graph whose count changes between dispatches.
 */
static wgt_context *split_context(const char *chunks, wgt_attention_path path) {
    test_saved_env env = test_env_set("WGT_ATTENTION_CHUNKS", chunks);
    wgt_context_options opt = {0};
    opt.backend = WGT_BACKEND_WEBGPU;
    opt.quiet = 1;
    opt.attention = path;
    wgt_context *c = wgt_context_create(&opt);
    test_env_restore(&env);
    if (!c) {
        test_skip_no_webgpu();
        wgt_clear_error();
    }
    return c;
}

TEST(attention_prefix_split_matches_float64) {
    static const char *const chunk_counts[3] = {"1", "3", "7"};
    static const int64_t chunk_keys[3] = {150, 50, 22}; /* of the 150 keys below */
    for (int n = 0; n < 3; n++) {
        wgt_context *c = split_context(chunk_counts[n], WGT_ATTENTION_AUTO);
        if (!c) return;
        char path[32];
        snprintf(path, sizeof path, "split in %s", chunk_counts[n]);
        prefix_check_all(c, path);
        int64_t ck = chunk_keys[n];
        const int64_t counts[] = {0, 1, ck / 2, ck, ck + 1, 2 * ck, 2 * ck + 1, 70, 149, 150, 400};
        for (size_t i = 0; i < sizeof counts / sizeof *counts; i++) {
            int f16 = i % 2;
            /* 4 query heads per key head: as a broadcast batch dimension, and as rows */
            prefix_case by_batch = {f16 ? WGT_F16 : WGT_F32, 2, 4, 1, 150, 16, 16, 0, (int)(i % 3), 0, counts[i], WGT_I32};
            prefix_case by_rows = {f16 ? WGT_F32 : WGT_F16, 3, 1, 4, 150, 8, 12, (int)(i % 3), 0, 2, counts[i], WGT_U32};
            prefix_case_check(c, path, &by_batch, 100 + i);
            prefix_case_check(c, path, &by_rows, 200 + i);
        }
        wgt_context_release(c);
    }
}

TEST(attention_split_matches_float64) {
    static const char *const chunk_counts[2] = {"2", "5"};
    for (int n = 0; n < 2; n++) {
        wgt_context *c = split_context(chunk_counts[n], WGT_ATTENTION_KERNEL);
        if (!c) return;
        check_attention(c, WGT_F32, 2, 7, 7, 8, 5, 0);
        check_attention(c, WGT_F32, 3, 9, 9, 16, 16, 1);
        check_attention(c, WGT_F32, 1, 3, 11, 4, 6, 1); /* fewer queries than keys: the last 3 positions */
        check_attention(c, WGT_F32, 2, 3, 130, 12, 8, 1);
        check_attention(c, WGT_F16, 2, 5, 5, 8, 8, 1);
        check_attention(c, WGT_F16, 1, 1, 77, 32, 6, 0);
        prefix_count_is_read_per_dispatch(c, 2);
        wgt_context_release(c);
    }
}

/* The f16 subgroup-matrix attention kernel takes no key count: wgt_attention_prefix must not
 * reach it (it would attend over every key, NaN rows past the count included). Run with the
 * kernel emulated in plain WGSL, as tests/test_attention_sgmatrix.c does. */
TEST(attention_prefix_skips_sgmatrix_kernel) {
    test_saved_env saved = test_env_set("WGT_SGMATRIX_EMULATE", "1");
    test_saved_env tile = test_env_set("WGT_SGMATRIX_TILE", "32,32,16,1,2");
    test_saved_env on = test_env_set("WGT_SGMATRIX_ATTENTION", "1");
    wgt_context *c = test_webgpu_context();
    test_env_restore(&on);
    test_env_restore(&tile);
    test_env_restore(&saved);
    if (!c) return;
    prefix_check_all(c, "kernel beside subgroup matrices");
    wgt_context_release(c);
}

/* Which path the rule picks (attention_split.c), seen in the dispatches: two for the split
 * path, one for the one-pass kernel. With 132 compute units (an H100's or H200's count):
 * decoding's shape (4 key heads of 8 query rows over 1024 keys) splits; 64 keys are too few
 * for two chunks of 64, 64 rows too many, 160 key heads already fill the units. With the
 * count unknown, 32 units are assumed: 16 heads split, 40 do not. */
static void check_split_chosen(wgt_context *ctx, int64_t heads, int64_t lq, int64_t lk, uint64_t want) {
    int64_t sq[3] = {heads, lq, 16}, sk[3] = {heads, lk, 16}, one = 1;
    int32_t n = (int32_t)lk;
    wgt_tensor *q = wgt_rand_normal(ctx, WGT_F32, 3, sq, 0, 1, 5), *k = wgt_rand_normal(ctx, WGT_F32, 3, sk, 0, 1, 6);
    wgt_tensor *cnt = wgt_tensor_from_data(ctx, WGT_I32, 1, &one, &n, sizeof n, WGT_USAGE_DEFAULT);
    wgt_tensor *in[3] = {q, k, cnt};
    CHECK(q && k && cnt && wgt_eval(3, in) == WGT_OK, "%s", wgt_last_error());
    wgt_stats before = {0}, after = {0};
    wgt_context_stats(ctx, &before);
    wgt_tensor *o = wgt_attention_prefix(q, k, k, cnt, 0);
    CHECK(o && wgt_eval(1, &o) == WGT_OK, "%s", wgt_last_error());
    wgt_context_stats(ctx, &after);
    CHECK(after.dispatches - before.dispatches == want, "%lld heads of %lld rows over %lld keys: %llu dispatches, want %llu",
          (long long)heads, (long long)lq, (long long)lk, (unsigned long long)(after.dispatches - before.dispatches),
          (unsigned long long)want);
    wgt_release(q), wgt_release(k), wgt_release(cnt), wgt_release(o);
}

TEST(attention_split_chosen_by_shape) {
    test_saved_env units = test_env_set("WGT_COMPUTE_UNITS", NULL), chunks = test_env_set("WGT_ATTENTION_CHUNKS", NULL);
    wgt_context *known = test_webgpu_context();
    wgt_context_options opt = {0};
    opt.backend = WGT_BACKEND_WEBGPU;
    opt.quiet = 1;
    opt.compute_units = 132;
    wgt_context *h200 = known ? wgt_context_create(&opt) : NULL;
    test_env_restore(&chunks);
    test_env_restore(&units);
    if (!known) return;
    CHECK(h200 != NULL, "%s", wgt_last_error());
    if (h200) {
        check_split_chosen(h200, 4, 8, 1024, 2);
        check_split_chosen(h200, 4, 8, 64, 1);
        check_split_chosen(h200, 4, 64, 1024, 1);
        check_split_chosen(h200, 160, 1, 1024, 1);
        wgt_context_release(h200);
    }
    char *d = wgt_context_describe(known);
    if (d && !strstr(d, "compute units:")) { /* lavapipe: not in the table of known adapters */
        check_split_chosen(known, 16, 1, 256, 2);
        check_split_chosen(known, 40, 1, 256, 1);
    }
    free(d);
    wgt_context_release(known);
}
