// Every function of include/wgtensor.h that takes or returns a tensor, a context, a graph, a
// kernel or an optimizer is reachable from JS: bound from the generated table, bound by hand
// in web/wgtensor.js (listed here with where it lives, which must exist), or left out for a
// reason given here. A function added to the header and none of these fails the test.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as wg from "../../wgtensor.js";
import { FUNCTIONS } from "../../src/api_table.js";

await wg.init({ backend: "cpu" });
const T = wg.Tensor.prototype, C = wg.Context.prototype;
const own = (o, k) => typeof Object.getOwnPropertyDescriptor(o, k) === "object";
const HAND = {
  wgt_context_create: () => typeof wg.init === "function", wgt_context_release: () => own(C, "dispose"),
  wgt_context_backend: () => own(C, "backend"), wgt_context_device_name: () => own(C, "deviceName"),
  wgt_tensor_from_data: () => own(C, "tensor"), wgt_tensor_read: () => own(T, "read"), wgt_tensor_write: () => own(T, "write"),
  wgt_release: () => own(T, "dispose"), wgt_tensor_dtype: () => own(T, "dtype"), wgt_tensor_ndim: () => own(T, "shape"),
  wgt_tensor_shape: () => own(T, "shape"), wgt_tensor_nbytes: () => own(T, "read"), wgt_tensor_context: () => own(T, "read"),
  wgt_tensor_requires_grad: () => own(T, "needsGrad"),
  wgt_graph_build: () => own(C, "compile"), wgt_graph_dispatch: () => own(wg.Graph.prototype, "dispatch"),
  wgt_graph_launches: () => own(wg.Graph.prototype, "launches"), wgt_graph_release: () => own(wg.Graph.prototype, "dispose"),
  wgt_kernel_create: () => own(C, "kernel"), wgt_kernel_release: () => own(wg.Kernel.prototype, "dispose"),
  wgt_kernel_binding_count: () => own(wg.Kernel.prototype, "dispatch"), wgt_kernel_binding: () => own(wg.Kernel.prototype, "dispatch"),
  wgt_kernel_groups_for: () => own(wg.Kernel.prototype, "groupsFor"), wgt_kernel_dispatch: () => own(wg.Kernel.prototype, "dispatch"),
  wgt_concat: () => typeof wg.ops.concat === "function", wgt_stack: () => typeof wg.ops.stack === "function",
  wgt_split: () => typeof wg.ops.split === "function", wgt_nonzero: () => typeof wg.ops.nonzero === "function",
  wgt_broadcast_arrays: () => typeof wg.ops.broadcastArrays === "function", wgt_meshgrid: () => typeof wg.ops.meshgrid === "function",
  wgt_einsum: () => typeof wg.ops.einsum === "function",
  wgt_sgd: () => typeof wg.sgd === "function", wgt_adamw: () => typeof wg.adamw === "function",
  wgt_optimizer_step: () => own(wg.Optimizer.prototype, "step"), wgt_optimizer_zero_grad: () => own(wg.Optimizer.prototype, "zeroGrad"),
  wgt_optimizer_set_lr: () => own(wg.Optimizer.prototype, "lr"), wgt_optimizer_lr: () => own(wg.Optimizer.prototype, "lr"),
  wgt_optimizer_release: () => own(wg.Optimizer.prototype, "dispose"), wgt_clip_grad_norm: () => typeof wg.clipGradNorm === "function",
};
const LEFT_OUT = {
  wgt_context_describe: "a text for people; ctx.backend and ctx.deviceName say it",
  wgt_context_stats: "pool and scheduler counters for C tools", wgt_eval: "a read or ctx.sync() runs the work",
  wgt_read_begin: "await t.read() is the asynchronous read", wgt_read_poll: "await t.read()", wgt_read_wait: "await t.read()",
  wgt_read_release: "await t.read()",
  wgt_tensor_strides: "layout metadata; contiguous() and read() hide it", wgt_tensor_offset: "layout metadata",
  wgt_tensor_numel: "the product of t.shape", wgt_tensor_usage: "creation flags of the C API",
  wgt_tensor_is_contiguous: "layout metadata", wgt_tensor_data: "a host pointer: read() copies out",
  wgt_tensor_data_mut: "a host pointer: write() copies in",
  wgt_tensor_export_buffer: "a native WGPUBuffer handle", wgt_tensor_from_buffer: "a native WGPUBuffer handle",
  wgt_context_webgpu_device: "a native WGPUDevice handle", wgt_kernel_workgroup_size: "read from the WGSL by the caller",
  wgt_kernel_set_cpu_fn: "a C function pointer",
  wgt_gguf_load: "GGUF files: the file system of a page is not the library's",
  wgt_gguf_writer_add_tensor: "GGUF files", wgt_save_safetensors: "files: not in a page",
};

test("every function of the header on tensors is reachable from JS, or left out for a reason", () => {
  const header = readFileSync(new URL("../../../include/wgtensor.h", import.meta.url), "utf8")
    .replace(/\/\*[\s\S]*?\*\//g, " ").replace(/^\s*#.*$/gm, " ");
  const generic = new Set(FUNCTIONS.map((f) => f[0])), missing = [];
  let checked = 0;
  for (const m of header.matchAll(/([A-Za-z_][\w \*]*?\**)\s*\b(wgt_\w+)\s*\(([^;{}()]*)\)\s*;/g)) {
    const [, ret, name, params] = m;
    if (ret.includes("typedef") || !/\bwgt_(tensor|context|kernel|graph|read|optimizer)\b/.test(`${ret} ${params}`)) continue;
    checked++;
    if (generic.has(name) || name in LEFT_OUT) continue;
    if (name in HAND) assert.ok(HAND[name](), `${name}: its hand-written binding is gone`);
    else missing.push(name);
  }
  assert.deepEqual(missing, [], "header functions with no JS binding: bind them (web/wgtensor.js) or say here why not");
  assert.ok(checked > 250, `only ${checked} functions found in the header`);
  for (const name of [...Object.keys(HAND), ...Object.keys(LEFT_OUT)])
    assert.ok(header.includes(`${name}(`), `${name} is listed here but no longer in the header`);
});
