/*
 * WGSL kernels the user-kernel tests share (test_user_kernel.c, test_user_kernel_graph.c).
 */
#ifndef WGT_TESTS_USER_KERNEL_SOURCES_H
#define WGT_TESTS_USER_KERNEL_SOURCES_H

#include <stdint.h>

/* y[i] = x[i] * p.scale + p.bias for i < p.n. */
static const char affine_src[] =
    "struct Params { scale : f32, bias : f32, n : u32, pad : u32 }\n"
    "@group(0) @binding(0) var<storage, read> x : array<f32>;\n"
    "@group(0) @binding(1) var<storage, read_write> y : array<f32>;\n"
    "@group(0) @binding(2) var<uniform> p : Params;\n"
    "/* a block comment with a fake @group(3) @binding(9) var<storage, read> z : array<f32>; */\n"
    "@compute @workgroup_size(64)\n"
    "fn main(@builtin(global_invocation_id) id : vec3<u32>) {\n"
    "    // a line comment: var<uniform> q : Params;\n"
    "    if (id.x < p.n) { y[id.x] = x[id.x] * p.scale + p.bias; }\n"
    "}\n";

typedef struct {
    float scale, bias;
    uint32_t n, pad;
} affine_params;

/* buf[i] = buf[i] * 2 + 1 for i < arrayLength(buf): in place. */
static const char twice_src[] =
    "@group(0) @binding(0) var<storage, read_write> buf : array<f32>;\n"
    "@compute @workgroup_size(32)\n"
    "fn main(@builtin(global_invocation_id) id : vec3<u32>) {\n"
    "    if (id.x < arrayLength(&buf)) { buf[id.x] = buf[id.x] * 2.0 + 1.0; }\n"
    "}\n";

#endif
