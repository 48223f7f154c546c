/*
 * wgtensor: tensor math on any GPU through WebGPU, with a CPU backend beside it.
 *
 * The whole public C API lives in this header. Conventions:
 *   - Functions returning a tensor return NULL on failure; functions returning wgt_status
 *     return a status. Either way wgt_last_error() holds a message naming the bad values.
 *   - Ops given a NULL tensor return NULL without replacing the first error, so a chain of
 *     calls fails once, with the message of the call that went wrong.
 *   - Nothing aborts the caller's process; device loss and driver errors become statuses.
 *   - Tensors are reference counted: every tensor a function returns is owned by the caller
 *     and released with wgt_release().
 */
#ifndef WGTENSOR_H
#define WGTENSOR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header; wgt_version() gives the library's, which may be newer. The
 * shared library's SONAME carries the major number (libwgtensor.so.MAJOR). */
#define WGT_VERSION_MAJOR 0
#define WGT_VERSION_MINOR 1
#define WGT_VERSION_PATCH 0
#define WGT_VERSION_STRING "0.1.0"
#define WGT_VERSION_NUMBER (WGT_VERSION_MAJOR * 10000 + WGT_VERSION_MINOR * 100 + WGT_VERSION_PATCH)

/* Everything declared here is the shared library's interface: the library is built with
 * hidden visibility, so only these names are exported. */
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC visibility push(default)
#endif

#define WGT_MAX_DIMS 8

typedef enum wgt_status {
    WGT_OK = 0,
    WGT_ERR_INVALID_ARGUMENT = 1, /* NULL pointer, unknown enum value, bad option */
    WGT_ERR_SHAPE = 2,            /* rank, dimension, axis or broadcast mismatch */
    WGT_ERR_DTYPE = 3,            /* data type not accepted or operands disagree */
    WGT_ERR_USAGE = 4,            /* read of a non-readable tensor, write of a non-writable one, wrong byte count */
    WGT_ERR_DESTROYED = 5,        /* the tensor's storage was destroyed */
    WGT_ERR_CONTEXT_MISMATCH = 6, /* tensors of two contexts in one call */
    WGT_ERR_OUT_OF_MEMORY = 7,    /* host or device allocation failed */
    WGT_ERR_LIMIT = 8,            /* beyond what the device allows (binding size, element count) */
    WGT_ERR_UNAVAILABLE = 9,      /* backend or library could not be loaded or started */
    WGT_ERR_DEVICE_LOST = 10,     /* the GPU device was lost; create a new context */
    WGT_ERR_TIMEOUT = 11,         /* a wait on the device passed its deadline */
    WGT_ERR_BACKEND = 12,         /* the driver or shader compiler reported an error */
    WGT_ERR_INTERNAL = 13         /* a bug in wgtensor: please report it */
} wgt_status;

typedef enum wgt_dtype {
    WGT_F32 = 1,
    WGT_F16 = 2,
    WGT_I32 = 3,
    WGT_U32 = 4,
    /* Quantized block types with ggml's byte layout (docs/quant.md): blocks of 32 elements
     * along the last dimension, each an f16 scale d then the values. q8_0: 32 int8 (34 bytes
     * a block, x = q * d); q4_0: 16 bytes of nibbles, element j in the low nibble of byte j
     * and element j + 16 in the high nibble (18 bytes a block, x = (q - 8) * d). */
    WGT_Q8_0 = 5,
    WGT_Q4_0 = 6,
    /* Narrow types (docs/ops.md, "Narrow data types"): one byte for bool (0 or 1), i8 and u8,
     * two for i16, u16 and bf16 (bfloat16: the top half of an f32, computed in f32). The
     * WebGPU backend packs them four or two to a u32 word. They take creation, data movement,
     * views and copies, cast, concat, stack, pad, where and the comparisons; other ops refuse
     * them with WGT_ERR_DTYPE (wgt_cast to a wider type first). */
    WGT_BOOL = 7,
    WGT_I8 = 8,
    WGT_U8 = 9,
    WGT_I16 = 10,
    WGT_U16 = 11,
    WGT_BF16 = 12,
    /* 64-bit integers (docs/ops.md, "64-bit integers"): int64_t and uint64_t on the host and
     * the CPU; on WebGPU, which has no 64-bit integers, two u32 words (low, high) computed
     * with explicit carries. They take creation, data movement, views, shape ops and casts;
     * ops that do not take them refuse them with WGT_ERR_DTYPE rather than narrow them. */
    WGT_I64 = 13,
    WGT_U64 = 14
} wgt_dtype;

typedef enum wgt_backend_kind {
    WGT_BACKEND_AUTO = 0,   /* WebGPU when a real adapter works, else CPU with a one-line notice */
    WGT_BACKEND_WEBGPU = 1, /* WebGPU or an error */
    WGT_BACKEND_CPU = 2
} wgt_backend_kind;

/* Usage flags, after WebNN's MLTensor. */
enum {
    WGT_USAGE_READABLE = 1u << 0,   /* wgt_tensor_read and wgt_tensor_data are allowed */
    WGT_USAGE_WRITABLE = 1u << 1,   /* wgt_tensor_write and wgt_tensor_data_mut are allowed */
    WGT_USAGE_EXPORTABLE = 1u << 2, /* wgt_tensor_export_buffer hands out the WGPUBuffer */
    WGT_USAGE_DEFAULT = WGT_USAGE_READABLE | WGT_USAGE_WRITABLE
};

typedef struct wgt_context wgt_context;
typedef struct wgt_tensor wgt_tensor;

/* How wgt_attention runs on a backend with a fused attention kernel. */
typedef enum {
    WGT_ATTENTION_AUTO = 0, /* the kernel or the composition, whichever the backend expects to be faster */
    WGT_ATTENTION_KERNEL,   /* the kernel wherever it takes the dtype and head dimensions */
    WGT_ATTENTION_COMPOSE   /* always matmul, where and softmax */
} wgt_attention_path;

typedef struct wgt_context_options {
    wgt_backend_kind backend; /* default AUTO; env WGT_BACKEND=auto|webgpu|cpu overrides AUTO */
    const char *adapter;      /* adapter index ("1") or name substring; NULL: env WGT_ADAPTER, else high-performance */
    const char *library_path; /* webgpu.h library; NULL: env WGT_WEBGPU_LIBRARY, installed Dawn, system names */
    uint32_t wait_timeout_ms; /* bound on every wait for the device; 0: env WGT_TIMEOUT_MS, else 60000 */
    int quiet;                /* nonzero: no notice on stderr when AUTO falls back to CPU */
    int no_fusion;            /* nonzero: elementwise chains run op by op (also env WGT_FUSION=0) */
    /* Device memory the context's tensors may hold, in bytes; past it an allocation fails with
     * WGT_ERR_OUT_OF_MEMORY. 0: the adapter's device-local memory less a reserve for the driver
     * (1/32 of it, at least 512 MiB), where the adapter reports it; else no limit of our own.
     * The CPU backend's tensors live in host memory, which this does not bound. */
    uint64_t max_device_bytes;
    wgt_attention_path attention; /* default AUTO; env WGT_ATTENTION=auto|kernel|compose overrides AUTO */
    /* Compute units (NVIDIA's streaming multiprocessors) of the GPU, which WebGPU does not
     * report: large matrix products spread their last wave of tiles evenly over them, and
     * attention over few query rows splits its keys into chunks enough to fill them. 0: env
     * WGT_COMPUTE_UNITS, else a table of known adapters; where neither gives a count, tiles
     * go out whole and attention assumes 32. A wrong count changes the speed, never the results. */
    uint32_t compute_units;
} wgt_context_options;

/* ---- version ------------------------------------------------------------------------ */

/* The library's version as "MAJOR.MINOR.PATCH" (WGT_VERSION_STRING of the build). */
const char *wgt_version(void);

/* ---- errors ------------------------------------------------------------------------- */

/* Message of the last failure on this thread ("" when none). Valid until the next call. */
const char *wgt_last_error(void);
/* Status of the last failure on this thread (WGT_OK when none). */
wgt_status wgt_last_status(void);
void wgt_clear_error(void);
const char *wgt_status_name(wgt_status status);

/* ---- data types --------------------------------------------------------------------- */

/* Bytes per element; 0 for an unknown type and for the block types (q8_0, q4_0), whose
 * elements are not whole bytes: wgt_dtype_block_bytes gives theirs. */
size_t wgt_dtype_size(wgt_dtype dtype);
const char *wgt_dtype_name(wgt_dtype dtype);
float wgt_f16_to_f32(uint16_t h);
uint16_t wgt_f32_to_f16(float f); /* round to nearest even; overflow gives infinity */
float wgt_bf16_to_f32(uint16_t b);  /* exact */
uint16_t wgt_f32_to_bf16(float f);  /* round to nearest even; NaN stays a quiet NaN of the same sign */

/* ---- contexts ----------------------------------------------------------------------- */

/* options may be NULL for the defaults. */
wgt_context *wgt_context_create(const wgt_context_options *options);
void wgt_context_release(wgt_context *ctx);
wgt_backend_kind wgt_context_backend(const wgt_context *ctx);
/* "cpu" or the adapter's name, e.g. "llvmpipe (LLVM 15.0.6, 256 bits)". */
const char *wgt_context_device_name(const wgt_context *ctx);
/* WGT_OK while usable; WGT_ERR_DEVICE_LOST after the device was lost (message set). */
wgt_status wgt_context_status(wgt_context *ctx);
/* Waits until all submitted work has finished. */
wgt_status wgt_context_sync(wgt_context *ctx);
/* Multi-line description of the backend, adapter, limits and features. Caller frees(). */
char *wgt_context_describe(wgt_context *ctx);
/* Test hook: makes the device lost as a driver would (no-op status on CPU). */
wgt_status wgt_context_simulate_device_loss(wgt_context *ctx);

/* Every adapter the webgpu.h library offers, one per line with index, name, vendor,
 * backend and type; Null adapters are listed and marked as not usable. Caller frees(). */
char *wgt_list_adapters(const char *library_path);

/* ---- evaluation ----------------------------------------------------------------------- */
/* Ops are lazy: each call checks its arguments, records the work and returns at once. Work
 * runs when a result is needed on the host (a read, wgt_tensor_data, an export), on
 * wgt_eval, or when a compiled graph is dispatched. Chains of elementwise ops then run as one
 * generated kernel (unless fusion is off), intermediates nobody holds are never stored, and
 * freed device memory returns to a pool that later tensors reuse. Errors found while running
 * (device loss, out of memory) are reported by the call that made the work run. */

/* Runs the pending work the n tensors depend on (NULL entries are skipped) and submits it;
 * does not wait for the device: a later read waits only as long as it must. */
wgt_status wgt_eval(int n, wgt_tensor *const *tensors);

