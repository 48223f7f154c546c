/*
 * Fused elementwise kernels on WebGPU: a chain of unary, binary, cast and where steps
 * (wgt_fused_kernel) runs as one WGSL kernel (wgsl/fused.wgsl) that computes every step per
 * element in registers, so intermediate results never go through memory. Each step is the
 * very expression, with the same helper functions, that its op's own kernel runs (looked up
 * in unary.c and binary.c), and its result is made to look exactly as the next op would
 * have loaded it: f16 results are rounded to f16, and float results pass an identity the
 * compiler cannot see through, so no driver contracts a multiply of one step and an add of
 * the next into one fused multiply-add. So the chain gives, bit for bit, what the ops give
 * one by one.
 *
 * Pipelines are cached by a description of everything the WGSL text depends on (input
 * types, each step's kind, op, argument wiring and type, the outputs' steps), compared in
 * full, so a hash collision can never hand out the wrong kernel. Strides, offsets, block sizes,
 * the shape and the ops' parameters travel in the uniform block; how each input is read (the
 * access kinds of elementwise_access.h: vector loads for dense inputs and repeated rows, one
 * load for broadcast scalars, strided otherwise) and whether the kernel is the vector or the
 * tail kernel are part of the description. Each invocation computes four elements, each
 * through the whole chain, and stores every output's four at once. The kernels bind n
 * read-only inputs and m read_write outputs, which the shared layouts in encoder.c (one
 * written binding) do not offer, so the layouts for each (n, m) are made here. An input in
 * an output's buffer (an update in place) has no binding: read element for element at the
 * output's index, it loads through the output's, before the same invocation stores there.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elementwise_access.h"
#include "webgpu_internal.h"

#define NVALUES (WGT_FUSED_MAX_INPUTS + WGT_FUSED_MAX_CONSTS + WGT_FUSED_MAX_STEPS)
#define CACHE_BUCKETS 64
#define DESC_MAX 1600
/* The uniform block in u32 words (see struct Params in fused.wgsl). */
#define PARAM_HEADER 40 /* end, ndim, start, unused, zero[4], shape[8], offsets[8], inner[8], mid[8] */
#define PARAM_WORDS (PARAM_HEADER + 8 * WGT_FUSED_MAX_INPUTS + 2 * WGT_FUSED_MAX_STEPS + 4 + WGT_FUSED_MAX_CONSTS)

/* A compiled chain. The hash only picks the bucket and names the pipeline. */
typedef struct fused_pipeline {
    uint64_t hash;
    char *desc;
    WGPUComputePipeline pipeline;
    char label[64];
    struct fused_pipeline *next;
} fused_pipeline;

struct wgt_wgpu_fused_cache {
    fused_pipeline *buckets[CACHE_BUCKETS];
    uint32_t count; /* pipelines in the buckets */
    /* By (inputs, outputs): the inputs read-only, the outputs read_write, then the uniform. */
    WGPUBindGroupLayout layouts[WGT_FUSED_MAX_INPUTS + 1][WGT_FUSED_MAX_OUTPUTS + 1];
    WGPUPipelineLayout pipeline_layouts[WGT_FUSED_MAX_INPUTS + 1][WGT_FUSED_MAX_OUTPUTS + 1];
};

/* What checking a kernel finds out: every value's type, where each unary step reads its
 * parameters, and the description that keys the pipeline. */
typedef struct {
    wgt_dtype type[NVALUES];
    int slot[WGT_FUSED_MAX_STEPS]; /* parameter slot of a step that reads parameters, else -1 */
    int nslots;
    /* Per input: the output whose storage it is (read through that output's binding), or -1. */
    int alias[WGT_FUSED_MAX_INPUTS];
    int nbound; /* inputs with a binding of their own */
    int64_t numel;
    char desc[DESC_MAX];
    size_t desc_len;
} plan;

static int is_float(wgt_dtype d) { return d == WGT_F32 || d == WGT_F16; }
static int is_dtype(wgt_dtype d) { return is_float(d) || d == WGT_I32 || d == WGT_U32; }
/* Inputs, steps and outputs may be bool too (loaded and stored packed); constants may not. */
static int is_value_type(wgt_dtype d) { return is_dtype(d) || d == WGT_BOOL; }

