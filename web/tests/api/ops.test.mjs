// Every op family through the JS API on WebGPU (npm `webgpu` in Node) against the same ops
// on the C library's CPU backend (the oracle of the native suite), with the same seeded
// inputs. Where Node has no WebGPU, these are skipped with the reason.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as wg from "../../wgtensor.js";
import { cpu, gpu, noGpu } from "./contexts.mjs";

// Inputs made by the library's seeded generator: the same values on every backend.
const inputs = (ctx) => ({
  a: ctx.randUniform("f32", [3, 4], -2, 2, 1n),
  b: ctx.randUniform("f32", [3, 4], 0.5, 2, 2n),
  col: ctx.randUniform("f32", [3, 1], -1, 1, 3n),
  m: ctx.randUniform("f32", [4, 5], -1, 1, 4n),
  idx: ctx.tensor(new Int32Array([2, 0, 1, 2])),
});

/** Runs family(ctx, inputs) -> {name: tensor} on both backends and compares every result. */
function family(name, build, tol = { rel: 1e-5, abs: 1e-6 }) {
  test(name, { skip: noGpu ?? false }, async () => {
    const results = [];
    for (const ctx of [cpu, gpu]) {
      const inp = inputs(ctx), out = build(ctx, inp), values = {};
      for (const [k, t] of Object.entries(out)) {
        values[k] = { dtype: t.dtype, shape: t.shape, data: Array.from(await t.read()) };
        t.dispose();
      }
      Object.values(inp).forEach((t) => t.dispose());
      results.push(values);
    }
    const [want, got] = results;
    for (const k of Object.keys(want)) {
      assert.equal(got[k].dtype, want[k].dtype, `${k}: dtype`);
      assert.deepEqual(got[k].shape, want[k].shape, `${k}: shape`);
      want[k].data.forEach((w, i) => {
        const g = got[k].data[i];
        if (Number.isNaN(w)) return assert.ok(Number.isNaN(g), `${k}[${i}]: webgpu ${g}, cpu NaN`);
        assert.ok(Math.abs(g - w) <= tol.abs + tol.rel * Math.abs(w), `${k}[${i}]: webgpu ${g}, cpu ${w}`);
      });
    }
  });
}

family("binary ops with broadcasting and scalars", (c, { a, b, col }) => ({
  add: a.add(col), sub: a.sub(b), mul: a.mul(b), div: a.div(b), max: a.maximum(col), min: a.minimum(b),
  pow: b.pow(a), atan2: a.atan2(b), mod: a.mod(b), scalar: a.mul(3).add(0.5), addScalar: a.addScalar(2),
}));
family("comparisons, logic and where", (c, { a, b, col }) => ({
  lt: a.lt(col), eq: a.eq(a), ge: a.ge(b), and: a.gt(0).logicalAnd(b.gt(1)), where: a.gt(0).where(a, b),
}));
test("predicates give bool tensors, read as Uint8Array", async () => {
  const a = cpu.tensor(new Float32Array([1, NaN, -2, 0]));
  const m = a.gt(0), n = a.isnan(), x = n.logicalXor(m), count = m.logicalOr(n).sum([], 0);
  assert.equal(m.dtype, "bool");
  assert.equal(x.dtype, "bool");
  const got = await m.read();
  assert.ok(got instanceof Uint8Array);
  assert.deepEqual(Array.from(got), [1, 0, 0, 0]);
  assert.deepEqual(Array.from(await x.read()), [1, 1, 0, 0]);
  assert.equal(count.dtype, "i32"); // a sum of bool counts the trues
  assert.deepEqual(Array.from(await count.read()), [2]);
  [a, m, n, x, count].forEach((t) => t.dispose());
});
family("unary ops", (c, { a, b }) => ({
  neg: a.neg(), abs: a.abs(), sqrt: b.sqrt(), rsqrt: b.rsqrt(), exp: a.exp(), log: b.log(), sin: a.sin(),
  cos: a.cos(), tanh: a.tanh(), sigmoid: a.sigmoid(), relu: a.relu(), gelu: a.gelu(), silu: a.silu(),
  floor: a.floor(), round: a.round(), erf: a.erf(), clamp: a.clamp(-1, 1), softplus: a.softplus(),
}), { rel: 4e-6, abs: 4e-6 });
family("reductions and scans", (c, { a }) => ({
  sum: a.sum([1], 0), mean: a.mean([], 0), max: a.max([0], 1), min: a.min(-1, 0), var: a.var([1], 0, 1),
  argmax: a.argmax(1, 0), cumsum: a.cumsum(1),
}));
family("matrix products", (c, { a, m, col }) => ({
  matmul: a.matmul(m), linear: a.linear(m.transpose(0, 1), null), batched: wg.ops.stack([a, a.neg()]).matmul(m),
}));
family("rows: softmax and norms", (c, { a, b }) => ({
  softmax: a.softmax(-1), logSoftmax: a.logSoftmax(1),
  layerNorm: a.layerNorm(c.ones("f32", [4]), c.zeros("f32", [4]), 1e-5),
  rmsNorm: a.rmsNorm(c.full("f32", [4], 2), 1e-6),
}));
family("shapes and views", (c, { a, col }) => ({
  transpose: a.transpose(0, 1).contiguous(), reshape: a.reshape([2, 6]), permute: a.permute([1, 0]),
  slice: a.slice(1, 1, 4, 2), flip: a.flip([0]), pad: a.pad([1, 0], [0, 2], 7), concat: wg.ops.concat([a, col], 1),
  expand: col.expand([3, 5]), unsqueeze: a.unsqueeze(0),
}));
family("indexing", (c, { a, idx }) => ({
  gather: a.gatherRows(idx.slice(0, 0, 3, 1)), select: a.indexSelect(1, idx), oneHot: idx.oneHot(3n, "f32"),
  triu: a.triu(0n), tril: a.tril(-1n),
}));
family("casts and f16", (c, { a }) => ({
  i32: a.mul(10).cast("i32"), f16: a.cast("f16").cast("f32"), u32: a.abs().mul(5).cast("u32"),
}));

