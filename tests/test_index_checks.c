/*
 * Index checks on the device (src/core/index_checks.c): indices that pending work computes
 * (an argmax, a cast) are not read back when an indexing op is recorded; the device checks
 * them as the op runs and the next synchronisation (a read, wgt_context_sync, an asynchronous
 * read's wait) reports a bad one with its position and value, through everything computed
 * from it. Counters show that recording runs nothing and submits nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

/* Indices computed on the device: argmax over rows of logits whose maximum sits at want[i]. */
static wgt_tensor *argmax_indices(wgt_context *ctx, int n, const int *want, int width) {
    float *v = calloc((size_t)n * (size_t)width, sizeof *v);
    for (int i = 0; v && i < n; i++) v[i * width + want[i]] = 1;
    int64_t shape[2] = {n, width};
    wgt_tensor *logits = v ? wgt_tensor_from_data(ctx, WGT_F32, 2, shape, v, sizeof *v * (size_t)n * (size_t)width,
                                                  WGT_USAGE_DEFAULT)
                           : NULL;
    wgt_tensor *am = logits ? wgt_argmax(logits, 1, 0) : NULL;
    free(v);
    wgt_release(logits);
    return am;
}

static wgt_stats stats_of(wgt_context *ctx) {
    wgt_stats s;
    memset(&s, 0, sizeof s);
    CHECK(wgt_context_stats(ctx, &s) == WGT_OK, "%s", wgt_last_error());
    return s;
}

/* Recording a gather of argmax indices runs nothing; the read of the gather (and of what is
 * computed from it, and an asynchronous read) reports the bad index; unrelated work stays good. */
TEST_BACKENDS(index_checks_device_indices_reported_at_the_read) {
    float tv[15];
    for (int i = 0; i < 15; i++) tv[i] = (float)i;
    wgt_tensor *table = wgt_tensor_from_data(ctx, WGT_F32, 2, (int64_t[]){5, 3}, tv, sizeof tv, WGT_USAGE_DEFAULT);
    wgt_tensor *am = argmax_indices(ctx, 3, (const int[]){2, 7, 4}, 8);
    wgt_stats before = stats_of(ctx);
    wgt_tensor *g = wgt_gather_rows(table, am);
    wgt_stats after = stats_of(ctx);
    CHECK(g != NULL, "the gather is recorded: %s", wgt_last_error());
    CHECK(after.ops_run == before.ops_run && after.submits == before.submits,
          "recording ran %llu ops and submitted %llu times",
          (unsigned long long)(after.ops_run - before.ops_run), (unsigned long long)(after.submits - before.submits));
    wgt_tensor *y = g ? wgt_mul_scalar(g, 2) : NULL, *fine = wgt_add_scalar(table, 1);
    float out[9], f[15];
    /* An asynchronous read reports at its wait (the CPU backend reads at once, at the begin). */
    wgt_read *r = NULL;
    CHECK_ERROR(!y || !(r = wgt_read_begin(y, out, sizeof out)) || wgt_read_wait(r) != WGT_OK, WGT_ERR_INVALID_ARGUMENT,
                "wgt_gather_rows: index 7 at position [1] of indices is out of range for 5 rows (valid: 0..4)");
    wgt_read_release(r);
    CHECK_ERROR(wgt_tensor_read(g, out, sizeof out) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "index 7 at position [1]");
    CHECK_ERROR(wgt_tensor_read(y, out, sizeof out) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "index 7 at position [1]");
    CHECK(wgt_tensor_read(fine, f, sizeof f) == WGT_OK && f[14] == 15, "unrelated work: %s", wgt_last_error());
    CHECK(wgt_context_status(ctx) == WGT_OK, "the context stays usable: %s", wgt_last_error());
    /* Valid device indices gather exactly. */
    wgt_tensor *ok = argmax_indices(ctx, 3, (const int[]){4, 0, 2}, 8), *g2 = ok ? wgt_gather_rows(table, ok) : NULL;
    float want[9] = {12, 13, 14, 0, 1, 2, 6, 7, 8};
    CHECK(g2 && wgt_tensor_read(g2, out, sizeof out) == WGT_OK && !memcmp(out, want, sizeof want), "gathered: %s",
          wgt_last_error());
    wgt_tensor *all[] = {table, am, g, y, fine, ok, g2};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) wgt_release(all[i]);
}

/* A decode loop: token -> embedding row -> logits -> argmax -> next token, 24 steps recorded
 * without one flush or submit, then read once; exact (integer-valued) against the host. */
TEST_BACKENDS(index_checks_decode_loop_does_not_sync) {
    enum { V = 16, D = 4, STEPS = 24 };
    float emb[V * D], w[D * V];
    uint64_t seed = 7;
    for (int i = 0; i < V * D; i++) emb[i] = (float)((seed = seed * 6364136223846793005u + 1442695040888963407u) >> 60);
    for (int i = 0; i < D * V; i++) w[i] = (float)((int)((seed = seed * 6364136223846793005u + 1) >> 61) - 3);
    wgt_tensor *table = wgt_tensor_from_data(ctx, WGT_F32, 2, (int64_t[]){V, D}, emb, sizeof emb, WGT_USAGE_DEFAULT);
    wgt_tensor *wt = wgt_tensor_from_data(ctx, WGT_F32, 2, (int64_t[]){D, V}, w, sizeof w, WGT_USAGE_DEFAULT);
    wgt_tensor *tok = wgt_tensor_from_data(ctx, WGT_I32, 1, (int64_t[]){1}, (int32_t[]){3}, 4, WGT_USAGE_DEFAULT);
    int host = 3;
    wgt_stats before = stats_of(ctx);
    for (int s = 0; s < STEPS && tok; s++) {
        wgt_tensor *x = wgt_gather_rows(table, tok), *logits = x ? wgt_matmul(x, wt) : NULL;
        wgt_tensor *next = logits ? wgt_argmax(logits, 1, 0) : NULL;
        wgt_release(x), wgt_release(logits), wgt_release(tok);
        tok = next;
        int best = 0;
        float bv = 0;
        for (int j = 0; j < V; j++) {
            float acc = 0;
            for (int k = 0; k < D; k++) acc += emb[host * D + k] * w[k * V + j];
            if (j == 0 || acc > bv) bv = acc, best = j;
        }
        host = best;
    }
    wgt_stats after = stats_of(ctx);
    CHECK(tok != NULL, "%s", wgt_last_error());
    CHECK(after.ops_run == before.ops_run && after.submits == before.submits,
          "the loop ran %llu ops and submitted %llu times before the read",
          (unsigned long long)(after.ops_run - before.ops_run), (unsigned long long)(after.submits - before.submits));
    int32_t got = -1;
    CHECK(tok && wgt_tensor_read(tok, &got, 4) == WGT_OK && got == host, "token %d, want %d (%s)", got, host,
          wgt_last_error());
    wgt_release(tok), wgt_release(table), wgt_release(wt);
}

