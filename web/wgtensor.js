// wgtensor for JavaScript: the C library built as WebAssembly (wgtensor.wasm, beside this
// module) with an ES module API, the same in a page and in Node (docs/web.md).
//
//   import * as wgtensor from "wgtensor";
//   const ctx = await wgtensor.init({ backend: "webgpu" });
//   const a = ctx.tensor(new Float32Array([1, 2, 3, 4]), [2, 2]);
//   const b = a.matmul(a).add(1);
//   console.log(await b.read());
//   b.dispose(); a.dispose(); await ctx.dispose();
//
// Every function of include/wgtensor.h whose arguments are tensors, numbers, shapes and
// strings is bound from a table generated from the header (src/api_table.js): ops that take
// a tensor first are Tensor methods and functions of `ops`, creators are Context methods.
// Ops record work and return at once; what waits for the device (read, sync, dispatch,
// context creation, compiling a graph or a kernel) is async and suspends the wasm stack
// (JSPI). V8 refuses a Suspending import called outside WebAssembly.promising even when it
// would not suspend, so nothing that may wait is called synchronously. While such a call is in
// flight, other calls into the library throw: C code is never re-entered half-way.
import { FUNCTIONS } from "./src/api_table.js";
import { requireJSPI } from "./src/jspi.js";
import { layouts, webgpuImports } from "./src/webgpu_imports.js";

// wgt_dtype's values (include/wgtensor.h); bf16 travels as its bits in a Uint16Array.
const DTYPES = { f32: 1, f16: 2, i32: 3, u32: 4, bool: 7, i8: 8, u8: 9, i16: 10, u16: 11, bf16: 12 };
const DTYPE_NAMES = Object.fromEntries(Object.entries(DTYPES).map(([k, v]) => [v, k]));
const ARRAYS = {
  f32: Float32Array, f16: globalThis.Float16Array ?? Uint16Array, i32: Int32Array, u32: Uint32Array,
  bool: Uint8Array, i8: Int8Array, u8: Uint8Array, i16: Int16Array, u16: Uint16Array, bf16: Uint16Array,
};
const BACKENDS = { auto: 0, webgpu: 1, cpu: 2 };
const isNode = typeof process !== "undefined" && !!process.versions?.node;

/** A failure of the library: its message, and the status's name (e.g. "shape mismatch"). */
export class WgtError extends Error {
  constructor(message, status) {
    super(message);
    this.name = "WgtError";
    this.status = status;
  }
}

let lib = null; // the one instance of the library this module drives

async function load({ gpu, gpuName, why, unsafe = false }) {
  // Without JSPI nothing can wait for a GPU: the CPU backend still works, WebGPU says why not.
  const jspi = typeof WebAssembly.promising === "function" && typeof WebAssembly.Suspending === "function";
  if (gpu && !jspi) {
    try { requireJSPI(); } catch (e) { why = e.message; }
    gpu = null;
  }
  const url = new URL("./wgtensor.wasm", import.meta.url);
  const bytes = isNode ? (await import("node:fs")).readFileSync(url) : await (await fetch(url)).arrayBuffer();
  let busy = false;
  const wg = webgpuImports({ gpu, name: gpuName, why, canSuspend: () => busy, subgroupMatrix: unsafe });
  let wasi;
  if (isNode) {
    const { nodeWasi } = await import("./src/wasi_node.js");
    wasi = nodeWasi({ env: process.env });
  } else {
    const { browserWasi } = await import("./src/wasi_browser.js");
    wasi = browserWasi({ onLine: (l) => console.warn(l) });
  }
  const { instance } = await WebAssembly.instantiate(bytes, { ...wasi.imports, ...wg.imports });
  wg.attach(instance);
  wasi.bindMemory(instance);
  const x = instance.exports;
  x._initialize();
  const promising = {};
  const released = []; // handles the FinalizationRegistry gave back while a call was in flight
  const l = {
    x,
    wg,
    hasGPU: !!gpu,
    why,
    unsafe,
    L: layouts(instance),
    dv: () => new DataView(x.memory.buffer),
    u8: () => new Uint8Array(x.memory.buffer),
    alloc: (n) => x.wgt_js_alloc(n),
    free: (p) => x.wgt_js_free(p),
    cstr(p) {
      if (!p) return "";
      const m = l.u8();
      let e = p;
      while (m[e]) e++;
      return new TextDecoder().decode(m.subarray(p, e));
    },
    string(s) {
      const b = new TextEncoder().encode(s);
      const p = l.alloc(b.length + 1);
      l.u8().set(b, p);
      l.u8()[p + b.length] = 0;
      return p;
    },
    error() {
      return new WgtError(l.cstr(x.wgt_last_error()), l.cstr(x.wgt_status_name(x.wgt_last_status())));
    },
    // A call that cannot wait for the device.
    call(name, ...args) {
      if (busy) throw new Error(`wgtensor: ${name} while another call waits for the device: await that call first`);
      return x[name](...args);
    },
    // A call that may wait: the wasm stack suspends on the GPU's promises.
    async callAsync(name, ...args) {
      if (busy) throw new Error(`wgtensor: ${name} while another call waits for the device: await that call first`);
      busy = true;
      try {
        return await (promising[name] ??= jspi ? WebAssembly.promising(x[name]) : x[name])(...args);
      } finally {
        busy = false;
        while (released.length) x.wgt_release(released.pop());
      }
    },
    // Forgotten tensors give their memory back; never in the middle of another call.
    registry: new FinalizationRegistry((h) => (busy ? released.push(h) : x.wgt_release(h))),
  };
  return l;
}