typedef struct wgt_stats {
    uint64_t device_bytes_in_use; /* device memory held by live tensors and pending work */
    uint64_t device_bytes_pooled; /* freed device memory kept for reuse */
    uint64_t device_bytes_peak;   /* most device memory ever held (in use + pooled) since the
                                     context was created or last trimmed */
    uint64_t buffers_created;     /* device buffers allocated from the driver */
    uint64_t buffers_reused;      /* allocations served from the pool */
    uint64_t ops_run;             /* recorded ops that ran */
    uint64_t ops_skipped;         /* recorded ops whose results nobody could read any more */
    uint64_t ops_fused;           /* ops that ran inside a fused kernel */
    uint64_t launches;            /* backend kernel launches: a fused kernel counts once */
    uint64_t dispatches;          /* compute dispatches recorded on the device (a launch may
                                     take several: a split matrix product and its sum) */
    uint64_t submits;             /* command buffers submitted to the device queue */
    uint64_t kernels_cached;      /* compiled kernels (pipelines) kept for reuse; bounded, and
                                     emptied by wgt_context_trim */
    uint64_t bind_groups_created; /* bind groups made for dispatches (a cached one is reused by
                                     a dispatch over the same buffers: not counted again) */
    uint64_t compute_passes;      /* compute passes encoded: consecutive dispatches share one,
                                     and a copy, a clear or a submit between them ends it */
} wgt_stats;
/* Counters since the context was created (CPU contexts report no device memory). */
wgt_status wgt_context_stats(wgt_context *ctx, wgt_stats *out);
/* Runs pending work, then gives the pool's memory and the compiled kernels back to the driver
 * (kernels are compiled again when next used) and restarts the peak at what is in use. */
wgt_status wgt_context_trim(wgt_context *ctx);

/* ---- asynchronous reads --------------------------------------------------------------- */
/* A read request copies the tensor's elements (row-major) into dst once the device has them;
 * the work the tensor depends on is submitted at once, and several requests made before the
 * first poll or wait share one submission. Work recorded after the request is not held back
 * by it. dst must stay valid until the request finished or was released; nbytes must equal
 * wgt_tensor_nbytes. */
typedef struct wgt_read wgt_read;
wgt_read *wgt_read_begin(wgt_tensor *t, void *dst, size_t nbytes);
/* Never blocks: *done becomes 1 once dst holds the data. */
wgt_status wgt_read_poll(wgt_read *r, int *done);
/* Blocks until dst holds the data (or the context's timeout passes). */
wgt_status wgt_read_wait(wgt_read *r);
/* Frees the request; an unfinished one is abandoned and dst is not written after this. */
void wgt_read_release(wgt_read *r);

/* ---- compiled graphs ------------------------------------------------------------------ */
/* As WebNN's build and dispatch: ops applied to graph inputs (placeholders with a name, a
 * type and a shape, and no data) are recorded, not run. wgt_graph_build takes named outputs
 * and compiles what they depend on: fused kernels, planned memory. wgt_graph_dispatch then
 * runs it with caller tensors bound by name, as often as wanted; each call checks every
 * binding and says which one is wrong. Tensors with data that the recording used (weights)
 * are kept by the graph. */
typedef struct wgt_graph wgt_graph;
typedef struct wgt_binding {
    const char *name;
    wgt_tensor *tensor;
} wgt_binding;

/* A placeholder for a graph input; its name must be unique in the context while it lives.
 * Reading it or anything computed from it outside a graph is WGT_ERR_USAGE. */
wgt_tensor *wgt_graph_input(wgt_context *ctx, const char *name, wgt_dtype dtype, int ndim, const int64_t *shape);
/* outputs[i].tensor must be computed from graph inputs; names must be unique. The graph also
 * takes every optimizer step recorded over graph values in the context since the last build
 * (wgt_optimizer_step): each dispatch then updates those parameters in place, last; and every
 * wgt_set_rows of graph values into a tensor with data since then, run in place where it
 * was recorded. */
wgt_graph *wgt_graph_build(wgt_context *ctx, int n_outputs, const wgt_binding *outputs);
/* Every input and output name exactly once; tensors of the graph's context with the
 * recorded types and shapes; outputs writable, contiguous and distinct from every input and
 * from every tensor the graph reads or updates. Outputs are overwritten with the results. */
wgt_status wgt_graph_dispatch(wgt_graph *g, int n_inputs, const wgt_binding *inputs, int n_outputs,
                              const wgt_binding *outputs);
/* Kernel launches one dispatch makes (after fusion). */
int wgt_graph_launches(const wgt_graph *g);
void wgt_graph_release(wgt_graph *g);

/* ---- tensors: creation -------------------------------------------------------------- */

/* Zero-filled tensor with the given usage flags. */
wgt_tensor *wgt_tensor_create(wgt_context *ctx, wgt_dtype dtype, int ndim, const int64_t *shape,
                              unsigned usage);
/* Copies nbytes (which must equal numel * dtype size) of row-major data. */
wgt_tensor *wgt_tensor_from_data(wgt_context *ctx, wgt_dtype dtype, int ndim, const int64_t *shape,
                                 const void *data, size_t nbytes, unsigned usage);
wgt_tensor *wgt_zeros(wgt_context *ctx, wgt_dtype dtype, int ndim, const int64_t *shape);
wgt_tensor *wgt_ones(wgt_context *ctx, wgt_dtype dtype, int ndim, const int64_t *shape);
wgt_tensor *wgt_full(wgt_context *ctx, wgt_dtype dtype, int ndim, const int64_t *shape, double value);
/* 1-D tensor of ceil((stop - start) / step) values start, start + step, ... */
wgt_tensor *wgt_arange(wgt_context *ctx, wgt_dtype dtype, double start, double stop, double step);
/* Seeded random values, made on the device by a counter-based generator (Philox4x32-10 keyed
 * by the seed, counter = element index: docs/ops.md, "Random numbers"), so the same seed gives
 * the same values on every backend, bit for bit. Uniform floats are low + (high - low) u for u of 24 random bits, never reaching
 * high; integer types draw each whole number k with low <= k < high (floor(low) when there is
 * none) by multiply-shift; normal draws are Box-Muller, integer types taking their floor. */
wgt_tensor *wgt_rand_uniform(wgt_context *ctx, wgt_dtype dtype, int ndim, const int64_t *shape,
                             double low, double high, uint64_t seed);
wgt_tensor *wgt_rand_normal(wgt_context *ctx, wgt_dtype dtype, int ndim, const int64_t *shape,
                            double mean, double stddev, uint64_t seed);
/* u32 tensor of the generator's raw 32-bit words (the first word of element i's block). */
wgt_tensor *wgt_rand_bits(wgt_context *ctx, int ndim, const int64_t *shape, uint64_t seed);

/* ---- tensors: lifetime -------------------------------------------------------------- */

wgt_tensor *wgt_retain(wgt_tensor *t);
void wgt_release(wgt_tensor *t);
/* Frees the storage now (every view of it sees WGT_ERR_DESTROYED); the handle stays valid
 * until released. Work recorded before still runs: pending eager work first, and a graph
 * built over a destroyed intermediate still computes through it. */
wgt_status wgt_tensor_destroy(wgt_tensor *t);

/* ---- tensors: properties ------------------------------------------------------------ */

wgt_dtype wgt_tensor_dtype(const wgt_tensor *t);
int wgt_tensor_ndim(const wgt_tensor *t);
const int64_t *wgt_tensor_shape(const wgt_tensor *t);
const int64_t *wgt_tensor_strides(const wgt_tensor *t); /* in elements; 0 for broadcast dims */
int64_t wgt_tensor_offset(const wgt_tensor *t);         /* in elements, into the storage */
int64_t wgt_tensor_numel(const wgt_tensor *t);
size_t wgt_tensor_nbytes(const wgt_tensor *t); /* numel * dtype size */
unsigned wgt_tensor_usage(const wgt_tensor *t);
int wgt_tensor_is_contiguous(const wgt_tensor *t);
wgt_context *wgt_tensor_context(const wgt_tensor *t);

/* ---- tensors: data ------------------------------------------------------------------ */

/* Copies the tensor's elements, row-major, into dst; nbytes must equal wgt_tensor_nbytes. */
wgt_status wgt_tensor_read(wgt_tensor *t, void *dst, size_t nbytes);
/* Overwrites the tensor's elements from row-major src; nbytes must equal wgt_tensor_nbytes.
 * Writing through a view writes the viewed elements of the shared storage; a broadcast view
 * (stride 0 on a dimension longer than 1) cannot be written. */
wgt_status wgt_tensor_write(wgt_tensor *t, const void *src, size_t nbytes);
/* Host pointer to the tensor's first element, synced from the device; index it with the
 * strides (q8_0, q4_0: to its first block, ggml's bytes; the element at position e, from the
 * strides, lies in block e / 32 from there). Valid until the next call on the tensor's
 * context. NULL on error. */
const void *wgt_tensor_data(wgt_tensor *t);
/* As wgt_tensor_data, and the caller may write: the device copy is refreshed on next use. */
void *wgt_tensor_data_mut(wgt_tensor *t);
/* The WGPUBuffer holding the storage (synced to the device), for the caller's own WebGPU
 * work; *offset_bytes receives the first element's byte offset. Needs the EXPORTABLE usage
 * and the WebGPU backend. The buffer stays owned by the tensor. A block type's buffer holds
 * the device layout of docs/quant.md (every block's values, then every block's scale), and
 * *offset_bytes is the view's first block times the block's ggml size (34 or 18). */
void *wgt_tensor_export_buffer(wgt_tensor *t, uint64_t *offset_bytes);

/* A caller's WGPUBuffer as a tensor, without a copy (WebGPU backend only): the tensor's
 * elements are the buffer's first nbytes (row-major). The buffer must come from this
 * context's device (wgt_context_webgpu_device) and have the usages Storage, CopySrc and
 * CopyDst; it must hold at least wgt_tensor_nbytes rounded up to 4. The tensor takes a
 * reference of its own: the caller may release its reference at once, and the buffer lives
 * until the last tensor viewing it is released (the library never destroys it). Releasing
 * the context first gives the library's reference back with the device; the tensor then
 * fails as released. Before the caller's own queue work touches the buffer, call
 * wgt_context_sync (or wgt_tensor_export_buffer, which submits what is recorded); reads
 * through the library read the buffer afresh each time, so writes the caller made since are
 * seen. usage: as for wgt_tensor_create. */
wgt_tensor *wgt_tensor_from_buffer(wgt_context *ctx, void *wgpu_buffer, wgt_dtype dtype, int ndim,
                                   const int64_t *shape, unsigned usage);
/* The context's WGPUDevice (WebGPU backend; NULL with WGT_ERR_UNAVAILABLE on the CPU), for
 * creating buffers to wrap or to share. Borrowed: valid until the context is released; take
 * a reference (wgpuDeviceAddRef) to keep it longer. */
