/*
 * The main job: train a two-layer perceptron on the handwritten digits that Debian's
 * python3-sklearn ships (1797 8x8 images, 10 classes), with the forward and backward
 * passes written in the library's ops, on the best device and on the CPU backend beside
 * it, and report the loss and time per epoch and the accuracy on a held-out split.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wgtensor.h"

#define DIGITS_PATH "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"
#define FEATURES 64
#define CLASSES 10
#define HIDDEN 128
#define EPOCHS 30
#define BATCH 32
#define LEARNING_RATE 0.2
#define MAX_SAMPLES 2000

typedef struct {
    int n_train, n_test;
    float x[MAX_SAMPLES][FEATURES]; /* pixels scaled to [0, 1], shuffled once */
    int32_t y[MAX_SAMPLES];
} digits;

typedef struct {
    double loss[EPOCHS], ms[EPOCHS], accuracy;
    int ok;
} run_result;

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* Fixed-seed generator for the split and the batch order, so every backend sees the same. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t next_random(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 32);
}

/* The data's path: WGT_DIGITS overrides Debian's location (other systems, other copies). */
static const char *digits_path(void) {
    const char *env = getenv("WGT_DIGITS");
    return env && *env ? env : DIGITS_PATH;
}

static int load_digits(digits *d) {
    char cmd[1200];
    if (strchr(digits_path(), '\'')) return 0; /* the path goes inside single quotes below */
    snprintf(cmd, sizeof cmd, "gzip -dc '%s' 2>/dev/null", digits_path());
    FILE *f = popen(cmd, "r");
    if (!f) return 0;
    int n = 0;
    while (n < MAX_SAMPLES) {
        int v, k;
        for (k = 0; k <= FEATURES; k++) {
            if (fscanf(f, "%d%*[,\n]", &v) != 1) break;
            if (k < FEATURES) d->x[n][k] = (float)v / 16.0f;
            else d->y[n] = v;
        }
        if (k <= FEATURES) break;
        n++;
    }
    pclose(f);
    if (n < 100) return 0;
    for (int i = n - 1; i > 0; i--) { /* one shuffle, then a fixed 80/20 split */
        int j = (int)(next_random() % (uint32_t)(i + 1));
        float tx[FEATURES];
        memcpy(tx, d->x[i], sizeof tx);
        memcpy(d->x[i], d->x[j], sizeof tx);
        memcpy(d->x[j], tx, sizeof tx);
        int32_t ty = d->y[i];
        d->y[i] = d->y[j];
        d->y[j] = ty;
    }
    d->n_test = n / 5;
    d->n_train = n - d->n_test;
    return 1;
}

/* Releases a list of tensors (NULL entries are fine). */
static void drop(wgt_tensor **ts, int n) {
    for (int i = 0; i < n; i++) {
        wgt_release(ts[i]);
        ts[i] = NULL;
    }
}

/* w -= lr * grad, replacing *w. */
static int sgd_step(wgt_tensor **w, wgt_tensor *grad) {
    wgt_tensor *scaled = wgt_mul_scalar(grad, LEARNING_RATE), *next = wgt_sub(*w, scaled);
    wgt_release(scaled);
    if (!next) return 0;
    wgt_release(*w);
    *w = next;
    return 1;
}

static wgt_tensor *upload_f32(wgt_context *ctx, int rows, int cols, const float *data) {
    int64_t shape[2] = {rows, cols};
    return wgt_tensor_from_data(ctx, WGT_F32, 2, shape, data, (size_t)rows * (size_t)cols * sizeof(float),
                                WGT_USAGE_DEFAULT);
}

static wgt_tensor *upload_labels(wgt_context *ctx, int n, const int32_t *y) {
    int64_t shape[1] = {n};
    return wgt_tensor_from_data(ctx, WGT_I32, 1, shape, y, (size_t)n * sizeof(int32_t), WGT_USAGE_DEFAULT);
}