async function findGPU(unsafe) {
  if (!isNode) return navigator.gpu ? { gpu: navigator.gpu, gpuName: "navigator.gpu" } : { gpu: null, why: "this browser has no navigator.gpu" };
  const { nodeGPU, UNSAFE_NVIDIA_F16 } = await import("./src/node_gpu.js");
  try {
    const { gpu, name } = await nodeGPU({ toggles: unsafe ? [UNSAFE_NVIDIA_F16] : [] });
    return { gpu, gpuName: unsafe ? `${name}, unsafe f16 and subgroup matrices` : name };
  } catch (e) {
    return { gpu: null, why: e.message }; // auto then runs on the CPU, as natively without a GPU
  }
}

// unsafeNvidiaF16 is a Dawn setting of the npm `webgpu` package: a page cannot change what its
// browser's WebGPU allows, and the library's GPU is chosen once, when it first loads.
function checkUnsafe(unsafe) {
  if (typeof unsafe !== "boolean")
    throw new WgtError(`init: unsafeNvidiaF16 must be true or false, not ${typeof unsafe}`, "invalid argument");
  if (unsafe && !isNode)
    throw new WgtError("init: unsafeNvidiaF16 is for Node with the npm package `webgpu` (Dawn's unsafe features); " +
      "a browser's WebGPU cannot be given it", "invalid argument");
  if (lib && unsafe !== lib.unsafe)
    throw new WgtError(`init: unsafeNvidiaF16 ${unsafe} after the library was loaded with ${lib.unsafe}: ` +
      "it is chosen by the first init of the process", "invalid argument");
}

/**
 * Loads the library (once) and creates a context.
 * backend: "auto" (WebGPU where it works, else the CPU), "webgpu" or "cpu";
 * adapter: an index ("1") or a substring of an adapter's name;
 * unsafeNvidiaF16 (Node only, off by default): Dawn's unsafe features, for shader-f16 on
 * NVIDIA and f16 matrix products through subgroup matrices (tensor cores); chosen by the
 * first init of the process.
 */
export async function init({ backend = "auto", adapter = null, quiet = true, unsafeNvidiaF16 = false } = {}) {
  if (!(backend in BACKENDS)) throw new WgtError(`init: unknown backend "${backend}" (auto, webgpu or cpu)`, "invalid argument");
  checkUnsafe(unsafeNvidiaF16);
  // The library is loaded once, with the runtime's GPU where there is one: a later context may
  // ask for another backend. Without one, a WebGPU context fails with the reason.
  if (!lib) lib = await load({ ...(await findGPU(unsafeNvidiaF16)), unsafe: unsafeNvidiaF16 });
  if (backend === "webgpu" && !lib.hasGPU) throw new WgtError(`init: no WebGPU: ${lib.why}`, "backend unavailable");
  // wgt_context_options, zeroes being the defaults.
  const L = lib.L, opts = lib.alloc(L.wgt_context_options);
  lib.u8().fill(0, opts, opts + L.wgt_context_options);
  const dv = lib.dv();
  dv.setUint32(opts + L["wgt_context_options.backend"], BACKENDS[backend], true);
  const adapterPtr = adapter == null ? 0 : lib.string(String(adapter));
  dv.setUint32(opts + L["wgt_context_options.adapter"], adapterPtr, true);
  dv.setUint32(opts + L["wgt_context_options.quiet"], quiet ? 1 : 0, true);
  try {
    const h = await lib.callAsync("wgt_context_create", opts);
    if (!h) throw lib.error();
    return new Context(h);
  } finally {
    lib.free(opts);
    if (adapterPtr) lib.free(adapterPtr);
  }
}

