/*
 * Pooling (max_pool2d, avg_pool2d, adaptive_avg_pool2d) against float64 direct loops over the
 * inputs as read back, with PyTorch's rules: kernels 2 x 2 and 3 x 2, strides 1-3 (and the
 * default, the kernel), padding 0-1, dilation 1-2, ceil_mode on and off, count_include_pad on
 * and off, odd sizes, permuted views, f32 and f16; gradients against finite differences; and
 * the errors. Max is exact; averages are allowed 1e-5 (f32) or 1e-3 (f16) of the mean of |x|.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gradcheck.h"

static wgt_tensor *input(wgt_context *ctx, wgt_dtype dt, const int64_t *shape, uint64_t seed, int permuted) {
    int64_t n = shape[0] * shape[1] * shape[2] * shape[3];
    int64_t stored[4] = {shape[0], shape[2], shape[3], shape[1]};
    float *v = malloc(sizeof *v * (size_t)(n > 0 ? n : 1));
    uint64_t s = seed * 2654435761u + 7;
    for (int64_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        v[i] = (float)((int32_t)(s >> 32) / 2147483648.0) * 4;
    }
    wgt_tensor *t = wgt_tensor_from_data(ctx, WGT_F32, 4, permuted ? stored : shape, v, sizeof *v * (size_t)n,
                                         WGT_USAGE_DEFAULT);
    free(v);
    wgt_tensor *c = dt == WGT_F32 ? t : wgt_cast(t, dt);
    if (c != t) wgt_release(t);
    if (!permuted || !c) return c;
    static const int axes[4] = {0, 3, 1, 2};
    wgt_tensor *p = wgt_permute(c, axes);
    wgt_release(c);
    return p;
}

typedef struct {
    int64_t k[2], s[2], p[2], d[2];
    int ceil_mode, include_pad, max;
} pool_case;

static int64_t out_len(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, int ceil_mode) {
    int64_t num = in + 2 * p - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0);
    int64_t o = num / s + 1;
    if (ceil_mode && (o - 1) * s >= in + p) o--;
    return o;
}

/* Compares out with the float64 pooling of x; returns the number of bad elements. */
static int check_pool(const char *what, wgt_tensor *out, wgt_tensor *x, const pool_case *c) {
    CHECK(out != NULL, "%s: %s", what, wgt_last_error());
    if (!out) return 1;
    const int64_t *xs = wgt_tensor_shape(x), *os = wgt_tensor_shape(out);
    int64_t H = xs[2], W = xs[3], OH = out_len(H, c->k[0], c->s[0], c->p[0], c->d[0], c->ceil_mode);
    int64_t OW = out_len(W, c->k[1], c->s[1], c->p[1], c->d[1], c->ceil_mode);
    CHECK(os[0] == xs[0] && os[1] == xs[1] && os[2] == OH && os[3] == OW, "%s: output [%lld, %lld, %lld, %lld], wanted %lld x %lld",
          what, (long long)os[0], (long long)os[1], (long long)os[2], (long long)os[3], (long long)OH, (long long)OW);
    if (os[2] != OH || os[3] != OW) return 1;
    double *xv = test_read_f64(x), *got = test_read_f64(out);
    double tol = wgt_tensor_dtype(out) == WGT_F16 ? 1e-3 : 1e-5;
    int bad = 0;
    for (int64_t nc = 0; nc < xs[0] * xs[1]; nc++)
        for (int64_t i = 0; i < OH; i++)
            for (int64_t j = 0; j < OW; j++) {
                double best = -INFINITY, sum = 0, mag = 0;
                int64_t count = 0;
                for (int64_t a = 0; a < c->k[0]; a++)
                    for (int64_t b = 0; b < c->k[1]; b++) {
                        int64_t h = i * c->s[0] - c->p[0] + a * c->d[0], w = j * c->s[1] - c->p[1] + b * c->d[1];
                        if (h < 0 || w < 0 || h >= H || w >= W) continue;
                        double v = xv[(nc * H + h) * W + w];
                        best = v > best ? v : best;
                        sum += v;
                        mag += fabs(v);
                        count++;
                    }
                double want = best, got_v = got[(nc * OH + i) * OW + j], allowed = 0;
                if (!c->max) {
                    int64_t div = count;
                    if (c->include_pad) {
                        int64_t hs = i * c->s[0] - c->p[0], ws = j * c->s[1] - c->p[1];
                        int64_t he = hs + c->k[0] < H + c->p[0] ? hs + c->k[0] : H + c->p[0];
                        int64_t we = ws + c->k[1] < W + c->p[1] ? ws + c->k[1] : W + c->p[1];
                        div = (he - hs) * (we - ws);
                    }
                    want = sum / (double)div;
                    allowed = tol * mag / (double)div + 1e-30;
                }
                if (!(fabs(got_v - want) <= allowed) && bad++ < 3)
                    CHECK(0, "%s (%s): output (%lld, %lld, %lld) is %.9g, expected %.9g", what,
                          wgt_dtype_name(wgt_tensor_dtype(out)), (long long)nc, (long long)i, (long long)j, got_v, want);
            }
    free(xv);
    free(got);
    return bad;
}

