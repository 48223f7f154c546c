/*
 * `wgtensor train-lm`: trains the character-level transformer of tools/lm_model.c on real
 * English text (Debian's fortunes package: quotations, poems and definitions) for a bounded
 * time on the best device, then saves it, plots its loss curve and samples a paragraph.
 * The validation loss at the start is computed on the CPU backend beside the device's, from
 * the same seed, and the final one must fall well below the unigram baseline.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "lm_model.h"
#include "loss_png.h"
#include "wgtensor.h"

#define FORTUNES "/usr/share/games/fortunes/"
static const char *const default_texts[] = {FORTUNES "literature", FORTUNES "songs-poems", FORTUNES "wisdom",
                                             FORTUNES "people", FORTUNES "science", FORTUNES "definitions"};
enum { MAX_TEXTS = 16, MAX_STEPS = 1 << 20, VAL_BATCHES = 4 };

typedef struct {
    double seconds, lr;
    uint64_t seed;
    const char *out, *texts[MAX_TEXTS];
    int ntexts, sample_chars;
    int min_steps; /* train at least this many steps, however long they take */
    lm_config cfg; /* 0 fields: chosen by the device */
    int batch;
} options;

typedef struct {
    int32_t *ids;
    int64_t n;
    int vocab;
    unsigned char chars[256]; /* id -> byte */
} corpus;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int lm_fail(const char *what) {
    fprintf(stderr, "train-lm: %s: %s (%s)\n", what, wgt_last_error(), wgt_status_name(wgt_last_status()));
    return 1;
}

/* Reads the files one after another; fortune files separate entries with lines of "%",
 * which become blank lines so that the model sees prose only. */
static int load_corpus(const options *o, corpus *c) {
    size_t cap = 1 << 20, n = 0;
    unsigned char *buf = malloc(cap);
    if (!buf) return 0;
    for (int i = 0; i < o->ntexts; i++) {
        FILE *f = fopen(o->texts[i], "rb");
        if (!f) {
            fprintf(stderr, "train-lm: cannot open %s (install the fortunes package: scripts/setup.sh)\n", o->texts[i]);
            free(buf);
            return 0;
        }
        char line[4096];
        while (fgets(line, sizeof line, f)) {
            size_t len = strcmp(line, "%\n") ? strlen(line) : 1;
            if (len == 1 && line[0] == '%') line[0] = '\n';
            if (n + len > cap) {
                unsigned char *grown = realloc(buf, cap *= 2);
                if (!grown) {
                    fclose(f);
                    free(buf);
                    return 0;
                }
                buf = grown;
            }
            memcpy(buf + n, line, len);
            n += len;
        }
        fclose(f);
    }
    int map[256] = {0};
    for (size_t i = 0; i < n; i++) map[buf[i]] = 1;
    c->vocab = 0;
    for (int ch = 0; ch < 256; ch++)
        if (map[ch]) c->chars[c->vocab] = (unsigned char)ch, map[ch] = c->vocab++;
    c->ids = malloc(sizeof *c->ids * (n ? n : 1));
    for (size_t i = 0; c->ids && i < n; i++) c->ids[i] = map[buf[i]];
    c->n = (int64_t)n;
    free(buf);
    return c->ids != NULL;
}

/* Cross-entropy of the validation text under the training text's character frequencies
 * (add-one smoothed): what a model that ignores context can reach. */
static double unigram_loss(const corpus *c, int64_t split) {
    double count[256] = {0}, total = split + c->vocab, loss = 0;
    for (int64_t i = 0; i < split; i++) count[c->ids[i]]++;
    for (int64_t i = split; i < c->n; i++) loss -= log((count[c->ids[i]] + 1) / total);
    return loss / (double)(c->n - split);
}

