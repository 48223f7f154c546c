/*
 * Differential tests of wgt_matmul and wgt_linear on both backends: numpy.matmul's promotion
 * of 1-D operands, broadcast batch dimensions, transposed, sliced (steps of 2, one
 * negative) and broadcast (stride-0) views of a and b, odd and prime sizes that are not
 * multiples of the GPU kernels' tiles (64 and 128), the matrix-vector paths in both memory
 * orders, K = 0 (zeros), M = 0 and empty batches, many tiles, more workgroups than one
 * dispatch dimension holds, f32 and f16, and the error messages. Every result is compared
 * with a float64 reference computed from the inputs as read back; outputs are poisoned
 * (WGT_POISON=1, in the runner's poisoned pass), so an element no kernel wrote shows as NaN.
 *
 * Tolerances are worst-case bounds, not estimates, so no seed can fail a correct kernel:
 * a dot product of K f32 products summed in any order (BLAS, tiles, trees, with or without
 * FMA) is within gamma * sum|a_k b_k|, gamma = (K + 2) u, u = 2^-24 (Higham, Accuracy and
 * Stability, 3.1). That is tight enough to catch a dropped or doubled term: one term is about
 * sum|a b| / K, far above (K + 2) 2^-24 sum|a b| for the K used here (at most a few
 * thousand). f16 results add one rounding to f16 of the f32 result: 2^-10 relative, which
 * also covers rounding modes other than to-nearest, plus 2^-24 absolute for the subnormal
 * range. At the K of the split-K, rows and matrix-vector tests this bound is wider than the
 * error of operands rounded to bf16, f16 or TF32, so it cannot show a kernel that lowers its
 * precision: test_matmul_exact.c does, with inputs whose products and sums are exact.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/webgpu/webgpu_internal.h"
#include "core/handles.h"
#include "core/tensor.h"
#include "test.h"

#define U32 5.9604644775390625e-8 /* 2^-24 */
#define U16 9.765625e-4           /* 2^-10: one f16 rounding in any direction */

static const wgt_dtype float_types[2] = {WGT_F32, WGT_F16};

/* ---- inputs -------------------------------------------------------------------------- */

typedef enum { CONTIGUOUS, TRANSPOSED, SLICED, BROADCAST, LAYOUT_COUNT } layout;
static const char *const layout_names[] = {"contiguous", "transposed", "sliced", "broadcast"};

static wgt_tensor *uniform(wgt_context *ctx, wgt_dtype dt, int ndim, const int64_t *shape, uint64_t seed) {
    return wgt_rand_uniform(ctx, dt, ndim, shape, -1, 1, seed);
}

/* Releases old and returns view, a view of it (the view keeps the storage alive). */
static wgt_tensor *swap(wgt_tensor *old, wgt_tensor *view) {
    wgt_release(old);
    return view;
}

/* A tensor of the given shape (rank 1 or more) whose last two dimensions are laid out as
 * asked: TRANSPOSED has stride 1 along the second-to-last dimension (a column-major
 * matrix); SLICED takes every other element of a larger tensor, the last axis backwards, so
 * neither stride is 1; BROADCAST has stride 0 along the last dimension and along the first
 * (a batch dimension, or the rows of a matrix). Rank-1 tensors: TRANSPOSED and SLICED
 * read backwards with steps of 1 and 2. */
static wgt_tensor *make_view(wgt_context *ctx, wgt_dtype dt, layout l, int ndim, const int64_t *shape, uint64_t seed) {
    int64_t s[WGT_MAX_DIMS];
    memcpy(s, shape, sizeof(int64_t) * (size_t)ndim);
    wgt_tensor *v;
    switch (l) {
    case TRANSPOSED:
        if (ndim == 1) {
            v = uniform(ctx, dt, 1, s, seed);
            return swap(v, wgt_slice(v, 0, -1, -(shape[0] + 1), -1));
        }
        s[ndim - 2] = shape[ndim - 1];
        s[ndim - 1] = shape[ndim - 2];
        v = uniform(ctx, dt, ndim, s, seed);
        return swap(v, wgt_transpose(v, -1, -2));
    case SLICED:
        for (int i = 0; i < ndim; i++) s[i] = i >= ndim - 2 ? 2 * shape[i] + 1 : shape[i];
        v = uniform(ctx, dt, ndim, s, seed);
        if (ndim >= 2) v = swap(v, wgt_slice(v, ndim - 2, 1, s[ndim - 2], 2));
        return swap(v, wgt_slice(v, ndim - 1, 2 * shape[ndim - 1], 0, -2));
    case BROADCAST:
        s[0] = 1;
        s[ndim - 1] = 1;
        v = uniform(ctx, dt, ndim, s, seed);
        return swap(v, wgt_broadcast_to(v, ndim, shape));
    default: return uniform(ctx, dt, ndim, shape, seed);
    }
}

/* ---- reference ----------------------------------------------------------------------- */

typedef struct {
    int ndim;
    int64_t shape[WGT_MAX_DIMS];
    int64_t count;
    double *value; /* exact product sums */
    double *abs;   /* sum |a_k b_k| of each output, for the tolerance */
} reference;

static void reference_free(reference *r) {
    free(r->value);
    free(r->abs);
}

/* numpy.matmul in float64 over row-major values x (shape sa) and y (shape sb); valid shapes. */
static int reference_matmul(const double *x, int na, const int64_t *sa, const double *y, int nb, const int64_t *sb,
                            reference *r) {
    int64_t M = na == 1 ? 1 : sa[na - 2], K = sa[na - 1], N = nb == 1 ? 1 : sb[nb - 1];
    int ba = na > 2 ? na - 2 : 0, bb = nb > 2 ? nb - 2 : 0, nbatch = ba > bb ? ba : bb;
    int64_t bshape[WGT_MAX_DIMS], batch = 1;
    r->ndim = 0;
    for (int i = 0; i < nbatch; i++) {
        int64_t da = i - (nbatch - ba) >= 0 ? sa[i - (nbatch - ba)] : 1, db = i - (nbatch - bb) >= 0 ? sb[i - (nbatch - bb)] : 1;
        bshape[i] = da == 1 ? db : da;
        r->shape[r->ndim++] = bshape[i];
        batch *= bshape[i];
    }
    if (na > 1) r->shape[r->ndim++] = M;
    if (nb > 1) r->shape[r->ndim++] = N;
    r->count = batch * M * N;
    r->value = malloc(sizeof(double) * (size_t)(r->count ? r->count : 1));
    r->abs = malloc(sizeof(double) * (size_t)(r->count ? r->count : 1));
    if (!r->value || !r->abs) return 0;
    int64_t idx[WGT_MAX_DIMS] = {0};
    for (int64_t bi = 0; bi < batch; bi++) {
        /* Row-major batch offsets of each operand, size-1 (broadcast) dimensions fixed at 0. */
        int64_t oa = 0, ob = 0;
        for (int i = 0; i < nbatch; i++) {
            int ia = i - (nbatch - ba), ib = i - (nbatch - bb);
            if (ia >= 0) oa = oa * sa[ia] + (sa[ia] == 1 ? 0 : idx[i]);
            if (ib >= 0) ob = ob * sb[ib] + (sb[ib] == 1 ? 0 : idx[i]);
        }
        for (int64_t m = 0; m < M; m++)
            for (int64_t n = 0; n < N; n++) {
                double v = 0, s = 0;
                for (int64_t k = 0; k < K; k++) {
                    double p = x[(oa * M + m) * K + k] * y[(ob * K + k) * N + n];
                    v += p;
                    s += fabs(p);
                }
                r->value[(bi * M + m) * N + n] = v;
                r->abs[(bi * M + m) * N + n] = s;
            }
        for (int i = nbatch - 1; i >= 0 && ++idx[i] == bshape[i]; i--) idx[i] = 0;
    }
    return 1;
}

/* The bound on |result - value| for one output of a K-term dot product (see the top). */
static double tolerance(wgt_dtype dt, int64_t K, double value, double abs_sum) {
    double acc = (double)(K + 2) * U32 * abs_sum;
    if (dt == WGT_F32) return acc + 1e-30;
    return U16 * (fabs(value) + acc) + acc + U32;
}

