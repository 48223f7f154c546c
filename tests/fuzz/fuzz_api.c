/*
 * fuzz_api: a libFuzzer target that turns its input into a random sequence of wgtensor API
 * calls and checks the API's contract after each one. The bytes pick creation with valid and
 * invalid dtypes, ranks and dimensions (0, negative, huge, overflowing), views, ops of every
 * family, reads and writes with wrong byte counts, retain/release/destroy in any order, NULL
 * arguments and the NULLs of failed calls fed onward (at times with the error left pending),
 * usage misuse, and tensors of several contexts in one call: a peer of the same backend, a
 * CPU one, and a per-input one (CPU, or at times the main backend) that may be released while
 * its tensors, graphs and reads live. Live tensors sit in a pool of 16; a call whose result
 * would exceed OUT_CAP elements is skipped. After every call: a failure has a known status and
 * a message, a success recorded no error and mixed no contexts, a result has a sane shape, and
 * the extreme elements its view addresses are touched through wgt_tensor_data (ASan checks
 * they lie in the storage).
 *
 * The execution engine is driven the same way: wgt_eval of random sets (NULLs included),
 * wgt_context_stats and wgt_context_trim (counters never go back, the pool never exceeds the
 * peak, a trim empties it), asynchronous reads begun, polled, waited for and released in any
 * order (unfinished ones included; each destination is freed at its release, so ASan sees a
 * late write, and a finished read must hold what wgt_tensor_read gives), graph inputs with
 * random and repeated names, ops on them, wgt_graph_build with random output sets (invalid
 * ones included) and wgt_graph_dispatch with bindings missing, repeated, unknown, NULL,
 * mistyped, misshaped, destroyed, strided, offset, lazily computed, shared with another
 * binding or of another context; a dispatch that succeeds is at times replayed and must give
 * the same bytes. The main and peer contexts are one with fusion and one without, swapped as
 * the first byte says; for one input in four the whole sequence runs twice, once with the
 * main context fused and once not, and every status and value read must agree (fusion gives
 * the ops' results bit for bit), up to a simulated device loss.
 *
 * All is released at the end of an input, so LeakSanitizer sees leaks. The backend is the
 * library's WGT_BACKEND (cpu or webgpu; `make fuzz` runs both); WGT_FUZZ_TRACE=1 prints every
 * call with its arguments, which is how a finding becomes a test in
 * tests/test_fuzz_regressions.c.
 */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wgtensor.h"

enum { POOL = 16, CAP = 1024, OUT_CAP = 16384, BUF = 16384, MAX_STEPS = 64, MAX_PH = 32, GRAPHS = 4, READS = 8,
       LOG_CAP = 4096, MADE = 64 };
#define INTS (1u << WGT_I32 | 1u << WGT_U32)
#define FLOATS (1u << WGT_F32 | 1u << WGT_F16)
#define COUNT(a) (sizeof a / sizeof a[0])

/* LeakSanitizer, which libFuzzer runs after inputs that allocated more than they freed: blocks
 * that Mesa's lavapipe (the CPU Vulkan driver here) allocates for itself. Now and then, after a
 * WebGPU input that compiled new pipelines, it reports a few 48-byte blocks whose stack is
 * malloc called from libvulkan_lvp.so+0x1368e9 and nothing more (lavapipe has no frame
 * pointers); under gdb that allocator serves vkCreateInstance and lavapipe's own pipeline
 * compilation, and the same input run again reports nothing. A leak of ours would show our
 * frames or Dawn's at its allocation, which this entry does not match. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) { return "leak:libvulkan_lvp.so\n"; }

/* ---- input bytes, tracing, violations ---- */
static const uint8_t *in_p;
static size_t in_n;
static unsigned u8(void) { return in_n ? (in_n--, *in_p++) : 0; }
static unsigned pick(unsigned n) { return u8() % n; }
static int chance(unsigned one_in) { return pick(one_in) == 0; } /* true when the input has run out */
static int rare(unsigned one_in) { return pick(one_in) == one_in - 1; } /* false when it has */

static int tracing;
static char call_name[64];
#define trace(...) (tracing ? fprintf(stderr, __VA_ARGS__) : 0)
static void trace_list(const char *label, int n, const int64_t *v) {
    trace(" %s [", label);
    for (int i = 0; v && i < n && i < 16; i++) trace(i ? ", %lld" : "%lld", (long long)v[i]);
    trace(v ? "]" : "NULL]");
}
static void trace_ints(const char *label, int n, const int *v) {
    int64_t w[16];
    for (int i = 0; v && i < n && i < 16; i++) w[i] = v[i];
    trace_list(label, n, v ? w : NULL);
}

static void violation(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fuzz_api: contract violation in %s: ", call_name);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (last error: %s: %s)\n", wgt_status_name(wgt_last_status()), wgt_last_error());
    va_end(ap);
    abort();
}

/* ---- the event log of a run: statuses and values, compared between fusion on and off ---- */
static struct { uint64_t h; char name[64]; } events[2][LOG_CAP];
static int nevents[2], frozen[2], cur_log = -1; /* -1: not logging */

static uint64_t hash_bytes(const void *p, size_t n, uint64_t h) { /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ ((const uint8_t *)p)[i]) * 0x100000001b3ull;
    return h;
}
static void log_event(uint64_t h) {
    if (cur_log < 0 || frozen[cur_log] || nevents[cur_log] >= LOG_CAP) return;
    events[cur_log][nevents[cur_log]].h = h;
    snprintf(events[cur_log][nevents[cur_log]++].name, sizeof events[0][0].name, "%s", call_name);
}
static void log_bytes(const void *p, size_t n) { log_event(hash_bytes(p, n, 0xcbf29ce484222325ull)); }

/* ---- contexts ---- */
/* Kept across inputs: main and peer are of the library's backend, one with fusion and one
 * without (main_fused says which is main; inputs swap them); cpu is a CPU context. */
static wgt_context *ctx_main, *ctx_peer, *ctx_cpu;
static wgt_context *ctx_eph; /* one per input: CPU, or at times the main backend */
static int eph_released, peer_lost, eph_lost, webgpu, main_fused = 1, eph_fused;

/* Contexts in which a wgt_set_rows succeeded since their last graph build. Such a write of
 * graph values into a tensor with data joins the next build as an in-place update, which its
 * dispatches repeat: the state they read changes from one dispatch to the next, so those
 * graphs' replays need not repeat their bytes. Any set_rows counts, as the fuzzer cannot
 * always tell which operands are graph values. Keyed by pointer (main and peer swap), and
 * cleared as each input starts: every context of one input is live through it, and an input
 * ends with every tensor released, which drops the updates still waiting. */
static wgt_context *updating[8];
static void updates_note(wgt_context *c) {
    for (int i = 0; c && i < 8; i++)
        if (updating[i] == c) return;
    for (int i = 0; c && i < 8; i++)
        if (!updating[i]) { updating[i] = c; return; }
    abort(); /* more contexts than the fuzzer ever holds at once */
}
static int updates_take(wgt_context *c) { /* a build took them */
    for (int i = 0; c && i < 8; i++)
        if (updating[i] == c) { updating[i] = NULL; return 1; }
    return 0;
}

static wgt_context *new_context(wgt_backend_kind kind, int fusion) {
    wgt_context_options o = {0};
    o.backend = kind;
    o.quiet = 1;
    o.no_fusion = !fusion;
    /* The attention kernel wherever it applies: by default the small shapes fuzzed here would
     * all be composed, and every context of the main backend must take the same path for the
     * two runs of an input to agree. */
    o.attention = WGT_ATTENTION_KERNEL;
    wgt_context *c = wgt_context_create(&o);
    if (!c) fprintf(stderr, "fuzz_api: cannot create a context: %s\n", wgt_last_error()), abort();
    return c;
}

/* The kept contexts go back before the process ends: libFuzzer leaves by exit(), and a
 * device still open then is torn down, if at all, by the driver's static destructors while
 * its threads may still run. */
static void release_kept_contexts(void) {
    wgt_context_release(ctx_main);
    wgt_context_release(ctx_peer);
    wgt_context_release(ctx_cpu);
    ctx_main = ctx_peer = ctx_cpu = NULL;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    const char *t = getenv("WGT_FUZZ_TRACE"), *env = getenv("WGT_BACKEND");
    tracing = t && *t && strcmp(t, "0");
    ctx_main = new_context(WGT_BACKEND_AUTO, 1); /* WGT_BACKEND=cpu|webgpu decides */
    ctx_peer = new_context(WGT_BACKEND_AUTO, 0);
    ctx_cpu = new_context(WGT_BACKEND_CPU, 1);
    atexit(release_kept_contexts);
    webgpu = wgt_context_backend(ctx_main) == WGT_BACKEND_WEBGPU;
    if (env && !strcmp(env, "webgpu") && !webgpu) abort();
    fprintf(stderr, "fuzz_api: %s backend on %s\n", webgpu ? "webgpu" : "cpu", wgt_context_device_name(ctx_main));
    return 0;
}

static int is_lost(const wgt_context *c) { return c && ((c == ctx_peer && peer_lost) || (c == ctx_eph && eph_lost)); }
static int is_released(const wgt_context *c) { return c && c == ctx_eph && eph_released; }
static int fusion_of(const wgt_context *c) {
    return c == ctx_main ? main_fused : c == ctx_peer ? !main_fused : c == ctx_eph ? eph_fused : 1;
}
/* Creation on a CPU context takes host memory at once: giants there are skipped. */
static int host_alloc(const wgt_context *c) { return c && wgt_context_backend(c) == WGT_BACKEND_CPU; }

/* ---- the pool of live tensors; each entry owns one reference ---- */
/* masks: the graph inputs (bits of ph[]) an entry is computed from, as far as the fuzzer can
 * tell; phs: the ph[] index when the entry is the placeholder itself, else -1. */
static wgt_tensor *pool[POOL];
static int npool, serial, ids[POOL], phs[POOL];
static uint32_t masks[POOL];

/* Graph inputs made during this input, for bindings and name checks (names are static). */
static struct {
    wgt_context *ctx;
    const char *name;
    wgt_dtype dt;
    int nd;
    int64_t shape[WGT_MAX_DIMS];
} ph[MAX_PH];
static int nph;

/* Compiled graphs of this input, with what they were built from. */
typedef struct {
    wgt_graph *g;
    wgt_context *ctx;
    int id, nout;
    const char *outname[4];
    wgt_dtype odt[4];
    int ond[4];
    int64_t oshape[4][WGT_MAX_DIMS];
    uint32_t inmask;
    int updates; /* it may have taken in-place updates (see updating[]) */
} graph_rec;
static graph_rec graphs[GRAPHS];
static int ngraphs, graph_serial;

/* Read requests of this input; dst is the request's own allocation (or NULL). */
typedef struct {
    wgt_read *r;
    uint8_t *dst;
    size_t nbytes;
    int id, src_id, finished, checked;
    unsigned gen;
} read_rec;
static read_rec reads[READS];
static int nreads, read_serial;
static unsigned mutations; /* calls that may have changed stored values: reads compare only without one */

static int eph_alive(void) { /* a released context lives while one of its tensors or graphs does */
    if (!ctx_eph) return 0;
    for (int i = 0; eph_released && i < npool; i++)
        if (wgt_tensor_context(pool[i]) == ctx_eph) return 1;
    for (int i = 0; eph_released && i < ngraphs; i++)
        if (graphs[i].ctx == ctx_eph) return 1;
    return !eph_released;
}

