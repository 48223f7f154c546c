/*
 * Differential tests of the row ops: softmax and log_softmax along every axis (negative
 * ones too), layer_norm and rms_norm over the last axis, in f32 and f16, for row lengths
 * around the kernels' boundaries (1, 2, 7, 63, 64, 65, 257, 1000, 4099), many rows (more
 * workgroups than one dispatch dimension holds), contiguous, transposed, sliced and
 * broadcast inputs, weight and bias present or absent and themselves broadcast or sliced
 * views. Each backend is compared with a float64 reference computed from the inputs as read
 * back, within bounds derived below from the rounding of f32 arithmetic; special values
 * (+inf, -inf, NaN, huge logits, constant rows) have exact expected outcomes, PyTorch's.
 * Error cases check the status and a word of the message. Outputs are poisoned
 * (WGT_POISON=1, in the runner's poisoned pass) so unwritten elements show.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "norm_util.h"
#include "test.h"

typedef enum { OP_SOFTMAX, OP_LOG_SOFTMAX, OP_LAYER_NORM, OP_RMS_NORM, OP_COUNT } row_op;
static const char *const op_names[] = {"softmax", "log_softmax", "layer_norm", "rms_norm"};

/* ---- inputs -------------------------------------------------------------------------- */

static uint32_t rng(uint64_t *s) {
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(*s >> 32);
}
static double rng_unit(uint64_t *s) { return rng(s) / 4294967296.0; }

/* Seeded values center + spread * (roughly normal): logits of spread 3 reach exponents of
 * -20 and below, where softmax values are tiny; f16 rows stay well inside its range. */
static wgt_tensor *random_tensor(wgt_context *ctx, wgt_dtype dt, int ndim, const int64_t *shape, uint64_t seed,
                                 double center, double spread) {
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    uint64_t s = seed * 7919 + 17;
    for (int64_t i = 0; v && i < n; i++)
        v[i] = center + spread * (rng_unit(&s) + rng_unit(&s) + rng_unit(&s) - 1.5) * 2;
    wgt_tensor *t = v ? from_doubles(ctx, dt, ndim, shape, v) : NULL;
    free(v);
    return t;
}

typedef enum { CONTIGUOUS, TRANSPOSED, SLICED, BROADCAST, LAYOUT_COUNT } layout;
static const char *const layout_names[] = {"contiguous", "transposed", "sliced", "broadcast"};

/* A view of the given shape (no zero dimensions) in the given layout; the base tensor is
 * released (the view keeps the storage alive). Transposed: dimensions reversed. Sliced:
 * every other element from 1 on each axis, the last axis backwards. Broadcast: even axes
 * have stride 0 (for rank 1 the only axis). */
static wgt_tensor *make_input(wgt_context *ctx, wgt_dtype dt, layout l, int ndim, const int64_t *shape, uint64_t seed,
                              double center, double spread) {
    int64_t s[WGT_MAX_DIMS] = {0};
    wgt_tensor *v = NULL, *t;
    switch (l) {
    case TRANSPOSED:
        for (int i = 0; i < ndim; i++) s[i] = shape[ndim - 1 - i];
        v = random_tensor(ctx, dt, ndim, s, seed, center, spread);
        if (ndim == 1) {
            t = wgt_slice(v, 0, -1, -(shape[0] + 1), -1);
            wgt_release(v);
            return t;
        }
        for (int i = 0; i < ndim / 2; i++) {
            t = wgt_transpose(v, i, ndim - 1 - i);
            wgt_release(v);
            v = t;
        }
        return v;
    case SLICED:
        for (int i = 0; i < ndim; i++) s[i] = 2 * shape[i] + 1;
        v = random_tensor(ctx, dt, ndim, s, seed, center, spread);
        for (int i = 0; i < ndim; i++) {
            t = i < ndim - 1 ? wgt_slice(v, i, 1, s[i], 2) : wgt_slice(v, i, 2 * shape[i], 0, -2);
            wgt_release(v);
            v = t;
        }
        return v;
    case BROADCAST:
        for (int i = 0; i < ndim; i++) s[i] = i % 2 == 0 ? 1 : shape[i];
        v = random_tensor(ctx, dt, ndim, s, seed, center, spread);
        t = wgt_broadcast_to(v, ndim, shape);
        wgt_release(v);
        return t;
    default: return random_tensor(ctx, dt, ndim, shape, seed, center, spread);
    }
}

/* ---- reference and tolerances --------------------------------------------------------- */

/* U, f32's unit roundoff, and out_rel, the output type's rounding: norm_util.h. An
 * element's share of a blocked or tree sum of n terms goes through at most about 2 sqrt(n) + 8 roundings for the row
 * lengths and invocation counts tested here (blocks of 64 per invocation, then a tree of up
 * to 256), so a sum of positive terms is within U * growth(n) of exact, relatively. */
static double growth(int64_t n) { return 2 * sqrt((double)n) + 8; }
/* The absolute floor: f16's subnormal step, f32's smallest normal (a GPU may flush
 * subnormal results to zero). */
