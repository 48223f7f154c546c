// Calls that reach a wait for the device. Most ops are synchronous calls into wasm, which
// cannot wait (V8 traps a JSPI import called outside WebAssembly.promising, in the middle of
// the library's code): such a call must neither trap nor run past the pending budget, and
// every op has an Async form that may wait. On WebGPU in Node (npm `webgpu`); skipped with
// the reason where Node has none.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as wg from "../../wgtensor.js";
import { cpu, gpu, noGpu } from "./contexts.mjs";

test("a chain of synchronous ops longer than the pending budget runs at the next read", { skip: noGpu ?? false }, async () => {
  let a = gpu.tensor(new Float32Array([1, 2, 3, 4]));
  for (let i = 0; i < 5000; i++) { // past WGT_PENDING_MAX_NODES (4096), where the library would flush
    const b = a.add(1);
    a.dispose();
    a = b;
  }
  assert.deepEqual(Array.from(await a.read()), [5001, 5002, 5003, 5004]);
  a.dispose();
});

test("an op that must wait: refused synchronously with a WgtError, the library intact; its Async form runs", { skip: noGpu ?? false }, async () => {
  const want = [];
  for (const ctx of [cpu, gpu]) {
    const m = ctx.tensor(new Float32Array([4, -1, 1, 3, -2, 5]), [2, 3]), mask = m.gt(0);
    if (ctx === gpu) {
      assert.throws(() => m.maskedSelect(mask),
        (e) => e instanceof wg.WgtError && e.status === "usage error" && /synchronous call from JavaScript cannot wait/.test(e.message));
      assert.deepEqual(Array.from(await m.sum([], 0).read()), [10], "the library works after the refusal");
    }
    const picked = await m.maskedSelectAsync(mask), rows = await ops(ctx, m);
    want.push([Array.from(await picked.read()), Array.from(await rows.read())]);
    [m, mask, picked, rows].forEach((t) => t.dispose());
  }
  assert.deepEqual(want[0], [[4, 1, 3, 5], [-2, 5, 1, 3, 4, -1, 1, 3]]);
  assert.deepEqual(want[1], want[0]);
});

// Rows picked by indices computed on the device: ops.gatherRowsAsync.
async function ops(ctx, m) {
  const idx = m.argmin(0, 0).slice(0, 1, 3, 1); // [1, 0]: rows 2 and 1 below
  const r = await wg.ops.gatherRowsAsync(m.reshape([3, 2]).slice(0, 0, 3, 1), idx.add(1).cast("i32"));
  const both = wg.ops.concat([r, m.reshape([3, 2]).slice(0, 0, 2, 1)], 0);
  [idx, r].forEach((t) => t.dispose());
  return both;
}
