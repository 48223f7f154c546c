/*
 * The ways the WebGPU elementwise and fused kernels read their inputs (elementwise_access.h),
 * against the CPU backend on the same data, bit for bit (NaN against any NaN). Each kernel
 * runs four elements per invocation: whole quads in a vector kernel (vector loads and
 * stores), the last one to three elements in a tail kernel, so the shapes give element
 * counts of every remainder mod 4, fewer than four elements and none. Every input layout is
 * met in every position and type: dense with an aligned or an unaligned offset, a broadcast
 * scalar, a row repeated along leading dimensions (of a length divisible by 4 or not, at an
 * aligned offset or not), a column or a plane repeated along trailing and leading ones,
 * transposed and flipped views. The same runs go through the elementwise kernels (fusion
 * off) and fused kernels (fusion on, a two-op chain). A last pair of tests takes more
 * elements than one sweep of the largest one-dimensional launch covers, so each invocation
 * goes round its grid-stride loop more than once.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

static const wgt_dtype path_dtypes[] = {WGT_F32, WGT_F16, WGT_I32, WGT_U32};

/* Shapes [L, M, N]: element counts 48 (twice, divisible by 4), 105, 6, 15, 3, 1, 45 and 0. */
static const int64_t path_shapes[][3] = {{2, 3, 8}, {3, 5, 7}, {1, 2, 3}, {1, 3, 5}, {1, 1, 3},
                                         {4, 4, 12}, {1, 1, 1}, {5, 1, 9}, {2, 6, 4}, {0, 3, 4}};
#define NSHAPES (sizeof path_shapes / sizeof *path_shapes)

typedef enum {
    L_FULL,       /* dense, offset 0 */
    L_OFFSET,     /* dense at offset 3 (a slice of a longer vector) */
    L_SCALAR,     /* [1], computed on the device */
    L_ROW,        /* [N] along leading dimensions */
    L_ROW_OFFSET, /* [N] at offset 1 */
    L_COLUMN,     /* [M, 1]: repeated along N and L */
    L_PLANE,      /* [M, N] */
    L_OUTER,      /* [L, 1, 1] */
    L_TRANSPOSED, /* [N, M, L] transposed */
    L_FLIPPED,    /* [L, M, N] with every axis flipped */
    L_COUNT
} path_layout;
static const char *const path_layout_names[] = {"full", "offset", "scalar", "row", "row-offset",
                                                "column", "plane", "outer", "transposed", "flipped"};

static uint32_t path_random(uint32_t *state) {
    *state = *state * 1664525u + 1013904223u;
    return *state >> 8;
}

/* n elements of dtype: random values with NaN, infinities and signed zeros among them (no
 * subnormals: a GPU may flush them); integers anywhere in the type, so sums wrap. */
static void *path_data(wgt_dtype d, int64_t n, uint32_t seed) {
    static const float special[] = {NAN, INFINITY, -INFINITY, -0.0f, 0.0f, 65504.0f, -1.5f};
    size_t size = wgt_dtype_size(d);
    unsigned char *data = malloc((size_t)(n > 0 ? n : 1) * size);
    uint32_t state = seed * 2654435761u + 7;
    for (int64_t i = 0; data && i < n; i++) {
        uint32_t r = path_random(&state), pick = path_random(&state);
        float f = r % 7 == 0 ? special[pick % (sizeof special / sizeof *special)] : (float)(pick % 8192) / 256.0f - 16.0f;
        uint32_t u = pick * 2654435761u + r;
        if (d == WGT_F32) memcpy(data + i * 4, &f, 4);
        else if (d == WGT_F16) {
            uint16_t h = wgt_f32_to_f16(f);
            memcpy(data + i * 2, &h, 2);
        } else if (d == WGT_U32 && r % 3 == 0) {
            uint32_t bit = u & 1; /* where's conditions: zeros and ones too */
            memcpy(data + i * 4, &bit, 4);
        } else memcpy(data + i * 4, &u, 4);
    }
    return data;
}

