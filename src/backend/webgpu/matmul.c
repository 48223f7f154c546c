/*
 * Matrix multiplication on WebGPU (wgsl/matmul.wgsl): out [batch..., M, N] = a [batch..., M, K]
 * @ b [batch..., K, N] with a and b read in place through their strides. f16 products go to
 * matmul_sgmatrix.c instead where the device multiplies through subgroup matrices (tensor
 * cores) and the product is not a few rows or columns. Otherwise the host picks a kernel per
 * call, and that kernel's variant (each variant is its own pipeline):
 *
 * - rows, for products with few rows (M <= 32; N = 1 runs as the transposed product, whose
 *   output has the same flat layout): a workgroup streams b for up to 256 columns against up
 *   to 16 rows of a over one range of K, reading b 16 bytes at a time where its alignment
 *   allows (4 f32 or 8 f16 values, along N for b stored by rows, along K for b stored by
 *   columns), else element by element. A tile would leave most of its invocations idle
 *   here, and only splitting K gives enough workgroups to keep the memory busy. A single
 *   row of a (the matrix-vector product) is read from memory in the loop rather than
 *   staged, with 32 invocations along K.
 * - tiled, for the rest: 128 x 128 outputs per workgroup (8 x 8 per invocation), or 128 x 64
 *   / 64 x 128 (8 x 4) and 64 x 64 (4 x 4) when there would be too few tiles (choose_tiles
 *   weighs how full the device's one wave would be), K in steps of
 *   16 or 8 through one staged tile per operand, the next step's loads in registers while
 *   the staged one is multiplied (over long K, two steps per pass of the loop, the loads
 *   placed among the multiply's groups of k as the layout favours). Each operand is fetched
 *   along its unit stride (rows of a matrix stored by rows, columns of one stored by
 *   columns), as vec4s when vec_ok allows, and staged along M (N) or along K as the tile
 *   favours. The generated multiply reads the staged tiles with constant indices (see the
 *   WGSL). When even 64 x 64 tiles are too few and K is long, K is split as for rows; pairs
 *   of those ranges run as two slices of one workgroup of 512 invocations where the device
 *   allows, which add up their accumulators through workgroup memory at the end.
 *   Where the last wave of 128 x 128 tiles would leave slots idle, their passes over K are
 *   shared out in equal runs (stream_plan).
 * - sum, after a split: adds the ranges' f32 partial results in order and writes the output.
 *   f16 outputs with odd N (whose rows do not start on u32 words) also go through it, as
 *   one range: it packs whole words over the flat index.
 * - fix, after a streamed tiled kernel: adds the parts of each tile that runs shared.
 * - pack, before large tiled products: copies an operand into lines along M (N) (pack_pays).
 *
 * The figures behind the choices (NVIDIA H200, Vulkan through Dawn, kernels back to back,
 * BENCHMARKS.md has the history): 4096^3 f32 in 3.03 ms (x @ w^T 3.07 ms, a^T @ b 2.99),
 * 8192^3 in 23.7 ms, 4097^3 in 3.35 ms, 1536^3 in 0.208 ms, 1024^3 in 0.068 ms; 16 x 4096 x 4096 in 0.05 ms
 * (64 x 64 tiles: 0.5 ms); a row vector times 8192 x 8192 f32 in 0.070 ms of kernel time (0.94 of a
 * copy's bandwidth), that matrix in f16 times a vector in 0.041 ms.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype_table.h"
#include "webgpu_internal.h"

#define WORKGROUP_SIZE 256u
/* Products with at most this many rows run the rows kernel (in blocks of 16 rows). */
#define ROWS_MAX 32
/* Workgroups the rows kernel aims for when it splits K (about 2 per streaming multiprocessor
 * of an H200: more ranges cost more than the extra workgroups gain), and the tiled kernel's
 * "enough" (1.5 per multiprocessor). */
#define ROWS_GROUPS 256
#define TILED_GROUPS 200
/* R_KS of a rows kernel that reads its one row of a directly: one pass over the K range,
 * nothing staged. */
#define ROWS_KS_UNSTAGED (1 << 30)
/* The tiled kernel's step unless tiled_schedule picks another (see tiled_text for the
 * notation): the next step's loads, the multiply, a barrier, the stores. */
#define TILED_SCHEDULE "FA FB M* B SA SB"

/* Mirrors struct Params in matmul.wgsl: 20 scalars, then the 16-byte aligned arrays. */
typedef struct {
    uint32_t M, N, K, batch;
    uint32_t tiles_m, tiles_n, batch_ndim, pad0;
    uint32_t a_offset, b_offset, chunks, kchunk;
    int32_t a_sm, a_sk, b_sk, b_sn;
    uint32_t pad1, total, a_k_fast, pad2;
    uint32_t batch_shape[8];
    int32_t a_batch[8];
    int32_t b_batch[8];
    uint32_t stream[4];
} matmul_params;

_Static_assert(sizeof(matmul_params) == 192, "matmul_params must match the WGSL Params layout");

typedef enum { KERNEL_TILED, KERNEL_ROWS, KERNEL_SUM, KERNEL_FIX, KERNEL_PACK } kernel_kind;
static const char *const kernel_names[] = {"tiled", "rows", "sum", "fix", "pack"};

/* Fetch modes of the tiled kernel (A_MODE, B_MODE in the WGSL). */
enum { FETCH_OUTER_VEC4, FETCH_K_VEC4, FETCH_OUTER, FETCH_K };
/* Modes of the rows kernel's b (R_MODE). */
enum { ROWS_VEC4, ROWS_SPREAD, ROWS_K_LANES, ROWS_VEC8, ROWS_K_VEC };

typedef struct {
    kernel_kind kind;
    wgt_dtype in, out;     /* input type (f32 for sum: it reads partials), type written */
    int a_vec, b_vec;      /* operand bound as vec4s: of f32, or for f16 of u32 words (8 values) */
    int out_vec;           /* f32 output written as vec4s */
    int a_mode, b_mode;    /* tiled: fetch modes */
    int a_stage, b_stage;  /* tiled: staged layouts (A_STAGE, B_STAGE) */
    int bm, bn, bk, tm, tn, a_pitch, b_pitch; /* tiled: tile, outputs per invocation, vec4s per staged line */
    int slices, merge;     /* tiled: slices of K per workgroup, accumulators merged per round */
    int unroll;            /* tiled: steps per iteration of the loop over K */
    char sched[40];        /* tiled: order of a step's loads, multiply and stores (see tiled_text) */
    int stream;            /* tiled: the last tiles' passes over K shared out evenly (stream_plan) */
    int rows, r_mode, r_ap, r_ks, r_lanes, r_unroll; /* rows */
    int r_kw, r_cw;        /* rows: values of K per lane step, columns per invocation along N */
    int r_direct;          /* rows: the one row of a read from memory in the loop, not staged */
    int r_turns;           /* rows: fewer workgroups than tiles, each taking tiles in turn */
    int pack_b, pack_read_k; /* pack: the operand (a or b), read with lanes along K */
} matmul_kernel;

/* ---- WGSL text ------------------------------------------------------------------------- */

typedef struct {
    char *text;
    size_t len, cap;
    int failed;
} text_buf;

static void add(text_buf *t, const char *fmt, ...) {
    if (t->failed) return;
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(t->text ? t->text + t->len : NULL, t->text ? t->cap - t->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->failed = 1;
            return;
        }
        if (t->text && t->len + (size_t)n < t->cap) {
            t->len += (size_t)n;
            return;
        }
        size_t cap = (t->cap ? t->cap * 2 : 1024) + (size_t)n;
        char *p = realloc(t->text, cap);
        if (!p) {
            t->failed = 1;
            return;
        }
        t->text = p;
        t->cap = cap;
    }
}

static const char comp[4] = {'x', 'y', 'z', 'w'};

/* Tiled: the accumulators c<g><i><h> (row block g, row i of it, column block h) and fetch
 * registers; the first fetch; one step (the next step's fetch, the multiply of the staged
 * one unrolled over k, the stores of the fetch); and the stores of the results. Staged tiles
 * are read with constant indices for k and the row within a block (see the WGSL). */
typedef struct {
    text_buf decl, first, step, merge, store, part, open, close;
} tiled_parts;

/* The index of the invocation's own staged tiles where K is sliced within the workgroup. */
static const char *slice_index(const matmul_kernel *k) { return k->slices > 1 ? "[sl]" : ""; }

/* The multiply of the staged step: per group of 4 values of k, the vec4s of an operand staged
 * along K (each holds 4 values of k of one row or column), then per k the vec4s of one staged
 * along M (N) and the rank-1 update. Every invocation runs it, those past the output's edge on
 * the zeros staged there (their results are never stored): skipping it behind a branch made
 * every tile slower (4096^3 on an H200: 3.59 ms with the branch, 3.48 without). */
static void tiled_multiply(const matmul_kernel *k, text_buf *step, int kv_from, int kv_to) {
    int tmg = k->tm / 4, tng = k->tn / 4, kv_count = k->bk / 4;
    int tx = k->bn / k->tn, ty = k->bm / k->tm;
    const char *ts = slice_index(k);
    for (int kv = kv_from; kv < kv_to; kv++) {
        add(step, "            {\n");
        if (k->a_stage)
            for (int g = 0; g < tmg; g++)
                for (int i = 0; i < 4; i++)
                    add(step, "            let a%d%d = ta%s[ty + %du][%du];\n", g, i, ts, ty * g, i * kv_count + kv);
        if (k->b_stage)
            for (int h = 0; h < tng; h++)
                for (int j = 0; j < 4; j++)
                    add(step, "            let b%d%d = tb%s[tx + %du][%du];\n", h, j, ts, tx * h, j * kv_count + kv);
        for (int q = 0; q < 4; q++) {
            int kk = 4 * kv + q;
            add(step, "            {\n");
            if (!k->a_stage)
                for (int g = 0; g < tmg; g++) add(step, "            let a%d = ta%s[%du][ty + %du];\n", g, ts, kk, ty * g);
            if (!k->b_stage)
                for (int h = 0; h < tng; h++) add(step, "            let b%d = tb%s[%du][tx + %du];\n", h, ts, kk, tx * h);
            for (int h = 0; h < tng; h++) {
                if (k->b_stage)
                    add(step, "            let bv%d = vec4<f32>(b%d0.%c, b%d1.%c, b%d2.%c, b%d3.%c);\n", h, h, comp[q], h,
                        comp[q], h, comp[q], h, comp[q]);
                else
                    add(step, "            let bv%d = b%d;\n", h, h);
            }
            for (int g = 0; g < tmg; g++)
                for (int i = 0; i < 4; i++)
                    for (int h = 0; h < tng; h++) {
                        if (k->a_stage)
                            add(step, "            c%d%d%d = fma(vec4<f32>(a%d%d.%c), bv%d, c%d%d%d);\n", g, i, h, g, i,
                                comp[q], h, g, i, h);
                        else
                            add(step, "            c%d%d%d = fma(vec4<f32>(a%d.%c), bv%d, c%d%d%d);\n", g, i, h, g, comp[i],
                                h, g, i, h);
                    }
            add(step, "            }\n");
        }
        add(step, "            }\n");
    }
}