/* Compares r's shape, type and values with the reference; frees nothing. Returns mismatches. */
static int compare(wgt_tensor *r, wgt_dtype dt, int64_t K, const reference *ref, const char *what) {
    CHECK(r != NULL, "%s: %s", what, wgt_last_error());
    if (!r) return 1;
    int bad = wgt_tensor_dtype(r) != dt || wgt_tensor_ndim(r) != ref->ndim;
    for (int d = 0; !bad && d < ref->ndim; d++) bad = wgt_tensor_shape(r)[d] != ref->shape[d];
    CHECK(!bad, "%s: result has rank %d, type %s, not the reference's rank %d", what, wgt_tensor_ndim(r),
          wgt_dtype_name(wgt_tensor_dtype(r)), ref->ndim);
    if (bad) return bad;
    double *got = test_read_f64(r);
    CHECK(got != NULL, "%s: reading the result: %s", what, wgt_last_error());
    for (int64_t i = 0; got && i < ref->count; i++) {
        double tol = tolerance(dt, K, ref->value[i], ref->abs[i]);
        if (!(fabs(got[i] - ref->value[i]) <= tol) && bad++ < 3)
            CHECK(0, "%s: element %lld is %.9g, want %.9g (tolerance %.3g)", what, (long long)i, got[i], ref->value[i], tol);
    }
    free(got);
    return bad;
}

/* wgt_matmul(a, b) against the reference; returns mismatches. */
static int check_matmul(wgt_tensor *a, wgt_tensor *b, const char *what) {
    char desc[320], sa[96] = "[", sb[96] = "[";
    for (int d = 0; a && d < wgt_tensor_ndim(a); d++)
        snprintf(sa + strlen(sa), sizeof sa - strlen(sa), d ? ", %lld" : "%lld", (long long)wgt_tensor_shape(a)[d]);
    for (int d = 0; b && d < wgt_tensor_ndim(b); d++)
        snprintf(sb + strlen(sb), sizeof sb - strlen(sb), d ? ", %lld" : "%lld", (long long)wgt_tensor_shape(b)[d]);
    snprintf(desc, sizeof desc, "%s %s] @ %s] %s", a ? wgt_dtype_name(wgt_tensor_dtype(a)) : "?", sa, sb, what);
    CHECK(a && b, "%s: making the inputs: %s", desc, wgt_last_error());
    if (!a || !b) return 1;
    double *x = test_read_f64(a), *y = test_read_f64(b);
    reference ref = {0};
    int ok = x && y &&
             reference_matmul(x, wgt_tensor_ndim(a), wgt_tensor_shape(a), y, wgt_tensor_ndim(b), wgt_tensor_shape(b), &ref);
    CHECK(ok, "%s: reading the inputs: %s", desc, wgt_last_error());
    int bad = 1;
    if (ok) {
        wgt_tensor *r = wgt_matmul(a, b);
        bad = compare(r, wgt_tensor_dtype(a), wgt_tensor_shape(a)[wgt_tensor_ndim(a) - 1], &ref, desc);
        wgt_release(r);
    }
    reference_free(&ref);
    free(x);
    free(y);
    return bad;
}

/* Makes a and b in the given layouts, checks their product and releases them. */
static void check_shapes(wgt_context *ctx, wgt_dtype dt, layout la, layout lb, int na, const int64_t *sa, int nb,
                         const int64_t *sb, uint64_t seed) {
    wgt_tensor *a = make_view(ctx, dt, la, na, sa, seed), *b = make_view(ctx, dt, lb, nb, sb, seed + 1000);
    char what[64];
    snprintf(what, sizeof what, "(a %s, b %s)", layout_names[la], layout_names[lb]);
    check_matmul(a, b, what);
    wgt_release(a);
    wgt_release(b);
}

/* ---- shapes, sizes and views ---------------------------------------------------------- */

TEST_BACKENDS(matmul_ranks_promotion_and_batch_broadcast) {
    enum { M = 7, K = 13, N = 5 };
    static const struct {
        int na, nb;
        int64_t sa[4], sb[4];
    } cases[] = {
        {1, 1, {K}, {K}},                       /* vector . vector: rank 0 */
        {1, 2, {K}, {K, N}},                    /* vector @ matrix: [N] */
        {2, 1, {M, K}, {K}},                    /* matrix @ vector: [M] */
        {2, 2, {M, K}, {K, N}},                 /* matrix @ matrix */
        {4, 3, {2, 1, M, K}, {3, K, N}},        /* batches broadcast both ways: [2, 3, M, N] */
        {1, 3, {K}, {2, K, N}},                 /* [2, N] */
        {3, 1, {2, M, K}, {K}},                 /* [2, M] */
        {4, 2, {2, 3, M, K}, {K, N}},           /* b shared by every batch element */
        {2, 4, {M, K}, {3, 1, K, N}},           /* a shared: [3, 1, M, N] */
        {3, 3, {1, M, K}, {4, K, N}},           /* a length-1 batch dimension of a stretched */
        {3, 3, {4, M, K}, {1, K, N}},           /* ... and of b */
        {4, 4, {2, 1, M, K}, {1, 3, K, N}},     /* one of each: [2, 3, M, N] */
    };
    for (size_t d = 0; d < 2; d++)
        for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
            check_shapes(ctx, float_types[d], CONTIGUOUS, CONTIGUOUS, cases[c].na, cases[c].sa, cases[c].nb, cases[c].sb,
                         10 + c + 100 * d);
}

/* Sizes 1 to 129, none a multiple of the 64 x 64 tile, with every pair of layouts for a and b
 * in both types: batches of 3, so the broadcast layout repeats one matrix across the batch
 * (and one column across each matrix). */
TEST_BACKENDS(matmul_odd_sizes_and_views) {
    static const int64_t sizes[7] = {1, 7, 13, 31, 65, 127, 129};
    int config = 0;
    for (size_t d = 0; d < 2; d++)
        for (int la = 0; la < LAYOUT_COUNT; la++)
            for (int lb = 0; lb < LAYOUT_COUNT; lb++, config++) {
                /* Large sizes only now and then, to keep the f16 reference loops short. */
                int64_t M = sizes[(config * 3) % 7], K = sizes[(config * 5 + 2) % 7], N = sizes[(config + 4) % 7];
                int64_t sa[3] = {3, M, K}, sb[3] = {3, K, N};
                check_shapes(ctx, float_types[d], (layout)la, (layout)lb, 3, sa, 3, sb, 200 + (uint64_t)config);
            }
    /* Rank-1 operands in the reversed and strided layouts, against matrices in others. */
    for (size_t d = 0; d < 2; d++) {
        int64_t v[1] = {65}, m[2] = {65, 31}, mt[2] = {13, 65};
        check_shapes(ctx, float_types[d], TRANSPOSED, SLICED, 1, v, 2, m, 300 + d);
        check_shapes(ctx, float_types[d], SLICED, TRANSPOSED, 2, mt, 1, v, 310 + d);
        check_shapes(ctx, float_types[d], SLICED, BROADCAST, 1, v, 1, v, 320 + d);
        /* a @ a^T: both operands in one storage (one buffer bound twice on WebGPU). */
        int64_t g[2] = {31, 65};
        wgt_tensor *x = uniform(ctx, float_types[d], 2, g, 330 + d), *xt = wgt_transpose(x, 0, 1);
        check_matmul(x, xt, "(a @ a^T)");
        wgt_release(xt);
        wgt_release(x);
    }
}

/* Matrix-vector products run the rows kernel on WebGPU (N = 1 as the transposed product):
 * outputs contiguous in memory (b stored by rows for M = 1, a by columns for N = 1) and K
 * contiguous, few and many outputs, long K (split into ranges), odd output counts in f16
 * (results paired into words by the sum kernel), and batched. */
TEST_BACKENDS(matmul_matrix_vector_paths) {
    static const struct {
        int64_t M, K, N;
    } sizes[] = {{1, 4099, 3}, {1, 300, 129}, {1, 31, 4097}, {65, 257, 1}, {5001, 33, 1}, {1, 2, 1},
                 {1, 600, 1101}, {1101, 600, 1}}; /* the last two: 16 or 32 invocations per output */
    int config = 0;
    for (size_t d = 0; d < 2; d++)
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
            for (int l = 0; l < 2; l++, config++) {
                int64_t sa[2] = {sizes[s].M, sizes[s].K}, sb[2] = {sizes[s].K, sizes[s].N};
                check_shapes(ctx, float_types[d], l ? TRANSPOSED : CONTIGUOUS, l ? CONTIGUOUS : TRANSPOSED, 2, sa, 2, sb,
                             400 + (uint64_t)config);
            }
    for (size_t d = 0; d < 2; d++) {
        int64_t sa[3] = {5, 1, 77}, sb[3] = {5, 77, 33}, sc[3] = {2, 3, 77}, v[1] = {77};
        check_shapes(ctx, float_types[d], CONTIGUOUS, TRANSPOSED, 3, sa, 3, sb, 450 + d);
        check_shapes(ctx, float_types[d], SLICED, BROADCAST, 3, sc, 1, v, 460 + d);
    }
}