static wgt_tensor *path_from(wgt_context *ctx, wgt_dtype d, int ndim, const int64_t *shape, uint32_t seed) {
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    void *data = path_data(d, n, seed);
    wgt_tensor *t = data ? wgt_tensor_from_data(ctx, d, ndim, shape, data, (size_t)n * wgt_dtype_size(d), WGT_USAGE_DEFAULT)
                         : NULL;
    free(data);
    return t;
}

/* Elements [start, start + n) of a fresh vector of start + n elements, seen as shape. */
static wgt_tensor *path_offset_view(wgt_context *ctx, wgt_dtype d, int64_t start, int ndim, const int64_t *shape,
                                    uint32_t seed) {
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    int64_t len = start + n;
    wgt_tensor *flat = path_from(ctx, d, 1, &len, seed);
    wgt_tensor *tail = flat ? wgt_slice(flat, 0, start, len, 1) : NULL;
    wgt_tensor *view = tail ? wgt_reshape(tail, ndim, shape) : NULL;
    wgt_release(flat);
    wgt_release(tail);
    return view;
}

/* An operand of layout l that broadcasts to s = [L, M, N]; the same seed gives the same
 * values in every context. */
static wgt_tensor *path_operand(wgt_context *ctx, wgt_dtype d, path_layout l, const int64_t *s, uint32_t seed) {
    int64_t one = 1, row = s[2], column[2] = {s[1], 1}, plane[2] = {s[1], s[2]}, outer[3] = {s[0], 1, 1};
    int64_t reversed[3] = {s[2], s[1], s[0]};
    switch (l) {
    case L_FULL: return path_from(ctx, d, 3, s, seed);
    case L_OFFSET: return path_offset_view(ctx, d, 3, 3, s, seed);
    case L_SCALAR: { /* computed, so a fused kernel binds it instead of folding it into a constant */
        wgt_tensor *x = path_from(ctx, d, 1, &one, seed), *unit = wgt_full(ctx, d, 1, &one, 1.0);
        wgt_tensor *t = x && unit ? wgt_mul(x, unit) : NULL;
        wgt_release(x), wgt_release(unit);
        return t;
    }
    case L_ROW: return path_from(ctx, d, 1, &row, seed);
    case L_ROW_OFFSET: return path_offset_view(ctx, d, 1, 1, &row, seed);
    case L_COLUMN: return path_from(ctx, d, 2, column, seed);
    case L_PLANE: return path_from(ctx, d, 2, plane, seed);
    case L_OUTER: return path_from(ctx, d, 3, outer, seed);
    case L_TRANSPOSED: {
        wgt_tensor *base = path_from(ctx, d, 3, reversed, seed), *t = base ? wgt_transpose(base, 0, 2) : NULL;
        wgt_release(base);
        return t;
    }
    default: {
        wgt_tensor *base = path_from(ctx, d, 3, s, seed), *t = base ? wgt_flip(base, 0, NULL) : NULL;
        wgt_release(base);
        return t;
    }
    }
}

/* Bits of element i of a tensor read as bytes; floats as NaN or not. */
static int same_element(wgt_dtype d, const unsigned char *x, const unsigned char *y, int64_t i) {
    if (d == WGT_F16) {
        uint16_t a, b;
        memcpy(&a, x + 2 * i, 2), memcpy(&b, y + 2 * i, 2);
        int an = (a & 0x7fff) > 0x7c00, bn = (b & 0x7fff) > 0x7c00;
        return an || bn ? an && bn : a == b;
    }
    uint32_t a, b;
    memcpy(&a, x + 4 * i, 4), memcpy(&b, y + 4 * i, 4);
    if (d == WGT_F32) {
        int an = (a & 0x7fffffffu) > 0x7f800000u, bn = (b & 0x7fffffffu) > 0x7f800000u;
        if (an || bn) return an && bn;
    }
    return a == b;
}