function camel(name) {
  return name.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
}

/** Shapes and sizes as the C side takes them: an int64 array in wasm memory. */
function int64s(values) {
  const p = lib.alloc(8 * Math.max(values.length, 1));
  values.forEach((v, k) => lib.dv().setBigInt64(p + 8 * k, BigInt(v), true));
  return p;
}

export class Context {
  constructor(h) {
    this.h = h;
  }
  get backend() { return ["auto", "webgpu", "cpu"][lib.call("wgt_context_backend", this.h)]; }
  get deviceName() { return lib.cstr(lib.call("wgt_context_device_name", this.h)); }
  /** A tensor holding a copy of data (Float32Array, Int32Array, Uint32Array, Int16Array, Int8Array, Uint8Array, or
   * Float16Array/Uint16Array for f16; dtype names the others: "bool", "u16", "bf16" as its bits in a Uint16Array). */
  tensor(data, shape = [data.length], dtype = null) {
    dtype ??= data instanceof Float32Array ? "f32" : data instanceof Int32Array ? "i32"
      : data instanceof Uint32Array ? "u32" : data instanceof (globalThis.Float16Array ?? Uint16Array) || data instanceof Uint16Array ? "f16"
      : data instanceof Int16Array ? "i16" : data instanceof Int8Array ? "i8" : data instanceof Uint8Array ? "u8" : null;
    if (!dtype) throw new WgtError("tensor: data must be a Float32Array, Int32Array, Uint32Array, Int16Array, Int8Array, Uint8Array, Float16Array or Uint16Array", "invalid argument");
    const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    const p = lib.alloc(bytes.length || 1), s = int64s(shape);
    lib.u8().set(bytes, p);
    try {
      const h = lib.call("wgt_tensor_from_data", this.h, DTYPES[dtype], shape.length, s, p, bytes.length, 3);
      if (!h) throw lib.error();
      return new Tensor(h);
    } finally {
      lib.free(p);
      lib.free(s);
    }
  }
  /** Compiles the work that computes outputs ({name: tensor}) from graph inputs (ctx.graphInput). */
  async compile(outputs) {
    const b = bindings(outputs);
    try {
      const g = await lib.callAsync("wgt_graph_build", this.h, b.count, b.p);
      if (!g) throw lib.error();
      return new Graph(g);
    } finally {
      b.free();
    }
  }
  /** Compiles a WGSL compute shader of the caller's (WebGPU contexts only; waits for the compiler). */
  async kernel(wgsl, entryPoint = "main") {
    const src = lib.string(wgsl), entry = lib.string(entryPoint);
    try {
      const k = await lib.callAsync("wgt_kernel_create", this.h, src, entry);
      if (!k) throw lib.error();
      return new Kernel(k);
    } finally {
      lib.free(src);
      lib.free(entry);
    }
  }
  /** Releases the context (its device and every tensor's storage). */
  async dispose() {
    if (!this.h) return;
    await lib.callAsync("wgt_context_release", this.h);
    this.h = 0;
  }
}

/** wgt_binding[] for {name: tensor}: {p, count, free()}. */
function bindings(named) {
  const L = lib.L, size = L.wgt_binding;
  const entries = Object.entries(named), p = lib.alloc(size * Math.max(entries.length, 1)), names = [];
  entries.forEach(([name, t], k) => {
    const s = lib.string(name);
    names.push(s);
    lib.dv().setUint32(p + size * k + L["wgt_binding.name"], s, true);
    lib.dv().setUint32(p + size * k + L["wgt_binding.tensor"], t.handle, true);
  });
  return { p, count: entries.length, free: () => { names.forEach(lib.free); lib.free(p); } };
}

export class Graph {
  constructor(h) { this.h = h; }
  /** Runs the graph with inputs and into outputs ({name: tensor} each). */
  async dispatch(inputs, outputs) {
    const i = bindings(inputs), o = bindings(outputs);
    try {
      if (await lib.callAsync("wgt_graph_dispatch", this.h, i.count, i.p, o.count, o.p)) throw lib.error();
    } finally {
      i.free();
      o.free();
    }
  }
  get launches() { return lib.call("wgt_graph_launches", this.h); }
  dispose() { if (this.h) lib.call("wgt_graph_release", this.h); this.h = 0; }
}

