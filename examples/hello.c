/* The README's example: add a broadcast row to a matrix on the best device available. */
#include <stdio.h>
#include <wgtensor.h>

int main(void) {
    wgt_context *ctx = wgt_context_create(NULL);           /* WebGPU if a GPU works, else CPU */
    int64_t shape[2] = {2, 3}, row[1] = {3};
    wgt_tensor *a = wgt_arange(ctx, WGT_F32, 0, 6, 1), *m = wgt_reshape(a, 2, shape);
    wgt_tensor *b = wgt_full(ctx, WGT_F32, 1, row, 10.0);
    wgt_tensor *c = wgt_add(m, b);                          /* broadcasts [3] over [2, 3] */
    float out[6];
    if (!c || wgt_tensor_read(c, out, sizeof out) != WGT_OK) { fprintf(stderr, "%s\n", wgt_last_error()); return 1; }
    printf("%s: %g %g %g / %g %g %g\n", wgt_context_device_name(ctx), out[0], out[1], out[2], out[3], out[4], out[5]);
    wgt_release(a), wgt_release(m), wgt_release(b), wgt_release(c);
    wgt_context_release(ctx);
    return 0;
}
