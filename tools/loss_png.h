#ifndef WGT_LOSS_PNG_H
#define WGT_LOSS_PNG_H
/* Writes path as a 640x360 PNG: the training loss per step (light blue, smoothed in dark
 * blue), validation losses at val_step (red), the unigram baseline (gray dashes); the y axis
 * runs from 0 to top. Returns 1 on success. */
int loss_png_write(const char *path, const double *train, int steps, const int *val_step, const double *val,
                   int nval, double unigram, double top);
#endif
