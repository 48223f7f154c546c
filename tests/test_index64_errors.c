/*
 * i64 and u64 index values out of range, in every op that takes indices: the bound itself,
 * 2^32 + 1 (whose low word, 1, is in range: it must not wrap), 2^32 + 2, -1 (for u64 the
 * largest value, named as such, not as -1) and 2^63. On the host they fail the call with
 * WGT_ERR_INVALID_ARGUMENT naming the 64-bit value and its position; computed on the device
 * (or read by a compiled graph's dispatch) they fail the read of the result the same way.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

enum { GATHER, INDEX_SELECT, TAKE, TAKE_ALONG, SCATTER, SCATTER_ADD, INDEX_ADD, SET_ROWS, ONE_HOT, CROSS_ENTROPY,
       OPS };
static const char *const op_names[OPS] = {"wgt_gather_rows", "wgt_index_select", "wgt_take",     "wgt_take_along_axis",
                                          "wgt_scatter",     "wgt_scatter",      "wgt_index_add", "wgt_set_rows",
                                          "wgt_one_hot",     "wgt_cross_entropy"};

/* Index shape (rank 1 or 2, its first row has at least two entries) and bound per op. */
static const struct {
    int ndim;
    int64_t shape[2], bound;
} forms[OPS] = {
    [GATHER] = {2, {2, 3}, 6},     [INDEX_SELECT] = {1, {3}, 4}, [TAKE] = {2, {2, 3}, 4},
    [TAKE_ALONG] = {2, {3, 2}, 4}, [SCATTER] = {2, {3, 2}, 4},   [SCATTER_ADD] = {2, {3, 2}, 4},
    [INDEX_ADD] = {1, {3}, 4},     [SET_ROWS] = {1, {3}, 6},     [ONE_HOT] = {2, {2, 3}, 5},
    [CROSS_ENTROPY] = {1, {6}, 4},
};

/* An index tensor of the op's form holding 0 everywhere but bits at flat position 1; on the
 * device (computed by pending work) when computed. */
static wgt_tensor *bad_indices(wgt_context *ctx, int op, wgt_dtype dt, uint64_t bits, int computed) {
    uint64_t v[6] = {0, bits, 0, 0, 0, 0};
    int64_t n = forms[op].ndim == 1 ? forms[op].shape[0] : forms[op].shape[0] * forms[op].shape[1];
    wgt_tensor *t = wgt_tensor_from_data(ctx, dt, forms[op].ndim, forms[op].shape, v, (size_t)n * 8, WGT_USAGE_DEFAULT);
    if (!computed || !t) return t;
    wgt_tensor *c = wgt_add_scalar(t, 0);
    wgt_release(t);
    return c;
}

/* op with idx: its result (set_rows: dst, written in place); NULL when the call fails. */
static wgt_tensor *apply(wgt_context *ctx, int op, wgt_tensor *idx) {
    wgt_tensor *a = wgt_ones(ctx, WGT_F32, 2, (int64_t[]){3, 4}), *table = wgt_ones(ctx, WGT_F32, 2, (int64_t[]){6, 3});
    wgt_tensor *src = wgt_ones(ctx, WGT_F32, 2, (int64_t[]){3, 2}), *ia = wgt_ones(ctx, WGT_F32, 2, (int64_t[]){3, 3});
    wgt_tensor *rows = wgt_ones(ctx, WGT_F32, 2, (int64_t[]){3, 3}), *logits = wgt_ones(ctx, WGT_F32, 2, (int64_t[]){6, 4});
    wgt_tensor *out = NULL;
    switch (op) {
    case GATHER: out = wgt_gather_rows(table, idx); break;
    case INDEX_SELECT: out = wgt_index_select(a, 1, idx); break;
    case TAKE: out = wgt_take(a, idx, 1); break;
    case TAKE_ALONG: out = wgt_take_along_axis(a, idx, 1); break;
    case SCATTER: out = wgt_scatter(a, 1, idx, src, WGT_SCATTER_REPLACE); break;
    case SCATTER_ADD: out = wgt_scatter(a, 1, idx, src, WGT_SCATTER_ADD); break;
    case INDEX_ADD: out = wgt_index_add(a, 1, idx, ia); break;
    case SET_ROWS: out = wgt_set_rows(table, idx, rows) == WGT_OK ? wgt_retain(table) : NULL; break;
    case ONE_HOT: out = wgt_one_hot(idx, 5, WGT_F32); break;
    case CROSS_ENTROPY: out = wgt_cross_entropy(logits, idx); break;
    }
    wgt_tensor *all[] = {a, table, src, ia, rows, logits};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) wgt_release(all[i]);
    return out;
}

static int counts_from_end(int op) { return op == TAKE || op == TAKE_ALONG; }

