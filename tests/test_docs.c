/*
 * docs/ops.md cannot drift from the code: every function the public header declares is
 * listed there, and every function named in it exists. Each function's table row gives its
 * types and backends, and the types agree with the lists the core checks arguments against
 * (wgt_takes_narrow, wgt_takes_blocks): "every type" (or a list naming bool) exactly for the
 * functions that take the narrow types, "block types" (or q8_0) for those that take the block
 * types, never a bare "all"; backends are "CPU, WebGPU", one of them, or "host".
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/tensor.h"
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

/* The header without its comments, so only declarations are scanned. */
static char *strip_comments(const char *text) {
    char *out = malloc(strlen(text) + 1), *o = out;
    if (!out) return NULL;
    for (const char *p = text; *p;) {
        if (p[0] == '/' && p[1] == '*') {
            const char *end = strstr(p + 2, "*/");
            p = end ? end + 2 : p + strlen(p);
            *o++ = ' ';
        } else if (p[0] == '/' && p[1] == '/') {
            p += strcspn(p, "\n");
        } else {
            *o++ = *p++;
        }
    }
    *o = '\0';
    return out;
}

/* Calls fn(name) for every function the header declares: "wgt_x(" right after a type. */
static int for_each_declared(const char *header, void (*fn)(const char *name, void *arg), void *arg) {
    int count = 0;
    for (const char *p = header; (p = strstr(p, "wgt_")) != NULL; p++) {
        if (p > header && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) continue; /* inside a name */
        size_t n = strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789_");
        const char *after = p + n;
        while (*after == ' ') after++;
        if (*after != '(') continue;
        const char *before = p;
        while (before > header && before[-1] == ' ') before--;
        if (before == header || !(before[-1] == '*' || isalnum((unsigned char)before[-1]) || before[-1] == '_'))
            continue; /* not after a type: a function pointer's name or a call */
        char name[96];
        snprintf(name, sizeof name, "%.*s", (int)n, p);
        fn(name, arg);
        count++;
    }
    return count;
}

static void check_listed(const char *name, void *docs) {
    CHECK(has_name(docs, name, "`", "`"), "docs/ops.md does not list %s", name);
}

TEST(docs_ops_lists_every_function_of_the_header) {
    char *raw = slurp("include/wgtensor.h"), *docs = slurp("docs/ops.md");
    char *header = raw ? strip_comments(raw) : NULL;
    CHECK(header && docs, "cannot read include/wgtensor.h or docs/ops.md under %s", WGT_SOURCE_DIR);
    if (!header || !docs) {
        free(raw), free(header), free(docs);
        return;
    }
    int declared = for_each_declared(header, check_listed, docs);
    /* The scan must see the whole header: its first and last declarations and every section. */
    CHECK(declared > 140, "only %d functions found in the header", declared);
    CHECK(has_name(header, "wgt_version", "", "(") && has_name(header, "wgt_attention", "", "("),
          "the header's first or last function moved: check the scan");
    for (const char *p = docs; (p = strstr(p, "`wgt_")) != NULL; p++) { /* and nothing listed is made up */
        const char *name = p + 1;
        size_t n = strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_");
        char buf[96];
        snprintf(buf, sizeof buf, "%.*s", (int)n, name);
        CHECK(has_name(header, buf, "", "("), "docs/ops.md lists %s, which the header does not declare", buf);
    }
    free(raw), free(header), free(docs);
}

/* The cells of the table row of docs/ops.md whose first cell lists `name`: types and
 * backends (the second and third); 0 when no row lists it. */
