/*
 * Shape ops: the views (permute, squeeze, unsqueeze, expand, flip, split) and the new
 * tensors (concat, stack, pad) on every dtype, over contiguous, transposed, stepped,
 * negative-step and broadcast inputs of odd and prime shapes, sizes 0 and 1. These ops only
 * move data, so inputs hold random bits (NaN payloads and signed zeros included) and every
 * output element is compared bit for bit with the source element an index computation
 * says it comes from. f16 concats put boxes at odd element positions, where two inputs
 * share a packed word on the GPU. Then the errors, the WebGPU backend against the CPU one,
 * and launches beyond one dispatch dimension. Outputs are poisoned in the runner's second pass (WGT_POISON=1).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

static const wgt_dtype dtypes[] = {WGT_F32, WGT_F16, WGT_I32, WGT_U32};
#define NDT 4

typedef enum { CONTIG, TRANSPOSED, STEPPED, NEG_STEP, BROADCAST, NLAYOUTS } layout;
static const char *const layout_names[] = {"contiguous", "transposed", "stepped", "negative-step", "broadcast"};

static uint64_t mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static int64_t numel_of(int ndim, const int64_t *shape) {
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    return n;
}

static void unravel(int64_t i, int ndim, const int64_t *shape, int64_t *c) {
    for (int d = ndim - 1; d >= 0; d--) {
        c[d] = i % shape[d];
        i /= shape[d];
    }
}

static int64_t ravel(const int64_t *c, int ndim, const int64_t *shape) {
    int64_t i = 0;
    for (int d = 0; d < ndim; d++) i = i * shape[d] + c[d];
    return i;
}

/* An input: the tensor (a view in some layout) and its elements' bytes, row-major. */
typedef struct {
    wgt_tensor *t;
    unsigned char *raw;
    int ndim;
    int64_t shape[WGT_MAX_DIMS];
} input;

static void input_free(input *in) {
    wgt_release(in->t);
    free(in->raw);
    memset(in, 0, sizeof *in);
}

/* Random bits of the given dtype, as a tensor of that shape. */
static wgt_tensor *random_bits(wgt_context *ctx, wgt_dtype dt, int ndim, const int64_t *shape, uint64_t seed) {
    size_t es = wgt_dtype_size(dt), n = (size_t)numel_of(ndim, shape);
    unsigned char *b = malloc(n * es + 1);
    for (size_t i = 0; b && i < n * es; i++) b[i] = (unsigned char)mix(seed * 1000003u + i);
    wgt_tensor *t = b ? wgt_tensor_from_data(ctx, dt, ndim, shape, b, n * es, WGT_USAGE_DEFAULT) : NULL;
    free(b);
    return t;
}

/* A view of the given shape in layout l over a base holding random bits; raw receives its
 * elements as the core reads them (an independent host gather). */
static int make_input(input *in, wgt_context *ctx, wgt_dtype dt, layout l, int ndim, const int64_t *shape,
                      uint64_t seed) {
    memset(in, 0, sizeof *in);
    int64_t bs[WGT_MAX_DIMS];
    if (ndim) memcpy(bs, shape, sizeof(int64_t) * (size_t)ndim);
    int last = ndim - 1;
    wgt_tensor *base = NULL, *v = NULL;
    if (ndim == 0) l = CONTIG;
    if (l == TRANSPOSED && ndim < 2) l = NEG_STEP;
    switch (l) {
    case CONTIG: v = random_bits(ctx, dt, ndim, shape, seed); break;
    case TRANSPOSED: /* the last two dimensions swapped in storage */
        bs[last] = shape[last - 1], bs[last - 1] = shape[last];
        base = random_bits(ctx, dt, ndim, bs, seed);
        v = wgt_transpose(base, -1, -2);
        break;
    case STEPPED: { /* every other index of dimension 0 from 1, and an offset in the last */
        bs[0] = 2 * shape[0] + 1;
        if (ndim > 1) bs[last] = shape[last] + 3;
        base = random_bits(ctx, dt, ndim, bs, seed);
        wgt_tensor *s = wgt_slice(base, 0, 1, bs[0], 2);
        v = ndim > 1 ? wgt_slice(s, last, 2, 2 + shape[last], 1) : wgt_retain(s);
        wgt_release(s);
        break;
    }
    case NEG_STEP: /* indices 2n, 2n-2, ..., 2 of the last dimension */
        bs[last] = 2 * shape[last] + 1;
        base = random_bits(ctx, dt, ndim, bs, seed);
        v = wgt_slice(base, last, 2 * shape[last], 0, -2);
        break;
    default: /* BROADCAST: dimension 0 repeated from length 1 */
        bs[0] = 1;
        base = random_bits(ctx, dt, ndim, bs, seed);
        v = wgt_broadcast_to(base, ndim, shape);
        break;
    }
    wgt_release(base);
    size_t nbytes = (size_t)numel_of(ndim, shape) * wgt_dtype_size(dt);
    in->raw = malloc(nbytes + 1);
    in->t = v;
    in->ndim = ndim;
    if (ndim) memcpy(in->shape, shape, sizeof(int64_t) * (size_t)ndim);
    if (!v || !in->raw || wgt_tensor_read(v, in->raw, nbytes) != WGT_OK) {
        CHECK(0, "making a %s %s input: %s", layout_names[l], wgt_dtype_name(dt), wgt_last_error());
        input_free(in);
        return 0;
    }
    return 1;
}

