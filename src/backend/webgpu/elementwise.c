/*
 * The elementwise kernel runner shared by every elementwise op family on WebGPU (binary,
 * unary, casts, comparisons, where): one WGSL template, filled per (op, input types, output
 * type, how each input is read, vector or tail kernel) with the bindings, the loads, the
 * stores, the op's helper functions and its expression, and cached as a pipeline. f16 is
 * stored packed two to a u32 and computed in f32, so it works on devices without
 * shader-f16. The strided copy is the runner's identity op.
 *
 * Each invocation computes four consecutive elements in a grid-stride loop: a vector kernel
 * covers the whole quads with vector loads (dense inputs at offsets divisible by 4, rows
 * repeated along leading dimensions) and one vector store, and a tail kernel the last one to
 * three elements (elementwise_access.h, whose functions the fused kernels share). The op
 * runs once per element, as before, so results are the same bits.
 *
 * Helper functions come as named pieces with dependencies (wgt_wgsl_piece), so a kernel that
 * calls several, such as a fused chain of ops, holds each once; the NaN and infinity prelude
 * every float op family shares is defined here.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elementwise_access.h"
#include "webgpu_internal.h"

/* The narrow integer types compute in i32 or u32 and bf16 in f32; every type narrower than
 * 4 bytes is stored packed in u32 words (lanes of 8 or 16 bits, element e in word
 * e / lanes at bit (e % lanes) * bits), written only as whole words. */
const char *wgt_wgpu_compute_type(wgt_dtype d) {
    switch (d) {
    case WGT_I32: case WGT_I8: case WGT_I16: return "i32";
    case WGT_U32: case WGT_U8: case WGT_U16: case WGT_BOOL: return "u32";
    default: return "f32";
    }
}
const char *wgt_wgpu_storage_type(wgt_dtype d) { return wgt_dtype_size(d) < 4 ? "u32" : wgt_wgpu_compute_type(d); }

/* Bits of one element of a packed type (0 for the 4-byte types). */
static unsigned lane_bits(wgt_dtype d) { return wgt_dtype_size(d) < 4 ? 8u * (unsigned)wgt_dtype_size(d) : 0u; }

/* NaN and infinity come from private variables, because WGSL rejects a constant expression
 * that evaluates to either; NaN and infinity tests look at the bits, because a driver may
 * compile float compares as if NaN could not occur. */
const wgt_wgsl_piece wgt_wgsl_float_bits = {
    "var<private> wgt_nan_bits: u32 = 0x7fc00000u;\n"
    "var<private> wgt_inf_bits: u32 = 0x7f800000u;\n"
    "fn wgt_nan() -> f32 { return bitcast<f32>(wgt_nan_bits); }\n"
    "fn wgt_inf() -> f32 { return bitcast<f32>(wgt_inf_bits); }\n"
    "fn wgt_is_nan(v: f32) -> bool { return (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u; }\n"
    "fn wgt_is_inf(v: f32) -> bool { return (bitcast<u32>(v) & 0x7fffffffu) == 0x7f800000u; }\n"
    "fn wgt_sign_bit(v: f32) -> bool { return (bitcast<u32>(v) & 0x80000000u) != 0u; }\n"
    "fn wgt_with_sign(mag: f32, negative: bool) -> f32 {\n"
    "    return bitcast<f32>((bitcast<u32>(mag) & 0x7fffffffu) | select(0u, 0x80000000u, negative));\n"
    "}\n",
    {NULL}};

/* unpack2x16float may give any NaN for an f16 NaN, and NVIDIA's drops the sign (signbit and
 * copysign read -NaN as +NaN there): NaN lanes take the sign from the bits. The rest of the
 * NaN is the driver's, the same NaN its arithmetic gives, so a value unpacked and one computed
 * in a fused kernel keep agreeing bit for bit. */
const wgt_wgsl_piece wgt_wgsl_unpack_f16 = {
    "fn wgt_unpack_f16(w: u32) -> vec2<f32> {\n"
    "    let h = vec2<u32>(w & 0xffffu, w >> 16u);\n"
    "    let v = unpack2x16float(w);\n"
    "    let signed = bitcast<vec2<f32>>((bitcast<vec2<u32>>(v) & vec2<u32>(0x7fffffffu))\n"
    "                                    | ((h & vec2<u32>(0x8000u)) << vec2<u32>(16u)));\n"
    "    return select(v, signed, (h & vec2<u32>(0x7fffu)) > vec2<u32>(0x7c00u));\n"
    "}\n",
    {NULL}};