/* The mean loss over VAL_BATCHES fixed batches of the validation text, without gradients. */
static double val_loss(lm_model *m, const int32_t *val, int64_t n, int batch) {
    int len = m->cfg.context;
    int32_t *tok = malloc(sizeof *tok * (size_t)batch * len), *tgt = malloc(sizeof *tgt * (size_t)batch * len);
    uint64_t rng = 12345;
    double sum = 0;
    wgt_no_grad_begin();
    for (int b = 0; b < VAL_BATCHES && tok && tgt; b++) {
        lm_batch(val, n, &rng, batch, len, tok, tgt);
        wgt_tensor *l = lm_loss(m, tok, tgt, batch, len);
        float v = NAN;
        if (!l || wgt_tensor_read(l, &v, sizeof v) != WGT_OK) v = NAN;
        wgt_release(l);
        sum += v;
    }
    wgt_no_grad_end();
    free(tok);
    free(tgt);
    return tok && tgt ? sum / VAL_BATCHES : NAN;
}

/* Samples chars characters after prompt at temperature 0.8. */
static int sample(lm_model *m, const corpus *c, const char *prompt, int chars, uint64_t seed) {
    int T = m->cfg.context, n = 0, V = c->vocab;
    int32_t *ids = malloc(sizeof *ids * (size_t)(chars + 64));
    float *row = malloc(sizeof *row * (size_t)V);
    if (!ids || !row) return 0;
    for (const char *p = prompt; *p && n < 64; p++)
        for (int k = 0; k < V; k++)
            if (c->chars[k] == (unsigned char)*p) ids[n++] = k;
    fputs(prompt, stdout);
    int ok = 1;
    wgt_no_grad_begin();
    for (int i = 0; i < chars && ok; i++) {
        int t = n < T ? n : T;
        wgt_tensor *tok = wgt_tensor_from_data(m->ctx, WGT_I32, 2, (int64_t[]){1, t}, ids + n - t,
                                               sizeof *ids * (size_t)t, WGT_USAGE_DEFAULT);
        wgt_tensor *logits = lm_logits(m, tok);
        wgt_tensor *last = logits ? wgt_slice(logits, 1, t - 1, t, 1) : NULL;
        ok = last && wgt_tensor_read(last, row, sizeof *row * (size_t)V) == WGT_OK;
        wgt_release(tok), wgt_release(logits), wgt_release(last);
        double mx = -INFINITY, z = 0, u = ((double)(lm_rand(&seed) >> 11) + 0.5) / 9007199254740992.0;
        for (int k = 0; ok && k < V; k++) mx = fmax(mx, row[k]);
        for (int k = 0; ok && k < V; k++) z += exp((row[k] - mx) / 0.8);
        int pick = V - 1;
        for (int k = 0; ok && k < V; k++)
            if ((u -= exp((row[k] - mx) / 0.8) / z) <= 0) {
                pick = k;
                break;
            }
        ids[n++] = pick;
        if (ok) putchar(c->chars[pick]);
    }
    wgt_no_grad_end();
    putchar('\n');
    free(ids);
    free(row);
    return ok;
}

static int parse(int argc, char **argv, options *o) {
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int *field = !strcmp(a, "--layers") ? &o->cfg.layers
                     : !strcmp(a, "--width") ? &o->cfg.width
                     : !strcmp(a, "--heads") ? &o->cfg.heads
                     : !strcmp(a, "--context") ? &o->cfg.context
                     : !strcmp(a, "--batch") ? &o->batch
                     : !strcmp(a, "--sample") ? &o->sample_chars
                     : !strcmp(a, "--min-steps") ? &o->min_steps
                                              : NULL;
        if (!strcmp(a, "--help") || !v) {
            fprintf(stderr, "usage: wgtensor train-lm [--seconds S (180)] [--text FILE]... [--out DIR (build/train-lm)]\n"
                            "       [--seed N] [--lr X] [--layers N] [--width N] [--heads N] [--context N] [--batch N]\n"
                            "       [--sample CHARS] [--min-steps N]\n"
                            "  the configuration defaults to 2 layers of width 64 (context 64) on a CPU or software\n"
                            "  device and 4 layers of width 256 (context 128) on a GPU; the text to Debian's fortunes.\n"
                            "  Training ends after S seconds and at least N steps (the schedule follows the\n"
                            "  slower of the two), so a slow or busy machine trains as far as a quick one\n");
            return 0;
        }
        i++;
        if (field) *field = atoi(v);
        else if (!strcmp(a, "--seconds")) o->seconds = atof(v);
        else if (!strcmp(a, "--lr")) o->lr = atof(v);
        else if (!strcmp(a, "--seed")) o->seed = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--out")) o->out = v;
        else if (!strcmp(a, "--text") && o->ntexts < MAX_TEXTS) o->texts[o->ntexts++] = v;
        else {
            fprintf(stderr, "train-lm: unknown option %s (--help)\n", a);
            return 0;
        }
    }
    return o->seconds > 0;
}