static int step_args(wgt_fused_kind kind) {
    return kind == WGT_FUSED_BINARY ? 2 : kind == WGT_FUSED_WHERE ? 3 : 1;
}

static void describe(plan *p, const char *fmt, ...) WGT_PRINTF(2, 3);
static void describe(plan *p, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    size_t room = sizeof p->desc - p->desc_len;
    int n = vsnprintf(p->desc + p->desc_len, room, fmt, ap);
    va_end(ap);
    /* Cannot overflow: the counts are bounded and DESC_MAX covers the longest description. */
    if (n > 0) p->desc_len += (size_t)n < room ? (size_t)n : room - 1;
}

/* Every check the description's fields and the operands need, so a malformed kernel is an
 * error and never a crash or a broken shader; the op-type combinations are checked when the
 * WGSL is made (the lookups know them), and only a kernel that built is ever cached. */
static wgt_status check_kernel(const wgt_webgpu *w, const wgt_fused_kernel *k, plan *p) {
    const wgt_backend *be = &w->base;
    if (!k) return wgt_error(WGT_ERR_INTERNAL, "fused kernel: no description");
    if (k->nconsts < 0 || k->nconsts > WGT_FUSED_MAX_CONSTS)
        return wgt_error(WGT_ERR_INTERNAL, "fused kernel: %d constants (at most %d)", k->nconsts, WGT_FUSED_MAX_CONSTS);
    if (k->ninputs < 1 || k->ninputs > WGT_FUSED_MAX_INPUTS || k->nsteps < 1 || k->nsteps > WGT_FUSED_MAX_STEPS ||
        k->noutputs < 1 || k->noutputs > WGT_FUSED_MAX_OUTPUTS || k->ninputs + k->noutputs > be->max_fused_buffers)
        return wgt_error(WGT_ERR_INTERNAL,
                         "fused kernel: %d inputs, %d steps, %d outputs (at most %d, %d, %d and %d buffers in all)",
                         k->ninputs, k->nsteps, k->noutputs, WGT_FUSED_MAX_INPUTS, WGT_FUSED_MAX_STEPS,
                         WGT_FUSED_MAX_OUTPUTS, be->max_fused_buffers);
    memset(p, 0, sizeof *p);
    for (int i = 0; i < WGT_FUSED_MAX_INPUTS; i++) p->alias[i] = -1;
    const wgt_operand *shape_of = &k->outputs[0];
    int nd = shape_of->ndim;
    if (nd < 0 || nd > WGT_MAX_DIMS) return wgt_error(WGT_ERR_INTERNAL, "fused kernel: output rank %d", nd);
    p->numel = 1;
    for (int d = 0; d < nd; d++) {
        if (shape_of->shape[d] < 0 || shape_of->shape[d] > INT32_MAX)
            return wgt_error(WGT_ERR_INTERNAL, "fused kernel: output dimension %d is %lld", d,
                             (long long)shape_of->shape[d]);
        p->numel *= shape_of->shape[d];
        if (p->numel > (int64_t)be->max_kernel_elements)
            return wgt_error(WGT_ERR_LIMIT, "fused kernel: more than the %llu elements a kernel can index",
                             (unsigned long long)be->max_kernel_elements);
    }
    describe(p, "i");
    for (int i = 0; i < k->ninputs; i++) {
        const wgt_operand *in = &k->inputs[i];
        if (!is_value_type(in->dtype) || !in->buffer || in->ndim != nd || in->offset < 0 || in->offset > UINT32_MAX)
            return wgt_error(WGT_ERR_INTERNAL, "fused kernel: input %d (type %d, rank %d, offset %lld) is malformed", i,
                             (int)in->dtype, in->ndim, (long long)in->offset);
        for (int d = 0; d < nd; d++)
            if (in->shape[d] != shape_of->shape[d] || in->strides[d] < INT32_MIN || in->strides[d] > INT32_MAX)
                return wgt_error(WGT_ERR_INTERNAL, "fused kernel: input %d dimension %d (%lld, stride %lld) does not fit",
                                 i, d, (long long)in->shape[d], (long long)in->strides[d]);
        p->type[i] = in->dtype;
        describe(p, "%d", (int)in->dtype);
    }
    describe(p, "c");
    for (int c = 0; c < k->nconsts; c++) {
        if (!is_dtype(k->const_dtypes[c]))
            return wgt_error(WGT_ERR_INTERNAL, "fused kernel: constant %d has type %d", c, (int)k->const_dtypes[c]);
        p->type[k->ninputs + c] = k->const_dtypes[c];
        describe(p, "%d", (int)k->const_dtypes[c]);
    }
    for (int s = 0; s < k->nsteps; s++) {
        const wgt_fused_step *st = &k->steps[s];
        int v = k->ninputs + k->nconsts + s;
        p->slot[s] = -1;
        if ((unsigned)st->kind > WGT_FUSED_WHERE || !is_value_type(st->dtype) ||
            (st->kind == WGT_FUSED_UNARY && (unsigned)st->op >= WGT_UNARY_COUNT) ||
            (st->kind == WGT_FUSED_BINARY && (unsigned)st->op >= WGT_BINARY_COUNT))
            return wgt_error(WGT_ERR_INTERNAL, "fused kernel: step %d has kind %d, op %d, type %d", s, (int)st->kind,
                             st->op, (int)st->dtype);
        int op = st->kind == WGT_FUSED_UNARY || st->kind == WGT_FUSED_BINARY ? st->op : 0;
        describe(p, ";%d.%d(", (int)st->kind, op);
        for (int a = 0; a < step_args(st->kind); a++) {
            if (st->args[a] < 0 || st->args[a] >= v)
                return wgt_error(WGT_ERR_INTERNAL, "fused kernel: step %d argument %d is value %d, not one of 0..%d", s,
                                 a, st->args[a], v - 1);
            describe(p, "%s%d", a ? "," : "", st->args[a]);
        }
        describe(p, ")%d", (int)st->dtype);
        if (st->kind == WGT_FUSED_UNARY && wgt_wgpu_unary_reads_params((wgt_unary_op)st->op, p->type[st->args[0]]))
            p->slot[s] = p->nslots++;
        p->type[v] = st->dtype;
    }
    describe(p, "o");
    for (int o = 0; o < k->noutputs; o++) {
        const wgt_operand *out = &k->outputs[o];
        int s = k->output_steps[o];
        if (s < 0 || s >= k->nsteps || out->dtype != k->steps[s].dtype || !out->buffer || out->ndim != nd ||
            out->offset != 0)
            return wgt_error(WGT_ERR_INTERNAL, "fused kernel: output %d (step %d, type %d) is malformed", o, s,
                             (int)out->dtype);
        for (int d = 0; d < nd; d++)
            if (out->shape[d] != shape_of->shape[d])
                return wgt_error(WGT_ERR_INTERNAL, "fused kernel: outputs 0 and %d differ in dimension %d", o, d);
        if (!wgt_wgpu_is_dense(out, nd, out->shape))
            return wgt_error(WGT_ERR_INTERNAL, "fused kernel: output %d is not contiguous", o);
        /* A buffer bound for writing may be bound nowhere else in the same dispatch: an input
         * of it is read through the output's binding, which only an input read element for
         * element at the output's own index may be (each invocation then reads its elements
         * before it writes them). */
        for (int i = 0; i < k->ninputs + o; i++) {
            const wgt_buffer *other = i < k->ninputs ? k->inputs[i].buffer : k->outputs[i - k->ninputs].buffer;
            if (other != out->buffer) continue;
            const wgt_operand *in = &k->inputs[i];
            if (i < k->ninputs && p->alias[i] < 0 && in->offset == 0 && in->dtype == out->dtype &&
                wgt_dtype_size(in->dtype) == 4 && wgt_wgpu_is_dense(in, nd, out->shape)) {
                p->alias[i] = o;
                continue;
            }
            return wgt_error(WGT_ERR_INTERNAL, "fused kernel: output %d shares its buffer with %s %d", o,
                             i < k->ninputs ? "input" : "output", i < k->ninputs ? i : i - k->ninputs);
        }
        describe(p, "%s%d", o ? "," : "", s);
    }
    describe(p, "a");
    for (int i = 0; i < k->ninputs; i++) {
        describe(p, "%s%d", i ? "," : "", p->alias[i]);
        p->nbound += p->alias[i] < 0;
    }
    return WGT_OK;
}

