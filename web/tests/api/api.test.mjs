// The JS API's own behaviour: errors as exceptions with the library's message and status,
// dispose and the FinalizationRegistry backstop, calls refused while another waits, and a
// runtime without JSPI told why WebGPU is unavailable.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as wg from "../../wgtensor.js";

const ctx = await wg.init({ backend: "cpu" });

test("errors are WgtError exceptions with the library's message and status name", () => {
  const a = ctx.zeros("f32", [2, 3]), b = ctx.zeros("f32", [4]);
  assert.throws(() => a.add(b), (e) => e instanceof wg.WgtError && e.status === "shape error" &&
    e.message === "wgt_add: shapes [2, 3] and [4] do not broadcast (dimension 1: 3 vs 4)");
  assert.throws(() => a.matmul(a), (e) => e.status === "shape error" && /wgt_matmul/.test(e.message));
  assert.throws(() => ctx.zeros("f64", [2]), (e) => e.status === "invalid argument" && /f64/.test(e.message));
  a.dispose();
  b.dispose();
});

test("creation from typed arrays keeps type, shape and values; f16 round-trips its bits", async () => {
  const cases = [[new Float32Array([1.5, -2]), "f32"], [new Int32Array([-7, 9]), "i32"], [new Uint32Array([4e9, 1]), "u32"],
    [new Uint16Array([0x3c00, 0xc000]), "f16"]];
  for (const [data, dtype] of cases) {
    const t = ctx.tensor(data, [2, 1]);
    assert.equal(t.dtype, dtype);
    assert.deepEqual(t.shape, [2, 1]);
    const back = await t.read();
    if (dtype === "f16" && !(back instanceof Uint16Array)) assert.deepEqual(Array.from(back), [1, -2]);
    else assert.deepEqual(Array.from(back), Array.from(data));
    t.dispose();
  }
  assert.throws(() => ctx.tensor(new Float64Array(2)), /Float32Array/);
  assert.throws(() => ctx.tensor(new Float32Array(3), [2, 2]), (e) => e.status === "usage error");
});

test("a disposed tensor is refused; dispose twice is harmless", () => {
  const t = ctx.ones("f32", [2]);
  t.dispose();
  t.dispose();
  assert.throws(() => t.add(t), /disposed/);
});

test("a forgotten tensor is released by the FinalizationRegistry", { skip: typeof gc !== "function" && "run with --expose-gc" }, async () => {
  let t = ctx.ones("f32", [1000]);
  const handle = t.h;
  const probe = { handle };
  assert.equal((await wg.ops.contiguous(probe).read()).length, 1000); // alive: its handle works
  t = null;
  for (let i = 0; i < 10; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.throws(() => wg.ops.contiguous(probe), (e) => e.status === "invalid argument" && /released/.test(e.message));
});

test("a call while another waits for the device is refused, not run half-way", async () => {
  const t = ctx.ones("f32", [4]);
  const pending = t.read();
  assert.throws(() => t.add(t), /another call waits for the device/);
  assert.equal((await pending).length, 4);
  t.dispose();
});

test("a runtime without JSPI gets WebGPU refused with the reason, and the CPU still works", () => {
  // A Node without the two JSPI functions stands for a runtime without JSPI (Debian's Node 20).
  const script = `delete WebAssembly.Suspending; delete WebAssembly.promising;
    const wg = await import(${JSON.stringify(new URL("../../wgtensor.js", import.meta.url).href)});
    const c = await wg.init({ backend: "cpu" });
    console.log(Array.from(await c.ones("f32", [2]).add(1).read()).join(","));
    try { await wg.init({ backend: "webgpu" }); } catch (e) { console.log(e.message); }`;
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", script],
    { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  assert.match(out, /^2,2$/m);
  assert.match(out, /no JavaScript Promise Integration/);
});
