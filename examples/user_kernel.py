"""A custom activation as a WGSL kernel of your own, from Python: hard swish,
x * clamp(x + 3, 0, 6) / 6, with the 3 and 6 as params, run on a NumPy array (uploaded with
one copy) and on a tensor computed by the library, followed by a library op on its result,
and checked against NumPy in float64. The same program as examples/user_kernel.c.

Run: PYTHONPATH=build/python python3 examples/user_kernel.py
On a machine without WebGPU it runs the kernel's CPU function (the same formula in NumPy)
on the CPU backend, and says so."""
import sys

import numpy as np

import wgtensor as wt

HARD_SWISH = """
struct Params { shift : f32, top : f32, n : u32, pad : u32 }
@group(0) @binding(0) var<storage, read> x : array<f32>;
@group(0) @binding(1) var<storage, read_write> y : array<f32>;
@group(0) @binding(2) var<uniform> p : Params;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id : vec3<u32>) {
    if (id.x >= p.n) { return; }
    let v = x[id.x];
    y[id.x] = v * clamp(v + p.shift, 0.0, p.top) / p.top;
}
"""

PARAMS = np.dtype([("shift", "<f4"), ("top", "<f4"), ("n", "<u4"), ("pad", "<u4")])


def hard_swish_cpu(arrays, params, grid):
    """What the shader computes, for the CPU backend (which runs no WGSL)."""
    p = np.frombuffer(params, PARAMS)[0]
    x = arrays["x"][: p["n"]]
    arrays["y"][: p["n"]] = x * np.clip(x + p["shift"], 0, p["top"]) / p["top"]


def reference(x):
    x = x.astype(np.float64)
    return x * np.clip(x + 3.0, 0.0, 6.0) / 6.0


def main(backend=None):
    try:
        ctx = wt.Context(backend=backend or "webgpu", quiet=True)
    except wt.UnavailableError as e:
        print("user_kernel.py: no WebGPU device (%s); running the CPU function on the CPU backend" % e)
        ctx = wt.Context(backend="cpu", quiet=True)
    with ctx:
        k = wt.kernel(HARD_SWISH, cpu=hard_swish_cpu)
        n = 1000
        params = np.array([(3.0, 6.0, n, 0)], dtype=PARAMS)
        x = np.arange(-5.0, 5.0, 0.01, dtype=np.float32)[:n]
        y = k(x=x, y=wt.output((n,)), n=n, params=params)  # a NumPy input, an output made by the call
        z = k(x=wt.asarray(x) * 0.5, y=wt.output((n,)), n=n, params=params)  # a tensor still to compute
        total = wt.sum(y)  # the library's ops take the result
        ys, zs, s = y.numpy(), z.numpy(), float(total)
    worst = max(np.max(np.abs(ys - reference(x))), np.max(np.abs(zs - reference(x * np.float32(0.5)))))
    ref_sum = float(reference(x).sum())
    print("%s: hard_swish(%g) = %g, hard_swish(%g) = %g, sum %.4f (NumPy: %.4f), largest error %.2g"
          % (ctx.backend, x[400], ys[400], x[900], ys[900], s, ref_sum, worst))
    ok = worst <= 4e-6 and abs(s - ref_sum) <= 1e-3 * abs(ref_sum)  # f32: a few roundings of values up to 5
    if not ok:
        print("user_kernel.py: results differ from NumPy", file=sys.stderr)
    return ok, ys, zs


if __name__ == "__main__":
    sys.exit(0 if main()[0] else 1)
