/*
 * `wgtensor bench-train`: the time of one training step (forward, backward, AdamW) of a
 * GPT-2-small-shaped model (tools/lm_model.c: 12 pre-norm blocks of width 768 with 12 heads,
 * learned positions, the output tied to the embedding, no biases in the linear layers) at a
 * sequence length and batch given by flags, vocabulary 50257, f32. Each step is timed from its
 * first op to the loss read back (a full synchronisation), eager (ops recorded and run per
 * step) and as one compiled graph dispatch per step (forward, backward and update recorded
 * once). No gradient clipping: it reads the norm back mid-step. bench/bench_train_torch.py
 * times the same model in PyTorch from the JSON this writes, for the ratio. --profile runs one
 * more step of each mode with every kernel timed on its own (GPU timestamps) and prints where
 * the GPU time went, by kernel.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/gpu_timing.h"
#include "gpu_profile.h"
#include "lm_model.h"

typedef struct {
    const char *mode;
    double ms_median, ms_min, loss_first, loss_last;
    int steps;
    long long launches; /* kernel launches of one step (the first timed one) */
} train_row;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Fresh tokens and targets for step s (a fixed stream: both modes see the same batches). */
static void batch(const lm_config *c, int B, int s, int32_t *tok, int32_t *tgt) {
    uint64_t rng = 0x5eed + (uint64_t)s;
    for (int i = 0; i < B * c->context + 1; i++) {
        int32_t v = (int32_t)(lm_rand(&rng) % (uint64_t)c->vocab);
        if (i < B * c->context) tok[i] = v;
        if (i > 0) tgt[i - 1] = v;
    }
}

/* *recorded: seconds (now_s) when the step's work was recorded, before the loss is read. */
static wgt_status eager_step(lm_model *m, wgt_optimizer *o, const int32_t *tok, const int32_t *tgt, int B,
                             double *loss, double *recorded) {
    wgt_status st = wgt_optimizer_zero_grad(o);
    wgt_tensor *l = st == WGT_OK ? lm_loss(m, tok, tgt, B, m->cfg.context) : NULL;
    float v = NAN;
    if (!l) return st ? st : wgt_last_status();
    if ((st = wgt_backward(l, NULL)) == WGT_OK && (st = wgt_optimizer_step(o)) == WGT_OK) {
        *recorded = now_s();
        st = wgt_tensor_read(l, &v, sizeof v);
    }
    wgt_release(l);
    *loss = v;
    return st;
}

/* Forward, backward and update recorded once over token and target placeholders. */
static wgt_graph *record_graph(lm_model *m, wgt_optimizer *o, int B) {
    const int64_t shape[2] = {B, m->cfg.context};
    wgt_tensor *x = wgt_graph_input(m->ctx, "bench_train_tokens", WGT_I32, 2, shape);
    wgt_tensor *y = wgt_graph_input(m->ctx, "bench_train_targets", WGT_I32, 2, shape);
    wgt_tensor *logits = lm_logits(m, x), *loss = logits && y ? wgt_cross_entropy(logits, y) : NULL;
    wgt_graph *g = NULL;
    if (loss && wgt_backward(loss, NULL) == WGT_OK && wgt_optimizer_step(o) == WGT_OK)
        g = wgt_graph_build(m->ctx, 1, (wgt_binding[]){{"loss", loss}});
    wgt_optimizer_zero_grad(o); /* the gradients are graph values */
    wgt_release(loss), wgt_release(logits), wgt_release(x), wgt_release(y);
    return g;
}

static wgt_status graph_step(wgt_graph *g, wgt_context *ctx, const int32_t *tok, const int32_t *tgt, int B, int T,
                             wgt_tensor *lo, double *loss, double *recorded) {
    const int64_t shape[2] = {B, T};
    size_t nb = sizeof *tok * (size_t)B * (size_t)T;
    wgt_tensor *x = wgt_tensor_from_data(ctx, WGT_I32, 2, shape, tok, nb, WGT_USAGE_DEFAULT);
    wgt_tensor *y = wgt_tensor_from_data(ctx, WGT_I32, 2, shape, tgt, nb, WGT_USAGE_DEFAULT);
    float v = NAN;
    wgt_status st = x && y ? wgt_graph_dispatch(g, 2, (wgt_binding[]){{"bench_train_tokens", x}, {"bench_train_targets", y}},
                                                1, (wgt_binding[]){{"loss", lo}})
                           : wgt_last_status();
    *recorded = now_s();
    if (st == WGT_OK) st = wgt_tensor_read(lo, &v, sizeof v);
    wgt_release(x), wgt_release(y);
    *loss = v;
    return st;
}

