# ---- WebAssembly: `make wasm`, `make test-wasm` (docs/web.md) ---------------------------------
# The core, the CPU backend (single-threaded, web/c/plain_blas.c for its matrix products) and
# the WebGPU backend compiled for wasm32-wasi with Debian's clang-19 and wasi-libc; webgpu.h is
# the JavaScript import table of web/src/webgpu_imports.js (web/c/loader_js.c replaces the
# dlopen loader). scripts/setup_wasm.sh installs the tools, Node 24 and the npm packages.
WASM_CC ?= clang-19
WASM_BUILD ?= $(BUILD)/wasm
WASM_NODE ?= .deps/node24/bin/node
WASM_FLAGS = --target=wasm32-wasi --sysroot=/usr -O2 -g
WASM_CPPFLAGS = -D_GNU_SOURCE -Iweb/c/include -Iinclude -Isrc -I$(BUILD)/gen
WASM_LIB_SRC = $(filter-out src/backend/webgpu/loader.c,$(LIB_SRC)) web/c/loader_js.c web/c/plain_blas.c web/c/no_threads.c web/c/layouts.c
WASM_LIB_OBJ = $(WASM_LIB_SRC:%.c=$(WASM_BUILD)/obj/%.o) $(WASM_BUILD)/obj/gen/wgsl_sources.o
# JS reaches the indirect function table (the C callbacks) and the allocator; the test suite
# counts heap bytes through wrapped allocation functions (web/c/heap_in_use.c). 4 GiB is
# wasm32's whole address space; large tensors need most of it.
WASM_WRAP = $(foreach f,malloc calloc realloc free aligned_alloc posix_memalign,-Wl,--wrap=$(f))
WASM_LDFLAGS = -Wl,--export-table -Wl,--export=wgtjs_layout_names -Wl,--export=wgtjs_layout_values -Wl,--export=wgtjs_layout_count \
	-Wl,--max-memory=4294967296 -Wl,-z,stack-size=8388608 -lwasi-emulated-signal

.PHONY: wasm wasm-check
wasm: wasm-check $(WASM_BUILD)/wgt_tests.wasm web/wgtensor.wasm web/src/api_table.js

wasm-check:
	@command -v $(WASM_CC) >/dev/null && [ -f /usr/lib/wasm32-wasi/libc.a ] || { echo "make wasm: $(WASM_CC) or" \
		"wasi-libc is missing: run scripts/setup_wasm.sh" >&2; exit 1; }

$(WASM_BUILD)/obj/%.o: %.c $(HEADERS) web/c/include/cblas.h web/wasm.mk
	@mkdir -p $(@D)
	$(WASM_CC) $(WASM_FLAGS) $(WASM_CPPFLAGS) $(WARN) -fvisibility=hidden -c $< -o $@

$(WASM_BUILD)/obj/gen/wgsl_sources.o: $(BUILD)/gen/wgsl_sources.c
	@mkdir -p $(@D)
	$(WASM_CC) $(WASM_FLAGS) -c $< -o $@

$(WASM_BUILD)/obj/src/backend/webgpu/device.o: $(BUILD)/gen/install_dirs.h

$(WASM_BUILD)/wgt_tests.wasm: $(TEST_SRC) tests/test.h web/c/include/wasi_process.h web/c/heap_in_use.c web/c/test_wasm.c $(WASM_LIB_OBJ)
	$(WASM_CC) $(WASM_FLAGS) $(WASM_CPPFLAGS) -Itests -include web/c/include/wasi_process.h -D_WASI_EMULATED_GETPID \
		-DWGT_SOURCE_DIR='"$(CURDIR)"' $(WARN) -o $@ \
		$(TEST_SRC) web/c/heap_in_use.c web/c/test_wasm.c $(WASM_LIB_OBJ) $(WASM_WRAP) $(WASM_LDFLAGS) \
		-lwasi-emulated-getpid

# The ES module package in web/ (docs/web.md): the library as a wasm reactor exporting the
# header's functions (the header marks them visible; everything else is hidden), loaded from
# beside web/wgtensor.js, and the table its generic bindings are made from.
web/wgtensor.wasm: $(WASM_LIB_OBJ)
	$(WASM_CC) $(WASM_FLAGS) -mexec-model=reactor -o $@ $(WASM_LIB_OBJ) -Wl,--export-dynamic $(WASM_LDFLAGS)

web/src/api_table.js web/src/api_table.d.ts &: include/wgtensor.h scripts/gen_api.py web/scripts/gen_js_api.py
	python3 web/scripts/gen_js_api.py $@

