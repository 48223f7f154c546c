/*
 * Decoding on the device (tools/decode.c): the sampler's token is the one the host's rule
 * picks from the same logits (greedy: the first largest; else the draw of the uniform of
 * (seed, step) from the top-k softmax, recomputed here in float64), and llama_generate gives
 * the tokens of the step-by-step loop that reads every step's logits, while the device runs
 * steps ahead of the tokens the host has seen.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
/* tools/llama.c is compiled into the tests by test_llama_file.c, which includes it. */
#include "../tools/decode.c"

/* The host's rule in float64: the index of the drawn logit, or -1 when u * total lies so
 * close to a cumulative sum that f32 rounding could pick the neighbour. */
static int64_t host_pick(const float *logits, int64_t vocab, double temperature, int64_t top_k, double u) {
    int64_t k = top_k > 0 && top_k < vocab ? top_k : vocab, *order = malloc(sizeof(int64_t) * (size_t)vocab);
    for (int64_t i = 0; i < vocab; i++) order[i] = i;
    for (int64_t i = 0; i < k; i++) /* selection: the largest first, equal ones in index order */
        for (int64_t j = i + 1; j < vocab; j++)
            if (logits[order[j]] > logits[order[i]]) {
                int64_t t = order[i];
                order[i] = order[j], order[j] = t;
            } else if (logits[order[j]] == logits[order[i]] && order[j] < order[i]) {
                int64_t t = order[i];
                order[i] = order[j], order[j] = t;
            }
    if (!(temperature > 0)) {
        int64_t first = order[0];
        free(order);
        return first;
    }
    double total = 0, run = 0, *p = malloc(sizeof(double) * (size_t)k);
    for (int64_t i = 0; i < k; i++) total += p[i] = exp(((double)logits[order[i]] - logits[order[0]]) / temperature);
    int64_t pick = k - 1;
    for (int64_t i = 0; i < k; i++) {
        run += p[i];
        if (fabs(run - u * total) < 1e-4 * total) pick = -1;
        if (run >= u * total) {
            if (pick >= 0) pick = order[i];
            break;
        }
    }
    free(p), free(order);
    return pick;
}

TEST_BACKENDS(decode_sample_matches_host_rule) {
    int64_t vocab = 301;
    const double temps[] = {0, 0.7, 1.3};
    const int64_t ks[] = {0, 1, 5, 40};
    int checked = 0;
    for (int round = 0; round < 4; round++) {
        wgt_tensor *l = wgt_rand_normal(ctx, WGT_F32, 1, &vocab, 0, 2, 100 + (uint64_t)round);
        float *v = malloc(sizeof(float) * (size_t)vocab);
        CHECK(l && wgt_tensor_read(l, v, sizeof(float) * (size_t)vocab) == WGT_OK, "%s", wgt_last_error());
        if (round == 3) v[17] = v[200] = 9; /* a tie for the largest: the first wins */
        wgt_tensor *lt = wgt_tensor_from_data(ctx, WGT_F32, 1, &vocab, v, sizeof(float) * (size_t)vocab, WGT_USAGE_DEFAULT);
        for (size_t ti = 0; ti < sizeof temps / sizeof temps[0]; ti++)
            for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
                for (int64_t step = 0; step < 3; step++) {
                    uint64_t seed = 7 + (uint64_t)round;
                    int64_t want = host_pick(v, vocab, temps[ti], ks[ki], step_uniform(seed, step));
                    if (want < 0) continue; /* on a boundary: either neighbour is right */
                    wgt_tensor *t = llama_sample(lt, temps[ti], ks[ki], seed, step);
                    int32_t got = -1;
                    CHECK(t && wgt_tensor_ndim(t) == 1 && wgt_tensor_shape(t)[0] == 1 &&
                              wgt_tensor_read(t, &got, sizeof got) == WGT_OK,
                          "%s", wgt_last_error());
                    CHECK(got == want, "round %d t=%g k=%lld step %lld: device %d, host rule %lld", round, temps[ti],
                          (long long)ks[ki], (long long)step, got, (long long)want);
                    checked++;
                    wgt_release(t);
                }
        free(v);
        wgt_release(l), wgt_release(lt);
    }
    CHECK(checked > 80, "only %d draws were away from a boundary", checked);
}

