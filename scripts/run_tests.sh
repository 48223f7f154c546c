#!/bin/sh
# Runs the C suite, then the Python suite (python/tests, pytest, against the package `make
# python` built into BUILD/python), and closes with one line counting both:
# "N passed, N failed, N skipped". Exits nonzero when either suite failed or did not report.
# A Python test that cannot run for want of WebGPU fails, as a C one does, unless
# WGT_TEST_ALLOW_NO_WEBGPU=1 (python/tests/conftest.py).
# Usage: scripts/run_tests.sh [BUILD] [PYTHON]
set -u
cd "$(dirname "$0")/.."
build=${1:-build}
python=${2:-/usr/bin/python3}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

{ "$build/wgt_tests"; echo $? > "$tmp/c.rc"; } | tee "$tmp/c.log"
c_rc=$(cat "$tmp/c.rc")
c_line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$tmp/c.log" | tail -n 1)

case $build in /*) pybuild=$build/python ;; *) pybuild=$PWD/$build/python ;; esac
PYTHONPATH="$pybuild" "$python" -m pytest -q -p no:cacheprovider -rfEs --junitxml="$tmp/py.xml" python/tests
py_rc=$?
py_counts=$("$python" - "$tmp/py.xml" <<'PY'
import sys, xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except (OSError, ET.ParseError):
    sys.exit(0)
suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
n = {k: sum(int(s.get(k, 0)) for s in suites) for k in ("tests", "failures", "errors", "skipped")}
print(n["tests"] - n["failures"] - n["errors"] - n["skipped"], n["failures"] + n["errors"], n["skipped"])
PY
)

ok=1
[ -n "$c_line" ] || { echo "run_tests: the C suite printed no closing line" >&2; c_line="0 passed, 1 failed, 0 skipped"; ok=0; }
[ -n "$py_counts" ] || { echo "run_tests: pytest wrote no report" >&2; py_counts="0 1 0"; ok=0; }
set -- $(echo "$c_line" | sed -E 's/^([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped$/\1 \2 \3/') $py_counts
echo "C: $1 passed, $2 failed, $3 skipped; Python: $4 passed, $5 failed, $6 skipped"
passed=$(($1 + $4)) failed=$(($2 + $5)) skipped=$(($3 + $6))
[ "$c_rc" -eq 0 ] && [ "$py_rc" -eq 0 ] && [ "$failed" -eq 0 ] || ok=0
[ "$ok" -eq 1 ] || [ "$failed" -gt 0 ] || failed=1 # a suite that failed without a counted failure still fails
echo "$passed passed, $failed failed, $skipped skipped"
[ "$ok" -eq 1 ]
