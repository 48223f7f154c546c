#!/bin/bash
# One run on a GPU machine that has a copy of the source tree with web/bench/pack_gpu.sh's
# folder in it (G, default .gpusrc/webnv) and the Vulkan loader's packages in .gl: adapter
# facts, the subgroup-matrix tests in wasm (matrix product and attention), bench/kernels_bench.c
# through wasm in Node (with and without unsafeNvidiaF16) and natively, PyTorch's baselines
# (its f16 attention rows: scaled_dot_product_attention). Logs go to $OUT. The f16 attention
# rows (attn16_*) run with the others, on subgroup matrices (WGT_SGMATRIX_ATTENTION=1, opt-in);
# BENCH_ARGS="--only attn16" runs just them, and step sgoff runs them again with
# WGT_SGMATRIX=0 (the plain attention kernel, same device).
#   bash .gpusrc/webnv/gpu_run.sh            (STEPS, BENCH_ARGS, TILES choose and shape it)
G=${G:-.gpusrc/webnv}
OUT=${OUT:-/tmp/webnv-out}
mkdir -p "$OUT"
[ -n "$SKIP_GL" ] || { for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig; }
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p /tmp/w $G/node_modules/webgpu/dist/linux-x64
xz -dc $G/node.xz > /tmp/w/node; chmod +x /tmp/w/node
xz -dc $G/dawn.node.xz > $G/node_modules/webgpu/dist/linux-x64/dawn.node
xz -dc $G/libwebgpu_wrapper.so.xz > /tmp/w/libwebgpu_wrapper.so
for f in kernels_bench.wasm wgt_tests.wasm kernels_bench_plain; do xz -dc $G/$f.xz > /tmp/w/$f; done; chmod +x /tmp/w/kernels_bench_plain
N=/tmp/w/node
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt 2>&1
STEPS=${STEPS:-probe test unsafe sgoff native plain torch}
for s in $STEPS; do
  echo "== $s $(date +%T)" >> $OUT/steps.txt
  case $s in
  probe) timeout 30 $N $G/web/bench/probe_subgroup_matrix.mjs > $OUT/probe.log 2>&1 ;;
  test) WGT_TEST_REQUIRE_SGMATRIX=1 WGT_WASM_TESTS=/tmp/w/wgt_tests.wasm timeout 120 $N $G/web/tests/run_c_suite.mjs --webgpu --unsafe-nvidia-f16 matmul_sgmatrix attention_sgmatrix > $OUT/test.log 2>&1 ;;
  unsafe) WGT_SGMATRIX_ATTENTION=1 WGT_WASM_BENCH=/tmp/w/kernels_bench.wasm timeout 180 $N $G/web/bench/run_bench.mjs --unsafe-nvidia-f16 $BENCH_ARGS > $OUT/bench_wasm_unsafe.log 2>&1 ;;
  sgoff) WGT_SGMATRIX=0 WGT_WASM_BENCH=/tmp/w/kernels_bench.wasm timeout 150 $N $G/web/bench/run_bench.mjs --unsafe-nvidia-f16 --only attn16 > $OUT/bench_wasm_sgoff.log 2>&1 ;;
  native) WGT_WEBGPU_LIBRARY=/tmp/w/libwebgpu_wrapper.so timeout 150 /tmp/w/kernels_bench_plain $BENCH_ARGS > $OUT/bench_native.log 2>&1 ;;
  plain) WGT_WASM_BENCH=/tmp/w/kernels_bench.wasm timeout 150 $N $G/web/bench/run_bench.mjs $BENCH_ARGS > $OUT/bench_wasm.log 2>&1 ;;
  torch) timeout 120 python3 $G/kernels_torch.py > $OUT/torch.log 2>&1 ;;
  tiles) for t in $TILES; do echo "tile $t" >> $OUT/tiles.log; WGT_SGMATRIX_TILE=$t WGT_WASM_BENCH=/tmp/w/kernels_bench.wasm timeout 40 $N $G/web/bench/run_bench.mjs --unsafe-nvidia-f16 --only gemm_f16 >> $OUT/tiles.log 2>&1; done ;;
  esac
  echo "   rc=$? $(date +%T)" >> $OUT/steps.txt
done
