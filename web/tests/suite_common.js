// What the Node and browser runners of the wasm C suite share: the skip list, and running
// _start under JSPI with a WASI host and the WebGPU import table.
import { webgpuImports } from "../src/webgpu_imports.js";

/** [[name, reason], ...] from wasm_skips.txt (comments and blank lines left out). */
export function loadSkips(text) {
  return text.split("\n").map((l) => l.trim()).filter((l) => l && !l.startsWith("#"))
    .map((l) => { const m = l.match(/^(\S+)\s+(.*)$/); return m ? [m[1], m[2]] : [l, "no reason given"]; });
}

/** Instantiates the suite and runs it; resolves to its exit code. */
export async function instantiateSuite(bytes, wasi, gpuOptions) {
  const wg = webgpuImports(gpuOptions);
  const { instance } = await WebAssembly.instantiate(bytes, { ...wasi.imports, ...wg.imports });
  wg.attach(instance);
  wasi.bindMemory(instance);
  // Under JSPI the C code may block on the GPU; without it only the CPU backend can run.
  const start = typeof WebAssembly.promising === "function" ? WebAssembly.promising(instance.exports._start)
    : instance.exports._start;
  try {
    await start();
  } catch (e) {
    if (wasi.state.exitCode === null) throw e;
  }
  return wasi.state.exitCode ?? 0;
}
