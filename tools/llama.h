/* A Llama-shaped decoder over the public API, for `wgtensor generate` and `bench-quant`:
 * token embedding, layers of RMSNorm, rotary attention with a KV cache (grouped heads) and a
 * SwiGLU MLP, a final norm and an output projection. Weights come from a GGUF file (llama.*
 * metadata, llama.cpp's tensor names) or are drawn at random with a seed. */
#ifndef WGT_TOOLS_LLAMA_H
#define WGT_TOOLS_LLAMA_H

#include "wgtensor.h"

typedef struct {
    int64_t dim, layers, heads, kv_heads, hidden, vocab, context;
    double rope_base, eps;
} llama_config;

/* wq, wk and wv are row views of wqkv [(heads + 2 kv_heads) * head_dim, dim], gate and up of
 * gate_up [2 hidden, dim]: a step runs one matrix product for each of those, not five
 * (row blocks are whole quantization blocks, so q8_0 / q4_0 rows join as bytes). The views
 * are the file's tensors, which llama_save writes under llama.cpp's names. */
typedef struct {
    wgt_tensor *attn_norm, *wq, *wk, *wv, *wo, *ffn_norm, *gate, *up, *down;
    wgt_tensor *wqkv, *gate_up;
    wgt_tensor *k_cache, *v_cache; /* [kv_heads, context, head_dim] */
} llama_layer;

typedef struct {
    llama_config c;
    wgt_context *ctx;
    wgt_dtype act; /* activations: f16 for an f16 model, else f32 */
    wgt_tensor *embed, *out_norm, *output;
    llama_layer *layer;
    char **tokens; /* the file's vocabulary, or NULL: tokens are bytes */
} llama_model;

/* 0 on success; else the library's error is set (or a message printed for a bad file). */
int llama_random(llama_model *m, wgt_context *ctx, const llama_config *c, wgt_dtype weights, uint64_t seed);
int llama_load(llama_model *m, wgt_context *ctx, const char *path);
/* Replaces every matrix (embedding and output included) by its q8_0 / q4_0 quantization. */
int llama_quantize(llama_model *m, wgt_dtype type);
int llama_save(const llama_model *m, const char *path);
/* Runs n tokens at positions pos.. through the model, filling the caches; returns the last
 * token's logits [vocab] (f32), or NULL. */
wgt_tensor *llama_forward(llama_model *m, const int32_t *tokens, int64_t n, int64_t pos);
/* The same for ids [n] (i32, on the device or not). */
wgt_tensor *llama_forward_ids(llama_model *m, wgt_tensor *ids, int64_t pos);
/* The next token from logits [vocab] (f32) as a [1] i32 tensor, computed on the device: the
 * first largest logit at temperature 0, else a draw from the softmax of the top_k largest
 * logits / temperature (all of them for top_k <= 0) with the uniform of (seed, step). */
wgt_tensor *llama_sample(wgt_tensor *logits, double temperature, int64_t top_k, uint64_t seed, int64_t step);
/* A decoding step replayed from a compiled graph (llama.c): recording ~600 ops a token costs
 * the host more than the device needs for the step, so the step (embedding lookup, layers,
 * greedy sampling) is recorded once over graph inputs, the token, its position and the
 * count of keys it sees (position + 1), and dispatched per token. The position reaches the
 * KV-cache writes (wgt_set_rows at it, in place) and RoPE as a tensor; attention
 * (wgt_attention_prefix over the count) runs over the caches' first span 2^i positions
 * (at most the context), the least such that covers the token's, those after it not
 * seen: a graph per length, built when decoding first reaches it, so a step reads at most
 * twice the keys it needs (or span) and a whole context builds log2(context / span) + 1
 * graphs. Sampling
 * with a temperature runs after the graph as llama_sample (a compiled graph cannot hold
 * top-k: its node writes two tensors). Not thread-safe. */
typedef struct llama_replay llama_replay;
#define LLAMA_REPLAY_SPAN 64
/* NULL with the library's error set (or a message printed). seed: llama_sample's. */
llama_replay *llama_replay_create(llama_model *m, double temperature, int64_t top_k, uint64_t seed, int64_t span);
/* Runs the step for token ([1] i32, on the device or not) at position pos: logits ([vocab]
 * f32, contiguous, writable) receives its logits and the result ([1] i32, new) is the token
 * llama_sample draws from them for step `step`, as llama_forward_ids and llama_sample would
 * give them. NULL with the library's error set (or a message printed for a position past
 * the context). */
wgt_tensor *llama_replay_step(llama_replay *r, wgt_tensor *token, int64_t pos, int64_t step, wgt_tensor *logits);
void llama_replay_free(llama_replay *r);

typedef void (*llama_token_fn)(void *arg, int32_t token);
/* Host seconds llama_generate spent recording steps' ops (replayed: dispatching the
 * compiled step, which encodes it, and building its graphs), submitting them (encoding the
 * recorded work into command buffers) and waiting for tokens. */
typedef struct {
    double record_s, submit_s, wait_s;
    double build_s; /* building the replayed step's graph, once a run (not in record_s) */
} llama_decode_stats;
/* Samples count tokens, the first from logits (the prompt's last), each next one from the
 * model run on the last at positions pos.., without the host waiting on any step: on_token
 * gets each token a few steps after the device made it (decode.c). Steps are replayed
 * (llama_replay). 0, or -1 with the
 * library's error set. stats (or NULL) receives the host's time. */
int llama_generate(llama_model *m, wgt_tensor *logits, int64_t pos, int64_t count, double temperature, int64_t top_k,
                   uint64_t seed, llama_token_fn on_token, void *arg, llama_decode_stats *stats);
/* The same with every step recorded op by op (llama_forward_ids), the reference. */
int llama_generate_eager(llama_model *m, wgt_tensor *logits, int64_t pos, int64_t count, double temperature,
                         int64_t top_k, uint64_t seed, llama_token_fn on_token, void *arg, llama_decode_stats *stats);
/* Mean next-token cross-entropy (nats) of tokens[1..n-1] given the ones before, from
 * position 0 (n at most the context; it fills the caches); -1 on failure. */
double llama_loss(llama_model *m, const int32_t *tokens, int64_t n);
/* Bytes of the weights a decoding step reads. */
double llama_weight_bytes(const llama_model *m);
void llama_free(llama_model *m);

#endif