/* A software device (the CPU backend, lavapipe, SwiftShader) gets the small model. */
static int is_software(wgt_context *ctx) {
    const char *name = wgt_context_device_name(ctx);
    return wgt_context_backend(ctx) == WGT_BACKEND_CPU || strstr(name, "llvmpipe") || strstr(name, "lavapipe") ||
           strstr(name, "SwiftShader");
}

/* Seconds per training step of the configuration on ctx: the median of three steps after
 * one that compiles the kernels. */
static double step_seconds(wgt_context *ctx, const options *o, const corpus *c) {
    lm_model m;
    if (lm_init(&m, ctx, &o->cfg, o->seed) != WGT_OK) return INFINITY;
    wgt_optimizer *opt = lm_optimizer(&m, o->lr);
    int B = o->batch, T = o->cfg.context;
    int32_t *tok = malloc(sizeof *tok * (size_t)B * T), *tgt = malloc(sizeof *tgt * (size_t)B * T);
    double t[4] = {INFINITY, INFINITY, INFINITY, INFINITY}, loss;
    uint64_t rng = 1;
    for (int i = 0; i < 4 && opt && tok && tgt; i++) {
        lm_batch(c->ids, c->n, &rng, B, T, tok, tgt);
        double t0 = now_s();
        if (lm_train_step(&m, opt, tok, tgt, B, T, 0, &loss) != WGT_OK) break;
        t[i] = now_s() - t0;
    }
    free(tok);
    free(tgt);
    wgt_optimizer_release(opt);
    lm_free(&m);
    double a = t[1], b = t[2], d = t[3]; /* the median of the last three */
    return a > b ? (b > d ? b : (a > d ? d : a)) : (a > d ? a : (b > d ? d : b));
}

typedef struct {
    double *train;
    int steps, val_step[64], nval;
    double val[64];
} history;

static int run(const options *o, const corpus *c, wgt_context *dev, wgt_context *gpu, wgt_context *cpu, history *h);