/* One epoch of mini-batch SGD; returns the mean training loss (NaN on failure). */
static double train_epoch(wgt_context *ctx, const digits *d, int *order, wgt_tensor **w1, wgt_tensor **b1,
                          wgt_tensor **w2, wgt_tensor **b2) {
    static float xb[MAX_SAMPLES][FEATURES];
    static int32_t yb[MAX_SAMPLES];
    for (int i = d->n_train - 1; i > 0; i--) {
        int j = (int)(next_random() % (uint32_t)(i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (int i = 0; i < d->n_train; i++) {
        memcpy(xb[i], d->x[order[i]], sizeof xb[i]);
        yb[i] = d->y[order[i]];
    }
    wgt_tensor *x_all = upload_f32(ctx, d->n_train, FEATURES, &xb[0][0]);
    wgt_tensor *y_all = upload_labels(ctx, d->n_train, yb);
    wgt_tensor *target_all = wgt_one_hot(y_all, CLASSES, WGT_F32);
    wgt_tensor *loss_sum = wgt_scalar(ctx, WGT_F32, 0);
    int ok = x_all && target_all && loss_sum, batches = 0;
    for (int start = 0; ok && start < d->n_train; start += BATCH, batches++) {
        int stop = start + BATCH < d->n_train ? start + BATCH : d->n_train;
        double inv_b = 1.0 / (stop - start);
        enum { X, T, HPRE, H, LOGITS, LOGP, PROBS, DIFF, DLOGITS, DLOGITS_T, DW2, DB2, DH, POS, MASK, DHPRE, DHPRE_T,
               DW1, DB1, PICKED, BATCH_LOSS, LOSS_SUM, ZERO, N_TMP };
        wgt_tensor *t[N_TMP] = {0};
        int axis0 = 0;
        /* forward */
        t[X] = wgt_slice(x_all, 0, start, stop, 1);
        t[T] = wgt_slice(target_all, 0, start, stop, 1);
        t[HPRE] = wgt_linear(t[X], *w1, *b1);
        t[H] = wgt_relu(t[HPRE]);
        t[LOGITS] = wgt_linear(t[H], *w2, *b2);
        t[LOGP] = wgt_log_softmax(t[LOGITS], 1);
        t[PICKED] = wgt_mul(t[LOGP], t[T]);
        t[BATCH_LOSS] = wgt_sum(t[PICKED], 0, NULL, 0);
        /* backward: d(mean cross-entropy)/d logits = (softmax - target) / batch */
        t[PROBS] = wgt_softmax(t[LOGITS], 1);
        t[DIFF] = wgt_sub(t[PROBS], t[T]);
        t[DLOGITS] = wgt_mul_scalar(t[DIFF], inv_b);
        t[DLOGITS_T] = wgt_transpose(t[DLOGITS], 0, 1);
        t[DW2] = wgt_matmul(t[DLOGITS_T], t[H]);
        t[DB2] = wgt_sum(t[DLOGITS], 1, &axis0, 0);
        t[DH] = wgt_matmul(t[DLOGITS], *w2);
        t[ZERO] = wgt_scalar(ctx, WGT_F32, 0);
        t[POS] = wgt_gt(t[HPRE], t[ZERO]); /* ReLU's derivative: 1 where the input was positive */
        t[MASK] = wgt_cast(t[POS], WGT_F32);
        t[DHPRE] = wgt_mul(t[DH], t[MASK]);
        t[DHPRE_T] = wgt_transpose(t[DHPRE], 0, 1);
        t[DW1] = wgt_matmul(t[DHPRE_T], t[X]);
        t[DB1] = wgt_sum(t[DHPRE], 1, &axis0, 0);
        t[LOSS_SUM] = wgt_sub(loss_sum, t[BATCH_LOSS]); /* loss is -sum(target * log p) */
        ok = t[LOSS_SUM] && t[DW1] && t[DB1] && t[DW2] && t[DB2] && sgd_step(w1, t[DW1]) && sgd_step(b1, t[DB1]) &&
             sgd_step(w2, t[DW2]) && sgd_step(b2, t[DB2]);
        if (ok) {
            wgt_release(loss_sum);
            loss_sum = t[LOSS_SUM];
            t[LOSS_SUM] = NULL;
        }
        drop(t, N_TMP);
    }
    float total = NAN;
    if (!ok || wgt_tensor_read(loss_sum, &total, sizeof total) != WGT_OK) total = NAN;
    wgt_release(x_all), wgt_release(y_all), wgt_release(target_all), wgt_release(loss_sum);
    return (double)total / d->n_train;
}

static double test_accuracy(wgt_context *ctx, const digits *d, wgt_tensor *w1, wgt_tensor *b1, wgt_tensor *w2,
                            wgt_tensor *b2) {
    wgt_tensor *x = upload_f32(ctx, d->n_test, FEATURES, &d->x[d->n_train][0]);
    wgt_tensor *y = upload_labels(ctx, d->n_test, &d->y[d->n_train]);
    wgt_tensor *hpre = wgt_linear(x, w1, b1), *h = wgt_relu(hpre), *logits = wgt_linear(h, w2, b2);
    wgt_tensor *pred = wgt_argmax(logits, 1, 0), *hit = wgt_eq(pred, y), *hits = wgt_sum(hit, 0, NULL, 0);
    int32_t correct = 0; /* the sum of a bool mask is its i32 count of trues */
    int ok = hits && wgt_tensor_read(hits, &correct, sizeof correct) == WGT_OK;
    wgt_tensor *all[] = {x, y, hpre, h, logits, pred, hit, hits};
    drop(all, 8);
    return ok ? (double)correct / d->n_test : -1;
}

static run_result train(wgt_context *ctx, const digits *d) {
    run_result r;
    memset(&r, 0, sizeof r);
    int64_t s1[2] = {HIDDEN, FEATURES}, s2[2] = {CLASSES, HIDDEN}, h[1] = {HIDDEN}, c[1] = {CLASSES};
    /* He initialisation for the ReLU layer, Glorot-like for the output layer. */
    wgt_tensor *w1 = wgt_rand_normal(ctx, WGT_F32, 2, s1, 0, sqrt(2.0 / FEATURES), 11);
    wgt_tensor *w2 = wgt_rand_normal(ctx, WGT_F32, 2, s2, 0, sqrt(1.0 / HIDDEN), 12);
    wgt_tensor *b1 = wgt_zeros(ctx, WGT_F32, 1, h), *b2 = wgt_zeros(ctx, WGT_F32, 1, c);
    static int order[MAX_SAMPLES];
    for (int i = 0; i < d->n_train; i++) order[i] = i;
    rng_state = 0x2545f4914f6cdd1dull; /* the same batch order on every backend */
    r.ok = w1 && w2 && b1 && b2;
    for (int e = 0; r.ok && e < EPOCHS; e++) {
        double t0 = now_ms();
        r.loss[e] = train_epoch(ctx, d, order, &w1, &b1, &w2, &b2);
        r.ms[e] = now_ms() - t0;
        r.ok = !isnan(r.loss[e]);
    }
    if (r.ok) r.accuracy = test_accuracy(ctx, d, w1, b1, w2, b2);
    r.ok = r.ok && r.accuracy >= 0;
    if (!r.ok) fprintf(stderr, "training failed: %s\n", wgt_last_error());
    wgt_release(w1), wgt_release(w2), wgt_release(b1), wgt_release(b2);
    return r;
}

int wgt_demo_mlp(void) {
    static digits d;
    if (!load_digits(&d)) {
        fprintf(stderr, "wgtensor demo: cannot read %s (install python3-sklearn: make setup; or set WGT_DIGITS)\n",
                digits_path());
        return 1;
    }
    wgt_context *dev = wgt_context_create(NULL);
    wgt_context_options cpu_opt = {0};
    cpu_opt.backend = WGT_BACKEND_CPU;
    wgt_context *cpu = wgt_context_create(&cpu_opt);
    if (!dev || !cpu) {
        fprintf(stderr, "wgtensor demo: %s\n", wgt_last_error());
        return 1;
    }
    printf("wgtensor demo: a %d-%d-%d perceptron on the digits data (%d training, %d test images),\n"
           "%d epochs of SGD, batch %d, learning rate %g; forward and backward passes in wgtensor ops\n",
           FEATURES, HIDDEN, CLASSES, d.n_train, d.n_test, EPOCHS, BATCH, LEARNING_RATE);
    printf("device: %s (backend %s)\n\n", wgt_context_device_name(dev),
           wgt_context_backend(dev) == WGT_BACKEND_WEBGPU ? "webgpu" : "cpu");
    run_result a = train(dev, &d), b = train(cpu, &d);
    printf("%5s  %12s  %12s  %10s  %10s\n", "epoch", "loss device", "loss cpu", "ms device", "ms cpu");
    for (int e = 0; e < EPOCHS; e++)
        printf("%5d  %12.6f  %12.6f  %10.1f  %10.1f\n", e + 1, a.loss[e], b.loss[e], a.ms[e], b.ms[e]);
    printf("\ntest accuracy: device %.2f%%, cpu %.2f%%\n", 100 * a.accuracy, 100 * b.accuracy);
    int pass = a.ok && b.ok && a.accuracy >= 0.95 && fabs(a.loss[EPOCHS - 1] - b.loss[EPOCHS - 1]) < 1e-3;
    printf("result: %s (needs at least 95%% and the two backends agreeing on the final loss)\n", pass ? "PASS" : "FAIL");
    wgt_context_release(cpu);
    wgt_context_release(dev);
    return pass ? 0 : 1;
}
