/*
 * The Llama-shaped decoder of tools/llama.h. The forward pass is ordinary lazy ops: each
 * layer's keys and values go into its caches with wgt_kv_cache_append and attention reads
 * slice views of the filled prefix, the query heads of a group viewed beside a broadcast of
 * their key head. Rotary embeddings use wgtensor's rotate-half layout (wgt_rope); GGUF files
 * hold attn_q and attn_k with their rows permuted for ggml's interleaved rotation, as
 * llama.cpp's converter writes them: llama_load undoes that permutation and llama_save
 * applies it, so files go both ways between llama.cpp and wgtensor. A layer's q, k, v and
 * its MLP's gate, up are joined by rows into one matrix each (llama.h), the file's tensors
 * row views of them.
 */
#include "llama.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const layer_names[9] = {"attn_norm", "attn_q", "attn_k", "attn_v", "attn_output",
                                           "ffn_norm", "ffn_gate", "ffn_up", "ffn_down"};

static wgt_tensor **layer_slot(llama_layer *l, int i) {
    wgt_tensor **slots[9] = {&l->attn_norm, &l->wq, &l->wk, &l->wv, &l->wo, &l->ffn_norm, &l->gate, &l->up, &l->down};
    return slots[i];
}

/* The slots a fused matrix holds, in row order: wq|wk|wv, gate|up. */
static const int qkv_slots[3] = {1, 2, 3}, gate_up_slots[2] = {6, 7};

/* Replaces the slots' tensors by row views of fused (whose rows they are, in order). */
static int view_rows(llama_layer *l, wgt_tensor *fused, const int *slots, int n) {
    int64_t row = 0;
    for (int i = 0; i < n; i++) {
        wgt_tensor **slot = layer_slot(l, slots[i]);
        int64_t rows = wgt_tensor_shape(*slot)[0];
        wgt_tensor *v = wgt_slice(fused, 0, row, row + rows, 1);
        if (!v) return -1;
        wgt_release(*slot);
        *slot = v;
        row += rows;
    }
    return 0;
}

/* The slots' matrices joined by rows into *fused, the slots then views of it; rows move as
 * bytes, so block types join as they are. Matrices of different types or widths (a file may
 * mix them) stay apart, *fused NULL: the forward pass then joins their products. -1 on failure. */
static int join_rows(llama_layer *l, const int *slots, int n, wgt_tensor **fused) {
    wgt_tensor *first = *layer_slot(l, slots[0]);
    size_t total = 0;
    int64_t shape[2] = {0, wgt_tensor_shape(first)[1]};
    for (int i = 0; i < n; i++) {
        wgt_tensor *t = *layer_slot(l, slots[i]);
        if (wgt_tensor_dtype(t) != wgt_tensor_dtype(first) || wgt_tensor_shape(t)[1] != shape[1]) return 0;
        total += wgt_tensor_nbytes(t);
        shape[0] += wgt_tensor_shape(t)[0];
    }
    char *bytes = malloc(total);
    size_t at = 0;
    int ok = bytes != NULL;
    for (int i = 0; i < n && ok; i++) {
        wgt_tensor *t = *layer_slot(l, slots[i]);
        ok = wgt_tensor_read(t, bytes + at, wgt_tensor_nbytes(t)) == WGT_OK;
        at += wgt_tensor_nbytes(t);
    }
    *fused = ok ? wgt_tensor_from_data(wgt_tensor_context(first), wgt_tensor_dtype(first), 2, shape, bytes, total,
                                       WGT_USAGE_DEFAULT)
                : NULL;
    free(bytes);
    return *fused && !view_rows(l, *fused, slots, n) ? 0 : -1;
}

/* Each layer's wqkv and gate_up, where not made yet, from its separate matrices. */
static int fuse_layers(llama_model *m) {
    for (int64_t i = 0; i < m->c.layers; i++) {
        llama_layer *l = &m->layer[i];
        if ((!l->wqkv && join_rows(l, qkv_slots, 3, &l->wqkv)) ||
            (!l->gate_up && join_rows(l, gate_up_slots, 2, &l->gate_up)))
            return -1;
    }
    return 0;
}

/* Whether slot k of l is a view of a fused matrix. */
static int in_fused(const llama_layer *l, int k) {
    return ((k >= 1 && k <= 3) && l->wqkv) || ((k == 6 || k == 7) && l->gate_up);
}

static int make_caches(llama_model *m) {
    int64_t hd = m->c.dim / m->c.heads, shape[3] = {m->c.kv_heads, m->c.context, hd};
    for (int64_t i = 0; i < m->c.layers; i++) {
        llama_layer *l = &m->layer[i];
        if (!(l->k_cache = wgt_zeros(m->ctx, m->act, 3, shape)) || !(l->v_cache = wgt_zeros(m->ctx, m->act, 3, shape)))
            return -1;
    }
    return 0;
}