/* The name of an invocation's accumulator number a, counting as the declarations do: row
 * block g, row i of it, column block h (tng column blocks). */
static const char *accumulator(char *out, size_t size, int a, int tng) {
    snprintf(out, size, "c%d%d%d", a / (4 * tng), a / tng % 4, a % tng);
    return out;
}

/* The tiled kernel's step: the next step's loads into registers, the multiply of the staged
 * one, a barrier, and the stores of the loaded vec4s over it, in the order k->sched gives:
 * FA, FB the loads of a, b; M<n> the multiply of the next n groups of 4 values of k, M* of
 * the rest; B the barrier; SA, SB the stores (after B: there is one staged tile per
 * operand). The loop takes k->unroll such steps per pass, each with its barrier at the end.
 * The last step fetches past the end of K, which the fetches answer with zeros without
 * reading memory, and stores them where nothing reads them any more: without a branch around
 * either, 4096^3 on an H200 takes 3.41 ms against 3.49. */
static void tiled_text(const matmul_kernel *k, tiled_parts *t) {
    int tmg = k->tm / 4, tng = k->tn / 4;
    int tx = k->bn / k->tn, ty = k->bm / k->tm, wg = tx * ty;
    int a_loads = k->bk * k->bm / (4 * wg), b_loads = k->bk * k->bn / (4 * wg);
    for (int g = 0; g < tmg; g++)
        for (int i = 0; i < 4; i++)
            for (int h = 0; h < tng; h++) add(&t->decl, "    var c%d%d%d = vec4<f32>(0.0);\n", g, i, h);
    for (int j = 0; j < a_loads; j++) add(&t->decl, "    var pa%d = vec4<f32>(0.0);\n", j);
    for (int j = 0; j < b_loads; j++) add(&t->decl, "    var pb%d = vec4<f32>(0.0);\n", j);
    for (int j = 0; j < a_loads; j++)
        add(&t->first, "    stash_a(sl, tid + %du, fetch_a(tid + %du, bases.x, m0, k0, ke));\n", wg * j, wg * j);
    for (int j = 0; j < b_loads; j++)
        add(&t->first, "    stash_b(sl, tid + %du, fetch_b(tid + %du, bases.y, n0, k0, ke));\n", wg * j, wg * j);
    text_buf one = {0};
    int kv_count = k->bk / 4, kv = 0;
    for (const char *p = k->sched; *p;) {
        while (*p == ' ') p++;
        if (!*p) break;
        if (p[0] == 'F' && p[1] == 'A')
            for (int j = 0; j < a_loads; j++) add(&one, "        pa%d = fetch_a(tid + %du, bases.x, m0, k1, ke);\n", j, wg * j);
        else if (p[0] == 'F' && p[1] == 'B')
            for (int j = 0; j < b_loads; j++) add(&one, "        pb%d = fetch_b(tid + %du, bases.y, n0, k1, ke);\n", j, wg * j);
        else if (p[0] == 'S' && p[1] == 'A')
            for (int j = 0; j < a_loads; j++) add(&one, "        stash_a(sl, tid + %du, pa%d);\n", wg * j, j);
        else if (p[0] == 'S' && p[1] == 'B')
            for (int j = 0; j < b_loads; j++) add(&one, "        stash_b(sl, tid + %du, pb%d);\n", wg * j, j);
        else if (p[0] == 'B')
            add(&one, "        workgroupBarrier();  // every read of the staged step done before it is overwritten\n");
        else if (p[0] == 'M') {
            int to = p[1] == '*' ? kv_count : kv + (p[1] - '0');
            if (to > kv_count) to = kv_count;
            tiled_multiply(k, &one, kv, to);
            kv = to;
        }
        while (*p && *p != ' ') p++;
    }
    for (int u = 0; u < k->unroll; u++) {
        add(&t->step, "        {\n        let s = s0 + %du;\n", u);
        add(&t->step, "        let k1 = k0 + (s + 1u) * (T_BK * T_SLICES);  // the slice's next step (past ke at the end)\n");
        add(&t->step, "%s", one.text ? one.text : "");
        add(&t->step, "        workgroupBarrier();  // the next step staged before anyone reads it\n        }\n");
    }
    if (one.failed) t->step.failed = 1;
    free(one.text);
    /* Slices after the first hand their accumulators to the first through tsum, `merge` of
     * them per round (the staged tiles stay where they are: WGSL cannot alias them). */
    int acc = tmg * 4 * tng;
    char c[16];
    add(&t->merge, "    let lead = sl == 0u;\n");
    for (int first = 0; k->slices > 1 && first < acc; first += k->merge) {
        int last = first + k->merge < acc ? first + k->merge : acc;
        for (int from = 1; from < k->slices; from++) {
            add(&t->merge, "    if (sl == %du) {\n", from);
            for (int a = first; a < last; a++)
                add(&t->merge, "        tsum[%du + tid] = %s;\n", wg * (a - first), accumulator(c, sizeof c, a, tng));
            add(&t->merge, "    }\n    workgroupBarrier();\n    if (lead) {\n");
            for (int a = first; a < last; a++) {
                accumulator(c, sizeof c, a, tng);
                add(&t->merge, "        %s = %s + tsum[%du + tid];\n", c, c, wg * (a - first));
            }
            add(&t->merge, "    }\n    workgroupBarrier();\n");
        }
    }
    for (int g = 0; g < tmg; g++)
        for (int i = 0; i < 4; i++) {
            add(&t->store, "    if (m0 + %du + 4u * ty < params.M) {\n", 4 * ty * g + i);
            add(&t->store, "        let row = first + (m0 + %du + 4u * ty) * params.N;\n", 4 * ty * g + i);
            add(&t->store, "        store4(row, n0 + 4u * tx, c%d%d0);\n", g, i);
            for (int h = 1; h < tng; h++)
                add(&t->store, "        if (n0 + %du + 4u * tx < params.N) { store4(row, n0 + %du + 4u * tx, c%d%d%d); }\n",
                    4 * tx * h, 4 * tx * h, g, i, h);
            add(&t->store, "    }\n");
            /* Streamed: the part of a tile where a run ends, whole (rows and columns past the
             * output's edge included: the fix kernel leaves them out). */
            for (int h = 0; k->stream && h < tng; h++)
                add(&t->part, "                part[pbase + (%du + 4u * ty) * %du + tx + %du] = c%d%d%d;\n", 4 * ty * g + i,
                    k->bn / 4, tx * h, g, i, h);
        }
    /* The work around the multiply: one tile's range of K, or streamed, a loop over the parts
     * of the workgroup's run (see stream_start). */
    if (!k->stream) {
        add(&t->open, "    let chunk = group / per_chunk;\n"
                      "    if (chunk >= params.chunks) { return; }  // the grid's spare workgroups, whole: barriers stay uniform\n"
                      "    {\n"
                      "        let rest = group - chunk * per_chunk;\n"
                      "        let kb = chunk * params.kchunk;\n"
                      "        let ke = min(params.K, kb + params.kchunk);\n");
        add(&t->close, "        if (in_range && lead) {\n"
                       "            let first = chunk * params.total + batch * params.M * params.N;\n"
                       "%s"
                       "        }\n"
                       "    }\n", t->store.text ? t->store.text : "");
        return;
    }
    add(&t->open, "    let pw = params.stream.w;\n"
                  "    var pos = group * pw;\n"
                  "    var end = pos + pw;\n"
                  "    if (group >= params.stream.x) {\n"
                  "        pos = stream_start(group - params.stream.x);\n"
                  "        end = stream_start(group - params.stream.x + 1u);\n"
                  "    }\n"
                  "    loop {\n"
                  "        let rest = pos / pw;  // this part: passes p0 .. p1 - 1 of tile rest\n"
                  "        let p0 = pos - rest * pw;\n"
                  "        let p1 = min(end - rest * pw, pw);\n"
                  "        let kb = p0 * (T_BK * T_UNROLL);\n"
                  "        let ke = min(params.K, p1 * (T_BK * T_UNROLL));\n");
    add(&t->close, "        if (in_range && lead) {\n"
                   "            if (p1 < pw) {\n"
                   "                // This run ends inside the tile, whose rest later runs compute: its\n"
                   "                // part to part[run][row][column / 4], which the fix kernel adds.\n"
                   "                let pbase = (group - params.stream.x) * (T_BM * T_BN / 4u);\n"
                   "%s"
                   "            } else {\n"
                   "                let first = batch * params.M * params.N;\n"
                   "%s"
                   "            }\n"
                   "        }\n"
                   "        pos = rest * pw + p1;\n"
                   "        if (pos >= end) { break; }\n"
                   "    }\n", t->part.text ? t->part.text : "", t->store.text ? t->store.text : "");
}

/* The WGSL type of a staged tile: `lines` lines of `pitch` vec4s, one such tile per slice of
 * K where the workgroup has more than one. */
static void tile_type(char *out, size_t size, int lines, int pitch, int slices) {
    if (slices > 1) snprintf(out, size, "array<array<array<vec4<f32>, %d>, %d>, %d>", pitch, lines, slices);
    else snprintf(out, size, "array<array<vec4<f32>, %d>, %d>", pitch, lines);
}

/* Rows: accumulators r<i> (and h<i>, columns 4..7 of an invocation's 8 in ROWS_VEC8), the
 * update for one k (kx in scope, b's values as rows_values names them), the unrolled loop,
 * its tail and the lane reduction. */
