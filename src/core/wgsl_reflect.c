/*
 * A small reader of WGSL module-scope declarations: enough to name and size a user kernel's
 * bindings, not a compiler (Dawn compiles the source and reports its errors). The source is
 * cut into tokens with comments (line and nested block comments) skipped; at brace depth 0 it
 * reads attributes, `struct` declarations (laid out by WGSL's size and alignment rules, so
 * arrays of structs can be sized), `var` declarations with their address space, and the
 * entry point's `fn` with its @workgroup_size. Everything inside function bodies is skipped.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "wgsl_reflect.h"

#define MAX_STRUCTS 64

typedef struct {
    const char *s; /* into the source */
    int len;
    int line;
} token;

typedef struct {
    uint32_t size, align, component; /* size 0: not known */
} layout;

typedef struct {
    char name[WGT_REFLECT_NAME_MAX];
    layout l;
} struct_def;

typedef struct {
    const char *fn;
    token *t;
    int n, i;
    struct_def structs[MAX_STRUCTS];
    int nstructs;
} reader;

/* Cuts source into tokens: identifiers and numbers whole, every other character alone. */
static int tokenize(const char *src, token **out) {
    size_t cap = 256, n = 0;
    token *t = malloc(cap * sizeof *t);
    if (!t) return -1;
    int line = 1;
    for (const char *p = src; *p;) {
        if (*p == '\n') {
            line++, p++;
            continue;
        }
        if (isspace((unsigned char)*p)) {
            p++;
            continue;
        }
        if (p[0] == '/' && p[1] == '/') {
            while (*p && *p != '\n') p++;
            continue;
        }
        if (p[0] == '/' && p[1] == '*') { /* block comments nest in WGSL */
            int depth = 0;
            do {
                if (p[0] == '/' && p[1] == '*') depth++, p += 2;
                else if (p[0] == '*' && p[1] == '/') depth--, p += 2;
                else line += *p == '\n', p++;
            } while (*p && depth > 0);
            continue;
        }
        if (n == cap) {
            token *g = realloc(t, (cap *= 2) * sizeof *t);
            if (!g) {
                free(t);
                return -1;
            }
            t = g;
        }
        const char *start = p;
        if (isalnum((unsigned char)*p) || *p == '_')
            while (isalnum((unsigned char)*p) || *p == '_' || (*p == '.' && isdigit((unsigned char)start[0]))) p++;
        else
            p++;
        t[n++] = (token){start, (int)(p - start), line};
    }
    *out = t;
    return (int)n;
}

static int is(const reader *r, int i, const char *word) {
    return i < r->n && r->t[i].len == (int)strlen(word) && !strncmp(r->t[i].s, word, (size_t)r->t[i].len);
}

static int is_ident(const reader *r, int i) {
    return i < r->n && (isalpha((unsigned char)r->t[i].s[0]) || r->t[i].s[0] == '_');
}

static void copy_token(char *dst, const token *t) {
    int len = t->len < WGT_REFLECT_NAME_MAX - 1 ? t->len : WGT_REFLECT_NAME_MAX - 1;
    memcpy(dst, t->s, (size_t)len);
    dst[len] = '\0';
}

/* An integer literal (decimal or hex, optional i/u suffix), or -1. */
static long long literal(const reader *r, int i) {
    if (i >= r->n || !isdigit((unsigned char)r->t[i].s[0])) return -1;
    char buf[32];
    int len = r->t[i].len < 31 ? r->t[i].len : 31;
    memcpy(buf, r->t[i].s, (size_t)len);
    buf[len] = '\0';
    if (len && (buf[len - 1] == 'u' || buf[len - 1] == 'i')) buf[--len] = '\0';
    char *end;
    long long v = strtoll(buf, &end, 0);
    return *end || v < 0 ? -1 : v;
}

static wgt_status syntax(const reader *r, int i, const char *what) {
    int line = i < r->n ? r->t[i].line : r->n ? r->t[r->n - 1].line : 1;
    return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: line %d: %s", r->fn, line, what);
}