static int check_config(const llama_config *c) {
    if (c->dim <= 0 || c->layers <= 0 || c->heads <= 0 || c->kv_heads <= 0 || c->hidden <= 0 || c->vocab <= 0 ||
        c->context <= 0 || c->dim % c->heads || c->heads % c->kv_heads || (c->dim / c->heads) % 2) {
        fprintf(stderr, "llama: bad sizes: dim %lld, heads %lld, kv heads %lld (dim / heads must be even, heads a "
                        "multiple of kv heads)\n", (long long)c->dim, (long long)c->heads, (long long)c->kv_heads);
        return -1;
    }
    return 0;
}

int llama_random(llama_model *m, wgt_context *ctx, const llama_config *c, wgt_dtype weights, uint64_t seed) {
    memset(m, 0, sizeof *m);
    if (check_config(c)) return -1;
    m->c = *c;
    m->ctx = ctx;
    m->act = weights == WGT_F16 ? WGT_F16 : WGT_F32;
    if (!(m->layer = calloc((size_t)c->layers, sizeof *m->layer))) return -1;
    int64_t hd = c->dim / c->heads, kvd = c->kv_heads * hd, d1[1] = {c->dim};
    int64_t emb[2] = {c->vocab, c->dim}, sq[2] = {c->dim, c->dim}, skv[2] = {kvd, c->dim};
    int64_t sg[2] = {c->hidden, c->dim}, sd[2] = {c->dim, c->hidden};
    double std = 0.02;
    if (!(m->embed = wgt_rand_normal(ctx, m->act, 2, emb, 0, 1, seed)) ||
        !(m->output = wgt_rand_normal(ctx, m->act, 2, emb, 0, std, seed + 1)) ||
        !(m->out_norm = wgt_ones(ctx, m->act, 1, d1)))
        return -1;
    for (int64_t i = 0; i < c->layers; i++) {
        const int64_t *shapes[9] = {d1, sq, skv, skv, sq, d1, sg, sg, sd};
        for (int k = 0; k < 9; k++) {
            uint64_t s = seed + 16 + (uint64_t)i * 9 + (uint64_t)k;
            wgt_tensor *t = k == 0 || k == 5 ? wgt_ones(ctx, m->act, 1, d1)
                                             : wgt_rand_normal(ctx, m->act, 2, shapes[k], 0, std, s);
            if (!(*layer_slot(&m->layer[i], k) = t)) return -1;
        }
    }
    return fuse_layers(m) ? -1 : make_caches(m);
}

/* An integer or float metadata value by key; 0 when absent or of another kind. */
static int kv_number(const wgt_gguf *g, const char *key, double *out) {
    const wgt_gguf_kv *kv = wgt_gguf_find_kv(g, key);
    if (!kv || kv->type == WGT_GGUF_ARRAY || kv->type == WGT_GGUF_STRING) return 0;
    switch (kv->type) {
    case WGT_GGUF_UINT8: *out = *(const uint8_t *)kv->data; break;
    case WGT_GGUF_INT8: *out = *(const int8_t *)kv->data; break;
    case WGT_GGUF_UINT16: *out = *(const uint16_t *)kv->data; break;
    case WGT_GGUF_INT16: *out = *(const int16_t *)kv->data; break;
    case WGT_GGUF_UINT32: *out = *(const uint32_t *)kv->data; break;
    case WGT_GGUF_INT32: *out = *(const int32_t *)kv->data; break;
    case WGT_GGUF_UINT64: *out = (double)*(const uint64_t *)kv->data; break;
    case WGT_GGUF_INT64: *out = (double)*(const int64_t *)kv->data; break;
    case WGT_GGUF_FLOAT32: *out = *(const float *)kv->data; break;
    case WGT_GGUF_FLOAT64: *out = *(const double *)kv->data; break;
    default: return 0;
    }
    return 1;
}

static wgt_tensor *load_named(wgt_gguf *g, wgt_context *ctx, const char *name, int required) {
    if (wgt_gguf_find_tensor(g, name) < 0) {
        if (required) fprintf(stderr, "llama: the file has no tensor %s\n", name);
        return NULL;
    }
    wgt_tensor *t = wgt_gguf_load(g, ctx, name, WGT_USAGE_DEFAULT);
    if (!t) fprintf(stderr, "llama: %s: %s\n", name, wgt_last_error());
    return t;
}

/* Norm weights and f16/f32 matrices take the activations' type; block types stay. */
static wgt_tensor *as_act(wgt_tensor *t, wgt_dtype act) {
    wgt_dtype d = wgt_tensor_dtype(t);
    if (!t || d == act || d == WGT_Q8_0 || d == WGT_Q4_0) return t;
    wgt_tensor *c = wgt_cast(t, act);
    wgt_release(t);
    return c;
}

/* Within each head of hd rows, rotate-half row j hd/2 + i (i < hd/2, j = 0 or 1) is row
 * 2i + j in the file: the pair a rotation turns is adjacent there, as ggml's interleaved
 * rotation takes it, with the same frequency base^(-2i/hd). A new tensor with t's rows
 * moved to the file's order (to_file) or back; rows move as bytes, so block types work too
 * (a row is whole blocks). NULL with a message when t's rows are not heads of even size. */
