/* Helpers for differential tests: reading tensors as float64 and per-type tolerances. */
#include <malloc.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

double *test_read_f64(wgt_tensor *t) {
    int64_t n = wgt_tensor_numel(t);
    size_t nbytes = wgt_tensor_nbytes(t);
    double *out = malloc((size_t)(n > 0 ? n : 1) * sizeof *out);
    void *raw = malloc(nbytes ? nbytes : 1);
    if (!out || !raw || wgt_tensor_read(t, raw, nbytes) != WGT_OK) {
        free(out);
        free(raw);
        return NULL;
    }
    for (int64_t i = 0; i < n; i++) {
        switch (wgt_tensor_dtype(t)) {
        case WGT_F32: out[i] = ((float *)raw)[i]; break;
        case WGT_F16: out[i] = wgt_f16_to_f32(((uint16_t *)raw)[i]); break;
        case WGT_I32: out[i] = ((int32_t *)raw)[i]; break;
        case WGT_U32: out[i] = ((uint32_t *)raw)[i]; break;
        case WGT_BOOL: case WGT_U8: out[i] = ((uint8_t *)raw)[i]; break;
        case WGT_I8: out[i] = ((int8_t *)raw)[i]; break;
        case WGT_I16: out[i] = ((int16_t *)raw)[i]; break;
        case WGT_U16: out[i] = ((uint16_t *)raw)[i]; break;
        case WGT_BF16: out[i] = wgt_bf16_to_f32(((uint16_t *)raw)[i]); break;
        default: break;
        }
    }
    free(raw);
    return out;
}

double test_tolerance(wgt_dtype dtype, double reference) {
    double mag = fabs(reference);
    switch (dtype) {
    case WGT_F32: return 4e-7 * mag + 1e-30;
    case WGT_F16: return 2e-3 * mag + 6e-8; /* one f16 rounding plus f32 arithmetic */
    default: return 0;
    }
}

double test_round_to(wgt_dtype dtype, double v) {
    switch (dtype) {
    case WGT_F32: return (float)v;
    case WGT_F16: return wgt_f16_to_f32(wgt_f32_to_f16((float)v));
    default: return v;
    }
}

#ifdef __wasi__
long long wgt_wasm_heap_in_use(void); /* web/c/heap_in_use.c: wasi-libc has no mallinfo2 */
#endif

long long test_heap_in_use(void) {
#ifdef __wasi__
    return wgt_wasm_heap_in_use();
#else
    struct mallinfo2 m = mallinfo2();
    return (long long)(m.uordblks + m.hblkhd);
#endif
}

test_saved_env test_env_set(const char *var, const char *value) {
    const char *old = getenv(var);
    test_saved_env s = {var, old ? strdup(old) : NULL, old != NULL};
    if (value) setenv(var, value, 1);
    else unsetenv(var);
    return s;
}

void test_env_restore(test_saved_env *s) {
    if (s->had) setenv(s->var, s->old, 1);
    else unsetenv(s->var);
    free(s->old);
    s->old = NULL;
}
