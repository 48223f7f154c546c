/*
 * The execution engine: lazy recording, dropped work, fusion (same bits as op by op),
 * compiled graphs (results, replays, every binding error), asynchronous reads, failure
 * propagation and memory reuse. Results are always checked against values computed here or
 * against the same ops run eagerly with fusion off.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

static wgt_stats stats_of(wgt_context *ctx) {
    wgt_stats s;
    wgt_context_stats(ctx, &s);
    return s;
}

static wgt_context *context_with_fusion(wgt_backend_kind kind, int fusion) {
    wgt_context_options o = {0};
    o.backend = kind;
    o.no_fusion = !fusion;
    o.quiet = 1;
    return wgt_context_create(&o);
}

/* x * w + b, then tanh, sqrt of its square plus 1, a compare, a where and a cast back: every
 * fusible kind, over a broadcast row and a strided view. */
static wgt_tensor *chain(wgt_tensor *x, wgt_tensor *w, wgt_tensor *b) {
    wgt_tensor *t1 = wgt_mul(x, w), *t2 = wgt_add(t1, b), *t3 = wgt_tanh(t2);
    wgt_tensor *sq = wgt_square(t3), *t4 = wgt_add_scalar(sq, 1.0);
    wgt_tensor *t5 = wgt_sqrt(t4), *c = wgt_gt(t2, t5), *t6 = wgt_where(c, t5, t2);
    wgt_tensor *h = wgt_cast(t6, WGT_F16), *t7 = wgt_cast(h, WGT_F32);
    wgt_release(t1), wgt_release(t2), wgt_release(t3), wgt_release(sq), wgt_release(t4), wgt_release(t5);
    wgt_release(c), wgt_release(t6), wgt_release(h);
    return t7;
}

static float *read_f32(wgt_tensor *t) {
    size_t n = (size_t)wgt_tensor_numel(t);
    float *v = malloc(sizeof(float) * (n ? n : 1));
    if (v && wgt_tensor_read(t, v, n * sizeof(float)) != WGT_OK) {
        free(v);
        return NULL;
    }
    return v;
}

static void make_inputs(wgt_context *ctx, wgt_tensor **x, wgt_tensor **w, wgt_tensor **b) {
    static const int64_t sx[2] = {37, 129}, sw[1] = {37}, sb[1] = {129};
    wgt_tensor *big = wgt_rand_uniform(ctx, WGT_F32, 2, sx, -2, 2, 11);
    *x = big;
    wgt_tensor *w1 = wgt_rand_uniform(ctx, WGT_F32, 1, sw, -1, 1, 12);
    /* w as a column [37, 1] view: broadcast along the rows. */
    *w = wgt_reshape(w1, 2, (const int64_t[]){37, 1});
    wgt_release(w1);
    wgt_tensor *b2 = wgt_rand_uniform(ctx, WGT_F32, 1, (const int64_t[]){258}, -1, 1, 13);
    *b = wgt_slice(b2, 0, 1, 258, 2); /* a stepped view of 129 */
    wgt_release(b2);
    (void)sb;
}

TEST_BACKENDS(engine_ops_run_only_when_needed_and_dead_work_is_dropped) {
    static const int64_t s[1] = {1000};
    wgt_tensor *a = wgt_arange(ctx, WGT_F32, 0, 1000, 1);
    wgt_context_sync(ctx);
    wgt_stats before = stats_of(ctx);
    wgt_tensor *kept = wgt_mul_scalar(a, 2.0);
    wgt_release(wgt_exp(a)); /* nobody can read it */
    wgt_stats mid = stats_of(ctx);
    CHECK(mid.ops_run == before.ops_run, "ops ran before a read: %llu", (unsigned long long)(mid.ops_run - before.ops_run));
    float v[1000];
    CHECK(wgt_tensor_read(kept, v, sizeof v) == WGT_OK && v[999] == 1998.0f, "%s", wgt_last_error());
    wgt_stats after = stats_of(ctx);
    CHECK(after.ops_skipped >= mid.ops_skipped + 1, "the dropped exp was run");
    CHECK(after.ops_run >= mid.ops_run + 1, "the kept op did not run");
    /* wgt_eval runs what a tensor needs; a later read just copies. */
    wgt_tensor *z = wgt_add(kept, kept);
    CHECK(wgt_eval(1, &z) == WGT_OK, "%s", wgt_last_error());
    CHECK(stats_of(ctx).ops_run >= after.ops_run + 1, "wgt_eval ran nothing");
    CHECK(wgt_tensor_read(z, v, sizeof v) == WGT_OK && v[10] == 40.0f, "%s", wgt_last_error());
    CHECK_ERROR(wgt_eval(-1, NULL) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "-1");
    CHECK(wgt_eval(2, (wgt_tensor *const[]){NULL, z}) == WGT_OK, "NULL entries are skipped");
    /* Host writes after recording: the recorded op sees the old values. */
    wgt_tensor *w = wgt_zeros(ctx, WGT_F32, 1, s);
    wgt_tensor *w2 = wgt_add_scalar(w, 1.0);
    float *host = wgt_tensor_data_mut(w);
    CHECK(host != NULL, "%s", wgt_last_error());
    if (host) host[0] = 100;
    CHECK(wgt_tensor_read(w2, v, sizeof v) == WGT_OK && v[0] == 1.0f, "the op saw a later host write: %g", v[0]);
    wgt_release(a), wgt_release(kept), wgt_release(z), wgt_release(w), wgt_release(w2);
}

