// Whole f16 products (a [M,K] @ b [K,N] -> f32, row-major, M, N, K multiples of the tile)
// with their operand tiles staged in workgroup memory one of two ways: "words" as
// matmul_sgmatrix.wgsl does (16-byte words fetched into registers, stored as eight f16
// values) but with no bounds checks, or "matrix" (each subgroup moves some of a step's 16 x 16
// pieces with subgroupMatrixLoad from storage and subgroupMatrixStore), in one of two step
// orders (see kernel()); or not staged at all, "direct" (see directKernel()). Checks 48
// sampled outputs against the host's exact sums (values k/8 for small integers k) and prints
// TFLOP/s from the pass's timestamps, the best of 11 runs. Needs the npm `webgpu` package
// (Dawn) and Dawn's unsafe features (docs/web.md says what it measured on an H200). Run few
// variants per process: the GPU's clock may fall during a long run of them.
//   PROBE_VARIANTS="128,128,64,4,2,words,two_barriers;..." node web/bench/probe_sgmatrix_stage.mjs [size ...]
import { unsafeDevice } from "./unsafe_device.mjs";
const { adapter, device } = await unsafeDevice(["maxStorageBufferBindingSize", "maxBufferSize"]);
device.addEventListener?.("uncapturederror", (e) => console.log("error:", e.error.message));