/* Where output element oc comes from: 1 and (k, sc) for element sc of input k, 0 for the
 * pad value. */
typedef int (*map_fn)(const void *arg, const int64_t *oc, int *k, int64_t *sc);

/* Compares every element of out (which must have shape oshape) with its source, bit for
 * bit. Releases out. Returns the number of mismatches. */
static int check_out(const char *label, wgt_tensor *out, int ondim, const int64_t *oshape, const input *srcs,
                     map_fn fn, const void *arg, const unsigned char *value) {
    CHECK(out != NULL, "%s: %s", label, wgt_last_error());
    if (!out) return 1;
    int shape_ok = wgt_tensor_ndim(out) == ondim;
    for (int d = 0; shape_ok && d < ondim; d++) shape_ok = wgt_tensor_shape(out)[d] == oshape[d];
    CHECK(shape_ok, "%s: result shape", label);
    int bad = !shape_ok;
    size_t es = wgt_dtype_size(wgt_tensor_dtype(out));
    int64_t n = numel_of(ondim, oshape);
    unsigned char *got = shape_ok ? malloc((size_t)n * es + 1) : NULL;
    if (got && wgt_tensor_read(out, got, (size_t)n * es) != WGT_OK) {
        CHECK(0, "%s: read: %s", label, wgt_last_error());
        bad++;
    } else {
        for (int64_t i = 0; got && i < n; i++) {
            int64_t oc[WGT_MAX_DIMS] = {0}, sc[WGT_MAX_DIMS] = {0};
            int k = 0;
            unravel(i, ondim, oshape, oc);
            const unsigned char *want = value;
            if (fn(arg, oc, &k, sc)) want = srcs[k].raw + (size_t)ravel(sc, srcs[k].ndim, srcs[k].shape) * es;
            if (memcmp(got + (size_t)i * es, want, es) && bad++ < 3) {
                uint32_t g = 0, w = 0;
                memcpy(&g, got + (size_t)i * es, es);
                memcpy(&w, want, es);
                CHECK(0, "%s: element %lld: bits 0x%x, want 0x%x (from input %d)", label, (long long)i, g, w, k);
            }
        }
    }
    free(got);
    wgt_release(out);
    return bad;
}

/* ---- views ---------------------------------------------------------------------------- */

typedef struct {
    int op; /* 0 permute, 1 squeeze, 2 unsqueeze, 3 expand, 4 flip */
    int ndim_in;
    int axes[WGT_MAX_DIMS];
    int naxes;
    const int64_t *in_shape;
} view_arg;

static int map_view(const void *p, const int64_t *oc, int *k, int64_t *sc) {
    const view_arg *a = p;
    *k = 0;
    int n = a->ndim_in;
    switch (a->op) {
    case 0:
        for (int i = 0; i < n; i++) sc[(a->axes[i] + n) % n] = oc[i];
        break;
    case 1: /* squeezed axis a->axes[0] */
        for (int i = 0, j = 0; i < n; i++) sc[i] = i == a->axes[0] ? 0 : oc[j++];
        break;
    case 2: /* inserted axis a->axes[0] */
        for (int i = 0, j = 0; i <= n; i++)
            if (i != a->axes[0]) sc[j++] = oc[i];
        break;
    case 3: { /* expanded to naxes dims */
        int lead = a->naxes - n;
        for (int i = 0; i < n; i++) sc[i] = a->in_shape[i] == 1 ? 0 : oc[lead + i];
        break;
    }
    default: {
        int flip[WGT_MAX_DIMS] = {0};
        for (int i = 0; i < a->naxes; i++) flip[(a->axes[i] + n) % n] = 1;
        for (int i = 0; i < n; i++) sc[i] = flip[i] || a->naxes == 0 ? a->in_shape[i] - 1 - oc[i] : oc[i];
    }
    }
    return 1;
}

TEST_BACKENDS(shape_permute_squeeze_unsqueeze_views) {
    static const int64_t s[4] = {3, 4, 1, 5};
    uint64_t seed = 1;
    char label[160];
    for (int d = 0; d < NDT; d++)
        for (int l = 0; l < NLAYOUTS; l++) {
            input in;
            if (!make_input(&in, ctx, dtypes[d], (layout)l, 4, s, seed++)) continue;
            snprintf(label, sizeof label, "%s %s", wgt_dtype_name(dtypes[d]), layout_names[l]);
            static const int perms[3][4] = {{2, -1, 0, 1}, {3, 2, 1, 0}, {0, 1, 2, 3}};
            for (int p = 0; p < 3; p++) {
                view_arg a = {0, 4, {perms[p][0], perms[p][1], perms[p][2], perms[p][3]}, 4, s};
                int64_t os[4];
                for (int i = 0; i < 4; i++) os[i] = s[(perms[p][i] + 4) % 4];
                check_out(label, wgt_permute(in.t, perms[p]), 4, os, &in, map_view, &a, NULL);
            }
            view_arg sq = {1, 4, {2}, 1, s};
            check_out(label, wgt_squeeze(in.t, -2), 3, (int64_t[]){3, 4, 5}, &in, map_view, &sq, NULL);
            static const int ins[5] = {0, 2, 4, -1, -5};
            for (int i = 0; i < 5; i++) {
                int ax = (ins[i] + 5) % 5;
                view_arg un = {2, 4, {ax}, 1, s};
                int64_t os[5];
                for (int k = 0, j = 0; k < 5; k++) os[k] = k == ax ? 1 : s[j++];
                wgt_tensor *u = wgt_unsqueeze(in.t, ins[i]);
                /* Contiguity is unchanged by a length-1 dimension. */
                CHECK(!u || wgt_tensor_is_contiguous(u) == wgt_tensor_is_contiguous(in.t), "%s: unsqueeze contiguity",
                      label);
                check_out(label, u, 5, os, &in, map_view, &un, NULL);
            }
            input_free(&in);
        }
}