/* Runs warmup + steps of one mode on a fresh model from the same seed; 0 on success. */
static int run_mode(wgt_context *ctx, const lm_config *c, int B, int warmup, int steps, int graph, int profile,
                    train_row *row) {
    lm_model m;
    if (lm_init(&m, ctx, c, 1234) != WGT_OK) {
        fprintf(stderr, "bench-train: model: %s\n", wgt_last_error());
        return 1;
    }
    wgt_optimizer *o = lm_optimizer(&m, 1e-4);
    wgt_graph *g = graph && o ? record_graph(&m, o, B) : NULL;
    wgt_tensor *lo = wgt_zeros(ctx, WGT_F32, 0, NULL);
    size_t n = (size_t)B * (size_t)c->context;
    int32_t *tok = malloc(sizeof *tok * (n + 1)), *tgt = malloc(sizeof *tgt * (n + 1));
    double *ms = malloc(sizeof *ms * (size_t)steps);
    int rc = !o || (graph && !g) || !lo || !tok || !tgt || !ms;
    if (rc) fprintf(stderr, "bench-train: %s\n", wgt_last_error());
    *row = (train_row){graph ? "graph" : "eager", NAN, NAN, NAN, NAN, steps, -1};
    /* --profile: one step with every pass timed, then one with every dispatch timed. */
    for (int s = 0; !rc && s < warmup + steps + 2 * (profile != 0); s++) {
        double loss = NAN, t0, recorded = NAN;
        int profiled = s >= warmup + steps ? s - (warmup + steps) + 1 : 0;
        if (profiled && wgt_context_gpu_timing(ctx, profiled) != WGT_OK) {
            printf("profile: %s\n", wgt_last_error());
            break;
        }
        batch(c, B, s, tok, tgt);
        wgt_stats before;
        if (s == warmup) wgt_context_stats(ctx, &before);
        t0 = now_s();
        wgt_status st = graph ? graph_step(g, ctx, tok, tgt, B, c->context, lo, &loss, &recorded)
                              : eager_step(&m, o, tok, tgt, B, &loss, &recorded);
        double t = (now_s() - t0) * 1e3;
        if (st != WGT_OK) {
            fprintf(stderr, "bench-train: %s step %d: %s\n", row->mode, s, wgt_last_error());
            rc = 1;
        }
        if (profiled == 1) {
            wgt_gpu_time gt;
            if (!rc && wgt_context_gpu_time(ctx, &gt) == WGT_OK)
                printf("one %s step: %.2f ms wall, recorded after %.2f ms; GPU busy in compute passes %.2f ms "
                       "(%llu passes)\n", row->mode, t, (recorded - t0) * 1e3, gt.ms, (unsigned long long)gt.passes);
            wgt_context_gpu_timing(ctx, 0);
            continue;
        }
        if (profiled == 2) {
            char what[32];
            snprintf(what, sizeof what, "%s step", row->mode);
            if (!rc) gpu_profile_print(ctx, what, t);
            wgt_context_gpu_timing(ctx, 0);
            break;
        }
        if (s == warmup) {
            wgt_stats after;
            wgt_context_stats(ctx, &after);
            row->launches = (long long)(after.launches - before.launches);
        }
        if (s == 0) row->loss_first = loss;
        row->loss_last = loss;
        if (s >= warmup) ms[s - warmup] = t;
    }
    if (!rc && steps > 0) {
        qsort(ms, (size_t)steps, sizeof *ms, by_value);
        row->ms_median = steps % 2 ? ms[steps / 2] : 0.5 * (ms[steps / 2 - 1] + ms[steps / 2]);
        row->ms_min = ms[0];
    }
    free(tok), free(tgt), free(ms);
    wgt_release(lo);
    wgt_graph_release(g);
    wgt_optimizer_release(o);
    lm_free(&m);
    return rc;
}

static int64_t count_params(const lm_config *c) {
    int64_t D = c->width;
    return (int64_t)c->vocab * D + (int64_t)c->context * D + c->layers * (12 * D * D + 4 * D) + 2 * D;
}

static void usage(void) {
    printf("usage: wgtensor bench-train [--layers 12] [--width 768] [--heads 12] [--seq 1024] [--batch 1]\n"
           "         [--vocab 50257] [--steps 10] [--warmup 2] [--mode both|eager|graph] [--json FILE]\n"
           "         [--profile]\n"
           "Times forward + backward + AdamW steps of a GPT-2-small-shaped model (f32); the median step,\n"
           "tokens/s and model TFLOP/s (6 x parameters + 12 x layers x seq x width per token).\n"
           "--profile: one more step of each mode with every kernel timed apart, GPU time by kernel.\n");
}

