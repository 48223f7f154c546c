/*
 * f16 attention with both products on subgroup matrices (wgsl/attention_sgmatrix.wgsl): where
 * the device multiplies through them (matmul_sgmatrix.c chose a configuration, and its
 * self-test passed) and q, k, v are f16, wgt_wgpu_attention hands the work here; f32, and
 * devices without the feature, keep the plain kernel of attention.c. The WGSL file holds the
 * structure; this file fills in the unrolled steps (every result matrix and output
 * accumulator a named value) for the configuration's SM x SN x SK and the subgroup size read
 * from the device, never a shape assumed present.
 *
 * Like the matrix product, the kernel runs once at device creation on a small causal
 * attention (Lq < Lk, odd sizes) against the host's float64 answer with a bounded wait
 * (wgt_wgpu_attention_sgmatrix_probe); only if that passes is it used, otherwise the plain
 * kernel runs and wgt_context_describe says why. WGT_SGMATRIX_EMULATE=1 runs it with the
 * subgroup-matrix operations in plain WGSL (tests/test_attention_sgmatrix.c).
 *
 * It is opt-in (WGT_SGMATRIX_ATTENTION=1): on an H200 (Dawn in Node, unsafe f16) it ran 4 to 6
 * TFLOP/s where the plain kernel runs f16 attention at 16 to 18, though the matrix product on
 * the same builtins reaches 160 (BENCHMARKS.md). Where the time goes is not known yet: values
 * staged one 2-byte load at a time, the scores and each tile's P v passing through f32
 * workgroup memory, q staged again for every tile of keys.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sgmatrix.h"
#include "webgpu_internal.h"

/* Mirrors struct Params in attention_sgmatrix.wgsl. */
typedef struct {
    uint32_t lq, lk, batch, row_blocks;
    uint32_t groups, batch_ndim, causal;
    float scale_log2;
    uint32_t q_offset, k_offset, v_offset, neg_inf_bits;
    int32_t q_sr, q_sd, k_sr, k_sd;
    int32_t v_sr, v_sd;
    uint32_t nan_bits, pad;
    uint32_t batch_shape[8];
    int32_t q_batch[8];
    int32_t k_batch[8];
    int32_t v_batch[8];
} sga_params;
_Static_assert(sizeof(sga_params) == 208, "sga_params must match the WGSL Params layout");

/* Subgroups per workgroup (each SM query rows), keys per tile. */
#define NSG 4u
#define BC 64u

typedef struct {
    wgt_sgm_spell sp;
    uint32_t d, dv;
    /* derived */
    uint32_t wg, br, dc, dp, dvp, vc, parts, rpi, rs, sh;
} sga_kernel;

static uint32_t round_up(uint32_t x, uint32_t m) { return (x + m - 1) / m * m; }

/* The kernel's sizes for head dimensions d and dv; 0 where the configuration, the subgroup
 * size or the device's limits do not allow it. */
static int shape_for(const wgt_webgpu *w, uint32_t d, uint32_t dv, sga_kernel *k) {
    memset(k, 0, sizeof *k);
    wgt_sgm_spell_of(w, &k->sp);
    /* Emulated subgroups are runs of invocations and may be of any width: NVIDIA's 32 (the
     * shape the kernel is for) rather than lavapipe's 8, whose four times as many output
     * accumulators per invocation take lavapipe's compiler four times as long. */
    if (k->sp.emulate) k->sp.sg = 32;
    const wgt_sgm_spell *s = &k->sp;
    if (!s->sm || !s->sn || !s->sk || !s->sg || !d || !dv || d > 65536 || dv > 256) return 0;
    /* Tiles of whole matrices; each invocation owns whole rows' worth of the subgroup's
     * output columns (SG divides BC) and the softmax's rows split evenly (SM and SG powers of
     * two of each other). */
    if (BC % s->sn || BC % s->sk || BC % s->sg || (s->sm * s->sn) % s->sg) return 0;
    if (s->sg % s->sm && s->sm % s->sg) return 0;
    k->d = d, k->dv = dv;
    k->wg = NSG * s->sg;
    k->br = NSG * s->sm;
    k->dc = 32 % s->sk ? s->sk : 32;
    k->dp = round_up(d, k->dc);
    k->dvp = round_up(dv, s->sn);
    k->vc = s->sk;
    k->parts = s->sg >= s->sm ? s->sg / s->sm : 1;
    k->rpi = s->sm > s->sg ? s->sm / s->sg : 1;
    k->rs = k->br / k->rpi;
    uint32_t qk = k->br * (k->dc + 8) + k->dc * (BC + 8), pv = k->br * (BC + 8) + k->vc * (k->dvp + 8);
    k->sh = round_up(qk > pv ? qk : pv, 2);
    const WGPULimits *l = &w->limits.limits;
    uint64_t shared = 2ull * k->sh + 4ull * (k->br * (BC + 4) + k->parts * k->br + k->br);
    return k->wg <= l->maxComputeInvocationsPerWorkgroup && k->wg <= l->maxComputeWorkgroupSizeX &&
           shared <= l->maxComputeWorkgroupStorageSize;
}