/* Subnormal inputs, read from their bits: a GPU may treat them as zero in arithmetic and
 * comparisons (WGSL allows it), and lavapipe's log2 misreads them, so the functions that
 * honour them test and rescale them on the bits. */
const wgt_wgsl_piece wgt_wgsl_subnormal = {
    "fn wgt_is_zero(v: f32) -> bool { return (bitcast<u32>(v) << 1u) == 0u; }\n"
    "fn wgt_is_subnormal(v: f32) -> bool {\n"
    "    let b = bitcast<u32>(v);\n"
    "    return (b & 0x7f800000u) == 0u && (b & 0x7fffffu) != 0u;\n"
    "}\n"
    /* v 2^24 for subnormal v: its significand as an integer (exact in f32) times 2^-125. */
    "fn wgt_subnormal_scaled(v: f32) -> f32 {\n"
    "    let b = bitcast<u32>(v);\n"
    "    return wgt_with_sign(f32(b & 0x7fffffu) * bitcast<f32>(0x01000000u), (b >> 31u) != 0u);\n"
    "}\n"
    /* v 2^64 exactly (subnormals from their bits), for |v| < 2^64 */
    "fn wgt_scale_up64(v: f32) -> f32 {\n"
    "    if (wgt_is_subnormal(v)) { return wgt_subnormal_scaled(v) * 1099511627776.0; }\n" /* 2^24 2^40 */
    "    return v * 18446744073709551616.0;\n" /* 2^64 */
    "}\n",
    {&wgt_wgsl_float_bits}};

void wgt_wgsl_pieces_add(wgt_wgsl_pieces *set, const wgt_wgsl_piece *piece) {
    if (!piece) return;
    for (int i = 0; i < set->count; i++)
        if (set->list[i] == piece) return;
    for (int d = 0; d < WGT_WGSL_PIECE_DEPS; d++) wgt_wgsl_pieces_add(set, piece->deps[d]);
    if (set->count < WGT_WGSL_MAX_PIECES) set->list[set->count++] = piece;
    else set->overflow = 1; /* text() then fails: a missing function must not compile silently */
}

char *wgt_wgsl_pieces_text(const wgt_wgsl_pieces *set) {
    size_t n = 1;
    if (set && set->overflow) return NULL;
    for (int i = 0; set && i < set->count; i++) n += set->list[i]->text ? strlen(set->list[i]->text) : 0;
    char *text = malloc(n), *at = text;
    if (!text) return NULL;
    for (int i = 0; set && i < set->count; i++) {
        const char *t = set->list[i]->text; /* NULL: a piece that only gathers others */
        if (!t) continue;
        memcpy(at, t, strlen(t));
        at += strlen(t);
    }
    *at = '\0';
    return text;
}

/* ---- input access: shared with the fused kernels (elementwise_access.h) ---- */

wgt_wgpu_access wgt_wgpu_classify_input(const wgt_operand *in, int ndim, const int64_t *shape, int vector) {
    wgt_wgpu_access a = {WGT_ACCESS_STRIDED, (uint32_t)in->offset, 1, 1};
    if (wgt_wgpu_is_fixed(in, ndim, shape)) {
        a.kind = WGT_ACCESS_FIXED;
        return a;
    }
    /* The vector loads read 4-byte types and f16 pairs; the narrow types read lane by lane. */
    int narrow = in->dtype != WGT_F16 && wgt_dtype_size(in->dtype) < 4;
    if (wgt_wgpu_is_dense(in, ndim, shape)) {
        a.kind = vector && !narrow && a.offset % 4 == 0 ? WGT_ACCESS_VECTOR : WGT_ACCESS_DENSE;
        return a;
    }
    /* From the innermost dimension: broadcast ones (inner), then dense ones (mid), then
     * only broadcast ones; dimensions of size 1 fit anywhere. */
    int64_t inner = 1, mid = 1;
    int d = ndim - 1;
    for (; d >= 0 && (shape[d] == 1 || in->strides[d] == 0); d--) inner *= shape[d];
    for (; d >= 0 && (shape[d] == 1 || in->strides[d] == mid); d--) mid *= shape[d];
    for (; d >= 0; d--)
        if (shape[d] != 1 && in->strides[d] != 0) return a;
    a.kind = WGT_ACCESS_BLOCK;
    a.inner = (uint32_t)inner;
    a.mid = (uint32_t)mid;
    if (vector && !narrow && inner == 1 && mid % 4 == 0 && a.offset % 4 == 0) a.kind = WGT_ACCESS_ROW;
    else if (vector && inner % 4 == 0) a.kind = WGT_ACCESS_SPLAT;
    return a;
}