/* set_rows, index_select and one_hot with indices computed on the device: exact when valid
 * (set_rows: the last of repeats wins), reported by wgt_context_sync and the reads when not. */
TEST_BACKENDS(index_checks_set_rows_select_one_hot) {
    float src[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, out[12];
    wgt_tensor *rows = wgt_tensor_from_data(ctx, WGT_F32, 2, (int64_t[]){4, 3}, src, sizeof src, WGT_USAGE_DEFAULT);
    wgt_tensor *dst = wgt_zeros(ctx, WGT_F32, 2, (int64_t[]){4, 3});
    /* Indices [2, 0, 2, 3] cast from f32 on the device. */
    wgt_tensor *fi = wgt_tensor_from_data(ctx, WGT_F32, 1, (int64_t[]){4}, (float[]){2, 0, 2, 3}, 16, WGT_USAGE_DEFAULT);
    wgt_tensor *ii = fi ? wgt_cast(fi, WGT_I32) : NULL;
    wgt_stats before = stats_of(ctx);
    CHECK(wgt_set_rows(dst, ii, rows) == WGT_OK, "%s", wgt_last_error());
    wgt_tensor *sel = wgt_index_select(rows, 0, ii), *hot = wgt_one_hot(ii, 4, WGT_F32);
    wgt_stats after = stats_of(ctx);
    CHECK(after.ops_run == before.ops_run && after.submits == before.submits, "recording ran work");
    float want[12] = {4, 5, 6, 0, 0, 0, 7, 8, 9, 10, 11, 12};
    CHECK(wgt_tensor_read(dst, out, sizeof out) == WGT_OK && !memcmp(out, want, sizeof want),
          "set_rows: %g %g %g %g (%s)", out[0], out[3], out[6], out[9], wgt_last_error());
    float hv[16];
    CHECK(sel && wgt_tensor_read(sel, out, sizeof out) == WGT_OK && out[0] == 7 && out[3] == 1 && out[11] == 12,
          "index_select: %s", wgt_last_error());
    CHECK(hot && wgt_tensor_read(hot, hv, sizeof hv) == WGT_OK && hv[2] == 1 && hv[4] == 1 && hv[15] == 1 &&
              hv[0] == 0,
          "one_hot: %s", wgt_last_error());
    wgt_release(sel), wgt_release(hot), wgt_release(ii), wgt_release(fi);
    /* Bad ones: 9 at position [1] (u32 from a cast), -1 at [2] (i32). */
    fi = wgt_tensor_from_data(ctx, WGT_F32, 1, (int64_t[]){4}, (float[]){0, 9, 1, 2}, 16, WGT_USAGE_DEFAULT);
    wgt_tensor *ui = fi ? wgt_cast(fi, WGT_U32) : NULL;
    wgt_tensor *fn = wgt_tensor_from_data(ctx, WGT_F32, 1, (int64_t[]){4}, (float[]){0, 1, -1, 2}, 16, WGT_USAGE_DEFAULT);
    wgt_tensor *ni = fn ? wgt_cast(fn, WGT_I32) : NULL;
    CHECK(wgt_set_rows(dst, ui, rows) == WGT_OK, "set_rows is recorded: %s", wgt_last_error());
    sel = wgt_index_select(rows, 0, ni);
    hot = wgt_one_hot(ui, 4, WGT_F32);
    CHECK(sel && hot, "recorded: %s", wgt_last_error());
    CHECK_ERROR(wgt_context_sync(ctx) != WGT_OK, WGT_ERR_INVALID_ARGUMENT,
                "wgt_set_rows: index 9 at position [1] of indices is out of range for 4 rows");
    CHECK_ERROR(wgt_tensor_read(dst, out, sizeof out) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "wgt_set_rows: index 9");
    CHECK_ERROR(wgt_tensor_read(sel, out, sizeof out) != WGT_OK, WGT_ERR_INVALID_ARGUMENT,
                "wgt_index_select: index -1 at position [2] of indices is negative");
    CHECK_ERROR(wgt_tensor_read(hot, hv, sizeof hv) != WGT_OK, WGT_ERR_INVALID_ARGUMENT,
                "wgt_one_hot: index 9 at position [1] of indices is out of range for 4 classes");
    CHECK(wgt_context_sync(ctx) == WGT_OK, "reported once: %s", wgt_last_error());
    wgt_tensor *all[] = {rows, dst, fi, ui, fn, ni, sel, hot};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) wgt_release(all[i]);
}

/* More checked ops than the record has slots, run in one flush: the record is read in the
 * middle, and a bad index early in the chain still fails the sum at its end. The gathers
 * cycle through more index tensors than a run remembers checks of, so none shares a slot. */
