# wgtensor build. `make demo` and `make test` install what is missing first (scripts/setup.sh).
CC ?= cc
CFLAGS ?= -O2 -g
BUILD ?= build
WARN = -std=c11 -Wall -Wextra -Wshadow -Wno-unused-parameter -Werror=implicit-function-declaration
DAWN_LIB = $(CURDIR)/.deps/dawn/libwebgpu_wrapper.so
CPPFLAGS_ALL = -D_GNU_SOURCE -Iinclude -Isrc -I$(BUILD)/gen -DWGT_DAWN_INSTALL_PATH='"$(DAWN_LIB)"'
LDLIBS = -lm -ldl -lpthread -lopenblas

LIB_SRC = $(wildcard src/core/*.c) $(wildcard src/backend/cpu/*.c) $(wildcard src/backend/webgpu/*.c)
WGSL = $(sort $(wildcard src/backend/webgpu/wgsl/*.wgsl))
LIB_OBJ = $(LIB_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/gen/wgsl_sources.o
HEADERS = $(wildcard include/*.h src/*/*.h src/backend/*/*.h)
TEST_SRC = $(wildcard tests/*.c)

.PHONY: all setup demo test info clean
all: $(BUILD)/libwgtensor.a $(BUILD)/libwgtensor.so $(BUILD)/wgtensor $(BUILD)/wgt_tests $(BUILD)/examples/hello

setup:
	@./scripts/setup.sh

demo: setup all
	$(BUILD)/wgtensor demo

info: setup all
	$(BUILD)/wgtensor info

test: setup all
	$(BUILD)/wgt_tests

$(BUILD)/gen/wgsl_sources.c: $(WGSL) scripts/embed_wgsl.sh
	@mkdir -p $(@D)
	./scripts/embed_wgsl.sh $(WGSL) > $@

$(BUILD)/obj/%.o: %.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS_ALL) $(WARN) $(CFLAGS) -fPIC -c $< -o $@

$(BUILD)/obj/gen/wgsl_sources.o: $(BUILD)/gen/wgsl_sources.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fPIC -c $< -o $@

$(BUILD)/libwgtensor.a: $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/libwgtensor.so: $(LIB_OBJ)
	$(CC) -shared $(CFLAGS) -o $@ $^ $(LDLIBS)

TOOLS_SRC = tools/wgtensor.c tools/mlp_demo.c tools/bench.c
$(BUILD)/wgtensor: $(TOOLS_SRC) $(BUILD)/libwgtensor.a
	$(CC) $(CPPFLAGS_ALL) $(WARN) $(CFLAGS) -o $@ $(TOOLS_SRC) $(BUILD)/libwgtensor.a $(LDLIBS)

$(BUILD)/wgt_tests: $(TEST_SRC) tests/test.h $(BUILD)/libwgtensor.a
	$(CC) $(CPPFLAGS_ALL) -DWGT_SOURCE_DIR='"$(CURDIR)"' $(WARN) $(CFLAGS) -o $@ $(TEST_SRC) $(BUILD)/libwgtensor.a $(LDLIBS)

$(BUILD)/examples/%: examples/%.c $(BUILD)/libwgtensor.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS_ALL) $(WARN) $(CFLAGS) -o $@ $< $(BUILD)/libwgtensor.a $(LDLIBS)

clean:
	rm -rf $(BUILD)