typedef struct {
    wgt_context *ctx;
    int32_t tokens[16];
    uint64_t submits_at[16];
    int n;
} collected;

static void collect(void *arg, int32_t token) {
    collected *c = arg;
    wgt_stats s = {0};
    wgt_context_stats(c->ctx, &s);
    if (c->n < 16) c->submits_at[c->n] = s.submits, c->tokens[c->n] = token;
    c->n++;
}

/* Greedy decoding of a small random model (q8_0 weights: the matrix-vector kernels) through
 * llama_generate against the loop that reads each step's logits and picks on the host. */
TEST_BACKENDS(decode_generate_matches_synchronous_loop) {
    llama_config c = {64, 2, 4, 2, 96, 37, 24, 10000, 1e-5};
    llama_model m;
    CHECK(llama_random(&m, ctx, &c, WGT_F32, 5) == 0 && llama_quantize(&m, WGT_Q8_0) == 0, "%s", wgt_last_error());
    int32_t prompt[3] = {3, 30, 8}, want[12];
    int64_t count = 12;
    float logits[37];
    wgt_tensor *l = llama_forward(&m, prompt, 3, 0);
    for (int64_t i = 0; i < count; i++) {
        CHECK(l && wgt_tensor_read(l, logits, sizeof logits) == WGT_OK, "step %lld: %s", (long long)i, wgt_last_error());
        want[i] = (int32_t)host_pick(logits, 37, 0, 0, 0);
        wgt_release(l);
        l = i + 1 < count ? llama_forward(&m, &want[i], 1, 3 + i) : NULL;
    }
    /* The caches are rewritten from position 0: the same prompt gives the same state. */
    l = llama_forward(&m, prompt, 3, 0);
    collected got = {ctx, {0}, {0}, 0};
    CHECK(l && llama_generate(&m, l, 3, count, 0, 0, 1, collect, &got, NULL) == 0, "%s", wgt_last_error());
    CHECK(got.n == count, "%d tokens", got.n);
    for (int i = 0; i < got.n && i < count; i++) CHECK(got.tokens[i] == want[i], "token %d: %d, want %d", i, got.tokens[i], want[i]);
    /* On the GPU each token's read submits its step, one submission a token: when token i
     * reaches the host, the steps through i + DECODE_LAG were submitted, so no more than the
     * count of the steps after those remain to be (the first steps, which fill the memory
     * pool, may submit more: the check starts at the fourth token). */
    wgt_stats s1 = {0};
    wgt_context_stats(ctx, &s1);
    if (wgt_context_backend(ctx) == WGT_BACKEND_WEBGPU)
        for (int i = 3; i + DECODE_LAG < got.n && i < 16; i++)
            CHECK(s1.submits - got.submits_at[i] <= (uint64_t)(count - 1 - i - DECODE_LAG),
                  "token %d reached the host %llu submissions before the end", i,
                  (unsigned long long)(s1.submits - got.submits_at[i]));
    wgt_release(l);
    llama_free(&m);
}

/* Fills every cache with value (positions the replayed step must mask out hold it). */
static void fill_caches(llama_model *m, float value) {
    for (int64_t i = 0; i < m->c.layers; i++) {
        wgt_tensor *cs[2] = {m->layer[i].k_cache, m->layer[i].v_cache};
        for (int k = 0; k < 2; k++) {
            wgt_tensor *f = wgt_full(m->ctx, m->act, wgt_tensor_ndim(cs[k]), wgt_tensor_shape(cs[k]), value);
            int64_t n = wgt_tensor_numel(cs[k]), all[1] = {n};
            wgt_tensor *flat = wgt_reshape(cs[k], 1, all), *ff = wgt_reshape(f, 1, all);
            wgt_tensor *idx = wgt_arange(m->ctx, WGT_I32, 0, (double)n, 1);
            CHECK(flat && ff && idx && wgt_set_rows(flat, idx, ff) == WGT_OK, "%s", wgt_last_error());
            wgt_release(f), wgt_release(flat), wgt_release(ff), wgt_release(idx);
        }
    }
}

