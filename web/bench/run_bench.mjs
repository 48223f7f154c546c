// Runs bench/kernels_bench.c built as wasm (build/wasm/kernels_bench.wasm, `make bench-web`) in
// Node, on the npm package `webgpu` through the JS WebGPU import table: the JavaScript path
// of the same workloads the native build runs (docs/web.md, "Benchmarks").
//   node web/bench/run_bench.mjs [--unsafe-nvidia-f16] [kernels_bench arguments...]
// --unsafe-nvidia-f16: Dawn's unsafe features (shader-f16 on NVIDIA, subgroup matrices), as
// init({unsafeNvidiaF16: true}) gives them. WGT_BENCH_DAWN_FEATURES (with --unsafe-nvidia-f16
// only): more Dawn features to enable beside them, comma-separated, to measure one's effect
// (for example disable_robustness); the library never turns these on.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { instantiateSuite } from "../tests/suite_common.js";
import { nodeWasi } from "../src/wasi_node.js";
import { nodeGPU, UNSAFE_NVIDIA_F16 } from "../src/node_gpu.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const unsafe = process.argv.includes("--unsafe-nvidia-f16");
const args = process.argv.slice(2).filter((a) => a !== "--unsafe-nvidia-f16");
const wasmPath = process.env.WGT_WASM_BENCH ?? `${root}build/wasm/kernels_bench.wasm`;
const extra = unsafe && process.env.WGT_BENCH_DAWN_FEATURES ? `,${process.env.WGT_BENCH_DAWN_FEATURES}` : "";
const { gpu, name } = await nodeGPU({ toggles: unsafe ? [UNSAFE_NVIDIA_F16 + extra] : [] });
console.log(`# runtime: ${name}${unsafe ? `, unsafe f16 and subgroup matrices${extra}` : ""}`);
const wasi = nodeWasi({ args: ["kernels_bench", ...args], env: process.env });
process.exitCode = await instantiateSuite(readFileSync(wasmPath), wasi, { gpu, name, subgroupMatrix: unsafe });
