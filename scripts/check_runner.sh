#!/bin/sh
# Checks the test runner's verdicts, which the suite's own closing line depends on: a test
# that skips for want of WebGPU fails the run unless WGT_TEST_ALLOW_NO_WEBGPU=1, when it counts
# as skipped (never as passed), the closing line counts passed, failed and skipped, and a test
# that WGT_TEST_EXCLUDE names is skipped with the reason, on every backend.
# WebGPU is made unavailable by pointing the loader at a library that does not exist.
# Usage: scripts/check_runner.sh [BUILD]
set -u
cd "$(dirname "$0")/.."
tests=${1:-build}/wgt_tests
fail() { echo "check_runner: $*" >&2; exit 1; }
filter=pool_trim_gives_pooled_buffers_back # a WebGPU-only test that skips without a device

out=$(WGT_WEBGPU_LIBRARY=/nonexistent/webgpu.so WGT_TEST_POISON=off "$tests" "$filter" 2>&1)
rc=$?
[ $rc -ne 0 ] || fail "a required WebGPU test that could not run left the run passing: $out"
echo "$out" | tail -n 1 | grep -Eq '^0 passed, [1-9][0-9]* failed, 0 skipped$' \
  || fail "without WebGPU, a required WebGPU test must fail the run: $out"

out=$(WGT_TEST_ALLOW_NO_WEBGPU=1 WGT_WEBGPU_LIBRARY=/nonexistent/webgpu.so WGT_TEST_POISON=off "$tests" "$filter" 2>&1)
rc=$?
[ $rc -eq 0 ] || fail "with WGT_TEST_ALLOW_NO_WEBGPU=1 the skip must not fail the run: $out"
echo "$out" | tail -n 1 | grep -Eq '^0 passed, 0 failed, 1 skipped$' || fail "the skip must be counted as one: $out"
echo "$out" | grep -q "^skip $filter" || fail "the skipped test must say so: $out"
out=$(WGT_TEST_EXCLUDE=nothing_matches,matmul_zero WGT_TEST_POISON=off "$tests" matmul_zero_sizes 2>&1)
rc=$?
[ $rc -eq 0 ] || fail "an excluded test must not fail the run: $out"
echo "$out" | tail -n 1 | grep -Eq '^0 passed, 0 failed, 2 skipped$' || fail "an excluded test must count as skipped once per backend: $out"
echo "$out" | grep -q "^skip matmul_zero_sizes .*WGT_TEST_EXCLUDE names 'matmul_zero'" || fail "an excluded test must say why: $out"
echo "check_runner: a test that cannot run is counted as skipped, and fails the run where WebGPU is required"