/* ---- the WGSL ---- */

/* Step s's expression over x, y, z, into expr, its helpers added to *helpers. */
static wgt_status step_expr(const wgt_fused_kernel *k, const plan *p, int s, char *expr, size_t size,
                            wgt_wgsl_pieces *helpers) {
    const wgt_fused_step *st = &k->steps[s];
    const wgt_dtype *t = p->type;
    switch (st->kind) {
    case WGT_FUSED_UNARY: {
        /* Two slots per vector: xy for even slots, zw for odd ones. */
        char w0[48] = "0u", w1[48] = "0u";
        if (p->slot[s] >= 0) {
            int j = p->slot[s];
            snprintf(w0, sizeof w0, "params.consts[%d].%c", j / 2, j % 2 ? 'z' : 'x');
            snprintf(w1, sizeof w1, "params.consts[%d].%c", j / 2, j % 2 ? 'w' : 'y');
        }
        const char *const words[2] = {w0, w1};
        return wgt_wgpu_unary_expr((wgt_unary_op)st->op, t[st->args[0]], st->dtype, words, expr, size, helpers);
    }
    case WGT_FUSED_BINARY:
        return wgt_wgpu_binary_expr((wgt_binary_op)st->op, t[st->args[0]], t[st->args[1]], st->dtype, expr, size,
                                    helpers);
    case WGT_FUSED_CAST: return wgt_wgpu_cast_expr(t[st->args[0]], st->dtype, expr, size, helpers);
    case WGT_FUSED_WHERE:
        return wgt_wgpu_where_expr(t[st->args[0]], t[st->args[1]], t[st->args[2]], st->dtype, expr, size);
    }
    return wgt_error(WGT_ERR_INTERNAL, "fused kernel: step %d has kind %d", s, (int)st->kind);
}