TEST_BACKENDS(shape_expand_and_flip_views) {
    uint64_t seed = 100;
    char label[160];
    for (int d = 0; d < NDT; d++)
        for (int l = 0; l < NLAYOUTS; l++) {
            static const int64_t s[3] = {7, 1, 5};
            input in;
            if (!make_input(&in, ctx, dtypes[d], (layout)l, 3, s, seed++)) continue;
            snprintf(label, sizeof label, "%s %s expand", wgt_dtype_name(dtypes[d]), layout_names[l]);
            view_arg e = {3, 3, {0}, 4, s};
            check_out(label, wgt_expand(in.t, 4, (int64_t[]){2, -1, 3, -1}), 4, (int64_t[]){2, 7, 3, 5}, &in, map_view, &e,
                      NULL);
            view_arg same = {3, 3, {0}, 3, s};
            check_out(label, wgt_expand(in.t, 3, (int64_t[]){7, 1, 5}), 3, s, &in, map_view, &same, NULL);
            view_arg zero = {3, 3, {0}, 3, s}; /* a length-1 dimension expanded to 0 */
            check_out(label, wgt_expand(in.t, 3, (int64_t[]){-1, 0, -1}), 3, (int64_t[]){7, 0, 5}, &in, map_view, &zero,
                      NULL);
            snprintf(label, sizeof label, "%s %s flip", wgt_dtype_name(dtypes[d]), layout_names[l]);
            static const int sets[4][3] = {{0, 2}, {-1}, {1, -3, 2}, {0}};
            static const int counts[4] = {2, 1, 3, 0}; /* 0: every axis */
            for (int k = 0; k < 4; k++) {
                view_arg f = {4, 3, {sets[k][0], sets[k][1], sets[k][2]}, counts[k], s};
                check_out(label, wgt_flip(in.t, counts[k], sets[k]), 3, s, &in, map_view, &f, NULL);
            }
            /* Flipping twice is the identity; a flip of a flip keeps its offset in range. */
            wgt_tensor *f1 = wgt_flip(in.t, 1, (int[]){0}), *f2 = wgt_flip(f1, 1, (int[]){-3});
            view_arg id = {0, 3, {0, 1, 2}, 3, s};
            check_out(label, f2, 3, s, &in, map_view, &id, NULL);
            wgt_release(f1);
            input_free(&in);
        }
}

typedef struct {
    int axis;
    int64_t pos;
} shift_arg;

static int map_shift(const void *p, const int64_t *oc, int *k, int64_t *sc) {
    const shift_arg *a = p;
    *k = 0;
    for (int d = 0; d < WGT_MAX_DIMS; d++) sc[d] = oc[d] + (d == a->axis ? a->pos : 0);
    return 1;
}

TEST_BACKENDS(shape_split_pieces_including_empty) {
    static const int64_t s[3] = {3, 7, 4};
    static const int64_t sizes[5] = {0, 2, 0, 4, 1};
    uint64_t seed = 200;
    char label[160];
    for (int d = 0; d < NDT; d++)
        for (int l = 0; l < NLAYOUTS; l++)
            for (int axis = 1; axis >= -2; axis -= 3) { /* axis 1 and its negative form */
                input in;
                if (!make_input(&in, ctx, dtypes[d], (layout)l, 3, s, seed++)) continue;
                wgt_tensor *out[5] = {0};
                CHECK(wgt_split(in.t, axis, 5, sizes, out) == WGT_OK, "%s", wgt_last_error());
                int64_t pos = 0;
                for (int k = 0; k < 5; k++) {
                    snprintf(label, sizeof label, "%s %s split axis %d piece %d", wgt_dtype_name(dtypes[d]), layout_names[l],
                             axis, k);
                    shift_arg a = {1, pos};
                    check_out(label, out[k], 3, (int64_t[]){3, sizes[k], 4}, &in, map_shift, &a, NULL);
                    pos += sizes[k];
                }
                /* One piece: the whole tensor. */
                wgt_tensor *whole = NULL;
                CHECK(wgt_split(in.t, 0, 1, (int64_t[]){3}, &whole) == WGT_OK, "%s", wgt_last_error());
                shift_arg none = {0, 0};
                check_out("split into one piece", whole, 3, s, &in, map_shift, &none, NULL);
                input_free(&in);
            }
}

