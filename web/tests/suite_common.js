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

/** [passed, failed, skipped] from a run's output, or null when it has no closing line. */
export function closingCounts(text) {
  const m = text.match(/^(\d+) passed, (\d+) failed, (\d+) skipped$/m);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null;
}

/** Runs run(filter) -> {code, text} for each filter and prints one closing line for all. */
export async function runEach(filters, run) {
  const total = [0, 0, 0];
  let code = 0;
  for (const f of filters) {
    console.log(`== tests named *${f}*`);
    const r = await run(f);
    const counts = closingCounts(r.text);
    if (!counts) console.log(`the run of *${f}* ended without its closing line`);
    else counts.forEach((n, k) => (total[k] += n));
    code ||= r.code || (counts ? 0 : 1);
  }
  console.log(`${total[0]} passed, ${total[1]} failed, ${total[2]} skipped`);
  return code || (total[1] ? 1 : 0);
}
