/*
 * `wgtensor bench`'s rows beyond the GEMM and bandwidth ones (tools/bench.c runs them): sorting
 * and top-k, cross-entropy with its gradient, attention and convolution, each with its check
 * against a float64 reference on the host.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* ---- sorting ---- */

typedef struct {
    wgt_tensor *a;
    int64_t k; /* top-k's k; 0: a full sort */
} sort_arg;

static wgt_tensor *run_sort(void *arg) {
    sort_arg *s = arg;
    if (!s->k) return wgt_sort(s->a, -1, 0);
    wgt_tensor *v, *i;
    if (wgt_topk(s->a, s->k, -1, 1, 1, &v, &i) != WGT_OK) return NULL;
    wgt_release(i); /* the same node writes both */
    return v;
}

/* A sort of each row (k 0) or the top k of each: checked on 8 rows, as 0 or infinity, by
 * order and by the count of elements above the last one kept (none for a top-k's). */
bench_row bench_sort(bench_env *env, const char *name, int64_t rows, int64_t cols, int64_t k) {
    bench_row r = {.name = name};
    snprintf(r.size, sizeof r.size, k ? "%lldx%lldx%lld" : "%lldx%lld", (long long)rows, (long long)cols, (long long)k);
    int64_t shape[2] = {rows, cols}, kept = k ? k : cols;
    sort_arg s = {wgt_rand_normal(env->ctx, WGT_F32, 2, shape, 0, 1, 5), k};
    if (s.a) {
        bench_time_op(env, run_sort, &s, &r);
        wgt_tensor *o = run_sort(&s);
        const float *x = wgt_tensor_data(s.a), *y = o ? wgt_tensor_data(o) : NULL;
        r.max_rel_err = x && y ? 0 : INFINITY;
        for (int t = 0; x && y && t < 8; t++) {
            int64_t row = (t * 7919) % rows, above = 0;
            const float *xr = x + row * cols, *yr = y + row * kept;
            for (int64_t j = 1; j < kept; j++)
                if (k ? yr[j] > yr[j - 1] : yr[j] < yr[j - 1]) r.max_rel_err = INFINITY;
            for (int64_t j = 0; j < cols; j++) above += k ? xr[j] > yr[kept - 1] : 0;
            if (above >= kept) r.max_rel_err = INFINITY;
        }
        r.ok = r.max_rel_err == 0;
        wgt_release(o);
    }
    r.gbyte = 4.0 * ((double)rows * cols + (double)rows * kept * 2) * 1e-9; /* in read, values and indices written */
    wgt_release(s.a);
    return r;
}

/* ---- cross-entropy and its gradient (a training step's passes over the logits) ---- */

typedef struct {
    wgt_tensor *x, *t; /* logits (a leaf requiring a gradient), targets */
} xent_arg;

/* d loss / d logits of a fresh pass: the loss, its backward, the gradient (the forward's
 * gather and mean are small work the gradient does not wait for, so they run when nothing
 * reads them: lse, which it reads, runs). */
static wgt_tensor *run_xent(void *arg) {
    xent_arg *a = arg;
    wgt_zero_grad(a->x);
    wgt_tensor *loss = wgt_cross_entropy(a->x, a->t);
    wgt_tensor *g = loss && wgt_backward(loss, NULL) == WGT_OK ? wgt_grad(a->x) : NULL;
    wgt_release(loss);
    return g;
}

/* Sampled rows of the gradient, (softmax - one_hot) / rows, against float64. */
static double check_xent(xent_arg *a, wgt_tensor *g, int64_t rows, int64_t cols) {
    const float *x = wgt_tensor_data(a->x), *o = wgt_tensor_data(g);
    const int32_t *t = wgt_tensor_data(a->t);
    if (!x || !o || !t) return INFINITY;
    double worst = 0;
    for (int s = 0; s < 8; s++) {
        int64_t row = (s * 7919) % rows;
        const float *xr = x + row * cols;
        double mx = -INFINITY, z = 0;
        for (int64_t j = 0; j < cols; j++) mx = fmax(mx, xr[j]);
        for (int64_t j = 0; j < cols; j++) z += exp(xr[j] - mx);
        for (int64_t j = 0; j < cols; j += cols / 16 + 1) {
            double want = (exp(xr[j] - mx) / z - (j == t[row])) / (double)rows;
            double err = fabs(o[row * cols + j] - want) / (fabs(want) + 1e-6 / (double)rows);
            if (err > worst) worst = err;
        }
    }
    return worst;
}