TEST_BACKENDS(matmul_zero_sizes) {
    for (size_t d = 0; d < 2; d++) {
        wgt_dtype dt = float_types[d];
        static const struct {
            int na, nb;
            int64_t sa[3], sb[3];
        } cases[] = {
            {2, 2, {3, 0}, {0, 4}},       /* K = 0: zeros */
            {2, 2, {3, 0}, {0, 5}},       /* K = 0, odd N (f16 words shared by rows) */
            {2, 1, {3, 0}, {0}},          /* K = 0 matrix-vector */
            {1, 1, {0}, {0}},             /* K = 0 dot: a rank-0 zero */
            {3, 2, {2, 3, 0}, {0, 65}},   /* K = 0 batched, more than one tile */
            {2, 2, {0, 5}, {5, 4}},       /* M = 0 */
            {2, 2, {3, 5}, {5, 0}},       /* N = 0 */
            {3, 2, {0, 2, 3}, {3, 4}},    /* no batch elements */
        };
        for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
            check_shapes(ctx, dt, CONTIGUOUS, CONTIGUOUS, cases[c].na, cases[c].sa, cases[c].nb, cases[c].sb, 500 + c);
        /* Transposed views of empty matrices are fine too. */
        int64_t e[2] = {4, 0}, f[2] = {0, 6};
        check_shapes(ctx, dt, TRANSPOSED, TRANSPOSED, 2, e, 2, f, 520 + d);
    }
}

/* Many tiles per matrix: 4 x 4 tiles with partial ones at both edges, K spanning 19 steps of
 * 16 with a remainder; f16 with an odd N goes through the f32 buffer on WebGPU. */
TEST_BACKENDS(matmul_large_many_tiles) {
    int64_t sa[2] = {256, 300}, sb[2] = {300, 200}, sbo[2] = {300, 201};
    check_shapes(ctx, WGT_F32, CONTIGUOUS, CONTIGUOUS, 2, sa, 2, sb, 600);
    check_shapes(ctx, WGT_F32, TRANSPOSED, TRANSPOSED, 2, sa, 2, sb, 601);
    check_shapes(ctx, WGT_F16, CONTIGUOUS, TRANSPOSED, 2, sa, 2, sb, 602);
    check_shapes(ctx, WGT_F16, TRANSPOSED, CONTIGUOUS, 2, sa, 2, sbo, 603);
}

/* 70000 batch elements of one tile each: more workgroups than the 65535 of one dispatch
 * dimension, so the kernel takes its batch index from the 2-D grid. */
TEST_BACKENDS(matmul_many_batches_fold_the_grid) {
    int64_t sa[3] = {70000, 2, 3}, sb[2] = {3, 2};
    check_shapes(ctx, WGT_F32, CONTIGUOUS, CONTIGUOUS, 3, sa, 2, sb, 700);
}

/* ---- the WebGPU kernel variants --------------------------------------------------------
 * Shapes chosen so that the host picks each variant of the tiled and rows kernels (the CPU
 * backend runs them too): vec4 fetches along K or along M (N) where sizes, offsets and
 * strides are multiples of 4, element fetches where they are not (odd sizes, sliced and
 * broadcast views), partial tiles at every edge, K split into ranges summed by a second
 * kernel, and f16 results written in words, directly or through that kernel. */

/* 128 x 128 tiles (50 x 2 x 2 = 200 of them, enough to fill a large GPU), K in steps of 16
 * (8 where a is read element by element), the last one part filled. Fetched as vec4s, both
 * operands are staged along M and N: an operand fetched along K (a by rows, b by columns)
 * is stored four values at a time, one fetched along M (N) whole. */
TEST_BACKENDS(matmul_tiles_128_fetch_modes) {
    static const layout pairs[6][2] = {{CONTIGUOUS, CONTIGUOUS}, {TRANSPOSED, TRANSPOSED}, {CONTIGUOUS, TRANSPOSED},
                                       {TRANSPOSED, CONTIGUOUS}, {SLICED, BROADCAST},       {BROADCAST, SLICED}};
    for (size_t d = 0; d < 2; d++)
        for (int c = 0; c < 6; c++) {
            /* 132 and 36 are multiples of 4 (vec4 fetches); f16 with an odd N in one case. */
            int64_t n = d == 1 && c == 0 ? 131 : 132;
            int64_t sa[3] = {50, 132, 36}, sb[3] = {50, 36, n};
            check_shapes(ctx, float_types[d], pairs[c][0], pairs[c][1], 3, sa, 3, sb, 1000 + 10 * d + (uint64_t)c);
        }
    /* Sizes one past a multiple of 4 and of the tile: element fetches, thin edge tiles. */
    int64_t sa[3] = {50, 129, 37}, sb[3] = {50, 37, 133};
    check_shapes(ctx, WGT_F32, CONTIGUOUS, CONTIGUOUS, 3, sa, 3, sb, 1020);
    check_shapes(ctx, WGT_F16, TRANSPOSED, CONTIGUOUS, 3, sa, 3, sb, 1021);
}

/* 128 x 128 tiles over K of 512 or more: the loop over K takes two steps per iteration, in
 * an order of fetches, multiplies and stores chosen per layout of the operands. K = 516 is 33
 * steps of 16, the last part filled, so the loop runs one step more than K needs, over the
 * zeros fetched past its end. */
TEST_BACKENDS(matmul_tiles_128_long_k) {
    static const layout pairs[4][2] = {
        {CONTIGUOUS, CONTIGUOUS}, {CONTIGUOUS, TRANSPOSED}, {TRANSPOSED, CONTIGUOUS}, {TRANSPOSED, TRANSPOSED}};
    for (int c = 0; c < 4; c++) {
        int64_t sa[3] = {50, 132, 516}, sb[3] = {50, 516, 132};
        check_shapes(ctx, WGT_F32, pairs[c][0], pairs[c][1], 3, sa, 3, sb, 1040 + (uint64_t)c);
    }
}

/* The device dispatches of wgt_matmul(a, b) alone, its inputs made first. */
static uint64_t matmul_dispatches(wgt_context *ctx, wgt_tensor *a, wgt_tensor *b) {
    wgt_tensor *in[2] = {a, b};
    if (!a || !b || wgt_eval(2, in) != WGT_OK || wgt_context_sync(ctx) != WGT_OK) return 0;
    wgt_stats s0 = {0}, s1 = {0};
    wgt_context_stats(ctx, &s0);
    wgt_tensor *r = wgt_matmul(a, b);
    CHECK(r && wgt_eval(1, &r) == WGT_OK && wgt_context_sync(ctx) == WGT_OK, "matmul: %s", wgt_last_error());
    wgt_context_stats(ctx, &s1);
    wgt_release(r);
    return s1.dispatches - s0.dispatches;
}

/* A WebGPU context that takes the GPU to have `units` compute units (0: as the adapter tells),
 * which the matmul's choices by fill of the device follow; NULL (and a failed check where
 * `required`) without one. */
static wgt_context *gpu_with_units(uint32_t units, int required) {
    wgt_context_options opt = {0};
    opt.backend = WGT_BACKEND_WEBGPU;
    opt.quiet = 1;
    opt.compute_units = units;
    wgt_context *gpu = wgt_context_create(&opt);
    if (required) CHECK(gpu != NULL, "a WebGPU context with %u compute units: %s", units, wgt_last_error());
    else if (!gpu) test_skip_no_webgpu();
    return gpu;
}

/* The last wave of 128 x 128 tiles streamed (matmul.c, stream_plan): with the compute units
 * given, the tiles' passes over K after the whole waves are shared out in equal runs that
 * start and end inside tiles, and a second kernel adds each split tile's first part. 200
 * tiles (50 x 2 x 2) on 9, 16 and 64 units (18, 32 and 128 slots: 180, 160 and 0 whole
 * tiles first) over K of 3 passes (K = 36) and, on 16 units, 17 passes of two steps (K =
 * 516; a @ b and a @ b^T, the two step orders), an N that is not a multiple of 4 (element by
 * element writes) with partial edge tiles, and b shared by a batch that does not merge with
 * a's rows (a merged one is one matrix: matmul_folds_batch_against_one_matrix). 150 units
 * (300 slots) leave the tiles whole. */
