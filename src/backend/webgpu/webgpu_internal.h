/*
 * State shared by the WebGPU backend's files: the loaded library, the instance, adapter
 * and device, the command batch being recorded, and the caches.
 */
#ifndef WGT_WEBGPU_INTERNAL_H
#define WGT_WEBGPU_INTERNAL_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "backend/backend.h"
#include "core/error.h"
#include "webgpu_api.h"

/* A device buffer as the core holds it. Kernels bind `size` bytes, never more: the driver
 * buffer may be larger (its pool size class, `alloc`), and a kernel must see exactly the
 * storage it was given. */
struct wgt_buffer {
    WGPUBuffer handle;
    uint64_t size;  /* requested bytes rounded up to 4: the binding size */
    uint64_t alloc; /* bytes of the driver buffer */
    int size_class; /* the pool bucket, or -1 for a buffer the pool never keeps */
    uint32_t bind_refs; /* cached bind groups that reference this buffer (bind_groups.c) */
    /* The batch (submit_serial + 1 while it is recorded) whose commands last used it: a queue
     * write must wait for that batch's submit only while it is still being recorded. */
    uint64_t used_serial;
    struct wgt_buffer *class_prev, *class_next; /* pooled: its size class, newest first */
    struct wgt_buffer *age_prev, *age_next;     /* pooled: all pooled buffers, oldest first */
    struct wgt_buffer *used_prev, *used_next;   /* in use: the pool's buffers handed out */
};

/* A compiled kernel: one pipeline and the bind-group layout it was made with. */
typedef struct wgt_pipeline {
    WGPUComputePipeline pipeline;
    int storage_count; /* storage bindings 0..n-1, then the uniform */
    int written;       /* the last `written` storage bindings are read_write, the others read-only */
    struct wgt_pipeline *next;
    char key[]; /* whole, however long: keys are compared exactly */
} wgt_pipeline;

typedef struct wgt_adapter_desc {
    WGPUAdapter adapter;
    char name[256], vendor[128], architecture[128], description[256];
    uint32_t backend_type, adapter_type, vendor_id, device_id, subgroup_min, subgroup_max;
    uint64_t device_local_bytes; /* sum of the device-local memory heaps; 0 when not reported */
} wgt_adapter_desc;

#define WGT_MAX_ADAPTERS 16
#define WGT_MAX_STORAGE_BINDINGS 5 /* attention with a key count: q, k, v, the count, out */
/* Storage bindings a kernel of the shared layouts may write (the last ones). */
#define WGT_MAX_WRITTEN_BINDINGS 2

/* What a callback we wait for reports (an error scope, a map, a device request). It lives in
 * the backend, not on the waiter's stack: a wait that gives up leaves its callback pending, and
 * Dawn runs it (cancelled) when the instance is released, long after the waiter returned. */
typedef struct wgt_wgpu_result {
    int done;
    uint32_t status, type;
    WGPUDevice device;
    char message[512];
} wgt_wgpu_result;

/* Bounds on the work recorded ahead of the device (in_flight.c, encoder.c): commands and
 * created bind groups per batch, batches and their created bind groups not yet known done. */
#define WGT_WGPU_BATCH_COMMANDS 4096u
#define WGT_WGPU_BATCH_BIND_GROUPS 1024u
#define WGT_WGPU_IN_FLIGHT_SUBMITS 16u
#define WGT_WGPU_IN_FLIGHT_BIND_GROUPS 4096u

/* Large writes from the host go through this many staging buffers of this size (uploads.c);
 * writes of at most WGT_WGPU_UPLOAD_DIRECT_MAX bytes go through Dawn's queue write. */
#define WGT_WGPU_UPLOAD_SLOTS 4u
#define WGT_WGPU_UPLOAD_PIECE (8ull << 20)
#define WGT_WGPU_UPLOAD_DIRECT_MAX (4ull << 20)

/* A subgroup-matrix configuration the adapter offers (the JS API's GPUSubgroupMatrixConfig):
 * component types of the operands and of the result (WGT_WGPU_SGM_* below), and the shape
 * M x N x K of one product. */
enum { WGT_WGPU_SGM_F32 = 1, WGT_WGPU_SGM_F16, WGT_WGPU_SGM_U32, WGT_WGPU_SGM_I32, WGT_WGPU_SGM_U8, WGT_WGPU_SGM_I8 };
typedef struct { uint32_t component, result, M, N, K; } wgt_wgpu_sgm_config;
#define WGT_WGPU_SGM_MAX_CONFIGS 16

