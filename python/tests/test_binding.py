"""Every function of include/wgtensor.h is reached from Python (the op table's _core.BOUND, or
wgtensor._api.ELSEWHERE) or listed in wgtensor._api.NOT_BOUND with the reason, as
tests/test_docs.c checks docs/ops.md against the header."""
import os
import re

import wgtensor as wt
from wgtensor import _api, _core

HEADER = os.path.join(os.path.dirname(__file__), "..", "..", "include", "wgtensor.h")


def declared_functions():
    text = open(HEADER).read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    # "wgt_x(" right after a type (a word or a '*'), as tests/test_docs.c scans it.
    return set(re.findall(r"(?:[\w*])\s+\**(wgt_[a-z0-9_]+)\s*\(", text))


def resolve(path):
    obj = wt
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def test_every_header_function_is_bound_or_listed():
    declared = declared_functions()
    assert len(declared) > 140 and "wgt_version" in declared and "wgt_attention" in declared
    bound = set(_core.BOUND) | set(_api.ELSEWHERE)
    missing = sorted(declared - bound - set(_api.NOT_BOUND))
    assert not missing, "not bound and not listed in wgtensor/_api.py: %s" % missing
    both = sorted(bound & set(_api.NOT_BOUND))
    assert not both, "listed as bound and as not bound: %s" % both
    stale = sorted(n for n in set(_api.ELSEWHERE) | set(_api.NOT_BOUND) if n not in declared)
    assert not stale, "wgtensor/_api.py names functions the header does not declare: %s" % stale


def test_every_bound_name_exists():
    for c_name, py in _core.BOUND.items():
        assert callable(getattr(_core, py)), c_name
    for c_name, path in _api.ELSEWHERE.items():
        assert resolve(path) is not None, "%s: wgtensor.%s does not exist" % (c_name, path)


def test_public_ops_are_module_functions_and_numpy_methods_exist():
    for py in _core.BOUND.values():
        if not py.startswith("_"):
            assert getattr(wt, py) is getattr(_core, py)
    t = wt.zeros((2, 3))
    for m in ("sum", "mean", "max", "min", "prod", "var", "std", "argmax", "argmin", "cumsum", "reshape",
              "transpose", "swapaxes", "astype", "clip", "round", "take", "flip", "squeeze", "flatten", "ravel"):
        assert callable(getattr(t, m)), m
