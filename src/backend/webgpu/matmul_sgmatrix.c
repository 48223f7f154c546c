/*
 * f16 matrix products through subgroup matrices (wgsl/matmul_sgmatrix.wgsl): the tensor cores
 * of the GPUs that have them, reached through Dawn's chromium-experimental-subgroup-matrix.
 * Only where the adapter offers the feature with shader-f16 and subgroups of one fixed size,
 * and with an f16 x f16 -> f32 configuration: the kernel is built for the configuration's
 * M x N x K read from the adapter, never a shape assumed present. Today that is the wasm
 * build in Node with `unsafeNvidiaF16` (web/src/node_gpu.js); the native Dawn offers no
 * shader-f16 on those GPUs (loader.c).
 *
 * The feature is experimental, and a kernel of this family once never finished on an H200
 * (docs/web.md): so the kernel first runs at device creation on a small product of exactly
 * representable values, with a bounded wait (wgt_wgpu_sgmatrix_probe). Only if that gives
 * the exact answer do f16 products use it; otherwise they stay on the tiled kernel of
 * matmul.c and wgt_context_describe says why. WGT_SGMATRIX=0 turns it off (to compare), and
 * WGT_SGMATRIX_TILE=BM,BN,BK,WM,WN picks another workgroup tile (to tune).
 *
 * Tried on an H200 and dropped: loading each subgroup's matrices straight from storage
 * (operands stored by rows, whole tiles), with no staging and no barrier in the loop, ran
 * 4096^3 at 54 TFLOP/s against 161 staged (8192^3: 55 against 168), over six tiles. Two
 * slots of staged tiles, one barrier a step instead of two, ran it at 126 (8192^3: 129).
 * Staging through subgroup matrices (subgroupMatrixLoad from storage, subgroupMatrixStore
 * into workgroup memory) ran 86-119 in a probe (web/bench/probe_sgmatrix_stage.mjs).
 *
 * Tint has spelled the load and store two ways (the layout as a bool argument, deprecated
 * in later builds, or as a template argument, row_major): the self-test tries the current
 * spelling first and the older one where the kernel does not compile.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/env.h"
#include "sgmatrix.h"
#include "webgpu_internal.h"

/* Mirrors struct Params in matmul_sgmatrix.wgsl. */
typedef struct {
    uint32_t M, N, K, batch;
    uint32_t tiles_m, tiles_n, batch_ndim, a_offset;
    uint32_t b_offset, pad0, pad1, pad2;
    int32_t a_so, a_sk, b_so, b_sk;
    uint32_t batch_shape[8];
    int32_t a_batch[8];
    int32_t b_batch[8];
} sgm_params;
_Static_assert(sizeof(sgm_params) == 160, "sgm_params must match the WGSL Params layout");

enum { CHECKS_ALL, CHECKS_NONE, CHECKS_EDGES };

/* How an operand's tile comes from storage: 8 values (16 bytes) at a time along K or along
 * its outer dimension (M for a, N for b), or one value at a time with K or the outer
 * dimension fastest across invocations. */
enum { FETCH_VEC_K, FETCH_VEC_OUTER, FETCH_ONE_K, FETCH_ONE_OUTER };

typedef struct {
    uint32_t sm, sn, sk;          /* the configuration's matrix shape */
    uint32_t bm, bn, bk, wm, wn;  /* workgroup tile, subgroups along M and N */
    uint32_t sg;                  /* subgroup size */
    int a_fetch, b_fetch;
    wgt_dtype out;
    /* Bounds checks on the fetches: CHECKS_ALL; CHECKS_NONE where M, N and K are multiples of
     * the tile; CHECKS_EDGES where only K is, so that only workgroups on M's or N's edge check
     * (a uniform branch between the two fetches). */
    int checks;
    int old_builtins;             /* the bool-argument load/store of older Tint */
    int emulate;                  /* subgroup matrices emulated in plain WGSL (EMULATION below) */
} sgm_kernel;

/* WGT_SGMATRIX_EMULATE=1: the same kernel with each subgroup-matrix operation done by plain
 * WGSL functions (each invocation of a subgroup holds SM * SN / SG values of a result matrix;
 * the left and right "matrices" are their offsets in the staged tiles), with a 16 x 16 x 16
 * f16 -> f32 configuration assumed. So everything but the builtins themselves (tiling,
 * fetches, bounds, the batch, the epilogue) is tested on devices without the feature
 * (tests/test_matmul_sgmatrix.c), at a plain kernel's speed. */