static wgt_context *gen_ctx(void) {
    unsigned b = pick(16);
    return b < 10 ? ctx_main : b < 12 ? ctx_peer : b < 13 ? ctx_cpu : b == 15 ? NULL : eph_alive() ? ctx_eph : ctx_main;
}
static const char *ctx_name(wgt_context *c) {
    return !c ? "NULL" : c == ctx_main ? "main" : c == ctx_peer ? "peer" : c == ctx_cpu ? "cpu" : "per-input";
}

static int id_of(const wgt_tensor *t) {
    for (int i = 0; i < npool; i++)
        if (pool[i] == t) return ids[i];
    return -1;
}
static int pool_index_of_id(int id) {
    for (int i = 0; id >= 0 && i < npool; i++)
        if (ids[i] == id) return i;
    return -1;
}
static uint32_t mask_of(const wgt_tensor *t) {
    for (int i = 0; t && i < npool; i++)
        if (pool[i] == t) return masks[i];
    return 0;
}
static int phs_of(const wgt_tensor *t) {
    for (int i = 0; t && i < npool; i++)
        if (pool[i] == t) return phs[i];
    return -1;
}
static void pool_remove(int k) {
    npool--;
    pool[k] = pool[npool], ids[k] = ids[npool], masks[k] = masks[npool], phs[k] = phs[npool];
}

/* ---- one call: its tensor inputs and the error state before it ---- */
static wgt_tensor *ins[8];
static int nins, cleared, first_null, keeps_first;
static wgt_status saved_status;
static char saved_msg[1024];

/* keeps: the call checks its first tensor before anything else, so a NULL there must keep a
 * pending error. Most calls start from a cleared error state; some from the last one. */
static void begin(const char *name, int keeps) {
    snprintf(call_name, sizeof call_name, "%s", name);
    nins = first_null = 0;
    keeps_first = keeps;
    if ((cleared = !chance(8))) wgt_clear_error();
    trace("%s%s", name, cleared ? "" : " (not cleared)");
    saved_status = wgt_last_status();
    snprintf(saved_msg, sizeof saved_msg, "%s", wgt_last_error());
}

static wgt_tensor *again(wgt_tensor *t) { /* an argument; also used to repeat an earlier one */
    if (nins == 0) first_null = t == NULL;
    if (nins < 8) ins[nins++] = t;
    trace(" #%d", t ? id_of(t) : -1);
    return t;
}
/* A tensor argument: usually a pool entry (preferring the dtypes in mask), sometimes NULL. */
static wgt_tensor *targ_pref(unsigned mask) {
    unsigned b = u8();
    wgt_tensor *t = npool && b < 240 ? pool[b % npool] : NULL;
    for (int k = 0; t && mask && b % 4 && k < npool; k++) {
        wgt_tensor *c = pool[(b + (unsigned)k) % (unsigned)npool];
        if (mask >> wgt_tensor_dtype(c) & 1) { t = c; break; }
    }
    return again(t);
}
static wgt_tensor *targ(void) { return targ_pref(0); }

/* ---- contract checks ---- */
static int known(wgt_status s) { return s >= WGT_OK && s <= WGT_ERR_INTERNAL; }

/* ret: the status a call returned, or -1 for a call that returned NULL. */
static void check_failure(int ret) {
    wgt_status st = wgt_last_status();
    const char *msg = wgt_last_error();
    trace(" -> %s: %s\n", wgt_status_name(st), msg);
    log_event(0x100u + (unsigned)(ret == -1 ? (int)st : ret));
    if (st == WGT_OK || !known(st)) violation("failed, but the last status is %d", (int)st);
    if (!msg || !*msg) violation("failed with an empty message");
    if (ret != -1 && (ret == WGT_OK || !known((wgt_status)ret))) violation("returned status %d", ret);
    if (cleared && ret != -1 && (wgt_status)ret != st)
        violation("returned %s but recorded %s", wgt_status_name((wgt_status)ret), wgt_status_name(st));
    if (st == WGT_ERR_INTERNAL) violation("internal error");
    if ((st == WGT_ERR_BACKEND || st == WGT_ERR_DEVICE_LOST || st == WGT_ERR_TIMEOUT) && !peer_lost && !eph_lost)
        violation("%s without a lost device", wgt_status_name(st));
    if (!cleared && saved_status != WGT_OK && first_null && keeps_first &&
        (st != saved_status || strcmp(msg, saved_msg)))
        violation("a NULL argument replaced the pending error '%s'", saved_msg);
}

/* A success recorded no error (when none was pending), was not made in a released or lost
 * context and, for ops, took no NULL first tensor and no tensors of two, released or lost
 * contexts. */
static void check_success(int op, wgt_context *made_in) {
    log_event(1);
    if (cleared && wgt_last_status() != WGT_OK) violation("succeeded but recorded an error");
    if (is_released(made_in) || is_lost(made_in)) violation("created something in a released context or on a lost device");
    if (!op) return;
    if (nins == 0 || !ins[0]) violation("succeeded with a NULL first tensor");
    for (int i = 0; i < nins; i++) {
        wgt_context *c = wgt_tensor_context(ins[i]);
        if (c && c != wgt_tensor_context(ins[0])) violation("succeeded on tensors of two contexts");
        if (is_released(c) || is_lost(c))
            violation("succeeded on a tensor of a released context or a lost device");
    }
}

/* Touches the first and last byte of the lowest and highest element the view addresses (of
 * their blocks, for q8_0 and q4_0, whose host data is ggml's blocks): ASan reports one
 * outside the storage's host memory. */
static void touch(wgt_tensor *t, int write) {
    int nd = wgt_tensor_ndim(t);
    wgt_dtype dt = wgt_tensor_dtype(t);
    const int64_t *sh = wgt_tensor_shape(t), *st = wgt_tensor_strides(t);
    __int128 lo = 0, hi = 0, es = (__int128)wgt_dtype_size(dt), per = 1;
    if (!es) es = (__int128)wgt_dtype_block_bytes(dt), per = wgt_dtype_block_elements(dt);
    if (wgt_tensor_numel(t) <= 0 || es <= 0 || per <= 0) return;
    volatile char *p = write ? wgt_tensor_data_mut(t) : (char *)wgt_tensor_data(t);
    if (!p) { check_failure(-1), wgt_clear_error(); return; }
    for (int d = 0; d < nd; d++) {
        __int128 span = (__int128)(sh[d] - 1) * st[d];
        *(span < 0 ? &lo : &hi) += span;
    }
    lo /= per, hi /= per; /* blocks stay whole in every view: strides but the last are multiples of per */
    if (write) p[(ptrdiff_t)(lo * es)] = 0, p[(ptrdiff_t)(hi * es + es - 1)] = 0;
    else (void)p[(ptrdiff_t)(lo * es)], (void)p[(ptrdiff_t)(hi * es + es - 1)];
}

/* want: the context the tensor must belong to; created: made by a creation call. */
static void check_tensor(wgt_tensor *t, wgt_context *want, int created) {
    int nd = wgt_tensor_ndim(t), zero = 0, ovf = 0;
    const int64_t *sh = wgt_tensor_shape(t), *st = wgt_tensor_strides(t);
    wgt_dtype dt = wgt_tensor_dtype(t);
    size_t es = wgt_dtype_size(dt);
    int64_t block = wgt_dtype_block_elements(dt); /* q8_0, q4_0: whole blocks of 32, no lone elements */
    if (nd < 0 || nd > WGT_MAX_DIMS || !sh || !st || (!es && block <= 1)) violation("rank %d, dtype %d", nd, dt);
    int64_t n = 1;
    for (int d = 0; d < nd; d++) {
        if (sh[d] < 0) violation("dimension %d is %lld", d, (long long)sh[d]);
        if (sh[d] == 0) zero = 1;
        else if (n > INT64_MAX / sh[d]) ovf = 1;
        else n *= sh[d];
    }
    if (zero) n = 0;
    else if (ovf || n > INT64_MAX / 8) violation("a tensor whose byte count overflows");
    size_t nbytes = block > 1 ? (size_t)(n / block) * wgt_dtype_block_bytes(dt) : (size_t)n * es;
    if (wgt_tensor_numel(t) != n || (block > 1 && n % block) || wgt_tensor_nbytes(t) != nbytes)
        violation("numel %lld, nbytes %zu for %lld elements", (long long)wgt_tensor_numel(t), wgt_tensor_nbytes(t),
                  (long long)n);
    if (wgt_tensor_usage(t) & ~7u || wgt_tensor_offset(t) < 0) violation("usage 0x%x", wgt_tensor_usage(t));
    if (want && wgt_tensor_context(t) != want) violation("the result belongs to another context");
    /* A giant from a lazy creation call has no memory yet: touching would allocate it. */
    if (block <= 1 && wgt_tensor_usage(t) & WGT_USAGE_READABLE && (!created || n <= OUT_CAP)) touch(t, 0);
}

/* Adds t with the graph inputs it is computed from (mask) and, for a placeholder, its ph[]
 * index (or -1). */
static void pool_add_as(wgt_tensor *t, uint32_t mask, int placeholder) {
    if (wgt_tensor_numel(t) > CAP) { wgt_release(t); return; } /* giant views are checked, not kept */
    int k;
    if (npool < POOL) k = npool++;
    else wgt_release(pool[k = (int)pick(POOL)]); /* full: a random entry makes room */
    pool[k] = t;
    ids[k] = serial++;
    masks[k] = mask;
    phs[k] = placeholder;
    int nd = wgt_tensor_ndim(t);
    trace("   = #%d %s", ids[k], wgt_dtype_name(wgt_tensor_dtype(t))), trace_list("shape", nd, wgt_tensor_shape(t));
    trace_list("strides", nd, wgt_tensor_strides(t)), trace(" offset %lld", (long long)wgt_tensor_offset(t));
    trace(mask ? " from inputs 0x%x\n" : "\n", mask);
}
static uint32_t ins_mask(void) { /* the graph inputs the call's tensor arguments come from */
    uint32_t m = 0;
    for (int i = 0; i < nins; i++) m |= mask_of(ins[i]);
    return m;
}
static void pool_add(wgt_tensor *t) { pool_add_as(t, ins_mask(), -1); }

/* A tensor-returning call's result; want: the context it must belong to (creation calls), or
 * NULL for the first input's. */
static void result(wgt_tensor *t, wgt_context *want) {
    if (!t) { check_failure(-1); return; }
    trace(" -> ok\n");
    check_success(want == NULL, want);
    check_tensor(t, want ? want : wgt_tensor_context(ins[0]), want != NULL);
    pool_add(t);
}
static void status_result(wgt_status st, int op) {
    if (st != WGT_OK) check_failure((int)st);
    else trace(" -> ok\n"), check_success(op, NULL);
}