static void rows_step(const matmul_kernel *k, text_buf *step) {
    int R = k->rows, eight = k->r_mode == ROWS_VEC8;
    if (k->r_mode == ROWS_K_VEC) { /* R_KW values of K of 4 columns against each row's staged values */
        for (int r = 0; r < R; r++) {
            /* The host reads a directly only for a single row (R = 1). */
            if (k->r_direct && k->r_kw == 8) {
                add(step, "            let aw = load8_a(u32(abase + i32(ks + kx)));\n");
                add(step, "            let s0 = vec4<f32>(unpack2x16float(aw.x), unpack2x16float(aw.y));\n");
                add(step, "            let t0 = vec4<f32>(unpack2x16float(aw.z), unpack2x16float(aw.w));\n");
            } else if (k->r_direct) {
                add(step, "            let s0 = load4_a(u32(abase + i32(ks + kx)));\n");
            } else {
                add(step, "            let s%d = shm[(%du + kx) / 4u];\n", r, (unsigned)(r * k->r_ks));
                if (k->r_kw == 8) add(step, "            let t%d = shm[(%du + kx) / 4u + 1u];\n", r, (unsigned)(r * k->r_ks));
            }
            /* One dot product per column j < R_CW; the accumulator's other components stay 0. */
            add(step, "            r%d = r%d + vec4<f32>(", r, r);
            for (int j = 0; j < 4; j++) {
                if (j >= k->r_cw) add(step, "0.0");
                else if (k->r_kw == 8) add(step, "dot(s%d, lo%d) + dot(t%d, hi%d)", r, j, r, j);
                else add(step, "dot(s%d, b%d)", r, j);
                add(step, j < 3 ? ", " : ");\n");
            }
        }
        return;
    }
    if (R >= 4) {
        for (int q = 0; q < R / 4; q++) {
            add(step, "            let s%d = shm[kx * %du + %du];\n", q, (unsigned)k->r_ap / 4, (unsigned)q);
            for (int i = 0; i < 4; i++) {
                add(step, "            r%d = fma(vec4<f32>(s%d.%c), bx, r%d);\n", 4 * q + i, q, comp[i], 4 * q + i);
                if (eight) add(step, "            h%d = fma(vec4<f32>(s%d.%c), bh, h%d);\n", 4 * q + i, q, comp[i], 4 * q + i);
            }
        }
    } else {
        add(step, "            let s = kx * %du;\n", (unsigned)k->r_ap);
        for (int r = 0; r < R; r++) {
            if (k->r_direct)
                add(step, "            let v%d = load_a(u32(abase + i32(ks + kx) * params.a_sk));\n", r);
            else
                add(step, "            let v%d = shm[(s + %du) / 4u][(s + %du) %% 4u];\n", r, r, r);
            add(step, "            r%d = fma(vec4<f32>(v%d), bx, r%d);\n", r, r, r);
            if (eight) add(step, "            h%d = fma(vec4<f32>(v%d), bh, h%d);\n", r, r, r);
        }
    }
}

/* Loads of b for unrolled step u at offset `off` from kl, then the names rows_step reads. */
static void rows_loads(const matmul_kernel *k, text_buf *t, int u, unsigned off) {
    if (k->r_mode == ROWS_VEC8) {
        add(t, "            let w%d = rows_b8(bases.y, ks + kl + %du, n0, c);\n", u, off);
    } else if (k->r_mode == ROWS_K_VEC) {
        for (int j = 0; j < k->r_cw; j++)
            add(t, "            let b%d_%d = rows_bk%d(bases.y, ks + kl + %du, n0, c, %du);\n", u, j, k->r_kw == 8 ? 8 : 4, off,
                j);
    } else {
        add(t, "            let b%d = rows_b(bases.y, ks + kl + %du, n0, c);\n", u, off);
    }
}

static void rows_values(const matmul_kernel *k, text_buf *t, int u) {
    if (k->r_mode == ROWS_VEC8) {
        add(t, "            let bx = vec4<f32>(unpack2x16float(w%d.x), unpack2x16float(w%d.y));\n", u, u);
        add(t, "            let bh = vec4<f32>(unpack2x16float(w%d.z), unpack2x16float(w%d.w));\n", u, u);
    } else if (k->r_mode == ROWS_K_VEC) {
        for (int j = 0; j < k->r_cw; j++) {
            if (k->r_kw == 8) {
                add(t, "            let lo%d = vec4<f32>(unpack2x16float(b%d_%d.x), unpack2x16float(b%d_%d.y));\n", j, u, j, u, j);
                add(t, "            let hi%d = vec4<f32>(unpack2x16float(b%d_%d.z), unpack2x16float(b%d_%d.w));\n", j, u, j, u, j);
            } else {
                add(t, "            let b%d = b%d_%d;\n", j, u, j);
            }
        }
    } else {
        add(t, "            let bx = b%d;\n", u);
    }
}

static void rows_text(const matmul_kernel *k, text_buf *decl, text_buf *loop, text_buf *reduce) {
    int R = k->rows, U = k->r_unroll, L = k->r_lanes, KW = k->r_kw, halves = k->r_mode == ROWS_VEC8 ? 2 : 1;
    int rg = R < L / 4 ? R : L / 4;
    if (rg > 4) rg = 4;
    for (int r = 0; r < R; r++) add(decl, "    var r%d = vec4<f32>(0.0);\n", r);
    add(decl, "    let abase = bases.x + i32(row0) * params.a_sm;\n");
    if (halves == 2)
        for (int r = 0; r < R; r++) add(decl, "    var h%d = vec4<f32>(0.0);\n", r);
    /* U steps at a time, their loads first, so that as many loads are in flight; then one at
     * a time. */
    add(loop, "        for (; kl + %du < kn; kl = kl + %du) {\n", (unsigned)((U - 1) * L * KW), (unsigned)(U * L * KW));
    for (int u = 0; u < U; u++) rows_loads(k, loop, u, (unsigned)(u * L * KW));
    for (int u = 0; u < U; u++) {
        add(loop, "            {\n            let kx = kl + %du;\n", (unsigned)(u * L * KW));
        rows_values(k, loop, u);
        rows_step(k, loop);
        add(loop, "            }\n");
    }
    add(loop, "        }\n");
    add(loop, "        for (; kl < kn; kl = kl + %du) {\n", (unsigned)(L * KW));
    rows_loads(k, loop, 0, 0);
    add(loop, "            let kx = kl;\n");
    rows_values(k, loop, 0);
    rows_step(k, loop);
    add(loop, "        }\n");
    for (int q = 0; q < R / rg; q++)
        for (int half = 0; half < halves; half++) {
            for (int i = 0; i < rg; i++) add(reduce, "    shm[%du + tid] = %c%d;\n", 256 * i, half ? 'h' : 'r', q * rg + i);
            add(reduce, "    workgroupBarrier();\n    rows_emit(tid, %du, row0, n0, obase, %du);\n    workgroupBarrier();\n",
                q * rg, half);
        }
}

/* Bodies of load_<buf> and load4_<buf> for the operand's binding: f16 words (u32, or
 * vec4<u32> where `vec`), f32 values or vec4s. */
static void load_bodies(const matmul_kernel *k, int vec, const char *buf, char *one, char *four, size_t size) {
    if (k->in == WGT_F16 && vec) {
        snprintf(one, size, "return unpack2x16float(%s[i >> 3u][(i >> 1u) & 3u])[i & 1u];", buf);
        snprintf(four, size,
                 "let w = %s[i >> 3u];\n    let q = (i >> 1u) & 3u;\n"
                 "    return vec4<f32>(unpack2x16float(w[q]), unpack2x16float(w[q + 1u]));", buf);
    } else if (k->in == WGT_F16) {
        snprintf(one, size, "return unpack2x16float(%s[i >> 1u])[i & 1u];", buf);
        snprintf(four, size, "return vec4<f32>(unpack2x16float(%s[i >> 1u]), unpack2x16float(%s[(i >> 1u) + 1u]));", buf,
                 buf);
    } else if (vec) {
        snprintf(one, size, "return %s[i >> 2u][i & 3u];", buf);
        snprintf(four, size, "return %s[i >> 2u];", buf);
    } else {
        snprintf(one, size, "return %s[i];", buf);
        snprintf(four, size, "return vec4<f32>(%s[i], %s[i + 1u], %s[i + 2u], %s[i + 3u]);", buf, buf, buf, buf);
    }
}

