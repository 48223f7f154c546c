/*
 * `wgtensor bench-quant`: what quantized weights buy in decoding, on one device.
 *   copy     the bandwidth floor: an elementwise copy of a large f32 tensor (bytes read + written)
 *   matvec   x @ W^T for a square W in f16, q8_0 and q4_0: weight bytes read per second, and as a
 *            fraction of the copy bandwidth
 *   decode   a random Llama-shaped model (tools/llama.c) in f16, q8_0 and q4_0: the floor (copy
 *            bandwidth over the weight bytes a token reads) and tokens per second one token at
 *            a time with the KV cache, by the loop that reads each step's logits, by the
 *            device-side loop recording each step op by op and by the device-side loop
 *            replaying the step's compiled graph (tools/decode.c), each with the host's
 *            submissions per token and microseconds per token recording (replayed: dispatching)
 *            and submitting; the device-side loops' rates are steady ones, from the 4th token
 *            the host sees to the last (the replayed run builds its step's graph first, and
 *            prints how long that took apart)
 *   prefill  the q4_0 model over a prompt of --prefill tokens: tokens per second
 * then the q8_0 and q4_0 rows again in a context with WGT_QUANT_INT8=1 (x quantized to q8 on
 * the fly, integer dot products): which path pays on the device.
 * Times are the wall clock over batches that end in a sync; the copy and matvec rows also give
 * the rate from GPU timestamps (where the device has them), which leaves out the host's time
 * per op, and the matvec rows that rate again with 16 products evaluated together (sharing
 * passes, as a decoding layer's products do); a table on stdout, JSON with --json.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/gpu_timing.h"
#include "gen_options.h"
#include "gpu_profile.h"
#include "llama.h"

static double bq_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef wgt_tensor *(*op_fn)(void *arg);

/* Seconds per run of op: a warm-up run, then batches of runs (each result released, the batch
 * evaluated and synced) for at least 0.3 s; the best batch. */
static double time_op(wgt_context *ctx, op_fn op, void *arg) {
    wgt_tensor *t = op(arg);
    if (!t || wgt_eval(1, &t) != WGT_OK || wgt_context_sync(ctx) != WGT_OK) {
        wgt_release(t);
        return -1;
    }
    wgt_release(t);
    double best = 1e30, start = bq_seconds();
    int runs = 4;
    while (bq_seconds() - start < 0.3) {
        double t0 = bq_seconds();
        for (int i = 0; i < runs; i++) {
            wgt_tensor *r = op(arg);
            if (!r || wgt_eval(1, &r) != WGT_OK) {
                wgt_release(r);
                return -1;
            }
            wgt_release(r);
        }
        if (wgt_context_sync(ctx) != WGT_OK) return -1;
        double per = (bq_seconds() - t0) / runs;
        if (per < best) best = per;
        if (per * runs < 0.05 && runs < 256) runs *= 2;
    }
    return best;
}

/* GPU seconds per run of op from the device's timestamps (the passes' time, no host time), the
 * best of a few batches of RUNS runs; -1 where the device has no timestamps. Each run evaluated
 * apart, or (together) all of a batch recorded and evaluated at once, so their dispatches
 * share passes as a decoding layer's products do and each pass's fixed cost (about 7 us on an
 * H200, BENCHMARKS.md) is spread over them; *passes gets the passes per batch. */
enum { RUNS = 16 };
static double gpu_time_op(wgt_context *ctx, op_fn op, void *arg, int together, double *passes) {
    if (wgt_context_gpu_timing(ctx, 1) != WGT_OK) {
        wgt_clear_error();
        return -1;
    }
    double best = -1;
    for (int batch = 0; batch < 5; batch++) {
        wgt_tensor *r[RUNS] = {0};
        int ok = 1;
        for (int i = 0; i < RUNS && ok; i++) {
            ok = (r[i] = op(arg)) != NULL && (together || wgt_eval(1, &r[i]) == WGT_OK);
            if (!together) wgt_release(r[i]), r[i] = NULL;
        }
        ok = ok && (!together || wgt_eval(RUNS, r) == WGT_OK);
        for (int i = 0; i < RUNS; i++) wgt_release(r[i]);
        wgt_gpu_time g = {0};
        if (!ok || wgt_context_gpu_time(ctx, &g) != WGT_OK || g.untimed_passes || !g.passes) break;
        double per = g.ms / 1e3 / RUNS;
        if (best < 0 || per < best) best = per, *passes = (double)g.passes;
    }
    wgt_context_gpu_timing(ctx, 0);
    return best;
}