static const char EMULATION[] =
    "const EL = SM * SN / SG;\n"
    "fn emu_mma(acc: array<f32, EL>, lo: u32, ro: u32, lane: u32) -> array<f32, EL> {\n"
    "    var r = acc;\n"
    /* Loops over e from the lane (not a constant trip count) keep a compiler such as
     * lavapipe's LLVM from unrolling every call into thousands of instructions. */
    "    for (var e = lane; e < SM * SN; e = e + SG) {\n"
    "        var s = 0.0;\n"
    "        for (var kk = 0u; kk < SK; kk = kk + 1u) { s = s + f32(sa[lo + (e / SN) * AP + kk]) * f32(sb[ro + kk * BP + e % SN]); }\n"
    "        r[e / SG] = r[e / SG] + s;\n"
    "    }\n"
    "    return r;\n"
    "}\n"
    "fn emu_store_sc(off: u32, c: array<f32, EL>, stride: u32, lane: u32) {\n"
    "    for (var e = lane; e < SM * SN; e = e + SG) { sc[off + (e / SN) * stride + e % SN] = c[e / SG]; }\n"
    "}\n";
static const char EMULATION_OUT[] =
    "fn emu_store_out(off: u32, c: array<f32, EL>, stride: u32, lane: u32) {\n"
    "    for (var e = lane; e < SM * SN; e = e + SG) { out[off + (e / SN) * stride + e % SN] = c[e / SG]; }\n"
    "}\n";

/* ---- the kernel's text ----------------------------------------------------------------- */

static uint32_t regs_of(const sgm_kernel *k, int is_b) {
    uint32_t outer = is_b ? k->bn : k->bm, wg = k->wm * k->wn * k->sg;
    int fetch = is_b ? k->b_fetch : k->a_fetch;
    uint32_t per = fetch <= FETCH_VEC_OUTER ? outer * k->bk / 8 : outer * k->bk;
    return per / wg;
}

/* The staged position of (outer o, k) as WGSL text: a is [BM][AP], b is [BK][BP]. */
static void staged(char *out, size_t size, int is_b, const char *o, const char *kk) {
    if (is_b) snprintf(out, size, "(%s) * BP + %s", kk, o);
    else snprintf(out, size, "(%s) * AP + %s", o, kk);
}

/* Fetches into registers (FETCH; bounds-checked or not), or stages the registers (STAGE), of
 * one operand. */
static void operand_text(const sgm_kernel *k, int is_b, int stage, int checked, wgt_wgsl_text *t) {
    const char *x = is_b ? "b" : "a", *o0 = is_b ? "n0" : "m0", *on = is_b ? "params.N" : "params.M";
    const char *ot = is_b ? "BN" : "BM", *tile = is_b ? "sb" : "sa";
    int fetch = is_b ? k->b_fetch : k->a_fetch;
    int vec = fetch <= FETCH_VEC_OUTER;
    for (uint32_t i = 0, n = regs_of(k, is_b); i < n; i++) {
        char pos[160], o[64], kk[64];
        /* Invocation lid's i-th piece of the tile: o along the outer dimension, kk along K. */
        wgt_wgsl_add(t, "        { let v = lid + %uu * WG;\n", i);
        if (fetch == FETCH_VEC_K) wgt_wgsl_add(t, "          let o = v / (BK / 8u); let kk = (v %% (BK / 8u)) * 8u;\n");
        else if (fetch == FETCH_VEC_OUTER)
            wgt_wgsl_add(t, "          let kk = v / (%s / 8u); let o = (v %% (%s / 8u)) * 8u;\n", ot, ot);
        else if (fetch == FETCH_ONE_K) wgt_wgsl_add(t, "          let o = v / BK; let kk = v %% BK;\n");
        else wgt_wgsl_add(t, "          let kk = v / %s; let o = v %% %s;\n", ot, ot);
        if (!stage) { /* checked: zeros past the edges; 16-byte pieces lie wholly inside or outside */
            if (checked) {
                wgt_wgsl_add(t, "          r%s%u = %s;\n", x, i, vec ? "vec4<u32>(0u)" : "0.0h");
                wgt_wgsl_add(t, "          if (%s + o < %s && k0 + kk < params.K) {\n", o0, on);
            }
            wgt_wgsl_add(t, "          r%s%u = %s[u32(%s_base + i32(%s + o) * params.%s_so + i32(k0 + kk) * params.%s_sk)%s];\n",
                         x, i, x, x, o0, x, x, vec ? " / 8u" : "");
            wgt_wgsl_add(t, checked ? "          } }\n" : "        }\n");
            continue;
        }
        if (!vec) {
            staged(pos, sizeof pos, is_b, "o", "kk");
            wgt_wgsl_add(t, "          %s[%s] = r%s%u;\n        }\n", tile, pos, x, i);
            continue;
        }
        for (int h = 0; h < 4; h++) wgt_wgsl_add(t, "          let q%d = halves(r%s%u.%c);\n", h, x, i, "xyzw"[h]);
        for (int e = 0; e < 8; e++) {
            if (fetch == FETCH_VEC_K) snprintf(o, sizeof o, "o"), snprintf(kk, sizeof kk, "kk + %du", e);
            else snprintf(o, sizeof o, "o + %du", e), snprintf(kk, sizeof kk, "kk");
            staged(pos, sizeof pos, is_b, o, kk);
            wgt_wgsl_add(t, "          %s[%s] = q%d.%c;\n", tile, pos, e / 2, "xy"[e % 2]);
        }
        wgt_wgsl_add(t, "        }\n");
    }
}

