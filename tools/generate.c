/*
 * `wgtensor generate`: text generation with the Llama-shaped decoder of tools/llama.c, from a
 * GGUF file or random weights of given sizes, optionally quantized to q8_0 or q4_0, sampling
 * with temperature and top-k and printing each token as it comes, then the tokens per second
 * of the prompt and of the generated tokens. Without a vocabulary in the file, tokens are
 * bytes: the prompt's bytes go in, and tokens below 256 print as bytes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gen_options.h"
#include "llama.h"

static double gen_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct {
    const llama_model *m;
    int64_t made;
} printer;

static void print_token(void *arg, int32_t id) {
    printer *p = arg;
    const llama_model *m = p->m;
    p->made++;
    if (m->tokens) {
        for (const char *s = m->tokens[id]; *s; s++) {
            if (!strncmp(s, "\xe2\x96\x81", 3)) { /* SentencePiece's word mark */
                putchar(' ');
                s += 2;
            } else {
                putchar(*s);
            }
        }
    } else if (id < 127 && (id >= 32 || id == '\n')) { /* printable ASCII; other bytes as numbers */
        putchar(id);
    } else {
        printf("<%d>", id);
    }
    fflush(stdout);
}

/* The first `max` bytes of path as tokens (each byte modulo the vocabulary); *n of them. */
static int32_t *file_tokens(const char *path, int64_t max, int64_t vocab, int64_t *n) {
    FILE *f = fopen(path, "rb");
    int32_t *t = f ? malloc(sizeof(int32_t) * (size_t)max) : NULL;
    *n = 0;
    for (int c; t && *n < max && (c = fgetc(f)) != EOF;) t[(*n)++] = (int32_t)(c % vocab);
    if (f) fclose(f);
    if (!t) fprintf(stderr, "generate: cannot read %s\n", path);
    return t;
}

/* Prints the model's loss on the eval tokens under label; *loss receives it (-1 on failure). */
static void eval_loss(llama_model *m, const int32_t *t, int64_t n, const char *label, double *loss) {
    *loss = llama_loss(m, t, n);
    if (*loss >= 0) fprintf(stderr, "validation loss, %s weights: %.4f nats per token (%lld tokens)\n", label, *loss,
                            (long long)n);
}

int wgt_generate_main(int argc, char **argv) {
    gen_options o;
    if (gen_parse(argc, argv, &o, 1)) return 2;
    wgt_context_options co = {0};
    co.backend = o.backend;
    wgt_context *ctx = wgt_context_create(&co);
    if (!ctx) {
        fprintf(stderr, "generate: %s\n", wgt_last_error());
        return 1;
    }
    llama_model m;
    double t0 = gen_seconds();
    int rc = o.model ? llama_load(&m, ctx, o.model) : llama_random(&m, ctx, &o.config, o.weights, o.seed);
    int64_t neval = 0;
    int32_t *eval = !rc && o.eval ? file_tokens(o.eval, m.c.context, m.c.vocab, &neval) : NULL;
    double before = -1, after = -1;
    if (eval) eval_loss(&m, eval, neval, wgt_dtype_name(wgt_tensor_dtype(m.layer[0].wq)), &before);
    if (!rc && o.quantize) rc = llama_quantize(&m, o.quantize);
    if (eval && !rc && o.quantize) {
        eval_loss(&m, eval, neval, wgt_dtype_name(o.quantize), &after);
        if (before > 0 && after >= 0)
            fprintf(stderr, "quantized loss: %+.2f%% of the unquantized model's\n", (after / before - 1) * 100);
    }
    free(eval);
    if (!rc && o.save) rc = llama_save(&m, o.save);
    if (rc) {
        fprintf(stderr, "generate: the model: %s\n", wgt_last_error());
        llama_free(&m);
        wgt_context_release(ctx);
        return 1;
    }
    fprintf(stderr, "model: %lld layers, width %lld, %lld heads (%lld for keys), MLP %lld, vocabulary %lld, %s%s; "
                    "%.1f MB of weights read per token; ready in %.2f s on %s\n",
            (long long)m.c.layers, (long long)m.c.dim, (long long)m.c.heads, (long long)m.c.kv_heads,
            (long long)m.c.hidden, (long long)m.c.vocab, wgt_dtype_name(wgt_tensor_dtype(m.layer[0].wq)), " weights",
            llama_weight_bytes(&m) / 1e6, gen_seconds() - t0,
            wgt_context_device_name(ctx));
    size_t plen = strlen(o.prompt);
    int64_t n = plen ? (int64_t)plen : 1;
    int32_t *prompt = malloc(sizeof(int32_t) * (size_t)n);
    rc = !prompt;
    for (int64_t i = 0; i < n && !rc; i++) prompt[i] = plen ? (int32_t)((unsigned char)o.prompt[i] % m.c.vocab) : 0;
    if (plen) fputs(o.prompt, stdout);
    double t1 = gen_seconds(), prefill_s = 0, decode_s = 0;
    wgt_tensor *l = rc ? NULL : llama_forward(&m, prompt, n, 0);
    /* One wait, for the prompt's time alone; the tokens after it never wait on the device. */
    rc = !l || wgt_eval(1, &l) != WGT_OK || wgt_context_sync(ctx) != WGT_OK;
    prefill_s = gen_seconds() - t1;
    int64_t count = o.tokens < m.c.context - n ? o.tokens : m.c.context - n;
    printer pr = {&m, 0};
    double t2 = gen_seconds();
    if (!rc && count > 0)
        rc = llama_generate(&m, l, n, count, o.temperature, o.top_k, o.sample_seed, print_token, &pr, NULL) != 0;
    wgt_release(l);
    int64_t made = pr.made;
    decode_s = gen_seconds() - t2;
    printf("\n");
    fflush(stdout);
    if (rc) fprintf(stderr, "generate: %s\n", wgt_last_error());
    else
        fprintf(stderr, "prompt: %lld tokens in %.1f ms (%.1f tokens/s); generated %lld tokens in %.1f ms (%.1f tokens/s)\n",
                (long long)n, prefill_s * 1e3, (double)n / prefill_s, (long long)made, decode_s * 1e3,
                made > 1 ? (double)(made - 1) / decode_s : 0.0);
    free(prompt);
    llama_free(&m);
    wgt_context_release(ctx);
    return rc ? 1 : 0;
}
