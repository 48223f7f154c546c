#!/bin/sh
# Packs what a GPU machine needs to run the JavaScript path beside the native one (used with a
# machine that gets a copy of a source tree but has no Node, no npm `webgpu` and no Dawn):
# Node 24, dawn.node, the Dawn library, the wasm and native builds of bench/kernels_bench.c
# and of the test suite, and web/'s JS, compressed into DEST (default .gpusrc/webnv).
set -e
DEST=${1:-.gpusrc/webnv}
mkdir -p "$DEST/node_modules/webgpu" "$DEST/web/bench" "$DEST/web/tests" "$DEST/web/src"
[ -f "$DEST/node.xz" ] || xz -T2 -6 -c .deps/node24/bin/node > "$DEST/node.xz"
[ -f "$DEST/dawn.node.xz" ] || xz -T2 -6 -c web/node_modules/webgpu/dist/linux-x64/dawn.node > "$DEST/dawn.node.xz"
[ -f "$DEST/libwebgpu_wrapper.so.xz" ] || xz -T2 -6 -c .deps/dawn/libwebgpu_wrapper.so > "$DEST/libwebgpu_wrapper.so.xz"
cp web/node_modules/webgpu/package.json web/node_modules/webgpu/index.js "$DEST/node_modules/webgpu/"
cp web/wgtensor.js web/package.json "$DEST/web/"
cp web/src/*.js "$DEST/web/src/"
cp web/bench/run_bench.mjs web/bench/probe_subgroup_matrix.mjs web/bench/probe_sgmatrix_stage.mjs web/bench/probe_sgmatrix_steps.mjs web/bench/unsafe_device.mjs "$DEST/web/bench/"
cp web/bench/gpu_run.sh bench/kernels_torch.py "$DEST/"
cp web/tests/run_c_suite.mjs web/tests/suite_common.js web/tests/wasm_skips.txt "$DEST/web/tests/"
for f in build/wasm/kernels_bench.wasm build/wasm/wgt_tests.wasm build/kernels_bench_plain; do
  xz -T2 -6 -c "$f" > "$DEST/$(basename "$f").xz"
done
