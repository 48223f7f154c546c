/*
 * Contexts: choose and start a backend. AUTO tries WebGPU and falls back to the CPU with a
 * one-line notice (except on a WebGPU setting it cannot read); WEBGPU fails with the reason
 * instead. A context lives until the caller
 * released it and its last storage is gone, so tensors never point at a freed backend.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "backend/cpu/cpu_threads.h"
#include "env.h"
#include "node.h"

static void context_free(wgt_context *ctx) {
    if (ctx->backend) wgt_index_checks_free(ctx);
    if (ctx->backend) ctx->backend->destroy(ctx->backend);
    wgt_name_index_free(&ctx->input_names); /* empty: every placeholder held the context */
    free(ctx);
}

void wgt_context_unref(wgt_context *ctx) {
    if (--ctx->refs == 0) context_free(ctx);
}

/* Names of the values 0, 1, 2 of the options' enums, as their environment variables take them. */
static const char *const backend_names[3] = {"auto", "webgpu", "cpu"};      /* wgt_backend_kind */
static const char *const attention_names[3] = {"auto", "kernel", "compose"}; /* wgt_attention_path */

/* Checks an option whose values are 0 (automatic), 1 and 2, and where it is 0 applies the
 * environment variable `var` (a name from `names`, in any case). 0 and an error naming the
 * value on a bad one. */
static int settle_option(int *value, const char *what, const char *var, const char *const names[3]) {
    if (*value < 0 || *value > 2) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "wgt_context_create: unknown %s %d", what, *value);
        return 0;
    }
    const char *env = getenv(var);
    if (!env || !*env) return 1;
    for (int i = 0; i < 3; i++)
        if (!strcasecmp(env, names[i])) {
            if (*value == 0) *value = i; /* checked even where the option overrides it */
            return 1;
        }
    wgt_error(WGT_ERR_INVALID_ARGUMENT, "wgt_context_create: %s=%s is not %s, %s or %s", var, env, names[0], names[1],
              names[2]);
    return 0;
}

wgt_context *wgt_context_create(const wgt_context_options *options) {
    wgt_context_options opt = {0};
    if (options) opt = *options;
    int backend = (int)opt.backend, attention = (int)opt.attention;
    if (!settle_option(&backend, "backend", "WGT_BACKEND", backend_names) ||
        !settle_option(&attention, "attention path", "WGT_ATTENTION", attention_names))
        return NULL;
    opt.backend = (wgt_backend_kind)backend;
    opt.attention = (wgt_attention_path)attention;
    static const char fn[] = "wgt_context_create";
    uint64_t units = 0, timeout = 0, threads = 0;
    int poison = 0, fusion = 1, quant_int8 = 0;
    /* Every variable is checked even where an option overrides it: a typo never hides. */
    if (wgt_env_count(fn, "WGT_COMPUTE_UNITS", 1, 65536, &units) < 0 ||
        wgt_env_count(fn, "WGT_TIMEOUT_MS", 1, UINT32_MAX, &timeout) < 0 ||
        wgt_env_count(fn, "WGT_CPU_THREADS", 1, WGT_CPU_MAX_THREADS, &threads) < 0 ||
        wgt_env_switch(fn, "WGT_POISON", &poison) < 0 || wgt_env_switch(fn, "WGT_FUSION", &fusion) < 0 ||
        wgt_env_switch(fn, "WGT_QUANT_INT8", &quant_int8) < 0)
        return NULL;
    if (opt.compute_units == 0) opt.compute_units = (uint32_t)units;
    if (opt.compute_units > 65536) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: %u compute units, more than 65536", fn, opt.compute_units);
        return NULL;
    }
    if (opt.wait_timeout_ms == 0) opt.wait_timeout_ms = timeout ? (uint32_t)timeout : 60000;
    wgt_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx) {
        wgt_error(WGT_ERR_OUT_OF_MEMORY, "wgt_context_create: out of host memory");
        return NULL;
    }
    ctx->refs = 1;
    ctx->wait_timeout_ms = opt.wait_timeout_ms;
    ctx->poison = poison;
    ctx->quant_int8 = quant_int8;
    ctx->fusion = !opt.no_fusion && fusion;
    ctx->attention = opt.attention;
    if (opt.backend != WGT_BACKEND_CPU) {
        ctx->backend = wgt_webgpu_backend_create(&opt);
        if (!ctx->backend) {
            /* A WebGPU setting the library cannot read (WGT_SGMATRIX=2) is the caller's typo,
             * not a machine without WebGPU: AUTO fails on it too instead of hiding it behind
             * the CPU backend. */
            if (opt.backend == WGT_BACKEND_WEBGPU || wgt_last_status() == WGT_ERR_INVALID_ARGUMENT) {
                free(ctx);
                return NULL; /* the reason is the error already recorded */
            }
            if (!opt.quiet) fprintf(stderr, "wgtensor: WebGPU unavailable (%s); using the CPU backend\n", wgt_last_error());
            wgt_clear_error();
        }
    }
    if (!ctx->backend) ctx->backend = wgt_cpu_backend_create((int)threads);
    if (!ctx->backend) {
        free(ctx);
        return NULL;
    }
    return ctx;
}