/* The replayed step (llama_replay) against the eager one (llama_forward) on a small random
 * model in each weight type: the same greedy tokens and logits within a tolerance of the
 * type, over spans of 4 positions (a graph each, crossing from one to the next), with the
 * caches past the prompt filled with garbage first, which the mask must keep out; and
 * within its budget of launches (check_replay_launches). */
static void check_replay_launches(wgt_context *ctx);

static void replay_matches_eager(wgt_context *ctx, int ntypes) {
    const wgt_dtype types[4] = {WGT_F32, WGT_F16, WGT_Q8_0, WGT_Q4_0};
    const double tol[4] = {1e-6, 1e-3, 1e-6, 1e-6}; /* of the largest logit: f32 rounding, one f16 step */
    llama_config c = {64, 2, 4, 2, 96, 37, 24, 10000, 1e-5};
    for (int ti = 0; ti < ntypes; ti++) {
        llama_model m;
        int bad = llama_random(&m, ctx, &c, types[ti] == WGT_F16 ? WGT_F16 : WGT_F32, 9 + (uint64_t)ti) ||
                  (types[ti] >= WGT_Q8_0 && types[ti] != WGT_F16 && llama_quantize(&m, types[ti]));
        CHECK(!bad, "%s: %s", wgt_dtype_name(types[ti]), wgt_last_error());
        if (bad) continue;
        enum { STEPS = 14 };
        int32_t prompt[3] = {3, 30, 8}, want[STEPS + 1];
        float eager[STEPS][37], got[37];
        wgt_tensor *l = llama_forward(&m, prompt, 3, 0);
        CHECK(l && wgt_tensor_read(l, got, sizeof got) == WGT_OK, "%s", wgt_last_error());
        want[0] = (int32_t)host_pick(got, 37, 0, 0, 0);
        for (int i = 0; i < STEPS; i++) {
            wgt_release(l);
            l = llama_forward(&m, &want[i], 1, 3 + i);
            CHECK(l && wgt_tensor_read(l, eager[i], sizeof eager[i]) == WGT_OK, "step %d: %s", i, wgt_last_error());
            want[i + 1] = (int32_t)host_pick(eager[i], 37, 0, 0, 0);
        }
        wgt_release(l);
        fill_caches(&m, 7.5f);
        l = llama_forward(&m, prompt, 3, 0);
        llama_replay *r = llama_replay_create(&m, 0, 0, 0, 4);
        int64_t vocab = 37;
        wgt_tensor *logits = wgt_zeros(ctx, WGT_F32, 1, &vocab), *tok = llama_sample(l, 0, 0, 0, 0);
        CHECK(r && logits && tok, "%s", wgt_last_error());
        for (int i = 0; i < STEPS && r && tok; i++) {
            int32_t t = -1, n = -1;
            CHECK(wgt_tensor_read(tok, &t, sizeof t) == WGT_OK && t == want[i], "%s step %d: token %d, eager %d",
                  wgt_dtype_name(types[ti]), i, t, want[i]);
            wgt_tensor *next = llama_replay_step(r, tok, 3 + i, i + 1, logits);
            CHECK(next && wgt_tensor_read(logits, got, sizeof got) == WGT_OK && wgt_tensor_read(next, &n, sizeof n) == WGT_OK,
                  "%s step %d: %s", wgt_dtype_name(types[ti]), i, wgt_last_error());
            double worst = 0, scale = 0;
            for (int v = 0; v < 37; v++) {
                double d = fabs((double)got[v] - eager[i][v]);
                if (d > worst) worst = d;
                if (fabs(eager[i][v]) > scale) scale = fabs(eager[i][v]);
            }
            CHECK(worst <= tol[ti] * scale, "%s step %d: logits differ by %g (largest %g)", wgt_dtype_name(types[ti]), i,
                  worst, scale);
            CHECK(n == want[i + 1], "%s step %d: sampled %d, eager %d", wgt_dtype_name(types[ti]), i, n, want[i + 1]);
            wgt_release(tok);
            tok = next;
        }
        /* A position past the context is refused, and nothing runs. */
        CHECK(!r || !llama_replay_step(r, tok, c.context, STEPS + 1, logits), "%s: position %lld ran",
              wgt_dtype_name(types[ti]), (long long)c.context);
        llama_replay_free(r);
        wgt_release(l), wgt_release(logits), wgt_release(tok);
        llama_free(&m);
    }
}