/* ---- WGSL text ------------------------------------------------------------------------- */

/* WGT_SGMATRIX_EMULATE=1: each invocation of a subgroup holds SM * SN / SG values of a result
 * matrix (value e at e / SG); left and right "matrices" are offsets in sh, their strides
 * given at each product. */
static const char EMULATION[] =
    "const EL = SM * SN / SG;\n"
    "fn emu_mma(acc: array<f32, EL>, lo: u32, ls: u32, ro: u32, rs: u32, lane: u32) -> array<f32, EL> {\n"
    "    var r = acc;\n"
    "    for (var e = lane; e < SM * SN; e = e + SG) {\n"
    "        var s = 0.0;\n"
    "        for (var kk = 0u; kk < SK; kk = kk + 1u) { s = s + f32(sh[lo + (e / SN) * ls + kk]) * f32(sh[ro + kk * rs + e % SN]); }\n"
    "        r[e / SG] = r[e / SG] + s;\n"
    "    }\n"
    "    return r;\n"
    "}\n"
    "fn emu_store_ss(off: u32, c: array<f32, EL>, stride: u32, lane: u32) {\n"
    "    for (var e = lane; e < SM * SN; e = e + SG) { ss[off + (e / SN) * stride + e % SN] = c[e / SG]; }\n"
    "}\n";

/* acc += l (the left matrix, stride ls) x the right matrix in sh at ro, stride rs. */
static void mma(const sga_kernel *k, wgt_wgsl_text *t, const char *acc, const char *ls, const char *ro, const char *rs) {
    char type[96], call[256];
    if (k->sp.emulate) {
        wgt_wgsl_add(t, "            %s = emu_mma(%s, l, %s, %s, %s, lane);\n", acc, acc, ls, ro, rs);
        return;
    }
    wgt_sgm_type(&k->sp, type, sizeof type, 'r');
    wgt_wgsl_add(t, "            %s = subgroupMatrixMultiplyAccumulate(l, %s, %s);\n", acc,
                 wgt_sgm_load(&k->sp, call, sizeof call, type, "sh", ro, rs), acc);
}

/* The left matrix `l` at lo with stride ls (emulated: its offset). */
static void left(const sga_kernel *k, wgt_wgsl_text *t, const char *lo, const char *ls) {
    char type[96], call[256];
    wgt_sgm_type(&k->sp, type, sizeof type, 'l');
    wgt_wgsl_add(t, "            let l = %s;\n", wgt_sgm_load(&k->sp, call, sizeof call, type, "sh", lo, ls));
}