// v: {bm, bn, bk, wm, wn, stage, order}. stage "matrix": each subgroup moves some of the
// step's 16 x 16 pieces with subgroupMatrixLoad from storage and subgroupMatrixStore; stage
// "words": each invocation fetches 16-byte words into registers and stores them as eight f16
// values, as matmul_sgmatrix.wgsl does. order "two_barriers": one staged slot, two barriers a
// step (the kernel's loop); "two_slots": two slots, one barrier a step, the next step staged
// after the multiplies, the loop unrolled by two so that every slot offset is a constant.
function kernel(v, M, N, K) {
  if (v.stage === "direct") return directKernel(v, M, N, K);
  const { bm, bn, bk, wm, wn } = v;
  const slots = v.order === "two_slots" ? 2 : 1;
  const nsg = wm * wn, wg = nsg * 32, subm = bm / wm, subn = bn / wn, tm = subm / 16, tn = subn / 16;
  const ap = bk + 8, bp = bn + 8;
  const L = "subgroup_matrix_left<f16, 16, 16>", R = "subgroup_matrix_right<f16, 16, 16>";
  const words = v.stage === "words";
  const pa = words ? bm * bk / 8 / wg : (bm / 16) * (bk / 16) / nsg, pb = words ? bk * bn / 8 / wg : (bk / 16) * (bn / 16) / nsg;
  const piecesA = [...Array(pa).keys()].map((i) => `ga${i}`), piecesB = [...Array(pb).keys()].map((i) => `gb${i}`);
  const aq = (i) => `(sg + ${i * nsg}u)`, wq = (i) => `(lid + ${i * wg}u)`;
  const loadA = (kexpr) => piecesA.map((n, i) => words
    ? `${n} = a[((m0 + ${wq(i)} / ${bk / 8}u) * ${K}u + ${kexpr} + (${wq(i)} % ${bk / 8}u) * 8u) / 8u];`
    : `${n} = subgroupMatrixLoad<${L}, row_major>(&a, (m0 + (${aq(i)} / ${bk / 16}u) * 16u) * ${K}u + ${kexpr} + (${aq(i)} % ${bk / 16}u) * 16u, ${K}u);`);
  const loadB = (kexpr) => piecesB.map((n, i) => words
    ? `${n} = b[((${kexpr} + ${wq(i)} / ${bn / 8}u) * ${N}u + n0 + (${wq(i)} % ${bn / 8}u) * 8u) / 8u];`
    : `${n} = subgroupMatrixLoad<${R}, row_major>(&b, (${kexpr} + (${aq(i)} / ${bn / 16}u) * 16u) * ${N}u + n0 + (${aq(i)} % ${bn / 16}u) * 16u, ${N}u);`);
  const eight = (tile, at, n) => `{ let w = ${at}; let q0 = bitcast<vec2<f16>>(${n}.x); let q1 = bitcast<vec2<f16>>(${n}.y); let q2 = bitcast<vec2<f16>>(${n}.z); let q3 = bitcast<vec2<f16>>(${n}.w);
      ${tile}[w] = q0.x; ${tile}[w + 1u] = q0.y; ${tile}[w + 2u] = q1.x; ${tile}[w + 3u] = q1.y; ${tile}[w + 4u] = q2.x; ${tile}[w + 5u] = q2.y; ${tile}[w + 6u] = q3.x; ${tile}[w + 7u] = q3.y; }`;
  const storeA = (slot) => piecesA.map((n, i) => words
    ? eight("sa", `${slot * bm * ap}u + (${wq(i)} / ${bk / 8}u) * ${ap}u + (${wq(i)} % ${bk / 8}u) * 8u`, n)
    : `subgroupMatrixStore<row_major>(&sa, ${slot * bm * ap}u + (${aq(i)} / ${bk / 16}u) * 16u * ${ap}u + (${aq(i)} % ${bk / 16}u) * 16u, ${n}, ${ap}u);`);
  const storeB = (slot) => piecesB.map((n, i) => words
    ? eight("sb", `${slot * bk * bp}u + (${wq(i)} / ${bn / 8}u) * ${bp}u + (${wq(i)} % ${bn / 8}u) * 8u`, n)
    : `subgroupMatrixStore<row_major>(&sb, ${slot * bk * bp}u + (${aq(i)} / ${bn / 16}u) * 16u * ${bp}u + (${aq(i)} % ${bn / 16}u) * 16u, ${n}, ${bp}u);`);
  const mma = (slot) => {
    const t = [];
    for (let q = 0; q < bk / 16; q++) {
      t.push("{");
      for (let i = 0; i < tm; i++) t.push(`let l${i} = subgroupMatrixLoad<${L}, row_major>(&sa, ${slot * bm * ap}u + (am + ${i * 16}u) * ${ap}u + ${q * 16}u, ${ap}u);`);
      for (let j = 0; j < tn; j++) t.push(`let r${j} = subgroupMatrixLoad<${R}, row_major>(&sb, ${slot * bk * bp}u + ${q * 16}u * ${bp}u + bn + ${j * 16}u, ${bp}u);`);
      for (let i = 0; i < tm; i++) for (let j = 0; j < tn; j++) t.push(`c${i}_${j} = subgroupMatrixMultiplyAccumulate(l${i}, r${j}, c${i}_${j});`);
      t.push("}");
    }
    return t.join("\n    ");
  };
  const stage = (slot) => [...storeA(slot), ...storeB(slot)].join("\n    ");
  const fetch = (kexpr) => [...loadA(kexpr), ...loadB(kexpr)].join("\n    ");
  const steps = K / bk;
  const lines = [`enable f16;
enable subgroups;
enable chromium_experimental_subgroup_matrix;
diagnostic(off, chromium.subgroup_matrix_uniformity);
@group(0) @binding(0) var<storage, read> a: array<${words ? "vec4<u32>" : "f16"}>;
@group(0) @binding(1) var<storage, read> b: array<${words ? "vec4<u32>" : "f16"}>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
var<workgroup> sa: array<f16, ${slots * bm * ap}>;
var<workgroup> sb: array<f16, ${slots * bk * bp}>;
@compute @workgroup_size(${wg})
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
  let sg = lid / 32u;
  let m0 = (wid.x / ${N / bn}u) * ${bm}u;
  let n0 = (wid.x % ${N / bn}u) * ${bn}u;
  let am = (sg / ${wn}u) * ${subm}u;
  let bn = (sg % ${wn}u) * ${subn}u;`];
  for (let i = 0; i < tm; i++) for (let j = 0; j < tn; j++) lines.push(`  var c${i}_${j} = subgroup_matrix_result<f32, 16, 16>();`);
  for (const n of piecesA) lines.push(`  var ${n}: ${words ? "vec4<u32>" : L};`);
  for (const n of piecesB) lines.push(`  var ${n}: ${words ? "vec4<u32>" : R};`);
  lines.push(`  ${fetch("0u")}`);
  if (slots === 1) {
    lines.push(`  for (var s = 0u; s < ${steps}u; s = s + 1u) {
    workgroupBarrier();
    ${stage(0)}
    workgroupBarrier();
    if (s + 1u < ${steps}u) {
      let k1 = (s + 1u) * ${bk}u;
      ${fetch("k1")}
    }
    ${mma(0)}
  }`);
  } else { // steps is even (K a multiple of 2 BK)
    lines.push(`  ${stage(0)}
  ${fetch(`${bk}u`)}
  workgroupBarrier();
  for (var s = 0u; s < ${steps}u; s = s + 2u) {
    ${mma(0)}
    ${stage(1)}
    if (s + 2u < ${steps}u) {
      let k2 = (s + 2u) * ${bk}u;
      ${fetch("k2")}
    }
    workgroupBarrier();
    ${mma(1)}
    if (s + 2u < ${steps}u) {
      ${stage(0)}
      let k3 = (s + 3u) * ${bk}u;
      ${fetch("k3")}
    }
    workgroupBarrier();
  }`);
  }
  for (let i = 0; i < tm; i++) for (let j = 0; j < tn; j++)
    lines.push(`  subgroupMatrixStore<row_major>(&c, (m0 + am + ${i * 16}u) * ${N}u + n0 + bn + ${j * 16}u, c${i}_${j}, ${N}u);`);
  lines.push("}");
  return lines.join("\n");
}

