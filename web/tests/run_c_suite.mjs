// Runs the C test suite built as wasm (build/wasm/wgt_tests.wasm) in Node, through WASI and
// the JS WebGPU import table.
//   node web/tests/run_c_suite.mjs [--webgpu] [filter]
// --webgpu: the WebGPU half runs on the npm package `webgpu` (lavapipe here); without it the
// run is CPU-only (WGT_TEST_ALLOW_NO_WEBGPU=1). Tests that cannot run in wasm are skipped by
// name (web/tests/wasm_skips.txt), each reason printed. The exit code is the suite's.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { loadSkips, instantiateSuite } from "./suite_common.js";
import { nodeWasi } from "../src/wasi_node.js";
import { nodeGPU } from "../src/node_gpu.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const args = process.argv.slice(2);
const webgpu = args[0] === "--webgpu";
const filter = args.slice(webgpu ? 1 : 0);
const wasmPath = process.env.WGT_WASM_TESTS ?? `${root}build/wasm/wgt_tests.wasm`;

const env = { ...process.env };
const skips = loadSkips(readFileSync(`${root}web/tests/wasm_skips.txt`, "utf8"));
for (const [name, why] of skips) console.log(`wasm: skipping tests named *${name}*: ${why}`);
env.WGT_TEST_EXCLUDE = [env.WGT_TEST_EXCLUDE, ...skips.map(([n]) => n)].filter(Boolean).join(",");

let gpu = null, name, why = "WebGPU not asked for (run with --webgpu)";
if (webgpu) ({ gpu, name } = await nodeGPU());
else env.WGT_TEST_ALLOW_NO_WEBGPU = "1";

const wasi = nodeWasi({ args: ["wgt_tests", ...filter], env, preopens: { "/": "/" } });
const code = await instantiateSuite(readFileSync(wasmPath), wasi, { gpu, name, why });
process.exitCode = code;