# test-wasm: the C suite built as wasm, whole on the CPU backend in Node 24; then a chosen
# part of it on WebGPU, in Node (npm `webgpu`, lavapipe here) and in headless Chromium
# (SwiftShader). The whole WebGPU half takes far longer in wasm than natively (each kernel's
# first compile through this Dawn and lavapipe is cold: tens of minutes), so CI runs tests
# that cover every path of the JS import table: device and adapter queries, features, shader
# errors, reads through views, async reads, device loss, error-scope failures and the leak
# check, user kernels (a caller's buffer wrapped: AddRef), and one differential test per op
# family that compiles quickly (docs/web.md). Last,
# the JS API's tests (node's test runner): every op family on WebGPU against the CPU backend.
WASM_WEBGPU_TESTS ?= env_webgpu webgpu_feature_values webgpu_shader_errors webgpu_adapter_choice \
	read_write_through_views matmul_known_values binary_webgpu_matches_cpu index_webgpu shape_webgpu_matches_cpu \
	device_loss engine_async_reads limits_failures_leave user_kernel uploads_
# SwiftShader lacks shader-f16, and binary_webgpu_matches_cpu's f16 overflows come back NaN
# there (docs/web.md): the browser runs the rest.
WASM_BROWSER_TESTS ?= webgpu_feature_values webgpu_shader_errors read_write_through_views matmul_known_values \
	index_webgpu shape_webgpu_matches_cpu device_loss engine_async_reads docs uploads_
# The demo page (web/demo/): the digits Debian's python3-sklearn ships, served beside it.
DIGITS ?= /usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz
DEMO_PORT ?= 8000
web/demo/data/digits.csv.gz: $(DIGITS)
	@mkdir -p $(@D)
	cp $< $@

.PHONY: setup-wasm test-wasm test-wasm-run serve-demo
serve-demo: wasm web/demo/data/digits.csv.gz
	@echo "wgtensor demo: http://127.0.0.1:$(DEMO_PORT)/web/demo/ (a browser with WebGPU)"
	python3 -m http.server $(DEMO_PORT) --bind 127.0.0.1

setup-wasm:
	@./scripts/setup_wasm.sh

test-wasm: setup-wasm
	@$(MAKE) --no-print-directory wasm
	@$(MAKE) --no-print-directory test-wasm-run

test-wasm-run: web/demo/data/digits.csv.gz
	$(WASM_NODE) web/tests/run_c_suite.mjs
	$(WASM_NODE) web/tests/run_c_suite.mjs --webgpu $(WASM_WEBGPU_TESTS)
	$(WASM_NODE) web/tests/run_browser.mjs $(WASM_BROWSER_TESTS)
	$(WASM_NODE) web/tests/run_demo.mjs 3 $(WASM_BUILD)/demo.png
	$(WASM_NODE) --expose-gc --test web/tests/api/*.test.mjs

# ---- the JavaScript path beside the native one: bench/kernels_bench.c (docs/web.md, "Benchmarks")
# One program built natively (against the static library; kernels_bench_plain with
# web/c/plain_blas.c in place of the system BLAS, to run where none is installed) and as a
# WASI program that web/bench/run_bench.mjs runs in Node over the JS WebGPU import table.
.PHONY: bench-web
bench-web: $(BUILD)/kernels_bench $(BUILD)/kernels_bench_plain $(WASM_BUILD)/kernels_bench.wasm

$(BUILD)/kernels_bench: bench/kernels_bench.c src/core/gpu_timing.h $(BUILD)/libwgtensor.a
	$(CC) $(CFLAGS) $(CPPFLAGS_ALL) $(WARN) -o $@ $< $(BUILD)/libwgtensor.a $(LDLIBS)

$(BUILD)/kernels_bench_plain: bench/kernels_bench.c web/c/plain_blas.c src/core/gpu_timing.h $(BUILD)/libwgtensor.a
	$(CC) $(CFLAGS) -D_GNU_SOURCE -Iinclude -Isrc -Iweb/c/include $(WARN) -o $@ $< web/c/plain_blas.c \
		$(BUILD)/libwgtensor.a -lm -ldl -lpthread

$(WASM_BUILD)/kernels_bench.wasm: bench/kernels_bench.c src/core/gpu_timing.h $(WASM_LIB_OBJ)
	$(WASM_CC) $(WASM_FLAGS) $(WASM_CPPFLAGS) $(WARN) -o $@ $< $(WASM_LIB_OBJ) $(WASM_LDFLAGS)
