// Where a subgroup-matrix product's step spends its time, apart from the product. Per step
// every invocation fetches NL 16-byte pieces from storage and stores them as f16 into
// workgroup memory, and each subgroup runs KK x TM x TN multiplies on matrices loaded from
// there. Step orders: two_barriers is matmul_sgmatrix.wgsl's loop; two_slots and
// two_slots_late stage into a second slot with one barrier a step (before or after the
// multiplies); regs2 fetches two steps ahead into two register sets. Parts of a step alone:
// mma (the multiplies and their loads only), barriers (and two barriers a step), stores (and
// the eight f16 stores, no fetch), stores_u32 (four u32 stores instead). TFLOP/s from the
// pass's timestamps; needs the npm `webgpu` package (Dawn) and Dawn's unsafe features
// (docs/web.md says what it measured on an H200).
//   node web/bench/probe_sgmatrix_steps.mjs
import { unsafeDevice } from "./unsafe_device.mjs";
const { adapter, device } = await unsafeDevice();

function kernel({ tm, tn, steps, nl, kk, pipe }) {
  const acc = [], store = [];
  for (let i = 0; i < tm; i++) for (let j = 0; j < tn; j++) {
    acc.push(`var c${i}_${j} = subgroup_matrix_result<f32, 16, 16>();`);
    store.push(`subgroupMatrixStore<row_major>(&o, (((wid.x % 16u) * 8u + sg) * ${tm * tn}u + ${i * tn + j}u) * 256u, c${i}_${j}, 16u);`);
  }
  const mma = (slot) => {
    const t = [];
    for (let q = 0; q < kk; q++) {
      for (let i = 0; i < tm; i++) t.push(`{ let l${i} = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&s, ${slot} + ((sg * ${tm}u + ${i}u) * 600u) % 9600u + ${q * 16}u, 40u);`);
      for (let j = 0; j < tn; j++) t.push(`let r${j} = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, row_major>(&s, ${slot} + ((sg * ${tn}u + ${j}u) * 600u) % 9600u + ${q * 16}u, 40u);`);
      for (let i = 0; i < tm; i++) for (let j = 0; j < tn; j++) t.push(`c${i}_${j} = subgroupMatrixMultiplyAccumulate(l${i}, r${j}, c${i}_${j});`);
      t.push("}".repeat(tm));
    }
    return t.join("\n    ");
  };
  const fetch = (set, kexpr) => [...Array(nl).keys()].map((i) => `p${set}_${i} = src[(lid + ${i}u * 256u + (${kexpr}) * ${nl * 256}u) % arrayLength(&src)];`).join("\n    ");
  const stage = (set, slot) => [...Array(nl).keys()].map((i) => {
    const at = `${slot} + (lid / 4u) * 40u + (lid % 4u) * 8u + ${(i % 4) * 2560}u`;
    if (pipe === "stores_u32") return `{ let h = (${at}) / 2u % 2044u; w32[h] = p${set}_${i}.x; w32[h + 1u] = p${set}_${i}.y; w32[h + 2u] = p${set}_${i}.z; w32[h + 3u] = p${set}_${i}.w; }`;
    return `{ let a = ${at}; let q0 = bitcast<vec2<f16>>(p${set}_${i}.x); let q1 = bitcast<vec2<f16>>(p${set}_${i}.y); let q2 = bitcast<vec2<f16>>(p${set}_${i}.z); let q3 = bitcast<vec2<f16>>(p${set}_${i}.w);
      s[a] = q0.x; s[a + 1u] = q0.y; s[a + 2u] = q1.x; s[a + 3u] = q1.y; s[a + 4u] = q2.x; s[a + 5u] = q2.y; s[a + 6u] = q3.x; s[a + 7u] = q3.y; }`;
  }).join("\n    ");
  const decl = (set) => [...Array(nl).keys()].map((i) => `var p${set}_${i} = src[lid + ${i * 256}u];`).join("\n  ");
  let body;
  if (["mma", "barriers", "stores", "stores_u32"].includes(pipe)) { // parts of two_barriers' step
    const touch = [...Array(nl).keys()].map((i) => `p0_${i} = p0_${i} + vec4<u32>(k);`).join("\n    ");
    body = `for (var k = 0u; k < ${steps}u; k = k + 1u) {
    ${pipe === "mma" ? "" : "workgroupBarrier();"}
    ${pipe.startsWith("stores") ? stage(0, "0u") : ""}
    ${pipe === "mma" ? "" : "workgroupBarrier();"}
    ${pipe.startsWith("stores") ? touch : ""}
    ${mma("0u")}
  }`;
  } else if (pipe === "two_barriers") { // today's kernel
    body = `${fetch(0, "0u")}
  for (var k = 0u; k < ${steps}u; k = k + 1u) {
    workgroupBarrier();
    ${stage(0, "0u")}
    workgroupBarrier();
    ${fetch(0, "k + 1u")}
    ${mma("0u")}
  }`;
  } else if (pipe.startsWith("two_slots")) {
    // One barrier a step: slot k % 2 is read while slot (k + 1) % 2 is written, the stores
    // before the multiplies (two_slots) or after them (two_slots_late).
    const late = pipe === "two_slots_late";
    body = `${fetch(0, "0u")}
  ${stage(0, "0u")}
  ${fetch(0, "1u")}
  workgroupBarrier();
  for (var k = 0u; k < ${steps}u; k = k + 1u) {
    let cur = (k % 2u) * 10240u;
    let nxt = 10240u - cur;
    ${late ? mma("cur") : ""}
    ${stage(0, "nxt")}
    ${fetch(0, "k + 2u")}
    ${late ? "" : mma("cur")}
    workgroupBarrier();
  }`;
  } else if (pipe === "regs2") { // two register sets: fetched two steps ahead, two barriers
    body = `${fetch(0, "0u")}
  ${fetch(1, "1u")}
  for (var k = 0u; k < ${steps}u; k = k + 2u) {
    workgroupBarrier();
    ${stage(0, "0u")}
    workgroupBarrier();
    ${fetch(0, "k + 2u")}
    ${mma("0u")}
    workgroupBarrier();
    ${stage(1, "0u")}
    workgroupBarrier();
    ${fetch(1, "k + 3u")}
    ${mma("0u")}
  }`;
  }
  return `enable f16;
enable subgroups;
enable chromium_experimental_subgroup_matrix;
diagnostic(off, chromium.subgroup_matrix_uniformity);
@group(0) @binding(0) var<storage, read_write> o: array<f32>;
@group(0) @binding(1) var<storage, read> src: array<vec4<u32>>;
var<workgroup> s: array<f16, 20480>;
var<workgroup> w32: array<u32, ${pipe === "stores_u32" ? 2048 : 1}>;
@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
  let sg = lid / 32u;
  ${decl(0)}
  ${pipe === "regs2" ? decl(1) : ""}
  ${acc.join("\n  ")}
  ${body}
  ${store.join("\n  ")}
  if (p0_0.x == 12345u${pipe === "stores_u32" ? " || w32[lid] == 7u" : ""}) { o[0] = 1.0; }
}`;
}