void wgt_context_release(wgt_context *ctx) {
    if (!ctx || ctx->released) return;
    /* Pending work holds storages, which hold the context. No tensor of a released context can
     * be read again (every call on one fails as "released"), so running it would only cost
     * time: it is dropped, and the storages it was to write are marked failed. */
    wgt_drop_pending(ctx, WGT_ERR_INVALID_ARGUMENT, "the context was released before the work ran");
    wgt_graph_updates_drop(ctx); /* they hold storages, which hold the context */
    ctx->released = 1;
    /* Tensors the caller still holds keep the context, but none of them can reach the device
     * again (they fail as "released"): the device and its threads go back now, not with the
     * last tensor. */
    if (ctx->refs > 1 && ctx->backend->release_device) ctx->backend->release_device(ctx->backend);
    wgt_context_unref(ctx);
}

wgt_status wgt_check_context(const char *fn, wgt_context *ctx) {
    if (!ctx) return wgt_error_if_clear(WGT_ERR_INVALID_ARGUMENT, "%s: context is NULL", fn);
    if (ctx->released) return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: context was released", fn);
    wgt_status st = ctx->backend->status(ctx->backend);
    if (st != WGT_OK && ctx->pending_head && !ctx->flushing) {
        /* Recorded work can never run on a failed device (lost, or timed out): drop it now, so
         * the storages it holds give their memory back as soon as their tensors go. */
        char message[512];
        snprintf(message, sizeof message, "%s", wgt_last_error());
        wgt_drop_pending(ctx, st, message);
        wgt_error(st, "%s", message);
    }
    return st; /* the backend set the message */
}

wgt_backend_kind wgt_context_backend(const wgt_context *ctx) {
    return ctx ? ctx->backend->kind : WGT_BACKEND_AUTO;
}

const char *wgt_context_device_name(const wgt_context *ctx) {
    return ctx ? ctx->backend->device_name(ctx->backend) : "";
}

wgt_status wgt_context_status(wgt_context *ctx) { return wgt_check_context("wgt_context_status", ctx); }

wgt_status wgt_context_sync(wgt_context *ctx) {
    wgt_status st = wgt_check_context("wgt_context_sync", ctx);
    if (st == WGT_OK) st = wgt_flush(ctx);
    if (st != WGT_OK) return st;
    /* The index checks' record goes with the wait; a failed check is reported here too. */
    if ((st = wgt_index_checks_begin(ctx)) != WGT_OK) return st;
    st = ctx->backend->sync(ctx->backend);
    wgt_status cs = wgt_index_checks_finish(ctx, 1);
    return st != WGT_OK ? st : cs;
}

wgt_status wgt_context_stats(wgt_context *ctx, wgt_stats *out) {
    if (!ctx) return wgt_error_if_clear(WGT_ERR_INVALID_ARGUMENT, "wgt_context_stats: context is NULL");
    if (!out) return wgt_error(WGT_ERR_INVALID_ARGUMENT, "wgt_context_stats: out is NULL");
    memset(out, 0, sizeof *out);
    /* The context's own memory (the index-check record) is outside the backend's counts. */
    if (ctx->backend->stats) ctx->backend->stats(ctx->backend, out);
    out->ops_run = ctx->counters.ops_run;
    out->ops_skipped = ctx->counters.ops_skipped;
    out->ops_fused = ctx->counters.ops_fused;
    out->launches = ctx->counters.launches;
    return WGT_OK;
}

wgt_status wgt_context_trim(wgt_context *ctx) {
    wgt_status st = wgt_check_context("wgt_context_trim", ctx);
    if (st != WGT_OK) return st;
    st = wgt_flush(ctx);
    /* Memory goes back even when the work failed (a lost device, say): the caller asked to
     * give back what is idle, and the failure is still reported. */
    if (ctx->backend->trim) ctx->backend->trim(ctx->backend);
    return st;
}

char *wgt_context_describe(wgt_context *ctx) {
    if (!ctx) {
        wgt_error_if_clear(WGT_ERR_INVALID_ARGUMENT, "wgt_context_describe: context is NULL");
        return NULL;
    }
    return ctx->backend->describe(ctx->backend);
}

wgt_status wgt_context_simulate_device_loss(wgt_context *ctx) {
    wgt_status st = wgt_check_context("wgt_context_simulate_device_loss", ctx);
    return st != WGT_OK ? st : ctx->backend->simulate_loss(ctx->backend);
}

char *wgt_list_adapters(const char *library_path) { return wgt_webgpu_list_adapters(library_path); }