static double out_abs(wgt_dtype dt) { return dt == WGT_F16 ? 6e-8 : 1.2e-38; }

typedef struct {
    double value, tol;
} expected;

/* The reference results of op over one row x[0..n) (weight w and bias b may be NULL) and a
 * bound on the error of an f32 computation of each:
 *   softmax: d = x - max is rounded (relative error U |d| in exp(d)) and WGSL allows exp
 *     3 + 2|d| ULP, so each exponential is within U (6 + 5|d|) relatively; the sum adds
 *     U growth(n) and the weighted errors of its terms; 1/sum and the product add 3 U.
 *   log_softmax: d - log(sum) is absolute: U |d| from d, the sum's relative error, log's
 *     own (2^-21 absolutely near 1, 3 ULP beyond: 6 U log(sum) <= 6 U log(n)), and U |y|.
 *   layer_norm: on the row shifted by a value inside it, the centred values are within
 *     U (growth(n) + 4) of the row's largest |x - mean|, i.e. that times max |z| after
 *     scaling (z the normalised values); 1/std adds U (growth(n) / 2 + 8) relatively.
 *   rms_norm: 1/rms is within U (growth(n) / 2 + 6) relatively, the products add 3 U.
 * weight and bias then add U (|z w| + |y|). */
static void reference_row(row_op op, wgt_dtype dt, const double *x, int64_t n, const double *w, const double *b,
                          double eps, expected *e) {
    double m = -INFINITY;
    for (int64_t j = 0; j < n; j++)
        if (isnan(x[j]) || x[j] > m) m = isnan(m) ? m : x[j];
    if (op == OP_SOFTMAX || op == OP_LOG_SOFTMAX) {
        if (!isfinite(m)) { /* NaN, +inf, or nothing but -inf: the whole row is NaN */
            for (int64_t j = 0; j < n; j++) e[j].value = NAN, e[j].tol = 0;
            return;
        }
        double s = 0, weighted = 0;
        for (int64_t j = 0; j < n; j++) s += exp(x[j] - m);
        for (int64_t j = 0; j < n; j++) weighted += exp(x[j] - m) / s * (6 + 5 * fabs(x[j] - m));
        double rel_s = U * (growth(n) + weighted);
        for (int64_t j = 0; j < n; j++) {
            double d = x[j] - m;
            if (op == OP_SOFTMAX) {
                e[j].value = exp(d) / s;
                e[j].tol = e[j].value * (U * (9 + 5 * fabs(d)) + rel_s + out_rel(dt)) + out_abs(dt);
            } else {
                e[j].value = d - log(s);
                e[j].tol = U * fabs(d) + rel_s + pow(2, -21) + 6 * U * log(s) + (U + out_rel(dt)) * fabs(e[j].value) +
                           out_abs(dt);
            }
        }
        return;
    }
    double sum = 0, sq = 0, r;
    for (int64_t j = 0; j < n; j++) sum += x[j];
    double mean = op == OP_LAYER_NORM ? sum / (double)n : 0;
    for (int64_t j = 0; j < n; j++) sq += (x[j] - mean) * (x[j] - mean);
    r = 1 / sqrt(sq / (double)n + eps);
    double zmax = 0;
    for (int64_t j = 0; j < n; j++) zmax = fmax(zmax, fabs((x[j] - mean) * r));
    for (int64_t j = 0; j < n; j++) {
        double z = (x[j] - mean) * r, wj = w ? w[j] : 1, y = z * wj + (b ? b[j] : 0), ez;
        if (op == OP_LAYER_NORM) ez = U * (growth(n) + 4) * zmax + fabs(z) * U * (growth(n) / 2 + 8);
        else ez = fabs(z) * U * (growth(n) / 2 + 9);
        e[j].value = y;
        e[j].tol = fabs(wj) * ez + U * (fabs(z * wj) + fabs(y)) + out_rel(dt) * fabs(y) + out_abs(dt);
    }
}

static int matches(double got, expected e) {
    if (isnan(e.value)) return isnan(got);
    if (isinf(e.value)) return got == e.value;
    return fabs(got - e.value) <= e.tol;
}

static wgt_tensor *apply(row_op op, wgt_tensor *a, int axis, wgt_tensor *w, wgt_tensor *b, double eps) {
    switch (op) {
    case OP_SOFTMAX: return wgt_softmax(a, axis);
    case OP_LOG_SOFTMAX: return wgt_log_softmax(a, axis);
    case OP_LAYER_NORM: return wgt_layer_norm(a, w, b, eps);
    default: return wgt_rms_norm(a, w, eps);
    }
}

static void format_shape(char *buf, size_t size, wgt_tensor *t) {
    int used = snprintf(buf, size, "[");
    for (int d = 0; d < wgt_tensor_ndim(t) && used < (int)size; d++)
        used += snprintf(buf + used, size - (size_t)used, d ? ", %lld" : "%lld", (long long)wgt_tensor_shape(t)[d]);
    if (used < (int)size) snprintf(buf + used, size - (size_t)used, "]");
}