/* Products of one staged chunk: S (over DC of the head dimension) or P v (over VC keys). */
static void products(const sga_kernel *k, wgt_wgsl_text *t, int pv) {
    uint32_t steps = (pv ? k->vc : k->dc) / k->sp.sk, n = pv ? k->dvp / k->sp.sn : BC / k->sp.sn;
    for (uint32_t kk = 0; kk < steps; kk++) {
        char lo[96], ro[96], acc[16];
        if (pv) snprintf(lo, sizeof lo, "sg * SM * PS + vc + %uu", kk * k->sp.sk);
        else snprintf(lo, sizeof lo, "sg * SM * QS + %uu", kk * k->sp.sk);
        wgt_wgsl_add(t, "        {\n");
        left(k, t, lo, pv ? "PS" : "QS");
        for (uint32_t j = 0; j < n; j++) {
            if (pv) snprintf(ro, sizeof ro, "VOFF + %uu * VS + %uu", kk * k->sp.sk, j * k->sp.sn);
            else snprintf(ro, sizeof ro, "KOFF + %uu * KS + %uu", kk * k->sp.sk, j * k->sp.sn);
            snprintf(acc, sizeof acc, "%s%u", pv ? "o" : "s", j);
            mma(k, t, acc, pv ? "PS" : "QS", ro, pv ? "VS" : "KS");
        }
        wgt_wgsl_add(t, "        }\n");
    }
}

/* Stores result matrices first..last-1 (named x<j>) into the subgroup's rows of ss. */
static void to_ss(const sga_kernel *k, wgt_wgsl_text *t, char x, uint32_t first, uint32_t last) {
    for (uint32_t j = first; j < last; j++) {
        char off[64], val[16];
        snprintf(off, sizeof off, "sg * SM * SSS + %uu", (j - first) * k->sp.sn);
        snprintf(val, sizeof val, "%c%u", x, j);
        wgt_wgsl_add(t, "        ");
        wgt_sgm_store(&k->sp, t, "ss", off, val, "SSS");
    }
}

/* The softmax of the tile for the invocation's RPI rows (slot + r RS). */
static void softmax_text(const sga_kernel *k, wgt_wgsl_text *t) {
    uint32_t keys = BC / k->parts;
    for (uint32_t r = 0; r < k->rpi; r++)
        wgt_wgsl_add(t,
                     "        {\n"
                     "            let row = slot + %uu * RS;\n"
                     "            var pm = ninf;\n"
                     "            for (var j = part * %uu; j < part * %uu + %uu; j = j + 1u) { pm = max(pm, score(row, j, k0, i0, off, ninf)); }\n"
                     "            red[part * BR + row] = pm;\n"
                     "        }\n",
                     r, keys, keys, keys);
    wgt_wgsl_add(t, "        workgroupBarrier();\n");
    for (uint32_t r = 0; r < k->rpi; r++) {
        wgt_wgsl_add(t,
                     "        {\n"
                     "            let row = slot + %uu * RS;\n"
                     "            var mt = red[row];\n"
                     "            for (var p = 1u; p < PARTS; p = p + 1u) { mt = max(mt, red[p * BR + row]); }\n"
                     "            let mn = max(m%u, mt);\n"
                     "            let al = select(1.0, exp2(m%u - mn), m%u > ninf);\n"
                     "            m%u = mn;\n"
                     "            var ps = 0.0;\n"
                     "            for (var j = part * %uu; j < part * %uu + %uu; j = j + 1u) {\n"
                     "                let s = score(row, j, k0, i0, off, ninf);\n"
                     "                let p = select(0.0, exp2(s - mn), s > ninf);\n"
                     "                ps = ps + p;\n"
                     "                sh[row * PS + j] = f16(p);\n"
                     "            }\n"
                     "            l%u = l%u * al + ps;\n"
                     "            if (part == 0u) { rowv[row] = al; }\n"
                     "        }\n",
                     r, r, r, r, r, keys, keys, keys, r, r);
    }
}

/* Output accumulator a<rd>_<j>: row j SG / BC of the subgroup's, column rd BC + (j SG) % BC
 * + lane; only those with columns below DVP exist. */
static int acc_exists(const sga_kernel *k, uint32_t rd, uint32_t j) {
    return rd * BC + (j * k->sp.sg) % BC < k->dvp;
}