static wgt_tensor *permute_rope_rows(wgt_tensor *t, const char *name, int64_t heads, int to_file) {
    if (!t) return NULL;
    const int64_t *shape = wgt_tensor_shape(t);
    int64_t rows = wgt_tensor_ndim(t) == 2 ? shape[0] : 0, hd = rows / heads;
    if (rows == 0 || rows % heads || hd % 2) {
        fprintf(stderr, "llama: %s has %lld rows, not %lld heads of an even size\n", name, (long long)rows,
                (long long)heads);
        return NULL;
    }
    size_t nbytes = wgt_tensor_nbytes(t), row_bytes = nbytes / (size_t)rows;
    char *from = malloc(nbytes), *to = malloc(nbytes);
    wgt_tensor *out = NULL;
    if (from && to && wgt_tensor_read(t, from, nbytes) == WGT_OK) {
        for (int64_t h = 0; h < heads; h++)
            for (int64_t i = 0; i < hd / 2; i++)
                for (int64_t j = 0; j < 2; j++) {
                    size_t file_row = (size_t)(h * hd + 2 * i + j), half_row = (size_t)(h * hd + j * (hd / 2) + i);
                    memcpy(to + (to_file ? file_row : half_row) * row_bytes,
                           from + (to_file ? half_row : file_row) * row_bytes, row_bytes);
                }
        out = wgt_tensor_from_data(wgt_tensor_context(t), wgt_tensor_dtype(t), 2, shape, to, nbytes, WGT_USAGE_DEFAULT);
    }
    free(from);
    free(to);
    return out;
}

/* The heads whose rotation permutes layer tensor k's rows (attn_q, attn_k), or 0. */
static int64_t rope_heads(const llama_config *c, int k) { return k == 1 ? c->heads : k == 2 ? c->kv_heads : 0; }

int llama_load(llama_model *m, wgt_context *ctx, const char *path) {
    memset(m, 0, sizeof *m);
    wgt_gguf *g = wgt_gguf_open(path);
    if (!g) return -1;
    const wgt_gguf_kv *arch = wgt_gguf_find_kv(g, "general.architecture");
    if (!arch || arch->type != WGT_GGUF_STRING || strcmp(((const wgt_gguf_string *)arch->data)->data, "llama")) {
        fprintf(stderr, "llama: %s is not a llama model (general.architecture)\n", path);
        wgt_gguf_close(g);
        return -1;
    }
    double v[9] = {0, 0, 0, 0, 0, 2048, 10000, 1e-5, 0};
    const char *keys[8] = {"llama.embedding_length", "llama.block_count", "llama.attention.head_count",
                           "llama.attention.head_count_kv", "llama.feed_forward_length", "llama.context_length",
                           "llama.rope.freq_base", "llama.attention.layer_norm_rms_epsilon"};
    for (int i = 0; i < 8; i++)
        if (!kv_number(g, keys[i], &v[i]) && i != 3 && i < 5) {
            fprintf(stderr, "llama: %s lacks %s\n", path, keys[i]);
            wgt_gguf_close(g);
            return -1;
        }
    const wgt_gguf_tensor_info *te = wgt_gguf_tensor_at(g, wgt_gguf_find_tensor(g, "token_embd.weight"));
    llama_config c = {(int64_t)v[0], (int64_t)v[1], (int64_t)v[2], v[3] > 0 ? (int64_t)v[3] : (int64_t)v[2],
                      (int64_t)v[4], te ? te->shape[0] : 0, (int64_t)v[5], v[6], v[7]};
    int rc = -1;
    if (check_config(&c) || !(m->layer = calloc((size_t)c.layers, sizeof *m->layer))) goto done;
    m->c = c;
    m->ctx = ctx;
    m->act = te && te->dtype == WGT_F16 ? WGT_F16 : WGT_F32;
    if (!(m->embed = as_act(load_named(g, ctx, "token_embd.weight", 1), m->act)) ||
        !(m->out_norm = as_act(load_named(g, ctx, "output_norm.weight", 1), m->act)))
        goto done;
    m->output = as_act(load_named(g, ctx, "output.weight", 0), m->act);
    if (!m->output) m->output = wgt_retain(m->embed); /* tied embeddings */
    for (int64_t i = 0; i < c.layers; i++)
        for (int k = 0; k < 9; k++) {
            char name[96];
            snprintf(name, sizeof name, "blk.%lld.%s.weight", (long long)i, layer_names[k]);
            wgt_tensor **slot = layer_slot(&m->layer[i], k);
            if (!(*slot = as_act(load_named(g, ctx, name, 1), m->act))) goto done;
            if (rope_heads(&c, k)) {
                wgt_tensor *half = permute_rope_rows(*slot, name, rope_heads(&c, k), 0);
                wgt_release(*slot);
                if (!(*slot = half)) goto done;
            }
        }
    const wgt_gguf_kv *tok = wgt_gguf_find_kv(g, "tokenizer.ggml.tokens");
    if (tok && tok->type == WGT_GGUF_ARRAY && tok->elem_type == WGT_GGUF_STRING && (int64_t)tok->count == c.vocab &&
        (m->tokens = calloc((size_t)c.vocab, sizeof *m->tokens)))
        for (int64_t i = 0; i < c.vocab; i++) m->tokens[i] = strdup(((const wgt_gguf_string *)tok->data)[i].data);
    rc = fuse_layers(m) ? -1 : make_caches(m);
done:
    wgt_gguf_close(g);
    return rc;
}

