"""Fixtures: `ctx` runs a test once per backend (CPU and WebGPU, lavapipe here). A WebGPU
context that cannot be made fails the test, as the C suite's required WebGPU tests do, unless
WGT_TEST_ALLOW_NO_WEBGPU=1, when it is skipped (and counted as skipped)."""
import os

import pytest

import wgtensor as wt

_contexts = {}


def make_context(backend):
    if backend not in _contexts:
        try:
            _contexts[backend] = wt.Context(backend=backend, quiet=True)
        except wt.UnavailableError as e:
            _contexts[backend] = e
    c = _contexts[backend]
    if isinstance(c, Exception):
        if os.environ.get("WGT_TEST_ALLOW_NO_WEBGPU") == "1":
            pytest.skip("no WebGPU adapter: %s" % c)
        pytest.fail("WebGPU is required (set WGT_TEST_ALLOW_NO_WEBGPU=1 to test the CPU alone): %s" % c)
    return c


@pytest.fixture(params=["cpu", "webgpu"])
def ctx(request):
    c = make_context(request.param)
    with c:
        yield c