test("a compiled graph replays with new inputs on both backends", { skip: noGpu ?? false }, async () => {
  const seen = [];
  for (const ctx of [cpu, gpu]) {
    const x = ctx.graphInput("x", "f32", [2, 3]);
    const y = x.mul(x).add(1).sum([1], 0);
    const g = await ctx.compile({ y });
    const out = ctx.zeros("f32", [2]);
    for (const v of [[1, 2, 3, 4, 5, 6], [0, -1, 2, -3, 4, -5]]) {
      const input = ctx.tensor(new Float32Array(v), [2, 3]);
      await g.dispatch({ x: input }, { y: out });
      seen.push(Array.from(await out.read()));
      input.dispose();
    }
    g.dispose(); out.dispose(); y.dispose(); x.dispose();
  }
  assert.deepEqual(seen, [[17, 80], [8, 53], [17, 80], [8, 53]]);
});

test("released buffers are destroyed: GPU memory comes back at release, not at garbage collection", { skip: noGpu ?? false }, async () => {
  const ctx = await wg.init({ backend: "webgpu" });
  const base = wg.webgpuStats().buffersAlive;
  for (let round = 0; round < 3; round++) {
    const ts = Array.from({ length: 20 }, (_, k) => ctx.full("f32", [1024 + 64 * k], k));
    const sum = wg.ops.concat(ts.map((t) => t.slice(0, 0, 16, 1)), 0).sum([], 0);
    assert.equal((await sum.read())[0], 16 * 190);
    ts.forEach((t) => t.dispose());
    sum.dispose();
  }
  assert.ok(wg.webgpuStats().buffersAlive > base, "the work above made buffers");
  await ctx.trim(); // the pool's buffers go back to the driver
  await ctx.dispose();
  assert.ok(wg.webgpuStats().buffersAlive <= base, `${wg.webgpuStats().buffersAlive} buffers alive, ${base} before`);
});

test("a user WGSL kernel runs on tensors, with params and a created output; the CPU refuses to run it", { skip: noGpu ?? false }, async () => {
  const ctx = await wg.init({ backend: "webgpu" });
  const k = await ctx.kernel(`
    struct P { scale : f32, n : u32 }
    @group(0) @binding(0) var<storage, read> x : array<f32>;
    @group(0) @binding(1) var<storage, read_write> y : array<f32>;
    @group(0) @binding(2) var<uniform> p : P;
    @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id : vec3u) {
      if (id.x < p.n) { y[id.x] = x[id.x] * p.scale + 1.0; }
    }`);
  assert.deepEqual(k.bindings.map((b) => [b.name, b.readWrite, b.uniform]), [["x", false, false], ["y", true, false], ["p", false, true]]);
  const x = ctx.arange("f32", 0, 100, 1);
  const params = new ArrayBuffer(8);
  new DataView(params).setFloat32(0, 0.5, true);
  new DataView(params).setUint32(4, 100, true);
  const { y } = k.dispatch({ x, y: { dtype: "f32", shape: [100] } }, params, k.groupsFor(100));
  const z = y.add(x); // the kernel's output chains with ops
  const got = Array.from(await z.read());
  assert.deepEqual(got, Array.from({ length: 100 }, (_, i) => i * 0.5 + 1 + i));
  assert.throws(() => k.dispatch({ x, y: { dtype: "f32", shape: [100] } }, new ArrayBuffer(4), [2, 1, 1]),
    (e) => e.status === "invalid argument" && /params/.test(e.message));
  // The CPU backend reads the bindings but cannot run WGSL: a dispatch without a CPU function
  // (which only the C and Python APIs can attach) is refused, naming what is missing.
  const onCpu = await cpu.kernel(`@group(0) @binding(0) var<storage, read_write> y : array<f32>;
    @compute @workgroup_size(1) fn main() { y[0] = 1.0; }`);
  assert.throws(() => onCpu.dispatch({ y: { dtype: "f32", shape: [1] } }),
    (e) => e.status === "backend unavailable" && /CPU function/.test(e.message));
  onCpu.dispose();
  [x, y, z].forEach((t) => t.dispose());
  k.dispose();
  await ctx.dispose();
});