typedef struct {
    wgt_tensor *x, *w;
} pair;

static wgt_tensor *copy_op(void *arg) { return wgt_add_scalar(((pair *)arg)->x, 0.0); }
static wgt_tensor *linear_op(void *arg) { return wgt_linear(((pair *)arg)->x, ((pair *)arg)->w, NULL); }

typedef struct {
    char name[48];
    double value;
    const char *unit;
    double fraction;          /* of the floor, or < 0 */
    double submits, record_us, submit_us; /* per token for decode rows, else < 0 */
    double gpu_value; /* copy and matvec rows: the rate from GPU timestamps, else < 0 */
    double batched_value; /* matvec rows: the same with 16 products evaluated together, else < 0 */
} result;

static void report(result *r, int *n, const char *name, double value, const char *unit, double fraction) {
    snprintf(r[*n].name, sizeof r[*n].name, "%s", name);
    r[*n].value = value, r[*n].unit = unit, r[*n].fraction = fraction;
    r[*n].submits = r[*n].record_us = r[*n].submit_us = r[*n].gpu_value = r[*n].batched_value = -1;
    printf("%-28s %12.2f %-9s", name, value, unit);
    if (fraction >= 0) printf("  %5.1f%% of the floor", fraction * 100);
    printf("\n");
    fflush(stdout);
    (*n)++;
}

/* One way of decoding: tokens per second, and what the host spends per token: submissions to
 * the device queue and microseconds recording the step's ops (the calls that build the lazy
 * graph, or the compiled step's dispatch, which encodes it) and, for the device-side loops,
 * submitting (the evaluation and encoding that a read request starts); never waits. */
typedef struct {
    double rate, submits, record_us, submit_us;
    double build_ms; /* replayed: building the step's graph, once a run (in neither rate nor record_us) */
} decode_cost;

enum { READ_EACH_STEP, EAGER_LOOP, REPLAYED, DECODE_WAYS };

static uint64_t bq_submits(wgt_context *ctx) {
    wgt_stats s = {0};
    wgt_context_stats(ctx, &s);
    return s.submits;
}

/* Tokens as they reach the host, and when: a run's steady rate is taken from its `from`-th
 * token to its last, leaving out what its first tokens pay once (the replayed step's graph is
 * built and compiled inside the run, and the device's queue fills). */
typedef struct {
    int64_t made, from;
    double t_from, t_last;
} token_clock;

static void count_token(void *arg, int32_t token) {
    token_clock *c = arg;
    (void)token;
    double now = bq_seconds();
    if (++c->made == c->from) c->t_from = now;
    c->t_last = now;
}

/* Tokens per second of a run from its clock: steady where the run has tokens after `from`
 * (none left out, from 0: no clock start was noted, and the caller times the whole run). */
static double steady_rate(const token_clock *c) {
    return c->from > 0 && c->made > c->from && c->t_last > c->t_from
               ? (double)(c->made - c->from) / (c->t_last - c->t_from)
               : -1;
}

/* The first tokens a steady rate leaves out: a few, never more than a quarter of the run. */
static int64_t unsteady_tokens(int64_t steps) { return steps >= 16 ? 4 : 0; }

/* Decoding `steps` tokens after a one-token prompt, greedily, -1 rate on failure, one way:
 * the step-by-step loop that reads each step's logits before recording the next (tokens are
 * made up, so no sampling cost shows), or llama_generate_eager or llama_generate: the device
 * samples and runs ahead, each step recorded op by op or replayed. */