/* ---- argument generators: mostly small and valid, sometimes odd ---- */
static wgt_dtype gen_dtype(void) {
    return (wgt_dtype)(int[]){1, 2, 3, 4, 1, 2, 3, 4, 1, 3, 1, 4, 0, 5, 99, -1}[pick(16)];
}
static int64_t gen_dim(void) {
    static const int64_t odd[16] = {-1, -2, 64, 1000, 1LL << 31, 1LL << 32, 1LL << 40, 1LL << 61, (1LL << 62) + 1,
                                    INT64_MAX, INT64_MIN, 3037000500LL, 1LL << 20, 65536, 9, -(1LL << 40)};
    unsigned b = u8();
    return b < 224 ? b % 7 : odd[b % 16];
}
/* A shape of rank 0..4 mostly (5..9 and -1 too) in shape[9]; NULL now and then. */
static const int64_t *gen_shape(int *ndim, int64_t *shape) {
    unsigned b = pick(24);
    *ndim = b < 18 ? (int)(b % 5) : (int[]){5, 6, 7, 8, 9, -1}[b - 18];
    for (int i = 0; i < 9; i++) shape[i] = i < *ndim ? gen_dim() : 1;
    return chance(32) ? NULL : shape;
}
static double gen_double(void) {
    static const double odd[12] = {NAN, INFINITY, -INFINITY, 1e30, -1e30, 1e-30, 3e9, -3e9, 65504, 70000, -0.0, 1e300};
    unsigned b = u8();
    return b < 200 ? ((double)b - 100.0) / 8.0 : odd[b % 12];
}
static int gen_axis(void) {
    unsigned b = u8();
    return b < 240 ? (int)(b % 19) - 9 : (int[]){INT_MIN, INT_MAX, 100, -100}[b % 4];
}
static int gen_axes(int *axes) { /* returns naxes; fills all 16 entries */
    unsigned b = pick(20);
    int n = b < 16 ? (int)(b % 5) : (int[]){-1, 9, 16, INT_MIN}[b - 16];
    for (int i = 0; i < 16; i++) axes[i] = gen_axis();
    return n;
}
static int64_t gen_i64(void) {
    static const int64_t odd[8] = {INT64_MIN, INT64_MAX, 1LL << 40, -(1LL << 40), INT32_MAX, INT32_MIN, 100, -100};
    unsigned b = u8();
    return b < 224 ? (int64_t)(b % 13) - 6 : odd[b % 8];
}
static size_t gen_nbytes(size_t want) {
    unsigned b = pick(16);
    size_t n = b < 10 ? want : b == 10 ? want + 1 : b == 11 ? want - 1 : b == 12 ? 0
             : (size_t[]){SIZE_MAX, (size_t)1 << 40, 3}[b - 13];
    return n > BUF && n == want ? BUF + 1 : n; /* never more than our buffers hold */
}

/* ---- predicted output sizes: calls whose result would be huge are skipped ---- */
static int64_t mul_sat(int64_t a, int64_t b) { /* both >= 0; saturates at OUT_CAP + 1 */
    if (a == 0 || b == 0) return 0;
    return a > (OUT_CAP + 1) / b || a * b > OUT_CAP ? OUT_CAP + 1 : a * b;
}
static int fits(int64_t n) { return n <= OUT_CAP; } /* -1 (invalid) fails before allocating */

/* Elements of a shape: -1 when the library must reject it, else the count (capped). */
static int64_t shape_numel(int ndim, const int64_t *shape) {
    if (ndim < 0 || ndim > WGT_MAX_DIMS || (ndim > 0 && !shape)) return -1;
    unsigned __int128 p = 1;
    int zero = 0;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0) return -1;
        if (shape[i] == 0) zero = 1;
        else if (p <= (unsigned __int128)INT64_MAX) p *= (uint64_t)shape[i];
    }
    if (zero) return 0;
    return p > (unsigned __int128)(INT64_MAX / 8) ? -1 : p > OUT_CAP ? OUT_CAP + 1 : (int64_t)p;
}

/* Elements of the broadcast of k tensors, each without its last `drop` dimensions. */
static int64_t bcast_numel(wgt_tensor *const *ts, int k, int drop) {
    int n = 0, zero = 0;
    for (int j = 0; j < k; j++)
        if (ts[j] && wgt_tensor_ndim(ts[j]) - drop > n) n = wgt_tensor_ndim(ts[j]) - drop;
    int64_t total = 1;
    for (int i = 0; i < n; i++) {
        int64_t d = 1;
        for (int j = 0; j < k; j++) {
            int idx = ts[j] ? wgt_tensor_ndim(ts[j]) - drop - n + i : -1;
            if (idx >= 0 && wgt_tensor_shape(ts[j])[idx] != 1) d = wgt_tensor_shape(ts[j])[idx];
        }
        if (d == 0) zero = 1;
        else total = mul_sat(total, d);
    }
    return zero ? 0 : total;
}
static int64_t dim_from_end(wgt_tensor *t, int k) { /* shape[ndim - k], or 1 */
    return t && wgt_tensor_ndim(t) >= k ? wgt_tensor_shape(t)[wgt_tensor_ndim(t) - k] : 1;
}
/* Product of t's dimensions from `from` on, except `skip` (-1: none). */
static int64_t numel_except(wgt_tensor *t, int from, int skip) {
    int64_t n = 1;
    for (int d = from; t && d < wgt_tensor_ndim(t); d++)
        if (d != skip) n = wgt_tensor_shape(t)[d] == 0 || n == 0 ? 0 : mul_sat(n, wgt_tensor_shape(t)[d]);
    return n;
}
static int norm_axis(wgt_tensor *t, int axis) { /* -1 when out of range */
    long long nd = wgt_tensor_ndim(t), a = axis < 0 ? axis + nd : axis;
    return t && a >= 0 && a < nd ? (int)a : -1;
}

static uint8_t buf[BUF + 64], junk[BUF + 64];

/* ---- the calls ---- */
#define F(f) {f, #f}
static const struct { wgt_tensor *(*f)(wgt_tensor *); const char *name; } unary_ops[] = {
    F(wgt_neg), F(wgt_abs), F(wgt_sign), F(wgt_square), F(wgt_sqrt), F(wgt_rsqrt), F(wgt_reciprocal),
    F(wgt_exp), F(wgt_expm1), F(wgt_log), F(wgt_log1p), F(wgt_sin), F(wgt_cos), F(wgt_tanh), F(wgt_sigmoid),
    F(wgt_relu), F(wgt_gelu), F(wgt_gelu_tanh), F(wgt_silu), F(wgt_softplus), F(wgt_floor), F(wgt_ceil),
    F(wgt_round), F(wgt_erf), F(wgt_isnan), F(wgt_isinf), F(wgt_logical_not), F(wgt_contiguous),
    F(wgt_tan), F(wgt_asin), F(wgt_acos), F(wgt_atan), F(wgt_sinh), F(wgt_cosh), F(wgt_asinh), F(wgt_acosh),
    F(wgt_atanh), F(wgt_log2), F(wgt_log10), F(wgt_exp2), F(wgt_trunc), F(wgt_signbit), F(wgt_isfinite),
    F(wgt_bitwise_not)};
static const struct { wgt_tensor *(*f)(wgt_tensor *, wgt_tensor *); const char *name; } binary_ops[] = {
    F(wgt_add), F(wgt_sub), F(wgt_mul), F(wgt_div), F(wgt_pow), F(wgt_maximum), F(wgt_minimum), F(wgt_mod),
    F(wgt_atan2), F(wgt_eq), F(wgt_ne), F(wgt_lt), F(wgt_le), F(wgt_gt), F(wgt_ge), F(wgt_logical_and),
    F(wgt_logical_or), F(wgt_matmul), F(wgt_logaddexp), F(wgt_hypot), F(wgt_copysign), F(wgt_nextafter),
    F(wgt_bitwise_and), F(wgt_bitwise_or), F(wgt_bitwise_xor), F(wgt_bitwise_left_shift),
    F(wgt_bitwise_right_shift), F(wgt_floor_divide)};
static const struct { wgt_tensor *(*f)(wgt_tensor *, double); const char *name; } scalar_ops[] = {
    F(wgt_add_scalar), F(wgt_sub_scalar), F(wgt_mul_scalar), F(wgt_div_scalar), F(wgt_pow_scalar),
    F(wgt_maximum_scalar), F(wgt_minimum_scalar), F(wgt_leaky_relu), F(wgt_elu)};
static const struct { wgt_tensor *(*f)(wgt_tensor *, int, const int *, int); const char *name; } reduce_ops[] = {
    F(wgt_sum), F(wgt_mean), F(wgt_max), F(wgt_min), F(wgt_prod)};

/* Ops of one tensor and small integer arguments: (a, x, y, keepdims, diagonal, dtype). */
static const char *const small_ops[] = {"wgt_transpose", "wgt_squeeze", "wgt_unsqueeze", "wgt_argmax", "wgt_argmin",
                                        "wgt_cumsum", "wgt_softmax", "wgt_log_softmax", "wgt_triu", "wgt_tril",
                                        "wgt_cast"};
static wgt_tensor *small_op(unsigned k, wgt_tensor *a, int x, int y, int keep, int64_t diag, wgt_dtype dt) {
    return k == 0 ? wgt_transpose(a, x, y) : k == 1 ? wgt_squeeze(a, x) : k == 2 ? wgt_unsqueeze(a, x)
         : k == 3 ? wgt_argmax(a, x, keep) : k == 4 ? wgt_argmin(a, x, keep) : k == 5 ? wgt_cumsum(a, x)
         : k == 6 ? wgt_softmax(a, x) : k == 7 ? wgt_log_softmax(a, x) : k == 8 ? wgt_triu(a, diag)
         : k == 9 ? wgt_tril(a, diag) : wgt_cast(a, dt);
}

/* Creation calls; which < 9 share a generated context, dtype, shape, usage and values. */
static void op_create(unsigned which) {
    int nd;
    int64_t shape[9];
    wgt_context *ctx = gen_ctx();
    wgt_dtype dt = gen_dtype();
    const int64_t *sh = gen_shape(&nd, shape);
    int64_t n = shape_numel(nd, sh);
    double x = gen_double(), y = gen_double(), z = chance(4) ? gen_double() : 1;
    unsigned usage = (unsigned[]){3, 3, 1, 2, 0, 7, 4, 8, 3, 0x80000003u}[pick(10)], seed = u8();
    if (which < 9)
        trace("[ctx %s, dtype %d, rank %d,", ctx_name(ctx), (int)dt, nd), trace_list("shape", nd, sh),
            trace(", usage 0x%x, values %g %g %g, seed %u] ", usage, x, y, z, seed);
    if (which >= 3 && which <= 6 && !fits(n)) return; /* these fill memory: no giants */
    if (which <= 1 && host_alloc(ctx) && !fits(n)) return; /* CPU memory is taken at creation */
    switch (which) {
    case 0: begin("wgt_tensor_create", 0), result(wgt_tensor_create(ctx, dt, nd, sh, usage), ctx); break;
    case 1: begin("wgt_zeros", 0), result(wgt_zeros(ctx, dt, nd, sh), ctx); break; /* WebGPU: lazy, giants too */
    case 2: {
        size_t want = n > 0 ? (size_t)n * wgt_dtype_size(dt) : 0;
        size_t nb = n > OUT_CAP ? (size_t)pick(64) : gen_nbytes(want); /* a giant never gets its count */
        for (size_t i = 0; i < 64; i++) buf[i] = (uint8_t)u8();
        const void *data = chance(16) ? NULL : buf;
        begin("wgt_tensor_from_data", 0), trace(" nbytes %zu%s", nb, data ? "" : " data NULL");
        result(wgt_tensor_from_data(ctx, dt, nd, sh, data, nb, usage), ctx);
    } break;
    case 3: begin("wgt_ones", 0), result(wgt_ones(ctx, dt, nd, sh), ctx); break;
    case 4: begin("wgt_full", 0), result(wgt_full(ctx, dt, nd, sh, x), ctx); break;
    case 5: begin("wgt_rand_uniform", 0), result(wgt_rand_uniform(ctx, dt, nd, sh, x, y, seed), ctx); break;
    case 6: begin("wgt_rand_normal", 0), result(wgt_rand_normal(ctx, dt, nd, sh, x, y, seed), ctx); break;
    case 7: begin("wgt_scalar", 0), result(wgt_scalar(ctx, dt, x), ctx); break;
    case 8: {
        double count = ceil((y - x) / z);
        if (!isfinite(x) || !isfinite(y) || !isfinite(z) || z == 0 || count <= OUT_CAP || count > 9.0e18)
            begin("wgt_arange", 0), result(wgt_arange(ctx, dt, x, y, z), ctx);
    } break;
    case 9: { /* small index tensors, mostly valid */
        int rank = (int)pick(3);
        int64_t s[2] = {pick(7), rank == 2 ? 2 : 1};
        int32_t v[12];
        for (int i = 0; i < 12; i++) {
            unsigned b = u8();
            v[i] = b < 240 ? (int32_t)(b % 8) : (int32_t[]){INT32_MAX, INT32_MIN, -1, 1000}[b % 4];
        }
        dt = chance(3) ? WGT_U32 : WGT_I32;
        begin("wgt_tensor_from_data (indices)", 0);
        trace(" ctx %s %s rank %d", ctx_name(ctx), wgt_dtype_name(dt), rank), trace_list("shape", rank, s);
        for (int i = 0; i < 12; i++) trace(i ? ", %d" : " values %d", (int)v[i]);
        result(wgt_tensor_from_data(ctx, dt, rank, s, v, (size_t)shape_numel(rank, s) * 4, WGT_USAGE_DEFAULT), ctx);
    } break;
    default: { /* random values shaped like a pool tensor, so that shapes meet */
        wgt_tensor *t = npool ? pool[pick(npool)] : NULL;
        if (!t) break;
        if (!chance(3)) dt = wgt_tensor_dtype(t);
        double lo = dt == WGT_U32 ? 0 : -4; /* u32 holds no negative bound */
        begin("wgt_rand_uniform (like)", 0), trace(" #%d dtype %d [%g, 8) seed %u", id_of(t), (int)dt, lo, seed);
        result(wgt_rand_uniform(wgt_tensor_context(t), dt, wgt_tensor_ndim(t), wgt_tensor_shape(t), lo, 8, seed),
               wgt_tensor_context(t));
    }
    }
}

