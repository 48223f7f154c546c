/*
 * exp for softmax's rows (cpu_exp.c): e[i] = exp(x[i] - shift), where shift is the row's
 * maximum, so every argument is at most 0. Within 1 ulp of libm's exp in double; arguments
 * below -708 (where exp leaves the normal range, including -inf) give exp(-708), about
 * 3e-308, which is nothing next to the row's sum of at least 1 and rounds to 0 in f32 as
 * the exact value does.
 */
#ifndef WGT_CPU_EXP_H
#define WGT_CPU_EXP_H

#include <stdint.h>

void wgt_cpu_exp_shifted(double *e, const float *x, int64_t n, double shift);

#endif