char wgt_wgpu_access_letter(wgt_wgpu_access_kind kind) {
    return (unsigned)kind < WGT_ACCESS_KINDS ? "VDFRSBG"[kind] : '?';
}

/* Four 16-bit values are two words: vec2<u32>; four 8-bit ones one word. */
static const char *quad_type(wgt_dtype d) {
    if (wgt_dtype_size(d) == 1) return "u32";
    return d == WGT_F32 ? "vec4<f32>" : d == WGT_I32 ? "vec4<i32>" : d == WGT_U32 ? "vec4<u32>" : "vec2<u32>";
}

const char *wgt_wgpu_access_storage_type(wgt_wgpu_access_kind kind, wgt_dtype dtype) {
    return kind == WGT_ACCESS_VECTOR || kind == WGT_ACCESS_ROW ? quad_type(dtype) : wgt_wgpu_storage_type(dtype);
}

const char *wgt_wgpu_output_storage_type(wgt_dtype dtype, int vector) {
    return vector ? quad_type(dtype) : wgt_wgpu_storage_type(dtype);
}

/* Appends to dst; 0 when it does not fit. */
static int append(char *dst, size_t size, const char *fmt, ...) WGT_PRINTF(3, 4);
static int append(char *dst, size_t size, const char *fmt, ...) {
    size_t len = strlen(dst);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(dst + len, size - len, fmt, ap);
    va_end(ap);
    return n >= 0 && (size_t)n < size - len;
}

int wgt_wgpu_load_wgsl(char *dst, size_t size, int k, wgt_dtype dtype, wgt_wgpu_access_kind kind,
                       const wgt_wgpu_access_exprs *e, int vector) {
    const char *t = wgt_wgpu_compute_type(dtype);
    int f16 = dtype == WGT_F16, ok = 1;
    static const char *const quad[4] = {"i", "i + 1u", "i + 2u", "i + 3u"};
    static const char *const clamped[4] = {"e.x", "e.y", "e.z", "e.w"};
    const char *const *lane = vector ? quad : clamped;
    int vector_load = kind == WGT_ACCESS_VECTOR || kind == WGT_ACCESS_ROW;
    if (vector_load && !vector) return 0; /* tail kernels load element by element */
    if (!vector_load) {
        unsigned bits = lane_bits(dtype), shift = bits == 8 ? 2u : 1u;
        if (f16) ok &= append(dst, size, "fn fetch%d(e: u32) -> f32 { return wgt_unpack_f16(%s[e >> 1u])[e & 1u]; }\n", k, e->array);
        else if (dtype == WGT_BF16) /* the high half of an f32 */
            ok &= append(dst, size, "fn fetch%d(e: u32) -> f32 { return bitcast<f32>(((%s[e >> 1u] >> ((e & 1u) * 16u)) & 0xffffu) << 16u); }\n",
                         k, e->array);
        else if (bits) /* extractBits sign-extends an i32 lane */
            ok &= append(dst, size, "fn fetch%d(e: u32) -> %s { return extractBits(%s(%s[e >> %uu]), (e & %uu) * %uu, %uu); }\n",
                         k, t, t, e->array, shift, (1u << shift) - 1u, bits, bits);
        else ok &= append(dst, size, "fn fetch%d(e: u32) -> %s { return %s[e]; }\n", k, t, e->array);
    }
    ok &= append(dst, size, "fn load%d(i: u32) -> vec4<%s> {\n", k, t);
    if (!vector) ok &= append(dst, size, "    let e = min(vec4<u32>(i) + vec4<u32>(0u, 1u, 2u, 3u), vec4<u32>(params.end - 1u));\n");
    switch (kind) {
    case WGT_ACCESS_VECTOR:
    case WGT_ACCESS_ROW: {
        char index[160];
        if (kind == WGT_ACCESS_VECTOR) snprintf(index, sizeof index, "(%s + i) >> 2u", e->offset);
        else snprintf(index, sizeof index, "(%s + i %% %s) >> 2u", e->offset, e->mid);
        if (f16)
            ok &= append(dst, size, "    let w = %s[%s];\n    return vec4<f32>(wgt_unpack_f16(w.x), wgt_unpack_f16(w.y));\n",
                         e->array, index);
        else ok &= append(dst, size, "    return %s[%s];\n", e->array, index);
        break;
    }
    case WGT_ACCESS_FIXED: ok &= append(dst, size, "    return vec4<%s>(fetch%d(%s));\n", t, k, e->offset); break;
    case WGT_ACCESS_SPLAT:
        ok &= append(dst, size, "    return vec4<%s>(fetch%d(%s + (%s / %s) %% %s));\n", t, k, e->offset, vector ? "i" : "e.x",
                     e->inner, e->mid);
        break;
    case WGT_ACCESS_BLOCK:
        if (vector) { /* one division for the four: step the coordinates */
            ok &= append(dst, size,
                         "    let n = %s;\n    let m = %s;\n    var r = i %% n;\n    var q = (i / n) %% m;\n    var v: vec4<%s>;\n",
                         e->inner, e->mid, t);
            for (int j = 0; j < 4; j++) {
                ok &= append(dst, size, "    v.%c = fetch%d(%s + q);\n", "xyzw"[j], k, e->offset);
                if (j < 3)
                    ok &= append(dst, size,
                                 "    r = r + 1u;\n    if (r == n) { r = 0u; q = q + 1u; if (q == m) { q = 0u; } }\n");
            }
            ok &= append(dst, size, "    return v;\n");
            break;
        }
        ok &= append(dst, size, "    return vec4<%s>(", t);
        for (int j = 0; j < 4; j++)
            ok &= append(dst, size, "%sfetch%d(%s + (%s / %s) %% %s)", j ? ", " : "", k, e->offset, lane[j], e->inner, e->mid);
        ok &= append(dst, size, ");\n");
        break;
    case WGT_ACCESS_DENSE:
    case WGT_ACCESS_STRIDED:
        ok &= append(dst, size, "    return vec4<%s>(", t);
        for (int j = 0; j < 4; j++) {
            if (kind == WGT_ACCESS_DENSE) ok &= append(dst, size, "%sfetch%d(%s + %s)", j ? ", " : "", k, e->offset, lane[j]);
            else ok &= append(dst, size, "%sfetch%d(element%d(%s))", j ? ", " : "", k, k, lane[j]);
        }
        ok &= append(dst, size, ");\n");
        break;
    default: return 0;
    }
    ok &= append(dst, size, "}\n");
    return ok;
}

