/*
 * For the tests of stale handles (test_context_handles.c, test_kernel_handles.c): one call
 * given a released or forged handle must fail (call is true when it did) with
 * WGT_ERR_INVALID_ARGUMENT, its message naming the function and saying words.
 */
#ifndef WGT_TESTS_STALE_CALLS_H
#define WGT_TESTS_STALE_CALLS_H

#include "test.h"

#define CHECK_STALE_CALL(name, call, what, words)                                                             \
    do {                                                                                                      \
        wgt_clear_error();                                                                                    \
        CHECK(call, "%s with %s did not fail", #name, what);                                                  \
        CHECK(wgt_last_status() == WGT_ERR_INVALID_ARGUMENT && test_contains(wgt_last_error(), #name ": ") && \
                  test_contains(wgt_last_error(), words),                                                     \
              "%s with %s: %s %s", #name, what, wgt_status_name(wgt_last_status()), wgt_last_error());        \
    } while (0);

#endif