/* The message's words for the value and its position (flat position 1 of the op's form). */
static void expected(char *buf, size_t size, int op, wgt_dtype dt, uint64_t bits) {
    char value[32];
    if (dt == WGT_U64) snprintf(value, sizeof value, "%llu", (unsigned long long)bits);
    else snprintf(value, sizeof value, "%lld", (long long)bits);
    snprintf(buf, size, "%s: index %s at position %s of indices is %s", op_names[op], value,
             forms[op].ndim == 1 ? "[1]" : "[0, 1]",
             dt == WGT_I64 && (int64_t)bits < 0 && !counts_from_end(op) ? "negative" : "out of range");
}

/* The bad values of an op with this bound: for take and take_along_axis, which count i64's
 * negative values from the end, -(bound + 1) in place of -1. */
static int bad_values(int op, wgt_dtype dt, int64_t bound, uint64_t *out) {
    uint64_t minus_one = dt == WGT_I64 && counts_from_end(op) ? (uint64_t)(-(bound + 1)) : ~0ull;
    uint64_t v[] = {(uint64_t)bound, (1ull << 32) + 1, (1ull << 32) + 2, minus_one, 1ull << 63};
    memcpy(out, v, sizeof v);
    return (int)(sizeof v / sizeof *v);
}

/* Every op, i64 and u64, every bad value: on the host (computed 0) the call fails; computed
 * on the device, the call records the op and the read of its result fails. */
static void check_bad_values(wgt_context *ctx, int computed) {
    char want[256];
    for (int op = 0; op < OPS; op++)
        for (int k = 0; k < 2; k++) {
            wgt_dtype dt = k ? WGT_U64 : WGT_I64;
            uint64_t bad[8];
            int nbad = bad_values(op, dt, forms[op].bound, bad);
            for (int b = 0; b < nbad; b++) {
                wgt_tensor *idx = bad_indices(ctx, op, dt, bad[b], computed), *out = NULL;
                expected(want, sizeof want, op, dt, bad[b]);
                CHECK(idx != NULL, "%s", wgt_last_error());
                if (!computed) {
                    CHECK_ERROR(idx && !(out = apply(ctx, op, idx)), WGT_ERR_INVALID_ARGUMENT, want);
                } else {
                    out = idx ? apply(ctx, op, idx) : NULL;
                    CHECK(out != NULL, "%s, %s: the op is recorded: %s", want, wgt_dtype_name(dt), wgt_last_error());
                    size_t n = out ? wgt_tensor_nbytes(out) : 0;
                    void *buf = malloc(n + 1);
                    CHECK_ERROR(!out || !buf || wgt_tensor_read(out, buf, n) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, want);
                    free(buf);
                }
                wgt_release(out), wgt_release(idx);
            }
        }
    CHECK(wgt_context_sync(ctx) == WGT_OK, "nothing is left to report: %s", wgt_last_error());
}

TEST_BACKENDS(index64_out_of_range_fails_the_call) { check_bad_values(ctx, 0); }

TEST_BACKENDS(index64_out_of_range_on_the_device_fails_the_read) { check_bad_values(ctx, 1); }

/* A bad 64-bit index computed on the device fails two checks, its own and that of its
 * narrowed value; the read names the first, whatever taint bits the two slots of the record
 * land on (slots go round a ring: the second may take a lower bit than the first). */
TEST_BACKENDS(index64_first_check_names_the_failure_at_every_slot) {
    wgt_tensor *table = wgt_ones(ctx, WGT_F32, 2, (int64_t[]){6, 3});
    char want[256];
    expected(want, sizeof want, INDEX_SELECT, WGT_I64, (1ull << 32) + 2);
    int32_t zeros[6] = {0};
    wgt_tensor *host0 = wgt_tensor_from_data(ctx, WGT_I32, 2, (int64_t[]){2, 3}, zeros, sizeof zeros, WGT_USAGE_DEFAULT);
    for (int shift = 0; shift < 70; shift++) {
        /* A good checked gather (one slot), read (and so finished), then the bad index's two
         * slots: three a round, so the pair meets every bit alignment. */
        wgt_tensor *ok = wgt_add_scalar(host0, 0), *g = ok ? wgt_gather_rows(table, ok) : NULL;
        float v[18];
        CHECK(g && wgt_tensor_read(g, v, sizeof v) == WGT_OK && v[0] == 1, "shift %d: %s", shift, wgt_last_error());
        wgt_release(ok), wgt_release(g);
        wgt_tensor *idx = bad_indices(ctx, INDEX_SELECT, WGT_I64, (1ull << 32) + 2, 1);
        wgt_tensor *out = idx ? apply(ctx, INDEX_SELECT, idx) : NULL;
        float buf[9];
        CHECK_ERROR(!out || wgt_tensor_read(out, buf, sizeof buf) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, want);
        wgt_release(out), wgt_release(idx);
    }
    CHECK(wgt_context_sync(ctx) == WGT_OK, "nothing is left to report: %s", wgt_last_error());
    wgt_release(table), wgt_release(host0);
}

/* A compiled graph whose gather reads an i64 or u64 graph input checks the values each
 * dispatch is given: 2^32 + 1 fails the read of that dispatch's output, and the next dispatch
 * with good values computes afresh. */