static uint32_t round_up(uint32_t v, uint32_t to) { return to ? (v + to - 1) / to * to : v; }

static int parse_type(reader *r, layout *out, int *runtime_array, layout *element);

/* `<T>` after a generic type's name; the inner layout in *inner. */
static int parse_inner(reader *r, layout *inner) {
    if (!is(r, r->i, "<")) return 0;
    r->i++;
    int rt = 0;
    layout el;
    if (!parse_type(r, inner, &rt, &el)) return 0;
    return 1;
}

static layout vector_of(layout c, int n) {
    layout v = {0, 0, c.component};
    if (!c.size) return v;
    v.size = c.size * (uint32_t)n;
    v.align = c.size * (uint32_t)(n == 3 ? 4 : n);
    return v;
}

static layout scalar(char c) {
    layout l = {4, 4, 4};
    if (c == 'h') l.size = l.align = l.component = 2;
    return l;
}

/* Parses a type at r->i (moving past it) into its layout. For array<T> (no count) sets
 * *runtime_array and the element's layout; array<T, N> sets the element too. */
static int parse_type(reader *r, layout *out, int *runtime_array, layout *element) {
    memset(out, 0, sizeof *out);
    *runtime_array = 0;
    memset(element, 0, sizeof *element);
    if (!is_ident(r, r->i)) return 0;
    const token *t = &r->t[r->i++];
    char name[WGT_REFLECT_NAME_MAX];
    copy_token(name, t);
    if (!strcmp(name, "f32") || !strcmp(name, "i32") || !strcmp(name, "u32")) *out = scalar('f');
    else if (!strcmp(name, "f16")) *out = scalar('h');
    else if (!strcmp(name, "bool")) *out = (layout){0, 0, 0}; /* not host-shareable */
    else if (!strncmp(name, "vec", 3) && name[3] >= '2' && name[3] <= '4') {
        int n = name[3] - '0';
        layout c;
        if (name[4] == '\0') {
            if (!parse_inner(r, &c)) return 0;
        } else {
            c = scalar(name[4]);
        }
        *out = vector_of(c, n);
    } else if (!strncmp(name, "mat", 3) && name[3] >= '2' && name[3] <= '4' && name[4] == 'x' && name[5] >= '2' &&
               name[5] <= '4') {
        int cols = name[3] - '0', rows = name[5] - '0';
        layout c;
        if (name[6] == '\0') {
            if (!parse_inner(r, &c)) return 0;
        } else {
            c = scalar(name[6]);
        }
        layout col = vector_of(c, rows);
        *out = (layout){round_up(col.size, col.align) * (uint32_t)cols, col.align, col.component};
    } else if (!strcmp(name, "atomic")) {
        if (!parse_inner(r, out)) return 0;
    } else if (!strcmp(name, "array")) {
        if (!is(r, r->i, "<")) return 0;
        r->i++;
        int rt;
        layout inner_el;
        if (!parse_type(r, element, &rt, &inner_el)) return 0;
        uint32_t stride = round_up(element->size, element->align);
        element->size = stride;
        if (is(r, r->i, ",")) {
            long long count = literal(r, r->i + 1);
            r->i += 2;
            *out = (layout){count > 0 && stride ? stride * (uint32_t)count : 0, element->align, element->component};
        } else {
            *runtime_array = 1;
            *out = (layout){0, element->align, element->component};
        }
    } else {
        for (int k = 0; k < r->nstructs; k++)
            if (!strcmp(r->structs[k].name, name)) *out = r->structs[k].l;
    }
    if (is(r, r->i, ">")) r->i++; /* closes the generic this type sits in, if any */
    return 1;
}

/* Skips attributes of a struct member or a declaration; values of @group, @binding and
 * @workgroup_size land in g, b and wg (-1 / 0 where absent), @compute in *compute. */