TEST(engine_fusion_gives_the_same_bits_in_fewer_launches) {
    wgt_backend_kind kinds[2] = {WGT_BACKEND_WEBGPU, WGT_BACKEND_CPU};
    for (int k = 0; k < 2; k++) {
        wgt_context *on = k == 0 ? test_webgpu_context() : context_with_fusion(WGT_BACKEND_CPU, 1);
        if (!on) continue;
        if (k == 0) wgt_context_release(on), on = context_with_fusion(WGT_BACKEND_WEBGPU, 1);
        wgt_context *off = context_with_fusion(kinds[k], 0);
        CHECK(on && off, "contexts: %s", wgt_last_error());
        if (!on || !off) return;
        wgt_tensor *x, *w, *b, *x2, *w2, *b2;
        make_inputs(on, &x, &w, &b);
        make_inputs(off, &x2, &w2, &b2);
        wgt_context_sync(on), wgt_context_sync(off);
        wgt_stats s0 = stats_of(on), o0 = stats_of(off);
        wgt_tensor *r_on = chain(x, w, b), *r_off = chain(x2, w2, b2);
        float *a = read_f32(r_on), *c = read_f32(r_off);
        CHECK(a && c, "%s", wgt_last_error());
        size_t n = (size_t)wgt_tensor_numel(r_on);
        size_t bad = 0;
        for (size_t i = 0; a && c && i < n; i++) bad += memcmp(&a[i], &c[i], 4) != 0;
        CHECK(bad == 0, "[%s] %zu of %zu elements differ between fused and op-by-op", kinds[k] == WGT_BACKEND_CPU ? "cpu" : "webgpu", bad, n);
        wgt_stats s1 = stats_of(on), o1 = stats_of(off);
        if (kinds[k] == WGT_BACKEND_WEBGPU && s1.ops_fused > 0) {
            CHECK(s1.launches - s0.launches < o1.launches - o0.launches, "fusion made %llu launches, op by op %llu",
                  (unsigned long long)(s1.launches - s0.launches), (unsigned long long)(o1.launches - o0.launches));
        }
        CHECK(o1.ops_fused == o0.ops_fused, "fusion was off but %llu ops fused", (unsigned long long)(o1.ops_fused - o0.ops_fused));
        /* A reference in float64 for a few elements (the f16 round trip bounds the error). */
        float xs[37 * 129];
        wgt_tensor_read(x, xs, sizeof xs);
        free(a), free(c);
        wgt_release(x), wgt_release(w), wgt_release(b), wgt_release(r_on);
        wgt_release(x2), wgt_release(w2), wgt_release(b2), wgt_release(r_off);
        wgt_context_release(on), wgt_context_release(off);
    }
}

