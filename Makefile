# wgtensor build. `make demo` and `make test` install what is missing first (scripts/setup.sh),
# then build in a second make, so the BLAS and tools setup installed are seen.
CC ?= cc
CFLAGS ?= -O2 -g
BUILD ?= build
WARN = -std=c11 -Wall -Wextra -Wshadow -Wno-unused-parameter -Werror=implicit-function-declaration

# The version, from the header alone; the shared library's SONAME carries the major number.
VERSION := $(shell sed -n 's/^\#define WGT_VERSION_STRING "\(.*\)"/\1/p' include/wgtensor.h)
MAJOR := $(firstword $(subst ., ,$(VERSION)))
SONAME = libwgtensor.so.$(MAJOR)
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include

# The BLAS behind the CPU backend's matrix products: any CBLAS. BLAS_LIBS (and BLAS_CFLAGS)
# name one directly; else BLAS names pkg-config modules to try in order (default: OpenBLAS,
# then the generic cblas and blas modules, which Debian points at the system's choice).
BLAS ?= openblas cblas blas
ifdef BLAS_LIBS
BLAS_FROM = BLAS_LIBS=$(BLAS_LIBS)
else
BLAS_PC := $(firstword $(foreach m,$(BLAS),$(shell pkg-config --exists $(m) 2>/dev/null && echo $(m))))
BLAS_LIBS := $(if $(BLAS_PC),$(shell pkg-config --libs $(BLAS_PC)))
BLAS_CFLAGS := $(if $(BLAS_PC),$(shell pkg-config --cflags $(BLAS_PC)))
BLAS_FROM = $(if $(BLAS_PC),pkg-config module $(BLAS_PC) ($(strip $(BLAS_LIBS))),nothing: none of the pkg-config modules $(BLAS) exists)
endif

CPPFLAGS_ALL = -D_GNU_SOURCE -Iinclude -Isrc -I$(BUILD)/gen $(BLAS_CFLAGS)
LDLIBS = -lm -ldl -lpthread $(BLAS_LIBS) $(EXTRA_LDLIBS)

