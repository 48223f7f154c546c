/*
 * The language model of `wgtensor train-lm` (tools/lm_model.c): from the same seed the CPU
 * and WebGPU backends give the same first training losses, and training lowers the loss.
 *
 * Tolerance: 1e-5 on each of the first steps' losses (on lavapipe the losses agree with the
 * CPU backend's to the last bit; a real GPU's reductions may round differently, by about
 * 1e-6, while an op whose gradient differs between the backends moves the loss after the
 * first update by far more). The loss falls from ln(vocab) to below 60% of
 * it in 60 steps on a text whose next character is mostly predictable from the previous.
 */
#include <math.h>
#include <string.h>

#include "test.h"
#include "../tools/lm_model.c"

static const char TEXT[] =
    "the quick brown fox jumps over the lazy dog. a quick brown dog jumps over the lazy fox. "
    "the lazy fox and the quick dog sleep. the brown dog and the lazy fox run over the hill. ";

enum { BATCH = 4, LEN = 16, FIRST = 4, STEPS = 60 };

/* The text as indices into its sorted set of characters; returns the vocabulary size. */
static int encode(int32_t *out, int64_t n) {
    int map[256] = {0}, vocab = 0;
    for (int64_t i = 0; i < n; i++) map[(unsigned char)TEXT[i]] = 1;
    for (int c = 0; c < 256; c++) map[c] = map[c] ? vocab++ : -1;
    for (int64_t i = 0; i < n; i++) out[i] = map[(unsigned char)TEXT[i]];
    return vocab;
}

/* Trains the tiny model for steps steps on ctx; losses[i] is step i's loss. */
static int train(wgt_context *ctx, int steps, double *losses) {
    const int64_t n = (int64_t)strlen(TEXT);
    int32_t text[sizeof TEXT], tok[BATCH * LEN], tgt[BATCH * LEN];
    lm_config cfg = {.vocab = encode(text, n), .layers = 1, .width = 16, .heads = 2, .context = LEN};
    lm_model m;
    if (lm_init(&m, ctx, &cfg, 7) != WGT_OK) return 0;
    wgt_optimizer *opt = lm_optimizer(&m, 1e-2);
    uint64_t rng = 11;
    int ok = opt != NULL;
    for (int s = 0; s < steps && ok; s++) {
        lm_batch(text, n, &rng, BATCH, LEN, tok, tgt);
        ok = lm_train_step(&m, opt, tok, tgt, BATCH, LEN, 1e-2, &losses[s]) == WGT_OK;
        CHECK(ok, "step %d: %s", s, wgt_last_error());
    }
    wgt_optimizer_release(opt);
    lm_free(&m);
    return ok;
}

TEST(train_lm_same_first_losses_on_both_backends) {
    wgt_context *cpu, *gpu;
    if (!test_backend_pair(&cpu, &gpu)) return;
    double a[FIRST], b[FIRST];
    if (train(cpu, FIRST, a) && train(gpu, FIRST, b)) {
        for (int i = 0; i < FIRST; i++)
            CHECK(fabs(a[i] - b[i]) <= 1e-5, "step %d: cpu %.7f, webgpu %.7f (seed 7)", i, a[i], b[i]);
        CHECK(a[FIRST - 1] < a[0], "the loss did not move: %.6f then %.6f", a[0], a[FIRST - 1]);
    }
    wgt_context_release(cpu);
    wgt_context_release(gpu);
}

TEST_BACKENDS(train_lm_loss_falls) {
    double loss[STEPS];
    if (!train(ctx, STEPS, loss)) return;
    int32_t text[sizeof TEXT];
    const double uniform = log(encode(text, (int64_t)strlen(TEXT)));
    CHECK(fabs(loss[0] - uniform) < 0.05, "first loss %.4f, ln(vocab) %.4f: the initial logits are not near zero",
          loss[0], uniform);
    double last = 0;
    for (int i = STEPS - 5; i < STEPS; i++) last += loss[i] / 5;
    CHECK(last < 0.6 * uniform, "loss %.4f after %d steps, first %.4f (seed 7)", last, STEPS, loss[0]);
}
