// The digits classifier of tools/mlp_demo.c, in the JS API: a 64-128-10 perceptron, ReLU,
// softmax cross-entropy, mini-batch SGD, the gradients written out in ops.
export const FEATURES = 64, CLASSES = 10, HIDDEN = 128, BATCH = 32, LEARNING_RATE = 0.2;

/** Parses digits.csv (64 pixels 0..16 and a label per line), shuffles once, splits 80/20. */
export function parseDigits(text) {
  const rows = text.trim().split("\n").map((l) => l.split(",").map(Number));
  let state = 0x9e3779b97f4a7c15n; // the C demo's xorshift: the same split and order
  const mask = (1n << 64n) - 1n;
  const next = () => {
    state ^= (state << 13n) & mask; state ^= state >> 7n; state ^= (state << 17n) & mask;
    return Number(state >> 32n);
  };
  for (let i = rows.length - 1; i > 0; i--) {
    const j = next() % (i + 1);
    [rows[i], rows[j]] = [rows[j], rows[i]];
  }
  const nTest = Math.floor(rows.length / 5), nTrain = rows.length - nTest;
  const x = new Float32Array(rows.length * FEATURES), y = new Int32Array(rows.length);
  rows.forEach((r, i) => { for (let k = 0; k < FEATURES; k++) x[i * FEATURES + k] = r[k] / 16; y[i] = r[FEATURES]; });
  return { x, y, nTrain, nTest, next };
}

export class Model {
  constructor(ctx) {
    this.ctx = ctx;
    this.w1 = ctx.randNormal("f32", [HIDDEN, FEATURES], 0, Math.sqrt(2 / FEATURES), 11n);
    this.b1 = ctx.zeros("f32", [HIDDEN]);
    this.w2 = ctx.randNormal("f32", [CLASSES, HIDDEN], 0, Math.sqrt(1 / HIDDEN), 12n);
    this.b2 = ctx.zeros("f32", [CLASSES]);
  }
  // w -= lr * grad, replacing the tensor.
  step(name, grad) {
    const scaled = grad.mulScalar(LEARNING_RATE), next = this[name].sub(scaled);
    scaled.dispose();
    this[name].dispose();
    this[name] = next;
  }
  /** One epoch over the training rows in the given order; resolves to the mean loss. */
  async epoch(d, order) {
    const ctx = this.ctx, n = d.nTrain;
    const xb = new Float32Array(n * FEATURES), yb = new Int32Array(n);
    order.forEach((r, i) => { xb.set(d.x.subarray(r * FEATURES, (r + 1) * FEATURES), i * FEATURES); yb[i] = d.y[r]; });
    const xAll = ctx.tensor(xb, [n, FEATURES]), yAll = ctx.tensor(yb), target = yAll.oneHot(CLASSES, "f32");
    let lossSum = ctx.zeros("f32", []);
    for (let start = 0; start < n; start += BATCH) {
      const stop = Math.min(start + BATCH, n), t = [];
      const keep = (x) => (t.push(x), x);
      const x = keep(xAll.slice(0, start, stop, 1)), tg = keep(target.slice(0, start, stop, 1));
      const hpre = keep(x.linear(this.w1, this.b1)), h = keep(hpre.relu());
      const logits = keep(h.linear(this.w2, this.b2));
      const batchLoss = keep(keep(keep(logits.logSoftmax(1)).mul(tg)).sum([], 0));
      const dlogits = keep(keep(keep(logits.softmax(1)).sub(tg)).mulScalar(1 / (stop - start)));
      const dw2 = keep(keep(dlogits.transpose(0, 1)).matmul(h)), db2 = keep(dlogits.sum([0], 0));
      const dh = keep(dlogits.matmul(this.w2));
      const dhpre = keep(dh.mul(keep(keep(hpre.gt(0)).cast("f32"))));
      const dw1 = keep(keep(dhpre.transpose(0, 1)).matmul(x)), db1 = keep(dhpre.sum([0], 0));
      const next = lossSum.sub(batchLoss); // the loss is -sum(target * log p)
      lossSum.dispose();
      lossSum = next;
      this.step("w1", dw1); this.step("b1", db1); this.step("w2", dw2); this.step("b2", db2);
      t.forEach((x) => x.dispose());
    }
    const total = (await lossSum.read())[0];
    [xAll, yAll, target, lossSum].forEach((x) => x.dispose());
    return total / n;
  }
  /** Share of the held-out rows classified right. */
  async accuracy(d) {
    const ctx = this.ctx, off = d.nTrain;
    const x = ctx.tensor(d.x.subarray(off * FEATURES), [d.nTest, FEATURES]), y = ctx.tensor(d.y.subarray(off));
    const t = [x, y];
    const keep = (v) => (t.push(v), v);
    const logits = keep(keep(keep(x.linear(this.w1, this.b1)).relu()).linear(this.w2, this.b2));
    const hits = keep(keep(keep(logits.argmax(1, 0)).eq(y)).sum([], 0));
    const correct = (await hits.read())[0];
    t.forEach((v) => v.dispose());
    return correct / d.nTest;
  }
}
