/*
 * Gradient checks: an op's gradient from wgt_backward, on the test's backend, against central
 * finite differences of the same op computed on the CPU backend and summed in double.
 *
 * The checked quantity is L = sum(f(x) * R) for fixed weights R (every output element weighs
 * in, with a different weight, so a gradient routed to the wrong element shows). Each input
 * is a leaf seen through a view (as is, transposed, or every other row), so the op gets strided
 * inputs and the view's own gradient is checked with it. The step is h = 2e-3 * max(1, |x|):
 * the f32 rounding of L costs about 6e-8 |L| / h, the truncation h^2 |f'''| / 6, both well under
 * the tolerance of 1e-2 relative plus 2e-3 of the largest gradient, while a gradient off by a
 * factor, missing, misplaced or of the wrong shape fails. An f16 input's reference runs the op
 * in f32 at the same (f16) values, where the step is not lost to f16 rounding; its gradient,
 * computed in f16, gets 3e-2 relative plus 1e-2 of the largest.
 */
#ifndef WGT_TEST_GRADCHECK_H
#define WGT_TEST_GRADCHECK_H

#include "test.h"

/* Cases list only the fields they need; the rest are zero on purpose. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

enum { GC_PLAIN = 0, GC_TRANSPOSED = 1, GC_STEPPED = 2, GC_CONST = 3 /* no gradient asked */ };
/* Values: uniform in [lo, hi]; away_from_int > 0 keeps them that far from whole numbers
 * (kinks and jumps of relu, abs, floor, mod lie there). */
typedef struct gc_input {
    int ndim;
    int64_t shape[4];
    double lo, hi;
    int view;
    wgt_dtype dtype; /* 0: f32 */
    double away_from_int;
} gc_input;

typedef wgt_tensor *(*gc_fn)(wgt_tensor *const *x);

typedef struct gc_case {
    const char *name;
    gc_fn f;
    int nin;
    gc_input in[4];
    double rtol; /* 0: 1e-2 */
} gc_case;

/* Checks one case on ctx (its FD reference on a CPU context of its own); failures name it. */
void gradcheck(wgt_context *ctx, const gc_case *c);

#endif
