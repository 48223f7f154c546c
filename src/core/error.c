/* Thread-local last error: see error.h. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local wgt_status last_status = WGT_OK;
static _Thread_local char last_message[1024];

static wgt_status record(wgt_status status, const char *fmt, va_list ap) {
    last_status = status;
    vsnprintf(last_message, sizeof last_message, fmt, ap);
    return status;
}

wgt_status wgt_error(wgt_status status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    record(status, fmt, ap);
    va_end(ap);
    return status;
}

wgt_status wgt_error_if_clear(wgt_status status, const char *fmt, ...) {
    if (last_status != WGT_OK) return status;
    va_list ap;
    va_start(ap, fmt);
    record(status, fmt, ap);
    va_end(ap);
    return status;
}

const char *wgt_last_error(void) { return last_status == WGT_OK ? "" : last_message; }
wgt_status wgt_last_status(void) { return last_status; }

void wgt_clear_error(void) {
    last_status = WGT_OK;
    last_message[0] = '\0';
}

const char *wgt_status_name(wgt_status status) {
    switch (status) {
    case WGT_OK: return "ok";
    case WGT_ERR_INVALID_ARGUMENT: return "invalid argument";
    case WGT_ERR_SHAPE: return "shape error";
    case WGT_ERR_DTYPE: return "data type error";
    case WGT_ERR_USAGE: return "usage error";
    case WGT_ERR_DESTROYED: return "tensor destroyed";
    case WGT_ERR_CONTEXT_MISMATCH: return "context mismatch";
    case WGT_ERR_OUT_OF_MEMORY: return "out of memory";
    case WGT_ERR_LIMIT: return "device limit exceeded";
    case WGT_ERR_UNAVAILABLE: return "backend unavailable";
    case WGT_ERR_DEVICE_LOST: return "device lost";
    case WGT_ERR_TIMEOUT: return "timeout";
    case WGT_ERR_BACKEND: return "backend error";
    case WGT_ERR_INTERNAL: return "internal error";
    }
    return "unknown status";
}