/** A user WGSL kernel: its bindings read from the source, dispatched on tensors like an op. */
export class Kernel {
  constructor(h) {
    this.h = h;
    const L = lib.L, info = lib.alloc(L.wgt_kernel_binding_info);
    try {
      this.bindings = Array.from({ length: lib.call("wgt_kernel_binding_count", h) }, (_, i) => {
        if (lib.call("wgt_kernel_binding", h, i, info)) throw lib.error();
        const at = (f) => info + L[`wgt_kernel_binding_info.${f}`];
        return { name: lib.cstr(lib.dv().getUint32(at("name"), true)), type: lib.cstr(lib.dv().getUint32(at("type"), true)),
          binding: lib.dv().getUint32(at("binding"), true), readWrite: !!lib.dv().getInt32(at("read_write"), true),
          uniform: !!lib.dv().getInt32(at("uniform"), true) };
      });
    } finally {
      lib.free(info);
    }
  }
  /** Workgroups covering n invocations along x. */
  groupsFor(n) {
    const p = lib.alloc(12);
    try {
      if (lib.call("wgt_kernel_groups_for", this.h, BigInt(n), p)) throw lib.error();
      return Array.from(new Uint32Array(lib.x.memory.buffer.slice(p, p + 12)));
    } finally {
      lib.free(p);
    }
  }
  /**
   * Records one dispatch. args: {name: tensor, or {dtype, shape} for an output the call
   * creates}; params: the uniform's bytes (a typed array or ArrayBuffer) or null; groups:
   * [x, y, z]. Returns the created outputs by name.
   */
  dispatch(args, params = null, groups = [1, 1, 1]) {
    const L = lib.L, size = L.wgt_kernel_arg, entries = Object.entries(args);
    const p = lib.alloc(size * Math.max(entries.length, 1)), outs = lib.alloc(4 * Math.max(entries.length, 1));
    const temps = [];
    lib.u8().fill(0, p, p + size * entries.length);
    const bytes = params == null ? null : new Uint8Array(ArrayBuffer.isView(params) ? params.buffer.slice(params.byteOffset,
      params.byteOffset + params.byteLength) : params);
    const pp = bytes ? lib.alloc(bytes.length) : 0;
    if (bytes) lib.u8().set(bytes, pp);
    try {
      entries.forEach(([name, v], k) => {
        const at = (f) => p + size * k + L[`wgt_kernel_arg.${f}`];
        const n = lib.string(name);
        temps.push(n);
        lib.dv().setUint32(at("name"), n, true);
        if (v instanceof Tensor) lib.dv().setUint32(at("tensor"), v.handle, true);
        else {
          const s = int64s(v.shape);
          temps.push(s);
          lib.dv().setInt32(at("dtype"), DTYPES[v.dtype], true);
          lib.dv().setInt32(at("ndim"), v.shape.length, true);
          lib.dv().setUint32(at("shape"), s, true);
        }
      });
      const [gx = 1, gy = 1, gz = 1] = groups;
      if (lib.call("wgt_kernel_dispatch", this.h, entries.length, p, pp, bytes ? bytes.length : 0, gx, gy, gz, outs))
        throw lib.error();
      const created = {};
      entries.forEach(([name], k) => {
        const h = lib.dv().getUint32(outs + 4 * k, true);
        if (h) created[name] = new Tensor(h);
      });
      return created;
    } finally {
      temps.forEach(lib.free);
      lib.free(p);
      lib.free(outs);
      if (pp) lib.free(pp);
    }
  }
  dispose() { if (this.h) lib.call("wgt_kernel_release", this.h); this.h = 0; }
}

