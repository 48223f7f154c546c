/*
 * wgt_set_rows inside a compiled graph into a tensor that holds data (a KV cache): rows and
 * indices from graph inputs are written in place at each dispatch, at their place in the
 * record order (ops recorded before read the old rows, ops after the new ones), the tensor
 * keeps its data for eager use between dispatches, and indices out of range are reported by
 * the dispatch that reads them.
 */
#include <string.h>

#include "test.h"

enum { ROWS = 5, W = 3 };

TEST_BACKENDS(graph_set_rows_writes_tensor_with_data_in_order) {
    float init[ROWS * W], want[ROWS * W];
    for (int i = 0; i < ROWS * W; i++) init[i] = want[i] = (float)(i + 1);
    int64_t shape[2] = {ROWS, W}, one = 1, rs[2] = {1, W};
    wgt_tensor *cache = wgt_tensor_from_data(ctx, WGT_F32, 2, shape, init, sizeof init, WGT_USAGE_DEFAULT);
    wgt_tensor *at = wgt_graph_input(ctx, "at", WGT_I32, 1, &one);
    wgt_tensor *x = wgt_graph_input(ctx, "x", WGT_F32, 2, rs);
    /* before: the cache's row sums as the dispatch finds them; after: once x is in. Each
     * reads the cache beside a graph value (x * 0), so it runs at every dispatch. */
    wgt_tensor *x0 = wgt_mul_scalar(x, 0.0);
    wgt_tensor *vb = wgt_add(cache, x0), *before = wgt_sum(vb, 1, (int[]){1}, 0);
    wgt_tensor *x2 = wgt_mul_scalar(x, 2.0);
    CHECK(wgt_set_rows(cache, at, x2) == WGT_OK, "%s", wgt_last_error());
    wgt_tensor *va = wgt_add(cache, x0), *after = wgt_sum(va, 1, (int[]){1}, 0);
    wgt_binding outs[2] = {{"before", before}, {"after", after}};
    wgt_graph *g = wgt_graph_build(ctx, 2, outs);
    CHECK(g, "%s", wgt_last_error());
    /* The cache keeps its data: an eager read before any dispatch sees the initial rows. */
    float got[ROWS * W];
    CHECK(wgt_tensor_read(cache, got, sizeof got) == WGT_OK && !memcmp(got, init, sizeof got), "%s",
          wgt_last_error());
    wgt_tensor *ob = wgt_zeros(ctx, WGT_F32, 1, (int64_t[]){ROWS}), *oa = wgt_zeros(ctx, WGT_F32, 1, (int64_t[]){ROWS});
    const int32_t where[3] = {3, 0, 3};
    for (int d = 0; d < 3 && g; d++) {
        float xv[W] = {(float)(10 * d + 1), (float)(10 * d + 2), (float)(10 * d + 3)};
        wgt_tensor *xt = wgt_tensor_from_data(ctx, WGT_F32, 2, rs, xv, sizeof xv, WGT_USAGE_DEFAULT);
        wgt_tensor *it = wgt_tensor_from_data(ctx, WGT_I32, 1, &one, &where[d], sizeof where[d], WGT_USAGE_DEFAULT);
        wgt_binding ins[2] = {{"at", it}, {"x", xt}}, bo[2] = {{"before", ob}, {"after", oa}};
        CHECK(wgt_graph_dispatch(g, 2, ins, 2, bo) == WGT_OK, "dispatch %d: %s", d, wgt_last_error());
        float sb[ROWS], sa[ROWS];
        for (int r = 0; r < ROWS; r++) sb[r] = want[r * W] + want[r * W + 1] + want[r * W + 2];
        for (int k = 0; k < W; k++) want[where[d] * W + k] = 2 * xv[k];
        for (int r = 0; r < ROWS; r++) sa[r] = want[r * W] + want[r * W + 1] + want[r * W + 2];
        float gb[ROWS], ga[ROWS];
        CHECK(wgt_tensor_read(ob, gb, sizeof gb) == WGT_OK && wgt_tensor_read(oa, ga, sizeof ga) == WGT_OK, "%s",
              wgt_last_error());
        for (int r = 0; r < ROWS; r++) {
            CHECK(gb[r] == sb[r], "dispatch %d: row %d summed %g before the write, want %g", d, r, gb[r], sb[r]);
            CHECK(ga[r] == sa[r], "dispatch %d: row %d summed %g after the write, want %g", d, r, ga[r], sa[r]);
        }
        CHECK(wgt_tensor_read(cache, got, sizeof got) == WGT_OK && !memcmp(got, want, sizeof got),
              "dispatch %d: the cache after it differs", d);
        wgt_release(xt), wgt_release(it);
    }
    /* An eager write between dispatches is seen by the next one. */
    float row[W] = {-1, -2, -4};
    wgt_tensor *rt = wgt_tensor_from_data(ctx, WGT_F32, 2, rs, row, sizeof row, WGT_USAGE_DEFAULT);
    wgt_tensor *i1 = wgt_tensor_from_data(ctx, WGT_I32, 1, &one, (int32_t[]){1}, sizeof(int32_t), WGT_USAGE_DEFAULT);
    CHECK(wgt_set_rows(cache, i1, rt) == WGT_OK, "%s", wgt_last_error());
    for (int k = 0; k < W; k++) want[W + k] = row[k];
    wgt_tensor *ok_i = wgt_tensor_from_data(ctx, WGT_I32, 1, &one, (int32_t[]){4}, sizeof(int32_t), WGT_USAGE_DEFAULT);
    wgt_binding ins_ok[2] = {{"at", ok_i}, {"x", rt}}, bo[2] = {{"before", ob}, {"after", oa}};
    CHECK(g && wgt_graph_dispatch(g, 2, ins_ok, 2, bo) == WGT_OK, "%s", wgt_last_error());
    for (int k = 0; k < W; k++) want[4 * W + k] = 2 * row[k];
    CHECK(wgt_tensor_read(cache, got, sizeof got) == WGT_OK && !memcmp(got, want, sizeof got),
          "the eager write and the last dispatch's row: %s", wgt_last_error());
    /* An index out of range fails the dispatch that reads it, naming the value; the tensor
     * it was to write reports that too, as after an eager wgt_set_rows with such indices. */
    wgt_tensor *bad = wgt_tensor_from_data(ctx, WGT_I32, 1, &one, (int32_t[]){ROWS}, sizeof(int32_t), WGT_USAGE_DEFAULT);
    wgt_binding ins_bad[2] = {{"at", bad}, {"x", rt}};
    wgt_status st = g ? wgt_graph_dispatch(g, 2, ins_bad, 2, bo) : WGT_ERR_INTERNAL;
    float ga[ROWS];
    if (st == WGT_OK) st = wgt_tensor_read(oa, ga, sizeof ga);
    CHECK(st == WGT_ERR_INVALID_ARGUMENT && strstr(wgt_last_error(), "index 5"), "an index of %d: %s", ROWS,
          wgt_last_error());
    CHECK_ERROR(wgt_tensor_read(cache, got, sizeof got) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "index 5");
    wgt_graph_release(g);
    wgt_release(rt), wgt_release(i1), wgt_release(bad), wgt_release(ok_i);
    wgt_release(ob), wgt_release(oa), wgt_release(before), wgt_release(after), wgt_release(x0), wgt_release(x2);
    wgt_release(vb), wgt_release(va);
    wgt_release(at), wgt_release(x), wgt_release(cache);
}

