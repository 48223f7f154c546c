// The contexts the JS API tests compare: the CPU backend (the oracle) and WebGPU (npm
// `webgpu` in Node), or the reason there is no WebGPU, for the tests to skip with.
import * as wg from "../../wgtensor.js";

export const cpu = await wg.init({ backend: "cpu" });
export let gpu = null, noGpu = null;
try {
  gpu = await wg.init({ backend: "webgpu" });
} catch (e) {
  noGpu = `no WebGPU in this Node: ${e.message}`;
}