TEST_BACKENDS(index64_graph_input_checked_at_each_dispatch) {
    float tv[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[4] = {0};
    wgt_tensor *table = wgt_tensor_from_data(ctx, WGT_F32, 2, (int64_t[]){4, 2}, tv, sizeof tv, WGT_USAGE_DEFAULT);
    for (int k = 0; k < 2; k++) {
        wgt_dtype dt = k ? WGT_U64 : WGT_I64;
        char name[32];
        snprintf(name, sizeof name, "ids_%s_%s", wgt_dtype_name(dt), test_backend_name());
        wgt_tensor *ids = wgt_graph_input(ctx, name, dt, 1, (int64_t[]){2});
        wgt_tensor *g = ids ? wgt_gather_rows(table, ids) : NULL, *y = g ? wgt_mul_scalar(g, 10) : NULL;
        wgt_graph *graph = y ? wgt_graph_build(ctx, 1, (const wgt_binding[]){{"y", y}}) : NULL;
        CHECK(graph != NULL, "%s: %s", wgt_dtype_name(dt), wgt_last_error());
        uint64_t bad_v[2] = {0, (1ull << 32) + 1}, good_v[2] = {3, 1};
        wgt_tensor *bad = wgt_tensor_from_data(ctx, dt, 1, (int64_t[]){2}, bad_v, 16, WGT_USAGE_DEFAULT);
        wgt_tensor *good = wgt_tensor_from_data(ctx, dt, 1, (int64_t[]){2}, good_v, 16, WGT_USAGE_DEFAULT);
        wgt_tensor *o1 = wgt_zeros(ctx, WGT_F32, 2, (int64_t[]){2, 2}), *o2 = wgt_zeros(ctx, WGT_F32, 2, (int64_t[]){2, 2});
        wgt_binding in_bad[1] = {{name, bad}}, in_good[1] = {{name, good}}, out1[1] = {{"y", o1}}, out2[1] = {{"y", o2}};
        CHECK_ERROR(!graph || wgt_graph_dispatch(graph, 1, in_bad, 1, out1) != WGT_OK ||
                        wgt_tensor_read(o1, out, sizeof out) != WGT_OK,
                    WGT_ERR_INVALID_ARGUMENT, "wgt_gather_rows: index 4294967297 at position [1] of indices is out of range");
        CHECK(graph && wgt_graph_dispatch(graph, 1, in_good, 1, out2) == WGT_OK &&
                  wgt_tensor_read(o2, out, sizeof out) == WGT_OK && out[0] == 70 && out[1] == 80 && out[2] == 30 &&
                  out[3] == 40,
              "%s: %g %g %g %g (%s)", wgt_dtype_name(dt), out[0], out[1], out[2], out[3], wgt_last_error());
        wgt_graph_release(graph);
        wgt_tensor *all[] = {ids, g, y, bad, good, o1, o2};
        for (size_t i = 0; i < sizeof all / sizeof *all; i++) wgt_release(all[i]);
    }
    wgt_release(table);
}

/* Index types that are not integers of 32 or 64 bits are refused by name; a bound past what
 * u32 reaches is WGT_ERR_LIMIT for 64-bit indices (a broadcast table of 2^32 rows). */
TEST_BACKENDS(index64_types_and_limits) {
    wgt_tensor *a = wgt_ones(ctx, WGT_F32, 2, (int64_t[]){3, 4});
    wgt_tensor *i16 = wgt_zeros(ctx, WGT_I16, 1, (int64_t[]){2}), *f = wgt_zeros(ctx, WGT_F32, 1, (int64_t[]){2});
    CHECK_ERROR(!wgt_take(a, i16, 1), WGT_ERR_DTYPE, "wgt_take: indices must be i32, u32, i64 or u64, not i16");
    CHECK_ERROR(!wgt_rope(a, f, 10000.0), WGT_ERR_DTYPE, "wgt_rope: positions must be i32, u32, i64 or u64, not f32");
    wgt_tensor *row = wgt_ones(ctx, WGT_F32, 2, (int64_t[]){1, 2});
    wgt_tensor *huge = row ? wgt_broadcast_to(row, 2, (int64_t[]){(1ll << 32) + 5, 2}) : NULL;
    wgt_tensor *i64 = wgt_zeros(ctx, WGT_I64, 1, (int64_t[]){2}), *i32 = wgt_zeros(ctx, WGT_I32, 1, (int64_t[]){2});
    CHECK_ERROR(!wgt_gather_rows(huge, i64), WGT_ERR_LIMIT, "4294967301 rows are more than the 2^32 - 1");
    wgt_tensor *g = huge ? wgt_gather_rows(huge, i32) : NULL;
    CHECK(g != NULL, "i32 indices into the same table: %s", wgt_last_error());
    wgt_tensor *all[] = {a, i16, f, row, huge, i64, i32, g};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) wgt_release(all[i]);
}
