/*
 * `wgtensor bench-train` (tools/bench_train.c) at a toy size: both modes run, time their
 * steps, and write the JSON that bench/bench_train_torch.py reads. The eager step and the
 * compiled graph's step start from the same model and batches, so their first losses agree
 * and, with the optimizer inside the graph, so do their last. The lm_* functions come from
 * tests/test_train_lm.c, which includes tools/lm_model.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "../tools/bench_train.c"
#include "../tools/gpu_profile.c"

/* The number after "key": in the n-th (from 0) object holding it. */
static double json_number(const char *text, const char *key, int n) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = text;
    for (int i = 0; p && i <= n; i++) p = (p = strstr(p, pat)) ? p + strlen(pat) : NULL;
    return p ? strtod(p, NULL) : NAN;
}

TEST(bench_train_runs_at_toy_size) {
    char path[128];
    snprintf(path, sizeof path, "/tmp/wgt_test_%d_bench_train.json", (int)getpid());
    char *argv[] = {"--layers", "2", "--width", "32", "--heads", "4", "--seq", "16", "--batch", "2", "--vocab", "50",
                    "--steps", "3", "--warmup", "1", "--json", path};
    CHECK(wgt_bench_train_main((int)(sizeof argv / sizeof *argv), argv) == 0, "bench-train failed");
    FILE *f = fopen(path, "r");
    CHECK(f, "no JSON at %s", path);
    if (!f) return;
    char text[4096] = {0};
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    remove(path);
    CHECK(n > 0 && strstr(text, "\"mode\": \"eager\"") && strstr(text, "\"mode\": \"graph\""), "rows: %s", text);
    CHECK(json_number(text, "layers", 0) == 2 && json_number(text, "vocab", 0) == 50, "shape: %s", text);
    for (int r = 0; r < 2; r++) {
        double ms = json_number(text, "ms_median", r), first = json_number(text, "loss_first", r);
        CHECK(ms > 0 && isfinite(ms), "row %d: median %g ms", r, ms);
        /* Random tokens over 50 symbols: the first loss is about ln 50. */
        CHECK(fabs(first - log(50.0)) < 0.2, "row %d: first loss %g, ln 50 = %g", r, first, log(50.0));
    }
    CHECK(json_number(text, "loss_first", 0) == json_number(text, "loss_first", 1), "first losses differ: %s", text);
    double a = json_number(text, "loss_last", 0), b = json_number(text, "loss_last", 1);
    CHECK(fabs(a - b) <= 1e-5 * fabs(a), "last losses: eager %.7g, graph %.7g", a, b);
    char *bad[] = {"--steps", "0"};
    CHECK(wgt_bench_train_main(2, bad) == 2, "steps 0 accepted");
}
