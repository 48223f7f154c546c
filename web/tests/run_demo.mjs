// The demo page in headless Chromium: trains a few epochs on the page's WebGPU adapter
// (SwiftShader here) and on the CPU, saves a screenshot, and checks that both losses fell,
// the held-out accuracy is well above chance, and the plot was drawn (the canvas holds
// pixels of both runs' colours).
//   node web/tests/run_demo.mjs [epochs] [screenshot.png]
import { fileURLToPath } from "node:url";
import { launchChromium } from "./chromium.js";
import { serve } from "./static_server.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const [epochs = "3", shot = `${root}build/wasm/demo.png`] = process.argv.slice(2);
const server = await serve(root);
const browser = await launchChromium();
const failures = [];
let passed = 0;
const check = (ok, what) => { console.log(`${ok ? "ok  " : "FAIL"} ${what}`); if (ok) passed++; else failures.push(what); };
try {
  const page = await browser.newPage({ viewport: { width: 900, height: 760 } });
  page.on("pageerror", (e) => console.log(`page error: ${e.message}`));
  await page.goto(`http://127.0.0.1:${server.address().port}/web/demo/index.html?epochs=${epochs}`);
  await page.waitForFunction(() => window.demoResult !== undefined, null, { timeout: 0 });
  const r = await page.evaluate(() => window.demoResult);
  await page.screenshot({ path: shot });
  console.log(`screenshot: ${shot}`);
  if (r.error) check(false, `the page: ${r.error}`);
  else {
    for (const name of ["webgpu", "cpu"]) {
      const l = r[name].losses;
      console.log(`${name}: losses ${l.map((v) => v.toFixed(4)).join(" ")}, accuracy ${r[name].accuracy}, ms/epoch ${r[name].ms.map((v) => v.toFixed(0)).join(" ")}`);
      check(l.length === Number(epochs) && l.every((v, i) => i === 0 || v < l[i - 1]), `${name}: the loss falls every epoch`);
      check(r[name].accuracy > 0.8, `${name}: held-out accuracy above 80 %`);
    }
    check(Math.abs(r.webgpu.losses.at(-1) - r.cpu.losses.at(-1)) < 1e-3, "WebGPU and CPU end at the same loss");
    // The plot: count pixels of each run's colour on the canvas.
    const drawn = await page.evaluate(() => {
      const c = document.getElementById("plot"), d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
      let red = 0, blue = 0;
      for (let i = 0; i < d.length; i += 4) {
        if (d[i] > 180 && d[i + 1] < 90 && d[i + 2] < 90) red++;
        if (d[i] < 90 && d[i + 1] < 130 && d[i + 2] > 160) blue++;
      }
      return { red, blue };
    });
    check(drawn.red > 50 && drawn.blue > 50, `the plot shows both runs (${drawn.red} and ${drawn.blue} pixels)`);
  }
} finally {
  await browser.close();
  server.close();
}
console.log(`${passed} passed, ${failures.length} failed`);
process.exitCode = failures.length ? 1 : 0;