/* The builtins' spelling on this kernel's device (sgmatrix_spell.c). */
static wgt_sgm_spell spell_of(const sgm_kernel *k) {
    wgt_sgm_spell s = {k->sm, k->sn, k->sk, k->sg, k->old_builtins, k->emulate};
    return s;
}

static char *build_sgmatrix(wgt_webgpu *w, const void *arg) {
    (void)w;
    const sgm_kernel *k = arg;
    const char *text = wgt_wgsl_source("matmul_sgmatrix");
    if (!text) return NULL;
    uint32_t tm = k->bm / k->wm / k->sm, tn = k->bn / k->wn / k->sn;
    wgt_wgsl_text acc = {0}, regs = {0}, fetch = {0}, stage = {0}, mul = {0}, epi = {0};
    wgt_sgm_spell sp = spell_of(k);
    char left[96], right[96], result[96];
    wgt_sgm_type(&sp, left, sizeof left, 'l');
    wgt_sgm_type(&sp, right, sizeof right, 'r');
    wgt_sgm_type(&sp, result, sizeof result, 'o');
    for (uint32_t i = 0; i < tm; i++)
        for (uint32_t j = 0; j < tn; j++) wgt_wgsl_add(&acc, "    var c%u_%u = %s();\n", i, j, result);
    for (int is_b = 0; is_b < 2; is_b++) {
        int vec = (is_b ? k->b_fetch : k->a_fetch) <= FETCH_VEC_OUTER;
        for (uint32_t i = 0, n = regs_of(k, is_b); i < n; i++)
            wgt_wgsl_add(&regs, "    var r%s%u: %s;\n", is_b ? "b" : "a", i, vec ? "vec4<u32>" : "f16");
        operand_text(k, is_b, 1, 0, &stage);
    }
    if (k->checks == CHECKS_EDGES) wgt_wgsl_add(&fetch, "        if (interior) {\n");
    for (int is_b = 0; is_b < 2 && k->checks != CHECKS_ALL; is_b++) operand_text(k, is_b, 0, 0, &fetch);
    if (k->checks == CHECKS_EDGES) wgt_wgsl_add(&fetch, "        } else {\n");
    for (int is_b = 0; is_b < 2 && k->checks != CHECKS_NONE; is_b++) operand_text(k, is_b, 0, 1, &fetch);
    if (k->checks == CHECKS_EDGES) wgt_wgsl_add(&fetch, "        }\n");
    /* Per SK of the staged step: the subgroup's TM left and TN right matrices, then every
     * product into its accumulator (TM + TN loads for TM x TN multiplies). */
    for (uint32_t kk = 0; kk < k->bk / k->sk; kk++) {
        char call[256], off[96];
        wgt_wgsl_add(&mul, "        {\n");
        for (uint32_t i = 0; i < tm; i++) {
            snprintf(off, sizeof off, "(am + %uu) * AP + %uu", i * k->sm, kk * k->sk);
            wgt_wgsl_add(&mul, "            let l%u = %s;\n", i, wgt_sgm_load(&sp, call, sizeof call, left, "sa", off, "AP"));
        }
        for (uint32_t j = 0; j < tn; j++) {
            snprintf(off, sizeof off, "%uu * BP + bn + %uu", kk * k->sk, j * k->sn);
            wgt_wgsl_add(&mul, "            let r%u = %s;\n", j, wgt_sgm_load(&sp, call, sizeof call, right, "sb", off, "BP"));
        }
        for (uint32_t i = 0; i < tm; i++)
            for (uint32_t j = 0; j < tn; j++)
                wgt_wgsl_add(&mul, k->emulate ? "            c%u_%u = emu_mma(c%u_%u, l%u, r%u, lane);\n"
                                              : "            c%u_%u = subgroupMatrixMultiplyAccumulate(l%u, r%u, c%u_%u);\n",
                             i, j, i, j, i, j);
        wgt_wgsl_add(&mul, "        }\n");
    }
    /* Whole f32 tiles are stored straight into the output; the rest (tiles at the edges, f16
     * outputs) pass through the subgroup's scratch matrix, written one value per invocation
     * within bounds and converted. */
    if (k->out == WGT_F32) {
        wgt_wgsl_add(&epi, "    if (whole) {\n");
        for (uint32_t i = 0; i < tm; i++)
            for (uint32_t j = 0; j < tn; j++) {
                char off[160], val[32];
                snprintf(off, sizeof off, "obase + (m0 + am + %uu) * params.N + n0 + bn + %uu", i * k->sm, j * k->sn);
                snprintf(val, sizeof val, "c%u_%u", i, j);
                wgt_wgsl_add(&epi, "        ");
                wgt_sgm_store(&sp, &epi, "out", off, val, "params.N");
            }
        wgt_wgsl_add(&epi, "        return;\n    }\n");
    }
    for (uint32_t i = 0; i < tm; i++)
        for (uint32_t j = 0; j < tn; j++) {
            char val[32];
            snprintf(val, sizeof val, "c%u_%u", i, j);
            wgt_wgsl_add(&epi, "    workgroupBarrier();\n    ");
            wgt_sgm_store(&sp, &epi, "sc", "sg * SM * SN", val, "SN");
            wgt_wgsl_add(&epi, "    workgroupBarrier();\n");
            wgt_wgsl_add(&epi, "    for (var e = lane; e < SM * SN; e = e + SG) {\n");
            wgt_wgsl_add(&epi, "        let gm = m0 + am + %uu + e / SN;\n        let gn = n0 + bn + %uu + e %% SN;\n",
                         i * k->sm, j * k->sn);
            wgt_wgsl_add(&epi, "        if (gm < params.M && gn < params.N) { out[obase + gm * params.N + gn] = %s(sc[sg * SM * SN + e]); }\n",
                         k->out == WGT_F16 ? "f16" : "f32");
            wgt_wgsl_add(&epi, "    }\n");
        }
    char *out = NULL;
    wgt_wgsl_text *parts[] = {&acc, &regs, &fetch, &stage, &mul, &epi};
    int failed = 0;
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) failed |= parts[i]->failed || !parts[i]->s;
    char helpers[sizeof EMULATION + sizeof EMULATION_OUT] = "";
    if (k->emulate) snprintf(helpers, sizeof helpers, "%s%s", EMULATION, k->out == WGT_F32 ? EMULATION_OUT : "");
    if (!failed) {
        char bm[16], bn[16], bk[16], ap[16], bp[16], sg[16], wn[16], subm[16], subn[16], sm[16], sn[16], sk[16], wg[16],
            nsg[16];
        snprintf(bm, sizeof bm, "%u", k->bm);
        snprintf(bn, sizeof bn, "%u", k->bn);
        snprintf(bk, sizeof bk, "%u", k->bk);
        snprintf(ap, sizeof ap, "%u", k->bk + 8); /* 16 bytes of padding per staged line */
        snprintf(bp, sizeof bp, "%u", k->bn + 8);
        snprintf(sg, sizeof sg, "%u", k->sg);
        snprintf(wn, sizeof wn, "%u", k->wn);
        snprintf(subm, sizeof subm, "%u", k->bm / k->wm);
        snprintf(subn, sizeof subn, "%u", k->bn / k->wn);
        snprintf(sm, sizeof sm, "%u", k->sm);
        snprintf(sn, sizeof sn, "%u", k->sn);
        snprintf(sk, sizeof sk, "%u", k->sk);
        snprintf(wg, sizeof wg, "%u", k->wm * k->wn * k->sg);
        snprintf(nsg, sizeof nsg, "%u", k->wm * k->wn);
        const char *pairs[] = {"A_STORAGE", k->a_fetch <= FETCH_VEC_OUTER ? "vec4<u32>" : "f16",
                               "B_STORAGE", k->b_fetch <= FETCH_VEC_OUTER ? "vec4<u32>" : "f16",
                               "OUT_TYPE", k->out == WGT_F16 ? "f16" : "f32",
                               "BM", bm, "BN", bn, "BK", bk, "AP", ap, "BP", bp, "SG", sg, "WN", wn, "SUBM", subm,
                               "SUBN", subn, "SM", sm, "SN", sn, "SK", sk, "WG", wg, "NSG", nsg,
                               "ACC_DECL", acc.s, "REG_DECL", regs.s, "FETCH", fetch.s, "STAGE", stage.s,
                               "MULTIPLY", mul.s, "EPILOGUE", epi.s,
                               "ENABLES", wgt_sgm_enables(&sp), "HELPERS", helpers,
                               "LANE_PARAM", wgt_sgm_lane_param(&sp), "LANE_LET", wgt_sgm_lane_let(&sp), NULL};
        out = wgt_wgsl_expand(text, pairs);
    }
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) free(parts[i]->s);
    return out;
}