/* ---- the execution engine: eval, stats and trim, asynchronous reads, compiled graphs ---- */
static const char *const input_names[] = {"x", "y", "w", "b", "h", "x", "in.0", "k"};
static const char *const output_names[] = {"out", "y", "z", "loss", "out", "x"};
static const char *long_name(void) { /* longer than every message buffer */
    static char name[601];
    if (!name[0]) memset(name, 'n', 600);
    return name;
}
static const char *gen_name(const char *const *names, unsigned n) { /* at times NULL, empty or long */
    unsigned b = rare(16) ? pick(3) : 3;
    return b == 0 ? NULL : b == 1 ? "" : b == 2 ? long_name() : names[pick(n)];
}
static const char *qname(const char *name) { return !name ? "NULL" : strlen(name) > 32 ? "(600 x 'n')" : name; }

static void do_eval(void) {
    wgt_tensor *arr[4];
    int n = (int[]){1, 1, 2, 3, 4, 0, -1, 2}[pick(8)];
    begin("wgt_eval", 0);
    for (int i = 0; i < 4; i++) arr[i] = rare(6) ? again(NULL) : targ();
    wgt_tensor *const *p = rare(16) ? NULL : arr;
    trace(" n %d%s", n, p ? "" : " tensors NULL");
    wgt_status st = wgt_eval(n, p);
    if (st != WGT_OK) { check_failure((int)st); return; }
    trace(" -> ok\n");
    check_success(0, NULL);
    if (n < 0 || (n > 0 && !p)) violation("accepted n %d with tensors %s", n, p ? "given" : "NULL");
    for (int i = 0; i < n && i < 4; i++)
        if (is_released(wgt_tensor_context(arr[i])) || is_lost(wgt_tensor_context(arr[i])))
            violation("evaluated tensors[%d] of a released context or a lost device", i);
}