int wgt_wgpu_store_wgsl(char *dst, size_t size, int name_index, wgt_dtype dtype, int vector) {
    char out[16] = "out", fn[16] = "store";
    if (name_index >= 0) {
        snprintf(out, sizeof out, "out%d", name_index);
        snprintf(fn, sizeof fn, "store%d", name_index);
    }
    unsigned bits = lane_bits(dtype);
    if (dtype == WGT_BF16 && !append(dst, size, /* nearest even; NaN stays a quiet NaN */
                                     "fn %s_bf16(v: f32) -> u32 {\n"
                                     "    let b = bitcast<u32>(v);\n"
                                     "    if ((b & 0x7fffffffu) > 0x7f800000u) { return (b >> 16u) | 0x40u; }\n"
                                     "    return (b + 0x7fffu + ((b >> 16u) & 1u)) >> 16u;\n}\n", fn))
        return 0;
    int ok = append(dst, size, "fn %s(i: u32, v: vec4<%s>) {\n", fn, wgt_wgpu_compute_type(dtype));
    if (dtype != WGT_F16 && bits) {
        /* Each lane's bits, packed into words; an invocation writes its quad's words whole
         * (the quad starts at a multiple of 4, so no word is shared with another invocation;
         * past the end the lanes repeat the last element, inside the word-rounded buffer). */
        char lane[4][64];
        for (int j = 0; j < 4; j++) {
            if (dtype == WGT_BF16) snprintf(lane[j], sizeof lane[j], "%s_bf16(v.%c)", fn, "xyzw"[j]);
            else snprintf(lane[j], sizeof lane[j], "(u32(v.%c) & 0x%xu)", "xyzw"[j], (1u << bits) - 1u);
        }
        if (bits == 8)
            ok &= append(dst, size, "    %s[i >> 2u] = %s | (%s << 8u) | (%s << 16u) | (%s << 24u);\n", out, lane[0], lane[1],
                         lane[2], lane[3]);
        else if (vector)
            ok &= append(dst, size, "    %s[i >> 2u] = vec2<u32>(%s | (%s << 16u), %s | (%s << 16u));\n", out, lane[0],
                         lane[1], lane[2], lane[3]);
        else
            ok &= append(dst, size,
                         "    %s[i >> 1u] = %s | (%s << 16u);\n"
                         "    if (i + 2u < params.end) { %s[(i >> 1u) + 1u] = %s | (%s << 16u); }\n",
                         out, lane[0], lane[1], out, lane[2], lane[3]);
    } else if (vector && dtype == WGT_F16)
        ok &= append(dst, size, "    %s[i >> 2u] = vec2<u32>(pack2x16float(v.xy), pack2x16float(v.zw));\n", out);
    else if (vector) ok &= append(dst, size, "    %s[i >> 2u] = v;\n", out);
    else if (dtype == WGT_F16) /* whole words; past the end the word repeats the last element */
        ok &= append(dst, size,
                     "    %s[i >> 1u] = pack2x16float(v.xy);\n"
                     "    if (i + 2u < params.end) { %s[(i >> 1u) + 1u] = pack2x16float(v.zw); }\n",
                     out, out);
    else
        ok &= append(dst, size,
                     "    %s[i] = v.x;\n"
                     "    if (i + 1u < params.end) { %s[i + 1u] = v.y; }\n"
                     "    if (i + 2u < params.end) { %s[i + 2u] = v.z; }\n"
                     "    if (i + 3u < params.end) { %s[i + 3u] = v.w; }\n",
                     out, out, out, out);
    ok &= append(dst, size, "}\n");
    return ok;
}

