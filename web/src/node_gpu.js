// The Node entry point's GPU: the npm package `webgpu` (Dawn for Node), found where Node's
// own resolution finds it, or an error that says how to install it.

// What `unsafeNvidiaF16` turns on in Dawn: its experimental features (subgroup matrices),
// shader-f16 on NVIDIA through Vulkan (off by default there for driver bugs Dawn works
// around elsewhere), and the Vulkan memory model that subgroup matrices need. Unsafe: Dawn
// has not validated these for untrusted content, so it is never a default.
export const UNSAFE_NVIDIA_F16 = "enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia,use_vulkan_memory_model";

export async function nodeGPU({ toggles = [] } = {}) {
  let mod;
  try {
    mod = await import("webgpu");
  } catch (e) {
    if (e?.code !== "ERR_MODULE_NOT_FOUND") throw e;
    throw new Error("wgtensor: the WebGPU backend in Node needs the npm package `webgpu`: run `npm install webgpu` " +
      "beside your program (or use backend: 'cpu')");
  }
  const { create, globals } = mod;
  Object.assign(globalThis, globals); // GPUBufferUsage and friends, as in a browser
  // Whole timestamps for GPU timing (a browser rounds them against timing attacks).
  const gpu = create(["disable-dawn-features=timestamp_quantization", ...toggles]);
  const pkg = await import("webgpu/package.json", { with: { type: "json" } }).catch(() => null);
  return { gpu, name: `npm webgpu${pkg ? " " + pkg.default.version : ""} (Dawn) in Node ${process.versions.node}` };
}