/* ---- concat and stack ------------------------------------------------------------------ */

typedef struct {
    int axis, count, stacking;
    int64_t pos[8], len[8];
} concat_arg;

static int map_concat(const void *p, const int64_t *oc, int *k, int64_t *sc) {
    const concat_arg *a = p;
    int nd = WGT_MAX_DIMS;
    if (a->stacking) {
        *k = (int)oc[a->axis];
        for (int i = 0, j = 0; i < nd; i++)
            if (i != a->axis) sc[j++] = oc[i];
        return 1;
    }
    for (int i = 0; i < a->count; i++)
        if (oc[a->axis] >= a->pos[i] && oc[a->axis] < a->pos[i] + a->len[i]) *k = i;
    for (int i = 0; i < nd; i++) sc[i] = oc[i] - (i == a->axis ? a->pos[*k] : 0);
    return 1;
}

/* count inputs of base shape s (rank 3) whose lengths along axis vary; each input in its
 * own layout. Returns mismatches. */
static int concat_case(wgt_context *ctx, wgt_dtype dt, int count, int axis, int stacking, uint64_t seed) {
    static const int64_t s[3] = {3, 5, 7};
    static const int64_t lens[5] = {1, 2, 3, 1, 4}; /* odd boxes: f16 words shared by two inputs */
    int ax = stacking ? (axis + 4) % 4 : (axis + 3) % 3;
    input in[5];
    wgt_tensor *ts[5];
    concat_arg a = {ax, count, stacking, {0}, {0}};
    int64_t pos = 0, os[4];
    int ok = 1;
    for (int k = 0; k < count; k++) {
        int64_t sh[3] = {s[0], s[1], s[2]};
        if (!stacking) sh[ax] = lens[(k + axis + 5) % 5];
        a.pos[k] = pos;
        a.len[k] = stacking ? 1 : sh[ax]; /* stacking: ax indexes the output's dimensions */
        pos += a.len[k];
        ok &= make_input(&in[k], ctx, dt, (layout)((seed + (uint64_t)k) % NLAYOUTS), 3, sh, seed + (uint64_t)k);
        ts[k] = in[k].t;
    }
    int bad = 1;
    if (ok) {
        char label[160];
        snprintf(label, sizeof label, "%s %s of %d along %d", wgt_dtype_name(dt), stacking ? "stack" : "concat", count,
                 axis);
        if (stacking) {
            for (int i = 0, j = 0; i < 4; i++) os[i] = i == ax ? count : s[j++];
            bad = check_out(label, wgt_stack(ts, count, axis), 4, os, in, map_concat, &a, NULL);
        } else {
            memcpy(os, s, sizeof s);
            os[ax] = pos;
            bad = check_out(label, wgt_concat(ts, count, axis), 3, os, in, map_concat, &a, NULL);
        }
    }
    for (int k = 0; k < count; k++) input_free(&in[k]);
    return bad;
}

TEST_BACKENDS(shape_concat_every_axis_count_and_layout) {
    static const int counts[3] = {1, 2, 5};
    static const int axes[5] = {0, 1, 2, -1, -3};
    uint64_t seed = 300;
    for (int d = 0; d < NDT; d++)
        for (int c = 0; c < 3; c++)
            for (int x = 0; x < 5; x++) concat_case(ctx, dtypes[d], counts[c], axes[x], 0, seed += 7);
}

TEST_BACKENDS(shape_stack_every_axis_count_and_layout) {
    static const int counts[3] = {1, 2, 5};
    static const int axes[6] = {0, 1, 2, 3, -1, -4};
    uint64_t seed = 400;
    for (int d = 0; d < NDT; d++)
        for (int c = 0; c < 3; c++)
            for (int x = 0; x < 6; x++) concat_case(ctx, dtypes[d], counts[c], axes[x], 1, seed += 7);
}

/* f16 rows of odd length at odd offsets: along the last axis every box row starts and ends
 * inside a shared word; along axis 0 each box row straddles words with the next row. */
TEST_BACKENDS(shape_concat_f16_odd_positions) {
    static const int64_t widths[4][3] = {{1, 1, 1}, {3, 2, 5}, {1, 4, 2}, {7, 1, 3}};
    uint64_t seed = 500;
    for (int w = 0; w < 4; w++)
        for (int axis = 0; axis < 2; axis++) {
            input in[3];
            wgt_tensor *ts[3];
            concat_arg a = {axis, 3, 0, {0}, {0}};
            int64_t pos = 0, os[2] = {5, 3};
            int ok = 1;
            for (int k = 0; k < 3; k++) {
                int64_t sh[2] = {axis == 0 ? widths[w][k] : 5, axis == 1 ? widths[w][k] : 3};
                a.pos[k] = pos;
                a.len[k] = sh[axis];
                pos += sh[axis];
                ok &= make_input(&in[k], ctx, WGT_F16, (layout)((w + k) % NLAYOUTS), 2, sh, seed++);
                ts[k] = in[k].t;
            }
            os[axis] = pos;
            if (ok) check_out("f16 odd boxes", wgt_concat(ts, 3, axis), 2, os, in, map_concat, &a, NULL);
            for (int k = 0; k < 3; k++) input_free(&in[k]);
        }
}