uint64_t wgt_wgpu_quad_workgroups(uint64_t start, uint64_t end, uint32_t max_workgroups) {
    uint64_t quads = (end - start + 3) / 4, groups = (quads + 255) / 256;
    if (max_workgroups == 0) max_workgroups = 65535;
    return groups < max_workgroups ? groups : max_workgroups;
}

/* ---- the elementwise kernel ---- */

/* What build_elementwise needs: the spec, the op's helper functions (or NULL), how each input
 * is read and which of the two kernels (vector or tail) to make. */
typedef struct {
    const wgt_wgpu_elementwise_spec *spec;
    const wgt_wgsl_pieces *helpers;
    wgt_wgpu_access_kind access[3];
    int vector;
} kernel_source;

static char *build_elementwise(wgt_webgpu *w, const void *arg) {
    (void)w;
    const kernel_source *src = arg;
    const wgt_wgpu_elementwise_spec *k = src->spec;
    const char *text = wgt_wgsl_source("elementwise");
    if (!text) return NULL;
    static const char *const names[3] = {"x", "y", "z"};
    static const char *const lanes[4] = {"x", "y", "z", "w"};
    char bindings[768] = "", functions[8192] = "", params_list[192] = "", tmp[512];
    int ok = 1;
    for (int i = 0; i < k->nin; i++) {
        wgt_dtype d = k->in_dtype[i];
        snprintf(tmp, sizeof tmp, "@group(0) @binding(%d) var<storage, read> in%d: array<%s>;\n", i, i,
                 wgt_wgpu_access_storage_type(src->access[i], d));
        strcat(bindings, tmp);
        wgt_wgpu_access_exprs e;
        snprintf(e.offset, sizeof e.offset, "params.offsets.%s", lanes[i]);
        snprintf(e.inner, sizeof e.inner, "params.inner.%s", lanes[i]);
        snprintf(e.mid, sizeof e.mid, "params.mid.%s", lanes[i]);
        snprintf(e.array, sizeof e.array, "in%d", i);
        if (src->access[i] == WGT_ACCESS_STRIDED)
            ok &= append(functions, sizeof functions,
                         "fn element%d(i: u32) -> u32 { return strided_index(i, params.strides%d, params.offsets.%s); }\n",
                         i, i, lanes[i]);
        ok &= wgt_wgpu_load_wgsl(functions, sizeof functions, i, d, src->access[i], &e, src->vector);
        snprintf(tmp, sizeof tmp, "%s%s: %s", i ? ", " : "", names[i], wgt_wgpu_compute_type(d));
        strcat(params_list, tmp);
    }
    const char *t_out = wgt_wgpu_compute_type(k->out_dtype);
    snprintf(tmp, sizeof tmp, "@group(0) @binding(%d) var<storage, read_write> out: array<%s>;\n", k->nin,
             wgt_wgpu_output_storage_type(k->out_dtype, src->vector));
    strcat(bindings, tmp);
    ok &= wgt_wgpu_store_wgsl(functions, sizeof functions, -1, k->out_dtype, src->vector);
    ok &= append(functions, sizeof functions, "fn op(%s) -> %s { return %s; }\n", params_list, t_out, k->expr);
    ok &= append(functions, sizeof functions, "fn value4(i: u32) -> vec4<%s> {\n", t_out);
    for (int i = 0; i < k->nin; i++) ok &= append(functions, sizeof functions, "    let a%d = load%d(i);\n", i, i);
    ok &= append(functions, sizeof functions, "    return vec4<%s>(", t_out);
    for (int j = 0; j < 4; j++) {
        ok &= append(functions, sizeof functions, "%sop(", j ? ", " : "");
        for (int i = 0; i < k->nin; i++) ok &= append(functions, sizeof functions, "%sa%d.%s", i ? ", " : "", i, lanes[j]);
        ok &= append(functions, sizeof functions, ")");
    }
    ok &= append(functions, sizeof functions, ");\n}\n");
    if (!ok) return NULL; /* an op expression too long: no truncated kernel */
    char binding_index[16];
    snprintf(binding_index, sizeof binding_index, "%d", k->nin + 1);
    /* The op's helpers come first so the generated functions can call them; f16 loads call
     * wgt_unpack_f16. */
    wgt_wgsl_pieces pieces = {0};
    if (src->helpers) pieces = *src->helpers;
    for (int i = 0; i < k->nin; i++)
        if (k->in_dtype[i] == WGT_F16) wgt_wgsl_pieces_add(&pieces, &wgt_wgsl_unpack_f16);
    char *helpers = wgt_wgsl_pieces_text(&pieces);
    char *all = helpers ? malloc(strlen(helpers) + strlen(functions) + 2) : NULL;
    if (all) sprintf(all, "%s\n%s", helpers, functions);
    free(helpers);
    if (!all) return NULL;
    const char *pairs[] = {"BINDINGS", bindings, "PARAMS_BINDING", binding_index, "FUNCTIONS", all, NULL};
    char *wgsl = wgt_wgsl_expand(text, pairs);
    free(all);
    return wgsl;
}