void *wgt_context_webgpu_device(wgt_context *ctx);

/* ---- user WGSL kernels (WebGPU) ------------------------------------------------------- */
/* A compute shader of the caller's, compiled once and dispatched on tensors like any op: it
 * is recorded lazily, waits for the work that writes its inputs, later ops and reads wait
 * for it, and it joins batching and asynchronous reads. Bindings are read from the source:
 * every module-scope `@group(0) @binding(N) var<storage, read|read_write> name : array<T>;`
 * is a tensor binding (T: f32, i32, u32, f16 with `enable f16;`, vecN, atomics, or a struct
 * of those), and at most one `var<uniform>` holds the dispatch's params. Only @group(0).
 * The CPU backend runs no WGSL: there wgt_kernel_create only reads the bindings, and a
 * dispatch runs the kernel's CPU function (wgt_kernel_set_cpu_fn), or is WGT_ERR_UNAVAILABLE
 * without one. Dispatches may be recorded inside a compiled graph (on graph inputs and what
 * is computed from them) when the kernel writes one binding there. */
typedef struct wgt_kernel wgt_kernel;

/* Compiles entry_point (a @compute fn) of the WGSL source. A source the compiler rejects is
 * WGT_ERR_BACKEND with its message, line and column included; a declaration the kernel API
 * does not take is WGT_ERR_INVALID_ARGUMENT naming its line. The same source and entry point
 * compiled again on the context reuse the compiled pipeline. */
wgt_kernel *wgt_kernel_create(wgt_context *ctx, const char *wgsl, const char *entry_point);
/* Dispatches already recorded still run. NULL is ignored. */
void wgt_kernel_release(wgt_kernel *k);

typedef struct wgt_kernel_binding_info {
    const char *name; /* the variable's name (valid while the kernel lives) */
    const char *type; /* the array's element type as written ("f32", "vec4<f32>"), or the uniform's type */
    uint32_t binding; /* N of @binding(N) */
    int read_write;   /* 1: var<storage, read_write>; 0: var<storage, read> or the uniform */
    int uniform;      /* 1: the var<uniform> that params fill */
    uint32_t element_size;   /* bytes of one array element (or of the uniform); 0 where not known */
    uint32_t component_size; /* bytes of its scalars (a tensor's dtype must have this size); 0: any */
} wgt_kernel_binding_info;
/* Bindings the shader declares, in source order, and the i-th of them. */
int wgt_kernel_binding_count(const wgt_kernel *k);
wgt_status wgt_kernel_binding(const wgt_kernel *k, int i, wgt_kernel_binding_info *out);
/* The entry point's @workgroup_size (1 for omitted dimensions; 0 where it is not a literal). */
wgt_status wgt_kernel_workgroup_size(const wgt_kernel *k, uint32_t size[3]);
/* Workgroups covering n invocations along x: {ceil(n / workgroup_size.x), 1, 1}, for kernels
 * indexed by global_invocation_id.x (which then must skip ids >= n). WGT_ERR_LIMIT when that
 * passes the device's workgroups per dimension (use a 2-D grid then). */
wgt_status wgt_kernel_groups_for(const wgt_kernel *k, int64_t n, uint32_t groups[3]);

/* One tensor binding of a dispatch, named by variable name or, with name NULL, by N of
 * @binding(N). tensor is bound as is; a tensor on a read_write binding is written in place
 * (it needs the writable usage and must be contiguous from its storage's first element),
 * a view on a read binding that is not is copied to a contiguous tensor first. tensor NULL
 * on a read_write binding: the call creates the output (dtype, ndim, shape), zero-filled
 * before the kernel runs, and returns it in outputs. */
typedef struct wgt_kernel_arg {
    const char *name;
    uint32_t binding;
    wgt_tensor *tensor;
    wgt_dtype dtype;
    int ndim;
    const int64_t *shape;
} wgt_kernel_arg;
/* Records one dispatch of groups_x * groups_y * groups_z workgroups. Every tensor binding of
 * the shader is given exactly once; params (params_size bytes, the uniform's exact size) fill
 * the var<uniform>, or are NULL and 0 when there is none. Each check fails before anything is
 * recorded, naming the argument: an unknown or missing binding, a dtype whose size is not the
 * array's scalar size (WGT_ERR_DTYPE), a byte count not a whole number of elements
 * (WGT_ERR_SHAPE), a tensor past the device's maxStorageBufferBindingSize or a grid past its
 * workgroups per dimension (WGT_ERR_LIMIT), a read binding asked to create an output, an
 * in-place tensor that is not writable or contiguous or is bound twice (WGT_ERR_USAGE), a
 * wrong params size (WGT_ERR_INVALID_ARGUMENT). outputs has nargs entries (NULL allowed when
 * no binding creates one): created tensors at their argument's index, NULL elsewhere; the
 * caller releases them. Graph inputs and tensors computed from them may be bound (the
 * dispatch is then recorded in the graph and runs at each wgt_graph_dispatch) when the
 * kernel writes one binding; a graph input is never written in place (WGT_ERR_USAGE). */
wgt_status wgt_kernel_dispatch(wgt_kernel *k, int nargs, const wgt_kernel_arg *args, const void *params,
                               size_t params_size, uint32_t groups_x, uint32_t groups_y, uint32_t groups_z,
                               wgt_tensor **outputs);

/* ---- user kernels: CPU functions -------------------------------------------------------- */
/* What the kernel computes, written in C for backends that run no WGSL (the CPU backend).
 * A dispatch calls it once, when the work runs (inside a compiled graph: at every
 * wgt_graph_dispatch), with every tensor binding as contiguous row-major host memory. */
typedef struct wgt_kernel_buffer {
    const char *name;     /* the binding's variable name */
    uint32_t binding;     /* N of @binding(N) */
    int read_write;       /* 1: the function may write data; 0: it must only read it */
    void *data;           /* the tensor's first element */
    size_t nbytes;        /* numel * dtype size */
    wgt_dtype dtype;
    int ndim;
    const int64_t *shape;
} wgt_kernel_buffer;
typedef struct wgt_kernel_cpu_call {
    int nbuffers;                     /* the shader's tensor bindings, in declaration order */
    const wgt_kernel_buffer *buffers;
    const void *params;               /* the dispatch's params (NULL when none) */
    size_t params_size;
    uint32_t groups[3];               /* the dispatch's grid, and the entry point's workgroup size */
    uint32_t workgroup_size[3];
    char *error;                      /* a failing function may write a one-line reason here */
    size_t error_size;
} wgt_kernel_cpu_call;
/* Returns 0 on success; anything else fails the run with WGT_ERR_BACKEND and the reason. */
typedef int (*wgt_kernel_cpu_fn)(void *user_data, const wgt_kernel_cpu_call *call);
/* Gives k its CPU function, once (WGT_ERR_USAGE for a second one). release (NULL allowed) is
 * called with user_data when the kernel and every dispatch recorded with it are gone. On a
 * backend that runs WGSL the function is kept and never called. */
typedef void (*wgt_kernel_user_release_fn)(void *user_data);
wgt_status wgt_kernel_set_cpu_fn(wgt_kernel *k, wgt_kernel_cpu_fn fn, void *user_data,
                                 wgt_kernel_user_release_fn release);

/* ---- views (share storage) ---------------------------------------------------------- */

/* General strided view; every addressed element must lie inside the storage. */
wgt_tensor *wgt_as_strided(wgt_tensor *t, int ndim, const int64_t *shape, const int64_t *strides,
                           int64_t offset);
wgt_tensor *wgt_transpose(wgt_tensor *t, int axis0, int axis1); /* negative axes count from the end */
/* Elements start, start + step, ... before stop along axis; step may be negative. */
wgt_tensor *wgt_slice(wgt_tensor *t, int axis, int64_t start, int64_t stop, int64_t step);
wgt_tensor *wgt_broadcast_to(wgt_tensor *t, int ndim, const int64_t *shape);
/* A view when the layout allows, else a contiguous copy; one dimension may be -1. */
wgt_tensor *wgt_reshape(wgt_tensor *t, int ndim, const int64_t *shape);
/* A new tensor with the same elements in row-major storage. */
wgt_tensor *wgt_contiguous(wgt_tensor *t);

/* ---- views and broadcasting of the array API ---------------------------------------- */
/* wgt_reshape that never copies: a layout that cannot be seen in the new shape is
 * WGT_ERR_SHAPE (the array API's reshape(copy=False)). */
wgt_tensor *wgt_reshape_view(wgt_tensor *t, int ndim, const int64_t *shape);
/* Views of the count tensors at their common broadcast shape (stride 0 where repeated), as
 * NumPy's broadcast_arrays: out receives count new tensors (all NULL on failure). */
wgt_status wgt_broadcast_arrays(int count, wgt_tensor *const *tensors, wgt_tensor **out);
/* Coordinate grids of count (at most WGT_MAX_DIMS) 1-D tensors, as NumPy's meshgrid: out[i]
 * is tensors[i] seen along its own axis of the grid and repeated along the others, a view.
 * indexing_ij 1 gives the grid the shape (n0, n1, n2, ...); 0 ('xy', NumPy's default) swaps
 * the first two axes: (n1, n0, n2, ...). */
wgt_status wgt_meshgrid(int count, wgt_tensor *const *tensors, int indexing_ij, wgt_tensor **out);

/* ---- elementwise ops (NumPy broadcasting; any views) -------------------------------- */
/* Operands of two types are first cast to their common type by the array API's promotion
 * table (docs/ops.md, "Type promotion": f16 with f32 gives f32, u8 with i8 i16, u32 with i32
 * i64, which the ops that do not take i64 then refuse); pairs it leaves undefined (an integer
 * with a float, bool with a number, u64 with a signed type) are WGT_ERR_DTYPE. The same holds
 * for where's a and b. */
/* Integer arithmetic wraps around (two's complement), i8, u8, i16 and u16 included (computed
 * in i32 and cast back); integer division truncates toward zero, and a division by zero gives
 * 0. f16 is computed in f32 and rounded once. bool and bf16 take no arithmetic here. */

wgt_tensor *wgt_add(wgt_tensor *a, wgt_tensor *b);
wgt_tensor *wgt_sub(wgt_tensor *a, wgt_tensor *b);
wgt_tensor *wgt_mul(wgt_tensor *a, wgt_tensor *b);
wgt_tensor *wgt_div(wgt_tensor *a, wgt_tensor *b);
/* Floating types: pow, atan2. All types: maximum, minimum (NaN propagates), mod (floored, the
 * result takes the divisor's sign as in NumPy; integer mod by zero gives 0). Integer pow
 * wraps around; a negative integer exponent gives 0 except for bases 1 and -1. */