// stage "direct": no workgroup memory; every subgroup loads its own TM left and TN right
// matrices straight from storage for each 16 of K (the shape of the first probe kernels, one
// of which never finished on an H200: ../shared/webgpu-facts.md).
function directKernel(v, M, N, K) {
  const { bm, bn, wm, wn } = v;
  const subm = bm / wm, subn = bn / wn, tm = subm / 16, tn = subn / 16;
  const L = "subgroup_matrix_left<f16, 16, 16>", R = "subgroup_matrix_right<f16, 16, 16>";
  const t = [`enable f16;
enable subgroups;
enable chromium_experimental_subgroup_matrix;
diagnostic(off, chromium.subgroup_matrix_uniformity);
@group(0) @binding(0) var<storage, read> a: array<f16>;
@group(0) @binding(1) var<storage, read> b: array<f16>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@compute @workgroup_size(${wm * wn * 32})
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
  let sg = lid / 32u;
  let m0 = (wid.x / ${N / bn}u) * ${bm}u + (sg / ${wn}u) * ${subm}u;
  let n0 = (wid.x % ${N / bn}u) * ${bn}u + (sg % ${wn}u) * ${subn}u;`];
  for (let i = 0; i < tm; i++) for (let j = 0; j < tn; j++) t.push(`  var c${i}_${j} = subgroup_matrix_result<f32, 16, 16>();`);
  t.push(`  for (var k = 0u; k < ${K}u; k = k + 16u) {`);
  for (let i = 0; i < tm; i++) t.push(`    let l${i} = subgroupMatrixLoad<${L}, row_major>(&a, (m0 + ${i * 16}u) * ${K}u + k, ${K}u);`);
  for (let j = 0; j < tn; j++) t.push(`    let r${j} = subgroupMatrixLoad<${R}, row_major>(&b, k * ${N}u + n0 + ${j * 16}u, ${N}u);`);
  for (let i = 0; i < tm; i++) for (let j = 0; j < tn; j++) t.push(`    c${i}_${j} = subgroupMatrixMultiplyAccumulate(l${i}, r${j}, c${i}_${j});`);
  t.push("  }");
  for (let i = 0; i < tm; i++) for (let j = 0; j < tn; j++)
    t.push(`  subgroupMatrixStore<row_major>(&c, (m0 + ${i * 16}u) * ${N}u + n0 + ${j * 16}u, c${i}_${j}, ${N}u);`);
  t.push("}");
  return t.join("\n");
}

function f16bits(x) { // exact for k/8, |k| < 2048
  if (x === 0) return 0;
  const s = x < 0 ? 0x8000 : 0; x = Math.abs(x);
  let e = Math.floor(Math.log2(x)); let m = x / 2 ** e - 1;
  return s | ((e + 15) << 10) | Math.round(m * 1024);
}

const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0);
// PROBE_VARIANTS="bm,bn,bk,wm,wn,stage,order;..." replaces the default list
const variants = [];
const listed = process.env.PROBE_VARIANTS || "128,128,32,4,2,words,two_barriers;128,128,32,4,2,words,two_slots;" +
  "128,128,64,4,2,words,two_barriers;128,256,32,2,4,matrix,two_barriers;128,128,32,4,2,words,two_barriers";