static void attributes(reader *r, long long *g, long long *b, uint32_t *wg, int *compute) {
    while (is(r, r->i, "@")) {
        r->i++;
        const int at = r->i++;
        if (compute && is(r, at, "compute")) *compute = 1;
        if (wg && is(r, at, "workgroup_size")) wg[0] = 0, wg[1] = wg[2] = 1; /* omitted dimensions are 1 */
        if (!is(r, r->i, "(")) continue;
        r->i++;
        /* Each argument's value counts only when it is one literal token (not an expression
         * or an override's name: then it stays unknown, -1 or 0). */
        for (int arg = 0, depth = 1, first = r->i; r->i < r->n && depth > 0; r->i++) {
            int closes = is(r, r->i, ")") && depth == 1, next = is(r, r->i, ",") && depth == 1;
            if ((closes || next) && r->i > first) { /* an empty one: a trailing comma */
                long long v = r->i == first + 1 ? literal(r, first) : -1;
                if (g && is(r, at, "group") && arg == 0) *g = v;
                if (b && is(r, at, "binding") && arg == 0) *b = v;
                if (wg && is(r, at, "workgroup_size") && arg < 3) wg[arg] = v > 0 ? (uint32_t)v : 0;
                arg++;
                first = r->i + 1;
            }
            if (is(r, r->i, "(")) depth++;
            else if (is(r, r->i, ")")) depth--;
        }
    }
}

static wgt_status parse_struct(reader *r) {
    int at = r->i;
    if (!is_ident(r, r->i + 1) || !is(r, r->i + 2, "{")) return syntax(r, at, "a struct declaration without a name and '{'");
    if (r->nstructs == MAX_STRUCTS) return syntax(r, at, "more than 64 structs");
    struct_def *sd = &r->structs[r->nstructs];
    copy_token(sd->name, &r->t[r->i + 1]);
    r->i += 3;
    uint32_t offset = 0, align = 1, component = 0;
    int known = 1, first = 1;
    while (r->i < r->n && !is(r, r->i, "}")) {
        attributes(r, NULL, NULL, NULL, NULL);
        if (!is_ident(r, r->i) || !is(r, r->i + 1, ":")) return syntax(r, r->i, "a struct member without a name and ':'");
        r->i += 2;
        layout m, el;
        int rt;
        if (!parse_type(r, &m, &rt, &el)) return syntax(r, r->i, "a struct member's type");
        if (!m.size && !rt) known = 0;
        if (m.align > align) align = m.align;
        offset = round_up(offset, m.align) + m.size;
        component = first ? m.component : component == m.component ? component : 0;
        first = 0;
        if (rt) known = 0; /* a runtime-sized array: the struct has no fixed size */
        if (is(r, r->i, ",")) r->i++;
    }
    if (r->i >= r->n) return syntax(r, at, "a struct without its closing '}'");
    r->i++;
    sd->l = known ? (layout){round_up(offset, align), align, component} : (layout){0, align, component};
    r->nstructs++;
    return WGT_OK;
}

/* The type written from token `from` on, tokens joined, up to a ',', ';' or unmatched '>'. */
static void type_text(const reader *r, int from, char *dst) {
    size_t used = 0;
    dst[0] = '\0';
    for (int i = from, depth = 0; i < r->n; i++) {
        if ((depth == 0 && (is(r, i, ",") || is(r, i, ";") || is(r, i, ">"))) || is(r, i, "=")) break;
        depth += is(r, i, "<") - is(r, i, ">");
        if (used + (size_t)r->t[i].len + 1 > WGT_REFLECT_NAME_MAX) break;
        memcpy(dst + used, r->t[i].s, (size_t)r->t[i].len);
        used += (size_t)r->t[i].len;
        dst[used] = '\0';
    }
}

