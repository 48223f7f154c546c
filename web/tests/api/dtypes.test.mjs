// The narrow types from JS: typed arrays map to i8, u8, i16 (and bool, u16, bf16 by name),
// values read back in the type's typed array, casts and where on the CPU backend.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as wg from "../../wgtensor.js";

const ctx = await wg.init({ backend: "cpu" });

test("narrow typed arrays keep type and values; named types take their arrays", async () => {
  const cases = [[new Int8Array([-128, 127]), "i8"], [new Uint8Array([0, 255]), "u8"], [new Int16Array([-32768, 5]), "i16"]];
  for (const [data, dtype] of cases) {
    const t = ctx.tensor(data, [2]);
    assert.equal(t.dtype, dtype);
    const back = await t.read();
    assert.equal(back.constructor, data.constructor);
    assert.deepEqual(Array.from(back), Array.from(data));
    t.dispose();
  }
  const b = ctx.tensor(new Uint8Array([1, 0, 1]), [3], "bool"), h = ctx.tensor(new Uint16Array([0x3f80, 0xc000]), [2], "bf16");
  assert.equal(b.dtype, "bool");
  assert.deepEqual(Array.from(await b.read()), [1, 0, 1]);
  const f = h.cast("f32");
  assert.deepEqual(Array.from(await f.read()), [1, -2]);
  assert.ok(wg.dtypes.includes("bf16") && wg.dtypes.includes("u16"));
  b.dispose(), h.dispose(), f.dispose();
});