int llama_quantize(llama_model *m, wgt_dtype type) {
    wgt_tensor **mats[3] = {&m->embed, &m->output, NULL};
    for (int k = 0; k < 2; k++) {
        wgt_tensor *q = wgt_quantize(*mats[k], type);
        if (!q) return -1;
        wgt_release(*mats[k]);
        *mats[k] = q;
    }
    for (int64_t i = 0; i < m->c.layers; i++) {
        llama_layer *l = &m->layer[i];
        for (int k = 0; k < 9; k++) {
            wgt_tensor **slot = layer_slot(l, k);
            if (wgt_tensor_ndim(*slot) != 2 || in_fused(l, k)) continue;
            wgt_tensor *q = wgt_quantize(*slot, type);
            if (!q) return -1;
            wgt_release(*slot);
            *slot = q;
        }
        /* Quantization is by rows, so the fused matrix's is its parts' joined. */
        wgt_tensor **fused[2] = {&l->wqkv, &l->gate_up};
        const int *slots[2] = {qkv_slots, gate_up_slots}, nslots[2] = {3, 2};
        for (int f = 0; f < 2; f++) {
            if (!*fused[f]) continue;
            wgt_tensor *q = wgt_quantize(*fused[f], type);
            if (!q) return -1;
            wgt_release(*fused[f]);
            *fused[f] = q;
            if (view_rows(l, q, slots[f], nslots[f])) return -1;
        }
    }
    if (fuse_layers(m)) return -1; /* matrices of one type now, where they were apart */
    /* The quantized kernels take f32 activations. */
    if (m->act != WGT_F32) {
        m->act = WGT_F32;
        m->out_norm = as_act(m->out_norm, WGT_F32);
        for (int64_t i = 0; i < m->c.layers; i++) {
            llama_layer *l = &m->layer[i];
            l->attn_norm = as_act(l->attn_norm, WGT_F32);
            l->ffn_norm = as_act(l->ffn_norm, WGT_F32);
            wgt_release(l->k_cache), wgt_release(l->v_cache);
            l->k_cache = l->v_cache = NULL;
        }
        return make_caches(m);
    }
    return 0;
}

static int set_u32(wgt_gguf_writer *w, const char *key, int64_t v) {
    uint32_t x = (uint32_t)v;
    wgt_gguf_kv kv = {key, WGT_GGUF_UINT32, WGT_GGUF_UINT32, 1, &x};
    return wgt_gguf_writer_set(w, &kv) == WGT_OK ? 0 : -1;
}

static int set_f32(wgt_gguf_writer *w, const char *key, double v) {
    float x = (float)v;
    wgt_gguf_kv kv = {key, WGT_GGUF_FLOAT32, WGT_GGUF_FLOAT32, 1, &x};
    return wgt_gguf_writer_set(w, &kv) == WGT_OK ? 0 : -1;
}

int llama_save(const llama_model *m, const char *path) {
    wgt_gguf_writer *w = wgt_gguf_writer_create();
    wgt_gguf_string arch = {5, "llama"};
    wgt_gguf_kv a = {"general.architecture", WGT_GGUF_STRING, WGT_GGUF_STRING, 1, &arch};
    const llama_config *c = &m->c;
    int rc = !w || wgt_gguf_writer_set(w, &a) != WGT_OK || set_u32(w, "llama.embedding_length", c->dim) ||
             set_u32(w, "llama.block_count", c->layers) || set_u32(w, "llama.attention.head_count", c->heads) ||
             set_u32(w, "llama.attention.head_count_kv", c->kv_heads) ||
             set_u32(w, "llama.feed_forward_length", c->hidden) || set_u32(w, "llama.context_length", c->context) ||
             set_f32(w, "llama.rope.freq_base", c->rope_base) ||
             set_f32(w, "llama.attention.layer_norm_rms_epsilon", c->eps) ||
             wgt_gguf_writer_add_tensor(w, "token_embd.weight", m->embed) != WGT_OK ||
             wgt_gguf_writer_add_tensor(w, "output_norm.weight", m->out_norm) != WGT_OK ||
             wgt_gguf_writer_add_tensor(w, "output.weight", m->output) != WGT_OK;
    for (int64_t i = 0; i < c->layers && !rc; i++)
        for (int k = 0; k < 9 && !rc; k++) {
            char name[96];
            snprintf(name, sizeof name, "blk.%lld.%s.weight", (long long)i, layer_names[k]);
            wgt_tensor *t = *layer_slot(&m->layer[i], k);
            if (rope_heads(c, k)) { /* the writer holds its own reference until released */
                wgt_tensor *file = permute_rope_rows(t, name, rope_heads(c, k), 1);
                rc = !file || wgt_gguf_writer_add_tensor(w, name, file) != WGT_OK;
                wgt_release(file);
            } else {
                rc = wgt_gguf_writer_add_tensor(w, name, t) != WGT_OK;
            }
        }
    if (!rc) rc = wgt_gguf_writer_save(w, path, 0) != WGT_OK;
    wgt_gguf_writer_release(w);
    return rc ? -1 : 0;
}