int wgt_wgpu_is_fixed(const wgt_operand *in, int ndim, const int64_t *shape) {
    for (int d = 0; d < ndim; d++)
        if (shape[d] != 1 && in->strides[d] != 0) return 0;
    return 1;
}

int wgt_wgpu_is_dense(const wgt_operand *in, int ndim, const int64_t *shape) {
    int64_t s = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        if (shape[d] != 1 && in->strides[d] != s) return 0;
        s *= shape[d];
    }
    return 1;
}

/* The uniform block (struct Params in elementwise.wgsl). */
typedef struct {
    uint32_t start, end, ndim, unused;
    uint32_t offsets[4], inner[4], mid[4];
    uint32_t scalar_bits[4];
    uint32_t shape[8];
    int32_t strides[3][8];
} elementwise_params;

wgt_status wgt_wgpu_elementwise(wgt_backend *be, const wgt_wgpu_elementwise_spec *spec, const wgt_operand *out,
                                const wgt_operand *const *in, const uint32_t *scalar_bits) {
    return wgt_wgpu_elementwise_with(be, spec, NULL, out, in, scalar_bits);
}

/* Records one launch over elements [start, end): the vector kernel when end - start is a
 * multiple of 4 (start is one too), else the tail kernel. */
static wgt_status launch(wgt_webgpu *w, const wgt_wgpu_elementwise_spec *spec, const wgt_wgsl_pieces *helpers,
                         const wgt_operand *out, const wgt_operand *const *in, elementwise_params *params,
                         uint32_t start, uint32_t end, int vector) {
    kernel_source source = {spec, helpers, {WGT_ACCESS_DENSE, WGT_ACCESS_DENSE, WGT_ACCESS_DENSE}, vector};
    char key[192];
    int used = snprintf(key, sizeof key, "elementwise:%s:%c", spec->op_name, vector ? 'v' : 't');
    for (int i = 0; i < spec->nin; i++) {
        wgt_wgpu_access a = wgt_wgpu_classify_input(in[i], out->ndim, out->shape, vector);
        source.access[i] = a.kind;
        params->offsets[i] = a.offset;
        params->inner[i] = a.inner;
        params->mid[i] = a.mid;
        if (used < (int)sizeof key)
            used += snprintf(key + used, sizeof key - (size_t)used, ":%s%c", wgt_dtype_name(spec->in_dtype[i]),
                             wgt_wgpu_access_letter(a.kind));
    }
    if (used < (int)sizeof key) used += snprintf(key + used, sizeof key - (size_t)used, "->%s", wgt_dtype_name(spec->out_dtype));
    if (used >= (int)sizeof key) return wgt_error(WGT_ERR_INTERNAL, "elementwise kernel %s: name too long", spec->op_name);
    wgt_pipeline *pl;
    wgt_status st = wgt_wgpu_pipeline(w, key, spec->nin + 1, build_elementwise, &source, &pl);
    if (st != WGT_OK || start == end) return st;
    params->start = start;
    params->end = end;
    wgt_buffer *buffers[WGT_MAX_STORAGE_BINDINGS];
    for (int i = 0; i < spec->nin; i++) buffers[i] = in[i]->buffer;
    buffers[spec->nin] = out->buffer;
    return wgt_wgpu_dispatch(w, pl, buffers, params, sizeof *params,
                             wgt_wgpu_quad_workgroups(start, end, w->limits.limits.maxComputeWorkgroupsPerDimension));
}

