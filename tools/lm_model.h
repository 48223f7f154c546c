/*
 * A character-level decoder-only transformer (GPT-2 shaped: pre-norm blocks of causal
 * self-attention and a GELU MLP, learned positions) written in the library's ops and trained
 * with its autograd and AdamW. Shared by `wgtensor train-lm` (tools/train_lm.c) and its test
 * (tests/test_train_lm.c). Weights are drawn on the host from the seed, so the same seed gives
 * the same model on every backend.
 */
#ifndef WGT_LM_MODEL_H
#define WGT_LM_MODEL_H

#include <stdint.h>

#include "wgtensor.h"

#define LM_MAX_LAYERS 12 /* GPT-2 small (bench-train) */
#define LM_PER_LAYER 10 /* ln1 w, b; wq, wk, wv, wo; ln2 w, b; w1, w2 */
#define LM_MAX_PARAMS (4 + LM_PER_LAYER * LM_MAX_LAYERS)

typedef struct {
    int vocab, layers, width, heads, context;
} lm_config;

typedef struct {
    lm_config cfg;
    wgt_context *ctx;
    int nparams;
    wgt_tensor *params[LM_MAX_PARAMS]; /* tok_emb, pos_emb, blocks..., lnf w, lnf b; head = tok_emb^T */
    char names[LM_MAX_PARAMS][32];
} lm_model;

/* Fills m with a new model on ctx; WGT_ERR_INVALID_ARGUMENT for a configuration out of range. */
wgt_status lm_init(lm_model *m, wgt_context *ctx, const lm_config *cfg, uint64_t seed);
void lm_free(lm_model *m);
/* Logits [B, T, vocab] for i32 tokens [B, T] (T <= context). */
wgt_tensor *lm_logits(lm_model *m, wgt_tensor *tokens);
/* Mean cross-entropy of the next characters: tokens and targets are host arrays of B x T. */
wgt_tensor *lm_loss(lm_model *m, const int32_t *tokens, const int32_t *targets, int batch, int len);
/* One training step (forward, backward, gradient clipping at 1, AdamW at lr): the loss
 * before the update into *loss. */
wgt_status lm_train_step(lm_model *m, wgt_optimizer *opt, const int32_t *tokens, const int32_t *targets,
                         int batch, int len, double lr, double *loss);
/* An AdamW optimizer over the model's parameters (betas 0.9, 0.95, weight decay 0.01). */
wgt_optimizer *lm_optimizer(lm_model *m, double lr);
/* batch windows of len + 1 characters from text[0..n) at offsets drawn from *rng: inputs
 * and targets shifted by one. */
void lm_batch(const int32_t *text, int64_t n, uint64_t *rng, int batch, int len, int32_t *tokens,
              int32_t *targets);
uint64_t lm_rand(uint64_t *state);

#endif