/* Releases the second tensor and returns the first: chains of ops below read as assignments. */
static wgt_tensor *then(wgt_tensor *result, wgt_tensor *done) {
    wgt_release(done);
    return result;
}

/* h [n, dim] through the fused matrix, or where its parts stayed apart (fused NULL)
 * through each of the slots' matrices, their products joined: [n, rows of all]. */
static wgt_tensor *project(wgt_tensor *h, wgt_tensor *fused, llama_layer *l, const int *slots, int n) {
    if (fused) return wgt_linear(h, fused, NULL);
    wgt_tensor *parts[3] = {0};
    int ok = 1;
    for (int i = 0; i < n; i++) ok = (parts[i] = wgt_linear(h, *layer_slot(l, slots[i]), NULL)) && ok;
    wgt_tensor *out = ok ? wgt_concat(parts, n, -1) : NULL;
    for (int i = 0; i < n; i++) wgt_release(parts[i]);
    return out;
}

/* Keys and values kt, vt [kv_heads, n, hd] into the layer's caches. Eagerly at positions
 * pos..; in a replayed step (positions a graph input) at the positions the tensor holds, as
 * rows of the caches seen with their sequence axis first: the write is then part of every
 * dispatch, before the attention recorded after it. */
static wgt_status write_caches(llama_layer *l, wgt_tensor *kt, wgt_tensor *vt, wgt_tensor *positions, int64_t pos,
                               int replay) {
    if (!kt || !vt) return WGT_ERR_INVALID_ARGUMENT;
    if (!replay) {
        wgt_status st = wgt_kv_cache_append(l->k_cache, kt, pos);
        return st == WGT_OK ? wgt_kv_cache_append(l->v_cache, vt, pos) : st;
    }
    wgt_tensor *cache[2] = {l->k_cache, l->v_cache}, *x[2] = {kt, vt};
    wgt_status st = WGT_OK;
    for (int i = 0; i < 2 && st == WGT_OK; i++) {
        wgt_tensor *dst = wgt_transpose(cache[i], 0, 1), *rows = wgt_transpose(x[i], 0, 1);
        st = dst && rows ? wgt_set_rows(dst, positions, rows) : wgt_last_status();
        wgt_release(dst), wgt_release(rows);
    }
    return st;
}

/* What the replayed step's attention reads: the caches' first span positions, of which the
 * first count (a [1] i32 graph input: the token's position + 1) are filled. */
typedef struct {
    wgt_tensor *count;
    int64_t span;
} replay_keys;

/* softmax(q k^T / sqrt(hd)) v over the keys the replayed step's one token sees (replay_keys),
 * one wgt_attention_prefix: q [heads, 1, hd] -> [heads, 1, hd]. Each query head's group
 * shares its key head, so q is seen as [kv_heads, group, hd] beside the caches' heads. */
static wgt_tensor *masked_attention(llama_model *m, llama_layer *l, wgt_tensor *q, const replay_keys *past) {
    const llama_config *c = &m->c;
    int64_t hd = c->dim / c->heads;
    int64_t g3[3] = {c->kv_heads, c->heads / c->kv_heads, hd}, o3[3] = {c->heads, 1, hd};
    wgt_tensor *qg = wgt_reshape(q, 3, g3);
    wgt_tensor *ks = wgt_slice(l->k_cache, 1, 0, past->span, 1), *vs = wgt_slice(l->v_cache, 1, 0, past->span, 1);
    wgt_tensor *o = qg && ks && vs ? wgt_attention_prefix(qg, ks, vs, past->count, 1.0 / sqrt((double)hd)) : NULL;
    wgt_release(qg), wgt_release(ks), wgt_release(vs);
    return then(wgt_reshape(o, 3, o3), o);
}

/* One layer's attention for x [n, dim] at positions pos..: [n, dim]. past is NULL eagerly
 * (attention over the filled prefix), else the replayed step's mask (masked_attention). */