bench_row bench_xent(bench_env *env, const char *name, int64_t rows, int64_t cols) {
    bench_row r = {.name = name};
    snprintf(r.size, sizeof r.size, "%lldx%lld", (long long)rows, (long long)cols);
    int64_t shape[2] = {rows, cols}, ts[1] = {rows};
    xent_arg a = {wgt_rand_normal(env->ctx, WGT_F32, 2, shape, 0, 2, 5), NULL};
    int32_t *tv = malloc(sizeof(int32_t) * (size_t)rows);
    for (int64_t i = 0; tv && i < rows; i++) tv[i] = (int32_t)((i * 7919) % cols);
    if (tv) a.t = wgt_tensor_from_data(env->ctx, WGT_I32, 1, ts, tv, sizeof(int32_t) * (size_t)rows, WGT_USAGE_DEFAULT);
    free(tv);
    if (a.x && a.t && wgt_requires_grad(a.x, 1) == WGT_OK) {
        bench_time_op(env, run_xent, &a, &r);
        wgt_tensor *g = run_xent(&a);
        r.max_rel_err = g ? check_xent(&a, g, rows, cols) : INFINITY;
        r.ok = r.max_rel_err <= 1e-4;
        wgt_release(g);
    }
    /* The floor: the logits read once for lse and once for the gradient, the gradient written. */
    double elems = (double)rows * (double)cols;
    r.gbyte = 4.0 * 3 * elems * 1e-9;
    r.gflop = elems * 8 * 1e-9;
    wgt_release(a.x), wgt_release(a.t);
    return r;
}

/* ---- attention ---- */

typedef struct {
    wgt_tensor *q, *k, *v;
    int causal;
} qkv;

static wgt_tensor *run_attention(void *arg) {
    qkv *t = arg;
    return wgt_attention(t->q, t->k, t->v, t->causal, 0);
}

/* heads x [lq, d] queries against [lk, d] keys and values; under the causal mask query i sees
 * keys j <= i + lk - lq (the queries are the last lq positions). */
bench_row bench_attention(bench_env *env, const char *name, int64_t heads, int64_t lq, int64_t lk, int64_t d,
                          int causal) {
    bench_row r = {.name = name};
    if (lq == lk)
        snprintf(r.size, sizeof r.size, "%lldh %lld %lld", (long long)heads, (long long)lq, (long long)d);
    else
        snprintf(r.size, sizeof r.size, "%lldh %lld %lld %lld", (long long)heads, (long long)lq, (long long)lk,
                 (long long)d);
    int64_t sq[3] = {heads, lq, d}, sk[3] = {heads, lk, d};
    qkv t = {wgt_rand_normal(env->ctx, WGT_F32, 3, sq, 0, 1, 5), wgt_rand_normal(env->ctx, WGT_F32, 3, sk, 0, 1, 6),
             wgt_rand_normal(env->ctx, WGT_F32, 3, sk, 0, 1, 7), causal};
    if (t.q && t.k && t.v) {
        bench_time_op(env, run_attention, &t, &r);
        wgt_tensor *o = run_attention(&t);
        const float *pq = wgt_tensor_data(t.q), *pk = wgt_tensor_data(t.k), *pv = wgt_tensor_data(t.v);
        const float *po = o ? wgt_tensor_data(o) : NULL;
        double worst = po ? 0 : INFINITY;
        double *w = malloc((size_t)lk * sizeof *w);
        for (int smp = 0; po && w && smp < 4; smp++) { /* a few full query rows in float64 */
            int64_t h = smp % heads, i = (smp * 977) % lq, c = (smp * 31) % d;
            int64_t last = causal ? i + lk - lq : lk - 1; /* the last key query i sees */
            double mx = -INFINITY, z = 0, want = 0;
            for (int64_t j = 0; j <= last; j++) {
                double dot = 0;
                for (int64_t e = 0; e < d; e++) dot += (double)pq[(h * lq + i) * d + e] * pk[(h * lk + j) * d + e];
                w[j] = dot / sqrt((double)d);
                if (w[j] > mx) mx = w[j];
            }
            for (int64_t j = 0; j <= last; j++) z += w[j] = exp(w[j] - mx);
            for (int64_t j = 0; j <= last; j++) want += w[j] / z * pv[(h * lk + j) * d + c];
            double err = fabs(po[(h * lq + i) * d + c] - want) / (fabs(want) + 1e-3);
            if (err > worst) worst = err;
        }
        free(w);
        r.max_rel_err = worst;
        r.ok = worst <= 1e-3;
        wgt_release(o);
    }
    /* The two products over the keys each query sees (about half of them under the causal
     * mask when lq = lk), and q, k, v and the output read or written once. */
    double seen = causal ? (double)lq * lk - 0.5 * (double)lq * lq : (double)lq * lk;
    r.gflop = 4.0 * heads * seen * d * 1e-9;
    r.gbyte = 4.0 * heads * (2.0 * lq + 2.0 * lk) * d * 1e-9;
    wgt_release(t.q), wgt_release(t.k), wgt_release(t.v);
    return r;
}