/* ---- choice of configuration and tile ------------------------------------------------- */

/* Whether kernel k's tile fits its configuration, the subgroup size and the device's limits. */
static int tile_fits(const wgt_webgpu *w, const sgm_kernel *k) {
    const WGPULimits *l = &w->limits.limits;
    uint32_t wg = k->wm * k->wn * k->sg;
    if (!k->sm || !k->sn || !k->sk || !k->wm || !k->wn || !k->sg || k->bk % 8 || k->bk % k->sk) return 0;
    if (k->bm % k->wm || k->bn % k->wn || (k->bm / k->wm) % k->sm || (k->bn / k->wn) % k->sn) return 0;
    if (k->bm % 8 || k->bn % 8 || (k->bm * k->bk / 8) % wg || (k->bn * k->bk / 8) % wg) return 0;
    if (wg > l->maxComputeInvocationsPerWorkgroup || wg > l->maxComputeWorkgroupSizeX) return 0;
    uint64_t shared = 2ull * k->bm * (k->bk + 8) + 2ull * k->bk * (k->bn + 8) + 4ull * k->wm * k->wn * k->sm * k->sn;
    return shared <= l->maxComputeWorkgroupStorageSize;
}

/* The workgroup tile of a product over K: 128 x 128 outputs, 4 x 2 subgroups of 32 x 64
 * outputs each, K in steps of 64 where K is a multiple of 64 (so only workgroups on M's or
 * N's edge check their fetches, and none where M and N are multiples of 128), else of 32;
 * unless WGT_SGMATRIX_TILE names another. 0 when the tile does not fit. On an H200 (GPU
 * TFLOP/s, the 32-step tile against the 64-step one): whole 4096^3 164 against 206, 8192^3
 * 173 against 226; 4000 x 4032 x 4000, edge workgroups checking, 149 against 180. With every
 * fetch checked the 64-step tile was the slower (140 against 149 on that shape): its eight
 * fetched words per invocation leave no registers for the checks. */