// The ops with several results, lists of tensors or enum arguments.
family("several results and tensor lists", (c, { a, b, m, col, idx }) => {
  const [values, indices] = a.topk(2, 1, 1, 1), [q0, q1] = wg.ops.split(m, 1, [2, 3]);
  const [ba, bb] = wg.ops.broadcastArrays([a, col]), [gx, gy] = wg.ops.meshgrid([idx, col.reshape([3])], 1);
  return {
    values, indices, q0, q1, ba, bb, gx, gy, einsum: wg.ops.einsum("ij,jk->ik", [a, m]),
    scatter: a.scatter(1, idx.reshape([1, 4]).cast("i32").slice(0, 0, 1, 1).add(0).expand([3, 4]).slice(1, 0, 3, 1), b.slice(1, 0, 3, 1), 1),
    interpolate: a.reshape([1, 1, 3, 4]).interpolate([5, 7], null, 2, 0),
    scaled: a.reshape([1, 1, 3, 4]).interpolate(null, [2, 1.5], 0, 0),
  };
}, { rel: 2e-6, abs: 2e-6 });

test("ops that read values back run through their Async forms and match the CPU", { skip: noGpu ?? false }, async () => {
  const seen = [];
  for (const ctx of [cpu, gpu]) {
    const a = ctx.tensor(new Float32Array([3, 0, 1, 3, 0, 2]), [2, 3]);
    const [values, indices, inverse, counts] = await a.uniqueAsync();
    const nz = await wg.ops.nonzero(a);
    const got = [];
    for (const t of [values, indices, inverse, counts, ...nz]) got.push(Array.from(await t.read()), t.dtype);
    seen.push(got);
    [a, values, indices, inverse, counts, ...nz].forEach((t) => t.dispose());
  }
  assert.deepEqual(seen[0].slice(0, 8), [[0, 1, 2, 3], "f32", [1, 2, 5, 0], "i32", [3, 0, 1, 3, 0, 2], "i32", [2, 1, 1, 2], "i32"]);
  assert.deepEqual(seen[0].slice(8), [[0, 0, 1, 1], "i32", [0, 2, 0, 2], "i32"]);
  assert.deepEqual(seen[1], seen[0]);
});

test("autograd and AdamW from JS: the same losses on both backends, falling", { skip: noGpu ?? false }, async () => {
  const curves = [];
  for (const ctx of [cpu, gpu]) {
    const x = ctx.randUniform("f32", [8, 5], -1, 1, 7n), y = ctx.tensor(new Int32Array([0, 1, 2, 1, 0, 2, 2, 1]));
    const w = ctx.randUniform("f32", [3, 5], -0.5, 0.5, 8n).contiguous();
    w.requiresGrad(1);
    assert.equal(w.needsGrad, true);
    const opt = wg.adamw([w], 0.05);
    const losses = [];
    for (let step = 0; step < 12; step++) {
      opt.zeroGrad();
      const logits = x.linear(w, null), loss = logits.crossEntropy(y);
      loss.backward(null);
      const norm = await wg.clipGradNorm([w], 10);
      assert.ok(norm > 0 && norm < 10, `gradient norm ${norm}`);
      opt.lr = wg.lrWarmupCosine(step, 2, 12, 0.05, 0.005);
      opt.step();
      losses.push((await loss.read())[0]);
      [logits, loss].forEach((t) => t.dispose());
    }
    const frozen = wg.noGrad(() => x.linear(w, null));
    assert.equal(frozen.needsGrad, false);
    curves.push(losses);
    [x, y, w, frozen].forEach((t) => t.dispose());
    opt.dispose();
  }
  curves[0].forEach((l, i) => assert.ok(Math.abs(curves[1][i] - l) <= 1e-5 * Math.max(1, Math.abs(l)), `step ${i}: webgpu ${curves[1][i]}, cpu ${l}`));
  assert.ok(curves[0].at(-1) < curves[0][0] - 0.2, `the loss falls: ${curves[0].map((v) => v.toFixed(3)).join(" ")}`);
});

test("tensor.write overwrites the elements", async () => {
  const t = cpu.zeros("f32", [3]);
  await t.write(new Float32Array([1, 2, 3]));
  assert.deepEqual(Array.from(await t.read()), [1, 2, 3]);
  t.dispose();
});