/* t broadcast to s (the result always has the whole shape); t is released. */
static wgt_tensor *path_full(wgt_tensor *t, const int64_t *s) {
    wgt_tensor *b = t ? wgt_broadcast_to(t, 3, s) : NULL;
    wgt_release(t);
    return b;
}

/* The op under test on either backend: a + b alone, where(c, a, b), or a + b - c as a chain
 * (the intermediate released, so with fusion on the two ops run as one kernel). */
typedef enum { OP_ADD, OP_WHERE, OP_CHAIN } path_op;

static wgt_tensor *path_run(wgt_context *ctx, path_op op, wgt_dtype d, const path_layout *l, const int64_t *s,
                            uint32_t seed) {
    wgt_tensor *a = path_full(path_operand(ctx, d, l[0], s, seed), s), *b = path_full(path_operand(ctx, d, l[1], s, seed + 1), s);
    wgt_tensor *c = path_full(path_operand(ctx, op == OP_WHERE ? WGT_U32 : d, l[2], s, seed + 2), s), *r = NULL;
    if (a && b && c) {
        if (op == OP_ADD) r = wgt_add(a, b);
        else if (op == OP_WHERE) r = wgt_where(c, a, b);
        else {
            wgt_tensor *t = wgt_add(a, b);
            r = t ? wgt_sub(t, c) : NULL;
            wgt_release(t);
        }
    }
    wgt_release(a), wgt_release(b), wgt_release(c);
    return r;
}

static wgt_context *path_gpu(int fusion) {
    wgt_context_options opt = {0};
    opt.backend = WGT_BACKEND_WEBGPU;
    opt.quiet = 1;
    opt.no_fusion = !fusion;
    wgt_context *ctx = wgt_context_create(&opt);
    if (!ctx) wgt_clear_error(); /* the runner has failed the run already if WebGPU was required */
    return ctx;
}

/* Every layout in every input position, in every type and shape, one op; checks against
 * the CPU backend and returns the fused ops the GPU context ran. */
static uint64_t check_paths(wgt_context *cpu, wgt_context *gpu, path_op op, const char *what) {
    static const char *const op_names[] = {"a + b", "where(c, a, b)", "a + b - c"};
    wgt_stats before, after;
    wgt_context_stats(gpu, &before);
    for (size_t di = 0; di < sizeof path_dtypes / sizeof *path_dtypes; di++)
        for (size_t si = 0; si < NSHAPES; si++)
            for (int la = 0; la < L_COUNT; la++) {
                wgt_dtype d = path_dtypes[di];
                const int64_t *s = path_shapes[si];
                /* The other inputs walk the layouts at other paces, so each meets many. */
                path_layout l[3] = {(path_layout)la, (path_layout)((la * 3 + (int)si + 1) % L_COUNT),
                                    (path_layout)((la * 7 + 2 * (int)si + 4) % L_COUNT)};
                uint32_t seed = (uint32_t)(1000 * di + 100 * si + 10 * (size_t)la);
                wgt_tensor *want = path_run(cpu, op, d, l, s, seed), *got = path_run(gpu, op, d, l, s, seed);
                int64_t n = s[0] * s[1] * s[2];
                size_t bytes = (size_t)n * wgt_dtype_size(d);
                unsigned char *x = malloc(bytes + 1), *y = malloc(bytes + 1);
                int read = want && got && x && y && wgt_tensor_read(want, x, bytes) == WGT_OK &&
                           wgt_tensor_read(got, y, bytes) == WGT_OK;
                CHECK(read, "%s %s %s [%lld, %lld, %lld] layouts %s, %s, %s: %s", what, op_names[op], wgt_dtype_name(d),
                      (long long)s[0], (long long)s[1], (long long)s[2], path_layout_names[l[0]], path_layout_names[l[1]],
                      path_layout_names[l[2]], wgt_last_error());
                int bad = 0;
                for (int64_t i = 0; read && i < n && bad < 3; i++)
                    if (!same_element(d, x, y, i)) {
                        bad++;
                        CHECK(0, "%s %s %s [%lld, %lld, %lld] layouts %s, %s, %s: element %lld differs from the CPU's",
                              what, op_names[op], wgt_dtype_name(d), (long long)s[0], (long long)s[1], (long long)s[2],
                              path_layout_names[l[0]], path_layout_names[l[1]], path_layout_names[l[2]], (long long)i);
                    }
                free(x), free(y);
                wgt_release(want), wgt_release(got);
            }
    wgt_context_stats(gpu, &after);
    return after.ops_fused - before.ops_fused;
}