TEST_BACKENDS(index_checks_more_than_the_record_holds) {
    enum { KINDS = 17 };
    wgt_tensor *table = wgt_arange(ctx, WGT_F32, 0, 4, 1);
    wgt_tensor *good = wgt_tensor_from_data(ctx, WGT_I32, 1, (int64_t[]){2}, (int32_t[]){1, 3}, 8, WGT_USAGE_DEFAULT);
    wgt_tensor *bad = wgt_tensor_from_data(ctx, WGT_I32, 1, (int64_t[]){2}, (int32_t[]){1, 9}, 8, WGT_USAGE_DEFAULT);
    for (int pass = 0; pass < 2; pass++) {
        /* Computed by pending work, so the gathers cannot check them at the call. */
        wgt_tensor *gd[KINDS], *bd = wgt_add_scalar(bad, 0);
        for (int j = 0; j < KINDS; j++) gd[j] = wgt_add_scalar(good, 0);
        wgt_tensor *sum = wgt_zeros(ctx, WGT_F32, 1, (int64_t[]){2});
        for (int k = 0; k < 1100 && sum; k++) {
            wgt_tensor *g = wgt_gather_rows(table, pass && k == 3 ? bd : gd[k % KINDS]), *s2 = g ? wgt_add(sum, g) : NULL;
            wgt_release(g), wgt_release(sum);
            sum = s2;
        }
        CHECK(sum != NULL, "recorded: %s", wgt_last_error());
        float v[2] = {0};
        if (pass == 0)
            CHECK(sum && wgt_tensor_read(sum, v, sizeof v) == WGT_OK && v[0] == 1100 && v[1] == 3300,
                  "sum %g %g (%s)", v[0], v[1], wgt_last_error());
        else
            CHECK_ERROR(sum && wgt_tensor_read(sum, v, sizeof v) != WGT_OK, WGT_ERR_INVALID_ARGUMENT,
                        "wgt_gather_rows: index 9 at position [1]");
        wgt_release(sum), wgt_release(bd);
        for (int j = 0; j < KINDS; j++) wgt_release(gd[j]);
    }
    CHECK(wgt_context_status(ctx) == WGT_OK, "%s", wgt_last_error());
    wgt_release(table), wgt_release(good), wgt_release(bad);
}

/* Reads in flight keep their own verdicts: a loop that keeps up to LAG asynchronous reads
 * outstanding (as a decoder does) while later steps take new checks gets every good step's
 * values exactly and every bad step's error, never a neighbour's. Some steps take more than
 * 64 checks at once (no slot may share a bit with a read in flight), and the slots go round
 * the record's ring of 1024 more than once. */
TEST_BACKENDS(index_checks_reads_in_flight_keep_their_verdicts) {
    enum { STEPS = 600, LAG = 3, WIDE = 70 };
    float tv[15];
    for (int i = 0; i < 15; i++) tv[i] = (float)i;
    wgt_tensor *table = wgt_tensor_from_data(ctx, WGT_F32, 2, (int64_t[]){5, 3}, tv, sizeof tv, WGT_USAGE_DEFAULT);
    wgt_tensor *ones = wgt_tensor_from_data(ctx, WGT_I32, 1, (int64_t[]){1}, (int32_t[]){1}, 4, WGT_USAGE_DEFAULT);
    wgt_read *pending[LAG] = {0};
    float out[LAG][3];
    int want[LAG] = {0}, failures = 0, goods = 0;
    for (int step = 0; step < STEPS + LAG; step++) {
        int slot = step % LAG;
        if (step >= LAG && want[slot] >= 0) { /* the oldest read: its own step's verdict */
            int w = want[slot], s0 = step - LAG;
            wgt_status st = wgt_read_wait(pending[slot]);
            if (w >= 5) {
                CHECK(st == WGT_ERR_INVALID_ARGUMENT && strstr(wgt_last_error(), "index 7 at position [0]"),
                      "step %d (index %d): %s", s0, w, wgt_last_error());
                failures++;
            } else {
                CHECK(st == WGT_OK && out[slot][0] == 2 * (3 * w) && out[slot][1] == 2 * (3 * w + 1) &&
                          out[slot][2] == 2 * (3 * w + 2),
                      "step %d (index %d): %g %g %g (%s)", s0, w, out[slot][0], out[slot][1], out[slot][2],
                      wgt_last_error());
                goods++;
            }
            wgt_read_release(pending[slot]);
            pending[slot] = NULL;
        }
        if (step >= STEPS) continue;
        int w = step % 7 == 3 ? 7 : step % 5;
        want[slot] = w;
        wgt_tensor *am = argmax_indices(ctx, 1, &w, 8);
        wgt_tensor *g = am ? wgt_gather_rows(table, am) : NULL, *y = g ? wgt_mul_scalar(g, 2) : NULL;
        /* Every 49th step (a good one) also takes WIDE checks of its own (values computed on the
         * device, so each is checked there), all good, before its read. More than 64 slots read
         * at once share bits, and a storage may then fail for a check it shares a bit with
         * (index_checks.c): these steps have no bad check among theirs. */
        wgt_tensor *extra = NULL;
        if (step % 49 == 11) {
            extra = wgt_zeros(ctx, WGT_F32, 2, (int64_t[]){1, 3});
            for (int k = 0; k < WIDE && extra; k++) {
                wgt_tensor *ix = wgt_add_scalar(ones, 0), *gx = ix ? wgt_gather_rows(table, ix) : NULL;
                wgt_tensor *sum = gx ? wgt_add(extra, gx) : NULL;
                wgt_release(ix), wgt_release(gx), wgt_release(extra);
                extra = sum;
            }
            CHECK(extra && wgt_eval(1, &extra) == WGT_OK, "step %d: %s", step, wgt_last_error());
        }
        /* The CPU backend reads at once: a bad step's read fails at its begin there. */
        pending[slot] = y ? wgt_read_begin(y, out[slot], sizeof out[slot]) : NULL;
        if (!pending[slot] && w >= 5) {
            CHECK(strstr(wgt_last_error(), "index 7 at position [0]"), "step %d: %s", step, wgt_last_error());
            failures++;
            want[slot] = -1;
        } else {
            CHECK(pending[slot] && (wgt_eval(1, &y) == WGT_OK || w >= 5), "step %d: %s", step, wgt_last_error());
        }
        if (extra) {
            float e[3];
            CHECK(wgt_tensor_read(extra, e, sizeof e) == WGT_OK && e[0] == 3 * WIDE && e[2] == 5 * WIDE,
                  "step %d: %g %g (%s)", step, e[0], e[2], wgt_last_error());
        }
        wgt_release(am), wgt_release(g), wgt_release(y), wgt_release(extra);
    }
    CHECK(failures == (STEPS + 3) / 7 && goods == STEPS - failures, "%d failed, %d good", failures, goods);
    CHECK(wgt_context_status(ctx) == WGT_OK, "%s", wgt_last_error());
    wgt_release(table), wgt_release(ones);
}