static decode_cost decode_rate(llama_model *m, int64_t steps, int way) {
    decode_cost c = {-1, 0, 0, 0, 0};
    int32_t tok = 1;
    if (steps > m->c.context - 2) steps = m->c.context - 2;
    float *logits = malloc(sizeof(float) * (size_t)m->c.vocab);
    wgt_tensor *l = logits ? llama_forward(m, &tok, 1, 0) : NULL;
    int ok = l && wgt_tensor_read(l, logits, sizeof(float) * (size_t)m->c.vocab) == WGT_OK;
    uint64_t submits = bq_submits(m->ctx);
    double t0 = bq_seconds(), record = 0, submit = 0, steady = -1;
    if (way == READ_EACH_STEP) {
        wgt_release(l);
        for (int64_t i = 0, pos = 1; i < steps && ok; i++) {
            tok = (int32_t)((tok * 7 + 3) % m->c.vocab);
            double r0 = bq_seconds();
            l = llama_forward(m, &tok, 1, pos++);
            record += bq_seconds() - r0;
            ok = l && wgt_tensor_read(l, logits, sizeof(float) * (size_t)m->c.vocab) == WGT_OK;
            wgt_release(l);
        }
    } else {
        token_clock made = {0, unsteady_tokens(steps), 0, 0}, warm = {0, 0, 0, 0};
        llama_decode_stats ds = {0, 0, 0, 0};
        int (*gen)(llama_model *, wgt_tensor *, int64_t, int64_t, double, int64_t, uint64_t, llama_token_fn, void *,
                   llama_decode_stats *) = way == REPLAYED ? llama_generate : llama_generate_eager;
        /* A few steps first, untimed: the kernels this way fuses are compiled on first use (the
         * replayed step's fusion groups are not the op-by-op step's). */
        ok = ok && gen(m, l, 1, 3, 0, 0, 0, count_token, &warm, NULL) == 0 && warm.made == 3;
        submits = bq_submits(m->ctx);
        t0 = bq_seconds();
        ok = ok && gen(m, l, 1, steps, 0, 0, 0, count_token, &made, &ds) == 0 && made.made == steps;
        record = ds.record_s, submit = ds.submit_s, steady = steady_rate(&made), c.build_ms = ds.build_s * 1e3;
        wgt_release(l);
    }
    double dt = bq_seconds() - t0;
    free(logits);
    if (ok) {
        c.rate = steady > 0 ? steady : (double)steps / dt;
        c.submits = (double)(bq_submits(m->ctx) - submits) / (double)steps;
        c.record_us = record / (double)steps * 1e6;
        c.submit_us = submit / (double)steps * 1e6;
    }
    return c;
}

/* --profile: where a replayed step's time goes. First the GPU time of `steps` tokens in
 * compute passes (their sum against the wall clock says whether the device or the host sets the
 * pace), then one token with every dispatch timed apart, by kernel. */
static void profile_replayed(llama_model *m, int64_t steps, const char *name) {
    int32_t tok = 1;
    wgt_tensor *l = llama_forward(m, &tok, 1, 0);
    token_clock made = {0, 0, 0, 0};
    wgt_gpu_time gt = {0};
    int ok = l && wgt_context_gpu_timing(m->ctx, 1) == WGT_OK;
    double t0 = bq_seconds();
    ok = ok && llama_generate(m, l, 1, steps, 0, 0, 0, count_token, &made, NULL) == 0;
    double wall = bq_seconds() - t0;
    ok = ok && wgt_context_gpu_time(m->ctx, &gt) == WGT_OK;
    /* The GPU time covers every step, the graph's build included, so the wall clock does too. */
    if (ok)
        printf("%s replayed, per token: %.3f ms wall (graph build included), %.3f ms GPU busy in %.1f compute passes\n",
               name, wall * 1e3 / (double)steps, gt.ms / (double)steps, (double)gt.passes / (double)steps);
    /* Two steps: the first token comes from the prompt's logits, the second from a step. */
    ok = ok && wgt_context_gpu_timing(m->ctx, 2) == WGT_OK;
    t0 = bq_seconds();
    made.made = 0;
    ok = ok && llama_generate(m, l, 1, 2, 0, 0, 0, count_token, &made, NULL) == 0;
    char what[64];
    snprintf(what, sizeof what, "replayed %s 2-token run", name);
    if (ok) gpu_profile_print(m->ctx, what, (bq_seconds() - t0) * 1e3);
    else printf("%s profile: %s\n", name, wgt_last_error());
    wgt_context_gpu_timing(m->ctx, 0);
    wgt_release(l);
}