static char *build_matmul(wgt_webgpu *w, const void *arg) {
    (void)w;
    const matmul_kernel *k = arg;
    const char *text = wgt_wgsl_source("matmul");
    if (!text) return NULL;
    char load_a[200], load4_a[200], load_b[200], load4_b[200];
    load_bodies(k, k->a_vec, "a", load_a, load4_a, sizeof load_a);
    load_bodies(k, k->b_vec, "b", load_b, load4_b, sizeof load_b);
    const char *load8_b = k->in == WGT_F16 && k->b_vec ? "return b[i >> 3u];" : "return vec4<u32>(0u);";
    const char *load8_a = k->in == WGT_F16 && k->a_vec ? "return a[i >> 3u];" : "return vec4<u32>(0u);";
    const char *store4, *sum_body, *add4 = "";
    if (k->out == WGT_F32)
        add4 = k->out_vec ? "out[(base + n) >> 2u] = out[(base + n) >> 2u] + v;"
                          : "out[base + n] = out[base + n] + v.x;\n"
                            "    if (n + 1u < params.N) { out[base + n + 1u] = out[base + n + 1u] + v.y; }\n"
                            "    if (n + 2u < params.N) { out[base + n + 2u] = out[base + n + 2u] + v.z; }\n"
                            "    if (n + 3u < params.N) { out[base + n + 3u] = out[base + n + 3u] + v.w; }";
    if (k->out == WGT_F16) {
        /* The host guarantees an even N here, so base + n is even and n + 1 < N with n. */
        store4 = "let word = (base + n) / 2u;\n"
                 "    out[word] = f16_bits(v.x) | (f16_bits(v.y) << 16u);\n"
                 "    if (n + 2u < params.N) { out[word + 1u] = f16_bits(v.z) | (f16_bits(v.w) << 16u); }";
        sum_body = "let o = 2u * i;\n"
                   "    if (o < params.total) {\n"
                   "        var lo = 0.0;\n"
                   "        var hi = 0.0;\n"
                   "        let two = o + 1u < params.total;\n"
                   "        for (var c = 0u; c < params.chunks; c = c + 1u) {\n"
                   "            lo = lo + load_a(c * params.total + o);\n"
                   "            if (two) { hi = hi + load_a(c * params.total + o + 1u); }\n"
                   "        }\n"
                   "        var high = 0u;\n"
                   "        if (two) { high = f16_bits(hi); }\n"
                   "        out[i] = f16_bits(lo) | (high << 16u);\n"
                   "    }";
    } else {
        store4 = k->out_vec ? "out[(base + n) >> 2u] = v;"
                            : "put(base + n, v.x);\n"
                              "    if (n + 1u < params.N) { put(base + n + 1u, v.y); }\n"
                              "    if (n + 2u < params.N) { put(base + n + 2u, v.z); }\n"
                              "    if (n + 3u < params.N) { put(base + n + 3u, v.w); }";
        sum_body = "if (i < params.total) {\n"
                   "        var s = 0.0;\n"
                   "        for (var c = 0u; c < params.chunks; c = c + 1u) { s = s + load_a(c * params.total + i); }\n"
                   "        put(i, s);\n"
                   "    }";
    }
    text_buf rdecl = {0}, rloop = {0}, rreduce = {0};
    tiled_parts tp;
    memset(&tp, 0, sizeof tp);
    /* Variants that do not run a kernel still give it valid sizes. */
    matmul_kernel t = *k, r = *k;
    if (k->kind != KERNEL_TILED)
        t.bm = t.bn = 64, t.bk = 16, t.tm = t.tn = 4, t.a_stage = t.b_stage = 0, t.a_pitch = t.b_pitch = 16, t.slices = 1,
        t.unroll = 1, t.stream = 0, snprintf(t.sched, sizeof t.sched, "%s", TILED_SCHEDULE);
    if (k->kind == KERNEL_FIX) /* the streamed kernel's tile, in the same 256 invocations */
        t.bm = k->bm, t.bn = k->bn, t.tm = k->bm / 16, t.tn = k->bn / 16, t.a_pitch = k->bm / 4, t.b_pitch = k->bn / 4;
    if (k->kind != KERNEL_ROWS)
        r.rows = 1, r.r_ap = 1, r.r_ks = 16, r.r_mode = ROWS_VEC4, r.r_lanes = 16, r.r_unroll = 1, r.r_kw = 1, r.r_cw = 4, r.r_turns = 0;
    tiled_text(&t, &tp);
    rows_text(&r, &rdecl, &rloop, &rreduce);
    char bm[16], bn[16], bk[16], am[16], bmode[16], ast[16], bst[16], at[96], bt[96], ttx[16], tty[16];
    char rr[16], rap[16], rks[16], rmode[16], rg[16], rl[16], rkw[16], rcw[16], rout[16];
    snprintf(bm, sizeof bm, "%d", t.bm);
    snprintf(bn, sizeof bn, "%d", t.bn);
    snprintf(bk, sizeof bk, "%d", t.bk);
    snprintf(am, sizeof am, "%d", t.a_mode);
    snprintf(bmode, sizeof bmode, "%d", t.b_mode);
    snprintf(ast, sizeof ast, "%d", t.a_stage);
    snprintf(bst, sizeof bst, "%d", t.b_stage);
    snprintf(ttx, sizeof ttx, "%d", t.bn / t.tn);
    snprintf(tty, sizeof tty, "%d", t.bm / t.tm);
    tile_type(at, sizeof at, t.a_stage ? t.bm / 4 : t.bk, t.a_pitch, t.slices);
    tile_type(bt, sizeof bt, t.b_stage ? t.bn / 4 : t.bk, t.b_pitch, t.slices);
    char slices[16], tsum[16], unroll[16];
    snprintf(unroll, sizeof unroll, "%d", t.unroll);
    snprintf(slices, sizeof slices, "%d", t.slices);
    snprintf(tsum, sizeof tsum, "%d", t.slices > 1 ? t.merge * (t.bn / t.tn) * (t.bm / t.tm) : 1);
    snprintf(rr, sizeof rr, "%d", r.rows);
    snprintf(rap, sizeof rap, "%d", r.r_ap);
    snprintf(rks, sizeof rks, "%d", r.r_ks);
    snprintf(rmode, sizeof rmode, "%d", r.r_mode);
    int rgv = r.rows < r.r_lanes / 4 ? r.rows : r.r_lanes / 4;
    snprintf(rg, sizeof rg, "%d", rgv > 4 ? 4 : rgv);
    snprintf(rl, sizeof rl, "%d", r.r_lanes);
    snprintf(rkw, sizeof rkw, "%d", r.r_kw);
    snprintf(rcw, sizeof rcw, "%d", r.r_cw);
    snprintf(rout, sizeof rout, "%d", r.r_mode == ROWS_K_VEC ? r.r_cw : 4);
    const char *in_storage = k->in == WGT_F16 ? "u32" : "f32";
    const char *out_storage = k->out == WGT_F16 ? "u32" : k->out_vec ? "vec4<f32>" : "f32";
    const char *put = k->out == WGT_F16 ? "out[i] = f16_bits(v);" : k->out_vec ? "out[i >> 2u][i & 3u] = v;" : "out[i] = v;";
    const char *put_word = k->out == WGT_F16 ? "out[i] = v;"
                           : k->out_vec      ? "out[i >> 2u][i & 3u] = bitcast<f32>(v);"
                                             : "out[i] = bitcast<f32>(v);";
    const char *rows_f16 = k->kind == KERNEL_ROWS && k->out == WGT_F16 ? "1" : "0";
    char *result = NULL;
    int failed = rdecl.failed || rloop.failed || rreduce.failed;
    text_buf *parts[] = {&tp.decl, &tp.first, &tp.step, &tp.merge, &tp.open, &tp.close};
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) failed |= parts[i]->failed || !parts[i]->text;
    failed |= tp.store.failed || tp.part.failed; /* inside open and close */
    if (!failed) {
        const char *pairs[] = {"A_STORAGE", k->a_vec ? (k->in == WGT_F16 ? "vec4<u32>" : "vec4<f32>") : in_storage,
                               "B_STORAGE", k->b_vec ? (k->in == WGT_F16 ? "vec4<u32>" : "vec4<f32>") : in_storage,
                               "LOAD8_B", load8_b, "LOAD8_A", load8_a, "R_DIRECT", r.r_direct ? "1" : "0",
                               "OUT_STORAGE", out_storage,
                               "LOAD_A", load_a, "LOAD4_A", load4_a, "LOAD_B", load_b, "LOAD4_B", load4_b,
                               "PUT", put, "PUT_WORD", put_word, "R_F16", rows_f16, "STORE4", store4, "SUM_BODY", sum_body,
                               "T_BM", bm, "T_BN", bn, "T_BK", bk, "A_MODE", am, "B_MODE", bmode,
                               "A_STAGE", ast, "B_STAGE", bst, "A_TILE", at, "B_TILE", bt, "T_TX", ttx, "T_TY", tty,
                               "ACC_DECL", tp.decl.text, "FIRST_FETCH", tp.first.text, "STEP", tp.step.text,
                               "ACC_MERGE", tp.merge.text, "PART_OPEN", tp.open.text, "PART_CLOSE", tp.close.text,
                               "ADD4", add4,
                               /* The streamed kernel writes two bindings, out and part; the
                                * uniform follows the storage bindings. */
                               "PART_BINDING", t.stream ? "@group(0) @binding(3) var<storage, read_write> part: array<vec4<f32>>;" : "",
                               "PARAMS_BINDING", t.stream ? "4" : "3",
                               "T_SLICES", slices, "T_UNROLL", unroll, "TS", slice_index(&t), "T_SUM", tsum,
                               /* A constant slice 0 where there is one, so the text folds to the
                                * unsliced kernel's. */
                               "SLICE_OF", t.slices > 1 ? "    let tid = lid % T_WG;\n    let sl = lid / T_WG;"
                                                        : "    let tid = lid;\n    let sl = 0u;",
                               "R_ROWS", rr, "R_AP", rap, "R_KS", rks, "R_MODE", rmode, "R_RG", rg, "R_LANES", rl,
                               "R_KW", rkw, "R_CW", rcw, "R_OUT", rout, "ROWS_DECL", rdecl.text, "ROWS_LOOP", rloop.text,
                               "ROWS_REDUCE", rreduce.text,
                               /* A loop over tiles only where it is needed: around the staged
                               * kernels of 16 rows it cost 16 x 8192 x 8192 0.136 -> 0.231 ms. */
                               "ROWS_OPEN", r.r_turns
                                   ? "    for (var group = wid.x + wid.y * groups.x; group < per_chunk * params.chunks;\n"
                                     "         group = group + groups.x * groups.y) {"
                                   : "    let group = wid.x + wid.y * groups.x;\n"
                                     "    if (group >= per_chunk * params.chunks) { return; }\n    {",
                               /* The other kernels keep names of their own and are left out of the pipeline. */
                               "TILED_ENTRY", k->kind == KERNEL_TILED ? "main" : "tiled",
                               "ROWS_ENTRY", k->kind == KERNEL_ROWS ? "main" : "rows",
                               "SUM_ENTRY", k->kind == KERNEL_SUM ? "main" : "sum",
                               "FIX_ENTRY", k->kind == KERNEL_FIX ? "main" : "fix",
                               "PACK_ENTRY", k->kind == KERNEL_PACK ? "main" : "pack",
                               "PACK_B", k->pack_b ? "true" : "false", "PACK_READ_K", k->pack_read_k ? "true" : "false",
                               NULL};
        result = wgt_wgsl_expand(text, pairs);
    }
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) free(parts[i]->text);
    free(tp.store.text), free(tp.part.text);
    free(rdecl.text), free(rloop.text);
    free(rreduce.text);
    return result;
}

/* ---- dispatch -------------------------------------------------------------------------- */

