/*
 * Gradient checks (gradcheck.h) of the array API's further elementwise ops: the
 * differentiable unary ones on transposed inputs inside their domains, logaddexp, hypot and
 * copysign with broadcasting, and clip with tensor bounds (kinks kept away from the
 * finite-difference step), on both backends.
 */
#include "gradcheck.h"

#define V2(a, b) 2, {a, b}
#define F1(name, call) static wgt_tensor *name(wgt_tensor *const *x) { return call; }

F1(f_tan, wgt_tan(x[0]))
F1(f_asin, wgt_asin(x[0]))
F1(f_acos, wgt_acos(x[0]))
F1(f_atan, wgt_atan(x[0]))
F1(f_sinh, wgt_sinh(x[0]))
F1(f_cosh, wgt_cosh(x[0]))
F1(f_asinh, wgt_asinh(x[0]))
F1(f_acosh, wgt_acosh(x[0]))
F1(f_atanh, wgt_atanh(x[0]))
F1(f_log2, wgt_log2(x[0]))
F1(f_log10, wgt_log10(x[0]))
F1(f_exp2, wgt_exp2(x[0]))
F1(f_trunc, wgt_trunc(x[0]))
F1(f_logaddexp, wgt_logaddexp(x[0], x[1]))
F1(f_hypot, wgt_hypot(x[0], x[1]))
F1(f_copysign, wgt_copysign(x[0], x[1]))
F1(f_clip, wgt_clip(x[0], x[1], x[2]))
F1(f_clip_hi, wgt_clip(x[0], NULL, x[1]))

TEST_BACKENDS(autograd_grad_math2_unary) {
#define U(name, f, lo, hi, away) {name, f, 1, {{V2(3, 4), lo, hi, GC_TRANSPOSED, 0, away}}}
    const gc_case cases[] = {
        U("tan", f_tan, -1.2, 1.2, 0), U("asin", f_asin, -0.8, 0.8, 0), U("acos", f_acos, -0.8, 0.8, 0),
        U("atan", f_atan, -3, 3, 0), U("sinh", f_sinh, -2, 2, 0), U("cosh", f_cosh, -2, 2, 0),
        U("asinh", f_asinh, -3, 3, 0), U("acosh", f_acosh, 1.3, 4, 0), U("atanh", f_atanh, -0.8, 0.8, 0),
        U("log2", f_log2, 0.3, 4, 0), U("log10", f_log10, 0.3, 4, 0), U("exp2", f_exp2, -2, 2, 0),
        U("trunc", f_trunc, -2, 2, 0.05),
    };
#undef U
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) gradcheck(ctx, &cases[i]);
}

TEST_BACKENDS(autograd_grad_math2_binary) {
    const gc_case cases[] = {
        {"logaddexp broadcast", f_logaddexp, 2, {{V2(3, 4), -3, 3, GC_TRANSPOSED}, {V2(1, 4), -3, 3, GC_PLAIN}}},
        {"hypot", f_hypot, 2, {{V2(3, 4), -2, 2, GC_PLAIN, 0, 0.1}, {V2(3, 4), 0.5, 2, GC_STEPPED}}},
        {"copysign", f_copysign, 2, {{V2(3, 4), -2, 2, GC_PLAIN, 0, 0.1}, {V2(3, 4), -2, 2, GC_PLAIN, 0, 0.1}}},
        /* bounds straddle the values but stay 0.05 off whole numbers, the values too: no kinks */
        {"clip", f_clip, 3, {{V2(3, 4), -3, 3, GC_TRANSPOSED, 0, 0.05}, {V2(1, 4), -1.5, 0, GC_PLAIN, 0, 0.05},
                             {V2(3, 1), 0.1, 1.9, GC_PLAIN, 0, 0.05}}},
        {"clip upper only", f_clip_hi, 2, {{V2(3, 4), -3, 3, GC_PLAIN, 0, 0.05}, {V2(3, 4), -3, 3, GC_STEPPED, 0, 0.05}}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) gradcheck(ctx, &cases[i]);
}