static double prefill_rate(llama_model *m, int64_t n) {
    if (n > m->c.context) n = m->c.context;
    int32_t *ids = malloc(sizeof(int32_t) * (size_t)n);
    float *logits = malloc(sizeof(float) * (size_t)m->c.vocab);
    int ok = ids && logits;
    for (int64_t i = 0; ok && i < n; i++) ids[i] = (int32_t)(i % m->c.vocab);
    double best = 1e30;
    for (int rep = 0; rep < 3 && ok; rep++) { /* the first run compiles the kernels */
        double t0 = bq_seconds();
        wgt_tensor *l = llama_forward(m, ids, n, 0);
        ok = l && wgt_tensor_read(l, logits, sizeof(float) * (size_t)m->c.vocab) == WGT_OK;
        wgt_release(l);
        if (rep > 0 && bq_seconds() - t0 < best) best = bq_seconds() - t0;
    }
    free(ids);
    free(logits);
    return ok ? (double)n / best : -1;
}

/* Prints the rate from GPU timestamps beside a row (bytes / seconds as GB/s) and its fraction
 * of gpu_bw, the copy's rate measured the same way; returns the rate, or -1. */
static double report_gpu(result *row, double bytes, double gpu_s, double gpu_bw) {
    if (gpu_s <= 0) return -1;
    row->gpu_value = bytes / gpu_s / 1e9;
    printf("%-28s %12.2f GB/s by GPU timestamps", "", row->gpu_value);
    if (gpu_bw > 0) printf(", %5.1f%% of the copy's", 100 * row->gpu_value / gpu_bw);
    printf("\n");
    return row->gpu_value;
}

/* Weight GB/s of x @ w^T for w16 as it is (k 0), or quantized to q8_0 (1) or q4_0 (2), by the
 * wall clock (against bw) and by GPU timestamps (against gpu_bw). */
static int matvec_row(wgt_context *ctx, wgt_tensor *w16, int k, const int64_t *xs, double bw, double gpu_bw,
                      const char *name, result *r, int *nr) {
    pair p = {wgt_rand_normal(ctx, k ? WGT_F32 : WGT_F16, 2, xs, 0, 1, 3),
              k == 0 ? wgt_retain(w16) : wgt_quantize(w16, k == 1 ? WGT_Q8_0 : WGT_Q4_0)};
    double s = p.x && p.w ? time_op(ctx, linear_op, &p) : -1;
    double bytes = p.w ? (double)wgt_tensor_nbytes(p.w) : 0, gbs = s > 0 ? bytes / s / 1e9 : -1;
    double passes = 0, gpu_s = gbs > 0 ? gpu_time_op(ctx, linear_op, &p, 0, &passes) : -1;
    double batched_s = gpu_s > 0 ? gpu_time_op(ctx, linear_op, &p, 1, &passes) : -1;
    wgt_release(p.x), wgt_release(p.w);
    if (gbs <= 0) return -1;
    report(r, nr, name, gbs, "GB/s", gbs / bw);
    report_gpu(&r[*nr - 1], bytes, gpu_s, gpu_bw);
    if (batched_s > 0) {
        r[*nr - 1].batched_value = bytes / batched_s / 1e9;
        printf("%-28s %12.2f GB/s by GPU timestamps, 16 products in %.0f pass(es)", "", r[*nr - 1].batched_value, passes);
        if (gpu_bw > 0) printf(", %5.1f%% of the copy's", 100 * r[*nr - 1].batched_value / gpu_bw);
        printf("\n");
    }
    return 0;
}