static wgt_status parse_var(reader *r, long long g, long long b, wgt_reflection *out) {
    int at = r->i++;
    int uniform = 0, storage = 0, read_write = 0;
    if (is(r, r->i, "<")) {
        uniform = is(r, r->i + 1, "uniform");
        storage = is(r, r->i + 1, "storage");
        read_write = storage && is(r, r->i + 2, ",") && is(r, r->i + 3, "read_write");
        while (r->i < r->n && !is(r, r->i, ">")) r->i++;
        r->i++;
    }
    if (!uniform && !storage) { /* private or workgroup variables, handles: not ours to bind */
        if (g >= 0 && g != 0) return syntax(r, at, "only @group(0) is supported for bindings");
        while (r->i < r->n && !is(r, r->i, ";")) r->i++;
        return WGT_OK;
    }
    if (g != 0 || b < 0) return syntax(r, at, "a buffer needs @group(0) and a literal @binding(N) (only group 0 is supported)");
    if (out->count == WGT_REFLECT_MAX_BINDINGS) return syntax(r, at, "more than 32 bindings");
    wgt_reflect_binding *e = &out->bindings[out->count];
    memset(e, 0, sizeof *e);
    e->binding = (uint32_t)b;
    e->uniform = uniform;
    e->read_write = read_write;
    if (!is_ident(r, r->i) || !is(r, r->i + 1, ":")) return syntax(r, at, "a buffer declaration without a name and ':'");
    copy_token(e->name, &r->t[r->i]);
    r->i += 2;
    int type_at = r->i;
    layout l, el;
    int rt;
    if (!parse_type(r, &l, &rt, &el)) return syntax(r, type_at, "a buffer's type");
    if (uniform) {
        if (rt) return syntax(r, at, "a uniform cannot hold a runtime-sized array");
        type_text(r, type_at, e->type);
        e->element_size = l.size;
        e->component_size = l.component;
    } else if (is(r, type_at, "array")) {
        type_text(r, type_at + 2, e->type);
        e->element_size = el.size;
        e->component_size = el.component;
    } else { /* a struct or a single value: the binding must hold whole ones */
        type_text(r, type_at, e->type);
        e->element_size = l.size;
        e->component_size = l.component;
    }
    for (int k = 0; k < out->count; k++) {
        if (out->bindings[k].binding == e->binding) return syntax(r, at, "two buffers at one @binding");
        if (uniform && out->bindings[k].uniform) return syntax(r, at, "more than one var<uniform> (params are one block)");
    }
    out->count++;
    while (r->i < r->n && !is(r, r->i, ";")) r->i++;
    return WGT_OK;
}

wgt_status wgt_wgsl_reflect(const char *fn, const char *source, const char *entry, wgt_reflection *out) {
    memset(out, 0, sizeof *out);
    reader *r = calloc(1, sizeof *r);
    if (!r) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
    r->fn = fn;
    r->n = tokenize(source, &r->t);
    if (r->n < 0) {
        free(r);
        return wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
    }
    wgt_status st = WGT_OK;
    int depth = 0;
    while (st == WGT_OK && r->i < r->n) {
        if (depth > 0) {
            depth += is(r, r->i, "{") - is(r, r->i, "}");
            r->i++;
            continue;
        }
        long long g = -1, b = -1;
        uint32_t wg[3] = {0, 0, 0};
        int compute = 0, had = is(r, r->i, "@");
        attributes(r, &g, &b, wg, &compute);
        if (is(r, r->i, "struct")) st = parse_struct(r);
        else if (is(r, r->i, "var")) st = parse_var(r, g, b, out);
        else if (is(r, r->i, "fn")) {
            if (is(r, r->i + 1, entry) && compute) {
                out->entry_found = 1;
                memcpy(out->workgroup_size, wg, sizeof wg);
            }
            while (r->i < r->n && !is(r, r->i, "{")) r->i++;
        } else if (is(r, r->i, "{")) {
            depth++;
            r->i++;
        } else if (!had) {
            r->i++;
        }
    }
    free(r->t);
    free(r);
    return st;
}