/* The kernel's WGSL (malloc'd) into *out, or the error: the vector kernel (vector = 1) or the
 * tail kernel, each input read as access[i] says (elementwise_access.h). */
static wgt_status build_wgsl(const wgt_fused_kernel *k, const plan *p, const wgt_wgpu_access_kind *access, int vector,
                             char **out) {
    static const char *const names[3] = {"x", "y", "z"};
    wgt_wgsl_text bindings = {0}, steps = {0}, fields = {0}, body = {0}, loads = {0}, run = {0};
    wgt_wgsl_pieces helpers = {0};
    wgt_status st = WGT_OK;
    wgt_wgsl_add(&body, "fn compute(");
    for (int i = 0, bound = 0; i < k->ninputs; i++) {
        wgt_dtype d = p->type[i];
        if (p->alias[i] < 0)
            wgt_wgsl_add(&bindings, "@group(0) @binding(%d) var<storage, read> in%d: array<%s>;\n", bound++, i,
                wgt_wgpu_access_storage_type(access[i], d));
        wgt_wgsl_add(&body, "%sv%d: %s", i ? ", " : "", i, wgt_wgpu_compute_type(d));
        wgt_wgpu_access_exprs e;
        snprintf(e.offset, sizeof e.offset, "params.offsets[%d][%d]", i / 4, i % 4);
        snprintf(e.inner, sizeof e.inner, "params.inner[%d][%d]", i / 4, i % 4);
        snprintf(e.mid, sizeof e.mid, "params.mid[%d][%d]", i / 4, i % 4);
        /* An input that is an output's storage loads through the output's binding, whose
         * element type is the same for a dense 4-byte input (vec4 in the vector kernel, the
         * scalar in the tail). */
        if (p->alias[i] >= 0) snprintf(e.array, sizeof e.array, "out%d", p->alias[i]);
        else snprintf(e.array, sizeof e.array, "in%d", i);
        if (access[i] == WGT_ACCESS_STRIDED)
            wgt_wgsl_add(&loads, "fn element%d(i: u32) -> u32 { return strided_index(%du, i); }\n", i, i);
        char fn[2048] = "";
        if (d == WGT_F16) wgt_wgsl_pieces_add(&helpers, &wgt_wgsl_unpack_f16);
        if (!wgt_wgpu_load_wgsl(fn, sizeof fn, i, d, access[i], &e, vector))
            st = wgt_error(WGT_ERR_INTERNAL, "fused kernel: no load for input %d read as %c", i,
                           wgt_wgpu_access_letter(access[i]));
        wgt_wgsl_add(&loads, "%s", fn);
        wgt_wgsl_add(&run, "        let l%d = load%d(i);\n", i, i);
    }
    wgt_wgsl_add(&body, ") -> Results {\n");
    /* Constants sit in the uniform block after the unary parameters: no binding, no load
     * from memory per element. */
    int const_base = p->nslots > 0 ? (p->nslots + 1) / 2 : 1;
    for (int c = 0; c < k->nconsts; c++) {
        char word[64];
        snprintf(word, sizeof word, "params.consts[%d][%d]", const_base + c / 4, c % 4);
        wgt_dtype d = k->const_dtypes[c];
        int v = k->ninputs + c;
        if (d == WGT_F16) wgt_wgsl_add(&body, "    let v%d = unpack2x16float(%s).x;\n", v, word);
        else if (d == WGT_F32) wgt_wgsl_add(&body, "    let v%d = bitcast<f32>(%s);\n", v, word);
        else if (d == WGT_I32) wgt_wgsl_add(&body, "    let v%d = bitcast<i32>(%s);\n", v, word);
        else wgt_wgsl_add(&body, "    let v%d = %s;\n", v, word);
    }
    for (int s = 0; s < k->nsteps && st == WGT_OK; s++) {
        const wgt_fused_step *step = &k->steps[s];
        char expr[1024];
        if ((st = step_expr(k, p, s, expr, sizeof expr, &helpers)) != WGT_OK) {
            char why[512]; /* the lookup's message, copied: wgt_error rewrites it */
            snprintf(why, sizeof why, "%s", wgt_last_error());
            st = wgt_error(st, "fused kernel: step %d: %s", s, why);
            break;
        }
        int v = k->ninputs + k->nconsts + s, nargs = step_args(step->kind);
        wgt_wgsl_add(&steps, "fn s%d(", s);
        for (int a = 0; a < nargs; a++)
            wgt_wgsl_add(&steps, "%s%s: %s", a ? ", " : "", names[a], wgt_wgpu_compute_type(p->type[step->args[a]]));
        wgt_wgsl_add(&steps, ") -> %s { return %s; }\n", wgt_wgpu_compute_type(step->dtype), expr);
        /* Integer results are exact whatever the compiler does; float ones are kept as stored. */
        const char *keep = step->dtype == WGT_F32 ? "keep_f32" : step->dtype == WGT_F16 ? "keep_f16" : "";
        wgt_wgsl_add(&body, "    let v%d = %s(s%d(", v, keep, s);
        for (int a = 0; a < nargs; a++) {
            int repeated = 0;
            for (int b = 0; b < a; b++) repeated |= step->args[b] == step->args[a];
            if (repeated && is_float(p->type[step->args[a]]))
                wgt_wgsl_add(&body, ", bitcast<f32>(bitcast<u32>(v%d) ^ params.zero.%c)", step->args[a], "xyz"[a]);
            else wgt_wgsl_add(&body, "%sv%d", a ? ", " : "", step->args[a]);
        }
        wgt_wgsl_add(&body, "));\n");
    }
    wgt_wgsl_add(&body, "    return Results(");
    /* The four elements one after another, then each output's four as one store. */
    for (int j = 0; j < 4; j++) {
        wgt_wgsl_add(&run, "        let r%d = compute(", j);
        for (int i = 0; i < k->ninputs; i++) wgt_wgsl_add(&run, "%sl%d.%c", i ? ", " : "", i, "xyzw"[j]);
        wgt_wgsl_add(&run, ");\n");
    }
    for (int o = 0; o < k->noutputs; o++) {
        wgt_dtype d = k->outputs[o].dtype;
        int binding = p->nbound + o;
        wgt_wgsl_add(&bindings, "@group(0) @binding(%d) var<storage, read_write> out%d: array<%s>;\n", binding, o,
            wgt_wgpu_output_storage_type(d, vector));
        wgt_wgsl_add(&fields, "    o%d: %s,\n", o, wgt_wgpu_compute_type(d));
        wgt_wgsl_add(&body, "%sv%d", o ? ", " : "", k->ninputs + k->nconsts + k->output_steps[o]);
        char fn[1024] = "";
        if (!wgt_wgpu_store_wgsl(fn, sizeof fn, o, d, vector) && st == WGT_OK)
            st = wgt_error(WGT_ERR_INTERNAL, "fused kernel: no store for output %d", o);
        wgt_wgsl_add(&loads, "%s", fn);
        wgt_wgsl_add(&run, "        store%d(i, vec4<%s>(r0.o%d, r1.o%d, r2.o%d, r3.o%d));\n", o, wgt_wgpu_compute_type(d), o, o, o, o);
    }
    wgt_wgsl_add(&body, ");\n}\n");
    char *helper_text = st == WGT_OK ? wgt_wgsl_pieces_text(&helpers) : NULL;
    const char *template_text = wgt_wgsl_source("fused");
    *out = NULL;
    if (st == WGT_OK && helper_text && template_text && !bindings.failed && !steps.failed && !fields.failed &&
        !body.failed && !loads.failed && !run.failed) {
        char nin[16], nconst[16], params_binding[16];
        snprintf(nin, sizeof nin, "%d", k->ninputs);
        snprintf(nconst, sizeof nconst, "%d", const_base + (k->nconsts + 3) / 4);
        snprintf(params_binding, sizeof params_binding, "%d", p->nbound + k->noutputs);
        const char *pairs[] = {"NIN", nin, "NCONST", nconst, "BINDINGS", bindings.s, "PARAMS_BINDING", params_binding,
                               "HELPERS", helper_text, "STEPS", steps.s, "RESULT_FIELDS", fields.s, "COMPUTE", body.s,
                               "ACCESS", loads.s, "RUN", run.s, NULL};
        *out = wgt_wgsl_expand(template_text, pairs);
    }
    if (st == WGT_OK && !*out) st = wgt_error(WGT_ERR_OUT_OF_MEMORY, "fused kernel: out of host memory for its WGSL");
    free(helper_text);
    free(bindings.s), free(steps.s), free(fields.s), free(body.s), free(loads.s), free(run.s);
    return st;
}