TEST(matmul_tiles_128_streamed) {
    static const uint32_t units[3] = {9, 16, 64};
    static const struct {
        layout la, lb;
        int nb;
        int64_t sa[3], sb[3];
    } cases[5] = {
        {CONTIGUOUS, CONTIGUOUS, 3, {50, 132, 36}, {50, 36, 132}},
        {CONTIGUOUS, TRANSPOSED, 3, {50, 130, 36}, {50, 36, 131}},
        {TRANSPOSED, CONTIGUOUS, 2, {50, 132, 36}, {36, 132}},
        {CONTIGUOUS, CONTIGUOUS, 3, {50, 132, 516}, {50, 516, 132}},
        {CONTIGUOUS, TRANSPOSED, 3, {50, 132, 516}, {50, 516, 132}},
    };
    for (int u = 0; u < 4; u++) {
        uint32_t unit_count = u < 3 ? units[u] : 150;
        wgt_context *gpu = gpu_with_units(unit_count, 0);
        if (!gpu) return; /* the runner reports a missing WebGPU device */
        uint64_t want = u < 3 ? 2 : 1;
        int n = u == 1 ? 5 : 3; /* the long K cases on 16 units only */
        for (int c = 0; c < n; c++) {
            uint64_t seed = 1060 + 10 * (uint64_t)u + (uint64_t)c;
            wgt_tensor *a = make_view(gpu, WGT_F32, cases[c].la, 3, cases[c].sa, seed);
            wgt_tensor *b = make_view(gpu, WGT_F32, cases[c].lb, cases[c].nb, cases[c].sb, seed + 1000);
            char what[96];
            snprintf(what, sizeof what, "(a %s, b %s, %u compute units)", layout_names[cases[c].la],
                     layout_names[cases[c].lb], unit_count);
            uint64_t dispatches = matmul_dispatches(gpu, a, b);
            CHECK(dispatches == want, "%s: %llu dispatches, want %llu", what, (unsigned long long)dispatches,
                  (unsigned long long)want);
            check_matmul(a, b, what);
            wgt_release(a);
            wgt_release(b);
        }
        wgt_context_release(gpu);
    }
}

/* A batch of products against one matrix (b broadcast over the batch) where a's batch merges
 * with its rows runs as one matrix of batch x M rows (matmul.c, fold_batch): the same
 * dispatches as that matrix, here with a packed first (a single matrix's privilege), and the
 * right values; with rows that have gaps after them (a slice of wider rows) as well. A batch
 * that does not merge (every other row) and a b that is not shared stay batches, still right. */
TEST(matmul_folds_batch_against_one_matrix) {
    wgt_context *gpu = gpu_with_units(1024, 0); /* choices by size alone (matmul_packed_operands) */
    if (!gpu) return;
    int64_t sa[3] = {2, 1024, 256}, sa2[2] = {2048, 256}, sw[3] = {2, 1024, 300}, sb[2] = {256, 2048}, sb3[3] = {2, 256, 2048};
    wgt_tensor *a = uniform(gpu, WGT_F32, 3, sa, 1201), *b = uniform(gpu, WGT_F32, 2, sb, 1202);
    wgt_tensor *flat = wgt_reshape(a, 2, sa2), *wide = uniform(gpu, WGT_F32, 3, sw, 1203);
    wgt_tensor *gaps = wide ? wgt_slice(wide, 2, 0, 256, 1) : NULL;
    wgt_tensor *apart = make_view(gpu, WGT_F32, SLICED, 3, sa, 1204), *b3 = uniform(gpu, WGT_F32, 3, sb3, 1205);
    uint64_t one = matmul_dispatches(gpu, flat, b), batched = matmul_dispatches(gpu, a, b);
    CHECK(one >= 2 && batched == one, "[2, 1024, 256] @ [256, 2048]: %llu dispatches, as one [2048, 256] matrix %llu "
          "(its pack and product at least)", (unsigned long long)batched, (unsigned long long)one);
    uint64_t with_gaps = matmul_dispatches(gpu, gaps, b);
    CHECK(with_gaps == one, "rows with gaps after them: %llu dispatches, want %llu", (unsigned long long)with_gaps,
          (unsigned long long)one);
    check_matmul(a, b, "(a batch against one matrix)");
    check_matmul(gaps, b, "(a batch of rows with gaps against one matrix)");
    check_matmul(apart, b, "(a batch that does not merge with its rows against one matrix)");
    check_matmul(a, b3, "(a batch against a batch)");
    wgt_release(a), wgt_release(b), wgt_release(flat), wgt_release(wide), wgt_release(gaps), wgt_release(apart);
    wgt_release(b3);
    wgt_context_release(gpu);
}

/* Operands packed before the 128 x 128 tiles (matmul.c, pack_pays): a product long enough
 * (K >= 256, the other side at least 2048, or 512 for an operand read element by element)
 * gets each operand not fetched as vec4s along M (N) copied into lines along M (N) first, one
 * more dispatch each. Sizes that cross the thresholds take long for a float64 reference of
 * every output, so every output is compared with the CPU backend's (bound: twice the
 * worst-case f32 error of a K-term sum of products within [-1, 1]), and a sample of outputs,
 * the last row and column among them, with the float64 reference. */
static void check_packed(wgt_context *cpu, wgt_context *gpu, layout la, layout lb, int64_t M, int64_t K, int64_t N,
                         uint64_t want_dispatches, uint64_t seed) {
    int64_t sa[2] = {M, K}, sb[2] = {K, N};
    wgt_context *cs[2] = {cpu, gpu};
    wgt_tensor *r[2] = {NULL, NULL}, *in[2][2];
    for (int k = 0; k < 2; k++) {
        in[k][0] = make_view(cs[k], WGT_F32, la, 2, sa, seed);
        in[k][1] = make_view(cs[k], WGT_F32, lb, 2, sb, seed + 50);
    }
    char what[96];
    snprintf(what, sizeof what, "[%lld, %lld] %s @ [%lld, %lld] %s", (long long)M, (long long)K, layout_names[la],
             (long long)K, (long long)N, layout_names[lb]);
    uint64_t dispatches = matmul_dispatches(gpu, in[1][0], in[1][1]);
    CHECK(dispatches == want_dispatches, "%s: %llu dispatches, want %llu", what, (unsigned long long)dispatches,
          (unsigned long long)want_dispatches);
    for (int k = 0; k < 2; k++) r[k] = wgt_matmul(in[k][0], in[k][1]);
    double *x = test_read_f64(in[0][0]), *y = test_read_f64(in[0][1]), *gc = r[0] ? test_read_f64(r[0]) : NULL,
           *gg = r[1] ? test_read_f64(r[1]) : NULL;
    int ok = x && y && gc && gg;
    CHECK(ok, "%s: %s", what, wgt_last_error());
    double bound = 2.0 * (double)(K + 2) * U32 * (double)K;
    int bad = 0;
    for (int64_t i = 0; ok && i < M * N; i++)
        if (!(fabs(gg[i] - gc[i]) <= bound) && bad++ < 3)
            CHECK(0, "%s: element %lld: webgpu %.9g, cpu %.9g", what, (long long)i, gg[i], gc[i]);
    /* 2000 outputs spread over the matrix, then the last row and the last column. */
    for (int64_t s = 0; ok && s < 2000 + M + N; s++) {
        int64_t m = s < 2000 ? (s * 7919) % M : s < 2000 + N ? M - 1 : s - 2000 - N;
        int64_t n = s < 2000 ? (s * 104729) % N : s < 2000 + N ? s - 2000 : N - 1;
        double v = 0, abs_sum = 0;
        for (int64_t k = 0; k < K; k++) {
            double p = x[m * K + k] * y[k * N + n];
            v += p;
            abs_sum += fabs(p);
        }
        if (!(fabs(gg[m * N + n] - v) <= tolerance(WGT_F32, K, v, abs_sum)) && bad++ < 3)
            CHECK(0, "%s: output (%lld, %lld) is %.9g, want %.9g", what, (long long)m, (long long)n, gg[m * N + n], v);
    }
    free(x), free(y), free(gc), free(gg);
    for (int k = 0; k < 2; k++) wgt_release(r[k]), wgt_release(in[k][0]), wgt_release(in[k][1]);
}