const groups = 132 * 16, steps = 256;
const src = device.createBuffer({ size: 1 << 24, usage: GPUBufferUsage.STORAGE });
const qs = device.createQuerySet({ type: "timestamp", count: 2 });
const qbuf = device.createBuffer({ size: 16, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
const rbuf = device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
console.log(`adapter: ${adapter.info.description}; ${groups} workgroups of 8 subgroups, ${steps} steps`);
const variants = [];
for (const [tm, tn, nl] of [[2, 4, 4], [4, 4, 6]])
  for (const pipe of ["mma", "barriers", "stores", "stores_u32", "two_barriers", "two_slots", "two_slots_late", "regs2"])
    variants.push({ tm, tn, steps, nl, kk: 2, pipe });
for (const v of variants) {
  const module = device.createShaderModule({ code: kernel(v) });
  const info = await module.getCompilationInfo();
  const errors = info.messages.filter((m) => m.type === "error");
  if (errors.length) { console.log(JSON.stringify(v), "does not compile:", errors[0].lineNum, errors[0].message); continue; }
  const pipeline = device.createComputePipeline({ layout: "auto", compute: { module, entryPoint: "main" } });
  const out = device.createBuffer({ size: 16 * 8 * v.tm * v.tn * 256 * 4, usage: GPUBufferUsage.STORAGE });
  const bind = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: out } }, { binding: 1, resource: { buffer: src } }] });
  let best = Infinity;
  for (let rep = 0; rep < 4; rep++) {
    const enc = device.createCommandEncoder();
    const pass = enc.beginComputePass({ timestampWrites: { querySet: qs, beginningOfPassWriteIndex: 0, endOfPassWriteIndex: 1 } });
    pass.setPipeline(pipeline); pass.setBindGroup(0, bind); pass.dispatchWorkgroups(groups); pass.end();
    enc.resolveQuerySet(qs, 0, 2, qbuf, 0); enc.copyBufferToBuffer(qbuf, 0, rbuf, 0, 16);
    device.queue.submit([enc.finish()]);
    await rbuf.mapAsync(GPUMapMode.READ);
    const t = new BigUint64Array(rbuf.getMappedRange().slice(0)); rbuf.unmap();
    best = Math.min(best, Number(t[1] - t[0]) / 1e6);
  }
  const flop = groups * 8 * steps * v.kk * v.tm * v.tn * 2 * 16 * 16 * 16;
  console.log(`${v.tm}x${v.tn} nl=${v.nl} kk=${v.kk} ${v.pipe}: ${best.toFixed(3)} ms, ${(flop / best / 1e9).toFixed(1)} TFLOP/s`);
  out.destroy();
}
device.destroy();