TEST_BACKENDS(engine_graph_replays_match_eager_results) {
    static const int64_t sx[2] = {37, 129};
    char name_x[32], name_w[32];
    snprintf(name_x, sizeof name_x, "x_%s", test_backend_name());
    snprintf(name_w, sizeof name_w, "w_%s", test_backend_name());
    wgt_tensor *px = wgt_graph_input(ctx, name_x, WGT_F32, 2, sx);
    wgt_tensor *pw = wgt_graph_input(ctx, name_w, WGT_F32, 2, (const int64_t[]){37, 1});
    wgt_tensor *bias = wgt_rand_uniform(ctx, WGT_F32, 1, (const int64_t[]){129}, -1, 1, 5); /* a constant */
    CHECK(px && pw && bias, "%s", wgt_last_error());
    wgt_tensor *y = chain(px, pw, bias);
    wgt_tensor *s = wgt_sum(y, 1, (const int[]){1}, 0); /* a reduction after the fused part */
    wgt_tensor *cat = wgt_concat((wgt_tensor *const[]){y, y}, 2, 0); /* partial writes into a fresh tensor */
    CHECK(y && s && cat, "%s", wgt_last_error());
    CHECK_ERROR(wgt_tensor_data(y) == NULL, WGT_ERR_USAGE, "graph");
    CHECK_ERROR(wgt_eval(1, &y) != WGT_OK, WGT_ERR_USAGE, "graph");
    wgt_graph *g = wgt_graph_build(ctx, 3, (const wgt_binding[]){{"y", y}, {"rowsum", s}, {"cat", cat}});
    CHECK(g != NULL, "build: %s", wgt_last_error());
    if (!g) return;
    CHECK(wgt_graph_launches(g) >= 3, "launches %d", wgt_graph_launches(g));
    wgt_tensor *oy = wgt_zeros(ctx, WGT_F32, 2, sx), *os = wgt_zeros(ctx, WGT_F32, 1, (const int64_t[]){37});
    wgt_tensor *oc = wgt_zeros(ctx, WGT_F32, 2, (const int64_t[]){74, 129});
    for (int round = 0; round < 3; round++) {
        wgt_tensor *x = wgt_rand_uniform(ctx, WGT_F32, 2, sx, -2, 2, 100 + (uint64_t)round);
        wgt_tensor *wfull = wgt_rand_uniform(ctx, WGT_F32, 2, (const int64_t[]){37, 2}, -1, 1, 200 + (uint64_t)round);
        wgt_tensor *w = wgt_slice(wfull, 1, 1, 2, 1); /* a strided input: copied inside dispatch */
        wgt_status st = wgt_graph_dispatch(g, 2, (const wgt_binding[]){{name_x, x}, {name_w, w}}, 3,
                                           (const wgt_binding[]){{"cat", oc}, {"y", oy}, {"rowsum", os}});
        CHECK(st == WGT_OK, "dispatch %d: %s", round, wgt_last_error());
        wgt_tensor *ey = chain(x, w, bias), *es = wgt_sum(ey, 1, (const int[]){1}, 0);
        float *gy = read_f32(oy), *e = read_f32(ey), *gs = read_f32(os), *ee = read_f32(es), *gc = read_f32(oc);
        CHECK(gy && e && gs && ee && gc, "%s", wgt_last_error());
        size_t bad = 0;
        for (int i = 0; gy && e && i < 37 * 129; i++) bad += memcmp(&gy[i], &e[i], 4) != 0;
        for (int i = 0; gc && e && i < 2 * 37 * 129; i++) bad += memcmp(&gc[i], &e[i % (37 * 129)], 4) != 0;
        CHECK(bad == 0, "round %d: %zu elements differ from eager", round, bad);
        for (int i = 0; gs && ee && i < 37; i++)
            CHECK(fabsf(gs[i] - ee[i]) <= 1e-4f * (1 + fabsf(ee[i])), "row %d: %g vs %g", i, gs[i], ee[i]);
        free(gy), free(e), free(gs), free(ee), free(gc);
        wgt_release(x), wgt_release(wfull), wgt_release(w), wgt_release(ey), wgt_release(es);
    }
    wgt_graph_release(g);
    wgt_release(px), wgt_release(pw), wgt_release(bias), wgt_release(y), wgt_release(s), wgt_release(cat);
    wgt_release(oy), wgt_release(os), wgt_release(oc);
}