wgt_tensor *wgt_pow(wgt_tensor *a, wgt_tensor *b);
wgt_tensor *wgt_maximum(wgt_tensor *a, wgt_tensor *b);
wgt_tensor *wgt_minimum(wgt_tensor *a, wgt_tensor *b);
wgt_tensor *wgt_mod(wgt_tensor *a, wgt_tensor *b);
wgt_tensor *wgt_atan2(wgt_tensor *a, wgt_tensor *b);
/* Comparisons and logic give bool tensors (WGT_BOOL; they gave u32 0/1 before: docs/ops.md,
 * "Changes"); logic takes any type, nonzero (NaN too) being true. */
wgt_tensor *wgt_eq(wgt_tensor *a, wgt_tensor *b);
wgt_tensor *wgt_ne(wgt_tensor *a, wgt_tensor *b);
wgt_tensor *wgt_lt(wgt_tensor *a, wgt_tensor *b);
wgt_tensor *wgt_le(wgt_tensor *a, wgt_tensor *b);
wgt_tensor *wgt_gt(wgt_tensor *a, wgt_tensor *b);
wgt_tensor *wgt_ge(wgt_tensor *a, wgt_tensor *b);
wgt_tensor *wgt_logical_and(wgt_tensor *a, wgt_tensor *b);
wgt_tensor *wgt_logical_or(wgt_tensor *a, wgt_tensor *b);
wgt_tensor *wgt_logical_not(wgt_tensor *a);

/* ---- bool results: logical_xor ------------------------------------------------------ */
/* a != 0 differs from b != 0, as bool; any types, broadcast (as logical_and). */
wgt_tensor *wgt_logical_xor(wgt_tensor *a, wgt_tensor *b);

/* cond (any type, bool above all; nonzero is true) ? a : b, all three broadcast together; a and b promote. */
wgt_tensor *wgt_where(wgt_tensor *cond, wgt_tensor *a, wgt_tensor *b);
/* Tensor-with-scalar forms: the scalar becomes a rank-0 tensor of a's type. A scalar the type
 * cannot hold is an error, never converted: for i32/u32 a fraction, NaN or infinity is
 * WGT_ERR_DTYPE, a whole number out of range WGT_ERR_INVALID_ARGUMENT; for f32/f16 it rounds,
 * but a finite value that would round to infinity is WGT_ERR_INVALID_ARGUMENT (docs/ops.md). */
wgt_tensor *wgt_add_scalar(wgt_tensor *a, double s);
wgt_tensor *wgt_sub_scalar(wgt_tensor *a, double s);
wgt_tensor *wgt_mul_scalar(wgt_tensor *a, double s);
wgt_tensor *wgt_div_scalar(wgt_tensor *a, double s);
wgt_tensor *wgt_pow_scalar(wgt_tensor *a, double s);
wgt_tensor *wgt_maximum_scalar(wgt_tensor *a, double s);
wgt_tensor *wgt_minimum_scalar(wgt_tensor *a, double s);
/* A rank-0 tensor holding value, checked as the scalar forms check theirs (as wgt_full is). */
wgt_tensor *wgt_scalar(wgt_context *ctx, wgt_dtype dtype, double value);

/* ---- unary ops ---------------------------------------------------------------------- */
/* All types: neg (wraps for integers), abs, sign, square, relu, clamp, floor, ceil and round
 * (identity on integers). isnan and isinf give bool (always false for integers). The rest
 * take floating types only (f32, f16; computed in f32). round is half to even. */
wgt_tensor *wgt_neg(wgt_tensor *a);
wgt_tensor *wgt_abs(wgt_tensor *a);
wgt_tensor *wgt_sign(wgt_tensor *a);
wgt_tensor *wgt_square(wgt_tensor *a);
wgt_tensor *wgt_sqrt(wgt_tensor *a);
wgt_tensor *wgt_rsqrt(wgt_tensor *a);
wgt_tensor *wgt_reciprocal(wgt_tensor *a);
wgt_tensor *wgt_exp(wgt_tensor *a);
wgt_tensor *wgt_expm1(wgt_tensor *a);
wgt_tensor *wgt_log(wgt_tensor *a);
wgt_tensor *wgt_log1p(wgt_tensor *a);
wgt_tensor *wgt_sin(wgt_tensor *a);
wgt_tensor *wgt_cos(wgt_tensor *a);
wgt_tensor *wgt_tanh(wgt_tensor *a);
wgt_tensor *wgt_sigmoid(wgt_tensor *a);
wgt_tensor *wgt_relu(wgt_tensor *a);
wgt_tensor *wgt_leaky_relu(wgt_tensor *a, double negative_slope);
wgt_tensor *wgt_elu(wgt_tensor *a, double alpha);
wgt_tensor *wgt_gelu(wgt_tensor *a);     /* erf form: x * (1 + erf(x / sqrt 2)) / 2 */
wgt_tensor *wgt_gelu_tanh(wgt_tensor *a); /* tanh approximation */
wgt_tensor *wgt_silu(wgt_tensor *a);
wgt_tensor *wgt_softplus(wgt_tensor *a);
wgt_tensor *wgt_floor(wgt_tensor *a);
wgt_tensor *wgt_ceil(wgt_tensor *a);
wgt_tensor *wgt_round(wgt_tensor *a);
wgt_tensor *wgt_erf(wgt_tensor *a);
wgt_tensor *wgt_isnan(wgt_tensor *a);
wgt_tensor *wgt_isinf(wgt_tensor *a);
wgt_tensor *wgt_clamp(wgt_tensor *a, double lo, double hi);

/* ---- more elementwise math (the array API's set) ------------------------------------ */
/* Floating types (f32, f16; computed in f32): tan, asin, acos, atan, sinh, cosh, asinh, acosh,
 * atanh, log2, log10, exp2 (IEEE special values as libm; NaN outside the domain). trunc rounds
 * toward zero (identity on integers). signbit (floating types) and isfinite (all types; 1 for
 * integers) give bool as isnan does. bitwise_not (integers) flips every bit; of bool it is
 * logical_not. */
wgt_tensor *wgt_tan(wgt_tensor *a);
wgt_tensor *wgt_asin(wgt_tensor *a);
wgt_tensor *wgt_acos(wgt_tensor *a);
wgt_tensor *wgt_atan(wgt_tensor *a);
wgt_tensor *wgt_sinh(wgt_tensor *a);
wgt_tensor *wgt_cosh(wgt_tensor *a);
wgt_tensor *wgt_asinh(wgt_tensor *a);
wgt_tensor *wgt_acosh(wgt_tensor *a);
wgt_tensor *wgt_atanh(wgt_tensor *a);
wgt_tensor *wgt_log2(wgt_tensor *a);
wgt_tensor *wgt_log10(wgt_tensor *a);
wgt_tensor *wgt_exp2(wgt_tensor *a);
wgt_tensor *wgt_trunc(wgt_tensor *a);
wgt_tensor *wgt_signbit(wgt_tensor *a);
wgt_tensor *wgt_isfinite(wgt_tensor *a);
wgt_tensor *wgt_bitwise_not(wgt_tensor *a);
/* Binary, broadcasting as wgt_add; a and b share a type. Floating types: logaddexp
 * (log(e^a + e^b) without overflow), hypot (without overflow), copysign, nextafter (the next
 * value of the type itself, f16 steps in f16). i32 and u32: bitwise_and, _or, _xor and the
 * shifts: a count outside [0, 32) (negative included) gives 0 for a left shift, and for a right
 * shift 0, or -1 for a negative i32 (an arithmetic shift by 31), as NumPy. floor_divide (all
 * types) is floor(a / b) as NumPy's //: the integer form rounds toward -inf, a zero divisor
 * gives 0 and INT32_MIN // -1 wraps to INT32_MIN; the float form follows NumPy's divmod (so
 * a - b * (a // b) == wgt_mod(a, b), the array API's remainder). */
wgt_tensor *wgt_logaddexp(wgt_tensor *a, wgt_tensor *b);
wgt_tensor *wgt_hypot(wgt_tensor *a, wgt_tensor *b);
wgt_tensor *wgt_copysign(wgt_tensor *a, wgt_tensor *b);
wgt_tensor *wgt_nextafter(wgt_tensor *a, wgt_tensor *b);
wgt_tensor *wgt_bitwise_and(wgt_tensor *a, wgt_tensor *b);
wgt_tensor *wgt_bitwise_or(wgt_tensor *a, wgt_tensor *b);
wgt_tensor *wgt_bitwise_xor(wgt_tensor *a, wgt_tensor *b);
wgt_tensor *wgt_bitwise_left_shift(wgt_tensor *a, wgt_tensor *b);
wgt_tensor *wgt_bitwise_right_shift(wgt_tensor *a, wgt_tensor *b);
wgt_tensor *wgt_floor_divide(wgt_tensor *a, wgt_tensor *b);
/* a limited to [lo, hi] elementwise, lo and hi tensors of a's type broadcast against a (the
 * result has the broadcast shape); either may be NULL (no bound on that side). NaN in a, lo
 * or hi gives NaN, and lo > hi gives hi, as numpy.clip. */
wgt_tensor *wgt_clip(wgt_tensor *a, wgt_tensor *lo, wgt_tensor *hi);

/* ---- casts -------------------------------------------------------------------------- */
/* Between every pair of f32, f16, bf16, i32, u32, i16, u16, i8, u8 and bool. Float to integer
 * truncates toward zero, saturates at the type's range and maps NaN to 0; between integer
 * types the bits wrap (two's complement); integer to float goes through f32 (nearest even);
 * to f16 and bf16 rounds to nearest even, overflowing to infinity; to bool is "nonzero"
 * (NaN true, -0 false), from bool 0 or 1 (docs/ops.md). */
wgt_tensor *wgt_cast(wgt_tensor *a, wgt_dtype dtype);

/* ---- reductions --------------------------------------------------------------------- */
/* Over the axes listed (negative counts from the end; naxes 0 means every axis); keepdims
 * keeps the reduced axes with length 1. f16 accumulates in f32. Integer sum and prod wrap
 * around in 32 bits, and of i8, i16 and bool (sum only: the count of trues) give i32, of u8
 * and u16 u32 (cumsum likewise); mean, var and std of integers give f32. var and std divide by
 * N - correction (0: population, 1: sample). max and min propagate NaN; over zero elements
 * sum is 0, prod 1, and max, min, mean, var, std give an error. */
wgt_tensor *wgt_sum(wgt_tensor *a, int naxes, const int *axes, int keepdims);
wgt_tensor *wgt_mean(wgt_tensor *a, int naxes, const int *axes, int keepdims);
wgt_tensor *wgt_max(wgt_tensor *a, int naxes, const int *axes, int keepdims);
wgt_tensor *wgt_min(wgt_tensor *a, int naxes, const int *axes, int keepdims);
wgt_tensor *wgt_prod(wgt_tensor *a, int naxes, const int *axes, int keepdims);
wgt_tensor *wgt_var(wgt_tensor *a, int naxes, const int *axes, int keepdims, int correction);
wgt_tensor *wgt_std(wgt_tensor *a, int naxes, const int *axes, int keepdims, int correction);
/* Index (i32) of the first largest / smallest element along axis; NaN counts as largest
 * and smallest, as in NumPy. */
