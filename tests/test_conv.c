/*
 * Differential tests of the convolutions (conv1d, conv2d, conv_transpose2d) against a
 * float64 direct loop over the inputs as read back: odd sizes and a non-square kernel,
 * every combination of stride 1-3, padding 0-2, dilation 1-2 and groups 1, 2 and Cin,
 * batch 1 and 3, contiguous inputs and permuted (non-contiguous) views of input and weight,
 * f32 and f16, shapes spanning several tiles of the WebGPU kernel, empty tensors, and the
 * errors. Each output element is allowed an error relative to the sum of |x||w| (+ |bias|)
 * it is made of: 1e-5 for f32 (f32 sums), 1e-3 for f16 (the f16 rounding of the result).
 * Outputs are poisoned in the runner's poisoned pass, so unwritten elements show.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

static uint32_t rng(uint64_t *s) {
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(*s >> 32);
}

static int64_t numel(int ndim, const int64_t *shape) {
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    return n;
}

/* Values in [-1, 1) of dtype, of the given shape; permuted: stored with the channel axis
 * (1) last and seen through wgt_permute, so the view's strides are not row-major. */
static wgt_tensor *input(wgt_context *ctx, wgt_dtype dt, int ndim, const int64_t *shape, uint64_t seed, int permuted) {
    int64_t stored[4];
    int axes[4];
    for (int i = 0; i < ndim; i++) stored[i] = shape[i];
    if (permuted) { /* stored [d0, d2, ..., d1], seen as [d0, d1, d2, ...] */
        for (int i = 1; i < ndim - 1; i++) stored[i] = shape[i + 1];
        stored[ndim - 1] = shape[1];
        axes[0] = 0;
        axes[1] = ndim - 1;
        for (int i = 2; i < ndim; i++) axes[i] = i - 1;
    }
    int64_t n = numel(ndim, shape);
    size_t es = wgt_dtype_size(dt);
    void *raw = malloc((size_t)(n > 0 ? n : 1) * es);
    uint64_t s = seed * 7919 + 13;
    for (int64_t i = 0; i < n; i++) {
        float v = (float)((int32_t)rng(&s) / 2147483648.0);
        if (dt == WGT_F16) ((uint16_t *)raw)[i] = wgt_f32_to_f16(v);
        else ((float *)raw)[i] = v;
    }
    wgt_tensor *t = wgt_tensor_from_data(ctx, dt, ndim, stored, raw, (size_t)n * es, WGT_USAGE_DEFAULT);
    free(raw);
    if (!permuted || !t) return t;
    wgt_tensor *v = wgt_permute(t, axes);
    wgt_release(t);
    return v;
}

/* The geometry a reference loop follows: conv (transposed = 0) or conv_transpose (1). */
typedef struct {
    int transposed;
    int64_t stride[2], pad[2], dil[2], out_pad[2], groups;
} geometry;

/* Reference output [N, Cout, OH, OW] in float64 and the sum of |terms| of each element. */
static void reference(const geometry *g, const double *x, const int64_t *xs, const double *w, const int64_t *ws,
                      const double *bias, const int64_t *os, double *ref, double *mag) {
    int64_t N = xs[0], Cin = xs[1], H = xs[2], W = xs[3], Cout = os[1], OH = os[2], OW = os[3];
    int64_t KH = ws[2], KW = ws[3], cin_g = Cin / g->groups, cout_g = Cout / g->groups;
    int64_t total = numel(4, os);
    for (int64_t i = 0; i < total; i++) {
        int64_t co = i / (OH * OW) % Cout;
        ref[i] = bias ? bias[co] : 0.0;
        mag[i] = bias ? fabs(bias[co]) : 0.0;
    }
    for (int64_t n = 0; n < N; n++)
        for (int64_t ci = 0; ci < Cin; ci++)
            for (int64_t ih = 0; ih < H; ih++)
                for (int64_t iw = 0; iw < W; iw++) {
                    double xv = x[((n * Cin + ci) * H + ih) * W + iw];
                    int64_t grp = ci / cin_g;
                    for (int64_t c = 0; c < cout_g; c++)
                        for (int64_t kh = 0; kh < KH; kh++)
                            for (int64_t kw = 0; kw < KW; kw++) {
                                int64_t co = grp * cout_g + c, oh, ow;
                                double wv;
                                if (g->transposed) {
                                    oh = ih * g->stride[0] - g->pad[0] + kh * g->dil[0];
                                    ow = iw * g->stride[1] - g->pad[1] + kw * g->dil[1];
                                    wv = w[((ci * cout_g + c) * KH + kh) * KW + kw];
                                } else {
                                    /* output (oh, ow) reads ih = oh s - p + kh d */
                                    int64_t th = ih + g->pad[0] - kh * g->dil[0], tw = iw + g->pad[1] - kw * g->dil[1];
                                    if (th < 0 || tw < 0 || th % g->stride[0] || tw % g->stride[1]) continue;
                                    oh = th / g->stride[0];
                                    ow = tw / g->stride[1];
                                    wv = w[((co * cin_g + ci % cin_g) * KH + kh) * KW + kw];
                                }
                                if (oh < 0 || ow < 0 || oh >= OH || ow >= OW) continue;
                                int64_t o = ((n * Cout + co) * OH + oh) * OW + ow;
                                ref[o] += xv * wv;
                                mag[o] += fabs(xv * wv);
                            }
                }
}

