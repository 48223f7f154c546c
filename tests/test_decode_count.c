/*
 * What a replayed decoding step (llama_replay) costs the device in launches and dispatches:
 * on a GPU each dispatch carries a fixed cost of several microseconds, which for a small or
 * quantized model is far more than its share of the weight reads, so the count is the figure
 * the step's fusions are judged by. The step's count and the count per layer (two models
 * that differ in one layer) are printed and held to a budget.
 */
#include "test.h"
#include "../tools/llama.h"

/* Launches a layer of the replayed step may take (f16 adds casts on the CPU). */
#define LAYER_LAUNCHES_WEBGPU 18
#define LAYER_LAUNCHES_CPU 27

typedef struct {
    uint64_t launches, dispatches;
} step_cost;

/* Launches and dispatches of one replayed step at position 3, after a first step that built
 * the graph and filled the pool. */
static step_cost replay_cost(wgt_context *ctx, const llama_config *c, wgt_dtype type) {
    step_cost cost = {0, 0};
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
    llama_replay_free(r);
    wgt_release(l), wgt_release(tok), wgt_release(logits), wgt_release(t1), wgt_release(t2);
    llama_free(&m);
    return cost;
}

TEST_BACKENDS(decode_replay_dispatch_count) {
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
        uint64_t budget = wgt_context_backend(ctx) == WGT_BACKEND_WEBGPU ? LAYER_LAUNCHES_WEBGPU : LAYER_LAUNCHES_CPU;
        CHECK(layer_l <= budget, "%s: a layer costs %llu launches, more than the %llu budgeted",
              wgt_dtype_name(types[ti]), (unsigned long long)layer_l, (unsigned long long)budget);
    }
}
