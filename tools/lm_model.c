/* The character-level transformer of tools/lm_model.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lm_model.h"

uint64_t lm_rand(uint64_t *state) { /* splitmix64: the same stream on every platform */
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double rand_unit(uint64_t *s) { return ((double)(lm_rand(s) >> 11) + 0.5) / 9007199254740992.0; }

/* A parameter of the given shape: normal(0, std) from the host stream, or `fill` when std is 0. */
static wgt_tensor *new_param(lm_model *m, const char *name, int ndim, const int64_t *shape, double std, double fill,
                             uint64_t *rng) {
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    float *v = malloc(sizeof *v * (size_t)n);
    if (!v) return NULL;
    for (int64_t i = 0; i < n; i++) {
        /* Box-Muller from two uniforms in (0, 1) */
        v[i] = std ? (float)(std * sqrt(-2 * log(rand_unit(rng))) * cos(2 * M_PI * rand_unit(rng))) : (float)fill;
    }
    wgt_tensor *t = wgt_tensor_from_data(m->ctx, WGT_F32, ndim, shape, v, sizeof *v * (size_t)n, WGT_USAGE_DEFAULT);
    free(v);
    if (!t) return NULL;
    if (wgt_requires_grad(t, 1) != WGT_OK) {
        wgt_release(t);
        return NULL;
    }
    snprintf(m->names[m->nparams], sizeof m->names[0], "%s", name);
    m->params[m->nparams++] = t;
    return t;
}

wgt_status lm_init(lm_model *m, wgt_context *ctx, const lm_config *c, uint64_t seed) {
    memset(m, 0, sizeof *m);
    if (c->vocab < 2 || c->layers < 1 || c->layers > LM_MAX_LAYERS || c->width < 2 || c->heads < 1 ||
        c->width % c->heads || c->context < 1) {
        fprintf(stderr, "lm_init: vocab %d, layers %d (1..%d), width %d, heads %d (dividing width), context %d\n",
                c->vocab, c->layers, LM_MAX_LAYERS, c->width, c->heads, c->context);
        return WGT_ERR_INVALID_ARGUMENT;
    }
    m->cfg = *c;
    m->ctx = ctx;
    uint64_t rng = seed;
    const int64_t D = c->width;
    /* GPT-2's initialisation: 0.02, the projections into the residual stream scaled down by
     * sqrt(2 layers) so that the stream's variance does not grow with depth. */
    const double s = 0.02, s_out = 0.02 / sqrt(2.0 * c->layers);
    int ok = new_param(m, "tok_emb", 2, (int64_t[]){c->vocab, D}, s, 0, &rng) &&
             new_param(m, "pos_emb", 2, (int64_t[]){c->context, D}, s, 0, &rng);
    for (int l = 0; l < c->layers && ok; l++) {
        char n[LM_PER_LAYER][32];
        const char *what[LM_PER_LAYER] = {"ln1.w", "ln1.b", "wq", "wk", "wv", "wo", "ln2.w", "ln2.b", "w1", "w2"};
        for (int i = 0; i < LM_PER_LAYER; i++) snprintf(n[i], sizeof n[i], "h%d.%s", l, what[i]);
        ok = new_param(m, n[0], 1, (int64_t[]){D}, 0, 1, &rng) && new_param(m, n[1], 1, (int64_t[]){D}, 0, 0, &rng) &&
             new_param(m, n[2], 2, (int64_t[]){D, D}, s, 0, &rng) &&
             new_param(m, n[3], 2, (int64_t[]){D, D}, s, 0, &rng) &&
             new_param(m, n[4], 2, (int64_t[]){D, D}, s, 0, &rng) &&
             new_param(m, n[5], 2, (int64_t[]){D, D}, s_out, 0, &rng) &&
             new_param(m, n[6], 1, (int64_t[]){D}, 0, 1, &rng) && new_param(m, n[7], 1, (int64_t[]){D}, 0, 0, &rng) &&
             new_param(m, n[8], 2, (int64_t[]){4 * D, D}, s, 0, &rng) &&
             new_param(m, n[9], 2, (int64_t[]){D, 4 * D}, s_out, 0, &rng);
    }
    ok = ok && new_param(m, "lnf.w", 1, (int64_t[]){D}, 0, 1, &rng) &&
         new_param(m, "lnf.b", 1, (int64_t[]){D}, 0, 0, &rng);
    if (!ok) {
        wgt_status st = wgt_last_status();
        lm_free(m);
        return st ? st : WGT_ERR_OUT_OF_MEMORY;
    }
    return WGT_OK;
}

void lm_free(lm_model *m) {
    for (int i = 0; i < m->nparams; i++) wgt_release(m->params[i]);
    m->nparams = 0;
}

/* [B, T, D] -> [B, H, T, D/H] for attention, and back. */
static wgt_tensor *split_heads(wgt_tensor *x, int64_t B, int64_t T, int64_t H, int64_t hd) {
    wgt_tensor *r = wgt_reshape(x, 4, (int64_t[]){B, T, H, hd});
    wgt_tensor *p = wgt_permute(r, (int[]){0, 2, 1, 3});
    wgt_release(r);
    return p;
}

static wgt_tensor *merge_heads(wgt_tensor *x, int64_t B, int64_t T, int64_t D) {
    wgt_tensor *p = wgt_permute(x, (int[]){0, 2, 1, 3});
    wgt_tensor *c = wgt_contiguous(p);
    wgt_tensor *r = wgt_reshape(c, 3, (int64_t[]){B, T, D});
    wgt_release(p);
    wgt_release(c);
    return r;
}

