/*
 * Scaled dot-product attention on WebGPU as one kernel (wgsl/attention.wgsl): a workgroup
 * owns 64 query rows and walks the keys in tiles of 64 with an online softmax, so the
 * [Lq, Lk] scores never reach memory. The WGSL file holds the structure; this file generates
 * the steps, in which every score and output accumulator is a named register (arrays
 * indexed in loops may land in local memory when a driver does not unroll them).
 *
 * A kernel is filled per (dtype, D, DV, how each operand is read):
 * - each of q, k, v is read as 16-byte units along its head dimension where that dimension
 *   is dense and every row starts on a unit (f32 vec4, f16 four values in a vec2<u32>), else
 *   element by element through its strides;
 * - an invocation owns 4 query rows (ROW_GROUPS) of the 256;
 * - v is staged VK keys at a time, VK the largest power of two up to 64 whose chunk fits
 *   512 vec4s.
 * Workgroup memory is 32 KiB (the staging area and the probabilities, 16 KiB each): above
 * WebGPU's default limit of 16 KiB, within what lavapipe and NVIDIA's Vulkan driver offer.
 * attention_fits sends devices with less, and head dimensions the kernel does not take, to
 * the composition.
 *
 * NVIDIA H200 (Vulkan through Dawn), causal, 32 heads x 2048 x 128, f32: 1.60 ms of GPU time,
 * 21 TFLOP/s counting the causal half of the products, where PyTorch's
 * scaled_dot_product_attention takes 3.12 ms and the composition of matmul, where and softmax
 * took 24.5 ms.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sgmatrix.h"
#include "webgpu_internal.h"

/* Workgroup memory the kernel declares, and the largest DV it takes. */
#define SHARED_BYTES 32768u
#define MAX_DV 256
/* vec4s of query rows per invocation (256 / ROW_GROUPS invocations). The generator also
 * makes 8 rows per invocation (128 invocations, twice the FMAs per workgroup-memory load),
 * but on the H200 that ran slower at the benchmark's shape, 1.90 to 1.98 ms against 1.65 to
 * 1.71 ms: its registers cost occupancy. */
#define ROW_GROUPS 1

/* Mirrors struct Params in attention.wgsl: 12 scalars, then the views. */
typedef struct {
    uint32_t lq, lk, batch, row_blocks;
    uint32_t groups, causal;
    float scale_log2;
    uint32_t neg_inf_bits, nan_bits, count_offset, pad0, pad1;
    wgt_wgpu_attention_views views;
} attention_params;

_Static_assert(sizeof(attention_params) == 224, "attention_params must match the WGSL Params layout");

typedef struct {
    wgt_dtype dtype;
    int d, dv;
    int q_vec, k_vec, v_vec; /* read in 16-byte units along the head dimension */
    int rg;                  /* vec4s of query rows per invocation: 1 or 2 */
    wgt_dtype count;         /* the key count's type (i32, u32), or WGT_F32 for no count */
} attention_kernel;

/* Derived sizes of a kernel. */
typedef struct {
    int wg, rows, dvu, nv, vk, qkn, vn;
} shape_info;

static shape_info info_of(const attention_kernel *k) {
    shape_info s;
    s.wg = 256 / k->rg;
    s.rows = 4 * k->rg;
    s.dvu = (k->dv + 3) / 4;
    s.nv = (s.dvu + 15) / 16;
    s.vk = 64;
    while (s.vk > 1 && s.vk * s.dvu > 512) s.vk /= 2;
    s.qkn = 256 / s.wg;
    s.vn = (s.vk * s.dvu + s.wg - 1) / s.wg;
    return s;
}

static const char comp[4] = {'x', 'y', 'z', 'w'};

/* ---- WGSL text ------------------------------------------------------------------------- */