/* Applies op to a along axis (the norms: the last axis; w, b may be NULL) and compares every
 * element with the reference. Returns the largest error / tolerance ratio seen. */
static double check_rows(row_op op, wgt_tensor *a, int axis, wgt_tensor *w, wgt_tensor *b, double eps,
                         const char *what) {
    int ndim = wgt_tensor_ndim(a);
    wgt_dtype dt = wgt_tensor_dtype(a);
    if (op == OP_RMS_NORM) b = NULL; /* rms_norm takes no bias */
    char desc[256], sh[96];
    format_shape(sh, sizeof sh, a);
    snprintf(desc, sizeof desc, "%s %s %s %s axis %d%s%s", op_names[op], wgt_dtype_name(dt), what, sh, axis,
             w ? " weight" : "", b ? " bias" : "");
    wgt_tensor *r = apply(op, a, axis, w, b, eps);
    CHECK(r != NULL, "%s: %s", desc, wgt_last_error());
    if (!r) return 0;
    int same_shape = wgt_tensor_ndim(r) == ndim && wgt_tensor_dtype(r) == dt;
    for (int d = 0; same_shape && d < ndim; d++) same_shape = wgt_tensor_shape(r)[d] == wgt_tensor_shape(a)[d];
    CHECK(same_shape, "%s: result has rank %d and type %s", desc, wgt_tensor_ndim(r), wgt_dtype_name(wgt_tensor_dtype(r)));
    /* Rows along the axis: element j of row (outer, inner) is at (outer * len + j) * inner_n + inner. */
    int ax = ndim == 0 ? 0 : (axis % ndim + ndim) % ndim;
    int64_t len = ndim ? wgt_tensor_shape(a)[ax] : 1, inner_n = 1, n = wgt_tensor_numel(a);
    for (int d = ax + 1; d < ndim; d++) inner_n *= wgt_tensor_shape(a)[d];
    double *x = test_read_f64(a), *got = test_read_f64(r), *wv = w ? test_read_f64(w) : NULL;
    double *bv = b ? test_read_f64(b) : NULL, *row = malloc((size_t)(len > 0 ? len : 1) * sizeof *row);
    expected *e = malloc((size_t)(len > 0 ? len : 1) * sizeof *e);
    CHECK(x && got && row && e && (!w || wv) && (!b || bv), "%s: reading back: %s", desc, wgt_last_error());
    int bad = 0;
    double worst = 0;
    for (int64_t start = 0; same_shape && x && got && row && e && len > 0 && start < n; start++) {
        if (start / inner_n % len != 0) continue; /* not the first element of a row */
        for (int64_t j = 0; j < len; j++) row[j] = x[start + j * inner_n];
        reference_row(op, dt, row, len, wv, bv, eps, e);
        for (int64_t j = 0; j < len; j++) {
            double g = got[start + j * inner_n];
            if (e[j].tol > 0 && isfinite(e[j].value)) worst = fmax(worst, fabs(g - e[j].value) / e[j].tol);
            if (!matches(g, e[j]) && bad++ < 3)
                CHECK(0, "%s: element %lld (row position %lld) is %.9g, want %.9g (tolerance %.3g)", desc,
                      (long long)(start + j * inner_n), (long long)j, g, e[j].value, e[j].tol);
        }
    }
    free(x);
    free(got);
    free(wv);
    free(bv);
    free(row);
    free(e);
    wgt_release(r);
    return worst;
}

/* ---- row lengths and types ------------------------------------------------------------ */

static const int64_t lengths[] = {1, 2, 7, 63, 64, 65, 257, 1000, 4099};
#define NLENGTHS (sizeof lengths / sizeof *lengths)

TEST_BACKENDS(softmax_row_lengths_f32_f16) {
    uint64_t seed = 1;
    for (int op = OP_SOFTMAX; op <= OP_LOG_SOFTMAX; op++)
        for (int t = 0; t < 2; t++)
            for (size_t i = 0; i < NLENGTHS; i++) {
                /* 3 rows: an odd count, so f16 rows of odd length share packed words. */
                int64_t shape[2] = {3, lengths[i]};
                wgt_tensor *a = random_tensor(ctx, float_types[t], 2, shape, seed++, 0.5, 3);
                check_rows((row_op)op, a, -1, NULL, NULL, 0, "contiguous");
                wgt_release(a);
            }
}