/* Dispatches one kernel on (a, b) into dst, and into part where the kernel is streamed. */
static wgt_status run(wgt_webgpu *w, const matmul_kernel *k, const matmul_params *p, wgt_buffer *a, wgt_buffer *b,
                      wgt_buffer *dst, wgt_buffer *part, uint64_t workgroups) {
    char key[256];
    snprintf(key, sizeof key, "matmul:%s:%s->%s:v%d%d%d:t%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%s,%d:r%d,%d,%d,%d,%d,%d,%d,%d,%d,%d:p%d,%d",
             kernel_names[k->kind], wgt_dtype_name(k->in), wgt_dtype_name(k->out), k->a_vec, k->b_vec, k->out_vec, k->bm,
             k->bn, k->bk, k->tm, k->tn, k->a_mode, k->b_mode, k->a_stage, k->b_stage, k->a_pitch, k->b_pitch,
             k->slices, k->merge, k->unroll, k->sched, k->stream, k->rows, k->r_mode, k->r_ap, k->r_ks, k->r_lanes, k->r_unroll, k->r_kw, k->r_cw, k->r_direct, k->r_turns,
             k->pack_b, k->pack_read_k);
    wgt_pipeline *pl;
    int streamed = k->kind == KERNEL_TILED && k->stream;
    wgt_status st = wgt_wgpu_pipeline_writing(w, key, streamed ? 4 : 3, streamed ? 2 : 1, build_matmul, k, &pl);
    if (st != WGT_OK) return st;
    wgt_buffer *buffers[4] = {a, b, dst, part};
    return wgt_wgpu_dispatch(w, pl, buffers, p, sizeof *p, workgroups);
}

/* A stride as the kernels see it: 0 for a length-1 dimension, whose stride is never used
 * and may not fit in 32 bits. */
static int32_t stride32(int64_t len, int64_t stride) { return len == 1 ? 0 : (int32_t)stride; }

/* An operand as the kernels see it after the host's choice of orientation. */
typedef struct {
    wgt_buffer *buffer;
    uint32_t offset;
    int32_t s_outer, s_k; /* strides along its M (N) dimension and along K */
    int32_t batch[8];
} side;

/* The operands' offsets and strides in the kernels' parameters, as the sides hold them. */
static void params_from_sides(matmul_params *p, const side *sa, const side *sb, int batch_ndim) {
    p->a_offset = sa->offset;
    p->b_offset = sb->offset;
    p->a_sm = sa->s_outer;
    p->a_sk = sa->s_k;
    p->b_sk = sb->s_k;
    p->b_sn = sb->s_outer;
    for (int d = 0; d < batch_ndim; d++) p->a_batch[d] = sa->batch[d], p->b_batch[d] = sb->batch[d];
}

/* Whether the operand is fetched along K: its stride 1 is along K (a stored by rows, b by
 * columns), not along M (N). */
static int along_k(const side *s) { return s->s_k == 1 && s->s_outer != 1; }

/* Whether the operand can be fetched `width` elements at a time (one 16-byte vector) along
 * the dimension of stride 1 whose length is `len`: aligned start, other strides and length,
 * so that each vector lies whole inside or whole outside the matrix (and the buffer holds at
 * least one vector, as a vector binding must). */
static int vec_ok(const side *s, int32_t other_stride, int64_t len, int batch_ndim, int width) {
    if (s->offset % width || other_stride % width || len % width || s->buffer->size < 16) return 0;
    for (int d = 0; d < batch_ndim; d++)
        if (s->batch[d] % width) return 0;
    return 1;
}

/* Workgroup memory of the tiled kernel's staged tiles, in bytes. */
static uint32_t tile_bytes(const matmul_kernel *k) {
    int a_lines = k->a_stage ? k->bm / 4 : k->bk, b_lines = k->b_stage ? k->bn / 4 : k->bk;
    return (uint32_t)(16 * (a_lines * k->a_pitch + b_lines * k->b_pitch));
}

/* Pitches of the staged tiles. Lines along K hold four rows and one vec4 of padding, so the
 * four rows a warp reads at once fall in different banks; lines along M (N) get a vec4 of
 * padding where values are stored one at a time (a fetch along K), which spreads those
 * stores. Devices with less workgroup memory go without padding, then with shorter steps
 * (the 128 x 128 tiles fit the WebGPU minimum of 16 KB in steps of 8). */
static void fit_tiles(matmul_kernel *k, uint32_t max_shared) {
    for (;;) {
        k->a_pitch = k->a_stage ? k->bk + 1 : k->bm / 4 + (k->a_mode & 1);
        k->b_pitch = k->b_stage ? k->bk + 1 : k->bn / 4 + (k->b_mode & 1);
        if (tile_bytes(k) <= max_shared) return;
        k->a_pitch = k->a_stage ? k->bk : k->bm / 4;
        k->b_pitch = k->b_stage ? k->bk : k->bn / 4;
        if (tile_bytes(k) <= max_shared || k->bk == 8 || k->bm * k->bn < 128 * 128) return;
        k->bk /= 2;
    }
}

static uint64_t ceil_div(uint64_t x, uint64_t y) { return (x + y - 1) / y; }

/* The order of the tiled kernel's step, and steps per pass of its loop. Where both operands
 * are staged along M and N over long K, two steps per pass, and the loads of an operand
 * fetched along K (whose stores are four values at a time) issued after the other's, in the
 * multiply: the driver's register allocation decides the speed here, as these figures show
 * (H200, 4096^3, ms, nn / nt (x @ w^T) / tn (a^T @ b); the kernels use 126 to 128 registers
 * either way, so that two workgroups share a multiprocessor, and where they need more the
 * driver moves some to workgroup memory, seen in the pipeline statistics as 7 KB more):
 *   one step per pass, "FA FB M* B SA SB":                 3.247 / 3.194 / 3.273
 *   two, "FA FB M* B SA SB":                               3.274 / 3.359 / 3.048 (nn, nt spill)
 *   two, "FA FB M* B SB SA":                               3.194 / 3.351 / 3.063 (nn, nt spill)
 *   two, "FB M2 FA M* B SB SA":                            3.166 / 3.327 / 2.989 (nt spills)
 *   two, "FA M1 FB M* B SB SA":                            3.207 / 3.166 / 2.998
 * nn's order with the roles of a and b swapped serves a^T @ b^T (not timed). 8192^3 went
 * from 25.39 to 25.00 ms and 2048^3 from 0.422 to 0.416. Short K keeps one step per pass:
 * the attention shape (K = 128) took 0.039 ms in two against 0.037. Two slots of staged
 * tiles per operand with one barrier per step took 147 to 201 registers, one workgroup per
 * multiprocessor and 3.40 ms or more. */
static void tiled_schedule(matmul_kernel *k, int along_mn, uint64_t K) {
    const char *s = TILED_SCHEDULE;
    k->unroll = 1;
    if (along_mn && K >= 512) {
        k->unroll = 2;
        int a_k = k->a_mode == FETCH_K_VEC4, b_k = k->b_mode == FETCH_K_VEC4;
        if (a_k && b_k) s = "FA M1 FB M* B SB SA";
        else if (a_k) s = "FB M2 FA M* B SB SA";
        else if (b_k) s = "FA M2 FB M* B SA SB";
        else s = "FB M2 FA M* B SB SA";
    }
    snprintf(k->sched, sizeof k->sched, "%s", s);
}

/* Streaming the last wave of 128 x 128 tiles. A tile is one workgroup's work, and the device
 * runs as many at once as it has slots: TILE_128_PER_UNIT per compute unit (256 invocations of
 * 126 to 128 registers each on NVIDIA's driver, half a multiprocessor's 65536). Where the tiles
 * leave the last wave part empty, the device idles that part: on an H200 (264 slots), 960 to
 * 1056 tiles of 4096 x 4096 over K = 4096 all take 3.165 ms, 3.64 to 4 waves. Streamed, the
 * tiles of the last two waves become equal runs of passes over K, one per slot, which end
 * together (here a run is one to two tiles long; under one wave, shorter than a tile); a run
 * that ends inside a tile writes its part of it to a buffer of one tile per run, and the fix
 * kernel adds a split tile's parts to what the run that finished it wrote. That costs:
 * the kernel with its loop over parts takes 3 KB of workgroup memory for registers the driver
 * moves there (a @ b), the runs read a and b at more places at once, and the fix kernel reads
 * and writes the split tiles again. Measured on the H200 (ms, whole tiles / streamed): M x 4096
 * x 4096 with M = 3840 (3.64 waves) 3.170 / 3.018, M = 4352 (4.12) 3.595 / 3.376, but 4096^3
 * (3.88) 3.169 / 3.211 and x @ w^T 3.172 / 3.254, 8192^3 (15.5) 25.02 / 24.81. So streaming
 * runs only where the idle part of the last wave is at least STREAM_MIN_IDLE of all the time
 * the waves take, and only for tiles staged along M and N (a 4097^3 kernel staged otherwise
 * took 159 registers streamed, one workgroup per multiprocessor). */
#define TILE_128_PER_UNIT 2
#define STREAM_MIN_IDLE 0.05

/* Under one wave, runs shorter than this many passes are not made: fewer runs take the passes;
 * and tiles fewer than 1 / STREAM_MIN_FILL of the slots are not streamed (1024^3, 64 tiles on
 * an H200's 264 slots, took 0.088 ms streamed against 0.068 in smaller tiles). */
#define STREAM_MIN_RUN 4
#define STREAM_MIN_FILL 4

/* Whether to stream `tiles` tiles of `passes` passes over K each on w, and if so the stream
 * parameters (p->stream) and the workgroups to run: the whole tiles of all but the last two
 * waves, then one run per slot (at most). With fewer tiles than slots, every tile is streamed
 * and a run may be shorter than a tile, so that one tile's passes are shared by several runs. */
static int stream_plan(const wgt_webgpu *w, uint64_t tiles, uint64_t passes, matmul_params *p, uint64_t *groups) {
    uint64_t slots = (uint64_t)w->compute_units * TILE_128_PER_UNIT;
    if (slots == 0 || passes < 2 || tiles * passes > UINT32_MAX) return 0;
    if (tiles * STREAM_MIN_FILL < slots) return 0;
    uint64_t room = ceil_div(tiles, slots) * slots;
    if ((double)(room - tiles) < STREAM_MIN_IDLE * (double)room) return 0;
    uint64_t whole = tiles > slots ? (tiles / slots - 1) * slots : 0, rest = (tiles - whole) * passes;
    uint64_t runs = slots;
    if (tiles < slots && rest / STREAM_MIN_RUN < runs) runs = rest / STREAM_MIN_RUN;
    if (runs <= tiles - whole && tiles < slots) return 0; /* no tile would be shared */
    p->stream[0] = (uint32_t)whole;
    p->stream[1] = (uint32_t)(rest / runs);
    p->stream[2] = (uint32_t)(rest % runs);
    p->stream[3] = (uint32_t)passes;
    *groups = whole + runs;
    return 1;
}

