/*
 * Strict parsing of the WGT_* environment variables (see env.h): digits only, no sign, no
 * spaces, no wrap-around, so a typo fails context creation instead of changing a setting.
 */
#include "env.h"

#include <stdlib.h>

#include "error.h"

int wgt_env_count(const char *fn, const char *var, uint64_t min, uint64_t max, uint64_t *out) {
    const char *env = getenv(var);
    if (!env || !*env) return 0;
    uint64_t v = 0;
    const char *p = env;
    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10) break; /* past 64 bits: certainly past max */
        v = v * 10 + d;
    }
    if (*p || v < min || v > max) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: %s=%s is not a whole number from %llu to %llu", fn, var, env,
                  (unsigned long long)min, (unsigned long long)max);
        return -1;
    }
    *out = v;
    return 1;
}

int wgt_env_switch(const char *fn, const char *var, int *out) {
    const char *env = getenv(var);
    if (!env || !*env) return 0;
    if ((env[0] == '0' || env[0] == '1') && !env[1]) {
        *out = env[0] == '1';
        return 1;
    }
    wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: %s=%s is not 0 or 1", fn, var, env);
    return -1;
}