TEST(matmul_packed_operands) {
    wgt_context *cpu, *gpu;
    if (!test_backend_pair(&cpu, &gpu)) return;
    /* The tiles of these sizes would fill part of a large GPU's one wave, where they are split
     * or streamed by that fill (matmul_tiles_128_under_one_wave). So many compute units that
     * they fill too little of it keep the choice by size alone, on every device. */
    wgt_context_release(gpu);
    gpu = gpu_with_units(1024, 1);
    if (!gpu) {
        wgt_context_release(cpu);
        return;
    }
    static const struct {
        layout la, lb;
        int64_t m, k, n;
        int packs;
    } cases[] = {
        {CONTIGUOUS, CONTIGUOUS, 1664, 256, 2048, 1}, /* a by rows: packed; b by rows: fetched as it is */
        {CONTIGUOUS, TRANSPOSED, 2048, 260, 2048, 2}, /* both fetched along K: both packed */
        {TRANSPOSED, CONTIGUOUS, 1664, 256, 2048, 0}, /* both along M (N) already */
        {CONTIGUOUS, CONTIGUOUS, 1665, 257, 1795, 2}, /* rows of odd length: read element by element */
        {SLICED, BROADCAST, 1795, 301, 1665, 2},      /* no stride 1, and b one value broadcast */
        {CONTIGUOUS, CONTIGUOUS, 1664, 200, 2048, 0}, /* K too short to repay the copy */
        {CONTIGUOUS, CONTIGUOUS, 4352, 257, 768, 1},  /* odd rows against 768 columns: packed */
        {CONTIGUOUS, CONTIGUOUS, 6656, 257, 500, 0},  /* against 500: too few to repay it */
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
        check_packed(cpu, gpu, cases[c].la, cases[c].lb, cases[c].m, cases[c].k, cases[c].n,
                     1 + (uint64_t)cases[c].packs, 1600 + c);
    wgt_context_release(gpu);
    /* Streamed (16 compute units given: 32 slots for 210 tiles) with N = 1795: the tiles write
     * rows padded to 1796 into a buffer, which a copy moves into the result (dispatches: two
     * packs, the tiles, the fix kernel, the copy). */
    gpu = gpu_with_units(16, 1);
    if (gpu) check_packed(cpu, gpu, CONTIGUOUS, CONTIGUOUS, 1665, 257, 1795, 5, 1620);
    /* N % 4 == 0: written directly (a packed, the tiles, the fix kernel). */
    if (gpu) check_packed(cpu, gpu, SLICED, CONTIGUOUS, 1665, 260, 1796, 3, 1630);
    wgt_context_release(gpu);
    wgt_context_release(cpu);
}

/* Fewer 128 x 128 tiles than the device has slots (matmul.c, choose_tiles), on 16 compute units
 * (32 slots). 16 tiles over K = 1000 fill the slots in two ranges of K (the tiles, the sum
 * kernel). 9 tiles fill too few that way: they are streamed, each operand not fetched as vec4s
 * along M (N) packed first, and runs shorter than a tile share its passes over K (32 runs of 9
 * passes for K = 1000, 3 or 4 per tile; of 7 or 8 for K = 777, where N = 259 writes padded
 * rows and a copy moves them), the fix kernel adding the parts. */
TEST(matmul_tiles_128_under_one_wave) {
    wgt_context *cpu = NULL, *gpu = NULL;
    if (!test_backend_pair(&cpu, &gpu)) return;
    wgt_context_release(gpu);
    static const struct {
        uint32_t units;
        layout la, lb;
        int64_t m, k, n;
        uint64_t dispatches;
    } cases[] = {
        {16, CONTIGUOUS, CONTIGUOUS, 512, 1000, 512, 2}, /* K in two ranges: the tiles, the sum kernel */
        {16, CONTIGUOUS, CONTIGUOUS, 384, 1000, 384, 3}, /* a packed, the tiles, the fix kernel */
        {16, CONTIGUOUS, TRANSPOSED, 384, 1000, 384, 4}, /* both packed */
        {16, TRANSPOSED, CONTIGUOUS, 384, 1000, 384, 2}, /* nothing to pack */
        {16, CONTIGUOUS, CONTIGUOUS, 300, 777, 259, 5},  /* both packed; padded rows and the copy */
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        gpu = gpu_with_units(cases[c].units, 1);
        if (gpu)
            check_packed(cpu, gpu, cases[c].la, cases[c].lb, cases[c].m, cases[c].k, cases[c].n, cases[c].dispatches,
                         1700 + c);
        wgt_context_release(gpu);
    }
    wgt_context_release(cpu);
}

/* 128 x 64 tiles (M > N) and 64 x 128 (N > M): too few 128 x 128 tiles, enough of these. */
TEST_BACKENDS(matmul_tiles_128_by_64) {
    int64_t sa[3] = {50, 130, 20}, sb[3] = {50, 20, 100}, ta[3] = {50, 100, 20}, tb[3] = {50, 20, 130};
    for (size_t d = 0; d < 2; d++) {
        check_shapes(ctx, float_types[d], CONTIGUOUS, CONTIGUOUS, 3, sa, 3, sb, 1100 + d);
        check_shapes(ctx, float_types[d], TRANSPOSED, TRANSPOSED, 3, ta, 3, tb, 1110 + d);
    }
}

/* Few output tiles and a long K: K is split into ranges (8 for K = 4096, the last one short
 * for K = 4100) whose partial results the sum kernel adds, writing f32 or f16 words. Where
 * the device allows, pairs of ranges run as two slices of one workgroup: 4 ranges of 2
 * slices for K = 4096, one range of 2 slices (69 steps of 16, so the second slice's last
 * step is past the end) for 200 x 1100 x 130, with no sum kernel. */
TEST_BACKENDS(matmul_split_k) {
    int64_t sa[2] = {64, 4096}, sb[2] = {4096, 64}, ra[2] = {64, 4100}, rb[2] = {4100, 63};
    int64_t wa[2] = {200, 1100}, wb[2] = {1100, 130};
    for (size_t d = 0; d < 2; d++) {
        check_shapes(ctx, float_types[d], CONTIGUOUS, CONTIGUOUS, 2, sa, 2, sb, 1200 + d);
        check_shapes(ctx, float_types[d], TRANSPOSED, SLICED, 2, ra, 2, rb, 1210 + d);
        check_shapes(ctx, float_types[d], CONTIGUOUS, TRANSPOSED, 2, wa, 2, wb, 1220 + d);
    }
}

/* The rows kernel, for M up to 32: 1, 2, 4, 8 or 16 rows per workgroup (and two blocks of
 * 16), b read as vec4s (N a multiple of 4), along K (b transposed) or element by element
 * (odd N, sliced views); K of 700 is split in two ranges, each staged in two parts. */
TEST_BACKENDS(matmul_few_rows) {
    static const int64_t rows[9] = {1, 2, 3, 5, 8, 9, 16, 17, 31};
    static const layout b_layouts[3] = {CONTIGUOUS, TRANSPOSED, SLICED};
    int config = 0;
    for (size_t d = 0; d < 2; d++)
        for (int r = 0; r < 9; r++, config++) {
            layout la = config % 4 == 3 ? TRANSPOSED : CONTIGUOUS, lb = b_layouts[config % 3];
            int64_t n = config % 2 ? 301 : 300;
            int64_t sa[3] = {2, rows[r], 700}, sb[3] = {2, 700, n};
            check_shapes(ctx, float_types[d], la, lb, 3, sa, 3, sb, 1300 + (uint64_t)config);
        }
    /* A long K in many ranges, and b broadcast across the batch. */
    int64_t la[2] = {4, 5000}, lb[2] = {5000, 64}, ba[3] = {3, 6, 300}, bb[3] = {3, 300, 256};
    for (size_t d = 0; d < 2; d++) {
        check_shapes(ctx, float_types[d], CONTIGUOUS, CONTIGUOUS, 2, la, 2, lb, 1400 + d);
        check_shapes(ctx, float_types[d], CONTIGUOUS, BROADCAST, 3, ba, 3, bb, 1410 + d);
    }
}

/* The rows kernel's 16-byte loads of b: 8 f16 values along N (N and b's row stride multiples
 * of 8), and 4 f32 or 8 f16 values along K for b stored by columns (K a multiple of 8), with
 * 1, 3 and 16 rows, K split into ranges, and the matrix-vector product of a matrix stored by
 * rows (the transposed product); K = 804 (a multiple of 4, not 8) and N = 260 keep f16 on
 * the narrower loads. */
TEST_BACKENDS(matmul_few_rows_wide_loads) {
    static const int64_t rows[3] = {1, 3, 16};
    for (size_t d = 0; d < 2; d++)
        for (int r = 0; r < 3; r++) {
            int64_t sa[3] = {2, rows[r], 1000}, sb[3] = {2, 1000, 264}, sc[3] = {2, 804, 260};
            check_shapes(ctx, float_types[d], CONTIGUOUS, CONTIGUOUS, 3, sa, 3, sb, 1450 + 10 * d + (uint64_t)r);
            check_shapes(ctx, float_types[d], CONTIGUOUS, TRANSPOSED, 3, sa, 3, sb, 1453 + 10 * d + (uint64_t)r);
            int64_t sd[3] = {2, rows[r], 804};
            check_shapes(ctx, float_types[d], TRANSPOSED, TRANSPOSED, 3, sd, 3, sc, 1456 + 10 * d + (uint64_t)r);
        }
    int64_t m[2] = {264, 3000}, v[1] = {3000};
    for (size_t d = 0; d < 2; d++) check_shapes(ctx, float_types[d], CONTIGUOUS, CONTIGUOUS, 2, m, 1, v, 1480 + d);
}

/* The CPU backend's f16 product in blocks (cpu_matmul.c: 1024 rows, 1024 columns, K in
 * ranges of 512): M and N one past a block, K two ranges and a part, batches of 2 with b
 * shared, and a transposed and a sliced view, each with a small other side to keep the
 * reference short. */
TEST_BACKENDS(matmul_f16_past_the_cpu_blocks) {
    int64_t tall_a[3] = {2, 1025, 1100}, tall_b[2] = {1100, 3}, wide_a[3] = {2, 3, 1100}, wide_b[2] = {1100, 1025};
    check_shapes(ctx, WGT_F16, CONTIGUOUS, CONTIGUOUS, 3, tall_a, 2, tall_b, 1500);
    check_shapes(ctx, WGT_F16, TRANSPOSED, SLICED, 3, tall_a, 2, tall_b, 1501);
    check_shapes(ctx, WGT_F16, CONTIGUOUS, CONTIGUOUS, 3, wide_a, 2, wide_b, 1502);
    check_shapes(ctx, WGT_F16, SLICED, TRANSPOSED, 3, wide_a, 2, wide_b, 1503);
}

/* One row of a, read from memory in the loop rather than staged: along N and along K (b
 * transposed), K in many ranges; a vector starting at an odd element, which cannot be read
 * 16 bytes at a time along K and is staged instead; and a vector read backwards. Then f16
 * results the rows kernel writes itself, as words of two columns (K in one range, even N),
 * for one row and for three. */
TEST_BACKENDS(matmul_single_row) {
    int64_t sa[2] = {1, 5000}, sb[2] = {5000, 64}, m[2] = {264, 3000}, v[1] = {3001};
    int64_t one[2] = {1, 200}, three[2] = {3, 200}, wb[2] = {200, 130};
    for (int l = 0; l < 2; l++) {
        check_shapes(ctx, WGT_F16, CONTIGUOUS, l ? TRANSPOSED : CONTIGUOUS, 2, one, 2, wb, 1486 + (uint64_t)l);
        check_shapes(ctx, WGT_F16, CONTIGUOUS, l ? TRANSPOSED : CONTIGUOUS, 2, three, 2, wb, 1488 + (uint64_t)l);
    }
    for (size_t d = 0; d < 2; d++) {
        check_shapes(ctx, float_types[d], CONTIGUOUS, CONTIGUOUS, 2, sa, 2, sb, 1490 + d);
        check_shapes(ctx, float_types[d], CONTIGUOUS, TRANSPOSED, 2, sa, 2, sb, 1492 + d);
        wgt_tensor *w = make_view(ctx, float_types[d], CONTIGUOUS, 2, m, 1494 + d);
        wgt_tensor *x = uniform(ctx, float_types[d], 1, v, 1496 + d);
        wgt_tensor *odd = wgt_slice(x, 0, 1, 3001, 1), *back = wgt_slice(x, 0, 3000, 0, -1);
        check_matmul(w, odd, "(vector at an odd offset)");
        check_matmul(w, back, "(vector read backwards)");
        wgt_release(w), wgt_release(x), wgt_release(odd), wgt_release(back);
    }
}

/* A matrix stored by rows times a vector (w @ v, run as v @ w^T with w read 16 bytes at a time
 * along K): each invocation takes 4, 2 or 1 columns, the most that still gives enough
 * workgroups (matmul.c, rows_columns; N = 8200, 4100 and 2100 at K = 72), an odd N with f16
 * results (through the sum kernel), and w batched. With the compute units given (5: at most 15
 * workgroups), each workgroup takes many tiles in turn. */
TEST(matmul_vector_by_columns) {
    static const struct {
        int64_t batch, n;
    } cases[5] = {{1, 8200}, {1, 4100}, {1, 2100}, {1, 2101}, {3, 700}};
    enum { K = 72 };
    for (int u = 0; u < 2; u++) {
        wgt_context *gpu = gpu_with_units(u ? 5 : 0, 0);
        if (!gpu) return; /* the runner reports a missing WebGPU device */
        for (size_t d = 0; d < 2; d++)
            for (int c = 0; c < 5; c++) {
                uint64_t seed = 1510 + 10 * (uint64_t)u + 5 * d + (uint64_t)c;
                int64_t sw[3] = {cases[c].batch, cases[c].n, K}, sv[1] = {K};
                int nw = cases[c].batch > 1 ? 3 : 2;
                wgt_tensor *w = make_view(gpu, float_types[d], CONTIGUOUS, nw, nw == 3 ? sw : sw + 1, seed);
                wgt_tensor *v = uniform(gpu, float_types[d], 1, sv, seed + 1000);
                char what[64];
                snprintf(what, sizeof what, "(%u compute units)", u ? 5u : 0u);
                /* One kernel; the sum kernel only where f16 results have an odd N. */
                uint64_t want = float_types[d] == WGT_F16 && cases[c].n % 2 ? 2 : 1;
                uint64_t dispatches = matmul_dispatches(gpu, w, v);
                CHECK(dispatches == want, "%s n %lld: %llu dispatches, want %llu", what, (long long)cases[c].n,
                      (unsigned long long)dispatches, (unsigned long long)want);
                check_matmul(w, v, what);
                wgt_release(w);
                wgt_release(v);
            }
        wgt_context_release(gpu);
    }
}

/* The rows kernel with more workgroups than one dispatch dimension holds: 16400 batch
 * elements of 4 workgroups each. */
TEST_BACKENDS(matmul_few_rows_fold_the_grid) {
    int64_t sa[3] = {16400, 1, 16}, sb[2] = {16, 256};
    check_shapes(ctx, WGT_F32, CONTIGUOUS, CONTIGUOUS, 3, sa, 2, sb, 1500);
}

/* Known values: small integers, exact in both types, so every path must give them exactly:
 * a row-major b, b stored transposed, and a row times b. */
TEST_BACKENDS(matmul_known_values) {
    static const float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {7, 8, 9, 10, 11, 12}, bt[6] = {7, 9, 11, 8, 10, 12};
    static const double want[4] = {58, 64, 139, 154}; /* [[1,2,3],[4,5,6]] @ [[7,8],[9,10],[11,12]] */
    int64_t sa[2] = {2, 3}, sb[2] = {3, 2}, sbt[2] = {2, 3};
    for (size_t d = 0; d < 2; d++) {
        wgt_tensor *fa = wgt_tensor_from_data(ctx, WGT_F32, 2, sa, a, sizeof a, WGT_USAGE_DEFAULT);
        wgt_tensor *fb = wgt_tensor_from_data(ctx, WGT_F32, 2, sb, b, sizeof b, WGT_USAGE_DEFAULT);
        wgt_tensor *fbt = wgt_tensor_from_data(ctx, WGT_F32, 2, sbt, bt, sizeof bt, WGT_USAGE_DEFAULT);
        wgt_tensor *ta = wgt_cast(fa, float_types[d]), *tb = wgt_cast(fb, float_types[d]), *tbt = wgt_cast(fbt, float_types[d]);
        wgt_tensor *view = wgt_transpose(tbt, 0, 1), *row = wgt_slice(ta, 0, 1, 2, 1);
        wgt_tensor *r[3] = {wgt_matmul(ta, tb), wgt_matmul(ta, view), wgt_matmul(row, tb)};
        for (int k = 0; k < 3; k++) {
            double *v = r[k] ? test_read_f64(r[k]) : NULL;
            int n = k == 2 ? 2 : 4, same = v != NULL;
            for (int i = 0; v && i < n; i++) same = same && v[i] == want[k == 2 ? 2 + i : i];
            CHECK(same, "%s case %d: %s", wgt_dtype_name(float_types[d]), k, v ? "wrong values" : wgt_last_error());
            free(v);
            wgt_release(r[k]);
        }
        wgt_tensor *all[] = {fa, fb, fbt, ta, tb, tbt, view, row};
        for (size_t k = 0; k < sizeof all / sizeof *all; k++) wgt_release(all[k]);
    }
}

/* f16 results beyond 65504 are infinities of the right sign on every path: the tiled kernel
 * writing words, the odd-N result written by the sum kernel, and a column (N = 1). */
TEST_BACKENDS(matmul_f16_overflow_is_infinity) {
    static const int64_t widths[3] = {2, 3, 1};
    int64_t sa[2] = {2, 3};
    wgt_tensor *a = wgt_full(ctx, WGT_F16, 2, sa, 200);
    for (int i = 0; i < 3; i++) {
        int64_t sb[2] = {3, widths[i]};
        wgt_tensor *b = wgt_full(ctx, WGT_F16, 2, sb, i == 1 ? -200 : 200); /* 3 * 200 * 200 = 120000 */
        wgt_tensor *r = wgt_matmul(a, b);
        double *v = r ? test_read_f64(r) : NULL;
        int ok = v != NULL;
        for (int64_t k = 0; v && k < 2 * widths[i]; k++) ok = ok && isinf(v[k]) && (v[k] > 0) == (i != 1);
        CHECK(ok, "[2, 3] @ [3, %lld]: %s", (long long)widths[i], v ? "not infinity" : wgt_last_error());
        free(v);
        wgt_release(r);
        wgt_release(b);
    }
    wgt_release(a);
}

TEST_BACKENDS(matmul_errors) {
    int64_t s34[2] = {3, 4}, s56[2] = {5, 6}, s45[2] = {4, 5}, s234[3] = {2, 3, 4}, s345[3] = {3, 4, 5};
    wgt_tensor *a = wgt_ones(ctx, WGT_F32, 2, s34), *b = wgt_ones(ctx, WGT_F32, 2, s56);
    wgt_tensor *h = wgt_ones(ctx, WGT_F16, 2, s45), *i = wgt_ones(ctx, WGT_I32, 2, s34), *j = wgt_ones(ctx, WGT_I32, 2, s45);
    wgt_tensor *ba = wgt_ones(ctx, WGT_F32, 3, s234), *bb = wgt_ones(ctx, WGT_F32, 3, s345);
    wgt_tensor *s = wgt_scalar(ctx, WGT_F32, 2);
    CHECK_ERROR(wgt_matmul(a, b) == NULL, WGT_ERR_SHAPE, "K = 4");
    CHECK_ERROR(wgt_matmul(a, b) == NULL, WGT_ERR_SHAPE, "K = 5");
    CHECK_ERROR(wgt_matmul(a, h) == NULL, WGT_ERR_DTYPE, "f16");
    CHECK_ERROR(wgt_matmul(i, h) == NULL, WGT_ERR_DTYPE, "i32"); /* an integer with a float */
    CHECK_ERROR(wgt_matmul(ba, bb) == NULL, WGT_ERR_SHAPE, "[2, 3, 4]");
    CHECK_ERROR(wgt_matmul(ba, bb) == NULL, WGT_ERR_SHAPE, "[3, 4, 5]");
    CHECK_ERROR(wgt_matmul(s, a) == NULL, WGT_ERR_SHAPE, "rank 0");
    CHECK_ERROR(wgt_matmul(a, s) == NULL, WGT_ERR_SHAPE, "rank 0");
    /* A NULL operand keeps the first error of a chain. */
    wgt_clear_error();
    CHECK(wgt_matmul(wgt_matmul(a, b), a) == NULL && test_contains(wgt_last_error(), "K = 5"), "message: %s",
          wgt_last_error());
    wgt_clear_error();
    /* Operands of two contexts. */
    wgt_context *other = test_new_context(WGT_BACKEND_CPU);
    wgt_tensor *o = other ? wgt_ones(other, WGT_F32, 2, s45) : NULL;
    if (o) CHECK_ERROR(wgt_matmul(a, o) == NULL, WGT_ERR_CONTEXT_MISMATCH, "contexts");
    wgt_release(o);
    wgt_context_release(other);
    wgt_tensor *all[] = {a, b, h, i, j, ba, bb, s};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) wgt_release(all[k]);
}