/* ---- pad ------------------------------------------------------------------------------- */

typedef struct {
    int ndim;
    const int64_t *before, *in_shape;
} pad_arg;

static int map_pad(const void *p, const int64_t *oc, int *k, int64_t *sc) {
    const pad_arg *a = p;
    *k = 0;
    for (int d = 0; d < a->ndim; d++) {
        sc[d] = oc[d] - a->before[d];
        if (sc[d] < 0 || sc[d] >= a->in_shape[d]) return 0;
    }
    return 1;
}

/* The bytes wgt_full stores for value. */
static void full_bits(wgt_context *ctx, wgt_dtype dt, double value, unsigned char *out) {
    wgt_tensor *f = wgt_full(ctx, dt, 0, NULL, value);
    CHECK(f && wgt_tensor_read(f, out, wgt_dtype_size(dt)) == WGT_OK, "%s", wgt_last_error());
    wgt_release(f);
}

static void pad_case(wgt_context *ctx, const char *what, const input *in, const int64_t *before, const int64_t *after,
                     double value) {
    unsigned char vb[4] = {0};
    wgt_dtype dt = wgt_tensor_dtype(in->t);
    full_bits(ctx, dt, value, vb);
    int64_t os[WGT_MAX_DIMS];
    for (int d = 0; d < in->ndim; d++) os[d] = before[d] + in->shape[d] + after[d];
    pad_arg a = {in->ndim, before, in->shape};
    char label[160];
    snprintf(label, sizeof label, "%s pad %s value %g", wgt_dtype_name(dt), what, value);
    check_out(label, wgt_pad(in->t, before, after, value), in->ndim, os, in, map_pad, &a, vb);
}

TEST_BACKENDS(shape_pad_widths_layouts_and_values) {
    static const int64_t s[3] = {3, 5, 2};
    static const int64_t widths[4][2][3] = {
        {{0, 0, 0}, {0, 0, 0}}, {{1, 2, 3}, {2, 1, 1}}, {{0, 3, 0}, {0, 0, 1}}, {{2, 0, 1}, {0, 4, 0}}};
    /* Per type (as dtypes[]): a fraction or the top of the range, a negative, NaN or zero, the
     * type's far end (values a type cannot hold are errors: test_scalars.c). */
    static const double values[NDT][4] = {{2.75, -3, NAN, 1e12},
                                          {2.75, -3, NAN, -65504},
                                          {2147483647.0, -3, 0, -2147483648.0},
                                          {4294967295.0, 3, 0, 2147483648.0}};
    uint64_t seed = 600;
    for (int d = 0; d < NDT; d++)
        for (int l = 0; l < NLAYOUTS; l++) {
            input in;
            if (!make_input(&in, ctx, dtypes[d], (layout)l, 3, s, seed++)) continue;
            for (int w = 0; w < 4; w++)
                pad_case(ctx, layout_names[l], &in, widths[w][0], widths[w][1], values[d][(w + l) % 4]);
            input_free(&in);
        }
    /* Odd and prime lengths in 1-D: f16 outputs end in half a word. */
    for (int d = 0; d < NDT; d++) {
        input in;
        if (!make_input(&in, ctx, dtypes[d], NEG_STEP, 1, (int64_t[]){13}, seed++)) continue;
        double v = dtypes[d] == WGT_U32 ? 1 : dtypes[d] == WGT_I32 ? -1 : -1.5;
        pad_case(ctx, "1-D", &in, (int64_t[]){3}, (int64_t[]){0}, v);
        pad_case(ctx, "1-D", &in, (int64_t[]){0}, (int64_t[]){4}, 7);
        input_free(&in);
    }
}

/* ---- sizes 0 and 1 ---------------------------------------------------------------------- */