TEST_BACKENDS(norm_row_lengths_f32_f16) {
    uint64_t seed = 100;
    for (int op = OP_LAYER_NORM; op <= OP_RMS_NORM; op++)
        for (int t = 0; t < 2; t++)
            for (size_t i = 0; i < NLENGTHS; i++) {
                wgt_dtype dt = float_types[t];
                int64_t shape[2] = {3, lengths[i]}, d = lengths[i];
                /* Rows with a mean beside their spread, so centring matters. */
                wgt_tensor *a = random_tensor(ctx, dt, 2, shape, seed++, 2, 3);
                wgt_tensor *w = random_tensor(ctx, dt, 1, &d, seed++, 1, 0.5);
                wgt_tensor *b = random_tensor(ctx, dt, 1, &d, seed++, 0, 1);
                /* Weight and bias present or absent in turn. */
                int k = (int)i % 4;
                check_rows((row_op)op, a, -1, k & 1 ? w : NULL, k & 2 ? b : NULL, 1e-5, "contiguous");
                wgt_release(a);
                wgt_release(w);
                wgt_release(b);
            }
}

/* layer_norm of rows with a mean far above their spread: a plain f32 mean of values near
 * 1e4 is off by ~1e-3, which would show in every normalised value. */
TEST_BACKENDS(norm_layer_norm_large_mean) {
    int64_t shape[2] = {4, 1000};
    for (int t = 0; t < 2; t++) {
        double center = float_types[t] == WGT_F16 ? 1000 : 1e4;
        wgt_tensor *a = random_tensor(ctx, float_types[t], 2, shape, 9 + t, center, 1);
        check_rows(OP_LAYER_NORM, a, -1, NULL, NULL, 1e-6, "large mean");
        wgt_release(a);
    }
}

/* ---- axes and layouts ------------------------------------------------------------------ */

TEST_BACKENDS(softmax_every_axis_and_layout) {
    static const int64_t shape[3] = {5, 7, 3};
    uint64_t seed = 200;
    int config = 0;
    for (int op = OP_SOFTMAX; op <= OP_LOG_SOFTMAX; op++)
        for (int t = 0; t < 2; t++)
            for (int axis = -3; axis < 3; axis++, config++) {
                layout l = (layout)(config % LAYOUT_COUNT);
                wgt_tensor *a = make_input(ctx, float_types[t], l, 3, shape, seed++, 0, 2);
                check_rows((row_op)op, a, axis, NULL, NULL, 0, layout_names[l]);
                /* The result is a's shape; only a last-axis result is contiguous here. */
                wgt_tensor *r = apply((row_op)op, a, axis, NULL, NULL, 0);
                CHECK(r && wgt_tensor_is_contiguous(r) == (axis == 2 || axis == -1), "%s axis %d: contiguous %d",
                      op_names[op], axis, wgt_tensor_is_contiguous(r));
                wgt_release(r);
                wgt_release(a);
            }
    /* Rank 1 and 4, every layout. */
    int64_t s1[1] = {33}, s4[4] = {2, 3, 5, 4};
    for (int l = 0; l < LAYOUT_COUNT; l++) {
        wgt_tensor *a = make_input(ctx, WGT_F32, (layout)l, 1, s1, seed++, 0, 2);
        wgt_tensor *b = make_input(ctx, WGT_F16, (layout)l, 4, s4, seed++, 0, 2);
        check_rows(OP_SOFTMAX, a, 0, NULL, NULL, 0, layout_names[l]);
        check_rows(OP_LOG_SOFTMAX, b, l - 4, NULL, NULL, 0, layout_names[l]);
        check_rows(OP_SOFTMAX, b, l, NULL, NULL, 0, layout_names[l]);
        wgt_release(a);
        wgt_release(b);
    }
}

/* weight and bias as views: broadcast from one element (stride 0), and every other element
 * backwards (stride -2, an offset into their storage). */
static wgt_tensor *param_view(wgt_context *ctx, wgt_dtype dt, int64_t d, int kind, uint64_t seed) {
    if (kind == 0) return random_tensor(ctx, dt, 1, &d, seed, 1, 0.5);
    if (kind == 1) {
        int64_t one = 1;
        wgt_tensor *s = random_tensor(ctx, dt, 1, &one, seed, 1, 0.5), *v = wgt_broadcast_to(s, 1, &d);
        wgt_release(s);
        return v;
    }
    int64_t full = 2 * d + 1;
    wgt_tensor *s = random_tensor(ctx, dt, 1, &full, seed, 0, 1), *v = wgt_slice(s, 0, 2 * d, 0, -2);
    wgt_release(s);
    return v;
}

TEST_BACKENDS(norm_layouts_and_param_views) {
    static const int64_t shapes[3][3] = {{5, 7, 3}, {3, 4, 65}, {2, 9, 130}};
    uint64_t seed = 300;
    int config = 0;
    for (int s = 0; s < 3; s++)
        for (int op = OP_LAYER_NORM; op <= OP_RMS_NORM; op++)
            for (int t = 0; t < 2; t++)
                for (int l = 0; l < LAYOUT_COUNT; l++, config++) {
                    wgt_dtype dt = float_types[t];
                    int64_t d = shapes[s][2];
                    wgt_tensor *a = make_input(ctx, dt, (layout)l, 3, shapes[s], seed++, 1, 2);
                    wgt_tensor *w = param_view(ctx, dt, d, config % 3, seed++);
                    wgt_tensor *b = param_view(ctx, dt, d, (config + 1) % 3, seed++);
                    check_rows((row_op)op, a, -1, config % 4 == 3 ? NULL : w, config % 2 ? b : NULL, 1e-3,
                               layout_names[l]);
                    wgt_release(a);
                    wgt_release(w);
                    wgt_release(b);
                }
}

