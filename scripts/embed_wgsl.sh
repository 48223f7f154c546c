#!/bin/sh
# Turns each WGSL file given into an entry of a C table, so kernels ship inside the
# library: wgt_wgsl_sources[] = { {"name", "text"}, ... }.
set -e
echo "/* Generated from src/backend/webgpu/wgsl by scripts/embed_wgsl.sh; do not edit. */"
echo "#include <stddef.h>"
echo "const struct wgt_wgsl_entry { const char *name; const char *text; } wgt_wgsl_sources[] = {"
for f in "$@"; do
  name=$(basename "$f" .wgsl)
  printf '    {"%s",\n' "$name"
  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/     "/' -e 's/$/\\n"/' "$f"
  printf '    },\n'
done
echo "    {NULL, NULL}};"