TEST_BACKENDS(pool2d_matches_float64_loop) {
    static const wgt_dtype types[2] = {WGT_F32, WGT_F16};
    int checked = 0;
    for (int t = 0; t < 2; t++)
        for (int perm = 0; perm < 2; perm++) {
            int64_t shape[4] = {2, 3, 7, 8};
            wgt_tensor *x = input(ctx, types[t], shape, 5 + (uint64_t)perm, perm);
            for (int kc = 0; kc < 2; kc++)
                for (int64_t s = 0; s <= 3; s++) /* 0: the default stride, the kernel */
                    for (int64_t p = 0; p <= 1; p++)
                        for (int m = 0; m < 4; m++) { /* max dilation 1, max dilation 2, avg, avg without the pad */
                            for (int ceil_mode = 0; ceil_mode < 2; ceil_mode++) {
                                if ((t || perm) && (s + p + m + ceil_mode) % 2) continue;
                                pool_case c = {{kc ? 3 : 2, 2}, {s ? s : (kc ? 3 : 2), s ? s : 2}, {p, p}, {m == 1 ? 2 : 1, 1},
                                               ceil_mode, m != 3, m < 2};
                                wgt_tensor *out = c.max ? wgt_max_pool2d(x, c.k, s ? c.s : NULL, c.p, c.d, ceil_mode)
                                                        : wgt_avg_pool2d(x, c.k, s ? c.s : NULL, c.p, ceil_mode, c.include_pad);
                                char what[128];
                                snprintf(what, sizeof what, "%s kernel %lldx2 stride %lld pad %lld ceil %d%s",
                                         c.max ? (m ? "max dilated" : "max") : (m == 2 ? "avg" : "avg excluding pad"),
                                         (long long)c.k[0], (long long)s, (long long)p, ceil_mode, perm ? " permuted" : "");
                                checked += check_pool(what, out, x, &c) == 0;
                                wgt_release(out);
                            }
                        }
            wgt_release(x);
        }
    CHECK(checked > 100, "only %d cases passed", checked);
}

TEST_BACKENDS(adaptive_avg_pool2d_matches_float64_loop) {
    int64_t shape[4] = {2, 3, 7, 10};
    for (int t = 0; t < 2; t++) {
        wgt_tensor *x = input(ctx, t ? WGT_F16 : WGT_F32, shape, 9, t);
        static const int64_t sizes[][2] = {{3, 4}, {7, 10}, {1, 1}, {5, 3}, {9, 13}};
        for (int i = 0; i < 5; i++) {
            int64_t oh = sizes[i][0], ow = sizes[i][1];
            wgt_tensor *out = wgt_adaptive_avg_pool2d(x, oh, ow);
            CHECK(out != NULL, "%s", wgt_last_error());
            if (!out) continue;
            double *xv = test_read_f64(x), *got = test_read_f64(out);
            double tol = t ? 1e-3 : 1e-5;
            for (int64_t nc = 0; nc < 6; nc++)
                for (int64_t a = 0; a < oh; a++)
                    for (int64_t b = 0; b < ow; b++) {
                        int64_t h0 = a * 7 / oh, h1 = ((a + 1) * 7 + oh - 1) / oh, w0 = b * 10 / ow, w1 = ((b + 1) * 10 + ow - 1) / ow;
                        double sum = 0, mag = 0;
                        for (int64_t h = h0; h < h1; h++)
                            for (int64_t w = w0; w < w1; w++) sum += xv[(nc * 7 + h) * 10 + w], mag += fabs(xv[(nc * 7 + h) * 10 + w]);
                        double n = (double)((h1 - h0) * (w1 - w0)), g = got[(nc * oh + a) * ow + b];
                        CHECK(fabs(g - sum / n) <= tol * mag / n, "adaptive %lldx%lld (%lld, %lld, %lld): %.9g, expected %.9g",
                              (long long)oh, (long long)ow, (long long)nc, (long long)a, (long long)b, g, sum / n);
                    }
            free(xv);
            free(got);
            wgt_release(out);
        }
        wgt_release(x);
    }
}