/* weight and bias that are views of the input's own storage: the kernel binds one buffer
 * as input, weight and bias at once (all read-only), and the output stays apart. */
TEST_BACKENDS(norm_params_share_input_storage) {
    for (int t = 0; t < 2; t++) {
        int64_t shape[2] = {6, 65}, d = 65, stride = 1;
        wgt_tensor *a = random_tensor(ctx, float_types[t], 2, shape, 400 + t, 1, 1);
        wgt_tensor *w = wgt_as_strided(a, 1, &d, &stride, 65), *b = wgt_as_strided(a, 1, &d, &stride, 130);
        check_rows(OP_LAYER_NORM, a, -1, w, b, 1e-5, "weight, bias in a");
        check_rows(OP_RMS_NORM, a, -1, w, NULL, 1e-5, "weight in a");
        wgt_release(w);
        wgt_release(b);
        wgt_release(a);
    }
}

/* ---- dense rows ------------------------------------------------------------------------- */

/* A [rows, len] view whose rows are consecutive elements: row r starts at element start +
 * r * row_stride of a larger tensor (row_stride 0: every row the same; negative: the rows
 * in reverse order, start then being the last row's). */
static wgt_tensor *rows_view(wgt_context *ctx, wgt_dtype dt, int64_t rows, int64_t len, int64_t row_stride,
                             int64_t start, uint64_t seed) {
    int64_t reach = (rows - 1) * (row_stride < 0 ? -row_stride : row_stride), n = start + reach + len + 3;
    int64_t shape[2] = {rows, len}, strides[2] = {row_stride, 1};
    wgt_tensor *s = random_tensor(ctx, dt, 1, &n, seed, 1, 2);
    wgt_tensor *v = wgt_as_strided(s, 2, shape, strides, start + (row_stride < 0 ? reach : 0));
    wgt_release(s);
    return v;
}

/* weight or bias for the dense rows: param_view's kinds 0..2, then consecutive elements
 * from element 4 (kind 3, aligned as the rows) or from element 1 (kind 4). */
static wgt_tensor *dense_param(wgt_context *ctx, wgt_dtype dt, int64_t d, int kind, uint64_t seed) {
    if (kind < 3) return param_view(ctx, dt, d, kind, seed);
    int64_t start = kind == 3 ? 4 : 1, n = d + start;
    wgt_tensor *s = random_tensor(ctx, dt, 1, &n, seed, 1, 0.5), *v = wgt_slice(s, 0, start, n, 1);
    wgt_release(s);
    return v;
}

/* Row lengths, row counts and layouts around the dense kernel's choices: units of 4 elements
 * (rows aligned to 4, and f32 rows that are not, read as masked spans), of two f16 (f16 rows
 * that are not), or the strided kernel (f16 rows on odd elements); 1 to 256 invocations per row (one or two levels of partials, the
 * last workgroup partly empty); rows that fit in registers, fill them exactly, or go past
 * them by one unit or by more than a block of 64; padded, repeated and reversed rows; weight
 * and bias present or absent, read in units or element by element. */
TEST_BACKENDS(rows_dense_lengths_and_layouts) {
    static const struct {
        int64_t rows, len, row_stride, start;
    } cases[] = {
        {3, 4, 4, 0},          {300, 4, 8, 4},          {5, 8, 0, 4},          {33, 12, -12, 0},
        {17, 64, 64, 0},       {9, 256, 260, 8},        {41, 1000, 1000, 0},   {3, 1024, -1028, 4},
        {2, 4096, 4096, 0},    {2, 8196, 8196, 0},      {1, 80000, 80000, 0},  {70, 6, 6, 0},
        {300, 2, 2, 0},        {3, 130, 131, 1},        {3, 130, 132, 2},      {2, 4099, 4099, 0},
        {1, 9001, 9001, 0},    {1, 16386, 16386, 2},
    };
    uint64_t seed = 900;
    int config = 0;
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
        for (int t = 0; t < 2; t++)
            for (int op = 0; op < OP_COUNT; op++, config++) {
                wgt_dtype dt = float_types[t];
                int64_t d = cases[c].len;
                wgt_tensor *a = rows_view(ctx, dt, cases[c].rows, d, cases[c].row_stride, cases[c].start, seed++);
                wgt_tensor *w = dense_param(ctx, dt, d, config % 5, seed++), *b = dense_param(ctx, dt, d, (config + 2) % 5, seed++);
                char what[96];
                snprintf(what, sizeof what, "rows of stride %lld from %lld", (long long)cases[c].row_stride,
                         (long long)cases[c].start);
                check_rows((row_op)op, a, -1, config % 4 == 3 ? NULL : w, config % 2 ? b : NULL, 1e-5, what);
                wgt_release(a);
                wgt_release(w);
                wgt_release(b);
            }
}