static int tile_for(const wgt_webgpu *w, sgm_kernel *k, int64_t K) {
    wgt_sgm_spell sp;
    wgt_sgm_spell_of(w, &sp);
    k->sm = sp.sm, k->sn = sp.sn, k->sk = sp.sk, k->sg = sp.sg, k->old_builtins = sp.old_builtins, k->emulate = sp.emulate;
    k->bm = 128, k->bn = 128, k->bk = 32, k->wm = 4, k->wn = 2;
    if (w->sgm_tile[0]) {
        k->bm = w->sgm_tile[0], k->bn = w->sgm_tile[1], k->bk = w->sgm_tile[2], k->wm = w->sgm_tile[3], k->wn = w->sgm_tile[4];
        return tile_fits(w, k);
    }
    if (K % 64 == 0) {
        k->bk = 64;
        if (tile_fits(w, k)) return 1;
        k->bk = 32;
    }
    return tile_fits(w, k);
}

/* WGT_SGMATRIX_TILE: five whole numbers from 1 to 4096 separated by commas, or unset. */
static int parse_tile(wgt_webgpu *w) {
    const char *env = getenv("WGT_SGMATRIX_TILE");
    memset(w->sgm_tile, 0, sizeof w->sgm_tile);
    if (!env || !*env) return 0;
    const char *c = env;
    for (int i = 0; i < 5; i++) {
        uint32_t v = 0;
        int digits = 0;
        for (; *c >= '0' && *c <= '9' && v <= 4096; c++, digits++) v = v * 10 + (uint32_t)(*c - '0');
        if (!digits || v < 1 || v > 4096 || *c != (i < 4 ? ',' : '\0')) {
            memset(w->sgm_tile, 0, sizeof w->sgm_tile);
            wgt_error(WGT_ERR_INVALID_ARGUMENT,
                      "wgt_context_create: WGT_SGMATRIX_TILE=%s is not BM,BN,BK,WM,WN (five whole numbers from 1 to 4096)", env);
            return -1;
        }
        w->sgm_tile[i] = v;
        if (i < 4) c++;
    }
    return 0;
}