/* ---- pipelines ---- */

/* FNV-1a, 64 bits. */
static uint64_t hash_text(const char *s, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h;
}

static wgt_status pipeline_layout(wgt_webgpu *w, struct wgt_wgpu_fused_cache *c, int nin, int nout,
                                  WGPUPipelineLayout *out) {
    if (!c->pipeline_layouts[nin][nout]) {
        const wgpu_procs *pr = w->p;
        WGPUBindGroupLayout layout;
        WGPUPipelineLayout pipeline;
        wgt_wgpu_push_scope(w);
        wgt_wgpu_create_layout(w, nin + nout, nout, "wgtensor fused kernel bindings", &layout, &pipeline);
        wgt_status st = wgt_wgpu_pop_scope(w, "creating a fused kernel's binding layout");
        if (st != WGT_OK || !pipeline) {
            if (pipeline) pr->wgpuPipelineLayoutRelease(pipeline);
            if (layout) pr->wgpuBindGroupLayoutRelease(layout);
            return st != WGT_OK ? st : wgt_error(WGT_ERR_BACKEND, "creating a fused kernel's binding layout failed");
        }
        c->layouts[nin][nout] = layout;
        c->pipeline_layouts[nin][nout] = pipeline;
    }
    *out = c->pipeline_layouts[nin][nout];
    return WGT_OK;
}

