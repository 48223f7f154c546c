// WASI for Node: node:wasi, with each import wrapped in a JS function. Node 24 aborts V8
// (an IsOnCentralStack check) when wasm on a JSPI stack calls a C++-implemented import
// directly; a JS function in between avoids it. proc_exit is seen on its way through, so the
// exit code is known even though the exit unwinds a promise.
import { WASI } from "node:wasi";

export function nodeWasi({ args = [], env = {}, preopens = {}, stdout = 1 } = {}) {
  const wasi = new WASI({ version: "preview1", args, env, preopens, returnOnExit: true, stdout });
  const inner = wasi.getImportObject().wasi_snapshot_preview1;
  const state = { exitCode: null };
  const imports = {};
  for (const [name, fn] of Object.entries(inner)) {
    imports[name] = name === "proc_exit" ? (code) => { state.exitCode = code; return fn(code); } : (...a) => fn(...a);
  }
  return {
    imports: { wasi_snapshot_preview1: imports },
    state,
    // node:wasi needs the memory before any call; start() would also run _start itself,
    // unwrapped, so it is handed an exports object whose _start does nothing.
    bindMemory(instance) {
      wasi.start({ exports: { memory: instance.exports.memory, _start() {} } });
    },
  };
}