/* A vector times a matrix stored by columns (w @ v for w stored by rows: every value of w read
 * once, 16 bytes at a time along K, 32 lanes per column). Each invocation takes R_CW columns,
 * 4, 2 or 1: the most that still gives ROWS_GROUPS workgroups, since splitting K costs
 * partial results and the sum kernel; R_CW x R_UNROLL = 8 loads in flight per invocation.
 * Where there are more workgroups than ROWS_PER_UNIT per compute unit, only that many run, each
 * taking every so many tiles in turn. Measured on an H200 (f16 w [n, 8192] @ v, ms; columns per
 * invocation, one workgroup per tile; then the choice, capped at 3 x 132 workgroups):
 *       n   4 columns        2      1      chosen
 *    2048   0.016 (K split)         0.014  0.014 (1)
 *    4096   0.029 (K split)  0.026  0.030  0.026 (2)
 *    8192   0.041            0.045  0.044  0.041 (4)
 *   16384   0.076            0.072  0.077  0.073 (4; capped at 2 or 4 per unit: 0.073, 0.077)
 *   32768   0.132            0.132  0.135  0.130 (4; capped at 2 or 4 per unit: 0.134, 0.141)
 * Four workgroups of 61 to 79 registers fit a multiprocessor, yet three stream faster. */
#define ROWS_PER_UNIT 3
static void rows_columns(matmul_kernel *k, uint64_t batch, uint32_t N) {
    uint64_t column_groups = WORKGROUP_SIZE / (uint64_t)k->r_lanes;
    for (k->r_cw = 4; k->r_cw > 1; k->r_cw /= 2)
        if (batch * ceil_div((uint64_t)N, (uint64_t)k->r_cw * column_groups) >= ROWS_GROUPS) break;
    k->r_unroll = 8 / k->r_cw;
}

/* Splits K into about `chunks` ranges of kchunk values, a multiple of `unit`. */
static void set_chunks(matmul_params *p, uint64_t K, uint64_t chunks, uint64_t unit) {
    uint64_t kchunk = ceil_div(ceil_div(K ? K : 1, chunks), unit) * unit;
    p->kchunk = (uint32_t)kchunk;
    p->chunks = (uint32_t)ceil_div(K ? K : 1, kchunk);
}

/* Splits K into `chunks` ranges of kchunk values (a multiple of `unit`) so that about
 * `target` workgroups run, each range at least min_k long; the partial results, chunks x
 * total floats, stay within the buffer limit. */
static void split_k(wgt_webgpu *w, uint64_t K, uint64_t groups, uint64_t target, uint64_t min_k, uint64_t unit,
                    uint64_t total, matmul_params *p) {
    uint64_t chunks = 1;
    if (groups < target && K > min_k) {
        chunks = ceil_div(target, groups);
        if (chunks > K / min_k) chunks = K / min_k;
        uint64_t limit = w->base.max_buffer_bytes / 4 / total;
        if (limit > (1u << 31) / total) limit = (1u << 31) / total;
        if (chunks > limit) chunks = limit;
        if (chunks < 1) chunks = 1;
    }
    set_chunks(p, K, chunks, unit);
}

/* Where split_k split K, pairs of its ranges become two slices of one workgroup instead,
 * where the device allows 512 invocations along x and two sets of staged tiles: the same
 * invocations at work, without the partial results' writes and reads or the sum kernel
 * (1024^3 on an H200: 0.075 ms in two ranges of 128 x 64 tiles, 0.068 in two slices, where
 * PyTorch takes 0.059). Each round of the final merge hands over `merge` accumulators per
 * invocation, as many as the workgroup memory left over holds. Tiles of 128 x 128 stay
 * unsliced: two sets of them need 38 KB of workgroup memory, more than most devices (and
 * every test device) have, and 512 invocations of 8 x 8 outputs would take a whole
 * multiprocessor's registers. */
static void slice_k(wgt_webgpu *w, matmul_kernel *k, matmul_params *p, uint64_t K, uint32_t max_shared) {
    k->slices = 1, k->merge = 1;
    uint32_t tiles = 2 * tile_bytes(k), per_round = 16 * WORKGROUP_SIZE;
    const WGPULimits *l = &w->limits.limits;
    if (p->chunks < 2 || k->bm * k->bn >= 128 * 128 || l->maxComputeInvocationsPerWorkgroup < 2 * WORKGROUP_SIZE ||
        l->maxComputeWorkgroupSizeX < 2 * WORKGROUP_SIZE || tiles + per_round > max_shared)
        return;
    int acc = k->tm * k->tn / 4; /* vec4 accumulators per invocation */
    k->slices = 2;
    k->merge = (int)((max_shared - tiles) / per_round);
    if (k->merge > acc) k->merge = acc;
    set_chunks(p, K, ceil_div(p->chunks, 2), (uint64_t)k->bk);
}

/* Packing an operand of the 128 x 128 tiles. The tiled kernel is fastest with both operands
 * fetched as vec4s along M and N (a^T @ b), slower with an operand fetched along K (a stored
 * by rows, b by columns: its vec4s are stored into the staged tile one value at a time), and
 * slowest where an operand can only be read element by element (rows whose length is not a
 * multiple of 4). The pack kernel copies such an operand into K lines of its M (N) values,
 * which the tiled kernel then fetches as vec4s along M (N). The copy reads and writes the
 * operand once, which a long product repays. Measured on an H200 (ms, unpacked / packed;
 * the copy included):
 *   a @ b 4096^3            3.168 / 3.033 (a packed)
 *   a @ b^T 4096^3          3.167 / 3.070 (both; either alone 3.21)
 *   a @ b 4352 x 4096^2     3.378 / 3.143;  8192^3 25.02 / 23.71;  2048^3 0.417 / 0.408
 *   a @ b 4097^3            3.873 / 3.679 (both; b alone 3.801, a alone 4.065)
 *   a^T @ b 4096^3          2.992 (nothing to pack)
 *   a training step's logit gradients, odd rows of 50257 read element by element against
 *   768 columns: dL @ W 18.33 / 14.64, dL^T @ x 15.00 / 14.26 (PyTorch 12.98, 11.81)
 * So an operand is packed where the other side has at least PACK_MIN_OTHER values
 * (PACK_MIN_UNALIGNED for one read element by element) and K at least PACK_MIN_K; smaller
 * products take smaller tiles, which are not packed. Only single matrices (batch 1) of f32
 * values are packed. */
#define PACK_MIN_OTHER 2048
#define PACK_MIN_UNALIGNED 512
#define PACK_MIN_K 256

/* Values per line of a packed operand: M (N) rounded up to 32 (128 bytes), so that every line
 * starts a cache line, with zeros past M (N). (4097^3 took the same time with lines of 4100
 * values.) The pack kernel computes the same. */
static uint64_t pack_pitch(uint64_t outer) { return (outer + 31) & ~(uint64_t)31; }

static int pack_pays(const wgt_webgpu *w, int unaligned, int under_wave, uint64_t outer, uint64_t other, uint64_t K) {
    uint64_t pitch = pack_pitch(outer);
    uint64_t min_other = under_wave ? 0 : unaligned ? PACK_MIN_UNALIGNED : PACK_MIN_OTHER;
    return other >= min_other && K >= PACK_MIN_K && K * pitch <= INT32_MAX && K * pitch * 4 <= w->base.max_buffer_bytes;
}

/* The tiled kernel's tile and how K is split, by the tiles' fill of the device's slots (two
 * 128 x 128 tiles per compute unit, TILE_128_PER_UNIT). Measured on an H200 (264 slots; ms, the
 * old choice / the new; PyTorch in the same run):
 *   n^3    128 tiles  old choice                     new choice
 *   1000      64      64 x 64, 0.076                 128 x 64 in two slices of K, 0.068 (0.053)
 *   1152      81      128 x 64 in two slices, 0.143  K in 3 ranges, 243 tiles, 0.101 (0.082)
 *   1280     100      K in 2 ranges, 0.149           streamed, 0.141 (0.121)
 *   1536     144      K in 2 ranges, 0.272           streamed, 0.209 (0.190)
 *   1792     196      K in 2 ranges, 0.322           streamed, 0.301 (0.277)
 * (two slices of 128 x 64 tiles take a whole multiprocessor, so 162 of them make two waves on
 * 132; 288 ranges of 1536's tiles make two waves of 264). In order:
 * - where splitting K into ranges of at least WAVE_MIN_K fills at least WAVE_FILL of the slots
 *   with one wave of 128 x 128 tiles, that many ranges (1152: 3, 92%; 2048: 1, 97%);
 * - else a single f32 matrix runs its 128 x 128 tiles streamed where stream_plan takes them
 *   (at least a quarter of the slots' worth: under_wave), their passes over K shared out among
 *   the slots, its operands packed so that the tiles qualify;
 * - else the largest tile that gives TILED_GROUPS workgroups, splitting K in ranges of at
 *   least SPLIT_MIN_K for 128 x 128 tiles (partial results and the sum kernel), SLICE_MIN_K
 *   for the smaller ones (whose pairs of ranges become slices of one workgroup, slice_k); else
 *   64 x 64, split as far as K allows. 1024^3 in 4 ranges of 256 took 0.076 ms against 0.068
 *   for 128 x 64 tiles in two slices, hence the longer ranges for 128 x 128 tiles. */
#define WAVE_FILL 0.85
#define WAVE_MIN_K 384
#define SPLIT_MIN_K 512
#define SLICE_MIN_K 256
static void choose_tiles(const wgt_webgpu *w, uint64_t batch, int single_f32, uint64_t M, uint64_t N, uint64_t K,
                         int *bm, int *bn, uint64_t *wave_chunks, int *under_wave) {
    uint64_t slots = (uint64_t)w->compute_units * TILE_128_PER_UNIT, groups;
    uint64_t big = batch * ceil_div(M, 128) * ceil_div(N, 128);
    *bm = *bn = 128, *wave_chunks = 0, *under_wave = 0;
    if (big < slots) {
        uint64_t c = slots / big;
        if (c > K / WAVE_MIN_K) c = K / WAVE_MIN_K;
        if (c >= 1 && (double)(big * c) >= WAVE_FILL * (double)slots) {
            *wave_chunks = c;
            return;
        }
        /* Passes as the streamed tiles will take them: steps of 16, two per pass from K = 512
         * (tiled_schedule); a device that needs shorter steps (fit_tiles) only has more. */
        matmul_params scratch;
        if (single_f32 && batch == 1 && K >= PACK_MIN_K &&
            stream_plan(w, big, ceil_div(K, K >= 512 ? 32 : 16), &scratch, &groups)) {
            *under_wave = 1;
            return;
        }
    }
    static const int tiles[3][2] = {{128, 128}, {128, 64}, {64, 64}};
    for (int c = 0; c < 3; c++) {
        *bm = tiles[c][0], *bn = tiles[c][1];
        if (*bm != *bn && N > M) *bm = 64, *bn = 128;
        uint64_t min_k = c == 0 ? SPLIT_MIN_K : SLICE_MIN_K, chunks_max = K / min_k ? K / min_k : 1;
        uint64_t g = batch * ceil_div(M, (uint64_t)*bm) * ceil_div(N, (uint64_t)*bn);
        uint64_t split = ceil_div(TILED_GROUPS, g);
        if (split > chunks_max) split = chunks_max;
        if (g * split >= TILED_GROUPS) return;
    }
}