int wgt_train_lm_main(int argc, char **argv) {
    options o = {.seconds = 180, .lr = 3e-3, .seed = 1, .out = "build/train-lm", .sample_chars = 400};
    if (!parse(argc, argv, &o)) return 2;
    if (!o.ntexts)
        for (size_t i = 0; i < sizeof default_texts / sizeof *default_texts; i++) o.texts[o.ntexts++] = default_texts[i];
    corpus c = {0};
    if (!load_corpus(&o, &c)) return 1;
    printf("train-lm: %lld characters of text (%s and %d more), vocabulary %d; the last tenth for validation\n",
           (long long)c.n, o.texts[0], o.ntexts - 1, c.vocab);
    wgt_context *dev = wgt_context_create(NULL);
    if (!dev) return lm_fail("creating a context");
    wgt_context *cpu = wgt_context_create(&(wgt_context_options){.backend = WGT_BACKEND_CPU});
    if (!cpu) return lm_fail("creating the CPU context");
    int small = is_software(dev);
    lm_config d = small ? (lm_config){0, 2, 64, 4, 64} : (lm_config){0, 4, 256, 8, 128};
    o.cfg.vocab = c.vocab;
    if (!o.cfg.layers) o.cfg.layers = d.layers;
    if (!o.cfg.width) o.cfg.width = d.width;
    if (!o.cfg.heads) o.cfg.heads = d.heads;
    if (!o.cfg.context) o.cfg.context = d.context;
    if (!o.batch) o.batch = small ? 16 : 64;
    /* The best device: the adapter the library picks, unless it is a software rasterizer
     * (lavapipe on a CPU-only machine), which can be slower than the CPU backend: then the
     * faster of the two by a measured training step. */
    wgt_context *train_on = dev;
    if (small && wgt_context_backend(dev) == WGT_BACKEND_WEBGPU) {
        double s_dev = step_seconds(dev, &o, &c), s_cpu = step_seconds(cpu, &o, &c);
        printf("%s is a software device: a training step takes %.1f ms there and %.1f ms on the CPU backend; "
               "training on the %s\n",
               wgt_context_device_name(dev), s_dev * 1e3, s_cpu * 1e3, s_cpu < s_dev ? "CPU backend" : "device");
        if (s_cpu < s_dev) train_on = cpu;
    }
    history h = {.train = malloc(sizeof(double) * MAX_STEPS)};
    int rc = h.train ? run(&o, &c, train_on, dev, cpu, &h) : 1;
    free(h.train);
    free(c.ids);
    wgt_context_release(cpu);
    wgt_context_release(dev);
    return rc;
}

/* Trains on dev; the starting validation loss is also computed on gpu (the adapter's
 * device, which may be dev) and on the CPU backend, from the same seed. */
