/*
 * WGSL sources: the .wgsl files under wgsl/ are embedded at build time; kernels are made
 * by filling {{NAME}} placeholders (types, loads, the op's expression) into them.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webgpu_internal.h"

struct wgt_wgsl_entry {
    const char *name;
    const char *text;
};
extern const struct wgt_wgsl_entry wgt_wgsl_sources[];

const char *wgt_wgsl_source(const char *name) {
    for (const struct wgt_wgsl_entry *e = wgt_wgsl_sources; e->name; e++)
        if (!strcmp(e->name, name)) return e->text;
    return NULL;
}

char *wgt_wgsl_expand(const char *text, const char *const *pairs) {
    size_t cap = strlen(text) * 2 + 1024, used = 0;
    char *out = malloc(cap);
    if (!out) return NULL;
    while (*text) {
        const char *open = strstr(text, "{{");
        size_t lit = open ? (size_t)(open - text) : strlen(text);
        const char *value = NULL;
        size_t skip = lit;
        if (open) {
            const char *close = strstr(open, "}}");
            if (!close) { free(out); return NULL; }
            size_t klen = (size_t)(close - open - 2);
            for (const char *const *p = pairs; *p; p += 2)
                if (strlen(p[0]) == klen && !strncmp(p[0], open + 2, klen)) value = p[1];
            if (!value) { free(out); return NULL; } /* an unfilled placeholder is a bug */
            skip = (size_t)(close + 2 - text);
        }
        size_t vlen = value ? strlen(value) : 0;
        if (used + lit + vlen + 1 > cap) {
            cap = (used + lit + vlen + 1) * 2;
            char *grown = realloc(out, cap);
            if (!grown) { free(out); return NULL; }
            out = grown;
        }
        memcpy(out + used, text, lit);
        used += lit;
        if (value) memcpy(out + used, value, vlen);
        used += vlen;
        text += skip;
    }
    out[used] = '\0';
    return out;
}

void wgt_wgsl_add(wgt_wgsl_text *t, const char *fmt, ...) {
    while (!t->failed) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = t->cap - t->len;
        int n = vsnprintf(t->s ? t->s + t->len : NULL, room, fmt, ap);
        va_end(ap);
        if (n < 0) break;
        if ((size_t)n < room) {
            t->len += (size_t)n;
            return;
        }
        size_t want = (t->len + (size_t)n + 1) * 2;
        char *grown = realloc(t->s, want);
        if (!grown) break;
        t->s = grown;
        t->cap = want;
    }
    t->failed = 1;
}

WGPUShaderModule wgt_wgpu_shader_module(wgt_webgpu *w, const char *wgsl, const char *label) {
    WGPUShaderSourceWGSL src = {0};
    src.chain.sType = WGPU_STYPE_SHADER_SOURCE_WGSL;
    src.code = wgpu_str(wgsl);
    WGPUShaderModuleDescriptor md = {0};
    md.nextInChain = &src.chain;
    md.label = wgpu_str(label);
    return w->p->wgpuDeviceCreateShaderModule(w->device, &md);
}
