/*
 * Every op of the header that returns a tensor computed from tensors either has a gradient
 * rule (src/autograd/rules_*.c, wired in by scripts/gen_api.py) or is listed here with the
 * reason it has none; a backward pass reaching one of these fails naming it
 * (autograd_errors). An op added without a rule, and not listed, fails this test; so does a
 * listed op that has gained a rule (the list must stay true).
 */
#include <string.h>

#include "test.h"

static const struct {
    const char *fn, *why;
} no_gradient[] = {
    {"wgt_eq", "a bool result"}, {"wgt_ne", "a bool result"}, {"wgt_lt", "a bool result"},
    {"wgt_le", "a bool result"}, {"wgt_gt", "a bool result"}, {"wgt_ge", "a bool result"},
    {"wgt_logical_and", "a bool result"}, {"wgt_logical_or", "a bool result"}, {"wgt_logical_not", "a bool result"},
    {"wgt_logical_xor", "a bool result"}, {"wgt_isnan", "a bool result"}, {"wgt_isinf", "a bool result"},
    {"wgt_signbit", "a bool result"}, {"wgt_isfinite", "a bool result"}, {"wgt_any", "a bool result"},
    {"wgt_all", "a bool result"},
    {"wgt_bitwise_not", "integer bits"}, {"wgt_bitwise_and", "integer bits"}, {"wgt_bitwise_or", "integer bits"},
    {"wgt_bitwise_xor", "integer bits"}, {"wgt_bitwise_left_shift", "integer bits"},
    {"wgt_bitwise_right_shift", "integer bits"},
    {"wgt_nextafter", "piecewise constant"}, {"wgt_floor_divide", "piecewise constant"},
    {"wgt_argmax", "indices"}, {"wgt_argmin", "indices"}, {"wgt_cumargmax", "indices"}, {"wgt_cumargmin", "indices"},
    {"wgt_argsort", "indices"}, {"wgt_searchsorted", "indices"}, {"wgt_argwhere", "indices"},
    {"wgt_nonzero", "indices"}, {"wgt_unique", "values picked by equality, indices and counts"},
    {"wgt_topk", "its indices (the values have a rule)"},
    {"wgt_count_nonzero", "a count"}, {"wgt_linalg_matrix_rank", "a count"}, {"wgt_one_hot", "from integer indices"},
    {"wgt_quantize", "quantized blocks hold no gradient"}, {"wgt_dequantize", "quantized blocks hold no gradient"},
    {"wgt_matmul_quantized", "quantized weights hold no gradient (inference only)"},
    {"wgt_attention_prefix", "decoding over a KV cache: documented as not differentiable"},
};
enum { N = sizeof no_gradient / sizeof no_gradient[0] };

/* Marks in seen[] the listed ops that src passes to a call starting with marker ("NAME"), and
 * fails for one not listed. */
static void scan(const char *file, const char *src, const char *marker, int *seen) {
    size_t ml = strlen(marker);
    for (const char *p = strstr(src, marker); p; p = strstr(p + ml, marker)) {
        const char *name = p + ml, *end = strchr(name, '"');
        if (!end || strncmp(name, "wgt_", 4)) continue; /* a parameter named fn, not a literal */
        int k = 0;
        while (k < N && (strlen(no_gradient[k].fn) != (size_t)(end - name) || strncmp(no_gradient[k].fn, name, (size_t)(end - name))))
            k++;
        CHECK(k < N, "%s: %.*s has no gradient rule and is not listed as having none: write a rule in "
                     "src/autograd/ (then run scripts/gen_api.py) or list it here with the reason", file, (int)(end - name), name);
        if (k < N) seen[k] = 1;
    }
}

TEST(autograd_every_op_has_a_gradient_or_says_why) {
    static const char *files[] = {"src/core/api.c", "src/core/api_special.c", "src/core/api_linalg.c"};
    int seen[N] = {0};
    char path[4096], line[8192];
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", WGT_SOURCE_DIR, files[i]);
        FILE *f = fopen(path, "r");
        CHECK(f, "cannot read %s", path);
        while (f && fgets(line, sizeof line, f)) { /* a call and its name share a line */
            scan(files[i], line, "wgt_ag_untracked(\"", seen);
            scan(files[i], line, "hand_out_untracked(\"", seen);
        }
        if (f) fclose(f);
    }
    for (int k = 0; k < N; k++)
        CHECK(seen[k], "%s is listed as having no gradient (%s) but now has a rule: take it off the list", no_gradient[k].fn,
              no_gradient[k].why);
}