/* ---- sizes 0 and 1, rank 0 ------------------------------------------------------------- */

TEST_BACKENDS(softmax_empty_rows_and_rank0) {
    for (int t = 0; t < 2; t++) {
        wgt_dtype dt = float_types[t];
        int64_t s40[2] = {4, 0}, s05[2] = {0, 5}, d5 = 5, d0 = 0;
        wgt_tensor *e = wgt_zeros(ctx, dt, 2, s40), *z = wgt_zeros(ctx, dt, 2, s05);
        wgt_tensor *w5 = wgt_ones(ctx, dt, 1, &d5), *w0 = wgt_ones(ctx, dt, 1, &d0);
        wgt_tensor *r[6] = {wgt_softmax(e, 1), wgt_log_softmax(e, 0), wgt_softmax(z, -1), wgt_layer_norm(e, w0, w0, 1e-5),
                            wgt_rms_norm(z, w5, 1e-5), wgt_log_softmax(z, 0)};
        for (int k = 0; k < 6; k++) {
            wgt_tensor *src = k == 0 || k == 1 || k == 3 ? e : z;
            CHECK(r[k] && wgt_tensor_numel(r[k]) == 0 && wgt_tensor_ndim(r[k]) == 2 &&
                      wgt_tensor_shape(r[k])[0] == wgt_tensor_shape(src)[0] &&
                      wgt_tensor_shape(r[k])[1] == wgt_tensor_shape(src)[1],
                  "%s empty case %d: %s", wgt_dtype_name(dt), k, wgt_last_error());
            wgt_release(r[k]);
        }
        /* Rank 0: one row of one element along axis 0 or -1, as in PyTorch. */
        wgt_tensor *s = wgt_full(ctx, dt, 0, NULL, 3.5), *a = wgt_softmax(s, 0), *b = wgt_log_softmax(s, -1);
        double *va = test_read_f64(a), *vb = test_read_f64(b);
        CHECK(va && vb && wgt_tensor_ndim(a) == 0 && va[0] == 1 && vb[0] == 0, "%s rank 0: %s", wgt_dtype_name(dt),
              wgt_last_error());
        CHECK_ERROR(wgt_softmax(s, 1) == NULL, WGT_ERR_SHAPE, "axis 1");
        CHECK_ERROR(wgt_layer_norm(s, NULL, NULL, 1e-5) == NULL, WGT_ERR_SHAPE, "rank 0");
        free(va);
        free(vb);
        wgt_release(a);
        wgt_release(b);
        wgt_release(s);
        wgt_release(e);
        wgt_release(z);
        wgt_release(w5);
        wgt_release(w0);
    }
}

/* ---- many rows ------------------------------------------------------------------------- */

/* rms_norm of f16 rows of 2 from a [Q, 1031, 2] view with strides [0, step, 1] over
 * step * 1031 + 1 values: row (q, p) is (v[step p], v[step p + 1]), so neighbouring rows
 * differ, and Q * 1031 rows need more than 65535 workgroups of 256 rows: the 2-D grid. Step 1
 * starts rows on odd elements (the strided kernel), step 2 on words (the dense kernel). */
static void check_f16_pairs_2d_grid(wgt_context *ctx, int64_t step) {
    const int64_t period = 1031, q = 65535 * 256 / period + 2, rows = q * period;
    int64_t vn = step * period + 1, d2 = 2;
    wgt_tensor *v = random_tensor(ctx, WGT_F16, 1, &vn, 77, 0, 2), *w = random_tensor(ctx, WGT_F16, 1, &d2, 78, 1, 0.5);
    int64_t vshape[3] = {q, period, 2}, vstrides[3] = {0, step, 1};
    wgt_tensor *x = wgt_as_strided(v, 3, vshape, vstrides, 0);
    wgt_tensor *r = wgt_rms_norm(x, w, 1e-5);
    double *vals = test_read_f64(v), *wv = test_read_f64(w);
    uint16_t *out = malloc((size_t)rows * 2 * sizeof *out);
    CHECK(r && vals && wv && out && wgt_tensor_read(r, out, (size_t)rows * 4) == WGT_OK,
          "rms_norm of [%lld, %lld, 2], step %lld: %s", (long long)q, (long long)period, (long long)step,
          wgt_last_error());
    /* Block 0 against the reference; every later block repeats its rows, so it must repeat
     * its bits too (a row computed from the wrong place, or not at all, would differ). */
    expected e[2];
    int bad = 0;
    for (int64_t p = 0; r && vals && wv && out && p < period; p++) {
        reference_row(OP_RMS_NORM, WGT_F16, vals + step * p, 2, wv, NULL, 1e-5, e);
        for (int j = 0; j < 2; j++) {
            double g = wgt_f16_to_f32(out[p * 2 + j]);
            if (!matches(g, e[j]) && bad++ < 3)
                CHECK(0, "step %lld: row %lld element %d is %.6g, want %.6g", (long long)step, (long long)p, j, g,
                      e[j].value);
        }
    }
    size_t block = (size_t)period * 2 * sizeof *out;
    for (int64_t k = 1; r && out && k < q; k++)
        if (memcmp(out, out + k * period * 2, block) != 0 && bad++ < 3)
            CHECK(0, "step %lld: rows of block %lld differ from block 0", (long long)step, (long long)k);
    free(vals);
    free(wv);
    free(out);
    wgt_release(r);
    wgt_release(x);
    wgt_release(v);
    wgt_release(w);
}