/* Packs operand a (is_b = 0) or b, of `outer` rows (M or N), as p describes it, into a new
 * buffer *packed, and points its side at that (params_from_sides then carries it into the
 * kernel's parameters). Both operands are bound (the pack kernel reads the one it packs). */
static wgt_status pack(wgt_webgpu *w, const matmul_params *p, side *sa, side *sb, int is_b, uint32_t outer,
                       wgt_buffer **packed) {
    side *s = is_b ? sb : sa;
    uint32_t pitch = (uint32_t)pack_pitch(outer);
    wgt_status st = wgt_wgpu_buffer_create(&w->base, (size_t)p->K * pitch * 4, 0, packed);
    if (st != WGT_OK) return st;
    matmul_kernel k;
    memset(&k, 0, sizeof k);
    k.kind = KERNEL_PACK;
    k.in = k.out = WGT_F32;
    k.pack_b = is_b;
    k.pack_read_k = along_k(s);
    st = run(w, &k, p, sa->buffer, sb->buffer, *packed, NULL, (uint64_t)(pitch / 32) * ceil_div(p->K, 32));
    if (st != WGT_OK) {
        wgt_wgpu_buffer_destroy(&w->base, *packed);
        *packed = NULL;
        return st;
    }
    s->buffer = *packed;
    s->offset = 0;
    s->s_outer = 1;
    s->s_k = (int32_t)pitch;
    return WGT_OK;
}

/* Whether dimensions [0, last] of x merge into one: each one's stride is the next one's
 * stride times its length (a row-major run, possibly with gaps after it). */
static int merges(const wgt_operand *x, int last) {
    for (int d = 0; d < last; d++)
        if (x->strides[d] != x->strides[d + 1] * x->shape[d + 1]) return 0;
    return 1;
}

/* A batch of products against one matrix b (b broadcast over every batch dimension, as a
 * linear layer's weight over [batch, tokens, features]) is one product of batch x M rows
 * where a's and out's batch dimensions merge with their rows: one launch of larger tiles
 * instead of batch launches' worth of tiles, and 2-D operands qualify for packing (a
 * [8, 1024, 768] @ [768, 50257] product on an H200: 14.8 ms as a batch, 13.8 as one matrix).
 * Fills the 2-D views and returns 1 where that holds. */
static int fold_batch(const wgt_operand *out, const wgt_operand *a, const wgt_operand *b, wgt_operand *out2,
                      wgt_operand *a2, wgt_operand *b2) {
    int nd = out->ndim;
    if (nd < 3 || !merges(a, nd - 2) || !merges(out, nd - 2)) return 0;
    for (int d = 0; d < nd - 2; d++)
        if (out->shape[d] > 1 && b->strides[d] != 0) return 0;
    wgt_operand *v[3] = {out2, a2, b2};
    const wgt_operand *x[3] = {out, a, b};
    for (int i = 0; i < 3; i++) {
        *v[i] = *x[i];
        v[i]->ndim = 2;
        v[i]->shape[0] = x[i]->shape[nd - 2], v[i]->shape[1] = x[i]->shape[nd - 1];
        v[i]->strides[0] = x[i]->strides[nd - 2], v[i]->strides[1] = x[i]->strides[nd - 1];
        if (i < 2)
            for (int d = 0; d < nd - 2; d++) v[i]->shape[0] *= x[i]->shape[d];
    }
    return 1;
}

