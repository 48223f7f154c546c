/*
 * The Llama tool's GGUF files (tools/llama.c) hold attn_q and attn_k as llama.cpp's converter
 * writes them: rows permuted so that ggml's interleaved rotation (adjacent pairs 2i, 2i + 1
 * turned by pos base^(-2i/hd)) gives the attention scores that wgtensor's rotate-half
 * rotation (pairs i, i + hd/2) gives with the model's own rows. Checked from first
 * principles in float64 on the file's bytes, and a save/load round trip gives the same
 * logits.
 */
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "test.h"
#include "../tools/llama.c"

/* Rows [rows, dim] times x, then each head of hd rotated at position pos: interleaved pairs
 * (ggml's layout) or rotate-half pairs (wgtensor's). */
static void rotated(const double *w, int64_t rows, int64_t dim, const double *x, int64_t hd, double pos, double base,
                    int interleaved, double *out) {
    for (int64_t r = 0; r < rows; r++) {
        out[r] = 0;
        for (int64_t c = 0; c < dim; c++) out[r] += w[r * dim + c] * x[c];
    }
    for (int64_t h = 0; h < rows / hd; h++)
        for (int64_t i = 0; i < hd / 2; i++) {
            double th = pos * pow(base, -2.0 * (double)i / (double)hd);
            int64_t a = h * hd + (interleaved ? 2 * i : i), b = h * hd + (interleaved ? 2 * i + 1 : i + hd / 2);
            double u = out[a], v = out[b];
            out[a] = u * cos(th) - v * sin(th);
            out[b] = u * sin(th) + v * cos(th);
        }
}

static void fused_round_trip(wgt_context *ctx);

/* (and the fused matrices' round trip, fused_round_trip) */
TEST_BACKENDS(llama_file_rows_follow_ggml_interleaved_rotation) {
    llama_config c = {32, 1, 4, 2, 24, 19, 8, 10000, 1e-5}; /* head size 8, two query heads per key head */
    int64_t hd = c.dim / c.heads, kvd = c.kv_heads * hd;
    llama_model m, back;
    char path[96];
    snprintf(path, sizeof path, "/tmp/wgt_test_llama_%d_%s.gguf", (int)getpid(), test_backend_name());
    CHECK(llama_random(&m, ctx, &c, WGT_F32, 11) == 0, "llama_random: %s", wgt_last_error());
    CHECK(llama_save(&m, path) == 0, "llama_save %s: %s", path, wgt_last_error());
    wgt_gguf *g = wgt_gguf_open(path);
    CHECK(g != NULL, "wgt_gguf_open: %s", wgt_last_error());
    wgt_tensor *fq = g ? wgt_gguf_load(g, ctx, "blk.0.attn_q.weight", WGT_USAGE_DEFAULT) : NULL;
    wgt_tensor *fk = g ? wgt_gguf_load(g, ctx, "blk.0.attn_k.weight", WGT_USAGE_DEFAULT) : NULL;
    double *wq = test_read_f64(m.layer[0].wq), *wk = test_read_f64(m.layer[0].wk);
    double *file_q = fq ? test_read_f64(fq) : NULL, *file_k = fk ? test_read_f64(fk) : NULL;
    CHECK(wq && wk && file_q && file_k, "reading the weights: %s", wgt_last_error());
    if (wq && wk && file_q && file_k) {
        double x[32], q[32], k[16], q_file[32], k_file[16];
        for (int i = 0; i < 32; i++) x[i] = sin(1.7 * i + 0.3);
        for (double pos = 0; pos < 40; pos += 13) {
            rotated(wq, c.dim, c.dim, x, hd, pos, c.rope_base, 0, q);
            rotated(wk, kvd, c.dim, x, hd, pos + 2, c.rope_base, 0, k);
            rotated(file_q, c.dim, c.dim, x, hd, pos, c.rope_base, 1, q_file);
            rotated(file_k, kvd, c.dim, x, hd, pos + 2, c.rope_base, 1, k_file);
            for (int64_t h = 0; h < c.heads; h++) {
                int64_t kh = h / (c.heads / c.kv_heads);
                double s = 0, s_file = 0, mag = 0;
                for (int64_t e = 0; e < hd; e++) {
                    s += q[h * hd + e] * k[kh * hd + e];
                    s_file += q_file[h * hd + e] * k_file[kh * hd + e];
                    mag += fabs(q[h * hd + e] * k[kh * hd + e]);
                }
                CHECK(fabs(s - s_file) <= 1e-12 * mag + 1e-300, "position %g head %lld: score %.17g from the file's rows "
                      "with interleaved rotation, %.17g with the model's rows and rotate-half", pos, (long long)h,
                      s_file, s);
            }
        }
    }
    free(wq), free(wk), free(file_q), free(file_k);
    wgt_release(fq), wgt_release(fk);
    wgt_gguf_close(g);

    /* Loading undoes the permutation: the same logits as the model saved. */
    CHECK(llama_load(&back, ctx, path) == 0, "llama_load %s: %s", path, wgt_last_error());
    remove(path);
    int32_t tokens[5] = {3, 1, 4, 1, 5};
    wgt_tensor *a = llama_forward(&m, tokens, 5, 0), *b = llama_forward(&back, tokens, 5, 0);
    double *la = a ? test_read_f64(a) : NULL, *lb = b ? test_read_f64(b) : NULL;
    CHECK(la && lb, "llama_forward: %s", wgt_last_error());
    for (int64_t i = 0; la && lb && i < c.vocab; i++)
        CHECK(fabs(la[i] - lb[i]) <= 1e-6 * (1 + fabs(la[i])), "logit %lld: %.9g after the round trip, %.9g before",
              (long long)i, lb[i], la[i]);
    free(la), free(lb);
    wgt_release(a), wgt_release(b);
    llama_free(&m);
    llama_free(&back);
    fused_round_trip(ctx);
}