static wgt_tensor *attention(llama_model *m, llama_layer *l, wgt_tensor *h, wgt_tensor *positions, int64_t n,
                             int64_t pos, const replay_keys *past) {
    const llama_config *c = &m->c;
    int64_t hd = c->dim / c->heads, group = c->heads / c->kv_heads, total = pos + n;
    /* One product for q|k|v: [n, heads + 2 kv_heads, hd], heads first; one rope for q|k. */
    int64_t nh = c->heads + 2 * c->kv_heads, p3[3] = {n, nh, hd};
    wgt_tensor *qkv = project(h, l->wqkv, l, qkv_slots, 3);
    wgt_tensor *qkv3 = then(wgt_reshape(qkv, 3, p3), qkv);
    wgt_tensor *heads = then(wgt_transpose(qkv3, 0, 1), qkv3);
    wgt_tensor *qk = wgt_slice(heads, 0, 0, c->heads + c->kv_heads, 1);
    wgt_tensor *vt = wgt_slice(heads, 0, c->heads + c->kv_heads, nh, 1);
    wgt_release(heads);
    wgt_tensor *qkr = then(wgt_rope(qk, positions, c->rope_base), qk);
    wgt_tensor *qr = wgt_slice(qkr, 0, 0, c->heads, 1), *kr = wgt_slice(qkr, 0, c->heads, c->heads + c->kv_heads, 1);
    wgt_release(qkr);
    wgt_status st = write_caches(l, kr, vt, positions, pos, past != NULL);
    wgt_release(kr), wgt_release(vt);
    if (st != WGT_OK) {
        wgt_release(qr);
        return NULL;
    }
    wgt_tensor *o;
    if (past) {
        o = then(masked_attention(m, l, qr, past), qr);
    } else {
        /* Query heads [kv_heads, group, n, hd] beside each key head broadcast over its group. */
        int64_t q4[4] = {c->kv_heads, group, n, hd}, e4[4] = {c->kv_heads, group, total, hd};
        wgt_tensor *q4v = then(wgt_reshape(qr, 4, q4), qr);
        wgt_tensor *ks = wgt_slice(l->k_cache, 1, 0, total, 1), *vs = wgt_slice(l->v_cache, 1, 0, total, 1);
        wgt_tensor *kp = then(wgt_unsqueeze(ks, 1), ks), *vp = then(wgt_unsqueeze(vs, 1), vs);
        wgt_tensor *ke = then(wgt_expand(kp, 4, e4), kp), *ve = then(wgt_expand(vp, 4, e4), vp);
        o = wgt_attention(q4v, ke, ve, 1, 0);
        wgt_release(q4v), wgt_release(ke), wgt_release(ve);
    }
    int64_t s3[3] = {c->heads, n, hd}, s2[2] = {n, c->dim};
    wgt_tensor *o3 = then(wgt_reshape(o, 3, s3), o);
    wgt_tensor *ot = then(wgt_transpose(o3, 0, 1), o3);
    wgt_tensor *o2 = then(wgt_reshape(ot, 2, s2), ot);
    return then(wgt_linear(o2, l->wo, NULL), o2);
}

/* The layers, the final norm and the output projection over the token ids [n] (i32)
 * wherever they are (a sampled token that never left the device feeds the next step's
 * embedding lookup directly) at positions (i32 [n]; pos.. eagerly): the logits of the last
 * token [vocab], or of every token [n, vocab] (all). past as for attention. */
static wgt_tensor *layers(llama_model *m, wgt_tensor *ids, wgt_tensor *positions, int64_t pos, const replay_keys *past,
                          int all) {
    const llama_config *c = &m->c;
    int64_t n = wgt_tensor_shape(ids)[0];
    wgt_tensor *x = wgt_gather_rows(m->embed, ids);
    if (x && wgt_tensor_dtype(x) != m->act) x = then(wgt_cast(x, m->act), x);
    for (int64_t i = 0; i < c->layers && x; i++) {
        llama_layer *l = &m->layer[i];
        wgt_tensor *h = wgt_rms_norm(x, l->attn_norm, c->eps);
        wgt_tensor *a = h ? attention(m, l, h, positions, n, pos, past) : NULL;
        wgt_release(h);
        x = then(wgt_add(x, a), x);
        wgt_release(a);
        h = wgt_rms_norm(x, l->ffn_norm, c->eps);
        wgt_tensor *gu = project(h, l->gate_up, l, gate_up_slots, 2);
        wgt_release(h);
        wgt_tensor *g = wgt_slice(gu, -1, 0, c->hidden, 1), *u = wgt_slice(gu, -1, c->hidden, 2 * c->hidden, 1);
        wgt_release(gu);
        wgt_tensor *sg = then(wgt_silu(g), g);
        wgt_tensor *act = then(wgt_mul(sg, u), sg);
        wgt_release(u);
        wgt_tensor *d = then(wgt_linear(act, l->down, NULL), act);
        x = then(wgt_add(x, d), x);
        wgt_release(d);
    }
    wgt_tensor *last = x ? wgt_slice(x, 0, all ? 0 : n - 1, n, 1) : NULL;
    wgt_release(x);
    wgt_tensor *h = then(wgt_rms_norm(last, m->out_norm, c->eps), last);
    wgt_tensor *logits = then(wgt_linear(h, m->output, NULL), h);
    if (logits && wgt_tensor_dtype(logits) != WGT_F32) logits = then(wgt_cast(logits, WGT_F32), logits);
    int64_t v1[1] = {c->vocab};
    return logits && !all ? then(wgt_reshape(logits, 1, v1), logits) : logits;
}

