/*
 * docs/ops.md cannot drift from the code: every op the public header declares (from the
 * elementwise section on) is listed there, and every op named in its tables exists.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#ifndef WGT_SOURCE_DIR
#define WGT_SOURCE_DIR "."
#endif

static char *slurp(const char *rel) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", WGT_SOURCE_DIR, rel);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s) s[n] = '\0';
    fclose(f);
    return s;
}

/* Finds "`wgt_name`" (docs) or "wgt_name(" (header) for the name at p. */
static int has_name(const char *text, const char *name, const char *open, const char *close) {
    char needle[128];
    snprintf(needle, sizeof needle, "%s%s%s", open, name, close);
    return strstr(text, needle) != NULL;
}

TEST(docs_ops_lists_every_op) {
    char *header = slurp("include/wgtensor.h"), *docs = slurp("docs/ops.md");
    CHECK(header && docs, "cannot read include/wgtensor.h or docs/ops.md under %s", WGT_SOURCE_DIR);
    if (!header || !docs) {
        free(header), free(docs);
        return;
    }
    const char *start = strstr(header, "---- elementwise ops");
    CHECK(start != NULL, "the header lost its elementwise section marker");
    int ops = 0;
    for (const char *p = start; p && (p = strstr(p, " *wgt_")) != NULL; p++) { /* "wgt_tensor *wgt_x(" */
        const char *name = p + 2;
        size_t n = strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_");
        if (name[n] != '(') continue;
        char buf[96];
        snprintf(buf, sizeof buf, "%.*s", (int)n, name);
        CHECK(has_name(docs, buf, "`", "`"), "docs/ops.md does not list %s", buf);
        ops++;
    }
    for (const char *p = start; p && (p = strstr(p, "wgt_status wgt_")) != NULL; p++) { /* wgt_split, wgt_set_rows */
        const char *name = p + 11;
        size_t n = strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_");
        char buf[96];
        snprintf(buf, sizeof buf, "%.*s", (int)n, name);
        CHECK(has_name(docs, buf, "`", "`"), "docs/ops.md does not list %s", buf);
        ops++;
    }
    CHECK(ops > 80, "only %d ops found in the header", ops);
    for (const char *p = docs; (p = strstr(p, "`wgt_")) != NULL; p++) { /* and nothing listed is made up */
        const char *name = p + 1;
        size_t n = strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_");
        char buf[96];
        snprintf(buf, sizeof buf, "%.*s", (int)n, name);
        CHECK(has_name(header, buf, "", "("), "docs/ops.md lists %s, which the header does not declare", buf);
    }
    free(header), free(docs);
}