TEST_BACKENDS(shape_sizes_zero_and_one) {
    uint64_t seed = 700;
    for (int d = 0; d < NDT; d++) {
        wgt_dtype dt = dtypes[d];
        input e, one, r0;
        int ok = make_input(&e, ctx, dt, CONTIG, 2, (int64_t[]){0, 3}, seed++);
        ok &= make_input(&one, ctx, dt, STEPPED, 2, (int64_t[]){1, 1}, seed++);
        ok &= make_input(&r0, ctx, dt, CONTIG, 0, NULL, seed++);
        if (!ok) {
            input_free(&e), input_free(&one), input_free(&r0);
            continue;
        }
        /* An empty input in a concat contributes nothing; an all-empty concat is empty. */
        input mid;
        make_input(&mid, ctx, dt, TRANSPOSED, 2, (int64_t[]){2, 3}, seed++);
        input srcs[3] = {e, mid, e};
        wgt_tensor *ts[3] = {e.t, mid.t, e.t};
        concat_arg a = {0, 3, 0, {0, 0, 2}, {0, 2, 0}};
        check_out("concat with empty inputs", wgt_concat(ts, 3, 0), 2, (int64_t[]){2, 3}, srcs, map_concat, &a, NULL);
        wgt_tensor *ee[2] = {e.t, e.t};
        wgt_tensor *c0 = wgt_concat(ee, 2, 1);
        CHECK(c0 && wgt_tensor_numel(c0) == 0 && wgt_tensor_shape(c0)[1] == 6, "empty concat: %s", wgt_last_error());
        wgt_release(c0);
        /* Stacking rank-0 tensors gives a vector; a rank-0 pad is a copy. */
        input rs[2] = {r0, r0};
        wgt_tensor *rt[2] = {r0.t, r0.t};
        concat_arg st = {0, 2, 1, {0}, {0}};
        check_out("stack of rank 0", wgt_stack(rt, 2, -1), 1, (int64_t[]){2}, rs, map_concat, &st, NULL);
        pad_arg p0 = {0, NULL, NULL};
        check_out("rank-0 pad", wgt_pad(r0.t, NULL, NULL, 1), 0, NULL, &r0, map_pad, &p0, NULL);
        /* An empty input padded is all value; a [1, 1] input padded on every side. */
        unsigned char vb[4];
        full_bits(ctx, dt, 5, vb);
        int64_t zb[2] = {1, 0}, za[2] = {1, 2};
        pad_arg pe = {2, zb, e.shape};
        check_out("pad of empty", wgt_pad(e.t, zb, za, 5), 2, (int64_t[]){2, 5}, &e, map_pad, &pe, vb);
        pad_case(ctx, "size 1", &one, (int64_t[]){1, 2}, (int64_t[]){3, 1}, 5);
        /* Views of size 1 and 0: squeeze to rank 0, flip and permute of empty. */
        view_arg sq = {1, 2, {0}, 1, one.shape};
        wgt_tensor *s1 = wgt_squeeze(one.t, 0), *s0 = wgt_squeeze(s1, 0);
        check_out("squeeze to rank 0", s0, 0, NULL, &one, map_shift, &(shift_arg){0, 0}, NULL);
        check_out("squeeze size 1", s1, 1, (int64_t[]){1}, &one, map_view, &sq, NULL);
        wgt_tensor *fe = wgt_flip(e.t, 2, (int[]){0, 1}), *pe2 = wgt_permute(e.t, (int[]){1, 0});
        CHECK(fe && wgt_tensor_numel(fe) == 0 && pe2 && wgt_tensor_shape(pe2)[0] == 3, "empty views");
        wgt_release(fe), wgt_release(pe2);
        wgt_tensor *u0 = wgt_unsqueeze(r0.t, 0);
        CHECK(u0 && wgt_tensor_ndim(u0) == 1 && wgt_tensor_shape(u0)[0] == 1, "unsqueeze of rank 0");
        wgt_release(u0);
        input_free(&e), input_free(&one), input_free(&r0), input_free(&mid);
    }
}

/* ---- errors ---------------------------------------------------------------------------- */

static int none(wgt_tensor *t) { /* for CHECK_ERROR: a result that should not exist is released */
    wgt_release(t);
    return t == NULL;
}