/* The eager forward pass of ids [n] at positions pos.. (layers). */
static wgt_tensor *forward(llama_model *m, wgt_tensor *ids, int64_t pos, int all) {
    const llama_config *c = &m->c;
    int64_t n = ids ? wgt_tensor_shape(ids)[0] : 0;
    if (!ids) return NULL;
    if (pos + n > c->context) {
        fprintf(stderr, "llama: position %lld is past the context of %lld\n", (long long)(pos + n), (long long)c->context);
        return NULL;
    }
    int32_t *at = malloc(sizeof(int32_t) * (size_t)n);
    if (!at) return NULL;
    for (int64_t i = 0; i < n; i++) at[i] = (int32_t)(pos + i);
    wgt_tensor *positions = wgt_tensor_from_data(m->ctx, WGT_I32, 1, &n, at, sizeof(int32_t) * (size_t)n,
                                                 WGT_USAGE_DEFAULT);
    free(at);
    wgt_tensor *logits = positions ? layers(m, ids, positions, pos, NULL, all) : NULL;
    wgt_release(positions);
    return logits;
}

/* ---- a decoding step replayed from a compiled graph (llama.h) ---- */

typedef struct {
    wgt_graph *graph;
    char token[64], pos[64], count[64]; /* its inputs' names: unique in the context */
} replay_graph;

struct llama_replay {
    llama_model *m;
    double temperature;
    uint64_t seed;
    int64_t top_k, span, ngraphs;
    replay_graph *graphs; /* graph i attends over span 2^i positions (at most the context), serves
                             the positions its predecessor does not, and is built when reached */
    wgt_tensor *positions; /* [context + 1] i32 0, 1, ...: a step binds the one at its position
                              and the next, the count of keys it sees */
};

llama_replay *llama_replay_create(llama_model *m, double temperature, int64_t top_k, uint64_t seed, int64_t span) {
    if (span < 1) {
        fprintf(stderr, "llama: a replayed step's span is %lld; it must be at least 1\n", (long long)span);
        return NULL;
    }
    llama_replay *r = calloc(1, sizeof *r);
    int64_t n = m->c.context + 1;
    int32_t *at = malloc(sizeof(int32_t) * (size_t)n);
    if (r)
        for (int64_t len = span; ++r->ngraphs, len < m->c.context;) len *= 2;
    if (!r || !at || !(r->graphs = calloc((size_t)r->ngraphs, sizeof *r->graphs))) {
        free(at);
        llama_replay_free(r);
        fprintf(stderr, "llama: out of host memory\n");
        return NULL;
    }
    for (int64_t i = 0; i < n; i++) at[i] = (int32_t)i;
    r->m = m, r->temperature = temperature, r->top_k = top_k, r->seed = seed, r->span = span;
    r->positions = wgt_tensor_from_data(m->ctx, WGT_I32, 1, &n, at, sizeof(int32_t) * (size_t)n, WGT_USAGE_DEFAULT);
    free(at);
    if (!r->positions) {
        llama_replay_free(r);
        return NULL;
    }
    return r;
}

static int greedy(const llama_replay *r) { return !(r->temperature > 0); }

/* The positions graph i attends over. */
static int64_t replay_length(const llama_replay *r, int64_t i) {
    int64_t len = r->span;
    while (i-- > 0 && len < r->m->c.context) len *= 2;
    return len < r->m->c.context ? len : r->m->c.context;
}

/* Records the step over placeholders and builds graph i: outputs "logits", and greedily
 * "next", the token. */
static int replay_build(llama_replay *r, int64_t i) {
    llama_model *m = r->m;
    replay_graph *rg = &r->graphs[i];
    int64_t one = 1, span = replay_length(r, i);
    snprintf(rg->token, sizeof rg->token, "llama_replay.%p.%lld.token", (void *)r, (long long)i);
    snprintf(rg->pos, sizeof rg->pos, "llama_replay.%p.%lld.pos", (void *)r, (long long)i);
    snprintf(rg->count, sizeof rg->count, "llama_replay.%p.%lld.count", (void *)r, (long long)i);
    wgt_tensor *tok = wgt_graph_input(m->ctx, rg->token, WGT_I32, 1, &one);
    wgt_tensor *pos = wgt_graph_input(m->ctx, rg->pos, WGT_I32, 1, &one);
    /* Keys at positions after the token's are not seen: count = pos + 1. */
    wgt_tensor *count = wgt_graph_input(m->ctx, rg->count, WGT_I32, 1, &one);
    replay_keys past = {count, span};
    wgt_tensor *logits = tok && pos && count ? layers(m, tok, pos, 0, &past, 0) : NULL;
    wgt_tensor *next = logits && greedy(r) ? llama_sample(logits, 0, 0, 0, 0) : NULL;
    wgt_binding outs[2] = {{"logits", logits}, {"next", next}};
    rg->graph = logits && (next || !greedy(r)) ? wgt_graph_build(m->ctx, greedy(r) ? 2 : 1, outs) : NULL;
    wgt_release(tok), wgt_release(pos), wgt_release(count);
    wgt_release(logits), wgt_release(next);
    return rg->graph ? 0 : -1;
}

