// The Node entry point's GPU: the npm package `webgpu` (Dawn for Node), found where Node's
// own resolution finds it, or an error that says how to install it.
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