/* Which kernel of a chain: the vector or the tail kernel, and how each input is read. */
typedef struct {
    int vector;
    wgt_wgpu_access access[WGT_FUSED_MAX_INPUTS];
} variant;

static wgt_status compile(wgt_webgpu *w, struct wgt_wgpu_fused_cache *c, const wgt_fused_kernel *k, const plan *p,
                          const variant *v, uint64_t hash, fused_pipeline **out) {
    const wgpu_procs *pr = w->p;
    WGPUPipelineLayout layout = NULL;
    char *wgsl = NULL;
    wgt_status st = pipeline_layout(w, c, p->nbound, k->noutputs, &layout);
    wgt_wgpu_access_kind access[WGT_FUSED_MAX_INPUTS];
    for (int i = 0; i < k->ninputs; i++) access[i] = v->access[i].kind;
    if (st == WGT_OK) st = build_wgsl(k, p, access, v->vector, &wgsl);
    if (st != WGT_OK) return st;
    fused_pipeline *f = calloc(1, sizeof *f);
    char *desc = malloc(p->desc_len + 1);
    if (!f || !desc) {
        free(f), free(desc), free(wgsl);
        return wgt_error(WGT_ERR_OUT_OF_MEMORY, "out of host memory for a fused kernel");
    }
    memcpy(desc, p->desc, p->desc_len + 1);
    f->desc = desc;
    f->hash = hash;
    snprintf(f->label, sizeof f->label, "fused:%016llx:%zu", (unsigned long long)hash, p->desc_len);
    WGPUShaderSourceWGSL src = {0};
    src.chain.sType = WGPU_STYPE_SHADER_SOURCE_WGSL;
    src.code = wgpu_str(wgsl);
    WGPUShaderModuleDescriptor md = {0};
    md.nextInChain = &src.chain;
    md.label = wgpu_str(f->label);
    wgt_wgpu_push_scope(w);
    WGPUShaderModule module = pr->wgpuDeviceCreateShaderModule(w->device, &md);
    WGPUComputePipelineDescriptor pd = {0};
    pd.label = wgpu_str(f->label);
    pd.layout = layout;
    pd.compute.module = module;
    pd.compute.entryPoint = wgpu_str("main");
    f->pipeline = pr->wgpuDeviceCreateComputePipeline(w->device, &pd);
    char what[192];
    snprintf(what, sizeof what, "compiling fused kernel %s (%s)", f->label, desc);
    st = wgt_wgpu_pop_scope(w, what);
    free(wgsl);
    if (module) pr->wgpuShaderModuleRelease(module);
    if (st != WGT_OK || !f->pipeline) {
        if (f->pipeline) pr->wgpuComputePipelineRelease(f->pipeline);
        free(f->desc), free(f);
        return st != WGT_OK ? st : wgt_error(WGT_ERR_BACKEND, "%s failed", what);
    }
    wgt_wgpu_pipeline_created(w, f->pipeline);
    *out = f;
    return WGT_OK;
}

