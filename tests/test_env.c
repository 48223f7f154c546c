/*
 * The WGT_* environment variables: a value the library does not understand fails context
 * creation with WGT_ERR_INVALID_ARGUMENT and a message naming the variable and its value;
 * it never becomes a default or a wrapped number. Each case sets one variable, tries a
 * context, and puts the environment back as it was.
 */
#include <stdlib.h>
#include <string.h>

#include "test.h"

/* A context of `backend` made while var=value: NULL with the error when creation failed. */
static wgt_context *context_with(const char *var, const char *value, wgt_backend_kind backend) {
    test_saved_env s = test_env_set(var, value);
    wgt_context_options opt = {0};
    opt.backend = backend;
    opt.quiet = 1;
    wgt_clear_error();
    wgt_context *c = wgt_context_create(&opt);
    test_env_restore(&s);
    return c;
}

static void expect_refused(const char *var, const char *value, const char *words) {
    wgt_context *c = context_with(var, value, WGT_BACKEND_CPU);
    char want[160];
    snprintf(want, sizeof want, "wgt_context_create: %s=%s is not %s", var, value, words);
    CHECK(!c, "%s=%s was accepted", var, value);
    CHECK(wgt_last_status() == WGT_ERR_INVALID_ARGUMENT, "%s=%s: status %s", var, value,
          wgt_status_name(wgt_last_status()));
    CHECK(test_contains(wgt_last_error(), want), "%s=%s: message '%s' lacks '%s'", var, value, wgt_last_error(), want);
    CHECK(!strchr(wgt_last_error(), '\n'), "one line: %s", wgt_last_error());
    wgt_context_release(c);
    wgt_clear_error();
}

static void expect_accepted(const char *var, const char *value) {
    wgt_context *c = context_with(var, value, WGT_BACKEND_CPU);
    CHECK(c, "%s=%s was refused: %s", var, value, wgt_last_error());
    wgt_context_release(c);
}

TEST(env_numbers_are_checked) {
    static const char *const bad_timeouts[] = {"abc", "0", "-1", "4294967296", "18446744073709551617",
                                               "99999999999999999999999", " 5", "5 ", "+5", "5ms", "0x10", "1e3"};
    for (size_t i = 0; i < sizeof bad_timeouts / sizeof *bad_timeouts; i++)
        expect_refused("WGT_TIMEOUT_MS", bad_timeouts[i], "a whole number from 1 to 4294967295");
    expect_accepted("WGT_TIMEOUT_MS", "4294967295");
    expect_accepted("WGT_TIMEOUT_MS", "1");
    expect_accepted("WGT_TIMEOUT_MS", "");

    static const char *const bad_threads[] = {"0", "257", "x", "-4", "2.5", "4294967297"};
    for (size_t i = 0; i < sizeof bad_threads / sizeof *bad_threads; i++)
        expect_refused("WGT_CPU_THREADS", bad_threads[i], "a whole number from 1 to 256");
    expect_accepted("WGT_CPU_THREADS", "256");

    static const char *const bad_units[] = {"0", "65537", "many", "-1", "4294967296"};
    for (size_t i = 0; i < sizeof bad_units / sizeof *bad_units; i++)
        expect_refused("WGT_COMPUTE_UNITS", bad_units[i], "a whole number from 1 to 65536");
    expect_accepted("WGT_COMPUTE_UNITS", "132");
}

TEST(env_switches_and_names_are_checked) {
    static const char *const bad_switches[] = {"2", "yes", "true", "on", "01", "1 ", "-1"};
    for (size_t i = 0; i < sizeof bad_switches / sizeof *bad_switches; i++) {
        expect_refused("WGT_POISON", bad_switches[i], "0 or 1");
        expect_refused("WGT_FUSION", bad_switches[i], "0 or 1");
    }
    expect_accepted("WGT_POISON", "0");
    expect_accepted("WGT_FUSION", "0");
    expect_refused("WGT_BACKEND", "gpu", "auto, webgpu or cpu");
    expect_refused("WGT_ATTENTION", "fast", "auto, kernel or compose");
    expect_accepted("WGT_BACKEND", "CPU");
}

/* An accepted value still takes effect: WGT_FUSION=0 runs an elementwise chain op by op (the
 * WebGPU backend is the one that fuses). */
TEST(env_fusion_switch_applies) {
    wgt_context *probe = test_webgpu_context();
    if (!probe) return; /* test_webgpu_context has recorded the skip */
    wgt_context_release(probe);
    int64_t n[1] = {64};
    for (int on = 0; on < 2; on++) {
        wgt_context *c = context_with("WGT_FUSION", on ? "1" : "0", WGT_BACKEND_WEBGPU);
        CHECK(c, "%s", wgt_last_error());
        if (!c) return;
        wgt_tensor *a = wgt_ones(c, WGT_F32, 1, n);
        wgt_tensor *b = wgt_exp(a), *d = wgt_add(b, a), *e = wgt_mul(d, a);
        float out[64];
        CHECK(e && wgt_tensor_read(e, out, sizeof out) == WGT_OK, "%s", wgt_last_error());
        wgt_stats st;
        CHECK(wgt_context_stats(c, &st) == WGT_OK, "%s", wgt_last_error());
        CHECK((st.ops_fused > 0) == on, "WGT_FUSION=%d: %llu ops fused", on, (unsigned long long)st.ops_fused);
        wgt_release(a);
        wgt_release(b);
        wgt_release(d);
        wgt_release(e);
        wgt_context_release(c);
    }
}

/* The WebGPU-only variables name themselves too (a wrong adapter is unavailable, not a typo
 * of ours to refuse: the value is a name to look for). */
TEST(env_webgpu_variables_name_themselves) {
    wgt_context *probe = test_webgpu_context();
    if (!probe) return; /* test_webgpu_context has recorded the skip */
    wgt_context_release(probe);
    wgt_context *c = context_with("WGT_ADAPTER", "no-such-adapter-xyz", WGT_BACKEND_WEBGPU);
    CHECK(!c && wgt_last_status() == WGT_ERR_UNAVAILABLE, "%s", wgt_last_error());
    CHECK(test_contains(wgt_last_error(), "wgt_context_create: no adapter matches WGT_ADAPTER='no-such-adapter-xyz'"),
          "%s", wgt_last_error());
    wgt_context_release(c);
    /* Toggles Dawn knows, one on and one off, make a working device. */
    c = context_with("WGT_DAWN_TOGGLES", "skip_validation,-lazy_clear_resource_on_first_use", WGT_BACKEND_WEBGPU);
    wgt_tensor *t = c ? wgt_arange(c, WGT_F32, 0, 5, 1) : NULL, *u = t ? wgt_mul_scalar(t, 3) : NULL;
    float v[5] = {0};
    CHECK(u && wgt_tensor_read(u, v, sizeof v) == WGT_OK && v[4] == 12, "%s", wgt_last_error());
    wgt_release(t), wgt_release(u);
    wgt_context_release(c);
    c = context_with("WGT_WEBGPU_LIBRARY", "/nonexistent/libwebgpu.so", WGT_BACKEND_WEBGPU);
    CHECK(!c && wgt_last_status() == WGT_ERR_UNAVAILABLE, "%s", wgt_last_error());
    CHECK(test_contains(wgt_last_error(), "/nonexistent/libwebgpu.so"), "%s", wgt_last_error());
    wgt_context_release(c);
    wgt_clear_error();
}

/* A WebGPU setting the library cannot read fails an automatic context too: falling back to
 * the CPU would hide the typo behind a slower backend. */
TEST(env_webgpu_setting_typos_fail_auto_contexts) {
    wgt_context *probe = test_webgpu_context();
    if (!probe) return; /* test_webgpu_context has recorded the skip */
    wgt_context_release(probe);
    static const char *const cases[][3] = {{"WGT_SGMATRIX", "2", "WGT_SGMATRIX=2 is not 0 or 1"},
                                           {"WGT_SGMATRIX_EMULATE", "yes", "WGT_SGMATRIX_EMULATE=yes is not 0 or 1"},
                                           {"WGT_SGMATRIX_TILE", "64,64", "WGT_SGMATRIX_TILE=64,64 is not BM,BN,BK,WM,WN"},
                                           {"WGT_SGMATRIX_ATTENTION", "on", "WGT_SGMATRIX_ATTENTION=on is not 0 or 1"},
                                           {"WGT_ATTENTION_CHUNKS", "0",
                                            "WGT_ATTENTION_CHUNKS=0 is not a whole number from 1 to 65536"},
                                           {"WGT_DAWN_TOGGLES", "skip_validation,Bad Name",
                                            "WGT_DAWN_TOGGLES=skip_validation,Bad Name: \"Bad Name\" is not a toggle name"},
                                           {"WGT_DAWN_TOGGLES", "skip_validation,,x",
                                            "WGT_DAWN_TOGGLES=skip_validation,,x: \"\" is not a toggle name"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        wgt_context *c = context_with(cases[i][0], cases[i][1], WGT_BACKEND_AUTO);
        CHECK(!c && wgt_last_status() == WGT_ERR_INVALID_ARGUMENT, "%s=%s: context %s, status %s (%s)", cases[i][0],
              cases[i][1], c ? "made" : "refused", wgt_status_name(wgt_last_status()), wgt_last_error());
        CHECK(test_contains(wgt_last_error(), cases[i][2]), "message '%s' lacks '%s'", wgt_last_error(), cases[i][2]);
        wgt_context_release(c);
        wgt_clear_error();
    }
}
