"""User WGSL kernels from Python: wgtensor.kernel on WebGPU against NumPy, its bindings and
errors; on the CPU backend it is UnavailableError."""
import numpy as np
import pytest

import wgtensor as wt
from conftest import make_context

AFFINE = """
struct Params { scale : f32, n : u32 }
@group(0) @binding(0) var<storage, read> x : array<f32>;
@group(0) @binding(1) var<storage, read_write> y : array<f32>;
@group(0) @binding(2) var<uniform> p : Params;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id : vec3<u32>) {
    if (id.x >= p.n) { return; }
    y[id.x] = x[id.x] * p.scale + 1.0;
}
"""


def params(scale, n):
    return np.array([(scale, n)], dtype=[("scale", "<f4"), ("n", "<u4")])


def test_kernel_runs_and_matches_numpy(ctx):
    if ctx.backend == "cpu":
        with pytest.raises(wt.UnavailableError):
            wt.kernel(AFFINE)
        return
    k = wt.kernel(AFFINE)
    assert k.workgroup_size == (64, 1, 1)
    assert [(b["name"], b["read_write"], b["uniform"]) for b in k.bindings] == \
        [("x", 0, 0), ("y", 1, 0), ("p", 0, 1)]
    x = np.linspace(-1, 1, 1000).astype(np.float32)
    y = k(x, wt.output((1000,)), n=1000, params=params(2.5, 1000))  # a NumPy input, a created output
    # A GPU may fuse the multiply-add (one rounding): within an ulp of the float64 value.
    np.testing.assert_allclose(y.numpy(), x.astype(np.float64) * 2.5 + 1, rtol=1e-6, atol=3e-7)
    # In place into a tensor, by name, after other lazy work; ops afterwards see the result.
    dst = wt.zeros(1000)
    assert k(x=wt.asarray(x) * 2, y=dst, grid=(16,), params=params(1.0, 1000)) is None
    np.testing.assert_allclose((dst - 1).numpy(), x * 2, rtol=1e-6, atol=1e-7)


def test_kernel_errors():
    ctx = make_context("webgpu")  # kernels run on WebGPU only
    with pytest.raises(wt.BackendError, match="line"):
        wt.kernel(AFFINE.replace("+ 1.0;", "+ ;"), ctx=ctx)
    k = wt.kernel(AFFINE, ctx=ctx)
    x = wt.ones(10, ctx=ctx)
    with pytest.raises(TypeError, match="not given"):
        k(x, n=10, params=params(1, 10))
    with pytest.raises(TypeError, match="no storage binding"):
        k(x, wt.output((10,)), z=x, n=10, params=params(1, 10))
    with pytest.raises(TypeError, match="grid"):
        k(x, wt.output((10,)), params=params(1, 10))
    with pytest.raises(ValueError):  # params of the wrong size
        k(x, wt.output((10,)), n=10, params=np.zeros(3, np.float32))
    with pytest.raises(TypeError):  # an i32 tensor is fine by size, a f16 one is not
        k(wt.ones(10, dtype=wt.float16, ctx=ctx), wt.output((10,)), n=10, params=params(1, 10))
