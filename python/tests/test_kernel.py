"""User WGSL kernels from Python: wgtensor.kernel on WebGPU against NumPy, its bindings and
errors; on the CPU backend through a Python CPU function (UnavailableError without one);
inside wgtensor.compile; bind groups reused across repeated calls."""
import gc

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
        with pytest.raises(wt.UnavailableError, match="no CPU function"):
            wt.kernel(AFFINE)(wt.ones(4), wt.output((4,)), n=4, params=params(1, 4))
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


def affine_cpu(arrays, p, grid):
    """What AFFINE computes, on the CPU: over the invocations the grid launches, as the shader."""
    scale, n = np.frombuffer(p, dtype=[("scale", "<f4"), ("n", "<u4")])[0]
    m = min(int(n), grid[0] * 64)
    arrays["y"][:m] = arrays["x"][:m] * scale + np.float32(1)


def test_kernel_cpu_function(ctx):
    calls = []
    k = wt.kernel(AFFINE, cpu=lambda a, p, g: (calls.append(g), affine_cpu(a, p, g)))
    x = np.arange(-50, 150, dtype=np.float32) / 8  # exact in f32, and so are the results
    y = k(x, wt.output((200,)), n=200, params=params(0.5, 200))
    np.testing.assert_array_equal(y.numpy(), x * np.float32(0.5) + np.float32(1))
    assert calls == ([(4, 1, 1)] if ctx.backend == "cpu" else [])  # WebGPU runs the WGSL


def test_kernel_cpu_function_errors():
    ctx = make_context("cpu")

    def bad(arrays, p, grid):
        raise ValueError("no luck with %d" % arrays["x"].size)

    k = wt.kernel(AFFINE, ctx=ctx, cpu=bad)
    y = k(wt.ones(10, ctx=ctx), wt.output((10,)), n=10, params=params(1, 10))
    with pytest.raises(wt.BackendError, match="its CPU function failed: ValueError: no luck with 10"):
        y.numpy()
    with pytest.raises(TypeError, match="callable"):
        k._k.set_cpu(3)
    with pytest.raises(Exception, match="has a CPU function already"):
        k._k.set_cpu(bad)


def test_kernel_inside_compile(ctx):
    k = wt.kernel(AFFINE, cpu=affine_cpu)

    @wt.compile
    def f(a):
        y = k(a + a, wt.output((300,)), n=300, params=params(0.5, 300))
        return wt.sqrt(y * y) - a

    def want(a):
        return np.abs((a + a) * np.float32(0.5) + np.float32(1)) - a

    rng = np.random.default_rng(3)
    for _ in range(3):  # new inputs each call, one graph
        a = rng.integers(-64, 64, 300).astype(np.float32) / 4
        np.testing.assert_array_equal(f(a).numpy(), want(a))
    assert len(f._graphs) == 1
    del k  # the graph holds the kernel (and its CPU function)
    gc.collect()
    a = np.arange(300, dtype=np.float32) / 16
    np.testing.assert_array_equal(f(a).numpy(), want(a))


def test_kernel_bind_groups_reused():
    ctx = make_context("webgpu")
    k = wt.kernel(AFFINE, ctx=ctx)
    x, y = wt.ones(100, ctx=ctx), wt.zeros(100, ctx=ctx)
    k(x, y, n=100, params=params(1, 100))
    y.numpy()
    before = ctx.stats()["bind_groups_created"]
    for i in range(5):
        k(x, y, n=100, params=params(i, 100))
        y.numpy()
    assert ctx.stats()["bind_groups_created"] == before
    np.testing.assert_array_equal(y.numpy(), np.full(100, 5, np.float32))