/* ---- linear --------------------------------------------------------------------------- */

/* wgt_linear(x, w, bias) against x @ w^T + bias in float64; bias may be NULL. The f16 bound
 * has two roundings: the matmul's result and the sum with the bias. */
static void check_linear(wgt_tensor *x, wgt_tensor *w, wgt_tensor *bias, const char *what) {
    CHECK(x && w, "%s: making the inputs: %s", what, wgt_last_error());
    if (!x || !w) return;
    wgt_dtype dt = wgt_tensor_dtype(x);
    int nx = wgt_tensor_ndim(x);
    const int64_t *sx = wgt_tensor_shape(x);
    int64_t in = sx[nx - 1], out = wgt_tensor_shape(w)[0], rows = wgt_tensor_numel(x) / (in ? in : 1);
    double *vx = test_read_f64(x), *vw = test_read_f64(w), *vb = bias ? test_read_f64(bias) : NULL;
    wgt_tensor *r = wgt_linear(x, w, bias);
    double *got = r ? test_read_f64(r) : NULL;
    CHECK(vx && vw && (!bias || vb) && got, "%s: %s", what, wgt_last_error());
    int bad = 0;
    if (r) {
        bad = wgt_tensor_ndim(r) != nx || wgt_tensor_shape(r)[nx - 1] != out || wgt_tensor_dtype(r) != dt;
        for (int d = 0; d < nx - 1 && !bad; d++) bad = wgt_tensor_shape(r)[d] != sx[d];
        CHECK(!bad, "%s: result shape or type", what);
    }
    for (int64_t i = 0; !bad && vx && vw && got && (!bias || vb) && i < rows; i++)
        for (int64_t o = 0; o < out; o++) {
            double mm = 0, s = 0, bv = bias ? vb[o] : 0;
            for (int64_t k = 0; k < in; k++) {
                mm += vx[i * in + k] * vw[o * in + k];
                s += fabs(vx[i * in + k] * vw[o * in + k]);
            }
            double want = mm + bv, acc = (double)(in + 2) * U32 * s;
            double tol = dt == WGT_F32 ? acc + 2 * U32 * fabs(want) + 1e-30
                                       : U16 * (fabs(mm) + fabs(want) + 2 * acc) + 2 * acc + 2 * U32;
            double g = got[i * out + o];
            if (!(fabs(g - want) <= tol) && bad++ < 3)
                CHECK(0, "%s: row %lld output %lld is %.9g, want %.9g (tolerance %.3g)", what, (long long)i, (long long)o, g,
                      want, tol);
        }
    free(vx);
    free(vw);
    free(vb);
    free(got);
    wgt_release(r);
}