/* ---- convolution ---- */

typedef struct {
    wgt_tensor *x, *w;
    int64_t pad[2];
} conv_arg;

static wgt_tensor *run_conv(void *arg) {
    conv_arg *c = arg;
    return wgt_conv2d(c->x, c->w, NULL, NULL, c->pad, NULL, 1);
}

/* A ResNet layer: x [n, cin, h, w] (*) w [cout, cin, k, k], stride 1, padding k / 2. */
bench_row bench_conv(bench_env *env, const char *name, int64_t n, int64_t cin, int64_t h, int64_t w,
                     int64_t cout, int64_t k) {
    bench_row r = {.name = name};
    snprintf(r.size, sizeof r.size, "%lldx%lldx%lldx%lldx%lldx%lld", (long long)n, (long long)cin, (long long)h,
             (long long)w, (long long)cout, (long long)k);
    int64_t sx[4] = {n, cin, h, w}, sw[4] = {cout, cin, k, k};
    conv_arg c = {wgt_rand_normal(env->ctx, WGT_F32, 4, sx, 0, 1, 8), wgt_rand_normal(env->ctx, WGT_F32, 4, sw, 0, 1, 9),
                  {k / 2, k / 2}};
    if (c.x && c.w) {
        bench_time_op(env, run_conv, &c, &r);
        wgt_tensor *o = run_conv(&c);
        const float *px = wgt_tensor_data(c.x), *pw = wgt_tensor_data(c.w), *po = o ? wgt_tensor_data(o) : NULL;
        double worst = po ? 0 : INFINITY;
        for (int smp = 0; po && smp < 64; smp++) { /* outputs spread over images, channels and borders */
            int64_t b = smp % n, co = (smp * 37) % cout, oy = (smp * 13) % h, ox = (smp * 29) % w;
            double want = 0, mag = 0;
            for (int64_t ci = 0; ci < cin; ci++)
                for (int64_t i = 0; i < k; i++)
                    for (int64_t j = 0; j < k; j++) {
                        int64_t y = oy - k / 2 + i, xx = ox - k / 2 + j;
                        if (y < 0 || y >= h || xx < 0 || xx >= w) continue;
                        double t = (double)px[((b * cin + ci) * h + y) * w + xx] * pw[((co * cin + ci) * k + i) * k + j];
                        want += t;
                        mag += fabs(t);
                    }
            double err = fabs(po[((b * cout + co) * h + oy) * w + ox] - want) / (mag + 1e-30);
            if (err > worst) worst = err;
        }
        r.max_rel_err = worst;
        r.ok = worst <= 1e-5;
        wgt_release(o);
    }
    r.gflop = 2.0 * n * cout * h * w * cin * k * k * 1e-9;
    r.gbyte = 4.0 * ((double)n * cin * h * w + (double)cout * cin * k * k + (double)n * cout * h * w) * 1e-9;
    wgt_release(c.x), wgt_release(c.w);
    return r;
}
