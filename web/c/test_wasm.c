/* Tests of the WebAssembly build's own C parts (web/c/), compiled into the wasm suite only. */
#include <string.h>

#include "test.h"

/* No library is loaded in wasm: a library path cannot be honoured, and says why rather than
 * being ignored (tests/test_webgpu.c checks that AUTO then falls back to the CPU). */
TEST(wasm_refuses_a_webgpu_library_path) {
    wgt_context_options opt = {0};
    opt.backend = WGT_BACKEND_WEBGPU;
    opt.library_path = "/usr/lib/libwebgpu_dawn.so";
    CHECK_ERROR(wgt_context_create(&opt) == NULL, WGT_ERR_UNAVAILABLE, "JavaScript WebGPU API");
    CHECK_ERROR(wgt_context_create(&opt) == NULL, WGT_ERR_UNAVAILABLE, "/usr/lib/libwebgpu_dawn.so");
}