/* The last stats seen per context: counters never go back. */
static struct { const wgt_context *ctx; wgt_stats s; } seen[6];
static void stats_forget(const wgt_context *c) {
    for (int i = 0; i < 6; i++)
        if (seen[i].ctx == c) seen[i].ctx = NULL;
}
static wgt_stats *stats_prev(const wgt_context *c) {
    int k = 0;
    for (int i = 0; i < 6; i++)
        if (seen[i].ctx == c) return &seen[i].s;
    for (int i = 0; i < 6; i++)
        if (!seen[i].ctx) { k = i; break; }
    seen[k].ctx = c;
    memset(&seen[k].s, 0, sizeof seen[k].s);
    return &seen[k].s;
}
static void check_stats(wgt_context *c, const wgt_stats *s, int trimmed) {
    wgt_stats *p = stats_prev(c);
#define MONOTONIC(f) \
    if (s->f < p->f) violation(#f " went back from %llu to %llu", (unsigned long long)p->f, (unsigned long long)s->f)
    MONOTONIC(buffers_created);
    MONOTONIC(buffers_reused);
    MONOTONIC(ops_run);
    MONOTONIC(ops_skipped);
    MONOTONIC(ops_fused);
    MONOTONIC(launches);
    MONOTONIC(submits);
#undef MONOTONIC
    unsigned long long use = s->device_bytes_in_use, pooled = s->device_bytes_pooled, peak = s->device_bytes_peak;
    if (use + pooled > peak) violation("%llu bytes in use and %llu pooled exceed the peak %llu", use, pooled, peak);
    if (s->ops_fused > s->ops_run) violation("%llu ops fused of %llu run", (unsigned long long)s->ops_fused,
                                             (unsigned long long)s->ops_run);
    if (!fusion_of(c) && s->ops_fused) violation("%llu ops fused with fusion off", (unsigned long long)s->ops_fused);
    if (host_alloc(c) && (use || pooled || peak)) violation("a CPU context reports device memory");
    if (trimmed && (pooled || peak != use)) violation("after a trim: %llu bytes pooled, peak %llu, %llu in use", pooled,
                                                       peak, use);
    *p = *s;
}

static void do_stats(void) {
    wgt_context *c = gen_ctx();
    wgt_stats s;
    if (chance(3)) {
        begin("wgt_context_trim", 1), trace(" %s", ctx_name(c));
        first_null = c == NULL;
        wgt_status st = wgt_context_trim(c);
        status_result(st, 0);
        if (st != WGT_OK) return;
        if (is_released(c) || is_lost(c)) violation("trimmed a released context or a lost device");
        if (wgt_context_stats(c, &s) != WGT_OK) violation("no stats after a trim");
        check_stats(c, &s, 1);
    } else {
        wgt_stats *out = rare(16) ? NULL : &s;
        begin("wgt_context_stats", 1), trace(" %s%s", ctx_name(c), out ? "" : " out NULL");
        first_null = c == NULL;
        wgt_status st = wgt_context_stats(c, out);
        status_result(st, 0);
        if (st != WGT_OK) return;
        if (!c || !out) violation("accepted a NULL argument");
        check_stats(c, out, 0);
    }
}

/* A finished read must hold what wgt_tensor_read of its tensor gives, when nothing that may
 * have changed stored values ran since it began and the tensor is still in the pool. */
static void read_check(read_rec *q) {
    if (q->checked || !q->dst || !q->nbytes) return;
    q->checked = 1;
    int k = pool_index_of_id(q->src_id);
    if (k < 0 || q->gen != mutations || wgt_tensor_read(pool[k], junk, q->nbytes) != WGT_OK) return;
    if (memcmp(junk, q->dst, q->nbytes))
        violation("read r%d holds other bytes than wgt_tensor_read of #%d gives", q->id, q->src_id);
}

static void read_release_at(int k) {
    trace("wgt_read_release r%d\n", reads[k].id);
    wgt_read_release(reads[k].r);
    free(reads[k].dst); /* ASan reports any write after the release */
    reads[k] = reads[--nreads];
}

static void do_read_begin(void) {
    if (nreads == READS) read_release_at((int)pick(READS));
    begin("wgt_read_begin", 1);
    wgt_tensor *a = targ();
    size_t want = wgt_tensor_nbytes(a), nb = gen_nbytes(want);
    uint8_t *dst = nb == want && nb <= BUF && !rare(16) ? malloc(nb ? nb : 1) : NULL; /* exact: ASan sees overruns */
    void *arg = dst ? (void *)dst : nb != want && !chance(8) ? (void *)junk : NULL;
    trace(" nbytes %zu%s", nb, arg ? "" : " dst NULL");
    wgt_read *r = wgt_read_begin(a, arg, nb);
    if (!r) {
        check_failure(-1);
        free(dst);
        return;
    }
    trace(" -> ok r%d\n", read_serial);
    check_success(0, NULL);
    if (nb != want) violation("accepted %zu bytes for a tensor of %zu", nb, want);
    if (!arg && want) violation("accepted a NULL destination");
    if (is_released(wgt_tensor_context(a))) violation("began a read in a released context");
    reads[nreads++] = (read_rec){r, dst, nb, read_serial++, id_of(a), 0, 0, mutations};
}

static void do_read_use(void) {
    if (!nreads && !rare(8)) { do_read_begin(); return; }
    int k = nreads && !rare(16) ? (int)pick(nreads) : -1;
    read_rec *q = k >= 0 ? &reads[k] : NULL;
    wgt_read *r = q ? q->r : NULL;
    unsigned w = pick(5);
    if (w == 4) {
        if (q) read_release_at(k);
        else trace("wgt_read_release NULL\n"), wgt_read_release(NULL);
        return;
    }
    begin(w < 2 ? "wgt_read_poll" : "wgt_read_wait", 1);
    first_null = r == NULL;
    trace(" r%d", q ? q->id : -1);
    if (w < 2) {
        int done = -1, *dp = rare(16) ? NULL : &done;
        wgt_status st = wgt_read_poll(r, dp);
        if (st != WGT_OK) { trace("%s", dp ? "" : " done NULL"), check_failure((int)st); return; }
        trace(" -> ok, done %d\n", done); /* whether it is done yet is timing: not logged */
        check_success(0, NULL);
        if (!q || !dp) violation("accepted a NULL argument");
        if (done != 0 && done != 1) violation("done is %d", done);
        if (q->finished && !done) violation("a finished read polled as unfinished");
        if (done) q->finished = 1, read_check(q);
    } else {
        wgt_status st = wgt_read_wait(r);
        if (st != WGT_OK) { check_failure((int)st); return; }
        trace(" -> ok\n");
        check_success(0, NULL);
        if (!q) violation("waited for NULL");
        if (q->dst) log_bytes(q->dst, q->nbytes);
        int done = 0;
        if (wgt_read_poll(r, &done) != WGT_OK || !done) violation("a read waited for polls as unfinished");
        q->finished = 1, read_check(q);
    }
}

static int pick_symbolic(void) { /* a pool entry computed from graph inputs, or -1 */
    int cand[POOL], n = 0;
    for (int i = 0; i < npool; i++)
        if (masks[i]) cand[n++] = i;
    return n ? cand[pick((unsigned)n)] : -1;
}

static void do_graph_input(void) {
    int nd;
    int64_t shape[9];
    const int64_t *sh;
    wgt_dtype dt;
    if (nph == MAX_PH) return;
    wgt_context *c = gen_ctx();
    const char *name = gen_name(input_names, COUNT(input_names));
    wgt_tensor *like = npool && !rare(3) ? pool[pick(npool)] : NULL; /* shapes that meet the pool's */
    if (like) {
        dt = chance(4) ? gen_dtype() : wgt_tensor_dtype(like);
        nd = wgt_tensor_ndim(like);
        memcpy(shape, wgt_tensor_shape(like), sizeof(int64_t) * (size_t)nd);
        sh = shape;
        if (chance(2)) c = wgt_tensor_context(like);
    } else {
        dt = gen_dtype();
        sh = gen_shape(&nd, shape);
    }
    int dup = 0; /* the pool holds a live placeholder of that name in that context */
    for (int i = 0; name && i < npool; i++)
        if (phs[i] >= 0 && ph[phs[i]].ctx == c && !strcmp(ph[phs[i]].name, name)) dup = 1;
    begin("wgt_graph_input", 0);
    trace(" ctx %s name %s dtype %d rank %d", ctx_name(c), qname(name), (int)dt, nd), trace_list("shape", nd, sh);
    wgt_tensor *t = wgt_graph_input(c, name, dt, nd, sh);
    if (!t) { check_failure(-1); return; }
    trace(" -> ok x%d\n", nph);
    check_success(0, c);
    if (dup) violation("made a second live input named '%s'", name);
    check_tensor(t, c, 1);
    ph[nph].ctx = c, ph[nph].name = name, ph[nph].dt = dt, ph[nph].nd = nd;
    if (nd > 0) memcpy(ph[nph].shape, sh, sizeof(int64_t) * (size_t)nd);
    pool_add_as(t, 1u << nph, nph);
    nph++;
}

static void graph_release_at(int k) {
    trace("wgt_graph_release g%d\n", graphs[k].id);
    wgt_graph_release(graphs[k].g);
    graphs[k] = graphs[--ngraphs];
}

/* An elementwise op on pool entry k (a placeholder), kept in the pool: something a graph can
 * output. Returns the result, or NULL. */
static wgt_tensor *derive(int k) {
    wgt_tensor *p = pool[k], *r, *q[2];
    unsigned w = pick(4), u = pick(COUNT(unary_ops)), b = pick(8), s = pick(COUNT(scalar_ops));
    if (w == 3 && wgt_tensor_ndim(p) >= 1) { /* p's rows written into a fresh zero tensor a row or two longer */
        int nd = wgt_tensor_ndim(p);
        int64_t sh[WGT_MAX_DIMS], rows = wgt_tensor_shape(p)[0];
        if (rows > 64) return NULL;
        memcpy(sh, wgt_tensor_shape(p), sizeof(int64_t) * (size_t)nd);
        sh[0] += 1 + (int64_t)pick(2);
        if (!fits(shape_numel(nd, sh))) return NULL;
        int32_t at[64];
        for (int64_t i = 0; i < rows; i++) at[i] = (int32_t)((i * 2 + 1) % sh[0]);
        wgt_context *c = wgt_tensor_context(p);
        wgt_tensor *z = wgt_zeros(c, wgt_tensor_dtype(p), nd, sh);
        wgt_tensor *idx = wgt_tensor_from_data(c, WGT_I32, 1, &rows, at, (size_t)rows * 4, WGT_USAGE_DEFAULT);
        begin("wgt_set_rows (into zeros)", 1), again(z), again(idx), again(p), trace_list("zeros of", nd, sh);
        wgt_status st = wgt_set_rows(z, idx, p);
        mutations++;
        status_result(st, 1);
        if (st == WGT_OK) updates_note(c);
        wgt_release(idx);
        if (st != WGT_OK) { wgt_release(z); return NULL; }
        pool_add_as(z, mask_of(p), -1);
        return id_of(z) >= 0 ? z : NULL;
    }
    if (w == 0 || w == 3) {
        begin(unary_ops[u].name, 1), again(p);
        r = unary_ops[u].f(p);
    } else if (w == 1) { /* elementwise binary ops only (binary_ops[8] on are comparisons and matmul) */
        begin(binary_ops[b].name, 1), again(p);
        q[0] = p, q[1] = targ_pref(1u << wgt_tensor_dtype(p));
        if (!fits(bcast_numel(q, 2, 0))) return NULL;
        r = binary_ops[b].f(p, q[1]);
    } else {
        double v = gen_double();
        begin(scalar_ops[s].name, 1), again(p), trace(" %g", v);
        r = scalar_ops[s].f(p, v);
    }
    result(r, NULL);
    return r && id_of(r) >= 0 ? r : NULL;
}

static void do_graph_build(void) {
    static const char *const plain[4] = {"out", "y", "z", "loss"};
    if (pick_symbolic() < 0 && !rare(8)) { do_graph_input(); return; } /* nothing to build from yet */
    if (ngraphs == GRAPHS) graph_release_at((int)pick(GRAPHS));
    int n = (int[]){1, 1, 1, 2, 2, 3, 4, 1, 0, -1}[pick(10)];
    wgt_binding outs[4];
    uint32_t m[4];
    for (int i = 0; i < 4; i++) { /* each held here: deriving may push the others out of the pool */
        int k = rare(4) ? -1 : pick_symbolic();
        wgt_tensor *d = k >= 0 && phs[k] >= 0 && !rare(4) ? derive(k) : NULL; /* a placeholder is no output */
        outs[i].tensor = d ? d : k >= 0 ? pool[k] : npool && !rare(8) ? pool[pick(npool)] : NULL;
        m[i] = mask_of(outs[i].tensor);
        wgt_retain(outs[i].tensor);
        outs[i].name = rare(4) ? gen_name(output_names, COUNT(output_names)) : plain[i];
    }
    wgt_context *c = rare(8) || !outs[0].tensor ? gen_ctx() : wgt_tensor_context(outs[0].tensor);
    const wgt_binding *ob = rare(16) ? NULL : outs;
    begin("wgt_graph_build", 0);
    trace(" ctx %s n %d%s", ctx_name(c), n, ob ? "" : " outputs NULL");
    for (int i = 0; ob && i < n && i < 4; i++) trace(" %s=#%d", qname(outs[i].name), id_of(outs[i].tensor));
    wgt_graph *g = wgt_graph_build(c, n, ob);
    if (!g) {
        check_failure(-1);
    } else {
        trace(" -> ok g%d\n", graph_serial);
        check_success(0, c);
        if (n < 1 || n > 4 || !ob) violation("built with n_outputs %d, outputs %s", n, ob ? "given" : "NULL");
        graph_rec *G = &graphs[ngraphs++];
        memset(G, 0, sizeof *G);
        G->g = g, G->ctx = c, G->id = graph_serial++, G->nout = n, G->updates = updates_take(c);
        for (int i = 0; i < n; i++) {
            wgt_tensor *t = outs[i].tensor;
            if (!t || !outs[i].name || !*outs[i].name || wgt_tensor_context(t) != c) violation("accepted outputs[%d]", i);
            for (int j = 0; j < i; j++)
                if (!strcmp(outs[j].name, outs[i].name)) violation("accepted two outputs named '%s'", outs[i].name);
            G->outname[i] = outs[i].name, G->odt[i] = wgt_tensor_dtype(t), G->ond[i] = wgt_tensor_ndim(t);
            memcpy(G->oshape[i], wgt_tensor_shape(t), sizeof(int64_t) * (size_t)G->ond[i]);
            G->inmask |= m[i];
        }
        if (wgt_graph_launches(g) < 0) violation("a live graph has %d launches", wgt_graph_launches(g));
    }
    for (int i = 0; i < 4; i++) wgt_release(outs[i].tensor);
}

/* Tensors made for one dispatch's bindings; released after it. */
static wgt_tensor *made[MADE];
static int nmade;
static wgt_tensor *keep_made(wgt_tensor *t) {
    if (t && nmade == MADE) wgt_release(t), t = NULL;
    if (t) made[nmade++] = t;
    return t;
}
static wgt_tensor *fresh(wgt_context *c, wgt_dtype dt, int nd, const int64_t *sh, int out, unsigned seed) {
    if (out) return wgt_tensor_create(c, dt, nd, sh, WGT_USAGE_DEFAULT);
    double lo = dt == WGT_U32 ? 0 : -4; /* u32 holds no negative bound */
    return seed & 1 ? wgt_rand_uniform(c, dt, nd, sh, 0, 2, seed) : wgt_rand_uniform(c, dt, nd, sh, lo, 8, seed);
}

/* A tensor for the binding of a graph value of type dt and shape sh: usually a fitting fresh
 * one (*ok set), otherwise one of the ways a binding can be wrong or unusual. p: the ph[]
 * index of an input, -1 for an output. */
static wgt_tensor *bind_tensor(wgt_context *c, wgt_dtype dt, int nd, const int64_t *sh, int out, int p, int *ok,
                               const char **kind) {
    int64_t s2[WGT_MAX_DIMS];
    unsigned k = 31 - pick(32), seed = u8(); /* as the input runs out: fresh */
    wgt_tensor *t = NULL, *base = NULL;
    memcpy(s2, sh, sizeof(int64_t) * (size_t)nd);
    *ok = 0;
    int small = 1; /* no dimension near overflowing when one is changed below */
    for (int d = 0; d < nd; d++) small &= sh[d] <= OUT_CAP;
    if (!fits(mul_sat(shape_numel(nd, sh), 2))) k %= 2; /* too big to make */
    if ((nd == 0 && (k == 5 || k == 9 || k == 11)) || (!small && k >= 2 && k <= 11)) k = 31;
    switch (k) {
    case 0: *kind = "NULL"; return NULL;
    case 1: *kind = "a pool tensor"; return npool ? pool[pick(npool)] : NULL;
    case 2: *kind = "mistyped"; return keep_made(fresh(c, dt == WGT_F32 ? WGT_I32 : WGT_F32, nd, sh, out, seed));
    case 3:
        *kind = "misshaped";
        if (nd > 0) s2[pick((unsigned)nd)] += 1;
        else s2[0] = 1;
        return keep_made(fresh(c, dt, nd > 0 ? nd : 1, s2, out, seed));
    case 4:
        *kind = "destroyed";
        t = keep_made(fresh(c, dt, nd, sh, out, seed));
        if (t) wgt_tensor_destroy(t);
        return t;
    case 5: /* every other row of one twice as long */
        *kind = "strided";
        s2[0] *= 2;
        base = fresh(c, dt, nd, s2, out, seed);
        t = keep_made(wgt_slice(base, 0, 0, s2[0], 2));
        wgt_release(base);
        return t;
    case 6: *kind = "of another context"; return keep_made(fresh(c == ctx_main ? (chance(2) ? ctx_peer : ctx_cpu) : ctx_main, dt, nd, sh, out, seed));
    case 7: /* the placeholder itself, or another tensor computed from graph inputs */
        *kind = "a placeholder";
        for (int i = 0; i < npool; i++)
            if (phs[i] == p && p >= 0) return pool[i];
        k = (unsigned)pick_symbolic();
        return (int)k >= 0 ? pool[k] : NULL;
    case 8:
        *kind = out ? "readable only" : "writable only";
        return keep_made(wgt_tensor_create(c, dt, nd, sh, out ? WGT_USAGE_READABLE : WGT_USAGE_WRITABLE));
    case 9: /* contiguous, at an offset into a larger storage */
        *kind = "offset";
        s2[0] += 1;
        base = fresh(c, dt, nd, s2, out, seed);
        t = keep_made(wgt_slice(base, 0, 1, s2[0], 1));
        wgt_release(base);
        *ok = 1;
        return t;
    case 10: /* computed by a recorded op that has not run */
        *kind = "lazy";
        base = fresh(c, dt, nd, sh, 0, seed);
        t = keep_made(wgt_add_scalar(base, 0));
        wgt_release(base);
        return t;
    case 11: /* a broadcast view */
        *kind = "broadcast";
        s2[0] = 1;
        base = fresh(c, dt, nd, s2, 0, seed);
        t = keep_made(wgt_expand(base, nd, sh));
        wgt_release(base);
        return t;
    default: *kind = "fresh", *ok = 1; return keep_made(fresh(c, dt, nd, sh, out, seed));
    }
}

static void trace_bindings(const char *label, int n, const wgt_binding *b, const char *const *kind) {
    trace(" %s [", label);
    for (int i = 0; i < n; i++) trace("%s%s=%s #%d", i ? ", " : "", qname(b[i].name), kind[i], id_of(b[i].tensor));
    trace("]");
}

/* Reads every output binding into got (one hash each) and logs them. */
/* Reads each output: got[j] is a hash of its bytes, or the read's status. Returns whether
 * every read succeeded. */
static int read_outputs(int n, const wgt_binding *b, uint64_t *got) {
    int all_read = 1;
    for (int j = 0; j < n; j++) {
        size_t nb = wgt_tensor_nbytes(b[j].tensor);
        wgt_status st = nb <= BUF ? wgt_tensor_read(b[j].tensor, junk, nb) : WGT_ERR_LIMIT;
        got[j] = st == WGT_OK ? hash_bytes(junk, nb, 0xcbf29ce484222325ull) : (uint64_t)st;
        all_read &= st == WGT_OK;
        log_event(got[j]);
    }
    return all_read;
}

static void do_graph_dispatch(void) {
    enum { IN = MAX_PH + 8 };
    wgt_binding in[IN], out[8], again_out[8];
    const char *kin[IN], *kout[8];
    int nin = 0, nout = 0, ok, outputs_fresh = 1;
    if (!ngraphs && !rare(8)) { do_graph_build(); return; }
    int gi = ngraphs && !rare(16) ? (int)pick(ngraphs) : -1;
    graph_rec *G = gi >= 0 ? &graphs[gi] : NULL;
    wgt_context *c = G ? G->ctx : ctx_main;
    nmade = 0;
    for (int b = 0; G && b < nph && nin < IN - 3; b++) {
        if (!(G->inmask >> b & 1) || rare(24)) continue; /* at times one is left out */
        in[nin].name = rare(32) ? (chance(2) ? NULL : "nope") : ph[b].name;
        in[nin].tensor = bind_tensor(c, ph[b].dt, ph[b].nd, ph[b].shape, 0, b, &ok, &kin[nin]);
        nin++;
        if (rare(32)) in[nin] = in[nin - 1], kin[nin] = "again", nin++;
    }
    if (rare(16) && nph) { /* one more: another input's name, or one the graph does not have */
        int b = (int)pick(nph);
        in[nin].name = chance(2) ? ph[b].name : "extra";
        in[nin].tensor = bind_tensor(c, ph[b].dt, ph[b].nd, ph[b].shape, 0, b, &ok, &kin[nin]);
        nin++;
    }
    for (int o = 0; G && o < G->nout; o++) {
        if (rare(24)) { outputs_fresh = 0; continue; }
        unsigned v = 31 - pick(32);
        out[nout].name = rare(32) ? (chance(2) ? NULL : "nope") : G->outname[o];
        if (v == 0 && nin) out[nout].tensor = in[pick(nin)].tensor, kout[nout] = "an input's tensor", ok = 0;
        else if (v == 1 && nout) out[nout].tensor = out[pick(nout)].tensor, kout[nout] = "another output's", ok = 0;
        else out[nout].tensor = bind_tensor(c, G->odt[o], G->ond[o], G->oshape[o], 1, -1, &ok, &kout[nout]);
        outputs_fresh &= ok && out[nout].name == G->outname[o];
        nout++;
    }
    if (rare(16)) {
        out[nout].name = G && chance(2) ? G->outname[0] : "extra";
        out[nout].tensor = npool ? pool[pick(npool)] : NULL, kout[nout] = "a pool tensor";
        nout++;
        outputs_fresh = 0;
    }
    int ni = rare(32) ? -1 : nin, no = rare(32) ? -1 : nout;
    const wgt_binding *ip = rare(32) ? NULL : in, *op = rare(32) ? NULL : out;
    begin("wgt_graph_dispatch", 1);
    first_null = G == NULL;
    trace(" g%d n_inputs %d%s", G ? G->id : -1, ni, ip ? "" : " inputs NULL"), trace_bindings("in", nin, in, kin);
    trace(" n_outputs %d%s", no, op ? "" : " outputs NULL"), trace_bindings("out", nout, out, kout);
    wgt_status st = wgt_graph_dispatch(G ? G->g : NULL, ni, ip, no, op);
    mutations++;
    if (st != WGT_OK) {
        check_failure((int)st);
    } else {
        trace(" -> ok\n");
        check_success(0, NULL);
        if (!G || ni < 0 || no < 0 || (ni && !ip) || (no && !op)) violation("accepted a NULL or negative argument");
        if (is_released(c) || is_lost(c)) violation("dispatched in a released context or on a lost device");
        for (int j = 0; j < nout; j++) {
            wgt_tensor *t = out[j].tensor;
            int o = -1;
            for (int k = 0; out[j].name && k < G->nout; k++)
                if (!strcmp(G->outname[k], out[j].name)) o = k;
            if (o < 0 || !t) violation("accepted output binding %d ('%s')", j, qname(out[j].name));
            if (!(wgt_tensor_usage(t) & WGT_USAGE_WRITABLE) || !wgt_tensor_is_contiguous(t))
                violation("accepted output '%s', not writable or not contiguous", G->outname[o]);
            if (wgt_tensor_dtype(t) != G->odt[o] || wgt_tensor_ndim(t) != G->ond[o] ||
                memcmp(wgt_tensor_shape(t), G->oshape[o], sizeof(int64_t) * (size_t)G->ond[o]))
                violation("accepted output '%s' of another type or shape", G->outname[o]);
        }
        uint64_t first[8], second[8];
        snprintf(call_name, sizeof call_name, "reading the outputs of g%d", G->id);
        int first_read = read_outputs(nout, out, first);
        /* A replay into other outputs, filled with other values, gives the same bytes, unless
         * the graph updates in place what it reads. A check on the data that failed the first
         * run's reads (an index out of range, found as the graph ran) may fail the replay
         * itself: the same inputs are known bad by then. */
        if (outputs_fresh && nout == G->nout && !G->updates && chance(2)) {
            for (int j = 0; j < nout; j++) {
                again_out[j].name = out[j].name;
                wgt_dtype odt = wgt_tensor_dtype(out[j].tensor);
                const int64_t *os = wgt_tensor_shape(out[j].tensor);
                /* Random values where the type takes them; ones for the others (bool, say). */
                int random = odt == WGT_F32 || odt == WGT_F16 || odt == WGT_I32 || odt == WGT_U32;
                again_out[j].tensor = keep_made(random ? wgt_rand_uniform(c, odt, G->ond[j], os, odt == WGT_U32 ? 0 : -9, 9,
                                                                          99 + (unsigned)j)
                                                       : wgt_ones(c, odt, G->ond[j], os));
            }
            snprintf(call_name, sizeof call_name, "wgt_graph_dispatch (replay of g%d)", G->id);
            trace("wgt_graph_dispatch: the same again into outputs of other values");
            wgt_clear_error();
            cleared = 1;
            st = wgt_graph_dispatch(G->g, ni, ip, no, again_out);
            status_result(st, 0);
            if (st != WGT_OK && first_read) violation("a replay failed");
            if (st == WGT_OK) {
                read_outputs(nout, again_out, second);
                for (int j = 0; j < nout; j++)
                    if (first[j] != second[j]) violation("the replay gave other bytes for output '%s'", out[j].name);
            }
        }
        /* Results join the pool at times. All are held first: adding one may release a pool
         * entry that is another output. */
        wgt_tensor *joining[8];
        int njoining = 0;
        for (int j = 0; j < nout; j++)
            if (chance(2)) joining[njoining++] = wgt_retain(out[j].tensor);
        for (int j = 0; j < njoining; j++) pool_add_as(joining[j], 0, -1);
    }
    for (int i = 0; i < nmade; i++) wgt_release(made[i]);
    nmade = 0;
}

/* Graph calls beside build and dispatch: launches, release, NULLs. */
static void do_graph_misc(void) {
    unsigned w = pick(4);
    int k = ngraphs && !rare(8) ? (int)pick(ngraphs) : -1;
    if (w == 0 && k >= 0) { graph_release_at(k); return; }
    if (w == 0) { trace("wgt_graph_release NULL\n"), wgt_graph_release(NULL); return; }
    int l = wgt_graph_launches(k >= 0 ? graphs[k].g : NULL);
    trace("wgt_graph_launches g%d -> %d\n", k >= 0 ? graphs[k].id : -1, l);
    if ((k >= 0) != (l >= 0)) violation("wgt_graph_launches gave %d", l);
}

static void step(void) {
    int64_t shape[9], strides[9], n;
    int axes[16], nd;
    wgt_tensor *t[4];
    unsigned op = pick(72);
    if (op < 13) { op_create(op < 11 ? op : 9 + op % 2); return; } /* more index and like-shaped tensors */
    if (op >= 50) { /* the execution engine */
        if (op <= 52) do_graph_input();
        else if (op <= 55) do_graph_build();
        else if (op <= 61) do_graph_dispatch();
        else if (op <= 64) do_read_begin();
        else if (op <= 67) do_read_use();
        else if (op <= 69) do_eval();
        else if (op == 70) do_stats();
        else do_graph_misc();
        return;
    }
    switch (op) {
    case 13: { /* retain: a second pool entry owning the new reference */
        begin("wgt_retain", 1);
        wgt_tensor *a = targ(), *r = wgt_retain(a);
        if (!r) check_failure(-1);
        else if (r != a) violation("retain returned another tensor");
        else trace(" -> ok\n"), check_success(0, NULL), pool_add_as(r, mask_of(a), phs_of(a));
    } break;
    case 14: case 15: { /* release a pool entry, in any order, or NULL */
        int k = npool && !chance(16) ? (int)pick(npool) : -1;
        trace("wgt_release #%d\n", k < 0 ? -1 : ids[k]);
        wgt_release(k < 0 ? NULL : pool[k]);
        if (k >= 0) pool_remove(k);
    } break;
    case 16: begin("wgt_tensor_destroy", 1), mutations++, status_result(wgt_tensor_destroy(targ()), 0); break;
    case 17: case 18: { /* read and write with random byte counts */
        begin(op == 17 ? "wgt_tensor_read" : "wgt_tensor_write", 1);
        wgt_tensor *a = targ();
        size_t nb = gen_nbytes(wgt_tensor_nbytes(a));
        void *p = chance(16) ? NULL : op == 17 ? junk : buf;
        trace(" nbytes %zu%s", nb, p ? "" : " buffer NULL");
        mutations += op == 18;
        wgt_status st = op == 17 ? wgt_tensor_read(a, p, nb) : wgt_tensor_write(a, p, nb);
        status_result(st, op == 18);
        if (st == WGT_OK && op == 17) log_bytes(junk, nb);
    } break;
    case 19: case 20: { /* host pointers, touched at both ends */
        begin(op == 19 ? "wgt_tensor_data" : "wgt_tensor_data_mut", 1);
        wgt_tensor *a = targ();
        mutations += op == 20;
        if (a && wgt_tensor_numel(a) > 0) trace("\n"), touch(a, op == 20);
        else if (op == 19 ? wgt_tensor_data(a) != NULL : wgt_tensor_data_mut(a) != NULL) status_result(WGT_OK, 0);
        else check_failure(-1);
    } break;
    case 21: {
        begin("wgt_tensor_export_buffer", 1);
        uint64_t off = 0;
        wgt_tensor *a = targ();
        if (!wgt_tensor_export_buffer(a, chance(4) ? NULL : &off)) check_failure(-1);
        else if (wgt_context_backend(wgt_tensor_context(a)) != WGT_BACKEND_WEBGPU) violation("exported a CPU buffer");
        else if (!(wgt_tensor_usage(a) & WGT_USAGE_EXPORTABLE)) violation("exported without the usage");
        else trace(" -> ok\n"), check_success(1, NULL);
    } break;
    case 22: { /* context calls, and releasing the per-input context while its tensors live */
        wgt_context *c = gen_ctx();
        unsigned k = pick(6);
        begin("context call", 0), trace(" %u on %s\n", k, ctx_name(c));
        if (k == 0) status_result(wgt_context_sync(c), 0);
        else if (k == 1) status_result(wgt_context_status(c), 0);
        else if (k == 2) { char *d = wgt_context_describe(c); if (!d) check_failure(-1); free(d); }
        else if (k == 3 && ctx_eph && !eph_released) {
            wgt_context_release(ctx_eph);
            eph_released = 1;
            if (!eph_alive()) ctx_eph = NULL;
        } else if (k == 4 && (c != ctx_main && (c != ctx_peer || webgpu))) { /* CPU: an error */
            wgt_status st = wgt_context_simulate_device_loss(c);
            status_result(st, 0);
            peer_lost |= st == WGT_OK && c == ctx_peer;
            eph_lost |= st == WGT_OK && c == ctx_eph;
            if (st == WGT_OK && cur_log >= 0) frozen[cur_log] = 1; /* what a lost device does is timing */
        } else if (k == 5) (void)wgt_context_device_name(c), (void)wgt_context_backend(c);
    } break;
    case 23: {
        begin("wgt_as_strided", 1);
        wgt_tensor *a = targ();
        const int64_t *sh = gen_shape(&nd, shape);
        for (int i = 0; i < 9; i++) strides[i] = gen_i64();
        const int64_t *st = chance(16) ? NULL : strides;
        int64_t off = chance(2) ? gen_i64() : (int64_t)pick(8);
        trace(" rank %d", nd), trace_list("shape", nd, sh), trace_list("strides", nd, st);
        trace(" offset %lld", (long long)off);
        result(wgt_as_strided(a, nd, sh, st, off), NULL);
    } break;
    case 24: case 25: case 26: case 27: { /* one tensor and small integer arguments */
        unsigned k = pick(COUNT(small_ops));
        begin(small_ops[k], 1);
        wgt_tensor *a = k == 6 || k == 7 ? targ_pref(FLOATS) : targ();
        int x = gen_axis(), y = gen_axis(), keep = (int)pick(2), ax = norm_axis(a, x);
        int64_t diag = gen_i64();
        wgt_dtype dt = gen_dtype();
        if ((k == 3 || k == 4) && ax >= 0 && !fits(numel_except(a, 0, ax))) break;
        trace(" x %d y %d keepdims %d diagonal %lld dtype %d", x, y, keep, (long long)diag, (int)dt);
        result(small_op(k, a, x, y, keep, diag, dt), NULL);
    } break;
    case 28: {
        begin("wgt_slice", 1);
        wgt_tensor *a = targ();
        int ax = gen_axis();
        int64_t b = gen_i64(), e = gen_i64(), s = chance(4) ? gen_i64() : 1 + (int64_t)pick(3);
        trace(" axis %d start %lld stop %lld step %lld", ax, (long long)b, (long long)e, (long long)s);
        result(wgt_slice(a, ax, b, e, s), NULL);
    } break;
    case 29: case 30: case 31: { /* broadcast_to, reshape, expand: shapes often derived from a */
        begin(op == 29 ? "wgt_broadcast_to" : op == 30 ? "wgt_reshape" : "wgt_expand", 1);
        wgt_tensor *a = targ();
        const int64_t *sh = gen_shape(&nd, shape);
        if (a && chance(2)) { /* a's shape with a few entries changed */
            nd = wgt_tensor_ndim(a) + (int)pick(3) - (op == 30);
            nd = nd < 0 ? 0 : nd > 8 ? 8 : nd;
            for (int i = 0, j = wgt_tensor_ndim(a) - nd; i < nd; i++, j++) {
                shape[i] = j >= 0 ? wgt_tensor_shape(a)[j] : 1 + (int64_t)pick(3);
                if (chance(4)) shape[i] = chance(2) ? -1 : gen_dim();
            }
            sh = shape;
        }
        trace(" rank %d", nd), trace_list("shape", nd, sh);
        result(op == 29 ? wgt_broadcast_to(a, nd, sh) : op == 30 ? wgt_reshape(a, nd, sh) : wgt_expand(a, nd, sh),
               NULL);
    } break;
    case 32: case 33: { /* permute (a reversal, a few entries changed), flip */
        begin(op == 32 ? "wgt_permute" : "wgt_flip", 1);
        wgt_tensor *a = targ();
        int k = wgt_tensor_ndim(a) > 0 ? wgt_tensor_ndim(a) : 0;
        if (op == 33) k = gen_axes(axes);
        else for (int i = 0; i < 16; i++) axes[i] = i < k ? k - 1 - i : 0;
        for (int r = (int)pick(3); op == 32 && r > 0; r--) axes[pick(9)] = gen_axis();
        const int *ax = chance(16) ? NULL : axes;
        trace(" n %d", k), trace_ints("axes", k, ax);
        result(op == 32 ? wgt_permute(a, ax) : wgt_flip(a, k, ax), NULL);
    } break;
    case 34: { /* split: each piece a pool entry; out must stay untouched on failure */
        begin("wgt_split", 1);
        wgt_tensor *a = targ(), *out[8], *const sentinel = (wgt_tensor *)buf;
        int axis = gen_axis(), ax = norm_axis(a, axis);
        int count = (int)(unsigned[]){1, 2, 3, 4, 2, 3, 0, UINT_MAX}[pick(8)];
        int64_t sizes[8], left = ax >= 0 ? wgt_tensor_shape(a)[ax] : 0;
        for (int k = 0; k < 8; k++) {
            sizes[k] = k == count - 1 ? left : left > 0 ? (int64_t)pick((unsigned)(left < 8 ? left : 8) + 1) : 0;
            if (chance(8)) sizes[k] = gen_i64();
            left = (int64_t)((uint64_t)left - (uint64_t)sizes[k]); /* wraps on odd sizes: fine */
            out[k] = sentinel;
        }
        int64_t *sz = chance(16) ? NULL : sizes;
        wgt_tensor **o = chance(16) ? NULL : out;
        trace(" axis %d count %d", axis, count), trace_list("sizes", count, sz), trace("%s", o ? "" : " out NULL");
        wgt_status st = wgt_split(a, axis, count, sz, o);
        wgt_context *ac = wgt_tensor_context(a); /* adding pieces may evict a from the pool */
        status_result(st, 1);
        for (int k = 0; k < 8; k++) {
            if (st == WGT_OK && k < count) check_tensor(out[k], ac, 0), pool_add(out[k]);
            else if (out[k] != sentinel) violation("a failed split wrote out[%d]", k);
        }
    } break;
    case 35: case 36: {
        unsigned k = pick(COUNT(unary_ops));
        begin(unary_ops[k].name, 1);
        wgt_tensor *a = targ();
        result(unary_ops[k].f(a), NULL);
    } break;
    case 37: case 38: { /* binary ops; b is often a itself so shapes meet, and matmul often takes a^T */
        unsigned k = pick(COUNT(binary_ops));
        int matmul = binary_ops[k].f == wgt_matmul, own = chance(2);
        begin(binary_ops[k].name, 1);
        wgt_tensor *tr = NULL;
        t[0] = targ();
        if (matmul && own && wgt_tensor_ndim(t[0]) >= 2 && !(tr = wgt_transpose(t[0], -1, -2)) && cleared)
            wgt_clear_error();
        if (tr) ins[nins++] = t[1] = tr, trace(" #%d^T", id_of(t[0]));
        else t[1] = chance(3) ? again(t[0]) : targ();
        n = matmul ? mul_sat(bcast_numel(t, 2, 2), mul_sat(wgt_tensor_ndim(t[0]) > 1 ? dim_from_end(t[0], 2) : 1,
                                                            wgt_tensor_ndim(t[1]) > 1 ? dim_from_end(t[1], 1) : 1))
                   : bcast_numel(t, 2, 0);
        if (fits(n)) result(binary_ops[k].f(t[0], t[1]), NULL);
        wgt_release(tr);
    } break;
    case 39: case 40: { /* tensor with scalars; clamp */
        unsigned k = pick(COUNT(scalar_ops));
        begin(op == 40 ? "wgt_clamp" : scalar_ops[k].name, 1);
        wgt_tensor *a = targ();
        double v = gen_double(), w = gen_double();
        trace(" %g %g", v, w);
        result(op == 40 ? wgt_clamp(a, v, w) : scalar_ops[k].f(a, v), NULL);
    } break;
    case 41: {
        begin("wgt_where", 1);
        t[0] = targ(), t[1] = targ(), t[2] = chance(2) ? again(t[1]) : targ();
        if (fits(bcast_numel(t, 3, 0))) result(wgt_where(t[0], t[1], t[2]), NULL);
    } break;
    case 42: { /* reductions with random axes; the kept dimensions bound the output */
        unsigned k = pick(COUNT(reduce_ops) + 2);
        begin(k < COUNT(reduce_ops) ? reduce_ops[k].name : k == COUNT(reduce_ops) ? "wgt_var" : "wgt_std", 1);
        wgt_tensor *a = targ();
        int na = gen_axes(axes), keep = (int)pick(2), corr = (int)pick(3) - (chance(8) ? 100 : 0), red[9];
        for (int d = 0; d < 9; d++) red[d] = na == 0;
        for (int i = 0; i < na && i < 16; i++) if (norm_axis(a, axes[i]) >= 0) red[norm_axis(a, axes[i])] = 1;
        n = 1;
        for (int d = 0; a && d < wgt_tensor_ndim(a); d++)
            if (!red[d]) n = wgt_tensor_shape(a)[d] == 0 || n == 0 ? 0 : mul_sat(n, wgt_tensor_shape(a)[d]);
        if (!fits(n)) break;
        int *ax = chance(16) ? NULL : axes;
        trace(" naxes %d", na), trace_ints("axes", na, ax), trace(" keepdims %d correction %d", keep, corr);
        result(k < COUNT(reduce_ops) ? reduce_ops[k].f(a, na, ax, keep)
               : k == COUNT(reduce_ops) ? wgt_var(a, na, ax, keep, corr) : wgt_std(a, na, ax, keep, corr), NULL);
    } break;
    case 43: { /* linear, layer_norm, rms_norm */
        unsigned k = pick(3);
        begin((const char *[]){"wgt_linear", "wgt_layer_norm", "wgt_rms_norm"}[k], 1);
        t[0] = k ? targ_pref(FLOATS) : targ(), t[1] = k && chance(2) ? NULL : targ();
        t[2] = k == 2 || chance(2) ? NULL : targ();
        double eps = chance(4) ? gen_double() : 1e-5;
        trace(" eps %g", eps);
        if (k == 0 && fits(mul_sat(bcast_numel(t, 1, 1), dim_from_end(t[1], 2))))
            result(wgt_linear(t[0], t[1], t[2]), NULL);
        else if (k) result(k == 1 ? wgt_layer_norm(t[0], t[1], t[2], eps) : wgt_rms_norm(t[0], t[1], eps), NULL);
    } break;
    case 44: case 45: { /* concat, stack */
        begin(op == 45 ? "wgt_stack" : "wgt_concat", 1);
        int count = (int)(unsigned[]){1, 2, 3, 4, 2, 2, 0, UINT_MAX}[pick(8)], axis = gen_axis();
        for (int k = 0; k < 4; k++) t[k] = k && chance(2) ? again(t[0]) : targ();
        wgt_tensor *const *l = chance(16) ? NULL : t;
        keeps_first = l && count >= 1; /* count and the array are checked before the tensors */
        if (count >= 0 && count < nins) nins = count; /* only the first count entries are inputs */
        trace(" count %d axis %d%s", count, axis, l ? "" : " tensors NULL");
        result(op == 45 ? wgt_stack(l, count, axis) : wgt_concat(l, count, axis), NULL);
    } break;
    case 46: {
        begin("wgt_pad", 1);
        wgt_tensor *a = targ();
        int64_t before[8], after[8];
        int zero = 0, fail = 0;
        n = 1;
        for (int d = 0; d < 8; d++) {
            before[d] = chance(6) ? gen_i64() : (int64_t)pick(3);
            after[d] = chance(6) ? gen_i64() : (int64_t)pick(3);
            __int128 len = d < wgt_tensor_ndim(a) ? (__int128)before[d] + after[d] + wgt_tensor_shape(a)[d] : 1;
            if (d < wgt_tensor_ndim(a) && (before[d] < 0 || after[d] < 0 || len > INT64_MAX)) fail = 1;
            else if (len == 0) zero = 1;
            else n = mul_sat(n, (int64_t)len);
        }
        const int64_t *bf = chance(16) ? NULL : before;
        double v = gen_double();
        trace_list("before", wgt_tensor_ndim(a), bf), trace_list("after", wgt_tensor_ndim(a), after);
        trace(" value %g", v);
        if (fail || zero || fits(n)) result(wgt_pad(a, bf, after, v), NULL);
    } break;
    case 47: { /* gather_rows, index_select, set_rows, one_hot */
        unsigned k = pick(4);
        begin((const char *[]){"wgt_gather_rows", "wgt_index_select", "wgt_set_rows", "wgt_one_hot"}[k], 1);
        wgt_tensor *a = k == 3 ? NULL : targ(), *idx = targ_pref(INTS), *rows = k == 2 ? targ() : NULL;
        int axis = k == 0 ? 0 : gen_axis(), ax = norm_axis(a, axis);
        int64_t classes = chance(4) ? gen_i64() : 1 + (int64_t)pick(8), ni = wgt_tensor_numel(idx);
        ni = ni > 0 ? ni : 0;
        wgt_dtype dt = gen_dtype();
        if (k < 2 && ax >= 0 && !fits(mul_sat(ni, numel_except(a, k == 0, ax)))) break;
        if (k == 3 && classes >= 1 && classes <= INT32_MAX && ni && (classes > OUT_CAP || !fits(mul_sat(ni, classes))))
            break; /* empty indices take any classes: the result is empty */
        trace(" axis %d classes %lld dtype %d", axis, (long long)classes, (int)dt);
        if (k == 2) {
            wgt_status st = wgt_set_rows(a, idx, rows);
            mutations++;
            status_result(st, 1);
            if (st == WGT_OK) updates_note(wgt_tensor_context(a));
            for (int i = 0; st == WGT_OK && i < npool; i++) /* a written from graph inputs is computed from them */
                if (pool[i] == a) masks[i] |= mask_of(idx) | mask_of(rows);
        }
        else if (k == 3) result(wgt_one_hot(idx, classes, dt), NULL);
        else result(k == 0 ? wgt_gather_rows(a, idx) : wgt_index_select(a, axis, idx), NULL);
    } break;
    case 48: {
        begin("wgt_rope", 1);
        wgt_tensor *x = targ_pref(FLOATS), *pos = chance(2) ? NULL : targ_pref(INTS);
        double base = chance(4) ? gen_double() : 10000.0;
        trace(" base %g", base);
        result(wgt_rope(x, pos, base), NULL);
    } break;
    default: { /* 49 */
        begin("wgt_attention", 1);
        t[0] = targ_pref(FLOATS);
        t[1] = chance(2) ? again(t[0]) : targ_pref(FLOATS);
        t[2] = chance(2) ? again(t[1]) : targ_pref(FLOATS);
        int64_t lq = dim_from_end(t[0], 2), out = mul_sat(bcast_numel(t, 3, 2), mul_sat(lq, dim_from_end(t[2], 1)));
        int causal = (int)pick(2);
        double scale = chance(4) ? gen_double() : 0;
        trace(" causal %d scale %g", causal, scale);
        /* An empty result needs no scores [batch, Lq, Lk]; otherwise both must be small. */
        if (out == 0 || (fits(out) && fits(mul_sat(bcast_numel(t, 2, 2), mul_sat(lq, dim_from_end(t[1], 2))))))
            result(wgt_attention(t[0], t[1], t[2], causal, scale), NULL);
    }
    }
}

/* One run of the input's calls; main_fusion: whether the main context fuses, eph_gpu: whether
 * the per-input context is of the main backend (else CPU). */
static void run_input(const uint8_t *data, size_t size, int main_fusion, int eph_gpu) {
    in_p = data;
    in_n = size;
    npool = serial = eph_released = eph_lost = nph = ngraphs = nreads = 0;
    graph_serial = read_serial = 0;
    mutations = 0;
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = (uint8_t)(i * 37 + 11); /* what writes start from */
    if (peer_lost) { /* a device lost by an earlier input is replaced */
        wgt_context_release(ctx_peer);
        ctx_peer = new_context(WGT_BACKEND_AUTO, !main_fused);
        stats_forget(ctx_peer);
        peer_lost = 0;
    }
    if (main_fused != main_fusion) {
        wgt_context *c = ctx_main;
        ctx_main = ctx_peer, ctx_peer = c, main_fused = main_fusion;
    }
    memset(updating, 0, sizeof updating);
    eph_fused = main_fusion;
    ctx_eph = new_context(eph_gpu ? WGT_BACKEND_AUTO : WGT_BACKEND_CPU, eph_fused);
    stats_forget(ctx_eph);
    trace("== main context %s fusion, per-input context %s\n", main_fused ? "with" : "without", eph_gpu ? "of the main backend" : "CPU");
    for (int s = 0; s < MAX_STEPS && in_n > 0; s++) step();
    /* What the pool holds at the end is read once more: statuses and values are logged. */
    for (int i = 0; i < npool; i++) {
        snprintf(call_name, sizeof call_name, "the final read of #%d", ids[i]);
        trace("%s", call_name);
        wgt_clear_error();
        cleared = 1, nins = 0;
        size_t nb = wgt_tensor_nbytes(pool[i]);
        wgt_status st = nb <= BUF ? wgt_tensor_read(pool[i], junk, nb) : WGT_OK;
        status_result(st, 0);
        if (st == WGT_OK && nb <= BUF) log_bytes(junk, nb);
    }
    /* Tensors, graphs and reads are released in an order the input picks. */
    while (npool + ngraphs + nreads > 0) {
        unsigned w = pick(3);
        if (w == 1 && ngraphs) graph_release_at((int)pick(ngraphs));
        else if (w == 2 && nreads) read_release_at((int)pick(nreads));
        else if (npool) {
            int k = (int)pick(npool);
            trace("wgt_release #%d\n", ids[k]);
            wgt_release(pool[k]);
            pool_remove(k);
        } else if (ngraphs) graph_release_at(0);
        else read_release_at(0);
    }
    if (!eph_released) wgt_context_release(ctx_eph);
    ctx_eph = NULL;
    /* Nothing of the input outlives it: no placeholder keeps its name, no buffer is in use. */
    wgt_context *kept[2] = {ctx_main, peer_lost ? NULL : ctx_peer};
    for (int k = 0; k < 2 && kept[k]; k++) {
        snprintf(call_name, sizeof call_name, "the check for leftovers in %s", k ? "peer" : "main");
        wgt_clear_error();
        for (unsigned i = 0; i <= COUNT(input_names); i++) {
            wgt_tensor *p = wgt_graph_input(kept[k], i < COUNT(input_names) ? input_names[i] : long_name(), WGT_F32, 0, NULL);
            if (!p) violation("a graph input outlived every tensor and graph of the input");
            wgt_release(p);
        }
        /* The first sync reports an index check that failed in work recorded earlier (its
         * tensors released or destroyed since: the error is the work's, as on CUDA); the next
         * has nothing left to report. */
        wgt_status sst = wgt_context_sync(kept[k]);
        if (sst == WGT_ERR_INVALID_ARGUMENT) sst = wgt_context_sync(kept[k]);
        if (sst != WGT_OK) violation("the context's sync failed after everything was released");
        wgt_stats st; /* recorded work nobody can read any more holds its operands until it is dropped */
        if (wgt_context_stats(kept[k], &st) != WGT_OK || st.device_bytes_in_use)
            violation("%llu device bytes are in use after everything was released",
                      (unsigned long long)st.device_bytes_in_use);
    }
    /* The main context must still compute after whatever happened. */
    snprintf(call_name, sizeof call_name, "the final check");
    wgt_clear_error();
    float got[4] = {0};
    wgt_tensor *r = wgt_arange(ctx_main, WGT_F32, 0, 4, 1), *s = wgt_add(r, r);
    if (wgt_tensor_read(s, got, sizeof got) != WGT_OK || got[3] != 6) violation("the main context stopped computing");
    wgt_release(r);
    wgt_release(s);
    wgt_clear_error();
}

/* The first byte: bit 0, whether the main context fuses; bits 1-2 zero, run the input a second
 * time with fusion the other way and compare; bits 3-4 zero, a per-input context of the main
 * backend instead of the CPU. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    unsigned mode = size ? data[0] : 1;
    int fusion = mode & 1, twice = (mode >> 1 & 3) == 0, eph_gpu = webgpu && (mode >> 3 & 3) == 0;
    if (size) data++, size--;
    if (!twice) {
        cur_log = -1;
        run_input(data, size, fusion, eph_gpu);
        return 0;
    }
    for (int run = 0; run < 2; run++) {
        cur_log = run, nevents[run] = frozen[run] = 0;
        run_input(data, size, run ? !fusion : fusion, eph_gpu);
    }
    cur_log = -1;
    int n = nevents[0] < nevents[1] ? nevents[0] : nevents[1];
    for (int i = 0; i < n; i++)
        if (events[0][i].h != events[1][i].h || strcmp(events[0][i].name, events[1][i].name)) {
            fprintf(stderr, "fuzz_api: with fusion %s and %s, event %d differs: %s gave %#llx, then %s gave %#llx\n",
                    fusion ? "on" : "off", fusion ? "off" : "on", i, events[0][i].name,
                    (unsigned long long)events[0][i].h, events[1][i].name, (unsigned long long)events[1][i].h);
            abort();
        }
    if (!frozen[0] && !frozen[1] && nevents[0] != nevents[1]) {
        fprintf(stderr, "fuzz_api: with fusion on and off, %d and %d events\n", nevents[0], nevents[1]);
        abort();
    }
    return 0;
}
