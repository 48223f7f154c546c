// init({unsafeNvidiaF16}): Dawn's unsafe features for the npm `webgpu` package in Node, off by
// default, checked, refused in a browser, chosen once per process, and harmless where the
// adapter has no subgroup matrices (f16 products then run as without the option, bit for bit).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import * as wg from "../../wgtensor.js";
import { launchChromium } from "../chromium.js";
import { serve } from "../static_server.js";

const root = fileURLToPath(new URL("../../..", import.meta.url));

test("unsafeNvidiaF16 must be a boolean, and is chosen by the first init of the process", async () => {
  await assert.rejects(wg.init({ backend: "cpu", unsafeNvidiaF16: "yes" }),
    (e) => e instanceof wg.WgtError && e.status === "invalid argument" && /unsafeNvidiaF16 must be true or false/.test(e.message));
  const ctx = await wg.init({ backend: "cpu" });
  await assert.rejects(wg.init({ backend: "cpu", unsafeNvidiaF16: true }),
    (e) => e.status === "invalid argument" && /after the library was loaded with false/.test(e.message));
  await ctx.dispose();
});

// An f16 product's bits in a fresh Node (the library's GPU is chosen once per process).
function f16ProductBits(unsafe) {
  const script = `
    import * as wg from ${JSON.stringify(new URL("../../wgtensor.js", import.meta.url).href)};
    const ctx = await wg.init({ backend: "webgpu", unsafeNvidiaF16: ${unsafe} });
    const n = 67, data = new Uint16Array(n * n);
    for (let i = 0; i < data.length; i++) data[i] = 0x3000 + ((i * 7919) % 1024); // f16 in [0.125, 0.25)
    const a = ctx.tensor(data, [n, n], "f16");
    const out = await a.matmul(a.transpose(0, 1)).read();
    console.log(JSON.stringify({ device: ctx.deviceName, bits: Array.from(new Uint16Array(out.buffer, out.byteOffset, out.length)) }));
    await ctx.dispose();`;
  return JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" }));
}

test("without subgroup matrices on the adapter, unsafeNvidiaF16 changes no f16 product", () => {
  const safe = f16ProductBits(false), unsafe = f16ProductBits(true);
  assert.equal(unsafe.bits.length, 67 * 67);
  assert.deepEqual(unsafe.bits, safe.bits);
});

test("a browser refuses unsafeNvidiaF16 with a clear error", async () => {
  const server = await serve(root);
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${server.address().port}/web/tests/static_server.js`);
    const r = await page.evaluate(async (url) => {
      const wgt = await import(url);
      try { await wgt.init({ backend: "cpu", unsafeNvidiaF16: true }); return { ok: true }; }
      catch (e) { return { name: e.name, status: e.status, message: e.message }; }
    }, `http://127.0.0.1:${server.address().port}/web/wgtensor.js`);
    assert.equal(r.name, "WgtError");
    assert.equal(r.status, "invalid argument");
    assert.match(r.message, /unsafeNvidiaF16 is for Node/);
  } finally {
    await browser.close();
    server.close();
  }
});