/* x + f(x) where f is one half of a block; consumes x and y. */
static wgt_tensor *residual(wgt_tensor *x, wgt_tensor *y) {
    wgt_tensor *r = wgt_add(x, y);
    wgt_release(x);
    wgt_release(y);
    return r;
}

static wgt_tensor *attention_half(lm_model *m, wgt_tensor *const *p, wgt_tensor *x, int64_t B, int64_t T) {
    const int64_t D = m->cfg.width, H = m->cfg.heads;
    wgt_tensor *h = wgt_layer_norm(x, p[0], p[1], 1e-5);
    wgt_tensor *qkv[3];
    for (int i = 0; i < 3; i++) {
        wgt_tensor *lin = wgt_linear(h, p[2 + i], NULL);
        qkv[i] = split_heads(lin, B, T, H, D / H);
        wgt_release(lin);
    }
    wgt_tensor *a = wgt_attention(qkv[0], qkv[1], qkv[2], 1, 0);
    wgt_tensor *merged = merge_heads(a, B, T, D);
    wgt_tensor *out = wgt_linear(merged, p[5], NULL);
    for (int i = 0; i < 3; i++) wgt_release(qkv[i]);
    wgt_release(h);
    wgt_release(a);
    wgt_release(merged);
    return out;
}

static wgt_tensor *mlp_half(wgt_tensor *const *p, wgt_tensor *x) {
    wgt_tensor *h = wgt_layer_norm(x, p[6], p[7], 1e-5);
    wgt_tensor *u = wgt_linear(h, p[8], NULL);
    wgt_tensor *g = wgt_gelu(u);
    wgt_tensor *out = wgt_linear(g, p[9], NULL);
    wgt_release(h);
    wgt_release(u);
    wgt_release(g);
    return out;
}

wgt_tensor *lm_logits(lm_model *m, wgt_tensor *tokens) {
    if (!tokens) return NULL;
    const int64_t B = wgt_tensor_shape(tokens)[0], T = wgt_tensor_shape(tokens)[1];
    wgt_tensor *emb = wgt_gather_rows(m->params[0], tokens);
    wgt_tensor *pos = wgt_slice(m->params[1], 0, 0, T, 1);
    wgt_tensor *x = wgt_add(emb, pos); /* [B, T, D] + [T, D] broadcast */
    wgt_release(emb);
    wgt_release(pos);
    for (int l = 0; l < m->cfg.layers; l++) {
        wgt_tensor *const *p = m->params + 2 + l * LM_PER_LAYER;
        x = residual(x, attention_half(m, p, x, B, T));
        x = residual(x, mlp_half(p, x));
    }
    wgt_tensor *h = wgt_layer_norm(x, m->params[m->nparams - 2], m->params[m->nparams - 1], 1e-5);
    /* The output layer shares the embedding matrix (weight tying, as GPT-2). */
    wgt_tensor *logits = wgt_linear(h, m->params[0], NULL);
    wgt_release(x);
    wgt_release(h);
    return logits;
}

wgt_tensor *lm_loss(lm_model *m, const int32_t *tokens, const int32_t *targets, int batch, int len) {
    const int64_t shape[2] = {batch, len};
    const size_t nb = sizeof(int32_t) * (size_t)batch * (size_t)len;
    wgt_tensor *tok = wgt_tensor_from_data(m->ctx, WGT_I32, 2, shape, tokens, nb, WGT_USAGE_DEFAULT);
    wgt_tensor *tgt = wgt_tensor_from_data(m->ctx, WGT_I32, 2, shape, targets, nb, WGT_USAGE_DEFAULT);
    wgt_tensor *logits = lm_logits(m, tok);
    wgt_tensor *loss = logits && tgt ? wgt_cross_entropy(logits, tgt) : NULL;
    wgt_release(tok);
    wgt_release(tgt);
    wgt_release(logits);
    return loss;
}

wgt_optimizer *lm_optimizer(lm_model *m, double lr) { return wgt_adamw(m->nparams, m->params, lr, 0.9, 0.95, 1e-8, 0.01); }

wgt_status lm_train_step(lm_model *m, wgt_optimizer *opt, const int32_t *tokens, const int32_t *targets,
                         int batch, int len, double lr, double *loss) {
    wgt_status st = wgt_optimizer_zero_grad(opt);
    wgt_tensor *l = st == WGT_OK ? lm_loss(m, tokens, targets, batch, len) : NULL;
    float v = NAN;
    if (!l) return st ? st : wgt_last_status();
    if ((st = wgt_backward(l, NULL)) == WGT_OK && (st = wgt_tensor_read(l, &v, sizeof v)) == WGT_OK &&
        (st = wgt_clip_grad_norm(m->nparams, m->params, 1.0, NULL)) == WGT_OK &&
        (st = wgt_optimizer_set_lr(opt, lr)) == WGT_OK)
        st = wgt_optimizer_step(opt);
    wgt_release(l);
    *loss = v;
    return st;
}

void lm_batch(const int32_t *text, int64_t n, uint64_t *rng, int batch, int len, int32_t *tokens, int32_t *targets) {
    for (int b = 0; b < batch; b++) {
        int64_t at = (int64_t)(lm_rand(rng) % (uint64_t)(n - len - 1));
        memcpy(tokens + (size_t)b * len, text + at, sizeof *text * (size_t)len);
        memcpy(targets + (size_t)b * len, text + at + 1, sizeof *text * (size_t)len);
    }
}
