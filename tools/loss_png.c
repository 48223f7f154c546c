/*
 * The loss curve of `wgtensor train-lm` as a PNG written by hand: RGB rows in zlib's stored
 * (uncompressed) blocks with their Adler-32, each chunk with its CRC-32. No library needed,
 * and any viewer reads it (a few hundred KB, which is fine for one plot).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loss_png.h"

static uint32_t crc32_update(uint32_t crc, const uint8_t *p, size_t n) {
    static uint32_t table[256];
    if (!table[1])
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++) c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
            table[i] = c;
        }
    crc = ~crc;
    for (size_t i = 0; i < n; i++) crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return ~crc;
}

static void put32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

static int chunk(FILE *f, const char *type, const uint8_t *data, uint32_t n) {
    uint8_t head[8], tail[4];
    put32(head, n);
    memcpy(head + 4, type, 4);
    put32(tail, crc32_update(crc32_update(0, head + 4, 4), data, n));
    return fwrite(head, 1, 8, f) == 8 && (n == 0 || fwrite(data, 1, n, f) == n) && fwrite(tail, 1, 4, f) == 4;
}

/* raw (filter byte + pixels per row) as a zlib stream of stored blocks. */
static uint8_t *zlib_stored(const uint8_t *raw, size_t n, size_t *out_n) {
    size_t blocks = n / 65535 + 1;
    uint8_t *z = malloc(2 + blocks * 5 + n + 4), *p = z;
    if (!z) return NULL;
    *p++ = 0x78, *p++ = 0x01; /* deflate, 32K window, no dictionary; (0x78 << 8 | 1) % 31 == 0 */
    uint32_t a = 1, b = 0;
    for (size_t at = 0;;) {
        size_t len = n - at < 65535 ? n - at : 65535;
        *p++ = at + len == n; /* BFINAL on the last block, BTYPE 00: stored */
        p[0] = (uint8_t)len, p[1] = (uint8_t)(len >> 8), p[2] = (uint8_t)~len, p[3] = (uint8_t)(~len >> 8);
        memcpy(p + 4, raw + at, len);
        p += 4 + len;
        at += len;
        if (at == n) break;
    }
    for (size_t i = 0; i < n; i++) a = (a + raw[i]) % 65521, b = (b + a) % 65521;
    put32(p, b << 16 | a);
    *out_n = (size_t)(p + 4 - z);
    return z;
}

enum { W = 640, H = 360, MARGIN = 24 };

static void dot(uint8_t *img, int x, int y, int r, const uint8_t *rgb) {
    for (int dy = -r; dy <= r; dy++)
        for (int dx = -r; dx <= r; dx++) {
            int px = x + dx, py = y + dy;
            if (px >= 0 && px < W && py >= 0 && py < H) memcpy(img + (size_t)py * (1 + 3 * W) + 1 + 3 * px, rgb, 3);
        }
}

static int to_x(double step, int steps) { return MARGIN + (int)((W - 2 * MARGIN) * step / (steps > 1 ? steps - 1 : 1)); }
static int to_y(double loss, double top) { return H - MARGIN - (int)((H - 2 * MARGIN) * (loss < 0 ? 0 : loss) / top); }

int loss_png_write(const char *path, const double *train, int steps, const int *val_step, const double *val,
                   int nval, double unigram, double top) {
    static const uint8_t black[3] = {0, 0, 0}, gray[3] = {150, 150, 150}, light[3] = {170, 200, 240},
                         blue[3] = {20, 60, 200}, red[3] = {210, 30, 30};
    size_t raw_n = (size_t)H * (1 + 3 * W), z_n = 0;
    uint8_t *img = malloc(raw_n);
    if (!img) return 0;
    memset(img, 255, raw_n);
    for (int y = 0; y < H; y++) img[(size_t)y * (1 + 3 * W)] = 0; /* filter: none */
    for (int x = MARGIN; x < W - MARGIN; x++) dot(img, x, H - MARGIN, 0, black);   /* x axis: steps */
    for (int y = MARGIN; y <= H - MARGIN; y++) dot(img, MARGIN, y, 0, black);      /* y axis: 0..top */
    for (int x = MARGIN; x < W - MARGIN; x += 6) dot(img, x, to_y(unigram, top), 0, gray); /* dashed */
    double ema = 0, weight = 0;
    for (int i = 0; i < steps; i++) dot(img, to_x(i, steps), to_y(train[i], top), 0, light);
    for (int i = 0; i < steps; i++) { /* the smoothed training loss over the raw points */
        ema = 0.95 * ema + 0.05 * train[i];
        weight = 0.95 * weight + 0.05; /* divides out the zero start, as Adam's bias correction */
        dot(img, to_x(i, steps), to_y(ema / weight, top), 1, blue);
    }
    for (int i = 0; i < nval; i++) dot(img, to_x(val_step[i], steps), to_y(val[i], top), 3, red);
    uint8_t *z = zlib_stored(img, raw_n, &z_n);
    uint8_t ihdr[13] = {0};
    put32(ihdr, W);
    put32(ihdr + 4, H);
    ihdr[8] = 8, ihdr[9] = 2; /* 8 bits, RGB; compression, filter, interlace 0 */
    FILE *f = z ? fopen(path, "wb") : NULL;
    int ok = f && fwrite("\x89PNG\r\n\x1a\n", 1, 8, f) == 8 && chunk(f, "IHDR", ihdr, 13) &&
             chunk(f, "IDAT", z, (uint32_t)z_n) && chunk(f, "IEND", NULL, 0);
    if (f && fclose(f)) ok = 0;
    free(z);
    free(img);
    return ok;
}