/* load_<name>(i, n) for one operand: its unit (vec4 / vec2<u32>) or element by element. */
void wgt_wgpu_attention_load_fn(wgt_wgsl_text *t, const char *name, wgt_dtype dtype, int vec) {
    wgt_wgsl_add(t, "fn load_%s(i: u32, n: u32) -> vec4<f32> {\n", name);
    if (vec && dtype == WGT_F16)
        wgt_wgsl_add(t, "    let w = %s[i >> 2u];\n    return vec4<f32>(unpack2x16float(w.x), unpack2x16float(w.y));\n",
                     name);
    else if (vec)
        wgt_wgsl_add(t, "    return %s[i >> 2u];\n", name);
    else {
        wgt_wgsl_add(t, "    var r = vec4<f32>(0.0);\n    for (var e = 0u; e < n; e = e + 1u) {\n"
                        "        let j = i + e * u32(params.%s_sd);\n", name);
        if (dtype == WGT_F16) wgt_wgsl_add(t, "        r[e] = unpack2x16float(%s[j >> 1u])[j & 1u];\n", name);
        else wgt_wgsl_add(t, "        r[e] = %s[j];\n", name);
        wgt_wgsl_add(t, "    }\n    return r;\n");
    }
    wgt_wgsl_add(t, "}\n");
}

/* The loads of the next q and k chunk (index `chunk`) into the prefetch registers. */
static void qk_fetch(wgt_wgsl_text *t, const shape_info *s, const char *chunk) {
    for (int n = 0; n < s->qkn; n++)
        for (int side = 0; side < 2; side++)
            wgt_wgsl_add(t, "        p%c%d = fetch_%c(%s + (tid + %du) / 4u, %s * 16u + ((tid + %du) %% 4u) * 4u);\n",
                         side ? 'k' : 'q', n, side ? 'k' : 'q', side ? "k0" : "i0", n * s->wg, chunk, n * s->wg);
}

static void qk_put(wgt_wgsl_text *t, const shape_info *s, const char *buffer) {
    for (int n = 0; n < s->qkn; n++)
        wgt_wgsl_add(t, "        put_chunk(%s, tid + %du, pq%d);\n        put_chunk(%s + 256u, tid + %du, pk%d);\n", buffer,
                     n * s->wg, n, buffer, n * s->wg, n);
}

/* The loads of v chunk `chunk` (VK keys) into the prefetch registers, and their stores into
 * the buffer at `buffer`; slots past the chunk (when it does not fill every invocation's
 * last one) are skipped. */
static void v_fetch(wgt_wgsl_text *t, const shape_info *s, const char *chunk) {
    for (int n = 0; n < s->vn; n++) {
        int guard = (n + 1) * s->wg > s->vk * s->dvu;
        if (guard) wgt_wgsl_add(t, "        if (tid + %du < VK * DVU) {\n", n * s->wg);
        wgt_wgsl_add(t, "        pv%d = fetch_v(k0 + %s * VK + (tid + %du) / DVU, ((tid + %du) %% DVU) * 4u);\n", n, chunk,
                     n * s->wg, n * s->wg);
        if (guard) wgt_wgsl_add(t, "        }\n");
    }
}

static void v_put(wgt_wgsl_text *t, const shape_info *s, const char *buffer) {
    for (int n = 0; n < s->vn; n++) {
        int guard = (n + 1) * s->wg > s->vk * s->dvu;
        if (guard) wgt_wgsl_add(t, "        if (tid + %du < VK * DVU) {\n", n * s->wg);
        wgt_wgsl_add(t, "        stage[%s + tid + %du] = pv%d;\n", buffer, n * s->wg, n);
        if (guard) wgt_wgsl_add(t, "        }\n");
    }
}

/* Steps a loop body covers: a loop keeps the kernel small (lavapipe took 32 s to compile
 * the fully unrolled kernel, 6 s this one) while four steps per iteration leave little loop
 * overhead (on the H200, 16 steps ran no faster). */
#define UNROLL 4

/* One chunk of S = q k^T: 16 values of D from the buffer at sb, rank-1 updates of the
 * invocation's rows (s<i>, a vec4 over its 4 keys). */
static void s_step(wgt_wgsl_text *t, const shape_info *s) {
    wgt_wgsl_add(t, "            for (var dd = 0u; dd < 256u; dd = dd + %du) {\n", 16 * UNROLL);
    for (int u = 0; u < UNROLL; u++) {
        wgt_wgsl_add(t, "                {\n                let kv = stage[sb + dd + %du + tx];\n", 256 + 16 * u);
        for (int g = 0; g < s->rows / 4; g++)
            wgt_wgsl_add(t, "                let a%d = stage[sb + dd + %du + RG * ty];\n", g, 16 * u + g);
        for (int i = 0; i < s->rows; i++)
            wgt_wgsl_add(t, "                s%d = fma(vec4<f32>(a%d.%c), kv, s%d);\n", i, i / 4, comp[i % 4], i);
        wgt_wgsl_add(t, "                }\n");
    }
    wgt_wgsl_add(t, "            }\n");
}

