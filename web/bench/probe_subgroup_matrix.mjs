// Adapter facts and which subgroup-matrix builtin forms this dawn.node's Tint accepts.
import { create, globals } from "webgpu";
Object.assign(globalThis, globals);
const gpu = create(["enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia,use_vulkan_memory_model"]);
const adapter = await gpu.requestAdapter({ powerPreference: "high-performance" });
const info = adapter.info;
console.log("adapter:", info.vendor, info.architecture, info.device, info.description, "subgroups", info.subgroupMinSize, info.subgroupMaxSize);
console.log("configs:", JSON.stringify([...(info.subgroupMatrixConfigs ?? [])].map((c) => ({ c: c.componentType, r: c.resultComponentType, M: c.M, N: c.N, K: c.K }))));
console.log("features:", [...adapter.features].join(" "));
console.log("limits: wg storage", adapter.limits.maxComputeWorkgroupStorageSize, "invocations", adapter.limits.maxComputeInvocationsPerWorkgroup);
const want = ["shader-f16", "subgroups", "chromium-experimental-subgroup-matrix", "timestamp-query"].filter((f) => adapter.features.has(f));
const device = await adapter.requestDevice({ requiredFeatures: want });
const forms = {
  template: "let l = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&s, 0u, 16u);\n  subgroupMatrixStore<row_major>(&o, 0u, subgroupMatrixMultiply<f32>(l, subgroup_matrix_right<f16, 16, 16>()), 16u);",
  bool: "let l = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>>(&s, 0u, false, 16u);\n  subgroupMatrixStore(&o, 0u, subgroupMatrixMultiply<f32>(l, subgroup_matrix_right<f16, 16, 16>()), false, 16u);",
};
for (const [name, body] of Object.entries(forms)) {
  const code = `enable f16;\nenable subgroups;\nenable chromium_experimental_subgroup_matrix;\ndiagnostic(off, chromium.subgroup_matrix_uniformity);\n` +
    `@group(0) @binding(0) var<storage, read_write> o: array<f32>;\nvar<workgroup> s: array<f16, 256>;\n` +
    `@compute @workgroup_size(32) fn main() {\n  ${body}\n}\n`;
  const m = device.createShaderModule({ code });
  const ci = await m.getCompilationInfo();
  console.log(`form ${name}:`, ci.messages.map((x) => `${x.type} ${x.lineNum}:${x.linePos} ${x.message}`).join(" | ") || "clean");
}
device.destroy();
globalThis.keep = gpu;
