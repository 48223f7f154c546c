// The device the subgroup-matrix probes run on: Dawn of the npm `webgpu` package with the
// unsafe NVIDIA f16 toggles (docs/web.md), timestamps unquantized, and the features the
// probes use. Exits quietly (status 0) where the adapter lacks any of them, so the probes can
// run in any GPU script. `extraLimits` names adapter limits to request at their maximum.
import { create, globals } from "webgpu";
Object.assign(globalThis, globals);

export async function unsafeDevice(extraLimits = []) {
  const gpu = create(["enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia,use_vulkan_memory_model",
    "disable-dawn-features=timestamp_quantization"]);
  const adapter = await gpu.requestAdapter({ powerPreference: "high-performance" });
  const need = ["shader-f16", "subgroups", "chromium-experimental-subgroup-matrix", "timestamp-query"];
  if (!adapter) { console.log("no WebGPU adapter"); process.exit(0); }
  for (const f of need) if (!adapter.features.has(f)) { console.log(`lacks ${f}`); process.exit(0); }
  const requiredLimits = {};
  for (const name of ["maxComputeWorkgroupStorageSize", ...extraLimits]) requiredLimits[name] = adapter.limits[name];
  const device = await adapter.requestDevice({ requiredFeatures: need, requiredLimits });
  globalThis.keepGpu = gpu; // dawn.node's instance must outlive the device
  return { adapter, device };
}