TEST(elementwise_paths_match_cpu) {
    wgt_context *cpu = test_new_context(WGT_BACKEND_CPU), *gpu = path_gpu(0);
    if (cpu && gpu) {
        check_paths(cpu, gpu, OP_ADD, "elementwise");
        check_paths(cpu, gpu, OP_WHERE, "elementwise");
        CHECK(check_paths(cpu, gpu, OP_CHAIN, "elementwise") == 0, "fusion is off, yet ops were fused");
    }
    wgt_context_release(gpu);
    wgt_context_release(cpu);
}

TEST(fused_paths_match_cpu) {
    wgt_context *cpu = test_new_context(WGT_BACKEND_CPU), *gpu = path_gpu(1);
    if (cpu && gpu) CHECK(check_paths(cpu, gpu, OP_CHAIN, "fused") > 0, "no chain ran as a fused kernel");
    wgt_context_release(gpu);
    wgt_context_release(cpu);
}

/* More quads than 65535 workgroups of 256 invocations take in one sweep (the most a
 * one-dimensional launch has), with a one-element tail: f16 (i % 1024) + 1 (a dense input and
 * a broadcast scalar) unfused, (i % 1024) + 1 + 1 fused. f16, because 2^26 elements of it
 * are as many as lavapipe takes in one buffer. */
static void check_long_launch(int fusion) {
    wgt_context *gpu = path_gpu(fusion);
    if (!gpu) return;
    const int64_t n = (1LL << 26) - 3;
    CHECK(n > 65535LL * 256 * 4 && n % 4 == 1, "the size no longer needs a second sweep and a tail");
    int64_t one[1] = {1};
    uint16_t *h = malloc((size_t)n * 2);
    for (int64_t k = 0; h && k < n; k++) h[k] = wgt_f32_to_f16((float)(k % 1024));
    wgt_tensor *x = h ? wgt_tensor_from_data(gpu, WGT_F16, 1, &n, h, (size_t)n * 2, WGT_USAGE_DEFAULT) : NULL;
    wgt_tensor *b = wgt_full(gpu, WGT_F16, 1, one, 1.0), *xb = x && b ? wgt_add(x, b) : NULL;
    wgt_tensor *r = fusion && xb ? wgt_add(xb, b) : xb;
    if (fusion) wgt_release(xb);
    CHECK(r && h && wgt_tensor_read(r, h, (size_t)n * 2) == WGT_OK, "%s", wgt_last_error());
    int64_t bad = 0;
    for (int64_t k = 0; r && h && k < n; k++) {
        float want = (float)(k % 1024) + (fusion ? 2.0f : 1.0f);
        if (wgt_f16_to_f32(h[k]) != want && bad++ < 3)
            CHECK(0, "fusion %d: element %lld = %g, want %g", fusion, (long long)k, wgt_f16_to_f32(h[k]), want);
    }
    free(h);
    wgt_release(x), wgt_release(b), wgt_release(r);
    wgt_context_release(gpu);
}

TEST(elementwise_paths_beyond_one_sweep) { check_long_launch(0); }
TEST(fused_paths_beyond_one_sweep) { check_long_launch(1); }