static int run(const options *o, const corpus *c, wgt_context *dev, wgt_context *gpu, wgt_context *cpu, history *h) {
    const lm_config *cfg = &o->cfg;
    const int B = o->batch, T = cfg->context;
    const int64_t split = c->n * 9 / 10;
    const int32_t *val = c->ids + split;
    printf("training on: %s (backend %s)\n", wgt_context_device_name(dev),
           wgt_context_backend(dev) == WGT_BACKEND_WEBGPU ? "webgpu" : "cpu");
    lm_model m, ref;
    if (lm_init(&m, dev, cfg, o->seed) != WGT_OK) return lm_fail("creating the model");
    int64_t nparam = 0;
    for (int i = 0; i < m.nparams; i++) nparam += wgt_tensor_numel(m.params[i]);
    printf("model: %d layers, width %d, %d heads, context %d, %lld parameters; batch %d, AdamW lr %g, %.0f s\n",
           cfg->layers, cfg->width, cfg->heads, T, (long long)nparam, B, o->lr, o->seconds);
    const double unigram = unigram_loss(c, split);
    const double v0 = val_loss(&m, val, c->n - split, B);
    double v0_gpu = v0, v0_cpu = v0;
    wgt_context *other = dev == cpu ? gpu : cpu; /* the backend not trained on, if there are two */
    if (other != dev && lm_init(&ref, other, cfg, o->seed) == WGT_OK) {
        *(other == cpu ? &v0_cpu : &v0_gpu) = val_loss(&ref, val, c->n - split, B);
        lm_free(&ref);
    }
    printf("validation loss at the start: %.6f on %s, %.6f on the CPU backend (difference %.2g); "
           "uniform ln(%d) = %.4f, unigram baseline %.4f\n",
           v0_gpu, wgt_context_device_name(gpu), v0_cpu, fabs(v0_gpu - v0_cpu), c->vocab, log(c->vocab), unigram);
    h->val_step[0] = 0, h->val[0] = v0, h->nval = 1;

    wgt_optimizer *opt = lm_optimizer(&m, o->lr);
    int32_t *tok = malloc(sizeof *tok * (size_t)B * T), *tgt = malloc(sizeof *tgt * (size_t)B * T);
    if (!opt || !tok || !tgt) return lm_fail("creating the optimizer");
    uint64_t rng = o->seed * 7919 + 1;
    const double t0 = now_s();
    double last_print = t0, next_val = o->seconds / 8, elapsed = 0;
    int ok = 1;
    /* The schedule runs on the fraction done: of the time, or of the step floor where that is
     * behind (a slow machine): warmup over the first 3%, then a cosine down to a tenth of the
     * peak at the end. */
    for (;;) {
        elapsed = now_s() - t0;
        double done = elapsed / o->seconds;
        if (o->min_steps > 0) done = fmin(done, (double)h->steps / o->min_steps);
        if (!ok || done >= 1 || h->steps >= MAX_STEPS) break;
        int64_t at = (int64_t)(10000 * done);
        double lr = wgt_lr_warmup_cosine(at, 300, 10000, o->lr, o->lr / 10);
        lm_batch(c->ids, split, &rng, B, T, tok, tgt);
        ok = lm_train_step(&m, opt, tok, tgt, B, T, lr, &h->train[h->steps]) == WGT_OK &&
             isfinite(h->train[h->steps]);
        h->steps++;
        double now = now_s();
        if (ok && now - t0 >= next_val && h->nval < 63) {
            h->val_step[h->nval] = h->steps - 1, h->val[h->nval++] = val_loss(&m, val, c->n - split, B);
            next_val += o->seconds / 8;
        }
        if (ok && (now - last_print >= 5 || h->steps == 1)) {
            /* Time left: the clock's, or the step floor's at the pace so far, whichever is longer. */
            double left = fmax(0, o->seconds - (now - t0));
            if (o->min_steps > h->steps) left = fmax(left, (o->min_steps - h->steps) * (now - t0) / h->steps);
            printf("step %5d  loss %.4f  val %.4f  lr %.2e  %7.0f tokens/s  %4.0f s left\n", h->steps,
                   h->train[h->steps - 1], h->val[h->nval - 1], lr, (double)h->steps * B * T / (now - t0), left);
            fflush(stdout);
            last_print = now;
        }
    }
    free(tok);
    free(tgt);
    if (!ok) {
        wgt_optimizer_release(opt);
        lm_free(&m);
        return lm_fail("training");
    }
    double final = val_loss(&m, val, c->n - split, B);
    h->val_step[h->nval] = h->steps - 1, h->val[h->nval++] = final;
    printf("trained %d steps (%lld tokens) in %.1f s: %.0f tokens/s\n", h->steps, (long long)h->steps * B * T, elapsed,
           (double)h->steps * B * T / elapsed);
    int good = final < unigram - 0.5; /* "well below": at least half a nat under the baseline */
    printf("final validation loss %.4f; unigram baseline %.4f; start %.4f: %s\n", final, unigram, v0,
           good ? "well below the unigram baseline" : "NOT well below the unigram baseline");

    mkdir(o->out, 0777);
    char path[1024];
    snprintf(path, sizeof path, "%s/loss.png", o->out);
    double top = fmax(h->train[0], unigram) * 1.1;
    if (loss_png_write(path, h->train, h->steps, h->val_step, h->val, h->nval, unigram, top))
        printf("loss curve: %s (training loss blue, validation red, unigram baseline gray; y from 0 to %.2f)\n", path,
               top);
    else
        fprintf(stderr, "train-lm: could not write %s\n", path), good = 0;
    snprintf(path, sizeof path, "%s/model.safetensors", o->out);
    const char *names[LM_MAX_PARAMS];
    for (int i = 0; i < m.nparams; i++) names[i] = m.names[i];
    if (wgt_save_safetensors(path, m.nparams, names, m.params) == WGT_OK) printf("model: %s\n", path);
    else good = !lm_fail("saving the model");
    printf("sample (temperature 0.8):\n");
    if (!sample(&m, c, "The ", o->sample_chars, o->seed)) good = !lm_fail("sampling");
    printf("result: %s\n", good ? "PASS" : "FAIL");
    wgt_optimizer_release(opt);
    lm_free(&m);
    return good ? 0 : 1;
}