/* A graph whose gather feeds more work: a dispatch with a bad index fails the read of its
 * output (through the intermediate), and the next dispatch with good indices computes the
 * intermediate anew. */
TEST_BACKENDS(index_checks_graph_intermediate_recovers) {
    char name[32];
    snprintf(name, sizeof name, "ic_ids_%s", test_backend_name());
    float tv[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[4] = {0};
    wgt_tensor *table = wgt_tensor_from_data(ctx, WGT_F32, 2, (int64_t[]){4, 2}, tv, sizeof tv, WGT_USAGE_DEFAULT);
    wgt_tensor *ids = wgt_graph_input(ctx, name, WGT_I32, 1, (int64_t[]){2});
    wgt_tensor *g = ids ? wgt_gather_rows(table, ids) : NULL, *y = g ? wgt_mul_scalar(g, 10) : NULL;
    wgt_graph *graph = y ? wgt_graph_build(ctx, 1, (const wgt_binding[]){{"y", y}}) : NULL;
    CHECK(graph != NULL, "%s", wgt_last_error());
    wgt_tensor *bad = wgt_tensor_from_data(ctx, WGT_I32, 1, (int64_t[]){2}, (int32_t[]){0, 4}, 8, WGT_USAGE_DEFAULT);
    wgt_tensor *good = wgt_tensor_from_data(ctx, WGT_I32, 1, (int64_t[]){2}, (int32_t[]){3, 1}, 8, WGT_USAGE_DEFAULT);
    wgt_tensor *o1 = wgt_zeros(ctx, WGT_F32, 2, (int64_t[]){2, 2}), *o2 = wgt_zeros(ctx, WGT_F32, 2, (int64_t[]){2, 2});
    for (int round = 0; graph && round < 2; round++) {
        CHECK(wgt_graph_dispatch(graph, 1, (const wgt_binding[]){{name, bad}}, 1, (const wgt_binding[]){{"y", o1}}) ==
                  WGT_OK, "%s", wgt_last_error());
        if (round == 0)
            CHECK_ERROR(wgt_tensor_read(o1, out, sizeof out) != WGT_OK, WGT_ERR_INVALID_ARGUMENT,
                        "wgt_gather_rows: index 4 at position [1]");
        else
            CHECK_ERROR(wgt_context_sync(ctx) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "index 4 at position [1]");
        wgt_release(o1);
        o1 = wgt_zeros(ctx, WGT_F32, 2, (int64_t[]){2, 2});
        CHECK(wgt_graph_dispatch(graph, 1, (const wgt_binding[]){{name, good}}, 1, (const wgt_binding[]){{"y", o2}}) ==
                      WGT_OK &&
                  wgt_tensor_read(o2, out, sizeof out) == WGT_OK && out[0] == 70 && out[1] == 80 && out[2] == 30 &&
                  out[3] == 40,
              "round %d: %g %g %g %g (%s)", round, out[0], out[1], out[2], out[3], wgt_last_error());
    }
    wgt_graph_release(graph);
    wgt_tensor *all[] = {table, ids, g, y, bad, good, o1, o2};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) wgt_release(all[i]);
}

/* As above with the failed intermediate written in parts (a stack of a checked one-hot): the
 * next dispatch with a good index writes all of it anew, so the earlier failure goes. */