/* One chunk of out += P v: VK keys of v from the buffer at vb, the probabilities of the
 * invocation's rows from pt; o<i>_<c> is row i's vec4 unit lane + 16 c. */
static void pv_step(wgt_wgsl_text *t, const shape_info *s) {
    int unroll = s->vk < UNROLL ? s->vk : UNROLL;
    wgt_wgsl_add(t, "            for (var kl = 0u; kl < VK; kl = kl + %du) {\n", unroll);
    for (int u = 0; u < unroll; u++) {
        wgt_wgsl_add(t, "                {\n                let kr = vb + (kl + %du) * DVU;\n", u);
        for (int g = 0; g < s->rows / 4; g++)
            wgt_wgsl_add(t, "                let p%d = pt[(vc * VK + kl + %du) * 16u + RG * ty + %du];\n", g, u, g);
        for (int c = 0; c < s->nv; c++) {
            /* A lane past the last unit reads the last one again; its result is never stored. */
            if (16 * (c + 1) > s->dvu)
                wgt_wgsl_add(t, "                let w%d = stage[kr + min(tx + %du, DVU - 1u)];\n", c, 16 * c);
            else
                wgt_wgsl_add(t, "                let w%d = stage[kr + tx + %du];\n", c, 16 * c);
        }
        for (int i = 0; i < s->rows; i++)
            for (int c = 0; c < s->nv; c++)
                wgt_wgsl_add(t, "                o%d_%d = fma(vec4<f32>(p%d.%c), w%d, o%d_%d);\n", i, c, i / 4, comp[i % 4], c,
                             i, c);
        wgt_wgsl_add(t, "                }\n");
    }
    wgt_wgsl_add(t, "            }\n");
}

/* Row i of the invocation: query row i0 + 4 (RG ty + i / 4) + i % 4. */
static void row_expr(char *buf, size_t size, int i) { snprintf(buf, size, "i0 + 4u * (RG * ty + %du) + %du", i / 4, i % 4); }

static void softmax_text(wgt_wgsl_text *scale, wgt_wgsl_text *mask, wgt_wgsl_text *row_max, wgt_wgsl_text *soft,
                         const shape_info *s) {
    char row[64];
    for (int i = 0; i < s->rows; i++) {
        row_expr(row, sizeof row, i);
        wgt_wgsl_add(scale, "        s%d = s%d * params.scale_log2;\n", i, i);
        wgt_wgsl_add(mask, "            s%d = masked(s%d, %s, k0 + 4u * tx, off, ninf);\n", i, i, row);
    }
    for (int g = 0; g < s->rows / 4; g++) {
        int r = 4 * g;
        wgt_wgsl_add(row_max, "        stage[tx * 16u + RG * ty + %du] = vec4<f32>(max4(s%d), max4(s%d), max4(s%d), max4(s%d));\n",
                     g, r, r + 1, r + 2, r + 3);
        wgt_wgsl_add(soft,
                     "        {\n"
                     "            let mn = max(m%d, combine_max(RG * ty + %du));\n"
                     "            let al = select(vec4<f32>(1.0), exp2(m%d - mn), m%d > ninf4);\n"
                     "            m%d = mn;\n",
                     g, g, g, g, g);
        for (int j = 0; j < 4; j++)
            wgt_wgsl_add(soft, "            s%d = select(vec4<f32>(0.0), exp2(s%d - vec4<f32>(mn.%c)), s%d > ninf4);\n", r + j,
                         r + j, comp[j], r + j);
        wgt_wgsl_add(soft, "            l%d = l%d * al + vec4<f32>(sum4(s%d), sum4(s%d), sum4(s%d), sum4(s%d));\n", g, g, r,
                     r + 1, r + 2, r + 3);
        for (int j = 0; j < 4; j++)
            for (int c = 0; c < s->nv; c++) wgt_wgsl_add(soft, "            o%d_%d = o%d_%d * al.%c;\n", r + j, c, r + j, c, comp[j]);
        for (int j = 0; j < 4; j++)
            wgt_wgsl_add(soft, "            pt[(4u * tx + %du) * 16u + RG * ty + %du] = vec4<f32>(s%d.%c, s%d.%c, s%d.%c, s%d.%c);\n",
                         j, g, r, comp[j], r + 1, comp[j], r + 2, comp[j], r + 3, comp[j]);
        wgt_wgsl_add(soft, "        }\n");
    }
}