int wgt_wgpu_sgmatrix_choose(wgt_webgpu *w) {
    const wgpu_procs *p = w->p;
    WGPUAdapter ad = w->adapter.adapter;
    w->sgm_chosen = -1;
    w->sgm_usable = 0;
    int on = 1; /* WGT_SGMATRIX=0 turns the kernel off (an unset variable leaves it on) */
    w->sga_wanted = 0; /* the attention kernel is opt-in (attention_sgmatrix.c says why) */
    if (parse_tile(w) < 0 || wgt_env_switch("wgt_context_create", "WGT_SGMATRIX_EMULATE", &w->sgm_emulated) < 0 ||
        wgt_env_switch("wgt_context_create", "WGT_SGMATRIX", &on) < 0 ||
        wgt_env_switch("wgt_context_create", "WGT_SGMATRIX_ATTENTION", &w->sga_wanted) < 0)
        return -1;
    if (!on) {
        snprintf(w->sgm_note, sizeof w->sgm_note, "turned off by WGT_SGMATRIX=0");
        return 0;
    }
    if (w->sgm_emulated) { /* the kernel's tiling without the feature: nothing to ask the device for */
        static const wgt_wgpu_sgm_config assumed = {WGT_WGPU_SGM_F16, WGT_WGPU_SGM_F32, 16, 16, 16};
        w->sgm_configs[0] = assumed;
        w->sgm_config_count = 1;
        w->sgm_chosen = 0;
        if (!w->adapter.subgroup_max || w->adapter.subgroup_min != w->adapter.subgroup_max) w->sgm_chosen = -1;
        snprintf(w->sgm_note, sizeof w->sgm_note, "emulated, but subgroups are %u..%u wide, not one size",
                 w->adapter.subgroup_min, w->adapter.subgroup_max);
        return 0;
    }
    if (!p->wgpuAdapterHasFeature(ad, WGPU_FEATURE_SUBGROUP_MATRIX)) {
        snprintf(w->sgm_note, sizeof w->sgm_note, "not offered");
        return 0;
    }
    if (!p->wgpuAdapterHasFeature(ad, WGPU_FEATURE_SHADER_F16) || !p->wgpuAdapterHasFeature(ad, WGPU_FEATURE_SUBGROUPS)) {
        snprintf(w->sgm_note, sizeof w->sgm_note, "offered without shader-f16 and subgroups: unused");
        return 0;
    }
    w->sgm_config_count = wgt_wgpu_subgroup_matrix_configs(p, ad, w->sgm_configs, WGT_WGPU_SGM_MAX_CONFIGS);
    uint64_t best = 0;
    for (uint32_t i = 0; i < w->sgm_config_count; i++) {
        const wgt_wgpu_sgm_config *c = &w->sgm_configs[i];
        uint64_t size = (uint64_t)c->M * c->N * c->K;
        if (c->component == WGT_WGPU_SGM_F16 && c->result == WGT_WGPU_SGM_F32 && size > best) best = size, w->sgm_chosen = (int)i;
    }
    if (w->sgm_chosen < 0) {
        snprintf(w->sgm_note, sizeof w->sgm_note, "offered, but none of its %u configurations multiplies f16 into f32",
                 w->sgm_config_count);
        return 0;
    }
    /* The kernel gives each subgroup its own part of the tile by local index / size. */
    if (!w->adapter.subgroup_max || w->adapter.subgroup_min != w->adapter.subgroup_max) {
        snprintf(w->sgm_note, sizeof w->sgm_note, "offered, but subgroups are %u..%u wide, not one size",
                 w->adapter.subgroup_min, w->adapter.subgroup_max);
        w->sgm_chosen = -1;
        return 0;
    }
    return 1;
}

/* ---- one product ---------------------------------------------------------------------- */

static int32_t stride32(int64_t len, int64_t stride) { return len == 1 ? 0 : (int32_t)stride; }

/* The fetch of an operand with outer stride so and K stride sk, of `outer` rows (columns)
 * and batch strides batch[0..bnd): 16 bytes at a time along a unit stride where every such
 * read is aligned and whole (the dimension a multiple of 8), else one value at a time. */
static int fetch_for(uint32_t offset, int32_t so, int32_t sk, int64_t outer, int64_t K, const int32_t *batch, int bnd) {
    int aligned = offset % 8 == 0;
    for (int d = 0; d < bnd; d++) aligned &= batch[d] % 8 == 0;
    if (aligned && sk == 1 && K % 8 == 0 && so % 8 == 0) return FETCH_VEC_K;
    if (aligned && so == 1 && outer % 8 == 0 && sk % 8 == 0) return FETCH_VEC_OUTER;
    return so == 1 && sk != 1 ? FETCH_ONE_OUTER : FETCH_ONE_K;
}

int wgt_wgpu_sgmatrix_takes(const wgt_webgpu *w, const wgt_operand *out, const wgt_operand *a, const wgt_operand *b) {
    if (!w->sgm_usable || a->dtype != WGT_F16 || b->dtype != WGT_F16) return 0;
    if (out->dtype != WGT_F16 && out->dtype != WGT_F32) return 0;
    int nd = out->ndim;
    int64_t M = out->shape[nd - 2], N = out->shape[nd - 1], K = a->shape[nd - 1];
    /* Few rows or columns: the rows kernel streams the matrix at memory speed already. */
    if (M <= 32 || N <= 32 || K < 8) return 0;
    /* No tile within the device's limits as they stand (they are read per product): the
     * tiled kernel of matmul.c. */
    sgm_kernel k;
    memset(&k, 0, sizeof k);
    if (!tile_for(w, &k, K)) return 0;
    int64_t limit = INT32_MAX;
    if (a->offset > limit || b->offset > limit) return 0;
    for (int d = 0; d < nd; d++)
        if (a->strides[d] > limit || a->strides[d] < -limit || b->strides[d] > limit || b->strides[d] < -limit) return 0;
    return 1;
}