TEST_BACKENDS(engine_graph_bindings_are_checked_one_by_one) {
    static const int64_t s4[1] = {4}, s5[1] = {5};
    char nx[32];
    snprintf(nx, sizeof nx, "in_%s", test_backend_name());
    wgt_tensor *p = wgt_graph_input(ctx, nx, WGT_F32, 1, s4);
    CHECK_ERROR(wgt_graph_input(ctx, nx, WGT_F32, 1, s4) == NULL, WGT_ERR_INVALID_ARGUMENT, nx);
    CHECK_ERROR(wgt_graph_input(ctx, NULL, WGT_F32, 1, s4) == NULL, WGT_ERR_INVALID_ARGUMENT, "NULL");
    CHECK_ERROR(wgt_graph_input(ctx, "bad", (wgt_dtype)99, 1, s4) == NULL, WGT_ERR_DTYPE, "99");
    wgt_tensor *y = wgt_exp(p), *konst = wgt_ones(ctx, WGT_F32, 1, s4);
    CHECK_ERROR(wgt_graph_build(ctx, 1, (const wgt_binding[]){{"k", konst}}) == NULL, WGT_ERR_USAGE, "not computed");
    CHECK_ERROR(wgt_graph_build(ctx, 1, (const wgt_binding[]){{"p", p}}) == NULL, WGT_ERR_USAGE, "graph input itself");
    CHECK_ERROR(wgt_graph_build(ctx, 2, (const wgt_binding[]){{"y", y}, {"y", y}}) == NULL, WGT_ERR_INVALID_ARGUMENT, "'y'");
    CHECK_ERROR(wgt_graph_build(ctx, 0, NULL) == NULL, WGT_ERR_INVALID_ARGUMENT, "at least one");
    wgt_graph *g = wgt_graph_build(ctx, 1, (const wgt_binding[]){{"y", y}});
    CHECK(g != NULL, "%s", wgt_last_error());
    if (!g) return;
    wgt_tensor *x = wgt_ones(ctx, WGT_F32, 1, s4), *out = wgt_zeros(ctx, WGT_F32, 1, s4);
    wgt_tensor *x5 = wgt_ones(ctx, WGT_F32, 1, s5), *xi = wgt_ones(ctx, WGT_I32, 1, s4);
    wgt_tensor *ro = wgt_tensor_create(ctx, WGT_F32, 1, s4, WGT_USAGE_READABLE);
    wgt_tensor *dead = wgt_ones(ctx, WGT_F32, 1, s4);
    wgt_tensor_destroy(dead);
    const wgt_binding outs[1] = {{"y", out}};
    CHECK_ERROR(wgt_graph_dispatch(g, 0, NULL, 1, outs) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "not bound");
    CHECK_ERROR(wgt_graph_dispatch(g, 2, (const wgt_binding[]){{nx, x}, {"extra", x}}, 1, outs) != WGT_OK,
                WGT_ERR_INVALID_ARGUMENT, "no input named 'extra'");
    CHECK_ERROR(wgt_graph_dispatch(g, 2, (const wgt_binding[]){{nx, x}, {nx, x}}, 1, outs) != WGT_OK,
                WGT_ERR_INVALID_ARGUMENT, "twice");
    CHECK_ERROR(wgt_graph_dispatch(g, 1, (const wgt_binding[]){{nx, xi}}, 1, outs) != WGT_OK, WGT_ERR_DTYPE, "i32");
    CHECK_ERROR(wgt_graph_dispatch(g, 1, (const wgt_binding[]){{nx, x5}}, 1, outs) != WGT_OK, WGT_ERR_SHAPE, "[5]");
    CHECK_ERROR(wgt_graph_dispatch(g, 1, (const wgt_binding[]){{nx, dead}}, 1, outs) != WGT_OK, WGT_ERR_DESTROYED,
                "destroyed");
    CHECK_ERROR(wgt_graph_dispatch(g, 1, (const wgt_binding[]){{nx, x}}, 1, (const wgt_binding[]){{"y", x}}) != WGT_OK,
                WGT_ERR_USAGE, "shares its storage");
    CHECK_ERROR(wgt_graph_dispatch(g, 1, (const wgt_binding[]){{nx, x}}, 1, (const wgt_binding[]){{"y", ro}}) != WGT_OK,
                WGT_ERR_USAGE, "writable");
    CHECK_ERROR(wgt_graph_dispatch(g, 1, (const wgt_binding[]){{nx, p}}, 1, outs) != WGT_OK, WGT_ERR_USAGE,
                "placeholder");
    CHECK_ERROR(wgt_graph_dispatch(g, 1, (const wgt_binding[]){{NULL, x}}, 1, outs) != WGT_OK,
                WGT_ERR_INVALID_ARGUMENT, "NULL name");
    CHECK_ERROR(wgt_graph_dispatch(NULL, 0, NULL, 0, NULL) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "NULL");
    wgt_context *other = test_new_context(WGT_BACKEND_CPU);
    wgt_tensor *ox = other ? wgt_ones(other, WGT_F32, 1, s4) : NULL;
    if (ox)
        CHECK_ERROR(wgt_graph_dispatch(g, 1, (const wgt_binding[]){{nx, ox}}, 1, outs) != WGT_OK,
                    WGT_ERR_CONTEXT_MISMATCH, "another context");
    /* Nothing above touched the output; a good dispatch still works. */
    float v[4];
    CHECK(wgt_tensor_read(out, v, sizeof v) == WGT_OK && v[0] == 0.0f, "a failed dispatch wrote the output");
    CHECK(wgt_graph_dispatch(g, 1, (const wgt_binding[]){{nx, x}}, 1, outs) == WGT_OK, "%s", wgt_last_error());
    CHECK(wgt_tensor_read(out, v, sizeof v) == WGT_OK && fabsf(v[3] - 2.7182817f) < 1e-6f, "exp(1) = %g", v[3]);
    wgt_release(ox);
    wgt_context_release(other);
    wgt_graph_release(g);
    wgt_release(p), wgt_release(y), wgt_release(konst), wgt_release(x), wgt_release(out), wgt_release(x5);
    wgt_release(xi), wgt_release(ro), wgt_release(dead);
}