typedef struct wgt_webgpu {
    wgt_backend base; /* first, so a wgt_backend* is a wgt_webgpu* */
    const wgpu_procs *p;
    char library_path[PATH_MAX];
    WGPUInstance instance;
    int timed_wait; /* the instance accepts WaitAny with a timeout */
    uint64_t timeout_ns;

    wgt_adapter_desc adapter;
    WGPUDevice device;
    WGPUQueue queue;
    WGPULimitsRoom limits;
    uint32_t features[64];
    size_t feature_count;
    int has_f16, has_subgroups, has_timestamp, has_subgroup_matrix;
    /* f16 matrix products through subgroup matrices (matmul_sgmatrix.c): the adapter's
     * configurations, the one the kernel is built for (-1: none fits), and whether the device
     * has the feature and the kernel passed its self-test; else why not (wgt_context_describe). */
    wgt_wgpu_sgm_config sgm_configs[WGT_WGPU_SGM_MAX_CONFIGS];
    uint32_t sgm_config_count;
    int sgm_chosen;
    int sgm_usable;
    int sgm_emulated; /* WGT_SGMATRIX_EMULATE=1: the kernel in plain WGSL, for tests */
    int sgm_old_builtins; /* the load and store spelled as older Tint takes them */
    uint32_t sgm_tile[5];  /* WGT_SGMATRIX_TILE (BM, BN, BK, WM, WN), zeros where unset */
    char sgm_note[256];
    /* f16 attention through subgroup matrices (attention_sgmatrix.c): whether it was asked
     * for (WGT_SGMATRIX_ATTENTION=1) and its self-test passed, else why not
     * (wgt_context_describe). */
    int sga_wanted;
    int sga_usable;
    char sga_note[200];
    /* Compute units the matrix product balances its tiles over and attention splits its keys
     * for (0: unknown: tiles go out whole, attention assumes SPLIT_ASSUMED_UNITS), and where
     * the count came from: "given" (the option or WGT_COMPUTE_UNITS) or "known adapter". */
    uint32_t compute_units;
    const char *compute_units_from;
    /* WGT_ATTENTION_CHUNKS: key chunks every attention the split kernel fits takes
     * (attention_split.c); 0: its rule decides. */
    uint64_t attention_chunks;

    /* The device and everything made from it went back to the driver while tensors still
     * hold the backend (wgt_context_release, see device.c): buffers are handles no more. */
    int device_released;
    /* The device went back on a thread of its own (teardown.c); both guarded by its lock. */
    int teardown_running;
    struct teardown *teardown;

    /* Written by callbacks that may run on Dawn's threads. */
    atomic_int lost;
    atomic_int shutting_down;
    pthread_mutex_t message_lock;
    char lost_message[512];
    char uncaptured[512];
    int has_uncaptured;

    /* Set when WaitAny itself failed: the instance cannot wait any more, so every later call
     * that needs the device fails with this status and message. */
    wgt_status stuck;
    char stuck_message[512];
    /* Set when a wait passed its deadline: the work may still be running (a slow device) or
     * never finish (a hung one). late_done is the queue's work-done future registered then;
     * once it completes, the late work is over and the context is usable again (device.c). */
    int late;
    WGPUFuture late_done;
    char late_message[384];
    /* Kernels compiled and not yet run (encoder.c). Drivers may compile a kernel for real when
     * it first runs (lavapipe: seconds, up to a minute under load), inside GPU work we time:
     * so a first run goes to the queue in a batch of its own, and waits for work let those
     * batches finish (first_runs_done, within WGT_WGPU_FIRST_RUN_ALLOWANCE_MS) before their
     * own deadline starts. The list is short: a kernel that falls off it just runs timed. */
    WGPUComputePipeline cold[16];
    uint32_t cold_count;
    int first_runs_pending;
    WGPUFuture first_runs_done;
    wgt_wgpu_result scope_results[2], device_result;

    /* The batch being recorded: one encoder and one compute pass until a submit, which comes
     * at the latest after WGT_WGPU_BATCH_COMMANDS commands or WGT_WGPU_BATCH_BIND_GROUPS
     * bind groups created for it (encoder.c). */
    WGPUCommandEncoder encoder;
    WGPUComputePassEncoder pass;
    uint32_t batch_commands, batch_groups;
    uint64_t bind_groups_created; /* for wgt_stats: every bind group a dispatch made */

    /* Batches submitted and not yet retired, oldest at in_flight_head (in_flight.c). */
    struct {
        WGPUFuture done;
        uint32_t groups; /* bind groups created for the batch */
    } in_flight[WGT_WGPU_IN_FLIGHT_SUBMITS];
    uint32_t in_flight_head, in_flight_count, in_flight_groups;
    uint64_t dispatches; /* recorded since the context began (wgt_stats) */
    uint64_t passes;     /* compute passes begun since the context began (wgt_stats) */

    /* Uniform ring: op parameters are staged here and uploaded with one write per submit. */
    WGPUBuffer ring;
    uint8_t *ring_host;
    uint32_t ring_size, ring_used, ring_align;

    /* Upload ring: small host data for buffers the batch being recorded already uses is
     * staged here, written with one queue write per submit (before the batch runs), and
     * copied to its buffer by a command recorded in order, so the batch need not end. */
    WGPUBuffer upload;
    uint8_t *upload_host;
    uint32_t upload_size, upload_used;

    /* Staging buffers of large writes from the host, kept mapped between writes (uploads.c). */
    struct wgt_upload_slot {
        WGPUBuffer buffer;  /* NULL until first needed */
        int mapping;        /* a mapping was asked for and not yet waited on */
        uint32_t generation; /* tells a cancelled mapping's late callback from the current one's */
        int callback_ran;
        uint32_t map_status;
        WGPUFuture future;
    } upload_slots[WGT_WGPU_UPLOAD_SLOTS];
    uint32_t upload_next;

    /* The shared layouts, by storage binding count and how many of them (the last) are written. */
    WGPUBindGroupLayout layouts[WGT_MAX_STORAGE_BINDINGS + 1][WGT_MAX_WRITTEN_BINDINGS + 1];
    WGPUPipelineLayout pipeline_layouts[WGT_MAX_STORAGE_BINDINGS + 1][WGT_MAX_WRITTEN_BINDINGS + 1];
    wgt_pipeline *pipelines;

    /* ---- per-op costs: buffer pools, caches, batch serials, read requests ---- */
    struct wgt_wgpu_pool *storage_pool; /* released tensor buffers (pool.c) */
    /* Bytes the pools may hold in all (pool.c); 0: no limit of our own. Running the driver
     * itself out of memory is not a clean failure: Dawn turns an allocation that fails inside
     * its own work (staging for queue writes, say) into a lost device. */
    uint64_t memory_budget;
    struct wgt_wgpu_pool *read_pool;    /* MAP_READ staging buffers of read requests */
    struct wgt_wgpu_pool *context_pool; /* the context's own buffers: kept nothing, not in stats */
    struct wgt_wgpu_bind_cache *bind_cache; /* bind_groups.c */
    wgt_pipeline **pipeline_slots; /* open-addressed by key hash (encoder.c) */
    uint32_t pipeline_capacity, pipeline_count;
    /* The pipeline set in the open compute pass, so repeats are skipped: code that sets one on
     * w->pass itself must record it here. */
    WGPUComputePipeline pass_pipeline;
    uint64_t submit_serial; /* batches submitted: the batch being recorded goes out as + 1 */
    uint64_t failed_serial; /* the last batch whose command buffer could not be finished */
    wgt_pending_read *zombie_reads; /* released while Dawn may still call back (read_requests.c) */

    struct wgt_wgpu_fused_cache *fused_cache; /* fused kernels' pipelines and layouts (fused.c) */
    struct wgt_user_pipeline *user_pipelines; /* callers' compiled kernels (user_kernel.c) */
    /* Non-NULL while GPU timing is on: each compute pass begun writes timestamps (timestamps.c). */
    struct wgt_wgpu_timestamps *timestamps;
} wgt_webgpu;

/* driver_text.c: copies a string the driver handed us (not necessarily NUL-terminated) into
 * dst as one line: whitespace runs become one space, Dawn's source locations ("at Function
 * (/path/File.cpp:914)") are dropped, and a cut to size ends in "...". */
void wgt_wgpu_copy_string(char *dst, size_t size, WGPUStringView v);

/* loader.c */
const wgpu_procs *wgt_wgpu_load(const char *explicit_path, char *loaded_path, size_t loaded_size);
/* Whether a wait for the device may block now: always natively; in the WebAssembly build only
 * inside a call that came through WebAssembly.promising (web/c/loader_js.c). */
