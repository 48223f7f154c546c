/*
 * The library's version, for programs linked against a shared library newer than the header
 * they were compiled with (the header's WGT_VERSION_* macros say what they were built for).
 */
#include "wgtensor.h"

const char *wgt_version(void) { return WGT_VERSION_STRING; }
