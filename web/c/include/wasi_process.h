/*
 * Declarations wasi-libc leaves out because WASI has no processes, for the test suite's
 * sources only (web/wasm.mk includes this first): popen and pclose exist in the wasm build
 * (web/c/no_threads.c) and fail with ENOSYS, as on a system that cannot start a program.
 */
#ifndef WGT_WASI_PROCESS_H
#define WGT_WASI_PROCESS_H
#include <stdio.h>
FILE *popen(const char *command, const char *mode);
int pclose(FILE *stream);
#endif