int wgt_bench_train_main(int argc, char **argv) {
    lm_config c = {50257, 12, 768, 12, 1024};
    int B = 1, steps = 10, warmup = 2, modes = 3, profile = 0;
    const char *json = NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int *slot = !strcmp(a, "--layers") ? &c.layers : !strcmp(a, "--width") ? &c.width
                    : !strcmp(a, "--heads") ? &c.heads : !strcmp(a, "--seq") ? &c.context
                    : !strcmp(a, "--batch") ? &B : !strcmp(a, "--vocab") ? &c.vocab
                    : !strcmp(a, "--steps") ? &steps : !strcmp(a, "--warmup") ? &warmup : NULL;
        if (!strcmp(a, "--help")) {
            usage();
            return 0;
        } else if (slot && v) {
            *slot = atoi(v), i++;
        } else if (!strcmp(a, "--profile")) {
            profile = 1;
        } else if (!strcmp(a, "--json") && v) {
            json = v, i++;
        } else if (!strcmp(a, "--mode") && v && (!strcmp(v, "both") || !strcmp(v, "eager") || !strcmp(v, "graph"))) {
            modes = !strcmp(v, "both") ? 3 : !strcmp(v, "eager") ? 1 : 2, i++;
        } else {
            fprintf(stderr, "bench-train: unknown or incomplete option %s\n", a);
            usage();
            return 2;
        }
    }
    if (B < 1 || steps < 1 || warmup < 0) {
        fprintf(stderr, "bench-train: batch %d and steps %d must be >= 1, warmup %d >= 0\n", B, steps, warmup);
        return 2;
    }
    wgt_context *ctx = wgt_context_create(NULL);
    if (!ctx) {
        fprintf(stderr, "bench-train: %s\n", wgt_last_error());
        return 1;
    }
    const char *device = wgt_context_device_name(ctx);
    const char *backend = wgt_context_backend(ctx) == WGT_BACKEND_WEBGPU ? "webgpu" : "cpu";
    int64_t N = count_params(&c);
    double tokens = (double)B * c.context, flop = tokens * (6.0 * (double)N + 12.0 * c.layers * c.context * c.width);
    printf("bench-train: %d layers, width %d, %d heads, vocab %d, seq %d, batch %d: %.1fM parameters, f32\n", c.layers,
           c.width, c.heads, c.vocab, c.context, B, (double)N / 1e6);
    printf("device: %s (backend %s); %d warm-up steps, %d timed\n\n", device, backend, warmup, steps);
    printf("%-6s %12s %10s %12s %9s %11s %11s %9s\n", "mode", "median ms", "min ms", "tokens/s", "TFLOP/s", "first loss",
           "last loss", "launches");
    train_row rows[2];
    int nrows = 0, rc = 0;
    for (int k = 0; k < 2 && !rc; k++) {
        if (!(modes & (1 << k))) continue;
        train_row *r = &rows[nrows];
        rc = run_mode(ctx, &c, B, warmup, steps, k, profile, r);
        if (rc) break;
        nrows++;
        printf("%-6s %12.2f %10.2f %12.0f %9.3f %11.4f %11.4f %9lld\n", r->mode, r->ms_median, r->ms_min,
               tokens / (r->ms_median * 1e-3), flop / (r->ms_median * 1e-3) / 1e12, r->loss_first, r->loss_last,
               r->launches);
    }
    if (!rc && json) {
        FILE *f = fopen(json, "w");
        if (!f) {
            fprintf(stderr, "bench-train: cannot write %s\n", json);
            rc = 1;
        } else {
            fprintf(f, "{\"bench\": \"train\", \"device\": \"%s\", \"backend\": \"%s\", \"layers\": %d, \"width\": %d, "
                    "\"heads\": %d, \"vocab\": %d, \"seq\": %d, \"batch\": %d, \"params\": %lld, \"warmup\": %d, "
                    "\"flop_per_step\": %.6g, \"rows\": [", device, backend, c.layers, c.width, c.heads, c.vocab,
                    c.context, B, (long long)N, warmup, flop);
            for (int i = 0; i < nrows; i++)
                fprintf(f, "%s{\"mode\": \"%s\", \"steps\": %d, \"ms_median\": %.4f, \"ms_min\": %.4f, "
                        "\"tokens_per_s\": %.2f, \"loss_first\": %.6f, \"loss_last\": %.6f, \"launches\": %lld}",
                        i ? ", " : "", rows[i].mode, rows[i].steps, rows[i].ms_median, rows[i].ms_min,
                        tokens / (rows[i].ms_median * 1e-3), rows[i].loss_first, rows[i].loss_last, rows[i].launches);
            fprintf(f, "]}\n");
            rc = fclose(f) != 0;
        }
    }
    wgt_context_release(ctx);
    return rc;
}