TEST_BACKENDS(engine_graph_checks_indices_from_inputs_when_it_runs) {
    char ni[32];
    snprintf(ni, sizeof ni, "ids_%s", test_backend_name());
    wgt_tensor *table = wgt_arange(ctx, WGT_F32, 0, 12, 1);
    wgt_tensor *t2 = wgt_reshape(table, 2, (const int64_t[]){4, 3});
    wgt_tensor *ids = wgt_graph_input(ctx, ni, WGT_I32, 1, (const int64_t[]){2});
    wgt_tensor *rows = wgt_gather_rows(t2, ids);
    CHECK(rows != NULL, "%s", wgt_last_error());
    wgt_graph *g = rows ? wgt_graph_build(ctx, 1, (const wgt_binding[]){{"rows", rows}}) : NULL;
    CHECK(g != NULL, "%s", wgt_last_error());
    int32_t good[2] = {3, 1}, bad[2] = {0, 4};
    wgt_tensor *ig = wgt_tensor_from_data(ctx, WGT_I32, 1, (const int64_t[]){2}, good, sizeof good, WGT_USAGE_DEFAULT);
    wgt_tensor *ib = wgt_tensor_from_data(ctx, WGT_I32, 1, (const int64_t[]){2}, bad, sizeof bad, WGT_USAGE_DEFAULT);
    wgt_tensor *out = wgt_zeros(ctx, WGT_F32, 2, (const int64_t[]){2, 3});
    if (g) {
        CHECK(wgt_graph_dispatch(g, 1, (const wgt_binding[]){{ni, ig}}, 1, (const wgt_binding[]){{"rows", out}}) ==
                  WGT_OK, "%s", wgt_last_error());
        float v[6];
        CHECK(wgt_tensor_read(out, v, sizeof v) == WGT_OK && v[0] == 9 && v[5] == 5, "gathered %g %g", v[0], v[5]);
        /* The device checks the indices as the graph runs: the dispatch does not wait for
         * them, the read of what they computed reports the bad one. */
        CHECK(wgt_graph_dispatch(g, 1, (const wgt_binding[]){{ni, ib}}, 1, (const wgt_binding[]){{"rows", out}}) ==
                  WGT_OK, "%s", wgt_last_error());
        CHECK_ERROR(wgt_tensor_read(out, v, sizeof v) != WGT_OK, WGT_ERR_INVALID_ARGUMENT,
                    "wgt_gather_rows: index 4 at position [1] of indices is out of range for 4 rows");
        CHECK(wgt_context_status(ctx) == WGT_OK, "the context stays usable");
    }
    wgt_graph_release(g);
    /* one_hot has no kernel of its own to check with: its indices are checked by a copy. */
    int32_t good2[4] = {2, 0, 1, 2}, bad2[4] = {1, 2, -1, 0};
    snprintf(ni, sizeof ni, "classes_%s", test_backend_name());
    wgt_tensor *ids2 = wgt_graph_input(ctx, ni, WGT_I32, 2, (const int64_t[]){2, 2});
    wgt_tensor *hot = wgt_one_hot(ids2, 3, WGT_F32);
    CHECK(hot != NULL, "%s", wgt_last_error());
    wgt_graph *g2 = hot ? wgt_graph_build(ctx, 1, (const wgt_binding[]){{"hot", hot}}) : NULL;
    CHECK(g2 != NULL, "%s", wgt_last_error());
    wgt_tensor *jg = wgt_tensor_from_data(ctx, WGT_I32, 2, (const int64_t[]){2, 2}, good2, sizeof good2, WGT_USAGE_DEFAULT);
    wgt_tensor *jb = wgt_tensor_from_data(ctx, WGT_I32, 2, (const int64_t[]){2, 2}, bad2, sizeof bad2, WGT_USAGE_DEFAULT);
    wgt_tensor *hout = wgt_full(ctx, WGT_F32, 3, (const int64_t[]){2, 2, 3}, NAN);
    if (g2) {
        CHECK(wgt_graph_dispatch(g2, 1, (const wgt_binding[]){{ni, jg}}, 1, (const wgt_binding[]){{"hot", hout}}) ==
                  WGT_OK, "%s", wgt_last_error());
        float v[12];
        CHECK(wgt_tensor_read(hout, v, sizeof v) == WGT_OK, "%s", wgt_last_error());
        for (int i = 0; i < 12; i++) CHECK(v[i] == (i % 3 == good2[i / 3] ? 1.0f : 0.0f), "hot[%d] = %g", i, v[i]);
        CHECK(wgt_graph_dispatch(g2, 1, (const wgt_binding[]){{ni, jb}}, 1, (const wgt_binding[]){{"hot", hout}}) ==
                  WGT_OK, "%s", wgt_last_error());
        /* wgt_context_sync is a synchronisation too: it reports the check, and so does the read. */
        CHECK_ERROR(wgt_context_sync(ctx) != WGT_OK, WGT_ERR_INVALID_ARGUMENT,
                    "wgt_one_hot: index -1 at position [1, 0] of indices is negative for 3 classes");
        CHECK_ERROR(wgt_tensor_read(hout, v, sizeof v) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "index -1");
        CHECK(wgt_context_status(ctx) == WGT_OK, "the context stays usable");
    }
    wgt_graph_release(g2);
    wgt_release(ids2), wgt_release(hot), wgt_release(jg), wgt_release(jb), wgt_release(hout);
    wgt_release(table), wgt_release(t2), wgt_release(ids), wgt_release(rows), wgt_release(ig), wgt_release(ib);
    wgt_release(out);
}