/* Checks out against the reference for x, w, bias; returns the number of bad elements. */
static int compare(const char *what, const geometry *g, wgt_tensor *out, wgt_tensor *x, wgt_tensor *w, wgt_tensor *bias,
                   int spatial) {
    CHECK(out != NULL, "%s: %s", what, wgt_last_error());
    if (!out) return 1;
    int64_t xs[4], ws[4], os[4];
    const int64_t *xs0 = wgt_tensor_shape(x), *ws0 = wgt_tensor_shape(w), *os0 = wgt_tensor_shape(out);
    if (spatial == 1) { /* [N, C, L] as [N, C, 1, L] */
        int64_t a[4] = {xs0[0], xs0[1], 1, xs0[2]}, b[4] = {ws0[0], ws0[1], 1, ws0[2]}, c[4] = {os0[0], os0[1], 1, os0[2]};
        memcpy(xs, a, sizeof a);
        memcpy(ws, b, sizeof b);
        memcpy(os, c, sizeof c);
    } else {
        memcpy(xs, xs0, sizeof xs);
        memcpy(ws, ws0, sizeof ws);
        memcpy(os, os0, sizeof os);
    }
    double *xv = test_read_f64(x), *wv = test_read_f64(w), *bv = bias ? test_read_f64(bias) : NULL;
    double *got = test_read_f64(out);
    int64_t n = numel(4, os);
    double *ref = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1)), *mag = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    reference(g, xv, xs, wv, ws, bv, os, ref, mag);
    double tol = wgt_tensor_dtype(out) == WGT_F16 ? 1e-3 : 1e-5;
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
        double err = fabs(got[i] - ref[i]);
        if (!(err <= tol * mag[i] + 1e-30)) {
            if (bad++ < 3)
                CHECK(0, "%s (%s): element %lld is %.9g, expected %.9g (sum |terms| %.3g)", what,
                      wgt_dtype_name(wgt_tensor_dtype(out)), (long long)i, got[i], ref[i], mag[i]);
        }
    }
    free(xv);
    free(wv);
    free(bv);
    free(got);
    free(ref);
    free(mag);
    return bad;
}

static const wgt_dtype float_types[2] = {WGT_F32, WGT_F16};

/* conv2d with g's parameters, checked against the reference; returns the bad elements. */
static int check_conv2d(const char *what, const geometry *g, wgt_tensor *x, wgt_tensor *w, wgt_tensor *bias) {
    wgt_tensor *out = wgt_conv2d(x, w, bias, g->stride, g->pad, g->dil, g->groups);
    int bad = compare(what, g, out, x, w, bias, 2);
    wgt_release(out);
    return bad;
}