wgt_tensor *wgt_argmax(wgt_tensor *a, int axis, int keepdims);
wgt_tensor *wgt_argmin(wgt_tensor *a, int axis, int keepdims);
/* Running sum along axis, same shape (f16 accumulates in f32). */
wgt_tensor *wgt_cumsum(wgt_tensor *a, int axis);
/* ---- scans: running products, maxima and minima ------------------------------------ */
/* Along axis (negative counts from the end), same shape as a; f32, f16, i32 and u32.
 * cumprod: f16 accumulates in f32, integer products wrap around in 32 bits. cummax and
 * cummin propagate NaN (from the first NaN on, the value is that NaN). cumargmax and
 * cumargmin give the i32 position along axis that each running value came from: the latest
 * of equal values, the first NaN once there is one (as torch.cummax and torch.cummin). */
wgt_tensor *wgt_cumprod(wgt_tensor *a, int axis);
wgt_tensor *wgt_cummax(wgt_tensor *a, int axis);
wgt_tensor *wgt_cummin(wgt_tensor *a, int axis);
wgt_tensor *wgt_cumargmax(wgt_tensor *a, int axis);
wgt_tensor *wgt_cumargmin(wgt_tensor *a, int axis);

/* ---- 64-bit sums and products (docs/ops.md, "64-bit integers") ---- */
/* wgt_sum, wgt_prod and wgt_cumsum accumulated in and returned as dtype: i64 or u64 for an
 * integer a (i32, u32, i64, u64; each element converted first, signed types sign-extending),
 * wrapping modulo 2^64; or the type the plain function gives for a, which it then is. Other
 * types are WGT_ERR_DTYPE. Integer indices (argmax, argsort, nonzero) become i64 by wgt_cast. */
wgt_tensor *wgt_sum_dtype(wgt_tensor *a, int naxes, const int *axes, int keepdims, wgt_dtype dtype);
wgt_tensor *wgt_prod_dtype(wgt_tensor *a, int naxes, const int *axes, int keepdims, wgt_dtype dtype);
wgt_tensor *wgt_cumsum_dtype(wgt_tensor *a, int axis, wgt_dtype dtype);
/* Over the axes listed, as above, of a != 0 (NaN counts as nonzero): any and all give bool
 * (empty: false and true), count_nonzero i32 (empty: 0). Every type but the block types. */
wgt_tensor *wgt_any(wgt_tensor *a, int naxes, const int *axes, int keepdims);
wgt_tensor *wgt_all(wgt_tensor *a, int naxes, const int *axes, int keepdims);
wgt_tensor *wgt_count_nonzero(wgt_tensor *a, int naxes, const int *axes, int keepdims);
/* log(sum(exp(a))) over the axes listed, max-shifted so nothing overflows; f32, f16 (computed
 * in f32). All -inf (or empty) gives -inf, +inf gives +inf, NaN propagates. */
wgt_tensor *wgt_logsumexp(wgt_tensor *a, int naxes, const int *axes, int keepdims);

/* ---- linear algebra ------------------------------------------------------------------ */
/* numpy.matmul: 1-D operands are promoted (a to [1, K], b to [K, 1]) and the added dimension
 * removed; leading (batch) dimensions broadcast. Floating types; f16 accumulates in f32. */
wgt_tensor *wgt_matmul(wgt_tensor *a, wgt_tensor *b);
/* x @ w^T + bias with w of shape [out, in] and bias [out] (bias may be NULL). */
wgt_tensor *wgt_linear(wgt_tensor *x, wgt_tensor *w, wgt_tensor *bias);

/* ---- contractions (tensordot, vecdot, outer, einsum) --------------------------------- */
/* Floating types of one dtype; planned onto permutes, reshapes, sums and one batched matmul
 * per pair of operands, so f16 accumulates in f32 as matmul does. Results are row-major.
 * tensordot: axis axes_a[i] of a with axes_b[i] of b (equal lengths); with both NULL, a's
 * last naxes axes with b's first naxes. Result [a's other axes..., b's other axes...]. */
wgt_tensor *wgt_tensordot(wgt_tensor *a, wgt_tensor *b, int naxes, const int *axes_a, const int *axes_b);
/* sum(a * b) along axis of the broadcast shape (real types: a's conjugate is a). */
wgt_tensor *wgt_vecdot(wgt_tensor *a, wgt_tensor *b, int axis);
/* a [M] times b [N]: [M, N]. */
wgt_tensor *wgt_outer(wgt_tensor *a, wgt_tensor *b);
/* numpy.einsum over count operands: "ij,jk->ik"; without "->" the output is the letters used
 * once, in alphabetical order; "..." broadcasts; a letter repeated in one operand takes its
 * diagonal. Letters a-z and A-Z. */
wgt_tensor *wgt_einsum(const char *subscripts, int count, wgt_tensor *const *operands);

/* ---- dense factorizations (linalg) ----------------------------------------------------- */
/* Batches of square f32 matrices [..., n, n] (f16 ones are read exactly as f32 and the results
 * rounded to f16), factorized in double precision on the host by
 * LAPACK (found at run time: OpenBLAS's or liblapack.so.3; WGT_ERR_UNAVAILABLE without one).
 * Eager: the input is evaluated and read back, the result is a new tensor. An exactly singular
 * matrix is an error (WGT_ERR_INVALID_ARGUMENT naming its batch index), as NumPy's LinAlgError.
 * inv: the inverse. solve: x with a x = b, b [n] (one vector) or [..., n, k], batches
 * broadcast. det: [...]; 0 for a singular matrix. cholesky: L (lower, L L^T = a) or with upper
 * U = L^T; reads a's lower triangle only; not positive definite is an error. */
wgt_tensor *wgt_linalg_inv(wgt_tensor *a);
wgt_tensor *wgt_linalg_solve(wgt_tensor *a, wgt_tensor *b);
wgt_tensor *wgt_linalg_det(wgt_tensor *a);
wgt_tensor *wgt_linalg_cholesky(wgt_tensor *a, int upper);
/* Norms (f32, f16; computed in f32). vector_norm over the axes listed (naxes 0: all): ord
 * inf, -inf (max, min of |a|), 0 (count of nonzeros), or any other p: (sum |a|^p)^(1/p),
 * scaled by the largest magnitude for p > 0 so nothing overflows. matrix_norm over the last two
 * axes: ord "fro" (or NULL), "1", "-1" (max, min column sum of |a|), "inf", "-inf" (row sums),
 * "2", "-2" (largest, smallest singular value), "nuc" (their sum; singular values by LAPACK on
 * the host, so eager, as wgt_linalg_svdvals). */
wgt_tensor *wgt_linalg_vector_norm(wgt_tensor *a, double ord, int naxes, const int *axes, int keepdims);
wgt_tensor *wgt_linalg_matrix_norm(wgt_tensor *a, const char *ord, int keepdims);

/* ---- linear algebra: decompositions and what is built on them ---------------------------- */
/* f32 (or f16) batches [..., m, n], factorized on the host in double by LAPACK and eager, as
 * the dense factorizations above; a matrix that does not converge (or, for svd and eigh, holds a
 * non-finite value) is WGT_ERR_INVALID_ARGUMENT naming its batch index.
 * qr (dgeqrf, dorgqr): a = Q R, Q [..., m, k] with orthonormal columns, R [..., k, n] upper
 * triangular, k = min(m, n); complete: Q [..., m, m], R [..., m, n].
 * slogdet: sign [...] (1, -1; 0 for an exactly singular matrix) and log|det| [...] (-inf when
 * singular) from the LU, so neither overflows where det would.
 * svd (dgesdd): a = U diag(S) Vh, S [..., k] descending, U [..., m, k], Vh [..., k, n]; with
 * full_matrices U [..., m, m], Vh [..., n, n]. svdvals: S alone.
 * eigh (dsyevd): eigenvalues [..., n] ascending and eigenvectors [..., n, n] (orthonormal
 * columns) of symmetric matrices; reads the lower triangle only, as NumPy. eigvalsh: the
 * eigenvalues alone. */
wgt_status wgt_linalg_qr(wgt_tensor *a, int complete, wgt_tensor **q, wgt_tensor **r);
wgt_status wgt_linalg_slogdet(wgt_tensor *a, wgt_tensor **sign, wgt_tensor **logabsdet);
wgt_status wgt_linalg_svd(wgt_tensor *a, int full_matrices, wgt_tensor **u, wgt_tensor **s, wgt_tensor **vh);
wgt_tensor *wgt_linalg_svdvals(wgt_tensor *a);
wgt_status wgt_linalg_eigh(wgt_tensor *a, wgt_tensor **eigenvalues, wgt_tensor **eigenvectors);
wgt_tensor *wgt_linalg_eigvalsh(wgt_tensor *a);
/* From the singular values, as the array API: pinv [..., n, m] drops those at or below rtol
 * times the largest; matrix_rank [...] (i32) counts those above it. rtol < 0: the standard's
 * default, max(m, n) * f32 epsilon. */
wgt_tensor *wgt_linalg_pinv(wgt_tensor *a, double rtol);
wgt_tensor *wgt_linalg_matrix_rank(wgt_tensor *a, double rtol);
/* a^n for square a [..., n, n] (f32, f16) by repeated squaring with matmul (lazy, both
 * backends); n = 0 gives the identity, n < 0 the power of wgt_linalg_inv(a). */
wgt_tensor *wgt_linalg_matrix_power(wgt_tensor *a, int64_t n);
/* The cross product of 3-vectors along axis (of the broadcast shape; negative counts from the
 * end, and must be when the ranks differ): a and b broadcast and both have length 3 there. Any
 * type mul and sub take; lazy, both backends. */
wgt_tensor *wgt_linalg_cross(wgt_tensor *a, wgt_tensor *b, int axis);

/* ---- normalisation and activation rows ---------------------------------------------- */
/* Floating types; computed in f32. The result has a's shape; along an axis other than the
 * last it is a (non-contiguous) view. A row whose maximum is NaN or infinite, or that is all
 * -inf, gives NaN, as in PyTorch. */
wgt_tensor *wgt_softmax(wgt_tensor *a, int axis);
wgt_tensor *wgt_log_softmax(wgt_tensor *a, int axis);
/* Over the last axis: (x - mean) / sqrt(var + eps) * weight + bias; weight and bias are
 * [D] or NULL. */