TEST_BACKENDS(engine_async_reads_share_a_submission_and_finish) {
    static const int64_t s[2] = {64, 33};
    wgt_tensor *a = wgt_rand_uniform(ctx, WGT_F32, 2, s, -1, 1, 3);
    wgt_tensor *b = wgt_mul_scalar(a, 3.0), *bt = wgt_transpose(b, 0, 1);
    wgt_tensor *h = wgt_cast(a, WGT_F16), *hs = wgt_slice(h, 1, 1, 32, 3); /* an odd f16 offset */
    float va[64 * 33], vb[64 * 33], vt[33 * 64], ra[64 * 33];
    uint16_t vh[64 * 11], rh[64 * 11];
    wgt_read *r1 = wgt_read_begin(b, vb, sizeof vb), *r2 = wgt_read_begin(bt, vt, sizeof vt);
    wgt_read *r3 = wgt_read_begin(hs, vh, sizeof vh);
    CHECK(r1 && r2 && r3, "%s", wgt_last_error());
    wgt_tensor *later = wgt_add(b, b); /* recorded after the requests: not held back */
    int done = 0;
    for (int spin = 0; r1 && spin < 100000 && !done; spin++) CHECK(wgt_read_poll(r1, &done) == WGT_OK, "%s", wgt_last_error());
    if (r1 && !done) CHECK(wgt_read_wait(r1) == WGT_OK, "%s", wgt_last_error());
    CHECK(r2 && wgt_read_wait(r2) == WGT_OK && r3 && wgt_read_wait(r3) == WGT_OK, "%s", wgt_last_error());
    CHECK(wgt_tensor_read(a, ra, sizeof ra) == WGT_OK && wgt_tensor_read(hs, rh, sizeof rh) == WGT_OK, "%s",
          wgt_last_error());
    int bad = 0;
    for (int i = 0; i < 64; i++)
        for (int j = 0; j < 33; j++) {
            bad += vb[i * 33 + j] != ra[i * 33 + j] * 3.0f;
            bad += vt[j * 64 + i] != vb[i * 33 + j];
        }
    bad += memcmp(vh, rh, sizeof vh) != 0;
    CHECK(bad == 0, "%d values differ", bad);
    CHECK_ERROR(wgt_read_begin(b, va, sizeof va - 1) == NULL, WGT_ERR_USAGE, "byte count");
    CHECK_ERROR(wgt_read_poll(NULL, &done) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "NULL");
    /* Released before it finished: nothing is written afterwards, nothing leaks. */
    wgt_read *gone = wgt_read_begin(later, va, sizeof va);
    CHECK(gone != NULL, "%s", wgt_last_error());
    wgt_read_release(gone);
    wgt_read_release(r1), wgt_read_release(r2), wgt_read_release(r3);
    wgt_release(a), wgt_release(b), wgt_release(bt), wgt_release(h), wgt_release(hs), wgt_release(later);
}

TEST(engine_device_loss_fails_pending_work_with_the_cause) {
    wgt_context *gpu = test_webgpu_context();
    if (!gpu) return;
    wgt_tensor *a = wgt_arange(gpu, WGT_F32, 0, 100, 1);
    wgt_tensor *b = wgt_exp(a), *c = wgt_mul_scalar(a, 2.0);
    float vc[100];
    wgt_read *r = wgt_read_begin(c, vc, sizeof vc); /* in flight on the device */
    CHECK(r != NULL, "%s", wgt_last_error());
    CHECK(wgt_context_simulate_device_loss(gpu) == WGT_OK, "%s", wgt_last_error());
    float v[100];
    CHECK_ERROR(wgt_tensor_read(b, v, sizeof v) != WGT_OK, WGT_ERR_DEVICE_LOST, "lost");
    CHECK_ERROR(wgt_eval(1, &b) != WGT_OK, WGT_ERR_DEVICE_LOST, "lost");
    if (r) CHECK_ERROR(wgt_read_wait(r) != WGT_OK, WGT_ERR_DEVICE_LOST, "lost");
    wgt_read_release(r);
    wgt_release(a), wgt_release(b), wgt_release(c);
    wgt_context_release(gpu);
}

/* Memory of a 1000-op chain of 256 KiB tensors, each released once the next is recorded: the
 * outputs take memory when their step runs (not when the op is recorded), and each
 * intermediate frees it after its last reader ran, so the peak stays near the live set (input,
 * output, one intermediate) instead of the chain's 250 MiB. WebGPU: the device's peak; CPU:
 * the host heap in use, measured after recording and after the read; either way at most 3x
 * the live set. */
TEST_BACKENDS(engine_memory_of_a_long_chain_stays_near_its_live_set) {
    int gpu = wgt_context_backend(ctx) == WGT_BACKEND_WEBGPU;
    if (!gpu && SANITIZED) {
        test_skip("the sanitizer's allocator makes heap figures mean something else");
        return;
    }
    static const int64_t s[1] = {1 << 16}; /* 256 KiB of f32 */
    wgt_tensor *x = wgt_rand_uniform(ctx, WGT_F32, 1, s, -1, 1, 9);
    wgt_context_trim(ctx);
    long long heap = test_heap_in_use(), recorded = 0;
    wgt_tensor *y = wgt_retain(x);
    for (int i = 0; i < 1000; i++) {
        wgt_tensor *next = i % 2 ? wgt_mul_scalar(y, 0.5) : wgt_add_scalar(y, 0.25);
        wgt_release(y);
        y = next;
    }
    recorded = test_heap_in_use() - heap;
    float v[4];
    wgt_tensor *head = wgt_slice(y, 0, 0, 4, 1);
    CHECK(wgt_tensor_read(head, v, sizeof v) == WGT_OK, "%s", wgt_last_error());
    long long after = test_heap_in_use() - heap;
    double live = 3.0 * (double)s[0] * 4;
    if (gpu) {
        wgt_stats st = stats_of(ctx);
        CHECK(st.device_bytes_peak <= 3 * live, "peak %.1f MiB for a live set of %.1f MiB",
              st.device_bytes_peak / 1048576.0, live / 1048576.0);
    } else {
        /* Besides the live set, the 1000 pending nodes' bookkeeping (~1.3 KiB each). */
        CHECK(recorded <= 3 * live, "recording the chain took %.1f MiB of heap; its live set is %.1f MiB",
              recorded / 1048576.0, live / 1048576.0);
        CHECK(after <= 3 * live, "running the chain left %.1f MiB of heap; its live set is %.1f MiB", after / 1048576.0,
              live / 1048576.0);
    }
    wgt_release(head), wgt_release(x), wgt_release(y);
}