int wgt_wgpu_can_wait(void);

/* The adapter's subgroup-matrix configurations, at most max; 0 where the webgpu.h in use
 * cannot say (the native loader: the build we load reports them through a chained struct
 * whose sType we have not verified, and offers no shader-f16 on the GPUs that have them). */
uint32_t wgt_wgpu_subgroup_matrix_configs(const wgpu_procs *p, WGPUAdapter adapter, wgt_wgpu_sgm_config *out,
                                          uint32_t max);

/* adapters.c */
WGPUInstance wgt_wgpu_create_instance(const wgpu_procs *p, int *timed_wait);
/* Fills up to max adapters, best first (the default high-performance request leads). */
int wgt_wgpu_enumerate_adapters(const wgpu_procs *p, WGPUInstance instance, int timed_wait,
                                wgt_adapter_desc *out, int max);
const char *wgt_wgpu_backend_name(uint32_t backend_type);
const char *wgt_wgpu_adapter_type_name(uint32_t adapter_type);
/* Compute units of a known adapter (NVIDIA's multiprocessors), 0 where unknown. */
uint32_t wgt_wgpu_known_compute_units(const wgt_adapter_desc *d);

/* device.c */
/* Blocks until future f completes (its callback has run), within the context's timeout. A wait
 * that passes its deadline leaves the context late (see wgt_webgpu.late); one whose WaitAny
 * fails makes it stuck. */
wgt_status wgt_wgpu_wait(wgt_webgpu *w, WGPUFuture f, const char *what);
/* The same for a future that completes with GPU work (a sync, a read's mapping): batches
 * holding kernels' first runs are waited for first, within the first-run allowance, and the
 * deadline covers the rest. */
#define WGT_WGPU_FIRST_RUN_ALLOWANCE_MS 600000u
wgt_status wgt_wgpu_wait_work(wgt_webgpu *w, WGPUFuture f, const char *what);
/* While late: waits (block: up to the context's timeout; else not at all) for the late work
 * and clears the state once it is done. WGT_ERR_TIMEOUT with a message while it is not. */
wgt_status wgt_wgpu_settle_late(wgt_webgpu *w, int block);
/* Whether late work is still running (a poll that never blocks; clears the state once done). */
int wgt_wgpu_late_pending(wgt_webgpu *w);
/* Error scopes around object creation: push before, pop after; pop reports what happened. */
void wgt_wgpu_push_scope(wgt_webgpu *w);
wgt_status wgt_wgpu_pop_scope(wgt_webgpu *w, const char *what);
wgt_status wgt_wgpu_status(wgt_webgpu *w);

/* teardown.c: the backend table's release_device and destroy. Giving the device back waits
 * for its work in flight; after a timeout that work may never end, so the device then goes
 * back on a thread of its own and the caller does not wait. */
void wgt_wgpu_release_device(wgt_backend *be);
void wgt_wgpu_destroy(wgt_backend *be);

/* buffers.c */
wgt_status wgt_wgpu_buffer_create(wgt_backend *be, size_t nbytes, int zero, wgt_buffer **out);
void wgt_wgpu_buffer_destroy(wgt_backend *be, wgt_buffer *buf);
wgt_status wgt_wgpu_buffer_write(wgt_backend *be, wgt_buffer *buf, size_t offset, const void *src, size_t n);
wgt_status wgt_wgpu_buffer_read(wgt_backend *be, wgt_buffer *buf, size_t offset, void *dst, size_t n);
void *wgt_wgpu_buffer_export(wgt_backend *be, wgt_buffer *buf);
wgt_status wgt_wgpu_context_memory_create(wgt_backend *be, size_t nbytes, wgt_buffer **buffer, void **host);
void wgt_wgpu_context_memory_destroy(wgt_backend *be, wgt_buffer *buffer, void *host);
wgt_status wgt_wgpu_buffers_init(wgt_webgpu *w);
/* Releases the pools: before the device goes. */
void wgt_wgpu_buffers_shutdown(wgt_webgpu *w);
/* Gives the pools' driver buffers back (wgt_wgpu_pool_detach) before the device goes early. */
void wgt_wgpu_buffers_detach(wgt_webgpu *w);

/* encoder.c */
wgt_status wgt_wgpu_encoder_init(wgt_webgpu *w);
void wgt_wgpu_encoder_shutdown(wgt_webgpu *w);
/* A pipeline just compiled: its first dispatch will go to the queue in a batch of its own. */
void wgt_wgpu_pipeline_created(wgt_webgpu *w, WGPUComputePipeline pipeline);
/* Releases every cached pipeline of the table (encoder.c) or of the fused cache (fused.c). */
void wgt_wgpu_pipelines_release(wgt_webgpu *w);
void wgt_wgpu_fused_pipelines_release(wgt_webgpu *w);
uint32_t wgt_wgpu_fused_pipeline_count(const wgt_webgpu *w);
/* Pipelines kept per cache before it starts over; see wgt_wgpu_pipeline_caches_bound. */
#define WGT_WGPU_PIPELINE_CACHE_MAX 1024
/* Keeps the pipeline caches bounded: each one over WGT_WGPU_PIPELINE_CACHE_MAX (or every one,
 * with drop_all) is emptied. Call only between ops, when no caller holds a pipeline. */
void wgt_wgpu_pipeline_caches_bound(wgt_webgpu *w, int drop_all);
/* Records the resolve of queries [first, first + count) of set into dst at offset. */
wgt_status wgt_wgpu_resolve_queries(wgt_webgpu *w, WGPUQuerySet set, uint32_t first, uint32_t count, WGPUBuffer dst,
                                    uint64_t offset);

/* timestamps.c: opt-in GPU timing (the backend entries gpu_timing and gpu_time) */
wgt_status wgt_wgpu_gpu_timing(wgt_backend *be, int on);
wgt_status wgt_wgpu_gpu_time(wgt_backend *be, wgt_gpu_time *out);
/* While timing is on: the timestamp writes for the compute pass about to begin (filled into
 * writes), or NULL when the query set is full until the next read. */
const WGPUPassTimestampWrites *wgt_wgpu_timestamps_for_pass(wgt_webgpu *w, WGPUPassTimestampWrites *writes);
void wgt_wgpu_timestamps_shutdown(wgt_webgpu *w);
/* Per-dispatch timing (a profile): on, the label of the pass just begun, room in the set. */
int wgt_wgpu_timing_per_dispatch(const wgt_webgpu *w);
void wgt_wgpu_timestamps_label(wgt_webgpu *w, const char *label);
wgt_status wgt_wgpu_timestamps_make_room(wgt_webgpu *w);
int wgt_wgpu_gpu_kernel_times(wgt_backend *be, wgt_gpu_kernel_time *out, int max);
/* Finds or compiles the pipeline for key; wgsl is only built when the key is new. Storage
 * bindings 0..storage_count-1 of its kernel: the last one written, the others read-only. */