LIB_SRC = $(wildcard src/core/*.c) $(wildcard src/autograd/*.c) $(wildcard src/quant/*.c) $(wildcard src/backend/cpu/*.c) \
	$(wildcard src/backend/webgpu/*.c)
SHARED_LIB = $(BUILD)/libwgtensor.so.$(VERSION)
WGSL = $(sort $(wildcard src/backend/webgpu/wgsl/*.wgsl))
LIB_OBJ = $(LIB_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/gen/wgsl_sources.o
HEADERS = $(wildcard include/*.h src/*/*.h src/backend/*/*.h)
TEST_SRC = $(wildcard tests/*.c)

.PHONY: all setup demo test info clean kernel-inspect install check-install blas-check python python-link FORCE
all: blas-check $(BUILD)/libwgtensor.a $(BUILD)/libwgtensor.so $(BUILD)/wgtensor $(BUILD)/wgt_tests \
	$(BUILD)/examples/hello $(BUILD)/examples/user_kernel $(BUILD)/wgtensor.pc

setup:
	@./scripts/setup.sh

# The main job (docs/autograd.md, "train-lm"): a character-level transformer trained for three
# minutes on Debian's fortunes; `wgtensor demo` is the earlier digits classifier.
demo: setup
	@$(MAKE) --no-print-directory all
	$(BUILD)/wgtensor train-lm --seconds 180 --min-steps 400 --out $(BUILD)/demo

info: setup
	@$(MAKE) --no-print-directory all
	$(BUILD)/wgtensor info

# The install check (scripts/check_install.sh: make install into a temporary prefix, the
# README's pkg-config build of examples/hello.c against it, the exported symbols) and the
# runner's own check (scripts/check_runner.sh: skips are counted, never passed) run first,
# so the suite's closing line stays the last line.
test: setup
	@$(MAKE) --no-print-directory all python
	./scripts/check_install.sh $(BUILD)
	./scripts/check_runner.sh $(BUILD)
	./scripts/run_tests.sh $(BUILD) $(PYTHON)

# The Python package (python/, docs/python.md): the extension wgtensor._core with
# libwgtensor.a linked in, built with Debian's Python (PYTHON) into $(BUILD)/python, where
# `PYTHONPATH=$(BUILD)/python $(PYTHON)` imports it. python-link builds the static library and
# prints it with its link flags, for python/setup.py (also when pip runs it).
PYTHON ?= /usr/bin/python3
python: $(BUILD)/libwgtensor.a
	cd python && WGT_BUILD=$(abspath $(BUILD)) $(PYTHON) setup.py -q build --build-base $(abspath $(BUILD))/python-tmp \
		--build-lib $(abspath $(BUILD))/python

python-link: blas-check $(BUILD)/libwgtensor.a
	@echo $(abspath $(BUILD)/libwgtensor.a) $(LDLIBS)

blas-check:
	@if [ -z "$(strip $(BLAS_LIBS))" ]; then echo "wgtensor: no BLAS found: $(BLAS_FROM); install libopenblas-dev" \
		"(or any CBLAS with a pkg-config module), or set BLAS_LIBS='-l...' and BLAS_CFLAGS" >&2; exit 1; fi

# Where an installed libwgtensor looks for Dawn (LIBDIR/wgtensor/): rewritten only when
# LIBDIR changes, so a build for another PREFIX recompiles the loader and nothing else.
$(BUILD)/gen/install_dirs.h: FORCE
	@mkdir -p $(@D)
	@printf '#define WGT_INSTALL_LIBDIR "%s"\n' '$(LIBDIR)' > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@
$(BUILD)/obj/src/backend/webgpu/loader.o $(BUILD)/fuzz/obj/src/backend/webgpu/loader.o: $(BUILD)/gen/install_dirs.h

# A Vulkan layer that prints the driver's statistics of each compute pipeline (registers,
# code size) and dumps SPIR-V and compiled code: tools/kernel_inspect/README.md. Not part of
# the library or the tests; it needs Vulkan's headers (libvulkan-dev, or VULKAN_INCLUDE=dir).
kernel-inspect: $(BUILD)/kernel_inspect/libwgt_pipeline_stats.so

$(BUILD)/kernel_inspect/libwgt_pipeline_stats.so: tools/kernel_inspect/pipeline_stats_layer.c
	@mkdir -p $(@D)
	$(CC) $(if $(VULKAN_INCLUDE),-I$(VULKAN_INCLUDE)) $(WARN) $(CFLAGS) -shared -fPIC -fvisibility=hidden $< -o $@

$(BUILD)/gen/wgsl_sources.c: $(WGSL) scripts/embed_wgsl.sh
	@mkdir -p $(@D)
	./scripts/embed_wgsl.sh $(WGSL) > $@

# Library objects: hidden visibility, so the shared library exports what include/wgtensor.h
# declares and nothing else (the header marks its declarations visible).
$(BUILD)/obj/%.o: %.c $(HEADERS) Makefile
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS_ALL) $(WARN) $(CFLAGS) -fPIC -fvisibility=hidden -c $< -o $@

$(BUILD)/obj/gen/wgsl_sources.o: $(BUILD)/gen/wgsl_sources.c Makefile
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fPIC -fvisibility=hidden -c $< -o $@

$(BUILD)/libwgtensor.a: $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

$(SHARED_LIB): $(LIB_OBJ)
	@echo "wgtensor $(VERSION): BLAS from $(BLAS_FROM)"
	$(CC) -shared $(CFLAGS) -Wl,-soname,$(SONAME) -Wl,--no-undefined -o $@ $^ $(LDLIBS)

$(BUILD)/libwgtensor.so: $(SHARED_LIB)
	ln -sf $(notdir $(SHARED_LIB)) $(BUILD)/$(SONAME)
	ln -sf $(SONAME) $@

$(BUILD)/wgtensor.pc: wgtensor.pc.in include/wgtensor.h FORCE
	@mkdir -p $(@D)
	@sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|' \
		-e 's|@VERSION@|$(VERSION)|; s|@LIBS_PRIVATE@|$(strip -lm -ldl -lpthread $(BLAS_LIBS))|' $< > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@

# make install [PREFIX=/usr/local] [DESTDIR=]: the header, the static and shared libraries,
# the pkg-config file, and the Dawn library setup fetched (LIBDIR/wgtensor/, where the
# installed library looks for it first).
install: blas-check $(BUILD)/libwgtensor.a $(BUILD)/libwgtensor.so $(BUILD)/wgtensor.pc
	install -d $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(LIBDIR)/wgtensor
	install -m 644 include/wgtensor.h $(DESTDIR)$(INCLUDEDIR)/
	install -m 644 $(BUILD)/libwgtensor.a $(DESTDIR)$(LIBDIR)/
	install -m 755 $(SHARED_LIB) $(DESTDIR)$(LIBDIR)/
	ln -sf $(notdir $(SHARED_LIB)) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libwgtensor.so
	install -m 644 $(BUILD)/wgtensor.pc $(DESTDIR)$(LIBDIR)/pkgconfig/
	if [ -f .deps/dawn/libwebgpu_wrapper.so ]; then \
		install -m 755 .deps/dawn/libwebgpu_wrapper.so $(DESTDIR)$(LIBDIR)/wgtensor/; \
		install -m 644 .deps/dawn/package.json $(DESTDIR)$(LIBDIR)/wgtensor/dawn-package.json; fi

check-install: all
	./scripts/check_install.sh $(BUILD)

TOOLS_SRC = $(wildcard tools/*.c)
TOOLS_HEADERS = $(wildcard tools/*.h)
$(BUILD)/wgtensor: $(TOOLS_SRC) $(TOOLS_HEADERS) $(BUILD)/libwgtensor.a
	$(CC) $(CPPFLAGS_ALL) $(WARN) $(CFLAGS) -o $@ $(TOOLS_SRC) $(BUILD)/libwgtensor.a $(LDLIBS)

$(BUILD)/wgt_tests: $(TEST_SRC) tests/test.h $(TOOLS_SRC) $(TOOLS_HEADERS) $(BUILD)/libwgtensor.a
	$(CC) $(CPPFLAGS_ALL) -DWGT_SOURCE_DIR='"$(CURDIR)"' $(WARN) $(CFLAGS) -o $@ $(TEST_SRC) $(BUILD)/libwgtensor.a $(LDLIBS)

$(BUILD)/examples/%: examples/%.c $(BUILD)/libwgtensor.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS_ALL) $(WARN) $(CFLAGS) -o $@ $< $(BUILD)/libwgtensor.a $(LDLIBS)

# ---- fuzzing: `make fuzz` (clang and libFuzzer; never part of `all`) ------------------------
# tests/fuzz/fuzz_api.c against the library rebuilt with ASan and UBSan (every report fatal):
# FUZZ_SECONDS on the CPU backend with a corpus kept in build/fuzz/corpus-cpu between runs,
# then FUZZ_WEBGPU_SECONDS through WebGPU (lavapipe here) from a fresh corpus with full-length
# inputs from the start (libFuzzer replays a kept corpus before its clock starts, which on a
# GPU would outlast the run). An empty corpus is seeded with random 1024-byte inputs: the
# target's odds then reach graphs, dispatches and reads within seconds, where libFuzzer's own
# short first inputs take minutes. Allocations that fail return NULL (the library must report
# WGT_ERR_OUT_OF_MEMORY); ones that succeed above -malloc_limit_mb are findings (FUZZ_SEED,
# below, makes a run repeatable). The run exits
# 0 when nothing was found; otherwise each finding is saved as build/fuzz/{cpu,webgpu}-crash-*
# (or leak-, oom-, timeout-), printed with the calls it makes (WGT_FUZZ_TRACE=1
# build/fuzz/fuzz_api FILE replays it so), and make fails.
# Then tests/fuzz/fuzz_files.c, the file readers (GGUF, safetensors, .npy) on bytes from
# outside, for FUZZ_FILES_SECONDS from a corpus seeded with valid files the library's own
# writers make (kept in build/fuzz/corpus-files); findings are saved as build/fuzz/files-*.
FUZZ_CC = clang
FUZZ_SECONDS ?= 60
FUZZ_WEBGPU_SECONDS ?= 20
FUZZ_FILES_SECONDS ?= 30
FUZZ_DIR = $(BUILD)/fuzz
FUZZ_SAN = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_OBJ = $(LIB_SRC:%.c=$(FUZZ_DIR)/obj/%.o) $(FUZZ_DIR)/obj/gen/wgsl_sources.o
FUZZ_ARGS = -max_len=1024 -timeout=60 -rss_limit_mb=4096 -malloc_limit_mb=512 -print_final_stats=1
# The CPU backend's threads split work by their number, which changes the code paths, hence
# the coverage libFuzzer follows: a seeded run fixes the number (2), so that it explores the
# same inputs on any machine; an unseeded one picks 1 to 8 at random, so runs over time try
# the splits of larger machines too.
ifeq ($(origin FUZZ_THREADS),undefined)
FUZZ_THREADS := $(if $(FUZZ_SEED),2,$(shell shuf -i 1-8 -n 1))
endif
FUZZ_ENV = ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 \
	WGT_CPU_THREADS=$(FUZZ_THREADS)
# FUZZ_SEED=N makes a run repeatable: the seed inputs come from a generator seeded with N and
# libFuzzer's own choices from -seed=N, so the same tree explores the same inputs (CI runs
# so, so that what lands was fuzzed the way CI will fuzz it). Unset, both are random: each
# run explores afresh.
FUZZ_SEED ?=
FUZZ_ARGS += $(if $(FUZZ_SEED),-seed=$(FUZZ_SEED))
# FUZZ_RUNS, FUZZ_WEBGPU_RUNS and FUZZ_FILES_RUNS cap each part's inputs as well as its time: a
# seeded run so capped tries the same inputs on a faster machine as on a slower one.
FUZZ_RUNS ?=
FUZZ_WEBGPU_RUNS ?=
FUZZ_FILES_RUNS ?=
fuzz_runs = $(if $(1),-runs=$(1))
# (No commas in the Python text: $(if) would split it there.)
fuzz_seed_bytes = $(if $(FUZZ_SEED),python3 -c "import random; import sys; \
	sys.stdout.buffer.write(random.Random($(FUZZ_SEED) * 1000 + $(1)).randbytes(1024))",head -c 1024 /dev/urandom)

# $(call fuzz_run,backend,seconds,corpus,more libFuzzer flags)
define fuzz_run
	@mkdir -p $(3) && if [ -z "$$(find $(3) -type f | head -n 1)" ]; then \
		for i in $$(seq 32); do $(call fuzz_seed_bytes,$$i) > $(3)/seed-$$i; done; fi
	@touch $(FUZZ_DIR)/.started-$(1)
	@echo "fuzz: $(1) backend, $(2) s: $(FUZZ_ENV) WGT_BACKEND=$(1) $(FUZZ_DIR)/fuzz_api $(FUZZ_ARGS) $(4) $(3)"
	@$(FUZZ_ENV) WGT_BACKEND=$(1) $(FUZZ_DIR)/fuzz_api $(FUZZ_ARGS) $(4) -max_total_time=$(2) \
		-artifact_prefix=$(FUZZ_DIR)/$(1)- $(3) > $(FUZZ_DIR)/$(1).log 2>&1 && tail -n 8 $(FUZZ_DIR)/$(1).log || { \
		grep -v '^INFO' $(FUZZ_DIR)/$(1).log | tail -n 80; \
		for f in $$(find $(FUZZ_DIR) -maxdepth 1 -newer $(FUZZ_DIR)/.started-$(1) \( -name '$(1)-crash-*' \
			-o -name '$(1)-leak-*' -o -name '$(1)-oom-*' -o -name '$(1)-timeout-*' \)); do \
			echo "fuzz: finding $$f; its calls, from WGT_FUZZ_TRACE=1 WGT_BACKEND=$(1) $(FUZZ_DIR)/fuzz_api $$f:"; \
			$(FUZZ_ENV) WGT_BACKEND=$(1) scripts/fuzz_report.sh $(FUZZ_DIR)/fuzz_api $$f $(FUZZ_ARGS); \
		done; scripts/fuzz_report.sh --log $(FUZZ_DIR)/$(1).log; \
		echo "fuzz: the $(1) run found the above (its whole output: $(FUZZ_DIR)/$(1).log)" >&2; exit 1; }
endef

.PHONY: fuzz fuzz-run
fuzz: setup
	@$(MAKE) --no-print-directory fuzz-run

fuzz-run: $(FUZZ_DIR)/fuzz_api $(FUZZ_DIR)/fuzz_files
	@rm -rf $(FUZZ_DIR)/corpus-webgpu
	$(call fuzz_run,cpu,$(FUZZ_SECONDS),$(FUZZ_DIR)/corpus-cpu,$(call fuzz_runs,$(FUZZ_RUNS)))
	$(call fuzz_run,webgpu,$(FUZZ_WEBGPU_SECONDS),$(FUZZ_DIR)/corpus-webgpu,-len_control=0 $(call fuzz_runs,$(FUZZ_WEBGPU_RUNS)))
	@mkdir -p $(FUZZ_DIR)/corpus-files && $(FUZZ_ENV) WGT_FUZZ_WRITE_SEEDS=$(FUZZ_DIR)/corpus-files $(FUZZ_DIR)/fuzz_files
	@echo "fuzz: file readers, $(FUZZ_FILES_SECONDS) s: $(FUZZ_ENV) $(FUZZ_DIR)/fuzz_files $(FUZZ_ARGS) $(FUZZ_DIR)/corpus-files"
	@$(FUZZ_ENV) $(FUZZ_DIR)/fuzz_files $(FUZZ_ARGS) -max_total_time=$(FUZZ_FILES_SECONDS) $(call fuzz_runs,$(FUZZ_FILES_RUNS)) \
		-artifact_prefix=$(FUZZ_DIR)/files- $(FUZZ_DIR)/corpus-files || { \
		echo "fuzz: the file readers' run found the above (replay: $(FUZZ_DIR)/fuzz_files FILE)" >&2; exit 1; }

$(FUZZ_DIR)/obj/%.o: %.c $(HEADERS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS_ALL) $(WARN) -O1 -g $(FUZZ_SAN) -fsanitize=fuzzer-no-link -fPIC -c $< -o $@

$(FUZZ_DIR)/obj/gen/wgsl_sources.o: $(BUILD)/gen/wgsl_sources.c
	@mkdir -p $(@D)
	$(FUZZ_CC) -O1 -fPIC -c $< -o $@

$(FUZZ_DIR)/fuzz_api $(FUZZ_DIR)/fuzz_files: $(FUZZ_DIR)/%: tests/fuzz/%.c $(FUZZ_OBJ) $(FUZZ_DIR)/pin_lavapipe.o
	$(FUZZ_CC) $(CPPFLAGS_ALL) $(WARN) -O1 -g $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJ) \
		$(FUZZ_DIR)/pin_lavapipe.o $(LDLIBS)

# ---- sanitizers: `make test-asan`, `make test-valgrind` ------------------------------------
# test-asan: the library, tools and tests rebuilt into build/asan/ with ASan and UBSan (the
# rules above, with BUILD and CFLAGS changed; CFLAGS reaches the link lines), then the whole
# suite and the demo; any report fails the run. Dawn and the driver are dlopen'ed and not
# instrumented: their malloc/new/delete still go through ASan's allocator, so LeakSanitizer
# sees their blocks too. Keep fast_unwind_on_malloc at its default: 0 deadlocks in libgcc's
# unwinder once lavapipe's JIT has registered frames. pin_lavapipe.o: see tests/lsan.supp.
ASAN_BUILD = $(BUILD)/asan
SANITIZE = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
# WGT_TIMEOUT_MS: instrumented, the library feeds lavapipe slowly enough that the largest grids
# (a sum over 16.7M rows) pass the default 60 s wait on a 2-core machine; a real hang still ends.
# ASAN_EXCLUDE: the grid-limit tests (millions of rows or workgroups, 400k dispatches), which take
# minutes each instrumented (their float64 references run instrumented too) and whose host code
# is the smaller tests' own; they run natively in `make test`, twice. ASAN_EXCLUDE= runs them.
ASAN_EXCLUDE ?= attention_kernel_many_workgroups softmax_many_rows_2d_grid reduce_many_outputs_2d_grid \
	scale_an_unfused_graph_of_400k_dispatches
ASAN_ENV = ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=1 \
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	WGT_TIMEOUT_MS=300000 WGT_TEST_EXCLUDE=$(subst $(space),$(comma),$(strip $(ASAN_EXCLUDE)))
# test-valgrind: memcheck over the CPU backend only (under valgrind, Dawn and lavapipe run ~100x
# slower and bring ld.so and driver reports of their own): the run sees a machine without
# WebGPU, as README describes, so the WebGPU tests skip.
# Tests whose kernels take seconds natively (hours under memcheck), and whose memory handling
# the other tests share, are left out (counted as skipped, the reason printed); they run
# natively and under ASan. VALGRIND_EXCLUDE= runs them all (names separated by spaces).
# tests/valgrind.supp names glibc's thread-stack cache only (a joined thread's TLS vector).
VALGRIND = valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect,possible --track-origins=yes \
	--suppressions=$(CURDIR)/tests/valgrind.supp --error-exitcode=1
VALGRIND_EXCLUDE ?= cpu_f32_matmul_with_any_blas_threads cpu_thread_count_keeps_bits threads_cpu_worker_pools \
	matmul_tiles_128 matmul_split_k matmul_few_rows matmul_f16_past_the_cpu_blocks matmul_exact_every_kernel \
	elementwise_beyond_one_dispatch_dimension index_many_indices_2d_grid reduce_many_outputs_2d_grid scale_
comma = ,
empty =
space = $(empty) $(empty)
VALGRIND_ENV = WGT_TEST_ALLOW_NO_WEBGPU=1 WGT_WEBGPU_LIBRARY=/nonexistent/no-webgpu-under-valgrind.so \
	WGT_TEST_EXCLUDE=$(subst $(space),$(comma),$(strip $(VALGRIND_EXCLUDE)))

# test-tsan: the suite rebuilt with ThreadSanitizer, running the tests whose names hold one of
# TSAN_TESTS' substrings: the code that runs on more than one thread (threads sharing handles
# and contexts, the CPU worker pool and BLAS threads, deadlines and late work, async reads,
# device loss reported from the driver's threads, contexts giving back device threads).
# TSAN_TESTS= runs the whole suite (past 40 minutes on a 2-core machine, too long for CI).
# tests/tsan.supp may name only OpenBLAS and lavapipe.
TSAN_BUILD = $(BUILD)/tsan
TSAN_TESTS ?= thread,timeout,timed_out,deadline,async,released_webgpu_contexts,read_requests,device_loss
TSAN_ENV = TSAN_OPTIONS="halt_on_error=1 suppressions=$(CURDIR)/tests/tsan.supp"

.PHONY: test-asan test-valgrind test-tsan
test-tsan: setup
	@$(MAKE) --no-print-directory BUILD=$(TSAN_BUILD) CFLAGS="-O1 -g -fsanitize=thread" $(TSAN_BUILD)/wgt_tests
	$(TSAN_ENV) $(TSAN_BUILD)/wgt_tests $(TSAN_TESTS)

test-asan: setup $(ASAN_BUILD)/pin_lavapipe.o
	$(MAKE) --no-print-directory BUILD=$(ASAN_BUILD) CFLAGS="$(CFLAGS) $(SANITIZE)" \
		EXTRA_LDLIBS="$(CURDIR)/$(ASAN_BUILD)/pin_lavapipe.o" all
	$(ASAN_ENV) $(ASAN_BUILD)/wgt_tests
	$(ASAN_ENV) $(ASAN_BUILD)/wgtensor demo

test-valgrind: setup
	@$(MAKE) --no-print-directory all
	@command -v valgrind >/dev/null || { echo 'test-valgrind: valgrind is not installed (see scripts/setup.sh)' >&2; exit 1; }
	$(VALGRIND_ENV) $(VALGRIND) $(BUILD)/wgt_tests

# Linked into the sanitized programs only (the suite's and the fuzzers'): opens Mesa's
# lavapipe once with RTLD_NODELETE, so the driver stays mapped to the end and LeakSanitizer
# still scans its globals (tests/lsan.supp says why).
$(ASAN_BUILD)/pin_lavapipe.o $(FUZZ_DIR)/pin_lavapipe.o:
	@mkdir -p $(@D)
	printf '%s\n' '#include <dlfcn.h>' '__attribute__((constructor)) static void pin_lavapipe(void) {' \
		'    dlopen("libvulkan_lvp.so", RTLD_LAZY | RTLD_LOCAL | RTLD_NODELETE);' '}' \
		| $(CC) -x c -c -fPIC -o $@ -

clean:
	rm -rf $(BUILD)
include web/wasm.mk