/* Scalar operands become constants of the fused kernel: every type gives the op-by-op bits,
 * and a graph keeps a one-element tensor the caller holds as a binding (it may change). */
TEST(engine_fused_constants_match_op_by_op_in_every_type) {
    wgt_context *probe = test_webgpu_context();
    if (!probe) return;
    wgt_context_release(probe);
    wgt_context *on = context_with_fusion(WGT_BACKEND_WEBGPU, 1), *off = context_with_fusion(WGT_BACKEND_WEBGPU, 0);
    static const wgt_dtype types[4] = {WGT_F32, WGT_F16, WGT_I32, WGT_U32};
    static const int64_t s[1] = {301};
    for (int t = 0; t < 4 && on && off; t++) {
        uint32_t got[2][301] = {{0}};
        wgt_context *cs[2] = {on, off};
        for (int c = 0; c < 2; c++) {
            wgt_tensor *x0 = wgt_rand_uniform(cs[c], WGT_F32, 1, s, -50, 50, 77), *x = wgt_cast(x0, types[t]);
            wgt_tensor *a = wgt_mul_scalar(x, 3.0), *b = wgt_add_scalar(a, 7.0), *d = wgt_sub_scalar(b, 2.0);
            wgt_tensor *e = wgt_maximum(d, x), *f = wgt_div_scalar(e, 5.0);
            wgt_release(x0), wgt_release(x), wgt_release(a), wgt_release(b), wgt_release(d), wgt_release(e);
            size_t n = wgt_tensor_nbytes(f);
            CHECK(wgt_tensor_read(f, got[c], n) == WGT_OK, "%s", wgt_last_error());
            wgt_release(f);
        }
        CHECK(memcmp(got[0], got[1], sizeof got[0]) == 0, "%s: fused constants differ from op by op",
              wgt_dtype_name(types[t]));
    }
    if (on) {
        wgt_tensor *px = wgt_graph_input(on, "const_x", WGT_F32, 1, s);
        wgt_tensor *k = wgt_full(on, WGT_F32, 0, NULL, 2.0);
        wgt_tensor *y = wgt_mul(px, k), *z = wgt_add_scalar(y, 1.0);
        wgt_graph *g = wgt_graph_build(on, 1, (const wgt_binding[]){{"z", z}});
        wgt_tensor *x = wgt_ones(on, WGT_F32, 1, s), *out = wgt_zeros(on, WGT_F32, 1, s);
        float v[301];
        CHECK(g && wgt_graph_dispatch(g, 1, (const wgt_binding[]){{"const_x", x}}, 1, (const wgt_binding[]){{"z", out}}) ==
                       WGT_OK && wgt_tensor_read(out, v, sizeof v) == WGT_OK && v[300] == 3.0f,
              "first dispatch: %s", wgt_last_error());
        float five = 5.0f;
        CHECK(wgt_tensor_write(k, &five, sizeof five) == WGT_OK, "%s", wgt_last_error());
        CHECK(g && wgt_graph_dispatch(g, 1, (const wgt_binding[]){{"const_x", x}}, 1, (const wgt_binding[]){{"z", out}}) ==
                       WGT_OK && wgt_tensor_read(out, v, sizeof v) == WGT_OK && v[0] == 6.0f,
              "a constant the caller changed was baked in: %g", v[0]);
        wgt_graph_release(g);
        wgt_release(px), wgt_release(k), wgt_release(y), wgt_release(z), wgt_release(x), wgt_release(out);
    }
    wgt_context_release(on), wgt_context_release(off);
}

/* Trim gives the compiled kernels back too; the next use compiles them again and gets the
 * same results. (The caches are also bounded, at WGT_WGPU_PIPELINE_CACHE_MAX each, which a
 * test on lavapipe cannot reach in reasonable time; the fuzzer does.) */
TEST(engine_trim_gives_kernels_back_and_they_compile_again) {
    wgt_context *gpu = test_webgpu_context();
    if (!gpu) return;
    static const int64_t s[1] = {37};
    wgt_tensor *x = wgt_arange(gpu, WGT_F32, 0, 37, 1), *w = wgt_full(gpu, WGT_F32, 1, s, 0.5);
    float before[37], after[37];
    for (int round = 0; round < 2; round++) {
        wgt_tensor *y = wgt_mul(x, w), *z = wgt_exp(y), *r = wgt_sum(z, 0, NULL, 0);
        CHECK(wgt_tensor_read(z, round ? after : before, sizeof before) == WGT_OK, "%s", wgt_last_error());
        float total;
        CHECK(wgt_tensor_read(r, &total, sizeof total) == WGT_OK, "%s", wgt_last_error());
        CHECK(stats_of(gpu).kernels_cached > 0, "round %d: no kernel cached after running ops", round);
        wgt_release(y), wgt_release(z), wgt_release(r);
        CHECK(wgt_context_trim(gpu) == WGT_OK, "%s", wgt_last_error());
        CHECK(stats_of(gpu).kernels_cached == 0, "round %d: %llu kernels kept after trim", round,
              (unsigned long long)stats_of(gpu).kernels_cached);
    }
    CHECK(memcmp(before, after, sizeof before) == 0, "results changed after the kernels were compiled again");
    for (int i = 0; i < 37; i++) CHECK(fabsf(before[i] - expf(0.5f * (float)i)) <= 1e-5f * expf(0.5f * (float)i), "x[%d] = %g", i, before[i]);
    wgt_release(x), wgt_release(w);
    wgt_context_release(gpu);
}