/* Decode tokens/s of the random model in f16 (k 0), q8_0 (1) or q4_0 (2), both ways (the
 * step-by-step loop that reads each step's logits, then the device-side loop), and the floor;
 * with prefill, the prompt's tokens/s too. */
static int decode_row(wgt_context *ctx, const gen_options *o, int k, double bw, const char *name, int prefill,
                      result *r, int *nr) {
    static const wgt_dtype types[3] = {(wgt_dtype)0, WGT_Q8_0, WGT_Q4_0};
    llama_model m;
    int rc = -1;
    if (!llama_random(&m, ctx, &o->config, WGT_F16, o->seed) && (!types[k] || !llama_quantize(&m, types[k]))) {
        double floor_rate = bw * 1e9 / llama_weight_bytes(&m);
        decode_cost ways[DECODE_WAYS];
        int ok = 1;
        for (int w = 0; w < DECODE_WAYS && ok; w++) ok = (ways[w] = decode_rate(&m, o->tokens, w)).rate > 0;
        if (ok) {
            static const char *const suffix[DECODE_WAYS] = {" read each step", " op by op", ""};
            char label[48];
            snprintf(label, sizeof label, "%s floor", name);
            report(r, nr, label, floor_rate, "tokens/s", -1);
            for (int w = 0; w < DECODE_WAYS; w++) {
                snprintf(label, sizeof label, "%s%s", name, suffix[w]);
                report(r, nr, label, ways[w].rate, "tokens/s", ways[w].rate / floor_rate);
                r[*nr - 1].submits = ways[w].submits, r[*nr - 1].record_us = ways[w].record_us;
                r[*nr - 1].submit_us = ways[w].submit_us;
                printf("%-28s %12.2f submits/token, %.0f us/token recording, %.0f submitting", "", ways[w].submits,
                       ways[w].record_us, ways[w].submit_us);
                if (w == REPLAYED) printf(", the step's graph built in %.1f ms", ways[w].build_ms);
                printf("\n");
            }
            if (o->profile) profile_replayed(&m, o->tokens, name);
            double pre = prefill ? prefill_rate(&m, o->prefill) : 0;
            if (pre > 0) report(r, nr, "prefill q4_0", pre, "tokens/s", -1);
            rc = 0;
        }
    }
    llama_free(&m);
    return rc;
}