TEST_BACKENDS(decode_replay_matches_eager_steps) {
    replay_matches_eager(ctx, 4);
    check_replay_launches(ctx);
}

/* What a replayed decoding step costs the device in launches and dispatches: on a GPU each
 * dispatch carries a fixed cost of several microseconds, which for a small or quantized
 * model is far more than its share of the weight reads, so the count is the figure the
 * step's fusions are judged by. The step's count and the count per layer (two models that
 * differ in one layer) are printed and held to a budget. */
/* Launches a layer of the replayed step may take (the CPU composes attention, and f16
 * adds casts there). Attention with the keys split over workgroups (attention_split.c, taken
 * for long caches) is still one launch, of two dispatches: it leaves this budget as it is
 * and adds a dispatch per layer (decode_replay_split_matches_eager checks both). */
/* Per weight type (f32, f16, q4_0). q4_0's residual adds run inside the output and down
 * products (src/core/epilogue.c: quantized products only), and its two norms inside the
 * products after them (src/core/prologue.c), so its layer takes four fewer. A step's rope
 * (its heads are small) is one kernel, angles included (transformer.c). */
static const uint64_t layer_launches_webgpu[3] = {13, 13, 9}, layer_launches_cpu[3] = {28, 30, 24};
/* Dispatches a WebGPU layer may take: as many as its launches, the cache writes' index check
 * running once a step for every layer's writes (index_checks.c); f16 takes two more, and
 * q4_0 two: its norms' passes (quant_x8_pass.wgsl), in the steps of the products. */
static const uint64_t layer_dispatches_webgpu[3] = {13, 15, 11};

typedef struct {
    uint64_t launches, dispatches, passes;
} step_cost;

/* Launches and dispatches of one replayed step at position 3, after a first step that built
 * the graph and filled the pool. */
static step_cost replay_cost(wgt_context *ctx, const llama_config *c, wgt_dtype type) {
    step_cost cost = {0, 0, 0};
    llama_model m;
    int bad = llama_random(&m, ctx, c, type == WGT_F16 ? WGT_F16 : WGT_F32, 11) ||
              ((type == WGT_Q8_0 || type == WGT_Q4_0) && llama_quantize(&m, type));
    CHECK(!bad, "%s: %s", wgt_dtype_name(type), wgt_last_error());
    if (bad) return cost;
    int32_t prompt[2] = {4, 9};
    int64_t vocab = c->vocab;
    wgt_tensor *l = llama_forward(&m, prompt, 2, 0), *tok = l ? llama_sample(l, 0, 0, 0, 0) : NULL;
    wgt_tensor *logits = wgt_zeros(ctx, WGT_F32, 1, &vocab);
    llama_replay *r = llama_replay_create(&m, 0, 0, 0, 8);
    wgt_tensor *t1 = r && tok && logits ? llama_replay_step(r, tok, 2, 1, logits) : NULL;
    CHECK(t1 && wgt_context_sync(ctx) == WGT_OK, "%s", wgt_last_error());
    wgt_stats before = {0}, after = {0};
    wgt_context_stats(ctx, &before);
    wgt_tensor *t2 = t1 ? llama_replay_step(r, t1, 3, 2, logits) : NULL;
    CHECK(t2 && wgt_context_sync(ctx) == WGT_OK, "%s", wgt_last_error());
    wgt_context_stats(ctx, &after);
    cost.launches = after.launches - before.launches;
    cost.dispatches = after.dispatches - before.dispatches;
    cost.passes = after.compute_passes - before.compute_passes;
    llama_replay_free(r);
    wgt_release(l), wgt_release(tok), wgt_release(logits), wgt_release(t1), wgt_release(t2);
    llama_free(&m);
    return cost;
}

