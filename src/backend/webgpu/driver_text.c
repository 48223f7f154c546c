/*
 * Text from the driver, made fit for our one-line messages. Dawn's messages run over several
 * lines: the driver's words, then context lines (" - While calling [Device].CreateBuffer"),
 * and for internal errors the C++ frame they came from ("    at APIForceLoss
 * (/__w/dawn/dawn/src/dawn/native/Device.cpp:914)"). The words and the context are what a
 * caller can act on; line breaks would split our message and Dawn's source paths say nothing
 * about the caller's program. So every string the driver hands us passes through here: runs
 * of whitespace become one space, source locations (a token "path/file.ext:line", with its
 * "at Function" before it) are dropped, and the result is cut to the caller's buffer with
 * "..." marking a cut.
 */
#include <ctype.h>
#include <string.h>

#include "webgpu_internal.h"

/* Dawn's messages are a few hundred bytes; a shader error with its source excerpt may be a
 * few KiB. What lies past this is cut (and marked) like anything that overflows dst. */
#define DRIVER_TEXT_MAX 8192

/* "(/src/dawn/native/Device.cpp:914)" or "C:\dawn\Device.cpp:914:7," : a path (a slash or a
 * backslash) ending in ":digits", parentheses and trailing punctuation aside. */
static int is_source_location(const char *t, size_t n) {
    while (n && strchr(").,;", t[n - 1])) n--;
    if (n && t[0] == '(') t++, n--;
    if (!memchr(t, '/', n) && !memchr(t, '\\', n)) return 0;
    size_t digits = 0;
    while (digits < n && isdigit((unsigned char)t[n - 1 - digits])) digits++;
    return digits > 0 && digits < n && t[n - 1 - digits] == ':';
}

static int is_word(const char *out, size_t start, size_t end, const char *word) {
    return end - start == strlen(word) && memcmp(out + start, word, end - start) == 0;
}

void wgt_wgpu_copy_string(char *dst, size_t size, WGPUStringView v) {
    if (!size) return;
    size_t n = 0;
    if (v.data) n = v.length == WGPU_STRLEN ? strlen(v.data) : v.length;
    int cut = n > DRIVER_TEXT_MAX;
    if (cut) n = DRIVER_TEXT_MAX;
    char out[DRIVER_TEXT_MAX + 1];
    size_t used = 0;
    /* Start offsets in out of the last two tokens kept (SIZE_MAX: none), so a location can
     * take its "at Function" with it. */
    size_t prev1 = SIZE_MAX, prev2 = SIZE_MAX;
    for (size_t i = 0; i < n;) {
        while (i < n && isspace((unsigned char)v.data[i])) i++;
        size_t start = i;
        while (i < n && !isspace((unsigned char)v.data[i])) i++;
        if (i == start) break;
        const char *tok = v.data + start;
        size_t len = i - start;
        if (is_source_location(tok, len)) {
            /* "at Function (path:line)" or "at path:line": the frame goes with its location. */
            size_t drop = SIZE_MAX;
            if (prev1 != SIZE_MAX && is_word(out, prev1, used, "at")) drop = prev1;
            else if (prev2 != SIZE_MAX && is_word(out, prev2, prev1 - 1, "at")) drop = prev2;
            if (drop != SIZE_MAX) used = drop ? drop - 1 : 0; /* and the space before it */
            prev1 = prev2 = SIZE_MAX;
            continue;
        }
        size_t at = used ? used + 1 : 0;
        if (used) out[used] = ' ';
        memcpy(out + at, tok, len);
        used = at + len;
        prev2 = prev1;
        prev1 = at;
    }
    out[used] = '\0';
    if (used >= size) {
        used = size - 1;
        cut = 1;
    }
    memcpy(dst, out, used);
    dst[used] = '\0';
    if (cut && size >= 4) {
        size_t mark = used >= 3 ? used - 3 : 0;
        while (mark > 0 && ((unsigned char)dst[mark] & 0xc0) == 0x80) mark--; /* not inside a UTF-8 character */
        memcpy(dst + mark, "...", 4);
    }
}