static void acc_text(const sga_kernel *k, wgt_wgsl_text *decl, wgt_wgsl_text *add, wgt_wgsl_text *fin) {
    uint32_t per = k->sp.sm * BC / k->sp.sg, rounds = (k->dvp + BC - 1) / BC, nmat = k->dvp / k->sp.sn;
    for (uint32_t rd = 0; rd < rounds; rd++) {
        uint32_t first = rd * (BC / k->sp.sn), last = first + BC / k->sp.sn < nmat ? first + BC / k->sp.sn : nmat;
        wgt_wgsl_add(add, "        workgroupBarrier();\n");
        to_ss(k, add, 'o', first, last);
        wgt_wgsl_add(add, "        workgroupBarrier();\n");
        for (uint32_t j = 0; j < per; j++) {
            if (!acc_exists(k, rd, j)) continue;
            uint32_t row = j * k->sp.sg / BC, col = (j * k->sp.sg) % BC;
            wgt_wgsl_add(decl, "    var a%u_%u = 0.0;\n", rd, j);
            wgt_wgsl_add(add, "        a%u_%u = a%u_%u * rowv[sg * SM + %uu] + ss[(sg * SM + %uu) * SSS + %uu + lane];\n", rd, j, rd,
                         j, row, row, col);
            wgt_wgsl_add(fin,
                         "    {\n"
                         "        let gr = i0 + sg * SM + %uu;\n"
                         "        let col = %uu + lane;\n"
                         "        let lt = rowv[sg * SM + %uu];\n"
                         "        if (gr < params.lq && col < DV) {\n"
                         "            out[o_first + gr * DV + col] = select(f16(select(a%u_%u / lt, 0.0, lt == 0.0)), nan16, lt == 0.0);\n"
                         "        }\n"
                         "    }\n",
                         row, rd * BC + col, row, rd, j);
        }
    }
}

static char *build_sga(wgt_webgpu *w, const void *arg) {
    (void)w;
    const sga_kernel *k = arg;
    const char *text = wgt_wgsl_source("attention_sgmatrix");
    if (!text) return NULL;
    enum { STATE, SDECL, SMMA, SSTORE, SOFT, PVDECL, PVMMA, PVADD, SUMPUT, SUMTAKE, FIN, NT };
    wgt_wgsl_text t[NT];
    memset(t, 0, sizeof t);
    char result[96];
    wgt_sgm_type(&k->sp, result, sizeof result, 'o');
    for (uint32_t r = 0; r < k->rpi; r++) {
        wgt_wgsl_add(&t[STATE], "    var m%u = ninf;\n    var l%u = 0.0;\n", r, r);
        wgt_wgsl_add(&t[SUMPUT], "    red[part * BR + slot + %uu * RS] = l%u;\n", r, r);
        wgt_wgsl_add(&t[SUMTAKE],
                     "        {\n"
                     "            let row = slot + %uu * RS;\n"
                     "            var lt = red[row];\n"
                     "            for (var p = 1u; p < PARTS; p = p + 1u) { lt = lt + red[p * BR + row]; }\n"
                     "            rowv[row] = lt;\n"
                     "        }\n",
                     r);
    }
    for (uint32_t j = 0; j < BC / k->sp.sn; j++) wgt_wgsl_add(&t[SDECL], "        var s%u = %s();\n", j, result);
    for (uint32_t j = 0; j < k->dvp / k->sp.sn; j++) wgt_wgsl_add(&t[PVDECL], "        var o%u = %s();\n", j, result);
    products(k, &t[SMMA], 0);
    products(k, &t[PVMMA], 1);
    to_ss(k, &t[SSTORE], 's', 0, BC / k->sp.sn);
    softmax_text(k, &t[SOFT]);
    acc_text(k, &t[STATE], &t[PVADD], &t[FIN]);
    char *out = NULL;
    int failed = 0;
    for (int i = 0; i < NT; i++) failed |= t[i].failed || !t[i].s;
    if (!failed) {
        char v[15][16];
        uint32_t vals[15] = {k->sp.sg, k->sp.sm, k->sp.sn, k->sp.sk, k->wg, k->br, BC, k->dc,
                             k->d,     k->dp,    k->dv,    k->dvp,   k->vc, k->parts, k->rs};
        for (int i = 0; i < 15; i++) snprintf(v[i], sizeof v[i], "%u", vals[i]);
        char sh[16];
        snprintf(sh, sizeof sh, "%u", k->sh);
        const char *pairs[] = {"SG", v[0], "SM", v[1], "SN", v[2], "SK", v[3], "WG", v[4], "BR", v[5], "BC", v[6],
                               "DC", v[7], "D", v[8], "DP", v[9], "DV", v[10], "DVP", v[11], "VC", v[12],
                               "PARTS", v[13], "RS", v[14], "SH", sh,
                               "ENABLES", wgt_sgm_enables(&k->sp), "HELPERS", k->sp.emulate ? EMULATION : "",
                               "LANE_PARAM", wgt_sgm_lane_param(&k->sp), "LANE_LET", wgt_sgm_lane_let(&k->sp),
                               "STATE_DECL", t[STATE].s, "S_DECL", t[SDECL].s, "S_MMA", t[SMMA].s,
                               "S_STORE", t[SSTORE].s, "SOFTMAX", t[SOFT].s, "PV_DECL", t[PVDECL].s,
                               "PV_MMA", t[PVMMA].s, "PV_ADD", t[PVADD].s, "SUM_PUT", t[SUMPUT].s,
                               "SUM_TAKE", t[SUMTAKE].s, "FINISH", t[FIN].s, NULL};
        out = wgt_wgsl_expand(text, pairs);
    }
    for (int i = 0; i < NT; i++) free(t[i].s);
    return out;
}