/* The cached pipeline for the plan's description (the variant included), compiled on first use. */
static wgt_status find_pipeline(wgt_webgpu *w, const wgt_fused_kernel *k, const plan *p, const variant *v,
                                fused_pipeline **out) {
    if (!w->fused_cache && !(w->fused_cache = calloc(1, sizeof *w->fused_cache)))
        return wgt_error(WGT_ERR_OUT_OF_MEMORY, "out of host memory for the fused kernel cache");
    struct wgt_wgpu_fused_cache *c = w->fused_cache;
    uint64_t hash = hash_text(p->desc, p->desc_len);
    fused_pipeline **bucket = &c->buckets[hash % CACHE_BUCKETS];
    for (fused_pipeline *f = *bucket; f; f = f->next)
        if (f->hash == hash && !strcmp(f->desc, p->desc)) {
            *out = f;
            return WGT_OK;
        }
    wgt_status st = compile(w, c, k, p, v, hash, out);
    if (st != WGT_OK) return st;
    (*out)->next = *bucket;
    *bucket = *out;
    c->count++;
    return WGT_OK;
}

/* ---- the backend entry ---- */

/* Records the launch over elements [start, end) (a multiple of 4 long for the vector kernel);
 * an empty range only makes sure the kernel compiles. */
static wgt_status launch(wgt_webgpu *w, const wgt_fused_kernel *k, const plan *p, uint32_t *words, uint32_t start,
                         uint32_t end, int vector) {
    const wgt_operand *shape_of = &k->outputs[0];
    plan q = *p; /* the description names the variant too */
    variant v = {vector, {{0}}};
    describe(&q, "|%c", vector ? 'v' : 't');
    for (int i = 0; i < k->ninputs; i++) {
        v.access[i] = wgt_wgpu_classify_input(&k->inputs[i], shape_of->ndim, shape_of->shape, vector);
        describe(&q, "%c", wgt_wgpu_access_letter(v.access[i].kind));
        words[16 + i] = v.access[i].offset;
        words[24 + i] = v.access[i].inner;
        words[32 + i] = v.access[i].mid;
    }
    fused_pipeline *f = NULL;
    wgt_status st = find_pipeline(w, k, &q, &v, &f);
    if (st != WGT_OK || start == end) return st;
    words[0] = end;
    words[2] = start;
    int const_base = p->nslots > 0 ? (p->nslots + 1) / 2 : 1;
    int nconst_vectors = const_base + (k->nconsts + 3) / 4;
    uint32_t size = (uint32_t)(PARAM_HEADER + 8 * k->ninputs + 4 * nconst_vectors) * 4u;
    wgt_buffer *buffers[WGT_MAX_LAYOUT_STORAGE];
    int nb = 0;
    for (int i = 0; i < k->ninputs; i++)
        if (p->alias[i] < 0) buffers[nb++] = k->inputs[i].buffer;
    for (int o = 0; o < k->noutputs; o++) buffers[nb++] = k->outputs[o].buffer;
    uint64_t groups = wgt_wgpu_quad_workgroups(start, end, w->limits.limits.maxComputeWorkgroupsPerDimension);
    return wgt_wgpu_dispatch_with_layout(w, f->label, f->pipeline, w->fused_cache->layouts[p->nbound][k->noutputs], nb,
                                         buffers, words, size, groups);
}