TEST_BACKENDS(index_checks_graph_intermediate_in_parts_recovers) {
    char name[32];
    snprintf(name, sizeof name, "ic_parts_%s", test_backend_name());
    wgt_tensor *ids = wgt_graph_input(ctx, name, WGT_I32, 0, NULL);
    wgt_tensor *hot = ids ? wgt_one_hot(ids, 4, WGT_U32) : NULL;
    wgt_tensor *pair = hot ? wgt_stack((wgt_tensor *const[]){hot, hot}, 2, 1) : NULL;
    wgt_tensor *y = pair ? wgt_transpose(pair, 0, 1) : NULL;
    wgt_graph *graph = y ? wgt_graph_build(ctx, 1, (const wgt_binding[]){{"y", y}}) : NULL;
    CHECK(graph != NULL, "%s", wgt_last_error());
    wgt_tensor *bad = wgt_tensor_from_data(ctx, WGT_I32, 0, NULL, (int32_t[]){-4}, 4, WGT_USAGE_DEFAULT);
    wgt_tensor *good = wgt_tensor_from_data(ctx, WGT_I32, 0, NULL, (int32_t[]){2}, 4, WGT_USAGE_DEFAULT);
    for (int round = 0; graph && round < 3; round++) {
        uint32_t out[8] = {9, 9, 9, 9, 9, 9, 9, 9};
        wgt_tensor *o1 = wgt_zeros(ctx, WGT_U32, 2, (int64_t[]){2, 4}), *o2 = wgt_zeros(ctx, WGT_U32, 2, (int64_t[]){2, 4});
        CHECK(wgt_graph_dispatch(graph, 1, (const wgt_binding[]){{name, bad}}, 1, (const wgt_binding[]){{"y", o1}}) ==
                  WGT_OK || wgt_last_status() == WGT_ERR_INVALID_ARGUMENT,
              "round %d: %s", round, wgt_last_error());
        CHECK_ERROR(wgt_tensor_read(o1, out, sizeof out) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "index -4");
        wgt_clear_error();
        wgt_status st = wgt_graph_dispatch(graph, 1, (const wgt_binding[]){{name, good}}, 1, (const wgt_binding[]){{"y", o2}});
        CHECK(st == WGT_OK && wgt_tensor_read(o2, out, sizeof out) == WGT_OK, "round %d: %s", round, wgt_last_error());
        for (int i = 0; i < 8; i++) CHECK(out[i] == (uint32_t)(i % 4 == 2), "round %d: out[%d] = %u", round, i, out[i]);
        wgt_release(o1), wgt_release(o2);
    }
    wgt_graph_release(graph);
    wgt_tensor *all[] = {ids, hot, pair, y, bad, good};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) wgt_release(all[i]);
}

/* A fresh context whose ring of check slots has had `slots` taken and read: a graph with one
 * checked gather dispatched that many times, then a sync. NULL after a failed CHECK. */
static wgt_context *context_with_slots_taken(int slots) {
    wgt_context *c = test_new_context(strcmp(test_backend_name(), "cpu") ? WGT_BACKEND_WEBGPU : WGT_BACKEND_CPU);
    wgt_tensor *table = c ? wgt_zeros(c, WGT_F32, 2, (int64_t[]){4, 1}) : NULL;
    wgt_tensor *at = table ? wgt_graph_input(c, "ring.at", WGT_I32, 1, (int64_t[]){1}) : NULL;
    wgt_tensor *rows = at ? wgt_gather_rows(table, at) : NULL;
    wgt_graph *g = rows ? wgt_graph_build(c, 1, (const wgt_binding[]){{"rows", rows}}) : NULL;
    wgt_tensor *one = c ? wgt_tensor_from_data(c, WGT_I32, 1, (int64_t[]){1}, (int32_t[]){2}, 4, WGT_USAGE_DEFAULT) : NULL;
    wgt_tensor *out = c ? wgt_zeros(c, WGT_F32, 2, (int64_t[]){1, 1}) : NULL;
    int ok = g && one && out;
    for (int i = 0; ok && i < slots; i++)
        ok = wgt_graph_dispatch(g, 1, (const wgt_binding[]){{"ring.at", one}}, 1, (const wgt_binding[]){{"rows", out}}) ==
             WGT_OK;
    ok = ok && wgt_context_sync(c) == WGT_OK;
    CHECK(ok, "advancing the ring by %d slots: %s", slots, wgt_last_error());
    wgt_graph_release(g);
    wgt_tensor *all[] = {table, at, rows, one, out};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) wgt_release(all[k]);
    if (!ok && c) wgt_context_release(c), c = NULL;
    return c;
}

/* A dispatch whose checks straddle the end of the ring of check slots (1024): taking the
 * second slot reads the record first, which finds the first check's bad index while the
 * dispatch runs. The dispatch still does not report it (it does not wait for the device, so
 * where the ring stands must not change what it returns): the reads of what depends on the
 * index do, or the next wgt_context_sync; a dispatch with a good index then computes. */
TEST_BACKENDS(index_checks_ring_starting_over_inside_a_dispatch) {
    for (int before = 1021; before <= 1023; before++)
        for (int by_sync = 0; by_sync < 2; by_sync++) {
            wgt_context *c = context_with_slots_taken(before);
            if (!c) return;
            wgt_tensor *x = wgt_graph_input(c, "ring.x", WGT_I32, 0, NULL);
            wgt_tensor *hot = x ? wgt_one_hot(x, 7, WGT_U32) : NULL; /* the first check */
            wgt_tensor *pick = hot ? wgt_gather_rows(hot, x) : NULL;  /* the second */
            wgt_graph *g = pick ? wgt_graph_build(c, 1, (const wgt_binding[]){{"pick", pick}}) : NULL;
            wgt_tensor *bad = wgt_tensor_from_data(c, WGT_I32, 0, NULL, (int32_t[]){-1}, 4, WGT_USAGE_DEFAULT);
            wgt_tensor *good = wgt_tensor_from_data(c, WGT_I32, 0, NULL, (int32_t[]){3}, 4, WGT_USAGE_DEFAULT);
            wgt_tensor *o1 = wgt_zeros(c, WGT_U32, 0, NULL), *o2 = wgt_zeros(c, WGT_U32, 0, NULL);
            uint32_t v = 9;
            CHECK(g && wgt_graph_dispatch(g, 1, (const wgt_binding[]){{"ring.x", bad}}, 1,
                                          (const wgt_binding[]){{"pick", o1}}) == WGT_OK,
                  "%d slots taken before: the dispatch reported %s", before, wgt_last_error());
            if (by_sync) CHECK_ERROR(wgt_context_sync(c) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "wgt_one_hot: index -1");
            CHECK_ERROR(wgt_tensor_read(o1, &v, 4) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "wgt_one_hot: index -1");
            CHECK(wgt_context_sync(c) == WGT_OK, "%d slots taken before: a second report: %s", before, wgt_last_error());
            CHECK(g &&
                      wgt_graph_dispatch(g, 1, (const wgt_binding[]){{"ring.x", good}}, 1,
                                         (const wgt_binding[]){{"pick", o2}}) == WGT_OK &&
                      wgt_tensor_read(o2, &v, 4) == WGT_OK && v == 1,
                  "%d slots taken before: a good index gave %u (%s)", before, v, wgt_last_error());
            wgt_graph_release(g);
            wgt_tensor *all[] = {x, hot, pick, bad, good, o1, o2};
            for (size_t k = 0; k < sizeof all / sizeof *all; k++) wgt_release(all[k]);
            wgt_context_release(c);
        }
}