static int row_cells(const char *docs, const char *name, char *types, size_t tsize, char *backends, size_t bsize) {
    char needle[112];
    snprintf(needle, sizeof needle, "`%s`", name);
    for (const char *line = docs; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (strncmp(line, "| `wgt_", 7) != 0) continue;
        const char *c1 = strstr(line + 2, " | "), *eol = strchr(line, '\n');
        if (!c1 || (eol && c1 > eol)) continue;
        const char *hit = strstr(line, needle);
        if (!hit || hit > c1) continue;
        const char *c2 = strstr(c1 + 3, " | "), *c3 = c2 ? strstr(c2 + 3, " | ") : NULL;
        if (!c3 || (eol && c3 > eol)) return -1; /* a row without the types and backends cells */
        snprintf(types, tsize, "%.*s", (int)(c2 - c1 - 3), c1 + 3);
        snprintf(backends, bsize, "%.*s", (int)(c3 - c2 - 3), c2 + 3);
        return 1;
    }
    return 0;
}

static int has_word(const char *text, const char *word) {
    size_t n = strlen(word);
    for (const char *p = text; (p = strstr(p, word)) != NULL; p++)
        if ((p == text || !isalnum((unsigned char)p[-1])) && !isalnum((unsigned char)p[n])) return 1;
    return 0;
}

static void check_row(const char *name, void *docs) {
    char types[512] = "", backends[128] = "";
    int found = row_cells(docs, name, types, sizeof types, backends, sizeof backends);
    CHECK(found == 1, "docs/ops.md: %s has %s", name, found ? "a row without types and backends cells" : "no table row");
    if (found != 1) return;
    CHECK(types[0], "docs/ops.md: %s: the types cell is empty", name);
    CHECK(!strcmp(backends, "CPU, WebGPU") || !strcmp(backends, "WebGPU") || !strcmp(backends, "CPU") ||
              !strcmp(backends, "host"),
          "docs/ops.md: %s: backends '%s' (say CPU, WebGPU, both as 'CPU, WebGPU', or host)", name, backends);
    CHECK(!has_word(types, "all"), "docs/ops.md: %s: types '%s' says 'all': name the types", name, types);
    int narrow = wgt_takes_narrow(name), blocks = wgt_takes_blocks(name);
    int every = strstr(types, "every type") || strstr(types, "every pair");
    CHECK(narrow ? every || has_word(types, "bool") || has_word(types, "BOOL") : !every,
          "docs/ops.md: %s: types '%s', but the core %s the narrow types (wgt_takes_narrow)", name, types,
          narrow ? "takes" : "refuses");
    CHECK(!blocks || strstr(types, "block types") || strstr(types, "q8_0"),
          "docs/ops.md: %s: types '%s' do not name the block types it takes (wgt_takes_blocks)", name, types);
    CHECK(blocks || !strstr(types, "and the block types"),
          "docs/ops.md: %s: types '%s', but the core refuses the block types", name, types);
}

TEST(docs_ops_rows_give_types_and_backends) {
    char *raw = slurp("include/wgtensor.h"), *docs = slurp("docs/ops.md");
    char *header = raw ? strip_comments(raw) : NULL;
    CHECK(header && docs, "cannot read include/wgtensor.h or docs/ops.md under %s", WGT_SOURCE_DIR);
    if (header && docs) CHECK(for_each_declared(header, check_row, docs) > 140, "the header scan found too little");
    free(raw), free(header), free(docs);
}

TEST(version_of_the_library_matches_the_header) {
    CHECK(!strcmp(wgt_version(), WGT_VERSION_STRING), "wgt_version() is %s, the header says %s", wgt_version(),
          WGT_VERSION_STRING);
    char expect[32];
    snprintf(expect, sizeof expect, "%d.%d.%d", WGT_VERSION_MAJOR, WGT_VERSION_MINOR, WGT_VERSION_PATCH);
    CHECK(!strcmp(expect, WGT_VERSION_STRING), "the version macros say %s and %s", expect, WGT_VERSION_STRING);
    CHECK(WGT_VERSION_NUMBER == WGT_VERSION_MAJOR * 10000 + WGT_VERSION_MINOR * 100 + WGT_VERSION_PATCH,
          "WGT_VERSION_NUMBER is %d", WGT_VERSION_NUMBER);
}