/* Without a build the recorded write never runs; the context's release drops it. The
 * context is the test's own: a later build in it would take the write. */
TEST_BACKENDS(graph_set_rows_unbuilt_write_leaves_the_tensor) {
    ctx = test_new_context(wgt_context_backend(ctx));
    if (!ctx) return;
    float init[4] = {1, 2, 3, 4};
    int64_t shape[2] = {2, 2}, one = 1, rs[2] = {1, 2};
    wgt_tensor *cache = wgt_tensor_from_data(ctx, WGT_F32, 2, shape, init, sizeof init, WGT_USAGE_DEFAULT);
    wgt_tensor *at = wgt_graph_input(ctx, "at", WGT_I32, 1, &one), *x = wgt_graph_input(ctx, "x", WGT_F32, 2, rs);
    CHECK(wgt_set_rows(cache, at, x) == WGT_OK, "%s", wgt_last_error());
    float got[4];
    CHECK(wgt_tensor_read(cache, got, sizeof got) == WGT_OK && !memcmp(got, init, sizeof got), "%s", wgt_last_error());
    wgt_release(at), wgt_release(x), wgt_release(cache);
    wgt_context_release(ctx);
}

/* A waiting write nobody can see any more (its tensor released before any build) is dropped
 * with what it holds: the graph inputs' names are free again and no device memory stays in
 * use. While the tensor lives, the write waits and holds its inputs. (Found by fuzz_api: rows
 * computed from a graph input set into a tensor with data, then everything released.) */