wgt_status wgt_wgpu_matmul(wgt_backend *be, const wgt_operand *out, const wgt_operand *a, const wgt_operand *b) {
    if (wgt_dtype_is_integer(out->dtype)) /* matmul_int.c */
        return wgt_wgpu_matmul_int((wgt_webgpu *)be, out, a, b);
    wgt_operand out2, a2, b2;
    if (fold_batch(out, a, b, &out2, &a2, &b2)) return wgt_wgpu_matmul(be, &out2, &a2, &b2);
    wgt_webgpu *w = (wgt_webgpu *)be;
    int nd = out->ndim;
    if (nd < 2 || nd > WGT_MAX_DIMS) return wgt_error(WGT_ERR_INTERNAL, "matmul output of rank %d", nd);
    /* The kernels index the output from 0 and pair f16 outputs from an even element. */
    if (out->offset != 0) return wgt_error(WGT_ERR_INTERNAL, "matmul output at offset %lld", (long long)out->offset);
    int64_t M = out->shape[nd - 2], N = out->shape[nd - 1], K = a->shape[nd - 1];
    uint64_t batch = 1;
    matmul_params p;
    memset(&p, 0, sizeof p);
    side sa = {a->buffer, (uint32_t)a->offset, stride32(M, a->strides[nd - 2]), stride32(K, a->strides[nd - 1]), {0}};
    side sb = {b->buffer, (uint32_t)b->offset, stride32(N, b->strides[nd - 1]), stride32(K, b->strides[nd - 2]), {0}};
    for (int d = 0; d < nd - 2; d++) {
        batch *= (uint64_t)out->shape[d];
        p.batch_shape[d] = (uint32_t)out->shape[d];
        sa.batch[d] = stride32(out->shape[d], a->strides[d]);
        sb.batch[d] = stride32(out->shape[d], b->strides[d]);
    }
    uint64_t total = batch * (uint64_t)M * (uint64_t)N;
    if (total == 0) return WGT_OK;
    if (total > INT32_MAX || (uint64_t)K > INT32_MAX)
        return wgt_error(WGT_ERR_LIMIT, "matmul of %llu outputs over K = %lld is beyond 32-bit indexing",
                         (unsigned long long)total, (long long)K);
    /* f16 products on tensor cores where the device has subgroup matrices (matmul_sgmatrix.c). */
    if (wgt_wgpu_sgmatrix_takes(w, out, a, b)) return wgt_wgpu_matmul_sgmatrix(w, out, a, b);
    int bnd = nd - 2;
    p.K = (uint32_t)K;
    p.batch = (uint32_t)batch;
    p.batch_ndim = (uint32_t)bnd;
    p.total = (uint32_t)total;
    matmul_kernel k;
    memset(&k, 0, sizeof k);
    k.in = a->dtype;
    k.out = out->dtype;
    int f16_out = out->dtype == WGT_F16;

    /* N = 1 is the transposed product with one row: out^T = b^T a^T has the same flat layout. */
    if (N == 1 && M > 1) {
        side t = sa;
        sa = sb;
        sb = t;
        int64_t x = M;
        M = N;
        N = x;
    }
    p.M = (uint32_t)M;
    p.N = (uint32_t)N;
    params_from_sides(&p, &sa, &sb, bnd);

    wgt_buffer *dst = out->buffer, *part = NULL, *packed[2] = {NULL, NULL}, *padded_out = NULL;
    uint32_t max_shared = w->limits.limits.maxComputeWorkgroupStorageSize;
    if (max_shared < 16384) max_shared = 16384; /* the WebGPU minimum */
    wgt_status st = WGT_OK;
    uint64_t groups;
    if (M <= ROWS_MAX && (uint64_t)K * (uint64_t)N >= 4096) {
        k.kind = KERNEL_ROWS;
        k.rows = 1;
        while (k.rows < M && k.rows < 16) k.rows *= 2;
        /* b is read 16 bytes at a time where its alignment allows: 4 f32 or 8 f16 values along
         * N (b stored by rows) or along K (by columns); else element by element. */
        int f16 = k.in == WGT_F16, wide = f16 ? 8 : 4;
        if (p.b_sn == 1 && f16 && vec_ok(&sb, p.b_sk, N, bnd, 8)) k.r_mode = ROWS_VEC8;
        else if (p.b_sn == 1 && vec_ok(&sb, p.b_sk, N, bnd, 4)) k.r_mode = ROWS_VEC4;
        else if (along_k(&sb) && vec_ok(&sb, p.b_sn, K, bnd, wide)) k.r_mode = ROWS_K_VEC;
        else if (along_k(&sb)) k.r_mode = ROWS_K_LANES;
        else k.r_mode = ROWS_SPREAD;
        k.b_vec = k.r_mode == ROWS_VEC8 || k.r_mode == ROWS_K_VEC || (k.r_mode == ROWS_VEC4 && !f16);
        k.r_kw = k.r_mode == ROWS_K_VEC ? wide : 1;
        k.r_cw = k.r_mode == ROWS_VEC8 ? 8 : 4;
        /* Lanes along K (the fastest on an H200 for each): 8 for 16 rows and where b is read
         * 16 bytes at a time, 32 where it is read element by element along K with few rows,
         * else 16. */
        int wide_loads = k.r_mode == ROWS_VEC8 || k.r_mode == ROWS_K_VEC || (k.r_mode == ROWS_VEC4 && !f16);
        k.r_lanes = k.rows >= 16 || wide_loads ? 8 : k.r_mode == ROWS_K_LANES && k.rows <= 4 ? 32 : 16;
        /* Loads in flight per invocation: 8 steps of one load, or 2 of four along K. */
        k.r_unroll = k.r_mode == ROWS_K_VEC ? 2 : k.rows <= 4 ? 8 : 4;
        /* Staged rows are padded where neighbouring lanes read different k one at a time,
         * against bank conflicts; R_KS values of K fill the 16 KB of shm. */
        k.r_ap = k.rows + (k.r_mode == ROWS_K_LANES && k.rows >= 8 ? 4 : 0);
        k.r_ks = (4096 / k.r_ap) & ~15;
        p.a_k_fast = p.a_sk == 1 || p.a_sm == 0;
        /* A single row of a is read straight from memory in the loop (a cache hit for all but
         * the first workgroup to read it): staging it cost each workgroup a pass of loads and
         * a barrier before b's stream starts. Along K it is read 16 bytes at a time, as b. */
        if (k.rows == 1) {
            if (k.r_mode != ROWS_K_VEC) k.r_direct = 1;
            else if (p.a_sk == 1 && vec_ok(&sa, p.a_sm, K, bnd, wide)) k.r_direct = 1, k.a_vec = 1;
        }
        if (k.r_direct) {
            k.r_ks = ROWS_KS_UNSTAGED;
            /* 32 lanes along K where b is read 16 bytes at a time: 4 times the workgroups, so K
             * is split less or not at all (on an H200, a row vector times 8192 x 8192 f32 in
             * 0.070 ms against 0.073 with 8 lanes and K in 4 ranges, 0.076 staged; f16 w @ v
             * in 0.041 against 0.046 and 0.049 ms). */
            if (k.r_mode == ROWS_VEC4 || k.r_mode == ROWS_K_VEC) k.r_lanes = 32;
        }
        int by_columns = k.r_direct && k.r_mode == ROWS_K_VEC; /* a vector times columns: rows_columns */
        if (by_columns) rows_columns(&k, batch, N);
        p.tiles_m = (uint32_t)ceil_div((uint64_t)M, (uint64_t)k.rows);
        p.tiles_n = (uint32_t)ceil_div((uint64_t)N, (uint64_t)k.r_cw * (WORKGROUP_SIZE / (uint64_t)k.r_lanes));
        groups = batch * p.tiles_m * p.tiles_n;
        split_k(w, (uint64_t)K, groups, ROWS_GROUPS, 256, 64, total, &p);
        k.r_turns = by_columns && w->compute_units && groups * p.chunks > (uint64_t)w->compute_units * ROWS_PER_UNIT;
    } else {
        k.kind = KERNEL_TILED;
        int bm, bn, under_wave;
        uint64_t wave_chunks;
        choose_tiles(w, batch, k.in == WGT_F32 && !f16_out, (uint64_t)M, (uint64_t)N, (uint64_t)K, &bm, &bn, &wave_chunks,
                     &under_wave);
        /* Fetch each operand along its unit stride: along K when that stride is 1 (a stored by
         * rows, b by columns), else along M (N); as vec4s where vec_ok allows. */
        int a_k = along_k(&sa), b_k = along_k(&sb);
        int a_vec = vec_ok(&sa, a_k ? p.a_sm : p.a_sk, a_k ? K : M, bnd, 4) && (a_k || p.a_sm == 1);
        int b_vec = vec_ok(&sb, b_k ? p.b_sn : p.b_sk, b_k ? K : N, bnd, 4) && (b_k || p.b_sn == 1);
        /* Large products take their operands packed where that pays (pack_pays); a failure
         * leaves st set, and every later step is skipped. */
        if (bm == 128 && bn == 128 && batch == 1 && k.in == WGT_F32) {
            if ((a_k || !a_vec) && pack_pays(w, !a_vec, under_wave, (uint64_t)M, (uint64_t)N, (uint64_t)K) &&
                (st = pack(w, &p, &sa, &sb, 0, (uint32_t)M, &packed[0])) == WGT_OK)
                a_k = 0, a_vec = 1;
            if (st == WGT_OK && (b_k || !b_vec) && pack_pays(w, !b_vec, under_wave, (uint64_t)N, (uint64_t)M, (uint64_t)K) &&
                (st = pack(w, &p, &sa, &sb, 1, (uint32_t)N, &packed[1])) == WGT_OK)
                b_k = 0, b_vec = 1;
            params_from_sides(&p, &sa, &sb, bnd); /* the packed operands' layout */
        }
        k.a_mode = (a_k ? FETCH_K_VEC4 : FETCH_OUTER_VEC4) + (a_vec ? 0 : 2);
        k.b_mode = (b_k ? FETCH_K_VEC4 : FETCH_OUTER_VEC4) + (b_vec ? 0 : 2);
        k.a_vec = a_vec && k.in == WGT_F32;
        k.b_vec = b_vec && k.in == WGT_F32;
        /* 8 x 8 outputs per invocation (4 x 4 on 64-wide sides). K in steps of 8 where a is read
         * element by element along K (4097^3 on an H200: 3.7 ms against 4.2 in steps of 16),
         * else of 16. In 128 x 128 tiles of vec4 fetches both operands are staged along M and
         * N: the multiply then holds one vec4 of each operand per 4 outputs per k (staged
         * along K it held four k of each row of a), needs fewer registers, and two workgroups
         * share a multiprocessor: 4096^3 in 3.24 ms against 3.41 staged along K in steps of
         * 32, 8192^3 in 25.4 against 27.0, x @ w^T 3.19 against 3.44; short K gains as much
         * (4096 x 256 x 4096 in 0.226 ms against 0.250, attention's 32 x 128x128 @ 128x1024 in
         * 0.037 to 0.040 against 0.041 with 512 invocations of 8 x 4 staged along K). Elsewhere
         * (smaller tiles, or an operand read element by element) an operand fetched as vec4s
         * along K is staged along K, whole vec4s, and every other one along M (N): a fetched
         * element by element along K, so staged one value at a time, takes 3.9 ms for 4097^3
         * against 5.1 ms when staged along K. */
        k.bm = bm, k.bn = bn, k.tm = bm / 16, k.tn = bn / 16;
        int vec_modes = k.a_mode <= FETCH_K_VEC4 && k.b_mode <= FETCH_K_VEC4, big = bm == 128 && bn == 128;
        k.bk = big && k.a_mode == FETCH_K ? 8 : 16;
        int along_mn = big && vec_modes; /* both operands staged along M and N */
        k.a_stage = k.a_mode == FETCH_K_VEC4 && !along_mn;
        k.b_stage = k.b_mode == FETCH_K_VEC4 && !along_mn;
        tiled_schedule(&k, along_mn, (uint64_t)K);
        fit_tiles(&k, max_shared);
        p.tiles_m = (uint32_t)ceil_div((uint64_t)M, (uint64_t)bm);
        p.tiles_n = (uint32_t)ceil_div((uint64_t)N, (uint64_t)bn);
        groups = batch * p.tiles_m * p.tiles_n;
        if (under_wave && along_mn) set_chunks(&p, (uint64_t)K, 1, (uint64_t)k.bk); /* streamed below */
        else if (wave_chunks) split_k(w, (uint64_t)K, groups, groups * wave_chunks, WAVE_MIN_K, (uint64_t)k.bk, total, &p);
        else split_k(w, (uint64_t)K, groups, TILED_GROUPS, bm == 128 && bn == 128 ? SPLIT_MIN_K : SLICE_MIN_K,
                     (uint64_t)k.bk, total, &p);
        slice_k(w, &k, &p, (uint64_t)K, max_shared);
        k.out_vec = !f16_out && N % 4 == 0 && p.chunks == 1;
        if (along_mn && p.chunks == 1 && k.slices == 1 && !f16_out)
            k.stream = stream_plan(w, groups, ceil_div((uint64_t)K, (uint64_t)(k.bk * k.unroll)), &p, &groups);
        /* Streamed with rows of a length not a multiple of 4, the kernel would write its
         * outputs one at a time, and the driver then gives it 179 registers, one workgroup
         * per multiprocessor (H200: 3071^3 in 1.543 ms against 1.272 for 3000^3, 2049^3 in
         * 0.570). Where b is packed (zeros past N), it computes rows padded to 4 into a
         * buffer instead, whole vec4s, which a copy then moves into out. */
        if (st == WGT_OK && k.stream && N % 4 && packed[1]) {
            p.N = (uint32_t)((N + 3) & ~3);
            k.out_vec = 1;
            st = wgt_wgpu_buffer_create(be, (size_t)M * p.N * 4, 0, &padded_out);
            dst = padded_out;
        }
    }

    /* Partial results (or an f16 output with odd N) go to an f32 buffer for the sum kernel. */
    int partials = p.chunks > 1 || (f16_out && N % 2);
    if (partials && st == WGT_OK) {
        st = wgt_wgpu_buffer_create(be, (size_t)p.chunks * total * 4, 0, &part);
        dst = part;
        k.out = WGT_F32;
        k.out_vec = 0;
    }
    /* Streamed: a tile per run, for the part of a tile where the run ends (chunks is 1 here). */
    uint64_t runs = k.stream ? groups - p.stream[0] : 0;
    if (k.stream && st == WGT_OK) st = wgt_wgpu_buffer_create(be, (size_t)(runs * (uint64_t)(k.bm * k.bn) * 4), 0, &part);
    uint64_t launched = k.r_turns ? (uint64_t)w->compute_units * ROWS_PER_UNIT : groups * p.chunks;
    if (st == WGT_OK) st = run(w, &k, &p, sa.buffer, sb.buffer, dst, k.stream ? part : NULL, launched);
    if (st == WGT_OK && k.stream) {
        matmul_kernel f = k;
        f.kind = KERNEL_FIX;
        f.in = WGT_F32;
        f.a_vec = f.b_vec = 1;
        f.stream = 0;
        st = run(w, &f, &p, part, part, dst, NULL, batch * p.tiles_m * p.tiles_n - p.stream[0]); /* a streamed tile each */
    }
    if (st == WGT_OK && padded_out) {
        static const int64_t origin[WGT_MAX_DIMS] = {0};
        wgt_operand rows = *out;
        rows.buffer = padded_out;
        rows.offset = 0;
        for (int d = 0; d < nd; d++) rows.strides[d] = d == nd - 1 ? 1 : (int64_t)M * p.N; /* batch dimensions are 1 */
        rows.strides[nd - 2] = p.N;
        st = wgt_wgpu_write_box(be, out, origin, &rows);
    }
    if (st == WGT_OK && partials) {
        matmul_kernel s;
        memset(&s, 0, sizeof s);
        s.kind = KERNEL_SUM;
        s.in = WGT_F32;
        s.out = out->dtype;
        uint64_t items = f16_out ? ceil_div(total, 2) : total;
        st = run(w, &s, &p, part, part, out->buffer, NULL, ceil_div(items, WORKGROUP_SIZE));
    }
    /* Releases: the recorded commands keep the buffers alive. */
    if (part) wgt_wgpu_buffer_destroy(be, part);
    if (padded_out) wgt_wgpu_buffer_destroy(be, padded_out);
    for (int i = 0; i < 2; i++)
        if (packed[i]) wgt_wgpu_buffer_destroy(be, packed[i]);
    return st;
}