TEST_BACKENDS(shape_errors_name_the_bad_values) {
    int64_t s23[2] = {2, 3}, s24[2] = {2, 4}, s5[1] = {5};
    wgt_tensor *a = wgt_zeros(ctx, WGT_F32, 2, s23), *b = wgt_zeros(ctx, WGT_F32, 2, s24);
    wgt_tensor *c = wgt_zeros(ctx, WGT_I32, 2, s23), *v = wgt_zeros(ctx, WGT_F32, 1, s5);
    wgt_tensor *r0 = wgt_zeros(ctx, WGT_F32, 0, NULL);
    CHECK_ERROR(none(wgt_permute(a, (int[]){1, 1})), WGT_ERR_SHAPE, "twice");
    CHECK_ERROR(none(wgt_permute(a, (int[]){0, 2})), WGT_ERR_SHAPE, "axis 2");
    CHECK_ERROR(none(wgt_permute(a, (int[]){-3, 0})), WGT_ERR_SHAPE, "out of range");
    CHECK_ERROR(none(wgt_permute(a, NULL)), WGT_ERR_INVALID_ARGUMENT, "NULL");
    CHECK_ERROR(none(wgt_squeeze(a, 1)), WGT_ERR_SHAPE, "length 3");
    CHECK_ERROR(none(wgt_squeeze(a, 2)), WGT_ERR_SHAPE, "out of range");
    CHECK_ERROR(none(wgt_unsqueeze(a, 3)), WGT_ERR_SHAPE, "axis 3");
    CHECK_ERROR(none(wgt_unsqueeze(a, -4)), WGT_ERR_SHAPE, "out of range");
    wgt_tensor *r8 = wgt_zeros(ctx, WGT_F32, 8, (int64_t[]){1, 1, 1, 1, 1, 1, 1, 1});
    CHECK_ERROR(none(wgt_unsqueeze(r8, 0)), WGT_ERR_SHAPE, "rank 8");
    CHECK_ERROR(none(wgt_expand(a, 2, (int64_t[]){2, 4})), WGT_ERR_SHAPE, "cannot expand");
    CHECK_ERROR(none(wgt_expand(a, 3, (int64_t[]){-1, 2, 3})), WGT_ERR_SHAPE, "leading");
    CHECK_ERROR(none(wgt_expand(a, 2, (int64_t[]){-2, 3})), WGT_ERR_SHAPE, "-2");
    CHECK_ERROR(none(wgt_expand(a, 1, (int64_t[]){3})), WGT_ERR_SHAPE, "fewer");
    CHECK_ERROR(none(wgt_flip(a, 2, (int[]){1, -1})), WGT_ERR_SHAPE, "twice");
    CHECK_ERROR(none(wgt_flip(a, 1, (int[]){2})), WGT_ERR_SHAPE, "out of range");
    CHECK_ERROR(none(wgt_flip(a, 3, (int[]){0, 1, 0})), WGT_ERR_SHAPE, "naxes");
    /* split: on error out keeps what the caller put there. */
    wgt_tensor *sentinel = (wgt_tensor *)&sentinel, *out[3] = {sentinel, sentinel, sentinel};
    CHECK_ERROR(wgt_split(a, 1, 2, (int64_t[]){1, 1}, out) != WGT_OK, WGT_ERR_SHAPE, "sum to 2");
    CHECK_ERROR(wgt_split(a, 1, 2, (int64_t[]){-1, 4}, out) != WGT_OK, WGT_ERR_SHAPE, "sizes[0] is negative");
    CHECK_ERROR(wgt_split(a, 1, 3, (int64_t[]){2, 2, 0}, out) != WGT_OK, WGT_ERR_SHAPE, "exceed");
    CHECK_ERROR(wgt_split(a, 1, 0, (int64_t[]){3}, out) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "count");
    CHECK_ERROR(wgt_split(a, -3, 1, (int64_t[]){3}, out) != WGT_OK, WGT_ERR_SHAPE, "out of range");
    CHECK_ERROR(wgt_split(a, 0, 1, NULL, out) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "sizes");
    CHECK(out[0] == sentinel && out[1] == sentinel && out[2] == sentinel, "split wrote out on error");
    /* concat and stack name the offending tensor and the shapes. */
    CHECK_ERROR(none(wgt_concat((wgt_tensor *[]){a, a}, 0, 0)), WGT_ERR_INVALID_ARGUMENT, "count");
    CHECK_ERROR(none(wgt_concat(NULL, 2, 0)), WGT_ERR_INVALID_ARGUMENT, "tensors");
    CHECK_ERROR(none(wgt_concat((wgt_tensor *[]){a, c}, 2, 0)), WGT_ERR_DTYPE, "tensors[1] is i32");
    CHECK_ERROR(none(wgt_concat((wgt_tensor *[]){a, a, b}, 3, 0)), WGT_ERR_SHAPE, "tensors[2] has shape [2, 4]");
    CHECK_ERROR(none(wgt_concat((wgt_tensor *[]){a, v}, 2, 0)), WGT_ERR_SHAPE, "ranks");
    CHECK_ERROR(none(wgt_concat((wgt_tensor *[]){a, a}, 2, 2)), WGT_ERR_SHAPE, "axis 2");
    CHECK_ERROR(none(wgt_concat((wgt_tensor *[]){r0}, 1, 0)), WGT_ERR_SHAPE, "rank 0");
    CHECK_ERROR(none(wgt_concat((wgt_tensor *[]){a, NULL}, 2, 0)), WGT_ERR_INVALID_ARGUMENT, "tensors[1]");
    CHECK_ERROR(none(wgt_stack((wgt_tensor *[]){a, b}, 2, 0)), WGT_ERR_SHAPE, "tensors[1] has shape [2, 4]");
    CHECK_ERROR(none(wgt_stack((wgt_tensor *[]){a, a}, 2, 3)), WGT_ERR_SHAPE, "axis 3");
    CHECK_ERROR(none(wgt_stack((wgt_tensor *[]){a, c}, 2, 0)), WGT_ERR_DTYPE, "tensors[1]");
    CHECK_ERROR(none(wgt_stack((wgt_tensor *[]){a}, -1, 0)), WGT_ERR_INVALID_ARGUMENT, "count is -1");
    CHECK_ERROR(none(wgt_stack((wgt_tensor *[]){r8}, 1, 0)), WGT_ERR_SHAPE, "rank 8");
    wgt_context *other = test_new_context(WGT_BACKEND_CPU);
    wgt_tensor *o = other ? wgt_zeros(other, WGT_F32, 2, s23) : NULL;
    CHECK_ERROR(none(wgt_concat((wgt_tensor *[]){a, o}, 2, 0)), WGT_ERR_CONTEXT_MISMATCH, "tensors[1]");
    wgt_release(o);
    wgt_context_release(other);
    CHECK_ERROR(none(wgt_pad(a, (int64_t[]){0, -1}, (int64_t[]){0, 0}, 0)), WGT_ERR_SHAPE, "before[1]");
    CHECK_ERROR(none(wgt_pad(a, (int64_t[]){0, 0}, (int64_t[]){-2, 0}, 0)), WGT_ERR_SHAPE, "negative");
    CHECK_ERROR(none(wgt_pad(a, (int64_t[]){0, 0}, NULL, 0)), WGT_ERR_INVALID_ARGUMENT, "after");
    CHECK_ERROR(none(wgt_pad(a, (int64_t[]){INT64_MAX, 0}, (int64_t[]){0, 0}, 0)), WGT_ERR_SHAPE, "overflow");
    CHECK_ERROR(none(wgt_pad(NULL, NULL, NULL, 0)), WGT_ERR_INVALID_ARGUMENT, "NULL");
    wgt_release(a), wgt_release(b), wgt_release(c), wgt_release(v), wgt_release(r0), wgt_release(r8);
}

