// JavaScript Promise Integration: C blocks on a Promise (adapter and device requests, buffer
// maps, WaitAny) by suspending the wasm stack. Node 24+ and Chromium have the standard API
// on by default; older runtimes get this error instead of a hang or a wrong answer.
export function requireJSPI() {
  if (typeof WebAssembly.Suspending !== "function" || typeof WebAssembly.promising !== "function") {
    const where = typeof process !== "undefined" && process.versions?.node ? `Node ${process.versions.node}` : "this runtime";
    throw new Error(
      `wgtensor: ${where} has no JavaScript Promise Integration (WebAssembly.Suspending / WebAssembly.promising), ` +
        "which the WebAssembly build needs to wait for the GPU: use Node 24 or later, or Chromium 137 or later");
  }
}