wgt_status wgt_wgpu_pipeline(wgt_webgpu *w, const char *key, int storage_count,
                             char *(*build_wgsl)(wgt_webgpu *w, const void *arg), const void *arg,
                             wgt_pipeline **out);
/* The same for a kernel that writes its last `written` storage bindings (1 or 2). */
wgt_status wgt_wgpu_pipeline_writing(wgt_webgpu *w, const char *key, int storage_count, int written,
                                     char *(*build_wgsl)(wgt_webgpu *w, const void *arg), const void *arg,
                                     wgt_pipeline **out);
/* Records one dispatch over `invocations` threads of workgroup_size each; params are
 * copied into the uniform ring. buffers[] follow the pipeline's storage bindings. */
wgt_status wgt_wgpu_dispatch(wgt_webgpu *w, wgt_pipeline *pl, wgt_buffer *const *buffers, const void *params,
                             uint32_t params_size, uint64_t workgroups);
wgt_status wgt_wgpu_copy_buffer(wgt_webgpu *w, WGPUBuffer src, uint64_t src_off, WGPUBuffer dst, uint64_t dst_off,
                                uint64_t size);
wgt_status wgt_wgpu_submit(wgt_webgpu *w);

/* in_flight.c: the window of submitted batches. add notes the batch just submitted (never
 * blocks); room, called before a batch begins, retires finished batches and waits for the
 * oldest while the window is over its bounds. */
void wgt_wgpu_in_flight_add(wgt_webgpu *w, uint32_t groups);
wgt_status wgt_wgpu_in_flight_room(wgt_webgpu *w);
/* Stages n bytes for dst through the upload ring and records the copy in the current batch;
 * *done = 0 (and nothing happens) when there is no batch or no room: write it directly. */
wgt_status wgt_wgpu_upload_in_batch(wgt_webgpu *w, wgt_buffer *dst, uint64_t offset, const void *src, uint32_t n,
                                    int *done);

/* shaders.c */
/* A shader module of WGSL text (errors go to the error scope the caller pushed). */
WGPUShaderModule wgt_wgpu_shader_module(wgt_webgpu *w, const char *wgsl, const char *label);
/* The embedded source of src/backend/webgpu/wgsl/<name>.wgsl, or NULL. */
const char *wgt_wgsl_source(const char *name);
/* Copies template, replacing each {{KEY}} by its value from the NULL-terminated pairs.
 * Returns malloc'd text or NULL. */
char *wgt_wgsl_expand(const char *template_text, const char *const *pairs);
/* Growing text for kernels generated statement by statement: appends printf-style; a failed
 * allocation sticks (failed set, nothing more appended) for the caller to report once. */
typedef struct wgt_wgsl_text {
    char *s;
    size_t len, cap;
    int failed;
} wgt_wgsl_text;
void wgt_wgsl_add(wgt_wgsl_text *t, const char *fmt, ...) WGT_PRINTF(2, 3);

/* elementwise.c: helper pieces, and the shared elementwise kernel runner */
/* A piece of WGSL (functions, module variables) and the pieces it calls. A kernel's module
 * holds each piece once, its dependencies before it; a piece without text only gathers others. */
#define WGT_WGSL_PIECE_DEPS 3
typedef struct wgt_wgsl_piece {
    const char *text;
    const struct wgt_wgsl_piece *deps[WGT_WGSL_PIECE_DEPS];
} wgt_wgsl_piece;
#define WGT_WGSL_MAX_PIECES 48
typedef struct wgt_wgsl_pieces {
    int count, overflow;
    const wgt_wgsl_piece *list[WGT_WGSL_MAX_PIECES];
} wgt_wgsl_pieces;
/* Adds piece (NULL: nothing) after those of its dependencies not yet in set. */
void wgt_wgsl_pieces_add(wgt_wgsl_pieces *set, const wgt_wgsl_piece *piece);
/* The pieces' text in order, malloc'd; NULL without memory or when set overflowed. set may be NULL. */
char *wgt_wgsl_pieces_text(const wgt_wgsl_pieces *set);
/* wgt_nan(), wgt_inf(), wgt_is_nan(v), wgt_is_inf(v), wgt_sign_bit(v), wgt_with_sign(mag, negative). */
extern const wgt_wgsl_piece wgt_wgsl_float_bits;
/* elementwise.c: wgt_unpack_f16(w), the two f16 of word w as f32, a NaN keeping its sign. */
extern const wgt_wgsl_piece wgt_wgsl_unpack_f16;
/* wgt_is_zero(v), wgt_is_subnormal(v) on the bits, wgt_subnormal_scaled(v) = v 2^24 exactly, and
 * wgt_scale_up64(v) = v 2^64 exactly for |v| < 2^64 (subnormals included). */
extern const wgt_wgsl_piece wgt_wgsl_subnormal;
/* trig.c: wgt_sin(x) and wgt_cos(x), reduced exactly for every f32. */
extern const wgt_wgsl_piece wgt_wgsl_sin_cos;
/* quotient.c: wgt_div(a, b) and wgt_sqrt(x) to about half an ulp, not the builtins' 2.5 or more
 * (operands and results within about 2^-90 .. 2^100), wgt_div_2_plus(f) = f / (2 + f) as an
 * unevaluated sum hi + lo, and wgt_hi12(v), v's top 12 bits. */
extern const wgt_wgsl_piece wgt_wgsl_quotient;
/* binary.c: wgt_fmod(x, y), exact, and wgt_mod. */
extern const wgt_wgsl_piece wgt_wgsl_mod_f32;
/* math2.c: the expression (over x, or x and y) of an op the array API added, on operands of
 * type d, and its helper piece; NULL where the op does not take d. */
const char *wgt_wgpu_math2_unary(wgt_unary_op op, wgt_dtype d, const wgt_wgsl_piece **helpers);
const char *wgt_wgpu_math2_binary(wgt_binary_op op, wgt_dtype d, const wgt_wgsl_piece **helpers);