/* Every parameter combination on odd sizes and a 3 x 2 kernel. */
TEST_BACKENDS(conv2d_matches_float64_loop) {
    int64_t Cin = 4, Cout = 8, H = 7, W = 9, KH = 3, KW = 2;
    int checked = 0;
    for (int t = 0; t < 2; t++)
        for (int64_t batch = 1; batch <= 3; batch += 2)
            for (int perm = 0; perm < 2; perm++) {
                wgt_dtype dt = float_types[t];
                int64_t xshape[4] = {batch, Cin, H, W};
                wgt_tensor *x = input(ctx, dt, 4, xshape, 1 + (uint64_t)batch, perm);
                for (int64_t groups = 1; groups <= Cin; groups *= 2) {
                    int64_t wshape[4] = {Cout, Cin / groups, KH, KW}, bshape[1] = {Cout};
                    wgt_tensor *w = input(ctx, dt, 4, wshape, 7 + (uint64_t)groups, perm);
                    wgt_tensor *b = input(ctx, dt, 1, bshape, 3, 0);
                    for (int64_t s = 1; s <= 3; s++)
                        for (int64_t p = 0; p <= 2; p++)
                            for (int64_t d = 1; d <= 2; d++) {
                                /* f16 and the permuted views: a subset keeps lavapipe's run short */
                                if ((t == 1 || perm) && (s + p + d) % 2) continue;
                                geometry g = {0, {s, s == 3 ? 2 : s}, {p, 2 - p}, {d, 3 - d}, {0, 0}, groups};
                                wgt_tensor *bias = (s + p) % 2 ? b : NULL;
                                char what[160];
                                snprintf(what, sizeof what, "conv2d batch %lld groups %lld stride %lld pad %lld dil %lld%s",
                                         (long long)batch, (long long)groups, (long long)s, (long long)p, (long long)d,
                                         perm ? " permuted" : "");
                                if (check_conv2d(what, &g, x, w, bias)) goto done;
                                checked++;
                            }
                done:
                    wgt_release(w);
                    wgt_release(b);
                }
                wgt_release(x);
            }
    CHECK(checked > 200, "only %d cases ran", checked);
}

/* Shapes spanning several tiles of the WebGPU kernel in both directions (70 channels, 338
 * pixels, 45 values per output), and a 1 x 1 kernel. */
TEST_BACKENDS(conv2d_several_tiles) {
    for (int t = 0; t < 2; t++) {
        int64_t xs[4] = {2, 5, 13, 13}, ws[4] = {70, 5, 3, 3}, bs[1] = {70};
        wgt_tensor *x = input(ctx, float_types[t], 4, xs, 11, 0), *w = input(ctx, float_types[t], 4, ws, 12, 0);
        wgt_tensor *b = input(ctx, float_types[t], 1, bs, 13, 0);
        geometry g = {0, {1, 1}, {1, 1}, {1, 1}, {0, 0}, 1};
        check_conv2d("conv2d 70 x 5 x 3 x 3 over 2 x 13 x 13", &g, x, w, b);
        int64_t ws1[4] = {70, 5, 1, 1};
        wgt_tensor *w1 = input(ctx, float_types[t], 4, ws1, 14, 1);
        geometry g1 = {0, {2, 2}, {0, 0}, {1, 1}, {0, 0}, 1};
        check_conv2d("conv2d 1 x 1 stride 2", &g1, x, w1, NULL);
        wgt_release(w1);
        wgt_release(x);
        wgt_release(w);
        wgt_release(b);
    }
}

TEST_BACKENDS(conv1d_matches_float64_loop) {
    for (int t = 0; t < 2; t++)
        for (int64_t groups = 1; groups <= 3; groups += 2)
            for (int64_t s = 1; s <= 2; s++)
                for (int64_t p = -1; p <= 2; p++) { /* -1: WGT_PADDING_SAME */
                    if (p == WGT_PADDING_SAME && s != 1) continue;
                    int64_t xs[3] = {3, 6, 11}, ws[3] = {9, 6 / groups, 4}, bs[1] = {9};
                    wgt_tensor *x = input(ctx, float_types[t], 3, xs, 21, 1), *w = input(ctx, float_types[t], 3, ws, 22, 0);
                    wgt_tensor *b = input(ctx, float_types[t], 1, bs, 23, 0);
                    int64_t d = 2;
                    wgt_tensor *out = wgt_conv1d(x, w, b, s, p, d, groups);
                    /* "same" with a kernel spanning 7: 3 before, 3 after */
                    int64_t before = p == WGT_PADDING_SAME ? d * (ws[2] - 1) / 2 : p;
                    geometry g = {0, {1, s}, {0, before}, {1, d}, {0, 0}, groups};
                    char what[96];
                    snprintf(what, sizeof what, "conv1d groups %lld stride %lld padding %lld", (long long)groups,
                             (long long)s, (long long)p);
                    compare(what, &g, out, x, w, b, 1);
                    if (out && p == WGT_PADDING_SAME)
                        CHECK(wgt_tensor_shape(out)[2] == 11, "same padding gave length %lld",
                              (long long)wgt_tensor_shape(out)[2]);
                    wgt_release(out);
                    wgt_release(x);
                    wgt_release(w);
                    wgt_release(b);
                }
}