for (const item of listed.split(";").filter(Boolean)) {
  const [bm, bn, bk, wm, wn, stage, order] = item.split(",");
  variants.push({ bm: +bm, bn: +bn, bk: +bk, wm: +wm, wn: +wn, stage, order });
}
console.log(`adapter: ${adapter.info.description}; subgroups ${adapter.info.subgroupMinSize}..${adapter.info.subgroupMaxSize}`);
for (const S of sizes.length ? sizes : [4096, 8192]) {
  const M = S, N = S, K = S;
  const ha = new Uint16Array(M * K), hb = new Uint16Array(K * N);
  const va = (i) => ((i * 7) % 17 - 8) / 8, vb = (i) => ((i * 5) % 13 - 6) / 8;
  const bits = new Map();
  for (let k = -8; k <= 8; k++) bits.set(k / 8, f16bits(k / 8));
  for (let i = 0; i < M * K; i++) ha[i] = bits.get(va(i));
  for (let i = 0; i < K * N; i++) hb[i] = bits.get(vb(i));
  const mk = (data, usage) => { const buf = device.createBuffer({ size: data.byteLength, usage: usage | GPUBufferUsage.COPY_DST }); device.queue.writeBuffer(buf, 0, data); return buf; };
  const ba = mk(ha, GPUBufferUsage.STORAGE), bb = mk(hb, GPUBufferUsage.STORAGE);
  const bc = device.createBuffer({ size: M * N * 4, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
  const samples = [];
  for (let t = 0; t < 48; t++) {
    const m = (t * 2654435761 % M + M) % M, n = (t * 40503 + 17 * t * t) % N;
    let s = 0;
    for (let k = 0; k < K; k++) s += va(m * K + k) * vb(k * N + n);
    samples.push([m, n, s]);
  }
  const read = device.createBuffer({ size: M * N * 4, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const qs = device.createQuerySet({ type: "timestamp", count: 2 });
  const qbuf = device.createBuffer({ size: 16, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
  const rbuf = device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  for (const v of variants) {
    const name = `${S}^3 tile ${v.bm},${v.bn},${v.bk},${v.wm},${v.wn} ${v.stage} ${v.order}`;
    const shared = v.stage === "direct" ? 0 : 2 * (v.order === "two_slots" ? 2 : 1) * (v.bm * (v.bk + 8) + v.bk * (v.bn + 8));
    const nsg = v.wm * v.wn;
    const unit = v.stage === "words" ? nsg * 32 * 8 : v.stage === "matrix" ? nsg * 256 : 1;
    if (shared > adapter.limits.maxComputeWorkgroupStorageSize || (v.order === "two_slots" && (K / v.bk) % 2) || (v.bm * v.bk) % unit || (v.bk * v.bn) % unit || nsg * 32 > 1024) {
      console.log(`${name}: does not fit`); continue;
    }
    const module = device.createShaderModule({ code: kernel(v, M, N, K) });
    const info = await module.getCompilationInfo();
    const errors = info.messages.filter((m) => m.type === "error");
    if (errors.length) { console.log(name, "does not compile:", errors[0].lineNum, errors[0].message); continue; }
    const pipeline = device.createComputePipeline({ layout: "auto", compute: { module, entryPoint: "main" } });
    const bind = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [ba, bb, bc].map((buffer, binding) => ({ binding, resource: { buffer } })) });
    console.log(`${name}: started`); // a queue that never finishes leaves this line last
    let best = Infinity;
    for (let rep = 0; rep < 12; rep++) {
      const enc = device.createCommandEncoder();
      if (rep === 0) enc.clearBuffer(bc);
      const pass = enc.beginComputePass({ timestampWrites: { querySet: qs, beginningOfPassWriteIndex: 0, endOfPassWriteIndex: 1 } });
      pass.setPipeline(pipeline); pass.setBindGroup(0, bind); pass.dispatchWorkgroups((M / v.bm) * (N / v.bn)); pass.end();
      enc.resolveQuerySet(qs, 0, 2, qbuf, 0); enc.copyBufferToBuffer(qbuf, 0, rbuf, 0, 16);
      if (rep === 0) enc.copyBufferToBuffer(bc, 0, read, 0, M * N * 4);
      device.queue.submit([enc.finish()]);
      await rbuf.mapAsync(GPUMapMode.READ);
      const t = new BigUint64Array(rbuf.getMappedRange().slice(0)); rbuf.unmap();
      if (rep > 0) best = Math.min(best, Number(t[1] - t[0]) / 1e6);
    }
    await read.mapAsync(GPUMapMode.READ);
    const got = new Float32Array(read.getMappedRange().slice(0)); read.unmap();
    let bad = 0, first = "";
    for (const [m, n, s] of samples) if (got[m * N + n] !== s) { if (!bad) first = ` first [${m},${n}] ${got[m * N + n]} want ${s}`; bad++; }
    console.log(`${name}: ${best.toFixed(3)} ms, ${(2 * M * N * K / best / 1e9).toFixed(1)} TFLOP/s, ${bad ? `${bad} of ${samples.length} samples wrong${first}` : "exact"}`);
  }
  for (const buf of [ba, bb, bc, read]) buf.destroy();
}
device.destroy();