/* [70000, 3] rows (one invocation each), f16 rows of odd length 65 shared by many
 * workgroups, and f16 rows of 2 beyond 65535 workgroups (check_f16_pairs_2d_grid). */
TEST_BACKENDS(softmax_many_rows_2d_grid) {
    int64_t shape[2] = {70000, 3}, d3 = 3, odd[2] = {3001, 65};
    for (int op = 0; op < OP_COUNT; op++) {
        wgt_tensor *a = random_tensor(ctx, WGT_F32, 2, shape, 700 + op, 0, 2);
        wgt_tensor *w = random_tensor(ctx, WGT_F32, 1, &d3, 710 + op, 1, 0.5), *b = random_tensor(ctx, WGT_F32, 1, &d3, 720, 0, 1);
        check_rows((row_op)op, a, 1, w, b, 1e-5, "many rows");
        wgt_release(a);
        wgt_release(w);
        wgt_release(b);
        a = random_tensor(ctx, WGT_F16, 2, odd, 730 + op, 1, 2);
        check_rows((row_op)op, a, -1, NULL, NULL, 1e-5, "many odd rows");
        wgt_release(a);
    }
    /* The grid is the WebGPU dispatch's concern; the CPU backend has none to test. */
    if (!strcmp(test_backend_name(), "cpu")) return;
    check_f16_pairs_2d_grid(ctx, 1);
    check_f16_pairs_2d_grid(ctx, 2);
}

/* ---- errors ---------------------------------------------------------------------------- */

/* A call expected to fail with status and a message containing both words. */
static void expect_error(wgt_tensor *r, wgt_status status, const char *w1, const char *w2, const char *what) {
    CHECK(r == NULL, "%s: did not fail", what);
    CHECK(wgt_last_status() == status && test_contains(wgt_last_error(), w1) && test_contains(wgt_last_error(), w2),
          "%s: status %s, wanted %s; message: %s", what, wgt_status_name(wgt_last_status()), wgt_status_name(status),
          wgt_last_error());
    wgt_release(r);
    wgt_clear_error();
}