wgt_status wgt_wgpu_matmul_sgmatrix(wgt_webgpu *w, const wgt_operand *out, const wgt_operand *a, const wgt_operand *b) {
    int nd = out->ndim, bnd = nd - 2;
    sgm_params p;
    memset(&p, 0, sizeof p);
    int64_t M = out->shape[nd - 2], N = out->shape[nd - 1], K = a->shape[nd - 1];
    uint64_t batch = 1;
    for (int d = 0; d < bnd; d++) {
        batch *= (uint64_t)out->shape[d];
        p.batch_shape[d] = (uint32_t)out->shape[d];
        p.a_batch[d] = stride32(out->shape[d], a->strides[d]);
        p.b_batch[d] = stride32(out->shape[d], b->strides[d]);
    }
    p.M = (uint32_t)M, p.N = (uint32_t)N, p.K = (uint32_t)K, p.batch = (uint32_t)batch;
    p.batch_ndim = (uint32_t)bnd;
    p.a_offset = (uint32_t)a->offset, p.b_offset = (uint32_t)b->offset;
    p.a_so = stride32(M, a->strides[nd - 2]), p.a_sk = stride32(K, a->strides[nd - 1]);
    p.b_so = stride32(N, b->strides[nd - 1]), p.b_sk = stride32(K, b->strides[nd - 2]);
    sgm_kernel k;
    memset(&k, 0, sizeof k);
    if (!tile_for(w, &k, K))
        return wgt_error(WGT_ERR_INTERNAL, "matmul (subgroup matrices): no workgroup tile fits %ux%ux%u matrices",
                         w->sgm_configs[w->sgm_chosen].M, w->sgm_configs[w->sgm_chosen].N, w->sgm_configs[w->sgm_chosen].K);
    k.out = out->dtype;
    k.a_fetch = fetch_for(p.a_offset, p.a_so, p.a_sk, M, K, p.a_batch, bnd);
    k.b_fetch = fetch_for(p.b_offset, p.b_so, p.b_sk, N, K, p.b_batch, bnd);
    k.checks = K % k.bk ? CHECKS_ALL : M % k.bm == 0 && N % k.bn == 0 ? CHECKS_NONE : CHECKS_EDGES;
    p.tiles_m = (uint32_t)((M + k.bm - 1) / k.bm);
    p.tiles_n = (uint32_t)((N + k.bn - 1) / k.bn);
    char key[160];
    static const char *const checks[] = {"", ":whole", ":edges"};
    snprintf(key, sizeof key, "matmul_sgmatrix:f16->%s:%ux%ux%u:%u,%u,%u,%u,%u,%u:%d%d%s:%d%d", wgt_dtype_name(k.out), k.sm,
             k.sn, k.sk, k.bm, k.bn, k.bk, k.wm, k.wn, k.sg, k.a_fetch, k.b_fetch, checks[k.checks], k.old_builtins, k.emulate);
    wgt_pipeline *pl;
    wgt_status st = wgt_wgpu_pipeline(w, key, 3, build_sgmatrix, &k, &pl);
    if (st != WGT_OK) return st;
    wgt_buffer *buffers[3] = {a->buffer, b->buffer, out->buffer};
    return wgt_wgpu_dispatch(w, pl, buffers, &p, sizeof p, batch * p.tiles_m * p.tiles_n);
}

/* ---- the self-test at device creation ------------------------------------------------- */

/* One product of the self-test: a[M,K] @ b[K,N] with values k/8 for small integers k (exact
 * in f16, and every partial sum exact in f32), against the host's exact answer. The tests
 * are small: M * K, K * N and M * N stay far below INT_MAX. */
static wgt_status probe_once(wgt_webgpu *w, int M, int N, int K, wgt_dtype out_dtype, char *why, size_t why_size,
                             int *compiled) {
    wgt_backend *be = &w->base;
    uint16_t *ha = malloc(sizeof *ha * M * K), *hb = malloc(sizeof *hb * K * N);
    double *ref = calloc((size_t)M * N, sizeof *ref);
    float *got = malloc(sizeof *got * M * N);
    uint16_t *got16 = malloc(sizeof *got16 * M * N);
    wgt_buffer *ba = NULL, *bb = NULL, *bo = NULL;
    wgt_status st = ha && hb && ref && got && got16 ? WGT_OK : WGT_ERR_OUT_OF_MEMORY;
    if (st != WGT_OK) snprintf(why, why_size, "out of host memory for the self-test");
    if (st == WGT_OK) {
        for (int i = 0; i < M * K; i++) ha[i] = wgt_f32_to_f16((float)((i * 7) % 17 - 8) / 8.0f);
        for (int i = 0; i < K * N; i++) hb[i] = wgt_f32_to_f16((float)((i * 5) % 13 - 6) / 8.0f);
        for (int m = 0; m < M; m++)
            for (int kk = 0; kk < K; kk++)
                for (int n = 0; n < N; n++)
                    ref[m * N + n] += (double)wgt_f16_to_f32(ha[m * K + kk]) * wgt_f16_to_f32(hb[kk * N + n]);
        size_t osize = out_dtype == WGT_F16 ? 2 : 4;
        st = wgt_wgpu_buffer_create(be, sizeof *ha * M * K, 0, &ba);
        if (st == WGT_OK) st = wgt_wgpu_buffer_create(be, sizeof *hb * K * N, 0, &bb);
        if (st == WGT_OK) st = wgt_wgpu_buffer_create(be, osize * M * N, 1, &bo);
        if (st == WGT_OK) st = wgt_wgpu_buffer_write(be, ba, 0, ha, sizeof *ha * M * K);
        if (st == WGT_OK) st = wgt_wgpu_buffer_write(be, bb, 0, hb, sizeof *hb * K * N);
        wgt_operand oa = {WGT_F16, 2, {M, K}, {K, 1}, 0, NULL, ba, NULL};
        wgt_operand ob = {WGT_F16, 2, {K, N}, {N, 1}, 0, NULL, bb, NULL};
        wgt_operand oo = {out_dtype, 2, {M, N}, {N, 1}, 0, NULL, bo, NULL};
        if (st == WGT_OK) st = wgt_wgpu_matmul_sgmatrix(w, &oo, &oa, &ob);
        *compiled = st == WGT_OK;
        if (st == WGT_OK) st = wgt_sgm_probe_wait(w, "the subgroup-matrix self-test");
        if (st == WGT_OK) st = wgt_wgpu_buffer_read(be, bo, 0, out_dtype == WGT_F16 ? (void *)got16 : (void *)got, osize * M * N);
        if (st != WGT_OK) snprintf(why, why_size, "%s", wgt_last_error());
        for (int i = 0; st == WGT_OK && i < M * N; i++) {
            double v = out_dtype == WGT_F16 ? (double)wgt_f16_to_f32(got16[i]) : (double)got[i];
            double want = out_dtype == WGT_F16 ? (double)wgt_f16_to_f32(wgt_f32_to_f16((float)ref[i])) : ref[i];
            if (v != want) {
                snprintf(why, why_size, "its %s self-test gave %g at [%d, %d] where %g is exact", wgt_dtype_name(out_dtype),
                         v, i / N, i % N, want);
                st = WGT_ERR_BACKEND;
            }
        }
    }
    if (ba) wgt_wgpu_buffer_destroy(be, ba);
    if (bb) wgt_wgpu_buffer_destroy(be, bb);
    if (bo) wgt_wgpu_buffer_destroy(be, bo);
    free(ha), free(hb), free(ref), free(got), free(got16);
    return st;
}