TEST_BACKENDS(conv2d_same_padding_even_kernel) {
    /* A 4 x 2 kernel spans 4 and 2: padding 1 before and 2 after, 0 before and 1 after. */
    int64_t xs[4] = {1, 3, 5, 6}, ws[4] = {2, 3, 4, 2}, same[2] = {WGT_PADDING_SAME, WGT_PADDING_SAME};
    wgt_tensor *x = input(ctx, WGT_F32, 4, xs, 31, 0), *w = input(ctx, WGT_F32, 4, ws, 32, 0);
    wgt_tensor *out = wgt_conv2d(x, w, NULL, NULL, same, NULL, 1);
    geometry g = {0, {1, 1}, {1, 0}, {1, 1}, {0, 0}, 1};
    compare("conv2d same", &g, out, x, w, NULL, 2);
    if (out) CHECK(wgt_tensor_shape(out)[2] == 5 && wgt_tensor_shape(out)[3] == 6, "same changed the size");
    wgt_release(out);
    wgt_release(x);
    wgt_release(w);
}

TEST_BACKENDS(conv_transpose2d_matches_float64_loop) {
    int checked = 0;
    for (int t = 0; t < 2; t++)
        for (int64_t groups = 1; groups <= 2; groups++)
            for (int64_t s = 1; s <= 3; s++)
                for (int64_t p = 0; p <= 2; p++)
                    for (int64_t d = 1; d <= 2; d++)
                        for (int64_t op = 0; op < (s > d ? s : d); op++) {
                            if (t == 1 && (s + p + d + op) % 2) continue;
                            int64_t xs[4] = {2, 4, 5, 3}, ws[4] = {4, 3, 3, 2}, bs[1] = {3 * groups};
                            wgt_tensor *x = input(ctx, float_types[t], 4, xs, 41 + (uint64_t)s, (int)(p % 2));
                            wgt_tensor *w = input(ctx, float_types[t], 4, ws, 42, (int)(d % 2));
                            wgt_tensor *b = input(ctx, float_types[t], 1, bs, 43, 0);
                            geometry g = {1, {s, 1 + (s % 2)}, {p, p / 2}, {d, 1}, {op, 0}, groups};
                            if (g.out_pad[0] >= g.stride[0] && g.out_pad[0] >= g.dil[0]) g.out_pad[0] = 0;
                            wgt_tensor *bias = op % 2 ? NULL : b;
                            wgt_tensor *out = wgt_conv_transpose2d(x, w, bias, g.stride, g.pad, g.out_pad, g.dil, groups);
                            char what[160];
                            snprintf(what, sizeof what, "conv_transpose2d groups %lld stride %lld pad %lld dil %lld out_pad %lld",
                                     (long long)groups, (long long)s, (long long)p, (long long)d, (long long)op);
                            if (out) {
                                const int64_t *os = wgt_tensor_shape(out);
                                CHECK(os[2] == (5 - 1) * g.stride[0] - 2 * p + d * 2 + g.out_pad[0] + 1 &&
                                          os[3] == (3 - 1) * g.stride[1] - 2 * (p / 2) + 1 + 1,
                                      "%s: output [%lld, %lld, %lld, %lld]", what, (long long)os[0], (long long)os[1],
                                      (long long)os[2], (long long)os[3]);
                            }
                            checked += compare(what, &g, out, x, w, bias, 2) == 0;
                            wgt_release(out);
                            wgt_release(x);
                            wgt_release(w);
                            wgt_release(b);
                        }
    CHECK(checked > 60, "only %d cases passed", checked);
}

TEST_BACKENDS(conv2d_empty_tensors) {
    /* No images: an empty result. No input channels: the bias alone. */
    int64_t xs[4] = {0, 2, 5, 5}, ws[4] = {3, 2, 3, 3}, bs[1] = {3};
    wgt_tensor *x = input(ctx, WGT_F32, 4, xs, 51, 0), *w = input(ctx, WGT_F32, 4, ws, 52, 0);
    wgt_tensor *b = input(ctx, WGT_F32, 1, bs, 53, 0);
    wgt_tensor *out = wgt_conv2d(x, w, b, NULL, NULL, NULL, 1);
    CHECK(out && wgt_tensor_shape(out)[0] == 0 && wgt_tensor_shape(out)[1] == 3 && wgt_tensor_shape(out)[2] == 3,
          "%s", wgt_last_error());
    wgt_release(out);
    int64_t xs0[4] = {2, 0, 4, 4}, ws0[4] = {3, 0, 3, 3};
    wgt_tensor *x0 = input(ctx, WGT_F32, 4, xs0, 54, 0), *w0 = input(ctx, WGT_F32, 4, ws0, 55, 0);
    geometry g = {0, {1, 1}, {1, 1}, {1, 1}, {0, 0}, 1};
    check_conv2d("conv2d without input channels", &g, x0, w0, b);
    wgt_release(x0);
    wgt_release(w0);
    wgt_release(x);
    wgt_release(w);
    wgt_release(b);
}

