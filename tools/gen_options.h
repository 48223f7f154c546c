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
    unsigned decode;  /* bench-quant --decode: the decode rows to run, bits of gen_decode_rows (all without it) */
} gen_options;

/* bench-quant's decode rows in order: f16, q8_0, q4_0, then q8_0 and q4_0 with int8 dots. */
extern const char *const gen_decode_rows[5];

/* 0, or 2 after printing the usage (generate: 1 for `generate`, 0 for `bench-quant`). */
int gen_parse(int argc, char **argv, gen_options *o, int generate);

#endif
