// The wasm C suite in a page, on navigator.gpu. Query: root= the source tree's absolute path
// (the suite reads docs/ and include/ from it, served by the page's origin at /),
// filter= a test-name substring.
// Sets window.wgtExit to the suite's exit code (or window.wgtError) when it ends.
import { browserWasi } from "../src/wasi_browser.js";
import { instantiateSuite, loadSkips } from "./suite_common.js";

const q = new URLSearchParams(location.search);
const out = document.getElementById("out");
const line = (s) => { console.log(s); out.textContent += s + "\n"; };
try {
  const skips = loadSkips(await (await fetch("./wasm_skips.txt")).text());
  for (const [name, why] of skips) line(`wasm: skipping tests named *${name}*: ${why}`);
  const env = { WGT_TEST_EXCLUDE: skips.map(([n]) => n).join(",") };
  const gpu = navigator.gpu ?? null;
  if (!gpu) env.WGT_TEST_ALLOW_NO_WEBGPU = "1";
  const root = q.get("root") ?? "/";
  const wasi = browserWasi({
    args: ["wgt_tests", ...(q.get("filter") ? [q.get("filter")] : [])],
    env,
    onLine: line,
    files: { [root.endsWith("/") ? root : root + "/"]: "/" },
  });
  const bytes = await (await fetch("/build/wasm/wgt_tests.wasm")).arrayBuffer();
  window.wgtExit = await instantiateSuite(bytes, wasi, {
    gpu,
    name: `navigator.gpu in ${navigator.userAgent.match(/Chrom\S+/)?.[0] ?? navigator.userAgent}`,
    why: "this browser has no navigator.gpu",
  });
} catch (e) {
  line(`FAIL the page: ${e.stack ?? e}`);
  window.wgtError = String(e);
}