/* ---- dispatch -------------------------------------------------------------------------- */

static int32_t stride32(int64_t len, int64_t stride) { return len == 1 ? 0 : (int32_t)stride; }

int wgt_wgpu_attention_sgmatrix_takes(const wgt_webgpu *w, const wgt_operand *q, const wgt_operand *k,
                                      const wgt_operand *v) {
    if (!w->sga_usable || q->dtype != WGT_F16 || k->dtype != WGT_F16 || v->dtype != WGT_F16) return 0;
    int nd = q->ndim;
    sga_kernel kern;
    if (!shape_for(w, (uint32_t)q->shape[nd - 1], (uint32_t)v->shape[nd - 1], &kern)) return 0;
    /* The kernel indexes in 32 bits, offsets and strides included. */
    const wgt_operand *ops[3] = {q, k, v};
    for (int i = 0; i < 3; i++) {
        if (ops[i]->offset > INT32_MAX) return 0;
        for (int d = 0; d < nd; d++)
            if (ops[i]->strides[d] > INT32_MAX || ops[i]->strides[d] < -INT32_MAX) return 0;
    }
    return 1;
}

wgt_status wgt_wgpu_attention_sgmatrix(wgt_webgpu *w, const wgt_operand *out, const wgt_operand *q, const wgt_operand *k,
                                       const wgt_operand *v, int causal, double scale) {
    int nd = out->ndim, bnd = nd - 2;
    int64_t lq = q->shape[nd - 2], lk = k->shape[nd - 2], d = q->shape[nd - 1], dv = v->shape[nd - 1];
    sga_kernel kern;
    if (!shape_for(w, (uint32_t)d, (uint32_t)dv, &kern))
        return wgt_error(WGT_ERR_INTERNAL, "attention (subgroup matrices): D = %lld, DV = %lld do not fit", (long long)d,
                         (long long)dv);
    sga_params p;
    memset(&p, 0, sizeof p);
    uint64_t batch = 1;
    for (int i = 0; i < bnd; i++) {
        batch *= (uint64_t)out->shape[i];
        p.batch_shape[i] = (uint32_t)out->shape[i];
        p.q_batch[i] = stride32(out->shape[i], q->strides[i]);
        p.k_batch[i] = stride32(out->shape[i], k->strides[i]);
        p.v_batch[i] = stride32(out->shape[i], v->strides[i]);
    }
    uint64_t row_blocks = ((uint64_t)lq + kern.br - 1) / kern.br, groups = batch * row_blocks;
    if (groups == 0) return WGT_OK;
    if (groups > UINT32_MAX || batch * (uint64_t)lq * (uint64_t)dv > UINT32_MAX)
        return wgt_error(WGT_ERR_LIMIT, "attention over %llu batch elements of %lld queries is beyond 32-bit indexing",
                         (unsigned long long)batch, (long long)lq);
    p.lq = (uint32_t)lq, p.lk = (uint32_t)lk, p.batch = (uint32_t)batch;
    p.row_blocks = (uint32_t)row_blocks, p.groups = (uint32_t)groups;
    p.batch_ndim = (uint32_t)bnd, p.causal = causal != 0;
    double scale_log2 = scale * 1.4426950408889634; /* beyond f32's range: infinite, as attention.c */
    p.scale_log2 = scale_log2 > FLT_MAX ? INFINITY : (float)scale_log2;
    p.q_offset = (uint32_t)q->offset, p.k_offset = (uint32_t)k->offset, p.v_offset = (uint32_t)v->offset;
    p.q_sr = stride32(lq, q->strides[nd - 2]), p.q_sd = stride32(d, q->strides[nd - 1]);
    p.k_sr = stride32(lk, k->strides[nd - 2]), p.k_sd = stride32(d, k->strides[nd - 1]);
    p.v_sr = stride32(lk, v->strides[nd - 2]), p.v_sd = stride32(dv, v->strides[nd - 1]);
    p.neg_inf_bits = 0xff800000u, p.nan_bits = 0x7e007e00u;
    char key[128];
    snprintf(key, sizeof key, "attention_sgmatrix:d%u:dv%u:%ux%ux%u:sg%u:%d%d", kern.d, kern.dv, kern.sp.sm, kern.sp.sn,
             kern.sp.sk, kern.sp.sg, kern.sp.old_builtins, kern.sp.emulate);
    wgt_pipeline *pl;
    wgt_status st = wgt_wgpu_pipeline(w, key, 4, build_sga, &kern, &pl);
    if (st != WGT_OK) return st;
    wgt_buffer *buffers[4] = {q->buffer, k->buffer, v->buffer, out->buffer};
    return wgt_wgpu_dispatch(w, pl, buffers, &p, sizeof p, groups);
}