void wgt_wgpu_sgmatrix_probe(wgt_webgpu *w) {
    if (w->sgm_chosen < 0) return;
    if (w->sgm_emulated && !w->has_f16) {
        snprintf(w->sgm_note, sizeof w->sgm_note, "emulated, but the device has no shader-f16");
        return;
    }
    if (!w->sgm_emulated && !w->p->wgpuDeviceHasFeature(w->device, WGPU_FEATURE_SUBGROUP_MATRIX)) {
        snprintf(w->sgm_note, sizeof w->sgm_note, "offered, but the device was made without it");
        return;
    }
    sgm_kernel k;
    memset(&k, 0, sizeof k);
    const wgt_wgpu_sgm_config *c = &w->sgm_configs[w->sgm_chosen];
    if (!tile_for(w, &k, 1)) { /* the tile of a K that is no multiple of 64 */
        snprintf(w->sgm_note, sizeof w->sgm_note, "no workgroup tile fits %ux%ux%u matrices within the device's limits",
                 c->M, c->N, c->K);
        return;
    }
    char why[160] = "";
    w->sgm_usable = 1; /* for the self-test's own products */
    /* The current builtins (layout as a template argument), then those of older Tint (a bool
     * argument) if the kernel did not compile; a kernel that compiled and failed is final. */
    wgt_status st = WGT_OK;
    for (int old = 0; old < 2; old++) {
        int compiled = 0;
        w->sgm_old_builtins = old;
        /* Edge tiles with f32 and f16 outputs, then whole tiles (the kernel without bounds
         * checks), then K whole with edges in M and N (checks in edge workgroups only). */
        st = probe_once(w, 130, 136, 72, WGT_F32, why, sizeof why, &compiled);
        if (st == WGT_OK) st = probe_once(w, 130, 136, 72, WGT_F16, why, sizeof why, &compiled);
        if (st == WGT_OK) st = probe_once(w, 256, 128, 128, WGT_F32, why, sizeof why, &compiled);
        if (st == WGT_OK) st = probe_once(w, 200, 136, 128, WGT_F32, why, sizeof why, &compiled);
        if (st == WGT_OK || compiled) break;
    }
    w->sgm_usable = st == WGT_OK;
    if (st == WGT_OK)
        snprintf(w->sgm_note, sizeof w->sgm_note,
                 "used for f16 products%s: %ux%ux%u f16 -> f32, tile %ux%u, K step %u%s, %ux%u subgroups of %u%s",
                 w->sgm_emulated ? " (emulated in plain WGSL: WGT_SGMATRIX_EMULATE=1)" : "", c->M, c->N, c->K, k.bm, k.bn,
                 k.bk, w->sgm_tile[0] ? "" : " (64 where K is a multiple of 64)", k.wm, k.wn, k.sg,
                 w->sgm_old_builtins ? " (older builtins: bool layout argument)" : "");
    else snprintf(w->sgm_note, sizeof w->sgm_note, "unused: %s", why);
}
