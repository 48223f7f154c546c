// The demo page: loads the digits (data/digits.csv.gz, put there by `make serve-demo`),
// trains on WebGPU and on the CPU in turn, epoch by epoch, and plots both losses live.
// Query: epochs= (default 30). Sets window.demoResult when done: {webgpu, cpu} each with
// losses, ms and accuracy, or error.
import * as wgtensor from "../wgtensor.js";
import { Model, parseDigits } from "./mlp.js";

const epochs = Number(new URLSearchParams(location.search).get("epochs") ?? 30);
const $ = (id) => document.getElementById(id);
const runs = { webgpu: { losses: [], ms: [] }, cpu: { losses: [], ms: [] } };
const COLORS = { webgpu: "#d33", cpu: "#36c" };
const WIDTHS = { webgpu: 6, cpu: 2 }; // the CPU's line drawn inside the WebGPU one: equal losses stay visible

function plot() {
  const c = $("plot"), g = c.getContext("2d"), pad = 40;
  g.clearRect(0, 0, c.width, c.height);
  const all = Object.values(runs).flatMap((r) => r.losses);
  const top = Math.max(...all, 0.1);
  g.strokeStyle = "#888"; g.fillStyle = "#444"; g.font = "12px sans-serif";
  g.beginPath(); g.moveTo(pad, 10); g.lineTo(pad, c.height - pad); g.lineTo(c.width - 10, c.height - pad); g.stroke();
  g.fillText(`loss (max ${top.toFixed(2)})`, pad + 5, 20);
  g.fillText(`epoch (of ${epochs})`, c.width - 110, c.height - pad + 20);
  Object.keys(runs).forEach((name, k) => { g.fillStyle = COLORS[name]; g.fillText(name === "cpu" ? "CPU" : "WebGPU", c.width - 80, 24 + 16 * k); });
  const X = (e) => pad + (e / Math.max(epochs - 1, 1)) * (c.width - pad - 20), Y = (v) => c.height - pad - (v / top) * (c.height - pad - 20);
  for (const [name, r] of Object.entries(runs)) {
    g.strokeStyle = COLORS[name]; g.lineWidth = WIDTHS[name]; g.beginPath();
    r.losses.forEach((v, e) => (e ? g.lineTo(X(e), Y(v)) : g.moveTo(X(e), Y(v))));
    g.stroke();
    r.losses.forEach((v, e) => { g.fillStyle = COLORS[name]; g.fillRect(X(e) - 2, Y(v) - 2, 4, 4); });
  }
}

async function train(name, d) {
  const ctx = await wgtensor.init({ backend: name });
  $(`${name}-device`).textContent = ctx.deviceName;
  const model = new Model(ctx), order = Array.from({ length: d.nTrain }, (_, i) => i);
  for (let e = 0; e < epochs; e++) {
    for (let i = order.length - 1; i > 0; i--) { const j = d.next() % (i + 1); [order[i], order[j]] = [order[j], order[i]]; }
    const t0 = performance.now(), loss = await model.epoch(d, order);
    runs[name].losses.push(loss);
    runs[name].ms.push(performance.now() - t0);
    $(`${name}-epoch`).textContent = `${e + 1} / ${epochs}`;
    $(`${name}-loss`).textContent = loss.toFixed(4);
    $(`${name}-ms`).textContent = (performance.now() - t0).toFixed(0);
    plot();
  }
  runs[name].accuracy = await model.accuracy(d);
  $(`${name}-acc`).textContent = `${(100 * runs[name].accuracy).toFixed(1)} %`;
  await ctx.dispose();
}

try {
  const gz = await fetch("./data/digits.csv.gz");
  if (!gz.ok) throw new Error("data/digits.csv.gz is missing: run `make serve-demo`");
  const text = await new Response(gz.body.pipeThrough(new DecompressionStream("gzip"))).text();
  for (const name of ["webgpu", "cpu"]) {
    $("status").textContent = `training on ${name}…`;
    await train(name, parseDigits(text)); // the same split and order on both
  }
  $("status").textContent = "done";
  window.demoResult = runs;
} catch (e) {
  $("status").textContent = `error: ${e.message}`;
  window.demoResult = { error: String(e.stack ?? e) };
}