static void finish_text(wgt_wgsl_text *sum, wgt_wgsl_text *finish, const shape_info *s) {
    char row[64];
    for (int g = 0; g < s->rows / 4; g++) {
        wgt_wgsl_add(sum, "    stage[tx * 16u + RG * ty + %du] = l%d;\n", g, g);
        wgt_wgsl_add(finish, "    {\n        let ls = combine_sum(RG * ty + %du);\n        let inv = 1.0 / ls;\n", g);
        for (int j = 0; j < 4; j++) {
            row_expr(row, sizeof row, 4 * g + j);
            wgt_wgsl_add(finish, "        if (%s < params.lq) {\n", row);
            for (int c = 0; c < s->nv; c++)
                wgt_wgsl_add(finish, "            store(o_first + (%s) * DV, tx + %du, select(o%d_%d * inv.%c, nan4, ls.%c == 0.0));\n",
                             row, 16 * c, 4 * g + j, c, comp[j], comp[j]);
            wgt_wgsl_add(finish, "        }\n");
        }
        wgt_wgsl_add(finish, "    }\n");
    }
}

static const char *storage_type(wgt_dtype dtype, int vec) {
    if (dtype == WGT_F16) return vec ? "vec2<u32>" : "u32";
    return vec ? "vec4<f32>" : "f32";
}