/* concat and stack may mix tensors with data (constants of the graph) and values computed
 * from graph inputs, in either order. */
TEST_BACKENDS(engine_graph_concat_mixes_constants_and_inputs) {
    char name[32];
    snprintf(name, sizeof name, "part_%s", test_backend_name());
    static const int64_t s[2] = {3, 5};
    wgt_tensor *p = wgt_graph_input(ctx, name, WGT_F32, 2, s);
    wgt_tensor *k = wgt_arange(ctx, WGT_F32, 100, 115, 1), *kk = k ? wgt_reshape(k, 2, s) : NULL;
    CHECK(p && kk, "%s", wgt_last_error());
    wgt_tensor *c1 = wgt_concat((wgt_tensor *const[]){kk, p}, 2, 0);
    CHECK(c1 != NULL, "concat constant, input: %s", wgt_last_error());
    wgt_tensor *c2 = wgt_stack((wgt_tensor *const[]){p, kk, p}, 3, 2);
    CHECK(c2 != NULL, "stack input, constant, input: %s", wgt_last_error());
    wgt_graph *g = c1 && c2 ? wgt_graph_build(ctx, 2, (const wgt_binding[]){{"c1", c1}, {"c2", c2}}) : NULL;
    CHECK(g != NULL, "build: %s", wgt_last_error());
    if (g) {
        wgt_tensor *x = wgt_arange(ctx, WGT_F32, 0, 15, 1), *xs = wgt_reshape(x, 2, s);
        wgt_tensor *o1 = wgt_full(ctx, WGT_F32, 2, (const int64_t[]){6, 5}, NAN);
        wgt_tensor *o2 = wgt_full(ctx, WGT_F32, 3, (const int64_t[]){3, 5, 3}, NAN);
        CHECK(wgt_graph_dispatch(g, 1, (const wgt_binding[]){{name, xs}}, 2,
                                 (const wgt_binding[]){{"c1", o1}, {"c2", o2}}) == WGT_OK,
              "dispatch: %s", wgt_last_error());
        float v1[30], v2[45];
        CHECK(wgt_tensor_read(o1, v1, sizeof v1) == WGT_OK && wgt_tensor_read(o2, v2, sizeof v2) == WGT_OK, "%s",
              wgt_last_error());
        for (int i = 0; i < 30; i++) CHECK(v1[i] == (i < 15 ? 100.0f + (float)i : (float)(i - 15)), "c1[%d] = %g", i, v1[i]);
        for (int i = 0; i < 15; i++)
            for (int j = 0; j < 3; j++)
                CHECK(v2[i * 3 + j] == (j == 1 ? 100.0f + (float)i : (float)i), "c2[%d][%d] = %g", i, j, v2[i * 3 + j]);
        wgt_release(x), wgt_release(xs), wgt_release(o1), wgt_release(o2);
        wgt_graph_release(g);
    }
    wgt_release(p), wgt_release(k), wgt_release(kk), wgt_release(c1), wgt_release(c2);
}

/* A chain of adds whose intermediates nobody holds is one kernel that stores only its
 * result: each intermediate is read by the next step inside the kernel, never outside it. */
TEST(engine_fused_chain_stores_only_its_result) {
    wgt_context *gpu = test_webgpu_context();
    if (!gpu) return;
    wgt_context_release(gpu);
    gpu = context_with_fusion(WGT_BACKEND_WEBGPU, 1);
    CHECK(gpu, "%s", wgt_last_error());
    if (!gpu) return;
    int64_t n = 257;
    wgt_tensor *b = wgt_full(gpu, WGT_F32, 1, &n, 0.25), *c = wgt_full(gpu, WGT_F32, 1, &n, 1);
    CHECK(b && c && wgt_eval(1, &b) == WGT_OK && wgt_eval(1, &c) == WGT_OK, "%s", wgt_last_error());
    wgt_context_sync(gpu);
    wgt_stats s0 = stats_of(gpu);
    const int steps = 40; /* within one kernel's step limit */
    for (int i = 0; i < steps && c; i++) {
        wgt_tensor *next = wgt_add(c, b);
        wgt_release(c);
        c = next;
    }
    float v[257];
    CHECK(c && wgt_tensor_read(c, v, sizeof v) == WGT_OK && v[256] == 1 + 0.25f * steps, "%s", wgt_last_error());
    wgt_stats s1 = stats_of(gpu);
    CHECK(s1.launches - s0.launches == 1, "%d fused adds took %llu launches", steps,
          (unsigned long long)(s1.launches - s0.launches));
    wgt_release(b), wgt_release(c);
    wgt_context_release(gpu);
}
