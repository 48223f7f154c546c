/*
 * Read-request handles: a released wgt_read's handle is stale for good. Releasing it again
 * (which used to free it twice), or passing it (or something that never was a request) to
 * wgt_read_poll or wgt_read_wait, is WGT_ERR_INVALID_ARGUMENT naming the function, found
 * from the handle table alone, never from the freed request.
 */
#include <stdint.h>
#include <string.h>

#include "core/handles.h"
#include "stale_calls.h"
#include "test.h"

static const int64_t S4[1] = {4};

/* One call per public function that takes a request, each given `dead`. */
#define READ_CALLS(X)                                              \
    X(wgt_read_release, (wgt_read_release(dead), 1))              \
    X(wgt_read_poll, wgt_read_poll(dead, &done) != WGT_OK)        \
    X(wgt_read_wait, wgt_read_wait(dead) != WGT_OK)

/* handles_every_entry_point_is_wrapped checks that this covers every function of the header
 * with a request parameter. */
#define CALL_NAME(name, call) #name,
const char *const test_read_calls[] = {READ_CALLS(CALL_NAME) NULL};

static void refuse_every_call(wgt_read *dead, const char *what) {
    int done = -7;
#define CALL_CHECK(name, call) CHECK_STALE_CALL(name, call, what, "request is not a live request")
    READ_CALLS(CALL_CHECK)
#undef CALL_CHECK
    CHECK(done == -7, "wgt_read_poll with %s wrote done (%d)", what, done);
}

/* A request for t's 4 floats into dst, waited for; 1 when dst holds 1, 2, 3, 4. */
static wgt_read *read_of(wgt_tensor *t, float *dst) {
    wgt_read *r = wgt_read_begin(t, dst, 4 * sizeof *dst);
    CHECK(r && wgt_read_wait(r) == WGT_OK, "%s", wgt_last_error());
    for (int i = 0; i < 4; i++) CHECK(dst[i] == i + 1, "dst[%d] = %g", i, dst[i]);
    return r;
}

TEST_BACKENDS(read_handles_double_release_is_an_error) {
    float v[4] = {1, 2, 3, 4}, got[4] = {0};
    wgt_tensor *t = wgt_tensor_from_data(ctx, WGT_F32, 1, S4, v, sizeof v, WGT_USAGE_DEFAULT);
    wgt_read *r = read_of(t, got);
    wgt_read_release(r);
    CHECK_ERROR((wgt_read_release(r), 1), WGT_ERR_INVALID_ARGUMENT, "wgt_read_release: request is not a live request");
    CHECK_ERROR((wgt_read_release(r), 1), WGT_ERR_INVALID_ARGUMENT, "wgt_read_release");
    wgt_clear_error();
    wgt_read_release(NULL); /* still nothing, and no error */
    CHECK(wgt_last_status() == WGT_OK, "releasing NULL recorded %s", wgt_last_error());
    wgt_release(t);
}

TEST_BACKENDS(read_handles_use_after_release_is_an_error_in_every_function) {
    float v[4] = {1, 2, 3, 4}, got[4] = {0};
    wgt_tensor *t = wgt_tensor_from_data(ctx, WGT_F32, 1, S4, v, sizeof v, WGT_USAGE_DEFAULT);
    /* Released before it finished, and after. */
    wgt_tensor *pending = wgt_add_scalar(t, 0);
    wgt_read *early = wgt_read_begin(pending, got, sizeof got);
    CHECK(early, "%s", wgt_last_error());
    wgt_read_release(early);
    refuse_every_call(early, "a request released unfinished");
    wgt_read *late = read_of(t, got);
    wgt_read_release(late);
    refuse_every_call(late, "a released request");
    void *forged[64] = {0}; /* a stack address, as a caller's stray pointer would be */
    refuse_every_call((wgt_read *)(void *)forged, "a stack address");
    refuse_every_call((wgt_read *)(uintptr_t)0xfff001, "a forged handle");
    wgt_release(pending);
    wgt_release(t);
}

/* A released request's slot goes to the next request: the old handle stays stale and never
 * reaches the new request, which finishes into its own buffer. */
TEST_BACKENDS(read_handles_reused_slot_is_not_the_old_request) {
    float v[4] = {1, 2, 3, 4}, a[4] = {0}, b[4] = {0};
    wgt_tensor *t = wgt_tensor_from_data(ctx, WGT_F32, 1, S4, v, sizeof v, WGT_USAGE_DEFAULT);
    wgt_read *old = read_of(t, a);
    wgt_read_release(old);
    wgt_tensor *u = wgt_add_scalar(t, 0); /* pending, so the new request is not done at once on WebGPU */
    wgt_read *r = wgt_read_begin(u, b, sizeof b);
    CHECK(r && r != old, "the new request's handle is the released one's (%s)", wgt_last_error());
    CHECK_ERROR(wgt_read_wait(old) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "wgt_read_wait: request is not a live request");
    CHECK_ERROR((wgt_read_release(old), 1), WGT_ERR_INVALID_ARGUMENT, "wgt_read_release");
    CHECK(wgt_read_wait(r) == WGT_OK, "the new request: %s", wgt_last_error());
    for (int i = 0; i < 4; i++) CHECK(b[i] == v[i], "b[%d] = %g", i, b[i]);
    wgt_read_release(r);
    wgt_release(u);
    wgt_release(t);
}

TEST_BACKENDS(read_handles_full_table_is_a_limit_error) {
    float v[4] = {1, 2, 3, 4}, got[4] = {0};
    wgt_tensor *t = wgt_tensor_from_data(ctx, WGT_F32, 1, S4, v, sizeof v, WGT_USAGE_DEFAULT);
    uint32_t old = wgt_read_handles_set_limit(0);
    CHECK_ERROR(!wgt_read_begin(t, got, sizeof got), WGT_ERR_LIMIT,
                "wgt_read_begin: 0 requests are alive, the most one process may hold at once");
    wgt_read_handles_set_limit(old);
    wgt_read_release(read_of(t, got));
    wgt_release(t);
}