static char *build_attention(wgt_webgpu *w, const void *arg) {
    (void)w;
    const attention_kernel *k = arg;
    const char *text = wgt_wgsl_source("attention");
    if (!text) return NULL;
    shape_info s = info_of(k);
    enum { LOADS, ACC, SDECL, QKF, QKP, QKFN, QKPN, SSTEP, SSCALE, SMASK, RMAX, SOFT, VF, VP, VFN, VPN, PV, RSUM, FIN, NT };
    wgt_wgsl_text t[NT];
    memset(t, 0, sizeof t);
    wgt_wgpu_attention_load_fn(&t[LOADS], "q", k->dtype, k->q_vec);
    wgt_wgpu_attention_load_fn(&t[LOADS], "k", k->dtype, k->k_vec);
    wgt_wgpu_attention_load_fn(&t[LOADS], "v", k->dtype, k->v_vec);
    for (int g = 0; g < s.rows / 4; g++) wgt_wgsl_add(&t[ACC], "    var m%d = ninf4;\n    var l%d = vec4<f32>(0.0);\n", g, g);
    for (int i = 0; i < s.rows; i++) {
        for (int c = 0; c < s.nv; c++) wgt_wgsl_add(&t[ACC], "    var o%d_%d = vec4<f32>(0.0);\n", i, c);
        wgt_wgsl_add(&t[SDECL], "        var s%d = vec4<f32>(0.0);\n", i);
    }
    for (int n = 0; n < s.qkn; n++) wgt_wgsl_add(&t[ACC], "    var pq%d: vec4<f32>;\n    var pk%d: vec4<f32>;\n", n, n);
    for (int n = 0; n < s.vn; n++) wgt_wgsl_add(&t[ACC], "    var pv%d: vec4<f32>;\n", n);
    qk_fetch(&t[QKF], &s, "cc");
    qk_put(&t[QKP], &s, "0u");
    qk_fetch(&t[QKFN], &s, "cn");
    qk_put(&t[QKPN], &s, "nb");
    s_step(&t[SSTEP], &s);
    softmax_text(&t[SSCALE], &t[SMASK], &t[RMAX], &t[SOFT], &s);
    v_fetch(&t[VF], &s, "vc");
    v_put(&t[VP], &s, "0u");
    v_fetch(&t[VFN], &s, "cn");
    v_put(&t[VPN], &s, "nb");
    pv_step(&t[PV], &s);
    finish_text(&t[RSUM], &t[FIN], &s);
    const char *store;
    if (k->dtype == WGT_F16)
        store = "let w = (first + 4u * u) / 2u;\n"
                "    if (4u * u < DV) { out[w] = f16_half(x.x) | (f16_half(x.y) << 16u); }\n"
                "    if (4u * u + 2u < DV) { out[w + 1u] = f16_half(x.z) | (f16_half(x.w) << 16u); }";
    else if (k->dv % 4 == 0)
        store = "if (u < DVU) { out[first / 4u + u] = x; }";
    else
        store = "for (var e = 0u; e < 4u; e = e + 1u) {\n"
                "        if (4u * u + e < DV) { out[first + 4u * u + e] = x[e]; }\n"
                "    }";
    /* The key count sits before the output among the storage bindings (the last is written). */
    int counted = k->count != WGT_F32;
    const char *count_decl = wgt_wgpu_attention_count_wgsl(k->count);
    const char *count_load = counted ? "    lk_valid = key_count();" : "";
    char wg[16], rg[16], d[16], dv[16], dvu[16], vk[16];
    snprintf(wg, sizeof wg, "%d", s.wg);
    snprintf(rg, sizeof rg, "%d", k->rg);
    snprintf(d, sizeof d, "%d", k->d);
    snprintf(dv, sizeof dv, "%d", k->dv);
    snprintf(dvu, sizeof dvu, "%d", s.dvu);
    snprintf(vk, sizeof vk, "%d", s.vk);
    char *result = NULL;
    int failed = 0;
    for (int i = 0; i < NT; i++) failed |= t[i].failed || !t[i].s;
    if (!failed) {
        const char *pairs[] = {"Q_STORAGE", storage_type(k->dtype, k->q_vec), "K_STORAGE", storage_type(k->dtype, k->k_vec),
                               "V_STORAGE", storage_type(k->dtype, k->v_vec),
                               "OUT_STORAGE", storage_type(k->dtype, k->dtype == WGT_F32 && k->dv % 4 == 0),
                               "COUNT_DECL", count_decl, "COUNT_LOAD", count_load, "OUT_BINDING", counted ? "4" : "3",
                               "PARAMS_BINDING", counted ? "5" : "4", "VIEWS", wgt_wgpu_attention_views_wgsl, "BASES", wgt_wgpu_attention_bases_wgsl, "WG", wg, "RG", rg, "D", d, "DV", dv, "DVU", dvu, "VK", vk, "LOADS", t[LOADS].s,
                               "STORE", store, "ACC_DECL", t[ACC].s, "S_DECL", t[SDECL].s, "QK_FETCH", t[QKF].s,
                               "QK_PUT", t[QKP].s, "QK_FETCH_NEXT", t[QKFN].s, "QK_PUT_NEXT", t[QKPN].s,
                               "S_STEP", t[SSTEP].s, "S_SCALE", t[SSCALE].s, "S_MASK", t[SMASK].s, "ROW_MAX", t[RMAX].s,
                               "SOFTMAX", t[SOFT].s, "V_FETCH", t[VF].s, "V_PUT", t[VP].s, "V_FETCH_NEXT", t[VFN].s,
                               "V_PUT_NEXT", t[VPN].s, "PV_STEP", t[PV].s, "ROW_SUM", t[RSUM].s, "FINISH", t[FIN].s,
                               NULL};
        result = wgt_wgsl_expand(text, pairs);
    }
    for (int i = 0; i < NT; i++) free(t[i].s);
    return result;
}

/* ---- dispatch -------------------------------------------------------------------------- */

/* A stride as the kernel sees it: 0 for a length-1 dimension, whose stride is never used and
 * may not fit in 32 bits. */
static int32_t stride32(int64_t len, int64_t stride) { return len == 1 ? 0 : (int32_t)stride; }

/* The views' fields in a WGSL struct, as wgt_wgpu_attention_views lays them out. */
const char wgt_wgpu_attention_views_wgsl[] =
    "    q_offset: u32,       // element offsets of the views\n"
    "    k_offset: u32,\n"
    "    v_offset: u32,\n"
    "    batch_ndim: u32,\n"
    "    q_sr: i32,           // strides of the rows and of the head dimension, in elements\n"
    "    q_sd: i32,\n"
    "    k_sr: i32,\n"
    "    k_sd: i32,\n"
    "    v_sr: i32,\n"
    "    v_sd: i32,\n"
    "    pad2: u32,\n"
    "    pad3: u32,\n"
    "    batch_shape: array<vec4<u32>, 2>,\n"
    "    q_batch: array<vec4<i32>, 2>,  // strides of the batch dimensions (0 where broadcast)\n"
    "    k_batch: array<vec4<i32>, 2>,\n"
    "    v_batch: array<vec4<i32>, 2>,";