typedef struct wgt_wgpu_elementwise_spec {
    const char *op_name; /* part of the pipeline cache key */
    /* WGSL expression over x, y, z (the inputs in their compute types: f32 for f16) giving
     * the output's compute type; may read params.scalar_bits. */
    const char *expr;
    int nin;
    wgt_dtype in_dtype[3];
    wgt_dtype out_dtype;
} wgt_wgpu_elementwise_spec;
/* out (contiguous) = expr over inputs broadcast to out's shape; scalar_bits (4 words, or
 * NULL) become params.scalar_bits. */
wgt_status wgt_wgpu_elementwise(wgt_backend *be, const wgt_wgpu_elementwise_spec *spec, const wgt_operand *out,
                                const wgt_operand *const *in, const uint32_t *scalar_bits);
/* As wgt_wgpu_elementwise, with WGSL functions (placed before expr) that expr may call;
 * spec->op_name must tell apart kernels whose helpers differ. */
wgt_status wgt_wgpu_elementwise_with(wgt_backend *be, const wgt_wgpu_elementwise_spec *spec,
                                     const wgt_wgsl_pieces *helpers, const wgt_operand *out,
                                     const wgt_operand *const *in, const uint32_t *scalar_bits);
/* WGSL types of a dtype's values in registers (f32 for f16) and in storage (u32 for f16 pairs). */
const char *wgt_wgpu_compute_type(wgt_dtype d);
const char *wgt_wgpu_storage_type(wgt_dtype d);
/* Whether `in`, seen at shape, walks its storage in row-major order (index = offset + i). */
int wgt_wgpu_is_dense(const wgt_operand *in, int ndim, const int64_t *shape);
/* Whether every element of the shape reads the same element of in (a broadcast scalar): the
 * kernels then skip the per-element index arithmetic, which costs integer divisions. */
int wgt_wgpu_is_fixed(const wgt_operand *in, int ndim, const int64_t *shape);
/* reduce.c: reductions (wgsl/reduce.wgsl) and cumsum (the scan kernel's sum) */
wgt_status wgt_wgpu_reduce(wgt_backend *be, wgt_reduce_op op, const wgt_operand *out, const wgt_operand *in,
                           int reduce_ndim, double param);
wgt_status wgt_wgpu_cumsum(wgt_backend *be, const wgt_operand *out, const wgt_operand *in, int axis);
/* scan.c: cumsum, cumprod, cummax, cummin and their positions (wgsl/scan.wgsl) */
wgt_status wgt_wgpu_scan(wgt_backend *be, wgt_scan_op op, const wgt_operand *out, const wgt_operand *in, int axis);
/* random.c: Philox4x32-10 values (backend.h's random entry) */
wgt_status wgt_wgpu_random(wgt_backend *be, const wgt_operand *out, const wgt_operand *key,
                           const wgt_random_params *p);
/* sort.c: bitonic row sorts (wgsl/sort_*.wgsl) and binary searches (wgsl/searchsorted.wgsl) */
wgt_status wgt_wgpu_sort_rows(wgt_backend *be, const wgt_operand *values, const wgt_operand *indices,
                              const wgt_operand *in, int descending);
wgt_status wgt_wgpu_searchsorted(wgt_backend *be, const wgt_operand *out, const wgt_operand *sorted,
                                 const wgt_operand *values, int right);
wgt_status wgt_wgpu_copy(wgt_backend *be, const wgt_operand *dst, const wgt_operand *src);
/* matmul.c: tiled and matrix-vector matmul kernels (wgsl/matmul.wgsl) */
wgt_status wgt_wgpu_matmul(wgt_backend *be, const wgt_operand *out, const wgt_operand *a, const wgt_operand *b);
/* matmul_int.c: i32, u32, i64 and u64 products, wrapping (wgt_wgpu_matmul's integer case) */
wgt_status wgt_wgpu_matmul_int(wgt_webgpu *w, const wgt_operand *out, const wgt_operand *a, const wgt_operand *b);
/* matmul_sgmatrix.c: f16 products through subgroup matrices. choose reads the adapter's
 * configurations before the device is made and says whether to ask for the feature (1), not
 * (0), or that a WGT_SGMATRIX* variable is malformed (-1, the error set); probe
 * runs the kernel once on the new device (a bounded wait, exact values checked) and leaves
 * sgm_usable set only if it passed; takes says whether wgt_wgpu_matmul should hand it this
 * product, and run records it. */
int wgt_wgpu_sgmatrix_choose(wgt_webgpu *w);
void wgt_wgpu_sgmatrix_probe(wgt_webgpu *w);
int wgt_wgpu_sgmatrix_takes(const wgt_webgpu *w, const wgt_operand *out, const wgt_operand *a, const wgt_operand *b);
wgt_status wgt_wgpu_matmul_sgmatrix(wgt_webgpu *w, const wgt_operand *out, const wgt_operand *a, const wgt_operand *b);
/* conv.c: the general convolution as an implicit GEMM */
wgt_status wgt_wgpu_conv(wgt_backend *be, const wgt_operand *out, const wgt_operand *x, const wgt_operand *w,
                         const int64_t *params);
/* rope.c: rotary position embedding of a decoding step's heads (wgsl/rope.wgsl) */
wgt_status wgt_wgpu_rope(wgt_backend *be, const wgt_operand *out, const wgt_operand *x, const wgt_operand *positions,
                         const wgt_operand *freqs);
/* attention.c: fused scaled dot-product attention (wgsl/attention.wgsl) */
wgt_status wgt_wgpu_attention(wgt_backend *be, const wgt_operand *out, const wgt_operand *q, const wgt_operand *k,
                              const wgt_operand *v, const wgt_operand *count, int causal, double scale);
int wgt_wgpu_attention_fits(wgt_backend *be, wgt_dtype dtype, int64_t d, int64_t dv);
int wgt_wgpu_attention_pays(wgt_backend *be, wgt_dtype dtype, uint64_t batch, int64_t lq, int64_t lk, int causal);
/* Where q, k and v are read (the tail of both attention kernels' parameters): offsets, row
 * and head-dimension strides, and the batch dimensions' shape and strides (0 where broadcast).
 * views_of fills it for out [batch..., Lq, DV] and returns the batch size. */
typedef struct {
    uint32_t q_offset, k_offset, v_offset, batch_ndim;
    int32_t q_sr, q_sd, k_sr, k_sd;
    int32_t v_sr, v_sd, pad0, pad1;
    uint32_t batch_shape[8];
    int32_t q_batch[8];
    int32_t k_batch[8];
    int32_t v_batch[8];
} wgt_wgpu_attention_views;
uint64_t wgt_wgpu_attention_views_of(const wgt_operand *out, const wgt_operand *q, const wgt_operand *k,
                                     const wgt_operand *v, wgt_wgpu_attention_views *views);
extern const char wgt_wgpu_attention_views_wgsl[]; /* its fields in a WGSL struct, for {{VIEWS}} */
extern const char wgt_wgpu_attention_bases_wgsl[]; /* fn view_bases(bi) over them, for {{BASES}} */
float wgt_wgpu_attention_scale_log2(double scale);  /* scale * log2(e) in f32 */
/* The key count's binding (3, before the output) and fn key_count(): the count clamped to
 * [0, Lk], an i32 below 0 read as 0 (count: its dtype, WGT_F32 where the op has none: ""). */
const char *wgt_wgpu_attention_count_wgsl(wgt_dtype count);
/* What the split-key kernels (attention_split.c) share with it: load_<name>(i, n) for one
 * operand, and whether an operand can be read in 16-byte units along its head dimension. */
void wgt_wgpu_attention_load_fn(wgt_wgsl_text *t, const char *name, wgt_dtype dtype, int vec);
int wgt_wgpu_attention_unit_reads(const wgt_operand *x);
/* attention_split.c: attention with the keys split over workgroups, then combined. Returns 0
 * where its rule leaves the problem to the one-pass kernel; else 1 with *st the status. */
int wgt_wgpu_attention_split(wgt_webgpu *w, const wgt_operand *out, const wgt_operand *q, const wgt_operand *k,
                             const wgt_operand *v, const wgt_operand *count, int causal, double scale, wgt_status *st);
/* Reads WGT_ATTENTION_CHUNKS when a device is made: 0, or -1 with the error set. */
int wgt_wgpu_attention_split_env(wgt_webgpu *w);
/* rows.c: softmax, log_softmax, layer_norm, rms_norm over the last dimension (wgsl/rows.wgsl) */
wgt_status wgt_wgpu_rows(wgt_backend *be, wgt_rows_op op, const wgt_operand *out, const wgt_operand *in,
                         const wgt_operand *weight, const wgt_operand *bias, double eps);
/* unary.c: unary ops, logical_not and casts, on the elementwise runner */
wgt_status wgt_wgpu_unary(wgt_backend *be, wgt_unary_op op, const wgt_operand *out, const wgt_operand *a,
                          const double *params);
wgt_status wgt_wgpu_cast(wgt_backend *be, const wgt_operand *out, const wgt_operand *a);
/* The ops as WGSL, for their own kernels and fused ones alike: an expression over x (y, z),
 * the arguments in their compute types, giving out's compute type, written to expr; the
 * helper pieces it calls are added to *helpers. WGT_ERR_INTERNAL (with a message) when the
 * op does not take those types or does not give out. */
/* params: two WGSL expressions of the u32 words the op's parameters are read from. */
wgt_status wgt_wgpu_unary_expr(wgt_unary_op op, wgt_dtype in, wgt_dtype out, const char *const params[2], char *expr,
                               size_t size, wgt_wgsl_pieces *helpers);
/* Whether op's expression on `in` reads its parameters at all. */
int wgt_wgpu_unary_reads_params(wgt_unary_op op, wgt_dtype in);
/* The words of the op's two parameters for input type `in` (as bits of its compute type). */
void wgt_wgpu_unary_param_bits(wgt_dtype in, const double *params, uint32_t bits[2]);
/* in == out is the identity (the ops' own same-type cast is a bit copy). */
wgt_status wgt_wgpu_cast_expr(wgt_dtype in, wgt_dtype out, char *expr, size_t size, wgt_wgsl_pieces *helpers);
/* binary.c: binary ops, comparisons, logical ops and where */
wgt_status wgt_wgpu_binary(wgt_backend *be, wgt_binary_op op, const wgt_operand *out, const wgt_operand *a,
                           const wgt_operand *b);
wgt_status wgt_wgpu_where(wgt_backend *be, const wgt_operand *out, const wgt_operand *cond, const wgt_operand *a,
                          const wgt_operand *b);
wgt_status wgt_wgpu_binary_expr(wgt_binary_op op, wgt_dtype a, wgt_dtype b, wgt_dtype out, char *expr, size_t size,
                                wgt_wgsl_pieces *helpers);
/* x is the condition, y and z the values; it calls no helpers. */
wgt_status wgt_wgpu_where_expr(wgt_dtype cond, wgt_dtype a, wgt_dtype b, wgt_dtype out, char *expr, size_t size);
/* indexing.c: row gather, row scatter, index checks and the narrowing of 64-bit indices
 * (wgsl/gather_rows.wgsl, wgsl/set_rows.wgsl, wgsl/set_rows_pick.wgsl, wgsl/index_check.wgsl,
 * wgsl/index_narrow.wgsl) */
wgt_status wgt_wgpu_gather_rows(wgt_backend *be, const wgt_operand *out, const wgt_operand *table,
                                const wgt_operand *indices);
wgt_status wgt_wgpu_set_rows(wgt_backend *be, const wgt_operand *dst, const wgt_operand *indices,
                             const wgt_operand *rows);
wgt_status wgt_wgpu_index_check(wgt_backend *be, const wgt_operand *indices, int64_t bound,
                                const wgt_operand *record);
wgt_status wgt_wgpu_index_narrow(wgt_backend *be, const wgt_operand *out, const wgt_operand *in, int64_t bound);
/* scatter.c: scatter-add of f32 rows by a counting sort of the indices
 * (wgsl/scatter_add_index.wgsl, wgsl/scatter_add_sum.wgsl) */
wgt_status wgt_wgpu_scatter_add_rows(wgt_backend *be, const wgt_operand *dst, const wgt_operand *indices,
                                     const wgt_operand *rows);
/* shape.c: write_box (wgsl/write_box.wgsl; concat, stack) and pad (wgsl/pad.wgsl) */
wgt_status wgt_wgpu_write_box(wgt_backend *be, const wgt_operand *dst, const int64_t *box_start,
                              const wgt_operand *src);
/* quant.c: the block types (wgsl/quant_*.wgsl) */
wgt_status wgt_wgpu_quantize(wgt_backend *be, const wgt_operand *out, const wgt_operand *in);
wgt_status wgt_wgpu_dequantize(wgt_backend *be, const wgt_operand *out, const wgt_operand *table,
                               const wgt_operand *indices);
wgt_status wgt_wgpu_matmul_quantized(wgt_backend *be, const wgt_operand *out, const wgt_operand *x,
                                     const wgt_operand *w, const wgt_operand *addend, const wgt_quant_norm *norm,
                                     int int8);
/* wgsl/quant_product.wgsl (the products' parameters and bindings) with x an array of x_type
 * and w one of w_type, with an addend binding or not; malloc'd, or NULL. */
char *wgt_wgpu_quant_product(const char *x_type, const char *w_type, int addend);
/* quant_lanes.c: x @ w^T for 1 to 3 rows of f32 x (the caller's matvec case); int8: x
 * quantized to q8, normalized first when norm is given (the float path takes no norm);
 * addend as for matmul_quantized (backend.h). params: quant.c's, whose layout
 * quant_product.wgsl declares. */
wgt_status wgt_wgpu_quant_matvec_lanes(wgt_webgpu *w, const wgt_operand *out, const wgt_operand *x,
                                       const wgt_operand *wt, const wgt_operand *addend, const wgt_quant_norm *norm,
                                       int int8, const void *params, uint32_t params_size);
/* x [M, K] quantized to q8 blocks (three 16-byte words each: values, then d_x and their sum)
 * into a new buffer *xq, for the integer kernels; with norm (1 to 3 rows), rms_norm(x) first
 * (quant_norm.wgsl), and with f32_out that as f32 [M, K] instead of blocks. */
wgt_status wgt_wgpu_quant_x8(wgt_webgpu *w, const wgt_operand *x, uint32_t row_blocks, const wgt_quant_norm *norm,
                             int f32_out, wgt_buffer **xq);
/* The u32 word of q's buffer where the blocks' scales start (the device layout,
 * core/block_layout.c). */
uint32_t wgt_wgpu_quant_scales(const wgt_operand *q);
wgt_status wgt_wgpu_pad(wgt_backend *be, const wgt_operand *out, const wgt_operand *in, const int64_t *before,
                        uint64_t value_bits);
/* pad of u32 words with the pad value's words lo and hi: with pairs, odd output words (the
 * high words of 64-bit elements seen as word pairs) take hi and even ones lo. */
wgt_status wgt_wgpu_pad_words(wgt_backend *be, const wgt_operand *out, const wgt_operand *in, const int64_t *before,
                              uint32_t lo, uint32_t hi, int pairs);
/* int64.c: the ops above on i64 and u64 operands (moved as word pairs), and their casts. */
wgt_status wgt_wgpu_write_box64(wgt_backend *be, const wgt_operand *dst, const int64_t *box_start,
                                const wgt_operand *src);
wgt_status wgt_wgpu_pad64(wgt_backend *be, const wgt_operand *out, const wgt_operand *in, const int64_t *before,
                          uint64_t value_bits);
wgt_status wgt_wgpu_where64(wgt_backend *be, const wgt_operand *out, const wgt_operand *cond, const wgt_operand *a,
                            const wgt_operand *b);
wgt_status wgt_wgpu_gather_rows64(wgt_backend *be, const wgt_operand *out, const wgt_operand *table,
                                  const wgt_operand *indices);
wgt_status wgt_wgpu_set_rows64(wgt_backend *be, const wgt_operand *dst, const wgt_operand *indices,
                               const wgt_operand *rows);
wgt_status wgt_wgpu_cast64(wgt_backend *be, const wgt_operand *out, const wgt_operand *a);
/* int64.c: sum and prod of i64/u64 and their running sum, wrapping modulo 2^64. */
wgt_status wgt_wgpu_reduce64(wgt_backend *be, wgt_reduce_op op, const wgt_operand *out, const wgt_operand *in,
                             int reduce_ndim);
wgt_status wgt_wgpu_cumsum64(wgt_backend *be, const wgt_operand *out, const wgt_operand *in, int axis);
/* int64.c: add, sub, mul, maximum, minimum, comparisons and bitwise ops of i64/u64, and neg,
 * abs and bitwise_not (a alone). */
wgt_status wgt_wgpu_binary64(wgt_backend *be, wgt_binary_op op, const wgt_operand *out, const wgt_operand *a,
                             const wgt_operand *b);
wgt_status wgt_wgpu_unary64(wgt_backend *be, wgt_unary_op op, const wgt_operand *out, const wgt_operand *a);

/* ---- buffer pools, bind-group cache, read requests -------------------------------------- */
/* pool.c: driver buffers bucketed by size class (powers of two in four steps, so a buffer is
 * at most 25% larger than asked for), reused newest first, the oldest released beyond a
 * byte limit. One pool per buffer usage. */
typedef struct wgt_wgpu_pool wgt_wgpu_pool;
/* counts_live: the pool's buffers count in wgt_wgpu_live_buffers (tensor storage). */
wgt_wgpu_pool *wgt_wgpu_pool_create(WGPUFlags usage, const char *label, uint64_t limit_bytes, int counts_live);
/* A buffer of at least nbytes (its size is nbytes rounded up to 4); *reused says it came from
 * the pool, whose buffers hold whatever their last user left. */
wgt_status wgt_wgpu_pool_get(wgt_webgpu *w, wgt_wgpu_pool *pool, uint64_t nbytes, int *reused, wgt_buffer **out);
/* Takes the buffer back; work already recorded that uses it still sees it (queue order). */
void wgt_wgpu_pool_put(wgt_webgpu *w, wgt_wgpu_pool *pool, wgt_buffer *b);
/* A caller's buffer (handle, of which size bytes are bound) as one of the pool's in use, with
 * a reference of our own: putting it back releases that reference, never the caller's, and it
 * counts in no budget (the memory is the caller's). */
wgt_status wgt_wgpu_pool_adopt(wgt_webgpu *w, wgt_wgpu_pool *pool, WGPUBuffer handle, uint64_t size, wgt_buffer **out);
/* Gives a buffer back to the driver at once instead of keeping it. */
void wgt_wgpu_pool_discard(wgt_webgpu *w, wgt_wgpu_pool *pool, wgt_buffer *b);
void wgt_wgpu_pool_destroy(wgt_webgpu *w, wgt_wgpu_pool *pool);
/* Gives every driver buffer of the pool back, pooled and in use alike, before the device
 * goes; the buffers in use stay as empty records until their owners put them back, which
 * then only frees them. */
void wgt_wgpu_pool_detach(wgt_webgpu *w, wgt_wgpu_pool *pool);
/* Backend table entries: counters (of the storage pool) and trim (both pools; the peak
 * restarts at what is in use). */
void wgt_wgpu_stats(wgt_backend *be, wgt_stats *out);
void wgt_wgpu_trim(wgt_backend *be);
/* Test hook: storage buffers that exist in the driver (held by tensors or pooled), over all
 * contexts of the process. */
long long wgt_wgpu_live_buffers(void);