/* A layer's q|k|v and gate|up run as one matrix each (wqkv, gate_up), the file's tensors
 * row views of them: a quantized model saved under llama.cpp's names (each view written as
 * its own tensor) and loaded back (joined again) holds the same bytes in every matrix and
 * gives the same logits. A file whose q, k and v differ in type keeps them apart, and the
 * forward pass joins their products instead: the same logits again. */
static void fused_round_trip(wgt_context *ctx) {
    llama_config c = {64, 2, 4, 2, 96, 37, 16, 10000, 1e-5};
    const wgt_dtype types[2] = {WGT_Q8_0, WGT_Q4_0};
    for (int ti = 0; ti < 2; ti++) {
        llama_model m, back;
        char path[96];
        snprintf(path, sizeof path, "/tmp/wgt_test_llama_fused_%d_%s.gguf", (int)getpid(), test_backend_name());
        CHECK(llama_random(&m, ctx, &c, WGT_F32, 5) == 0 && llama_quantize(&m, types[ti]) == 0, "%s",
              wgt_last_error());
        llama_layer *l = &m.layer[1];
        CHECK(l->wqkv && l->gate_up && wgt_tensor_dtype(l->wqkv) == types[ti] &&
                  wgt_tensor_shape(l->wqkv)[0] == c.dim + 2 * (c.kv_heads * (c.dim / c.heads)) &&
                  wgt_tensor_shape(l->gate_up)[0] == 2 * c.hidden,
              "%s: the layer's fused matrices are missing or misshapen", wgt_dtype_name(types[ti]));
        CHECK(llama_save(&m, path) == 0 && llama_load(&back, ctx, path) == 0, "%s: %s", path, wgt_last_error());
        remove(path);
        for (int64_t i = 0; i < c.layers && back.layer; i++) {
            wgt_tensor *mats[2][2] = {{m.layer[i].wqkv, back.layer[i].wqkv}, {m.layer[i].gate_up, back.layer[i].gate_up}};
            for (int k = 0; k < 2; k++) {
                size_t n = wgt_tensor_nbytes(mats[k][0]);
                char *a = malloc(n), *b = malloc(n);
                CHECK(mats[k][1] && wgt_tensor_nbytes(mats[k][1]) == n && wgt_tensor_read(mats[k][0], a, n) == WGT_OK &&
                          wgt_tensor_read(mats[k][1], b, n) == WGT_OK && memcmp(a, b, n) == 0,
                      "%s layer %lld: %s differs after the round trip", wgt_dtype_name(types[ti]), (long long)i,
                      k ? "gate_up" : "wqkv");
                free(a), free(b);
            }
        }
        int32_t tokens[4] = {3, 1, 4, 1};
        float la[37], lb[37];
        wgt_tensor *a = llama_forward(&m, tokens, 4, 0), *b = llama_forward(&back, tokens, 4, 0);
        CHECK(a && b && wgt_tensor_read(a, la, sizeof la) == WGT_OK && wgt_tensor_read(b, lb, sizeof lb) == WGT_OK &&
                  memcmp(la, lb, sizeof la) == 0,
              "%s: logits differ after the round trip", wgt_dtype_name(types[ti]));
        wgt_release(a), wgt_release(b);
        llama_free(&back);
        if (ti == 1) {
            /* wv back in f32 (its q4_0 rows dequantized): q, k and v apart; the same logits
             * as the model with those rows. */
            llama_layer *l0 = &m.layer[0];
            wgt_tensor *v = wgt_dequantize(l0->wv, WGT_F32);
            CHECK(v != NULL, "%s", wgt_last_error());
            wgt_tensor *fused = l0->wqkv;
            int64_t kvd = c.kv_heads * (c.dim / c.heads);
            wgt_tensor *wq = wgt_slice(fused, 0, 0, c.dim, 1), *wk = wgt_slice(fused, 0, c.dim, c.dim + kvd, 1);
            float want[37], got[37];
            wgt_tensor *x = llama_forward(&m, tokens, 4, 0);
            CHECK(x && wgt_tensor_read(x, want, sizeof want) == WGT_OK, "%s", wgt_last_error());
            wgt_release(x);
            wgt_release(l0->wq), wgt_release(l0->wk), wgt_release(l0->wv);
            l0->wq = wq, l0->wk = wk, l0->wv = v, l0->wqkv = NULL;
            CHECK(fuse_layers(&m) == 0 && !l0->wqkv, "a layer of mixed types was fused");
            x = llama_forward(&m, tokens, 4, 0);
            CHECK(x && wgt_tensor_read(x, got, sizeof got) == WGT_OK, "%s", wgt_last_error());
            for (int i = 0; i < 37; i++)
                CHECK(fabs((double)got[i] - want[i]) <= 1e-5 * (1 + fabs(want[i])), "logit %d: %.9g apart, %.9g fused", i,
                      got[i], want[i]);
            wgt_release(x);
            wgt_release(fused);
        }
        llama_free(&m);
    }
}
