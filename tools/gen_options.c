/* Parsing the options of `wgtensor generate` and `wgtensor bench-quant`. */
#include "gen_options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_generate[] =
    "usage: wgtensor generate [--model FILE.gguf | sizes] [options]\n"
    "  --model FILE        a llama GGUF file (general.architecture llama); without it the weights are random:\n"
    "  --dim N --layers N --heads N --kv-heads N --hidden N --vocab N --context N   (default 256 4 8 4 704 256 512)\n"
    "  --seed S            the random weights' seed (1); --weights f32|f16 their type (f32)\n"
    "  --quantize q8_0|q4_0  quantize every matrix first\n"
    "  --save FILE         write the model (after quantizing) as a GGUF file\n"
    "  --eval FILE         the validation loss (next-byte cross-entropy) on the file's first context bytes,\n"
    "                      of the model before and after --quantize\n"
    "  --prompt TEXT       bytes fed as tokens (\"\" : one token 0); --tokens N to generate (64)\n"
    "  --temperature T     0 is greedy (0.8); --top-k K (40); --sample-seed S (1)\n"
    "  --cpu | --webgpu    the backend (default: the best device)\n";

static const char usage_bench[] =
    "usage: wgtensor bench-quant [options]: matrix-vector GB/s of f16, q8_0 and q4_0 weights, decode tokens/s of a\n"
    "random Llama model in f16, q8_0 and q4_0 against the floor (weight bytes over copy bandwidth), prefill tokens/s\n"
    "  --matvec N          the square weight's side (8192)\n"
    "  --dim N --layers N --heads N --kv-heads N --hidden N --vocab N --context N   (2048 24 16 16 5632 32000 1024)\n"
    "  --tokens N          decode steps timed (32); --prefill N prompt tokens timed (512)\n"
    "  --quick             small sizes for a software GPU (matvec 1024, a 4-layer width-256 model)\n"
    "  --json FILE         the results as JSON too\n"
    "  --profile           after each replayed decode row, the GPU time of a step: in compute passes, and by kernel\n"
    "  --matvec-only       the copy and matrix-vector rows alone\n"
    "  --decode LIST       the decode rows to run, of f16,q8_0,q4_0,q8_0-int8,q4_0-int8 (all; prefill runs with q4_0)\n"
    "  --cpu | --webgpu    the backend (default: the best device)\n";

/* bench-quant's decode rows in the order it runs them: f16, q8_0, q4_0, then q8_0 and q4_0
 * with int8 dots. */
static const char *const decode_names[] = {"f16", "q8_0", "q4_0", "q8_0-int8", "q4_0-int8"};

/* The bits of decode_names named in the comma-separated list, or 0 for a name not there. */
static unsigned decode_rows(const char *list) {
    unsigned bits = 0;
    for (const char *at = list; *at;) {
        size_t n = strcspn(at, ",");
        unsigned found = 0;
        for (unsigned k = 0; k < sizeof decode_names / sizeof decode_names[0]; k++)
            if (strlen(decode_names[k]) == n && !strncmp(at, decode_names[k], n)) found = 1u << k;
        if (!found) return 0;
        bits |= found;
        at += n + (at[n] == ',');
    }
    return bits;
}

static int number(const char *s, int64_t *out) {
    char *end;
    long long v = strtoll(s, &end, 10);
    if (*s == 0 || *end != 0 || v < 0) return 0;
    *out = v;
    return 1;
}

int gen_parse(int argc, char **argv, gen_options *o, int generate) {
    memset(o, 0, sizeof *o);
    llama_config small = {256, 4, 8, 4, 704, 256, 512, 10000, 1e-5};
    llama_config big = {2048, 24, 16, 16, 5632, 32000, 1024, 10000, 1e-5};
    o->config = generate ? small : big;
    o->weights = WGT_F32;
    o->seed = o->sample_seed = 1;
    o->tokens = generate ? 64 : 32;
    o->top_k = 40;
    o->temperature = 0.8;
    o->prompt = "";
    o->matvec = 8192;
    o->prefill = 512;
    o->decode = 0x1f;
    const char *usage = generate ? usage_generate : usage_bench;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int64_t n = 0;
        struct { const char *name; int64_t *slot; } sizes[] = {
            {"--dim", &o->config.dim}, {"--layers", &o->config.layers}, {"--heads", &o->config.heads},
            {"--kv-heads", &o->config.kv_heads}, {"--hidden", &o->config.hidden}, {"--vocab", &o->config.vocab},
            {"--context", &o->config.context}, {"--tokens", &o->tokens}, {"--top-k", &o->top_k},
            {"--matvec", &o->matvec}, {"--prefill", &o->prefill},
        };
        int done = 0;
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0] && !done; k++)
            if (!strcmp(a, sizes[k].name)) {
                if (!v || !number(v, sizes[k].slot)) {
                    fprintf(stderr, "%s needs a whole number\n%s", a, usage);
                    return 2;
                }
                done = 1;
                i++;
            }
        if (done) continue;
        if (!strcmp(a, "--cpu")) o->backend = WGT_BACKEND_CPU;
        else if (!strcmp(a, "--webgpu")) o->backend = WGT_BACKEND_WEBGPU;
        else if (!generate && !strcmp(a, "--profile")) o->profile = 1;
        else if (!generate && !strcmp(a, "--matvec-only")) o->matvec_only = 1;
        else if (!generate && v && !strcmp(a, "--decode")) {
            if (!(o->decode = decode_rows(argv[++i]))) {
                fprintf(stderr, "--decode takes a comma-separated list of f16, q8_0, q4_0, q8_0-int8, q4_0-int8\n%s", usage);
                return 2;
            }
        }
        else if (!strcmp(a, "--quick")) {
            o->quick = 1;
            o->matvec = 1024;
            o->prefill = 64;
            llama_config q = {256, 4, 8, 4, 704, 512, 256, 10000, 1e-5};
            o->config = q;
        } else if (v && !strcmp(a, "--model")) o->model = argv[++i];
        else if (v && !strcmp(a, "--save")) o->save = argv[++i];
        else if (v && !strcmp(a, "--eval")) o->eval = argv[++i];
        else if (v && !strcmp(a, "--prompt")) o->prompt = argv[++i];
        else if (v && !strcmp(a, "--json")) o->json = argv[++i];
        else if (v && !strcmp(a, "--temperature")) o->temperature = atof(argv[++i]);
        else if (v && !strcmp(a, "--seed") && number(v, &n)) o->seed = (uint64_t)n, i++;
        else if (v && !strcmp(a, "--sample-seed") && number(v, &n)) o->sample_seed = (uint64_t)n, i++;
        else if (v && !strcmp(a, "--weights") && (!strcmp(v, "f32") || !strcmp(v, "f16")))
            o->weights = !strcmp(argv[++i], "f16") ? WGT_F16 : WGT_F32;
        else if (v && !strcmp(a, "--quantize") && (!strcmp(v, "q8_0") || !strcmp(v, "q4_0")))
            o->quantize = !strcmp(argv[++i], "q8_0") ? WGT_Q8_0 : WGT_Q4_0;
        else {
            fprintf(stderr, "unknown or incomplete option %s\n%s", a, usage);
            return 2;
        }
    }
    return 0;
}