/* A step that fails after taking its slot (a destroyed constant) never checks: the slot's old
 * words, a bad index found 1024 slots earlier, must not come back as its verdict. */
TEST_BACKENDS(index_checks_slot_of_a_step_that_never_checked) {
    wgt_context *c = test_new_context(strcmp(test_backend_name(), "cpu") ? WGT_BACKEND_WEBGPU : WGT_BACKEND_CPU);
    if (!c) return;
    wgt_tensor *table = wgt_zeros(c, WGT_F32, 2, (int64_t[]){4, 1});
    wgt_tensor *doomed = wgt_zeros(c, WGT_F32, 2, (int64_t[]){4, 1});
    wgt_tensor *at = wgt_graph_input(c, "never.at", WGT_I32, 1, (int64_t[]){1});
    wgt_tensor *rows = at ? wgt_gather_rows(table, at) : NULL, *lost = at ? wgt_gather_rows(doomed, at) : NULL;
    wgt_graph *g = rows ? wgt_graph_build(c, 1, (const wgt_binding[]){{"rows", rows}}) : NULL;
    wgt_graph *h = lost ? wgt_graph_build(c, 1, (const wgt_binding[]){{"rows", lost}}) : NULL;
    wgt_tensor *bad = wgt_tensor_from_data(c, WGT_I32, 1, (int64_t[]){1}, (int32_t[]){9}, 4, WGT_USAGE_DEFAULT);
    wgt_tensor *good = wgt_tensor_from_data(c, WGT_I32, 1, (int64_t[]){1}, (int32_t[]){1}, 4, WGT_USAGE_DEFAULT);
    wgt_tensor *out = wgt_zeros(c, WGT_F32, 2, (int64_t[]){1, 1});
    CHECK(g && h, "%s", wgt_last_error());
    /* Slot 0: a bad index, reported. */
    CHECK(g && wgt_graph_dispatch(g, 1, (const wgt_binding[]){{"never.at", bad}}, 1, (const wgt_binding[]){{"rows", out}}) ==
                   WGT_OK,
          "%s", wgt_last_error());
    CHECK_ERROR(wgt_context_sync(c) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "index 9");
    wgt_release(out);
    out = wgt_zeros(c, WGT_F32, 2, (int64_t[]){1, 1});
    /* Slots 1 to 1023: good. */
    int ok = g != NULL;
    for (int i = 1; ok && i < 1024; i++)
        ok = wgt_graph_dispatch(g, 1, (const wgt_binding[]){{"never.at", good}}, 1, (const wgt_binding[]){{"rows", out}}) ==
             WGT_OK;
    CHECK(ok && wgt_context_sync(c) == WGT_OK, "%s", wgt_last_error());
    /* Slot 1024, slot 0's place: taken, then the step fails on the destroyed table. */
    CHECK(wgt_tensor_destroy(doomed) == WGT_OK, "%s", wgt_last_error());
    CHECK_ERROR(h && wgt_graph_dispatch(h, 1, (const wgt_binding[]){{"never.at", good}}, 1,
                                        (const wgt_binding[]){{"rows", out}}) != WGT_OK,
                WGT_ERR_DESTROYED, "destroyed");
    CHECK(wgt_context_sync(c) == WGT_OK, "the step that never checked reported: %s", wgt_last_error());
    wgt_graph_release(g), wgt_graph_release(h);
    wgt_tensor *all[] = {table, doomed, at, rows, lost, bad, good, out};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) wgt_release(all[k]);
    wgt_context_release(c);
}

/* A gather by indices computed on the device (so checked there), its result checked, and
 * every tensor released. */
static void checked_gather(wgt_context *own) {
    int64_t shape[2] = {5, 3};
    wgt_tensor *table = wgt_arange(own, WGT_F32, 0, 15, 1), *t2 = table ? wgt_reshape(table, 2, shape) : NULL;
    wgt_tensor *idx = argmax_indices(own, 3, (const int[]){4, 0, 2}, 8);
    wgt_tensor *g = t2 && idx ? wgt_gather_rows(t2, idx) : NULL;
    float v[9];
    CHECK(g && wgt_tensor_read(g, v, sizeof v) == WGT_OK && v[0] == 12 && v[3] == 0 && v[8] == 8, "%s",
          wgt_last_error());
    wgt_release(g), wgt_release(idx), wgt_release(t2), wgt_release(table);
}

/* The check record is the context's own buffer, kept for its life once a check ran: it is not
 * memory that tensors or pending work hold, so it is not counted as in use (the API fuzzer
 * found 8192 bytes "in use" after everything was released). */
TEST_BACKENDS(index_checks_record_is_not_memory_in_use) {
    wgt_context *own = test_new_context(wgt_context_backend(ctx));
    if (!own) return;
    checked_gather(own);
    wgt_stats st;
    CHECK(wgt_context_sync(own) == WGT_OK && wgt_context_stats(own, &st) == WGT_OK, "%s", wgt_last_error());
    CHECK(st.device_bytes_in_use == 0, "%llu device bytes in use after every tensor was released",
          (unsigned long long)st.device_bytes_in_use);
    CHECK(wgt_context_trim(own) == WGT_OK && wgt_context_stats(own, &st) == WGT_OK, "%s", wgt_last_error());
    CHECK(st.device_bytes_peak == 0, "the peak after a trim is %llu bytes with nothing in use",
          (unsigned long long)st.device_bytes_peak);
    wgt_context_release(own);
}