wgt_tensor *wgt_layer_norm(wgt_tensor *a, wgt_tensor *weight, wgt_tensor *bias, double eps);
/* Over the last axis: x / sqrt(mean(x^2) + eps) * weight; weight is [D] or NULL. */
wgt_tensor *wgt_rms_norm(wgt_tensor *a, wgt_tensor *weight, double eps);

/* ---- shape -------------------------------------------------------------------------- */
/* Views unless stated. axes lists a permutation of 0..ndim-1 (negative allowed). */
wgt_tensor *wgt_permute(wgt_tensor *a, const int *axes);
wgt_tensor *wgt_squeeze(wgt_tensor *a, int axis); /* the axis must have length 1 */
wgt_tensor *wgt_unsqueeze(wgt_tensor *a, int axis); /* axis in -(ndim+1)..ndim */
/* As wgt_broadcast_to, where -1 keeps a's dimension. */
wgt_tensor *wgt_expand(wgt_tensor *a, int ndim, const int64_t *shape);
wgt_tensor *wgt_flip(wgt_tensor *a, int naxes, const int *axes); /* naxes 0 flips every axis */
/* New tensors: all inputs share dtype and context and agree on every other dimension. */
wgt_tensor *wgt_concat(wgt_tensor *const *tensors, int count, int axis);
wgt_tensor *wgt_stack(wgt_tensor *const *tensors, int count, int axis);
/* Views of consecutive pieces along axis with the given sizes (summing to its length);
 * out receives count tensors. */
wgt_status wgt_split(wgt_tensor *a, int axis, int count, const int64_t *sizes, wgt_tensor **out);
/* A new tensor with before[d] and after[d] elements of value added on each side of dim d. */
wgt_tensor *wgt_pad(wgt_tensor *a, const int64_t *before, const int64_t *after, double value);

/* ---- indexing ----------------------------------------------------------------------- */
/* Index tensors are i32, u32, i64 or u64 (NumPy's default integer) of any shape and layout;
 * an index out of range (a negative one included, and a 64-bit one past 2^32, never wrapped to
 * its low word) is WGT_ERR_INVALID_ARGUMENT naming its position, its value and the bound, and
 * nothing is written. Reading indices that live on the device waits for them. Indices read by
 * a compiled graph's op are checked again at each wgt_graph_dispatch, which fails that way if
 * they were written out of range since (an i64 or u64 index tensor that is not a graph input
 * is read once, when the op is recorded). 64-bit indices address at most 2^32 - 1 rows or
 * entries (more is WGT_ERR_LIMIT). */
/* table [N, ...] rows at indices (any shape): [indices..., ...] (an embedding lookup). */
wgt_tensor *wgt_gather_rows(wgt_tensor *table, wgt_tensor *indices);
/* Elements at 1-D indices along axis (numpy.take). Negative indices are errors. */
wgt_tensor *wgt_index_select(wgt_tensor *a, int axis, wgt_tensor *indices);
/* dst[indices[i]] = rows[i] for 1-D indices and rows of shape [len(indices), dst row...];
 * dst is written in place (it needs the writable usage) and may be any view that does not
 * address an element twice (a broadcast dst is WGT_ERR_USAGE). Repeated indices: the last
 * wins. With rows or indices computed from graph inputs and a dst that holds data (a KV
 * cache), the write joins the next wgt_graph_build: each dispatch writes dst in place at
 * this point of the recorded order, and dst stays a tensor with data (one made by wgt_zeros
 * and never written holds none yet: the write makes it a graph value, so make a cache with
 * wgt_full or write it once first). Graph ops read dst's
 * contents at dispatch only when they also read a graph value (an op over tensors with data
 * alone runs once, when recorded). */
wgt_status wgt_set_rows(wgt_tensor *dst, wgt_tensor *indices, wgt_tensor *rows);
/* [indices..., classes] of dtype with 1 at each index; an index outside 0..classes-1 is an error
 * (for indices computed from graph inputs, of the dispatch). */
wgt_tensor *wgt_one_hot(wgt_tensor *indices, int64_t classes, wgt_dtype dtype);
/* Upper / lower triangle of the last two dimensions, others set to 0: element (i, j) is kept
 * when j - i >= diagonal (triu) or j - i <= diagonal (tril). */
wgt_tensor *wgt_triu(wgt_tensor *a, int64_t diagonal);
wgt_tensor *wgt_tril(wgt_tensor *a, int64_t diagonal);

/* ---- take and scatter ---------------------------------------------------------------- */
/* Indices as in the section above (i32, u32, i64 or u64; out of range is an error naming the
 * value). take and take_along_axis count negative indices from the end, as NumPy does (-1 is
 * the last entry along the axis; valid: -n..n-1); scatter and index_add take 0..n-1 only.
 * The results are new tensors (take's a view of one); no operand is written. */
/* Entries of a at indices (any shape) along axis: shape a[:axis] + indices + a[axis+1:]
 * (numpy.take; for the flattened array take a reshape of a to 1-D). */
wgt_tensor *wgt_take(wgt_tensor *a, wgt_tensor *indices, int axis);
/* out[..., i, ...] = a[..., indices[..., i, ...], ...] along axis (numpy.take_along_axis):
 * indices have a's rank and broadcast with a in the other dimensions. */
wgt_tensor *wgt_take_along_axis(wgt_tensor *a, wgt_tensor *indices, int axis);
typedef enum {
    WGT_SCATTER_REPLACE, /* the last of repeated positions (in row-major order of index) wins */
    WGT_SCATTER_ADD      /* repeated positions sum (f32; summed exactly, rounded once) */
} wgt_scatter_mode;
/* A copy of base where, for each position p of index, the element at p with its axis
 * coordinate replaced by index[p] is set to (or increased by) src[p] (torch.scatter and
 * scatter_add). index has base's rank and no dimension longer than base's except along
 * axis; src has base's dtype and broadcasts to index's shape (a scalar tensor puts one value). */
wgt_tensor *wgt_scatter(wgt_tensor *base, int axis, wgt_tensor *index, wgt_tensor *src, wgt_scatter_mode mode);
/* A copy of a (f32) with src's slices added at 1-D indices along axis: src has a's shape but
 * len(indices) along axis; repeated indices sum (torch.index_add). */
wgt_tensor *wgt_index_add(wgt_tensor *a, int axis, wgt_tensor *indices, wgt_tensor *src);

/* ---- manipulation and masks ------------------------------------------------------------ */
/* moveaxis, roll, tile, diagonal, repeat and masked_select, with tril, triu, take,
 * take_along_axis and index_select, take every type but the block types (docs/ops.md). */
/* a with axis source moved to position destination, the others in order (a view). */
wgt_tensor *wgt_moveaxis(wgt_tensor *a, int source, int destination);
/* a with entries shifted by shifts[i] along axes[i] (negative shifts go back; repeated axes
 * add up); axes NULL: count 1 and the flattened tensor shifts, keeping a's shape. */
wgt_tensor *wgt_roll(wgt_tensor *a, int count, const int64_t *shifts, const int *axes);
/* Each entry along axis repeated repeats[0] times (count 1) or repeats[i] times (count the
 * axis' length), in order (numpy.repeat; for the flattened array repeat a 1-D reshape). */
wgt_tensor *wgt_repeat(wgt_tensor *a, int count, const int64_t *repeats, int axis);
/* numpy.tile: a repeated reps[i] times along each dimension, reps and a's shape aligned at the
 * end (the shorter padded with 1s). WGT_ERR_LIMIT when the rank plus the number of repeated
 * axes passes 8. */
wgt_tensor *wgt_tile(wgt_tensor *a, int nreps, const int64_t *reps);
/* The diagonal of axes axis1 and axis2 at offset (above the main one when positive) as a view:
 * those axes removed and the diagonal appended last (numpy.diagonal). */
wgt_tensor *wgt_diagonal(wgt_tensor *a, int64_t offset, int axis1, int axis2);
/* The sum of that diagonal (numpy.trace); the sum's type as wgt_sum gives it. */
wgt_tensor *wgt_trace(wgt_tensor *a, int64_t offset, int axis1, int axis2);
/* numpy.diag: a vector gives a new square matrix with it on diagonal k (zeros elsewhere), a
 * matrix its diagonal k (a view). */
wgt_tensor *wgt_diag(wgt_tensor *a, int64_t k);
/* a where mask (bool, or any type with nonzero true; broadcast to a's shape) is false, value where it
 * is true; value must fit a's type as for the scalar ops. */
wgt_tensor *wgt_masked_fill(wgt_tensor *a, wgt_tensor *mask, double value);
/* The entries of a where mask (broadcast to a's shape) is nonzero, in row-major order: a 1-D
 * tensor whose length is the mask's count, so the mask's values are read (a synchronisation). */
wgt_tensor *wgt_masked_select(wgt_tensor *a, wgt_tensor *mask);
/* ---- searching and sorting (src/core/sort.c, unique.c) ------------------------------- */
/* f32, f16, i32 and u32 (others are WGT_ERR_DTYPE). The order is total: NaN counts as larger
 * than +inf (last ascending, first descending; NaNs equal one another), -0.0 equals 0.0.
 * Sorts are stable in both directions: equal elements keep their original order. Indices
 * are i32 (positions along the axis). A rank-0 tensor is one row of one element. */
/* Along axis (negative counts from the end); the result has a's shape (along an axis other
 * than the last, a non-contiguous view). */
wgt_tensor *wgt_sort(wgt_tensor *a, int axis, int descending);
wgt_tensor *wgt_argsort(wgt_tensor *a, int axis, int descending);
/* The k largest (largest != 0) or smallest elements along axis, and their indices: a's shape
 * with k along axis. Results come sorted (largest first, or smallest first) whatever sorted
 * says (0 only allows any order); equal elements come in index order. k may be 0; more than
 * the axis length is WGT_ERR_SHAPE. values and indices must not be NULL; on failure both are
 * set to NULL. */
wgt_status wgt_topk(wgt_tensor *a, int64_t k, int axis, int largest, int sorted, wgt_tensor **values,
                    wgt_tensor **indices);
/* For each element of values, the i32 position in the 1-D ascending sorted_1d where it would
 * be inserted to keep the order: before equal elements (right 0) or after them (right 1), as
 * numpy.searchsorted. Same dtype for both; the result has values' shape. */
wgt_tensor *wgt_searchsorted(wgt_tensor *sorted_1d, wgt_tensor *values, int right);
/* The distinct elements of a (flattened), ascending; each NaN is distinct (the array API's
 * rule), -0.0 and 0.0 are one value (the first of them in a). Any of the outputs may be NULL
 * when not wanted: values (1-D, a's dtype), indices (i32, the flat position of each value's
 * first occurrence), inverse (i32, a's shape: the position in values of each element) and
 * counts (i32). The count of distinct elements is only known once a is computed: these wait
 * for a (a sync), sort on the backend and size the outputs on the host. unique, nonzero and
 * argwhere also take bf16, i16, u16, i8, u8 and bool (read exactly as i32, bf16 as f32; unique's
 * values keep a's type). */