/* The storage indices of batch element bi's first elements in q, k and v (x, y, z). */
const char wgt_wgpu_attention_bases_wgsl[] =
    "fn view_bases(bi: u32) -> vec3<u32> {\n"
    "    var b = vec3<u32>(params.q_offset, params.k_offset, params.v_offset);\n"
    "    var rest = bi;\n"
    "    for (var d = i32(params.batch_ndim) - 1; d >= 0; d = d - 1) {\n"
    "        let n = params.batch_shape[d / 4][d % 4];\n"
    "        let c = rest % n;\n"
    "        rest = rest / n;\n"
    "        b = b + c * vec3<u32>(u32(params.q_batch[d / 4][d % 4]), u32(params.k_batch[d / 4][d % 4]),\n"
    "                              u32(params.v_batch[d / 4][d % 4]));\n"
    "    }\n"
    "    return b;\n"
    "}\n";

/* Rounded to f32 as the kernels compute; beyond f32's range it is infinite (converting an
 * out-of-range double is undefined in C). */
float wgt_wgpu_attention_scale_log2(double scale) {
    double scale_log2 = scale * 1.4426950408889634;
    return scale_log2 > FLT_MAX ? INFINITY : (float)scale_log2;
}

const char *wgt_wgpu_attention_count_wgsl(wgt_dtype count) {
    if (count == WGT_I32)
        return "@group(0) @binding(3) var<storage, read> kcount: array<u32>;\n"
               "fn key_count() -> u32 {\n"
               "    return u32(clamp(bitcast<i32>(kcount[params.count_offset]), 0, i32(params.lk)));\n}";
    if (count == WGT_U32)
        return "@group(0) @binding(3) var<storage, read> kcount: array<u32>;\n"
               "fn key_count() -> u32 { return min(kcount[params.count_offset], params.lk); }";
    return "";
}

uint64_t wgt_wgpu_attention_views_of(const wgt_operand *out, const wgt_operand *q, const wgt_operand *k,
                                     const wgt_operand *v, wgt_wgpu_attention_views *p) {
    int nd = out->ndim, bnd = nd - 2;
    int64_t lq = q->shape[nd - 2], lk = k->shape[nd - 2], d = q->shape[nd - 1], dv = v->shape[nd - 1];
    uint64_t batch = 1;
    memset(p, 0, sizeof *p);
    for (int i = 0; i < bnd; i++) {
        batch *= (uint64_t)out->shape[i];
        p->batch_shape[i] = (uint32_t)out->shape[i];
        p->q_batch[i] = stride32(out->shape[i], q->strides[i]);
        p->k_batch[i] = stride32(out->shape[i], k->strides[i]);
        p->v_batch[i] = stride32(out->shape[i], v->strides[i]);
    }
    p->batch_ndim = (uint32_t)bnd;
    p->q_offset = (uint32_t)q->offset;
    p->k_offset = (uint32_t)k->offset;
    p->v_offset = (uint32_t)v->offset;
    p->q_sr = stride32(lq, q->strides[nd - 2]);
    p->q_sd = stride32(d, q->strides[nd - 1]);
    p->k_sr = stride32(lk, k->strides[nd - 2]);
    p->k_sd = stride32(d, k->strides[nd - 1]);
    p->v_sr = stride32(lk, v->strides[nd - 2]);
    p->v_sd = stride32(dv, v->strides[nd - 1]);
    return batch;
}

/* Whether x can be read in 16-byte units along its head dimension (the last): dense there,
 * a multiple of 4 long, and every row of every batch element starting on a unit. */
int wgt_wgpu_attention_unit_reads(const wgt_operand *x) {
    int nd = x->ndim;
    if (x->shape[nd - 1] % 4 || x->strides[nd - 1] != 1 || x->offset % 4) return 0;
    if (x->buffer->size < (x->dtype == WGT_F16 ? 8u : 16u)) return 0;
    for (int i = 0; i < nd - 1; i++)
        if (x->shape[i] != 1 && x->strides[i] % 4) return 0;
    return 1;
}