TEST_BACKENDS(linear_bias_ranks_and_views) {
    for (size_t d = 0; d < 2; d++) {
        wgt_dtype dt = float_types[d];
        uint64_t seed = 800 + 10 * d;
        int64_t x2[2] = {5, 7}, w2[2] = {3, 7}, b1[1] = {3}, x3[3] = {2, 4, 13}, w3[2] = {31, 13}, x1[1] = {13};
        int64_t wn[2] = {6, 13}, bn[1] = {6}, x4[2] = {70, 129}, w4[2] = {65, 129}, b4[1] = {65};
        wgt_tensor *x = uniform(ctx, dt, 2, x2, seed), *w = uniform(ctx, dt, 2, w2, seed + 1);
        wgt_tensor *b = uniform(ctx, dt, 1, b1, seed + 2);
        check_linear(x, w, b, "[5, 7] x, bias");
        check_linear(x, w, NULL, "[5, 7] x, no bias");
        wgt_release(x), wgt_release(w), wgt_release(b);
        x = uniform(ctx, dt, 3, x3, seed + 3), w = uniform(ctx, dt, 2, w3, seed + 4);
        check_linear(x, w, NULL, "[2, 4, 13] x, no bias");
        wgt_release(x), wgt_release(w);
        /* 1-D x (one token), w a sliced view (every other row), bias broadcast from [1]. */
        x = uniform(ctx, dt, 1, x1, seed + 5);
        w = make_view(ctx, dt, SLICED, 2, wn, seed + 6);
        b = make_view(ctx, dt, BROADCAST, 1, bn, seed + 7);
        check_linear(x, w, b, "[13] x, sliced w, broadcast bias");
        wgt_release(x), wgt_release(w), wgt_release(b);
        /* Several tiles, w transposed in memory (so w^T is row-major). */
        x = uniform(ctx, dt, 2, x4, seed + 8), w = make_view(ctx, dt, TRANSPOSED, 2, w4, seed + 9);
        b = uniform(ctx, dt, 1, b4, seed + 10);
        check_linear(x, w, b, "[70, 129] x, transposed w");
        wgt_release(x), wgt_release(w), wgt_release(b);
    }
}