wgt_status wgt_wgpu_fused(wgt_backend *be, const wgt_fused_kernel *k) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    plan p;
    wgt_status st = check_kernel(w, k, &p);
    if (st != WGT_OK) return st;
    if ((st = wgt_wgpu_status(w)) != WGT_OK) return st;

    const wgt_operand *shape_of = &k->outputs[0];
    uint32_t words[PARAM_WORDS];
    memset(words, 0, sizeof words);
    words[1] = (uint32_t)shape_of->ndim;
    for (int d = 0; d < shape_of->ndim; d++) words[8 + d] = (uint32_t)shape_of->shape[d];
    for (int i = 0; i < k->ninputs; i++)
        for (int d = 0; d < k->inputs[i].ndim; d++)
            words[PARAM_HEADER + 8 * i + d] = (uint32_t)(int32_t)k->inputs[i].strides[d];
    uint32_t *consts = words + PARAM_HEADER + 8 * k->ninputs;
    for (int s = 0; s < k->nsteps; s++)
        if (p.slot[s] >= 0)
            wgt_wgpu_unary_param_bits(p.type[k->steps[s].args[0]], k->steps[s].params, consts + 2 * p.slot[s]);
    int const_base = p.nslots > 0 ? (p.nslots + 1) / 2 : 1;
    for (int c = 0; c < k->nconsts; c++) consts[4 * const_base + c] = k->const_bits[c];

    /* Whole quads with vector stores, then the last 1..3 elements; an empty kernel is checked
     * and compiled alike, with nothing to run. */
    uint32_t numel = (uint32_t)p.numel, whole = numel & ~3u;
    if (whole > 0 || numel == 0) st = launch(w, k, &p, words, 0, whole, 1);
    if (st == WGT_OK && whole < numel) st = launch(w, k, &p, words, whole, numel, 0);
    return st;
}

int wgt_wgpu_fused_max_buffers(const wgt_webgpu *w) {
    uint32_t limit = w->limits.limits.maxStorageBuffersPerShaderStage;
    return limit < WGT_MAX_LAYOUT_STORAGE ? (int)limit : WGT_MAX_LAYOUT_STORAGE;
}

uint32_t wgt_wgpu_fused_pipeline_count(const wgt_webgpu *w) { return w->fused_cache ? w->fused_cache->count : 0; }

void wgt_wgpu_fused_pipelines_release(wgt_webgpu *w) {
    struct wgt_wgpu_fused_cache *c = w->fused_cache;
    if (!c) return;
    const wgpu_procs *pr = w->p;
    for (int b = 0; b < CACHE_BUCKETS; b++) {
        for (fused_pipeline *f = c->buckets[b], *next; f; f = next) {
            next = f->next;
            pr->wgpuComputePipelineRelease(f->pipeline);
            free(f->desc);
            free(f);
        }
        c->buckets[b] = NULL;
    }
    c->count = 0;
    w->pass_pipeline = NULL; /* a new pipeline may reuse a released one's address */
}

void wgt_wgpu_fused_shutdown(wgt_webgpu *w) {
    struct wgt_wgpu_fused_cache *c = w->fused_cache;
    if (!c) return;
    const wgpu_procs *pr = w->p;
    wgt_wgpu_fused_pipelines_release(w);
    for (int i = 0; i <= WGT_FUSED_MAX_INPUTS; i++)
        for (int o = 0; o <= WGT_FUSED_MAX_OUTPUTS; o++) {
            if (c->pipeline_layouts[i][o]) pr->wgpuPipelineLayoutRelease(c->pipeline_layouts[i][o]);
            if (c->layouts[i][o]) pr->wgpuBindGroupLayoutRelease(c->layouts[i][o]);
        }
    free(c);
    w->fused_cache = NULL;
}