TEST_BACKENDS(conv_errors_name_values) {
    int64_t xs[4] = {1, 4, 5, 5}, ws[4] = {6, 4, 3, 3}, wg[4] = {6, 2, 3, 3}, bs[1] = {5};
    wgt_tensor *x = input(ctx, WGT_F32, 4, xs, 61, 0), *w = input(ctx, WGT_F32, 4, ws, 62, 0);
    wgt_tensor *w2 = input(ctx, WGT_F32, 4, wg, 63, 0), *b = input(ctx, WGT_F32, 1, bs, 64, 0);
    wgt_tensor *x16 = input(ctx, WGT_F16, 4, xs, 65, 0);
    int64_t big[4] = {6, 4, 7, 3}, stride0[2] = {0, 1}, stride2[2] = {2, 2}, pad[2] = {1, 1};
    int64_t same[2] = {WGT_PADDING_SAME, WGT_PADDING_SAME}, op2[2] = {2, 0};
    wgt_tensor *wbig = input(ctx, WGT_F32, 4, big, 66, 0);
    CHECK_ERROR(!wgt_conv2d(x, w2, NULL, NULL, NULL, NULL, 1), WGT_ERR_SHAPE, "2 input channels per group");
    CHECK_ERROR(!wgt_conv2d(x, w, NULL, NULL, NULL, NULL, 3), WGT_ERR_SHAPE, "groups = 3 must divide");
    CHECK_ERROR(!wgt_conv2d(x, w, NULL, NULL, NULL, NULL, 0), WGT_ERR_INVALID_ARGUMENT, "groups must be 1 or more");
    CHECK_ERROR(!wgt_conv2d(x, wbig, NULL, NULL, NULL, NULL, 1), WGT_ERR_SHAPE, "spans 7) is larger than the padded input (5");
    CHECK_ERROR(!wgt_conv2d(x, w, b, NULL, NULL, NULL, 1), WGT_ERR_SHAPE, "bias must be [6]");
    CHECK_ERROR(!wgt_conv2d(x16, w, NULL, NULL, NULL, NULL, 1), WGT_ERR_DTYPE, "x is f16, weight is f32");
    CHECK_ERROR(!wgt_conv2d(x, w, NULL, stride0, NULL, NULL, 1), WGT_ERR_INVALID_ARGUMENT, "stride must be 1 or more, not 0");
    CHECK_ERROR(!wgt_conv2d(x, w, NULL, stride2, same, NULL, 1), WGT_ERR_INVALID_ARGUMENT, "needs stride 1, not 2");
    CHECK_ERROR(!wgt_conv2d(b, w, NULL, NULL, NULL, NULL, 1), WGT_ERR_SHAPE, "need rank 4");
    CHECK_ERROR(!wgt_conv1d(x, w, NULL, 1, 0, 1, 1), WGT_ERR_SHAPE, "need rank 3");
    CHECK_ERROR(!wgt_conv_transpose2d(x, w, NULL, NULL, pad, op2, NULL, 1), WGT_ERR_INVALID_ARGUMENT,
                "output_padding (2) must be smaller than the stride (1)");
    CHECK_ERROR(!wgt_conv_transpose2d(x, w2, NULL, NULL, NULL, NULL, NULL, 1), WGT_ERR_SHAPE,
                "must have 4 input channels");
    int64_t padbig[2] = {5, 5}, wts[4] = {4, 2, 3, 3};
    wgt_tensor *wt = input(ctx, WGT_F32, 4, wts, 67, 0);
    CHECK_ERROR(!wgt_conv_transpose2d(x, wt, NULL, NULL, padbig, NULL, NULL, 1), WGT_ERR_SHAPE, "the output would have height -3");
    wgt_release(x);
    wgt_release(w);
    wgt_release(w2);
    wgt_release(b);
    wgt_release(x16);
    wgt_release(wbig);
    wgt_release(wt);
}