int wgt_bench_quant_main(int argc, char **argv) {
    gen_options o;
    if (gen_parse(argc, argv, &o, 0)) return 2;
    wgt_context_options co = {0};
    co.backend = o.backend;
    wgt_context *ctx = wgt_context_create(&co);
    if (!ctx) {
        fprintf(stderr, "bench-quant: %s\n", wgt_last_error());
        return 1;
    }
    printf("device: %s\n", wgt_context_device_name(ctx));
    result r[40];
    int nr = 0, rc = 0;
    wgt_context *int8_ctx = NULL;
    int64_t N = o.matvec, ws[2] = {N, N}, xs[2] = {1, N};
    wgt_tensor *w16 = NULL;
    /* Copy bandwidth: 64 Mi f32 (16 Mi with --quick), read and written. */
    int64_t big = o.quick ? (int64_t)1 << 22 : (int64_t)1 << 26;
    pair cp = {wgt_rand_uniform(ctx, WGT_F32, 1, &big, 0, 1, 1), NULL};
    double s = cp.x ? time_op(ctx, copy_op, &cp) : -1;
    double bw = s > 0 ? 2.0 * 4.0 * (double)big / s / 1e9 : -1;
    double copy_passes = 0, gpu_copy_s = bw > 0 ? gpu_time_op(ctx, copy_op, &cp, 0, &copy_passes) : -1;
    wgt_release(cp.x);
    if (bw <= 0) goto fail;
    report(r, &nr, "copy", bw, "GB/s", -1);
    double gpu_bw = report_gpu(&r[nr - 1], 2.0 * 4.0 * (double)big, gpu_copy_s, -1);
    w16 = wgt_rand_normal(ctx, WGT_F16, 2, ws, 0, 0.02, 2);
    static const char *const mv_names[3] = {"matvec f16", "matvec q8_0", "matvec q4_0"};
    for (int k = 0; k < 3 && w16; k++)
        if (matvec_row(ctx, w16, k, xs, bw, gpu_bw, mv_names[k], r, &nr)) goto fail;
    static const char *const dec_names[3] = {"decode f16", "decode q8_0", "decode q4_0"};
    for (int k = 0; k < 3 && !o.matvec_only; k++)
        if ((o.decode >> k & 1) && decode_row(ctx, &o, k, bw, dec_names[k], k == 2, r, &nr)) goto fail;
    /* The same with x quantized to q8 on the fly and integer dot products (WGT_QUANT_INT8). */
    const char *was = getenv("WGT_QUANT_INT8");
    char *saved = was ? strdup(was) : NULL;
    setenv("WGT_QUANT_INT8", "1", 1);
    int8_ctx = wgt_context_create(&co);
    if (saved) setenv("WGT_QUANT_INT8", saved, 1);
    else unsetenv("WGT_QUANT_INT8");
    free(saved);
    wgt_release(w16);
    w16 = int8_ctx ? wgt_rand_normal(int8_ctx, WGT_F16, 2, ws, 0, 0.02, 2) : NULL;
    static const char *const i8_names[3] = {"", "matvec q8_0 int8", "matvec q4_0 int8"};
    static const char *const i8_dec[3] = {"", "decode q8_0 int8", "decode q4_0 int8"};
    for (int k = 1; k < 3 && w16; k++)
        if (matvec_row(int8_ctx, w16, k, xs, bw, gpu_bw, i8_names[k], r, &nr)) goto fail;
    for (int k = 1; k < 3 && int8_ctx && !o.matvec_only; k++)
        if ((o.decode >> (k + 2) & 1) && decode_row(int8_ctx, &o, k, bw, i8_dec[k], 0, r, &nr)) goto fail;
    if (!w16) goto fail;
    goto done;
fail:
    fprintf(stderr, "bench-quant: %s\n", wgt_last_error());
    rc = 1;
done:
    wgt_release(w16);
    if (o.json) {
        FILE *f = fopen(o.json, "w");
        if (f) {
            fprintf(f, "{\"device\": \"%s\", \"matvec\": %lld, \"model\": {\"dim\": %lld, \"layers\": %lld, \"heads\": %lld, "
                       "\"kv_heads\": %lld, \"hidden\": %lld, \"vocab\": %lld, \"context\": %lld}, \"tokens\": %lld, "
                       "\"prefill\": %lld, \"rows\": [",
                    wgt_context_device_name(ctx), (long long)N, (long long)o.config.dim, (long long)o.config.layers,
                    (long long)o.config.heads, (long long)o.config.kv_heads, (long long)o.config.hidden,
                    (long long)o.config.vocab, (long long)o.config.context, (long long)o.tokens, (long long)o.prefill);
            for (int i = 0; i < nr; i++)
                fprintf(f, "%s{\"name\": \"%s\", \"value\": %.4f, \"unit\": \"%s\", \"fraction_of_floor\": %.4f, "
                           "\"submits_per_token\": %.3f, \"record_us_per_token\": %.1f, \"submit_us_per_token\": %.1f, "
                           "\"gpu_gbs\": %.2f, \"gpu_gbs_batched\": %.2f}",
                        i ? ", " : "", r[i].name, r[i].value, r[i].unit, r[i].fraction, r[i].submits, r[i].record_us,
                        r[i].submit_us, r[i].gpu_value, r[i].batched_value);
            fprintf(f, "]}\n");
            fclose(f);
        }
    }
    wgt_context_release(int8_ctx);
    wgt_context_release(ctx);
    return rc;
}
