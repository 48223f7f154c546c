#!/bin/sh
# Checks that wgtensor installs and links as a C library should, by running README.md's own
# install commands (the ```sh block under "## Installing") with HOME in a temporary folder:
# `make install` into it, examples/hello.c built through pkg-config against the shared and
# the static library, each run and required to compute on WebGPU (the Dawn installed beside
# the library, found by the loader's search order, not the build tree's). Then the shared
# library must export exactly the functions include/wgtensor.h declares, and carry its SONAME.
# Usage: scripts/check_install.sh [BUILD]   (the build folder of the library to check)
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
fail() { echo "check_install: $*" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp" hello-shared hello-static' EXIT
awk '/^## Installing/ { on = 1; next } on && /^```sh/ { grab = 1; next } grab && /^```/ { exit } grab' README.md \
  > "$tmp/commands.sh"
[ -s "$tmp/commands.sh" ] || fail "README.md has no \`\`\`sh block under '## Installing'"

echo "check_install: README's install commands, with HOME=$tmp:"
sed 's/^/  /' "$tmp/commands.sh"
HOME="$tmp" MAKEFLAGS= sh -eu "$tmp/commands.sh" > "$tmp/out.txt" 2>&1 || { cat "$tmp/out.txt"; fail "a command failed"; }
[ "$(grep -c ': 10 11 12 / 13 14 15$' "$tmp/out.txt")" -ge 2 ] || { cat "$tmp/out.txt"; fail "both programs must print the sums"; }
if [ "${WGT_TEST_ALLOW_NO_WEBGPU:-0}" != 1 ] && grep -q "using the CPU backend" "$tmp/out.txt"; then
  cat "$tmp/out.txt"; fail "an installed program fell back to the CPU: the installed Dawn was not found"
fi
grep ': 10 11 12' "$tmp/out.txt" | sed 's/^/check_install: ran on /'

# The shared library's interface: the header's functions, nothing more, nothing less.
so=$(ls "$build"/libwgtensor.so.*.*.* | head -n 1)
soname=$(objdump -p "$so" | awk '/SONAME/ { print $2 }')
major=$(sed -n 's/^#define WGT_VERSION_MAJOR \([0-9]*\)/\1/p' include/wgtensor.h)
[ "$soname" = "libwgtensor.so.$major" ] || fail "$so has SONAME '$soname', not libwgtensor.so.$major"
${CC:-cc} -E -P include/wgtensor.h | grep -o 'wgt_[a-z0-9_]*[ ]*(' | tr -d ' (' | sort -u > "$tmp/declared"
nm -D --defined-only "$so" | awk '$2 ~ /^[TDBRVW]$/ { print $3 }' | sort -u > "$tmp/exported"
extra=$(comm -13 "$tmp/declared" "$tmp/exported" | tr '\n' ' ')
missing=$(comm -23 "$tmp/declared" "$tmp/exported" | tr '\n' ' ')
[ -z "$extra" ] || fail "$so exports names the header does not declare: $extra"
[ -z "$missing" ] || fail "$so lacks functions the header declares: $missing"
echo "check_install: $so ($soname) exports the header's $(wc -l < "$tmp/declared") functions and nothing else"
