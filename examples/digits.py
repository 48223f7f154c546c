#!/usr/bin/env python3
"""The digits classifier of `wgtensor demo` (tools/mlp_demo.c) in Python, trained with
autograd: a 64-128-10 perceptron on the handwritten digits that python3-sklearn ships (1797
8x8 images, 10 classes), with AdamW, on the best device and on the CPU backend beside it.
Prints the mean training loss per epoch on both and the accuracy on a held-out fifth.

    PYTHONPATH=build/python python3 examples/digits.py [--epochs N]
"""
import argparse
import sys
import time

import numpy as np

import wgtensor as wt

HIDDEN, CLASSES, BATCH = 128, 10, 32


def load(seed=0):
    """The digits scaled to [0, 1], shuffled once, split 80/20 as the C demo does."""
    from sklearn.datasets import load_digits  # python3-sklearn
    d = load_digits()
    x, y = (d.data / 16.0).astype(np.float32), d.target.astype(np.int32)
    order = np.random.default_rng(seed).permutation(len(y))
    x, y = x[order], y[order]
    n_test = len(y) // 5
    return x[n_test:], y[n_test:], x[:n_test], y[:n_test]


def train(ctx, data, epochs, lr=0.01, seed=1):
    """Trains on ctx; returns (loss per epoch, seconds per epoch, test accuracy). The same
    initial weights and batch order on every backend, so their losses can be compared."""
    x_train, y_train, x_test, y_test = data
    rng = np.random.default_rng(seed)
    features = x_train.shape[1]
    with ctx:
        # He initialisation for the ReLU layer, Glorot-like for the output layer.
        w1 = wt.asarray(rng.normal(0, np.sqrt(2 / features), (features, HIDDEN)).astype(np.float32)).requires_grad_()
        w2 = wt.asarray(rng.normal(0, np.sqrt(1 / HIDDEN), (HIDDEN, CLASSES)).astype(np.float32)).requires_grad_()
        b1, b2 = wt.zeros(HIDDEN).requires_grad_(), wt.zeros(CLASSES).requires_grad_()
        params = [w1, b1, w2, b2]
        opt = wt.optim.AdamW(params, lr=lr, weight_decay=1e-4)
        x_all, y_all = wt.asarray(x_train), wt.asarray(y_train)

        def forward(x):
            return wt.relu(x @ w1 + b1) @ w2 + b2

        losses, seconds = [], []
        for _ in range(epochs):
            t0 = time.perf_counter()
            order = rng.permutation(len(y_train))
            total = None
            for start in range(0, len(order), BATCH):
                idx = wt.asarray(order[start:start + BATCH].astype(np.int32))
                opt.zero_grad()
                loss = wt.cross_entropy(forward(wt.take(x_all, idx)), wt.take(y_all, idx))
                loss.backward()
                opt.step()
                total = loss.detach() if total is None else total + loss.detach()  # no wait per batch
            losses.append(total.item() / -(-len(order) // BATCH))
            seconds.append(time.perf_counter() - t0)
        with wt.no_grad():
            pred = wt.argmax(forward(wt.asarray(x_test)), axis=1).numpy()
        return losses, seconds, float(np.mean(pred == y_test))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epochs", type=int, default=20)
    args = ap.parse_args(argv)
    data = load()
    dev, cpu = wt.Context(quiet=True), wt.Context(backend="cpu")
    print("a %d-%d-%d perceptron on the digits (%d training, %d test images), %d epochs of AdamW, batch %d"
          % (data[0].shape[1], HIDDEN, CLASSES, len(data[1]), len(data[3]), args.epochs, BATCH))
    print("device: %s (backend %s)\n" % (dev.device_name, dev.backend))
    a, b = train(dev, data, args.epochs), train(cpu, data, args.epochs)
    print("%5s  %12s  %12s  %10s  %10s" % ("epoch", "loss device", "loss cpu", "ms device", "ms cpu"))
    for e in range(args.epochs):
        print("%5d  %12.6f  %12.6f  %10.1f  %10.1f" % (e + 1, a[0][e], b[0][e], 1e3 * a[1][e], 1e3 * b[1][e]))
    print("\ntest accuracy: device %.2f%%, cpu %.2f%%" % (100 * a[2], 100 * b[2]))
    return a, b


if __name__ == "__main__":
    main(sys.argv[1:])