export class Tensor {
  constructor(h) {
    this.h = h;
    lib.registry.register(this, h, this);
  }
  get dtype() { return DTYPE_NAMES[lib.call("wgt_tensor_dtype", this.handle)]; }
  get shape() {
    const n = lib.call("wgt_tensor_ndim", this.handle), p = lib.call("wgt_tensor_shape", this.handle);
    return Array.from({ length: n }, (_, k) => Number(lib.dv().getBigInt64(p + 8 * k, true)));
  }
  get handle() {
    if (!this.h) throw new WgtError("the tensor was disposed", "invalid argument");
    return this.h;
  }
  /** The elements, row-major, in a typed array of the tensor's type (f16: Float16Array where the runtime has it, else the bits in a Uint16Array). */
  async read() {
    const n = lib.call("wgt_tensor_nbytes", this.handle), p = lib.alloc(n || 1);
    try {
      if (await lib.callAsync("wgt_tensor_read", this.handle, p, n)) throw lib.error();
      const Type = ARRAYS[this.dtype];
      return new Type(lib.x.memory.buffer.slice(p, p + n));
    } finally {
      lib.free(p);
    }
  }
  /** The elements as nested arrays of numbers, in the tensor's shape. */
  async toArray() {
    const flat = Array.from(await this.read()), shape = this.shape;
    const nest = (dim, at) => dim === shape.length ? flat[at]
      : Array.from({ length: shape[dim] }, (_, k) => nest(dim + 1, at * shape[dim] + k));
    return shape.length ? nest(0, 0) : flat[0];
  }
  dispose() {
    if (!this.h) return;
    lib.registry.unregister(this);
    lib.call("wgt_release", this.h);
    this.h = 0;
  }
}

/** Every generically bound op, by its C name without "wgt_" in camelCase: ops.add(a, b). */
export const ops = {};

/** Tensors and tensor lists for concat and stack (wgt_tensor *const *). */
function handles(tensors) {
  const p = lib.alloc(4 * Math.max(tensors.length, 1));
  tensors.forEach((t, k) => lib.dv().setUint32(p + 4 * k, t.handle, true));
  return p;
}
for (const name of ["concat", "stack"]) {
  ops[name] = (tensors, axis = 0) => {
    const p = handles(tensors);
    try {
      const h = lib.call(`wgt_${name}`, p, tensors.length, axis);
      if (!h) throw lib.error();
      return new Tensor(h);
    } finally {
      lib.free(p);
    }
  };
}

/** Room for n results (wgt_tensor **out): its pointer, and the tensors once the call succeeded. */
function resultSlots(n) {
  const p = lib.alloc(4 * Math.max(n, 1));
  lib.u8().fill(0, p, p + 4 * Math.max(n, 1));
  return { p, take: () => Array.from({ length: n }, (_, k) => new Tensor(lib.dv().getUint32(p + 4 * k, true))) };
}
/** cName(...args, out) for n results, synchronously. */
function tensorsOut(cName, n, args) {
  const out = resultSlots(n);
  try {
    if (lib.call(cName, ...args, out.p)) throw lib.error();
    return out.take();
  } finally {
    lib.free(out.p);
  }
}
/** With a wgt_tensor *const * of tensors at p for the call; freed after. */
function withHandles(tensors, f) {
  const p = handles(tensors);
  try { return f(p); } finally { lib.free(p); }
}

// The functions whose results (or arguments) are lists of tensors.
/** a split along axis into pieces of the given sizes. */
ops.split = (a, axis, sizes) => {
  const s = int64s(sizes);
  try { return tensorsOut("wgt_split", sizes.length, [a.handle, axis, sizes.length, s]); } finally { lib.free(s); }
};
/** The broadcast views of tensors at their common shape. */
ops.broadcastArrays = (tensors) => withHandles(tensors, (p) => tensorsOut("wgt_broadcast_arrays", tensors.length, [tensors.length, p]));
/** Coordinate grids of 1-D tensors (indexingIJ 1: "ij", 0: "xy"). */
ops.meshgrid = (tensors, indexingIJ = 0) =>
  withHandles(tensors, (p) => tensorsOut("wgt_meshgrid", tensors.length, [tensors.length, p, indexingIJ]));
/** The indices of the nonzero elements, one i64 tensor per dimension (reads a back: async). */
ops.nonzero = async (a) => {
  const out = resultSlots(Math.max(a.shape.length, 1));
  try {
    if (await lib.callAsync("wgt_nonzero", a.handle, out.p)) throw lib.error();
    return out.take().slice(0, a.shape.length);
  } finally {
    lib.free(out.p);
  }
};
/** numpy.einsum over the operands. */
ops.einsum = (subscripts, operands) => {
  const sp = lib.string(subscripts);
  try {
    return withHandles(operands, (p) => {
      const h = lib.call("wgt_einsum", sp, operands.length, p);
      if (!h) throw lib.error();
      return new Tensor(h);
    });
  } finally {
    lib.free(sp);
  }
};
/** Learning rate of a step under linear warmup then cosine decay (wgt_lr_warmup_cosine). */
export const lrWarmupCosine = (step, warmup, total, peak, minLr) =>
  lib.x.wgt_lr_warmup_cosine(BigInt(step), BigInt(warmup), BigInt(total), peak, minLr);
/** Runs fn with no gradients recorded (wgt_no_grad_begin / end); returns what fn returns. */
export function noGrad(fn) {
  lib.call("wgt_no_grad_begin");
  try { return fn(); } finally { if (lib.call("wgt_no_grad_end")) throw lib.error(); }
}
/** Scales the parameters' gradients to a global norm of at most maxNorm; the norm before (reads it: async). */
export async function clipGradNorm(params, maxNorm) {
  const p = handles(params), norm = lib.alloc(8);
  try {
    if (await lib.callAsync("wgt_clip_grad_norm", params.length, p, maxNorm, norm)) throw lib.error();
    return lib.dv().getFloat64(norm, true);
  } finally {
    lib.free(p);
    lib.free(norm);
  }
}

/** SGD or AdamW over whole parameter tensors marked with requiresGrad (wgt_sgd, wgt_adamw). */
export class Optimizer {
  constructor(h) { this.h = h; }
  /** Records each parameter's update, in place. */
  step() { if (lib.call("wgt_optimizer_step", this.handle)) throw lib.error(); }
  zeroGrad() { if (lib.call("wgt_optimizer_zero_grad", this.handle)) throw lib.error(); }
  get lr() { return lib.call("wgt_optimizer_lr", this.handle); }
  set lr(v) { if (lib.call("wgt_optimizer_set_lr", this.handle, v)) throw lib.error(); }
  get handle() {
    if (!this.h) throw new WgtError("the optimizer was disposed", "invalid argument");
    return this.h;
  }
  dispose() { if (this.h) lib.call("wgt_optimizer_release", this.h); this.h = 0; }
}
const optimizer = (make) => {
  const h = make();
  if (!h) throw lib.error();
  return new Optimizer(h);
};
export const sgd = (params, lr, momentum = 0, weightDecay = 0) =>
  withHandles(params, (p) => optimizer(() => lib.call("wgt_sgd", params.length, p, lr, momentum, weightDecay)));
export const adamw = (params, lr, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weightDecay = 0.01) =>
  withHandles(params, (p) => optimizer(() => lib.call("wgt_adamw", params.length, p, lr, beta1, beta2, eps, weightDecay)));

Object.defineProperty(Tensor.prototype, "needsGrad", {
  /** Whether gradients flow through the tensor (wgt_tensor_requires_grad). */
  get() { return !!lib.call("wgt_tensor_requires_grad", this.handle); },
});
/** Overwrites the tensor's elements with data (a typed array of its type; waits for work using it: async). */
Tensor.prototype.write = async function (data) {
  const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength), p = lib.alloc(bytes.length || 1);
  lib.u8().set(bytes, p);
  try {
    if (await lib.callAsync("wgt_tensor_write", this.handle, p, bytes.length)) throw lib.error();
  } finally {
    lib.free(p);
  }
};

// The generic binding of one header function: JS arguments in the parameters' order, a
// (count, array) pair taking one JS array, a number where a tensor goes becoming a rank-0
// tensor of the first tensor's type (broadcast by the op as any tensor is).
// With waits, the call goes through WebAssembly.promising and returns a promise: the form for
// an op that may have to wait for the device (one that reads values back, as masked_select,
// or indices computed on the GPU; or one that runs work past the pending budget), which a
// synchronous call refuses with a WgtError ("usage error").
function bind(cName, ret, params, waits = false) {
  const asyncCall = waits || (ret === "status" && params[0][1] === "context");
  return function (...args) {
    const cargs = [], temps = [], scalars = [], outs = [];
    // The out-parameters' tensors (undefined where there are none); read before temps are freed.
    const results = () => (outs.length ? outs.map((p) => { const h = lib.dv().getUint32(p, true); return h ? new Tensor(h) : null; })
      : undefined);
    let first = null;
    try {
      for (let k = 0, a = 0; k < params.length; k++) {
        const kind = params[k][1], next = params[k + 1]?.[1];
        const array = (given, type) => { // one axis may be given bare
          const list = typeof given === "number" ? [given] : Array.from(given ?? []);
          const p = type === "i64[]" ? int64s(list) : lib.alloc(4 * Math.max(list.length, 1));
          if (type === "i32[]") list.forEach((v, j) => lib.dv().setInt32(p + 4 * j, v, true));
          temps.push(p);
          return [list.length, p];
        };
        if (kind === "i32" && (next === "i64[]" || next === "i32[]")) { // (count, array): one JS array
          cargs.push(...array(args[a++], next));
          k++;
          continue;
        }
        if (kind === "out") { // a result: returned in an array, in the parameters' order
          const p = lib.alloc(4);
          lib.dv().setUint32(p, 0, true);
          temps.push(p);
          outs.push(p);
          cargs.push(p);
          continue;
        }
        const v = args[a++];
        switch (kind) {
          case "i64[]": case "i32[]": cargs.push(v == null ? 0 : array(v, kind)[1]); break; // its length is implied; null: none
          case "f64[]": {
            if (v == null) { cargs.push(0); break; }
            const list = Array.from(typeof v === "number" ? [v] : v), p = lib.alloc(8 * Math.max(list.length, 1));
            list.forEach((x, j) => lib.dv().setFloat64(p + 8 * j, x, true));
            temps.push(p);
            cargs.push(p);
            break;
          }
          case "context": cargs.push(v.h); break;
          case "tensor":
            if (v == null) cargs.push(0); // an optional tensor (a bias): NULL
            else if (typeof v === "number") {
              const ctx = lib.call("wgt_tensor_context", (first ?? args.find((x) => x instanceof Tensor)).handle);
              const dtype = DTYPES[(first ?? args.find((x) => x instanceof Tensor)).dtype];
              const s = lib.call("wgt_full", ctx, dtype, 0, 0, v);
              if (!s) throw lib.error();
              scalars.push(s);
              cargs.push(s);
            } else {
              first ??= v;
              cargs.push(v.handle);
            }
            break;
          case "dtype":
            if (!(v in DTYPES)) throw new WgtError(`${cName}: unknown dtype "${v}" (${Object.keys(DTYPES).join(", ")})`, "invalid argument");
            cargs.push(DTYPES[v]);
            break;
          case "i64": case "u64": cargs.push(BigInt(v)); break;
          case "string": { const p = lib.string(String(v)); temps.push(p); cargs.push(p); break; }
          default: cargs.push(v); break;
        }
      }
      if (asyncCall) {
        const settle = (r) => {
          if (ret === "status") { if (r) throw lib.error(); return results(); }
          if (!r) throw lib.error();
          return new Tensor(r);
        };
        const pending = lib.callAsync(cName, ...cargs).then(settle);
        // The arguments the C call reads stay allocated until it returns.
        const held = temps.splice(0), made = scalars.splice(0);
        const cleanup = () => { held.forEach(lib.free); made.forEach((h) => lib.x.wgt_release(h)); };
        return pending.finally(cleanup);
      }
      const r = lib.call(cName, ...cargs);
      if (ret === "status") { if (r) throw lib.error(); return results(); }
      if (!r) throw lib.error();
      return new Tensor(r);
    } finally {
      temps.forEach(lib.free);
      scalars.forEach((s) => lib.x.wgt_release(s));
    }
  };
}

for (const [cName, ret, params] of FUNCTIONS) {
  const fn = bind(cName, ret, params);
  const short = camel(cName.replace(/^wgt_/, ""));
  if (params[0][1] === "context") {
    Context.prototype[camel(cName.replace(/^wgt_(context_)?/, ""))] ??= function (...a) { return fn(this, ...a); };
  } else {
    ops[short] = fn;
    Tensor.prototype[camel(cName.replace(/^wgt_(tensor_)?/, ""))] ??= function (...a) { return fn(this, ...a); };
    if (ret === "tensor" || params.some(([, k]) => k === "out")) { // every op also as NAMEAsync: allowed to wait
      const waiting = bind(cName, ret, params, true);
      ops[`${short}Async`] = waiting;
      Tensor.prototype[`${camel(cName.replace(/^wgt_(tensor_)?/, ""))}Async`] ??= function (...a) { return waiting(this, ...a); };
    }
  }
}

export const dtypes = Object.keys(DTYPES);

/** What the WebGPU import table holds: GPU buffers created and not yet destroyed. */
export function webgpuStats() {
  return { buffersAlive: lib ? lib.wg.buffersAlive() : 0 };
}
