/*
 * The hand-written PNG of `wgtensor train-lm` (tools/loss_png.c) is a file a decoder accepts:
 * the signature, an IHDR of 640x360 8-bit RGB whose CRC is what zlib.crc32 gives
 * (0x4850dd06, computed with Python's zlib), IEND's well-known CRC 0xae426082, and an IDAT
 * whose stored deflate blocks have consistent lengths and hold every row (a zero filter byte
 * and 1920 pixel bytes) with the Adler-32 of that data. A red validation point lands where
 * the axes put it.
 */
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "../tools/loss_png.c"

static uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

TEST(loss_png_is_a_valid_png) {
    double train[100];
    for (int i = 0; i < 100; i++) train[i] = 4.0 - 2.0 * i / 99;
    int vstep[2] = {0, 99};
    double val[2] = {4.0, 2.0};
    const char *path = "/tmp/wgt_test_loss.png";
    CHECK(loss_png_write(path, train, 100, vstep, val, 2, 3.0, 5.0), "writing %s", path);
    FILE *f = fopen(path, "rb");
    uint8_t *d = malloc(1 << 20);
    size_t n = f && d ? fread(d, 1, 1 << 20, f) : 0;
    if (f) fclose(f);
    remove(path);
    CHECK(n > 33 + 12 && !memcmp(d, "\x89PNG\r\n\x1a\n", 8), "signature, %zu bytes", n);
    if (test_current_failed()) {
        free(d);
        return;
    }
    CHECK(be32(d + 8) == 13 && !memcmp(d + 12, "IHDR", 4) && be32(d + 16) == 640 && be32(d + 20) == 360 &&
          d[24] == 8 && d[25] == 2 && be32(d + 29) == 0x4850dd06u, "IHDR");
    CHECK(!memcmp(d + n - 12, "\0\0\0\0IEND\xae\x42\x60\x82", 12), "IEND");
    uint32_t zn = be32(d + 33);
    CHECK(!memcmp(d + 37, "IDAT", 4) && 33 + 12 + zn + 12 == n, "IDAT of %u bytes in %zu", zn, n);
    const size_t row = 1 + 3 * 640, want = 360 * row;
    uint8_t *raw = malloc(want), *z = d + 41;
    size_t got = 0, at = 2;
    CHECK(z[0] == 0x78 && (z[0] << 8 | z[1]) % 31 == 0, "zlib header %02x %02x", z[0], z[1]);
    for (int last = 0; !last && at + 5 <= zn && !test_current_failed();) {
        last = z[at] & 1;
        size_t len = z[at + 1] | z[at + 2] << 8, nlen = z[at + 3] | z[at + 4] << 8;
        CHECK((z[at] >> 1) == 0 && len == (~nlen & 0xffff) && got + len <= want && at + 5 + len <= zn,
              "stored block at %zu: type %d, len %zu, nlen %zu", at, z[at] >> 1, len, nlen);
        if (test_current_failed()) break;
        memcpy(raw + got, z + at + 5, len);
        got += len, at += 5 + len;
    }
    CHECK(got == want && at + 4 == zn, "%zu of %zu bytes, stream ends at %zu of %u", got, want, at, zn);
    uint32_t a = 1, b = 0;
    for (size_t i = 0; i < got; i++) a = (a + raw[i]) % 65521, b = (b + a) % 65521;
    CHECK(got != want || be32(z + at) == (b << 16 | a), "Adler-32 %08x, stored %08x", b << 16 | a, be32(z + at));
    for (size_t y = 0; got == want && y < 360; y++) CHECK(raw[y * row] == 0, "row %zu filter %d", y, raw[y * row]);
    /* the last validation point: x = 640 - 24 at the last step, y = 360 - 24 - 312 * 2 / 5 */
    const uint8_t *px = got == want ? raw + (size_t)(360 - 24 - 312 * 2 / 5) * row + 1 + 3 * (640 - 24) : NULL;
    CHECK(px && px[0] == 210 && px[1] == 30 && px[2] == 30, "no red point at the last validation loss");
    free(raw);
    free(d);
}