TEST_BACKENDS(linear_errors) {
    int64_t x2[2] = {5, 7}, w2[2] = {3, 7}, w3[3] = {1, 3, 7}, w8[2] = {3, 8}, b3[1] = {3}, b4[1] = {4}, b13[2] = {1, 3};
    wgt_tensor *x = wgt_ones(ctx, WGT_F32, 2, x2), *w = wgt_ones(ctx, WGT_F32, 2, w2);
    wgt_tensor *wbad = wgt_ones(ctx, WGT_F32, 3, w3), *wk = wgt_ones(ctx, WGT_F32, 2, w8), *w1 = wgt_ones(ctx, WGT_F32, 1, b3);
    wgt_tensor *b = wgt_ones(ctx, WGT_F32, 1, b3), *bl = wgt_ones(ctx, WGT_F32, 1, b4), *b2 = wgt_ones(ctx, WGT_F32, 2, b13);
    wgt_tensor *bh = wgt_ones(ctx, WGT_F16, 1, b3), *wh = wgt_ones(ctx, WGT_F16, 2, w2), *s = wgt_scalar(ctx, WGT_F32, 1);
    CHECK_ERROR(wgt_linear(x, wbad, b) == NULL, WGT_ERR_SHAPE, "[1, 3, 7]");
    CHECK_ERROR(wgt_linear(x, w1, NULL) == NULL, WGT_ERR_SHAPE, "2-D");
    CHECK_ERROR(wgt_linear(x, wk, NULL) == NULL, WGT_ERR_SHAPE, "[5, 7]");
    CHECK_ERROR(wgt_linear(x, wk, NULL) == NULL, WGT_ERR_SHAPE, "[3, 8]");
    CHECK_ERROR(wgt_linear(x, w, bl) == NULL, WGT_ERR_SHAPE, "bias [4]");
    CHECK_ERROR(wgt_linear(x, w, b2) == NULL, WGT_ERR_SHAPE, "bias [1, 3]");
    CHECK_ERROR(wgt_linear(x, w, bh) == NULL, WGT_ERR_DTYPE, "bias is f16");
    CHECK_ERROR(wgt_linear(x, wh, NULL) == NULL, WGT_ERR_DTYPE, "w is f16");
    CHECK_ERROR(wgt_linear(s, w, NULL) == NULL, WGT_ERR_SHAPE, "x []");
    CHECK_ERROR(wgt_linear(NULL, w, NULL) == NULL, WGT_ERR_INVALID_ARGUMENT, "x is NULL");
    wgt_tensor *all[] = {x, w, wbad, wk, w1, b, bl, b2, bh, wh, s};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) wgt_release(all[k]);
}

/* ---- the two backends on the same inputs ------------------------------------------------ */

/* The same seeded inputs on both backends (wgt_rand_uniform gives the same values on each):
 * each result is within the reference bound of the exact value, so they are within twice
 * the bound of each other. Covers the tiled and dot kernels, views and a batch. */
TEST(matmul_webgpu_matches_cpu) {
    wgt_context *cpu, *gpu;
    if (!test_backend_pair(&cpu, &gpu)) return;
    static const struct {
        layout la, lb;
        int64_t sa[3], sb[3];
    } cases[] = {
        {CONTIGUOUS, CONTIGUOUS, {2, 67, 45}, {2, 45, 94}},
        {TRANSPOSED, SLICED, {2, 31, 129}, {2, 129, 66}},
        {SLICED, TRANSPOSED, {3, 1, 200}, {3, 200, 77}},
        {BROADCAST, CONTIGUOUS, {2, 65, 33}, {2, 33, 1}},
    };
    for (size_t d = 0; d < 2; d++)
        for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
            wgt_dtype dt = float_types[d];
            wgt_context *cs[2] = {cpu, gpu};
            wgt_tensor *r[2], *in[2][2];
            for (int k = 0; k < 2; k++) {
                in[k][0] = make_view(cs[k], dt, cases[c].la, 3, cases[c].sa, 900 + c);
                in[k][1] = make_view(cs[k], dt, cases[c].lb, 3, cases[c].sb, 950 + c);
                r[k] = wgt_matmul(in[k][0], in[k][1]);
            }
            double *x = test_read_f64(in[0][0]), *y = test_read_f64(in[0][1]), *gc = test_read_f64(r[0]),
                   *gg = test_read_f64(r[1]);
            reference ref = {0};
            int ok = x && y && gc && gg && reference_matmul(x, 3, cases[c].sa, y, 3, cases[c].sb, &ref) &&
                     ref.count == wgt_tensor_numel(r[1]);
            CHECK(ok, "case %zu %s: %s", c, wgt_dtype_name(dt), wgt_last_error());
            int bad = 0;
            for (int64_t i = 0; ok && i < ref.count; i++) {
                double tol = 2 * tolerance(dt, cases[c].sa[2], ref.value[i], ref.abs[i]);
                if (!(fabs(gg[i] - gc[i]) <= tol) && bad++ < 3)
                    CHECK(0, "case %zu %s element %lld: webgpu %.9g, cpu %.9g", c, wgt_dtype_name(dt), (long long)i, gg[i],
                          gc[i]);
            }
            reference_free(&ref);
            free(x), free(y), free(gc), free(gg);
            for (int k = 0; k < 2; k++) wgt_release(r[k]), wgt_release(in[k][0]), wgt_release(in[k][1]);
        }
    wgt_context_release(gpu);
    wgt_context_release(cpu);
}

/* A device with only WebGPU's default compute limits (16 KB of workgroup memory, 256
 * invocations along x): the host keeps every variant within them, so K split into ranges
 * runs unsliced through the sum kernel, and 128 x 128 tiles give up their padding. The
 * context's recorded limits are lowered; the device has more, so what the host picks for the
 * lower ones runs on it too. */
TEST(matmul_within_the_default_workgroup_limits) {
    wgt_context *gpu = test_webgpu_context();
    if (!gpu) return;
    WGPULimits *l = &((wgt_webgpu *)wgt_context_record(gpu)->backend)->limits.limits;
    l->maxComputeWorkgroupStorageSize = 16384;
    l->maxComputeInvocationsPerWorkgroup = 256;
    l->maxComputeWorkgroupSizeX = 256;
    int64_t sa[2] = {64, 4096}, sb[2] = {4096, 64}, wa[2] = {200, 1100}, wb[2] = {1100, 130};
    int64_t ta[3] = {50, 132, 36}, tb[3] = {50, 36, 132};
    for (size_t d = 0; d < 2; d++) check_shapes(gpu, float_types[d], CONTIGUOUS, CONTIGUOUS, 2, sa, 2, sb, 1500 + d);
    check_shapes(gpu, WGT_F32, CONTIGUOUS, TRANSPOSED, 2, wa, 2, wb, 1510);
    check_shapes(gpu, WGT_F32, CONTIGUOUS, CONTIGUOUS, 3, ta, 3, tb, 1520);
    check_shapes(gpu, WGT_F16, TRANSPOSED, TRANSPOSED, 3, ta, 3, tb, 1530);
    wgt_context_release(gpu);
}