wgt_status wgt_unique(wgt_tensor *a, wgt_tensor **values, wgt_tensor **indices, wgt_tensor **inverse,
                      wgt_tensor **counts);
/* Positions of the nonzero elements (NaN is nonzero, -0.0 is zero) in row-major order; they
 * wait for a and are sized on the host. nonzero writes a's rank i32 tensors of the count,
 * one per dimension, into out (rank 0 is WGT_ERR_SHAPE); argwhere gives one i32 tensor
 * [count, rank]. */
wgt_status wgt_nonzero(wgt_tensor *a, wgt_tensor **out);
wgt_tensor *wgt_argwhere(wgt_tensor *a);

/* ---- quantized weights (docs/quant.md) ---------------------------------------------- */
/* Elements per block (32 for q8_0 and q4_0, 1 for the other types) and bytes per block (34,
 * 18; the element size for the other types); 0 for an unknown type. A block-type tensor of
 * shape [..., K] holds numel / 32 blocks, K a multiple of 32, and reads and writes (and its
 * wgt_tensor_nbytes) are in ggml's bytes. Its views must keep blocks whole: the last
 * dimension has stride 1 and a length that is a multiple of 32, and the offset and every
 * other stride are multiples of 32 (wgt_slice, wgt_reshape, wgt_squeeze, wgt_unsqueeze,
 * wgt_split and wgt_as_strided make such views). Ops other than those of this section,
 * wgt_cast, wgt_linear and wgt_gather_rows refuse block types with WGT_ERR_DTYPE. */
int64_t wgt_dtype_block_elements(wgt_dtype dtype);
size_t wgt_dtype_block_bytes(wgt_dtype dtype);
/* f32 or f16 a [..., K] (any view) quantized along its last dimension to q8_0 or q4_0, with
 * ggml's reference rounding (q8_0: d = max|x| / 127, q = round half away from zero of x / d;
 * q4_0: d = -m / 8 for the m of largest magnitude, q = min(15, floor(x / d + 8.5))). K must
 * be a multiple of 32 (WGT_ERR_SHAPE). wgt_cast to a block type does the same. */
wgt_tensor *wgt_quantize(wgt_tensor *a, wgt_dtype dtype);
/* A block-type tensor's values as f32 or f16 (rounded once from the f32 value); wgt_cast
 * from a block type does the same. */
wgt_tensor *wgt_dequantize(wgt_tensor *q, wgt_dtype dtype);
/* x @ w^T for x [..., K] (f32 or f16, any view) and a block-type weight w [N, K] quantized
 * along K: [..., N] of x's type, accumulated in f32. wgt_linear takes such a weight too. */
wgt_tensor *wgt_matmul_quantized(wgt_tensor *x, wgt_tensor *w);

/* KV-cache decoding: writes x [..., n, d] into cache [..., length, d] at positions pos ..
 * pos + n - 1 of the sequence axis (the second to last); the other dimensions must match.
 * Attention over the filled prefix is wgt_attention of the query with wgt_slice(cache, -2,
 * 0, filled, 1) views (docs/quant.md). */
wgt_status wgt_kv_cache_append(wgt_tensor *cache, wgt_tensor *x, int64_t pos);

/* ---- GGUF files (docs/quant.md) --------------------------------------------------------- */
/* The file format of ggml and llama.cpp (versions 2 and 3, little-endian): metadata key-value
 * pairs, then tensor descriptions, then the tensors' bytes. Malformed files (truncated, bad
 * magic or version, absurd counts or lengths, offsets past the end, misaligned data) give
 * WGT_ERR_INVALID_ARGUMENT naming what is wrong and where; a file that cannot be opened, read
 * or written gives WGT_ERR_UNAVAILABLE with the system's reason. */
typedef enum wgt_gguf_type {
    WGT_GGUF_UINT8 = 0, WGT_GGUF_INT8 = 1, WGT_GGUF_UINT16 = 2, WGT_GGUF_INT16 = 3,
    WGT_GGUF_UINT32 = 4, WGT_GGUF_INT32 = 5, WGT_GGUF_FLOAT32 = 6, WGT_GGUF_BOOL = 7,
    WGT_GGUF_STRING = 8, WGT_GGUF_ARRAY = 9, WGT_GGUF_UINT64 = 10, WGT_GGUF_INT64 = 11,
    WGT_GGUF_FLOAT64 = 12
} wgt_gguf_type;
typedef struct wgt_gguf_string {
    uint64_t len;
    const char *data; /* len bytes, followed by a NUL the file does not hold */
} wgt_gguf_string;
/* One metadata entry. data holds count values of elem_type in host layout: uint8_t ...
 * double, one byte per bool, wgt_gguf_string per string. A scalar has type == elem_type and
 * count 1; an array has type WGT_GGUF_ARRAY (arrays of arrays are not supported). */
typedef struct wgt_gguf_kv {
    const char *key;
    wgt_gguf_type type;
    wgt_gguf_type elem_type;
    uint64_t count;
    const void *data;
} wgt_gguf_kv;
typedef struct wgt_gguf_tensor_info {
    const char *name;
    int ndim;
    int64_t shape[WGT_MAX_DIMS]; /* row-major, outermost first (GGUF lists them innermost first) */
    uint32_t ggml_type;          /* the file's type number */
    wgt_dtype dtype;             /* f32, f16, i32, q8_0, q4_0; 0 for a type wgtensor cannot load */
    uint64_t offset;             /* in the file */
    uint64_t nbytes;
} wgt_gguf_tensor_info;
typedef struct wgt_gguf wgt_gguf;
/* Reads and checks the header, the metadata and the tensor descriptions; tensor bytes stay in
 * the file until loaded. NULL on error. */
wgt_gguf *wgt_gguf_open(const char *path);
void wgt_gguf_close(wgt_gguf *g);
uint32_t wgt_gguf_version(const wgt_gguf *g);
int64_t wgt_gguf_kv_count(const wgt_gguf *g);
const wgt_gguf_kv *wgt_gguf_kv_at(const wgt_gguf *g, int64_t i); /* NULL when out of range */
const wgt_gguf_kv *wgt_gguf_find_kv(const wgt_gguf *g, const char *key); /* NULL when absent */
int64_t wgt_gguf_tensor_count(const wgt_gguf *g);
const wgt_gguf_tensor_info *wgt_gguf_tensor_at(const wgt_gguf *g, int64_t i);
int64_t wgt_gguf_find_tensor(const wgt_gguf *g, const char *name); /* -1 when absent */
/* A new tensor holding the named tensor's bytes, streamed from the file into its storage in
 * chunks (the tensor is never held twice in host memory). */
wgt_tensor *wgt_gguf_load(wgt_gguf *g, wgt_context *ctx, const char *name, unsigned usage);
/* Writing: metadata and tensors are collected, then saved in one pass (one tensor's bytes in
 * host memory at a time). Keys and names must be unique; the writer copies metadata and holds
 * a reference to each tensor (f32, f16, i32, q8_0, q4_0; any view) until released. */
typedef struct wgt_gguf_writer wgt_gguf_writer;
wgt_gguf_writer *wgt_gguf_writer_create(void);
wgt_status wgt_gguf_writer_set(wgt_gguf_writer *w, const wgt_gguf_kv *kv);
wgt_status wgt_gguf_writer_add_tensor(wgt_gguf_writer *w, const char *name, wgt_tensor *t);
/* alignment of the tensor data: a power of two, 0 for GGUF's default 32 (written as
 * general.alignment when not 32). */
wgt_status wgt_gguf_writer_save(wgt_gguf_writer *w, const char *path, uint32_t alignment);
void wgt_gguf_writer_release(wgt_gguf_writer *w);

/* ---- transformer pieces ------------------------------------------------------------- */
/* Rotary position embedding, "rotate half" layout (pairs (i, i + d/2) of the last dim d):
 * x [..., seq, d] with d even; positions (i32, u32, i64 or u64) [seq] or NULL for 0..seq-1;
 * frequencies base^(-2i/d). */
wgt_tensor *wgt_rope(wgt_tensor *x, wgt_tensor *positions, double base);
/* softmax(q k^T * scale [+ causal mask]) v for q [..., Lq, d], k [..., Lk, d], v [..., Lk, dv];
 * scale 0 means 1/sqrt(d); causal masks key j > query i + (Lk - Lq) (queries are the last Lq
 * positions), and a query the mask leaves no key gets NaN, as in PyTorch; with no keys at all
 * (Lk = 0) the result is zeros, an empty sum, as in PyTorch too. One fused kernel on WebGPU
 * (dv up to 256, even for f16) where the problem has enough blocks of queries to fill the GPU,
 * else composed from matmul, where and softmax (wgt_context_options.attention decides). */
wgt_tensor *wgt_attention(wgt_tensor *q, wgt_tensor *k, wgt_tensor *v, int causal, double scale);

/* ---- attention over a prefix of the keys (src/core/transformer.c) ------------------------- */
/* wgt_attention without a causal mask over the first count keys only: count is an i32 or u32
 * tensor of one element, read when the op runs (so a compiled graph can take it as an
 * input), clamped to [0, Lk]; rows of k and v past it are never read. A query sees no key
 * when count <= 0: NaN, as wgt_attention gives. For decoding over a KV cache of fixed size
 * (grouped heads: q [kv_heads, group, d] beside k, v [kv_heads, Lk, d], no copies). One
 * fused kernel on WebGPU wherever wgt_attention's kernel takes the dtype and head sizes
 * (wgt_context_options.attention = COMPOSE aside), else composed. Not differentiable. */
wgt_tensor *wgt_attention_prefix(wgt_tensor *q, wgt_tensor *k, wgt_tensor *v, wgt_tensor *count, double scale);

/* ---- convolutions (src/core/conv.c) ----------------------------------------------------- */
/* PyTorch's layouts and arithmetic: x [N, Cin, H, W] (conv1d: [N, Cin, L]), weight
 * [Cout, Cin/groups, kH, kW] ([Cout, Cin/groups, k]), bias [Cout] or NULL, all of one
 * floating type (f16 accumulates in f32 and is rounded once). stride, padding and dilation
 * are {height, width} (NULL: 1, 0 and 1); padding pads both sides with zeros, and
 * WGT_PADDING_SAME (stride 1 only, every dimension) pads so the output keeps the input's
 * size, the odd one at the end. groups must divide Cin and Cout. */
#define WGT_PADDING_SAME (-1)
wgt_tensor *wgt_conv2d(wgt_tensor *x, wgt_tensor *weight, wgt_tensor *bias, const int64_t *stride,
                       const int64_t *padding, const int64_t *dilation, int64_t groups);