static void check_replay_launches(wgt_context *ctx) {
    const wgt_dtype types[3] = {WGT_F32, WGT_F16, WGT_Q4_0};
    for (int ti = 0; ti < 3; ti++) {
        llama_config one = {64, 1, 4, 2, 96, 37, 24, 10000, 1e-5}, two = one;
        two.layers = 2;
        step_cost a = replay_cost(ctx, &one, types[ti]), b = replay_cost(ctx, &two, types[ti]);
        uint64_t layer_l = b.launches - a.launches, layer_d = b.dispatches - a.dispatches;
        printf("  [%s %s] replayed step, 2 layers: %llu launches, %llu dispatches; per layer %llu launches, %llu "
               "dispatches\n",
               test_backend_name(), wgt_dtype_name(types[ti]), (unsigned long long)b.launches,
               (unsigned long long)b.dispatches, (unsigned long long)layer_l, (unsigned long long)layer_d);
        CHECK(b.launches > a.launches, "%s: %llu launches with two layers, %llu with one", wgt_dtype_name(types[ti]),
              (unsigned long long)b.launches, (unsigned long long)a.launches);
        /* The budget: what the layer costs now (the CPU backend does not fuse elementwise
         * chains), so a change that adds launches to the step shows here. */
        uint64_t budget = wgt_context_backend(ctx) == WGT_BACKEND_WEBGPU ? layer_launches_webgpu[ti] : layer_launches_cpu[ti];
        CHECK(layer_l <= budget, "%s: a layer costs %llu launches, more than the %llu budgeted",
              wgt_dtype_name(types[ti]), (unsigned long long)layer_l, (unsigned long long)budget);
        if (wgt_context_backend(ctx) == WGT_BACKEND_WEBGPU) {
            CHECK(layer_d <= layer_dispatches_webgpu[ti], "%s: a layer costs %llu dispatches, more than the %llu budgeted",
                  wgt_dtype_name(types[ti]), (unsigned long long)layer_d,
                  (unsigned long long)layer_dispatches_webgpu[ti]);
            /* A step is one compute pass: nothing between its dispatches (a fill of the graph's
             * fresh outputs made every step two) may end it. A kernel's first run is submitted
             * alone, which splits a step now and then in a long run of the suite, so one of the
             * two steps is held to it. Poisoning writes each fresh output. */
            const char *poison = getenv("WGT_POISON");
            CHECK((poison && !strcmp(poison, "1")) || a.passes == 1 || b.passes == 1, "%s: a replayed step took %llu / %llu compute passes, not 1",
                  wgt_dtype_name(types[ti]), (unsigned long long)a.passes, (unsigned long long)b.passes);
        }
    }
}

/* The replayed step with its attention forced through the split path (WGT_ATTENTION_CHUNKS=3:
 * this model's spans of 4 to 24 keys in chunks of 2 to 8) decodes the eager loop's tokens, at
 * the same launches per layer and one more dispatch (the chunks' combination). */
TEST(decode_replay_split_matches_eager) {
    test_saved_env env = test_env_set("WGT_ATTENTION_CHUNKS", "3");
    wgt_context *split = test_webgpu_context();
    test_env_restore(&env);
    wgt_context *plain = split ? test_webgpu_context() : NULL;
    if (!split || !plain) {
        if (split) wgt_context_release(split);
        return;
    }
    replay_matches_eager(split, 2);
    llama_config one = {64, 1, 4, 2, 96, 37, 24, 10000, 1e-5}, two = one;
    two.layers = 2;
    step_cost s1 = replay_cost(split, &one, WGT_F32), s2 = replay_cost(split, &two, WGT_F32);
    step_cost p1 = replay_cost(plain, &one, WGT_F32), p2 = replay_cost(plain, &two, WGT_F32);
    CHECK(s2.launches - s1.launches == p2.launches - p1.launches, "a layer: %llu launches split, %llu not",
          (unsigned long long)(s2.launches - s1.launches), (unsigned long long)(p2.launches - p1.launches));
    CHECK(s2.dispatches - s1.dispatches == p2.dispatches - p1.dispatches + 1, "a layer: %llu dispatches split, %llu not",
          (unsigned long long)(s2.dispatches - s1.dispatches), (unsigned long long)(p2.dispatches - p1.dispatches));
    wgt_context_release(split);
    wgt_context_release(plain);
}

static void collect_plain(void *arg, int32_t token) {
    collected *c = arg;
    if (c->n < 16) c->tokens[c->n] = token;
    c->n++;
}

/* Sampling with temperature and top-k inside the replayed step draws what the eager loop
 * draws from the same uniforms. */