/* The record is made outside the storage pool: it never takes a buffer a tensor gave back,
 * and the peak never drops without a trim. (When the record came from the pool, it took the
 * 8192-byte buffer a released tensor left, and the stats subtracted that buffer from a peak
 * the record had no part in: the peak fell below what tensors had held before.) */
TEST_BACKENDS(index_checks_record_is_outside_the_pool) {
    wgt_context *own = test_new_context(wgt_context_backend(ctx));
    if (!own) return;
    wgt_tensor *base = wgt_arange(own, WGT_F32, 0, 2048, 1);
    wgt_tensor *big = base ? wgt_add_scalar(base, 1.0) : NULL; /* a kernel's output: 8192 bytes, the record's size */
    CHECK(big && wgt_eval(1, &big) == WGT_OK, "%s", wgt_last_error());
    wgt_release(base);
    wgt_stats with_big, st;
    CHECK(wgt_context_sync(own) == WGT_OK && wgt_context_stats(own, &with_big) == WGT_OK, "%s", wgt_last_error());
    wgt_release(big);
    checked_gather(own);
    CHECK(wgt_context_sync(own) == WGT_OK && wgt_context_stats(own, &st) == WGT_OK, "%s", wgt_last_error());
    CHECK(st.device_bytes_in_use == 0, "%llu bytes in use", (unsigned long long)st.device_bytes_in_use);
    CHECK(st.device_bytes_peak >= with_big.device_bytes_peak, "peak %llu bytes, below the earlier peak of %llu",
          (unsigned long long)st.device_bytes_peak, (unsigned long long)with_big.device_bytes_peak);
    /* What tensors gave back stays pooled for tensors: the record took none of it. */
    CHECK(st.device_bytes_pooled >= with_big.device_bytes_pooled + with_big.device_bytes_in_use,
          "%llu bytes pooled; tensors gave back %llu", (unsigned long long)st.device_bytes_pooled,
          (unsigned long long)(with_big.device_bytes_pooled + with_big.device_bytes_in_use));
    wgt_context_release(own);
}

/* Writes sharing one check (the same computed indices against the same bound in one run, as
 * a decoding step writes every layer's keys and values at one position): the second write
 * adds its own dispatch on WebGPU but no check's; a bad index fails both writes; and a write
 * to the indices between two uses makes the second check run again on the new values. */
static int64_t set_rows_dispatches(wgt_context *ctx, int writes) {
    wgt_tensor *rows = wgt_ones(ctx, WGT_F32, 2, (int64_t[]){2, 3});
    wgt_tensor *fi = wgt_tensor_from_data(ctx, WGT_F32, 1, (int64_t[]){2}, (float[]){1, 3}, 8, WGT_USAGE_DEFAULT);
    wgt_tensor *ii = fi ? wgt_cast(fi, WGT_I32) : NULL, *dst[2] = {0};
    CHECK(rows && ii && wgt_context_sync(ctx) == WGT_OK, "%s", wgt_last_error());
    wgt_stats before = stats_of(ctx);
    for (int i = 0; i < writes; i++) {
        dst[i] = wgt_zeros(ctx, WGT_F32, 2, (int64_t[]){5, 3});
        CHECK(dst[i] && wgt_set_rows(dst[i], ii, rows) == WGT_OK, "%s", wgt_last_error());
    }
    CHECK(wgt_context_sync(ctx) == WGT_OK, "%s", wgt_last_error());
    wgt_stats after = stats_of(ctx);
    wgt_release(rows), wgt_release(fi), wgt_release(ii), wgt_release(dst[0]), wgt_release(dst[1]);
    return (int64_t)(after.dispatches - before.dispatches);
}