wgt_tensor *wgt_conv1d(wgt_tensor *x, wgt_tensor *weight, wgt_tensor *bias, int64_t stride, int64_t padding,
                       int64_t dilation, int64_t groups);
/* The gradient of conv2d with respect to its input, as a layer: weight [Cin, Cout/groups, kH,
 * kW]; output size (H - 1) stride - 2 padding + dilation (kH - 1) + output_padding + 1 per
 * dimension; output_padding (NULL: 0) must be smaller than the stride or the dilation. */
wgt_tensor *wgt_conv_transpose2d(wgt_tensor *x, wgt_tensor *weight, wgt_tensor *bias, const int64_t *stride,
                                 const int64_t *padding, const int64_t *output_padding, const int64_t *dilation,
                                 int64_t groups);

/* ---- pooling (src/core/pool.c) ----------------------------------------------------------- */
/* Over the last two dimensions of x [N, C, H, W] (f32, f16), with torch.nn.functional's rules.
 * kernel_size, stride, padding, dilation are {height, width}; stride NULL is the kernel,
 * padding NULL 0 (at most half the kernel's span, filled with -inf for max and zeros for
 * average), dilation NULL 1. ceil_mode rounds the output size up (the last window must start
 * inside the input or its padding before). avg_pool2d divides each window by its size clipped
 * to the padded input (count_include_pad) or by the input elements it covers. */
wgt_tensor *wgt_max_pool2d(wgt_tensor *x, const int64_t *kernel_size, const int64_t *stride, const int64_t *padding,
                           const int64_t *dilation, int ceil_mode);
wgt_tensor *wgt_avg_pool2d(wgt_tensor *x, const int64_t *kernel_size, const int64_t *stride, const int64_t *padding,
                           int ceil_mode, int count_include_pad);
/* The mean of window i = [floor(i H / out_h), ceil((i + 1) H / out_h)) by the same in width. */
wgt_tensor *wgt_adaptive_avg_pool2d(wgt_tensor *x, int64_t out_h, int64_t out_w);

/* ---- neural-network layers (src/core/nn_layers.c) --------------------------------------- */
/* Training-mode dropout of x (f32, f16): element i is kept, scaled by 1 / (1 - p), when draw i
 * of wgt_rand_uniform(f32, x's shape, 0, 1, seed) is at least p (as an f32), else it is 0; so
 * a seed gives one mask on every backend, and the gradient applies the same mask. p = 0
 * gives x's values, p = 1 zeros; p outside [0, 1] is WGT_ERR_INVALID_ARGUMENT. In a compiled
 * graph the mask is drawn when the op is recorded and every dispatch reuses it (for a new
 * mask per dispatch, wgt_dropout_seeded with the seed as a graph input). */
wgt_tensor *wgt_dropout(wgt_tensor *x, double p, uint64_t seed);
/* wgt_dropout with the seed in a u32 tensor [2] (its low word, then its high word), read when
 * the mask is drawn: a compiled graph taking it as an input draws a new mask at each dispatch
 * from the seed bound to it (the mask of wgt_dropout with that seed). */
wgt_tensor *wgt_dropout_seeded(wgt_tensor *x, double p, wgt_tensor *seed);
/* Inference-mode batch normalisation of x [N, C, ...] (f32, f16) along dimension 1:
 * (x - running_mean[c]) * weight[c] / sqrt(running_var[c] + eps) + bias[c]; the statistics,
 * weight and bias are [C] of x's type, weight and bias may be NULL. */
wgt_tensor *wgt_batch_norm(wgt_tensor *x, wgt_tensor *running_mean, wgt_tensor *running_var, wgt_tensor *weight,
                           wgt_tensor *bias, double eps);
/* Group normalisation of x [N, C, ...] (f32, f16): the channels form `groups` groups of
 * C / groups, each sample's group is normalised over its values (population variance, + eps),
 * then weight[c] and bias[c] ([C] or NULL) apply, as torch.nn.functional.group_norm. */
wgt_tensor *wgt_group_norm(wgt_tensor *x, int64_t groups, wgt_tensor *weight, wgt_tensor *bias, double eps);
typedef enum wgt_interp_mode {
    WGT_INTERP_NEAREST,       /* PyTorch's "nearest": source floor(o in / out) */
    WGT_INTERP_NEAREST_EXACT, /* "nearest-exact": source floor((o + 0.5) in / out) */
    WGT_INTERP_LINEAR         /* "linear", "bilinear", "trilinear" by x's rank */
} wgt_interp_mode;
/* torch.nn.functional.interpolate of x [N, C, spatial...] (1 to 3 spatial dimensions; f32,
 * f16) to size (one length per spatial dimension) or by scale (one factor each: the length
 * floor(in scale), positions mapped with 1 / scale); exactly one of the two is given.
 * align_corners (linear modes only) maps the corner pixels' centres onto each other. */
wgt_tensor *wgt_interpolate(wgt_tensor *x, const int64_t *size, const double *scale, wgt_interp_mode mode,
                            int align_corners);

/* ---- automatic differentiation (src/autograd/; docs/autograd.md) ----------------------- */
/* Reverse mode over the lazy graph. A floating tensor marked with wgt_requires_grad is a leaf:
 * every op whose argument needs a gradient records how to differentiate its result, and
 * wgt_backward runs that record backwards as ordinary lazy ops (fused and batched like the
 * forward, and recorded into a compiled graph when the loss comes from graph inputs).
 * Gradients accumulate into the leaves until wgt_zero_grad. The record is held by the tensors
 * computed from the leaves and goes when they are released. Writing a tensor in place after an
 * op read it (wgt_tensor_write, wgt_set_rows, an optimizer step) leaves gradients computed
 * later from that op wrong: run the backward pass first. */

/* on: t (f32 or f16, not computed by a tracked op) becomes a leaf that gets a gradient;
 * off: it stops getting one (its gradient so far stays). */
wgt_status wgt_requires_grad(wgt_tensor *t, int on);
/* 1 when gradients flow into t (a leaf marked, or computed from one outside a no-grad scope). */
int wgt_tensor_requires_grad(const wgt_tensor *t);
/* Accumulates d loss / d leaf into every leaf loss depends on. grad is d(result) / d loss of
 * loss's shape, or NULL for a loss of one element (then 1). Fails naming the op where an op
 * without a gradient (comparisons, argmax, isnan, ...) lies on the way to a leaf. */
wgt_status wgt_backward(wgt_tensor *loss, wgt_tensor *grad);
/* The accumulated gradient of a leaf (a new reference), or NULL when it has none. */
wgt_tensor *wgt_grad(wgt_tensor *t);
/* Forgets t's accumulated gradient. */
wgt_status wgt_zero_grad(wgt_tensor *t);
/* Ops between begin and end on this thread record no gradients; scopes nest. */
void wgt_no_grad_begin(void);
wgt_status wgt_no_grad_end(void);
/* A view of t's elements that no gradient flows through (a new reference). */
wgt_tensor *wgt_detach(wgt_tensor *t);

/* mean over rows of -log softmax(logits)[target]: logits [..., C] (f32, f16), targets i32, u32,
 * i64 or u64 of logits' shape without its last dimension, each in 0..C-1 (else
 * WGT_ERR_INVALID_ARGUMENT naming it). A rank-0 result of logits' type; its gradient is (softmax - one_hot) / rows,
 * one fused elementwise kernel. */
wgt_tensor *wgt_cross_entropy(wgt_tensor *logits, wgt_tensor *targets);

/* Optimizers update their parameters in place from the parameters' accumulated gradients
 * (parameters without a gradient are left alone); each keeps a reference to its parameters
 * and its own state (momentum, moments). Parameters are f32 or f16 tensors marked with
 * wgt_requires_grad; the update is recorded as lazy elementwise ops, fused. */
typedef struct wgt_optimizer wgt_optimizer;
/* v = momentum v + (g + weight_decay p); p -= lr v (PyTorch's SGD; momentum 0: plain SGD). */
wgt_optimizer *wgt_sgd(int n, wgt_tensor *const *params, double lr, double momentum, double weight_decay);
/* AdamW (Loshchilov and Hutter, as torch.optim.AdamW): p -= lr (m^ / (sqrt(v^) + eps) + weight_decay p). */
wgt_optimizer *wgt_adamw(int n, wgt_tensor *const *params, double lr, double beta1, double beta2, double eps,
                         double weight_decay);
/* Over gradients computed from graph inputs, the update is recorded into the next
 * wgt_graph_build of the context: each dispatch of that graph updates the parameters and the
 * state in place, at the learning rate set when it is dispatched. */
wgt_status wgt_optimizer_step(wgt_optimizer *opt);
/* Forgets the gradients of every parameter (wgt_zero_grad). */
wgt_status wgt_optimizer_zero_grad(wgt_optimizer *opt);
wgt_status wgt_optimizer_set_lr(wgt_optimizer *opt, double lr);
double wgt_optimizer_lr(const wgt_optimizer *opt);
void wgt_optimizer_release(wgt_optimizer *opt);
/* Learning rate at step (from 0): linear warmup from 0 to peak over warmup steps, then a
 * cosine from peak down to min_lr at total steps, min_lr after. */
double wgt_lr_warmup_cosine(int64_t step, int64_t warmup, int64_t total, double peak, double min_lr);
/* Scales the gradients of the n parameters so that their global L2 norm is at most max_norm;
 * *norm_out (may be NULL) receives the norm before scaling (this reads it: a wait). */
wgt_status wgt_clip_grad_norm(int n, wgt_tensor *const *params, double max_norm, double *norm_out);

/* ---- saving and loading tensors (src/autograd/; docs/autograd.md) --------------------- */
/* Real formats, little-endian, row-major: what NumPy's np.save / np.load and the safetensors
 * libraries write and read. Types f32, f16, i32, u32. A malformed file (truncated, a bad
 * header, sizes that do not add up or are absurd, an unsupported type) is WGT_ERR_INVALID_ARGUMENT
 * naming the file and what is wrong; it never crashes. */
/* NumPy .npy (format 1.0, or 2.0 for a header past 64 KiB). */
wgt_status wgt_save_npy(wgt_tensor *t, const char *path);
/* Reads .npy versions 1.0 to 3.0; Fortran order is read into row-major. */
wgt_tensor *wgt_load_npy(wgt_context *ctx, const char *path, unsigned usage);
/* A safetensors file of n named tensors (names unique, non-empty). */
wgt_status wgt_save_safetensors(const char *path, int n, const char *const *names, wgt_tensor *const *tensors);
/* The tensor called name in a safetensors file. */
wgt_tensor *wgt_load_safetensors(wgt_context *ctx, const char *path, const char *name, unsigned usage);
/* The names in a safetensors file, one per line in the file's order; caller frees(). */
char *wgt_safetensors_names(const char *path);

#if defined(__GNUC__) || defined(__clang__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif
