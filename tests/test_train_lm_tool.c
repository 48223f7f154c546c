/*
 * `wgtensor train-lm` (the main job behind `make demo`) end to end, at a toy size: it trains a
 * one-layer model for a few seconds on a repetitive text, states the validation loss at the
 * start on both backends and the unigram baseline, reports a final loss well below it (the
 * tool's own verdict, "result: PASS"), writes loss.png (a PNG) and model.safetensors (the
 * parameters, which load back), and samples text. Each of these missing fails the test.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"

#if !defined(__wasi__)
static const char TEXT[] =
    "the quick brown fox jumps over the lazy dog. a quick brown dog jumps over the lazy fox. "
    "the lazy fox and the quick dog sleep. the brown dog and the lazy fox run over the hill. ";
#endif

TEST(train_lm_tool_end_to_end) {
#if defined(__wasi__)
    test_skip("runs a program (wasm32-wasi has no processes)");
#elif defined(WGT_SOURCE_DIR)
    const char *exe = WGT_SOURCE_DIR "/build/wgtensor";
    if (access(exe, X_OK) != 0) {
        test_skip("%s is not built (a build directory other than build/)", exe);
        return;
    }
    char dir[] = "/tmp/wgt-train-lm-XXXXXX", text[64 + sizeof dir], out[64 + sizeof dir], cmd[1024], line[1024];
    CHECK(mkdtemp(dir) != NULL, "cannot make a directory under /tmp");
    snprintf(text, sizeof text, "%s/text.txt", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    FILE *f = fopen(text, "w");
    CHECK(f != NULL, "cannot write %s", text);
    if (!f) return;
    for (int i = 0; i < 40; i++) fputs(TEXT, f);
    fclose(f);
    snprintf(cmd, sizeof cmd,
             "'%s' train-lm --seconds 3 --min-steps 150 --layers 1 --width 32 --heads 2 --context 32 --batch 8 "
             "--sample 60 --text '%s' --out '%s' 2>&1",
             exe, text, out);
    FILE *p = popen(cmd, "r");
    CHECK(p != NULL, "cannot run %s", exe);
    if (!p) return;
    int start = 0, baseline = 0, pass = 0, sample = -1, sampled = 0;
    while (fgets(line, sizeof line, p)) {
        start |= test_contains(line, "validation loss at the start:") && test_contains(line, "on the CPU backend");
        baseline |= test_contains(line, "final validation loss") && test_contains(line, "unigram baseline");
        pass |= test_contains(line, "result: PASS");
        if (sample == 0 && strlen(line) > 20) sampled = 1;
        if (sample >= 0) sample++;
        if (test_contains(line, "sample (temperature")) sample = 0;
    }
    int rc = pclose(p);
    CHECK(rc == 0 && pass, "exit %d; the tool's verdict was not PASS", rc);
    CHECK(start && baseline, "the start losses on both backends (%d) or the final loss beside the unigram baseline (%d) "
                             "were not printed", start, baseline);
    CHECK(sampled, "no sampled text after the sample heading");
    char path[128 + sizeof dir];
    unsigned char sig[8] = {0};
    snprintf(path, sizeof path, "%s/loss.png", out);
    f = fopen(path, "rb");
    CHECK(f && fread(sig, 1, 8, f) == 8 && !memcmp(sig, "\x89PNG\r\n\x1a\n", 8), "%s is not a PNG", path);
    if (f) fclose(f);
    snprintf(path, sizeof path, "%s/model.safetensors", out);
    char *names = wgt_safetensors_names(path);
    CHECK(names && strchr(names, '\n'), "%s lists no tensors: %s", path, wgt_last_error());
    if (names) {
        *strchr(names, '\n') = '\0';
        wgt_context *cpu = test_new_context(WGT_BACKEND_CPU);
        wgt_tensor *t = cpu ? wgt_load_safetensors(cpu, path, names, WGT_USAGE_DEFAULT) : NULL;
        CHECK(t && wgt_tensor_numel(t) > 0, "the first tensor of %s (%s) does not load: %s", path, names, wgt_last_error());
        wgt_release(t);
        wgt_context_release(cpu);
        free(names);
    }
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0, "cannot remove %s", dir);
#else
    test_skip("WGT_SOURCE_DIR is not defined");
#endif
}