/* ---- the self-test at device creation ------------------------------------------------- */

/* One causal attention of PROBE_LQ queries over PROBE_LK keys (the queries the last ones:
 * Lq < Lk, neither a tile multiple) with values k/8, against the float64 answer: within
 * what rounding p and the output to f16 allows. */
enum { PROBE_LQ = 70, PROBE_LK = 100, PROBE_D = 64 };

static double probe_value(int which, int i) { return (double)((i * (which * 2 + 5)) % (13 + which * 2) - 6) / 8.0; }

static wgt_status probe_run(wgt_webgpu *w, char *why, size_t why_size) {
    enum { NQ = PROBE_LQ * PROBE_D, NK = PROBE_LK * PROBE_D, NO = PROBE_LQ * PROBE_D };
    wgt_backend *be = &w->base;
    uint16_t *host = malloc(sizeof *host * (NQ + 2 * NK)), *got = malloc(sizeof *got * NO);
    wgt_buffer *b[4] = {NULL, NULL, NULL, NULL};
    wgt_status st = host && got ? WGT_OK : WGT_ERR_OUT_OF_MEMORY;
    if (st != WGT_OK) snprintf(why, why_size, "out of host memory for the self-test");
    size_t counts[4] = {NQ, NK, NK, NO};
    for (int i = 0; st == WGT_OK && i < NQ + 2 * NK; i++)
        host[i] = wgt_f32_to_f16((float)probe_value(i < NQ ? 0 : i < NQ + NK ? 1 : 2, i));
    for (int i = 0; st == WGT_OK && i < 4; i++) st = wgt_wgpu_buffer_create(be, 2 * counts[i], i == 3, &b[i]);
    if (st == WGT_OK) st = wgt_wgpu_buffer_write(be, b[0], 0, host, 2 * NQ);
    if (st == WGT_OK) st = wgt_wgpu_buffer_write(be, b[1], 0, host + NQ, 2 * NK);
    if (st == WGT_OK) st = wgt_wgpu_buffer_write(be, b[2], 0, host + NQ + NK, 2 * NK);
    wgt_operand oq = {WGT_F16, 2, {PROBE_LQ, PROBE_D}, {PROBE_D, 1}, 0, NULL, b[0], NULL};
    wgt_operand ok = {WGT_F16, 2, {PROBE_LK, PROBE_D}, {PROBE_D, 1}, 0, NULL, b[1], NULL};
    wgt_operand ov = {WGT_F16, 2, {PROBE_LK, PROBE_D}, {PROBE_D, 1}, 0, NULL, b[2], NULL};
    wgt_operand oo = {WGT_F16, 2, {PROBE_LQ, PROBE_D}, {PROBE_D, 1}, 0, NULL, b[3], NULL};
    if (st == WGT_OK) st = wgt_wgpu_attention_sgmatrix(w, &oo, &oq, &ok, &ov, 1, 0.125);
    if (st == WGT_OK) st = wgt_sgm_probe_wait(w, "the subgroup-matrix attention self-test");
    if (st == WGT_OK) st = wgt_wgpu_buffer_read(be, b[3], 0, got, 2 * NO);
    if (st != WGT_OK) snprintf(why, why_size, "%s", wgt_last_error());
    for (int i = 0; st == WGT_OK && i < PROBE_LQ; i++) {
        const uint16_t *hq = host, *hk = host + NQ, *hv = host + NQ + NK;
        double s[PROBE_LK], mx = -INFINITY, sum = 0;
        int visible = i + PROBE_LK - PROBE_LQ + 1;
        for (int j = 0; j < visible; j++) {
            s[j] = 0;
            for (int c = 0; c < PROBE_D; c++) s[j] += (double)wgt_f16_to_f32(hq[i * PROBE_D + c]) * wgt_f16_to_f32(hk[j * PROBE_D + c]);
            s[j] *= 0.125;
            mx = fmax(mx, s[j]);
        }
        for (int j = 0; j < visible; j++) sum += s[j] = exp(s[j] - mx);
        for (int c = 0; st == WGT_OK && c < PROBE_D; c++) {
            double want = 0;
            for (int j = 0; j < visible; j++) want += s[j] / sum * wgt_f16_to_f32(hv[j * PROBE_D + c]);
            double v = wgt_f16_to_f32(got[i * PROBE_D + c]);
            /* |v| <= 0.875: p to f16 (2^-11 relative) and the output to f16 (2^-11). */
            if (!(fabs(v - want) <= ldexp(1.0, -9))) {
                snprintf(why, why_size, "its self-test gave %g at [%d, %d] where %g is right", v, i, c, want);
                st = WGT_ERR_BACKEND;
            }
        }
    }
    for (int i = 0; i < 4; i++)
        if (b[i]) wgt_wgpu_buffer_destroy(be, b[i]);
    free(host), free(got);
    return st;
}

