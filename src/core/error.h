/*
 * Thread-local error state. Every failing public call records a status and a message that
 * names the bad values; wgt_last_error() hands the message back. The model is errno's: a
 * success does not clear the state, so the first failure in a chain of calls survives.
 */
#ifndef WGT_CORE_ERROR_H
#define WGT_CORE_ERROR_H

#include "wgtensor.h"

#if defined(__GNUC__)
#define WGT_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define WGT_PRINTF(a, b)
#endif

/* Records status and message; returns status so callers can `return wgt_error(...)`. */
wgt_status wgt_error(wgt_status status, const char *fmt, ...) WGT_PRINTF(2, 3);
/* Records only if no failure is pending: used where a NULL input is most likely the result
 * of an earlier failed call whose message must survive. */
wgt_status wgt_error_if_clear(wgt_status status, const char *fmt, ...) WGT_PRINTF(2, 3);

#endif
