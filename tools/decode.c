/*
 * Decoding without a host round trip per token (tools/llama.h). A sampled token stays on the
 * device: sampling is ordinary ops over the logits (argmax, or top-k, softmax, a cumulative
 * sum and a search), its [1] i32 result feeds the next step's embedding lookup, and the read
 * request of each token submits its step (one submission a token). The host learns the tokens through read
 * requests that finish DECODE_LAG steps behind, so the device always has the next step queued
 * while the host waits for an old token: it never idles for the host's sampling, printing or
 * recording. The uniform draw of a step is a counter-based hash of (seed, step), computed on
 * the host without looking at any result, so nothing waits for it either. Each step after the
 * first is a dispatch of the step's compiled graph (llama_replay, llama.c), not ~600 ops
 * recorded anew; llama_generate_eager keeps recording them, the reference.
 */
#include <stdlib.h>
#include <time.h>

#include "llama.h"

/* Steps the device runs ahead of the tokens the host has seen. */
#define DECODE_LAG 2

/* splitmix64's finaliser of seed + step: a uniform in [0, 1) that needs no state. */
static double step_uniform(uint64_t seed, int64_t step) {
    uint64_t z = seed + 0x9e3779b97f4a7c15ull * (uint64_t)(step + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0;
}

static double decode_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static wgt_tensor *after(wgt_tensor *result, wgt_tensor *done) {
    wgt_release(done);
    return result;
}

wgt_tensor *llama_sample(wgt_tensor *logits, double temperature, int64_t top_k, uint64_t seed, int64_t step) {
    if (!logits) return NULL;
    int64_t vocab = wgt_tensor_shape(logits)[0], k = top_k > 0 && top_k < vocab ? top_k : vocab;
    if (!(temperature > 0)) return wgt_argmax(logits, 0, 1); /* the first largest, as the host sort gives */
    wgt_tensor *values = NULL, *indices = NULL;
    if (wgt_topk(logits, k, 0, 1, 1, &values, &indices) != WGT_OK) return NULL;
    /* Candidate i is drawn when the cumulative probability before it is < u * total and the one
     * through it is >= that: the count of cumulative sums below u * total. The last sum is the
     * total, never below u * total with u < 1, so the count is a candidate. */
    wgt_tensor *scaled = after(wgt_div_scalar(values, temperature), values);
    wgt_tensor *p = after(wgt_softmax(scaled, 0), scaled);
    wgt_tensor *cdf = after(wgt_cumsum(p, 0), p);
    wgt_tensor *total = wgt_slice(cdf, 0, k - 1, k, 1);
    wgt_tensor *threshold = after(wgt_mul_scalar(total, step_uniform(seed, step)), total);
    wgt_tensor *at = wgt_searchsorted(cdf, threshold, 0);
    wgt_release(cdf), wgt_release(threshold);
    wgt_tensor *pick = at ? wgt_take(indices, at, 0) : NULL;
    wgt_release(at), wgt_release(indices);
    return pick;
}

/* llama_generate, the steps replayed from compiled graphs (replay) or recorded op by op. */
static int generate(llama_model *m, wgt_tensor *logits, int64_t pos, int64_t count, double temperature, int64_t top_k,
                    uint64_t seed, llama_token_fn on_token, void *arg, llama_decode_stats *stats, int replay) {
    int32_t got[DECODE_LAG + 1];
    wgt_read *pending[DECODE_LAG + 1] = {0};
    wgt_tensor *tokens[DECODE_LAG + 1] = {0};
    wgt_tensor *l = wgt_retain(logits), *prev = NULL, *scratch = NULL;
    llama_replay *r = NULL;
    int rc = 0;
    int64_t made = 0, seen = 0, vocab = m->c.vocab;
    double record = 0, submit = 0, wait = 0, t0 = decode_seconds();
    if (replay && count > 1) {
        r = llama_replay_create(m, temperature, top_k, seed, LLAMA_REPLAY_SPAN);
        scratch = wgt_zeros(m->ctx, WGT_F32, 1, &vocab);
        rc = !r || !scratch;
    }
    double build = decode_seconds() - t0;
    while (seen < count) {
        if (!rc && made < count && made - seen <= DECODE_LAG) { /* a free slot: queue a step */
            t0 = decode_seconds();
            int slot = (int)(made % (DECODE_LAG + 1));
            wgt_tensor *t = made == 0 || !r ? llama_sample(l, temperature, top_k, seed, made)
                                            : llama_replay_step(r, prev, pos++, made, scratch);
            wgt_release(l), wgt_release(prev);
            l = NULL, prev = wgt_retain(t);
            /* Submits the step with its token's copy, so the device starts on it while the
             * host waits for an older token; the read finishes once the device gets there. */
            double t1 = decode_seconds();
            pending[slot] = t ? wgt_read_begin(t, &got[slot], sizeof got[slot]) : NULL;
            rc = !pending[slot] || wgt_eval(1, &t) != WGT_OK;
            submit += decode_seconds() - t1;
            tokens[slot] = t;
            /* Op by op, the next step is recorded now and submitted with the next sample's
             * read: one submission a token. */
            if (!rc && ++made < count && !r) rc = !(l = llama_forward_ids(m, t, pos++));
            record += decode_seconds() - t0;
            continue;
        }
        if (seen == made) break; /* failed with nothing queued */
        int slot = (int)(seen % (DECODE_LAG + 1));
        t0 = decode_seconds();
        if (!rc && wgt_read_wait(pending[slot]) != WGT_OK) rc = 1;
        wait += decode_seconds() - t0;
        if (!rc) on_token(arg, got[slot]);
        wgt_read_release(pending[slot]);
        wgt_release(tokens[slot]);
        pending[slot] = NULL, tokens[slot] = NULL;
        seen++;
    }
    for (int i = 0; i <= DECODE_LAG; i++) wgt_read_release(pending[i]), wgt_release(tokens[i]);
    wgt_release(l), wgt_release(prev), wgt_release(scratch);
    llama_replay_free(r);
    if (stats) stats->record_s = record - submit, stats->submit_s = submit, stats->wait_s = wait, stats->build_s = build;
    return rc ? -1 : 0;
}

int llama_generate(llama_model *m, wgt_tensor *logits, int64_t pos, int64_t count, double temperature, int64_t top_k,
                   uint64_t seed, llama_token_fn on_token, void *arg, llama_decode_stats *stats) {
    return generate(m, logits, pos, count, temperature, top_k, seed, on_token, arg, stats, 1);
}

int llama_generate_eager(llama_model *m, wgt_tensor *logits, int64_t pos, int64_t count, double temperature,
                         int64_t top_k, uint64_t seed, llama_token_fn on_token, void *arg, llama_decode_stats *stats) {
    return generate(m, logits, pos, count, temperature, top_k, seed, on_token, arg, stats, 0);
}