int wgt_wgpu_attention_fits(wgt_backend *be, wgt_dtype dtype, int64_t d, int64_t dv) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    const WGPULimits *l = &w->limits.limits;
    if (dtype != WGT_F32 && dtype != WGT_F16) return 0;
    /* f16 outputs are written a whole u32 word (two values of a row) at a time. */
    if (d < 1 || d > 65536 || dv < 1 || dv > MAX_DV || (dtype == WGT_F16 && dv % 2)) return 0;
    return l->maxComputeWorkgroupStorageSize >= SHARED_BYTES && l->maxComputeInvocationsPerWorkgroup >= 256 &&
           l->maxComputeWorkgroupSizeX >= 256;
}

/* Blocks of 64 queries: the kernel runs one workgroup per block of each batch element. */
static uint64_t row_blocks_of(int64_t lq) { return ((uint64_t)lq + 63) / 64; }

/* Each workgroup walks all the keys of its 64 queries alone, so the kernel is as fast as its
 * workgroups are many; the composition's products spread any shape over the whole GPU but
 * hold the [Lq, Lk] scores in memory, and under a causal mask compute every score and build
 * the mask as well. On an NVIDIA H200 (132 multiprocessors; 32 heads of D = 128 unless
 * said, kernel against composition, ms of GPU time):
 * - one query over 8192 keys (32 workgroups) 1.58 against 0.11; 16 or 64 queries 1.58
 *   against 0.33 and 0.58; 8 heads of 64 queries over 4096 keys 0.78 against 0.10;
 * - without a mask and 128 to 256 workgroups the composition still wins by 1.25 to 1.35
 *   (8 heads of 1024 queries over 4096 keys, 0.79 against 0.63), but its scores there take
 *   256 MB to 512 MB;
 * - causal from 128 workgroups the kernel wins by 1.2 to 8 (256 x 256: 0.059 against 0.071;
 *   4 heads of 4096 x 4096: 0.78 against 6.1), below that by up to 1.16 the composition
 *   (128 queries over 2048 keys, 64 workgroups: 0.40 against 0.35).
 * So the composition runs where the kernel has fewer workgroups than about one per
 * multiprocessor, unless it is causal over 64 queries or more (the mask's cost grows with
 * them) or its scores would take more than PAYS_MAX_SCORE_BYTES (or one binding's reach).
 *
 * f16 where the products run on subgroup matrices (matmul_sgmatrix.c; the wasm build in Node
 * with unsafeNvidiaF16 on an H200, 8 x 12 heads of 1024 queries over 1024 keys, kernel against
 * composition): without a mask the composition wins, 1.505 against 1.133 ms at D = 64 and
 * 2.951 against 1.174 at D = 128 (its products reach 206 TFLOP/s where this kernel runs f16 at
 * 17); causal, the kernel keeps D = 64 (0.801 against 1.316) and is close at D = 128 (1.492
 * against 1.354). So f16 without a mask, from 128 queries and keys, composes there while its
 * f16 scores fit PAYS_MAX_SCORE_BYTES, unless the subgroup-matrix attention kernel was asked
 * for (WGT_SGMATRIX_ATTENTION=1). Its scores are rounded to f16 once, as PyTorch's own
 * composed f16 attention rounds them; WGT_ATTENTION=kernel keeps f32 scores. */
#define PAYS_MIN_GROUPS 128u
#define PAYS_MAX_SCORE_BYTES (256ull << 20)

int wgt_wgpu_attention_pays(wgt_backend *be, wgt_dtype dtype, uint64_t batch, int64_t lq, int64_t lk, int causal) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    if (dtype == WGT_F16 && w->sgm_usable && !w->sgm_emulated && !w->sga_wanted && !causal && lq >= 128 && lk >= 128 &&
        (double)batch * (double)lq * (double)lk * 2.0 <= (double)PAYS_MAX_SCORE_BYTES)
        return 0;
    if (batch * row_blocks_of(lq) >= PAYS_MIN_GROUPS || (causal && lq >= 64)) return 1;
    uint64_t limit = w->limits.limits.maxStorageBufferBindingSize;
    if (limit > PAYS_MAX_SCORE_BYTES) limit = PAYS_MAX_SCORE_BYTES;
    return (double)batch * (double)lq * (double)lk * 4.0 > (double)limit;
}