TEST_BACKENDS(graph_set_rows_unseen_write_is_dropped) {
    int64_t two = 2, four = 4;
    const int32_t at[2] = {1, 3};
    for (int keep_indices = 0; keep_indices < 2; keep_indices++) {
        wgt_tensor *x = wgt_graph_input(ctx, "x", WGT_F32, 1, &two);
        const float zero[4] = {0};
        wgt_tensor *z = wgt_tensor_from_data(ctx, WGT_F32, 1, &four, zero, sizeof zero, WGT_USAGE_DEFAULT);
        wgt_tensor *idx = wgt_tensor_from_data(ctx, WGT_I32, 1, &two, at, sizeof at, WGT_USAGE_DEFAULT);
        wgt_tensor *y = wgt_neg(x);
        CHECK(x && z && idx && y && wgt_set_rows(z, idx, y) == WGT_OK, "%s", wgt_last_error());
        wgt_release(x), wgt_release(y);
        if (!keep_indices) wgt_release(idx);
        /* z holds the write: the input's name is still taken. */
        wgt_tensor *again = wgt_graph_input(ctx, "x", WGT_F32, 1, &two);
        CHECK(!again && wgt_last_status() == WGT_ERR_INVALID_ARGUMENT, "the pending write's input was freed early");
        wgt_release(again);
        wgt_clear_error();
        wgt_release(z);
        if (keep_indices) wgt_release(idx);
        again = wgt_graph_input(ctx, "x", WGT_F32, 1, &two);
        CHECK(again, "after its destination's release the write still holds input 'x': %s", wgt_last_error());
        wgt_release(again);
        wgt_stats st;
        CHECK(wgt_context_sync(ctx) == WGT_OK && wgt_context_stats(ctx, &st) == WGT_OK && st.device_bytes_in_use == 0,
              "%llu device bytes in use after everything was released", (unsigned long long)st.device_bytes_in_use);
    }
}

/* A write whose rows are read from its own destination (the rows the tensor itself, or values
 * computed from it) holds that destination twice, so no count of its references alone shows
 * when only the write holds it: the waiting writes are collected by trial deletion. While
 * anything outside could still see the tensor (here the rows, which a graph computes again
 * from it at each dispatch), the write stays; once nothing can, it goes with its inputs,
 * whatever the order of the releases. (Found by fuzz_api: set_rows of a tensor into itself at graph indices.) */
TEST_BACKENDS(graph_set_rows_from_its_own_destination_is_collected) {
    int64_t two = 2;
    const float z0[2] = {1, 2}, ten[2] = {10, 10};
    const int32_t swap[2] = {1, 0};
    for (int variant = 0; variant < 3; variant++) {
        wgt_tensor *z = wgt_tensor_from_data(ctx, WGT_F32, 1, &two, z0, sizeof z0, WGT_USAGE_DEFAULT);
        wgt_tensor *i = wgt_graph_input(ctx, "i", WGT_I32, 1, &two), *y = wgt_graph_input(ctx, "y", WGT_F32, 1, &two);
        /* variant 0: rows are z itself; 1 and 2: z + y, released before (1) or after (2) z */
        wgt_tensor *rows = variant == 0 ? wgt_retain(z) : wgt_add(z, y);
        CHECK(z && i && y && rows && wgt_set_rows(z, i, rows) == WGT_OK, "%s", wgt_last_error());
        wgt_release(i), wgt_release(y);
        if (variant < 2) wgt_release(rows);
        wgt_release(z);
        if (variant == 2) {
            /* rows still reads z: the write stays, and each dispatch sees the last one's. */
            wgt_graph *g = wgt_graph_build(ctx, 1, (wgt_binding[]){{"rows", rows}});
            CHECK(g, "%s", wgt_last_error());
            wgt_tensor *iv = wgt_tensor_from_data(ctx, WGT_I32, 1, &two, swap, sizeof swap, WGT_USAGE_DEFAULT);
            wgt_tensor *yv = wgt_tensor_from_data(ctx, WGT_F32, 1, &two, ten, sizeof ten, WGT_USAGE_DEFAULT);
            wgt_tensor *out = wgt_zeros(ctx, WGT_F32, 1, &two);
            wgt_binding in[2] = {{"i", iv}, {"y", yv}};
            const float want[2][2] = {{11, 12}, {22, 21}}; /* z: [1, 2], then [12, 11] */
            for (int d = 0; d < 2 && g; d++) {
                float got[2] = {0};
                CHECK(wgt_graph_dispatch(g, 2, in, 1, (wgt_binding[]){{"rows", out}}) == WGT_OK &&
                          wgt_tensor_read(out, got, sizeof got) == WGT_OK,
                      "%s", wgt_last_error());
                CHECK(got[0] == want[d][0] && got[1] == want[d][1], "dispatch %d: rows %g %g, want %g %g", d, got[0],
                      got[1], want[d][0], want[d][1]);
            }
            wgt_graph_release(g);
            wgt_release(iv), wgt_release(yv), wgt_release(out), wgt_release(rows);
        }
        wgt_tensor *again = wgt_graph_input(ctx, "i", WGT_I32, 1, &two);
        CHECK(again, "variant %d: with everything released, the write still holds input 'i': %s", variant,
              wgt_last_error());
        wgt_release(again);
        wgt_clear_error();
        wgt_stats st;
        CHECK(wgt_context_sync(ctx) == WGT_OK && wgt_context_stats(ctx, &st) == WGT_OK && st.device_bytes_in_use == 0,
              "variant %d: %llu device bytes in use after everything was released", variant,
              (unsigned long long)st.device_bytes_in_use);
    }
}