TEST_BACKENDS(norm_and_softmax_errors) {
    int64_t shape[2] = {2, 3}, d3 = 3, d4 = 4, s13[2] = {1, 3};
    wgt_tensor *a = wgt_ones(ctx, WGT_F32, 2, shape), *ai = wgt_ones(ctx, WGT_I32, 2, shape);
    wgt_tensor *au = wgt_ones(ctx, WGT_U32, 2, shape);
    wgt_tensor *w3 = wgt_ones(ctx, WGT_F32, 1, &d3), *w4 = wgt_ones(ctx, WGT_F32, 1, &d4);
    wgt_tensor *h3 = wgt_ones(ctx, WGT_F16, 1, &d3), *w13 = wgt_ones(ctx, WGT_F32, 2, s13);
    wgt_clear_error();
    expect_error(wgt_softmax(ai, 1), WGT_ERR_DTYPE, "wgt_softmax", "i32", "softmax of i32");
    expect_error(wgt_log_softmax(au, 0), WGT_ERR_DTYPE, "wgt_log_softmax", "u32", "log_softmax of u32");
    expect_error(wgt_layer_norm(ai, NULL, NULL, 1e-5), WGT_ERR_DTYPE, "wgt_layer_norm", "i32", "layer_norm of i32");
    expect_error(wgt_rms_norm(au, NULL, 1e-5), WGT_ERR_DTYPE, "wgt_rms_norm", "u32", "rms_norm of u32");
    expect_error(wgt_softmax(a, 2), WGT_ERR_SHAPE, "wgt_softmax", "axis 2", "softmax axis 2");
    expect_error(wgt_log_softmax(a, -3), WGT_ERR_SHAPE, "wgt_log_softmax", "axis -3", "log_softmax axis -3");
    expect_error(wgt_layer_norm(a, w4, NULL, 1e-5), WGT_ERR_SHAPE, "weight", "[4]", "layer_norm weight [4]");
    expect_error(wgt_layer_norm(a, w3, w4, 1e-5), WGT_ERR_SHAPE, "bias", "[3]", "layer_norm bias [4]");
    expect_error(wgt_rms_norm(a, w13, 1e-5), WGT_ERR_SHAPE, "weight", "[1, 3]", "rms_norm weight [1, 3]");
    expect_error(wgt_layer_norm(a, h3, NULL, 1e-5), WGT_ERR_DTYPE, "weight", "f16", "layer_norm f16 weight");
    expect_error(wgt_layer_norm(a, w3, h3, 1e-5), WGT_ERR_DTYPE, "bias", "f16", "layer_norm f16 bias");
    expect_error(wgt_layer_norm(a, NULL, NULL, -1e-5), WGT_ERR_INVALID_ARGUMENT, "wgt_layer_norm", "eps", "negative eps");
    expect_error(wgt_rms_norm(a, NULL, NAN), WGT_ERR_INVALID_ARGUMENT, "wgt_rms_norm", "eps", "NaN eps");
    expect_error(wgt_rms_norm(a, w3, INFINITY), WGT_ERR_INVALID_ARGUMENT, "wgt_rms_norm", "eps", "infinite eps");
    expect_error(wgt_softmax(NULL, 0), WGT_ERR_INVALID_ARGUMENT, "wgt_softmax", "NULL", "NULL input");
    /* A NULL input keeps the first error of a chain. */
    expect_error(wgt_layer_norm(wgt_softmax(a, 5), w3, NULL, 1e-5), WGT_ERR_SHAPE, "wgt_softmax", "axis 5",
                 "chain after a bad axis");
    expect_error(wgt_rms_norm(wgt_log_softmax(ai, 0), NULL, 1e-5), WGT_ERR_DTYPE, "wgt_log_softmax", "i32",
                 "chain after an integer input");
    /* weight from another context. */
    wgt_context *other = test_new_context(WGT_BACKEND_CPU);
    wgt_tensor *wo = other ? wgt_ones(other, WGT_F32, 1, &d3) : NULL;
    if (wo) expect_error(wgt_layer_norm(a, wo, NULL, 1e-5), WGT_ERR_CONTEXT_MISMATCH, "wgt_layer_norm", "context",
                         "weight of another context");
    wgt_release(wo);
    wgt_context_release(other);
    /* A released weight is caught, not read. */
    wgt_tensor *gone = wgt_ones(ctx, WGT_F32, 1, &d3);
    wgt_tensor_destroy(gone);
    expect_error(wgt_rms_norm(a, gone, 1e-5), WGT_ERR_DESTROYED, "wgt_rms_norm", "weight", "destroyed weight");
    wgt_release(gone);
    wgt_tensor *ts[8] = {a, ai, au, w3, w4, h3, w13, NULL};
    for (int k = 0; ts[k]; k++) wgt_release(ts[k]);
}

/* ---- the two backends on the same inputs ------------------------------------------------ */

TEST(softmax_norm_webgpu_matches_cpu) {
    wgt_context *cpu, *gpu;
    if (!test_backend_pair(&cpu, &gpu)) return;
    static const int64_t shape[3] = {9, 33, 65};
    int64_t d = shape[2];
    for (int op = 0; op < OP_COUNT; op++)
        for (int t = 0; t < 2; t++) {
            wgt_dtype dt = float_types[t];
            wgt_tensor *r[2];
            wgt_context *cs[2] = {cpu, gpu};
            for (int k = 0; k < 2; k++) {
                wgt_tensor *x = make_input(cs[k], dt, TRANSPOSED, 3, shape, 40 + op, 1, 2);
                wgt_tensor *w = random_tensor(cs[k], dt, 1, &d, 50 + op, 1, 0.5), *b = random_tensor(cs[k], dt, 1, &d, 60, 0, 1);
                r[k] = apply((row_op)op, x, op == OP_SOFTMAX ? 1 : op == OP_LOG_SOFTMAX ? -3 : -1, w, b, 1e-5);
                wgt_release(x);
                wgt_release(w);
                wgt_release(b);
            }
            double *x = test_read_f64(r[0]), *y = test_read_f64(r[1]);
            CHECK(x && y && wgt_tensor_numel(r[0]) == wgt_tensor_numel(r[1]), "%s %s: %s", op_names[op],
                  wgt_dtype_name(dt), wgt_last_error());
            /* Both are within their bound of the exact value: for rows of 65 or 33 values of
             * spread 2 that is a few 1e-6 relatively in f32 (log_softmax and the norms are
             * O(1) or absolute near 0), and the output rounding in f16. */
            double tol = dt == WGT_F16 ? 4e-3 : 1e-5;
            int bad = 0;
            for (int64_t i = 0; x && y && i < wgt_tensor_numel(r[0]); i++) {
                int same = fabs(x[i] - y[i]) <= tol * (fabs(x[i]) + (op == OP_SOFTMAX ? 1e-3 : 1));
                if (!same && bad++ < 3)
                    CHECK(0, "%s %s element %lld: webgpu %.9g, cpu %.9g", op_names[op], wgt_dtype_name(dt), (long long)i,
                          y[i], x[i]);
            }
            free(x);
            free(y);
            wgt_release(r[0]);
            wgt_release(r[1]);
        }
    wgt_context_release(gpu);
    wgt_context_release(cpu);
}