/* bind_groups.c: bind groups cached by (layout, each buffer and its bound size, uniform size),
 * so a repeated dispatch creates nothing. A cached group keeps its buffers' memory alive, so
 * a buffer's entries are dropped before the buffer goes back to the driver. */
wgt_status wgt_wgpu_bind_cache_init(wgt_webgpu *w);
void wgt_wgpu_bind_cache_shutdown(wgt_webgpu *w);
/* The group binding buffers[0..count-1] whole (their `size` bytes) and ring_size bytes of the
 * uniform ring after them; borrowed: valid until the next call. */
wgt_status wgt_wgpu_bind_group(wgt_webgpu *w, WGPUBindGroupLayout layout, int count, wgt_buffer *const *buffers,
                               uint32_t ring_size, WGPUBindGroup *out);
/* The group binding entries[i] (a storage binding of buffers[i]: its number, offset and
 * size, up to WGT_MAX_LAYOUT_STORAGE of them) and ring_size bytes of the uniform ring at
 * ring_binding (-1: none); cached as above, borrowed likewise. */
wgt_status wgt_wgpu_bind_group_entries(wgt_webgpu *w, const char *label, WGPUBindGroupLayout layout, int count,
                                       const WGPUBindGroupEntry *entries, wgt_buffer *const *buffers,
                                       int ring_binding, uint32_t ring_size, WGPUBindGroup *out);
/* Drops every cached group that references b (called with b->bind_refs > 0). */
void wgt_wgpu_bind_cache_forget(wgt_webgpu *w, wgt_buffer *b);

/* encoder.c: fills size bytes at offset with zeros, in the current batch. */
wgt_status wgt_wgpu_clear_buffer(wgt_webgpu *w, WGPUBuffer buf, uint64_t offset, uint64_t size);
/* Storage bindings a layout of a caller's own may have: a fused kernel's inputs and outputs. */
#define WGT_MAX_LAYOUT_STORAGE (WGT_FUSED_MAX_INPUTS + WGT_FUSED_MAX_OUTPUTS)
/* encoder.c: a bind-group layout of `count` storage bindings, the last `written` of them
 * read_write and the others read-only, then a uniform with a dynamic offset; and a pipeline
 * layout of it. NULL where creation failed (*pipeline too when *layout is NULL). */
void wgt_wgpu_create_layout(wgt_webgpu *w, int count, int written, const char *label, WGPUBindGroupLayout *layout,
                            WGPUPipelineLayout *pipeline);
/* encoder.c: records one dispatch of a pipeline made with a bind-group layout of the caller's
 * own: buffers at storage bindings 0..count-1, params through the uniform ring at binding
 * count, a 2-D grid beyond 65535 workgroups; label names the kernel in messages. The bind
 * group comes from the cache and the pass keeps its pipeline, so a repeat creates nothing.
 * wgt_wgpu_dispatch is this with the shared layouts. */
wgt_status wgt_wgpu_dispatch_with_layout(wgt_webgpu *w, const char *label, WGPUComputePipeline pipeline,
                                         WGPUBindGroupLayout layout, int count, wgt_buffer *const *buffers,
                                         const void *params, uint32_t params_size, uint64_t workgroups);

/* encoder.c: records one dispatch of a grid of workgroups (grid[0..2], each within the
 * device's limit) with a bind group made for it: entries[0..count-1] bind buffers[i] (their
 * offsets and sizes as the caller set them), and params through the uniform ring at
 * uniform_binding (with a dynamic offset; -1: the layout has no uniform). For user kernels. */
#define WGT_WGPU_GRID_MAX_ENTRIES 32
wgt_status wgt_wgpu_dispatch_grid(wgt_webgpu *w, const char *label, WGPUComputePipeline pipeline,
                                  WGPUBindGroupLayout layout, int count, const WGPUBindGroupEntry *entries,
                                  wgt_buffer *const *buffers, int uniform_binding, const void *params,
                                  uint32_t params_size, const uint32_t *grid);

/* read_requests.c: the backend table's read_begin .. read_release. */
wgt_status wgt_wgpu_read_begin(wgt_backend *be, wgt_buffer *buf, size_t offset, size_t n, wgt_pending_read **out);
wgt_status wgt_wgpu_read_poll(wgt_backend *be, wgt_pending_read *r, int *done);
wgt_status wgt_wgpu_read_wait(wgt_backend *be, wgt_pending_read *r);
const void *wgt_wgpu_read_data(wgt_backend *be, wgt_pending_read *r);
void wgt_wgpu_read_release(wgt_backend *be, wgt_pending_read *r);
/* Frees requests whose callbacks may still have been pending: after the instance is released. */
void wgt_wgpu_reads_shutdown(wgt_webgpu *w);
/* Writes n bytes (a multiple of 4) from host memory at offset of dst through the staging
 * slots, in order after every submitted batch and before the next one (uploads.c). */
wgt_status wgt_wgpu_upload_staged(wgt_webgpu *w, WGPUBuffer dst, uint64_t offset, const void *src, size_t n);
/* Gives the staging slots' buffers back (trim, device release). */
void wgt_wgpu_uploads_release(wgt_webgpu *w);

/* user_kernel.c: the backend table's user kernel entries, buffer_wrap and device_handle;
 * shutdown releases every user pipeline's driver objects before the device goes (their
 * records stay until the kernels are released). */
wgt_status wgt_wgpu_user_kernel_create(wgt_backend *be, const char *source, const char *entry, int nlayout,
                                       const wgt_user_layout_entry *layout, wgt_user_pipeline **out);
wgt_status wgt_wgpu_user_kernel_run(wgt_backend *be, wgt_user_pipeline *k, int n, const uint32_t *bindings,
                                    const wgt_operand *ops, const void *params, uint32_t params_size,
                                    const uint32_t *groups);
void wgt_wgpu_user_kernel_release(wgt_backend *be, wgt_user_pipeline *k);
wgt_status wgt_wgpu_buffer_wrap(wgt_backend *be, void *handle, size_t nbytes, wgt_buffer **out);
void *wgt_wgpu_device_handle(wgt_backend *be);
void wgt_wgpu_user_kernels_shutdown(wgt_webgpu *w);

/* ---- fused elementwise kernels ---------------------------------------------------------- */
/* fused.c: the backend table's fused entry; max_fused_buffers for the device; releasing the
 * cached pipelines and layouts (before the device goes). */
wgt_status wgt_wgpu_fused(wgt_backend *be, const wgt_fused_kernel *k);
int wgt_wgpu_fused_max_buffers(const wgt_webgpu *w);
void wgt_wgpu_fused_shutdown(wgt_webgpu *w);

#endif