TEST_BACKENDS(decode_replay_samples_as_eager) {
    llama_config c = {64, 2, 4, 2, 96, 37, 24, 10000, 1e-5};
    llama_model m;
    CHECK(llama_random(&m, ctx, &c, WGT_F32, 21) == 0, "%s", wgt_last_error());
    int32_t prompt[2] = {5, 11};
    const double temps[2] = {0.8, 1.5};
    const int64_t ks[2] = {5, 0};
    for (int s = 0; s < 2; s++) {
        collected eager = {ctx, {0}, {0}, 0}, replayed = {ctx, {0}, {0}, 0};
        wgt_tensor *l = llama_forward(&m, prompt, 2, 0);
        CHECK(l && llama_generate_eager(&m, l, 2, 12, temps[s], ks[s], 40 + (uint64_t)s, collect_plain, &eager, NULL) == 0,
              "%s", wgt_last_error());
        wgt_release(l);
        l = llama_forward(&m, prompt, 2, 0);
        CHECK(l && llama_generate(&m, l, 2, 12, temps[s], ks[s], 40 + (uint64_t)s, collect_plain, &replayed, NULL) == 0,
              "%s", wgt_last_error());
        wgt_release(l);
        CHECK(eager.n == 12 && replayed.n == 12, "%d and %d tokens", eager.n, replayed.n);
        for (int i = 0; i < 12 && i < eager.n && i < replayed.n; i++)
            CHECK(eager.tokens[i] == replayed.tokens[i], "t=%g k=%lld token %d: replayed %d, eager %d", temps[s],
                  (long long)ks[s], i, replayed.tokens[i], eager.tokens[i]);
    }
    llama_free(&m);
}

static uint64_t bytes_in_use(wgt_context *ctx) {
    wgt_stats s = {0};
    wgt_context_stats(ctx, &s);
    return s.device_bytes_in_use;
}

/* A step leaves nothing behind: the device memory in use after an eager forward pass, and
 * after a replayed step and its graphs' release, is what it was before (a tensor kept by
 * mistake holds its buffer, and in a graph everything it was computed from). */
TEST_BACKENDS(decode_steps_release_what_they_make) {
    if (wgt_context_backend(ctx) != WGT_BACKEND_WEBGPU) {
        test_skip("CPU contexts report no device memory");
        return;
    }
    llama_config c = {64, 2, 4, 2, 96, 37, 24, 10000, 1e-5};
    llama_model m;
    CHECK(llama_random(&m, ctx, &c, WGT_F32, 3) == 0, "%s", wgt_last_error());
    int32_t prompt[2] = {1, 2};
    float f[37];
    int64_t vocab = 37;
    /* The first pass makes the caches resident and the weights' device copies. */
    wgt_tensor *warm = llama_forward(&m, prompt, 2, 0);
    CHECK(warm && wgt_tensor_read(warm, f, sizeof f) == WGT_OK, "%s", wgt_last_error());
    wgt_release(warm);
    for (int round = 0; round < 3; round++) {
        CHECK(wgt_context_sync(ctx) == WGT_OK, "%s", wgt_last_error());
        uint64_t before = bytes_in_use(ctx);
        wgt_tensor *l = llama_forward(&m, prompt, 2, 0);
        CHECK(l && wgt_tensor_read(l, f, sizeof f) == WGT_OK, "%s", wgt_last_error());
        wgt_tensor *tok = llama_sample(l, 0, 0, 0, 0), *logits = wgt_zeros(ctx, WGT_F32, 1, &vocab), *next = NULL;
        llama_replay *r = round ? llama_replay_create(&m, 0, 0, 0, 8) : NULL;
        CHECK(!round || (r && (next = llama_replay_step(r, tok, 2, 1, logits)) &&
                         wgt_tensor_read(logits, f, sizeof f) == WGT_OK),
              "%s", wgt_last_error());
        llama_replay_free(r);
        wgt_release(l), wgt_release(tok), wgt_release(logits), wgt_release(next);
        CHECK(wgt_context_sync(ctx) == WGT_OK, "%s", wgt_last_error());
        CHECK(bytes_in_use(ctx) == before, "round %d (%s): %llu bytes in use after, %llu before", round,
              round ? "replayed" : "eager", (unsigned long long)bytes_in_use(ctx), (unsigned long long)before);
    }
    llama_free(&m);
}
