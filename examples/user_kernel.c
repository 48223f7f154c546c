/*
 * A custom activation as a WGSL kernel of your own: hard swish, x * clamp(x + 3, 0, 6) / 6,
 * with the 3 and 6 as params, run on a tensor computed by the library, followed by a library
 * op on its result, and checked against the same formula in C. Needs the WebGPU backend (on a
 * machine without it the program says so and exits 0: there is nothing to check).
 */
#include <math.h>
#include <stdio.h>
#include <wgtensor.h>

static const char hard_swish[] =
    "struct Params { shift : f32, top : f32, n : u32, pad : u32 }\n"
    "@group(0) @binding(0) var<storage, read> x : array<f32>;\n"
    "@group(0) @binding(1) var<storage, read_write> y : array<f32>;\n"
    "@group(0) @binding(2) var<uniform> p : Params;\n"
    "@compute @workgroup_size(64)\n"
    "fn main(@builtin(global_invocation_id) id : vec3<u32>) {\n"
    "    if (id.x >= p.n) { return; }\n"
    "    let v = x[id.x];\n"
    "    y[id.x] = v * clamp(v + p.shift, 0.0, p.top) / p.top;\n"
    "}\n";

static int fail(const char *what) {
    fprintf(stderr, "user_kernel: %s: %s\n", what, wgt_last_error());
    return 1;
}

int main(void) {
    wgt_context_options opt = {0};
    opt.backend = WGT_BACKEND_WEBGPU;
    wgt_context *ctx = wgt_context_create(&opt);
    if (!ctx) {
        printf("user_kernel: no WebGPU device (%s); user kernels need one\n", wgt_last_error());
        return 0;
    }
    enum { N = 1000 };
    wgt_tensor *x = wgt_arange(ctx, WGT_F32, -5.0, 5.0, 0.01); /* N values */
    struct { float shift, top; uint32_t n, pad; } p = {3.0f, 6.0f, N, 0};
    int64_t shape[1] = {N};
    wgt_kernel *k = wgt_kernel_create(ctx, hard_swish, "main");
    if (!x || !k) return fail("setting up");
    wgt_kernel_arg args[2] = {{.name = "x", .tensor = x}, {.name = "y", .dtype = WGT_F32, .ndim = 1, .shape = shape}};
    wgt_tensor *out[2];
    uint32_t groups[3];
    if (wgt_kernel_groups_for(k, N, groups) != WGT_OK ||
        wgt_kernel_dispatch(k, 2, args, &p, sizeof p, groups[0], groups[1], groups[2], out) != WGT_OK)
        return fail("dispatching");
    wgt_tensor *y = out[1], *total = wgt_sum(y, 0, NULL, 0); /* the library's ops take the result */
    float xs[N], ys[N], sum;
    if (wgt_tensor_read(x, xs, sizeof xs) != WGT_OK || wgt_tensor_read(y, ys, sizeof ys) != WGT_OK ||
        wgt_tensor_read(total, &sum, sizeof sum) != WGT_OK)
        return fail("reading");
    double worst = 0, ref_sum = 0;
    for (int i = 0; i < N; i++) {
        double v = xs[i], c = v + 3.0 < 0 ? 0 : v + 3.0 > 6 ? 6 : v + 3.0, want = v * c / 6.0;
        double err = fabs(ys[i] - want) / (fabs(want) > 1e-30 ? fabs(want) : 1.0);
        if (err > worst) worst = err;
        ref_sum += want;
    }
    printf("%s: hard_swish(%g) = %g, hard_swish(%g) = %g, sum %.4f (C: %.4f), largest relative error %.2g\n",
           wgt_context_device_name(ctx), xs[400], ys[400], xs[900], ys[900], sum, ref_sum, worst);
    int ok = worst <= 4e-7 && fabs(sum - ref_sum) <= 1e-3 * fabs(ref_sum); /* f32: a few roundings */
    if (!ok) fprintf(stderr, "user_kernel: results differ from the C reference\n");
    wgt_release(x), wgt_release(y), wgt_release(total);
    wgt_kernel_release(k);
    wgt_context_release(ctx);
    return ok ? 0 : 1;
}