void wgt_wgpu_attention_sgmatrix_probe(wgt_webgpu *w) {
    w->sga_usable = 0;
    if (!w->sgm_usable) {
        snprintf(w->sga_note, sizeof w->sga_note, "unused: the matrix product does not use subgroup matrices");
        return;
    }
    if (!w->sga_wanted) {
        snprintf(w->sga_note, sizeof w->sga_note, "off (WGT_SGMATRIX_ATTENTION=1 turns it on; on an H200 it ran 3 to 4 "
                                                  "times slower than the plain kernel)");
        return;
    }
    sga_kernel k;
    if (!shape_for(w, PROBE_D, PROBE_D, &k)) {
        snprintf(w->sga_note, sizeof w->sga_note, "unused: no workgroup fits %ux%ux%u matrices and subgroups of %u",
                 k.sp.sm, k.sp.sn, k.sp.sk, k.sp.sg);
        return;
    }
    char why[160] = "";
    w->sga_usable = 1; /* for the self-test's own run */
    wgt_status st = probe_run(w, why, sizeof why);
    w->sga_usable = st == WGT_OK;
    if (st == WGT_OK)
        snprintf(w->sga_note, sizeof w->sga_note, "used for f16%s: %u query rows, %u keys per tile, %u subgroups of %u",
                 w->sgm_emulated ? " (emulated)" : "", k.br, BC, NSG, k.sp.sg);
    else snprintf(w->sga_note, sizeof w->sga_note, "unused: %s", why);
}