wgt_status wgt_wgpu_attention(wgt_backend *be, const wgt_operand *out, const wgt_operand *q, const wgt_operand *k,
                              const wgt_operand *v, const wgt_operand *count, int causal, double scale) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    int nd = out->ndim;
    if (nd < 2 || nd > WGT_MAX_DIMS || q->ndim != nd || k->ndim != nd || v->ndim != nd)
        return wgt_error(WGT_ERR_INTERNAL, "attention operands of rank %d, %d, %d -> %d", q->ndim, k->ndim, v->ndim, nd);
    if (out->offset != 0) return wgt_error(WGT_ERR_INTERNAL, "attention output at offset %lld", (long long)out->offset);
    int64_t lq = q->shape[nd - 2], lk = k->shape[nd - 2], d = q->shape[nd - 1], dv = v->shape[nd - 1];
    if (!wgt_wgpu_attention_fits(be, q->dtype, d, dv) || lk < 1)
        return wgt_error(WGT_ERR_INTERNAL, "attention kernel given %s, D = %lld, DV = %lld, Lk = %lld",
                         wgt_dtype_name(q->dtype), (long long)d, (long long)dv, (long long)lk);
    /* Few query rows over many keys: the keys split over the GPU (attention_split.c). */
    wgt_status split_st;
    if (wgt_wgpu_attention_split(w, out, q, k, v, count, causal, scale, &split_st)) return split_st;
    /* f16 on tensor cores where the device multiplies through subgroup matrices; that kernel
     * reads no key count. */
    if (!count && wgt_wgpu_attention_sgmatrix_takes(w, q, k, v)) return wgt_wgpu_attention_sgmatrix(w, out, q, k, v, causal, scale);
    attention_params p;
    memset(&p, 0, sizeof p);
    uint64_t batch = wgt_wgpu_attention_views_of(out, q, k, v, &p.views);
    uint64_t row_blocks = row_blocks_of(lq), groups = batch * row_blocks;
    if (groups == 0) return WGT_OK;
    if (groups > UINT32_MAX || batch * (uint64_t)lq * (uint64_t)dv > UINT32_MAX)
        return wgt_error(WGT_ERR_LIMIT, "attention over %llu batch elements of %lld queries is beyond 32-bit indexing",
                         (unsigned long long)batch, (long long)lq);
    p.lq = (uint32_t)lq;
    p.lk = (uint32_t)lk;
    p.batch = (uint32_t)batch;
    p.row_blocks = (uint32_t)row_blocks;
    p.groups = (uint32_t)groups;
    p.causal = causal != 0;
    p.scale_log2 = wgt_wgpu_attention_scale_log2(scale);
    p.neg_inf_bits = 0xff800000u;
    p.nan_bits = 0x7fc00000u;
    p.count_offset = count ? (uint32_t)count->offset : 0;

    attention_kernel kern;
    memset(&kern, 0, sizeof kern);
    kern.dtype = q->dtype;
    kern.d = (int)d;
    kern.dv = (int)dv;
    kern.q_vec = wgt_wgpu_attention_unit_reads(q);
    kern.k_vec = wgt_wgpu_attention_unit_reads(k);
    kern.v_vec = wgt_wgpu_attention_unit_reads(v);
    kern.rg = ROW_GROUPS;
    kern.count = count ? count->dtype : WGT_F32;
    char key[96];
    snprintf(key, sizeof key, "attention:%s:d%d:dv%d:v%d%d%d:r%d:c%s", wgt_dtype_name(kern.dtype), kern.d, kern.dv,
             kern.q_vec, kern.k_vec, kern.v_vec, kern.rg, count ? wgt_dtype_name(count->dtype) : "-");
    wgt_pipeline *pl;
    wgt_status st = wgt_wgpu_pipeline(w, key, count ? 5 : 4, build_attention, &kern, &pl);
    if (st != WGT_OK) return st;
    /* Without a count the output is binding 3 (the fifth entry goes unused). */
    wgt_buffer *buffers[5] = {q->buffer, k->buffer, v->buffer, count ? count->buffer : out->buffer, out->buffer};
    return wgt_wgpu_dispatch(w, pl, buffers, &p, sizeof p, groups);
}
