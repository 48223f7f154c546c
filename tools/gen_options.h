/* Command-line options of `wgtensor generate` and `wgtensor bench-quant` (gen_options.c). */
#ifndef WGT_TOOLS_GEN_OPTIONS_H
#define WGT_TOOLS_GEN_OPTIONS_H

#include "llama.h"

typedef struct {
    llama_config config;
    const char *model, *save, *prompt, *json, *eval;
    wgt_dtype weights, quantize;
    uint64_t seed, sample_seed;
    int64_t tokens, top_k, matvec, prefill;
    double temperature;
    wgt_backend_kind backend;
    int quick;
    int profile;     /* bench-quant --profile */
    int matvec_only; /* bench-quant --matvec-only: no decode or prefill rows */
    unsigned decode;  /* bench-quant --decode: bits of the decode rows to run, in bench-quant's order (all without it) */
} gen_options;

/* 0, or 2 after printing the usage (generate: 1 for `generate`, 0 for `bench-quant`). */
int gen_parse(int argc, char **argv, gen_options *o, int generate);

#endif
