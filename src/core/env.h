/*
 * Environment variables: every WGT_* variable the library reads goes through one of these
 * parsers, which reject what they do not understand with a one-line message naming the
 * variable and its value, instead of reading "abc" as the default or 2^32 as 0.
 */
#ifndef WGT_CORE_ENV_H
#define WGT_CORE_ENV_H

#include <stdint.h>

/* A whole decimal number in [min, max]: 1 and *out set; 0 when the variable is unset or
 * empty; -1 with the error recorded (naming fn and the variable) otherwise. */
int wgt_env_count(const char *fn, const char *var, uint64_t min, uint64_t max, uint64_t *out);
/* "0" or "1": 1 and *out set; 0 when unset or empty; -1 with the error recorded. */
int wgt_env_switch(const char *fn, const char *var, int *out);

#endif
