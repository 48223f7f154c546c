// Runs the wasm C suite in headless Chromium (Debian's chromium through playwright-core;
// WebGPU there is SwiftShader), forwarding the page's output. The exit code is the suite's.
//   node web/tests/run_browser.mjs [filter...]
// Several filters load the page once each and end with one closing line adding them up.
import { fileURLToPath } from "node:url";
import { launchChromium } from "./chromium.js";
import { serve } from "./static_server.js";
import { runEach } from "./suite_common.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const filters = process.argv.slice(2);
const server = await serve(root);
const browser = await launchChromium();
// One page per filter: a fresh wasm instance and device, as each native run has.
async function runPage(filter) {
  const page = await browser.newPage();
  let text = "";
  page.on("console", (m) => { console.log(m.text()); text += m.text() + "\n"; });
  page.on("pageerror", (e) => console.log(`page error: ${e.message}`));
  const q = new URLSearchParams({ root: root.replace(/\/$/, ""), filter });
  await page.goto(`http://127.0.0.1:${server.address().port}/web/tests/browser_suite.html?${q}`);
  await page.waitForFunction(() => window.wgtExit !== undefined || window.wgtError !== undefined, null, { timeout: 0 });
  const code = await page.evaluate(() => window.wgtExit ?? 1);
  await page.close();
  return { code, text };
}
try {
  process.exitCode = filters.length > 1 ? await runEach(filters, runPage) : (await runPage(filters[0] ?? "")).code;
} finally {
  await browser.close();
  server.close();
}
