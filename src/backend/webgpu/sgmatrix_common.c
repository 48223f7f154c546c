/*
 * What the kernels on subgroup matrices share (sgmatrix.h): the spelling of the builtins (one
 * place that knows both Tint spellings and the emulation, so the matrix product and the
 * attention kernel stay in step with what the self-tests found), and the self-tests' bounded
 * wait.
 */
#include <stdio.h>

#include "sgmatrix.h"

void wgt_sgm_spell_of(const wgt_webgpu *w, wgt_sgm_spell *s) {
    const wgt_wgpu_sgm_config *c = &w->sgm_configs[w->sgm_chosen];
    s->sm = c->M, s->sn = c->N, s->sk = c->K;
    s->sg = w->adapter.subgroup_max;
    s->old_builtins = w->sgm_old_builtins;
    s->emulate = w->sgm_emulated;
}

const char *wgt_sgm_type(const wgt_sgm_spell *s, char *out, size_t size, char which) {
    /* Template arguments: columns, then rows. */
    if (which == 'l') snprintf(out, size, "subgroup_matrix_left<f16, %u, %u>", s->sk, s->sm);
    else if (which == 'r') snprintf(out, size, "subgroup_matrix_right<f16, %u, %u>", s->sn, s->sk);
    else if (s->emulate) snprintf(out, size, "array<f32, EL>");
    else snprintf(out, size, "subgroup_matrix_result<f32, %u, %u>", s->sn, s->sm);
    return out;
}

const char *wgt_sgm_load(const wgt_sgm_spell *s, char *out, size_t size, const char *type, const char *tile,
                         const char *offset, const char *stride) {
    if (s->emulate) snprintf(out, size, "%s", offset);
    else if (s->old_builtins) snprintf(out, size, "subgroupMatrixLoad<%s>(&%s, %s, false, %s)", type, tile, offset, stride);
    else snprintf(out, size, "subgroupMatrixLoad<%s, row_major>(&%s, %s, %s)", type, tile, offset, stride);
    return out;
}

void wgt_sgm_store(const wgt_sgm_spell *s, wgt_wgsl_text *t, const char *target, const char *offset, const char *value,
                   const char *stride) {
    if (s->emulate) wgt_wgsl_add(t, "emu_store_%s(%s, %s, %s, lane);\n", target, offset, value, stride);
    else if (s->old_builtins) wgt_wgsl_add(t, "subgroupMatrixStore(&%s, %s, %s, false, %s);\n", target, offset, value, stride);
    else wgt_wgsl_add(t, "subgroupMatrixStore<row_major>(&%s, %s, %s, %s);\n", target, offset, value, stride);
}

const char *wgt_sgm_enables(const wgt_sgm_spell *s) {
    /* Matrix offsets depend on the subgroup's index, which the uniformity analysis cannot
     * see is the same across the subgroup. */
    return s->emulate ? ""
                      : "enable subgroups;\nenable chromium_experimental_subgroup_matrix;\n"
                        "diagnostic(off, chromium.subgroup_matrix_uniformity);";
}

const char *wgt_sgm_lane_param(const wgt_sgm_spell *s) {
    return s->emulate ? "" : ", @builtin(subgroup_invocation_id) lane: u32";
}

const char *wgt_sgm_lane_let(const wgt_sgm_spell *s) { return s->emulate ? "    let lane = lid % SG;" : ""; }

/* Waits this long for a self-test: far longer than it takes (a pipeline's first run
 * included), far shorter than the context's own timeout, so a kernel that never finishes
 * costs one context its subgroup matrices, not a hang. */
#define PROBE_TIMEOUT_MS 20000u

static void on_probe_done(uint32_t status, void *u1, void *u2) {
    (void)status;
    (void)u1;
    (void)u2;
}

wgt_status wgt_sgm_probe_wait(wgt_webgpu *w, const char *what) {
    wgt_status st = wgt_wgpu_submit(w);
    if (st == WGT_OK) {
        WGPUCallbackInfo cb = {0};
        cb.mode = WGPU_CALLBACK_MODE_WAIT_ANY_ONLY;
        cb.callback = (void (*)(void))on_probe_done;
        uint64_t keep = w->timeout_ns;
        /* Emulated (tests), the kernels are slow plain ones: the context's own timeout. */
        if (!w->sgm_emulated && w->timeout_ns > PROBE_TIMEOUT_MS * 1000000ull) w->timeout_ns = PROBE_TIMEOUT_MS * 1000000ull;
        st = wgt_wgpu_wait(w, w->p->wgpuQueueOnSubmittedWorkDone(w->queue, cb), what);
        w->timeout_ns = keep;
    }
    return st == WGT_OK ? wgt_wgpu_status(w) : st;
}
