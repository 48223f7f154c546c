/*
 * What the kernels built on subgroup matrices share (matmul_sgmatrix.c, attention_sgmatrix.c):
 * the chosen configuration and subgroup size, and the spelling of the builtins, which Tint
 * has changed (the layout as a bool argument in older builds, a template argument since) and
 * which WGT_SGMATRIX_EMULATE=1 replaces by plain WGSL. In emulation a left or right "matrix"
 * is its offset in a workgroup array and a result matrix an array<f32, SM * SN / SG> per
 * invocation; each kernel brings its own emu_* functions, which know its arrays.
 */
#ifndef WGT_WEBGPU_SGMATRIX_H
#define WGT_WEBGPU_SGMATRIX_H

#include <stddef.h>
#include <stdint.h>

#include "webgpu_internal.h"

typedef struct {
    uint32_t sm, sn, sk; /* the configuration's matrix shape */
    uint32_t sg;         /* subgroup size */
    int old_builtins;    /* the bool-argument load/store of older Tint */
    int emulate;         /* subgroup matrices emulated in plain WGSL */
} wgt_sgm_spell;

/* The chosen configuration's spelling on this device (sgm_chosen must be set). */
void wgt_sgm_spell_of(const wgt_webgpu *w, wgt_sgm_spell *s);
/* The WGSL type of a f16 left (M x K) or right (K x N) matrix or a f32 result (M x N). */
const char *wgt_sgm_type(const wgt_sgm_spell *s, char *out, size_t size, char which);
/* A load of the matrix of `type` from array `tile` at `offset` with row stride `stride`. */
const char *wgt_sgm_load(const wgt_sgm_spell *s, char *out, size_t size, const char *type, const char *tile,
                         const char *offset, const char *stride);
/* A store statement of result matrix `value` into `target` (emulated: emu_store_<target>). */
void wgt_sgm_store(const wgt_sgm_spell *s, wgt_wgsl_text *t, const char *target, const char *offset, const char *value,
                   const char *stride);
/* Text for {{ENABLES}}, {{LANE_PARAM}} (after the entry point's last parameter) and
 * {{LANE_LET}} (the invocation's index in its subgroup as `lane`). */
const char *wgt_sgm_enables(const wgt_sgm_spell *s);
const char *wgt_sgm_lane_param(const wgt_sgm_spell *s);
const char *wgt_sgm_lane_let(const wgt_sgm_spell *s);
/* Submits the queued self-test and waits for it, at most 20 s on real hardware (a kernel of
 * this family once never finished), then the device's status. */
wgt_status wgt_sgm_probe_wait(wgt_webgpu *w, const char *what);

/* attention_sgmatrix.c: f16 attention with both products on subgroup matrices. probe runs it
 * once on the new device (after the matrix product's self-test, whose configuration it uses)
 * and sets sga_usable only if it passed; takes says whether wgt_wgpu_attention should hand it
 * these operands. */
void wgt_wgpu_attention_sgmatrix_probe(wgt_webgpu *w);
int wgt_wgpu_attention_sgmatrix_takes(const wgt_webgpu *w, const wgt_operand *q, const wgt_operand *k,
                                      const wgt_operand *v);
wgt_status wgt_wgpu_attention_sgmatrix(wgt_webgpu *w, const wgt_operand *out, const wgt_operand *q, const wgt_operand *k,
                                       const wgt_operand *v, int causal, double scale);

#endif
