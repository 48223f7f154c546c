#!/usr/bin/env bash
# Installs what building and running wgtensor needs, idempotently: a C toolchain, the
# Vulkan loader, Mesa's lavapipe driver from bookworm-backports (Debian 12's own Mesa is
# too old for Dawn), and Dawn itself from the npm package bun-webgpu-linux-x64, pinned,
# unpacked into .deps/ inside the project. Each step says what failed and why.
set -u
cd "$(dirname "$0")/.."

DAWN_PACKAGE=bun-webgpu-linux-x64
DAWN_VERSION=0.1.7
DAWN_DIR=.deps/dawn
STAMP=.deps/setup.stamp

SETUP_NAME=setup
. scripts/setup_common.sh

# Everything present already: say nothing and return quickly, so `make test` stays fast.
have_all() {
  [ -f "$STAMP" ] && [ -f "$DAWN_DIR/libwebgpu_wrapper.so" ] || return 1
  for p in $PACKAGES mesa-vulkan-drivers; do dpkg -s "$p" >/dev/null 2>&1 || return 1; done
  dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null | grep -q '~bpo12' || return 1
}
PACKAGES="gcc make libc6-dev pkg-config libvulkan1 libopenblas-dev python3-sklearn python3-numpy valgrind clang libclang-rt-14-dev python3-dev python3-pytest python3-setuptools python3-venv fortunes"
if have_all; then exit 0; fi

export DEBIAN_FRONTEND=noninteractive
BACKPORTS=/etc/apt/sources.list.d/wgtensor-bookworm-backports.sources
if ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
  step "adding the bookworm-backports suite"
  printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    | $SUDO tee "$BACKPORTS" >/dev/null || fail "backports" "cannot write $BACKPORTS"
fi

step "apt-get update"
$SUDO apt-get update -qq >/tmp/wgtensor-apt.log 2>&1 || fail "apt-get update" "see /tmp/wgtensor-apt.log: $(tail -n 3 /tmp/wgtensor-apt.log)"

step "installing $PACKAGES"
$SUDO apt-get install -y -qq --no-install-recommends $PACKAGES >>/tmp/wgtensor-apt.log 2>&1 \
  || fail "apt-get install" "see /tmp/wgtensor-apt.log: $(tail -n 3 /tmp/wgtensor-apt.log)"

step "installing mesa-vulkan-drivers from bookworm-backports (lavapipe new enough for Dawn)"
$SUDO apt-get install -y -qq --no-install-recommends -t bookworm-backports mesa-vulkan-drivers >>/tmp/wgtensor-apt.log 2>&1 \
  || fail "mesa from backports" "see /tmp/wgtensor-apt.log: $(tail -n 3 /tmp/wgtensor-apt.log)"

if [ ! -f "$DAWN_DIR/libwebgpu_wrapper.so" ]; then
  command -v npm >/dev/null 2>&1 || { step "installing npm"; $SUDO apt-get install -y -qq npm >>/tmp/wgtensor-apt.log 2>&1 || fail "npm" "cannot install npm"; }
  step "fetching Dawn: npm $DAWN_PACKAGE@$DAWN_VERSION"
  tmp=$(mktemp -d) || fail "dawn" "mktemp"
  (cd "$tmp" && npm pack --silent "$DAWN_PACKAGE@$DAWN_VERSION" >npm.log 2>&1) \
    || fail "dawn download" "npm pack $DAWN_PACKAGE@$DAWN_VERSION: $(tail -n 3 "$tmp/npm.log")"
  tar -xzf "$tmp"/*.tgz -C "$tmp" || fail "dawn unpack" "tarball did not unpack"
  so=$(find "$tmp/package" -name 'libwebgpu_wrapper.so' | head -n 1)
  [ -n "$so" ] || fail "dawn unpack" "libwebgpu_wrapper.so not in the package"
  mkdir -p "$DAWN_DIR" && cp "$so" "$DAWN_DIR/" && cp "$tmp/package/package.json" "$DAWN_DIR/" \
    || fail "dawn install" "cannot copy into $DAWN_DIR"
  rm -rf "$tmp"
fi

mkdir -p .deps && echo "$PACKAGES" >"$STAMP"
step "done"
