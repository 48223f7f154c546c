// webgpu.h for the WebAssembly build, over the JS WebGPU API (navigator.gpu in browsers, the
// npm package `webgpu` in Node): the imports of module "wgpu" that web/c/loader_js.c binds
// webgpu_api.h's function table to.
//
// - Handles are indices into `objects` (0 is NULL); a released handle's slot is reused.
// - Struct offsets come from the module itself (web/c/layouts.c: offsetof on our header as
//   compiled for wasm32), never typed here. By-value structs arrive as pointers, u64 and
//   WGPUFuture as BigInt.
// - Blocking waits (WaitAny, ProcessEvents) are WebAssembly.Suspending: the wasm stack is
//   suspended while the Promise settles (JSPI); the export that led there must be wrapped
//   with WebAssembly.promising.
// - Callbacks are run by the waits, as Dawn runs them: WaitAny delivers the futures it waits
//   on, ProcessEvents those that allow it and the spontaneous ones (device loss, uncaptured
//   errors), so C never runs re-entered from the event loop.
// - A released buffer is destroyed (GPU memory back at once, not at garbage collection) once
//   no bind group holds it and work already encoded with it has been submitted.
import { requireJSPI } from "./jspi.js";

const SUCCESS = 1;
const REQUEST_ADAPTER_UNAVAILABLE = 3, REQUEST_ADAPTER_ERROR = 4;
const REQUEST_DEVICE_ERROR = 3, MAP_ERROR = 3, POP_ERROR_SCOPE_ERROR = 2;
const WAIT_SUCCESS = 1, WAIT_TIMED_OUT = 2;
const MODE_WAIT_ANY_ONLY = 1;
const LOST_UNKNOWN = 1, LOST_DESTROYED = 2;
const ERROR_NONE = 1, ERROR_VALIDATION = 2, ERROR_OUT_OF_MEMORY = 3, ERROR_INTERNAL = 4, ERROR_UNKNOWN = 5;
const STYPE_SHADER_SOURCE_WGSL = 2;
const BACKEND_WEBGPU = 2, BACKEND_UNDEFINED = 0;
const ADAPTER_CPU = 3, ADAPTER_UNKNOWN = 4;
const QUERY_SET_INDEX_UNDEFINED = 0xffffffff;
const WHOLE_SIZE = 0xffffffffffffffffn;
const STRLEN = 0xffffffff; // WGPU_STRLEN: SIZE_MAX of wasm32

// Feature numbers of webgpu_api.h (the Dawn build the native library declares).
const FEATURES = {
  "timestamp-query": 0x3,
  "shader-f16": 0xa,
  "subgroups": 0x11,
  "chromium-experimental-subgroup-matrix": 0x50037,
};
const FEATURE_NAMES = Object.fromEntries(Object.entries(FEATURES).map(([k, v]) => [v, k]));
const BUFFER_BINDING = { 2: "uniform", 3: "storage", 4: "read-only-storage" };
const ERROR_FILTERS = { 1: "validation", 2: "out-of-memory", 3: "internal" };
const POWER = { 1: "low-power", 2: "high-performance" };

function errorType(error) {
  if (!error) return ERROR_NONE;
  const name = error.constructor?.name ?? "";
  if (name.includes("Validation")) return ERROR_VALIDATION;
  if (name.includes("OutOfMemory")) return ERROR_OUT_OF_MEMORY;
  if (name.includes("Internal")) return ERROR_INTERNAL;
  return ERROR_UNKNOWN;
}

// Yields to the event loop once: GPU promises settle only between tasks.
const nextTask =
  typeof setImmediate === "function"
    ? () => new Promise((r) => setImmediate(r))
    : () => new Promise((r) => { const c = new MessageChannel(); c.port1.onmessage = () => r(); c.port2.postMessage(0); });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * gpu: a GPU object (navigator.gpu, or the npm package's create([...])), or null where the
 * runtime has none (then `why` says so and the C side reports the backend unavailable).
 * name: what C reports as the library in use.
 */
/** "Struct.field" -> offset and "Struct" -> size, as the module was compiled (web/c/layouts.c). */
export function layouts(instance) {
  const x = instance.exports, m = new Uint8Array(x.memory.buffer);
  let end = x.wgtjs_layout_names();
  while (m[end]) end++;
  const names = new TextDecoder().decode(m.subarray(x.wgtjs_layout_names(), end)).split(",").filter(Boolean);
  const values = new Uint32Array(x.memory.buffer, x.wgtjs_layout_values(), x.wgtjs_layout_count());
  if (names.length !== values.length) throw new Error("wgtensor: layout table names and values disagree");
  return Object.fromEntries(names.map((n, k) => [n, values[k]]));
}

/**
 * canSuspend() says whether the current call into wasm came through WebAssembly.promising:
 * only then may a wait suspend; otherwise it answers from what has already settled (a
 * Suspending import that returns a plain value does not suspend).
 * subgroupMatrix says whether the experimental chromium-experimental-subgroup-matrix feature
 * is shown to C (only where the caller turned on Dawn's unsafe features on purpose); hidden,
 * C never asks for it and its configurations read as none.
 */
export function webgpuImports({ gpu, name = "JavaScript WebGPU", why = "no WebGPU in this runtime", canSuspend = () => true,
  subgroupMatrix = false }) {
  // Without JSPI nothing can wait for the GPU: WebGPU is then unavailable, with the reason.
  const jspi = typeof WebAssembly.Suspending === "function";
  if (gpu && !jspi) {
    try { requireJSPI(); } catch (e) { why = e.message; }
    gpu = null;
  }
  const suspending = (f) => (jspi ? new WebAssembly.Suspending(f) : () => requireJSPI());
  let instance = null; // the wasm instance, once attach() is called
  let L = null; // layouts: "Struct.field" -> offset
  const objects = [null];
  const free = [];
  const futures = new Map(); // id -> {settled, deliver, mode, promise}
  let nextFuture = 1n;
  const spontaneous = []; // callbacks of device loss and uncaptured errors, run by the next wait
  const doomed = new Set(); // released buffers to destroy after the next submit

  const dv = () => new DataView(instance.exports.memory.buffer);
  const u8 = () => new Uint8Array(instance.exports.memory.buffer);
  const u32 = (p) => dv().getUint32(p, true);
  const u64 = (p) => dv().getBigUint64(p, true);
  const f64 = (p) => dv().getFloat64(p, true);
  const setU32 = (p, v) => dv().setUint32(p, v >>> 0, true);
  const setU64 = (p, v) => dv().setBigUint64(p, BigInt(v), true);
  const off = (key) => {
    const o = L[key];
    if (o === undefined) throw new Error(`wgtensor: no layout for ${key} (web/c/layouts.c)`);
    return o;
  };
  const decoder = new TextDecoder(), encoder = new TextEncoder();
  const cstr = (p) => { const m = u8(); let e = p; while (m[e]) e++; return decoder.decode(m.subarray(p, e)); };
  // A WGPUStringView at p: data NULL is empty; length STRLEN means NUL-terminated.
  const view = (p) => {
    const data = u32(p + off("WGPUStringView.data")), length = u32(p + off("WGPUStringView.length"));
    if (!data) return "";
    return length === STRLEN ? cstr(data) : decoder.decode(u8().slice(data, data + length));
  };
  const alloc = (n) => instance.exports.wgt_js_alloc(n);
  const dealloc = (p) => instance.exports.wgt_js_free(p);
  // Writes a string into fresh wasm memory as a string view at p (freed by *FreeMembers).
  const putView = (p, s) => {
    const bytes = encoder.encode(s ?? "");
    const data = alloc(bytes.length + 1);
    u8().set(bytes, data);
    u8()[data + bytes.length] = 0;
    setU32(p + off("WGPUStringView.data"), data);
    setU32(p + off("WGPUStringView.length"), bytes.length);
  };
  // Runs f(pointer to a string view of s) and frees it: messages handed to callbacks.
  const withView = (s, f) => {
    const p = alloc(L.WGPUStringView);
    putView(p, s);
    try { return f(p); } finally { dealloc(u32(p + off("WGPUStringView.data"))); dealloc(p); }
  };

  const handle = (value) => { const h = free.length ? free.pop() : objects.length; objects[h] = value; return h; };
  const get = (h) => objects[h]?.js;
  const entry = (h) => objects[h];
  const drop = (h) => { if (h && objects[h]) { objects[h] = null; free.push(h); } };

  const callTable = (fn, ...args) => instance.exports.__indirect_function_table.get(fn)(...args);
  const callbackInfo = (p) => ({
    mode: u32(p + off("WGPUCallbackInfo.mode")),
    fn: u32(p + off("WGPUCallbackInfo.callback")),
    u1: u32(p + off("WGPUCallbackInfo.userdata1")),
    u2: u32(p + off("WGPUCallbackInfo.userdata2")),
  });
  // A future over promise; settle(result) maps the outcome to the C callback's arguments.
  const future = (info, promise, deliver) => {
    const id = nextFuture++;
    const f = { settled: false, delivered: false, mode: info.mode, result: undefined };
    f.promise = promise.then((r) => { f.result = { ok: r }; }, (e) => { f.result = { error: e }; })
      .then(() => { f.settled = true; });
    f.deliver = () => { f.delivered = true; futures.delete(id); if (info.fn) deliver(info, f.result); };
    futures.set(id, f);
    return id;
  };
  const runSpontaneous = () => { while (spontaneous.length) spontaneous.shift()(); };

  let buffersAlive = 0; // created and not yet destroyed: what holds GPU memory
  const destroyDoomed = () => {
    for (const b of doomed) destroyBuffer(b);
    doomed.clear();
  };
  const destroyBuffer = (b) => {
    if (!b.destroyed) buffersAlive--;
    b.destroyed = true;
    b.js.destroy();
  };
  const mapRange = (e, offset, size, writable) => {
    let range;
    try { range = new Uint8Array(e.js.getMappedRange(offset, size)); } catch { return 0; }
    if (e.mapped) dealloc(e.mapped);
    e.mapped = alloc(size);
    e.writeBack = writable ? range : null;
    u8().set(range, e.mapped);
    return e.mapped;
  };
  const releaseBuffer = (b) => {
    if (--b.refs > 0) return;
    if (b.mapped) { dealloc(b.mapped); b.mapped = 0; }
    doomed.add(b);
  };

  const limitNames = () => Object.keys(L).filter((k) => k.startsWith("WGPULimits.")).map((k) => k.slice(11));
  const writeLimits = (p, limits) => {
    for (const n of limitNames()) {
      const code = L[`WGPULimits.${n}`], at = p + (code >> 4), width = code & 15;
      const v = limits[n] ?? 0;
      if (width === 8) setU64(at, BigInt(v)); else setU32(at, Math.min(v, 0xffffffff));
    }
    return SUCCESS;
  };
  const readLimits = (p, available) => {
    const out = {};
    for (const n of limitNames()) {
      if (!(n in available)) continue; // a limit this implementation does not know
      const code = L[`WGPULimits.${n}`], at = p + (code >> 4), width = code & 15;
      const v = width === 8 ? Number(u64(at)) : u32(at);
      if (v) out[n] = Math.min(v, available[n]);
    }
    return out;
  };
  const shown = (f) => f in FEATURES && (subgroupMatrix || f !== "chromium-experimental-subgroup-matrix");
  const features = (set) => [...set].filter(shown).map((f) => FEATURES[f]);
  const has = (set, f) => (FEATURE_NAMES[f] && shown(FEATURE_NAMES[f]) && set.has(FEATURE_NAMES[f]) ? 1 : 0);
  // GPUSubgroupMatrixComponentType -> the numbers of wgt_wgpu_sgm_config (webgpu_internal.h).
  const COMPONENT = { f32: 1, f16: 2, u32: 3, i32: 4, u8: 5, i8: 6 };

  // WaitAny over count WGPUFutureWaitInfo at infos; waits (returns a promise) only if mayWait.
  const waitAny = (count, infos, timeout, mayWait) => {
    const size = L.WGPUFutureWaitInfo, at = (k) => infos + k * size;
    const idOf = (k) => u64(at(k) + off("WGPUFutureWaitInfo.future"));
    // A future delivered earlier (or unknown) counts as complete, as in Dawn.
    const finish = () => {
      runSpontaneous();
      let done = false;
      for (let k = 0; k < count; k++) {
        const f = futures.get(idOf(k));
        if (f && !f.settled) continue;
        if (f) f.deliver();
        setU32(at(k) + off("WGPUFutureWaitInfo.completed"), 1);
        done = true;
      }
      return done ? WAIT_SUCCESS : WAIT_TIMED_OUT;
    };
    const waits = [];
    for (let k = 0; k < count; k++) {
      const f = futures.get(idOf(k));
      if (!f || f.settled) return finish();
      waits.push(f.promise);
    }
    if (!mayWait) return finish();
    const ms = Number(timeout / 1000000n);
    return Promise.race([...waits, timeout ? sleep(ms) : nextTask()]).then(finish);
  };
  const processEvents = (mayWait) => {
    const run = () => {
      runSpontaneous();
      for (const f of [...futures.values()]) if (f.settled && f.mode !== MODE_WAIT_ANY_ONLY) f.deliver();
    };
    if (!mayWait) return run();
    return nextTask().then(run);
  };
  const imports = {
    wgtjsDescribe(namePtr, nameSize, whyPtr, whySize) {
      const put = (p, size, s) => { const b = encoder.encode(s).slice(0, size - 1); u8().set(b, p); u8()[p + b.length] = 0; };
      if (!gpu) { put(whyPtr, whySize, why); return 0; }
      put(namePtr, nameSize, name);
      return 1;
    },
    wgpuCreateInstance() { return handle({ kind: "instance", js: gpu }); },
    wgpuInstanceRelease(h) {
      futures.clear();
      spontaneous.length = 0;
      drop(h);
    },
    wgpuInstanceRequestAdapter(inst, opt, cbp) {
      const info = callbackInfo(cbp);
      const backend = opt ? u32(opt + off("WGPURequestAdapterOptions.backendType")) : 0;
      const power = opt ? POWER[u32(opt + off("WGPURequestAdapterOptions.powerPreference"))] : undefined;
      const promise = backend !== BACKEND_UNDEFINED && backend !== BACKEND_WEBGPU
        ? Promise.resolve(null) // the JS API picks the native backend itself: one answer, to "any"
        : gpu.requestAdapter(power ? { powerPreference: power } : {});
      return future(info, promise, (i, r) => {
        const a = r.ok ? handle({ kind: "adapter", js: r.ok }) : 0;
        const status = r.ok ? SUCCESS : r.error ? REQUEST_ADAPTER_ERROR : REQUEST_ADAPTER_UNAVAILABLE;
        const message = r.error ? String(r.error.message ?? r.error)
          : r.ok ? "" : backend ? "the JavaScript WebGPU API chooses the backend itself" : "no adapter";
        withView(message, (m) => callTable(i.fn, status, a, m, i.u1, i.u2));
      });
    },
    // The waits come in two forms: Suspending (a call through WebAssembly.promising may wait
    // for the GPU's promises) and plain (answers from what has already settled). V8 refuses a
    // Suspending import called outside WebAssembly.promising even where it would not suspend,
    // and the trap leaves the library half-way through a call, so C asks wgtjsCanSuspend
    // first and calls the plain form from a synchronous call (web/c/loader_js.c).
    wgpuInstanceWaitAny: suspending((inst, count, infos, timeout) => waitAny(count, infos, timeout, canSuspend())),
    wgtjsWaitAnyNow: (inst, count, infos, timeout) => waitAny(count, infos, timeout, false),
    wgpuInstanceProcessEvents: suspending(() => processEvents(canSuspend())),
    wgtjsProcessEventsNow: () => processEvents(false),
    wgtjsCanSuspend: () => (jspi && canSuspend() ? 1 : 0),

    wgpuAdapterGetInfo(a, p) {
      const info = get(a).info ?? {};
      putView(p + off("WGPUAdapterInfo.vendor"), info.vendor);
      putView(p + off("WGPUAdapterInfo.architecture"), info.architecture);
      // Browsers may leave device and description empty (fingerprinting): name it by what is there.
      const named = info.device || info.description || [info.vendor, info.architecture].filter(Boolean).join(" ");
      putView(p + off("WGPUAdapterInfo.device"), named || "unnamed adapter");
      putView(p + off("WGPUAdapterInfo.description"), info.description);
      setU32(p + off("WGPUAdapterInfo.backendType"), BACKEND_WEBGPU);
      setU32(p + off("WGPUAdapterInfo.adapterType"), info.isFallbackAdapter ? ADAPTER_CPU : ADAPTER_UNKNOWN);
      setU32(p + off("WGPUAdapterInfo.vendorID"), 0);
      setU32(p + off("WGPUAdapterInfo.deviceID"), 0);
      setU32(p + off("WGPUAdapterInfo.subgroupMinSize"), info.subgroupMinSize ?? 0);
      setU32(p + off("WGPUAdapterInfo.subgroupMaxSize"), info.subgroupMaxSize ?? 0);
      return SUCCESS;
    },
    wgpuAdapterInfoFreeMembers(p) {
      for (const f of ["vendor", "architecture", "device", "description"])
        dealloc(u32(p + off(`WGPUAdapterInfo.${f}`) + off("WGPUStringView.data")));
    },
    // The heaps are never handed out (the feature is Dawn's own, absent from the JS API).
    wgpuAdapterPropertiesMemoryHeapsFreeMembers() {},
    wgpuAdapterGetLimits: (a, p) => writeLimits(p, get(a).limits),
    wgpuAdapterGetFeatures(a, p) {
      const list = features(get(a).features);
      const arr = alloc(4 * list.length);
      list.forEach((f, k) => setU32(arr + 4 * k, f));
      setU32(p + off("WGPUSupportedFeatures.featureCount"), list.length);
      setU32(p + off("WGPUSupportedFeatures.features"), arr);
    },
    wgpuAdapterHasFeature: (a, f) => has(get(a).features, f),
    wgtjsSubgroupMatrixConfigs(a, out, max) {
      const adapter = get(a);
      if (!subgroupMatrix || !adapter.features.has("chromium-experimental-subgroup-matrix")) return 0;
      const configs = [...(adapter.info?.subgroupMatrixConfigs ?? [])].slice(0, max);
      configs.forEach((c, k) => [COMPONENT[c.componentType] ?? 0, COMPONENT[c.resultComponentType] ?? 0, c.M, c.N, c.K]
        .forEach((v, j) => setU32(out + 20 * k + 4 * j, v)));
      return configs.length;
    },
    wgpuSupportedFeaturesFreeMembers: (p) => dealloc(u32(p + off("WGPUSupportedFeatures.features"))),
    wgpuAdapterRequestDevice(a, desc, cbp) {
      const info = callbackInfo(cbp), adapter = get(a);
      const n = u32(desc + off("WGPUDeviceDescriptor.requiredFeatureCount"));
      const fp = u32(desc + off("WGPUDeviceDescriptor.requiredFeatures"));
      const requiredFeatures = [];
      for (let k = 0; k < n; k++) requiredFeatures.push(FEATURE_NAMES[u32(fp + 4 * k)]);
      const lp = u32(desc + off("WGPUDeviceDescriptor.requiredLimits"));
      const requiredLimits = lp ? readLimits(lp, adapter.limits) : undefined;
      const lost = callbackInfo(desc + off("WGPUDeviceDescriptor.deviceLostCallbackInfo"));
      const ue = desc + off("WGPUDeviceDescriptor.uncapturedErrorCallbackInfo");
      const uncaptured = {
        fn: u32(ue + off("WGPUUncapturedErrorCallbackInfo.callback")),
        u1: u32(ue + off("WGPUUncapturedErrorCallbackInfo.userdata1")),
        u2: u32(ue + off("WGPUUncapturedErrorCallbackInfo.userdata2")),
      };
      return future(info, adapter.requestDevice({ requiredFeatures, requiredLimits }), (i, r) => {
        let d = 0;
        if (r.ok) {
          const e = { kind: "device", js: r.ok, lostCallback: lost };
          d = handle(e);
          // The C callbacks take a pointer to the device handle.
          const cell = () => { const p = alloc(4); setU32(p, d); return p; };
          e.loseWith = (reason, message) => spontaneous.push(() => {
            const cb = e.lostCallback;
            if (!cb?.fn) return; // released meanwhile, or already told: the callback is not owed
            e.lostCallback = null;
            const p = cell();
            withView(message, (m) => callTable(cb.fn, p, reason, m, cb.u1, cb.u2));
            dealloc(p);
          });
          r.ok.lost.then((why) => e.loseWith(why.reason === "destroyed" ? LOST_DESTROYED : LOST_UNKNOWN, why.message));
          if (uncaptured.fn) {
            r.ok.addEventListener("uncapturederror", (ev) => {
              spontaneous.push(() => {
                if (e.released) return; // its userdata may be gone
                const p = cell();
                withView(ev.error.message, (m) => callTable(uncaptured.fn, p, errorType(ev.error), m, uncaptured.u1, uncaptured.u2));
                dealloc(p);
              });
            });
          }
        }
        const message = r.error ? String(r.error.message ?? r.error) : "";
        withView(message, (m) => callTable(i.fn, r.ok ? SUCCESS : REQUEST_DEVICE_ERROR, d, m, i.u1, i.u2));
      });
    },
    wgpuAdapterRelease: drop,

    wgpuDeviceGetLimits: (d, p) => writeLimits(p, get(d).limits),
    wgpuDeviceHasFeature: (d, f) => has(get(d).features, f),
    wgpuDeviceGetQueue: (d) => handle({ kind: "queue", js: get(d).queue }),
    wgpuDeviceCreateBuffer(d, desc) {
      const usage = Number(u64(desc + off("WGPUBufferDescriptor.usage")));
      const size = Number(u64(desc + off("WGPUBufferDescriptor.size")));
      const mappedAtCreation = !!u32(desc + off("WGPUBufferDescriptor.mappedAtCreation"));
      try {
        // refs: the handle's references plus the bind groups holding it; handleRefs: the former.
        const b = handle({ kind: "buffer", js: get(d).createBuffer({ size, usage, mappedAtCreation }), refs: 1,
          handleRefs: 1, mapped: 0 });
        buffersAlive++;
        return b;
      } catch (e) {
        return 0; // a RangeError: more than this runtime can allocate
      }
    },
    wgpuDeviceCreateShaderModule(d, desc) {
      let chain = u32(desc + off("WGPUShaderModuleDescriptor.nextInChain")), code = null;
      for (; chain; chain = u32(chain + off("WGPUChainedStruct.next")))
        if (u32(chain + off("WGPUChainedStruct.sType")) === STYPE_SHADER_SOURCE_WGSL) code = view(chain + off("WGPUShaderSourceWGSL.code"));
      return handle({ kind: "shader", js: get(d).createShaderModule({ code: code ?? "" }) });
    },
    wgpuDeviceCreateBindGroupLayout(d, desc) {
      const n = u32(desc + off("WGPUBindGroupLayoutDescriptor.entryCount"));
      const base = u32(desc + off("WGPUBindGroupLayoutDescriptor.entries"));
      const entries = [];
      for (let k = 0; k < n; k++) {
        const e = base + k * L.WGPUBindGroupLayoutEntry, b = e + off("WGPUBindGroupLayoutEntry.buffer");
        entries.push({
          binding: u32(e + off("WGPUBindGroupLayoutEntry.binding")),
          visibility: Number(u64(e + off("WGPUBindGroupLayoutEntry.visibility"))),
          buffer: {
            type: BUFFER_BINDING[u32(b + off("WGPUBufferBindingLayout.type"))],
            hasDynamicOffset: !!u32(b + off("WGPUBufferBindingLayout.hasDynamicOffset")),
            minBindingSize: Number(u64(b + off("WGPUBufferBindingLayout.minBindingSize"))),
          },
        });
      }
      return handle({ kind: "bind group layout", js: get(d).createBindGroupLayout({ entries }) });
    },
    wgpuDeviceCreateBindGroup(d, desc) {
      const n = u32(desc + off("WGPUBindGroupDescriptor.entryCount"));
      const base = u32(desc + off("WGPUBindGroupDescriptor.entries"));
      const entries = [], held = [];
      for (let k = 0; k < n; k++) {
        const e = base + k * L.WGPUBindGroupEntry;
        const b = entry(u32(e + off("WGPUBindGroupEntry.buffer")));
        const size = u64(e + off("WGPUBindGroupEntry.size"));
        const resource = { buffer: b.js, offset: Number(u64(e + off("WGPUBindGroupEntry.offset"))) };
        if (size !== WHOLE_SIZE) resource.size = Number(size);
        entries.push({ binding: u32(e + off("WGPUBindGroupEntry.binding")), resource });
        b.refs++;
        held.push(b);
      }
      const layout = get(u32(desc + off("WGPUBindGroupDescriptor.layout")));
      return handle({ kind: "bind group", js: get(d).createBindGroup({ layout, entries }), held });
    },
    wgpuDeviceCreatePipelineLayout(d, desc) {
      const n = u32(desc + off("WGPUPipelineLayoutDescriptor.bindGroupLayoutCount"));
      const base = u32(desc + off("WGPUPipelineLayoutDescriptor.bindGroupLayouts"));
      const bindGroupLayouts = [];
      for (let k = 0; k < n; k++) bindGroupLayouts.push(get(u32(base + 4 * k)));
      return handle({ kind: "pipeline layout", js: get(d).createPipelineLayout({ bindGroupLayouts }) });
    },
    wgpuDeviceCreateComputePipeline(d, desc) {
      const c = desc + off("WGPUComputePipelineDescriptor.compute");
      const n = u32(c + off("WGPUComputeState.constantCount")), base = u32(c + off("WGPUComputeState.constants"));
      const constants = {};
      for (let k = 0; k < n; k++) {
        const e = base + k * L.WGPUConstantEntry;
        constants[view(e + off("WGPUConstantEntry.key"))] = f64(e + off("WGPUConstantEntry.value"));
      }
      const entryPoint = view(c + off("WGPUComputeState.entryPoint"));
      const lh = u32(desc + off("WGPUComputePipelineDescriptor.layout"));
      const compute = { module: get(u32(c + off("WGPUComputeState.module"))), constants };
      if (entryPoint) compute.entryPoint = entryPoint;
      return handle({ kind: "pipeline", js: get(d).createComputePipeline({ layout: lh ? get(lh) : "auto", compute }) });
    },
    wgpuDeviceCreateCommandEncoder: (d) => handle({ kind: "encoder", js: get(d).createCommandEncoder() }),
    wgpuDeviceCreateQuerySet(d, desc) {
      const count = u32(desc + off("WGPUQuerySetDescriptor.count"));
      return handle({ kind: "query set", js: get(d).createQuerySet({ type: "timestamp", count }) });
    },
    wgpuQuerySetDestroy: (q) => get(q).destroy(),
    wgpuQuerySetRelease(q) { get(q).destroy(); drop(q); },
    wgpuDevicePushErrorScope: (d, filter) => get(d).pushErrorScope(ERROR_FILTERS[filter]),
    wgpuDevicePopErrorScope(d, cbp) {
      const info = callbackInfo(cbp);
      return future(info, get(d).popErrorScope(), (i, r) => {
        const type = r.error ? ERROR_UNKNOWN : errorType(r.ok);
        const message = r.error ? String(r.error.message ?? r.error) : r.ok ? r.ok.message : "";
        withView(message, (m) => callTable(i.fn, r.error ? POP_ERROR_SCOPE_ERROR : SUCCESS, type, m, i.u1, i.u2));
      });
    },
    // The JS API cannot lose a device on request; destroying it loses it. The loss is
    // reported at once with the caller's reason and message (as Dawn's ForceLoss does at the
    // next ProcessEvents), not later as "destroyed", which C would take for its own doing.
    wgpuDeviceForceLoss(d, reason, message) {
      const e = entry(d);
      e.loseWith(reason, view(message) || "device loss forced");
      e.js.destroy();
    },
    wgpuDeviceDestroy: (d) => { destroyDoomed(); get(d).destroy(); },
    wgpuDeviceRelease(d) {
      const e = entry(d);
      e.lostCallback = null; // no callback after release: its userdata may be gone
      e.released = true;
      destroyDoomed();
      e.js.destroy();
      drop(d);
    },

    wgpuQueueSubmit(q, n, p) {
      const buffers = [];
      for (let k = 0; k < n; k++) buffers.push(get(u32(p + 4 * k)));
      get(q).submit(buffers);
      destroyDoomed();
    },
    wgpuQueueWriteBuffer(q, b, offset, data, size) {
      get(q).writeBuffer(get(b), Number(offset), instance.exports.memory.buffer, data, size);
    },
    wgpuQueueOnSubmittedWorkDone(q, cbp) {
      return future(callbackInfo(cbp), get(q).onSubmittedWorkDone(), (i, r) =>
        callTable(i.fn, r.error ? 2 : SUCCESS, i.u1, i.u2));
    },
    wgpuQueueRelease: drop,

    wgpuBufferMapAsync(b, mode, offset, size, cbp) {
      return future(callbackInfo(cbp), get(b).mapAsync(Number(mode), offset, size), (i, r) => {
        const message = r.error ? String(r.error.message ?? r.error) : "";
        withView(message, (m) => callTable(i.fn, r.error ? MAP_ERROR : SUCCESS, m, i.u1, i.u2));
      });
    },
    // The mapped range is copied into wasm memory, which C reads until the unmap; a writable
    // range (GetMappedRange) goes back into the buffer's mapped range at the unmap.
    wgpuBufferGetConstMappedRange: (b, offset, size) => mapRange(entry(b), offset, size, false),
    wgpuBufferGetMappedRange: (b, offset, size) => mapRange(entry(b), offset, size, true),
    wgpuBufferUnmap(b) {
      const e = entry(b);
      if (e.writeBack) { e.writeBack.set(u8().subarray(e.mapped, e.mapped + e.writeBack.length)); e.writeBack = null; }
      if (e.mapped) { dealloc(e.mapped); e.mapped = 0; }
      e.js.unmap();
    },
    wgpuBufferDestroy: (b) => destroyBuffer(entry(b)),
    wgpuBufferAddRef(b) { const e = entry(b); e.refs++; e.handleRefs++; },
    wgpuBufferRelease(b) {
      const e = entry(b);
      releaseBuffer(e);
      if (--e.handleRefs === 0) drop(b);
    },
    wgpuBufferGetSize: (b) => BigInt(get(b).size),
    wgpuBufferGetUsage: (b) => BigInt(get(b).usage),
    wgpuShaderModuleRelease: drop,
    wgpuBindGroupLayoutRelease: drop,
    wgpuBindGroupRelease(g) { for (const b of entry(g).held) releaseBuffer(b); drop(g); },
    wgpuPipelineLayoutRelease: drop,
    wgpuComputePipelineRelease: drop,

    wgpuCommandEncoderBeginComputePass(enc, desc) {
      const pass = {};
      const tw = desc ? u32(desc + off("WGPUComputePassDescriptor.timestampWrites")) : 0;
      if (tw) {
        const begin = u32(tw + off("WGPUPassTimestampWrites.beginningOfPassWriteIndex"));
        const end = u32(tw + off("WGPUPassTimestampWrites.endOfPassWriteIndex"));
        pass.timestampWrites = { querySet: get(u32(tw + off("WGPUPassTimestampWrites.querySet"))) };
        if (begin !== QUERY_SET_INDEX_UNDEFINED) pass.timestampWrites.beginningOfPassWriteIndex = begin;
        if (end !== QUERY_SET_INDEX_UNDEFINED) pass.timestampWrites.endOfPassWriteIndex = end;
      }
      return handle({ kind: "pass", js: get(enc).beginComputePass(pass) });
    },
    wgpuCommandEncoderCopyBufferToBuffer: (enc, src, so, dst, d0, size) =>
      get(enc).copyBufferToBuffer(get(src), Number(so), get(dst), Number(d0), Number(size)),
    wgpuCommandEncoderClearBuffer: (enc, b, offset, size) =>
      size === WHOLE_SIZE ? get(enc).clearBuffer(get(b), Number(offset)) : get(enc).clearBuffer(get(b), Number(offset), Number(size)),
    wgpuCommandEncoderResolveQuerySet: (enc, q, first, count, dst, offset) =>
      get(enc).resolveQuerySet(get(q), first, count, get(dst), Number(offset)),
    wgpuCommandEncoderFinish: (enc) => handle({ kind: "command buffer", js: get(enc).finish() }),
    wgpuCommandEncoderRelease: drop,
    wgpuComputePassEncoderSetPipeline: (pass, p) => get(pass).setPipeline(get(p)),
    wgpuComputePassEncoderSetBindGroup(pass, index, g, n, offsets) {
      const dyn = n ? Array.from(new Uint32Array(instance.exports.memory.buffer, offsets, n)) : [];
      get(pass).setBindGroup(index, g ? get(g) : null, dyn);
    },
    wgpuComputePassEncoderDispatchWorkgroups: (pass, x, y, z) => get(pass).dispatchWorkgroups(x, y, z),
    wgpuComputePassEncoderEnd: (pass) => get(pass).end(),
    wgpuComputePassEncoderRelease: drop,
    wgpuCommandBufferRelease: drop,
  };

  return {
    imports: { wgpu: imports },
    /** GPU buffers created and not yet destroyed (the JS API's tests watch it). */
    buffersAlive: () => buffersAlive,
    /** Called once the module is instantiated: reads the layouts the C side was built with. */
    attach(wasmInstance) {
      instance = wasmInstance;
      L = layouts(instance);
    },
  };
}