TEST_BACKENDS(pool2d_errors_name_values) {
    int64_t shape[4] = {1, 2, 5, 5}, k3[2] = {3, 3}, k7[2] = {7, 2}, k0[2] = {0, 2}, p2[2] = {2, 0};
    wgt_tensor *x = input(ctx, WGT_F32, shape, 1, 0), *flat = wgt_reshape(x, 2, (int64_t[]){2, 25});
    CHECK_ERROR(!wgt_max_pool2d(x, k7, NULL, NULL, NULL, 0), WGT_ERR_SHAPE, "kernel (7, spanning 7) is larger than the padded input (5");
    CHECK_ERROR(!wgt_avg_pool2d(x, k0, NULL, NULL, 0, 1), WGT_ERR_INVALID_ARGUMENT, "kernel_size (0)");
    CHECK_ERROR(!wgt_max_pool2d(x, k3, NULL, p2, NULL, 0), WGT_ERR_INVALID_ARGUMENT, "padding 2 must lie in [0, 1]");
    CHECK_ERROR(!wgt_avg_pool2d(flat, k3, NULL, NULL, 0, 1), WGT_ERR_SHAPE, "x must be [N, C, H, W], not [2, 25]");
    CHECK_ERROR(!wgt_max_pool2d(x, NULL, NULL, NULL, NULL, 0), WGT_ERR_INVALID_ARGUMENT, "kernel_size is NULL");
    CHECK_ERROR(!wgt_adaptive_avg_pool2d(x, 0, 2), WGT_ERR_INVALID_ARGUMENT, "output size (0, 2)");
    wgt_release(x);
    wgt_release(flat);
}

#define V4(a, b, c, d) 4, {a, b, c, d}
#define F1(name, call) static wgt_tensor *name(wgt_tensor *const *x) { return call; }
static const int64_t k32[2] = {3, 2}, s21[2] = {2, 1}, p10[2] = {1, 0}, d21[2] = {2, 1}, k22[2] = {2, 2};
F1(f_max_pool, wgt_max_pool2d(x[0], k32, s21, p10, NULL, 1))
F1(f_max_pool_dilated, wgt_max_pool2d(x[0], k22, NULL, NULL, d21, 0))
F1(f_avg_pool, wgt_avg_pool2d(x[0], k32, s21, p10, 1, 1))
F1(f_avg_pool_excluding, wgt_avg_pool2d(x[0], k32, NULL, p10, 1, 0))
F1(f_adaptive, wgt_adaptive_avg_pool2d(x[0], 3, 2))

TEST_BACKENDS(autograd_grad_pool2d) {
    static const gc_case cases[] = {
        {"max_pool2d ceil_mode", f_max_pool, 1, {{V4(2, 2, 6, 5), -1, 1, GC_STEPPED}}},
        {"max_pool2d dilated", f_max_pool_dilated, 1, {{V4(1, 2, 7, 6), -1, 1, GC_TRANSPOSED}}},
        {"avg_pool2d", f_avg_pool, 1, {{V4(2, 2, 6, 5), -1, 1, GC_PLAIN}}},
        {"avg_pool2d excluding padding", f_avg_pool_excluding, 1, {{V4(1, 3, 7, 5), -1, 1, GC_TRANSPOSED}}},
        {"adaptive_avg_pool2d", f_adaptive, 1, {{V4(2, 2, 7, 5), -1, 1, GC_STEPPED}}},
        {"max_pool2d f16", f_max_pool, 1, {{V4(2, 2, 6, 5), -1, 1, GC_PLAIN, WGT_F16}}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) gradcheck(ctx, &cases[i]);
}