wgt_tensor *llama_replay_step(llama_replay *r, wgt_tensor *token, int64_t pos, int64_t step, wgt_tensor *logits) {
    if (pos < 0 || pos >= r->m->c.context) {
        fprintf(stderr, "llama: position %lld is past the context of %lld\n", (long long)(pos + 1),
                (long long)r->m->c.context);
        return NULL;
    }
    int64_t i = 0;
    while (pos >= replay_length(r, i)) i++;
    replay_graph *rg = &r->graphs[i];
    if (!rg->graph && replay_build(r, i)) return NULL;
    int64_t one = 1;
    wgt_tensor *at = wgt_slice(r->positions, 0, pos, pos + 1, 1), *count = wgt_slice(r->positions, 0, pos + 1, pos + 2, 1);
    wgt_tensor *next = greedy(r) ? wgt_zeros(r->m->ctx, WGT_I32, 1, &one) : NULL;
    wgt_binding in[3] = {{rg->token, token}, {rg->pos, at}, {rg->count, count}};
    wgt_binding out[2] = {{"logits", logits}, {"next", next}};
    wgt_status st = at && count && (next || !greedy(r)) ? wgt_graph_dispatch(rg->graph, 3, in, greedy(r) ? 2 : 1, out)
                                                        : wgt_last_status();
    wgt_release(at), wgt_release(count);
    if (st == WGT_OK && !greedy(r)) next = llama_sample(logits, r->temperature, r->top_k, r->seed, step);
    if (st != WGT_OK) {
        wgt_release(next);
        return NULL;
    }
    return next;
}

void llama_replay_free(llama_replay *r) {
    if (!r) return;
    for (int64_t i = 0; r->graphs && i < r->ngraphs; i++) wgt_graph_release(r->graphs[i].graph);
    free(r->graphs);
    wgt_release(r->positions);
    free(r);
}

static wgt_tensor *host_ids(llama_model *m, const int32_t *tokens, int64_t n) {
    return wgt_tensor_from_data(m->ctx, WGT_I32, 1, &n, tokens, sizeof(int32_t) * (size_t)n, WGT_USAGE_DEFAULT);
}

wgt_tensor *llama_forward(llama_model *m, const int32_t *tokens, int64_t n, int64_t pos) {
    wgt_tensor *ids = host_ids(m, tokens, n);
    return then(forward(m, ids, pos, 0), ids);
}

wgt_tensor *llama_forward_ids(llama_model *m, wgt_tensor *ids, int64_t pos) { return forward(m, ids, pos, 0); }

double llama_loss(llama_model *m, const int32_t *tokens, int64_t n) {
    wgt_tensor *ids = n >= 2 ? host_ids(m, tokens, n) : NULL;
    wgt_tensor *logits = ids ? then(forward(m, ids, 0, 1), ids) : NULL;
    wgt_tensor *lp = logits ? wgt_log_softmax(logits, -1) : NULL;
    float *v = lp ? malloc(sizeof(float) * (size_t)(n * m->c.vocab)) : NULL;
    double loss = -1;
    if (v && wgt_tensor_read(lp, v, sizeof(float) * (size_t)(n * m->c.vocab)) == WGT_OK) {
        loss = 0;
        for (int64_t i = 0; i + 1 < n; i++) loss -= v[i * m->c.vocab + tokens[i + 1]];
        loss /= (double)(n - 1);
    }
    free(v);
    wgt_release(logits), wgt_release(lp);
    return loss;
}

double llama_weight_bytes(const llama_model *m) {
    /* A step reads every matrix once, the embedding only for its token's row. */
    double bytes = (double)wgt_tensor_nbytes(m->output) + (double)wgt_tensor_nbytes(m->out_norm);
    for (int64_t i = 0; i < m->c.layers; i++)
        for (int k = 0; k < 9; k++) bytes += (double)wgt_tensor_nbytes(*layer_slot(&m->layer[i], k));
    return bytes;
}

void llama_free(llama_model *m) {
    wgt_release(m->embed), wgt_release(m->out_norm), wgt_release(m->output);
    for (int64_t i = 0; m->layer && i < m->c.layers; i++) {
        for (int k = 0; k < 9; k++) wgt_release(*layer_slot(&m->layer[i], k));
        wgt_release(m->layer[i].wqkv), wgt_release(m->layer[i].gate_up);
        wgt_release(m->layer[i].k_cache), wgt_release(m->layer[i].v_cache);
    }
    for (int64_t i = 0; m->tokens && i < m->c.vocab; i++) free(m->tokens[i]);
    free(m->tokens);
    free(m->layer);
    memset(m, 0, sizeof *m);
}
