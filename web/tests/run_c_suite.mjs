// Runs the C test suite built as wasm (build/wasm/wgt_tests.wasm) in Node, through WASI and
// the JS WebGPU import table.
//   node web/tests/run_c_suite.mjs [--webgpu [--unsafe-nvidia-f16]] [filter...]
// --webgpu: the WebGPU half runs on the npm package `webgpu` (lavapipe here); without it the
// run is CPU-only (WGT_TEST_ALLOW_NO_WEBGPU=1). --unsafe-nvidia-f16: with Dawn's unsafe
// features, as init({unsafeNvidiaF16: true}) (shader-f16 on NVIDIA, subgroup matrices). Tests that cannot run in wasm are skipped by
// name (web/tests/wasm_skips.txt), each reason printed. Several filters run the suite once
// each (a fresh instance) and end with one closing line adding them up; the exit code is
// nonzero when any run failed.
import { closeSync, openSync, readFileSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { instantiateSuite, loadSkips, runEach } from "./suite_common.js";
import { nodeWasi } from "../src/wasi_node.js";
import { nodeGPU, UNSAFE_NVIDIA_F16 } from "../src/node_gpu.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const args = process.argv.slice(2);
const webgpu = args[0] === "--webgpu";
const unsafe = webgpu && args[1] === "--unsafe-nvidia-f16";
const filter = args.slice(webgpu ? (unsafe ? 2 : 1) : 0);
const wasmPath = process.env.WGT_WASM_TESTS ?? `${root}build/wasm/wgt_tests.wasm`;

const env = { ...process.env };
const skips = loadSkips(readFileSync(`${root}web/tests/wasm_skips.txt`, "utf8"));
for (const [name, why] of skips) console.log(`wasm: skipping tests named *${name}*: ${why}`);
env.WGT_TEST_EXCLUDE = [env.WGT_TEST_EXCLUDE, ...skips.map(([n]) => n)].filter(Boolean).join(",");

let gpu = null, name, why = "WebGPU not asked for (run with --webgpu)";
if (webgpu) ({ gpu, name } = await nodeGPU({ toggles: unsafe ? [UNSAFE_NVIDIA_F16] : [] }));
else env.WGT_TEST_ALLOW_NO_WEBGPU = "1";

const bytes = readFileSync(wasmPath);
// The source tree (docs/, include/ for the docs tests) and /tmp; not the host's /proc, whose
// figures (resident set, overcommit) are Node's, not the wasm program's.
const preopens = { [root.replace(/\/$/, "")]: root, "/tmp": tmpdir() };
if (filter.length <= 1) {
  const wasi = nodeWasi({ args: ["wgt_tests", ...filter], env, preopens });
  process.exitCode = await instantiateSuite(bytes, wasi, { gpu, name, why, subgroupMatrix: unsafe });
} else {
  process.exitCode = await runEach(filter, async (f) => {
    // The suite's stdout goes to a file (node:wasi writes to a descriptor, not a stream),
    // shown once the run ends and read for its closing line.
    const file = join(tmpdir(), `wgt-wasm-suite-${process.pid}.log`), fd = openSync(file, "w+");
    const wasi = nodeWasi({ args: ["wgt_tests", f], env, preopens, stdout: fd });
    let code = 1;
    try { code = await instantiateSuite(bytes, wasi, { gpu, name, why, subgroupMatrix: unsafe }); } finally { closeSync(fd); }
    const text = readFileSync(file, "utf8");
    unlinkSync(file);
    process.stdout.write(text);
    return { code, text };
  });
}