/* ---- the backends against each other, and large launches -------------------------------- */

TEST(shape_webgpu_matches_cpu) {
    wgt_context *cpu, *gpu;
    if (!test_backend_pair(&cpu, &gpu)) return;
    wgt_context *cs[2] = {cpu, gpu};
    static const int64_t s[3] = {17, 33, 9};
    for (int d = 0; d < NDT; d++) {
        wgt_dtype dt = dtypes[d];
        double pad_value = dt == WGT_U32 ? 2 : dt == WGT_I32 ? -2 : -2.5;
        unsigned char *res[2][3] = {{0}};
        size_t nb[3] = {0};
        for (int k = 0; k < 2; k++) {
            input in[3];
            int ok = 1;
            for (int i = 0; i < 3; i++) ok &= make_input(&in[i], cs[k], dt, (layout)(i + 1), 3, s, 900 + 10 * d + i);
            wgt_tensor *ts[3] = {in[0].t, in[1].t, in[2].t};
            wgt_tensor *r[3] = {ok ? wgt_concat(ts, 3, 1) : NULL, ok ? wgt_stack(ts, 3, -1) : NULL,
                                ok ? wgt_pad(in[1].t, (int64_t[]){1, 0, 3}, (int64_t[]){2, 5, 0}, pad_value) : NULL};
            for (int j = 0; j < 3; j++) {
                nb[j] = wgt_tensor_nbytes(r[j]);
                res[k][j] = malloc(nb[j] + 1);
                CHECK(r[j] && res[k][j] && wgt_tensor_read(r[j], res[k][j], nb[j]) == WGT_OK, "%s op %d: %s",
                      wgt_dtype_name(dt), j, wgt_last_error());
                wgt_release(r[j]);
            }
            for (int i = 0; i < 3; i++) input_free(&in[i]);
        }
        for (int j = 0; j < 3; j++)
            CHECK(nb[j] > 0 && res[0][j] && res[1][j] && !memcmp(res[0][j], res[1][j], nb[j]),
                  "%s op %d: webgpu differs from cpu", wgt_dtype_name(dt), j);
        for (int j = 0; j < 3; j++) free(res[0][j]), free(res[1][j]);
    }
    wgt_context_release(gpu);
    wgt_context_release(cpu);
}

/* More invocations than 65535 workgroups of 256: the launches need a 2-D grid. The CPU has
 * no grid, so only WebGPU runs this. */
TEST(shape_webgpu_beyond_one_dispatch_dimension) {
    wgt_context_options opt = {0};
    opt.backend = WGT_BACKEND_WEBGPU;
    opt.quiet = 1;
    wgt_context *gpu = wgt_context_create(&opt);
    if (!gpu) {
        test_skip_no_webgpu();
        wgt_clear_error();
        return;
    }
    const int64_t n = 65535LL * 256 + 1001;
    /* u32 pad: one invocation per element; the input is a reversed arange. */
    wgt_tensor *r = wgt_arange(gpu, WGT_U32, 0, 1000, 1), *rev = wgt_flip(r, 1, (int[]){0});
    wgt_tensor *p = wgt_pad(rev, (int64_t[]){n - 1500}, (int64_t[]){500}, 7);
    uint32_t *v = malloc((size_t)n * 4);
    CHECK(p && v && wgt_tensor_read(p, v, (size_t)n * 4) == WGT_OK, "%s", wgt_last_error());
    int64_t bad = 0;
    for (int64_t i = 0; p && v && i < n; i++) {
        int64_t j = i - (n - 1500);
        uint32_t want = j >= 0 && j < 1000 ? (uint32_t)(999 - j) : 7;
        if (v[i] != want && bad++ < 3) CHECK(0, "pad element %lld = %u, want %u", (long long)i, v[i], want);
    }
    free(v);
    wgt_release(r), wgt_release(rev), wgt_release(p);
    /* f16 concat of [m, 1] columns: one invocation per box row (its one word). */
    const int64_t m = 65535LL * 256 + 7;
    wgt_tensor *a = wgt_full(gpu, WGT_F16, 2, (int64_t[]){m, 1}, 1.5);
    wgt_tensor *b = wgt_full(gpu, WGT_F16, 2, (int64_t[]){m, 1}, -2);
    wgt_tensor *c = wgt_concat((wgt_tensor *[]){a, b}, 2, 1);
    uint16_t *h = malloc((size_t)m * 4);
    CHECK(c && h && wgt_tensor_read(c, h, (size_t)m * 4) == WGT_OK, "%s", wgt_last_error());
    bad = 0;
    for (int64_t i = 0; c && h && i < 2 * m; i++) {
        float want = i % 2 ? -2.0f : 1.5f;
        if (wgt_f16_to_f32(h[i]) != want && bad++ < 3)
            CHECK(0, "f16 element %lld = %g", (long long)i, wgt_f16_to_f32(h[i]));
    }
    free(h);
    wgt_release(a), wgt_release(b), wgt_release(c);
    wgt_context_release(gpu);
}