TEST_BACKENDS(index_checks_shared_within_a_run) {
    if (wgt_context_backend(ctx) == WGT_BACKEND_WEBGPU) {
        int64_t one = set_rows_dispatches(ctx, 1), two = set_rows_dispatches(ctx, 2);
        /* The second write's set_rows: 1 more, not 2 (its own check); zeros are a cleared
         * buffer, no dispatch. */
        CHECK(two - one == 1, "one write %lld dispatches, two %lld", (long long)one, (long long)two);
    }
    wgt_tensor *rows = wgt_ones(ctx, WGT_F32, 2, (int64_t[]){2, 3});
    wgt_tensor *fb = wgt_tensor_from_data(ctx, WGT_F32, 1, (int64_t[]){2}, (float[]){1, 6}, 8, WGT_USAGE_DEFAULT);
    wgt_tensor *bad = fb ? wgt_cast(fb, WGT_I32) : NULL;
    wgt_tensor *a = wgt_zeros(ctx, WGT_F32, 2, (int64_t[]){5, 3}), *b = wgt_zeros(ctx, WGT_F32, 2, (int64_t[]){5, 3});
    CHECK(wgt_set_rows(a, bad, rows) == WGT_OK && wgt_set_rows(b, bad, rows) == WGT_OK, "%s", wgt_last_error());
    float out[15];
    CHECK_ERROR(wgt_tensor_read(a, out, sizeof out) != WGT_OK, WGT_ERR_INVALID_ARGUMENT,
                "wgt_set_rows: index 6 at position [1] of indices is out of range for 5 rows");
    CHECK_ERROR(wgt_tensor_read(b, out, sizeof out) != WGT_OK, WGT_ERR_INVALID_ARGUMENT,
                "wgt_set_rows: index 6 at position [1] of indices is out of range for 5 rows");
    /* Good indices [1, 3], then 6 written over the second before the next use, in one run. */
    wgt_tensor *fg = wgt_tensor_from_data(ctx, WGT_F32, 1, (int64_t[]){2}, (float[]){1, 3}, 8, WGT_USAGE_DEFAULT);
    wgt_tensor *ii = fg ? wgt_cast(fg, WGT_I32) : NULL, *col = ii ? wgt_reshape(ii, 2, (int64_t[]){2, 1}) : NULL;
    wgt_tensor *at = wgt_tensor_from_data(ctx, WGT_I32, 1, (int64_t[]){1}, (int32_t[]){1}, 4, WGT_USAGE_DEFAULT);
    wgt_tensor *six = wgt_tensor_from_data(ctx, WGT_I32, 2, (int64_t[]){1, 1}, (int32_t[]){6}, 4, WGT_USAGE_DEFAULT);
    wgt_tensor *c = wgt_zeros(ctx, WGT_F32, 2, (int64_t[]){5, 3}), *d = wgt_zeros(ctx, WGT_F32, 2, (int64_t[]){5, 3});
    CHECK(col && wgt_set_rows(c, ii, rows) == WGT_OK && wgt_set_rows(col, at, six) == WGT_OK &&
              wgt_set_rows(d, ii, rows) == WGT_OK,
          "%s", wgt_last_error());
    CHECK_ERROR(wgt_tensor_read(d, out, sizeof out) != WGT_OK, WGT_ERR_INVALID_ARGUMENT,
                "wgt_set_rows: index 6 at position [1] of indices is out of range for 5 rows");
    CHECK(wgt_tensor_read(c, out, sizeof out) == WGT_OK && out[3] == 1 && out[9] == 1 && out[0] == 0,
          "the write before: %g %g %g (%s)", out[3], out[9], out[0], wgt_last_error());
    wgt_tensor *all[] = {rows, fb, bad, a, b, fg, ii, col, at, six, c, d};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) wgt_release(all[i]);
}

/* A compiled graph writing two tensors with data at one position (a layer's keys and values):
 * the writes share one check per dispatch, and a position out of range still fails both
 * tensors, each naming the index. */
TEST_BACKENDS(index_checks_graph_writes_share_a_check) {
    int64_t one = 1, rs[2] = {1, 3}, shape[2] = {4, 3};
    float init[12] = {0}, got[12];
    wgt_tensor *k = wgt_tensor_from_data(ctx, WGT_F32, 2, shape, init, sizeof init, WGT_USAGE_DEFAULT);
    wgt_tensor *v = wgt_tensor_from_data(ctx, WGT_F32, 2, shape, init, sizeof init, WGT_USAGE_DEFAULT);
    wgt_tensor *at = wgt_graph_input(ctx, "index_checks_share.at", WGT_I32, 1, &one);
    wgt_tensor *x = wgt_graph_input(ctx, "index_checks_share.x", WGT_F32, 2, rs);
    wgt_tensor *x2 = x ? wgt_mul_scalar(x, 2.0) : NULL, *y = x ? wgt_mul_scalar(x, 3.0) : NULL;
    CHECK(x2 && y && wgt_set_rows(k, at, x) == WGT_OK && wgt_set_rows(v, at, x2) == WGT_OK, "%s", wgt_last_error());
    wgt_binding outs[1] = {{"y", y}};
    wgt_graph *g = y ? wgt_graph_build(ctx, 1, outs) : NULL;
    CHECK(g, "%s", wgt_last_error());
    wgt_tensor *xt = wgt_tensor_from_data(ctx, WGT_F32, 2, rs, (float[]){1, 2, 3}, 12, WGT_USAGE_DEFAULT);
    wgt_tensor *yo = wgt_zeros(ctx, WGT_F32, 2, rs);
    for (int pass = 0; pass < 2 && g; pass++) {
        int32_t pos = pass ? 4 : 2;
        wgt_tensor *it = wgt_tensor_from_data(ctx, WGT_I32, 1, &one, &pos, sizeof pos, WGT_USAGE_DEFAULT);
        wgt_binding ins[2] = {{"index_checks_share.at", it}, {"index_checks_share.x", xt}}, bo[1] = {{"y", yo}};
        wgt_status st = wgt_graph_dispatch(g, 2, ins, 1, bo);
        if (st == WGT_OK) st = wgt_context_sync(ctx);
        if (!pass) {
            CHECK(st == WGT_OK, "%s", wgt_last_error());
            CHECK(wgt_tensor_read(k, got, sizeof got) == WGT_OK && got[6] == 1 && got[8] == 3 && got[3] == 0,
                  "k: %g %g %g (%s)", got[6], got[8], got[3], wgt_last_error());
            CHECK(wgt_tensor_read(v, got, sizeof got) == WGT_OK && got[6] == 2 && got[8] == 6 && got[9] == 0,
                  "v: %g %g %g (%s)", got[6], got[8], got[9], wgt_last_error());
        } else {
            CHECK(st == WGT_ERR_INVALID_ARGUMENT && strstr(wgt_last_error(), "index 4"), "a position of 4: %s",
                  wgt_last_error());
            CHECK_ERROR(wgt_tensor_read(k, got, sizeof got) != WGT_OK, WGT_ERR_INVALID_ARGUMENT,
                        "wgt_set_rows: index 4 at position [0] of indices is out of range for 4 rows");
            CHECK_ERROR(wgt_tensor_read(v, got, sizeof got) != WGT_OK, WGT_ERR_INVALID_ARGUMENT,
                        "wgt_set_rows: index 4 at position [0] of indices is out of range for 4 rows");
        }
        wgt_release(it);
    }
    wgt_graph_release(g);
    wgt_tensor *all[] = {k, v, at, x, x2, y, xt, yo};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) wgt_release(all[i]);
}