wgt_status wgt_wgpu_elementwise_with(wgt_backend *be, const wgt_wgpu_elementwise_spec *spec,
                                     const wgt_wgsl_pieces *helpers,
                                     const wgt_operand *out, const wgt_operand *const *in,
                                     const uint32_t *scalar_bits) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    if (spec->nin < 1 || spec->nin > 3) return wgt_error(WGT_ERR_INTERNAL, "elementwise kernel with %d inputs", spec->nin);
    /* The kernel writes element i at index i: an output at an offset or with gaps would be
     * written in the wrong place, so it is refused rather than corrupted (the engine hands
     * this runner fresh, contiguous outputs). */
    if (out->offset != 0 || !wgt_wgpu_is_dense(out, out->ndim, out->shape))
        return wgt_error(WGT_ERR_INTERNAL, "elementwise kernel %s: the output (offset %lld) is not contiguous from 0",
                         spec->op_name, (long long)out->offset);
    elementwise_params params;
    memset(&params, 0, sizeof params);
    int64_t numel = 1;
    for (int d = 0; d < out->ndim; d++) numel *= out->shape[d];
    params.ndim = (uint32_t)out->ndim;
    for (int d = 0; d < out->ndim; d++) params.shape[d] = (uint32_t)out->shape[d];
    for (int k = 0; k < spec->nin; k++)
        for (int d = 0; d < out->ndim; d++) params.strides[k][d] = (int32_t)in[k]->strides[d];
    if (scalar_bits) memcpy(params.scalar_bits, scalar_bits, sizeof params.scalar_bits);
    /* Whole quads with vector stores, then the last 1..3 elements (or an empty launch, which
     * only makes sure the kernel compiles). */
    uint32_t whole = (uint32_t)(numel & ~(int64_t)3);
    wgt_status st = WGT_OK;
    if (whole > 0 || numel == 0) st = launch(w, spec, helpers, out, in, &params, 0, whole, 1);
    if (st == WGT_OK && whole < numel) st = launch(w, spec, helpers, out, in, &params, whole, (uint32_t)numel, 0);
    return st;
}

/* A copy moves bits: it is a box write at the origin of the whole destination. (Through the
 * elementwise runner, f16 would pass pack2x16float, which WGSL leaves undefined for
 * infinities and NaN.) */
wgt_status wgt_wgpu_copy(wgt_backend *be, const wgt_operand *dst, const wgt_operand *src) {
    static const int64_t origin[WGT_MAX_DIMS] = {0};
    if (dst->ndim > 0) return wgt_wgpu_write_box(be, dst, origin, src);
    wgt_operand d1 = *dst, s1 = *src; /* a box has at least one dimension: a scalar is [1] */
    d1.ndim = s1.ndim = 1;
    d1.shape[0] = s1.shape[0] = 1;
    d1.strides[0] = s1.strides[0] = 1;
    return wgt_wgpu_write_box(be, &d1, origin, &s1);
}
